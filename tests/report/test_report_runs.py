"""Reading runs for the report: bad inputs named, a folder without runs refused, episode errors
cut at a whole word and a missing tool named once.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.report import runs

BIN = Path(sys.executable).parent


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


if __name__ == "__main__":
    unittest.main()
