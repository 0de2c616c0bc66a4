//! MGLRU-FG (`[mglru] fg = true`): Kairui Song's "frequency guided workingset promotion"
//! (RFC 06/32 of "mm/mglru: MGLRU-FG and refault distance support", May 2026) on 7.3's MGLRU.
//! Each test is named after one rule of policy/lru_gen/fg.rs or mm/swap.rs's count helpers;
//! sources and certainty: docs/journal/2026-11-29-mglru-fg.md.

use crate::common;
use common::*;

use pagelab::mm::folio::{pg, Pfn};
use pagelab::mm::memcontrol::ROOT_MEMCG;
use pagelab::mm::swap::{fg_refs, fg_tier, fg_with_refs, FgReset};
use pagelab::policy::lru_gen::{folio_gen, LruGen};
use pagelab::policy::Policy;
use pagelab::sim::Machine;
use pagelab::Scenario;

/// A 7.3 MGLRU machine with one 64-page file (no memory pressure) and `[mglru]` as given.
fn fg_machine(keys: &str) -> Machine<LruGen> {
    mglru(&format!("{}\n[mglru]\n{keys}\n", one_file_scenario("64M", "7.3", "mglru", 64)))
}

/// Reads page 7 once and drains the per-CPU batch, so the folio sits on its generation list.
fn first_read(m: &mut Machine<LruGen>) -> Pfn {
    m.apply(0, read(0, 7));
    m.drain();
    pfn_of(m, 0, 0, 7).expect("cached")
}

/// One more buffered read of page 7 (a read of page 9 before it, so that filemap_read()
/// counts it as a new access), and the folio's (generation, count) after it.
fn access(m: &mut Machine<LruGen>, pfn: Pfn) -> (usize, u32) {
    m.apply(0, read(0, 9));
    m.apply(0, read(0, 7));
    let flags = m.mm.folios.get(pfn).flags;
    (folio_gen(flags).expect("on a generation list"), fg_refs(flags))
}

/// The generation of `seq` (lru_gen_from_seq()).
fn gen_of_seq(seq: u64) -> usize {
    (seq % 4) as usize
}

#[test]
fn access_count_derives_pg_referenced_and_pg_workingset_and_the_tier() {
    // 7e29194b's lru_refs_set_flags()/lru_tier_from_refs(): the count replaces both flags,
    // which read count >= 1 and >= 2; tier 0 below 2, then fls(refs - 1).
    let mut got = Vec::new();
    for refs in 0..=7 {
        let f = fg_with_refs(pg::LRU | pg::DIRTY, refs);
        assert_eq!(fg_refs(f), refs);
        assert_eq!(f & (pg::LRU | pg::DIRTY), pg::LRU | pg::DIRTY, "other flags stay");
        got.push((f & pg::REFERENCED != 0, f & pg::WORKINGSET != 0, fg_tier(refs)));
    }
    let want = [(false, false, 0), (true, false, 0), (true, true, 1), (true, true, 2), (true, true, 2), (true, true, 3), (true, true, 3), (true, true, 3)];
    assert_eq!(got, want);
    assert_eq!(fg_refs(fg_with_refs(fg_with_refs(0, 7), 1)), 1, "a smaller count clears the high bit");
}

#[test]
fn refs_of_two_or_more_set_workingset() {
    // 06/32 [R]: a count >= 2 (LRU_REFS_WORKINGSET) is the workingset. Stock 7.3 sets
    // PG_workingset only after five accesses (lru_gen_inc_refs()).
    let mut m = fg_machine("fg = true");
    let pfn = first_read(&mut m);
    let flags = m.mm.folios.get(pfn).flags;
    assert_eq!((flags & pg::REFERENCED != 0, flags & pg::WORKINGSET != 0), (true, false), "one access: referenced only");
    access(&mut m, pfn);
    let flags = m.mm.folios.get(pfn).flags;
    assert_eq!((flags & pg::REFERENCED != 0, flags & pg::WORKINGSET != 0), (true, true), "two accesses: workingset");
    m.check().unwrap();

    let mut stock = mglru(&one_file_scenario("64M", "7.3", "mglru", 64));
    let pfn = first_read(&mut stock);
    access(&mut stock, pfn);
    assert_eq!(stock.mm.folios.get(pfn).flags & pg::WORKINGSET, 0, "stock 7.3: not yet after two");
}

#[test]
fn a_folio_accessed_once_is_added_to_the_oldest_generation() {
    // 7e29194b's lru_gen_folio_seq(): only a workingset folio goes to the second oldest; stock
    // 7.3 puts a PG_referenced one there too.
    let mut got = Vec::new();
    for fg in [false, true] {
        let mut m = fg_machine(&format!("fg = {fg}"));
        let pfn = first_read(&mut m);
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        let gen = folio_gen(m.mm.folios.get(pfn).flags).unwrap();
        got.push((gen == gen_of_seq(lv.min_seq[1]), gen == gen_of_seq(lv.min_seq[1] + 1)));
    }
    assert_eq!(got, [(false, true), (true, false)], "(oldest, second oldest): stock, then FG");
}

