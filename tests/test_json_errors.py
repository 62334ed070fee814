"""With --json every error is exactly one JSON document on stdout, same exit code.

Real subprocesses for every --json call: stdout is read as a whole, so nothing else
may be on it.
"""

from __future__ import annotations

import json

import pytest
from conftest import copy_fixture


@pytest.fixture
def shop(cli, root):
    copy_fixture("context_py", root)
    assert cli("index").code == 0
    return cli


ERRORS = [
    (["context", "nosuch"], 1, "not in the index"),
    (["callers", "nosuch"], 1, "not in the index"),
    (["context", "app/service.py:9999"], 1, "past the end"),
    (["context", "app/service.py:0"], 2, "numbered from 1"),
    (["context", "place", "--budget", "x"], 2, "whole number"),
    (["context", "place", "--budget", "3"], 2, "too small"),
    (["query", "--top", "0"], 2, "--top"),
    (["resolve", "999"], 1, "no lesson #999"),
    (["fail", "place", "  "], 2, "lesson is empty"),
    (["snapshot", "show", "7"], 1, "no snapshot 7"),
    (["search", "boom", "--handle", "o77"], 1, "no stored output 'o77'"),
    (["expand", "o77"], 1, "no stored output"),
    (["import-cm", "/nonexistent/cm.db"], 1, "no such file"),
    (["frobnicate"], 2, "invalid choice"),
    ([], 2, "give a command"),
]


@pytest.mark.parametrize("argv, status, words", ERRORS)
def test_errors_stay_json(shop, argv, status, words):
    plain = shop(*argv)                                   # the status without --json
    for placed in (["--json", *argv], [*argv, "--json"] if argv else ["--json"]):
        result = shop.sub(*placed)
        assert result.code == plain.code == status, (placed, result.err)
        document = json.loads(result.out)                 # one document, nothing else
        assert result.out.count("\n") == 1
        assert document["status"] == "error" and document["exit_code"] == status
        assert words in document["error"]
        assert document["error"] in result.err.splitlines()[-1]
        assert result.err.count("\n") == 1 or not argv           # no command: the help


def test_an_ambiguous_name_lists_its_candidates(shop):
    result = shop.sub("context", "__init__", "--json")
    assert result.code == 1
    document = json.loads(result.out)
    ids = [c["id"] for c in document["candidates"]]
    assert ids == ["app/models.py:Order.__init__", "app/service.py:OrderService.__init__"]
    assert set(document["candidates"][0]) == {"id", "kind", "path", "line"}
    for command in ("callers", "callees", "impact"):
        again = json.loads(shop.sub(command, "__init__", "--json").out)
        assert [c["id"] for c in again["candidates"]] == ids


def test_a_json_query_after_double_dash_is_not_an_option(shop):
    result = shop.sub("run", "--", "python3", "-c", "import sys; sys.exit(3)", "--json")
    assert result.code == 3 and not result.out.startswith('{"status": "error"')


def test_version_with_json_is_one_json_document(cli):
    """Found by a new user: `ctxkit --json --version` printed `ctxkit 0.1.0`."""
    for argv in (["--json", "--version"], ["--version", "--json"]):
        result = cli.sub(*argv)
        assert result.code == 0 and json.loads(result.out) == {"version": "0.1.0"}
    assert cli.sub("--version").out.strip() == "ctxkit 0.1.0"
