//! Parameter sweeps: the same scenario under every combination of overridden values, run in
//! parallel. Each point is an independent, deterministic run, so the results do not depend
//! on the number of threads.

use rayon::prelude::*;

use crate::{Report, Scenario, ScenarioError};

/// One swept key and its values (`--vary machine.memory=256M,512M,1G`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `key=v1,v2,...`.
    pub fn parse(text: &str) -> Result<Axis, String> {
        let (key, values) = text.split_once('=').ok_or_else(|| format!("`{text}`: --vary takes key=value1,value2,..."))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
        if key.trim().is_empty() || values.is_empty() {
            return Err(format!("`{text}`: --vary needs a key and at least one value"));
        }
        Ok(Axis { key: key.trim().to_string(), values })
    }
}

/// One point of a sweep: the overrides that define it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub overrides: Vec<(String, String)>,
}

impl Point {
    /// `key=value` strings for [`Scenario::parse`]; bare words become TOML strings.
    pub fn set_args(&self) -> Vec<String> {
        self.overrides.iter().map(|(k, v)| format!("{k}={}", toml_value(v))).collect()
    }
    pub fn label(&self) -> String {
        self.overrides.iter().map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k))).collect::<Vec<_>>().join(",")
    }
}

fn toml_value(v: &str) -> String {
    let is_value = v.parse::<f64>().is_ok() || v == "true" || v == "false" || v.starts_with('"') || v.starts_with('{') || v.starts_with('[');
    if is_value {
        v.to_string()
    } else {
        format!("\"{v}\"")
    }
}

/// The most points a sweep runs: each keeps its scenario and its report (a few KiB) until
/// the end, so a larger product would only fill memory (10^6 points used to need 3.6 GB).
pub const MAX_POINTS: usize = 10_000;
/// The most threads a sweep (or a curve, or `seeds`) runs on: far more than any machine's
/// cores, fewer than a process can start.
pub const MAX_THREADS: usize = 1024;

/// The number of points of the axes' product, or why it is too many.
pub fn count(axes: &[Axis]) -> Result<usize, String> {
    let n = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()).filter(|&n| n <= MAX_POINTS));
    n.ok_or_else(|| {
        let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        format!("--vary: {} points are more than a sweep's limit of {MAX_POINTS}: sweep fewer values", sizes.join(" x "))
    })
}

/// A pool of `threads` threads (0: one a core), at most [`MAX_THREADS`].
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    if threads > MAX_THREADS {
        return Err(format!("--threads {threads}: at most {MAX_THREADS} (results do not depend on it; 0 is one a core)"));
    }
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("--threads {threads}: cannot start the threads: {e}"))
}

/// The cartesian product of the axes, the first axis varying slowest.
pub fn points(axes: &[Axis]) -> Vec<Point> {
    let mut out = vec![Point { overrides: Vec::new() }];
    for a in axes {
        out = out
            .into_iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.overrides.push((a.key.clone(), v.clone()));
                    q
                })
            })
            .collect();
    }
    out
}

/// One point of a sweep and its run's report (or the error that stopped it).
pub type PointRun = (Point, Result<Report, String>);

/// Validates every point first (so a bad value fails before any run), then runs them on
/// `threads` threads (0: all cores). Results come back in point order.
pub fn run(
    text: &str,
    file: &str,
    name: &str,
    base_overrides: &[String],
    axes: &[Axis],
    threads: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<PointRun>, ScenarioError> {
    let usage = |message: String| ScenarioError { file: file.to_string(), line: None, key: String::new(), message };
    count(axes).map_err(usage)?;
    let pool = pool(threads).map_err(usage)?;
    let pts = points(axes);
    let scenarios = pts
        .iter()
        .map(|p| {
            let mut set = base_overrides.to_vec();
            set.extend(p.set_args());
            Scenario::parse(text, file, name, &set)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let stop = crate::interrupt::current();
    let reports: Vec<Result<Report, String>> = pool.install(|| {
        scenarios
            .par_iter()
            .map(|s| {
                let r = crate::interrupt::scope(stop.clone(), || crate::run(s, |_, _| {}).map_err(|e| e.to_string()));
                progress();
                r
            })
            .collect()
    });
    Ok(pts.into_iter().zip(reports).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_the_cartesian_product_in_order() {
        let axes = [Axis::parse("machine.memory=1M,2M").unwrap(), Axis::parse("machine.swappiness=0,100").unwrap()];
        let p = points(&axes);
        let labels: Vec<String> = p.iter().map(|p| p.label()).collect();
        assert_eq!(labels, ["memory=1M,swappiness=0", "memory=1M,swappiness=100", "memory=2M,swappiness=0", "memory=2M,swappiness=100"]);
        assert_eq!(p[0].set_args(), ["machine.memory=\"1M\"", "machine.swappiness=0"]);
        assert!(Axis::parse("machine.memory").is_err());
    }

    /// Issue 40: a 10^6-point sweep grew to 3.6 GB and aborted; `--threads 100000` panicked.
    #[test]
    fn sweeps_and_their_threads_are_bounded() {
        let thousand = Axis::parse(&format!("machine.memory={}", (1..=1000).map(|i| format!("{i}M")).collect::<Vec<_>>().join(","))).unwrap();
        assert_eq!(count(&[thousand.clone(), Axis::parse("machine.swappiness=0,100").unwrap()]), Ok(2000));
        let e = count(&[thousand.clone(), thousand.clone()]).unwrap_err();
        assert!(e.contains("1000 x 1000 points are more than a sweep's limit of 10000"), "{e}");
        let e = run("", "s.toml", "s", &[], &[thousand.clone(), thousand], 0, &|| {}).unwrap_err().to_string();
        assert!(e.contains("limit of 10000"), "{e}");
        let e = run("", "s.toml", "s", &[], &[Axis::parse("machine.memory=1M").unwrap()], 100_000, &|| {}).unwrap_err().to_string();
        assert!(e.contains("--threads 100000: at most 1024"), "{e}");
    }
}
