"""No secret on disk: everything ctxkit stores is redacted, and nothing else is altered.

The corpora (tests/fixtures/redaction) hold the cases; the CLI tests plant
secrets of every family in every place a user or an agent can put one, then
read the raw bytes of the database, its -wal and -shm, and the snapshot file,
and every read command's output.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from hookkit import payload
from redactkit import must_not_redact, must_redact, rates
from conftest import CONSOLE_ARGV

import ctxkit

TUNED = must_redact("must_redact.txt")
TUNED_CLEAN = must_not_redact("must_not_redact.txt")
HELD_OUT_CLEAN = must_not_redact("held_out_must_not_redact.txt")


def _redact(text: str) -> str:
    return ctxkit.redact(text)[0]


# --- the corpora ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected", "secrets"), TUNED,
                         ids=[f"redact{i}" for i in range(len(TUNED))])
def test_every_family_is_masked_and_nothing_else_changes(text, expected, secrets):
    assert _redact(text) == expected


@pytest.mark.parametrize("text", TUNED_CLEAN + HELD_OUT_CLEAN,
                         ids=[f"clean{i}" for i in range(len(TUNED_CLEAN + HELD_OUT_CLEAN))])
def test_text_without_a_secret_is_never_touched(text):
    assert ctxkit.redact(text) == (text, 0)


def test_false_positive_rate_is_zero_on_both_corpora():
    result = rates(_redact, TUNED, TUNED_CLEAN + HELD_OUT_CLEAN)
    assert result["false_positives"] == 0, result["changed"]
    assert result["false_negatives"] == 0, result["missed"]
    assert result["clean"] >= 200 and result["secrets"] >= 100


def test_the_issue_s_comparisons_keep_their_operators():
    for text in ('assert app.secret_key == "config"', "if password == other:",
                 "if password != other:", "assert len(token) <= 8", "password: str",
                 "token = get_token()"):
        assert _redact(text) == text
    assert _redact('app.secret_key = "k3y-9f8e7d6c5b4a"') == 'app.secret_key = "***REDACTED***"'


def test_every_rule_has_keywords_that_its_matches_contain():
    """The keyword filter may skip a rule only when it could not match."""
    for rule in ctxkit.REDACTION_RULES:
        assert rule.keywords and all(k == k.lower() for k in rule.keywords), rule.family
    for text, _, _secrets in TUNED:
        low = text.lower()
        for rule, pattern in ctxkit.redaction_rules():
            for match in pattern.finditer(text):
                assert any(k in match.group(0).lower() for k in rule.keywords), \
                    (rule.family, match.group(0))
        assert ctxkit.may_hold_secret(low)


# --- through the CLI: nothing stored holds a secret ---------------------------------------

PLANTED = {case[2][0]: case[0] for case in TUNED[:30] if len(case[2][0]) >= 7}


def _disk_bytes(cli) -> bytes:
    files = [cli.db.with_name(cli.db.name + suffix) for suffix in ("", "-wal", "-shm")]
    files.append(cli.root / ".context-snapshot.md")
    return b"".join(path.read_bytes() for path in files if path.exists())


def _assert_no_secret(data: bytes | str, where: str) -> None:
    raw = data.encode() if isinstance(data, str) else data
    for secret in PLANTED:
        assert secret.encode() not in raw, f"{secret!r} found in {where}"


@pytest.fixture
def planted(cli, root):
    """A database with a secret of each family in every field a user can fill."""
    holder = None
    lines = list(PLANTED.values())
    for number, line in enumerate(lines):
        if number == 1:  # keep a reader open so the -wal file is not checkpointed away
            holder = sqlite3.connect(cli.db)
            holder.execute("PRAGMA wal_autocheckpoint = 0")
            holder.execute("SELECT count(*) FROM outputs").fetchone()
        assert cli("run", "--label", f"deploy {line}", "--", "sh", "-c", ': "$0"', line,
                   *line.split()).code == 0
        assert cli("store", "-", "--label", line, "--command", line, "--exit-code", "1",
                   stdin=f"step {number}\n{line}\nFAILED: {line}\n").code == 0
        assert cli("fail", f"Deploy.step{number}", f"leaked {line}", "-d", line,
                   "--session", line, "--file", "src/app.py").code == 0
        assert cli("note", "decision", f"rotate {line}", "--session", line).code == 0
    big = "".join(f"collected item {i}\n" for i in range(600)) + "\n".join(lines) + "\n"
    for line in lines[:10]:
        body = payload("claude_post_tool_use_bash", root, session_id=line,
                       tool_input={"command": line},
                       tool_response={"stdout": big, "stderr": "", "interrupted": False})
        assert cli("hook", "post-tool-use", stdin=body).code == 0
        body = payload("claude_pre_tool_use_bash", root, session_id=line,
                       tool_input={"command": f"pytest -q && {line}"})
        assert cli("hook", "pre-tool-use", stdin=body).code == 0
    assert cli("snapshot", "save", "-m", "task: " + " ; ".join(lines)).code == 0
    yield cli
    if holder is not None:
        holder.close()


def test_no_secret_reaches_the_database_wal_or_snapshot_file(planted):
    assert planted.db.with_name("ctxkit.db-wal").stat().st_size > 0
    data = _disk_bytes(planted)
    _assert_no_secret(data, "the database files")
    assert b"***REDACTED***" in data


def test_reads_never_show_a_secret(planted, root):
    cli = planted
    handles = [o["handle"] for o in cli("outputs", "--json").json()["outputs"]]
    outputs = [cli("outputs"), cli("outputs", "--json")]
    outputs += [cli("expand", h) for h in handles[:8]]
    outputs += [cli("expand", h, "--json") for h in handles[:8]]
    outputs += [cli("query", "--all", "--json"), cli("query", "Deploy.step3"),
                cli("stats"), cli("stats", "--json"), cli("stats", "--outputs", "--json"),
                cli("snapshot", "restore"), cli("snapshot", "show", "1", "--json"),
                cli("snapshot", "list", "--json"),
                cli("search", "FAILED", "--json"), cli("search", "--events", "rotate", "--json"),
                cli("hook", "session-start",
                    stdin=payload("claude_session_start_compact", root))]
    for secret in list(PLANTED)[:10]:  # the query is echoed back; its hits never hold it
        found = cli("search", secret, "--json")
        assert found.code == 0, found.err
        _assert_no_secret(json.dumps(found.json()["hits"]), f"search hits for {secret}")
    for number, result in enumerate(outputs):
        assert result.code == 0, result.err
        _assert_no_secret(result.out + result.err, f"read #{number}")


def test_summary_of_a_run_never_shows_its_secret(cli):
    token = "ghp_" + "Zx9" * 12
    result = cli("run", "--json", "--direct-max", "0", "--", "sh", "-c",
                 f"for i in $(seq 300); do echo line $i; done; echo 'token {token}'", token)
    summary = result.json()
    assert token not in result.out and "***REDACTED***" in summary["command"]
    assert summary["redactions"] == 1


def test_after_a_colon_an_ampersand_is_part_of_the_password(cli):
    # "&" joins name=value pairs in a query string, where it ends the value; after
    # "password:" (YAML, a header, a log field) it is one of the password's characters,
    # and the part after it was stored as written
    (cli.root / "conf.log").write_text(
        "password: Tr0ub4dor&3\n"
        "db_password: s3cr3t&more%x\n"
        "GET https://shop.example/?password=abc123xyz&next=2\n")
    handle = cli("store", "conf.log", "--json").json()["handle"]
    lines = [e["text"] for e in cli("expand", handle, "--json").json()["lines"]]
    assert lines == ["password: ***REDACTED***", "db_password: ***REDACTED***",
                     "GET https://shop.example/?password=***REDACTED***&next=2"]


# --- secrets cut by a storage boundary ---------------------------------------------------


def _long_line_with(secret: str, at: int) -> str:
    """A line without spaces, longer than a piece, with ``secret`` across offset ``at``."""
    head = "a" * (at - len(secret) // 2 - 1) + ","
    return head + secret + "," + "b" * (ctxkit.LINE_PIECE + ctxkit.PIECE_MARGIN)


# Each case stores a line of over 1 MiB, which takes seconds: the first runs in a
# plain `pytest`, every one in .ci/run (slow).
_PIECE_CASES = [(command, secret) for command in ("store", "run")
                for secret in ("ghp_" + "Q7w" * 12, "AKIA" + "Z3XQ" * 4,
                               'password="Str4ddle-the-cut-9"')]


@pytest.mark.parametrize(("command", "secret"), [
    pytest.param(*case, marks=() if number == 0 else pytest.mark.slow)
    for number, case in enumerate(_PIECE_CASES)])
def test_secret_across_the_piece_boundary_is_masked_whole(cli, tmp_path, secret, command):
    line = _long_line_with(secret, ctxkit.LINE_PIECE)
    path = tmp_path / "long.txt"
    path.write_text(f"first\n{line}\nlast\n")
    if command == "store":
        summary = cli("store", str(path), "--json").json()
    else:
        summary = cli("run", "--json", "--", "cat", str(path)).json()
    assert summary["redactions"] == 1
    value = secret.split('"')[1] if '"' in secret else secret
    data = _disk_bytes(cli)
    for part in (value, value[: len(value) // 2], value[len(value) // 2:]):
        assert part.encode() not in data, part
    lines = cli("expand", summary["handle"], "--json").json()["lines"]
    whole = "".join(item["text"] for item in lines if item["line"] == 2)
    assert whole == line.replace(value, "***REDACTED***")


def test_secret_across_read_buffers_of_a_slow_command(cli):
    """The command writes a key in two halves, with a pause between the writes."""
    script = ("import sys, time\n"
              "sys.stdout.write('export API_TOKEN=tok_4f9a8b7c'); sys.stdout.flush()\n"
              "time.sleep(0.3)\n"
              "sys.stdout.write('6d5e4f3a2b1c0d9e\\n' + 'x\\n' * 3000)\n")
    summary = cli("run", "--json", "--", sys.executable, "-c", script).json()
    assert summary["redactions"] == 1
    first = cli("expand", summary["handle"], "--lines", "1", "--json").json()["lines"]
    assert first[0]["text"] == "export API_TOKEN=***REDACTED***"
    conn = sqlite3.connect(cli.db)
    stored = "".join(row[0] for row in conn.execute("SELECT text FROM output_chunks"))
    conn.close()
    assert "4f9a8b7c" not in stored and "6d5e4f3a2b1c" not in stored


# --- nothing but a secret changes, through the whole store --------------------------------


def test_clean_corpus_comes_back_byte_for_byte(cli):
    text = "\n".join(TUNED_CLEAN + HELD_OUT_CLEAN) + "\n"
    summary = cli("store", "-", "--json", stdin=text).json()
    assert summary["redactions"] == 0
    lines = cli("expand", summary["handle"], "--json").json()["lines"]
    assert "\n".join(item["text"] for item in lines) + "\n" == text


def test_a_busy_block_is_masked_as_each_of_its_lines_alone(cli):
    """Ingest redacts only the lines of a block that hold a keyword: the corpus's
    secrets scattered through thousands of clean lines come back exactly as each line
    redacted alone, and the clean lines byte for byte."""
    secrets = [text for text, _, _ in TUNED if "\n" not in text and "-----" not in text]
    lines = []
    for i in range(3000):
        lines.append(f"2026-12-01 10:00:{i % 60:02d} INFO step {i} done")
        if i % 7 == 3 and secrets:
            lines.append(secrets.pop())
    summary = cli("store", "-", "--json", stdin="\n".join(lines) + "\n").json()
    stored = [item["text"] for item in
              cli("expand", summary["handle"], "--json").json()["lines"]]
    assert stored == [_redact(line) for line in lines]
    assert summary["redactions"] > 0


def test_hook_bash_command_is_stored_masked(cli, root):
    command = "PGPASSWORD=Hk8-v2-pq9 psql -h db -c 'select 1'"
    body = payload("claude_post_tool_use_bash", root, tool_input={"command": command},
                   tool_response={"stdout": "row\n" * 3000, "stderr": "", "interrupted": False})
    result = cli("hook", "post-tool-use", stdin=body)
    assert result.code == 0, result.err
    assert b"Hk8-v2-pq9" not in _disk_bytes(cli)
    listed = cli("outputs", "--json").json()["outputs"][0]
    assert listed["command"] == "PGPASSWORD=***REDACTED*** psql -h db -c 'select 1'"


def test_secret_in_a_real_subprocess_argv_reaches_the_command_unmasked(cli, tmp_path):
    """Redaction is of what is stored; the command itself gets its real arguments."""
    secret = "sk-proj-" + "Rt5" * 10
    out = tmp_path / "seen"
    proc = subprocess.run([*CONSOLE_ARGV, "run", "--", "sh", "-c",
                           f'printf "%s" "$0" > {out}', secret], cwd=cli.root,
                          capture_output=True, env={k: v for k, v in os.environ.items()
                                                    if not k.startswith("CTXKIT_")})
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == secret
    assert secret.encode() not in _disk_bytes(cli)
    assert json.loads(cli("outputs", "--json").out)["outputs"][0]["command"].endswith(
        "'***REDACTED***'")


def test_the_graph_stores_no_secret_from_signatures_or_docstrings(cli):
    secret, token = "hunter2-Gr4ph", "ghp_" + "Gq7" * 12
    (cli.root / "db.py").write_text(
        f'"""Connects with {token}."""\n\n\n'
        f'def connect(host, password="{secret}", retries=3):\n'
        f'    """Log in; the test account uses token {token}."""\n    return host\n')
    assert cli("index").code == 0
    data = _disk_bytes(cli)
    assert secret.encode() not in data and token.encode() not in data
    conn = sqlite3.connect(cli.db)
    signature, = conn.execute("SELECT signature FROM nodes WHERE name = 'connect'").fetchone()
    conn.close()
    assert signature == 'def connect(host, password="***REDACTED***", retries=3)'


def test_a_lesson_counts_every_secret_it_masked(cli):
    token = "ghp_" + "a1b2c3d4e5" * 3 + "abcdef"
    result = cli("fail", "Deploy.run", f"leaked {token}", "-d", f"token={token}",
                 "--session", f"ci {token}", "--json")
    assert result.code == 0 and result.json()["symbol"]["lessons"][0]["session_id"] == \
        "ci ***REDACTED***"
    assert "3 secrets masked before saving" in result.err
