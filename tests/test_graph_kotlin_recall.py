"""Graph, Kotlin: direct callers as the Kotlin compiler resolves them, through the CLI.

Each case is a class of Kotlin semantics that the reference harness
(tests/bench/bench_graph_reference.py, the Kotlin compiler's front end) found missed
or wrong on the tuned projects (KotlinPoet, Clikt, Klaxon); the fixture
tests/fixtures/graph_kotlin_recall is indexed by a real `ctxkit index` subprocess
and read back with `ctxkit callers --json`.
"""

from __future__ import annotations

import pytest

from conftest import callers_of

CODE = "src/spec/CodeBlock.kt"
SPECS = "src/spec/Specs.kt"
REVIEW = "src/review/Review.kt"
ONE_LINE = "src/review/OneLine.kt"
MEMBERS = "src/review/Members.kt"


@pytest.fixture
def indexed(cli):
    result = cli.index_fixture("graph_kotlin_recall")  # a real index, once per worker
    assert result.code == 0, result.err
    return cli


# (symbol, exactly these callers)
CASES = [
    # the arguments pick the overload (the grammar gives Kotlin's no field): a string
    # literal takes `add(format: String, vararg args)`, a CodeBlock `add(codeBlock)`; a
    # variadic overload is passed over only for one the arguments' types admit
    (f"{CODE}:CodeBlock.Builder.add", {f"{SPECS}:FunSpec.Builder.addKdoc",
                                      f"{SPECS}:FunSpec.Builder.returns#2",
                                      f"{CODE}:CodeBlock.of"}),
    (f"{CODE}:CodeBlock.Builder.add#2", {f"{SPECS}:FunSpec.Builder.addKdoc#2",
                                        f"{CODE}:CodeBlock.toBuilder"}),
    # this@CodeBlock and a property typed by its initializer pick emitCode(CodeBlock)
    (f"{CODE}:CodeWriter.emitCode#3", {f"{CODE}:CodeBlock.toString",
                                      f"{SPECS}:FunSpec.render"}),
    (f"{CODE}:CodeWriter.emitCode", set()),
    # `= apply { ... }` returns its receiver, and `fun builder() = Builder()` a Builder:
    # chains on them resolve
    (f"{CODE}:CodeBlock.Builder.build", {f"{CODE}:CodeBlock.of", f"{SPECS}:FunSpec",
                                        f"{SPECS}:FunSpec.header"}),
    (f"{CODE}:CodeBlock.Builder.indent", {f"{SPECS}:FunSpec.header"}),
    # `!isEmpty()`, which the grammar reads as (!isEmpty)()
    (f"{CODE}:CodeBlock.isEmpty", {f"{CODE}:CodeBlock.isNotEmpty"}),
    # extensions of types outside the index, by the receiver's declared type; a bare
    # call inside one runs an extension of its receiver
    (f"{SPECS}:KClass.asTypeName", {f"{SPECS}:FunSpec.typed",
                                   f"{SPECS}:FunSpec.Builder.returns"}),
    (f"{SPECS}:Type.asTypeName", {f"{SPECS}:FunSpec.reflected"}),
    (f"{SPECS}:KClass.asClassName", {f"{SPECS}:KClass.asTypeName"}),
    (f"{SPECS}:String.shout", {f"{SPECS}:FunSpec.literal", f"{SPECS}:FunSpec.loud"}),
    # an imported extension of an outside type (Collection) on a list
    ("src/util/Util.kt:Collection.toImmutableList", {f"{CODE}:CodeBlock.Builder.build"}),
    # supertype constructor calls, this(...) and super(...) delegation
    (f"{SPECS}:Spec", {f"{SPECS}:FunSpec", f"{SPECS}:Named"}),
    (f"{SPECS}:FunSpec", {f"{SPECS}:FunSpec", f"{SPECS}:FunSpec.Builder.build"}),
    # with(x) { emit() }: x's member; a lambda passed as CodeWriter.() -> Unit
    (f"{CODE}:CodeWriter.emit", {f"{SPECS}:FunSpec.render", f"{SPECS}:Printer.emit"}),
    # ... but emit(this, "x") in such a lambda takes a CodeWriter first, which the
    # lambda receiver's emit(String) does not: the emit of the class around it; and
    # buildCodeString, overloaded in another file of the package, found from there
    (f"{SPECS}:Printer.emit", {f"{SPECS}:Printer.toString"}),
    (f"{CODE}:buildCodeString", {f"{CODE}:CodeBlock.toString", f"{SPECS}:Printer.toString"}),
    # `it` of specs.map { }: an element; of x.let { }: x; a bare call in an
    # extension of a typealias: a member of the class it names
    # ... and `value` after `value is Named` (a smart cast, in if and in when), a lambda
    # parameter as declared
    (f"{SPECS}:Spec.describe", {f"{SPECS}:Registry.all", f"{SPECS}:RawSpec.describeTwice",
                                f"{SPECS}:describeAny"}),
    (f"{SPECS}:FunSpec.loud", {f"{SPECS}:describeAny"}),
    (f"{SPECS}:FunSpec.header", {f"{SPECS}:visitAll", f"{SPECS}:headers"}),
    # a lambda passed where a typealias of TransformContext.(String) -> T is asked
    (f"{SPECS}:TransformContext.fail", {f"{SPECS}:checked"}),
    # get(find(label)) passes an Int: none of Rows' get(String...) overloads takes it,
    # so it runs the get(Int) Rows inherits from AbstractList, outside the index
    (f"{SPECS}:Rows.get", set()),
    (f"{SPECS}:Rows.find", {f"{SPECS}:Rows.get"}),
    # a Circle passed where one overload takes a Shape, its base, and the other a Type
    (f"{SPECS}:Picker.pick", {f"{SPECS}:Picker.choose"}),
    (f"{SPECS}:Picker.pick#2", set()),
    # an override keeps the defaults of what it overrides: find(1) runs ByName's
    (f"{SPECS}:ByName.find", {f"{SPECS}:UsesFinder.go"}),
    (f"{SPECS}:Finder.find", set()),
    # a data class's copy(...) is made by the class
    (f"{SPECS}:Version", {f"{SPECS}:bump"}),
    # found by a review: `!is Square` and `is Square, is Disc` keep the subject's type;
    # a loop variable reused in a later loop takes that loop's element; two lambdas on
    # one line cannot be told apart (no guess); an annotation is no call; job.run { }
    # of a class's own run has no receiver, so side() is the top-level one; a class
    # with a base outside the index may be a Serializable
    (f"{REVIEW}:Shape.area", {f"{REVIEW}:measure"}),
    (f"{REVIEW}:Square.area", set()),
    (f"{REVIEW}:Square.side", {f"{REVIEW}:measure"}),
    (f"{REVIEW}:Disc.radius", {f"{REVIEW}:measure"}),
    (f"{REVIEW}:Route", set()),
    (f"{REVIEW}:Job.side", set()),
    (f"{REVIEW}:side", {f"{REVIEW}:measure"}),
    (f"{REVIEW}:keep", {f"{REVIEW}:leaves"}),
    # show(parse("x")): which parse runs (and so which show), the inner call's own
    # arguments say; neither show is claimed at the default confidence
    (f"{REVIEW}:show", set()),
    (f"{REVIEW}:show#2", set()),
    (f"{REVIEW}:Entry.key", {f"{REVIEW}:entries"}),
    (f"{SPECS}:RawSpec.describeTwice", {f"{SPECS}:Registry.first"}),
    # class bodies on one line (`class Store(...) { fun grow() = ... }`, a companion
    # object's): the pinned grammar reads them once the space before `}` is a `;`
    (f"{ONE_LINE}:Store.grow", {f"{ONE_LINE}:Shop.stock"}),
    (f"{ONE_LINE}:Store", {f"{ONE_LINE}:Shop.stock", f"{ONE_LINE}:Store.grow"}),
    (f"{ONE_LINE}:Keys.all", {f"{ONE_LINE}:openShop"}),
    (f"{ONE_LINE}:Shop.stock", {f"{ONE_LINE}:openShop", f"{ONE_LINE}:openShop.heard"}),
    (f"{ONE_LINE}:Listener.heard", {f"{ONE_LINE}:openShop"}),
    # a brace in a character literal or a string is none of the body's
    (f"{ONE_LINE}:Quotes.brace", {f"{ONE_LINE}:openShop"}),
    (f"{ONE_LINE}:Quotes.quote", {f"{ONE_LINE}:openShop"}),
    (f"{ONE_LINE}:Braces.inText", {f"{ONE_LINE}:openShop"}),
    # a member extension `fun StringBuilder.line()` called with an explicit receiver of
    # its receiver type inside the class that declares it or a subclass, not elsewhere
    (f"{MEMBERS}:Renderer.renderString", {f"{MEMBERS}:Renderer.render"}),
    (f"{MEMBERS}:Page.line", {f"{MEMBERS}:Page.build", f"{MEMBERS}:Page.build2",
                              f"{MEMBERS}:Report.body"}),
]


