"""What the context puts first and what its sections may hold, through the real CLI.

The target comes first, at the highest level that fits; type sections hold
types, never files; relations are ranked by closeness to the target; every
printed line is whole; FILE:LINE must be a line of the file; --depth 0 says
that relations were not asked for.
"""

from __future__ import annotations

import pytest

PLACE = "app/service.py:OrderService.place"


@pytest.fixture
def shop(cli, root):
    assert cli.index_fixture("context_py").code == 0
    return cli


def context(cli, *args):
    result = cli("context", *args, "--json")
    assert result.code == 0, result.err
    return result.json()


@pytest.mark.parametrize("purpose", ["review", "debug"])
def test_type_sections_hold_types_never_files(shop, purpose):
    data = context(shop, PLACE, "--purpose", purpose, "--budget", "20000")
    types = [i for i in data["items"] if i["section"] == "types"]
    assert [i["id"] for i in types] == ["app/models.py:Order"]      # `order: Order`
    assert all(i["kind"] != "file" for i in data["items"])
    heading = "### Type Dependencies" if purpose == "review" else "### Input Types"
    section = data["context"].split(heading, 1)[1].split("\n---", 1)[0]
    assert "(file)" not in section and "app/models.py:Order (class" in section


def test_the_target_gets_its_level_before_any_relation(shop):
    # With relations and without any (--depth 0), the target's level is the same at
    # every budget: relations only ever get what the target leaves.
    levels = set()
    for budget in range(30, 700, 9):
        with_relations = context(shop, PLACE, "--purpose", "debug", "--budget", str(budget))
        alone = context(shop, PLACE, "--purpose", "debug", "--budget", str(budget),
                        "--depth", "0")
        assert with_relations["items"][0]["level"] == alone["items"][0]["level"], budget
        levels.add(with_relations["items"][0]["level"])
    full = context(shop, PLACE, "--purpose", "debug", "--budget", "20000")
    assert full["items"][0]["level"] == 5
    assert {5, 4, 3} <= levels                                    # L5, else L4, else L3


GO = '''package cli

type Command struct {
	name string
}

func (c *Command) SetA(v string) { c.name = v }
func (c *Command) SetB(v string) { c.name = v }
func (c *Command) SetC(v string) { c.name = v }
func (c *Command) SetD(v string) { c.name = v }
func (c *Command) SetE(v string) { c.name = v }
func (c *Command) SetF(v string) { c.name = v }

func (c *Command) Execute() error {
	return c.validate()
}

func (c *Command) validate() error {
	return nil
}

func (c *Command) Check() error {
	return c.validate()
}
'''


def test_exports_are_ranked_by_closeness_to_the_target(cli, root):
    (root / "command.go").write_text(GO)
    assert cli("index").code == 0
    data = context(cli, "Command.Execute", "--purpose", "refactor", "--budget", "20000")
    exports = [i["id"] for i in data["items"] if i["section"] == "exports"]
    # Its own type, then the method sharing a callee (validate), then the rest.
    assert exports[:2] == ["command.go:Command", "command.go:Command.Check"], exports
    assert set(exports[2:]) == {f"command.go:Command.Set{x}" for x in "ABCDEF"}
    text = data["context"]
    assert text.index("Command.Check") < text.index("Command.SetA")
    # Under a tight budget the unrelated setters are the ones left out.
    tight = context(cli, "Command.Execute", "--purpose", "refactor", "--budget", "330")
    shown = [i["id"] for i in tight["items"] if i["section"] == "exports"]
    assert "command.go:Command.Check" in shown and len(shown) < len(exports)


def test_file_line_past_the_end_is_an_error(shop):
    lines = (shop.root / "app" / "service.py").read_text().count("\n")
    result = shop("context", f"app/service.py:{lines + 1}")
    assert result.code == 1 and result.out == "" and result.err.count("\n") == 1
    assert f"past the end of app/service.py, which has {lines} lines" in result.err
    assert shop("callers", "app/service.py:9999").code == 1
    assert shop("context", f"app/service.py:{lines}").code == 0
    zero = shop("context", "app/service.py:0")
    assert zero.code == 2 and "numbered from 1" in zero.err


