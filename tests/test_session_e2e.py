"""One whole agent session in a temporary git repository, every step a real
subprocess of `ctxkit` (as the console script starts), every hook fed the payload an agent sends."""

from __future__ import annotations

import json
import sys

import pytest
from hookkit import make_project, payload

FAILING_TEST = '''from src.auth import AuthService


class Store:
    def get(self, token):
        return None


def test_validate_rejects_unknown_token():
    assert AuthService(Store()).validate("abc") is True
'''


def hook_context(cli, event, body):
    result = cli.sub("hook", event, stdin=body)
    assert result.code == 0, result.err
    return json.loads(result.out)["hookSpecificOutput"]["additionalContext"] if result.out else ""


@pytest.mark.slow
def test_a_whole_session(cli, root):
    make_project(root)
    # 1. index the repository
    index = cli.sub("index", "--json")
    assert index.code == 0, index.err
    assert index.json()["nodes"] >= 5
    # lessons from earlier sessions on the symbol about to be edited
    for n in range(4):
        assert cli.sub("fail", "AuthService.validate", f"None token crashed the session {n}",
                       "--file", "src/auth.py").code == 0
    # 2. the agent edits the risky symbol: the inject block arrives first
    edit = payload("claude_pre_tool_use_edit", root)
    context = hook_context(cli, "pre-tool-use", edit)
    assert "[PAST EXPERIENCE — src/auth.py:AuthService.validate (risk: 11.5, high)]" in context
    assert "- None token crashed the session 3" in context
    auth = root / "src" / "auth.py"
    auth.write_text(auth.read_text().replace("if token is None:", "if not token:"))
    (root / "test_auth.py").write_text(FAILING_TEST)
    # 3. the tests fail through ctxkit run: a summary with a handle
    run = cli.sub("run", "--direct-max", "200", "--json", "--", sys.executable, "-m", "pytest",
                  "-q", "-p", "no:cacheprovider", "test_auth.py")
    assert run.code != 0
    summary = run.json()
    handle = summary["handle"]
    assert handle and summary["exit_code"] != 0 and summary["errors"]
    # 4. a decision, noted
    assert cli.sub("note", "decision", "an empty token is invalid, like None").code == 0
    # 5. the agent compacts: pre-compact writes the snapshot
    compact = cli.sub("hook", "pre-compact", stdin=payload("claude_pre_compact", root))
    assert compact.code == 0 and compact.out == ""
    snapshot = (root / ".context-snapshot.md").read_text()
    assert "- src/auth.py — modified; +1 −1; symbols: AuthService.validate" in snapshot
    assert f"- {handle} `" in snapshot
    # 6. after the compaction the restore comes back, under 10,000 characters
    restore = hook_context(cli, "session-start", payload("claude_session_start_compact", root))
    assert restore.startswith("CONTEXT SNAPSHOT restored after compact\n")
    assert "src/auth.py" in restore and handle in restore
    assert "- an empty token is invalid, like None" in restore
    assert "src/auth.py:AuthService.validate (risk 11.5, high)" in restore
    assert "changed now, not in the snapshot (1): test_auth.py" not in restore  # saved after it
    assert len(restore) < 10000
    assert cli.sub("snapshot", "check").code == 0
