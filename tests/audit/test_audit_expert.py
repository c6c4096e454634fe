"""secrets-audit's expert level: its own splits, large repositories whose secrets sit in several forms,
decoys the tests do not name, a stated output cap every harness enforces, and a gold fix at 1.0.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import gzip
import json
import re
import unittest
from collections import Counter
from types import SimpleNamespace

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.plan import plan_from_json, plan_to_json
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import EXPERT_SCENARIOS, SCENARIOS
from redaction_pressure.audit.toolcalls import clip
from tests.support.cases import TEST_SECRET, private_secret

EXPERT = splits.EXPERT
DEV = [splits.plan_for("dev", i, difficulty=EXPERT) for i in range(splits.EXPERT_DEV_SIZE)]


class TestExpertSplits(unittest.TestCase):
    def test_expert_has_its_own_tasks_seeds_and_commitments(self):
        """Expert dev is 24 tasks of the expert scenarios with seeds and commitments no standard task has."""
        self.assertEqual(splits.dev_size(EXPERT), 24)
        self.assertEqual({p.scenario for p in DEV}, {s.name for s in EXPERT_SCENARIOS})
        self.assertEqual({p.difficulty for p in DEV}, {"expert"})
        standard = {splits.seed_for(s, i) for s in ("dev", "train") for i in range(splits.DEV_SIZE)}
        expert = {splits.seed_for(s, i, EXPERT) for s in ("dev", "train") for i in range(splits.EXPERT_DEV_SIZE)}
        self.assertFalse(standard & expert)
        for split in ("dev", "train"):
            self.assertNotEqual(splits.commitment(split), splits.commitment(split, EXPERT))
        with private_secret(TEST_SECRET):
            self.assertNotEqual(splits.seed_for("private_eval", 0), splits.seed_for("private_eval", 0, EXPERT))
            self.assertEqual(
                splits.commitment("private_eval", EXPERT), shared_splits.commitment("private_eval", EXPERT)
            )
        with self.assertRaisesRegex(shared_splits.SplitError, "dev has tasks 0 to 23 at level expert"):
            splits.check_index("dev", 24, EXPERT)
        with self.assertRaisesRegex(shared_splits.SplitError, "levels standard and expert"):
            splits.plan_for("dev", 0, difficulty="hard")

    def test_the_standard_level_has_no_expert_task(self):
        """No difficulty named: today's curriculum, easy to hard, exactly as before."""
        self.assertEqual({splits.plan_for("dev", i).difficulty for i in range(13)}, {"easy", "medium", "hard"})
        self.assertFalse({s.name for s in SCENARIOS} & {s.name for s in EXPERT_SCENARIOS})


