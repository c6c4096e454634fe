"""The scripted agent's policy and its players: turn what it has seen into its next action.

`decide(prompt, results)` is the whole policy, a pure function of what the agent has seen: dump
first, then fix while the fresh dump still shows candidates it can change (at most
`MAX_FIX_ROUNDS` times), then answer `DONE` in text, which ends the episode. `play` runs it on a
workspace and scores it, `play_local(plan)` on a local workspace with the same programs the
taskset's `setup` and `finalize` run; `answer(body)` turns a chat-completions request into its
next tool calls, for a stand-in model server in front of the real `vf-eval`.
"""

from __future__ import annotations

from dataclasses import dataclass

from redaction_pressure.audit.agent.fix import fix_command
from redaction_pressure.audit.agent.scan import DISCOVER, find, parse
from redaction_pressure.audit.plan import RepoPlan

MAX_FIX_ROUNDS = 2
TOOL_OUTPUT_MAX_BYTES = 20_000
"""The bash harness's middle-out cut of one tool result (verifiers 0.4.0); mirrored locally."""
DONE = "Remediation finished: the scanner finds no further secret it can fix."


# -- the policy ---------------------------------------------------------------------------------


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


Action = list[dict] | str
"""Tool calls for the next turn, or the final text answer."""


def decide(prompt: str, results: list[str]) -> Action:
    """The next action after the tool results so far (oldest first)."""
    if not results:
        return [bash(DISCOVER)]
    observation = parse(results[-1])
    if not observation.files and not observation.complete:
        return DONE
    rounds = len(results) - 1
    if rounds >= MAX_FIX_ROUNDS:
        return DONE
    # The prompt's findings point at lines of the repository as it started: use them once.
    findings = find(observation, prompt if rounds == 0 else "")
    if rounds:
        before = find(parse(results[-2]), prompt if rounds == 1 else "")
        if set(findings.values) >= set(before.values):
            return DONE  # the last fix changed nothing the scanner can see: stop, do not loop
    command = fix_command(observation, findings)
    return DONE if command is None else [bash(command)]


# -- playing it ---------------------------------------------------------------------------------


def bound(text: str) -> str:
    """The harness's cut of an oversized tool result (head and tail kept)."""
    data = text.encode()
    if len(data) <= TOOL_OUTPUT_MAX_BYTES:
        return text
    keep = TOOL_OUTPUT_MAX_BYTES // 2
    return f"{data[:keep].decode(errors='ignore')}\n[... {len(data) - 2 * keep} bytes truncated ...]\n{data[-keep:].decode(errors='ignore')}"


@dataclass(frozen=True)
class Episode:
    steps: int
    facts: dict
    total: float
    detection: float
    health: float


def play(plan: RepoPlan, workspace, budget: int | None = None) -> Episode:
    """Play the agent on a workspace (`bash(command)`, `facts(steps)`: local or sealed) and score it."""
    from redaction_pressure.audit.prompt import prompt
    from redaction_pressure.audit.rubric import score

    budget = plan.budget if budget is None else budget
    text = prompt(plan).user
    results: list[str] = []
    steps = 0
    while steps < budget:
        action = decide(text, results)
        if isinstance(action, str):
            break
        for call in action:
            steps += 1
            done = workspace.bash(call["arguments"]["command"])
            results.append(bound(done.stdout + done.stderr))
    facts = workspace.facts(steps)
    result = score(plan, facts)
    return Episode(steps, facts, result.total, result.detection, result.health)


def play_local(plan: RepoPlan, budget: int | None = None) -> Episode:
    """Play the agent on a local workspace (the taskset's own setup and scoring programs)."""
    from redaction_pressure.audit.local import LocalWorkspace

    with LocalWorkspace(plan) as ws:
        return play(plan, ws, budget)


def conversation(body: dict) -> tuple[str, list[str]]:
    """(first user prompt, tool results in order) of a chat-completions request."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]

    def text(message: dict) -> str:
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))

    prompt = next((text(m) for m in messages if m.get("role") == "user"), "")
    return prompt, [text(m) for m in messages if m.get("role") == "tool"]


def answer(body: dict) -> Action:
    """The agent's reply to one chat-completions request (for a stand-in model server)."""
    prompt, results = conversation(body)
    return decide(prompt, results)
