//! `pagelab run --trace` and `pagelab trace-convert`. The replay itself is the library's
//! (`pagelab::replay`), which the Python package shares.

use std::path::Path;

use anyhow::{bail, Context, Result};

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
        let prefix = if prefix.is_empty() {
            let name = trace.file_name().map_or("trace".into(), |n| n.to_string_lossy().into_owned());
            name.split('.').next().filter(|s| !s.is_empty()).unwrap_or("trace").to_string()
        } else {
            prefix.to_string()
        };
        draw(&v, &prefix)?;
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

/// Hands the statistics to Python's `pagelab.plot.trace_stats_png` (`PAGELAB_PYTHON`, else
/// `python3`; the wheel's `pagelab` command sets it to its own interpreter).
fn draw(v: &serde_json::Value, prefix: &str) -> Result<()> {
    use std::io::Write;
    let python = std::env::var("PAGELAB_PYTHON").unwrap_or_else(|_| "python3".into());
    let code = "import json, sys\nfrom pagelab import plot\nfor p in plot.trace_stats_png(json.load(sys.stdin), sys.argv[1]): print(p)";
    let mut child = std::process::Command::new(&python)
        .args(["-c", code, prefix])
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
        bail!("--plot: {python} could not draw the plots (it needs matplotlib and the pagelab package: run in the .venv, see the README's Set-up)");
    }
    Ok(())
}
