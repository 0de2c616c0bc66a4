//! The host kernel's own work, for `[time]`'s kernel keys: each timed by making the running
//! kernel do it through a system call, in the calling thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`: the time the kernel spent on the thread's behalf, not the time
//! it waited for a CPU on a loaded host). Each figure is the median over batches after an
//! untimed one; each batch's set-up (loading the file, mapping it) is not timed. What each
//! includes, against the model's key (docs/scenarios.md, "Where the `[time]` defaults come
//! from"):
//!
//! - **A null system call**: `syscall(SYS_getppid)`, entry and exit with the mitigations the
//!   host runs, and nothing else. It is `syscall_ns`'s entry/exit part.
//! - **A read of a cached page** (`syscall_ns`): `pread()` of one byte from a page of a file
//!   in the page cache: entry, exit and filemap_read()'s lookup (filemap_get_pages()), all
//!   `syscall_ns` stands for; the byte's copy is negligible (a page's is `copy_page_ns`).
//! - **An anonymous zero-fill fault** (`minor_fault_ns`): the first store to each page of a
//!   private anonymous mapping marked `MADV_NOHUGEPAGE` (so every fault is one order-0
//!   page): the exception, handle_mm_fault() to do_anonymous_page(), the page's allocation
//!   and zeroing, its memcg charge, its LRU add and the PTE. Faults are counted by
//!   `getrusage()`'s minor faults; the time is per fault.
//! - **A file-backed minor fault** (printed beside it): the first load from each page of a
//!   shared read-only mapping of a file whose pages are all in the page cache: the exception,
//!   do_read_fault() and filemap_map_pages(), which maps every cached page of the
//!   fault-around window (fault_around_bytes, 64 KiB by default) in one fault. The time is
//!   per fault, with the pages each mapped. The model charges `minor_fault_ns` for every
//!   fault that does not wait for IO (an anonymous zero-fill, a page-cache hit with its
//!   fault-around, a swap-cache hit); the table's value is the anonymous fault's, the one
//!   the key's default cites.
//! - **Reclaim of mapped page-cache pages** (printed, bounding `scan_page_ns` +
//!   `rmap_walk_ns`): `madvise(MADV_PAGEOUT)` over a shared mapping, every page of which is
//!   mapped once, clean, on the LRU and in an order-0 folio. mm/madvise.c:
//!   madvise_cold_or_pageout_pte_range() walks the PTEs, skips a page mapped more than once
//!   (6.1: page_mapcount() != 1; 6.12: folio_mapcount() != folio_nr_pages(), and a folio
//!   likely mapped shared), a page off the LRU (one still in a per-CPU add batch on another
//!   CPU) and, for a file the caller neither owns nor may write, every page cache page;
//!   isolates each page from its LRU (under lru_lock) and hands the list, a page table's
//!   worth (up to 512) at a time, to reclaim_pages() → shrink_folio_list(): try_to_unmap()
//!   (the rmap walk of the file's i_mmap tree to the one PTE, cleared, its TLB flush batched;
//!   one thread, so no IPI), __remove_mapping() with the workingset shadow, and the free.
//!   6.12 passes ignore_references, so that is one rmap walk a page; 6.1 does not, so its
//!   folio_referenced() walks the rmap once more first (the young bits were cleared by the
//!   PTE walk: it finds none). The host's kernel decides which of the two it does. Dirty
//!   pages would be kept (pageout() writes file pages from kswapd only), so the file is
//!   written and synced, dropped and read back before each batch: its pages are clean, and,
//!   read with `POSIX_FADV_RANDOM`, order-0 (page_cache_ra_unbounded() at the mapping's
//!   minimum order). The pages freed are counted by `mincore()` before and after; the time
//!   is per page freed.
//! - **Removal of unmapped page-cache pages** (`reclaim_page_ns`):
//!   `posix_fadvise(POSIX_FADV_DONTNEED)` of the same file, loaded and not mapped:
//!   mapping_try_invalidate() (6.12; invalidate_mapping_pagevec() on 6.1) looks each folio
//!   up and locks it, mapping_evict_folio() removes it (__remove_mapping(), no shadow: it
//!   is not reclaim), and the batch's release takes it off its LRU and frees it. No
//!   isolation, no rmap walk, no TLB flush: the pageout figure less this one bounds the
//!   isolation, the PTE walk and shrink_folio_list()'s checks (`scan_page_ns`'s part), the
//!   rmap walk with its unmap and flush (`rmap_walk_ns`) and the shadow, together.
//! - **An rstat flush** (`rstat_flush_memcg_ns`): a read of this process's memcg's
//!   `memory.stat` (cgroup v2, or v1's memory controller), read-only, no cgroup is created.
//!   The read flushes the memcg's statistics (mem_cgroup_flush_stats()) only when enough
//!   updates are pending (6.12: more than 64 per online CPU in the memcg's subtree; 6.1:
//!   across the machine); before each timed read with a flush, the thread faults in and
//!   unmaps enough anonymous pages to pass that threshold; the read it is compared with
//!   follows as many bytes written to pages already faulted in (the same cache pollution,
//!   no update), and has nothing to flush. The flush is the difference of the two
//!   medians: cgroup_rstat_flush() of the memcg on each CPU that updated it (on 6.1 every
//!   memcg with pending updates), the per-CPU counters folded in by
//!   mem_cgroup_css_rstat_flush(). Other processes in the same cgroup update it too, so the
//!   read without this thread's updates sometimes flushes: the
//!   difference is then an underestimate.
//!
//! - **A remote TLB flush** (`[time.cpu] tlb_flush_ipi_ns`): `mprotect()` of one page of a
//!   shared anonymous mapping from read-write to read-only and back, by this thread pinned to
//!   one CPU, while a sibling thread pinned to another keeps the page in its TLB by loading
//!   it in a loop; the same calls with no sibling (the process single-threaded) are the
//!   baseline, and the difference per pair of calls, per flush IPI, is the flush's round
//!   trip. Only the downgrade flushes: mm/mprotect.c: change_pte_range() asks for a flush of
//!   a PTE whose change pte_needs_flush() (x86: pte_flags_need_flush()) says needs one, which
//!   losing `_PAGE_RW` does and gaining it does not (the PTE is dirty, so the upgrade keeps
//!   it writable: can_change_pte_writable()). At the end of the call, arch/x86/mm/tlb.c:
//!   flush_tlb_mm_range() flushes locally only, unless another CPU is in the mm's cpumask
//!   (cpumask_any_but()): then flush_tlb_multi() → native_flush_tlb_multi() (on a KVM guest
//!   with PV TLB flush, kvm_flush_tlb_multi() first, which skips a preempted vCPU) sends the
//!   IPI to every CPU should_flush_tlb() picks (the mm loaded and not lazy: the sibling's)
//!   and spins until each has run flush_tlb_func(). The spin is the calling thread's CPU
//!   time, so the difference is the IPI's send, the remote CPU's interrupt, flush and
//!   acknowledgement: the wait try_to_unmap_flush_dirty() has in the model (6.1, 6.12 and 7.3
//!   alike, except that 7.3 on a CPU with INVLPGB may give a busy mm a global ASID and flush
//!   it by broadcast, without an IPI). The flush IPIs are counted on the sibling's CPU (x86's
//!   TLB shootdowns in /proc/interrupts) during the pairs with the sibling, less those during
//!   as many pairs alone (other processes' flushes): on a loaded host the sibling is not
//!   always running, and a pair sends fewer than one IPI, so the difference per pair is
//!   divided by the IPIs per pair (where none are counted, one is assumed). On a virtual
//!   machine each IPI is a VM exit and re-entry: the figure is the hypervisor's, not
//!   hardware's.
//!
//! A host that refuses a measurement (no `MADV_PAGEOUT` before Linux 5.4, a seccomp filter,
//! a scratch directory on tmpfs or not writable, no memory controller, one CPU) gets the
//! reason in the table in place of the value, and the default stays.

