//! The counters pagelab reports, under the kernel's own names: /proc/vmstat events
//! (mm/vmstat.c: vmstat_text) and the per-cgroup memory.stat events (mm/memcontrol.c).

use serde::Serialize;

macro_rules! events {
    ($($(#[$m:meta])* $v:ident = $name:literal,)*) => {
        /// An event counter (`enum vm_event_item` and the node/lruvec event stats).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(non_camel_case_types)]
        pub enum Ev { $($(#[$m])* $v,)* }
        impl Ev {
            pub const ALL: &'static [Ev] = &[$(Ev::$v,)*];
            pub const COUNT: usize = Ev::ALL.len();
            pub fn name(self) -> &'static str {
                match self { $(Ev::$v => $name,)* }
            }
        }
    };
}

events! {
    PgpgIn = "pgpgin",
    PgpgOut = "pgpgout",
    PswpIn = "pswpin",
    PswpOut = "pswpout",
    PgFault = "pgfault",
    PgMajFault = "pgmajfault",
    PgActivate = "pgactivate",
    PgDeactivate = "pgdeactivate",
    PgRefill = "pgrefill",
    PgScanKswapd = "pgscan_kswapd",
    PgScanDirect = "pgscan_direct",
    PgStealKswapd = "pgsteal_kswapd",
    PgStealDirect = "pgsteal_direct",
    PgScanAnon = "pgscan_anon",
    PgScanFile = "pgscan_file",
    PgStealAnon = "pgsteal_anon",
    PgStealFile = "pgsteal_file",
    PgRotated = "pgrotated",
    WorkingsetRefaultAnon = "workingset_refault_anon",
    WorkingsetRefaultFile = "workingset_refault_file",
    WorkingsetActivateAnon = "workingset_activate_anon",
    WorkingsetActivateFile = "workingset_activate_file",
    WorkingsetRestoreAnon = "workingset_restore_anon",
    WorkingsetRestoreFile = "workingset_restore_file",
    WorkingsetNodeReclaim = "workingset_nodereclaim",
    /// Counted under the zone of direct reclaim's `reclaim_idx`, gfp_zone() of the
    /// allocation (__count_zid_vm_events() in do_try_to_free_pages(), 6.1/6.12): every page
    /// pagelab allocates is GFP_HIGHUSER_MOVABLE, whose zone is ZONE_MOVABLE, so the kernel
    /// reports these stalls as allocstall_movable even on a machine without that zone.
    AllocStall = "allocstall_movable",
    PageOutRun = "pageoutrun",
    NrVmscanWrite = "nr_vmscan_write",
    NrVmscanImmediateReclaim = "nr_vmscan_immediate_reclaim",
    SlabsScanned = "slabs_scanned",
    UnevictablePgsCulled = "unevictable_pgs_culled",
    OomKill = "oom_kill",
    KswapdLowWmarkHitQuickly = "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly = "kswapd_high_wmark_hit_quickly",
    SwapRa = "swap_ra",
    SwapRaHit = "swap_ra_hit",
    PgallocDma = "pgalloc_dma",
    PgallocDma32 = "pgalloc_dma32",
    PgallocNormal = "pgalloc_normal",
    /// Folios isolate_lru_folios() passed over because their zone is above the reclaim's
    /// highest zone (kswapd balancing a lower zone), by zone.
    PgskipDma = "pgskip_dma",
    PgskipDma32 = "pgskip_dma32",
    PgskipNormal = "pgskip_normal",
    /// kcompactd after a boosted kswapd run (mm/compaction.rs; machines with
    /// `machine.nonmovable` only).
    CompactMigrateScanned = "compact_migrate_scanned",
    CompactFreeScanned = "compact_free_scanned",
    CompactIsolated = "compact_isolated",
    CompactDaemonWake = "compact_daemon_wake",
    CompactDaemonMigrateScanned = "compact_daemon_migrate_scanned",
    CompactDaemonFreeScanned = "compact_daemon_free_scanned",
    PgmigrateSuccess = "pgmigrate_success",
}

/// A set of event counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Events(pub [u64; Ev::COUNT]);

impl Default for Events {
    fn default() -> Self {
        Events([0; Ev::COUNT])
    }
}

impl Events {
    #[inline]
    pub fn add(&mut self, e: Ev, n: u64) {
        self.0[e as usize] += n;
    }
    #[inline]
    pub fn get(&self, e: Ev) -> u64 {
        self.0[e as usize]
    }
    pub fn add_all(&mut self, other: &Events) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
}

/// The reclaimer kind that pgscan/pgsteal are attributed to (mm/vmscan.c: reclaimer_offset()).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Reclaimer {
    Kswapd,
    Direct,
}

impl Reclaimer {
    pub fn pgscan(self) -> Ev {
        match self {
            Reclaimer::Kswapd => Ev::PgScanKswapd,
            Reclaimer::Direct => Ev::PgScanDirect,
        }
    }
    pub fn pgsteal(self) -> Ev {
        match self {
            Reclaimer::Kswapd => Ev::PgStealKswapd,
            Reclaimer::Direct => Ev::PgStealDirect,
        }
    }
}

/// The four evictable LRU lists and the unevictable one, in `enum lru_list` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lru {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
}

impl Lru {
    pub const EVICTABLE: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
    pub const ALL: [Lru; 5] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile, Lru::Unevictable];

    #[inline]
    pub fn of(file: bool, active: bool) -> Lru {
        match (file, active) {
            (false, false) => Lru::InactiveAnon,
            (false, true) => Lru::ActiveAnon,
            (true, false) => Lru::InactiveFile,
            (true, true) => Lru::ActiveFile,
        }
    }
    pub fn is_file(self) -> bool {
        matches!(self, Lru::InactiveFile | Lru::ActiveFile)
    }
    pub fn is_active(self) -> bool {
        matches!(self, Lru::ActiveAnon | Lru::ActiveFile)
    }
    /// The vmstat gauge name.
    pub fn vmstat_name(self) -> &'static str {
        match self {
            Lru::InactiveAnon => "nr_inactive_anon",
            Lru::ActiveAnon => "nr_active_anon",
            Lru::InactiveFile => "nr_inactive_file",
            Lru::ActiveFile => "nr_active_file",
            Lru::Unevictable => "nr_unevictable",
        }
    }
    /// The memory.stat name (in bytes there).
    pub fn memcg_name(self) -> &'static str {
        &self.vmstat_name()[3..]
    }
}

