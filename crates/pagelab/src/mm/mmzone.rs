//! The node's zones (include/linux/mmzone.h): which page frames each zone holds, its
//! watermarks and lowmem reserve (mm/page_alloc.c: __setup_per_zone_wmarks(),
//! setup_per_zone_lowmem_reserve()), its per-CPU free lists and its flags.
//!
//! x86-64 splits memory into ZONE_DMA (the first 16 MiB), ZONE_DMA32 (up to 4 GiB) and
//! ZONE_NORMAL (above). User pages (GFP_HIGHUSER_MOVABLE, the only allocations the model
//! makes) may come from any of them, highest first, and each lower zone holds back its
//! lowmem reserve from them. That reserve is why the kernel behaves as it does in small
//! machines: ZONE_DMA is 7% of the oracle's 256 MiB guests, the allocator falls back to it
//! only down to its low watermark plus reserve, and kswapd stops as soon as *any* zone is
//! above its high watermark plus reserve (pgdat_balanced()).

use crate::kernel::Kernel;
use crate::mm::int_sqrt;
use crate::mm::page_alloc::PerCpuPages;
use crate::mm::vmstat::Ev;

/// How memory is split into zones (`machine.zones`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZoneLayout {
    /// x86-64's ZONE_DMA, ZONE_DMA32 and ZONE_NORMAL, on qemu's pc machine's memory map.
    #[default]
    X86_64,
    /// One zone holding all memory (pagelab before the zones were modeled).
    One,
}

/// ZONE_DMA's managed pages in the oracle's guests, 6.1 and 6.12 alike: it spans the first
/// 16 MiB (4,095 pages from pfn 1), 3,998 of them present, and firmware and memblock
/// reservations leave 3,840 to the page allocator.
pub const DMA_MANAGED_PAGES: u64 = 3840;
/// ZONE_DMA's span, in pages.
const DMA_SPAN_PAGES: u64 = 4096;
/// qemu's pc machine keeps RAM below 4 GiB up to 3.5 GiB; a machine with 3.5 GiB or more
/// gets 3 GiB there and the rest above 4 GiB (hw/i386/pc_piix.c, gigabyte_align).
const PC_LOWMEM_SPLIT_PAGES: u64 = 0xe000_0000 / 4096;
const PC_LOWMEM_PAGES: u64 = 0xc000_0000 / 4096;

/// One zone of the node.
#[derive(Clone, Debug)]
pub struct Zone {
    /// The kernel's name for it (/proc/zoneinfo).
    pub name: &'static str,
    pub managed: u64,
    pub wmark_min: u64,
    pub wmark_low: u64,
    pub wmark_high: u64,
    /// lowmem_reserve[ZONE_MOVABLE]: pages this zone keeps from allocations that could have
    /// used a higher zone, which is every allocation the model makes (user pages).
    pub lowmem_reserve: u64,
    /// lowmem_reserve[] against each zone of the node as classzone (by the node's zone
    /// index), when `machine.zone_watermarks` gives them; `None`: computed from the managed
    /// pages (Zones::lowmem_reserve()).
    pub protection: Option<Vec<u64>>,
    /// ZONE_BELOW_HIGH (6.12): an allocation found the zone below its high watermark, and
    /// no bulk free of the per-CPU lists has lifted it above since.
    pub below_high: bool,
    /// ZONE_RECLAIM_ACTIVE: kswapd is in balance_pgdat() for the node.
    pub reclaim_active: bool,
    /// The zone's per-CPU free lists (one CPU's).
    pub pcp: PerCpuPages,
    /// `zone->lock`, held by the per-CPU lists' refills and drains; contended only on a
    /// machine of several CPUs ([`crate::mm::Mm::zone_lock`]).
    pub lock: crate::locking::SpinLock,
    /// Its PGALLOC counter (pgalloc_dma, pgalloc_dma32, pgalloc_normal).
    pub pgalloc: Ev,
    /// Its PGSCAN_SKIP counter (pgskip_dma, pgskip_dma32, pgskip_normal).
    pub pgskip: Ev,
}

/// The node's zones, lowest first (`pgdat->node_zones`, populated ones only).
#[derive(Clone, Debug)]
pub struct Zones {
    pub z: Vec<Zone>,
    /// vm.min_free_kbytes, given or computed.
    pub min_free_kbytes: u64,
}

