"""A line or an edit span maps to the symbol that is there now, on every surface.

A file edited since it was indexed has moved its definitions: the pre-edit
hook, `risk FILE --line N`, and FILE:LINE targets (context, callers) must read
the definitions' lines from the file as it is on disk, not from the index. The
fast path must stay free of the parser unless a changed file with lessons has
to be parsed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

TWO_FUNCTIONS = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    y = 2\n    return y\n"
HEADER = "".join(f"# c{i}\n" for i in range(1, 6))    # five lines pushed above both

FAST_ONLY = ("import sys\n"
             "sys.argv = ['ctxkit', *sys.argv[1:]]\n"
             "import ctxkit\n"
             "sys.stderr.write('\\nFELL_THROUGH\\n')\n")


def edit(root, path: str, old: str) -> str:
    return json.dumps({"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(root),
                       "tool_name": "Edit", "tool_input": {
                           "file_path": str(root / path), "old_string": old,
                           "new_string": old + "  # edited"}})


def fast_run(root, *args: str, stdin: str) -> tuple[bool, set[str], str]:
    """(fell through to the full CLI, modules imported, stdout) of the fast path alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", FAST_ONLY, *args],
                          cwd=root, env=env, input=stdin.encode(), capture_output=True,
                          timeout=120, check=False)
    err = proc.stderr.decode()
    modules = {line.split("|")[-1].strip().split(".")[0] for line in err.splitlines()
               if line.startswith("import time:")}
    return "\nFELL_THROUGH\n" in err, modules, proc.stdout.decode()


@pytest.fixture
def moved(cli, root):
    """m.py indexed with a() and b(), four fails on b (risk 11.5), then five lines
    inserted at the top: b is now lines 11-13, a lines 6-8."""
    (root / "m.py").write_text(TWO_FUNCTIONS)
    assert cli("-q", "index").code == 0
    for i in range(4):
        assert cli("-q", "fail", "b", f"b broke {i}").code == 0
    (root / "m.py").write_text(HEADER + TWO_FUNCTIONS)
    return root


def test_edit_hook_maps_the_edit_to_the_function_there_now(cli, moved):
    for run in (cli, cli.sub):   # in-process and the real script (its fast path first)
        out = run("hook", "pre-tool-use", stdin=edit(moved, "m.py", "    y = 2")).out
        assert "m.py:b (risk: 11.5, high)" in out and "b broke 3" in out
        assert run("hook", "pre-tool-use", stdin=edit(moved, "m.py", "    x = 1")).out == ""


def test_risk_line_names_the_function_there_now(cli, moved):
    data = cli("--json", "risk", "m.py", "--line", "12").json()
    assert [s["name"] for s in data["symbols"]] == ["b"] and data["risk_score"] == 11.5
    assert cli("--json", "risk", "m.py", "--line", "7").json()["symbols"] == []
    assert cli("--json", "risk", "m.py", "--line", "3").json()["symbols"] == []  # a comment


def test_file_line_targets_name_the_function_there_now(cli, moved):
    assert cli("--json", "callers", "m.py:12").json()["target"] == "m.py:b"
    assert cli("--json", "callees", "m.py:7").json()["target"] == "m.py:a"
    assert cli("--json", "context", "m.py:12", "--budget", "300").json()["target"] == "m.py:b"


def test_a_function_added_since_the_index_is_not_another_ones(cli, moved):
    # c() inserted above b: its lines were b's in the index; b's lessons are not c's.
    (moved / "m.py").write_text(TWO_FUNCTIONS.replace("def b", "def c():\n    z = 3\n\n\ndef b"))
    assert cli("hook", "pre-tool-use", stdin=edit(moved, "m.py", "    z = 3")).out == ""
    assert "b broke" in cli("hook", "pre-tool-use", stdin=edit(moved, "m.py", "    y = 2")).out
    assert cli("--json", "risk", "m.py", "--line", "7").json()["symbols"] == []


