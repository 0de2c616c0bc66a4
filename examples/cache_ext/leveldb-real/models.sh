#!/usr/bin/env bash
# pagelab's kernel models and cache_ext's policies on a recorded page stream (real-stream.sh's
# reads.txt): each policy replays the stream on Linux 6.12's model, the trace as one file read
# without readahead (`run --trace`'s kernel replay), deleted files' pages dropped (`D` lines),
# the seam's policies over the kernel LRU with cache_ext's fallback (`seam_fallback`), the
# classic LRU with the paper's 10 GiB cgroup's rules (`miniature = 1/32`). Prints each
# policy's reads from storage (pgpgin) and refaults, and its ratio to classic's.
#
#   examples/cache_ext/leveldb-real/models.sh READS.txt [MEMORY]
#
# MEMORY (default 310M) is the machine's: 310M leaves about 78,000 file pages, the paper's
# 10 GiB cgroup at 1/32.
set -euo pipefail
reads=${1:?usage: models.sh READS.txt [MEMORY]}
mem=${2:-310M}
bin=${PAGELAB:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release/pagelab}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-18s %12s %12s %12s %8s\n' policy "from storage" refaults "file pages" "x classic"
base=
for pol in classic mglru cache-ext-mru cache-ext-fifo cache-ext-s3fifo lhd sampling-lfu; do
  "$bin" run --trace "$reads" --trace-format text --policy classic --kernel 6.12 --memory "$mem" \
    --set machine.policy="$pol" --set machine.seam_fallback=true --set machine.miniature=0.03125 \
    -q --json "$out/$pol.json" >/dev/null
  read -r pages refaults file < <(python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['vmstat']; print(v['pgpgin'] // 4, v['workingset_refault_file'], v['nr_file_pages'])" "$out/$pol.json")
  base=${base:-$pages}
  printf '%-18s %12s %12s %12s %8s\n' "$pol" "$pages" "$refaults" "$file" "$(python3 -c "print(f'{$pages / $base:.3f}')")"
done
