//! Everything the command line writes goes through here: files (`--json`, `--csv`,
//! `--parquet`, `trace-convert`'s output, `--json-dir`) and standard output.
//!
//! A file output is checked before the run that fills it (a bad path fails at once), is
//! refused when it is the same file as an input or as another output (device and inode, so
//! a symlink or a second name counts), and is written to a temporary file in its directory
//! that is renamed over the path only once written whole: a failed run leaves no
//! half-written or empty output, and never touches an input. A path that exists and is not
//! a regular file (`/dev/null`, a FIFO, a terminal) is written directly: renaming over it
//! would replace the device with a file.
//!
//! Standard output is written with [`print`] (the `out!` macro), which returns the write's
//! error instead of panicking as `print!` does (`pagelab run ... > /dev/full`); a reader
//! that went away ([`is_broken_pipe`]) ends the command quietly.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file's identity: device and inode when it exists, else its absolute path (its
/// directory resolved), so two outputs that do not exist yet still compare.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Path(PathBuf),
}

fn identity(path: &Path) -> Option<Identity> {
    if let Ok(m) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        return Some(Identity::Inode(m.dev(), m.ino()));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).ok()?;
    Some(Identity::Path(dir.join(path.file_name()?)))
}

/// The files a command reads and the outputs it has claimed so far: an output may be none
/// of them.
#[derive(Default)]
pub struct Files {
    /// (how the file was given, e.g. "the trace" or "--json", its path, its identity).
    taken: Vec<(String, PathBuf, Identity)>,
}

impl Files {
    /// The files in `inputs` (what each is, its path).
    pub fn inputs<'a>(inputs: impl IntoIterator<Item = (&'a str, &'a Path)>) -> Files {
        let mut f = Files::default();
        for (what, p) in inputs {
            if let Some(id) = identity(p) {
                f.taken.push((what.to_string(), p.to_path_buf(), id));
            }
        }
        f
    }

    /// Claims `path` as the output of `flag`: "-" is standard output (when `stdout_ok`),
    /// anything else a file that is checked and opened now. See the module's comment.
    pub fn output(&mut self, flag: &str, path: &Path, stdout_ok: bool) -> Result<Output> {
        if path.as_os_str() == "-" {
            if !stdout_ok {
                anyhow::bail!("{flag} -: this output is written to a file, not to standard output");
            }
            return Ok(Output { label: format!("{flag} -"), target: Target::Stdout });
        }
        let id = identity(path);
        if let Some(id) = &id {
            if let Some((what, p, _)) = self.taken.iter().find(|(_, _, t)| t == id) {
                anyhow::bail!(
                    "{flag} {}: this is the same file as {what} ({}); pagelab never writes over its inputs or writes two outputs to one file",
                    path.display(),
                    p.display()
                );
            }
        }
        // Write through a symlink to the file it names, as a plain write would.
        let dest = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if std::fs::metadata(&dest).is_ok_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new().write(true).open(&dest).with_context(|| format!("{flag}: cannot write {}", path.display()))?;
            if let Some(id) = id {
                self.taken.push((flag.to_string(), path.to_path_buf(), id));
            }
            return Ok(Output { label: format!("{flag} {}", path.display()), target: Target::Special { dest, file } });
        }
        let dir = dest.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".pagelab-")
            .suffix(".part")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(dir)
            .with_context(|| format!("{flag}: cannot write {} (cannot create a file in {})", path.display(), dir.display()))?;
        if let Some(id) = id {
            self.taken.push((flag.to_string(), path.to_path_buf(), id));
        }
        Ok(Output { label: format!("{flag} {}", path.display()), target: Target::File { dest, tmp } })
    }
}

enum Target {
    Stdout,
    /// A device or FIFO, written in place (it is never renamed over).
    Special {
        dest: PathBuf,
        file: std::fs::File,
    },
    /// The temporary file (removed when dropped unless persisted) and the path it becomes.
    File {
        dest: PathBuf,
        tmp: tempfile::NamedTempFile,
    },
}

/// An output claimed by [`Files::output`]: written whole by [`Output::write`] or, for a
/// writer that needs the file ([`Output::file`]), committed by [`Output::commit`]. Dropped
/// without either, it leaves nothing behind.
pub struct Output {
    label: String,
    target: Target,
}

impl Output {
    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout)
    }

    /// The temporary file to fill (`None` for standard output).
    pub fn file(&mut self) -> Option<&mut std::fs::File> {
        match &mut self.target {
            Target::Stdout => None,
            Target::Special { file, .. } => Some(file),
            Target::File { tmp, .. } => Some(tmp.as_file_mut()),
        }
    }

    /// The temporary file's path, for a writer that opens it by name.
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.target {
            Target::Stdout => None,
            Target::Special { dest, .. } => Some(dest),
            Target::File { tmp, .. } => Some(tmp.path()),
        }
    }

    /// Writes `bytes` and puts the file in place (or writes them to standard output).
    pub fn write(mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.target {
            Target::Stdout => write_stdout(bytes),
            Target::Special { file, .. } => file.write_all(bytes).with_context(|| format!("{}: cannot write", self.label)),
            Target::File { tmp, .. } => {
                tmp.write_all(bytes).with_context(|| format!("{}: cannot write", self.label))?;
                self.commit()
            }
        }
    }

    /// Puts the filled temporary file in place of the output's path.
    pub fn commit(self) -> Result<()> {
        match self.target {
            Target::Stdout => flush_stdout(),
            Target::Special { mut file, .. } => file.flush().with_context(|| format!("{}: cannot write", self.label)),
            Target::File { dest, tmp } => {
                tmp.as_file().sync_all().with_context(|| format!("{}: cannot write", self.label))?;
                tmp.persist(&dest).map_err(|e| e.error).with_context(|| format!("{}: cannot rename the written file into place", self.label))?;
                Ok(())
            }
        }
    }
}

/// A failed write to standard output (the `out!` macro's error).
#[derive(Debug)]
pub struct StdoutError(pub std::io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// Prints to standard output, returning the write's error (see the `out!` macro).
pub fn print(args: fmt::Arguments) -> Result<()> {
    std::io::stdout().lock().write_fmt(args).map_err(|e| StdoutError(e).into())
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).map_err(StdoutError)?;
    out.flush().map_err(|e| StdoutError(e).into())
}

/// Flushes standard output (what a command printed without a final newline is written only
/// here, so its error is seen).
pub fn flush_stdout() -> Result<()> {
    std::io::stdout().lock().flush().map_err(|e| StdoutError(e).into())
}

/// Whether `e` is standard output's reader having gone away (`pagelab ... | head -1`), which
/// ends the command quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<StdoutError>().is_some_and(|s| s.0.kind() == std::io::ErrorKind::BrokenPipe))
}
