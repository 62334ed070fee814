"""Graph, TypeScript: classes of calls the TypeScript compiler resolves, through the CLI.

Each case indexes tests/fixtures/graph_ts_recall with the installed-style ``ctxkit``
as a subprocess and asks ``ctxkit callers``. The fixture's method names are shared
between classes, so only the rule under test (never a unique-name guess) gives the
caller set the type checker gives.
"""

from __future__ import annotations

import pytest

from conftest import copy_fixture

FIXTURE = "graph_ts_recall"

# (symbol, exactly these callers at the default confidence)
CASES = [
    # `const self = this` names the instance, also inside an object literal's method.
    ("src/this_alias.ts:Ring.size", {"src/this_alias.ts:Ring.iterate.object.next",
                                     "src/dynamic_import.ts:load"}),
    # `await import("./m")` binds the module's namespace, or its exports destructured.
    ("src/this_alias.ts:Queue.size", {"src/dynamic_import.ts:load"}),
    ("src/this_alias.ts:Queue", {"src/dynamic_import.ts:load"}),
    # An object pattern binds each name to that member of the value it destructures,
    # renamed or not; a name bound to a function member calls that function.
    ("src/destructure.ts:Schema.text", {"src/destructure.ts:Reader.read"}),
    ("src/destructure.ts:Catalog.text", {"src/destructure.ts:Reader.renamed"}),
    ("src/destructure.ts:race.cleanup", {"src/destructure.ts:Reader.finish"}),
    ("src/destructure.ts:settle.cleanup", set()),
    # An index signature or a mapped type holds its value type under every key (an
    # intersection of them too); the members of a field's own object type (spec:
    # {marks: Map}) are no fields of the class.
    ("src/index_signature.ts:MarkType.create", {"src/index_signature.ts:Schema.mark"}),
    ("src/index_signature.ts:NodeType.create", {"src/index_signature.ts:Schema.node"}),
    # A call binds its callee's type parameters (make<Schema>(...), or the declared type
    # of the variable it initializes): a function given to it has `inst: T` a Schema;
    # `this` in a method of an object literal given to it is the X of the parameter's
    # ThisType<X>, per literal when two give a method one name (make.describe twice);
    # the interface merged with `make` is not what the call runs.
    ("src/generics.ts:Schema.check", {"src/generics.ts", "src/generics.ts:make.clone"}),
    ("src/generics.ts:Schema.clone", {"src/generics.ts:make.describe"}),
    ("src/generics.ts:Other.check", {"src/generics.ts:make.describe#2"}),
    ("src/generics.ts:Other.clone", {"src/generics.ts", "src/generics.ts:make.check"}),
    # A narrowing (instanceof, a callback's parameter type) holds in the functions
    # nested where it holds, unless one has its own variable of that name.
    ("src/nested_narrowing.ts:Counter.tick", {"src/nested_narrowing.ts:watch.run",
                                              "src/nested_narrowing.ts:visitAll.again"}),
    ("src/nested_narrowing.ts:Clock.tick", {"src/nested_narrowing.ts:shadowed.inner"}),
    # A guard a generic factory makes for the class it is given narrows to that class,
    # imported through a barrel file's export * too.
    ("src/guard_factory.ts:Atom.report", {"src/guard_use.ts:describe"}),
    ("src/guard_factory.ts:Derived.report", set()),
    # `let m = xs[i].m()`: m holds what the element's method gives.
    ("src/subscript_calls.ts:Kind.valid", {"src/subscript_calls.ts:firstValid"}),
    ("src/subscript_calls.ts:Other.valid", set()),
    # A call of what a factory made (a variable, a class field) runs the nested
    # function the factory returns, but not one declared with a type of its own.
    ("src/factory.ts:memo.memoized", {"src/factory.ts:Table.count", "src/factory.ts:sum"}),
    ("src/factory.ts:typedFactory.run", set()),
    # `new Map<number, Retryer>()` (a field's or a variable's value) is a Map of those:
    # its forEach callback's parameter and what get() gives are Retryers.
    ("src/typed_new.ts:Retryer.abort", {"src/typed_new.ts:Batcher.stop"}),
    ("src/typed_new.ts:Retryer.reset", {"src/typed_new.ts:Batcher.again"}),
    ("src/typed_new.ts:Other.abort", {"src/typed_new.ts:local"}),
    # In an ES module a free name is a global: a script's top-level function is one, a
    # module's export is not; a name the module declares is its own variable.
    ("src/script_globals.ts:scriptHelper", {"src/free_names.ts:pick"}),
    ("src/module_only.ts:moduleOnly", set()),
    ("src/module_only.ts:cmp", set()),
    # Generic call signatures after a comment (.ts and .tsx): what follows the interface
    # is parsed as written.
    ("src/call_signatures.ts:tally", {"src/call_signatures.ts:report"}),
    ("src/call_signatures_view.tsx:label", {"src/call_signatures_view.tsx:View"}),
    # A module's types come from its declaration file: the .d.ts beside its code (a
    # name the code does not define), or a .d.ts with no code beside it.
    ("src/decl_types.d.ts:Observer.next", {"src/decl_use.ts:emit"}),
    ("src/decl_lone.d.ts:Sink.push", {"src/decl_use.ts:emit"}),
    # `this: Array<unknown>` declares a container from outside: its methods are the
    # library's (and indexing does not fail on it).
    ("src/this_outside.ts:Rows.every", {"src/this_outside.ts:allRows"}),
    # A default import of an object literal (named, or the export itself): its members
    # are the functions it names or defines.
    ("src/default_object.ts:pick", {"src/default_use.ts:choose"}),
    ("src/default_use.ts:Picker.pick", set()),
    ("src/default_anonymous.ts:settle", {"src/default_use.ts:flush"}),
    ("src/default_anonymous.ts:default.waiting", {"src/default_use.ts:flush"}),
    ("src/default_use.ts:Barrier.settle", set()),
    # never<T>().describe(...): the generic call's result, its type arguments aside.
    ("src/explicit_type_args.ts:Stream.describe", {"src/explicit_type_args.ts:fromArray"}),
    ("src/explicit_type_args.ts:Label.describe", set()),
    # `const f = ((x) => ...) as T` and `... satisfies T` define f.
    ("src/as_cast.ts:createImpl", {"src/as_cast.ts:create", "src/as_cast.ts:check",
                                   "src/as_cast.ts"}),
]


