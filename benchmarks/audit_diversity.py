"""How much each secrets-audit scenario varies with the seed, and what each level holds.

    uv run python -m benchmarks.audit_diversity [--seeds 20]

Per scenario over the first `--seeds` train seeds: distinct file-path sets, code skeletons and
gold-fix programs (`redaction_pressure.audit.diversity`); per level: mean files, secrets,
commits, decoys, tags and branches, and the share of secrets hidden from the first prompt; the
expert level's structure over its 24 dev tasks (what docs/secrets-audit.md quotes).
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter

from redaction_pressure.audit import diversity, splits
from redaction_pressure.audit.scenarios import SCENARIOS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="train seeds per scenario (default 20)")
    args = parser.parse_args()
    plans = [splits.plan_for("train", i) for i in range(args.seeds * len(SCENARIOS))]
    report = diversity.report(plans)
    print("| scenario | difficulty | seeds | path sets | skeletons | gold-fix programs |\n|---|---|---|---|---|---|")
    for s in SCENARIOS:
        row = report[s.name]
        print(f"| {s.name} | {s.difficulty} | {row['tasks']} | {row['paths']} | {row['skeletons']} | {row['fixes']} |")
    print(
        "\n| level | files | secrets | commits | decoys | tags and branches | findings hidden at first |\n|---|---|---|---|---|---|---|"
    )
    for level in ("easy", "medium", "hard"):
        ps = [p for p in plans if p.difficulty == level]

        def mean(f) -> str:
            return f"{statistics.mean(f(p) for p in ps):.1f}"

        hidden = sum(sum(f.tier != "surface" for f in p.findings) for p in ps) / sum(len(p.findings) for p in ps)
        lo_hi = f" ({min(len(p.tree()) for p in ps)}-{max(len(p.tree()) for p in ps)})"
        print(
            f"| {level} | {mean(lambda p: len(p.tree()))}{lo_hi} | {mean(lambda p: len(p.secrets))} | {mean(lambda p: len(p.commits))} "
            f"| {mean(lambda p: len(p.decoys))} | {mean(lambda p: len(p.refs))} | {hidden:.0%} |"
        )

    expert(splits.EXPERT_DEV_SIZE)


def expert(size: int) -> None:
    """The expert level's structure over its dev tasks: files, text, secrets and their places, history, decoys."""
    ps = [splits.plan_for("dev", i, difficulty=splits.EXPERT) for i in range(size)]

    def spread(f) -> str:
        got = [f(p) for p in ps]
        return f"{statistics.mean(got):.2f} ({min(got)}-{max(got)})"

    print(f"\nexpert, {size} dev tasks:")
    print(
        f"- files {spread(lambda p: len(p.tree()))}; text {statistics.mean(sum(map(len, p.tree().values())) for p in ps) / 1000:.1f} KB"
    )
    print(f"- secrets {spread(lambda p: len(p.secrets))} in findings {spread(lambda p: len(p.findings))}; "
          f"places per secret {statistics.mean(len(p.findings) / len(p.secrets) for p in ps):.2f}; "
          f"only in history {spread(lambda p: len({f.secret for f in p.findings if f.in_history_only}))}")  # fmt: skip
    print(f"- commits {spread(lambda p: len(p.commits))}; branches and tags {spread(lambda p: len(p.refs) + len(p.tags))}; "
          f"with an annotated tag {sum(bool(p.tags) for p in ps)}, a note {sum(bool(p.notes) for p in ps)}, "
          f"a stash {sum(bool(p.stashes) for p in ps)}")  # fmt: skip
    kinds = Counter(d.kind for p in ps for d in p.decoys)
    print("- decoys a repository: " + ", ".join(f"{k} {n / size:.2f}" for k, n in kinds.most_common()))


if __name__ == "__main__":
    main()
