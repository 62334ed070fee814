#!/usr/bin/env python3
"""Latency of ``ctxkit search QUERY`` on one stored output, against ``python -c "import sqlite3"``.

search is answered on the fast path (before the heavy imports), as
``query --inject`` is: this shows what that gives. A fresh database gets one
stored log of 5,000 lines (a few errors among them), then both commands run
interleaved, 20 times each, on the pip-installed console script (see installed.py)
and the same venv's python.

    python tests/bench/bench_search_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import installed


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    python, script = installed.install()
    env = installed.clean_env()
    with tempfile.TemporaryDirectory(prefix="ctxkit-bench-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        log = "\n".join(f"ERROR db: connection refused to replica {i}" if i % 500 == 7
                        else f"INFO step {i}: worker {i % 8} processed batch {i * 3}"
                        for i in range(5000)) + "\n"
        subprocess.run([str(script), "store", "-", "--label", "worker-log"], cwd=root, env=env,
                       input=log.encode(), check=True, capture_output=True)
        search = [str(script), "search", "connection refused"]
        base = [str(python), "-c", "import sqlite3"]
        for _ in range(3):
            timed(search, root, env)
            timed(base, root, env)
        ours, theirs = [], []
        for _ in range(args.runs):
            ours.append(timed(search, root, env))
            theirs.append(timed(base, root, env))
    ours_ms, base_ms = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
    print(f"search 'connection refused': {ours_ms:.1f} ms median over {args.runs} runs")
    print(f"python -c 'import sqlite3':  {base_ms:.1f} ms")
    print(f"ratio {ours_ms / base_ms:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
