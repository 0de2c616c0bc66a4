//! `pagelab size`: the smallest memory.max of one cgroup at which a scenario meets every
//! target (`workingset_refault_file<=1000`, `throughput>=0.95*max`), found by bisection over
//! full runs. Each round runs [`SIZES_PER_ROUND`] sizes, evenly spaced inside the interval
//! still open, whatever the threads (so the answer is the same on any machine), through the
//! sweep's runner
//! ([`crate::sweep::run`]): the same overrides, the same parallel, deterministic runs as
//! `pagelab sweep` and `pagelab curve --vary`.
//!
//! A target is `METRIC OP BOUND`. METRIC is a key of the run's report: a `/proc/vmstat` name,
//! one of the curves' scenario counters (`throughput_ops_s`, alias `throughput`,
//! `elapsed_s`, `ops`, `oom_kills`, `unfinished_tasks`), or a dotted path into the JSON
//! report (`memcg./app.memory.events.high`, `tasks.reader.ops_per_s`: an array's element by
//! its `name`). A path the report does not have is an "unknown metric" error after the
//! first round, so a key added to the report later (`pressure...`) works without a change
//! here. OP is `<`, `<=`, `>`, `>=`. BOUND is a number, `N%` (of a ratio or share: N/100; of a
//! pressure average `avg10`/`avg60`/`avg300`, which the kernel prints in percent: N), or
//! `F*max` / `F*min` (F times the largest / smallest value of the metric over every run
//! made; `max` alone is `1*max`).
//!
//! The search assumes that a target met at one size is met at every larger one. It checks
//! what it can: a size that fails above one that passes is reported as a warning.

use std::path::Path;

use serde_json::Value;

use crate::error::{bail, Error, Result};
use pagelab_workload::{parse_size, PAGE_SIZE};

/// The sizes a round of the search runs (in parallel as the threads allow): fixed, so the
/// sizes tried and the answer do not depend on the number of cores.
pub const SIZES_PER_ROUND: usize = 4;

/// How a target compares its metric with its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn holds(self, x: f64, bound: f64) -> bool {
        match self {
            Cmp::Lt => x < bound,
            Cmp::Le => x <= bound,
            Cmp::Gt => x > bound,
            Cmp::Ge => x >= bound,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// A target's bound: a value, or a factor of the best value seen over the runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    Value(f64),
    /// F times the largest value of the metric over every run made.
    OfMax(f64),
    /// F times the smallest value of the metric over every run made.
    OfMin(f64),
}

/// One `--target`.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// As given.
    pub text: String,
    pub metric: String,
    pub cmp: Cmp,
    pub bound: Bound,
}