@pytest.mark.parametrize(("symbol", "expected"), CASES, ids=[c[0] for c in CASES])
def test_kotlin_callers_as_the_compiler_resolves_them(indexed, symbol, expected):
    assert callers_of(indexed, symbol) == expected


def test_a_boxed_java_value_is_not_read_as_its_literal(indexed):
    # put("a", c) with a Character c: javac takes put(String, Serializable) (boxing
    # first); which one, ctxkit leaves to the overload guess, never put(String, int)
    assert callers_of(indexed, "src/review/Boxes.java:Boxes.put#2") == set()


def test_a_delegates_class_body_is_no_call(indexed):
    # `: Collection<Spec> by specs {`: the grammar reads the body as a lambda passed to
    # `specs`; no call of it is stored
    result = indexed.sub("callees", f"{SPECS}:Registry", "--json")
    assert result.code == 0, result.err
    assert all(r["name"] != "specs" for r in result.json()["results"])


def test_a_raw_string_is_not_rewritten_as_a_class_body(cli):
    # the one-line companion object makes the file a candidate for the `;` rewrite; a
    # line of a multi-line raw string that reads `object ${ ... }` is text, not a body,
    # and stays as written: the file parses without an error
    source = cli.root / "src" / "Main.kt"
    source.parent.mkdir(parents=True)
    source.write_text('package demo\n\n'
                      'class Config { companion object { const val NAME = "x" } }\n\n'
                      'fun helper(): String = Config.NAME\n\n'
                      'fun banner(): String {\n'
                      '    return """\n'
                      '        object ${ helper() }\n'
                      '    """\n'
                      '}\n')
    result = cli.sub("index", "--json")
    assert result.code == 0, result.err
    assert result.json()["files"]["errors"] == 0
    assert callers_of(cli, "src/Main.kt:helper") == {"src/Main.kt:banner"}


def test_a_re_index_reads_inherited_names_with_the_bases_known(cli):
    # `class Inner : Base()` in Outer, which inherits Base from Root: the bases' own
    # resolution runs before inheritance is known, and what it looked up then must not
    # answer the calls re-resolved after it (a run where a file was only deleted)
    src = cli.root / "src"
    src.mkdir()
    (src / "Root.kt").write_text("package demo\n\nopen class Root {\n"
                                 "    open class Base {\n        fun ping() {}\n    }\n}\n")
    (src / "Outer.kt").write_text("package demo\n\nclass Outer : Root() {\n"
                                  "    class Inner : Base()\n\n"
                                  "    fun use() {\n        Base().ping()\n    }\n}\n")
    (src / "Other.kt").write_text("package other\n\nclass Base\n")
    expected = {"src/Outer.kt:Outer.Inner", "src/Outer.kt:Outer.use"}
    assert cli.sub("index", "-q").code == 0
    assert callers_of(cli, "Root.Base") == expected
    (src / "Other.kt").unlink()
    assert cli.sub("index", "-q").code == 0
    assert callers_of(cli, "Root.Base") == expected
