#!/usr/bin/env bash
# Prints the table "fio on a machine of CPUs" of examples/seeds/README.md: seed 004's random
# reads at 2 jobs a CPU (36M of cgroup a job), classic against MGLRU on 6.1, for 1, 4, 16
# and 36 CPUs (1 CPU: the two jobs pinned to CPU 0 of 2, kswapd free to use CPU 1).
# "migrations" is the share of the CPU bursts (tasks' and kswapd's) that ran on another CPU
# than their actor's burst before, classic / MGLRU.
#   examples/seeds/004/cpus-table.sh [PAGELAB]     (about a minute)
set -euo pipefail
cd "$(dirname "$0")/../../.."
PAGELAB=${1:-target/release/pagelab}
S=examples/seeds/004/fio-randread-cpus.toml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| CPUs | jobs | classic ops/s | MGLRU ops/s | MGLRU gain | classic spinning | MGLRU spinning | migrations |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1 4 16 36; do
  jobs=$((2 * n)); machine=$n; pin=()
  if [ "$n" = 1 ]; then machine=2; pin=(--set 'workload.fio.cpus="0"'); fi
  for p in classic mglru; do
    "$PAGELAB" run "$S" --set machine.policy="\"$p\"" --set machine.cpus=$machine --set workload.fio.jobs=$jobs \
      --set cgroup./test.max="\"$((36 * jobs))M\"" --set machine.memory="\"$((288 * jobs))M\"" "${pin[@]}" \
      --json "$out/$n-$p.json" > /dev/null
  done
  python3 - "$out/$n-classic.json" "$out/$n-mglru.json" "$n" "$jobs" <<'PY'
import json, sys
c, m = (json.load(open(f)) for f in sys.argv[1:3])
def spin(r):
    busy = sum(t.get("cpu_s") or 0 for t in r["tasks"])
    return 100 * sum(t.get("lock_spin_s") or 0 for t in r["tasks"]) / busy if busy else 0
def migrations(r):
    s = r["sched"]
    return f"{100 * s['migrations'] / sum(c['runs'] for c in s['cpu']):.1f}%"
tc, tm = c["throughput_ops_s"], m["throughput_ops_s"]
print(f"| {sys.argv[3]} | {sys.argv[4]} | {tc:,.0f} | {tm:,.0f} | {100 * (tm / tc - 1):+.1f}% | {spin(c):.1f}% | {spin(m):.1f}% | {migrations(c)} / {migrations(m)} |")
PY
done
