"""Schema history: an old database migrated forward equals a fresh one.

Each version's SQL is frozen in ``ctxkit.MIGRATIONS``. A database built from the
version-1 SQL alone, then opened by the real CLI, must end with exactly the
schema a brand-new database gets from the sections' current *_SCHEMA, and keep
its rows.
"""

from __future__ import annotations

import sqlite3

import ctxkit


def _schema(path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
            "ORDER BY type, name").fetchall()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()
    normal = [(kind, name, " ".join((sql or "").split())) for kind, name, sql in rows]
    return [("version", "", str(version)), *normal]


def _build_version_1(path, project: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in ctxkit.split_sql(ctxkit.MIGRATIONS[0]):
            conn.execute(statement)
        conn.execute("INSERT INTO lesson_symbols (id, project, name, fail_count, risk_score) "
                     "VALUES (1, ?, 'old.sym', 1, 3.0)", (project,))
        conn.execute("INSERT INTO lessons (project, symbol_id, type, lesson, created_at) "
                     "VALUES (?, 1, 'fail', 'kept across the upgrade', "
                     "'2026-01-01T00:00:00.000000Z')", (project,))
        conn.execute("PRAGMA user_version = 1")
        conn.commit()
    finally:
        conn.close()


def test_version_1_database_migrates_to_the_fresh_schema(cli, tmp_path):
    fresh = cli("fail", "new.sym", "made fresh")
    assert fresh.code == 0, fresh.err
    fresh_schema = _schema(cli.db)

    cli.db.unlink()
    for suffix in ("-wal", "-shm"):
        cli.db.with_name(cli.db.name + suffix).unlink(missing_ok=True)
    _build_version_1(cli.db, cli.root.name)

    result = cli("query", "old.sym", "--json")
    assert result.code == 0, result.err
    assert _schema(cli.db) == fresh_schema
    lessons = result.json()["symbols"][0]["lessons"]
    assert [lesson["lesson"] for lesson in lessons] == ["kept across the upgrade"]


def test_every_version_has_one_frozen_step():
    assert len(ctxkit.MIGRATIONS) == ctxkit.SCHEMA_VERSION
    assert all(isinstance(step, str) and step.strip() for step in ctxkit.MIGRATIONS)
