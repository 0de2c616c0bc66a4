//! `pagelab run --trace FILE --trace-format F` for the access-stream formats: every format
//! replays the same reference string to the same misses, and the kernel models keep reads
//! and writes apart.

use crate::pagelab;

fn path(name: &str) -> std::path::PathBuf {
    let dir = crate::scratch_dir("cli-trace-formats-test");
    dir.join(name)
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = pagelab().args(args).args(["--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The textbook reference string: with 3 frames OPT has 9 faults, LRU 12, FIFO 15.
const REFS: [u64; 20] = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1];

#[test]
fn every_format_replays_the_textbook_string_to_the_textbook_misses() {
    let text: String = REFS.iter().map(|r| format!("R {}\n", r * 3)).collect();
    let csv: String = REFS.iter().enumerate().map(|(i, r)| format!("{i},obj{r},4096,get\n")).collect();
    // Blocks 8 sectors apart: one 4 KiB page each.
    let blk: String =
        REFS.iter().enumerate().map(|(i, r)| format!("  8,0    0 {:>8} {:>5}.{:09} 100  C   R {} + 8 [0]\n", i + 1, 0, i * 1000, r * 8)).collect();
    let msr: String = REFS.iter().enumerate().map(|(i, r)| format!("{},src1,0,Read,{},4096,100\n", 128166372003061629u64 + i as u64, r * 4096)).collect();
    let lcs = path("refs.lcs");
    let recs: Vec<(u32, u64, i64, u8)> = REFS.iter().map(|&r| (1, r + 100, 4096, 1)).collect();
    pagelab_trace::access::lcs::write_lcs(&lcs, 2, &recs).unwrap();
    let files = [("refs.txt", text, "text"), ("refs.csv", csv, "csv:time=1,id=2,size=3,op=4"), ("refs.blk", blk, "blkparse"), ("refs.msr", msr, "msr")];
    let mut inputs: Vec<(std::path::PathBuf, &str)> = files
        .iter()
        .map(|(name, body, format)| {
            let p = path(name);
            std::fs::write(&p, body).unwrap();
            (p, *format)
        })
        .collect();
    inputs.push((lcs, "lcs"));
    // The older formats: oracleGeneral (and dense, converted from it) and a fio iolog.
    let og = path("refs.og");
    pagelab_trace::write_oracle(&og, pagelab_trace::with_next_access(&REFS.map(|r| r + 100), 4096), None).unwrap();
    let dense = path("refs.dense");
    pagelab_trace::convert(&og, &dense).unwrap();
    let iolog = path("refs.iolog");
    std::fs::write(&iolog, String::from("fio version 2 iolog\nf add\n") + &REFS.iter().map(|r| format!("f read {} 4096\n", r * 4096)).collect::<String>())
        .unwrap();
    inputs.extend([(og, "oracleGeneral"), (dense, "dense"), (iolog, "iolog")]);
    for (file, format) in &inputs {
        for (policy, misses) in [("opt", 9), ("lru", 12), ("fifo", 15)] {
            let v = run_json(&["run", "--trace", file.to_str().unwrap(), "--trace-format", format, "--policy", policy, "--memory", "12k"]);
            assert_eq!((v["misses"].as_u64(), v["ops"].as_u64()), (Some(misses), Some(20)), "{policy} {format}");
            // Pages: as written for text (3 × 7 + 1) and the iolog's file (7 + 1), else one
            // per distinct key.
            let pages = match *format {
                "text" => Some(22),
                "iolog" => Some(8),
                "oracleGeneral" | "dense" => None,
                _ => Some(6),
            };
            if let Some(pages) = pages {
                assert_eq!(v["trace"]["pages"], pages, "{policy} {format}");
            }
        }
        if *format != "iolog" {
            // A kernel model with room for all: each of the 6 distinct pages read once
            // (single-page reads without readahead; the iolog's reads have readahead).
            let v = run_json(&["run", "--trace", file.to_str().unwrap(), "--trace-format", format, "--policy", "classic", "--memory", "64M"]);
            assert_eq!((v["ops"].as_u64(), v["vmstat"]["pgpgin"].as_u64()), (Some(20), Some(24)), "classic {format}");
        }
    }
}

#[test]
fn a_kernel_model_reads_the_reads_and_writes_the_writes() {
    // Two writes of new pages, a read of a third page, a re-read of a written one: only the
    // third page is read from storage (4 KiB of pgpgin).
    let p = path("rw.txt");
    std::fs::write(&p, "W 0\nW 1\nR 2\nR 0\n").unwrap();
    let v = run_json(&["run", "--trace", p.to_str().unwrap(), "--trace-format", "text", "--memory", "64M", "--policy", "classic"]);
    assert_eq!(v["ops"], 4);
    assert_eq!(v["vmstat"]["pgpgin"], 4);
    assert_eq!(v["trace"]["counts"]["writes"], 2);
    assert_eq!(v["trace"]["counts"]["reads"], 2);
    assert_eq!(v["trace"]["pages"], 3);
}

#[test]
fn a_dropped_page_leaves_the_kernel_models_cache_without_a_shadow() {
    // Pages 0 and 1 are read; page 0's file is deleted (`D 0`) and the page read again: a
    // read from storage (pgpgin 12 KiB), not a refault, since truncation takes the shadow
    // entry too. Page 1 stays cached.
    let p = path("drop.txt");
    std::fs::write(&p, "R 0\nR 1\nD 0\nR 0\nR 1\n").unwrap();
    for policy in ["classic", "mglru"] {
        let v = run_json(&["run", "--trace", p.to_str().unwrap(), "--trace-format", "text", "--memory", "64M", "--policy", policy]);
        assert_eq!(v["vmstat"]["pgpgin"], 12, "{policy}");
        assert_eq!(v["vmstat"]["workingset_refault_file"], 0, "{policy}");
        assert_eq!(v["trace"]["counts"]["drops"], 1, "{policy}");
        assert_eq!(v["trace"]["counts"]["reads"], 4, "{policy}");
    }
}

#[test]
fn a_plain_cache_and_trace_stats_refuse_dropped_pages() {
    let p = path("drop-plain.txt");
    std::fs::write(&p, "R 0\nD 0\nR 0\n").unwrap();
    let out = pagelab().args(["run", "--trace", p.to_str().unwrap(), "--trace-format", "text", "--memory", "64M", "--policy", "lru"]).output().unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("drop-plain.txt") && e.contains("a plain cache cannot replay `D` lines"), "{e}");
    let out = pagelab().args(["trace-stats", p.to_str().unwrap(), "--trace-format", "text"]).output().unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("drop-plain.txt") && e.contains("`D` lines"), "{e}");
}

