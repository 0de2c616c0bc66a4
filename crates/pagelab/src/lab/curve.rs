//! Sizing curves of a trace: the counters of a policy at a list or range of memory sizes,
//! each point a full replay (`exact`) or a miniature simulation (`sample`).
//!
//! Miniature simulation (Waldspurger et al., USENIX ATC '17, after SHARDS): a spatial hash
//! keeps each page of the trace with probability R, every access to a kept page stays, and
//! the sample is replayed in a memory scaled by R. Counts of events come back multiplied by
//! 1/R; ratios are read as they are. Two samples with independent hash seeds run at every
//! size: the point is their mean and its error estimate half their difference (the standard
//! error of a mean of two).
//!
//! What is scaled for the kernel models: the machine's memory and `min_free_kbytes` (from
//! which the watermarks follow, `watermark_scale_factor` being a fraction already), and the
//! trace's file (its pages are the sample's pages). Two rules of the classic LRU that are not
//! scale-free are corrected (`machine.miniature`, mm/miniature.rs): get_scan_count()'s
//! rounded-down `lru_size >> priority`, and the once-a-reclaim-run refault test of
//! prepare_scan_count(). What is not scaled: the kernel's fixed batch sizes
//! (SWAP_CLUSTER_MAX = 32 pages a reclaim batch, the lru_add batch of 15 pages, the memcg
//! charge batch of 64 pages) and MGLRU's minimum generation and aging sizes: in a small scaled
//! memory they weigh more than in the full one. [`SMALL_SCALED_PAGES`] is where docs/curve.md
//! measured that to matter.

use std::path::{Path, PathBuf};

use crate::error::{bail, Context, Error, Result};
use pagelab_trace::{DenseWriter, Format};
use pagelab_workload::PAGE_SIZE;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

use crate::lab::replay::TraceRun;
use crate::lab::tables::{Column, Table};

/// Below this many pages of scaled memory, a sampled kernel-model point carries a warning:
/// the kernel's fixed batches and whole-page watermarks are a noticeable part of memory, and
/// docs/curve.md measured errors approaching 1 point there (up to 0.6 above it).
pub const SMALL_SCALED_PAGES: u64 = 1024;

/// The smallest machine the kernel model runs (scenario.rs refuses less).
const MIN_MACHINE_BYTES: u64 = 1 << 20;

/// The two hash seeds of the sampled runs.
pub const SAMPLE_SEEDS: [u64; 2] = [1, 2];

/// What to draw a curve of.
pub struct Curve<'a> {
    pub path: &'a Path,
    pub format: &'a str,
    pub policy: &'a str,
    pub kernel: &'a str,
    pub set: &'a [String],
    /// `64M..1G:20`, `1%..20%:20` (of the trace's distinct pages), or a list `64M,5%,1G`.
    pub memory: &'a str,
    /// Miniature simulation at this rate (0 < R ≤ 1); `None` replays the whole trace.
    pub sample: Option<f64>,
    /// Counters to report besides `misses` and `miss_ratio` (the kernel models' vmstat names).
    pub counters: &'a [String],
}

/// The counters a kernel-model curve reports by default.
pub const KERNEL_COUNTERS: [&str; 4] = ["workingset_refault_file", "workingset_activate_file", "pgscan_file", "pgsteal_file"];

/// One point of a curve: a size and its counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The machine's memory (bytes).
    pub memory: u64,
    /// The counters, in [`Points::counters`]' order: exact counts, or with a sample the
    /// mean of the two seeds scaled back by 1/R.
    pub values: Vec<f64>,
    /// With a sample, each counter's error estimate (half the two seeds' difference, scaled
    /// back like the value).
    pub errors: Option<Vec<f64>>,
    /// With a sample, the scaled memory the miniature runs had (bytes).
    pub sample_memory: Option<u64>,
    /// With a sample of a kernel model, why this point's miniature runs may be off.
    pub warning: Option<String>,
    /// The replays' reports: the full run's, or with a sample each seed's miniature run's.
    pub reports: Vec<Value>,
}

/// A computed curve: its counters' names and one point a size, in size order.
#[derive(Clone, Debug, PartialEq)]
pub struct Points {
    /// `misses`, `miss_ratio`, then the other counters as asked.
    pub counters: Vec<String>,
    pub points: Vec<Point>,
    /// With a sample: the rate and the pages each seed's sample kept.
    pub sample: Option<(f64, [u64; 2])>,
    /// The `--set` overrides given (the table's `pagelab.set`).
    pub set: Vec<String>,
}

impl Points {
    /// The points as `pagelab curve --json` writes them: an array in size order, each an
    /// object with `memory` (bytes), every counter, and with a sample each counter's
    /// `<name>_error`. Exact counts are integers; sampled ones (scaled means) are numbers.
    pub fn to_json(&self) -> Value {
        let exact = self.sample.is_none();
        let number = |name: &str, x: f64| if exact && is_count(name) { json!(x.round() as u64) } else { json!(x) };
        Value::Array(
            self.points
                .iter()
                .map(|p| {
                    let mut m = Map::new();
                    m.insert("memory".into(), json!(p.memory));
                    for (i, n) in self.counters.iter().enumerate() {
                        m.insert(n.clone(), number(n, p.values[i]));
                        if let Some(e) = &p.errors {
                            m.insert(format!("{n}_error"), json!(e[i]));
                        }
                    }
                    Value::Object(m)
                })
                .collect(),
        )
    }

    /// The table's provenance: the versions from the first point's first report and the
    /// `--set` overrides given (the scenario varies from point to point: each report has it).
    fn provenance(&self) -> Vec<(String, String)> {
        let mut meta = self.points.first().and_then(|p| p.reports.first()).map_or_else(Vec::new, |r| crate::tables::provenance_meta(r, usize::MAX));
        for (k, v) in &mut meta {
            if k == "pagelab.set" {
                *v = Value::from(self.set.clone()).to_string();
            }
        }
        meta
    }

