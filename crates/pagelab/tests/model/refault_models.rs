//! The refault-distance models of `[workingset] refault_model` (Kairui Song's rework, RFC v3
//! of 2023 and the 2026 re-post), each rule on the smallest machine where it decides
//! something. Sources and certainty: shared/reference/kairui-refault-distance.md.

use crate::common;
use common::*;

use pagelab::mm::folio::pg;
use pagelab::mm::memcontrol::{StatItem, ROOT_MEMCG};
use pagelab::mm::vmstat::{Ev, Lru};
use pagelab::mm::workingset::{classic_eviction, classic_refault, workingset_age_nonresident};
use pagelab::policy::lru_gen::{folio_lru_refs, lru_tier_from_refs, LruGen, LvId};
use pagelab::policy::Policy;
use pagelab::sim::Machine;
use pagelab::Scenario;

/// The root memcg's lruvec on node 0 (a machine of one node).
const ROOT_LV: LvId = LvId { memcg: ROOT_MEMCG, nid: 0 };

/// A classic machine with one 64-page file (and swap if asked), exact rstat so the rule reads
/// the lists it is given, and page 3 resident.
fn classic_machine(model: &str, swap: bool) -> Machine<pagelab::policy::classic::Classic> {
    let swap = if swap { "swap = { device = \"zram\", size = \"64M\" }\n" } else { "" };
    let text = format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"classic\"\nrstat = \"exact\"\n{swap}\
         [workingset]\nrefault_model = \"{model}\"\n\
         [[workload]]\nname = \"r\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"64p\"\nfadvise = \"random\"\nops = 0\n"
    );
    let mut m = classic(&text);
    m.apply(0, read(0, 3));
    m.drain();
    m
}

/// Sets the four LRU statistics of the root memcg to (inactive anon, active anon, inactive
/// file, active file), as the refault test reads them.
fn set_lists<P: Policy>(m: &mut Machine<P>, want: [u64; 4]) {
    for (lru, n) in [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile].into_iter().zip(want) {
        let now = m.mm.memcgs.exact_state(ROOT_MEMCG, StatItem::Lru(lru));
        m.mm.memcgs.mod_state(ROOT_MEMCG, StatItem::Lru(lru), n as i64 - now as i64);
    }
}

/// Evicts page 3 (its shadow takes the clock), lets `distance - 1` more evictions pass, and
/// refaults it: whether the classic test called it recent, and how far the clock moved on
/// the refault itself.
fn classic_refault_at(m: &mut Machine<pagelab::policy::classic::Classic>, distance: u64) -> (bool, u64) {
    let pfn = pfn_of(m, 0, 0, 3).unwrap();
    let shadow = classic_eviction(&mut m.mm, pfn, ROOT_MEMCG);
    workingset_age_nonresident(&mut m.mm, ROOT_MEMCG, 0, distance - 1);
    let before = m.mm.memcgs.get(ROOT_MEMCG).lruvec.nonresident_age;
    m.mm.folios.clear(pfn, pg::ACTIVE);
    let recent = classic_refault(&mut m.mm, pfn, shadow);
    (recent, m.mm.memcgs.get(ROOT_MEMCG).lruvec.nonresident_age - before)
}

#[test]
fn kairui_v3_classic_refault_just_inside_the_bound_is_activated_and_just_outside_is_not() {
    // (swap, [inactive anon, active anon, inactive file, active file], v3's bound for a file
    // refault, mainline's workingset size for it). RFC v3 1/6-2/6: pooled with swap; active
    // >= inactive: the inactive total; else active + inactive anon. Mainline: active file +
    // all anon with swap, compared with <=.
    let cases = [
        (true, [100, 200, 150, 300], 250, 600),  // swap, active high
        (true, [100, 50, 300, 50], 200, 200),    // swap, active low
        (false, [100, 200, 150, 300], 150, 300), // no swap, active high
        (false, [100, 200, 300, 50], 50, 50),    // no swap, active low
    ];
    for (swap, lists, bound, mainline_size) in cases {
        for (distance, want) in [(bound - 1, true), (bound, false)] {
            let mut m = classic_machine("kairui-v3", swap);
            set_lists(&mut m, lists);
            let (recent, aged) = classic_refault_at(&mut m, distance);
            assert_eq!(recent, want, "swap {swap} lists {lists:?}: distance {distance} against {bound}");
            assert_eq!(ev(&m, Ev::WorkingsetActivateFile), want as u64);
            assert_eq!(aged, 0, "v3 1/6: an activation does not age the clock");
            // Mainline on the same lists: recent iff distance <= its workingset size, and an
            // activation ages the clock.
            let mut m = classic_machine("mainline", swap);
            set_lists(&mut m, lists);
            let (recent, aged) = classic_refault_at(&mut m, distance);
            assert_eq!(recent, distance <= mainline_size, "mainline, swap {swap} lists {lists:?} distance {distance}");
            assert_eq!(aged, recent as u64);
        }
    }
}

