//! `pagelab-guest`: performs a scenario's workloads with real system calls inside the oracle VM.
//!
//!     pagelab-guest run SCENARIO.toml [--data DIR] [--out FILE] [--data-dev vda] [--swap-dev vdb]
//!                                     [--cgroup-root DIR] [--no-settle]
//!     pagelab-guest plan SCENARIO.toml
//!
//! `run` changes kernel settings (sysctls, swap, cgroups, drop_caches), so it refuses to run
//! unless `PAGELAB_GUEST_IN_VM=1` is set, as the oracle's init does. `plan` only prints what a
//! run would do: files, cgroups, knobs, and every task's operation count and checksum.
//!
//! Every task is a forked process moved into its cgroup. The operation streams are built in
//! the parent before the fork, so the generator's tables are charged to the root cgroup once
//! and shared, not charged to each workload's cgroup. All tasks start together on a pipe
//! barrier; a task that `hold`s its memory waits, after its last operation, until the "after"
//! snapshot has been taken.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Instant;

use pagelab_guest::report::{
    parse_cpu_line, parse_key_values, parse_meminfo, parse_nonmovable_free, parse_pageblocks, parse_pressure, parse_slabinfo, parse_zones, Sample, SchedStat,
    SAMPLED_MEMINFO, SAMPLED_SLABS, SAMPLED_VMSTAT,
};
use pagelab_guest::{GuestReport, OpChecksum, Plan, PolicyChoice, Snapshot, SwapKind, TaskResult, REPORT_BEGIN, REPORT_END};
use pagelab_workload::{Access, Advice, JobStream, PAGE_SIZE};

struct Opts {
    scenario: PathBuf,
    data: PathBuf,
    out: Option<PathBuf>,
    data_dev: String,
    swap_dev: String,
    cgroup_root: PathBuf,
    settle: bool,
}

const USAGE: &str = "usage: pagelab-guest run SCENARIO.toml [--data DIR] [--out FILE] [--data-dev vda] [--swap-dev vdb] [--cgroup-root DIR] [--no-settle]\n       pagelab-guest plan SCENARIO.toml";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => parse_opts(&args[1..]).and_then(|o| run(&o)),
        Some("plan") if args.len() == 2 => print_plan(Path::new(&args[1])),
        _ => Err(USAGE.to_string()),
    };
    if let Err(e) = r {
        eprintln!("pagelab-guest: {e}");
        std::process::exit(1);
    }
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        scenario: PathBuf::new(),
        data: "/mnt/data".into(),
        out: None,
        data_dev: "vda".into(),
        swap_dev: "vdb".into(),
        cgroup_root: "/sys/fs/cgroup".into(),
        settle: true,
    };
    let mut it = args.iter();
    let mut scenario = None;
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--data" => o.data = val(a)?.into(),
            "--out" => o.out = Some(val(a)?.into()),
            "--data-dev" => o.data_dev = val(a)?,
            "--swap-dev" => o.swap_dev = val(a)?,
            "--cgroup-root" => o.cgroup_root = val(a)?.into(),
            "--no-settle" => o.settle = false,
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            s if scenario.is_none() => scenario = Some(PathBuf::from(s)),
            s => return Err(format!("unexpected argument {s}\n{USAGE}")),
        }
    }
    o.scenario = scenario.ok_or_else(|| USAGE.to_string())?;
    Ok(o)
}

fn load(path: &Path) -> Result<Plan, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Plan::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())
}

fn print_plan(path: &Path) -> Result<(), String> {
    let p = load(path)?;
    for f in &p.files {
        println!("file {} {} pages", f.name, f.pages);
    }
    for c in &p.cgroups {
        println!("cgroup {} max={:?} high={:?} low={:?} min={:?}", c.path, c.max, c.high, c.low, c.min);
    }
    for s in p.machine.settings("vda") {
        println!("set {} = {}", s.path, s.value);
    }
    for (i, t) in p.tasks.iter().enumerate() {
        let mut c = OpChecksum::default();
        p.stream(i).for_each(|op| c.add(&op));
        println!("task {} cgroup {} ops {} fills {} checksum {}", t.name, t.cgroup, c.ops, c.fill_ops, c.hex());
    }
    Ok(())
}

/// Free pages on the per-CPU lists (`count:` in /proc/zoneinfo) and MemTotal, in pages.
fn pcp_and_total() -> (u64, u64) {
    let pcp = fs::read_to_string("/proc/zoneinfo").map_or(0, |z| pagelab_guest::report::pcp_free_pages(&z));
    let total = fs::read_to_string("/proc/meminfo").map_or(0, |m| pagelab_guest::report::parse_meminfo(&m).get("MemTotal").copied().unwrap_or(0) / 4);
    (pcp, total)
}