    /// The points as a table: `memory`, the counters in order, then (with a sample) their
    /// `<name>_error` columns in the same order. Exact counts are integer columns.
    pub fn table(&self) -> Table {
        let exact = self.sample.is_none();
        let mut t =
            Table { columns: vec![("memory".into(), Column::Int(self.points.iter().map(|p| Some(p.memory as i64)).collect()))], meta: self.provenance() };
        for (i, n) in self.counters.iter().enumerate() {
            let c = if exact && is_count(n) {
                Column::Int(self.points.iter().map(|p| Some(p.values[i].round() as i64)).collect())
            } else {
                Column::Float(self.points.iter().map(|p| Some(p.values[i])).collect())
            };
            t.columns.push((n.clone(), c));
        }
        if !exact {
            for (i, n) in self.counters.iter().enumerate() {
                let c = Column::Float(self.points.iter().map(|p| p.errors.as_ref().map(|e| e[i])).collect());
                t.columns.push((format!("{n}_error"), c));
            }
        }
        t
    }
}

/// Whether a curve's counter is a count of events (an integer when exact), not a ratio, a
/// rate or a time.
fn is_count(name: &str) -> bool {
    !matches!(name, "miss_ratio" | "throughput_ops_s" | "elapsed_s")
}

/// How far a curve is: `(runs done, runs in all)`, called from the runs' threads as each
/// ends (a point is one run, or with a sample two: one a hash seed).
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Computes the curve: one point a size, in size order.
pub fn run(c: &Curve) -> Result<Points> {
    run_with_progress(c, &|_, _| {})
}

/// [`run`], telling `progress` as each run ends.
pub fn run_with_progress(c: &Curve, progress: Progress) -> Result<Points> {
    let done = std::sync::atomic::AtomicUsize::new(0);
    let kernel_model = crate::policy::registry::kernel_lru(c.policy).is_some();
    let format: Format = match c.format.parse() {
        Ok(f) => f,
        Err(_) => bail!("pagelab curve reads oracleGeneral and dense traces, not `{}`", c.format),
    };
    if let Some(r) = c.sample {
        if !(r > 0.0 && r <= 1.0) {
            bail!("--sample {r}: the sampling rate must be in (0, 1]");
        }
    }
    let tmp = TempDir::new()?;
    let counters: Vec<String> =
        if c.counters.is_empty() && kernel_model { KERNEL_COUNTERS.iter().map(|s| s.to_string()).collect() } else { c.counters.to_vec() };
    let names: Vec<String> = ["misses".to_string(), "miss_ratio".to_string()].into_iter().chain(counters.iter().cloned()).collect();
    let point = |memory: u64| Point { memory, values: Vec::new(), errors: None, sample_memory: None, warning: None, reports: Vec::new() };
    let mut sample = None;
    let points = match c.sample {
        None => {
            // Every point replays the full trace, converted to a dense file once.
            let (full, footprint, _) = dense_copy(c.path, format, &tmp.0)?;
            let sizes = parse_sizes(c.memory, footprint)?;
            let mut points: Vec<Point> = sizes.iter().map(|&m| point(m)).collect();
            let tick = || progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, sizes.len());
            let runs = replay(c, &full, &sizes, kernel_model, &tick)?;
            for (p, v) in points.iter_mut().zip(runs) {
                p.values = counters_of(&v, &counters).into_iter().map(|(_, x)| x).collect();
                p.reports = vec![v];
            }
            points
        }
        Some(rate) => {
            let paths = SAMPLE_SEEDS.map(|seed| tmp.0.join(format!("sample-{seed}.dense")));
            let (kept, accesses, footprint) = match format {
                // An oracleGeneral trace is sampled by object id in one pass, both seeds at
                // once: only the sampled objects are ever given page numbers.
                Format::OracleGeneral => {
                    let (kept, accesses) = sample_oracle(c.path, &paths, rate)?;
                    // Percentages are of the footprint the samples estimate (SHARDS' 1/R):
                    // exact at R = 1, within a fraction of a percent for samples of
                    // thousands of pages.
                    (kept, accesses, ((kept[0] + kept[1]) as f64 / (2.0 * rate)).round() as u64)
                }
                Format::Dense => {
                    let (_, footprint, accesses) = dense_copy(c.path, format, &tmp.0)?;
                    let kept = [write_sample(c.path, &paths[0], rate, SAMPLE_SEEDS[0])?, write_sample(c.path, &paths[1], rate, SAMPLE_SEEDS[1])?];
                    (kept, accesses, footprint)
                }
            };
            let sizes = parse_sizes(c.memory, footprint)?;
            let mut points: Vec<Point> = sizes.iter().map(|&m| point(m)).collect();
            let mut per_seed = Vec::new();
            for (i, seed) in SAMPLE_SEEDS.into_iter().enumerate() {
                let path = &paths[i];
                let kept = kept[i];
                let scaled: Vec<u64> = sizes.iter().map(|&m| scale_size(m, rate)).collect::<Result<_>>()?;
                if let Some((&m, &small)) = sizes.iter().zip(&scaled).find(|(_, &s)| kernel_model && s < MIN_MACHINE_BYTES) {
                    bail!(
                        "--memory {m} bytes at --sample {rate} scales to {} pages, below the kernel model's smallest machine (1M, 256 pages): raise --sample or the size",
                        small / PAGE_SIZE
                    );
                }
                let tick = || progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, SAMPLE_SEEDS.len() * sizes.len());
                let runs = replay(c, path, &scaled, kernel_model, &tick).with_context(|| format!("the sample with hash seed {seed}"))?;
                per_seed.push((kept, runs));
            }
            sample = Some((rate, [per_seed[0].0, per_seed[1].0]));
            for (i, p) in points.iter_mut().enumerate() {
                let scaled = scale_size(sizes[i], rate)?;
                let a: Vec<(String, f64)> = counters_of(&per_seed[0].1[i], &counters);
                let b: Vec<(String, f64)> = counters_of(&per_seed[1].1[i], &counters);
                let mut errors = Vec::new();
                for ((k, x), (_, y)) in a.into_iter().zip(b) {
                    // Counts of events scale back by 1/R. The miss ratio is the scaled misses
                    // over the whole trace's accesses (SHARDS' adjustment): a sample of pages
                    // does not hold R of the accesses when a few pages take most of them.
                    let (x, y) = if k == "miss_ratio" {
                        (x * accesses_in(&per_seed[0].1[i]) / accesses as f64, y * accesses_in(&per_seed[1].1[i]) / accesses as f64)
                    } else {
                        (x, y)
                    };
                    let scale = 1.0 / rate;
                    errors.push((x - y).abs() / 2.0 * scale);
                    p.values.push((x + y) / 2.0 * scale);
                }
                p.errors = Some(errors);
                p.sample_memory = Some(scaled);
                p.reports = vec![per_seed[0].1[i].clone(), per_seed[1].1[i].clone()];
                // At rate 1 nothing is scaled: the sample is the exact run, with no distortion.
                if kernel_model && rate < 1.0 && scaled / PAGE_SIZE < SMALL_SCALED_PAGES {
                    p.warning = Some(format!(
                        "the scaled memory ({} pages) is below {SMALL_SCALED_PAGES} pages, where the kernel's fixed batch sizes and whole-page watermarks distort a miniature simulation; raise --sample",
                        scaled / PAGE_SIZE
                    ));
                }
            }
            points
        }
    };
    Ok(Points { counters: names, points, sample, set: c.set.to_vec() })
}

