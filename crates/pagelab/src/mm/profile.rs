//! Where the model's CPU time goes, by the kernel function that spends it, in the shape of
//! a `perf report` of the kernel (`pagelab run --profile`). Observability only: no rule of the
//! model reads it. Each charge of CPU time (`Mm::cpu_in`) names its function; charges that
//! name none count as `other`. The tasks' and kswapd's time are kept apart, as the seeds'
//! profiles are kswapd's.

use serde::Serialize;

/// The functions a CPU charge is booked to: the kernel function (6.1, 6.12) whose work the
/// cost stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Func {
    /// A read()/write() system call's entry, exit and page-cache lookup (`filemap_read()`).
    FilemapRead,
    /// Copying a page to or from the user (`copy_page_to_iter()`).
    CopyPage,
    /// A page fault that does not wait for IO (`handle_mm_fault()`).
    HandleMmFault,
    /// A reverse-map walk (`page_vma_mapped_walk()`, under folio_referenced() and
    /// try_to_unmap()).
    PageVmaMappedWalk,
    /// The classic LRU's isolation scan (`isolate_lru_folios()`).
    IsolateLruFolios,
    /// MGLRU's scan of a generation's folios it sorts or skips (`scan_folios()`).
    ScanFolios,
    /// MGLRU's page-table walk (`walk_page_range()` under try_to_inc_max_seq()).
    WalkPageRange,
    /// `shrink_folio_list()`'s own work per folio.
    ShrinkFolioList,
    /// Freeing a reclaimed folio (`__remove_mapping()` and the free).
    RemoveMapping,
    /// A synchronous device's transfer on the submitter's CPU (brd's copy, zram's
    /// compression or decompression: `brd_submit_bio()`, `zram_bvec_rw()`).
    SyncDeviceIo,
    /// The block layer's CPU per page and request of a queued device (`submit_bio()`).
    SubmitBio,
    /// LRU list moves under the lruvec's lock (`lruvec_add_folio()`, `lruvec_del_folio()`).
    LruMove,
    /// Spinning on a contended lock (`native_queued_spin_lock_slowpath()`).
    QueuedSpinLockSlowpath,
    /// Page-cache and swap-cache stores under a mapping's `i_pages` lock (`xas_store()`).
    XaStore,
    /// Pages moved between a zone's buddy and per-CPU lists under `zone->lock`
    /// (`rmqueue_bulk()`, `free_pcppages_bulk()`).
    ZoneBulk,
    /// Swap slots taken and given back under the swap device's lock (`scan_swap_map_slots()`,
    /// `swapcache_free_entries()`).
    SwapSlots,
    /// Memcg statistics flushes (`cgroup_rstat_flush()`).
    CgroupRstatFlush,
    /// cache_ext's hooks: the call into a seam policy and its registry's work per event
    /// (`[time] cache_ext_hook_ns`; cache_ext's 6.6.8 patch, not a mainline function).
    CacheExtHook,
    /// The workload's own CPU per operation (user space).
    User,
    Other,
}

impl Func {
    /// How many functions there are.
    pub const COUNT: usize = 20;

    pub const ALL: [Func; Func::COUNT] = [
        Func::FilemapRead,
        Func::CopyPage,
        Func::HandleMmFault,
        Func::PageVmaMappedWalk,
        Func::IsolateLruFolios,
        Func::ScanFolios,
        Func::WalkPageRange,
        Func::ShrinkFolioList,
        Func::RemoveMapping,
        Func::SyncDeviceIo,
        Func::SubmitBio,
        Func::LruMove,
        Func::QueuedSpinLockSlowpath,
        Func::XaStore,
        Func::ZoneBulk,
        Func::SwapSlots,
        Func::CgroupRstatFlush,
        Func::CacheExtHook,
        Func::User,
        Func::Other,
    ];

    /// The kernel function's name as perf prints it.
    pub fn name(self) -> &'static str {
        match self {
            Func::FilemapRead => "filemap_read",
            Func::CopyPage => "copy_page_to_iter",
            Func::HandleMmFault => "handle_mm_fault",
            Func::PageVmaMappedWalk => "page_vma_mapped_walk",
            Func::IsolateLruFolios => "isolate_lru_folios",
            Func::ScanFolios => "scan_folios",
            Func::WalkPageRange => "walk_page_range",
            Func::ShrinkFolioList => "shrink_folio_list",
            Func::RemoveMapping => "__remove_mapping",
            Func::SyncDeviceIo => "brd/zram transfer",
            Func::SubmitBio => "submit_bio",
            Func::LruMove => "lruvec_add/del_folio",
            Func::QueuedSpinLockSlowpath => "native_queued_spin_lock_slowpath",
            Func::XaStore => "xas_store",
            Func::ZoneBulk => "rmqueue_bulk/free_pcppages_bulk",
            Func::SwapSlots => "scan_swap_map_slots",
            Func::CgroupRstatFlush => "cgroup_rstat_flush",
            Func::CacheExtHook => "cache_ext hooks",
            Func::User => "[user]",
            Func::Other => "[other]",
        }
    }
}

/// CPU time by function, of the tasks and of kswapd.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub tasks: [u64; Func::COUNT],
    pub kswapd: [u64; Func::COUNT],
}

/// A function's line in a report: its CPU time (seconds) and its share of the actor's
/// total.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProfileLine {
    pub function: &'static str,
    pub tasks_s: f64,
    pub tasks_share: f64,
    pub kswapd_s: f64,
    pub kswapd_share: f64,
}

impl Profile {
    /// The lines, largest share of all CPU first; functions that took no time are left out.
    pub fn lines(&self) -> Vec<ProfileLine> {
        let (t, k) = (self.tasks.iter().sum::<u64>().max(1) as f64, self.kswapd.iter().sum::<u64>().max(1) as f64);
        let mut out: Vec<(u64, ProfileLine)> = Func::ALL
            .iter()
            .map(|&f| (f as usize, f))
            .filter(|&(i, _)| self.tasks[i] + self.kswapd[i] > 0)
            .map(|(i, f)| {
                let line = ProfileLine {
                    function: f.name(),
                    tasks_s: self.tasks[i] as f64 / 1e9,
                    tasks_share: self.tasks[i] as f64 / t,
                    kswapd_s: self.kswapd[i] as f64 / 1e9,
                    kswapd_share: self.kswapd[i] as f64 / k,
                };
                (self.tasks[i] + self.kswapd[i], line)
            })
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.function.cmp(b.1.function)));
        out.into_iter().map(|(_, l)| l).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_has_its_own_slot_and_name() {
        for (i, f) in Func::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i);
        }
        let names: std::collections::BTreeSet<_> = Func::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), Func::ALL.len());
    }

    #[test]
    fn lines_come_largest_first_with_each_actors_share() {
        let mut p = Profile::default();
        p.tasks[Func::CopyPage as usize] = 300;
        p.tasks[Func::LruMove as usize] = 100;
        p.kswapd[Func::PageVmaMappedWalk as usize] = 600;
        let l = p.lines();
        assert_eq!(l.iter().map(|l| l.function).collect::<Vec<_>>(), ["page_vma_mapped_walk", "copy_page_to_iter", "lruvec_add/del_folio"]);
        assert_eq!(l[1].tasks_share, 0.75);
        assert_eq!(l[0].kswapd_share, 1.0);
    }
}
