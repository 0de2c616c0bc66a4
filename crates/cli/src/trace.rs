//! `pagelab run --trace` and `pagelab trace-convert`. The replay itself is the library's
//! (`pagelab::replay`), which the Python package shares.

use std::path::Path;

use anyhow::{Context, Result};

pub use pagelab::replay::{run, TraceRun};

/// `pagelab trace-convert`: an oracleGeneral trace to the dense format.
pub fn convert(input: &Path, output: &Path) -> Result<()> {
    let st = pagelab_trace::convert(input, output).with_context(|| format!("converting {}", input.display()))?;
    eprintln!("{}: {} records, {} pages, {} zero-size records", output.display(), st.records, st.pages, st.zero_size_records);
    Ok(())
}

/// `pagelab trace-stats`: the table (unless the JSON goes to standard output), the JSON, and
/// with `plot` the two PNGs, drawn by the Python package (`pagelab.plot.trace_stats_png`).
pub fn stats(trace: &Path, format: &str, plot: Option<&str>, json: Option<&Path>) -> Result<()> {
    let (v, table) = pagelab::trace_stats::trace_stats(trace, format, plot.is_some()).map_err(anyhow::Error::msg)?;
    if let Some(prefix) = plot {
        crate::draw_with_python("trace_stats_png", &v, &crate::plot_prefix(trace, prefix, "")?)?;
    }
    let to_stdout = json.is_some_and(|p| p.as_os_str() == "-");
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&v)?;
        if to_stdout {
            println!("{text}");
        } else {
            std::fs::write(p, text + "\n").with_context(|| format!("writing {}", p.display()))?;
        }
    }
    if !to_stdout {
        print!("{table}");
    }
    Ok(())
}
