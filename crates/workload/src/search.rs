//! `kind = "search"`: a ripgrep-like search, repeated passes over a tree of files.
//!
//! The tree is `files` files (default 86,572) whose sizes follow `file_sizes` (default
//! `"linux"`: the Linux 6.12.95 source tree as Debian's `linux-source-6.12` package ships it,
//! measured by listing its tarball, `tar -tv` of linux-source-6.12.tar.xz: 86,572 regular
//! files, 1.41 GiB, median 3,853 bytes, mean 17,080, p90 29,144, p99 130,318, max 23.9 MB,
//! 27 empty). Sizes are drawn from that measured quantile table ([`LINUX_6_12_QUANTILES`],
//! log-linear between its points; the drawn tree's mean comes out about 11% above the
//! measured one, from the interpolation across the sparse tail); `file_sizes = "16k"` makes
//! every file that size. Each file is at least one page (the 27 empty files of the real tree
//! are read as one page each). The tree depends only on its name (the phase's `file`, by
//! default the workload's name), its `files` and its `file_sizes`, not on the workload's seed:
//! two workloads that name the same tree search the same files.
//!
//! A pass reads every file once, whole and in order, in blocks of `block_size` (default
//! 64 KiB: ripgrep's read buffer, `DEFAULT_BUFFER_CAPACITY` in grep-searcher's
//! `line_buffer.rs`; ripgrep reads, rather than maps, the files of a directory walk), the
//! last block of a file short. Files come in the same order in every pass (a directory walk
//! sees the same readdir order each time). `passes` (default 10; unlimited when the
//! workload has a `runtime` and no `passes`) are run back to back.
//!
//! Threads (the workload's `jobs`) split the tree as ripgrep's parallel walker does, each
//! taking the next file when it is done with its last: pagelab decides that order up front,
//! from each file's cost (its pages plus one for the open), giving each file to the thread
//! that is least loaded so far (the lowest-numbered on a tie). The assignment is the same in
//! every pass and does not depend on the kernel's timing (the simulator and the in-guest
//! runner must issue the same operations); what it leaves out is a thread that stalls on IO
//! longer than its files' sizes say and so takes fewer files.
//!
//! Left out: directory reads and inode lookups (metadata is not in the page cache's LRU as
//! file data), `.gitignore` filtering, binary-file detection stopping a read early, and the
//! output. Memory: one entry per file of the tree while building it (its size), then each job
//! keeps its own files' objects (a name and a size each, about 40 bytes); no page of a file
//! is allocated before it is read.

use crate::rng::Rng;
use crate::size::{parse_size, PAGE_SIZE};

/// The default `files`: the regular files of Linux 6.12.95's source tree.
pub const LINUX_FILES: u64 = 86_572;

/// At most this many files in a tree (each becomes an object of the model's address space).
pub const MAX_FILES: u64 = 1_000_000;

/// The size quantiles (fraction of files, bytes) of the regular files of Debian's
/// linux-source-6.12 (6.12.95) tarball, counted with `tar -tv`; the 0th is the smallest
/// non-empty file's size class (1 byte).
pub const LINUX_6_12_QUANTILES: [(f64, u64); 33] = [
    (0.0, 1),
    (0.005, 48),
    (0.01, 73),
    (0.02, 123),
    (0.05, 249),
    (0.1, 443),
    (0.15, 686),
    (0.2, 963),
    (0.25, 1281),
    (0.3, 1618),
    (0.35, 2024),
    (0.4, 2512),
    (0.45, 3121),
    (0.5, 3853),
    (0.55, 4776),
    (0.6, 5892),
    (0.65, 7278),
    (0.7, 9087),
    (0.75, 11511),
    (0.8, 14985),
    (0.85, 20137),
    (0.9, 29144),
    (0.925, 36585),
    (0.95, 48645),
    (0.97, 67339),
    (0.98, 85074),
    (0.99, 130318),
    (0.995, 201572),
    (0.998, 491223),
    (0.999, 1199658),
    (0.9995, 3303247),
    (0.9998, 6511378),
    (1.0, 23949786),
];

/// How the files' sizes are drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum FileSizes {
    /// Linux 6.12.95's source tree ([`LINUX_6_12_QUANTILES`]).
    Linux,
    /// Every file this many bytes.
    Fixed(u64),
}

impl FileSizes {
    pub fn parse(text: &str) -> Result<FileSizes, String> {
        match text {
            "linux" | "linux-6.12" => Ok(FileSizes::Linux),
            t => match parse_size(t) {
                Ok(0) => Err("a file of 0 bytes: give at least 1".into()),
                Ok(b) => Ok(FileSizes::Fixed(b)),
                Err(m) => Err(format!("{m} (or \"linux\": the Linux 6.12 source tree's sizes)")),
            },
        }
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        match *self {
            FileSizes::Fixed(b) => b,
            FileSizes::Linux => {
                let u = rng.unit();
                let q = &LINUX_6_12_QUANTILES;
                let i = q.partition_point(|&(f, _)| f < u).clamp(1, q.len() - 1);
                let ((f0, b0), (f1, b1)) = (q[i - 1], q[i]);
                let t = ((u - f0) / (f1 - f0)).clamp(0.0, 1.0);
                ((b0 as f64).ln() + t * ((b1 as f64).ln() - (b0 as f64).ln())).exp().round().max(1.0) as u64
            }
        }
    }
}

