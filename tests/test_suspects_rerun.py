"""suspects --rerun: the failing test run again under a tracer, through the real CLI.

The fixture tests/fixtures/suspects_registry prices orders by customer kind;
each rule registers itself in a dict by a decorator and `price` calls it
through the dict, so no call of the faulty rule (bulk_price) is written
anywhere and the graph cannot reach it from the test. Its tests run with a
real pytest through `ctxkit run`; `suspects --rerun` runs the stored command
again (a real subprocess) and ranks by which lines the failing test ran
and the passing tests of its file did not.
"""

from __future__ import annotations

import sys
import time

import pytest
from conftest import copy_fixture, git

import ctxkit

PY = sys.executable
FAILING = "tests/test_rules.py::test_bulk_small_order"


@pytest.fixture
def registry(cli, monkeypatch):
    copy_fixture("suspects_registry", cli.root)
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "pricing")
    monkeypatch.setenv("PYTHONPATH", str(cli.root / "src"))
    return cli


def run_failing(cli, *ids: str):
    run = cli("run", "--", PY, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
              *(ids or (FAILING,)))
    assert run.code == 1
    return run


def ranked(result) -> list[str]:
    return [s["id"] for s in result["suspects"]]


def test_rerun_ranks_a_function_only_the_failing_test_runs(registry):
    assert registry("index", "-q").code == 0
    run_failing(registry)
    before = registry("suspects", "--json").json()
    assert "src/pricing/rules.py:bulk_price" not in ranked(before)   # no graph path to it
    # what the test run itself left (bytecode, where Python writes it) is not the re-run's
    left = git(registry.root, "status", "--porcelain", "--untracked-files=all", "--", ".",
               ":!.ctxkit")
    result = registry("suspects", "--rerun", "--json").json()
    ids = ranked(result)
    assert "src/pricing/rules.py:bulk_price" in ids[:2]
    # the file's six passing tests ran (its -x did not stop the run), test_other.py did not
    assert result["rerun"]["failed"] == 1 and result["rerun"]["passed"] == 6
    assert any(note.startswith("--rerun: 1 failing and 6 passing tests traced in ")
               for note in result["notes"])
    bulk = result["suspects"][ids.index("src/pricing/rules.py:bulk_price")]
    first = bulk["signals"]["coverage"]
    # test_bulk_big_order runs bulk_price too, but not its line 33, `return amount + 1`:
    # the function's Ochiai is its most suspicious line's, 1/sqrt(1 x 1), not 1/sqrt(1 x 2)
    assert first["why"] == ("run by 1 of 1 failing test and 1 of 6 passing in the re-run; "
                            "its line 33 by 1 failing and 0 passing")
    assert first["value"] == pytest.approx(1.0)
    assert first["contribution"] == pytest.approx(first["value"] * first["weight"], abs=1e-3)
    # price runs in every test: it is where every run passes through, not where this differs
    price = result["suspects"][ids.index("src/pricing/rules.py:price")]
    assert price["signals"]["coverage"]["value"] == pytest.approx(1 / 7 ** 0.5, abs=1e-3)
    # rules the failing test never ran are not suspects of it
    assert not any(i.endswith(("plain_price", "member_price", "staff_price")) for i in ids)
    # the re-run leaves nothing in the project (its plugin lives in a temporary folder)
    assert git(registry.root, "status", "--porcelain", "--untracked-files=all",
               "--", ".", ":!.ctxkit") == left
    text = registry("suspects", "--rerun").out
    assert "bulk_price  src/pricing/rules.py:" in text
    assert "run by 1 of 1 failing test and 1 of 6 passing in the re-run; its line 33" in text


def test_rerun_without_a_graph_gives_the_functions_it_ran_as_locations(registry):
    run_failing(registry)
    result = registry("suspects", "--rerun", "--json").json()
    assert result["graph"] is False
    bulk = next(s for s in result["suspects"] if s["name"] == "bulk_price")
    assert bulk["kind"] == "location" and bulk["path"] == "src/pricing/rules.py"
    assert bulk["signals"]["coverage"]["value"] == pytest.approx(1.0)     # its line 33
    assert ranked(result).index(bulk["id"]) < ranked(result).index(
        "src/pricing/rules.py:price")


