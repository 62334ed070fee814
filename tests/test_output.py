"""Output store: run/store/search/expand/outputs/purge on real tool output."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV

import ctxkit

PY = sys.executable


def _db(cli) -> sqlite3.Connection:
    conn = sqlite3.connect(cli.db)
    conn.row_factory = sqlite3.Row
    return conn


def _errors(summary) -> list[str]:
    return [e["text"] for e in summary["errors"]]


def _add_graph_node(cli, path: str, qualname: str, line: int, end_line: int) -> None:
    """Put one node into the graph tables, as the graph indexer would."""
    ctxkit.open_db(ctxkit.make_env(cwd=cli.root)).close()
    conn = _db(cli)
    project = cli.root.name
    cur = conn.execute("INSERT OR IGNORE INTO files(project, path, language) VALUES (?, ?, ?)",
                       (project, path, "python"))
    file_id = conn.execute("SELECT id FROM files WHERE project = ? AND path = ?",
                           (project, path)).fetchone()[0]
    del cur
    conn.execute("INSERT INTO nodes(project, file_id, uid, kind, name, qualname, path, line, "
                 "end_line) VALUES (?, ?, ?, 'method', ?, ?, ?, ?, ?)",
                 (project, file_id, f"{path}:{qualname}", qualname.rsplit(".", 1)[-1],
                  qualname, path, line, end_line))
    conn.commit()
    conn.close()


# --- run: policy, exit status, environment -------------------------------------------


def test_small_output_printed_as_is_and_stored(cli):
    result = cli("run", "--", "sh", "-c", "echo hello; echo oops >&2; exit 3")
    assert result.code == 3
    assert result.out == "hello\n"
    assert "oops" in result.err and "exit 3" in result.err
    listed = cli("outputs", "--json").json()["outputs"]
    assert listed[0]["exit_code"] == 3 and listed[0]["lines"] == 2
    lines = cli("expand", listed[0]["handle"], "--json").json()["lines"]
    assert [(item["line"], item["stream"], item["text"]) for item in lines] == [
        (1, "stdout", "hello"), (2, "stderr", "oops")]


def test_large_output_gives_a_summary_under_2kb(cli):
    script = ("import sys\n"
              "for i in range(10000):\n"
              "    print(f'line {i} processing item {i} ok')\n"
              "    if i == 6001:\n"
              "        print('Traceback (most recent call last):')\n"
              "        print('  File \"src/app.py\", line 12, in handle')\n"
              "        print('    return 1 / 0')\n"
              "        print('ZeroDivisionError: division by zero')\n"
              "sys.exit(2)\n")
    result = cli("run", "--json", "--", PY, "-c", script)
    assert result.code == 2
    summary = result.json()
    assert len(result.out.encode()) < 2048
    for field in ("handle", "command", "exit_code", "seconds", "bytes", "lines", "stored",
                  "redactions", "head", "tail", "errors", "elided", "next"):
        assert field in summary, field
    assert summary["exit_code"] == 2 and summary["stored"] is True
    assert summary["lines"] == 10004 and summary["policy"] == "virtualized"
    trace = [e for e in summary["errors"] if e["kind"] == "traceback"]
    assert trace and trace[0]["line"] == 6006 and "ZeroDivisionError" in trace[0]["text"]
    assert trace[0]["ref"] == "src/app.py:12"
    assert summary["head"][0] == {"line": 1, "text": "line 0 processing item 0 ok"}
    assert summary["tail"][-1]["line"] == 10004
    assert "6-6005" in summary["elided"]
    handle = summary["handle"]
    assert summary["next"]["search"].endswith(f"--handle {handle}")
    assert summary["next"]["expand"].startswith(f"ctxkit expand {handle} --lines ")
    # the human form says the same, exit code included
    human = cli("run", "--", PY, "-c", script)
    assert human.code == 2 and "exit 2" in human.out and "ZeroDivisionError" in human.out


def test_the_next_commands_follow_the_exit_status_and_the_problem_lines(cli):
    """A passing run with no problem line suggests no search (nothing points at one),
    only the lines the head hid; a failing one with none, a search and the lines before
    the tail; a problem line, a search for its words, whatever the exit status."""
    quiet = "for i in range(400): print('line', i, 'all good')\n"
    runs = {"passed": (quiet, 0), "failed": (quiet + "raise SystemExit(3)\n", 3),
            "passed, a problem line": (quiet + "print('error: cannot open pear.txt')\n", 0)}
    nexts = {}
    for name, (script, code) in runs.items():
        result = cli.sub("--json", "run", "--", PY, "-c", script)
        assert result.code == code, result.err
        summary = result.json()
        human = cli.sub("run", "--", PY, "-c", script).out
        nexts[name] = summary["next"], human[human.index("next:"):]
    passed, human = nexts["passed"]
    assert list(passed) == ["expand"] and "search" not in human and "error" not in human
    assert passed["expand"].endswith("--lines 6-26")                     # after the head
    failed, human = nexts["failed"]
    assert failed["search"].startswith("ctxkit search error --handle o")
    assert failed["expand"].endswith("--lines 375-395")                  # before the tail
    assert human.count("ctxkit ") == 2
    found, _ = nexts["passed, a problem line"]
    assert found["search"].startswith("ctxkit search 'error cannot open' --handle")
    stored = cli.sub("--json", "store", "-", stdin=quiet).json()           # no exit status
    assert list(stored["next"]) == ["expand"]


def test_environment_unchanged_unless_scrubbed(cli, monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "abc123")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    show = [PY, "-c", "import os; print(sorted(k for k in os.environ if k in "
                      "('MY_API_TOKEN', 'AWS_REGION', 'PLAIN_SETTING')))"]
    assert cli("run", "--", *show).out.strip() == \
        "['AWS_REGION', 'MY_API_TOKEN', 'PLAIN_SETTING']"
    assert cli("run", "--scrub-env", "--", *show).out.strip() == "['PLAIN_SETTING']"
    assert cli("run", "--scrub-env", "--keep-env", "AWS_REGION", "--", *show).out.strip() == \
        "['AWS_REGION', 'PLAIN_SETTING']"


def test_run_errors_are_one_line(cli):
    missing = cli("run", "--", "no-such-program-xyz")
    assert missing.code == 127 and "cannot run 'no-such-program-xyz'" in missing.err
    empty = cli("run")
    assert empty.code == 2 and "give the command" in empty.err


# --- real tools ---------------------------------------------------------------------


def _write_failing_project(root: Path) -> None:
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "calc.py").write_text(textwrap.dedent("""\
        class Calc:
            def divide(self, a, b):
                return a / b

            def parse(self, text):
                return int(text)
        """))
    (root / "tests" / "test_calc.py").write_text(textwrap.dedent("""\
        import sys
        sys.path.insert(0, "src")
        from calc import Calc

        def test_ok():
            print("no errors in module calc")
            assert Calc().divide(4, 2) == 2

        def test_divide_zero():
            assert Calc().divide(1, 0) == 0

        def test_parse():
            assert Calc().parse("x1") == 1

        def test_noise():
            for i in range(400):
                print(f"step {i} fine")
            assert False, "boom at the end"
        """))


def test_real_pytest_failures_summary_links_symbols(cli, monkeypatch):
    _write_failing_project(cli.root)
    _add_graph_node(cli, "src/calc.py", "Calc.divide", 2, 3)
    _add_graph_node(cli, "tests/test_calc.py", "test_parse", 12, 13)
    # the interpreter by its name on PATH: the summary's label and command hold the
    # program as given, and a long path to it would take room its 2,000 bytes give the
    # errors (a fresh CI venv's path made the FAILED lines the ones to go)
    monkeypatch.setenv("PATH", f"{Path(PY).parent}{os.pathsep}{os.environ['PATH']}")
    result = cli("run", "--json", "--", Path(PY).name, "-m", "pytest", "-p",
                 "no:cacheprovider", "-q", "-s", "tests")
    assert result.code == 1
    summary = result.json()
    texts = _errors(summary)
    assert any("FAILED tests/test_calc.py::test_divide_zero" in t for t in texts)
    assert any("FAILED tests/test_calc.py::test_parse" in t for t in texts)
    assert not any("no errors in module" in t for t in texts)
    divide = [e for e in summary["errors"] if e["text"].startswith("src/calc.py:3")]
    assert divide and divide[0]["symbol"] == "src/calc.py:Calc.divide"
    parse_id = [e for e in summary["errors"] if "::test_parse" in e["text"]]
    assert parse_id[0]["symbol"] == "tests/test_calc.py:test_parse"
    hits = cli("search", "ZeroDivisionError", "--json").json()["hits"]
    assert hits and "src/calc.py:Calc.divide" in hits[0].get("symbols", [])


def test_a_summary_names_each_distinct_failure_whatever_its_exception_is_called(cli):
    # many parametrized tests fail on one exception whose name says neither error nor
    # exception; a later test fails on another cause: the summary keeps both causes
    (cli.root / "src").mkdir()
    (cli.root / "src" / "sig.py").write_text(
        "class BadSignature(Exception):\n    pass\n\n\n"
        "def unsign(value):\n    raise BadSignature(f'signature of {value!r} does not match')\n")
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_sig.py").write_text(
        "import sys\nimport pytest\nsys.path.insert(0, 'src')\nfrom sig import unsign\n\n\n"
        "@pytest.mark.parametrize('n', range(40))\ndef test_unsign(n):\n    unsign(n)\n\n\n"
        "def test_total():\n    assert 1 + 1 == 3\n")
    result = cli("run", "--json", "--", PY, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                 "tests")
    summary = result.json()
    assert result.code == 1 and len(summary["failed_tests"]) + summary[
        "failed_tests_omitted"] == 41
    texts = _errors(summary)
    assert any(t.startswith("src/sig.py:6: BadSignature") for t in texts), texts
    assert any(": AssertionError" in t or "AssertionErr" in t for t in texts), texts
    # one cause is listed once, not once per parameter
    assert sum(t.startswith("src/sig.py:6:") for t in texts) == 1, texts


@pytest.mark.skipif(not shutil.which("gcc"), reason="gcc missing")
def test_real_gcc_error_first_with_file_line(cli):
    (cli.root / "bad.c").write_text(
        '#include <stdio.h>\nint main(void) {\n  int x = "s";\n  return y;\n}\n'
        'int other(void) { return z; }\n')
    summary = cli("run", "--json", "--direct-max", "0", "--", "gcc", "-c", "bad.c",
                  "-o", os.devnull).json()
    assert summary["exit_code"] != 0
    compiler = [e for e in summary["errors"] if e["kind"] == "compiler"]
    assert len(compiler) == 1
    assert compiler[0]["ref"] == "bad.c:4" and "error" in compiler[0]["text"]


@pytest.mark.skipif(not shutil.which("rustc"), reason="rustc missing")
def test_real_rustc_error_takes_the_arrow_location(cli):
    (cli.root / "m.rs").write_text('fn main() {\n    let x: i32 = "no";\n}\n')
    summary = cli("run", "--json", "--direct-max", "0", "--", "rustc", "--edition", "2021",
                  "--emit=metadata", "-o", str(cli.root / "m.out"), "m.rs").json()
    compiler = [e for e in summary["errors"] if e["kind"] == "compiler"]
    assert compiler and compiler[0]["text"].startswith("error[E0308]")
    assert compiler[0]["ref"] == "m.rs:2"


def test_real_json_split_along_structure(cli):
    items = [{"name": f"pkg{i}", "version": f"1.{i}.0",
              "meta": {"license": "MIT", "tags": [f"t{i}", "x"], "note": "rare" if i == 37
                       else "common"}} for i in range(120)]
    source = cli.root / "data.json"
    source.write_text(json.dumps({"packages": items, "count": 120}))
    tool = [PY, "-m", "json.tool", str(source)]
    summary = cli("run", "--json", "--", *tool).json()
    conn = _db(cli)
    rows = conn.execute("SELECT title, text FROM output_chunks ORDER BY id").fetchall()
    assert len(rows) > 5
    for row in rows[1:-1]:
        body = row["text"].strip().rstrip(",")
        assert row["title"].startswith("$.packages[")
        assert isinstance(json.loads(f"[{body}]"), list)   # whole elements only
    hit = cli("search", "rare", "--handle", summary["handle"], "--json").json()["hits"][0]
    span = re.match(r"\$\.packages\[(\d+)(?:-(\d+))?\] \(pkg\d+\)$", hit["title"])
    assert span and int(span.group(1)) <= 37 <= int(span.group(2) or span.group(1))
    assert '"note": "rare"' in hit["text"]


# --- decisive lines -------------------------------------------------------------------


def test_traceback_buried_in_10k_lines_is_found(cli):
    lines = [f"2026-11-30 10:00:{i % 60:02d} INFO request {i} served" for i in range(10000)]
    lines[7321:7321] = ["Traceback (most recent call last):",
                        '  File "/srv/app/payments.py", line 88, in charge',
                        "    gateway.send(amount)",
                        "payments.GatewayTimeout: upstream did not answer in 30s"]
    path = cli.root / "app.log"
    path.write_text("\n".join(lines) + "\n")
    summary = cli("store", str(path), "--json").json()
    trace = [e for e in summary["errors"] if e["kind"] == "traceback"]
    assert trace[0]["line"] == 7325 and "GatewayTimeout" in trace[0]["text"]
    result = cli("search", "gateway timeout", "--json").json()
    assert result["status"] == "ok"
    top = result["hits"][0]
    assert top["line_start"] <= 7325 <= top["line_end"]
    assert top["line_end"] - top["line_start"] <= 8   # matching lines plus context only


def test_same_file_name_failing_in_two_places(cli):
    text = "\n".join(["building..."] * 50 + [
        "pkg/alpha/util.py:10: error: Name 'foo' is not defined",
        "ok line"] + ["more"] * 50 + [
        "pkg/beta/util.py:20: error: Incompatible return value",
        "done"]) + "\n"
    summary = cli("store", "-", "--json", stdin=text).json()
    refs = {e.get("ref") for e in summary["errors"]}
    assert {"pkg/alpha/util.py:10", "pkg/beta/util.py:20"} <= refs
    hits = cli("search", "util.py error", "--json").json()["hits"]
    starts = sorted(h["line_start"] for h in hits)
    assert len(hits) >= 2 and starts[0] < 53 and starts[-1] > 60


def test_negation_next_to_the_real_error(cli):
    text = "\n".join(["setup"] * 20 + ["no errors in module billing",
                                       "0 failed, 12 passed",
                                       "ERROR: database migration 42 failed: duplicate column",
                                       "errors: 0"] + ["teardown"] * 20) + "\n"
    summary = cli("store", "-", "--json", stdin=text).json()
    assert _errors(summary) == ["ERROR: database migration 42 failed: duplicate column"]


NEGATED_LINES = ["exceptions.py: no exceptions", "error count: 0", "Fatal: false",
                 "failures: none", "Tests run: 5, Failures: 0, Errors: 0, Skipped: 0",
                 "tests/test_errors.py::test_parse PASSED"]
REAL_ERRORS = ["ERROR pool size: 0", "Tests run: 5, Failures: 2, Errors: 0"]


def test_a_passing_run_lists_no_errors_from_negations(cli):
    text = "\n".join([str(i) for i in range(200)] + NEGATED_LINES) + "\n"
    summary = cli("store", "-", "--json", "--exit-code", "0", "--command", "make",
                  stdin=text).json()
    assert _errors(summary) == []
    # the search reads the same lines the same way: the one line it finds for "errors"
    # is the test file's name, a query word and no problem
    found = cli("search", "errors", "--json", "--handle", summary["handle"]).json()
    assert [hit["line"] for hit in found["hits"]] == [206]


def test_what_only_looks_like_a_negation_stays_an_error(cli):
    text = "\n".join([str(i) for i in range(200)] + NEGATED_LINES + REAL_ERRORS) + "\n"
    summary = cli("store", "-", "--json", stdin=text).json()
    assert _errors(summary) == REAL_ERRORS
    found = cli("search", "errors", "--json", "--handle", summary["handle"]).json()
    lines = [hit["line"] for hit in found["hits"]]
    assert lines[0] in (207, 208, 209) and not set(lines) & set(range(201, 206))


# --- search ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", ['"', '"unclosed', "*", "fail*", "NEAR(a b)", "-x", "a:b",
                                   "(", ")", "col:value AND (x OR", "^start", "a - b + c",
                                   "'", "{}"])
def test_any_query_text_is_safe(cli, query):
    cli("store", "-", stdin="alpha beta NEAR gamma a:b (x) fail*\n")
    result = cli("search", "--json", "--", query)
    assert result.code == 0, result.err
    assert result.json()["status"] in ("ok", "no_hits")


def test_fallbacks_are_listed_and_merged(cli):
    cli("store", "-", stdin="worker 3 raised ConnectionRefusedError on port 5432\n"
                           "parseConfigFile could not open settings.yaml\n" + "filler\n" * 80)
    result = cli("search", "connection exception", "--json").json()
    assert [t["strategy"] for t in result["queries_tried"]] == ["scan"]
    assert result["status"] == "ok" and "ConnectionRefusedError" in result["hits"][0]["text"]
    substring = cli("search", "ConfigFile", "--json").json()
    assert substring["status"] == "ok"
    assert "parseConfigFile" in substring["hits"][0]["text"]
    none = cli("search", "zebra", "--json").json()
    assert none["status"] == "no_hits" and none["hits"] == []


def test_search_is_confined_to_the_project(cli):
    cli("store", "-", "-p", "one", stdin="unique-marker-xyz appears here\n")
    assert cli("search", "unique-marker-xyz", "-p", "one", "--json").json()["hits"]
    assert cli("search", "unique-marker-xyz", "-p", "two", "--json").json()["status"] == \
        "no_hits"
    handle = cli("outputs", "-p", "one", "--json").json()["outputs"][0]["handle"]
    assert cli("expand", handle, "-p", "two").code == 1


def test_search_failure_is_not_no_hits(cli, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    result = cli("search", "x", "--db", str(junk), "--json")
    assert result.code == 1 and result.json()["status"] == "error"


# --- expand, outputs, purge, retention, stats -----------------------------------------


@pytest.mark.slow  # waits out the regex time limit, by nature
@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)*!"])
def test_a_regex_that_backtracks_without_end_is_stopped_with_one_line(cli, pattern):
    text = "ok line\n" + "a" * 40 + "b\n" + "tail line\n"
    handle = cli("store", "-", "--json", stdin=text).json()["handle"]
    # a real process: the old code never returned (the timeout guards the suite)
    result = cli.sub("expand", handle, "--grep", pattern, timeout=60)
    assert result.code == 2 and result.err.count("\n") == 1
    assert "--grep" in result.err and "ran over" in result.err
    data = cli.sub("expand", handle, "--grep", pattern, "--json", timeout=60)
    assert data.code == 2 and json.loads(data.out)["status"] == "error"
    # the same database answers a sound pattern right after
    assert cli("expand", handle, "--grep", "^a{40}b$", "--json").json()["lines"][0]["line"] == 2


def test_expand_options(cli):
    text = "".join(f"row {i}\n" for i in range(1, 201))
    handle = cli("store", "-", "--json", stdin=text).json()["handle"]
    first = cli("expand", handle, "--lines", "10-12").out.split("\n")[0]
    assert first.split() == ["10", "row", "10"]
    head = cli("expand", handle, "--head", "3", "--json").json()["lines"]
    assert [item["line"] for item in head] == [1, 2, 3]
    tail = cli("expand", handle, "--tail", "2", "--json").json()["lines"]
    assert [item["line"] for item in tail] == [199, 200]
    grep = cli("expand", handle, "--grep", r"^row 1\d\d$", "--json").json()["lines"]
    assert len(grep) == 100
    assert cli("expand", handle, "--grep", "(").code == 2
    assert cli("expand", handle, "--lines", "9-3").code == 2
    assert cli("expand", "o999").code == 1


def test_expand_head_and_tail_with_grep_count_matching_lines(cli):
    # a log whose failures all come after its first lines, as a test run's summary does
    text = "".join(f"collected row {i}\n" for i in range(1, 301))
    text += "".join(f"FAILED tests/t.py::test_{i} - boom\n" for i in range(1, 8))
    handle = cli("store", "-", "--json", stdin=text).json()["handle"]

    def lines(*args):
        return [i["line"] for i in cli("expand", handle, *args, "--json").json()["lines"]]

    assert lines("--grep", "FAILED", "--head", "3") == [301, 302, 303]
    assert lines("--grep", "FAILED", "--tail", "2") == [306, 307]
    assert lines("--grep", "FAILED", "--head", "4", "--tail", "2") == [303, 304]
    assert lines("--grep", "FAILED", "--lines", "1-303", "--tail", "5") == [301, 302, 303]
    assert lines("--grep", "FAILED", "--lines", "305-") == [305, 306, 307]
    # without --grep the range narrows as before
    assert lines("--head", "2") == [1, 2] and lines("--lines", "5-9", "--tail", "2") == [8, 9]
    human = cli("expand", handle, "--grep", "FAILED", "--head", "1")
    assert human.code == 0 and human.out.split() == [
        "301", "FAILED", "tests/t.py::test_1", "-", "boom"]
    assert "no matching lines" in cli("expand", handle, "--grep", "nothing-like-it").out


def test_expand_says_when_it_stops_at_its_line_limit(cli, monkeypatch):
    monkeypatch.setattr(ctxkit, "EXPAND_MAX_LINES", 50)
    handle = cli("store", "-", "--json", stdin="row\n" * 80).json()["handle"]
    result = cli("expand", handle, "--json")
    assert len(result.json()["lines"]) == 50 and result.json()["truncated"] is True
    assert "stopped at 50 lines" in result.err
    whole = cli("expand", handle, "--lines", "1-40", "--json")
    assert len(whole.json()["lines"]) == 40 and "truncated" not in whole.json()
    assert whole.err == ""


def test_purge_secure_delete_and_bytes_freed(cli):
    marker = "purgeable-content-" + "q" * 40
    handle = cli("store", "-", "--json", stdin=f"{marker}\n" * 200).json()["handle"]
    keep = cli("store", "-", "--json", stdin="keep me\n").json()["handle"]
    result = cli("purge", "--handle", handle, "--json").json()
    assert result["purged"] == 1 and result["bytes_freed"] >= 200 * len(marker)
    assert marker.encode() not in cli.db.read_bytes()
    assert [o["handle"] for o in cli("outputs", "--json").json()["outputs"]] == [keep]
    assert cli("purge", "--older-than", "7d", "--json").json()["purged"] == 0
    assert cli("purge", "--all", "--json").json()["purged"] == 1
    assert cli("purge", "--older-than", "soon").code == 2
    assert cli("purge").code == 2


def test_an_outputs_size_is_one_number_in_outputs_stats_and_purge(cli):
    # stored text differs from what the command wrote: a redacted secret, a Latin-1 byte
    # kept as \\xNN, CRLF line ends, no final newline
    script = ("import sys; out = sys.stdout.buffer\n"
              "for i in range(600): out.write(b'row %d caf\\xe9 ok\\r\\n' % i)\n"
              "out.write(b'token=ghp_' + b'a' * 36 + b'\\r\\nend')")
    handle = cli("run", "--json", "--direct-max", "0", "--", PY, "-c", script).json()["handle"]
    listed = next(o for o in cli("outputs", "--json").json()["outputs"]
                  if o["handle"] == handle)
    assert f"{listed['bytes']:>12,} B" in cli("outputs").out
    kept = cli("stats", "--outputs", "--json").json()["bytes_kept"]
    freed = cli("purge", "--handle", handle, "--json").json()["bytes_freed"]
    after = cli("stats", "--outputs", "--json").json()["bytes_kept"]
    assert freed == listed["bytes"] == kept - after > 0


def test_retention_applies_when_new_outputs_arrive(cli):
    (cli.root / ".ctxkit").mkdir(exist_ok=True)
    (cli.root / ".ctxkit" / "config.toml").write_text("[output]\nretention_days = 2\n")
    old = cli("store", "-", "--json", stdin="old output\n").json()["handle"]
    conn = _db(cli)
    conn.execute("UPDATE outputs SET created_at = '2020-01-01T00:00:00.000000Z' "
                 "WHERE handle = ?", (old,))
    conn.commit()
    conn.close()
    cli("store", "-", stdin="new output\n")
    handles = [o["handle"] for o in cli("outputs", "--json").json()["outputs"]]
    assert old not in handles and len(handles) == 1


def test_stats_and_public_functions(cli, capsys):
    cli("run", "--", "sh", "-c", "echo small")
    cli("run", "--", PY, "-c", "print('x' * 100 + '\\n') ; [print(i) for i in range(3000)]")
    cli("search", "small")
    cli("search", "nothing-here-at-all")
    env = ctxkit.make_env(cwd=cli.root, as_json=True)
    db = ctxkit.open_db(env)
    summary = ctxkit.store_output_text(env, db, "FAILED tests/t.py::test_x - boom\n",
                                       label="Bash", command="pytest", exit_code=1)
    assert summary["handle"] and summary["errors"][0]["line"] == 1
    failing, more = ctxkit.failing_outputs(db, env.project, 10)
    assert [o["handle"] for o in failing] == [summary["handle"]] and more == 0
    assert failing[0]["errors"] == [{"line": 1, "text": "FAILED tests/t.py::test_x - boom"}]
    capsys.readouterr()
    old = os.getcwd()
    os.chdir(cli.root)
    try:
        ctxkit.cmd_output_stats(None, env)
    finally:
        os.chdir(old)
    stats = json.loads(capsys.readouterr().out)
    assert stats["direct"] == 2 and stats["virtualized"] == 1
    assert stats["searches_with_hits"] == 1 and stats["searches_without_hits"] == 1
    assert 0 < stats["bytes_returned"] < stats["bytes_stored"]


# --- redaction ------------------------------------------------------------------------

SECRETS = {
    "openai": "sk-abcdefghijklmnopqrstuvwx1234",
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "bearer": "Bearer abcdefghijklmnop123",
    "aws": "AKIAABCDEFGHIJKLMNOP",
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "slack": "xoxb-1234567890-abcdefghij",
    "google": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
}
SAFE = ["password=self.password", "token count: 1500", "keyboard layout us",
        "see https://example.com/docs/page", "secret_sauce_recipe()", "skip-tests enabled"]


def test_redaction_corpus(cli):
    lines = [f"{name}: {value}" for name, value in SECRETS.items()]
    lines += ['db_password = "hunter2hunter2"', "postgres://admin:s3cr3tpw@db.local:5432/app",
              "export API_KEY=zz9plural"]
    lines += SAFE
    summary = cli("store", "-", "--json", stdin="\n".join(lines) + "\n").json()
    assert summary["redactions"] == len(SECRETS) + 3
    stored = b"".join(path.read_bytes() for path in cli.db.parent.glob("ctxkit.db*"))
    for value in [*SECRETS.values(), "hunter2hunter2", "s3cr3tpw", "zz9plural"]:
        assert value.encode() not in stored, value
    text = "\n".join(item["text"] for item in cli("expand", summary["handle"], "--json")
                     .json()["lines"])
    for safe in SAFE:
        assert safe in text
    assert cli("search", "hunter2hunter2", "--json").json()["status"] == "no_hits"


def test_private_key_block_split_across_reads_is_redacted(cli):
    script = ("import sys, time\n"
              "print('before'); sys.stdout.flush()\n"
              "print('-----BEGIN RSA PRIVATE KEY-----'); sys.stdout.flush(); time.sleep(0.2)\n"
              "print('MIIEowIBAAKCAQEAsecretkeymaterialline1'); sys.stdout.flush()\n"
              "time.sleep(0.2)\n"
              "print('secretkeymaterialline2'); print('-----END RSA PRIVATE KEY-----')\n"
              "print('after')\n")
    summary = cli("run", "--json", "--", PY, "-c", script).json()
    assert summary["redactions"] == 1
    lines = [item["text"] for item in cli("expand", summary["handle"], "--json").json()["lines"]]
    assert lines[0] == "before" and lines[-1] == "after" and len(lines) == 6
    assert not any("secretkeymaterial" in item for item in lines)


# --- ingestion limits -------------------------------------------------------------------


def test_binary_invalid_utf8_and_a_long_line(cli):
    long_line = "L" * (3 * ctxkit.LINE_PIECE + 17)
    data = (b"start\n\xff\xfe broken \xc3\n\x00\x01binary\x02\n" + long_line.encode()
            + b"\nend")
    path = cli.root / "blob.bin"
    path.write_bytes(data)
    summary = cli("store", str(path), "--json").json()
    assert summary["lines"] == 5 and summary["bytes"] == len(data)
    lines = cli("expand", summary["handle"], "--json").json()["lines"]
    assert [item["line"] for item in lines] == [1, 2, 3, 4, 5]
    assert lines[1]["text"] == "\\xff\\xfe broken \\xc3"
    assert lines[2]["text"] == "\\x00\x01binary\x02"
    assert lines[3]["text"] == long_line and lines[4]["text"] == "end"
    assert cli("search", "broken", "--json").json()["status"] == "ok"


def test_stdout_and_stderr_keep_order_and_stream(cli):
    script = ("import sys, time\n"
              "for i in range(6):\n"
              "    out = sys.stderr if i % 2 else sys.stdout\n"
              "    print(f'msg {i}', file=out); out.flush(); time.sleep(0.05)\n")
    handle = cli("run", "--json", "--direct-max", "0", "--", PY, "-c", script).json()["handle"]
    lines = cli("expand", handle, "--json").json()["lines"]
    assert [item["text"] for item in lines] == [f"msg {i}" for i in range(6)]
    assert [item["stream"] for item in lines] == ["stdout", "stderr"] * 3


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:   # a zombie is not alive
        return handle.read().split(")")[-1].split()[0] != "Z"


def test_timeout_ends_the_process_group_and_keeps_output(cli, tmp_path):
    pidfile = tmp_path / "pids"
    script = f"echo started; sleep 300 & echo $! > {pidfile}; echo $$ >> {pidfile}; sleep 300"
    result = cli("run", "--timeout", "1", "--json", "--", "sh", "-c", script)
    assert result.code == 124
    summary = result.json()
    assert summary["status"] == "timeout" and summary["exit_code"] == 124
    assert summary["stored"] and summary["lines"] == 1
    for pid in map(int, pidfile.read_text().split()):
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"orphan {pid} left"


def test_a_timeout_says_so_in_text_mode(cli):
    """Found by a new user: text mode printed `exit 124 · 1 lines` and never said the
    command was stopped at its timeout (--json said so)."""
    result = cli("run", "--timeout", "1", "--", "sh", "-c", "echo started; sleep 30")
    assert result.code == 124 and "started" in result.out
    assert "timeout · exit 124" in result.err


def test_sigint_to_ctxkit_ends_the_group(cli, tmp_path):
    pidfile = tmp_path / "pids"
    script = f"echo working; sleep 300 & echo $! > {pidfile}; sleep 300"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    proc = subprocess.Popen([*CONSOLE_ARGV, "run", "--json", "--", "sh", "-c",
                             script], cwd=cli.root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    summary = json.loads(out)
    assert summary["status"] == "interrupted" and summary["lines"] == 1
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


@pytest.mark.slow
def test_100mb_stream_with_bounded_memory(cli):
    script = ("import sys\n"
              "line = ('2026-11-30 12:00:00 INFO streaming payload ' + 'x' * 60 + '\\n').encode()\n"
              "block = line * 10000\n"
              "for _ in range(100 * 1024 * 1024 // len(block) + 1):\n"
              "    sys.stdout.buffer.write(block)\n"
              "sys.stdout.buffer.write(b'z' * (20 * 1024 * 1024) + b'\\n')\n"
              "print('FATAL: the one rare line')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    # ctxkit is started by a small interpreter that reports its children's peak
    # RSS: a child forked straight from pytest would count pytest's own pages.
    measure = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
               "sys.stderr.write('MAXRSS=%d\\n' % resource.getrusage("
               "resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)")
    proc = subprocess.run([PY, "-c", measure, PY, str(Path(ctxkit.__file__)), "run", "--json",
                           "--", PY, "-c", script], cwd=cli.root, capture_output=True, env=env)
    assert proc.returncode == 0
    summary = json.loads(proc.stdout)
    assert summary["bytes"] > 120 * 1024 * 1024 and summary["stored"]
    assert any("FATAL: the one rare line" in t for t in _errors(summary))
    peak_mb = int(proc.stderr.decode().rsplit("MAXRSS=", 1)[1].split()[0]) / 1024
    assert peak_mb < 150, f"peak RSS {peak_mb:.0f} MB"
    hits = cli("search", "rare line", "--json").json()["hits"]
    assert hits and hits[0]["line_start"] <= summary["lines"] <= hits[0]["line_end"]


# --- failure policy -------------------------------------------------------------------


def test_unwritable_database_small_output_printed_large_fails(cli):
    bad = "/proc/ctxkit-cannot-exist/ctxkit.db"
    small = cli("run", "--db", bad, "--", "sh", "-c", "echo tiny; exit 4")
    assert small.code == 4 and small.out == "tiny\n"
    assert "not stored" in small.err
    big = cli("run", "--db", bad, "--", PY, "-c",
              "[print(f'row {i}') for i in range(5000)]; print('ERROR: last straw')")
    assert big.code == 1
    assert "exited with status 0" in big.err and "could not be stored" in big.err
    assert "ERROR: last straw" in big.out and "NOT stored" in big.out


def test_newer_database_is_not_written_but_the_command_runs(cli, tmp_path):
    path = tmp_path / "newer.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    result = cli("run", "--db", str(path), "--", "sh", "-c", "echo fine")
    assert result.code == 0 and result.out == "fine\n" and "newer ctxkit" in result.err
    assert cli("store", "--db", str(path), "-", stdin="x\n").code == 1


def test_read_only_database_file(cli):
    """A real database that cannot be written (immutable file; root ignores chmod)."""
    cli("store", "-", stdin="first output\n")
    files = [cli.db, cli.db.parent / "ctxkit.db-wal", cli.db.parent / "ctxkit.db-shm"]
    subprocess.run([PY, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()", str(cli.db)])
    locked = [f for f in files if f.exists()]
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", *map(str, locked)],
                                                    capture_output=True).returncode:
        pytest.skip("chattr +i is not available here")
    try:
        subprocess.run(["chattr", "+i", str(cli.db.parent)], check=True)
        small = cli("run", "--", "sh", "-c", "echo still runs; exit 5")
        assert small.code == 5 and small.out == "still runs\n" and "not stored" in small.err
        big = cli("run", "--", PY, "-c", "[print(f'line {i}') for i in range(3000)]")
        assert big.code == 1 and "could not be stored" in big.err
        assert "NOT stored" in big.out and "line 2999" in big.out
    finally:
        subprocess.run(["chattr", "-i", str(cli.db.parent), *map(str, locked)])


def test_command_that_cannot_start_leaves_no_record(cli):
    result = cli("run", "--", "/nonexistent/command-xyz")
    assert result.code != 0 and result.err.startswith("ctxkit: error:")
    assert cli("outputs", "--json").json()["outputs"] == []


def test_retention_days_out_of_range_is_one_clear_line(cli):
    (cli.root / ".ctxkit").mkdir(exist_ok=True)
    (cli.root / ".ctxkit" / "config.toml").write_text("[output]\nretention_days = 1000000\n")
    result = cli("store", "-", stdin="hello\n")
    assert result.code == 1 and "retention_days" in result.err and "internal" not in result.err


def test_purge_older_than_huge_age_is_a_usage_error(cli):
    cli("store", "-", stdin="hello\n")
    result = cli("purge", "--older-than", "99999999d")
    assert result.code == 2 and "--older-than" in result.err


def test_a_failing_subtest_is_a_failed_test_and_its_message_one_decisive_line(cli):
    """pytest 9 reports a failing unittest subTest as `SUBFAILED(n=1) <id> - ...`; a
    message with blank lines (`assertEqual` of two lists) is one run of E lines."""
    (cli.root / "test_sub.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_lists(self):\n"
        "        for n in (1, 2):\n            with self.subTest(n=n):\n"
        "                self.assertEqual([1, 2, n], [1, 2])\n\n"
        "    def test_plain(self):\n        assert 1 == 2\n")
    result = cli.sub("run", "--json", "--direct-max", "0", "--", sys.executable, "-m", "pytest",
                     "-q", "-p", "no:cacheprovider", "test_sub.py")
    summary = result.json()
    assert "SUBFAILED" in cli.sub("expand", summary["handle"]).out, "not pytest's subtests"
    assert sorted(summary["failed_tests"]) == ["test_sub.py::T::test_lists",
                                               "test_sub.py::T::test_plain"]
    e_lines = [e["text"] for e in summary["errors"] if e["kind"] == "exception"]
    assert [text.split(None, 1)[1] for text in e_lines] == [       # one per failure
        "AssertionError: Lists differ: [1, 2, 1] != [1, 2]",
        "AssertionError: Lists differ: [1, 2, 2] != [1, 2]", "assert 1 == 2"], e_lines


def test_the_code_a_pytest_traceback_lists_is_no_problem_line(cli):
    """pytest lists the code of each frame of a failure (indented, "> " on the line that
    raised): a comment or a string in it that says "error" is code, not what happened,
    and the next search follows the exception, not the comment (httpx's raise_for_status:
    "# 2xx status codes are not an error." and `4: "Client error",` were its first
    decisive lines). What the test printed (a Captured section) is still read."""
    (cli.root / "test_codes.py").write_text(
        "KINDS = {4: 'Client error', 5: 'Server error'}\n\n"
        "def check(code):\n    # a code of 2xx is not an error at all\n"
        "    kind = KINDS.get(code // 100, 'Invalid status code error')\n"
        "    raise LookupError(kind)\n\n"
        "def test_ok_code():\n    print('    worker error: disk quota')\n"
        "    check(200)\n")
    result = cli.sub("run", "--json", "--direct-max", "0", "--", sys.executable, "-m", "pytest",
                     "-q", "-p", "no:cacheprovider", "test_codes.py")
    summary = result.json()
    listing = cli.sub("expand", summary["handle"]).out
    assert "# a code of 2xx is not an error at all" in listing, "not pytest's long traceback"
    texts = [e["text"] for e in summary["errors"]]
    assert not [t for t in texts if "KINDS" in t or "# a code" in t or "raise " in t], texts
    assert any(t.startswith("E ") and "LookupError" in t for t in texts), texts
    assert any("worker error: disk quota" in t for t in texts), texts
    assert summary["next"]["search"].startswith("ctxkit search LookupError"), summary["next"]


def test_an_empty_output_suggests_no_lines_to_read(cli):
    """Found by a new user: a command that printed nothing was told `next: ctxkit
    expand oN --lines 1-1`, a line that does not exist."""
    summary = cli("run", "--json", "--direct-max", "0", "--", "sh", "-c", "exit 3").json()
    assert summary["lines"] == 0 and summary["exit_code"] == 3
    assert summary["next"] == {}
