#!/usr/bin/env python3
"""pagelab against libCacheSim on the same trace files, measured in the same run.

Generates Zipf traces (alpha 0.8 and 1.0; 10 M accesses over 1 M objects by default) as
libCacheSim oracleGeneral files, then for cache sizes of 1% and 10% of the footprint runs

  * libCacheSim's LRU (PyPI `libcachesim`, its C core via `process_trace`), with the hash
    table sized several ways (hashpower log2(cache objects)+1 .. +3 and its default 24); the
    best time of all of them is the baseline;
  * pagelab's plain `lru` on the same oracleGeneral file (reading, id mapping and
    simulation, all timed) and on the dense file (`pagelab trace-convert`, done once);
  * pagelab's kernel models (`classic`, `mglru`) on the oracleGeneral file (read and its
    ids mapped on threads of their own while the model runs) and on the dense file;
  * the reference policies both simulators have (`--reference`: SIEVE, S3-FIFO, ARC), each
    as libCacheSim's implementation (at the hashpower its LRU ran best with) and pagelab's
    on the oracleGeneral file,

and prints miss ratios, M accesses/s and the ratio to libCacheSim's best LRU. Each round runs
every simulator once (a busy spell of a shared machine slows all of them alike); each
simulator's best round counts. pagelab's
times are taken inside the process (`wall_s` of its JSON); libCacheSim's around
`process_trace` only. Both simulate every access of the trace. A second rate divides by CPU
seconds instead: libCacheSim's `process_trace` (one thread), and the whole pagelab process
(its reading thread, start-up and exit included).

    python3 bench/trace_bench.py [--requests 10000000] [--objects 1000000] [--reps 3]
"""

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import traces  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
# pagelab's reference policies and libCacheSim's classes for them.
LCS_CLASS = {"sieve": "Sieve", "s3fifo": "S3FIFO", "arc": "ARC"}