impl Target {
    /// Parses `METRIC OP BOUND` (see the module's doc); errors name the target and the part
    /// that is wrong.
    pub fn parse(text: &str) -> std::result::Result<Target, String> {
        let bad = |why: String| format!("--target `{text}`: {why}");
        let at = text.find(['<', '>']).ok_or_else(|| bad("no comparison: write METRIC<VALUE, METRIC<=VALUE, METRIC>VALUE or METRIC>=VALUE".into()))?;
        let (metric, rest) = text.split_at(at);
        let (cmp, bound) = match rest.as_bytes() {
            [b'<', b'=', ..] => (Cmp::Le, &rest[2..]),
            [b'>', b'=', ..] => (Cmp::Ge, &rest[2..]),
            [b'<', ..] => (Cmp::Lt, &rest[1..]),
            _ => (Cmp::Gt, &rest[1..]),
        };
        let metric = metric.trim();
        if metric.is_empty() {
            return Err(bad("no metric before the comparison (e.g. workingset_refault_file<=1000)".into()));
        }
        let metric = if metric == "throughput" { "throughput_ops_s" } else { metric };
        let bound = bound.trim();
        if bound.contains(['<', '>', '=']) {
            return Err(bad("one comparison a target (give two --target for a range)".into()));
        }
        let number = |s: &str| -> std::result::Result<f64, String> {
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(bad(format!("`{}` is not a number", s.trim()))),
            }
        };
        let bound = if let Some((f, max)) = of_best(bound) {
            let f = number(f)?;
            if max {
                Bound::OfMax(f)
            } else {
                Bound::OfMin(f)
            }
        } else if let Some(p) = bound.strip_suffix('%') {
            let last = metric.rsplit('.').next().unwrap_or(metric);
            if matches!(last, "avg10" | "avg60" | "avg300") {
                Bound::Value(number(p)?)
            } else if last.ends_with("ratio") || last.ends_with("share") {
                Bound::Value(number(p)? / 100.0)
            } else {
                return Err(bad(format!(
                    "`%` applies to a ratio or share (…ratio, …share: N% is N/100) or a pressure average (avg10, avg60, avg300: in percent, as /proc/pressure prints them), not to `{metric}`"
                )));
            }
        } else if bound.is_empty() {
            return Err(bad("no value after the comparison".into()));
        } else {
            Bound::Value(number(bound)?)
        };
        Ok(Target { text: text.trim().to_string(), metric: metric.to_string(), cmp, bound })
    }

    /// The bound's value given the metric's largest and smallest values over the runs.
    pub fn resolve(&self, max: f64, min: f64) -> f64 {
        match self.bound {
            Bound::Value(v) => v,
            Bound::OfMax(f) => f * max,
            Bound::OfMin(f) => f * min,
        }
    }

    /// How far `x` is inside the target (positive) or outside it (negative).
    pub fn margin(&self, x: f64, bound: f64) -> f64 {
        match self.cmp {
            Cmp::Lt | Cmp::Le => bound - x,
            Cmp::Gt | Cmp::Ge => x - bound,
        }
    }

    /// The comparison as text (`<=`).
    pub fn op(&self) -> &'static str {
        self.cmp.text()
    }
}

/// `max`, `min`, `F*max`, `F*min`: the factor's text and whether it is of the largest value.
fn of_best(s: &str) -> Option<(&str, bool)> {
    let s = s.trim();
    if s == "max" || s == "min" {
        return Some(("1", s == "max"));
    }
    let (f, best) = s.split_once('*')?;
    matches!(best.trim(), "max" | "min").then(|| (f, best.trim() == "max"))
}

/// A metric of a run's report by name (see the module's doc), or why there is none.
pub fn metric(report: &Value, name: &str) -> std::result::Result<f64, String> {
    if let Ok(v) = crate::curve::scenario_counters(report, &[name.to_string()]) {
        return Ok(v[0]);
    }
    let segments: Vec<&str> = name.split('.').collect();
    match walk(report, &segments) {
        Some(x) => Ok(x),
        None => Err(format!(
            "unknown metric `{name}`: not a key of the run's report (a /proc/vmstat name such as workingset_refault_file, throughput_ops_s, elapsed_s, ops, oom_kills, unfinished_tasks, or a dotted path into the JSON report such as memcg./app.memory.events.high)"
        )),
    }
}

/// The number at `segments` below `v`: an object's key may itself hold dots (memory.stat's
/// `memory.events.high`), so the longest run of segments that names a key is taken first; an
/// array's element is named by its `name`.
fn walk(v: &Value, segments: &[&str]) -> Option<f64> {
    if segments.is_empty() {
        return v.as_f64().or_else(|| v.as_bool().map(|b| b as u8 as f64));
    }
    for n in (1..=segments.len()).rev() {
        let key = segments[..n].join(".");
        let next = match v {
            Value::Object(m) => m.get(&key),
            Value::Array(a) => a.iter().find(|e| e.get("name").and_then(Value::as_str) == Some(key.as_str())),
            _ => None,
        };
        if let Some(x) = next.and_then(|next| walk(next, &segments[n..])) {
            return Some(x);
        }
    }
    None
}

/// What to size.
pub struct Size<'a> {
    pub path: &'a Path,
    pub set: &'a [String],
    /// The cgroup whose memory.max is searched (a `[[cgroup]] path`).
    pub cgroup: &'a str,
    pub targets: &'a [String],
    /// The range searched (sizes); defaults: 1M and 1.25 times the cgroup's footprint.
    pub lo: Option<&'a str>,
    pub hi: Option<&'a str>,
    /// How close the answer must be: a size (`1M`) or a percentage of the range (`1%`).
    pub tolerance: &'a str,
    /// Runs at a time, and so sizes a round (0: one a core).
    pub threads: usize,
}

