"""suspects: from a failing run to the code to fix, through the real CLI.

The fixture tests/fixtures/suspects_py is a small invoicing package with a
real bug (apply_discount returns the discount, not the discounted amount) and
a currency check that raises; its tests are run with a real pytest through
`ctxkit run`, and `ctxkit suspects` ranks from that stored output.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import copy_fixture, git

import ctxkit

PY = sys.executable


@pytest.fixture
def project(cli, monkeypatch):
    """The fixture project committed in the test root, indexed, PYTHONPATH set."""
    return _committed_and_indexed(cli, monkeypatch, "suspects_py")


def _committed_and_indexed(cli, monkeypatch, fixture: str):
    copy_fixture(fixture, cli.root)
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", fixture)
    monkeypatch.setenv("PYTHONPATH", str(cli.root / "src"))
    assert cli("index", "-q").code == 0
    return cli


def run_tests(cli, *ids: str):
    """The fixture's tests through `ctxkit run` (PYTHONPATH set by the caller)."""
    args = ids or ("tests",)
    return cli("run", "--", PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args)


def ranked(result) -> list[str]:
    return [s["id"] for s in result["suspects"]]


def test_assertion_in_the_test_ranks_the_callee_that_computes_it(project):
    run = run_tests(project, "tests/test_invoice.py::test_line_total_with_discount")
    assert run.code == 1
    result = project("suspects", "--json").json()
    ids = ranked(result)
    assert "src/invoice/discount.py:apply_discount" in ids[:4]
    assert ids[0] == "src/invoice/lines.py:Line.total"   # called on the failing line
    assert result["tests"] == ["tests/test_invoice.py:test_line_total_with_discount"]
    top = result["suspects"][ids.index("src/invoice/discount.py:apply_discount")]
    assert top["signals"]["test"]["why"].startswith(
        "2 calls from the failing test, via Line.total (and by ")
    # the other tests reach apply_discount too (through Line.total): its test value is
    # scaled down by them, while Line.total, which the failing line calls, keeps its own
    others = int(top["signals"]["test"]["why"].rsplit("(and by ", 1)[1].split()[0])
    assert others >= 1
    assert top["signals"]["test"]["value"] == pytest.approx(0.5 * (1 + others) ** -0.5,
                                                            abs=1e-3)
    assert result["suspects"][0]["signals"]["test"]["value"] == 1.0
    for suspect in result["suspects"]:   # every contribution is shown and adds up
        total = sum(s["contribution"] for s in suspect["signals"].values())
        factor = ctxkit.SUSPECT_TEST_FACTOR if suspect["test_file"] else 1.0
        assert suspect["score"] == pytest.approx(total * factor, abs=1e-3)
    assert not any(s["test_file"] for s in result["suspects"][:3])


def test_traceback_ranks_the_innermost_project_frame_first(project):
    run_tests(project, "tests/test_invoice.py::test_unknown_currency_is_reported")
    result = project("suspects", "--json").json()
    first = result["suspects"][0]
    assert first["id"] == "src/invoice/money.py:parse_amount"
    assert first["signals"]["frame"]["why"].startswith("innermost project frame")
    assert "name" not in first["signals"] or first["signals"]["name"]["value"] > 0
    frames = {(f["path"], f["line"]) for f in result["frames"]}
    assert ("src/invoice/money.py", 8) in frames
    text = project("suspects").out
    lines = text.splitlines()
    assert lines[0].startswith("suspects for o1 (exit 1): ")
    numbered = [i for i, line in enumerate(lines) if line.lstrip()[:2].rstrip(".").isdigit()]
    assert numbered and all(lines[i + 1].startswith(" ") for i in numbered)  # one evidence line
    assert "parse_amount" in lines[numbered[0]]


def test_a_change_in_the_working_tree_near_the_failure_is_evidence(project):
    path = project.root / "src/invoice/lines.py"
    path.write_text(path.read_text().replace("return self.price * self.quantity",
                                             "return self.price * (self.quantity - 1)"))
    run_tests(project, "tests/test_invoice.py::test_render_lists_every_line",
              "tests/test_invoice.py::test_line_total_with_discount")
    result = project("suspects", "--json").json()
    by_id = {s["id"]: s for s in result["suspects"]}
    changed = by_id["src/invoice/lines.py:Line.subtotal"]
    assert "working tree" in changed["signals"]["change"]["why"]
    assert changed["rank"] <= 3


