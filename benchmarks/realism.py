"""Scanner realism benchmark: what detect-secrets 1.5 finds among the dev split's secrets and decoys.

    uv run python -m benchmarks.realism

A script, not a test: it measures an outside tool against the corpus and prints a table.
Every record of every dev task (shown and hidden) is written to a temp file named as
that document would be named (`FAMILIES[name].filename`: `.env`, `settings.py`,
`ci.yml`, ...; `.py` or `.js` for the python|javascript families, by sniffing) and
scanned by `detect_secrets.core.scan.scan_file` (the per-file path of `detect-secrets
scan`) under `default_settings()`: every plugin (the regex detectors, KeywordDetector,
Base64/Hex HighEntropyString) and the default filters.

A secret span is "found", and a decoy span "flagged", when a reported secret's value
(`secret_value`) occurs on the reported line overlapping the span. When the value is
not on that line (detect-secrets reports a YAML block scalar at its key's line, with
escapes), the value up to its first quote or backslash counts wherever it occurs in
the record; the script says how often that happened.

`scan_file` rather than `SecretsCollection.scan_file`: the collection keeps one result
per (file, value, type), so a key repeated across several services would count once.

Target (from the issue): no decoy kind flagged above 10%, except where the README
explains why the scanner is wrong. Nothing here talks to the network.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from detect_secrets.core import scan
from detect_secrets.settings import default_settings, get_plugins

from redaction_pressure.corpus import DECOY_KINDS, FAMILIES, SECRET_KINDS
from redaction_pressure.spans import Record, Span
from tests.support.realism import Located, dev_records, syntax_of

DECOY_TARGET = 0.10
EXTENSIONS = {"python": ".py", "javascript": ".js"}


def file_name(record: Record) -> str:
    """The name such a document would have: the family's file name, with .py/.js where it needs sniffing."""
    name = FAMILIES[record.family].filename
    return name + EXTENSIONS[syntax_of(record)] if "." not in name else name


def reported_ranges(record: Record, found: list[tuple[int, str, str]]) -> tuple[list[tuple[int, int, str]], int]:
    """Character ranges of reported values in `record.text`, with each report's plugin type.

    Returns the ranges and how many reports had to be located off their reported line.
    """
    starts = [0]
    for line in record.text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    ranges: list[tuple[int, int, str]] = []
    relocated = 0
    for line_number, value, kind in found:
        if not value:
            continue
        base = starts[line_number - 1] if 0 < line_number < len(starts) else 0
        line = record.text[base : starts[line_number] - 1] if 0 < line_number < len(starts) else ""
        hits = [base + i for i in _occurrences(line, value)]
        if not hits:
            relocated += 1
            # detect-secrets' YAML transformer reports block scalars at their key's line and
            # with escapes (`token\\" > .npmrc`); fall back to the value up to its first
            # quote or backslash, anywhere in the record.
            value = re.split(r"[\\\"']", value)[0] or value
            hits = list(_occurrences(record.text, value))
        ranges.extend((start, start + len(value), kind) for start in hits)
    return ranges, relocated


def _occurrences(text: str, value: str):
    i = text.find(value)
    while i >= 0:
        yield i
        i = text.find(value, i + 1)


def flagged_by(span: Span, ranges: list[tuple[int, int, str]]) -> set[str]:
    """The plugin types whose reported values overlap `span`."""
    return {kind for start, end, kind in ranges if start < span.end and span.start < end}


