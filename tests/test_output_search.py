"""Output search: each ranking mechanism on its own, through the real CLI on real output.

Most outputs here are made by real programs (python, sh, make, gcc, pytest); a few
lines are written in a tool's format where the tool itself is not at hand (node's
ECONNREFUSED). Tests that must go through the FTS strategies rather than the
whole-output scan set SEARCH_SCAN_BYTES to 0.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sqlite3
import textwrap
from pathlib import Path

import pytest

import ctxkit

PY = sys.executable


def store(cli, text: str) -> str:
    result = cli("store", "-", "--json", stdin=text)
    assert result.code == 0, result.err
    return result.json()["handle"]


def run_stored(cli, *argv: str) -> str:
    """Run a real command under `ctxkit run`; its handle."""
    result = cli("run", "--json", "--direct-max", "0", "--", *argv)
    return result.json()["handle"]


def search(cli, query: str, handle: str | None = None, limit: int = 5) -> dict:
    args = ["search", query, "--json", "--limit", str(limit)]
    if handle:
        args += ["--handle", handle]
    result = cli(*args)
    assert result.code == 0, result.err
    return result.json()


def top_line(result: dict) -> int:
    assert result["hits"], result
    return result["hits"][0]["line"]


def covers(hit: dict, line: int) -> bool:
    return hit["line_start"] <= line <= hit["line_end"]


@pytest.fixture(params=["scan", "fts"])
def path(request, monkeypatch):
    """Run a test once on the whole-output scan and once on the FTS strategies."""
    if request.param == "fts":
        monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    return request.param


def service_log(rare: str, at: int = 14321, lines: int = 20000) -> str:
    """A busy service log: every tenth line an ordinary ERROR, one rare line inside."""
    out = []
    for i in range(lines):
        if i == at:
            out.append(rare)
        elif i % 10 == 3:
            out.append(f"2026-12-01 10:{i // 600 % 60:02d}:{i % 60:02d} ERROR [api-{i % 7}] "
                       f"request {i} to upstream returned an error, retrying")
        else:
            out.append(f"2026-12-01 10:{i // 600 % 60:02d}:{i % 60:02d} INFO [api-{i % 7}] "
                       f"GET /orders/{i} 200 in {i % 90}ms")
    return "\n".join(out) + "\n"


# --- severity -------------------------------------------------------------------------


def test_a_rare_term_outweighs_error_on_thousands_of_lines(cli, path):
    rare = "2026-12-01 10:23:41 FATAL [ledger] journal replay aborted at segment 0x7f3a9c"
    handle = store(cli, service_log(rare))
    result = search(cli, "error in segment 0x7f3a9c", handle)
    assert top_line(result) == 14322


def test_a_problem_word_matches_a_severe_line_whatever_word_it_uses(cli, path):
    rare = "2026-12-01 10:23:41 CRITICAL [ledger] journal replay stopped, disk image unreadable"
    handle = store(cli, service_log(rare).replace(" ERROR ", " INFO  "))
    result = search(cli, "ledger crash", handle)
    assert top_line(result) == 14322


def test_a_real_traceback_answers_why_it_crashed(cli):
    script = ("import time\n"
              "for i in range(300):\n"
              "    print(f'step {i}: worker handled batch {i * 3}')\n"
              "raise RuntimeError('journal checksum does not match the header')\n")
    handle = run_stored(cli, PY, "-c", script)
    result = search(cli, "why did the worker die", handle)
    lines = cli("expand", handle, "--json").json()["lines"]
    error = next(item["line"] for item in lines if item["text"].startswith("RuntimeError"))
    assert covers(result["hits"][0], error)


# --- negation ---------------------------------------------------------------------------


def test_a_line_that_negates_the_problem_ranks_below_the_one_that_reports_it(cli, path):
    text = "\n".join(["setup step"] * 30 + [
        "billing: no errors found in module billing",
        "billing: 0 errors, 0 warnings in 14 files",
        "billing: errors: 0",
        "ERROR billing: migration 42 failed: duplicate column 'total'",
    ] + ["teardown step"] * 30) + "\n"
    handle = store(cli, text)
    assert top_line(search(cli, "billing errors", handle)) == 34


def test_passed_tests_rank_below_the_failed_one(cli, path):
    lines = [f"test ledger::tests::balance_{i} ... ok" for i in range(60)]
    lines[41] = "test ledger::tests::balance_41 ... FAILED"
    handle = store(cli, "\n".join(lines) + "\ntest result: FAILED. 59 passed; 1 failed\n")
    result = search(cli, "which balance test failed", handle)
    assert top_line(result) in (42, 61)


# --- vocabulary from Python's tables --------------------------------------------------


def test_errno_names_and_their_messages(cli, tmp_path):
    handle = run_stored(cli, PY, "-c", "open('/nonexistent/settings.json')")
    assert "No such file or directory" in search(cli, "ENOENT", handle)["hits"][0]["text"]
    port = _closed_port()
    handle = run_stored(cli, PY, "-c",
                        f"import socket; socket.create_connection(('127.0.0.1', {port}))")
    assert "Connection refused" in search(cli, "ECONNREFUSED", handle)["hits"][0]["text"]
    node = "\n".join(["[client] connecting to billing"] + ["[client] waiting"] * 30 + [
        "Error: connect ECONNREFUSED 127.0.0.1:9",
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)"]) + "\n"
    handle = store(cli, node)
    assert top_line(search(cli, "connection refused", handle)) == 32


def _closed_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_signals_and_exit_statuses(cli):
    script = 'sh -c "kill -9 \\$\\$"; echo "worker exited with status $?"'
    handle = run_stored(cli, "sh", "-c", "for i in $(seq 40); do echo tick $i; done; " + script)
    result = search(cli, "was the worker killed", handle)
    assert "status 137" in result["hits"][0]["text"]
    assert "status 137" in search(cli, "SIGKILL", handle)["hits"][0]["text"]
    script = 'timeout 0.2 sleep 5; echo "step finished with exit code $?"'
    handle = run_stored(cli, "sh", "-c", "for i in $(seq 40); do echo tick $i; done; " + script)
    assert "exit code 124" in search(cli, "step timed out", handle)["hits"][0]["text"]


def test_http_status_codes_and_reason_phrases(cli, path):
    text = "\n".join([f"GET /api/items/{i} status=200" for i in range(50)] +
                     ["GET /api/orders status=503 upstream pool exhausted"] +
                     [f"GET /api/items/{i} status=200" for i in range(50)]) + "\n"
    handle = store(cli, text)
    assert top_line(search(cli, "orders service unavailable", handle)) == 51
    text = "\n".join(["fetching"] * 40 + ["proxy said: 503 Service Unavailable"] +
                     ["fetching"] * 40) + "\n"
    handle = store(cli, text)
    assert top_line(search(cli, "status 503", handle)) == 41


# --- the word-family table --------------------------------------------------------------


def test_word_family_table_is_well_formed():
    names = [name for name, _, _ in ctxkit.WORD_FAMILIES]
    assert len(names) == len(set(names))
    for name, kind, members in ctxkit.WORD_FAMILIES:
        words = members.split("|")
        assert kind in ("", "problem", "severity"), name
        assert words == [w.lower().strip() for w in words] and len(words) == len(set(words))
    for name, _, _ in ctxkit.LINE_KINDS:
        assert name not in names


@pytest.mark.parametrize("word, expected", [
    ("undeclared", ["cannot find", "not defined", "undefined", "unresolved"]),
    ("traceback", ["backtrace", "stack trace", "goroutine"]),
    ("failing", ["error", "failure", "not ok"]),
    ("timeout", ["deadline", "timed out", "hung"]),
])
def test_a_family_word_brings_the_other_members(word, expected):
    query = ctxkit.SearchQuery(f"which {word}")
    texts = {v.spec[1] for v in query.variants}
    stems = {ctxkit.word_spec(w)[1] for w in expected}
    assert stems <= texts, (stems - texts)


def test_families_of_compiler_and_runtime_wording(cli):
    gcc = shutil.which("gcc")
    if gcc:
        source = cli.root / "bank.c"
        source.write_text("double interest(double b) {\n    return b * rate;\n}\n")
        handle = run_stored(cli, gcc, "-c", str(source), "-o", os.devnull)
        assert "undeclared" in search(cli, "unknown identifier", handle)["hits"][0]["text"]
    handle = run_stored(cli, PY, "-c", "print('start')\ntotal = reslt + 1")
    assert "is not defined" in search(cli, "undefined variable", handle)["hits"][0]["text"]
    assert "Traceback" in search(cli, "stack dump", handle)["hits"][0]["text"]


def test_a_negated_query_word_means_its_negative_form(cli):
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("gcc is not installed")
    source = cli.root / "bank.c"
    source.write_text("#include <string.h>\n"
                      "double interest(double b) { return b * rate; }\n"
                      "void copy(char *name) { strcpy(name); }\n")
    handle = run_stored(cli, gcc, "-c", str(source), "-o", os.devnull)
    top = search(cli, "which variable was never declared", handle)["hits"][0]
    assert "undeclared" in top["text"] and "declared here" not in top["text"].split("\n")[0]


GRADLE = """\
> Task :app:compileJava UP-TO-DATE
> Task :app:run FAILED
Exception in thread "main" java.lang.IllegalStateException: ledger closed
\tat com.example.ledger.Ledger.post(Ledger.java:41)
\tat com.example.ledger.Main.run(Main.java:12)
\tat com.example.ledger.Main.main(Main.java:7)

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:run'.
> Process 'command '/usr/lib/jvm/java-17-openjdk-amd64/bin/java'' finished with non-zero exit \
value 1

