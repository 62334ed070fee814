"""Smoke tests of the program as users start it: a real process every time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CTXKIT

HEAVY = ("tree_sitter", "tree_sitter_language_pack", "tiktoken")


def _modules_after(root: Path, *args: str, stdin: str = "") -> tuple[int, set[str]]:
    """Run main(args) in a fresh interpreter and return the heavy modules it imported."""
    code = (f"import sys, json; sys.path.insert(0, {str(CTXKIT.parent)!r}); import ctxkit; "
            f"rc = ctxkit.main({list(args)!r}); "
            "sys.stdout.flush(); sys.stderr.write('\\nMODULES=' + json.dumps("
            f"sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})) + '\\n'); "
            "sys.exit(rc)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, input=stdin.encode(),
                          capture_output=True, env=env, timeout=60)
    marker = proc.stderr.decode().rsplit("MODULES=", 1)[1]
    return proc.returncode, set(json.loads(marker.splitlines()[0]))


def test_inject_path_imports_no_heavy_module(cli):
    assert cli("fail", "AuthService.validate", "JWT expiry not handled").code == 0
    code, heavy = _modules_after(cli.root, "query", "AuthService.validate", "--inject")
    assert code == 0
    assert heavy == set()


def test_lesson_commands_import_no_heavy_module(cli):
    code, heavy = _modules_after(cli.root, "fail", "f", "broke it", "--json")
    assert code == 0 and heavy == set()
    code, heavy = _modules_after(cli.root, "stats", "--json")
    assert code == 0 and heavy == set()


def test_json_output_is_one_document_in_a_real_process(cli):
    result = cli.sub("fail", "X", "first lesson", "--json")
    assert result.code == 0
    json.loads(result.out)
    result = cli.sub("--json", "query", "X")
    assert result.code == 0
    assert json.loads(result.out)["symbols"][0]["name"] == "X"


def test_errors_are_one_line_without_traceback_in_a_real_process(cli):
    result = cli.sub("resolve", "999999")
    assert result.code == 1
    assert result.err.startswith("ctxkit: error:") and result.err.count("\n") == 1
    result = cli.sub("query", "--top", "many")
    assert result.code == 2 and "Traceback" not in result.err


def test_installed_console_script():
    script = Path(sys.executable).parent / "ctxkit"
    if not script.exists():
        if os.environ.get("CI"):
            raise AssertionError("the ctxkit console script is not installed in CI's venv")
        pytest.skip("ctxkit is not installed in this interpreter's environment")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("ctxkit ")
