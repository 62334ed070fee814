"""Graph durability: a killed or concurrent `index` never loses or doubles edges.

The kill is real: `index` runs in its own process, which sends itself SIGKILL
at the start of call resolution (after every file row is committed), the
moment a crash used to leave the files "unchanged" and the calls gone.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV

import ctxkit

# Runs ctxkit's real main(); the one change is a SIGKILL where resolution starts.
KILLED_INDEX = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, sys.argv[1])
    import ctxkit
    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    ctxkit.{target} = killed
    sys.exit(ctxkit.main(sys.argv[2:]))
""")


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}


def _killed_index(root: Path, *args: str, target: str = "_resolve_run") -> int:
    proc = subprocess.run([sys.executable, "-c", KILLED_INDEX.format(target=target),
                           str(Path(ctxkit.__file__).parent), "index", *args],
                          cwd=root, env=_clean_env(), capture_output=True, timeout=120)
    return proc.returncode


def _edges(db: Path) -> list[tuple]:
    """Every edge by its endpoints' ids, so two databases compare."""
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(
            "SELECT e.kind, s.uid, coalesce(d.uid, ''), e.dst_name, e.line, e.confidence "
            "FROM edges e JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
        ).fetchall())
    finally:
        conn.close()


def _write_project(root: Path, count: int = 30) -> None:
    pkg = root / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("class Base:\n    def run(self):\n        return 1\n")
    for i in range(count):
        (pkg / f"m{i}.py").write_text(
            f"from .base import Base\nfrom .m{(i + 1) % count} import f{(i + 1) % count}\n\n\n"
            f"class C{i}(Base):\n    def go(self):\n        return self.run()\n\n\n"
            f"def f{i}():\n    return f{(i + 1) % count}()\n")


def _reference(tmp_path: Path, root: Path) -> list[tuple]:
    """The edges of one uninterrupted `index` of a copy of ``root``."""
    copy = tmp_path / "reference"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".ctxkit"))
    subprocess.run([*CONSOLE_ARGV, "index"], cwd=copy, env=_clean_env(),
                   check=True, capture_output=True, timeout=120)
    return _edges(copy / ".ctxkit" / "ctxkit.db")


def test_index_killed_while_resolving_is_finished_by_the_next_run(cli, tmp_path):
    _write_project(cli.root)
    assert _killed_index(cli.root) == -signal.SIGKILL
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert _edges(cli.db) == _reference(tmp_path, cli.root)
    assert cli("callers", "f3", "--json").json()["results"][0]["id"] == "pkg/m2.py:f2"
    again = cli("index", "--json").json()
    assert again["files"]["indexed"] == 0  # nothing left pending


def test_index_killed_after_an_edit_relinks_unchanged_files(cli, tmp_path):
    """The names a killed run forgot (a removed definition) are re-resolved too."""
    _write_project(cli.root)
    assert cli("index").code == 0
    (cli.root / "pkg" / "other.py").write_text("def f5():\n    return 0\n")
    target = cli.root / "pkg" / "m5.py"
    target.write_text("def g5():\n    return 0\n")
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 2 * 10**9))
    assert _killed_index(cli.root) == -signal.SIGKILL
    result = cli("index", "--json", "pkg/m7.py")  # a scoped run still finishes the work
    assert result.code == 0, result.err
    assert cli("index").code == 0
    assert _edges(cli.db) == _reference(tmp_path, cli.root)


def test_scoped_run_after_a_kill_resolves_the_other_files(cli, tmp_path):
    _write_project(cli.root)
    assert _killed_index(cli.root) == -signal.SIGKILL
    assert cli("index", "pkg/m1.py").code == 0
    assert _edges(cli.db) == _reference(tmp_path, cli.root)


@pytest.mark.slow                    # up to three 600-file indexes at once, and one more
@pytest.mark.parametrize("runs", [2, 3])
def test_concurrent_index_runs_equal_one_run(cli, tmp_path, runs):
    _write_project(cli.root, count=600)
    procs = [subprocess.Popen([*CONSOLE_ARGV, "index", "--json"],
                              cwd=cli.root, env=_clean_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(runs)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * runs, outs
    edges = _edges(cli.db)
    assert edges == _reference(tmp_path, cli.root)
    extends = [e for e in edges if e[0] == "extends"]
    assert len(extends) == 600


def test_index_lock_file_is_private(cli):
    _write_project(cli.root, count=2)
    assert cli("index").code == 0
    lock = Path(f"{cli.db}{ctxkit.INDEX_LOCK_SUFFIX}")
    assert lock.exists() and lock.stat().st_mode & 0o777 == 0o600