* Try:
> Run with --stacktrace option to get the stack trace.
> Run with --info or --debug option to get more log output.
> Get more help at https://help.gradle.org.

BUILD FAILED in 2s
"""


def test_the_stack_asked_for_outranks_the_advice_that_names_it(cli):
    handle = store(cli, GRADLE)
    top = search(cli, "stack trace", handle)["hits"][0]
    assert covers(top, 4) and not covers(top, 16)


@pytest.mark.parametrize("line, lesser", [
    ("24 |     let label: String = account.id;", True),           # rustc's source echo
    ("    7 |     return a->balance * rate;", True),              # gcc
    ("    > 11 |     expect(priceWithTax(1000, 'mars')).toBe(1000);", True),   # jest
    (">       assert c.total({'pear': 1}) == 2", True),            # pytest
    ("[ERROR] Re-run Maven using the -X switch to enable full debug logging.", True),
    ("For more information about this error, try `rustc --explain E0308`.", True),
    ("error[E0308]: mismatched types", False),
    ("E       KeyError: 'pear'", False),
    ("   |                ------   ^^^^^^^^^^ expected `String`, found `u32`", False),
])
def test_echoed_source_and_tool_advice_speak_less(line, lesser):
    assert (ctxkit.lesser_factor(line) < 1.0) is lesser


# Lines of the shapes the skipped patterns look for, one or more per alternative.
SHAPED_LINES = [
    "FAILED tests/test_cart.py::test_total[apple] - KeyError: 'apple'",
    "tests/test_cart.py::test_total FAILED                      [ 50%]",
    "[gw1] [ 50%] ERROR tests/test_db.py::test_connect", "--- FAIL: TestReserve (0.00s)",
    "test ledger::parses_cents ... FAILED", "  ✕ adds tax to the total (3 ms)",
    "  ● cart › adds tax", "[ERROR] shop.CartTest -- Time elapsed: 0.1 s <<< FAILURE!",
    "testAdd(shop.CartTest)  Time elapsed: 0.01 sec  <<< ERROR!",
    "  ✘  2 [chromium] › login.spec.ts:3:1 › logs in (1.2s)",
    "________________________ test_total ________________________",
    "---- ledger::parses_cents stdout ----", "=== RUN   TestReserve", "  1) login page",
    "    at Object.<anonymous> (src/cart.js:3:11)", '  File "src/x.py", line 3, in load',
    "   0: std::panicking::begin_panic", "\t/app/cache.go:12 +0x1d", "src/x.py:4: in load",
    "Process exited with code 2", "make: *** [all] Error 2", "npm ERR! code ELIFECYCLE",
    "subprocess.CalledProcessError: returned non-zero exit status 1.",
    "The command '/bin/sh -c make' did not complete successfully: exit code: 2",
    "PASSED", "test result: ok. 3 passed", "Success", "  ✓ adds tax", "✔ done",
    "   7 |     return a->balance * rate;", "    > 11 |     expect(x).toBe(1);",
    ">       assert c.total() == 2", "   |", "[ERROR] Re-run Maven using the -X switch.",
    "For more information about this error, try `rustc --explain E0308`.",
    "Run with --stacktrace option to get the stack trace.", "See above for details.",
    "This is likely not a problem with pip itself.", "npm ERR! A complete log of this run",
    "Please refer to target/surefire-reports for the individual test results.",
    "Get more help at https://help.gradle.org", "For further details see the log.",
    "0 errors, 2 warnings", "no issues found in 3 source files", "error count: 0",
    "Fatal: false", "nothing to commit", "built without any warnings", "it never failed",
]


def _real_and_shaped_lines() -> list[str]:
    fixtures = Path(__file__).parent / "fixtures" / "logs"
    lines = [line for log in sorted(fixtures.glob("*.log"))
             for line in log.read_text(encoding="utf-8").splitlines()]
    lines += SHAPED_LINES
    return [variant for line in lines
            for variant in (line, line.upper(), line.lower(), line.title())]


def test_a_pattern_is_skipped_only_for_a_line_it_cannot_match():
    """_rx_for skips compiling a pattern for a line without any of its literals: on real
    log lines and every alternative's shape, in any case, no skipped line matches."""
    import re
    lines = _real_and_shaped_lines()
    ascii_caseless = {pattern for _, pattern, _, _ in ctxkit.LESSER_LINES}
    for pattern in ctxkit._RX_NEEDS:
        flags = re.ASCII | re.IGNORECASE if pattern in ascii_caseless else 0
        compiled = re.compile(pattern, flags)
        matched = [line for line in lines if compiled.search(line)]
        assert matched, pattern   # every pattern is exercised
        assert all(ctxkit._rx_for(pattern, line, flags) is not ctxkit._NoMatch
                   for line in matched), pattern


