"""Graph, Ruby: direct callers as TypeProf resolves them, through the CLI.

Each case is a class of Ruby semantics that the reference harness
(tests/bench/bench_graph_reference.py, TypeProf 0.21 bundled with Ruby 3.1) found
missed on the tuned projects (thor, kramdown, chunky_png); the fixture
tests/fixtures/graph_ruby_recall is indexed by a real `ctxkit index` subprocess and read
back with `ctxkit callers --json`.
"""

from __future__ import annotations

import pytest

from conftest import callers_of

POINT = "lib/geo/point.rb:Geo.Point"
CACHE = "lib/geo/cache.rb:Geo.Cache"
PEN = "lib/geo/pen.rb:Geo.Pen"
BRUSH = "lib/geo/brush.rb:Geo.Brush"
BOX = "lib/geo/box.rb:Geo.Box"
DASH = "lib/geo/dash.rb:Geo.Dash"


@pytest.fixture
def indexed(cli):
    result = cli.index_fixture("graph_ruby_recall")  # a real index, once per worker
    assert result.code == 0, result.err
    return cli


# (symbol, exactly these callers)
CASES = [
    # `new` where self is the class (def self.f, class << self, self.new) or on
    # self.class constructs the enclosing class; a bare `new` in an instance method does
    # not (an instance has no new)
    (f"{POINT}.initialize", {f"{POINT}.origin", f"{POINT}.copy", f"{POINT}.parse",
                             f"{POINT}.dup"}),
    (POINT, {f"{POINT}.origin", f"{POINT}.copy", f"{POINT}.parse", f"{POINT}.dup"}),
    # a bare identifier that names no local variable is a call of self's method, in an
    # expression as in a statement: operands, interpolation, conditions, conditional
    # arms, arrays, returned values
    (f"{POINT}.scale", {f"{POINT}.moved", f"{POINT}.label", f"{POINT}.report",
                        f"{POINT}.summary"}),
    (f"{POINT}.offset", {f"{POINT}.moved", f"{POINT}.report", f"{POINT}.summary"}),
    (f"{POINT}.name", {f"{POINT}.label", f"{POINT}.report"}),
    (f"{POINT}.visible?", {f"{POINT}.report", f"{POINT}.summary"}),
    # ... but not where a local of that name is in scope: an assignment, a multiple
    # assignment, block parameters (destructured too), a for variable, a rescued
    # exception, splat and block parameters
    (f"{POINT}.summary", {f"{POINT}.report"}),
    (f"{POINT}.label", set()),
    # a method of Ruby's core classes called on an untyped value (a Hash's fetch) is no
    # guess at the index's one method of that name, nor is one on a constant the index
    # does not define (File.basename); on a value of a known class it is that class's
    (f"{CACHE}.fetch", {"lib/geo/cache.rb:Geo.Loader.read"}),
    (f"{CACHE}.basename", set()),
    # `alias new old` and `alias_method :new, :old` make calls of new run old; one
    # inside `class << self` names a class method, which an instance's call never is
    (f"{BRUSH}.line_wu", {f"{BRUSH}.draw"}),
    (f"{BRUSH}.dot", {f"{BRUSH}.draw"}),
    (f"{BRUSH}.build", set()),
    # a constant called with arguments (Geo::Pen(2)) is the method of that name (here
    # the module function defined first, id Geo.Pen), not the class (Geo.Pen#2);
    # Geo::Pen.new and Pen.new construct the class
    (PEN, {"lib/geo/pen.rb:Geo.Sketch.start"}),
    (f"{PEN}#2", {"lib/geo/pen.rb:Geo.Sketch.plain", PEN}),
    # an attribute assignment (self.size = ...) calls the setter size=, not the getter
    (f"{BOX}.size=", {f"{BOX}.grow"}),
    (f"{BOX}.size", {f"{BOX}.grow"}),
    # self.class.m calls the class method m (Form has a property? too); self.class.to_s
    # is the class object's own (Module#to_s), and self.class.label no instance's label
    (f"{DASH}.property?", {f"{DASH}.check"}),
    (f"{DASH}.to_s", set()),
    ("lib/geo/dash.rb:Geo.Form.label", set()),
    # `include M` runs M.included(self), `extend M` M.extended(self): the class calls them
    ("lib/geo/hooks.rb:Geo.Loggable.included", {"lib/geo/hooks.rb:Geo.Order"}),
    ("lib/geo/hooks.rb:Geo.Loggable.extended", {"lib/geo/hooks.rb:Geo.Invoice"}),
]


@pytest.mark.parametrize(("symbol", "expected"), CASES, ids=[c[0] for c in CASES])
def test_ruby_callers_as_typeprof_resolves_them(indexed, symbol, expected):
    assert callers_of(indexed, symbol) == expected