/// Waits (up to 30 s) while more than 5% of MemTotal sits on the per-CPU lists. Since 6.7
/// (decay_pcp_high(), from vmstat_update() every second) a CPU's `pcp->high` that a burst of
/// frees raised (drop_caches freeing a large trace's page cache, the runner's buffers)
/// shrinks by an eighth a second and the pages above it return to the buddy lists; left to
/// the workload's first seconds, the kernel hands them to it while the calibration counts
/// them as kernel memory. The suites' runs start under 4.4% and never wait.
fn settle_pcp_lists(applied: &mut Vec<String>) {
    let (start, total) = pcp_and_total();
    let mut pcp = start;
    let mut waited = 0;
    while pagelab_guest::report::pcp_crowded(pcp, total) && waited < 30 {
        std::thread::sleep(std::time::Duration::from_secs(1));
        waited += 1;
        pcp = pcp_and_total().0;
    }
    if waited > 0 {
        applied.push(format!("waited {waited} s for the per-CPU lists to drain: {start} -> {pcp} free pages on them (MemTotal {total})"));
    }
}

fn errno() -> String {
    std::io::Error::last_os_error().to_string()
}

fn write_file(path: &str, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write `{value}` to {path}: {e}"))
}

fn now_s() -> f64 {
    fs::read_to_string("/proc/uptime").ok().and_then(|t| t.split_whitespace().next()?.parse().ok()).unwrap_or(0.0)
}

fn cg_dir(root: &Path, path: &str) -> PathBuf {
    if path == "/" {
        root.to_path_buf()
    } else {
        root.join(path.trim_start_matches('/'))
    }
}

fn snapshot(root: &Path, cgroups: &[String]) -> Snapshot {
    let mut s = Snapshot {
        uptime_s: now_s(),
        vmstat: parse_key_values(&fs::read_to_string("/proc/vmstat").unwrap_or_default()),
        meminfo: parse_meminfo(&fs::read_to_string("/proc/meminfo").unwrap_or_default()),
        ..Default::default()
    };
    for path in cgroups {
        let dir = cg_dir(root, path);
        let mut m = parse_key_values(&fs::read_to_string(dir.join("memory.stat")).unwrap_or_default());
        for f in ["memory.current", "memory.swap.current"] {
            if let Some(v) = fs::read_to_string(dir.join(f)).ok().and_then(|t| t.trim().parse().ok()) {
                m.insert(f.to_string(), v);
            }
        }
        for (k, v) in parse_key_values(&fs::read_to_string(dir.join("memory.events")).unwrap_or_default()) {
            m.insert(format!("memory.events.{k}"), v);
        }
        // The root's pressure is the system's (/proc/pressure/memory); each cgroup has its
        // memory.pressure.
        let pressure = if path == "/" { PathBuf::from("/proc/pressure/memory") } else { dir.join("memory.pressure") };
        m.extend(parse_pressure(&fs::read_to_string(pressure).unwrap_or_default()));
        s.memcg.insert(path.clone(), m);
    }
    s.lru_gen = fs::read_to_string("/sys/kernel/debug/lru_gen").ok();
    s.zoneinfo = fs::read_to_string("/proc/zoneinfo").ok().map(|z| {
        z.lines()
            .filter(|l| {
                let t = l.trim_start();
                l.starts_with("Node")
                    || ["pages free", "boost ", "min ", "low ", "high ", "spanned", "present", "managed", "protection", "count:"]
                        .iter()
                        .any(|p| t.starts_with(p))
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    s.min_free_kbytes = fs::read_to_string("/proc/sys/vm/min_free_kbytes").ok().and_then(|t| t.trim().parse().ok());
    s.kswapd = kswapd_pid().and_then(|pid| thread_sched(&format!("/proc/{pid}")));
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    s.cpu_ms = parse_cpu_line(&fs::read_to_string("/proc/stat").unwrap_or_default(), ticks);
    s
}

/// The PID of kswapd0 (node 0's kswapd), found by its name.
fn kswapd_pid() -> Option<u32> {
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        (fs::read_to_string(e.path().join("comm")).ok()?.trim() == "kswapd0").then_some(pid)
    })
}

/// The scheduling statistics of the thread whose `/proc` directory is `dir`.
fn thread_sched(dir: &str) -> Option<SchedStat> {
    let schedstat = fs::read_to_string(format!("{dir}/schedstat")).ok()?;
    SchedStat::parse(&schedstat, &fs::read_to_string(format!("{dir}/status")).unwrap_or_default())
}

/// The sampling period a `sample_ms` file beside the scenario asks for (an experiment's
/// time series; absent in normal oracle runs, which sample nothing).
fn sample_interval(scenario: &Path) -> Option<std::time::Duration> {
    let ms: u64 = fs::read_to_string(scenario.with_file_name("sample_ms")).ok()?.trim().parse().ok()?;
    (ms > 0).then(|| std::time::Duration::from_millis(ms))
}

/// Whether a file `name` beside the scenario asks for an experiment's data, which normal
/// oracle runs do not collect: `alloc_hist`, the page allocator's histograms (for watermark
/// boosting; a histogram trigger on every page allocation costs the guest time);
/// `kpageflags`, each sample's census of the non-movable pageblocks' frames
/// ([`pagelab_guest::frames`]); `profile`, the CPU profiles of kswapd and the tasks.
fn wants(scenario: &Path, name: &str) -> bool {
    scenario.with_file_name(name).exists()
}

/// The kernel's trace events [`start_alloc_hists`] counts, with the keys of each histogram:
/// every page allocation by migratetype and order (`mm_page_alloc`: how many unmovable and
/// reclaimable pages the kernel takes beside the workload's movable ones), and every
/// fallback to another migratetype's free pages (`mm_page_alloc_extfrag`: a fallback of
/// less than a pageblock is what boost_watermark() follows).
const ALLOC_HISTS: &[(&str, &str)] = &[
    ("kmem/mm_page_alloc", "hist:keys=migratetype,order:vals=hitcount:sort=migratetype"),
    // Three keys at most (the kernel's TRACING_MAP_KEYS_MAX).
    ("kmem/mm_page_alloc_extfrag", "hist:keys=alloc_migratetype,fallback_migratetype,fallback_order:vals=hitcount"),
];

fn tracing_dir() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].iter().map(PathBuf::from).find(|d| d.join("events").is_dir())
}

