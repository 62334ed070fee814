"""One symbol, one risk: every surface reads the same lessons through one identity rule.

A lesson names a symbol however the user typed it (qualname, bare name, graph id,
with or without --file). When that name resolves in the graph to exactly one
symbol it is that symbol; otherwise it stays as written (file "" without --file)
and is a symbol of its own, counted the same way everywhere.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from hookkit import hook, make_project, payload, seed_graph
from test_cli_errors import read_only_folder  # noqa: F401 - a fixture


@pytest.fixture
def project(cli, root, monkeypatch):
    make_project(root)
    seed_graph(cli, root)
    monkeypatch.setenv("HOME", str(root / "home"))
    return root


def record(cli, *args):
    result = cli(*args)
    assert result.code == 0, result.err
    return result


def every_surface(cli, project, symbol="AuthService.validate", path="src/auth.py", line=9):
    """The risk of one symbol as each command and hook reports it."""
    seen = {}
    for spelling in (symbol, symbol.rsplit(".", 1)[-1], f"{path}:{symbol}"):
        seen[f"query {spelling}"] = [o["risk_score"] for o in
                                     cli("query", spelling, "--json").json()["symbols"]]
    seen["query --file"] = [o["risk_score"] for o in cli(
        "query", symbol, "--file", path, "--json").json()["symbols"]]
    seen["query --top"] = [o["risk_score"] for o in cli("query", "--json").json()["symbols"]]
    stats = cli("stats", "--json").json()
    seen["stats"] = [o["risk_score"] for o in stats["riskiest"]]
    seen["stats SYMBOL"] = [o["risk_score"] for o in cli("stats", symbol, "--json")
                            .json()["riskiest"]]
    seen["risk --symbol"] = [cli("risk", path, "--symbol", symbol, "--json").json()["risk_score"]]
    seen["risk --line"] = [cli("risk", path, "--line", str(line), "--json").json()["risk_score"]]
    seen["impact"] = [cli("impact", symbol, "--json").json()["lesson_risk"]]
    text = cli("context", symbol, "--json").json()["context"]
    seen["context"] = [float(x) for x in re.findall(r"- risk: ([\d.]+) \(", text)]
    text = cli("context", symbol, "--purpose", "existence").out
    seen["context L0"] = [float(x) for x in re.findall(r"· risk ([\d.]+) ", text)]
    inject = cli("query", symbol, "--inject").out
    seen["inject"] = [float(x) for x in re.findall(r"\(risk: ([\d.]+),", inject)]
    answer = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project))
    context = json.loads(answer.out)["hookSpecificOutput"]["additionalContext"]
    seen["hook"] = [float(x) for x in re.findall(r"\(risk: ([\d.]+),", context)]
    return seen, stats


def test_the_same_symbol_through_every_surface_gives_the_same_number(cli, project):
    # The report: the same lessons recorded with --file, and again without it.
    for n in range(2):
        record(cli, "fail", "AuthService.validate", f"with file {n}", "--file", "src/auth.py")
        record(cli, "fail", "AuthService.validate", f"without file {n}")
    seen, stats = every_surface(cli, project)
    assert stats["symbols"] == 1 and stats["lessons"] == 4
    assert all(values == [11.5] for values in seen.values()), seen


def test_a_lesson_recorded_before_the_index_binds_once_the_graph_knows_it(cli, root,
                                                                           monkeypatch):
    make_project(root)
    monkeypatch.setenv("HOME", str(root / "home"))
    for n in range(3):
        record(cli, "fail", "validate", f"before the index {n}")      # no graph yet
    record(cli, "fail", "AuthService.validate", "before the index, qualified")
    seed_graph(cli, root)
    seen, stats = every_surface(cli, root)
    assert stats["symbols"] == 1 and stats["lessons"] == 4
    assert all(values == [11.5] for values in seen.values()), seen
    obj = cli("query", "validate", "--json").json()["symbols"][0]
    assert (obj["file"], obj["name"]) == ("src/auth.py", "AuthService.validate")


def test_an_ambiguous_name_stays_file_less_and_is_counted_alike(cli, project):
    (project / "src" / "forms.py").write_text(
        "class Form:\n    def validate(self):\n        return True\n")
    assert cli("index").code == 0
    for n in range(4):
        record(cli, "fail", "validate", f"which one? {n}")             # two symbols named so
    obj = cli("query", "validate", "--json").json()["symbols"]
    assert [(o["file"], o["name"], o["risk_score"]) for o in obj] == [("", "validate", 11.5)]
    stats = cli("stats", "--json").json()
    assert [(o["file"], o["risk_score"]) for o in stats["riskiest"]] == [("", 11.5)]
    assert "(risk: 11.5, high)" in cli("query", "validate", "--inject").out
    # Not a lesson of either graph symbol: no surface that reads a symbol counts it.
    assert cli("risk", "src/auth.py", "--symbol", "AuthService.validate", "--json").json()[
        "risk_score"] == 0
    assert cli("impact", "AuthService.validate", "--json").json()["lesson_risk"] == 0
    assert "risk:" not in cli("context", "src/auth.py:AuthService.validate").out
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project))
    assert (result.code, result.out) == (0, "")


def test_a_lesson_no_edit_hook_will_show_says_so_and_names_the_symbol(cli, project):
    # a --file that is not the symbol's: the lesson lands beside the symbol, not on it
    (project / "src" / "forms.py").write_text("def parse(x):\n    return x\n")
    assert cli("index").code == 0
    wrong = record(cli, "fail", "AuthService.validate", "x", "--file", "src/forms.py")
    assert "does not name exactly one indexed symbol" in wrong.err
    assert "src/auth.py:AuthService.validate" in wrong.err     # where it would belong
    assert "no edit hook will show it" in wrong.err
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project))
    assert "PAST EXPERIENCE" not in result.out                 # what the note warns of
    assert "not in the index" not in wrong.err
    unknown = record(cli, "fail", "NoSuchThing.run", "y")
    assert "joins its symbol once `ctxkit index` knows it" in unknown.err
    bound = record(cli, "fail", "AuthService.validate", "z", "--file", "src/auth.py")
    assert bound.err == ""
    assert record(cli, "-q", "fail", "NoSuchThing.run", "w").err == ""


def test_fail_and_ok_report_the_bound_symbol(cli, project):
    first = cli("fail", "validate", "x", "--json").json()["symbol"]
    assert (first["file"], first["name"]) == ("src/auth.py", "AuthService.validate")
    second = cli("ok", "AuthService.validate", "y", "--file", "./src/auth.py", "--json").json()
    assert second["symbol"]["fail_count"] == 1 and second["symbol"]["success_count"] == 1
    resolved = cli("resolve", str(first["lessons"][0]["id"]), "--json").json()["symbol"]
    assert (resolved["file"], resolved["name"]) == ("src/auth.py", "AuthService.validate")
    assert resolved["fail_count"] == 0 and resolved["success_count"] == 1


# --- a lesson recorded right after an edit is not stale -----------------------------------


def edit_validate(project, old, new):
    auth = project / "src" / "auth.py"
    auth.write_text(auth.read_text().replace(old, new))


@pytest.mark.parametrize("spelling", [("AuthService.validate", "--file", "src/auth.py"),
                                      ("validate",), ("src/auth.py:AuthService.validate",)])
def test_a_lesson_recorded_right_after_an_edit_is_not_stale(cli, project, spelling):
    # The loop: edit, the test fails, record what was learned.
    edit_validate(project, "return record is not None", "return record")
    record(cli, "fail", *spelling[:1], "returning the record breaks callers", *spelling[1:])
    assert "stale" not in cli("context", "AuthService.validate").out
    assert cli("query", "validate", "--json").json()["symbols"][0]["lessons"][0]["stale"] is False
    assert cli("stats", "--json").json()["stale"] == 0
    # Only a change made after the lesson turns it stale.
    edit_validate(project, "return record", "return bool(record)")
    assert "(stale: code changed since)" in cli("context", "AuthService.validate").out
    assert cli("query", "validate", "--json").json()["symbols"][0]["lessons"][0]["stale"] is True


def test_recording_without_a_graph_indexes_nothing(cli, root):
    (root / "m.py").write_text("def hello():\n    return 1\n")
    record(cli, "fail", "hello", "x", "--file", "m.py")
    conn = sqlite3.connect(cli.db)
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0
    assert conn.execute("SELECT code_hash FROM lessons").fetchone()[0] is None


# --- one staleness rule: the lesson's hash against the code on disk now --------------------


def stale_everywhere(cli, project):
    """Whether each surface says AuthService.validate's lessons are stale, read without
    re-indexing first: the in-process CLI, and the console script (the fast path)."""
    said = {}
    said["query"] = sum(les["stale"] for les in cli("query", "validate", "--json")
                        .json()["symbols"][0]["lessons"])
    said["query text"] = "stale: code changed since" in cli("query", "validate").out
    for how, run in (("", cli), (" (console script)", cli.sub)):
        said["query --inject" + how] = "(stale: code changed since)" in run(
            "query", "AuthService.validate", "--inject").out
        answer = run("hook", "pre-tool-use", stdin=payload("claude_pre_tool_use_edit", project))
        said["edit hook" + how] = "(stale: code changed since)" in json.loads(answer.out)[
            "hookSpecificOutput"]["additionalContext"]
    said["stats"] = cli("stats", "--json").json()["stale"]
    said["stats text"] = " 4 stale)" in cli("stats").out
    risk = cli("risk", "src/auth.py", "--symbol", "AuthService.validate", "--json").json()
    said["risk"] = risk["symbols"][0]["stale_lessons"]
    said["risk --line"] = cli("risk", "src/auth.py", "--line", "9", "--json").json()[
        "symbols"][0]["stale_lessons"]
    said["impact"] = cli("impact", "AuthService.validate", "--json").json()["stale_lessons"]
    assert cli("snapshot", "save", "-q").code == 0
    snapshot = (project / ".context-snapshot.md").read_text()
    said["snapshot"] = "lesson 3 (stale: code changed since)" in snapshot
    said["context"] = "(stale: code changed since)" in cli("context",
                                                           "AuthService.validate").out
    return said


def test_every_surface_says_stale_once_the_code_changes_on_disk(cli, project):
    for n in range(4):
        record(cli, "fail", "AuthService.validate", f"lesson {n}", "--file", "src/auth.py")
    assert not any(stale_everywhere(cli, project).values())
    # Another function of the same file changes: these lessons are not about it.
    edit_validate(project, "record.renew()", "record.renew(force=True)")
    assert not any(stale_everywhere(cli, project).values())
    # The symbol itself changes, and nothing re-indexes before the reads.
    edit_validate(project, "return record is not None", "return record")
    said = stale_everywhere(cli, project)
    assert set(said.values()) == {True, 4}, said
    assert said["query"] == said["stats"] == said["risk"] == said["impact"] == 4
    # Edited back to what it was when the lessons were recorded: not stale again.
    edit_validate(project, "return record and", "return record is not None and")
    assert not any(stale_everywhere(cli, project).values())


def test_a_symbol_gone_from_disk_makes_its_lessons_stale(cli, project):
    record(cli, "fail", "AuthService.refresh", "renew twice", "--file", "src/auth.py")
    edit_validate(project, "def refresh(self, token)", "def renew(self, token)")
    lesson = cli("query", "AuthService.refresh", "--json").json()["symbols"][0]["lessons"][0]
    assert lesson["stale"] is True
    (project / "src" / "auth.py").unlink()
    lesson = cli("query", "AuthService.refresh", "--json").json()["symbols"][0]["lessons"][0]
    assert lesson["stale"] is True


def test_stats_risk_and_impact_count_the_same_stale_lessons(cli, root):
    """A resolved and an inactive lesson do not count toward the risk, nor as stale
    lessons to check again: stats, risk and impact give the same count, stale or
    stale unknown (a Python that cannot parse the changed file), through the CLI."""
    (root / "a.py").write_text("def parse(x):\n    return x\n")
    assert cli.sub("-q", "index").code == 0
    for kind, text in (("fail", "broke on None"), ("ok", "passes with a default"),
                       ("fail", "noise")):
        assert cli.sub("-q", kind, "parse", text, "--file", "a.py").code == 0
    assert cli.sub("-q", "resolve", "1").code == 0
    assert cli.sub("-q", "deactivate", "3").code == 0
    (root / "a.py").write_text("def parse(x):\n    return x or 0\n")

    def counts(run) -> dict[str, tuple]:
        stats = json.loads(run("--json", "stats"))
        risk = json.loads(run("--json", "risk", "a.py"))["symbols"][0]
        impact = json.loads(run("--json", "impact", "parse"))
        return {"stats": (stats["stale"], stats["stale_unknown"]),
                "risk": (risk["stale_lessons"], risk["stale_unknown_lessons"]),
                "impact": (impact["stale_lessons"], impact["stale_unknown_lessons"])}

    from test_cli_errors import _bare_python
    said = counts(lambda *args: _bare_python(cli, *args).stdout)   # before impact re-indexes
    assert set(said.values()) == {(0, 1)}, said
    said = counts(lambda *args: cli.sub(*args).out)
    assert set(said.values()) == {(1, 0)}, said
    assert [les["stale"] for les in cli.sub("--json", "query", "parse", "--all").json()[
        "symbols"][0]["lessons"]] == [True, True, True]   # all three are, one active


def test_a_lesson_after_an_edit_on_a_read_only_database_is_one_error(cli, root,
                                                                      read_only_folder):  # noqa: F811
    (root / "a.py").write_text("def f():\n    return 1\n")
    assert cli("index").code == 0
    read_only_folder()
    (root / "a.py").write_text("def f():\n    return 2\n")       # the re-index cannot be written
    result = cli("fail", "f", "returning 2 breaks callers")
    assert result.code == 1 and result.err.count("\n") == 1, result.err
    assert "read-only" in result.err and "without a code hash" not in result.err


# --- a Python that cannot parse the code says what it cannot know ---------------------------


def bare(cli, *args, stdin=None):
    """ctxkit run by a Python with only the standard library (-S: no tree-sitter)."""
    from test_cli_errors import _bare_python
    proc = _bare_python(cli, *args, stdin=stdin)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def stale_said_without_a_parser(cli, project):
    """What each surface says of AuthService.validate's lessons, run by a bare Python."""
    said = {}
    lessons = json.loads(bare(cli, "query", "validate", "--json").stdout)["symbols"][0]["lessons"]
    said["query"] = {les["stale"] for les in lessons}
    said["query text"] = bare(cli, "query", "validate").stdout
    said["inject"] = bare(cli, "query", "AuthService.validate", "--inject").stdout
    answer = bare(cli, "hook", "pre-tool-use", stdin=payload("claude_pre_tool_use_edit", project))
    said["hook"] = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
    stats = json.loads(bare(cli, "stats", "--json").stdout)
    said["stats"] = (stats["stale"], stats.get("stale_unknown"))
    risk = json.loads(bare(cli, "risk", "src/auth.py", "--line", "9", "--json").stdout)
    said["risk"] = (risk["symbols"][0]["stale_lessons"],
                    risk["symbols"][0].get("stale_unknown_lessons"))
    impact = json.loads(bare(cli, "impact", "AuthService.validate", "--json").stdout)
    said["impact"] = (impact["stale_lessons"], impact.get("stale_unknown_lessons"))
    said["err"] = bare(cli, "query", "validate").stderr
    return said


