#!/usr/bin/env python3
"""Python reference for bench_graph_reference.py: every call site, resolved by jedi.

Usage: ref_python_jedi.py ROOT SYS_PATH_DIR... < files (one relative path a line)
Prints one JSON document: {"sites": [...]} in the harness's common format:

    {"file": REL, "line": N, "name": CALLEE, "caller": DEF | null,
     "targets": [DEF, ...] | null}
    DEF = {"file": REL, "line": N, "name": NAME}   (line of the name)

``caller`` is the innermost enclosing def or class (null: module level).
A target jedi names in a type stub (``core.pyi``) is the definition of the same
full name in the module the stub types (``core.py``): the code that runs; one it
names at an import (where it maps a stub's declaration back to: ``from ._make
import attrs`` in ``__init__.py``) is the definition the import names.
``targets`` lists the definitions inside ROOT that the call runs: the
function, or for a class call the class and the ``__init__`` that runs (the
nearest one through the bases, as long as they stay inside ROOT); an empty
list means jedi resolved the call outside ROOT (the standard library, a
dependency, a builtin, a parameter's value); null means jedi found nothing.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import jedi


def char_col(line_text: bytes, byte_col: int) -> int:
    """ast gives UTF-8 byte offsets; jedi wants characters."""
    return len(line_text[:byte_col].decode("utf-8", "replace"))


class Sites(ast.NodeVisitor):
    """Call sites with their callee name's position and enclosing definition."""

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        self.stack: list[ast.AST] = []
        self.found: list[tuple[int, int, str, ast.AST | None]] = []

    def _scope(self, node: ast.AST) -> None:
        # Decorators, defaults, annotations and bases run where the definition
        # stands; only the body runs inside it.
        body = set(map(id, node.body))
        for child in ast.iter_child_nodes(node):
            if id(child) not in body:
                self.visit(child)
        self.stack.append(node)
        for child in node.body:
            self.visit(child)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        caller = self.stack[-1] if self.stack else None
        if isinstance(func, ast.Subscript):  # Ruler[int](): the generic class is called
            func = func.value
        if isinstance(func, ast.Name):
            line, col = func.lineno, func.col_offset
            self.found.append((line, char_col(self.lines[line - 1], col), func.id, caller))
        elif isinstance(func, ast.Attribute) and func.end_lineno is not None:
            line = func.end_lineno
            col = char_col(self.lines[line - 1], func.end_col_offset or 0) - len(func.attr)
            self.found.append((line, col, func.attr, caller))
        self.generic_visit(node)


def def_line(node: ast.AST, lines: list[bytes]) -> int:
    """The line holding the name of a def or class (after its decorators)."""
    keyword = b"class" if isinstance(node, ast.ClassDef) else b"def"
    line = node.lineno
    while line <= len(lines) and keyword not in lines[line - 1]:
        line += 1
    return line


