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
    m.mm.nodes[0].reclaim.isolated.record(true, now, now + 1_000_000, limit, 0);
    assert!(!too_many_isolated(&m.mm, true, &direct), "as many as an eighth of the inactive folios is not too many");
    m.mm.nodes[0].reclaim.isolated.record(true, now, now + 300_000, 1, 0);
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
    m.mm.nodes[0].reclaim.isolated.record(true, now, now + 100_000_000, 2 * limit, 0);
    assert!(!throttle_isolated(&mut m.mm, &mut m.policy, true, &direct));
    assert_eq!(m.mm.now(), now + 20_000_000);
    let n = &m.mm.nodes[0].reclaim.isolated;
    assert_eq!((n.throttled, n.throttled_ns, n.gave_up), (2, 300_000 + 20_000_000, 1));
    // The same record on a machine without `machine.cpus` (every task on a CPU of its own,
    // and the one-CPU model) is never consulted.
    let mut unset = cached_file(0);
    let now = unset.mm.now();
    unset.mm.nodes[0].reclaim.isolated.record(true, now, now + 1_000_000, 100 * limit, 0);
    assert!(!too_many_isolated(&unset.mm, true, &direct));
}

/// Two cgroups reading their own files from one SSD of queue depth `depth` (0: unlimited) on
/// a machine of 4 CPUs; `with_b`: whether the second one runs.
fn two_cgroups_on_one_ssd(depth: u32, with_b: bool) -> pagelab::report::Report {
    let workload = |name: &str| {
        format!(
            "[[workload]]\nname = \"{name}\"\ncgroup = \"/{name}\"\nkind = \"file-read\"\nfile_size = \"64M\"\ndistribution = \"uniform\"\nfadvise = \"random\"\nops = 4000\nseed = 5\n"
        )
    };
    let b = if with_b { workload("b") } else { String::new() };
    let text = format!(
        "[machine]\nmemory = \"512M\"\nkernel = \"6.1\"\npolicy = \"classic\"\nstorage = \"ssd\"\ncpus = 4\n\n[time.storage]\nread_latency_ns = 80000\nwrite_latency_ns = 30000\npage_transfer_ns = 2000\nqueue_depth = {depth}\n\n[[cgroup]]\npath = \"/a\"\nmax = \"16M\"\n\n[[cgroup]]\npath = \"/b\"\nmax = \"16M\"\n\n{}\n{b}",
        workload("a")
    );
    pagelab::run(&common::scenario(&text), |_, _| {}).unwrap()
}

#[test]
fn a_second_cgroup_on_the_same_device_raises_the_firsts_io_wait() {
    // Each cgroup has CPUs enough; what they share is the device's one tag (blk-mq's
    // blk_mq_get_tag() sleeps while every tag is taken, 6.1 and 6.12).
    let alone = two_cgroups_on_one_ssd(1, false);
    let shared = two_cgroups_on_one_ssd(1, true);
    let (a0, a1) = (alone.tasks[0].io_wait_s, shared.tasks[0].io_wait_s);
    assert!(a0 > 0.0 && a1 > 1.5 * a0, "b's reads queue ahead of a's: {a1} vs {a0}");
    let q = &shared.devices.as_ref().expect("a machine of several CPUs reports its devices")["storage"];
    let q0 = &alone.devices.as_ref().unwrap()["storage"];
    assert!(q.waited > 0 && q.wait_ns > q0.wait_ns, "{q:?} vs {q0:?}");
    assert!(q.busy_ns > q0.busy_ns, "two cgroups keep the device busy longer: {q:?} vs {q0:?}");
    // With tags enough for both, their latencies overlap and only the transfers queue.
    let roomy = two_cgroups_on_one_ssd(0, true).tasks[0].io_wait_s;
    assert!(roomy < 1.2 * two_cgroups_on_one_ssd(0, false).tasks[0].io_wait_s, "{roomy}");
}

/// `readtwice`-shaped work as vm-scalability's case-lru-file-readtwice runs it in containers:
/// four cgroups, each with two readers of its own file, on eight CPUs of one node.
fn readtwice_in_containers(kernel: &str) -> pagelab::sim::Machine<pagelab::policy::classic::Classic> {
    let mut text = format!("[machine]\nmemory = \"256M\"\nkernel = \"{kernel}\"\npolicy = \"classic\"\nstorage = \"ramdisk\"\ncpus = 8\n");
    for c in 0..4 {
        text += &format!(
            "\n[[cgroup]]\npath = \"/c{c}\"\n\n[[workload]]\nname = \"dd{c}\"\ncgroup = \"/c{c}\"\njobs = 2\nkind = \"file-read\"\nfile_size = \"16M\"\nshared_file = true\ndistribution = \"sequential\"\nops = 8192\nseed = {c}\n"
        );
    }
    let mut m = common::classic(&text);
    while m.step() {}
    m
}

#[test]
fn memcgs_share_the_nodes_lru_lock_on_5_7_and_each_own_one_from_5_11_lru_lock_per_memcg() {
    // 5.7: every lruvec's list moves take pgdat->lru_lock; 6.1: each memcg's lruvec->lru_lock.
    let old = readtwice_in_containers("5.7");
    let new = readtwice_in_containers("6.1");
    let memcg_locks = |m: &pagelab::sim::Machine<pagelab::policy::classic::Classic>| {
        let mut s = pagelab::locking::LockStat::default();
        for c in &m.mm.memcgs.cg {
            s.merge(&c.lruvec.lru_lock.stat);
        }
        s
    };
    let (old_node, old_memcg) = (&old.mm.nodes[0].lru_lock.stat, memcg_locks(&old));
    let (new_node, new_memcg) = (&new.mm.nodes[0].lru_lock.stat, memcg_locks(&new));
    assert!(old_node.total.acquisitions > 0 && old_memcg.total.acquisitions == 0, "5.7: the node's lock only");
    assert!(new_node.total.acquisitions == 0 && new_memcg.total.acquisitions > 0, "6.1: the memcgs' locks only");
    // Four containers on one lock wait for each other; on their own locks only a container's
    // two readers do.
    let share = |s: &pagelab::locking::LockStat| s.total.contended as f64 / s.total.acquisitions as f64;
    assert!(share(old_node) > 2.0 * share(&new_memcg), "5.7 {} against 6.1 {}", share(old_node), share(&new_memcg));
    assert!(old_node.total.wait_ns > new_memcg.total.wait_ns, "{old_node:?} {new_memcg:?}");
}