def test_depth_0_says_relations_were_not_asked_for(shop):
    text = shop("context", PLACE, "--depth", "0").out
    for heading in ("### Direct Dependencies", "### Callers", "### Type Dependencies"):
        assert f"{heading}" in text
        assert text.split(heading, 1)[1].split("\n", 2)[1] == "- not asked (--depth 0)"
    assert "- none" not in text
    impact = context(shop, PLACE, "--purpose", "impact", "--depth", "0")
    assert impact["impact"] == {"direct": None, "indirect": None, "risk_level": None,
                                "risk_score": None}
    assert "Direct Impact: not asked (--depth 0)" in impact["context"]
    assert "- none" not in impact["context"]


def test_a_target_held_below_its_level_says_the_budget_that_shows_more(shop):
    seen = set()
    for budget in range(40, 700, 23):
        data = context(shop, PLACE, "--purpose", "debug", "--budget", str(budget))
        higher, level = data["stats"]["next_level"], data["items"][0]["level"]
        if level == 5:
            assert higher is None
            continue
        assert higher["level"] == level + 1 and higher["budget"] > budget
        if data["context"].rstrip().splitlines()[-1].startswith(("- Target", "Context Stats")):
            assert f"L{level + 1} needs --budget {higher['budget']}" in data["context"]
        if higher["budget"] in seen:
            continue
        seen.add(higher["budget"])
        exact = context(shop, PLACE, "--purpose", "debug", "--budget", str(higher["budget"]))
        assert exact["items"][0]["level"] == level + 1             # that budget is enough
        short = context(shop, PLACE, "--purpose", "debug", "--budget",
                        str(higher["budget"] - 1))
        assert short["items"][0]["level"] <= level               # and just enough
    assert len(seen) >= 3


# --- type aliases are types ------------------------------------------------------------------

PY_ALIASES = '''import typing as t
from typing import Optional, TypeAlias

ResponseValue = t.Union["Response", str, bytes]
HeadersValue = dict[str, str] | list[tuple[str, str]]
Key = str | None
Handler = (
    t.Callable[[], None]
    | t.Callable[[], t.Awaitable[None]]
)
Explicit: TypeAlias = "int"
Maybe = Optional[int]
T = t.TypeVar("T")
type Pair[X] = tuple[X, X]

settings = {"x": 1}
CFG = settings["x"]
FLAGS = 1 | 2
handler = print
__all__ = ["respond", "ResponseValue"]


class Response:
    pass


def respond(rv: ResponseValue, headers: HeadersValue, key: Key, on: Handler,
            n: Explicit, m: Maybe, item: T, pair: Pair[int]) -> Response:
    return Response()


def helper():
    return respond
'''


def test_python_type_aliases_are_types_of_the_signature(cli, root):
    (root / "web.py").write_text(PY_ALIASES)
    assert cli("index").code == 0
    kinds = cli("symbols", "--kind", "type", "--json").json()["results"]
    assert sorted(i["id"].split(":")[1] for i in kinds) == sorted(
        ["ResponseValue", "HeadersValue", "Key", "Handler", "Explicit", "Maybe", "T", "Pair"])
    data = context(cli, "respond", "--purpose", "debug", "--budget", "20000")
    types = {i["id"] for i in data["items"] if i["section"] == "types"}
    assert types == {f"web.py:{name}" for name in ("ResponseValue", "HeadersValue", "Key",
                                                   "Handler", "Explicit", "Maybe", "T", "Pair")}
    section = data["context"].split("### Input Types", 1)[1]
    assert "`HeadersValue = dict[str, str] | list[tuple[str, str]]`" in section
    # __all__ decides what the module exports
    review = cli("context", "helper", "--purpose", "review").out
    assert "exported: no" in review
    assert "exported: yes" in cli("context", "respond", "--purpose", "review").out


def test_typescript_and_rust_type_aliases_are_types(cli, root):
    (root / "api.ts").write_text(
        "export type UserId = string | number;\n"
        "export interface User { id: UserId }\n"
        "export function load(id: UserId): User { return { id }; }\n")
    (root / "lib.rs").write_text(
        "pub type Result<T> = std::result::Result<T, Error>;\n"
        "pub struct Error;\n"
        "pub fn run(n: u32) -> Result<u32> { Ok(n) }\n")
    assert cli("index").code == 0
    for target, alias in (("load", "api.ts:UserId"), ("run", "lib.rs:Result")):
        data = context(cli, target, "--purpose", "review", "--budget", "20000")
        assert alias in {i["id"] for i in data["items"] if i["section"] == "types"}, target
