"""Wrap mode never gets around the user's own rules (Claude Code, Codex, Gemini CLI).

Every test runs the real `ctxkit hook pre-tool-use` on a real agent payload with
real settings or rules files in a private HOME.
"""

from __future__ import annotations

import json
import os
import shlex

import pytest
from hookkit import hook, make_project, payload

CLAUDE_MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")

# The rules of the report that found the hole.
REPORTED_RULES = {"deny": ["Bash(rm -rf:*)", "Bash(npm install:*)"], "ask": ["Bash(npm test:*)"]}

# Commands that run a denied or asked-about command somewhere inside them.
HIDDEN = [
    "npm install x",
    "npm install left-pad && npm test",
    "npm test; rm -rf build",
    "pytest -q || rm -rf build",
    "pytest -q | tee log; rm -rf build",
    "FOO=1 BAR='a b' npm install x",
    "sudo -E npm install x",
    "time npm test",
    "nice -n 10 npm test",
    "env NODE_ENV=ci npm test",
    "timeout 60 npm test",
    "(cd web && npm install)",
    "{ pytest -q; rm -rf build; }",
    "bash -c 'pytest -q && npm install x'",
    "sh -lc \"npm test\"",
    "pytest -q $(rm -rf build)",
    "pytest -q `npm install x`",
    "cat <<'EOF' | sh\npytest -q\nrm -rf build\nEOF",
    "pytest -q\nnpm install x",
    "find . -name node_modules -exec rm -rf {} +",
    "ls | xargs npm install",
    "if pytest -q; then npm install x; fi",
    "pytest -q 2>&1 >log && npm   install x",
    "pytest -q 'tests/a;b' && eval npm install x",
]