/// Attaches the histogram triggers of [`ALLOC_HISTS`] and returns the events attached; a
/// kernel without tracefs or one of the events gets a warning for it.
fn start_alloc_hists(applied: &mut Vec<String>, warnings: &mut Vec<String>) -> Vec<&'static str> {
    let Some(dir) = tracing_dir() else {
        warnings.push("alloc_hist: no tracefs in the guest (/sys/kernel/tracing)".into());
        return Vec::new();
    };
    let mut attached = Vec::new();
    for (event, trigger) in ALLOC_HISTS {
        let path = dir.join("events").join(event).join("trigger");
        match fs::write(&path, trigger) {
            Ok(()) => {
                applied.push(format!("{} = {trigger}", path.display()));
                attached.push(*event);
            }
            Err(e) => warnings.push(format!("alloc_hist: cannot write {}: {e}", path.display())),
        }
    }
    attached
}

/// The event each profile samples: the local APIC timer's tick, whose stack trace runs
/// through the interrupt frames into whatever the tick interrupted.
const PROFILE_EVENT: &str = "irq_vectors/local_timer_entry";

/// Attaches a sampling profile per thread to [`PROFILE_EVENT`]: a histogram of the kernel
/// stacks the timer tick interrupts, one filtered on kswapd0's PID and one on the tasks'
/// name (they are forks of this runner). Returns whether any was attached.
fn start_profiles(applied: &mut Vec<String>, warnings: &mut Vec<String>) -> bool {
    let Some(dir) = tracing_dir() else {
        warnings.push("profile: no tracefs in the guest (/sys/kernel/tracing)".into());
        return false;
    };
    let me = fs::read_to_string("/proc/self/comm").unwrap_or_default().trim().to_string();
    let filters = kswapd_pid().map(|pid| format!("common_pid == {pid}")).into_iter().chain(std::iter::once(format!("comm == \"{me}\"")));
    let path = dir.join("events").join(PROFILE_EVENT).join("trigger");
    let mut attached = false;
    for filter in filters {
        let trigger = format!("hist:keys=stacktrace:vals=hitcount:sort=hitcount.descending if {filter}");
        match fs::OpenOptions::new().append(true).open(&path).and_then(|mut f| f.write_all(trigger.as_bytes())) {
            Ok(()) => {
                applied.push(format!("{} = {trigger}", path.display()));
                attached = true;
            }
            Err(e) => warnings.push(format!("profile: cannot write {}: {e}", path.display())),
        }
    }
    attached
}

/// The profiles' histograms under `alloc_hists["profile"]`: the event's `hist` file prints
/// every trigger, each headed by its filter.
fn read_profiles(report: &mut GuestReport) {
    let Some(dir) = tracing_dir() else { return };
    if let Ok(t) = fs::read_to_string(dir.join("events").join(PROFILE_EVENT).join("hist")) {
        report.alloc_hists.insert("profile".into(), t);
    }
}

/// The attached events' histograms, as the kernel prints them, keyed by event.
fn read_alloc_hists(events: &[&str]) -> BTreeMap<String, String> {
    let Some(dir) = tracing_dir() else { return BTreeMap::new() };
    events.iter().filter_map(|event| Some((event.to_string(), fs::read_to_string(dir.join("events").join(event).join("hist")).ok()?))).collect()
}

/// One write of an experiment's triggers: the tracefs file, what to append to it, and the
/// event whose `hist` to read afterwards (none for a kprobe definition).
#[derive(Debug, PartialEq)]
struct TriggerWrite {
    path: PathBuf,
    value: String,
    event: Option<String>,
}

/// Parses the `triggers` file beside the scenario: each line `EVENT TRIGGER` (e.g.
/// `pagemap/mm_lru_activate hist:keys=stacktrace:vals=hitcount`), or `kprobe DEFINITION`
/// (e.g. `kprobe p:pl_accessed folio_mark_accessed`, then the event `kprobes/pl_accessed`),
/// appended to `kprobe_events` in the file's order; blank lines and `#` comments are skipped.
/// A line that is neither is an error naming its line number.
fn parse_triggers(dir: &Path, text: &str) -> (Vec<TriggerWrite>, Vec<String>) {
    let (mut writes, mut errors) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(def) = line.strip_prefix("kprobe ") {
            writes.push(TriggerWrite { path: dir.join("kprobe_events"), value: def.trim().to_string(), event: None });
        } else if let Some((event, trigger)) = line.split_once(char::is_whitespace) {
            let path = dir.join("events").join(event).join("trigger");
            writes.push(TriggerWrite { path, value: trigger.trim().to_string(), event: Some(event.to_string()) });
        } else {
            errors.push(format!("triggers line {}: `{line}`: expected `EVENT TRIGGER` or `kprobe DEFINITION`", i + 1));
        }
    }
    (writes, errors)
}

