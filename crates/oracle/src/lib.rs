//! The real kernel as judge: `pagelab oracle SCENARIO.toml` runs the scenario's workload in a
//! Debian kernel (6.1, 6.12 or 7.3), or in a kernel the user built (`--kernel-image`), under
//! qemu, with the same memory size, cgroups, swap device and
//! access sequence, runs the pagelab model on the identical scenario, and prints the two
//! sets of counters side by side.
//!
//! The guest runs `pagelab-guest` (crates/guest), which drives the same
//! `pagelab_workload::JobStream`s as the simulator with real system calls; both sides compute
//! a checksum of the operations, so every report shows that they saw the same accesses.
//!
//! Setup is scripted and cached (see [`setup`]): missing Debian packages are installed
//! (qemu-system-x86, busybox-static, e2fsprogs, kmod, xz-utils), the kernel packages are
//! fetched with `apt-get download`, the initramfs and data disks are built once.
//!
//! The model is calibrated to the guest: the memory the guest's kernel never hands to the
//! page allocator (`machine.reserved`), the memory it already holds when the workload starts
//! (`machine.kernel_used`), its initramfs (`machine.shmem`) and its `min_free_kbytes` are
//! measured in the guest just before the workload and given to the model, unless the
//! scenario sets them itself.

pub mod cpio;
pub mod fidelity;
pub mod setup;
pub mod vm;

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use pagelab::{Kernel, Scenario};
use pagelab_guest::{GuestReport, OpChecksum, Plan, TaskResult};
use serde::{Deserialize, Serialize};

use fidelity::{KernelSide, Row};
use setup::note;

/// `pagelab oracle`'s command line.
#[derive(clap::Args, Debug, Clone)]
pub struct OracleArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// The kernel: 6.1 (Debian 6.1.192), 6.12 (Debian backports 6.12.95) or 7.3 (Debian
    /// trixie-backports 7.3.4); default: the
    /// scenario's machine.kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Boot this kernel (an x86 bzImage you built) instead of Debian's, and judge it against
    /// the model of --kernel (or the scenario's machine.kernel). Its guest loads no modules:
    /// the image needs virtio_pci, virtio_blk, ext4 (with crc32c) and zram built in (=y).
    #[arg(long, value_name = "BZIMAGE")]
    pub kernel_image: Option<PathBuf>,
    /// The policy: classic or mglru (the kernel's LRU is switched at run time through
    /// /sys/kernel/mm/lru_gen/enabled); default: the scenario's machine.policy.
    #[arg(long)]
    pub policy: Option<String>,
    /// Override a scenario value for both the guest and the model (as `pagelab run --set`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A sysctl the model has no key for, set in the guest only (repeatable), e.g.
    /// --sysctl vm.watermark_boost_factor=0; the report lists it.
    #[arg(long = "sysctl", value_name = "NAME=VALUE")]
    pub sysctl: Vec<String>,
    /// Write {"kernel": {...}, "model": <pagelab run JSON>, "errors": {...}, "rows": [...]}.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Boot the guest this many times and compare the per-counter median.
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Fail (exit status 1) unless |error| <= PERCENT for this counter (repeatable), e.g.
    /// --check workingset_refault_file=10 --check memcg[/a].pgsteal=10.
    #[arg(long = "check", value_name = "COUNTER=PERCENT")]
    pub check: Vec<String>,
    /// Reuse the kernel's side of an earlier `--json` output instead of booting (to iterate
    /// on the model).
    #[arg(long, value_name = "ORACLE.json")]
    pub from: Option<PathBuf>,
    /// Keep the guest's console log, raw report and qemu command in this directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Do not calibrate the model's reserved/kernel_used/shmem/min_free_kbytes to the guest.
    #[arg(long)]
    pub no_calibrate: bool,
    /// Give the model the guest's non-movable pageblocks (`machine.nonmovable`, from its
    /// /proc/pagetypeinfo before the workload), so that it falls back and boosts as the
    /// guest's allocator does (opt-in: docs/journal/2026-11-28-watermark-boosting.md).
    #[arg(long)]
    pub pageblocks: bool,
    /// With --pageblocks: take the layout from this saved run (`pagelab oracle --json`
    /// output of the same kernel) instead, for a run that recorded no /proc/pagetypeinfo (the
    /// suites before suite 9); the pageblock layouts hardly differ from boot to boot.
    #[arg(long, value_name = "RUN.json", requires = "pageblocks")]
    pub pageblocks_from: Option<PathBuf>,
    /// Seconds before a guest run is abandoned.
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
    /// Print only the verdicts of --check.
    #[arg(long, short)]
    pub quiet: bool,
}

