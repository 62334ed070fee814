#!/usr/bin/python3
"""C and C++ reference for bench_graph_reference.py: every call site, resolved by clang.

Usage: /usr/bin/python3 ref_c_clang.py ROOT < files (relative paths)
Needs Debian's python3-clang (libclang's own Python bindings), hence the
system Python. Each .c/.cc/.cpp/.cxx file is parsed as a translation unit
with every project folder that holds headers on the include path; calls in
headers are read from the units that include them. A call's target is the
definition clang names for the called declaration (matched across units by
USR, so a function declared in a header and defined in another file is
found); [] when no definition of it is in the project (libc, the STL, a
function pointer), null when clang could not resolve the callee at all.
An explicit construction (``Foo(...)``, ``new Foo(...)``, ``Foo x(...)``)
is a call of the class and of the constructor. Calls written as operators
(``v[i]``) are not counted, and a call made by a macro expansion (the callee's
name is not in the text) is nobody's answer (null), as is a call in a template
whose arguments depend on its parameters (clang resolves it per instance only).
A member of a class template's instance (``Vector<char>(...)``) is the
template's definition.

Where clang could not parse or resolve the code, the site is nobody's answer
(null), never "resolved outside the project": a call whose callee, or a
declaration its callee or arguments name, clang marks invalid (a type it could
not find: the declaration is invalid, and so is the overload it picked among
what it saw); and, in a unit clang reports errors for (a header not found,
which is fatal and stops every later #include of the unit), a call written
`name(` in a function body that clang did not make a call of (the statement
was dropped, or kept as a recovery expression). Such sites are added only
where no other unit resolved the same site. An unresolved call is named by the
last name of its callee expression (``x.zz()`` in a template is `zz`, not `x`).
The error counts (units, units with errors, errors) are printed with the sites.
Prints {"tool", "sites"} in the harness's common format (see ref_python_jedi.py).
"""

from __future__ import annotations

import ctypes
import json
import sys
import sysconfig
from pathlib import Path

import clang.cindex as ci

K = ci.CursorKind
FUNCTIONS = {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.FUNCTION_TEMPLATE,
             K.CONVERSION_FUNCTION}
CLASSES = {K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE}
UNITS = (".c", ".cc", ".cpp", ".cxx", ".c++")
HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp")
REFERENCES = {K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.TYPE_REF, K.TEMPLATE_REF}
ci.conf.lib.clang_isInvalidDeclaration.argtypes = [ci.Cursor]
ci.conf.lib.clang_isInvalidDeclaration.restype = ctypes.c_uint


def invalid(cursor) -> bool:
    return cursor is not None and bool(ci.conf.lib.clang_isInvalidDeclaration(cursor))


