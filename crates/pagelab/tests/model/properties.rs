//! Invariants on random workloads: every resident page is on exactly one list or batch, the
//! counts add up, pgsteal never exceeds pgscan, no refault comes without an eviction, and
//! a cgroup stays within memory.max.

use crate::common;
use common::*;

use pagelab::mm::vmstat::Ev;
use pagelab::policy::Policy;
use pagelab::sim::Machine;
use proptest::prelude::*;

const KINDS: [&str; 6] = ["file-read", "file-write", "mmap-read", "mmap-write", "anon-write", "anon-rw"];
const DISTS: [&str; 5] = ["seq", "uniform", "zipf:0.9", "hotcold:0.2:0.8", "pareto:0.3"];
const SWAPS: [&str; 4] = ["none", "disk", "ssd", "zram"];

#[derive(Debug, Clone)]
struct Wl {
    kind: usize,
    dist: usize,
    size_pages: u32,
    ops: u32,
    limited: bool,
    block: u32,
}

fn wl() -> impl Strategy<Value = Wl> {
    (0..KINDS.len(), 0..DISTS.len(), 64u32..3000, 100u32..1500, any::<bool>(), prop_oneof![Just(1u32), Just(1), Just(4)])
        .prop_map(|(kind, dist, size_pages, ops, limited, block)| Wl { kind, dist, size_pages, ops, limited, block })
}

fn scenario_text(kernel: &str, memory_pages: u32, swap: usize, limit_pages: u32, wls: &[Wl]) -> String {
    let swap = match SWAPS[swap] {
        "none" => String::new(),
        d => format!("swap = {{ device = \"{d}\", size = \"{}p\" }}\n", memory_pages),
    };
    let mut s = format!("[machine]\nmemory = \"{memory_pages}p\"\nkernel = \"{kernel}\"\n{swap}\n[[cgroup]]\npath = \"/lim\"\nmax = \"{limit_pages}p\"\n");
    for (i, w) in wls.iter().enumerate() {
        let kind = KINDS[w.kind];
        let size_key = if kind.starts_with("anon") { "size" } else { "file_size" };
        s += &format!(
            "[[workload]]\nname = \"w{i}\"\ncgroup = \"{}\"\nkind = \"{kind}\"\n{size_key} = \"{}p\"\nblock_size = \"{}p\"\ndistribution = \"{}\"\nops = {}\nseed = {i}\n",
            if w.limited { "/lim" } else { "/" },
            w.size_pages.max(w.block),
            w.block,
            DISTS[w.dist],
            w.ops
        );
    }
    s
}

/// Runs a machine to the end, checking the invariants every 16 operations.
fn run_checked<P: Policy>(mut m: Machine<P>, text: &str, v612: bool) -> Result<(), TestCaseError> {
    let lru_gen = m.policy.name() == "mglru";
    let lim = m.mm.memcgs.find("/lim").unwrap();
    let max = m.mm.memcgs.get(lim).max;
    let mut n = 0u64;
    while m.step() {
        n += 1;
        if n.is_multiple_of(16) {
            if let Err(e) = m.check() {
                prop_assert!(false, "after {} ops: {}\n{}", n, e, text);
            }
        }
        let e = &m.mm.events;
        prop_assert!(e.get(Ev::PgStealFile) <= e.get(Ev::PgScanFile));
        prop_assert!(e.get(Ev::PgStealAnon) <= e.get(Ev::PgScanAnon));
        prop_assert!(e.get(Ev::WorkingsetRefaultFile) <= e.get(Ev::PgStealFile), "file refault without eviction");
        prop_assert!(e.get(Ev::WorkingsetRefaultAnon) <= e.get(Ev::PgStealAnon), "anon refault without eviction");
        if lru_gen && !v612 {
            // 6.1 MGLRU counts activations when sort_folio() protects a tier, not on refault.
            prop_assert!(e.get(Ev::WorkingsetRestoreFile) <= e.get(Ev::WorkingsetRefaultFile));
        } else {
            prop_assert!(e.get(Ev::WorkingsetActivateFile) <= e.get(Ev::WorkingsetRefaultFile));
            prop_assert!(e.get(Ev::WorkingsetRestoreFile) <= e.get(Ev::WorkingsetActivateFile));
        }
        if m.mm.oom_kills.is_empty() {
            prop_assert!(m.mm.memcgs.get(lim).usage <= max, "/lim over its limit:\n{}", text);
        }
    }
    m.finish();
    if let Err(e) = m.check() {
        prop_assert!(false, "at the end: {}\n{}", e, text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn classic_invariants_hold_on_random_workloads(
        v612 in any::<bool>(),
        memory_pages in 1024u32..4096,
        swap in 0..SWAPS.len(),
        limit_frac in 20u32..90,
        wls in proptest::collection::vec(wl(), 1..4),
    ) {
        let kernel = if v612 { "6.12" } else { "6.1" };
        let text = scenario_text(kernel, memory_pages, swap, memory_pages * limit_frac / 100, &wls);
        run_checked(classic(&text), &text, v612)?;
    }

    /// MGLRU: 2..4 generations per type, every folio on exactly the generation list its
    /// flags name, generation sizes and LRU sizes that add up (Policy::check), plus the
    /// counter invariants above.
    #[test]
    fn mglru_invariants_hold_on_random_workloads(
        v612 in any::<bool>(),
        memory_pages in 1024u32..4096,
        swap in 0..SWAPS.len(),
        limit_frac in 20u32..90,
        wls in proptest::collection::vec(wl(), 1..4),
        walks in any::<bool>(),
        refault_distance in any::<bool>(),
    ) {
        let kernel = if v612 { "6.12" } else { "6.1" };
        let mut text = scenario_text(kernel, memory_pages, swap, memory_pages * limit_frac / 100, &wls);
        text = text.replacen("[machine]\n", "[machine]\npolicy = \"mglru\"\n", 1);
        text += &format!("[mglru]\nwalks = {walks}\nrefault_distance = {refault_distance}\n");
        run_checked(mglru(&text), &text, v612)?;
    }
}