def test_a_python_without_tree_sitter_says_stale_unknown_never_the_index_answer(cli, project):
    for n in range(4):
        record(cli, "fail", "AuthService.validate", f"lesson {n}", "--file", "src/auth.py")
    # Unchanged since the index: the index is the answer, fresh, for any Python.
    said = stale_said_without_a_parser(cli, project)
    assert said["query"] == {False} and said["stats"][0] == said["impact"][0] == 0
    assert "stale" not in said["inject"] + said["hook"] + said["err"]
    # Edited after the lessons, not re-indexed: stale, though the index has the old code.
    edit_validate(project, "return record is not None", "return record")
    assert cli("query", "validate", "--json").json()["symbols"][0]["lessons"][0]["stale"] is True
    unknown = stale_said_without_a_parser(cli, project)
    # Re-indexed, then edited back to the lessons' code: fresh, though the index differs.
    assert cli("index").code == 0
    edit_validate(project, "return record and", "return record is not None and")
    assert cli("query", "validate", "--json").json()["symbols"][0]["lessons"][0]["stale"] is False
    for said in (unknown, stale_said_without_a_parser(cli, project)):
        assert said["query"] == {None}, said
        assert said["stats"] == (0, 4) and said["risk"] == (0, 4) and said["impact"] == (0, 4)
        assert "[stale unknown: its file changed since the index" in said["query text"]
        assert "stale: code changed since" not in said["query text"] + said["inject"]
        for text in (said["inject"], said["hook"]):
            assert text.count("(stale unknown: its file changed since the index") == 4, text
        assert "src/auth.py changed since it was indexed and cannot be parsed here" in said["err"]


