//! `pagelab calibrate`: measures on this host the costs a scenario's `[time]` tables hold,
//! and writes them as TOML a scenario can take in.
//!
//! # What it measures, and how
//!
//! Every figure is the median of several timed batches of many repetitions (the batch
//! size is printed with it), on data this command builds itself:
//!
//! - **Copying a page** (`[time] copy_page_ns`): `copy_from_slice` (the platform's memcpy)
//!   of 4 KiB pages between two 64 MiB buffers, larger than a CPU's last-level cache, as a
//!   read() copies a page-cache page the CPU has not touched lately to a user buffer. The
//!   same copy between two cached pages is printed beside it, as a comment.
//! - **zram's compression and decompression** (`[time.swap]` of a `zram` swap device):
//!   the real algorithms through the crates that implement them, on pages of a declared
//!   compressibility (`--compressibility C`: the fraction of each page that is zeros, the
//!   rest random bytes, as fio's `buffer_compress_percentage` builds its buffers).
//!   - lz4: the LZ4 block format through `lz4_flex` (pure Rust), the zram `lz4` backend's
//!     format (LZ4_compress_default's acceleration 1);
//!   - zstd: libzstd through the `zstd` crate at level 3, the level 6.1's and 6.12's zram
//!     zstd backends use by default;
//!   - lzo-rle, 6.1's and 6.12's zram default, is not measured: every LZO1X-1
//!     implementation available as a crate is GPL-licensed, and pagelab is MIT/Apache. The
//!     output says so, and keeps lz4's figures as the nearest measured algorithm unless
//!     `--algorithm zstd` is given.
//!
//!   A zram swap device's per-page latency in the model is this compression (a write) or
//!   decompression (a read); its transfer time is 0 (`page_transfer_ns`).
//! - **An LRU move** (`[time.cpu] lru_move_ns`): a 64-byte node, standing for the first
//!   cache line of a `struct folio` (its `lru` links and `flags`), unlinked from the head of
//!   one doubly-linked list and added to the tail of another, over 64 MiB of nodes linked in
//!   a shuffled order, so that each move misses the cache as reclaim's moves of cold folios
//!   do. Only the moves are timed, not the linking before each batch.
//!   The same move stands for a page's between a zone's buddy and per-CPU lists under
//!   `zone->lock` (`[time.cpu] zone_move_ns`).
//! - **An xarray store** (`[time.cpu] xa_store_ns`): a store at a random index of a radix
//!   tree of 64-slot, 576-byte nodes (`struct xa_node`) over 4 Mi slots, walked from the
//!   root, as a page-cache or swap-cache insert or delete stores under the `i_pages` lock.
//! - **A swap slot** (`[time.cpu] swap_slot_ns`): two `fetch_add` on one cache line by one
//!   thread, the uncontended lock and unlock of a swap cluster's lock under `si->lock`.
//! - **cache_ext's registry per hook call** (`[time] cache_ext_hook_ns`): the valid-folio
//!   registry cache_ext keeps for every policy (a hash table with as many buckets as the
//!   cgroup has pages, keyed by the folio's address; SOSP '25 §4.4, §6.3.1): an insert
//!   (`folio_added`), a lookup (`folio_accessed`) and a delete (`folio_removed`) of 2^20 folios
//!   in shuffled orders, through `std::collections::HashMap`, timed per operation. The BPF
//!   call into the policy is not measured, so the figure is a lower bound.
//! - **A lock's handoff** (`[time.cpu] lock_handoff_ns`): a cache line handed between two
//!   threads in turn (each waits for the other's store, as a queued spinlock hands over to
//!   the next waiter). A `fetch_add` on one cache line by two threads at once against one
//!   thread alone is written beside it as a comment. With one CPU these are not measured.
//!
//! - **The host kernel's own work** (`[time] syscall_ns`, `minor_fault_ns`,
//!   `reclaim_page_ns`, `rstat_flush_memcg_ns`, a bound on `scan_page_ns` +
//!   `rmap_walk_ns`, and `[time.cpu] tlb_flush_ipi_ns`): a system call, minor faults,
//!   page-cache reclaim by `MADV_PAGEOUT` and `POSIX_FADV_DONTNEED`, an rstat flush and a
//!   TLB flush of another CPU (`mprotect()` of a page a thread there is loading), each made
//!   to happen on the running kernel and timed in the thread's CPU time;
//!   `calibrate/kernel.rs` says what each includes. With one CPU there is no remote flush.
//!
//! Figures depend on the host, its load and its frequency scaling: measure on an idle
//! machine, and compare only figures from the same host.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};

