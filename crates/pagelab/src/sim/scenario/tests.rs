use super::build::fault_around_pages;
use super::*;
use crate::mm::workingset::{MglruPlacement, RefaultModel};

pub const EXAMPLE: &str = r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
swap = { device = "disk", size = "1G" }

[[cgroup]]
path = "/test"
max = "192M"

[[workload]]
name = "fio-zipf"
cgroup = "/test"
kind = "file-read"
file_size = "720M"
block_size = "4k"
distribution = "zipf:0.8"
ops = 300000
seed = 42
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "s.toml", "s", &[])
}

/// Issue 40: a scenario path that never ends (/dev/zero) was read until memory ran out;
/// invalid UTF-8 had no line or offset.
#[test]
fn scenario_files_are_bounded_and_utf8_errors_located() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(MAX_SCENARIO_BYTES + 1).unwrap();
    let e = Scenario::read_text(&big).unwrap_err().to_string();
    assert!(e.contains("longer than 16 MiB, the limit of a scenario file"), "{e}");
    let e = Scenario::load(Path::new("/dev/zero"), &[]).unwrap_err().to_string();
    assert!(e.contains("/dev/zero: is a device"), "{e}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, b"[machine]\nmemory = \"1G\"\nname = \"a\xffb\"\n").unwrap();
    let e = Scenario::read_text(&bad).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.to_string().contains("byte 0xff at byte offset 33 (column 10) is not valid UTF-8"), "{e}");
}

/// Issue 40 item 10: values that were silently accepted or changed.
#[test]
fn silently_accepted_values_are_refused() {
    // `kernel = 6.10`, a TOML float, ran 6.1.
    let e = parse(&EXAMPLE.replace("kernel = \"6.1\"", "kernel = 6.10")).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("machine.kernel", Some(4)), "{e}");
    assert!(e.message.contains("write the kernel as a string"), "{e}");
    // On the command line the version is its text: 6.12 and 6.1 work, 6.10 is not 6.1.
    let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.kernel=6.10".into()]).unwrap_err();
    assert!(e.to_string().contains("6.10") && e.to_string().contains("(from --set machine.kernel=6.10)"), "{e}");
    for k in ["6.1", "6.12"] {
        let s = Scenario::parse(EXAMPLE, "s.toml", "s", &[format!("machine.kernel={k}")]).unwrap();
        assert_eq!(s.machine.kernel, Kernel::parse(k).unwrap());
    }
    // A --set value's second line was dropped.
    let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.swappiness=10\nmachine.memory=\"1G\"".into()]).unwrap_err();
    assert!(e.to_string().contains("a --set value is one line"), "{e}");
    // watermark_scale_factor 0 or 100000 was clamped; the kernel takes 1..3000.
    for bad in [0, 3001, 100_000] {
        let e = parse(&EXAMPLE.replace("[machine]", &format!("[machine]\nwatermark_scale_factor = {bad}"))).unwrap_err();
        assert!(e.to_string().contains("the sysctl takes 1 to 3000"), "{bad}: {e}");
    }
    let s = parse(&EXAMPLE.replace("[machine]", "[machine]\nwatermark_scale_factor = 3000")).unwrap();
    assert_eq!(s.machine.watermark_scale_factor, 3000);
    // fault_around_kb: fault_around_bytes_set() rounds down to a power of two, takes at
    // least a page, refuses more than 512 pages.
    for (kb, pages) in [(None, 16), (Some(0), 1), (Some(4), 1), (Some(96), 16), (Some(2048), 512), (Some(2051), 512)] {
        assert_eq!(fault_around_pages(kb), Ok(pages), "{kb:?}");
    }
    for kb in [2052, 1 << 40, i64::MAX as u64] {
        let e = parse(&EXAMPLE.replace("[machine]", &format!("[machine]\nfault_around_kb = {kb}"))).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("more than PTRS_PER_PTE = 512 pages"), "{kb}: {e}");
    }
    // Two workloads sharing a file with different sizes.
    let two = format!("{EXAMPLE}\n[[workload]]\nname = \"b\"\ncgroup = \"/test\"\nkind = \"file-read\"\nfile = \"fio-zipf\"\nfile_size = \"360M\"\ndistribution = \"uniform\"\nops = 10\n");
    let e = parse(&two).unwrap_err();
    assert_eq!(e.key, "workload[1].file_size", "{e}");
    assert!(e.message.contains("workload `b` gives the shared file `fio-zipf` 92160 pages, workload `fio-zipf` (line 16) gave it 184320"), "{e}");
    assert!(parse(&two.replace("360M", "720M")).is_ok());
    // A name with a terminal escape.
    let e = parse(&EXAMPLE.replace("name = \"fio-zipf\"", "name = \"a\\u001b[2Jb\"")).unwrap_err();
    assert!(e.to_string().contains("\\u{1b}[2Jb\" holds a control character"), "{e}");
}

