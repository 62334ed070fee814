#!/usr/bin/env python3
"""`ctxkit suspects` on real bug fixes: recall@1/3/5, tokens to the fix, grep beside it.

The cases come from suspects_corpus.py (consecutive PyPI releases: a test N+1
added or changed that fails on N's code and passes on N+1's; the truth is the
functions of N that N+1 changed). For each case this script

1. lays out the repository as a developer at release N would have it: a git
   repository whose last two commits are release N-1 and release N (so "the
   recent commits" are what N changed), with N+1's test files dropped into the
   working tree, indexed with `ctxkit index`;
2. runs the test id through `ctxkit run` with N's venv (N's source first on
   PYTHONPATH), then `ctxkit suspects --json --budget B`;
3. scores: fix recall@k (a true function among the first k suspects); the
   exact cl100k tokens of the `--budget` rendering up to and including the
   first true function shown; the baseline of reading every project file the
   traceback names, whole (its recall: a true function lies in one of them);
   and grep: the failure message's identifiers grepped (whole words) over the
   package source, the enclosing functions ranked by how many identifiers hit
   them.

    python tests/bench/bench_suspects.py split      # once, before any tuning
    python tests/bench/bench_suspects.py measure [--half tuning|held_out|all]

The split is a fixed hash of the release pair, so every case of one fix falls
in the same half. suspects_held_out.json is written once and never edited.
The machine is shared while this runs; timings are not measured here.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import suspects_corpus as corpus  # noqa: E402

CTXKIT = HERE.parent.parent / "ctxkit.py"
CASES_FILE = corpus.CASES_FILE
HELD_OUT_FILE = HERE / "suspects_held_out.json"
TUNING_FILE = HERE / "suspects_tuning.json"
RESULTS_FILE = corpus.WORK / "suspects_results.json"
SUSPECTS_ARGS: list[str] = []   # --suspects-arg: more options for every suspects run
BUDGET = 200000     # render every listed suspect: tokens are counted up to the first true one
LIMIT = 10
KEEP = 0        # --keep: suspects listed and kept with their signals in the results
KS = (1, 3, 5)


_LOCKS: dict[tuple, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def once_at_a_time(build):
    """``build(pkg, version)`` run by one worker at a time per release: two release
    pairs share a release (N+1 of one is N of the next), and two workers unpacking
    its sdist or making its venv at once would trip over each other."""
    def locked(pkg: corpus.Package, version: str):
        with _LOCKS_LOCK:
            lock = _LOCKS.setdefault((build.__name__, pkg.name, version), threading.Lock())
        with lock:
            return build(pkg, version)
    return locked


corpus.sdist_tree = once_at_a_time(corpus.sdist_tree)
corpus.venv_for = once_at_a_time(corpus.venv_for)


def pair_key(case: dict) -> str:
    return f"{case['package']} {case['old']} {case['new']}"


def half_of(case: dict) -> str:
    digest = hashlib.sha256(pair_key(case).encode()).digest()
    return "held_out" if digest[0] % 2 else "tuning"


def cmd_split() -> int:
    cases = json.loads(CASES_FILE.read_text())
    if HELD_OUT_FILE.exists():
        raise SystemExit(f"{HELD_OUT_FILE.name} exists and is never rewritten")
    halves: dict[str, list[str]] = {"tuning": [], "held_out": []}
    for case in cases:
        halves[half_of(case)].append(case["id"])
    note = ("cases of the ctxkit suspects benchmark held out from tuning: a fixed hash "
            "(sha256 of 'package old new', first byte odd) of the release pair; written "
            "once, before any weight was tuned, never edited")
    HELD_OUT_FILE.write_text(json.dumps({"note": note, "cases": halves["held_out"]},
                                        indent=1) + "\n")
    TUNING_FILE.write_text(json.dumps({"note": "the other half, used to tune the weights",
                                       "cases": halves["tuning"]}, indent=1) + "\n")
    print(f"tuning {len(halves['tuning'])} cases, held out {len(halves['held_out'])}")
    return 0


# -- the repository at release N -------------------------------------------------


def git(root: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def replace_tree(root: Path, source: Path) -> None:
    for child in root.iterdir():
        if child.name == ".git":
            continue
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    for child in source.iterdir():
        if child.name == ".complete":
            continue
        target = root / child.name
        if child.is_dir():
            shutil.copytree(child, target, symlinks=True)
        else:
            shutil.copy2(child, target)


def repository(pkg: corpus.Package, case: dict) -> Path:
    chain = corpus.release_chain(pkg)
    old, new = case["old"], case["new"]
    root = corpus.WORK / "measure" / f"{pkg.name}-{old}-{new}"
    if (root / ".ready").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    index = chain.index(old)
    previous = corpus.sdist_tree(pkg, chain[index - 1]) if index > 0 else None
    if previous is not None:
        replace_tree(root, previous)
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"release {chain[index - 1]}")
    replace_tree(root, corpus.sdist_tree(pkg, old))
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"release {old}", "--allow-empty")
    new_tree = corpus.sdist_tree(pkg, new)
    for rel, path in corpus.test_files(new_tree).items():
        if rel in case["test_files"] or rel.endswith("conftest.py"):
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    ctxkit(root, "index", "-q")
    (root / ".git" / "info" / "exclude").write_text(".ready\n.runs.json\n.ctxkit/\n")
    (root / ".ready").write_text("")
    return root


def ctxkit(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CTXKIT_")}
    full.update(env or {})
    return subprocess.run([sys.executable, str(CTXKIT), *args], cwd=root, env=full,
                          capture_output=True, text=True, timeout=1800, check=False)


# -- scoring ---------------------------------------------------------------------


def is_true(path: str, name: str, truth: list[dict]) -> bool:
    return any(path == t["file"] and (name == t["name"] or t["name"].startswith(name + "."))
               for t in truth)


def first_true_rank(ranked: list[tuple[str, str]], truth: list[dict]) -> int | None:
    for rank, (path, name) in enumerate(ranked, 1):
        if is_true(path, name, truth):
            return rank
    return None


def count_tokens(text: str) -> int:
    """The exact cl100k count ctxkit itself uses (its count_tokens)."""
    global _CTXKIT
    if _CTXKIT is None:
        sys.path.insert(0, str(CTXKIT.parent))
        import ctxkit as _module
        _CTXKIT = _module
    return _CTXKIT.count_tokens(text)


_CTXKIT = None


def tokens_to_fix(result: dict, truth: list[dict]) -> int | None:
    """Tokens of the --budget rendering read in order until the first true function."""
    by_id = {s["id"]: s for s in result["suspects"]}
    header = result["context"].split("\n\n", 1)[0] + "\n\n"
    used = count_tokens(header)
    for item in result["items"]:
        used += item["tokens"]
        suspect = by_id.get(item["id"])
        if suspect and is_true(suspect["path"], suspect["name"], truth):
            return used
    return None


def baseline(root: Path, result: dict, truth: list[dict]) -> tuple[int, bool]:
    """Read every project file the traceback names, whole: (tokens, holds a true one)."""
    files = sorted({f["path"] for f in result["frames"] if not f["library"]})
    tokens = sum(count_tokens((root / f).read_text(encoding="utf-8", errors="replace"))
                 for f in files if (root / f).is_file())
    return tokens, any(t["file"] in files for t in truth)


_MESSAGE = re.compile(r"^E\s+(.+)$|^(\w+(?:\.\w+)*(?:Error|Exception|Warning)\b.*)$")
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def grep_ranking(root: Path, pkg: corpus.Package, output: str) -> list[tuple[str, str]]:
    """Functions of the package source ranked by how many message identifiers hit them."""
    import builtins
    import keyword

    common = set(keyword.kwlist) | set(dir(builtins))
    words = []
    for line in output.splitlines():
        match = _MESSAGE.match(line)
        if match:
            words += [w for w in _WORDS.findall(match.group(1) or match.group(2))
                      if w not in common and w not in words]
    hits: dict[tuple[str, str], set[str]] = {}
    order: dict[tuple[str, str], int] = {}
    for rel, path in sorted(corpus.package_files(root, pkg).items()):
        text = path.read_text(encoding="utf-8", errors="replace")
        module = corpus.parse(path)
        if module is None:
            continue
        spans = [(first, node.end_lineno, name)
                 for name, (node, first) in corpus.functions(module).items()]
        for number, line in enumerate(text.splitlines(), 1):
            found = [w for w in words if re.search(rf"\b{re.escape(w)}\b", line)]
            if not found:
                continue
            inside = [s for s in spans if s[0] <= number <= s[1]]
            if not inside:
                continue
            first, _, name = max(inside, key=lambda s: s[0])   # innermost
            key = (rel, name)
            hits.setdefault(key, set()).update(found)
            order.setdefault(key, len(order))
    return sorted(hits, key=lambda k: (-len(hits[k]), order[k]))


def failing_run(pkg: corpus.Package, case: dict, root: Path, reuse: bool) -> tuple[int, str,
                                                                                   str | None]:
    """(exit, stderr, handle) of the case's test run through `ctxkit run`; with ``reuse``
    the handle stored by an earlier measurement of the same repository, when there is one."""
    known = root / ".runs.json"
    runs = json.loads(known.read_text()) if known.exists() else {}
    if reuse and case["test_id"] in runs:
        return 1, "", runs[case["test_id"]]
    venv = corpus.venv_for(pkg, case["old"])
    src = corpus.source_root(root, pkg)
    run = ctxkit(root, "run", "--json", "--", str(venv / "bin" / "python"), "-m", "pytest",
                 *corpus.pytest_isolation(root), "-q", case["test_id"],
                 env={"PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"})
    summary = json.loads(run.stdout.splitlines()[-1]) if run.stdout.strip() else {}
    handle = summary.get("handle")
    if handle and run.returncode == 1:
        runs[case["test_id"]] = handle
        known.write_text(json.dumps(runs, indent=1) + "\n")
    return run.returncode, run.stderr, handle


def measure_case(pkg: corpus.Package, case: dict, reuse: bool = False) -> dict:
    root = repository(pkg, case)
    code, stderr, handle = failing_run(pkg, case, root, reuse)
    out = {"id": case["id"], "half": half_of(case), "exit": code,
           "truth": len(case["truth"]), "root": str(root), "handle": handle}
    if not handle or code != 1:
        out["error"] = f"ctxkit run exited {code}: {stderr[-300:]}"
        return out
    started = time.perf_counter()
    # suspects runs in the shell the test ran in (--rerun runs the test again there)
    done = ctxkit(root, "suspects", handle, "--json", "--limit", str(max(LIMIT, KEEP)),
                  "--budget", str(BUDGET), *SUSPECTS_ARGS,
                  env={"PYTHONPATH": str(corpus.source_root(root, pkg)),
                       "PYTHONDONTWRITEBYTECODE": "1"})
    out["seconds"] = round(time.perf_counter() - started, 2)
    if done.returncode != 0:
        out["error"] = f"suspects exited {done.returncode}: {done.stderr[-300:]}"
        return out
    result = json.loads(done.stdout)
    ranked = [(s["path"], s["name"]) for s in result["suspects"]]
    out["rank"] = first_true_rank(ranked, case["truth"])
    out["tokens"] = tokens_to_fix(result, case["truth"]) if "context" in result else None
    out["baseline_tokens"], out["baseline_hit"] = baseline(root, result, case["truth"])
    text = ctxkit(root, "expand", handle, "--json").stdout
    lines = [item.get("text", "") for item in json.loads(text).get("lines", [])] if text else []
    output = "\n".join(lines) or case["output"]
    out["grep_rank"] = first_true_rank(grep_ranking(root, pkg, output), case["truth"])
    out["top"] = [s["id"] for s in result["suspects"][:5]]
    out["rerun"] = result.get("rerun")
    if KEEP > LIMIT:   # --keep: every listed suspect's signals, to read the ranking again
        out["ranked"] = [{"path": s["path"], "name": s["name"], "test_file": s["test_file"],
                          "signals": {k: v["value"] for k, v in s["signals"].items()}}
                         for s in result["suspects"]]
    return out


def recall(results: list[dict], key: str, k: int) -> float:
    return sum(1 for r in results if r.get(key) and r[key] <= k) / max(len(results), 1)


def median(values: list[int]) -> float:
    values = sorted(values)
    if not values:
        return 0.0
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def report(results: list[dict], label: str) -> None:
    n = len(results)
    print(f"\n{label}: {n} cases from {len({r['id'].split(':')[0] for r in results})} "
          f"release pairs ({sum(1 for r in results if r.get('error'))} could not run)")
    for key, name in (("rank", "suspects"), ("grep_rank", "grep    ")):
        print(f"  {name} recall@1/3/5: " + " / ".join(f"{recall(results, key, k):.2f}"
                                                      for k in KS))
    reached = [r for r in results if r.get("tokens")]
    base_hit = [r for r in results if r.get("baseline_hit")]
    both = [r for r in reached if r.get("baseline_hit")]
    print(f"  fix shown by `suspects --budget` in {len(reached)}/{n} "
          f"({len(reached) / max(n, 1):.2f}); file-reading baseline holds it in "
          f"{len(base_hit)}/{n} ({len(base_hit) / max(n, 1):.2f})")
    if both:
        ours = median([r["tokens"] for r in both])
        theirs = median([r["baseline_tokens"] for r in both])
        ratio = sum(r["baseline_tokens"] for r in both) / max(sum(r["tokens"] for r in both), 1)
        print(f"  where both reach it ({len(both)}): median tokens {ours:.0f} vs baseline "
              f"{theirs:.0f} = {theirs / max(ours, 1):.1f}x fewer (total {ratio:.1f}x)")


def cmd_measure(half: str, only: list[str] | None, jobs: int, reuse: bool) -> int:
    cases = json.loads(CASES_FILE.read_text())
    if half != "all":
        chosen = set(json.loads((HELD_OUT_FILE if half == "held_out" else TUNING_FILE)
                                .read_text())["cases"])
        cases = [c for c in cases if c["id"] in chosen]
    if only:
        cases = [c for c in cases if c["package"] in only]
    packages = {p.name: p for p in corpus.PACKAGES}
    pairs: dict[str, list[dict]] = {}
    for case in cases:   # one worker per release pair: its repository is built once
        pairs.setdefault(pair_key(case), []).append(case)

    def run_pair(group: list[dict]) -> list[dict]:
        done = []
        for case in group:
            try:
                result = measure_case(packages[case["package"]], case, reuse)
            except Exception as exc:   # one broken case must not stop the run
                result = {"id": case["id"], "half": half_of(case), "error": repr(exc)[:300]}
            print(f"{result['id']}: rank {result.get('rank')} grep {result.get('grep_rank')} "
                  f"tokens {result.get('tokens')} baseline {result.get('baseline_tokens')}"
                  f"{' ERROR ' + result['error'] if result.get('error') else ''}", flush=True)
            done.append(result)
        return done

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = [r for group in pool.map(run_pair, pairs.values()) for r in group]
    RESULTS_FILE.write_text(json.dumps(results, indent=1) + "\n")
    for name in ("tuning", "held_out"):
        part = [r for r in results if r["half"] == name]
        if part:
            report(part, name)
    return 0


def main(argv: list[str] | None = None) -> int:
    global CTXKIT, RESULTS_FILE, KEEP
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("split", help="write the held-out and tuning halves (once)")
    measure = sub.add_parser("measure", help="run every case and report")
    measure.add_argument("--half", choices=("tuning", "held_out", "all"), default="all")
    measure.add_argument("--package", action="append")
    measure.add_argument("--jobs", type=int, default=2)
    measure.add_argument("--ctxkit", type=Path, default=CTXKIT,
                         help="the ctxkit.py to measure (default: this checkout's), e.g. a "
                              "copy of an earlier version as the baseline of a change")
    measure.add_argument("--results", type=Path, default=RESULTS_FILE,
                         help=f"where the per-case results go (default {RESULTS_FILE})")
    measure.add_argument("--reuse-runs", action="store_true",
                         help="rank the failing output an earlier measure stored for each "
                              "case instead of running its test again (faster; the "
                              "repository and its index are reused either way)")
    measure.add_argument("--keep", type=int, default=0, metavar="N",
                         help="list N suspects and keep each one's signals in the results "
                              "(to study a ranking; recall and tokens still use the first 10)")
    measure.add_argument("--suspects-arg", action="append", default=[], metavar="ARG",
                         help="pass ARG to every `ctxkit suspects` run (repeat it), e.g. "
                              "--suspects-arg=--rerun to rank with a traced re-run")
    args = parser.parse_args(argv)
    if args.cmd == "split":
        return cmd_split()
    CTXKIT, RESULTS_FILE = args.ctxkit.resolve(), args.results
    SUSPECTS_ARGS[:] = args.suspects_arg
    KEEP = args.keep
    return cmd_measure(args.half, args.package, args.jobs, args.reuse_runs)


if __name__ == "__main__":
    sys.exit(main())
