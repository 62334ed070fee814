"""callers, callees and impact read the code as it is on disk, as context does.

A file changed since `ctxkit index` is indexed again before the answer (its lines
and calls were the old code's); where that cannot be done the index answers and
says so on stderr. A name the index does not know is looked up again after the
changed and new files are indexed.
"""

from __future__ import annotations

import json

import ctxkit

from test_cli_errors import _bare_python, read_only_folder  # noqa: F401 - a fixture

CODE = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return alpha(y) * 2\n"


def moved(cli, lines=3):
    """m.py indexed, then `lines` comment lines put at its top: beta calls alpha at 6+lines."""
    (cli.root / "m.py").write_text(CODE)
    assert cli("index", "-q").code == 0
    (cli.root / "m.py").write_text("# moved\n" * lines + CODE)


def test_callers_callees_and_impact_give_the_lines_of_the_code_on_disk(cli):
    moved(cli)
    callers = cli("callers", "alpha", "--json").json()["results"]
    assert [(r["id"], r["line"]) for r in callers] == [("m.py:beta", 9)]
    callees = cli("callees", "beta", "--json").json()["results"]
    assert [(r["id"], r["line"]) for r in callees] == [("m.py:alpha", 4)]
    impact = cli("impact", "alpha", "--json").json()["results"]
    assert [(r["id"], r["line"]) for r in impact] == [("m.py:beta", 9)]
    assert "m.py:9" in cli("callers", "alpha").out


def test_a_symbol_renamed_since_the_index_is_not_answered_from_the_old_code(cli):
    moved(cli, 0)
    (cli.root / "m.py").write_text(CODE.replace("alpha", "gamma"))
    result = cli("callers", "m.py:alpha")
    assert result.code == 1 and "m.py:alpha no longer exists" in result.err


def test_where_the_file_cannot_be_indexed_again_the_index_answers_and_says_so(
        cli, read_only_folder):  # noqa: F811
    moved(cli)
    proc = _bare_python(cli, "callers", "alpha", "--json")             # no tree-sitter
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"][0]["line"] == 6
    assert "answering from the index as it is, whose lines may be old" in proc.stderr
    read_only_folder()
    result = cli("callers", "alpha", "--json")
    assert result.code == 0 and "answering from the index as it is" in result.err


def test_context_on_a_read_only_database_answers_from_the_index_with_the_code_on_disk(
        cli, read_only_folder):  # noqa: F811
    moved(cli)
    (cli.root / "m.py").write_text((cli.root / "m.py").read_text()
                                   + "\n\ndef gamma():\n    return 3\n")
    cli("store", "-", stdin='Traceback (most recent call last):\n  File "m.py", line 9, in '
                           'beta\n    return alpha(y) * 2\nZeroDivisionError: division by zero\n')
    read_only_folder()
    suspects = cli.sub("suspects", "o1", "--json")                    # reads the graph too
    assert suspects.code == 0 and suspects.json()["suspects"][0]["id"] == "m.py:beta"
    result = cli.sub("context", "beta", "--purpose", "debug", "--json")
    assert result.code == 0, result.err
    assert "answering from the index as it is" in result.err
    assert result.err.count("answering from the index") == 1          # one note, not one a step
    text = result.json()["context"]
    assert "m.py:beta (function, lines 8-9)" in text                  # where beta is now
    assert "def beta(y):\n    return alpha(y) * 2\n```" in text       # its code, not lines 5-6
    gone = cli.sub("context", "m.py:9", "--json")                     # a line of the code now
    assert gone.code == 0 and gone.json()["target"] == "m.py:beta"
    (cli.root / "m.py").write_text("# moved\n" * 3 + CODE.replace("def beta", "def delta"))
    result = cli.sub("context", "m.py:beta", "--purpose", "debug")
    assert result.code == 0 and "m.py no longer defines it" in result.out