def test_recent_commits_count_with_less_weight_than_the_working_tree(project):
    path = project.root / "src/invoice/money.py"
    path.write_text(path.read_text().replace('("EUR", "USD")', '("EUR",)'))
    git(project.root, "commit", "-qam", "only euros")
    run_tests(project)
    result = project("suspects", "--json").json()
    parse = {s["id"]: s for s in result["suspects"]}["src/invoice/money.py:parse_amount"]
    assert "recent commits" in parse["signals"]["change"]["why"]
    assert parse["signals"]["change"]["value"] <= ctxkit.SUSPECT_CHANGE_TIERS["commits"]


def test_lesson_risk_is_a_signal(project):
    for note in ("forgot the 1 - factor", "rounded before discounting"):
        assert project("fail", "apply_discount", note, "--file",
                       "src/invoice/discount.py").code == 0
    run_tests(project, "tests/test_invoice.py::test_line_total_with_discount")
    result = project("suspects", "--json").json()
    found = {s["id"]: s for s in result["suspects"]}["src/invoice/discount.py:apply_discount"]
    assert found["signals"]["lesson"]["value"] > 0
    assert "lesson risk" in found["evidence"]


def test_budget_renders_the_first_suspect_whole_within_the_exact_budget(project):
    run_tests(project, "tests/test_invoice.py::test_unknown_currency_is_reported")
    for budget in (4000, 300, 120):
        result = project("suspects", "--budget", str(budget), "--json").json()
        assert result["tokens"] <= budget
        assert result["tokens"] == ctxkit.count_tokens(result["context"])
        levels = [item["level"] for item in result["items"]]
        assert levels == sorted(levels, reverse=True)
    big = project("suspects", "--budget", "4000", "--json").json()
    assert big["items"][0] == {"id": "src/invoice/money.py:parse_amount", "level": 5,
                               "tokens": big["items"][0]["tokens"]}
    assert 'raise ValueError(f"unknown currency' in big["context"]
    assert [i["level"] for i in big["items"][:3]] == [5, 4, 3]
    text = project("suspects", "--budget", "4000").out
    assert "## Suspects for o1 (debug context)" in text


def test_a_succeeded_output_has_nothing_to_rank(project):
    run = run_tests(project, "tests/test_invoice.py::test_total_without_lines")
    assert run.code == 0
    result = project("suspects", "o1")
    assert result.code == 0
    assert "o1 succeeded (exit 0)" in result.out
    data = project("suspects", "o1", "--json").json()
    assert data["suspects"] == [] and "succeeded" in data["missing"]


def test_an_output_without_frames_or_test_ids_says_what_is_missing(project):
    project("run", "--", "sh", "-c", "echo the deploy broke; exit 3")
    result = project("suspects")
    assert result.code == 0
    assert "no stack frames and no failing test ids" in result.out
    assert project("suspects", "--json").json()["suspects"] == []


def test_no_failing_output_yet(project):
    result = project("suspects")
    assert result.code == 0
    assert "no stored output has failed yet" in result.out


def test_unknown_handle_is_one_line_error(project):
    run_tests(project)
    result = project("suspects", "o99")
    assert result.code == 1
    assert result.err.count("\n") == 1 and "o99" in result.err


def test_without_a_graph_suspects_come_from_frames_and_git(cli, monkeypatch):
    copy_fixture("suspects_py", cli.root)
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "invoice")
    monkeypatch.setenv("PYTHONPATH", str(cli.root / "src"))
    run_tests(cli, "tests/test_invoice.py::test_unknown_currency_is_reported")
    result = cli("suspects", "--json").json()
    assert result["graph"] is False
    assert any("no graph" in note for note in result["notes"])
    assert result["suspects"][0]["kind"] == "location"
    assert result["suspects"][0]["path"] == "src/invoice/money.py"
    assert result["suspects"][0]["line"] == 8
    text = cli("suspects").out
    assert "note: no graph for this project" in text
    budget = cli("suspects", "--budget", "500", "--json").json()
    assert "raise ValueError" in budget["context"] and budget["tokens"] <= 500


