//! [`Ext`]: the kernel around seam policies (the part of cache_ext's patched mm/vmscan.c that
//! is not the policy), as one [`Policy`]. A machine may mix seam memcgs with memcgs that keep
//! the kernel's classic LRU (hosted inside); every per-memcg hook goes through one dispatch,
//! `Ext::per_memcg`, which names what each kind of memcg does. Reclaim of a seam memcg runs
//! the shared [`reclaim_batch`](crate::mm::vmscan::reclaim_batch) with the seam's epilogue.

use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal, NO_TASK};
use crate::kernel::SWAP_CLUSTER_MAX;
use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::{Inspect, Policy};
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::profile::Func;
use crate::mm::swap::lru_add_drain;
use crate::mm::vmscan::{reclaim_batch, shrink_node_memcgs, BatchRules, Epilogue, ReclaimStat, ScanControl};
use crate::mm::vmstat::Lru;
use crate::mm::workingset::{classic_eviction, classic_refault, workingset_age_nonresident};
use crate::mm::Mm;
use crate::policy::classic::Classic;

/// What the seam saw of one memcg's policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SeamStats {
    /// evict_folios() calls.
    pub requests: u64,
    /// Candidates returned.
    pub candidates: u64,
    /// Candidates that were not a folio on this memcg's LRU (not resident, isolated already,
    /// another memcg's, unknown ids), or more than were asked for.
    pub invalid: u64,
    /// Calls that returned no candidate while reclaim needed pages.
    pub empty: u64,
    /// Candidates reclaim freed.
    pub evicted: u64,
    /// Candidates the kernel kept and gave back.
    pub kept: u64,
    /// Of `kept`, those the kernel kept because their read was still in flight (PG_locked):
    /// the readahead pages a policy proposes before their IO completed.
    pub kept_locked: u64,
    /// Folios `admit_folio` refused (marked dropbehind); shown only when not zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_admitted: u64,
    /// `machine.seam_fallback`: reclaim calls whose candidates freed 80% or less of the
    /// target, so that the classic LRU reclaimed after them; shown only when not zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub fallbacks: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the classic LRU did with a deferring policy's folio ([`Ext::tell_deferred`]).
#[derive(Clone, Copy)]
enum Told {
    Added,
    Accessed(Access),
    Removed(Removal),
}

/// One memcg's seam policy.
struct Slot {
    policy: Box<dyn EvictionPolicy>,
    stats: SeamStats,
    /// The kernel's classic LRU keeps the memcg's folios and the policy hears the hooks:
    /// a policy that leaves eviction to it ([`EvictionPolicy::defers_eviction`]), or one
    /// that evicts first under `machine.seam_fallback` (`evicts_first`).
    defers: bool,
    /// cache_ext's kernel (`machine.seam_fallback`): reclaim asks the policy first and
    /// falls back to the classic LRU ([`Ext::shrink_cache_ext_lruvec`]).
    evicts_first: bool,
}

/// The host of seam policies: one [`EvictionPolicy`] per memcg that has one; the memcgs
/// without one (a per-cgroup policy under a classic machine) keep the classic LRU, hosted
/// inside.
pub struct Ext {
    name: &'static str,
    slots: Vec<Option<Slot>>,
    /// The classic LRU of the memcgs without a seam policy.
    classic: Option<Classic>,
    /// Folios that replaced a shadow entry and have not joined the LRU yet (bit per pfn), and
    /// those whose refault distance said workingset.
    refault: Vec<u64>,
    workingset: Vec<u64>,
    /// Per pfn of a seam memcg's page-cache folio: the task that inserted it ([`NO_TASK`]
    /// if none), for [`Folio::task`].
    inserter: Vec<u32>,
    /// Per pfn of a seam memcg's folio: the reads and writes that marked it accessed while
    /// it waited in the per-CPU lru_add batch, told to the policy right after its
    /// `folio_added` ([`Ext::accessed`]).
    early: Vec<[u8; 2]>,
    taken: Vec<Pfn>,
    infos: Vec<Folio>,
    candidates: Vec<FolioId>,
    /// The candidates kept during the current shrink_seam_lruvec() call: back on the LRU,
    /// but held from the policy until the call ends, so that no candidate is offered twice
    /// in one call (the contract's "a kept folio is not offered again in the same call").
    parked: Vec<Pfn>,
    /// The first error of a policy; the seam stops calling policies after it.
    failure: Option<String>,
    /// Hook calls not yet charged as CPU time ([`Ext::charge_hooks`]).
    hooks: u64,
}

fn bit(v: &[u64], pfn: Pfn) -> bool {
    v.get(pfn as usize / 64).is_some_and(|w| w >> (pfn % 64) & 1 != 0)
}

/// `pfn`'s entry of a per-pfn vector, grown (doubling, new entries `fill`) to hold it: the
/// vectors grow with the pfns touched, not with the machine's memory.
fn per_pfn<T: Copy>(v: &mut Vec<T>, pfn: Pfn, fill: T) -> &mut T {
    let i = pfn as usize;
    if i >= v.len() {
        v.resize((i + 1).max(v.len() * 2), fill);
    }
    &mut v[i]
}

fn set_bit(v: &mut Vec<u64>, pfn: Pfn, on: bool) {
    let i = pfn as usize / 64;
    if i >= v.len() {
        if !on {
            return;
        }
        v.resize(i + 1, 0);
    }
    if on {
        v[i] |= 1 << (pfn % 64);
    } else {
        v[i] &= !(1 << (pfn % 64));
    }
}

