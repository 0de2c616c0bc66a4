//! The kernel versions pagelab models and the constants that follow from them.
//!
//! A rule that differs between versions asks [`Kernel`] rather than testing the version
//! itself, so every difference has one name and its history is written down once, here.
//! Each predicate states what 6.1.192 and 6.12.95 (and 5.7 where it differs) do, read from
//! the Debian sources of those kernels; the 7.3 predicates (at the end) what 6.12.95 and
//! Debian's 7.3.4 do. 7.3 starts from 6.12's rules: every `>= V6_12` predicate holds for it.
//! [`PREDICATES`] lists every predicate by name, so a comparison of kernels can say which
//! rules differ between them (docs/kernel-7.3.md).

use serde::{Deserialize, Serialize};

/// The kernel whose reclaim rules a run follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kernel {
    /// 5.7: the LRU balance before Johannes Weiner's 2020 IO-cost series (the
    /// series' "before"): recent_scanned/recent_rotated ratios and no anon workingset detection.
    #[serde(rename = "5.7")]
    V5_7,
    /// Debian 6.1.192 (bookworm).
    #[serde(rename = "6.1")]
    V6_1,
    /// Debian 6.12.95 (bookworm-backports).
    #[serde(rename = "6.12")]
    V6_12,
    /// Debian 7.3.4 (trixie-backports).
    #[serde(rename = "7.3")]
    V7_3,
}