def test_library_frames_are_listed_and_never_read(project, tmp_path):
    outside = tmp_path / "elsewhere" / "lib.py"
    outside.parent.mkdir()
    outside.write_text("def helper():\n    raise KeyError('x')\n")
    log = project.root / "trace.txt"
    log.write_text(textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{project.root}/src/invoice/lines.py", line 16, in total
            return round_cents(apply_discount(self.subtotal(), self.discount))
          File "{outside}", line 2, in helper
            raise KeyError('x')
        KeyError: 'x'
        """))
    project("run", "--", "sh", "-c", f"cat {log}; exit 1")
    outside.unlink()  # a frame outside the root must not be opened: it is gone now
    result = project("suspects", "--budget", "2000", "--json").json()
    library = [f for f in result["frames"] if f["library"]]
    assert [f["path"] for f in library] == [str(outside)]
    assert result["suspects"][0]["id"] == "src/invoice/lines.py:Line.total"
    assert all(str(outside) not in s["path"] for s in result["suspects"])
    assert "library frames (not read): " in project("suspects").out


def test_a_frame_printed_through_a_link_to_the_root_is_a_project_frame(project, tmp_path):
    link = tmp_path / "linked-checkout"
    link.symlink_to(project.root, target_is_directory=True)
    log = project.root / "trace.txt"
    log.write_text(textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{link}/src/invoice/money.py", line 8, in parse_amount
            raise ValueError(f"unknown currency {{currency!r}}")
        ValueError: unknown currency 'XYZ'
        """))
    project("run", "--", "sh", "-c", f"cat {log}; exit 1")
    result = project("suspects", "--json").json()
    assert [(f["path"], f["library"]) for f in result["frames"]] == [
        ("src/invoice/money.py", False)]
    assert result["suspects"][0]["id"] == "src/invoice/money.py:parse_amount"


def test_node_frames_link_to_javascript_symbols(cli):
    (cli.root / "lib").mkdir()
    (cli.root / "lib" / "cart.js").write_text(textwrap.dedent("""\
        function price(item) {
          return item.cost.amount;
        }

        function total(items) {
          return items.map(price).reduce((a, b) => a + b, 0);
        }

        module.exports = { total };
        """))
    assert cli("index", "-q").code == 0
    trace = textwrap.dedent(f"""\
        TypeError: Cannot read properties of undefined (reading 'amount')
            at price ({cli.root}/lib/cart.js:2:20)
            at Array.map (<anonymous>)
            at total ({cli.root}/lib/cart.js:6:16)
            at Object.<anonymous> ({cli.root}/node_modules/runner/index.js:10:3)
        """)
    (cli.root / "out.txt").write_text(trace)
    cli("run", "--", "sh", "-c", "cat out.txt; exit 1")
    result = cli("suspects", "--json").json()
    assert ranked(result)[:2] == ["lib/cart.js:price", "lib/cart.js:total"]
    assert any(f["library"] and "node_modules" in f["path"] for f in result["frames"])


def test_go_panic_frames_are_innermost_first(cli):
    (cli.root / "calc.go").write_text(textwrap.dedent("""\
        package calc

        func Div(a, b int) int {
        \treturn a / b
        }

        func Mean(xs []int) int {
        \treturn Div(sum(xs), len(xs))
        }

        func sum(xs []int) int {
        \tt := 0
        \tfor _, x := range xs {
        \t\tt += x
        \t}
        \treturn t
        }
        """))
    assert cli("index", "-q").code == 0
    panic = textwrap.dedent(f"""\
        --- FAIL: TestMean (0.00s)
        panic: runtime error: integer divide by zero [recovered]
        goroutine 7 [running]:
        example.com/calc.Div(...)
        \t{cli.root}/calc.go:4
        example.com/calc.Mean({{0x0, 0x0, 0x0}})
        \t{cli.root}/calc.go:8 +0x1d
        testing.tRunner(0xc000007ba0, 0x5f0a38)
        \t/usr/local/go/src/testing/testing.go:1595 +0xff
        """)
    (cli.root / "panic.txt").write_text(panic)
    cli("run", "--", "sh", "-c", "cat panic.txt; exit 1")
    result = cli("suspects", "--json").json()
    assert ranked(result)[:2] == ["calc.go:Div", "calc.go:Mean"]
    assert "TestMean" in result["tests"]


