"""`play`: a person works a secrets-audit task through the real CLI, and it is graded as an episode."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from redaction_pressure.audit import programs
from redaction_pressure.audit.splits import plan_for
from tests.support.cases import PRIVATE_ENV

ROOT = Path(__file__).resolve().parents[2]
PLAY = [sys.executable, "-m", "redaction_pressure", "play", "--taskset", "secrets-audit"]
GOLD_TASK = 3
"""dev 3: git_basics, easy (budget 10); its secrets sit in the history too, so the gold fix rewrites it."""
LOOK_TASK = 4
"""dev 4: system_logging; `inspect_file` on settings/fraud_client.toml reveals its shallow finding f1."""


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}


def play(index: int, lines: list[str] | None, *, split: str = "dev") -> subprocess.CompletedProcess:
    """The CLI with `lines` piped as the session's input (None: no input at all)."""
    text = None if lines is None else "".join(line + "\n" for line in lines)
    return subprocess.run([*PLAY, split, str(index)], input=text, capture_output=True, text=True, env=environment(),
                          cwd=ROOT, timeout=180, **({} if text is not None else {"stdin": subprocess.DEVNULL}))  # fmt: skip


def gold_line(index: int) -> str:
    """The oracle's remediation (what `Task.validate` runs) typed as one shell line."""
    return "; ".join(programs.oracle_script(plan_for("dev", index)).strip().splitlines())


