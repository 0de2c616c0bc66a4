//! What the frames of the non-movable pageblocks hold (an experiment's census, since
//! 2026-11-30; opt-in with `PAGELAB_ORACLE_KPAGEFLAGS=1`).
//!
//! `/proc/pagetypeinfo` counts each zone's pageblocks by migratetype but says not which
//! blocks they are, and Debian's kernels have no page_owner. The block's migratetype is in
//! the sparse memory model's per-section bitmap (`mem_section_usage::pageblock_flags`), which
//! the guest reads through `/proc/kcore` at the address `/proc/kallsyms` gives for
//! `mem_section`. Each frame of a block that is not movable is then looked up in
//! `/proc/kpageflags` (Documentation/admin-guide/mm/pagemap.rst). The layout constants are
//! x86-64's with Debian's 6.1 and 6.12 configurations (SPARSEMEM_EXTREME, SPARSEMEM_VMEMMAP,
//! PAGE_EXTENSION, no CMA); another layout is refused, not guessed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `SECTION_SIZE_BITS - PAGE_SHIFT` (x86-64: 27 − 12).
pub const PFN_SECTION_SHIFT: u32 = 15;
/// `PAGE_SIZE / sizeof(struct mem_section)`: four longs with CONFIG_PAGE_EXTENSION.
pub const SECTIONS_PER_ROOT: u64 = 4096 / 32;
/// `pageblock_order` (x86-64: HUGETLB_PAGE_ORDER).
pub const PAGEBLOCK_ORDER: u32 = 9;
/// `NR_PAGEBLOCK_BITS` (6.1, 6.12): three migratetype bits and the compaction skip bit.
pub const PAGEBLOCK_BITS: u64 = 4;
/// Offset of `pageblock_flags` in `struct mem_section_usage`: an rcu_head (two pointers) and
/// the one-long subsection map (64 subsections of 2 MiB in a 128 MiB section).
pub const PAGEBLOCK_FLAGS_OFFSET: u64 = 24;
/// `sizeof(struct page)` (x86-64 with CONFIG_MEMCG: flags, a five-word union, `_mapcount`
/// and `_refcount`, `memcg_data`), the stride of the `vmemmap` array.
pub const STRUCT_PAGE_SIZE: usize = 64;
/// Offset of `_refcount` in `struct page` (after the flags word, the union and `_mapcount`).
pub const REFCOUNT_OFFSET: usize = 52;

/// The name of a pageblock's migratetype (`enum migratetype`, without CONFIG_CMA).
pub fn migratetype_name(mt: u64) -> &'static str {
    match mt {
        0 => "Unmovable",
        1 => "Movable",
        2 => "Reclaimable",
        3 => "HighAtomic",
        4 => "Isolate",
        _ => "Unknown",
    }
}

/// The migratetype of the pageblock holding `pfn`, from its section's `pageblock_flags`
/// bitmap as `get_pfnblock_flags_mask()` reads it: the words of the bitmap, in order.
pub fn block_migratetype(pfn: u64, bitmap: &[u64]) -> Option<u64> {
    let bitidx = ((pfn & ((1 << PFN_SECTION_SHIFT) - 1)) >> PAGEBLOCK_ORDER) * PAGEBLOCK_BITS;
    let word = bitmap.get((bitidx / 64) as usize)?;
    Some((word >> (bitidx % 64)) & 0x7)
}

/// The kpageflags bits the census reads (include/uapi/linux/kernel-page-flags.h).
const KPF: &[(&str, u32)] = &[
    ("lru", 5),
    ("active", 6),
    ("slab", 7),
    ("buddy", 10),
    ("mmap", 11),
    ("anon", 12),
    ("swapcache", 13),
    ("swapbacked", 14),
    ("compound_tail", 16),
    ("nopage", 20),
    ("pgtable", 26),
];

/// The frames of one zone's pageblocks of one non-movable migratetype, by what they hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameCensus {
    pub zone: String,
    pub migratetype: String,
    pub blocks: u64,
    /// Frames counted per flag of [`KPF`]; `lru_anon`, `lru_shmem` (swap-backed, not anon)
    /// and `lru_file` split the LRU pages; `none` is a frame with no flag at all (a kernel
    /// page the flags do not name, or a free page off the buddy lists); `pcp` is the part of
    /// `none` whose `struct page` has a zero `_refcount`: free, yet not on a buddy list
    /// (`stable_page_flags()` marks every page of a free buddy chunk), so on a per-CPU list
    /// (or the tail of a non-compound allocation of order > 0, which is rare).
    pub frames: BTreeMap<String, u64>,
    /// `pcp` per block, keyed by the block's first pfn, for every block counted here: a
    /// block's frames that stay free off the buddy lists all run are not on a per-CPU list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pcp_by_block: BTreeMap<u64, u64>,
}

