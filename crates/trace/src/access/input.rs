//! Trace input: plain, gzip or zstd (told apart by their magic numbers), and text read line
//! by line with the line numbers errors name.

use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::{err, TraceError, ZSTD_MAGIC};

/// The magic number of a gzip member (RFC 1952).
pub const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
/// A line longer than this is an error (no trace format has lines this long; a binary file
/// read as text would otherwise be read whole into one line).
pub const MAX_LINE: usize = 64 * 1024;

/// How a trace file is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Opens `path`, decompressing it if its first bytes say gzip or zstd.
pub fn open(path: &Path) -> Result<(Box<dyn BufRead + Send>, Compression), TraceError> {
    let mut f = crate::open_file(path, false)?;
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match f.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(path, Some(0), format!("cannot read: {e}"))),
        }
    }
    let head = io::Cursor::new(magic[..got].to_vec());
    let whole = head.chain(f);
    if got == 4 && magic == ZSTD_MAGIC {
        Ok((Box::new(BufReader::with_capacity(1 << 16, crate::zstd_decoder(path, whole)?)), Compression::Zstd))
    } else if got >= 2 && magic[..2] == GZIP_MAGIC {
        Ok((Box::new(BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(whole))), Compression::Gzip))
    } else {
        Ok((Box::new(BufReader::with_capacity(1 << 16, whole)), Compression::None))
    }
}

/// A text trace, line by line.
pub struct Lines {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    text: String,
    line: u64,
    compression: Compression,
}

impl Lines {
    pub fn open(path: &Path) -> Result<Lines, TraceError> {
        let (input, compression) = open(path)?;
        Ok(Lines { path: path.to_path_buf(), input, buf: Vec::new(), text: String::new(), line: 0, compression })
    }

    /// Lines from memory (tests, fuzzing); `path` names them in errors.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Lines {
        Lines {
            path: path.to_path_buf(),
            input: Box::new(io::Cursor::new(bytes)),
            buf: Vec::new(),
            text: String::new(),
            line: 0,
            compression: Compression::None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The number of the line [`Lines::next_line`] returned last (from 1).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// An error at the current line.
    pub fn error(&self, msg: impl std::fmt::Display) -> TraceError {
        err(&self.path, None, format!("line {}: {msg}", self.line))
    }

    /// The line [`Lines::advance`] read last, without its end (`\n` or `\r\n`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Skips whole lines of spaces, tabs and carriage returns in bulk, counting them, so a
    /// reader that ignores blank lines does not pay a [`Lines::advance`] for each (a few
    /// hundred bytes of zstd can hold millions of them). Stops at the first other byte, or at
    /// a blank run cut by the end of the buffer, leaving that line to [`Lines::advance`].
    pub fn skip_blank_lines(&mut self) -> Result<(), TraceError> {
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.error(format!("cannot read{}: {e}", self.how()))),
            };
            let mut lines = 0u64;
            let mut through = 0;
            for (i, &b) in avail.iter().enumerate() {
                match b {
                    b'\n' => {
                        lines += 1;
                        through = i + 1;
                    }
                    b' ' | b'\t' | b'\r' => {}
                    _ => break,
                }
            }
            let whole_buffer = through == avail.len() && through > 0;
            self.input.consume(through);
            self.line += lines;
            if !whole_buffer {
                return Ok(());
            }
        }
    }

    /// Reads the next line (then [`Lines::text`]); false at the end of the input.
    pub fn advance(&mut self) -> Result<bool, TraceError> {
        self.buf = std::mem::take(&mut self.text).into_bytes();
        self.buf.clear();
        self.line += 1;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.error(format!("cannot read{}: {e}", self.how()))),
            };
            if avail.is_empty() {
                if self.buf.is_empty() {
                    return Ok(false);
                }
                break;
            }
            let (take, done) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            if self.buf.len() + take > MAX_LINE + 2 {
                return Err(self.error(format!("longer than {MAX_LINE} bytes: not a text trace?")));
            }
            self.buf.extend_from_slice(&avail[..take]);
            self.input.consume(take);
            if done {
                break;
            }
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(s) => {
                self.text = s;
                Ok(true)
            }
            Err(e) => Err(err(&self.path, None, format!("line {}: not text (invalid UTF-8 at column {})", self.line, e.utf8_error().valid_up_to() + 1))),
        }
    }

    fn how(&self) -> &'static str {
        match self.compression {
            Compression::None => "",
            Compression::Gzip => " (bad gzip data?)",
            Compression::Zstd => " (bad zstd data?)",
        }
    }
}