/// The pages a cgroup can hold: the smallest memory.max of the cgroup and its ancestors
/// (mm/page_counter.c: page_counter_try_charge() charges every level, so the tightest one
/// limits it; 6.1/6.12), and at most the machine's memory (totalram_pages()). A child
/// without a limit of its own gets its parent's, never PAGE_COUNTER_MAX.
pub fn effective_max(mm: &Mm, memcg: MemcgId) -> u64 {
    let mut max = mm.nodes[0].zones.managed();
    let mut at = Some(memcg);
    while let Some(id) = at {
        let m = mm.memcgs.get(id);
        max = max.min(m.max);
        at = m.parent;
    }
    max
}

/// What a policy sees of a resident folio from the page and its object alone: an anon
/// folio's task is its owner, a file folio's is [`NO_TASK`] (the seam records the inserting
/// task, [`Ext::folio_info`]); `refault`, `workingset` and `putback` are false.
pub fn folio_of(mm: &Mm, pfn: Pfn) -> Folio {
    let f = mm.folios.get(pfn);
    let obj = mm.space.object_of(f.vpn);
    let anon = f.test(pg::SWAPBACKED);
    Folio {
        id: pfn,
        key: f.vpn,
        anon,
        object: obj as u32,
        index: (f.vpn - mm.space.objects[obj].base) as u64,
        memcg: f.memcg,
        dirty: f.test(pg::DIRTY),
        mapped: f.test(pg::MAPPED),
        referenced: f.test(pg::REFERENCED),
        refault: false,
        workingset: false,
        putback: false,
        task: if anon { mm.space.objects[obj].owner.map_or(NO_TASK, |t| t as u32) } else { NO_TASK },
    }
}

impl Ext {
    /// A host for `policies` (one per memcg, `None` for a classic memcg); `name` is the
    /// machine's policy name in reports. Each policy's `init` runs here.
    pub fn new(mm: &Mm, name: &'static str, mut policies: Vec<Option<Box<dyn EvictionPolicy>>>) -> Ext {
        let n = mm.memcgs.cg.len();
        policies.resize_with(n, || None);
        let tasks: Vec<String> = mm.tasks.iter().map(|t| t.name.clone()).collect();
        // Under `machine.seam_fallback` every evicting policy's memcg keeps the classic LRU too.
        let evicts_first: Vec<bool> = policies.iter().map(|p| mm.cfg.seam_fallback && p.as_ref().is_some_and(|p| !p.defers_eviction())).collect();
        let defers: Vec<bool> = policies.iter().zip(&evicts_first).map(|(p, &e)| e || p.as_ref().is_some_and(|p| p.defers_eviction())).collect();
        // The memcgs whose folios a seam policy keeps; the others keep the classic LRU.
        let owns: Vec<bool> = policies.iter().zip(&defers).map(|(p, &d)| p.is_some() && !d).collect();
        let classic = owns.iter().any(|&o| !o).then(|| {
            let mut c = Classic::new(n);
            c.set_foreign(owns);
            c.set_told(defers.clone());
            c
        });
        let slots = policies
            .into_iter()
            .zip(defers.into_iter().zip(evicts_first))
            .enumerate()
            .map(|(i, (p, (defers, evicts_first)))| {
                p.map(|mut policy| {
                    let m = mm.memcgs.get(i as MemcgId);
                    policy.init(&Cgroup { id: i as MemcgId, path: m.path.clone(), max: effective_max(mm, i as MemcgId), tasks: tasks.clone() });
                    Slot { policy, stats: SeamStats::default(), defers, evicts_first }
                })
            })
            .collect();
        let mut ext = Ext {
            name,
            slots,
            classic,
            refault: Vec::new(),
            workingset: Vec::new(),
            inserter: Vec::new(),
            early: Vec::new(),
            taken: Vec::new(),
            infos: Vec::new(),
            candidates: Vec::new(),
            parked: Vec::new(),
            failure: None,
            hooks: 0,
        };
        ext.note_failure();
        ext
    }

    /// The seam's counts for a memcg with a seam policy.
    pub fn stats(&self, memcg: MemcgId) -> Option<SeamStats> {
        self.slots.get(memcg as usize)?.as_ref().map(|s| s.stats)
    }

    /// The memcg's folios are a seam policy's (not the classic LRU's).
    #[inline]
    fn seam(&self, memcg: MemcgId) -> bool {
        self.slots[memcg as usize].as_ref().is_some_and(|s| !s.defers)
    }

    /// The memcg keeps the classic LRU under a policy that hears the hooks.
    #[inline]
    fn defers(&self, memcg: MemcgId) -> bool {
        self.slots[memcg as usize].as_ref().is_some_and(|s| s.defers)
    }

    /// The memcg's policy evicts first, over the classic LRU (`machine.seam_fallback`).
    #[inline]
    fn evicts_first(&self, memcg: MemcgId) -> bool {
        self.slots[memcg as usize].as_ref().is_some_and(|s| s.evicts_first)
    }

    /// Charges the hook calls made since the last charge, `[time] cache_ext_hook_ns` each, to
    /// whoever runs them (the module's "What a hook costs").
    fn charge_hooks(&mut self, mm: &mut Mm) {
        let calls = std::mem::take(&mut self.hooks);
        let ns = mm.cfg.costs.cache_ext_hook_ns;
        if calls > 0 && ns > 0 {
            mm.cpu_in(Func::CacheExtHook, calls * ns);
        }
    }

