"""Index at scale: big files, shapes, skip reasons, files changing mid-run, progress, workers."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV

import ctxkit


def index(cli, *args: str) -> dict:
    result = cli("index", "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def rows(cli, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(cli.db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def generated_module(functions: int, pad: int = 0, prefix: str = "f") -> str:
    """Real code with ordinary lines, as a generator writes it: a chain of functions."""
    comment = "    # " + "generated table entry; " * (pad // 23) + "\n" if pad else ""
    parts = [f"def {prefix}0():\n    return 0\n"]
    parts += [f"\n\ndef {prefix}{i}(value=None):\n    # step {i} of the generated chain\n"
              f"{comment}    return {prefix}{i - 1}() + {i}\n" for i in range(1, functions)]
    return "".join(parts)


# --- big files -------------------------------------------------------------------


def test_files_over_one_mib_are_indexed_up_to_the_limit(cli):
    source = generated_module(5000, pad=230)
    assert len(source) > 1.5 * 2**20
    write(cli.root, "gen/big_parser.py", source)
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["skip_reasons"] == {}
    assert rows(cli, "SELECT count(*) FROM nodes WHERE kind = 'function'") == [(5000,)]
    result = cli("callers", "f4998", "--json")
    assert [r["id"] for r in result.json()["results"]] == ["gen/big_parser.py:f4999"]


def test_size_limit_from_the_option_and_from_config(cli):
    write(cli.root, "big.py", generated_module(5000, pad=230))
    write(cli.root, "small.py", "def small():\n    return 1\n")
    data = index(cli, "--max-file-mib", "1")
    assert data["files"]["indexed"] == 1 and data["skip_reasons"] == {"too_big": 1}
    (cli.root / ".ctxkit" / "config.toml").write_text("[index]\nmax_file_mib = 0.5\n")
    data = index(cli, "--full")
    assert data["skip_reasons"] == {"too_big": 1}
    (cli.root / ".ctxkit" / "config.toml").write_text("[index]\nmax_file_mib = 4\n")
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["skip_reasons"] == {}
    assert rows(cli, "SELECT count(*) FROM files") == [(2,)]


@pytest.mark.parametrize("setting", ["0", "-1", '"big"', "5000"])
def test_bad_size_limit_is_one_line(cli, setting):
    (cli.root / ".ctxkit").mkdir(exist_ok=True)
    (cli.root / ".ctxkit" / "config.toml").write_text(f"[index]\nmax_file_mib = {setting}\n")
    write(cli.root, "a.py", "def a():\n    pass\n")
    result = cli("index")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "index.max_file_mib" in result.err and "Traceback" not in result.err


def test_bad_option_values_are_usage_errors(cli):
    for args in (["--max-file-mib", "0"], ["--jobs", "0"], ["--jobs", "100000"]):
        result = cli("index", *args)
        assert result.code == 2 and result.err.count("\n") == 1, (args, result.err)


# --- shapes ----------------------------------------------------------------------


def test_minified_code_is_told_apart_by_shape_not_size(cli):
    body = ";".join(f"function f{i}(a){{return a+{i}}}" for i in range(3000))
    write(cli.root, "dist/app.min.js", "/*! bundle v1 */\n" + body + "\n")
    readable = "".join(f"function g{i}(a) {{\n  return a + {i};\n}}\n" for i in range(3000))
    write(cli.root, "src/app.js", readable)  # as big, ordinary lines
    # Real code that holds one long data line: most bytes are still on short lines.
    code = generated_module(400)
    write(cli.root, "src/table.py", "TABLE = '" + "ab" * 2000 + "'\n" + code)
    # Generated formulas: nearly all bytes on long lines, yet lines a person reads.
    formula = " + ".join(f"x**{i}*y" for i in range(300))
    write(cli.root, "src/formulas.py", "class Quintic:\n" + "".join(
        f"    @property\n    def f{i}(self):\n        return {formula}\n\n" for i in range(10)))
    data = index(cli)
    assert data["skip_reasons"] == {"minified": 1}
    assert data["files"]["indexed"] == 3
    paths = {r[0] for r in rows(cli, "SELECT path FROM files")}
    assert paths == {"src/app.js", "src/table.py", "src/formulas.py"}


def test_summary_names_the_skip_reasons(cli):
    write(cli.root, "ok.py", "def f():\n    return 1\n")
    write(cli.root, "blob.py", b"\x00\x01def f(): pass\n")
    write(cli.root, "README.md", "# hello\n")
    result = cli("index")
    assert result.code == 0
    assert "2 skipped: 1 language, 1 binary;" in result.out


# --- files that change or vanish while the run reads them -------------------------


class ChangingFile:
    """Appends to ``target`` between the read and the second fstat of the first ``times``
    reads: the file really changes on disk at the worst moment."""

    def __init__(self, monkeypatch, target: Path, times: int):
        self.target, self.left, self.real = str(target), times, os.fstat
        self.calls: dict[int, int] = {}
        monkeypatch.setattr(ctxkit.os, "fstat", self)

    def __call__(self, fd: int) -> os.stat_result:
        if os.readlink(f"/proc/self/fd/{fd}") == self.target and self.left > 0:
            self.calls[fd] = self.calls.get(fd, 0) + 1
            if self.calls[fd] == 2:  # after the read
                self.left -= 1
                self.calls.pop(fd)
                with open(self.target, "a") as handle:
                    handle.write(f"\n\ndef grown_{self.left}():\n    pass\n")
        return self.real(fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_file_changing_while_read_is_read_again(cli, monkeypatch):
    path = write(cli.root, "a.py", "def a():\n    pass\n")
    ChangingFile(monkeypatch, path.resolve(), times=1)
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["skip_reasons"] == {}
    names = {r[0] for r in rows(cli, "SELECT name FROM nodes WHERE kind = 'function'")}
    assert names == {"a", "grown_0"}  # the state after the change, whole


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_file_that_keeps_changing_is_reported_and_keeps_its_last_state(cli, monkeypatch):
    path = write(cli.root, "a.py", "def a():\n    pass\n")
    write(cli.root, "b.py", "def b():\n    return a()\n")
    index(cli)
    path.write_text("def a():\n    pass\n\n\ndef a2():\n    pass\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 3_000_000_000))
    with monkeypatch.context() as patch:
        ChangingFile(patch, path.resolve(), times=10)
        result = cli("index", "--json")
    assert result.code == 0
    data = result.json()
    assert data["skip_reasons"] == {"changing": 1}
    assert "a.py kept changing while it was read" in result.err
    names = {r[0] for r in rows(cli, "SELECT name FROM nodes WHERE path = 'a.py' "
                                     "AND kind = 'function'")}
    assert names == {"a"}  # the last complete state, not a half-read one
    data = index(cli)  # the next run completes it
    assert data["files"]["indexed"] == 1
    names = {r[0] for r in rows(cli, "SELECT name FROM nodes WHERE path = 'a.py' "
                                     "AND kind = 'function'")}
    assert {"a", "a2"} <= names


class Hung(BaseException):
    """The run blocked: raised by the alarm a test sets."""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_file_replaced_by_a_named_pipe_after_the_scan(cli, monkeypatch):
    """Between the listing and the read a file becomes a named pipe: the run neither
    blocks on it (an open() waits for a writer for ever) nor indexes it; it has
    vanished (removed, when it was indexed)."""
    import signal
    write(cli.root, "a.py", "def a():\n    pass\n")
    write(cli.root, "b.py", "def b():\n    return 1\n")
    index(cli)
    write(cli.root, "a.py", "def a():\n    return b()\n")
    write(cli.root, "c.py", "def c():\n    pass\n")
    real = ctxkit._plan_file

    def swapping(env, rel, old, full, run):
        job = real(env, rel, old, full, run)
        if rel in ("a.py", "c.py"):
            assert isinstance(job, ctxkit.ParseJob)
            os.unlink(cli.root / rel)
            os.mkfifo(cli.root / rel)
        return job
    monkeypatch.setattr(ctxkit, "_plan_file", swapping)

    def hung(signum, frame):
        raise Hung
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        data = index(cli)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert data["files"]["removed"] == 1 and data["skip_reasons"] == {"vanished": 1}
    assert rows(cli, "SELECT path FROM files") == [("b.py",)]


def test_link_pointed_outside_the_root_after_the_scan(cli, monkeypatch, tmp_path):
    """A link the listing found pointing inside the root is pointed outside it before the
    read: what is read is the file the listing checked, never the one outside; and a
    file made a link after the listing is not followed (left for the next run, which
    finds the link and leaves it out)."""
    outside = tmp_path / "outside.py"
    outside.write_text("def stolen_secret():\n    pass\n")
    write(cli.root, "real.py", "def inside():\n    pass\n")
    os.symlink("real.py", cli.root / "alias.py")
    write(cli.root, "plain.py", "def plain():\n    pass\n")
    real = ctxkit._plan_file

    def retargeting(env, rel, old, full, run):
        job = real(env, rel, old, full, run)
        if rel in ("alias.py", "plain.py"):
            os.unlink(cli.root / rel)
            os.symlink(outside, cli.root / rel)
        return job
    with monkeypatch.context() as patch:
        patch.setattr(ctxkit, "_plan_file", retargeting)
        result = cli("index", "--json")
    assert result.code == 0, result.err
    assert result.json()["skip_reasons"] == {"changing": 1}
    assert "plain.py kept changing" in result.err
    names = {r[0] for r in rows(cli, "SELECT name FROM nodes WHERE kind = 'function'")}
    assert names == {"inside"}  # real.py, and alias.py read as the real.py it named
    data = index(cli)
    assert data["skip_reasons"] == {"outside_root": 2}
    names = {r[0] for r in rows(cli, "SELECT name FROM nodes WHERE kind = 'function'")}
    assert names == {"inside"}


def test_change_within_the_same_timestamp_tick_is_seen_next_run(cli, monkeypatch):
    path = write(cli.root, "a.py", "def old():\n    pass\n")
    stamp = path.stat().st_mtime_ns
    # Read 1 ms after the write, however loaded the machine is: too recent to trust.
    with monkeypatch.context() as patch:
        patch.setattr(ctxkit.time, "time_ns", lambda: stamp + 1_000_000)
        index(cli)
    assert rows(cli, "SELECT mtime_ns FROM files") == [(-1,)]
    path.write_text("def new():\n    pass\n")  # same size
    os.utime(path, ns=(stamp, stamp))  # and the same mtime: size and mtime cannot tell
    data = index(cli)
    assert data["files"]["indexed"] == 1
    assert rows(cli, "SELECT name FROM nodes WHERE kind = 'function'") == [("new",)]


def test_old_file_is_trusted_by_size_and_mtime(cli, monkeypatch):
    path = write(cli.root, "a.py", "def a():\n    pass\n")
    past = path.stat().st_mtime_ns - 60_000_000_000
    os.utime(path, ns=(past, past))
    index(cli)
    assert rows(cli, "SELECT mtime_ns FROM files") == [(past,)]
    monkeypatch.setattr(ctxkit, "_graph_parse_job", lambda job: pytest.fail(f"read {job[0]}"))
    assert index(cli)["files"]["unchanged"] == 1


# --- progress and workers ------------------------------------------------------------


def many_files(root: Path, count: int) -> None:
    for i in range(count):
        write(root, f"pkg/m{i}.py", generated_module(40, prefix=f"m{i}_f"))


@pytest.mark.slow                    # three full indexes of 400 files
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a pty")
def test_progress_on_a_terminal_only(cli):
    import pty
    import subprocess
    many_files(cli.root, 400)  # one worker, so that the parse lasts past the meter's 0.5 s
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}

    def run_on_pty(*args: str) -> tuple[int, bytes]:
        leader, follower = pty.openpty()
        proc = subprocess.Popen([*CONSOLE_ARGV, *args], cwd=cli.root,
                                env=env, stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
        os.close(leader)
        return proc.wait(timeout=300), seen

    code, seen = run_on_pty("index", "--full", "--jobs", "1")
    assert code == 0
    assert b"index: parse" in seen and b"files" in seen and b"lines/s" in seen
    assert b"/400 files (250 stored), " in seen  # rows are written while files parse
    # Each phase with its counts and rate: the files whose calls are resolved, then the
    # indexes a load into empty tables builds at the end.
    assert b"index: resolve 400/400 files, " in seen and b" calls/s" in seen
    assert f"index: store 0/{len(ctxkit.GRAPH_INDEXES)} indexes".encode() in seen
    assert seen.index(b"index: parse") < seen.index(b"index: resolve") < \
        seen.index(b"index: store")
    assert seen.endswith(b"\r\x1b[K")  # the line is cleared at the end
    code, seen = run_on_pty("index", "--full", "-q")
    assert code == 0 and seen == b""
    piped = cli.sub("index", "--full")
    assert piped.code == 0 and piped.err == ""


def test_worker_count_from_config_and_option(cli, monkeypatch, tmp_path):
    """[index] jobs in config.toml caps the processes that parse; --jobs wins over it."""
    many_files(cli.root, 60)
    pids = tmp_path / "pids"
    original = ctxkit._graph_parse_job

    def noting(job):
        with open(pids, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        return original(job)
    noting.__module__, noting.__qualname__ = "ctxkit", "_graph_parse_job"  # pickled by name
    monkeypatch.setattr(ctxkit, "_graph_parse_job", noting)

    def parsers(*args: str) -> set[str]:
        pids.unlink(missing_ok=True)
        assert index(cli, "--full", *args)["files"]["indexed"] == 60
        return set(pids.read_text().split())
    config = cli.root / ".ctxkit" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("[index]\njobs = 1\n")
    assert parsers() == {str(os.getpid())}  # in this process: no worker at all
    config.write_text("[index]\njobs = 3\n")
    seen = parsers()
    assert len(seen) == 3 and str(os.getpid()) not in seen
    assert parsers("--jobs", "1") == {str(os.getpid())}


@pytest.mark.parametrize("setting", ["0", "300", '"all"', "true", "1.5"])
def test_bad_jobs_setting_is_one_line(cli, setting):
    (cli.root / ".ctxkit").mkdir(exist_ok=True)
    (cli.root / ".ctxkit" / "config.toml").write_text(f"[index]\njobs = {setting}\n")
    write(cli.root, "a.py", "def a():\n    pass\n")
    result = cli("index")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "index.jobs in " in result.err and "fix it or delete the line" in result.err


def test_worker_count_follows_the_affinity_mask(cli, monkeypatch):
    monkeypatch.delattr(ctxkit.os, "process_cpu_count", raising=False)
    monkeypatch.setattr(ctxkit.os, "sched_getaffinity", lambda pid: {0, 3, 5})
    assert ctxkit.usable_cpus() == 3


EDGES = ("SELECT e.kind, s.uid, d.uid, e.dst_name, e.line, e.confidence FROM edges e "
         "JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id "
         "ORDER BY 2, 5, 1, 4, 3")


def test_one_worker_and_many_give_the_same_graph(cli):
    """Parsing and call resolution in 3 workers (enough files to fork for both) give
    the rows of one process."""
    count = ctxkit.GRAPH_PARALLEL_RESOLVE_FILES + 10
    for i in range(count):
        write(cli.root, f"pkg/m{i}.py", f"from pkg.m{(i + 1) % count} import f{(i + 1) % count}\n"
              f"\n\nclass C{i}:\n    def run(self):\n        return self.step() + f{i}()\n\n"
              f"    def step(self):\n        return C{i}()\n\n\ndef f{i}():\n"
              f"    return f{(i + 1) % count}() + len([])\n")
    write(cli.root, "pkg/__init__.py", "")
    index(cli, "--jobs", "1")
    nodes = rows(cli, "SELECT uid, kind, line, signature FROM nodes ORDER BY uid")
    edges = rows(cli, EDGES)
    assert {r[2] for r in edges if r[0] == "calls"} >= {"pkg/m1.py:f1", "pkg/m5.py:C5.step"}
    (cli.root / ".ctxkit" / "ctxkit.db").unlink()
    # A process of its own: small enough for resolving workers to fit the budget.
    result = cli.sub("index", "--jobs", "3")
    assert result.code == 0, result.err
    assert rows(cli, "SELECT uid, kind, line, signature FROM nodes ORDER BY uid") == nodes
    assert rows(cli, EDGES) == edges


def test_the_parent_resolves_beside_its_workers(cli, monkeypatch, tmp_path):
    """With room in the memory budget for two resolving processes, one worker is
    forked and the parent resolves chunks too (it used to fork the workers and wait,
    so a budget with room for two resolved in one); the edges are one process's."""
    count = 24
    for i in range(count):
        write(cli.root, f"pkg/m{i}.py", f"from pkg.m{(i + 1) % count} import f{(i + 1) % count}"
              f"\n\n\nclass C{i}:\n    def run(self):\n        return self.step()\n\n"
              f"    def step(self):\n        return f{i}()\n\n\ndef f{i}():\n"
              f"    return f{(i + 1) % count}()\n")
    index(cli, "--jobs", "1")
    edges = rows(cli, EDGES)
    (cli.root / ".ctxkit" / "ctxkit.db").unlink()
    pids = tmp_path / "pids"
    original = ctxkit._resolve_chunk

    def noting(files):
        with open(pids, "a") as handle:
            handle.write(f"{os.getpid()}\n")
        return original(files)
    noting.__module__, noting.__qualname__ = "ctxkit", "_resolve_chunk"  # pickled by name
    monkeypatch.setattr(ctxkit, "_resolve_chunk", noting)
    monkeypatch.setattr(ctxkit, "GRAPH_PARALLEL_RESOLVE_FILES", 10)
    monkeypatch.setattr(ctxkit, "_resident_bytes", lambda: ctxkit.GRAPH_RESOLVE_BUDGET // 4)
    index(cli, "--full", "--jobs", "2")
    seen = set(pids.read_text().split()) if pids.exists() else set()
    assert str(os.getpid()) in seen and len(seen) == 2, seen
    assert rows(cli, EDGES) == edges


# --- interrupted runs ---------------------------------------------------------------


def index_names(cli) -> set[str]:
    return {r[0] for r in rows(cli, "SELECT name FROM sqlite_master WHERE type = 'index' "
                                    "AND name NOT LIKE 'sqlite_%'")}


def test_interrupted_bulk_load_is_completed_by_the_next_run(cli, monkeypatch):
    """Ctrl-C while a first full index resolves: its indexes were dropped for the load;
    the next run builds them and finishes the resolution."""
    many_files(cli.root, 5)
    write(cli.root, "pkg/use.py", "from pkg.m1 import m1_f3\n\n\ndef caller():\n"
                                  "    return m1_f3()\n")

    def interrupted(*args):
        raise KeyboardInterrupt
    with monkeypatch.context() as patch:
        patch.setattr(ctxkit, "_resolve_run", interrupted)
        result = cli("index")
    assert result.code == 130
    assert not {"nodes_name", "edges_dst"} & index_names(cli)  # left for the next run
    assert rows(cli, "SELECT count(*) FROM edges WHERE kind = 'calls'") == [(0,)]
    data = index(cli)
    assert {"nodes_name", "nodes_qualname", "nodes_file", "edges_src", "edges_dst"} <= \
        index_names(cli)
    assert data["files"]["indexed"] == 6  # stored but unresolved: done again
    result = cli("callers", "pkg/m1.py:m1_f3", "--json")
    assert {r["id"] for r in result.json()["results"]} >= {"pkg/use.py:caller"}


def test_bulk_load_only_into_empty_tables(cli):
    write(cli.root, "a.py", "def a():\n    return b()\n\n\ndef b():\n    pass\n")
    index(cli)
    assert "edges_dst" in index_names(cli)
    write(cli.root, "c.py", "def c():\n    return a()\n")
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        seen = []
        with ctxkit._bulk_load(db):
            seen = {r[0] for r in db.query("SELECT name FROM sqlite_master WHERE type = "
                                           "'index'")}
    finally:
        db.close()
    assert "edges_dst" in seen  # another project's reads keep their indexes
