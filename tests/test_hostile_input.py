"""Hostile input and process handling: SIGHUP, byte-exact small output, non-UTF-8
arguments, out-of-range numbers and settings files that are not UTF-8.

Processes are real: `ctxkit run -- sh -c ...` in a subprocess (as the console script starts), sent
real signals; arguments are real bytes (os.fsencode), as a shell passes them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV

import ctxkit

LATIN1 = b"caf\xe9 r\xe9sum\xe9.txt"  # a real file name from a Latin-1 system


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}


def _ctxkit(root: Path, *args: str | bytes, stdin: bytes = b"",
            timeout: float = 60) -> subprocess.CompletedProcess:
    argv = [os.fsencode(a) for a in CONSOLE_ARGV]
    argv += [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run(argv, cwd=root, input=stdin, capture_output=True, env=_env(),
                          timeout=timeout)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie waiting for init to reap it counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


# --- SIGHUP ------------------------------------------------------------------------


def test_sighup_ends_the_group_keeps_the_output_and_exits_129(cli, tmp_path):
    pids = tmp_path / "pids"
    script = (f"echo started; sleep 60 & echo $! > {pids}; sleep 61 & echo $! >> {pids}; "
              f"echo $$ >> {pids}; wait")
    proc = subprocess.Popen([*CONSOLE_ARGV, "run", "--", "sh", "-c", script],
                            cwd=cli.root, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 30
    while (not pids.exists() or len(pids.read_text().split()) < 3) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    children = [int(p) for p in pids.read_text().split()]
    proc.send_signal(signal.SIGHUP)  # the terminal closed
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 129, err
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in children), children
    listed = cli("outputs", "--json").json()["outputs"][0]
    assert listed["status"] == "interrupted" and listed["exit_code"] == 129
    assert cli("expand", listed["handle"], "--json").json()["lines"][0]["text"] == "started"



def test_a_signal_while_the_command_starts_still_ends_its_group(cli, monkeypatch):
    """Ctrl-C that lands just after the command started (before ctxkit's run loop)
    ends the command too: the handlers are in place before the start."""
    started = []
    real_popen = subprocess.Popen

    def popen_then_interrupt(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        started.append(proc)
        os.kill(os.getpid(), signal.SIGINT)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen_then_interrupt)
    result = cli("run", "--", "sleep", "30")
    monkeypatch.undo()
    assert result.code == 130, result.err
    assert started[0].wait(timeout=10) is not None

# --- byte-exact small output --------------------------------------------------------


@pytest.mark.parametrize(("script", "out", "err"), [
    ("printf 'alpha\\nbeta'", b"alpha\nbeta", b""),
    ("printf 'caf\\351 \\000 nul\\n'", b"caf\xe9 \x00 nul\n", b""),
    ("printf 'out'; printf 'err' >&2", b"out", b"err"),
    ("printf ''", b"", b""),
    ("printf '\\r\\n\\r\\n'", b"\r\n\r\n", b""),
])
def test_small_output_is_printed_byte_for_byte_to_its_stream(cli, script, out, err):
    proc = _ctxkit(cli.root, "-q", "run", "--", "sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == out
    assert proc.stderr == err


# --- non-UTF-8 arguments ------------------------------------------------------------


def test_latin1_argument_reaches_the_command_as_bytes(cli, tmp_path):
    target = tmp_path / "seen"
    proc = _ctxkit(cli.root, "run", "--", "sh", "-c", f'printf "%s" "$0" > {target}', LATIN1)
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == LATIN1
    listed = cli("outputs", "--json").json()["outputs"][0]
    assert listed["command"].endswith("'caf\\xe9 r\\xe9sum\\xe9.txt'")


def test_latin1_name_in_an_error_prints_its_byte_as_xnn(cli):
    """Found by a new user: `callers caf\xe9` said `symbol 'caf\udce9'` (Python's repr of
    the byte) while its own suggestion beside it wrote `caf\xe9`."""
    (cli.root / "a.py").write_text("def f():\n    return 1\n")
    assert cli("index", "-q").code == 0
    proc = _ctxkit(cli.root, "callers", b"caf\xe9")
    assert proc.returncode == 1
    err = os.fsdecode(proc.stderr) if isinstance(proc.stderr, bytes) else proc.stderr
    assert "'caf\\xe9'" in err and "udc" not in err, err


def test_latin1_file_is_stored_and_its_name_escaped(cli):
    path = os.path.join(os.fsencode(cli.root), LATIN1)
    with open(path, "wb") as handle:
        handle.write(b"line one\nline two\n")
    proc = _ctxkit(cli.root, "store", LATIN1, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["label"] == "caf\\xe9 r\\xe9sum\\xe9.txt"


def _commands() -> list[list[bytes]]:
    """Every command, with the Latin-1 argument where it takes text or a name."""
    arg = LATIN1
    table = {
        "index": [arg], "symbols": [arg], "callers": [arg], "callees": [arg],
        "impact": [arg], "context": [arg], "run": [b"--label", arg, b"--", b"true", arg],
        "store": [b"-", b"--label", arg, b"--command", arg], "search": [arg],
        "expand": [arg], "outputs": [b"--project", arg], "purge": [b"--handle", arg],
        "query": [arg], "fail": [arg, arg, b"-d", arg], "ok": [arg, arg, b"--session", arg],
        "resolve": [arg], "deactivate": [arg], "stats": [arg], "import-cm": [arg],
        "note": [b"decision", arg], "snapshot": [b"save", b"-m", arg],
        "hook": [arg], "install-hooks": [b"--settings", arg, b"--dry-run"],
        "uninstall-hooks": [b"--settings", arg, b"--dry-run"], "risk": [arg],
        "suspects": [arg],
    }
    parser = ctxkit.build_parser()
    names = [name for action in parser._subparsers._group_actions
             for name in action.choices]
    missing = set(names) - set(table)
    assert not missing, f"add these commands to the table: {sorted(missing)}"
    return [[name.encode(), *table[name]] for name in names]


@pytest.mark.parametrize("argv", _commands(), ids=lambda argv: argv[0].decode())
def test_no_command_crashes_on_a_latin1_argument(cli, argv):
    cli("note", "task", "make the database exist")
    proc = _ctxkit(cli.root, *argv, stdin=b"some output\n")
    assert b"internal error" not in proc.stderr, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr
    (proc.stdout + proc.stderr).decode("utf-8")  # what ctxkit prints is UTF-8


def test_latin1_project_name_is_stored_escaped(cli):
    proc = _ctxkit(cli.root, "-p", LATIN1, "fail", "Sym", "lesson")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(_ctxkit(cli.root, "-p", LATIN1, "query", "Sym", "--json").stdout)
    assert listed["symbols"][0]["project"] == "caf\\xe9 r\\xe9sum\\xe9.txt"


# --- out-of-range numbers -----------------------------------------------------------


def _int_options() -> list[tuple[str, list[str], str]]:
    """(command, argv before the value, kind) of every integer and float option."""
    needs = {"callers": ["x"], "callees": ["x"], "impact": ["x"], "context": ["x"],
             "run": [], "store": ["-"], "search": ["x"], "expand": ["o1"], "query": ["x"],
             "risk": ["a.py"], "suspects": ["o1"], "resolve": [], "deactivate": []}
    found = []
    parser = ctxkit.build_parser()
    for action in parser._subparsers._group_actions:
        for name, sub in action.choices.items():
            for option in sub._actions:
                kind = {int: "int", float: "float"}.get(option.type)
                if kind is None and getattr(option.type, "__qualname__", "").startswith(
                        "_count_argument"):
                    kind = "int"
                if kind is None:
                    continue
                before = needs.get(name, [])
                found.append((name, [*before, *option.option_strings], kind))
    return found


@pytest.mark.parametrize(("command", "before", "kind"), _int_options(),
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
@pytest.mark.parametrize("value", ["99999999999999999999", "-99999999999999999999",
                                   "1e400", "nan"])
def test_every_number_option_is_range_checked(cli, command, before, kind, value):
    if kind == "int" and value in ("1e400", "nan"):
        value = "12abc"
    argv = [command, *before, value]
    if command == "run":
        argv += ["--", "true"]
    result = cli(*argv)
    assert result.code == 2, (argv, result.err)
    assert "internal error" not in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


@pytest.mark.parametrize("argv", [
    ["snapshot", "show", "99999999999999999999"],
    ["expand", "o1", "--lines", "99999999999999999999-99999999999999999999"],
    ["snapshot", "check", "--max-age", "99999999999999999999"],
])
def test_numbers_inside_other_arguments_are_range_checked(cli, argv):
    cli("store", "-", stdin="one line\n")
    result = cli(*argv)
    assert result.code == 2, result.err
    assert "internal error" not in result.err and len(result.err.splitlines()) == 1


def test_largest_accepted_numbers_do_not_crash(cli):
    cli("store", "-", stdin="a\nb\n")
    top = str(ctxkit.INT_OPTION_MAX)
    for argv in (["outputs", "--limit", top], ["expand", "o1", "--head", top],
                 ["expand", "o1", "--tail", top], ["search", "a", "--limit", top],
                 ["query", "x", "--top", top], ["resolve", top], ["risk", "a.py", "--line", top],
                 ["snapshot", "check", "--max-age", top]):
        result = cli(*argv)
        assert "internal error" not in result.err, (argv, result.err)


def test_hostile_line_number_in_a_log_is_harmless(cli):
    log = "src/app.py:99999999999999999999999: error: boom\nFAILED x\n"
    result = cli("store", "-", "--json", stdin=log)
    assert result.code == 0, result.err
    assert cli("search", "boom", "--json").code == 0


# --- settings that are not UTF-8 ----------------------------------------------------


@pytest.mark.parametrize("data", ["{}".encode("utf-16"), "{}".encode("utf-32"),
                                  b"\xef\xbb\xbf{}", b'{"hooks": {"x": "\xe9"}}'])
@pytest.mark.parametrize("command", ["install-hooks", "uninstall-hooks"])
def test_settings_that_are_not_utf8_are_refused_untouched(cli, data, command):
    settings = cli.root / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(data)
    result = cli(command, "--agent", "claude")
    assert result.code == 1
    assert len(result.err.strip().splitlines()) == 1 and "internal error" not in result.err
    assert settings.read_bytes() == data
