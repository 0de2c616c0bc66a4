//! The machine of several CPUs (`machine.cpus` ≥ 2, `crate::sched`, `crate::locking`),
//! tested by the rules of their contracts.

use super::common;
use pagelab::report::Report;

fn run(text: &str) -> Report {
    pagelab::run(&common::scenario(text), |_, _| {}).unwrap()
}

/// `jobs` tasks reading one shared file at random from a ramdisk, in a cgroup of a quarter of
/// the file: CPU-bound, with reclaim. `machine` lines go into `[machine]`, `extra` at the end.
fn readers(machine: &str, jobs: u32, ops: u64, extra: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
storage = "ramdisk"
{machine}

[[cgroup]]
path = "/a"
max = "32M"

[[workload]]
name = "r"
cgroup = "/a"
jobs = {jobs}
kind = "file-read"
file_size = "128M"
shared_file = true
distribution = "uniform"
ops = {ops}
seed = 3
{extra}
"#
    )
}

/// The counters that decide reclaim, for comparing runs.
fn counters(r: &Report) -> Vec<(String, u64)> {
    [
        "pgpgin",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pgactivate",
        "pgdeactivate",
        "workingset_refault_file",
        "workingset_activate_file",
    ]
    .iter()
    .map(|k| (k.to_string(), r.vmstat[*k]))
    .chain(r.memcg["/a"].iter().filter(|(k, _)| k.starts_with("pgscan") || k.starts_with("pgsteal")).map(|(k, v)| (k.clone(), *v)))
    .collect()
}

/// `jobs` tasks reading a shared 16 MiB file that stays cached: after its first reads every
/// operation is CPU work (the system call and the copy), no IO.
fn cached_readers(machine: &str, jobs: u32, extra: &str) -> String {
    readers(machine, jobs, 40_000, extra).replace("max = \"32M\"", "").replace("file_size = \"128M\"", "file_size = \"16M\"")
}

const FREE_LOCKS: &str = "[time.cpu]\nlru_move_ns = 0\nlock_handoff_ns = 0\nxa_store_ns = 0\nzone_move_ns = 0\nswap_slot_ns = 0";

#[test]
fn with_a_cpu_for_every_task_and_free_locks_the_counters_are_the_unset_machines() {
    // An SSD: a device that queues on every machine (a ramdisk's transfers move onto the
    // CPUs with several of them). One task, which keeps its CPU: with several, each CPU's
    // lru_add batch is its own (per_cpu_batches_are_drained_per_cpu), which the unset
    // machine's one batch is not.
    let ssd = |machine: &str, extra: &str| readers(machine, 1, 20_000, extra).replace("storage = \"ramdisk\"", "storage = \"ssd\"");
    let unset = run(&ssd("", ""));
    let many = run(&ssd("cpus = 8", FREE_LOCKS));
    assert_eq!(counters(&many), counters(&unset));
    assert_eq!(many.elapsed_s, unset.elapsed_s, "no task ever waits for a CPU");
    assert!(many.tasks.iter().all(|t| t.cpu_wait_s == Some(0.0)), "{:?}", many.tasks);
    assert!(unset.sched.is_none() && many.sched.is_some());
}

#[test]
fn tasks_that_outnumber_the_cpus_share_them_equally() {
    let four = run(&cached_readers("cpus = 4", 4, FREE_LOCKS));
    let two = run(&cached_readers("cpus = 2", 4, FREE_LOCKS));
    let sched = two.sched.as_ref().unwrap();
    assert!(sched.busy_share > 0.95, "two CPUs for four CPU-bound tasks stay busy: {}", sched.busy_share);
    let cpu: Vec<f64> = two.tasks.iter().map(|t| t.cpu_s.unwrap()).collect();
    let wait: Vec<f64> = two.tasks.iter().map(|t| t.cpu_wait_s.expect("several CPUs report the run-queue wait")).collect();
    let spread = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max) / v.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread(&cpu) < 1.05, "equal CPU time: {cpu:?}");
    assert!(spread(&wait) < 1.10, "equal run-queue waits: {wait:?}");
    let ratio = two.elapsed_s / four.elapsed_s;
    assert!((1.8..2.2).contains(&ratio), "half the CPUs, about twice the time: {ratio}");
}

