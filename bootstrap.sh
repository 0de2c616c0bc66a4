#!/usr/bin/env bash
# Sets pagelab up on a fresh machine and runs the example scenario.
#   ./bootstrap.sh            build (release) and run examples/fio-zipf.toml
#   ./bootstrap.sh --no-run   build only
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  elif command -v curl >/dev/null 2>&1; then
    echo "[bootstrap] installing Rust with rustup" >&2
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >&2
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "[bootstrap] pagelab needs Rust (cargo); install it from https://rustup.rs" >&2
    exit 1
  fi
fi

echo "[bootstrap] building pagelab (release)" >&2
cargo build --release --locked -p pagelab-cli

if [ "${1:-}" != "--no-run" ]; then
  echo "[bootstrap] running examples/fio-zipf.toml" >&2
  ./target/release/pagelab run examples/fio-zipf.toml
fi