    /// The one per-memcg dispatch of the hooks: `classic` when `memcg` keeps the kernel's LRU
    /// (hosted inside), `seam` when a seam policy keeps its folios. Every per-memcg hook of
    /// [`Policy for Ext`](Ext) goes through it, so each states what both kinds of memcg do.
    #[inline]
    fn per_memcg<A, R>(
        &mut self,
        mm: &mut Mm,
        memcg: MemcgId,
        arg: A,
        classic: impl FnOnce(&mut Classic, &mut Mm, A) -> R,
        seam: impl FnOnce(&mut Ext, &mut Mm, A) -> R,
    ) -> R {
        let r = if self.seam(memcg) {
            seam(self, mm, arg)
        } else {
            classic(self.classic.as_mut().expect("a memcg without a seam policy has the classic LRU"), mm, arg)
        };
        self.charge_hooks(mm);
        r
    }

    fn note_failure(&mut self) {
        if self.failure.is_none() {
            self.failure = self.slots.iter().flatten().find_map(|s| s.policy.failure());
        }
    }

    /// Calls the memcg's policy unless a policy has failed.
    #[inline]
    fn with_policy(&mut self, memcg: MemcgId, f: impl FnOnce(&mut dyn EvictionPolicy)) {
        if self.failure.is_some() {
            return;
        }
        if let Some(s) = self.slots[memcg as usize].as_mut() {
            self.hooks += 1;
            f(s.policy.as_mut());
            if let Some(e) = s.policy.failure() {
                self.failure = Some(e);
            }
        }
    }

    /// What a policy sees of a resident folio.
    pub fn folio_info(&self, mm: &Mm, pfn: Pfn) -> Folio {
        let mut info = folio_of(mm, pfn);
        if !info.anon {
            info.task = self.inserter.get(pfn as usize).copied().unwrap_or(NO_TASK);
        }
        info.refault = bit(&self.refault, pfn);
        info.workingset = bit(&self.workingset, pfn);
        info
    }

    /// Models cache_ext's folio_accessed hook, which runs first thing in mm/swap.c:
    /// folio_mark_accessed() whatever PG_lru says (cache_ext's 6.6.8 patch, linux-cache-ext
    /// 7442a92): a folio of a seam memcg on the LRU is told at once; one still waiting in the
    /// per-CPU lru_add batch (the read that inserted it, mostly) is told right after its
    /// `folio_added` ([`Ext::tell_early`]), since the seam tells a policy of a folio only once
    /// it can be a candidate, unless the policy does not want it (a plain cache). An isolated
    /// folio is not told.
    fn accessed(&mut self, mm: &Mm, pfn: Pfn, how: Access) {
        if mm.folios.test(pfn, pg::LRU) {
            let mut info = self.folio_info(mm, pfn);
            if let Some(t) = mm.current_task() {
                info.task = t as u32;
            }
            self.with_policy(info.memcg, |p| p.folio_accessed(&info, how));
        } else if mm.folios.test(pfn, pg::IN_LRU_ADD) && self.hears_early(mm.folios.get(pfn).memcg) {
            let n = &mut per_pfn(&mut self.early, pfn, [0; 2])[(how == Access::Write) as usize];
            *n = n.saturating_add(1);
        }
    }

    /// The memcg's policy wants the accesses made while a folio waited in the lru_add batch
    /// ([`EvictionPolicy::hears_early_accesses`]).
    fn hears_early(&self, memcg: MemcgId) -> bool {
        self.slots[memcg as usize].as_ref().is_some_and(|s| s.policy.hears_early_accesses())
    }

    /// The accesses of `pfn` recorded while it waited in the lru_add batch, told to the
    /// policy after its `folio_added` (reads, then writes; [`Folio::task`] is the inserter).
    fn tell_early(&mut self, info: &Folio) {
        let Some(early) = self.early.get_mut(info.id as usize).map(std::mem::take) else {
            return;
        };
        for (how, n) in [(Access::Read, early[0]), (Access::Write, early[1])] {
            for _ in 0..n {
                self.with_policy(info.memcg, |p| p.folio_accessed(info, how));
            }
        }
    }

    /// The folio is one [`Ext::tell_deferred`] tells its memcg's policy of: a page-cache folio
    /// of a memcg that keeps the classic LRU under its policy.
    fn told_deferred(&self, mm: &Mm, pfn: Pfn) -> bool {
        self.defers(mm.folio_memcg(pfn)) && !mm.folios.test(pfn, pg::SWAPBACKED)
    }

    /// Tells a deferring policy (its memcg keeps the classic LRU) what the classic LRU just
    /// did with one of its page-cache folios, and charges the call. Anon folios are not told:
    /// cache_ext's hooks are the page cache's (linux-cache-ext 7442a92: mm/filemap.c's
    /// insertion and removal, folio_mark_accessed()), and its kernel leaves anon memory to
    /// the LRU alone.
    fn tell_deferred(&mut self, mm: &mut Mm, pfn: Pfn, what: Told) {
        if !self.told_deferred(mm, pfn) {
            return;
        }
        let memcg = mm.folio_memcg(pfn);
        match what {
            Told::Added => {
                let info = self.folio_info(mm, pfn);
                set_bit(&mut self.refault, pfn, false);
                set_bit(&mut self.workingset, pfn, false);
                self.with_policy(memcg, |p| p.folio_added(&info));
                self.tell_early(&info);
            }
            Told::Accessed(how) => self.accessed(mm, pfn, how),
            Told::Removed(why) => {
                let info = self.folio_info(mm, pfn);
                self.with_policy(memcg, |p| p.folio_removed(&info, why));
            }
        }
        self.charge_hooks(mm);
    }