@pytest.mark.parametrize("caseless", [False, True])
def test_a_whole_word_is_found_as_the_bounded_pattern_finds_it(caseless):
    """holds_word finds a test name where ``(?<![\\w])NAME(?![\\w])`` does (any case
    when asked; the letters re folds beyond ASCII, ſ and the Kelvin sign, included)."""
    import re
    lines = _real_and_shaped_lines()[::3] + ["ſ test", "KELVIN \u212a", "x_test_total",
                                             "(Test_Total)!", "é test_totalé", "test_total"]
    words = ["test_total", "TestAdd", "parses_cents", "test_x[1]", "s", "k", "é", "_", "E"]
    flags = re.IGNORECASE if caseless else 0
    for word in words:
        bounded = re.compile(r"(?<![\w])" + re.escape(word) + r"(?![\w])", flags)
        for line in lines:
            assert ctxkit.holds_word(line, word, caseless) == bool(bounded.search(line)), \
                (line, word)


def test_negation_is_scanned_in_two_parts_as_the_whole_rule_finds_it():
    """negated_spans reads _NEGATION as its field part (only where some value is
    0/none/false) and the rest: the same matches, in order, as the whole rule."""
    import re
    value = re.compile(ctxkit._NEGATED_VALUE, re.ASCII)
    whole = re.compile(ctxkit._NEGATION, re.ASCII)
    lines = [line.lower() for line in _real_and_shaped_lines()]
    lines += ["nothing to do: 0", "no errors: none", "0 failed, errors: 0, nothing to report",
              "x=1 retries: 0, fatal = false; ok: nil. count:0", "a: b: 0", "KeyError: 0 (x= 0)"]
    assert sum(1 for line in lines if value.search(line) and whole.search(line)) > 5
    for line in lines:
        parts = ctxkit._negations(line, value if value.search(line) else None)
        assert [(m.span(), field) for m, field in parts] == \
            [(m.span(), bool(m.group("field"))) for m in whole.finditer(line)], line
    assert ctxkit.negated_spans("error count: 0") and ctxkit.negated_spans("0 errors")


# --- rarity and BM25 over OR-matches ------------------------------------------------------


def test_no_line_holds_every_word_the_best_partial_match_wins(cli, path):
    text = "\n".join(["sync ok"] * 40 + ["tenant acme is over its storage quota (103%)"] +
                     ["sync ok"] * 40) + "\n"
    handle = store(cli, text)
    assert top_line(search(cli, "disk quota exceeded for tenant acme", handle)) == 41


# --- hit windows that explain ----------------------------------------------------------


def test_an_error_code_hit_shows_the_block_that_ends_in_it(cli):
    make = shutil.which("make")
    if not make:
        pytest.skip("make is not installed")
    (cli.root / "Makefile").write_text(
        "all:\n\t@for i in $$(seq 60); do echo compiling unit $$i; done\n"
        "\t@echo\n\t@echo 'linking libledger.so'\n"
        "\t@echo 'ld: cannot find -lcrypto'\n\t@echo 'collect2: error: ld returned 1'\n"
        "\t@exit 1\n")
    # One pipe for both streams, so make's own "Error 1" line comes after the recipe's.
    handle = run_stored(cli, "sh", "-c", f"{make} -C {cli.root} 2>&1")
    lines = cli("expand", handle, "--json").json()["lines"]
    code = next(i["line"] for i in lines if "Error 1" in i["text"])
    cause = next(i["line"] for i in lines if "cannot find -lcrypto" in i["text"])
    hit = next(h for h in search(cli, "Error 1", handle)["hits"] if covers(h, code))
    assert covers(hit, cause)


