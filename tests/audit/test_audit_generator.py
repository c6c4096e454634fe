"""The procedural secrets-audit repositories: deterministic, varied, well-formed, fair.

Static checks over the plans of 260 train tasks (20 seeds per scenario) and the 52 dev tasks:
nothing here runs an episode (`test_audit_grading` plays the gold fix and inaction on every dev
task; `test_audit_agent` plays the baselines).
"""

from __future__ import annotations

import ast
import configparser
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import unittest

import yaml

from redaction_pressure.audit import diversity, splits
from redaction_pressure.audit.plan import plan_to_json
from redaction_pressure.audit.scenarios import SCENARIOS

TRAIN = [splits.plan_for("train", i) for i in range(20 * len(SCENARIOS))]
DEV = [splits.plan_for("dev", i) for i in range(splits.DEV_SIZE)]
PREFIX = re.compile(r"named `([A-Z][A-Z0-9_]*_)` followed by")


def digest_in_subprocess(hash_seed: str) -> str:
    program = (
        "import hashlib, json\n"
        "from redaction_pressure.audit import splits\n"
        "from redaction_pressure.audit.plan import plan_to_json\n"
        "h = hashlib.sha256()\n"
        "for i in range(52):\n"
        "    h.update(json.dumps(plan_to_json(splits.plan_for('train', i)), sort_keys=True).encode())\n"
        "print(h.hexdigest())\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    return subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


class TestDeterminism(unittest.TestCase):
    def test_plans_do_not_depend_on_the_hash_seed(self):
        """Two processes with different hash seeds build byte-identical plans (the pristine tests and
        the history check compare the agent's repository with the plan, built anew in the grader)."""
        here = hashlib.sha256()
        for i in range(52):
            here.update(json.dumps(plan_to_json(TRAIN[i]), sort_keys=True).encode())
        self.assertEqual({digest_in_subprocess("1"), digest_in_subprocess("2")}, {here.hexdigest()})


class TestPinned(unittest.TestCase):
    def test_audit_version_4_repositories_are_pinned(self):
        """The plans of train tasks 0-103 hash to the pinned digest: a change to any generated
        repository must bump `AUDIT_VERSION` (traces record it; the shipped ladder names it) and this digest."""
        from redaction_pressure.audit.scenarios import AUDIT_VERSION

        here = hashlib.sha256()
        for i in range(104):
            here.update(json.dumps(plan_to_json(TRAIN[i]), sort_keys=True).encode())
        self.assertEqual(
            (AUDIT_VERSION, here.hexdigest()), ("4", "79ffd2577d14bfc5b1a3efe58ae7a4bd6d3eb8b7d4ab91607fa4d969a1057212")
        )


class TestDiversity(unittest.TestCase):
    def test_twenty_seeds_make_twenty_repositories_and_many_fixes(self):
        """Per scenario over 20 train seeds: >= 15 path sets, >= 15 skeletons, >= 10 gold-fix programs."""
        for name, row in diversity.report(TRAIN).items():
            with self.subTest(scenario=name):
                self.assertEqual(row["tasks"], 20)
                self.assertGreaterEqual(row["paths"], 15)
                self.assertGreaterEqual(row["skeletons"], 15)
                self.assertGreaterEqual(row["fixes"], 10)

    def test_skeletons_abstract_values_and_names_not_structure(self):
        """Two files differing only in names and values (a key, a UUID, a PEM line) share a skeleton; another idiom does not."""
        a = 'API_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"\n# 0879e809-2f3b-42f2-9b49-eeccdc110c2e\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n'
        b = 'TOKEN = "xoxb-1234-5678-abcdefghijkl"\n# 46bf3081-fcdd-4687-9319-da8d6376d632\nMC4CAQAwBQYDK2VwBCIEIPq0rZ9x8y7w\n'
        self.assertEqual(diversity.abstract(a), diversity.abstract(b))
        self.assertNotEqual(
            diversity.abstract(a), diversity.abstract('def settings():\n    return {"api_key": "sk_live_x"}\n')
        )

    def test_levels_grow_by_structure(self):
        """Files, secrets and commits rise with the level; every repository has 4 to 25 files and 1 to 6 secrets."""
        means = {}
        for level in ("easy", "medium", "hard"):
            plans = [p for p in TRAIN if p.difficulty == level]
            means[level] = [
                sum(f(p) for p in plans) / len(plans)
                for f in (lambda p: len(p.tree()), lambda p: len(p.secrets), lambda p: len(p.commits))
            ]
        for i in range(3):
            self.assertLess(means["easy"][i], means["medium"][i])
            self.assertLess(means["medium"][i], means["hard"][i])
        for plan in TRAIN + DEV:
            self.assertTrue(4 <= len(plan.tree()) <= 25, (plan.scenario, plan.seed, len(plan.tree())))
            self.assertTrue(1 <= len(plan.secrets) <= 6, (plan.scenario, plan.seed))

    def test_briefs_do_not_name_one_repository(self):
        """The prompt's title varies with the seed within a scenario (the brief names the curriculum axis)."""
        for scenario in SCENARIOS:
            titles = {p.title for p in TRAIN if p.scenario == scenario.name}
            self.assertGreaterEqual(len(titles), 15, scenario.name)


def parses(path: str, text: str) -> None:
    """Raise unless `text` parses as the format its name says."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        ast.parse(text)
    elif name.endswith(".json"):
        json.loads(text)
    elif name.endswith(".toml"):
        tomllib.loads(text)
    elif name.endswith(".ini"):
        configparser.ConfigParser(interpolation=None).read_string(text)
    elif name.endswith((".yml", ".yaml")):
        yaml.safe_load(text)
    elif name.endswith(".sh"):
        with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
            f.write(text)
            f.flush()
            subprocess.run(["bash", "-n", f.name], check=True, capture_output=True)
    elif name.endswith(".js"):
        if text.count("{") != text.count("}") or "export const" not in text:
            raise ValueError("unbalanced or not a module")


class TestRealism(unittest.TestCase):
    def test_every_file_parses_before_and_after_the_gold_fix(self):
        """Python, JSON, TOML, INI, YAML (workflows, manifests, compose), shell and JS modules all parse."""
        checked = 0
        for plan in DEV + TRAIN[:104]:
            for tree in (plan.tree(), plan.fixed_tree()):
                for path, text in tree.items():
                    with self.subTest(scenario=plan.scenario, seed=plan.seed, path=path):
                        parses(path, text)
                        checked += 1
        self.assertGreater(checked, 3000)

    def test_the_gold_fix_keeps_every_decoy_and_leaves_no_secret(self):
        """Every decoy is in its file before and after the gold fix; no secret is anywhere after it."""
        for plan in DEV + TRAIN:
            fixed = plan.fixed_tree()
            for decoy in plan.decoys:
                self.assertIn(decoy.value, plan.tree()[decoy.path], (plan.scenario, plan.seed, decoy))
                self.assertIn(decoy.value, fixed[decoy.path], (plan.scenario, plan.seed, decoy))
            text = "\n".join(fixed.values())
            for secret in plan.secrets:
                self.assertNotIn(secret.value, text)

    def test_fixed_workflows_read_the_secret_store_by_the_convention(self):
        """The gold workflow reads `${{ secrets.<VAR> }}` (so its rendered steps show the probes' canaries)."""
        checked = 0
        for plan in DEV + TRAIN:
            for probe in plan.probes:
                if probe.kind == "workflow":
                    fixed = plan.fixed_tree()[probe.target]
                    for secret in plan.secrets:
                        if secret.value in plan.tree()[probe.target]:
                            self.assertIn("${{ secrets." + secret.env + " }}", fixed)
                            checked += 1
        self.assertGreater(checked, 10)

    def test_every_variable_follows_the_documented_convention(self):
        """The convention's prefix is written in the README or the document it points to, and every
        secret's variable starts with it; the untouched code reads none of them."""
        for plan in DEV + TRAIN:
            tree = plan.tree()
            docs = [t for p, t in tree.items() if p.endswith(".md") and PREFIX.search(t)]
            with self.subTest(scenario=plan.scenario, seed=plan.seed):
                self.assertEqual(len(docs), 1)
                if "README.md" not in {p for p, t in tree.items() if PREFIX.search(t)}:
                    self.assertRegex(tree["README.md"], r"see `[^`]+\.md`")
                prefix = PREFIX.search(docs[0]).group(1)
                code = "\n".join(t for p, t in tree.items() if not p.endswith(".md"))
                for secret in plan.secrets:
                    self.assertTrue(secret.env.startswith(prefix), (secret.env, prefix))
                    if not secret.history:
                        self.assertNotIn(f'"{secret.env}"', code.replace(".env", ""))


if __name__ == "__main__":
    unittest.main()
