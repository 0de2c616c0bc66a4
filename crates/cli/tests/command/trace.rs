//! `pagelab run --trace`: exact answers on small traces, the kernel models on a trace, and
//! the errors for malformed traces.

use crate::pagelab;

use pagelab_trace::{with_next_access, write_oracle};

fn path(name: &str) -> std::path::PathBuf {
    let dir = crate::scratch_dir("cli-trace-test");
    dir.join(name)
}

/// `n` object ids in `[0, objects)`, the low ones much more often (the square of a uniform
/// draw), from a xorshift generator seeded with `seed`.
fn skewed_ids(seed: u64, n: usize, objects: u64) -> Vec<u64> {
    let mut x = pagelab_host::xorshift::XorShift64::new(seed);
    (0..n)
        .map(|_| {
            let r = x.next_f64();
            (r * r * objects as f64) as u64
        })
        .collect()
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = pagelab().args(args).args(["--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn plain_policies_give_the_hand_computed_misses() {
    // The textbook reference string with 3 frames: OPT 9, LRU 12, FIFO 15 faults.
    let ids: Vec<u64> = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1].iter().map(|&i| i * 1000 + 17).collect();
    let p = path("textbook.oracleGeneral");
    write_oracle(&p, with_next_access(&ids, 4096), None).unwrap();
    let zst = path("textbook.oracleGeneral.zst");
    write_oracle(&zst, with_next_access(&ids, 4096), Some(3)).unwrap();
    let dense = path("textbook.dense");
    assert!(pagelab().arg("trace-convert").arg(&p).arg(&dense).status().unwrap().success());
    for (file, format) in [(&p, "oracleGeneral"), (&zst, "oracleGeneral"), (&dense, "dense")] {
        for (policy, misses) in [("opt", 9), ("lru", 12), ("fifo", 15)] {
            let v = run_json(&["run", "--trace", file.to_str().unwrap(), "--trace-format", format, "--policy", policy, "--memory", "12k"]);
            assert_eq!(v["misses"], misses, "{policy} {format}");
            assert_eq!(v["ops"], 20);
            // lru and fifo keep no id map on oracleGeneral input, so they cannot count pages.
            let keyed = policy != "opt" && format == "oracleGeneral";
            assert_eq!(v["trace"]["pages"], if keyed { serde_json::Value::Null } else { 6.into() }, "{policy} {format}");
            assert_eq!(v["miss_ratio"].as_f64().unwrap(), misses as f64 / 20.0);
        }
    }
}

#[test]
fn the_kernel_models_replay_a_trace_as_file_reads() {
    // 5000 accesses over 2000 pages; memory far above the footprint: only cold misses.
    let ids: Vec<u64> = (0..5000u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 2000).collect();
    let p = path("small.oracleGeneral");
    write_oracle(&p, with_next_access(&ids, 4096), None).unwrap();
    for policy in ["classic", "mglru"] {
        let v = run_json(&["run", "--trace", p.to_str().unwrap(), "--policy", policy, "--memory", "256M"]);
        let distinct = ids.iter().collect::<std::collections::BTreeSet<_>>().len() as u64;
        assert_eq!(v["ops"], 5000, "{policy}");
        assert_eq!(v["misses"], distinct, "{policy}");
        assert_eq!(v["policy"], policy);
        assert!(v["vmstat"]["pgpgin"].as_u64().unwrap() == distinct * 4);
    }
    // Memory below the footprint: the model reclaims, and misses exceed the cold ones.
    let v = run_json(&["run", "--trace", p.to_str().unwrap(), "--policy", "classic", "--memory", "4M"]);
    let distinct = ids.iter().collect::<std::collections::BTreeSet<_>>().len() as u64;
    assert!(v["misses"].as_u64().unwrap() > distinct, "{}", v["misses"]);
    assert!(v["vmstat"]["pgsteal_file"].as_u64().unwrap() > 0);
    // The misses are counted, not derived: under POSIX_FADV_RANDOM each reads one page.
    assert_eq!(v["misses"].as_u64().unwrap() * 4, v["vmstat"]["pgpgin"].as_u64().unwrap());
    assert_eq!(v["hits"].as_u64().unwrap() + v["misses"].as_u64().unwrap(), 5000);
    assert_eq!(v["evictions"], v["vmstat"]["pgsteal_file"]);
}

#[test]
fn a_kernel_model_replay_has_every_key_of_a_plain_cache_replay() {
    let ids: Vec<u64> = (0..3000u64).map(|i| (i * 7919) % 900).collect();
    let p = path("shape.oracleGeneral");
    write_oracle(&p, with_next_access(&ids, 4096), None).unwrap();
    let plain = run_json(&["run", "--trace", p.to_str().unwrap(), "--policy", "lru", "--memory", "2M"]);
    let kernel = run_json(&["run", "--trace", p.to_str().unwrap(), "--policy", "classic", "--memory", "2M"]);
    // state_bytes is a plain cache's own state; a kernel model's is its whole report.
    let missing: Vec<&String> = plain.as_object().unwrap().keys().filter(|k| *k != "state_bytes" && kernel.get(k.as_str()).is_none()).collect();
    assert!(missing.is_empty(), "kernel replay lacks {missing:?}");
    for v in [&plain, &kernel] {
        assert_eq!(v["hits"].as_u64().unwrap() + v["misses"].as_u64().unwrap(), v["ops"].as_u64().unwrap());
        assert_eq!(v["capacity_pages"], 512);
    }
}

#[test]
fn a_streamed_oracle_trace_gives_the_report_of_its_dense_conversion() {
    // The kernel models map an oracleGeneral trace as it streams and grow the file as its
    // pages appear (from a one-page file, doubling); a dense file states the page count up
    // front. The reports must be equal, under reclaim, with and without shared memory
    // (which pins the file's size, so the trace is read twice instead).
    let ids: Vec<u64> = skewed_ids(7, 60_000, 9000).into_iter().map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let p = path("stream.oracleGeneral");
    // Every seventh record has size 0 (libCacheSim skips those; pagelab counts them).
    let records =
        with_next_access(&ids, 4096).into_iter().enumerate().map(|(i, r)| pagelab_trace::Record { obj_size: if i % 7 == 0 { 0 } else { r.obj_size }, ..r });
    write_oracle(&p, records, None).unwrap();
    let dense = path("stream.dense");
    assert!(pagelab().arg("trace-convert").arg(&p).arg(&dense).status().unwrap().success());
    let distinct = ids.iter().collect::<std::collections::BTreeSet<_>>().len() as u64;
    let strip = |v: serde_json::Value| {
        let mut v = timeless(v);
        let m = v.as_object_mut().unwrap();
        m.remove("scenario");
        m["trace"].as_object_mut().unwrap().retain(|k, _| k == "records" || k == "pages");
        v
    };
    for (policy, kernel) in [("classic", "6.1"), ("mglru", "6.12")] {
        for set in [&[][..], &["--set", "machine.shmem=2M"][..]] {
            let run = |file: &std::path::Path, format: &str| {
                let mut a = vec!["run", "--trace", file.to_str().unwrap(), "--trace-format", format, "--policy", policy, "--kernel", kernel, "--memory", "24M"];
                a.extend_from_slice(set);
                run_json(&a)
            };
            let (streamed, converted) = (run(&p, "oracleGeneral"), run(&dense, "dense"));
            assert_eq!(streamed["trace"]["pages"], distinct, "{policy} {set:?}");
            assert_eq!(streamed["trace"]["zero_size_records"], ids.len().div_ceil(7), "{policy} {set:?}");
            assert!(streamed["vmstat"]["workingset_refault_file"].as_u64().unwrap() > 0, "{policy}: no reclaim to compare");
            assert_eq!(strip(streamed), strip(converted), "{policy} {kernel} {set:?}");
        }
    }
}

fn fails(args: &[&str], needles: &[&str]) {
    let out = pagelab().args(args).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
}

#[test]
fn malformed_traces_are_refused_with_file_and_offset() {
    let p = path("cut.oracleGeneral");
    write_oracle(&p, with_next_access(&[1, 2, 3, 4], 4096), None).unwrap();
    let mut b = std::fs::read(&p).unwrap();
    b.truncate(24 * 3 + 5);
    std::fs::write(&p, &b).unwrap();
    for policy in ["lru", "classic"] {
        fails(&["run", "--trace", p.to_str().unwrap(), "--policy", policy, "--memory", "1M"], &["cut.oracleGeneral", "byte offset 72", "truncated record"]);
    }
    let z = path("bad.zst");
    let mut bytes = pagelab_trace::ZSTD_MAGIC.to_vec();
    bytes.extend_from_slice(&[0xff; 64]);
    std::fs::write(&z, &bytes).unwrap();
    fails(&["run", "--trace", z.to_str().unwrap(), "--policy", "lru", "--memory", "1M"], &["bad.zst", "zstd"]);
    fails(&["run", "--trace", "/nonexistent/t.oracleGeneral", "--policy", "lru", "--memory", "1M"], &["/nonexistent/t.oracleGeneral", "cannot open"]);
    fails(&["run", "--trace", p.to_str().unwrap(), "--policy", "lhd", "--memory", "1M"], &["unknown policy `lhd`"]);
    fails(
        &["run", "--trace", p.to_str().unwrap(), "--trace-format", "parquet", "--memory", "1M"],
        &["unknown trace format `parquet`", "text, lcs, csv:COLUMNS"],
    );
    fails(&["run", "--trace", p.to_str().unwrap(), "--trace-format", "csv", "--memory", "1M"], &["--trace-format csv: csv needs its columns"]);
    fails(&["run", "--trace", p.to_str().unwrap()], &["--memory"]);
}

/// The report without the wall-clock fields and the memory the arrays were given (a dense
/// input tells the page count up front).
fn timeless(mut v: serde_json::Value) -> serde_json::Value {
    for k in ["wall_s", "accesses_per_s", "convert_s", "state_bytes"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn several_memory_sizes_run_in_parallel_and_equal_single_runs() {
    let ids = skewed_ids(1, 20_000, 3000);
    let p = path("sizes.oracleGeneral");
    write_oracle(&p, with_next_access(&ids, 4096), None).unwrap();
    let f = p.to_str().unwrap();
    for policy in ["lru", "opt", "classic"] {
        let all = run_json(&["run", "--trace", f, "--policy", policy, "--memory", "2M,4M,8M,16M"]);
        let all = all.as_array().unwrap();
        assert_eq!(all.len(), 4);
        for (v, m) in all.iter().zip(["2M", "4M", "8M", "16M"]) {
            let one = run_json(&["run", "--trace", f, "--policy", policy, "--memory", m]);
            assert_eq!(timeless(v.clone()), timeless(one), "{policy} {m}");
        }
        let misses: Vec<u64> = all.iter().map(|v| v["misses"].as_u64().unwrap()).collect();
        assert!(misses.windows(2).all(|w| w[0] >= w[1]), "{policy}: {misses:?}");
    }
}

#[test]
fn a_fio_iolog_replays_its_reads_and_writes_against_the_kernel_models() {
    // Two files; version 3 (timestamps first). 2000 one- and two-page reads cycling over 600
    // pages of `a` in 16M of memory, then writes to `b`, a sync and a trim (counted, not
    // replayed).
    let mut log = String::from("fio version 3 iolog\n0 /d/a add\n0 /d/b add\n1 /d/a open\n");
    let mut read_pages = std::collections::BTreeSet::new();
    for i in 0..2000u64 {
        let (page, n) = (i * 37 % 600, if i % 3 == 0 { 2 } else { 1 });
        read_pages.extend(page..page + n);
        log += &format!("{} /d/a read {} {}\n", 10 + i, page * 4096, n * 4096);
    }
    for i in 0..100u64 {
        log += &format!("{} /d/b write {} 4096\n", 3000 + i, i * 4096);
    }
    log += "4000 /d/b sync 0 0\n4001 /d/a trim 0 4096\n4002 /d/a close\n";
    let p = path("two-files.iolog");
    std::fs::write(&p, &log).unwrap();
    let f = p.to_str().unwrap();
    for policy in ["classic", "mglru"] {
        let v = run_json(&["run", "--trace", f, "--trace-format", "fio-iolog", "--policy", policy, "--memory", "16M"]);
        assert_eq!(v["ops"], 2100, "{policy}");
        assert_eq!((v["trace"]["reads"].as_u64(), v["trace"]["writes"].as_u64(), v["trace"]["files"].as_u64()), (Some(2000), Some(100), Some(2)));
        assert_eq!((v["trace"]["not_replayed"]["sync"].as_u64(), v["trace"]["not_replayed"]["trim"].as_u64()), (Some(1), Some(1)));
        // Every page read comes in once (the file fits in memory), readahead at most up to
        // the file's last page; the writes of whole pages need no reads.
        let pgpgin = v["vmstat"]["pgpgin"].as_u64().unwrap() / 4;
        let file_pages = read_pages.last().unwrap() + 1;
        assert!(pgpgin >= read_pages.len() as u64 && pgpgin <= file_pages, "{policy}: {pgpgin} pages read in, {} distinct", read_pages.len());
        assert_eq!(
            v["vmstat"]["nr_dirty"].as_u64().unwrap() + v["vmstat"]["pgpgout"].as_u64().unwrap() / 4,
            100,
            "{policy}: every written page is dirty or written back"
        );
    }
    let sizes = run_json(&["run", "--trace", f, "--trace-format", "fio-iolog", "--policy", "classic", "--memory", "16M,32M"]);
    assert_eq!(sizes.as_array().unwrap().len(), 2);
}

#[test]
fn malformed_iologs_are_refused_with_file_and_line() {
    let p = path("bad.iolog");
    std::fs::write(&p, "fio version 2 iolog\n/d/a add\n/d/a read 0 4096\n/d/a raed 4096 4096\n").unwrap();
    let f = p.to_str().unwrap();
    fails(&["run", "--trace", f, "--trace-format", "fio-iolog", "--policy", "classic", "--memory", "16M"], &["bad.iolog", "line 4", "unknown action `raed`"]);
    fails(&["run", "--trace", f, "--trace-format", "fio-iolog", "--policy", "lru", "--memory", "16M"], &["bad.iolog", "line 4", "unknown action `raed`"]);
}
