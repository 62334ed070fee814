#!/usr/bin/env python3
"""Build the `ctxkit suspects` benchmark: real bug fixes from consecutive releases.

Every case comes from the package registry alone. For each package below, the
script takes its consecutive final releases on PyPI, downloads their sdists
(which ship the tests), and for every pair N -> N+1:

1. finds the test functions N+1 added or changed (``ast``: a test's source,
   docstring aside, differs or is new), in test files of the sdist;
2. takes as truth the functions of N's package source whose code the release
   changed: a function present in N whose syntax tree (docstrings and nested
   definitions aside, line numbers ignored) differs in N+1, or that N+1
   removed. Pairs whose truth is empty (no function changed) or larger than
   MAX_TRUTH (a feature release, not a fix one can point at) are skipped;
3. runs those tests in a venv for N (N's package installed with its
   dependencies, N's source first on PYTHONPATH, N's test tree with N+1's
   changed test files and conftest files dropped in), and again in N+1's own
   tree and venv. A test that fails on N and passes on N+1 is a case; its real
   failing output (pytest run of that one test id) is recorded.

Cases go to tests/bench/suspects_cases.json (package, versions, test id, the
true functions, the failing output). Sdists, trees and venvs stay under
tests/bench/.work/ (gitignored). Run:

    python tests/bench/suspects_corpus.py build [--package click ...]

The split into a tuning half and a held-out half is made once by
bench_suspects.py ``split`` (a fixed hash of the release pair), before any
ranking is tuned.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CASES_FILE = HERE / "suspects_cases.json"
MAX_TRUTH = 25          # more changed functions than this is a feature release
MAX_CASES_PER_PAIR = 3  # so one busy release does not outweigh the others
MAX_OUTPUT = 12000      # characters of failing output kept in the case file
TEST_TIMEOUT = 300


@dataclass(frozen=True)
class Package:
    """One project: its PyPI name, import packages, release range, test extras."""

    name: str
    imports: tuple[str, ...]
    low: str
    high: str
    extras: tuple[str, ...] = ()
    skip: tuple[str, ...] = field(default=())  # releases without a usable sdist


PACKAGES: tuple[Package, ...] = (
    Package("click", ("click",), "8.0.0", "8.1.8"),
    Package("flask", ("flask",), "2.0.0", "3.0.3", ("python-dotenv", "asgiref")),
    Package("werkzeug", ("werkzeug",), "2.0.0", "3.0.6",
            ("watchdog", "ephemeral-port-reserve", "pytest-timeout", "cryptography",
             "pytest-xprocess<1", "greenlet")),
    Package("jinja2", ("jinja2",), "3.0.0", "3.1.6", ("trio",)),
    Package("marshmallow", ("marshmallow",), "3.10.0", "3.26.1", ("simplejson", "pytz")),
    Package("packaging", ("packaging",), "21.0", "24.2", ("pretend",)),
    Package("pluggy", ("pluggy",), "1.0.0", "1.5.0"),
    Package("attrs", ("attr", "attrs"), "21.1.0", "24.2.0", ("hypothesis", "zope.interface")),
    Package("sqlparse", ("sqlparse",), "0.4.0", "0.5.3"),
    Package("more-itertools", ("more_itertools",), "8.10.0", "10.5.0"),
    Package("tomlkit", ("tomlkit",), "0.11.0", "0.13.2"),
    Package("markdown", ("markdown",), "3.3.0", "3.7"),
    Package("itsdangerous", ("itsdangerous",), "2.0.0", "2.2.0", ("freezegun",)),
    Package("python-slugify", ("slugify",), "5.0.0", "8.0.4"),
)


# -- registry ---------------------------------------------------------------


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True,
                          text=True, check=False)


def release_chain(pkg: Package) -> list[str]:
    """The final releases of pkg between low and high inclusive, oldest first."""
    from packaging.version import Version

    out = pip("index", "versions", pkg.name).stdout
    match = re.search(r"Available versions: (.*)", out)
    if not match:
        raise SystemExit(f"pip index versions {pkg.name} listed nothing")
    versions = [Version(v.strip()) for v in match.group(1).split(",")]
    low, high = Version(pkg.low), Version(pkg.high)
    chain = sorted(v for v in versions if low <= v <= high and not v.is_prerelease
                   and not v.is_devrelease and str(v) not in pkg.skip)
    return [str(v) for v in chain]


def sdist_tree(pkg: Package, version: str) -> Path | None:
    """The unpacked sdist of pkg==version under .work/src (downloaded once)."""
    dest = WORK / "src" / f"{pkg.name}-{version}"
    if (dest / ".complete").exists():
        return dest
    dl = WORK / "sdists" / f"{pkg.name}-{version}"
    dl.mkdir(parents=True, exist_ok=True)
    if not any(dl.iterdir()):
        pip("download", "--no-deps", "--no-binary", ":all:", "-d", str(dl),
            f"{pkg.name}=={version}")
    archives = [p for p in dl.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tgz"))]
    if not archives:
        return None
    shutil.rmtree(dest, ignore_errors=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archives[0].name.endswith(".zip"):
        with zipfile.ZipFile(archives[0]) as zf:
            zf.extractall(tmp)
    else:
        with tarfile.open(archives[0]) as tf:
            tf.extractall(tmp, filter="data")
    (top,) = list(tmp.iterdir())
    top.rename(dest)
    tmp.rmdir()
    (dest / ".complete").write_text("")
    return dest


def source_root(tree: Path, pkg: Package) -> Path:
    """The directory to put on PYTHONPATH: src/ when the sdist uses that layout."""
    return tree / "src" if (tree / "src" / pkg.imports[0]).is_dir() else tree


def venv_for(pkg: Package, version: str) -> Path:
    """A venv with pkg==version, its dependencies, pytest and the test extras."""
    venv = WORK / "venvs" / f"{pkg.name}-{version}"
    if (venv / ".complete").exists():
        return venv
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    reqs = [f"{pkg.name}=={version}", "pytest", *pkg.extras]
    shutil.rmtree(venv, ignore_errors=True)
    if Path(uv).exists():
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)],
                       check=True, capture_output=True)
        cmd = [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *reqs]
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *reqs]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:  # an extra that no longer installs must not lose the release
        base = cmd[: cmd.index(reqs[0])] + reqs[:2]
        subprocess.run(base, capture_output=True, text=True, check=False)
    (venv / ".complete").write_text("")
    return venv


# -- what a release changed ---------------------------------------------------


def is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    parts = rel.split("/")
    in_tests = any(p in ("tests", "test", "testing") for p in parts[:-1])
    return in_tests and name.endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def py_files(tree: Path, roots: tuple[str, ...]) -> dict[str, Path]:
    files = {}
    for root in roots:
        for path in (tree / root).rglob("*.py") if (tree / root).is_dir() else ():
            files[path.relative_to(tree).as_posix()] = path
    return files


def package_files(tree: Path, pkg: Package) -> dict[str, Path]:
    base = source_root(tree, pkg)
    prefix = "src/" if base != tree else ""
    out = py_files(tree, tuple(prefix + name for name in pkg.imports))
    return {rel: p for rel, p in out.items() if not is_test_file(rel)
            and "/tests/" not in rel and "/test/" not in rel}


def test_files(tree: Path) -> dict[str, Path]:
    return {rel: p for rel, p in py_files(tree, ("tests", "test", "testing")).items()
            if is_test_file(rel)}


def parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return None


class _Blank(ast.NodeTransformer):
    """Drops docstrings and replaces nested definitions by their names."""

    def __init__(self, top: ast.AST):
        self.top = top

    def generic_visit(self, node):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return super().generic_visit(node)

    def visit_FunctionDef(self, node):
        if node is not self.top:
            return ast.Name(id=f"<def {node.name}>")
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        if node is not self.top:
            return ast.Name(id=f"<class {node.name}>")
        return self.generic_visit(node)


def own_code(node: ast.AST) -> str:
    import copy

    clone = copy.deepcopy(node)
    return ast.dump(_Blank(clone).visit(clone), include_attributes=False)


def functions(module: ast.Module) -> dict[str, tuple[ast.AST, int]]:
    """qualified name -> (def node, first line incl. decorators)."""
    found: dict[str, tuple[ast.AST, int]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    found.setdefault(name, (child, first))
                walk(child, name + ".")
            elif not isinstance(child, ast.expr):
                walk(child, prefix)

    walk(module, "")
    return found


def changed_functions(old_tree: Path, new_tree: Path, pkg: Package) -> list[dict]:
    old_files, new_files = package_files(old_tree, pkg), package_files(new_tree, pkg)
    truth = []
    for rel, old_path in sorted(old_files.items()):
        old_mod = parse(old_path)
        new_mod = parse(new_files[rel]) if rel in new_files else None
        if old_mod is None:
            continue
        old_defs = functions(old_mod)
        new_defs = functions(new_mod) if new_mod is not None else {}
        for name, (node, first) in old_defs.items():
            other = new_defs.get(name)
            if other is None or own_code(node) != own_code(other[0]):
                truth.append({"file": rel, "name": name, "line": first,
                              "end_line": node.end_lineno,
                              "change": "removed" if other is None else "changed"})
    return truth


def test_ids(module: ast.Module, rel: str) -> dict[str, str]:
    """pytest node id -> the test's own code, for test functions and methods."""
    ids = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                and node.name.startswith("test"):
            ids[f"{rel}::{node.name}"] = own_code(node) + repr(
                [ast.dump(d) for d in node.decorator_list])
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) \
                        and item.name.startswith("test"):
                    ids[f"{rel}::{node.name}::{item.name}"] = own_code(item) + repr(
                        [ast.dump(d) for d in item.decorator_list])
    return ids