impl FrameCensus {
    /// Adds one frame's kpageflags word and its `struct page`'s `_refcount`.
    pub fn add(&mut self, flags: u64, refcount: u32) {
        let bit = |b: u32| flags >> b & 1 == 1;
        let mut count = |k: &str| *self.frames.entry(k.to_string()).or_default() += 1;
        count("total");
        if flags == 0 {
            count("none");
            if refcount == 0 {
                count("pcp");
            }
        }
        for (name, b) in KPF {
            if bit(*b) {
                count(name);
            }
        }
        if bit(5) {
            count(match (bit(12), bit(14)) {
                (true, _) => "lru_anon",
                (false, true) => "lru_shmem",
                (false, false) => "lru_file",
            });
        }
    }
}

/// Per zone of `/proc/zoneinfo`: its name, start pfn and spanned pages.
pub fn parse_zone_spans(text: &str) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("Node ") {
            out.push((rest.rsplit("zone").next().unwrap_or("").trim().to_string(), 0, 0));
            continue;
        }
        let (Some(z), mut words) = (out.last_mut(), l.split_whitespace()) else { continue };
        match (words.next(), words.next().and_then(|n| n.parse().ok())) {
            (Some("start_pfn:"), Some(n)) => z.1 = n,
            (Some("spanned"), Some(n)) => z.2 = n,
            _ => {}
        }
    }
    out.retain(|z| z.2 > 0);
    out
}

/// The address `/proc/kallsyms` gives for `name` (zero without privilege: refused).
pub fn kallsyms_address(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        let addr = u64::from_str_radix(w.next()?, 16).ok()?;
        (w.nth(1)? == name && addr != 0).then_some(addr)
    })
}

/// The loadable segments of `/proc/kcore`'s ELF header: (virtual address, file offset, size).
pub fn kcore_segments(head: &[u8]) -> Result<Vec<(u64, u64, u64)>, String> {
    let u16_at = |o: usize| head.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u64_at = |o: usize| head.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    if head.get(..5) != Some(b"\x7fELF\x02") {
        return Err("/proc/kcore: not a 64-bit ELF file".into());
    }
    let short = || "/proc/kcore: program headers past the bytes read".to_string();
    let (phoff, phentsize, phnum) = (u64_at(0x20).ok_or_else(short)? as usize, u16_at(0x36).ok_or_else(short)?, u16_at(0x38).ok_or_else(short)?);
    let mut segs = Vec::new();
    for i in 0..phnum {
        let p = phoff + i * phentsize;
        let kind = head.get(p..p + 4).ok_or_else(short)?;
        if kind == 1u32.to_le_bytes() {
            segs.push((u64_at(p + 16).ok_or_else(short)?, u64_at(p + 8).ok_or_else(short)?, u64_at(p + 32).ok_or_else(short)?));
        }
    }
    Ok(segs)
}

/// `/proc/kcore`, read at kernel virtual addresses.
struct Kcore {
    file: std::fs::File,
    segments: Vec<(u64, u64, u64)>,
}

impl Kcore {
    fn open() -> Result<Kcore, String> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open("/proc/kcore").map_err(|e| format!("/proc/kcore: {e}"))?;
        let mut head = vec![0u8; 64 << 10];
        let n = file.read_at(&mut head, 0).map_err(|e| format!("/proc/kcore: {e}"))?;
        head.truncate(n);
        Ok(Kcore { segments: kcore_segments(&head)?, file })
    }

    fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), String> {
        use std::os::unix::fs::FileExt;
        let (start, off, _) = self
            .segments
            .iter()
            .find(|(start, _, size)| (*start..start + size).contains(&va))
            .ok_or_else(|| format!("/proc/kcore maps no segment at {va:#x}"))?;
        self.file.read_exact_at(buf, off + (va - start)).map_err(|e| format!("/proc/kcore at {va:#x}: {e}"))
    }

    fn u64_at(&self, va: u64) -> Result<u64, String> {
        let mut b = [0u8; 8];
        self.read(va, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }
}

