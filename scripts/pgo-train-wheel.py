"""The Python wheel's profile-guided build (scripts/build-pgo.sh --wheel): trains an
instrumented wheel on the bundled scenarios, or with --check requires the optimised wheel's
reports to equal the release command line's."""
import glob
import json
import subprocess
import sys

import pagelab


def train():
    files = sorted(glob.glob("examples/*.toml") + glob.glob("oracle/scenarios/*.toml"))
    files += ["examples/seeds/004/memcached.toml", "examples/seeds/001/t3-overload.toml"]
    for f in files:
        pagelab.run(f)
        pagelab.run(f, set={"machine.policy": "mglru", "machine.kernel": "6.12"})
    for policy in ("classic", "mglru"):
        pagelab.run("examples/fio-zipf.toml", set={"machine.policy": policy, "workload.fio-zipf.ops": 1000000})


def without_timing(v):
    if isinstance(v, dict):
        return {k: without_timing(x) for k, x in v.items() if k != "wall_s"}
    if isinstance(v, list):
        return [without_timing(x) for x in v]
    return v


def check():
    n = 0
    for f in ("examples/fio-zipf.toml", "oracle/scenarios/anon-swap-zram.toml"):
        for extra in ([], ["machine.policy=mglru", "machine.kernel=6.12"]):
            args = [a for kv in extra for a in ("--set", kv)]
            out = subprocess.run(["target/release/pagelab", "run", "-q", f, "--json", "-", *args], check=True, capture_output=True, text=True).stdout
            py = pagelab.run(f, set=dict(kv.split("=", 1) for kv in extra))
            if without_timing(py) != without_timing(json.loads(out)):
                sys.exit(f"[pgo] the wheel's report differs from the command line's: {f} {extra}")
            n += 1
    print(f"[pgo] the wheel's reports equal the command line's on {n} runs", file=sys.stderr)


if __name__ == "__main__":
    check() if sys.argv[1:] == ["--check"] else train()