def test_the_fast_path_parses_only_a_changed_file_with_lessons(cli, moved):
    (moved / "n.py").write_text(TWO_FUNCTIONS.replace("def ", "def n_"))
    assert cli("-q", "index").code == 0               # indexes n.py; m.py as it is now
    # Unchanged since indexing: answered without a parser.
    fell, modules, out = fast_run(moved, "hook", "pre-tool-use",
                                  stdin=edit(moved, "m.py", "    y = 2"))
    assert not fell and "tree_sitter" not in modules and "b broke" in out
    # Changed, but no lessons in it: nothing to tell, and no parse to tell it.
    (moved / "n.py").write_text(HEADER + TWO_FUNCTIONS.replace("def ", "def n_"))
    fell, modules, out = fast_run(moved, "hook", "pre-tool-use",
                                  stdin=edit(moved, "n.py", "    y = 2"))
    assert not fell and "tree_sitter" not in modules and out == ""
    # Changed, with lessons: the full CLI parses it and names b.
    (moved / "m.py").write_text("# one more\n" + HEADER + TWO_FUNCTIONS)
    fell, _, out = fast_run(moved, "hook", "pre-tool-use",
                            stdin=edit(moved, "m.py", "    y = 2"))
    assert fell and out == ""
    out = cli.sub("hook", "pre-tool-use", stdin=edit(moved, "m.py", "    y = 2")).out
    assert "b broke" in out


@pytest.mark.parametrize("line", ["-5", "0"])
def test_risk_line_below_one_is_a_usage_error(cli, moved, line):
    result = cli("risk", "m.py", "--line", line)
    assert result.code == 2 and result.out == ""
    assert len(result.err.strip().splitlines()) == 1 and "--line must be at least 1" in result.err
    result = cli("--json", "risk", "m.py", f"--line={line}")
    assert result.code == 2 and "--line must be at least 1" in result.json()["error"]


DECORATED = '''class Command:
    name = "cmd"

    @property
    @functools.cache
    def meta(self):
        return {}

    def invoke(self):
        return self.meta


@click.command(
    name="run",
)
def run():
    pass
'''


@pytest.fixture
def decorated(cli, root):
    (root / "core.py").write_text(DECORATED)
    assert cli("-q", "index").code == 0
    for i in range(4):
        assert cli("-q", "fail", "Command.meta", f"meta broke {i}").code == 0
    return root


@pytest.mark.parametrize("line, target", [(4, "core.py:Command.meta"),
                                          (5, "core.py:Command.meta"),
                                          (13, "core.py:run"), (14, "core.py:run"),
                                          (2, "core.py:Command")])
def test_a_decorator_line_belongs_to_the_definition_it_decorates(cli, decorated, line, target):
    assert cli("--json", "context", f"core.py:{line}", "--budget", "300").json()["target"] == target
    assert cli("--json", "callers", f"core.py:{line}").json()["target"] == target
    names = [s["name"] for s in cli("--json", "risk", "core.py", "--line", str(line)).json()[
        "symbols"]]
    assert names == (["Command.meta"] if target.endswith("meta") else [])


def test_an_edit_of_a_decorator_gets_the_decorated_methods_lessons(cli, decorated):
    out = cli.sub("hook", "pre-tool-use", stdin=edit(decorated, "core.py", "    @property")).out
    assert "core.py:Command.meta (risk: 11.5, high)" in out
    assert cli.sub("hook", "pre-tool-use",
                   stdin=edit(decorated, "core.py", '    name = "cmd"')).out == ""


def test_a_rust_attribute_line_belongs_to_its_function(cli, root):
    (root / "lib.rs").write_text("mod m {\n    #[test]\n    #[ignore]\n    fn t() {\n"
                                 "        let a = 1;\n    }\n}\n")
    assert cli("-q", "index").code == 0
    for line in (2, 3, 4):
        assert cli("--json", "callers", f"lib.rs:{line}").json()["target"] == "lib.rs:m.t"


