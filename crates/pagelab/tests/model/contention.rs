//! The contended machine (`machine.cpus` ≥ 2): the throttles 6.1 and 6.12 have because many
//! CPUs reclaim at once, and the locks beside the lruvec's.

use super::common;

/// One task on a machine of `cpus` (0: unset) with 1,000 pages of a file read into the page
/// cache, drained onto the inactive list; the task is the current actor.
fn cached_file(cpus: u32) -> pagelab::sim::Machine<pagelab::policy::classic::Classic> {
    let cpus = if cpus > 0 { format!("cpus = {cpus}") } else { String::new() };
    let mut m = common::classic(&format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"classic\"\n{cpus}\n[[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"1000p\"\nfadvise = \"random\"\nops = 0\n"
    ));
    for page in 0..1000 {
        m.apply(0, common::read(0, page));
    }
    m.drain();
    m.mm.actor = pagelab::mm::Actor::Task(0);
    m
}

#[test]
fn too_many_isolated_compares_the_nodes_isolated_folios_with_an_eighth_of_its_inactive_ones() {
    use pagelab::mm::vmscan::{throttle_isolated, too_many_isolated, ScanControl};
    use pagelab::mm::vmstat::{Lru, Reclaimer};
    // mm/vmscan.c: too_many_isolated() (6.1, 6.12). Other reclaimers' batches are put on the
    // node's record by hand, as the machine's other CPUs would have isolated them.
    let mut m = cached_file(4);
    let limit = m.mm.node_lru_size(Lru::InactiveFile) / 8;
    assert!(limit >= 100, "{limit}");
    let direct = ScanControl::new(pagelab::mm::memcontrol::ROOT_MEMCG, Reclaimer::Direct, 32);
    let now = m.mm.now();
    m.mm.node.isolated.record(true, now, now + 1_000_000, limit, 0);
    assert!(!too_many_isolated(&m.mm, true, &direct), "as many as an eighth of the inactive folios is not too many");
    m.mm.node.isolated.record(true, now, now + 300_000, 1, 0);
    assert!(too_many_isolated(&m.mm, true, &direct), "one more is");
    assert!(!too_many_isolated(&m.mm, false, &direct), "the anon lists are counted apart");
    let kswapd = ScanControl::new(pagelab::mm::memcontrol::ROOT_MEMCG, Reclaimer::Kswapd, 32);
    assert!(!too_many_isolated(&m.mm, true, &kswapd), "kswapd never waits");
    // reclaim_throttle(VMSCAN_THROTTLE_ISOLATED): the sleep ends at the putback that brings the
    // count back to the limit, and the reclaimer goes on.
    assert!(throttle_isolated(&mut m.mm, &mut m.policy, true, &direct));
    assert_eq!(m.mm.now(), now + 300_000);
    // Still too many when HZ/50 (20 ms at HZ = 250) has passed: it gives the list up.
    let now = m.mm.now();
    m.mm.node.isolated.record(true, now, now + 100_000_000, 2 * limit, 0);
    assert!(!throttle_isolated(&mut m.mm, &mut m.policy, true, &direct));
    assert_eq!(m.mm.now(), now + 20_000_000);
    let n = &m.mm.node.isolated;
    assert_eq!((n.throttled, n.throttled_ns, n.gave_up), (2, 300_000 + 20_000_000, 1));
    // The same record on a machine without `machine.cpus` (every task on a CPU of its own,
    // and the one-CPU model) is never consulted.
    let mut unset = cached_file(0);
    let now = unset.mm.now();
    unset.mm.node.isolated.record(true, now, now + 1_000_000, 100 * limit, 0);
    assert!(!too_many_isolated(&unset.mm, true, &direct));
}