def test_rerun_says_when_the_failure_does_not_happen_again(registry):
    registry("index", "-q")
    run_failing(registry)
    rules = registry.root / "src" / "pricing" / "rules.py"
    rules.write_text(rules.read_text().replace("return amount + 1", "return amount"))
    result = registry("suspects", "--rerun", "--json").json()
    assert result["rerun"]["failed"] == 0 and result["rerun"]["passed"] == 7
    assert any("the failure did not happen again (7 tests passed)" in note
               for note in result["notes"])
    assert not any("coverage" in s["signals"] for s in result["suspects"])
    assert result["suspects"]           # ranked from the stored output as without --rerun


def test_rerun_of_a_command_that_is_not_pytest_is_not_run(registry, tmp_path):
    registry("index", "-q")
    marker = tmp_path / "ran"
    log = registry.root / "trace.txt"
    log.write_text(f'Traceback (most recent call last):\n  File "{registry.root}/src/pricing/'
                   f'rules.py", line 33, in bulk_price\n    return amount + 1\n'
                   f"TypeError: unsupported operand\n")
    registry("run", "--", "sh", "-c", f"echo x >> {marker}; cat {log}; exit 1")
    assert marker.read_text() == "x\n"
    result = registry("suspects", "--rerun", "--json").json()
    assert marker.read_text() == "x\n"     # never run again
    assert any("not a pytest run" in note for note in result["notes"])
    assert result["rerun"]["failed"] == 0
    assert ranked(result)[0] == "src/pricing/rules.py:bulk_price"    # from the frame


@pytest.mark.slow  # waits out the re-run's timeout, by nature
def test_rerun_stopped_at_its_timeout_ranks_by_the_tests_it_finished(registry):
    """Each test's trace is written as the test ends, so a re-run stopped at its
    timeout still ranks by the tests it finished before the stop."""
    registry("index", "-q")
    slow = registry.root / "tests" / "test_slow.py"
    slow.write_text("import time\n\nfrom pricing.rules import price\n\n\n"
                    "def test_bulk():\n    assert price('bulk', 5) == 5\n\n\n"
                    "def test_plain():\n    assert price('plain', 5) == 5\n\n\n"
                    "def test_slow():\n    time.sleep(600)\n")
    run = registry("run", "--", PY, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "tests/test_slow.py::test_bulk")
    assert run.code == 1
    started = time.monotonic()
    result = registry("suspects", "--rerun", "--rerun-timeout", "10", "--json").json()
    assert time.monotonic() - started < 60
    assert any(note.startswith("--rerun: the re-run took over 10 s and was stopped (raise "
                               "--rerun-timeout); ranked by the 1 failing and 1 passing "
                               "test it finished before the stop") for note in result["notes"])
    assert result["rerun"]["failed"] == 1 and result["rerun"]["passed"] == 1
    by_id = {s["id"]: s for s in result["suspects"]}
    assert by_id["src/pricing/rules.py:bulk_price"]["signals"]["coverage"]["value"] == 1.0
    assert "src/pricing/rules.py:bulk_price" in ranked(result)[:2]


def test_rerun_that_cannot_run_a_test_says_why(registry):
    registry("index", "-q")
    run_failing(registry)
    (registry.root / "tests" / "test_rules.py").unlink()   # the test file is gone
    result = registry("suspects", "--rerun", "--json").json()
    note = next(n for n in result["notes"] if n.startswith("--rerun: the re-run (exit "))
    assert "ran no test" in note
    assert result["rerun"]["failed"] == 0


@pytest.mark.parametrize("value", ["0", "-1", "inf", "x"])
def test_rerun_timeout_must_be_a_positive_number(registry, value):
    registry("index", "-q")
    run_failing(registry)
    result = registry("suspects", "--rerun", "--rerun-timeout", value)
    assert result.code == 2 and result.err.count("\n") == 1


