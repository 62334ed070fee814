"""Graph: the seven languages that became full languages, through the real CLI.

Each fixture is a small multi-file project written the way the language is
written; the cases pin who calls whom the way a reader of that language (and
its compiler) would say, including the calls that must stay unresolved.
"""

from __future__ import annotations

import pytest


def index(cli, fixture: str) -> dict:
    result = cli.index_fixture(fixture)
    assert result.code == 0, result.err
    return result.json()


def related(cli, command: str, symbol: str) -> set[str]:
    result = cli(command, symbol, "--json")
    assert result.code == 0, result.err
    return {r["id"] or r["name"] for r in result.json()["results"]}


KT = "src/main/kotlin/shop/"

# (fixture, symbol, relation, exactly these)
CASES = [
    # C: file-local static functions, #include'd inline helpers, external linkage
    ("graph_c", "src/util.c:util_add", "callers",
     {"src/main.c:main", "src/parser.c:parse_line", "src/util.c:util_scale"}),
    ("graph_c", "tools/fake_util.c:util_add", "callers", {"tools/fake_util.c:bench_main"}),
    ("graph_c", "src/util.c:normalize", "callers", {"src/util.c:util_add"}),
    ("graph_c", "src/parser.c:normalize", "callers", {"src/parser.c:parse_line"}),
    ("graph_c", "src/parser.c:parse_line", "callees",
     {"src/parser.c:normalize", "atoi", "src/util.c:util_add", "out.emit", "printf",
      "CHECK_POSITIVE", "src/util.c:util_check"}),
    # a call made by a macro's expansion (CHECK_POSITIVE -> CHECK -> util_check)
    ("graph_c", "src/util.c:util_check", "callers", {"src/parser.c:parse_line"}),
    ("graph_c", "include/util.h:clamp", "callers",
     {"src/main.c:main", "src/util.c:normalize", "src/util.c:util_check"}),
    # C++: namespaces, out-of-line members, this->, typed receivers, Base::f()
    ("graph_cpp", "src/main.cpp:main", "callees",
     {"src/shape.cpp:geo.Shape.describe", "include/circle.hpp:geo.Circle",
      "src/circle.cpp:geo.Circle.draw", "src/circle.cpp:geo.make_circle",
      "src/circle.cpp:geo.Circle.Circle",
      "src/circle.cpp:geo.Circle.area", "src/circle.cpp:geo.Circle.unit",
      "shapes.push_back", "src/shape.cpp:geo.total_area", "src/main.cpp:other.area"}),
    ("graph_cpp", "src/circle.cpp:geo.Circle.draw", "callees",
     {"include/render.hpp:geo.Renderer.render", "src/circle.cpp:geo.Circle.area",
      "src/shape.cpp:geo.Shape.describe"}),
    ("graph_cpp", "src/circle.cpp:geo.Circle.area", "callees",
     {"src/circle.cpp:helper", "include/shape.hpp:geo.Shape.scale"}),
    ("graph_cpp", "src/shape.cpp:helper", "callers", {"src/shape.cpp:geo.Shape.area"}),
    ("graph_cpp", "src/shape.cpp:geo.Shape.area", "callers",
     {"src/shape.cpp:geo.Shape.describe", "src/shape.cpp:geo.total_area"}),
    ("graph_cpp", "src/main.cpp:other.area", "callers", {"src/main.cpp:main"}),
    # C#: namespaces and using (aliases too), partial classes, this/base, typed members
    ("graph_csharp", "src/Services/UserService.cs:UserService.Create", "callees",
     {"src/Models/User.cs:User", "src/Models/User.cs:User.User",
      "src/Models/User.cs:User.Save", "src/Services/Repo.cs:Repo.Add",
      "Console.WriteLine", "src/Util/Formatter.cs:Formatter.Format",
      "src/Services/UserService.Helpers.cs:UserService.Helper"}),
    ("graph_csharp", "src/Services/UserService.Helpers.cs:UserService.Audit", "callees",
     {"src/Util/Formatter.cs:Formatter.Trace"}),
    ("graph_csharp", "src/Models/User.cs:User.Save", "callees",
     {"src/Models/User.cs:User.Validate", "src/Data/Store.cs:Store.Write"}),
    ("graph_csharp", "src/Models/Entity.cs:Entity.Touch", "callers",
     {"src/Data/Store.cs:Store.Write", "src/Models/User.cs:AdminUser.Touch"}),
    ("graph_csharp", "src/Data/Store.cs:Store.Write", "callers",
     {"src/Models/User.cs:User.Save", "src/Services/Repo.cs:Repo.Add"}),
    # Kotlin: packages, imports (alias, star), extension functions, super, typed members
    ("graph_kotlin", f"{KT}service/UserService.kt:UserService.create", "callees",
     {f"{KT}model/User.kt:User", f"{KT}model/User.kt:User.save", f"{KT}service/Repo.kt:Repo.add",
      "println", f"{KT}util/Format.kt:format", f"{KT}util/Format.kt:User.display",
      f"{KT}data/Store.kt:Store.write"}),
    ("graph_kotlin", f"{KT}util/Format.kt:User.display", "callees",
     {"println", f"{KT}util/Format.kt:format", f"{KT}model/User.kt:User.touch"}),
    ("graph_kotlin", f"{KT}service/Repo.kt:Repo.add", "callees",
     {"users.add", f"{KT}service/Audit.kt:audit"}),
    ("graph_kotlin", f"{KT}model/User.kt:Entity.touch", "callers",
     {f"{KT}data/Store.kt:Store.write", f"{KT}model/User.kt:User.touch"}),
    # Swift: one module sees all its files, extensions add methods, self/super, typed fields
    ("graph_swift", "Sources/Shop/Services/UserService.swift:UserService.create", "callees",
     {"Sources/Shop/Models/User.swift:User", "Sources/Shop/Models/User.swift:User.init",
      "Sources/Shop/Models/User.swift:User.save",
      "Sources/Shop/Services/Repo.swift:Repo.add",
      "Sources/Shop/Util/User+Display.swift:User.display", "print",
      "Sources/Shop/Util/User+Display.swift:format"}),
    ("graph_swift", "Sources/Shop/Util/User+Display.swift:User.display", "callees",
     {"print", "Sources/Shop/Util/User+Display.swift:format",
      "Sources/Shop/Models/User.swift:User.touch"}),
    ("graph_swift", "Sources/Shop/Models/User.swift:User.save", "callees",
     {"Sources/Shop/Models/User.swift:User.validate",
      "Sources/Shop/Data/Store.swift:Store.write"}),
    ("graph_swift", "Sources/Shop/Models/Entity.swift:Entity.touch", "callers",
     {"Sources/Shop/Data/Store.swift:Store.write", "Sources/Shop/Models/User.swift:User.touch"}),
    ("graph_swift", "Sources/CLI/main.swift:run", "callees",
     {"Sources/Shop/Services/UserService.swift:UserService",
      "Sources/Shop/Services/UserService.swift:UserService.init",
      "Sources/Shop/Services/Repo.swift:Repo", "Sources/Shop/Services/Repo.swift:Repo.init",
      "Sources/Shop/Services/UserService.swift:UserService.create", "print"}),
    # Ruby: nesting of modules, reopened classes, mixins, implicit self, Foo.new, locals
    ("graph_ruby", "lib/shop/services/user_service.rb:Shop.Services.UserService.create",
     "callees",
     {"lib/shop/models/user.rb:Shop.User", "lib/shop/models/user.rb:Shop.User.initialize",
      "lib/shop/models/user.rb:Shop.User.save",
      "@repo.add", "lib/shop/services/user_service.rb:Shop.Services.Formatter.render"}),
    ("graph_ruby", "lib/shop/models/user.rb:Shop.User.save", "callees",
     {"lib/shop/models/user.rb:Shop.User.validate", "lib/shop/store.rb:Shop.Store.write"}),
    ("graph_ruby", "lib/shop/models/user.rb:Shop.User.touch", "callees",
     {"lib/shop/services/user_service.rb:Shop.User.audit"}),
    ("graph_ruby", "lib/shop/models/entity.rb:Shop.Loggable.log", "callers",
     {"lib/shop/models/entity.rb:Shop.Entity.touch"}),
    ("graph_ruby", "lib/shop.rb:Shop.start", "callers", {"bin/run.rb"}),
    # PHP: namespaces, use (alias, function), traits, $this/self::/parent::, typed members
    ("graph_php", "src/Services/UserService.php:UserService.create", "callees",
     {"src/Models/User.php:User", "src/Models/User.php:User.__construct",
      "src/Models/User.php:User.save",
      "src/Services/Repo.php:Repo.add", "src/Support/Formatter.php:Formatter.format",
      "src/Support/helpers.php:slugify", "src/Services/Repo.php:audit"}),
    ("graph_php", "src/Data/Store.php:Store.write", "callers",
     {"src/Models/User.php:User.save", "src/Services/Repo.php:Repo.add"}),
    ("graph_php", "src/Data/Store.php:Store.write", "callees",
     {"src/Models/Entity.php:Entity.touch", "src/Data/Store.php:Store.flush"}),
    ("graph_php", "src/Models/Loggable.php:Loggable.log", "callers",
     {"src/Models/Entity.php:Entity.touch"}),
    ("graph_php", "src/Models/Entity.php:Entity.touch", "callers",
     {"src/Models/User.php:User.touch", "src/Data/Store.php:Store.write"}),
]


