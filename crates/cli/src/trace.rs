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
