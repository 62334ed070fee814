"""Ctrl-C and SIGTERM during `index`: one line, 130 or 143, no worker left, a sound database.

Real subprocesses in a session of their own; the signal goes to the whole process
group, as a terminal sends Ctrl-C, once the parse workers are running.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time

import pytest
from conftest import CONSOLE_ARGV

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and signals")


def corpus(root, files=320, functions=60):
    for n in range(files):
        body = "".join(f"def f{n}_{i}(x):\n    if x:\n        return f{n}_{i - 1}(x - 1)\n"
                       f"    return [y for y in range(x)]\n\n" for i in range(functions))
        (root / f"m{n:03}.py").write_text(f"import os\n\n{body}")


def as_a_terminal_starts_it():
    """SIGINT handled as in a foreground job: a suite started in the background (`cmd &`
    in a shell without job control) has it ignored, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def group(pid):
    found = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(pid)], capture_output=True,
                           text=True, check=False).stdout.split("\n")
    return [line.split() for line in found if line.strip()]


def interrupted_index(root, sig, to_group=True, pause=0.0):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    proc = subprocess.Popen([*CONSOLE_ARGV, "index", "--full", "--jobs", "2"],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=as_a_terminal_starts_it)
    deadline = time.monotonic() + 60
    while len(group(proc.pid)) < 3 and time.monotonic() < deadline:   # parent + 2 workers
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.skip("the index finished before its workers could be interrupted")
    time.sleep(pause)
    (os.killpg if to_group else os.kill)(proc.pid, sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"index still running 60 s after {sig!r}")
    time.sleep(0.3)
    return proc, out.decode(), err.decode()


def assert_sound(root, cli):
    conn = sqlite3.connect(root / ".ctxkit" / "ctxkit.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM nodes WHERE file_id NOT IN "
                            "(SELECT id FROM files)").fetchone()[0] == 0
    finally:
        conn.close()
    again = cli.sub("index", "--json")
    assert again.code == 0, again.err
    assert again.json()["files"]["indexed"] + again.json()["files"]["unchanged"] == 320


@pytest.mark.slow                    # a 320-file index, interrupted, then run whole
@pytest.mark.parametrize("pause", [0.0, 0.4, 0.9])
def test_ctrl_c_to_the_process_group(cli, root, pause):
    corpus(root)
    proc, out, err = interrupted_index(root, signal.SIGINT, pause=pause)
    assert (proc.returncode, out, err) == (130, "", "ctxkit: interrupted\n")
    assert group(proc.pid) == []                       # no worker, not even a zombie
    assert_sound(root, cli)


@pytest.mark.slow                    # a 320-file index, interrupted, then run whole
@pytest.mark.parametrize("to_group", [True, False])
def test_sigterm(cli, root, to_group):
    corpus(root)
    proc, out, err = interrupted_index(root, signal.SIGTERM, to_group=to_group, pause=0.3)
    assert (proc.returncode, out, err) == (143, "", "ctxkit: terminated\n")
    assert group(proc.pid) == []
    assert_sound(root, cli)


def test_ctrl_c_with_json_is_one_document(cli, root):
    corpus(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    proc = subprocess.Popen([*CONSOLE_ARGV, "index", "--full", "--json", "--jobs", "2"],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=as_a_terminal_starts_it)
    deadline = time.monotonic() + 60
    while len(group(proc.pid)) < 3 and time.monotonic() < deadline:   # parent + 2 workers
        time.sleep(0.02)
    if proc.poll() is not None:      # as interrupted_index: nothing left to interrupt
        proc.communicate()
        pytest.skip("the index finished before its workers could be interrupted")
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.decode() == "ctxkit: interrupted\n"
    assert out.decode().count("\n") == 1 and '"status": "error"' in out.decode()
