//! The kernel's locks beyond the lruvec's on a machine of several CPUs (`crate::locking`):
//! the mapping's `i_pages` lock, the swap locks and the zone lock, each where it lives, held
//! in proportion to its batch; and what MGLRU's eviction holds the lruvec's lock for.

use super::common;
use pagelab::locking::LockSummary;
use pagelab::report::Report;

fn run(text: &str) -> Report {
    pagelab::run(&common::scenario(text), |_, _| {}).unwrap()
}

fn lock<'a>(r: &'a Report, name: &str) -> &'a LockSummary {
    &r.sched.as_ref().expect("machine.cpus reports the locks").locks[name]
}

/// Only the cost under test: the other locks free, no handoff.
fn costs(key: &str, ns: u64) -> String {
    let mut t = "[time.cpu]\nlru_move_ns = 0\nlock_handoff_ns = 0\nxa_store_ns = 0\nzone_move_ns = 0\nswap_slot_ns = 0\n".to_string();
    t = t.replace(&format!("{key} = 0"), &format!("{key} = {ns}"));
    t
}

/// Two tasks on two CPUs reading 16 MiB at random from a ramdisk with room to spare (no
/// reclaim): every miss inserts a page into the file's page cache. `shared`: one file for
/// both, else a file each.
fn two_readers(shared: bool, extra: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
storage = "ramdisk"
cpus = 2

[[workload]]
name = "r"
cgroup = "/"
jobs = 2
shared_file = {shared}
kind = "file-read"
file_size = "16M"
distribution = "uniform"
fadvise = "random"
ops = 3000
seed = 9

{extra}
"#
    )
}

/// Models mm/filemap.c: __filemap_add_folio()'s xa_lock_irq(&mapping->i_pages) (6.1, 6.12):
/// the lock is the mapping's, so two tasks inserting into one file's page cache contend on
/// it, and two tasks on files of their own never do.
#[test]
fn two_tasks_on_one_file_contend_on_its_i_pages_lock_and_two_on_separate_files_do_not() {
    let extra = costs("xa_store_ns", 2_000);
    let one = run(&two_readers(true, &extra));
    let own = run(&two_readers(false, &extra));
    for r in [&one, &own] {
        let l = lock(r, "i_pages");
        // One acquisition per page-cache insert: every miss, one page each (POSIX_FADV_RANDOM).
        assert_eq!(l.acquisitions, r.vmstat["pgpgin"] / 4, "{l:?}");
        assert_eq!(l.hold_ns, 2_000 * l.acquisitions, "held xa_store_ns a folio");
        assert_eq!(r.vmstat["pgscan_kswapd"] + r.vmstat["pgscan_direct"], 0, "no reclaim: inserts only");
    }
    let (l1, l2) = (lock(&one, "i_pages"), lock(&own, "i_pages"));
    assert!(l1.contended > 0 && l1.wait_ns > 0, "one file: the tasks wait for each other's inserts: {l1:?}");
    assert_eq!((l2.contended, l2.wait_ns), (0, 0), "a file each: no contention: {l2:?}");
    let spin = |r: &Report| r.tasks.iter().map(|t| t.lock_spin_s.unwrap()).sum::<f64>();
    assert!(spin(&one) > 0.0 && spin(&own) == 0.0);
}

/// Models mm/vmscan.c: __remove_mapping() (6.1, 6.12): reclaim deletes each file folio under
/// its mapping's i_pages lock, storing the shadow entry there.
#[test]
fn reclaim_deletes_each_file_folio_under_the_mappings_i_pages_lock() {
    let text = two_readers(true, &costs("xa_store_ns", 100))
        .replace("memory = \"256M\"", "memory = \"48M\"")
        .replace("file_size = \"16M\"", "file_size = \"96M\"")
        .replace("ops = 3000", "ops = 12000");
    let r = run(&text);
    let l = lock(&r, "i_pages");
    let (inserts, deletes) = (r.vmstat["pgpgin"] / 4, r.vmstat["pgsteal_kswapd"] + r.vmstat["pgsteal_direct"]);
    assert!(deletes > 0);
    assert_eq!(l.acquisitions, inserts + deletes, "one section per insert and per reclaimed folio: {l:?}");
}

