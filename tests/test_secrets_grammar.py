"""Secrets found by the grammar of what holds them, through the real CLI.

Three defects a new user found: cookies and the password flags of well-known
clients were stored in clear; pytest node ids whose parameters hold URL
userinfo were rewritten; a private key's lines lost their prefixes (a log
timestamp, pytest's ``E   ``, a line number). Each is tested where a user
meets it: `run` (the argv and the output), `store`, the post-tool-use hook
(a Bash command and its output), then `expand`, `search`, `outputs` and the
database's bytes.
"""

from __future__ import annotations

import shlex
import sqlite3
import sys

import pytest
from hookkit import payload
from redactkit import must_not_redact

import ctxkit

HELD_OUT_2_CLEAN = must_not_redact("held_out_2_must_not_redact.txt")
R = "***REDACTED***"


def _disk(cli) -> bytes:
    files = [cli.db.with_name(cli.db.name + suffix) for suffix in ("", "-wal", "-shm")]
    return b"".join(path.read_bytes() for path in files if path.exists())


def _lines(cli, handle: str) -> list[str]:
    result = cli("expand", handle, "--json")
    assert result.code == 0, result.err
    return [item["text"] for item in result.json()["lines"]]


def _hook(cli, root, command: str, stdout: str) -> dict:
    body = payload("claude_post_tool_use_bash", root, tool_input={"command": command},
                   tool_response={"stdout": stdout, "stderr": "", "interrupted": False})
    result = cli("hook", "post-tool-use", stdin=body)
    assert result.code == 0, result.err
    return cli("outputs", "--json").json()["outputs"][0]


# --- 1. cookies and the password flags of well-known clients ------------------------------

# (a command line as typed, the same line as it must be stored, the secrets)
COMMANDS = [
    ("curl -b 'sessionid=k3Jd9sLq0ZpX7vBn2mWc; theme=dark' https://app.example.com/",
     f"curl -b 'sessionid={R}; theme=dark' https://app.example.com/", ["k3Jd9sLq0ZpX7vBn2mWc"]),
    ("curl --cookie remember=9f8e7d6c5b4a39281706f5e4 https://app.example.com/",
     f"curl --cookie remember={R} https://app.example.com/", ["9f8e7d6c5b4a39281706f5e4"]),
    ("curl -H 'Cookie: _app_session=Qm9vdHN0cmFwLXNlc3Npb24tMTIz; locale=en' https://a.example",
     f"curl -H 'Cookie: _app_session={R}; locale=en' https://a.example",
     ["Qm9vdHN0cmFwLXNlc3Npb24tMTIz"]),
    ("mysql -h db -u root -pW1nt3r-Is-Here shop",
     f"mysql -h db -u root -p{R} shop", ["W1nt3r-Is-Here"]),
    ("mysqldump --user=backup --password=Bk7pQ2xZ9w --all-databases",
     f"mysqldump --user=backup --password={R} --all-databases", ["Bk7pQ2xZ9w"]),
    ("docker login -u ci -p Dk8sLm3Qx7Rt2Vb9 registry.example.com",
     f"docker login -u ci -p {R} registry.example.com", ["Dk8sLm3Qx7Rt2Vb9"]),
    ("docker login --username ci --password Pw4Regi5try9 ghcr.io",
     f"docker login --username ci --password {R} ghcr.io", ["Pw4Regi5try9"]),
    ("sshpass -p 'Tr0ub4dor & 3' ssh deploy@10.0.0.8 uptime",
     f"sshpass -p '{R}' ssh deploy@10.0.0.8 uptime", ["Tr0ub4dor & 3"]),
    ("redis-cli -h cache -a R3disAuth77x ping", f"redis-cli -h cache -a {R} ping",
     ["R3disAuth77x"]),
    ("openssl pkcs12 -export -in c.pem -out b.p12 -passout pass:P12Sekr1t",
     f"openssl pkcs12 -export -in c.pem -out b.p12 -passout pass:{R}", ["P12Sekr1t"]),
    ("keytool -importkeystore -srcstorepass St0rePw11 -deststorepass St0rePw22",
     f"keytool -importkeystore -srcstorepass {R} -deststorepass {R}",
     ["St0rePw11", "St0rePw22"]),
    ("smbclient //fs/share -U 'CORP\\svc%Smb9Pass4' -c ls",
     f"smbclient //fs/share -U 'CORP\\svc%{R}' -c ls", ["Smb9Pass4"]),
]
# The same flags where they hold no password: they come back as typed.
CLEAN_COMMANDS = [
    "docker run -d -p 8080:80 --name web nginx:1.25",
    "mysql -u root -p shop",
    "curl -b cookies.txt -c cookies.txt https://example.com/login",
    "openssl rsa -in key.pem -passin file:/run/secrets/key_pass -out plain.pem",
    "ssh -p 2222 deploy@host",
]


