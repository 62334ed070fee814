"""import-cm (every code-memory schema version) and concurrent recording."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import CONSOLE_ARGV

# Code memory v0.1: file may be NULL, experiences have no status.
CM_V01 = """
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    name TEXT NOT NULL,
    file TEXT,
    fail_count INTEGER DEFAULT 0,
    success_count INTEGER DEFAULT 0,
    last_fail TEXT,
    last_success TEXT,
    risk_score REAL DEFAULT 0
);
CREATE TABLE experiences (
    id INTEGER PRIMARY KEY,
    symbol_id INTEGER REFERENCES symbols(id),
    type TEXT NOT NULL,
    lesson TEXT NOT NULL,
    detail TEXT,
    session_id TEXT,
    created_at TEXT DEFAULT (datetime('now'))
);
"""

# Code memory v0.2 and v0.3 (its design's data model); v0.3 sets user_version 2.
CM_V03 = """
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    name TEXT NOT NULL,
    file TEXT NOT NULL DEFAULT '',
    fail_count INTEGER DEFAULT 0,
    success_count INTEGER DEFAULT 0,
    last_fail TEXT,
    last_success TEXT,
    risk_score REAL DEFAULT 0,
    UNIQUE(project, file, name)
);
CREATE TABLE experiences (
    id INTEGER PRIMARY KEY,
    symbol_id INTEGER REFERENCES symbols(id),
    type TEXT NOT NULL,
    lesson TEXT NOT NULL,
    detail TEXT,
    session_id TEXT,
    status TEXT DEFAULT 'active',
    created_at TEXT DEFAULT (datetime('now'))
);
"""

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def ago(days: float) -> str:
    """A timestamp as code memory writes it (datetime('now'): seconds, no zone)."""
    when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=days)
    return when.strftime("%Y-%m-%d %H:%M:%S")


def build_cm(path: Path, schema: str, version: int = 0, wal: bool = False,
             with_status: bool = True) -> Path:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(schema)
    conn.execute("INSERT INTO symbols (id, project, name, file) VALUES "
                 "(1, 'drawings-db', 'AuthService.validate', ?)", (None if not with_status
                                                                    else "auth/service.py",))
    conn.execute("INSERT INTO symbols (id, project, name, file) VALUES "
                 "(2, 'drawings-db', 'parse', 'io/reader.py')")
    rows = [(1, 1, "fail", "JWT 만료 처리 누락", "refresh_token 확인", "s1", "active", ago(2)),
            (2, 1, "fail", f"leaked {SECRET}", None, None, "active", ago(2)),
            (3, 1, "success", "UTC 정규화 후 통과", None, None, "active", ago(1)),
            (4, 1, "fail", "clock skew", None, None, "resolved", ago(1)),
            (5, 2, "fail", "empty file crashes", None, None, "active", ago(40))]
    for row in rows:
        if with_status:
            conn.execute("INSERT INTO experiences (id, symbol_id, type, lesson, detail, "
                         "session_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        else:
            conn.execute("INSERT INTO experiences (id, symbol_id, type, lesson, detail, "
                         "session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         row[:6] + row[7:])
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    return path


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    siblings = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns, siblings


def import_twice(cli, source: Path) -> dict:
    before = fingerprint(source)
    first = cli("import-cm", str(source), "--json")
    assert first.code == 0, first.err
    second = cli("import-cm", str(source), "--json")
    assert second.code == 0, second.err
    assert fingerprint(source) == before  # untouched, no -wal/-shm created next to it
    report, again = first.json(), second.json()
    assert again["imported"] == 0 and again["duplicates"] == report["imported"]
    return report


def query(cli, *args):
    return cli("query", *args, "--json").json()["symbols"]


def test_import_v03_with_statuses_masking_and_risk(cli, tmp_path):
    source = build_cm(tmp_path / "code_memory.db", CM_V03, version=2, wal=True)
    report = import_twice(cli, source)
    assert (report["version"], report["imported"], report["symbols"]) == ("v0.3", 5, 2)
    assert report["redactions"] == 1
    obj = query(cli, "AuthService.validate", "--file", "auth/service.py", "--all")[0]
    by_text = {lesson["lesson"]: lesson for lesson in obj["lessons"]}
    assert by_text["clock skew"]["status"] == "resolved"
    assert "leaked ***REDACTED***" in by_text
    assert by_text["JWT 만료 처리 누락"]["detail"] == "refresh_token 확인"
    assert by_text["JWT 만료 처리 누락"]["session_id"] == "s1"
    # active: 2 fails then 1 ok -> 2 + 1.5 + 0 - 0.3
    assert (obj["fail_count"], obj["success_count"], obj["risk_score"]) == (2, 1, 3.2)
    # a fail 40 days old weighs 0.2: 1 + 0.3 + 1.5
    assert query(cli, "parse")[0]["risk_score"] == 2.8
    assert not any(b"ghp_" in p.read_bytes() for p in cli.db.parent.glob("ctxkit.db*"))


def test_import_v02(cli, tmp_path):
    source = build_cm(tmp_path / "v02.db", CM_V03, version=0)
    report = import_twice(cli, source)
    assert (report["version"], report["imported"]) == ("v0.2", 5)
    assert query(cli, "AuthService.validate")[0]["fail_count"] == 2


def test_import_v01_null_file_and_no_status(cli, tmp_path):
    source = build_cm(tmp_path / "v01.db", CM_V01, version=0, with_status=False)
    report = import_twice(cli, source)
    assert (report["version"], report["imported"]) == ("v0.1", 5)
    obj = query(cli, "AuthService.validate")[0]
    assert obj["file"] == ""  # NULL becomes ""
    # no status column: every lesson is active -> 3 fails, 1 ok, 1 consecutive
    assert (obj["fail_count"], obj["success_count"], obj["risk_score"]) == (3, 1, 5.7)


def test_import_partial_database_with_one_table(cli, tmp_path):
    only_symbols = tmp_path / "partial.db"
    conn = sqlite3.connect(only_symbols)
    conn.executescript(CM_V03.split("CREATE TABLE experiences")[0])
    conn.execute("INSERT INTO symbols (project, name, file) VALUES ('p', 'lonely', 'x.py')")
    conn.commit()
    conn.close()
    report = import_twice(cli, only_symbols)
    assert (report["version"], report["symbols"], report["imported"]) == ("partial", 1, 0)
    only_experiences = tmp_path / "partial2.db"
    conn = sqlite3.connect(only_experiences)
    conn.executescript("CREATE TABLE experiences" + CM_V03.split("CREATE TABLE experiences")[1])
    conn.execute("INSERT INTO experiences (symbol_id, type, lesson) VALUES (7, 'fail', 'x')")
    conn.commit()
    conn.close()
    report = import_twice(cli, only_experiences)
    assert (report["version"], report["orphans"], report["imported"]) == ("partial", 1, 0)


def test_import_keeps_recording_order_within_one_second(cli, tmp_path):
    source = tmp_path / "same_second.db"
    conn = sqlite3.connect(source)
    conn.executescript(CM_V03)
    conn.execute("INSERT INTO symbols (id, project, name) VALUES (1, 'p', 'S')")
    stamp = ago(0)
    # ids in recording order; texts sort the other way round
    for ident, kind, text in ((1, "fail", "z"), (2, "success", "y"), (3, "fail", "x"),
                              (4, "fail", "a")):
        conn.execute("INSERT INTO experiences (id, symbol_id, type, lesson, created_at) "
                     "VALUES (?, 1, ?, ?, ?)", (ident, kind, text, stamp))
    conn.commit()
    conn.close()
    cli("import-cm", str(source))
    # 3 fails, 1 ok, 2 consecutive after the ok: 3 + 1.5 + 3.0 - 0.3
    assert query(cli, "S")[0]["risk_score"] == 7.2


def test_import_from_project_and_bad_sources(cli, tmp_path):
    source = build_cm(tmp_path / "cm.db", CM_V03, version=2)
    empty = cli("import-cm", str(source), "--from-project", "elsewhere", "--json").json()
    assert empty["imported"] == 0
    assert cli("import-cm", str(source), "--from-project", "drawings-db",
               "--json").json()["imported"] == 5
    junk = tmp_path / "junk.db"
    junk.write_text("hello\n")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    for path, message in ((junk, "not a SQLite database"), (tmp_path / "missing.db",
                                                             "no such file"),
                          (other, "not a code-memory database")):
        result = cli.sub("import-cm", str(path))
        assert result.code == 1 and result.out == ""
        assert result.err.count("\n") == 1 and message in result.err, result.err


def test_import_reads_recent_commits_still_in_the_wal(cli, tmp_path):
    source = tmp_path / "live.db"
    conn = sqlite3.connect(source)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.executescript(CM_V03)
    conn.execute("INSERT INTO symbols (id, project, name) VALUES (1, 'p', 'Live')")
    conn.execute("INSERT INTO experiences (symbol_id, type, lesson) VALUES (1, 'fail', 'in wal')")
    conn.commit()
    wal = source.with_name("live.db-wal")
    assert wal.stat().st_size > 0
    before = (source.read_bytes(), wal.read_bytes())
    try:
        assert cli("import-cm", str(source), "--json").json()["imported"] == 1
    finally:
        after = (source.read_bytes(), wal.read_bytes())
        conn.close()
    assert after == before
    assert query(cli, "Live")[0]["lessons"][0]["lesson"] == "in wal"


@pytest.mark.slow
def test_eight_processes_record_fails_at_once(cli):
    """Real processes on a fresh database: nothing lost, no 'database is locked'."""
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("CTXKIT_")}
    procs = [subprocess.Popen([*CONSOLE_ARGV, "fail", "Shared.symbol",
                               f"lesson from process {i}", "--file", "core.py", "--json"],
                              cwd=cli.root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
             for i in range(8)]
    results = [(p.wait(timeout=120), p.stdout.read().decode(), p.stderr.read().decode())
               for p in procs]
    for code, out, err in results:
        assert code == 0 and err == "", err
        assert "locked" not in err
        json.loads(out)
    obj = query(cli, "Shared.symbol")[0]
    assert obj["fail_count"] == 8
    assert sorted(item["lesson"] for item in obj["lessons"]) == sorted(
        f"lesson from process {i}" for i in range(8))
    assert obj["risk_score"] == 8 + 1.5 + 12.0
    ids = sorted(json.loads(out)["id"] for _, out, _ in results)
    assert ids == list(range(ids[0], ids[0] + 8))


def test_import_of_rows_without_time_is_idempotent(cli, tmp_path):
    source = tmp_path / "no_time.db"
    conn = sqlite3.connect(source)
    conn.executescript(CM_V03)
    conn.execute("INSERT INTO symbols (id, project, name) VALUES (1, 'p', 'T')")
    conn.execute("INSERT INTO experiences (symbol_id, type, lesson, created_at) "
                 "VALUES (1, 'fail', 'when?', NULL)")
    conn.execute("INSERT INTO experiences (symbol_id, type, lesson) VALUES (1, 'weird', 'x')")
    conn.commit()
    conn.close()
    report = import_twice(cli, source)
    assert (report["imported"], report["invalid"]) == (1, 1)
    obj = query(cli, "T")[0]
    assert obj["risk_score"] == 1 + 0.3 + 1.5  # unknown time counts as old
