//! MGLRU-FG (`[mglru] fg = true`): Kairui Song's "frequency guided workingset promotion",
//! patch 06/32 of "[PATCH RFC 00/32] mm/mglru: MGLRU-FG and refault distance support"
//! (1 May 2026), on 7.3's MGLRU. A file folio accessed through file descriptors is promoted
//! at access time, one generation at a time, instead of waiting for the eviction's tier
//! protection; its access count (0..=LRU_REFS_MAX) replaces PG_referenced and PG_workingset,
//! and a count of two or more is the workingset.
//!
//! Certainty, as shared/reference/kairui-refault-distance.md labels it: [R] read in the
//! posted patch (06/32's commit message, its first ~2,500 characters: no diff was found);
//! [DEV] Kairui Song's development tree ryncsn/linux, by commit (01f703a6's mm/swap.c
//! folio_inc_lru_refs(); 7e29194b's include/linux/mmzone.h tier comment and
//! include/linux/mm_inline.h); [I] inferred. The count's helpers are in `mm::swap`
//! ([`fg_refs`], [`fg_with_refs`], [`fg_tier`]); docs/journal/2026-11-29-mglru-fg.md lists
//! the sources.

use super::gen::{folio_gen, gen_of, with_gen};
use super::{LruGen, MAX_NR_GENS};
use crate::mm::folio::{pg, Pfn};
#[cfg(doc)]
use crate::mm::swap::fg_tier;
use crate::mm::swap::{fg_refs, fg_with_refs, FgReset, FG_REFS_MAX, FG_REFS_WORKINGSET};
use crate::mm::Mm;

impl LruGen {
    /// Models mm/swap.c: folio_inc_lru_refs() of the MGLRU-FG RFC (May 2026), which
    /// folio_mark_accessed() calls under MGLRU in place of 7.3's lru_gen_inc_refs():
    /// - one more access is counted, up to LRU_REFS_MAX ([R] 06/32, [DEV] 01f703a6);
    /// - a folio off the lists (isolated, or waiting in a per-CPU batch), below
    ///   LRU_REFS_WORKINGSET, or already in the youngest generation only counts ([DEV]);
    /// - a workingset folio (count >= 2) in its type's oldest generation moves to the next
    ///   ([DEV] 01f703a6's code, 7e29194b's tier comment item 3: "If a workingset folio is
    ///   found in the oldest gen, it will be moved to second oldest gen on access");
    /// - an access past LRU_REFS_MAX promotes the folio one generation, wherever it is below
    ///   the youngest, and resets its count (`[mglru] fg_reset`) ([R] 06/32: "For folios that
    ///   have an access count beyond the maximum tiering count (LRU_REFS_MAX), reset its tier
    ///   and promote it into the next gen ... one gen at a time").
    ///
    /// As with folio_update_gen(), only the generation in the flags changes (and the sizes);
    /// sort_folio() moves the folio to that generation's list when the eviction meets it.
    /// 06/32 says "for file folios"; the [DEV] code applies to every folio
    /// folio_mark_accessed() sees, and pagelab follows the code.
    pub(super) fn fg_inc_lru_refs(&mut self, mm: &mut Mm, pfn: Pfn, reset: FgReset) {
        let f = *mm.folios.get(pfn);
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        let mut refs = fg_refs(f.flags) + 1;
        let gen = folio_gen(f.flags);
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let promote = match gen {
            Some(g) if refs >= FG_REFS_WORKINGSET && f.test(pg::LRU) => {
                let lv = self.lrugen(k);
                let ty = f.lru_type();
                if g == gen_of(lv.max_seq) {
                    false
                } else if refs > FG_REFS_MAX {
                    refs = reset.refs();
                    true
                } else {
                    g == gen_of(lv.min_seq[ty])
                }
            }
            _ => false,
        };
        let refs = refs.min(FG_REFS_MAX);
        mm.folios.get_mut(pfn).flags = fg_with_refs(f.flags, refs);
        if let (true, Some(old)) = (promote, gen) {
            let new = (old + 1) % MAX_NR_GENS;
            let fm = mm.folios.get_mut(pfn);
            fm.flags = with_gen(fm.flags, new);
            self.update_size(mm, k, f.lru_type(), Some(old), Some(new), f.nr_pages() as i64);
        }
    }
}
