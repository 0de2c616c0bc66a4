// A My-YCSB-shaped client of a real LevelDB, to record the page stream the real store gives
// the page cache (examples/cache_ext/leveldb-real/README.md). Written for pagelab against
// LevelDB's public API; no My-YCSB code.
//
//   ldb_ycsb load DIR N             insert keys 0..N-1 in a shuffled order, one thread
//   ldb_ycsb run DIR N THREADS OPS  THREADS clients, OPS gets each (YCSB C)
//
// Records as My-YCSB writes them: a 15-digit zero-padded decimal key and a value of 199
// random lowercase letters. Keys of a run are drawn as My-YCSB's ZipfianWorkload draws them:
// Gray et al.'s Zipfian (constant 0.99) over the N records, a rank above 1 hashed with FNV-1
// (multiply, then xor, 8 octets low first) and taken modulo N. Options are LevelDB's defaults
// (no filter policy), with the table, write buffer and block cache scaled by SCALE (1/32).
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/options.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void Key(char* buf, uint64_t k) { std::snprintf(buf, 17, "%015llu", (unsigned long long)k); }

leveldb::DB* Open(const char* dir, leveldb::Cache** cache) {
  leveldb::Options o;
  o.create_if_missing = true;
  o.max_file_size = 64 << 10;       // 2 MiB / 32
  o.write_buffer_size = 128 << 10;  // 4 MiB / 32
  *cache = leveldb::NewLRUCache(256 << 10);  // 8 MiB / 32
  o.block_cache = *cache;
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(o, dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "ldb_ycsb: cannot open %s: %s\n", dir, s.ToString().c_str());
    std::exit(1);
  }
  return db;
}

struct Zipf {
  double n, theta = 0.99, zetan = 0, zeta2 = 0, alpha, eta;
  explicit Zipf(uint64_t records) : n(double(records)) {
    for (uint64_t i = 1; i <= records; ++i) zetan += 1.0 / std::pow(double(i), theta);
    for (int i = 1; i <= 2; ++i) zeta2 += 1.0 / std::pow(double(i), theta);
    alpha = 1.0 / (1.0 - theta);
    eta = (1 - std::pow(2.0 / n, 1 - theta)) / (1 - zeta2 / zetan);
  }
  uint64_t Rank(double u) const {
    double uz = u * zetan;
    if (uz < 1) return 0;
    if (uz < 1 + std::pow(0.5, theta)) return 1;
    return uint64_t(n * std::pow(eta * u - eta + 1, alpha));
  }
};

uint64_t Fnv1(uint64_t v) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < 8; ++i) {
    h *= 1099511628211ULL;
    h ^= (v >> (8 * i)) & 0xff;
  }
  return h;
}

void Stats(leveldb::DB* db) {
  std::string s;
  if (db->GetProperty("leveldb.stats", &s)) std::fprintf(stderr, "%s\n", s.c_str());
}

int Load(const char* dir, uint64_t n) {
  leveldb::Cache* cache;
  leveldb::DB* db = Open(dir, &cache);
  std::vector<uint32_t> order(n);
  for (uint64_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(0));
  std::mt19937 rng(1);
  char key[17], value[200];
  for (uint64_t i = 0; i < n; ++i) {
    Key(key, order[i]);
    for (int j = 0; j < 199; ++j) value[j] = char('a' + rng() % 26);
    value[199] = 0;
    leveldb::Status s = db->Put(leveldb::WriteOptions(), leveldb::Slice(key, 15), leveldb::Slice(value, 199));
    if (!s.ok()) {
      std::fprintf(stderr, "ldb_ycsb: put failed: %s\n", s.ToString().c_str());
      return 1;
    }
    if (i % 1000000 == 0) std::fprintf(stderr, "loaded %llu\n", (unsigned long long)i);
  }
  Stats(db);
  delete db;
  delete cache;
  return 0;
}

int Run(const char* dir, uint64_t n, int threads, uint64_t ops) {
  leveldb::Cache* cache;
  leveldb::DB* db = Open(dir, &cache);
  Stats(db);
  Zipf z(n);
  std::vector<std::thread> ts;
  std::vector<uint64_t> missing(threads, 0);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      unsigned int seed = unsigned(t);
      char key[17];
      std::string v;
      for (uint64_t i = 0; i < ops; ++i) {
        double u = double(rand_r(&seed)) / RAND_MAX;
        uint64_t r = z.Rank(u);
        uint64_t k = (r < 2 ? r : Fnv1(r)) % n;
        Key(key, k);
        if (!db->Get(leveldb::ReadOptions(), leveldb::Slice(key, 15), &v).ok()) missing[t]++;
      }
    });
  }
  for (auto& t : ts) t.join();
  uint64_t miss = 0;
  for (auto m : missing) miss += m;
  std::fprintf(stderr, "gets %llu, not found %llu\n", (unsigned long long)(ops * threads), (unsigned long long)miss);
  Stats(db);
  delete db;
  delete cache;
  return miss ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "load") return Load(argv[2], std::strtoull(argv[3], nullptr, 10));
  if (argc == 6 && std::string(argv[1]) == "run")
    return Run(argv[2], std::strtoull(argv[3], nullptr, 10), std::atoi(argv[4]), std::strtoull(argv[5], nullptr, 10));
  std::fprintf(stderr, "usage: ldb_ycsb load DIR N | ldb_ycsb run DIR N THREADS OPS\n");
  return 2;
}
