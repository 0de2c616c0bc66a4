#!/usr/bin/env bash
# The documentation's examples, checked: every ```-fenced block of README.md and docs/*.md
# that begins with a `$ pagelab ...` command is run with the given binary (default: the release build) and
# what it prints is compared with the listing (`...` lines elided, timing fields masked);
# scripts/check_docs.py says the rules. CI runs it after the tests (about a minute).
#
#   scripts/check-docs.sh [BINARY] [FILE.md ...]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
bin=${1:-target/release/pagelab}
shift || true
[ -x "$bin" ] || { echo "check-docs: $bin is not an executable (build it: cargo build --release -p pagelab-cli)" >&2; exit 2; }
exec python3 scripts/check_docs.py "$bin" "$@"
