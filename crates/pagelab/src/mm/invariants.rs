//! Checks of the core state that must hold between operations (used by tests).

use crate::mm::folio::{pg, NIL};
use crate::mm::mapping::Entry;
use crate::mm::Mm;

/// Every frame is free or holds the page its address-space slot points at; no page is
/// isolated between operations; memcg usage matches the pages charged; the LRU sizes add up;
/// the dirty and writeback counts match the flags.
pub fn check(mm: &Mm) -> Result<(), String> {
    let frames = mm.folios.frames();
    let mut used = 0u64;
    let mut charged = vec![0u64; mm.memcgs.cg.len()];
    let (mut dirty, mut writeback) = (0u64, 0u64);
    let mut on_lru = 0u64;
    for (pfn, f) in mm.folios.f.iter().enumerate() {
        if f.vpn == NIL {
            continue;
        }
        used += 1;
        charged[f.memcg as usize] += 1;
        if f.test(pg::TAIL) {
            // A large folio's tail frame: its page's slot names the head, which holds its
            // vpn's range.
            let head = mm.folios.get(f.pos);
            if mm.space.get(f.vpn) != Entry::Resident(f.pos) || head.order() == 0 || f.vpn < head.vpn || f.vpn >= head.vpn + head.nr_pages() as u32 {
                return Err(format!("tail pfn {pfn} of vpn {} does not belong to head {}", f.vpn, f.pos));
            }
            continue;
        }
        for k in 1..f.nr_pages() as u32 {
            if mm.space.get(f.vpn + k) != Entry::Resident(pfn as u32) {
                return Err(format!("pfn {pfn} (order {}) holds vpn {} but its slot says {:?}", f.order(), f.vpn + k, mm.space.get(f.vpn + k)));
            }
        }
        match mm.space.get(f.vpn) {
            Entry::Resident(p) if p as usize == pfn => {}
            other => return Err(format!("pfn {pfn} holds vpn {} but the slot says {other:?}", f.vpn)),
        }
        if f.test(pg::ISOLATED) {
            return Err(format!("pfn {pfn} is still isolated between operations"));
        }
        let in_activate_batch = crate::mm::swap::in_activate_batch(mm, pfn as u32);
        if !(f.test(pg::LRU) || f.test(pg::IN_LRU_ADD) || in_activate_batch) {
            return Err(format!("pfn {pfn} is on no LRU list and in no batch"));
        }
        if f.test(pg::LRU) || in_activate_batch {
            on_lru += f.nr_pages();
        }
        if f.test(pg::DIRTY) && !f.test(pg::SWAPBACKED) {
            dirty += f.nr_pages();
        }
        if f.test(pg::WRITEBACK) {
            writeback += f.nr_pages();
        }
        if f.test(pg::SWAPCACHE) && mm.swap.owner(f.swap) != Some(f.vpn) {
            return Err(format!("pfn {pfn}: swap slot {} does not belong to it", f.swap));
        }
    }
    let nonmovable_free: u64 = mm.pageblocks.as_ref().map_or(0, |p| (0..mm.nodes[0].zones.z.len()).map(|z| p.nr_free(z)).sum());
    if let Some(Err(e)) = mm.pageblocks.as_ref().map(|p| p.check()) {
        return Err(e);
    }
    // Other CPUs' per-CPU lists hold their frames off the free lists.
    let parked = crate::mm::page_alloc::parked_frames(mm);
    if used + mm.folios.nr_free() + parked + nonmovable_free + mm.kernel_pages != frames {
        return Err(format!(
            "{used} used + {} free + {parked} on other CPUs' lists + {nonmovable_free} free in non-movable pageblocks + {} kernel != {frames} frames",
            mm.folios.nr_free(),
            mm.kernel_pages
        ));
    }
    for (cpu, lists) in mm.percpu.iter().flat_map(|pc| pc.pcp.iter().enumerate()) {
        for (z, l) in lists.iter().enumerate() {
            if l.pcp.count != l.frames.len() as i64 || l.frames.iter().any(|&pfn| mm.folios.get(pfn).vpn != NIL || mm.folios.zone_of(pfn) != z) {
                return Err(format!("CPU {cpu} zone {z}: its list counts {} pages for {} free frames of the zone", l.pcp.count, l.frames.len()));
            }
        }
    }
    for z in 0..mm.folios.nr_zones() {
        let zone = mm.zone(z);
        if zone.pcp.count < 0 || zone.pcp.count as u64 > mm.folios.nr_free_in(z) {
            return Err(format!("zone {}: {} pages on the per-CPU lists, {} free frames", zone.name, zone.pcp.count, mm.folios.nr_free_in(z)));
        }
    }
    if dirty != mm.nr_dirty || writeback != mm.nr_writeback {
        return Err(format!("dirty {dirty}/{} writeback {writeback}/{}", mm.nr_dirty, mm.nr_writeback));
    }
    let lru_total: u64 = mm.memcgs.cg.iter().map(|c| crate::mm::vmstat::Lru::ALL.iter().map(|&l| c.lru_pages(l)).sum::<u64>()).sum();
    if lru_total != on_lru {
        return Err(format!("LRU sizes add up to {lru_total} but {on_lru} pages are on lists"));
    }
    for c in &mm.memcgs.cg {
        let subtree: u64 = mm.memcgs.subtree(c.id).iter().map(|&m| charged[m as usize]).sum();
        let stock = mm.memcgs.subtree(c.id).iter().map(|&m| mm.memcgs.stock_pages(m)).sum::<u64>();
        if c.usage != subtree + stock {
            return Err(format!("memcg {}: usage {} != {} charged + {} stock", c.path, c.usage, subtree, stock));
        }
    }
    Ok(())
}
