//! The `pagelab` command: run scenarios against the reclaim models and print the kernel's
//! counters. A library so that the Python wheel's `pagelab` console script runs the same
//! command line in-process (`main_from`); `src/main.rs` is the binary.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

/// `print!` that returns the write's error (a full disk, a closed pipe) instead of
/// panicking: `out!(...)?`.
macro_rules! out {
    ($($t:tt)*) => { crate::output::print(format_args!($($t)*)) };
}
/// `println!` as [`out!`].
macro_rules! outln {
    ($($t:tt)*) => { crate::output::print(format_args!("{}\n", format_args!($($t)*))) };
}

mod calibrate;
mod output;
mod parquet;
mod trace;

#[derive(Parser)]
#[command(name = "pagelab", version, about = "A fast, faithful laboratory for Linux page reclaim")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario, or replay a trace (--trace), and print its counters.
    Run {
        /// The scenario file (TOML).
        #[arg(required_unless_present = "trace", conflicts_with = "trace")]
        scenario: Option<PathBuf>,
        /// Replay this page-access trace (one object = one 4 KiB page) instead of a scenario.
        #[arg(long, requires = "memory")]
        trace: Option<PathBuf>,
        /// The trace's format: oracleGeneral (libCacheSim; plain or zstd), dense (pagelab's),
        /// fio-iolog (fio's write_iolog, versions 2 and 3; kernel models only), text (pagelab's
        /// `R|W|T|D PAGE` lines), lcs (libCacheSim), csv:COLUMNS (e.g. csv:time=1,id=2,op=3),
        /// blkparse, msr (MSR Cambridge); see docs/workloads.md. Default: oracleGeneral.
        #[arg(long)]
        trace_format: Option<String>,
        /// The policy (pagelab policies). With --trace: classic or mglru (the kernel models,
        /// the trace as buffered reads of one file), or a plain page cache (default classic).
        /// With a scenario: the same as --set machine.policy=NAME.
        #[arg(long)]
        policy: Option<String>,
        /// With --trace: the machine's memory (the plain caches hold memory / 4 KiB pages);
        /// several sizes, comma-separated, run in parallel and give a JSON array. With a
        /// scenario: the same as --set machine.memory=SIZE.
        #[arg(long)]
        memory: Option<String>,
        /// The kernel version (6.1, 6.12, 7.3, 5.7; default 6.1 with --trace). With a scenario:
        /// the same as --set machine.kernel=VERSION; several, comma-separated (6.1,6.12,7.3):
        /// the scenario runs on each and pagelab prints what changed, counter by counter, and
        /// the kernel.rs rules that differ between each pair of kernels.
        #[arg(long)]
        kernel: Option<String>,
        /// Write the full report as JSON to this file ("-" for standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the run's series as a Parquet table: one row a report interval, `t_s` and
        /// `ops`, then every vmstat counter (events as the interval's increase, gauges at its
        /// end). A plain cache's trace replay has no series.
        #[arg(long, value_name = "OUT")]
        parquet: Option<PathBuf>,
        /// Override a scenario value, e.g. --set machine.memory=512M --set workload.fio-zipf.ops=1000.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// No progress bar and no table.
        #[arg(long, short)]
        quiet: bool,
        /// With --json to a file: also print the full text report (otherwise only its
        /// summary lines: the run, OOM kills, pacing).
        #[arg(long)]
        table: bool,
        /// Add the CPU time by kernel function, the tasks' and kswapd's apart, to the report
        /// (the same as --set report.profile=true).
        #[arg(long, conflicts_with = "trace")]
        profile: bool,
    },
    /// Run a scenario for every combination of values (in parallel) and tabulate the counters.
    Sweep {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// A swept key and its values, e.g. --vary machine.memory=256M,512M,1G (repeatable:
        /// the sweep is the cartesian product).
        #[arg(long = "vary", value_name = "KEY=V1,V2,...", required = true)]
        vary: Vec<String>,
        /// Fixed overrides applied to every point.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Worker threads (default: all cores); results do not depend on it.
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Write every point's full report as a JSON array.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write one CSV row per point: the swept values, then every vmstat counter.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write one Parquet row per point: the swept values (typed), then elapsed_s, ops,
        /// throughput_ops_s and every vmstat counter (and `error` if a point failed).
        #[arg(long, value_name = "OUT")]
        parquet: Option<PathBuf>,
        #[arg(long, short)]
        quiet: bool,
    },
    /// The smallest memory.max of a cgroup at which a scenario meets every target, by
    /// bisection over full runs (docs/curve.md, "The smallest memory that meets targets").
    Size {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// The cgroup whose memory.max is searched (a [[cgroup]] path of the scenario).
        #[arg(long)]
        cgroup: String,
        /// METRIC OP BOUND, repeatable (every one must hold): METRIC a key of the run's
        /// report (a vmstat name, throughput, elapsed_s, ops, oom_kills, unfinished_tasks, or
        /// a dotted path such as memcg./app.memory.events.high), OP <, <=, >, >=, BOUND a
        /// number, N% (of a ratio or a pressure average), or F*max / F*min (of the best value
        /// over the runs): --target 'workingset_refault_file<=1000' --target 'throughput>=0.95*max'.
        #[arg(long = "target", value_name = "METRIC<BOUND", required = true)]
        targets: Vec<String>,
        /// The smallest size searched (default 1M).
        #[arg(long)]
        lo: Option<String>,
        /// The largest size searched (default 1.25 times the pages the cgroup's workloads
        /// declare); the targets must hold there.
        #[arg(long)]
        hi: Option<String>,
        /// How close to the smallest size the answer must be: a size (1M) or a percentage of
        /// the range (1%).
        #[arg(long, default_value = "1%")]
        tolerance: String,
        /// Overrides applied to every run, as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Runs at a time (default: one a core). Each round tries 4 sizes whatever the
        /// threads, so the answer is the same on any machine.
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Write the answer as JSON ("-" for standard output): `provenance` (versions, --set,
        /// the scenario as resolved, and the search: cgroup, targets, lo, hi, tolerance) and
        /// `size` (the answer, the targets' bounds and margins, every point run).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw one PNG a target's metric against the size, PREFIX-<metric>.png (default
        /// PREFIX: the scenario's name, then "-size"); needs Python with matplotlib and the
        /// pagelab package.
        #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "")]
        plot: Option<String>,
    },
    /// Run the seeds' experiments (a manifest of scenarios and before/after settings) and
    /// print a comparison table for each.
    #[command(after_help = seeds_help())]
    Seeds {
        /// The manifest (default: experiments.toml in $PAGELAB_SEEDS, else
        /// examples/seeds/experiments.toml in the current directory or the binary's checkout).
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// Only these experiment ids (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Write each run's report as DIR/<experiment>-<run>.json.
        #[arg(long)]
        json_dir: Option<PathBuf>,
    },
    /// Convert an oracleGeneral trace to pagelab's dense format (object ids mapped to page
    /// indices once).
    TraceConvert { input: PathBuf, output: PathBuf },
    /// Know your trace: accesses, distinct pages, reads and writes, one-hit wonders, the
    /// share of the most popular pages and a reuse-distance histogram (exact up to 2^24
    /// accesses, sampled beyond).
    TraceStats {
        /// The trace.
        trace: PathBuf,
        /// Its format, as for `run --trace` (text, lcs, csv:COLUMNS, blkparse, msr,
        /// oracleGeneral, dense, iolog).
        #[arg(long, default_value = "oracleGeneral")]
        trace_format: String,
        /// Also draw the popularity curve and an access heatmap as PREFIX-popularity.png and
        /// PREFIX-heatmap.png (default PREFIX: the trace's name without its extension, in the
        /// current directory); needs Python with matplotlib and the pagelab package.
        #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "")]
        plot: Option<String>,
        /// Write the statistics as JSON to this file ("-" for standard output).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Run a scenario in a real Debian kernel under qemu and in the model; print the fidelity
    /// table (counter, kernel, pagelab, error %).
    Oracle(pagelab_oracle::OracleArgs),
    /// Compare runs side by side (mmtests compare-kernels style), the first as baseline.
    Compare {
        /// Reports written by `pagelab run --json`.
        #[arg(required = true, num_args = 1..)]
        reports: Vec<PathBuf>,
        /// Column labels, one per report, in order (default: scenario/kernel-policy).
        #[arg(long, value_delimiter = ',')]
        labels: Vec<String>,
    },
    /// List every policy, one line each: name, where it runs (trace, machine, both), what it is.
    Policies,
    /// Measure this host's costs (a page copy, zram's compression and decompression on pages
    /// of a declared compressibility, a contended cache line, and its kernel's own: a system
    /// call, a minor fault, page-cache reclaim, an rstat flush) and write them as `[time]`
    /// tables a scenario can take in (docs/scenarios.md, "Costs measured on your host").
    Calibrate {
        /// Write the TOML to this file ("-" or absent: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The fraction of each page that is zeros, the rest random bytes (0 to 1).
        #[arg(long, default_value_t = 0.5)]
        compressibility: f64,
        /// The zram algorithm whose figures go into `[time.swap]`: lz4 or zstd.
        #[arg(long, default_value = "lz4")]
        algorithm: String,
        /// Fewer, shorter batches: a quick look, noisier figures.
        #[arg(long)]
        quick: bool,
        /// The directory of the scratch file whose page-cache reclaim is timed (default: the
        /// temporary directory); it must be on a disk file system, not tmpfs.
        #[arg(long)]
        scratch: Option<PathBuf>,
    },
    /// The counters of a trace's replay at a range of memory sizes: every point a full replay,
    /// or (--sample R) a miniature simulation of a spatially hashed R of the pages in R of
    /// the memory, with an error estimate from two hash seeds. With --vary, a scenario's
    /// counters at a range of one of its sizes (a cgroup's limit, the machine's memory), every
    /// point a full run or (--sample R) two miniature scenarios.
    Curve {
        /// The trace (oracleGeneral, plain or zstd, or dense), or with --vary a scenario.
        #[arg(value_name = "TRACE|SCENARIO")]
        trace: PathBuf,
        /// The trace's format, as for `run --trace` (default oracleGeneral); not with --vary.
        #[arg(long)]
        trace_format: Option<String>,
        /// Any policy that runs on traces (pagelab policies): classic, mglru, lru, s3fifo, ...
        /// (default classic); with a scenario, short for --set machine.policy=P. Several,
        /// comma-separated (classic,mglru): a curve each, overlaid in one figure a counter.
        #[arg(long)]
        policy: Option<String>,
        /// A trace's sizes: A..B:N (N evenly spaced), or a list; bytes (64M, 4096p) or a
        /// percentage of the trace's distinct pages (1%..20%:20; with --sample, of the
        /// distinct pages the samples estimate).
        #[arg(long, required_unless_present = "vary", conflicts_with = "vary")]
        memory: Option<String>,
        /// A scenario's size key and its sizes, KEY=A..B:N or KEY=a,b,c
        /// (cgroup./db.max=64M..1G:16, machine.memory=1G,2G,4G): one full run a size.
        #[arg(long, value_name = "KEY=SIZES")]
        vary: Option<String>,
        /// With a kernel model: the kernel version (default 6.1); with a scenario, short for
        /// --set machine.kernel=K. Several, comma-separated (6.1,6.12): a curve each.
        #[arg(long)]
        kernel: Option<String>,
        /// Miniature simulation at this sampling rate (0 < R <= 1); without it every point
        /// replays the whole trace (runs the whole scenario).
        #[arg(long)]
        sample: Option<f64>,
        /// Counters to report besides misses and miss_ratio (kernel models' vmstat names;
        /// default workingset_refault_file, workingset_activate_file, pgscan_file,
        /// pgsteal_file). With a scenario, the counters to report (vmstat names or
        /// throughput_ops_s, elapsed_s, ops, oom_kills, unfinished_tasks; default
        /// workingset_refault_file, workingset_refault_anon, pswpin, pgpgin, pgsteal_file,
        /// pgsteal_anon, pswpout, throughput_ops_s, oom_kills, unfinished_tasks).
        #[arg(long, value_delimiter = ',')]
        counters: Vec<String>,
        /// Overrides of the kernel model's machine, as for `run --trace`; or of the scenario,
        /// as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// With a scenario: runs at a time (default: one a core).
        #[arg(long)]
        threads: Option<usize>,
        /// Write the curve as JSON ("-" for standard output): `provenance` (versions, --set,
        /// with --vary the scenario as resolved and the --vary itself) and `points`, in size order, each
        /// an object with `memory` (bytes), the counters, and with --sample each counter's
        /// error estimate `<counter>_error` (docs/tables.md).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the points as a Parquet table: `memory`, the counters, then (with --sample)
        /// their `<counter>_error` columns.
        #[arg(long, value_name = "OUT")]
        parquet: Option<PathBuf>,
        /// Draw one PNG a counter, PREFIX-<counter>.png (default PREFIX: the trace's name
        /// without its extension, then "-curve"): the exact points as a line, sampled ones
        /// with their error band; needs Python with matplotlib and the pagelab package.
        #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "")]
        plot: Option<String>,
    },
}

/// A curve's warnings on standard error, each point named by `point` from its size.
fn print_warnings(points: &pagelab::curve::Points, point: impl Fn(u64) -> String) {
    for p in &points.points {
        if let Some(w) = &p.warning {
            eprintln!("pagelab: warning: {}: {w}", point(p.memory));
        }
    }
}

/// The bundled manifest, whose experiments `pagelab seeds --help` lists.
const SEEDS_MANIFEST: &str = include_str!("../../../examples/seeds/experiments.toml");

/// `pagelab seeds --help`'s list of the bundled experiments: id and title.
fn seeds_help() -> String {
    let mut out = String::from("Experiments (examples/seeds/experiments.toml; run some with --only ID,...):\n");
    match pagelab::experiments::parse(SEEDS_MANIFEST, "examples/seeds/experiments.toml") {
        Ok(exps) => {
            let w = exps.iter().map(|e| e.id.len()).max().unwrap_or(0);
            for e in exps {
                out += &format!("  {:<w$}  {}\n", e.id, e.title);
            }
        }
        Err(e) => out += &format!("  (the bundled manifest does not parse: {e})\n"),
    }
    out
}

/// Runs the command line on `args` (the program name first) and returns the process's exit
/// status: 0, 1 for an error (printed as `pagelab: ...`), or clap's own status for a usage
/// error or `--help`.
pub fn main_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match real_main(cli).and_then(|()| output::flush_stdout()) {
        Ok(()) => 0,
        // The reader of our output went away (`| head -1`): end quietly, as Unix tools do.
        Err(e) if output::is_broken_pipe(&e) => 141,
        Err(e) => {
            eprintln!("pagelab: {}", escape_controls(&format!("{e:#}")));
            1
        }
    }
}

