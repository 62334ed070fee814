#!/usr/bin/env python3
"""Cold start of ``ctxkit query X --inject`` against ``python -c "import sqlite3"``.

Agents and pre-edit hooks call ``query X --inject`` before every edit, so its
start-up matters. This script fills a fresh database with 1,000 lessons (200
on X, 800 over 100 other symbols), then times 20 runs of each command,
interleaved, and prints the medians and their ratio (target: <= 1.5).

ctxkit runs the way a user runs it: this worktree is pip-installed into a
venv under tests/bench/.work/venv and its ``ctxkit`` console script is started
(the module comes from the .pyc pip compiled), with PYTHONDONTWRITEBYTECODE
removed from the environment; the baseline runs on the same venv's python.

    python tests/bench/bench_inject.py [--runs 20] [--json] [--breakdown]

``--breakdown`` also prints where one run spends its time: the top-level
imports by cumulative ``-X importtime`` and the rest of main().
``--instructions`` counts the instructions each part executes under valgrind
(when installed), which the machine's load does not change as it changes
times: the baseline, the baseline plus the ``re`` that pip's console script
imports, unmarshalling the installed module's bytecode, and the whole call.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import installed

HERE = Path(__file__).resolve().parent
SOURCE_DIR = HERE.parent.parent
TARGET = 1.5
PYTHON = Path(sys.executable)  # the venv's, once installed


def fill_database(module_dir: Path, root: Path) -> None:
    """1,000 lessons through ctxkit's own recording function."""
    sys.path.insert(0, str(module_dir))
    import ctxkit

    env = ctxkit.make_env(cwd=root)
    for i in range(200):
        kind = "fail" if i % 5 else "success"
        ctxkit.record_lesson(env, kind, "X", f"lesson {i}: the cache key must include the "
                             f"tenant id, or requests of tenant {i} leak", file="src/x.py")
    for i in range(800):
        ctxkit.record_lesson(env, "fail", f"Other{i % 100}.run", f"other lesson {i}",
                             file=f"src/other{i % 100}.py")


def time_once(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return elapsed


def breakdown(cwd: Path, env: dict[str, str], argv: list[str]) -> str:
    """The imports of one run, slowest first, from ``python -X importtime``."""
    proc = subprocess.run([str(PYTHON), "-X", "importtime", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip())) // 2
            if depth <= 1:
                rows.append((int(parts[1]), name.strip(), depth))
    rows.sort(reverse=True)
    return "\n".join(f"  {us / 1000:7.1f} ms  {'  ' * depth}{name}"
                     for us, name, depth in rows[:15])


def instructions(cwd: Path, env: dict[str, str], argv: list[str]) -> int | None:
    """Instructions one run of ``argv`` executes (valgrind's callgrind), None without it."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *argv], cwd=cwd, env=env, capture_output=True, text=True)
    found = [line.split("Collected :")[1] for line in proc.stderr.splitlines()
             if "Collected :" in line]
    return int(found[0]) if proc.returncode == 0 and found else None


def instruction_parts(cwd: Path, env: dict[str, str], ctxkit_cmd: list[str]) -> str:
    """Instructions of the baseline, of what the call adds on top of it, and the ratios."""
    if shutil.which("valgrind") is None:
        return "  (valgrind is not installed)"
    pyc = subprocess.run([str(PYTHON), "-c", "import importlib.util as u; print(u.cache_from_"
                          "source(u.find_spec('ctxkit').origin))"], cwd=cwd, env=env, text=True,
                         capture_output=True, check=True).stdout.strip()
    unmarshal = f"import sqlite3, re, marshal; marshal.loads(open({pyc!r}, 'rb').read()[16:])"
    parts = {"python -c 'import sqlite3'": [str(PYTHON), "-c", "import sqlite3"],
             "+ import re (pip's console script)": [str(PYTHON), "-c", "import sqlite3, re"],
             "+ unmarshal ctxkit's bytecode": [str(PYTHON), "-c", unmarshal],
             "query X --inject": ctxkit_cmd}
    counts = {name: instructions(cwd, env, argv) for name, argv in parts.items()}
    base = counts["python -c 'import sqlite3'"]
    if not base or None in counts.values():
        return "  (valgrind failed)"
    return "\n".join(f"  {count / 1e6:7.1f} M  {count / base:.2f}x  {name}"
                     for name, count in counts.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--breakdown", action="store_true",
                        help="print the slowest imports of one run (python -X importtime)")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions of the call and its parts (valgrind)")
    args = parser.parse_args()
    global PYTHON
    PYTHON, script = installed.install()
    env = installed.clean_env()
    with tempfile.TemporaryDirectory(prefix="ctxkit-bench-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        fill_database(SOURCE_DIR, root)
        ctxkit_cmd = [str(script), "query", "X", "--file", "src/x.py", "--inject"]
        baseline_cmd = [str(PYTHON), "-c", "import sqlite3"]
        out = subprocess.run(ctxkit_cmd, cwd=root, env=env, capture_output=True, text=True)
        if "[PAST EXPERIENCE" not in out.stdout or len(out.stdout) >= 10000:
            raise SystemExit(f"unexpected inject output ({len(out.stdout)} chars): "
                             f"{out.stdout[:200]!r} {out.stderr}")
        for _ in range(3):  # warm the page cache for both
            time_once(ctxkit_cmd, root, env)
            time_once(baseline_cmd, root, env)
        ours, base = [], []
        for _ in range(args.runs):
            ours.append(time_once(ctxkit_cmd, root, env))
            base.append(time_once(baseline_cmd, root, env))
        imports = breakdown(root, env, ctxkit_cmd) if args.breakdown else ""
        counted = instruction_parts(root, env, ctxkit_cmd) if args.instructions else ""
    result = {"runs": args.runs, "lessons": 1000, "inject_chars": len(out.stdout),
              "ctxkit_median_ms": round(statistics.median(ours) * 1000, 1),
              "baseline_median_ms": round(statistics.median(base) * 1000, 1)}
    result["ratio"] = round(statistics.median(ours) / statistics.median(base), 2)
    result["target"] = TARGET
    result["ok"] = result["ratio"] <= TARGET
    if args.json:
        print(json.dumps(result))
    else:
        print(f"query X --inject: {result['ctxkit_median_ms']} ms median over {args.runs} runs "
              f"({result['inject_chars']} chars, 1,000 lessons)\n"
              f"python -c 'import sqlite3': {result['baseline_median_ms']} ms\n"
              f"ratio {result['ratio']} (target <= {TARGET}): "
              f"{'ok' if result['ok'] else 'too slow'}")
    if imports:
        print("slowest imports of one run (cumulative; indented: imported by the line above):")
        print(imports)
    if counted:
        print("instructions executed (valgrind; each line includes the ones above it):")
        print(counted)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