@pytest.fixture
def project(root, monkeypatch):
    make_project(root)
    monkeypatch.setenv("HOME", str(root / "home"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    (root / ".ctxkit").mkdir(exist_ok=True)
    (root / ".ctxkit" / "config.toml").write_text('bash = "wrap"\n')
    return root


def claude_settings(path, rules):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": rules}))


def bash_call(cli, root, command, agent="claude", **fields):
    name = {"claude": "claude_pre_tool_use_bash", "codex": "codex_pre_tool_use_bash",
            "gemini": "gemini_before_tool_shell"}[agent]
    fields.setdefault("tool_input", {"command": command})
    fields.setdefault("session_id", command)
    body = payload(name, root, **fields)
    result = hook(cli, "pre-tool-use", body)
    assert result.code == 0, result.err
    return json.loads(result.out)["hookSpecificOutput"] if result.out else None


def rewritten(answer):
    return answer is not None and ("updatedInput" in answer or "tool_input" in answer)


@pytest.mark.parametrize("mode", CLAUDE_MODES)
@pytest.mark.parametrize("command", HIDDEN)
def test_denied_or_asked_part_is_never_rewritten_in_any_mode(cli, project, mode, command):
    # Without rules ctxkit acts on the command (a rewrite or the nudge) ...
    assert bash_call(cli, project, command, permission_mode=mode, session_id="no rules")
    claude_settings(project / ".claude" / "settings.json", REPORTED_RULES)
    answer = bash_call(cli, project, command, permission_mode=mode)
    # ... with them: not rewritten, not allowed, and no nudge toward `ctxkit run` either.
    assert answer is None


def test_the_reported_case_under_bypass_permissions(cli, project):
    claude_settings(project / ".claude" / "settings.local.json", REPORTED_RULES)
    for command in ("npm install x", "npm install left-pad && npm test", "npm test; rm -rf build"):
        assert bash_call(cli, project, command, permission_mode="bypassPermissions") is None
    answer = bash_call(cli, project, "pytest -q", permission_mode="bypassPermissions")
    assert answer["permissionDecision"] == "allow"
    assert shlex.split(answer["updatedInput"]["command"])[-1] == "pytest -q"


@pytest.mark.parametrize("mode, expected", [
    ("default", "ask"), ("acceptEdits", "ask"), ("", "ask"), ("plan", None), ("auto", None),
    ("dontAsk", None), ("bypassPermissions", "allow"), ("someFutureMode", None),
])
def test_each_mode_without_rules(cli, project, mode, expected):
    answer = bash_call(cli, project, "pytest -q", permission_mode=mode)
    if expected is None:                 # the once-per-session nudge instead
        assert not rewritten(answer) and "ctxkit run" in answer["additionalContext"]
    else:
        assert answer["permissionDecision"] == expected and rewritten(answer)


@pytest.mark.parametrize("mode, expected", [
    ("default", "allow"), ("acceptEdits", "allow"), ("auto", "allow"), ("dontAsk", "allow"),
    ("bypassPermissions", "allow"), ("plan", None), ("someFutureMode", None),
])
def test_each_mode_with_an_allow_rule(cli, project, mode, expected):
    claude_settings(project / ".claude" / "settings.json", {"allow": ["Bash(pytest *)"]})
    answer = bash_call(cli, project, "pytest -q", permission_mode=mode)
    if expected is None:
        assert not rewritten(answer)
    else:
        assert answer["permissionDecision"] == expected


def test_deny_wins_over_a_more_specific_allow(cli, project):
    claude_settings(project / ".claude" / "settings.json",
                    {"deny": ["Bash(npm *)"], "allow": ["Bash(npm test)"]})
    assert bash_call(cli, project, "npm test", permission_mode="bypassPermissions") is None


@pytest.mark.parametrize("where", ["user", "config_dir", "project", "local"])
def test_rules_are_read_from_every_settings_file(cli, project, monkeypatch, where):
    paths = {"user": project / "home" / ".claude" / "settings.json",
             "config_dir": project / "cfg" / "settings.json",
             "project": project / ".claude" / "settings.json",
             "local": project / ".claude" / "settings.local.json"}
    if where == "config_dir":
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(project / "cfg"))
    claude_settings(paths[where], {"ask": ["Bash(pytest:*)"]})
    assert bash_call(cli, project, "pytest -q", permission_mode="bypassPermissions") is None


def test_the_settings_of_the_folder_claude_code_started_in_apply(cli, project, monkeypatch):
    # Claude Code reads .claude/ in the folder it started in ($CLAUDE_PROJECT_DIR for its
    # hooks): here a package of a monorepo whose git root is two folders up.
    package = project / "packages" / "app"
    package.mkdir(parents=True)
    claude_settings(package / ".claude" / "settings.json", {"deny": ["Bash(pytest:*)"]})
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(package))
    call = {"permission_mode": "bypassPermissions", "cwd": str(package)}
    assert bash_call(cli, project, "pytest -q", **call) is None
    # the deny rule of the folder the session is in counts without the variable too
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert bash_call(cli, project, "pytest -q", session_id="again", **call) is None
    # and so does one of a folder between the cwd and the root
    claude_settings(package / ".claude" / "settings.json", {})
    claude_settings(project / "packages" / ".claude" / "settings.local.json",
                    {"ask": ["Bash(pytest:*)"]})
    assert bash_call(cli, project, "pytest -q", session_id="third", **call) is None


def test_allow_rules_grant_only_from_the_folder_claude_code_reads(cli, project, monkeypatch):
    package = project / "packages" / "app"
    package.mkdir(parents=True)
    # the git root's settings allow it, but Claude Code, started in the package, never
    # reads them: the rewrite must ask, as Claude Code would for the command itself
    claude_settings(project / ".claude" / "settings.json", {"allow": ["Bash(pytest *)"]})
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(package))
    answer = bash_call(cli, project, "pytest -q", permission_mode="default", cwd=str(package))
    assert answer["permissionDecision"] == "ask" and rewritten(answer)
    claude_settings(package / ".claude" / "settings.local.json", {"allow": ["Bash(pytest *)"]})
    answer = bash_call(cli, project, "pytest -q", permission_mode="default", cwd=str(package),
                       session_id="allowed")
    assert answer["permissionDecision"] == "allow"


