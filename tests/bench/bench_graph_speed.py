#!/usr/bin/env python3
"""Speed of `ctxkit index` on this interpreter's standard library against universal-ctags.

Copies every ``*.py`` of ``Lib/`` (leaving out ``test/`` folders and
``site-packages/``) into tests/bench/.work/stdlib/, then times, in the same
run and on the same files:

  ctags -R --languages=Python --extras=+r      (best of 3)
  ctxkit index     full, on an empty database
  ctxkit index     again, nothing changed

Peak memory is the largest sum of resident memory over ctxkit's process tree
(the parent and its parse workers), sampled every 10 ms from /proc, and also
the peak RSS of the largest single process (getrusage of children).

Also printed: the CPU seconds (user + system of the whole process tree, from
getrusage) of both tools, which stay comparable when other programs share the
machine and stretch the wall-clock times.

Targets: full <= 6x ctags; unchanged <= 0.1x full; peak <= 400 MB.
Run:  python tests/bench/bench_graph_speed.py
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "stdlib"
CTXKIT = HERE.parent.parent / "ctxkit.py"
CTAGS = shutil.which("ctags") or "/usr/bin/ctags"


def copy_stdlib() -> int:
    source = Path(sysconfig.get_paths()["stdlib"])
    shutil.rmtree(WORK, ignore_errors=True)
    count = 0
    for folder, dirs, files in os.walk(source):
        rel = Path(folder).relative_to(source)
        dirs[:] = sorted(d for d in dirs if d not in ("test", "site-packages", "__pycache__")
                         and not d.startswith("config-"))
        for name in files:
            if name.endswith(".py"):
                (WORK / rel).mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(folder) / name, WORK / rel / name)
                count += 1
    subprocess.run(["git", "init", "-q"], cwd=WORK, check=True)
    return count


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        total += rss.get(current, 0)
        stack.extend(children.get(current, ()))
    return total


def timed_ctxkit(*args: str) -> tuple[float, dict, int, float]:
    cpu = children_cpu()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(CTXKIT), *args, "--json"], cwd=WORK,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.01)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"ctxkit {' '.join(args)} failed: {err.strip()}")
    return elapsed, json.loads(out), peak, children_cpu() - cpu


def timed_ctags() -> tuple[float, float]:
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        cpu = children_cpu()
        started = time.perf_counter()
        subprocess.run([CTAGS, "-R", "--languages=Python", "--extras=+r", "-f",
                        str(WORK.parent / "stdlib.tags"), "."], cwd=WORK, check=True)
        best = min(best, time.perf_counter() - started)
        best_cpu = min(best_cpu, children_cpu() - cpu)
    return best, best_cpu


def main() -> int:
    files = copy_stdlib()
    lines = sum(p.read_bytes().count(b"\n") for p in WORK.rglob("*.py"))
    print(f"stdlib copy: {files} files, {lines} lines ({WORK})")
    load = os.getloadavg()[0]
    ctags, ctags_cpu = timed_ctags()
    full, summary, peak, full_cpu = timed_ctxkit("index")
    unchanged, again, _, unchanged_cpu = timed_ctxkit("index")
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    assert again["files"]["unchanged"] == summary["files"]["indexed"], again
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores")
    print(f"ctags -R --languages=Python --extras=+r: {ctags:.2f}s, {ctags_cpu:.2f}s CPU "
          f"(best of 3)")
    print(f"ctxkit index, full:      {full:.2f}s  ({summary['nodes']} nodes, "
          f"{summary['edges']} edges)  = {full / ctags:.1f}x ctags (target <= 6x)")
    print(f"ctxkit index, unchanged: {unchanged:.2f}s  = {unchanged / full:.3f}x full "
          f"(target <= 0.1x)")
    print(f"CPU: full {full_cpu:.2f}s = {full_cpu / ctags_cpu:.1f}x ctags CPU; full CPU / 2 "
          f"cores = {full_cpu / 2 / ctags:.1f}x ctags wall; unchanged {unchanged_cpu:.2f}s")
    print(f"peak memory: {peak / 2**20:.0f} MB over the process tree, "
          f"{largest / 2**20:.0f} MB largest single process (target <= 400 MB)")
    ok = full <= 6 * ctags and unchanged <= 0.1 * full and peak <= 400 * 2**20
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
