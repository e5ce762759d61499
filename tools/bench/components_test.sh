#!/usr/bin/env bash
# The benchmark check catches a slowed component: ir:text_bench measured, its
# figures stored as a baseline, then (1) the same binary checked against it
# passes and (2) text_bench_slowed — the same benchmark linked against a text
# parser built 10x slower (KILN_TEST_SLOW_TEXT_PARSER) — checked under
# text_bench's name fails, naming the parser benchmark and not the printer's.
#
#   components_test.sh COMPONENTS.py
set -euo pipefail
script=$1
runfiles=$(cd "$(dirname "$0")/../.." && pwd)  # the workspace root in runfiles
tmp=${TEST_TMPDIR:-$(mktemp -d)}
base="$tmp/baseline.json"
# --fail 2.0 (3x): above the noise of a shared 2-core machine (up to ~2x
# between two short runs of the same binary, docs/benchmarks.md), well below
# the 10x of the slowed parser.
# Two benchmarks: the parser's (slowed) and the printer's (not), so that the
# test stays short in a fastbuild build.
common=(--bin-dir "$runfiles" --build test --short --repetitions 3 --baseline "$base"
        --work-dir "$tmp/work" --fail 2.0 --filter 'BM_Parse50k|BM_Print50k')

python3 "$script" "${common[@]}" --only ir:text_bench --update-baseline --out "$tmp/b.jsonl" \
  2> "$tmp/update.log" || { cat "$tmp/update.log"; exit 1; }
grep -q '"workload": "ir:text_bench/BM_Parse50k"' "$tmp/b.jsonl" ||
  { echo "FAIL: no BM_Parse50k figure"; cat "$tmp/b.jsonl"; exit 1; }

# (1) The same binary: within the threshold.
if ! python3 "$script" "${common[@]}" --only ir:text_bench --check --out "$tmp/same.jsonl" \
    2> "$tmp/same.log"; then
  echo "FAIL: the unchanged benchmark failed the check:"; cat "$tmp/same.log"; exit 1
fi

# (2) The slowed parser: the check fails and names the parse benchmarks.
if python3 "$script" "${common[@]}" --only ir:text_bench_slowed --as ir:text_bench_slowed=ir:text_bench \
    --check --out "$tmp/slow.jsonl" 2> "$tmp/slow.log"; then
  echo "FAIL: the slowed parser passed the check:"; cat "$tmp/slow.log"; exit 1
fi
for b in BM_Parse50k; do
  grep -q "^FAIL .*ir:text_bench/$b: .*x slower" "$tmp/slow.log" ||
    { echo "FAIL: $b not reported as slower:"; cat "$tmp/slow.log"; exit 1; }
done
if grep -q "^FAIL .*BM_Print" "$tmp/slow.log"; then
  echo "FAIL: the printer (not slowed) was reported:"; cat "$tmp/slow.log"; exit 1
fi
grep -q "FAILED: " "$tmp/slow.log" || { echo "FAIL: no FAILED summary"; cat "$tmp/slow.log"; exit 1; }
echo "components_test: OK"
sed -n '/^FAIL\|^SLOWER/p' "$tmp/slow.log"
