"""Calibrate a level against a model that reads: print a task's prompt, then score the answers.

    uv run python -m benchmarks.reading_model prompt SPLIT INDEX [--difficulty LEVEL]
    uv run python -m benchmarks.reading_model score SPLIT FOLDER [--difficulty LEVEL]

`prompt` prints the rendered system prompt and user prompt of one task and nothing else: what
a model answering in one turn reads, and all a stand-in reader (a person or a language model in
a session of its own) may be given. The reader answers once; its reply goes, as written, into
FOLDER/<INDEX>.txt. `score` scores every such reply against its task (the package's own
scoring, the hidden records the reader never saw) and prints each task's reward, recall,
precision and clean gate, the mean and the number of tasks at 1.0. Calibrate on train tasks;
report on dev tasks the level was never tuned to.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from redaction_pressure.corpus import DEFAULT_DIFFICULTY, DIFFICULTIES
from redaction_pressure.redact.api import load_task, score_reply


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prompt = commands.add_parser("prompt", help="print one task's system and user prompt, nothing else")
    prompt.add_argument("split")
    prompt.add_argument("index", type=int)
    score = commands.add_parser("score", help="score FOLDER/<INDEX>.txt replies against their tasks")
    score.add_argument("split")
    score.add_argument("folder", type=Path)
    for command in (prompt, score):
        command.add_argument("--difficulty", choices=DIFFICULTIES, default=DEFAULT_DIFFICULTY)
    args = parser.parse_args(argv)
    if args.command == "prompt":
        task = load_task(args.split, args.index, difficulty=args.difficulty)
        sys.stdout.write(f"SYSTEM PROMPT\n\n{task.prompt.system}\n\nUSER PROMPT\n\n{task.prompt.user}\n")
        return 0
    replies = sorted(args.folder.glob("*.txt"), key=lambda path: int(path.stem))
    if not replies:
        parser.error(f"{args.folder} holds no <INDEX>.txt reply")
    rewards = []
    print(f"{'task':>6} {'reward':>7} {'recall':>7} {'precis.':>7} {'gate':>5}  errors")
    for path in replies:
        task = load_task(args.split, int(path.stem), difficulty=args.difficulty)
        result = score_reply(task, path.read_text(encoding="utf-8"))
        rewards.append(result.reward)
        codes = sorted({error.code for error in result.errors})
        print(
            f"{path.stem:>6} {result.reward:7.3f} {result.recall:7.3f} {result.precision:7.3f} {result.clean_gate:5.0f}  {' '.join(codes)}"
        )
    perfect = sum(1 for reward in rewards if reward == 1.0)
    print(
        f"mean {statistics.fmean(rewards):.3f} over {len(rewards)} {args.split} tasks at {args.difficulty}; {perfect} at 1.0"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
