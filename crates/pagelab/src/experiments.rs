//! Experiments: a scenario run under several settings (a seed's "before" and "after"), from a
//! manifest such as examples/seeds/experiments.toml, all runs in parallel.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;

use crate::compare::Run;
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    experiment: Vec<Experiment>,
}

/// Reads a manifest; scenario paths become relative to the current directory.
pub fn load(path: &Path) -> Result<Vec<Experiment>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let m: Manifest = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1).unwrap_or(0);
        format!("{}:{line}: {}", path.display(), e.message())
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(m.experiment
        .into_iter()
        .map(|mut e| {
            e.scenario = dir.join(&e.scenario);
            e
        })
        .collect())
}

/// The outcome of one experiment: a report (or an error) per run, in order.
pub struct Outcome {
    pub experiment: Experiment,
    pub reports: Vec<Result<Report, String>>,
}

impl Outcome {
    /// The mmtests-style table of the experiment.
    pub fn table(&self) -> String {
        let runs: Vec<Run> = self
            .experiment
            .runs
            .iter()
            .zip(&self.reports)
            .filter_map(|(spec, r)| r.as_ref().ok().map(|r| Run::from_report(&spec.label, r)))
            .collect();
        let mut out = format!("{} — {}\n", self.experiment.id, self.experiment.title);
        for (spec, r) in self.experiment.runs.iter().zip(&self.reports) {
            if let Err(e) = r {
                out += &format!("  {}: failed: {e}\n", spec.label);
            }
        }
        if !runs.is_empty() {
            out += &crate::compare::table(&runs, &crate::compare::default_rows());
        }
        out
    }
}

/// Validates every run's scenario, then runs them all in parallel (`threads` 0: all cores).
pub fn run(experiments: &[Experiment], threads: usize, progress: &(dyn Fn() + Sync)) -> Result<Vec<Outcome>, String> {
    let mut jobs = Vec::new();
    for (ei, e) in experiments.iter().enumerate() {
        for (ri, r) in e.runs.iter().enumerate() {
            let s = Scenario::load(&e.scenario, &r.set).map_err(|err| format!("experiment {} run `{}`: {err}", e.id, r.label))?;
            jobs.push((ei, ri, s));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
    let results: Vec<(usize, usize, Result<Report, String>)> = pool.install(|| {
        jobs.par_iter()
            .map(|(ei, ri, s)| {
                let r = crate::run(s, |_, _| {});
                progress();
                (*ei, *ri, r)
            })
            .collect()
    });
    let mut out: Vec<Outcome> =
        experiments.iter().map(|e| Outcome { experiment: e.clone(), reports: Vec::with_capacity(e.runs.len()) }).collect();
    for (ei, _, r) in results {
        out[ei].reports.push(r);
    }
    Ok(out)
}