def test_a_test_id_lands_on_its_failure_section(cli):
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_cart.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.mark.parametrize("n", range(30))
        def test_add(n):
            assert n >= 0

        def test_total():
            prices = {"pear": 1}
            assert sum(prices[k] for k in ["apple"]) == 2
        """))
    handle = run_stored(cli, PY, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests")
    lines = cli("expand", handle, "--json").json()["lines"]
    error = next(i["line"] for i in lines if i["text"].startswith("E ") and "KeyError" in
                 i["text"])
    result = search(cli, "tests/test_cart.py::test_total", handle)
    assert covers(result["hits"][0], error)


def test_a_verdict_line_gives_way_to_the_failure_section_it_names(cli):
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_cart.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.mark.parametrize("n", range(30))
        def test_add(n):
            assert n >= 0

        def add(qty):
            if qty <= 0:
                raise ValueError(f"quantity must be positive, got {qty}")

        def test_negative_quantity():
            add(-1)
        """))
    handle = run_stored(cli, PY, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests")
    lines = cli("expand", handle, "--json").json()["lines"]
    error = next(i["line"] for i in lines if i["text"].startswith("E ") and "ValueError" in
                 i["text"])
    verdict = next(i["line"] for i in lines if i["text"].startswith("FAILED "))
    top = search(cli, "error for a negative quantity", handle)["hits"][0]
    assert covers(top, error) and not covers(top, verdict)


# --- a unit's finding: a failure section, a stack trace ---------------------------------

PY_CRASH = """\
import logging
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
for i in range(30):
    logging.getLogger("svc").info("request %d served in %d ms", i, 3 + i % 7)

def parse_port(text):
    return int(text)

def load_settings(raw):
    return {"port": parse_port(raw["port"])}

load_settings({"port": "eighty"})
"""
NODE_CRASH = """\
for (let i = 0; i < 20; i++) console.log(`GET /api/items/${i} 200 ${3 + i % 5}ms`);
function readQuota(user) { return user.limits.quota; }
function handleUpload(req) { return readQuota(req.user); }
handleUpload({ user: {} });
"""
PYTEST_CRASH = """\
import json

def load_port(text):
    data = json.loads(text)
    return data["port"]

def test_settings():
    assert load_port("{port: 1}") == 1

def test_other():
    assert 1 + 1 == 3
"""


@pytest.mark.parametrize("runtime, source, query, finding", [
    ("python", PY_CRASH, "why did parse_port crash", "ValueError: invalid literal"),
    ("python", PY_CRASH, "load settings error", "ValueError: invalid literal"),
    ("node", NODE_CRASH, "why did handleUpload crash", "TypeError: Cannot read properties"),
    ("pytest", PYTEST_CRASH, "invalid json in load_port", "JSONDecodeError: Expecting"),
], ids=["python-frames", "python-code", "node-frames", "pytest-section"])
def test_a_unit_s_finding_takes_the_words_of_its_frames(cli, runtime, source, query, finding):
    """The frames of a stack trace (and the lines of a failure section) name where a
    problem went; the exception names what it was. Asked about the function the frames
    name, the hit lands on the exception: it earns half of what its unit's lines hold,
    and a frame keeps 0.75 of its score for a question about a problem."""
    if runtime == "node" and not shutil.which("node"):
        pytest.skip("node is not installed")
    script = cli.root / ("app.js" if runtime == "node" else "test_app.py")
    script.write_text(source)
    argv = {"python": [PY, str(script)], "node": ["node", str(script)],
            "pytest": [PY, "-m", "pytest", "-p", "no:cacheprovider", str(script)]}[runtime]
    handle = run_stored(cli, *argv)
    hit = search(cli, query, handle, limit=1)["hits"][0]
    line = hit["text"].split("\n")[hit["line"] - hit["line_start"]]
    assert finding in line, hit


# --- the strategy table -----------------------------------------------------------------


def _run(cli, query: str) -> ctxkit.SearchRun:
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    run = ctxkit.SearchRun(db, env.project, ctxkit.SearchQuery(query), None, 5)
    run.weigh_by_fts()
    return run


def _found(run: ctxkit.SearchRun) -> list[str]:
    return [item.text for item in run.lines.values() if item.exact and item.score > 0]


def test_the_strategy_table_is_ordered_and_named():
    names = [name for name, _, _ in ctxkit.SEARCH_STRATEGIES]
    assert names[0] == "scan" and len(names) == len(set(names))
    assert names.index("literal") < names.index("rare_terms") < names.index("trigram")


@pytest.mark.parametrize("name, stored, query", [
    ("literal", "worker 3 raised ConnectionRefusedError on port 5432", "port 5432"),
    ("identifiers", "loading parse_config_file from /etc/app", "parse config file"),
    ("rare_terms", "tenant acme is over its quota", "acme quota exceeded tenant overflow"),
    ("vocabulary", "worker 7: Segmentation fault (core dumped)", "segfault"),
    ("severity", "FATAL journal replay stopped", "why did it stop working"),
    ("prefixes", "authentication failed for user deploy", "authentica"),
    ("trigram", "parseConfigFile could not open settings.yaml", "ConfigFile"),
])
def test_each_strategy_finds_its_kind_of_match(cli, monkeypatch, name, stored, query):
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    store(cli, "\n".join(["filler line"] * 50 + [stored] + ["filler line"] * 50) + "\n")
    run = _run(cli, query)
    strategy = {name: fn for name, fn, _ in ctxkit.SEARCH_STRATEGIES}[name]
    assert strategy(run) is not None
    assert any(stored in text for text in _found(run)), name


def _busy_chunk_log(rare: str) -> str:
    """One second of a busy log: 150 lines with one timestamp, which the chunker keeps
    in one chunk; a query word ("upstream") on every tenth line, one rare line."""
    lines = [f"2026-12-01 10:00:00 INFO [api] request {i} to upstream ok" if i % 10 == 0
             else f"2026-12-01 10:00:00 DEBUG [api] GET /orders/{i} 200" for i in range(150)]
    lines[77] = f"2026-12-01 10:00:00 {rare}"
    return "\n".join(lines) + "\n"


def test_the_severity_strategy_reads_the_lines_its_words_are_on_not_the_whole_chunk(
        cli, monkeypatch):
    """A chunk of a busy log holds a hundred lines of one second: the severity strategy
    reads the lines holding the severity words the chunk was found by (and SEARCH_NEAR
    around them), not the other lines of the chunk that hold a query word; the chunk
    stays unread for a later strategy."""
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    store(cli, _busy_chunk_log("FATAL [api] upstream pool exhausted"))
    run = _run(cli, "why did upstream break")
    assert ctxkit._strategy_severity(run) is not None
    assert any("upstream pool exhausted" in text for text in _found(run))
    numbers = sorted(n for _, n in run.lines)
    assert numbers and all(abs(n - 78) <= ctxkit.SEARCH_NEAR for n in numbers), numbers
    assert not run.chunk_ids and run.windows_read == 1
    ids = [row[0] for row in run.db.query("SELECT id FROM output_chunks")]
    run.add_chunks(run.fetch_chunks(ids))
    assert any("request 70 to upstream ok" in item.text for item in run.lines.values())


def test_the_rough_score_takes_the_length_factor_of_the_exact_one(cli, monkeypatch):
    """A long line holds many words by chance and the exact score says so; the rough
    score, which chooses the lines scored exactly, says it too, so the longest lines
    are not the ones scored exactly first."""
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    record = "replica pool drained " + " ".join(f"field{i}=value{i}" for i in range(400))
    store(cli, "\n".join(["filler"] * 20 + [record, "replica pool drained at 10:04"]
                         + ["filler"] * 20) + "\n")
    run = _run(cli, "replica pool drained")
    ids = [row[0] for row in run.db.query("SELECT id FROM output_chunks")]
    found = run.found_lines(run.fetch_chunks(ids))[0]
    rough = {entry[2][:30]: run.scorer.rough(*entry) for entry in found}
    long_line, short_line = rough[record[:30]], rough["replica pool drained at 10:04"]
    assert long_line.score < short_line.score / 5
    for item in (long_line, short_line):
        run.scorer.refine(item)
    assert long_line.score < short_line.score


def test_windows_of_lines_merge_and_stay_inside_the_chunk():
    assert ctxkit.merged_windows([0, 3, 9], 2, 10) == [(0, 5), (7, 9)]
    assert ctxkit.merged_windows([], 2, 10) == []
    assert ctxkit.lines_holding("a\nfatal x\nb\nx FATAL".lower(), ["fatal"], 10) == [1, 3]


def test_bm25_is_asked_only_when_it_chooses(cli, monkeypatch):
    """BM25 counts every chunk of each term to weigh it: when every match comes back
    (or a term is common) the chunks are taken without it."""
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    store(cli, "".join(f"step {i} ok\n" for i in range(20000)) + "step 9 cart total wrong\n")
    run = _run(cli, "cart total")
    asked = []
    query = run.db.query
    monkeypatch.setattr(run.db, "query", lambda sql, *a: asked.append(sql) or query(sql, *a))
    assert run.fts(['"cart"', '"total"'], " AND ")
    assert run.fts(['"step"', '"cart"'], " OR ", pool=2)   # "step" is in every chunk
    assert not [sql for sql in asked if "ORDER BY rank" in sql]


def test_the_scan_strategy_reads_a_small_output_whole(cli):
    store(cli, "\n".join(["filler"] * 20 + ["OOMKilled after 3 restarts"]) + "\n")
    result = search(cli, "killed")
    assert [t["strategy"] for t in result["queries_tried"]] == ["scan"]
    assert "OOMKilled" in result["hits"][0]["text"]


def test_strategies_stop_once_the_limit_holds_good_hits(cli, monkeypatch):
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    lines = [f"job {i}: upload to bucket media-eu failed" if i % 20 == 0 else f"job {i} ok"
             for i in range(400)]
    store(cli, "\n".join(lines) + "\n")
    result = search(cli, "upload bucket media-eu failed", limit=3)
    tried = [t["strategy"] for t in result["queries_tried"]]
    assert tried == ["literal"], tried
    assert all(isinstance(t["ms"], float) for t in result["queries_tried"])
    assert len(result["hits"]) == 3



def _one_good_place_and_weaker_ones(cli) -> None:
    """One line holds every query word; a few hold all but "failed": the first strategy
    finds one good place, the later ones the weaker lines."""
    lines = [f"job {i}: upload to bucket media-eu failed" if i == 50 else
             f"job {i}: upload to bucket media-eu retried" if i % 40 == 0 else f"job {i} ok"
             for i in range(400)]
    store(cli, "\n".join(lines) + "\n")


def test_a_search_answers_the_same_however_slow_the_machine(cli, monkeypatch):
    """What a search reads, not how long it took, says when to stop: a clock that jumps
    (a loaded machine) changes nothing."""
    import time
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    _one_good_place_and_weaker_ones(cli)
    idle = search(cli, "upload bucket media-eu failed", limit=3)
    clock = iter(range(0, 10**9, 10))   # ten seconds pass at every look at the clock
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(clock)))
    loaded = search(cli, "upload bucket media-eu failed", limit=3)
    assert len(idle["queries_tried"]) > 1
    assert [t["strategy"] for t in loaded["queries_tried"]] == [
        t["strategy"] for t in idle["queries_tried"]]
    assert loaded["hits"] == idle["hits"] and len(idle["hits"]) == 3


