#!/usr/bin/env python3
"""Benchmark of `ctxkit context`: tokens at equal evidence, on code nobody here wrote.

Corpora (prepared under tests/bench/.work/, which git ignores):
  * the Python standard library of the running interpreter (without its
    tests, idlelib, tkinter, lib2to3, ensurepip, turtledemo, site-packages);
  * axios, a real JavaScript package, installed from npm.

For each corpus the script picks targets at random (fixed seed) among the
functions and methods that have at least one caller and one callee in the
index. The evidence of a target is the set of symbols a reviewer needs: the
target and its direct callers and callees (file-level callers are not
symbols and are left out). Baseline: the tokens of reading every file that
holds a piece of evidence. ctxkit: `ctxkit context TARGET --json` (review
purpose, default budget 2000) run as a cold process; its `stats.tokens`.
Recall: share of evidence symbols shown at level >= 1.

Also times `ctxkit context` (cold process) against `python -c "import
tiktoken"`, alternating the two in the same run.

    python tests/bench/bench_context.py [--per-corpus 10] [--budget 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / ".work"
NPM_PACKAGE = "axios@1.7.9"
STDLIB_SKIP = {"test", "tests", "idlelib", "tkinter", "lib2to3", "site-packages", "ensurepip",
               "turtledemo", "lib-dynload", "__pycache__"}

sys.path.insert(0, str(REPO))
import ctxkit  # noqa: E402


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # `python -m ctxkit` imports the module as the installed `ctxkit` command
    # does (bytecode cached), rather than compiling the script on every run.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env = {k: v for k, v in env.items() if not k.startswith("CTXKIT_")}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False, env=env)


def git_init(folder: Path) -> None:
    if not (folder / ".git").exists():
        run(["git", "init", "-q"], folder)


def prepare_stdlib() -> Path:
    folder = WORK / "stdlib"
    if not folder.exists():
        source = Path(sysconfig.get_paths()["stdlib"])
        folder.mkdir(parents=True)
        for entry in sorted(source.iterdir()):
            if entry.name in STDLIB_SKIP or entry.name.startswith("config-"):
                continue
            if entry.is_dir():
                shutil.copytree(entry, folder / entry.name, ignore=shutil.ignore_patterns(
                    "test", "tests", "__pycache__", "*.pyc"))
            elif entry.suffix == ".py":
                shutil.copy2(entry, folder / entry.name)
    return index(folder)


def prepare_npm() -> Path:
    folder = WORK / "axios"
    if not folder.exists():
        npm = WORK / "npm"
        npm.mkdir(parents=True, exist_ok=True)
        if not (npm / "node_modules" / "axios").exists():
            done = run(["npm", "install", "--no-audit", "--no-fund", NPM_PACKAGE], npm)
            if done.returncode:
                sys.exit(f"npm install {NPM_PACKAGE} failed: {done.stderr.strip()}")
        folder.mkdir(parents=True)
        shutil.copytree(npm / "node_modules" / "axios" / "lib", folder / "lib")
    return index(folder)


def index(folder: Path) -> Path:
    git_init(folder)
    done = run([sys.executable, "-m", "ctxkit", "index"], folder)
    if done.returncode:
        sys.exit(f"ctxkit index failed in {folder}: {done.stderr.strip()}")
    print(f"{folder.name}: {done.stdout.strip()}", file=sys.stderr)
    return folder


def open_corpus(folder: Path) -> tuple[ctxkit.Env, ctxkit.Database]:
    env = ctxkit.make_env(cwd=folder)
    return env, ctxkit.open_db(env)


def evidence_of(db, project: str, node) -> list:
    """The target and its direct callers and callees that are symbols in the index."""
    found = {node.id: node}
    for relation in ("calls", "calledBy"):
        for rel in ctxkit.graph_relations(db, project, node, relation):
            if rel.node is not None and rel.node.kind != "file":
                found[rel.node.id] = rel.node
    return list(found.values())


def pick_targets(db, project: str, count: int, seed: int) -> list:
    rows = db.query("SELECT uid FROM nodes WHERE project = ? AND kind IN ('function', 'method') "
                    "ORDER BY uid", (project,))
    eligible = []
    for row in rows:
        node = ctxkit.graph_find_nodes(db, project, row["uid"])[0]
        if ctxkit.is_test_path(node.path):
            continue
        callers = [r for r in ctxkit.graph_relations(db, project, node, "calledBy")
                   if r.node is not None and r.node.kind != "file"]
        callees = [r for r in ctxkit.graph_relations(db, project, node, "calls")
                   if r.node is not None]
        if callers and callees:
            eligible.append(node)
    return random.Random(seed).sample(eligible, min(count, len(eligible)))


def file_tokens(folder: Path, path: str, cache: dict) -> int:
    if path not in cache:
        text = (folder / path).read_bytes().decode("utf-8", "replace")
        cache[path] = ctxkit.count_tokens(text)
    return cache[path]


def measure(folder: Path, node, evidence: list, budget: int, purpose: str, cache: dict) -> dict:
    started = time.perf_counter()
    done = run([sys.executable, "-m", "ctxkit", "context", node.id, "--json",
                "--budget", str(budget), "--purpose", purpose], folder)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"ctxkit context {node.id} failed: {done.stderr.strip()}")
    data = json.loads(done.stdout)
    shown = {item["id"] for item in data["items"] if item["level"] >= 1}
    ids = {n.id for n in evidence}
    baseline = sum(file_tokens(folder, path, cache) for path in {n.path for n in evidence})
    tokens = data["stats"]["tokens"]
    assert tokens == ctxkit.count_tokens(data["context"]) <= budget
    return {"target": node.id, "evidence": len(ids), "files": len({n.path for n in evidence}),
            "baseline_tokens": baseline, "context_tokens": tokens,
            "reduction": 1 - tokens / baseline, "recall": len(ids & shown) / len(ids),
            "seconds": seconds}


def time_import_tiktoken() -> float:
    started = time.perf_counter()
    run([sys.executable, "-c", "import tiktoken"], REPO)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-corpus", type=int, default=10)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--purpose", default="review")
    parser.add_argument("--seed", type=int, default=4)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    rows, imports = [], []
    for corpus, folder in (("stdlib", prepare_stdlib()), ("axios", prepare_npm())):
        env, db = open_corpus(folder)
        cache: dict = {}
        for node in pick_targets(db, env.project, args.per_corpus, args.seed):
            row = measure(folder, node, evidence_of(db, env.project, node), args.budget,
                          args.purpose, cache)
            imports.append(time_import_tiktoken())
            rows.append({"corpus": corpus, **row})
        db.close()
    print(f"{'corpus':<7} {'target':<58} {'evid':>4} {'files':>5} {'baseline':>8} "
          f"{'context':>7} {'reduct':>7} {'recall':>6} {'sec':>5}")
    for r in rows:
        print(f"{r['corpus']:<7} {r['target'][:58]:<58} {r['evidence']:>4} {r['files']:>5} "
              f"{r['baseline_tokens']:>8} {r['context_tokens']:>7} {r['reduction']:>7.1%} "
              f"{r['recall']:>6.0%} {r['seconds']:>5.2f}")
    evidence = sum(r["evidence"] for r in rows)
    pooled = sum(r["recall"] * r["evidence"] for r in rows) / evidence
    summary = {
        "targets": len(rows), "purpose": args.purpose, "budget": args.budget,
        "median_reduction": statistics.median(r["reduction"] for r in rows),
        "median_recall": statistics.median(r["recall"] for r in rows),
        "pooled_recall": pooled,
        "min_recall": min(r["recall"] for r in rows),
        "median_baseline_tokens": statistics.median(r["baseline_tokens"] for r in rows),
        "median_context_tokens": statistics.median(r["context_tokens"] for r in rows),
        "median_context_seconds": statistics.median(r["seconds"] for r in rows),
        "median_import_tiktoken_seconds": statistics.median(imports),
    }
    summary["time_ratio"] = (summary["median_context_seconds"]
                             / summary["median_import_tiktoken_seconds"])
    print()
    print(f"median token reduction: {summary['median_reduction']:.1%} "
          f"(baseline {summary['median_baseline_tokens']:.0f} -> "
          f"{summary['median_context_tokens']:.0f} tokens)")
    print(f"evidence recall: median {summary['median_recall']:.1%}, pooled "
          f"{pooled:.1%}, lowest {summary['min_recall']:.1%}")
    print(f"cold `ctxkit context`: median {summary['median_context_seconds']:.3f}s; "
          f"`python -c 'import tiktoken'`: median "
          f"{summary['median_import_tiktoken_seconds']:.3f}s "
          f"(ratio {summary['time_ratio']:.1f}x)")
    (WORK / "bench_context.json").write_text(json.dumps({"summary": summary, "rows": rows},
                                                        indent=2))
    ok = summary["median_reduction"] >= 0.75 and summary["median_recall"] >= 0.95
    print("targets met" if ok else "targets NOT met: reduction >= 75% and recall >= 95%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