/// Issue 40 item 11: a partial `[time.storage]` reported its missing field at line 1.
#[test]
fn a_partial_table_is_located_at_its_header() {
    let text = format!("{EXAMPLE}\n[time.storage]\nread_latency_ns = 100\n");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("time.storage", Some(22)), "{e}");
    assert!(e.message.contains("missing field"), "{e}");
}

/// Issue 40 item 11: a too-large kernel_used was blamed on machine.reserved.
#[test]
fn the_largest_reservation_is_blamed() {
    let e = parse(&EXAMPLE.replace("[machine]", "[machine]\nreserved = \"8M\"\nkernel_used = \"250M\"")).unwrap_err();
    assert_eq!(e.key, "machine.kernel_used", "{e}");
    assert!(e.message.contains("reserved 8M + kernel_used 250M of machine.memory's 256M"), "{e}");
}

#[test]
fn the_issue_example_parses() {
    let s = parse(EXAMPLE).unwrap();
    assert_eq!(s.machine.memory_pages, 65536);
    assert_eq!(s.machine.swap_pages, 262144);
    assert_eq!(s.cgroups[0].max, 49152);
    assert_eq!(s.workloads[0].phases[0].object_pages, 184320);
}

#[test]
fn unknown_keys_are_named_with_file_and_line() {
    let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memroy = \"256M\"")).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(3)));
    assert!(e.to_string().contains("memroy"), "{e}");
    let e = parse(&EXAMPLE.replace("seed = 42", "seed = 42\nspeed = 3")).unwrap_err();
    assert!(e.key.starts_with("workload[0]"), "{e}");
    assert!(e.message.contains("speed"), "{e}");
}

