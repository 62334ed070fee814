#!/usr/bin/env python3
"""Start-up of the agent path per install: regular vs editable, with and without bytecode.

Agents run ``ctxkit query X --inject`` and the pre-edit hook before every edit,
so how ctxkit is installed decides how fast they start. This script installs
this worktree four ways into venvs under tests/bench/.work/install/:

    regular            pip install .      (pip compiles the module's bytecode)
    regular, no pyc    the same, run with PYTHONDONTWRITEBYTECODE=1
    editable           pip install -e     (from a copy of the worktree)
    editable, no pyc   pip install -e     of another copy, always run with
                       PYTHONDONTWRITEBYTECODE=1, so it never has bytecode

and times, interleaved in the same rounds, each install's ``ctxkit`` console
script running ``query X --file src/x.py --inject`` (1,000 lessons) and
``hook pre-tool-use`` for an Edit payload (an indexed repository, the edited
symbol at risk 11.5, so the inject block is printed), against
``python -c "import sqlite3"`` on the regular venv's interpreter. Targets for
the regular install: inject <= 1.5x, hook <= 2x. It also runs each install's
``install-hooks --dry-run --json`` and prints what it reports in
``slow_start`` (expected: nothing for the regular install, the editable
import hook for the editable ones, and the missing bytecode for the last).

    python tests/bench/bench_install.py [--runs 15] [--files 400] [--json]

The installs build with pip's usual build isolation (setuptools from the
package index) and skip the dependencies: the paths timed here import none.
The lessons and the graph are written by this interpreter's ctxkit.py, which
needs tree-sitter for the index (the test venv has it).
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
from bench_hooks import MODULE, edit_payload, target_path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = HERE / ".work" / "install"
TARGETS = {"inject": 1.5, "hook": 2.0}
INSTALLS = (  # name, venv, editable source copy (None: regular), PYTHONDONTWRITEBYTECODE
    ("regular", "regular", None, False),
    ("regular, no pyc", "regular", None, True),
    ("editable", "editable", "src_editable", False),
    ("editable, no pyc", "editable_nopyc", "src_editable_nopyc", True),
)


def pip_install(venv: Path, source: Path, editable: bool) -> Path:
    """The venv's ctxkit console script after installing ``source`` into it."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    for leftover in ("build", "ctxkit.egg-info"):
        shutil.rmtree(source / leftover, ignore_errors=True)
    command = [str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps"]
    subprocess.run([*command, *(["-e"] if editable else []), str(source)], check=True,
                   stdout=subprocess.DEVNULL)
    for leftover in ("build", "ctxkit.egg-info"):
        shutil.rmtree(source / leftover, ignore_errors=True)
    return venv / "bin" / "ctxkit"


def source_copy(name: str) -> Path:
    """A copy of what pip needs from the worktree, so an editable install's bytecode
    (or its absence) belongs to it alone."""
    copy = WORK / name
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for item in ("ctxkit.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / item, copy / item)
    return copy


def environment(no_pyc: bool) -> dict[str, str]:
    env = installed.clean_env()
    if no_pyc:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr}")
    return proc.stdout


def timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> float:
    started = time.perf_counter()
    run(argv, cwd, env, stdin)
    return time.perf_counter() - started


def lessons_repo(root: Path) -> None:
    """1,000 lessons (200 on X) through ctxkit's own recording function."""
    (root / ".git").mkdir()
    sys.path.insert(0, str(ROOT))
    import ctxkit

    env = ctxkit.make_env(cwd=root)
    for i in range(200):
        ctxkit.record_lesson(env, "fail" if i % 5 else "success", "X",
                             f"lesson {i}: the cache key must include the tenant id",
                             file="src/x.py")
    for i in range(800):
        ctxkit.record_lesson(env, "fail", f"Other{i % 100}.run", f"other lesson {i}",
                             file=f"src/other{i % 100}.py")


def graph_repo(root: Path, files: int) -> None:
    """``files`` modules indexed by this worktree's ctxkit.py, 4 lessons on the edit target."""
    for n in range(files):
        path = root / "pkg" / f"sub{n % 40:02d}" / f"module_{n:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MODULE.format(n=n))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=b@example.com"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run([*git, *args], cwd=root, check=True, capture_output=True)
    source = [sys.executable, str(ROOT / "ctxkit.py")]
    env = environment(False)
    run([*source, "index"], root, env)
    target = files // 2
    for n in range(4):
        run([*source, "fail", f"Service{target}.validate", f"None token crashed it ({n})",
             "--file", target_path(target)], root, env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    scripts = {}
    for _, venv, copy, _ in INSTALLS:
        if venv not in scripts:
            source = source_copy(copy) if copy else ROOT
            scripts[venv] = pip_install(WORK / venv, source, editable=copy is not None)
    baseline = [str(WORK / "regular" / "bin" / "python"), "-c", "import sqlite3"]
    with tempfile.TemporaryDirectory(prefix="ctxkit-bench-") as tmp:
        lessons, graph = Path(tmp) / "lessons", Path(tmp) / "graph"
        lessons.mkdir()
        graph.mkdir()
        lessons_repo(lessons)
        graph_repo(graph, args.files)
        body = edit_payload(graph, args.files)
        calls = {"inject": (["query", "X", "--file", "src/x.py", "--inject"], lessons, None),
                 "hook": (["hook", "pre-tool-use"], graph, body)}
        slow_start = {}
        for name, venv, _, no_pyc in INSTALLS:
            env = environment(no_pyc)
            for call, (argv, cwd, stdin) in calls.items():
                if "PAST EXPERIENCE" not in run([str(scripts[venv]), *argv], cwd, env, stdin):
                    raise SystemExit(f"{name}: {call} printed no inject block")
            report = run([str(scripts[venv]), "install-hooks", "--dry-run", "--json"],
                         graph, env)
            slow_start[name] = json.loads(report)["slow_start"]
        times: dict[tuple[str, str], list[float]] = {}
        base: list[float] = []
        for round_ in range(args.runs + 2):          # two warm-up rounds, not counted
            base_time = timed(baseline, lessons, environment(False))
            for name, venv, _, no_pyc in INSTALLS:
                for call, (argv, cwd, stdin) in calls.items():
                    elapsed = timed([str(scripts[venv]), *argv], cwd, environment(no_pyc),
                                    stdin)
                    if round_ >= 2:
                        times.setdefault((name, call), []).append(elapsed)
            if round_ >= 2:
                base.append(base_time)
    base_ms = statistics.median(base) * 1000
    rows = []
    for name, *_ in INSTALLS:
        row = {"install": name, "slow_start": slow_start[name]}
        for call in calls:
            ms = statistics.median(times[(name, call)]) * 1000
            row[f"{call}_ms"] = round(ms, 1)
            row[f"{call}_ratio"] = round(ms / base_ms, 2)
        rows.append(row)
    regular = rows[0]
    ok = all(regular[f"{call}_ratio"] <= target for call, target in TARGETS.items())
    ok = ok and not regular["slow_start"] and all(row["slow_start"] for row in rows[2:])
    result = {"runs": args.runs, "files": args.files, "baseline_ms": round(base_ms, 1),
              "installs": rows, "targets": TARGETS, "ok": ok}
    if args.json:
        print(json.dumps(result))
        return 0 if ok else 1
    print(f"baseline python -c 'import sqlite3': {base_ms:.1f} ms median over {args.runs} "
          f"rounds (query --inject: 1,000 lessons; hook: Edit, {args.files} indexed files)")
    print(f"{'install':<18} {'query --inject':>22} {'hook pre-tool-use':>22}  install-hooks says")
    for row in rows:
        said = "; ".join(row["slow_start"]) or "(nothing: starts fast)"
        print(f"{row['install']:<18} {row['inject_ms']:>9.1f} ms {row['inject_ratio']:>6.2f}x "
              f"{row['hook_ms']:>11.1f} ms {row['hook_ratio']:>6.2f}x  {said}")
    print(f"regular install targets: inject <= {TARGETS['inject']}x, hook <= "
          f"{TARGETS['hook']}x; {'ok' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
