#!/usr/bin/env bash
# Prints the table "memcached on a machine of CPUs" of examples/seeds/README.md: seed 004's
# memcached (an anonymous set 1.13x memory, filled P:P then read R:R, swap on a ramdisk) at
# one thread for every two CPUs, as the seed's 36 threads on 36 cores / 72 threads, with
# 128M of memory, 145M of set and 108M of swap a thread; classic against MGLRU on 6.1.
#   examples/seeds/004/memcached-cpus-table.sh [PAGELAB]     (about a minute)
set -euo pipefail
cd "$(dirname "$0")/../../.."
PAGELAB=${1:-target/release/pagelab}
S=examples/seeds/004/memcached.toml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| CPUs | threads | classic ops/s | MGLRU ops/s | MGLRU gain | classic spinning | MGLRU spinning | classic direct scans | MGLRU direct scans |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in none 2 8 16 72; do
  if [ "$n" = none ]; then jobs=4; cpus=(); else jobs=$((n / 2)); cpus=(--set machine.cpus=$n); fi
  for p in classic mglru; do
    "$PAGELAB" run "$S" --set machine.policy="\"$p\"" "${cpus[@]}" --set workload.memcached.jobs=$jobs \
      --set machine.memory="\"$((128 * jobs))M\"" --set machine.swap.size="\"$((108 * jobs))M\"" \
      -q --json "$out/$n-$p.json" > /dev/null
  done
  python3 - "$out/$n-classic.json" "$out/$n-mglru.json" "$n" "$jobs" <<'PY'
import json, sys
c, m = (json.load(open(f)) for f in sys.argv[1:3])
def spin(r):
    busy = sum(t.get("cpu_s") or 0 for t in r["tasks"])
    return 100 * sum(t.get("lock_spin_s") or 0 for t in r["tasks"]) / busy if busy else 0
tc, tm = c["throughput_ops_s"], m["throughput_ops_s"]
n = "unset" if sys.argv[3] == "none" else sys.argv[3]
print(f"| {n} | {sys.argv[4]} | {tc:,.0f} | {tm:,.0f} | {100 * (tm / tc - 1):+.1f}% | {spin(c):.1f}% | {spin(m):.1f}% "
      f"| {c['vmstat']['pgscan_direct']:,} | {m['vmstat']['pgscan_direct']:,} |")
PY
done
