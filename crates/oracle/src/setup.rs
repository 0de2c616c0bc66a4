//! Setting up the guest from scratch: host packages, the Debian kernel packages, the base
//! initramfs (busybox, the kernel modules the guest needs, `/init`) and the static
//! `pagelab-guest` binary. Everything lands in a cache directory and is built once.

use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use pagelab::Kernel;

use crate::cpio::Cpio;

/// Bumped whenever the base initramfs (its `/init` or module list) changes.
const BASE_FORMAT: &str = "pagelab-oracle-base-3";

/// The cache: `$PAGELAB_ORACLE_CACHE`, else `$XDG_CACHE_HOME/pagelab/oracle`, else
/// `~/.cache/pagelab/oracle`.
pub struct Cache {
    pub root: PathBuf,
}

/// An exclusive lock on a cache entry, released on drop.
pub struct Lock(fs::File);

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: unlocking a descriptor we own.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl Cache {
    pub fn open() -> Result<Cache> {
        let root = if let Some(d) = std::env::var_os("PAGELAB_ORACLE_CACHE") {
            PathBuf::from(d)
        } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
            PathBuf::from(d).join("pagelab/oracle")
        } else {
            let home = std::env::var_os("HOME").ok_or_else(|| anyhow!("neither HOME nor PAGELAB_ORACLE_CACHE is set"))?;
            PathBuf::from(home).join(".cache/pagelab/oracle")
        };
        fs::create_dir_all(&root).with_context(|| format!("cannot create the oracle cache {}", root.display()))?;
        Ok(Cache { root })
    }

    pub fn dir(&self, name: &str) -> Result<PathBuf> {
        let d = self.root.join(name);
        fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        Ok(d)
    }

    /// Serializes builders of one entry across concurrent `pagelab oracle` runs.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        let p = self.root.join(format!("{name}.lock"));
        let f = fs::OpenOptions::new().create(true).truncate(false).write(true).open(&p).with_context(|| format!("cannot open {}", p.display()))?;
        // SAFETY: locking a descriptor we own; blocks until the holder releases it.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            bail!("cannot lock {}: {}", p.display(), std::io::Error::last_os_error());
        }
        Ok(Lock(f))
    }
}

pub fn note(msg: impl AsRef<str>) {
    eprintln!("pagelab oracle: {}", msg.as_ref());
}

/// Finds a command on PATH or in the sbin directories (mke2fs and depmod live there and a
/// user's PATH may lack them).
pub fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// True when the ELF file has no program interpreter (a static executable).
pub fn is_static_elf(path: &Path) -> bool {
    let Ok(b) = fs::read(path) else { return false };
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 {
        return false;
    }
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[0x20..0x28].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        o + 4 <= b.len() && u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")) != 3
        // PT_INTERP
    })
}