/// One run of a search: the size, each target's metric, whether all targets hold (with the
/// bounds as the whole search resolved them), and the report.
#[derive(Clone, Debug)]
pub struct SizeRun {
    pub memory: u64,
    pub metrics: Vec<f64>,
    pub pass: bool,
    pub report: Value,
}

/// A search's result.
#[derive(Clone, Debug)]
pub struct Sizing {
    pub key: String,
    pub targets: Vec<Target>,
    /// Each target's bound as resolved over all the runs.
    pub bounds: Vec<f64>,
    /// Every run, in size order.
    pub runs: Vec<SizeRun>,
    /// The smallest size found to meet every target.
    pub answer: u64,
    /// The largest size run that fails a target below the answer (`None`: `lo` passes).
    pub below: Option<u64>,
    pub lo: u64,
    pub hi: u64,
    pub tolerance: u64,
    /// What the search could not rule out (a target that fails above a size that passes).
    pub warnings: Vec<String>,
}

impl Sizing {
    /// The run at the answer.
    pub fn at_answer(&self) -> &SizeRun {
        self.runs.iter().find(|r| r.memory == self.answer).expect("the answer is a run")
    }

    /// As `pagelab size --json` writes it (beside its `provenance`).
    pub fn to_json(&self) -> Value {
        let at = self.at_answer();
        let targets: Vec<Value> = self
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({"target": t.text, "metric": t.metric, "op": t.op(), "bound": self.bounds[i],
                "value_at_answer": at.metrics[i], "margin": t.margin(at.metrics[i], self.bounds[i])})
            })
            .collect();
        let points: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                let mut m = serde_json::Map::new();
                m.insert("memory".into(), r.memory.into());
                m.insert("pass".into(), r.pass.into());
                for (t, x) in self.targets.iter().zip(&r.metrics) {
                    m.insert(t.metric.clone(), (*x).into());
                }
                Value::Object(m)
            })
            .collect();
        serde_json::json!({"key": self.key, "answer": self.answer, "below": self.below, "lo": self.lo, "hi": self.hi,
            "tolerance": self.tolerance, "targets": targets, "points": points, "warnings": self.warnings})
    }
}

/// The pages a cgroup's workloads (its own and its descendants') declare: each file once by
/// name, each job's anonymous regions.
pub fn footprint_pages(s: &crate::Scenario, cgroup: &str) -> u64 {
    let mut files = std::collections::BTreeMap::new();
    let mut anon = 0u64;
    let inside = |c: &str| c == cgroup || c.strip_prefix(cgroup).is_some_and(|r| r.starts_with('/'));
    for w in s.workloads.iter().filter(|w| inside(&w.cgroup)) {
        for p in &w.phases {
            if p.kind.is_anon() {
                anon = anon.saturating_add(p.object_pages.saturating_mul(w.jobs as u64));
            } else {
                files.insert(p.object.clone(), p.object_pages);
            }
        }
    }
    files.values().fold(anon, |a, &p| a.saturating_add(p))
}

/// The search's range and step in bytes, from the flags or the cgroup's footprint.
fn range(c: &Size, s: &crate::Scenario) -> Result<(u64, u64, u64)> {
    let size = |flag: &str, text: &str| -> Result<u64> {
        let b = parse_size(text).map_err(|e| Error::Msg(format!("{flag} `{text}`: {e}")))?;
        Ok(b / PAGE_SIZE * PAGE_SIZE)
    };
    let lo = match c.lo {
        Some(t) => size("--lo", t)?,
        None => 1 << 20,
    };
    let hi = match c.hi {
        Some(t) => size("--hi", t)?,
        None => {
            let fp = footprint_pages(s, c.cgroup);
            if fp == 0 {
                bail!("--cgroup {}: its workloads declare no pages to size it from: give --hi", c.cgroup);
            }
            // 1.25 times the footprint, in whole MiB: room for the kernel's batches above it.
            (fp.saturating_mul(PAGE_SIZE).saturating_mul(5) / 4).div_ceil(1 << 20).saturating_mul(1 << 20)
        }
    };
    if lo >= hi {
        bail!("--lo {} is not below --hi {}: the range searched is empty", mib(lo), mib(hi));
    }
    let tol = c.tolerance.trim();
    let tolerance = match tol.strip_suffix('%') {
        Some(p) => match p.trim().parse::<f64>() {
            Ok(x) if x > 0.0 && x < 100.0 => ((hi - lo) as f64 * x / 100.0) as u64,
            _ => bail!("--tolerance `{tol}`: a percentage of the range is above 0 and below 100"),
        },
        None => parse_size(tol).map_err(|e| Error::Msg(format!("--tolerance `{tol}`: {e}")))?,
    };
    Ok((lo, hi, tolerance.max(PAGE_SIZE)))
}