def libcachesim_lru(lcs, path, pages, hp, cls="LRU"):
    """(seconds, miss ratio, CPU seconds) of a libCacheSim cache (its LRU unless `cls` names
    another), in this process."""
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = getattr(lcs, cls)(pages * 4096, hashpower=hp)
    t, c = time.perf_counter(), time.process_time()
    mr, _ = cache.process_trace(reader)
    return time.perf_counter() - t, mr, time.process_time() - c


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pagelab(bin_, path, fmt, policy, pages):
    """(seconds, miss ratio, misses, CPU seconds) of a pagelab run: the seconds its JSON
    reports (simulation and any conversion), the CPU time of the whole process, its reading
    thread, start-up and exit included."""
    c = children_cpu()
    out = subprocess.run(
        [bin_, "run", "--trace", str(path), "--trace-format", fmt, "--policy", policy, "--memory", f"{pages * 4}k", "--json", "-"],
        check=True, capture_output=True, text=True,
    )
    v = json.loads(out.stdout)
    return v["wall_s"] + v.get("convert_s", 0.0), v["miss_ratio"], v["misses"], children_cpu() - c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alphas", default="0.8,1.0")
    ap.add_argument("--fractions", default="0.01,0.1")
    ap.add_argument("--policies", default="lru,classic,mglru")
    ap.add_argument("--reference", default="sieve,s3fifo,arc",
                    help="reference policies run by both simulators (libCacheSim's implementation at the LRU's best hashpower against pagelab's); empty for none")
    ap.add_argument("--reps", type=int, default=3, help="rounds; each runs every simulator once, the best round counts")
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp") + "/pagelab-trace-bench")
    ap.add_argument("--pagelab", default=None, help="the pagelab binary (default: target/dist/pagelab, the PGO build of scripts/build-pgo.sh, if built; else target/release/pagelab)")
    ap.add_argument("--json", default=None, help="write the rows here")
    a = ap.parse_args()

    import libcachesim as lcs

    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    bin_ = a.pagelab or str(next((b for b in (target / "dist" / "pagelab", target / "release" / "pagelab") if b.exists()), target / "release" / "pagelab"))
    d = pathlib.Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"libcachesim {lcs.__version__}; {a.requests / 1e6:g} M accesses over {a.objects / 1e6:g} M objects; {os.cpu_count()} CPUs; pagelab: {bin_}", flush=True)
    hdr = f"{'trace':<10} {'cache':>6} {'simulator':<34} {'miss ratio':>10} {'M acc/s':>8} {'vs LCS LRU':>10} {'per CPU-s':>10} {'vs LCS':>7}"
    print(hdr)
    print("-" * len(hdr))
    for alpha in [float(x) for x in a.alphas.split(",")]:
        path = d / f"zipf{alpha}-{a.requests}-{a.objects}.oracleGeneral"
        if not path.exists():
            traces.write_zipf(path, a.requests, a.objects, alpha, seed=42)
        dense = path.with_suffix(".dense")
        if not dense.exists():
            subprocess.run([bin_, "trace-convert", str(path), str(dense)], check=True, capture_output=True)
        ids = np.fromfile(path, dtype=traces.RECORD)["obj_id"]
        footprint = len(np.unique(ids))
        del ids
        for frac in [float(x) for x in a.fractions.split(",")]:
            pages = max(1, int(footprint * frac))
            lg = pages.bit_length()
            label = f"zipf{alpha}"
            # Every simulator once per round, so a busy spell of the machine slows all alike.
            sims = [("lcs", hp) for hp in sorted({lg + 1, lg + 2, lg + 3, 24})]
            for policy in a.policies.split(","):
                sims.append(("pagelab", policy, path, "oracleGeneral"))
                sims.append(("pagelab", policy, dense, "dense"))
            refs = [r for r in a.reference.split(",") if r]
            for policy in refs:
                sims.append(("lcs-ref", policy))
                sims.append(("pagelab", policy, path, "oracleGeneral"))
            best = {}
            for _ in range(a.reps):
                lcs_hp = None
                for sim in sims:
                    if sim[0] == "lcs":
                        r = libcachesim_lru(lcs, path, pages, sim[1])
                    elif sim[0] == "lcs-ref":
                        # At the hashpower that served libCacheSim's LRU best so far.
                        if lcs_hp is None:
                            lcs_hp = min((s_ for s_ in best if s_[0] == "lcs"), key=lambda s_: best[s_][0])[1]
                        r = libcachesim_lru(lcs, path, pages, lcs_hp, LCS_CLASS[sim[1]])
                    else:
                        r = pagelab(bin_, sim[2], sim[3], sim[1], pages)
                    if sim not in best or r[0] < best[sim][0]:
                        best[sim] = r
            lcs_best = min((s_ for s_ in sims if s_[0] == "lcs"), key=lambda s_: best[s_][0])
            base = a.requests / best[lcs_best][0]
            lru_misses = round(best[lcs_best][1] * a.requests)

            cpu_base = a.requests / best[lcs_best][2]

            def row(sim, miss_ratio, rate, cpu_rate):
                rows.append({
                    "trace": label, "fraction": frac, "pages": pages, "simulator": sim, "miss_ratio": miss_ratio,
                    "accesses_per_s": rate, "ratio": rate / base, "accesses_per_cpu_s": cpu_rate, "cpu_ratio": cpu_rate / cpu_base,
                })
                print(f"{label:<10} {frac * 100:>5g}% {sim:<34} {miss_ratio:>10.4f} {rate / 1e6:>8.2f} {rate / base:>9.2f}x {cpu_rate / 1e6:>10.2f} {cpu_rate / cpu_base:>6.2f}x", flush=True)

            row(f"libCacheSim LRU (hashpower {lcs_best[1]})", best[lcs_best][1], base, cpu_base)
            for sim in sims:
                if sim[0] == "lcs-ref":
                    secs, mr, cpu = best[sim]
                    row(f"libCacheSim {LCS_CLASS[sim[1]]}", mr, a.requests / secs, a.requests / cpu)
                elif sim[0] == "pagelab":
                    secs, mr, misses, cpu = best[sim]
                    if sim[1] == "lru":
                        assert misses == lru_misses, "pagelab's LRU and libCacheSim's disagree"
                    row(f"pagelab {sim[1]}" + (" (dense input)" if sim[3] == "dense" else ""), mr, a.requests / secs, a.requests / cpu)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
