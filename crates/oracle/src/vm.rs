//! The guest's disks and one boot of qemu.
//!
//! Disks: `vda` the data disk (ext4 holding the scenario's files; attached with
//! `snapshot=on`, so the guest may write and the image stays pristine), `vdb` the tools disk
//! (the guest runner and the scenario), `vdc` a fresh sparse swap disk when the scenario
//! swaps to a disk.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use pagelab_guest::FileDecl;

use crate::setup::{note, which, Cache, KernelImage};

/// Bumped whenever the data disk's layout or contents change.
const DATA_FORMAT: &str = "pagelab-oracle-data-1";
/// Data images kept in the cache (least recently used ones go).
const KEEP_DATA_IMAGES: usize = 6;

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// Deterministic, incompressible-looking contents of a data file (xorshift64*).
fn fill_file(path: &Path, name: &str, pages: u64) -> Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?);
    let mut x = fnv(name.as_bytes(), 0xcbf2_9ce4_8422_2325) | 1;
    let mut page = [0u8; 4096];
    for _ in 0..pages {
        for chunk in page.chunks_exact_mut(8) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            chunk.copy_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
        }
        w.write_all(&page)?;
    }
    w.flush()?;
    Ok(())
}

fn mke2fs(dir: &Path, image: &Path, bytes: u64, label: &str) -> Result<()> {
    let mke2fs = which("mke2fs").ok_or_else(|| anyhow!("mke2fs is missing (install e2fsprogs)"))?;
    let _ = fs::remove_file(image);
    let out = Command::new(mke2fs)
        .args(["-q", "-t", "ext4", "-F", "-L", label, "-m", "0"])
        // No lazy initialization: the kernel would otherwise zero inode tables in the
        // background while the workload runs.
        .args(["-E", "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0"])
        .arg("-d")
        .arg(dir)
        .arg(image)
        .arg(format!("{}k", bytes.div_ceil(1 << 20) * 1024))
        .output()
        .context("cannot run mke2fs")?;
    if !out.status.success() {
        bail!("mke2fs -d {} failed: {}", dir.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// The data disk holding `files`, built once per file set and cached.
pub fn data_image(cache: &Cache, files: &[FileDecl]) -> Result<PathBuf> {
    let mut h = fnv(DATA_FORMAT.as_bytes(), 0xcbf2_9ce4_8422_2325);
    for f in files {
        h = fnv(format!("{}:{};", f.name, f.pages).as_bytes(), h);
    }
    let dir = cache.dir("data")?;
    let img = dir.join(format!("{h:016x}.img"));
    let _l = cache.lock(&format!("data-{h:016x}"))?;
    if img.exists() {
        let _ = fs::File::options().append(true).open(&img).and_then(|f| f.set_modified(std::time::SystemTime::now()));
        return Ok(img);
    }
    let bytes: u64 = files.iter().map(|f| f.pages * 4096).sum();
    note(format!("building the data disk ({} files, {} MiB, once)", files.len(), bytes >> 20));
    let src = dir.join(format!("{h:016x}.d"));
    let _ = fs::remove_dir_all(&src);
    fs::create_dir_all(&src)?;
    for f in files {
        fill_file(&src.join(&f.name), &f.name, f.pages)?;
    }
    let tmp = img.with_extension("tmp");
    let size = bytes + bytes / 16 + (64 << 20);
    let r = mke2fs(&src, &tmp, size, "data");
    let _ = fs::remove_dir_all(&src);
    r?;
    fs::rename(&tmp, &img)?;
    prune(&dir, &img);
    Ok(img)
}

fn prune(dir: &Path, keep: &Path) {
    let mut imgs: Vec<(std::time::SystemTime, PathBuf)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "img") && p != keep)
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    imgs.sort();
    while imgs.len() >= KEEP_DATA_IMAGES {
        let (_, p) = imgs.remove(0);
        let _ = fs::remove_file(p);
    }
}

/// The tools disk of one run: the guest runner, the scenario it reads and the traces the
/// scenario names (`traces`: each file's name beside the scenario and its path here).
pub fn tools_image(run_dir: &Path, guest: &Path, scenario_text: &str, traces: &[(String, PathBuf)]) -> Result<PathBuf> {
    let src = run_dir.join("tools");
    let _ = fs::remove_dir_all(&src);
    fs::create_dir_all(&src)?;
    fs::copy(guest, src.join("pagelab-guest")).with_context(|| format!("cannot copy {}", guest.display()))?;
    fs::write(src.join("scenario.toml"), scenario_text)?;
    let mut trace_bytes = 0;
    for (name, path) in traces {
        trace_bytes += fs::copy(path, src.join(name)).with_context(|| format!("cannot copy the trace {}", path.display()))?;
    }
    // An experiment's time series: the guest samples its zones and reclaim counters every
    // PAGELAB_ORACLE_SAMPLE_MS milliseconds (docs/fidelity.md); normal runs sample nothing.
    if let Ok(ms) = std::env::var("PAGELAB_ORACLE_SAMPLE_MS") {
        fs::write(src.join("sample_ms"), ms)?;
    }
    // An experiment's switches, each `PAGELAB_ORACLE_X=1` a file the guest runner finds
    // beside the scenario: the allocation histograms (every page allocation by migratetype
    // and order, and every migratetype fallback), the census of the non-movable pageblocks'
    // frames in every sample (/proc/kpageflags; with PAGELAB_ORACLE_SAMPLE_MS), and CPU
    // profiles (the kernel stacks kswapd's and the tasks' timer ticks interrupt, as tracefs
    // histograms).
    for (var, file) in [("PAGELAB_ORACLE_ALLOC_HIST", "alloc_hist"), ("PAGELAB_ORACLE_KPAGEFLAGS", "kpageflags"), ("PAGELAB_ORACLE_PROFILE", "profile")] {
        if std::env::var_os(var).is_some_and(|v| v == "1") {
            fs::write(src.join(file), "1")?;
        }
    }
    // An experiment's tracefs triggers (PAGELAB_ORACLE_TRIGGERS, one per line: `EVENT
    // TRIGGER`, or `kprobe DEFINITION` for a kprobe event to define first); the guest attaches
    // them before the workload and reports each event's `hist` (docs/fidelity.md).
    if let Ok(t) = std::env::var("PAGELAB_ORACLE_TRIGGERS") {
        fs::write(src.join("triggers"), t)?;
    }
    let img = run_dir.join("tools.img");
    let size = fs::metadata(guest)?.len() + trace_bytes + trace_bytes / 16 + (8 << 20);
    mke2fs(&src, &img, size, "tools")?;
    let _ = fs::remove_dir_all(&src);
    Ok(img)
}

/// One boot.
pub struct Boot<'a> {
    pub kernel: &'a KernelImage,
    pub memory_mib: u64,
    pub data: &'a Path,
    pub tools: &'a Path,
    /// Bytes of a fresh swap disk, if the scenario swaps to one.
    pub swap_disk: Option<u64>,
    /// The guest's CPUs (`-smp`): the scenario's `machine.cpus`, 1 when it sets none.
    pub cpus: u32,
    pub run_dir: &'a Path,
    pub timeout: Duration,
}

