"""End to end with the real verifiers tools, then the report: vf-eval runs against a stand-in
model (through `eval --base-url`) score each reply as `score_reply` does, vf-replay reproduces
them, a private_eval episode writes its secret nowhere; the runs' reports are opened in
headless Chromium (the eval command's own tests are `test_eval`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from cases import PRIVATE_ENV, TEST_SECRET, private_secret
from standin import StandInModel

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import identity, load_task, score_reply
from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES
from redaction_pressure.redact.rules import Rule
from redaction_pressure.report import analysis, runs, stats
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import commitment, seed_for

ROOT = Path(__file__).resolve().parents[1]
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


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise AssertionError("headless Chromium is required (Debian: apt-get install chromium); .ci/run installs it")
    return found


def eval_environment(folder: str) -> dict[str, str]:
    """The environment of an `eval` subprocess: a fresh HOME, no key of the host, stand-in key variables."""
    env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV and "API_KEY" not in k}
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env.update(HOME=folder, UV_PYTHON_DOWNLOADS="never", DEAD_KEY="not-a-real-key", STANDIN_KEY="not-a-real-key")
    return env


def traces(run_dir: Path) -> list[dict]:
    path = run_dir / "traces.jsonl"
    return [trace for line in path.read_text().splitlines() if line.strip() for trace in json.loads(line)["traces"]]


def open_page(test: unittest.TestCase, path: Path, anchor: str = "", width: int = 1280, height: int = 900):
    """Load a report in headless Chromium (one browser per test, closed when it ends); returns
    (page, problems): console errors and warnings, page errors and dialogs seen so far."""
    if getattr(test, "_browser", None) is None:
        from playwright.sync_api import sync_playwright

        manager = sync_playwright()
        playwright = manager.start()
        test._browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        test.addCleanup(manager.__exit__, None, None, None)
        test.addCleanup(test._browser.close)
        test.addCleanup(setattr, test, "_browser", None)
    page = test._browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)  # fmt: skip
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.goto(path.resolve().as_uri() + anchor)
    page.wait_for_load_state("load")
    return page, problems


def clipped_labels(page) -> list[str]:
    """The chart texts (titles, axis and tick labels) that reach outside their chart as the browser draws them."""
    return page.evaluate("""() => [...document.querySelectorAll('svg')].flatMap(svg => {
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text')].filter(t => { const r = t.getBoundingClientRect();
            return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5
                                   || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5); })
            .map(t => t.textContent); })""")


class TestMarks(unittest.TestCase):
    def test_each_span_gets_the_status_of_what_was_removed(self):
        """Secrets read removed, partial or missed and decoys touched or intact, cut at removal edges."""
        text = "a=SECRET1 b=SECRET2 c=SECRET3 d=DECOY1 e=DECOY2 tail"
        record = Record(
            text=text,
            secrets=(
                Span(start=2, end=9, kind="k"),
                Span(start=12, end=19, kind="k"),
                Span(start=22, end=29, kind="k"),
            ),
            decoys=(Span(start=32, end=38, kind="d"), Span(start=41, end=47, kind="d")),
            family="f",
        )
        runs_ = ((2, 9), (12, 15), (32, 33), (48, 52))
        pieces = analysis._pieces(record, runs_)
        labelled = [(piece.role, piece.status) for piece in pieces if piece.role]
        self.assertEqual(
            labelled,
            [
                ("secret", "removed"),
                ("secret", "partial"),
                ("secret", "missed"),
                ("decoy", "touched"),
                ("decoy", "intact"),
            ],
        )
        self.assertEqual("".join(text for piece in pieces for text, _ in piece.parts), text)
        removed = "".join(text for piece in pieces for text, gone in piece.parts if gone)
        self.assertEqual(removed, "SECRET1" + "SEC" + "D" + "tail")

    def test_bootstrap_interval_holds_the_mean_and_is_reproducible(self):
        """The 95% interval brackets the mean, is the same on every call, and is a point for constant data."""
        values = [0.0, 0.5, 1.0, 1.0, 0.25, 0.75]
        first, second = stats.bootstrap(values), stats.bootstrap(values)
        self.assertEqual(first, second)
        self.assertLess(first.low, first.mean)
        self.assertLess(first.mean, first.high)
        self.assertEqual(stats.bootstrap([0.4] * 5), stats.Interval(0.4, 0.4, 0.4))


def episode(key: str, reward: float, index: int = 0, error: str = "") -> runs.Episode:
    """A minimal scored (or errored) redaction-pressure rollout of task `key`."""
    return runs.Episode(
        task_id=key, split="dev", index=index, shown=8, hidden=32, prompt="", reply=None, reward=reward,
        components={"recall": reward, "precision": 1.0, "clean_gate": float(reward == 1.0)}, metrics={"validity": 1.0},
        errors=(), failures=(), identity={"split": "dev", "split_commitment": "c"}, started=None, error=error, key=key,
    )  # fmt: skip


def run_of(*episodes: runs.Episode, label: str = "m") -> runs.Run:
    return runs.Run(path=Path("traces.jsonl"), label=label, model=label, episodes=tuple(episodes))


class TestPassAtK(unittest.TestCase):
    def test_pass_at_k_is_the_unbiased_estimator(self):
        """pass@k equals 1 - C(n-c, k) / C(n, k) on known cases, 1 when fewer than k rollouts failed."""
        cases = {  # (n, c, k): pass@k
            (3, 0, 1): 0.0, (3, 3, 1): 1.0, (3, 1, 1): 1 / 3, (3, 1, 2): 2 / 3, (3, 2, 2): 1.0,
            (5, 2, 2): 1 - 3 / 10, (10, 3, 5): 1 - 21 / 252, (1, 1, 1): 1.0, (1, 0, 1): 0.0,
        }  # fmt: skip
        for (n, c, k), expected in cases.items():
            with self.subTest(n=n, c=c, k=k):
                self.assertAlmostEqual(stats.pass_at_k(n, c, k), expected, places=12)

    def test_impossible_counts_are_refused(self):
        """k of 0 or above n, and c above n, raise ValueError naming the numbers."""
        for n, c, k in ((3, 1, 0), (3, 1, 4), (3, 4, 1), (3, -1, 1)):
            with self.subTest(n=n, c=c, k=k), self.assertRaises(ValueError) as caught:
                stats.pass_at_k(n, c, k)
            self.assertIn(f"n={n}, c={c}, k={k}", str(caught.exception))

    def test_the_curve_averages_tasks_and_stops_at_the_fewest_rollouts(self):
        """pass@k over tasks is the mean of each task's pass@k, for k up to the fewest rollouts of a scored task."""
        curve = stats.pass_curve([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.0, 0.0]])
        self.assertEqual(list(curve), [1, 2, 3])
        self.assertAlmostEqual(curve[1], (1 / 3 + 1 + 0) / 3)
        self.assertAlmostEqual(curve[2], (2 / 3 + 1 + 0) / 3)
        self.assertAlmostEqual(curve[3], (1 + 1 + 0) / 3)
        self.assertEqual(list(stats.pass_curve([[1.0, 1.0, 0.0], [0.0, 1.0], []])), [1, 2], "an empty task is left out")
        self.assertEqual(stats.pass_curve([[], []]), {})

    def test_a_pass_is_the_full_score_up_to_rounding(self):
        """A reward of 1.0 less float rounding passes; 0.99 does not."""
        self.assertTrue(stats.passed(0.9999999999999))
        self.assertTrue(stats.passed(1.0))
        self.assertFalse(stats.passed(0.99))