@pytest.mark.parametrize(("line", "expected", "secrets"), COMMANDS,
                         ids=[line.split()[0] + str(i) for i, (line, _, _) in enumerate(COMMANDS)])
def test_client_passwords_and_cookies_are_masked_in_run_argv_and_output(
        cli, line, expected, secrets):
    """The command prints the line as typed; its argv holds the line whole, then split."""
    script = 'printf "%s\\n" "$0"'
    result = cli("run", "--json", "--", "sh", "-c", script, line, *shlex.split(line))
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["redactions"] >= 1
    stored = cli("outputs", "--json").json()["outputs"][0]["command"]
    assert shlex.split(stored) == ["sh", "-c", script, expected, *shlex.split(expected)]
    assert _lines(cli, summary["handle"]) == [expected]
    data = _disk(cli)
    for secret in secrets:
        assert secret.encode() not in data
        hits = cli("search", secret, "--json").json()["hits"]
        assert all(secret not in hit["text"] for hit in hits)


@pytest.mark.parametrize(("line", "expected", "secrets"), COMMANDS,
                         ids=[line.split()[0] + str(i) for i, (line, _, _) in enumerate(COMMANDS)])
def test_client_passwords_and_cookies_are_masked_in_a_hook_command_and_store(
        cli, root, line, expected, secrets):
    listed = _hook(cli, root, line, f"$ {line}\n" + "ok\n" * 2000)
    assert listed["command"] == expected
    assert _lines(cli, listed["handle"])[0] == f"$ {expected}"
    summary = cli("store", "-", "--json", "--command", line, stdin=line + "\n").json()
    assert _lines(cli, summary["handle"]) == [expected]
    data = _disk(cli)
    assert not any(secret.encode() in data for secret in secrets)


def test_the_same_flags_without_a_password_come_back_as_typed(cli, root):
    for line in CLEAN_COMMANDS:
        assert _hook(cli, root, line, line + "\n" + "ok\n" * 2000)["command"] == line
        result = cli("run", "--json", "--", "sh", "-c", 'printf "%s\\n" "$*"', "sh",
                     *shlex.split(line))
        summary = result.json()
        assert summary["redactions"] == 0, line
        assert _lines(cli, summary["handle"]) == [line]


def test_a_set_cookie_masks_the_cookie_and_keeps_its_attributes(cli):
    text = ("< HTTP/1.1 302 Found\n"
            "< Set-Cookie: sid=Zx81mQ0pLk3vT7aB9cY2; Path=/; Max-Age=7200; HttpOnly\n"
            "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000\n"
            "> Cookie: sid=Zx81mQ0pLk3vT7aB9cY2; lang=en-US\n"
            ".example.com\tTRUE\t/\tTRUE\t1735689600\tsid\tZx81mQ0pLk3vT7aB9cY2\n")
    summary = cli("store", "-", "--json", stdin=text).json()
    assert _lines(cli, summary["handle"]) == [
        "< HTTP/1.1 302 Found",
        f"< Set-Cookie: sid={R}; Path=/; Max-Age=7200; HttpOnly",
        "< Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
        f"> Cookie: sid={R}; lang=en-US",
        f".example.com\tTRUE\t/\tTRUE\t1735689600\tsid\t{R}"]
    assert b"Zx81mQ0pLk3vT7aB9cY2" not in _disk(cli)


def test_the_second_held_out_clean_corpus_comes_back_byte_for_byte(cli):
    text = "\n".join(HELD_OUT_2_CLEAN) + "\n"
    summary = cli("store", "-", "--json", stdin=text).json()
    assert summary["redactions"] == 0
    assert "\n".join(_lines(cli, summary["handle"])) + "\n" == text


# --- 2. pytest node ids keep their parameters -------------------------------------------

