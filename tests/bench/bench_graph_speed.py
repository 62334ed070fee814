#!/usr/bin/env python3
"""Speed of `ctxkit index` on the standard library against Universal Ctags.

The corpus is the stdlib set of indexbench.py: every ``*.py`` of this
interpreter's ``Lib/`` except test folders and site-packages (733 files,
327k lines on CPython 3.11). Each round times, one after the other:

  ctags --extras=+r -L FILES    the same files ctxkit indexes (best of 3)
  ctxkit index                  full, on an empty database
  ctxkit index                  again, nothing changed

and prints the round's ratios, so that a load that comes and goes on a shared
machine hits both tools alike; the verdict uses the median round. CPU
seconds (user + system over the whole process tree) are printed as well:
they stay comparable when other programs stretch the wall-clock times.

Targets (issue 12): full <= 6x ctags; unchanged <= 0.1x full.
Run:  python tests/bench/bench_graph_speed.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import indexbench as ib


def parse_floor(root, files: list[str]) -> float:
    """CPU seconds of tree-sitter's parse and ctxkit's query over the files, nothing else:
    what no extraction written in Python can go below."""
    sys.path.insert(0, str(ib.SNAPSHOT))
    import ctxkit
    from tree_sitter import QueryCursor
    sources = [(ctxkit.GRAPH_EXTENSIONS[os.path.splitext(f)[1].lower()], (root / f).read_bytes())
               for f in files]
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for lang, source in sources:
            parser, query = ctxkit.graph_language(lang)
            QueryCursor(query).matches(parser.parse(source).root_node)
        best = min(best, time.process_time() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(ib.check_ctags())
    root = ib.stdlib_tree()
    files = ib.source_files(root)
    print(f"stdlib set: {len(files)} files, {ib.tree_lines(root, files)} lines ({root})")
    ratios, unchanged_ratios, cpu_ratios = [], [], []
    for number in range(1, args.rounds + 1):
        print(f"round {number}: {ib.load()}")
        ctags = ib.ctags(root, files)
        full = ib.fresh_index(root)
        again = ib.ctxkit(["index", "--json"], root)
        summary, second = full.json(), again.json()
        assert second["files"]["unchanged"] == summary["files"]["indexed"], second
        ratios.append(full.seconds / ctags.seconds)
        unchanged_ratios.append(again.seconds / full.seconds)
        cpu_ratios.append(full.cpu / ctags.cpu)
        print(f"  ctags {ctags.seconds:.2f}s ({ctags.cpu:.2f}s CPU); ctxkit full "
              f"{full.seconds:.2f}s ({full.cpu:.2f}s CPU, {summary['nodes']} nodes, "
              f"{summary['edges']} edges) = {ratios[-1]:.1f}x ctags, CPU {cpu_ratios[-1]:.1f}x; "
              f"unchanged {again.seconds:.2f}s = {unchanged_ratios[-1]:.3f}x full; peak "
              f"{ib.mb(full.peak_tree)} over the tree (PSS {ib.mb(full.peak_pss)}), "
              f"{ib.mb(full.peak_single)} largest "
              f"process")
    floor = parse_floor(root, files)
    print(f"floor: tree-sitter parse + the one query pass alone, no Python extraction, "
          f"in one process: {floor:.2f}s CPU = {floor / ctags.cpu:.1f}x ctags CPU, "
          f"{floor / 2 / ctags.seconds:.1f}x ctags' time if spread over 2 cores")
    ratio, unchanged = ib.median(ratios), ib.median(unchanged_ratios)
    print(f"median of {args.rounds} rounds: full = {ratio:.1f}x ctags (target <= 6x), CPU "
          f"{ib.median(cpu_ratios):.1f}x ctags CPU; unchanged = {unchanged:.3f}x full "
          f"(target <= 0.1x)")
    return 0 if ratio <= 6 and unchanged <= 0.1 else 1


if __name__ == "__main__":
    sys.exit(main())
