#!/usr/bin/env python3
"""The tuned set's questions asked again in other words, over the tuned set's own logs.

    python tests/bench/bench_outputs.py --set dev   # once: makes the logs in .work/
    python tests/bench/dev_paraphrases.py           # dev and paraphrase recall, in process

Ranking changes are developed here and on the dev set (GOLDEN in bench_outputs.py),
never on the held-out set: these questions were written by reading the dev logs, and
their misses are printed so they can be worked on. Each question names its log, the
question and the regex of the line that answers it (or (anchor, regex): the first match
after the anchor), as in bench_outputs.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))
import ctxkit  # noqa: E402
from bench_outputs import GOLDEN, WORK, answer_lines, run_ctxkit  # noqa: E402

PARAPHRASES = [
    # (log, question, regex of the answering line), over the tuned set's own logs
    ("pytest", "KeyError in cart total", r"KeyError: 'apple'"),
    ("pytest", "which test raised ValueError",
     r"ValueError: quantity must be positive|FAILED .*test_negative_quantity"),
    ("pytest", "unknown discount code FREE", r"KeyError: 'FREE'"),
    ("pytest", "missing port key in config", r"KeyError: 'port'"),
    ("pytest", "invalid json in config load", r"JSONDecodeError"),
    ("pytest", "subscript on None", r"TypeError: 'NoneType' object is not subscriptable"),
    ("pytest", "number of failed tests", r"\d+ failed, \d+ passed"),
    ("pytest", "test_rounding", r"assert 0\.3 == 0\.3000000001"),
    ("pytest", "tests/test_cart.py::test_config_bad_json", r"JSONDecodeError: Expecting"),
    ("pytest", "what went wrong in test_none_subscript", r"TypeError: 'NoneType'"),
    ("pytest", "where does the discount failure happen", r"src/shop/cart.py:14|KeyError: 'FREE'"),
    ("pytest", "traceback for config port", r"KeyError: 'port'|src/shop/config.py:5"),
    ("pip_verbose", "pytest version installed", r"Requirement already satisfied: pytest in"),
    ("pip_verbose", "which requests version", r"Requirement already satisfied: requests"),
    ("pip_verbose", "pip version used", r"Using pip 23"),
    ("pip_fail", "why did pip install fail", r"No matching distribution|Could not find a version"),
    ("pip_fail", "package not found on index",
     r"No matching distribution found|Could not find a version"),
    ("pip_inspect_json", "pluggy summary", r'"summary": "plugin and hook'),
    ("pip_inspect_json", "tiktoken version in the report", (r'"name": "tiktoken"', r'"version": ')),
    ("pip_inspect_json", "python version of the environment",
     r'"python_version"|"version": "3\.11'),
    ("gcc", "rate not declared", r"error: .rate. undeclared"),
    ("gcc", "owner field does not exist", r"has no member named .owner."),
    ("gcc", "strcpy missing argument", r"too few arguments to function .strcpy."),
    ("gcc", "int to pointer warning", r"makes pointer from integer without a cast"),
    ("gcc", "function without return value", r"control reaches end of non-void function"),
    ("gcc", "first compile error", r"error: .rate. undeclared"),
    ("gcc", "why did the build fail", r"error: "),
    ("rustc", "value used after it was moved", r"error\[E0382\]"),
    ("rustc", "variable never used", r"unused variable"),
    ("rustc", "how to fix the move error", r"consider cloning|consider changing this parameter"),
    ("rustc", "why did compilation abort", r"error\[E0382\]|aborting due to"),
    ("javac", "undefinedCounter not found",
     r"cannot find symbol|symbol:\s+variable undefinedCounter"),
    ("javac", "type mismatch String int", r"incompatible types"),
    ("javac", "wrong argument count for restock",
     r"cannot be applied to given types|actual and formal argument lists differ"),
    ("javac", "how many errors", r"^3 errors"),
    ("service50", "OOM", r"killed by OOM killer"),
    ("service50", "certificate problem with billing", r"x509 certificate has expired"),
    ("service50", "no space left on the data volume", r"at 97% capacity"),
    ("service50", "nightly report job cancelled", r"exceeded deadline of 600s"),
    ("service50", "admin account locked", r"login rejected for user admin"),
    ("service50", "tls handshake failure", r"handshake with billing.internal aborted"),
    ("service50", "worker crashed", r"killed by OOM killer"),
]


def main() -> int:
    logs = WORK / "logs"
    if not (logs / "pytest.log").exists():
        raise SystemExit(f"no logs in {logs}: run bench_outputs.py --set dev first")
    db_path = WORK / "paraphrases.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    for name in sorted({q[0] for q in GOLDEN + PARAPHRASES}):
        run_ctxkit(db_path, "store", str(logs / f"{name}.log"), "--label", name)
    env = ctxkit.make_env(db=str(db_path), project="bench", cwd=WORK)
    db = ctxkit.open_db(env)
    handles = {r["label"]: r["handle"]
               for r in db.conn.execute("SELECT label, handle FROM outputs")}
    for name, questions in (("dev", GOLDEN), ("paraphrases", PARAPHRASES)):
        at1 = at5 = 0
        for log, question, regex in questions:
            lines = (logs / f"{log}.log").read_text("utf-8", "backslashreplace").split("\n")
            answers = answer_lines(lines, regex)
            hits = ctxkit.search_outputs(db, env, question, handle=handles[log], limit=5)["hits"]
            got = [any(n in answers for n in range(h["line_start"], h["line_end"] + 1))
                   for h in hits]
            rank = got.index(True) + 1 if True in got else None
            at1, at5 = at1 + (rank == 1), at5 + (rank is not None)
            if rank != 1:
                top = hits[0]["text"].split("\n")[hits[0]["line"] - hits[0]["line_start"]] \
                    if hits else None
                print(f"  rank {rank}: [{log}] {question!r}; top: {top and top[:100]!r}")
        print(f"{name:12} n={len(questions)}  @1 {at1 / len(questions):.3f}  "
              f"@5 {at5 / len(questions):.3f}")
    db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