/// Without `machine.cpus` no lock is taken and the report has no locks.
#[test]
fn without_machine_cpus_no_lock_costs_anything() {
    let text = two_readers(true, &costs("xa_store_ns", 2_000)).replace("cpus = 2\n", "");
    let r = run(&text);
    assert!(r.sched.is_none());
    let free = run(&two_readers(true, &costs("xa_store_ns", 0)).replace("cpus = 2\n", ""));
    assert_eq!(r.elapsed_s, free.elapsed_s, "the cost is read only with several CPUs");
}

/// Models mm/page_alloc.c: rmqueue_bulk() (6.1): an empty per-CPU list is refilled with
/// `pcp->batch` pages under zone->lock, one section per refill holding it for each page.
/// One zone of 256 MiB gives a batch of 15 (zone_batchsize()); the reads never free a page.
#[test]
fn zone_lock_is_held_per_pcp_refill_for_each_page_of_its_batch() {
    let text = two_readers(false, &costs("zone_move_ns", 10)).replace("cpus = 2\n", "cpus = 2\nzones = \"one\"\n");
    let r = run(&text);
    let l = lock(&r, "zone_lock");
    let allocated = r.vmstat.iter().filter(|(k, _)| k.starts_with("pgalloc_")).map(|(_, v)| v).sum::<u64>();
    assert!(allocated > 1000);
    assert_eq!(l.acquisitions, allocated.div_ceil(15), "one refill of 15 for every 15 pages allocated: {l:?}");
    assert_eq!(l.hold_ns, l.acquisitions * 15 * 10, "each holds it 15 x zone_move_ns");
    // free_pcppages_bulk(): with reclaim, bulk frees take it too, each for the pages it frees.
    let reclaiming =
        run(&text.replace("memory = \"256M\"", "memory = \"48M\"").replace("file_size = \"16M\"", "file_size = \"96M\"").replace("ops = 3000", "ops = 12000"));
    let lr = lock(&reclaiming, "zone_lock");
    let allocated = reclaiming.vmstat.iter().filter(|(k, _)| k.starts_with("pgalloc_")).map(|(_, v)| v).sum::<u64>();
    assert!(reclaiming.vmstat["pgsteal_kswapd"] + reclaiming.vmstat["pgsteal_direct"] > 0);
    assert!(lr.acquisitions > allocated.div_ceil(15), "refills and bulk frees: {lr:?}");
    assert_eq!(lr.hold_ns % 10, 0);
}

/// Each lock's figures split by the kernel function that took it (`by_function`), summing to
/// the lock's: without reclaim every zone->lock section is a pcp refill (rmqueue_bulk()); a
/// swapping run adds the bulk frees of full lists (free_pcppages_bulk()) and the lruvec lock's
/// sections name shrink_inactive_list() and folio_batch_move_lru().
#[test]
fn lock_sections_are_split_by_the_kernel_function_that_took_them() {
    let plain = run(&two_readers(false, &costs("zone_move_ns", 10)));
    let zl = lock(&plain, "zone_lock");
    assert_eq!(zl.by_function.keys().collect::<Vec<_>>(), ["rmqueue_bulk"], "{zl:?}");
    assert_eq!(zl.by_function["rmqueue_bulk"].acquisitions, zl.acquisitions);
    let swapping = run(SWAPPING_THREADS);
    for (name, l) in &swapping.sched.as_ref().unwrap().locks {
        let sum = |f: fn(&pagelab::locking::TakerStat) -> u64| l.by_function.values().map(f).sum::<u64>();
        assert_eq!((sum(|t| t.acquisitions), sum(|t| t.contended)), (l.acquisitions, l.contended), "{name}: {l:?}");
        assert_eq!((sum(|t| t.wait_ns), sum(|t| t.hold_ns)), (l.wait_ns, l.hold_ns), "{name}: {l:?}");
    }
    let zl = lock(&swapping, "zone_lock");
    assert!(zl.by_function.keys().all(|k| ["rmqueue_bulk", "free_pcppages_bulk", "drain_all_pages"].contains(&k.as_str())), "{zl:?}");
    assert!(zl.by_function["free_pcppages_bulk"].acquisitions > 0, "{zl:?}");
    let lru = lock(&swapping, "lru_lock");
    assert!(lru.by_function["shrink_inactive_list"].acquisitions > 0 && lru.by_function["folio_batch_move_lru"].acquisitions > 0, "{lru:?}");
}