def test_past_the_work_budget_one_good_place_is_enough(cli, monkeypatch):
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    monkeypatch.setattr(ctxkit, "SEARCH_WORK_BUDGET", 0)
    _one_good_place_and_weaker_ones(cli)
    result = search(cli, "upload bucket media-eu failed", limit=3)
    assert [t["strategy"] for t in result["queries_tried"]] == ["literal"]
    assert result["hits"][0]["line"] == 51


def test_the_severity_fallback_runs_only_while_no_place_is_good(cli, monkeypatch):
    """The severity strategy brings lines by their severity, not by the query's words:
    once the words found a good place it is not run (it could only add weaker places),
    and while none is good it still finds the line no query word is on."""
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    _one_good_place_and_weaker_ones(cli)
    found = search(cli, "upload bucket media-eu failed", limit=3)
    tried = [t["strategy"] for t in found["queries_tried"]]
    assert "literal" in tried and "severity" not in tried, tried
    assert found["hits"][0]["line"] == 51


def test_the_severity_fallback_finds_what_no_query_word_is_on(cli, monkeypatch):
    monkeypatch.setattr(ctxkit, "SEARCH_SCAN_BYTES", 0)
    store(cli, "\n".join(["worker ready"] * 300 + ["FATAL journal replay stopped"]
                         + ["worker ready"] * 300) + "\n")
    broken = search(cli, "what went wrong")
    assert "severity" in [t["strategy"] for t in broken["queries_tried"]]
    assert "journal replay stopped" in broken["hits"][0]["text"]


# --- the run summary names every failing test --------------------------------------------


def _pytest_project(cli, failing: int) -> None:
    (cli.root / "tests").mkdir(exist_ok=True)
    (cli.root / "tests" / "test_many.py").write_text(textwrap.dedent(f"""\
        import pytest

        @pytest.mark.parametrize("key", ["alpha", "beta", "gamma"])
        def test_lookup(key):
            assert {{}}[key]

        def test_a(): assert 1 == 2
        def test_b(): assert "x" == "y"
        def test_c(): assert [1] == [2]
        def test_d(): assert None
        def test_e(): raise ValueError("boom")

        @pytest.mark.parametrize("n", range({failing}))
        def test_more(n): assert n < 0

        @pytest.mark.parametrize("n", range(40))
        def test_ok(n): pass
        """))


def test_the_summary_names_every_failing_test(cli):
    _pytest_project(cli, 0)
    result = cli("run", "--json", "--", PY, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                 "tests")
    summary = result.json()
    assert summary["failed_tests"] == [
        "tests/test_many.py::test_lookup[alpha]", "tests/test_many.py::test_lookup[beta]",
        "tests/test_many.py::test_lookup[gamma]", "tests/test_many.py::test_a",
        "tests/test_many.py::test_b", "tests/test_many.py::test_c", "tests/test_many.py::test_d",
        "tests/test_many.py::test_e"]
    assert summary["failed_tests_omitted"] == 0
    assert len(result.out.encode()) <= 2048


