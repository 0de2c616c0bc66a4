#!/usr/bin/env bash
# The real kernel's classic LRU and MGLRU on a recorded page stream (real-stream.sh's
# reads.txt) beside pagelab's models of the same kernel: `pagelab oracle` replays the stream
# in Debian's kernel under qemu and in the model, on one file read and written without
# readahead (POSIX_FADV_RANDOM, as models.sh replays it), deleted files' pages punched out
# (`D` lines). Prints each side's pages read from storage (pgpgin) and refaults, and
# MGLRU's ratio to classic on each side.
#
#   examples/cache_ext/leveldb-real/oracle.sh READS.txt [MEMORY] [RUNS] [KERNEL]
#
# MEMORY (default 340M) is the guest's: the guest runner holds the stream in memory (8 bytes
# an access, about 30 MB for Fig. 6 C's 3.8 million), which leaves about 78,000 file pages,
# the paper's 10 GiB cgroup at 1/32. RUNS boots per policy (default 1; the table then shows
# the median and the kernel's range); KERNEL 6.1, 6.12 (default) or 7.3. The two policies boot
# side by side, one guest a core: about 3 minutes a boot under qemu TCG on two cores.
# Outputs (the scenario, each policy's table and --json) go to $OUT (default
# oracle-KERNEL beside READS.txt). With KERNEL_IMAGE=bzImage the guest boots that kernel
# instead of Debian's (cache_ext's 6.6.8: kernel-image.sh), judged against KERNEL's model;
# $OUT then defaults to oracle-image-KERNEL. With CGROUP=SIZE the stream runs in a cgroup of
# that memory.max and the paper's dirty ratios (its setup: a 10 GiB cgroup, so memcg reclaim,
# not global, and bench_leveldb.py's vm.dirty_background_ratio 1 and vm.dirty_ratio 30); give
# a MEMORY large enough that the machine itself never reclaims.
set -euo pipefail
reads=$(realpath "${1:?usage: oracle.sh READS.txt [MEMORY] [RUNS] [KERNEL]}")
mem=${2:-340M}; runs=${3:-1}; kernel=${4:-6.12}
bin=${PAGELAB:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/pagelab}
image=()
if [ -n "${KERNEL_IMAGE:-}" ]; then image=(--kernel-image "$(realpath "$KERNEL_IMAGE")"); fi
out=${OUT:-$(dirname "$reads")/oracle-${KERNEL_IMAGE:+image-}$kernel}
cgroup=/
cgroup_table=""
dirty=""
if [ -n "${CGROUP:-}" ]; then
  cgroup=/ldb
  cgroup_table=$'\n[[cgroup]]\npath = "/ldb"\nmax = "'"$CGROUP"$'"\n'
  dirty=$'dirty_background_ratio = 1\ndirty_ratio = 30'
fi
mkdir -p "$out"
cat > "$out/ldb.toml" <<TOML
# A real LevelDB's page stream (examples/cache_ext/leveldb-real/), replayed as it was recorded.
[machine]
memory = "$mem"
kernel = "$kernel"
$dirty
$cgroup_table
[[workload]]
name = "ldb"
cgroup = "$cgroup"
kind = "file-rw"
fadvise = "random"
trace = "$reads"
trace_format = "text"
TOML
pids=()
for pol in classic mglru; do
  "$bin" oracle "$out/ldb.toml" "${image[@]}" --policy "$pol" --runs "$runs" --timeout 3600 --json "$out/$pol.json" > "$out/$pol.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "oracle failed: see $out/*.txt" >&2; exit 1; }; done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
side = {}
for pol in ("classic", "mglru"):
    o = json.load(open(f"{out}/{pol}.json"))
    if not o["sequences_identical"]:
        sys.exit(f"{out}/{pol}.json: the guest's accesses differ from the model's")
    k, m = o["kernel"]["vmstat"], o["model"]["vmstat"]
    side[pol] = {"kernel": (k["pgpgin"] // 4, k["workingset_refault_file"]), "model": (m["pgpgin"] // 4, m["workingset_refault_file"])}
print(f"{'':8} {'':7} {'from storage':>13} {'refaults':>9}")
for pol, s in side.items():
    for who in ("kernel", "model"):
        print(f"{pol:8} {who:7} {s[who][0]:13} {s[who][1]:9}")
for who in ("kernel", "model"):
    c, g = side["classic"][who], side["mglru"][who]
    print(f"mglru / classic, {who}: {g[0] / c[0]:.3f} from storage, {g[1] / c[1]:.3f} refaults")
PY
