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
When ``uv`` is installed (on PATH or beside this interpreter), the worktree is
also installed the way ``uv tool install --compile-bytecode .`` installs it
(uv's console script, which does not import ``re``) and timed in the same
rounds: README recommends that install for agents. The target is checked on
it when it is there, and on pip's install otherwise; both ratios are printed.

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


def check_output(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    """Stop unless ``argv`` prints an inject block under the 10,000-character limit."""
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if "[PAST EXPERIENCE" not in out.stdout or len(out.stdout) >= 10000:
        raise SystemExit(f"unexpected inject output of {argv[0]} ({len(out.stdout)} chars): "
                         f"{out.stdout[:200]!r} {out.stderr}")


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


def instruction_parts(cwd: Path, env: dict[str, str], ctxkit_cmd: list[str],
                      uv: tuple[Path, list[str]] | None) -> str:
    """Instructions of the baseline, of what the call adds on top of it, and the ratios;
    with ``uv`` (its venv's python, its call) also the call of uv's install against
    that venv's own baseline."""
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
    uv_parts = {}
    if uv:
        uv_parts = {"uv's venv: python -c 'import sqlite3' (no setuptools .pth)":
                    [str(uv[0]), "-c", "import sqlite3"],
                    "uv's venv: query X --inject (uv's script: no import re)": uv[1]}
    counts = {name: instructions(cwd, env, argv) for name, argv in {**parts, **uv_parts}.items()}
    if None in counts.values():
        return "  (valgrind failed)"
    lines = []
    for group in (parts, uv_parts):
        base = counts[next(iter(group))] if group else 0
        lines += [f"  {counts[name] / 1e6:7.1f} M  {counts[name] / base:.2f}x  {name}"
                  for name in group]
    return "\n".join(lines)


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
    uv = installed.install_uv(PYTHON)
    env = installed.clean_env()
    with tempfile.TemporaryDirectory(prefix="ctxkit-bench-") as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        fill_database(SOURCE_DIR, root)
        query = ["query", "X", "--file", "src/x.py", "--inject"]
        commands = {"pip": [str(script), *query], "baseline": [str(PYTHON), "-c", "import sqlite3"]}
        if uv:  # against its own venv's python, which loads no setuptools .pth
            commands["uv"] = [str(uv[1]), *query]
            commands["uv baseline"] = [str(uv[0]), "-c", "import sqlite3"]
        for name in ("pip", "uv"):
            if name in commands:
                check_output(commands[name], root, env)
        for _ in range(3):  # warm the page cache for all
            for argv in commands.values():
                time_once(argv, root, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(time_once(argv, root, env))
        imports = breakdown(root, env, commands["pip"]) if args.breakdown else ""
        counted = (instruction_parts(root, env, commands["pip"],
                                     uv and (uv[0], commands["uv"]))
                   if args.instructions else "")
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    result = {"runs": args.runs, "lessons": 1000,
              "baseline_median_ms": round(medians["baseline"] * 1000, 1), "target": TARGET}
    if uv:
        result["uv_baseline_median_ms"] = round(medians["uv baseline"] * 1000, 1)
    for name, base in (("pip", "baseline"), ("uv", "uv baseline")):
        if name in medians:
            result[f"{name}_median_ms"] = round(medians[name] * 1000, 1)
            result[f"{name}_ratio"] = round(medians[name] / medians[base], 2)
    checked = "uv" if uv else "pip"
    result["checked"] = checked
    result["ok"] = result[f"{checked}_ratio"] <= TARGET
    if args.json:
        print(json.dumps(result))
    else:
        print(f"medians over {args.runs} interleaved runs, 1,000 lessons")
        for name, label in (("pip", "pip install ."), ("uv", "uv tool install")):
            if f"{name}_ratio" in result:
                base = result["baseline_median_ms" if name == "pip" else "uv_baseline_median_ms"]
                print(f"query X --inject ({label}): {result[f'{name}_median_ms']} ms against "
                      f"{base} ms for that venv's python -c 'import sqlite3': "
                      f"ratio {result[f'{name}_ratio']}")
        print(f"target <= {TARGET} on the {checked} install: "
              f"{'ok' if result['ok'] else 'too slow'}")
    if imports:
        print("slowest imports of one run (cumulative; indented: imported by the line above):")
        print(imports)
    if counted:
        print("instructions executed (valgrind; each line includes the ones above it, "
              "in its group):")
        print(counted)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