/// What `--json` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OracleOutput {
    pub scenario: String,
    pub kernel_version: String,
    pub policy: String,
    pub kernel: KernelSide,
    /// The model's report, as `pagelab run --json` writes it.
    pub model: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_error: Option<String>,
    /// Counter → (pagelab − kernel) / kernel in percent (null: the kernel counted none).
    pub errors: std::collections::BTreeMap<String, Option<f64>>,
    pub rows: Vec<Row>,
    /// Whether every task of the guest performed exactly the model's operations.
    pub sequences_identical: bool,
}

/// Runs `pagelab oracle`.
pub fn main(a: &OracleArgs) -> Result<()> {
    let checks = a
        .check
        .iter()
        .map(|c| {
            let (k, v) = c.rsplit_once('=').ok_or_else(|| anyhow!("--check {c}: expected COUNTER=PERCENT"))?;
            let v: f64 = v.trim_end_matches('%').parse().map_err(|_| anyhow!("--check {c}: `{v}` is not a percentage"))?;
            Ok((k.to_string(), v))
        })
        .collect::<Result<Vec<_>>>()?;
    if a.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let out = oracle(a)?;
    if !a.quiet {
        print!("{}", render(&out));
    }
    if let Some(p) = &a.json {
        let text = serde_json::to_string_pretty(&out)?;
        if p.as_os_str() == "-" {
            println!("{text}");
        } else {
            fs::write(p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    if let Some(e) = &out.model_error {
        bail!("the model failed on this scenario: {e}");
    }
    if !checks.is_empty() {
        match fidelity::check(&out.rows, &checks) {
            Ok(lines) => lines.iter().for_each(|l| println!("check ok: {l}")),
            Err(lines) => {
                lines.iter().for_each(|l| println!("check FAILED: {l}"));
                bail!("{} of {} fidelity checks failed ({} on {} {})", lines.len(), checks.len(), out.scenario, out.kernel_version, out.policy);
            }
        }
    }
    Ok(())
}

/// The scenario with `--kernel`, `--policy` and `--set` applied: validated by the model's
/// parser (errors name the user's file and line), and as text for the guest.
fn prepare(a: &OracleArgs) -> Result<(String, String, Vec<String>, Scenario)> {
    let file = a.scenario.display().to_string();
    let text = fs::read_to_string(&a.scenario).with_context(|| format!("cannot read {file}"))?;
    let name = a.scenario.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
    let mut overrides = a.set.clone();
    if let Some(k) = &a.kernel {
        let k = Kernel::parse(k).map_err(|e| anyhow!("--kernel: {e}"))?;
        overrides.push(format!("machine.kernel=\"{}\"", k.name()));
    }
    if let Some(p) = &a.policy {
        if !["classic", "mglru"].contains(&p.as_str()) {
            bail!("--policy: `{p}`: use classic or mglru");
        }
        overrides.push(format!("machine.policy=\"{p}\""));
    }
    let scenario = Scenario::parse(&text, &file, &name, &overrides)?;
    let mut effective = pagelab::scenario::with_overrides(&text, &file, &overrides)?;
    if !a.sysctl.is_empty() {
        let mut doc: toml::Table = effective.parse()?;
        let mut t = toml::Table::new();
        for s in &a.sysctl {
            let (k, v) = s.split_once('=').ok_or_else(|| anyhow!("--sysctl {s}: expected NAME=VALUE"))?;
            t.insert(k.trim().to_string(), toml::Value::String(v.trim().to_string()));
        }
        let mut o = toml::Table::new();
        o.insert("sysctl".into(), toml::Value::Table(t));
        doc.insert("oracle".into(), toml::Value::Table(o));
        effective = toml::to_string(&doc)?;
    }
    Ok((name, effective, overrides, scenario))
}

/// Boots the guest (or reads `--from`), runs the model, and compares.
pub fn oracle(a: &OracleArgs) -> Result<OracleOutput> {
    let (name, effective, overrides, scenario) = prepare(a)?;
    let m = &scenario.machine;
    if m.kernel == Kernel::V5_7 {
        bail!("{}: kernel 5.7 cannot be booted by the oracle; use --kernel 6.1, 6.12 or 7.3", a.scenario.display());
    }
    let plan = Plan::parse(&effective, &a.scenario.display().to_string())?;
    let policy = m.policy.name();

    let mut kernel = match &a.from {
        Some(p) => {
            let text = fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
            let prev: OracleOutput = serde_json::from_str(&text).with_context(|| format!("{}: not an oracle --json output", p.display()))?;
            if prev.kernel_version != m.kernel.name() || prev.policy != policy {
                bail!("{}: it holds {} {}, the scenario asks for {} {}", p.display(), prev.kernel_version, prev.policy, m.kernel.name(), policy);
            }
            let (ran, asked) = (prev.kernel.cpus.unwrap_or(1), m.cpus.unwrap_or(1));
            if ran != asked {
                bail!("{}: its guest ran with {ran} CPU(s), the scenario asks for {asked}: pass --set machine.cpus={ran} to judge it", p.display());
            }
            prev.kernel
        }
        None => boot_runs(a, &name, &effective, &plan, &scenario)?,
    };

    // Calibrate the model to the guest's own memory use, then run it.
    let doc: toml::Table = effective.parse().unwrap_or_default();
    // Whether the scenario (with its --set overrides) gives `key` ("table.key" or
    // "table.sub"; a bare key is the machine's).
    let sets = |key: &str| {
        let key = if key.contains('.') { key.to_string() } else { format!("machine.{key}") };
        let mut at: Option<&toml::Value> = None;
        for (i, part) in key.split('.').enumerate() {
            at = if i == 0 { doc.get(part) } else { at.and_then(|v| v.get(part)) };
        }
        at.is_some()
    };
    let before = pagelab_guest::Snapshot {
        meminfo: kernel.meminfo_before.clone(),
        zoneinfo: kernel.zoneinfo.clone(),
        min_free_kbytes: kernel.calibration.min_free_kbytes,
        ..Default::default()
    };
    if let Some(w) = fidelity::pcp_warning(&before).filter(|w| !kernel.warnings.contains(w)) {
        kernel.warnings.push(w);
    }
    let min_free = kernel.calibration.min_free_kbytes;
    kernel.calibration = if a.no_calibrate { Default::default() } else { fidelity::calibrate(m.memory_pages, &before, &sets) };
    kernel.calibration.min_free_kbytes = kernel.calibration.min_free_kbytes.or(min_free);
    if !a.no_calibrate {
        let time_swap = doc.get("time").and_then(|t| t.get("swap")).is_some();
        kernel.calibration.overrides.extend(fidelity::calibrate_swap_device(m.swap_device, time_swap));
        kernel.calibration.overrides.extend(fidelity::calibrate_guest_cpu(&sets));
        kernel.calibration.overrides.extend(fidelity::calibrate_read_ahead(m.kernel, &sets));
        if !sets("machine.zone_watermarks") {
            kernel.calibration.overrides.extend(kernel.zoneinfo.as_deref().and_then(fidelity::calibrate_zone_watermarks));
        }
        if a.pageblocks && !sets("machine.nonmovable") {
            let (source, pcp) = match &a.pageblocks_from {
                Some(p) => layout_source(p, &kernel.release)?,
                None => (kernel.alloc_hists.get("pagetypeinfo_before").cloned(), fidelity::census_pcp_frames(&kernel.samples)),
            };
            match source.as_deref().and_then(|t| fidelity::calibrate_pageblocks(t, &pcp)) {
                Some(o) => kernel.calibration.overrides.push(o),
                None => eprintln!(
                    "pagelab oracle: --pageblocks: the kernel's run has no /proc/pagetypeinfo with non-movable pageblocks; the model's are all movable"
                ),
            }
        }
    }
    let text = fs::read_to_string(&a.scenario)?;
    let run_model = |calibration: &[String]| -> Result<(Option<pagelab::report::Report>, Option<String>)> {
        let mut model_overrides = overrides.clone();
        model_overrides.extend(calibration.iter().cloned());
        let model_scenario = Scenario::parse(&text, &a.scenario.display().to_string(), &name, &model_overrides)
            .map_err(|e| anyhow!("calibrating the model ({}): {e}", calibration.join(" ")))?;
        Ok(match pagelab::run(&model_scenario, |_, _| {}) {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.to_string())),
        })
    };
    let (mut model, mut model_error) = run_model(&kernel.calibration.overrides)?;
    // The periodic rstat flush runs on the guest's clock: scale it by how much longer the
    // emulated guest took than the model, and run the model again with it.
    if let Some(r) = model.as_ref().filter(|_| !a.no_calibrate && !sets("machine.rstat_flush")) {
        if let Some(o) = fidelity::calibrate_rstat_flush(r.elapsed_s, &kernel.wall_s) {
            kernel.calibration.overrides.push(o);
            (model, model_error) = run_model(&kernel.calibration.overrides)?;
        }
    }

    let sequences_identical = sequences_match(&plan, &kernel.tasks).is_ok();
    let rows = model.as_ref().map(|r| fidelity::rows(&kernel, r)).unwrap_or_default();
    let model = model.map(|r| serde_json::to_value(&r)).transpose()?;
    let errors = rows.iter().map(|r| (r.counter.clone(), r.error_pct)).collect();
    Ok(OracleOutput {
        scenario: name,
        kernel_version: m.kernel.name().to_string(),
        policy: policy.to_string(),
        kernel,
        model,
        model_error,
        errors,
        rows,
        sequences_identical,
    })
}

/// Every task did exactly the operations the model replays (same count, same checksum).
pub fn sequences_match(plan: &Plan, tasks: &[TaskResult]) -> Result<usize, Vec<String>> {
    let mut bad = Vec::new();
    if tasks.len() != plan.tasks.len() {
        bad.push(format!("the guest ran {} tasks, the plan has {}", tasks.len(), plan.tasks.len()));
    }
    for (i, (tp, tr)) in plan.tasks.iter().zip(tasks).enumerate() {
        let mut c = OpChecksum::default();
        plan.stream(i).for_each(|op| c.add(&op));
        if tr.status != "ok" {
            bad.push(format!("task {}: {}", tp.name, tr.status));
        } else if tp.runtime_ns.is_none() && (tr.ops != c.ops || tr.fill_ops != c.fill_ops || tr.checksum != c.hex()) {
            bad.push(format!("task {}: the guest did {} ops (checksum {}), the model {} ({})", tp.name, tr.ops, tr.checksum, c.ops, c.hex()));
        }
    }
    if bad.is_empty() {
        Ok(plan.tasks.len())
    } else {
        Err(bad)
    }
}

/// The most CPUs a guest boots with: each is a host thread under TCG (issue 42 asks for 2,
/// and 4 where the host allows).
pub const MAX_GUEST_CPUS: u32 = 4;

fn boot_runs(a: &OracleArgs, name: &str, effective: &str, plan: &Plan, scenario: &Scenario) -> Result<KernelSide> {
    let m = &scenario.machine;
    let bytes = m.memory_pages * 4096;
    if !bytes.is_multiple_of(1 << 20) {
        bail!("{}: machine.memory must be a whole number of MiB for the guest", a.scenario.display());
    }
    // The guest boots with the scenario's CPUs (`--set machine.cpus=2` boots `-smp 2` and
    // runs the model on two CPUs), one when it sets none, as the oracle always has.
    let cpus = m.cpus.unwrap_or(1);
    if !(1..=MAX_GUEST_CPUS).contains(&cpus) {
        bail!("{}: machine.cpus = {cpus}: the guest boots with 1 to {MAX_GUEST_CPUS} CPUs", a.scenario.display());
    }
    if m.storage == pagelab::mm::swapfile::DeviceKind::Ramdisk {
        note("storage = \"ramdisk\": the guest's files live on a virtio disk (qemu caches it in host memory)");
    }
    for w in plan.timing_warnings() {
        note(format!("warning: {w}"));
    }
    setup::ensure_host_tools()?;
    let cache = setup::Cache::open()?;
    let kimg = match &a.kernel_image {
        Some(image) => setup::custom_kernel_image(&cache, image)?,
        None => setup::kernel_image(&cache, &setup::kernel_pkg(m.kernel)?)?,
    };
    let guest = setup::guest_binary(&cache)?;
    let data = vm::data_image(&cache, &plan.files)?;
    let run_dir = match &a.keep {
        Some(d) => {
            fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            d.clone()
        }
        None => {
            let runs = cache.dir("runs")?;
            prune_stale_runs(&runs);
            let d = runs.join(format!("{name}-{}-{}-{}", m.kernel.name(), m.policy.name(), std::process::id()));
            fs::create_dir_all(&d)?;
            d
        }
    };
    let (guest_text, traces) = guest_scenario(effective, &a.scenario.display().to_string())?;
    let tools = vm::tools_image(&run_dir, &guest, &guest_text, &traces)?;
    let swap_disk = match m.swap_device {
        pagelab::mm::swapfile::DeviceKind::Disk | pagelab::mm::swapfile::DeviceKind::Ssd => Some(m.swap_pages * 4096),
        _ => None,
    };
    let mut reports: Vec<GuestReport> = Vec::new();
    for i in 0..a.runs {
        note(format!(
            "booting {} ({} LRU) with {} MiB{}",
            kimg.release,
            m.policy.name(),
            bytes >> 20,
            if a.runs > 1 { format!(", run {}/{}", i + 1, a.runs) } else { String::new() }
        ));
        let t0 = std::time::Instant::now();
        let text = vm::Boot {
            kernel: &kimg,
            memory_mib: bytes >> 20,
            data: &data,
            tools: &tools,
            swap_disk,
            cpus,
            run_dir: &run_dir,
            timeout: Duration::from_secs(a.timeout),
        }
        .run()
        .map_err(|e| {
            let hint = if a.kernel_image.is_some() { format!("\n(a --kernel-image needs {})", setup::IMAGE_BUILT_INS) } else { String::new() };
            anyhow!("{e:#}\n(run directory kept: {}){hint}", run_dir.display())
        })?;
        let r = GuestReport::extract(&text).map_err(|e| anyhow!("{e} (see {})", run_dir.join("out.txt").display()))?;
        note(format!("guest done in {:.1} s (workload {:.1} s)", t0.elapsed().as_secs_f64(), r.wall_s));
        if let Err(bad) = sequences_match(plan, &r.tasks) {
            note(format!("warning: the guest's accesses differ from the model's:\n  {}", bad.join("\n  ")));
        }
        if a.keep.is_some() {
            fs::write(run_dir.join(format!("guest-report-{}.json", i + 1)), serde_json::to_string_pretty(&r)?)?;
        }
        reports.push(r);
    }
    let _ = fs::remove_file(&tools);
    if a.keep.is_none() {
        let _ = fs::remove_dir_all(&run_dir);
    }
    let mut k = KernelSide::from_runs(&reports, &kimg.deb);
    k.cpus = Some(cpus);
    k.calibration.min_free_kbytes = reports[0].before.min_free_kbytes;
    Ok(k)
}

/// The scenario as the guest reads it, and the traces its tools disk must carry: each
/// `trace = "PATH"` of a workload or phase (resolved against `file`, the scenario's path)
/// becomes a file beside the guest's scenario, `trace-N-NAME`.
fn guest_scenario(effective: &str, file: &str) -> Result<(String, Vec<(String, std::path::PathBuf)>)> {
    let mut doc: toml::Table = effective.parse()?;
    let mut traces: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut rename = |v: &mut toml::Value| {
        let Some(p) = v.as_str() else { return };
        let host = pagelab::trace_workload::resolve_path(file, p);
        let name = match traces.iter().find(|(_, h)| *h == host) {
            Some((n, _)) => n.clone(),
            None => {
                let base = host.file_name().map_or("trace".into(), |b| b.to_string_lossy().replace(char::is_whitespace, "_"));
                let n = format!("trace-{}-{base}", traces.len());
                traces.push((n.clone(), host));
                n
            }
        };
        *v = toml::Value::String(name);
    };
    for w in doc.get_mut("workload").and_then(|w| w.as_array_mut()).into_iter().flatten() {
        if let Some(t) = w.get_mut("trace") {
            rename(t);
        }
        for ph in w.get_mut("phase").and_then(|p| p.as_array_mut()).into_iter().flatten() {
            if let Some(t) = ph.get_mut("trace") {
                rename(t);
            }
        }
    }
    if traces.is_empty() {
        return Ok((effective.to_string(), traces));
    }
    Ok((toml::to_string(&doc)?, traces))
}

/// Run directories of interrupted runs (a day old and more) go: they may hold swap images.
fn prune_stale_runs(dir: &std::path::Path) {
    let day = Duration::from_secs(86_400);
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let old = e.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age > day);
        if old {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// The report as printed: header, calibration, sequence check, table, warnings.
pub fn render(o: &OracleOutput) -> String {
    use std::fmt::Write as _;
    let k = &o.kernel;
    let mut s = String::new();
    let ops: u64 = k.tasks.iter().map(|t| t.ops).sum();
    let _ = writeln!(
        s,
        "{} — kernel {} ({}, lru_gen {}), policy {}: {} ops; guest workload {}",
        o.scenario,
        o.kernel_version,
        k.release,
        k.lru_gen_enabled.as_deref().unwrap_or("absent"),
        o.policy,
        ops,
        k.wall_s.iter().map(|w| format!("{w:.1} s")).collect::<Vec<_>>().join(", ")
    );
    let c = &k.calibration;
    if !c.overrides.is_empty() {
        let _ = writeln!(s, "model calibrated to the guest: {}", c.overrides.join(" "));
    }
    let _ = writeln!(
        s,
        "access sequences: {}",
        if o.sequences_identical { format!("identical ({} tasks, checksums match)", k.tasks.len()) } else { "DIFFERENT (see the tasks below)".into() }
    );
    if !o.sequences_identical {
        for t in &k.tasks {
            let _ = writeln!(s, "  task {} in {}: {} ops, {} fills, {}", t.name, t.cgroup, t.ops, t.fill_ops, t.status);
        }
    }
    for w in &k.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    match (&o.model, &o.model_error) {
        (_, Some(e)) => {
            let _ = writeln!(s, "model: FAILED: {e}");
        }
        (Some(r), None) => {
            let _ = writeln!(s, "model: {:.3} s modeled, {} ops\n", r["elapsed_s"].as_f64().unwrap_or(0.0), r["ops"]);
            s += &fidelity::table(&o.rows);
            if let Some(cpu) = fidelity::cpu_summary(k, r["kswapd_cpu_s"].as_f64(), r["elapsed_s"].as_f64()) {
                let _ = writeln!(s, "\n{cpu}");
            }
        }
        _ => {}
    }
    s
}

/// The /proc/pagetypeinfo before the workload of another saved run (`--pageblocks-from`),
/// which must come from the same kernel release, and the frames on per-CPU lists its census
/// found ([`fidelity::census_pcp_frames`]).
fn layout_source(p: &std::path::Path, release: &str) -> Result<(Option<String>, std::collections::BTreeMap<String, u64>)> {
    let text = fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
    let other: OracleOutput = serde_json::from_str(&text).with_context(|| format!("{}: not an oracle --json output", p.display()))?;
    if other.kernel.release != release {
        bail!("{}: a run of kernel {}, not of this run's {release}", p.display(), other.kernel.release);
    }
    match other.kernel.alloc_hists.get("pagetypeinfo_before") {
        Some(t) => Ok((Some(t.clone()), fidelity::census_pcp_frames(&other.kernel.samples))),
        None => bail!("{}: the run recorded no /proc/pagetypeinfo", p.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pagelab::PolicyKind;
    use std::path::Path;

    fn args(scenario: &Path) -> OracleArgs {
        OracleArgs {
            scenario: scenario.to_path_buf(),
            kernel: None,
            kernel_image: None,
            policy: None,
            set: vec![],
            sysctl: vec![],
            json: None,
            runs: 1,
            check: vec![],
            from: None,
            keep: None,
            no_calibrate: false,
            pageblocks: false,
            pageblocks_from: None,
            timeout: 10,
            quiet: true,
        }
    }

    /// A scenario in a directory of its own (tests run in parallel, and one that rewrote a
    /// file another was reading made them flaky), removed when the test drops it.
    fn scenario_file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new().prefix("pagelab-oracle-test-").tempdir().unwrap();
        let p = dir.path().join("s.toml");
        fs::write(&p, text).unwrap();
        (dir, p)
    }

    const S: &str =
        "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\n\n[[workload]]\nname = \"w\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"16M\"\nops = 5000\n";

    #[test]
    fn kernel_and_policy_flags_reach_guest_and_model() {
        let (_dir, p) = scenario_file(S);
        let mut a = args(&p);
        a.kernel = Some("6.12".into());
        a.policy = Some("mglru".into());
        a.set = vec!["workload.w.ops=100".into()];
        a.sysctl = vec!["vm.watermark_boost_factor=0".into()];
        let (_, effective, _, s) = prepare(&a).unwrap();
        assert_eq!(s.machine.kernel, Kernel::V6_12);
        assert_eq!(s.machine.policy.kind(), PolicyKind::Mglru);
        let plan = Plan::parse(&effective, "x").unwrap();
        assert_eq!(plan.machine.policy, pagelab_guest::PolicyChoice::Mglru);
        assert_eq!(plan.stream(0).count(), 100);
        assert!(plan.machine.settings("vda").iter().any(|s| s.path == "/proc/sys/vm/watermark_boost_factor" && s.value == "0"));
    }

    #[test]
    fn bad_flags_and_scenarios_are_refused_clearly() {
        let (_dir, p) = scenario_file(S);
        let mut a = args(&p);
        a.kernel = Some("6.2".into());
        assert!(prepare(&a).unwrap_err().to_string().contains("--kernel"));
        let mut a = args(&p);
        a.policy = Some("lru".into());
        assert!(prepare(&a).unwrap_err().to_string().contains("--policy"));
        let (_bad_dir, bad) = scenario_file(&S.replace("ops = 5000", "ops = 5000\nspeed = 1"));
        let e = prepare(&args(&bad)).unwrap_err().to_string();
        assert!(e.contains("s.toml:11") && e.contains("speed"), "{e}");
        let mut a = args(&p);
        a.set = vec!["machine.kernel=\"5.7\"".into()];
        assert!(oracle(&a).unwrap_err().to_string().contains("5.7"));
        a.set = vec!["machine.cpus=5".into()];
        let e = oracle(&a).unwrap_err().to_string();
        assert!(e.contains("machine.cpus = 5") && e.contains("1 to 4 CPUs"), "{e}");
    }

    #[test]
    fn from_reuses_a_saved_kernel_side_and_reruns_the_model() {
        let (_dir, p) = scenario_file(S);
        let plan = Plan::parse(S, "s").unwrap();
        let mut c = OpChecksum::default();
        plan.stream(0).for_each(|op| c.add(&op));
        let mut k = KernelSide::default();
        k.vmstat.insert("pgpgin".into(), 20000);
        k.meminfo_before = [("MemTotal", 60000u64), ("MemFree", 50000), ("Shmem", 400)].iter().map(|(a, b)| (a.to_string(), *b)).collect();
        k.tasks = vec![TaskResult {
            name: "w".into(),
            cgroup: "/".into(),
            ops: c.ops,
            fill_ops: 0,
            checksum: c.hex(),
            elapsed_s: 1.0,
            status: "ok".into(),
            sched: None,
        }];
        let saved = OracleOutput {
            scenario: "s".into(),
            kernel_version: "6.1".into(),
            policy: "classic".into(),
            kernel: k,
            model: None,
            model_error: None,
            errors: Default::default(),
            rows: vec![],
            sequences_identical: true,
        };
        let j = p.with_file_name("saved.json");
        fs::write(&j, serde_json::to_string(&saved).unwrap()).unwrap();
        let mut a = args(&p);
        a.from = Some(j.clone());
        let o = oracle(&a).unwrap();
        assert!(o.sequences_identical);
        assert_eq!(o.kernel.calibration.reserved_pages, 16384 - 15000);
        assert!(o.kernel.calibration.overrides.contains(&"machine.shmem=100p".to_string()));
        assert!(!o.kernel.calibration.overrides.iter().any(|o| o.starts_with("machine.rstat_flush")), "no guest time saved");
        let m = o.model.as_ref().unwrap();
        assert_eq!(m["ops"], 5000);
        let row = o.rows.iter().find(|r| r.counter == "pgpgin").unwrap();
        assert_eq!(row.kernel, 20000);
        assert_eq!(row.model, m["vmstat"]["pgpgin"].as_i64().unwrap());
        assert!(render(&o).contains("pgpgin"));
        // With the guest's workload time, the model reruns with the rstat flush on the
        // guest's clock (the first run's modeled time against the guest's), unless the
        // scenario sets it.
        let mut saved = saved;
        saved.kernel.wall_s = vec![100.0];
        fs::write(&j, serde_json::to_string(&saved).unwrap()).unwrap();
        let first = m["elapsed_s"].as_f64().unwrap();
        let o = oracle(&a).unwrap();
        let expect = fidelity::calibrate_rstat_flush(first, &[100.0]).unwrap();
        assert_eq!(o.kernel.calibration.overrides.last(), Some(&expect));
        assert!(render(&o).contains(&expect));
        a.set = vec!["machine.rstat_flush=\"1s\"".into()];
        let o = oracle(&a).unwrap();
        assert!(!o.kernel.calibration.overrides.iter().any(|o| o.starts_with("machine.rstat_flush")), "the scenario's value wins");
        a.set = vec![];
        // The guest's zone watermarks, as its /proc/zoneinfo shows them, replace the model's
        // formula, unless the scenario gives its own.
        saved.kernel.zoneinfo = Some("Node 0, zone    DMA32\n        min      90\n        low      100\n        high     110\n        managed  14000\n        protection: (0, 0, 0, 0, 0)".into());
        fs::write(&j, serde_json::to_string(&saved).unwrap()).unwrap();
        let o = oracle(&a).unwrap();
        let zw = "machine.zone_watermarks={DMA32={min=90,low=100,high=110,protection=[0,0,0,0,0]}}";
        assert!(o.kernel.calibration.overrides.iter().any(|o| o == zw), "{:?}", o.kernel.calibration.overrides);
        let zones = &o.model.as_ref().unwrap()["zones"];
        assert_eq!((zones[1]["min"].as_u64(), zones[1]["high"].as_u64()), (Some(90), Some(110)), "{zones}");
        a.set = vec!["machine.zone_watermarks={DMA32={min=1,low=2,high=3}}".into()];
        let o = oracle(&a).unwrap();
        assert!(!o.kernel.calibration.overrides.iter().any(|o| o.starts_with("machine.zone_watermarks")), "the scenario's value wins");
        a.set = vec![];
        // --pageblocks-from: another saved run's layout, of the same kernel release only.
        let mut other = saved.clone();
        other.kernel.release = "6.1.0-56-amd64".into();
        let pti = "Node    0, zone    DMA32, type    Unmovable      0      0      0      0      0      0      0      0      0      1      0\nNumber of blocks type     Unmovable      Movable  Reclaimable   HighAtomic          CMA      Isolate\nNode 0, zone    DMA32            1           20            0            0            0            0";
        other.kernel.alloc_hists.insert("pagetypeinfo_before".into(), pti.into());
        let o2 = p.with_file_name("other.json");
        fs::write(&o2, serde_json::to_string(&other).unwrap()).unwrap();
        saved.kernel.release = "6.1.0-56-amd64".into();
        fs::write(&j, serde_json::to_string(&saved).unwrap()).unwrap();
        a.pageblocks = true;
        a.pageblocks_from = Some(o2.clone());
        let o = oracle(&a).unwrap();
        assert!(o.kernel.calibration.overrides.iter().any(|o| o.starts_with("machine.nonmovable={DMA32={blocks=1,")), "{:?}", o.kernel.calibration.overrides);
        other.kernel.release = "6.12.95+deb12-amd64".into();
        fs::write(&o2, serde_json::to_string(&other).unwrap()).unwrap();
        assert!(oracle(&a).unwrap_err().to_string().contains("not of this run's 6.1.0-56-amd64"));
        (a.pageblocks, a.pageblocks_from) = (false, None);
        // A saved run of another kernel is refused.
        a.kernel = Some("6.12".into());
        assert!(oracle(&a).unwrap_err().to_string().contains("holds 6.1 classic"));
        a.kernel = None;
        // One-CPU boots are not judged against a two-CPU model, nor the other way round.
        a.set = vec!["machine.cpus=2".into()];
        let e = oracle(&a).unwrap_err().to_string();
        assert!(e.contains("ran with 1 CPU(s)") && e.contains("--set machine.cpus=1"), "{e}");
        saved.kernel.cpus = Some(2);
        fs::write(&j, serde_json::to_string(&saved).unwrap()).unwrap();
        let o = oracle(&a).unwrap();
        assert!(!o.kernel.calibration.overrides.contains(&"machine.cpus=1".to_string()), "the guest's two CPUs are the model's");
        a.set = vec![];
        assert!(oracle(&a).unwrap_err().to_string().contains("ran with 2 CPU(s)"));
    }

    #[test]
    fn a_scenarios_traces_travel_to_the_guest_beside_its_scenario() {
        let (dir, p) = scenario_file(&S.replace("file_size = \"16M\"\nops = 5000\n", "trace = \"t.txt\"\ntrace_format = \"text\"\n"));
        fs::write(dir.path().join("t.txt"), "R 1\nW 4\nD 4\n").unwrap();
        let (_, effective, _, _) = prepare(&args(&p)).unwrap();
        let (text, traces) = guest_scenario(&effective, &p.display().to_string()).unwrap();
        assert_eq!(traces, [("trace-0-t.txt".to_string(), dir.path().join("t.txt"))]);
        // The guest finds it beside its own scenario and replays what the host's plan does.
        let guest_dir = tempfile::tempdir().unwrap();
        fs::write(guest_dir.path().join(&traces[0].0), fs::read(&traces[0].1).unwrap()).unwrap();
        let guest = Plan::parse(&text, &guest_dir.path().join("scenario.toml").display().to_string()).unwrap();
        let host = Plan::parse(&effective, &p.display().to_string()).unwrap();
        assert_eq!(guest.stream(0).collect::<Vec<_>>(), host.stream(0).collect::<Vec<_>>());
        assert_eq!(guest.files, host.files);
        // A scenario without traces goes as it is.
        let (_d, q) = scenario_file(S);
        let (_, effective, _, _) = prepare(&args(&q)).unwrap();
        assert_eq!(guest_scenario(&effective, "x").unwrap(), (effective, vec![]));
    }
}
