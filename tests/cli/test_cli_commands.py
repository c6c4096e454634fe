"""The command-line tool's subcommands, run as a user runs them: show, score, baselines, export,
serve (a built-in policy as a chat endpoint) and show for a secrets-audit task.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.splits import commitment
from tests.support.cases import PRIVATE_ENV, TEST_SECRET, reply
from tests.support.cli import ROOT, run


class TestShow(unittest.TestCase):
    def test_public_task_shows_prompt_and_marked_hidden_records(self):
        """show prints both prompts and every hidden secret and decoy between markers."""
        result = run("show", "dev", "5")
        self.assertEqual(result.returncode, 0, result.stderr)
        task = load_task("dev", 5)
        self.assertIn(task.prompt.user.splitlines()[0], result.stdout)
        self.assertIn(commitment("dev"), result.stdout)
        for record in task.hidden:
            for span in record.secrets:
                first_line = record.value(span).splitlines()[0]
                self.assertIn(f"[[S:{span.kind}]]{first_line}", result.stdout)
            for span in record.decoys:
                self.assertIn(f"[[D:{span.kind}]]{record.value(span).splitlines()[0]}", result.stdout)

    def test_private_task_shows_no_hidden_records_and_no_secret(self):
        """For private_eval, show prints the prompt only, and never the secret."""
        result = run("show", "private_eval", "1", env={PRIVATE_ENV: TEST_SECRET})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("not shown", result.stdout)
        self.assertNotIn("[[S:", result.stdout)
        self.assertNotIn(TEST_SECRET, result.stdout + result.stderr)
        as_json = run("show", "private_eval", "1", "--json", env={PRIVATE_ENV: TEST_SECRET})
        self.assertNotIn("hidden", json.loads(as_json.stdout))


class TestScore(unittest.TestCase):
    def test_scores_a_rules_file_against_one_task(self):
        """The oracle's rules file scores 1.0 on its task, reported with split and commitment."""
        task = load_task("dev", 3)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            handle.write(policies.reply(policies.oracle_rules(task.hidden)))
        try:
            result = run("score", handle.name, "--split", "dev", "--index", "3", "--json")
        finally:
            os.unlink(handle.name)
        data = json.loads(result.stdout)
        self.assertEqual((data["split"], data["split_commitment"]), ("dev", commitment("dev")))
        self.assertEqual([(t["index"], t["reward"], t["clean_gate"]) for t in data["tasks"]], [(3, 1.0, 1.0)])

    def test_scores_a_raw_reply_from_stdin_over_the_split(self):
        """A raw reply on standard input is scored strictly on every dev task."""
        result = run("score", "-", "--split", "dev", "--json", stdin="Sure! " + reply(("AKIA", "")))
        data = json.loads(result.stdout)
        self.assertEqual(len(data["tasks"]), 64)
        self.assertEqual({t["errors"][0]["code"] for t in data["tasks"]}, {"malformed_json"})
        self.assertEqual(data["mean"]["reward"], 0.0)

    def test_table_names_split_and_errors(self):
        """The human table shows the split, its commitment and each task's error codes."""
        result = run("score", "-", "--split", "dev", "--index", "0", stdin=reply(("x*", "")))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("split dev", result.stdout)
        self.assertIn("empty_match", result.stdout)


class TestBaselinesCommand(unittest.TestCase):
    def test_ladder_json_names_every_policy(self):
        """baselines --json reports each policy's means with the split and commitment."""
        result = run("baselines", "--split", "dev", "--size", "4", "--json")
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertEqual((data["split"], data["tasks"]), ("dev", 4))
        rows = {row["policy"]: row for row in data["ladder"]}
        self.assertEqual(set(rows), {
            "oracle", "induction", "constant", "copy", "prefix", "after_separator", "long_tokens",
            "delete_everything", "scanner", "no_rules", "first_character", "literal",
        })  # fmt: skip
        self.assertEqual(rows["oracle"]["reward"], 1.0)

    def test_ladder_runs_at_a_difficulty_level(self):
        """baselines --difficulty hard scores the hard level's tasks under its own identity and commitment."""
        result = run(
            "baselines", "--split", "dev", "--size", "2", "--difficulty", "hard", "--policy", "oracle", "--json"
        )
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertEqual(data["environment"]["corpus_version"], "5-hard")
        self.assertEqual(data["split_commitment"], commitment("dev", "hard"))
        self.assertEqual(data["ladder"][0]["reward"], 1.0)
        self.assertNotEqual(run("baselines", "--difficulty", "medium").returncode, 0)

    def test_eval_refuses_a_level_for_the_audit_taskset(self):
        """eval --taskset secrets-audit --difficulty hard is a usage error naming the audit's levels."""
        result = run("eval", "--taskset", "secrets-audit", "--difficulty", "hard")
        self.assertEqual(result.returncode, 2)
        self.assertIn("standard", result.stderr)
        self.assertIn("expert; --difficulty hard is a redaction-pressure level", result.stderr)

    def test_ladder_table(self):
        """The human table lists the policies with their rewards."""
        result = run("baselines", "--split", "dev", "--size", "2", "--policy", "oracle", "--policy", "literal")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"oracle\s.*1\.000")
        self.assertRegex(result.stdout, r"literal\s.*0\.000")