#[test]
fn kairui_2026_classic_refault_is_recent_below_the_inactive_lists() {
    // [DEV] 7e29194b: inactive file + inactive anon with swap, whatever the active lists hold.
    for (swap, bound) in [(true, 250), (false, 150)] {
        for (distance, want) in [(bound - 1, true), (bound, false)] {
            let mut m = classic_machine("kairui-2026", swap);
            set_lists(&mut m, [100, 9000, 150, 9000]);
            assert_eq!(classic_refault_at(&mut m, distance).0, want, "swap {swap} distance {distance}");
        }
    }
}

#[test]
fn kairui_models_take_the_nonresident_clock_off_folio_mark_accessed() {
    // RFC v3 1/6 / 2026 22/32 remove workingset_activation(): the second read of an inactive
    // page activates it but no longer ages the clock.
    for (model, aged) in [("mainline", 1), ("kairui-v3", 0), ("kairui-2026", 0)] {
        let mut m = classic_machine(model, false);
        let before = m.mm.memcgs.get(ROOT_MEMCG).lruvec.nonresident_age;
        m.apply(0, read(0, 5));
        m.apply(0, read(0, 3));
        m.drain();
        assert!(m.mm.folios.test(pfn_of(&m, 0, 0, 3).unwrap(), pg::ACTIVE), "{model}");
        assert_eq!(m.mm.memcgs.get(ROOT_MEMCG).lruvec.nonresident_age - before, aged, "{model}");
    }
}

// ---- MGLRU -------------------------------------------------------------------------------

/// An MGLRU machine (6.1, exact rstat) with 2000 pages of a 4000-page file read once and the
/// newest 1000 activated into max_seq, so active (1000) < inactive (1000 + page reads), and
/// `extra` lines in [workingset].
fn mglru_machine(model: &str, extra: &str) -> Machine<LruGen> {
    let text = format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"mglru\"\nrstat = \"exact\"\n\
         [workingset]\nrefault_model = \"{model}\"\n{extra}\n\
         [[workload]]\nname = \"r\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"4000p\"\nfadvise = \"random\"\nops = 0\n"
    );
    let mut m = mglru(&text);
    for p in 0..2000 {
        m.apply(0, read(0, p));
    }
    m.drain();
    for p in 1000..2000 {
        let pfn = pfn_of(&m, 0, 0, p).unwrap();
        m.policy.activate(&mut m.mm, pfn);
    }
    m
}

/// Reads page `page` `reads` times (so it has refs), evicts it, and refaults it right away
/// (distance 0 or 1): the folio's flags after the refault.
fn mglru_refault_with_refs(m: &mut Machine<LruGen>, page: u64, reads: u32) -> u32 {
    for _ in 0..reads {
        m.apply(0, read(0, page));
        m.apply(0, read(0, 3999));
    }
    m.drain();
    let pfn = pfn_of(m, 0, 0, page).unwrap();
    let shadow = m.policy.eviction(&mut m.mm, pfn);
    m.mm.folios.get_mut(pfn).flags &= !(pg::REFS_MASK | pg::WORKINGSET | pg::REFERENCED | pg::ACTIVE);
    m.policy.refault(&mut m.mm, pfn, shadow);
    m.mm.folios.get(pfn).flags
}

#[test]
fn kairui_v3_mglru_places_a_reactivated_folio_in_the_youngest_generation_with_its_hot_refs_restored() {
    // Defaults for v3: placement youngest (PG_active: lru_gen_add_folio() puts it in max_seq),
    // refs by the pre-6/6 rule (refs >= 3 from the shadow: all refs bits and PG_workingset).
    let mut m = mglru_machine("kairui-v3", "");
    let flags = mglru_refault_with_refs(&mut m, 10, 5); // 6 reads in all: refs 4
    assert!(flags & pg::ACTIVE != 0, "re-activated");
    assert_eq!(folio_lru_refs(flags), 4, "restored to the top tier");
    assert_eq!((ev(&m, Ev::WorkingsetActivateFile), ev(&m, Ev::WorkingsetRestoreFile)), (1, 1));
    // A page read once has refs 0: placed youngest too, tier 0, no restore.
    let flags = mglru_refault_with_refs(&mut m, 11, 0);
    assert!(flags & pg::ACTIVE != 0);
    assert_eq!(lru_tier_from_refs(folio_lru_refs(flags)), 0);
    assert_eq!(ev(&m, Ev::WorkingsetRestoreFile), 1);
}