#[test]
fn a_malformed_trace_fails_the_run_with_file_and_line() {
    let p = path("bad.txt");
    std::fs::write(&p, "R 1\nR x\n").unwrap();
    for policy in ["lru", "classic"] {
        let out = pagelab().args(["run", "--trace", p.to_str().unwrap(), "--trace-format", "text", "--memory", "64M", "--policy", policy]).output().unwrap();
        assert!(!out.status.success());
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains("bad.txt: line 2: `x` is not a page index"), "{policy}: {e}");
    }
}

#[test]
fn trace_stats_knows_the_trace_in_any_format() {
    // Page 3 five times, pages 0..=2 once, reads and writes: as text and as MSR rows.
    let text = "T 0\nW 3\nR 3\n3\n1\nR 3\n2\nW 3\n";
    let p = path("stats.txt");
    std::fs::write(&p, text).unwrap();
    let out = pagelab().args(["trace-stats", p.to_str().unwrap(), "--trace-format", "text", "--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["accesses"].as_u64(), v["distinct_pages"].as_u64(), v["one_hit_wonders"].as_u64()), (Some(8), Some(4), Some(3)));
    assert_eq!((v["touches"].as_u64(), v["writes"].as_u64(), v["reads"].as_u64(), v["plain"].as_u64()), (Some(1), Some(2), Some(2), Some(3)));
    assert_eq!(v["top_1pct_share"], 5.0 / 8.0);
    assert_eq!(v["reuse"]["cold"], 4.0);
    assert_eq!(v["time_span_s"], serde_json::Value::Null);
    // The table, and a format with times.
    let msr: String = [(0u64, 0u64), (10_000_000, 8192), (30_000_000, 0)]
        .iter()
        .map(|(t, off)| format!("{},src1,0,Read,{off},4096,100\n", 128166372003061629u64 + t))
        .collect();
    let m = path("stats.msr");
    std::fs::write(&m, msr).unwrap();
    let out = pagelab().args(["trace-stats", m.to_str().unwrap(), "--trace-format", "msr"]).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("3 accesses in 3 requests") && table.contains("2 distinct") && table.contains("time: 3.000 s"), "{table}");
    // A malformed record names the file and line.
    let bad = path("stats-bad.txt");
    std::fs::write(&bad, "R 1\nX 2\n").unwrap();
    let out = pagelab().args(["trace-stats", bad.to_str().unwrap(), "--trace-format", "text"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("stats-bad.txt: line 2: unknown operation `X`"));
}
