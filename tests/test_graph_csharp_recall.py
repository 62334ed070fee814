"""Graph, C#: direct callers as the C# compiler binds them, through the installed CLI.

Each case is a class of C# semantics that the reference harness
(tests/bench/bench_graph_reference.py, Mono's compiler read through Cecil) found
missed on the tuned projects; the fixture tests/fixtures/graph_csharp_recall is
indexed by a real `ctxkit index` subprocess and read back with `ctxkit callers --json`.
"""

from __future__ import annotations

import pytest

from conftest import callers_of, copy_fixture


@pytest.fixture
def indexed(cli):
    copy_fixture("graph_csharp_recall", cli.root)
    result = cli.sub("index", "--json")
    assert result.code == 0, result.err
    return cli


# (symbol, exactly these callers)
CASES = [
    # `: base(start, end)` and `: this(at, at)` call the constructor their arguments pick
    ("Tokens.cs:Token.Token", {"Tokens.cs:Token.Token#2", "Tokens.cs:Anchor.Anchor"}),
    ("Tokens.cs:Token.Token#2", {"Tokens.cs:Anchor.Anchor#2"}),
    # `new Mark(...)` inside a method named Mark constructs the type, not a recursion
    ("Tokens.cs:Mark.Mark", {"Tokens.cs:Cursor.Mark"}),
    ("Tokens.cs:Cursor.Mark", set()),
    # extension methods: `parser.Accept<T>()` on a project interface that lacks Accept,
    # `rule.Once()` on a delegate, `.Then` on what Once returns, `name.Letters()` on a
    # string (a type outside the project), `name.Describe()` for any T
    ("Parsing.cs:ParserExtensions.Accept", {"Parsing.cs:Reader.ReadAnchor"}),
    ("Parsing.cs:ParserExtensions.Expect", {"Parsing.cs:Reader.ReadAnchor"}),
    ("Parsing.cs:ParserExtensions.Once", {"Parsing.cs:Reader.ReadAnchor"}),
    ("Parsing.cs:ParserExtensions.Then", {"Parsing.cs:Reader.ReadAnchor"}),
    ("Parsing.cs:ParserExtensions.Letters", {"Parsing.cs:Reader.ReadAnchor"}),
    ("Parsing.cs:ParserExtensions.Describe", {"Parsing.cs:Reader.ReadAnchor"}),
    # a member of the receiver's own type: no extension method
    ("Parsing.cs:IParser.MoveNext", {"Parsing.cs:ParserExtensions.Expect"}),
    # two classes of one name in a file, the second one's field a delegate called bare
    # (`getter(target)`): the index is built (it stopped on a TypeError before) and the
    # constructor is found
    ("Parsing.cs:Accessor.Accessor", {"Parsing.cs:Accessor.From"}),
    # Builder and Builder<T> are two types: builder.Retry(3) runs the extension method
    # for Builder; of two overloads taking an Action, the one whose Action has as many
    # type arguments as the argument's
    ("Policies.cs:RetrySyntax.Retry", {"Policies.cs:Client.Make"}),
    ("Policies.cs:RetryResultSyntax.Retry", set()),
    ("Policies.cs:RetrySyntax.Retry#2", {"Policies.cs:RetrySyntax.Retry"}),
    ("Policies.cs:RetrySyntax.Retry#3", set()),
    # an extension method called by its bare name passes its receiver itself:
    # Days((double) days) runs Days(this double); 7.Days() runs Days(this int)
    ("Words.cs:TimeSpanExtensions.Days#2", {"Words.cs:TimeSpanExtensions.Days"}),
    ("Words.cs:TimeSpanExtensions.Days", {"Words.cs:Clock.Week"}),
    # overloads inherited from a base are candidates too
    ("Words.cs:GenderedConverter.Convert", {"Words.cs:GermanConverter.Convert"}),
    ("Words.cs:GermanConverter.Convert", set()),
    # a partial class is one class across its files, beside its generic namesake; a
    # lambda's parameter count picks Action<A, B, C> over Func<A, B, C, R>
    ("RetryPolicy.cs:RetryPolicy.RetryPolicy", {"RetrySyntax.cs:RetrySyntax.Retry"}),
    ("RetryPolicyAsync.cs:RetryPolicy.RetryPolicy", set()),
    ("RetryPolicy.cs:RetryPolicy", {"RetrySyntax.cs:RetrySyntax.Retry"}),
    ("RetryPolicy.cs:RetryPolicy#2", {"RetrySyntax.cs:RetrySyntax.Retry#2"}),
    ("RetryPolicy.cs:RetryPolicy.RetryPolicy#2", {"RetrySyntax.cs:RetrySyntax.Retry#2"}),
    # a variable of a generic namesake's type calls that class's members
    ("Policies.cs:PolicyBuilder.Handle#2", {"Policies.cs:Client.Use"}),
    ("Policies.cs:PolicyBuilder.Handle", set()),
    # an explicit interface implementation is not among the overloads of a bare call
    ("Validators.cs:Validator.Validate#2", {"Validators.cs:Validator.Validate"}),
    ("Validators.cs:Validator.Validate", set()),
    # #if of a symbol no #define of the file gives is left out, as a build without
    # -define leaves it: calls in it are compiled out, its extension methods are none
    ("Portable.cs:Property.GetValue", {"Portable.cs:PropertyExtensions.Describe",
                                       "Portable.cs:Reader.Fail"}),
    ("Portable.cs:PropertyExtensions.GetValue", set()),
    ("Portable.cs:PropertyExtensions.GetGetMethod", set()),
    # a parameter with a default may be left out (C#'s `Exception inner = null`)
    ("Portable.cs:Error.Error#2", {"Portable.cs:Reader.Fail"}),
]


@pytest.mark.parametrize("symbol,expected", CASES, ids=[c[0] for c in CASES])
def test_csharp_callers_as_the_compiler_binds_them(indexed, symbol, expected):
    assert callers_of(indexed, symbol) == expected


def test_a_call_in_a_branch_left_out_is_compiled_out(indexed):
    """Find(...) in `#if PORTABLE` is listed only below the default confidence."""
    assert callers_of(indexed, "Portable.cs:PropertyExtensions.Find") == set()
    result = indexed.sub("callers", "Portable.cs:PropertyExtensions.Find",
                         "--min-confidence", "0.3", "--json")
    assert result.code == 0, result.err
    assert {r["id"] for r in result.json()["results"]} == {
        "Portable.cs:PropertyExtensions.GetGetMethod"}