/// Bytes as MiB for messages.
pub fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Finds the smallest memory.max of `c.cgroup` in `[lo, hi]` meeting every target, to within
/// the tolerance. Errors before any run for bad targets, flags or cgroup; after the first
/// round for an unknown metric, or when the targets fail even at `hi`.
pub fn run(c: &Size) -> Result<Sizing> {
    if c.targets.is_empty() {
        bail!("no --target: give at least one, e.g. --target 'workingset_refault_file<=1000'");
    }
    let targets: Vec<Target> = c.targets.iter().map(|t| Target::parse(t)).collect::<std::result::Result<_, _>>().map_err(Error::Msg)?;
    let s = crate::Scenario::load(c.path, c.set)?;
    if !s.cgroups.iter().any(|g| g.path == c.cgroup) {
        let known: Vec<&str> = s.cgroups.iter().map(|g| g.path.as_str()).collect();
        bail!(
            "--cgroup {}: not a [[cgroup]] of {} (its cgroups: {})",
            c.cgroup,
            c.path.display(),
            if known.is_empty() { "none".into() } else { known.join(", ") }
        );
    }
    let (lo, hi, tolerance) = range(c, &s)?;
    let key = format!("cgroup.{}.max", c.cgroup);
    let text = crate::Scenario::read_text(c.path)?;
    let name = c.path.file_stem().map_or("scenario".into(), |n| n.to_string_lossy().into_owned());
    let mut runs: Vec<SizeRun> = Vec::new();
    let run_sizes = |sizes: &[u64], runs: &mut Vec<SizeRun>| -> Result<()> {
        let axes = [crate::sweep::Axis { key: key.clone(), values: sizes.iter().map(u64::to_string).collect() }];
        let done = crate::sweep::run(&text, &c.path.display().to_string(), &name, c.set, &axes, c.threads, &|| {}).map_err(|e| Error::Msg(e.to_string()))?;
        for (size, (point, report)) in sizes.iter().zip(done) {
            let report = report.map_err(|e| Error::Msg(format!("{}: {e}", point.label())))?;
            let report = serde_json::to_value(&report).expect("a report serializes");
            let metrics = targets
                .iter()
                .map(|t| metric(&report, &t.metric))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Msg(format!("--target: {e}")))?;
            runs.push(SizeRun { memory: *size, metrics, pass: false, report });
        }
        runs.sort_by_key(|r| r.memory);
        Ok(())
    };
    run_sizes(&[lo, hi], &mut runs)?;
    let (mut fail, mut pass) = (lo, hi);
    let mut bounds = judge(&targets, &mut runs);
    if !runs.last().expect("hi ran").pass {
        bail!("the targets are not met even at --hi {} ({}): {}", mib(hi), key, failing(&targets, &bounds, runs.last().expect("hi ran")));
    }
    if runs[0].pass {
        pass = lo;
    }
    while pass > lo && pass - fail > tolerance {
        let step = (pass - fail) / (SIZES_PER_ROUND as u64 + 1);
        let mut sizes: Vec<u64> = (1..=SIZES_PER_ROUND as u64).map(|i| (fail + step * i) / PAGE_SIZE * PAGE_SIZE).filter(|&m| m > fail && m < pass).collect();
        sizes.dedup();
        if sizes.is_empty() {
            break;
        }
        run_sizes(&sizes, &mut runs)?;
        bounds = judge(&targets, &mut runs);
        // The interval closes on the smallest size that passes and the largest failing one
        // below it, among every run so far (the bounds `max`/`min` may have moved).
        pass = runs.iter().filter(|r| r.pass).map(|r| r.memory).min().unwrap_or(hi);
        fail = runs.iter().filter(|r| !r.pass && r.memory < pass).map(|r| r.memory).max().unwrap_or(lo);
        if !runs.iter().any(|r| !r.pass && r.memory < pass) {
            break;
        }
    }
    let below = runs.iter().filter(|r| !r.pass && r.memory < pass).map(|r| r.memory).max();
    let mut warnings = Vec::new();
    for r in runs.iter().filter(|r| !r.pass && r.memory > pass) {
        warnings.push(format!(
            "{key}={} fails ({}) although {} passes: a target is not monotonic in the size, so a smaller size may pass too",
            mib(r.memory),
            failing(&targets, &bounds, r),
            mib(pass)
        ));
    }
    Ok(Sizing { key, targets, bounds, runs, answer: pass, below, lo, hi, tolerance, warnings })
}