/// Replays the dense trace at every size (in parallel) and returns one report a size;
/// `tick` is called as each replay ends.
fn replay(c: &Curve, path: &Path, sizes: &[u64], kernel_model: bool, tick: &(dyn Fn() + Sync)) -> Result<Vec<Value>> {
    let one = |m: u64| -> Result<Value> {
        let mut set = c.set.to_vec();
        if let (true, Some(rate)) = (kernel_model, c.sample) {
            // The full-size machine's watermarks, scaled: the kernel's min_free_kbytes grows
            // as the square root of memory (calculate_min_free_kbytes()), so a miniature
            // machine left to compute its own would keep proportionally more memory free.
            if !set.iter().any(|s| s.trim_start().starts_with("machine.min_free_kbytes")) {
                let full = crate::mm::mmzone::calculate_min_free_kbytes(unscaled_pages(m, rate));
                set.push(format!("machine.min_free_kbytes={}", ((full as f64) * rate).round().max(1.0) as u64));
            }
            if !set.iter().any(|s| s.trim_start().starts_with("machine.miniature")) {
                set.push(format!("machine.miniature={rate}"));
            }
        }
        let mem = format!("{}p", m / PAGE_SIZE);
        let o = TraceRun { path, format: "dense", policy: c.policy, memory: &mem, kernel: c.kernel, set: &set };
        let (v, _) = crate::lab::replay::run(&o).with_context(|| format!("--memory {m} bytes"))?;
        tick();
        Ok(v)
    };
    let stop = crate::interrupt::current();
    let runs: Vec<Value> = sizes.par_iter().map(|&m| crate::interrupt::scope(stop.clone(), || one(m))).collect::<Result<_>>()?;
    if let Some(first) = runs.first() {
        let names: Vec<&String> = c.counters.iter().collect();
        for n in names {
            if first["vmstat"].get(n.as_str()).is_none() {
                bail!("`{n}` is not a counter of this run (a kernel model's vmstat names; a plain cache reports misses and miss_ratio)");
            }
        }
    }
    Ok(runs)
}

/// The sampled size a size of the full machine is miniaturised to, whole pages.
fn scale_size(bytes: u64, rate: f64) -> Result<u64> {
    let pages = ((bytes / PAGE_SIZE) as f64 * rate).round() as u64;
    if pages == 0 {
        bail!("--memory {bytes} bytes at --sample {rate} rounds to 0 pages: raise --sample or the size");
    }
    Ok(pages * PAGE_SIZE)
}

/// The full machine's pages a scaled size stands for.
fn unscaled_pages(scaled_bytes: u64, rate: f64) -> u64 {
    ((scaled_bytes / PAGE_SIZE) as f64 / rate).round() as u64
}

/// The named counters of one report: `misses` and `miss_ratio` first, then each counter
/// from the report's vmstat (an unknown name is 0 only if the report has no such key at
/// all, which [`run`]'s caller checks against the first report).
fn counters_of(v: &Value, names: &[String]) -> Vec<(String, f64)> {
    let mut out = vec![("misses".to_string(), v["misses"].as_f64().unwrap_or(0.0)), ("miss_ratio".to_string(), v["miss_ratio"].as_f64().unwrap_or(0.0))];
    for n in names {
        out.push((n.clone(), v["vmstat"][n.as_str()].as_f64().unwrap_or(0.0)));
    }
    out
}

/// The accesses a replay's report counts.
fn accesses_in(v: &Value) -> f64 {
    v["trace"]["records"].as_f64().unwrap_or(0.0)
}

