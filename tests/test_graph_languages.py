"""Graph: the seven languages that became full languages, through the real CLI.

Each fixture is a small multi-file project written the way the language is
written; the cases pin who calls whom the way a reader of that language (and
its compiler) would say, including the calls that must stay unresolved.
"""

from __future__ import annotations

import pytest
from conftest import copy_fixture


def index(cli, fixture: str) -> dict:
    copy_fixture(fixture, cli.root)
    result = cli("index", "--json")
    assert result.code == 0, result.err
    return result.json()


def related(cli, command: str, symbol: str) -> set[str]:
    result = cli(command, symbol, "--json")
    assert result.code == 0, result.err
    return {r["id"] or r["name"] for r in result.json()["results"]}


# (fixture, symbol, relation, exactly these)
CASES = [
    # C: file-local static functions, #include'd inline helpers, external linkage
    ("graph_c", "src/util.c:util_add", "callers",
     {"src/main.c:main", "src/parser.c:parse_line", "src/util.c:util_scale"}),
    ("graph_c", "tools/fake_util.c:util_add", "callers", {"tools/fake_util.c:bench_main"}),
    ("graph_c", "src/util.c:normalize", "callers", {"src/util.c:util_add"}),
    ("graph_c", "src/parser.c:normalize", "callers", {"src/parser.c:parse_line"}),
    ("graph_c", "include/util.h:clamp", "callers", {"src/main.c:main", "src/util.c:normalize"}),
    ("graph_c", "src/parser.c:parse_line", "callees",
     {"src/parser.c:normalize", "atoi", "src/util.c:util_add", "out.emit", "printf"}),
    # C++: namespaces, out-of-line members, this->, typed receivers, Base::f()
    ("graph_cpp", "src/main.cpp:main", "callees",
     {"src/shape.cpp:geo.Shape.describe", "include/circle.hpp:geo.Circle",
      "src/circle.cpp:geo.Circle.draw", "src/circle.cpp:geo.make_circle",
      "src/circle.cpp:geo.Circle.area", "src/circle.cpp:geo.Circle.unit",
      "shapes.push_back", "src/shape.cpp:geo.total_area", "src/main.cpp:other.area"}),
    ("graph_cpp", "src/circle.cpp:geo.Circle.draw", "callees",
     {"include/render.hpp:geo.Renderer.render", "src/circle.cpp:geo.Circle.area",
      "src/shape.cpp:geo.Shape.describe"}),
    ("graph_cpp", "src/circle.cpp:geo.Circle.area", "callees",
     {"src/circle.cpp:helper", "include/shape.hpp:geo.Shape.scale"}),
    ("graph_cpp", "src/shape.cpp:helper", "callers", {"src/shape.cpp:geo.Shape.area"}),
    ("graph_cpp", "src/shape.cpp:geo.Shape.area", "callers",
     {"src/shape.cpp:geo.Shape.describe", "src/shape.cpp:geo.total_area"}),
    ("graph_cpp", "src/main.cpp:other.area", "callers", {"src/main.cpp:main"}),
]


@pytest.mark.parametrize("fixture,symbol,relation,expected", CASES,
                         ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in CASES])
def test_calls_resolve_as_a_reader_would(cli, fixture, symbol, relation, expected):
    index(cli, fixture)
    assert related(cli, relation, symbol) == expected


def test_c_includes_are_import_edges(cli):
    """Project headers are the file's imports (context lists them as types)."""
    index(cli, "graph_c")
    result = cli("context", "src/parser.c", "--purpose", "review", "--json")
    assert result.code == 0, result.err
    types = {i["id"] for i in result.json()["items"] if i["section"] == "types"}
    assert types == {"include/parser.h"}
