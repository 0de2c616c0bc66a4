#!/usr/bin/env bash
# The style gates CI runs before the tests: rustfmt (rustfmt.toml), clippy with every warning
# an error (an intended exception carries an `allow` with its reason), and a build check with
# the workspace's declared minimum Rust (`rust-version` in Cargo.toml), so the declaration
# stays true.
#
#   scripts/lint.sh            all three
#   scripts/lint.sh --no-msrv  fmt and clippy only
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null 2>&1 || export PATH="$HOME/.cargo/bin:$PATH"
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
echo "[lint] cargo fmt --check" >&2
cargo fmt --all --check
echo "[lint] cargo clippy -D warnings" >&2
cargo clippy --workspace --all-targets --locked -q -- -D warnings
[ "${1:-}" = --no-msrv ] && exit 0
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
if ! command -v rustup >/dev/null 2>&1; then
  echo "[lint] no rustup here: cannot check the declared minimum Rust $msrv" >&2
  exit 1
fi
echo "[lint] cargo +$msrv check (the declared rust-version)" >&2
rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1
CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check --workspace --all-targets --locked -q
echo "[lint] fmt, clippy and Rust $msrv: clean" >&2
