"""The fast path (`query SYMBOL --inject`, the pre-edit hook) against the full CLI.

Two runs per case:
- full:    ``ctxkit.main(argv)`` in-process (the ``cli`` fixture): the fast path
           never runs and argparse parses everything;
- console: the installed console script's start in a subprocess (``import
           ctxkit`` with argv[0] "ctxkit", then ``main()``), under ``-X
           importtime``; a marker between the two says whether the import came
           back, i.e. whether the fast path fell through to the full CLI.
Every case must give byte-identical stdout, stderr and exit code on both; the
cases the fast path is meant for must be answered by it alone (the import never
comes back), without argparse, dataclasses or the heavy modules. The script form
``python ctxkit.py`` (module ``__main__``, never cached) is compared with the
full CLI on one case of each kind by test_the_script_form_answers_as_the_full_cli.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT
from hookkit import fail, make_project, payload, seed_graph

import ctxkit

# The fast path ends the process inside `import ctxkit`; the marker after it is
# printed only when the import came back (fell through to the full CLI), which then
# runs as the console script runs it.
CONSOLE = ("import sys\n"
           "sys.argv = ['ctxkit', *sys.argv[1:]]\n"
           "import ctxkit\n"
           "sys.stderr.write('FELL_THROUGH\\n')\n"
           "sys.exit(ctxkit.main())\n")
NOT_ON_FAST_PATH = {"argparse", "dataclasses", "tree_sitter", "tree_sitter_language_pack",
                    "tiktoken"}


def run(argv: list[str], args: tuple[str, ...], cwd, stdin: str | None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, *argv, *args], cwd=cwd, env=env,
                          input=stdin.encode() if stdin is not None else None,
                          capture_output=True, timeout=120, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def compare(cli, *args: str, stdin: str | None = None, cwd=None, fast: bool = True) -> bytes:
    """Run ARGS in-process and as the console script; assert both give the same code,
    stdout and stderr, and that the fast path alone answered (``fast``) without the
    forbidden modules, or fell through to main() (not ``fast``). Returns stdout."""
    cwd = cwd or cli.root
    result = cli(*args, stdin=stdin, cwd=cwd)
    full = (result.code, result.out.encode(), result.err.encode())
    code, out, err = run(["-X", "importtime", "-c", CONSOLE], args, cwd, stdin)
    lines = err.splitlines(keepends=True)
    timed = [line for line in lines if line.startswith(b"import time:")]
    err = b"".join(line for line in lines if not line.startswith(b"import time:"))
    fell_through = err.startswith(b"FELL_THROUGH\n")
    assert (code, out, err.removeprefix(b"FELL_THROUGH\n")) == full, (args, full, err)
    if fast:
        assert not fell_through, (args, err)
        modules = {line.split(b"|")[-1].strip().split(b".")[0].decode() for line in timed}
        assert not modules & NOT_ON_FAST_PATH, modules
    else:
        assert fell_through, (args, err)
    return full[1]


@pytest.fixture
def project(cli, root):
    make_project(root)
    seed_graph(cli, root)
    fail(cli, "AuthService.validate", 4)            # 11.5, high
    fail(cli, "AuthService.refresh", 6)             # 16.5, critical
    fail(cli, "login", 2)                           # 6.5, medium: not injected
    return root


def test_query_inject_risky_and_not_risky(cli, project):
    out = compare(cli, "query", "AuthService.validate", "--inject")
    assert b"[PAST EXPERIENCE \xe2\x80\x94 src/auth.py:AuthService.validate (risk: 11.5" in out
    assert compare(cli, "query", "login", "--inject") == b""
    assert compare(cli, "query", "NoSuchSymbol", "--inject") == b""
    assert b"AuthService.validate" in compare(cli, "query", "validate", "--inject")


@pytest.mark.parametrize("spelling", ["src/auth.py", "./src/auth.py", "src\\auth.py",
                                      "src/../src/auth.py", "ABSOLUTE"])
def test_query_inject_file_spellings(cli, project, spelling):
    spelling = str(project / "src" / "auth.py") if spelling == "ABSOLUTE" else spelling
    out = compare(cli, "query", "AuthService.refresh", "--file", spelling, "--inject")
    assert b"AuthService.refresh (risk: 16.5, critical)" in out
    assert compare(cli, "query", "AuthService.refresh", f"--file={spelling}",
                   "--inject") == out


def test_query_inject_from_a_subfolder_and_with_global_options(cli, project):
    out = compare(cli, "query", "AuthService.refresh", "--file", "auth.py", "--inject",
                  cwd=project / "src")
    assert b"risk: 16.5" in out
    name = project.name
    assert compare(cli, "-q", "query", "AuthService.refresh", "--inject") == out
    assert compare(cli, "query", "-p", name, "AuthService.refresh", "--inject", "-q") == out
    db = str(project / ".ctxkit" / "ctxkit.db")
    assert compare(cli, "--db", db, "query", "AuthService.refresh", "--inject",
                   "--project", name) == out
    assert compare(cli, "-p", "other", "query", "AuthService.refresh", "--inject") == b""


def test_query_inject_graph_ids(cli, project):
    out = compare(cli, "query", "src/auth.py:AuthService.validate", "--inject")
    assert b"AuthService.validate (risk: 11.5, high)" in out
    assert compare(cli, "query", "src/auth.py:AuthService.validate", "--file",
                   "src/auth.py", "--inject") == out
    # A mismatching --file is a usage error: the fast path leaves it to the full CLI.
    compare(cli, "query", "src/auth.py:AuthService.validate", "--file", "other.py",
            "--inject", fast=False)


def test_query_inject_several_files_and_the_10k_limit(cli, root):
    env = ctxkit.make_env(cwd=root)
    for path in ("a.py", "b.py", "c/d.py"):
        for index in range(5):
            ctxkit.record_lesson(env, "fail", "run", f"run in {path} failed {index}", file=path)
    out = compare(cli, "query", "run", "--inject")
    assert out.count(b"[PAST EXPERIENCE") == 3
    for index in range(120):
        ctxkit.record_lesson(env, "fail", "big", f"lesson {index}: " + "x" * 200, file="big.py")
    out = compare(cli, "query", "big", "--inject")
    assert b"more lessons left out to stay under 10000 characters" in out
    assert len(out.decode()) < 10000


def test_calls_the_fast_path_leaves_to_the_full_cli(cli, project):
    compare(cli, "query", "AuthService.validate", "--json", fast=False)  # not --inject
    compare(cli, "query", "AuthService.validate", "--inject", "--json", fast=False)
    compare(cli, "query", "AuthService.validate", "--inject", "--top", "1", fast=False)
    compare(cli, "query", "--inject", fast=False)                       # no symbol
    compare(cli, "query", "AuthService.validate", "--inj", fast=False)  # abbreviation
    compare(cli, "snapshot", "list", fast=False)
    compare(cli, "query", "AuthService.validate", "--inject", "--file", fast=False)
    compare(cli, "--version", fast=False)


def test_query_inject_without_database_or_at_another_version(cli, root):
    compare(cli, "query", "X", "--inject", fast=False)                     # no database
    assert not (root / ".ctxkit").exists()
    ctxkit.record_lesson(ctxkit.make_env(cwd=root), "fail", "X", "one")
    db = root / ".ctxkit" / "ctxkit.db"
    import sqlite3
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    compare(cli, "query", "X", "--inject", fast=False)                     # newer schema


def test_hook_edit_touching_two_risky_symbols(cli, project):
    body = payload("claude_pre_tool_use_multiedit", project)
    out = compare(cli, "hook", "pre-tool-use", stdin=body)
    assert b"AuthService.refresh" in out and b"AuthService.validate" in out
    assert b"VERIFICATION REQUIRED" in out
    compare(cli, "hook", "--agent", "claude", "PreToolUse", stdin=body)
    compare(cli, "hook", "pre_tool_use", "--agent=codex", stdin=body)


@pytest.mark.parametrize("name", ["claude_pre_tool_use_edit", "claude_pre_tool_use_write",
                                  "codex_pre_tool_use_apply_patch",
                                  "gemini_before_tool_replace", "gemini_before_tool_write_file"])
def test_hook_edit_payloads_of_every_agent(cli, project, name):
    out = compare(cli, "hook", "pre-tool-use", stdin=payload(name, project))
    assert b"PAST EXPERIENCE" in out


def test_hook_edit_with_nothing_at_risk_prints_nothing(cli, root):
    make_project(root)
    seed_graph(cli, root)
    fail(cli, "AuthService.validate", 2)
    assert compare(cli, "hook", "pre-tool-use",
                   stdin=payload("claude_pre_tool_use_edit", root)) == b""


def test_hook_calls_the_fast_path_leaves_to_the_full_cli(cli, project):
    compare(cli, "hook", "pre-tool-use", stdin=payload("claude_pre_tool_use_read", project),
            fast=False)
    compare(cli, "hook", "pre-tool-use", fast=False,     # quiet: no once-per-session state
            stdin=payload("claude_pre_tool_use_bash", project, tool_input={"command": "ls"}))
    compare(cli, "hook", "pre-tool-use", stdin="{not json", fast=False)
    compare(cli, "hook", "pre-tool-use", stdin="\r\n  \r\n[1,\r\n", fast=False)
    compare(cli, "hook", "post-tool-use",
            stdin=payload("claude_pre_tool_use_edit", project), fast=False)
    compare(cli, "hook", "--agent", "other", "pre-tool-use",
            stdin=payload("claude_pre_tool_use_edit", project), fast=False)


def test_a_file_changed_since_the_index_goes_to_the_full_cli_which_says_stale(cli, project):
    auth = project / "src" / "auth.py"
    body = payload("claude_pre_tool_use_edit", project)
    # Touched, not changed: the fast path still answers, and nothing is stale.
    os.utime(auth, ns=(auth.stat().st_atime_ns, auth.stat().st_mtime_ns + 10**9))
    assert b"stale" not in compare(cli, "query", "AuthService.validate", "--inject")
    assert b"stale" not in compare(cli, "hook", "pre-tool-use", stdin=body)
    # Changed: only a parse can tell which symbols changed, so the full CLI answers.
    auth.write_text(auth.read_text().replace("return record is not None",
                                             "return record"))
    out = compare(cli, "query", "AuthService.validate", "--inject", fast=False)
    assert out.count(b"(stale: code changed since)") == 4
    out = compare(cli, "hook", "pre-tool-use", stdin=body, fast=False)
    assert out.count(b"(stale: code changed since)") == 4
    out = compare(cli, "query", "AuthService.refresh", "--inject", fast=False)
    assert b"AuthService.refresh lesson" in out and b"stale" not in out   # refresh unchanged


def test_the_script_form_answers_as_the_full_cli(cli, project):
    """`python ctxkit.py ARGS`: the fast path when the module is __main__ (compiled on
    every start, never from a cache), and the fall-through to main() at the file's end."""
    cases = [(("query", "AuthService.validate", "--inject"), None),                # fast
             (("hook", "pre-tool-use"), payload("claude_pre_tool_use_edit", project)),
             (("query", "AuthService.validate", "--inject", "--json"), None),      # full CLI
             (("query", "AuthService.validate", "--inject", "--file"), None)]      # usage error
    outs = []
    for args, stdin in cases:
        result = cli(*args, stdin=stdin)
        full = (result.code, result.out.encode(), result.err.encode())
        assert run([str(ROOT / "ctxkit.py")], args, project, stdin) == full, args
        outs.append(full)
    assert b"PAST EXPERIENCE" in outs[0][1] and b"PAST EXPERIENCE" in outs[1][1]
    assert outs[3][0] == 2 and outs[3][2].count(b"\n") == 1


@pytest.mark.parametrize("before", ["enabled", "disabled"])
def test_collection_is_off_only_until_the_fast_path_hands_over(cli, project, before):
    """The module turns the garbage collector off while the fast path may answer; a
    program importing ctxkit, and the full CLI a fall-through runs, get it back as the
    process had it."""
    setup = "import gc\n" + ("gc.disable()\n" if before == "disabled" else "")
    check = "sys.stderr.write(f'GC={gc.isenabled()}\\n')\n"
    imported = setup + "import sys\nimport ctxkit\n" + check
    assert run(["-c", imported], (), project, None)[2] == f"GC={before == 'enabled'}\n".encode()
    fell_through = setup + CONSOLE.replace("sys.exit(", check + "sys.exit(")
    code, _, err = run(["-c", fell_through], ("query", "AuthService.validate", "--inject",
                                               "--json"), project, None)
    assert code == 0 and f"GC={before == 'enabled'}\n".encode() in err, err
