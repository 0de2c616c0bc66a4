//! libCacheSim's LCS traces (`traceReader/generalReader/lcs.h`): an 8 KiB header
//! (`u64 start_magic = 0x123456789abcdef0`, `u64 version`, a 8000-byte statistics block,
//! 21 unused `u64`s, `u64 end_magic`, the same number) and packed little-endian records
//! whose layout the version gives:
//!
//! | version | record | bytes |
//! |---|---|---|
//! | 1 | `u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime` (oracleGeneral's) | 24 |
//! | 2 | `u32 clock_time, u64 obj_id, u32 obj_size, u32 op:8 tenant:24, i64 next_access_vtime` | 28 |
//! | 3 | `u32 clock_time, u64 obj_id, i64 obj_size, u32 op:8 tenant:24, u32 ttl, i64 next_access_vtime` | 36 |
//! | 4–8 | version 3's, then 1, 2, 4, 8 or 16 `u32` features | 40, 44, 52, 68, 100 |
//!
//! The operation is libCacheSim's `req_op_e`: 0 nop, 1 get, 2 gets, 3 set, 4 add, 5 cas,
//! 6 replace, 7 append, 8 prepend, 9 delete, 10 incr, 11 decr, 12 read, 13 write, 14 update.
//! nop, get, gets and read are reads; delete is skipped (no access); the others are writes;
//! 15 (invalid) and above are errors. Version 1 has no operation (each record is a plain
//! access). Each object is one 4 KiB page; `clock_time` is in seconds and must not go
//! backwards; a negative `obj_size` (version 3 on) is an error, a zero one is an access
//! like any other, as in oracleGeneral. Plain or zstd-compressed.

use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use super::{input, Keys, Kind, Request, RequestReader, TimeOrder};
use crate::{err, TraceError};

pub const LCS_MAGIC: u64 = 0x1234_5678_9abc_def0;
pub const LCS_HEADER: usize = 8192;

/// Bytes of a record of `version`.
pub fn record_size(version: u64) -> Option<usize> {
    Some(match version {
        1 => 24,
        2 => 28,
        3 => 36,
        4 => 40,
        5 => 44,
        6 => 52,
        7 => 68,
        8 => 100,
        _ => return None,
    })
}

/// The kind of a `req_op_e` value; `None` for delete.
pub fn op_kind(op: u8) -> Result<Option<Kind>, String> {
    Ok(Some(match op {
        0 | 1 | 2 | 12 => Kind::Read,
        9 => return Ok(None),
        3..=8 | 10 | 11 | 13 | 14 => Kind::Write,
        _ => return Err(format!("unknown operation {op} (libCacheSim's req_op_e ends at 14, update)")),
    }))
}

