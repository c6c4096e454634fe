"""A scripted, non-LLM secrets-audit agent: scanner patterns, environment lookups, filter-repo.

The agent sees only what a model sees: the first user prompt and the results of its own tool
calls. It never reads the task's plan or secret values. It acts with the `bash` tool alone,
turn by turn:

1. *discover*: one command dumps every working-tree file, the tracked-file list and the whole
   history (`git log --all --reflog -p`) between markers;
2. *fix*: from that dump it finds candidates with scanner-style rules (known key formats, PEM
   blocks, credentials in URLs and SQL, keyword assignments, high-entropy strings, base64
   tokens that decode to `user:password`), skips look-alikes (examples, fixtures, placeholders,
   hashes, UUIDs), and writes each affected file back with the secret replaced by an
   environment lookup for the file's language (`os.environ.get("NAME", "")` in Python,
   `"${NAME}"` in shell, `${{ secrets.NAME }}` in workflows, `process.env.NAME` in
   JavaScript, a psql variable in SQL, an empty value in TOML, `[REDACTED]` in logs and
   docs); a tracked `.env` leaves the tree and git and goes into `.gitignore`. It commits,
   and when the history holds a found value it runs `git filter-repo --replace-text`, then
   expires the reflog and runs `git gc`. The same command ends with a fresh dump;
3. it repeats the fix while the fresh dump still shows candidates it can change (at most
   `MAX_FIX_ROUNDS` times), then answers in text, which ends the episode.

`decide(prompt, results)` is the whole policy, a pure function of what the agent has seen.
`play_local(plan)` plays it on a local workspace with the same programs the taskset's
`setup` and `finalize` run; `answer(body)` turns a chat-completions request into its next
tool calls, for a stand-in model server in front of the real `vf-eval`.

Where it falls short is the point of a baseline: it knows formats, not code, so a secret in
an unusual place or a fix that breaks behaviour costs it reward.

The agent lives in three modules: `scan` (the dump and what counts as a secret), `fix` (the
command that fixes a file, commits and rewrites history) and `policy` (`decide` and the players).
This package keeps the names its callers import.
"""

from redaction_pressure.audit.agent.fix import FIX_MESSAGE, REPLACED, fix_command, fix_file, write_file
from redaction_pressure.audit.agent.policy import (
    DONE,
    MAX_FIX_ROUNDS,
    TOOL_OUTPUT_MAX_BYTES,
    Action,
    Episode,
    answer,
    bash,
    bound,
    decide,
    play,
    play_local,
)
from redaction_pressure.audit.agent.scan import DISCOVER, Candidate, Findings, Observation, find, parse, scan_text

__all__ = [
    "DISCOVER",
    "DONE",
    "FIX_MESSAGE",
    "MAX_FIX_ROUNDS",
    "REPLACED",
    "TOOL_OUTPUT_MAX_BYTES",
    "Action",
    "Candidate",
    "Episode",
    "Findings",
    "Observation",
    "answer",
    "bash",
    "bound",
    "decide",
    "find",
    "fix_command",
    "fix_file",
    "parse",
    "play",
    "play_local",
    "scan_text",
    "write_file",
]