#[test]
fn zone_watermarks_are_checked_zone_order_of_the_marks_and_protection_entries() {
    let with = |v: &str| parse(&EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\nzone_watermarks = {v}")));
    let e = with("{ HIGHMEM = { min = 1, low = 2, high = 3 } }").unwrap_err();
    assert_eq!(e.key, "machine.zone_watermarks.HIGHMEM");
    let e = with("{ DMA = { min = 5, low = 2, high = 3 } }").unwrap_err();
    assert!(e.message.contains("min <= low <= high"), "{e}");
    let e = with("{ DMA = { min = 1, low = 2, high = 3, protection = [0, 176] } }").unwrap_err();
    assert_eq!(e.key, "machine.zone_watermarks.DMA.protection");
    let e = with("{ DMA = { min = 1, low = 2, high = 3, lo = 4 } }").unwrap_err();
    assert!(e.to_string().contains("lo"), "{e}");
    let s = with("{ DMA = { min = 34, low = 42, high = 50, protection = [0, 176, 176, 176, 176] } }").unwrap();
    let w = &s.machine.zone_watermarks[0];
    assert_eq!((w.0.as_str(), w.1.min, w.1.high, w.1.protection), ("DMA", 34, 50, Some([0, 176, 176, 176])));
}

#[test]
fn nonmovable_pageblocks_are_checked_zone_orders_blocks_and_room() {
    let with = |v: &str| parse(&EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\nnonmovable = {v}")));
    let e = with("{ HIGHMEM = { blocks = 1, free = [1] } }").unwrap_err();
    assert_eq!(e.key, "machine.nonmovable.HIGHMEM");
    let e = with("{ DMA32 = { blocks = 1, free = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } }").unwrap_err();
    assert_eq!(e.key, "machine.nonmovable.DMA32.free");
    assert!(e.message.contains("orders 0 to 10"), "{e}");
    let e = with("{ DMA32 = { blocks = 0, free = [1] } }").unwrap_err();
    assert_eq!(e.key, "machine.nonmovable.DMA32.blocks");
    let e = with("{ DMA32 = { blocks = 1, free = [0, 0, 0, 0, 0, 0, 0, 0, 0, 2] } }").unwrap_err();
    assert!(e.message.contains("1024 free pages do not fit in 1 pageblocks"), "{e}");
    let e = with("{ DMA32 = { blocks = 1, free = [1], pages = 3 } }").unwrap_err();
    assert!(e.to_string().contains("pages"), "{e}");
    let e = with("{ DMA32 = { blocks = 1, free = [0, 0, 0, 0, 0, 0, 0, 0, 1], pcp = 257 } }").unwrap_err();
    assert_eq!(e.key, "machine.nonmovable.DMA32.pcp");
    assert!(e.message.contains("257 frames on per-CPU lists do not fit beside 256 free pages"), "{e}");
    let s = with("{ DMA32 = { blocks = 14, free = [0, 2, 0, 1, 1, 2, 1, 0, 1, 2] } }").unwrap();
    assert_eq!(s.machine.nonmovable[0].0, "DMA32");
    assert_eq!(s.machine.nonmovable[0].2[9], 2);
    assert_eq!(s.machine.nonmovable[0].3, None, "the per-CPU lists unknown unless given");
    assert_eq!(s.machine.watermark_boost_factor, 15_000);
}

#[test]
fn a_workloads_cpus_are_a_set_of_the_machines() {
    let with = |machine: &str, cpus: &str| {
        let text = EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\n{machine}"));
        let at = text.find("[[workload]]").unwrap() + "[[workload]]".len();
        parse(&format!("{}\ncpus = {cpus}{}", &text[..at], &text[at..]))
    };
    let s = with("cpus = 8", "\"2-3,5\"").unwrap();
    assert_eq!(s.workload_cpus[0].as_ref().unwrap().iter().collect::<Vec<_>>(), [2, 3, 5]);
    let s = with("cpus = 8", "2").unwrap();
    assert_eq!(s.workload_cpus[0].as_ref().unwrap().iter().collect::<Vec<_>>(), [0, 1]);
    let e = with("cpus = 8", "\"6-9\"").unwrap_err();
    assert_eq!(e.key, "workload[0].cpus");
    assert!(e.message.contains("CPU 9 does not exist"), "{e}");
    assert!(e.line.is_some(), "{e}");
    let e = with("", "2").unwrap_err();
    assert!(e.message.contains("needs machine.cpus"), "{e}");
    let e = with("cpus = 8", "0").unwrap_err();
    assert!(e.to_string().contains("from 1"), "{e}");
}

#[test]
fn machine_knobs_outside_what_is_modeled_are_named() {
    let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1025")).unwrap_err();
    assert_eq!(e.key, "machine.cpus");
    assert!(e.message.contains("1 to 1024"), "{e}");
    let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 4")).unwrap();
    assert_eq!(s.workload_cpus, vec![Some(crate::sched::CpuSet::all(4))], "a workload without `cpus` runs on every CPU");
    let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\npercpu_pagelist_high_fraction = 4")).unwrap_err();
    assert_eq!(e.key, "machine.percpu_pagelist_high_fraction");
    let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1\npercpu_pagelist_high_fraction = 8")).unwrap();
    assert_eq!((s.machine.cpus, s.machine.percpu_pagelist_high_fraction), (Some(1), 8));
    let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\neevdf_turns = true")).unwrap_err();
    assert_eq!(e.key, "machine.eevdf_turns");
    assert!(e.message.contains("machine.cpus = 1"), "{e}");
    let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1")).unwrap();
    assert!(s.machine.eevdf_turns, "on by default");
    let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1\neevdf_turns = false")).unwrap();
    assert!(!s.machine.eevdf_turns);
    let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\nzones = \"numa\"")).unwrap_err();
    assert_eq!(e.key, "machine.zones");
    assert!(e.message.contains("`numa`") && e.message.contains("x86-64"), "{e}");
    let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\nzones = \"one\"")).unwrap();
    assert_eq!(s.machine.zones, crate::mm::mmzone::ZoneLayout::One);
}

