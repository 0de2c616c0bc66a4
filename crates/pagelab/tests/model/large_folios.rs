//! 7.3's large page-cache folios ([`Kernel::large_folio_readahead`], docs/kernel-7.3.md):
//! readahead's orders, reads that find and mark them, reclaim that takes them whole and
//! counts their pages, one shadow over a folio's range. Each test is named after its rule and
//! checks 6.12 (order-0 folios only) where the rule is 7.3's.

use crate::common;
use common::*;

use pagelab::kernel::Kernel;
use pagelab::mm::folio::pg;
use pagelab::mm::mapping::Entry;
use pagelab::mm::vmstat::Ev;
use pagelab::sim::Machine;
use pagelab_workload::{Access, Advice, Op};

/// One file of `pages` pages read by one task with the kernel's normal readahead (`ops = 0`:
/// the test drives the reads), on a machine of `memory`.
fn one_file(memory: &str, kernel: &str, policy: &str, pages: u64) -> String {
    let random = common::one_file_scenario(memory, kernel, policy, pages);
    let normal = random.replace("fadvise = \"random\"\n", "");
    assert_ne!(normal, random, "the common scenario reads at random");
    normal
}

/// A buffered read of `npages` pages at `page` with normal readahead.
fn seq_read(page: u64, npages: u64) -> Op {
    Op {
        object: 0,
        page,
        npages: npages as u32,
        write: false,
        access: Access::Buffered,
        advice: Advice::Normal,
        fill: false,
        think_ns: 0,
        due: None,
        more: false,
    }
}

/// The order of the folio holding page `page` of the file, if cached.
fn order_at<P: pagelab::policy::Policy>(m: &Machine<P>, page: u64) -> Option<u32> {
    pfn_of(m, 0, 0, page).map(|pfn| m.mm.folios.get(pfn).order())
}

/// The first page of the folio holding page `page`.
fn folio_index<P: pagelab::policy::Policy>(m: &Machine<P>, page: u64) -> u64 {
    let (base, _) = m.object(0, 0);
    let pfn = pfn_of(m, 0, 0, page).expect("cached");
    (m.mm.folios.get(pfn).vpn - base) as u64
}

/// Every cached folio of the file: (first page, order), in page order.
fn folios<P: pagelab::policy::Policy>(m: &Machine<P>, pages: u64) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let mut page = 0;
    while page < pages {
        match pfn_of(m, 0, 0, page) {
            Some(_) => {
                let (first, order) = (folio_index(m, page), order_at(m, page).unwrap());
                out.push((first, order));
                page = first + (1 << order);
            }
            None => page += 1,
        }
    }
    out
}

/// Reads pages `from..to` one page per call, checking the machine after each.
fn read_pages<P: pagelab::policy::Policy>(m: &mut Machine<P>, from: u64, to: u64) {
    for page in from..to {
        m.apply(0, seq_read(page, 1));
        m.check().unwrap_or_else(|e| panic!("after reading page {page}: {e}"));
    }
}

#[test]
fn large_folio_readahead_async_raises_the_order_by_two_up_to_ilog2_of_the_window() {
    let mut m = classic(&one_file("64M", "7.3", "classic", 1024));
    read_pages(&mut m, 0, 200);
    let f = folios(&m, 1024);
    // The sync readahead at page 0 reads order 0; the first async one (hitting page 1's
    // marker) order 2.
    assert!(f.iter().take_while(|&&(i, _)| i < 4).all(|&(_, o)| o == 0), "{f:?}");
    assert_eq!(order_at(&m, 4), Some(2), "{f:?}");
    // Each later window's order is at most 2 above the one before, and never above ilog2 of
    // the 32-page window (read_ahead_kb = 128): 5.
    let max = f.iter().map(|&(_, o)| o).max().unwrap();
    assert_eq!(max, 5, "{f:?}");
    for w in f.windows(2) {
        assert!(w[1].1 <= w[0].1 + 2, "order jumps by more than 2: {w:?} in {f:?}");
    }
    // 6.12: order 0 only, and the predicate says so.
    let mut old = classic(&one_file("64M", "6.12", "classic", 1024));
    read_pages(&mut old, 0, 200);
    assert!(folios(&old, 1024).iter().all(|&(_, o)| o == 0));
    assert!(Kernel::V7_3.large_folio_readahead() && !Kernel::V6_12.large_folio_readahead());
}

#[test]
fn large_folio_readahead_sync_readahead_resets_the_order() {
    let mut m = classic(&one_file("64M", "7.3", "classic", 4096));
    read_pages(&mut m, 0, 300);
    assert_eq!(order_at(&m, 256), Some(5));
    // A jump: a lone read at 2000 (read as is), then 2001, a sequential miss: a sync
    // readahead, whose window is order 0 again, and the async one after it order 2.
    read_pages(&mut m, 2000, 2002);
    let f: Vec<_> = folios(&m, 4096).into_iter().filter(|&(i, _)| i >= 2000).collect();
    assert!(f.iter().filter(|&&(i, _)| i < 2005).all(|&(_, o)| o == 0), "{f:?}");
    read_pages(&mut m, 2002, 2006);
    let f: Vec<_> = folios(&m, 4096).into_iter().filter(|&(i, _)| i >= 2005).collect();
    assert_eq!(f.iter().map(|&(_, o)| o).max(), Some(2), "{f:?}");
}