@pytest.fixture
def indexed(cli):
    copy_fixture(FIXTURE, cli.root)
    result = cli.sub("index", "-q")
    assert result.code == 0, result.err
    return cli


def callers(cli, symbol: str) -> set[str]:
    result = cli.sub("callers", symbol, "--json")
    assert result.code == 0, result.err
    return {r["id"] for r in result.json()["results"]}


def test_callers_agree_with_the_typescript_compiler(indexed):
    wrong = {symbol: (found, expected) for symbol, expected in CASES
             if (found := callers(indexed, symbol)) != expected}
    assert not wrong, wrong


def test_a_test_narrows_where_its_outcome_is_known(cli):
    """TypeScript's control flow analysis: after `if (!isText(n)) return;` n is a
    TextNode for the rest of the block, in the right operand of `isText(n) && ...`
    and of `!isText(n) || ...`, in a conditional's arm, in an else branch of a
    negated test, after an if whose else always throws. A test that may be either
    way (`isText(n) || other`) tells nothing after it."""
    (cli.root / "n.ts").write_text(
        "export class Base { getType(): string { return 'b'; } }\n"
        "export class TextNode extends Base { getFormat(): number { return 1; } }\n"
        "export class ElementNode extends Base { getFormat(): number { return 2; } }\n"
        "export function isText(n: Base | null): n is TextNode { return n instanceof TextNode; }\n"
        "export function get(k: string): Base | null { return null; }\n\n"
        "export function early(k: string): void {\n  const node = get(k);\n"
        "  if (!isText(node)) {\n    return;\n  }\n  node.getFormat();\n}\n\n"
        "export function either(k: string): void {\n  const node = get(k);\n"
        "  if (!isText(node) || node.getFormat() === 1) {\n    return;\n  }\n"
        "  node.getFormat();\n}\n\n"
        "export function both(k: string): number {\n  const node = get(k);\n"
        "  return isText(node) ? node.getFormat() : 0;\n}\n\n"
        "export function otherwise(node: Base): void {\n"
        "  if (!(node instanceof TextNode)) {\n    node.getType();\n  } else {\n"
        "    node.getFormat();\n  }\n}\n\n"
        "export function thrown(node: Base): void {\n"
        "  if (isText(node)) {\n    node.getType();\n  } else {\n"
        "    throw new Error('no');\n  }\n  node.getFormat();\n}\n\n"
        "export function unknown(node: Base, other: boolean): void {\n"
        "  if (isText(node) || other) {\n    return;\n  }\n  node.getFormat();\n}\n",
        encoding="utf-8")
    assert cli("index").code == 0
    result = cli("callers", "n.ts:TextNode.getFormat", "--json")
    assert {r["id"] for r in result.json()["results"]} == {
        "n.ts:early", "n.ts:either", "n.ts:both", "n.ts:otherwise", "n.ts:thrown"}