use std::ffi::CString;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{how, ns, Figure, PAGE};

/// A figure, or why the host refused the measurement.
pub type Outcome = Result<Figure, String>;

/// Faults: the time per fault, and how many pages each fault mapped.
#[derive(Clone, Debug)]
pub struct Faults {
    pub per_fault: Figure,
    pub pages_per_fault: f64,
}

/// Everything this module measures.
pub struct Measured {
    pub null_syscall: Outcome,
    pub cached_read: Outcome,
    pub anon_fault: Result<Faults, String>,
    pub file_fault: Result<Faults, String>,
    pub pageout: Outcome,
    pub dontneed: Outcome,
    /// A `memory.stat` read with a flush, and without.
    pub memory_stat: Result<(Figure, Figure), String>,
}

/// Measures each of the host kernel's costs; `scratch` is the directory of the file the
/// page-cache measurements use.
pub fn measure_kernel(scratch: &Path, quick: bool) -> Measured {
    let batches = if quick { 3 } else { 9 };
    let pages = if quick { 512 } else { 4096 };
    let file = ScratchFile::create(scratch, pages);
    Measured {
        null_syscall: null_syscall(batches, quick),
        cached_read: on(&file, |f| cached_read(f, batches)),
        anon_fault: anon_fault(batches, pages),
        file_fault: on(&file, |f| file_fault(f, batches)),
        pageout: on(&file, |f| pageout(f, batches)),
        dontneed: on(&file, |f| dontneed(f, batches)),
        memory_stat: memory_stat_file().and_then(|stat| rstat_flush(&stat, batches)),
    }
}

/// `measure` on the scratch file, or the reason there is none.
fn on<T>(file: &Result<ScratchFile, String>, measure: impl FnOnce(&ScratchFile) -> Result<T, String>) -> Result<T, String> {
    file.as_ref().map_err(Clone::clone).and_then(measure)
}