/// The trace as a dense file (converted into `dir` unless it is one), its distinct pages and
/// its accesses.
fn dense_copy(path: &Path, format: Format, dir: &Path) -> Result<(PathBuf, u64, u64)> {
    let dense = match format {
        Format::Dense => path.to_path_buf(),
        Format::OracleGeneral => {
            let out = dir.join("full.dense");
            pagelab_trace::convert(path, &out)?;
            out
        }
    };
    let src = pagelab_trace::open(&dense, Format::Dense, false, false)?;
    let (pages, accesses) = (src.pages().unwrap_or(0), src.len_hint().unwrap_or(0));
    if pages == 0 {
        bail!("{}: the trace has no accesses", path.display());
    }
    Ok((dense, pages, accesses))
}

/// Keeps the accesses to pages whose spatial hash falls below `rate` (pages renumbered
/// densely in order of first access) and writes them as a dense trace; returns the pages
/// kept.
pub fn write_sample(dense: &Path, out: &Path, rate: f64, seed: u64) -> Result<u64> {
    let mut src = pagelab_trace::open(dense, Format::Dense, false, false)?;
    let pages = src.pages().unwrap_or(0) as usize;
    let mut renumber = vec![u32::MAX; pages];
    let mut next = 0u32;
    let mut w = DenseWriter::create(out)?;
    let mut batch = Vec::new();
    while let Some(b) = src.next_batch()? {
        batch.clear();
        for &p in b {
            if !sampled(p as u64, rate, seed) {
                continue;
            }
            let slot = &mut renumber[p as usize];
            if *slot == u32::MAX {
                *slot = next;
                next += 1;
            }
            batch.push(*slot);
        }
        w.write(&batch)?;
    }
    if next == 0 {
        bail!("{}: no page of the trace falls in a {rate} sample (hash seed {seed}): raise --sample", dense.display());
    }
    w.finish(next as u64)?;
    Ok(next as u64)
}

/// The spatial hash, whose key for a trace is an oracleGeneral object id or a dense trace's
/// page index: the same page is always in or out, whatever the trace around it.
pub use crate::sim::sample::sampled;

/// Samples an oracleGeneral trace by object id for both hash seeds in one pass, writing
/// each seed's sample as a dense trace (objects numbered in order of first access) to
/// `outs`; returns the pages each kept and the trace's accesses. The full trace is never
/// given page numbers: only the sampled objects are mapped, so the pass reads at the speed
/// of the file, not of a map of every object.
fn sample_oracle(path: &Path, outs: &[PathBuf; 2], rate: f64) -> Result<([u64; 2], u64)> {
    let mut reader = pagelab_trace::OracleReader::open(path)?;
    let mut maps = [pagelab_trace::IdMap::default(), pagelab_trace::IdMap::default()];
    let mut writers = [DenseWriter::create(&outs[0])?, DenseWriter::create(&outs[1])?];
    let mut batches: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    let mut accesses = 0u64;
    while let Some(raw) = reader.next_batch()? {
        for b in batches.iter_mut() {
            b.clear();
        }
        for r in raw.chunks_exact(pagelab_trace::ORACLE_RECORD) {
            let id = pagelab_trace::obj_id(r.try_into().expect("whole records"));
            for (k, seed) in SAMPLE_SEEDS.into_iter().enumerate() {
                if sampled(id, rate, seed) {
                    batches[k].push(maps[k].get_or_insert(id));
                }
            }
        }
        accesses += (raw.len() / pagelab_trace::ORACLE_RECORD) as u64;
        for (w, b) in writers.iter_mut().zip(&batches) {
            w.write(b)?;
        }
    }
    if accesses == 0 {
        bail!("{}: the trace has no accesses", path.display());
    }
    let mut kept = [0u64; 2];
    for (k, w) in writers.into_iter().enumerate() {
        kept[k] = maps[k].len() as u64;
        if kept[k] == 0 {
            bail!("{}: no page of the trace falls in a {rate} sample (hash seed {}): raise --sample", path.display(), SAMPLE_SEEDS[k]);
        }
        w.finish(kept[k])?;
    }
    Ok((kept, accesses))
}

/// Parses `--memory` for a curve: `A..B:N` (N sizes evenly spaced from A to B), or a
/// comma-separated list; each size in bytes (`64M`, `1G`, `4096p`) or a percentage of the
/// trace's distinct pages (`5%`). Sizes are whole pages, in increasing order.
pub fn parse_sizes(text: &str, footprint_pages: u64) -> Result<Vec<u64>> {
    sizes(text, Some(footprint_pages), "--memory")
}

/// [`parse_sizes`] for the option `flag`; without a footprint (a scenario's `--vary`) a
/// percentage is an error.
/// The most points a curve has (`--memory A..B:N`, `--vary KEY=A..B:N`): each is a run,
/// and N used to be allocated before any ran (`:4294967296` asked for 32 GiB).
pub const MAX_POINTS: usize = 10_000;