class TestTaskStatistics(unittest.TestCase):
    def test_more_rollouts_of_one_task_do_not_narrow_the_interval(self):
        """Three rollouts of one task give the interval of its mean taken once; a rollout-level bootstrap would be narrower."""
        means = [0.25, 0.75, 0.5, 1.0, 0.0]
        repeated = [[0.25, 0.25, 0.25], [0.75], [0.5], [1.0], [0.0]]
        once = stats.task_bootstrap([[value] for value in means])
        grouped = stats.task_bootstrap(repeated)
        self.assertEqual(grouped, once)
        self.assertEqual(once, stats.bootstrap(means))
        flat = stats.bootstrap([value for rewards in repeated for value in rewards])
        self.assertLess(flat.high - flat.low, grouped.high - grouped.low, "counting rollouts as tasks would narrow it")

    def test_the_headline_is_the_mean_of_task_means(self):
        """A task with three 0.0 rollouts and one with a single 1.0 average to 0.5, not 0.25."""
        summary = analysis.summarise(
            run_of(episode("a", 0.0), episode("a", 0.0), episode("b", 1.0, 1), episode("a", 0.0))
        )
        self.assertEqual((summary.tasks, summary.rollouts, summary.per_task), (2, 4, 3))
        self.assertEqual(summary.reward.mean, 0.5)
        self.assertEqual(summary.recall, 0.5)

    def test_within_task_spread_and_pass_at_k_of_a_run(self):
        """The summary's within-task std is the mean of the tasks' sample stds; pass@k comes from each task's passes."""
        summary = analysis.summarise(run_of(*(episode("a", r) for r in (1.0, 0.0, 1.0)),
                                            *(episode("b", r, 1) for r in (0.5, 0.5, 0.5))))  # fmt: skip
        self.assertAlmostEqual(summary.within_std, (stats.std([1.0, 0.0, 1.0]) + 0.0) / 2)
        self.assertAlmostEqual(summary.pass_at[1], (2 / 3 + 0) / 2)
        self.assertAlmostEqual(summary.pass_at[2], (1 + 0) / 2)
        self.assertIsNone(analysis.summarise(run_of(episode("a", 1.0), episode("b", 0.0, 1))).within_std)

    def test_an_errored_rollout_is_left_out_of_its_task(self):
        """A task whose second rollout errored counts by its scored rollout; a task with none scored is left out."""
        summary = analysis.summarise(run_of(episode("a", 1.0), episode("a", 0.0, error="ProviderError"),
                                            episode("b", 0.0, 1, error="ProviderError")))  # fmt: skip
        self.assertEqual((summary.tasks, summary.scored_tasks, summary.errored, summary.scored), (2, 1, 2, 1))
        self.assertEqual(summary.reward.mean, 1.0)

    def test_runs_are_compared_by_task_key_on_task_means(self):
        """Three rollouts per task in any order against one per task in reverse order: paired by key, task means compared."""
        a = run_of(episode("t1", 1.0), episode("t2", 0.0, 1), episode("t1", 0.0), episode("t2", 0.5, 1),
                   episode("t1", 0.5), episode("t2", 1.0, 1), label="a")  # fmt: skip
        b = run_of(episode("t2", 1.0, 1), episode("t1", 0.5), label="b")
        difference = analysis.compare(a, b)
        self.assertEqual(difference.tasks, 2)
        self.assertTrue(difference.rollouts)
        self.assertEqual(sorted(difference.per_task), [("t1", 0.5, 0.5), ("t2", 0.5, 1.0)])
        self.assertEqual(difference.mean.mean, 0.25)

    def test_audit_runs_group_the_same_way(self):
        """secrets-audit episodes of two tasks, three rollouts each: two tasks, six rollouts, pass@1..3, task-mean reward."""
        from redaction_pressure.report import audit

        def rollout(index: int, reward: float) -> audit.AuditEpisode:
            return audit.AuditEpisode(
                task_id=f"audit-dev-{index:05d}", split="dev", index=index, scenario="git_basics", difficulty="easy",
                budget=10, reward=reward, metrics={"detection": reward, "health": 1.0, "steps": 5.0}, facts={},
                identity={}, started=None, key=f"audit-dev-{index:05d}",
            )  # fmt: skip

        episodes = [
            rollout(0, 1.0),
            rollout(1, 0.0),
            rollout(0, 1.0),
            rollout(1, 0.5),
            rollout(0, 0.4),
            rollout(1, 0.0),
        ]
        summary = audit.summarise(episodes)
        self.assertEqual((summary.tasks, summary.rollouts, summary.per_task), (2, 6, 3))
        self.assertAlmostEqual(summary.reward.mean, (2.4 / 3 + 0.5 / 3) / 2)
        self.assertEqual(list(summary.pass_at), [1, 2, 3])
        self.assertAlmostEqual(summary.pass_at[1], (2 / 3 + 0) / 2)
        ((_, _, group),) = audit.breakdown(episodes)
        self.assertEqual(group.tasks, 2)