#[test]
fn a_workingset_folio_in_the_oldest_generation_moves_up_on_access() {
    // 01f703a6's folio_inc_lru_refs() and 7e29194b's tier comment (3): the access that makes
    // the count 2 moves a folio of the oldest generation to the next one; outside the oldest
    // generation a count below LRU_REFS_MAX moves nothing.
    let mut m = fg_machine("fg = true");
    let pfn = first_read(&mut m);
    let oldest = gen_of_seq(m.policy.lv[ROOT_MEMCG as usize].min_seq[1]);
    assert_eq!(folio_gen(m.mm.folios.get(pfn).flags), Some(oldest));
    assert_eq!(access(&mut m, pfn), ((oldest + 1) % 4, 2));
    assert_eq!(access(&mut m, pfn), ((oldest + 1) % 4, 3), "not in the oldest generation: it stays");
    m.check().unwrap();
}

#[test]
fn a_folio_accessed_past_lru_refs_max_moves_one_generation_up() {
    // 06/32 [R]: an access beyond LRU_REFS_MAX (7) promotes the folio into the next
    // generation and resets its count (fg_reset "zero": 8 accesses a promotion); it never goes
    // past the youngest generation, where the count stays at LRU_REFS_MAX.
    let mut m = fg_machine("fg = true");
    let pfn = first_read(&mut m);
    let lv = &m.policy.lv[ROOT_MEMCG as usize];
    let (oldest, youngest) = (gen_of_seq(lv.min_seq[1]), gen_of_seq(lv.max_seq));
    assert_eq!(lv.max_seq - lv.min_seq[1], 3, "four generations: room for two promotions");
    let history: Vec<(usize, u32)> = (0..25).map(|_| access(&mut m, pfn)).collect();
    let g = |k: usize| (oldest + k) % 4;
    let mut want = vec![(g(1), 2), (g(1), 3), (g(1), 4), (g(1), 5), (g(1), 6), (g(1), 7), (g(2), 0)];
    want.extend((1..=7).map(|r| (g(2), r)));
    want.push((g(3), 0));
    want.extend((1..=7).map(|r| (g(3), r)));
    want.extend([(g(3), 7), (g(3), 7), (g(3), 7)]);
    assert_eq!(g(3), youngest);
    assert_eq!(history, want);
    m.check().unwrap();
}

#[test]
fn fg_reset_chooses_the_count_a_promoted_folio_starts_from() {
    // The development tree resets to LRU_REFS_WORKINGSET (7e29194b's comment) or
    // LRU_REFS_PROTECTED (01f703a6's code); 06/32's text to zero.
    for (reset, want) in [("zero", 0), ("workingset", 2), ("protected", 4)] {
        let mut m = fg_machine(&format!("fg = true\nfg_reset = \"{reset}\""));
        let pfn = first_read(&mut m);
        let history: Vec<(usize, u32)> = (0..7).map(|_| access(&mut m, pfn)).collect();
        let oldest = gen_of_seq(m.policy.lv[ROOT_MEMCG as usize].min_seq[1]);
        assert_eq!(history[6], ((oldest + 2) % 4, want), "{reset}: {history:?}");
        m.check().unwrap();
    }
    assert_eq!(FgReset::default(), FgReset::Zero);
}

#[test]
fn sort_folio_protection_keeps_a_count_of_at_most_lru_refs_workingset() {
    // 7e29194b's tier comment: "a promotion / protect will reset a folio with higher referenced
    // count to LRU_REFS_WORKINGSET" (folio_inc_gen()); a lower count stays.
    for (start, want) in [(6, 2), (1, 1)] {
        let mut m = fg_machine("fg = true");
        let pfn = first_read(&mut m);
        let f = m.mm.folios.get_mut(pfn);
        f.flags = fg_with_refs(f.flags, start);
        let new = m.policy.folio_inc_gen(&mut m.mm, pfn, false);
        let flags = m.mm.folios.get(pfn).flags;
        assert_eq!((folio_gen(flags), fg_refs(flags)), (Some(new), want), "count {start}");
    }
}