/// Event counter for anon (0) or file (1).
pub fn by_type(file: bool, anon: Ev, file_ev: Ev) -> Ev {
    if file {
        file_ev
    } else {
        anon
    }
}

/// The unit of a `/proc/vmstat` entry, for text output only (JSON and CSV keep the kernel's
/// bare names): `pgpgin`/`pgpgout` count KiB (block/blk-core.c: submit_bio() counts 512-byte
/// sectors and mm/vmstat.c: vmstat_start() halves them, 6.1 and 6.12), the `nr_*` gauges and
/// the reclaim events count pages, `workingset_nodes`/`workingset_nodereclaim` count xarray
/// nodes; plain event counts (faults, stalls, kswapd runs, OOM kills) have none.
pub fn vmstat_unit(name: &str) -> &'static str {
    match name {
        "pgpgin" | "pgpgout" => "KiB",
        "workingset_nodes" | "workingset_nodereclaim" => "nodes",
        "pswpin" | "pswpout" | "pgactivate" | "pgdeactivate" | "pgrefill" | "pgrotated" | "swap_ra" | "swap_ra_hit" | "unevictable_pgs_culled" => "pages",
        n if n.starts_with("nr_") || n.starts_with("pgscan") || n.starts_with("pgsteal") || n.starts_with("workingset_") => "pages",
        _ => "",
    }
}

/// The unit of a `memory.stat` entry (or memory.current, memory.swap.current), for text
/// output only: sizes are in bytes (mm/memcontrol.c: memory_stat_format() prints
/// memcg_page_state_output(), pages × PAGE_SIZE), the reclaim and workingset events count
/// pages as in /proc/vmstat, and faults and `memory.events.*` are plain counts.
pub fn memcg_unit(name: &str) -> &'static str {
    match name {
        "memory.current" | "memory.swap.current" | "anon" | "file" | "file_mapped" | "file_dirty" | "file_writeback" | "swapcached" => "bytes",
        n if Lru::ALL.iter().any(|l| l.memcg_name() == n) => "bytes",
        n if n.starts_with("memory.events.") || n == "pgfault" || n == "pgmajfault" => "",
        n => vmstat_unit(n),
    }
}

/// The /proc/vmstat gauges (nr_* and workingset_nodes) as they stand: what mm/vmstat.c's
/// vmstat_start() reads from the node's and zones' counters when /proc/vmstat is read (6.1,
/// 6.12), and with pageblocks what /proc/zoneinfo and /proc/pagetypeinfo show of each zone.
pub fn gauges(mm: &crate::mm::Mm) -> std::collections::BTreeMap<&'static str, u64> {
    let mut g = std::collections::BTreeMap::new();
    g.insert("nr_free_pages", mm.nr_free());
    for lru in Lru::ALL {
        g.insert(lru.vmstat_name(), mm.node_lru_size(lru));
    }
    g.insert("nr_file_pages", mm.nr_file_pages + mm.nr_swapcached);
    g.insert("nr_anon_pages", mm.nr_anon_pages);
    g.insert("nr_mapped", mm.nr_mapped);
    g.insert("nr_dirty", mm.nr_dirty);
    g.insert("nr_writeback", mm.nr_writeback);
    g.insert("nr_swapcached", mm.nr_swapcached);
    // 7.3's swap shadows sit in the swap table, not in xarray nodes the shadow LRU counts.
    let swap_nodes = if mm.cfg.kernel.swap_shadows_in_swap_table() { 0 } else { mm.swap_nodes.nr_shadow_nodes() };
    g.insert("workingset_nodes", mm.file_nodes.nr_shadow_nodes() + swap_nodes);
    if let Some(pb) = mm.pageblocks.as_ref() {
        // With non-movable pageblocks, what the guest's sampler reads from /proc/zoneinfo and
        // /proc/pagetypeinfo (oracle/samples.py): each zone's free pages, its high watermark
        // with the boost, and the free pages on its unmovable and reclaimable lists.
        for (z, zone) in mm.nodes[0].zones.z.iter().enumerate() {
            let [free, high, nonmovable] = match zone.name {
                "DMA" => ["zone_free_dma", "zone_high_dma", "nonmovable_free_dma"],
                "DMA32" => ["zone_free_dma32", "zone_high_dma32", "nonmovable_free_dma32"],
                _ => ["zone_free_normal", "zone_high_normal", "nonmovable_free_normal"],
            };
            g.insert(free, mm.zone_free(z));
            g.insert(high, zone.wmark_high);
            g.insert(nonmovable, pb.nr_free(z));
        }
        // The page cache's xarray-node slabs (part of the kernel's nr_slab_reclaimable).
        g.insert("xa_node_slab_pages", pb.nr_slabs() * crate::mm::pageblock::RADIX_TREE_NODE_SLAB_PAGES);
    }
    g
}
