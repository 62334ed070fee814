"""Graph structure through the real CLI: error recovery, grammar rewrites, ranking,
exact ids and .gitignore without git."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from test_graph import ids, index


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- definitions made by error recovery ---------------------------------------------

BROKEN = """\
function good() { helper(); }
class X {
  m() { a();
  @@@ %%% function phantom() { helper(); }
}
function helper() {}
"""


def test_recovered_definitions_are_marked_counted_and_never_callers(cli):
    write(cli.root, "src/broken.ts", BROKEN)
    write(cli.root, "src/fine.ts", "export function ok() { return 1; }\n")
    data = index(cli)
    assert data["files"]["errors"] == 1
    assert data["recovered"] == 2  # X.m.phantom, and X.helper (a class closed by recovery)
    symbols = {r["id"]: r.get("recovered", False)
               for r in cli("symbols", "--json").json()["results"]}
    assert symbols["src/broken.ts:X.m.phantom"] is True
    assert symbols["src/broken.ts:X.m"] is False
    assert symbols["src/fine.ts:ok"] is False
    # the phantom's call is its real enclosing method's
    assert "src/broken.ts:X.m.phantom" not in ids(cli, "callers", "src/broken.ts:X.helper")
    assert ids(cli, "callees", "src/broken.ts:X.m") >= {"a"}
    text = cli("index", "--full").out
    assert "2 definitions made by tree-sitter's error recovery" in text
    assert "made by error recovery" in cli("symbols", "phantom").out


def test_interface_generic_call_signatures_parse(cli):
    """Consecutive `<T>(...)` call signatures without semicolons: TypeScript ends a
    member at the newline; the grammar alone lost everything after the interface."""
    write(cli.root, "src/action.ts", """\
export interface IActionFactory {
    <T extends Function>(fn: T): T
    <T extends Function>(name: string, fn: T): T
    (customName: string): unknown
}

export function createActionFactory(auto: boolean): IActionFactory {
    return makeAction(auto)
}

function makeAction(auto: boolean): any {
    return auto
}
""")
    data = index(cli)
    assert data["files"]["errors"] == 0 and data["recovered"] == 0
    assert ids(cli, "callers", "src/action.ts:makeAction") == {"src/action.ts:createActionFactory"}


def test_variance_and_generic_call_signatures_after_a_generic_type_parse(cli):
    """Variance modifiers on type parameters (`in out T`, TypeScript 4.7), also after
    a comment, and a call signature after one whose type ends in `>`: the bundled
    grammar failed on both and lost the definitions that follow."""
    write(cli.root, "src/store.ts", """\
export interface Factory {
    <T>(value: T): Box<T>
    <K, V>(entries?: Array<K>): Map<
        K,
        V
    >
    <T>(value?: T): Box<T>
}

export interface Options<
    in out TData,
    /** @ts-ignore variance */
    out TResult extends object = {},
    in TInput = unknown,
> {
    data: TData
}

export class Store<out T> {
    get(): T { return load(this) }
}

function load(store: unknown): any {
    return store
}
""")
    data = index(cli)
    assert data["files"]["errors"] == 0 and data["recovered"] == 0
    assert ids(cli, "callers", "src/store.ts:load") == {"src/store.ts:Store.get"}


# --- ranking and exact ids ------------------------------------------------------------


def test_first_and_ambiguity_rank_by_fan_in(cli):
    """A fallback definition with no callers must not win on a shorter path."""
    write(cli.root, "pkg/backend.py", "def sympify(x):\n    return x\n")
    write(cli.root, "pkg/core/sympify.py", "def sympify(x):\n    return x\n")
    write(cli.root, "pkg/core/use.py", "from .sympify import sympify\n\n\n"
          "def a():\n    return sympify(1)\n\n\ndef b():\n    return sympify(2)\n")
    index(cli)
    result = cli("callers", "sympify", "--first", "--json")
    assert result.code == 0, result.err
    assert result.json()["target"] == "pkg/core/sympify.py:sympify"
    ambiguous = cli("callers", "sympify")
    assert ambiguous.code != 0
    assert ambiguous.err.index("pkg/core/sympify.py:sympify") < \
        ambiguous.err.index("pkg/backend.py:sympify")


def test_exact_id_wins_over_file_line(cli):
    """An id that looks like FILE:LINE (errors.ts:33, where 33 was an object key)
    answers for its own node, never for whatever sits on line 33."""
    write(cli.root, "errors.ts", "export default {\n  33() { return helper(); },\n};\n"
          "function helper() { return 0; }\n" + "\n" * 28 + "export function late() {}\n")
    index(cli)
    key = next(r["id"] for r in cli("symbols", "--json").json()["results"]
               if r["id"].endswith("33"))
    # Name the node as an extractor without owners did: its id is errors.ts:33.
    db = sqlite3.connect(cli.db)
    with db:
        db.execute("UPDATE nodes SET uid = 'errors.ts:33', qualname = '33' WHERE uid = ?", (key,))
    db.close()
    exact = cli("callees", "errors.ts:33", "--json")
    assert exact.code == 0, exact.err
    assert exact.json()["target"] == "errors.ts:33"
    assert {r["id"] for r in exact.json()["results"]} == {"errors.ts:helper"}
    assert cli("callees", "errors.ts:late", "--json").json()["target"] == "errors.ts:late"
    assert cli("symbols", "late", "--json").json()["results"][0]["line"] == 33  # same line
    by_line = cli("callees", "errors.ts:2", "--json")  # FILE:LINE still reads lines
    assert by_line.code == 0, by_line.err
    assert by_line.json()["target"] == "errors.ts:33"


# --- .gitignore without .git ------------------------------------------------------------


def test_gitignore_semantics_without_git(cli):
    root = cli.root
    write(root, ".gitignore", "/toml-test\n*.gen.py\n!keep.gen.py\nbuild/\ndocs/**/draft_*.py\n")
    write(root, "toml-test/a.py", "def root_only(): pass\n")
    write(root, "internal/toml-test/b.py", "def nested_kept(): pass\n")
    write(root, "x.gen.py", "def generated(): pass\n")
    write(root, "lib/keep.gen.py", "def kept_by_negation(): pass\n")
    write(root, "build/c.py", "def in_build_dir(): pass\n")
    write(root, "src/build", "not a folder: a file named build\n")
    write(root, "src/build.py", "def build_file(): pass\n")
    write(root, "docs/a/b/draft_1.py", "def draft(): pass\n")
    write(root, "docs/final.py", "def final(): pass\n")
    write(root, "sub/.gitignore", "/local\n")
    write(root, "sub/local/d.py", "def sub_local(): pass\n")
    write(root, "sub/deeper/local/e.py", "def sub_deeper_local(): pass\n")
    shutil.rmtree(root / ".git")  # the walker, not git ls-files, reads the .gitignore files
    index(cli)
    names = {r["id"].rsplit(":", 1)[1] for r in cli("symbols", "--json").json()["results"]}
    assert names == {"nested_kept", "kept_by_negation", "build_file", "final",
                     "sub_deeper_local"}


def test_a_cpp_header_named_h_is_read_as_cpp(cli):
    """.h is shared by C and C++: namespaces, classes, templates or `::` make it C++
    (the C grammar made every definition of such a header an error)."""
    write(cli.root, "include/shape.h", "#pragma once\nnamespace geo {\nclass Shape {\n public:\n"
          "  double scale() const { return 1.0; }\n};\n}\n")
    write(cli.root, "include/util.h", "int util_add(int a, int b);\n"
          "static inline int twice(int v) { return util_add(v, v); }\n")
    write(cli.root, "src/main.cpp", '#include "shape.h"\n'
          "int main() { geo::Shape s; return s.scale() > 0; }\n")
    data = index(cli)
    assert data["languages"] == {"c": 1, "cpp": 2}
    assert data["files"]["errors"] == 0
    assert ids(cli, "callers", "include/shape.h:geo.Shape.scale") == {"src/main.cpp:main"}
    assert "include/util.h:twice" in {r["id"] for r in cli("symbols", "--json").json()["results"]}
