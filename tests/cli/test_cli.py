"""The command-line tool, run as a user runs it (the installed script and `python -m`): help and exit
codes, bad input, the help's examples, the version and busy ports (each subcommand's own tests
are `test_cli_commands`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tests.support.cases import PRIVATE_ENV
from tests.support.cli import ROOT, run


class TestHelpAndExitCodes(unittest.TestCase):
    def test_every_command_has_help(self):
        """--help works on the tool and each command, through both entry points."""
        for module in (True, False):
            for command in ([], ["show"], ["score"], ["baselines"], ["export"]):
                with self.subTest(module=module, command=command):
                    result = run(*command, "--help", module=module)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertIn("usage: redaction-pressure", result.stdout)

    def test_usage_errors_exit_2_on_stderr(self):
        """Bad options, an index outside the split and train without --size are usage errors."""
        for args in (["score"], ["show", "dev", "64"], ["show", "nope", "0"], ["baselines", "--split", "train"],
                     ["baselines", "--policy", "magic"], ["score", "x.json", "--split", "dev", "--bogus"]):  # fmt: skip
            with self.subTest(args=args):
                result = run(*args)
                self.assertEqual(result.returncode, 2)
                self.assertEqual(result.stdout, "")
                self.assertIn("error:", result.stderr)

    def test_runtime_failures_exit_1_naming_the_problem(self):
        """A missing file or a missing private secret fails with exit 1 and a named cause."""
        missing = run("score", "does-not-exist.json", "--split", "dev", "--index", "0")
        self.assertEqual((missing.returncode, missing.stdout), (1, ""))
        self.assertIn("does-not-exist.json", missing.stderr)
        private = run("show", "private_eval", "0")
        self.assertEqual(private.returncode, 1)
        self.assertIn(PRIVATE_ENV, private.stderr)


class TestBadInput(unittest.TestCase):
    """Inputs at the edges get a clear error or the score a model reply would get, never a traceback."""

    def score_file(self, data: bytes, *extra: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "reply"
            path.write_bytes(data)
            return run("score", str(path), "--split", "dev", "--index", "0", "--json", *extra)

    def assertClean(self, result: subprocess.CompletedProcess) -> None:
        self.assertNotIn("Traceback", result.stderr)
        self.assertNotIn("Traceback", result.stdout)

    def test_binary_and_invalid_utf8_files_are_named(self):
        """A binary or non-UTF-8 file: exit 1, an error that names the file and the bad byte."""
        for name, data in (("binary", bytes(range(256)) * 4), ("latin-1", "passwörd".encode("latin-1"))):
            with self.subTest(name):
                result = self.score_file(data)
                self.assertClean(result)
                self.assertEqual(result.returncode, 1)
                self.assertRegex(result.stderr, r"reply is not UTF-8 text \(byte 0x[0-9a-f]{2} at offset \d+")

    def test_invalid_utf8_on_stdin_is_named(self):
        """Standard input that is not UTF-8 is refused by name too."""
        environment = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        result = subprocess.run(
            [sys.executable, "-m", "redaction_pressure", "score", "-", "--split", "dev", "--index", "0"],
            input=b'{"rules": []}\xff\xfe', capture_output=True, env=environment, cwd=ROOT, timeout=300,
        )  # fmt: skip
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"standard input is not UTF-8 text", result.stderr)
        self.assertNotIn(b"Traceback", result.stderr)

    def test_a_folder_is_not_a_reply(self):
        with tempfile.TemporaryDirectory() as folder:
            result = run("score", folder, "--split", "dev", "--index", "0")
        self.assertEqual(result.returncode, 1)
        self.assertIn("is a folder, not a reply file", result.stderr)

    def test_a_100_mb_file_scores_as_a_too_long_reply(self):
        """A 100 MB reply is malformed_json (over the reply limit), scored promptly like any reply."""
        result = self.score_file(b'{"rules": []}' + b"x" * (100 * 1024 * 1024))
        self.assertClean(result)
        self.assertEqual(result.returncode, 0, result.stderr)
        (task,) = json.loads(result.stdout)["tasks"]
        self.assertEqual((task["reward"], task["errors"][0]["code"]), (0.0, "malformed_json"))
        self.assertIn("104857613 characters", task["errors"][0]["detail"])

    def test_valid_json_64_levels_deep_is_a_bad_entry(self):
        """Valid JSON nested 64 levels deep is scored: its entry is not a rule object."""
        result = self.score_file(('{"rules": ' + "[" * 64 + "]" * 64 + "}").encode())
        self.assertClean(result)
        (task,) = json.loads(result.stdout)["tasks"]
        self.assertEqual((task["reward"], task["errors"][0]["code"]), (0.0, "bad_entry"))

    def test_unusual_private_secrets(self):
        """Unicode, spaces, exactly 32 characters, or bytes that are not UTF-8: all work, none is echoed."""
        secrets = {
            "unicode": "ключ-🔑-секрет-ключ-🔑-секрет-ключ-🔑",
            "spaces": "a secret with spaces in it, 32+ ",
            "exactly 32": "x" * 32,
        }
        commitments = set()
        for name, secret in secrets.items():
            with self.subTest(name):
                self.assertGreaterEqual(len(secret), 32)
                result = run("show", "private_eval", "0", "--json", env={PRIVATE_ENV: secret})
                self.assertClean(result)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertNotIn(secret, result.stdout + result.stderr)
                commitments.add(json.loads(result.stdout)["identity"]["split_commitment"])
        self.assertEqual(len(commitments), len(secrets))
        short = run("show", "private_eval", "0", env={PRIVATE_ENV: "y" * 31})
        self.assertEqual(short.returncode, 1)
        self.assertIn("has 31 characters", short.stderr)
        # Not UTF-8: the environment is bytes; the secret is used as those bytes.
        environment = {k.encode(): v.encode() for k, v in os.environ.items() if k != PRIVATE_ENV}
        environment[PRIVATE_ENV.encode()] = b"\xff\xfe not utf-8 at all \xc3\x28 padding padding"
        result = subprocess.run(
            [sys.executable, "-m", "redaction_pressure", "show", "private_eval", "0", "--json"],
            capture_output=True, env=environment, cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn(b"not utf-8 at all", result.stdout + result.stderr)


class TestHelpExamples(unittest.TestCase):
    def test_every_command_ends_its_help_with_examples_that_parse(self):
        """Each command's --help ends with an examples block, and every example is a valid command line for its parser."""
        import shlex

        from redaction_pressure import cli

        parser = cli._parser()
        commands = parser._subparsers._group_actions[0].choices
        self.assertEqual(set(commands), set(cli.EXAMPLES))
        for name, sub in commands.items():
            with self.subTest(command=name):
                text = sub.format_help()
                block = text[text.rindex("examples:") :].splitlines()
                self.assertEqual(block[1:], [f"  redaction-pressure {line}" for line in cli.EXAMPLES[name]])
                for line in cli.EXAMPLES[name]:
                    parsed = parser.parse_args(shlex.split(line))
                    self.assertEqual(parsed.command, name)