fn sizes(text: &str, footprint_pages: Option<u64>, flag: &str) -> Result<Vec<u64>> {
    let one = |s: &str| -> Result<u64> {
        let s = s.trim();
        let bytes = if let Some(p) = s.strip_suffix('%') {
            let Some(footprint) = footprint_pages else {
                bail!("{flag} `{s}`: a percentage is of a trace's distinct pages; give a size (64M, 1G, 4096p)");
            };
            let f: f64 = p.trim().parse().with_context(|| format!("{flag} `{s}`: not a percentage"))?;
            if !(f > 0.0 && f.is_finite()) {
                bail!("{flag} `{s}`: a percentage must be above 0");
            }
            ((footprint as f64 * f / 100.0).round() as u64) * PAGE_SIZE
        } else {
            pagelab_workload::parse_size(s).map_err(|e| Error::Msg(format!("{flag} `{s}`: {e}")))? / PAGE_SIZE * PAGE_SIZE
        };
        if bytes == 0 {
            bail!("{flag} `{s}` is less than one page");
        }
        Ok(bytes)
    };
    let mut sizes = if let Some((range, n)) = text.rsplit_once(':').filter(|(r, _)| r.contains("..")) {
        let (a, b) = range.split_once("..").expect("checked");
        let (a, b) = (one(a)?, one(b)?);
        let n: usize = n.trim().parse().with_context(|| format!("{flag} `{text}`: `{n}` is not a number of points"))?;
        if n < 2 || b <= a {
            bail!("{flag} `{text}`: a range needs an upper end above its lower end and at least 2 points");
        }
        if n > MAX_POINTS {
            bail!("{flag} `{text}`: {n} points are more than a curve's limit of {MAX_POINTS}");
        }
        (0..n).map(|i| (a as u128 + (b - a) as u128 * i as u128 / (n as u128 - 1)) as u64 / PAGE_SIZE * PAGE_SIZE).collect()
    } else {
        let sizes = text.split(',').map(one).collect::<Result<Vec<u64>>>()?;
        if sizes.len() > MAX_POINTS {
            bail!("{flag}: {} sizes are more than a curve's limit of {MAX_POINTS}", sizes.len());
        }
        sizes
    };
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

/// The counters a scenario's curve reports by default: what the sizing question asks (refaults
/// beside the IO that reads pages back, `pswpin` and `pgpgin`, which the two LRUs' refault
/// counts do not measure alike; reclaim; swap-outs), the modeled throughput, and how the run
/// ended: OOM kills and unfinished (OOM-killed) tasks, without which a size whose task died
/// early looks like the cheapest.
pub const SCENARIO_COUNTERS: [&str; 10] = [
    "workingset_refault_file",
    "workingset_refault_anon",
    "pswpin",
    "pgpgin",
    "pgsteal_file",
    "pgsteal_anon",
    "pswpout",
    "throughput_ops_s",
    "oom_kills",
    "unfinished_tasks",
];

/// A scenario's curve: one full run for each size given to one of its size keys.
pub struct ScenarioCurve<'a> {
    pub path: &'a Path,
    pub set: &'a [String],
    /// `KEY=SIZES`: the size key to vary (`cgroup./db.max`, `machine.memory`, a workload's
    /// `file_size`, ...) and its sizes as `--memory` takes them (no percentages).
    pub vary: &'a str,
    /// Counters to report: vmstat names, or the report's `throughput_ops_s`, `elapsed_s`,
    /// `ops`; empty for [`SCENARIO_COUNTERS`].
    pub counters: &'a [String],
    /// Runs at a time (0: one a core).
    pub threads: usize,
    /// Miniature scenarios at this rate (`[sample] rate`, 0 < R ≤ 1); `None` runs each point
    /// in full.
    pub sample: Option<f64>,
}

/// Computes a scenario's curve: the sweep of `vary`'s key over its sizes, in size order;
/// `memory` is the varied size. Every point is a full run (in parallel, each deterministic),
/// or with a sample the mean of two miniature runs (`[sample]`, hash seeds
/// [`SAMPLE_SEEDS`]), scaled back to the full scenario.
pub fn run_scenario(c: &ScenarioCurve) -> Result<Points> {
    run_scenario_with_progress(c, &|_, _| {})
}

/// [`run_scenario`], telling `progress` as each run ends.
pub fn run_scenario_with_progress(c: &ScenarioCurve, progress: Progress) -> Result<Points> {
    let (key, values) = c.vary.split_once('=').ok_or_else(|| Error::Msg(format!("--vary `{}`: use KEY=SIZES, e.g. cgroup./db.max=64M..1G:16", c.vary)))?;
    let key = key.trim();
    let sizes = sizes(values, None, &format!("--vary {key}"))?;
    let text = crate::Scenario::read_text(c.path)?;
    let name = c.path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let mut axes = vec![crate::sweep::Axis { key: key.to_string(), values: sizes.iter().map(u64::to_string).collect() }];
    let mut set = c.set.to_vec();
    if let Some(rate) = c.sample {
        if !(rate > 0.0 && rate <= 1.0) {
            bail!("--sample {rate}: the sampling rate must be in (0, 1]");
        }
        if c.set.iter().any(|s| s.trim_start().starts_with("sample.")) {
            bail!("--sample sets the scenario's [sample] table: leave sample.rate and sample.seed out of --set");
        }
        set.push(format!("sample.rate={rate}"));
        axes.push(crate::sweep::Axis { key: "sample.seed".into(), values: SAMPLE_SEEDS.iter().map(u64::to_string).collect() });
    }
    let (done, total) = (std::sync::atomic::AtomicUsize::new(0), axes.iter().map(|a| a.values.len()).product::<usize>());
    let tick = || progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
    let runs = crate::sweep::run(&text, &c.path.display().to_string(), &name, &set, &axes, c.threads, &tick).map_err(|e| Error::Msg(e.to_string()))?;
    let counters: Vec<String> = if c.counters.is_empty() { SCENARIO_COUNTERS.iter().map(|s| s.to_string()).collect() } else { c.counters.to_vec() };
    let mut reports = Vec::with_capacity(runs.len());
    for (point, report) in runs {
        let report = report.map_err(|e| Error::Msg(format!("{}: {e}", point.label())))?;
        reports.push(serde_json::to_value(&report).expect("a report serializes"));
    }
    let per_point = reports.len() / sizes.len();
    let mut points = Vec::with_capacity(sizes.len());
    for (size, runs) in sizes.iter().zip(reports.chunks(per_point)) {
        let values: Vec<Vec<f64>> = runs.iter().map(|v| scenario_counters(v, &counters)).collect::<Result<_>>()?;
        let mut p = Point { memory: *size, values: values[0].clone(), errors: None, sample_memory: None, warning: None, reports: runs.to_vec() };
        if let Some(rate) = c.sample {
            p.values = values[0].iter().zip(&values[1]).map(|(x, y)| (x + y) / 2.0).collect();
            p.errors = Some(values[0].iter().zip(&values[1]).map(|(x, y)| (x - y).abs() / 2.0).collect());
            // The varied size as the first seed's miniature has it, and the smallest memory
            // it reclaims in: the machine's, or a varied cgroup limit's.
            let scaled = ((size / PAGE_SIZE) as f64 * runs[0]["sample"]["scale"].as_f64().unwrap_or(rate)).round() as u64;
            p.sample_memory = Some(scaled * PAGE_SIZE);
            let managed = runs[0]["zone"]["managed"].as_u64().unwrap_or(0);
            let limit = key.starts_with("cgroup.") && [".max", ".high"].iter().any(|k| key.ends_with(k));
            let smallest = if limit { managed.min(scaled) } else { managed };
            if rate < 1.0 && smallest < SMALL_SCALED_PAGES {
                p.warning = Some(format!(
                    "the miniature reclaims in {smallest} pages, below {SMALL_SCALED_PAGES}, where the kernel's fixed batch sizes and whole-page watermarks distort a miniature simulation; raise --sample"
                ));
            }
        }
        points.push(p);
    }
    Ok(Points { counters, points, sample: c.sample.map(|r| (r, sample_kept(&reports, sizes.len()))), set: c.set.to_vec() })
}