@pytest.mark.parametrize("rule, command", [
    ("Bash", "pytest -q"),
    ("Bash(*)", "pytest -q"),
    ("Bash(npm *)", "npm test"),
    ("Bash(* test)", "npm test"),
    ("Bash(git * main)", "git log main"),
    ("Bash(npm run test:*)", "npm run test:unit"),   # broad: punctuation ends the prefix
    ("Bash(make)", "make  "),
    ("Bash(run_in_background:true)", "pytest -q"),
    ("Bash(command:pytest *)", "pytest -q"),
])
def test_deny_rule_shapes(cli, project, rule, command):
    claude_settings(project / ".claude" / "settings.json", {"deny": [rule]})
    answer = bash_call(cli, project, command, permission_mode="bypassPermissions",
                       **({"tool_input": {"command": command, "run_in_background": True}}
                          if "background" in rule else {}))
    assert answer is None


def test_quoted_operators_do_not_split_a_command(cli, project):
    claude_settings(project / ".claude" / "settings.json",
                    {"deny": ["Bash(rm:*)"], "allow": ["Bash(pytest:*)"]})
    # `not b` and `c` are words of pytest's -k expression, not commands: still wrapped.
    answer = bash_call(cli, project, 'pytest -k "a and not b" -q', permission_mode="default")
    assert answer["permissionDecision"] == "allow"
    # An operator inside quotes is no grant either: the allow rule reads narrowly.
    answer = bash_call(cli, project, 'pytest -k "a;b" -q', permission_mode="default")
    assert answer["permissionDecision"] == "ask"