impl Kernel {
    pub fn parse(text: &str) -> Result<Kernel, String> {
        match text.trim() {
            "5.7" => Ok(Kernel::V5_7),
            "6.1" => Ok(Kernel::V6_1),
            "6.12" => Ok(Kernel::V6_12),
            "7.3" => Ok(Kernel::V7_3),
            other => Err(format!("`{other}` is not a pinned kernel (use \"6.1\", \"6.12\", \"7.3\" or \"5.7\")")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::V5_7 => "5.7",
            Kernel::V6_1 => "6.1",
            Kernel::V6_12 => "6.12",
            Kernel::V7_3 => "7.3",
        }
    }

    /// `PAGEVEC_SIZE`: per-CPU folio batches drain on their 15th (6.1) or 31st (6.12, 7.3)
    /// entry.
    pub fn pagevec_size(self) -> usize {
        if self >= Kernel::V6_12 {
            31
        } else {
            15
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

    /// Which lock guards an lruvec's lists: 5.7 takes the node's `pgdat->lru_lock` for every
    /// memcg's lruvec on the node (mm/swap.c: pagevec_lru_move_fn(), mm/vmscan.c:
    /// shrink_inactive_list(), all through `&pgdat->lru_lock`); from 5.11 (Alex Shi's "per
    /// memcg lru_lock", 6.1 and 6.12) each memcg's lruvec has its own `lruvec->lru_lock`
    /// (folio_lruvec_lock_irq()), so memcgs no longer contend with each other.
    pub fn lru_lock_per_memcg(self) -> bool {
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

    /// The multi-generational LRU was merged in 6.1; 5.7 has the classic LRU only.
    pub fn has_lru_gen(self) -> bool {
        self >= Kernel::V6_1
    }

    /// 5.7 keeps each lruvec's recent_scanned/recent_rotated counts (update_page_reclaim_stat(),
    /// shrink_inactive_list(), shrink_active_list(), activate_page()) for get_scan_count()'s
    /// ratios; the IO-cost series of 5.8 dropped them.
    pub fn scan_rotate_ratios(self) -> bool {
        self == Kernel::V5_7
    }

    /// 5.7 starts new anon pages on the active list (lru_cache_add_active_or_unevictable() in
    /// do_anonymous_page()) and activates every swapped-in page (do_swap_page()); 5.8+ start
    /// them inactive and let workingset detection promote them.
    pub fn anon_starts_active(self) -> bool {
        self == Kernel::V5_7
    }

    /// mm/memcontrol.c: memcg_rstat_updated() and mem_cgroup_flush_stats(): 6.1 keeps one
    /// global count of pending stat updates and flushes the whole tree past its threshold;
    /// 6.12 keeps a count per memcg, propagated to its ancestors, and flushes the asking
    /// memcg's subtree only (also from the ratelimited flush and the refault flush).
    pub fn memcg_stats_flush_per_subtree(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/memcontrol.c: mem_cgroup_charge_statistics() and uncharge_batch(): 6.1 counts
    /// PGPGIN/PGPGOUT in every memcg, one a charged or uncharged folio, and so feeds them to
    /// memcg_rstat_updated(); 6.12.95 counts them only for cgroup v1 (memcg1_charge_statistics(),
    /// CONFIG_MEMCG_V1), which Debian's 6.12.95 config leaves unset.
    pub fn memcg_counts_pgpgin(self) -> bool {
        self < Kernel::V6_12
    }

    /// mm/vmscan.c: prepare_scan_control() (prepare_scan_count() in 6.1): 6.1 does a threshold
    /// flush of the stats; 6.12 a ratelimited one (only when the periodic flusher is late).
    pub fn prepare_scan_flush_ratelimited(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/memcontrol.c: mem_cgroup_wb_stats(), which the dirty throttling of a cgroup's
    /// writeback reads: 6.1 does a threshold flush of the stats first
    /// (mem_cgroup_flush_stats()); 6.12 and 7.3 a ratelimited one
    /// (mem_cgroup_flush_stats_ratelimited()). (5.7 read exact per-CPU sums,
    /// memcg_exact_page_state(); pagelab's 5.7 takes 6.1's flush.)
    pub fn wb_stats_flush_ratelimited(self) -> bool {
        self >= Kernel::V6_12
    }

    /// MGLRU global reclaim: 6.12 walks the memcg LRU (lru_gen_shrink_node() -> shrink_many(),
    /// generations x bins of memcgs) and keeps lru_gen_shrink_lruvec() for memcg limit reclaim;
    /// 6.1 reaches every memcg through shrink_node_memcgs() -> lru_gen_shrink_lruvec().
    pub fn lru_gen_memcg_lru(self) -> bool {
        self >= Kernel::V6_12
    }

    /// MGLRU aging under kswapd: 6.1 ages in lru_gen_age_node() (skipping the first priority
    /// iteration) and get_nr_to_scan() returns 0 to kswapd when aging is due; 6.12 ages from
    /// get_nr_to_scan() below the default priority, lru_gen_age_node() only sets the initial
    /// priority and checks min_ttl_ms.
    pub fn lru_gen_ages_in_get_nr_to_scan(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: should_run_aging(): 6.12 answers "age" at once when fewer than
    /// MIN_NR_GENS generations are eligible and leaves the priority shift of nr_to_scan to
    /// get_nr_to_scan(); 6.1 shifts the total by the priority before the aging test.
    pub fn lru_gen_aging_test_first(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: should_skip_mm(): 6.1's mm walk skips an mm with fewer than MIN_LRU_BATCH
    /// eligible pages; 6.12 has no size filter.
    pub fn lru_gen_walk_skips_small_mms(self) -> bool {
        self < Kernel::V6_12
    }

    /// mm/vmscan.c: lru_gen_look_around(): 6.12 gives up on a range of one page and, outside
    /// an mm walk, activates every young folio (folio_activate(), pgactivate); 6.1 activates
    /// them only when fewer than a batch are young and otherwise updates their generation
    /// in place.
    pub fn lru_gen_look_around_always_activates(self) -> bool {
        self >= Kernel::V6_12
    }

    /// MGLRU refault accounting: 6.12's lru_gen_refault() counts workingset_refault_* for
    /// every refault whose lruvec matches and workingset_activate_* for a recent one; 6.1
    /// counts a refault only when recent and workingset_activate_* in sort_folio() when a
    /// tier's protection promotes a folio.
    pub fn lru_gen_counts_every_refault(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: isolate_folio() (MGLRU): 6.1 needs may_unmap for a mapped folio and
    /// may_writepage plus __GFP_IO for a dirty or unswapped anon one; 6.12 needs __GFP_IO only.
    pub fn lru_gen_isolate_needs_io_only(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: get_swappiness() (MGLRU): 6.12 returns 0 when the reclaim may not swap;
    /// 6.1 ignores may_swap there (global reclaim with may_swap = 0 still swaps).
    pub fn lru_gen_swappiness_honours_may_swap(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/memory.c: PGFAULT: 6.1 counts it at every entry to handle_mm_fault(), so a retried
    /// fault counts twice; 6.12 counts once, on completion (mm_account_fault()).
    pub fn pgfault_counted_on_completion(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/readahead.c: page_cache_sync_ra(): 6.12 only starts an initial window or uses the
    /// context (no sequential-continuation test, initial async size = size/2 when size <= req);
    /// 6.1's ondemand_readahead() has the full ladder.
    pub fn sync_readahead_initial_or_context(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/readahead.c: page_cache_async_ra(): 6.12 accepts only the expected index (start +
    /// size - async_size); 6.1 also accepts index == start + size.
    pub fn async_readahead_expected_index_only(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: shrink_node_memcgs() and do_try_to_free_pages(): 6.12 resumes a shared
    /// memcg iterator and stops once the target is met (except kswapd), with a full-walk retry
    /// when nothing was reclaimed; 6.1 walks every memcg every time.
    pub fn partial_memcg_walk(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/memcontrol.c: memory_reclaim(): 6.12 parses `swappiness=` (MIN_SWAPPINESS to
    /// MAX_SWAPPINESS, 0..=200) after the byte count and hands it to reclaim through
    /// scan_control's proactive_swappiness; 6.1.192 parses the byte count alone and refuses
    /// anything after it (page_counter_memparse(): -EINVAL).
    pub fn memory_reclaim_takes_swappiness(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/memcontrol.c: memory_reclaim(): 6.12 asks try_to_free_mem_cgroup_pages() for a
    /// quarter of what is left each round (reclaim's own minimum is SWAP_CLUSTER_MAX), so a
    /// request is not overshot by whole priority passes; 6.1.192 asks for all that is left.
    pub fn memory_reclaim_asks_a_quarter(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/rmap.c: folio_referenced(): 6.12 skips VMAs without recency (sequential, random,
    /// noreuse) entirely; 6.1's folio_referenced_one() clears their young bits, counts a
    /// young PTE of a VM_RAND_READ mapping as a reference and ignores a VM_SEQ_READ one's.
    pub fn rmap_skips_vmas_without_recency(self) -> bool {
        self >= Kernel::V6_12
    }

    /// include/linux/memcontrol.h: mem_cgroup_unprotected() (6.12): reclaim never skips its
    /// own target for the target's memory.min/low; 6.1's mem_cgroup_below_min/low() look at
    /// the target's (stale) effective protection like any other memcg's.
    pub fn reclaim_target_is_unprotected(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/filemap.c: filemap_read(): 6.12 keeps the position a read reached in a local and
    /// stores it in `ra->prev_pos` once, when the read ends, so readahead inside a long read
    /// still sees the previous read's end; 6.1 stores it after every folio copied.
    pub fn read_sets_prev_pos_at_end(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/filemap.c: page_cache_next_miss(): with no gap in the scanned range 6.12 returns
    /// `index + max_scan`, 6.1 the last index scanned.
    pub fn next_miss_past_the_scan(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: lru_gen_look_around(): 6.12 clears the young bit of the PTE that
    /// triggered it before looking at the window and counts it as the first young one; 6.1
    /// meets the trigger young in the window's loop, counts it there and, the folio being
    /// isolated, sets PG_referenced on it, so folio_check_references() activates it.
    pub fn lru_gen_look_around_clears_its_trigger_first(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: kswapd_shrink_node(): progress is nr_scanned >= target on 6.1, the larger
    /// of scanned and reclaimed on 6.12.
    pub fn kswapd_progress_counts_reclaimed(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: balance_pgdat(): 6.12 restarts once with no_cache_trim_mode when cache
    /// trimming failed and nothing was reclaimed; 6.1 has no such retry.
    pub fn balance_pgdat_retries_without_cache_trim(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: lru_gen_seq_show_full(): 6.12 prints four mm-walk statistics (TYFA) and
    /// 'x' for a missing value; 6.1 six (LOYNFA) and blanks.
    pub fn lru_gen_debugfs_four_walk_stats(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/page_alloc.c: the per-CPU free lists' `high` tuned at run time (6.7 on: 6.12's
    /// nr_pcp_high(), nr_pcp_alloc(), decay_pcp_high() and ZONE_BELOW_HIGH): it grows from
    /// high_min (the low watermark) towards high_max (an eighth of the zone) while the zone
    /// stays above its high watermark, and refills take up to 32 batches at once. 6.1 keeps
    /// `high` at the low watermark and refills one batch at a time.
    pub fn pcp_high_autotuned(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/page_alloc.c: a movable allocation that finds its free lists empty first tries to
    /// claim another type's block from a free chunk of order 4 or more (__rmqueue_claim(),
    /// each try boosting the watermarks) and otherwise steals a single page of the smallest
    /// chunk, without a boost (__rmqueue_steal(), 6.12.95). 6.1's __rmqueue_fallback() boosts
    /// on every fallback and moves the chunk it found to the movable lists.
    pub fn steals_single_pages_without_boost(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/page_alloc.c: a page that leaves a per-CPU list for the buddy lists (a bulk free
    /// past `high`, a drain, decay_pcp_high()) goes to the free lists of its pageblock's
    /// migratetype (free_pcppages_bulk(): get_pfnblock_migratetype(), 6.12.95 and 7.3.4), so a
    /// page a refill stole from an unmovable or reclaimable block and did not hand out goes
    /// back to that block. 6.1's free_pcppages_bulk() frees it with the migratetype it was
    /// listed with (get_pcppage_migratetype(): movable, set by __rmqueue_smallest()), and
    /// 6.1's fallback had moved its chunk to the movable lists anyway.
    pub fn pcp_drain_follows_the_pageblock(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/compaction.c: kcompactd compacts proactively (5.9 on: 6.1 and 6.12). When its
    /// 500 ms sleep times out with no work requested and kswapd asleep, it compacts every zone
    /// whole while the node's fragmentation score (extfrag at order 9, zones weighted by size)
    /// is above 90, until each zone's is at most 80 (vm.compaction_proactiveness = 20:
    /// kcompactd(), should_proactive_compact_node(), __compact_finished()). 5.7 has none.
    pub fn compacts_proactively(self) -> bool {
        self >= Kernel::V6_1
    }

    /// mm/compaction.c: a proactive pass counts its scanned pages as kcompactd's
    /// (compact_daemon_migrate_scanned, compact_daemon_free_scanned: compact_node() with
    /// `proactive`, 6.12.95). 6.1's proactive_compact_node() counts them only in
    /// compact_migrate_scanned and compact_free_scanned.
    pub fn proactive_compaction_counts_as_kcompactd(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/page_alloc.c: nr_pcp_high() caps a per-CPU list at four batches while kswapd
    /// reclaims the zone (ZONE_RECLAIM_ACTIVE), and nr_pcp_free() frees growing batches
    /// (5.14 on: 6.1 and 6.12). 5.7 keeps `high` at six batches and frees one batch at a time.
    pub fn pcp_limited_during_reclaim(self) -> bool {
        self >= Kernel::V6_1
    }

    /// kernel/sched/fair.c on one CPU: a kswapd woken by an allocation preempts the task
    /// that woke it. CFS (5.7, 6.1): place_entity() puts an entity waking from sleep half a
    /// latency period (GENTLE_FAIR_SLEEPERS: 3 ms of 6 ms) behind min_vruntime, more than
    /// the wake-up granularity (1 ms), so check_preempt_wakeup() reschedules the task, which
    /// yields at its next preemption point (the allocation itself, might_alloc() on a
    /// voluntary-preemption kernel). EEVDF (6.6 on: 6.12) keeps the waker running while its
    /// slice is protected (RUN_TO_PARITY). The guests' schedstat shows both: in 6.1's file
    /// scenarios kswapd0 waits 0.1-0.5 % of the run for the CPU and the task is preempted
    /// about once per kswapd wake-up; on 6.12 kswapd0 waits about as long as it runs.
    pub fn kswapd_preempts_its_waker(self) -> bool {
        self < Kernel::V6_12
    }

    // ---- 6.12.95 -> 7.3.4 (docs/kernel-7.3.md) ----------------------------------------------

    /// mm/vmscan.c: shrink_inactive_list(), shrink_active_list(), scan_folios() and
    /// evict_folios(): 6.12.95 counts pgscan_*/pgsteal_*/pgrefill with __count_vm_events()
    /// only for node reclaim (`!cgroup_reclaim(sc)`) and with __count_memcg_events() for the
    /// memcg, so memory.limit reclaim shows in memory.stat only; 7.3.4 counts them with
    /// mod_lruvec_state() as node statistics of the lruvec, so /proc/vmstat (the node's sum)
    /// counts memcg-limit reclaim as well.
    pub fn reclaim_counters_are_node_stats(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/swap_state.c and mm/swap_table.h (swap table phase I, 6.18): 6.12.95 keeps a
    /// swapped page's shadow in the swap cache's xarray, whose nodes workingset_update_node()
    /// puts on the shadow-node LRU, so mm/workingset.c: scan_shadow_nodes() frees them (and
    /// they count in workingset_nodes); 7.3.4 keeps the shadow in the slot's entry of the
    /// cluster's swap table (__swap_cache_del_folio()), which no shrinker walks: a swap
    /// shadow lives until its slot is freed.
    pub fn swap_shadows_in_swap_table(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/memory.c: do_swap_page() (swap table phase II, 7.0): 6.12.95 reads a page of a
    /// SWP_SYNCHRONOUS_IO device (zram) past the swap cache (`skip_swapcache`, the folio never
    /// in it, no NR_SWAPCACHE update); 7.3.4's swapin_sync() adds the folio to the swap cache
    /// like any swap-in (NR_SWAPCACHE +1, an rstat update of the memcg) and
    /// should_try_to_free_swap() frees the slot at once after mapping it (NR_SWAPCACHE -1).
    pub fn sync_swapin_through_swap_cache(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/memcontrol.c: memcg_rstat_updated(): 6.12.95 adds a stat update to the pending
    /// count of the memcg and of every ancestor (skipping only the atomic add of one already
    /// past its flush threshold, MEMCG_CHARGE_BATCH x CPUs); 7.3.4 stops the walk at the
    /// first memcg past its threshold, so its ancestors count no more of that subtree's
    /// updates until it is flushed, and a flush asked of an ancestor comes later.
    pub fn memcg_rstat_update_stops_at_flushable(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/vmscan.c: try_to_shrink_lruvec() (MGLRU, Kairui Song's 7.2 series "improve reclaim
    /// loop and dirty folio handling"): 6.12.95 calls get_nr_to_scan() before every batch,
    /// which ages (try_to_inc_max_seq()) when should_run_aging() asks and then ends the
    /// lruvec's turn, and each evict_folios() scans up to MAX_LRU_BATCH folios; 7.3.4
    /// computes the budget once (evictable >> priority), ages inside the loop without leaving
    /// it (root reclaim leaves after the batch that followed aging), and scans the budget in
    /// batches of at most MIN_LRU_BATCH folios (scan_folios()'s `nr_to_scan`).
    pub fn lru_gen_scan_budget_up_front(self) -> bool {
        self >= Kernel::V7_3
    }

    /// MGLRU's workingset protection (Yu Zhao's 6.14 rework, as 7.3.4 runs it):
    /// include/linux/mm_inline.h: folio_lru_refs() counts nothing without PG_referenced and
    /// otherwise the LRU_REFS field plus one (6.12.95: the field plus PG_workingset, whatever
    /// PG_referenced says); lru_tier_from_refs(refs, workingset) puts a PG_workingset folio in
    /// the top tier and others in order_base_2(refs) (6.12.95: order_base_2(refs + 1));
    /// lru_gen_folio_seq() places a folio by PG_active, PG_workingset and PG_referenced
    /// (6.12.95's lru_gen_add_folio(): by PG_active and the number of generations).
    /// mm/folio.c: lru_gen_inc_refs() (6.12.95's folio_inc_refs()) counts the field up after
    /// PG_referenced and sets PG_workingset last (6.12.95: PG_workingset second, then the field);
    /// folio_add_lru() in a fault activates only a PG_workingset folio and marks the others
    /// accessed (6.12.95: activates every folio). mm/vmscan.c: folio_inc_gen() keeps
    /// PG_workingset and sets no PG_reclaim; sort_folio() and inc_min_seq() count protected
    /// folios in their own tier, not those lazily promoted; isolate_folio() keeps PG_referenced
    /// and PG_reclaim; folio_update_gen() and lru_gen_set_refs() promote a mapped folio only on
    /// its second access (the first sets PG_referenced); folio_check_references() asks
    /// lru_gen_set_refs() (6.12.95: the classic two-touch rule, and shrink_folio_list() keeps a
    /// mapped PG_referenced folio).
    pub fn lru_gen_workingset_top_tier(self) -> bool {
        self >= Kernel::V7_3
    }

    /// MGLRU's type choice (6.14 rework, 7.3.4): mm/vmscan.c: get_type_to_scan() takes file
    /// below swappiness 2 and anon at 200, and otherwise compares the refault rates summed
    /// over all tiers (read_ctrl_pos() with MAX_NR_TIERS), each tier's total counting its
    /// protected folios; isolate_folios() always asks it, and get_tier_idx() per type with
    /// gains 2:3. 6.12.95 compares tier 0 only (gains swappiness : 200 - swappiness, and 1:2
    /// for the tiers), and isolate_folios() scans anon first whenever its min_seq is older.
    pub fn lru_gen_type_by_all_tiers(self) -> bool {
        self >= Kernel::V7_3
    }

    /// MGLRU's min_seq (6.14 rework, 7.3.4): mm/vmscan.c: try_to_inc_min_seq() lets anon and
    /// file min_seq move independently, pulling one back only when it would pass
    /// max_seq - MIN_NR_GENS while the other lags behind it (seq_is_valid(): each type keeps
    /// MIN_NR_GENS..MAX_NR_GENS generations); evictable_min_seq() is the older of the
    /// evictable types'. 6.12.95 keeps anon's min_seq no younger than file's and file's no
    /// older than anon's new one.
    pub fn lru_gen_min_seq_independent(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/workingset.c: lru_gen_refault() and lru_gen_test_recent() (7.3.4): a shadow is
    /// recent when its min_seq lies within MAX_NR_GENS of the lruvec's max_seq (6.12.95: equal
    /// to the current min_seq); lru_gen_eviction() stores refs - 1 and PG_workingset (6.12.95:
    /// refs != 0). A recent refault of a PG_workingset folio sets PG_workingset and counts
    /// workingset_restore, and workingset_activate only in a page fault; any other recent one
    /// gets refs - 1 back in the LRU_REFS field. 6.12.95 counts workingset_activate for every
    /// recent refault and restores (refs and PG_workingset) only in a fault or from refs >= 3.
    pub fn lru_gen_refault_workingset(self) -> bool {
        self >= Kernel::V7_3
    }

    /// 7.2's MGLRU dirty handling (Kairui Song, "improve reclaim loop and dirty folio
    /// handling", in 7.3.4): mm/vmscan.c: sort_folio() no longer moves locked, dirty or
    /// writeback folios to the next generation with PG_reclaim, so shrink_folio_list() meets
    /// them; evict_folios() calls handle_reclaim_writeback() after each isolating pass (wake the
    /// flushers when every taken folio was dirty and unqueued, add the batch to sc->nr), and
    /// its putback retries every inactive, unmapped, clean folio once and gives PG_active only
    /// to a rejected folio lru_gen_folio_seq() would put in the oldest generation. 6.12.95
    /// feeds nothing back, keeps dirty/writeback PG_reclaim folios in place and activates
    /// every referenced, mapped, locked, dirty or writeback survivor.
    pub fn lru_gen_evict_handles_writeback(self) -> bool {
        self >= Kernel::V7_3
    }

    /// 7.2's readahead `mmap_miss` accounting (7.3.4): mm/filemap.c: filemap_map_pages()
    /// lowers `ra->mmap_miss` by one at most, and only when fault-around itself mapped the
    /// faulting page (its folio returned VM_FAULT_NOPAGE) on a first attempt (not with
    /// FAULT_FLAG_TRIED), for a folio without PG_workingset, in a mapping without
    /// VM_SEQ_READ/VM_EXEC; do_async_mmap_readahead() leaves it alone for a locked folio (a
    /// read still in flight) and for VM_SEQ_READ/VM_EXEC. The raise in
    /// do_sync_mmap_readahead() (one a major fault, up to MMAP_LOTSAMISS × 10) and the
    /// read-around cut-off above MMAP_LOTSAMISS (100) are unchanged. 6.12.95's
    /// filemap_map_pages() lowered it by every page without PG_workingset that fault-around
    /// found in its window, mapped or not, the retry after a major fault's read included, so
    /// a random mmap reader kept read-around on.
    pub fn mmap_miss_lowered_once_per_hit(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/vmscan.c: reclaim_pages() → reclaim_folio_list() (6.12, 7.3): the isolated folios
    /// go through shrink_folio_list() with `ignore_references` true, so a referenced mapped
    /// folio is not kept or activated for its references. 6.1 (and the 6.6.8 cache_ext
    /// patched) passes false: folio_check_references() runs as in shrink_inactive_list().
    pub fn reclaim_pages_ignores_references(self) -> bool {
        self >= Kernel::V6_12
    }

    /// mm/vmscan.c: shrink_folio_list() (7.3.4): reclaim never writes a dirty file folio
    /// itself: every one it meets is counted in nr_vmscan_immediate_reclaim, gets PG_reclaim
    /// and goes back active, for kswapd as for direct reclaim; the flushers write it
    /// (handle_reclaim_writeback() wakes them when a whole batch was dirty and unqueued).
    /// PGDAT_DIRTY, `sc->nr.unqueued_dirty`/`file_taken` and FOLIOREF_RECLAIM_CLEAN are gone.
    /// 6.12.95 let kswapd pageout() a dirty file folio already marked PG_reclaim once
    /// shrink_node() had flagged the node PGDAT_DIRTY (every file folio of a pass dirty and
    /// unqueued), unless folio_check_references() said FOLIOREF_RECLAIM_CLEAN.
    pub fn reclaim_never_writes_file_folios(self) -> bool {
        self >= Kernel::V7_3
    }

    /// Large page-cache folios from readahead (ext4 gained them in 6.16; in 7.3.4):
    /// mm/readahead.c: page_cache_ra_order() allocates the window in folios of `ra->order`
    /// (raised by 2 by each page_cache_async_ra(), reset to 0 by page_cache_sync_ra(), capped at
    /// the mapping's maximum, MAX_PAGECACHE_ORDER = 9, and at ilog2(ra->size)), smaller where
    /// the index is unaligned or the window ends; filemap_read() marks such a folio accessed
    /// once per read call; reclaim takes it whole and leaves one shadow over its range
    /// (docs/kernel-7.3.md). 6.1.192 and 6.12.95's ext4 has no large folios
    /// (mapping_large_folio_support() is false): every page-cache folio is order 0.
    pub fn large_folio_readahead(self) -> bool {
        self >= Kernel::V7_3
    }

    /// mm/page_alloc.c: __alloc_pages() of a large readahead folio (7.3.4; only 7.3 makes
    /// them, [`Kernel::large_folio_readahead`]): one request of the folio's order, not one
    /// per page. The fast path needs the whole folio above the low watermark
    /// (__zone_watermark_ok() takes `(1 << order) - 1` off the free pages); the slow path
    /// (__alloc_pages_slowpath()) wakes kswapd with the order (wakeup_kswapd() raises
    /// `pgdat->kswapd_order`, and balances the node only if it is not balanced at that order),
    /// tries the min watermark, reclaims directly once and, being __GFP_NORETRY
    /// (readahead_gfp_mask()), then fails, so page_cache_ra_order() reads the rest of the window
    /// in order 0. kswapd balances at the order (pgdat_balanced(order)) until it has reclaimed
    /// compact_gap(order), twice the folio, in the run, then at order 0
    /// (kswapd_shrink_node()). Off (the model before 7.3's allocator rule): a large folio's
    /// frames were taken one page at a time, each an order-0 allocation.
    pub fn large_folio_allocated_at_its_order(self) -> bool {
        self >= Kernel::V7_3
    }

    /// kernel/sched/core.c, kernel/sched/fair.c, kernel/Kconfig.preempt: Debian's 7.3.4 runs
    /// PREEMPT_LAZY (its config: CONFIG_PREEMPT_LAZY=y, PREEMPT_DYNAMIC, no `preempt=` on the
    /// oracle's command line; x86 offers no PREEMPT_VOLUNTARY since it selects
    /// ARCH_HAS_PREEMPT_LAZY). A fair task's reschedule, at the end of its slice
    /// (update_curr()) or by a wake-up (check_preempt_wakeup_fair()), is resched_curr_lazy():
    /// TIF_NEED_RESCHED_LAZY, which a task in the kernel does not act on until sched_tick()
    /// upgrades it at the next tick (or it returns to user space or sleeps). 6.12.95 runs
    /// PREEMPT_VOLUNTARY (Debian's config): resched_curr() at once, acted on at the next
    /// might_resched(), which the allocator and reclaim pass often. Used by the one-CPU EEVDF
    /// turns ([`crate::mm::time::Eevdf`]): kswapd's wake-up preemption and its turns inside
    /// the task's operation begin a tick later on 7.3.
    pub fn fair_preemption_is_lazy(self) -> bool {
        self >= Kernel::V7_3
    }
}

/// A version predicate of [`Kernel`].
pub type Predicate = fn(Kernel) -> bool;

/// Every version predicate of [`Kernel`], by name, in the order they are declared: what a
/// comparison of kernels (`pagelab run S --kernel 6.1,6.12,7.3`) lists as the rules that
/// differ between two kernels. A test checks that every `pub fn … (self) -> bool` of the
/// `impl Kernel` block is here.
pub const PREDICATES: &[(&str, Predicate)] = &[
    ("cost_counts_rotations", Kernel::cost_counts_rotations),
    ("anon_workingset", Kernel::anon_workingset),
    ("lru_lock_per_memcg", Kernel::lru_lock_per_memcg),
    ("io_cost_balance", Kernel::io_cost_balance),
    ("sync_swap_skips_bio", Kernel::sync_swap_skips_bio),
    ("refault_counted_before_memcg_lookup", Kernel::refault_counted_before_memcg_lookup),
    ("has_lru_gen", Kernel::has_lru_gen),
    ("scan_rotate_ratios", Kernel::scan_rotate_ratios),
    ("anon_starts_active", Kernel::anon_starts_active),
    ("memcg_stats_flush_per_subtree", Kernel::memcg_stats_flush_per_subtree),
    ("memcg_counts_pgpgin", Kernel::memcg_counts_pgpgin),
    ("prepare_scan_flush_ratelimited", Kernel::prepare_scan_flush_ratelimited),
    ("wb_stats_flush_ratelimited", Kernel::wb_stats_flush_ratelimited),
    ("lru_gen_memcg_lru", Kernel::lru_gen_memcg_lru),
    ("lru_gen_ages_in_get_nr_to_scan", Kernel::lru_gen_ages_in_get_nr_to_scan),
    ("lru_gen_aging_test_first", Kernel::lru_gen_aging_test_first),
    ("lru_gen_walk_skips_small_mms", Kernel::lru_gen_walk_skips_small_mms),
    ("lru_gen_look_around_always_activates", Kernel::lru_gen_look_around_always_activates),
    ("lru_gen_counts_every_refault", Kernel::lru_gen_counts_every_refault),
    ("lru_gen_isolate_needs_io_only", Kernel::lru_gen_isolate_needs_io_only),
    ("lru_gen_swappiness_honours_may_swap", Kernel::lru_gen_swappiness_honours_may_swap),
    ("pgfault_counted_on_completion", Kernel::pgfault_counted_on_completion),
    ("sync_readahead_initial_or_context", Kernel::sync_readahead_initial_or_context),
    ("async_readahead_expected_index_only", Kernel::async_readahead_expected_index_only),
    ("partial_memcg_walk", Kernel::partial_memcg_walk),
    ("memory_reclaim_takes_swappiness", Kernel::memory_reclaim_takes_swappiness),
    ("memory_reclaim_asks_a_quarter", Kernel::memory_reclaim_asks_a_quarter),
    ("rmap_skips_vmas_without_recency", Kernel::rmap_skips_vmas_without_recency),
    ("reclaim_target_is_unprotected", Kernel::reclaim_target_is_unprotected),
    ("read_sets_prev_pos_at_end", Kernel::read_sets_prev_pos_at_end),
    ("next_miss_past_the_scan", Kernel::next_miss_past_the_scan),
    ("lru_gen_look_around_clears_its_trigger_first", Kernel::lru_gen_look_around_clears_its_trigger_first),
    ("kswapd_progress_counts_reclaimed", Kernel::kswapd_progress_counts_reclaimed),
    ("balance_pgdat_retries_without_cache_trim", Kernel::balance_pgdat_retries_without_cache_trim),
    ("lru_gen_debugfs_four_walk_stats", Kernel::lru_gen_debugfs_four_walk_stats),
    ("pcp_high_autotuned", Kernel::pcp_high_autotuned),
    ("steals_single_pages_without_boost", Kernel::steals_single_pages_without_boost),
    ("pcp_drain_follows_the_pageblock", Kernel::pcp_drain_follows_the_pageblock),
    ("compacts_proactively", Kernel::compacts_proactively),
    ("proactive_compaction_counts_as_kcompactd", Kernel::proactive_compaction_counts_as_kcompactd),
    ("pcp_limited_during_reclaim", Kernel::pcp_limited_during_reclaim),
    ("kswapd_preempts_its_waker", Kernel::kswapd_preempts_its_waker),
    ("reclaim_counters_are_node_stats", Kernel::reclaim_counters_are_node_stats),
    ("swap_shadows_in_swap_table", Kernel::swap_shadows_in_swap_table),
    ("sync_swapin_through_swap_cache", Kernel::sync_swapin_through_swap_cache),
    ("memcg_rstat_update_stops_at_flushable", Kernel::memcg_rstat_update_stops_at_flushable),
    ("lru_gen_scan_budget_up_front", Kernel::lru_gen_scan_budget_up_front),
    ("lru_gen_workingset_top_tier", Kernel::lru_gen_workingset_top_tier),
    ("lru_gen_type_by_all_tiers", Kernel::lru_gen_type_by_all_tiers),
    ("lru_gen_min_seq_independent", Kernel::lru_gen_min_seq_independent),
    ("lru_gen_refault_workingset", Kernel::lru_gen_refault_workingset),
    ("lru_gen_evict_handles_writeback", Kernel::lru_gen_evict_handles_writeback),
    ("mmap_miss_lowered_once_per_hit", Kernel::mmap_miss_lowered_once_per_hit),
    ("reclaim_pages_ignores_references", Kernel::reclaim_pages_ignores_references),
    ("reclaim_never_writes_file_folios", Kernel::reclaim_never_writes_file_folios),
    ("large_folio_readahead", Kernel::large_folio_readahead),
    ("large_folio_allocated_at_its_order", Kernel::large_folio_allocated_at_its_order),
    ("fair_preemption_is_lazy", Kernel::fair_preemption_is_lazy),
];

impl Kernel {
    /// Every pinned kernel, oldest first.
    pub const ALL: [Kernel; 4] = [Kernel::V5_7, Kernel::V6_1, Kernel::V6_12, Kernel::V7_3];

    /// The predicates whose answer differs between `self` and `other`, with each kernel's
    /// answer, in [`PREDICATES`]' order.
    pub fn differing_rules(self, other: Kernel) -> Vec<(&'static str, bool, bool)> {
        PREDICATES.iter().filter_map(|&(name, f)| (f(self) != f(other)).then_some((name, f(self), f(other)))).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is generated from nothing but this file's text: every boolean predicate
    /// declared in `impl Kernel` must be listed, so a new rule cannot be left out of the
    /// comparison of kernels.
    #[test]
    fn predicates_lists_every_boolean_predicate() {
        let src = include_str!("kernel.rs");
        let declared: Vec<&str> = src.lines().filter_map(|l| l.trim().strip_prefix("pub fn ")?.strip_suffix("(self) -> bool {")).collect();
        let listed: Vec<&str> = PREDICATES.iter().map(|p| p.0).collect();
        assert_eq!(declared, listed);
        assert!(declared.len() > 30);
    }

    #[test]
    fn differing_rules_between_6_12_and_7_3_are_the_7_3_predicates() {
        let d: Vec<&str> = Kernel::V6_12.differing_rules(Kernel::V7_3).into_iter().map(|x| x.0).collect();
        assert_eq!(
            d,
            [
                "reclaim_counters_are_node_stats",
                "swap_shadows_in_swap_table",
                "sync_swapin_through_swap_cache",
                "memcg_rstat_update_stops_at_flushable",
                "lru_gen_scan_budget_up_front",
                "lru_gen_workingset_top_tier",
                "lru_gen_type_by_all_tiers",
                "lru_gen_min_seq_independent",
                "lru_gen_refault_workingset",
                "lru_gen_evict_handles_writeback",
                "mmap_miss_lowered_once_per_hit",
                "reclaim_never_writes_file_folios",
                "large_folio_readahead",
                "large_folio_allocated_at_its_order",
                "fair_preemption_is_lazy"
            ]
        );
        assert!(Kernel::V6_1.differing_rules(Kernel::V6_1).is_empty());
        assert_eq!(Kernel::parse("7.3"), Ok(Kernel::V7_3));
        assert_eq!(Kernel::V7_3.name(), "7.3");
    }
}
