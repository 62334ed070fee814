"""Graph: exact caller/callee sets on fixture repositories in seven languages."""

from __future__ import annotations

import pytest

import ctxkit


def index(cli, fixture: str | None = None, *args: str) -> dict:
    result = cli.index_fixture(fixture, *args) if fixture else cli("index", "--json", *args)
    assert result.code == 0, result.err
    return result.json()


def ids(cli, command: str, symbol: str, *args: str) -> set[str]:
    result = cli(command, symbol, "--json", *args)
    assert result.code == 0, result.err
    return {r["id"] or r["name"] for r in result.json()["results"]}


# (fixture, symbol, relation, exactly these, and certainly not these)
CASES = [
    # Python: inherited method through self, typed receivers, aliases, re-exports
    ("graph_python", "app/models.py:Model.save", "callers",
     {"app/models.py:User.rename", "app/service.py:UserService._store", "app/cli.py:main"},
     {"app/cli.py:run"}),
    ("graph_python", "app/cache.py:Cache.save", "callers", set(),
     {"app/cli.py:run", "app/cli.py:main", "app/models.py:User.rename"}),
    ("graph_python", "app/models.py:validate", "callers",
     {"app/models.py:User.serialize", "app/service.py:UserService._store",
      "app/service.py:UserService.reset"}, set()),
    ("graph_python", "app/cache.py:validate", "callers", set(),
     {"app/service.py:UserService._store", "app/models.py:User.serialize"}),
    ("graph_python", "app/service.py:UserService._store", "callees",
     {"app/models.py:Model.save", "app/cache.py:Cache.clear", "app/models.py:validate",
      "os.path.join"}, {"app/cache.py:Cache.save", "app/cache.py:validate"}),
    ("graph_python", "app/service.py:UserService.create", "callees",
     {"app/models.py:User", "app/models.py:User.__init__", "app/models.py:User.rename",
      "app/service.py:UserService._store"}, set()),
    ("graph_python", "app/service.py:UserService.fetch", "callees",
     {"app/service.py:UserService.fetch.helper"}, set()),
    ("graph_python", "app/service.py:make_service", "callers",
     {"app/cli.py:main", "app/service.py"}, set()),
    ("graph_python", "app/cli.py:run", "callees",
     {"app/cli.py:load", "obj.save", "app/service.py:UserService.create"},
     {"app/models.py:Model.save", "app/cache.py:Cache.save"}),
    # JavaScript: CommonJS require with destructuring aliases, this, extends
    ("graph_javascript", "src/models.js:Model.save", "callers", {"src/models.js:User.rename"},
     {"src/service.js:UserService.persist", "src/index.js:run"}),
    ("graph_javascript", "src/models.js:validate", "callers",
     {"src/models.js:User.serialize", "src/service.js:UserService.persist"}, set()),
    ("graph_javascript", "src/cache.js:validate", "callers", set(),
     {"src/service.js:UserService.persist"}),
    ("graph_javascript", "src/service.js:UserService.create", "callees",
     {"src/models.js:User", "src/models.js:User.constructor", "src/models.js:User.rename",
      "src/service.js:UserService.persist"}, set()),
    ("graph_javascript", "src/service.js:UserService.persist", "callees",
     {"path.join", "src/models.js:validate", "user.save"},
     {"src/models.js:Model.save", "src/cache.js:Cache.save", "src/cache.js:validate"}),
    ("graph_javascript", "src/service.js:makeService", "callers", {"src/index.js:main"}, set()),
    ("graph_javascript", "src/index.js:main", "callers", {"src/index.js"}, set()),
    # TypeScript: ES imports with aliases, default import, namespace import, typed params
    ("graph_typescript", "src/models.ts:Model.save", "callers",
     {"src/models.ts:User.rename", "src/service.ts:UserService.persist"}, {"src/main.ts:run"}),
    ("graph_typescript", "src/cache.ts:Cache.save", "callers", set(),
     {"src/service.ts:UserService.persist"}),
    ("graph_typescript", "src/models.ts:validate", "callers",
     {"src/models.ts:User.serialize", "src/service.ts:UserService.persist", "src/main.ts:main"},
     set()),
    ("graph_typescript", "src/cache.ts:validate", "callers", set(), {"src/main.ts:main"}),
    ("graph_typescript", "src/service.ts:makeService", "callers", {"src/main.ts:main"}, set()),
    ("graph_typescript", "src/service.ts:UserService.persist", "callees",
     {"path.join", "src/models.ts:validate", "src/models.ts:Model.save",
      "src/cache.ts:Cache.clear"}, {"src/cache.ts:Cache.save"}),
    # TSX: components, inherited methods through this, JSX elements as calls
    ("graph_tsx", "src/components/Button.tsx:BaseButton.track", "callers",
     {"src/components/Button.tsx:BaseButton.handleClick",
      "src/components/Button.tsx:IconButton.render", "src/App.tsx:App"}, set()),
    ("graph_tsx", "src/util/format.ts:formatLabel", "callers",
     {"src/components/Button.tsx:BaseButton.render",
      "src/components/Button.tsx:IconButton.render"}, {"src/util/bold.tsx:Title"}),
    ("graph_tsx", "src/util/bold.tsx:formatLabel", "callers", {"src/util/bold.tsx:Title"},
     {"src/components/Button.tsx:BaseButton.render"}),
    ("graph_tsx", "src/App.tsx:App", "callees",
     {"src/components/Button.tsx:IconButton", "src/components/Button.tsx:BaseButton.track",
      "src/util/bold.tsx:Title", "useState"}, {"setCount"}),
    # A function given as a property's value is a definition of its own (as the
    # TypeScript compiler names it): the calls in its body are its.
    ("graph_tsx", "src/App.tsx:App.IconButton.onClick", "callees", {"setCount"}, set()),
    # Go: package imports with alias, receivers, embedded structs
    ("graph_go", "models/model.go:Model.Save", "callers",
     {"models/user.go:User.Rename", "service/service.go:UserService.persist"}, set()),
    ("graph_go", "cache/cache.go:Cache.Save", "callers", set(),
     {"service/service.go:UserService.persist"}),
    ("graph_go", "models/user.go:Validate", "callers", {"service/service.go:UserService.Create"},
     set()),
    ("graph_go", "cache/cache.go:Validate", "callers", set(),
     {"service/service.go:UserService.Create"}),
    ("graph_go", "service/service.go:UserService.Create", "callees",
     {"fmt.Errorf", "models/user.go:Validate", "models/user.go:User.Rename",
      "service/service.go:UserService.persist"}, {"cache/cache.go:Validate"}),
    ("graph_go", "main.go:run", "callees",
     {"service/service.go:UserService.Create", "main.go:helper"}, set()),
    # Rust: use with aliases, impl blocks, trait default methods, Type::new
    ("graph_rust", "src/models.rs:Saveable.save", "callers", {"src/models.rs:User.rename"},
     {"src/service.rs:UserService.persist"}),
    ("graph_rust", "src/cache.rs:Cache.save", "callers", set(), {"src/models.rs:User.rename"}),
    ("graph_rust", "src/models.rs:validate", "callers",
     {"src/models.rs:User.key", "src/service.rs:UserService.persist", "src/service.rs:check"},
     set()),
    ("graph_rust", "src/cache.rs:validate", "callers", {"src/service.rs:check"},
     {"src/service.rs:UserService.persist"}),
    ("graph_rust", "src/service.rs:check", "callees",
     {"src/cache.rs:validate", "src/models.rs:validate"}, set()),
    ("graph_rust", "src/service.rs:UserService.create", "callees",
     {"src/models.rs:User.new", "src/models.rs:User.rename",
      "src/service.rs:UserService.persist"}, set()),
    ("graph_rust", "src/service.rs:make_service", "callees", {"src/service.rs:UserService.new"},
     set()),
    ("graph_rust", "src/models.rs:Saveable.save", "callees",
     {"to_string", "src/models.rs:Saveable.key", "to_string(...).unwrap"}, set()),
    # Java: imports, same-package classes, bare inherited calls, typed fields
    ("graph_java", "src/main/java/com/shop/models/Model.java:Model.save", "callers",
     {"src/main/java/com/shop/models/User.java:User.rename",
      "src/main/java/com/shop/service/UserService.java:UserService.persist"}, set()),
    ("graph_java", "src/main/java/com/shop/cache/Cache.java:Cache.save", "callers", set(),
     {"src/main/java/com/shop/service/UserService.java:UserService.persist"}),
    ("graph_java", "src/main/java/com/shop/models/Validator.java:Validator.validate", "callers",
     {"src/main/java/com/shop/models/User.java:User.serialize",
      "src/main/java/com/shop/service/UserService.java:UserService.persist"}, set()),
    ("graph_java", "src/main/java/com/shop/cache/Cache.java:Cache.validate", "callers", set(),
     {"src/main/java/com/shop/models/User.java:User.serialize"}),
    ("graph_java", "src/main/java/com/shop/service/UserService.java:UserService.persist",
     "callees",
     {"src/main/java/com/shop/models/Model.java:Model.save",
      "src/main/java/com/shop/models/Validator.java:Validator.validate",
      "src/main/java/com/shop/cache/Cache.java:Cache.clear", "System.out.println"},
     {"src/main/java/com/shop/cache/Cache.java:Cache.save"}),
    ("graph_java", "src/main/java/com/shop/App.java:App.main", "callees",
     {"src/main/java/com/shop/service/UserService.java:UserService",
      "src/main/java/com/shop/service/UserService.java:UserService.create",
      "src/main/java/com/shop/App.java:App.run"}, set()),
]


