#!/usr/bin/env bash
# Judges the current model against saved kernel runs, without booting: for every
# SCENARIO-KERNEL-POLICY.json of a suite directory (oracle/run-suite.sh's output), runs
# `pagelab oracle --from` (the kernel's side reused, the model's side re-run) into OUTDIR,
# then writes OUTDIR/fidelity.md with oracle/report.py.
#
#   oracle/rejudge.sh [SUITE_DIR [OUTDIR]] [-- MODEL ARGS]
#                                  default oracle/suite-6 -> target/rejudge
#
# MODEL ARGS go to every `pagelab oracle` call, e.g. `-- --set machine.cpus=1` re-judges the
# saved kernel runs against a model variant.
#
# env PAGELAB: the pagelab binary (default target/release/pagelab). About 1 min on 2 cores.
# env LAYOUTS: a suite directory whose runs recorded /proc/pagetypeinfo (oracle/suite-9 or
# later): each run is judged with --pageblocks and the layout of LAYOUTS' run of the same
# scenario, kernel and policy (--pageblocks-from), for suites that recorded none.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
EXTRA="$*"
SUITE=${args[0]:-oracle/suite-6}
OUT=${args[1]:-target/rejudge}
PAGELAB=${PAGELAB:-target/release/pagelab}
[ -x "$PAGELAB" ] || cargo build --release -p pagelab-cli
mkdir -p "$OUT"
judge() {
  local f=$1 base s k p
  base=$(basename "$f" .json)
  p=${base##*-}
  s=${base%-*}
  k=${s##*-}
  s=${s%-*}
  local layout=()
  if [ -n "${LAYOUTS:-}" ] && [ -f "$LAYOUTS/$base.json" ]; then
    layout=(--pageblocks --pageblocks-from "$LAYOUTS/$base.json")
  fi
  if ! "$PAGELAB" oracle "oracle/scenarios/$s.toml" --kernel "$k" --policy "$p" --from "$f" \
      --json "$OUT/$base.json" "${layout[@]}" $EXTRA -q >"$OUT/$base.log" 2>&1; then
    echo "FAILED $base: $(tail -3 "$OUT/$base.log" | tr '\n' ' ')" >&2
    return 1
  fi
}
export -f judge
export OUT PAGELAB EXTRA LAYOUTS
ls "$SUITE"/*-*-*.json | xargs -P 2 -I{} bash -c 'judge {}'
python3 oracle/report.py "$OUT" >/dev/null
echo "$OUT/fidelity.md"
