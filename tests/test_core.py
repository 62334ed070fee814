"""Shared core: global options, exit codes, database creation and protection."""

from __future__ import annotations

import os
import sqlite3
import stat

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
    assert {ctxkit.normalize_file(s, env) for s in spellings} == {"src/auth.py"}
    assert ctxkit.normalize_file(None, env) == ""
    assert ctxkit.normalize_file("", env) == ""


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