@pytest.mark.parametrize("fixture,symbol,command,expected,forbidden", CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[1].rsplit(':', 1)[-1]}" for c in CASES])
def test_exact_relations(cli, fixture, symbol, command, expected, forbidden):
    index(cli, fixture)
    found = ids(cli, command, symbol)
    assert found == expected
    assert not found & forbidden


def test_low_confidence_guess_is_hidden_by_min_confidence(cli):
    index(cli, "graph_python")
    # service.create(): `service` is an untyped parameter, read from what main() passes
    # (a UserService made by make_service), below a declared type's confidence
    result = cli("callees", "app/cli.py:run", "--json").json()["results"]
    create = [r for r in result if r["id"] == "app/service.py:UserService.create"]
    assert create and create[0]["confidence"] == ctxkit.CONF_PASSED
    strict = ids(cli, "callees", "app/cli.py:run", "--min-confidence", "0.85")
    assert "app/service.py:UserService.create" not in strict
    assert "app/cli.py:load" in strict


def test_instance_attribute_types(cli):
    index(cli, "graph_python")
    # self.cache = Cache() in __init__ types self.cache.clear() in another method
    result = cli("callees", "UserService._store", "--json").json()["results"]
    clear = [r for r in result if r["id"] == "app/cache.py:Cache.clear"]
    assert clear and clear[0]["confidence"] == ctxkit.CONF_TYPED


