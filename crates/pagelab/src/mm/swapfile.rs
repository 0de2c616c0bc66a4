//! Swap devices (mm/swapfile.c): slot allocation, the swap map and the shadow entries kept
//! in the swap address space for pages swapped out.

use crate::mm::mapping::{Shadow, Vpn};

/// What backs swap (and, for files, the data disk): latencies per IO and per page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    None,
    Disk,
    Ssd,
    Zram,
    Ramdisk,
}

impl DeviceKind {
    pub fn parse(text: &str) -> Result<DeviceKind, String> {
        match text {
            "none" => Ok(DeviceKind::None),
            "disk" | "hdd" => Ok(DeviceKind::Disk),
            "ssd" | "nvme" => Ok(DeviceKind::Ssd),
            "zram" => Ok(DeviceKind::Zram),
            "ramdisk" | "brd" | "pmem" => Ok(DeviceKind::Ramdisk),
            other => Err(format!("`{other}` is not a device (use none, disk, ssd, zram or ramdisk)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::None => "none",
            DeviceKind::Disk => "disk",
            DeviceKind::Ssd => "ssd",
            DeviceKind::Zram => "zram",
            DeviceKind::Ramdisk => "ramdisk",
        }
    }
    /// SWP_SYNCHRONOUS_IO: swap-in bypasses the swap cache and readahead (zram, brd, pmem).
    pub fn synchronous_io(self) -> bool {
        matches!(self, DeviceKind::Zram | DeviceKind::Ramdisk)
    }
    /// Whether the block layer reports the device rotational (selects cluster swap readahead).
    pub fn rotational(self) -> bool {
        matches!(self, DeviceKind::Disk)
    }
}

const FREE: Vpn = Vpn::MAX;

/// One swap device.
#[derive(Clone, Debug)]
pub struct Swap {
    pub kind: DeviceKind,
    /// Slots on the device (the declared size).
    slots: u64,
    /// Slot -> the anonymous page stored there, for the slots up to the highest ever handed
    /// out: slots are handed out in ascending order, so every slot past the end is free and
    /// the map costs memory for what was swapped, not for the declared size (an 8T device
    /// holds 2^31 slots).
    map: Vec<Vpn>,
    /// Slot -> shadow of the page last evicted from the swap cache at this slot, stored
    /// plus one so that 0 means none (8 bytes a slot).
    shadow: Vec<u64>,
    used: u64,
    /// The allocator's cursor: slots are handed out in ascending order and wrap, like the
    /// kernel's per-CPU cluster allocation on a fresh device.
    cursor: u32,
    /// `si->lock`, taken for the swap slots caches' refills and drains
    /// ([`crate::mm::Mm::swap_slot_lock`]); contended only on a machine of several CPUs.
    pub lock: crate::locking::SpinLock,
    /// Each CPU's swap slots cache as counts: slots left to hand out, slots returned and
    /// not yet freed (grown to the CPUs that swap).
    slots_cache: Vec<(u64, u64)>,
    /// The swap cache's address spaces' locks, one per SWAP_ADDRESS_SPACE_PAGES slots
    /// (`swapper_spaces[]`), grown to the slots used ([`crate::mm::Mm::swap_cache_lock`]).
    cache_locks: Vec<crate::locking::SpinLock>,
}

/// SWAP_SLOTS_CACHE_SIZE (include/linux/swap_slots.h: SWAP_BATCH, 6.1 and 6.12): the slots a
/// CPU's swap slots cache takes or frees at once under `si->lock`.
pub const SWAP_SLOTS_CACHE_SIZE: u64 = 64;

/// SWAP_ADDRESS_SPACE_SHIFT (include/linux/swap.h, 6.1 and 6.12): each swap cache address
/// space covers 2^14 slots.
pub const SWAP_ADDRESS_SPACE_SHIFT: u32 = 14;

impl Swap {
    pub fn new(kind: DeviceKind, pages: u64) -> Swap {
        let pages = if kind == DeviceKind::None { 0 } else { pages.min(u32::MAX as u64 - 1) };
        Swap {
            kind,
            slots: pages,
            map: Vec::new(),
            shadow: Vec::new(),
            used: 0,
            cursor: 0,
            lock: Default::default(),
            slots_cache: Vec::new(),
            cache_locks: Vec::new(),
        }
    }

    /// CPU `cpu`'s swap slots cache hands out (`alloc`) or takes back one slot: true when
    /// that needs the device's lock, for a refill of an empty cache or the free of a full
    /// return batch.
    pub fn slots_cache_batch(&mut self, cpu: u32, alloc: bool) -> bool {
        let c = cpu as usize;
        if self.slots_cache.len() <= c {
            self.slots_cache.resize(c + 1, (0, 0));
        }
        let (left, returned) = &mut self.slots_cache[c];
        if alloc {
            let refill = *left == 0;
            if refill {
                *left = SWAP_SLOTS_CACHE_SIZE;
            }
            *left -= 1;
            refill
        } else {
            *returned += 1;
            let full = *returned == SWAP_SLOTS_CACHE_SIZE;
            if full {
                *returned = 0;
            }
            full
        }
    }

    /// The lock of the swap cache address space holding `slot`.
    pub fn cache_lock(&mut self, slot: u32) -> &mut crate::locking::SpinLock {
        let i = (slot >> SWAP_ADDRESS_SPACE_SHIFT) as usize;
        if self.cache_locks.len() <= i {
            self.cache_locks.resize(i + 1, Default::default());
        }
        &mut self.cache_locks[i]
    }

    /// Every swap cache address space's lock so far.
    pub fn cache_locks(&self) -> &[crate::locking::SpinLock] {
        &self.cache_locks
    }

    /// Extends the map and shadows to cover `slot` (which is past their end, hence free):
    /// doubling, at least 64 Ki slots, never past the device.
    fn cover(&mut self, slot: u32) {
        let want = (slot as u64 + 1).max(self.map.len() as u64 * 2).max(1 << 16).min(self.slots) as usize;
        pagelab_host::hugevec::grow(&mut self.map, want, FREE);
        pagelab_host::hugevec::grow(&mut self.shadow, want, 0);
    }

    /// Bytes of the swap map and its shadows.
    pub fn state_bytes(&self) -> u64 {
        (self.map.capacity() * 4 + self.shadow.capacity() * 8) as u64
    }

    /// Slots the map holds so far (every slot past them is free).
    pub fn covered(&self) -> usize {
        self.map.len()
    }

    pub fn total(&self) -> u64 {
        self.slots
    }
    pub fn used(&self) -> u64 {
        self.used
    }
    /// get_nr_swap_pages().
    pub fn free(&self) -> u64 {
        self.total() - self.used
    }
    /// Models vm_swap_full(): more than half of swap is in use.
    pub fn full(&self) -> bool {
        self.used * 2 > self.total()
    }

    /// Models mm/swapfile.c: get_swap_pages() for one page: the next free slot.
    pub fn alloc(&mut self, vpn: Vpn) -> Option<u32> {
        let n = self.slots as u32;
        if self.used >= n as u64 {
            return None;
        }
        let mut s = self.cursor;
        loop {
            if s >= n {
                s = 0;
            }
            if s as usize >= self.map.len() {
                self.cover(s);
            }
            if self.map[s as usize] == FREE {
                self.map[s as usize] = vpn;
                self.shadow[s as usize] = 0;
                self.used += 1;
                self.cursor = s + 1;
                return Some(s);
            }
            s += 1;
        }
    }

    /// Models swap_free()/put_swap_folio(): the slot and its shadow are gone.
    pub fn free_slot(&mut self, slot: u32) {
        debug_assert_ne!(self.map[slot as usize], FREE, "double free of swap slot {slot}");
        self.map[slot as usize] = FREE;
        self.shadow[slot as usize] = 0;
        self.used -= 1;
    }

    pub fn owner(&self, slot: u32) -> Option<Vpn> {
        let v = *self.map.get(slot as usize)?;
        (v != FREE).then_some(v)
    }

    pub fn set_shadow(&mut self, slot: u32, s: Option<Shadow>) {
        self.shadow[slot as usize] = s.map_or(0, |s| s.raw() + 1);
    }
    pub fn take_shadow(&mut self, slot: u32) -> Option<Shadow> {
        let s = self.shadow(slot);
        self.shadow[slot as usize] = 0;
        s
    }
    pub fn shadow(&self, slot: u32) -> Option<Shadow> {
        match self.shadow.get(slot as usize).copied().unwrap_or(0) {
            0 => None,
            v => Some(Shadow::from_raw(v - 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_handed_out_in_order_and_reused() {
        let mut s = Swap::new(DeviceKind::Disk, 3);
        assert_eq!((s.alloc(10), s.alloc(11), s.alloc(12)), (Some(0), Some(1), Some(2)));
        assert_eq!(s.alloc(13), None);
        assert!(s.full());
        s.free_slot(1);
        assert_eq!(s.alloc(14), Some(1));
        assert_eq!(s.owner(1), Some(14));
        assert_eq!(Swap::new(DeviceKind::None, 100).total(), 0);
    }

    /// Issue 16: an 8T swap device (2^31 slots) reached 16 GB of host memory before a page
    /// was swapped; the map now covers the slots handed out.
    #[test]
    fn a_huge_device_costs_memory_for_the_slots_used_not_its_size() {
        let mut s = Swap::new(DeviceKind::Zram, 1 << 31);
        assert_eq!(s.total(), 1 << 31);
        for v in 0..1000 {
            assert_eq!(s.alloc(v), Some(v));
        }
        assert!(s.state_bytes() <= (1 << 16) * 12, "{} bytes for 1000 slots", s.state_bytes());
        assert_eq!((s.owner(999), s.owner(1000), s.shadow(5_000_000)), (Some(999), None, None));
        assert!(!s.full());
    }
}