def new_or_changed_tests(old_tree: Path, new_tree: Path) -> dict[str, list[str]]:
    """test file (relative) -> node ids N+1 added or changed in it."""
    old_files, new_files = test_files(old_tree), test_files(new_tree)
    out: dict[str, list[str]] = {}
    for rel, path in sorted(new_files.items()):
        if rel.endswith("conftest.py"):
            continue
        new_mod = parse(path)
        if new_mod is None:
            continue
        old_mod = parse(old_files[rel]) if rel in old_files else None
        old_ids = test_ids(old_mod, rel) if old_mod is not None else {}
        changed = [tid for tid, code in test_ids(new_mod, rel).items()
                   if old_ids.get(tid) != code]
        if changed:
            out[rel] = changed
    return out


# -- running tests ------------------------------------------------------------


def case_tree(pkg: Package, old: str, new: str, old_tree: Path, new_tree: Path,
              files: list[str]) -> Path:
    """N's tree with N+1's changed test files and changed conftest files dropped in."""
    dest = WORK / "cases" / f"{pkg.name}-{old}-{new}"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(old_tree, dest, symlinks=True)
    for rel, path in test_files(new_tree).items():
        if rel in files or (rel.endswith("conftest.py")):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return dest


def pytest_isolation(tree: Path) -> list[str]:
    """pytest options that keep a release's tests to its own tree: the trees live
    inside this repository, whose pyproject.toml and tests/conftest.py pytest would
    otherwise take as the rootdir's (its addopts and xdist hooks break the run)."""
    return ["-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tree),
            "--confcutdir", str(tree)]