/// Attaches an experiment's triggers ([`parse_triggers`]) before the workload. Returns the
/// events whose trigger was attached; what fails is a warning in the report.
fn start_triggers(text: &str, applied: &mut Vec<String>, warnings: &mut Vec<String>) -> Vec<String> {
    let Some(dir) = tracing_dir() else {
        warnings.push("triggers: no tracefs in the guest (/sys/kernel/tracing)".into());
        return Vec::new();
    };
    let (writes, errors) = parse_triggers(&dir, text);
    warnings.extend(errors);
    let mut attached = Vec::new();
    for w in writes {
        match fs::OpenOptions::new().append(true).open(&w.path).and_then(|mut f| f.write_all(w.value.as_bytes())) {
            Ok(()) => {
                applied.push(format!("{} = {}", w.path.display(), w.value));
                attached.extend(w.event);
            }
            Err(e) => warnings.push(format!("triggers: cannot write `{}` to {}: {e}", w.value, w.path.display())),
        }
    }
    attached
}

/// Whether the frame census works on this kernel; a warning says why not.
fn check_census(warnings: &mut Vec<String>) -> bool {
    match pagelab_guest::frames::read_census() {
        Ok(c) if !c.is_empty() => true,
        Ok(_) => {
            warnings.push("kpageflags: no non-movable pageblock found".into());
            false
        }
        Err(e) => {
            warnings.push(format!("kpageflags: {e}"));
            false
        }
    }
}

type Sampler = (std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<Vec<Sample>>);

/// Samples the zones and a few counters every `every` until told to stop.
fn start_sampler(every: std::time::Duration, t0: Instant, census: bool) -> Sampler {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut out = Vec::new();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            let vm = parse_key_values(&fs::read_to_string("/proc/vmstat").unwrap_or_default());
            let pagetypeinfo = fs::read_to_string("/proc/pagetypeinfo").unwrap_or_default();
            let mi = parse_meminfo(&fs::read_to_string("/proc/meminfo").unwrap_or_default());
            out.push(Sample {
                t_s: t0.elapsed().as_secs_f64(),
                zones: parse_zones(&fs::read_to_string("/proc/zoneinfo").unwrap_or_default()),
                vmstat: SAMPLED_VMSTAT.iter().filter_map(|k| Some((k.to_string(), *vm.get(*k)?))).collect(),
                nonmovable_free: parse_nonmovable_free(&pagetypeinfo),
                slab: parse_slabinfo(&fs::read_to_string("/proc/slabinfo").unwrap_or_default(), SAMPLED_SLABS),
                meminfo: SAMPLED_MEMINFO.iter().filter_map(|k| Some((k.to_string(), *mi.get(*k)?))).collect(),
                pageblocks: parse_pageblocks(&pagetypeinfo),
                // MGLRU's generations: absent (None) with MGLRU off or no debugfs.
                lru_gen: fs::read_to_string("/sys/kernel/debug/lru_gen").ok().filter(|t| !t.trim().is_empty()),
                frames: if census { pagelab_guest::frames::read_census().unwrap_or_default() } else { Vec::new() },
            });
            std::thread::sleep(every);
        }
        out
    });
    (stop, handle)
}

