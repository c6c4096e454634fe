"""`serve --policy NAME` (a prompt-only policy as an OpenAI-compatible endpoint) and `serve-env` (verifiers' env server for a trainer)."""

from __future__ import annotations

import argparse
import ipaddress

from rich.console import Console

from redaction_pressure.cli import common


def add(commands) -> None:
    policy = commands.add_parser(
        "serve",
        help="serve a non-LLM policy as an OpenAI-compatible model endpoint on 127.0.0.1",
        description="Answer every chat-completions request (streaming or not) with the rules a "
        "prompt-only policy writes for the request's last user message; GET /v1/models lists it. "
        "Prints 'serving POLICY at URL' once listening; SIGTERM or Ctrl-C stop it.",
    )
    policy.add_argument(
        "--policy", required=True, metavar="NAME", help="one of: " + ", ".join(common.prompt_policy_names())
    )
    policy.add_argument(
        "--port", type=common.port, default=8000, help="TCP port on 127.0.0.1 (0 picks a free one; default 8000)"
    )
    policy.set_defaults(run=run_policy)

    served = commands.add_parser(
        "serve-env",
        help="serve the taskset for a trainer: verifiers' env server (127.0.0.1 unless --host), ready when it says so",
        description="Serve the taskset with verifiers' env server (a static or elastic pool of worker "
        "processes) on tcp://HOST:PORT. Prints 'ready ADDRESS workers=N' once every pre-spawned "
        "worker has scored a warm-up episode; SIGTERM or Ctrl-C shut it down cleanly. The server "
        "has no authentication: bind beyond loopback only on a network you trust.",
    )
    served.add_argument("--host", type=common.host, default="127.0.0.1",
                        help="IPv4 address to listen on (default 127.0.0.1; 0.0.0.0 for every interface, with a warning)")  # fmt: skip
    served.add_argument("--port", type=common.port, default=5000, help="TCP port (0 picks a free one; default 5000)")
    served.add_argument(
        "--workers", type=int, default=2, help="env-server worker processes of a static pool (default 2)"
    )
    served.add_argument("--elastic", action="store_true", help="start one worker and add more under load")
    served.add_argument("--max-workers", type=int, help="upper bound of an elastic pool (default: none)")
    served.add_argument(
        "--scan-workers", type=int, help="scan worker processes per env-server worker (default: the CPUs it may use)"
    )
    served.add_argument(
        "--ready-timeout", type=float, default=300.0, help="seconds to wait for the workers (default 300)"
    )
    served.set_defaults(run=run_env)


def policy_answer(name: str):
    """A chat endpoint's answer function: the rules prompt-only policy `name` writes."""
    from redaction_pressure.cli.endpoint import last_user_text
    from redaction_pressure.redact.policies import reply
    from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES

    if name not in PROMPT_POLICIES:
        raise common.UsageError(f"unknown policy {name!r}; choose one of {', '.join(PROMPT_POLICIES)}")
    rules_for = PROMPT_POLICIES[name]
    try:
        rules_for("")  # fail now, not per request, if the policy cannot run here (the scanner extra)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
    return lambda body: reply(rules_for(last_user_text(body)))


def run_policy(args: argparse.Namespace, out: Console, err: Console) -> int:
    import signal
    import threading

    from redaction_pressure.cli.endpoint import ChatServer

    answer = policy_answer(args.policy)
    common.check_port_free(args.port)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with ChatServer(answer, port=args.port, model=args.policy) as server:
        print(f"serving {args.policy} at {server.url}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


def run_env(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.workers < 1 or (args.max_workers is not None and args.max_workers < 1):
        raise common.UsageError("--workers and --max-workers must be at least 1")
    if args.scan_workers is not None and args.scan_workers < 1:
        raise common.UsageError("--scan-workers must be at least 1")
    common.check_port_free(args.port, args.host)
    if not ipaddress.IPv4Address(args.host).is_loopback:
        # NOTE: verifiers' env server authenticates nobody: whoever reaches the port can run
        # episodes on this machine (and read the scores, the split's identity, the prompts).
        err.print(
            f"redaction-pressure: warning: serving on {args.host}, beyond loopback; verifiers' env server has no authentication, "
            "so anyone who can reach this port can run episodes here. Bind it only on a network you trust.",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    from redaction_pressure.cli import serving  # imports verifiers (about 5 s)

    taskset = {"task": {"scan_workers": args.scan_workers}} if args.scan_workers else {}
    return serving.serve(
        host=args.host, port=args.port, workers=args.workers, elastic=args.elastic, max_workers=args.max_workers,
        taskset=taskset, ready_timeout=args.ready_timeout,
    )  # fmt: skip
