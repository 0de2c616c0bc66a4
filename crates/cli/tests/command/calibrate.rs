//! `pagelab calibrate`: the table it writes is one a scenario takes in, and the model then
//! runs on the measured costs.

use crate::{pagelab, scratch_dir};

/// Appending calibrate's output to a scenario without a `[time]` table gives a scenario the
/// loader accepts, whose run reports the measured costs in its resolved `time`.
#[test]
fn calibrate_writes_time_tables_a_scenario_takes_in() {
    let dir = scratch_dir("calibrate");
    let table = dir.join("host.toml");
    let out = pagelab().args(["calibrate", "--quick", "--out"]).arg(&table).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&table).unwrap();
    let value = |key: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(&format!("{key} = "))).unwrap_or_else(|| panic!("no {key} in\n{text}"));
        line.split(" = ").nth(1).unwrap().trim().parse().unwrap()
    };
    let (copy, read, write) = (value("copy_page_ns"), value("read_latency_ns"), value("write_latency_ns"));
    assert!(copy > 0 && read > 0 && write > 0, "{text}");
    // The locks' costs: an xarray store, a buddy/per-CPU list move, a swap slot.
    assert!(value("xa_store_ns") > 0 && value("zone_move_ns") > 0 && value("swap_slot_ns") > 0, "{text}");
    // The host kernel's own work: each key measured, or the reason it was not.
    for key in ["syscall_ns", "minor_fault_ns", "reclaim_page_ns", "rstat_flush_memcg_ns"] {
        assert!(text.contains(&format!("# {key} is not measured (")) || value(key) > 0, "{key}: {text}");
    }

    let elapsed = |name: &str, text: &str| -> f64 {
        let scenario = format!(
            "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\npolicy = \"classic\"\nswap = {{ device = \"zram\", size = \"128M\" }}\n\n\
         [[workload]]\nname = \"heap\"\ncgroup = \"/\"\nkind = \"anon-rw\"\nsize = \"80M\"\ndistribution = \"uniform\"\nops = 20000\nseed = 1\n\n{text}"
        );
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, scenario).unwrap();
        let json = dir.join(format!("{name}.json"));
        let out = pagelab().arg("run").arg(&path).arg("--json").arg(&json).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(report["vmstat"]["pswpout"].as_u64().unwrap() > 0, "the heap must swap to zram: {}", report["vmstat"]);
        report["elapsed_s"].as_f64().unwrap()
    };
    // The model reads the measured zram costs: a hundred times slower compression and
    // decompression take the same swapping workload longer.
    let measured = elapsed("measured", &text);
    let slower = text
        .replace(&format!("read_latency_ns = {read}\n"), &format!("read_latency_ns = {}\n", read * 100))
        .replace(&format!("write_latency_ns = {write}\n"), &format!("write_latency_ns = {}\n", write * 100));
    assert_ne!(slower, text);
    assert!(elapsed("slower", &slower) > measured);
}

/// A compressibility outside 0..1 and an algorithm it does not measure are refused, and
/// nothing is written.
#[test]
fn calibrate_refuses_what_it_cannot_measure() {
    let dir = scratch_dir("calibrate");
    let table = dir.join("never.toml");
    let out = pagelab().args(["calibrate", "--quick", "--compressibility", "2", "--out"]).arg(&table).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--compressibility 2"));
    let out = pagelab().args(["calibrate", "--quick", "--algorithm", "lzo-rle", "--out"]).arg(&table).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`lzo-rle`"));
    assert!(!table.exists());
}

/// A scratch directory the host refuses (here, one that does not exist) costs the page-cache
/// measurements, each replaced by the reason, and nothing else: the table is still written.
#[test]
fn calibrate_writes_why_a_kernel_cost_was_not_measured() {
    let dir = scratch_dir("calibrate");
    let table = dir.join("refused.toml");
    let out = pagelab().args(["calibrate", "--quick", "--scratch", "/nonexistent-pagelab-dir", "--out"]).arg(&table).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&table).unwrap();
    for key in ["syscall_ns", "reclaim_page_ns"] {
        assert!(text.contains(&format!("# {key} is not measured (")) && text.contains("statfs(/nonexistent-pagelab-dir) failed"), "{text}");
        assert!(!text.contains(&format!("\n{key} =")), "{text}");
    }
    assert!(text.contains("madvise(MADV_PAGEOUT) is not measured"), "{text}");
}