/// A NUMA node (`struct pglist_data`, include/linux/mmzone.h, 6.1 and 6.12): its zones
/// (`node_zones`), its reclaim state (the `PGDAT_*` flags, kswapd's run) and its kswapd thread's
/// clock and CPU time. A machine without `[[machine.node]]` is one node, node 0, which is all
/// of today's one-node state; each memcg has one lruvec per node
/// ([`crate::mm::memcontrol::Memcg::lruvec_of`], `mem_cgroup_lruvec(memcg, pgdat)`).
#[derive(Clone, Debug)]
pub struct Node {
    /// The node's zones, lowest first, each with its per-CPU free lists.
    pub zones: Zones,
    /// vmscan's per-node state (`pgdat->flags`, `kswapd_failures`, kswapd's balance).
    pub reclaim: crate::mm::vmscan::NodeState,
    /// The node's kswapd thread (`pgdat->kswapd`): its virtual clock and the CPU time it
    /// charged.
    pub kswapd_clock: u64,
    pub kswapd_cpu_ns: u64,
    /// `pgdat->lru_lock`: 5.7's one lock for every lruvec of the node
    /// ([`crate::kernel::Kernel::lru_lock_per_memcg`]); 6.1 on lock each lruvec's own.
    pub lru_lock: crate::locking::SpinLock,
    /// The node's NUMA allocation events (`enum numa_stat_item`, mm/vmstat.c), by
    /// [`NumaStat`]; counted on a machine of several nodes only.
    pub numa: [u64; NR_NUMA_STATS],
    /// Pages scanned and reclaimed from the node's lruvecs, by kswapd (0) and by direct and
    /// memcg reclaim (1). The kernel counts pgscan/pgsteal per CPU for the machine
    /// (vm_event_item) and per memcg; pagelab also books them to the node reclaimed
    /// (`sc.nid`), which a policy whose lists span the nodes (MGLRU, the seam) reclaims as
    /// node 0.
    pub pgscan: [u64; 2],
    pub pgsteal: [u64; 2],
}

/// The NUMA allocation events (include/linux/mmzone.h `enum numa_stat_item`, 6.1 and 6.12;
/// NUMA_INTERLEAVE_HIT needs an interleave policy, which is not modeled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaStat {
    /// A page of the node its allocation preferred.
    Hit,
    /// A page of this node for an allocation that preferred another.
    Miss,
    /// An allocation that preferred this node got another's page.
    Foreign,
    /// A page of this node for a task running on it.
    Local,
    /// A page of this node for a task running on another.
    Other,
}

pub const NR_NUMA_STATS: usize = 5;

impl NumaStat {
    pub const ALL: [NumaStat; NR_NUMA_STATS] = [NumaStat::Hit, NumaStat::Miss, NumaStat::Foreign, NumaStat::Local, NumaStat::Other];

    /// Its name in /proc/vmstat and the node's numastat.
    pub fn name(self) -> &'static str {
        match self {
            NumaStat::Hit => "numa_hit",
            NumaStat::Miss => "numa_miss",
            NumaStat::Foreign => "numa_foreign",
            NumaStat::Local => "numa_local",
            NumaStat::Other => "numa_other",
        }
    }
}

impl Node {
    /// A node of `zones` whose kswapd has not run.
    pub fn new(zones: Zones) -> Node {
        Node {
            zones,
            reclaim: crate::mm::vmscan::NodeState::default(),
            kswapd_clock: 0,
            kswapd_cpu_ns: 0,
            lru_lock: crate::locking::SpinLock::default(),
            numa: [0; NR_NUMA_STATS],
            pgscan: [0; 2],
            pgsteal: [0; 2],
        }
    }
}

/// The classzones /proc/zoneinfo's `protection` lists at least: ZONE_DMA, ZONE_DMA32,
/// ZONE_NORMAL and ZONE_MOVABLE.
pub const CLASSZONES: usize = 4;

/// A zone's index in the kernel's `enum zone_type` (x86-64).
fn kernel_zone_index(name: &str) -> usize {
    match name {
        "DMA" => 0,
        "DMA32" => 1,
        _ => 2,
    }
}

/// A zone's watermarks and lowmem reserves as a running kernel keeps them
/// (`machine.zone_watermarks`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneWatermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// lowmem_reserve[] against ZONE_DMA, ZONE_DMA32, ZONE_NORMAL and ZONE_MOVABLE.
    pub protection: Option<[u64; CLASSZONES]>,
}

