"""Fit the constant answer on train tasks, score it on train and dev, and save it (a script, not a test).

    uv run python -m benchmarks.fit_constant [--difficulty LEVEL] [--train 400] [--save]

The constant policy's fitter (`redaction_pressure/redact/policies/fitting.py`) mines candidate pieces from
labelled train tasks and selects greedily on the exact rubric; with `--save` the result
replaces `redaction_pressure/redact/policies/constant_rules.json` (`constant_rules_<level>.json` for
easy and hard), the answer the ladder uses at that level. Each level's answer is fitted on
that level's train tasks and scored on its held-out train tasks and dev split.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from redaction_pressure.corpus import DIFFICULTIES, corpus_version
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.policies import constant, fitting, reply
from redaction_pressure.splits import DEV_SIZE


def summary(results) -> dict[str, float]:
    return {
        "reward": round(statistics.fmean(r.reward for r in results), 4),
        "recall": round(statistics.fmean(r.recall for r in results), 4),
        "precision": round(statistics.fmean(r.precision for r in results), 4),
        "clean_gate": round(statistics.fmean(r.clean_gate for r in results), 4),
        "valid": round(statistics.fmean(r.valid for r in results), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=400, help="train tasks to fit on (the first N)")
    parser.add_argument("--save", action="store_true", help="write the fitted rules to the level's constant_rules file")
    parser.add_argument(
        "--difficulty",
        choices=DIFFICULTIES,
        default="standard",
        help="the level to fit on and score (default standard)",
    )
    args = parser.parse_args()
    level = args.difficulty
    started = time.perf_counter()
    train = [load_task("train", i, difficulty=level) for i in range(args.train)]
    rules = fitting.fit([(t.shown, t.hidden) for t in train], progress=lambda m: print(m, file=sys.stderr, flush=True))
    fitted = time.perf_counter() - started
    answer = reply(rules)
    on_train = summary([score_reply(t, answer) for t in train])
    held_out = range(args.train, args.train + DEV_SIZE)
    on_held_out = summary([score_reply(load_task("train", i, difficulty=level), answer) for i in held_out])
    on_dev = summary([score_reply(load_task("dev", i, difficulty=level), answer) for i in range(DEV_SIZE)])
    print(
        f"fitted {len(rules)} rules ({sum(len(r.pattern) for r in rules)} pattern characters) on {args.train} {level} train tasks in {fitted:.0f} s"
    )
    print(f"train tasks 0..{args.train - 1} (fitted on): {on_train}")
    print(f"train tasks {held_out.start}..{held_out.stop - 1} (held out): {on_held_out}")
    print(f"dev (64 tasks): {on_dev}")
    if args.save:
        note = {
            "corpus_version": corpus_version(level),
            "train_tasks": args.train,
            "train": on_train,
            "train_held_out": on_held_out,
            "dev": on_dev,
        }
        constant.save(rules, note, level)
        print(f"saved to {constant.rules_file(level)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