#[test]
fn bad_values_are_named() {
    let e = parse(&EXAMPLE.replace("\"192M\"", "\"192Q\"")).unwrap_err();
    assert_eq!(e.key, "cgroup[0].max");
    assert_eq!(e.line, Some(10));
    let e = parse(&EXAMPLE.replace("cgroup = \"/test\"", "cgroup = \"/nope\"")).unwrap_err();
    assert_eq!(e.key, "workload[0].cgroup");
    assert!(e.message.contains("not declared"), "{e}");
    let e = parse(&EXAMPLE.replace("cgroup = \"/test\"\n", "")).unwrap_err();
    assert_eq!(e.key, "workload[0].cgroup");
    let e = parse(&EXAMPLE.replace("zipf:0.8", "zipf")).unwrap_err();
    assert_eq!(e.key, "workload[0].distribution");
    assert_eq!(e.line, Some(18));
    let e = parse("[machine\nmemory=1").unwrap_err();
    assert_eq!(e.line, Some(1));
}

#[test]
fn the_rstat_flush_period_defaults_to_flush_time_and_can_be_set() {
    assert_eq!(parse(EXAMPLE).unwrap().machine.rstat_flush_ns, 2_000_000_000);
    let s = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.rstat_flush=\"250ms\"".into()]).unwrap();
    assert_eq!(s.machine.rstat_flush_ns, 250_000_000);
    let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.rstat_flush=\"500us\"".into()]).unwrap_err();
    assert_eq!(e.key, "machine.rstat_flush");
}

#[test]
fn with_overrides_gives_text_that_parses_to_the_overridden_scenario() {
    let o = vec!["machine.memory=512M".to_string(), "workload.fio-zipf.ops=10".to_string()];
    let text = with_overrides(EXAMPLE, "s.toml", &o).unwrap();
    let a = Scenario::parse(&text, "s.toml", "s", &[]).unwrap();
    let b = Scenario::parse(EXAMPLE, "s.toml", "s", &o).unwrap();
    assert_eq!(b.overrides, o, "a report's provenance.set");
    // The same scenario, given by text rather than by --set: only the record differs.
    assert_eq!(a, Scenario { overrides: Vec::new(), ..b });
    assert_eq!(a.workloads[0].phases[0].ops, 10);
}

