"""Drive an OpenEnv server with OpenEnv's own client; run in the OpenEnv project's environment.

    python tests/support/openenv_driver.py URL [--parallel] < episodes.json > results.json

`episodes.json` is a list of episodes, each `{"taskset": "secrets-audit" | "redaction-pressure",
"reset": {...}, "actions": [{...}, ...]}`; each action is the adapter's action as JSON. The
output is one result per episode: the reset's observation and every step's `reward`, `done` and
observation, or `{"error": "..."}` where the server refused a call. `--parallel` plays every
episode at once, each in a session of its own. This file imports openenv,
which cannot share an environment with verifiers: the suite runs it with the OpenEnv project's
Python (servers/openenv/.venv) and reads its output.
"""

from __future__ import annotations

import json
import sys


def client_for(taskset: str, url: str):
    if taskset == "secrets-audit":
        from redaction_pressure.audit.openenv_env import AuditAction, SecretsAuditEnv

        return SecretsAuditEnv(base_url=url, message_timeout_s=900).sync(), AuditAction
    from redaction_pressure.redact.openenv_env import RedactionAction, RedactionPressureEnv

    return RedactionPressureEnv(base_url=url, message_timeout_s=300).sync(), RedactionAction


def play(url: str, episode: dict) -> dict:
    env, action_cls = client_for(episode["taskset"], url)
    out: dict = {"steps": []}
    try:
        env.connect()
    except Exception as exc:  # noqa: BLE001 - the server's refusal is the result
        return {"error": str(exc)}
    with env:
        try:
            first = env.reset(**episode.get("reset", {}))
        except Exception as exc:  # noqa: BLE001
            return {"error": str(exc)}
        out["reset"] = first.observation.model_dump()
        for raw in episode.get("actions", []):
            try:
                result = env.step(action_cls.model_validate(raw))
            except Exception as exc:  # noqa: BLE001
                out["steps"].append({"error": str(exc)})
                continue
            out["steps"].append(
                {"reward": result.reward, "done": result.done, "observation": result.observation.model_dump()}
            )
    return out


def main() -> int:
    url = sys.argv[1]
    episodes = json.load(sys.stdin)
    if "--parallel" in sys.argv[2:]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(episodes) or 1) as pool:
            results = list(pool.map(lambda e: play(url, e), episodes))
    else:
        results = [play(url, e) for e in episodes]
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