    /// Tells deferring policies what the classic LRU evicted of their folios (recorded
    /// under __remove_mapping(), where cache_ext's removal hook runs), and charges the calls.
    fn tell_evicted(&mut self, mm: &mut Mm) {
        let mut evicted = std::mem::take(&mut self.infos);
        evicted.clear();
        self.classic.as_mut().expect("a deferring memcg keeps the classic LRU").take_evicted(&mut evicted);
        for info in evicted.iter().filter(|i| !i.anon) {
            self.with_policy(info.memcg, |p| p.folio_removed(info, Removal::Evicted));
        }
        self.infos = evicted;
        self.charge_hooks(mm);
    }

    fn lru_of(mm: &Mm, pfn: Pfn) -> Lru {
        Lru::of(mm.folios.get(pfn).is_file_lru(), false)
    }

    /// Puts the survivors of a batch back on the LRU (mm/vmscan.c: move_folios_to_lru(),
    /// 6.1/6.12: an active survivor ages the nonresident clock). The policy hears of them
    /// only when the current shrink_seam_lruvec() call ends ([`Ext::release_parked`]): the
    /// kernel puts a kept folio back at the head of its LRU, where the rest of the pass does
    /// not reach it, and the seam's equivalent is not to offer it to the policy again before
    /// the call is over.
    fn putback(&mut self, mm: &mut Mm, memcg: MemcgId, list: &[Pfn]) {
        for &pfn in list {
            mm.folios.clear(pfn, pg::ISOLATED);
            mm.folios.set(pfn, pg::LRU);
            if mm.folios.test(pfn, pg::ACTIVE) {
                if mm.cfg.refault.putback_ages_nonresident {
                    workingset_age_nonresident(mm, memcg, 0, 1);
                }
                mm.folios.clear(pfn, pg::ACTIVE);
            }
            mm.update_lru_size(memcg, Self::lru_of(mm, pfn), 1);
            self.parked.push(pfn);
        }
    }

    /// Gives the folios kept during this call back to the policy: `folio_added` with
    /// `putback` set, then `folio_accessed(ReclaimReferenced)` if reclaim found a mapping
    /// young. A parked folio that left the LRU meanwhile (freed by its task's exit) is
    /// skipped: the policy was told of that by `folio_removed`.
    fn release_parked(&mut self, mm: &Mm, memcg: MemcgId) {
        let parked = std::mem::take(&mut self.parked);
        for &pfn in &parked {
            let f = mm.folios.get(pfn);
            if f.flags & (pg::LRU | pg::ISOLATED) != pg::LRU || f.memcg != memcg {
                continue;
            }
            let mut info = self.folio_info(mm, pfn);
            info.putback = true;
            let referenced = info.referenced && info.mapped;
            self.with_policy(memcg, |p| {
                p.folio_added(&info);
                if referenced {
                    p.folio_accessed(&info, Access::ReclaimReferenced);
                }
            });
        }
        self.parked = parked;
        self.parked.clear();
    }

    /// One `evict_folios` request for up to `nr` candidates of `memcg`'s policy, in the
    /// reusable candidate buffer (the caller hands it back), counted in the seam's stats
    /// (requests, candidates, empty); a policy's failure stops the seam.
    fn request(&mut self, mm: &Mm, memcg: MemcgId, nr: usize) -> Vec<FolioId> {
        let mut cands = std::mem::take(&mut self.candidates);
        cands.clear();
        let slot = self.slots[memcg as usize].as_mut().expect("a seam memcg");
        slot.policy.evict_folios(memcg, nr, &Freeable::new(&mm.folios, mm.now()), &mut cands);
        self.hooks += 1;
        slot.stats.requests += 1;
        slot.stats.candidates += cands.len() as u64;
        slot.stats.empty += cands.is_empty() as u64;
        if let Some(e) = slot.policy.failure() {
            self.failure = Some(e);
        }
        cands
    }

