#!/usr/bin/env bash
# Holds two pagelab binaries to identical reports: every bundled scenario (examples and their
# application, operator, policy and own-trace directories, the seeds' experiments, the
# oracle's scenarios; not examples/cache_ext, whose runs take seconds each) under both
# policies and the three pinned kernels (6.1, 6.12, 7.3),
# and trace replays of a Zipf trace through every simulator at a 1% and a 10% cache, as
# oracleGeneral and dense input. The timing fields (wall_s, accesses_per_s, convert_s) are
# left out; anything else that differs fails the run and names the command.
#
# A speed change must leave the counters alone: build the old binary, keep a copy, build the
# new one, and run
#
#   scripts/same-counters.sh OLD_BINARY NEW_BINARY
#
# A scenario the old binary refuses (a feature new to the new binary) is run by the new one
# and skipped, with a line that says so.
#
# A change that adds report fields (a new counter) can hold the rest identical by naming
# them: SAME_COUNTERS_NEW_KEYS=pgskip_dma,pgskip_dma32 drops those keys from both reports.
#
# A fidelity change that is meant to move some scenarios names them, and the rest are held
# identical: SAME_COUNTERS_EXPECT_DIFFER="examples/seeds/004/fio-randread-cpus.toml" runs
# those too and says whether each differed, without failing.
#
# About two to three minutes of CPU on 2 cores (214 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
[ $# -eq 2 ] || { echo "usage: scripts/same-counters.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
a=$1 b=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A Zipf(0.8) trace over 100k pages, 1M accesses, written with the benchmark's generator.
python3 - "$work/z.og" <<'EOF'
import pathlib, sys
sys.path.insert(0, str(pathlib.Path("bench").resolve()))
import traces
traces.write_zipf(sys.argv[1], 1_000_000, 100_000, 0.8, seed=7)
EOF
"$a" trace-convert "$work/z.og" "$work/z.dense" >/dev/null

strip_timing() {
  python3 -c '
import json, sys
import os
TIMING = {"wall_s", "accesses_per_s", "convert_s"} | {k for k in os.environ.get("SAME_COUNTERS_NEW_KEYS", "").split(",") if k}
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in TIMING}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"
}

runs=0
skipped=0
expected=0
same() {
  if ! "$a" "$@" -q --json "$work/a.json" >/dev/null 2>"$work/a.err"; then
    # A scenario the old binary refuses but the new one runs uses a new feature: nothing to
    # compare. The new binary must still run it.
    "$b" "$@" -q --json "$work/b.json" >/dev/null
    echo "[same-counters] skipped (the old binary refuses it: $(head -c 160 "$work/a.err")): pagelab $*" >&2
    skipped=$((skipped + 1))
    return
  fi
  "$b" "$@" -q --json "$work/b.json" >/dev/null
  if [ "$(strip_timing "$work/a.json")" != "$(strip_timing "$work/b.json")" ]; then
    if [[ " ${SAME_COUNTERS_EXPECT_DIFFER:-} " == *" $2 "* ]]; then
      echo "[same-counters] differs, as expected: pagelab $*" >&2
      expected=$((expected + 1))
      return
    fi
    echo "[same-counters] reports differ: pagelab $*" >&2
    exit 1
  fi
  runs=$((runs + 1))
}

for f in examples/*.toml examples/{apps,operators,policies,byo}/*.toml examples/seeds/0*/*.toml oracle/scenarios/*.toml; do
  # The seed-scale scenarios (32G, 900 modeled seconds, ~15 s and 450 MB a run) are covered
  # by their scaled-down versions here.
  case $f in *-full.toml) continue ;; esac
  for policy in classic mglru; do
    for kernel in 6.1 6.12 7.3; do
      same run "$f" --set machine.policy=$policy --set machine.kernel=$kernel
    done
  done
done
for fmt in oracleGeneral dense; do
  input="$work/z.og"
  [ $fmt = dense ] && input="$work/z.dense"
  for policy in classic mglru; do
    for kernel in 5.7 6.1 6.12; do
      [ $kernel = 5.7 ] && [ $policy = mglru ] && continue
      for memory in 4000k 40000k; do
        same run --trace "$input" --trace-format $fmt --policy $policy --kernel $kernel --memory $memory
      done
    done
  done
  for policy in lru fifo clock opt sieve s3fifo arc; do
    same run --trace "$input" --trace-format $fmt --policy $policy --memory 4000k,40000k
  done
done
note=""
[ "$skipped" -gt 0 ] && note=" ($skipped skipped: new to the new binary)"
[ "$expected" -gt 0 ] && note="$note ($expected differed as SAME_COUNTERS_EXPECT_DIFFER expects)"
echo "[same-counters] identical reports on $runs runs$note" >&2
