"""`redaction-pressure eval`: a built-in policy with no model, an endpoint that is dead or
half-specified, more tasks than the split holds, vf-eval's printed per-kind summary of an exact
run, a 64-task run's report, and secrets-audit's scripted baseline with its report."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.corpus import SECRET_KINDS
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task
from tests.support.browser import clipped_labels, open_page
from tests.support.runs import eval_environment, traces
from tests.support.standin import StandInModel

BIN = Path(sys.executable).parent


class TestEvalCommand(unittest.TestCase):
    def environment(self, folder: str) -> dict[str, str]:
        return eval_environment(folder)

    def test_a_dead_endpoint_is_an_error_not_a_score(self):
        """Every episode failing on a closed port: exit 1, "1 of 1 episodes errored: ProviderError", no mean 0.000."""
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                 "--api-key-var", "DEAD_KEY", "-n", "1", "-o", str(out)],
                env=self.environment(folder), cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                timeout=900,
            )  # fmt: skip
            self.assertEqual(result.returncode, 1, result.stderr[-3000:])
            self.assertIn("1 of 1 episodes errored: ProviderError", result.stderr)
            self.assertIn(
                "episodes finished: 0 scored, 1 errored",
                result.stderr,
                "the progress bar does not call an error a score",
            )
            self.assertNotIn("mean reward 0.000", result.stdout + result.stderr)
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            html = (run_dir / "report.html").read_text(encoding="utf-8")
            self.assertIn("1 of 1 episode errored", html)
            self.assertIn("none scored", html)
            self.assertNotIn("0.000 <span", html, "no mean reward is shown for an errored episode")

    def test_more_tasks_than_the_split_holds_is_refused_at_once(self):
        """-n 65 on the 64-task dev split is a usage error before vf-eval starts."""
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "-n", "65", "-o", str(out)],
                env=self.environment(folder), cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                timeout=120,
            )  # fmt: skip
            self.assertEqual(result.returncode, 2)
            self.assertIn("dev has 64 tasks; -n 65", result.stderr)
            self.assertFalse(out.exists(), "nothing started")

    def test_per_kind_metrics_of_an_exact_run_average_to_full_recall(self):
        """An exact-answer run through plain vf-eval: its printed summary shows every kind's all_removed at 1.00, and the counts in the traces' info sum to full recall."""
        replies = {load_task("dev", i).prompt.user: policies.reply(policies.oracle_rules(load_task("dev", i).hidden))
                   for i in range(3)}  # fmt: skip
        with tempfile.TemporaryDirectory() as folder, StandInModel(replies) as model:
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "vf-eval"), "redaction-pressure", "-n", "3", "-m", "exact", "--client.base-url", model.url,
                 "--client.api-key-var", "STANDIN_KEY", "--env.agent.runtime.type", "subprocess", "--no-push", "-o", str(out)],
                env={**self.environment(folder), "COLUMNS": "160"}, cwd=folder, capture_output=True, text=True,
                stdin=subprocess.DEVNULL, timeout=900,
            )  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            scored = traces(run_dir)
        self.assertEqual(
            [sum(r["score"] * r["weight"] for r in trace["rewards"].values()) for trace in scored], [1.0] * 3
        )
        names = [set(trace["metrics"]) for trace in scored]
        self.assertTrue(all(keys == names[0] for keys in names), "every episode carries every metric")
        self.assertFalse(any(name.startswith(("recall_", "secrets_openai", "removed_")) for name in names[0]))
        kinds = sorted(name.removeprefix("all_removed_") for name in names[0] if name.startswith("all_removed_"))
        self.assertEqual(kinds, sorted(SECRET_KINDS))
        for kind in kinds:
            with self.subTest(kind=kind):
                counts = [trace["info"]["secret_kinds"].get(kind, {"removed": 0, "total": 0}) for trace in scored]
                self.assertEqual(sum(c["removed"] for c in counts), sum(c["total"] for c in counts))
        # vf-eval's own summary (its dashboard's last frame): the mean of each metric over the episodes
        printed = dict(re.findall(r"all_removed_(\w+)\s+([0-9.]+)", result.stdout))
        self.assertEqual(sorted(printed), kinds, result.stdout[-3000:])
        self.assertEqual(set(printed.values()), {"1.00"}, "no per-kind figure below 1.0 in vf-eval's summary")


class TestReportAtScale(unittest.TestCase):
    """A 64-task run of a built-in policy with no model and no key: the run folder, the progress, and a
    page that stays small, headline first, with no sideways scroll."""

    def test_a_64_task_report_is_small_and_fits_390_px(self):
        with tempfile.TemporaryDirectory() as folder:
            env = eval_environment(folder)
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "--policy", "induction", "-o", str(out)],
                env=env, cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800,
            )  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            self.assertRegex(run_dir.name, r"^redaction-pressure--induction--[0-9a-f]{8}$")  # as the README names it
            report = run_dir / "report.html"
            self.assertIn("episodes finished: 64 scored, 0 errored", result.stderr)
            self.assertIn(f"report: {report}", result.stdout)
            self.assertTrue((run_dir / "vf-eval.log").is_file())
            scored = traces(run_dir)
            self.assertEqual(len(scored), 64)
            self.assertEqual({t["agent"]["config"]["model"] for t in scored}, {"induction"})
            self.assertTrue(all(t["metrics"]["validity"] == 1.0 for t in scored))
            self.assertIn("dev-00063", report.read_text(encoding="utf-8"))
            self.assertLessEqual(report.stat().st_size, 600_000)
            for width in (1280, 390):
                page, problems = open_page(self, report, width=width, height=844)
                box = page.locator("[data-metric=reward]").bounding_box()
                self.assertLess(box["y"] + box["height"], 844)
                self.assertEqual(page.locator(".run-label").inner_text(), "induction")
                self.assertGreater(page.locator("#mistakes ~ section table.by-kind tbody tr").count(), 0)
                self.assertEqual(page.locator("details.task").count(), 64)
                self.assertEqual(page.locator("details.task[open]").count(), 0)
                self.assertLessEqual(page.evaluate("document.documentElement.scrollWidth"), width)
                self.assertEqual(problems, [])


class TestAuditEvalAndReport(unittest.TestCase):
    """`eval --taskset secrets-audit`: the scripted baseline through the real vf-eval, then its report."""

    def test_baseline_runs_offline_and_its_report_shows_the_audit(self):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "--taskset", "secrets-audit", "-n", "3", "-o", str(out)],
                env=eval_environment(folder), cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                timeout=1800,
            )  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            scored = traces(run_dir)
            self.assertEqual(len(scored), 3)
            self.assertEqual({t["task"]["type"] for t in scored}, {"SecretsAuditTask"})
            self.assertIn("3 episode(s) scored, mean reward", result.stdout)
            scenarios = {(t["task"]["data"]["scenario"], t["task"]["data"]["difficulty"]) for t in scored}
            self.assertEqual(
                {difficulty for _, difficulty in scenarios},
                {"easy", "medium", "hard"},
                "a small sample plays every level",
            )
            steps = sum(int(t["metrics"]["steps"]) for t in scored)
            for width in (1280, 390):
                page, problems = open_page(self, run_dir / "report.html", width=width, height=844)
                self.assertEqual(page.locator(".run-label").inner_text(), "baseline")
                self.assertEqual(page.locator("table.scenarios tbody tr").count(), len(scenarios))
                self.assertEqual(page.locator("table.leaks").count(), 1)
                ladder = page.locator("table.ladder")
                self.assertEqual(ladder.count(), 1, "the dev ladder beside the run")
                self.assertEqual(
                    ladder.locator("thead th").all_inner_texts(),
                    ["scenario", "this run", "oracle", "scripted", "memoriser", "inaction"],
                )
                self.assertEqual(ladder.locator("tbody tr").count(), 14, "13 scenarios and the total")
                self.assertEqual(page.locator("details.audit-episode").count(), 3)
                self.assertEqual(page.locator("details.audit-episode pre.command").count(), steps,
                                 "one timeline entry per tool call")  # fmt: skip
                self.assertLessEqual(page.evaluate("document.documentElement.scrollWidth"), width)
                self.assertEqual(clipped_labels(page), [], "every chart label lies inside its chart")
                self.assertEqual(problems, [])

    def test_rollouts_of_an_audit_task_are_one_entry(self):
        """-n 1 -r 2: two episodes of one task; the report shows one task holding two rollouts, and pass@1..2."""
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "eval", "--taskset", "secrets-audit", "-n", "1", "-r", "2", "-o", str(out)],
                env=eval_environment(folder), cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                timeout=1800,
            )  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            scored = traces(run_dir)
            self.assertEqual(len({t["task"]["key"] for t in scored}), 1)
            self.assertEqual(len(scored), 2)
            self.assertIn("2 episode(s) scored (1 task), mean reward over tasks", result.stdout)
            page, problems = open_page(self, run_dir / "report.html")
            self.assertEqual(page.locator("details.audit-episode").count(), 1)
            self.assertEqual(page.locator("details.audit-episode details.rollout").count(), 2)
            self.assertEqual(page.locator("#tasks-run1 tbody tr").count(), 1)
            self.assertEqual([span.get_attribute("data-k") for span in page.locator(".pass-at").all()], ["1", "2"])
            self.assertIn("1 task · 2 rollouts (2 per task)", page.locator(".run-where").inner_text())
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            self.assertEqual(clipped_labels(page), [])
            self.assertEqual(problems, [])


class TestInterrupted(unittest.TestCase):
    def test_ctrl_c_names_the_partial_run_and_reports_what_finished(self):
        """SIGINT to eval's process group mid-run: exit 130, "interrupted", the partial run folder with its report and log, no temporary log left."""
        import os
        import signal
        import time

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            process = subprocess.Popen(
                [str(BIN / "redaction-pressure"), "eval", "-n", "64", "-c", "2", "-o", str(out)],
                env=eval_environment(folder), cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and process.poll() is None:
                found = list(out.glob("*/traces.jsonl"))
                if found and sum(1 for line in found[0].read_text().splitlines() if line.strip()) >= 2:
                    break
                time.sleep(0.2)
            self.assertIsNone(process.poll(), "the run was still going when interrupted")
            os.killpg(process.pid, signal.SIGINT)
            stdout, stderr = process.communicate(timeout=300)
            self.assertEqual(process.returncode, 130, stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            finished = len(traces(run_dir))
            self.assertIn(f"redaction-pressure: interrupted after {finished} of 64 episodes", stderr)
            self.assertIn(f"partial run folder: {run_dir}", stderr)
            self.assertIn(f"report of the finished episodes: {run_dir / 'report.html'}", stderr)
            self.assertTrue((run_dir / "report.html").is_file())
            self.assertTrue((run_dir / "vf-eval.log").is_file())
            self.assertEqual(list(out.glob(".vf-eval.log.*")), [], "no temporary log left behind")
            self.assertNotIn("Traceback", stderr)


class TestWithoutTheReportExtra(unittest.TestCase):
    def test_eval_scores_and_summarises_without_the_report_libraries(self):
        """Without jinja2 and matplotlib, eval -n 1 still runs, scores and summarises (exit 0), and says the report was not written and why."""
        program = ("import sys; sys.modules['jinja2'] = None; sys.modules['matplotlib'] = None; "
                   "from redaction_pressure.cli import main; sys.exit(main(['eval', '-n', '1', '-o', sys.argv[1]]))")  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "runs"
            result = subprocess.run([sys.executable, "-c", program, str(out)], env=eval_environment(folder), cwd=folder,
                                    capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900)  # fmt: skip
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
            self.assertFalse((run_dir / "report.html").exists())
        self.assertIn("1 episode(s) scored, mean reward", result.stdout)
        self.assertIn("report: not written (the report needs the 'report' extra (jinja2 is missing)", result.stdout)


class TestEvalUsage(unittest.TestCase):
    def test_eval_rejects_a_half_specified_endpoint(self):
        """--base-url without --model and --api-key-var is a usage error that names them."""
        result = subprocess.run(
            [str(BIN / "redaction-pressure"), "eval", "--base-url", "http://127.0.0.1:9/v1"],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        self.assertEqual(result.returncode, 2)
        self.assertIn("--model and --api-key-var", result.stderr)

    def test_bad_rollouts_sampling_and_passed_options_are_one_line_usage_errors(self):
        """-r 0, a negative or NaN temperature, --max-tokens 0, a word or an option eval sets after --: exit 2, one line naming it, nothing run."""
        cases = {
            ("-r", "0"): "-r/--num-rollouts must be a whole number of at least 1; got '0'",
            ("-r", "three"): "-r/--num-rollouts must be a whole number",
            ("--temperature", "-0.5"): "--temperature must be a number of at least 0",
            ("--temperature", "nan"): "--temperature must be a number of at least 0",
            ("--max-tokens", "0"): "--max-tokens must be a whole number of at least 1",
            ("--", "stray"): "unexpected argument 'stray'; give vf-eval's own options after --",
            ("--", "-o", "elsewhere"): "-o after -- is set by eval itself; use eval's -o",
            (
                "--",
                "--sampling.temperature=2",
            ): "--sampling.temperature after -- is set by eval itself; use eval's --temperature",
        }
        with tempfile.TemporaryDirectory() as folder:
            for options, message in cases.items():
                with self.subTest(options=options):
                    result = subprocess.run(
                        [str(BIN / "redaction-pressure"), "eval", "-n", "1", "-o", str(Path(folder) / "runs"), *options],
                        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, cwd=folder,
                    )  # fmt: skip
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                    self.assertIn(message, result.stderr)
            self.assertFalse((Path(folder) / "runs").exists(), "nothing started")

    def test_rollouts_sampling_and_extra_options_reach_the_vf_eval_command(self):
        """-r, --temperature, --max-tokens and the options after -- become vf-eval's -r, --sampling.* and trailing arguments."""
        import argparse

        from redaction_pressure.cli import eval as eval_command
        from redaction_pressure.cli.evaluate import Endpoint, vf_eval_command

        args = argparse.Namespace(
            rollouts="3", temperature="0.7", max_tokens="512", vf_args=["--sampling.top-p", "0.9"]
        )
        extra = eval_command.sampling(args).arguments()
        self.assertEqual(
            extra,
            ["-r", "3", "--sampling.temperature", "0.7", "--sampling.max-tokens", "512", "--sampling.top-p", "0.9"],
        )
        command = vf_eval_command(Endpoint("m", "http://127.0.0.1:9/v1", "K"), "dev", 4, Path("out"), None, extra=extra)
        self.assertEqual(command[-len(extra) :], extra)
        plain = argparse.Namespace(rollouts=None, temperature=None, max_tokens=None, vf_args=[])
        self.assertEqual(eval_command.sampling(plain).arguments(), [], "the defaults add nothing to vf-eval's command")


if __name__ == "__main__":
    unittest.main()