#[test]
fn kairui_2026_mglru_leaves_placement_to_lru_add_and_gives_the_shadows_refs_back() {
    // Defaults for 2026 ([DEV] 7e29194b): no PG_active, folio_set_lru_refs(refs): the tier
    // survives eviction; an activation counts only within half the type's LRU.
    let mut m = mglru_machine("kairui-2026", "");
    let flags = mglru_refault_with_refs(&mut m, 10, 2); // 3 reads: refs 2, tier 2
    assert_eq!(flags & pg::ACTIVE, 0, "left to lru_gen_add_folio()");
    assert_eq!(folio_lru_refs(flags), 2);
    assert_eq!(lru_tier_from_refs(folio_lru_refs(flags)), 2);
    assert_eq!(ev(&m, Ev::WorkingsetRestoreFile), 1);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 1, "distance 0 < half the file LRU");
}

#[test]
fn mglru_placement_and_refs_switches_choose_the_alternatives() {
    let mut m = mglru_machine("kairui-v3", "mglru_placement = \"lru-add\"\nmglru_refs = \"shadow\"");
    let flags = mglru_refault_with_refs(&mut m, 10, 2);
    assert_eq!((flags & pg::ACTIVE, folio_lru_refs(flags)), (0, 2));
    // 2026 keeps W = refs & 1: refs 1 gives PG_workingset back, refs 2 nothing.
    for (reads, want) in [(1, 1), (2, 0)] {
        let mut m = mglru_machine("kairui-2026", "mglru_placement = \"youngest\"\nmglru_refs = \"workingset-bit\"");
        let flags = mglru_refault_with_refs(&mut m, 10, reads);
        assert!(flags & pg::ACTIVE != 0);
        assert_eq!(folio_lru_refs(flags), want, "refs {reads}: PG_workingset only, from the shadow's W bit");
    }
}

#[test]
fn kairui_v3_mglru_refault_just_inside_the_active_generations_qualifies_and_just_outside_does_not() {
    // No swap; active (max_seq and max_seq - 1) 1000 file pages < inactive: a file refault
    // qualifies iff distance < active + inactive anon (0) = 1000 (v3 2/6's helper).
    for (distance, want) in [(999u64, 1u64), (1000, 0)] {
        let mut m = mglru_machine("kairui-v3", "");
        let active = m.mm.memcgs.exact_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile));
        assert_eq!(active, 1000);
        let pfn = pfn_of(&m, 0, 0, 8).unwrap();
        let shadow = m.policy.eviction(&mut m.mm, pfn);
        let other = pfn_of(&m, 0, 0, 9).unwrap();
        for _ in 1..distance {
            m.policy.eviction(&mut m.mm, other); // each eviction advances the clock
        }
        m.policy.refault(&mut m.mm, pfn, shadow);
        assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 1);
        assert_eq!(ev(&m, Ev::WorkingsetActivateFile), want, "distance {distance}");
    }
}

#[test]
fn kairui_mglru_ignores_a_shadow_from_another_memcg() {
    // v3 4/6 and every relative: a shadow whose lruvec is not the folio's counts nothing.
    for model in ["kairui-v3", "kairui-2026"] {
        let mut m = mglru_machine(model, "");
        let pfn = pfn_of(&m, 0, 0, 8).unwrap();
        let shadow = m.policy.eviction(&mut m.mm, pfn);
        let foreign = pagelab::mm::mapping::Shadow::pack(shadow.eviction(), 1, shadow.workingset());
        m.policy.refault(&mut m.mm, pfn, foreign);
        assert_eq!((ev(&m, Ev::WorkingsetRefaultFile), ev(&m, Ev::WorkingsetActivateFile)), (0, 0), "{model}");
    }
}

#[test]
fn kairui_mglru_charges_window_refaults_to_refaulted_and_older_ones_to_both_averages() {
    for model in ["kairui-v3", "kairui-2026"] {
        let mut m = mglru_machine(model, "");
        let pfn = pfn_of(&m, 0, 0, 8).unwrap();
        let shadow = m.policy.eviction(&mut m.mm, pfn);
        m.policy.refault(&mut m.mm, pfn, shadow);
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        assert_eq!((lv.refaulted[1][0], lv.avg_refaulted[1][0], lv.avg_total[1][0]), (1, 0, 0), "{model}: in the window");
        // The oldest generation's window restarts (min_seq advances): the next refault of a
        // shadow made before is older than the window.
        let shadow = m.policy.eviction(&mut m.mm, pfn);
        m.policy.reset_ctrl_pos(ROOT_LV, 1, true);
        let (refaulted, avg_r, avg_t) = {
            let lv = &m.policy.lv[ROOT_MEMCG as usize];
            (lv.refaulted[1][0], lv.avg_refaulted[1][0], lv.avg_total[1][0])
        };
        m.policy.refault(&mut m.mm, pfn, shadow);
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        assert_eq!(lv.refaulted[1][0], refaulted, "{model}");
        assert_eq!((lv.avg_refaulted[1][0], lv.avg_total[1][0]), (avg_r + 1, avg_t + 1), "{model}: older than the window");
    }
}