pub struct LcsReader {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    compressed: bool,
    version: u64,
    size: usize,
    rec: Vec<u8>,
    /// Offset of the next record (of the decompressed stream).
    offset: u64,
    order: TimeOrder,
    skipped: u64,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn fill(r: &mut dyn BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl LcsReader {
    pub fn open(path: &Path) -> Result<LcsReader, TraceError> {
        let (input, c) = input::open(path)?;
        LcsReader::new(path, input, c == input::Compression::Zstd || c == input::Compression::Gzip)
    }

    pub fn new(path: &Path, mut input: Box<dyn BufRead + Send>, compressed: bool) -> Result<LcsReader, TraceError> {
        let z = if compressed { "decompressed " } else { "" };
        let mut h = vec![0u8; LCS_HEADER];
        let got = fill(input.as_mut(), &mut h).map_err(|e| err(path, Some(0), format!("cannot read the LCS header: {e}")))?;
        if got < 8 || u64_at(&h, 0) != LCS_MAGIC {
            return Err(err(path, Some(0), format!("not an LCS trace: the {z}file does not start with LCS's magic number 0x123456789abcdef0")));
        }
        if got < LCS_HEADER {
            return Err(err(path, Some(got as u64), format!("truncated LCS header: the {z}file has {got} of its {LCS_HEADER} bytes")));
        }
        if u64_at(&h, LCS_HEADER - 8) != LCS_MAGIC {
            return Err(err(path, Some((LCS_HEADER - 8) as u64), "corrupt LCS header: its end magic number is not 0x123456789abcdef0"));
        }
        let version = u64_at(&h, 8);
        let size = record_size(version).ok_or_else(|| err(path, Some(8), format!("LCS version {version} is not one pagelab reads (1 to 8)")))?;
        Ok(LcsReader {
            path: path.to_path_buf(),
            input,
            compressed,
            version,
            size,
            rec: vec![0; size],
            offset: LCS_HEADER as u64,
            order: TimeOrder::default(),
            skipped: 0,
        })
    }

    /// libCacheSim's oracleGeneral trace read as an access stream: LCS version 1's records
    /// without the header (plain or zstd), so its times (seconds) come along; they must not
    /// go backwards either.
    pub fn oracle_general(path: &Path) -> Result<LcsReader, TraceError> {
        let (input, c) = input::open(path)?;
        let size = record_size(1).expect("version 1");
        Ok(LcsReader {
            path: path.to_path_buf(),
            input,
            compressed: c != input::Compression::None,
            version: 1,
            size,
            rec: vec![0; size],
            offset: 0,
            order: TimeOrder::default(),
            skipped: 0,
        })
    }

    pub fn version(&self) -> u64 {
        self.version
    }
}

impl RequestReader for LcsReader {
    fn keys(&self) -> Keys {
        Keys::Mapped
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            let at = self.offset;
            let got = fill(self.input.as_mut(), &mut self.rec)
                .map_err(|e| err(&self.path, Some(at), format!("cannot read{}: {e}", if self.compressed { " (bad compressed data?)" } else { "" })))?;
            if got == 0 {
                return Ok(None);
            }
            if got < self.size {
                return Err(err(
                    &self.path,
                    Some(at),
                    format!(
                        "truncated record: the {}trace ends {got} bytes into a {}-byte version {} record",
                        if self.compressed { "decompressed " } else { "" },
                        self.size,
                        self.version
                    ),
                ));
            }
            self.offset += self.size as u64;
            let r = &self.rec;
            let time = u32_at(r, 0) as u64;
            let id = u64_at(r, 4);
            let op = match self.version {
                1 => None,
                2 => Some(r[16]),
                _ => {
                    let size = u64_at(r, 12) as i64;
                    if size < 0 {
                        return Err(err(&self.path, Some(at), format!("negative object size {size}")));
                    }
                    Some(r[20])
                }
            };
            let kind = match op {
                None => Some(Kind::Plain),
                Some(op) => op_kind(op).map_err(|m| err(&self.path, Some(at), m))?,
            };
            let path = self.path.clone();
            self.order.check(&path, time, || format!("byte offset {at}"), |t| format!("{t} s"))?;
            match kind {
                Some(kind) => return Ok(Some(Request { key: id, npages: 1, kind, time_ns: Some(time * 1_000_000_000) })),
                None => self.skipped += 1,
            }
        }
    }
}

/// Writes an LCS trace of `version` 1, 2 or 3 (tests): records `(time, id, size, op)`.
pub fn write_lcs(path: &Path, version: u64, records: &[(u32, u64, i64, u8)]) -> io::Result<()> {
    let mut out = vec![0u8; LCS_HEADER];
    out[0..8].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    out[8..16].copy_from_slice(&version.to_le_bytes());
    out[16..24].copy_from_slice(&1i64.to_le_bytes());
    out[24..32].copy_from_slice(&(records.len() as i64).to_le_bytes());
    out[LCS_HEADER - 8..].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    for &(t, id, size, op) in records {
        out.extend_from_slice(&t.to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
        match version {
            1 => out.extend_from_slice(&(size as u32).to_le_bytes()),
            2 => {
                out.extend_from_slice(&(size as u32).to_le_bytes());
                out.extend_from_slice(&(op as u32).to_le_bytes());
            }
            _ => {
                out.extend_from_slice(&size.to_le_bytes());
                out.extend_from_slice(&(op as u32).to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
            }
        }
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    std::fs::write(path, out)
}