#[test]
fn large_folio_readahead_folios_are_aligned_and_stop_at_the_window_and_the_file_end() {
    // Streams that start unaligned (after a lone read, the context readahead), with reads of
    // several pages, over a file whose size is not a power of two.
    for (start, npages) in [(0, 1), (3, 1), (5, 3), (77, 7), (130, 16)] {
        let pages = 1000;
        let mut m = classic(&one_file("64M", "7.3", "classic", pages));
        let mut page = start;
        while page < pages {
            m.apply(0, seq_read(page, npages));
            m.check().unwrap_or_else(|e| panic!("start {start}: {e}"));
            page += npages;
        }
        let f = folios(&m, pages);
        assert!(f.iter().any(|&(_, o)| o >= 2), "start {start}: no large folio: {f:?}");
        for &(i, o) in &f {
            assert_eq!(i % (1 << o), 0, "start {start}: folio at {i} of order {o} is not aligned");
            assert!(i + (1 << o) <= pages, "start {start}: folio at {i} of order {o} passes the end of the file");
        }
        // Unaligned windows make smaller folios where they begin.
        if start % 2 == 1 {
            assert_eq!(order_at(&m, start), Some(0), "start {start}: {f:?}");
        }
    }
}

#[test]
fn large_folio_readahead_a_read_marks_a_folio_accessed_once() {
    let mut m = classic(&one_file("64M", "7.3", "classic", 1024));
    read_pages(&mut m, 0, 40);
    let pfn = pfn_of(&m, 0, 0, 32).unwrap();
    assert_eq!(m.mm.folios.get(pfn).order(), 4);
    // Pages 32..40 were read one call each: the first marked the folio, the others ended in
    // the same folio as the read before them (pos_same_folio()): referenced, not activated.
    let f = *m.mm.folios.get(pfn);
    assert!(f.test(pg::REFERENCED) && !f.test(pg::ACTIVE), "flags {:#x}", f.flags);
    // A later read that starts in the folio after a read elsewhere marks it again: active
    // (the classic LRU's second access).
    m.apply(0, seq_read(500, 1));
    m.apply(0, seq_read(33, 1));
    let f = *m.mm.folios.get(pfn);
    assert!(f.test(pg::ACTIVE), "the second read call marks it again: flags {:#x}", f.flags);
    // 6.12: the same reads, order-0 pages: each page was marked by its own read.
    let mut old = classic(&one_file("64M", "6.12", "classic", 1024));
    read_pages(&mut old, 0, 40);
    for page in 32..40 {
        let f = *old.mm.folios.get(pfn_of(&old, 0, 0, page).unwrap());
        assert!(f.order() == 0 && f.test(pg::REFERENCED), "6.12 page {page}");
    }
}

/// A sequential reader of a file twice the memory of a 64M machine, read twice.
fn streamer(kernel: &str, policy: &str) -> String {
    format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
policy = "{policy}"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "128M"
distribution = "seq"
block_size = "16k"
ops = 16384
"#
    )
}

#[test]
fn large_folio_readahead_reclaim_takes_folios_whole_and_counts_pages() {
    for policy in ["classic", "mglru"] {
        for kernel in ["6.12", "7.3"] {
            let text = streamer(kernel, policy);
            let (pgpgin, file_pages, stolen, scanned, large, checks) = if policy == "classic" {
                let mut m = classic(&text);
                run_checked(&mut m)
            } else {
                let mut m = mglru(&text);
                run_checked(&mut m)
            };
            assert!(checks > 0);
            // Every page read in is resident or was reclaimed: pgsteal counts pages.
            assert!(stolen > 0, "{kernel} {policy}: reclaim ran");
            assert_eq!(pgpgin / 4, file_pages + stolen, "{kernel} {policy}: pgpgin {pgpgin}, file pages {file_pages}, pgsteal {stolen}");
            assert!(scanned >= stolen, "{kernel} {policy}");
            if kernel == "7.3" {
                assert!(large > 0, "{kernel} {policy}: large folios on the LRU");
            } else {
                assert_eq!(large, 0, "{kernel} {policy}");
            }
        }
    }
}

