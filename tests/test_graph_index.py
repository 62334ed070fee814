"""Graph: node fields, incremental indexing, bad input, lookups and commands."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV, copy_fixture, git

import ctxkit


def index(cli, *args: str) -> dict:
    result = cli("index", "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def callers(cli, symbol: str, *args: str) -> set[str]:
    result = cli("callers", symbol, "--json", *args)
    assert result.code == 0, result.err
    return {r["id"] for r in result.json()["results"]}


def callees(cli, symbol: str, *args: str) -> set[str]:
    result = cli("callees", symbol, "--json", *args)
    assert result.code == 0, result.err
    return {r["id"] or r["name"] for r in result.json()["results"]}


def node(cli, uid: str) -> ctxkit.Node:
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        found = ctxkit.graph_find_nodes(db, env.project, uid)
    finally:
        db.close()
    assert len(found) == 1, found
    return found[0]


def db_rows(cli, sql: str, params=()) -> list[tuple]:
    conn = sqlite3.connect(cli.db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def bump(path: Path) -> None:
    """Make sure the next index sees a new mtime even on coarse clocks."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))


# --- fields ------------------------------------------------------------------


def test_index_summary_shape(cli):
    copy_fixture("graph_python", cli.root)
    data = index(cli)
    assert set(data) == {"files", "skip_reasons", "recovered", "nodes", "edges", "seconds",
                         "languages"}
    assert data["files"] == {"indexed": 5, "unchanged": 0, "removed": 0, "skipped": 0,
                             "errors": 0}
    assert data["languages"] == {"python": 5}
    assert data["nodes"] == 28 and data["edges"] > 50


