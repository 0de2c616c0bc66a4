//! The scenario file's schema, shared by the model (`pagelab::scenario`) and the oracle's
//! in-guest runner (`pagelab-guest`), so a `[machine]` or `[[cgroup]]` key is declared once:
//! both read the same types, and each validates what it uses.

use serde::Deserialize;

/// A value written as a string or a bare number (`kernel = 6.12` from `--set`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Text {
    Str(String),
    Num(f64),
}

impl Text {
    pub fn text(&self) -> String {
        match self {
            Text::Str(s) => s.clone(),
            Text::Num(n) => n.to_string(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapToml {
    pub device: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub size: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineToml {
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub memory: Option<String>,
    pub kernel: Option<Text>,
    /// Any policy of pagelab's registry that runs on the machine.
    pub policy: Option<String>,
    pub swap: Option<SwapToml>,
    /// The device files live on.
    pub storage: Option<String>,
    pub swappiness: Option<u32>,
    pub read_ahead_kb: Option<u64>,
    pub page_cluster: Option<u32>,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: Option<u64>,
    /// vm.percpu_pagelist_high_fraction (0, the default: the per-CPU lists' limit follows the
    /// low watermark; at least 8 otherwise).
    pub percpu_pagelist_high_fraction: Option<u64>,
    /// The memory zones: `x86-64` (the default: ZONE_DMA, ZONE_DMA32 and, above 4 GiB,
    /// ZONE_NORMAL, laid out as qemu's pc machine lays out RAM) or `one` (a single zone).
    pub zones: Option<String>,
    /// Memory the kernel never hands to the page allocator (the gap to MemTotal).
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub reserved: Option<String>,
    /// Memory the kernel itself uses when the workload starts (slab, modules, ...).
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub kernel_used: Option<String>,
    /// Swappable shared memory present at the start and never touched again (a rootfs in
    /// tmpfs, such as an initramfs): inactive anon pages reclaim may swap out.
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub shmem: Option<String>,
    /// How much of `shmem` starts on the active anon list (the youngest generation under
    /// MGLRU): an initramfs whose files were read after unpacking is mostly active.
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub shmem_active: Option<String>,
    pub dirty_ratio: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
    pub dirty_expire: Option<String>,
    pub dirty_writeback: Option<String>,
    pub memory_recursiveprot: Option<bool>,
    pub fault_around_kb: Option<u64>,
    /// "kernel" (stale rstat, as the kernel) or "exact".
    pub rstat: Option<String>,
    /// The period of the periodic rstat flush (the kernel's FLUSH_TIME, 2 s).
    pub rstat_flush: Option<String>,
    /// When refaults flush memcg statistics: "kernel", "threshold", "always", "never".
    pub refault_flush: Option<String>,
    /// Flush from the stat update path when over the threshold (5.15-rc1).
    pub update_path_flush: Option<bool>,
    /// cache_ext's kernel around seam policies: their cgroups keep the kernel's classic LRU
    /// too, and reclaim falls back to it when the policy frees 80% or less of its target.
    pub seam_fallback: Option<bool>,
    /// Not a kernel setting: the sampling rate R of a miniature simulation, set by `pagelab
    /// curve --sample R`, which corrects the classic LRU's rules that are not scale-free.
    pub miniature: Option<f64>,
    /// CPUs: 1 makes kswapd share the task's CPU; unset, kswapd runs beside the tasks.
    pub cpus: Option<u32>,
    /// With `cpus = 1` on a 6.12 kernel, kswapd and the task take turns on the tick grid as
    /// EEVDF gives them, and a woken kswapd preempts its waker only with lag kept from its
    /// last sleep and the task's slice unprotected (docs/experiments/eevdf-one-cpu.md).
    /// Default true; false shares the CPU half and half, kswapd never preempting.
    pub eevdf_turns: Option<bool>,
    /// The pageblocks that are not MIGRATE_MOVABLE when the workload starts, and their free
    /// pages by order, per zone (/proc/pagetypeinfo's unmovable and reclaimable rows added
    /// up): `nonmovable = { DMA32 = { blocks = 14, free = [0, 2, 0, 1, 1, 2, 1, 0, 1, 2] } }`.
    /// Movable allocations fall back to those pages, and the fallbacks boost the watermarks.
    /// Unset: every pageblock is movable, and nothing boosts.
    pub nonmovable: Option<std::collections::BTreeMap<String, NonMovableToml>>,
    /// vm.watermark_boost_factor (15000, the kernel's default; 0 turns boosting off).
    pub watermark_boost_factor: Option<u64>,
    /// Each zone's watermarks and lowmem reserves as a running kernel shows them in
    /// /proc/zoneinfo (`min`, `low`, `high`, and `protection` in zone order DMA, DMA32,
    /// Normal, Movable): `zone_watermarks = { DMA = { min = 34, low = 42, high = 50,
    /// protection = [0, 176, 176, 176] } }`. They replace the ones min_free_kbytes and the
    /// managed pages give: the kernel computes them at boot, before the memory it frees
    /// later (initramfs, init sections) is managed, and keeps them.
    pub zone_watermarks: Option<std::collections::BTreeMap<String, ZoneWatermarksToml>>,
    /// The NUMA nodes (`[[machine.node]]`), each with its `memory` and `cpus`; none: one
    /// node of all the memory and CPUs.
    #[serde(default)]
    pub node: Vec<NodeToml>,
}

/// One NUMA node (`[[machine.node]]`): its memory (the nodes' add up to `machine.memory`)
/// and its CPUs (a list such as `"0-35"`, or a count: the next CPUs after the nodes before).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeToml {
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub memory: Option<String>,
    pub cpus: Option<crate::spec::CpuList>,
}

/// One zone's watermarks and lowmem reserves (`machine.zone_watermarks`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ZoneWatermarksToml {
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// lowmem_reserve[] against each classzone, DMA, DMA32, Normal, Movable (more entries,
    /// such as ZONE_DEVICE's, are ignored). Unset: computed from the managed pages.
    pub protection: Option<Vec<u64>>,
}

/// One zone's non-movable pageblocks (`machine.nonmovable`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NonMovableToml {
    /// Pageblocks of type unmovable or reclaimable.
    pub blocks: u64,
    /// Their free chunks by order, from order 0 (at most 11 orders).
    pub free: Vec<u64>,
    /// Their other frames that are free pages on the per-CPU lists at the start (the guest's
    /// census, `pagelab oracle --pageblocks`). Given, even as 0, it turns on the drain of
    /// per-CPU lists to each page's pageblock (6.12, 7.3), which needs it.
    pub pcp: Option<u64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupToml {
    pub path: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub max: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub high: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub low: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub min: Option<String>,
    /// This cgroup's eviction policy behind the seam (a registry name).
    pub policy: Option<String>,
}