@pytest.mark.slow                    # two runs of a 348-test pytest session
def test_the_summary_counts_the_failing_tests_it_leaves_out(cli):
    _pytest_project(cli, 300)
    result = cli("run", "--", PY, "-m", "pytest", "-p", "no:cacheprovider", "tests")
    assert result.code == 1
    line = next(x for x in result.out.splitlines() if x.startswith("failed tests (308): "))
    shown = line.split(": ", 1)[1].split(" (and ")[0].split(", ")
    left = int(line.rsplit("(and ", 1)[1].split(" ")[0])
    assert len(shown) + left == 308 and len(shown) >= 10
    summary = cli("run", "--json", "--", PY, "-m", "pytest", "-p", "no:cacheprovider",
                  "tests").json()
    assert len(summary["failed_tests"]) + summary["failed_tests_omitted"] == 308
    assert len(json.dumps(summary, ensure_ascii=False).encode()) <= 2000


# Parametrized ids as pytest writes them: spaces, brackets, ` - `, `]`, non-ASCII (escaped
# by default, as written with pytest's opt-out), and ids sharing their first word, so an id
# cut at its first space would make one invented id of several failures.
ODD_IDS_TEST = """\
import pytest

@pytest.mark.parametrize("key", ["user one", "user two", "user x[1] y", "naïve café"])
def test_lookup(key):
    assert {}[key]

@pytest.mark.parametrize("n", [1, 2, 3, 4],
                         ids=["case one", "case - two", "case]three", "日本 語"])
def test_pairs(n):
    assert n < 0, "negative wanted"

@pytest.mark.parametrize("n", range(6))
def test_ok(n):
    pass
"""


def _odd_ids(escaped: bool) -> list[str]:
    lookup = ["user one", "user two", "user x[1] y",
              "na\\xefve caf\\xe9" if escaped else "naïve café"]
    pairs = ["case one", "case - two", "case]three",
             "\\u65e5\\u672c \\u8a9e" if escaped else "日本 語"]
    return ([f"tests/test_odd.py::test_lookup[{k}]" for k in lookup]
            + [f"tests/test_odd.py::test_pairs[{k}]" for k in pairs])


@pytest.mark.parametrize("flags, escaped", [
    ((), True),                                             # short test summary only
    (("-v", "-o", "disable_test_id_escaping_and_forfeit_all_rights_to_community_support=true"),
     False),                                                # progress lines and summary
    pytest.param(("-v", "-n", "2"), True,                   # xdist's `[gw0] [ 7%] FAILED x`
                 marks=pytest.mark.slow),                   # six pytest processes
], ids=["summary", "verbose-unescaped", "xdist"])
def test_the_summary_names_failing_ids_as_pytest_writes_them(cli, flags, escaped):
    if "-n" in flags and not importlib.util.find_spec("xdist"):
        pytest.skip("pytest-xdist is not installed")
    (cli.root / "tests").mkdir(exist_ok=True)
    (cli.root / "tests" / "test_odd.py").write_text(ODD_IDS_TEST, encoding="utf-8")
    result = cli("run", "--json", "--", PY, "-m", "pytest", "-p", "no:cacheprovider",
                 *flags, "tests")
    summary = json.loads(result.out)
    assert summary["exit_code"] == 1
    assert sorted(summary["failed_tests"]) == sorted(_odd_ids(escaped))
    assert summary["failed_tests_omitted"] == 0
    text = cli("run", "--direct-max", "0", "--", PY, "-m", "pytest", "-p",
               "no:cacheprovider", *flags, "tests").out
    line = next(x for x in text.splitlines() if x.startswith("failed tests ("))
    assert line.startswith("failed tests (8): ")
    assert all(test_id in line for test_id in _odd_ids(escaped))


# --- a window costs no more than its output ---------------------------------------------


@pytest.mark.parametrize("context", ["100000000", str(10 ** 20)])
def test_a_huge_context_shows_the_whole_output_and_no_more(cli, context):
    """`--context N` is cut to the output's length: a one-line output with N = 10^8 walked
    200 M line numbers (34 s), and 10^20 never ended; an error code's block asked SQLite
    for line 10^20 (an integer it cannot hold)."""
    one = store(cli, "deploy failed: quota exceeded\n")
    block = store(cli, "".join(f"cc -c part{i}.c\n" for i in range(30))
                  + "part7.c:3: error: expected ';'\nmake: *** [all] Error 2\n")
    usual = search(cli, "make Error 2", block, limit=1)["hits"][0]   # the block it ends
    assert usual["line_end"] == 32 and 1 < usual["line_start"] < 31
    for handle, query, lines in ((one, "quota exceeded", (1, 1)),
                                 (block, "make Error 2", (usual["line_start"], 32))):
        result = cli.sub("search", query, "--handle", handle, "--limit", "1", "--context",
                         context, "--json", timeout=60)
        assert result.code == 0, result.err
        hit = json.loads(result.out)["hits"][0]
        assert (hit["line_start"], hit["line_end"]) == lines
        assert hit["text"].count("\n") == lines[1] - lines[0]


# --- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize("query", [
    '"', '"unclosed', "*", "fail*", "NEAR(a b)", "-x", "a:b", "(", ")", "col:value AND (x OR",
    "^start", "a - b + c", "'", "{}", "x" * 10240, "error " * 2000, "a\x00b",
    "🔥 deploy 🚀 failed", "ünïcödé İstanbul", "\\", "%_", "AND OR NOT", "'; DROP TABLE x;--"])
def test_any_query_text_is_safe(cli, path, query):
    store(cli, "alpha beta NEAR gamma a:b (x) fail* deploy failed 🚀\n" * 3)
    result = cli("search", "--json", "--", query)
    assert result.code == 0, result.err
    assert result.json()["status"] in ("ok", "no_hits")


def test_a_long_query_is_echoed_by_its_start(cli):
    """A pasted 10 KB query gets a short answer line: its first 200 characters and its
    length, not the whole text back (the installed command, as an agent runs it)."""
    store(cli, "alpha beta\n" * 3)
    for query, words in (("zeta " * 2048, "zeta"), ("beta " + "q" * 10240, "beta")):
        result = cli.sub("search", "--", query)
        assert result.code == 0, result.err
        first = result.out.splitlines()[0]
        assert len(first) < 400 and f"({len(query):,} characters)" in first, first
        assert words in first


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_one_line_saying_so(cli, query):
    """An empty query asks for nothing: one usage line (with --json one document), exit
    2, on the fast path of the installed command as in-process; not an empty hit list
    that says it tried nothing."""
    store(cli, "alpha beta\n" * 3)
    for run in (cli, cli.sub):
        result = run("search", "--", query)
        assert result.code == 2 and result.out == "", result
        assert result.err.count("\n") == 1 and "query is empty" in result.err, result.err
        result = run("--json", "search", "--", query)
        assert result.code == 2 and result.out.count("\n") == 1, result
        document = json.loads(result.out)
        assert document["status"] == "error" and "query is empty" in document["error"]