    /// Models cache_ext's eviction in mm/vmscan.c: shrink_lruvec() (cache_ext's 6.6.8 patch,
    /// around the 6.1/6.12 isolation, shrink_folio_list() and putback) for a memcg with a
    /// seam policy: batches of up to SWAP_CLUSTER_MAX candidates until the reclaim target is met or
    /// the scan budget of this priority is spent. The budget is the kernel's
    /// get_scan_count() share `lru_size >> priority`, but at least one batch (cache_ext asks
    /// for a full batch of 32); invalid candidates count against it, so a policy that
    /// returns garbage ends the loop. The taken candidates are reclaimed as mm/vmscan.c:
    /// reclaim_pages() reclaims a list (6.1, 6.12, 7.3; [`BatchRules::reclaim_pages`]).
    fn shrink_seam_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) {
        let lv = &mm.memcgs.get(memcg).lruvec;
        let size = lv.lru_size[Lru::InactiveFile as usize] + lv.lru_size[Lru::InactiveAnon as usize];
        if size == 0 {
            return;
        }
        let budget = (size >> sc.priority).max(size.min(SWAP_CLUSTER_MAX));
        let mut scanned = 0;
        let mut reclaimed = 0;
        while scanned < budget && sc.nr_reclaimed + reclaimed < sc.nr_to_reclaim && self.failure.is_none() {
            let want = (budget - scanned).min(SWAP_CLUSTER_MAX) as usize;
            let mut cands = self.request(mm, memcg, want);
            if cands.is_empty() || self.failure.is_some() {
                self.candidates = cands;
                break;
            }
            // Validate and isolate (isolate_lru_folios() on the policy's choice).
            let mut taken = std::mem::take(&mut self.taken);
            taken.clear();
            let mut invalid = cands.len().saturating_sub(want) as u64;
            let (mut file_taken, mut anon_taken) = (0u64, 0u64);
            for &id in cands.iter().take(want) {
                let ok = candidate(mm, memcg, id).is_some_and(|f| f.flags & (pg::LRU | pg::ISOLATED | pg::UNEVICTABLE) == pg::LRU);
                if !ok {
                    invalid += 1;
                    continue;
                }
                let lru = Self::lru_of(mm, id);
                let f = mm.folios.get_mut(id);
                f.flags = (f.flags & !pg::LRU) | pg::ISOLATED;
                mm.update_lru_size(memcg, lru, -1);
                if lru == Lru::InactiveFile {
                    file_taken += 1;
                } else {
                    anon_taken += 1;
                }
                taken.push(id);
            }
            if cands.capacity() > 4 * SWAP_CLUSTER_MAX as usize {
                // A policy returned far more than asked: do not keep that much memory.
                cands = Vec::new();
            }
            self.candidates = cands;
            let slot = self.slots[memcg as usize].as_mut().expect("a seam memcg");
            slot.stats.invalid += invalid;
            scanned += want as u64;
            let nr_taken = taken.len() as u64;
            let rules = BatchRules::reclaim_pages([anon_taken, file_taken], mm.cfg.kernel);
            let freed = reclaim_batch(mm, self, memcg, sc, &mut taken, rules, &mut SeamEpilogue { memcg, putback: Putback::Seam });
            self.taken = taken;
            if nr_taken == 0 {
                // Only bad candidates: the batch loop ends, as the contract says (a policy
                // returning garbage costs one request per priority, not one per batch).
                break;
            }
            reclaimed += freed;
        }
        sc.nr_reclaimed += reclaimed;
        self.release_parked(mm, memcg);
    }
}

impl Ext {
    /// Models cache_ext's mm/vmscan.c: shrink_lruvec() (its 6.6.8 patch, linux-cache-ext
    /// 7442a92) for a memcg whose policy evicts over the classic LRU
    /// (`machine.seam_fallback`): get_scan_count()'s targets as the classic LRU's; the
    /// policy's candidates first, for the inactive file list's target
    /// (page_cache_ext_isolate_and_reclaim(), [`Ext::evict_candidates`], in the requests
    /// [`CacheExtCall`] sets), counted in `sc.nr_reclaimed` and `sc.nr_scanned`; more than
    /// 80% of the target freed ends the call, else the classic loop runs on the rest of the
    /// targets over the kernel's lists, which cache_ext keeps under the policy. The patch's
    /// loop starts from the policy's count and adds it to `sc.nr_reclaimed` again at its end
    /// (modelled as written).
    fn shrink_cache_ext_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) {
        let call = CacheExtCall::new(mm, memcg, sc);
        let (mut nr, targets) = (call.targets, call.targets);
        let want = nr[Lru::InactiveFile as usize];
        let freed = self.evict_candidates(mm, memcg, sc, call.requests, call.ask);
        nr[Lru::InactiveFile as usize] -= freed.min(want);
        sc.nr_reclaimed += freed;
        sc.nr_scanned += freed;
        if want == 0 || freed * 100 / want > 80 {
            return;
        }
        self.slots[memcg as usize].as_mut().expect("a seam memcg").stats.fallbacks += 1;
        let classic = self.classic.as_mut().expect("a seam_fallback memcg keeps the classic LRU");
        classic.shrink_lruvec_from(mm, memcg, sc, nr, targets, freed);
    }

    /// Models cache_ext's mm/vmscan.c: __page_cache_ext_isolate_and_reclaim() (linux-cache-ext
    /// 7442a92): `requests` requests of `ask` candidates; each candidate must be a page-cache
    /// folio of the memcg on its LRU (the valid-folios set and page_cache_ext_isolate_folio());
    /// the taken ones are reclaimed as reclaim_pages() reclaims a list and the survivors put
    /// back on the classic LRU (folio_putback_lru()). A request that yields no folio to take
    /// ends the loop (cache_ext asks again, and frees nothing). Returns the pages freed.
    fn evict_candidates(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl, requests: u64, ask: usize) -> u64 {
        let mut freed = 0;
        for _ in 0..requests {
            if self.failure.is_some() {
                break;
            }
            let cands = self.request(mm, memcg, ask);
            let mut taken = std::mem::take(&mut self.taken);
            taken.clear();
            let mut invalid = cands.len().saturating_sub(ask) as u64;
            let classic = self.classic.as_mut().expect("a seam_fallback memcg keeps the classic LRU");
            for &id in cands.iter().take(ask) {
                let ok = candidate(mm, memcg, id).is_some_and(|f| !f.test(pg::SWAPBACKED));
                if ok && classic.isolate_folio(mm, id) {
                    taken.push(id);
                } else {
                    invalid += 1;
                }
            }
            self.candidates = cands;
            self.slots[memcg as usize].as_mut().expect("a seam memcg").stats.invalid += invalid;
            if taken.is_empty() || self.failure.is_some() {
                self.taken = taken;
                break;
            }
            let rules = BatchRules::reclaim_pages([0, taken.len() as u64], mm.cfg.kernel);
            freed += reclaim_batch(mm, self, memcg, sc, &mut taken, rules, &mut SeamEpilogue { memcg, putback: Putback::Classic });
            self.taken = taken;
        }
        self.release_parked(mm, memcg);
        self.charge_hooks(mm);
        freed
    }
}