class TestExpertRepositories(unittest.TestCase):
    def test_plans_are_deterministic_and_differ_by_seed(self):
        again = splits.plan_for("dev", 5, difficulty=EXPERT)
        self.assertEqual(plan_to_json(again), plan_to_json(DEV[5]))
        self.assertEqual(plan_to_json(plan_from_json(plan_to_json(again))), plan_to_json(again))
        self.assertEqual(len({s.value for p in DEV for s in p.secrets}), sum(len(p.secrets) for p in DEV))

    def test_a_repository_is_larger_than_a_few_tool_results(self):
        """60 to 200 files, many times what one capped result shows, 40 steps to work them."""
        for plan in DEV:
            with self.subTest(seed=plan.seed):
                tree = plan.tree()
                self.assertTrue(60 <= len(tree) <= 200, len(tree))
                self.assertGreater(sum(len(t) for t in tree.values()), 3 * plan.output_cap)
                self.assertEqual(plan.budget, 40)
                self.assertGreaterEqual(len(plan.secrets), 4)

    def test_secrets_sit_in_several_forms_and_places(self):
        """The database password is found in three files or more on most tasks, in other forms than its value."""
        spread = [Counter(f.secret for f in plan.findings).most_common(1)[0][1] for plan in DEV]
        self.assertGreaterEqual(sum(n >= 3 for n in spread), len(DEV) // 2)
        forms = 0
        for plan in DEV:
            tree = plan.tree()
            for secret in plan.secrets:
                forms += any(a in text and secret.value not in text for a in secret.also for text in tree.values())
        self.assertGreaterEqual(forms, len(DEV))

    def test_the_tests_name_no_decoy_and_the_decoys_need_meaning(self):
        """No decoy value is in a test file (they are told by what they are), and every repository has
        decoys of several meanings beside its secrets."""
        for plan in DEV:
            with self.subTest(seed=plan.seed):
                tests = "".join(text for _, text in plan.tests)
                self.assertFalse([d.kind for d in plan.decoys if d.value in tests])
                self.assertTrue({"public_key", "example_key", "hash_digest"} <= {d.kind for d in plan.decoys})

    def test_prompts_state_the_cap_are_unique_and_hold_no_secret(self):
        texts = [prompt(plan) for plan in DEV]
        self.assertEqual(len({t.user for t in texts}), len(DEV))
        for plan, text in zip(DEV, texts, strict=True):
            self.assertIn("at most 8,000 characters", text.system)
            self.assertIn("Difficulty: expert; step budget: 40", text.user)
            for secret in plan.secrets:
                for form in (secret.value, *secret.also):
                    self.assertNotIn(form, text.user + text.system)
        self.assertNotIn("8,000", prompt(splits.plan_for("dev", 0)).system)

    def test_inaction_scores_zero_and_the_gold_fix_one(self):
        """Each repository starts healthy and leaky; the gold fix leaves it healthy and clean."""
        for split, index in (("dev", 0), ("train", 3)):
            plan = splits.plan_for(split, index, difficulty=EXPERT)
            with self.subTest(split=split, index=index), LocalWorkspace(plan) as ws:
                before = ws.facts()
                self.assertEqual(before["tests"]["passed"], before["tests"]["total"])
                self.assertEqual(set(before["left"]), {s.id for s in plan.secrets})
                self.assertEqual(score_facts(before, plan.budget).total, 0.0)
                self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                after = ws.facts(1)
                self.assertEqual(score_facts(after, plan.budget).total, 1.0, (after["left"], after["probes"]))


def _first(predicate) -> object:
    return next(plan for plan in DEV if predicate(plan))


def _changed_by_gold(plan, marker: str) -> str | None:
    """The file whose text holds `marker` before the gold fix and not after it."""
    fix = dict(plan.fix)
    return next(
        (path for path, t in plan.tree().items() if marker in t and marker not in (fix.get(path, t) or "")), None
    )


STEPS = 20
"""Steps a played fix is scored at: what capable agents spent here (11-33 of 40). At one step the
efficiency bonus (0.146) would cover one secret missed in eight (SPEC's total: capped at 1)."""


def _played(plan, script: str) -> float:
    with LocalWorkspace(plan) as ws:
        done = ws.bash(script)
        assert done.returncode == 0, done.stderr[-500:]
        return score_facts(ws.facts(STEPS), plan.budget)


class TestExpertPitfalls(unittest.TestCase):
    """What real remediation needs here, each shown by a fix that misses only it (below gold)."""

    def test_a_token_in_an_annotated_tags_message_needs_a_message_rewrite(self):
        plan = _first(lambda p: p.tags)
        gold = programs.oracle_script(plan)
        self.assertIn("--replace-message", gold)
        result = _played(plan, gold.replace(" --replace-message ../.audit-replacements", ""))
        self.assertLess(result.detection, 1.0)
        self.assertLess(result.total, 1.0)

    def test_a_password_only_inside_a_connection_string_must_be_encoded_again(self):
        plan = _first(lambda p: "DATABASE_URL = f" in "".join(p.tree().values()))
        gold = programs.oracle_script(plan)
        sloppy = gold + (
            "sed -i \"s/{quote(os.environ.get('\\([A-Z_]*\\)', ''), safe='')}/{os.environ.get('\\1', '')}/\" "
            "$(grep -rl 'DATABASE_URL = f' services) && git commit -qam unquoted\n"
        )
        result = _played(plan, sloppy)
        self.assertEqual(result.detection, 1.0)
        self.assertLess(result.health, 1.0)

    def test_a_certificate_bundle_keeps_its_certificate(self):
        plan = _first(lambda p: any(path.endswith(".pem") for path in p.tree()))
        bundle = next(path for path in plan.tree() if path.endswith(".pem"))
        result = _played(plan, programs.oracle_script(plan) + f"git rm -q {bundle} && git commit -qm gone\n")
        self.assertEqual(result.detection, 1.0)
        self.assertLess(result.health, 1.0)

    def test_a_rotated_password_that_only_history_holds_must_go_too(self):
        """The first version of the settings held an older database password: a rewrite that removes
        only the values the working tree shows leaves it in history."""
        plan = DEV[0]
        rotated = next(s for s in plan.secrets if s.env.endswith("_OLD_DB_PASSWORD"))
        self.assertFalse([t for t in plan.tree().values() if rotated.value in t])
        self.assertTrue(
            [t for c in plan.commits for _, t in c.files for v in (rotated.value, *rotated.also) if t and v in t]
        )
        sloppy = programs.oracle_script(
            dataclasses.replace(plan, secrets=tuple(s for s in plan.secrets if s != rotated))
        )
        result = _played(plan, sloppy)
        self.assertLess(result.detection, 1.0)
        self.assertEqual(result.health, 1.0)

    def test_partner_keys_are_told_apart_by_their_use(self):
        """Four `<PARTNER>_KEY`s of one shape: reading the public ones (a page tag's site id, a widget
        folder, a UUID namespace) from the environment too breaks what they do."""
        plan = DEV[0]
        path = next(d.path for d in plan.decoys if d.kind == "identifier" and "/app/" in d.path)
        public = [d.value for d in plan.decoys if d.path == path]
        self.assertTrue(public)
        edits = "".join(
            f'sed -i \'s/^\\([A-Z]*_KEY\\) = "{value}"$/\\1 = os.environ.get("X_\\1", "")/\' {path}\n'
            for value in public
        )
        result = _played(
            plan, programs.oracle_script(plan) + edits + "git commit -qam 'every key from the environment'\n"
        )
        self.assertEqual(result.detection, 1.0)
        self.assertLess(result.health, 1.0)

    def test_a_stash_and_a_note_hold_secrets_no_branch_holds(self):
        """A forgotten stash holds a broker password and a deploy note a token: in the repository the
        agent gets (`git stash list`, `git notes list`), cleaned by gold's rewrite of every ref, left by a
        rewrite of only the values the branches show."""
        plan = _first(lambda p: p.stashes and p.notes)
        committed = [t for c in plan.commits for _, t in c.files if t]
        beyond = [s for s in plan.secrets if not [t for t in committed for v in (s.value, *s.also) if v in t]]
        self.assertEqual({s.env.rsplit("_", 1)[-1] for s in beyond} & {"PASSWORD", "TOKEN"}, {"PASSWORD", "TOKEN"})
        with LocalWorkspace(plan) as ws:
            self.assertIn("stash@{0}", ws.bash("cd repo && git stash list").stdout)
            shown = ws.bash(
                "cd repo && git stash show -p && git notes list | while read n c; do git notes show $c; done"
            ).stdout
            self.assertEqual([s.id for s in beyond if s.value not in shown], [])
            # A stash is a merge commit: `git log --all -p` shows no patch of it (git stash show does).
            self.assertEqual(
                [s.env for s in beyond if s.value in ws.bash("cd repo && git log --all -p").stdout], ["DEPLOY_TOKEN"]
            )
        sloppy = programs.oracle_script(
            dataclasses.replace(plan, secrets=tuple(s for s in plan.secrets if s not in beyond))
        )
        result = _played(plan, sloppy)
        self.assertLess(result.detection, 1.0)
        self.assertEqual(result.health, 1.0)

    def test_a_secret_kept_base64_or_in_joined_literals_still_leaks(self):
        """The receiving service may keep the shared secret base64-encoded, the web client may write its
        service-role key as joined literals: a fix that leaves either form in place leaves the secret."""
        for marker in ("base64.b64decode(", '." +\n'):
            plan = _first(lambda p, m=marker: _changed_by_gold(p, m))
            path = _changed_by_gold(plan, marker)
            payload = base64.b64encode(plan.tree()[path].encode()).decode()
            with self.subTest(form=marker, path=path):
                kept = f"printf %s {payload} | base64 -d > {path} && git commit -qam kept\n"
                result = _played(plan, programs.oracle_script(plan) + kept)
                self.assertLess(result.detection, 1.0)

    def test_an_env_file_a_script_sources_must_not_override_the_variable(self):
        """A release job sources an env file of settings that also held a token: emptying the value there
        (`VAR=`) overrides the environment the script should read; deleting the file loses its settings."""
        plan = _first(lambda p: any(path.endswith(".env") for path in dict(p.fix)))
        path, fixed = next((path, t) for path, t in plan.fix if path.endswith(".env"))
        token = next(s for s in plan.secrets if s.env.endswith("_SEARCH_TOKEN"))
        emptied = base64.b64encode((fixed + f"{token.env}=\n").encode()).decode()
        for name, edit in (("emptied", f"printf %s {emptied} | base64 -d > {path}"), ("deleted", f"git rm -q {path}")):
            with self.subTest(fix=name):
                result = _played(plan, programs.oracle_script(plan) + f"{edit} && git commit -qam {name}\n")
                self.assertEqual(result.detection, 1.0)
                self.assertLess(result.health, 1.0)

    def test_a_yaml_value_is_fixed_in_the_files_own_reference_style(self):
        """mail.yaml's loader expands `${NAME}` and the file already reads its host that way: an emptied
        password (`password: ""`) passes the tests but no longer logs in with the configured one."""
        plan = _first(lambda p: any(path.endswith("config/mail.yaml") for path in dict(p.fix)))
        path, fixed = next((path, t) for path, t in plan.fix if path.endswith("config/mail.yaml"))
        self.assertRegex(fixed, r"password: \$\{[A-Z]+_SMTP_PASSWORD\}")
        emptied = base64.b64encode(re.sub(r"password: .*", 'password: ""', fixed).encode()).decode()
        result = _played(
            plan,
            programs.oracle_script(plan) + f"printf %s {emptied} | base64 -d > {path} && git commit -qam emptied\n",
        )
        self.assertEqual(result.detection, 1.0)
        self.assertLess(result.health, 1.0)

    def test_a_release_record_regenerated_without_the_password_is_clean(self):
        """The prompt allows regenerating an encoded record without its secret: what the new record
        shares with the old (the gzip header, the record's public opening) is not a leak."""
        plan = _first(lambda p: any("sh.helm.release" in path for path in p.tree()))
        path, text = next((path, t) for path, t in plan.tree().items() if "sh.helm.release" in path)
        old = re.search(r"release: (\S+)", text).group(1)
        record = json.loads(gzip.decompress(base64.b64decode(base64.b64decode(old))))
        database = record["config"]["database"]
        for regenerated in ({**database, "password": ""}, {k: v for k, v in database.items() if k != "password"}):
            record["config"]["database"] = regenerated
            record["manifest"] = re.sub(r"(DB_PASSWORD: )\S+", r'\1""', record["manifest"])
            new = base64.b64encode(base64.b64encode(gzip.compress(json.dumps(record).encode(), mtime=0))).decode()
            self.assertEqual(new[:16], old[:16])  # the shared structure is there to be mistaken for the secret
            payload = base64.b64encode(text.replace(old, new).encode()).decode()
            script = programs.oracle_script(plan) + (
                f"printf %s {payload} | base64 -d > {path} && git add -f {path} && git commit -qm regenerated\n"
            )
            with self.subTest(kept=sorted(regenerated)):
                result = _played(plan, script)
                self.assertEqual((result.detection, result.health), (1.0, 1.0))


class TestOutputCap(unittest.TestCase):
    """The stated cap holds in every harness: the audit tools, the taskset's interceptor, `play`."""

    @classmethod
    def setUpClass(cls):
        cls.plan = DEV[0]
        cls.ws = LocalWorkspace(cls.plan)
        cls.big = max(cls.plan.tree().items(), key=lambda item: len(item[1]))[0]

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def test_clip_marks_the_cut(self):
        self.assertEqual(clip("abc", 5), "abc")
        cut = clip("x" * 9000, 8000)
        self.assertTrue(cut.startswith("x" * 8000))
        self.assertIn("1000 more characters cut: a tool result shows at most 8000", cut)

    def test_audit_tools_show_at_most_the_cap_and_still_reveal(self):
        tools = self.ws.tools()
        text = asyncio.run(tools.call("inspect_git_history", {"path": "services"}, 1))
        body, rest = text.split("\n[... ", 1)
        self.assertEqual(len(body), self.plan.output_cap)
        self.assertIn("more characters cut: a tool result shows at most 8000", rest)
        # What a call reveals is listed after its cut text, never cut away.
        text = asyncio.run(tools.call("inspect_git_history", {}, 2))
        deep = [f.id for f in self.plan.findings if f.tier == "deep"]
        self.assertTrue(deep)
        revealed = rest.split("Newly revealed findings:", 1)[-1] + text.split("Newly revealed findings:", 1)[1]
        self.assertTrue(all(f"- {i}: " in revealed for i in deep))  # by the first call or the second

    def test_the_interceptor_clips_bash_results_and_leaves_the_gates_look(self):
        import verifiers.v1 as vf

        from redaction_pressure.audit.taskset import LiveEpisode, SecretsAuditConfig, SecretsAuditTaskset

        task = next(iter(SecretsAuditTaskset(SecretsAuditConfig(split="dev", difficulty="expert", size=1)).load()))
        task._live = {"t": LiveEpisode(self.ws.tools(), True)}

        def request(content):
            call = vf.ToolCall(id="c1", name="bash", arguments=json.dumps({"command": "cat big"}))
            return vf.Request(messages=[vf.UserMessage(content="audit"), vf.AssistantMessage(content="", tool_calls=[call]),
                                        vf.ToolMessage(tool_call_id="c1", name="bash", content=content)])  # fmt: skip

        trace = SimpleNamespace(id="t")
        self.assertIsNone(asyncio.run(task.audit_calls(request(""), trace)))
        self.assertIsNone(asyncio.run(task.audit_calls(request("short"), trace)))
        clipped = asyncio.run(task.audit_calls(request("y" * 30_000), trace))
        self.assertEqual(clipped.messages[-1].content, clip("y" * 30_000, 8000))
        standard = next(iter(SecretsAuditTaskset(SecretsAuditConfig(split="dev", size=1)).load()))
        standard._live = task._live
        self.assertIsNone(asyncio.run(standard.audit_calls(request("y" * 30_000), trace)))

    def test_play_clips_what_bash_prints(self):
        from redaction_pressure.cli.play import Session

        session = Session(self.plan, self.ws)
        shown = session.call("bash", {"command": f"git -C {self.ws.repo} log -p"})
        self.assertIn("more characters cut: a tool result shows at most 8000", shown)


class TestExpertTaskset(unittest.TestCase):
    def test_the_taskset_loads_expert_tasks_that_rebuild(self):
        from redaction_pressure.audit.taskset import SecretsAuditConfig, SecretsAuditTaskset

        tasks = list(SecretsAuditTaskset(SecretsAuditConfig(split="dev", difficulty="expert")).load())
        self.assertEqual(len(tasks), 24)
        self.assertEqual(tasks[3].data.id, "audit-expert-dev-00003")
        self.assertEqual((tasks[3].data.difficulty, tasks[3].data.budget), ("expert", 40))
        self.assertEqual(tasks[3].plan.seed, splits.seed_for("dev", 3, EXPERT))
        self.assertEqual(tasks[3].data.environment["split_commitment"], splits.commitment("dev", EXPERT))
        with self.assertRaisesRegex(ValueError, "dev has 24 expert tasks"):
            SecretsAuditConfig(split="dev", difficulty="expert", size=25)


if __name__ == "__main__":
    unittest.main()
