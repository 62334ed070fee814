"""install-hooks / uninstall-hooks: merge into the agent's settings, keep the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CTXKIT
from hookkit import payload

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/audit-bash.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def handlers(settings, event):
    return [h for group in settings["hooks"].get(event, []) for h in group["hooks"]]


def ours(settings, event):
    return [h["command"] for h in handlers(settings, event) if " hook" in h["command"]
            and "ctxkit" in h["command"]]


def test_install_into_existing_settings_keeps_everything(cli, root):
    path = root / ".claude" / "settings.json"
    write(path, USER_SETTINGS)
    result = cli("install-hooks")
    assert result.code == 0 and "installed" in result.out
    settings = json.loads(path.read_text())
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["env"] == {"FOO": "1"}
    assert handlers(settings, "Stop") == USER_SETTINGS["hooks"]["Stop"][0]["hooks"]
    assert handlers(settings, "PreToolUse")[0]["command"] == "~/bin/audit-bash.sh"
    assert [c.split(" hook ")[1] for c in ours(settings, "PreToolUse")] == ["pre-tool-use"]
    for event, name in (("PostToolUse", "post-tool-use"), ("PreCompact", "pre-compact"),
                        ("SessionStart", "session-start")):
        assert [c.split(" hook ")[1] for c in ours(settings, event)] == [name]
    matcher = [g["matcher"] for g in settings["hooks"]["PreToolUse"] if "matcher" in g]
    assert "Edit|Write|MultiEdit|Bash" in matcher


def test_install_twice_gives_the_same_file(cli, root):
    path = root / ".claude" / "settings.json"
    write(path, USER_SETTINGS)
    cli("install-hooks")
    first = path.read_bytes()
    again = cli("install-hooks")
    assert again.code == 0 and "already up to date" in again.out
    assert path.read_bytes() == first


def test_dry_run_prints_a_diff_and_writes_nothing(cli, root):
    path = root / ".claude" / "settings.json"
    write(path, USER_SETTINGS)
    before = path.read_bytes()
    result = cli("install-hooks", "--dry-run")
    assert result.code == 0
    assert result.out.startswith("--- a/.claude/settings.json\n+++ b/.claude/settings.json\n")
    added = [line for line in result.out.splitlines() if line.startswith("+")]
    assert any('"command":' in line and "hook pre-compact" in line for line in added)
    assert path.read_bytes() == before
    assert not (root / ".codex").exists()
    fresh = cli("install-hooks", "--agent", "codex", "--dry-run")
    assert fresh.code == 0 and "+++ b/.codex/hooks.json" in fresh.out
    assert not (root / ".codex").exists()


def test_uninstall_removes_only_ctxkit(cli, root):
    path = root / ".claude" / "settings.json"
    write(path, USER_SETTINGS)
    cli("install-hooks")
    result = cli("uninstall-hooks")
    assert result.code == 0
    assert json.loads(path.read_text()) == USER_SETTINGS
    assert "nothing to uninstall" in cli("uninstall-hooks").out


def test_uninstall_when_ctxkit_was_alone(cli, root):
    path = root / ".claude" / "settings.json"
    write(path, {"permissions": {"allow": []}})
    cli("install-hooks")
    cli("uninstall-hooks")
    assert json.loads(path.read_text()) == {"permissions": {"allow": []}}


def test_malformed_settings_are_never_overwritten(cli, root):
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": [oops')
    result = cli("install-hooks")
    assert result.code == 1 and "not valid JSON" in result.err and result.err.count("\n") == 1
    assert path.read_text() == '{"hooks": [oops'
    path.write_text('{"hooks": []}')
    assert cli("install-hooks").code == 1


def test_codex_and_gemini_settings(cli, root):
    assert cli("install-hooks", "--agent", "codex").code == 0
    codex = json.loads((root / ".codex" / "hooks.json").read_text())
    assert set(codex["hooks"]) == {"PreToolUse", "PostToolUse", "PreCompact", "SessionStart"}
    assert codex["hooks"]["PreToolUse"][0]["matcher"] == "Bash|apply_patch"
    assert ours(codex, "PreToolUse")[0].endswith(" hook --agent codex pre-tool-use")
    gemini_path = root / ".gemini" / "settings.json"
    write(gemini_path, {"model": {"name": "gemini-2.5-pro"}})
    assert cli("install-hooks", "--agent", "gemini").code == 0
    gemini = json.loads(gemini_path.read_text())
    assert gemini["model"] == {"name": "gemini-2.5-pro"}
    assert set(gemini["hooks"]) == {"BeforeTool", "AfterTool", "PreCompress", "SessionStart"}
    before = gemini["hooks"]["BeforeTool"][0]
    assert before["matcher"] == "replace|write_file|run_shell_command"
    assert before["hooks"][0]["timeout"] == 10000 and before["hooks"][0]["name"]
    assert cli("uninstall-hooks", "--agent", "gemini").code == 0
    assert json.loads(gemini_path.read_text()) == {"model": {"name": "gemini-2.5-pro"}}


def test_settings_path_option(cli, root, tmp_path):
    custom = tmp_path / "elsewhere" / "settings.local.json"
    custom.parent.mkdir()
    assert cli("install-hooks", "--settings", str(custom)).code == 0
    assert ours(json.loads(custom.read_text()), "SessionStart")
    assert not (root / ".claude").exists()


@pytest.mark.parametrize("command", ["install-hooks", "uninstall-hooks"])
def test_settings_path_in_a_missing_folder_is_refused(cli, root, tmp_path, command):
    custom = tmp_path / "nonexistent" / "dir" / "s.json"
    for extra in ([], ["--dry-run"]):
        result = cli(command, "--settings", str(custom), *extra)
        assert (result.code, result.out) == (1, "")
        assert result.err.count("\n") == 1 and "does not exist" in result.err
    assert not (tmp_path / "nonexistent").exists()


@pytest.mark.parametrize("agent, fixture", [("claude", "claude_session_start_compact"),
                                            ("codex", "codex_session_start_resume"),
                                            ("gemini", "gemini_session_start_resume")])
def test_installed_command_runs_in_a_shell(cli, root, agent, fixture):
    """The command written to the settings is what the agent will run: run it."""
    cli("snapshot", "save", "-m", "installed hooks task")
    cli("install-hooks", "--agent", agent)
    path = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
            "gemini": ".gemini/settings.json"}[agent]
    command = ours(json.loads((root / path).read_text()), "SessionStart")[0]
    proc = subprocess.run(["sh", "-c", command], cwd=root, input=payload(fixture, root),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "installed hooks task" in context


# --- the command the hooks run, and whether it starts fast ------------------------------


def console_install(tmp_path, compiled: bool):
    """ctxkit laid out as pip installs it: a venv with ctxkit.py in site-packages (its
    bytecode compiled, as pip does, when ``compiled``) and pip's console script."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True).stdout
    module = Path(site.strip()) / "ctxkit.py"
    module.write_bytes(CTXKIT.read_bytes())
    if compiled:
        subprocess.run([str(python), "-m", "compileall", "-q", str(module)], check=True)
    script = venv / "bin" / "ctxkit"
    script.write_text(f"#!{python}\nimport re\nimport sys\nfrom ctxkit import entry_point\n"
                      "if __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      "    sys.exit(entry_point())\n")
    script.chmod(0o755)
    return script


def install_dry_run(script, root, path, bytecode=True):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXKIT_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PATH"] = path
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([str(script), "install-hooks", "--dry-run", "--json"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    commands = [line.split('"command": ', 1)[1].strip('",') for line in data["diff"].splitlines()
                if '"command": ' in line]
    return commands, data["slow_start"], proc.stderr


def test_a_regular_install_writes_its_console_script_and_starts_fast(root, tmp_path):
    script = console_install(tmp_path, compiled=True)
    commands, slow, err = install_dry_run(script, root, f"{script.parent}:/usr/bin:/bin",
                                          bytecode=False)
    assert commands and all(c.startswith("ctxkit hook ") for c in commands)
    assert slow == [] and err == ""
    # not on PATH: the script by its absolute path
    commands, slow, err = install_dry_run(script, root, "/usr/bin:/bin", bytecode=False)
    assert commands[0] == f"{script} hook pre-tool-use" and slow == [] and err == ""


def test_a_module_without_bytecode_is_reported(root, tmp_path):
    script = console_install(tmp_path, compiled=False)
    commands, slow, err = install_dry_run(script, root, f"{script.parent}:/usr/bin:/bin",
                                          bytecode=False)
    assert commands[0] == "ctxkit hook pre-tool-use"
    assert len(slow) == 1 and "no current bytecode cache" in slow[0]
    assert "PYTHONDONTWRITEBYTECODE is set" in slow[0]
    assert err.startswith("ctxkit: warning: the hooks will start slowly: ")
    assert err.count("\n") == 1 and "pipx install ." in err
    # Python may write the cache: the first start writes it, and nothing is reported.
    assert install_dry_run(script, root, "/usr/bin:/bin")[1:] == ([], "")


def test_running_from_source_writes_the_script_form_and_warns(cli):
    result = cli.sub("install-hooks", "--dry-run", "--json", env={"PATH": "/usr/bin:/bin"})
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert f'{sys.executable} {CTXKIT} hook pre-tool-use' in data["diff"]
    assert data["slow_start"] == ["it runs ctxkit.py as a script, which Python compiles again "
                                  "on every start"]
    assert result.err.startswith("ctxkit: warning: the hooks will start slowly: it runs")
    assert cli.sub("uninstall-hooks", "--dry-run", env={"PATH": "/usr/bin:/bin"}).err == ""


def test_running_from_source_says_when_the_hooks_run_another_install(root, tmp_path):
    other = console_install(tmp_path, compiled=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["PATH"] = f"{other.parent}:/usr/bin:/bin"
    proc = subprocess.run([sys.executable, str(CTXKIT), "install-hooks", "--dry-run", "--json"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["command"] == "ctxkit" and '"ctxkit hook pre-tool-use"' in data["diff"]
    assert proc.stderr == (f"ctxkit: note: the hooks run the 'ctxkit' found on PATH ({other}), "
                           f"not this file ({CTXKIT.resolve()}); install this copy "
                           "('pip install .') for them to run it\n")