class TestExport(unittest.TestCase):
    def test_exports_a_public_split_as_dataset_and_jsonl(self):
        """export writes a loadable Hugging Face dataset and JSONL with the tasks' records."""
        import datasets

        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "dev"
            result = run("export", "dev", "--out", str(out), "--size", "3")
            self.assertEqual(result.returncode, 0, result.stderr)
            dataset = datasets.load_from_disk(str(out))
            lines = (out / "dev.jsonl").read_text().splitlines()
        self.assertEqual((len(dataset), len(lines)), (3, 3))
        task = load_task("dev", 2)
        row = dataset[2]
        self.assertEqual((row["id"], row["user_prompt"]), ("dev-00002", task.prompt.user))
        self.assertEqual(row["hidden"], [r.model_dump(mode="json") for r in task.hidden])
        self.assertEqual(json.loads(lines[2])["hidden"], row["hidden"])

    def test_exports_a_difficulty_level(self):
        """export --difficulty easy writes that level's tasks, named and labelled by the level."""
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "easy"
            result = run("export", "dev", "--out", str(out), "--size", "1", "--difficulty", "easy")
            self.assertEqual(result.returncode, 0, result.stderr)
            row = json.loads((out / "dev.jsonl").read_text().splitlines()[0])
        task = load_task("dev", 0, difficulty="easy")
        self.assertEqual((row["id"], row["difficulty"], row["corpus_version"]), ("dev-easy-00000", "easy", "4-easy"))
        self.assertEqual(row["user_prompt"], task.prompt.user)

    def test_private_eval_is_refused(self):
        """Exporting private_eval is refused and writes nothing."""
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "private"
            result = run("export", "private_eval", "--out", str(out), env={PRIVATE_ENV: TEST_SECRET})
            self.assertEqual(result.returncode, 2)
            self.assertIn("private_eval cannot be exported", result.stderr)
            self.assertFalse(out.exists())

    def test_existing_folder_is_not_overwritten(self):
        """A non-empty output folder is an error, not silently replaced."""
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "keep.txt").write_text("mine")
            result = run("export", "dev", "--out", folder, "--size", "1")
            self.assertEqual(result.returncode, 1)
            self.assertEqual((Path(folder) / "keep.txt").read_text(), "mine")