def test_a_database_indexed_before_decorator_spans_parses_every_file_again(cli, root):
    import sqlite3

    import ctxkit
    path = root / "core.py"
    path.write_text(DECORATED)
    data, info = path.read_bytes(), path.stat()
    cli.db.parent.mkdir(exist_ok=True)
    conn = sqlite3.connect(cli.db)
    for statement in ctxkit.split_sql(ctxkit.MIGRATIONS[0]):
        conn.execute(statement)
    # As version 1 indexed it: meta starting at its `def` line, below its decorators.
    conn.execute("INSERT INTO files (id, project, path, language, size, mtime_ns, sha1) "
                 "VALUES (1, ?, 'core.py', 'python', ?, ?, ?)",
                 (root.name, info.st_size, info.st_mtime_ns, ctxkit._hash_bytes(data)))
    conn.execute("INSERT INTO nodes (project, file_id, uid, kind, name, qualname, path, line, "
                 "end_line) VALUES (?, 1, 'core.py:Command.meta', 'method', 'meta', "
                 "'Command.meta', 'core.py', 6, 7)", (root.name,))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    assert cli("--json", "index").json()["files"]["indexed"] == 1
    assert cli("--json", "callers", "core.py:4").json()["target"] == "core.py:Command.meta"


def test_fail_and_ok_at_file_line_go_on_the_symbol_there(cli, moved):
    data = cli("--json", "fail", "m.py:12", "b again").json()   # b's line 12 as it is now
    assert (data["symbol"]["file"], data["symbol"]["name"]) == ("m.py", "b")
    assert data["symbol"]["fail_count"] == 5
    data = cli("--json", "ok", "./m.py:7", "a fine", "--file", "m.py").json()
    assert (data["symbol"]["file"], data["symbol"]["name"]) == ("m.py", "a")
    names = {(o["file"], o["name"]) for o in cli("--json", "query").json()["symbols"]}
    assert names == {("m.py", "a"), ("m.py", "b")}   # and no symbol named "12" or "7"
    assert cli("--json", "query", "a").json()["symbols"][0]["success_count"] == 1


@pytest.mark.parametrize("place, why", [("m.py:2", "outside every function and class"),
                                        ("gone.py:3", "not in the index")])
def test_fail_at_a_line_without_a_symbol_is_a_usage_error(cli, moved, place, why):
    before = cli("--json", "stats").json()["lessons"]
    result = cli("fail", place, "nothing here")
    assert result.code == 2 and why in result.err and len(result.err.strip().splitlines()) == 1
    assert cli("--json", "stats").json()["lessons"] == before
    assert "m.py:" not in cli("query").out.replace("m.py:b", "")    # no symbol named "2"


@pytest.fixture
def two_prepare_urls(cli, root):
    """A method PreparedRequest.prepare_url and a test helper prepare_url: the bare
    name is the helper's qualname, and the method's bare name."""
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "models.py").write_text(
        "class PreparedRequest:\n    def prepare_url(self, url):\n        self.url = url\n")
    (root / "tests" / "conftest.py").write_text("def prepare_url(value):\n    return value\n")
    assert cli("-q", "index").code == 0
    for i in range(3):
        assert cli("-q", "fail", "PreparedRequest.prepare_url", f"idna {i}").code == 0
    return root


