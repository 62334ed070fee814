"""Isolation and permissions: a project reads only its own snapshot, the database
and SQLite's companion files are private, links out of the root are not indexed."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess

from hookkit import payload
from conftest import CONSOLE_ARGV



def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env.update(extra)
    return env


# --- one snapshot file per project ------------------------------------------------


def test_a_project_never_reads_another_projects_snapshot(cli, root):
    assert cli("-p", "a", "snapshot", "save", "-m", "project a: secret plan").code == 0
    assert (root / ".context-snapshot.a.md").exists()
    assert not (root / ".context-snapshot.md").exists()
    restored = cli("-p", "b", "snapshot", "restore")
    assert restored.code != 0 and "project a" not in restored.out
    assert cli("-p", "b", "snapshot", "check").code != 0
    assert cli("-p", "a", "snapshot", "check").code == 0
    hook = subprocess.run([*CONSOLE_ARGV, "hook", "session-start"],
                          cwd=root, input=payload("claude_session_start_compact", root).encode(),
                          capture_output=True, env=_env(CTXKIT_PROJECT="b"))
    assert hook.returncode == 0
    assert b"project a" not in hook.stdout
    assert "project a: secret plan" in cli("-p", "a", "snapshot", "restore").out


def test_the_default_project_keeps_the_plain_file_name(cli, root):
    assert cli("snapshot", "save", "-m", "default project task").code == 0
    assert cli("-p", "other", "snapshot", "save", "-m", "other task").code == 0
    assert "default project task" in (root / ".context-snapshot.md").read_text()
    assert "other task" in (root / ".context-snapshot.other.md").read_text()
    assert "other task" not in cli("snapshot", "restore").out
    assert "default project task" not in cli("-p", "other", "snapshot", "restore").out


def test_project_names_that_are_not_file_names(cli, root):
    for name in ("team/api", "team_api", "../up", "é"):
        assert cli("-p", name, "snapshot", "save", "-m", f"task of {name}").code == 0
    files = sorted(p.name for p in root.glob(".context-snapshot*.md"))
    assert len(files) == 4 and all("/" not in f for f in files)
    for name in ("team/api", "team_api", "../up", "é"):
        assert f"task of {name}" in cli("-p", name, "snapshot", "restore").out
    assert not (root.parent / ".context-snapshot.md").exists()


def test_snapshot_files_stay_out_of_the_snapshot_itself(cli, root):
    """A snapshot file of any project is not listed as a modified file."""
    cli("-p", "a", "snapshot", "save", "-m", "first")
    cli("-p", "b", "snapshot", "save", "-m", "second")
    shown = cli("-p", "b", "snapshot", "show", "last", "--json")
    body = shown.json()["body"] if shown.code == 0 else cli("-p", "b", "snapshot", "restore").out
    assert ".context-snapshot" not in body


# --- private database files ---------------------------------------------------------


def test_loose_database_wal_and_shm_are_tightened_and_it_says_so(cli, root):
    assert cli("fail", "Sym", "first").code == 0
    holder = sqlite3.connect(cli.db)  # keeps -wal and -shm on disk
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("SELECT count(*) FROM lessons").fetchone()
    try:
        names = [f"{cli.db}{suffix}" for suffix in ("", "-wal", "-shm")]
        assert all(os.path.exists(name) for name in names)
        os.chmod(cli.db.parent, 0o755)
        for name in names:
            os.chmod(name, 0o644)
        proc = subprocess.run([*CONSOLE_ARGV, "fail", "Sym", "second"],
                              cwd=root, capture_output=True, text=True, env=_env())
        assert proc.returncode == 0, proc.stderr
        modes = {os.path.basename(n): stat.S_IMODE(os.stat(n).st_mode) for n in names}
        assert modes == {"ctxkit.db": 0o600, "ctxkit.db-wal": 0o600, "ctxkit.db-shm": 0o600}
        assert "private" in proc.stderr and "ctxkit.db-wal 644->600" in proc.stderr
    finally:
        holder.close()


# --- symlinks out of the root ---------------------------------------------------------


def test_symlink_to_a_file_outside_the_root_is_skipped(cli, root, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "private.py").write_text("def leaked_secret_function():\n    return 42\n")
    (root / "app.py").write_text("def inside():\n    return 1\n")
    os.symlink(outside / "private.py", root / "link.py")
    os.symlink("app.py", root / "alias.py")  # inside the root: followed
    data = cli("index", "--json").json()
    assert data["files"]["skipped"] == 1
    assert data["skip_reasons"] == {"outside_root": 1}
    assert data["files"]["indexed"] == 2
    found = cli("context", "leaked_secret_function", "--purpose", "debug")
    assert found.code != 0 and "return 42" not in found.out
    assert cli("symbols", "inside", "--json").code == 0
    assert "leaked_secret_function" not in cli("symbols", "--json").out
    assert json.loads(cli("index", "--json").out)["files"]["skipped"] == 1