def run_pytest(venv: Path, tree: Path, src: Path, ids: list[str], xml: Path | None
               ) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [str(venv / "bin" / "python"), "-m", "pytest", *pytest_isolation(tree), "-q"]
    if xml is not None:
        cmd += ["--junitxml", str(xml)]
    try:
        return subprocess.run(cmd + ids, cwd=tree, env=env, capture_output=True,
                              text=True, timeout=TEST_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timeout")


def outcomes(xml: Path) -> dict[str, str]:
    """function node id -> 'failed' | 'passed' | 'error' | 'skipped' (worst of its params)."""
    if not xml.exists():
        return {}
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    out: dict[str, str] = {}
    for case in ET.parse(xml).iter("testcase"):
        file = case.get("file")
        classname, name = case.get("classname", ""), case.get("name", "")
        name = name.split("[", 1)[0]
        parts = classname.split(".")
        cls = parts[-1] if parts and parts[-1].startswith("Test") else None
        mod = "/".join(parts[:-1] if cls else parts) + ".py"
        rel = file or mod
        tid = f"{rel}::{cls}::{name}" if cls else f"{rel}::{name}"
        state = "passed"
        if case.find("failure") is not None:
            state = "failed"
        elif case.find("error") is not None:
            state = "error"
        elif case.find("skipped") is not None:
            state = "skipped"
        if rank[state] >= rank.get(out.get(tid, "passed"), 0):
            out[tid] = state
    return out


def match_outcome(tid: str, results: dict[str, str]) -> str | None:
    if tid in results:
        return results[tid]
    tail = tid.split("::", 1)[1]
    hits = [v for k, v in results.items() if k.endswith("::" + tail)
            and k.split("::")[0].rsplit("/", 1)[-1] == tid.split("::")[0].rsplit("/", 1)[-1]]
    return hits[0] if len(hits) == 1 else None


def pair_cases(pkg: Package, old: str, new: str, trees: dict[str, Path]) -> list[dict]:
    old_tree, new_tree = trees[old], trees[new]
    truth = changed_functions(old_tree, new_tree, pkg)
    if not truth or len(truth) > MAX_TRUTH:
        print(f"  {pkg.name} {old}->{new}: {len(truth)} changed functions, skipped",
              flush=True)
        return []
    tests = new_or_changed_tests(old_tree, new_tree)
    ids = [tid for group in tests.values() for tid in group]
    if not ids:
        print(f"  {pkg.name} {old}->{new}: no new or changed tests", flush=True)
        return []
    tree = case_tree(pkg, old, new, old_tree, new_tree, list(tests))
    old_venv, new_venv = venv_for(pkg, old), venv_for(pkg, new)
    xml_old, xml_new = tree / ".junit-old.xml", tree / ".junit-new.xml"
    run_pytest(old_venv, tree, source_root(tree, pkg), list(tests), xml_old)
    failing = [t for t in ids if match_outcome(t, outcomes(xml_old)) == "failed"]
    if failing:
        run_pytest(new_venv, new_tree, source_root(new_tree, pkg), list(tests), xml_new)
        fixed = outcomes(xml_new)
        failing = [t for t in failing if match_outcome(t, fixed) == "passed"]
    cases = []
    for tid in failing[:MAX_CASES_PER_PAIR]:
        done = run_pytest(old_venv, tree, source_root(tree, pkg), [tid], None)
        output = done.stdout + done.stderr
        if done.returncode != 1:  # 1 = tests failed; anything else is not a clean failure
            continue
        cases.append({
            "id": f"{pkg.name}-{old}-{new}:{tid}", "package": pkg.name,
            "old": old, "new": new, "test_id": tid,
            "test_files": sorted(tests), "truth": truth,
            "output": output[-MAX_OUTPUT:]})
    print(f"  {pkg.name} {old}->{new}: {len(ids)} new/changed tests, "
          f"{len(failing)} fail on {old} and pass on {new}, {len(cases)} kept", flush=True)
    shutil.rmtree(tree, ignore_errors=True)
    return cases


def build_package(pkg: Package) -> list[dict]:
    chain = release_chain(pkg)
    print(f"{pkg.name}: {len(chain)} releases {chain[0]}..{chain[-1]}", flush=True)
    trees = {}
    for version in chain:
        tree = sdist_tree(pkg, version)
        if tree is not None and test_files(tree):
            trees[version] = tree
    usable = [v for v in chain if v in trees]
    cases = []
    for old, new in zip(usable, usable[1:], strict=False):
        if chain.index(new) != chain.index(old) + 1:
            continue  # not consecutive: a release between them shipped no tests
        try:
            cases += pair_cases(pkg, old, new, trees)
        except Exception as exc:  # one broken release must not stop the corpus
            print(f"  {pkg.name} {old}->{new}: {type(exc).__name__}: {exc}", flush=True)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    build = sub.add_parser("build", help="build the case list from the registry")
    build.add_argument("--package", action="append", help="only these packages")
    build.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    chosen = [p for p in PACKAGES if not args.package or p.name in args.package]
    existing = json.loads(CASES_FILE.read_text()) if CASES_FILE.exists() else []
    names = {p.name for p in chosen}
    kept = [c for c in existing if c["package"] not in names]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for cases in pool.map(build_package, chosen):   # written as each package ends
            kept += cases
            kept.sort(key=lambda c: (c["package"], c["id"]))
            CASES_FILE.write_text(json.dumps(kept, indent=1) + "\n")
    pairs = {(c["package"], c["old"]) for c in kept}
    print(f"{len(kept)} cases from {len(pairs)} release pairs -> {CASES_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