def scan_records(
    records: tuple[Located, ...], tmp: Path
) -> tuple[list[tuple[Located, list[tuple[int, str, str]]]], float]:
    """Write each record to its own directory under `tmp` and scan it; the reports and the scan seconds."""
    results = []
    elapsed = 0.0
    for n, located in enumerate(records):
        folder = tmp / f"{n:05d}"
        folder.mkdir()
        path = folder / file_name(located.record)
        path.write_text(located.record.text, encoding="utf-8")
        start = time.perf_counter()
        found = [(s.line_number, s.secret_value or "", s.type) for s in scan.scan_file(str(path))]
        elapsed += time.perf_counter() - start
        results.append((located, found))
    return results, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slots", type=int, default=12, help="how many of the most-flagged decoy slots to list")
    args = parser.parse_args()
    wall = time.perf_counter()
    records = dev_records()
    load = time.perf_counter() - wall

    with default_settings(), tempfile.TemporaryDirectory() as tmp:
        plugins = sorted(type(p).__name__ for p in get_plugins())
        results, scan_seconds = scan_records(records, Path(tmp))

    secrets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    decoys: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    secret_plugins: dict[str, Counter] = defaultdict(Counter)
    decoy_plugins: dict[str, Counter] = defaultdict(Counter)
    slots: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    examples: dict[tuple[str, str], str] = {}
    relocated = reports = 0
    for located, found in results:
        record = located.record
        ranges, moved = reported_ranges(record, found)
        relocated += moved
        reports += len(found)
        for span in record.secrets:
            hit = flagged_by(span, ranges)
            secrets[span.kind][0] += 1
            secrets[span.kind][1] += bool(hit)
            secret_plugins[span.kind].update(hit)
        for span in record.decoys:
            hit = flagged_by(span, ranges)
            decoys[span.kind][0] += 1
            decoys[span.kind][1] += bool(hit)
            decoy_plugins[span.kind].update(hit)
            slot = (span.kind, span.slot.split("/")[0] + "/" + span.slot.split("/")[-1])
            slots[slot][0] += 1
            slots[slot][1] += bool(hit)
            if hit and slot not in examples:
                examples[slot] = f"{located.where}: {record.value(span)[:28]!r} ({', '.join(sorted(hit))})"

    total = time.perf_counter() - wall
    n_secrets = sum(c for c, _ in secrets.values())
    n_decoys = sum(c for c, _ in decoys.values())
    print(
        f"detect-secrets realism benchmark: {len(records)} records of the dev split, "
        f"{n_secrets} secret and {n_decoys} decoy spans; python {sys.version.split()[0]}"
    )
    print(f"  plugins ({len(plugins)}): {', '.join(plugins)}; default filters")
    print()
    print(f"  {'secret kind':<24}{'count':>7}{'found':>9}   most found by")
    for kind in SECRET_KINDS:
        if kind in secrets:
            count, hit = secrets[kind]
            top = _top(secret_plugins[kind], hit)
            print(f"  {kind:<24}{count:>7}{hit / count:>9.1%}   {top}")
    found_all = sum(h for _, h in secrets.values())
    print(f"  {'all secrets':<24}{n_secrets:>7}{found_all / n_secrets:>9.1%}")
    print()
    print(f"  {'decoy kind':<24}{'count':>7}{'flagged':>9}   {'target':<8}  most flagged by")
    for kind in DECOY_KINDS:
        if kind in decoys:
            count, hit = decoys[kind]
            verdict = "met" if hit / count <= DECOY_TARGET else "MISSED"
            print(f"  {kind:<24}{count:>7}{hit / count:>9.1%}   {verdict:<8}  {_top(decoy_plugins[kind], hit)}")
    flagged_all = sum(h for _, h in decoys.values())
    print(
        f"  {'all decoys':<24}{n_decoys:>7}{flagged_all / n_decoys:>9.1%}   (target: each kind <= {DECOY_TARGET:.0%})"
    )
    print()
    worst = sorted((s for s in slots if slots[s][1]), key=lambda s: (-slots[s][1] / slots[s][0], -slots[s][0]))
    if worst:
        print("  most-flagged decoy slots (kind, family/format: flagged of count; first example)")
        for slot in worst[: args.slots]:
            count, hit = slots[slot]
            print(f"    {slot[0]:<17} {slot[1]:<30} {hit:>4}/{count:<4} {examples[slot]}")
        print()
    print(f"  reports: {reports}; located off their reported line: {relocated}")
    print(f"  runtime: {total:.1f} s total ({load:.1f} s loading the dev split, {scan_seconds:.1f} s in scan_file)")


def _top(plugins: Counter, hit: int) -> str:
    if not hit:
        return "-"
    return ", ".join(f"{name} {n / hit:.0%}" for name, n in plugins.most_common(2))


if __name__ == "__main__":
    main()