def test_help_describes_rerun(cli):
    out = cli.sub("suspects", "--help").out
    assert "--rerun" in out and "--rerun-timeout" in out
    assert ctxkit.SUSPECT_WEIGHTS["coverage"] > 0


def test_what_pytest_runs_to_report_the_failure_is_not_coverage(registry):
    """pytest's assertion message calls the compared objects' __repr__ inside the test:
    that is pytest reporting the failure, not the failing test running the code."""
    (registry.root / "src" / "pricing" / "receipt.py").write_text(
        "from pricing.rules import price\n\n\n"
        "class Receipt:\n"
        "    def __init__(self, total):\n        self.total = total\n\n"
        "    def __eq__(self, other):\n        return self.total == other.total\n\n"
        "    def __repr__(self):\n        return f'Receipt({self.total})'\n\n\n"
        "def receipt(kind, amount):\n    return Receipt(price(kind, amount))\n")
    (registry.root / "tests" / "test_receipt.py").write_text(
        "from pricing.receipt import Receipt, receipt\n\n\n"
        "def test_plain():\n    assert receipt('plain', 5) == Receipt(5)\n\n\n"
        "def test_bulk():\n    assert receipt('bulk', 5) == Receipt(5)\n")
    registry("index", "-q")
    run_failing(registry, "tests/test_receipt.py::test_bulk")
    result = registry("suspects", "--rerun", "--limit", "20", "--json").json()
    assert result["rerun"]["failed"] == 1 and result["rerun"]["passed"] == 1
    by_id = {s["id"]: s for s in result["suspects"]}
    assert "coverage" in by_id["src/pricing/receipt.py:Receipt.__eq__"]["signals"]
    assert "coverage" not in by_id.get("src/pricing/receipt.py:Receipt.__repr__",
                                       {"signals": {}})["signals"]
    bulk = by_id["src/pricing/rules.py:bulk_price"]
    assert bulk["signals"]["coverage"]["value"] == 1.0     # only the failing test ran it
    for suspect in result["suspects"]:   # with a re-run, every contribution still adds up
        assert suspect["scale"] == pytest.approx(
            ctxkit.SUSPECT_COVERAGE_FLOOR + suspect["signals"].get("coverage", {}).get(
                "value", 0.0), abs=1e-3)
        total = sum(s["contribution"] for s in suspect["signals"].values())
        factor = ctxkit.SUSPECT_TEST_FACTOR if suspect["test_file"] else 1.0
        assert suspect["score"] == pytest.approx(total * factor, abs=1e-3)


def test_a_call_that_cannot_bind_or_a_lookup_that_misses_names_what_it_stopped_at(registry):
    """Python raises `f() got an unexpected keyword argument` at the call, before f's
    first line: no frame and no traced line is f's, yet f's signature is the fault. A
    module attribute that is not there under its name may be there renamed private."""
    (registry.root / "src" / "pricing" / "receipt.py").write_text(
        "from pricing.rules import price\n\n\n"
        "class Receipt:\n"
        "    def total(self, kind, amounts):\n"
        "        return sum(price(kind, a) for a in amounts)\n\n\n"
        "def _discount(amount):\n    return amount - 1\n")
    (registry.root / "tests" / "test_receipt.py").write_text(
        "from pricing import receipt\nfrom pricing.receipt import Receipt\n"
        "from pricing.rules import price\n\n\n"
        "def test_total():\n    assert Receipt().total('plain', [1, 2]) == 3\n\n\n"
        "def test_total_with_tax():\n    assert price('member', 10) == 9\n"
        "    assert Receipt().total('plain', [1], tax=2) == 3\n\n\n"
        "def test_discount():\n    assert price('member', 10) == 9\n"
        "    assert receipt.discount(5) == 4\n")
    registry("index", "-q")
    run_failing(registry, "tests/test_receipt.py::test_total_with_tax")
    for args in ((), ("--rerun",)):
        result = registry("suspects", *args, "--json").json()
        top = result["suspects"][0]
        assert top["id"] == "src/pricing/receipt.py:Receipt.total", args
        assert top["signals"]["frame"]["why"].startswith(
            "the failing call to it could not bind its arguments (Receipt.total() got an "
            "unexpected keyword argument)")
    assert top["scale"] == 1.0      # it never ran, so the re-run cannot scale it down
    run_failing(registry, "tests/test_receipt.py::test_discount")
    for args in ((), ("--rerun",)):
        result = registry("suspects", *args, "--json").json()
        top = result["suspects"][0]
        assert top["id"] == "src/pricing/receipt.py:_discount", args
        assert top["signals"]["frame"]["why"] == (
            "the failure looks up 'discount' on pricing.receipt, which holds '_discount'")


