#!/usr/bin/env python3
"""ctxkit's direct callers scored against each language's own type checker.

For every project below, a reference tool written against the language's
checker lists every call site of the project with the definitions inside the
project that it runs:

    Python      jedi                       graph_reference/ref_python_jedi.py
    TypeScript  the TypeScript compiler    graph_reference/ref_typescript.js
    Go          go/types (source importer) graph_reference/ref_go_types.go
    C, C++      libclang (Debian's clang)  graph_reference/ref_c_clang.py
    Java        javac's tree API (JDK 17)  graph_reference/RefJava.java
    C#          Mono's C# compiler (mcs)   graph_reference/RefCSharp.cs
                and Mono.Cecil on its output
    Kotlin      the Kotlin compiler's      graph_reference/RefKotlin.kt
                front end (kotlinc 1.3)
    PHP         intelephense (npm), sites  graph_reference/ref_php_intelephense.py
                from PHP's own tokenizer
    Ruby        TypeProf 0.21 (bundled     graph_reference/ref_ruby_typeprof.rb
                with Debian's Ruby 3.1)

The reference's pairs (caller, callee), both definitions inside the project,
are the expected direct-caller sets. ctxkit indexes the same files and its
calls edges at the default confidence (what `ctxkit callers` lists) are the
found pairs. A call site the checker could not resolve at all (an ``any``, an
untyped parameter jedi cannot follow) is left out of both sides: nobody
knows the answer there. A site the checker resolved outside the project
(the standard library, a dependency, a builtin) is expected to have no edge,
so an edge ctxkit guesses there counts as wrong. Where the checker could not
parse the code (libclang: a header not found, a declaration it marks invalid),
a site it left unresolved or dropped is unknown, not outside; the report
prints each C/C++ project's compile errors. ``Cls(...)`` and
``new Cls()`` are calls of the class and of the constructor that runs.

Definitions are matched by file, name and the line of the name, so ctxkit's
ids are read as they are (PATH:QUALNAME). A naive matcher runs through the
same scorer: every call ctxkit extracted, linked to every definition of that
name in the project.

Projects are split: the tuned ones are listed here, the held-out ones in
graph_reference_held_out.txt and, for Java, C, C++, C#, Kotlin, PHP and Ruby, the _java,
_c, _csharp, _kotlin, _php and _ruby files beside it (each written before any tuning on
its projects, never edited). The report gives both, per project and per language.

Inputs come from the package registries once (pip download of sdists, npm
pack, apt-get download of Debian's golang-*-dev source packages and php-* and
ruby-* library packages) into
tests/bench/.work/, and the references' answers are cached there too, so
later runs are offline. Java, C# and Kotlin projects come from public git repositories at a
pinned commit (no registry reachable here ships Java sources): a bare clone
under .work/git/, made once from a folder of mirrors named OWNER+NAME/repo
($BENCH_GIT_MIRRORS) or from github.com. Needs: jedi in this Python, node with the
`typescript` npm package (installed into .work/npm), Debian's golang-go,
Debian's python3-clang-14 (run by /usr/bin/python3) for C and C++, a JDK
(`java`, 17 or newer) for Java, Debian's mono-mcs and libmono-cecil-cil-dev for C#,
Debian's kotlin (kotlinc 1.3.31 and its compiler jar) for Kotlin, Debian's php-cli and
node with the `intelephense` npm package (installed into .work/npm) for PHP, Debian's
ruby (3.1, whose libruby3.1 bundles the typeprof 0.21 gem) for Ruby.

Run:  python tests/bench/bench_graph_reference.py [--language L] [--project P]
          [--details FILE] [--check-cli N] [--ctxkit OLD/ctxkit.py] [--add LINE]
(--add studies one more project, reported apart: where to look for classes of misses.)
(--ctxkit measures another version, e.g. before a change, on the same inputs.)
Targets: precision >= 0.98 and recall >= 0.95 per language (Python,
TypeScript, Go), tuned and held-out alike; 0.95 / 0.85 for the languages made
full later (C, C++, Java, C#, Kotlin, PHP, Ruby). Exit 1 when a language misses.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
REF = HERE / "graph_reference"
CTXKIT = HERE.parent.parent / "ctxkit.py"
HELD_OUT_FILES = (HERE / "graph_reference_held_out.txt",
                  HERE / "graph_reference_held_out_java.txt",
                  HERE / "graph_reference_held_out_c.txt",
                  HERE / "graph_reference_held_out_csharp.txt",
                  HERE / "graph_reference_held_out_kotlin.txt",
                  HERE / "graph_reference_held_out_php.txt",
                  HERE / "graph_reference_held_out_ruby.txt")
TYPESCRIPT = "typescript@5.9.3"
INTELEPHENSE = "intelephense@1.18.5"
CECIL = Path("/usr/lib/mono-cecil")   # Debian's libmono-cecil-cil-dev: Cecil with .mdb symbols
JARS = Path("/usr/share/java")        # Debian's kotlin: the compiler and the standard library
KOTLIN_COMPILER = ("kotlin-compiler", "kotlin-stdlib", "kotlin-reflect", "kotlin-script-runtime",
                   "libtrove-intellij", "org.jetbrains.annotations-java8")
KOTLIN_LIBRARIES = ("kotlin-stdlib", "kotlin-stdlib-jdk7", "kotlin-stdlib-jdk8", "kotlin-reflect",
                    "org.jetbrains.annotations-java8")   # what the projects compile against
MIN_CONFIDENCE = 0.5          # ctxkit's default for callers
# ctxkit adds the constructor a class call runs as a second edge `Cls.__init__` (Ruby:
# `Foo.new.initialize`, at the site named `new`); the naive matcher takes the call sites
# as extracted, without those. A receiver that is a call's result (super().__init__())
# makes no constructor row: that is a call of __init__ written out.
CONSTRUCTORS = ("__init__", "constructor")
LANGUAGE_CONSTRUCTORS = {"ruby": ("initialize",)}
TARGETS = {"python": (0.98, 0.95), "typescript": (0.98, 0.95), "go": (0.98, 0.95)}

# Same line format as graph_reference_held_out.txt:
#   LANGUAGE NAME SOURCE SPEC [DEPENDENCY ...]   (deb: SPEC is the package, then
#   the import path, then the packages its imports come from; a line ending in a
#   backslash goes on on the next)
TUNED = """
python click pypi click==8.1.7
python flask pypi flask==3.0.3
python h11 pypi h11==0.14.0
python markdown-it-py pypi markdown-it-py==3.0.0
python tomlkit pypi tomlkit==0.13.2
python sqlparse pypi sqlparse==0.5.0
python pyflakes pypi pyflakes==3.2.0
python wtforms pypi WTForms==3.1.2
python mistune pypi mistune==3.0.2
typescript mobx npm mobx@7.1.3
typescript immer npm immer@11.2.13
typescript zod npm zod@4.6.7
typescript router-core npm @tanstack/router-core@1.171.39
typescript form-core npm @tanstack/form-core@1.33.5
typescript trpc-client npm @trpc/client@11.25.2
typescript prosemirror-model npm prosemirror-model@1.25.13
typescript prosemirror-transform npm prosemirror-transform@1.12.7
go cobra deb golang-github-spf13-cobra-dev github.com/spf13/cobra golang-github-spf13-pflag-dev \\
    golang-github-cpuguy83-go-md2man-v2-dev golang-github-russross-blackfriday-v2-dev \\
    golang-gopkg-yaml.v3-dev
