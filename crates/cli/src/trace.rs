//! `pagelab run --trace` and `pagelab trace-convert`. The replay itself is the library's
//! (`pagelab::replay`), which the Python package shares.

use std::path::Path;

use anyhow::{Context, Result};

pub use pagelab::replay::{run, TraceRun};

/// `pagelab trace-convert`: an oracleGeneral trace to the dense format, written to `out`'s
/// temporary file and put in place at the end.
pub fn convert(input: &Path, output: &Path, out: crate::output::Output) -> Result<()> {
    let tmp = out.temp_path().expect("trace-convert writes a file");
    let st = pagelab_trace::convert(input, tmp).with_context(|| format!("converting {}", input.display()))?;
    out.commit()?;
    eprintln!("{}: {} records, {} pages, {} zero-size records", output.display(), st.records, st.pages, st.zero_size_records);
    Ok(())
}

/// `pagelab trace-stats`: the table (unless the JSON goes to standard output), the JSON, and
/// with `plot` the two PNGs, drawn by the Python package (`pagelab.plot.trace_stats_png`).
pub fn stats(trace: &Path, format: &str, plot: Option<&str>, json: Option<crate::output::Output>) -> Result<()> {
    let (v, table) = pagelab::trace_stats::trace_stats(trace, format, plot.is_some()).map_err(anyhow::Error::msg)?;
    if let Some(prefix) = plot {
        crate::draw_with_python("trace_stats_png", &v, &crate::plot_prefix(trace, prefix, "")?)?;
    }
    let to_stdout = json.as_ref().is_some_and(crate::output::Output::is_stdout);
    if let Some(out) = json {
        out.write((serde_json::to_string_pretty(&v)? + "\n").as_bytes())?;
    }
    if !to_stdout {
        out!("{table}")?;
    }
    Ok(())
}