/// Writes the figures into the `[time]` table being written, each after a comment naming
/// what was timed; a refused measurement's reason stands in place of its key.
pub fn write_table(w: &mut String, k: &Measured) -> std::fmt::Result {
    writeln!(w, "# The host kernel's own work (Linux {}), in the calling thread's CPU time:", release())?;
    match &k.null_syscall {
        Ok(f) => writeln!(w, "# (a null system call, syscall(SYS_getppid): {} ns, {})", ns(*f), how(*f))?,
        Err(e) => writeln!(w, "# (a null system call is not measured: {e})")?,
    }
    let read = "a 1-byte pread() of a cached page (entry, exit, the page-cache lookup)";
    key(w, "syscall_ns", read, k.cached_read.as_ref().map(|f| (ns(*f), how(*f))))?;
    match &k.file_fault {
        Ok(Faults { per_fault, pages_per_fault }) => {
            writeln!(w, "# (the first load of a cached file page through a shared mapping: {} ns a fault,", ns(*per_fault))?;
            writeln!(w, "# {pages_per_fault:.1} pages mapped a fault (fault-around), {})", how(*per_fault))?;
        }
        Err(e) => writeln!(w, "# (a file-backed minor fault is not measured: {e})")?,
    }
    let anon = "the first store to an anonymous page (an order-0 page zero-filled, charged, mapped)";
    key(w, "minor_fault_ns", anon, k.anon_fault.as_ref().map(|f| (ns(f.per_fault), format!("{}, {:.1} pages a fault", how(f.per_fault), f.pages_per_fault))))?;
    let evict = "posix_fadvise(POSIX_FADV_DONTNEED) of clean unmapped page-cache pages (lookup, __remove_mapping() without a shadow, LRU removal, free), per page freed";
    key(w, "reclaim_page_ns", evict, k.dontneed.as_ref().map(|f| (ns(*f), how(*f))))?;
    write_pageout_bound(w, k)?;
    let flush = "a memory.stat read that flushes this process's memcg, less one with nothing to flush after as much cache pollution";
    key(
        w,
        "rstat_flush_memcg_ns",
        flush,
        k.memory_stat.as_ref().map_err(Clone::clone).and_then(|&(with, without)| excess(with, without, ["a read with a flush", "one without"])),
    )
}

/// One key: the comment saying what was timed and the value, or why it was not measured.
fn key(w: &mut String, name: &str, what: &str, value: Result<(u64, String), impl std::fmt::Display>) -> std::fmt::Result {
    match value {
        Ok((v, how)) => {
            writeln!(w, "# {name}: {what}: {how}")?;
            writeln!(w, "{name} = {}", v.max(1))
        }
        Err(e) => writeln!(w, "# {name} is not measured ({what}): {e}; the default stays"),
    }
}

/// MADV_PAGEOUT's figure and, less the fadvise one, the bound it puts on the isolation,
/// scan and rmap part (written as a comment, not a key: it is a bound, not a measurement).
fn write_pageout_bound(w: &mut String, k: &Measured) -> std::fmt::Result {
    let f = match &k.pageout {
        Ok(f) => *f,
        Err(e) => return writeln!(w, "# (reclaim of mapped page-cache pages by madvise(MADV_PAGEOUT) is not measured: {e})"),
    };
    writeln!(w, "# (madvise(MADV_PAGEOUT) of clean page-cache pages mapped once: isolation, the rmap walk,")?;
    writeln!(w, "# unmap and TLB flush, __remove_mapping() with a shadow, free: {} ns a page freed, {})", ns(f), how(f))?;
    if let Ok(d) = &k.dontneed {
        let bound = f.median_ns - d.median_ns;
        writeln!(w, "# (less the fadvise figure, the isolation, scan and rmap part: scan_page_ns + rmap_walk_ns <= {bound:.0})")?;
    }
    Ok(())
}

/// What `with` took more than `without` (`what` names the two), if it took more.
fn excess(with: Figure, without: Figure, what: [&str; 2]) -> Result<(u64, String), String> {
    let d = with.median_ns - without.median_ns;
    let [w, wo] = what;
    if d < 1.0 {
        return Err(format!("{w} ({:.0} ns) took no longer than {wo} ({:.0} ns)", with.median_ns, without.median_ns));
    }
    Ok((d.round() as u64, format!("{:.0} ns less {:.0} ns ({w}: {}; {wo}: {})", with.median_ns, without.median_ns, how(with), how(without))))
}

/// The running kernel's release, as `uname -r` prints it.
fn release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

/// The last system call's error, after what was asked.
fn os_error(what: &str) -> String {
    format!("{what} failed: {}", std::io::Error::last_os_error())
}

/// This thread's CPU time in nanoseconds.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill; the thread CPU clock exists on
    // every Linux since 2.6.12.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// This thread's minor faults so far.
fn minor_faults() -> u64 {
    // SAFETY: an all-zero rusage is valid for getrusage() to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid to write; RUSAGE_THREAD names the calling thread.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_minflt as u64
}

/// Runs `f` and returns the thread CPU time it took, and its result.
fn cpu_timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = thread_cpu_ns();
    let r = f();
    (thread_cpu_ns() - start, r)
}