TEST_FILE = '''import pytest


@pytest.mark.parametrize("url", ["http://user:pass@example.com/path", "a:b@c"])
def test_get_auth(url):
    assert "@" in url


def test_connect():
    dsn = "postgresql://app:" + "Pg7Rt2" + "Vx9Q" + "@db:5432/app"
    print("connecting to", dsn)
    assert dsn.startswith("mysql")
'''


def test_pytest_ids_survive_and_a_real_credential_url_does_not(cli, root):
    (root / "test_ids.py").write_text(TEST_FILE)
    result = cli("run", "--json", "--direct-max", "0", "--", sys.executable, "-m", "pytest",
                 "-v", "-p", "no:cacheprovider", "test_ids.py")
    summary = result.json()
    lines = _lines(cli, summary["handle"])
    assert "test_ids.py::test_get_auth[http://user:pass@example.com/path] PASSED" in \
        " ".join(lines)
    assert any("test_ids.py::test_get_auth[a:b@c] PASSED" in line for line in lines)
    assert any(line.startswith("FAILED test_ids.py::test_connect") for line in lines)
    assert any(f"postgresql://app:{R}@db:5432/app" in line for line in lines)
    assert b"Pg7Rt2Vx9Q" not in _disk(cli)
    hits = cli("search", "test_get_auth[http://user:pass@example.com/path]", "--json").json()
    assert any("test_get_auth[http://user:pass@example.com/path]" in hit["text"]
               for hit in hits["hits"])


def test_a_pytest_id_in_a_hook_command_and_its_output_is_kept(cli, root):
    node = "tests/test_utils.py::test_auth[http://user:pass@example.com-expected1]"
    command = f"python -m pytest -q '{node}'"
    stdout = f"{node} PASSED\n" + "ok\n" * 2000 + "DSN postgresql://app:Rt5Wq8Zp2L@db/app\n"
    listed = _hook(cli, root, command, stdout)
    assert listed["command"] == command
    lines = _lines(cli, listed["handle"])
    assert lines[0] == f"{node} PASSED"
    assert lines[-1] == f"DSN postgresql://app:{R}@db/app"
    result = cli("run", "--json", "--", "sh", "-c", 'printf "%s\\n" "$0"', node)
    assert cli("outputs", "--json").json()["outputs"][0]["command"].endswith(f"'{node}'")
    assert _lines(cli, result.json()["handle"]) == [node]


def test_a_subscript_is_code_not_a_test_id():
    text = 'url = cases["postgresql://app:Pg7Rt2Vx9Q@db/app"]'
    assert ctxkit.redact(text)[0] == f'url = cases["postgresql://app:{R}@db/app"]'


# --- 3. a private key's lines keep their prefixes ---------------------------------------

BODY = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
        "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
        "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo"]


def _key_lines(prefix) -> list[str]:
    lines = ["-----BEGIN RSA PRIVATE KEY-----", *BODY, "-----END RSA PRIVATE KEY-----"]
    return [prefix(number) + line for number, line in enumerate(lines)]


PREFIXES = {
    "pytest": lambda n: "E   ",
    "log": lambda n: f"2024-05-01T10:00:0{n}Z app[web.1]: ",
    "listing": lambda n: f"{n + 98:>6}\t",
    "diff": lambda n: "+",
    "none": lambda n: "",
}


@pytest.mark.parametrize("kind", list(PREFIXES))
def test_a_key_loses_its_material_and_keeps_every_prefix(cli, root, kind):
    key = _key_lines(PREFIXES[kind])
    text = "\n".join(["before the key", *key, "after the key 42"]) + "\n"
    expected = ["before the key", *[PREFIXES[kind](n) + R for n in range(len(key))],
                "after the key 42"]
    script = f"import sys; sys.stdout.write({text!r})"
    for summary in (cli("run", "--json", "--", sys.executable, "-c", script).json(),
                    cli("store", "-", "--json", stdin=text).json()):
        assert summary["redactions"] == 1
        assert _lines(cli, summary["handle"]) == expected
    listed = _hook(cli, root, "cat deploy.log", text + "ok\n" * 2000)
    assert _lines(cli, listed["handle"])[:len(expected)] == expected
    assert ctxkit.redact(text)[0] == "\n".join(expected) + "\n"  # the same rule everywhere
    data = _disk(cli)
    assert not any(line.encode() in data for line in BODY)