/// The folio a policy's candidate `id` names, if it is one of `memcg`'s (a policy may return
/// any id: an id past the frames names none).
fn candidate(mm: &Mm, memcg: MemcgId, id: FolioId) -> Option<&crate::mm::folio::Folio> {
    mm.folios.f.get(id as usize).filter(|f| f.memcg == memcg)
}

/// One cache_ext shrink_lruvec() call's work (`machine.seam_fallback`): the classic targets
/// and the policy's requests for the inactive file target.
struct CacheExtCall {
    /// get_scan_count()'s targets, as the call spends them.
    targets: [u64; 4],
    /// How many `evict_folios` requests the call makes.
    requests: u64,
    /// Candidates asked for in each request.
    ask: usize,
}

impl CacheExtCall {
    /// Models the loop bounds of linux-cache-ext 7442a92's __page_cache_ext_isolate_and_reclaim():
    /// a target of `want` pages is asked for in requests of min(`want`, SWAP_CLUSTER_MAX)
    /// until it is spent in steps of SWAP_CLUSTER_MAX: ceil(`want` / 32) requests.
    ///
    /// Not a kernel rule, on a miniature machine (mm/miniature.rs): the request size is a
    /// constant of the kernel, not a share of the lists. The full machine's call makes
    /// ceil(`want` / 32) requests of 32 for a target `want` of its lists; a miniature machine
    /// R times smaller that scaled `want` to `want` × R would ask for a few candidates at a
    /// time, one request per call, and cache_ext's sampling policies choose differently in
    /// small requests (docs/journal/2026-11-30-cache-ext-requests.md: sampling LFU's runs of
    /// 20 then meet clumps of hot folios). So it makes the full machine's requests scaled by R
    /// ([`Miniature::scale`](crate::mm::miniature::Miniature::scale): rounded at random, the
    /// mean exact), of the full machine's size, and scales every target by the same ratio
    /// (requests made / the full machine's), so that the call's work is R of the full
    /// machine's in expectation and its targets match its requests.
    fn new(mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) -> CacheExtCall {
        let (full, _) = Classic::get_scan_count_full(mm, memcg, sc);
        let want = full[Lru::InactiveFile as usize];
        let (full_requests, ask) = (want.div_ceil(SWAP_CLUSTER_MAX), want.min(SWAP_CLUSTER_MAX) as usize);
        let Some(m) = mm.miniature.as_mut() else {
            return CacheExtCall { targets: full, requests: full_requests, ask };
        };
        let requests = m.scale(full_requests);
        let targets = full.map(|t| if full_requests == 0 { 0 } else { (t as u128 * requests as u128 / full_requests as u128) as u64 });
        CacheExtCall { targets, requests, ask }
    }
}

/// Where a batch's survivors go back: the seam's own accounting, or the classic LRU's lists
/// (`machine.seam_fallback`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Putback {
    Seam,
    Classic,
}

/// The seam's part of a [`reclaim_batch`] in cache_ext's mm/vmscan.c: shrink_lruvec()
/// (cache_ext's 6.6.8 patch, counted as 6.1/6.12's shrink_inactive_list() counts): the
/// policy's view of what it handed over, `folio_removed(Evicted)` for the freed, the seam's
/// putback of the kept.
struct SeamEpilogue {
    memcg: MemcgId,
    putback: Putback,
}

impl Epilogue<Ext> for SeamEpilogue {
    /// Records the candidates as the policy saw them: the freed ones are gone after
    /// shrink_folio_list().
    fn before_shrink(&mut self, mm: &mut Mm, p: &mut Ext, list: &[Pfn]) {
        let mut infos = std::mem::take(&mut p.infos);
        infos.clear();
        infos.extend(list.iter().map(|&pfn| p.folio_info(mm, pfn)));
        p.infos = infos;
    }

    /// `folio_removed(Evicted)` for every freed candidate, the seam's counts, then the
    /// survivors back on the LRU ([`Ext::putback`]), held from the policy until the call ends.
    fn putback(&mut self, mm: &mut Mm, p: &mut Ext, list: &mut Vec<Pfn>) {
        let memcg = self.memcg;
        let infos = std::mem::take(&mut p.infos);
        // The survivors are a subsequence of the candidates, in order.
        let mut k = 0;
        let mut freed = 0;
        for info in &infos {
            if list.get(k) == Some(&info.id) {
                k += 1;
                continue;
            }
            freed += 1;
            p.with_policy(memcg, |pol| pol.folio_removed(info, Removal::Evicted));
        }
        p.infos = infos;
        let slot = p.slots[memcg as usize].as_mut().expect("a seam memcg");
        slot.stats.evicted += freed;
        slot.stats.kept += list.len() as u64;
        slot.stats.kept_locked += list.iter().filter(|&&pfn| mm.folios.test(pfn, pg::LOCKED)).count() as u64;
        match self.putback {
            Putback::Seam => p.putback(mm, memcg, list),
            Putback::Classic => {
                let classic = p.classic.as_mut().expect("a seam_fallback memcg keeps the classic LRU");
                for &pfn in list.iter() {
                    classic.putback_folio(mm, pfn);
                }
                p.parked.extend_from_slice(list);
            }
        }
        list.clear();
    }