def test_the_failing_tests_earlier_checks_count_as_passing_runs(registry):
    """One test, three checks: the two before the failing one passed, so what they ran
    is where the test succeeds; only what the failing statement (and the assignment it
    reads) ran is specific to the failure, though no other test is there to say so."""
    (registry.root / "src" / "pricing" / "labels.py").write_text(
        "def clean(text):\n    return text.strip()\n\n\n"
        "def shout(text):\n    return clean(text).upper() + '!'\n\n\n"
        "def whisper(text):\n    return clean(text).lower() + '!'   # the fault: '...'\n")
    (registry.root / "tests" / "test_labels.py").write_text(
        "from pricing.labels import clean, shout, whisper\n\n\n"
        "def test_labels():\n"
        "    assert shout(' hi ') == 'HI!'\n"
        "    assert clean(' yo ') == 'yo'\n"
        "    label = whisper(' hi ')\n"
        "    assert label == 'hi...'\n")
    registry("index", "-q")
    run_failing(registry, "tests/test_labels.py::test_labels")
    result = registry("suspects", "--rerun", "--json").json()
    assert result["rerun"]["failed"] == 1 and result["rerun"]["passed"] == 0
    assert any(note.endswith("; 2 statements of the failing test before the failing one "
                             "counted as passing runs") for note in result["notes"])
    by_name = {s["name"]: s for s in result["suspects"]}
    assert by_name["whisper"]["signals"]["coverage"]["value"] == 1.0
    # shout ran in one check that passed; clean in both and in the failing statement
    assert by_name["shout"]["signals"]["coverage"]["value"] == pytest.approx(0.5 ** 0.5,
                                                                            abs=1e-3)
    assert by_name["clean"]["signals"]["coverage"]["value"] == pytest.approx(3 ** -0.5,
                                                                            abs=1e-3)
    assert ranked(result)[0] == "src/pricing/labels.py:whisper"


def test_what_feeds_a_passed_check_too_counts_as_a_passing_run(registry):
    """The object both checks use is built once: its constructor fed the check that
    passed as well as the failing one, so it is not specific to the failure."""
    (registry.root / "src" / "pricing" / "badge.py").write_text(
        "class Badge:\n"
        "    def __init__(self, text):\n        self.text = text.strip()\n\n"
        "    def shout(self):\n        return self.text.upper() + '!'\n\n"
        "    def whisper(self):\n        return self.text.lower() + '!'   # the fault\n")
    (registry.root / "tests" / "test_badge.py").write_text(
        "from pricing.badge import Badge\n\n\n"
        "def test_badge():\n"
        "    badge = Badge(' hi ')\n"
        "    assert badge.shout() == 'HI!'\n"
        "    assert badge.whisper() == 'hi...'\n")
    registry("index", "-q")
    run_failing(registry, "tests/test_badge.py::test_badge")
    result = registry("suspects", "--rerun", "--json").json()
    assert any(note.endswith("; 2 statements of the failing test before the failing one "
                             "counted as passing runs") for note in result["notes"])
    by_name = {s["name"]: s for s in result["suspects"]}
    assert by_name["Badge.whisper"]["signals"]["coverage"]["value"] == 1.0
    assert by_name["Badge.__init__"]["signals"]["coverage"]["value"] == pytest.approx(
        0.5 ** 0.5, abs=1e-3)
    assert ranked(result)[0] == "src/pricing/badge.py:Badge.whisper"
