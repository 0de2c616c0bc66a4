#!/usr/bin/env bash
# Builds a kernel tree into a bzImage that `pagelab oracle --kernel-image` can boot: your own
# patched kernel, or cache_ext's 6.6.8 (github.com/cache-ext/linux-cache-ext at the commit
# cache_ext's repository pins, 7442a927600e).
#
#   oracle/kernel-image.sh SRC [OUT]
#
# SRC is the kernel source tree (built in place, as `make` does); OUT (default SRC/bzImage-
# oracle) receives the image. The configuration is Debian 6.12.95's (the oracle's 6.12
# kernel, taken from its .deb), brought to SRC's version with `make olddefconfig`, cut down
# with `make localmodconfig` to the modules the oracle's guest loads, and those built in
# (the guest loads no modules from a --kernel-image). Further changes:
#   - no module signing, no debug info, no BTF (a faster build; no decision depends on them);
#   - no KASLR (CONFIG_RANDOMIZE_BASE=n, as cache_ext's build.py sets it);
#   - MGLRU compiled in and on (CONFIG_LRU_GEN=y, CONFIG_LRU_GEN_ENABLED=y, as cache_ext's
#     build.py --enable-mglru); the oracle switches it at run time.
# CONFIG_EXTRA="-e FOO -d BAR" passes more scripts/config arguments. About 40 minutes on two
# cores with gcc.
set -euo pipefail
src=$(realpath "${1:?usage: oracle/kernel-image.sh SRC [OUT]}")
out=${2:-$src/bzImage-oracle}
[ -f "$src/Makefile" ] && [ -d "$src/mm" ] || { echo "$src: not a kernel source tree (no Makefile and mm/)" >&2; exit 2; }
for t in make gcc bc bison flex; do
  command -v "$t" > /dev/null || { echo "kernel-image.sh needs $t: apt-get install build-essential bc bison flex libelf-dev libssl-dev" >&2; exit 2; }
done
cache=${PAGELAB_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pagelab/oracle}
pkg=linux-image-6.12.95+deb12-amd64-unsigned
deb=$(ls "$cache"/deb/${pkg}_*.deb 2> /dev/null | tail -1 || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$deb" ]; then
  # The oracle's private package lists, so that the host's apt sources stay untouched.
  mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-backports main" > "$work/apt/sources.list"
  opts=(-oDir::Etc::SourceList="$work/apt/sources.list" -oDir::Etc::SourceParts=/dev/null
        -oDir::State::Lists="$work/apt/lists" -oDir::Cache="$work/apt/cache" -oAPT::Architecture=amd64)
  apt-get "${opts[@]}" update -qq
  (cd "$work" && apt-get "${opts[@]}" download -qq "$pkg")
  deb=$(ls "$work"/${pkg}_*.deb)
fi
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './boot/config-*'
cp "$work"/boot/config-* "$src/.config"
cd "$src"
make olddefconfig > /dev/null
# The guest's modules (setup.rs: WANT_MODULES and their dependencies).
cat > "$work/lsmod" << 'EOF'
Module                  Size  Used by
virtio_pci             24576  0
virtio_pci_legacy_dev  12288  1 virtio_pci
virtio_pci_modern_dev  16384  1 virtio_pci
virtio_blk             24576  0
virtio_ring            49152  2 virtio_pci,virtio_blk
virtio                 16384  2 virtio_pci,virtio_blk
ext4                 1007616  0
mbcache                16384  1 ext4
jbd2                  196608  1 ext4
crc16                  12288  1 ext4
crc32c_generic         12288  0
crc32c_intel           24576  0
zram                   40960  0
zsmalloc               36864  1 zram
lz4_compress           24576  0
lz4                    16384  0
EOF
{ yes '' || true; } | make LSMOD="$work/lsmod" localmodconfig > /dev/null
args=()
for o in $(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=m$/\1/p' .config); do args+=(-e "$o"); done
# shellcheck disable=SC2086
scripts/config "${args[@]}" -d MODULE_SIG -d MODULE_SIG_ALL -d MODULE_SIG_FORCE \
  -d DEBUG_INFO -d DEBUG_INFO_BTF -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE \
  -d RANDOMIZE_BASE -e LRU_GEN -e LRU_GEN_ENABLED \
  --set-str SYSTEM_TRUSTED_KEYS '' --set-str SYSTEM_REVOCATION_KEYS '' ${CONFIG_EXTRA:-}
make olddefconfig > /dev/null
for o in VIRTIO_PCI VIRTIO_BLK EXT4_FS ZRAM LRU_GEN; do
  grep -q "^CONFIG_$o=y" .config || { echo "kernel-image.sh: CONFIG_$o is not built in after configuring" >&2; exit 1; }
done
make -j"$(nproc)" bzImage
cp arch/x86/boot/bzImage "$out"
echo "$out: $(file -b "$out" 2> /dev/null || echo bzImage)"
