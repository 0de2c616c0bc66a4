//! The `pagelab` command: run scenarios against the reclaim models and print the kernel's
//! counters.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(name = "pagelab", version, about = "A fast, faithful laboratory for Linux page reclaim")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and print its counters.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Write the full report as JSON to this file ("-" for standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Override a scenario value, e.g. --set machine.memory=512M --set workload.fio-zipf.ops=1000.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// No progress bar and no table.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Compare runs side by side (mmtests compare-kernels style), the first as baseline.
    Compare {
        /// Reports written by `pagelab run --json`.
        #[arg(required = true, num_args = 1..)]
        reports: Vec<PathBuf>,
        /// Column labels, one per report, in order (default: scenario/kernel-policy).
        #[arg(long, value_delimiter = ',')]
        labels: Vec<String>,
    },
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("pagelab: {e:#}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run { scenario, json, set, quiet } => run(&scenario, json.as_deref(), &set, quiet),
        Cmd::Compare { reports, labels } => compare(&reports, &labels),
    }
}

fn compare(paths: &[PathBuf], labels: &[String]) -> Result<()> {
    if !labels.is_empty() && labels.len() != paths.len() {
        anyhow::bail!("--labels has {} labels for {} reports", labels.len(), paths.len());
    }
    let mut runs = paths.iter().map(|p| pagelab::compare::Run::load(p)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    for (r, l) in runs.iter_mut().zip(labels) {
        r.label = l.clone();
    }
    print!("{}", pagelab::compare::table(&runs, &pagelab::compare::default_rows()));
    Ok(())
}

fn run(path: &std::path::Path, json: Option<&std::path::Path>, set: &[String], quiet: bool) -> Result<()> {
    let s = pagelab::Scenario::load(path, set)?;
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(0);
        b.set_style(ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {pos}/{len} ops ({per_sec}, {eta})")?.progress_chars("=> "));
        b.set_message(s.name.clone());
        b
    };
    let report = pagelab::run(&s, |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })
    .map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    if let Some(out) = json {
        let text = serde_json::to_string_pretty(&report)?;
        if out.as_os_str() == "-" {
            println!("{text}");
        } else {
            std::fs::write(out, text + "\n").with_context(|| format!("cannot write {}", out.display()))?;
        }
    }
    if !quiet && json.is_none_or(|o| o.as_os_str() != "-") {
        print!("{}", report.table());
    }
    Ok(())
}