#[cfg(target_os = "linux")]
mod kernel;

const PAGE: usize = 4096;

/// What to measure and where to write it.
pub struct Options<'a> {
    /// Fraction of each page that is zeros (the rest random), 0 to 1.
    pub compressibility: f64,
    /// The zram algorithm whose figures go into `[time.swap]`.
    pub algorithm: &'a str,
    /// Fewer and shorter batches (for tests and a quick look): noisier figures.
    pub quick: bool,
    /// Where to write the TOML; `None` or "-": standard output.
    pub out: Option<&'a Path>,
    /// The directory of the scratch file the page-cache measurements use; `None`: the
    /// system's temporary directory.
    pub scratch: Option<&'a Path>,
}

/// The algorithms `--algorithm` takes.
pub const ALGORITHMS: &[&str] = &["lz4", "zstd"];

/// One measured figure: the median time per repetition, the fastest and slowest batch's,
/// and what the batches were.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub batches: usize,
    pub reps: usize,
}

impl Figure {
    /// The figure of batches that took `per_rep` nanoseconds a repetition (at least one).
    fn of(mut per_rep: Vec<f64>, reps: usize) -> Figure {
        per_rep.sort_by(f64::total_cmp);
        let (min_ns, max_ns) = (per_rep[0], per_rep[per_rep.len() - 1]);
        Figure { median_ns: per_rep[per_rep.len() / 2], min_ns, max_ns, batches: per_rep.len(), reps }
    }
}

/// Runs `f` (which does `reps` repetitions) `batches` times and keeps the median time per
/// repetition; one untimed run first warms caches and frequency.
fn measure(batches: usize, reps: usize, mut f: impl FnMut()) -> Figure {
    f();
    let t: Vec<f64> = (0..batches)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_nanos() as f64 / reps as f64
        })
        .collect();
    Figure::of(t, reps)
}

/// A small seeded generator for the pages' random bytes (the figures must not depend on
/// which random bytes, only on how many).
fn pages_of(compressibility: f64, n: usize) -> Vec<u8> {
    let mut rng = pagelab_host::xorshift::XorShift64::new(0x2545_F491_4F6C_DD1D);
    let zeros = (compressibility * PAGE as f64).round() as usize;
    let mut buf = vec![0u8; n * PAGE];
    for page in buf.chunks_exact_mut(PAGE) {
        for chunk in page[zeros..].chunks_mut(8) {
            let r = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }
    buf
}

/// memcpy of a page, out of the caches and in them.
fn copy_page(quick: bool) -> (Figure, Figure) {
    let size = if quick { 8 << 20 } else { 64 << 20 };
    // The full size is larger than a server's last-level cache; --quick's is not, so its
    // figure is closer to the cached copy.
    let src = pages_of(0.0, size / PAGE);
    let mut dst = vec![0u8; size];
    let pages = size / PAGE;
    let batches = if quick { 3 } else { 9 };
    let cold = measure(batches, pages, || {
        for (d, s) in dst.chunks_exact_mut(PAGE).zip(src.chunks_exact(PAGE)) {
            d.copy_from_slice(black_box(s));
        }
        black_box(&mut dst);
    });
    let (a, mut b) = (src[..PAGE].to_vec(), vec![0u8; PAGE]);
    let reps = if quick { 20_000 } else { 400_000 };
    let hot = measure(batches, reps, || {
        for _ in 0..reps {
            b.copy_from_slice(black_box(&a));
            black_box(&mut b);
        }
    });
    (cold, hot)
}

/// A folio struct's part that an LRU move touches: its list links and its flags, in a
/// 64-byte line as `struct folio` keeps `lru` and `flags` in its first cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Node {
    prev: u32,
    next: u32,
    flags: u64,
}

