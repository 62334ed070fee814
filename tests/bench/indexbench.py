"""What the index benchmarks share: the corpora, ctags, and a timed ctxkit run.

Corpora (built once under tests/bench/.work/, which git ignores):

  stdlib   every ``*.py`` of this interpreter's ``Lib/`` except the folders
           ``test``, ``tests``, ``idle_test``, ``site-packages`` and
           ``__pycache__`` (on CPython 3.11: 733 files, 327k lines).
  sympy    the sympy 1.14.0 and mpmath 1.3.0 source distributions from PyPI,
           side by side in one tree (sympy vendors nothing; mpmath is its one
           dependency): 1,6xx files, 815k lines. sympy alone is 756k lines,
           under the 800k a "large repository" needs here.
  growth   the stdlib and sympy corpora copied under prefixes ``c00/``,
           ``c01/``, ... and cut at a line count (0.5M, 1M, 2M, 5M lines):
           real files, each size a prefix of the next.

ctags gets exactly the files ctxkit indexes (``-L`` with the list from the
same ``git ls-files`` ctxkit runs, filtered by ctxkit's own extension table)
and the options this benchmark has always used (``--extras=+r``).

ctxkit runs from a copy of this worktree's ctxkit.py taken at the start, with
PYTHONDONTWRITEBYTECODE unset and a bytecode cache under .work/, so it starts
from a .pyc as an installed ctxkit does. Peak memory is sampled from /proc every 20 ms as the sum of
resident memory over the process tree (the parent and its workers; pages a
forked worker shares with its parent count twice, so this over-states), with
the sum of PSS beside it (shared pages split between their sharers: the
memory the tree really holds), and the largest single process comes from
wait4's rusage. The targets are checked on the RSS sum.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = HERE / ".work"
CTAGS = "/usr/bin/ctags"
STDLIB_SKIP = frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__"})
SDISTS = (("sympy", "1.14.0"), ("mpmath", "1.3.0"))


# -- corpora ------------------------------------------------------------------

def git_init(root: Path) -> None:
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def stdlib_tree() -> Path:
    """The stdlib corpus, copied once."""
    dest = WORK / "stdlib"
    marker = WORK / "stdlib.complete"  # outside the tree: not a file to index
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    source = Path(sysconfig.get_paths()["stdlib"])
    for folder, dirs, files in os.walk(source):
        rel = Path(folder).relative_to(source)
        dirs[:] = sorted(d for d in dirs if d not in STDLIB_SKIP and not d.startswith("config-"))
        for name in sorted(files):
            if name.endswith(".py"):
                (dest / rel).mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(folder) / name, dest / rel / name)
    git_init(dest)
    marker.write_text("")
    return dest


def sympy_tree() -> Path:
    """sympy and mpmath sdists from PyPI (pip download, cached), extracted side by side."""
    dest = WORK / "sympy"
    marker = WORK / "sympy.complete"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    downloads = WORK / "dl"
    downloads.mkdir(parents=True, exist_ok=True)
    for name, version in SDISTS:
        archive = downloads / f"{name}-{version}.tar.gz"
        if not archive.exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--no-binary", ":all:", "-d", str(downloads), f"{name}=={version}"],
                           check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
        (dest / f"{name}-{version}").rename(dest / name)
    git_init(dest)
    marker.write_text("")
    return dest


def growth_master(copies: int) -> list[tuple[str, int]]:
    """``copies`` copies of stdlib + sympy under .work/growth/master; (path, lines) in order."""
    master = WORK / "growth" / "master"
    listing = WORK / "growth" / f"master-{copies}.json"
    if listing.exists():
        return [tuple(x) for x in json.loads(listing.read_text())]
    shutil.rmtree(master, ignore_errors=True)
    order: list[tuple[str, int]] = []
    corpora = (("stdlib", stdlib_tree()), ("sympy", sympy_tree()))
    for copy in range(copies):
        for name, tree in corpora:
            for rel in source_files(tree):
                target = master / f"c{copy:02d}" / name / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(tree / rel, target)
                order.append((f"c{copy:02d}/{name}/{rel}", line_count(target)))
    listing.write_text(json.dumps(order))
    return order


def growth_tree(lines: int, order: list[tuple[str, int]]) -> tuple[Path, int, int]:
    """A tree of the first files of the master reaching ``lines``: (root, files, lines)."""
    dest = WORK / "growth" / f"lines-{lines}"
    shutil.rmtree(dest, ignore_errors=True)
    master = WORK / "growth" / "master"
    total = count = 0
    for rel, n in order:
        if total >= lines:
            break
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(master / rel, target)  # real, distinct files; linked only between sizes
        total += n
        count += 1
    if total < lines:
        raise SystemExit(f"the growth master holds only {total} lines")
    git_init(dest)
    return dest, count, total


def line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return handle.read().count(b"\n")


def source_files(root: Path) -> list[str]:
    """The files ctxkit's index reads: its own listing and extension table."""
    sys.path.insert(0, str(ROOT))
    try:
        import ctxkit
    finally:
        sys.path.pop(0)
    files = ctxkit._git_files(root) or ctxkit._walk_files(root)
    return [f for f in files if os.path.splitext(f)[1].lower() in ctxkit.GRAPH_EXTENSIONS]


