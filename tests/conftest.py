"""Shared test fixtures: every test gets its own root, database and CLI runner.

``cli(...)`` runs ``ctxkit.main(argv)`` in-process (fast); ``cli.sub(...)``
runs ctxkit as a real subprocess (exit codes, stdout purity, start-up
imports, concurrency) the way the installed console script does: ``import
ctxkit`` with argv[0] ``ctxkit`` (the fast path first), then ``main()``.
The module's bytecode is compiled once per session, as an install compiles
it, so a subprocess does not compile 15,000 lines again. Tests that manage a
process themselves (signals, a pty, several at once) start it from
``CONSOLE_ARGV`` for the same reason; the script form ``python ctxkit.py``
(never cached) is run where it is what is tested: tests/test_fast_path.py and
the install-hooks tests of a checkout run from source.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CTXKIT = ROOT / "ctxkit.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(ROOT))

import ctxkit  # noqa: E402

# What the console script pip writes does, for this checkout's ctxkit.py; CONSOLE_ARGV
# starts it (subprocess.run(CONSOLE_ARGV + [ARGS...])) on the session's bytecode.
CONSOLE_SCRIPT = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.argv[0] = 'ctxkit'; "
                  "import ctxkit; sys.exit(ctxkit.main())")
CONSOLE_ARGV = [sys.executable, "-c", CONSOLE_SCRIPT]

# Fixture projects hold their own tests (some fail on purpose); they are run
# through `ctxkit run` by the tests that use them, never collected here.
collect_ignore = ["fixtures"]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


class Cli:
    def __init__(self, root: Path, monkeypatch, capsys, indexed: dict):
        self.root = root
        self._mp = monkeypatch
        self._capsys = capsys
        self._indexed = indexed

    @property
    def db(self) -> Path:
        return self.root / ".ctxkit" / "ctxkit.db"

    def __call__(self, *args: str, stdin: str | bytes | None = None,
                 cwd: Path | None = None) -> Result:
        """Run main(argv) in-process from ``cwd`` (default: the test root)."""
        self._capsys.readouterr()
        old = Path.cwd()
        os.chdir(cwd or self.root)
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else stdin
            self._mp.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        try:
            code = ctxkit.main([str(a) for a in args])
        except SystemExit as exc:          # --help, --version: the status a process exits with
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            os.chdir(old)
        captured = self._capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def index_fixture(self, name: str, *args: str) -> Result:
        """tests/fixtures/NAME in the root, indexed by ``index --json ARGS``: the real
        index runs once per worker, in a fresh repository of the same name, and each
        test gets a copy of its files and database (copy2 keeps the mtimes the index
        recorded, so the copy is as current as the original). A root that already holds
        anything but its .git is indexed in place, as the test set it up."""
        if any(path.name != ".git" for path in self.root.iterdir()):
            copy_fixture(name, self.root)
            return self("index", "--json", *args)
        key = (name, *args)
        if key not in self._indexed:
            built = self._indexed["base"] / str(len(self._indexed)) / self.root.name
            built.mkdir(parents=True)
            git(built, "init", "-q", "-b", "main")
            copy_fixture(name, built)
            self._indexed[key] = (built, self("index", "--json", *args, cwd=built))
        built, result = self._indexed[key]
        shutil.copytree(built, self.root, dirs_exist_ok=True,
                        ignore=lambda folder, names: [".git"] if folder == str(built) else [])
        return result

    def sub(self, *args: str, stdin: str | bytes | None = None, cwd: Path | None = None,
            env: dict | None = None, timeout: float = 120) -> Result:
        """Run ``ctxkit ARGS`` as a subprocess, as the installed console script runs."""
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
        full_env.update(env or {})
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = subprocess.run([*CONSOLE_ARGV, *map(str, args)],
                              cwd=cwd or self.root, input=data, capture_output=True,
                              env=full_env, timeout=timeout)
        return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                      proc.stderr.decode("utf-8", "replace"))


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env).stdout


def pytest_xdist_auto_num_workers(config) -> int | None:
    """`-n auto` (pyproject): a worker per core for a whole-suite run, none when the
    command names tests (files, ::ids, -k), where starting workers costs more."""
    if config.option.file_or_dir or config.option.keyword:
        return 0
    return None


@pytest.fixture(scope="session", autouse=True)
def compiled_module():
    """ctxkit.py's bytecode cache, written once as an install writes it (Python reads it
    even under PYTHONDONTWRITEBYTECODE, which only stops Python writing one)."""
    import py_compile
    py_compile.compile(str(CTXKIT), doraise=True)


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """An empty git repository as the ctxkit root, with no CTXKIT_* variables (nor the
    project folder a Claude Code session running the tests would give its hooks)."""
    for name in list(os.environ):
        if name.startswith("CTXKIT_") or name == "CLAUDE_PROJECT_DIR":
            monkeypatch.delenv(name)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture(scope="session")
def indexed_fixtures(tmp_path_factory) -> dict:
    """The fixture projects this worker has indexed (``Cli.index_fixture``)."""
    return {"base": tmp_path_factory.mktemp("indexed")}


@pytest.fixture
def cli(root, monkeypatch, capsys, indexed_fixtures) -> Cli:
    return Cli(root, monkeypatch, capsys, indexed_fixtures)


def callers_of(cli: Cli, symbol: str) -> set[str]:
    """The ids `ctxkit callers SYMBOL --json` lists, through the real script."""
    result = cli.sub("callers", symbol, "--json")
    assert result.code == 0, result.err
    return {r["id"] or r["name"] for r in result.json()["results"]}


def copy_fixture(name: str, dest: Path) -> Path:
    """Copy tests/fixtures/NAME into dest (a fresh root) and return dest."""
    shutil.copytree(FIXTURES / name, dest, dirs_exist_ok=True)
    return dest