    /// Nothing: a seam memcg records no lru_note_cost(), as before issue 41 (its batches'
    /// size is the policy's, not get_scan_count()'s anon/file balance, which the cost feeds).
    fn note_cost(&mut self, _: &mut Mm, _: u64, _: &ReclaimStat) {}
}

impl Policy for Ext {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Models the call of cache_ext's `admit_folio` at a page-cache insertion (the
    /// upstream proposal's include/linux/cache_ext.h; the drop is 7.3's PG_dropbehind, see
    /// [`crate::mm::filemap::filemap_end_dropbehind_read`]): on a seam memcg the inserting
    /// task is recorded for [`Folio::task`] and, for a read, the policy decides.
    fn admit_folio(&mut self, mm: &mut Mm, pfn: Pfn, read: bool) -> bool {
        let memcg = mm.folios.get(pfn).memcg;
        if self.slots[memcg as usize].is_none() {
            return true;
        }
        let task = mm.current_task().map_or(NO_TASK, |t| t as u32);
        *per_pfn(&mut self.inserter, pfn, NO_TASK) = task;
        if !read {
            return true;
        }
        let info = self.folio_info(mm, pfn);
        let mut admit = true;
        self.with_policy(memcg, |p| admit = p.admit_folio(&info));
        if !admit {
            self.slots[memcg as usize].as_mut().expect("a seam memcg").stats.not_admitted += 1;
        }
        self.charge_hooks(mm);
        admit
    }

    /// A folio joins its memcg's LRU (mm/swap.c: lru_add_fn(), 6.1/6.12): on a seam memcg,
    /// accounted on the inactive list of its type and told to the policy.
    fn lru_add(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folio_memcg(pfn);
        self.per_memcg(mm, memcg, pfn, Classic::lru_add, |ext, mm, pfn| {
            mm.folios.clear(pfn, pg::ACTIVE);
            mm.update_lru_size(memcg, Self::lru_of(mm, pfn), 1);
            let info = ext.folio_info(mm, pfn);
            set_bit(&mut ext.refault, pfn, false);
            set_bit(&mut ext.workingset, pfn, false);
            ext.with_policy(memcg, |p| p.folio_added(&info));
            ext.tell_early(&info);
        });
        self.tell_deferred(mm, pfn, Told::Added);
    }

    fn lru_del(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folio_memcg(pfn);
        self.per_memcg(mm, memcg, pfn, Classic::lru_del, |ext, mm, pfn| {
            mm.update_lru_size(memcg, Self::lru_of(mm, pfn), -1);
            mm.folios.clear(pfn, pg::LRU);
            let info = ext.folio_info(mm, pfn);
            ext.with_policy(memcg, |p| p.folio_removed(&info, Removal::Freed));
        });
        self.tell_deferred(mm, pfn, Told::Removed(Removal::Freed));
    }