#[test]
fn a_workloads_cpu_set_confines_its_tasks() {
    let free = run(&cached_readers("cpus = 4", 2, FREE_LOCKS));
    let pinned = run(&cached_readers("cpus = 4", 2, &format!("cpus = \"3\"\n{FREE_LOCKS}")));
    let ratio = pinned.elapsed_s / free.elapsed_s;
    assert!((1.8..2.2).contains(&ratio), "two tasks on one CPU take twice as long: {ratio}");
    let cpus = &pinned.sched.as_ref().unwrap().cpu;
    assert!(cpus[..3].iter().all(|c| c.runs == 0 || c.busy_s < cpus[3].busy_s / 10.0), "CPU 3 does the tasks' work: {cpus:?}");
}

#[test]
fn kswapd_waits_for_a_cpu_when_the_tasks_keep_them_busy() {
    // Global reclaim (no cgroup limit) so that kswapd runs.
    let text = readers("cpus = 2", 8, 20_000, "").replace("max = \"32M\"", "").replace("memory = \"256M\"", "memory = \"96M\"");
    let r = run(&text);
    let sched = r.sched.as_ref().unwrap();
    assert!(r.vmstat["pgscan_kswapd"] > 0, "kswapd reclaimed");
    assert!(sched.kswapd_waits > 0 && sched.kswapd_runq_wait_s > 0.0, "{sched:?}");
    let roomy = run(&text.replace("cpus = 2", "cpus = 16"));
    assert!(roomy.sched.as_ref().unwrap().kswapd_runq_wait_s < sched.kswapd_runq_wait_s);
}

#[test]
fn lru_lock_holds_scale_with_their_batches_and_contention_with_the_cpus() {
    let r = run(&readers("cpus = 2", 4, 10_000, "[time.cpu]\nlru_move_ns = 100\nlock_handoff_ns = 0"));
    let l = &r.sched.as_ref().unwrap().locks["lru_lock"];
    assert!(l.acquisitions > 0);
    // Every section holds 100 ns a folio: the hold is a whole number of folios, and a
    // section at most an isolation's SWAP_CLUSTER_MAX (32) or a batch of 15 (6.1's
    // PAGEVEC_SIZE), so the mean lies between one folio and 32.
    assert_eq!(l.hold_ns % 100, 0);
    let mean_folios = l.hold_ns as f64 / 100.0 / l.acquisitions as f64;
    assert!((1.0..=32.0).contains(&mean_folios), "{mean_folios}");
    let wide = run(&readers("cpus = 8", 8, 10_000, "[time.cpu]\nlru_move_ns = 100\nlock_handoff_ns = 50"));
    let lw = &wide.sched.as_ref().unwrap().locks["lru_lock"];
    let share = |l: &pagelab::locking::LockSummary| l.contended as f64 / l.acquisitions as f64;
    assert!(share(lw) > share(l), "eight CPUs contend more than two: {} vs {}", share(lw), share(l));
    assert!(lw.wait_p99_ns >= lw.wait_p50_ns);
}

