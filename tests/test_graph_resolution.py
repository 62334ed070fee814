"""Graph: classes of call resolution that a type checker gets right, on real parsed code.

Each fixture under tests/fixtures/graph_classes_* is ordinary code whose
method names are shared between types, so that only the rule under test
(not a guess from a unique name) can give the right caller set.
"""

from __future__ import annotations

import pytest


def index(cli, fixture: str) -> None:
    result = cli.index_fixture(fixture)
    assert result.code == 0, result.err


def callers(cli, symbol: str) -> set[str]:
    result = cli("callers", symbol, "--json")
    assert result.code == 0, result.err
    return {r["id"] for r in result.json()["results"]}


def write_files(cli, files: dict[str, str]) -> None:
    """Write each file (its folders made) under the root: a small project of a case."""
    for rel, text in files.items():
        (cli.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (cli.root / rel).write_text(text, encoding="utf-8")


def two_classes(first: str, *methods: str) -> str:
    """A module where ``first`` and ``Other`` both define each of ``methods(self, text)``:
    only the rule under test, never a guess from a unique name, picks one."""
    body = "".join(f"    def {method}(self, text):\n        return text\n\n"
                   for method in methods)
    return "".join(f"class {name}:\n{body}\n" for name in (first, "Other"))


PY = "graph_classes_python"
TS = "graph_classes_typescript"
GO = "graph_classes_go"
JAVA = "graph_classes_java"

# (fixture, symbol, exactly these callers at the default confidence)
CASES = [
    # Overloads (Java) are told apart by the number of arguments the call writes, a
    # variadic one taken only when no other fits (with(String), with(String, Object...)),
    # then by the written types: a literal's, a declared variable's (with(char)).
    (JAVA, "src/shop/Label.java:Label.with", {"src/shop/Shipping.java:Shipping.batch",
                                              "src/shop/Label.java:Label.with#3"}),
    (JAVA, "src/shop/Label.java:Label.with#2", {"src/shop/Shipping.java:Shipping.numbered"}),
    (JAVA, "src/shop/Label.java:Label.with#3", {"src/shop/Shipping.java:Shipping.marked"}),
    (JAVA, "src/shop/Label.java:Label.Label", {"src/shop/Shipping.java:Shipping.single",
                                               "src/shop/Shipping.java:Shipping.numbered",
                                               "src/shop/Shipping.java:Shipping.marked",
                                               "src/shop/Label.java:Label.with#2"}),
    (JAVA, "src/shop/Label.java:Label.Label#2", {"src/shop/Shipping.java:Shipping.batch",
                                                 "src/shop/Label.java:Label.with",
                                                 "src/shop/Label.java:Label.Label",
                                                 "src/shop/FragileLabel.java:"
                                                 "FragileLabel.FragileLabel#2"}),
    # super(...) and this(...) in a constructor run the base's and the class's own.
    (JAVA, "src/shop/FragileLabel.java:FragileLabel.FragileLabel#2",
     {"src/shop/FragileLabel.java:FragileLabel.FragileLabel"}),
    # Cls(...) runs Cls.__init__, or the one a base defines.
    (PY, "shop/models.py:Base.__init__", {"shop/build.py:make_base", "shop/build.py:make_child"}),
    (PY, "shop/models.py:Child", {"shop/build.py:make_child"}),
    # super() alone is Python's builtin, not a call of the base's constructor.
    (PY, "shop/models.py:Base.describe", {"shop/models.py:Child.describe"}),
    # A decorated name holds what its decorator returns: @group() makes a Group.
    (PY, "shop/cli.py:Group.command", {"shop/cli.py:setup"}),
    (PY, "shop/cli.py:Registry.command", set()),
    # A name bound to a definition in a module or a class body (`build = make_store`,
    # `session_class = Session`, `persist = _persist`) calls what it is bound to.
    (PY, "shop/aliases.py:Session.__init__", {"shop/aliases.py:Store.open"}),
    (PY, "shop/aliases.py:Session.close", {"shop/aliases.py:Store.open"}),
    (PY, "shop/aliases.py:Cache.close", set()),
    (PY, "shop/aliases.py:Store._persist", {"shop/aliases.py:Store.flush"}),
    (PY, "shop/aliases.py:make_store", {"shop/use_aliases.py:direct",
                                        "shop/use_aliases.py:through_module"}),
    (PY, "shop/aliases.py:Store.flush", {"shop/use_aliases.py:through_module"}),
    # `with f() as x`: x is what __enter__ returns (a ContextManager[X] or a
    # @contextmanager's Iterator[X]: an X); cls(...) in a class method builds cls.
    (PY, "shop/meters.py:Meter.tick", {"shop/meters.py:measure",
                                       "shop/meters.py:Panel.show"}),  # x = self.meter
    (PY, "shop/meters.py:Gauge.tick", {"shop/meters.py:watch"}),
    (PY, "shop/meters.py:Factory", {"shop/meters.py:Factory.create"}),
    (PY, "shop/meters.py:Factory.reset", {"shop/meters.py:build"}),
    (PY, "shop/meters.py:Gauge.reset", set()),
    (PY, "shop/meters.py:Registry", set()),  # a parameter named cls, not the first
    (PY, "shop/meters.py:Meter", {"shop/meters.py:meter", "shop/meters.py:Panel.__init__",
                                  "shop/meters.py:make_meter"}),  # kind: type[Meter]
    # A name defined once per branch: a call reads its own branch's definition.
    (PY, "shop/platforms.py:raw_mode", {"shop/platforms.py:read_key"}),
    (PY, "shop/platforms.py:raw_mode#2", {"shop/platforms.py:read_key#2"}),
    # A read outside the branches (a function, another module) runs either definition,
    # as jedi lists both: if/else, try/except, a class's constructor in each branch;
    # a later definition in no branch is the one that runs.
    (PY, "shop/conditional.py:terminal_width",
     {"shop/conditional.py:Console.__init__", "shop/conditional.py:render",
      "shop/use_conditional.py:layout"}),
    (PY, "shop/conditional.py:terminal_width#2",
     {"shop/conditional.py:Console.__init__#2", "shop/conditional.py:render",
      "shop/use_conditional.py:layout"}),
    (PY, "shop/conditional.py:Console#2", {"shop/conditional.py:open_console",
                                           "shop/use_conditional.py:attach"}),
    (PY, "shop/conditional.py:Console.__init__#2", {"shop/conditional.py:open_console",
                                                    "shop/use_conditional.py:attach"}),
    (PY, "shop/conditional.py:load_codec", {"shop/conditional.py:encode"}),
    (PY, "shop/conditional.py:load_codec#2", {"shop/conditional.py:encode"}),
    (PY, "shop/conditional.py:beep", set()),
    (PY, "shop/conditional.py:beep#2", {"shop/conditional.py:alert"}),
    (PY, "shop/conditional.py:Options.renderer#2", set()),  # @renderer.setter: not read
    # A receiver typed as a union (A | B, Union[A, B], a field's): a method several
    # members define runs each one's; one only one member defines, that one.
    (PY, "shop/unions.py:Markdown.render", {"shop/unions.py:show", "shop/unions.py:show_typing",
                                            "shop/unions.py:Page.paint"}),
    (PY, "shop/unions.py:Html.render", {"shop/unions.py:show", "shop/unions.py:show_typing"}),
    (PY, "shop/unions.py:Html.escape", {"shop/unions.py:clean"}),
    (PY, "shop/unions.py:Text.render", {"shop/unions.py:plain", "shop/unions.py:Page.paint"}),
    # A parameter called bare runs each definition its callers pass: a class passed
    # is constructed (its __init__ runs too).
    (PY, "shop/callbacks.py:Missing", {"shop/callbacks.py:report"}),
    (PY, "shop/callbacks.py:Extra.__init__", {"shop/callbacks.py:report"}),
    (PY, "shop/callbacks.py:first", {"shop/callbacks.py:apply"}),
    (PY, "shop/callbacks.py:second", {"shop/callbacks.py:apply"}),
    # Calling an attribute annotated type[X] constructs X.
    (PY, "shop/responses.py:Response.__init__", {"shop/responses.py:App.make_response"}),
    # self.x = param takes the parameter's annotation.
    (PY, "shop/tags.py:Serializer.tag", {"shop/tags.py:Tagger.to_json"}),
    (PY, "shop/tags.py:Other.tag", set()),
    # Inside a package, `import json` is the standard library, not shop/json.py.
    (PY, "shop/json.py:dumps", {"shop/encode.py:encode_own"}),
    # A function-local import binds only inside its function; a module-level
    # variable imported from another module keeps its constructed type.
    (PY, "shop/web.py:App.route", {"tests/test_views.py:test_index",
                                   "tests/test_views.py:test_about",
                                   "tests/test_other.py:test_other",
                                   "tests/test_other.py:test_module_variable",
                                   "tests/test_other.py:test_reexport"}),
    (PY, "shop/web.py:Router.route", set()),
    # A property reads as what it returns; a class-body assignment is an attribute of
    # the instances; a container's subscript holds its value type; isinstance() and
    # `assert isinstance()` narrow; `a, b = f()` takes a tuple's members in order.
    (PY, "shop/inference.py:Engine.start", {"shop/inference.py:Car.drive"}),
    (PY, "shop/inference.py:Motor.start", {"shop/inference.py:Car.drive",
                                           "shop/inference.py:check",
                                           "shop/inference.py:unpack"}),
    (PY, "shop/inference.py:Motor.stop", {"shop/inference.py:Car.drive",
                                          "shop/inference.py:verify",
                                          "shop/inference.py:cast_down",
                                          "shop/inference.py:drive_async"}),
    (PY, "shop/inference.py:Session.stop", {"shop/inference.py:drive_async"}),
    (PY, "shop/inference.py:Garage.park", {"shop/inference.py:Valet.store"}),
    (PY, "shop/inference.py:Lot.park", set()),
    # `except E as e` makes an E inside its handler; a comprehension's variable holds
    # what it iterates.
    (PY, "shop/inference.py:Stalled.report", {"shop/inference.py:service"}),
    (PY, "shop/inference.py:Flooded.report", {"shop/inference.py:service"}),
    (PY, "shop/inference.py:Car.pair", {"shop/inference.py:unpack",
                                        "shop/inference.py:service"}),
    (PY, "shop/inference.py:Motor.pair", set()),
    (PY, "shop/inference.py:Engine.stop", {"shop/inference.py:check",
                                           "shop/inference.py:unpack"}),
    # TypeScript narrowing: instanceof, a type guard (a function's, or a variable's type),
    # `as`, `!`, `?.`, `in`.
    (TS, "src/nodes.ts:Alias.resolve", {"src/narrow.ts:byInstanceof", "src/narrow.ts:byGuard",
                                        "src/narrow.ts:byCast", "src/kinds.ts:Walker.visit"}),
    (TS, "src/nodes.ts:Literal.resolve", {"src/narrow.ts:byGuardVariable"}),  # isT = f() as
    (TS, "src/nodes.ts:Alias.target", {"src/narrow.ts:byNonNull",
                                       "src/narrow.ts:byOptionalChain", "src/kinds.ts:viaAlias"}),
    (TS, "src/nodes.ts:Literal.target", {"src/kinds.ts:viaCast"}),  # ((v as any) as Literal)
    (TS, "src/nodes.ts:Literal.only", {"src/narrow.ts:byUnion", "src/kinds.ts:viaUnionAlias"}),
    # Type aliases stand for what they name (here or imported); `type T = {...}` is an
    # interface whose methods calls on a T run.
    (TS, "src/kinds.ts:Visitor.visit", {"src/kinds.ts:viaVisitor"}),
    (TS, "src/kinds.ts:Walker.visit", set()),
    (TS, "src/kinds_lib.ts:Registry.find", {"src/kinds.ts:viaImportedAlias"}),
    # What a container outside the index gives back, and an `any`, are unknown, not
    # outside: the one `renew` is a guess; a string[]'s element is outside.
    (TS, "src/kinds.ts:Lease.renew", {"src/kinds.ts:inContainers", "src/kinds.ts:onAny",
                                      "src/kinds.ts:Holder.refresh"}),
    # A type parameter has its constraint's members (T extends Lease); without one it
    # is unknown (U), so the one `expire` is a guess.
    (TS, "src/kinds.ts:Lease.expire", {"src/kinds.ts:Holder.refresh"}),
    # An unresolved capitalized receiver is outside (Math) only when no definition of
    # the index bears its name: script-style JavaScript shares globals between files.
    (TS, "src/globals.js:Formatter.shout", {"src/page.js:title"}),
    # A TypeScript namespace's members: helpers.tidy() through the import of `helpers`.
    (TS, "src/kinds_lib.ts:tidy", {"src/kinds.ts:onAny"}),
    # this.#private(), class-property arrow functions, super(...), new C().
    (TS, "src/store.ts:Store.#flush", {"src/store.ts:Store.save", "src/store.ts:Store.onError"}),
    (TS, "src/store.ts:Store.onError", {"src/store.ts:Store.handle"}),
    (TS, "src/privates.ts:Cache.clear", {"src/privates.ts:Client.reset",  # #cache: Cache
                                          "src/privates.ts:Pool.resetAll",
                                          "src/privates.ts:Desk.tidy"}),  # get cache()
    (TS, "src/privates.ts:Journal.clear", {"src/privates.ts:Client.reset",  # = new Journal()
                                           "src/privates.ts:Pool.flush",  # #first()'s
                                           "src/privates.ts:Desk.tidy"}),
    # A callback given to a standard container's method gets an element first.
    (TS, "src/privates.ts:Client.reset", {"src/privates.ts:Pool.resetAll",
                                          "src/privates.ts:resetSome",  # xs.filter(f)
                                          "src/privates.ts:resetMaybe"}),  # xs?.forEach
    (TS, "src/privates.ts:Decoy.reset", set()),
    # ... and a function given to a function of the index takes the types that the
    # callee's parameter (a function type, or an alias of one) gives its parameters;
    # so does the function type a variable declares for the function it holds.
    (TS, "src/callbacks.ts:Source.pull", {"src/callbacks.ts:pipeline",
                                           "src/callbacks.ts:startup",
                                           "src/callbacks.ts:drain",
                                           "src/callbacks.ts:relay",
                                           "src/callbacks.ts:relayFor"}),
    (TS, "src/callbacks.ts:Sink.next", {"src/callbacks.ts:pipeline",
                                        "src/callbacks.ts:relay",
                                        "src/callbacks.ts:makeRelay"}),
    (TS, "src/callbacks.ts:Tap.pull", set()),
    (TS, "src/callbacks.ts:Tap.next", {"src/callbacks.ts:typed"}),
    (TS, "src/store.ts:Store.constructor", {"src/store.ts:CachedStore.constructor",
                                            "src/store.ts:openStore"}),
    # `export * as ns from` is a namespace, not a star export; "./m.js" names m.ts.
    (TS, "src/lib/schemas.ts:pattern", {"src/useLib.ts:build"}),
    (TS, "src/lib/regexes.ts:pattern", {"src/useLib.ts:raw", "src/useLib.ts:rawThroughStar"}),
    # A declared field type wins over the type of what is assigned to it.
    (TS, "src/shapes.ts:Shape.area", {"src/shapes.ts:Canvas.measure"}),
    (TS, "src/shapes.ts:Circle.area", set()),
    # An object literal's method is the object's, never a module-level function.
    (TS, "src/traps.ts:traps.defineProperty", set()),
    # `this` outside a class: a declared `this: T` is a T; in an object literal bound
    # to an untyped name it is that object (a declared type decides otherwise).
    (TS, "src/receivers.ts:Annotation.extend", {"src/receivers.ts:make"}),
    (TS, "src/receivers.ts:list.splice", {"src/receivers.ts:list.clear"}),
    (TS, "src/receivers.ts:typed.splice", set()),
    (TS, "src/receivers.ts:Annotation.splice", set()),
    # A base's field typed by a type parameter has the type the subclass binds to it.
    (TS, "src/boxes.ts:Parser.parse", {"src/boxes.ts:ParserBox.run"}),
    (TS, "src/boxes.ts:Printer.parse", {"src/boxes.ts:PrinterBox.run",
                                        "src/boxes.ts:PrinterBox.again"}),  # x = a.b
    # An object literal used as a namespace: a spread namespace's exports, the
    # functions its properties name, its own methods.
    (TS, "src/kit_parts.ts:alpha", {"src/kit.ts:useKit"}),
    (TS, "src/kit_parts.ts:beta", {"src/kit.ts:useKit"}),
    (TS, "src/kit.ts:gamma", {"src/kit.ts:useKit", "src/kit.ts:kit.twice"}),
    (TS, "src/kit.ts:kit.twice", {"src/kit.ts:useKit"}),
    (TS, "src/kit_parts.ts:epsilonImpl", {"src/kit.ts:useKit"}),  # export { f as g }
    (TS, "src/kit_parts.ts:Decoy.alpha", set()),
    (TS, "src/kit_parts.ts:Decoy.gamma", set()),
    # `await` of a Promise<X> gives an X; an undeclared result is what the function
    # returns (`return new X()`, an arrow's `=> new X()`).
    (TS, "src/results.ts:Ledger.post", {"src/results.ts:viaAwait",
                                        "src/results.ts:viaAwaitInline",
                                        "src/results.ts:viaInferred"}),
    (TS, "src/results.ts:Draft.post", {"src/results.ts:viaArrow"}),
    # So is a function given as a property's value, or assigned to a member: the
    # calls in its body are its own, not the enclosing function's.
    (TS, "src/handlers.ts:Journal.record", {"src/handlers.ts:wire.ops.flush",
                                            "src/handlers.ts:wire.handlers.onSave",
                                            "src/handlers.ts:wire.handlers.onLoad"}),
    # A receiver of unknown type is never "outside the index": an unresolved
    # method's result (req.copy()) leaves the unique method's guess standing.
    (PY, "shop/redirects.py:PreparedRequest.prepare_cookies",
     {"shop/redirects.py:RedirectMixin.follow"}),
    (PY, "shop/redirects.py:Link.canonical", {"shop/redirects.py:RedirectMixin.follow"}),
    # A receiver known to be outside (declared `-> str`, the standard library's result)
    # gets no guess.
    (PY, "shop/redirects.py:Link.fold", set()),
    (PY, "shop/redirects.py:Link.geturl", set()),  # also after `parsed = parsed._replace()`
    # A mixin's self.send is its one subclass's in the library; a test's stand-in
    # subclass is not what the library's call runs.
    (PY, "shop/redirects.py:Session.send", {"shop/redirects.py:RedirectMixin.follow"}),
    (PY, "tests/test_redirects.py:StandInSession.send", set()),
    (PY, "shop/redirects.py:Response.release_conn", {"shop/redirects.py:RedirectMixin.follow"}),
    # Calling a variable that holds a class (type[X]) constructs an X.
    (PY, "shop/complete.py:ShellComplete", {"shop/complete.py:complete"}),
    (PY, "shop/complete.py:ShellComplete.source", {"shop/complete.py:complete"}),
    (PY, "shop/complete.py:Other.source", set()),
    # A loop variable holds what the iterated container's one type argument names.
    (PY, "shop/complete.py:Section.lay_out", {"shop/complete.py:layout"}),
    (PY, "shop/complete.py:Column.lay_out", set()),
    (TS, "src/kinds.ts:Walker.leave", {"src/kinds.ts:leaveAll"}),
    (TS, "src/kinds.ts:Visitor.leave", {"src/kinds.ts:viaVisitor"}),
    # A parameter's result, an Any, a list[Page]'s element: unknown, so the guess stands.
    (PY, "shop/complete.py:Page.render_page", {"shop/complete.py:complete",
                                               "shop/complete.py:render"}),
    # ES5 classes: X.prototype.m = function / arrow / defineProperty accessors are X's
    # methods; `this` in them is an X, `new X()` makes one, Base.call(this) runs Base.
    (TS, "src/cell.ts:Cell.read", {"src/cell.ts:Cell.watch", "src/cell.ts:Cell.current",
                                   "src/cell.ts:Derived.read", "src/cell.ts:readTwice"}),
    (TS, "src/cell.ts:Cell._notifyAll", {"src/cell.ts:Cell.watch"}),
    (TS, "src/cell.ts:Stream.read", {"src/cell.ts:Stream.watch"}),
    (TS, "src/cell.ts:Stream._notifyAll", set()),
    (TS, "src/cell.ts:Cell#2", {"src/cell.ts:Derived#2", "src/cell.ts", "src/cell.ts:cell"}),
    (TS, "src/queue.js:Queue.enqueue", {"src/queue.js:useQueue"}),
    (TS, "src/queue.js:Queue.drain", {"src/queue.js:Queue.enqueue"}),
    (TS, "src/queue.js:Sink.enqueue", set()),
    (TS, "src/queue.js:Sink.drain", set()),
    # Python: a name assigned twice holds, on each line, what it was last assigned.
    (PY, "shop/files.py:TOMLFile.load", {"shop/files.py:round_trip",
                                         "shop/files.py:load_named"}),
    (PY, "shop/files.py:TOMLFile.dump", {"shop/files.py:round_trip",
                                         "shop/files.py:after_snapshot"}),
    (PY, "shop/files.py:Snapshot.load", {"shop/files.py:after_snapshot"}),
    (PY, "shop/files.py:Snapshot.dump", {"shop/files.py:load_named"}),
    # Python: Ruler[int]() constructs a Ruler, a TypeVar bound to Node is a Node, a
    # Callable[..., Renderer] attribute's call gives a Renderer.
    (PY, "shop/generics.py:Ruler", {"shop/generics.py:Parser.__init__"}),
    (PY, "shop/generics.py:Ruler.push", {"shop/generics.py:Parser.add"}),
    (PY, "shop/generics.py:Stack.push", set()),
    (PY, "shop/generics.py:Node.walk", {"shop/generics.py:Parser.render"}),
    (PY, "shop/generics.py:Tree.walk", set()),
    (PY, "shop/generics.py:Renderer.render", {"shop/generics.py:Parser.render"}),
    (PY, "shop/generics.py:Plain.render", set()),
    # An attribute assigned an imported module (self.links = links) holds the module.
    (PY, "shop/links.py:parse_link", {"shop/markdown.py:State.link"}),
    # A name bound to a lambda (module, class body, function) is a function; the calls
    # in the lambda's body are made where it stands (it is an expression, as jedi reads it).
    (PY, "shop/lambdas.py:squash", {"shop/lambdas.py:Formatter.render",
                                    "shop/lambdas.py:format_all"}),
    (PY, "shop/lambdas.py:normalize", {"shop/lambdas.py", "shop/lambdas.py:Checker.__init__"}),
    (PY, "shop/lambdas.py:Formatter.shout", {"shop/lambdas.py:Formatter.render"}),
    (PY, "shop/lambdas.py:format_all.clean", {"shop/lambdas.py:format_all"}),
    # What a container holds: a literal of constructions (dict values, list items) holds
    # that class, iterated through .values() too; dict[int, V][1] is a V, and
    # tuple[A, B][1] a B.
    (PY, "shop/containers.py:Connection.send", {"shop/containers.py:Pair.push",
                                                "shop/containers.py:Pair.broadcast"}),
    (PY, "shop/containers.py:Socket.send", {"shop/containers.py:Pair.direct",
                                            "shop/containers.py:open_all",
                                            "shop/containers.py:pick"}),
    # A missing attribute is read through the class's __getattr__: its declared result.
    (PY, "shop/relay.py:Caller.call_historic", {"shop/relay.py:Manager.replay"}),
    (PY, "shop/relay.py:Other.call_historic", set()),
    # A lambda bound to self.x in a method is the instance's: self.x(...) runs it (here
    # one per branch of __init__: either); the calls in its body are __init__'s.
    (PY, "shop/lambdas.py:Checker.check", {"shop/lambdas.py:Checker.run"}),
    (PY, "shop/lambdas.py:Checker.check#2", {"shop/lambdas.py:Checker.run"}),
    (PY, "shop/legacy_links.py:parse_link", set()),
    # TypeScript: an indexed access type T['k'] is what T declares for k; a
    # factory's returned object literal has the literal's members; an object
    # literal imported from another module has its own methods.
    (TS, "src/forms.ts:FormApi.getFieldValue", {"src/forms.ts:Field.value",
                                                "src/forms.ts:metaHelper.bump"}),
    (TS, "src/forms.ts:metaHelper.bump", {"src/forms.ts:bumpAll"}),
    (TS, "src/forms.ts:metaHelper.object.reset", {"src/forms.ts:bumpAll"}),
    (TS, "src/forms.ts:Other.getFieldValue", {"src/forms.ts:resetFirst"}),
    (TS, "src/forms.ts:FormApi.reset", {"src/forms.ts:metaHelper.object.reset",
                                        "src/forms.ts:resetFirst"}),
    (TS, "src/validators.ts:validators.validate", {"src/forms.ts:check"}),
    (TS, "src/validators.ts:Schema.validate", set()),
    # console in an ES module that declares no console is the runtime's global: its
    # error is not guessed into the one method of that name.
    (TS, "src/forms.ts:Logger.error", set()),
    # A local's or a destructured parameter's call result is unknown, never outside.
    (TS, "src/forms.ts:Page.reload", {"src/forms.ts:refresh"}),
    # Go: methods on a named slice type, through a field and a chained call.
    (GO, "key.go:Key.String", {"key.go:MetaData.Describe", "key.go:Describe"}),
    (GO, "key.go:Key.add", {"key.go:MetaData.Describe"}),
    (GO, "key.go:Path.String", set()),
    (GO, "key.go:Key", set()),  # Key(parts) is a conversion
    # Type switches and type assertions give the interface's method.
    (GO, "flags.go:Marshaler.MarshalTOML", {"flags.go:Encode"}),
    (GO, "flags.go:textValue.MarshalTOML", set()),
    (GO, "flags.go:boolFlag.IsBoolFlag", {"flags.go:IsBool"}),
    (GO, "flags.go:onOff.IsBoolFlag", set()),
    # A package-level var's type is known.
    (GO, "flags.go:FlagSet.Set", {"flags.go:Set"}),
    (GO, "flags.go:Settings.Set", set()),
    # A receiver whose type is known to be outside the project is never
    # guessed into it: `error`, reflect.Type, *json.Decoder.
    (GO, "flags.go:parseError.Error", set()),
    (GO, "flags.go:FlagSet.Name", set()),
    (GO, "flags.go:Decoder.Decode", {"flags.go:Parse"}),
    # x := pkgVar keeps the variable's type; a named result, a function literal's
    # parameter and (&x) have their declared types.
    (GO, "dial.go:Dialer.Dial", {"dial.go:DialDefault"}),
    (GO, "dial.go:Dialer.Close", set()),
    (GO, "dial.go:Socket.Dial", set()),
    (GO, "dial.go:Conn.Close", {"dial.go:DialDefault", "dial.go:Broadcast", "dial.go:Walk"}),
    (GO, "dial.go:Registry.Visit", {"dial.go:Walk"}),
    (GO, "dial.go:Conn.Write", {"dial.go:Open"}),
    (GO, "dial.go:Socket.Write", {"dial.go:Broadcast"}),
    (GO, "registry.go:Entry.Reset", {"registry.go:Table.Clear"}),
    (GO, "registry.go:Gauge.Reset", set()),
    (GO, "dial.go:Socket.Close", {"dial.go:Shut"}),
    # `url, err := url.Parse(s)`: the call reads the package url; the variable's type
    # comes back to the variable itself, which knows nothing (it crashed the index).
    (GO, "shadow.go:Address.Parse", set()),
    (GO, "shadow.go:Address.Hostname", set()),
    # Ranging over or indexing a slice, a map or a named slice type gives its element;
    # so do make(T) and a copy `x := m[k]`. A named result, an alias (Command = Node),
    # new(T), a (&T{}) literal and a func type's result have their types.
    (GO, "values.go:Node.Summary", {"values.go:RangeSlice", "values.go:IndexNamed",
                                    "values.go:CallFuncParam", "values.go:MakeMap"}),
    (GO, "values.go:Group.Summary", {"values.go:RangeMap", "values.go:CallNamedFunc",
                                     "values.go:Literal"}),
    (GO, "values.go:Node.Equal", {"values.go:IndexField", "values.go:RangeNamed",
                                  "values.go:Run"}),
    (GO, "values.go:Group.Equal", {"values.go:IndexCopied", "values.go:NewValue"}),
    # Of two definitions of one name, the one `go build` compiles here is read: the
    # !purego file, and not a _windows file.
    (GO, "value/pointer_unsafe.go:PointerOf", {"pointer.go:Address"}),
    (GO, "value/pointer_unsafe.go:Pointer.IsNil", {"pointer.go:Address"}),
    (GO, "value/pointer_purego.go:PointerOf", set()),
    (GO, "value/pointer_purego.go:Pointer.IsNil", set()),
    (GO, "console_xterm.go:consoleWidth", {"pointer.go:Width"}),
    (GO, "console_windows.go:consoleWidth", set()),
]


@pytest.mark.parametrize("fixture,symbol,expected", CASES,
                         ids=[f"{c[0].rsplit('_', 1)[-1]}-{c[1].split(':')[-1]}" for c in CASES])
def test_callers_agree_with_the_type_checker(cli, fixture, symbol, expected):
    index(cli, fixture)
    assert callers(cli, symbol) == expected


def test_construction_counts_in_impact_and_risk(cli):
    index(cli, PY)
    result = cli("impact", "shop/models.py:Base.__init__", "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert set(data["direct"]) == {"shop/build.py:make_base", "shop/build.py:make_child"}
    assert data["fan_in"] == 2 and data["risk_score"] > 0


def test_a_call_never_runs_an_interface(cli):
    """`interface Point` and `const Point = (...) => ...`: Point(0) runs the value."""
    index(cli, TS)
    callees = cli("callees", "src/point.ts:origin", "--json").json()["results"]
    assert [r["id"] for r in callees] == ["src/point.ts:Point#2"]
    assert callers(cli, "src/point.ts:Point") == set()


def test_object_literal_method_is_not_a_module_level_symbol(cli):
    index(cli, TS)
    found = cli("symbols", "defineProperty", "--json").json()
    assert [r["id"] for r in found["results"]] == ["src/traps.ts:traps.defineProperty"]
    callees = cli("callees", "src/define.ts:define", "--json").json()["results"]
    assert [(r["id"], r["name"]) for r in callees] == [(None, "defineProperty")]


@pytest.mark.parametrize("fixture,symbol,expected", [
    (PY, "shop/redirects.py:RedirectMixin.follow", {"kind.fold", "urlparse", "parsed.geturl"}),
    (PY, "shop/complete.py:complete", set()),
    (PY, "shop/complete.py:layout", {"label.lay_out"}),
    (PY, "shop/complete.py:normalize", {"urlparse", "parsed._replace", "parsed.geturl"}),
    (PY, "shop/complete.py:render", {"pages.pop", "names.pop", "names.pop(...).render_page"}),
    (TS, "src/kinds.ts:inContainers", {"leases.get", "list.at", "names.at",
                                       "names.at(...)!.renew"}),
    (TS, "src/kinds.ts:onAny", set()),  # helpers.tidy: a namespace's member, not outside
    (TS, "src/kinds.ts:viaVisitor", set()),
    (TS, "src/page.js:title", {"Math.round"}),
    (TS, "src/kinds.ts:Holder.refresh", set()),
    (GO, "registry.go:Grow", {"make", "len", "append"}),
])
def test_outside_the_index_only_when_known(cli, fixture, symbol, expected):
    """`callees` says "outside the index" only for a call known to run code outside
    it; a call on a receiver of unknown type is unresolved or guessed, below 1."""
    index(cli, fixture)
    result = cli("callees", symbol, "--min-confidence", "0")
    assert result.code == 0, result.err
    outside = {line.split()[0] for line in result.out.splitlines() if "outside the index" in line}
    assert outside == expected


def test_unknown_receiver_is_unresolved_below_one(cli):
    index(cli, PY)
    data = cli("callees", "shop/redirects.py:RedirectMixin.follow", "--min-confidence", "0",
               "--json").json()["results"]
    by_line = {r["call_line"]: r for r in data}
    assert (by_line[40]["name"], by_line[40]["id"], by_line[40]["confidence"]) == \
        ("req.copy", None, 0.0)
    assert by_line[41]["id"] == "shop/redirects.py:PreparedRequest.prepare_cookies"
    assert by_line[41]["confidence"] < 1.0


def test_prototype_methods_are_indexed_as_methods(cli):
    index(cli, TS)
    found = cli("symbols", "--file", "src/queue.js", "--json").json()["results"]
    assert {(r["id"], r["kind"]) for r in found} == {
        ("src/queue.js:Queue", "function"), ("src/queue.js:Queue.enqueue", "method"),
        ("src/queue.js:Queue.drain", "method"), ("src/queue.js:useQueue", "function"),
        ("src/queue.js:Sink", "class"), ("src/queue.js:Sink.enqueue", "method"),
        ("src/queue.js:Sink.drain", "method")}
    methods = cli("symbols", "--file", "src/cell.ts", "--kind", "method", "--json").json()
    assert {r["id"] for r in methods["results"]} >= {
        "src/cell.ts:Cell.read", "src/cell.ts:Cell.watch", "src/cell.ts:Cell._notifyAll",
        "src/cell.ts:Cell.current", "src/cell.ts:Derived.read"}


def _suggestions(message: str) -> list[list[str]]:
    """The arguments an ambiguity message offers in place of the name: `e.g. ...`."""
    import re
    return [found.split() for found in re.findall(r"\(e\.g\. ([^)]+)\)", message)]


@pytest.mark.parametrize("fixture,args,paths", [
    (TS, ["read", "--file", "src/cell.ts"], 1),  # two classes of one file: --file cannot
    (TS, ["enqueue"], 1),
    (PY, ["send"], 2),                           # two files: --file can
    (PY, ["__init__"], 3),
])
def test_ambiguity_suggests_what_works(cli, fixture, args, paths):
    """Every way an ambiguity message offers picks one symbol when followed, and it
    offers --file only where --file tells the candidates apart."""
    index(cli, fixture)
    result = cli("callers", *args)
    assert result.code == 1 and "matches" in result.err
    offered = _suggestions(result.err)
    assert len(offered) >= 2
    assert ("--file" in result.err) == (paths > 1 and "--file" not in args)
    for suggestion in offered:
        extra = args[1:] if len(suggestion) == 1 else []
        followed = cli("callers", *suggestion, *extra, "--json")
        assert followed.code == 0, (suggestion, followed.err)
    candidates = cli("callers", *args, "--json").json()["candidates"]
    assert len(candidates) == len({c["id"] for c in candidates}) >= 2


def test_file_filters_the_candidates(cli):
    index(cli, PY)
    result = cli("callers", "send", "--file", "shop/redirects.py", "--json")
    assert result.code == 0, result.err
    assert result.json()["target"] == "shop/redirects.py:Session.send"


STEPS = """\
from .more import group_c


def group_a(stmt):
    return stmt


def group_b(stmt):
    return stmt


class Steps:
    def group_a(self):
        return 1

    def group_b(self):
        return 2


def group(stmt):
    for func in [
        group_a,
        # a comment between the items
        group_b,
        group_c,
    ]:
        func(stmt)
"""


def test_a_variable_iterating_definitions_calls_each_one(cli):
    """`for func in [group_a, group_b]: func(stmt)` runs every definition listed (jedi
    lists them all): one edge each, kept right when the list changes."""
    (cli.root / "pkg").mkdir()
    (cli.root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (cli.root / "pkg" / "more.py").write_text("def group_c(stmt):\n    return stmt\n",
                                               encoding="utf-8")
    (cli.root / "pkg" / "steps.py").write_text(STEPS, encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/steps.py:group_a") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/steps.py:group_b") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/more.py:group_c") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/steps.py:Steps.group_a") == set()
    (cli.root / "pkg" / "steps.py").write_text(STEPS.replace("        group_a,\n", ""),
                                               encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/steps.py:group_a") == set()
    assert callers(cli, "pkg/steps.py:group_b") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/more.py:group_c") == {"pkg/steps.py:group"}
    # another file defining `func` re-resolves the old rows of `func(stmt)`: the same
    (cli.root / "pkg" / "more.py").write_text("def group_c(stmt):\n    return stmt\n\n\n"
                                               "def func():\n    return 0\n", encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/steps.py:group_b") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/more.py:group_c") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/more.py:func") == set()


def test_an_iterated_definition_edited_elsewhere_re_resolves_its_row(cli):
    """Each item of `for func in [...]` is a row under the item's own name, so an edit
    of the file that defines it (another file than the loop's) re-resolves that row:
    a removed definition loses its caller, one re-bound elsewhere gets it, and one
    that comes back gets it back."""
    (cli.root / "pkg").mkdir()
    (cli.root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (cli.root / "pkg" / "base.py").write_text("def group_c(stmt):\n    return stmt\n",
                                               encoding="utf-8")
    reexport = "from pkg.base import group_c\n\n\ndef keep():\n    return 0\n"
    (cli.root / "pkg" / "more.py").write_text(reexport, encoding="utf-8")
    (cli.root / "pkg" / "steps.py").write_text(
        "from pkg.more import group_c\n\n\ndef group_a(stmt):\n    return stmt\n\n\n"
        "def group(stmt):\n    for func in [group_c, group_a]:\n        func(stmt)\n",
        encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/base.py:group_c") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/steps.py:group_a") == {"pkg/steps.py:group"}
    own = "def group_c(stmt):\n    return stmt\n\n\ndef keep():\n    return 0\n"
    (cli.root / "pkg" / "more.py").write_text(own, encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/base.py:group_c") == set()  # the old target, stale before
    assert callers(cli, "pkg/more.py:group_c") == {"pkg/steps.py:group"}
    (cli.root / "pkg" / "more.py").write_text("def keep():\n    return 0\n", encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/steps.py:group_a") == {"pkg/steps.py:group"}
    (cli.root / "pkg" / "more.py").write_text(reexport, encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/base.py:group_c") == {"pkg/steps.py:group"}
    assert callers(cli, "pkg/steps.py:group_a") == {"pkg/steps.py:group"}


def test_a_name_defined_in_each_branch_is_called_through_both(cli):
    """`ctxkit callers` (the installed command) lists a caller outside an if/else or
    try/except under each definition the branches make, and keeps it so when only the
    defining file is indexed again (the callers' rows are re-resolved, not re-made)."""
    index(cli, PY)
    for _ in range(2):
        for symbol in ("shop/conditional.py:terminal_width",
                       "shop/conditional.py:terminal_width#2"):
            result = cli.sub("callers", symbol, "--json")
            assert result.code == 0, result.err
            found = {r["id"] for r in result.json()["results"]}
            assert "shop/use_conditional.py:layout" in found, symbol
        with (cli.root / "shop" / "conditional.py").open("a", encoding="utf-8") as handle:
            handle.write("\n\nWIDTH = 80\n")
        assert cli.sub("index").code == 0


UNION_DOCS = """class Markdown:
    def render(self):
        return "md"


class Html:
    def render(self):
        return "html"
"""


def test_a_union_receiver_calls_each_member_kept_right_when_a_member_changes(cli):
    """`ctxkit callers` (the installed command) lists `doc.render()` on `doc: Markdown |
    Html` under both members' render; when one member loses it, its row goes and the
    other's stays."""
    (cli.root / "pkg").mkdir()
    (cli.root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (cli.root / "pkg" / "docs.py").write_text(UNION_DOCS, encoding="utf-8")
    (cli.root / "pkg" / "view.py").write_text(
        "from pkg.docs import Html, Markdown\n\n\ndef show(doc: Markdown | Html):\n"
        "    return doc.render()\n", encoding="utf-8")

    def found(symbol: str) -> set[str]:
        result = cli.sub("callers", symbol, "--json")
        assert result.code == 0, result.err
        return {r["id"] for r in result.json()["results"]}

    assert cli.sub("index").code == 0
    assert found("pkg/docs.py:Markdown.render") == {"pkg/view.py:show"}
    assert found("pkg/docs.py:Html.render") == {"pkg/view.py:show"}
    (cli.root / "pkg" / "docs.py").write_text(
        UNION_DOCS.replace("    def render(self):\n        return \"html\"\n",
                           "    pass\n"), encoding="utf-8")
    assert cli.sub("index").code == 0
    assert found("pkg/docs.py:Markdown.render") == {"pkg/view.py:show"}
    (cli.root / "pkg" / "docs.py").write_text(UNION_DOCS, encoding="utf-8")
    assert cli.sub("index").code == 0
    assert found("pkg/docs.py:Html.render") == {"pkg/view.py:show"}


def test_a_parameter_called_bare_runs_each_value_passed_kept_right_when_a_caller_changes(cli):
    """`ctxkit callers` (the installed command) lists `kind(name)` in `report(kind, name)`
    under every class its callers pass and each one's __init__; a caller edited in
    another file (one value passed no more) takes that one's rows away."""
    (cli.root / "pkg").mkdir()
    (cli.root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (cli.root / "pkg" / "kinds.py").write_text(
        "class Missing:\n    def __init__(self, name):\n        self.name = name\n\n\n"
        "class Extra:\n    def __init__(self, name):\n        self.name = name\n",
        encoding="utf-8")
    (cli.root / "pkg" / "checks.py").write_text(
        "def report(kind, name):\n    return kind(name)\n", encoding="utf-8")
    use = ("from pkg.checks import report\nfrom pkg.kinds import Extra, Missing\n\n\n"
           "def check():\n    report(Missing, 'a')\n    report(Extra, 'b')\n")
    (cli.root / "pkg" / "use.py").write_text(use, encoding="utf-8")

    def found(symbol: str) -> set[str]:
        result = cli.sub("callers", symbol, "--json")
        assert result.code == 0, result.err
        return {r["id"] for r in result.json()["results"]}

    assert cli.sub("index").code == 0
    for symbol in ("Missing", "Missing.__init__", "Extra", "Extra.__init__"):
        assert found(f"pkg/kinds.py:{symbol}") == {"pkg/checks.py:report"}, symbol
    (cli.root / "pkg" / "use.py").write_text(use.replace("    report(Extra, 'b')\n", ""),
                                             encoding="utf-8")
    assert cli.sub("index").code == 0
    assert found("pkg/kinds.py:Missing") == {"pkg/checks.py:report"}
    assert found("pkg/kinds.py:Missing.__init__") == {"pkg/checks.py:report"}
    assert found("pkg/kinds.py:Extra") == set()
    assert found("pkg/kinds.py:Extra.__init__") == set()


def test_a_lambda_bound_to_self_is_called_through_self(cli):
    """`ctxkit callers` (the installed command) lists `self.check(text)` under the
    lambda `self.check = lambda ...` that a method binds, and under none of the
    method itself."""
    index(cli, PY)
    result = cli.sub("callers", "shop/lambdas.py:Checker.check", "--json")
    assert result.code == 0, result.err
    assert {r["id"] for r in result.json()["results"]} == {"shop/lambdas.py:Checker.run"}
    result = cli.sub("callers", "shop/lambdas.py:Checker.__init__", "--json")
    assert result.code == 0, result.err
    assert "shop/lambdas.py:Checker.run" not in {r["id"] for r in result.json()["results"]}


def test_a_literal_of_constructions_holds_their_class(cli):
    """`ctxkit callers` (the installed command) lists `self.conn["client"].send()` on
    `self.conn = {"client": Connection(), ...}` under Connection.send, not Socket's."""
    index(cli, PY)
    result = cli.sub("callers", "shop/containers.py:Connection.send", "--json")
    assert result.code == 0, result.err
    assert "shop/containers.py:Pair.push" in {r["id"] for r in result.json()["results"]}
    result = cli.sub("callers", "shop/containers.py:Socket.send", "--json")
    assert result.code == 0, result.err
    assert "shop/containers.py:Pair.push" not in {r["id"] for r in result.json()["results"]}


def test_a_missing_attribute_has_the_type_getattr_returns(cli):
    """`ctxkit callers` (the installed command) lists `self.hook.on_start.call_historic()`
    under Caller.call_historic when `hook`'s class declares `__getattr__ -> Caller`."""
    index(cli, PY)
    result = cli.sub("callers", "shop/relay.py:Caller.call_historic", "--json")
    assert result.code == 0, result.err
    assert {r["id"] for r in result.json()["results"]} == {"shop/relay.py:Manager.replay"}


def _write(cli, files: dict[str, str]) -> None:
    for name, text in files.items():
        (cli.root / name).parent.mkdir(parents=True, exist_ok=True)
        (cli.root / name).write_text(text, encoding="utf-8")
    result = cli("index")
    assert result.code == 0, result.err


def test_typescript_parameter_names_keep_their_dollar(cli):
    """`$pos: ResolvedPos` (prosemirror's convention) types `$pos`, as `pos: T` does:
    the `$` is part of a JavaScript name, not a sigil."""
    _write(cli, {"pos.ts": (
        "export class ResolvedPos {\n  node(depth: number): number { return depth }\n}\n"
        "export class Mark {\n  node(depth: number): number { return depth }\n}\n"
        "export function joinable($before: ResolvedPos, $after: ResolvedPos | null) {\n"
        "  return $before.node(1) + ($after)!.node(2)\n}\n")})
    assert callers(cli, "pos.ts:ResolvedPos.node") == {"pos.ts:joinable"}
    assert callers(cli, "pos.ts:Mark.node") == set()


def test_a_function_variable_hides_the_module_definition(cli):
    """`F = make_form(...)` inside a test makes F a variable of that function: `F()`
    there is not the module's class F (Python's scoping), elsewhere it is."""
    _write(cli, {"forms.py": (
        "class Form:\n    def __init__(self, data=None):\n        self.data = data\n\n\n"
        "def make_form(**fields):\n    return type('F', (Form,), fields)\n\n\n"
        "class F(Form):\n    pass\n\n\n"
        "def test_local():\n    F = make_form(a=1)\n    return F(1)\n\n\n"
        "def test_module():\n    return F(2)\n")})
    assert callers(cli, "forms.py:F") == {"forms.py:test_module"}
    assert callers(cli, "forms.py:Form.__init__") == {"forms.py:test_module"}


def test_a_static_field_constructs_its_own_class(cli):
    """`static empty = new StepMap([])` in StepMap's body runs StepMap's constructor;
    in Python a class body cannot name its own class (bound after the body runs)."""
    _write(cli, {"map.ts": (
        "export class StepMap {\n  constructor(readonly ranges: number[]) {}\n"
        "  static empty = new StepMap([])\n}\n"),
        "tree.py": ("class Node:\n    def __init__(self):\n        pass\n\n\n"
                    "class Tree:\n    root = Node()\n")})
    assert callers(cli, "map.ts:StepMap.constructor") == {"map.ts:StepMap"}
    assert callers(cli, "tree.py:Node.__init__") == {"tree.py:Tree"}


def test_super_with_arguments_starts_at_the_bases(cli):
    """Python 2's spelling `super(HTMLRenderer, self).__init__()` is `super().__init__()`."""
    _write(cli, {"render.py": (
        "class BaseRenderer:\n    def __init__(self):\n        self.x = 1\n\n\n"
        "class HTMLRenderer(BaseRenderer):\n    def __init__(self):\n"
        "        super(HTMLRenderer, self).__init__()\n")})
    assert callers(cli, "render.py:BaseRenderer.__init__") == {"render.py:HTMLRenderer.__init__"}


def test_java_methods_and_variables_are_apart(cli):
    """In Java a local variable named as a method does not hide it (`total(total)` calls
    the method), where Python's variable would."""
    _write(cli, {"src/Shop.java": (
        "public class Shop {\n  static int total(int a) { return a; }\n"
        "  int sum(int a) {\n    int total = a + 1;\n    return total(total);\n  }\n}\n")})
    assert callers(cli, "src/Shop.java:Shop.total") == {"src/Shop.java:Shop.sum"}

def test_constructor_parameter_properties_are_fields(cli):
    """`constructor(readonly content: Node[], public other: Node)` declares the fields
    `this.content` and `this.other` (TypeScript's parameter properties)."""
    _write(cli, {"frag.ts": (
        "export class Node {\n  cut(a: number): Node { return this }\n}\n"
        "export class Mark {\n  cut(a: number): Mark { return this }\n}\n"
        "export class Fragment {\n"
        "  constructor(readonly content: readonly Node[], private other?: Mark) {}\n"
        "  first() { return this.content[0].cut(1) }\n"
        "  second() { return this.other!.cut(2) }\n}\n")})
    assert callers(cli, "frag.ts:Node.cut") == {"frag.ts:Fragment.first"}
    assert callers(cli, "frag.ts:Mark.cut") == {"frag.ts:Fragment.second"}


def test_a_union_type_argument_is_either_member(cli):
    """The element of `(Add | Remove)[]` is an Add or a Remove, never the last member
    alone: a method both define is left unresolved, one only Add defines is Add's."""
    _write(cli, {"steps.ts": (
        "export class Add {\n  apply(a: number) { return a }\n  only() { return 1 }\n}\n"
        "export class Remove {\n  apply(a: number) { return a }\n}\n"
        "export function run(steps: (Add | Remove)[], more: Array<Add | Remove>) {\n"
        "  steps[0].apply(1)\n  steps[0].only()\n  more[0].apply(2)\n}\n")})
    assert callers(cli, "steps.ts:Remove.apply") == set()
    assert callers(cli, "steps.ts:Add.apply") == set()
    assert callers(cli, "steps.ts:Add.only") == {"steps.ts:run"}


def test_a_variable_copied_from_an_item_holds_the_element(cli):
    """`found = self.content[i]` / `let found = this.content[i]`: found is what the
    container holds, as a call on `self.content[i]` itself reads it."""
    _write(cli, {"frag.py": (
        "class Node:\n    def cut(self):\n        return self\n\n\n"
        "class Mark:\n    def cut(self):\n        return self\n\n\n"
        "class Frag:\n    def __init__(self, content: list[Node]):\n"
        "        self.content = content\n\n"
        "    def child(self, i):\n        found = self.content[i]\n        return found.cut()\n"),
        "frag.ts": (
        "export class Node {\n  cut(): Node { return this }\n}\n"
        "export class Mark {\n  cut(): Mark { return this }\n}\n"
        "export class Frag {\n  content: Mark[] = []\n"
        "  child(index: number) {\n    let found = this.content[index]\n"
        "    return found.cut()\n  }\n}\n")})
    assert callers(cli, "frag.py:Node.cut") == {"frag.py:Frag.child"}
    assert callers(cli, "frag.py:Mark.cut") == set()
    assert callers(cli, "frag.ts:Mark.cut") == {"frag.ts:Frag.child"}
    assert callers(cli, "frag.ts:Node.cut") == set()


def test_an_undeclared_result_is_the_type_all_its_returns_agree_on(cli):
    """`return this` in one branch and `return new Fragment()` in another: a Fragment
    (a returned `undefined` adds nothing); returns of two classes give no type."""
    _write(cli, {"frag.ts": (
        "export class Node {\n  append(a: number) { return a }\n}\n"
        "export class Fragment {\n  append(other: Fragment) { return other }\n"
        "  cut(from: number) {\n    if (from == 0) return this\n    return new Fragment()\n  }\n"
        "  maybe(from: number) {\n    if (from == 0) return undefined\n"
        "    return new Fragment()\n  }\n"
        "  mixed(from: number) {\n    if (from == 0) return new Node()\n"
        "    return new Fragment()\n  }\n}\n"
        "export function cutting(f: Fragment) { return f.cut(0).append(f) }\n"
        "export function maybe(f: Fragment) { return f.maybe(0)!.append(f) }\n"
        "export function mixed(f: Fragment) { return f.mixed(0).append(f) }\n")})
    assert callers(cli, "frag.ts:Fragment.append") == {"frag.ts:cutting", "frag.ts:maybe"}
    assert callers(cli, "frag.ts:Node.append") == set()


def test_an_edited_value_alias_re_resolves_its_callers(cli):
    """`ib = attrib` in a package's __init__ binds ib to attrib; editing that binding
    re-resolves the calls that read `pkg.ib()` and an imported `ib()` in other files
    (the alias was not among the run's affected names: the calls kept the old target)."""
    _write(cli, {
        "pkg/_make.py": "def attrib(default=None):\n    return default\n\n\n"
                        "def attrs(cls=None):\n    return cls\n",
        "pkg/__init__.py": "from ._make import attrib, attrs\n\nib = attrib\n",
        "use.py": "import pkg\nfrom pkg import ib\n\n\ndef make():\n"
                  "    return pkg.ib(ib())\n\n\nclass C:\n    x = pkg.ib()\n"})
    assert callers(cli, "pkg/_make.py:attrib") == {"use.py:make", "use.py:C"}
    assert callers(cli, "pkg/_make.py:attrs") == set()
    (cli.root / "pkg" / "__init__.py").write_text(
        "from ._make import attrib, attrs\n\nib = attrs\n", encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "pkg/_make.py:attrib") == set()
    assert callers(cli, "pkg/_make.py:attrs") == {"use.py:make", "use.py:C"}


CHAINS = "graph_chains"


@pytest.mark.parametrize(("receipt", "basket", "callers_of_receipt"), [
    ("shop.py:Receipt.total", "shop.py:Basket.total", {"shop.py:pay", "shop.py:pay_later"}),
    ("shop.ts:Receipt.total", "shop.ts:Basket.total", {"shop.ts:pay", "shop.ts:Till.pay"}),
    ("shop.go:Receipt.Total", "shop.go:Basket.Total", {"shop.go:Pay"}),
])
def test_a_variable_holds_what_the_last_call_of_a_chain_returns(cli, receipt, basket,
                                                                callers_of_receipt):
    # receipt = store.basket().checkout(...) is a Receipt, not the Basket that
    # basket() gives: receipt.total() is Receipt.total, and Basket.total has no caller
    index(cli, CHAINS)
    assert callers(cli, receipt) == callers_of_receipt
    assert callers(cli, basket) == set()


def test_an_untyped_parameter_holds_what_its_callers_pass(cli):
    """`def render(item): item.as_string()` runs what the callers pass (jedi's reading of
    Python): Key's when every caller passes a Key; the default where no caller passes
    the parameter; each one's when callers pass two classes that both define it (a row
    for each); outside the index when only strings are passed. Editing a caller in
    another file moves them."""
    _write(cli, {
        "items.py": ("class Key:\n    def as_string(self):\n        return 'k'\n\n\n"
                     "class Table:\n    def as_string(self):\n        return 't'\n\n\n"
                     "def hashkey(*a):\n    return a\n\n\n"
                     "def typedkey(*a):\n    return a\n\n\n"
                     "def render(item):\n    return item.as_string()\n\n\n"
                     "def either(item):\n    return item.as_string()\n\n\n"
                     "def text(item):\n    return item.as_string()\n\n\n"
                     "def cached(key=hashkey):\n    return key(1)\n\n\n"
                     "def passed(key=hashkey):\n    return key(2)\n\n\n"
                     "class Cache:\n    def get(self, key=hashkey):\n        return key(3)\n"),
        "use.py": ("from items import Key, Table, render, either, text, passed, typedkey\n\n\n"
                   "def main():\n    k = Key()\n    render(k)\n    either(Key())\n"
                   "    either(item=Table())\n    text('a')\n    passed(key=typedkey)\n")})
    assert callers(cli, "items.py:Key.as_string") == {"items.py:render", "items.py:either"}
    assert callers(cli, "items.py:Table.as_string") == {"items.py:either"}
    assert callers(cli, "items.py:hashkey") == {"items.py:cached", "items.py:Cache.get"}
    assert callers(cli, "items.py:typedkey") == {"items.py:passed"}
    result = cli("callees", "items.py:text", "--json", "--min-confidence", "0")
    assert [(r["id"], r["confidence"]) for r in result.json()["results"]] == [(None, 1.0)]
    (cli.root / "use.py").write_text(
        "from items import Table, render\n\n\ndef main():\n    render(Table())\n",
        encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "items.py:Key.as_string") == set()
    assert callers(cli, "items.py:Table.as_string") == {"items.py:render"}
    assert callers(cli, "items.py:hashkey") == {"items.py:cached", "items.py:Cache.get",
                                                 "items.py:passed"}


def test_with_a_chain_as_x_holds_what_the_last_calls_enter_gives(cli):
    # with store.basket().checkout(...) as slip: slip is Receipt.__enter__'s Slip
    index(cli, CHAINS)
    assert callers(cli, "shop.py:Slip.total") == {"shop.py:pay_inside"}


def test_an_attribute_set_to_a_class_is_called_as_that_class(cli):
    """`self.machine_cls = Machine` (imported, or a class of the same file) holds the
    class: `self.machine_cls(...)` constructs a Machine, and the instance it gives
    calls Machine's methods, in the method that set it and in the others, as jedi
    reads them; an attribute set to an instance stays an instance."""
    _write(cli, {"core.py": (
        "class Machine:\n    def __init__(self, states=None):\n        self.states = states\n\n"
        "    def add(self, name):\n        return name\n\n\n"
        "class Other:\n    def add(self, name):\n        return name\n"),
        "test_core.py": (
        "from core import Machine\n\n\n"
        "class TestCore:\n    def setUp(self):\n        self.machine_cls = Machine\n\n"
        "    def test_add(self):\n        m = self.machine_cls(states=1)\n"
        "        m.add('x')\n\n    def test_alias(self):\n        k = self.machine_cls\n"
        "        k().add('y')\n"),
        "local.py": (
        "class Local:\n    def add(self, name):\n        return name\n\n\n"
        "class Uses:\n    def __init__(self):\n        self.kind = Local\n\n"
        "    def run(self):\n        return self.kind().add('z')\n")})
    assert callers(cli, "core.py:Machine") == {"test_core.py:TestCore.test_add",
                                               "test_core.py:TestCore.test_alias"}
    assert callers(cli, "core.py:Machine.add") == {"test_core.py:TestCore.test_add",
                                                   "test_core.py:TestCore.test_alias"}
    assert callers(cli, "core.py:Other.add") == set()
    assert callers(cli, "local.py:Local.add") == {"local.py:Uses.run"}


def test_a_closure_calls_what_its_enclosing_function_is_passed(cli):
    """`def cached(cache, key=hashkey): def decorator(f): def wrapper(*a): key(*a)`:
    the nested wrapper calls what cached's callers pass for key (a decorator's
    arguments included), as jedi reads a closure's free name; a function between
    that assigns the name hides the outer parameter."""
    _write(cli, {"keys.py": (
        "def hashkey(*args):\n    return args\n\n\n"
        "def typedkey(*args):\n    return args\n\n\n"
        "def other(*args):\n    return args\n"),
        "deco.py": (
        "import keys\n\n\n"
        "def cached(cache, key=keys.hashkey):\n    def decorator(func):\n"
        "        def wrapper(*args):\n            return cache.get(key(*args)) or func(*args)\n"
        "        return wrapper\n    return decorator\n\n\n"
        "def hidden(key=keys.other):\n    def inner():\n        key = len\n"
        "        return key('x')\n    return inner\n\n\n"
        "@cached({}, key=keys.typedkey)\ndef f(x):\n    return x\n")})
    assert callers(cli, "keys.py:typedkey") == {"deco.py:cached.decorator.wrapper"}
    assert callers(cli, "keys.py:other") == set()


def test_a_version_or_platform_branch_the_interpreter_skips_defines_nothing_called(cli):
    """`if sys.version_info >= (3, 10): def f() ... else: def f() ...` (and sys.platform
    tests, through not / and / or): a call of f runs the definition of the branch the
    running Python takes, as mypy, pyright and jedi decide such tests; the other one
    stays a symbol, and its own calls stay linked. A test that also reads anything
    else decides nothing: both definitions stay."""
    _write(cli, {"compat.py": (
        "import sys\n\n"
        "if sys.version_info >= (3, 10):\n    def is_union(obj):\n        return obj\n"
        "else:\n    def is_union(obj):\n        return helper(obj)\n\n\n"
        "def helper(obj):\n    return obj\n\n\n"
        "if sys.platform == 'no-such-os' or sys.version_info[:2] < (3, 0):\n"
        "    def where():\n        return 'w'\n"
        "elif not sys.version_info >= (99, 0):\n    def where():\n        return 'here'\n"
        "else:\n    def where():\n        return 'later'\n\n\n"
        "if sys.version_info >= (3, 10) and obscure():\n    def both():\n        return 1\n"
        "else:\n    def both():\n        return 2\n"),
        "use.py": (
        "from compat import is_union, where, both\n\n\n"
        "def run(x):\n    return is_union(x), where(), both()\n")})
    assert callers(cli, "compat.py:is_union") == {"use.py:run"}
    assert callers(cli, "compat.py:is_union#2") == set()
    assert callers(cli, "compat.py:helper") == {"compat.py:is_union#2"}
    assert callers(cli, "compat.py:where") == set()
    assert callers(cli, "compat.py:where#2") == {"use.py:run"}
    assert callers(cli, "compat.py:where#3") == set()
    assert callers(cli, "compat.py:both") == {"use.py:run"}
    assert callers(cli, "compat.py:both#2") == {"use.py:run"}


def test_a_package_binding_replaces_its_submodule_and_counts_when_conditional(cli):
    """`from .testing import kit as testing` in a package's __init__ rebinds
    `pkg.testing` to the class (the import binds the name after the submodule), and
    a binding made under a module-level `if` or `try` is the module's too; an alias of
    either (`ppt = pp.testing`) works as a base class and as a receiver."""
    _write(cli, {
        "pkg/testing.py": "class kit:\n    class Mixin:\n        def check(self):\n"
                          "            return 1\n",
        "pkg/__init__.py": "from .testing import kit as testing\n\n"
                           "if 'kit' not in globals():\n    kit = testing\n",
        "tests/test_kit.py": "import pkg as pp\n\nppt = pp.testing\nalso = pp.kit\n\n\n"
                             "class T(ppt.Mixin):\n    def test_one(self):\n"
                             "        self.check()\n\n\n"
                             "class U(also.Mixin):\n    def test_two(self):\n"
                             "        self.check()\n\n\n"
                             "def test_three():\n    pp.testing.Mixin().check()\n"})
    assert callers(cli, "pkg/testing.py:kit.Mixin.check") == {
        "tests/test_kit.py:T.test_one", "tests/test_kit.py:U.test_two",
        "tests/test_kit.py:test_three"}


def test_a_wrapper_typed_to_return_its_argument_passes_it_through(cli):
    """`parseString = replaced_by_pep8("parseString", parse_string)`, where the wrapper
    is declared `(name: str, fn: C) -> C` with C a TypeVar (here imported from where it
    is made), binds parseString to parse_string, in a class body and in a module, as
    the type checker reads it; a function declared `(node: Node) -> Node` passes
    nothing through, since Node is a class, not a type variable."""
    _write(cli, {
        "lib/types.py": "from typing import Callable, TypeVar\n\n"
                        "C = TypeVar('C', bound=Callable)\n",
        "lib/util.py": "from .types import C\n\n\nclass Node:\n    pass\n\n\n"
                       "def replaced_by_pep8(compat_name: str, fn: C) -> C:\n"
                       "    def inner(*args, **kwargs):\n        return fn(*args, **kwargs)\n"
                       "    return inner\n\n\n"
                       "def same(node: Node) -> Node:\n    return Node()\n",
        "lib/core.py": "from .util import replaced_by_pep8, same\n\n\n"
                       "class Element:\n    def parse_string(self, text):\n        return text\n\n"
                       "    def scan(self, text):\n        return text\n\n"
                       "    parseString = replaced_by_pep8('parseString', fn=parse_string)\n"
                       "    scanString = same(scan)\n\n\n"
                       "def one_of(words):\n    return Element()\n\n\n"
                       "oneOf = replaced_by_pep8('oneOf', one_of)\n",
        "use.py": "from lib.core import Element, oneOf\n\n\n"
                  "def run(e: Element):\n    e.parseString('x')\n    e.scanString('y')\n"
                  "    return oneOf('a b')\n"})
    assert callers(cli, "lib/core.py:Element.parse_string") == {"use.py:run"}
    assert callers(cli, "lib/core.py:one_of") == {"use.py:run"}
    assert callers(cli, "lib/core.py:Element.scan") == set()


def test_an_operator_expression_has_the_type_its_method_returns(cli):
    """`a + b` calls type(a).__add__ (Python's data model), `~a` __invert__, and
    `"x" + a` the reflected __radd__ of the right operand, at the loosest operator:
    `a | b + b` is an __or__. A comparison gives no operand's type."""
    _write(cli, {"ops.py": (
        "class El:\n"
        "    def __add__(self, other) -> 'El':\n        return El()\n\n"
        "    def __radd__(self, other) -> 'El':\n        return El()\n\n"
        "    def __or__(self, other) -> 'Alt':\n        return Alt()\n\n"
        "    def __invert__(self) -> 'Alt':\n        return Alt()\n\n"
        "    def __lt__(self, other) -> 'Alt':\n        return Alt()\n\n"
        "    def parse(self, text):\n        return text\n\n\n"
        "class Alt(El):\n    def pick(self):\n        return 1\n\n\n"
        "class Other:\n    def pick(self):\n        return 2\n\n    def parse(self, text):\n"
        "        return text\n\n\n"
        "a = El()\nb = El()\nchained = (a + b).parse('x') + b\nalt = a | b + b\n"
        "lit = 'x' + a\n\n\n"
        "def use():\n    chained.parse('y')\n    alt.pick()\n    lit.parse('w')\n"
        "    (~a).pick()\n    (a + b | a).pick()\n\n\n"
        "def compare():\n    (a < b).pick()\n")})
    assert callers(cli, "ops.py:El.parse") == {"ops.py", "ops.py:use"}
    assert callers(cli, "ops.py:Alt.pick") == {"ops.py:use"}
    assert callers(cli, "ops.py:Other.pick") == set()


def test_php_reads_docblock_types_and_fields_assigned_from_parameters(cli):
    """PHP code typed before PHP 7 writes its types in docblocks: `@param Scanner
    $scanner` types an untyped parameter, `@var Formatter` an untyped property,
    `@return Scanner` an undeclared result; `$this->scanner = $scanner` gives the
    property the parameter's type, and a chained call `$this->make()->consume()`
    reads the first call's result. Two classes define each method, so no guess by
    a unique name can give these callers."""
    _write(cli, {"src/A.php": (
        "<?php\nnamespace App;\n\n"
        "class Scanner {\n    public function consume(): string { return ''; }\n}\n\n"
        "class Formatter {\n    public function format(): string { return ''; }\n}\n\n"
        "class Other {\n    public function consume(): string { return ''; }\n"
        "    public function format(): string { return ''; }\n}\n\n"
        "class Tok {\n    protected $scanner;\n    /** @var Formatter */\n    private $fmt;\n\n"
        "    /**\n     * @param Scanner $scanner\n     */\n"
        "    public function __construct($scanner, $fmt)\n    {\n"
        "        $this->scanner = $scanner;\n    }\n\n"
        "    public function run(): void\n    {\n        $this->scanner->consume();\n"
        "        $this->fmt->format();\n    }\n\n"
        "    /** @return Scanner */\n    public function make() { return $this->scanner; }\n\n"
        "    public function chain(): void { $this->make()->consume(); }\n}\n")})
    assert callers(cli, "src/A.php:Scanner.consume") == {"src/A.php:Tok.run",
                                                         "src/A.php:Tok.chain"}
    assert callers(cli, "src/A.php:Formatter.format") == {"src/A.php:Tok.run"}
    assert callers(cli, "src/A.php:Other.consume") == set()


def test_php_instanceof_narrows_where_the_test_is_known(cli):
    """`if (! $node instanceof Ref || ...) { return; }` makes $node a Ref after the
    if (and in the right operand of `||`), `continue` in a loop body too, as do a
    conditional's arm and the branch of a positive test; a test that may have
    failed (`$n instanceof Ref || $b`, then leaving) tells nothing after it."""
    _write(cli, {"a.php": (
        "<?php\nnamespace App;\n\n"
        "class Node { public function label(): string { return ''; } }\n"
        "class Ref extends Node { public function target(): string { return ''; } }\n"
        "class Other { public function target(): string { return ''; } }\n\n"
        "function early(Node $node): void {\n"
        "    if (! $node instanceof Ref || $node->target() === '') {\n        return;\n    }\n"
        "    $node->target();\n}\n\n"
        "function loop(array $xs): void {\n    foreach ($xs as $node) {\n"
        "        if (!($node instanceof Ref)) {\n            continue;\n        }\n"
        "        $node->target();\n    }\n}\n\n"
        "function tern(Node $n): string {\n"
        "    return $n instanceof Ref ? $n->target() : '';\n}\n\n"
        "function unknown(Node $n, bool $b): void {\n"
        "    if ($n instanceof Ref || $b) {\n        return;\n    }\n    $n->target();\n}\n")})
    assert callers(cli, "a.php:Ref.target") == {"a.php:early", "a.php:loop", "a.php:tern"}
    assert callers(cli, "a.php:Other.target") == set()


ALIASES = '''from typing import Callable, Optional

from pkg.clients import Client

ClientFactory = Callable[..., Client]
MaybeClient = Optional[Client]
ROUTES = {"a": Client}
Picked = ROUTES["a"]


def use_factory(factory: ClientFactory) -> None:
    client = factory("app")
    client.get("/")
    factory("x").post("/")


def use_maybe(c: MaybeClient) -> None:
    if c is not None:
        c.get("/")
'''


def test_a_type_alias_names_the_type_it_aliases(cli):
    """PEP 484's implicit aliases (`Factory = Callable[..., Client]`, `Maybe =
    Optional[Client]`) type what is annotated with them, as jedi reads them; two classes
    share the method names, so no guess can pass."""
    write_files(cli, {"pkg/__init__.py": "", "pkg/use.py": ALIASES,
                      "pkg/clients.py": two_classes("Client", "get", "post")})
    assert cli("index").code == 0
    assert callers(cli, "pkg/clients.py:Client.get") == {"pkg/use.py:use_factory",
                                                         "pkg/use.py:use_maybe"}
    assert callers(cli, "pkg/clients.py:Client.post") == {"pkg/use.py:use_factory"}
    assert callers(cli, "pkg/clients.py:Other.get") == set()


def test_a_pytest_fixture_parameter_holds_what_the_fixture_returns(cli):
    """pytest passes a test's parameter the value of the fixture of its name, from the
    test's file or a conftest.py of its folder or one above (jedi reads it so); two
    classes share the method name, so no guess can pass."""
    write_files(cli, {
        "pkg/__init__.py": "", "pkg/env.py": two_classes("Environment", "from_string"),
        "tests/conftest.py":
            "import pytest\n\nfrom pkg.env import Environment, Other\n\n\n@pytest.fixture\n"
            "def env():\n    return Environment()\n\n\n@pytest.fixture\n"
            "def other():\n    made = Other()\n    yield made\n    del made\n",
        "tests/unit/test_env.py":
            "def test_render(env):\n    env.from_string('x')\n\n\n"
            "class TestOther:\n    def test_method(self, env):\n"
            "        env.from_string('y')\n\n\n"
            "def helper(env):\n    env.from_string('z')\n\n\n"
            "def test_yielded(other):\n    other.from_string('w')\n"})
    assert cli("index").code == 0
    assert callers(cli, "pkg/env.py:Environment.from_string") == {
        "tests/unit/test_env.py:test_render", "tests/unit/test_env.py:TestOther.test_method"}
    # a fixture that yields gives the test what it yields
    assert callers(cli, "pkg/env.py:Other.from_string") == {
        "tests/unit/test_env.py:test_yielded"}


def test_a_methods_first_parameter_is_its_instance_whatever_its_name(cli):
    """``def atan2(ctx, y, x)`` in a class: ctx is the instance (mpmath names it so), with
    what the class inherits; the parameters after it take the callers' arguments in
    order. A @staticmethod's first parameter is an argument like any other."""
    write_files(cli, {
        "calc.py": two_classes("Handler", "convert") +
        "class Base:\n    def convert(self, text):\n        return text\n\n\n"
        "class Context(Base):\n    def atan2(ctx, y, handler):\n"
        "        handler.convert(y)\n        return ctx.convert(y)\n\n"
        "    @staticmethod\n    def helper(value, text):\n        return value.convert(text)\n\n\n"
        "def run():\n    Context().atan2(1, Handler())\n"})
    assert cli("index").code == 0
    assert callers(cli, "calc.py:Base.convert") == {"calc.py:Context.atan2"}
    assert callers(cli, "calc.py:Handler.convert") == {"calc.py:Context.atan2"}
    assert callers(cli, "calc.py:Other.convert") == set()


def test_a_name_bound_in_branches_calls_each_function_it_may_hold(cli):
    """``if gmpy: mul = gmpy_mul`` / ``else: mul = python_mul``: a call of mul, here or
    through an import, may run either (jedi lists both); a binding in no branch
    replaces the ones before it, so ``add = first; add = second`` calls second."""
    backend = ("import os\n\nGMPY = os.environ.get('GMPY')\n\n\n"
               "def python_mul(a, b):\n    return a * b\n\n\n"
               "def gmpy_mul(a, b):\n    return a * b\n\n\n"
               "def first_add(a, b):\n    return a + b\n\n\n"
               "def second_add(a, b):\n    return a + b\n\n\n"
               "if GMPY:\n    mul = gmpy_mul\nelse:\n    mul = python_mul\n\n"
               "add = first_add\nadd = second_add\n")
    write_files(cli, {
        "lib/__init__.py": "", "lib/backend.py": backend,
        "lib/use.py": "from lib import backend\nfrom lib.backend import add, mul\n\n\n"
                      "def square(x):\n    return mul(x, x)\n\n\n"
                      "def twice(x):\n    return backend.mul(x, 2) + add(x, x)\n",
        # through a package that re-exports it
        "pk/__init__.py": "from lib.backend import mul\n",
        "pk/two.py": "from pk import mul\n\n\ndef cube(x):\n    return mul(x, mul(x, x))\n"})
    assert cli("index").code == 0
    both = {"lib/use.py:square", "lib/use.py:twice", "pk/two.py:cube"}
    assert callers(cli, "lib/backend.py:python_mul") == both
    assert callers(cli, "lib/backend.py:gmpy_mul") == both
    assert callers(cli, "lib/backend.py:first_add") == set()
    assert callers(cli, "lib/backend.py:second_add") == {"lib/use.py:twice"}
    # the branches edited away: one function again
    (cli.root / "lib/backend.py").write_text(
        backend.replace("if GMPY:\n    mul = gmpy_mul\nelse:\n    mul = python_mul\n",
                        "mul = python_mul\n"), encoding="utf-8")
    assert cli("index").code == 0
    assert callers(cli, "lib/backend.py:gmpy_mul") == set()
    assert callers(cli, "lib/backend.py:python_mul") == both


def test_an_attribute_the_class_lacks_runs_what_its_getattr_returns(cli):
    """peewee's ``fn.COUNT(x)``: Function has no COUNT, so Python asks its
    ``__getattr__``, which returns its nested ``decorator``; a method the class has is
    found as always, and a class without the hook gives nothing."""
    write_files(cli, {"f.py":
        "class Function:\n    def over(self):\n        return self\n\n"
        "    def __getattr__(self, attr):\n        def decorator(*args):\n"
        "            return Function()\n        return decorator\n\n\n"
        "class Plain:\n    def over(self):\n        return self\n\n"
        "    def decorator(self):\n        return self\n\n\n"
        "fn = Function()\n\n\ndef query(plain: Plain):\n    fn.COUNT(1)\n"
        "    plain.SUM(2)\n    return fn.over()\n",
        # the variable through a star import, and a parameter of that name
        "g.py": "from f import *\n\n\ndef other():\n    fn.MAX(2)\n\n\n"
                "def shadow(fn):\n    fn.MIN(3)\n"})
    assert cli("index").code == 0
    assert callers(cli, "f.py:Function.__getattr__.decorator") == {"f.py:query", "g.py:other"}
    assert callers(cli, "f.py:Function.over") == {"f.py:query"}
    assert callers(cli, "f.py:Plain.decorator") == set()


def test_a_module_value_made_by_a_factory_runs_the_function_it_returns(cli):
    """``mpf_pi = def_constant(pi_fixed)`` (mpmath): the factory returns its nested f,
    so a call of mpf_pi, here or imported, runs f."""
    write_files(cli, {
        "c.py": "def def_constant(fixed):\n    def f(prec):\n        return fixed(prec)\n"
                "    return f\n\n\ndef pi_fixed(prec):\n    return prec\n\n\n"
                "mpf_pi = def_constant(pi_fixed)\n\n\ndef area(r):\n    return mpf_pi(53) * r\n",
        "d.py": "from c import mpf_pi\n\n\ndef circ(r):\n    return mpf_pi(10) * r\n"})
    assert cli("index").code == 0
    assert callers(cli, "c.py:def_constant.f") == {"c.py:area", "d.py:circ"}
    assert callers(cli, "c.py:pi_fixed") == {"c.py:def_constant.f"}


def test_a_field_set_from_an_untyped_parameter_holds_what_callers_pass(cli):
    """``self.db = db`` in ``__init__`` with db untyped: ``self.db.execute_sql()``
    runs the method of what ``Savepoint(self)`` passes (jedi reads the field so); a
    self passed to another class's constructor is an argument, not the bound self."""
    write_files(cli, {"s.py": two_classes("Database", "execute_sql") +
        "class Pool(Database):\n    def savepoint(self):\n        return Savepoint(self)\n\n\n"
        "class Savepoint:\n    def __init__(self, db, sid=None):\n        self.db = db\n"
        "        self.sid = sid\n\n    def commit(self):\n"
        "        return self.db.execute_sql('RELEASE')\n"})
    assert cli("index").code == 0
    assert callers(cli, "s.py:Database.execute_sql") == {"s.py:Savepoint.commit"}
    assert callers(cli, "s.py:Other.execute_sql") == set()


def test_a_function_an_instance_holds_is_what_calling_the_field_runs(cli):
    """``self._repr = _repr`` (a nested function), ``self._add = items.add`` (a bound
    method of a local), ``self._help = helper`` and ``self._items = items``: a call of
    the field, or of a method on it, runs what the value is where it was assigned.
    A field another assignment types otherwise (a call's result) is left as it was."""
    write_files(cli, {"r.py": two_classes("Sorted", "add", "extend") +
        "def helper(v):\n    return v\n\n\n"
        "class Renderer:\n    def __init__(self, flag=False):\n"
        "        def _repr(inst):\n            return repr(inst)\n\n"
        "        self._repr = _repr\n        items = Sorted()\n"
        "        self._add = items.add\n        self._help = helper\n"
        "        self._items = items\n"
        "        if flag:\n            self._copier = self.copy_all\n"
        "        else:\n            self._copier = make_copier()\n\n"
        "    def copy_all(self, v):\n        return v\n\n"
        "    def __call__(self, event):\n        self._add(event)\n"
        "        self._items.extend([event])\n        self._help(event)\n"
        "        self._copier(event)\n        return self._repr(event)\n\n\n"
        "def make_copier():\n    return helper\n"})
    assert cli("index").code == 0
    call = {"r.py:Renderer.__call__"}
    assert callers(cli, "r.py:Renderer.__init__._repr") == call
    assert callers(cli, "r.py:Sorted.add") == call
    assert callers(cli, "r.py:Sorted.extend") == call
    assert callers(cli, "r.py:helper") == call
    assert callers(cli, "r.py:Other.add") == set()
    assert callers(cli, "r.py:Renderer.copy_all") == set()


def test_a_method_an_instance_attribute_rebinds_runs_either(cli):
    """``self.bind = finalized_bind`` inside ``bind`` (structlog's lazy proxy): the
    first call runs the method, later ones the nested function it stored, so a call
    of ``p.bind()`` has both as callees. jedi names only the stored function."""
    write_files(cli, {"p.py":
        "class Proxy:\n    def bind(self, **kw):\n        def finalized_bind(**nv):\n"
        "            return nv\n\n        self.bind = finalized_bind\n"
        "        return finalized_bind(**kw)\n\n    def new(self):\n"
        "        return self\n\n\ndef use():\n    p = Proxy()\n    p.new()\n"
        "    return p.bind(x=1)\n"})
    assert cli("index").code == 0
    assert callers(cli, "p.py:Proxy.bind") == {"p.py:use"}
    assert callers(cli, "p.py:Proxy.bind.finalized_bind") == {"p.py:use", "p.py:Proxy.bind"}
    assert callers(cli, "p.py:Proxy.new") == {"p.py:use"}


def test_a_name_read_in_a_class_body_is_first_the_bodys_own(cli):
    """``__eq__ = __make_cmp(eq)`` and ``_given = _NotGiven()`` in a class body call
    what that body defined; a method of the class still does not see them bare."""
    write_files(cli, {"c.py":
        "def _make_cmp(op):\n    return op\n\n\n"
        "class SortedList:\n    def _make_cmp(op):\n        def comparer(self, other):\n"
        "            return op(self, other)\n        return comparer\n\n"
        "    class _NotGiven:\n        pass\n\n"
        "    __eq__ = _make_cmp(None)\n    _given = _NotGiven()\n\n"
        "    def compare(self):\n        return _make_cmp(1)\n\n"
        # a decorator runs before the def it decorates binds its name
        "    @_make_cmp\n    def _make_cmp(self):\n        return self\n"})
    assert cli("index").code == 0
    assert callers(cli, "c.py:SortedList._make_cmp") == {"c.py:SortedList"}
    assert callers(cli, "c.py:SortedList._NotGiven") == {"c.py:SortedList"}
    assert callers(cli, "c.py:_make_cmp") == {"c.py:SortedList.compare"}


def test_a_field_holding_a_parameter_called_runs_its_default(cli):
    """``def __init__(self, key=identity): self._key = key`` and no caller passes a
    key: ``self._key(v)`` runs identity, as jedi reads a parameter's default."""
    write_files(cli, {"k.py":
        "def identity(x):\n    return x\n\n\nclass Keyed:\n"
        "    def __init__(self, key=identity):\n        self._key = key\n\n"
        "    def add(self, value):\n        return self._key(value)\n"})
    assert cli("index").code == 0
    assert callers(cli, "k.py:identity") == {"k.py:Keyed.add"}


def test_a_result_declared_any_is_read_from_the_body(cli):
    """``def __getattr__(self, name) -> Any: ...; return log``: Any says nothing, so
    ``cl.info()`` runs the nested log, as it does without the annotation."""
    write_files(cli, {"t.py":
        "from typing import Any\n\n\nclass Capturing:\n"
        "    def __getattr__(self, name: str) -> Any:\n"
        "        def log(*args: Any) -> None:\n            return None\n\n"
        "        return log\n\n\ndef make() -> Any:\n    return Capturing()\n\n\n"
        "def test_logs():\n    cl = Capturing()\n    cl.info('hi')\n    make().error('x')\n"})
    assert cli("index").code == 0
    assert callers(cli, "t.py:Capturing.__getattr__.log") == {"t.py:test_logs"}


def test_a_parameter_named_cls_called_bare_runs_what_callers_pass(cli):
    """``def copy(self, cls=None): copy = (cls or Base)(); cls()``: a bare call of a
    parameter named like the class receiver is still the parameter (bottle's
    ``BaseResponse.copy(cls=HTTPResponse)``), not a field of self."""
    write_files(cli, {"b.py":
        "class Base:\n    def copy(self, cls=None):\n        return cls()\n\n\n"
        "class Response(Base):\n    def __init__(self):\n        self.body = ''\n\n"
        "    def clone(self):\n        return self.copy(cls=Response)\n"})
    assert cli("index").code == 0
    assert callers(cli, "b.py:Response") == {"b.py:Base.copy"}


ITERATION = (
    "class Group:\n    def validate(self):\n        return 1\n\n\n"
    "class Other:\n    def validate(self):\n        return 2\n\n\n"
    "def by_sorted(groups: list[Group]):\n    for g in sorted(groups, key=id):\n"
    "        g.validate()\n\n\n"
    "def by_copy(groups: set[Group]):\n    gs = list(reversed(list(groups)))\n"
    "    for g in gs:\n        g.validate()\n\n\n"
    "def by_slice(groups: list[Group]):\n    for g in groups[1:]:\n        g.validate()\n\n\n"
    "def by_enumerate(groups: list[Group]):\n    for i, g in enumerate(groups, start=1):\n"
    "        g.validate()\n\n\n"
    "def by_zip(names: list[str], groups: list[Group]):\n"
    "    for name, g in zip(names, groups):\n        g.validate()\n\n\n"
    "def by_default(groups: list[Group] | None, skip: bool):\n    gs = groups or []\n"
    "    for g in gs:\n        g.validate()\n    hs = [] if skip else sorted(groups)\n"
    "    return [h.validate() for h in hs]\n\n\n"
    "def by_loop_default(groups: list[Group] | None):\n"
    "    for g in sorted(groups or []):\n        g.validate()\n\n\n"
    "def by_other(others: list[Other]):\n    for i, o in enumerate(others):\n"
    "        o.validate()\n")


def test_iterating_a_copy_of_a_container_gives_its_elements(cli):
    """What Python's builtins give (typeshed's builtins.pyi): sorted, list, reversed of
    xs hold xs's elements; xs[1:] is a list of them; enumerate and zip give tuples of a
    count and each iterable's element; ``ys or []`` and ``[] if c else ys`` are ys."""
    write_files(cli, {"g.py": ITERATION})
    assert cli("index").code == 0
    assert callers(cli, "g.py:Group.validate") == {
        "g.py:by_sorted", "g.py:by_copy", "g.py:by_slice", "g.py:by_enumerate",
        "g.py:by_zip", "g.py:by_default", "g.py:by_loop_default"}
    assert callers(cli, "g.py:Other.validate") == {"g.py:by_other"}


def test_typescript_copies_of_an_array_hold_its_elements(cli):
    """``Array.from(set)``, ``[...xs]``, ``c ? [] : xs`` and ``xs ?? []`` hold the
    elements the iterable holds, as the TypeScript checker types them."""
    write_files(cli, {"g.ts":
        "export class Group {\n  validate(): number { return 1 }\n}\n"
        "export class Other {\n  validate(): number { return 2 }\n}\n"
        "export class Form {\n  groups: Set<Group> = new Set()\n  list: Group[] = []\n}\n"
        "export function byFrom(form: Form) {\n  const a = Array.from(form.groups)\n"
        "  for (const g of a) g.validate()\n}\n"
        "export function bySpread(form: Form) {\n  const b = [...form.list]\n"
        "  for (const g of b) g.validate()\n}\n"
        "export function byChoice(form: Form, skip: boolean) {\n"
        "  const c = skip ? [] : form.list\n  for (const g of c) g.validate()\n"
        "  const d = form.list ?? []\n  for (const g of d) g.validate()\n}\n"})
    assert cli("index").code == 0
    assert callers(cli, "g.ts:Group.validate") == {
        "g.ts:byFrom", "g.ts:bySpread", "g.ts:byChoice"}
