#!/usr/bin/env bash
# The 72-CPU row of the tables "memcached on a machine of CPUs" (examples/seeds/README.md) at
# K times its memory, keeping the seed's ratios: 36 threads, each with K x 128M of memory,
# K x 145M of set (1.13x memory) and K x 108M of swap, the set's operations scaled alike;
# classic against MGLRU on 6.1. Prints one line a policy (ops/s, the Normal zone's low
# watermark, the lruvec and zone locks per operation) and the gain.
#   examples/seeds/004/memcached-scale.sh K [PAGELAB]   (K = 10: about a minute a policy)
set -euo pipefail
cd "$(dirname "$0")/../../.."
K=${1:?scale factor}
PAGELAB=${2:-target/release/pagelab}
jobs=36
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sed -e "s/size = \"145M\"/size = \"$((145 * K))M\"/" -e "s/ops = 37120$/ops = $((37120 * K))/" \
  -e "s/ops = 74240$/ops = $((74240 * K))/" examples/seeds/004/memcached.toml > "$out/memcached.toml"
for p in classic mglru; do
  "$PAGELAB" run "$out/memcached.toml" --set machine.policy="\"$p\"" --set machine.cpus=72 \
    --set workload.memcached.jobs=$jobs --set machine.memory="\"$((128 * jobs * K))M\"" \
    --set machine.swap.size="\"$((108 * jobs * K))M\"" -q --json "$out/$p.json" > /dev/null
done
python3 - "$out" "$K" <<'PY'
import json, sys
out, k = sys.argv[1], sys.argv[2]
R = {p: json.load(open(f"{out}/{p}.json")) for p in ("classic", "mglru")}
for p, r in R.items():
    ops, locks = r["ops"], r["sched"]["locks"]
    lru, zl = locks["lru_lock"], locks["zone_lock"]
    low = next(z["low"] for z in r["zones"] if z["name"] == "Normal")
    print(f"x{k} {p}: {r['throughput_ops_s']:,.0f} ops/s; Normal low watermark {low:,} pages; "
          f"lru_lock hold/wait {lru['hold_ns'] / ops:,.0f} / {lru['wait_ns'] / ops:,.0f} ns an op; "
          f"zone->lock {zl['acquisitions'] / ops:.3f} sections, hold/wait {zl['hold_ns'] / ops:,.0f} / "
          f"{zl['wait_ns'] / ops:,.0f} ns an op; forgotten {lru['forgotten']} / {zl['forgotten']}")
c, m = R["classic"]["throughput_ops_s"], R["mglru"]["throughput_ops_s"]
print(f"x{k} MGLRU gain {100 * (m / c - 1):+.1f}%")
PY
