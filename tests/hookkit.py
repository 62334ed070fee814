"""Helpers shared by the snapshot and hook tests (not collected: no test_ prefix)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from conftest import git

import ctxkit

FIX = Path(__file__).resolve().parent / "fixtures" / "hooks"
PLACEHOLDER = "/home/user/project"

# The symbols of fixtures/hooks/project/src/auth.py: (kind, qualname, line, end_line).
AUTH_SYMBOLS = (("class", "AuthService", 4, 17), ("method", "AuthService.__init__", 5, 6),
                ("method", "AuthService.validate", 8, 12),
                ("method", "AuthService.refresh", 14, 17), ("function", "login", 20, 21))


def has_command(name: str) -> bool:
    """True when this build registers the command (other sections arrive by merge)."""
    parser = ctxkit.build_parser()
    return any(name in getattr(action, "choices", None) or {}
               for action in parser._subparsers._group_actions)


def payload(name: str, root: Path, **fields) -> str:
    """A stored hook payload with the placeholder project path replaced by ``root``."""
    data = json.loads((FIX / f"{name}.json").read_text(encoding="utf-8")
                      .replace(PLACEHOLDER, str(root)))
    data.update(fields)
    return json.dumps(data)


def make_project(root: Path, commit: bool = True) -> Path:
    """Copy the sample project into ``root`` and commit it."""
    shutil.copytree(FIX / "project", root, dirs_exist_ok=True)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "sample project")
    return root


def seed_graph(cli, root: Path) -> None:
    """The graph of the sample project: the real indexer when this build has it,
    else the rows it would store (the hooks only read the stored graph)."""
    if has_command("index"):
        result = cli("index")
        assert result.code == 0, result.err
        return
    env = ctxkit.make_env(cwd=root)
    ctxkit.open_db(env).close()
    conn = sqlite3.connect(env.db_path)
    with conn:
        file_id = conn.execute(
            "INSERT INTO files (project, path, language, indexed_at) VALUES (?, ?, ?, ?)",
            (env.project, "src/auth.py", "python", ctxkit.utc_now())).lastrowid
        for kind, qualname, line, end in AUTH_SYMBOLS:
            conn.execute(
                "INSERT INTO nodes (project, file_id, uid, kind, name, qualname, path, line, "
                "end_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (env.project, file_id, f"src/auth.py:{qualname}", kind,
                 qualname.rsplit(".", 1)[-1], qualname, "src/auth.py", line, end))
    conn.close()


def fail(cli, symbol: str, times: int, file: str = "src/auth.py") -> None:
    """Record ``times`` fail lessons: 4 give risk 11.5 (high), 6 give 16.5 (critical)."""
    for index in range(times):
        result = cli("fail", symbol, f"{symbol} lesson {index}", "--file", file)
        assert result.code == 0, result.err


def hook(cli, event: str, body: str, *extra: str):
    return cli("hook", *extra, event, stdin=body)