#[test]
fn fg_composes_with_kairui_2026_whose_shadow_gives_the_whole_count_back() {
    // The 2026 token keeps refs >> 1 above the stamp and W = refs & 1 (30/32 [R], [DEV]
    // 7e29194b): with `mglru_refs = "shadow"` (2026's default) a refault gets the folio's
    // count back, all of FG's 0..7, and the tier is FG's.
    for refs in [1u32, 2, 5, 7] {
        let mut m = fg_machine("fg = true\n[workingset]\nrefault_model = \"kairui-2026\"");
        let pfn = first_read(&mut m);
        let f = m.mm.folios.get_mut(pfn);
        f.flags = fg_with_refs(f.flags, refs);
        let shadow = m.policy.workingset_eviction(&mut m.mm, pfn, ROOT_MEMCG);
        let f = m.mm.folios.get_mut(pfn);
        f.flags = fg_with_refs(f.flags, 0);
        let before = m.policy.lv[ROOT_MEMCG as usize].refaulted[1];
        m.policy.workingset_refault(&mut m.mm, pfn, shadow);
        assert_eq!(fg_refs(m.mm.folios.get(pfn).flags), refs, "count {refs} comes back");
        let after = m.policy.lv[ROOT_MEMCG as usize].refaulted[1];
        let tier = (0..4).find(|&t| after[t] != before[t]).expect("a refault in the window feeds its tier");
        assert_eq!(tier, fg_tier(refs), "count {refs}");
        m.check().unwrap();
    }
}

/// examples/cache_ext/get-scan.toml on 7.3's MGLRU with `--set`s: (GET ops/s, file refaults,
/// the report).
fn get_scan(sets: &[&str]) -> (f64, u64, pagelab::Report) {
    let text = include_str!("../../../../examples/cache_ext/get-scan.toml");
    let mut all = vec!["machine.kernel=\"7.3\"".to_string(), "machine.policy=\"mglru\"".to_string()];
    all.extend(sets.iter().map(|s| s.to_string()));
    let s = Scenario::parse(text, "get-scan.toml", "get-scan", &all).unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let get = r.tasks.iter().find(|t| t.name == "get").unwrap().ops_per_s;
    (get, r.vmstat["workingset_refault_file"], r)
}

#[test]
fn fg_off_by_default_changes_nothing() {
    // No `fg` and `fg = false` run the same machine; `fg = true` does not.
    let (_, _, absent) = get_scan(&[]);
    let (_, _, off) = get_scan(&["mglru.fg=false"]);
    let (_, _, on) = get_scan(&["mglru.fg=true"]);
    assert_eq!(absent.vmstat, off.vmstat);
    assert_eq!(absent.elapsed_s, off.elapsed_s);
    assert_ne!(absent.vmstat, on.vmstat, "the test can tell FG apart");
    let s = scenario(&one_file_scenario("64M", "7.3", "mglru", 64));
    assert_eq!(s.mglru_fg, None);
}

#[test]
fn fg_keeps_the_twice_read_gets_against_a_scan_of_order_0_folios() {
    // cache_ext's GET-SCAN miniature: the GETs' Zipf pages read twice are workingset under FG
    // and are promoted out of the oldest generation, where one-touch pages (the scan's) are
    // added and evicted; stock 7.3 adds a page read once to the second oldest generation with
    // them. Direction of the RFC's claim (GET/SCAN +41% over MGLRU): more GETs, fewer refaults.
    // A one-page readahead window keeps 7.3's page cache at order 0: with the default 128 KiB
    // window the scan's folios reach order 5 and FG loses (docs/journal/2026-11-29-mglru-fg.md).
    let (stock_get, stock_refaults, _) = get_scan(&["machine.read_ahead_kb=4"]);
    let (fg_get, fg_refaults, _) = get_scan(&["machine.read_ahead_kb=4", "mglru.fg=true"]);
    assert!(fg_get > 1.05 * stock_get, "GET ops/s: FG {fg_get:.0}, 7.3 {stock_get:.0}");
    assert!(fg_refaults < stock_refaults, "file refaults: FG {fg_refaults}, 7.3 {stock_refaults}");
}

#[test]
fn mglru_fg_keys_are_checked() {
    let base = one_file_scenario("64M", "7.3", "mglru", 64);
    let parse = |extra: &str, sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Scenario::parse(&format!("{base}\n{extra}\n"), "t.toml", "t", &sets)
    };
    let e = parse("[mglru]\nfg = true\n", &["machine.kernel=\"6.12\""]).unwrap_err().to_string();
    assert!(e.contains("mglru.fg") && e.contains("7.3"), "{e}");
    let e = parse("[mglru]\nfg_reset = \"zero\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("mglru.fg_reset") && e.contains("fg = true"), "{e}");
    let e = parse("[mglru]\nfg = true\nfg_reset = \"half\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("mglru.fg_reset") && e.contains("half"), "{e}");
    let e = parse("[mglru]\nfg = true\n[workingset]\nrefault_model = \"kairui-v3\"\n", &[]).unwrap_err().to_string();
    assert!(e.contains("mglru.fg") && e.contains("kairui-v3"), "{e}");
    let s = parse("[mglru]\nfg = true\nfg_reset = \"protected\"\n[workingset]\nrefault_model = \"kairui-2026\"\n", &[]).unwrap();
    assert_eq!(s.mglru_fg, Some(FgReset::Protected));
}