/// Moving one folio from the head of one LRU list to the tail of another, for folio structs
/// not in the cache (`[time.cpu] lru_move_ns`): list_del() (the folio and its two
/// neighbours), list_add_tail() and the flag updates of lruvec_del_folio() and
/// lruvec_add_folio(), over 64 MiB of 64-byte nodes linked in a shuffled order. Only the
/// moves are timed: linking the nodes before each batch is not a folio's move (it took 10%
/// of the batch's time on the development host, docs/journal/2026-11-30-fio-gain-mechanisms.md).
fn lru_move(quick: bool) -> Figure {
    let n: usize = if quick { 1 << 17 } else { 1 << 20 };
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = pagelab_host::xorshift::XorShift64::new(0x9E37_79B9_7F4A_7C15);
    for i in (1..n).rev() {
        order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let mut nodes = vec![Node::default(); n];
    let batches = if quick { 3 } else { 7 };
    // One untimed batch first, as measure() runs one, to warm the caches and the frequency.
    let per_rep = (0..=batches)
        .map(|_| {
            link_in_order(&mut nodes, &order);
            let s = Instant::now();
            move_all(&mut nodes, order[0]);
            s.elapsed().as_nanos() as f64 / n as f64
        })
        .skip(1)
        .collect();
    Figure::of(per_rep, n)
}

/// No node: the end of a list.
const NIL: u32 = u32::MAX;

/// Links every node into one list (list A), in `order`.
fn link_in_order(nodes: &mut [Node], order: &[u32]) {
    for (k, &i) in order.iter().enumerate() {
        let node = &mut nodes[i as usize];
        node.prev = if k == 0 { NIL } else { order[k - 1] };
        node.next = order.get(k + 1).copied().unwrap_or(NIL);
        node.flags = 1;
    }
}

/// Moves every node of the list that starts at `head` to the tail of another, one by one.
fn move_all(nodes: &mut [Node], mut head: u32) {
    let mut tail = NIL;
    while head != NIL {
        let i = head as usize;
        let next = nodes[i].next;
        if next != NIL {
            nodes[next as usize].prev = NIL;
        }
        head = next;
        nodes[i].prev = tail;
        nodes[i].next = NIL;
        nodes[i].flags ^= 0b11;
        if tail != NIL {
            nodes[tail as usize].next = i as u32;
        }
        tail = i as u32;
    }
    black_box(nodes);
}

/// cache_ext's valid-folio registry, per hook call (`[time] cache_ext_hook_ns`): each batch
/// inserts `n` folio addresses (a `struct folio` is 64 bytes apart) in one shuffled order,
/// looks them up in another and deletes them in a third, into a table sized for `n` as
/// cache_ext sizes its table for the cgroup's pages.
fn registry(quick: bool) -> Figure {
    // Even --quick keeps a table larger than a last-level cache: cache_ext's registry holds
    // a cgroup's folios, whose entries reclaim and reads reach cold.
    let n: usize = 1 << 20;
    let mut rng = pagelab_host::xorshift::XorShift64::new(0x5851_F42D_4C95_7F2D);
    let mut shuffled = |seed_order: &mut Vec<u64>| {
        for i in (1..seed_order.len()).rev() {
            seed_order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        seed_order.clone()
    };
    let mut base: Vec<u64> = (0..n as u64).map(|i| 0xffff_ea00_0000_0000 + 64 * i).collect();
    let (adds, looks, dels) = (shuffled(&mut base), shuffled(&mut base), shuffled(&mut base));
    let mut table: std::collections::HashMap<u64, u32> = std::collections::HashMap::with_capacity(n);
    let batches = if quick { 3 } else { 7 };
    measure(batches, 3 * n, || {
        for (i, &a) in adds.iter().enumerate() {
            table.insert(a, i as u32);
        }
        let mut hits = 0u64;
        for a in &looks {
            hits += table.contains_key(a) as u64;
        }
        for a in &dels {
            table.remove(a);
        }
        black_box((hits, &mut table));
    })
}

/// An xarray node as the kernel lays one out (`struct xa_node`, 576 bytes on 64-bit): the
/// header's counts, then 64 slots.
#[derive(Clone)]
#[repr(C, align(64))]
struct XaNode {
    count: u32,
    nr_values: u32,
    parent: u64,
    _header: [u64; 6],
    slots: [u64; 64],
}

/// One store into a mapping's xarray at a random index, for nodes not in the cache
/// (`[time.cpu] xa_store_ns`): the walk from the root through the nodes of a tree of 64-slot
/// nodes over 4 Mi slots (the page cache of a 16 GiB file, 37 MiB of leaf nodes), the slot's
/// store and the leaf's count, as xas_store() does for a page-cache insert or delete.
fn xa_store(quick: bool) -> Figure {
    const SHIFT: u32 = 6;
    // Even --quick keeps the tree larger than a last-level cache: a tree that fits would time
    // cached stores (9 ns on the development host), not the cold ones reclaim makes.
    let (levels, slots): (u32, u64) = (4, 1 << 22);
    let empty = XaNode { count: 0, nr_values: 0, parent: 0, _header: [0; 6], slots: [0; 64] };
    // Every node, root first, level by level; an inner slot holds its child's index.
    let mut nodes = vec![empty; 1];
    let mut level_start = 0usize;
    for level in 1..levels {
        let width = ((slots >> (SHIFT * (levels - level))) as usize).max(1);
        let first_child = nodes.len();
        nodes.resize(first_child + width, nodes[0].clone());
        for (k, parent) in (level_start..first_child).enumerate() {
            for j in 0..64 {
                let child = first_child + k * 64 + j;
                if child < nodes.len() {
                    nodes[parent].slots[j] = child as u64;
                    nodes[child].parent = parent as u64;
                }
            }
        }
        level_start = first_child;
    }
    let mut rng = pagelab_host::xorshift::XorShift64::new(0xD6E8_FEB8_6659_FD93);
    let n: usize = if quick { 1 << 16 } else { 1 << 20 };
    let indexes: Vec<u64> = (0..n).map(|_| rng.next_u64() % slots).collect();
    let batches = if quick { 3 } else { 7 };
    let mut value = 1u64;
    measure(batches, n, || {
        for &index in &indexes {
            let mut node = 0usize;
            for level in (1..levels).rev() {
                node = nodes[node].slots[((index >> (SHIFT * level)) & 63) as usize] as usize;
            }
            let leaf = &mut nodes[node];
            let slot = &mut leaf.slots[(index & 63) as usize];
            leaf.count = leaf.count.wrapping_add((*slot == 0) as u32);
            *slot = value;
            value = value.wrapping_add(2) | 1;
        }
        black_box(&mut nodes);
    })
}

/// Compression and decompression of one page by `algorithm`, and the compressed size's
/// mean fraction of a page.
struct Codec {
    compress: Figure,
    decompress: Figure,
    ratio: f64,
}

/// One page's compression into a buffer, or decompression into a page: the bytes written.
type PageCodec<'a> = Box<dyn FnMut(&[u8], &mut [u8]) -> Result<usize> + 'a>;

fn codec(algorithm: &str, compressibility: f64, quick: bool) -> Result<Codec> {
    let (compress, decompress): (PageCodec, PageCodec) = match algorithm {
        "lz4" => (
            Box::new(|p, out| lz4_flex::block::compress_into(p, out).context("lz4 compression")),
            Box::new(|c, page| lz4_flex::block::decompress_into(c, page).context("lz4 decompression")),
        ),
        "zstd" => {
            let mut c = zstd::bulk::Compressor::new(3).context("zstd compressor")?;
            let mut d = zstd::bulk::Decompressor::new().context("zstd decompressor")?;
            (
                Box::new(move |p, out| c.compress_to_buffer(p, out).context("zstd compression")),
                Box::new(move |cmp, page| d.decompress_to_buffer(cmp, page).context("zstd decompression")),
            )
        }
        other => bail!("`{other}` is not an algorithm calibrate measures (use {})", ALGORITHMS.join(" or ")),
    };
    time_codec(algorithm, compressibility, quick, compress, decompress)
}

/// Compresses every page once (keeping the sizes), checks that each decompresses to itself,
/// then times compression and decompression of all of them over `rounds` rounds.
fn time_codec(algorithm: &str, compressibility: f64, quick: bool, mut compress: PageCodec, mut decompress: PageCodec) -> Result<Codec> {
    let n = if quick { 64 } else { 1024 };
    let pages = pages_of(compressibility, n);
    let batches = if quick { 3 } else { 9 };
    let rounds = if quick { 2 } else { 8 };
    let bound = lz4_flex::block::get_maximum_output_size(PAGE).max(zstd::zstd_safe::compress_bound(PAGE));
    let mut out = vec![0u8; n * bound];
    let mut sizes = vec![0usize; n];
    let mut back = vec![0u8; PAGE];
    for (i, p) in pages.chunks_exact(PAGE).enumerate() {
        sizes[i] = compress(p, &mut out[i * bound..(i + 1) * bound])?;
        let got = decompress(&out[i * bound..i * bound + sizes[i]], &mut back)?;
        if got != PAGE || back != p {
            bail!("{algorithm} did not give back page {i}");
        }
    }
    let compressed = measure(batches, n * rounds, || {
        for _ in 0..rounds {
            for (i, p) in pages.chunks_exact(PAGE).enumerate() {
                let _ = black_box(compress(black_box(p), &mut out[i * bound..(i + 1) * bound]));
            }
        }
    });
    let decompressed = measure(batches, n * rounds, || {
        for _ in 0..rounds {
            for i in 0..n {
                let _ = black_box(decompress(black_box(&out[i * bound..i * bound + sizes[i]]), &mut back));
            }
        }
    });
    Ok(Codec { compress: compressed, decompress: decompressed, ratio: sizes.iter().sum::<usize>() as f64 / (n * PAGE) as f64 })
}

/// Two threads hand one cache line back and forth: each waits until the counter is its
/// turn, then advances it. Returns the time per handoff.
fn handoff(quick: bool) -> Figure {
    let n: u64 = if quick { 20_000 } else { 200_000 };
    let batches = if quick { 3 } else { 7 };
    measure(batches, n as usize, || {
        let turn = Arc::new(AtomicU64::new(0));
        let other = {
            let turn = Arc::clone(&turn);
            std::thread::spawn(move || {
                for k in 0..n {
                    while turn.load(Ordering::Acquire) != 2 * k + 1 {
                        std::hint::spin_loop();
                    }
                    turn.store(2 * k + 2, Ordering::Release);
                }
            })
        };
        for k in 0..n {
            while turn.load(Ordering::Acquire) != 2 * k {
                std::hint::spin_loop();
            }
            turn.store(2 * k + 1, Ordering::Release);
        }
        other.join().expect("the handoff thread ended early");
    })
}

/// `fetch_add` on one cache line by `threads` threads at once; the time per operation, as
/// the line's owners see it (total operations over the elapsed time, times the threads).
fn shared_atomic(threads: usize, quick: bool) -> Figure {
    let n: u64 = if quick { 50_000 } else { 500_000 };
    let batches = if quick { 3 } else { 7 };
    measure(batches, n as usize, || {
        let line = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let line = Arc::clone(&line);
                std::thread::spawn(move || {
                    for _ in 0..n {
                        line.fetch_add(1, Ordering::AcqRel);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().expect("an atomic thread ended early");
        }
    })
}

/// The host's processor, from /proc/cpuinfo where there is one.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| "unknown processor".into())
}

fn ns(f: Figure) -> u64 {
    f.median_ns.round() as u64
}

fn how(f: Figure) -> String {
    format!("median of {} batches of {} ({:.1} ns; {:.1} to {:.1})", f.batches, f.reps, f.median_ns, f.min_ns, f.max_ns)
}

/// Measures everything and returns the TOML text.
pub fn measure_all(o: &Options) -> Result<String> {
    if !(0.0..=1.0).contains(&o.compressibility) {
        bail!("--compressibility {} is outside 0..1 (the fraction of each page that is zeros)", o.compressibility);
    }
    if !ALGORITHMS.contains(&o.algorithm) {
        bail!("--algorithm `{}` is not measured (use {})", o.algorithm, ALGORITHMS.join(" or "));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (cold, hot) = copy_page(o.quick);
    let lz4 = codec("lz4", o.compressibility, o.quick)?;
    let zstd = codec("zstd", o.compressibility, o.quick)?;
    let chosen = if o.algorithm == "zstd" { &zstd } else { &lz4 };

    let mut t = String::new();
    let w = &mut t;
    writeln!(
        w,
        "# pagelab calibrate {}: measured on this host ({}, {cpus} CPUs){}.",
        env!("CARGO_PKG_VERSION"),
        cpu_name(),
        if o.quick { ", --quick" } else { "" }
    )?;
    writeln!(w, "# Every figure is the median time per repetition over timed batches (docs/scenarios.md,")?;
    writeln!(w, "# \"Costs measured on your host\"). Copy the tables into a scenario, or append this file")?;
    writeln!(w, "# to one that has no [time] table of its own.")?;
    writeln!(w)?;
    let reg = registry(o.quick);
    writeln!(w, "[time]")?;
    writeln!(w, "# cache_ext's valid-folio registry, an insert, lookup or delete of a cold folio (the")?;
    writeln!(w, "# BPF call into the policy is not measured): {}", how(reg))?;
    writeln!(w, "cache_ext_hook_ns = {}", ns(reg).max(1))?;
    writeln!(w, "# memcpy of a 4 KiB page between buffers larger than the last-level cache: {}", how(cold))?;
    writeln!(w, "# (between two cached pages: {} ns, {})", ns(hot), how(hot))?;
    writeln!(w, "copy_page_ns = {}", ns(cold).max(1))?;
    write_kernel(w, o)?;
    writeln!(w)?;
    let pct = (o.compressibility * 100.0).round();
    writeln!(w, "# A zram swap device (machine.swap.device = \"zram\"), {} on pages {pct}% zeros and", o.algorithm)?;
    writeln!(w, "# the rest random, compressed to {:.1}% of a page on average:", chosen.ratio * 100.0)?;
    writeln!(w, "#   compression per page (a swap-out): {}", how(chosen.compress))?;
    writeln!(w, "#   decompression per page (a swap-in): {}", how(chosen.decompress))?;
    let other = if o.algorithm == "zstd" { ("lz4", &lz4) } else { ("zstd (level 3)", &zstd) };
    writeln!(
        w,
        "# {}: compression {} ns, decompression {} ns a page, to {:.1}% of a page.",
        other.0,
        ns(other.1.compress),
        ns(other.1.decompress),
        other.1.ratio * 100.0
    )?;
    writeln!(w, "# lzo-rle (6.1's and 6.12's zram default) is not measured: no permissively licensed")?;
    writeln!(w, "# LZO1X-1 implementation exists as a crate.")?;
    writeln!(w, "[time.swap]")?;
    writeln!(w, "read_latency_ns = {}", ns(chosen.decompress).max(1))?;
    writeln!(w, "write_latency_ns = {}", ns(chosen.compress).max(1))?;
    writeln!(w, "page_transfer_ns = 0")?;
    writeln!(w)?;
    // The list move is timed before the threads start (it wants a quiet cache).
    let mv = lru_move(o.quick);
    writeln!(w, "# Locks, read with machine.cpus >= 2:")?;
    writeln!(w, "[time.cpu]")?;
    writeln!(w, "# a cold 64-byte folio line moved between two LRU lists: {}", how(mv))?;
    writeln!(w, "lru_move_ns = {}", ns(mv).max(1))?;
    writeln!(w, "# a page moved between a zone's buddy and per-CPU lists: the same cold list move")?;
    writeln!(w, "zone_move_ns = {}", ns(mv).max(1))?;
    let xa = xa_store(o.quick);
    writeln!(w, "# a store at a random index of a radix tree of 64-slot nodes, cold: {}", how(xa))?;
    writeln!(w, "xa_store_ns = {}", ns(xa).max(1))?;
    let one = shared_atomic(1, o.quick);
    writeln!(w, "# a swap slot under si->lock: the cluster lock's lock and unlock, two fetch_add on")?;
    writeln!(w, "# one line by one thread: {}", how(one))?;
    writeln!(w, "swap_slot_ns = {}", (2 * ns(one)).max(1))?;
    if cpus < 2 {
        writeln!(w, "# the lock handoff is not measured: this host has one CPU (the default stays).")?;
    } else {
        let h = handoff(o.quick);
        let two = shared_atomic(2, o.quick);
        writeln!(w, "# a cache line handed between two threads in turn: {}", how(h))?;
        writeln!(w, "lock_handoff_ns = {}", ns(h).max(1))?;
        writeln!(w, "# fetch_add on one line, one thread: {} ns; two threads at once: {} ns an operation", ns(one), ns(two))?;
    }
    write_remote_flush(w, o.quick)?;
    Ok(t)
}

/// The host kernel's own costs (`kernel`), into the `[time]` table being written.
#[cfg(target_os = "linux")]
fn write_kernel(w: &mut String, o: &Options) -> std::fmt::Result {
    let scratch = o.scratch.map_or_else(std::env::temp_dir, Path::to_path_buf);
    kernel::write_table(w, &kernel::measure_kernel(&scratch, o.quick))
}

#[cfg(not(target_os = "linux"))]
fn write_kernel(w: &mut String, _: &Options) -> std::fmt::Result {
    writeln!(w, "# The host kernel's own costs are measured on Linux only; their defaults stay.")
}

/// A remote TLB flush's round trip (`kernel::remote_flush`), into the `[time.cpu]` table.
#[cfg(target_os = "linux")]
fn write_remote_flush(w: &mut String, quick: bool) -> std::fmt::Result {
    kernel::write_remote_flush(w, &kernel::remote_flush(quick))
}

#[cfg(not(target_os = "linux"))]
fn write_remote_flush(w: &mut String, _: bool) -> std::fmt::Result {
    writeln!(w, "# tlb_flush_ipi_ns is measured on Linux only; its default stays.")
}

/// `pagelab calibrate`: measures and writes the TOML, to a file as every output of the
/// command line is written (claimed before the measurement, put in place only when whole:
/// `output::Files`) or to standard output.
pub fn run(o: &Options) -> Result<()> {
    let out = o.out.map(|p| crate::output::Files::default().output("--out", p, true)).transpose()?;
    let text = measure_all(o)?;
    match out {
        Some(f) if !f.is_stdout() => {
            f.write(text.as_bytes())?;
            eprintln!("[calibrate] wrote {}", o.out.expect("a file output has a path").display());
            Ok(())
        }
        _ => out!("{text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_the_declared_share_of_zeros() {
        let p = pages_of(0.75, 4);
        for page in p.chunks_exact(PAGE) {
            assert!(page[..3072].iter().all(|&b| b == 0));
            // Random bytes: a run of 64 zeros in the random part would be astronomically rare.
            assert!(page[3072..].windows(64).all(|w| w.iter().any(|&b| b != 0)));
        }
    }

    #[test]
    fn more_zeros_compress_smaller_with_both_algorithms() {
        for alg in ALGORITHMS {
            let a = codec(alg, 0.25, true).unwrap();
            let b = codec(alg, 0.75, true).unwrap();
            assert!(b.ratio < a.ratio, "{alg}: {} !< {}", b.ratio, a.ratio);
            // Random bytes do not compress: a page a quarter zeros keeps most of its size.
            assert!(a.ratio > 0.7 && b.ratio < 0.35, "{alg}: {} {}", a.ratio, b.ratio);
        }
    }

    #[test]
    fn a_compressibility_outside_0_to_1_is_refused() {
        let o = Options { compressibility: 1.5, algorithm: "lz4", quick: true, out: None, scratch: None };
        let e = measure_all(&o).unwrap_err().to_string();
        assert!(e.contains("--compressibility 1.5"), "{e}");
        let o = Options { compressibility: 0.5, algorithm: "lzo", quick: true, out: None, scratch: None };
        assert!(measure_all(&o).unwrap_err().to_string().contains("`lzo`"));
    }
}