def interrupted(index: int) -> tuple[subprocess.CompletedProcess, str]:
    """A session stopped with Ctrl-C (SIGINT) while a command runs; (result, workspace path)."""
    process = subprocess.Popen([*PLAY, "dev", str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=environment(), cwd=ROOT)  # fmt: skip
    seen = []
    for line in process.stdout:
        seen.append(line)
        if line.startswith("status: step 0"):
            break
    process.stdin.write("sleep 60\n")
    process.stdin.flush()
    for line in process.stdout:
        seen.append(line)
        if "sleep 60" in line:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    text = "".join(seen) + out
    return subprocess.CompletedProcess(process.args, process.returncode, text, err), workspace(text)


def workspace(stdout: str) -> str:
    match = re.search(r"^workspace: (.+)$", stdout, re.M)
    assert match, stdout[-2000:]
    return match.group(1)


def score(stdout: str) -> float:
    match = re.search(r"^score (\d\.\d{3}) = ", stdout, re.M)
    assert match, stdout[-2000:]
    return float(match.group(1))


def statuses(stdout: str) -> list[int]:
    return [int(step) for step in re.findall(r"^status: step (\d+) of \d+", stdout, re.M)]


class TestSessions(unittest.TestCase):
    """Four sessions run side by side once (each process imports verifiers, about 5 CPU-s, and grades a repository)."""

    @classmethod
    def setUpClass(cls):
        sessions = {
            "gold": lambda: play(GOLD_TASK, ["ls repo", ":inspect_git_history", gold_line(GOLD_TASK)]),
            "look": lambda: play(LOOK_TASK, ["ls repo", ":inspect_file settings/fraud_client.toml", "submit"]),
            "budget": lambda: play(
                GOLD_TASK, ["cat", ":nope", "", *(f"echo step-{n}" for n in range(2, 11)), "echo NEVER-RUN"]
            ),
            "interrupted": lambda: interrupted(GOLD_TASK),
        }
        with ThreadPoolExecutor(len(sessions)) as pool:
            futures = {name: pool.submit(run) for name, run in sessions.items()}
            cls.results = {name: future.result() for name, future in futures.items()}

    def finished(self, name: str) -> str:
        result = self.results[name]
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertFalse(os.path.exists(workspace(result.stdout)), "the workspace is removed")
        return result.stdout

    def test_typing_the_gold_fix_scores_what_the_oracle_scores(self):
        """The oracle's commands typed at the prompt score 1.0, with nothing left and nothing broken."""
        stdout = self.finished("gold")
        self.assertEqual(score(stdout), 1.0)
        self.assertIn("working tree: 0 of 2 secrets still recoverable", stdout)
        self.assertIn(
            "history: 0 of 2 secrets still in git's objects; every git object scanned"
            " (history mode all, 2 of 2 secrets count there): history ok",
            stdout,
        )
        self.assertIn("efficiency: 0.105 (3 of 10 steps)", stdout)
        self.assertIn("  - nothing left, nothing broken", stdout)

    def test_looking_around_scores_zero_with_the_graders_reasons(self):
        """ls and an inspect tool, then submit: 0, the secrets named where the grader still finds them."""
        stdout = self.finished("look")
        self.assertEqual(score(stdout), 0.0)
        self.assertIn("score 0.000 = 0: no leak was fixed", stdout)
        self.assertIn("working tree: 2 of 2 secrets still recoverable (s1, s2)", stdout)
        self.assertRegex(stdout, r"(?m)^  - s1 left in the working tree: .*settings/fraud_client\.toml")
        self.assertRegex(stdout, r"(?m)^  - s2 left by the entry points: probe ")

    def test_a_status_line_follows_every_step(self):
        """Step k is followed by its status line: steps used of the budget and the findings announced so far."""
        stdout = self.finished("look")
        self.assertEqual(statuses(stdout), [0, 1, 2])
        self.assertIn(
            "status: step 0 of 20 (20 left, efficiency bonus now 0.150); findings shown 1 (f2), not yet visible 2",
            stdout,
        )
        self.assertIn(
            "status: step 2 of 20 (18 left, efficiency bonus now 0.135); findings shown 2 (f2, f1), not yet visible 1",
            stdout,
        )

    def test_an_inspect_tool_reveals_findings_as_the_interceptor_does(self):
        """inspect_file on a shallow finding's file appends it to the result, as the taskset's interceptor does."""
        stdout = self.finished("look")
        self.assertIn("Newly revealed findings:\n- f1: github_token at settings/fraud_client.toml:2 (shallow)", stdout)

    def test_end_of_input_grades_like_submit(self):
        """A session ended by end of input is graded and reported as one ended by submit."""
        for name, ending in (("gold", "end of input"), ("look", "submit")):
            with self.subTest(ending=ending):
                report = self.finished(name).split(
                    f"\n{ending}: grading the repository as the episode's finalize would\n"
                )[1]
                parts = [line.split(":")[0].strip() for line in report.splitlines()[1:6]]
                self.assertEqual(parts, ["working tree", "history", "health", "efficiency", "reasons"])

    def test_the_step_budget_ends_the_episode(self):
        """After the budget's last call nothing more runs; a typo, an empty line and a command's stdin cost no step."""
        stdout = self.finished("budget")
        self.assertEqual(statuses(stdout), list(range(11)))
        self.assertIn("not a step: no tool 'nope'", stdout)
        self.assertIn("step-10", stdout)
        self.assertNotIn("NEVER-RUN", stdout)
        self.assertIn("the step budget (10 tool calls) is spent: grading the repository", stdout)
        self.assertIn("efficiency: 0.000 (10 of 10 steps)", stdout)

    def test_ctrl_c_ends_without_grading(self):
        """SIGINT during a command: exit 130, one line on stderr, no score, the workspace removed."""
        result, folder = self.results["interrupted"]
        self.assertEqual(result.returncode, 130, result.stderr[-2000:])
        self.assertEqual(
            result.stderr.strip().splitlines(),
            ["redaction-pressure: interrupted: not graded; the workspace was removed"],
        )
        self.assertNotIn("score ", result.stdout)
        self.assertFalse(os.path.exists(folder))


class TestUsage(unittest.TestCase):
    def test_bad_tasks_and_tasksets_are_usage_errors(self):
        """An index outside the split, private_eval or the other taskset: exit 2, one line, nothing played."""
        cases = {
            ("dev", "52"): "dev has tasks 0 to 51; index 52 is outside",
            ("train", "-1"): "index -1 is outside",
            ("private_eval", "0"): "play works train and dev tasks",
        }
        for (split, index), message in cases.items():
            with self.subTest(split=split, index=index):
                result = play(int(index), None, split=split)
                self.assertEqual((result.returncode, result.stdout), (2, ""))
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(message, result.stderr)
        result = subprocess.run([sys.executable, "-m", "redaction_pressure", "play", "dev", "3"], capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, env=environment(), cwd=ROOT, timeout=60)  # fmt: skip
        self.assertEqual(result.returncode, 2)
        self.assertIn("play supports only --taskset secrets-audit for now", result.stderr)

    def test_without_the_audit_extra_one_line_names_it(self):
        """Without dulwich, play exits 2 with the audit extra's one-line message before writing anything."""
        program = ("import sys; sys.modules['dulwich'] = None; from redaction_pressure.cli import main; "
                   "sys.exit(main(['play', '--taskset', 'secrets-audit', 'dev', '3']))")  # fmt: skip
        result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                env=environment(), cwd=ROOT, timeout=60)  # fmt: skip
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("needs the 'audit' extra (dulwich is missing)", result.stderr)
        self.assertEqual(result.stdout, "")


if __name__ == "__main__":
    unittest.main()