def test_a_symbol_written_since_the_index_is_found_not_called_unknown(cli):
    moved(cli, 0)
    (cli.root / "m.py").write_text(CODE + "\n\ndef gamma():\n    return beta(1)\n")
    (cli.root / "n.py").write_text("from m import gamma\n\n\ndef delta():\n    return gamma()\n")
    (cli.root / "later").mkdir()                       # a folder the index never held
    (cli.root / "later" / "x.py").write_text("def epsilon():\n    return 1\n")
    callers = cli.sub("callers", "gamma", "--json")
    assert callers.code == 0, callers.err
    assert [r["id"] for r in callers.json()["results"]] == ["n.py:delta"]
    assert cli.sub("callees", "gamma", "--json").json()["results"][0]["id"] == "m.py:beta"
    unknown = cli.sub("callers", "epsilon")
    assert unknown.code == 1 and "'epsilon' is not in the index" in unknown.err


def test_files_the_index_left_out_do_not_count_as_new_for_a_name(cli):
    """Minified files the index saw and skipped are not new files: a symbol written since
    the index is still found beside more of them than a lookup indexes again."""
    (cli.root / "m.py").write_text("def alpha():\n    return 1\n")
    for i in range(ctxkit.GRAPH_NAME_REFRESH_MAX + 5):
        (cli.root / f"min{i}.js").write_text("var a=1;" * 2000)   # one long line: minified
    indexed = cli.sub("index")
    assert indexed.code == 0 and "minified" in indexed.out, indexed.out
    (cli.root / "t.py").write_text("def theta():\n    return alpha()\n")
    callees = cli.sub("callees", "theta", "--json")
    assert callees.code == 0, callees.err
    assert [r["id"] for r in callees.json()["results"]] == ["m.py:alpha"]


def test_a_caller_written_since_the_index_in_another_file_is_listed(cli):
    """Found by a new user: a call of alpha added to n.py after `index` was missing from
    `callers alpha` and its usage context (only alpha's own file and its known callers'
    files were read again), while `impact` happened to find it."""
    (cli.root / "m.py").write_text(CODE)
    (cli.root / "n.py").write_text("def other():\n    return 0\n")
    assert cli("index", "-q").code == 0
    (cli.root / "n.py").write_text("from m import alpha\n\n\ndef other():\n    return 0\n\n\n"
                                   "def gamma(z):\n    return alpha(z)\n")
    (cli.root / "o.py").write_text("from m import alpha\n\n\ndef delta():\n    return alpha(3)\n")
    ids = {r["id"] for r in cli("callers", "alpha", "--json").json()["results"]}
    assert ids == {"m.py:beta", "n.py:gamma", "o.py:delta"}
    context = cli("context", "m.py:alpha", "--purpose", "usage", "--json").json()
    assert "n.py:gamma" in json.dumps(context)
    impact = cli("impact", "alpha", "--json").json()["results"]
    assert {r["id"] for r in impact} == ids


def test_a_new_file_stays_new_after_a_read_that_indexed_other_files_or_failed(cli):
    """Found by a new user: `symbols` never showed a file written since the index, and
    once a read had indexed one changed file again (or had failed to: no tree-sitter
    there), every file written before that read no longer counted as new, so its
    names were called unknown until the next full `index`."""
    moved(cli, 0)
    (cli.root / "n.py").write_text("def gamma():\n    return 0\n")
    (cli.root / "m.py").write_text(CODE + "\n# edited\n")
    assert _bare_python(cli, "callers", "alpha").returncode == 0       # the refresh fails
    context = cli.sub("context", "m.py:alpha", "--json")               # m.py alone again
    assert context.code == 0, context.err
    found = cli.sub("symbols", "gamma", "--json")
    assert [r["id"] for r in found.json()["results"]] == ["n.py:gamma"]
    (cli.root / "o.py").write_text("def delta():\n    return 0\n")
    assert [r["id"] for r in cli.sub("symbols", "--file", "o.py", "--json").json()[
        "results"]] == ["o.py:delta"]
    assert cli.sub("callers", "delta").code == 0