/// Two cgroups' tasks on two CPUs swapping their anonymous memory to one SSD.
fn two_swappers(extra: &str) -> String {
    let w = |name: &str| {
        format!(
            "[[cgroup]]\npath = \"/{name}\"\nmax = \"24M\"\n[[workload]]\nname = \"{name}\"\ncgroup = \"/{name}\"\nkind = \"anon-rw\"\nsize = \"48M\"\ndistribution = \"uniform\"\nops = 20000\nseed = 4\n"
        )
    };
    format!(
        "[machine]\nmemory = \"512M\"\nkernel = \"6.12\"\npolicy = \"classic\"\ncpus = 2\nswap = {{ device = \"ssd\", size = \"256M\" }}\n{}{}{extra}\n",
        w("a"),
        w("b")
    )
}

/// Models mm/swap_slots.c and mm/swapfile.c (6.1, 6.12): swap slots come from a per-CPU
/// cache that takes the device's si->lock once per SWAP_SLOTS_CACHE_SIZE (64) slots, and
/// mm/swap_state.c: add_to_swap_cache() and __delete_from_swap_cache() take the swap
/// cache's xarray lock once per folio. Two swapping cgroups on one device contend on its
/// si->lock.
#[test]
fn swap_slots_take_the_devices_lock_per_batch_of_64_and_the_swap_cache_lock_per_folio() {
    let r = run(&two_swappers(&costs("swap_slot_ns", 500).replace("xa_store_ns = 0", "xa_store_ns = 100")));
    let (si, cache) = (lock(&r, "swap_lock"), lock(&r, "swap_cache"));
    let (pswpout, steal_anon) = (r.vmstat["pswpout"], r.vmstat["pgsteal_anon"]);
    assert!(pswpout > 1000 && steal_anon > 0, "{pswpout} {steal_anon}");
    assert_eq!(si.hold_ns, si.acquisitions * 64 * 500, "each section a batch of 64 slots: {si:?}");
    assert!(si.acquisitions * 64 >= pswpout, "every slot written came from a refill: {si:?}");
    assert!(si.contended > 0 && si.wait_ns > 0, "two CPUs' refills and frees meet on si->lock: {si:?}");
    // Each reclaimed anon folio entered the swap cache (add_to_swap()) and left it
    // (__remove_mapping()); swap-ins from the SSD enter it too.
    assert!(cache.acquisitions >= 2 * steal_anon, "{cache:?}");
    assert_eq!(cache.hold_ns, cache.acquisitions * 100);
}

/// Seed 004's memcached at a small scale: eight threads on 16 CPUs fill an anonymous set
/// 1.13x memory and read it back at random, swapping to a ramdisk, so that direct reclaim
/// holds the lruvec's lock in long operations beside the other threads' faults.
const SWAPPING_THREADS: &str = r#"
[machine]
memory = "64M"
kernel = "6.1"
policy = "classic"
cpus = 16
swap = { device = "ramdisk", size = "64M" }

[[workload]]
name = "m"
cgroup = "/"
jobs = 8
seed = 40

[[workload.phase]]
kind = "anon-write"
size = "9M"
distribution = "seq"
prefill = false
ops = 2304

[[workload.phase]]
kind = "anon-read"
size = "9M"
distribution = "uniform"
ops = 4608
"#;

/// The run with each lock's calendar limited to `calendar` busy spans, and what the lruvec
/// locks saw (the most spans and sections each kept).
fn with_calendar(calendar: usize) -> (Report, pagelab::locking::LockStat) {
    let s = common::scenario(SWAPPING_THREADS);
    let mut m = pagelab::sim::Machine::new(&s, |mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len())).unwrap();
    m.mm.sched.as_mut().expect("machine.cpus").calendar = calendar;
    m.run(|_| {});
    let mut lru = pagelab::locking::LockStat::default();
    for c in &m.mm.memcgs.cg {
        lru.merge(&c.lruvec.lru_lock.stat);
    }
    (Report::collect(&s, &m), lru)
}

