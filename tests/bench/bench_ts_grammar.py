#!/usr/bin/env python3
"""Parse-failure rate of the TypeScript grammars ctxkit can pin, on real TypeScript.

Usage: python tests/bench/bench_ts_grammar.py DIR [DIR ...] [--wheel VERSION ...]

Every .ts/.mts/.cts/.tsx file under the DIRs (declaration files .d.ts left out,
and node_modules) is parsed with the grammar bundled in
tree-sitter-language-pack (what ctxkit uses) and with each requested version
of the separate tree-sitter-typescript wheel (installed into a temporary
folder with pip). A file fails when its tree has an error node; the script
prints, per grammar and per DIR, the files that fail and the share of source
bytes inside error nodes. The DIRs are checkouts of real projects (for example
`fetch`ed snapshots); nothing from them is stored.
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import subprocess
import sys
import tempfile

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


def pack_parsers() -> dict[str, object]:
    from tree_sitter_language_pack import get_parser
    return {"typescript": get_parser("typescript"), "tsx": get_parser("tsx")}


def wheel_parsers(version: str, folder: pathlib.Path) -> dict[str, object]:
    target = folder / version
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), f"tree-sitter-typescript=={version}"], check=True)
    sys.path.insert(0, str(target))
    try:
        module = importlib.import_module("tree_sitter_typescript")
        module = importlib.reload(module)
    finally:
        sys.path.pop(0)
    from tree_sitter import Language, Parser
    return {"typescript": Parser(Language(module.language_typescript())),
            "tsx": Parser(Language(module.language_tsx()))}


def measure(parsers: dict[str, object], files: list[tuple[pathlib.Path, str]]) -> tuple:
    failed, bad, total = [], 0, 0
    for path, dialect in files:
        data = path.read_bytes()
        tree = parsers[dialect].parse(data)
        total += len(data)
        if tree.root_node.has_error:
            failed.append(path)
            bad += error_bytes(tree.root_node)
    return failed, bad, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    parser.add_argument("--wheel", action="append", default=[], metavar="VERSION",
                        help="a tree-sitter-typescript version to compare (repeatable)")
    parser.add_argument("--show", type=int, default=3, help="failing files listed per grammar")
    args = parser.parse_args()
    corpora = {d: source_files(d) for d in args.dirs}
    with tempfile.TemporaryDirectory() as tmp:
        grammars = {"language-pack": pack_parsers()}
        for version in args.wheel:
            grammars[f"tree-sitter-typescript {version}"] = wheel_parsers(version,
                                                                        pathlib.Path(tmp))
        print(f"{'grammar':34} {'corpus':28} {'files':>6} {'failed':>7} {'rate':>7} "
              f"{'error bytes':>12}")
        for name, parsers in grammars.items():
            all_failed = all_files = 0
            for root, files in corpora.items():
                failed, bad, total = measure(parsers, files)
                all_failed += len(failed)
                all_files += len(files)
                print(f"{name:34} {root.name[:28]:28} {len(files):6} {len(failed):7} "
                      f"{len(failed) / max(len(files), 1):7.2%} {bad / max(total, 1):12.4%}")
                for path in failed[:args.show]:
                    print(f"    {path}")
            print(f"{name:34} {'ALL':28} {all_files:6} {all_failed:7} "
                  f"{all_failed / max(all_files, 1):7.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
