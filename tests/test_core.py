"""Shared core: global options, exit codes, database creation and protection."""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

import ctxkit


def test_no_command_is_a_usage_error(cli):
    result = cli()
    assert result.code == 2


def test_unknown_command_one_line_exit_2(cli):
    result = cli("frobnicate")
    assert result.code == 2
    assert result.err.count("\n") == 1 and result.err.startswith("ctxkit: error:")
    assert "Traceback" not in result.err


def test_database_created_private_with_gitignore(cli):
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    db.close()
    state = cli.root / ".ctxkit"
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(state / "ctxkit.db").st_mode) == 0o600
    assert (state / ".gitignore").read_text() == "*\n"
    conn = sqlite3.connect(state / "ctxkit.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == ctxkit.SCHEMA_VERSION


def test_newer_database_refused_untouched(cli, tmp_path):
    path = tmp_path / "newer.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(x)")
    conn.execute(f"PRAGMA user_version = {ctxkit.SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    env = ctxkit.make_env(db=str(path), cwd=cli.root)
    try:
        ctxkit.open_db(env)
    except ctxkit.DatabaseError as exc:
        assert "newer ctxkit" in str(exc)
    else:
        raise AssertionError("a newer database was opened")
    assert path.read_bytes() == before
    assert not (tmp_path / "newer.db-wal").exists()


def test_not_sqlite_refused(cli, tmp_path):
    path = tmp_path / "junk.db"
    path.write_text("hello, I am not a database\n")
    env = ctxkit.make_env(db=str(path), cwd=cli.root)
    try:
        ctxkit.open_db(env)
    except ctxkit.DatabaseError as exc:
        assert "not a SQLite database" in str(exc)
    else:
        raise AssertionError("a non-SQLite file was opened")


def test_normalize_file_spellings(cli):
    env = ctxkit.make_env(cwd=cli.root)
    spellings = ["src/auth.py", "./src/auth.py", "src\\auth.py", ".\\src\\auth.py",
                 "src/x/../auth.py", str(cli.root / "src" / "auth.py")]
    assert {ctxkit.normalize_path(s, env.place) for s in spellings} == {"src/auth.py"}
    assert ctxkit.normalize_path(None, env.place) == ""
    assert ctxkit.normalize_path("", env.place) == ""


def test_redact_patterns_and_non_secrets():
    secrets = [
        "sk-" + "a1B2" * 6,
        "ghp_" + "x" * 36,
        "Authorization: Bearer abcdefghijklmnop",
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "xoxb-1234567890-abcdefghij",
        "AIza" + "S" * 35,
        'password = "hunter2!"',
        "DB_PASSWORD=s3cr3t-value",
        "postgres://admin:topsecret@db.example.com:5432/app",
    ]
    for text in secrets:
        masked, count = ctxkit.redact(text)
        assert count >= 1, text
        assert ctxkit.REDACTED in masked
    masked, _ = ctxkit.redact("postgres://admin:topsecret@db.example.com/app")
    assert "topsecret" not in masked and "admin" in masked
    clean = ["def check(password: str) -> bool:", "password = self.password",
             "token = get_token()", "the secret of success", "https://example.com/a:b",
             "sk-short", "error: password is None"]
    for text in clean:
        assert ctxkit.redact(text) == (text, 0), text


def _sections_and_names():
    """ctxkit.py's sections in order, and the section of each top-level name."""
    import ast
    from pathlib import Path
    source = Path(ctxkit.__file__).read_text(encoding="utf-8")
    lines = source.splitlines()
    starts = [(number + 2, lines[number + 1][2:].split(":")[0].strip())
              for number in range(len(lines) - 2)
              if lines[number].startswith("# ====") and lines[number + 2].startswith("# ====")
              and not lines[number + 1].startswith("# ====")]
    order = list(dict.fromkeys(name for _, name in starts))

    def section(line):
        return ([None] + [name for start, name in starts if start <= line])[-1]

    tree = ast.parse(source)
    owner = {}
    for node in tree.body:
        targets = ([node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else
                   [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)])
        for name in targets:
            if section(node.lineno):
                owner.setdefault(name, section(node.lineno))
    return tree, order, section, owner


def _names_run(node):
    """The names evaluated when ``node`` runs; annotations are strings under
    ``from __future__ import annotations``, so they do not count."""
    import ast
    if isinstance(node, ast.Name):
        yield node.id
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.arg) or child is getattr(node, "returns", None):
            continue
        if isinstance(child, ast.AnnAssign):
            if child.value is not None:
                yield from _names_run(child.value)
            continue
        yield from _names_run(child)


def test_sections_call_only_what_comes_before_them():
    import ast
    tree, order, section, owner = _sections_and_names()
    assert order[:4] == ["Constants", "Errors", "Read path", "Core"] and order[-1] == "CLI"
    later = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        mine = order.index(section(node.lineno))
        imported_here = {alias.asname or alias.name.split(".")[0] for inner in ast.walk(node)
                         if isinstance(inner, (ast.Import, ast.ImportFrom))
                         for alias in inner.names}
        for name in set(_names_run(node)) - imported_here:
            theirs = owner.get(name)
            if theirs is None or order.index(theirs) <= mine:
                continue
            if node.name == "_create_current_schema" and name.endswith("_SCHEMA"):
                continue  # migrations give a fresh database every section's schema
            later.append(f"{node.name} ({section(node.lineno)}) uses {name} ({theirs})")
    assert not later, "\n".join(sorted(later))


@pytest.mark.parametrize("argv", [
    ["-p", "x", "query", "A"], ["--db=a.db", "-q", "note", "task", "t"], ["--json", "stats"],
    ["-p", "query", "snapshot", "list"], ["--db", "x", "fail", "A", "b", "-p", "y"],
    ["query", "A", "--inject", "--file", "a.py"], ["search", "boom", "--limit", "3"]])
def test_the_argv_scan_finds_the_command_argparse_runs(argv):
    assert ctxkit.scan_argv(argv).command == ctxkit.build_parser().parse_args(argv).command
