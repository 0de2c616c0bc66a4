//! `pagelab trace-stats` and the Python package's `trace_stats`: a trace's statistics
//! ([`pagelab_trace::stats`]) as JSON and as a text table.

use std::fmt::Write as _;
use std::path::Path;

use pagelab_trace::stats::TraceStats;
use serde_json::{json, Value};

/// Time × page bins of the heatmap, when asked for.
pub const HEATMAP_BINS: (usize, usize) = (200, 200);

/// Reads the trace at `path` in `format` (any `--trace-format`) and returns its statistics
/// as JSON (with the heatmap if `heatmap`) and as a table.
pub fn trace_stats(path: &Path, format: &str, heatmap: bool) -> Result<(Value, String), String> {
    let spec = crate::sim::trace_workload::spec(format)?;
    let s = pagelab_trace::stats::trace_stats(path, &spec, heatmap.then_some(HEATMAP_BINS)).map_err(|e| e.to_string())?;
    Ok((to_json(path, format, &s), table(path, format, &s)))
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

fn to_json(path: &Path, format: &str, s: &TraceStats) -> Value {
    let mut v = json!({
        "path": path.display().to_string(),
        "format": format,
        "accesses": s.accesses,
        "requests": s.requests,
        "skipped": s.skipped,
        "distinct_pages": s.distinct_pages,
        "page_bound": s.page_bound,
        "reads": s.reads,
        "writes": s.writes,
        "touches": s.touches,
        "plain": s.plain,
        "one_hit_wonders": s.one_hit_wonders,
        "one_hit_wonder_share": share(s.one_hit_wonders, s.distinct_pages),
        "top_1pct_share": s.top_1pct_share,
        "top_10pct_share": s.top_10pct_share,
        "time_span_s": s.time_span_ns.map(|(a, b)| (b - a) as f64 / 1e9),
        "reuse": {
            "exact": s.reuse_rate == 1.0,
            "rate": s.reuse_rate,
            "cold": s.cold,
            "histogram": s.reuse.iter().map(|b| json!({"min": b.min, "max": b.max, "accesses": b.accesses})).collect::<Vec<_>>(),
        },
        "popularity": s.popularity,
    });
    if let Some(h) = &s.heatmap {
        v["heatmap"] = json!({"time_bins": h.len(), "page_bins": h.first().map_or(0, |r| r.len()), "counts": h});
    }
    v
}

fn table(path: &Path, format: &str, s: &TraceStats) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({format}): {} accesses in {} requests ({} reads, {} writes, {} first touches, {} unmarked){}",
        path.display(),
        s.accesses,
        s.requests,
        s.reads,
        s.writes,
        s.touches,
        s.plain,
        if s.skipped > 0 { format!(", {} records skipped", s.skipped) } else { String::new() }
    );
    let _ = writeln!(
        out,
        "pages: {} distinct (indices below {}), {} one-hit wonders ({:.1}%)",
        s.distinct_pages,
        s.page_bound,
        s.one_hit_wonders,
        100.0 * share(s.one_hit_wonders, s.distinct_pages)
    );
    let _ =
        writeln!(out, "popularity: the top 1% of pages take {:.1}% of the accesses, the top 10% {:.1}%", 100.0 * s.top_1pct_share, 100.0 * s.top_10pct_share);
    if let Some((a, b)) = s.time_span_ns {
        let _ = writeln!(out, "time: {:.3} s from the first access to the last", (b - a) as f64 / 1e9);
    }
    let how = if s.reuse_rate == 1.0 { "exact".to_string() } else { format!("sampled at 1/{:.0}, scaled back", 1.0 / s.reuse_rate) };
    let _ = writeln!(out, "reuse distance (distinct pages between two accesses to a page; {how}):");
    let _ = writeln!(out, "  {:>21}  {:>14}", "first access", format!("{:.0}", s.cold));
    for b in &s.reuse {
        let range = if b.min == b.max { b.min.to_string() } else { format!("{}-{}", b.min, b.max) };
        let _ = writeln!(out, "  {range:>21}  {:>14.0}", b.accesses);
    }
    out
}