/// The words of the `pageblock_flags` bitmap of the memory section that holds `pfn`
/// (`__pfn_to_section()` with SPARSEMEM_EXTREME: a root array of section arrays).
fn section_bitmap(kcore: &Kcore, mem_section: u64, pfn: u64) -> Result<Vec<u64>, String> {
    let nr = pfn >> PFN_SECTION_SHIFT;
    let root = kcore.u64_at(kcore.u64_at(mem_section)? + 8 * (nr / SECTIONS_PER_ROOT))?;
    let usage = kcore.u64_at(root + 32 * (nr % SECTIONS_PER_ROOT) + 8)?;
    let words = ((1u64 << (PFN_SECTION_SHIFT - PAGEBLOCK_ORDER)) * PAGEBLOCK_BITS).div_ceil(64);
    (0..words).map(|w| kcore.u64_at(usage + PAGEBLOCK_FLAGS_OFFSET + 8 * w)).collect()
}

/// The census of every zone's non-movable pageblocks (those whose migratetype is not movable).
pub fn read_census() -> Result<Vec<FrameCensus>, String> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    if !release.starts_with("6.") {
        return Err(format!("kpageflags census: the pageblock bitmap's layout is checked for 6.1 and 6.12 only, not {}", release.trim()));
    }
    let syms = std::fs::read_to_string("/proc/kallsyms").map_err(|e| format!("/proc/kallsyms: {e}"))?;
    let mem_section = kallsyms_address(&syms, "mem_section").ok_or("/proc/kallsyms has no address for mem_section")?;
    let kcore = Kcore::open()?;
    let vmemmap = kcore.u64_at(kallsyms_address(&syms, "vmemmap_base").ok_or("/proc/kallsyms has no address for vmemmap_base")?)?;
    let kpageflags = std::fs::File::open("/proc/kpageflags").map_err(|e| format!("/proc/kpageflags: {e}"))?;
    let zones = parse_zone_spans(&std::fs::read_to_string("/proc/zoneinfo").unwrap_or_default());
    let mut out: Vec<FrameCensus> = Vec::new();
    let mut bitmaps: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (zone, start, spanned) in zones {
        let block = 1u64 << PAGEBLOCK_ORDER;
        for first in (start & !(block - 1)..start + spanned).step_by(block as usize) {
            let bitmap = match bitmaps.entry(first >> PFN_SECTION_SHIFT) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(section_bitmap(&kcore, mem_section, first)?),
            };
            let mt = block_migratetype(first, bitmap).unwrap_or(1);
            if mt == 1 {
                continue;
            }
            let census = entry(&mut out, &zone, migratetype_name(mt));
            census.blocks += 1;
            let (lo, hi) = (first.max(start), (first + block).min(start + spanned));
            let refcounts = read_refcounts(&kcore, vmemmap, lo, hi)?;
            let pcp = census.frames.get("pcp").copied().unwrap_or(0);
            for (flags, refcount) in read_kpageflags(&kpageflags, lo, hi)?.into_iter().zip(refcounts) {
                census.add(flags, refcount);
            }
            census.pcp_by_block.insert(first, census.frames.get("pcp").copied().unwrap_or(0) - pcp);
        }
    }
    Ok(out)
}

/// The census of `zone`'s blocks of migratetype `name`, added to `out` if new.
fn entry<'a>(out: &'a mut Vec<FrameCensus>, zone: &str, name: &str) -> &'a mut FrameCensus {
    match out.iter().position(|c| c.zone == zone && c.migratetype == name) {
        Some(i) => &mut out[i],
        None => {
            out.push(FrameCensus { zone: zone.to_string(), migratetype: name.to_string(), ..Default::default() });
            out.last_mut().expect("just pushed")
        }
    }
}

/// The `_refcount` of the `struct page` of pfns `lo..hi`, read from the `vmemmap` array
/// (SPARSEMEM_VMEMMAP: pfn `n`'s page at `vmemmap_base + n * sizeof(struct page)`).
fn read_refcounts(kcore: &Kcore, vmemmap: u64, lo: u64, hi: u64) -> Result<Vec<u32>, String> {
    let mut buf = vec![0u8; STRUCT_PAGE_SIZE * (hi - lo) as usize];
    kcore.read(vmemmap + STRUCT_PAGE_SIZE as u64 * lo, &mut buf)?;
    Ok(buf.chunks_exact(STRUCT_PAGE_SIZE).map(refcount_of).collect())
}

/// The `_refcount` of one `struct page`'s bytes.
fn refcount_of(page: &[u8]) -> u32 {
    u32::from_le_bytes(page[REFCOUNT_OFFSET..REFCOUNT_OFFSET + 4].try_into().expect("4 bytes"))
}