def test_node_fields_python(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    init = node(cli, "app/models.py:User.__init__")
    assert init.kind == "method" and init.qualname == "User.__init__"
    assert init.signature == "def __init__(self, name: str, email: str = \"\")"
    assert list(init.params) == [
        {"name": "self", "type": None, "default": None},
        {"name": "name", "type": "str", "default": None},
        {"name": "email", "type": "str", "default": '""'}]
    assert (init.line, init.end_line, init.loc) == (19, 21, 3)
    rename = node(cli, "app/models.py:User.rename")
    assert rename.complexity == 3  # 1 + the `if` + its `or`
    user = node(cli, "app/models.py:User")
    assert user.kind == "class" and user.docstring == "A person with a login."
    assert user.exported
    fetch = node(cli, "app/service.py:UserService.fetch")
    assert fetch.is_async and [p["default"] for p in fetch.params] == [None, None, "3"]
    assert node(cli, "app/service.py:UserService._store").exported is False
    create = node(cli, "app/service.py:UserService.create")
    assert create.return_type == "U"
    assert len(create.body_hash) == 16
    helper = node(cli, "app/service.py:UserService.fetch.helper")
    assert helper.kind == "function" and not helper.exported


def test_node_fields_typescript_go_rust_java(cli):
    for name in ("graph_typescript", "graph_go", "graph_rust", "graph_java"):
        copy_fixture(name, cli.root / name)
    index(cli)
    rename = node(cli, "graph_typescript/src/models.ts:User.rename")
    assert rename.params == ({"name": "name", "type": "string", "default": None},)
    assert rename.return_type == "boolean" and rename.exported
    main = node(cli, "graph_typescript/src/main.ts:main")
    assert main.is_async and main.return_type == "Promise<void>"
    model = node(cli, "graph_typescript/src/models.ts:Model")
    assert model.docstring == "Base of every stored object."
    save = node(cli, "graph_go/models/model.go:Model.Save")
    assert save.kind == "method" and save.exported
    assert save.docstring == "Save serializes the record."
    assert save.return_type == "([]byte, error)"
    persist = node(cli, "graph_go/service/service.go:UserService.persist")
    assert not persist.exported
    assert node(cli, "graph_go/models/user.go:User").kind == "struct"
    assert node(cli, "graph_rust/src/models.rs:Saveable").kind == "trait"
    new = node(cli, "graph_rust/src/models.rs:User.new")
    assert new.params == ({"name": "name", "type": "&str", "default": None},)
    assert new.return_type == "Self" and new.exported
    assert node(cli, "graph_rust/src/service.rs:UserService.persist").exported is False
    validate = node(cli, "graph_java/src/main/java/com/shop/models/Validator.java:"
                         "Validator.validate")
    assert validate.signature == "public static String validate(String data)"
    assert validate.return_type == "String" and validate.exported
    assert node(cli, "graph_java/src/main/java/com/shop/models/Saveable.java:Saveable").kind \
        == "interface"


def test_inheritance_imports_exports_relations(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        user = node(cli, "app/models.py:User")
        model = node(cli, "app/models.py:Model")
        rel = ctxkit.graph_relations
        assert [r.node.id for r in rel(db, env.project, user, "extends")] == [model.id]
        assert [r.node.id for r in rel(db, env.project, model, "extendedBy")] == [user.id]
        imports = {r.name: r.node.id if r.node else None
                   for r in rel(db, env.project, node(cli, "app/service.py:make_service"),
                                "imports")}
        assert imports == {"os.path": None, ".": "app/__init__.py", ".cache": "app/cache.py",
                           ".models": "app/models.py"}
        imported_by = {r.node.id for r in rel(db, env.project, model, "importedBy")}
        assert imported_by == {"app/service.py", "app/cli.py"}
        exports = {r.name for r in rel(db, env.project, model, "exports")}
        assert exports == {"Model", "User", "validate"}
        assert [r.line for r in rel(db, env.project, user, "calls")] == []
        with pytest.raises(ctxkit.UsageError):
            rel(db, env.project, user, "friends")
    finally:
        db.close()


def test_every_calls_edge_has_its_line(cli):
    for name in ("graph_python", "graph_go", "graph_java"):
        copy_fixture(name, cli.root / name)
    index(cli)
    assert db_rows(cli, "SELECT count(*) FROM edges WHERE kind = 'calls' AND line IS NULL") \
        == [(0,)]
    assert db_rows(cli, "SELECT count(*) FROM edges WHERE kind = 'calls'")[0][0] > 40
    results = cli("callers", "graph_python/app/models.py:validate", "--json").json()["results"]
    assert {(r["id"], r["line"]) for r in results} == {
        ("graph_python/app/models.py:User.serialize", 26),
        ("graph_python/app/service.py:UserService._store", 22),
        ("graph_python/app/service.py:UserService.reset", 31)}


def test_call_attribution_function_and_module_level(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    results = cli("callers", "app/service.py:make_service", "--json").json()["results"]
    by_id = {r["id"]: r for r in results}
    # the call inside main() belongs to main, the module-level one to the file node
    assert by_id["app/cli.py:main"]["line"] == 7
    assert by_id["app/service.py"]["line"] == 38 and by_id["app/service.py"]["kind"] == "file"
    # a call inside a nested function belongs to the nested function, not the method
    assert "k.strip" in callees(cli, "UserService.fetch.helper")
    assert "k.strip" not in callees(cli, "UserService.fetch")


# --- unknown vs no callers, ambiguity, targets ---------------------------------


def test_unknown_symbol_vs_symbol_without_callers(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    known = cli("callers", "app/cache.py:Cache.save")
    assert known.code == 0 and "no callers of app/cache.py:Cache.save" in known.out
    assert cli("callers", "app/cache.py:Cache.save", "--json").json() == {
        "target": "app/cache.py:Cache.save", "results": []}
    unknown = cli("callers", "Cache.nothing_like_this")
    assert unknown.code == 1 and unknown.out == ""
    assert "not in the index" in unknown.err and unknown.err.count("\n") == 1
    assert cli("callees", "nope", "--json").code == 1
    assert cli("impact", "nope").code == 1


def test_nothing_indexed_yet(cli):
    result = cli("callers", "main")
    assert result.code == 1 and "run `ctxkit index` first" in result.err


def test_ambiguous_name_lists_candidates_and_first_picks(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    result = cli("callers", "validate")
    assert result.code == 1
    assert "app/cache.py:validate" in result.err and "app/models.py:validate" in result.err
    assert cli("callers", "validate", "--first").code == 0
    picked = cli("callers", "validate", "--file", "app/models.py", "--json").json()
    assert picked["target"] == "app/models.py:validate"


def test_file_line_target_and_graph_resolve(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    assert cli("callees", "app/models.py:30", "--json").json()["target"] == \
        "app/models.py:User.rename"
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        assert ctxkit.graph_resolve(db, env, "User.rename").id == "app/models.py:User.rename"
        assert ctxkit.graph_resolve(db, env, "app/cli.py").kind == "file"
        assert ctxkit.graph_resolve(db, env, "app/models.py:2").kind == "file"
        with pytest.raises(ctxkit.Ambiguous):
            ctxkit.graph_resolve(db, env, "save")
        with pytest.raises(ctxkit.NotFound):
            ctxkit.graph_resolve(db, env, "app/nothing.py:3")
        assert ctxkit.graph_resolve(db, env, "save", first=True).qualname.endswith("save")
    finally:
        db.close()


def test_symbols_command(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    data = cli("symbols", "save", "--json").json()
    assert [r["id"] for r in data["results"]] == ["app/cache.py:Cache.save",
                                                  "app/models.py:Model.save"]
    assert data["results"][0] == {"id": "app/cache.py:Cache.save", "kind": "method",
                                  "path": "app/cache.py", "line": 5}
    classes = cli("symbols", "--kind", "class", "--file", "app/models.py", "--json").json()
    assert [r["id"] for r in classes["results"]] == ["app/models.py:Model", "app/models.py:User"]
    assert cli("symbols", "User.*", "--json").json()["results"][0]["id"] == \
        "app/models.py:User.__init__"
    assert len(cli("symbols", "--limit", "2", "--json").json()["results"]) == 2
    human = cli("symbols", "Model.save")
    assert human.out.strip() == "app/models.py:Model.save (method)"
    assert cli("symbols", "--limit", "0").code == 2


def test_impact_direct_indirect_and_risk(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    data = cli("impact", "app/models.py:User.rename", "--json").json()
    assert data["target"] == "app/models.py:User.rename"
    assert data["direct"] == ["app/service.py:UserService.create"]
    assert set(data["indirect"]) == {"app/cli.py:run", "app/cli.py:main", "app/cli.py"}
    assert data["risk_level"] in ("low", "medium", "high", "critical")
    assert cli("impact", "User.rename", "--depth", "1", "--json").json()["indirect"] == []
    leaf = cli("impact", "app/cache.py:Cache.save", "--json").json()
    assert leaf["direct"] == [] and leaf["risk_level"] == "low"


def test_one_symbol_has_one_impact_risk_at_any_depth(cli):
    # a chain five callers deep, two branches wide: depth 3 sees half of the closure
    lines = ["def target():\n    return 1\n"]
    for side in ("x", "y"):
        below = "target"
        for level in range(1, 6):
            lines.append(f"def {side}{level}():\n    return {below}()\n")
            below = f"{side}{level}"
    (cli.root / "chain.py").write_text("\n\n".join(lines))
    index(cli)
    whole = cli("impact", "target", "--json").json()
    assert (len(whole["direct"]), len(whole["indirect"])) == (2, 8)
    assert whole["risk_score"] == 2 + 0.5 * 8
    shallow = cli("impact", "target", "--depth", "1", "--json").json()
    assert shallow["indirect"] == [] and shallow["risk_score"] == whole["risk_score"]
    assert shallow["closure"] == {"direct": 2, "indirect": 8, "through_base": 0}
    assert "listed: 2 direct and 0 indirect" in cli("impact", "target", "--depth", "1").out
    context = cli("context", "target", "--purpose", "impact", "--json").json()["impact"]
    assert (context["risk_score"], context["risk_level"]) == (whole["risk_score"],
                                                              whole["risk_level"])


def test_option_errors_are_usage_errors(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    assert cli("callers", "main", "--depth", "0").code == 2
    assert cli("callers", "main", "--min-confidence", "2").code == 2
    assert cli("index", "no/such/dir").code == 1


# --- incremental -----------------------------------------------------------------


def test_second_run_reads_nothing(cli, monkeypatch):
    copy_fixture("graph_python", cli.root)
    first = index(cli)
    monkeypatch.setattr(ctxkit, "_graph_parse_job", lambda job: pytest.fail(f"read {job[0]}"))
    second = index(cli)
    assert second["files"] == {"indexed": 0, "unchanged": 5, "removed": 0, "skipped": 0,
                               "errors": 0}
    assert (second["nodes"], second["edges"]) == (first["nodes"], first["edges"])


def test_touch_hashes_but_does_not_reparse(cli, monkeypatch):
    copy_fixture("graph_python", cli.root)
    index(cli)
    bump(cli.root / "app/models.py")
    monkeypatch.setattr(ctxkit, "graph_extract", lambda *a: pytest.fail("parsed again"))
    data = index(cli)
    assert data["files"]["unchanged"] == 5 and data["files"]["indexed"] == 0


def test_editing_only_the_callee_file_keeps_callers_edges(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    before = callers(cli, "app/models.py:Model.save")
    path = cli.root / "app/models.py"
    text = path.read_text().replace('"""Data models."""', '"""Data models.\n\nEdited."""\n\n')
    path.write_text(text.replace("return json.dumps(data)", "return json.dumps(data, indent=1)"))
    bump(path)
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["files"]["unchanged"] == 4
    assert callers(cli, "app/models.py:Model.save") == before
    assert callers(cli, "app/models.py:validate") == {
        "app/models.py:User.serialize", "app/service.py:UserService._store",
        "app/service.py:UserService.reset"}


def test_body_hash_changes_with_the_body_only(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    old_save = node(cli, "app/models.py:Model.save").body_hash
    old_validate = node(cli, "app/models.py:validate").body_hash
    path = cli.root / "app/models.py"
    path.write_text(path.read_text().replace("return json.dumps(data)", "return repr(data)"))
    bump(path)
    index(cli)
    assert node(cli, "app/models.py:Model.save").body_hash != old_save
    assert node(cli, "app/models.py:validate").body_hash == old_validate


def test_deleted_file_leaves_nothing(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    (cli.root / "app/cache.py").unlink()
    data = index(cli)
    assert data["files"]["removed"] == 1
    assert db_rows(cli, "SELECT count(*) FROM nodes WHERE path = 'app/cache.py'") == [(0,)]
    assert db_rows(cli, "SELECT count(*) FROM edges e LEFT JOIN nodes n ON n.id = e.dst_id "
                        "WHERE e.dst_id IS NOT NULL AND n.id IS NULL") == [(0,)]
    assert db_rows(cli, "SELECT count(*) FROM edges e LEFT JOIN nodes n ON n.id = e.src_id "
                        "WHERE n.id IS NULL") == [(0,)]
    assert "app/cache.py:Cache.clear" not in callees(cli, "UserService._store")
    assert "self.cache.clear" in callees(cli, "UserService._store")
    assert cli("callers", "app/cache.py:Cache.save").code == 1


def test_renamed_symbol_leaves_no_stale_edge(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    path = cli.root / "app/models.py"
    path.write_text(path.read_text().replace("def validate(", "def check(")
                    .replace("return validate(base)", "return check(base)"))
    bump(path)
    index(cli)
    assert cli("callers", "app/models.py:validate").code == 1
    assert callers(cli, "app/models.py:check") == {"app/models.py:User.serialize"}
    # service.py was not re-parsed: its call through the import is now unresolved,
    # and certainly not re-pointed at cache.validate by the unique-name guess
    assert "validate" in callees(cli, "UserService._store")
    assert callers(cli, "app/cache.py:validate") == set()
    assert db_rows(cli, "SELECT count(*) FROM edges e LEFT JOIN nodes n ON n.id = e.dst_id "
                        "WHERE e.dst_id IS NOT NULL AND n.id IS NULL") == [(0,)]


def test_new_definition_is_linked_from_unchanged_files(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    assert callees(cli, "app/cli.py:run") >= {"obj.save"}
    write(cli.root, "app/loader.py", "def load_all():\n    return []\n")
    write(cli.root, "app/extra.py", "from .loader import load_all\n\n\ndef go():\n"
                                    "    return load_all()\n")
    index(cli)
    assert callers(cli, "load_all") == {"app/extra.py:go"}
    # and a name first guessed by uniqueness stops being guessed once it is ambiguous
    # (`thing` is a parameter no call passes: unknown)
    write(cli.root, "app/store.py", "class Store:\n    def archive(self):\n        pass\n\n\n"
                                    "def use(thing):\n    return thing.archive()\n")
    index(cli)
    assert "app/store.py:Store.archive" in callees(cli, "app/store.py:use")
    write(cli.root, "app/other.py", "class Other:\n    def archive(self):\n        pass\n")
    index(cli)
    assert "app/store.py:Store.archive" not in callees(cli, "app/store.py:use")


def test_a_changed_result_type_re_resolves_the_calls_that_read_it_elsewhere(cli):
    """`make().go()` and `x = make(); x.go()` in use.py call whatever class make()
    is declared (or inferred) to return in f.py. Editing only f.py moves them, though
    no call in use.py names anything f.py defines but make; as does creating a file
    that defines make where use.py's make() read nothing, and deleting it again."""
    write(cli.root, "m.py", "class A:\n    def go(self):\n        pass\n\n\n"
                            "class B:\n    def go(self):\n        pass\n")
    write(cli.root, "f.py", "from m import A, B\n\n\ndef make() -> A:\n    return A()\n")
    write(cli.root, "use.py", "from f import make\nfrom g import build\n\n\n"
                              "def run():\n    make().go()\n\n\n"
                              "def later():\n    x = build()\n    x.go()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == {"use.py:run"}
    write(cli.root, "f.py", "from m import A, B\n\n\ndef make() -> B:\n    return B()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == set()
    assert callers(cli, "m.py:B.go") == {"use.py:run"}
    write(cli.root, "f.py", "from m import A, B\n\n\ndef make():\n    return A()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == {"use.py:run"}
    write(cli.root, "g.py", "from m import B\n\n\ndef build() -> B:\n    return B()\n")
    index(cli)
    assert callers(cli, "m.py:B.go") == {"use.py:later"}
    (cli.root / "g.py").unlink()
    index(cli)
    assert callers(cli, "m.py:B.go") == set()


def test_a_changed_module_variable_re_resolves_its_readers(cli):
    """`f.table.go()` names nothing f.py defines: the files importing f.py are
    resolved again when its shape changes."""
    write(cli.root, "m.py", "class A:\n    def go(self):\n        pass\n\n\n"
                            "class B:\n    def go(self):\n        pass\n")
    write(cli.root, "f.py", "from m import A, B\n\ntable = A()\n\n\ndef helper():\n"
                            "    return 1\n")
    write(cli.root, "use.py", "import f\n\n\ndef run():\n    f.table.go()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == {"use.py:run"}
    write(cli.root, "f.py", "from m import A, B\n\ntable = B()\n\n\ndef helper():\n"
                            "    return 1\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == set()
    assert callers(cli, "m.py:B.go") == {"use.py:run"}


def test_a_changed_field_or_a_new_module_re_resolves_its_importers(cli):
    """`h.item.go()` reads a class field of f.py and `g.table.go()` a variable of a
    file created after use.py was indexed: neither call names what changed (found
    by a review: both kept their old answer, unlike a clean index)."""
    write(cli.root, "m.py", "class A:\n    def go(self):\n        pass\n\n\n"
                            "class B:\n    def go(self):\n        pass\n")
    write(cli.root, "f.py", "from m import A, B\n\n\nclass H:\n    item: A\n")
    write(cli.root, "use.py", "import g\nfrom f import H\n\n\ndef run(h: H):\n"
                              "    h.item.go()\n\n\ndef later():\n    g.table.go()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == {"use.py:run"}
    write(cli.root, "f.py", "from m import A, B\n\n\nclass H:\n    item: B\n")
    write(cli.root, "g.py", "from m import A\n\ntable = A()\n")
    index(cli)
    assert callers(cli, "m.py:A.go") == {"use.py:later"}
    assert callers(cli, "m.py:B.go") == {"use.py:run"}


def test_paths_and_exclude_limit_the_run(cli):
    copy_fixture("graph_python", cli.root)
    data = index(cli, "app/models.py", "app/cache.py")
    assert data["files"]["indexed"] == 2
    data = index(cli, "--exclude", "app/c*.py")
    assert data["files"]["removed"] == 1  # cache.py: now excluded from the whole-root run
    assert data["files"]["indexed"] == 2  # service.py, __init__.py; cli.py excluded too
    assert cli("symbols", "--file", "app/cli.py", "--json").json()["results"] == []


def test_full_reindexes_everything(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    data = index(cli, "--full")
    assert data["files"]["indexed"] == 5 and data["files"]["unchanged"] == 0
    assert callers(cli, "app/models.py:Model.save") == {
        "app/models.py:User.rename", "app/service.py:UserService._store", "app/cli.py:main"}


def test_graph_refresh(cli):
    copy_fixture("graph_python", cli.root)
    index(cli)
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        assert ctxkit.graph_refresh(env, db, ["app/models.py"]) == 0
        path = cli.root / "app/models.py"
        path.write_text(path.read_text() + "\n\ndef added():\n    return validate(1)\n")
        bump(path)
        assert ctxkit.graph_refresh(env, db, ["app/models.py", "app/cli.py"]) == 1
        assert ctxkit.graph_find_nodes(db, env.project, "added")
        (cli.root / "app/cache.py").unlink()
        assert ctxkit.graph_refresh(env, db, ["app/cache.py"]) == 1
        assert not ctxkit.graph_find_nodes(db, env.project, "Cache")
    finally:
        db.close()


# --- bad input ----------------------------------------------------------------------


def test_syntax_error_is_indexed_and_flagged(cli):
    write(cli.root, "broken.py", "def good():\n    return 1\n\ndef bad(:\n    pass\n\n"
                                 "def after():\n    return good()\n")
    data = index(cli)
    assert data["files"]["errors"] == 1 and data["files"]["indexed"] == 1
    assert callers(cli, "good") == {"broken.py:after"}
    human = cli("index", "--full")
    assert "syntax errors" in human.out and "broken.py" in human.out


def test_big_binary_and_unknown_files_are_skipped_and_counted(cli):
    write(cli.root, "ok.py", "def f():\n    return 1\n")
    write(cli.root, "huge.py", "x = 1\n" * 1_500_000)  # 9 MB: over the default 8 MiB
    write(cli.root, "blob.py", b"\x00\x01\x02def f(): pass\n")
    write(cli.root, "notes.txt", "hello\n")
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["files"]["skipped"] == 3
    assert data["skip_reasons"] == {"language": 1, "too_big": 1, "binary": 1}
    assert db_rows(cli, "SELECT path FROM files") == [("ok.py",)]


def test_file_that_became_binary_leaves_the_index(cli):
    path = write(cli.root, "a.py", "def f():\n    return 1\n")
    index(cli)
    path.write_bytes(b"\x00" * 100)
    bump(path)
    data = index(cli)
    assert data["files"]["skipped"] == 1
    assert db_rows(cli, "SELECT count(*) FROM nodes WHERE path = 'a.py'") == [(0,)]


def test_symlink_loops_and_directory_links(cli):
    write(cli.root, "real.py", "def real():\n    return 1\n")
    os.symlink("loop_b.py", cli.root / "loop_a.py")
    os.symlink("loop_a.py", cli.root / "loop_b.py")
    os.symlink(".", cli.root / "self_dir")
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["files"]["skipped"] == 2


def test_symlink_loop_outside_git(tmp_path, monkeypatch, capsys):
    root = tmp_path / "plain"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def a():\n    return b()\n\ndef b():\n    pass\n")
    os.symlink("..", root / "pkg" / "up")  # a directory loop for a naive walker
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.py").write_text("def hidden():\n    pass\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "m.js").write_text("function m() {}\n")
    monkeypatch.chdir(root)
    for name in list(os.environ):
        if name.startswith("CTXKIT_"):
            monkeypatch.delenv(name)
    assert ctxkit.main(["index", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files"]["indexed"] == 1


def test_non_utf8_and_unicode_paths(cli):
    write(cli.root, "legacy.py", b"# -*- coding: latin-1 -*-\n" +
          "def caf\u00e9():\n    return 'd\u00e9j\u00e0'\n".replace("caf\u00e9", "cafe")
          .encode("latin-1") + b"\n\ndef other():\n    return cafe()\n")
    write(cli.root, "my dir/\u00fcn\u00efc\u00f6de m\u00f6dule.py",
          "def spaced():\n    return 1\n")
    data = index(cli)
    assert data["files"]["indexed"] == 2
    assert callers(cli, "cafe") == {"legacy.py:other"}
    assert cli("callers", "spaced", "--json").json()["target"] == \
        "my dir/\u00fcn\u00efc\u00f6de m\u00f6dule.py:spaced"


def test_empty_repository(cli):
    data = index(cli)
    assert data["files"] == {"indexed": 0, "unchanged": 0, "removed": 0, "skipped": 0,
                             "errors": 0}
    assert data["nodes"] == 0 and data["languages"] == {}
    data = cli("symbols", "--json").json()
    assert data["results"] == [] and "holds no file to index" in data["note"]
    assert "the index of project 'repo' holds no files" in cli("symbols").out


def test_file_deleted_while_indexing(cli, monkeypatch):
    copy_fixture("graph_python", cli.root)
    real = ctxkit._graph_parse_job

    def vanishing(job):
        if job[0] == "app/cache.py":
            os.unlink(job[1])
        return real(job)
    monkeypatch.setattr(ctxkit, "_graph_parse_job", vanishing)
    data = index(cli)
    assert data["files"]["indexed"] == 4
    assert data["skip_reasons"] == {"vanished": 1}
    assert db_rows(cli, "SELECT count(*) FROM files WHERE path = 'app/cache.py'") == [(0,)]


def test_untracked_and_gitignored_files(cli):
    write(cli.root, ".gitignore", "generated/\n")
    write(cli.root, "generated/gen.py", "def gen():\n    pass\n")
    write(cli.root, "tracked.py", "def t():\n    pass\n")
    git(cli.root, "add", "tracked.py")
    write(cli.root, "untracked.py", "def u():\n    pass\n")
    index(cli)
    paths = {r[0] for r in db_rows(cli, "SELECT path FROM files")}
    assert paths == {"tracked.py", "untracked.py"}


# --- definitions of the languages added later ----------------------------------------------------

DEFINITION_SAMPLES = {
    "c": ("lib.c", "struct point { int x; };\nstatic int add(int a, int b) { return a + b; }\n"
                   "int main(void) { return add(1, 2); }\n",
          {"lib.c:point": "struct", "lib.c:add": "function", "lib.c:main": "function"}),
    "cpp": ("lib.cpp", "namespace geo {\nclass Shape : public Base {\n public:\n"
                       "  double area() const { return 0; }\n};\n}\n"
                       "double geo::Shape::scale(double f) { return f; }\n",
            {"lib.cpp:geo.Shape": "class", "lib.cpp:geo.Shape.area": "method",
             "lib.cpp:geo.Shape.scale": "method"}),
    "csharp": ("Lib.cs", "namespace App {\npublic class Repo : Base {\n"
                         "  public int Count(string key) { return 0; }\n}\n"
                         "public interface IRepo {}\n}\n",
               # the namespace is the file's package (as Java's), not part of the name
               {"Lib.cs:Repo": "class", "Lib.cs:Repo.Count": "method",
                "Lib.cs:IRepo": "interface"}),
    "ruby": ("lib.rb", "module Shop\n  class Cart < Base\n    def total(tax = 0)\n"
                       "      1\n    end\n  end\nend\n",
             {"lib.rb:Shop": "class", "lib.rb:Shop.Cart": "class",
              "lib.rb:Shop.Cart.total": "method"}),
    "php": ("lib.php", "<?php\nclass Cart extends Base {\n  public function total($tax = 0) "
                       "{ return 1; }\n}\nfunction helper() {}\n",
            {"lib.php:Cart": "class", "lib.php:Cart.total": "method",
             "lib.php:helper": "function"}),
    "kotlin": ("Lib.kt", "class Cart(val id: Int) : Base() {\n  fun total(tax: Int): Int "
                         "{ return 1 }\n}\nfun helper() {}\n",
               {"Lib.kt:Cart": "class", "Lib.kt:Cart.total": "method",
                "Lib.kt:helper": "function"}),
    "swift": ("Lib.swift", "class Cart: Base {\n  func total(tax: Int) -> Int { return 1 }\n}\n"
                           "protocol Pricing {}\nfunc helper() {}\n",
              {"Lib.swift:Cart": "class", "Lib.swift:Cart.total": "method",
               "Lib.swift:Pricing": "interface", "Lib.swift:helper": "function"}),
}


@pytest.mark.parametrize("language", sorted(DEFINITION_SAMPLES))
def test_definitions_only_languages(cli, language):
    name, text, expected = DEFINITION_SAMPLES[language]
    write(cli.root, name, text)
    data = index(cli)
    assert data["languages"] == {language: 1}
    found = {r["id"]: r["kind"] for r in cli("symbols", "--json").json()["results"]}
    assert found == expected


# --- real processes --------------------------------------------------------------


def test_parallel_index_in_a_subprocess(cli):
    """Enough files for the worker pool; stdout holds exactly one JSON document."""
    for i in range(60):
        write(cli.root, f"pkg/mod{i}.py",
              f"from .mod{(i + 1) % 60} import f{(i + 1) % 60}\n\n\n"
              f"def f{i}():\n    return f{(i + 1) % 60}()\n")
    write(cli.root, "pkg/__init__.py", "")
    result = cli.sub("index", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["files"]["indexed"] == 61
    assert callers(cli, "f7") == {"pkg/mod6.py:f6"}
    again = cli.sub("index", "--json")
    assert json.loads(again.out)["files"]["unchanged"] == 61


def test_file_node_docstring_and_default_export(cli):
    copy_fixture("graph_python", cli.root)
    write(cli.root, "web/widget.js", "// Widgets for the page.\nclass Widget {}\n"
                                     "export default Widget;\n")
    write(cli.root, "web/page.js", "import W from './widget';\n\nfunction page() {\n"
                                   "  return new W();\n}\n")
    index(cli)
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    try:
        module = ctxkit.graph_resolve(db, env, "app/models.py")
        assert module.kind == "file" and module.docstring == "Data models."
        assert ctxkit.graph_resolve(db, env, "web/widget.js").docstring == \
            "Widgets for the page."
    finally:
        db.close()
    assert callees(cli, "page") == {"web/widget.js:Widget"}


def test_two_index_runs_at_once(cli):
    import subprocess
    for i in range(50):
        write(cli.root, f"pkg/m{i}.py", f"def f{i}():\n    return f{(i + 1) % 50}()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    procs = [subprocess.Popen([*CONSOLE_ARGV, "index", "--json"],
                              cwd=cli.root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert db_rows(cli, "SELECT count(*) FROM files") == [(50,)]
    assert db_rows(cli, "SELECT count(*) FROM nodes WHERE kind = 'function'") == [(50,)]
    assert callers(cli, "f3") == {"pkg/m2.py:f2"}
    assert db_rows(cli, "SELECT count(*) FROM edges e LEFT JOIN nodes n ON n.id = e.src_id "
                        "WHERE n.id IS NULL") == [(0,)]


def test_unchanged_run_imports_no_tree_sitter(cli):
    copy_fixture("graph_python", cli.root)
    assert cli.sub("index").code == 0
    again = cli.sub("index", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert again.code == 0 and json.loads(again.out)["files"]["unchanged"] == 5
    assert "import time:" in again.err and "tree_sitter" not in again.err


def test_guesses_skip_nested_functions_common_methods_and_the_caller(cli):
    write(cli.root, "a.py", "def outer():\n    def inner():\n        pass\n    return inner()\n\n\n"
                            "class Bar:\n    def update(self):\n        pass\n\n"
                            "    def refresh(self, other):\n        return other.refresh()\n\n\n"
                            "def use(func, data):\n    data.update()\n    return func()\n\n\n"
                            "def func():\n    pass\n")
    index(cli)
    assert callees(cli, "outer") == {"a.py:outer.inner"}
    assert callees(cli, "use") == {"data.update", "func"}
    assert callees(cli, "Bar.refresh") == {"other.refresh"}


def test_file_name_that_is_not_utf8(cli):
    write(cli.root, "good.py", "def g():\n    pass\n")
    (cli.root / "x").mkdir()
    with open(os.path.join(os.fsencode(cli.root / "x"), b"bad\xff.py"), "wb") as handle:
        handle.write(b"def b():\n    pass\n")
    data = index(cli)
    assert data["files"]["indexed"] == 1 and data["files"]["skipped"] == 1


def test_namespace_package_without_init(cli):
    write(cli.root, "ns/tools.py", "def helper():\n    return 1\n")
    write(cli.root, "ns/main.py", "from . import tools\nfrom .tools import helper as h\n\n\n"
                                  "def run():\n    tools.helper()\n    return h()\n")
    index(cli)
    results = cli("callees", "run", "--json").json()["results"]
    assert [(r["id"], r["call_line"]) for r in results] == [("ns/tools.py:helper", 6)]
    assert callers(cli, "helper") == {"ns/main.py:run"}


def test_value_returned_by_a_function_is_its_one_returned_expression_or_unknown(cli):
    """An undeclared result is what all the function's returns give (`return Store()`);
    one that cannot be read (`return source.build()` on an untyped source) is unknown,
    so the unique-name guess stands."""
    write(cli.root, "m.py", "class Store:\n    def persist_all(self):\n        pass\n\n"
                            "    def archive(self):\n        pass\n\n\n"
                            "def make():\n    return Store()\n\n\n"
                            "def derive(source):\n    return source.build()\n\n\n"
                            "def run():\n    store = make()\n    store.persist_all()\n"
                            "    text = str(1)\n    text.persist_all()\n"
                            "    other = derive(1)\n    return other.archive()\n")
    index(cli)
    results = cli("callees", "run", "--json").json()["results"]
    found = {(r["id"] or r["name"], r["confidence"], r["call_line"]) for r in results}
    assert ("m.py:Store.persist_all", ctxkit.CONF_TYPED, 19) in found  # make() gives a Store
    assert ("text.persist_all", 1.0, 21) in found  # str is outside the index: never guessed
    assert ("m.py:Store.archive", ctxkit.CONF_UNIQUE_ATTR, 23) in found  # unknown: guessed


def test_declared_return_types_type_the_receiver(cli):
    write(cli.root, "go.mod", "module example.com/app\n")
    write(cli.root, "store/store.go", "package store\n\ntype Store struct{}\n\n"
                                      "func New() (*Store, error) { return &Store{}, nil }\n\n"
                                      "func (s *Store) Flush() {}\n")
    write(cli.root, "other/other.go", "package other\n\ntype Other struct{}\n\n"
                                      "func (o *Other) Flush() {}\n")
    write(cli.root, "main.go", "package main\n\nimport \"example.com/app/store\"\n\n"
                               "func main() {\n\ts, _ := store.New()\n\ts.Flush()\n}\n")
    write(cli.root, "web/api.ts", "export class Api { send(): void {} }\n"
                                  "export class Mock { send(): void {} }\n"
                                  "export async function connect(): Promise<Api> "
                                  "{ return new Api(); }\n"
                                  "export function make(): Api { return new Api(); }\n")
    write(cli.root, "web/app.ts", "import { make } from './api';\n\n"
                                  "function run() {\n  const api = make();\n  api.send();\n}\n")
    write(cli.root, "py/models.py", "class Repo:\n    def flush(self):\n        pass\n\n\n"
                                    "class Other:\n    def flush(self):\n        pass\n\n\n"
                                    "def open_repo() -> Repo:\n    return Repo()\n\n\n"
                                    "def main():\n    repo = open_repo()\n    repo.flush()\n")
    index(cli)
    assert callees(cli, "main.go:main") == {"store/store.go:New", "store/store.go:Store.Flush"}
    assert callees(cli, "run") == {"web/api.ts:make", "web/api.ts:Api.send"}
    assert callees(cli, "py/models.py:main") == {"py/models.py:open_repo",
                                                 "py/models.py:Repo.flush"}


def test_recursive_function_is_its_own_caller(cli):
    write(cli.root, "r.py", "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n\n\n"
                            "def main():\n    return fact(5)\n")
    index(cli)
    assert callers(cli, "fact") == {"r.py:fact", "r.py:main"}
    assert callers(cli, "fact", "--depth", "3") == {"r.py:fact", "r.py:main"}
    assert callees(cli, "fact") == {"r.py:fact"}
    assert cli("impact", "fact", "--json").json()["direct"] == ["r.py:main"]


def test_commonjs_exported_function_assignments(cli):
    write(cli.root, "lib/m.js", "exports.helper = function (a) {\n  return a;\n};\n"
                                "module.exports.run = (x) => exports.helper(x);\n")
    write(cli.root, "lib/app.js", "const m = require('./m');\n\nfunction main() {\n"
                                  "  return m.helper(1) + m.run(2);\n}\n")
    index(cli)
    assert callees(cli, "main") == {"lib/m.js:helper", "lib/m.js:run"}
    assert node(cli, "lib/m.js:helper").exported
    assert node(cli, "lib/m.js:run").params == ({"name": "x", "type": None, "default": None},)


def test_removed_reexport_unlinks_callers_in_unchanged_files(cli):
    write(cli.root, "pkg/__init__.py", "from .impl import work\n")
    write(cli.root, "pkg/impl.py", "def work():\n    return 1\n")
    write(cli.root, "main.py", "import pkg\n\n\ndef main():\n    return pkg.work()\n")
    index(cli)
    assert callees(cli, "main") == {"pkg/impl.py:work"}
    init = write(cli.root, "pkg/__init__.py", "# nothing re-exported any more\n")
    bump(init)
    index(cli)
    assert callees(cli, "main") == {"pkg.work"}


def test_mixin_self_call_links_the_one_subclass_that_defines_it(cli):
    write(cli.root, "m.py",
          "class RedirectMixin:\n    def follow(self):\n        return self.send()\n\n"
          "    def other(self):\n        return self.render()\n\n\n"
          "class Session(RedirectMixin):\n    def send(self):\n        pass\n\n\n"
          "class A(RedirectMixin):\n    def render(self):\n        pass\n\n\n"
          "class B(RedirectMixin):\n    def render(self):\n        pass\n")
    index(cli)
    results = cli("callees", "RedirectMixin.follow", "--json").json()["results"]
    assert [(r["id"], r["confidence"]) for r in results] == [("m.py:Session.send",
                                                               ctxkit.CONF_UNIQUE)]
    assert callees(cli, "RedirectMixin.other") == {"self.render"}  # two candidates: none


def test_exclude_matches_files_at_the_root(cli):
    write(cli.root, "setup.py", "def setup_all():\n    return 1\n")
    write(cli.root, "pkg/mod.py", "def helper():\n    return 2\n")
    write(cli.root, "tool.js", "function run() { return 3; }\n")
    data = index(cli, "--exclude", "setup.py", "--exclude", "*.js")
    assert data["files"]["indexed"] == 1
    paths = {row[0] for row in db_rows(cli, "SELECT path FROM files")}
    assert paths == {"pkg/mod.py"}


def test_an_index_that_kept_no_file_says_so_and_why_not_run_index(cli):
    (cli.root / "NOTES.txt").write_text("no code here\n")
    assert cli.sub("index").code == 0
    for argv in (["symbols"], ["callers", "main"]):
        result = cli.sub(*argv)
        text = result.out + result.err
        assert f"the index of project {cli.root.name!r} holds no files" in text, text
        assert "no file under" in text and ".txt 1" in text and "run `ctxkit index`" not in text
    assert "holds no files" in cli.sub("symbols", "--json").json()["note"]
    (cli.root / "app.py").write_text("def main():\n    return 1\n")
    assert cli.sub("index", "--max-file-mib", "0.00001").code == 0        # skipped: too big
    text = cli.sub("symbols").out
    assert "skipped every source file" in text and "app.py" in text, text
    other = cli.sub("-p", "elsewhere", "symbols").out
    assert other.startswith("the index of project 'elsewhere' holds no files"), other
    assert cli.sub("index").code == 0
    other = cli.sub("-p", "elsewhere", "callers", "main")
    assert other.code == 1 and f"holds the index of {cli.root.name!r}: pass -p NAME" in other.err


def test_symbols_cut_by_limit_says_how_many_it_left_out(cli):
    (cli.root / "m.py").write_text("".join(f"def f{i}():\n    return {i}\n\n" for i in range(5)))
    assert cli.sub("index").code == 0
    lines = cli.sub("symbols", "--limit", "2").out.splitlines()
    assert lines == ["m.py:f0 (function)", "m.py:f1 (function)",
                     "... and 3 more: narrow with PATTERN, --file or --kind, or pass --limit 5"]
    assert cli.sub("symbols", "--limit", "2", "--json").json()["omitted"] == 3
    assert "omitted" not in cli.sub("symbols", "--json").json()


def test_a_stub_beside_its_module_is_the_same_symbol_not_a_second_one(cli):
    """more.pyi declares what more.py defines (typed packages ship both); lib.d.ts what
    lib.js does. A bare name means the definition, for reads and for lessons alike."""
    (cli.root / "more.py").write_text("def chunked(xs, n):\n    return [xs]\n\n"
                                      "def use():\n    return chunked([1], 1)\n")
    (cli.root / "more.pyi").write_text("def chunked(xs: list, n: int) -> list: ...\n")
    (cli.root / "lib.js").write_text("export class Box { open() { return 1; } }\n")
    (cli.root / "lib.d.ts").write_text("export class Box { open(): number; }\n")
    (cli.root / "esm.mjs").write_text("export class Crate { close() { return 1; } }\n")
    (cli.root / "esm.d.mts").write_text("export class Crate { close(): number; }\n")
    (cli.root / "attr").mkdir()                       # a package's stub of what it re-exports
    (cli.root / "attr" / "__init__.pyi").write_text("def evolve(inst: object) -> object: ...\n")
    (cli.root / "attr" / "_funcs.py").write_text("def evolve(inst):\n    return inst\n")
    (cli.root / "other.pyi").write_text("def evolve(inst: object) -> object: ...\n")
    assert cli.sub("index").code == 0
    found = cli.sub("callers", "chunked", "--json")
    assert found.code == 0, found.err
    assert found.json()["target"] == "more.py:chunked"
    assert cli.sub("context", "Box", "--json").json()["target"] == "lib.js:Box"
    assert cli.sub("context", "Crate", "--json").json()["target"] == "esm.mjs:Crate"
    assert "recorded fail #1 for more.py:chunked" in cli.sub("fail", "chunked", "n=0 loops").out
    assert cli.sub("callers", "more.pyi:chunked").code == 0                # still reachable
    assert cli.sub("callers", "use", "--json").json()["target"] == "more.py:use"
    assert cli.sub("callers", "evolve", "--file", "attr/_funcs.py").code == 0
    many = cli.sub("callers", "evolve")          # other.pyi declares no module below its folder
    assert many.code == 1 and "attr/__init__.pyi" not in many.err and "other.pyi" in many.err


def test_raising_a_builtin_exception_is_a_call_outside_the_index_not_unresolved(cli):
    (cli.root / "m.py").write_text(
        "class TimeoutError(Exception):\n    pass\n\n"
        "def check(n):\n    if n < 0:\n        raise ValueError('negative')\n"
        "    raise TimeoutError()\n")
    assert cli.sub("index").code == 0
    found = {r["name"]: r for r in cli.sub("callees", "check", "--json").json()["results"]}
    assert found["ValueError"]["id"] is None and found["ValueError"]["confidence"] == 1.0
    assert found["TimeoutError"]["id"] == "m.py:TimeoutError"       # the module's own class
    assert "ValueError  (outside the index" in cli.sub("callees", "check").out


def test_an_index_made_by_another_ctxkit_is_parsed_again(cli, tmp_path):
    # What a file's index holds is what the code that indexed it made of it: after an
    # upgrade, `index` parses every file again, not only the ones whose bytes changed.
    import subprocess
    import sys
    other = tmp_path / "older" / "ctxkit.py"
    other.parent.mkdir()
    other.write_text(Path(ctxkit.__file__).read_text(encoding="utf-8") + "\n# another version\n",
                     encoding="utf-8")
    copy_fixture("graph_python", cli.root)
    made = subprocess.run([sys.executable, str(other), "--json", "index"], cwd=cli.root,
                          capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    files = json.loads(made.stdout)["files"]["indexed"]
    conn = sqlite3.connect(cli.db)
    edges = conn.execute("SELECT count(*) FROM edges WHERE kind = 'calls'").fetchone()[0]
    with conn:   # what the older version made of the same bytes: no calls at all
        conn.execute("DELETE FROM edges WHERE kind = 'calls'")
    upgraded = cli("--json", "index").json()["files"]
    assert (upgraded["indexed"], upgraded["unchanged"]) == (files, 0)
    assert conn.execute("SELECT count(*) FROM edges WHERE kind = 'calls'").fetchone()[0] \
        == edges > 0
    conn.close()
    again = cli("--json", "index").json()["files"]
    assert (again["indexed"], again["unchanged"]) == (0, files)


def test_no_callers_hint_names_the_overridden_base_method_and_only_real_guesses(cli):
    # httpx's shape: the client calls transport.handle_request() on a BaseTransport, so
    # the subclasses' overrides have no edge of their own; "no callers" alone reads as
    # "safe to change". The hint names the base method; guesses only when there are.
    (cli.root / "base.py").write_text(
        "class Transport:\n    def send(self, r):\n        raise NotImplementedError\n")
    (cli.root / "http.py").write_text(
        "from base import Transport\n\n\nclass HTTP(Transport):\n"
        "    def send(self, r):\n        return r\n\n    def unused(self):\n        return 1\n")
    (cli.root / "client.py").write_text(
        "from base import Transport\n\n\ndef go(t: Transport):\n    return t.send(1)\n")
    assert cli.sub("index").code == 0
    out = cli.sub("callers", "http.py:HTTP.send", "--min-confidence", "0")
    assert out.code == 0, out.err
    assert "overrides base.py:Transport.send" in out.out
    assert "ctxkit callers base.py:Transport.send" in out.out
    assert "lower --min-confidence" not in out.out and "below --min-confidence" not in out.out
    # impact counts that call (test_impact_of_an_override_counts_calls_through_its_bases)
    assert "client.py:go  client.py:5  through base.py:Transport.send" in \
        cli.sub("impact", "http.py:HTTP.send").out
    hint = cli.sub("callers", "http.py:HTTP.send", "--json").json()["hint"]
    assert "base.py:Transport.send" in hint
    unused = cli.sub("callers", "http.py:HTTP.unused")
    assert unused.out.strip() == ("no callers of http.py:HTTP.unused in the index "
                                  "(the symbol is known)")


def test_impact_of_an_override_counts_calls_through_its_bases(cli):
    # A call through the base's type (a parameter typed Base, an interface, self in the
    # base) may run the override by dynamic dispatch: impact and risk count it, marked
    # with the base method, at every level of the closure; `callers` stays type-exact.
    # A call naming the class (super(), Base.run(self)) or a constructor never dispatches.
    (cli.root / "shapes.py").write_text(
        "class Base:\n    def __init__(self):\n        pass\n\n"
        "    def run(self):\n        return 0\n\n"
        "    def twice(self):\n        return self.run() * 2\n\n\n"
        "class Sub(Base):\n    def __init__(self):\n        super().__init__()\n\n"
        "    def run(self):\n        return 1\n\n\n"
        "class Other(Base):\n    def run(self):\n"
        "        return super().run() + Base.run(self)\n\n\n"
        "def go(b: Base):\n    return b.run()\n\n\n"
        "def top(b: Base):\n    return go(b) + b.twice()\n\n\n"
        "def exact(s: Sub):\n    return s.run()\n\n\n"
        "def build():\n    return Base()\n")
    (cli.root / "Jobs.java").write_text(
        "interface Job { int work(); }\n"
        "class Nightly implements Job { public int work() { return 1; } }\n"
        "class Runner { int start(Job j) { return j.work(); } }\n")
    (cli.root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (cli.root / "sink.go").write_text(
        "package main\n\ntype Sink interface {\n\tPut() int\n}\n\n"
        "type Pair interface {\n\tPut() int\n\tTake() int\n}\n\n"
        "type File struct{}\n\nfunc (f File) Put() int { return 1 }\n\n"
        "func Save(s Sink) int { return s.Put() }\n\nfunc Swap(p Pair) int { return p.Put() }\n")
    assert cli.sub("index").code == 0
    sub = cli.sub("impact", "shapes.py:Sub.run", "--json").json()
    through = {r["id"]: (r["depth"], r.get("through")) for r in sub["results"]}
    assert through == {"shapes.py:exact": (1, None),
                       "shapes.py:go": (1, "shapes.py:Base.run"),
                       "shapes.py:Base.twice": (1, "shapes.py:Base.run"),
                       "shapes.py:top": (2, None)}
    assert sub["closure"] == {"direct": 3, "indirect": 1, "through_base": 2}
    assert sub["risk_score"] == 3.5
    text = cli.sub("impact", "shapes.py:Sub.run").out
    assert "(2 through a base method it overrides)" in text
    assert "shapes.py:go  shapes.py:26  through shapes.py:Base.run" in text
    # Other.run's super().run() and Base.run(self) run Base.run, never Sub.run or Other.run
    other = cli.sub("impact", "shapes.py:Other.run", "--json").json()
    assert "shapes.py:Other.run" not in other["direct"]
    # Base() builds a Base: Sub.__init__ is run by Sub() only
    assert cli.sub("impact", "shapes.py:Sub.__init__", "--json").json()["results"] == []
    context = cli.sub("context", "shapes.py:Sub.run", "--purpose", "impact", "--json").json()
    assert context["impact"]["risk_score"] == sub["risk_score"]
    callers = cli.sub("callers", "shapes.py:Sub.run", "--json").json()
    assert [r["id"] for r in callers["results"]] == ["shapes.py:exact"]
    assert "shapes.py:Base.run, whose 2 callers" in callers["hint"]
    job = cli.sub("impact", "Jobs.java:Nightly.work", "--json").json()
    assert [(r["id"], r.get("through")) for r in job["results"]] == [
        ("Jobs.java:Runner.start", "Jobs.java:Job.work")]
    # Go: File has Sink's methods, so it implements Sink; not Pair, which wants Take too
    put = cli.sub("impact", "sink.go:File.Put", "--json").json()
    assert [(r["id"], r.get("through")) for r in put["results"]] == [
        ("sink.go:Save", "sink.go:Sink.Put")]


def test_re_resolving_a_class_call_keeps_one_constructor_row(cli):
    """An edit of u.py (which imports Box) re-resolves a.py's ``Box(...)``: its
    ``Box.__init__`` row is updated with it, not added again at every run (found by a
    new user: each edit of requests' utils.py added 38 rows a full index lacks)."""
    write(cli.root, "s.py", "class Box:\n    def __init__(self, v):\n        self.v = v\n")
    write(cli.root, "u.py", "from s import Box\n\n\ndef helper():\n    return 1\n")
    write(cli.root, "a.py", "from s import Box\nfrom u import helper\n\n\n"
                            "def make():\n    return Box(helper())\n")
    first = index(cli)["edges"]
    for n in range(3):
        with open(cli.root / "u.py", "a", encoding="utf-8") as handle:
            handle.write(f"# edit {n}\n")
        assert index(cli)["edges"] == first
    assert index(cli, "--full")["edges"] == first
    rows = sqlite3.connect(cli.root / ".ctxkit" / "ctxkit.db").execute(
        "SELECT count(*) FROM edges WHERE callee = '__init__'").fetchone()[0]
    assert rows == 1
    assert callers(cli, "s.py:Box.__init__") == {"a.py:make"}


def test_a_bare_name_lists_a_function_and_a_method_of_that_name(cli):
    """Found by a new user: `callers prepare_url` answered for a test helper
    ``prepare_url`` (its qualname is the bare name) and never named the method
    ``PreparedRequest.prepare_url``; a bare name is every definition of the name."""
    write(cli.root, "models.py", "class PreparedRequest:\n    def prepare_url(self, url):\n"
                                 "        return url\n\n\ndef make(r: PreparedRequest):\n"
                                 "    return r.prepare_url('x')\n")
    write(cli.root, "tests/conftest.py", "def prepare_url(value):\n    return value\n")
    index(cli)
    result = cli("callers", "prepare_url")
    assert result.code == 1
    assert "models.py:PreparedRequest.prepare_url" in result.err
    assert "tests/conftest.py:prepare_url" in result.err
    picked = cli("callers", "prepare_url", "--first", "--json").json()
    assert picked["target"] == "models.py:PreparedRequest.prepare_url"  # not a test's
    qualified = cli("callers", "PreparedRequest.prepare_url", "--json").json()
    assert {r["id"] for r in qualified["results"]} == {"models.py:make"}