def test_frames_printed_on_another_machine_are_read_as_the_roots_files(cli):
    """A CI runner's panic names its own checkout (/home/runner/work/app/app/...):
    those frames are the root's files; the runner's toolchain stays a library, and
    a bare file name under a folder not named as the root is never taken."""
    (cli.root / "calc").mkdir()
    (cli.root / "calc" / "calc.go").write_text(textwrap.dedent("""\
        package calc

        func Div(a, b int) int {
        \treturn a / b
        }

        func Mean(xs []int) int {
        \treturn Div(len(xs), 0)
        }
        """))
    (cli.root / "flag.go").write_text("package app\n\nfunc Set() {}\n")
    assert cli("index", "-q").code == 0
    checkout = f"/home/runner/work/{cli.root.name}/{cli.root.name}"
    panic = textwrap.dedent(f"""\
        --- FAIL: TestMean (0.00s)
        panic: runtime error: integer divide by zero [recovered]
        goroutine 7 [running]:
        example.com/app/calc.Div(...)
        \t{checkout}/calc/calc.go:4
        example.com/app/calc.Mean({{0x0, 0x0, 0x0}})
        \t{checkout}/calc/calc.go:8 +0x1d
        flag.(*FlagSet).Set(0xc0000)
        \t/opt/hostedtoolcache/go/1.22.1/x64/src/flag/flag.go:560 +0x1d
        """)
    (cli.root / "panic.txt").write_text(panic)
    cli("run", "--", "sh", "-c", "cat panic.txt; exit 1")
    result = cli("suspects", "--json").json()
    assert ranked(result)[:2] == ["calc/calc.go:Div", "calc/calc.go:Mean"]
    assert any(f"frames under {checkout}/ were printed on another machine" in note
               for note in result["notes"])
    frames = {(f["path"], f["library"]) for f in result["frames"]}
    assert ("calc/calc.go", False) in frames
    assert ("/opt/hostedtoolcache/go/1.22.1/x64/src/flag/flag.go", True) in frames
    assert "flag.go:Set" not in ranked(result)


def test_help_lists_the_options(cli):
    result = cli.sub("suspects", "--help")
    assert result.code == 0
    for option in ("--limit", "--budget", "--json", "HANDLE"):
        assert option in result.out


@pytest.mark.parametrize("args", [("--limit", "0"), ("--budget", "0"), ("--budget", "x")])
def test_bad_option_values_are_usage_errors(project, args):
    result = project("suspects", *args)
    assert result.code == 2 and result.err.count("\n") == 1


def test_fixture_pytest_run_is_real(project):
    """The fixture's failures come from running it, not from a stored text."""
    run = run_tests(project)
    assert run.code == 1
    assert os.path.exists(Path(project.root) / ".ctxkit" / "ctxkit.db")
    listed = project("outputs", "--json").json()["outputs"]
    assert listed[0]["exit_code"] == 1