/// The static busybox the initramfs carries.
fn static_busybox() -> Option<PathBuf> {
    ["/bin/busybox", "/usr/bin/busybox"].iter().map(PathBuf::from).chain(which("busybox")).find(|p| is_static_elf(p))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd.output().with_context(|| format!("{what}: cannot start {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!("{what} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs the Debian packages the oracle needs, or says exactly which are missing.
pub fn ensure_host_tools() -> Result<()> {
    let missing = || -> Vec<(&'static str, &'static str)> {
        let mut m = Vec::new();
        for (cmd, pkg, why) in [
            ("qemu-system-x86_64", "qemu-system-x86", "boots the guest"),
            ("mke2fs", "e2fsprogs", "builds the guest's disks"),
            ("depmod", "kmod", "resolves the kernel modules the guest loads"),
            ("dpkg-deb", "dpkg", "unpacks the kernel package"),
            ("xz", "xz-utils", "decompresses 6.12's kernel modules"),
        ] {
            if which(cmd).is_none() {
                m.push((pkg, why));
            }
        }
        if static_busybox().is_none() {
            m.push(("busybox-static", "the guest's shell and tools (a static busybox)"));
        }
        m
    };
    let need = missing();
    if need.is_empty() {
        return Ok(());
    }
    let list: Vec<&str> = need.iter().map(|(p, _)| *p).collect();
    let why: Vec<String> = need.iter().map(|(p, w)| format!("{p} ({w})")).collect();
    let cmd = format!("apt-get install --no-install-recommends {}", list.join(" "));
    if std::env::var_os("PAGELAB_ORACLE_NO_INSTALL").is_some() || which("apt-get").is_none() || !is_root() {
        bail!("the oracle needs {}; install them with `{}{}`", why.join(", "), if is_root() { "" } else { "sudo " }, cmd);
    }
    note(format!("installing {}", why.join(", ")));
    run(Command::new("apt-get").args(["update", "-qq"]), "apt-get update")?;
    run(
        Command::new("apt-get").env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y", "-qq", "--no-install-recommends"]).args(&list),
        &format!("`{cmd}`"),
    )?;
    let still = missing();
    if !still.is_empty() {
        bail!("after `{cmd}`, still missing: {:?}", still.iter().map(|(p, _)| *p).collect::<Vec<_>>());
    }
    Ok(())
}

/// The Debian kernel package of a pinned kernel version: `package` holds the kernel image
/// (and, up to 6.12, its modules); `extra` the packages unpacked beside it (7.3.4's modules).
#[derive(Clone, Debug)]
pub struct KernelPkg {
    pub version: Kernel,
    pub package: &'static str,
    pub extra: &'static [&'static str],
    pub suite: &'static str,
    /// The modules the guest loads (with their dependencies).
    pub modules: &'static [&'static str],
}

pub fn kernel_pkg(k: Kernel) -> Result<KernelPkg> {
    match k {
        Kernel::V6_1 => {
            Ok(KernelPkg { version: k, package: "linux-image-6.1.0-56-amd64-unsigned", extra: &[], suite: "bookworm-security", modules: WANT_MODULES })
        }
        Kernel::V6_12 => {
            Ok(KernelPkg { version: k, package: "linux-image-6.12.95+deb12-amd64-unsigned", extra: &[], suite: "bookworm-backports", modules: WANT_MODULES })
        }
        // trixie-backports splits 7.3.4: the image in linux-binary-*, the modules in
        // linux-modules-*, modules.builtin and the config in linux-base-* (there is no
        // linux-image-*-unsigned for it).
        Kernel::V7_3 => Ok(KernelPkg {
            version: k,
            package: "linux-binary-7.3.4+deb13-amd64",
            extra: &["linux-modules-7.3.4+deb13-amd64", "linux-base-7.3.4+deb13-amd64"],
            suite: "trixie-backports",
            modules: WANT_MODULES_LIB_CRC32C,
        }),
        Kernel::V5_7 => bail!("kernel 5.7 has no Debian package the oracle can boot; use 6.1, 6.12 or 7.3"),
    }
}

/// A package to fetch and the suite it comes from.
struct KernelPkgName<'a> {
    package: &'a str,
    suite: &'a str,
}

fn find_deb(dir: &Path, package: &str) -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{package}_")) && n.ends_with(".deb")))
        .collect();
    v.sort();
    v.pop()
}

/// The kernel's .deb: from the cache, from `$PAGELAB_ORACLE_DEB_DIR`, or downloaded with
/// `apt-get download` through private package lists (the host's apt sources stay untouched).
fn fetch_deb(cache: &Cache, pkg: &KernelPkg) -> Result<PathBuf> {
    fetch_one_deb(cache, pkg.package, pkg.suite)
}

