//! The OOM killer (mm/oom_kill.c): when reclaim cannot make progress, kill the task with the
//! most memory and free what it held.

use crate::mm::folio::pg;
use crate::mm::hooks::Policy;
use crate::mm::mapping::Entry;
use crate::mm::memcontrol::{FedStat, MemcgId};
use crate::mm::vmstat::Ev;
use crate::mm::{Mm, OomKill};

/// Models mm/oom_kill.c: out_of_memory(): pick the task with the highest badness (resident
/// anon pages plus swap entries; pagelab keeps no page tables) among those in `memcg` (a memcg
/// OOM) or all tasks (a system OOM), and kill it. Returns whether a task was killed.
pub fn out_of_memory<P: Policy>(mm: &mut Mm, p: &mut P, memcg: Option<MemcgId>) -> bool {
    let candidates = (0..mm.tasks.len()).filter(|&t| {
        let task = &mm.tasks[t];
        !task.killed && memcg.is_none_or(|m| mm.memcgs.is_descendant(task.memcg, m))
    });
    // oom_badness(): ties go to the first task found, as the kernel's scan keeps the first.
    let victim = candidates.max_by_key(|&t| (mm.tasks[t].rss_anon + mm.tasks[t].swapents, std::cmp::Reverse(t)));
    let Some(victim) = victim else { return false };
    if mm.tasks[victim].rss_anon + mm.tasks[victim].swapents == 0 {
        return false;
    }
    if let Some(m) = memcg {
        mm.memcgs.get_mut(m).memory_events.oom += 1;
        mm.memcgs.get_mut(m).memory_events.oom_kill += 1;
    }
    let task_memcg = mm.tasks[victim].memcg;
    mm.count_both(task_memcg, Ev::OomKill, 1);
    // The kill takes the whole process, as __oom_kill_process() (6.1, 6.12) kills every task
    // that shares the victim's mm: its other threads (tasks that share an application
    // cache's region) die with it, and the process's memory is freed with its owner's.
    let process = mm.tasks[victim].process;
    let mut freed = 0;
    for u in 0..mm.tasks.len() {
        if u != victim && mm.tasks[u].process == process && !mm.tasks[u].killed {
            freed += kill_task(mm, p, u);
        }
    }
    freed += kill_task(mm, p, victim);
    let constraint = memcg.map_or("/".to_string(), |m| mm.memcgs.get(m).path.clone());
    let time_s = mm.now() as f64 / 1e9;
    mm.oom_kills.push(OomKill { time_s, task: mm.tasks[victim].name.clone(), constraint, freed_pages: freed });
    true
}

/// Models mm/memory.c: zap_pte_range() (6.1.192, 6.12.95) over the task's shared file
/// mappings: a page whose PTE is young is marked accessed (6.1 unless the mapping is
/// VM_SEQ_READ; 6.12 unless it has no recency, sequential or random:
/// [`crate::kernel::Kernel::rmap_skips_vmas_without_recency`]), then leaves the page table
/// (page_remove_rmap(): NR_FILE_MAPPED). pagelab keeps one mapped bit a page, not a mapcount,
/// so a file that another task still maps is left as it is: its pages stay mapped and young,
/// exact for the pages the other task maps, not for those only this one did.
fn zap_file_mappings<P: Policy>(mm: &mut Mm, p: &mut P, t: usize) {
    let skip_without_recency = mm.cfg.kernel.rmap_skips_vmas_without_recency();
    for obj in std::mem::take(&mut mm.tasks[t].mapped_files) {
        if mm.tasks.iter().any(|other| other.mapped_files.contains(&obj)) {
            continue;
        }
        let (base, pages) = (mm.space.objects[obj].base, mm.space.objects[obj].pages);
        let (mut next, end) = (base as u64, base as u64 + pages as u64);
        while let Some(vpn) = mm.space.next_touched(next, end) {
            next = vpn as u64 + 1;
            let Some(pfn) = mm.space.resident(vpn) else { continue };
            let flags = mm.folios.get(pfn).flags;
            if flags & pg::MAPPED == 0 {
                continue;
            }
            let no_recency = if skip_without_recency { pg::NORECENCY } else { pg::SEQ_READ };
            if flags & pg::YOUNG != 0 && flags & no_recency == 0 {
                crate::mm::swap::folio_mark_accessed(mm, p, pfn);
            }
            let f = mm.folios.get_mut(pfn);
            f.flags &= !(pg::MAPPED | pg::YOUNG);
            let (memcg, nr) = (f.memcg, f.nr_pages());
            mm.nr_mapped -= nr;
            mm.memcgs.stat_updated(memcg, FedStat::Mapped, nr);
        }
    }
}

/// Models a task's end by SIGKILL (kernel/exit.c: do_exit() → exit_mm() → mmput() →
/// exit_mmap(); 6.1, 6.12), whoever sends it: the OOM killer, or a userspace killer such as
/// systemd-oomd, which signals every process of a cgroup as cgroup.kill does
/// (kernel/cgroup/cgroup.c: cgroup_kill()). Returns the resident pages freed.
pub fn kill_task<P: Policy>(mm: &mut Mm, p: &mut P, t: usize) -> u64 {
    mm.tasks[t].killed = true;
    exit_mmap(mm, p, t)
}

/// Models mm/mmap.c: exit_mmap(): the task's shared file mappings are zapped (the pages stay
/// in the page cache) and its private anonymous memory is freed, every resident page and
/// swap slot. Returns the resident pages freed.
pub fn exit_mmap<P: Policy>(mm: &mut Mm, p: &mut P, t: usize) -> u64 {
    crate::mm::swap::lru_add_drain_all(mm, p);
    zap_file_mappings(mm, p, t);
    let mut freed = 0;
    for obj in mm.tasks[t].anon_objects.clone() {
        let (base, pages) = (mm.space.objects[obj].base, mm.space.objects[obj].pages);
        let (mut next, end) = (base as u64, base as u64 + pages as u64);
        // Only the pages ever touched: a region of many TiB costs what it used.
        while let Some(vpn) = mm.space.next_touched(next, end) {
            next = vpn as u64 + 1;
            match mm.space.get(vpn) {
                Entry::Resident(pfn) => {
                    if mm.folios.test(pfn, pg::ISOLATED) {
                        // Reclaim holds it; it will find the page gone.
                        continue;
                    }
                    if mm.folios.test(pfn, pg::LRU) {
                        p.lru_del(mm, pfn);
                    }
                    if mm.folios.test(pfn, pg::SWAPCACHE) {
                        crate::mm::swap_state::folio_free_swap(mm, pfn);
                    }
                    if mm.folios.test(pfn, pg::WRITEBACK) {
                        let memcg = mm.folio_memcg(pfn);
                        mm.account_writeback(memcg, -1);
                    }
                    mm.space.set(vpn, Entry::Empty);
                    crate::mm::page_alloc::free_folio(mm, pfn);
                    freed += 1;
                }
                Entry::Swapped(slot) => {
                    crate::mm::swap_state::free_swap_entry(mm, slot);
                    mm.space.set(vpn, Entry::Empty);
                }
                Entry::Empty => {}
                _ => mm.space.set(vpn, Entry::Empty),
            }
        }
    }
    let task = &mut mm.tasks[t];
    task.rss_anon = 0;
    task.swapents = 0;
    freed
}
