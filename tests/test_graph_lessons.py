"""Lessons meet the graph: stale lessons after a body change, impact weighs lesson risk."""

from __future__ import annotations

import os



def bump(path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))


def lessons_of(cli, *args: str) -> list[dict]:
    result = cli("query", *args, "--json")
    assert result.code == 0, result.err
    return [lesson for obj in result.json()["symbols"] for lesson in obj["lessons"]]


def test_lesson_goes_stale_when_the_symbol_body_changes(cli):
    assert cli.index_fixture("graph_python").code == 0
    assert cli("fail", "Model.save", "json.dumps fails on sets",
               "--file", "app/models.py").code == 0
    assert cli("fail", "validate", "returns its input unchanged",
               "--file", "app/models.py").code == 0
    assert [item["stale"] for item in lessons_of(cli, "Model.save", "--file", "app/models.py")] \
        == [False]
    path = cli.root / "app/models.py"
    path.write_text(path.read_text().replace("return json.dumps(data)",
                                             "return json.dumps(sorted(data))"))
    bump(path)
    assert cli("index").code == 0
    assert [item["stale"] for item in lessons_of(cli, "Model.save", "--file", "app/models.py")] \
        == [True]
    # the other symbol of the same file did not change: its lesson stays fresh
    assert stale_of_validate(cli) \
        == [False]
    human = cli("query", "Model.save", "--file", "app/models.py")
    assert "stale" in human.out


def test_impact_risk_weighs_lessons_of_reached_symbols(cli):
    assert cli.index_fixture("graph_python").code == 0
    before = cli("impact", "app/models.py:User.rename", "--json").json()
    assert before["lesson_risk"] == 0 and before["risk_level"] == "low"
    # lessons on a caller reached by the closure raise the target's risk
    for text in ("forgot the cache", "double save", "wrong user", "race on rename"):
        assert cli("fail", "UserService.create", text, "--file", "app/service.py").code == 0
    after = cli("impact", "app/models.py:User.rename", "--json").json()
    assert after["lesson_risk"] > 0
    assert after["risk_score"] == round(before["risk_score"] + after["lesson_risk"], 1)
    assert after["risk_level"] != "low"
    assert after["direct"] == before["direct"]


def test_binding_many_symbols_at_once_binds_each_as_one_lookup_does(cli):
    """Every lesson symbol of a project is bound on each read: in a few queries for
    all of them, which must give what one lookup per symbol gives (ids, qualnames,
    bare names, names in several files, a file narrowing a name, unknown names)."""
    import ctxkit
    assert cli.index_fixture("graph_python").code == 0
    db = ctxkit.open_db(ctxkit.make_env(cwd=cli.root))
    try:
        rows = db.query("SELECT uid, qualname, name, path FROM nodes WHERE kind != 'file'")
        files = sorted({row["path"] for row in rows}) + ["", "app/missing.py"]
        names = sorted({row[column] for row in rows for column in ("uid", "qualname", "name")})
        pairs = [(name, file) for name in names + ["nowhere", "Model.nowhere"]
                 for file in files]
        project = cli.root.name
        many = ctxkit.graph_find_rows_many(db, project, pairs)
        one = {pair: ctxkit.graph_find_rows(db, project, *pair) for pair in pairs}
        assert {pair: [tuple(r) for r in found] for pair, found in many.items()} == \
            {pair: [tuple(r) for r in found] for pair, found in one.items() if found}
        assert any(len(found) > 1 for found in many.values())   # an ambiguous name is kept
        binder = ctxkit.SymbolBinder(db, project)
        binder.bind_all(pairs)
        assert [binder(*pair) for pair in pairs] == \
            [ctxkit.bind_symbol(db, project, *pair) for pair in pairs]
    finally:
        db.close()


def test_lesson_of_a_symbol_gone_from_the_code_is_stale_before_and_after_the_index(cli):
    # "stale once the symbol's code on disk differs from that hash: edited, or gone":
    # re-indexing without the symbol must not turn its lesson fresh again
    assert cli.index_fixture("graph_python").code == 0
    assert cli("fail", "validate", "returns its input unchanged",
               "--file", "app/models.py").code == 0
    assert cli("fail", "Model.save", "json.dumps fails on sets",
               "--file", "app/models.py").code == 0
    path = cli.root / "app/models.py"
    source = path.read_text()
    path.write_text(source[:source.index("def validate(")])
    bump(path)
    for step in ("before the index", "after it"):
        assert stale_of_validate(cli) == [True], step
        assert cli("stats", "--json").json()["stale"] == 1, step
        assert lessons_of(cli, "Model.save", "--file", "app/models.py")[0]["stale"] is False
        assert cli("index").code == 0
    saved = cli("snapshot", "save", "--json")
    assert saved.code == 0, saved.err
    assert "returns its input unchanged (stale: code changed since)" in \
        (cli.root / ".context-snapshot.md").read_text()
    # the code back as it was: the lesson is fresh again; a deleted file's lessons are stale
    path.write_text(source)
    bump(path)
    assert cli("index").code == 0
    assert stale_of_validate(cli) == [False]
    path.unlink()
    assert cli("index").code == 0
    assert stale_of_validate(cli) == [True]


def stale_of_validate(cli) -> list:
    return [item["stale"] for item in lessons_of(cli, "validate", "--file", "app/models.py")]


def test_risk_of_a_file_counts_the_lessons_of_a_symbol_gone_from_it(cli):
    # `query validate` still shows the lesson and its risk once validate is removed;
    # `risk FILE` must give that symbol the same number, not "no lessons, risk 0.0"
    assert cli.index_fixture("graph_python").code == 0
    assert cli("fail", "validate", "returns its input unchanged",
               "--file", "app/models.py").code == 0
    before = cli("risk", "app/models.py", "--json").json()
    path = cli.root / "app/models.py"
    source = path.read_text()
    path.write_text(source[:source.index("def validate(")])
    bump(path)
    assert cli("index").code == 0
    queried = cli("query", "validate", "--file", "app/models.py", "--json").json()
    after = cli("risk", "app/models.py", "--json").json()
    assert [s["name"] for s in after["symbols"]] == ["validate"]
    queried_risk = round(queried["symbols"][0]["risk_score"], 1)
    assert after["risk_score"] == before["risk_score"] == queried_risk
    assert after["symbols"][0]["stale_lessons"] == 1
    human = cli("risk", "app/models.py")
    assert "validate:" in human.out and "1 stale" in human.out, human.out
    # a line of the file maps to no removed symbol: the line's risk stays its own
    assert cli("risk", "app/models.py", "--line", "1", "--json").json()["symbols"] == []