def test_an_unknown_handle_is_one_line_naming_ctxkit_outputs(cli):
    store(cli, "something\n")
    result = cli("search", "x", "--handle", "o999")
    assert result.code == 1 and result.out == ""
    assert result.err.count("\n") == 1 and "`ctxkit outputs`" in result.err
    result = cli("search", "x", "--handle", "o999", "--json")
    assert result.code == 1 and result.json()["status"] == "error"
    assert "`ctxkit outputs`" in result.json()["error"]


# --- the fast path ----------------------------------------------------------------------


def _without_times(out: bytes) -> object:
    try:
        data = json.loads(out)
    except ValueError:
        return out
    for tried in data.get("queries_tried", []):
        tried.pop("ms", None)
    return data


def test_search_is_answered_on_the_fast_path_as_the_full_cli_answers(cli):
    store(cli, service_log("2026-12-01 10:23:41 FATAL [ledger] replay aborted", lines=3000))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PYTHONPATH"] = str(ctxkit.Path(ctxkit.__file__).parent)
    # The full CLI in-process (main(argv): no fast path); the fast path in a process of
    # its own, as the console script starts, which must end inside `import ctxkit`.
    fast = ("import sys\nsys.argv = ['ctxkit', *sys.argv[1:]]\nimport ctxkit\n"
            "sys.stderr.write('FELL_THROUGH')\n")
    queries = ("ledger crash", "how many requests failed", "stack trace of the replay",
               "where is ENOENT", "which api was never started", "status 503", "GET/orders",
               "api-3 replay 0x7f", "killed by a signal", "'; DROP TABLE outputs;--")
    for args in ([*(["search", q, "--json"] for q in queries)] +
                 [["search", "replay", "--limit", "2"],
                  ["search", "nothing-here-zzz", "--json", "--context", "0"]]):
        full = cli(*args)
        fast_run = subprocess.run([PY, "-X", "importtime", "-c", fast, *args], cwd=cli.root,
                                  env=env, capture_output=True, timeout=120, check=False)
        assert b"FELL_THROUGH" not in fast_run.stderr, args
        assert fast_run.returncode == full.code == 0
        assert _without_times(fast_run.stdout) == _without_times(full.out.encode())
        modules = {line.split("|")[-1].strip() for line in
                   fast_run.stderr.decode().splitlines() if line.startswith("import time:")}
        # signal builds three IntEnums at import: the tables read its names from _signal
        assert not modules & {"argparse", "dataclasses", "tiktoken", "tree_sitter", "signal"}
    stats = cli("stats", "--outputs", "--json").json()
    assert stats["searches"] >= 2 * (len(queries) + 2)