/// Resolves the bounds over all runs and marks each run's pass; returns the bounds.
fn judge(targets: &[Target], runs: &mut [SizeRun]) -> Vec<f64> {
    let bounds: Vec<f64> = targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let max = runs.iter().map(|r| r.metrics[i]).fold(f64::NEG_INFINITY, f64::max);
            let min = runs.iter().map(|r| r.metrics[i]).fold(f64::INFINITY, f64::min);
            t.resolve(max, min)
        })
        .collect();
    for r in runs.iter_mut() {
        r.pass = targets.iter().enumerate().all(|(i, t)| t.cmp.holds(r.metrics[i], bounds[i]));
    }
    bounds
}

/// The targets a run fails, with their values: `workingset_refault_file = 8192 (needs <= 100)`.
fn failing(targets: &[Target], bounds: &[f64], r: &SizeRun) -> String {
    targets
        .iter()
        .enumerate()
        .filter(|(i, t)| !t.cmp.holds(r.metrics[*i], bounds[*i]))
        .map(|(i, t)| format!("{} = {} (needs {} {})", t.metric, r.metrics[i], t.op(), bounds[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_their_metric_comparison_and_bound() {
        let t = Target::parse("workingset_refault_file<=1000").unwrap();
        assert_eq!((t.metric.as_str(), t.cmp, t.bound), ("workingset_refault_file", Cmp::Le, Bound::Value(1000.0)));
        let t = Target::parse("throughput>=0.95*max").unwrap();
        assert_eq!((t.metric.as_str(), t.cmp, t.bound), ("throughput_ops_s", Cmp::Ge, Bound::OfMax(0.95)));
        assert_eq!(Target::parse("pressure.memory.some.avg60<1%").unwrap().bound, Bound::Value(1.0));
        assert_eq!(Target::parse("miss_ratio < 5%").unwrap().bound, Bound::Value(0.05));
        assert_eq!(Target::parse("elapsed_s<1.1*min").unwrap().bound, Bound::OfMin(1.1));
        for (bad, why) in [
            ("refaults", "no comparison"),
            ("<5", "no metric"),
            ("ops>", "no value"),
            ("ops>=lots", "`lots` is not a number"),
            ("pgscan_file<5%", "`%` applies to a ratio"),
            ("1<ops<5", "one comparison"),
            ("ops>=nan", "not a number"),
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(e.contains(why) && e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn metrics_are_report_keys_found_by_path() {
        let r = serde_json::json!({"vmstat": {"pgscan_file": 7}, "elapsed_s": 2.0, "ops": 10,
            "memcg": {"/app": {"memory.events.high": 3}}, "tasks": [{"name": "reader", "ops_per_s": 5.0}]});
        assert_eq!(metric(&r, "pgscan_file"), Ok(7.0));
        assert_eq!(metric(&r, "throughput_ops_s"), Ok(5.0));
        assert_eq!(metric(&r, "memcg./app.memory.events.high"), Ok(3.0));
        assert_eq!(metric(&r, "tasks.reader.ops_per_s"), Ok(5.0));
        let e = metric(&r, "psi.some.avg60").unwrap_err();
        assert!(e.contains("unknown metric `psi.some.avg60`"), "{e}");
        let with_psi = serde_json::json!({"psi": {"some": {"avg60": 0.25}}});
        assert_eq!(metric(&with_psi, "psi.some.avg60"), Ok(0.25));
    }
}
