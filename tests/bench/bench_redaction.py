#!/usr/bin/env python3
"""Redaction: corpus rates (tuned beside held-out) and what redaction costs `store`.

    python tests/bench/bench_redaction.py            # rates, then ~20 MB per store, 3 rounds
    python tests/bench/bench_redaction.py --mb 100   # bigger logs
    git show main:ctxkit.py > /tmp/before.py
    python tests/bench/bench_redaction.py --against /tmp/before.py   # before and after, one run

Rates: for tests/fixtures/redaction's tuned and two held-out corpora, the false
negatives (a secret left in the line), the inexact cases (the secret gone but
something else changed too) and the false positives (a clean line changed),
with the failing lines.

Cost: `ctxkit store` (a real subprocess, a real database) of two logs of the
same size, measured in the same run: a baseline log whose lines hold no
redaction keyword (the regexes never run), and a keyword-heavy log (every
line names a token, a key or a password, as config dumps and auth logs do;
one line in 50 holds a secret). The ratio is the keyword-heavy time over the
baseline time, the median of the rounds. Everything runs in a temporary
folder. The machine may be shared: read the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

import ctxkit  # noqa: E402
from redactkit import must_not_redact, must_redact, rates  # noqa: E402

PLAIN = ["2024-03-01 12:00:{s:02d} INFO worker-{w} processed batch {n} in {ms} ms",
         "collected {n} items from queue orders-{w}", "GET /api/v1/orders/{n} 200 {ms}ms"]
KEYWORD = ["2024-03-01 12:00:{s:02d} DEBUG token refresh for user {n} took {ms} ms",
           "config key cache.ttl = {ms}; password policy min_length = 12",
           "api_key rotation scheduled for worker-{w}; secret store reachable",
           "validate_token(user={n}) -> ok; Authorization header present"]


def load(path: Path):
    """Another ctxkit.py (an older version) as a module of its own."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"ctxkit_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def report_rates(module) -> None:
    print(f"{module.__file__}:")
    redact = lambda text: module.redact(text)[0]  # noqa: E731
    for name, prefix in (("tuned", ""), ("held-out", "held_out_"), ("held-out 2", "held_out_2_")):
        result = rates(redact, must_redact(f"{prefix}must_redact.txt"),
                       must_not_redact(f"{prefix}must_not_redact.txt"))
        print(f"{name:>10}: {result['secrets']} secrets, {result['clean']} clean lines; "
              f"false negatives {result['false_negatives']} "
              f"({result['false_negatives'] / result['secrets']:.1%}), inexact "
              f"{result['over_redacted']}, false positives {result['false_positives']} "
              f"({result['false_positives'] / result['clean']:.1%})")
        for text, out in result["missed"]:
            print(f"           missed: {text[:100]!r} -> {out[:100]!r}")
        for _, out, expected in result["altered"]:
            print(f"           inexact: {out[:100]!r} != {expected[:100]!r}")
        for text, out in result["changed"]:
            print(f"           changed: {text[:100]!r} -> {out[:100]!r}")


def make_log(path: Path, templates: list[str], megabytes: int, secrets: bool) -> None:
    rng = random.Random(7)
    target, size = megabytes << 20, 0
    with path.open("w") as handle:
        while size < target:
            line = rng.choice(templates).format(s=rng.randrange(60), w=rng.randrange(9),
                                                n=rng.randrange(10**6), ms=rng.randrange(900))
            if secrets and rng.randrange(50) == 0:
                line += f" GITHUB_TOKEN=ghp_{rng.randrange(10**30):036d}"
            handle.write(line + "\n")
            size += len(line) + 1


def time_store(script: str, log: Path, work: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    env["CTXKIT_DB"] = str(work / f"bench-{time.monotonic_ns()}.db")
    start = time.perf_counter()
    subprocess.run([sys.executable, script, "store", str(log), "-q"], cwd=work,
                   env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=20, help="size of each log (default 20)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, metavar="CTXKIT_PY",
                        help="another ctxkit.py (say, main's) measured in the same run")
    args = parser.parse_args()
    modules = [ctxkit] + ([load(args.against.resolve())] if args.against else [])
    for module in modules:
        report_rates(module)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        plain, heavy = work / "plain.log", work / "keywords.log"
        make_log(plain, PLAIN, args.mb, secrets=False)
        make_log(heavy, KEYWORD, args.mb, secrets=True)
        times: dict[str, tuple[list[float], list[float]]] = {m.__file__: ([], []) for m in modules}
        for _ in range(args.rounds):  # the versions take turns, so load hits both alike
            for script, (base, cost) in times.items():
                base.append(time_store(script, plain, work))
                cost.append(time_store(script, heavy, work))
        for script, (base, cost) in times.items():
            b, c = statistics.median(base), statistics.median(cost)
            print(f"{script}: store of {args.mb} MB: baseline (no keyword) {b:.2f}s, "
                  f"keyword-heavy with secrets {c:.2f}s; ratio {c / b:.2f}x "
                  f"(median of {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
