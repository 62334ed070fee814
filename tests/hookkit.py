"""Helpers shared by the snapshot and hook tests (not collected: no test_ prefix)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git

FIX = Path(__file__).resolve().parent / "fixtures" / "hooks"
PLACEHOLDER = "/home/user/project"


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
    """Index the sample project's real files with the real indexer."""
    result = cli("index")
    assert result.code == 0, result.err


def fail(cli, symbol: str, times: int, file: str = "src/auth.py") -> None:
    """Record ``times`` fail lessons: 4 give risk 11.5 (high), 6 give 16.5 (critical)."""
    for index in range(times):
        result = cli("fail", symbol, f"{symbol} lesson {index}", "--file", file)
        assert result.code == 0, result.err


def hook(cli, event: str, body: str, *extra: str):
    return cli("hook", *extra, event, stdin=body)