def test_a_lesson_recorded_by_a_python_without_tree_sitter_keeps_its_symbol(cli, project):
    edit_validate(project, "return record is not None", "return record")
    proc = bare(cli, "fail", "AuthService.validate", "x", "--file", "src/auth.py", "--json")
    assert proc.returncode == 0 and "without a code hash" in proc.stderr
    assert "does not name exactly one indexed symbol" not in proc.stderr, proc.stderr
    symbol = json.loads(proc.stdout)["symbol"]
    assert (symbol["file"], symbol["name"]) == ("src/auth.py", "AuthService.validate")
    assert symbol["lessons"][0]["stale"] is False          # no hash kept: nothing to compare


def test_lines_of_a_file_no_one_can_parse_here_map_to_all_its_symbols_or_to_an_error(cli,
                                                                                     project):
    for n in range(4):
        record(cli, "fail", "AuthService.validate", f"lesson {n}", "--file", "src/auth.py")
    auth = project / "src" / "auth.py"
    auth.write_text("# one\n# two\n# three\n# four\n# five\n" + auth.read_text())
    # validate is at lines 13-17 now; the index still says 8-12, where refresh now starts
    assert cli("risk", "src/auth.py", "--line", "14", "--json").json()["symbols"][0][
        "name"] == "AuthService.validate"                          # the parser knows
    # A bare Python cannot tell where validate went: every symbol of the file may be
    # the one at a line, so the lessons are shown, never another symbol's or none.
    for line in ("9", "14"):
        risk = json.loads(bare(cli, "risk", "src/auth.py", "--line", line, "--json").stdout)
        assert [s["name"] for s in risk["symbols"]] == ["AuthService.validate"], risk
    answer = bare(cli, "hook", "pre-tool-use", stdin=payload("claude_pre_tool_use_edit", project))
    assert "[PAST EXPERIENCE" in json.loads(answer.stdout)["hookSpecificOutput"][
        "additionalContext"]
    # Naming one symbol by FILE:LINE is an error there, not a guess from the old lines.
    for argv in (["fail", "src/auth.py:9", "renew twice"], ["callers", "src/auth.py:14"]):
        proc = bare(cli, *argv)
        last = proc.stderr.splitlines()[-1]
        assert proc.returncode == 1 and last.startswith("ctxkit: error: src/auth.py changed "
                                                         "since it was indexed"), proc.stderr
        assert "which symbol line" in last and proc.stdout == ""
    assert cli("stats", "--json").json()["lessons"] == 4             # nothing was recorded


def test_a_bare_name_bound_to_a_function_names_the_methods_that_share_it(cli, project):
    """Found by a new user: `fail prepare_url` went on a test helper `prepare_url`
    without a word about the method PreparedRequest.prepare_url of the same name."""
    (project / "src" / "models.py").write_text(
        "class PreparedRequest:\n    def prepare_url(self, url):\n        return url\n")
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "conftest.py").write_text("def prepare_url(value):\n    return value\n")
    assert cli("index").code == 0
    result = record(cli, "fail", "prepare_url", "x")
    assert "recorded on tests/conftest.py:prepare_url" in result.err
    assert "src/models.py:PreparedRequest.prepare_url" in result.err
    alone = record(cli, "fail", "PreparedRequest.prepare_url", "y")
    assert "also has" not in alone.err