/// TCG unless real VT-x/AMD-V KVM is there: the `/dev/kvm` of paravirtualized hosts (PVM)
/// accepts the ioctls but hangs a stock kernel in its decompressor.
fn accel() -> String {
    if let Ok(a) = std::env::var("PAGELAB_ORACLE_ACCEL") {
        return a;
    }
    let kvm = fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_ok()
        && (Path::new("/sys/module/kvm_intel").exists() || Path::new("/sys/module/kvm_amd").exists());
    if kvm {
        "kvm".into()
    } else {
        "tcg".into()
    }
}

/// The guest kernel's command line: no THP (the model has order-0 pages only), no zswap,
/// no KASLR; panics power off.
pub const CMDLINE: &str = "console=ttyS0 loglevel=4 transparent_hugepage=never zswap.enabled=0 nokaslr panic=-1 init_on_alloc=0";

impl Boot<'_> {
    /// Boots, waits, and returns the text of the guest's result port.
    pub fn run(&self) -> Result<String> {
        let qemu = which("qemu-system-x86_64").ok_or_else(|| anyhow!("qemu-system-x86_64 is missing (install qemu-system-x86)"))?;
        let d = self.run_dir;
        let (console, out) = (d.join("console.log"), d.join("out.txt"));
        let _ = fs::remove_file(&out);
        let accel = accel();
        let mut args: Vec<String> = vec![
            "-nodefaults".into(),
            "-no-user-config".into(),
            "-display".into(),
            "none".into(),
            "-no-reboot".into(),
            "-M".into(),
            "pc".into(),
            "-accel".into(),
            accel.clone(),
            "-cpu".into(),
            if accel == "kvm" { "host".into() } else { "max".into() },
            "-smp".into(),
            self.cpus.to_string(),
            "-m".into(),
            format!("{}M", self.memory_mib),
            "-kernel".into(),
            self.kernel.vmlinuz.display().to_string(),
            "-initrd".into(),
            self.kernel.initrd.display().to_string(),
            "-append".into(),
            CMDLINE.into(),
            "-drive".into(),
            format!("file={},if=virtio,format=raw,snapshot=on,cache=unsafe", self.data.display()),
            "-drive".into(),
            format!("file={},if=virtio,format=raw,readonly=on", self.tools.display()),
        ];
        let swap = d.join("swap.img");
        if let Some(bytes) = self.swap_disk {
            let f = fs::File::create(&swap)?;
            f.set_len(bytes)?;
            args.extend(["-drive".into(), format!("file={},if=virtio,format=raw,cache=unsafe", swap.display())]);
        }
        args.extend(["-serial".into(), format!("file:{}", console.display()), "-serial".into(), format!("file:{}", out.display())]);
        fs::write(d.join("qemu.cmd"), format!("{} {}\n", qemu.display(), args.join(" ")))?;
        let mut child =
            Command::new(&qemu).args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().context("cannot start qemu")?;
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if t0.elapsed() > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                let _ = fs::remove_file(&swap);
                bail!("the guest did not finish within {} s; console: {}\n{}", self.timeout.as_secs(), console.display(), tail(&console, 20));
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let _ = fs::remove_file(&swap);
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        if !status.success() {
            bail!("qemu failed ({status}): {}", err.trim());
        }
        let text = fs::read_to_string(&out).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.starts_with("=== PAGELAB-GUEST FAILED")) {
            let con = fs::read_to_string(&console).unwrap_or_default();
            let guest_errors: Vec<&str> = con.lines().filter(|l| l.contains("pagelab-guest:")).collect();
            bail!("the guest failed: {}\n{}\nconsole: {}", l["=== PAGELAB-GUEST FAILED".len()..].trim(), guest_errors.join("\n"), console.display());
        }
        if !text.contains(pagelab_guest::REPORT_END) {
            bail!("the guest printed no report; console: {}\n{}", console.display(), tail(&console, 20));
        }
        Ok(text)
    }
}

fn tail(path: &Path, n: usize) -> String {
    let t = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = t.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