def test_unreadable_settings_leave_the_command_alone(cli, project):
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"permissions": {"deny": ["Bash(pytest:*)"]')       # cut short
    result = hook(cli, "pre-tool-use", payload(
        "claude_pre_tool_use_bash", project, tool_input={"command": "pytest -q"},
        permission_mode="bypassPermissions"))
    assert (result.code, result.out) == (0, "")
    assert result.err.count("\n") == 1 and "settings.json" in result.err


def test_unsplittable_command_is_left_alone(cli, project):
    assert bash_call(cli, project, "pytest -q 'unclosed", permission_mode="bypassPermissions") \
        is None


def test_nudge_mode_says_nothing_about_a_denied_command(cli, project):
    (project / ".ctxkit" / "config.toml").write_text('bash = "nudge"\n')
    claude_settings(project / ".claude" / "settings.json", {"deny": ["Bash(npm install:*)"]})
    assert bash_call(cli, project, "npm install x") is None
    assert "ctxkit run" in bash_call(cli, project, "pytest -q")["additionalContext"]


# --- Codex: prefix_rule() files ------------------------------------------------------------


def codex_rules(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("decision", ["forbidden", "prompt"])
@pytest.mark.parametrize("where", ["home", "project"])
def test_codex_forbidden_or_prompt_rule_blocks_the_rewrite(cli, project, decision, where):
    folder = (project / "home" / ".codex" if where == "home" else project / ".codex") / "rules"
    codex_rules(folder / "default.rules", f'''
# rules are Starlark
prefix_rule(
    pattern = ["cargo", ["test", "build"]],
    decision = "{decision}",
    justification = "use the CI",
)
''')
    for command in ("cargo test --workspace", "RUST_LOG=1 cargo build && ls",
                    "sh -c 'cargo test'"):
        assert bash_call(cli, project, command, agent="codex",
                         permission_mode="bypassPermissions") is None
    answer = bash_call(cli, project, "cargo check", agent="codex",
                       permission_mode="bypassPermissions")
    assert answer["permissionDecision"] == "allow" and rewritten(answer)


def test_codex_rules_in_codex_home_and_unreadable_rules(cli, project, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(project / "ch"))
    codex_rules(project / "ch" / "rules" / "x.rules",
                'prefix_rule(pattern=["pytest"], decision="prompt")\n')
    assert bash_call(cli, project, "pytest -q", agent="codex",
                     permission_mode="bypassPermissions") is None
    codex_rules(project / "ch" / "rules" / "x.rules", "prefix_rule(pattern=[\n")
    result = hook(cli, "pre-tool-use", payload(
        "codex_pre_tool_use_bash", project, permission_mode="bypassPermissions"))
    assert (result.code, result.out) == (0, "") and "x.rules" in result.err


def test_codex_and_gemini_rules_of_the_sessions_folder_count(cli, project):
    # a monorepo package with rules of its own, the agent's session inside it
    package = project / "packages" / "app"
    codex_rules(package / ".codex" / "rules" / "pkg.rules",
                'prefix_rule(pattern=["cargo"], decision="forbidden")\n')
    assert bash_call(cli, project, "cargo test", agent="codex", cwd=str(package),
                     permission_mode="bypassPermissions") is None
    policy = package / ".gemini" / "policies" / "pkg.toml"
    policy.parent.mkdir(parents=True)
    policy.write_text('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "npm"\n'
                      'decision = "deny"\npriority = 100\n')
    assert bash_call(cli, project, "npm test", agent="gemini", cwd=str(package)) is None
    # the same commands from the root, where those rules do not reach, are rewritten
    assert rewritten(bash_call(cli, project, "npm test", agent="gemini", session_id="root"))


# --- Gemini CLI: policy files and tools.exclude ----------------------------------------------


@pytest.mark.parametrize("policy", [
    '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "npm test"\n'
    'decision = "deny"\npriority = 100\n',
    '[[rule]]\ntoolName = ["run_shell_command"]\ncommandRegex = "^npm\\\\s+t"\n'
    'decision = "ask_user"\npriority = 10\n',
    '[[rule]]\ntoolName = "run_shell_command"\ndecision = "ask_user"\npriority = 1\n',
])
def test_gemini_policy_blocks_the_rewrite(cli, project, policy):
    path = project / "home" / ".gemini" / "policies" / "mine.toml"
    path.parent.mkdir(parents=True)
    path.write_text(policy)
    assert bash_call(cli, project, "npm test", agent="gemini") is None
    assert bash_call(cli, project, "CI=1 npm test", agent="gemini", session_id="2") is None


def test_gemini_policy_regex_that_backtracks_counts_as_matching(cli, project):
    # a policy's regex that would backtrack for ages on the command neither hangs the
    # hook nor lets the rewrite through: it counts as matching, as one that fails to compile
    path = project / "home" / ".gemini" / "policies" / "mine.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[[rule]]\ntoolName = "run_shell_command"\n'
                    'commandRegex = "^(a|aa)+$"\ndecision = "ask_user"\npriority = 10\n')
    command = "npm test " + "a" * 37 + "b"  # seconds unstopped: the clock ends it
    result = hook(cli, "pre-tool-use", payload("gemini_before_tool_shell", project,
                                                 tool_input={"command": command}))
    assert (result.code, result.out) == (0, "")


def test_gemini_excluded_shell_command_blocks_the_rewrite(cli, project):
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"tools": {"exclude": ["run_shell_command(npm test)"]}}))
    assert bash_call(cli, project, "pytest -q && npm test", agent="gemini") is None
    answer = bash_call(cli, project, "pytest -q", agent="gemini")
    assert shlex.split(answer["tool_input"]["command"])[-1] == "pytest -q"


@pytest.mark.parametrize("settings", [
    {"tools": {"core": ["read_file", "run_shell_command(ctxkit)", "run_shell_command(git)"]}},
    {"coreTools": ["run_shell_command(ctxkit run)"]},
    {"tools": {"core": ["read_file"]}},
])
def test_gemini_core_allowlist_leaving_the_command_out_gets_no_rewrite(cli, project, settings):
    # tools.core lets only the shell commands it names run (none when it names no shell
    # tool): Gemini refuses `npm test`, so no rewrite, which could get it run as
    # `ctxkit run ...`, and no nudge toward that either
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(settings))
    for command in ("npm test", "git log -p && npm test", "git log $(npm test)"):
        assert bash_call(cli, project, command, agent="gemini") is None, command