def test_ambiguous_attribute_call_stays_an_unresolved_name(cli):
    index(cli, "graph_python")
    results = cli("callees", "app/cli.py:run", "--json").json()["results"]
    save = [r for r in results if r["name"] == "obj.save"]
    assert save == [dict(save[0], id=None)]
    assert save[0]["confidence"] == 0.0


def test_external_callee_keeps_written_name_and_null_id(cli):
    index(cli, "graph_python")
    results = cli("callees", "UserService._store", "--json").json()["results"]
    external = [r for r in results if r["name"] == "os.path.join"]
    assert external and external[0]["id"] is None and external[0]["path"] is None
    assert external[0]["call_line"] == 23


def test_depth_two_callers(cli):
    index(cli, "graph_python")
    data = cli("callers", "app/models.py:User.rename", "--depth", "2", "--json").json()
    by_depth = {(r["id"], r["depth"]) for r in data["results"]}
    assert ("app/service.py:UserService.create", 1) in by_depth
    assert ("app/cli.py:run", 2) in by_depth
    assert data["target"] == "app/models.py:User.rename"


@pytest.mark.parametrize("rel, text, caller, lines", [
    ("q.py", "class Q:\n    def where(self):\n        return self\n\n"
             "    def order(self):\n        return self\n\n\n"
             "def build(q: Q):\n    return (q\n            .where()\n            .order())\n",
     "q.py:build", (11, 12)),
    ("q.ts", "export class Q {\n  where(): Q { return this }\n  order(): Q { return this }\n}\n"
             "export function build(q: Q): Q {\n  return q\n    .where()\n    .order()\n}\n",
     "q.ts:build", (7, 8)),
    ("q.go", "package q\n\ntype Q struct{}\n\nfunc (q *Q) Where() *Q { return q }\n\n"
             "func (q *Q) Order() *Q { return q }\n\nfunc Build(q *Q) *Q {\n\treturn q.\n"
             "\t\tWhere().\n\t\tOrder()\n}\n",
     "q.go:Build", (11, 12)),
])
def test_a_call_is_on_the_line_of_its_name(cli, rel, text, caller, lines):
    # A chain written over several lines: each call stands where its method's name is
    # (as type checkers and editors place it), not where the chain's first receiver is.
    (cli.root / rel).write_text(text, encoding="utf-8")
    assert cli("index", "-q").code == 0
    results = cli("callees", caller, "--json").json()["results"]
    found = {r["name"].rpartition(".")[2].lower(): r["call_line"] for r in results}
    assert (found["where"], found["order"]) == lines


def test_a_chain_broken_over_lines_reads_as_written_on_one(cli):
    # `(User\n .select()\n .join(1))`: the receiver of join is User.select(), whose
    # type is what that classmethod returns; two classes define select and two define
    # join, so no unique-name guess can stand in.
    orm = ("class Select:\n    def join(self, dest):\n        return self\n\n\n"
           "class Other:\n    def join(self, dest):\n        return self\n\n\n"
           "class Model:\n    @classmethod\n    def select(cls):\n        return Select()\n\n\n"
           "class Table:\n    @classmethod\n    def select(cls):\n        return Other()\n")
    (cli.root / "orm.py").write_text(orm, encoding="utf-8")
    (cli.root / "app.py").write_text(
        "from orm import Model\n\n\nclass User(Model):\n    def following(self):\n"
        "        return (User\n                .select()\n                .join(1))\n",
        encoding="utf-8")
    assert cli("index", "-q").code == 0
    results = cli("callers", "orm.py:Select.join", "--json").json()["results"]
    assert [r["id"] for r in results] == ["app.py:User.following"]
    assert cli("callers", "orm.py:Other.join", "--json").json()["results"] == []