class Reference:
    def __init__(self, root: Path, files: list[str]):
        self.root = root.resolve()
        self.files = set(files)
        self.index = ci.Index.create()
        self.defs: dict[str, dict] = {}       # USR -> definition in the project
        self.sites: dict[tuple, dict] = {}    # (file, line, col, name) -> site
        self.pending: list[tuple[tuple, list[str]]] = []
        self.unparsed: dict[tuple, dict] = {}  # (file, line, name) -> a site clang dropped
        self.errors = {"units": 0, "units with errors": 0, "errors": 0}
        self.failed = False  # the unit being read has errors
        # Every folder holding a header, and each folder above it inside the project:
        # `#include "marisa/base.h"` is found from include/, the folder above marisa/.
        dirs = {str(self.root / folder) for f in files if f.endswith(HEADERS)
                for folder in Path(f).parents if folder != Path(".")}
        # Python's headers too: C extensions in sdists include Python.h, and a unit
        # that cannot see it loses its function bodies to error recovery.
        python = sysconfig.get_paths()["include"]
        self.includes = [f"-I{d}" for d in sorted(dirs)] + [f"-I{self.root}", f"-I{python}"]

    def rel(self, cursor) -> str | None:
        loc = cursor.location
        if loc.file is None:
            return None
        try:
            rel = Path(loc.file.name).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None
        return rel if rel in self.files else None

    def where(self, cursor, name: str | None = None) -> dict | None:
        rel = self.rel(cursor)
        if rel is None:
            return None
        return {"file": rel, "line": cursor.location.line, "name": name or cursor.spelling}

    def parse(self, rel: str) -> None:
        cpp = not rel.endswith(".c")
        args = ["-x", "c++" if cpp else "c", "-std=c++17" if cpp else "-std=c11",
                "-fsyntax-only", "-ferror-limit=0", *self.includes]
        try:
            tu = self.index.parse(str(self.root / rel), args=args,
                                  options=ci.TranslationUnit.PARSE_INCOMPLETE)
        except ci.TranslationUnitLoadError:
            return
        errors = sum(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics)
        self.errors["units"] += 1
        self.errors["units with errors"] += errors > 0
        self.errors["errors"] += errors
        self.failed = errors > 0
        self.walk(tu.cursor, None)

    def walk(self, cursor, caller: dict | None) -> None:
        for child in cursor.get_children():
            if child.location.file is not None and self.rel(child) is None:
                continue  # a system or outside header
            scope = caller
            if child.kind in FUNCTIONS and child.is_definition():
                scope = self.where(child, self.def_name(child))
                usr = child.get_usr()
                if usr and scope:
                    self.defs.setdefault(usr, scope)
                if scope and self.failed:
                    self.written_calls(child, scope)
            elif child.kind in CLASSES and child.is_definition():
                usr = child.get_usr()
                found = self.where(child)
                if usr and found:
                    self.defs.setdefault(usr, found)
            if child.kind == K.CALL_EXPR:
                self.call(child, caller, cursor)
            self.walk(child, scope)

    @staticmethod
    def def_name(cursor) -> str:
        return "~" + cursor.spelling.lstrip("~") if cursor.kind == K.DESTRUCTOR else \
            cursor.spelling

    def written_calls(self, function, caller: dict) -> None:
        """Every `name(` in the body of a function read in a unit with errors: a site
        clang did not make a call of there is unknown (see the docstring)."""
        body = next((c for c in function.get_children() if c.kind == K.COMPOUND_STMT), None)
        if body is None:
            return
        tokens = list(body.get_tokens())
        for token, after in zip(tokens, tokens[1:], strict=False):
            if token.kind == ci.TokenKind.IDENTIFIER and after.spelling == "(":
                rel = self.rel(token)
                if rel is not None:
                    key = (rel, token.location.line, token.spelling)
                    self.unparsed.setdefault(key, {
                        "file": rel, "line": key[1], "name": key[2], "caller": caller,
                        "targets": None})

    def call(self, node, caller: dict | None, parent) -> None:
        target = node.referenced
        if target is None:
            name = node.spelling or self.callee_name(node)
            if name:
                self.add(node, name, caller, None)
            return
        if invalid(target) or self.names_invalid(node):
            self.add(node, node.spelling or target.spelling, caller, None)
            return
        tokens = [t.spelling for t in node.get_tokens()][:2]
        if target.kind == K.CONSTRUCTOR:
            cls = target.semantic_parent
            declared = parent.kind == K.VAR_DECL and tokens[:1] == [parent.spelling] and \
                tokens[1:] in (["("], ["{"])   # Foo x(...), Foo x{...}
            if not declared and (not tokens or tokens[0] not in (cls.spelling, "new") and
                                 tokens[-1] != cls.spelling):
                return  # implicit: a copy, a default member, a conversion
            # a class template's instance (Vector<char>(...)) runs the template's code
            self.add(node, cls.spelling, caller,
                     [cls.get_usr(), *self.primary(cls), target.get_usr(),
                      *self.primary(target)])
            return
        if target.kind not in FUNCTIONS:
            self.add(node, node.spelling or target.spelling, caller, [])  # a pointer, a value
            return
        if target.spelling.startswith("operator"):
            return  # written as an operator (v[i], a + b), not as a call
        self.add(node, target.spelling, caller, [target.get_usr(), *self.primary(target)])

    @staticmethod
    def primary(cursor) -> list[str]:
        """The USR of the template a specialization or an instance member comes from."""
        primary = ci.conf.lib.clang_getSpecializedCursorTemplate(cursor)
        if primary is not None and not primary.kind.is_invalid():
            return [primary.get_usr()]
        return []

    @staticmethod
    def names_invalid(node) -> bool:
        """The callee expression or an argument names a declaration clang marks invalid
        (of a type it could not find)."""
        return any(child.kind in REFERENCES and invalid(child.referenced)
                   for child in node.walk_preorder())

    @staticmethod
    def callee_name(node) -> str | None:
        """The name an unresolved call writes: the last name of its callee expression
        (``isDigit(*it, base)``, ``x.zz()`` -> zz, ``ns::f<T>(...)`` -> f). A call in a
        template body whose arguments depend on the template's parameters is resolved
        only per instance, so the site is nobody's answer (null), not a site left out."""
        children = list(node.get_children())
        tokens = list(children[0].get_tokens()) if children else []
        depth = 0
        for token in reversed(tokens):
            text = token.spelling
            if text in (">", ">>"):
                depth += len(text)
            elif text == "<":
                depth -= 1
            elif depth <= 0 and token.kind == ci.TokenKind.IDENTIFIER:
                return text
        for child in node.walk_preorder():
            if child.kind in (K.OVERLOADED_DECL_REF, K.MEMBER_REF_EXPR, K.DECL_REF_EXPR) \
                    and child.spelling:
                return child.spelling
        return None

    def add(self, node, name: str, caller: dict | None, usrs) -> None:
        rel = self.rel(node)
        if rel is None:
            return
        line = self.name_line(node, name)
        key = (rel, line, name, caller and caller["line"])
        if key in self.sites:
            return
        site = {"file": rel, "line": line, "name": name, "caller": caller, "targets": None}
        self.sites[key] = site
        # A call a macro makes (CHECK_EQ(a, b) calling CheckEqualsHelper) is not in the
        # text a reader, or ctxkit, sees: nobody's answer, left out of both sides.
        visible = any(t.spelling == name for t in node.get_tokens())
        if usrs is not None and visible:
            self.pending.append((key, usrs))

    @staticmethod
    def name_line(node, name: str) -> int:
        for token in node.get_tokens():
            if token.spelling == name:
                return token.location.line
        return node.location.line

    def finish(self) -> list[dict]:
        for key, usrs in self.pending:
            found, seen = [], set()
            for usr in usrs:
                d = self.defs.get(usr)
                if d and (d["file"], d["line"]) not in seen:
                    seen.add((d["file"], d["line"]))
                    found.append(d)
            self.sites[key]["targets"] = found
        seen = {(site["file"], site["line"], site["name"]) for site in self.sites.values()}
        dropped = [site for key, site in self.unparsed.items() if key not in seen]
        return [*self.sites.values(), *dropped]


def main(argv: list[str]) -> int:
    root = Path(argv[1])
    files = sys.stdin.read().split()
    reference = Reference(root, files)
    for rel in files:
        if rel.endswith(UNITS):
            reference.parse(rel)
    json.dump({"tool": f"libclang ({Path(ci.conf.get_filename()).name})",
               "sites": reference.finish(), "errors": reference.errors}, sys.stdout,
              default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