@pytest.mark.parametrize("fixture,symbol,relation,expected", CASES,
                         ids=[f"{c[0]}:{c[1]}:{c[2]}" for c in CASES])
def test_calls_resolve_as_a_reader_would(cli, fixture, symbol, relation, expected):
    index(cli, fixture)
    assert related(cli, relation, symbol) == expected


def test_c_includes_are_import_edges(cli):
    """Project headers are the file's imports; <stdio.h> stays a name outside."""
    index(cli, "graph_c")
    result = cli("context", "src/parser.c", "--purpose", "refactor", "--json")
    assert result.code == 0, result.err
    imports = {i["id"] for i in result.json()["items"] if i["section"] == "imports"}
    assert imports == {"include/parser.h"}


def test_c_calls_outside_functions_are_not_callers(cli):
    """C runs no code outside functions: `LIBAPI T* lib_create(void);` (a prototype
    behind an unknown macro) parses as a call at file level; it is no call."""
    (cli.root / "lib.h").write_text("LIBAPI LIB_stream_t* lib_create(void);\n"
                                    "LIBAPI int lib_free(LIB_stream_t* s);\n", encoding="utf-8")
    (cli.root / "lib.c").write_text(
        '#include "lib.h"\nLIB_stream_t* lib_create(void) { return 0; }\n'
        "int lib_free(LIB_stream_t* s) { return s != 0; }\n"
        "int use(void) { return lib_free(lib_create()); }\n", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callers", "lib.c:lib_create") == {"lib.c:use"}
    assert related(cli, "callers", "lib.c:lib_free") == {"lib.c:use"}


def test_cpp_declarations_and_constructions_read_as_the_compiler_reads_them(cli):
    """`Builder builder(buffer, size);` in a body is a variable (the grammar reads a
    function declaration: the most vexing parse); `Double(kInfinity)` inside class
    Double constructs a Double, and the constructor that runs is the one a field's
    declared type picks (uint64 over double)."""
    (cli.root / "ieee.h").write_text("""\
typedef unsigned long uint64;
namespace dc {
class Double {
 public:
  explicit Double(double d) : d64_(1) {}
  explicit Double(uint64 d64) : d64_(d64) {}
  double value() const { return 1.0; }
  double Infinity() const { return Double(kInfinity).value(); }
 private:
  static const uint64 kInfinity = 1;
  uint64 d64_;
};
class Builder {
 public:
  Builder(char* buffer, int size) {}
  void Reset() {}
};
class Other {
 public:
  void Reset() {}
  double value() const { return 0.0; }
};
}
""", encoding="utf-8")
    (cli.root / "use.cc").write_text("""\
#include "ieee.h"
using namespace dc;
void run() {
  char buffer[10];
  int size = 10;
  Builder builder(buffer, size);
  builder.Reset();
}
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callers", "ieee.h:dc.Builder.Reset") == {"use.cc:run"}
    assert related(cli, "callees", "ieee.h:dc.Double.Infinity") == {
        "ieee.h:dc.Double", "ieee.h:dc.Double.Double#2", "ieee.h:dc.Double.value"}


def test_cpp_overloads_told_apart_by_const_and_returning_references(cli):
    """`Chunk& At(int)` has its parameters (the reference declarator around it has no
    field name), and of `At(int)` and `At(int) const` a call on the object itself
    runs the const one from a const member function, the other one elsewhere."""
    (cli.root / "big.h").write_text("""\
namespace dc {
class Big {
 public:
  typedef unsigned int Chunk;
  Chunk& At(int index);
  const Chunk& At(int index) const;
  Chunk Sum() const { return At(0) + this->At(1); }
  void Set() { At(0) = 1; }
 private:
  Chunk data_[4];
};
}
""", encoding="utf-8")
    (cli.root / "big.cc").write_text("""\
#include "big.h"
namespace dc {
Big::Chunk& Big::At(int index) { return data_[index]; }
const Big::Chunk& Big::At(int index) const { return data_[index]; }
}
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callers", "big.cc:dc.Big.At") == {"big.h:dc.Big.Set"}
    assert related(cli, "callers", "big.cc:dc.Big.At#2") == {"big.h:dc.Big.Sum"}


def test_cpp_a_variable_of_a_builtin_type_picks_its_overload(cli):
    """`uint64_t ordered = 12; Double(ordered)` runs Double(uint64_t), and a `double`
    variable Double(double): the grammar reads uint64_t and double as primitive
    types, declared as any other type (of a variable, and of a field read bare)."""
    (cli.root / "ieee.h").write_text("""\
#include <stdint.h>
namespace dc {
class Double {
 public:
  explicit Double(double d) : d64_(1) {}
  explicit Double(uint64_t d64) : d64_(d64) {}
  double value() const { return 1.0; }
  static double Infinity() { return Double(kInfinity).value(); }
 private:
  static const uint64_t kInfinity = 1;
  uint64_t d64_;
};
}
""", encoding="utf-8")
    (cli.root / "use.cc").write_text("""\
#include "ieee.h"
using namespace dc;
double ordered_bits() {
  uint64_t ordered = 12;
  return Double(ordered).value();
}
double from_double() {
  double x = 1.5;
  return Double(x).value();
}
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callers", "ieee.h:dc.Double.Double") == {"use.cc:from_double"}
    assert related(cli, "callers", "ieee.h:dc.Double.Double#2") == {
        "use.cc:ordered_bits", "ieee.h:dc.Double.Infinity"}


def test_c_definitions_and_calls_under_if_read_as_a_default_build(cli):
    """Of three definitions of read32 under #if / #elif / #else, the one a default
    build compiles (GCC-compatible, so the config macro is 1) is the definition; a
    call under `#ifdef _WIN32` is linked below the default confidence, a decision
    that took a name as not defined is dropped when an included header defines
    it, and an #include under `#if defined(_MSC_VER)` includes nothing."""
    (cli.root / "cfg.h").write_text("#define USE_FAST 1\n", encoding="utf-8")
    (cli.root / "win.h").write_text("static int win_only(void) { return 1; }\n",
                                    encoding="utf-8")
    (cli.root / "mem.c").write_text("""\
#include "cfg.h"
#if defined(_MSC_VER)
#  include "win.h"
#endif
#ifndef MEM_ACCESS
#  if defined(__GNUC__) && defined(__ARM_ARCH_6__)
#    define MEM_ACCESS 2
#  elif defined(__GNUC__)
#    define MEM_ACCESS 1
#  endif
#endif
#if defined(MEM_ACCESS) && (MEM_ACCESS == 2)
static unsigned read32(const void* p) { return 2; }
#elif defined(MEM_ACCESS) && (MEM_ACCESS == 1)
static unsigned read32(const void* p) { return 1; }
#else
static unsigned read32(const void* p) { return 0; }
#endif
#ifdef USE_FAST
static int pick(void) { return 1; }
#else
static int pick(void) { return 0; }
#endif
static int platform(void) { return 0; }
int hash(const void* p) {
#ifdef _WIN32
    platform();
#endif
    return (int)read32(p) + pick() + win_only();
}
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callees", "mem.c:hash") == {"mem.c:read32#2", "mem.c:pick#2",
                                                     "win_only"}
    assert related(cli, "callers", "mem.c:platform") == set()
    low = cli("callers", "mem.c:platform", "--min-confidence", "0.3", "--json")
    assert {r["id"] for r in low.json()["results"]} == {"mem.c:hash"}
    # cfg.h defines USE_FAST: both pick()s stay, read as before (the last before the call)
    assert related(cli, "callers", "mem.c:pick") == set()


def test_cpp_typedefs_arrows_and_static_helpers_of_included_headers(cli):
    """`typedef Ref<int> OwnedObject;` and `using OwnedInt = Ref<long>;` name the
    class template Ref (bare, qualified, or brought in by `using refs::X;`), so
    `OwnedObject::consuming()` and `o.clear()` are Ref's; `this->args.clear()` reads
    the field through `->`; a `static inline` function of an included header is
    the unit's own."""
    (cli.root / "refs.hpp").write_text("""\
namespace gl {
namespace refs {
    template <typename T>
    class Ref {
    public:
        static Ref consuming(T* p) { return Ref(); }
        void clear() {}
        T* borrow() const { return 0; }
    };
    typedef Ref<int> OwnedObject;
    using OwnedInt = Ref<long>;
}
class Args { public: void clear() {} };
class Other { public: void clear() {} int* borrow() const { return 0; } };
static inline int* Require(int* p) { return p; }
class Greenlet {
protected:
    Args args;
public:
    void release();
};
}
""", encoding="utf-8")
    (cli.root / "use.cpp").write_text("""\
#include "refs.hpp"
namespace gl {
using refs::OwnedObject;
void run(int* p, const refs::OwnedInt& held) {
    OwnedObject o = OwnedObject::consuming(Require(p));
    o.clear();
    held.borrow();
}
void Greenlet::release() {
    this->args.clear();
}
}
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callees", "use.cpp:gl.run") == {
        "refs.hpp:gl.refs.Ref.consuming", "refs.hpp:gl.refs.Ref.clear",
        "refs.hpp:gl.refs.Ref.borrow", "refs.hpp:gl.Require"}
    assert related(cli, "callees", "use.cpp:gl.Greenlet.release") == {"refs.hpp:gl.Args.clear"}


def test_cpp_overloads_smart_pointers_operators_and_const_receivers(cli):
    """Each overload reads its own parameters (`visit(Apply* ast)` and `visit(Local*
    ast)`); `dict_->size()` through a `std::shared_ptr<Dict>` is Dict's; an operator
    keeps its name (`operator<=`, not `operator`); of `end()` and `end() const`, a
    field read in a const member, or a `const` parameter, runs the const one."""
    (cli.root / "p.hpp").write_text("""\
#include <memory>
struct Apply { void run() {} };
struct Local { void bind() {} };
class Dict { public: int size() const { return 0; } };
class Vec {
public:
    int* end() { return 0; }
    const int* end() const { return 0; }
};
class Pass {
public:
    void visit(Apply* ast) { ast->run(); }
    void visit(Local* ast) { ast->bind(); }
    int words() { return dict_->size(); }
    bool has() const { return cells.end() != 0; }
    void add() { cells.end(); }
    static void both(const Vec& v, Vec& w) { v.end(); w.end(); }
private:
    std::shared_ptr<Dict> dict_;
    Vec cells;
};
bool operator<=(const Pass& a, const Pass& b) { return a.has(); }
""", encoding="utf-8")
    result = cli("index", "--json")
    assert result.code == 0, result.err
    assert related(cli, "callees", "p.hpp:Pass.visit") == {"p.hpp:Apply.run"}
    assert related(cli, "callees", "p.hpp:Pass.visit#2") == {"p.hpp:Local.bind"}
    assert related(cli, "callers", "p.hpp:Dict.size") == {"p.hpp:Pass.words"}
    assert related(cli, "callees", "p.hpp:operator<=") == {"p.hpp:Pass.has"}
    assert related(cli, "callers", "p.hpp:Vec.end") == {"p.hpp:Pass.add", "p.hpp:Pass.both"}
    assert related(cli, "callers", "p.hpp:Vec.end#2") == {"p.hpp:Pass.has", "p.hpp:Pass.both"}