def test_gemini_core_allowlist_naming_the_command_and_ctxkit_keeps_the_rewrite(cli, project):
    ctxkit = shlex.split(bash_call(cli, project, "npm test", agent="gemini",
                                   session_id="no rules")["tool_input"]["command"])[0]
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    core = ["run_shell_command(npm test)", "run_shell_command(git log)"]
    path.write_text(json.dumps({"tools": {"core": core}}))
    # core lets `npm test` run but not the rewrite (no ctxkit in it): the nudge
    answer = bash_call(cli, project, "npm test", agent="gemini")
    assert not rewritten(answer) and "ctxkit run" in answer["additionalContext"]
    path.write_text(json.dumps({"tools": {"core": core + [f"run_shell_command({ctxkit})"]}}))
    answer = bash_call(cli, project, "git log -p && npm test", agent="gemini")
    assert shlex.split(answer["tool_input"]["command"])[-1] == "git log -p && npm test"
    path.write_text(json.dumps({"tools": {"core": ["run_shell_command"]}}))  # every command
    assert rewritten(bash_call(cli, project, "npm test", agent="gemini", session_id="all"))


@pytest.mark.parametrize("where, text", [
    (".gemini/settings.json", json.dumps({"tools": {"allowed": ["run_shell_command(ctxkit)"]}})),
    (".gemini/settings.json", json.dumps({"allowedTools": ["run_shell_command(ctxkit run)"]})),
    ("home/.gemini/policies/mine.toml", '[[rule]]\ntoolName = "run_shell_command"\n'
     'commandPrefix = "ctxkit"\ndecision = "allow"\npriority = 50\n'),
    ("home/.gemini/policies/mine.toml", '[[rule]]\ntoolName = "run_shell_command"\n'
     'commandRegex = "ctxkit run"\ndecision = "allow"\npriority = 50\n'),
])
def test_gemini_allow_rule_for_ctxkit_gets_no_rewrite_it_would_run_unasked(cli, project,
                                                                          where, text):
    # Gemini confirms the rewritten command against the user's allow rules: one that
    # lets `ctxkit` run unasked would let any wrapped command run unasked too.
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for command in ("npm test", "pytest -q && rm -rf build"):
        assert bash_call(cli, project, command, agent="gemini") is None, command


def test_gemini_allow_rule_of_the_command_itself_keeps_the_rewrite(cli, project):
    # allowed as it is: Gemini asks for the rewrite (its prefix no longer matches), which
    # grants nothing; an allowed command elsewhere changes nothing either
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"tools": {"allowed": ["run_shell_command(npm test)",
                                                      "run_shell_command(git status)"]}}))
    for command in ("npm test", "pytest -q"):
        answer = bash_call(cli, project, command, agent="gemini")
        assert shlex.split(answer["tool_input"]["command"])[-1] == command


@pytest.mark.parametrize("agent, where, text", [
    ("claude", ".claude/settings.json", json.dumps({"permissions": {"allow": ["Bash(ctxkit:*)"]}})),
    ("claude", ".claude/settings.local.json",
     json.dumps({"permissions": {"allow": ["Bash(ctxkit run *)"]}})),
    ("codex", "home/.codex/rules/mine.rules",
     'prefix_rule(pattern=["ctxkit", "run"], decision="allow")\n'),
    ("gemini", ".gemini/settings.json", json.dumps({"tools": {"allowed": [
        "run_shell_command(ctxkit)"]}})),
])
def test_no_nudge_toward_a_ctxkit_run_that_an_allow_rule_lets_run_unasked(cli, project, agent,
                                                                         where, text):
    # the nudge says `ctxkit run -- <command>`: under an allow rule for ctxkit that form
    # runs unasked where the command itself is asked about, so no nudge (nor rewrite)
    (project / ".ctxkit" / "config.toml").write_text('bash = "nudge"\n')
    assert bash_call(cli, project, "npm install x", agent=agent, session_id="no rules")
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for command in ("npm install x", "npm install x && npm test"):
        assert bash_call(cli, project, command, agent=agent) is None, command


