//! The kernel versions pagelab models and the constants that follow from them.
//!
//! A rule that differs between versions asks [`Kernel`] rather than testing the version
//! itself, so every difference has one name; the predicates below are the list, each naming
//! the kernel functions and versions it follows.

use serde::{Deserialize, Serialize};

/// The kernel whose reclaim rules a run follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kernel {
    /// 5.7: the LRU balance before Johannes Weiner's 2020 IO-cost series (seed 001's
    /// "before"): recent_scanned/recent_rotated ratios and no anon workingset detection.
    #[serde(rename = "5.7")]
    V5_7,
    /// Debian 6.1.192 (bookworm).
    #[serde(rename = "6.1")]
    V6_1,
    /// Debian 6.12.95 (bookworm-backports).
    #[serde(rename = "6.12")]
    V6_12,
}

impl Kernel {
    pub fn parse(text: &str) -> Result<Kernel, String> {
        match text.trim() {
            "5.7" => Ok(Kernel::V5_7),
            "6.1" => Ok(Kernel::V6_1),
            "6.12" => Ok(Kernel::V6_12),
            other => Err(format!("`{other}` is not a pinned kernel (use \"6.1\", \"6.12\" or \"5.7\")")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::V5_7 => "5.7",
            Kernel::V6_1 => "6.1",
            Kernel::V6_12 => "6.12",
        }
    }

    /// `PAGEVEC_SIZE`: per-CPU folio batches drain on their 15th (6.1) or 31st (6.12) entry.
    pub fn pagevec_size(self) -> usize {
        match self {
            Kernel::V6_12 => 31,
            _ => 15,
        }
    }

    /// mm/swap.c: lru_note_cost() weights IO by SWAP_CLUSTER_MAX and counts rotations
    /// from 6.2 on; 5.8-6.1 count written pages only.
    pub fn cost_counts_rotations(self) -> bool {
        self >= Kernel::V6_12
    }

    /// 5.8 (Joonsoo Kim / Johannes Weiner, 2020) added workingset detection for anon pages
    /// and started new anon pages on the inactive list.
    pub fn anon_workingset(self) -> bool {
        self >= Kernel::V6_1
    }

    /// The IO-cost model of get_scan_count() (5.8+), against 5.7's scanned/rotated ratios.
    pub fn io_cost_balance(self) -> bool {
        self >= Kernel::V6_1
    }

    /// Whether swap IO to a synchronous block device (zram, brd) bypasses the bio layer
    /// and with it the pgpgin/pgpgout counts: up to 6.1 both drivers implement `rw_page`,
    /// which mm/page_io.c: swap_readpage() and __swap_writepage() try first
    /// (bdev_read_page()/bdev_write_page()), counting pswpin/pswpout only; 6.12 has no
    /// `rw_page` and reads and writes such a device through submit_bio_wait(), whose
    /// submit_bio() counts pgpgin/pgpgout as for any other device.
    pub fn sync_swap_skips_bio(self) -> bool {
        self <= Kernel::V6_1
    }

    /// workingset_refault() counts a refault before resolving the eviction memcg (6.12),
    /// or only once the memcg resolves (6.1).
    pub fn refault_counted_before_memcg_lookup(self) -> bool {
        self >= Kernel::V6_12
    }
}

/// `SWAP_CLUSTER_MAX`: the reclaim batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `DEF_PRIORITY`: reclaim starts scanning lru_size >> 12.
pub const DEF_PRIORITY: u32 = 12;
/// `MAX_RECLAIM_RETRIES`.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// `MEMCG_CHARGE_BATCH`: pages a per-CPU memcg stock charges at once.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// `FLUSH_TIME` (2·HZ): the periodic rstat flush.
pub const RSTAT_FLUSH_NS: u64 = 2_000_000_000;