/// Runs a machine to its end, checking it every 512 steps; returns pgpgin, the file pages
/// resident, pgsteal_file, pgscan_file, the large folios resident at the end and the checks
/// made.
fn run_checked<P: pagelab::policy::Policy>(m: &mut Machine<P>) -> (u64, u64, u64, u64, u64, u64) {
    let mut steps = 0u64;
    let mut checks = 0;
    while m.step() {
        steps += 1;
        if steps.is_multiple_of(512) {
            m.check().unwrap_or_else(|e| panic!("step {steps}: {e}"));
            checks += 1;
        }
    }
    m.check().unwrap();
    let large = m.mm.folios.f.iter().filter(|f| f.vpn != u32::MAX && !f.test(pg::TAIL) && f.order() > 0).count() as u64;
    (ev(m, Ev::PgpgIn), m.mm.nr_file_pages, ev(m, Ev::PgStealFile), ev(m, Ev::PgScanFile), large, checks)
}

/// Streams a 128M file on a 64M machine in 16-page reads until the folio that holds page
/// 64 is evicted; returns its range's slots, then reads a page near each end of the range
/// alone (an order-0 read, POSIX_FADV_RANDOM) and returns the workingset_refault_file they
/// counted and whether each page is resident after.
fn shadow_run<P: pagelab::policy::Policy>(m: &mut Machine<P>, refault: bool) -> (Vec<Entry>, u64, Vec<bool>) {
    let base = m.object(0, 0).0;
    let mut page = 0;
    while page < 200 {
        m.apply(0, seq_read(page, 16));
        page += 16;
    }
    let (first, nr) = (folio_index(m, 64), 1u64 << order_at(m, 64).unwrap());
    while matches!(m.mm.space.get(base + 64), Entry::Resident(_)) {
        m.apply(0, seq_read(page, 16));
        page += 16;
        assert!(page < 32768, "page 64 never evicted");
    }
    m.check().unwrap();
    let slots: Vec<Entry> = (first..first + nr).map(|p| m.mm.space.get(base + p as u32)).collect();
    let before = ev(m, Ev::WorkingsetRefaultFile);
    let mut resident = Vec::new();
    if refault {
        for p in [first + 1, first + nr - 2] {
            m.apply(0, read(0, p));
            resident.push(matches!(m.mm.space.get(base + p as u32), Entry::Resident(_)));
        }
    }
    m.check().unwrap();
    (slots, ev(m, Ev::WorkingsetRefaultFile) - before, resident)
}

#[test]
fn large_folio_readahead_one_shadow_covers_the_range_and_refaults_each_smaller_read() {
    for policy in ["classic", "mglru"] {
        let text = one_file("64M", "7.3", policy, 32768);
        let run = |refault: bool| if policy == "classic" { shadow_run(&mut classic(&text), refault) } else { shadow_run(&mut mglru(&text), refault) };
        let (slots, _, _) = run(false);
        assert!(slots.len() >= 4, "{policy}: page 64 in a large folio");
        let Entry::Shadow(s) = slots[0] else { panic!("{policy}: page 64 left no shadow: {:?}", slots[0]) };
        assert!(slots.iter().all(|&e| e == Entry::Shadow(s)), "{policy}: one shadow over the folio's range: {slots:?}");
        let (_, refaults, resident) = run(true);
        assert!(resident.iter().all(|&r| r), "{policy}");
        assert_eq!(refaults, 2, "{policy}: each order-0 read in the range is a refault of one page");
    }
    // 6.12: order-0 pages, each evicted with its own shadow.
    let mut old = classic(&one_file("64M", "6.12", "classic", 32768));
    let base = old.object(0, 0).0;
    let mut page = 0;
    while page < 200 || matches!(old.mm.space.get(base + 64), Entry::Resident(_)) {
        old.apply(0, seq_read(page, 16));
        page += 16;
    }
    let slots: Vec<Entry> = (64..96).map(|p| old.mm.space.get(base + p)).collect();
    assert!(slots.windows(2).any(|w| w[0] != w[1]), "6.12: a shadow per page: {slots:?}");
}

#[test]
fn large_folio_readahead_writes_and_mappings_count_a_folio_by_its_pages() {
    // A reader, a writer and an mmap reader of one file, under memory pressure: the dirty,
    // writeback, mapped and LRU counts of large folios add up (the machine's checks).
    for policy in ["classic", "mglru"] {
        let text = format!(
            r#"
[machine]
memory = "48M"
kernel = "7.3"
policy = "{policy}"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file = "shared"
file_size = "96M"
distribution = "seq"
block_size = "64k"
ops = 3000
[[workload]]
name = "w"
cgroup = "/"
kind = "file-write"
file = "shared"
file_size = "96M"
distribution = "zipf:0.9"
ops = 3000
[[workload]]
name = "m"
cgroup = "/"
kind = "mmap-read"
file = "shared"
file_size = "96M"
distribution = "seq"
madvise = "sequential"
ops = 3000
"#
        );
        let checks = if policy == "classic" { run_checked(&mut classic(&text)).5 } else { run_checked(&mut mglru(&text)).5 };
        assert!(checks > 0, "{policy}");
    }
}
