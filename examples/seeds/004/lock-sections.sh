#!/usr/bin/env bash
# Seed 004's fio gain, mechanism by mechanism (docs/journal/2026-11-30-fio-gain-mechanisms.md):
# runs a scenario under 6.1's classic LRU and MGLRU and prints, per read, each lock's sections
# by the kernel function that took them (the report's sched.locks.*.by_function), the hold
# they add up to and the [time.cpu] key each hold is made of; then each policy's CPU a read,
# by kernel function outside the locks (the report's profile), against the lock's holds.
#   examples/seeds/004/lock-sections.sh [SCENARIO] [PAGELAB] [--set KEY=VALUE ...]
# SCENARIO defaults to fio-randread-numa-full.toml (the two-node row, about a minute); the
# one-node 36-CPU row of cpus-table.sh is
#   examples/seeds/004/lock-sections.sh examples/seeds/004/fio-randread-cpus.toml target/release/pagelab \
#     --set machine.cpus=36 --set workload.fio.jobs=72 --set cgroup./test.max='"2592M"' --set machine.memory='"20736M"'
set -euo pipefail
cd "$(dirname "$0")/../../.."
S=${1:-examples/seeds/004/fio-randread-numa-full.toml}
PAGELAB=${2:-target/release/pagelab}
shift $(($# < 2 ? $# : 2))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in classic mglru; do
  "$PAGELAB" run "$S" --set machine.policy="\"$p\"" --profile "$@" --json "$out/$p.json" > /dev/null
done
python3 - "$out/classic.json" "$out/mglru.json" <<'PY'
import json, sys, tomllib
runs = {"classic": json.load(open(sys.argv[1])), "MGLRU": json.load(open(sys.argv[2]))}
# The [time.cpu] key a section holds its lock for, per folio, page or slot it moves
# (crates/pagelab/src/mm/mod.rs: lru_lock_on(), i_pages_lock(), zone_lock(), the swap locks).
KEY = {"lru_lock": "lru_move_ns", "i_pages": "xa_store_ns", "swap_cache": "xa_store_ns", "zone_lock": "zone_move_ns", "swap_lock": "swap_slot_ns"}
DEFAULT = {"lru_move_ns": 240, "xa_store_ns": 240, "zone_move_ns": 240, "swap_slot_ns": 10}
def cost(r, key):
    scenario = tomllib.loads(r["provenance"]["scenario"])
    return scenario.get("time", {}).get("cpu", {}).get(key, DEFAULT[key])
print("| lock | function | policy | sections a read | units a section | hold a read (ns) | cost key |")
print("|---|---|---|---|---|---|---|")
for lock in ("lru_lock", "i_pages", "zone_lock", "swap_lock", "swap_cache"):
    for policy, r in runs.items():
        ops = r["ops"]
        for f, s in sorted((r["sched"]["locks"][lock].get("by_function") or {}).items()):
            if not s["acquisitions"]:
                continue
            c = cost(r, KEY[lock])
            print(f"| {lock} | {f} | {policy} | {s['acquisitions'] / ops:.4f} | {s['hold_ns'] / c / s['acquisitions']:.1f} | {s['hold_ns'] / ops:.1f} | {KEY[lock]} |")
print()
print("| policy | ops/s | CPU a read (ns) | spinning a read | lru_lock hold a read | lru_lock held (lock-s a s) | other work a read |")
print("|---|---|---|---|---|---|---|")
for policy, r in runs.items():
    ops, elapsed = r["ops"], r["elapsed_s"]
    busy = sum(c["busy_s"] for c in r["sched"]["cpu"])
    spin = sum(c["lock_spin_s"] for c in r["sched"]["cpu"])
    hold = r["sched"]["locks"]["lru_lock"]["hold_ns"]
    other = busy * 1e9 - spin * 1e9 - hold
    print(f"| {policy} | {r['throughput_ops_s']:,.0f} | {busy * 1e9 / ops:,.0f} | {spin * 1e9 / ops:,.0f} | {hold / ops:,.0f} | {hold / 1e9 / elapsed:.2f} | {other / ops:,.0f} |")
print()
print("CPU a read outside the lru_lock's holds and the spinning, by kernel function (ns):")
names = [e["function"] for e in runs["classic"]["profile"]]
names += [e["function"] for e in runs["MGLRU"]["profile"] if e["function"] not in names]
print("| function | " + " | ".join(runs) + " |")
print("|---|" + "---|" * len(runs))
for name in names:
    if name in ("native_queued_spin_lock_slowpath", "lruvec_add/del_folio"):
        continue
    row = [next((e["tasks_s"] + e["kswapd_s"] for e in r["profile"] if e["function"] == name), 0.0) * 1e9 / r["ops"] for r in runs.values()]
    print(f"| {name} | " + " | ".join(f"{v:,.0f}" for v in row) + " |")
c, m = runs["classic"]["throughput_ops_s"], runs["MGLRU"]["throughput_ops_s"]
hc, hm = (r["sched"]["locks"]["lru_lock"]["hold_ns"] / r["ops"] for r in runs.values())
print(f"\nMGLRU gain {100 * (m / c - 1):+.1f}%; ratio of lru_lock holds a read {hc / hm:.3f} ({hc:.0f} / {hm:.0f} ns)")
PY
