"""Hooks never hang: only regular files are opened, and a hard deadline ends the rest.

Every call is a real `ctxkit hook ...` process (started as the console script
starts), since the deadline belongs to the process. A hang shows as the test's
own generous wait running out (subprocess.TimeoutExpired), never as a timed
assertion.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess

import pytest
from hookkit import fail, make_project, payload, seed_graph
from conftest import CONSOLE_ARGV


HANG = 30  # seconds: far past any deadline; reaching it means the hook hung


@pytest.fixture
def project(cli, root):
    make_project(root)
    seed_graph(cli, root)
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env.update(extra)
    return env


def _hook(root, event: str, body: str, deadline: str = "60") -> subprocess.CompletedProcess:
    return subprocess.run([*CONSOLE_ARGV, "hook", event], cwd=root,
                          input=body.encode(), capture_output=True, timeout=HANG,
                          env=_env(CTXKIT_HOOK_DEADLINE=deadline))


def _edit(root, path, **tool_input) -> str:
    return payload("claude_pre_tool_use_edit", root,
                   tool_input={"file_path": str(path), "old_string": "x", **tool_input})


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit"])
def test_named_pipe_as_the_edited_file_does_not_block(project, tool):
    fifo = project / "src" / "pipe.py"
    os.mkfifo(fifo)
    body = json.loads(_edit(project, fifo))
    body["tool_name"] = tool
    if tool == "MultiEdit":
        body["tool_input"]["edits"] = [{"old_string": "x", "new_string": "y"}]
    proc = _hook(project, "pre-tool-use", json.dumps(body))
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_patch_over_a_pipe_still_answers_for_the_real_file(cli, project):
    """Not the deadline at work: the pipe is skipped and the real file's lessons shown."""
    fail(cli, "AuthService.refresh", 4)
    os.mkfifo(project / "src" / "pipe.py")
    body = json.loads(payload("codex_pre_tool_use_apply_patch", project))
    body["tool_input"]["command"] = body["tool_input"]["command"].replace(
        "*** End Patch", "*** Update File: src/pipe.py\n@@\n-a\n+b\n*** End Patch")
    proc = _hook(project, "pre-tool-use", json.dumps(body))
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "AuthService.refresh" in context


def test_database_that_is_a_pipe_does_not_block(project):
    db = project / ".ctxkit" / "ctxkit.db"
    for suffix in ("", "-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    os.mkfifo(db)
    proc = _hook(project, "pre-tool-use", _edit(project, project / "src" / "auth.py"))
    assert proc.returncode == 0
    assert proc.stdout == b""


def test_settings_file_that_is_a_pipe_does_not_block(project):
    (project / ".ctxkit" / "config.toml").write_text('bash = "wrap"\n')
    (project / ".claude").mkdir()
    os.mkfifo(project / ".claude" / "settings.local.json")
    proc = _hook(project, "pre-tool-use", payload("claude_pre_tool_use_bash", project))
    assert proc.returncode == 0, proc.stderr
    assert b"settings.local.json" in proc.stderr  # unreadable rules: the command is left as is
    assert proc.stdout == b""


def test_config_that_is_a_pipe_does_not_block(project):
    os.mkfifo(project / ".ctxkit" / "config.toml")
    proc = _hook(project, "pre-tool-use", payload("claude_pre_tool_use_bash", project))
    assert proc.returncode == 0


@pytest.mark.slow  # waits out the hook deadline, by nature
@pytest.mark.parametrize("event", ["pre-tool-use", "session-start", "post-tool-use"])
def test_payload_that_never_ends_meets_the_deadline(project, event):
    """The agent keeps stdin open: past the deadline the hook exits 0 with nothing."""
    proc = subprocess.Popen([*CONSOLE_ARGV, "hook", event], cwd=project,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(CTXKIT_HOOK_DEADLINE="1"))
    proc.stdin.write(b'{"session_id": "s", "tool_name": "Edit", ')  # and never more
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=HANG)
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 0
    assert proc.stdout.read() == b""


@pytest.mark.slow  # waits out the hook deadline, by nature
def test_locked_database_meets_the_deadline(cli, project):
    """A write held for longer than the deadline (a long index elsewhere): no wait of
    busy_timeout (15 s), the hook gives up at its deadline with exit 0."""
    fail(cli, "AuthService.validate", 4)
    holder = sqlite3.connect(cli.db, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        big = "".join(f"collected test {i}\n" for i in range(2000))  # stored, not shown
        body = payload("claude_post_tool_use_bash", project,
                       tool_response={"stdout": big, "stderr": "", "interrupted": False})
        proc = subprocess.run([*CONSOLE_ARGV, "hook", "post-tool-use"],
                              cwd=project, input=body.encode(), capture_output=True,
                              timeout=10, env=_env(CTXKIT_HOOK_DEADLINE="1"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert cli("query", "AuthService.validate", "--json").code == 0  # the database is whole


def test_deadline_leaves_fast_answers_alone(cli, project):
    fail(cli, "AuthService.validate", 4)
    proc = _hook(project, "pre-tool-use", payload("claude_pre_tool_use_edit", project),
                 deadline="5")
    assert proc.returncode == 0
    assert "AuthService.validate" in json.loads(proc.stdout)["hookSpecificOutput"][
        "additionalContext"]
