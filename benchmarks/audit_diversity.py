"""How much each secrets-audit scenario varies with the seed, and what each level holds.

    uv run python -m benchmarks.audit_diversity [--seeds 20]

Per scenario over the first `--seeds` train seeds: distinct file-path sets, code skeletons and
gold-fix programs (`redaction_pressure.audit.diversity`); per level: mean files, secrets,
commits, decoys, tags and branches, and the share of secrets hidden from the first prompt.
"""

from __future__ import annotations

import argparse
import statistics

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


if __name__ == "__main__":
    main()
