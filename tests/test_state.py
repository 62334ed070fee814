"""Files and state: reads create nothing, -q is quiet, the root outside git is said,
every option of every command has a help line."""

from __future__ import annotations

import argparse
import json
import subprocess

import pytest
from conftest import CONSOLE_ARGV, copy_fixture

import ctxkit

READS = [
    ["outputs"], ["search", "boom"], ["search", "--events", "boom"], ["stats", "--outputs"],
    ["stats"], ["query", "x"], ["query"], ["symbols"], ["snapshot", "list"],
    ["risk", "a.py"],
]
READ_ERRORS = [["expand", "o1"], ["callers", "x"], ["callees", "x"], ["impact", "x"],
               ["context", "x"], ["snapshot", "show", "last"], ["resolve", "1"]]


@pytest.mark.parametrize("argv", READS)
def test_a_read_creates_nothing_and_says_there_is_nothing_yet(cli, root, argv):
    for extra in ([], ["--json"]):
        result = cli(*argv, *extra)
        assert result.code == 0, result.err
        assert not (root / ".ctxkit").exists()
        if extra:
            json.loads(result.out)
    if argv[0] in ("outputs", "search", "symbols") and argv[1:2] != ["--events"] or \
            argv == ["stats", "--outputs"]:
        assert "nothing is" in cli(*argv).out


@pytest.mark.parametrize("argv", READ_ERRORS)
def test_a_read_of_something_named_fails_without_creating_anything(cli, root, argv):
    result = cli(*argv)
    assert result.code == 1 and result.err.count("\n") == 1
    assert not (root / ".ctxkit").exists()


# --- -q --------------------------------------------------------------------------------


QUIET = [["index"], ["fail", "place", "the token sk-abcdefghijklmnopqrstuvwxyz12 leaked"],
         ["ok", "place", "y"], ["note", "task", "t"], ["snapshot", "save", "-m", "t"],
         ["install-hooks"], ["uninstall-hooks"], ["purge", "--all"],
         ["install-hooks", "--agent", "codex"]]


@pytest.mark.parametrize("argv", QUIET)
def test_q_quiets_progress_and_notes(cli, root, argv):
    copy_fixture("context_py", root)
    (root / "app" / "broken.py").write_text("def broken(:\n")          # a note from index
    if argv[0] != "index":
        assert cli("index").code == 0
    result = cli("-q", *argv)
    assert result.code == 0, result.err
    assert (result.out, result.err) == ("", "")
    loud = cli(*argv)
    assert loud.code == 0 and (loud.out or loud.err)


# --- outside a git repository ---------------------------------------------------------------


def test_outside_git_the_root_is_said_once(tmp_path):
    folder = tmp_path / "plain" / "sub"
    folder.mkdir(parents=True)

    def run(*argv):
        env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        return subprocess.run([*CONSOLE_ARGV, *argv], cwd=folder, env=env,
                              capture_output=True, text=True, check=False)
    first = run("note", "task", "t")
    assert first.returncode == 0
    lines = first.stderr.splitlines()
    assert len(lines) == 1 and "not in a git repository" in lines[0]
    assert str(folder) in lines[0]
    again = run("note", "task", "u")
    assert again.returncode == 0 and again.stderr == ""                # once
    other = folder.parent / "other"
    other.mkdir()
    quiet = subprocess.run([*CONSOLE_ARGV, "-q", "note", "task", "t"], cwd=other,
                           env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, check=False)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_outside_git_a_read_below_the_indexed_folder_names_its_database(tmp_path):
    """Outside git a subfolder is a root of its own: a read there must point at the
    database above, not ask for an index that would be a second, partial one."""
    top = tmp_path / "proj"
    (top / "pkg").mkdir(parents=True)
    (top / "pkg" / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return f()\n")

    def run(cwd, *argv):
        env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        return subprocess.run([*CONSOLE_ARGV, *argv], cwd=cwd, env=env,
                              capture_output=True, text=True, check=False)
    assert run(top, "-q", "index").returncode == 0
    above = top / ".ctxkit" / "ctxkit.db"
    for argv in (["callers", "f"], ["context", "f"]):
        result = run(top / "pkg", *argv)
        assert result.returncode == 1 and f"{above} is the one above" in result.stderr
        assert f"run ctxkit from {top}," in result.stderr and "ctxkit index" not in result.stderr
    listing = json.loads(run(top / "pkg", "symbols", "--json").stdout)
    assert listing["results"] == [] and str(above) in listing["note"]
    for argv in (["query", "f"], ["search", "boom"], ["stats"]):     # empty, and says why
        result = run(top / "pkg", *argv)
        assert result.returncode == 0 and f"{above} is the one above" in result.stderr, argv
    assert not (top / "pkg" / ".ctxkit").exists()                    # a read created nothing
    made = run(top / "pkg", "note", "task", "t")
    assert f"({above} is one, above this folder)" in made.stderr


def test_inside_git_nothing_is_said(cli, root):
    result = cli.sub("note", "task", "t")
    assert result.code == 0 and result.err == ""


# --- --help --------------------------------------------------------------------------------


def actions(parser, name="ctxkit"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from actions(sub, f"{name} {command}")
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield name, action


def test_every_option_and_argument_has_a_description():
    missing = [(name, action.option_strings or action.dest)
               for name, action in actions(ctxkit.build_parser())
               if not (action.help or "").strip()]
    assert missing == []