/// The pages each seed's miniature objects kept, at the first size (for the table's header).
fn sample_kept(reports: &[Value], sizes: usize) -> [u64; 2] {
    let kept = |v: &Value| v["sample"]["kept_pages"].as_u64().unwrap_or(0);
    match (reports.first(), reports.get(reports.len() / sizes.max(1) - 1)) {
        (Some(a), Some(b)) if reports.len() >= 2 => [kept(a), kept(b)],
        _ => [0, 0],
    }
}

/// The named counters of a scenario's report. A miniature run's are scaled back to the full
/// scenario: counts of events and pages and the elapsed time by the inverse of the fraction
/// of the pages it kept (about R; its tasks do that fraction of the operations in that
/// fraction of the time), `ops` is the operations the tasks drew (kept and dropped:
/// the full scenario's, exactly), and the throughput is those over the scaled time.
pub(crate) fn scenario_counters(v: &Value, names: &[String]) -> Result<Vec<f64>> {
    let inv = v["sample"]["scale"].as_f64().map_or(1.0, |r| 1.0 / r);
    let ops = v["ops"].as_f64().unwrap_or(0.0) + v["sample"]["dropped_ops"].as_f64().unwrap_or(0.0);
    let elapsed = v["elapsed_s"].as_f64().unwrap_or(0.0) * inv;
    names
        .iter()
        .map(|n| match n.as_str() {
            "ops" => Ok(ops),
            "elapsed_s" => Ok(elapsed),
            "throughput_ops_s" => Ok(if elapsed > 0.0 { ops / elapsed } else { 0.0 }),
            // How the run ended, not scaled: a miniature's task dies as the full one's does.
            "oom_kills" => Ok(crate::tables::outcome(v).0 as f64),
            "unfinished_tasks" => Ok(crate::tables::outcome(v).1 as f64),
            _ => v["vmstat"].get(n).and_then(Value::as_f64).map(|x| x * inv).ok_or_else(|| {
                Error::Msg(format!(
                    "--counters `{n}`: not a counter of the report (a /proc/vmstat name, or throughput_ops_s, elapsed_s, ops, oom_kills, unfinished_tasks)"
                ))
            }),
        })
        .collect()
}

