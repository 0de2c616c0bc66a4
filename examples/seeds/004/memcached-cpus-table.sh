#!/usr/bin/env bash
# Prints the tables "memcached on a machine of CPUs" of examples/seeds/README.md: seed 004's
# memcached (an anonymous set 1.13x memory, filled P:P then read R:R, swap on a ramdisk) at
# one thread for every two CPUs, as the seed's 36 threads on 36 cores / 72 threads, with
# 128M of memory, 145M of set and 108M of swap a thread; classic against MGLRU on 6.1.
# The first table is the throughput (the run's ops over its slowest task's time, as before,
# and over its median task's time) and each policy's longest operation; the second the
# mechanisms, per operation: the lruvec lock's hold and wait, direct scans, swap-ins, the
# share of the tasks' CPU in reclaim and spinning, and the lock calendar's most spans (and
# its forgotten ones, which must be 0).
#   examples/seeds/004/memcached-cpus-table.sh [PAGELAB]     (about two minutes)
set -euo pipefail
cd "$(dirname "$0")/../../.."
PAGELAB=${1:-target/release/pagelab}
S=examples/seeds/004/memcached.toml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rows=()
for n in none 2 8 16 72; do
  if [ "$n" = none ]; then jobs=4; cpus=(); else jobs=$((n / 2)); cpus=(--set machine.cpus=$n); fi
  for p in classic mglru; do
    "$PAGELAB" run "$S" --set machine.policy="\"$p\"" "${cpus[@]}" --set workload.memcached.jobs=$jobs \
      --set machine.memory="\"$((128 * jobs))M\"" --set machine.swap.size="\"$((108 * jobs))M\"" \
      -q --json "$out/$n-$p.json" > /dev/null
  done
  rows+=("$n:$jobs")
done
python3 - "$out" "${rows[@]}" <<'PY'
import json, statistics, sys
out, rows = sys.argv[1], sys.argv[2:]
def load(n, p):
    return json.load(open(f"{out}/{n}-{p}.json"))
def share(r, key):
    busy = sum(t.get("cpu_s") or 0 for t in r["tasks"])
    return 100 * sum(t.get(key) or 0 for t in r["tasks"]) / busy if busy else 0
def median_rate(r):
    return r["ops"] / statistics.median(t["elapsed_s"] for t in r["tasks"])
def longest(r):
    return max(t["latency"]["max_ns"] for t in r["tasks"]) / 1e6
def lru(r):
    return (r.get("sched") or {}).get("locks", {}).get("lru_lock")
def per_op_ns(r, key):
    l = lru(r)
    return l[key] / r["ops"] if l else 0
print("| CPUs | threads | classic ops/s | MGLRU ops/s | MGLRU gain | gain, median task | classic longest op (ms) | MGLRU longest op (ms) |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    n, jobs = row.split(":")
    c, m = load(n, "classic"), load(n, "mglru")
    tc, tm = c["throughput_ops_s"], m["throughput_ops_s"]
    print(f"| {'unset' if n == 'none' else n} | {jobs} | {tc:,.0f} | {tm:,.0f} | {100 * (tm / tc - 1):+.1f}% "
          f"| {100 * (median_rate(m) / median_rate(c) - 1):+.1f}% | {longest(c):,.1f} | {longest(m):,.1f} |")
print()
print("| CPUs | lru_lock hold/op (ns) classic / MGLRU | lru_lock wait/op (ns) | direct scans | swap-ins | reclaim share of task CPU | spinning share | calendar spans at most (forgotten) |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    n, jobs = row.split(":")
    if n == "none":
        continue
    c, m = load(n, "classic"), load(n, "mglru")
    def pair(f):
        return f"{f(c)} / {f(m)}"
    cells = [
        pair(lambda r: "{:,.0f}".format(per_op_ns(r, "hold_ns"))),
        pair(lambda r: "{:,.0f}".format(per_op_ns(r, "wait_ns"))),
        pair(lambda r: "{:,}".format(r["vmstat"]["pgscan_direct"])),
        pair(lambda r: "{:,}".format(r["vmstat"]["pswpin"])),
        pair(lambda r: "{:.1f}%".format(share(r, "reclaim_s"))),
        pair(lambda r: "{:.1f}%".format(share(r, "lock_spin_s"))),
        pair(lambda r: "{:,} ({})".format(lru(r)["calendar_peak"], lru(r)["forgotten"])),
    ]
    print(f"| {n} | " + " | ".join(cells) + " |")
PY
