"""A memorising secrets-audit baseline: one script per scenario, learned from train tasks, replayed.

Why: a scenario that a memorised script solves measures recall, not auditing. This adversary
reads everything a train task holds (tree, gold fix, secret values) and learns, per scenario,
what the gold fix does with the seed-specific parts abstracted away:

- which scenario a prompt belongs to: the words of its train prompts (title, brief, findings),
  nearest by weighted overlap;
- every edit the fix makes to a file, as a regex over the original text (the lines around the
  edit; secret values replaced by a pattern of their shape across seeds, other words that vary
  across seeds by a pattern of theirs) and a template of the fixed text (literal text and the
  varying words captured from the match). Edits alike across seeds and files (same secrets, same
  fixed text, same file name) share one rule, whose path pattern generalises the folders;
- the files it deletes, the files it adds (as edits of the most similar existing file, e.g.
  `.env` -> `.env.example`, or verbatim), and whether it rewrites history, with the patterns
  (the value's context and shape) whose matches in any blob it feeds to `git filter-repo
  --replace-text`, as `programs.oracle_script` does with the true values.

On an unseen task it sees only the prompt and the workspace (`act`): one bash call dumps every
tracked file, one applies the script (files written from base64 payloads, a commit, then the
history scan in the workspace's own python3 and the rewrite). A rule that matches nothing in
the files of its learned paths is tried on every file. While a scenario is one repository with
re-rolled values this comes close to the oracle; on a procedural generator it should not.

The memoriser lives in three modules: `patterns` (token sequences folded into regexes and
templates), `learning` (what the gold fix does, learned per scenario) and `acting` (the
script replayed on an unseen task). This package keeps the names its callers import.
"""

from redaction_pressure.audit.memoriser.acting import DUMP, act, play
from redaction_pressure.audit.memoriser.learning import MODEL_VERSION, TRAIN_TASKS, learn, learn_scenario, trained

__all__ = ["DUMP", "MODEL_VERSION", "TRAIN_TASKS", "act", "learn", "learn_scenario", "play", "trained"]