def test_query_and_stats_of_a_bare_name_several_symbols_have_show_them_all(
        cli, two_prepare_urls):
    symbols = cli("--json", "query", "prepare_url").json()["symbols"]
    assert [(o["file"], o["name"], len(o["lessons"])) for o in symbols] == [
        ("src/models.py", "PreparedRequest.prepare_url", 3)]
    assert "idna 2" in cli("query", "prepare_url").out
    stats = cli("--json", "stats", "prepare_url").json()
    assert (stats["symbols"], stats["lessons"], stats["fail"]) == (1, 3, 3)
    # A lesson on the helper too: both symbols, each with its own lessons.
    assert cli("-q", "fail", "prepare_url", "helper lesson", "--file", "tests/conftest.py"
               ).code == 0
    symbols = cli("--json", "query", "prepare_url").json()["symbols"]
    assert sorted((o["file"], len(o["lessons"])) for o in symbols) == [
        ("src/models.py", 3), ("tests/conftest.py", 1)]
    assert cli("--json", "stats", "prepare_url").json()["lessons"] == 4
    # A name that picks one still gives that one alone.
    for name, file in (("prepare_url", "tests/conftest.py"),
                       ("PreparedRequest.prepare_url", None)):
        args = ("--file", file) if file else ()
        symbols = cli("--json", "query", name, *args).json()["symbols"]
        assert len(symbols) == 1 and symbols[0]["file"] == (file or "src/models.py")


def test_query_of_a_bare_name_shows_every_files_symbol_the_graph_has_one_of(cli, root):
    """The graph holds one parse (a.py); lessons also sit on parse in a file it does not
    parse (tools/Makefile) and in one removed since (gone.py). Without --file, query, query
    --inject (full CLI and fast path) and stats show all three, each labelled by its file
    with its own risk; --file or FILE:NAME shows one file's."""
    (root / "a.py").write_text("def parse(x):\n    return x\n")
    (root / "gone.py").write_text("def parse(y):\n    return y\n")
    (root / "tools").mkdir()
    (root / "tools/Makefile").write_text("parse:\n\techo parse\n")
    assert cli.sub("-q", "index").code == 0
    fails = {"a.py": 4, "tools/Makefile": 4, "gone.py": 1}   # risk 11.5, 11.5, 4.0
    for file, count in fails.items():
        for i in range(count):
            assert cli.sub("-q", "fail", "parse", f"{file} broke {i}", "--file", file).code == 0
    (root / "gone.py").unlink()
    assert cli.sub("-q", "index").code == 0
    symbols = cli.sub("--json", "query", "parse").json()["symbols"]
    assert [(o["file"], o["name"], o["fail_count"], o["risk_score"]) for o in symbols] == [
        ("a.py", "parse", 4, 11.5), ("tools/Makefile", "parse", 4, 11.5),
        ("gone.py", "parse", 1, 4.0)]
    text = cli.sub("query", "parse").out
    assert all(f"{file}:parse  risk" in text for file in fails)
    full = cli.sub("--json", "query", "parse", "--inject").json()["inject"]
    assert "a.py:parse (risk: 11.5" in full and "tools/Makefile:parse (risk: 11.5" in full
    assert "tools/Makefile broke 3" in full and "gone.py" not in full     # below risk 10
    fell, _, fast = fast_run(root, "query", "parse", "--inject", stdin="")
    assert not fell and fast == full
    assert cli.sub("--json", "stats", "parse").json()["symbols"] == 3
    for args in (("parse", "--file", "tools/Makefile"), ("tools/Makefile:parse",)):
        symbols = cli.sub("--json", "query", *args).json()["symbols"]
        assert [(o["file"], o["fail_count"]) for o in symbols] == [("tools/Makefile", 4)]
    for args in (("parse", "--file", "a.py"), ("a.py:parse",)):
        out = cli.sub("query", *args, "--inject").out
        assert out.startswith("[PAST EXPERIENCE — a.py:parse") and "Makefile" not in out


def test_query_inject_of_a_bare_name_several_symbols_have_on_the_fast_path(
        cli, two_prepare_urls):
    assert cli("-q", "fail", "PreparedRequest.prepare_url", "idna 3").code == 0   # 11.5
    full = cli("query", "prepare_url", "--inject").out
    assert "src/models.py:PreparedRequest.prepare_url (risk: 11.5, high)" in full
    fell, modules, out = fast_run(two_prepare_urls, "query", "prepare_url", "--inject",
                                  stdin="")
    assert not fell and "tree_sitter" not in modules and out == full
