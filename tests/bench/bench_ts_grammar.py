#!/usr/bin/env python3
"""Parse-failure rate of the TypeScript grammars ctxkit can pin, on real TypeScript.

Usage: python tests/bench/bench_ts_grammar.py DIR [DIR ...] [--wheel VERSION ...]

Every .ts/.mts/.cts/.tsx file under the DIRs (declaration files .d.ts left out,
and node_modules) is parsed with:
  - the grammar bundled in tree-sitter-language-pack (what ctxkit uses);
  - ctxkit itself (graph_parse: the pack's grammar, and for a .ts or .tsx file
    with errors a second parse with the semicolons TypeScript's ASI implies);
  - each requested version of the separate tree-sitter-typescript wheel,
    installed with pip into a temporary folder and measured in a child process
    (one grammar per process: an extension module cannot be reloaded).
A file fails when its tree has an error node; the script prints, per grammar
and per DIR, the files that fail and the share of source bytes inside error
nodes. The DIRs are checkouts of real projects (for example `fetch`ed
snapshots); nothing from them is stored.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
EXTENSIONS = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}


def source_files(root: pathlib.Path) -> list[tuple[pathlib.Path, str]]:
    found = []
    for path in sorted(root.rglob("*")):
        if "node_modules" in path.parts or not path.is_file() or path.name.endswith(".d.ts"):
            continue
        dialect = EXTENSIONS.get(path.suffix)
        if dialect:
            found.append((path, dialect))
    return found


def error_bytes(node) -> int:
    if node.type == "ERROR" or node.is_missing:
        return max(node.end_byte - node.start_byte, 1)
    return sum(error_bytes(c) for c in node.children) if node.has_error else 0


def pack_parse():
    from tree_sitter_language_pack import get_parser
    parsers = {"typescript": get_parser("typescript"), "tsx": get_parser("tsx")}
    return lambda dialect, data: parsers[dialect].parse(data)


def ctxkit_parse():
    sys.path.insert(0, str(ROOT))
    import ctxkit
    return lambda dialect, data: ctxkit.graph_parse(dialect, data)


def wheel_parse(folder: str):
    sys.path.insert(0, folder)
    module = importlib.import_module("tree_sitter_typescript")
    from tree_sitter import Language, Parser
    parsers = {"typescript": Parser(Language(module.language_typescript())),
               "tsx": Parser(Language(module.language_tsx()))}
    return lambda dialect, data: parsers[dialect].parse(data)


def measure(parse, corpora: dict[str, list]) -> dict[str, dict]:
    results = {}
    for name, files in corpora.items():
        failed, bad, total = [], 0, 0
        for path, dialect in files:
            data = path.read_bytes()
            root = parse(dialect, data).root_node
            total += len(data)
            if root.has_error:
                failed.append(str(path))
                bad += error_bytes(root)
        results[name] = {"files": len(files), "failed": failed, "bad": bad, "total": total}
    return results


def report(grammar: str, results: dict[str, dict], show: int) -> None:
    all_failed = all_files = 0
    for name, r in results.items():
        all_failed += len(r["failed"])
        all_files += r["files"]
        print(f"{grammar:34} {name[:28]:28} {r['files']:6} {len(r['failed']):7} "
              f"{len(r['failed']) / max(r['files'], 1):7.2%} {r['bad'] / max(r['total'], 1):12.4%}")
        for path in r["failed"][:show]:
            print(f"    {path}")
    print(f"{grammar:34} {'ALL':28} {all_files:6} {all_failed:7} "
          f"{all_failed / max(all_files, 1):7.2%}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    parser.add_argument("--wheel", action="append", default=[], metavar="VERSION",
                        help="a tree-sitter-typescript version to compare (repeatable)")
    parser.add_argument("--show", type=int, default=3, help="failing files listed per grammar")
    parser.add_argument("--child", metavar="FOLDER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    corpora = {d.name: source_files(d) for d in args.dirs}
    if args.child:  # one wheel, in its own process: print the results as JSON
        print(json.dumps(measure(wheel_parse(args.child), corpora)))
        return 0
    print(f"{'grammar':34} {'corpus':28} {'files':>6} {'failed':>7} {'rate':>7} "
          f"{'error bytes':>12}")
    report("language-pack", measure(pack_parse(), corpora), args.show)
    report("ctxkit (pack + ASI reparse)", measure(ctxkit_parse(), corpora), args.show)
    with tempfile.TemporaryDirectory() as tmp:
        for version in args.wheel:
            target = pathlib.Path(tmp) / version
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            "--target", str(target), f"tree-sitter-typescript=={version}"],
                           check=True)
            child = subprocess.run([sys.executable, __file__, *map(str, args.dirs),
                                    "--child", str(target)], capture_output=True, text=True,
                                   check=True)
            report(f"tree-sitter-typescript {version}", json.loads(child.stdout), args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
