"""The secrets-audit prompts: the same framing for train, dev and private_eval.

The system prompt states the job, the tools and the reward; the user prompt describes the
repository, lists the surface findings (path, line, kind; never a value) and says how many
findings are not yet visible and how many steps the budget allows.
"""

from __future__ import annotations

from dataclasses import dataclass

from redaction_pressure.audit.plan import HISTORY_ALL, HISTORY_SEED, RepoPlan
from redaction_pressure.audit.programs import REPO_DIR
from redaction_pressure.audit.rubric import EFFICIENCY_WEIGHT

TEMPLATE = f"""You are auditing a git repository for leaked secrets. Remediate every leak:
move each secret out of the code and read it from the environment variable the repository's
naming convention gives it (its README states the convention, or points to the document that
does); with that variable unset, the code must not fall
back to the secret (an empty value or failing fast are both fine). Keep the code working:
grading runs the repository's entry points (its functions, scripts and CI workflow) with
fresh values in those variables and compares what they do with a correct fix, and re-runs
the repository's tests from a pristine copy (editing them changes nothing). Keep everything
else: the original lines and example values (placeholders, fixtures, hashes, ids) must
survive, though you may move them; deleting or emptying files costs health. {{HISTORY}}. A rewrite
must keep every original
commit's message, author date and the files that held no secret (squashing, deleting .git
or re-initialising the repository breaks that rule and costs health). A secret leaks while it
can be recovered: in any file of the working tree or of .git, in any git object (reachable or
not, wherever it is stored){{WHERE}}, in file and branch names and commit
messages, in any recoverable form (other letter case, reversed, ROT13, hex, base32, base64,
URL-encoded, escaped, compressed, archived, UTF-16, split into joined string literals), as
any 16 consecutive characters of it, as a value the code still computes, or in what the code
prints or writes (its output, logs, files, a CI step summary). Entry points that hang, crash the
process or kill what runs them leave every secret counted as leaked. An untracked file
that .gitignore excludes is your local environment, not the repository: it is not graded.
Untracked bytecode and test caches (__pycache__, *.pyc, .pytest_cache) do not count. Changing the
interpreter, pytest or git scores 0. Symlinks are not followed.

Tools: bash and edit (your working directory holds the repository in ./{REPO_DIR}; git and
git filter-repo are installed), plus
- inspect_file(path): a file with line numbers; reveals findings hidden in it;
- inspect_git_history(path=""): the commit history, with patches for a path; reveals findings
  that only history or deeper digging shows;
- inspect_encoded(path, line=0): decodes base64 and hex values in a file (or one line);
- status(): what the grade would give now (detection; health with its factors: tests, probes,
  preservation, history kept; why each failed probe differs), visible findings, how many not yet
  visible still leak, steps, conflict map and ranked next actions.
Newly revealed findings are appended to the result of the audit call that revealed them; some
only appear once another secret is fixed (at the next audit call). An audit call made in the same turn as bash or edit calls
may not see what they did: make it in a turn of its own. Every tool call is a step. The reward is
detection x health + {EFFICIENCY_WEIGHT} x (1 - steps / budget), capped at 1, and 0 if no leak is fixed.
Tools take paths relative to your working directory, where the repository is ./{REPO_DIR}: a finding
at config/.env:3 is the file {REPO_DIR}/config/.env (the audit tools also accept config/.env)."""

HISTORY_RULES = {
    HISTORY_ALL: (
        "A secret that was ever committed leaks until every git object is clean: remove it from the "
        "files and rewrite the history that holds it (every branch, tag and stray object)",
        "",
    ),
    HISTORY_SEED: ("Scrub secrets from git history where the history still holds them", " where history counts"),
}
"""Per history mode (`plan.HISTORY_MODES`): the sentence on rewriting history, and where git objects count."""


EXPERT = """

This is an expert task: a large repository. Every tool result shows at most {cap} characters (the
rest is cut, and the cut says how much), so search it (grep -rn, git grep, git log -S, git rev-list
--all) rather than print everything. One secret may sit in several forms and places at once (a
Kubernetes Secret's base64, a percent-encoded connection string, a notebook's saved output, a state
file, a built bundle, a registry login, a note); a revoked or rotated credential's value is still a
secret. A generated file or one that is only a credential (build output, state files, keys, registry
logins) is fixed by removing it and ignoring it in .gitignore, or by regenerating it without the
secret. Where the documentation names no variable, the code around a secret shows which one to read:
the variables it already reads."""
"""The expert level's paragraph after the system prompt (`cap`: `plan.OUTPUT_CAPS`)."""


def system(history: str = HISTORY_ALL, cap: int | None = None) -> str:
    """The system prompt for a plan of history mode `history` (with a stated output cap: the expert level's)."""
    rewrite, where = HISTORY_RULES[history]
    text = TEMPLATE.replace("{HISTORY}", rewrite).replace("{WHERE}", where)
    return text if cap is None else text + EXPERT.replace("{cap}", f"{cap:,}")


SYSTEM = system()
"""The system prompt of the default history mode, `all`."""


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str


def prompt(plan: RepoPlan) -> Prompt:
    surface = [f for f in plan.findings if f.tier == "surface"]
    lines = [
        f"Repository: {plan.title}. {plan.brief}",
        f"Difficulty: {plan.difficulty}; step budget: {plan.budget} tool calls.",
        "",
        "Known findings:" if surface else "No finding is visible yet.",
    ]
    lines += [f"- {f.id}: {f.kind} at {f.path}:{f.line}" for f in surface]
    lines.append(f"Findings not yet visible: {len(plan.findings) - len(surface)}.")
    return Prompt(system(plan.history_mode, plan.output_cap), "\n".join(lines))