def test_the_nudge_stays_when_the_command_itself_is_allowed(cli, project):
    (project / ".ctxkit" / "config.toml").write_text('bash = "nudge"\n')
    claude_settings(project / ".claude" / "settings.json",
                    {"allow": ["Bash(ctxkit:*)", "Bash(npm install:*)"]})
    assert "ctxkit run" in bash_call(cli, project, "npm install x")["additionalContext"]


# --- the rewrite's own words: ctxkit, run, bash -c ------------------------------------------


def sub_bash_call(cli, root, command, agent="claude", env=None, **fields):
    """bash_call through a real `ctxkit hook pre-tool-use` process."""
    name = {"claude": "claude_pre_tool_use_bash", "codex": "codex_pre_tool_use_bash",
            "gemini": "gemini_before_tool_shell"}[agent]
    fields.setdefault("tool_input", {"command": command})
    fields.setdefault("session_id", command)
    result = cli.sub("hook", *(("--agent", agent) if agent != "claude" else ()),
                     "pre-tool-use", stdin=payload(name, root, **fields), env=env)
    assert result.code == 0, result.err
    return json.loads(result.out)["hookSpecificOutput"] if result.out else None


@pytest.mark.parametrize("agent, where, text", [
    ("claude", ".claude/settings.json", json.dumps({"permissions": {"deny": ["Bash(ctxkit:*)"]}})),
    ("claude", ".claude/settings.local.json",
     json.dumps({"permissions": {"deny": ["Bash(ctxkit run *)"]}})),
    ("codex", "home/.codex/rules/mine.rules",
     'prefix_rule(pattern=["ctxkit"], decision="forbidden")\n'),
    ("gemini", "home/.gemini/policies/mine.toml", '[[rule]]\ntoolName = "run_shell_command"\n'
     'commandPrefix = "ctxkit"\ndecision = "deny"\npriority = 50\n'),
])
def test_a_rule_denying_what_the_rewrite_runs_gets_no_rewrite_nor_nudge(cli, project, agent,
                                                                        where, text):
    # The command itself is no rule's business, but the rewrite runs `ctxkit run ...`,
    # which the user denies: no rewrite granted (it was `allow` under bypassPermissions),
    # and no nudge toward a command the rules deny.
    mode = {"permission_mode": "bypassPermissions"}
    assert rewritten(sub_bash_call(cli, project, "pytest -q", agent, session_id="none", **mode))
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for command in ("pytest -q", "npm test && ls"):
        assert sub_bash_call(cli, project, command, agent, **mode) is None, command
    (project / ".ctxkit" / "config.toml").write_text('bash = "nudge"\n')
    assert sub_bash_call(cli, project, "pytest -q", agent, session_id="nudge", **mode) is None


@pytest.mark.parametrize("agent, where, text", [
    ("claude", ".claude/settings.local.json",
     json.dumps({"permissions": {"deny": ["Bash(ctxkit run *)"]}})),
    ("codex", "home/.codex/rules/mine.rules",
     'prefix_rule(pattern=["ctxkit"], decision="forbidden")\n'),
])
def test_a_rule_against_ctxkit_holds_where_the_rewrite_spells_it_as_a_path(cli, project, agent,
                                                                           where, text):
    # With no `ctxkit` on PATH the rewrite runs `python /path/to/ctxkit.py run ...`:
    # still the program the user's rule names, so it is no more granted than
    # `ctxkit run ...` (it was `allow` under bypassPermissions).
    bare = {"PATH": os.pathsep.join(p for p in ("/usr/bin", "/bin") if os.path.isdir(p))}
    mode = {"permission_mode": "bypassPermissions"}
    answer = sub_bash_call(cli, project, "pytest -q", agent, env=bare, session_id="none",
                           **mode)
    assert rewritten(answer) and "ctxkit.py run" in json.dumps(answer)
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    assert sub_bash_call(cli, project, "pytest -q", agent, env=bare, **mode) is None