def _fast_search_process(cli, *args: str) -> subprocess.CompletedProcess:
    """A search as the console script runs it: the fast path, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PYTHONPATH"] = str(ctxkit.Path(ctxkit.__file__).parent)
    fast = ("import sys\nsys.argv = ['ctxkit', *sys.argv[1:]]\nimport ctxkit\n"
            "sys.stderr.write('FELL_THROUGH')\n")
    run = subprocess.run([PY, "-c", fast, "search", *args], cwd=cli.root, env=env,
                         capture_output=True, timeout=120, check=False)
    assert run.returncode == 0 and b"FELL_THROUGH" not in run.stderr, run.stderr
    return run


def test_a_fast_search_leaves_its_count_in_the_wal_for_the_next_call(cli):
    # Closing the last connection would checkpoint the WAL and delete it (three fsyncs a
    # search): the fast path leaves it, as a stopped process does, and the next process
    # reads what was committed there; the full CLI, closing last, checkpoints it.
    store(cli, service_log("2026-12-01 10:23:41 FATAL [ledger] replay aborted", lines=300))
    before = cli("stats", "--outputs", "--json").json().get("searches", 0)
    wal = Path(f"{cli.db}-wal")
    assert not wal.exists()
    for query in ("ledger replay", "replay aborted"):
        _fast_search_process(cli, query, "--json")
        assert wal.stat().st_size > 0
        assert wal.stat().st_mode & 0o777 == Path(f"{cli.db}-shm").stat().st_mode & 0o777 \
            == 0o600
    assert cli("stats", "--outputs", "--json").json()["searches"] == before + 2
    assert not wal.exists()


def test_the_wal_a_fast_search_leaves_stays_under_its_page_limit(cli, monkeypatch):
    # Every connection's first read goes through the whole WAL: the fast path's commits
    # checkpoint it past FAST_WAL_PAGES, where SQLite's default is 1000 pages (4 MB).
    # In-process (hundreds of processes would take minutes), with one more connection
    # open throughout, so that closing each search's connection is never the last close
    # (which would checkpoint and delete the WAL as the process's end does not).
    store(cli, "2026-12-01 10:23:41 FATAL [ledger] replay aborted\n")
    monkeypatch.chdir(cli.root)
    holder = ctxkit.sqlite3.connect(cli.db)
    holder.execute("SELECT 1 FROM outputs").fetchall()
    page = holder.execute("PRAGMA page_size").fetchone()[0]
    biggest = 0
    try:
        for _ in range(2 * ctxkit.FAST_WAL_PAGES):
            ctxkit._fast_search({"json": True}, "ledger")
            ctxkit._LEFT_TO_EXIT.pop().close()
            biggest = max(biggest, Path(f"{cli.db}-wal").stat().st_size)
    finally:
        holder.close()
    assert biggest <= (ctxkit.FAST_WAL_PAGES + 8) * (page + 24) + 32
    assert cli("stats", "--outputs", "--json").json()["searches"] >= 2 * ctxkit.FAST_WAL_PAGES


def test_a_query_of_only_common_words_says_nothing_was_searched(cli):
    store(cli, "The above exception was the direct cause of the following exception\n")
    for run in (cli, cli.sub):          # the full CLI and the fast path answer alike
        data = json.loads(run("search", "the", "--json").out)
        assert data["status"] == "no_hits" and "nothing was searched" in data["note"]
        text = run("search", "a or the").out
        assert text.startswith("no hits for 'a or the': nothing was searched") and \
            "(tried: )" not in text
    # a query with a word ctxkit looks for has no note, hit or not
    assert "note" not in cli("search", "exception", "--json").json()
    assert "note" not in cli("search", "zzzqqq", "--json").json()


def test_a_word_inside_a_5_mb_line_is_found(cli):
    """One huge line (minified JSON, a dumped blob): the FTS index holds every word of
    it, and the line scorer must read the stretch where the word is, not the start."""
    words = [f"w{i * 7919 % 100003:05d}" for i in range(850000)]
    line = " ".join(words[:420000] + ["quokkasentinel"] + words[420000:])
    assert len(line) > 5_000_000 and "\n" not in line
    path = cli.root / "blob.txt"
    path.write_text(line)
    handle = cli.sub("store", str(path), "--json").json()["handle"]
    for argv in (["search", "quokkasentinel", "--json"],
                 ["search", "quokkasentinel", "--handle", handle, "--json"]):
        hits = cli.sub(*argv).json()["hits"]
        assert hits and hits[0]["line"] == 1 and "quokkasentinel" in hits[0]["text"], argv


def test_tried_counts_the_lines_each_strategy_matched_not_the_chunks_it_read(cli):
    lines = [f"worker {i} processed batch {i * 3} in 12ms" for i in range(3000)]
    lines[700] = "worker 700 lost heartbeat to coordinator"
    lines[2100] = "worker 2100 lost heartbeat to coordinator"
    store(cli, "\n".join(lines) + "\n")
    tried = cli.sub("search", "heartbeat", "--json").json()["queries_tried"]
    assert [(t["strategy"], t["hits"]) for t in tried] == [("scan", 2)]
    assert tried[0]["chunks"] > 2                                     # every chunk was read
    head = cli.sub("search", "heartbeat").out.splitlines()[0]
    assert head == "2 hits for 'heartbeat' (tried, lines matched by each: scan 2)", head


def _derived(cli) -> dict[str, bytes]:
    conn = sqlite3.connect(cli.db)
    try:
        return dict(conn.execute("SELECT key, value FROM derived WHERE python = ?",
                                 (ctxkit.derived_tag(),)).fetchall())
    finally:
        conn.close()


def test_a_search_keeps_what_it_compiled_and_the_next_one_needs_no_re(cli):
    # A search compiles about twenty patterns and builds the errno, signal and HTTP tables:
    # the database keeps them, so the next search process imports neither re, json nor http
    # and answers exactly as the first did.
    store(cli, service_log("2026-12-01 10:23:41 ERROR [ledger] write failed: ENOSPC", at=200,
                            lines=400))
    args = ("no space left on the disk", "--json")
    first = _fast_search_process(cli, *args)
    kept = _derived(cli)
    assert "tables" in kept and sum(key.startswith("rx ") for key in kept) >= 5
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PYTHONPATH"] = str(ctxkit.Path(ctxkit.__file__).parent)
    fast = "import sys\nsys.argv = ['ctxkit', *sys.argv[1:]]\nimport ctxkit\n"
    # -S: without site, whose .pth files (an editable install's finder) import re.
    second = subprocess.run([PY, "-S", "-X", "importtime", "-c", fast, "search", *args],
                            cwd=cli.root, env=env, capture_output=True, timeout=120, check=False)
    assert second.returncode == 0
    assert _without_times(second.stdout) == _without_times(first.stdout)
    assert json.loads(second.stdout)["hits"][0]["text"].count("ENOSPC") == 1
    modules = {line.split("|")[-1].strip() for line in second.stderr.decode().splitlines()
               if line.startswith("import time:")}
    assert not modules & {"re", "json", "http", "enum"}, modules


@pytest.mark.parametrize("damage", [b"\x00garbage", "program"])
def test_a_damaged_kept_pattern_is_compiled_again(cli, damage):
    store(cli, service_log("2026-12-01 10:23:41 FATAL [ledger] replay aborted", at=100,
                            lines=300))
    args = ("ledger crash", "--json")
    first = _fast_search_process(cli, *args)
    import marshal
    # Valid marshal, but no program _sre accepts (it checks a program before running it).
    bad = marshal.dumps((0, [1, 2, 3], 0, {}, ())) if damage == "program" else damage
    conn = sqlite3.connect(cli.db)
    with conn:
        conn.execute("UPDATE derived SET value = ?", (bad,))
    conn.close()
    again = _fast_search_process(cli, *args)
    assert _without_times(again.stdout) == _without_times(first.stdout)
    assert cli("search", *args).json()["hits"] == json.loads(first.stdout)["hits"]


def test_search_json_is_what_json_dumps_writes():
    # The fast path writes its JSON without importing json: every escape as json writes it.
    text = "".join(chr(i) for i in range(0x80)) + 'é "q" \\ \u2028 \U0001f600'
    values = [{"text": text, "n": [0, -7, 2.5, 1e-07, 10**20, True, False, None]},
              [], {}, "", [{"a": {"b": [text]}}]]
    for value in values:
        assert ctxkit.json_text(value) == json.dumps(value, ensure_ascii=False)


def test_the_kept_patterns_hold_no_text_of_a_search(cli):
    # Patterns made from a query's words (a substring looked for in the outputs' names)
    # are compiled for the one search: kept, they would keep the query's text and grow
    # with every new word.
    # Over 2 MB stored, so the search goes through the index (a smaller scope is read
    # whole) and its substring strategy runs.
    store(cli, service_log("2026-12-01 10:23:41 ERROR [ledger] frobnicator-zqxj/77 stalled",
                           at=100, lines=45000))
    for query in ("bnicator-zq", "nicator stalled"):
        _fast_search_process(cli, query, "--json")
        cli("search", query, "--json")
    kept = _derived(cli)
    assert kept and not [key for key in kept if "bnicator" in key or "nicator" in key]


def test_a_parametrized_test_id_with_dots_lands_on_its_own_section(cli):
    """Found by a new user: `test_q.py::test_q[24-255.255.255.0]` gave the section of
    `test_q[8-255.0.0.0]` first (the id was cut at its last dot, inside the brackets)."""
    (cli.root / "test_q.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.mark.parametrize("bits, want", [(8, "255.0.0.0"), (24, "255.255.255.0"),
                                                (25, "255.255.255.128")])
        def test_q(bits, want):
            assert want.count(".") == bits
        """))
    handle = run_stored(cli, PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_q.py")
    for wanted in ("test_q[24-255.255.255.0]", "test_q[25-255.255.255.128]"):
        result = search(cli, f"test_q.py::{wanted}", handle)
        assert wanted in result["hits"][0]["text"].splitlines()[0], result["hits"][0]["text"]