    /// folio_mark_accessed() on a folio on a seam LRU: the policy hears of it; the page flags
    /// are left alone (the policy keeps its own recency).
    fn mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folios.get(pfn).memcg;
        self.per_memcg(mm, memcg, pfn, Classic::mark_accessed, |ext, mm, pfn| ext.accessed(mm, pfn, Access::Read));
        self.tell_deferred(mm, pfn, Told::Accessed(Access::Read));
    }

    /// A buffered write to a cached folio: the policy hears of it (the classic LRU takes no
    /// note).
    fn mark_written(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folios.get(pfn).memcg;
        self.per_memcg(mm, memcg, pfn, Classic::mark_written, |ext, mm, pfn| ext.accessed(mm, pfn, Access::Write));
        self.tell_deferred(mm, pfn, Told::Accessed(Access::Write));
    }

    /// A batched activation (mm/swap.c: folio_activate_fn()). On a seam memcg it is 5.7's
    /// activate_page() of a swapped-in page, told as an access. On a memcg that keeps the
    /// classic LRU it is the drain of an activation queued by folio_mark_accessed(), whose
    /// access the policy heard there (cache_ext's folio_accessed hook runs in
    /// folio_mark_accessed() only, linux-cache-ext 7442a92 mm/swap.c): not told again.
    fn activate(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folios.get(pfn).memcg;
        self.per_memcg(mm, memcg, pfn, Classic::activate, |ext, mm, pfn| ext.accessed(mm, pfn, Access::Read));
    }

    /// Writeback of a candidate ended: on a seam memcg the folio stays where the policy put
    /// it back.
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        let memcg = mm.folio_memcg(pfn);
        self.per_memcg(mm, memcg, pfn, Classic::rotate_reclaimable, |_, _, _| {})
    }

    /// The classic shadow entry (mm/workingset.c: workingset_eviction(), 6.1/6.12).
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn, target: MemcgId) -> Shadow {
        classic_eviction(mm, pfn, target)
    }

    /// The classic refault test (mm/workingset.c: workingset_refault(), 6.1/6.12); the
    /// memcg's policy hears of it in folio_added(): a seam policy of any folio, a policy over
    /// the classic LRU of a page-cache folio (the only ones it is told of).
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        let ws = classic_refault(mm, pfn, shadow);
        // The classic LRU's own workingset_refault() would repeat classic_refault().
        if self.seam(mm.folio_memcg(pfn)) || self.told_deferred(mm, pfn) {
            set_bit(&mut self.refault, pfn, true);
            set_bit(&mut self.workingset, pfn, ws);
        }
    }

    /// The per-CPU batches are drained through the seam first (they may hold seam folios,
    /// which join their LRU through it), then the memcg's own LRU reclaims.
    fn shrink_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) {
        lru_add_drain(mm, self);
        if self.evicts_first(memcg) {
            self.shrink_cache_ext_lruvec(mm, memcg, sc);
        } else {
            self.per_memcg(mm, memcg, sc, |c, mm, sc| c.shrink_lruvec(mm, memcg, sc), |ext, mm, sc| ext.shrink_seam_lruvec(mm, memcg, sc));
        }
        if self.defers(memcg) {
            self.tell_evicted(mm);
        }
    }

    /// Models mm/vmscan.c: shrink_node(): the classic preparation when classic memcgs
    /// remain, then the walk over the target's memcgs, each by its own policy.
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if self.classic.is_some() {
            Classic::prepare_scan_count(mm, sc);
        }
        shrink_node_memcgs(mm, self, sc);
    }

    fn kswapd_age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if self.classic.is_some() {
            lru_add_drain(mm, self);
            self.classic.as_mut().expect("classic memcgs").kswapd_age_node(mm, sc);
        }
    }

    fn snapshot_refaults(&mut self, mm: &mut Mm, target: MemcgId, nid: usize) {
        if let Some(c) = self.classic.as_mut() {
            c.snapshot_refaults(mm, target, nid);
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

impl Inspect for Ext {
    /// One warning per seam cgroup whose policy proposed more candidates the kernel could
    /// not take (kept or invalid) than it evicted, at least a batch's worth, with the counts.
    fn warnings(&self, mm: &Mm) -> Vec<String> {
        let mut out = Vec::new();
        for (i, s) in self.slots.iter().enumerate() {
            let Some(s) = s else { continue };
            let c = &s.stats;
            let wasted = c.kept + c.invalid;
            if wasted > c.evicted && wasted >= SWAP_CLUSTER_MAX {
                out.push(format!(
                    "the eviction policy of cgroup {}: {} of its {} candidates could not be evicted ({} kept by the kernel, {} of them under read IO; {} invalid or more than asked for) against {} evicted, in {} requests",
                    mm.memcgs.get(i as MemcgId).path,
                    wasted,
                    c.candidates,
                    c.kept,
                    c.kept_locked,
                    c.invalid,
                    c.evicted,
                    c.requests
                ));
            }
        }
        out
    }

    fn state_bytes(&self) -> u64 {
        self.slots.iter().flatten().map(|s| s.policy.state_bytes()).sum::<u64>()
            + self.classic.as_ref().map_or(0, |c| c.state_bytes())
            + (self.refault.capacity() + self.workingset.capacity()) as u64 * 8
            + self.inserter.capacity() as u64 * 4
            + self.early.capacity() as u64 * 2
    }

    /// Per seam cgroup: the seam's counts and the policy's own state
    /// (`EvictionPolicy::state()`); the classic lists' state beside them when some cgroups
    /// keep the kernel's LRU.
    fn state(&self, mm: &Mm) -> Option<serde_json::Value> {
        let mut m = serde_json::Map::new();
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(s) = s {
                let mut entry = serde_json::json!({ "counts": s.stats });
                if let Some(own) = s.policy.state() {
                    entry["state"] = own;
                }
                m.insert(mm.memcgs.get(i as MemcgId).path.clone(), entry);
            }
        }
        let mut out = serde_json::json!({ "seam": m });
        if let Some(classic) = self.classic.as_ref().and_then(|c| c.state(mm)) {
            out["classic"] = classic;
        }
        Some(out)
    }

    /// Every folio with PG_lru of a seam memcg is on its inactive list's count; the classic
    /// memcgs are checked by the classic LRU.
    fn check(&self, mm: &Mm) -> Result<(), String> {
        if let Some(c) = &self.classic {
            c.check(mm)?;
        }
        let n = mm.memcgs.cg.len();
        let mut count = vec![[0u64; 2]; n];
        for f in &mm.folios.f {
            if f.flags & pg::LRU != 0 && self.seam(f.memcg) {
                count[f.memcg as usize][f.is_file_lru() as usize] += 1;
            }
        }
        for (m, c) in count.iter().enumerate() {
            if !self.seam(m as MemcgId) {
                continue;
            }
            let lv = &mm.memcgs.get(m as MemcgId).lruvec;
            let sizes = [lv.lru_size[Lru::InactiveAnon as usize], lv.lru_size[Lru::InactiveFile as usize]];
            if *c != sizes {
                return Err(format!("seam memcg {m}: {c:?} folios on the LRU (anon, file), lru sizes say {sizes:?}"));
            }
            if lv.lru_size[Lru::ActiveAnon as usize] + lv.lru_size[Lru::ActiveFile as usize] != 0 {
                return Err(format!("seam memcg {m}: active lists are not empty"));
            }
        }
        Ok(())
    }
}