/// A scratch directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let p = std::env::temp_dir().join(format!("pagelab-curve-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_ranges_lists_and_percentages() {
        assert_eq!(parse_sizes("4096p..8192p:3", 0).unwrap(), vec![4096 * 4096, 6144 * 4096, 8192 * 4096]);
        assert_eq!(parse_sizes("10%,5%", 1000).unwrap(), vec![50 * 4096, 100 * 4096]);
        assert!(parse_sizes("1M..1M:3", 0).unwrap_err().to_string().contains("upper end above"));
        assert!(parse_sizes("0.01%", 100).unwrap_err().to_string().contains("less than one page"));
        // Issue 40: `:4294967296` allocated 32 GiB and aborted.
        let e = parse_sizes("1%..20%:4294967296", 1000).unwrap_err().to_string();
        assert!(e.contains("4294967296 points are more than a curve's limit of 10000"), "{e}");
        assert_eq!(parse_sizes("4096p..8192p:10000", 0).unwrap().len(), 4097, "the limit itself is allowed (dedup to pages)");
    }

    #[test]
    fn the_spatial_hash_selects_a_stable_subset_near_the_rate() {
        let a: Vec<u64> = (0..100_000).filter(|&p| sampled(p, 0.1, 1)).collect();
        let b: Vec<u64> = (0..100_000).filter(|&p| sampled(p, 0.1, 1)).collect();
        assert_eq!(a, b);
        assert!((9_500..10_500).contains(&a.len()), "{} of 100000 at rate 0.1", a.len());
        // Another seed selects another subset, and a lower rate a subset of the higher's.
        let c: Vec<u64> = (0..100_000).filter(|&p| sampled(p, 0.1, 2)).collect();
        assert_ne!(a, c);
        assert!((0..100_000).filter(|&p| sampled(p, 0.05, 1)).all(|p| sampled(p, 0.1, 1)));
        assert!((0..1000).all(|p| sampled(p, 1.0, 7)));
    }

    /// A skewed trace of `n` accesses over `pages` pages, as a dense file in `dir`.
    fn skewed_trace(dir: &Path, n: u64, pages: u64) -> PathBuf {
        let path = dir.join("t.dense");
        let mut w = DenseWriter::create(&path).unwrap();
        let mut x = 12345u64;
        let mut seen = vec![u32::MAX; pages as usize];
        let mut next = 0u32;
        let mut batch = Vec::new();
        for _ in 0..n {
            x = pagelab_trace::mix64(x);
            // A page drawn as the square of a uniform fraction: small pages far more often.
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let p = ((u * u) * pages as f64) as usize;
            if seen[p] == u32::MAX {
                seen[p] = next;
                next += 1;
            }
            batch.push(seen[p]);
        }
        w.write(&batch).unwrap();
        w.finish(next as u64).unwrap();
        path
    }

    /// The dense trace at `dense` as an oracleGeneral one: each page an object of a
    /// scattered id.
    fn as_oracle(dense: &Path) -> PathBuf {
        let path = dense.with_extension("oracleGeneral");
        let mut src = pagelab_trace::open(dense, Format::Dense, false, false).unwrap();
        let mut records = Vec::new();
        while let Some(b) = src.next_batch().unwrap() {
            for &p in b {
                let obj_id = (p as u64 + 7).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                records.push(pagelab_trace::Record { time: 0, obj_id, obj_size: 4096, next_access_vtime: -1 });
            }
        }
        pagelab_trace::write_oracle(&path, records, None).unwrap();
        path
    }

    fn curve_of(path: &Path, format: &str, policy: &str, sample: Option<f64>) -> Value {
        let c = Curve { path, format, policy, kernel: "6.1", set: &[], memory: "10%..40%:3", sample, counters: &[] };
        run(&c).unwrap().to_json()
    }

    fn curve(path: &Path, policy: &str, sample: Option<f64>) -> Value {
        curve_of(path, "dense", policy, sample)
    }

    #[test]
    fn a_sampled_curve_at_rate_one_equals_the_exact_curve() {
        let dir = tempfile::tempdir().unwrap();
        let dense = skewed_trace(dir.path(), 20_000, 4_000);
        let oracle = as_oracle(&dense);
        // A dense trace is sampled by page index, an oracleGeneral one by object id.
        for (path, format, policy) in [
            (&dense, "dense", "lru"),
            (&dense, "dense", "s3fifo"),
            (&dense, "dense", "classic"),
            (&dense, "dense", "mglru"),
            (&oracle, "oracleGeneral", "lru"),
            (&oracle, "oracleGeneral", "classic"),
        ] {
            let exact = curve_of(path, format, policy, None);
            let sampled = curve_of(path, format, policy, Some(1.0));
            let c = Curve { path, format, policy, kernel: "6.1", set: &[], memory: "10%..40%:3", sample: Some(1.0), counters: &[] };
            assert!(run(&c).unwrap().points.iter().all(|p| p.warning.is_none()), "{policy}: nothing is scaled at rate 1, so no small-sample warning");
            for (e, s) in exact.as_array().unwrap().iter().zip(sampled.as_array().unwrap()) {
                for (k, v) in e.as_object().unwrap() {
                    if k == "memory" {
                        assert_eq!(v, &s[k.as_str()]);
                        continue;
                    }
                    let (v, w) = (v.as_f64().unwrap(), s[k.as_str()].as_f64().unwrap());
                    assert!((v - w).abs() <= 1e-9 * v.abs().max(1.0), "{policy} {k}: exact {v}, sampled {w}");
                    assert_eq!(s[format!("{k}_error")].as_f64(), Some(0.0), "{policy} {k}: two seeds at rate 1 are the same run");
                }
            }
        }
    }

    #[test]
    fn a_sampled_lru_curve_is_near_the_exact_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = skewed_trace(dir.path(), 200_000, 40_000);
        let exact = curve(&path, "lru", None);
        let sampled = curve(&path, "lru", Some(0.25));
        for (e, s) in exact.as_array().unwrap().iter().zip(sampled.as_array().unwrap()) {
            let (e, s) = (e["miss_ratio"].as_f64().unwrap(), s["miss_ratio"].as_f64().unwrap());
            assert!((e - s).abs() < 0.02, "miss ratio exact {e}, sampled {s}");
        }
    }

    #[test]
    fn a_size_that_scales_to_zero_pages_is_an_error() {
        assert!(scale_size(4096 * 10, 0.01).unwrap_err().to_string().contains("rounds to 0 pages"));
        assert_eq!(scale_size(4096 * 1000, 0.01).unwrap(), 4096 * 10);
    }
}

#[cfg(test)]
mod scenario_tests {
    use super::*;

    const SCENARIO: &str = r#"
[machine]
memory = "64M"
[[cgroup]]
path = "/db"
max = "16M"
[[workload]]
name = "reader"
cgroup = "/db"
kind = "file-read"
file_size = "24M"
distribution = "zipf:0.8"
ops = 40000
seed = 3
"#;

    fn scenario(dir: &Path) -> PathBuf {
        let path = dir.join("db.toml");
        std::fs::write(&path, SCENARIO).unwrap();
        path
    }