class Reference:
    def __init__(self, root: Path, sys_path: list[str]):
        self.root = root.resolve()
        # The project's folders come first: a copy of the same package installed in this
        # Python (requests, packaging in a tool's venv) must not answer for its own code.
        base = jedi.get_default_environment().get_sys_path()
        self.project = jedi.Project(self.root, sys_path=[*sys_path, *base],
                                    smart_sys_path=False)
        self.init_cache: dict[tuple[str, int], list[dict]] = {}
        self.twins: dict[str, dict[str, object]] = {}

    def inside(self, name) -> str | None:
        path = name.module_path
        if path is None:
            return None
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    @staticmethod
    def imported(name):
        """The definition an import names, for a name jedi gives at the import itself
        (what it maps a stub's declaration back to: ``from ._make import attrs``)."""
        tree_name = getattr(getattr(name, "_name", None), "tree_name", None)
        if tree_name is None or tree_name.search_ancestor("import_from", "import_name") is None:
            return name
        try:
            return next((n for n in name.goto(follow_imports=True)
                         if n.type in ("function", "class") and n.module_path), name)
        except Exception:
            return name

    def implementation(self, name):
        """What runs for a stub's declaration (``core.pyi``'s ``Machine.add_transition``):
        the definition of the same full name in the module the stub types (``core.py``,
        through its imports for a package's ``__init__.pyi``); the name itself when
        there is none. jedi answers with the stub when it inferred a value through one."""
        path = name.module_path
        if path is None or not str(path).endswith(".pyi") or not name.full_name:
            return name
        twin = Path(str(path)[:-1])
        if not twin.is_file():
            return name
        key = str(twin)
        if key not in self.twins:
            script = jedi.Script(path=twin, project=self.project)
            try:
                names = script.get_names(all_scopes=True, definitions=True)
            except Exception:
                names = []
            self.twins[key] = {n.full_name: n for n in reversed(names) if n.full_name}
        found = self.twins[key].get(name.full_name)
        if found is None:
            return name
        try:  # from ._make import attrs: the definition the import names
            found = next((n for n in found.goto(follow_imports=True)
                          if n.type in ("function", "class")), found)
        except Exception:
            pass
        return found if found.type == name.type else name

    def definition(self, name) -> dict | None:
        name = self.imported(self.implementation(name))
        rel = self.inside(name)
        if rel is None or name.line is None:
            return None
        return {"file": rel, "line": name.line, "name": name.name}

    def script(self, rel: str) -> jedi.Script:
        path = self.root / rel
        return jedi.Script(path.read_text(encoding="utf-8", errors="replace"), path=path,
                           project=self.project)

    def targets(self, script: jedi.Script, line: int, col: int) -> list[dict] | None:
        try:
            names = script.goto(line, col, follow_imports=True)
            if not any(n.type in ("function", "class") for n in names):
                names = script.infer(line, col) or names
        except Exception:  # jedi's own failure on odd code: no answer for this site
            return None
        if not names:
            return None
        found: list[dict] = []
        for name in names:
            where = self.definition(name)
            if name.type == "class" and where is not None:
                found.append(where)
                found.extend(self.constructor(self.imported(self.implementation(name))))
            elif name.type == "function" and where is not None:
                found.append(where)
            elif where is not None and name.type in ("param", "statement", "instance"):
                # A value inside the project whose type jedi could not name.
                return None
        return [dict(t) for t in {tuple(sorted(t.items())): t for t in found}.values()]

    def constructor(self, cls) -> list[dict]:
        """The __init__ that Cls(...) runs, found through bases inside the project."""
        key = (cls.module_path and str(cls.module_path), cls.line)
        if key in self.init_cache:
            return self.init_cache[key]
        self.init_cache[key] = []
        result: list[dict] = []
        for sub in cls.defined_names():
            if sub.name == "__init__" and sub.type == "function":
                result = [d for d in [self.definition(sub)] if d]
                break
        else:
            result = self._inherited_init(cls)
        self.init_cache[key] = result
        return result

    def _inherited_init(self, cls) -> list[dict]:
        rel = self.inside(cls)
        if rel is None:
            return []
        tree = ast.parse((self.root / rel).read_bytes())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == cls.name and \
                    def_line(node, (self.root / rel).read_bytes().splitlines()) == cls.line:
                break
        else:
            return []
        script = self.script(rel)
        lines = (self.root / rel).read_bytes().splitlines()
        for base in node.bases:
            last = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
            if last is None or base.end_lineno is None:
                continue
            col = char_col(lines[base.end_lineno - 1], base.end_col_offset or 0) - len(last)
            try:
                names = script.goto(base.end_lineno, col, follow_imports=True)
            except Exception:
                continue
            for name in names:
                if name.type == "class" and self.inside(name):
                    found = self.constructor(name)
                    if found:
                        return found
                elif name.type == "class":
                    return []  # the base is outside: so is the constructor
        return []

    def file_sites(self, rel: str) -> list[dict]:
        source = (self.root / rel).read_bytes()
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
        lines = source.splitlines() or [b""]
        visitor = Sites(lines)
        visitor.visit(tree)
        script = self.script(rel)
        out = []
        for line, col, name, caller in visitor.found:
            out.append({
                "file": rel, "line": line, "name": name,
                "caller": None if caller is None else {
                    "file": rel, "line": def_line(caller, lines), "name": caller.name},
                "targets": self.targets(script, line, col)})
        return out


def main(argv: list[str]) -> int:
    root = Path(argv[1])
    reference = Reference(root, [str((root / p).resolve()) for p in argv[2:]])
    sites = []
    for rel in sys.stdin.read().split():
        sites.extend(reference.file_sites(rel))
    json.dump({"tool": f"jedi {jedi.__version__}", "sites": sites}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
