#!/bin/sh
# Run a benchmark on a copy of the committed worktree, so that editing while it runs
# cannot change what it measures:  sh tests/bench/snapshot_run.sh bench_outputs.py [ARGS]
set -eu
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse --short HEAD)
copy=$(mktemp -d "${TMPDIR:-/tmp}/ctxkit-bench-$commit-XXXXXX")
git -C "$root" archive HEAD | tar -x -C "$copy"
mkdir -p "$root/tests/bench/.work"
ln -s "$root/tests/bench/.work" "$copy/tests/bench/.work"   # logs, npm tools, results
script=$1
shift
cd "$copy/tests/bench"
BENCH_COMMIT=$commit python "$script" "$@"
rm -rf "$copy"