def tree_lines(root: Path, files: list[str]) -> int:
    return sum(line_count(root / f) for f in files)


# -- measuring ----------------------------------------------------------------

def _stat_of(pid: int) -> tuple[int, int] | None:
    """(parent pid, resident bytes) of ``pid``."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return None


def _pss_of(pid: int) -> int:
    """Proportional set size: shared pages split between the processes sharing them."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat_of(int(entry))
            if stat is not None:
                children.setdefault(stat[0], []).append(int(entry))
    found, stack = set(), [pid]
    while stack:
        current = stack.pop()
        found.add(current)
        stack.extend(children.get(current, ()))
    return found


class Sampler:
    """Peaks of the summed RSS and PSS over a process tree, sampled in a thread."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.peak_pss, self._done = pid, 0, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pids, rescan = {self.pid}, 0.0
        while not self._done.is_set():
            now = time.monotonic()
            if now >= rescan:  # a full /proc scan costs CPU: find new workers 4x a second
                pids, rescan = _descendants(self.pid), now + 0.25
            total = 0
            for pid in pids:
                stat = _stat_of(pid)
                total += stat[1] if stat else 0
            if total > self.peak * 0.9:  # PSS costs a page-table walk: only near the peak
                self.peak_pss = max(self.peak_pss, sum(_pss_of(pid) for pid in pids))
            self.peak = max(self.peak, total)
            self._done.wait(0.02)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


def ctxkit_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXKIT_") and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    return env


def _snapshot() -> Path:
    """A copy of ctxkit.py taken when the benchmark starts: editing the worktree
    during a long run changes nothing the run measures."""
    folder = WORK / f"snapshot-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "ctxkit.py", folder / "ctxkit.py")
    atexit.register(shutil.rmtree, folder, True)
    return folder


SNAPSHOT = _snapshot()
CTXKIT_COMMAND = [sys.executable, "-c",
                  f"import sys; sys.path.insert(0, {str(SNAPSHOT)!r}); import ctxkit; "
                  f"ctxkit.entry_point()"]


class Run:
    """One measured process: wall and CPU seconds, peaks, output."""

    def __init__(self, seconds: float, cpu: float, peak_tree: int, peak_single: int,
                 out: str, err: str, code: int, peak_pss: int = 0):
        self.seconds, self.cpu = seconds, cpu
        self.peak_tree, self.peak_single, self.peak_pss = peak_tree, peak_single, peak_pss
        self.out, self.err, self.code = out, err, code

    def json(self) -> dict:
        return json.loads(self.out)


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
            sample: bool = True, check: bool = True) -> Run:
    """Run ``argv`` to the end; CPU and the largest process from wait4's rusage."""
    out_path, err_path = WORK / "run.out", WORK / "run.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        sampler = Sampler(proc.pid) if sample else None
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    peak = sampler.stop() if sampler else 0
    run = Run(seconds, usage.ru_utime + usage.ru_stime, peak, usage.ru_maxrss * 1024,
              out_path.read_text(errors="replace"), err_path.read_text(errors="replace"),
              proc.returncode, sampler.peak_pss if sampler else 0)
    if check and run.code != 0:
        raise SystemExit(f"{' '.join(argv[-4:])} failed ({run.code}): {run.err.strip()}")
    return run


def ctxkit(args: list[str], cwd: Path, sample: bool = True, check: bool = True) -> Run:
    return measure([*CTXKIT_COMMAND, *args], cwd, ctxkit_env(), sample, check)


def ctags(root: Path, files: list[str], repeats: int = 3) -> Run:
    """The fastest of ``repeats`` ctags runs over exactly ``files``."""
    listing = WORK / f"{root.name}.files"
    listing.write_text("".join(f"{f}\n" for f in files))
    best = None
    for _ in range(repeats):
        run = measure([CTAGS, "--extras=+r", "-L", str(listing), "-f",
                       str(WORK / f"{root.name}.tags")], root, sample=False)
        if best is None or run.seconds < best.seconds:
            best = run
    return best


def check_ctags() -> str:
    try:
        version = subprocess.run([CTAGS, "--version"], capture_output=True, text=True,
                                 check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        raise SystemExit(f"{CTAGS} is missing: apt-get install universal-ctags") from None
    if "Universal Ctags" not in version:
        raise SystemExit(f"{CTAGS} is not Universal Ctags: {version}")
    return version


def fresh_index(root: Path, extra: list[str] | None = None) -> Run:
    shutil.rmtree(root / ".ctxkit", ignore_errors=True)
    return ctxkit(["index", "--json", *(extra or [])], root)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def mb(value: int) -> str:
    return f"{value / 2**20:.0f} MB"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
