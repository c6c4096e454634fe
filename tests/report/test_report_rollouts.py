"""The report of built-in policies' runs: a run at another corpus level (records marked, mistakes
by family), and `eval -r 3` (one entry per task holding its rollouts, task-level interval, pass@k)
in headless Chromium.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.report import stats
from tests.support.browser import chromium, clipped_labels, open_page
from tests.support.runs import eval_environment, traces

BIN = Path(sys.executable).parent


class TestReportOfOtherLevels(unittest.TestCase):
    """A run at another corpus level rebuilds its tasks at that level: records marked, mistakes by family."""

    def test_a_hard_run_shows_its_records(self):
        with tempfile.TemporaryDirectory() as folder:
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "--policy", "induction", "-n", "2", "--difficulty", "hard",
                 "-o", str(Path(folder) / "runs")],
                env=eval_environment(folder), cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900,
            )  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (report,) = Path(folder, "runs").glob("*/report.html")
            html = report.read_text(encoding="utf-8")
        refusals = ("cannot be rebuilt", "builds a different task", "kinds only", "No valid rules")
        self.assertEqual([phrase for phrase in refusals if phrase in html], [])
        self.assertEqual(html.count("<h4>Hidden records</h4>"), 2)
        self.assertIn("Missed secrets by family", html)


class TestReportOfRollouts(unittest.TestCase):
    """`eval -r 3` with a built-in policy (deterministic: its three rollouts of a task agree), then
    the report: one entry per task holding its rollouts, task-level interval, pass@k."""

    TASKS, ROLLOUTS = 4, 3

    @classmethod
    def setUpClass(cls):
        chromium()
        cls.home = Path(tempfile.mkdtemp(prefix="rp-rollouts-"))
        cls.printed = cls.eval("-r", str(cls.ROLLOUTS), "--temperature", "0.5", "--max-tokens", "4096",
                               "--", "--select.seed", "7", out="r3")  # fmt: skip
        (cls.run_dir,) = [path.parent for path in (cls.home / "r3").glob("*/traces.jsonl")]
        cls.eval(out="r1")
        (cls.single,) = [path.parent for path in (cls.home / "r1").glob("*/traces.jsonl")]
        cls.compared = cls.home / "compared.html"
        result = subprocess.run([str(BIN / "redaction-pressure"), "report", str(cls.run_dir), str(cls.single), "-o",
                                 str(cls.compared)], env=eval_environment(str(cls.home)), capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=600)  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        cls.report_printed = result.stdout
        cls.report = cls.run_dir / "report.html"
        cls.rewards: dict[str, list[float]] = {}
        for trace in traces(cls.run_dir):
            cls.rewards.setdefault(trace["task"]["data"]["id"], []).append(
                sum(r["score"] * r["weight"] for r in trace["rewards"].values())
            )

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.home, ignore_errors=True)

    @classmethod
    def eval(cls, *options: str, out: str) -> str:
        result = subprocess.run(
            [str(BIN / "redaction-pressure"), "eval", "--policy", "induction", "-n", str(cls.TASKS),
             "-o", str(cls.home / out), *options],
            env=eval_environment(str(cls.home)), cwd=cls.home, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=900,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout + result.stderr

    def test_eval_passes_rollouts_sampling_and_extra_arguments_to_vf_eval(self):
        """vf-eval's resolved config holds -r 3, the temperature, the token limit and the option after --; each task ran three times."""
        config = json.loads((self.run_dir / "configs" / "resolved" / "eval.json").read_text())
        self.assertEqual(config["num_rollouts"], self.ROLLOUTS)
        self.assertEqual((config["sampling"]["temperature"], config["sampling"]["max_tokens"]), (0.5, 4096))
        self.assertEqual(config["select"]["seed"], 7)
        self.assertEqual(sorted(map(len, self.rewards.values())), [self.ROLLOUTS] * self.TASKS)
        self.assertIn(
            f"{self.TASKS * self.ROLLOUTS} episode(s) scored ({self.TASKS} tasks), mean reward over tasks", self.printed
        )
        self.assertIn(f"episodes finished: {self.TASKS * self.ROLLOUTS} scored, 0 errored", self.printed)

    def test_one_entry_and_one_anchor_per_task_with_its_rollouts_inside(self):
        """Each task has one row, one section and one anchor; its three rollouts sit inside its section, each with its own anchor."""
        html = self.report.read_text(encoding="utf-8")
        page, problems = open_page(self, self.report)
        self.assertEqual(page.locator("#tasks-run1 tbody tr").count(), self.TASKS)
        self.assertEqual(page.locator("details.task").count(), self.TASKS)
        for task_id in self.rewards:
            with self.subTest(task=task_id):
                self.assertEqual(html.count(f'id="run1-{task_id}"'), 1)
                self.assertEqual(html.count(f'href="#run1-{task_id}"'), 1, "the table links the task once")
                section = page.locator(f"details.task[data-task='{task_id}']")
                self.assertEqual(section.count(), 1)
                rollouts = section.locator("details.rollout")
                self.assertEqual([rollouts.nth(i).get_attribute("id") for i in range(rollouts.count())],
                                 [f"run1-{task_id}-rollout{turn}" for turn in range(1, self.ROLLOUTS + 1)])  # fmt: skip
                shown = [float(text) for text in section.locator(".rollout-reward").all_text_contents()]
                self.assertEqual(
                    shown, [round(reward, 3) for reward in self.rewards[task_id]], "each rollout's reward is reachable"
                )
        where = page.locator(".run-where").inner_text()
        self.assertIn(f"{self.TASKS} tasks · {self.TASKS * self.ROLLOUTS} rollouts ({self.ROLLOUTS} per task)", where)
        self.assertEqual(problems, [])

    def test_headline_is_over_tasks_with_pass_at_k(self):
        """The mean is the mean of task means with an interval over the 4 tasks; pass@1..3 follow the unbiased estimator."""
        page, problems = open_page(self, self.report)
        means = [sum(rewards) / len(rewards) for rewards in self.rewards.values()]
        expected = stats.task_bootstrap(list(self.rewards.values()))
        self.assertEqual(page.locator("[data-metric=reward]").inner_text(),
                         f"{sum(means) / len(means):.3f} [{expected.low:.3f}, {expected.high:.3f}]")  # fmt: skip
        self.assertIn(f"bootstrap over the {self.TASKS} scored tasks", page.locator(".interval-note").inner_text())
        shown = {int(span.get_attribute("data-k")): span.inner_text() for span in page.locator(".pass-at").all()}
        self.assertEqual(list(shown), [1, 2, 3])
        for k, text in shown.items():
            value = (
                sum(stats.pass_at_k(len(r), sum(x >= 1.0 for x in r), k) for r in self.rewards.values()) / self.TASKS
            )
            self.assertEqual(text, f"@{k} {value:.3f}")
        self.assertEqual(
            page.locator("[data-metric=within-std]").inner_text(), "0.000", "a deterministic policy's rollouts agree"
        )
        self.assertEqual(page.locator("[data-metric=errored]").inner_text(), f"0 of {self.TASKS * self.ROLLOUTS}")
        self.assertEqual(problems, [])

    def test_page_is_clean_and_unclipped_at_both_widths(self):
        """Every section open, at 390 and 1280 px: no console error, no sideways scroll, every chart label inside its chart."""
        for width in (390, 1280):
            with self.subTest(width=width):
                page, problems = open_page(self, self.report, width=width)
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                self.assertLessEqual(page.evaluate("document.documentElement.scrollWidth"), width)
                self.assertEqual(clipped_labels(page), [])
                self.assertEqual(problems, [])

    def test_a_mistake_link_opens_its_rollout(self):
        """A record linked from the mistakes section lies in one rollout; following the link opens it and its task."""
        page, problems = open_page(self, self.report)
        link = page.locator("#mistakes ~ section td.examples a").first
        target = link.get_attribute("href")[1:]
        self.assertRegex(target, r"^run1-dev-\d{5}-rollout[1-3]-r\d+$")
        link.click()
        self.assertTrue(page.locator(f"[id='{target}']").is_visible())
        self.assertEqual(problems, [])

    def test_the_report_command_counts_tasks_and_rollouts(self):
        self.assertIn(
            f"report of 2 run(s), {2 * self.TASKS} task(s), {self.TASKS * (self.ROLLOUTS + 1)} rollouts:",
            self.report_printed,
        )

    def test_runs_with_and_without_rollouts_compare_by_task(self):
        """The r=3 run against the r=1 run of the same policy: one row per task, task means, no change."""
        page, problems = open_page(self, self.compared)
        self.assertEqual(page.locator("table.comparison tbody tr").count(), self.TASKS)
        self.assertEqual(set(page.locator("table.comparison tbody td:nth-child(4)").all_text_contents()), {"+0.000"})
        self.assertIn("task mean reward", page.locator("h3 + p").first.inner_text())
        self.assertEqual(page.locator("[data-metric=pass-at-k]").count(), 1, "pass@k only for the run with rollouts")
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