def test_generic_call_signatures_after_comments_parse_without_errors(cli):
    # An interface's generic call signatures, each after a doc or line comment, in .ts
    # and .tsx (call_signatures*.ts*): the grammar reads them once the semicolon
    # TypeScript implies at the newline is written; no file of the fixture has a
    # syntax error left.
    copy_fixture(FIXTURE, cli.root)
    result = cli.sub("index", "--json")
    assert result.code == 0, result.err
    assert result.json()["files"]["errors"] == 0


def test_an_import_of_the_parent_folder_reads_its_index_file(cli):
    """``import { Obs } from '..'`` in ``__tests__/`` (TanStack Query's tests) names
    the root folder's index.ts, as ``'../'`` or ``'./lib'`` name theirs."""
    (cli.root / "__tests__").mkdir()
    (cli.root / "index.ts").write_text('export { Obs } from "./obs"\n', encoding="utf-8")
    (cli.root / "obs.ts").write_text(
        "export class Obs {\n  mount(): void {}\n}\n\nexport class Other {\n"
        "  mount(): void {}\n}\n", encoding="utf-8")
    (cli.root / "__tests__/a.test.ts").write_text(
        'import { Obs } from ".."\n\ndescribe("x", () => {\n  const o = new Obs()\n'
        "  o.mount()\n})\n", encoding="utf-8")
    assert cli("index").code == 0
    result = cli("callers", "obs.ts:Obs.mount", "--json")
    assert {r["id"] for r in result.json()["results"]} == {"__tests__/a.test.ts"}


def test_a_factory_returning_an_object_literal_as_const_gives_its_members(cli):
    """``return { batch, schedule } as const`` (TanStack Query's notifyManager) or
    ``... satisfies T``: the cast leaves the literal, so ``notifyManager.batch()`` on
    ``const notifyManager = createNotifyManager()`` runs the nested batch."""
    (cli.root / "nm.ts").write_text(
        "export function createNotifyManager() {\n"
        "  const batch = <T>(callback: () => T): T => {\n    return callback()\n  }\n"
        "  function schedule(cb: () => void): void {\n    cb()\n  }\n"
        "  return {\n    batch,\n    schedule,\n  } as const\n}\n\n"
        "export function createOther() {\n  const batch = (n: number): number => n\n"
        "  const schedule = (n: number): number => n\n"
        "  return { batch, schedule } satisfies object\n}\n\n"
        "export const notifyManager = createNotifyManager()\n"
        "export const other = createOther()\n", encoding="utf-8")
    (cli.root / "use.ts").write_text(
        "import { notifyManager, other } from './nm'\n\nexport function run(): void {\n"
        "  notifyManager.batch(() => 1)\n  notifyManager.schedule(() => {})\n"
        "  other.batch(2)\n}\n", encoding="utf-8")
    assert cli("index").code == 0
    for symbol in ("nm.ts:createNotifyManager.batch", "nm.ts:createNotifyManager.schedule",
                   "nm.ts:createOther.batch"):
        result = cli("callers", symbol, "--json")
        assert {r["id"] for r in result.json()["results"]} == {"use.ts:run"}, symbol
    result = cli("callers", "nm.ts:createOther.schedule", "--json")
    assert result.json()["results"] == []
