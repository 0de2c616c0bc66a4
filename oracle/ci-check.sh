#!/usr/bin/env bash
# CI's real-kernel check: the small file Zipf of oracle/ci/small-zipf.toml in Debian's 6.1
# under qemu, once with the classic LRU and once with MGLRU; fails unless pagelab's
# workingset_refault_file and pgsteal (pgsteal_anon + pgsteal_file) are within the stated
# tolerance of the kernel's.
#
# Tolerance: ±10 % on both, but ±15 % on MGLRU's refaults (measured with the runner locked
# in memory: refaults -2.6 % classic, -7.4 … -9.0 % MGLRU over three boots; pgsteal -3.4 % and
# -3.1 … -3.7 %; the kernel's own run-to-run spread is about 2 %). MGLRU's refaults were
# -2.5 % with the runner unlocked: 6.1's MGLRU counts more of its misses as refaults once the
# runner's own pages are off its lists, a gap the README's Fidelity section describes
# (mixed-anon-file, 6.1 MGLRU). Override with REFAULT_TOL / MGLRU_REFAULT_TOL / PGSTEAL_TOL.
#
# The first run sets up the oracle (Debian packages, the 6.1 kernel package, the static
# guest runner, the data disk): about 2-3 minutes; then 30-60 s per policy.
set -euo pipefail
cd "$(dirname "$0")/.."
PAGELAB=${PAGELAB:-target/release/pagelab}
REFAULT_TOL=${REFAULT_TOL:-10}
MGLRU_REFAULT_TOL=${MGLRU_REFAULT_TOL:-15}
PGSTEAL_TOL=${PGSTEAL_TOL:-10}
OUT=${OUT:-target/oracle-ci}
mkdir -p "$OUT"
t0=$(date +%s)
fail=0
for policy in classic mglru; do
  tol=$REFAULT_TOL
  [ "$policy" = mglru ] && tol=$MGLRU_REFAULT_TOL
  "$PAGELAB" oracle oracle/ci/small-zipf.toml --kernel 6.1 --policy "$policy" \
    --check "workingset_refault_file=$tol" --check "pgsteal=$PGSTEAL_TOL" \
    --json "$OUT/small-zipf-6.1-$policy.json" || fail=1
done
echo "oracle CI check: $(( $(date +%s) - t0 )) s"
exit $fail
