"""MGLRU-FG (`[mglru] fg`, Kairui Song's RFC of May 2026) against the series' own claims,
without tuning: cache_ext's GET-SCAN miniature (get-scan.toml), seed 000's loop
(examples/mglru-kairui.toml), seed 000's stock-level scenario, and YCSB-B on the LSM store
(examples/apps/lsm-ycsb.toml), all on kernel 7.3 (the RFC applies to 2026's mm-unstable).

    python3 examples/cache_ext/mglru_fg.py [--pagelab PATH] [--only get-scan,kairui,stock,ycsb-b,ycsb-b-64M,fio-zipf]

The series (00/32): GET/SCAN LevelDB classic 993.64, MGLRU 951.12, MGLRU-FG 1344.72 ops/s
(1.41x over MGLRU, 1.35x over classic); MongoDB YCSB-B +16.8%; kernel build file refaults
259,681 -> 201,472 (-22%). docs/journal/2026-11-29-mglru-fg.md has the figures this printed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SETUPS = {
    "classic": ["machine.policy=\"classic\""],
    "MGLRU": ["machine.policy=\"mglru\""],
    "MGLRU-FG": ["machine.policy=\"mglru\"", "mglru.fg=true"],
    "MGLRU-FG + kairui-2026": ["machine.policy=\"mglru\"", "mglru.fg=true", "workingset.refault_model=\"kairui-2026\""],
    "MGLRU + kairui-2026": ["machine.policy=\"mglru\"", "workingset.refault_model=\"kairui-2026\""],
    "MGLRU-FG, reset workingset": ["machine.policy=\"mglru\"", "mglru.fg=true", "mglru.fg_reset=\"workingset\""],
    "MGLRU-FG, reset protected": ["machine.policy=\"mglru\"", "mglru.fg=true", "mglru.fg_reset=\"protected\""],
}

# scenario, the tasks whose ops/s is the throughput (name prefix), extra --sets
BENCHES = {
    "get-scan": ("examples/cache_ext/get-scan.toml", "get", []),
    "kairui": ("examples/mglru-kairui.toml", "scan", []),
    "stock": ("examples/seeds/000/stock-level.toml", "stock", []),
    "ycsb-b": ("examples/apps/lsm-ycsb.toml", "leveldb", ["workload.leveldb.lsm.ycsb=\"b\""]),
    # The series' "FIO with zipf" (+1.4%): pagelab's fio-zipf example.
    "fio-zipf": ("examples/fio-zipf.toml", "fio", []),
    # The same in a 64M cgroup: at 512M the 200,000 operations barely refault.
    "ycsb-b-64M": ("examples/apps/lsm-ycsb.toml", "leveldb", ["workload.leveldb.lsm.ycsb=\"b\"", "cgroup./db.max=64M"]),
}


def run(pagelab, scenario, sets, out):
    cmd = [pagelab, "run", os.path.join(ROOT, scenario), "-q", "--json", out, "--kernel", "7.3"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def ops(r, prefix):
    return sum(t["ops_per_s"] for t in r["tasks"] if t["name"].startswith(prefix))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pagelab", default=os.path.join(ROOT, "target/release/pagelab"))
    ap.add_argument("--only", default=",".join(BENCHES))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for bench in a.only.split(","):
            scenario, prefix, extra = BENCHES[bench]
            jobs = {name: (scenario, sets + extra, f"{tmp}/{bench}-{i}.json") for i, (name, sets) in enumerate(SETUPS.items())}
            with ThreadPoolExecutor(2) as ex:
                futs = {name: ex.submit(run, a.pagelab, *job) for name, job in jobs.items()}
                res = {name: f.result() for name, f in futs.items()}
            base, cls = ops(res["MGLRU"], prefix), ops(res["classic"], prefix)
            print(f"## {bench} ({scenario}, kernel 7.3): `{prefix}` ops/s")
            print()
            print("| setup | ops/s | vs MGLRU | vs classic | file refaults | workingset_restore_file |")
            print("|---|---|---|---|---|---|")
            for name, r in res.items():
                x = ops(r, prefix)
                v = r["vmstat"]
                print(f"| {name} | {x:,.0f} | {x / base:.3f}x | {x / cls:.3f}x | "
                      f"{v['workingset_refault_file']:,} | {v['workingset_restore_file']:,} |")
            print()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