def test_the_text_header_says_how_many_failing_tests_it_left_out(cli):
    # no graph: the failing ids come from pytest's own lines, six of them
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_many.py").write_text("".join(
        f"def test_case_{i}():\n    assert {i} == -1\n\n" for i in range(6)))
    run = cli("run", "--", PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert run.code == 1
    text = cli("suspects").out
    header = next(line for line in text.splitlines() if line.startswith("failing test: "))
    assert header.count("test_case_") == 3 and header.endswith(" (+3 more)")
    result = cli("suspects", "--json").json()
    assert len(result["tests"]) + result["tests_omitted"] == 6


@pytest.fixture
def shop(cli, monkeypatch):
    """A shop package whose tests fail the way tests usually do: on an assert in the
    test, with no frame inside the code under test."""
    return _committed_and_indexed(cli, monkeypatch, "suspects_shop")


def shop_suspects(shop, test: str) -> dict:
    run = run_tests(shop, f"tests/test_shop.py::{test}")
    assert run.code == 1
    return shop("suspects", "--json").json()


def test_a_method_call_goes_to_the_class_the_fixture_builds(shop):
    # cart.total(): two classes define total; the fixture `cart` returns a Cart
    result = shop_suspects(shop, "test_total_counts_quantities")
    ids = ranked(result)
    assert ids[0] == "src/shop/cart.py:Cart.total"
    assert "src/shop/cart.py:Order.total" not in ids[:3]
    why = result["suspects"][0]["signals"]["test"]["why"]
    # (the graph itself reads the fixture's value since it knows pytest's fixtures;
    # the test walk's own inference, "inferred", is then not needed for this call)
    assert why.startswith("called on the line the test failed at")
    # item.cost() inside Cart.total: the receiver is named after its class
    assert "src/shop/cart.py:Item.cost" in ids[:3]


def test_the_call_whose_result_the_failing_line_checks_leads(shop):
    # price = coupon(50); assert price == 45: coupon holds a Coupon, so Coupon.__call__
    result = shop_suspects(shop, "test_a_coupon_takes_its_percent_off")
    first = result["suspects"][0]
    assert first["id"] == "src/shop/pricing.py:Coupon.__call__"
    assert first["signals"]["test"]["why"].startswith("its result is what the failing line")
    assert "src/shop/pricing.py:Voucher.__call__" not in ranked(result)


def test_the_function_that_holds_the_message_text_leads(shop):
    result = shop_suspects(shop, "test_checkout_of_an_empty_cart_is_refused")
    first = result["suspects"][0]
    assert first["id"] == "src/shop/cart.py:Cart._validate"
    assert "the cart is empty" in first["signals"]["message"]["why"]
    checkout = result["suspects"][ranked(result).index("src/shop/cart.py:Cart.checkout")]
    assert checkout["signals"]["test"]["why"].startswith("called inside the failing with")


def test_a_callback_the_test_defines_is_part_of_the_test(shop):
    result = shop_suspects(shop, "test_each_name_is_priced_by_the_callback")
    ids = ranked(result)
    assert "src/shop/pricing.py:lookup_price" in ids[:2]
    found = result["suspects"][ids.index("src/shop/pricing.py:lookup_price")]
    assert "code defined in it" in found["signals"]["test"]["why"]
    # the callback itself is the test's own code: the reproduction, not a suspect
    assert not any(".pricer" in i for i in ids)


def test_the_module_a_test_file_is_named_after_leads_among_equals(cli, monkeypatch):
    """test_receipt.py tests receipt.py: of two functions the failing line calls alike,
    the one in the module the test file is named after comes first."""
    src = cli.root / "src" / "shop"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "format.py").write_text("def money(cents):\n    return f'{cents / 100:.2f}'\n")
    (src / "receipt.py").write_text(
        "def total_text(cents):\n    return f'{cents // 100}.{cents % 100}'\n")
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_receipt.py").write_text(
        "from shop.format import money\nfrom shop.receipt import total_text\n\n\n"
        "def test_total_text():\n    assert total_text(505) == money(505)\n")
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "shop")
    monkeypatch.setenv("PYTHONPATH", str(cli.root / "src"))
    assert cli("index", "-q").code == 0
    assert run_tests(cli, "tests/test_receipt.py::test_total_text").code == 1
    result = cli("suspects", "--json").json()
    assert ranked(result)[:2] == ["src/shop/receipt.py:total_text", "src/shop/format.py:money"]
    subject = result["suspects"][0]["signals"]["subject"]
    assert subject["why"] == ("in src/shop/receipt.py, the module the failing test's file "
                              "is named after")
    assert "subject" not in result["suspects"][1]["signals"]


def test_a_failure_whose_command_passed_since_says_it_may_be_fixed(project):
    failing = "tests/test_invoice.py::test_line_total_with_discount"
    assert run_tests(project, failing).code == 1
    assert run_tests(project, "tests/test_invoice.py").code == 1       # another command
    discount = project.root / "src" / "invoice" / "discount.py"
    discount.write_text(discount.read_text().replace(
        "return amount * discount_factor", "return amount - amount * discount_factor"))
    assert run_tests(project, failing).code == 0                       # the same one, fixed
    result = project("suspects", "o1", "--json").json()
    assert result["notes"][0].startswith("the same command passed since, as o3 (")
    assert "this failure may be fixed already" in project("suspects", "o1").out
    # the other command did not run again: its failure holds, and nothing says otherwise
    result = project("suspects", "--json").json()
    assert result["output"]["handle"] == "o2"
    assert not any("passed since" in note for note in result["notes"])