/// Runs `batch` once untimed, then `batches` times; each run returns the CPU time it timed
/// and how many units of work it did (at least one). The figure is per unit.
fn sample(batches: usize, mut batch: impl FnMut() -> Result<(f64, u64), String>) -> Outcome {
    batch()?;
    let mut per_unit = Vec::with_capacity(batches);
    let mut units = 0;
    for _ in 0..batches {
        let (ns, n) = batch()?;
        per_unit.push(ns / n.max(1) as f64);
        units += n;
    }
    Ok(Figure::of(per_unit, (units / batches as u64) as usize))
}

/// `syscall(SYS_getppid)`, which does nothing but return the parent's id.
fn null_syscall(batches: usize, quick: bool) -> Outcome {
    let n: u64 = if quick { 20_000 } else { 200_000 };
    sample(batches, || {
        let (ns, ()) = cpu_timed(|| {
            for _ in 0..n {
                // SAFETY: getppid takes no arguments and cannot fail.
                unsafe { libc::syscall(libc::SYS_getppid) };
            }
        });
        Ok((ns, n))
    })
}

/// A one-byte `pread()` at the start of each page of the file, all of them cached.
fn cached_read(file: &ScratchFile, batches: usize) -> Outcome {
    file.reload()?;
    let mut byte = [0u8; 1];
    sample(batches, || {
        let (ns, r) = cpu_timed(|| (0..file.pages).try_for_each(|p| file.read_at(&mut byte, p * PAGE)));
        r?;
        Ok((ns, file.pages as u64))
    })
}

/// Counts the minor faults `touch` takes, and times them.
fn faults_of(touch: impl FnOnce()) -> Result<(f64, u64), String> {
    let before = minor_faults();
    let (ns, ()) = cpu_timed(touch);
    match minor_faults() - before {
        0 => Err("touching the pages took no minor fault (getrusage() counts none)".into()),
        n => Ok((ns, n)),
    }
}

/// The figure per fault of `sample`, with the pages each fault mapped.
fn faults(pages: usize, batches: usize, batch: impl FnMut() -> Result<(f64, u64), String>) -> Result<Faults, String> {
    let per_fault = sample(batches, batch)?;
    Ok(Faults { pages_per_fault: pages as f64 / per_fault.reps.max(1) as f64, per_fault })
}

/// A store to each page of a fresh private anonymous mapping.
fn anon_fault(batches: usize, pages: usize) -> Result<Faults, String> {
    faults(pages, batches, || {
        let map = Mapping::anonymous(pages)?;
        faults_of(|| map.touch(true))
    })
}

/// A load from each page of a fresh shared mapping of the file, all of it cached.
fn file_fault(file: &ScratchFile, batches: usize) -> Result<Faults, String> {
    faults(file.pages, batches, || {
        file.reload()?;
        let map = file.map()?;
        faults_of(|| map.touch(false))
    })
}

/// Times `evict` and counts the pages of `map`'s file it took out of the page cache.
fn evicted_by(map: &Mapping, what: &str, evict: impl FnOnce() -> Result<(), String>) -> Result<(f64, u64), String> {
    let before = map.resident()?;
    let (ns, r) = cpu_timed(evict);
    r?;
    match before.saturating_sub(map.resident()?) {
        0 => Err(format!("{what} freed none of the {before} cached pages")),
        n => Ok((ns, n)),
    }
}