/// One .deb of a kernel: from the cache (`deb/`, kept across archive updates), from
/// `$PAGELAB_ORACLE_DEB_DIR`, or downloaded.
fn fetch_one_deb(cache: &Cache, package: &str, suite: &str) -> Result<PathBuf> {
    let pkg = KernelPkgName { package, suite };
    let dir = cache.dir("deb")?;
    if let Some(p) = find_deb(&dir, pkg.package) {
        return Ok(p);
    }
    if let Some(extra) = std::env::var_os("PAGELAB_ORACLE_DEB_DIR") {
        if let Some(p) = find_deb(Path::new(&extra), pkg.package) {
            let dst = dir.join(p.file_name().expect("a file"));
            fs::copy(&p, &dst).with_context(|| format!("cannot copy {} to {}", p.display(), dst.display()))?;
            return Ok(dst);
        }
    }
    if which("apt-get").is_none() {
        bail!("cannot download {}: no apt-get (put the .deb in {} or in $PAGELAB_ORACLE_DEB_DIR)", pkg.package, dir.display());
    }
    let apt = cache.dir("apt")?;
    fs::create_dir_all(apt.join("lists/partial"))?;
    fs::create_dir_all(apt.join("cache/archives/partial"))?;
    let keyring = Path::new("/usr/share/keyrings/debian-archive-keyring.gpg");
    let signed = if keyring.exists() { format!("[signed-by={}] ", keyring.display()) } else { String::new() };
    fs::write(
        apt.join("sources.list"),
        format!(
            "deb {signed}http://deb.debian.org/debian-security bookworm-security main\ndeb {signed}http://deb.debian.org/debian bookworm-backports main\ndeb {signed}http://deb.debian.org/debian trixie-backports main\n"
        ),
    )?;
    let opts = [
        format!("-oDir::Etc::SourceList={}", apt.join("sources.list").display()),
        "-oDir::Etc::SourceParts=/dev/null".to_string(),
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
        "-oAPT::Architecture=amd64".to_string(),
    ];
    note(format!("downloading {} from {} (about 70 MB, once)", pkg.package, pkg.suite));
    run(Command::new("apt-get").args(&opts).args(["update", "-qq"]), "apt-get update (private lists for the kernel packages)")?;
    run(Command::new("apt-get").current_dir(&dir).args(&opts).args(["download", "-qq", pkg.package]), &format!("apt-get download {}", pkg.package))
        .map_err(|e| anyhow!("{e}\n(the pinned package may have left the mirror; put its .deb in {} or $PAGELAB_ORACLE_DEB_DIR)", dir.display()))?;
    find_deb(&dir, pkg.package).ok_or_else(|| anyhow!("apt-get download {} left no .deb in {}", pkg.package, dir.display()))
}

/// A bootable kernel and its base initramfs.
#[derive(Clone, Debug)]
pub struct KernelImage {
    pub vmlinuz: PathBuf,
    pub initrd: PathBuf,
    /// `uname -r` of the kernel.
    pub release: String,
    pub deb: String,
}

/// The modules the guest loads (with their dependencies): the virtio disks, ext4 and zram.
const WANT_MODULES: &[&str] = &["virtio_pci", "virtio_blk", "crc32c_generic", "crc32c-intel", "ext4", "zram"];
/// The same for 7.3.4, where crc32c is a library (lib/crc, no crc32c_generic or
/// crc32c-intel module): ext4's dependencies bring what it needs.
const WANT_MODULES_LIB_CRC32C: &[&str] = &["virtio_pci", "virtio_blk", "ext4", "zram"];

/// The guest's /init: mounts the pseudo file systems, loads the modules, mounts the data
/// disk (vda, read-write over qemu's snapshot) and the tools disk (vdb), runs
/// `pagelab-guest` with its report on the second serial port, and powers off.
const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
log() { echo "[pagelab-init $(cut -d' ' -f1 /proc/uptime)] $*" > /dev/console; }
fail() { log "FAIL: $*"; echo "=== PAGELAB-GUEST FAILED $*" > /dev/ttyS1; sync; poweroff -f; }
log "kernel $(uname -r)"
for m in $(cat /etc/modules.order); do
  insmod /lib/modules/$m 2>/dev/null || log "insmod $m failed"
