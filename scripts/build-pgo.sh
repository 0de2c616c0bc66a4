#!/usr/bin/env bash
# Builds pagelab with profile-guided optimisation into target/dist/pagelab: an instrumented
# build (profile `dist`: fat LTO, one codegen unit) runs a training set, LLVM merges the
# profiles, and a second build lays out and inlines the code by them. The result computes
# exactly what target/release/pagelab computes, faster (the README's benchmark figures).
#
#   scripts/build-pgo.sh           build target/dist/pagelab
#   scripts/build-pgo.sh --check   build, then require bit-identical reports from
#                                  target/dist/pagelab and target/release/pagelab
#                                  (scripts/same-counters.sh: 214 runs)
#   scripts/build-pgo.sh --wheel   also build the Python wheel the same way, trained through
#                                  Python (the CLI's profile does not fit the extension
#                                  module; scripts/pgo-train-wheel.py), into
#                                  target/wheels-dist/ (with --check: its reports must equal
#                                  the release command line's)
#
# The training set is the bundled scenarios (both policies, 6.1 and 6.12) and replays of a
# Zipf trace generated here with its own seed and size (not the benchmark's traces), as
# oracleGeneral and dense input, through the kernel models and the plain caches.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"

check=false
wheel=false
for arg in "$@"; do
  case "$arg" in
    --check) check=true ;;
    --wheel) wheel=true ;;
    *) echo "usage: scripts/build-pgo.sh [--check] [--wheel]" >&2; exit 2 ;;
  esac
done

work="$PWD/target/pgo"
mkdir -p "$work"
[ -s "$work/train.og" ] || python3 - "$work/train.og" <<'EOF'
# A Zipf(0.9) trace over 200k pages, 1M accesses, in oracleGeneral (stdlib only).
import bisect, itertools, random, struct, sys
rng = random.Random(20261123)
n_obj, n_req = 200_000, 1_000_000
cum = list(itertools.accumulate(1.0 / (k ** 0.9) for k in range(1, n_obj + 1)))
ranks = [bisect.bisect_left(cum, rng.random() * cum[-1]) for _ in range(n_req)]
nxt, seen = [-1] * n_req, {}
for i in range(n_req - 1, -1, -1):
    nxt[i] = seen.get(ranks[i], -1)
    seen[ranks[i]] = i
rec = struct.Struct("<IQIq")
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(rec.pack(i // 1000, (r * 0x9E3779B97F4A7C15 + 7) % 2**64, 4096, nxt[i]) for i, r in enumerate(ranks)))
EOF
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  echo "[pgo] installing rustup's llvm-tools (llvm-profdata)" >&2
  rustup component add llvm-tools >&2 || true
fi
if [ ! -x "$profdata" ]; then
  # No llvm-profdata for this toolchain (no rustup, or its server unreachable): the same
  # profile without the profile, so target/dist/pagelab still exists and is checked.
  echo "[pgo] llvm-profdata unavailable: building target/dist/pagelab without PGO" >&2
  cargo build --profile dist --locked -p pagelab-cli
  pgo=false
else
  pgo=true
fi

if $pgo; then
  echo "[pgo] instrumented build" >&2
  rm -rf "$work/profraw"
  mkdir -p "$work"
  RUSTFLAGS="-Cprofile-generate=$work/profraw" \
    cargo build --profile dist --locked -p pagelab-cli --target-dir "$PWD/target/pgo-gen"
  gen="$PWD/target/pgo-gen/dist/pagelab"

  echo "[pgo] training" >&2
  "$gen" trace-convert "$work/train.og" "$work/train.dense" >/dev/null
  train() { "$gen" "$@" --json /dev/null >/dev/null; }
  for policy in classic mglru; do
    for kernel in 6.1 6.12; do
      for memory in 8000k 80000k; do
        train run --trace "$work/train.og" --trace-format oracleGeneral --policy $policy --kernel $kernel --memory $memory
        train run --trace "$work/train.dense" --trace-format dense --policy $policy --kernel $kernel --memory $memory
      done
    done
  done
  for policy in lru fifo clock opt sieve s3fifo arc; do
    train run --trace "$work/train.og" --trace-format oracleGeneral --policy $policy --memory 8000k
    train run --trace "$work/train.dense" --trace-format dense --policy $policy --memory 80000k
  done
  for f in examples/*.toml oracle/scenarios/*.toml examples/seeds/004/memcached.toml examples/seeds/001/t3-overload.toml; do
    train run "$f"
    train run "$f" --set machine.policy=mglru --set machine.kernel=6.12
  done

  echo "[pgo] optimised build" >&2
  "$profdata" merge -o "$work/pagelab.profdata" "$work"/profraw/*.profraw
  RUSTFLAGS="-Cprofile-use=$work/pagelab.profdata" cargo build --profile dist --locked -p pagelab-cli
  echo "[pgo] built target/dist/pagelab" >&2
fi

if $check; then
  echo "[pgo] checking target/dist/pagelab against target/release/pagelab" >&2
  cargo build --release --locked -p pagelab-cli
  scripts/same-counters.sh target/release/pagelab target/dist/pagelab
fi

if $wheel; then
  wheels="$PWD/target/wheels-dist"
  rm -rf "$wheels"
  if $pgo; then
    echo "[pgo] instrumented wheel" >&2
    rm -rf "$work/wheel-profraw" "$work/wheel-gen" "$work/wheel-site"
    RUSTFLAGS="-Cprofile-generate=$work/wheel-profraw" CARGO_TARGET_DIR="$PWD/target/pgo-gen-wheel" \
      python3 -m maturin build --profile dist --locked -o "$work/wheel-gen" >&2
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$work/wheel-site" "$work"/wheel-gen/pagelab-*.whl
    echo "[pgo] training the wheel" >&2
    PYTHONPATH="$work/wheel-site" python3 scripts/pgo-train-wheel.py
    "$profdata" merge -o "$work/wheel.profdata" "$work"/wheel-profraw/*.profraw
    RUSTFLAGS="-Cprofile-use=$work/wheel.profdata" python3 -m maturin build --profile dist --locked -o "$wheels" >&2
  else
    python3 -m maturin build --profile dist --locked -o "$wheels" >&2
  fi
  echo "[pgo] built $(ls "$wheels"/pagelab-*.whl)" >&2
  if $check; then
    echo "[pgo] checking the wheel against target/release/pagelab" >&2
    rm -rf "$work/wheel-check"
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$work/wheel-check" "$wheels"/pagelab-*.whl
    PYTHONPATH="$work/wheel-check" python3 scripts/pgo-train-wheel.py --check
  fi
fi
