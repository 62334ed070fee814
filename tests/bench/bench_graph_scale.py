#!/usr/bin/env python3
"""`ctxkit index` at scale: a large real repository, and growth to 5M lines.

Part 1, sympy (indexbench.py: the sympy 1.14.0 and mpmath 1.3.0 sdists from
PyPI in one tree, 815k lines). Per round: ctags over the same files (best of
3), a full index on an empty database, an unchanged re-index. Printed: the
ratios, peak memory, database size. Targets: full <= 8x ctags, peak <= 400 MB.

Part 2, growth: the stdlib and sympy corpora copied under prefixes and cut at
0.5M, 1M, 2M and 5M lines. Per size: a full index (lines/s, seconds per
million lines, peak memory, database size), ctags over the same files for
reference, an unchanged re-index; then, with every size's tree kept, the
latency of three queries, each the median of 7 runs of the real command after
one warm-up, the sizes taken in turn within each round:

  callers  c00/stdlib/json/decoder.py:JSONDecoder.raw_decode
  context  c00/stdlib/json/decoder.py:JSONDecoder.decode
  impact   c00/stdlib/email/_header_value_parser.py:get_value

Targets: time grows linearly (seconds per million lines at 5M within 1.3x of
0.5M; CPU seconds per million lines are printed beside, for a loaded
machine), peak memory <= 1 GB at 5M, each query at 5M <= 2x its time at
0.5M, unchanged re-index <= 0.1x the full one.

Run:  python tests/bench/bench_graph_scale.py [--rounds N] [--sizes 0.5,1,2,5]
      [--no-sympy] [--no-growth]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import indexbench as ib

QUERIES = (
    ("callers", ["callers", "c00/stdlib/json/decoder.py:JSONDecoder.raw_decode"]),
    ("context", ["context", "c00/stdlib/json/decoder.py:JSONDecoder.decode"]),
    ("impact", ["impact", "c00/stdlib/email/_header_value_parser.py:get_value"]),
)


def db_size(root: Path) -> int:
    state = root / ".ctxkit"
    return sum(p.stat().st_size for p in state.glob("ctxkit.db*")) if state.exists() else 0


def sympy_part(rounds: int) -> bool:
    root = ib.sympy_tree()
    files = ib.source_files(root)
    print(f"sympy + mpmath: {len(files)} files, {ib.tree_lines(root, files)} lines ({root})")
    ratios, peaks = [], []
    for number in range(1, rounds + 1):
        print(f"round {number}: {ib.load()}")
        ctags = ib.ctags(root, files)
        full = ib.fresh_index(root)
        again = ib.ctxkit(["index", "--json"], root)
        summary = full.json()
        ratios.append(full.seconds / ctags.seconds)
        peaks.append(full.peak_tree)
        print(f"  ctags {ctags.seconds:.2f}s ({ctags.cpu:.2f}s CPU); ctxkit full "
              f"{full.seconds:.2f}s ({full.cpu:.2f}s CPU, {summary['nodes']} nodes, "
              f"{summary['edges']} edges) = {ratios[-1]:.1f}x ctags, CPU "
              f"{full.cpu / ctags.cpu:.1f}x; unchanged {again.seconds:.2f}s = "
              f"{again.seconds / full.seconds:.3f}x full; peak {ib.mb(full.peak_tree)} over "
              f"the tree (PSS {ib.mb(full.peak_pss)}), {ib.mb(full.peak_single)} largest "
              f"process; database "
              f"{ib.mb(db_size(root))}")
    ratio, peak = ib.median(ratios), max(peaks)
    print(f"sympy: median full = {ratio:.1f}x ctags (target <= 8x); peak {ib.mb(peak)} "
          f"(target <= 400 MB)")
    return ratio <= 8 and peak <= 400 * 2**20


def latencies(rows: list[dict], rounds: int = 7) -> None:
    """Each query's median time at every size, the sizes taken in turn within each
    round so that a load that comes and goes hits them alike; one warm-up first."""
    times: dict[tuple, list[float]] = {}
    for round_number in range(rounds + 1):
        for row in rows:
            for name, argv in QUERIES:
                seconds = ib.ctxkit(argv, row["root"], sample=False).seconds
                if round_number:
                    times.setdefault((row["size"], name), []).append(seconds)
    for row in rows:
        for name, _ in QUERIES:
            row[name] = ib.median(times[(row["size"], name)])


def growth_part(sizes: list[float]) -> bool:
    biggest = max(sizes) * 1e6
    corpus = ib.tree_lines(ib.stdlib_tree(), ib.source_files(ib.stdlib_tree())) + \
        ib.tree_lines(ib.sympy_tree(), ib.source_files(ib.sympy_tree()))
    order = ib.growth_master(int(biggest // corpus) + 1)
    rows = []
    for size in sizes:
        root, count, lines = ib.growth_tree(int(size * 1e6), order)
        print(f"{size}M: {count} files, {lines} lines; {ib.load()}")
        files = ib.source_files(root)
        ctags = ib.ctags(root, files, repeats=1)
        full = ib.fresh_index(root)
        again = ib.ctxkit(["index", "--json"], root)
        summary = full.json()
        row = {"size": size, "lines": lines, "seconds": full.seconds, "cpu": full.cpu,
               "per_million": full.seconds / lines * 1e6, "peak": full.peak_tree,
               "single": full.peak_single, "db": db_size(root), "ctags": ctags.seconds,
               "unchanged": again.seconds, "root": root}
        rows.append(row)
        print(f"  full {full.seconds:.1f}s ({full.cpu:.1f}s CPU) = {lines / full.seconds:,.0f} "
              f"lines/s, {row['per_million']:.1f}s per million lines, "
              f"{full.seconds / ctags.seconds:.1f}x ctags ({ctags.seconds:.2f}s); "
              f"{summary['nodes']} nodes, {summary['edges']} edges; peak {ib.mb(full.peak_tree)} "
              f"over the tree (PSS {ib.mb(full.peak_pss)}), {ib.mb(full.peak_single)} largest "
              f"process; database "
              f"{ib.mb(row['db'])}; unchanged {again.seconds:.2f}s = "
              f"{again.seconds / full.seconds:.3f}x full")
    latencies(rows)
    for row in rows:
        print(f"{row['size']}M latency: " + ", ".join(f"{name} {row[name] * 1000:.0f} ms"
                                                     for name, _ in QUERIES))
        shutil_rm(row["root"])
    first, last = rows[0], rows[-1]
    growth = last["per_million"] / first["per_million"]
    cpu_growth = (last["cpu"] / last["lines"]) / (first["cpu"] / first["lines"])
    slowest = max(last[name] / first[name] for name, _ in QUERIES)
    print(f"growth {first['size']}M -> {last['size']}M: seconds per million lines "
          f"{first['per_million']:.1f} -> {last['per_million']:.1f} = {growth:.2f}x (linear: "
          f"<= 1.3x), CPU seconds per million lines {first['cpu'] / first['lines'] * 1e6:.1f} "
          f"-> {last['cpu'] / last['lines'] * 1e6:.1f} = {cpu_growth:.2f}x; peak at "
          f"{last['size']}M {ib.mb(last['peak'])} (target <= 1 GB); query "
          f"latency at {last['size']}M / {first['size']}M: " + ", ".join(
              f"{name} {last[name] / first[name]:.2f}x" for name, _ in QUERIES) +
          " (target <= 2x); unchanged / full at "
          f"{last['size']}M: {last['unchanged'] / last['seconds']:.3f}x (target <= 0.1x)")
    return growth <= 1.3 and last["peak"] <= 2**30 and slowest <= 2 and \
        last["unchanged"] <= 0.1 * last["seconds"]


def shutil_rm(root: Path) -> None:
    import shutil
    if os.environ.get("CTXKIT_BENCH_KEEP") != "1":
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sizes", default="0.5,1,2,5",
                        help="growth sizes in millions of lines (default 0.5,1,2,5)")
    parser.add_argument("--no-sympy", action="store_true")
    parser.add_argument("--no-growth", action="store_true")
    args = parser.parse_args()
    print(ib.check_ctags())
    ok = True
    if not args.no_sympy:
        ok = sympy_part(args.rounds) and ok
    if not args.no_growth:
        ok = growth_part([float(s) for s in args.sizes.split(",")]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