#[test]
fn a_machine_of_several_cpus_runs_alike_every_time() {
    let text = readers("cpus = 3", 5, 5_000, "");
    let a = serde_json::to_string(&run(&text)).unwrap();
    let b = serde_json::to_string(&run(&text)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn the_profile_books_each_cost_to_its_kernel_function() {
    let r = run(&readers("cpus = 4", 8, 10_000, "[report]\nprofile = true"));
    let lines = r.profile.as_ref().expect("[report] profile = true");
    let share = |f: &str| lines.iter().find(|l| l.function == f).map_or(0.0, |l| l.tasks_share);
    // Every read is a system call, and the misses copy from the ramdisk on the task's CPU.
    assert!(share("filemap_read") > 0.0 && share("brd/zram transfer") > 0.0, "{lines:?}");
    // The lock's hold is booked as LRU moves, its waits as the spinlock's slow path, and the
    // two agree with the lock's own figures.
    let l = &r.sched.as_ref().unwrap().locks["lru_lock"];
    let secs = |f: &str| lines.iter().find(|x| x.function == f).map_or(0.0, |x| x.tasks_s + x.kswapd_s);
    assert!((secs("lruvec_add/del_folio") - l.hold_ns as f64 / 1e9).abs() < 1e-9);
    let waits: u64 = r.sched.as_ref().unwrap().locks.values().map(|l| l.wait_ns).sum();
    assert!((secs("native_queued_spin_lock_slowpath") - waits as f64 / 1e9).abs() < 1e-9, "every lock's waits");
    let total: f64 = lines.iter().map(|l| l.tasks_share).sum();
    assert!((total - 1.0).abs() < 1e-9, "the tasks' shares add up: {total}");
    assert!(run(&readers("cpus = 4", 8, 1_000, "")).profile.is_none(), "only when asked");
}

/// Two cgroups whose workloads read their own files from one SSD, `with_b` whether the second
/// runs; `depth` the device's queue depth (0: unlimited).
fn two_cgroups_on_one_ssd(depth: u32, with_b: bool) -> Report {
    let workload = |name: &str| {
        format!(
            "[[workload]]\nname = \"{name}\"\ncgroup = \"/{name}\"\nkind = \"file-read\"\nfile_size = \"64M\"\ndistribution = \"uniform\"\nfadvise = \"random\"\nops = 4000\nseed = 5\n"
        )
    };
    let b = if with_b { workload("b") } else { String::new() };
    run(&format!(
        r#"
[machine]
memory = "512M"
kernel = "6.1"
policy = "classic"
storage = "ssd"

[time.storage]
read_latency_ns = 80000
write_latency_ns = 30000
page_transfer_ns = 2000
queue_depth = {depth}

[[cgroup]]
path = "/a"
max = "16M"

[[cgroup]]
path = "/b"
max = "16M"

{}
{b}"#,
        workload("a")
    ))
}

#[test]
fn two_cgroups_on_one_device_slow_each_other_when_its_queue_is_full() {
    let alone = two_cgroups_on_one_ssd(1, false).tasks[0].elapsed_s;
    let shared = two_cgroups_on_one_ssd(1, true);
    assert!(shared.tasks[0].elapsed_s > 1.6 * alone, "one tag: a's reads wait for b's ({} vs {alone})", shared.tasks[0].elapsed_s);
    let q = &shared.devices.as_ref().expect("a queue depth reports the devices")["storage"];
    assert!(q.waited > 0 && q.wait_ns > 0, "{q:?}");
    // With tags enough for both, only the transfers follow each other: a barely notices b.
    let roomy_alone = two_cgroups_on_one_ssd(0, false).tasks[0].elapsed_s;
    let roomy = two_cgroups_on_one_ssd(0, true).tasks[0].elapsed_s;
    assert!(roomy < 1.2 * roomy_alone, "{roomy} vs {roomy_alone}");
    assert!(two_cgroups_on_one_ssd(0, true).devices.is_none(), "no queue depth, no devices section");
}

/// Two tasks on CPUs 0 and 1 reading one file (`file = "f"`), nothing run yet.
fn two_cpus_one_file() -> pagelab::sim::Machine<pagelab::policy::classic::Classic> {
    let w = |name: &str, cpu: u32| {
        format!("[[workload]]\nname = \"{name}\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile = \"f\"\nfile_size = \"100p\"\nfadvise = \"random\"\nops = 0\ncpus = \"{cpu}\"\n")
    };
    common::classic(&format!("[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"classic\"\ncpus = 2\n{}{}", w("a", 0), w("b", 1)))
}

#[test]
fn per_cpu_batches_are_drained_per_cpu() {
    use common::{pfn_of, read};
    use pagelab::mm::folio::pg;
    let mut m = two_cpus_one_file();
    m.apply(0, read(0, 7)); // into CPU 0's lru_add batch
    m.apply(1, read(0, 3)); // into CPU 1's
    let (p7, p3) = (pfn_of(&m, 0, 0, 7).unwrap(), pfn_of(&m, 1, 0, 3).unwrap());
    // lru_add_drain() on CPU 1 (the running task's): its folio joins the LRU, CPU 0's waits.
    pagelab::mm::swap::lru_add_drain(&mut m.mm, &mut m.policy);
    assert!(m.mm.folios.test(p3, pg::LRU) && !m.mm.folios.test(p3, pg::IN_LRU_ADD));
    assert!(m.mm.folios.test(p7, pg::IN_LRU_ADD) && !m.mm.folios.test(p7, pg::LRU), "CPU 0's batch is CPU 0's to drain");
    m.drain(); // lru_add_drain_all()
    assert!(m.mm.folios.test(p7, pg::LRU));
    m.check().unwrap();
}

#[test]
fn lru_cache_activate_folio_searches_only_the_local_batch() {
    use common::{pfn_of, read};
    use pagelab::mm::folio::pg;
    // Task 1 (CPU 1) reads page 7 twice while it waits in CPU 0's batch: the second read
    // finds it referenced and off the LRU, but __lru_cache_activate_folio() searches CPU 1's
    // batch and does not find it. On one CPU the same reads activate it in place.
    for (cpus, activated) in [(2, false), (1, true)] {
        let mut m = two_cpus_one_file();
        if cpus == 1 {
            m = common::classic(&common::one_file_scenario("64M", "6.1", "classic", 100).replace("ops = 0", "ops = 0\njobs = 2\nshared_file = true"));
        }
        m.apply(0, read(0, 7));
        m.apply(1, read(0, 3));
        m.apply(1, read(0, 7));
        let p7 = pfn_of(&m, 0, 0, 7).unwrap();
        assert!(m.mm.folios.test(p7, pg::IN_LRU_ADD));
        assert_eq!(m.mm.folios.test(p7, pg::ACTIVE), activated, "cpus = {cpus}");
    }
}

#[test]
fn truncation_frees_a_folio_waiting_in_another_cpus_batch_only_after_draining_it() {
    use common::{pfn_of, read};
    use pagelab_workload::Op;
    let mut m = two_cpus_one_file();
    m.apply(0, read(0, 7)); // waits in CPU 0's lru_add batch
    let truncate = Op::truncate(0, 0, 100);
    m.apply(1, truncate); // on CPU 1
    assert!(pfn_of(&m, 0, 0, 7).is_none());
    // The freed frame is in no batch: reading again and draining every CPU keeps the
    // machine's invariants (a batch naming a freed frame would break them).
    m.apply(1, read(0, 7));
    m.drain();
    m.check().unwrap();
    assert_eq!(m.mm.nr_file_pages, 1);
}

#[test]
fn free_unref_page_puts_a_page_on_the_freeing_cpus_list_until_drain_all_pages() {
    use pagelab::mm::page_alloc::{alloc_page, drain_all_pages, free_unref_page, Gfp};
    use pagelab::mm::swap::this_cpu;
    let mut m = two_cpus_one_file();
    let top = m.mm.folios.nr_zones() - 1;
    let locks = |m: &pagelab::sim::Machine<_>| m.mm.zone(top).lock.stat.total.acquisitions;
    let alloc = |m: &mut pagelab::sim::Machine<pagelab::policy::classic::Classic>| alloc_page(&mut m.mm, &mut m.policy, Gfp::User).unwrap();
    // CPU 1 refills its empty list (rmqueue_bulk() under zone->lock), takes a page and frees
    // it back to its own list.
    this_cpu(&mut m.mm, 1);
    let a = alloc(&mut m);
    assert_eq!(locks(&m), 1);
    free_unref_page(&mut m.mm, a);
    let free = m.mm.zone_free(top);
    this_cpu(&mut m.mm, 0);
    assert_eq!(m.mm.zone_free(top), free, "NR_FREE_PAGES counts no CPU's list, parked or running");
    // CPU 0's list is empty: it refills from the buddy lists, where CPU 1's page is not.
    let b = alloc(&mut m);
    assert_ne!(b, a, "CPU 1's page waits on CPU 1's list");
    assert_eq!(locks(&m), 2, "each CPU's refill takes the zone lock");
    free_unref_page(&mut m.mm, b);
    // CPU 1 finds its page on its list, without the zone lock.
    this_cpu(&mut m.mm, 1);
    let c = alloc(&mut m);
    assert_eq!((c, locks(&m)), (a, 2));
    free_unref_page(&mut m.mm, c);
    m.check().unwrap();
    // drain_all_pages() from CPU 0: one bulk free per CPU's list, CPU 1's page now on the
    // buddy lists, the next handed out.
    this_cpu(&mut m.mm, 0);
    drain_all_pages(&mut m.mm);
    assert_eq!(locks(&m), 4);
    assert_eq!(m.mm.zone(top).pcp.count, 0);
    m.check().unwrap();
    let d = alloc(&mut m);
    assert_eq!(d, a, "after the drain CPU 0 refills with CPU 1's page");
    free_unref_page(&mut m.mm, d);
    m.check().unwrap();
}

#[test]
fn zone_highsize_splits_pcp_high_over_the_cpus() {
    // The same machine with 1 and with 4 CPUs: each CPU's list gets a quarter of the one-CPU
    // high (at least four batches).
    let machine = |cpus: &str| {
        common::classic(&format!("[machine]\nmemory = \"1G\"\nkernel = \"6.1\"\npolicy = \"classic\"\n{cpus}\n[[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"100p\"\nops = 0\n"))
    };
    let (one, four) = (machine(""), machine("cpus = 4"));
    let top = one.mm.folios.nr_zones() - 1;
    let (h1, h4) = (one.mm.zone(top).pcp.high, four.mm.zone(top).pcp.high);
    assert!(h1 / 4 > 4 * 63, "the split stays above four batches here: {h1}");
    assert_eq!(h4, h1 / 4);
}

/// Two tasks on CPUs 0 and 1 (or a machine without `machine.cpus`) reading one file in
/// cgroup /a.
fn two_cpus_in_a_cgroup(cpus: &str) -> pagelab::sim::Machine<pagelab::policy::classic::Classic> {
    let w = |name: &str, cpu: u32| {
        let set = if cpus.is_empty() { String::new() } else { format!("cpus = \"{cpu}\"\n") };
        format!(
            "[[workload]]\nname = \"{name}\"\ncgroup = \"/a\"\nkind = \"file-read\"\nfile = \"f\"\nfile_size = \"100p\"\nfadvise = \"random\"\nops = 0\n{set}"
        )
    };
    common::classic(&format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"classic\"\n{cpus}\n[[cgroup]]\npath = \"/a\"\nmax = \"4M\"\n{}{}",
        w("a", 0),
        w("b", 1)
    ))
}

#[test]
fn memcg_stock_is_per_cpu_and_drain_all_stock_empties_every_cpus() {
    use common::read;
    for (cpus, usage) in [("cpus = 2", 128), ("", 64)] {
        let mut m = two_cpus_in_a_cgroup(cpus);
        let a = m.task_memcg(0);
        m.apply(0, read(0, 1));
        m.apply(1, read(0, 2));
        // Each CPU's first charge pre-charges MEMCG_CHARGE_BATCH (64) pages into its own stock.
        assert_eq!(m.mm.memcgs.get(a).usage, usage, "{cpus:?}");
        assert_eq!(m.mm.memcgs.stock_pages(a), usage - 2);
        m.check().unwrap();
        m.mm.memcgs.drain_all_stock(a);
        assert_eq!(m.mm.memcgs.get(a).usage, 2, "{cpus:?}: only the pages in use stay charged");
        m.check().unwrap();
    }
}

#[test]
fn a_change_of_cpu_swaps_the_per_cpu_lists_without_moving_their_frames() {
    use pagelab::mm::page_alloc::{alloc_page, free_unref_page, Gfp};
    use pagelab::mm::swap::this_cpu;
    let mut m = two_cpus_one_file();
    let top = m.mm.folios.nr_zones() - 1;
    let alloc = |m: &mut pagelab::sim::Machine<pagelab::policy::classic::Classic>| alloc_page(&mut m.mm, &mut m.policy, Gfp::User).unwrap();
    // Each CPU refills its list (a batch) and gives its page back: both lists hold pages.
    for cpu in [1, 0] {
        this_cpu(&mut m.mm, cpu);
        let a = alloc(&mut m);
        free_unref_page(&mut m.mm, a);
    }
    let (count0, count1) = (m.mm.zone(top).pcp.count, m.mm.percpu.as_ref().unwrap().pcp[1][top].frames.len() as i64);
    assert!(count0 > 1 && count1 > 1, "{count0} and {count1} pages listed");
    // The first park of CPU 0's list splits its frames off the free stack once; after that a
    // change of CPU moves none, however often it comes.
    this_cpu(&mut m.mm, 1);
    let moved = m.mm.folios.split_moves();
    assert!(moved <= count0 as u64 + count1 as u64, "{moved} frames moved by the first switch");
    let next1 = m.mm.percpu.as_ref().unwrap().pcp[0][top].frames.back().copied();
    for _ in 0..1000 {
        this_cpu(&mut m.mm, 0);
        this_cpu(&mut m.mm, 1);
    }
    assert_eq!(m.mm.folios.split_moves(), moved, "2,000 changes of CPU moved frames");
    assert_eq!(m.mm.zone(top).pcp.count, count1);
    m.check().unwrap();
    // Each CPU's list still hands out its own last freed page first.
    this_cpu(&mut m.mm, 0);
    let c = alloc(&mut m);
    assert_eq!((Some(c), m.mm.zone(top).pcp.count), (next1, count0 - 1));
    free_unref_page(&mut m.mm, c);
    m.check().unwrap();
}

#[test]
fn a_folio_queued_for_activation_on_two_cpus_holds_a_reference_until_both_drain() {
    use common::{pfn_of, read};
    use pagelab::mm::folio::pg;
    use pagelab::mm::swap::{folio_activate, in_activate_batch, lru_add_drain, this_cpu};
    let mut m = two_cpus_one_file();
    m.apply(0, read(0, 7));
    m.drain();
    let p7 = pfn_of(&m, 0, 0, 7).unwrap();
    assert!(!in_activate_batch(&m.mm, p7));
    // folio_activate() leaves it on the LRU, inactive, so a second CPU queues it too.
    for cpu in [0, 1] {
        this_cpu(&mut m.mm, cpu);
        folio_activate(&mut m.mm, &mut m.policy, p7);
    }
    assert!(in_activate_batch(&m.mm, p7));
    // CPU 1 drains its batch (the folio is activated); CPU 0's still holds its reference.
    lru_add_drain(&mut m.mm, &mut m.policy);
    assert!(m.mm.folios.test(p7, pg::ACTIVE));
    assert!(in_activate_batch(&m.mm, p7), "CPU 0's batch still holds it");
    this_cpu(&mut m.mm, 0);
    assert!(in_activate_batch(&m.mm, p7));
    lru_add_drain(&mut m.mm, &mut m.policy);
    assert!(!in_activate_batch(&m.mm, p7), "both batches drained");
    m.check().unwrap();
}

/// An anonymous heap of 5/4 of memory written at random, swapping to zram: reclaim unmaps
/// pages of the task's `mm` while the task runs. `cpus` CPUs, each remote TLB flush costing
/// `ipi_ns`.
fn zram_heap(cpus: u32, ipi_ns: u64) -> Report {
    run(&format!(
        r#"
[machine]
memory = "128M"
cpus = {cpus}
kernel = "6.1"
policy = "classic"
swap = {{ device = "zram", size = "256M" }}

[[workload]]
name = "heap"
cgroup = "/"
kind = "anon-write"
size = "160M"
distribution = "zipf:0.9"
ops = 60000
seed = 5

[time.cpu]
tlb_flush_ipi_ns = {ipi_ns}
"#
    ))
}

/// try_to_unmap_flush() (mm/rmap.c): kswapd, on a CPU of its own, unmaps pages of the `mm`
/// the task runs on the other CPU, so each page it writes out first waits for that CPU's
/// TLB flush. A slow flush slows kswapd alone, and the task reclaims more directly.
#[test]
fn try_to_unmap_flush_makes_kswapd_wait_for_the_cpu_running_the_tasks_mm() {
    let (free, slow) = (zram_heap(2, 0), zram_heap(2, 500_000));
    let v = |r: &Report, k: &str| r.vmstat[k];
    assert!(v(&slow, "pgsteal_kswapd") * 2 < v(&free, "pgsteal_kswapd"), "kswapd {} against {}", v(&slow, "pgsteal_kswapd"), v(&free, "pgsteal_kswapd"));
    assert!(v(&slow, "pgsteal_direct") > 2 * v(&free, "pgsteal_direct"), "direct {} against {}", v(&slow, "pgsteal_direct"), v(&free, "pgsteal_direct"));
}

/// should_defer_flush() (mm/rmap.c): on one CPU no other CPU runs the task's `mm`, so
/// neither kswapd nor the task's direct reclaim sends a flush, whatever it would cost.
#[test]
fn should_defer_flush_finds_no_other_cpu_on_one_cpu() {
    let (free, slow) = (zram_heap(1, 0), zram_heap(1, 500_000));
    assert_eq!(free.vmstat, slow.vmstat);
}