go pflag deb golang-github-spf13-pflag-dev github.com/spf13/pflag
go toml deb golang-github-burntsushi-toml-dev github.com/BurntSushi/toml
go hcl deb golang-github-hashicorp-hcl-dev github.com/hashicorp/hcl \\
    golang-github-davecgh-go-spew-dev
go kong deb golang-github-alecthomas-kong-dev github.com/alecthomas/kong \\
    golang-github-alecthomas-assert-dev golang-github-alecthomas-repr-dev
go go-cmp deb golang-github-google-go-cmp-dev github.com/google/go-cmp
c lz4 pypi lz4==4.3.3
cpp double-conversion pypi ujson==5.10.0 deps/double-conversion
java javapoet git square/javapoet@b9017a9503b76e11b4ad4c1a9f050e2d29112cb0 src/main/java
java commons-cli git apache/commons-cli@0a68ae0e826bb08eb59bda9bae7ec5d84008b62a src/main/java
csharp sprache git sprache/Sprache@d55e00b5484079cc47837963c155cdbc5ad7a94e src/Sprache
csharp commonmark git Knagis/CommonMark.NET@f82761c0718943cfaca2e2fbf00ea286d2153ae4 CommonMark
csharp yamldotnet git aaubry/YamlDotNet@b758a2961bdb0b042f7f94e1fe6cddbb34756402 YamlDotNet
kotlin kotlinpoet git square/kotlinpoet@079bae9e3c3423106379b67b82b671a3e8b15fed src/main/java
kotlin clikt git ajalt/clikt@4db82a772ed61e12681017f1dcb4c2d0b1235a6e clikt/src/main
kotlin klaxon git cbeust/klaxon@929bff13220ace2288ab94c993d4efce7b7d968a klaxon/src/main
php league-commonmark deb php-league-commonmark usr/share/php/League/CommonMark
php monolog deb php-monolog usr/share/php/Monolog
php html5 deb php-masterminds-html5 usr/share/php/Masterminds
php inflector deb php-doctrine-inflector usr/share/php/Doctrine/Inflector
ruby thor deb ruby-thor usr/share/rubygems-integration/all/gems/thor-1.2.1/lib
ruby kramdown deb ruby-kramdown usr/share/rubygems-integration/all/gems/kramdown-2.4.0/lib
ruby chunky-png deb ruby-chunky-png usr/share/rubygems-integration/all/gems/chunky_png-1.3.15/lib
"""

LANGUAGE_FILES = {"python": ("python",), "typescript": ("typescript", "tsx"), "go": ("go",),
                  "c": ("c",), "cpp": ("cpp", "c"), "java": ("java",),
                  "csharp": ("csharp",), "kotlin": ("kotlin",), "php": ("php",),
                  "ruby": ("ruby",)}
#                 every .h as C
SCRIPTS = {"python": "ref_python_jedi.py", "typescript": "ref_typescript.js",
           "go": "ref_go_types.go", "c": "ref_c_clang.py", "cpp": "ref_c_clang.py",
           "java": "RefJava.java", "csharp": "RefCSharp.cs", "kotlin": "RefKotlin.kt",
           "php": "ref_php_intelephense.py", "ruby": "ref_ruby_typeprof.rb"}


@dataclass(frozen=True)
class Project:
    language: str
    name: str
    source: str
    spec: str
    extra: tuple[str, ...] = ()
    held_out: bool = False
    study: bool = False  # given with --add: studied for classes of misses, not a target


def read_projects(text: str, held_out: bool, study: bool = False) -> list[Project]:
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            language, name, source, spec, *extra = words
            found.append(Project(language, name, source, spec, tuple(extra), held_out, study))
    return found


def all_projects() -> list[Project]:
    return read_projects(TUNED, False) + [project for path in HELD_OUT_FILES
                                          for project in read_projects(path.read_text(), True)]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n"
                         f"{proc.stderr[-3000:]}")
    return proc


# --- inputs ----------------------------------------------------------------

def fetch_pypi(project: Project) -> Path:
    """The sdist's folder, downloaded once."""
    dest = WORK / "src" / project.name
    if dest.exists():
        return dest
    download = WORK / "download" / project.name
    download.mkdir(parents=True, exist_ok=True)
    if not any(download.iterdir()):
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             project.spec, "-d", str(download), "-q"])
    archive = next(download.iterdir())
    unpack = WORK / "unpack" / project.name
    shutil.rmtree(unpack, ignore_errors=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(unpack)
    else:
        with tarfile.open(archive) as t:
            t.extractall(unpack, filter="data")
    dest.parent.mkdir(parents=True, exist_ok=True)
    next(unpack.iterdir()).rename(dest)
    return dest


def fetch_npm(project: Project) -> Path:
    """The package's src/ folder (its TypeScript sources), packed once."""
    dest = WORK / "src" / project.name
    if dest.exists():
        return dest
    download = WORK / "download" / project.name
    download.mkdir(parents=True, exist_ok=True)
    if not any(download.iterdir()):
        run(["npm", "pack", project.spec, "--silent"], cwd=download)
    archive = next(download.iterdir())
    unpack = WORK / "unpack" / project.name
    shutil.rmtree(unpack, ignore_errors=True)
    with tarfile.open(archive) as t:
        t.extractall(unpack, filter="data")
    dest.mkdir(parents=True)
    shutil.copytree(unpack / "package" / "src", dest / "src")
    return dest


def gopath() -> Path:
    return WORK / "go" / "tree" / "usr" / "share" / "gocode"


def fetch_deb(project: Project) -> Path:
    """The Go package's source folder in a GOPATH made of Debian's -dev packages."""
    package, import_path, *deps = project.spec, *project.extra
    debs = WORK / "go" / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    for name in (package, *deps):
        if not any(debs.glob(f"{name}_*.deb")):
            run(["apt-get", "download", name], cwd=debs)
        deb = next(debs.glob(f"{name}_*.deb"))
        marker = WORK / "go" / "unpacked" / deb.name
        if not marker.exists():
            run(["dpkg-deb", "-x", str(deb), str(WORK / "go" / "tree")])
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    if project.language != "go":  # a library package: the folder it installs
        return WORK / "go" / "tree" / import_path
    return gopath() / "src" / import_path


def fetch_git(project: Project) -> Path:
    """The repository's tree at the pinned commit (SPEC owner/name@commit), from a bare
    clone made once."""
    dest = WORK / "src" / project.name
    if dest.exists():
        return dest
    repo, commit = project.spec.split("@")
    bare = WORK / "git" / (repo.replace("/", "+") + ".git")
    if not bare.exists():
        mirrors = os.environ.get("BENCH_GIT_MIRRORS")
        mirror = Path(mirrors) / repo.replace("/", "+") / "repo" if mirrors else None
        origin = str(mirror) if mirror and mirror.exists() else f"https://github.com/{repo}"
        bare.parent.mkdir(parents=True, exist_ok=True)
        run(["git", "clone", "-q", "--bare", origin, str(bare)])
    unpack = WORK / "unpack" / project.name
    shutil.rmtree(unpack, ignore_errors=True)
    unpack.mkdir(parents=True)
    # only the library's folder: a snapshot may lack objects elsewhere in the tree
    archive = subprocess.run(["git", "--git-dir", str(bare), "archive", commit,
                              *project.extra[:1]], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:
        t.extractall(unpack, filter="data")
    dest.parent.mkdir(parents=True, exist_ok=True)
    unpack.rename(dest)
    return dest


FETCHERS = {"pypi": fetch_pypi, "npm": fetch_npm, "deb": fetch_deb, "git": fetch_git}


def prepare_root(project: Project, source: Path) -> Path:
    """A fresh copy of the project with its own .git, so ctxkit takes it as the root.

    For a PyPI or npm project, a word after the spec names the folder to take.
    """
    if project.source != "deb" and project.extra:
        source = source / project.extra[0]
    root = WORK / "roots" / project.name
    if not (root / ".git").exists():
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root, symlinks=True)
        run(["git", "init", "-q"], cwd=root)
    return root


def compiled_tool(language: str, name: str, build: Callable[[Path, Path], None]) -> Path:
    """A reference tool compiled once per version of its source: build(source, tool)
    makes it, under .work/LANGUAGE/<hash of the source>/NAME."""
    source = REF / SCRIPTS[language]
    key = hashlib.sha1(source.read_bytes()).hexdigest()[:16]
    tool = WORK / language / key / name
    if not tool.exists():
        tool.parent.mkdir(parents=True, exist_ok=True)
        build(source, tool)
    return tool


def csharp_tool() -> Path:
    """RefCSharp.exe, beside the Cecil it loads."""
    def build(source: Path, tool: Path) -> None:
        cecil = [CECIL / "Mono.Cecil.dll", CECIL / "Mono.Cecil.Mdb.dll"]
        run(["mcs", f"-out:{tool}", *(f"-r:{dll}" for dll in cecil), str(source)])
        for dll in cecil:
            shutil.copy(dll, tool.parent)
    return compiled_tool("csharp", "RefCSharp.exe", build)


def jars(names: tuple[str, ...]) -> str:
    return ":".join(str(JARS / f"{name}.jar") for name in names)


def kotlin_tool() -> Path:
    """RefKotlin's jar, compiled against the Kotlin compiler's own jar."""
    return compiled_tool("kotlin", "RefKotlin.jar", lambda source, tool: run(
        ["kotlinc", str(source), "-cp", jars(("kotlin-compiler",)), "-d", str(tool)]))


def npm_module(spec: str) -> Path:
    npm = WORK / "npm"
    module = npm / "node_modules" / spec.rpartition("@")[0]
    if not module.exists():
        npm.mkdir(parents=True, exist_ok=True)
        run(["npm", "install", "--silent", "--no-audit", "--no-fund", spec], cwd=npm)
    return module


def typescript_module() -> Path:
    return npm_module(TYPESCRIPT)


# --- ctxkit ----------------------------------------------------------------

def index(project: Project, root: Path, ctxkit: Path) -> Path:
    version = hashlib.sha1(str(ctxkit).encode()).hexdigest()[:8]  # two versions side by side
    db = WORK / "db" / f"{project.name}-{version}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    run([sys.executable, str(ctxkit), "--db", str(db), "-p", project.name, "-q", "index"],
        cwd=root)
    return db