/// Models kernel/locking/qspinlock.c's FIFO handoff (6.1, 6.12) as `crate::locking` places
/// it: a saturated lock's back-to-back sections are kept as one busy span, so the waits are
/// exact however far one operation (a long direct reclaim) runs ahead of the others, in a
/// calendar smaller than the sections it spans; a calendar too small for the spans says so
/// in the report's warnings.
#[test]
fn lock_waits_are_exact_in_a_small_calendar_and_an_overflow_is_a_warning() {
    let (wide, lru) = with_calendar(pagelab::locking::CALENDAR);
    let l = lock(&wide, "lru_lock");
    assert!(l.contended > 1_000 && wide.vmstat["pgscan_direct"] > 0, "a contended lock and direct reclaim: {l:?}");
    assert_eq!(l.forgotten, 0);
    // A calendar just large enough for every lock's spans; the lruvec locks' sections are more
    // than twice their spans, so one entry a section (the calendar before this test) needs
    // more. (Since reclaims yield at cond_resched(), issue 42, no reclaim runs far ahead of
    // the others, and the zone lock's spans, not the lruvec's sections, set the size.)
    let narrow = wide.sched.as_ref().unwrap().locks.values().map(|l| l.calendar_peak).max().unwrap();
    assert!(lru.sections_peak > 2 * lru.calendar_peak, "{lru:?}, a calendar of {narrow}");
    let (small, _) = with_calendar(narrow as usize);
    for name in ["lru_lock", "zone_lock", "swap_cache", "swap_lock"] {
        assert_eq!(lock(&small, name), lock(&wide, name), "{name}: the same sections, the same waits");
    }
    assert_eq!(small.throughput_ops_s, wide.throughput_ops_s);
    assert!(wide.warnings.is_empty() && small.warnings.is_empty(), "{:?}", small.warnings);
    // Too small a calendar for the spans forgets, and the run says which lock.
    let (tiny, _) = with_calendar(2);
    assert!(lock(&tiny, "lru_lock").forgotten > 0);
    assert!(tiny.warnings.iter().any(|w| w.starts_with("lru_lock: ") && w.contains("approximate")), "{:?}", tiny.warnings);
}

/// Models mm/vmscan.c: evict_folios() (6.1): scan_folios() runs under the lruvec's lock and
/// holds it for every folio it looks at, the ones sort_folio() moves on to a younger
/// generation (pgrefill) as well as the ones it isolates (pgscan); the survivors go back under
/// it once (pgscan - pgsteal, order-0 folios), and the retry of clean survivors takes no
/// second isolation section. An anon cgroup at twice its limit: the aging walk finds pages
/// young, so eviction sorts thousands.
#[test]
fn evict_folios_holds_the_lru_lock_for_every_folio_scan_folios_sorts_or_isolates() {
    let text = format!(
        "[machine]\nmemory = \"256M\"\nkernel = \"6.1\"\npolicy = \"mglru\"\ncpus = 2\nswap = {{ device = \"ssd\", size = \"256M\" }}\n\
         [[cgroup]]\npath = \"/a\"\nmax = \"24M\"\n\
         [[workload]]\nname = \"a\"\ncgroup = \"/a\"\nkind = \"anon-rw\"\nsize = \"48M\"\ndistribution = \"uniform\"\nops = 20000\nseed = 4\n{}",
        costs("lru_move_ns", 10)
    );
    let r = run(&text);
    let m = &r.memcg["/a"];
    let (pgscan, pgsteal, pgrefill) = (m["pgscan"], m["pgsteal"], m["pgrefill"]);
    assert!(pgrefill > 1000 && pgscan > pgsteal, "sorted {pgrefill}, scanned {pgscan}, stolen {pgsteal}");
    let evict = &lock(&r, "lru_lock").by_function["evict_folios"];
    assert_eq!(evict.hold_ns / 10, pgscan + pgrefill + (pgscan - pgsteal), "{evict:?}");
}