/// An error message with its control characters (but newlines and tabs) written as `\u{..}`
/// escapes: a path or a value the user gave, quoted in the message, cannot move the cursor,
/// recolor or clear the terminal.
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

fn real_main(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Curve { trace, trace_format, policy, memory, vary, kernel, sample, counters, set, threads, json, parquet, plot } => {
            // Several --policy or --kernel values (comma-separated): one curve each, drawn in
            // one figure, in the order kernel then policy.
            let list = |v: &Option<String>| -> Vec<Option<String>> {
                match v {
                    Some(v) => v.split(',').map(|x| Some(x.trim().to_string())).collect(),
                    None => vec![None],
                }
            };
            let combos: Vec<(Option<String>, Option<String>)> =
                list(&kernel).into_iter().flat_map(|k| list(&policy).into_iter().map(move |p| (k.clone(), p))).collect();
            if combos.len() > 1 && parquet.is_some() {
                anyhow::bail!("--parquet writes one curve: give one --policy and one --kernel (with several, --json writes every curve's points)");
            }
            let input = if vary.is_some() { "the scenario" } else { "the trace" };
            let mut files = output::Files::inputs([(input, trace.as_path())]);
            let out = json.as_deref().map(|p| files.output("--json", p, true)).transpose()?;
            let parquet = parquet.as_deref().map(|p| files.output("--parquet", p, false)).transpose()?;
            let prefix = plot.map(|p| plot_prefix(&trace, &p, "-curve")).transpose()?;
            if prefix.is_some() {
                check_python_plot()?;
            }
            let outputs = CurveOutputs { json: out, parquet, prefix };
            let label = |k: &Option<String>, p: &Option<String>| [k.as_deref(), p.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
            let mut curves = Vec::new();
            if let Some(vary) = vary {
                if let Some(f) = trace_format {
                    anyhow::bail!("--trace-format {f}: --vary runs a scenario, which has no trace format (give a trace without --vary)");
                }
                let key = vary.split_once('=').map_or(vary.as_str(), |(k, _)| k.trim()).to_string();
                // The scenario every point shares: the file with the fixed overrides (with one
                // --policy and --kernel, theirs first), before the varied key.
                let fixed = match &combos[..] {
                    [(k, p)] => machine_shorthands(set.clone(), [("kernel", k.clone()), ("policy", p.clone())])?,
                    _ => set.clone(),
                };
                let mut provenance = serde_json::to_value(pagelab::report::Provenance::of(&pagelab::Scenario::load(&trace, &fixed)?))?;
                provenance["vary"] = vary.clone().into();
                for (k, p) in &combos {
                    let set = machine_shorthands(set.clone(), [("kernel", k.clone()), ("policy", p.clone())])?;
                    let c = pagelab::curve::ScenarioCurve { path: &trace, set: &set, vary: &vary, counters: &counters, threads: threads.unwrap_or(0), sample };
                    let points = pagelab::curve::run_scenario(&c)?;
                    print_warnings(&points, |m| format!("{key}={m}"));
                    curves.push((label(k, p), points));
                }
                let name = trace.file_stem().map_or("scenario".into(), |n| n.to_string_lossy().into_owned());
                let title = match sample {
                    Some(r) => format!("{name}: {key}, miniature scenarios at R = {r}"),
                    None => format!("{name}: {key}"),
                };
                return write_curves(&curves, outputs, provenance, &title, &format!("{key} (MiB)"));
            }
            if let Some(t) = threads {
                anyhow::bail!("--threads {t}: it sets how many of a scenario's runs (--vary) go at a time; a trace's curve does not take it");
            }
            if trace_format.is_none() && looks_like_a_scenario(&trace) {
                anyhow::bail!(
                    "{}: this is a scenario, not a trace: a scenario's curve takes --vary KEY=SIZES (e.g. --vary machine.memory=1G,2G,4G), not --memory",
                    trace.display()
                );
            }
            let memory = memory.expect("clap requires --memory without --vary");
            for (k, p) in &combos {
                let kernel = kernel_for(p, k.clone())?;
                let policy = p.clone().unwrap_or_else(|| "classic".into());
                let c = pagelab::curve::Curve {
                    path: &trace,
                    format: trace_format.as_deref().unwrap_or(DEFAULT_TRACE_FORMAT),
                    policy: &policy,
                    kernel: &kernel,
                    set: &set,
                    memory: &memory,
                    sample,
                    counters: &counters,
                };
                let points = pagelab::curve::run(&c)?;
                print_warnings(&points, |m| format!("--memory {m} bytes"));
                curves.push((label(k, p), points));
            }
            let name = trace.file_name().map_or("trace".into(), |n| n.to_string_lossy().into_owned());
            let what = if combos.len() > 1 {
                combos.iter().map(|(k, p)| label(k, p)).collect::<Vec<_>>().join(", ")
            } else {
                policy.unwrap_or_else(|| "classic".into())
            };
            let title = match sample {
                Some(r) => format!("{what} on {name}, miniature simulation at R = {r}"),
                None => format!("{what} on {name}"),
            };
            // As a trace replay's (`run --trace`): the versions and --set.
            write_curves(&curves, outputs, pagelab::report::plain_provenance(&set), &title, "memory (MiB)")
        }
        Cmd::Run { scenario: Some(scenario), trace_format, json, parquet, mut set, quiet, table, policy, memory, kernel, profile, .. } => {
            if let Some(f) = trace_format {
                anyhow::bail!("--trace-format {f}: it applies to --trace, not to a scenario");
            }
            if profile {
                set.push("report.profile=true".into());
            }
            if let Some(kernels) = kernel.as_deref().filter(|k| k.contains(',')) {
                if parquet.is_some() {
                    anyhow::bail!("--parquet writes one run's series: give one --kernel, not `{kernels}`");
                }
                if table {
                    anyhow::bail!("--table prints one run's report: with several kernels pagelab prints their comparison");
                }
                return run_kernels(&scenario, kernels, json.as_deref(), &set, policy, memory, quiet);
            }
            let set = machine_shorthands(set, [("kernel", kernel), ("policy", policy), ("memory", memory)])?;
            run(&scenario, json.as_deref(), parquet.as_deref(), &set, quiet, table)
        }
        Cmd::Run { trace: Some(path), trace_format, policy, memory, kernel, json, parquet, set, quiet, .. } => {
            let memory = memory.expect("clap requires --memory with --trace");
            let kernel = kernel_for(&policy, kernel)?;
            let policy = policy.unwrap_or_else(|| "classic".into());
            let mut files = output::Files::inputs([("the trace", path.as_path())]);
            let json = json.as_deref().map(|p| files.output("--json", p, true)).transpose()?;
            let parquet = parquet.as_deref().map(|p| files.output("--parquet", p, false)).transpose()?;
            if parquet.is_some() {
                if memory.contains(',') {
                    anyhow::bail!("--parquet writes one run's series: give one --memory size, not `{memory}`");
                }
                if !is_kernel_model(&policy) {
                    anyhow::bail!("--parquet writes the run's series, which only the kernel models (classic, mglru) report, not `{policy}`: for a plain cache's miss ratios use `pagelab curve --parquet`");
                }
            }
            let format = trace_format.as_deref().unwrap_or(DEFAULT_TRACE_FORMAT);
            let o = trace::TraceRun { path: &path, format, policy: &policy, memory: &memory, kernel: &kernel, set: &set };
            let (v, table) = trace::run(&o)?;
            let json_to_stdout = json.as_ref().is_some_and(output::Output::is_stdout);
            if let Some(p) = parquet {
                write_series(p, &v)?;
            }
            if let Some(out) = json {
                out.write((serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
            }
            if !quiet && !json_to_stdout {
                out!("{table}")?;
            }
            Ok(())
        }
        Cmd::Run { .. } => unreachable!("clap requires a scenario or --trace"),
        Cmd::TraceConvert { input, output } => {
            let out = output::Files::inputs([("the input", input.as_path())]).output("trace-convert's output", &output, false)?;
            trace::convert(&input, &output, out)
        }
        Cmd::TraceStats { trace, trace_format, plot, json } => {
            let json = json.as_deref().map(|p| output::Files::inputs([("the trace", trace.as_path())]).output("--json", p, true)).transpose()?;
            trace::stats(&trace, &trace_format, plot.as_deref(), json)
        }
        Cmd::Compare { reports, labels } => compare(&reports, &labels),
        Cmd::Oracle(a) => pagelab_oracle::main(&a),
        Cmd::Seeds { manifest, only, threads, json_dir } => seeds(&seeds_manifest(manifest)?, &only, threads, json_dir.as_deref()),
        Cmd::Size { scenario, cgroup, targets, lo, hi, tolerance, set, threads, json, plot } => {
            let mut files = output::Files::inputs([("the scenario", scenario.as_path())]);
            let out = json.as_deref().map(|p| files.output("--json", p, true)).transpose()?;
            let prefix = plot.map(|p| plot_prefix(&scenario, &p, "-size")).transpose()?;
            if prefix.is_some() {
                check_python_plot()?;
            }
            let c = pagelab::size::Size {
                path: &scenario,
                set: &set,
                cgroup: &cgroup,
                targets: &targets,
                lo: lo.as_deref(),
                hi: hi.as_deref(),
                tolerance: &tolerance,
                threads,
            };
            let sizing = pagelab::size::run(&c)?;
            for w in &sizing.warnings {
                eprintln!("pagelab: warning: {w}");
            }
            if !out.as_ref().is_some_and(output::Output::is_stdout) {
                out!("{}", size_table(&sizing))?;
            }
            if let Some(out) = out {
                let mut provenance = serde_json::to_value(pagelab::report::Provenance::of(&pagelab::Scenario::load(&scenario, &set)?))?;
                provenance["size"] = serde_json::json!({"cgroup": cgroup, "targets": targets, "lo": lo, "hi": hi, "tolerance": tolerance});
                let v = serde_json::json!({"provenance": provenance, "size": sizing.to_json()});
                out.write((serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
            }
            if let Some(prefix) = prefix {
                let points: Vec<serde_json::Value> = sizing.to_json()["points"].as_array().cloned().unwrap_or_default();
                let counters: Vec<&String> = sizing.targets.iter().map(|t| &t.metric).collect();
                let name = scenario.file_stem().map_or("scenario".into(), |n| n.to_string_lossy().into_owned());
                let title = format!("{name}: {} (answer {})", sizing.key, pagelab::size::mib(sizing.answer));
                let data = serde_json::json!({"curves": [{"label": null, "points": points}], "counters": counters, "title": title, "xlabel": format!("{} (MiB)", sizing.key)});
                draw_with_python("curve_png", &data, &prefix)?;
            }
            Ok(())
        }
        Cmd::Sweep { scenario, vary, set, threads, json, csv, parquet, quiet } => {
            sweep(&scenario, &vary, &set, threads, Outputs { json: json.as_deref(), csv: csv.as_deref(), parquet: parquet.as_deref() }, quiet)
        }
        Cmd::Policies => policies(),
        Cmd::Calibrate { out, compressibility, algorithm, quick, scratch } => {
            calibrate::run(&calibrate::Options { compressibility, algorithm: &algorithm, quick, out: out.as_deref(), scratch: scratch.as_deref() })
        }
    }
}

/// Whether `path`, given to `curve` as a trace, is a scenario file: named `.toml`, or text
/// that starts with a TOML table or comment.
fn looks_like_a_scenario(path: &std::path::Path) -> bool {
    if path.extension().is_some_and(|e| e == "toml") {
        return true;
    }
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut head)).unwrap_or(0);
    let head = &head[..n];
    pagelab_trace::not_oracle_general(head).is_some_and(|why| why.contains("text file"))
        && matches!(head.iter().find(|b| !b.is_ascii_whitespace()), Some(b'[' | b'#'))
}

/// A trace's format when `--trace-format` is not given.
const DEFAULT_TRACE_FORMAT: &str = "oracleGeneral";

/// Whether `policy` is one of the kernel models (classic, mglru), which replay a trace as a
/// machine, rather than a plain cache (the registry's one answer, `kernel_lru`).
fn is_kernel_model(policy: &str) -> bool {
    pagelab::policy::registry::kernel_lru(policy).is_some()
}

/// The kernel a trace replay or curve runs (default 6.1): `--kernel` is refused with a plain
/// cache, which has no kernel.
fn kernel_for(policy: &Option<String>, kernel: Option<String>) -> Result<String> {
    match (policy, kernel) {
        (Some(p), Some(k)) if !is_kernel_model(p) && pagelab::policy::registry::find(p).is_some() => {
            anyhow::bail!("--kernel {k}: `{p}` is a plain cache, which models no kernel (--kernel applies to classic and mglru)")
        }
        (_, k) => Ok(k.unwrap_or_else(|| "6.1".into())),
    }
}

/// `pagelab policies`: the registry, one line per policy.
fn policies() -> Result<()> {
    out!("{}", pagelab::policy::registry::listing())?;
    Ok(())
}

/// A sweep's output files.
struct Outputs<'a> {
    json: Option<&'a std::path::Path>,
    csv: Option<&'a std::path::Path>,
    parquet: Option<&'a std::path::Path>,
}

fn sweep(path: &std::path::Path, vary: &[String], set: &[String], threads: usize, outputs: Outputs, quiet: bool) -> Result<()> {
    use pagelab::sweep::{count, run, Axis};
    let Outputs { json, csv, parquet } = outputs;
    let axes = vary.iter().map(|v| Axis::parse(v)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    let mut files = output::Files::inputs([("the scenario", path)]);
    let json = json.map(|p| files.output("--json", p, true)).transpose()?;
    let csv = csv.map(|p| files.output("--csv", p, true)).transpose()?;
    let parquet = parquet.map(|p| files.output("--parquet", p, false)).transpose()?;
    if [&json, &csv].iter().filter(|o| o.as_ref().is_some_and(output::Output::is_stdout)).count() > 1 {
        anyhow::bail!("--json - and --csv -: only one output can go to standard output");
    }
    let quiet = quiet || [&json, &csv].iter().any(|o| o.as_ref().is_some_and(output::Output::is_stdout));
    let text = pagelab::Scenario::read_text(path)?;
    let name = path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let n = count(&axes).map_err(anyhow::Error::msg)? as u64;
    let bar = if quiet || !std::io::stderr().is_terminal() { ProgressBar::hidden() } else { ProgressBar::new(n) };
    let results = run(&text, &path.display().to_string(), &name, set, &axes, threads, &|| bar.inc(1))?;
    bar.finish_and_clear();
    if results.iter().all(|(_, r)| r.is_err()) {
        let (p, e) = results.iter().find_map(|(p, r)| r.as_ref().err().map(|e| (p, e))).expect("a sweep has a point");
        anyhow::bail!("every point failed, so nothing is written; the first, {}: {e}", p.label());
    }
    let keys = ["workingset_refault_file", "workingset_refault_anon", "pgscan_file", "pgscan_anon", "pgsteal_file", "pgsteal_anon", "pswpout", "pswpin"];
    if !quiet {
        out!("{:<36}", "point")?;
        for k in keys {
            out!(" {:>14}", k.trim_start_matches("workingset_"))?;
        }
        outln!(" {:>10} {:>12} {:>9} {:>10}", "elapsed s", "ops/s", "oom kills", "unfinished")?;
        for (p, r) in &results {
            out!("{:<36}", p.label())?;
            match r {
                Ok(r) => {
                    for k in keys {
                        out!(" {:>14}", pagelab::report::thousands(r.vmstat[k]))?;
                    }
                    let (kills, unfinished) = r.outcome();
                    let flag = if unfinished > 0 { "  (tasks OOM-killed: counters cut short)" } else { "" };
                    outln!(" {:>10.3} {:>12} {kills:>9} {unfinished:>10}{flag}", r.elapsed_s, pagelab::report::thousands_f64(r.throughput_ops_s, 0))?;
                }
                Err(e) => outln!(" failed: {e}")?,
            }
        }
    }
    if json.is_some() || parquet.is_some() {
        let v: Vec<serde_json::Value> = results
            .iter()
            .map(|(p, r)| {
                let point: serde_json::Map<String, serde_json::Value> =
                    p.overrides.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
                match r {
                    Ok(r) => {
                        let (kills, unfinished) = r.outcome();
                        serde_json::json!({"point": point, "oom_kills": kills, "unfinished_tasks": unfinished, "report": r})
                    }
                    Err(e) => serde_json::json!({"point": point, "error": e}),
                }
            })
            .collect();
        if let Some(out) = json {
            out.write((serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
        }
        if let Some(out) = parquet {
            let keys: Vec<String> = axes.iter().map(|a| a.key.clone()).collect();
            parquet::write(out, &pagelab::tables::Table::sweep(&keys, &v))?;
        }
    }
    if let Some(out) = csv {
        let mut text = String::new();
        let counters: Vec<String> = results.iter().find_map(|(_, r)| r.as_ref().ok()).map(|r| r.vmstat.keys().cloned().collect()).unwrap_or_default();
        let head: Vec<String> = axes
            .iter()
            .map(|a| a.key.clone())
            .chain(["elapsed_s", "ops", "throughput_ops_s", "oom_kills", "unfinished_tasks"].map(String::from))
            .chain(counters.iter().cloned())
            .collect();
        text += &head.join(",");
        text.push('\n');
        for (p, r) in &results {
            let Ok(r) = r else { continue };
            let mut row: Vec<String> = p.overrides.iter().map(|(_, v)| v.clone()).collect();
            let (kills, unfinished) = r.outcome();
            row.extend([r.elapsed_s.to_string(), r.ops.to_string(), r.throughput_ops_s.to_string(), kills.to_string(), unfinished.to_string()]);
            row.extend(counters.iter().map(|k| r.vmstat.get(k).copied().unwrap_or(0).to_string()));
            text += &row.join(",");
            text.push('\n');
        }
        out.write(text.as_bytes())?;
    }
    if let Some((p, Err(e))) = results.iter().find(|(_, r)| r.is_err()) {
        let failed = results.iter().filter(|(_, r)| r.is_err()).count();
        anyhow::bail!("{failed} of {} points failed, the first {}: {e}", results.len(), p.label());
    }
    Ok(())
}

/// The seeds' manifest: the one given, else `experiments.toml` in `$PAGELAB_SEEDS` (a
/// directory), else examples/seeds/experiments.toml under the current directory or under a
/// directory above the binary (its checkout: target/release/pagelab). Absent, the error says
/// where it looked.
fn seeds_manifest(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p);
    }
    let rel = std::path::Path::new("examples/seeds/experiments.toml");
    let mut looked: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("PAGELAB_SEEDS") {
        looked.push(PathBuf::from(d).join("experiments.toml"));
    }
    looked.push(rel.to_path_buf());
    if let Ok(exe) = std::env::current_exe() {
        looked.extend(exe.ancestors().skip(1).take(4).map(|d| d.join(rel)));
    }
    if let Some(p) = looked.iter().find(|p| p.is_file()) {
        return Ok(p.clone());
    }
    let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
    anyhow::bail!("no seeds manifest: looked for {}; give --manifest FILE or set PAGELAB_SEEDS to the examples/seeds directory", list.join(", "))
}

fn seeds(manifest: &std::path::Path, only: &[String], threads: usize, json_dir: Option<&std::path::Path>) -> Result<()> {
    let mut exps = pagelab::experiments::load(manifest).map_err(anyhow::Error::msg)?;
    if let Some(dir) = json_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if !only.is_empty() {
        for id in only {
            if !exps.iter().any(|e| &e.id == id) {
                anyhow::bail!("{}: no experiment `{id}`", manifest.display());
            }
        }
        exps.retain(|e| only.contains(&e.id));
    }
    let total: usize = exps.iter().map(|e| e.runs.len()).sum();
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(total as u64);
        b.set_style(ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} runs ({elapsed})")?.progress_chars("=> "));
        b.set_message("seeds");
        b
    } else {
        ProgressBar::hidden()
    };
    let outcomes = pagelab::experiments::run(&exps, threads, &|| bar.inc(1)).map_err(anyhow::Error::msg)?;
    bar.finish_and_clear();
    for o in &outcomes {
        outln!("{}", o.table())?;
        if let Some(dir) = json_dir {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            for (spec, r) in o.experiment.runs.iter().zip(&o.reports) {
                if let Ok(r) = r {
                    let slug: String = spec.label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
                    let p = dir.join(format!("{}-{slug}.json", o.experiment.id));
                    let out = output::Files::inputs([("the manifest", manifest)]).output("--json-dir", &p, false)?;
                    out.write((serde_json::to_string_pretty(r)? + "\n").as_bytes())?;
                }
            }
        }
    }
    Ok(())
}

fn compare(paths: &[PathBuf], labels: &[String]) -> Result<()> {
    if !labels.is_empty() && labels.len() != paths.len() {
        anyhow::bail!("--labels has {} labels for {} reports", labels.len(), paths.len());
    }
    let mut runs = paths.iter().map(|p| pagelab::compare::Run::load(p)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    for (r, l) in runs.iter_mut().zip(labels) {
        r.label = l.clone();
    }
    out!("{}", pagelab::compare::table(&runs, &pagelab::compare::default_rows()))?;
    Ok(())
}

/// `run S --kernel A,B,...`: the scenario on each kernel (in the order given), then the
/// comparison table, every vmstat counter that changed, and the rules that differ between
/// each pair of kernels (kernel.rs's predicates). `--json` writes the reports as an array.
fn run_kernels(
    path: &std::path::Path,
    kernels: &str,
    json: Option<&std::path::Path>,
    set: &[String],
    policy: Option<String>,
    memory: Option<String>,
    quiet: bool,
) -> Result<()> {
    let mut parsed = Vec::new();
    for k in kernels.split(',') {
        let kernel = pagelab::kernel::Kernel::parse(k).map_err(|e| anyhow::anyhow!("--kernel {kernels}: {e}"))?;
        if parsed.contains(&kernel) {
            anyhow::bail!("--kernel {kernels}: {} is given twice", kernel.name());
        }
        parsed.push(kernel);
    }
    let mut files = output::Files::inputs([("the scenario", path)]);
    let json_out = json.map(|p| files.output("--json", p, true)).transpose()?;
    let mut reports = Vec::new();
    let mut runs = Vec::new();
    for &k in &parsed {
        let set = machine_shorthands(set.to_vec(), [("kernel", Some(k.name().to_string())), ("policy", policy.clone()), ("memory", memory.clone())])?;
        let s = pagelab::Scenario::load(path, &set)?;
        let report = pagelab::run(&s, |_, _| {}).map_err(|e| anyhow::anyhow!("kernel {}: {e}", k.name()))?;
        for w in &report.warnings {
            eprintln!("pagelab: warning: kernel {}: {w}", k.name());
        }
        runs.push(pagelab::compare::Run::from_report(&format!("{} {}", k.name(), s.machine.policy.name()), &report));
        reports.push(report);
    }
    let json_to_stdout = json_out.as_ref().is_some_and(output::Output::is_stdout);
    if let Some(out) = json_out {
        out.write((serde_json::to_string_pretty(&reports)? + "\n").as_bytes())?;
    }
    if quiet || json_to_stdout {
        return Ok(());
    }
    outln!("{} on kernels {}", path.display(), parsed.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "))?;
    outln!("")?;
    out!("{}", pagelab::compare::table(&runs, &pagelab::compare::default_rows()))?;
    outln!("")?;
    outln!("vmstat counters that changed:")?;
    out!("{}", pagelab::compare::changed_counters(&runs))?;
    outln!("")?;
    outln!("Rules that differ (crates/pagelab/src/kernel.rs; docs/kernel-7.3.md):")?;
    out!("{}", pagelab::compare::differing_rules(&parsed))?;
    Ok(())
}

fn run(path: &std::path::Path, json: Option<&std::path::Path>, parquet: Option<&std::path::Path>, set: &[String], quiet: bool, table: bool) -> Result<()> {
    let s = pagelab::Scenario::load(path, set)?;
    let mut files = output::Files::inputs([("the scenario", path)]);
    let json_out = json.map(|p| files.output("--json", p, true)).transpose()?;
    let parquet = parquet.map(|p| files.output("--parquet", p, false)).transpose()?;
    let json_to_stdout = json_out.as_ref().is_some_and(output::Output::is_stdout);
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
    for w in &report.warnings {
        eprintln!("pagelab: warning: {w}");
    }
    if let Some(p) = parquet {
        write_series(p, &serde_json::to_value(&report)?)?;
    }
    if let Some(out) = json_out {
        out.write((serde_json::to_string_pretty(&report)? + "\n").as_bytes())?;
    }
    match json {
        _ if quiet || json_to_stdout => {}
        None => out!("{}", report.table())?,
        Some(_) if table => out!("{}", report.table())?,
        Some(o) => outln!("{}(the full report is in {})", summary(&report.table()), o.display())?,
    }
    Ok(())
}

/// The summary lines of a run's text report: those before its first blank line (the run,
/// its OOM kills, pacing and lockstep).
fn summary(table: &str) -> String {
    table.lines().take_while(|l| !l.is_empty()).map(|l| format!("{l}\n")).collect()
}

/// `run --parquet`: the report's series as a table.
fn write_series(out: output::Output, report: &serde_json::Value) -> Result<()> {
    let table = pagelab::tables::Table::series(report).map_err(|e| anyhow::anyhow!("--parquet: {e}"))?;
    parquet::write(out, &table)
}

/// `--plot`'s prefix: the one given, or the input's name up to its first dot followed by
/// `suffix`, in the current directory. Its directory must exist (checked before the run).
fn plot_prefix(input: &std::path::Path, given: &str, suffix: &str) -> Result<String> {
    let prefix = if given.is_empty() {
        let name = input.file_name().map_or("trace".into(), |n| n.to_string_lossy().into_owned());
        format!("{}{suffix}", name.split('.').next().filter(|s| !s.is_empty()).unwrap_or("trace"))
    } else {
        given.to_string()
    };
    let dir = std::path::Path::new(&prefix).parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        anyhow::bail!("--plot {prefix}: {} is not a directory", dir.display());
    }
    Ok(prefix)
}

/// The Python interpreter `--plot` draws with: `PAGELAB_PYTHON`, else `python3` (the
/// wheel's `pagelab` command sets it to its own interpreter).
fn plot_python() -> String {
    std::env::var("PAGELAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Checks before a run that `--plot` will be able to draw: the interpreter runs and imports
/// matplotlib and pagelab.plot.
fn check_python_plot() -> Result<()> {
    let python = plot_python();
    let out = std::process::Command::new(&python)
        .args(["-c", "import matplotlib, pagelab.plot"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .with_context(|| format!("--plot runs {python} (set PAGELAB_PYTHON to another interpreter)"))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string();
        anyhow::bail!("--plot: {python} cannot import matplotlib and pagelab.plot ({why}): run in the .venv, see the README's Set-up, or set PAGELAB_PYTHON");
    }
    Ok(())
}

/// Hands `v` to Python's `pagelab.plot.<function>(v, prefix)`, which returns the paths it
/// wrote; prints them.
pub(crate) fn draw_with_python(function: &str, v: &serde_json::Value, prefix: &str) -> Result<()> {
    let python = plot_python();
    let code = format!("import json, sys\nfrom pagelab import plot\nfor p in plot.{function}(json.load(sys.stdin), sys.argv[1]): print(p)");
    let mut child = std::process::Command::new(&python)
        .args(["-c", &code, prefix])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("--plot runs {python} (set PAGELAB_PYTHON to another interpreter)"))?;
    let stdin = child.stdin.take().expect("piped");
    let mut stdin = std::io::BufWriter::new(stdin);
    serde_json::to_writer(&mut stdin, v)?;
    stdin.flush()?;
    drop(stdin);
    let status = child.wait()?;
    if !status.success() {
        anyhow::bail!("--plot: {python} could not draw the plots (it needs matplotlib and the pagelab package: run in the .venv, see the README's Set-up)");
    }
    Ok(())
}

/// Where a curve goes: the JSON and Parquet outputs (claimed early, so a bad path fails
/// before the runs) and the plots' prefix.
struct CurveOutputs {
    json: Option<output::Output>,
    parquet: Option<output::Output>,
    prefix: Option<String>,
}

/// Prints the curves' tables (unless the JSON goes to standard output) and writes their
/// outputs. The JSON is `{"provenance": ..., "points": [...]}` (with --vary, `vary` too,
/// inside `provenance`). One curve writes its points as they are; several (`--policy
/// classic,mglru`) are each headed by their label in the text, give `points` every curve's
/// points with `kernel` and `policy` keys, and share one figure a counter.
fn write_curves(curves: &[(String, pagelab::curve::Points)], o: CurveOutputs, provenance: serde_json::Value, title: &str, xlabel: &str) -> Result<()> {
    let several = curves.len() > 1;
    if !o.json.as_ref().is_some_and(output::Output::is_stdout) {
        for (label, points) in curves {
            if several {
                outln!("{label}:")?;
            }
            out!("{}", curve_table(points))?;
        }
    }
    let jsons: Vec<serde_json::Value> = curves.iter().map(|(_, p)| p.to_json()).collect();
    if let Some(out) = o.json {
        let v = if several {
            let mut all = Vec::new();
            for ((_, points), v) in curves.iter().zip(&jsons) {
                let first = points.points.first().and_then(|p| p.reports.first());
                for mut p in v.as_array().cloned().unwrap_or_default() {
                    for k in ["kernel", "policy"] {
                        let name = first.and_then(|r| r.get(k)).cloned().unwrap_or(serde_json::Value::Null);
                        p[k] = name;
                    }
                    all.push(p);
                }
            }
            serde_json::Value::Array(all)
        } else {
            jsons[0].clone()
        };
        let v = serde_json::json!({"provenance": provenance, "points": v});
        out.write((serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
    }
    if let Some(p) = o.parquet {
        parquet::write(p, &curves[0].1.table())?;
    }
    if let Some(prefix) = o.prefix {
        // The counters every curve has (a plain cache has no kernel counters).
        let counters: Vec<&String> = curves[0].1.counters.iter().filter(|c| curves.iter().all(|(_, p)| p.counters.contains(c))).collect();
        let drawn: Vec<serde_json::Value> =
            curves.iter().zip(&jsons).map(|((label, _), v)| serde_json::json!({"label": if several { Some(label) } else { None }, "points": v})).collect();
        let data = serde_json::json!({"curves": drawn, "counters": counters, "title": title, "xlabel": xlabel});
        draw_with_python("curve_png", &data, &prefix)?;
    }
    Ok(())
}

/// `pagelab size`'s answer: the size, every point run with each target's metric, and the
/// margin (each target's room at the answer, and the largest failing size below it).
fn size_table(s: &pagelab::size::Sizing) -> String {
    use pagelab::size::mib;
    let mut out = format!("smallest {} meeting every target: {} ({} bytes), to within {}\n", s.key, mib(s.answer), s.answer, mib(s.tolerance));
    let w = s.targets.iter().map(|t| t.metric.len()).max().unwrap_or(0).max(12);
    out += &format!("\n{:>12}  {:<4}", "size (MiB)", "pass");
    for t in &s.targets {
        out += &format!("  {:>w$}", t.metric);
    }
    out += "\n";
    for r in &s.runs {
        out += &format!("{:>12.2}  {:<4}", r.memory as f64 / (1 << 20) as f64, if r.pass { "yes" } else { "no" });
        for x in &r.metrics {
            out += &format!("  {:>w$}", format_metric(*x));
        }
        out += "\n";
    }
    let at = s.at_answer();
    out += &format!("\nmargin at {}:\n", mib(s.answer));
    for (i, t) in s.targets.iter().enumerate() {
        out += &format!(
            "  {}: {} {} {} (room {})\n",
            t.text,
            format_metric(at.metrics[i]),
            t.op(),
            format_metric(s.bounds[i]),
            format_metric(t.margin(at.metrics[i], s.bounds[i]))
        );
    }
    match s.below {
        Some(b) => out += &format!("  the largest size that fails: {} ({} below)\n", mib(b), mib(s.answer - b)),
        None => out += &format!("  the targets hold at --lo {} already: the smallest size may be lower\n", mib(s.lo)),
    }
    out
}

/// A metric for a table: integers as such, others to four significant places.
fn format_metric(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.4}")
    }
}

fn curve_table(points: &pagelab::curve::Points) -> String {
    let mut out = String::new();
    if let Some((rate, kept)) = points.sample {
        let th = pagelab::report::thousands;
        out += &format!("miniature simulation at R = {rate}: {} and {} pages kept (hash seeds 1 and 2)\n", th(kept[0]), th(kept[1]));
    }
    out += &format!("{:>12}", "memory");
    for n in &points.counters {
        out += &format!(" {n:>26}");
    }
    if points.sample.is_some() {
        out += &format!(" {:>12}", "sampled as");
    }
    out.push('\n');
    let mib = |b: u64| format!("{:>11}M", format!("{:.1}", b as f64 / (1 << 20) as f64));
    for p in &points.points {
        out += &mib(p.memory);
        for (i, n) in points.counters.iter().enumerate() {
            let v = p.values[i];
            let n0 = |x: f64| pagelab::report::thousands_f64(x, 0);
            let cell = match p.errors.as_ref().map(|e| e[i]) {
                Some(e) if n.as_str() == "miss_ratio" => format!("{v:.4} ±{e:.4}"),
                Some(e) => format!("{} ±{}", n0(v), n0(e)),
                None if n.as_str() == "miss_ratio" => format!("{v:.4}"),
                None => n0(v),
            };
            out += &format!(" {cell:>26}");
        }
        if let Some(m) = p.sample_memory {
            out += &format!(" {}", mib(m));
        }
        if p.warning.is_some() {
            out += "  (small: see the warning)";
        }
        out.push('\n');
    }
    out
}

/// `--kernel`, `--policy` and `--memory` given with a scenario: the `--set machine.KEY=VALUE`
/// they stand for, put before the explicit `--set`s. A shorthand and a `--set` of the same
/// key are refused, as nothing would say which one was meant.
fn machine_shorthands<const N: usize>(set: Vec<String>, shorthands: [(&str, Option<String>); N]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (k, v) in shorthands {
        let Some(v) = v else { continue };
        let key = format!("machine.{k}");
        if let Some(s) = set.iter().find(|s| s.split_once('=').is_some_and(|(sk, _)| sk.trim() == key)) {
            anyhow::bail!("--{k} {v} and --set {s} both set {key}: give one of them");
        }
        out.push(format!("{key}={}", toml_string(&v)));
    }
    out.extend(set);
    Ok(out)
}

/// `v` as a TOML string.
fn toml_string(v: &str) -> String {
    serde_json::to_string(v).expect("a string serializes")
}