#[test]
fn the_refault_model_defaults_to_mainline_and_is_set_by_key_by_alias_or_by_set() {
    assert_eq!(parse(EXAMPLE).unwrap().workingset, RefaultSpec::default());
    assert_eq!(parse(EXAMPLE).unwrap().workingset.model, RefaultModel::Mainline);
    let with =
        |extra: &str, sets: &[&str]| Scenario::parse(&format!("{EXAMPLE}{extra}"), "s.toml", "s", &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let s = with("[workingset]\nrefault_model = \"kairui-2026\"\n", &[]).unwrap();
    assert_eq!(s.workingset, RefaultSpec::of(RefaultModel::Kairui2026));
    let s = with("", &["workingset.refault_model=kairui-v3"]).unwrap();
    assert_eq!(s.workingset.model, RefaultModel::KairuiV3);
    // The alias names the variant seed 000's rule was written from.
    let s = with("[mglru]\nrefault_distance = true\n", &[]).unwrap();
    assert_eq!(s.workingset, RefaultSpec::of(RefaultModel::KairuiV3));
    assert!(with("[mglru]\nrefault_distance = true\n[workingset]\nrefault_model = \"kairui-v3\"\n", &[]).is_ok());
    let s = with("[workingset]\nrefault_model = \"kairui-v3\"\nmglru_placement = \"lru-add\"\nputback_ages_nonresident = true\n", &[]).unwrap();
    assert_eq!((s.workingset.mglru_placement, s.workingset.putback_ages_nonresident), (MglruPlacement::LruAdd, true));
}

#[test]
fn refault_model_errors_name_the_file_line_and_keys() {
    let with = |extra: &str, sets: &[&str]| {
        Scenario::parse(&format!("{EXAMPLE}{extra}"), "s.toml", "s", &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
    };
    // A conflict between the key and its alias names both.
    let e = with("[mglru]\nrefault_distance = true\n[workingset]\nrefault_model = \"kairui-2026\"\n", &[]);
    assert_eq!((e.key.as_str(), e.line), ("workingset.refault_model", Some(24)));
    assert!(e.message.contains("mglru.refault_distance") && e.message.contains("kairui-2026"), "{e}");
    let e = with("[mglru]\nrefault_distance = false\n", &["workingset.refault_model=kairui-v3"]);
    assert!(e.to_string().contains("mglru.refault_distance = false") && e.to_string().contains("--set workingset.refault_model=kairui-v3"), "{e}");
    let e = with("[workingset]\nrefault_model = \"kairui\"\n", &[]);
    assert_eq!((e.key.as_str(), e.line), ("workingset.refault_model", Some(22)));
    assert!(e.message.contains("kairui-v3"), "{e}");
    let e = with("[workingset]\nmglru_refs = \"shadow\"\n", &[]);
    assert_eq!(e.key, "workingset.mglru_refs");
    assert!(e.message.contains("Kairui"), "{e}");
    let e = with("[workingset]\nrefault_model = \"kairui-v3\"\nmglru_pid = \"both\"\n", &[]);
    assert_eq!((e.key.as_str(), e.line), ("workingset.mglru_pid", Some(23)));
    let e = with("[workingset]\nrefault_modle = \"kairui-v3\"\n", &[]);
    assert!(e.to_string().contains("refault_modle"), "{e}");
    let e = with("", &["machine.kernel=\"5.7\"", "workingset.refault_model=kairui-v3"]);
    assert_eq!(e.key, "workingset.refault_model");
}

#[test]
fn overrides_reach_tables_and_named_list_entries() {
    let s = Scenario::parse(
        EXAMPLE,
        "s.toml",
        "s",
        &["machine.memory=512M".into(), "workload.fio-zipf.ops=10".into(), "cgroup./test.max=\"64M\"".into(), "machine.swappiness=100".into()],
    )
    .unwrap();
    assert_eq!(s.machine.memory_pages, 131072);
    assert_eq!(s.workloads[0].phases[0].ops, 10);
    assert_eq!(s.cgroups[0].max, 16384);
    assert_eq!(s.machine.tunables.swappiness, 100);
    let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["workload.nope.ops=1".into()]).unwrap_err();
    assert!(e.message.contains("no entry named"), "{e}");
}

#[test]
fn a_cost_past_what_any_machine_takes_is_refused_by_its_key() {
    let e = parse(&format!("{EXAMPLE}\n[time]\nsyscall_ns = 9223372036854775807\n")).unwrap_err();
    assert_eq!(e.key, "time.syscall_ns");
    assert!(e.message.contains("overflow") && e.line.is_some(), "{e}");
    let e = parse(&format!("{EXAMPLE}\n[time.cpu]\nlru_move_ns = 2000000000\n")).unwrap_err();
    assert_eq!(e.key, "time.cpu.lru_move_ns");
    let e = parse(&format!("{EXAMPLE}\n[time.storage]\nread_latency_ns = 1\nwrite_latency_ns = 1\npage_transfer_ns = 1\nqueue_depth = 100000\n")).unwrap_err();
    assert_eq!(e.key, "time.storage.queue_depth");
    // A slow disk's latency is fine.
    parse(&format!("{EXAMPLE}\n[time.storage]\nread_latency_ns = 20000000000\nwrite_latency_ns = 1\npage_transfer_ns = 1\n")).unwrap();
}
