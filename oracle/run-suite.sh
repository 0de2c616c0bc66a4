#!/usr/bin/env bash
# Runs the oracle suite: every scenario of oracle/scenarios under both kernels and both
# policies, in a real kernel (qemu) and in pagelab, then writes the fidelity table
# (fidelity.md) and a plot of the error per counter (fidelity.png).
#
#   oracle/run-suite.sh [-j JOBS] [-k "6.1 6.12"] [-p "classic mglru"] [-r RUNS]
#                       [-s "file-zipf anon-swap-disk ..."] [-o OUTDIR] [-- EXTRA ORACLE ARGS]
#
#   -j  guests booted at once (default 2; each takes one core)
#   -r  boots per point, the table shows the per-counter median (default 1)
#   -o  results directory (default oracle/results)
# env PAGELAB: the pagelab binary (default target/release/pagelab, built if missing).
# One guest run takes 25-60 s under qemu TCG; the whole suite (9 scenarios x 4) ~15-25 min
# with -j 2 on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=2 KERNELS="6.1 6.12" POLICIES="classic mglru" RUNS=1 OUT=oracle/results ONLY=
while getopts "j:k:p:r:s:o:h" o; do
  case $o in
    j) JOBS=$OPTARG;; k) KERNELS=$OPTARG;; p) POLICIES=$OPTARG;; r) RUNS=$OPTARG;;
    s) ONLY=$OPTARG;; o) OUT=$OPTARG;; *) sed -n '2,14p' "$0"; exit 2;;
  esac
done
shift $((OPTIND - 1))
EXTRA=("$@")
PAGELAB=${PAGELAB:-target/release/pagelab}
if [ ! -x "$PAGELAB" ]; then cargo build --release -p pagelab-cli; fi
mkdir -p "$OUT"
scenarios=()
for f in oracle/scenarios/*.toml; do
  n=$(basename "$f" .toml)
  if [ -z "$ONLY" ] || [[ " $ONLY " == *" $n "* ]]; then scenarios+=("$n"); fi
done
points=()
for s in "${scenarios[@]}"; do for k in $KERNELS; do for p in $POLICIES; do points+=("$s $k $p"); done; done; done
echo "oracle suite: ${#points[@]} points (${#scenarios[@]} scenarios x kernels {$KERNELS} x policies {$POLICIES}), $JOBS at a time -> $OUT"
t0=$(date +%s)
run_point() {
  read -r s k p <<<"$1"
  local base="$OUT/$s-$k-$p"
  local t=$(date +%s)
  if "$PAGELAB" oracle "oracle/scenarios/$s.toml" --kernel "$k" --policy "$p" --runs "$RUNS" --json "$base.json" "${EXTRA[@]}" > "$base.log" 2>&1; then
    echo "$(date +%T) ok     $s $k $p ($(( $(date +%s) - t )) s)"
  else
    echo "$(date +%T) FAILED $s $k $p ($(( $(date +%s) - t )) s): $(tail -3 "$base.log" | tr '\n' ' ')"
  fi
}
export -f run_point
export OUT PAGELAB RUNS
export EXTRA_STR="${EXTRA[*]:-}"
printf '%s\n' "${points[@]}" | xargs -P "$JOBS" -I{} bash -c 'EXTRA=($EXTRA_STR); run_point "{}"'
echo "suite: $(( $(date +%s) - t0 )) s"
python3 oracle/report.py "$OUT"