/// The kpageflags words of pfns `lo..hi`.
fn read_kpageflags(f: &std::fs::File, lo: u64, hi: u64) -> Result<Vec<u64>, String> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 8 * (hi - lo) as usize];
    f.read_exact_at(&mut buf, 8 * lo).map_err(|e| format!("/proc/kpageflags at pfn {lo}: {e}"))?;
    Ok(buf.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pfns_block_migratetype_is_its_four_bits_in_the_sections_bitmap() {
        // Blocks 0..16 of a section in word 0, four bits each; block 17 in word 1.
        let bitmap = [0x2 << 4 | 0x1 | 0x8 << 8, 0x2 << 4];
        assert_eq!(block_migratetype(0, &bitmap), Some(1));
        assert_eq!(block_migratetype(512, &bitmap), Some(2));
        // The skip bit (bit 3) is not part of the migratetype.
        assert_eq!(block_migratetype(1024, &bitmap), Some(0));
        assert_eq!(block_migratetype(17 * 512 + 7, &bitmap), Some(2));
        // The section's offset only: pfn 32768 is the next section's block 0.
        assert_eq!(block_migratetype(32768, &bitmap), Some(1));
    }

    #[test]
    fn the_census_splits_lru_frames_into_anon_shmem_and_file() {
        let mut c = FrameCensus::default();
        for flags in [1 << 5 | 1 << 12 | 1 << 14 | 1 << 11, 1 << 5 | 1 << 14, 1 << 5 | 1 << 6, 1 << 7, 0, 1 << 10] {
            c.add(flags, 1);
        }
        let n = |k: &str| c.frames.get(k).copied().unwrap_or(0);
        assert_eq!((n("total"), n("lru"), n("lru_anon"), n("lru_shmem"), n("lru_file")), (6, 3, 1, 1, 1));
        assert_eq!((n("active"), n("mmap"), n("slab"), n("buddy"), n("none"), n("pcp")), (1, 1, 1, 1, 1, 0));
    }

    #[test]
    fn a_frame_with_no_flag_and_no_reference_is_free_on_a_per_cpu_list() {
        // free_unref_page() lists a page whose last reference is gone without PG_buddy: no
        // kpageflags bit, `_refcount` 0. A kernel page with no flag holds a reference.
        let mut c = FrameCensus::default();
        c.add(0, 0);
        c.add(0, 1);
        c.add(1 << 10, 0);
        let n = |k: &str| c.frames.get(k).copied().unwrap_or(0);
        assert_eq!((n("none"), n("pcp"), n("buddy")), (2, 1, 1));
        let mut page = [0u8; STRUCT_PAGE_SIZE];
        page[REFCOUNT_OFFSET..REFCOUNT_OFFSET + 4].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(refcount_of(&page), 3);
    }

    #[test]
    fn zoneinfo_gives_each_zones_start_pfn_and_span() {
        let text = "Node 0, zone      DMA\n  pages free     3000\n        spanned  4095\n  start_pfn:           1\nNode 0, zone    DMA32\n        spanned  61408\n  start_pfn:           4096\nNode 0, zone   Normal\n        spanned  0\n";
        assert_eq!(parse_zone_spans(text), vec![("DMA".into(), 1, 4095), ("DMA32".into(), 4096, 61408)]);
    }

    #[test]
    fn kallsyms_and_kcore_headers_are_read() {
        let syms = "ffffffff82000000 T _text\nffffffff83b3c0a0 B mem_section\n";
        assert_eq!(kallsyms_address(syms, "mem_section"), Some(0xffffffff83b3c0a0));
        // Without privilege kallsyms prints zeros.
        assert_eq!(kallsyms_address("0000000000000000 B mem_section\n", "mem_section"), None);
        let mut head = vec![0u8; 64 + 2 * 56];
        head[..5].copy_from_slice(b"\x7fELF\x02");
        head[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        head[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        head[0x38..0x3a].copy_from_slice(&2u16.to_le_bytes());
        let p = 64 + 56;
        head[p..p + 4].copy_from_slice(&1u32.to_le_bytes());
        head[p + 8..p + 16].copy_from_slice(&0x1000u64.to_le_bytes());
        head[p + 16..p + 24].copy_from_slice(&0xffff_8880_0000_0000u64.to_le_bytes());
        head[p + 32..p + 40].copy_from_slice(&(1u64 << 30).to_le_bytes());
        assert_eq!(kcore_segments(&head), Ok(vec![(0xffff_8880_0000_0000, 0x1000, 1 << 30)]));
        assert!(kcore_segments(b"\x7fELF\x01").is_err());
    }
}