/// The ratio of a zone's lowmem reserve to the managed pages above it
/// (sysctl_lowmem_reserve_ratio: 256 for ZONE_DMA and ZONE_DMA32, 32 for ZONE_NORMAL).
fn lowmem_reserve_ratio(name: &str) -> u64 {
    if name == "Normal" {
        32
    } else {
        256
    }
}

/// Models mm/page_alloc.c: calculate_min_free_kbytes() (5.7, 6.1 and 6.12 agree): the
/// square root of 16 times lowmem in KiB, clamped to 128 KiB..256 MiB.
pub fn calculate_min_free_kbytes(lowmem_pages: u64) -> u64 {
    int_sqrt(lowmem_pages * 4 * 16).clamp(128, 262_144)
}

impl Zones {
    /// The zones of `sizes` (name and managed pages, lowest first), with watermarks as
    /// mm/page_alloc.c's __setup_per_zone_wmarks() sets them (each zone gets its share of
    /// min_free_kbytes by managed pages; low and high add the larger of a quarter of min and
    /// watermark_scale_factor per 10,000 of the zone), lowmem reserves as
    /// setup_per_zone_lowmem_reserve() sets them (the managed pages of every higher zone over
    /// the zone's ratio), and per-CPU lists sized from each zone (6.1, 6.12 and 5.7 agree but
    /// for the lists).
    pub fn new(kernel: Kernel, sizes: &[(&'static str, u64)], min_free_kbytes: Option<u64>, watermark_scale_factor: u64, high_fraction: u64) -> Zones {
        let lowmem: u64 = sizes.iter().map(|&(_, m)| m).sum();
        Zones::of_node(kernel, sizes, lowmem, min_free_kbytes, watermark_scale_factor, high_fraction)
    }

    /// One node's zones (`sizes`) on a machine whose zones, all nodes', manage `lowmem`
    /// pages: as [`Zones::new`], but min_free_kbytes comes from the machine's lowmem and each
    /// zone's share of it is by its managed pages among all nodes' zones
    /// (__setup_per_zone_wmarks() walks every zone of every node, 6.1 and 6.12), while the
    /// lowmem reserves count the zones above within the node
    /// (setup_per_zone_lowmem_reserve() walks each pgdat's own zones).
    pub fn of_node(
        kernel: Kernel,
        sizes: &[(&'static str, u64)],
        lowmem: u64,
        min_free_kbytes: Option<u64>,
        watermark_scale_factor: u64,
        high_fraction: u64,
    ) -> Zones {
        let min_free_kbytes = min_free_kbytes.unwrap_or_else(|| calculate_min_free_kbytes(lowmem));
        let pages_min = min_free_kbytes / 4;
        let z = sizes
            .iter()
            .enumerate()
            .map(|(i, &(name, managed))| {
                let wmark_min = pages_min * managed / lowmem.max(1);
                let tmp = (wmark_min / 4).max(managed * watermark_scale_factor / 10_000);
                let (wmark_low, wmark_high) = (wmark_min + tmp, wmark_min + 2 * tmp);
                let above: u64 = sizes[i + 1..].iter().map(|&(_, m)| m).sum();
                Zone {
                    name,
                    managed,
                    wmark_min,
                    wmark_low,
                    wmark_high,
                    lowmem_reserve: above / lowmem_reserve_ratio(name),
                    protection: None,
                    below_high: false,
                    reclaim_active: false,
                    pcp: PerCpuPages::new(kernel, managed, wmark_low, high_fraction),
                    lock: crate::locking::SpinLock::default(),
                    pgalloc: match name {
                        "DMA" => Ev::PgallocDma,
                        "Normal" => Ev::PgallocNormal,
                        _ => Ev::PgallocDma32,
                    },
                    pgskip: match name {
                        "DMA" => Ev::PgskipDma,
                        "Normal" => Ev::PgskipNormal,
                        _ => Ev::PgskipDma32,
                    },
                }
            })
            .collect();
        Zones { z, min_free_kbytes }
    }

    /// Zone `i`'s lowmem reserve against allocations whose highest zone is `classzone`
    /// (`lowmem_reserve[classzone]`, mm/page_alloc.c: setup_per_zone_lowmem_reserve(), 6.1/
    /// 6.12): the managed pages of the zones above `i` up to `classzone`, over `i`'s ratio; 0
    /// for its own zone and below. The highest zone's value is the stored one, user pages'.
    #[inline]
    pub fn lowmem_reserve(&self, i: usize, classzone: usize) -> u64 {
        if classzone + 1 >= self.z.len() {
            return self.z[i].lowmem_reserve;
        }
        if classzone <= i {
            return 0;
        }
        if let Some(p) = &self.z[i].protection {
            return p[classzone];
        }
        let above: u64 = self.z[i + 1..=classzone].iter().map(|z| z.managed).sum();
        above / lowmem_reserve_ratio(self.z[i].name)
    }

    /// Models the watermarks and lowmem reserves a running kernel keeps (`machine.zone_watermarks`,
    /// as /proc/zoneinfo prints them; 6.1 and 6.12 alike): mm/page_alloc.c computes them in
    /// init_per_zone_wmark_min(), an early initcall, from the pages managed then, and again
    /// only when a sysctl asks (min_free_kbytes, watermark_scale_factor,
    /// lowmem_reserve_ratio). The memory freed after it (the initramfs, the kernel's init
    /// sections) leaves them as they were, so a booted kernel's watermarks are a little off
    /// the formula of [`Zones::new`] with its final managed pages. The per-CPU lists, sized
    /// from the low watermark (zone_pcp_update() follows __setup_per_zone_wmarks()), are sized
    /// again. Err: this machine has no zone of that name.
    pub fn set_watermarks(&mut self, kernel: Kernel, name: &str, w: &ZoneWatermarks, high_fraction: u64) -> Result<(), String> {
        let Some(i) = self.z.iter().position(|z| z.name == name) else {
            return Err(format!("this machine has no zone {name} (its zones: {})", self.z.iter().map(|z| z.name).collect::<Vec<_>>().join(", ")));
        };
        let names: Vec<&'static str> = self.z.iter().map(|z| z.name).collect();
        let z = &mut self.z[i];
        (z.wmark_min, z.wmark_low, z.wmark_high) = (w.min, w.low, w.high);
        if let Some(p) = &w.protection {
            // By the kernel's zone index: DMA, DMA32, Normal, Movable. User pages' classzone
            // is ZONE_MOVABLE.
            z.lowmem_reserve = p[CLASSZONES - 1];
            z.protection = Some(names.iter().map(|n| p[kernel_zone_index(n)]).collect());
        }
        z.pcp = PerCpuPages::new(kernel, z.managed, z.wmark_low, high_fraction);
        Ok(())
    }

    /// The highest zone's index: user pages' classzone (ZONE_MOVABLE's, every populated
    /// zone below it).
    #[inline]
    pub fn top(&self) -> usize {
        self.z.len() - 1
    }

    /// Managed pages of all zones (totalram_pages()).
    pub fn managed(&self) -> u64 {
        self.z.iter().map(|z| z.managed).sum()
    }

    /// The node's high watermarks added up (kswapd_shrink_node()'s reclaim target counts
    /// each at least SWAP_CLUSTER_MAX; prepare_scan_count()'s total_high_wmark does not).
    pub fn high_wmarks(&self) -> u64 {
        self.z.iter().map(|z| z.wmark_high).sum()
    }

    /// Models mm/page_alloc.c: calculate_totalreserve_pages(): each zone's high watermark
    /// plus its largest lowmem reserve, at most its managed pages.
    pub fn totalreserve_pages(&self) -> u64 {
        self.z.iter().map(|z| (z.wmark_high + z.lowmem_reserve).min(z.managed)).sum()
    }
}

/// The managed pages of each zone, lowest first, for a machine of `memory_pages` of which
/// `managed` reach the page allocator; `rate` is a miniature machine's sampling rate (1 for a
/// full machine), which scales the zones' boundaries with the memory.
///
/// x86-64: ZONE_DMA gets [`DMA_MANAGED_PAGES`], ZONE_DMA32 the rest of RAM below 4 GiB less
/// the pages the allocator never gets (the kernel's own image and reservations sit there in
/// the guests: 11.3k of DMA32's 61.4k present pages), ZONE_NORMAL what is above 4 GiB. A
/// machine too small to keep half its pages above ZONE_DMA (under 32 MiB, which no kernel
/// boots in) gets ZONE_DMA32 alone, as does `ZoneLayout::One` for any size.
pub fn zone_sizes(layout: ZoneLayout, memory_pages: u64, managed: u64, rate: f64) -> Vec<(&'static str, u64)> {
    let scale = |pages: u64| (pages as f64 * rate).round() as u64;
    let dma = scale(DMA_MANAGED_PAGES);
    if layout == ZoneLayout::One || dma == 0 || dma > managed / 2 {
        return vec![("DMA32", managed)];
    }
    let full_memory = (memory_pages as f64 / rate).round() as u64;
    if full_memory < PC_LOWMEM_SPLIT_PAGES {
        return vec![("DMA", dma), ("DMA32", managed - dma)];
    }
    let dma32_present = scale(PC_LOWMEM_PAGES) - scale(DMA_SPAN_PAGES);
    // The pages the allocator never gets, less ZONE_DMA's own (its span less its managed).
    let unmanaged = (memory_pages - managed).saturating_sub(scale(DMA_SPAN_PAGES) - dma);
    let dma32 = dma32_present.saturating_sub(unmanaged).min(managed - dma);
    let normal = managed - dma - dma32;
    let mut sizes = vec![("DMA", dma), ("DMA32", dma32)];
    if normal > 0 {
        sizes.push(("Normal", normal));
    }
    sizes
}

/// The managed pages of each node's zones, lowest first, for a machine whose nodes have
/// `node_pages` pages each (`[[machine.node]]`; one entry for a machine without a node
/// table), `reserved` of them never reaching the page allocator. Node 0 holds the low memory
/// and with it ZONE_DMA and ZONE_DMA32 (and the reserved pages: the kernel's image and
/// memblock's early reservations sit in low memory) and is laid out as [`zone_sizes`] lays out
/// a machine of its size; every further node has ZONE_NORMAL alone, of its memory (x86-64's
/// zones by physical address: everything above 4 GiB is ZONE_NORMAL, and a node past the
/// first starts there on the machines modeled; one whose memory crosses 4 GiB is not).
pub fn node_zone_sizes(layout: ZoneLayout, node_pages: &[u64], reserved: u64, rate: f64) -> Vec<Vec<(&'static str, u64)>> {
    node_pages
        .iter()
        .enumerate()
        .map(|(nid, &pages)| if nid == 0 { zone_sizes(layout, pages, pages - reserved, rate) } else { vec![("Normal", pages)] })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest_6_12() -> Zones {
        // The oracle's 256 MiB guest on 6.12.95: 53,938 managed pages, min_free_kbytes 1,800.
        Zones::new(Kernel::V6_12, &zone_sizes(ZoneLayout::X86_64, 65_536, 53_938, 1.0), Some(1800), 10, 0)
    }

    #[test]
    fn zone_sizes_give_zone_dma_its_3840_pages_and_zone_dma32_the_rest_as_the_guest_has_them() {
        // /proc/zoneinfo of the 6.12 guest: DMA managed 3840, DMA32 managed 50098.
        assert_eq!(zone_sizes(ZoneLayout::X86_64, 65_536, 53_938, 1.0), vec![("DMA", 3840), ("DMA32", 50_098)]);
        assert_eq!(zone_sizes(ZoneLayout::One, 65_536, 53_938, 1.0), vec![("DMA32", 53_938)]);
        // Under 32 MiB, no ZONE_DMA split.
        assert_eq!(zone_sizes(ZoneLayout::X86_64, 6000, 6000, 1.0), vec![("DMA32", 6000)]);
    }

    #[test]
    fn zone_sizes_put_memory_above_3_gib_in_zone_normal_from_3_5_gib_on() {
        let gib = 262_144;
        let big = zone_sizes(ZoneLayout::X86_64, 8 * gib, 8 * gib - 1000, 1.0);
        // 1,000 unmanaged pages: ZONE_DMA's 256, the rest in ZONE_DMA32.
        assert_eq!(big[1], ("DMA32", 3 * gib - 4096 - 744));
        assert_eq!(big[2], ("Normal", 5 * gib));
        let below = zone_sizes(ZoneLayout::X86_64, 3 * gib, 3 * gib, 1.0);
        assert_eq!(below.len(), 2, "3 GiB all sits below 4 GiB");
        // A miniature of the 8 GiB machine keeps its proportions.
        let mini = zone_sizes(ZoneLayout::X86_64, 8 * gib / 100, 8 * gib / 100, 0.01);
        assert_eq!(mini.iter().map(|z| z.0).collect::<Vec<_>>(), vec!["DMA", "DMA32", "Normal"]);
        assert_eq!(mini[0].1, 38);
    }

    #[test]
    fn setup_per_zone_wmarks_shares_min_by_managed_pages_and_lowmem_reserve_counts_the_zones_above() {
        let z = guest_6_12();
        let (dma, dma32) = (&z.z[0], &z.z[1]);
        // The guest's zoneinfo: DMA32 min 417 low 521 high 625 (DMA's 33/41/49 and its
        // reserve of 184 were set at boot, when fewer pages were managed).
        assert_eq!((dma32.wmark_min, dma32.wmark_low, dma32.wmark_high), (417, 521, 625));
        assert_eq!((dma.wmark_min, dma.wmark_low, dma.wmark_high), (32, 40, 48));
        assert_eq!((dma.lowmem_reserve, dma32.lowmem_reserve), (50_098 / 256, 0));
        assert_eq!(z.totalreserve_pages(), 48 + 195 + 625);
        // One zone: the old single-zone marks.
        let one = Zones::new(Kernel::V6_12, &[("DMA32", 52_177)], None, 10, 0);
        assert_eq!(one.min_free_kbytes, int_sqrt(52_177 * 4 * 16));
        let tmp = (one.z[0].wmark_min / 4).max(52_177 * 10 / 10_000);
        assert_eq!(one.z[0].wmark_high, one.z[0].wmark_min + 2 * tmp);
        assert_eq!(calculate_min_free_kbytes(10), 128);
    }

    #[test]
    fn a_running_kernels_watermarks_and_reserves_replace_the_formulas_init_per_zone_wmark_min_6_1_6_12() {
        let mut z = guest_6_12();
        let before = z.z[1].pcp.high;
        // The 6.12 guest's /proc/zoneinfo: DMA 33/41/49, protection (0, 184, 184, 184, 184).
        let dma = ZoneWatermarks { min: 33, low: 41, high: 49, protection: Some([0, 184, 184, 184]) };
        z.set_watermarks(Kernel::V6_12, "DMA", &dma, 0).unwrap();
        assert_eq!((z.z[0].wmark_min, z.z[0].wmark_low, z.z[0].wmark_high), (33, 41, 49));
        // User pages' classzone (ZONE_MOVABLE) and kswapd's for ZONE_DMA32 read the list.
        assert_eq!(z.lowmem_reserve(0, z.top()), 184);
        assert_eq!(z.z[0].lowmem_reserve, 184);
        assert_eq!(z.lowmem_reserve(0, 0), 0, "no reserve against its own zone");
        assert_eq!(z.totalreserve_pages(), 49 + 184 + 625);
        // A higher low watermark sizes the zone's per-CPU list from it.
        let dma32 = ZoneWatermarks { min: 417, low: 1021, high: 1625, protection: None };
        z.set_watermarks(Kernel::V6_12, "DMA32", &dma32, 0).unwrap();
        assert_eq!(z.z[1].pcp.high, PerCpuPages::new(Kernel::V6_12, 50_098, 1021, 0).high);
        assert_ne!(z.z[1].pcp.high, before);
        assert_eq!(z.z[1].lowmem_reserve, 0, "no protection given: the formula's stays");
        let e = z.set_watermarks(Kernel::V6_12, "Normal", &dma32, 0).unwrap_err();
        assert!(e.contains("no zone Normal") && e.contains("DMA, DMA32"), "{e}");
    }

    #[test]
    fn a_lower_classzones_reserve_comes_from_its_own_protection_entry_setup_per_zone_lowmem_reserve_6_1_6_12() {
        let gib = 262_144;
        let mut z = Zones::new(Kernel::V6_1, &zone_sizes(ZoneLayout::X86_64, 8 * gib, 8 * gib - 1000, 1.0), None, 10, 0);
        assert_eq!(z.lowmem_reserve(0, 1), z.z[1].managed / 256, "the formula against ZONE_DMA32");
        let w = ZoneWatermarks { min: 1, low: 2, high: 3, protection: Some([0, 700, 3000, 3000]) };
        z.set_watermarks(Kernel::V6_1, "DMA", &w, 0).unwrap();
        assert_eq!((z.lowmem_reserve(0, 1), z.lowmem_reserve(0, 2)), (700, 3000));
    }
}