class TestVersionAndBusyPorts(unittest.TestCase):
    def test_version(self):
        """`--version` prints the program and its installed version."""
        from importlib.metadata import version

        result = run("--version", module=False)
        self.assertEqual(result.returncode, 0)
        self.assertEqual(result.stdout.strip(), f"redaction-pressure {version('redaction-pressure-core')}")

    def test_a_busy_port_is_named_in_one_line(self):
        """serve and serve-env on a port something listens on: exit 1, one line naming the port, no traceback."""
        import socket

        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = str(busy.getsockname()[1])
            for command in (["serve", "--policy", "prefix"], ["serve-env"]):
                with self.subTest(command=command[0]):
                    result = run(*command, "--port", port, module=False)
                    self.assertEqual(result.returncode, 1)
                    self.assertEqual(result.stderr.strip().splitlines(), [
                        f"redaction-pressure: error: port {port} on 127.0.0.1 is already in use; "
                        "choose another with --port (0 picks a free one)"
                    ])  # fmt: skip

    def test_record_counts_out_of_range_are_usage_errors(self):
        """--shown 0, --shown x and --hidden 999 exit 2 naming the argument and its range, before any task is built."""
        cases = {("--shown", "0"): "argument --shown: must be 1 to 64 records (got 0)",
                 ("--shown", "x"): "argument --shown: must be a whole number of records (got 'x')",
                 ("--hidden", "999"): "argument --hidden: must be 1 to 256 records (got 999)"}  # fmt: skip
        for (flag, value), message in cases.items():
            with self.subTest(flag=flag, value=value):
                result = run("show", "dev", "0", flag, value, module=False)
                self.assertEqual(result.returncode, 2)
                self.assertIn(message, result.stderr)
                self.assertNotIn("Traceback", result.stderr)

    def test_a_missing_extra_is_named_in_one_line(self):
        """Without `datasets`, export exits 2 naming the export extra before building anything; without `dulwich`, the audit's import names the audit extra."""
        program = ("import sys; sys.modules['datasets'] = None; from redaction_pressure.cli import main; "
                   "sys.exit(main(['export', 'dev', '--size', '2', '--out', sys.argv[1]]))")  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            result = subprocess.run([sys.executable, "-c", program, str(Path(folder) / "out")], capture_output=True, text=True,
                                    stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
            self.assertFalse((Path(folder) / "out").exists())
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.strip().splitlines(), [
            "redaction-pressure: error: export needs the 'export' extra (datasets is missing): "
            "pip install 'redaction-pressure[export]' or uv sync --extra export"])  # fmt: skip
        program = "import sys; sys.modules['dulwich'] = None; import redaction_pressure.audit.repodata"
        result = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120
        )
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("ImportError: secrets-audit needs the 'audit' extra (dulwich is missing)", result.stderr)

    def test_a_host_that_is_not_an_address_is_a_usage_error(self):
        """serve-env --host with a name or a malformed address: exit 2, naming the value, nothing served."""
        for value in ("envhost", "300.1.1.1", "::1"):
            with self.subTest(host=value):
                result = run("serve-env", "--host", value, module=False)
                self.assertEqual(result.returncode, 2)
                self.assertIn(f"must be an IPv4 address such as 127.0.0.1 or 0.0.0.0 (got {value!r})", result.stderr)
                self.assertNotIn("Traceback", result.stderr)