def test_an_ask_rule_for_ctxkit_gets_the_nudge_not_a_granted_rewrite(cli, project):
    # asking before ctxkit runs: the rewrite would be granted past that question, the
    # nudge leads to a `ctxkit run` the user is asked about, which is theirs to answer
    claude_settings(project / ".claude" / "settings.json", {"ask": ["Bash(ctxkit:*)"]})
    answer = sub_bash_call(cli, project, "pytest -q", permission_mode="bypassPermissions")
    assert not rewritten(answer) and "ctxkit run" in answer["additionalContext"]


@pytest.mark.parametrize("agent, where, text", [
    ("claude", ".claude/settings.json", json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}})),
    ("gemini", "home/.gemini/policies/mine.toml", '[[rule]]\ntoolName = "run_shell_command"\n'
     'commandPrefix = "rm"\ndecision = "deny"\npriority = 50\n'),
])
def test_a_denied_program_spelled_as_a_path_is_still_denied(cli, project, agent, where, text):
    # `/bin/rm` runs rm: a deny rule for rm covers it, so the hook neither rewrites nor
    # grants `pytest -q; /bin/rm -rf x` (it was `allow` plus a rewrite under bypassPermissions)
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    mode = {"permission_mode": "bypassPermissions"}
    for command in ("pytest -q; /bin/rm -rf x", "pytest -q && ./rm -rf x"):
        assert sub_bash_call(cli, project, command, agent, **mode) is None, command
    assert rewritten(sub_bash_call(cli, project, "pytest -q", agent, session_id="ok", **mode))


OPTIONED_PUSHES = ("pytest -q && git -C . push", "pytest -q; git -c k=v push origin",
                   "pytest -q; git --no-pager push", "pytest -q; git --git-dir=x push",
                   "pytest -q; /usr/bin/git -C sub --no-pager push -f")


@pytest.mark.parametrize("agent, where, text", [
    ("claude", ".claude/settings.json",
     json.dumps({"permissions": {"deny": ["Bash(git push:*)"]}})),
    ("claude", ".claude/settings.json",
     json.dumps({"permissions": {"ask": ["Bash(git push *)"]}})),
    ("codex", ".codex/rules/x.rules", 'prefix_rule(pattern=["git", "push"], decision="prompt")\n'),
    ("gemini", "home/.gemini/policies/mine.toml", '[[rule]]\ntoolName = "run_shell_command"\n'
     'commandPrefix = "git push"\ndecision = "deny"\npriority = 50\n'),
])
def test_options_before_the_denied_words_do_not_get_past_the_rule(cli, project, agent, where,
                                                                  text):
    # `git -C . push` pushes: a deny/ask rule for `git push` covers the program's options
    # before its next word (with a value or without), so no rewrite is granted past it
    mode = {"permission_mode": "bypassPermissions"}
    for command in OPTIONED_PUSHES:
        assert rewritten(sub_bash_call(cli, project, command, agent, session_id="bare", **mode))
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for command in OPTIONED_PUSHES:
        assert sub_bash_call(cli, project, command, agent, **mode) is None, command
    # words that are not options still stop the widening: `git log push` is no push
    assert rewritten(sub_bash_call(cli, project, "pytest -q; git log push", agent, **mode))


def test_allow_rules_are_not_widened_past_options(cli, project):
    # an allow rule grants only what it names: `pytest tests` does not grant `pytest -x tests`
    claude_settings(project / ".claude" / "settings.json", {"allow": ["Bash(pytest tests:*)"]})
    assert sub_bash_call(cli, project, "pytest tests", permission_mode="default"
                         )["permissionDecision"] == "allow"
    answer = sub_bash_call(cli, project, "pytest -x tests", permission_mode="default")
    assert answer["permissionDecision"] == "ask"


def test_a_command_with_too_many_option_readings_is_left_alone(cli, project):
    # the readings are bounded; past the bound the command is not read, so not rewritten
    claude_settings(project / ".claude" / "settings.json", {"deny": ["Bash(git push:*)"]})
    command = "pytest -q " + " ".join(["x -a -b"] * 400)
    assert sub_bash_call(cli, project, command, permission_mode="bypassPermissions") is None
    assert rewritten(sub_bash_call(cli, project, "pytest -q x -a -b",
                                   permission_mode="bypassPermissions"))
