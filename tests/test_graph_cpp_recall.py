"""Graph, C++: direct callers as libclang lists them, through the installed CLI.

Each case is a class of C++ semantics that the reference harness
(tests/bench/bench_graph_reference.py) found missed on the tuned project; the
fixture tests/fixtures/graph_cpp_recall is indexed by a real `ctxkit index`
subprocess and read back with `ctxkit callers --json`.
"""

from __future__ import annotations

import pytest

from conftest import callers_of, copy_fixture


@pytest.fixture
def indexed(cli):
    copy_fixture("graph_cpp_recall", cli.root)
    result = cli.sub("index", "--json")
    assert result.code == 0, result.err
    return cli


# (symbol, exactly these callers)
CASES = [
    # the injected class name: `Num result = a;` / `Num tmp;` / `const Num& a` inside a
    # member of Num (a class with constructors) declare a Num, in line and out of line
    ("num.h:dc.Num.Sub", {"num.h:dc.Num.Minus"}),
    ("num.cc:dc.Num.Assign", {"num.cc:dc.Num.Add"}),
    ("num.h:dc.Num.Length", {"num.cc:dc.Num.Add", "num.cc:dc.Num.Compare"}),
    # a string literal is an array of char: f("1.5") runs f(const char*), not f(const uc16*)
    ("conv.cc:dc.Converter.ToDouble", {"conv.cc:parse_literal"}),
    # an array `uc16 wide[4]` is of uc16: f(wide, 3) runs f(const uc16*)
    ("conv.cc:dc.Converter.ToDouble#2", {"conv.cc:parse_wide"}),
    # an argument that is a call has the type it makes: Dbl(Fp(f, e)) runs Dbl(Fp)
    ("ieee.h:dc.Dbl.Dbl#2", {"ieee.h:dc.from_fp"}),
    ("ieee.h:dc.Dbl.Dbl", set()),
    # a value plus a literal has the value's type: Dbl(bits_ + 1) runs Dbl(uint64)
    ("ieee.h:dc.Dbl.Dbl#3", {"ieee.h:dc.Dbl.Next"}),
    # auto *p = dynamic_cast<T*>(e), auto* p = static_cast<T*>(e), auto& r = f(), and
    # one declared in an if's condition: of T (both classes define visit: no guess)
    ("ast.cc:ast.Apply.visit", {"ast.cc:one", "ast.cc:three"}),
    ("ast.cc:ast.Local.visit", {"ast.cc:two", "ast.cc:four"}),
    # a constructor's member initializer `: Shape(w, h)` constructs the base, and
    # `: Shape(0, 0)` delegates to another constructor: which one, the arguments say,
    # among the ones the header defines in line and the ones shape.cc defines
    ("shape.cc:geo.Shape.Shape#2", {"shape.cc:geo.Shape.Shape", "shape.cc:geo.Square.Square",
                                    "shape.cc:geo.Square.Square#2"}),
    ("shape.h:geo.Shape.Shape", set()),
    ("shape.h:geo.Shape", {"shape.cc:geo.Shape.Shape", "shape.cc:geo.Square.Square",
                           "shape.cc:geo.Square.Square#2"}),
]


@pytest.mark.parametrize("symbol,expected", CASES, ids=[c[0] for c in CASES])
def test_cpp_callers_as_the_compiler_reads_them(indexed, symbol, expected):
    assert callers_of(indexed, symbol) == expected


def test_a_member_initializer_is_no_call(indexed):
    """`: side_(side)` initializes a field: `callees` lists the base's construction and
    nothing named after the members."""
    result = indexed.sub("callees", "shape.cc:geo.Square.Square", "--json")
    assert result.code == 0, result.err
    names = {r["id"] or r["name"] for r in result.json()["results"]}
    assert names == {"shape.h:geo.Shape", "shape.cc:geo.Shape.Shape#2"}