def test_a_key_cut_short_masks_its_lines_and_leaves_the_log_after_it(cli):
    text = ("E   -----BEGIN PRIVATE KEY-----\n"
            f"E   {BODY[0]}\n"
            "2024-05-01 10:00:01 INFO request done in 5 ms\n")
    summary = cli("store", "-", "--json", stdin=text).json()
    assert _lines(cli, summary["handle"]) == [
        f"E   {R}", f"E   {R}", "2024-05-01 10:00:01 INFO request done in 5 ms"]


def test_a_key_split_across_reads_keeps_its_prefixes(cli):
    """The block stays open between the command's writes, as between lines."""
    script = ("import sys, time\n"
              "sys.stdout.write('E   -----BEGIN EC PRIVATE KEY-----\\nE   MHcCAQEEIB'); "
              "sys.stdout.flush(); time.sleep(0.3)\n"
              f"sys.stdout.write('{BODY[1]}\\nE   -----END EC PRIVATE KEY-----\\n')\n")
    summary = cli("run", "--json", "--", sys.executable, "-c", script).json()
    assert _lines(cli, summary["handle"]) == [f"E   {R}"] * 3
    conn = sqlite3.connect(cli.db)
    stored = "".join(row[0] for row in conn.execute("SELECT text FROM output_chunks"))
    conn.close()
    assert BODY[1] not in stored and "MHcCAQEEIB" not in stored


# --- every agent's shell hook ------------------------------------------------------------

AGENTS = [
    ("claude_post_tool_use_bash", lambda t: {"stdout": t, "stderr": "", "interrupted": False}),
    ("codex_post_tool_use_bash", lambda t: t),
    ("gemini_after_tool_shell", lambda t: {"llmContent": t, "returnDisplay": t}),
]


@pytest.mark.parametrize(("fixture", "response"), AGENTS, ids=[a[0].split("_")[0] for a in AGENTS])
def test_each_agents_shell_hook_stores_the_three_kinds_as_the_cli_does(
        cli, root, fixture, response):
    command = ("docker login -u ci -p Dk8sLm3Qx7Rt2Vb9 ghcr.io"
               " && curl -b 'sid=Zx81mQ0pLk3vT7aB9cY2' x")
    node = "tests/t.py::test_auth[http://user:pass@example.com-expected1] PASSED"
    key = _key_lines(PREFIXES["log"])
    stdout = "\n".join([node, *key]) + "\n" + "ok\n" * 2000
    body = payload(fixture, root, tool_input={"command": command}, tool_response=response(stdout))
    assert cli("hook", "post-tool-use", stdin=body).code == 0
    listed = cli("outputs", "--json").json()["outputs"][0]
    assert listed["command"] == f"docker login -u ci -p {R} ghcr.io && curl -b 'sid={R}' x"
    lines = _lines(cli, listed["handle"])
    assert lines[:len(key) + 1] == [node, *[PREFIXES["log"](n) + R for n in range(len(key))]]
    data = _disk(cli)
    assert b"Dk8sLm3Qx7Rt2Vb9" not in data and b"Zx81mQ0pLk3vT7aB9cY2" not in data
    assert not any(line.encode() in data for line in BODY)


def test_the_new_rules_keywords_are_in_every_match_they_make():
    """The keyword scan may skip a rule only when it could not match; the client rules'
    keywords are tails of the programs' names (``ysql ``), chosen to keep the scan fast."""
    texts = [line for line, _, _ in COMMANDS] + CLEAN_COMMANDS + [
        "sudo /usr/bin/mysqldump -pX1 db", "7z a -pAb1 x.7z", "mongosh -p Zz9 db",
        "SSHPASS=Qq7 sshpass -e ssh h", ".x.org\tFALSE\t/\tFALSE\t0\tsid\tAbc123Def456Ghi7"]
    families = ("client-password", "client-password-env", "cookie", "cookie-file", "private-key")
    for text in texts:
        low = text.lower()
        for rule, pattern in ctxkit.redaction_rules():
            if rule.family not in families:
                continue
            for match in pattern.finditer(text):
                assert any(k in match.group(0).lower() for k in rule.keywords), \
                    (rule.family, match.group(0))
                assert rule in [r for r, _ in ctxkit._rules_for(low)]