/// `madvise(MADV_PAGEOUT)` over a mapping of the file whose every page is mapped.
fn pageout(file: &ScratchFile, batches: usize) -> Outcome {
    sample(batches, || {
        file.reload()?;
        let map = file.map()?;
        map.touch(false);
        evicted_by(&map, "madvise(MADV_PAGEOUT)", || map.advise(libc::MADV_PAGEOUT, "madvise(MADV_PAGEOUT)"))
    })
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)` of the file, cached and not mapped (the mapping is
/// only `mincore()`'s window on the page cache: none of its pages is touched).
fn dontneed(file: &ScratchFile, batches: usize) -> Outcome {
    sample(batches, || {
        file.reload()?;
        let map = file.map()?;
        evicted_by(&map, "posix_fadvise(POSIX_FADV_DONTNEED)", || file.fadvise(libc::POSIX_FADV_DONTNEED, "posix_fadvise(POSIX_FADV_DONTNEED)"))
    })
}

/// This process's memcg's `memory.stat`, from /proc/self/mounts and /proc/self/cgroup.
fn memory_stat_file() -> Result<PathBuf, String> {
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"));
    memory_stat_path(&read("/proc/self/mounts")?, &read("/proc/self/cgroup")?)
}

/// Where this process's memcg's `memory.stat` is: under cgroup v1's memory hierarchy if the
/// memory controller is bound to one, else under the cgroup v2 mount.
fn memory_stat_path(mounts: &str, cgroups: &str) -> Result<PathBuf, String> {
    let mount_of = |fstype: &str, needs_memory: bool| {
        mounts.lines().map(|l| l.split(' ').collect::<Vec<_>>()).find_map(|f| {
            let fits = f.len() > 3 && f[2] == fstype && (!needs_memory || f[3].split(',').any(|o| o == "memory"));
            fits.then(|| PathBuf::from(f[1]))
        })
    };
    let cgroup_of = |v1: bool| {
        cgroups.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            let fits = if v1 { controllers.split(',').any(|c| c == "memory") } else { controllers.is_empty() };
            fits.then(|| path.trim_start_matches('/').to_string())
        })
    };
    let (mount, path) = match (mount_of("cgroup", true), cgroup_of(true)) {
        (Some(m), Some(p)) => (m, p),
        _ => match (mount_of("cgroup2", false), cgroup_of(false)) {
            (Some(m), Some(p)) => (m, p),
            _ => return Err("no cgroup file system with the memory controller is mounted (/proc/self/mounts, /proc/self/cgroup)".into()),
        },
    };
    let stat = mount.join(path).join("memory.stat");
    if !stat.exists() {
        return Err(format!("{} does not exist: the memory controller is not enabled for this process's cgroup", stat.display()));
    }
    Ok(stat)
}

/// A `memory.stat` read after this thread's updates passed the flush threshold, and the
/// same read after as many bytes written to pages already faulted in (the same cache
/// pollution, no update): the flush is the difference.
fn rstat_flush(stat: &Path, batches: usize) -> Result<(Figure, Figure), String> {
    let read = || std::fs::read(stat).map(drop).map_err(|e| format!("cannot read {}: {e}", stat.display()));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Each page's fault and unmap update several counters (the charge, NR_ANON_MAPPED, the
    // LRU size, PGFAULT): 64 pages per CPU passes 6.12's threshold of 64 updates per CPU.
    let pages = (64 * cpus).max(1024);
    let flushed = sample(batches, || {
        Mapping::anonymous(pages)?.touch(true);
        let (ns, r) = cpu_timed(read);
        r.map(|()| (ns, 1))
    })?;
    let faulted = Mapping::anonymous(pages)?;
    faulted.fill();
    let clean = sample(batches, || {
        faulted.fill();
        let (ns, r) = cpu_timed(read);
        r.map(|()| (ns, 1))
    })?;
    Ok((flushed, clean))
}

/// A remote TLB flush: `mprotect()` pairs (read-write to read-only and back) with a
/// sibling thread on another CPU loading the page, and alone; and the flush IPIs the
/// sibling's CPU took per pair, if /proc/interrupts counts them.
pub struct RemoteFlush {
    pub with_sibling: Figure,
    pub alone: Figure,
    /// The CPU of the calling thread and the sibling's.
    pub cpus: (usize, usize),
    /// TLB shootdowns the sibling's CPU took a pair with the sibling, less those it took
    /// (from other processes) a pair alone: fewer than one when the sibling was not running.
    pub ipis_per_pair: Option<f64>,
}

/// Measures the remote flush (the module's comment says what is timed), the calling thread
/// pinned to the first CPU the process may use and the sibling to the second; the calling
/// thread's affinity is given back after.
pub fn remote_flush(quick: bool) -> Result<RemoteFlush, String> {
    let allowed = allowed_cpus()?;
    let cpus = two_cpus(&allowed)?;
    pin(&[cpus.0])?;
    let r = flush_pairs(cpus, quick);
    pin(&allowed)?;
    r
}

/// The first two of the CPUs the process may use, or why there are not two.
fn two_cpus(allowed: &[usize]) -> Result<(usize, usize), String> {
    match allowed {
        [a, b, ..] => Ok((*a, *b)),
        _ => Err(format!("this process may run on one CPU only ({allowed:?}, sched_getaffinity()): a remote TLB flush needs a second")),
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Result<Vec<usize>, String> {
    // SAFETY: an all-zero cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid to write and its size is given.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return Err(os_error("sched_getaffinity()"));
    }
    // SAFETY: every index is below CPU_SETSIZE, inside the set.
    Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Lets the calling thread run on `cpus` only.
fn pin(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: an all-zero cpu_set_t is an empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: each CPU came from sched_getaffinity(), below CPU_SETSIZE.
    cpus.iter().for_each(|&c| unsafe { libc::CPU_SET(c, &mut set) });
    // SAFETY: `set` is a valid set and its size is given; 0 names the calling thread.
    match unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } {
        0 => Ok(()),
        _ => Err(os_error(&format!("sched_setaffinity() to CPUs {cpus:?}"))),
    }
}

/// The `mprotect()` pairs alone, then with the sibling on `cpus.1` loading the page.
fn flush_pairs(cpus: (usize, usize), quick: bool) -> Result<RemoteFlush, String> {
    let (batches, pairs) = if quick { (3, 200) } else { (9, 2000) };
    let page = Mapping::new(1, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1)?;
    page.touch(true);
    let toggle = || {
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let (ns, r) = cpu_timed(|| (0..pairs).try_for_each(|_| page.protect(libc::PROT_READ).and_then(|()| page.protect(rw))));
        r.map(|()| (ns, pairs))
    };
    let alone_from = shootdowns(cpus.1);
    let alone = sample(batches, toggle)?;
    let alone_took = shootdowns(cpus.1).zip(alone_from).map(|(a, b)| a.saturating_sub(b));
    let (stop, touching) = (AtomicBool::new(false), AtomicBool::new(false));
    let addr = page.addr as usize;
    std::thread::scope(|s| {
        let sibling = s.spawn(|| touch_until(addr, cpus.1, &touching, &stop));
        while !touching.load(Ordering::Acquire) && !sibling.is_finished() {
            std::thread::yield_now();
        }
        let before = shootdowns(cpus.1);
        let with = if sibling.is_finished() { Err(String::new()) } else { sample(batches, toggle) };
        let took = shootdowns(cpus.1).zip(before).map(|(a, b)| a.saturating_sub(b));
        let calls = ((batches + 1) as u64 * pairs) as f64;
        let ipis = took.zip(alone_took).map(|(w, a)| (w as f64 - a as f64) / calls);
        stop.store(true, Ordering::Release);
        sibling.join().map_err(|_| "the sibling thread panicked".to_string())??;
        Ok(RemoteFlush { with_sibling: with?, alone, cpus, ipis_per_pair: ipis })
    })
}

/// The sibling: pinned to `cpu`, loads the byte at `addr` until `stop`, keeping its page's
/// translation in that CPU's TLB and the mm loaded there.
fn touch_until(addr: usize, cpu: usize, touching: &AtomicBool, stop: &AtomicBool) -> Result<(), String> {
    pin(&[cpu])?;
    touching.store(true, Ordering::Release);
    while !stop.load(Ordering::Acquire) {
        // SAFETY: the page's first byte; the mapping outlives this thread (a scoped thread)
        // and stays readable under every protection it is given.
        unsafe { (addr as *const u8).read_volatile() };
    }
    Ok(())
}

/// The TLB shootdowns `cpu` has taken: x86's "TLB" row of /proc/interrupts, if there is one.
fn shootdowns(cpu: usize) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    let mut lines = text.lines();
    let column = lines.next()?.split_whitespace().position(|c| c == format!("CPU{cpu}"))?;
    let row = lines.find(|l| l.trim_start().starts_with("TLB:"))?;
    row.split_whitespace().nth(column + 1)?.parse().ok()
}

/// Writes `tlb_flush_ipi_ns` into the `[time.cpu]` table being written, or why it was not
/// measured.
pub fn write_remote_flush(w: &mut String, f: &Result<RemoteFlush, String>) -> std::fmt::Result {
    let what = "mprotect() of a page read-write to read-only and back, with a sibling thread on another CPU loading it, less alone, per flush IPI the sibling's CPU took (on a VM, an IPI is a VM exit)";
    key(w, "tlb_flush_ipi_ns", what, f.as_ref().map_err(Clone::clone).and_then(per_ipi))
}

/// The excess time of a pair with the sibling, per flush IPI its CPU took (one a pair if
/// /proc/interrupts does not count them); refused if the sibling hardly ran.
fn per_ipi(f: &RemoteFlush) -> Result<(u64, String), String> {
    let (per_pair, how) = excess(f.with_sibling, f.alone, ["with the sibling", "alone"])?;
    let (ipis, counted) = match f.ipis_per_pair {
        Some(n) if n < 0.05 => return Err(format!("CPU {} took {n:.2} flush IPIs a pair: the sibling hardly ran there", f.cpus.1)),
        Some(n) => (n, format!("{n:.2} flush IPIs a pair (TLB shootdowns beyond those of as many pairs alone)")),
        None => (1.0, "flush IPIs not counted (no TLB row in /proc/interrupts): one a pair assumed".into()),
    };
    let value = (per_pair as f64 / ipis).round() as u64;
    Ok((value, format!("CPU {} to CPU {}: {how}, {per_pair} ns a pair over {counted}", f.cpus.0, f.cpus.1)))
}

/// A mapping of whole pages, unmapped when dropped.
struct Mapping {
    addr: *mut u8,
    pages: usize,
}

impl Mapping {
    fn new(pages: usize, prot: i32, flags: i32, fd: i32) -> Result<Mapping, String> {
        // SAFETY: a fresh mapping at an address the kernel picks; nothing else refers to it.
        let addr = unsafe { libc::mmap(std::ptr::null_mut(), pages * PAGE, prot, flags, fd, 0) };
        match addr {
            libc::MAP_FAILED => Err(os_error("mmap()")),
            a => Ok(Mapping { addr: a.cast(), pages }),
        }
    }

    /// Private anonymous memory without huge pages (THP, and on 6.8 and later mTHP, are off
    /// for a VM_NOHUGEPAGE area), so that each first store is one order-0 fault.
    fn anonymous(pages: usize) -> Result<Mapping, String> {
        let map = Mapping::new(pages, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)?;
        // A kernel without THP refuses the advice (EINVAL) and has no huge pages anyway.
        let _ = map.advise(libc::MADV_NOHUGEPAGE, "madvise(MADV_NOHUGEPAGE)");
        Ok(map)
    }

    /// Stores to (or loads from) the first byte of each page.
    fn touch(&self, write: bool) {
        for p in 0..self.pages {
            // SAFETY: the byte lies inside this mapping, readable and, when written,
            // writable (only anonymous mappings are written).
            unsafe {
                let byte = self.addr.add(p * PAGE);
                if write {
                    byte.write_volatile(1);
                } else {
                    byte.read_volatile();
                }
            }
        }
    }

    /// Writes every byte (of an anonymous mapping).
    fn fill(&self) {
        // SAFETY: the whole mapping, writable (only anonymous mappings are filled).
        unsafe { std::ptr::write_bytes(self.addr, 1, self.pages * PAGE) };
    }

    fn advise(&self, advice: i32, what: &str) -> Result<(), String> {
        // SAFETY: the range is this mapping; the advice changes how it is backed, and a
        // page it drops reads back as the file's (or, never here, zeros).
        match unsafe { libc::madvise(self.addr.cast(), self.pages * PAGE, advice) } {
            0 => Ok(()),
            _ => Err(os_error(what)),
        }
    }

    fn protect(&self, prot: i32) -> Result<(), String> {
        // SAFETY: the range is this mapping; every protection given keeps it readable.
        match unsafe { libc::mprotect(self.addr.cast(), self.pages * PAGE, prot) } {
            0 => Ok(()),
            _ => Err(os_error("mprotect()")),
        }
    }

    /// How many of the pages are in memory: for a file mapping, in the page cache.
    fn resident(&self) -> Result<u64, String> {
        let mut vec = vec![0u8; self.pages];
        // SAFETY: `vec` holds one byte per page of the mapping.
        match unsafe { libc::mincore(self.addr.cast(), self.pages * PAGE, vec.as_mut_ptr()) } {
            0 => Ok(vec.iter().filter(|&&b| b & 1 != 0).count() as u64),
            _ => Err(os_error("mincore()")),
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping this struct made, unmapped once.
        unsafe { libc::munmap(self.addr.cast(), self.pages * PAGE) };
    }
}

/// A file of `pages` pages on a disk file system, deleted when dropped.
struct ScratchFile {
    file: File,
    path: PathBuf,
    pages: usize,
}

impl ScratchFile {
    /// Writes the file and syncs it, so that its pages are clean; reads will be random
    /// (`POSIX_FADV_RANDOM`), so that reading it back makes order-0 folios.
    fn create(dir: &Path, pages: usize) -> Result<ScratchFile, String> {
        disk_backed(dir)?;
        let path = dir.join(format!(".pagelab-calibrate-{}.tmp", std::process::id()));
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path);
        let file = file.map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut s = ScratchFile { file, path, pages };
        let page = [0x5a_u8; PAGE];
        (0..pages).try_for_each(|_| s.file.write_all(&page)).and_then(|()| s.file.sync_all()).map_err(|e| format!("cannot write {}: {e}", s.path.display()))?;
        s.fadvise(libc::POSIX_FADV_RANDOM, "posix_fadvise(POSIX_FADV_RANDOM)")?;
        Ok(s)
    }

    fn fadvise(&self, advice: i32, what: &str) -> Result<(), String> {
        // SAFETY: advice on this file's whole range; it changes caching, never contents.
        match unsafe { libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, advice) } {
            0 => Ok(()),
            e => Err(format!("{what} failed: {}", std::io::Error::from_raw_os_error(e))),
        }
    }

    fn read_at(&self, buf: &mut [u8], offset: usize) -> Result<(), String> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, offset as u64).map_err(|e| format!("cannot read {}: {e}", self.path.display()))
    }

    /// Drops the file's pages from the page cache and reads them all back: clean, unmapped,
    /// each on its LRU list (or in this CPU's batch for it).
    fn reload(&self) -> Result<(), String> {
        self.fadvise(libc::POSIX_FADV_DONTNEED, "posix_fadvise(POSIX_FADV_DONTNEED)")?;
        let mut chunk = vec![0u8; 16 * PAGE];
        (0..self.pages).step_by(16).try_for_each(|p| {
            let n = 16.min(self.pages - p) * PAGE;
            self.read_at(&mut chunk[..n], p * PAGE)
        })
    }

    /// A shared read-only mapping of the whole file (none of it mapped yet).
    fn map(&self) -> Result<Mapping, String> {
        Mapping::new(self.pages, libc::PROT_READ, libc::MAP_SHARED, self.file.as_raw_fd())
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Refuses a directory on tmpfs or ramfs: their pages are shmem (swap-backed) or never
/// reclaimed, not the page cache of a file system.
fn disk_backed(dir: &Path) -> Result<(), String> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(|_| format!("{} has a NUL byte", dir.display()))?;
    // SAFETY: an all-zero statfs is valid for statfs() to fill.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `fs` valid to write.
    if unsafe { libc::statfs(c.as_ptr(), &mut fs) } != 0 {
        return Err(os_error(&format!("statfs({})", dir.display())));
    }
    // ramfs's magic (include/uapi/linux/magic.h); the libc crate names only tmpfs's.
    const RAMFS_MAGIC: libc::__fsword_t = 0x8584_58f6;
    match fs.f_type {
        libc::TMPFS_MAGIC | RAMFS_MAGIC => {
            Err(format!("{} is on tmpfs or ramfs, whose pages are not a disk file system's page cache: give --scratch a directory on one", dir.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stat_is_found_under_v1s_memory_hierarchy_before_v2() {
        let dir = std::env::temp_dir().join(format!("pagelab-memcg-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("v1/job")).unwrap();
        std::fs::write(dir.join("v1/job/memory.stat"), "cache 0\n").unwrap();
        let mounts = format!("cgroup2 {0}/v2 cgroup2 rw 0 0\ncgroup {0}/v1 cgroup rw,relatime,memory 0 0\n", dir.display());
        let found = memory_stat_path(&mounts, "4:memory:/job\n0::/\n");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.unwrap(), dir.join("v1/job/memory.stat"));
    }

    #[test]
    fn a_host_without_a_memory_controller_is_refused_with_the_reason() {
        let e = memory_stat_path("proc /proc proc rw 0 0\n", "0::/\n").unwrap_err();
        assert!(e.contains("no cgroup file system with the memory controller"), "{e}");
        let e = memory_stat_path("cgroup2 /nonexistent-cgroup2 cgroup2 rw 0 0\n", "0::/user.slice\n").unwrap_err();
        assert!(e.contains("/nonexistent-cgroup2/user.slice/memory.stat does not exist"), "{e}");
    }

    #[test]
    fn flush_tlb_mm_range_has_no_remote_cpu_to_flush_on_a_one_cpu_host() {
        let e = two_cpus(&[3]).unwrap_err();
        assert!(e.contains("one CPU only ([3]") && e.contains("needs a second"), "{e}");
        assert_eq!(two_cpus(&[2, 5, 7]).unwrap(), (2, 5));
        let mut table = String::new();
        write_remote_flush(&mut table, &Err(e)).unwrap();
        assert!(table.contains("# tlb_flush_ipi_ns is not measured (") && table.contains("needs a second"), "{table}");
        assert!(!table.contains("\ntlb_flush_ipi_ns ="), "{table}");
    }

    #[test]
    fn the_remote_flush_is_written_as_the_excess_over_the_flush_alone() {
        let fig = |ns: f64| Figure::of(vec![ns; 3], 2000);
        let f = RemoteFlush { with_sibling: fig(9500.0), alone: fig(1500.0), cpus: (0, 1), ipis_per_pair: Some(0.5) };
        let mut table = String::new();
        write_remote_flush(&mut table, &Ok(f)).unwrap();
        assert!(table.contains("\ntlb_flush_ipi_ns = 16000\n"), "{table}");
        assert!(table.contains("CPU 0 to CPU 1") && table.contains("8000 ns a pair over 0.50 flush IPIs a pair"), "{table}");
        let f = RemoteFlush { with_sibling: fig(9500.0), alone: fig(1500.0), cpus: (0, 1), ipis_per_pair: Some(0.01) };
        let mut table = String::new();
        write_remote_flush(&mut table, &Ok(f)).unwrap();
        assert!(table.contains("CPU 1 took 0.01 flush IPIs a pair: the sibling hardly ran there"), "{table}");
        let f = RemoteFlush { with_sibling: fig(1400.0), alone: fig(1500.0), cpus: (0, 1), ipis_per_pair: None };
        let mut table = String::new();
        write_remote_flush(&mut table, &Ok(f)).unwrap();
        assert!(
            table.contains("# tlb_flush_ipi_ns is not measured (") && table.contains("with the sibling (1400 ns) took no longer than alone (1500 ns)"),
            "{table}"
        );
    }

    #[test]
    fn a_scratch_directory_that_cannot_hold_the_file_is_refused_with_the_reason() {
        let e = ScratchFile::create(Path::new("/nonexistent-pagelab-dir"), 4).err().unwrap();
        assert!(e.contains("statfs(/nonexistent-pagelab-dir) failed"), "{e}");
        let mut table = String::new();
        let k = Measured {
            null_syscall: Err("refused".into()),
            cached_read: Err(e.clone()),
            anon_fault: Err("refused".into()),
            file_fault: Err(e.clone()),
            pageout: Err(e.clone()),
            dontneed: Err(e),
            memory_stat: Err("refused".into()),
        };
        write_table(&mut table, &k).unwrap();
        for key in ["syscall_ns", "minor_fault_ns", "reclaim_page_ns", "rstat_flush_memcg_ns"] {
            assert!(table.contains(&format!("# {key} is not measured (")), "{table}");
            assert!(!table.contains(&format!("\n{key} =")), "{table}");
        }
    }
}