class TestReadingRuns(unittest.TestCase):
    def test_bad_inputs_name_what_is_wrong(self):
        """A missing folder, a folder without traces and a file that is not a trace each say so by name."""
        with tempfile.TemporaryDirectory() as folder:
            base = Path(folder)
            (base / "empty").mkdir()
            (base / "bad").mkdir()
            (base / "bad" / "traces.jsonl").write_text("not json\n")
            cases = {
                base / "missing": "no such file or folder",
                base / "empty": "no traces.jsonl",
                base / "bad": "line 1: not a saved episode",
            }
            for path, message in cases.items():
                with self.subTest(path=path.name), self.assertRaises(runs.ReportError) as caught:
                    runs.find_runs([path])
                self.assertIn(str(path), str(caught.exception))
                self.assertIn(message, str(caught.exception))

    def test_report_command_refuses_a_folder_without_runs(self):
        """`redaction-pressure report` exits 2 and names the folder when it holds no run."""
        with tempfile.TemporaryDirectory() as folder:
            result = subprocess.run(
                [str(BIN / "redaction-pressure"), "report", folder, "-o", str(Path(folder) / "r.html")],
                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
            )  # fmt: skip
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(folder, result.stderr)
        self.assertIn("no traces.jsonl", result.stderr)


class TestEpisodeErrors(unittest.TestCase):
    def test_a_long_error_ends_at_a_whole_word_and_is_marked(self):
        """An error longer than the limit is cut at its last whole word and ends with [...]; a short one is whole."""
        words = " ".join(f"word{i}" for i in range(200))
        long = runs.episode_error({"errors": [{"type": "TaskError", "message": words}]})
        self.assertTrue(long.startswith("TaskError: word0 word1"))
        self.assertTrue(long.endswith(" [...]"))
        self.assertLessEqual(len(long), len("TaskError: ") + runs.ERROR_CHARS + len(" [...]"))
        self.assertIn(long.removesuffix(" [...]").rsplit(" ", 1)[1], words.split())
        short = "the runtime lacks git-filter-repo, which secrets-audit needs where the agent runs"
        self.assertEqual(
            runs.episode_error({"errors": [{"type": "TaskError", "message": short}]}), f"TaskError: {short}"
        )

    def test_a_missing_tool_is_named_once_for_the_whole_run(self):
        """Six episodes failing on the same missing tool: the eval summary names the reason once, counted."""
        import asyncio
        from unittest import mock

        from redaction_pressure.audit import grading
        from redaction_pressure.audit.taskset import SecretsAuditConfig, SecretsAuditTaskset
        from redaction_pressure.cli.eval import eval_summary

        async def lacking(runtime):
            return grading.Probe(None, ["git-filter-repo"])

        messages = []
        tasks = list(SecretsAuditTaskset(SecretsAuditConfig(split="dev", size=6)))
        with mock.patch.object(grading, "probe", lacking):
            for task in tasks:
                with self.assertRaises(Exception) as caught:
                    asyncio.run(task._requirements(None))
                messages.append(str(caught.exception))
        self.assertEqual(len(set(messages)), 1, "the message names the runtime, not the task")
        self.assertIn("uv sync --extra audit", messages[0])
        episodes = tuple(mock.Mock(errored=True, error=f"TaskError: {m}", reward=0.0) for m in messages)
        run = mock.Mock(episodes=episodes, identity={})
        _, error = eval_summary(run, "dev")
        self.assertEqual(error, f"6 of 6 episodes errored: TaskError: {messages[0]} (× 6)")


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