fn run_cmd(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new(cmd).args(args).output().map_err(|e| format!("cannot run {cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

fn swapon(dev: &str) -> Result<(), String> {
    run_cmd("mkswap", &[dev])?;
    let c = CString::new(dev).expect("no NUL in device names");
    // SAFETY: a valid NUL-terminated path; no flags.
    if unsafe { libc::swapon(c.as_ptr(), 0) } != 0 {
        return Err(format!("swapon {dev}: {}", errno()));
    }
    Ok(())
}

/// Sets the knobs, the swap device and the cgroups the scenario asks for.
fn setup(p: &Plan, o: &Opts, applied: &mut Vec<String>, warnings: &mut Vec<String>) -> Result<(), String> {
    for s in p.machine.settings(&o.data_dev) {
        if !Path::new(&s.path).exists() {
            match s.path.as_str() {
                "/sys/kernel/mm/lru_gen/enabled" if p.machine.policy == PolicyChoice::Classic => continue,
                "/sys/kernel/mm/lru_gen/enabled" => return Err("this kernel has no MGLRU (/sys/kernel/mm/lru_gen/enabled is missing)".into()),
                "/sys/kernel/debug/fault_around_bytes" => {
                    warnings.push("fault_around_kb: debugfs fault_around_bytes is missing; left at the kernel default".into());
                    continue;
                }
                _ => return Err(format!("{} does not exist in this kernel", s.path)),
            }
        }
        write_file(&s.path, &s.value)?;
        applied.push(format!("{} = {}", s.path, s.value));
    }
    match p.machine.swap {
        SwapKind::None => {}
        SwapKind::Disk | SwapKind::Ssd => {
            let rot = format!("/sys/block/{}/queue/rotational", o.swap_dev);
            let v = if p.machine.swap == SwapKind::Disk { "1" } else { "0" };
            write_file(&rot, v)?;
            applied.push(format!("{rot} = {v}"));
            swapon(&format!("/dev/{}", o.swap_dev))?;
            applied.push(format!("swapon /dev/{}", o.swap_dev));
        }
        SwapKind::Zram => {
            if !Path::new("/sys/block/zram0").exists() {
                return Err("swap device zram: /sys/block/zram0 is missing (zram module not loaded)".into());
            }
            let size = p.machine.swap_bytes.to_string();
            write_file("/sys/block/zram0/disksize", &size)?;
            applied.push(format!("/sys/block/zram0/disksize = {size}"));
            swapon("/dev/zram0")?;
            applied.push("swapon /dev/zram0".into());
        }
    }
    // cgroup v2 with the memory controller.
    let root = &o.cgroup_root;
    if !root.join("cgroup.controllers").exists() {
        fs::create_dir_all(root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let opts = if p.machine.memory_recursiveprot { "memory_recursiveprot" } else { "" };
        let (src, dir, ty, data) = (
            CString::new("cgroup2").expect("static"),
            CString::new(root.as_os_str().as_encoded_bytes()).map_err(|_| "bad cgroup root")?,
            CString::new("cgroup2").expect("static"),
            CString::new(opts).expect("static"),
        );
        // SAFETY: valid NUL-terminated strings.
        if unsafe { libc::mount(src.as_ptr(), dir.as_ptr(), ty.as_ptr(), 0, data.as_ptr().cast()) } != 0 {
            return Err(format!("cannot mount cgroup2 at {}: {}", root.display(), errno()));
        }
        applied.push(format!("mount cgroup2 {} {opts}", root.display()));
    } else if p.machine.memory_recursiveprot {
        warnings.push("cgroup2 was already mounted: memory_recursiveprot left as mounted".into());
    }
    if !p.cgroups.is_empty() {
        write_file(&root.join("cgroup.subtree_control").display().to_string(), "+memory")?;
    }
    for c in &p.cgroups {
        let dir = cg_dir(root, &c.path);
        fs::create_dir(&dir).map_err(|e| format!("cannot create cgroup {}: {e}", dir.display()))?;
        if p.cgroups.iter().any(|d| d.path.starts_with(&format!("{}/", c.path))) {
            write_file(&dir.join("cgroup.subtree_control").display().to_string(), "+memory")?;
        }
        for (f, v) in [("memory.min", &c.min), ("memory.low", &c.low), ("memory.high", &c.high), ("memory.max", &c.max)] {
            if let Some(v) = v {
                write_file(&dir.join(f).display().to_string(), v)?;
                applied.push(format!("{}/{f} = {v}", c.path));
            }
        }
    }
    Ok(())
}

fn pipe() -> Result<(RawFd, RawFd), String> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", errno()));
    }
    Ok((fds[0], fds[1]))
}

fn close(fd: RawFd) {
    // SAFETY: closing a descriptor this process owns.
    unsafe {
        libc::close(fd);
    }
}

/// Blocks until the write end of the pipe is closed everywhere.
fn wait_eof(fd: RawFd) {
    let mut b = [0u8; 1];
    // SAFETY: reading into a one-byte buffer.
    while unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
}

struct Child {
    pid: libc::pid_t,
    result: RawFd,
}

/// Keeps the runner itself out of the experiment: mlockall(MCL_CURRENT) pins what it has
/// mapped so far (its executable's text and data, the prebuilt streams and the copy buffer)
/// on the unevictable list, before the baseline snapshot that calibrates the model's
/// unreclaimable `kernel_used`. Unlocked, the runner's text (a file on the tools disk, mapped
/// and executed at every operation) was scanned, reclaimed and refaulted by the kernel under
/// pressure — file rows the model, which has no such file, cannot show. Locks are not
/// inherited across fork(), but a page stays unevictable while the parent's locked mapping
/// holds it, and the parent waits for its tasks. The tasks' own memory is mapped after the
/// fork, unlocked.
fn lock_runner(applied: &mut Vec<String>, warnings: &mut Vec<String>) {
    // SAFETY: mlockall(2) takes flags only.
    if unsafe { libc::mlockall(libc::MCL_CURRENT) } == 0 {
        applied.push("mlockall(MCL_CURRENT) of the runner".into());
    } else {
        warnings.push(format!("mlockall of the runner failed ({}): its pages stay reclaimable", errno()));
    }
}

fn run(o: &Opts) -> Result<(), String> {
    if std::env::var("PAGELAB_GUEST_IN_VM").as_deref() != Ok("1") {
        return Err(
            "`run` changes kernel settings (sysctls, swap, cgroups, drop_caches); it runs inside the oracle's VM. Set PAGELAB_GUEST_IN_VM=1 to insist.".into(),
        );
    }
    let p = load(&o.scenario)?;
    for f in &p.files {
        let path = o.data.join(&f.name);
        let len = fs::metadata(&path).map_err(|e| format!("data file {}: {e}", path.display()))?.len();
        if len < f.pages * PAGE_SIZE {
            return Err(format!("data file {} has {len} bytes; the scenario needs {}", path.display(), f.pages * PAGE_SIZE));
        }
    }
    let mut report = GuestReport { kernel: uname_r(), warnings: p.timing_warnings(), ..Default::default() };
    setup(&p, o, &mut report.applied, &mut report.warnings)?;
    report.lru_gen_enabled = fs::read_to_string("/sys/kernel/mm/lru_gen/enabled").ok().map(|s| s.trim().to_string());

    // The streams are built before the fork: their tables stay shared and charged to the root.
    let mut streams: Vec<JobStream> = (0..p.tasks.len()).map(|t| p.stream(t)).collect();
    // An application cache's misses read whole cache blocks.
    let app_blocks = p.workloads.iter().filter_map(|w| w.app_cache.as_ref().map(|a| a.block_pages.max(a.slot_pages)));
    let max_block = p.workloads.iter().flat_map(|w| w.phases.iter().map(|ph| ph.block_pages)).chain(app_blocks).max().unwrap_or(1) as usize;
    let mut buf = vec![0x5au8; max_block * PAGE_SIZE as usize];
    let cg_paths: Vec<String> = std::iter::once("/".to_string()).chain(p.cgroups.iter().map(|c| c.path.clone())).collect();

    if o.settle {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
        write_file("/proc/sys/vm/drop_caches", "3")?;
        std::thread::sleep(std::time::Duration::from_secs(1));
        settle_pcp_lists(&mut report.applied);
    }
    lock_runner(&mut report.applied, &mut report.warnings);
    let alloc_hists = if wants(&o.scenario, "alloc_hist") { start_alloc_hists(&mut report.applied, &mut report.warnings) } else { Vec::new() };
    let census = wants(&o.scenario, "kpageflags") && check_census(&mut report.warnings);
    let profiles = wants(&o.scenario, "profile") && start_profiles(&mut report.applied, &mut report.warnings);
    let triggers = match fs::read_to_string(o.scenario.with_file_name("triggers")) {
        Ok(t) => start_triggers(&t, &mut report.applied, &mut report.warnings),
        Err(_) => Vec::new(),
    };
    let pagetypeinfo_before = fs::read_to_string("/proc/pagetypeinfo").ok();
    report.before = snapshot(&o.cgroup_root, &cg_paths);

    let (go_r, go_w) = pipe()?;
    let (rel_r, rel_w) = pipe()?;
    let mut children: Vec<Child> = Vec::new();
    let t0 = Instant::now();
    for (t, stream) in streams.iter_mut().enumerate() {
        let (res_r, res_w) = pipe()?;
        // SAFETY: the parent is single-threaded; the child only runs this task and exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", errno()));
        }
        if pid == 0 {
            close(go_w);
            close(rel_w);
            close(res_r);
            for c in &children {
                close(c.result);
            }
            let tp = &p.tasks[t];
            let r = task(o, &p, t, stream, &mut buf, go_r);
            // SAFETY: res_w is this child's own descriptor.
            let mut w = unsafe { fs::File::from_raw_fd(res_w) };
            let line = match &r {
                Ok((c, ns)) => {
                    // The task's own CPU time, its waits for the CPU and its switches.
                    let sched = thread_sched("/proc/self").map_or(String::new(), |st| st.fields().iter().map(|f| format!(" {f}")).collect());
                    format!("OK {} {} {} {}{}\n", c.ops, c.fill_ops, c.hex(), ns, sched)
                }
                Err(e) => format!("ERR {}\n", e.replace('\n', " ")),
            };
            let _ = w.write_all(line.as_bytes());
            drop(w);
            if r.is_ok() && tp.hold {
                wait_eof(rel_r);
            }
            // SAFETY: leave without running the parent's destructors or atexit handlers.
            unsafe { libc::_exit(if r.is_ok() { 0 } else { 2 }) };
        }
        close(res_w);
        children.push(Child { pid, result: res_r });
    }
    close(go_r);
    close(rel_r);
    close(go_w); // all tasks start
                 // After the forks: the children never see this thread.
    let sampler = sample_interval(&o.scenario).map(|every| start_sampler(every, t0, census));
    let mut pending_status = Vec::new();
    for (t, c) in children.iter().enumerate() {
        let tp = &p.tasks[t];
        let mut text = String::new();
        // SAFETY: the parent's read end of this child's result pipe.
        let mut f = unsafe { fs::File::from_raw_fd(c.result) };
        // Up to EOF: a holding task closes its end before it waits.
        let _ = f.read_to_string(&mut text);
        let mut r = TaskResult { name: tp.name.clone(), cgroup: tp.cgroup.clone(), ..Default::default() };
        let parts: Vec<&str> = text.split_whitespace().collect();
        match parts.first() {
            Some(&"OK") if parts.len() == 5 || parts.len() == 10 => {
                r.ops = parts[1].parse().unwrap_or(0);
                r.fill_ops = parts[2].parse().unwrap_or(0);
                r.checksum = parts[3].to_string();
                r.elapsed_s = parts[4].parse::<f64>().unwrap_or(0.0) / 1e9;
                r.status = "ok".into();
                let sched: Option<Vec<u64>> = parts[5..].iter().map(|f| f.parse().ok()).collect();
                r.sched = sched.and_then(|f| <[u64; 5]>::try_from(f).ok()).map(SchedStat::from_fields);
            }
            Some(&"ERR") => r.status = text.trim()[4..].to_string(),
            _ => r.status = String::new(), // filled from the exit status below
        }
        if !tp.hold || r.status != "ok" {
            let st = reap(c.pid);
            if r.status.is_empty() {
                r.status = st;
            }
        } else {
            pending_status.push(c.pid);
        }
        report.tasks.push(r);
    }
    report.wall_s = t0.elapsed().as_secs_f64();
    if let Some((stop, handle)) = sampler {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        report.samples = handle.join().unwrap_or_default();
    }
    report.after = snapshot(&o.cgroup_root, &cg_paths);
    if !alloc_hists.is_empty() {
        report.alloc_hists = read_alloc_hists(&alloc_hists);
    }
    if profiles {
        read_profiles(&mut report);
    }
    let trigger_events: Vec<&str> = triggers.iter().map(String::as_str).collect();
    for (event, hist) in read_alloc_hists(&trigger_events) {
        report.alloc_hists.insert(format!("trigger:{event}"), hist);
    }
    // The pageblocks' migratetypes and the free pages by migratetype and order, before and
    // after, in every run (two reads of a small file): the layout `machine.nonmovable` takes,
    // and where fallbacks found their pages.
    let after = fs::read_to_string("/proc/pagetypeinfo").ok();
    for (key, text) in [("pagetypeinfo_before", pagetypeinfo_before), ("pagetypeinfo_after", after)] {
        if let Some(t) = text {
            report.alloc_hists.insert(key.into(), t);
        }
    }
    close(rel_w); // holding tasks exit
    for pid in pending_status {
        reap(pid);
    }

    let text = format!("{REPORT_BEGIN}\n{}\n{REPORT_END}\n", serde_json::to_string(&report).map_err(|e| e.to_string())?);
    match &o.out {
        Some(path) => {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(!path.starts_with("/dev"))
                .open(path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            f.write_all(text.as_bytes()).and_then(|_| f.flush()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        None => print!("{text}"),
    }
    for t in &report.tasks {
        eprintln!("pagelab-guest: task {}: {} ops, {} fills, {:.2} s, {}", t.name, t.ops, t.fill_ops, t.elapsed_s, t.status);
    }
    Ok(())
}

fn reap(pid: libc::pid_t) -> String {
    let mut st = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    if libc::WIFSIGNALED(st) {
        format!("killed by signal {}", libc::WTERMSIG(st))
    } else if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) != 0 {
        format!("exited with status {}", libc::WEXITSTATUS(st))
    } else {
        "ok".into()
    }
}

fn uname_r() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// One object of a task: a file (descriptor, and a shared mapping made on first mmap access)
/// or a private anonymous mapping.
struct Obj {
    fd: RawFd,
    map: *mut u8,
    len: usize,
    advice_fd: Advice,
    advice_map: Advice,
}

fn mmap(len: usize, fd: RawFd) -> Result<*mut u8, String> {
    let (flags, fd) = if fd < 0 { (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1) } else { (libc::MAP_SHARED, fd) };
    // SAFETY: a fresh mapping chosen by the kernel.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap of {len} bytes: {}", errno()));
    }
    // SAFETY: advising our own mapping; THP stays off as on the kernel command line.
    unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
    Ok(p.cast())
}

fn madvise_for(a: Advice) -> libc::c_int {
    match a {
        Advice::Normal => libc::MADV_NORMAL,
        Advice::Random => libc::MADV_RANDOM,
        Advice::Sequential => libc::MADV_SEQUENTIAL,
    }
}

fn fadvise_for(a: Advice) -> libc::c_int {
    match a {
        Advice::Normal => libc::POSIX_FADV_NORMAL,
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
    }
}

fn sleep_ns(ns: u64) {
    if ns > 0 {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
}

/// Runs task `t` in the calling (child) process; returns its checksum and elapsed time.
fn task(o: &Opts, p: &Plan, t: usize, stream: &mut JobStream, buf: &mut [u8], go: RawFd) -> Result<(OpChecksum, u64), String> {
    let tp = &p.tasks[t];
    if tp.cgroup != "/" {
        let procs = cg_dir(&o.cgroup_root, &tp.cgroup).join("cgroup.procs");
        // SAFETY: getpid has no preconditions.
        write_file(&procs.display().to_string(), &unsafe { libc::getpid() }.to_string())?;
    }
    let mut objs = Vec::new();
    for d in stream.objects() {
        let len = (d.pages * PAGE_SIZE) as usize;
        if d.anon {
            objs.push(Obj { fd: -1, map: mmap(len, -1)?, len, advice_fd: Advice::Normal, advice_map: Advice::Normal });
        } else {
            let path = o.data.join(&d.name);
            let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| "bad path")?;
            // SAFETY: a valid path.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(format!("open {}: {}", path.display(), errno()));
            }
            objs.push(Obj { fd, map: std::ptr::null_mut(), len, advice_fd: Advice::Normal, advice_map: Advice::Normal });
        }
    }
    wait_eof(go);
    close(go);
    sleep_ns(tp.start_ns);
    let start = Instant::now();
    let mut sum = OpChecksum::default();
    let mut sink = 0u64;
    let mut next_slot = 0u64;
    for op in stream.by_ref() {
        let elapsed = start.elapsed().as_nanos() as u64;
        if tp.runtime_ns.is_some_and(|r| elapsed >= r) {
            break;
        }
        if tp.op_interval_ns > 0 && !op.fill {
            if next_slot > elapsed {
                sleep_ns(next_slot - elapsed);
            }
            next_slot = next_slot.max(elapsed) + tp.op_interval_ns;
        }
        if op.think_ns > 0 {
            let until = Instant::now() + std::time::Duration::from_nanos(op.think_ns);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let ob = &mut objs[op.object as usize];
        let off = op.page * PAGE_SIZE;
        let bytes = op.npages as usize * PAGE_SIZE as usize;
        match op.access {
            Access::Buffered => {
                if ob.advice_fd != op.advice {
                    // SAFETY: advising our own descriptor.
                    unsafe { libc::posix_fadvise(ob.fd, 0, 0, fadvise_for(op.advice)) };
                    ob.advice_fd = op.advice;
                }
                let mut done = 0usize;
                while done < bytes {
                    let b = &mut buf[done..bytes];
                    // SAFETY: b is a valid buffer of b.len() bytes.
                    let n = unsafe {
                        if op.write {
                            libc::pwrite(ob.fd, b.as_ptr().cast(), b.len(), (off as usize + done) as libc::off_t)
                        } else {
                            libc::pread(ob.fd, b.as_mut_ptr().cast(), b.len(), (off as usize + done) as libc::off_t)
                        }
                    };
                    if n <= 0 {
                        return Err(format!(
                            "{} at page {} of object {}: {}",
                            if op.write { "pwrite" } else { "pread" },
                            op.page,
                            op.object,
                            if n == 0 { "end of file".into() } else { errno() }
                        ));
                    }
                    done += n as usize;
                }
            }
            Access::Truncate => {
                let (off, len) = ((op.page * PAGE_SIZE) as libc::off_t, (op.npages as u64 * PAGE_SIZE) as libc::off_t);
                // SAFETY: punching a range of our own descriptor; the size stays.
                if unsafe { libc::fallocate(ob.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off, len) } != 0 {
                    return Err(format!("fallocate(PUNCH_HOLE) at page {} of object {}: {}", op.page, op.object, errno()));
                }
            }
            Access::Mmap | Access::Anon => {
                if ob.map.is_null() {
                    ob.map = mmap(ob.len, ob.fd)?;
                }
                if ob.advice_map != op.advice {
                    // SAFETY: advising our own mapping.
                    unsafe { libc::madvise(ob.map.cast(), ob.len, madvise_for(op.advice)) };
                    ob.advice_map = op.advice;
                }
                for pg in op.page..op.page + op.npages as u64 {
                    // SAFETY: pg < the object's pages (the generator's invariant), so the word
                    // lies inside the mapping.
                    unsafe {
                        let w = ob.map.add((pg * PAGE_SIZE) as usize).cast::<u64>();
                        if op.write {
                            // One non-zero word: the page is neither zero-filled (6.12 keeps
                            // zero pages out of swap) nor same-filled (zram stores those for
                            // free), yet compresses to almost nothing in zram.
                            std::ptr::write_volatile(w, pg | 1 << 63);
                        } else {
                            sink = sink.wrapping_add(std::ptr::read_volatile(w));
                        }
                    }
                }
            }
        }
        sum.add(&op);
    }
    std::hint::black_box(sink);
    Ok((sum, start.elapsed().as_nanos() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experiment_triggers_keep_their_order_and_name_a_bad_line() {
        let dir = Path::new("/sys/kernel/tracing");
        let text = "# who marks folios accessed\n\
                    kprobe p:pl_accessed folio_mark_accessed\n\
                    kprobes/pl_accessed hist:keys=stacktrace:vals=hitcount\n\
                    \n\
                    nonsense\n\
                    pagemap/mm_lru_activate  hist:keys=stacktrace\n";
        let (writes, errors) = parse_triggers(dir, text);
        assert_eq!(
            writes,
            [
                TriggerWrite { path: dir.join("kprobe_events"), value: "p:pl_accessed folio_mark_accessed".into(), event: None },
                TriggerWrite {
                    path: dir.join("events/kprobes/pl_accessed/trigger"),
                    value: "hist:keys=stacktrace:vals=hitcount".into(),
                    event: Some("kprobes/pl_accessed".into())
                },
                TriggerWrite {
                    path: dir.join("events/pagemap/mm_lru_activate/trigger"),
                    value: "hist:keys=stacktrace".into(),
                    event: Some("pagemap/mm_lru_activate".into())
                },
            ]
        );
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("line 5") && errors[0].contains("nonsense"), "{}", errors[0]);
    }
}
