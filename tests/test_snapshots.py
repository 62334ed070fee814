"""note, search --events, snapshot save/check/restore/list/show."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import git
from hookkit import fail, make_project, payload, seed_graph

import ctxkit


@pytest.fixture
def project(cli, root):
    make_project(root)
    seed_graph(cli, root)
    return root


def snapshot_text(root):
    return (root / ".context-snapshot.md").read_text(encoding="utf-8")


def section(text, title):
    """The lines of one `## title` section."""
    _, sections = ctxkit.split_sections(text)
    return [line for t, lines in sections if t == title for line in lines if line.strip()]


# --- notes and event search ------------------------------------------------------------------


def test_note_records_and_redacts(cli, root):
    result = cli("note", "decision", "use", "token", "sk-abcdefghijklmnopqrstuvwxyz123456",
                 "--json")
    assert result.code == 0
    data = result.json()
    assert data["kind"] == "decision" and "***REDACTED***" in data["text"]
    assert "sk-abc" not in cli.db.read_bytes().decode("latin-1")


@pytest.mark.parametrize("args, code", [(("two words", "x"), 2), (("decision", " "), 2),
                                        (("decision",), 2)])
def test_note_usage_errors(cli, root, args, code):
    result = cli("note", *args)
    assert result.code == code and result.err.startswith("ctxkit: error:")


def search(cli, query, *extra):
    return cli("search", "--events", query, *extra, "--json").json()


def test_search_events_ranks_and_accepts_any_text(cli, root):
    cli("note", "decision", "keep the v1 token format because mobile clients parse it")
    cli("note", "error", "KeyError: 'refresh_token' in AuthService.refresh")
    cli("note", "task", "rename the login form")
    hits = search(cli, "token format")["hits"]
    assert hits[0]["kind"] == "decision"
    assert search(cli, "refresh_token")["hits"][0]["kind"] == "error"
    odd = search(cli, 'AND "( NEAR* login')                      # FTS5 syntax is not an error
    assert odd["status"] == "ok" and odd["hits"][0]["kind"] == "task"
    assert search(cli, "nothing-like-this")["status"] == "no_hits"


def test_events_are_per_project(cli, root):
    cli("-p", "other", "note", "decision", "secret plan")
    assert search(cli, "secret plan")["hits"] == []


# --- snapshot save -------------------------------------------------------------------------------


def test_save_fills_git_state_files_symbols_and_notes(cli, project):
    head = git(project, "rev-parse", "HEAD").strip()
    auth = project / "src" / "auth.py"
    auth.write_text(auth.read_text().replace("record.renew()", "record.renew(force=True)"))
    (project / "src" / "new.py").write_text("a = 1\nb = 2\n")
    (project / "src" / "__init__.py").unlink()
    cli("note", "task", "make refresh idempotent (T-12)")
    cli("note", "todo", "add a regression test")
    cli("note", "decision", "renew with force: the cache may hold a stale record")
    cli("note", "pending", "reviewer: answer on the cache TTL")
    cli("note", "error", "AttributeError: 'NoneType' object has no attribute 'renew'")
    result = cli("snapshot", "save", "--json")
    assert result.code == 0 and result.json()["files"] == 3
    text = snapshot_text(project)
    assert text.startswith("# Context Snapshot (")
    assert f"branch: main · HEAD: {head[:12]} · saved by: cli" in text
    files = section(text, "Modified files")
    assert "- src/auth.py — modified; +1 −1; symbols: AuthService.refresh" in files
    assert "- src/new.py — added; new file, 2 lines" in files
    assert "- src/__init__.py — deleted" in files
    assert section(text, "Current task") == ["- make refresh idempotent (T-12)"]
    assert section(text, "Progress") == ["- [ ] add a regression test"]
    assert section(text, "Key decisions") == [
        "- renew with force: the cache may hold a stale record"]
    assert section(text, "Pending reports/responses") == ["- reviewer: answer on the cache TTL"]
    assert "AttributeError" in section(text, "Debugging context")[0]
    assert ".context-snapshot.md" not in "\n".join(files)
    saved = cli("snapshot", "show", "last").out
    assert saved == text


def test_agent_text_is_kept_verbatim_in_its_sections(cli, project, tmp_path):
    (project / "src" / "auth.py").write_text("# changed\n")
    cli("note", "decision", "from a note")
    agent = ("# Context Snapshot (ignored title)\n"
             "Fixing **refresh**  (T-12) — keep `  spacing`\n\n"
             "## 진행 상태\n- [x] found the bug\n- [ ] write the test\n\n"
             "## 수정한 파일\n- src/auth.py — renew(force=True) in refresh\n\n"
             "## Key decisions\n- force renew: stale cache\n\n"
             "## Ideas\n- maybe drop the cache\n")
    source = tmp_path / "agent.md"
    source.write_text(agent)
    for args, stdin in ((("--from", str(source)), None), (("-",), agent), (("-m", agent), None)):
        assert cli("snapshot", "save", *args, stdin=stdin).code == 0
        text = snapshot_text(project)
        assert section(text, "Current task") == ["Fixing **refresh**  (T-12) — keep `  spacing`"]
        assert section(text, "Progress") == ["- [x] found the bug", "- [ ] write the test"]
        # the agent's own line for a file replaces ctxkit's
        assert section(text, "Modified files") == ["- src/auth.py — renew(force=True) in refresh"]
        assert section(text, "Key decisions") == ["- force renew: stale cache", "- from a note"]
        assert section(text, "Ideas") == ["- maybe drop the cache"]
        assert "ignored title" not in text


def test_save_lists_active_lessons_of_modified_files(cli, project):
    fail(cli, "AuthService.refresh", 4)
    cli("fail", "other", "elsewhere", "--file", "src/other.py")
    (project / "src" / "auth.py").write_text("# changed\n")
    cli("snapshot", "save")
    lessons = section(snapshot_text(project), "Active lessons")
    assert lessons[0].startswith("- src/auth.py:AuthService.refresh (risk 11.5, high): "
                                 "AuthService.refresh lesson 3")
    assert not any("elsewhere" in line for line in lessons)


def test_save_lists_lessons_recorded_without_a_file_for_changed_symbols(cli, project):
    for n in range(4):
        cli("fail", "AuthService.refresh", f"renew twice {n}")            # no --file
    cli("fail", "AuthService.validate", "untouched symbol")
    auth = project / "src" / "auth.py"
    auth.write_text(auth.read_text().replace("record.renew()", "record.renew(force=True)"))
    cli("snapshot", "save")
    lessons = section(snapshot_text(project), "Active lessons")
    # Both names bind to their one graph symbol, in the modified src/auth.py.
    assert len(lessons) == 2
    assert lessons[0].startswith(
        "- src/auth.py:AuthService.refresh (risk 11.5, high): renew twice 3")
    assert lessons[1].startswith("- src/auth.py:AuthService.validate (risk 4.0, low)")


def test_save_lists_the_commands_whose_latest_run_failed(cli, project):
    cli("snapshot", "save")
    script = ("import sys, pathlib; "
              "print('\\n'.join(f'collected line {i} of the test log' for i in range(800))); "
              "print('FAILED tests/test_x.py::test_boom_' + 'x' * 60 + ' - AssertionError: boom')"
              "; sys.exit(int(pathlib.Path('rc').read_text()))")
    (project / "rc").write_text("1")
    run = cli.sub("run", "--json", "--", "python3", "-c", script)
    handle = run.json()["handle"]
    cli("snapshot", "save")
    failing = section(snapshot_text(project), "Failing outputs")
    assert failing[0].startswith(f"- {handle} `python3 -c") and "exit 1" in failing[0]
    # the decisive line whole, as stored, not as the 2 KB summary clipped it
    assert any("test_boom_" + "x" * 60 + " - AssertionError: boom" in line for line in failing)
    # a later snapshot (the pre-compact one after a save by hand) keeps a failure that
    # nothing has fixed: the restore reads only the newest snapshot
    assert hook_pre_compact(cli, project) == 0
    assert section(snapshot_text(project), "Failing outputs") == failing
    (project / "rc").write_text("0")                      # the same command passes now
    assert cli.sub("run", "--", "python3", "-c", script).code == 0
    cli("snapshot", "save")
    assert section(snapshot_text(project), "Failing outputs") == []


def test_failures_piped_into_store_without_a_name_are_each_their_own(cli, project):
    # `make | ctxkit store -` then `pytest | ctxkit store -`: two commands, not one rerun
    for what in ("make", "pytest"):
        log = "\n".join(f"{what} line {i}" for i in range(600)) + f"\nFAILED {what} - boom\n"
        assert cli("store", "-", stdin=log).code == 0
    listed = cli("outputs", "--json").json()["outputs"]
    assert [o["label"] for o in listed] == ["stdin", "stdin"]
    cli("snapshot", "save")
    failing = "\n".join(section(snapshot_text(project), "Failing outputs"))
    assert "FAILED make - boom" in failing and "FAILED pytest - boom" in failing


def test_a_done_note_closes_its_todo(cli, project):
    cli("note", "todo", "write the regression test")
    cli("note", "todo", "update the docs")
    cli("note", "done", "write  the regression test")       # spacing is not part of it
    cli("snapshot", "save", "-m", "fix the refresh race")
    progress = section(snapshot_text(project), "Progress")
    assert progress == ["- [ ] update the docs", "- [x] write  the regression test"]
    restored = cli("snapshot", "restore").out
    assert "(1 unchecked in Progress)" in restored
    cli("note", "todo", "write the regression test")        # opened again
    cli("snapshot", "save")
    assert section(snapshot_text(project), "Progress") == [
        "- [ ] write the regression test", "- [ ] update the docs"]


def test_an_output_that_exited_0_is_never_a_failing_output(cli, project):
    script = "print('\\n'.join(['error: deprecated option, ignored'] * 900))"
    assert cli.sub("run", "--", "python3", "-c", script).code == 0
    cli("snapshot", "save")
    assert section(snapshot_text(project), "Failing outputs") == []


def test_save_outside_git_and_unwritable_root(cli, tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("snapshot", "save", "-m", "no git here", cwd=plain)
    assert result.code == 0 and "branch: (none)" in (plain / ".context-snapshot.md").read_text()
    if os.geteuid() != 0:
        (plain / ".context-snapshot.md").unlink()
        os.chmod(plain, 0o500)
        try:
            bad = cli("snapshot", "save", "--db", str(tmp_path / "x.db"), cwd=plain)
            assert bad.code == 1 and "cannot write" in bad.err
        finally:
            os.chmod(plain, 0o700)


# --- check ---------------------------------------------------------------------------------------


def test_check_missing_fresh_stale(cli, project):
    missing = cli("snapshot", "check")
    assert missing.code == 3 and "no snapshot" in missing.err
    cli("snapshot", "save", "-m", "x")
    assert cli("snapshot", "check").code == 0
    data = cli("snapshot", "check", "--json").json()
    assert data["fresh"] is True and data["max_age"] == 900
    old = time.time() - 1000
    os.utime(project / ".context-snapshot.md", (old, old))
    stale = cli("snapshot", "check")
    assert stale.code == 3 and "stale" in stale.err
    assert cli("snapshot", "check", "--max-age", "2000").code == 0
    assert cli.sub("snapshot", "check", "--max-age", "10").code == 3


# --- restore -------------------------------------------------------------------------------------


def test_restore_reports_the_differences_with_git_now(cli, project):
    (project / "src" / "auth.py").write_text("# changed\n")
    (project / "src" / "__init__.py").write_text("# changed\n")
    cli("snapshot", "save", "-m", "## Progress\n- [ ] one\n- [ ] two")
    git(project, "checkout", "--", "src/__init__.py")
    (project / "README.txt").write_text("new\n")
    git(project, "add", "README.txt")
    git(project, "commit", "-q", "-m", "another")
    result = cli("snapshot", "restore")
    assert result.code == 0
    text = result.out
    assert text.startswith("CONTEXT SNAPSHOT restored by `ctxkit snapshot restore`\n\n"
                           "# Context Snapshot")
    checklist = text[text.index("## Restore checklist"):]
    assert "- [ ] git status differs from the snapshot:" in checklist
    assert "in the snapshot, no longer changed (1): src/__init__.py" in checklist
    assert "HEAD moved: " in checklist and "(1 new commits)" in checklist
    assert "Open items checked (2 unchecked in Progress)" in checklist
    data = cli("snapshot", "restore", "--json").json()
    assert data["in_snapshot_not_changed"] == ["src/__init__.py"] and data["head_moved"]
    (project / "src" / "extra.py").write_text("x = 1\n")
    restored = cli("snapshot", "restore", "--json").json()
    assert restored["changed_not_in_snapshot"] == ["src/extra.py"]


def test_restore_matches_when_nothing_moved(cli, project):
    (project / "src" / "auth.py").write_text("# changed\n")
    cli("snapshot", "save")
    assert "git status matches the snapshot: yes" in cli("snapshot", "restore").out


def test_restore_without_snapshot_exits_3(cli, root):
    result = cli("snapshot", "restore")
    assert result.code == 3 and "no snapshot" in result.err


def test_restore_of_a_huge_session_stays_under_10000_characters(cli, root):
    make_project(root)
    for index in range(200):
        (root / f"module_{index:03d}_with_a_long_descriptive_name.py").write_text(f"x = {index}\n")
    env = ctxkit.make_env(cwd=root)
    db = ctxkit.open_db(env)
    kinds = ("decision", "todo", "pending", "error", "test")
    for index in range(100):
        ctxkit.record_event(db, env.project, kinds[index % 5],
                            f"note {index}: " + "a fairly long explanation of the point " * 3)
    db.close()
    task = "## Current task\n- T-77: migrate the session store to Redis, keep the API\n"
    assert cli("snapshot", "save", "-m", task).code == 0
    assert len(snapshot_text(root)) > 10000
    text = cli("snapshot", "restore").out
    assert len(text) < 10000
    assert text.startswith("CONTEXT SNAPSHOT restored by `ctxkit snapshot restore`\n")
    assert "- T-77: migrate the session store to Redis, keep the API" in text
    assert "## Restore checklist" in text and "- [ ] Work resumed from Current task" in text
    assert "more lines left out (all of it in .context-snapshot.md)" in text
    body_lines = set(snapshot_text(root).splitlines())
    for line in text[:text.index("## Restore checklist")].splitlines():
        assert line in body_lines or "more lines left out" in line or line.startswith("CONTEXT")
    # the modified files (higher priority) keep more lines than the debugging notes
    files = section(text, "Modified files")
    assert len(files) > len(section(text, "Debugging context"))


def test_one_huge_line_is_cut_not_the_sections_around_it(cli, root):
    make_project(root)
    progress = "## Progress\n" + "".join(f"- [ ] item {i} {'y' * 40}\n" for i in range(400))
    plain = root / "plain.md"
    plain.write_text("task\n" + progress)
    assert cli("snapshot", "save", "--from", str(plain)).code == 0
    without = cli("snapshot", "restore").out
    (root / "big.md").write_text("task\n" + progress + "## Custom\n" + "a" * 20000 + "\n")
    assert cli("snapshot", "save", "--from", str(root / "big.md")).code == 0
    text = cli("snapshot", "restore").out
    assert len(text) <= ctxkit.RESTORE_LIMIT and len(text) > 0.9 * len(without)
    items = [line for line in section(text, "Progress") if line.startswith("- [ ] item")]
    assert len(items) > 100            # of the 166 that fit without the long line
    custom = section(text, "Custom")
    assert len(custom) == 1 and custom[0].startswith("a" * 500)
    assert "more characters; all of it in .context-snapshot.md)" in custom[0]
    # the session-start hook restores the same text
    hooked = cli("hook", "session-start", stdin=json.dumps(
        {"session_id": "s", "hook_event_name": "SessionStart", "source": "compact",
         "cwd": str(root)}))
    context = json.loads(hooked.out)["hookSpecificOutput"]["additionalContext"]
    assert "- [ ] item 100 " in context and "more characters" in context


# --- list / show ----------------------------------------------------------------------------------


def test_list_and_show(cli, project):
    assert "no snapshots yet" in cli("snapshot", "list").out
    cli("snapshot", "save", "-m", "first")
    cli("snapshot", "save", "-m", "second")
    items = cli("snapshot", "list", "--json").json()["snapshots"]
    assert [s["source"] for s in items] == ["cli", "cli"] and items[0]["id"] > items[1]["id"]
    first = cli("snapshot", "show", str(items[1]["id"]))
    assert first.code == 0 and "first" in first.out and "second" not in first.out
    assert cli("snapshot", "show", "999").code == 1
    assert cli("snapshot", "show", "abc").code == 2
    assert cli("snapshot").code == 2


def test_reads_create_no_database(cli, root):
    assert "no snapshots yet" in cli("snapshot", "list").out
    assert cli("snapshot", "show", "last").code == 1
    assert cli("snapshot", "show", "x").code == 2
    assert search(cli, "anything")["status"] == "no_hits"
    assert cli("snapshot", "check").code == 3
    assert not (root / ".ctxkit").exists()


def test_restore_from_the_database_when_the_file_is_gone(cli, project):
    (project / "src" / "auth.py").write_text("# changed\n")
    cli("snapshot", "save", "-m", "## Current task\n- from the database\n## Notes\n"
        + "\n".join(f"- note line {n} " + "x" * 80 for n in range(200)))
    snapshot_id = cli("snapshot", "list", "--json").json()["snapshots"][0]["id"]
    (project / ".context-snapshot.md").unlink()
    text = cli("snapshot", "restore").out
    assert "- from the database" in text and len(text) < 10000
    assert f"more lines left out (ctxkit snapshot show {snapshot_id})" in text
    assert "(saved less than a minute ago)" in text


def test_save_usage_errors(cli, root, tmp_path):
    missing = cli("snapshot", "save", "--from", str(tmp_path / "nope.md"))
    assert missing.code == 1 and "cannot read" in missing.err
    both = cli("snapshot", "save", "-m", "a", "--from", "b.md")
    assert both.code == 2 and "not allowed with" in both.err
    stray = cli("snapshot", "save", "notes.md")
    assert stray.code == 2 and "use -m TEXT, --from FILE or -" in stray.err
    assert not (root / ".context-snapshot.md").exists()


def test_agent_text_is_masked_before_it_is_written(cli):
    secret = "ghp_" + "a" * 36
    assert cli("snapshot", "save", "-m", f"working with token {secret}").code == 0
    assert secret not in (cli.root / ".context-snapshot.md").read_text()
    stored = b"".join(p.read_bytes() for p in (cli.root / ".ctxkit").glob("ctxkit.db*"))
    assert secret.encode() not in stored


# --- the snapshot file and git; what the restore says -------------------------------------------


def test_the_snapshot_file_stays_out_of_git_status(cli, project):
    (project / ".gitignore").write_text("*.log\n")
    git(project, "add", ".gitignore")
    git(project, "commit", "-q", "-m", "ignore logs")
    for _ in range(2):
        assert cli("snapshot", "save", "-m", "task").code == 0
        assert git(project, "status", "--porcelain") == ""
    assert (project / ".gitignore").read_text() == "*.log\n"          # the user's file
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines().count("/.context-snapshot.md") == 1
    assert hook_pre_compact(cli, project) == 0
    assert git(project, "status", "--porcelain") == ""


def test_an_ignored_snapshot_file_is_not_listed_again(cli, project):
    (project / ".gitignore").write_text(".context-snapshot.md\n")
    before = (project / ".git" / "info" / "exclude").read_text()
    assert cli("snapshot", "save", "-m", "task").code == 0
    assert (project / ".git" / "info" / "exclude").read_text() == before


def test_a_worktree_shares_the_repositorys_exclude(cli, project, tmp_path):
    tree = tmp_path / "tree"
    git(project, "worktree", "add", "-q", str(tree))
    result = cli("snapshot", "save", "-m", "in a worktree", cwd=tree)
    assert result.code == 0, result.err
    assert git(tree, "status", "--porcelain") == ""
    assert "/.context-snapshot.md" in (project / ".git" / "info" / "exclude").read_text()


def hook_pre_compact(cli, project):
    from hookkit import hook, payload
    return hook(cli, "pre-compact", payload("claude_pre_compact", project)).code


def test_an_unknown_exit_status_reads_exit_question_mark(cli, project):
    log = "\n".join(f"collected line {i}" for i in range(600)) + "\nFAILED test_x - boom\n"
    stored = cli("store", "-", "--label", "ci log", stdin=log)
    assert stored.code == 0, stored.err
    cli("snapshot", "save")
    failing = "\n".join(section(snapshot_text(project), "Failing outputs"))
    assert "`ci log` exit ? (" in failing or "exit ? (" in failing, failing
    assert "exit None" not in failing


def test_a_snapshot_file_that_is_not_text_restores_the_saved_one(cli, project):
    assert cli("snapshot", "save", "-q", "-m", "the real task").code == 0
    (project / ".context-snapshot.md").write_bytes(b"\x00\xff\xfe garbage \x00" * 200)
    for argv in (["snapshot", "restore"], ["hook", "session-start"]):
        stdin = payload("claude_session_start_compact", project) if argv[0] == "hook" else None
        result = cli(*argv, stdin=stdin)
        assert result.code == 0 and "the real task" in result.out, result.out[:300]
        assert "garbage" not in result.out and "\ufffd" not in result.out
        assert "is not text" in result.err
    # a hand-edited snapshot file is what it restores
    (project / ".context-snapshot.md").write_text("# Context Snapshot\n\nmy own edit ✓\n")
    assert "my own edit ✓" in cli("snapshot", "restore").out


def test_failing_outputs_list_a_distinct_failure_before_a_repeat(cli, root):
    """Found by a new user: the snapshot showed the first three decisive lines by line
    number, the same parametrized test failing twice, and left out the other test's
    failure; a listing with room for three takes distinct failures first."""
    import sys
    (root / "test_q.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', [8, 24, 25])\n"
        "def test_q(n):\n    assert str(n) == str(n) + 'x'\n")
    (root / "test_mod.py").write_text("def test_build():\n    assert {'b': 2} == {'b': 3}\n")
    cli("run", "--direct-max", "1", "--", sys.executable, "-m", "pytest", "-q",
        "-p", "no:cacheprovider", "test_q.py", "test_mod.py")
    assert cli("snapshot", "save", "-m", "t").code == 0
    text = (root / ".context-snapshot.md").read_text()
    listed = text.split("## Failing outputs", 1)[1].split("\n\n", 1)[0]
    assert "{'b': 2} == {'b': 3}" in listed, listed
    assert listed.count("test_q.py:6: AssertionError") <= 1