    /// Each point of a scenario's curve is the run of the scenario with the key set to the
    /// point's size, and a larger limit refaults no more on this read-only workload.
    #[test]
    fn a_scenario_curve_is_one_full_run_a_size_of_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = scenario(dir.path());
        let c = ScenarioCurve { path: &path, set: &[], vary: "cgroup./db.max=8M..24M:3", counters: &[], threads: 2, sample: None };
        let points = run_scenario(&c).unwrap();
        assert_eq!(points.points.iter().map(|p| p.memory >> 20).collect::<Vec<_>>(), [8, 16, 24]);
        assert_eq!(points.counters, SCENARIO_COUNTERS);
        let refault = |p: &Point| p.values[0];
        assert!(refault(&points.points[0]) > refault(&points.points[1]), "8M refaults more than 16M");
        assert!(refault(&points.points[1]) >= refault(&points.points[2]));
        let alone = crate::run(&crate::Scenario::load(&path, &["cgroup./db.max=\"16M\"".into()]).unwrap(), |_, _| {}).unwrap();
        assert_eq!(refault(&points.points[1]), alone.vmstat["workingset_refault_file"] as f64);
        assert_eq!(points.points[1].values[7], alone.throughput_ops_s);
        let json = points.to_json();
        assert_eq!(json[1]["memory"], 16u64 << 20);
        assert!(json[1]["throughput_ops_s"].is_f64(), "a rate stays a number: {}", json[1]["throughput_ops_s"]);
    }

    /// Issue 40 #13: a size whose task the OOM killer ended stops early and so looks like
    /// the cheapest; the curve's default counters say it was killed. Issue 40 #17: each
    /// point's report and the table say what made them.
    #[test]
    fn a_scenario_curve_shows_oom_kills_and_its_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("heap.toml");
        let heap = "[machine]\nmemory = \"64M\"\n[[cgroup]]\npath = \"/db\"\nmax = \"32M\"\n\
                    [[workload]]\nname = \"heap\"\ncgroup = \"/db\"\nkind = \"anon-rw\"\nsize = \"24M\"\n\
                    distribution = \"uniform\"\nops = 20000\nseed = 3\n";
        std::fs::write(&path, heap).unwrap();
        let set = ["machine.swappiness=0".to_string()];
        let c = ScenarioCurve { path: &path, set: &set, vary: "cgroup./db.max=8M,32M", counters: &[], threads: 2, sample: None };
        let points = run_scenario(&c).unwrap();
        let col = |name: &str| {
            let i = points.counters.iter().position(|n| n == name).unwrap_or_else(|| panic!("no {name} in {:?}", points.counters));
            points.points.iter().map(|p| p.values[i]).collect::<Vec<_>>()
        };
        assert_eq!(col("oom_kills"), [1.0, 0.0], "8M cannot hold the 24M heap without swap; 32M can");
        assert_eq!(col("unfinished_tasks"), [1.0, 0.0]);
        assert!(col("pswpin").iter().all(|&x| x == 0.0) && points.counters.iter().any(|n| n == "pgpgin"));
        let json = points.to_json();
        assert_eq!(json[0]["oom_kills"], 1u64);
        let p = &points.points[0].reports[0]["provenance"];
        assert_eq!(p["pagelab_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(p["schema_version"], crate::report::SCHEMA_VERSION);
        assert_eq!(p["set"], json!(["machine.swappiness=0", "cgroup./db.max=8388608"]));
        assert!(p["scenario"].as_str().unwrap().contains("max = 8388608"), "{p}");
        assert_eq!(p["scenario_hash"].as_str().unwrap(), crate::report::scenario_hash(p["scenario"].as_str().unwrap()));
        assert_ne!(p["scenario_hash"], points.points[1].reports[0]["provenance"]["scenario_hash"]);
        let meta = points.table().meta;
        assert!(meta.contains(&("pagelab.set".into(), "[\"machine.swappiness=0\"]".into())), "{meta:?}");
        assert!(meta.contains(&("pagelab.schema_version".into(), crate::report::SCHEMA_VERSION.to_string())), "{meta:?}");
    }

    #[test]
    fn a_scenario_curve_names_what_is_wrong_with_its_key_sizes_and_counters() {
        let dir = tempfile::tempdir().unwrap();
        let path = scenario(dir.path());
        let err = |vary: &str, counters: &[String]| {
            run_scenario(&ScenarioCurve { path: &path, set: &[], vary, counters, threads: 1, sample: None }).unwrap_err().to_string()
        };
        assert!(err("cgroup./db.max", &[]).contains("KEY=SIZES"));
        assert!(err("cgroup./db.max=5%..10%:2", &[]).contains("a percentage is of a trace's distinct pages"));
        assert!(err("cgroup./nope.max=8M,16M", &[]).contains("nope"));
        assert!(err("cgroup./db.max=8M", &["pgsteal_flie".into()]).contains("`pgsteal_flie`: not a counter"));
        let set = ["sample.rate=0.5".to_string()];
        let e = run_scenario(&ScenarioCurve { path: &path, set: &set, vary: "cgroup./db.max=8M", counters: &[], threads: 1, sample: Some(0.5) }).unwrap_err();
        assert!(e.to_string().contains("leave sample.rate and sample.seed out of --set"), "{e}");
    }

    /// At R = 1 the two miniature scenarios are the full one: the sampled curve is the exact
    /// curve with no error; at R = 0.5 its points stay near the exact ones.
    #[test]
    fn a_sampled_scenario_curve_at_rate_one_equals_the_exact_curve() {
        let dir = tempfile::tempdir().unwrap();
        let path = scenario(dir.path());
        let curve = |sample| run_scenario(&ScenarioCurve { path: &path, set: &[], vary: "cgroup./db.max=8M,16M", counters: &[], threads: 2, sample }).unwrap();
        let exact = curve(None);
        let one = curve(Some(1.0));
        for (e, s) in exact.points.iter().zip(&one.points) {
            assert_eq!(e.values, s.values);
            assert!(s.errors.as_ref().unwrap().iter().all(|&x| x == 0.0));
            assert_eq!(s.reports.len(), 2);
        }
        // Within a tenth of the curve's largest value (this small memcg, 2048 pages in the
        // miniature at 8M, refaults a few percent more than the full one: docs/curve.md).
        let half = curve(Some(0.5));
        let peak = exact.points[0].values[0];
        for (e, s) in exact.points.iter().zip(&half.points) {
            let (exact, sampled) = (e.values[0], s.values[0]);
            assert!((sampled - exact).abs() < 0.1 * peak, "refaults at {}: sampled {sampled} against {exact}", e.memory);
        }
    }
}