class TestServePolicy(unittest.TestCase):
    """`serve --policy NAME`: an OpenAI-compatible endpoint answering with a prompt-only policy."""

    def test_the_copy_baseline_served_from_the_prompt_writes_the_ladders_rules(self):
        """`copy`, served from the prompt's text alone, writes on every dev task the rules the ladder's copy writes from the task's spans."""
        from redaction_pressure.cli.serve import policy_answer
        from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES

        answer = policy_answer("copy")
        for index in range(64):
            task = load_task("dev", index)
            with self.subTest(task=index):
                self.assertEqual(PROMPT_POLICIES["copy"](task.prompt.user), policies.copy_rules(task.shown))
                self.assertEqual(
                    answer({"messages": [{"role": "user", "content": task.prompt.user}]}),
                    policies.reply(policies.copy_rules(task.shown)),
                )

    def test_serves_the_policy_streaming_and_plain_and_stops_on_sigterm(self):
        import signal
        import urllib.request

        from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES

        environment = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        server = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure", "serve", "--policy", "induction", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=environment, cwd=ROOT,
        )  # fmt: skip
        try:
            line = server.stdout.readline()
            self.assertTrue(
                line.startswith("serving induction at http://127.0.0.1:"),
                line + server.stderr.read() if not line else line,
            )
            url = line.split()[-1]
            models = json.loads(urllib.request.urlopen(url + "/models", timeout=30).read())
            self.assertEqual([m["id"] for m in models["data"]], ["induction"])
            task = load_task("dev", 6)
            expected = policies.reply(PROMPT_POLICIES["induction"](task.prompt.user))
            for stream in (False, True):
                body = {"model": "induction", "stream": stream, "messages": [
                    {"role": "system", "content": task.prompt.system}, {"role": "user", "content": task.prompt.user}]}  # fmt: skip
                request = urllib.request.Request(
                    url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
                )
                raw = urllib.request.urlopen(request, timeout=60).read().decode()
                if stream:
                    events = [json.loads(e[6:]) for e in raw.split("\n\n") if e.startswith("data: {")]
                    text = "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])
                    self.assertTrue(raw.rstrip().endswith("data: [DONE]"))
                else:
                    text = json.loads(raw)["choices"][0]["message"]["content"]
                self.assertEqual(text, expected)
            self.assertGreater(score_reply(task, text).reward, 0.9)
            server.send_signal(signal.SIGTERM)
            self.assertEqual(server.wait(timeout=30), 0)
        finally:
            if server.poll() is None:
                server.kill()
            server.stdout.close()
            server.stderr.close()

    def test_an_unknown_policy_is_a_usage_error(self):
        result = run("serve", "--policy", "oracle")
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown policy 'oracle'", result.stderr)


class TestShowAuditTask(unittest.TestCase):
    def test_an_audit_task_shows_what_the_agent_starts_with(self):
        """show --taskset secrets-audit dev 7: the prompts, every file of the last commit with its text, the commits and refs, as text and as JSON."""
        from redaction_pressure.audit.prompt import prompt
        from redaction_pressure.audit.splits import plan_for

        plan = plan_for("dev", 7)
        result = run("show", "--taskset", "secrets-audit", "dev", "7", "--json", module=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        shown = json.loads(result.stdout)
        self.assertEqual(
            (shown["scenario"], shown["prompt"], shown["system_prompt"]),
            (plan.scenario, prompt(plan).user, prompt(plan).system),
        )
        self.assertEqual(shown["files"], plan.tree())
        self.assertEqual([c["message"] for c in shown["history"]], [c.message for c in plan.commits])
        self.assertEqual([(r["name"], r["commits"]) for r in shown["refs"]], list(plan.refs))
        text = run("show", "--taskset", "secrets-audit", "dev", "7", module=False)
        self.assertEqual(text.returncode, 0, text.stderr)
        for path in plan.tree():
            self.assertIn(path, text.stdout)
        self.assertIn(plan.commits[-1].message, text.stdout)

    def test_redaction_options_are_refused_for_an_audit_task(self):
        """--shown, or a redaction-pressure level, with --taskset secrets-audit is a usage error naming what is wrong."""
        result = run("show", "--taskset", "secrets-audit", "dev", "0", "--difficulty", "hard", module=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("expert; --difficulty hard is a redaction-pressure level", result.stderr)
        result = run("show", "--taskset", "secrets-audit", "dev", "0", "--shown", "3", module=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--shown and --hidden are redaction-pressure options", result.stderr)

    def test_an_audit_index_outside_the_split_exits_2(self):
        result = run("show", "--taskset", "secrets-audit", "dev", "99", module=False)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.strip(), "redaction-pressure: error: dev has tasks 0 to 51; index 99 is outside")


class TestOpenEnvCommandsElsewhere(unittest.TestCase):
    def test_serve_openenv_and_agent_name_the_openenv_project(self):
        """Where openenv is not installed (the suite's environment: verifiers is), both commands say where to run
        them in one line and exit 2, before listening or calling anything."""
        for argv in (["serve-openenv", "--port", "0"],
                     ["agent", "--env-url", "http://127.0.0.1:9", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]):  # fmt: skip
            with self.subTest(command=argv[0]):
                result = run(*argv)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(f"{argv[0]} needs the openenv package", result.stderr)
                self.assertIn(f"uv run --project servers/openenv redaction-pressure {argv[0]}", result.stderr)
