//! Experiments: a scenario run under several settings (a seed's "before" and "after"), from a
//! manifest such as examples/seeds/experiments.toml, all runs in parallel.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;

use crate::lab::compare::Run;
use crate::{Report, Scenario};

/// One run of an experiment: a label and its overrides.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub label: String,
    #[serde(default)]
    pub set: Vec<String>,
}

/// An experiment of the manifest.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub id: String,
    pub title: String,
    /// Relative to the manifest.
    pub scenario: PathBuf,
    pub runs: Vec<RunSpec>,
    /// The throughput row counts only the tasks whose name starts with this (seed 000's query
    /// rate is the readers', not the cache's).
    #[serde(default)]
    pub throughput_tasks: Option<String>,
    /// Times pagelab itself: the runs go one at a time after the others, in this many rounds
    /// that alternate them (a busy machine slows all alike), the best round of each counting
    /// (seed 003 measures a scan loop's speed). 0: not timed.
    #[serde(default)]
    pub timing_rounds: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    experiment: Vec<Experiment>,
}

/// Reads a manifest; scenario paths become relative to the current directory.
pub fn load(path: &Path) -> Result<Vec<Experiment>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(parse(&text, &path.display().to_string())?
        .into_iter()
        .map(|mut e| {
            e.scenario = dir.join(&e.scenario);
            e
        })
        .collect())
}

/// Parses a manifest's text (`file` names it in errors); scenario paths stay as written,
/// relative to the manifest.
pub fn parse(text: &str, file: &str) -> Result<Vec<Experiment>, String> {
    let m: Manifest = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1).unwrap_or(0);
        format!("{file}:{line}: {}", e.message())
    })?;
    Ok(m.experiment)
}

/// The outcome of one experiment: a report (or an error) per run, in order.
pub struct Outcome {
    pub experiment: Experiment,
    pub reports: Vec<Result<Report, String>>,
    /// pagelab's best wall-clock seconds per run, for timed experiments.
    pub wall_s: Vec<Option<f64>>,
}

impl Outcome {
    /// The mmtests-style table of the experiment.
    pub fn table(&self) -> String {
        let runs: Vec<Run> = self
            .experiment
            .runs
            .iter()
            .zip(&self.reports)
            .zip(&self.wall_s)
            .filter_map(|((spec, r), wall)| r.as_ref().ok().map(|r| self.run_row(&spec.label, r, *wall)))
            .collect();
        let mut out = format!("{} — {}\n", self.experiment.id, self.experiment.title);
        for (spec, r) in self.experiment.runs.iter().zip(&self.reports) {
            if let Err(e) = r {
                out += &format!("  {}: failed: {e}\n", spec.label);
            }
        }
        if !runs.is_empty() {
            let mut rows = crate::lab::compare::default_rows();
            if self.experiment.timing_rounds > 0 {
                rows.extend(crate::lab::compare::timing_rows());
            }
            out += &crate::lab::compare::table(&runs, &rows);
        }
        out
    }

    /// A run of the table, with the experiment's throughput and timing rules applied.
    fn run_row(&self, label: &str, r: &Report, wall_s: Option<f64>) -> Run {
        let mut run = Run::from_report(label, r);
        if let Some(prefix) = &self.experiment.throughput_tasks {
            run.throughput = r.tasks.iter().filter(|t| t.name.starts_with(prefix.as_str())).map(|t| t.ops_per_s).sum();
        }
        if let Some(wall) = wall_s {
            run.model.insert("pagelab_wall_s".into(), wall);
            run.model.insert("pagelab_macc_per_s".into(), r.ops as f64 / wall / 1e6);
        }
        run
    }
}

/// Validates every run's scenario, then runs them all in parallel (`threads` 0: all cores).
pub fn run(experiments: &[Experiment], threads: usize, progress: &(dyn Fn() + Sync)) -> Result<Vec<Outcome>, String> {
    let (mut jobs, mut timed) = (Vec::new(), Vec::new());
    for (ei, e) in experiments.iter().enumerate() {
        for (ri, r) in e.runs.iter().enumerate() {
            let s = Scenario::load(&e.scenario, &r.set).map_err(|err| format!("experiment {} run `{}`: {err}", e.id, r.label))?;
            if e.timing_rounds > 0 { &mut timed } else { &mut jobs }.push((ei, ri, s));
        }
    }
    let pool = crate::sweep::pool(threads)?;
    let stop = crate::interrupt::current();
    let results: Vec<(usize, usize, Result<Report, String>)> = pool.install(|| {
        jobs.par_iter()
            .map(|(ei, ri, s)| {
                let r = crate::interrupt::scope(stop.clone(), || crate::run(s, |_, _| {}).map_err(|e| e.to_string()));
                progress();
                (*ei, *ri, r)
            })
            .collect()
    });
    let mut out: Vec<Outcome> = experiments
        .iter()
        .map(|e| Outcome { experiment: e.clone(), reports: e.runs.iter().map(|_| Err(String::new())).collect(), wall_s: vec![None; e.runs.len()] })
        .collect();
    for (ei, ri, r) in results {
        out[ei].reports[ri] = r;
    }
    for (ei, ri, r, wall) in run_timed(&timed, experiments, progress) {
        out[ei].reports[ri] = r;
        out[ei].wall_s[ri] = wall;
    }
    Ok(out)
}

/// A timed run's result: its experiment and run index, its report, its best wall time.
type TimedRun = (usize, usize, Result<Report, String>, Option<f64>);

/// Runs timed experiments' runs alone, one after the other, in rounds that alternate them;
/// keeps each run's first report (the runs are deterministic) and its best wall time.
fn run_timed(timed: &[(usize, usize, Scenario)], experiments: &[Experiment], progress: &(dyn Fn() + Sync)) -> Vec<TimedRun> {
    let rounds = timed.iter().map(|(ei, _, _)| experiments[*ei].timing_rounds).max().unwrap_or(0);
    let mut out: Vec<_> = timed.iter().map(|(ei, ri, _)| (*ei, *ri, Err(String::new()), None::<f64>)).collect();
    for round in 0..rounds {
        for (slot, (ei, _, s)) in out.iter_mut().zip(timed) {
            if round >= experiments[*ei].timing_rounds {
                continue;
            }
            let start = std::time::Instant::now();
            let r = crate::run(s, |_, _| {}).map_err(|e| e.to_string());
            let wall = start.elapsed().as_secs_f64();
            if r.is_ok() {
                slot.3 = Some(slot.3.map_or(wall, |w: f64| w.min(wall)));
            }
            if round == 0 {
                slot.2 = r;
            }
            if round + 1 == experiments[*ei].timing_rounds {
                progress();
            }
        }
    }
    out
}
