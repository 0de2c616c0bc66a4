//! The eviction lists (policy/seam/lists.rs): one test per clause of its contract.

use pagelab::policy::seam::lists::*;
use pagelab::policy::seam::FolioId;

fn listed(l: &Lists, list: ListId) -> Vec<FolioId> {
    l.iter(list).collect()
}

#[test]
fn a_folio_is_on_at_most_one_list_and_add_fails_for_a_listed_one() {
    let mut l = Lists::new();
    let (a, b) = (l.create(), l.create());
    assert!(l.add_tail(a, 5));
    assert!(!l.add_tail(b, 5), "a listed folio cannot be added again");
    assert!(!l.add(a, 5));
    assert_eq!(l.list_of(5), Some(a));
    assert!(l.is_empty(b));
    assert!(!l.add_tail(7, 1), "an unknown list");
}

#[test]
fn add_puts_at_the_head_add_tail_at_the_tail_and_move_relinks() {
    let mut l = Lists::new();
    let (a, b) = (l.create(), l.create());
    l.add_tail(a, 1);
    l.add_tail(a, 2);
    l.add(a, 3);
    assert_eq!(listed(&l, a), [3, 1, 2]);
    assert!(l.move_to(a, 3, true));
    assert_eq!(listed(&l, a), [1, 2, 3]);
    assert!(l.move_to(b, 2, false));
    assert_eq!((listed(&l, a), listed(&l, b)), (vec![1, 3], vec![2]));
    assert!(!l.move_to(a, 9, true), "move fails for a folio on no list");
    assert!(l.del(1));
    assert!(!l.del(1), "del fails for a folio on no list");
    assert_eq!(listed(&l, a), [3]);
    assert_eq!(l.len(a) + l.len(b), 2);
}

#[test]
fn iterate_evicts_up_to_nr_stops_on_stop_and_is_bounded_by_max_iter() {
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..6000 {
        l.add_tail(a, id);
    }
    let mut out = Vec::new();
    assert_eq!(l.iterate(a, 3, &mut out, |_, id| if id % 2 == 1 { Iter::Evict } else { Iter::Continue }), IterEnd::Filled);
    assert_eq!(out, [1, 3, 5]);
    out.clear();
    assert_eq!(l.iterate(a, 3, &mut out, |i, _| if i == 4 { Iter::Stop } else { Iter::Continue }), IterEnd::Done);
    assert!(out.is_empty());
    let mut calls = 0;
    assert_eq!(
        l.iterate(a, 32, &mut out, |_, _| {
            calls += 1;
            Iter::Continue
        }),
        IterEnd::MaxIter
    );
    // The three handed-over nodes (1, 3, 5) count toward max_iter without a callback.
    assert_eq!(calls, MAX_ITER + 1 - 3);
}

#[test]
fn a_walk_visits_cache_ext_max_iter_of_4096_nodes_plus_one() {
    // mm/cache_ext_ds.c: cache_ext_list_iterate() (linux-cache-ext 7442a92) stops once
    // it has visited more than its max_iter of 4096 nodes.
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..5000 {
        l.add_tail(a, id);
    }
    let mut last = 0;
    let mut out = Vec::new();
    assert_eq!(
        l.iterate(a, 32, &mut out, |i, _| {
            last = i;
            Iter::Continue
        }),
        IterEnd::MaxIter
    );
    assert_eq!(last, 4096);
}

#[test]
fn a_handed_over_node_takes_its_index_in_a_walk_without_a_callback() {
    // cache_ext's walk meets the node of a folio it handed over (isolated, or kept and not
    // yet back on the LRU) and counts it; cache_ext_mru.bpf.c's 200 counts such nodes.
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..6 {
        l.add_tail(a, id);
    }
    let mut out = Vec::new();
    l.iterate(a, 2, &mut out, |_, _| Iter::Evict);
    assert_eq!(out, [0, 1]);
    let mut seen = Vec::new();
    out.clear();
    l.iterate(a, 6, &mut out, |i, id| {
        seen.push((i, id));
        Iter::Continue
    });
    assert_eq!(seen, [(2, 2), (3, 3), (4, 4), (5, 5)]);
}

#[test]
fn candidates_stay_on_their_list_skipped_until_they_come_back_or_are_deleted() {
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..4 {
        l.add_tail(a, id);
    }
    let mut out = Vec::new();
    l.iterate(a, 2, &mut out, |_, _| Iter::Evict);
    assert_eq!(out, [0, 1]);
    assert!(l.handed(0) && l.handed(1));
    out.clear();
    l.iterate(a, 2, &mut out, |_, _| Iter::Evict);
    assert_eq!(out, [2, 3], "handed-over folios are skipped");
    // 0 was freed (folio_removed: del); 1 was kept (folio_added(putback): add fails, it is back).
    assert!(l.del(0));
    assert!(!l.add_tail(a, 1));
    assert!(!l.handed(1));
    out.clear();
    l.iterate(a, 4, &mut out, |_, _| Iter::Evict);
    assert_eq!(out, [1], "the kept folio is offered again where it stands");
    assert_eq!(listed(&l, a), [1, 2, 3]);
}

#[test]
fn iterate_extended_moves_continued_and_evicted_nodes() {
    let mut l = Lists::new();
    let (a, b) = (l.create(), l.create());
    for id in 0..6 {
        l.add_tail(a, id);
    }
    let opts = IterateOpts { continue_list: Some(b), continue_place: Place::Tail, evict_list: None, evict_place: Place::Head };
    let mut out = Vec::new();
    let end = l.iterate_extended(a, opts, 2, &mut out, |_, id| if id >= 3 { Iter::Evict } else { Iter::Continue });
    assert_eq!(end, IterEnd::Filled);
    assert_eq!(out, [3, 4]);
    assert_eq!(listed(&l, b), [0, 1, 2]);
    assert_eq!(listed(&l, a), [4, 3, 5]);
}

#[test]
fn sample_takes_the_lowest_score_of_each_run_and_moves_the_sample_to_the_tail() {
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..10 {
        l.add_tail(a, id);
    }
    // Scores: id 2 lowest in run [0..5), ids 6 and 8 tie in run [5..10): the first wins.
    let score = |id: FolioId| match id {
        2 => 0,
        6 | 8 => 1,
        _ => 10,
    };
    let mut out = Vec::new();
    assert_eq!(l.sample(a, 5, 2, &mut out, score), 2);
    assert_eq!(out, [2, 6]);
    l.add_tail(a, 11);
    assert_eq!(listed(&l, a)[..], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11]);
    // A short list: runs of what there is.
    let mut s = Lists::new();
    let b = s.create();
    for id in 0..3 {
        s.add_tail(b, id);
    }
    out.clear();
    assert_eq!(s.sample(b, 20, 32, &mut out, |id| -(id as i64)), 1);
    assert_eq!(out, [2]);
}

#[test]
fn lowest_returns_the_n_lowest_scored_of_the_window_lowest_first() {
    let mut l = Lists::new();
    let a = l.create();
    for id in 0..8 {
        l.add_tail(a, id);
    }
    let mut out = Vec::new();
    assert_eq!(l.lowest(a, 6, 3, &mut out, |id| [5, 1, 4, 1, 3, 9, 0, 0][id as usize]), 3);
    assert_eq!(out, [1, 3, 4], "ids 6 and 7 are outside the window; ties keep list order");
    assert_eq!(listed(&l, a), (0..8).collect::<Vec<_>>());
}
