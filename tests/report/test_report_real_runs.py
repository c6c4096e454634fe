"""End to end with the real verifiers tools, then the report: vf-eval runs against a stand-in
model (through `eval --base-url`) score each reply as `score_reply` does, vf-replay reproduces
them, a private_eval episode writes its secret nowhere; the runs' reports are opened in
headless Chromium (the eval command's own tests are `test_eval`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import identity, load_task, score_reply
from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES
from redaction_pressure.redact.rules import Rule
from redaction_pressure.splits import commitment, seed_for
from tests.support.browser import chromium, clipped_labels, open_page
from tests.support.cases import PRIVATE_ENV, TEST_SECRET, private_secret
from tests.support.runs import traces
from tests.support.standin import StandInModel

ROOT = Path(__file__).resolve().parents[2]


BIN = Path(sys.executable).parent


XSS = "</script><script>alert(1)</script>"


DEV_TASKS = 6


FIXED = {0: 1.0, 2: 0.0, 4: 0.0, 5: 0.0}
"""Dev tasks whose scripted reply earns a reward known without scoring (oracle; first characters,
malformed, no rules)."""


def scripted_reply(index: int, task) -> str:
    """Task i of the dev run: oracle, XSS + long tokens, first characters, delete everything, malformed, no rules."""
    if index == 0:
        return policies.reply(policies.oracle_rules(task.hidden))
    if index == 1:
        return policies.reply([Rule(XSS, "[REDACTED]"), *PROMPT_POLICIES["long_tokens"](task.prompt.user)])
    if index == 2:
        return policies.reply(policies.first_character_rules(task.hidden))
    if index == 3:
        return policies.reply(PROMPT_POLICIES["delete_everything"](task.prompt.user))
    if index == 5:
        return '{"rules": []}'
    return '{"rules": [{"pattern": "' + XSS + '", "replacement": "[REDACTED]"},]}'


class TestReportOfRealRuns(unittest.TestCase):
    """vf-eval (through `redaction-pressure eval --base-url`) against a stand-in model, then the report."""

    @classmethod
    def setUpClass(cls):
        chromium()  # fail at once without a browser, before the runs
        replies = {}
        for index in range(DEV_TASKS):
            task = load_task("dev", index)
            replies[task.prompt.user] = scripted_reply(index, task)
        with private_secret(TEST_SECRET):
            cls.private = load_task("private_eval", 0)
            cls.private_seed = seed_for("private_eval", 0)
            cls.private_commitment = commitment("private_eval")
        replies[cls.private.prompt.user] = policies.reply(policies.oracle_rules(cls.private.hidden))
        cls.model = StandInModel(replies)
        cls.home = Path(tempfile.mkdtemp(prefix="rp-report-"))
        cls.printed = ""  # what every eval run printed, searched for the private secret
        cls.dev_run = cls.evaluate("dev", DEV_TASKS, cls.home / "dev")
        cls.private_run = cls.evaluate("private_eval", 1, cls.home / "private", **{PRIVATE_ENV: TEST_SECRET})
        cls.replay = cls.home / "replay"
        cls.tool(["vf-replay", str(cls.dev_run), "-o", str(cls.replay), "--no-rich"])
        cls.dev_report = cls.home / "dev.html"
        cls.tool(["redaction-pressure", "report", str(cls.dev_run), "-o", str(cls.dev_report)])
        cls.private_report = cls.home / "private.html"
        cls.tool(["redaction-pressure", "report", str(cls.private_run), "-o", str(cls.private_report)])
        cls.compared = cls.home / "compared.html"
        cls.tool(["redaction-pressure", "report", str(cls.dev_run), str(cls.replay), "-o", str(cls.compared)])

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    @classmethod
    def environment(cls, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        env.update(HOME=str(cls.home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key", **extra)
        return env

    @classmethod
    def tool(cls, args: list[str], **extra: str) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(BIN / args[0]), *args[1:]], env=cls.environment(**extra), cwd=ROOT, capture_output=True,
            text=True, stdin=subprocess.DEVNULL, timeout=900,
        )  # fmt: skip
        if result.returncode != 0:
            raise AssertionError(f"{args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    @classmethod
    def evaluate(cls, split: str, count: int, out: Path, **extra: str) -> Path:
        result = cls.tool(
            ["redaction-pressure", "eval", "--model", "standin", "--base-url", cls.model.url,
             "--api-key-var", "STANDIN_KEY", "--split", split, "-n", str(count), "-o", str(out)],
            **extra,
        )  # fmt: skip
        (run_dir,) = [path.parent for path in out.glob("*/traces.jsonl")]
        assert f"run folder: {run_dir}" in result.stdout, result.stdout
        assert (run_dir / "report.html").is_file()
        cls.printed += result.stdout + result.stderr
        return run_dir

    def test_each_reply_scores_as_score_reply_says_and_replays_identically(self):
        """Through vf-eval each scripted reply earns what score_reply gives it (oracle 1.0; first
        characters, malformed JSON and no rules 0.0) with its error codes, every trace carries the
        identity block and its task's seed, and vf-replay reproduces every reward and error."""
        scored = traces(self.dev_run)
        self.assertEqual(sorted(t["task"]["data"]["index"] for t in scored), list(range(DEV_TASKS)))
        block = identity("dev", commitment("dev"))
        rewards = {}
        for trace in scored:
            index = trace["task"]["data"]["index"]
            task = load_task("dev", index)
            expected = score_reply(task, scripted_reply(index, task))
            with self.subTest(task=index):
                rewards[index] = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
                self.assertEqual(rewards[index], expected.reward)
                self.assertEqual(set(trace["rewards"]), {"recall", "precision", "clean_gate"})
                self.assertEqual(
                    [e["code"] for e in trace["info"]["redaction_errors"]], [e.code for e in expected.errors]
                )
                self.assertEqual(trace["info"]["environment"], block)
                self.assertEqual(trace["task"]["data"]["environment"]["split_commitment"], commitment("dev"))
                self.assertEqual(trace["info"]["task_seed"], seed_for("dev", index))
        self.assertEqual({i: rewards[i] for i in FIXED}, FIXED)
        self.assertEqual([e["code"] for t in scored for e in t["info"]["redaction_errors"]], ["malformed_json"])
        (replayed,) = self.replay.rglob("traces.jsonl")
        again = {t["task"]["data"]["index"]: t for t in traces(replayed.parent)}
        self.assertEqual(len(again), DEV_TASKS)
        for trace in scored:
            index = trace["task"]["data"]["index"]
            self.assertEqual(again[index]["rewards"], trace["rewards"], f"task {index}")
            self.assertEqual(again[index]["info"]["redaction_errors"], trace["info"]["redaction_errors"])

    def test_private_run_reveals_the_seed_and_never_the_secret(self):
        """The private_eval episode scores 1.0, records its seed in trace.info (never in the task
        data), and no file of its run folder nor anything eval printed holds the secret."""
        (trace,) = traces(self.private_run)
        self.assertEqual(sum(r["score"] * r["weight"] for r in trace["rewards"].values()), 1.0)
        self.assertEqual(trace["info"]["task_seed"], self.private_seed)
        self.assertEqual(trace["info"]["environment"]["split"], "private_eval")
        self.assertEqual(trace["info"]["environment"]["split_commitment"], self.private_commitment)
        self.assertNotIn(str(self.private_seed), json.dumps(trace["task"]["data"]))
        files = [path for path in (self.home / "private").rglob("*") if path.is_file()]
        self.assertGreaterEqual(len(files), 3, "traces, the vf-eval log and the report at least")
        for path in files:
            self.assertNotIn(TEST_SECRET.encode(), path.read_bytes(), str(path))
        self.assertNotIn(TEST_SECRET, self.printed)

    def test_marked_counts_match_the_traces_metrics(self):
        """Each task's highlighted removed secrets and touched decoys equal the trace's secrets_removed and decoys_touched."""
        page, problems = open_page(self, self.dev_report)
        scored = traces(self.dev_run)
        self.assertEqual(len(scored), DEV_TASKS)
        seen = set()
        for trace in scored:
            task_id = trace["task"]["data"]["id"]
            metrics = trace["metrics"]
            section = page.locator(f"details.task[data-task='{task_id}'][data-run='1']")
            with self.subTest(task=task_id):
                self.assertEqual(section.count(), 1)
                self.assertIsNone(section.get_attribute("open"), "tasks start collapsed")
                wrong = metrics["secrets_total"] - metrics["secrets_removed"]
                self.assertEqual(section.locator(".secret.missed, .secret.partial").count(), wrong,
                                 "every secret not removed is drawn")  # fmt: skip
                self.assertEqual(section.locator(".decoy.touched").count(), metrics["decoys_touched"])
                self.assertEqual(
                    int(section.locator(".count-secrets-removed").text_content()), metrics["secrets_removed"]
                )
                self.assertEqual(
                    int(section.locator(".count-decoys-touched").text_content()), metrics["decoys_touched"]
                )
                clean = section.locator(".record-ok")
                summarised = int(clean.get_attribute("data-records")) if clean.count() else 0
                self.assertEqual(
                    section.locator(".record-label").count() + summarised,
                    trace["task"]["data"]["hidden_count"],
                    "every hidden record is drawn in full or summarised",
                )
                for label in section.locator(".record-label").all_text_contents():
                    self.assertIn("mistake", label, "only records holding a mistake are drawn in full")
                seen.update(
                    f"{role}.{status}"
                    for role, status in [
                        ("secret", "removed"),
                        ("secret", "partial"),
                        ("secret", "missed"),
                        ("decoy", "touched"),
                        ("decoy", "intact"),
                    ]  # fmt: skip
                    if section.locator(f".{role}.{status}").count()
                )
        # The scripted policies between them produce every case the legend names.
        self.assertEqual(seen, {"secret.removed", "secret.partial", "secret.missed", "decoy.touched", "decoy.intact"})
        self.assertGreater(page.locator("pre.record del.other").count(), 0, "delete-everything removes other text")
        self.assertEqual(page.locator(".legend .secret.missed, .legend .decoy.touched, .legend del.other").count(), 3)
        self.assertEqual(problems, [])

    def test_summary_shows_the_runs_figures(self):
        """The summary's mean reward, task count and error codes are the traces' own."""
        page, problems = open_page(self, self.dev_report)
        scored = traces(self.dev_run)
        mean = sum(sum(r["score"] * r["weight"] for r in t["rewards"].values()) for t in scored) / len(scored)
        self.assertTrue(page.locator("[data-metric=reward]").inner_text().startswith(f"{mean:.3f} ["))
        body = page.locator("body").inner_text()
        self.assertIn("malformed_json × 1", body)
        self.assertEqual(page.locator(".run-label").inner_text(), "standin", "a run is named by its model")
        self.assertEqual(page.locator("[data-metric=errored]").inner_text(), f"0 of {DEV_TASKS}")
        self.assertIn("Public split (dev)", body)
        commitment = scored[0]["info"]["environment"]["split_commitment"]
        self.assertIn(commitment, page.locator("details.provenance").text_content(), "in the folded provenance")
        self.assertEqual(page.locator("svg").count(), 3, "three inline charts")
        self.assertEqual(problems, [])

    def test_hostile_rule_text_is_shown_inert(self):
        """A rule holding </script><script>alert(1)</script> is displayed as text and never runs."""
        page, problems = open_page(self, self.dev_report)
        patterns = page.locator("code.pattern").all_text_contents()
        self.assertTrue(any(pattern == XSS for pattern in patterns), "the rule is listed verbatim")
        self.assertTrue(any(XSS in reply for reply in page.locator("pre.reply").all_text_contents()),
                        "the invalid reply is shown as text too")  # fmt: skip
        self.assertEqual(page.evaluate("document.scripts.length"), 1, "only the report's own script")
        self.assertEqual(problems, [], "no dialog, no console error")

    def test_task_table_sorts_by_a_clicked_column(self):
        """Clicking the reward header orders the task table by reward, and again reverses it."""
        page, problems = open_page(self, self.dev_report)
        table = page.locator("#tasks-run1")
        header = table.locator("th", has_text="reward")
        column = (
            "Array.from(document.querySelectorAll('#tasks-run1 tbody tr')).map(r => parseFloat(r.cells[1].textContent))"
        )
        header.click()
        ascending = page.evaluate(column)
        self.assertEqual(ascending, sorted(ascending))
        header.click()
        self.assertEqual(page.evaluate(column), sorted(ascending, reverse=True))
        self.assertEqual(problems, [])

    def test_task_page_screenshot_is_not_blank(self):
        """A screenshot at a task's anchor shows coloured marks, not an empty page."""
        from PIL import Image

        page, problems = open_page(self, self.dev_report, "#run1-dev-00001")
        shot = self.home / "task.png"
        page.screenshot(path=str(shot))
        with Image.open(shot) as image:
            colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        self.assertIsNotNone(colours)
        self.assertGreater(len(colours), 50)
        self.assertLess(max(count for count, _ in colours) / sum(count for count, _ in colours), 0.95)
        self.assertEqual(problems, [])

    def test_two_runs_are_compared_task_by_task(self):
        """A vf-eval run and its vf-replay side by side: equal means and a zero change on every task."""
        page, problems = open_page(self, self.compared)
        self.assertEqual(page.locator("[data-metric=reward]").count(), 2)
        first, second = page.locator("[data-metric=reward]").all_inner_texts()
        self.assertEqual(first, second)
        rows = page.locator("table.comparison tbody tr")
        self.assertEqual(rows.count(), DEV_TASKS)
        self.assertEqual(set(page.locator("table.comparison tbody td:nth-child(4)").all_text_contents()), {"+0.000"})
        self.assertEqual(problems, [])

    def test_first_screen_answers_how_good_at_both_widths(self):
        """The label, mean reward, clean-gate and validity rates and errored count are on the first screen."""
        for width, height in ((1280, 800), (390, 844)):
            with self.subTest(width=width):
                page, problems = open_page(self, self.dev_report, width=width, height=height)
                for selector in (".run-label", "[data-metric=reward]", "[data-metric=clean-gate]",
                                 "[data-metric=validity]", "[data-metric=errored]"):  # fmt: skip
                    box = page.locator(selector).bounding_box()
                    self.assertIsNotNone(box, selector)
                    self.assertLess(box["y"] + box["height"], height, f"{selector} is below the fold")
                self.assertIsNone(page.locator("details.provenance").get_attribute("open"), "provenance is folded")
                self.assertEqual(problems, [])

    def test_no_sideways_scroll_and_readable_charts_at_390_px(self):
        """At 390 and 1280 px the page does not scroll sideways, chart text stays at least 9 px tall and no label is cut off."""
        for width in (390, 1280):
            with self.subTest(width=width):
                page, problems = open_page(self, self.dev_report, width=width)
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                self.assertLessEqual(page.evaluate("document.documentElement.scrollWidth"), width)
                heights = page.evaluate(
                    "Array.from(document.querySelectorAll('svg text')).map(t => t.getBoundingClientRect().height)"
                )
                self.assertTrue(heights)
                self.assertGreaterEqual(min(h for h in heights if h > 0), 9.0)
                self.assertEqual(clipped_labels(page), [], "every chart label lies inside its chart")
                self.assertEqual(problems, [])

    def test_mistakes_section_links_open_the_record(self):
        """The mistakes section counts missed secrets by kind, family and context and links into a collapsed task."""
        page, problems = open_page(self, self.dev_report)
        scored = traces(self.dev_run)
        missed = sum(t["metrics"]["secrets_total"] - t["metrics"]["secrets_removed"] for t in scored)
        for table in ("by-kind", "by-family", "by-context"):
            column = page.locator(f"#mistakes ~ section table.{table} tbody td:nth-child(2)").all_inner_texts()
            self.assertEqual(sum(int(value) for value in column), missed, table)
        self.assertNotIn("/0.0/", page.locator("table.by-context").inner_text(), "contexts never show slot ids")
        self.assertGreater(page.locator("table.by-decoy tbody tr").count(), 0)
        self.assertGreater(int(page.locator(".over-count").inner_text()), 0)
        link = page.locator("table.by-kind td.examples a").first
        target = link.get_attribute("href")
        link.click()
        record = page.locator(f"[id='{target[1:]}']")
        self.assertTrue(record.is_visible(), "the linked record's task opens")
        self.assertIn("mistake", record.inner_text())
        self.assertEqual(problems, [])

    def test_private_report_holds_no_hidden_text_and_no_secret(self):
        """A private_eval report shows scores and kinds only: no record, rule, seed or secret."""
        html = self.private_report.read_text(encoding="utf-8")
        forbidden = [TEST_SECRET, str(self.private_seed)]
        forbidden += [record.value(span) for record in self.private.hidden for span in record.secrets + record.decoys]
        forbidden += [record.text[:60] for record in self.private.hidden]
        forbidden += [line for line in self.private.prompt.user.splitlines() if len(line) > 30]
        for text in forbidden:
            self.assertNotIn(text, html)
        page, problems = open_page(self, self.private_report)
        self.assertEqual(page.locator("pre.record, code.pattern, .task").count(), 0)
        self.assertIn("private_eval", page.locator("body").inner_text())
        self.assertIn("recall by kind", page.locator("#tasks-run1 thead").inner_text())
        self.assertEqual(problems, [])
        self.assertNotIn(TEST_SECRET, (self.private_run / "report.html").read_text(encoding="utf-8"))


if __name__ == "__main__":
    unittest.main()
