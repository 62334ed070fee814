"""Lessons (compatible with code memory): risk formula, statuses, inject block,
identity of (project, file, name), masking, graph ids, stale lessons, stats.

Most tests run main() in-process on a real SQLite file; exit codes, stdout
purity and the raw database bytes are checked through real subprocesses.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

import ctxkit

FOOTER = "Apply these lessons. Do not repeat these mistakes."


def record(cli, kind, symbol, lesson, *extra):
    result = cli(kind, symbol, lesson, *extra, "--json")
    assert result.code == 0, result.err
    return result.json()


def symbols(cli, *args):
    result = cli("query", *args, "--json")
    assert result.code == 0, result.err
    return result.json()["symbols"]


def only(cli, *args):
    found = symbols(cli, *args)
    assert len(found) == 1, found
    return found[0]


# --- risk formula -------------------------------------------------------------


def test_risk_formula_at_each_step_including_resolve_and_deactivate(cli):
    # risk = fails + recency(1.0 within 7 days) * 1.5 + consecutive * 1.5 - oks * 0.3
    steps = [("fail", 4.0, "low"), ("fail", 6.5, "medium"), ("fail", 9.0, "medium"),
             ("ok", 4.2, "low"), ("fail", 6.7, "medium")]
    ids = []
    for kind, score, level in steps:
        data = record(cli, kind, "AuthService.validate", f"{kind} lesson", "--file", "auth.py")
        ids.append(data["id"])
        assert (data["symbol"]["risk_score"], data["symbol"]["level"]) == (score, level)
    # resolving the success: 4 fails, all consecutive -> 4 + 1.5 + 6.0
    resolved = cli("resolve", ids[3], "--json").json()
    assert resolved["symbol"]["risk_score"] == 11.5
    assert resolved["symbol"]["level"] == "high"
    assert resolved["symbol"]["success_count"] == 0
    assert resolved["symbol"]["last_success"] is None
    # deactivating a fail: 3 fails -> 3 + 1.5 + 4.5
    cli("deactivate", ids[0])
    obj = only(cli, "AuthService.validate", "--file", "auth.py")
    assert (obj["fail_count"], obj["success_count"], obj["risk_score"]) == (3, 0, 9.0)
    assert [lesson["id"] for lesson in obj["lessons"]] == [ids[4], ids[2], ids[1]]
    obj = only(cli, "AuthService.validate", "--all")
    assert {lesson["id"]: lesson["status"] for lesson in obj["lessons"]} == {
        ids[0]: "inactive", ids[1]: "active", ids[2]: "active", ids[3]: "resolved",
        ids[4]: "active"}
    # the stored counters follow the same rule
    conn = sqlite3.connect(cli.db)
    row = conn.execute("SELECT fail_count, success_count, risk_score FROM lesson_symbols "
                       "WHERE name = 'AuthService.validate'").fetchone()
    assert row == (3, 0, 9.0)


def test_risk_levels_and_floor_at_zero(cli):
    for _ in range(6):
        record(cli, "fail", "Hot.path", "again")
    assert only(cli, "Hot.path")["risk_score"] == 16.5  # 6 + 1.5 + 9
    assert only(cli, "Hot.path")["level"] == "critical"
    record(cli, "fail", "Cold", "once")
    for _ in range(9):
        record(cli, "ok", "Cold", "fine")
    assert only(cli, "Cold")["risk_score"] == 0.0  # 1 + 1.5 + 0 - 2.7 < 0
    assert [ctxkit.risk_level(s) for s in (0, 4.99, 5, 9.99, 10, 14.99, 15, 40)] == [
        "low", "low", "medium", "medium", "high", "high", "critical", "critical"]


def test_consecutive_fails_follow_recording_order_within_one_second(cli):
    # "b", "a" fail, then an ok "0", then fail "c": all in the same second.
    for kind, text in (("fail", "b"), ("fail", "a"), ("ok", "0"), ("fail", "c")):
        record(cli, kind, "Same.second", text)
    obj = only(cli, "Same.second")
    assert obj["risk_score"] == 3 + 1.5 + 1 * 1.5 - 0.3


def test_resolving_every_fail_clears_the_risk(cli):
    first = record(cli, "fail", "F", "one")["id"]
    second = record(cli, "fail", "F", "two")["id"]
    cli("resolve", first)
    data = cli("resolve", second, "--json").json()
    assert data["symbol"]["risk_score"] == 0.0 and data["symbol"]["last_fail"] is None
    assert symbols(cli, "F") == []  # no active lesson left: not listed
    assert only(cli, "F", "--all")["fail_count"] == 0


# --- inject block -------------------------------------------------------------


def test_inject_block_byte_for_byte(cli):
    record(cli, "ok", "AuthService.validate", "UTC normalized, tests pass",
           "--file", "src/auth/service.py")
    for text in ("JWT expiry not handled", "refresh token ignored", "clock skew"):
        record(cli, "fail", "AuthService.validate", text, "--file", "src/auth/service.py")
    record(cli, "fail", "AuthService.validate", "resolved one", "--file", "src/auth/service.py")
    last = record(cli, "fail", "AuthService.validate", "timezone dropped",
                  "--file", "src/auth/service.py")
    # 5 fails, 1 ok, 5 consecutive: 13.7; resolving one: 4 + 1.5 + 6.0 - 0.3 = 11.2
    resolved_id = last["id"] - 1
    cli("resolve", resolved_id)
    result = cli.sub("query", "AuthService.validate", "--file", "./src/auth/service.py",
                     "--inject")
    assert result.code == 0 and result.err == ""
    assert result.out == (
        "[PAST EXPERIENCE — src/auth/service.py:AuthService.validate (risk: 11.2, high)]\n"
        "- timezone dropped\n"
        "- clock skew\n"
        "- refresh token ignored\n"
        "- JWT expiry not handled\n"
        "- UTC normalized, tests pass\n"
        f"{FOOTER}\n")


def test_inject_without_file_and_whole_number_score(cli):
    for text in ("one", "two  spaces kept", "three\n  folded onto one line", "four"):
        record(cli, "fail", "Cache.get", text)
    result = cli("query", "Cache.get", "--inject")
    assert result.out == ("[PAST EXPERIENCE — Cache.get (risk: 11.5, high)]\n"
                          "- four\n- three folded onto one line\n- two  spaces kept\n- one\n"
                          + FOOTER + "\n")


def test_inject_prints_nothing_below_ten(cli):
    for _ in range(3):
        record(cli, "fail", "Almost", "x")
    assert only(cli, "Almost")["risk_score"] == 9.0
    result = cli.sub("query", "Almost", "--inject")
    assert (result.code, result.out, result.err) == (0, "", "")
    unknown = cli.sub("query", "Nobody", "--inject")
    assert (unknown.code, unknown.out) == (0, "")


def test_inject_stays_under_10000_characters_most_recent_first(cli):
    total = 150
    for i in range(total):
        record(cli, "fail", "Big.symbol", f"lesson {i:03d} " + "x" * 120)
    result = cli("query", "Big.symbol", "--inject")
    out = result.out
    assert len(out) < 10000
    lines = out.splitlines()
    assert lines[0] == "[PAST EXPERIENCE — Big.symbol (risk: 376.5, critical)]"
    shown = [line for line in lines if line.startswith("- lesson")]
    assert shown[0].startswith(f"- lesson {total - 1:03d}")  # newest first
    numbers = [int(line.split()[2]) for line in shown]
    assert numbers == sorted(numbers, reverse=True)
    assert FOOTER in lines
    left = total - len(shown)
    assert left > 0
    assert lines[-1].startswith(f"[{left} more lessons left out")


def test_inject_text_limit_with_many_symbols_and_huge_lessons():
    objs = []
    for i in range(40):
        lessons = [{"id": i * 100 + j, "type": "fail", "lesson": "y" * 5000, "detail": None,
                    "status": "active", "session_id": None,
                    "created_at": f"2026-01-01T00:00:{j:02d}.000000Z", "stale": False}
                   for j in range(20)]
        objs.append({"project": "p", "name": f"S{i}", "file": "", "risk_score": 20.0 + i,
                     "level": "critical", "lessons": lessons})
    text = ctxkit.inject_text(objs)
    assert len(text) < 10000
    assert text.startswith("[PAST EXPERIENCE — S39 (risk: 59.0, critical)]\n")
    assert "left out" in text.splitlines()[-1]
    assert ctxkit.inject_text(objs, limit=3000).__len__() < 3000
    assert ctxkit.inject_text([{**objs[0], "risk_score": 9.99}]) == ""


@pytest.mark.parametrize("sql", ["SQL_LESSONS_OF_SYMBOL", "SQL_LATEST_TIME"])
def test_a_symbols_lessons_are_read_through_its_own_index(cli, sql):
    # A symbol's lessons must come from lessons_symbol (its own rows, in order), not from
    # a walk over every lesson of the project: with no statistics, SQLite's planner took
    # lessons_recent (project, created_at) for "project = ? AND symbol_id = ?".
    for number in range(30):
        record(cli, "fail", f"f{number % 3}", f"lesson {number}", "--file", "a.py")
    conn = sqlite3.connect(cli.db)
    plan = conn.execute(f"EXPLAIN QUERY PLAN {getattr(ctxkit, sql)}", ("default", 1)).fetchall()
    conn.close()
    assert "lessons_symbol" in " ".join(str(row[-1]) for row in plan), plan


# --- identity: files and names ------------------------------------------------------


def test_path_spellings_map_to_one_identity(cli):
    spellings = ["src/auth.py", "./src/auth.py", "src\\auth.py", ".\\src\\auth.py",
                 str(cli.root / "src" / "auth.py")]
    for spelling in spellings:
        record(cli, "fail", "login", f"via {spelling}", "--file", spelling)
    found = symbols(cli, "login")
    assert len(found) == 1
    assert (found[0]["file"], found[0]["fail_count"]) == ("src/auth.py", 5)
    for spelling in spellings:
        assert only(cli, "login", "--file", spelling)["fail_count"] == 5


def test_same_name_in_two_files_stays_apart(cli):
    record(cli, "fail", "validate", "a once", "--file", "a.py")
    record(cli, "fail", "validate", "b once", "--file", "b.py")
    record(cli, "fail", "validate", "b twice", "--file", "b.py")
    record(cli, "fail", "validate", "no file")
    everywhere = symbols(cli, "validate")
    assert {(o["file"], o["fail_count"]) for o in everywhere} == {
        ("a.py", 1), ("b.py", 2), ("", 1)}
    assert everywhere[0]["file"] == "b.py"  # riskiest first
    lessons = only(cli, "validate", "--file", "a.py")["lessons"]
    assert [item["lesson"] for item in lessons] == ["a once"]
    assert only(cli, "validate", "--first")["file"] == "b.py"


def test_graph_id_is_split_into_file_and_name(cli):
    record(cli, "fail", "src/auth/service.py:AuthService.validate", "expiry")
    record(cli, "fail", "AuthService.validate", "again", "--file", "src/auth/service.py")
    obj = only(cli, "src/auth/service.py:AuthService.validate")
    assert (obj["file"], obj["name"], obj["fail_count"]) == (
        "src/auth/service.py", "AuthService.validate", 2)
    clash = cli("fail", "src/a.py:F", "x", "--file", "src/b.py")
    assert clash.code == 2 and "--file" in clash.err


def test_bare_name_finds_qualified_name_when_nothing_exact(cli):
    record(cli, "fail", "AuthService.validate", "x", "--file", "s.py")
    assert only(cli, "validate")["name"] == "AuthService.validate"


def test_project_option_keeps_projects_apart(cli):
    record(cli, "fail", "X", "in one", "-p", "one")
    record(cli, "fail", "X", "in two", "--project", "two")
    record(cli, "fail", "X", "in two again", "-p", "two")
    assert only(cli, "-p", "one", "X")["fail_count"] == 1
    assert only(cli, "X", "-p", "two")["fail_count"] == 2
    assert symbols(cli, "X") == []  # default project: the root folder's name


# --- query listing -------------------------------------------------------------------


def test_query_without_symbol_lists_by_risk_with_top_and_file(cli):
    for name, count in (("A", 1), ("B", 3), ("C", 2)):
        for _ in range(count):
            record(cli, "fail", name, "x", "--file", "m.py" if name != "C" else "n.py")
    assert [o["name"] for o in symbols(cli)] == ["B", "C", "A"]
    assert [o["name"] for o in symbols(cli, "--top", "2")] == ["B", "C"]
    assert [o["name"] for o in symbols(cli, "--file", "m.py")] == ["B", "A"]
    human = cli("query")
    assert human.code == 0 and human.out.index("B ") < human.out.index("A ")
    assert cli("query", "--top", "0").code == 2


def test_human_query_shows_ids_status_and_detail(cli):
    first = record(cli, "fail", "Svc.run", "forgot retries", "-d", "see incident 42")["id"]
    record(cli, "ok", "Svc.run", "retries added", "--session", "s-1")
    cli("deactivate", first)
    out = cli("query", "Svc.run", "--all").out
    assert f"#{first}" in out and "[inactive]" in out and "see incident 42" in out
    data = only(cli, "Svc.run")
    assert data["lessons"][0]["session_id"] == "s-1"
    assert cli("query", "Nobody").out.strip() == "no lessons for Nobody"


# --- masking ---------------------------------------------------------------------------

SECRETS = {
    "seed": "sk-" + "Q7wE9rT1yU3iO5pA2sD4fG6h",
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXZhbHVlLWhlcmU",
    "password": "hunter2-Very-Secret",
    "url": "S3cretDbPass",
}


def test_secrets_masked_in_raw_database_bytes_including_wal(cli):
    lesson = f"token {SECRETS['seed']} and {SECRETS['github']} leaked"
    detail = (f"Authorization: Bearer {SECRETS['jwt']}; password = \"{SECRETS['password']}\"; "
              f"postgres://app:{SECRETS['url']}@db:5432/x")
    cli("fail", "Leaky", "first")  # creates the database
    # Hold a connection open so the -wal file is not checkpointed away.
    holder = sqlite3.connect(cli.db)
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("SELECT count(*) FROM lessons").fetchone()
    result = cli.sub("fail", "Leaky", lesson, "-d", detail, "--session", SECRETS["seed"])
    assert result.code == 0, result.err
    assert "masked" in result.err
    files = [cli.db, cli.db.with_name("ctxkit.db-wal"), cli.db.with_name("ctxkit.db-shm")]
    assert files[1].exists() and files[1].stat().st_size > 0
    raw = b"".join(path.read_bytes() for path in files if path.exists())
    holder.close()
    for secret in SECRETS.values():
        assert secret.encode() not in raw, secret
    assert b"***REDACTED***" in raw
    obj = only(cli, "Leaky")
    stored = obj["lessons"][0]
    assert stored["lesson"] == "token ***REDACTED*** and ***REDACTED*** leaked"
    assert "app:***REDACTED***@db" in stored["detail"]
    assert stored["session_id"] == "***REDACTED***"


# --- non-ASCII ---------------------------------------------------------------------------


def test_korean_and_other_non_ascii_text(cli):
    record(cli, "fail", "인증서비스.검증", "JWT 만료 처리 누락", "--file", "src/인증.py",
           "-d", "refresh_token 확인 — ✓ émoji 🚀")
    for _ in range(3):
        record(cli, "fail", "인증서비스.검증", "UTC 정규화 필요", "--file", "src/인증.py")
    result = cli.sub("query", "src/인증.py:인증서비스.검증", "--json")
    obj = json.loads(result.out)["symbols"][0]
    assert obj["file"] == "src/인증.py" and obj["name"] == "인증서비스.검증"
    assert obj["lessons"][-1]["detail"] == "refresh_token 확인 — ✓ émoji 🚀"
    inject = cli.sub("query", "인증서비스.검증", "--inject").out
    assert inject.startswith("[PAST EXPERIENCE — src/인증.py:인증서비스.검증 (risk: 11.5, high)]\n")
    assert "- JWT 만료 처리 누락\n" in inject
    human = cli.sub("query", "인증서비스.검증").out
    assert "UTC 정규화 필요" in human


# --- stats ---------------------------------------------------------------------------------


def test_stats_totals_and_last_lesson_time(cli):
    empty = cli("stats", "--json").json()
    assert empty["lessons"] == 0 and empty["last_lesson_at"] is None
    record(cli, "fail", "A.one", "x")
    record(cli, "fail", "A.one", "y")
    last = record(cli, "ok", "B.two", "z")
    data = cli("stats", "--json").json()
    assert (data["symbols"], data["lessons"], data["fail"], data["success"]) == (2, 3, 2, 1)
    assert data["last_lesson"]["id"] == last["id"]
    assert data["last_lesson_at"] == last["symbol"]["last_success"]
    human = cli("stats").out
    assert "last lesson: " + data["last_lesson_at"][:10] in human
    one = cli("stats", "A", "--json").json()
    assert (one["symbols"], one["lessons"]) == (1, 2)


# --- graph: stale lessons and lessons_for_node -----------------------------------------------


def add_node(cli, path, qualname, body_hash, line=1):
    """A graph node as the indexer writes it (the graph section fills these tables)."""
    env = ctxkit.make_env(cwd=cli.root)
    db = ctxkit.open_db(env)
    with db.atomic():
        db.execute("INSERT OR IGNORE INTO files (project, path, language) VALUES (?, ?, ?)",
                   (env.project, path, "python"))
        file_id = db.one("SELECT id FROM files WHERE project = ? AND path = ?",
                         (env.project, path))[0]
        db.execute("INSERT INTO nodes (project, file_id, uid, kind, name, qualname, path, line, "
                   "end_line, body_hash) VALUES (?, ?, ?, 'method', ?, ?, ?, ?, ?, ?) "
                   "ON CONFLICT(project, uid) DO UPDATE SET body_hash = excluded.body_hash",
                   (env.project, file_id, f"{path}:{qualname}", qualname.split(".")[-1],
                    qualname, path, line, line + 5, body_hash))
    db.close()
    return env


SVC = "class Svc:\n    def handle(self):\n        return 1\n"


def indexed(cli, files):
    """Real files under the root, indexed by the real indexer."""
    for path, text in files.items():
        (cli.root / path).parent.mkdir(parents=True, exist_ok=True)
        (cli.root / path).write_text(text)
    assert cli("index").code == 0
    return ctxkit.make_env(cwd=cli.root)


def test_code_hash_kept_and_lesson_marked_stale_when_code_changes(cli):
    indexed(cli, {"lib/svc.py": SVC})
    record(cli, "fail", "Svc.handle", "forgot the lock", "--file", "lib/svc.py")
    conn = sqlite3.connect(cli.db)
    assert conn.execute("SELECT code_hash FROM lessons").fetchone()[0]
    assert only(cli, "Svc.handle")["lessons"][0]["stale"] is False
    (cli.root / "lib/svc.py").write_text(SVC.replace("return 1", "return 2"))
    assert cli("index").code == 0
    assert only(cli, "Svc.handle")["lessons"][0]["stale"] is True
    assert "[stale" in cli("query", "Svc.handle").out
    assert cli("stats", "--json").json()["stale"] == 1


def test_graph_uid_resolves_even_without_a_path_looking_prefix(cli):
    add_node(cli, "Makefile", "build", "h")
    record(cli, "fail", "Makefile:build", "x")
    obj = only(cli, "build")
    assert (obj["file"], obj["name"]) == ("Makefile", "build")


def test_every_spelling_of_one_symbol_is_one_symbol(cli):
    env = indexed(cli, {"lib/svc.py": SVC})
    record(cli, "fail", "Svc.handle", "qualified", "--file", "lib/svc.py")
    record(cli, "fail", "handle", "bare, no file")
    record(cli, "fail", "lib/svc.py:Svc.handle", "by id")
    record(cli, "fail", "Svc.handle", "other file", "--file", "lib/other.py")
    db = ctxkit.open_db(env)
    try:
        node = ctxkit.graph_find_nodes(db, env.project, "Svc.handle", "lib/svc.py")[0]
        merged = ctxkit.lessons_for_node(db, env.project, node)
        assert (merged["name"], merged["file"]) == ("Svc.handle", "lib/svc.py")
        assert sorted(item["lesson"] for item in merged["lessons"]) == [
            "bare, no file", "by id", "qualified"]
        assert merged["fail_count"] == 3 and merged["risk_score"] == 3 + 1.5 + 4.5
        by_name = ctxkit.lesson_symbols(db, env.project, "Svc.handle", "lib/svc.py")
        assert [o["risk_score"] for o in by_name] == [merged["risk_score"]]
        lonely = ctxkit.graph_find_nodes(db, env.project, "Svc.handle")[0]
        assert lonely.id == "lib/svc.py:Svc.handle"
    finally:
        db.close()


def test_lessons_for_node_none_without_active_lessons(cli):
    env = indexed(cli, {"a.py": "def f():\n    return 1\n"})
    lesson = record(cli, "fail", "f", "x", "--file", "a.py")["id"]
    cli("resolve", lesson)
    db = ctxkit.open_db(env)
    try:
        node = ctxkit.graph_find_nodes(db, env.project, "f")[0]
        assert ctxkit.lessons_for_node(db, env.project, node) is None
    finally:
        db.close()


# --- JSON purity and bad input ----------------------------------------------------------


def test_every_command_json_is_one_document(cli):
    first = cli.sub("fail", "J", "x", "--json")
    ident = json.loads(first.out)["id"]
    outputs = [first, cli.sub("ok", "J", "y", "--json"), cli.sub("--json", "query", "J"),
               cli.sub("query", "J", "--inject", "--json"), cli.sub("resolve", ident, "--json"),
               cli.sub("deactivate", ident, "--json"), cli.sub("stats", "--json"),
               cli.sub("stats", "J", "--json"), cli.sub("query", "--json")]
    for result in outputs:
        assert result.code == 0, result.err
        assert result.out.count("\n") == 1
        json.loads(result.out)
    data = json.loads(first.out)
    assert set(data) == {"id", "symbol"}
    assert set(data["symbol"]) == {"project", "name", "file", "fail_count", "success_count",
                                   "last_fail", "last_success", "risk_score", "level",
                                   "lessons"}
    assert set(data["symbol"]["lessons"][0]) == {"id", "type", "lesson", "detail", "status",
                                                 "session_id", "created_at", "stale"}


def one_line_error(result, code):
    assert result.code == code, (result.code, result.out, result.err)
    assert result.out == ""
    assert result.err.startswith("ctxkit: error: ") and result.err.count("\n") == 1
    assert "Traceback" not in result.err
    return result.err


def test_unknown_lesson_id(cli):
    record(cli, "fail", "X", "x")
    assert "no lesson #999" in one_line_error(cli.sub("resolve", "999"), 1)
    assert "no lesson #5" in one_line_error(cli.sub("deactivate", "5", "-p", "other"), 1)
    one_line_error(cli.sub("resolve", "abc"), 2)


def test_empty_lesson_and_symbol(cli):
    assert "lesson is empty" in one_line_error(cli.sub("fail", "X", ""), 2)
    assert "lesson is empty" in one_line_error(cli.sub("ok", "X", "   \n"), 2)
    assert "symbol name is empty" in one_line_error(cli.sub("fail", " ", "x"), 2)
    one_line_error(cli.sub("fail", "X"), 2)
    assert not cli.db.exists()


def test_database_that_is_not_sqlite(cli, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_text("not a database at all\n" * 20)
    for args in (("fail", "X", "x"), ("query", "X"), ("stats",)):
        assert "not a SQLite database" in one_line_error(cli.sub("--db", junk, *args), 1)
    assert junk.read_text() == "not a database at all\n" * 20


def test_read_only_database(cli):
    import os
    import subprocess
    record(cli, "fail", "X", "kept")
    if os.geteuid() == 0:  # root writes through file modes: use the immutable flag
        made = subprocess.run(["chattr", "+i", str(cli.db)], capture_output=True)
        if made.returncode:
            pytest.skip("running as root without chattr +i support")
        undo = ["chattr", "-i", str(cli.db)]
    else:
        cli.db.chmod(0o444)
        undo = ["chmod", "600", str(cli.db)]
    try:
        assert "read-only" in one_line_error(cli.sub("fail", "X", "more"), 1)
        assert "read-only" in one_line_error(cli.sub("resolve", "1"), 1)
        still = cli.sub("query", "X", "--json")
        assert still.code == 0 and json.loads(still.out)["symbols"][0]["fail_count"] == 1
    finally:
        subprocess.run(undo, check=True)


def test_stats_outputs_flag_is_registered():
    parser = ctxkit.build_parser()
    args = parser.parse_args(["stats", "--outputs"])
    assert args.outputs is True and args.func is ctxkit.cmd_stats


def test_quiet_recording_prints_nothing_and_stats_takes_a_graph_id(cli):
    assert cli("fail", "a/b.py:Thing.run", "x", "-q").out == ""
    record(cli, "fail", "Thing.run", "other file", "--file", "c.py")
    assert cli("-q", "resolve", "1").out == ""
    stats = cli("stats", "a/b.py:Thing.run", "--json").json()
    assert (stats["symbols"], stats["lessons"], stats["resolved"]) == (1, 1, 1)
    assert cli("stats", "Thing", "--json").json()["symbols"] == 2


def test_reads_without_a_database_create_nothing(cli):
    assert cli("query", "X").out.strip() == "no lessons for X"
    assert cli("query", "X", "--inject").out == ""
    assert cli("stats", "--json").json()["lessons"] == 0
    assert one_line_error(cli.sub("resolve", "1"), 1)
    assert not (cli.root / ".ctxkit").exists()


def test_query_inject_imports_no_heavy_module(cli):
    """The pre-edit path must start fast: no tree-sitter, no tiktoken, one sub-parser."""
    import subprocess
    import sys
    for _ in range(4):
        record(cli, "fail", "Hot", "x")
    code = ("import io, sys, contextlib, ctxkit\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    ctxkit.main(['query', 'Hot', '--inject'])\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tree_sitter', 'tree_sitter_language_pack', 'tiktoken', 'tiktoken_ext', "
            "'shutil', '_strptime'))\n"
            "print(repr(out.getvalue()[:18]), heavy)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=cli.root, capture_output=True,
                          text=True, env={"PYTHONPATH": str(ctxkit.Path(ctxkit.__file__).parent),
                                          "PATH": "/usr/bin:/bin"})
    assert proc.stdout.strip() == "'[PAST EXPERIENCE —' []", proc.stderr


def test_opening_a_read_only_database_keeps_it_read_only(cli):
    record(cli, "fail", "X", "kept")
    cli.db.chmod(0o444)
    try:
        cli("query", "X")
        assert cli.db.stat().st_mode & 0o777 == 0o400  # private, still not writable
    finally:
        cli.db.chmod(0o600)