// ---- the behaviour of the classic half ------------------------------------------------------

/// A 64M cgroup with an idle 24M anon set and zram, and a file read in a loop (`loop_mb`);
/// the report of one run on classic.
fn loop_run(model: &str, loop_mb: u64, extra: &str) -> pagelab::Report {
    let text = format!(
        "[machine]\nmemory = \"256M\"\nkernel = \"6.1\"\npolicy = \"classic\"\nswap = {{ device = \"zram\", size = \"128M\" }}\n\
         [workingset]\nrefault_model = \"{model}\"\n\
         [[cgroup]]\npath = \"/t\"\nmax = \"64M\"\n\
         [[workload]]\nname = \"idle\"\ncgroup = \"/t\"\nkind = \"anon-rw\"\nsize = \"24M\"\ndistribution = \"uniform\"\nops = 0\nhold = true\nseed = 1\n\
         [[workload]]\nname = \"loop\"\ncgroup = \"/t\"\nkind = \"file-read\"\nfile_size = \"{loop_mb}M\"\ndistribution = \"seq\"\nfadvise = \"random\"\nops = {}\nseed = 2\n{extra}",
        loop_mb * 256 * 5
    );
    let s = Scenario::parse(&text, "loop.toml", "loop", &[]).unwrap();
    pagelab::run(&s, |_, _| {}).unwrap()
}

#[test]
fn a_file_loop_of_1_25x_the_cgroup_is_activated_by_neither_mainline_nor_kairui_v3_but_by_kairui_2026() {
    // What the rules predict. A loop of L = 80M pages over a 64M cgroup misses on every read,
    // so a page's refault distance is the evictions since it left: L minus the file pages
    // that were resident when it left, at least L - (64M - 24M) = 40M (10240 pages), and
    // ~L in steady state. v3's bound (2/6) is at most the cgroup's LRU pages on either
    // branch and, with nothing active, is active + inactive anon = the idle set, 24M: never
    // reached, so v3 activates nothing, like mainline (whose size is the same 24M). 2026's
    // [DEV] bound is all inactive pages, ~64M, which the first loop's distance (40M) beats,
    // and once pages stay the distance shrinks: most refaults are activated. (Activating them
    // does not make them hits: every page of the loop is as hot as every other, and the
    // active list is deactivated as fast as it fills.)
    let mainline = loop_run("mainline", 80, "");
    let v3 = loop_run("kairui-v3", 80, "");
    let v2026 = loop_run("kairui-2026", 80, "");
    let refaults = mainline.vmstat["workingset_refault_file"];
    assert!(refaults > 60_000, "the loop refaults ({refaults})");
    assert_eq!(mainline.vmstat["workingset_activate_file"], 0);
    assert_eq!(v3.vmstat["workingset_activate_file"], 0, "v3's bound never reaches a loop larger than the cgroup");
    assert!(v2026.vmstat["workingset_activate_file"] > refaults / 2, "{}", v2026.vmstat["workingset_activate_file"]);
}

#[test]
fn kairui_v3_activates_more_loop_refaults_than_mainline_when_activations_no_longer_age_the_clock() {
    // examples/mglru-kairui.toml on classic: a mapped 12M hot set beside a 26M read loop in a
    // 32M cgroup. Mainline ages the clock on each activation of the hot set (reclaim finds it
    // referenced and puts it back active) and of each refault it activates, which pushes loop
    // refaults past the workingset size; v3 1/6 counts evictions only, so the same refaults
    // are nearer and more of them are activated.
    let text = include_str!("../../../../examples/mglru-kairui.toml");
    let run = |model: &str| {
        let sets = ["machine.policy=classic".to_string(), format!("workingset.refault_model={model}")];
        let s = Scenario::parse(text, "mglru-kairui.toml", "kairui", &sets).unwrap();
        pagelab::run(&s, |_, _| {}).unwrap()
    };
    let (mainline, v3) = (run("mainline"), run("kairui-v3"));
    let ratio = |r: &pagelab::Report| r.vmstat["workingset_activate_file"] as f64 / r.vmstat["workingset_refault_file"] as f64;
    assert!(ratio(&v3) > ratio(&mainline) + 0.1, "activated share: v3 {:.2} vs mainline {:.2}", ratio(&v3), ratio(&mainline));
}