/// A validated search phase.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSpec {
    pub files: u64,
    pub sizes: FileSizes,
    /// Passes over the tree (`u64::MAX`: until the workload's runtime ends).
    pub passes: u64,
}

impl SearchSpec {
    /// The pages of each file of the tree named `root`, in walk order.
    pub fn tree_pages(&self, root: &str) -> Vec<u32> {
        let mut rng = Rng::derive(name_hash(root), self.files);
        (0..self.files).map(|_| self.sizes.draw(&mut rng).div_ceil(PAGE_SIZE).clamp(1, u32::MAX as u64 / 2) as u32).collect()
    }

    /// The files (index in walk order, pages) thread `job` of `jobs` reads each pass, in
    /// walk order: each file goes to the thread least loaded so far (pages plus one for the
    /// open; the lowest-numbered thread on a tie).
    pub fn files_of(&self, root: &str, job: u32, jobs: u32) -> Vec<(u64, u32)> {
        let pages = self.tree_pages(root);
        if jobs <= 1 {
            return pages.into_iter().enumerate().map(|(i, p)| (i as u64, p)).collect();
        }
        let mut load = std::collections::BinaryHeap::new();
        for j in 0..jobs {
            load.push(std::cmp::Reverse((0u64, j)));
        }
        let mut mine = Vec::new();
        for (i, p) in pages.into_iter().enumerate() {
            let std::cmp::Reverse((l, j)) = load.pop().expect("one entry per thread");
            if j == job {
                mine.push((i as u64, p));
            }
            load.push(std::cmp::Reverse((l + p as u64 + 1, j)));
        }
        mine
    }

    /// The file name of file `i` of the tree `root`.
    pub fn file_name(root: &str, i: u64) -> String {
        format!("{root}/{i:06}")
    }
}

/// FNV-1a of the tree's name: its sizes depend on the name, not on a workload's seed.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01B3))
}

/// Where a search phase is: which of its files, which page of it, how many passes remain.
#[derive(Clone, Debug)]
pub struct SearchCursor {
    /// (object index of the job, pages) of each file, in walk order.
    pub files: Vec<(u32, u32)>,
    pub block_pages: u64,
    pub file: usize,
    pub page: u64,
}

impl SearchCursor {
    /// Operations (reads) of one pass.
    pub fn ops_per_pass(&self) -> u64 {
        self.files.iter().map(|&(_, p)| (p as u64).div_ceil(self.block_pages)).sum()
    }

    /// The next read: (object, first page, pages). Wraps to the next pass after the last file.
    pub fn next_read(&mut self) -> Option<(u32, u64, u32)> {
        let &(object, pages) = self.files.get(self.file)?;
        let page = self.page;
        let n = (pages as u64 - page).min(self.block_pages);
        self.page += n;
        if self.page >= pages as u64 {
            self.page = 0;
            self.file = if self.file + 1 == self.files.len() { 0 } else { self.file + 1 };
        }
        Some((object, page, n as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linux_tree_has_the_measured_shape() {
        let s = SearchSpec { files: LINUX_FILES, sizes: FileSizes::Linux, passes: 1 };
        let mut bytes: Vec<u64> = {
            let mut rng = Rng::derive(name_hash("t"), s.files);
            (0..s.files).map(|_| s.sizes.draw(&mut rng)).collect()
        };
        bytes.sort_unstable();
        let n = bytes.len();
        let median = bytes[n / 2] as f64;
        let p90 = bytes[n * 9 / 10] as f64;
        let mean = bytes.iter().sum::<u64>() as f64 / n as f64;
        // Measured: median 3,853, p90 29,144, mean 17,080 (the draw's mean is higher: the
        // interpolation across the sparse tail).
        assert!((median / 3853.0 - 1.0).abs() < 0.05, "median {median}");
        assert!((p90 / 29144.0 - 1.0).abs() < 0.05, "p90 {p90}");
        assert!((mean / 17080.0 - 1.0).abs() < 0.25, "mean {mean}");
    }

    #[test]
    fn threads_split_the_tree_into_disjoint_sets_of_about_equal_pages() {
        let s = SearchSpec { files: 5000, sizes: FileSizes::Linux, passes: 1 };
        let parts: Vec<Vec<(u64, u32)>> = (0..4).map(|j| s.files_of("t", j, 4)).collect();
        let mut all: Vec<u64> = parts.iter().flatten().map(|f| f.0).collect();
        all.sort_unstable();
        assert_eq!(all, (0..5000).collect::<Vec<_>>());
        let loads: Vec<u64> = parts.iter().map(|p| p.iter().map(|f| f.1 as u64 + 1).sum()).collect();
        let (lo, hi) = (*loads.iter().min().unwrap(), *loads.iter().max().unwrap());
        let largest = s.tree_pages("t").into_iter().max().unwrap() as u64;
        assert!(hi - lo <= largest + 1, "loads {loads:?}");
    }
}