@dataclass
class Graph:
    files: list[str]
    nodes: dict[tuple[str, str], list[tuple[int, int, str]]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    edges: list[tuple[str, str, str, int, str]] = field(default_factory=list)   # resolved
    sites: list[tuple[str, str, int, str]] = field(default_factory=list)        # all calls


def read_graph(db: Path, project: Project) -> Graph:
    con = sqlite3.connect(db)
    languages = LANGUAGE_FILES[project.language]
    marks = ",".join("?" * len(languages))
    files = [r[0] for r in con.execute(
        f"SELECT path FROM files WHERE project = ? AND language IN ({marks}) ORDER BY path",
        (project.name, *languages))]
    graph = Graph(files)
    for path, name, line, end, uid, kind in con.execute(
            "SELECT path, name, line, end_line, uid, kind FROM nodes WHERE project = ?",
            (project.name,)):
        if kind != "file":
            graph.nodes.setdefault((path, name), []).append((line, end, uid))
            graph.names.setdefault(name, set()).add(uid)
    wanted = set(files)
    for src, dst, callee, recv, written, line, path, conf in con.execute(
            "SELECT s.uid, d.uid, e.callee, e.recv, e.dst_name, e.line, f.path, e.confidence "
            "FROM edges e "
            "JOIN nodes s ON s.id = e.src_id JOIN files f ON f.id = e.file_id "
            "LEFT JOIN nodes d ON d.id = e.dst_id WHERE e.project = ? AND e.kind = 'calls'",
            (project.name,)):
        if path not in wanted:
            continue
        made = bool(recv and "(" not in recv and written == f"{recv}.{callee}"
                    and callee in LANGUAGE_CONSTRUCTORS.get(project.language, CONSTRUCTORS))
        if not made:
            graph.sites.append((src, callee or "", line, path))  # as extracted
        if dst is not None and conf >= MIN_CONFIDENCE:
            # the constructor row of Cls(...) / self.cls(...) stands at the class call's
            # site (named Cls, cls): where the reference knows nothing, neither is scored
            site = recv.rpartition(".")[2] if made else callee or ""
            graph.edges.append((src, dst, site, line, path))
    con.close()
    return graph


def ctxkit_json(root: Path, db: Path, project: str, ctxkit: Path, *args: str) -> dict:
    proc = run([sys.executable, str(ctxkit), "--db", str(db), "-p", project, "--json", *args],
               cwd=root)
    return json.loads(proc.stdout)


def check_cli(root: Path, db: Path, project: Project, graph: Graph, count: int,
              ctxkit: Path) -> None:
    """`ctxkit callers` agrees with the edges read from the database."""
    by_dst: dict[str, set[str]] = {}
    for src, dst, *_ in graph.edges:
        by_dst.setdefault(dst, set()).add(src)
    for dst in random.Random(7).sample(sorted(by_dst), min(count, len(by_dst))):
        found = {r["id"] for r in
                 ctxkit_json(root, db, project.name, ctxkit, "callers", dst)["results"]}
        if found != by_dst[dst]:
            raise SystemExit(f"{project.name}: `callers {dst}` lists {sorted(found)}, the "
                             f"database {sorted(by_dst[dst])}: the harness reads edges wrong")


# --- references ------------------------------------------------------------

def reference(project: Project, root: Path, source: Path, files: list[str]) -> dict:
    """The reference's call sites, cached by tool, script and file list."""
    script = SCRIPTS[project.language]
    key = hashlib.sha1((REF / script).read_bytes() + "\n".join(files).encode()).hexdigest()[:16]
    cache = WORK / "ref" / f"{project.name}-{key}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    stdin = "\n".join(files)
    if project.language == "python":
        paths = [p for p in ("src", ".") if (root / p).is_dir()][:1]
        proc = run([sys.executable, str(REF / script), str(root), *paths], input=stdin)
    elif project.language in ("c", "cpp"):
        proc = run(["/usr/bin/python3", str(REF / script), str(root)], input=stdin)
    elif project.language == "java":
        proc = run(["java", str(REF / script), str(root)], input=stdin)
    elif project.language == "csharp":
        proc = run(["mono", str(csharp_tool()), str(root)], input=stdin)
    elif project.language == "kotlin":
        proc = run(["java", "-Xmx2g", "-cp", f"{kotlin_tool()}:{jars(KOTLIN_COMPILER)}",
                    "RefKotlin", str(root), jars(KOTLIN_LIBRARIES)], input=stdin)
    elif project.language == "php":
        server = npm_module(INTELEPHENSE) / "lib" / "intelephense.js"
        proc = run([sys.executable, str(REF / script), str(root), str(server)], input=stdin)
    elif project.language == "ruby":
        proc = run(["ruby", str(REF / script), str(root)], input=stdin)
    elif project.language == "typescript":
        proc = run(["node", str(REF / script), str(typescript_module()), str(root)],
                   input=stdin)
    else:
        env = {"GO111MODULE": "off", "GOPATH": str(gopath()), "GOFLAGS": "",
               "GOCACHE": str(WORK / "go" / "cache"), "PATH": "/usr/bin:/bin",
               "HOME": str(WORK / "go")}
        proc = run(["go", "run", str(REF / script), str(source)], input=stdin, env=env,
                   cwd=REF)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(proc.stdout)
    return json.loads(proc.stdout)


# --- scoring ---------------------------------------------------------------

def node_id(graph: Graph, where: dict | None, site_file: str) -> str:
    """ctxkit's id for a definition the reference named (module level: the file)."""
    if where is None:
        return site_file
    spans = [(line, uid) for line, end, uid in graph.nodes.get((where["file"], where["name"]), ())
             if line <= where["line"] <= end]
    if spans:
        return max(spans)[1]
    # A name the reader sees differently (C's TEST(Strtod) that a macro makes into
    # TestStrtod): the definition that starts on that line.
    starts = [uid for (path, _), found in graph.nodes.items() if path == where["file"]
              for line, _, uid in found if line == where["line"]]
    if len(starts) == 1:
        return starts[0]
    return f"?{where['file']}:{where['name']}@{where['line']}"


@dataclass
class Score:
    found: int = 0
    expected: int = 0
    hits: int = 0
    false: list = field(default_factory=list)
    missed: list = field(default_factory=list)

    def add(self, found: set, expected: set) -> None:
        self.found += len(found)
        self.expected += len(expected)
        self.hits += len(found & expected)
        self.false.extend(sorted(found - expected))
        self.missed.extend(sorted(expected - found))

    @property
    def precision(self) -> float:
        return self.hits / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.hits / self.expected if self.expected else 1.0


def expected_pairs(graph: Graph, ref: dict) -> tuple[set, set]:
    """The reference's (caller, callee) pairs, and the sites nobody can answer for."""
    pairs, unknown = set(), set()
    for site in ref["sites"]:
        if site["targets"] is None:
            unknown.add((site["file"], site["line"], site["name"]))
            continue
        caller = node_id(graph, site["caller"], site["file"])
        for target in site["targets"]:
            pairs.add((caller, node_id(graph, target, site["file"])))
    return pairs, unknown


def score(graph: Graph, ref: dict) -> tuple[Score, Score]:
    expected, unknown = expected_pairs(graph, ref)
    known_sites = {(s["file"], s["line"], s["name"]) for s in ref["sites"] if s["targets"]}
    found: set = set()
    for src, dst, callee, line, path in graph.edges:
        if (path, line, callee) in unknown and (path, line, callee) not in known_sites:
            continue
        found.add((src, dst))
    naive: set = set()
    for src, callee, line, path in graph.sites:
        if (path, line, callee) in unknown and (path, line, callee) not in known_sites:
            continue
        naive.update((src, uid) for uid in graph.names.get(callee, ()))
    ctx, base = Score(), Score()
    ctx.add(found, expected)
    base.add(naive, expected)
    return ctx, base


# --- report ----------------------------------------------------------------

def evaluate(project: Project, check: int, ctxkit: Path) -> dict:
    source = FETCHERS[project.source](project)
    root = prepare_root(project, source)
    db = index(project, root, ctxkit)
    graph = read_graph(db, project)
    if check:
        check_cli(root, db, project, graph, check, ctxkit)
    ref = reference(project, root, source, graph.files)
    ctx, base = score(graph, ref)
    return {"project": project, "tool": ref["tool"], "files": len(graph.files),
            "sites": len(ref["sites"]),
            "unknown": sum(s["targets"] is None for s in ref["sites"]), "ctxkit": ctx,
            "naive": base, "errors": ref.get("errors")}


def total(rows: list[dict], which: str) -> Score:
    out = Score()
    for row in rows:
        s = row[which]
        out.found += s.found
        out.expected += s.expected
        out.hits += s.hits
    return out


def line(label: str, rows: list[dict]) -> str:
    ctx, base = total(rows, "ctxkit"), total(rows, "naive")
    return (f"  {label:<28} {ctx.precision:6.3f} {ctx.recall:6.3f}   "
            f"{base.precision:6.3f} {base.recall:6.3f}   {ctx.expected:6d} pairs")


def report(rows: list[dict]) -> bool:
    ok = True
    print(f"  {'project':<28} {'ctxkit P':>6} {'R':>6}   {'names P':>6} {'R':>6}")
    for language in dict.fromkeys(r["project"].language for r in rows):
        mine = [r for r in rows if r["project"].language == language]
        print(f"{language} ({mine[0]['tool']}):")
        for r in mine:
            p = r["project"]
            split = "held-out" if p.held_out else "study" if p.study else "tuned"
            errors = r["errors"]
            print(line(f"{p.name} ({split})", [r])
                  + f"  {r['files']} files, {r['sites']} sites, {r['unknown']} unresolved"
                  + (f", {errors['errors']} compile errors in {errors['units with errors']}"
                     f" of {errors['units']} units" if errors else ""))
        for split, held, study in (("tuned", False, False), ("held-out", True, False),
                                   ("study", False, True)):
            part = [r for r in mine if (r["project"].held_out, r["project"].study) ==
                    (held, study)]
            if part:
                print(line(f"= {language} {split}", part))
                ctx = total(part, "ctxkit")
                want_p, want_r = TARGETS.get(language, (0.95, 0.85))
                ok &= study or (ctx.precision >= want_p and ctx.recall >= want_r)
    return ok


def write_details(rows: list[dict], path: Path) -> None:
    details = {r["project"].name: {"false": r["ctxkit"].false, "missed": r["ctxkit"].missed}
               for r in rows}
    path.write_text(json.dumps(details, indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", action="append", help="only this language (repeatable)")
    parser.add_argument("--project", action="append", help="only this project (repeatable)")
    parser.add_argument("--details", type=Path, help="write wrong and missed pairs here (JSON)")
    parser.add_argument("--check-cli", type=int, default=5, metavar="N",
                        help="compare N callee sets per project with `ctxkit callers` (5)")
    parser.add_argument("--add", action="append", default=[], metavar="LINE",
                        help="one more project to study, a line as in the held-out file "
                             "(`python requests pypi requests==2.32.3`): reported apart, "
                             "never a target")
    parser.add_argument("--ctxkit", type=Path, default=CTXKIT,
                        help="the ctxkit.py to measure (default: this checkout's)")
    args = parser.parse_args(argv)
    projects = [p for p in all_projects() + read_projects("\n".join(args.add), False, True)
                if (not args.language or p.language in args.language)
                and (not args.project or p.name in args.project)]
    rows = []
    for project in projects:
        print(f"... {project.language} {project.name}", file=sys.stderr, flush=True)
        rows.append(evaluate(project, args.check_cli, args.ctxkit.resolve()))
    ok = report(rows)
    if args.details:
        write_details(rows, args.details)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