done
# The initramfs is swappable shmem: keep it small.
rm -rf /lib/modules
i=0; while [ ! -b /dev/vdb ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
[ -b /dev/vda ] && [ -b /dev/vdb ] || fail "virtio disks missing"
mount -t ext4 -o noatime /dev/vda /mnt/data || fail "cannot mount the data disk"
mount -t ext4 -o ro,noatime /dev/vdb /mnt/tools || fail "cannot mount the tools disk"
cd /
PAGELAB_GUEST_IN_VM=1 /mnt/tools/pagelab-guest run /mnt/tools/scenario.toml --data /mnt/data --data-dev vda --swap-dev vdc --out /dev/ttyS1 2>/dev/console
rc=$?
[ $rc = 0 ] || fail "pagelab-guest exited with status $rc"
log "done"
sync
poweroff -f
"#;

/// Unpacks the kernel package and builds the base initramfs, once per package.
pub fn kernel_image(cache: &Cache, pkg: &KernelPkg) -> Result<KernelImage> {
    let dir = cache.dir(&format!("kernel-{}", pkg.version.name()))?;
    let _l = cache.lock(&format!("kernel-{}", pkg.version.name()))?;
    let deb = fetch_deb(cache, pkg)?;
    let extras = pkg.extra.iter().map(|p| fetch_one_deb(cache, p, pkg.suite)).collect::<Result<Vec<_>>>()?;
    let mut deb_name = deb.file_name().expect("a file").to_string_lossy().into_owned();
    for e in &extras {
        deb_name.push('+');
        deb_name.push_str(&e.file_name().expect("a file").to_string_lossy());
    }
    let busybox = static_busybox().ok_or_else(|| anyhow!("no static busybox (install busybox-static)"))?;
    let stamp = format!("{BASE_FORMAT}\n{deb_name}\n{}\n", fs::metadata(&busybox).map(|m| m.len()).unwrap_or(0));
    let (vmlinuz, initrd, rel) = (dir.join("vmlinuz"), dir.join("base.cpio"), dir.join("release"));
    if is_built(&dir, &stamp, &[&vmlinuz, &initrd]) {
        return Ok(KernelImage { vmlinuz, initrd, release: fs::read_to_string(&rel)?.trim().to_string(), deb: deb_name });
    }
    note(format!("unpacking {deb_name} and building the initramfs"));
    let root = dir.join("root");
    let _ = fs::remove_dir_all(&root);
    for d in std::iter::once(&deb).chain(&extras) {
        run(Command::new("dpkg-deb").arg("-x").arg(d).arg(&root), "dpkg-deb -x")?;
    }
    // trixie's packages (7.3.4) install under /usr (merged /usr): lib/modules is usr/lib/modules.
    if !root.join("lib/modules").exists() && root.join("usr/lib/modules").exists() {
        fs::create_dir_all(root.join("lib"))?;
        fs::rename(root.join("usr/lib/modules"), root.join("lib/modules"))?;
    }
    let release = fs::read_dir(root.join("lib/modules"))
        .context("the kernel package has no lib/modules")?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .next()
        .ok_or_else(|| anyhow!("the kernel package has no modules directory"))?;
    let depmod = which("depmod").ok_or_else(|| anyhow!("depmod is missing (install kmod)"))?;
    run(Command::new(depmod).arg("-b").arg(&root).arg(&release), "depmod")?;
    let mdir = root.join("lib/modules").join(&release);
    let dep = fs::read_to_string(mdir.join("modules.dep")).context("modules.dep")?;
    let builtin = fs::read_to_string(mdir.join("modules.builtin")).unwrap_or_default();
    let order = module_closure(&dep, &builtin, pkg.modules)?;

    let mut modules: Vec<(String, Vec<u8>)> = Vec::new();
    for rel_path in &order {
        let src = mdir.join(rel_path);
        let base = Path::new(rel_path).file_name().expect("a module file").to_string_lossy().into_owned();
        modules.push(if let Some(stem) = base.strip_suffix(".xz") {
            (stem.to_string(), run_bytes(Command::new("xz").arg("-dc").arg(&src), "xz -dc")?)
        } else if let Some(stem) = base.strip_suffix(".zst") {
            (stem.to_string(), run_bytes(Command::new("zstd").arg("-qdc").arg(&src), "zstd -dc")?)
        } else if let Some(stem) = base.strip_suffix(".gz") {
            (stem.to_string(), run_bytes(Command::new("gzip").arg("-dc").arg(&src), "gzip -dc")?)
        } else {
            (base.clone(), fs::read(&src)?)
        });
    }
    write_base_initrd(&initrd, &busybox, &modules)?;
    // 6.1/6.12: boot/vmlinuz-RELEASE; 7.3.4 (trixie): usr/lib/modules/RELEASE/vmlinuz.
    let mut image = root.join("boot").join(format!("vmlinuz-{release}"));
    if !image.exists() {
        image = mdir.join("vmlinuz");
    }
    fs::copy(&image, &vmlinuz).context("the kernel package has no boot/vmlinuz nor lib/modules/RELEASE/vmlinuz")?;
    fs::write(&rel, format!("{release}\n"))?;
    let _ = fs::remove_dir_all(&root);
    fs::write(dir.join("stamp"), &stamp)?;
    Ok(KernelImage { vmlinuz, initrd, release, deb: deb_name })
}

/// Whether a cache entry is built: its `stamp` file says `stamp` and its `files` exist.
fn is_built(dir: &Path, stamp: &str, files: &[&Path]) -> bool {
    fs::read_to_string(dir.join("stamp")).ok().as_deref() == Some(stamp) && files.iter().all(|f| f.exists())
}

/// Writes the base initramfs: busybox, `/init` and the modules `/init` loads, in order.
fn write_base_initrd(initrd: &Path, busybox: &Path, modules: &[(String, Vec<u8>)]) -> Result<()> {
    let tmp = initrd.with_extension("tmp");
    let mut c = Cpio::new(std::io::BufWriter::new(fs::File::create(&tmp)?));
    for d in ["bin", "dev", "proc", "sys", "mnt", "mnt/data", "mnt/tools", "tmp", "etc", "lib", "lib/modules"] {
        c.dir(d)?;
    }
    c.file("bin/busybox", 0o755, &fs::read(busybox)?)?;
    c.file("init", 0o755, INIT.as_bytes())?;
    let mut names = String::new();
    for (name, data) in modules {
        c.file(&format!("lib/modules/{name}"), 0o644, data)?;
        names.push_str(name);
        names.push('\n');
    }
    c.file("etc/modules.order", 0o644, names.as_bytes())?;
    c.finish()?.into_inner().map_err(|e| anyhow!("writing the initramfs: {e}"))?.sync_all()?;
    fs::rename(&tmp, initrd)?;
    Ok(())
}

/// What a kernel given with `--kernel-image` must have built in, since its guest loads no
/// modules.
pub const IMAGE_BUILT_INS: &str = "virtio_pci, virtio_blk, ext4 (with crc32c) and zram built in (=y)";

/// The release a bzImage names in its setup header (x86 boot protocol 2.00 and later: the
/// magic `HdrS` at 0x202, and at 0x20e the offset, less 0x200, of a NUL-terminated version
/// string whose first word is `uname -r`).
pub fn bzimage_release(image: &[u8]) -> Result<String, String> {
    if image.len() < 0x210 || &image[0x202..0x206] != b"HdrS" {
        return Err("not an x86 bzImage (no `HdrS` setup header at offset 0x202)".into());
    }
    let at = u16::from_le_bytes([image[0x20e], image[0x20f]]) as usize;
    if at == 0 {
        return Err("its setup header gives no kernel version string (offset 0x20e is 0)".into());
    }
    let start = at + 0x200;
    let text = image.get(start..).ok_or_else(|| format!("its version string's offset {start:#x} lies past the end of the file"))?;
    let end = text.iter().take(256).position(|&b| b == 0).ok_or_else(|| format!("no NUL-terminated version string at offset {start:#x}"))?;
    let version = std::str::from_utf8(&text[..end]).map_err(|_| format!("the version string at offset {start:#x} is not UTF-8"))?;
    version.split_whitespace().next().map(str::to_string).ok_or_else(|| format!("the version string at offset {start:#x} is empty"))
}

/// A kernel the user built (`--kernel-image`), booted with a base initramfs that loads no
/// modules: a kernel developer's patched tree, or cache_ext's 6.6.8, judged against a
/// pinned kernel's model. Cached by the image's contents.
pub fn custom_kernel_image(cache: &Cache, image: &Path) -> Result<KernelImage> {
    let bytes = fs::read(image).with_context(|| format!("--kernel-image: cannot read {}", image.display()))?;
    let release = bzimage_release(&bytes).map_err(|e| anyhow!("--kernel-image {}: {e}", image.display()))?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hasher::write(&mut h, &bytes);
    let key = format!("{:016x}", std::hash::Hasher::finish(&h));
    let name = format!("kernel-image-{key}");
    let dir = cache.dir(&name)?;
    let _l = cache.lock(&name)?;
    let busybox = static_busybox().ok_or_else(|| anyhow!("no static busybox (install busybox-static)"))?;
    let stamp = format!("{BASE_FORMAT}\nimage {key}\n{}\n", fs::metadata(&busybox).map(|m| m.len()).unwrap_or(0));
    let (vmlinuz, initrd) = (dir.join("vmlinuz"), dir.join("base.cpio"));
    let deb = format!("{} ({release}, built by the user)", image.display());
    if !is_built(&dir, &stamp, &[&vmlinuz, &initrd]) {
        note(format!("building the initramfs for {} ({release}; it must have {IMAGE_BUILT_INS})", image.display()));
        fs::write(&vmlinuz, &bytes)?;
        write_base_initrd(&initrd, &busybox, &[])?;
        fs::write(dir.join("stamp"), &stamp)?;
    }
    Ok(KernelImage { vmlinuz, initrd, release, deb })
}

fn run_bytes(cmd: &mut Command, what: &str) -> Result<Vec<u8>> {
    let out = cmd.output().with_context(|| format!("{what}: cannot start"))?;
    if !out.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(out.stdout)
}

/// The modules to load, dependencies first, from `modules.dep`; modules built into the
/// kernel (`modules.builtin`) need nothing.
pub fn module_closure(dep: &str, builtin: &str, want: &[&str]) -> Result<Vec<String>> {
    let norm = |s: &str| s.replace('-', "_");
    let stem = |p: &str| {
        let b = p.rsplit('/').next().unwrap_or(p);
        norm(b.split(".ko").next().unwrap_or(b))
    };
    let deps: Vec<(String, Vec<String>)> = dep
        .lines()
        .filter_map(|l| {
            let (m, d) = l.split_once(':')?;
            Some((m.trim().to_string(), d.split_whitespace().map(str::to_string).collect()))
        })
        .collect();
    let mut order: Vec<String> = Vec::new();
    fn add(p: &str, deps: &[(String, Vec<String>)], order: &mut Vec<String>) {
        if order.iter().any(|o| o == p) {
            return;
        }
        if let Some((_, ds)) = deps.iter().find(|(m, _)| m == p) {
            for d in ds.iter().rev() {
                add(d, deps, order);
            }
        }
        order.push(p.to_string());
    }
    for w in want {
        match deps.iter().find(|(m, _)| stem(m) == norm(w)) {
            Some((m, _)) => add(m, &deps, &mut order),
            None if builtin.lines().any(|l| stem(l) == norm(w)) => {}
            None if *w == "crc32c-intel" => {} // CPU-specific; crc32c_generic suffices
            None => bail!("kernel module {w} is neither a module nor built in"),
        }
    }
    Ok(order)
}

/// The static guest runner: `$PAGELAB_GUEST`, or built from this workspace's source with
/// cargo (musl; static glibc when the musl target cannot be installed).
pub fn guest_binary(cache: &Cache) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("PAGELAB_GUEST") {
        let p = PathBuf::from(p);
        if !is_static_elf(&p) {
            bail!("$PAGELAB_GUEST={} is not a static x86-64 executable", p.display());
        }
        return Ok(p);
    }
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target_dir = cache.root.join("guest-target");
    if !ws.join("crates/guest/Cargo.toml").exists() {
        for t in ["x86_64-unknown-linux-musl", "x86_64-unknown-linux-gnu"] {
            let p = target_dir.join(t).join("release/pagelab-guest");
            if is_static_elf(&p) {
                return Ok(p);
            }
        }
        bail!("no pagelab-guest binary: the source tree {} is gone; set PAGELAB_GUEST to a static build of crates/guest", ws.display());
    }
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .or_else(|| which("cargo"))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/bin/cargo")).filter(|p| p.exists()))
        .ok_or_else(|| anyhow!("cargo is needed to build the guest runner (crates/guest)"))?;
    let musl = "x86_64-unknown-linux-musl";
    let mut target = musl;
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output().map(|o| String::from_utf8_lossy(&o.stdout).contains(musl));
    match installed {
        Ok(true) => {}
        Ok(false) => {
            note(format!("installing the Rust target {musl} (rustup target add)"));
            if !Command::new("rustup").args(["target", "add", musl]).status().is_ok_and(|s| s.success()) {
                note("rustup could not add musl: building the guest as a static glibc binary");
                target = "x86_64-unknown-linux-gnu";
            }
        }
        Err(_) => {
            // No rustup: try musl, fall back to static glibc below.
        }
    }
    let _l = cache.lock("guest-build")?;
    let build = |target: &str| -> Result<PathBuf> {
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(&ws)
            .args(["build", "--quiet", "--release", "-p", "pagelab-guest", "--target", target])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_STRIP", "symbols");
        if target.ends_with("gnu") {
            cmd.env("RUSTFLAGS", "-C target-feature=+crt-static");
        }
        let out = cmd.output().context("cannot run cargo")?;
        if !out.status.success() {
            bail!("building pagelab-guest for {target} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        }
        let p = target_dir.join(target).join("release/pagelab-guest");
        if !is_static_elf(&p) {
            bail!("{} is not static", p.display());
        }
        Ok(p)
    };
    match build(target) {
        Ok(p) => Ok(p),
        Err(e) if target == musl => {
            note(format!("{e:#}\nfalling back to a static glibc build"));
            build("x86_64-unknown-linux-gnu")
        }
        Err(e) => Err(e),
    }
}

/// Writes `bytes` to `path` through a temporary file, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("part");
    let mut f = fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_7_3_comes_from_trixie_backports_three_packages_and_no_crc32c_module() {
        // 7.3.4's modules.dep has no crc32c_generic or crc32c-intel (crc32c is in lib/):
        // asking for them failed with "kernel module crc32c_generic is neither a module nor
        // built in" on the first boot.
        let dep = "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz\nkernel/fs/jbd2/jbd2.ko.xz:\n\
                   kernel/drivers/block/zram/zram.ko.xz:\n";
        let builtin = "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/block/virtio_blk.ko\n";
        assert!(module_closure(dep, builtin, WANT_MODULES).is_err());
        let p = kernel_pkg(Kernel::V7_3).unwrap();
        assert_eq!((p.package, p.suite), ("linux-binary-7.3.4+deb13-amd64", "trixie-backports"));
        assert_eq!(p.extra, ["linux-modules-7.3.4+deb13-amd64", "linux-base-7.3.4+deb13-amd64"]);
        let o = module_closure(dep, builtin, p.modules).unwrap();
        assert_eq!(o, ["kernel/fs/jbd2/jbd2.ko.xz", "kernel/fs/ext4/ext4.ko.xz", "kernel/drivers/block/zram/zram.ko.xz"]);
        assert!(kernel_pkg(Kernel::V6_12).unwrap().extra.is_empty());
    }

    #[test]
    fn module_closure_puts_dependencies_first_and_skips_builtins() {
        let dep = "kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz kernel/fs/mbcache.ko.xz kernel/lib/crc16.ko.xz\n\
                   kernel/fs/jbd2/jbd2.ko.xz:\nkernel/fs/mbcache.ko.xz:\nkernel/lib/crc16.ko.xz:\n\
                   kernel/drivers/block/zram/zram.ko.xz: kernel/mm/zsmalloc.ko.xz\nkernel/mm/zsmalloc.ko.xz:\n\
                   kernel/arch/x86/crypto/crc32c-intel.ko.xz:\n";
        let builtin = "kernel/drivers/virtio/virtio_pci.ko\nkernel/drivers/block/virtio_blk.ko\n";
        let o = module_closure(dep, builtin, &["virtio_pci", "virtio_blk", "crc32c_intel", "ext4", "zram"]).unwrap();
        assert_eq!(
            o,
            [
                "kernel/arch/x86/crypto/crc32c-intel.ko.xz",
                "kernel/lib/crc16.ko.xz",
                "kernel/fs/mbcache.ko.xz",
                "kernel/fs/jbd2/jbd2.ko.xz",
                "kernel/fs/ext4/ext4.ko.xz",
                "kernel/mm/zsmalloc.ko.xz",
                "kernel/drivers/block/zram/zram.ko.xz"
            ]
        );
        let e = module_closure(dep, builtin, &["nope"]).unwrap_err();
        assert!(e.to_string().contains("nope"));
    }

    #[test]
    fn static_and_dynamic_executables_are_told_apart() {
        // The test binary itself is dynamically linked on a glibc host.
        let me = std::env::current_exe().unwrap();
        assert!(!is_static_elf(&me) || cfg!(target_env = "musl"));
        let dir = tempfile::Builder::new().prefix("pagelab-elf-").tempdir().unwrap();
        let p = dir.path().join("not-elf");
        fs::write(&p, b"#!/bin/sh\n").unwrap();
        assert!(!is_static_elf(&p));
    }
    /// A bzImage-shaped buffer: the setup header's magic and a version string at `0x200 + at`.
    fn fake_bzimage(at: u16, version: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; (0x210usize).max(0x200 + at as usize + version.len() + 1)];
        b[0x202..0x206].copy_from_slice(b"HdrS");
        b[0x20e..0x210].copy_from_slice(&at.to_le_bytes());
        b[0x200 + at as usize..][..version.len()].copy_from_slice(version);
        b
    }

    #[test]
    fn a_kernel_image_names_its_release_from_the_setup_header() {
        let img = fake_bzimage(0x1c0, b"6.6.8-cache-ext (root@host) #1 SMP PREEMPT_DYNAMIC");
        assert_eq!(bzimage_release(&img).unwrap(), "6.6.8-cache-ext");
        // Not a bzImage: an ELF vmlinux, or anything else.
        let mut elf = img.clone();
        elf[0x202..0x206].copy_from_slice(b"\x7fELF");
        assert!(bzimage_release(&elf).unwrap_err().contains("HdrS"));
        assert!(bzimage_release(b"short").unwrap_err().contains("not an x86 bzImage"));
        // A header without a version string, one that points past the file, one unterminated.
        assert!(bzimage_release(&fake_bzimage(0, b"")).unwrap_err().contains("0x20e is 0"));
        let mut past = img.clone();
        past[0x20e..0x210].copy_from_slice(&0x7000u16.to_le_bytes());
        assert!(bzimage_release(&past).unwrap_err().contains("past the end"));
        let mut open = fake_bzimage(0x10, b"6.6.8");
        open.pop();
        assert!(bzimage_release(&open).unwrap_err().contains("NUL-terminated"));
    }

    /// The (name, size) of each entry of a newc cpio archive.
    fn newc_entries(b: &[u8]) -> Vec<(String, usize)> {
        let (mut at, mut out) = (0, Vec::new());
        let hex = |s: &[u8]| usize::from_str_radix(std::str::from_utf8(s).unwrap(), 16).unwrap();
        while at + 110 <= b.len() && &b[at..at + 6] == b"070701" {
            let (size, namesize) = (hex(&b[at + 54..at + 62]), hex(&b[at + 94..at + 102]));
            let name = String::from_utf8_lossy(&b[at + 110..at + 110 + namesize - 1]).into_owned();
            if name == "TRAILER!!!" {
                break;
            }
            out.push((name, size));
            at = (at + 110 + namesize).next_multiple_of(4);
            at = (at + size).next_multiple_of(4);
        }
        out
    }

    #[test]
    fn a_kernel_image_boots_with_an_initramfs_that_loads_no_modules() {
        if static_busybox().is_none() {
            eprintln!("skipped: no static busybox on this host (busybox-static)");
            return;
        }
        let root = tempfile::Builder::new().prefix("pagelab-image-").tempdir().unwrap();
        let cache = Cache { root: root.path().to_path_buf() };
        let image = root.path().join("bzImage");
        fs::write(&image, fake_bzimage(0x1c0, b"6.6.8-cache-ext #1")).unwrap();
        let k = custom_kernel_image(&cache, &image).unwrap();
        assert_eq!(k.release, "6.6.8-cache-ext");
        assert!(k.deb.contains("built by the user"));
        assert_eq!(fs::read(&k.vmlinuz).unwrap(), fs::read(&image).unwrap());
        let entries = newc_entries(&fs::read(&k.initrd).unwrap());
        let size = |n: &str| entries.iter().find(|(name, _)| name == n).map(|e| e.1);
        assert_eq!(size("etc/modules.order"), Some(0), "{entries:?}");
        assert!(size("init").is_some_and(|s| s > 0) && size("bin/busybox").is_some_and(|s| s > 0));
        assert!(!entries.iter().any(|(n, _)| n.starts_with("lib/modules/")), "no modules: {entries:?}");
        // Cached by content: another image gets its own entry.
        fs::write(&image, fake_bzimage(0x1c0, b"6.6.9 #2")).unwrap();
        let k2 = custom_kernel_image(&cache, &image).unwrap();
        assert_eq!(k2.release, "6.6.9");
        assert_ne!(k2.vmlinuz, k.vmlinuz);
        // Not a kernel: the error names the file.
        fs::write(&image, b"#!/bin/sh\n").unwrap();
        let e = custom_kernel_image(&cache, &image).unwrap_err().to_string();
        assert!(e.contains("bzImage") && e.contains(&image.display().to_string()), "{e}");
    }
}
