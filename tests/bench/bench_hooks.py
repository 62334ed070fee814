#!/usr/bin/env python3
"""Benchmark of the hook path and of the restore size.

1. Median wall time of `ctxkit hook pre-tool-use` for a Claude Code Edit
   payload on an indexed repository of 2,000 files (the edited symbol has
   lessons at risk 11.5, so the inject block is printed: the full path),
   against `python -c "import sqlite3"`, interleaved in the same run.
   Target: ratio <= 2. The hook is started the way users start it: this
   worktree is pip-installed into a venv under tests/bench/.work/venv and its
   `ctxkit` console script runs (the module comes from the .pyc pip
   compiled); the baseline runs on the same venv's python. Also checked: the
   hook process never imports tree_sitter, tree_sitter_language_pack,
   tiktoken or argparse (it is answered by the fast path).
2. Restore output size for a session with 200 modified files and 100 notes:
   under 10,000 characters with the task, the changed files and the
   checklist intact.

Run:  python tests/bench/bench_hooks.py [--files 2000] [--runs 25]
Work files go to tests/bench/.work/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import installed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = HERE / ".work"
HEAVY = ("tree_sitter", "tree_sitter_language_pack", "tiktoken", "argparse")
PYTHON, SCRIPT = Path(sys.executable), Path("ctxkit")  # the venv's, once installed

MODULE = '''"""Module {n}."""


class Service{n}:
    def __init__(self, store):
        self.store = store

    def validate(self, token):
        if token is None:
            raise ValueError("no token {n}")
        record = self.store.get(token)
        return record is not None

    def refresh(self, token):
        record = self.store.get(token)
        record.renew()
        return record


def helper_{n}(value):
    return Service{n}(None).validate(value)
'''


def env() -> dict[str, str]:
    # A user's Python writes bytecode caches (and pip compiles them at install);
    # PYTHONDONTWRITEBYTECODE would make every start compile ctxkit.py again.
    return installed.clean_env()


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=b@example.com", *args],
                   cwd=repo, check=True, capture_output=True)


def ctxkit(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], cwd=repo, input=stdin,
                          capture_output=True, text=True, env=env(), check=False)


def build_repo(files: int) -> Path:
    repo = WORK / f"repo_{files}"
    if (repo / ".ctxkit" / "ctxkit.db").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    for n in range(files):
        path = repo / "pkg" / f"sub{n % 40:02d}" / f"module_{n:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(MODULE.format(n=n))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bench repository")
    started = time.perf_counter()
    result = ctxkit(repo, "index", "--json")
    if result.returncode != 0:
        sys.exit(f"index failed: {result.stderr}")
    print(f"indexed {files} files in {time.perf_counter() - started:.1f}s: "
          f"{json.loads(result.stdout)['nodes']} nodes")
    target = files // 2
    for n in range(4):
        ctxkit(repo, "fail", f"Service{target}.validate", f"None token crashed it ({n})",
               "--file", target_path(target))
    return repo


def target_path(target: int) -> str:
    return f"pkg/sub{target % 40:02d}/module_{target:04d}.py"


def edit_payload(repo: Path, files: int) -> str:
    target = repo / target_path(files // 2)
    number = files // 2
    return json.dumps({
        "session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": str(repo),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": str(target),
                       "old_string": "        if token is None:\n"
                                     f"            raise ValueError(\"no token {number}\")",
                       "new_string": "        if not token:\n"
                                     f"            raise ValueError(\"no token {number}\")"},
        "tool_use_id": "toolu_bench"})


def timed(command: list[str], cwd: Path, stdin: str | None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env(), check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{command} failed: {proc.stderr}")
    return elapsed


def bench_hook(files: int, runs: int) -> bool:
    repo = build_repo(files)
    body = edit_payload(repo, files)
    hook_cmd = [str(SCRIPT), "hook", "pre-tool-use"]
    check = subprocess.run([str(PYTHON), "-X", "importtime", *hook_cmd], cwd=repo, input=body,
                           capture_output=True, text=True, env=env(), check=False)
    block = json.loads(check.stdout)["hookSpecificOutput"]["additionalContext"]
    loaded = {line.split("|")[-1].strip() for line in check.stderr.splitlines()
              if line.startswith("import time:")}
    heavy = ",".join(m for m in HEAVY if m in loaded)
    base_cmd = [str(PYTHON), "-c", "import sqlite3"]
    for _ in range(3):
        timed(hook_cmd, repo, body)
        timed(base_cmd, repo, None)
    hook_times, base_times = [], []
    for _ in range(runs):
        hook_times.append(timed(hook_cmd, repo, body))
        base_times.append(timed(base_cmd, repo, None))
    hook_ms = statistics.median(hook_times) * 1000
    base_ms = statistics.median(base_times) * 1000
    ratio = hook_ms / base_ms
    script_ms = statistics.median(
        timed([str(PYTHON), str(ROOT / "ctxkit.py"), "hook", "pre-tool-use"], repo, body)
        for _ in range(5)) * 1000
    stdlib_ms = statistics.median(timed([str(PYTHON), "-c", STDLIB], repo, None)
                                  for _ in range(9)) * 1000
    ok = ratio <= 2 and not heavy and "[PAST EXPERIENCE" in block
    print(f"hook pre-tool-use (Edit, {files} files, inject block {len(block)} chars): "
          f"median {hook_ms:.1f} ms over {runs} runs")
    print(f"python -c 'import sqlite3':                 median {base_ms:.1f} ms")
    print(f"ratio {ratio:.2f} (target <= 2)  heavy modules imported: {heavy or 'none'}  "
          f"{'PASS' if ok else 'FAIL'}")
    print(f"floor: a process importing only what the fast path needs (and pip's script "
          f"imports): {stdlib_ms:.1f} ms (ratio {stdlib_ms / base_ms:.2f})")
    print(f"(for information: `python ctxkit.py hook ...`, no bytecode cache for a script: "
          f"{script_ms:.1f} ms)")
    return ok


STDLIB = "import re, os, sys, sqlite3, json, collections"


def bench_restore() -> bool:
    repo = WORK / "restore_session"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    for n in range(200):
        path = repo / "services" / f"area_{n % 10}" / f"component_{n:03d}_handler.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value = {n}\n")
    kinds = ("decision", "todo", "pending", "error", "test")
    for n in range(100):
        ctxkit(repo, "note", kinds[n % 5],
               f"note {n}: the retry budget must stay under the gateway timeout, see T-{n}")
    task = ("## Current task\n- T-77: move the session store to Redis without changing the API\n"
            "## Progress\n- [x] store interface extracted\n- [ ] Redis adapter\n")
    ctxkit(repo, "snapshot", "save", "-m", task)
    text = ctxkit(repo, "snapshot", "restore").stdout
    full = (repo / ".context-snapshot.md").read_text()
    intact = all(part in text for part in (
        "CONTEXT SNAPSHOT restored by `ctxkit snapshot restore`",
        "- T-77: move the session store to Redis",
        "- [ ] Redis adapter", "## Modified files", "## Restore checklist",
        "- [ ] Work resumed from Current task"))
    files_kept = sum(1 for line in text.splitlines() if line.startswith("- services/"))
    ok = len(text) < 10000 and intact
    print(f"restore: {len(text)} characters (snapshot itself {len(full)}), {files_kept} of 200 "
          f"files listed, task/progress/checklist intact: {intact}  {'PASS' if ok else 'FAIL'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    global PYTHON, SCRIPT
    PYTHON, SCRIPT = installed.install()
    results = [bench_hook(args.files, args.runs), bench_restore()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
