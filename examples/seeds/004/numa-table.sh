#!/usr/bin/env bash
# Prints the table "fio on the seed's two nodes" of docs/journal/2026-11-29-numa-kswapd.md:
# fio-randread-numa-full.toml (72 jobs on 36 CPUs, 36 bound to each node's 18) on two nodes, and
# the same jobs with the same CPU sets on one node (the node tables taken out), 6.1 classic
# and MGLRU.
#   examples/seeds/004/numa-table.sh [PAGELAB]
set -euo pipefail
cd "$(dirname "$0")/../../.."
PAGELAB=${1:-target/release/pagelab}
S=examples/seeds/004/fio-randread-numa-full.toml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One node: the file without its [[machine.node]] tables.
python3 - "$S" "$out/one.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(re.sub(r"\[\[machine\.node\]\]\n(?:[a-z]+ = .*\n)+\n", "", text))
PY
"$PAGELAB" run "$out/one.toml" --json "$out/one.json" > /dev/null
"$PAGELAB" run "$S" --json "$out/two.json" > /dev/null
"$PAGELAB" run "$out/one.toml" --set machine.policy='"mglru"' --json "$out/one-mglru.json" > /dev/null
"$PAGELAB" run "$S" --set machine.policy='"mglru"' --json "$out/two-mglru.json" > /dev/null
python3 - "$out/one.json" "$out/two.json" "$out/one-mglru.json" "$out/two-mglru.json" <<'PY'
import json, sys
one, two, mglru, mglru2 = (json.load(open(f)) for f in sys.argv[1:5])
def spin(r):
    busy = sum(t.get("cpu_s") or 0 for t in r["tasks"])
    return 100 * sum(t.get("lock_spin_s") or 0 for t in r["tasks"]) / busy if busy else 0
def lock(r):
    l = r["sched"]["locks"]["lru_lock"]
    return l
print("| policy | nodes | ops/s | spinning | lru_lock acquisitions | contended | lock wait s | /test pgsteal | steal by node | kswapd steal |")
print("|---|---|---|---|---|---|---|---|---|---|")
for policy, name, r in (("classic", "1", one), ("classic", "2", two), ("MGLRU", "1", mglru), ("MGLRU", "2", mglru2)):
    l = lock(r)
    nodes = r.get("nodes") or []
    by_node = " / ".join(f"{n['pgsteal_direct'] + n['pgsteal_kswapd']:,}" for n in nodes) or "-"
    print(f"| {policy} | {name} | {r['throughput_ops_s']:,.0f} | {spin(r):.1f}% | {l['acquisitions']:,} | {l['contended']:,} | {l['wait_ns'] / 1e9:.2f} | {r['memcg']['/test']['pgsteal']:,} | {by_node} | {r['vmstat']['pgsteal_kswapd']:,} |")
print(f"\nclassic, two nodes against one: {100 * (two['throughput_ops_s'] / one['throughput_ops_s'] - 1):+.1f}% ops/s")
print(f"MGLRU, two nodes against one: {100 * (mglru2['throughput_ops_s'] / mglru['throughput_ops_s'] - 1):+.1f}% ops/s")
print(f"MGLRU against classic, one node: {100 * (mglru['throughput_ops_s'] / one['throughput_ops_s'] - 1):+.1f}%; two nodes: {100 * (mglru2['throughput_ops_s'] / two['throughput_ops_s'] - 1):+.1f}%")
PY
