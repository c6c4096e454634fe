"""`agent --env-url URL --model M --base-url B`: the seed's baseline agent loop on an OpenEnv server.

Reset a task, show the model the prompt, take one action out of each reply, step, and repeat until
the episode ends, the reward reaches 1.0 (then it submits, for the final grade) or `--max-steps`
tool calls are spent (then it submits too). redaction-pressure is one turn: the reply is the step.

- **Actions.** The secrets-audit tools are offered as function tools (bash, edit, the four audit
  tools, submit); a reply without a tool call is read for one fenced ```bash block, and a reply
  with neither is answered with a one-line reminder (three in a row end the episode with a
  submit). An endpoint that refuses tools is asked again without them, for the rest of the run.
- **The repeat guard.** The same action three times in a row submits instead of stepping.
- **Lines**, as the seed's `inference.py` prints them:
  `[START] task=dev-3 env=secrets-audit model=M`,
  `[STEP] step=1 action=bash(git log --oneline) reward=0.00 done=false error=null`,
  `[END] success=true steps=4 score=1.00 rewards=0.00,0.50,1.00,1.00`,
  then one JSON line: the task, the reward, the steps, why it ended and (secrets-audit) the grade.
- **Errors** are one line and exit 1: a model endpoint that does not answer, a server that
  refuses the task. `--api-key-var NAME` names the variable holding the key (an unset one is an
  error, never an empty key); without it the key is "EMPTY", as local endpoints take.

It runs where `openenv` is installed (servers/openenv), as `serve-openenv` does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request

from redaction_pressure.cli import common
from redaction_pressure.cli.common import UsageError

REPEATS = 3
"""The same action this many times in a row ends the episode (a submit)."""
NUDGES = 3
"""Replies in a row without an action before the episode ends (a submit)."""
NUDGE = "Reply with one tool call, or with one shell command in a ```bash fenced block."
FENCE = re.compile(r"```(?:bash|sh|shell)?[ \t]*\n(.*?)```", re.S)


def add(commands) -> None:
    agent = commands.add_parser(
        "agent",
        help="run the baseline agent loop: a model against an OpenEnv server of either environment",
        description="Play one task of an OpenEnv server (serve-openenv) with a model behind an OpenAI-compatible "
        "endpoint: reset, one action per reply, step, until the episode ends, the reward reaches 1.0 or "
        "--max-steps. Prints [START], [STEP] and [END] lines and a JSON summary.",
    )
    agent.add_argument("--env-url", required=True, help="the server's URL (serve-openenv prints it)")
    agent.add_argument("--model", required=True, help="the model name the endpoint serves")
    agent.add_argument("--base-url", required=True, help="the endpoint's OpenAI-compatible base URL (…/v1)")
    agent.add_argument("--api-key-var", metavar="NAME", help="environment variable holding the endpoint's key")
    agent.add_argument("--env-token-var", metavar="NAME", help="environment variable holding the server's token")
    agent.add_argument("--split", default="dev", help="the task's split (default dev)")
    agent.add_argument("--index", type=int, default=0, help="the task's index (default 0)")
    agent.add_argument("--seed", type=int, help="train task SEED instead of --split/--index")
    agent.add_argument("--difficulty", default="standard", help="the task's level (default standard)")
    agent.add_argument("--max-steps", type=int, help="tool calls before it submits (default: the task's budget)")
    agent.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0)")
    agent.set_defaults(run=run)


class Failed(Exception):
    """A model or server failure: one line, exit 1."""


def run(args: argparse.Namespace, out, err) -> int:
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError(f"--max-steps must be at least 1, got {args.max_steps}")
    key = _secret(args.api_key_var, "--api-key-var") if args.api_key_var else "EMPTY"
    token = _secret(args.env_token_var, "--env-token-var") if args.env_token_var else None
    try:
        import openai
        from openenv.core.env_client import EnvClient  # noqa: F401 - the clients below need it
    except ImportError:
        raise common.needs_openenv("agent") from None
    model = Model(openai.OpenAI(base_url=args.base_url, api_key=key, max_retries=1, timeout=300), args)
    try:
        taskset = _taskset(args.env_url, token)
        summary = (play_audit if taskset == common.AUDIT_TASKSET else play_redaction)(args, model, token)
    except Failed as exc:
        print(f"{common.PROG} agent: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(summary), flush=True)
    return 0


def _secret(name: str, option: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise UsageError(f"{option} {name}: the variable is not set")
    return value


def _taskset(url: str, token: str | None) -> str:
    """The environment the server serves, from its /metadata."""
    request = urllib.request.Request(url.rstrip("/") + "/metadata", headers=_headers(token))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            name = json.load(response).get("name")
    except Exception as exc:  # noqa: BLE001 - any failure to reach it is the same one line
        raise Failed(f"the server at {url} did not answer /metadata ({type(exc).__name__}: {exc})") from None
    if name not in (common.TASKSET, common.AUDIT_TASKSET):
        raise Failed(f"the server at {url} serves {name!r}, not redaction-pressure or secrets-audit")
    return name


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Model:
    """Chat completions at the endpoint; tools offered until it refuses them."""

    def __init__(self, client, args: argparse.Namespace) -> None:
        self.client, self.name, self.base_url, self.temperature = client, args.model, args.base_url, args.temperature
        self.tools_ok = True

    def reply(self, messages: list[dict], tools: list[dict] | None = None):
        import openai

        offered = tools if tools and self.tools_ok else None
        try:
            made = self.client.chat.completions.create(
                model=self.name,
                messages=messages,
                temperature=self.temperature,
                **({"tools": offered} if offered else {}),
            )
        except openai.BadRequestError:
            if not offered:
                raise Failed(f"the model at {self.base_url} refused the request (400)") from None
            self.tools_ok = False  # an endpoint without tool support: fenced commands from here on
            return self.reply(messages, None)
        except openai.OpenAIError as exc:
            raise Failed(f"the model at {self.base_url} did not answer ({type(exc).__name__}: {exc})") from None
        if not made.choices:
            raise Failed(f"the model at {self.base_url} returned no choice")
        return made.choices[0].message


def _client(cls, args: argparse.Namespace, token: str | None):
    return cls(base_url=args.env_url, message_timeout_s=900, headers=_headers(token)).sync()


def _reset(env, args: argparse.Namespace):
    kwargs = {"seed": args.seed} if args.seed is not None else {"split": args.split, "index": args.index}
    try:
        return env.reset(difficulty=args.difficulty, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the server's refusal, one line
        raise Failed(f"the server refused the task: {str(exc).splitlines()[0]}") from None


def _task_name(args: argparse.Namespace) -> str:
    return f"train-{args.seed}" if args.seed is not None else f"{args.split}-{args.index}"


def _end(rewards: list[float], final: float, steps: int) -> None:
    joined = ",".join(f"{r:.2f}" for r in rewards)
    print(f"[END] success={str(final >= 1.0).lower()} steps={steps} score={final:.2f} rewards={joined}", flush=True)


# -- redaction-pressure ----------------------------------------------------------------------------


def play_redaction(args: argparse.Namespace, model: Model, token: str | None) -> dict:
    from redaction_pressure.redact.openenv_env import RedactionAction, RedactionPressureEnv

    print(f"[START] task={_task_name(args)} env={common.TASKSET} model={args.model}", flush=True)
    with _client(RedactionPressureEnv, args, token) as env:
        first = _reset(env, args).observation
        message = model.reply([{"role": "system", "content": first.system_prompt},
                               {"role": "user", "content": first.user_prompt}])  # fmt: skip
        reply = message.content or ""
        result = env.step(RedactionAction(reply=reply))
    errors = [e["code"] for e in result.observation.redaction_errors]
    error = ",".join(errors) if errors else "null"
    print(
        f"[STEP] step=1 action=reply({len(reply)} chars) reward={result.reward:.2f} done=true error={error}", flush=True
    )
    _end([result.reward], result.reward, 1)
    obs = result.observation
    return {"task": obs.task, "reward": result.reward, "steps": 1, "recall": obs.recall, "precision": obs.precision,
            "clean_gate": obs.clean_gate, "errors": errors, "ended": "replied"}  # fmt: skip


# -- secrets-audit ---------------------------------------------------------------------------------


def audit_tools() -> list[dict]:
    """The actions as OpenAI function tools: bash, edit, the audit tools (their own catalogue) and submit."""
    from redaction_pressure.audit.toolcalls import catalogue

    def tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
        schema = {"type": "object", "properties": properties, "required": required}
        return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}

    text = {"type": "string"}
    return [
        tool("bash", "Run a shell command in the working directory (the repository is ./repo).",
             {"command": text}, ["command"]),
        tool("edit", "Replace old_str, which must appear exactly once, with new_str in the file at path.",
             {"path": text, "old_str": text, "new_str": text}, ["path", "old_str", "new_str"]),
        *(tool(d["name"], d["description"], d["inputSchema"].get("properties", {}), d["inputSchema"].get("required", []))
          for d in catalogue()),
        tool("submit", "End the episode: the repository is graded as it is now.", {}, []),
    ]  # fmt: skip


def action_of(message) -> tuple[dict | None, dict | None]:
    """(the action as AuditAction fields, the tool call it came from) out of one reply; (None, None) when none."""
    for call in message.tool_calls or []:
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            return {"tool": call.function.name, "args": {"__unparsed__": call.function.arguments}}, call
        if call.function.name == "bash":
            return {"command": str(arguments.get("command", ""))}, call
        return {"tool": call.function.name, "args": arguments}, call
    fenced = FENCE.search(message.content or "")
    if fenced and fenced.group(1).strip():
        return {"command": fenced.group(1).strip()}, None
    return None, None


def shown(action: dict) -> str:
    """An action as a [STEP] line shows it: one line, at most 120 characters."""
    if "command" in action:
        text = f"bash({action['command']})"
    else:
        text = f"{action['tool']}({', '.join(f'{k}={v!r}' for k, v in (action.get('args') or {}).items())})"
    text = text.replace("\n", "\\n")
    return text if len(text) <= 120 else text[:117] + "..."


def session_line(obs) -> str:
    blocker = f"; top blocker: {obs.top_blocker}" if obs.top_blocker else ""
    return (f"[reward {obs.reward or 0.0:.2f}: detection {obs.security_score:.2f}, health {obs.health_score:.2f}; "
            f"{obs.steps_remaining} of {obs.step_budget} steps left{blocker}]")  # fmt: skip


def play_audit(args: argparse.Namespace, model: Model, token: str | None) -> dict:
    from redaction_pressure.audit.openenv_env import AuditAction, SecretsAuditEnv

    print(f"[START] task={_task_name(args)} env={common.AUDIT_TASKSET} model={args.model}", flush=True)
    tools = audit_tools()
    rewards: list[float] = []
    history: list[str] = []
    with _client(SecretsAuditEnv, args, token) as env:
        first = _reset(env, args).observation
        limit = min(args.max_steps or first.step_budget, first.step_budget)
        messages = [{"role": "system", "content": first.system_prompt}, {"role": "user", "content": first.observation}]
        result, ended, nudges = None, "", 0
        while True:
            steps = len(rewards)
            if steps >= limit:
                ended = f"--max-steps ({limit}) spent" if limit < first.step_budget else "the step budget is spent"
            elif rewards and rewards[-1] >= 1.0:
                ended = "the reward reached 1.0"
            elif nudges >= NUDGES:
                ended = f"{NUDGES} replies in a row without an action"
            if ended:
                break
            message = model.reply(messages, tools)
            action, call = action_of(message)
            if action is None:
                nudges += 1
                messages += [
                    {"role": "assistant", "content": message.content or ""},
                    {"role": "user", "content": NUDGE},
                ]
                continue
            nudges = 0
            key = json.dumps(action, sort_keys=True)
            if action.get("tool") == "submit":
                ended = "the model submitted"
                break
            if history[-(REPEATS - 1) :] == [key] * (REPEATS - 1):
                ended = f"the repeat guard: the same action {REPEATS} times in a row"
                print(f"[STEP] step={steps + 1} action={shown(action)} guard=repeat", flush=True)
                break
            history.append(key)
            error = "null"
            try:
                result = env.step(AuditAction(**action))
            except Exception as exc:  # noqa: BLE001 - a refused action is the model's to read, not the run's end
                error = str(exc).splitlines()[0]
                if "reset" in error:  # the episode is over or void: nothing more to play
                    raise Failed(f"the server ended the episode: {error}") from None
                text = f"error: {error}"
            else:
                text = result.observation.observation + "\n" + session_line(result.observation)
            reward = result.reward if result is not None and error == "null" else (rewards[-1] if rewards else 0.0)
            rewards.append(reward)
            done = result is not None and error == "null" and result.done
            print(f"[STEP] step={steps + 1} action={shown(action)} reward={reward:.2f} done={str(done).lower()} "
                  f"error={error}", flush=True)  # fmt: skip
            if call is not None:
                messages += [{"role": "assistant", "content": message.content, "tool_calls": [call.model_dump()]},
                             {"role": "tool", "tool_call_id": call.id, "content": text}]  # fmt: skip
            else:
                messages += [{"role": "assistant", "content": message.content or ""}, {"role": "user", "content": text}]
            if done:
                ended = "the episode ended (the step budget)"
                break
        if result is None or not result.done:
            try:
                result = env.step(AuditAction(tool="submit"))
            except Exception as exc:  # noqa: BLE001
                raise Failed(f"the server could not grade the episode: {str(exc).splitlines()[0]}") from None
    grade = result.observation.grade or {}
    _end(rewards, result.reward, len(rewards))
    return {"task": first.task, "reward": result.reward, "steps": len(rewards), "ended": ended,
            "grade": {k: grade.get(k) for k in ("total", "detection", "health", "efficiency", "steps", "why_ended")}}  # fmt: skip