def test_a_binding_error_naming_several_places_shares_the_frame(cli, tmp_path):
    """Before Python 3.10 the message names a bare `__init__`: every class's __init__
    is that name, so they share the innermost frame's value."""
    (cli.root / "shop.py").write_text(
        "class Cart:\n    def __init__(self, items):\n        self.items = items\n\n\n"
        "class Till:\n    def __init__(self, cash):\n        self.cash = cash\n\n\n"
        "def open_cart():\n    return Cart([], tax=2)\n")
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "shop")
    assert cli("index", "-q").code == 0
    log = tmp_path / "trace.txt"
    log.write_text(textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "{cli.root}/shop.py", line 12, in open_cart
            return Cart([], tax=2)
        TypeError: __init__() got an unexpected keyword argument 'tax'
        """))
    cli("run", "--", "sh", "-c", f"cat {log}; exit 1")
    result = cli("suspects", "--json").json()
    by_id = {s["id"]: s for s in result["suspects"]}
    assert ranked(result)[0] == "shop.py:open_cart"            # the frame itself
    frame = by_id["shop.py:Till.__init__"]["signals"]["frame"]
    assert frame["value"] == 0.5 and frame["why"].startswith(
        "the failing call to it could not bind its arguments (__init__() got an "
        "unexpected keyword argument)")
    # Cart.__init__ is also called on the frame's line, which counts more (0.3 x 2)
    assert by_id["shop.py:Cart.__init__"]["signals"]["frame"]["value"] == 0.6


def test_a_newer_failure_without_an_exit_status_is_pointed_to(project):
    log = ("F\n=== FAILURES ===\n    def test_total():\n>       assert total() == 3\n"
           "E       assert 2 == 3\n\ntests/test_invoice.py:9: AssertionError\n"
           "FAILED tests/test_invoice.py::test_total - assert 2 == 3\n1 failed in 0.1s\n")
    stored = project("store", "-", "--label", "pytest", "--json", stdin=log).json()["handle"]
    # no output with a non-zero exit: the one that failed without a status is named
    result = project("suspects")
    assert result.code == 0 and "no stored output has failed yet" in result.out
    assert f"`ctxkit suspects {stored}` ranks it" in result.out
    failing = run_tests(project, "tests/test_invoice.py::test_line_total_with_discount")
    assert failing.code == 1
    assert not project("suspects", "--json").json()["notes"]          # the newest failure
    later = project("store", "-", "--label", "pytest", "--json", stdin=log).json()["handle"]
    result = project("suspects", "--json").json()
    assert result["output"]["handle"] != later
    assert result["notes"][0].startswith(f"{later}, newer, has error lines but no exit status")
    assert not project("suspects", later, "--json").json()["notes"]   # asked for by name
    project("store", "-", "--label", "pytest", stdin="1 passed in 0.1s\n")   # run again: passes
    assert not project("suspects", "--json").json()["notes"]   # that failure no longer holds


def test_the_function_a_failing_test_is_named_after_leads_among_equals(cli, monkeypatch):
    """test_label_upper_case_is_loud tests upper_case: of two helpers the test reaches
    alike (one call down, in the module its file is named after), the one the test's
    name names comes first."""
    src = cli.root / "src" / "shop"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "labels.py").write_text(
        "def strip_all(text):\n    return text.strip()\n\n\n"
        "def upper_case(text):\n    return text.lower()\n\n\n"
        "def render(text):\n    return upper_case(strip_all(text)) + '!'\n")
    (cli.root / "tests").mkdir()
    (cli.root / "tests" / "test_labels.py").write_text(
        "from shop.labels import render\n\n\n"
        "def test_label_upper_case_is_loud():\n    assert render(' hi ') == 'HI!'\n")
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "shop")
    monkeypatch.setenv("PYTHONPATH", str(cli.root / "src"))
    assert cli("index", "-q").code == 0
    assert run_tests(cli, "tests/test_labels.py::test_label_upper_case_is_loud").code == 1
    result = cli("suspects", "--json").json()
    assert ranked(result) == ["src/shop/labels.py:render", "src/shop/labels.py:upper_case",
                              "src/shop/labels.py:strip_all"]
    title = result["suspects"][1]["signals"]["title"]
    assert title["value"] == 1.0
    assert title["why"] == ("the failing test test_label_upper_case_is_loud is named "
                            "after upper, case")
    assert "title" not in result["suspects"][0]["signals"]


def test_pytest_advice_in_an_explanation_names_no_suspect(cli):
    """Found by a new user: pytest's "Use -v to get more diff" (its advice about its
    own -v option) ranked a function named ``get`` by the name signal."""
    (cli.root / "mod.py").write_text("def get(d, k):\n    return d[k]\n\n\n"
                                     "def build():\n    return {'a': 1, 'b': 2}\n")
    (cli.root / "test_mod.py").write_text("from mod import build\n\n\n"
                                          "def test_build():\n"
                                          "    assert build() == {'a': 1, 'b': 3}\n")
    git(cli.root, "add", "-A")
    git(cli.root, "commit", "-qm", "mod")
    assert cli("index", "-q").code == 0
    run = cli("run", "--", PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mod.py")
    assert run.code == 1
    result = cli("suspects", "--json").json()
    ids = ranked(result)
    assert ids[0] == "mod.py:build"
    assert "mod.py:get" not in ids
