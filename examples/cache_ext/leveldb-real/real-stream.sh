#!/usr/bin/env bash
# The page stream a real LevelDB gives the page cache under Fig. 6's YCSB C at 1/32
# (README.md beside this script): builds Debian bookworm's LevelDB 1.23 with the three scaled
# constants, loads a store of N records, runs THREADS clients of OPS gets under strace, and
# writes the pages its preads span as `R PAGE` lines for examples/cache_ext/room.py.
#
#   examples/cache_ext/leveldb-real/real-stream.sh WORKDIR [N] [THREADS] [OPS]
#
# Defaults: N = 16,777,216 (the paper's 536,870,912 records / 32), 8 threads, 25,000 gets
# each. Needs apt (deb-src of bookworm through a private sources list), cmake, g++,
# libsnappy-dev and strace. The load takes about an hour on 2 cores (64 KiB tables compact
# slowly) and 4 GB of disk; the run a few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:?usage: real-stream.sh WORKDIR [N] [THREADS] [OPS]}
n=${2:-16777216}; threads=${3:-8}; ops=${4:-25000}
mkdir -p "$work" && cd "$work"
if [ ! -f leveldb-1.23/build/libleveldb.a ]; then
  mkdir -p apt/lists
  cat > apt/src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  a=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/apt" -o Dir::State::Lists="$work/apt/lists")
  apt-get "${a[@]}" update -qq
  apt-get "${a[@]}" source --download-only leveldb=1.23-4
  tar xzf leveldb_1.23.orig.tar.gz
  # The constants scaled as ycsb-paper.toml scales them: L1's 10 MiB / 32, the seek floor
  # 100 -> 3 (allowed_seeks_min), SanitizeOptions()'s smallest max_file_size 1 MiB -> 64 KiB
  # (the paper's 2 MiB / 32), and no mmap: the paper's LevelDB reads with pread.
  sed -i 's/double result = 10\. \* 1048576\.0;/double result = 327680.0;/' leveldb-1.23/db/version_set.cc
  sed -i 's/if (f->allowed_seeks < 100) f->allowed_seeks = 100;/if (f->allowed_seeks < 3) f->allowed_seeks = 3;/' leveldb-1.23/db/version_set.cc
  sed -i 's/ClipToRange(&result.max_file_size, 1 << 20, 1 << 30);/ClipToRange(\&result.max_file_size, 1 << 16, 1 << 30);/' leveldb-1.23/db/db_impl.cc
  sed -i 's/constexpr const int kDefaultMmapLimit = (sizeof(void\*) >= 8) ? 1000 : 0;/constexpr const int kDefaultMmapLimit = 0;/' leveldb-1.23/util/env_posix.cc
  for p in 'result = 327680.0' 'allowed_seeks < 3'; do grep -q "$p" leveldb-1.23/db/version_set.cc || { echo "patch failed: $p" >&2; exit 1; }; done
  grep -q 'kDefaultMmapLimit = 0' leveldb-1.23/util/env_posix.cc || { echo "patch failed: mmap" >&2; exit 1; }
  grep -q 'max_file_size, 1 << 16' leveldb-1.23/db/db_impl.cc || { echo "patch failed: max_file_size" >&2; exit 1; }
  cmake -S leveldb-1.23 -B leveldb-1.23/build -DCMAKE_BUILD_TYPE=Release -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=OFF >/dev/null
  make -C leveldb-1.23/build -j2 leveldb >/dev/null
fi
g++ -O2 -std=c++17 -Ileveldb-1.23/include "$here/ldb_ycsb.cc" leveldb-1.23/build/libleveldb.a -lsnappy -lpthread -o ldb_ycsb
if [ ! -f db.loaded ]; then
  rm -rf db db.orig
  ./ldb_ycsb load "$work/db" "$n" 2> load.log
  cp -a db db.orig && touch db.loaded
fi
rm -rf db && cp -a db.orig db
strace -f -qq -y -e trace=pread64,write,unlink -e signal=none -s 0 -o run.strace ./ldb_ycsb run "$work/db" "$n" "$threads" "$ops" 2> run.log
python3 "$here/strace_pages.py" run.strace > reads.txt
echo "wrote $work/reads.txt"
