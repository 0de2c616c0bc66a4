//! pagelab-trace: page-access traces as pagelab reads them.
//!
//! * [`OracleReader`] streams libCacheSim's `oracleGeneral` traces: packed little-endian
//!   24-byte records `u32 time, u64 obj_id, u32 obj_size, i64 next_access_vtime`, plain or
//!   zstd-compressed (detected by the zstd frame magic, whatever the file is called). A
//!   thread of its own reads (and decompresses) about 1 MiB of whole records at a time into
//!   five reused buffers, so reading overlaps simulating in constant memory; it never drops
//!   a record: a truncated last record or a corrupt zstd stream is an error naming the file
//!   and the byte offset.
//! * [`IdMap`] maps object ids to dense page indices (0, 1, 2, ... in order of first access)
//!   in a flat open-addressing table, once per record, so the simulators keep per-page state
//!   in flat arrays instead of hash maps.
//! * The *dense* format is pagelab's own: a 32-byte header (`PLDENSE1`, records, pages, 0)
//!   and one little-endian `u32` page index per access. [`convert`] writes it from an
//!   oracleGeneral trace; [`DenseReader`] reads it back at memory bandwidth.
//! * [`PageSource`] is what the simulators consume: batches of dense page indices (with the
//!   oracle's next-access times when the trace has them), from either format.

pub mod access;
pub mod iolog;
pub mod stats;
pub mod workload;

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pagelab_host::hugevec::{self, filled as huge_vec};
use pagelab_host::interrupt;

/// Bytes of one oracleGeneral record.
pub const ORACLE_RECORD: usize = 24;
/// The magic number that starts every zstd frame (RFC 8878).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// The magic number of pagelab's dense format.
pub const DENSE_MAGIC: [u8; 8] = *b"PLDENSE1";
/// Bytes of the dense format's header.
pub const DENSE_HEADER: u64 = 32;
/// Bytes read per batch.
const BATCH_BYTES: usize = 1 << 20;

/// A trace that cannot be read: the file, where in it (bytes from its start; for zstd files,
/// of the decompressed stream unless the message says otherwise) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub path: PathBuf,
    pub offset: Option<u64>,
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: byte offset {o}: {}", self.path.display(), self.msg),
            None => write!(f, "{}: {}", self.path.display(), self.msg),
        }
    }
}

impl std::error::Error for TraceError {}

fn err(path: &Path, offset: Option<u64>, msg: impl Into<String>) -> TraceError {
    TraceError { path: path.to_path_buf(), offset, msg: msg.into() }
}

/// Opens a trace file without hanging on what is not one. A format read with its size known
/// (`regular`: oracleGeneral, dense) takes only a regular file: a device such as /dev/zero
/// reports size 0 and never ends. A streamed format also takes a pipe (`<(zstdcat ...)`),
/// opened without waiting for a writer (open(2) of a FIFO nobody writes to blocks forever)
/// and then read normally: a pipe without a writer reads as empty. A directory is refused.
pub fn open_file(path: &Path, regular: bool) -> Result<File, TraceError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let m = std::fs::metadata(path).map_err(|e| err(path, None, format!("cannot open: {e}")))?;
    let t = m.file_type();
    let what = if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() && regular {
        Some("a pipe (FIFO)")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    };
    if let Some(what) = what {
        let why = if regular { "this trace format is read from a regular file (copy the trace into one)" } else { "pagelab reads a regular file or a pipe" };
        return Err(err(path, None, format!("is {what}: {why}")));
    }
    if !t.is_fifo() {
        return File::open(path).map_err(|e| err(path, None, format!("cannot open: {e}")));
    }
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(|e| err(path, None, format!("cannot open: {e}")))?;
    // Back to blocking reads: the writer may be slower than the reader.
    let fd = std::os::unix::io::AsRawFd::as_raw_fd(&f);
    // SAFETY: fcntl on a descriptor this function owns.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !ok {
        return Err(err(path, None, format!("cannot read the pipe: {}", io::Error::last_os_error())));
    }
    Ok(f)
}

/// The trace formats pagelab reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// libCacheSim's oracleGeneral (plain or zstd).
    OracleGeneral,
    /// pagelab's dense page-index format.
    Dense,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "oracleGeneral" | "oraclegeneral" | "oracle" => Ok(Format::OracleGeneral),
            "dense" | "pagelab" => Ok(Format::Dense),
            _ => Err(format!("unknown trace format `{s}` (expected `oracleGeneral` or `dense`)")),
        }
    }
}

/// One oracleGeneral record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub time: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    /// The index (from 0) of the next record of the same object; -1 if there is none.
    pub next_access_vtime: i64,
}

impl Record {
    /// Decodes one record from its 24 bytes.
    #[inline(always)]
    pub fn parse(b: &[u8]) -> Record {
        let b: &[u8; ORACLE_RECORD] = b[..ORACLE_RECORD].try_into().expect("24 bytes");
        Record {
            time: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            obj_id: obj_id(b),
            obj_size: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
            next_access_vtime: i64::from_le_bytes([b[16], b[17], b[18], b[19], b[20], b[21], b[22], b[23]]),
        }
    }

    /// Encodes the record as 24 bytes.
    pub fn to_bytes(&self) -> [u8; ORACLE_RECORD] {
        let mut b = [0u8; ORACLE_RECORD];
        b[0..4].copy_from_slice(&self.time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }
}

/// The object id of a raw oracleGeneral record.
#[inline(always)]
pub fn obj_id(b: &[u8; ORACLE_RECORD]) -> u64 {
    u64::from_le_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]])
}

/// The object size of a raw oracleGeneral record.
#[inline(always)]
pub fn obj_size(b: &[u8; ORACLE_RECORD]) -> u32 {
    u32::from_le_bytes([b[12], b[13], b[14], b[15]])
}

#[inline(always)]
fn next_vtime(b: &[u8; ORACLE_RECORD]) -> i64 {
    i64::from_le_bytes([b[16], b[17], b[18], b[19], b[20], b[21], b[22], b[23]])
}

/// A zstd decoder over `src` (`path` names it in errors). Without the `zstd` feature (the
/// oracle's static guest runner), a zstd trace is an error that says to decompress it.
pub(crate) fn zstd_decoder<'a>(path: &Path, src: impl Read + Send + 'a) -> Result<Box<dyn Read + Send + 'a>, TraceError> {
    #[cfg(feature = "zstd")]
    {
        let d = zstd::stream::read::Decoder::new(src).map_err(|e| err(path, Some(0), format!("zstd: {e}")))?;
        Ok(Box::new(d))
    }
    #[cfg(not(feature = "zstd"))]
    {
        drop(src);
        Err(err(path, Some(0), "a zstd-compressed trace, which this build cannot read (the oracle's guest runner): decompress it (zstd -d)"))
    }
}

/// Counts the bytes read through it (the compressed position of a zstd stream).
struct Counting<R> {
    inner: R,
    n: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
}

/// Bytes of the chunks a reader's background thread reads: a whole number of records (about
/// 1 MiB), so every chunk but the last one is handed out as it is, without a copy.
const CHUNK_BYTES: usize = ORACLE_RECORD * (BATCH_BYTES / ORACLE_RECORD);
/// Chunks a reader's thread may read ahead of the consumer.
const CHUNKS_AHEAD: usize = 3;

/// One chunk from the reading thread: its buffer, the bytes read into it (all of it unless
/// the stream ended or failed), and the error that stopped the stream, if one did.
struct Chunk {
    buf: Vec<u8>,
    len: usize,
    error: Option<io::Error>,
}

/// Why the first bytes of a file given as oracleGeneral cannot be one, if they show it:
/// empty, or another format's signature (pagelab's dense magic, gzip, or text such as a fio
/// iolog or a CSV), so the error says which `--trace-format` was meant instead of reporting
/// a truncated record.
pub fn not_oracle_general(head: &[u8]) -> Option<String> {
    if head.is_empty() {
        return Some("the trace is empty: an oracleGeneral trace holds at least one 24-byte record".into());
    }
    if head.starts_with(&DENSE_MAGIC) {
        return Some("this looks like a pagelab dense trace (it starts with PLDENSE1); pass --trace-format dense".into());
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Some("this looks like a gzip file; oracleGeneral traces are read plain or zstd-compressed (gunzip it, or zstd it)".into());
    }
    if head.starts_with(b"fio version") {
        return Some("this looks like a fio iolog; pass --trace-format fio-iolog".into());
    }
    // oracleGeneral's 24-byte records hold binary ids and sizes, whose high bytes are zero:
    // a head of nothing but printable text and line breaks is another format.
    let printable = |b: &u8| matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~');
    if head.len() >= 16 && head.iter().all(printable) && head.contains(&b'\n') {
        return Some("this looks like a text file, not libCacheSim's binary oracleGeneral records; pass the --trace-format it is in".into());
    }
    None
}

/// Reads (and decompresses) `src` in whole chunks of `chunk_bytes` on a thread of its own, so
/// reading and decompressing overlap the simulation on another core; buffers come back
/// through `free` to be reused. They are allocated as the thread needs them (a small trace
/// costs one), up to enough for the queue, the one being filled and the one being consumed.
/// The thread ends at the end of the stream, at an error, or when the reader is dropped.
fn spawn_reader(mut src: Box<dyn Read + Send>, chunk_bytes: usize, hash_ids: bool) -> (std::sync::mpsc::Receiver<Chunk>, std::sync::mpsc::Sender<Vec<u8>>) {
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Chunk>(CHUNKS_AHEAD);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let mut allocated = 0;
    std::thread::Builder::new()
        .name("trace-reader".into())
        .spawn(move || loop {
            let buf = match free_rx.try_recv() {
                Ok(buf) => Ok(buf),
                Err(_) if allocated < CHUNKS_AHEAD + 2 => {
                    allocated += 1;
                    Ok(vec![0; chunk_bytes])
                }
                Err(_) => free_rx.recv(),
            };
            let Ok(mut buf) = buf else { return };
            let (len, error) = match read_full(&mut src, &mut buf) {
                Ok(n) => (n, None),
                Err((n, e)) => (n, Some(e)),
            };
            if hash_ids {
                store_id_hashes(&mut buf[..len / ORACLE_RECORD * ORACLE_RECORD]);
            }
            let last = len < chunk_bytes || error.is_some();
            if full_tx.send(Chunk { buf, len, error }).is_err() || last {
                return;
            }
        })
        .expect("spawning the trace reader thread");
    (full_rx, free_tx)
}

/// The chunk size for a stream of `len` bytes if known: [`CHUNK_BYTES`], or for a shorter
/// plain trace one record more than the whole trace (so the first read is also the last).
fn chunk_bytes_for(len: Option<u64>) -> usize {
    match len {
        Some(n) if n < CHUNK_BYTES as u64 => n as usize + ORACLE_RECORD,
        _ => CHUNK_BYTES,
    }
}

/// Overwrites each record's next-access field with the [`mix64`] of its object id (see
/// [`OracleReader::open_hashing`]).
fn store_id_hashes(records: &mut [u8]) {
    for r in records.chunks_exact_mut(ORACLE_RECORD) {
        let r: &mut [u8; ORACLE_RECORD] = r.try_into().expect("24 bytes");
        let h = mix64(obj_id(r));
        r[16..24].copy_from_slice(&h.to_le_bytes());
    }
}

/// The id hash [`OracleReader::open_hashing`] stored in a record.
#[inline(always)]
pub fn stored_hash(b: &[u8; ORACLE_RECORD]) -> u64 {
    next_vtime(b) as u64
}

/// Streams an oracleGeneral trace in batches of whole records, read ahead by a thread.
pub struct OracleReader {
    path: PathBuf,
    chunks: std::sync::mpsc::Receiver<Chunk>,
    free: std::sync::mpsc::Sender<Vec<u8>>,
    compressed: Option<Arc<AtomicU64>>,
    /// The chunk handed out last.
    cur: Vec<u8>,
    /// Bytes of a partial record at the end of the stream (in `cur`, after the records).
    tail: usize,
    /// Stream offset of the next byte not yet handed out.
    offset: u64,
    records: u64,
    eof: bool,
    /// Records in the file, when known without reading it (plain files).
    len: Option<u64>,
    /// The size of the chunks the reading thread reads; a shorter one is the last.
    chunk_bytes: usize,
}

impl OracleReader {
    /// Opens a trace; zstd compression is detected by its magic number. A plain file whose
    /// size is not a whole number of records is refused here, before anything is read.
    pub fn open(path: impl AsRef<Path>) -> Result<OracleReader, TraceError> {
        Self::open_with(path.as_ref(), false)
    }

    /// Like [`OracleReader::open`], but the reading thread also replaces each record's
    /// next-access time with the [`mix64`] hash of its object id ([`stored_hash`]), so a
    /// consumer keyed by object id that needs no future finds the hash computed on the
    /// other core.
    pub fn open_hashing(path: impl AsRef<Path>) -> Result<OracleReader, TraceError> {
        Self::open_with(path.as_ref(), true)
    }

    fn open_with(path: &Path, hash_ids: bool) -> Result<OracleReader, TraceError> {
        let mut f = open_file(path, true)?;
        let size = f.metadata().map_err(|e| err(path, None, format!("cannot stat: {e}")))?.len();
        let mut head = [0u8; 64];
        let got = read_full(&mut f, &mut head).map_err(|(_, e)| err(path, Some(0), format!("cannot read: {e}")))?;
        f.seek(SeekFrom::Start(0)).map_err(|e| err(path, Some(0), format!("cannot seek: {e}")))?;
        if let Some(why) = not_oracle_general(&head[..got]) {
            return Err(err(path, Some(0), why));
        }
        Self::start(path, Box::new(f), size, head.starts_with(&ZSTD_MAGIC), hash_ids)
    }

    /// Reads a trace held in memory (`name` names it in errors), as [`OracleReader::open`]
    /// reads a file: the fuzz targets' entry point.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: Vec<u8>) -> Result<OracleReader, TraceError> {
        let (size, zstd) = (bytes.len() as u64, bytes.starts_with(&ZSTD_MAGIC));
        Self::start(name.as_ref(), Box::new(io::Cursor::new(bytes)), size, zstd, false)
    }

    /// Starts reading `f`, of `size` bytes, zstd-compressed if `zstd`.
    fn start(path: &Path, f: Box<dyn Read + Send>, size: u64, zstd: bool, hash_ids: bool) -> Result<OracleReader, TraceError> {
        let (src, compressed, len): (Box<dyn Read + Send>, _, _) = if zstd {
            let n = Arc::new(AtomicU64::new(0));
            let counting = Counting { inner: f, n: n.clone() };
            (zstd_decoder(path, counting)?, Some(n), None)
        } else {
            let whole = size / ORACLE_RECORD as u64 * ORACLE_RECORD as u64;
            if whole != size {
                return Err(err(
                    path,
                    Some(whole),
                    format!(
                        "truncated record: the file has {size} bytes, not a whole number of {ORACLE_RECORD}-byte oracleGeneral records; the last record has {} of {ORACLE_RECORD} bytes",
                        size - whole
                    ),
                ));
            }
            (Box::new(f), None, Some(size / ORACLE_RECORD as u64))
        };
        let chunk_bytes = chunk_bytes_for(compressed.is_none().then_some(size));
        let (chunks, free) = spawn_reader(src, chunk_bytes, hash_ids);
        Ok(OracleReader { path: path.to_path_buf(), chunks, free, compressed, cur: Vec::new(), tail: 0, offset: 0, records: 0, eof: false, len, chunk_bytes })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_compressed(&self) -> bool {
        self.compressed.is_some()
    }

    /// Records in the trace, if known before reading it (plain files).
    pub fn len_hint(&self) -> Option<u64> {
        self.len
    }

    /// Records handed out so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The next batch of whole records as raw bytes (a multiple of 24 long; decode with
    /// [`Record::parse`]), or `None` at the end of the trace.
    pub fn next_batch(&mut self) -> Result<Option<&[u8]>, TraceError> {
        if interrupt::requested() {
            return Err(err(&self.path, Some(self.offset), "interrupted"));
        }
        if self.eof {
            if self.tail > 0 {
                return Err(err(
                    &self.path,
                    Some(self.offset),
                    format!(
                        "truncated record: the {}trace ends {} bytes into record {} ({ORACLE_RECORD} bytes each)",
                        if self.compressed.is_some() { "decompressed " } else { "" },
                        self.tail,
                        self.records
                    ),
                ));
            }
            return Ok(None);
        }
        if !self.cur.is_empty() {
            let _ = self.free.send(std::mem::take(&mut self.cur));
        }
        let Ok(Chunk { buf, len, error }) = self.chunks.recv() else {
            // The thread only stops without a last chunk if it could not run at all.
            return Err(err(&self.path, Some(self.offset), "the trace reader thread stopped"));
        };
        if let Some(e) = error {
            self.eof = true;
            return Err(self.read_error(self.offset + len as u64, e));
        }
        self.eof = len < self.chunk_bytes;
        let whole = len / ORACLE_RECORD * ORACLE_RECORD;
        // A whole chunk of records that are nothing but zeros (time 0, object 0, size 0; the
        // next-access field may hold an id's hash) is no trace: a zero-filled file, or a few
        // bytes of zstd that decompress to gigabytes of them, would replay as a long run of
        // zero-size records. The first non-zero byte ends the check (a real trace's first
        // record), so it costs nothing.
        if len == self.chunk_bytes && buf[..whole].chunks_exact(ORACLE_RECORD).all(|r| r[..16] == [0; 16]) {
            self.eof = true;
            return Err(err(
                &self.path,
                Some(self.offset),
                format!(
                    "{} records of zero bytes from here (time 0, object 0, size 0): not an oracleGeneral trace (a zero-filled file?)",
                    whole / ORACLE_RECORD
                ),
            ));
        }
        self.tail = len - whole;
        self.cur = buf;
        self.offset += whole as u64;
        self.records += (whole / ORACLE_RECORD) as u64;
        if whole == 0 {
            return self.next_batch();
        }
        Ok(Some(&self.cur[..whole]))
    }

    fn read_error(&self, at: u64, e: io::Error) -> TraceError {
        match &self.compressed {
            Some(n) => err(
                &self.path,
                Some(n.load(Ordering::Relaxed)),
                format!("bad zstd data (compressed byte offset; {at} bytes, {} whole records, decompressed before it): {e}", at / ORACLE_RECORD as u64),
            ),
            None => err(&self.path, Some(at), format!("read error: {e}")),
        }
    }

    /// Reads the whole trace record by record (convenient, not the fastest way).
    pub fn for_each(mut self, mut f: impl FnMut(Record)) -> Result<u64, TraceError> {
        while let Some(b) = self.next_batch()? {
            for r in b.chunks_exact(ORACLE_RECORD) {
                f(Record::parse(r));
            }
        }
        Ok(self.records)
    }
}

/// Reads until `buf` is full or the stream ends; on an error, the bytes read before it too.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, (usize, io::Error)> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((n, e)),
        }
    }
    Ok(n)
}

pub use pagelab_host::prefetch;

const EMPTY: u32 = u32::MAX;

/// Scrambles an object id for a hash table that takes the top bits: a multiply, a fold of
/// the high half into the low, and a second multiply. One multiply alone (Fibonacci hashing)
/// clusters ids that are themselves multiples of a constant, as trace generators often
/// make them (ids `rank * 0x9E37_79B9_7F4A_7C15`: 3.4x slower probes in a test).
#[inline(always)]
pub fn mix64(key: u64) -> u64 {
    let h = key.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (h ^ (h >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB)
}

/// Object id → dense page index, in order of first appearance. The ids are kept once, in
/// index order (`keys`, 8 bytes an object); the hash table holds only indices (4 bytes a
/// slot, open addressing with linear probing over a power of two, at most half full, ids
/// scrambled by [`mix64`]), so the map takes 16–24 bytes of memory an object instead of the
/// 32–64 of a table of (id, index) pairs: a 100 M-object trace maps in about 2 GiB. A probe
/// compares `keys[slot]`, a second, dependent load, which [`IdMap::map_records`] prefetches.
pub struct IdMap {
    table: Vec<u32>,
    keys: Vec<u64>,
    shift: u32,
    hashes: Vec<u64>,
}

impl Default for IdMap {
    fn default() -> Self {
        IdMap::with_capacity(1 << 16)
    }
}

impl IdMap {
    /// A map sized for `n` objects without growing.
    pub fn with_capacity(n: usize) -> IdMap {
        let size = (n.max(8) * 2).next_power_of_two();
        let mut keys = Vec::new();
        hugevec::reserve(&mut keys, size / 2);
        IdMap { table: huge_vec(size, EMPTY), keys, shift: 64 - size.trailing_zeros(), hashes: Vec::new() }
    }

    /// Distinct objects seen (the next new object gets this index).
    pub fn len(&self) -> u32 {
        self.keys.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Bytes allocated (the ids' vector is reserved for a full table; only the ids stored
    /// so far are ever written, so the resident memory is smaller).
    pub fn state_bytes(&self) -> u64 {
        (self.table.capacity() * 4 + self.keys.capacity() * 8 + self.hashes.capacity() * 8) as u64
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (mix64(key) >> self.shift) as usize
    }

    /// The dense index of `key`, if it was seen.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        let mask = self.table.len() - 1;
        let mut i = self.home(key);
        loop {
            let v = self.table[i];
            if v == EMPTY {
                return None;
            }
            if self.keys[v as usize] == key {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }

    /// The dense index of `key`, giving it the next index if it is new.
    #[inline]
    pub fn get_or_insert(&mut self, key: u64) -> u32 {
        let h = self.home(key);
        self.get_or_insert_at(key, h)
    }

    #[inline(always)]
    fn get_or_insert_at(&mut self, key: u64, home: usize) -> u32 {
        let mask = self.table.len() - 1;
        let mut i = home;
        loop {
            let v = self.table[i];
            if v == EMPTY {
                break;
            }
            if self.keys[v as usize] == key {
                return v;
            }
            i = (i + 1) & mask;
        }
        assert!(self.len() < EMPTY - 1, "more than 2^32-2 distinct objects");
        let v = self.len();
        self.table[i] = v;
        self.keys.push(key);
        if self.keys.len() * 2 > self.table.len() {
            self.grow();
        }
        v
    }

    fn grow(&mut self) {
        let size = self.table.len() * 2;
        self.table = huge_vec(size, EMPTY);
        self.shift = 64 - size.trailing_zeros();
        let more = size / 2 - self.keys.len();
        hugevec::reserve(&mut self.keys, more);
        let mask = size - 1;
        for (v, &key) in self.keys.iter().enumerate() {
            let mut i = (mix64(key) >> self.shift) as usize;
            while self.table[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.table[i] = v as u32;
        }
    }

    /// Maps the object ids of a batch of raw oracleGeneral records, appending their dense
    /// indices to `out` (and, if given, their next-access times to `next`). New objects
    /// get new indices unless `frozen`, when an unknown object is an error (its record's
    /// index in the batch).
    pub fn map_records(&mut self, raw: &[u8], out: &mut Vec<u32>, mut next: Option<&mut Vec<i64>>, frozen: bool) -> Result<(), usize> {
        const AHEAD: usize = 96;
        let n = raw.len() / ORACLE_RECORD;
        self.hashes.clear();
        self.hashes.reserve(n);
        for r in raw.chunks_exact(ORACLE_RECORD) {
            let r: &[u8; ORACLE_RECORD] = r.try_into().expect("24 bytes");
            self.hashes.push(obj_id(r));
            if let Some(v) = next.as_deref_mut() {
                v.push(next_vtime(r));
            }
        }
        out.reserve(n);
        let hashes = std::mem::take(&mut self.hashes);
        for i in 0..n {
            if let Some(&k) = hashes.get(i + AHEAD) {
                prefetch(&self.table[self.home(k)]);
            }
            // The id in the home slot of a record nearer by, whose slot was prefetched
            // AHEAD / 2 records ago.
            if let Some(&k) = hashes.get(i + AHEAD / 2) {
                let v = self.table[self.home(k)];
                if v != EMPTY {
                    prefetch(self.keys.as_ptr().wrapping_add(v as usize));
                }
            }

            let key = hashes[i];
            let home = self.home(key);
            let v = if frozen {
                match self.get(key) {
                    Some(v) => v,
                    None => {
                        self.hashes = hashes;
                        return Err(i);
                    }
                }
            } else {
                self.get_or_insert_at(key, home)
            };
            out.push(v);
        }
        self.hashes = hashes;
        Ok(())
    }
}

/// A stream of dense page indices, what the simulators consume.
pub trait PageSource: Send {
    /// Distinct pages, if known before the trace is read (dense files; a second pass).
    fn pages(&self) -> Option<u64>;
    /// Accesses in the trace, if known before it is read.
    fn len_hint(&self) -> Option<u64>;
    /// The next batch of page indices, or `None` at the end.
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError>;
    /// The next-access times (record indices, -1 for never) of the last batch, if the trace
    /// carries them and they were asked for.
    fn next_access(&self) -> Option<&[i64]> {
        None
    }
    /// Pages seen so far (all of them at the end).
    fn pages_seen(&self) -> u64;
    /// Records with `obj_size == 0` so far (libCacheSim skips them by default; pagelab
    /// counts every record as an access).
    fn zero_size_records(&self) -> u64 {
        0
    }
}

/// An oracleGeneral trace as dense page indices, mapped on the fly.
pub struct OracleSource {
    reader: OracleReader,
    pub map: IdMap,
    frozen: bool,
    want_next: bool,
    out: Vec<u32>,
    next: Vec<i64>,
    zero: u64,
}

impl OracleSource {
    pub fn open(path: impl AsRef<Path>, want_next: bool) -> Result<OracleSource, TraceError> {
        Ok(OracleSource::from_reader(OracleReader::open(path)?, want_next))
    }

    /// The pages of an opened reader (e.g. [`OracleReader::from_bytes`]).
    pub fn from_reader(reader: OracleReader, want_next: bool) -> OracleSource {
        OracleSource { reader, map: IdMap::default(), frozen: false, want_next, out: Vec::new(), next: Vec::new(), zero: 0 }
    }

    /// A second pass over the same file with the ids of a first one: the page count is known,
    /// and indices are the same as the first pass gave.
    pub fn reopen(path: impl AsRef<Path>, map: IdMap, want_next: bool) -> Result<OracleSource, TraceError> {
        let mut s = OracleSource::open(path, want_next)?;
        s.map = map;
        s.frozen = true;
        Ok(s)
    }

    /// Reads the whole trace once: the id map (for [`OracleSource::reopen`]), the number of
    /// records and of zero-size records.
    pub fn scan(path: impl AsRef<Path>) -> Result<(IdMap, u64), TraceError> {
        let mut s = OracleSource::open(path, false)?;
        while s.next_batch()?.is_some() {}
        let n = s.reader.records_read();
        Ok((s.map, n))
    }

    pub fn records_read(&self) -> u64 {
        self.reader.records_read()
    }
}

impl PageSource for OracleSource {
    fn pages(&self) -> Option<u64> {
        self.frozen.then_some(self.map.len() as u64)
    }
    fn len_hint(&self) -> Option<u64> {
        self.reader.len_hint()
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError> {
        self.out.clear();
        self.next.clear();
        let base = self.reader.offset;
        let Some(raw) = self.reader.next_batch()? else { return Ok(None) };
        self.zero += raw.chunks_exact(ORACLE_RECORD).filter(|r| r[12..16] == [0, 0, 0, 0]).count() as u64;
        let next = if self.want_next { Some(&mut self.next) } else { None };
        if let Err(i) = self.map.map_records(raw, &mut self.out, next, self.frozen) {
            return Err(err(
                &self.reader.path,
                Some(base + (i * ORACLE_RECORD) as u64),
                "object not seen in the first pass: the file changed while it was read",
            ));
        }
        Ok(Some(&self.out))
    }
    fn next_access(&self) -> Option<&[i64]> {
        self.want_next.then_some(&self.next[..])
    }
    fn pages_seen(&self) -> u64 {
        self.map.len() as u64
    }
    fn zero_size_records(&self) -> u64 {
        self.zero
    }
}

/// One batch of a [`Threaded`] source: the pages (and next-access times), the source's
/// totals after it, and how the stream ended if it did.
struct Mapped {
    pages: Vec<u32>,
    next: Vec<i64>,
    pages_seen: u64,
    zero: u64,
    end: Option<Result<(), TraceError>>,
}

/// Batches a [`Threaded`] source may map ahead of its consumer.
const MAPPED_AHEAD: usize = 2;

/// A page source run on a thread of its own, so that decoding it (an oracleGeneral
/// trace's id mapping: a hash-table probe per record) overlaps the simulation instead of
/// preceding it. Batches come in the source's order, unchanged; the buffers are recycled,
/// so the memory is bounded. An error ends the stream after the batches before it.
pub struct Threaded {
    full: std::sync::mpsc::Receiver<Mapped>,
    free: std::sync::mpsc::Sender<(Vec<u32>, Vec<i64>)>,
    cur: Option<Mapped>,
    pages: Option<u64>,
    len_hint: Option<u64>,
    path: PathBuf,
    want_next: bool,
    pages_seen: u64,
    zero: u64,
    ended: bool,
}

impl Threaded {
    /// Moves `src` to a new thread; `path` names the trace in the error of a thread that
    /// stopped without a word.
    pub fn spawn(mut src: Box<dyn PageSource>, path: &Path, want_next: bool) -> Threaded {
        let (pages, len_hint) = (src.pages(), src.len_hint());
        let (full_tx, full) = std::sync::mpsc::sync_channel::<Mapped>(MAPPED_AHEAD);
        let (free, free_rx) = std::sync::mpsc::channel::<(Vec<u32>, Vec<i64>)>();
        for _ in 0..MAPPED_AHEAD + 2 {
            free.send((Vec::new(), Vec::new())).expect("the receiver is alive");
        }
        let stop = interrupt::current();
        std::thread::Builder::new()
            .name("trace-mapper".into())
            .spawn(move || {
                interrupt::scope(stop, || loop {
                    let Ok((mut pages, mut next)) = free_rx.recv() else { return };
                    pages.clear();
                    next.clear();
                    let end = match src.next_batch() {
                        Ok(Some(b)) => {
                            pages.extend_from_slice(b);
                            if want_next {
                                next.extend_from_slice(src.next_access().unwrap_or(&[]));
                            }
                            None
                        }
                        Ok(None) => Some(Ok(())),
                        Err(e) => Some(Err(e)),
                    };
                    let last = end.is_some();
                    let batch = Mapped { pages, next, pages_seen: src.pages_seen(), zero: src.zero_size_records(), end };
                    if full_tx.send(batch).is_err() || last {
                        return;
                    }
                })
            })
            .expect("spawning the trace mapper thread");
        Threaded { full, free, cur: None, pages, len_hint, path: path.to_path_buf(), want_next, pages_seen: 0, zero: 0, ended: false }
    }
}

impl PageSource for Threaded {
    fn pages(&self) -> Option<u64> {
        self.pages
    }
    fn len_hint(&self) -> Option<u64> {
        self.len_hint
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError> {
        if let Some(m) = self.cur.take() {
            let _ = self.free.send((m.pages, m.next));
        }
        if self.ended {
            return Ok(None);
        }
        let Ok(m) = self.full.recv() else {
            self.ended = true;
            return Err(err(&self.path, None, "the trace mapper thread stopped"));
        };
        self.pages_seen = m.pages_seen;
        self.zero = m.zero;
        match m.end {
            Some(end) => {
                self.ended = true;
                end.map(|()| None)
            }
            None => Ok(Some(&self.cur.insert(m).pages)),
        }
    }
    fn next_access(&self) -> Option<&[i64]> {
        if !self.want_next {
            return None;
        }
        Some(self.cur.as_ref().map_or(&[][..], |m| &m.next))
    }
    fn pages_seen(&self) -> u64 {
        self.pages_seen
    }
    fn zero_size_records(&self) -> u64 {
        self.zero
    }
}

/// Reads pagelab's dense format.
pub struct DenseReader {
    path: PathBuf,
    f: Box<dyn Read + Send>,
    records: u64,
    pages: u64,
    read: u64,
    buf: Vec<u32>,
}

impl DenseReader {
    pub fn open(path: impl AsRef<Path>) -> Result<DenseReader, TraceError> {
        let path = path.as_ref();
        let f = open_file(path, true)?;
        let size = f.metadata().map_err(|e| err(path, None, format!("cannot stat: {e}")))?.len();
        Self::start(path, Box::new(f), size)
    }

    /// Reads a dense trace held in memory (`name` names it in errors), as
    /// [`DenseReader::open`] reads a file: the fuzz targets' entry point.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: Vec<u8>) -> Result<DenseReader, TraceError> {
        let size = bytes.len() as u64;
        Self::start(name.as_ref(), Box::new(io::Cursor::new(bytes)), size)
    }

    /// Starts reading `f`, of `size` bytes.
    fn start(path: &Path, mut f: Box<dyn Read + Send>, size: u64) -> Result<DenseReader, TraceError> {
        let mut h = [0u8; DENSE_HEADER as usize];
        let got = read_full(&mut f, &mut h).map_err(|(_, e)| err(path, Some(0), format!("cannot read: {e}")))?;
        if got < 8 || h[..8] != DENSE_MAGIC {
            return Err(err(path, Some(0), "not a pagelab dense trace (no PLDENSE1 magic)"));
        }
        if got < h.len() {
            return Err(err(path, Some(got as u64), format!("truncated header: {got} of {DENSE_HEADER} bytes")));
        }
        let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let (records, pages) = (word(8), word(16));
        // A header's record count that overflows the byte count is as wrong as a short file.
        let want = records.checked_mul(4).and_then(|b| b.checked_add(DENSE_HEADER)).unwrap_or(u64::MAX);
        if size < want {
            let whole = (size - DENSE_HEADER) / 4;
            return Err(err(
                path,
                Some(DENSE_HEADER + whole * 4),
                format!(
                    "truncated trace: the header promises {records} records, the file holds {whole}{}",
                    if !(size - DENSE_HEADER).is_multiple_of(4) { " and part of another" } else { "" }
                ),
            ));
        }
        if size > want {
            return Err(err(path, Some(want), format!("{} bytes after the last of the {records} records the header promises", size - want)));
        }
        if records == 0 {
            return Err(err(path, Some(8), "the trace is empty: its header declares 0 records"));
        }
        // trace-convert numbers the pages densely in order of first access, so each of them is
        // some record's page; a header that declares more would size every simulator's
        // tables from a number the records do not back.
        if pages > records {
            return Err(err(
                path,
                Some(16),
                format!("the header declares {pages} pages but the trace has only {records} records: a dense trace's pages are numbered 0.. in order of first access, each one accessed"),
            ));
        }
        let buf = vec![0; (BATCH_BYTES / 4).min(records as usize)];
        Ok(DenseReader { path: path.to_path_buf(), f, records, pages, read: 0, buf })
    }

    pub fn records(&self) -> u64 {
        self.records
    }
}

impl PageSource for DenseReader {
    fn pages(&self) -> Option<u64> {
        Some(self.pages)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.records)
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError> {
        if interrupt::requested() {
            return Err(err(&self.path, Some(DENSE_HEADER + self.read * 4), "interrupted"));
        }
        let n = ((self.records - self.read) as usize).min(self.buf.len());
        if n == 0 {
            return Ok(None);
        }
        let at = DENSE_HEADER + self.read * 4;
        // SAFETY: any bytes are a valid u32, and u8 has no alignment requirement.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr() as *mut u8, n * 4) };
        let got = read_full(&mut self.f, bytes).map_err(|(_, e)| err(&self.path, Some(at), format!("read error: {e}")))?;
        if got < n * 4 {
            return Err(err(&self.path, Some(at + got as u64), "truncated trace: the file shrank while it was read"));
        }
        #[cfg(target_endian = "big")]
        for v in &mut self.buf[..n] {
            *v = u32::from_le(*v);
        }
        let first = self.read;
        self.read += n as u64;
        let buf = &self.buf[..n];
        if let Some(i) = buf.iter().position(|&p| p as u64 >= self.pages) {
            return Err(err(
                &self.path,
                Some(DENSE_HEADER + (first + i as u64) * 4),
                format!("page index {} beyond the {} pages of the header", buf[i], self.pages),
            ));
        }
        Ok(Some(buf))
    }
    fn pages_seen(&self) -> u64 {
        self.pages
    }
}

/// Writes pagelab's dense format.
pub struct DenseWriter {
    path: PathBuf,
    w: io::BufWriter<File>,
    records: u64,
    pages: u64,
}

impl DenseWriter {
    pub fn create(path: impl AsRef<Path>) -> Result<DenseWriter, TraceError> {
        let path = path.as_ref();
        let f = File::create(path).map_err(|e| err(path, None, format!("cannot create: {e}")))?;
        let mut w = io::BufWriter::with_capacity(BATCH_BYTES, f);
        w.write_all(&[0u8; DENSE_HEADER as usize]).map_err(|e| err(path, Some(0), format!("write error: {e}")))?;
        Ok(DenseWriter { path: path.to_path_buf(), w, records: 0, pages: 0 })
    }

    pub fn write(&mut self, pages: &[u32]) -> Result<(), TraceError> {
        let at = DENSE_HEADER + self.records * 4;
        let io = |e: io::Error| err(&self.path, Some(at), format!("write error: {e}"));
        self.pages = self.pages.max(pages.iter().max().map_or(0, |&p| p as u64 + 1));
        if cfg!(target_endian = "little") {
            // SAFETY: a u32 slice is readable as its bytes; on little-endian hosts those are
            // the format's bytes.
            let bytes = unsafe { std::slice::from_raw_parts(pages.as_ptr() as *const u8, pages.len() * 4) };
            self.w.write_all(bytes).map_err(io)?;
        } else {
            for &p in pages {
                self.w.write_all(&p.to_le_bytes()).map_err(io)?;
            }
        }
        self.records += pages.len() as u64;
        Ok(())
    }

    /// Writes the header; `pages` at least one more than the largest index written.
    pub fn finish(mut self, pages: u64) -> Result<(u64, u64), TraceError> {
        let pages = pages.max(self.pages);
        let io = |e: io::Error| err(&self.path, Some(0), format!("write error: {e}"));
        let mut h = [0u8; DENSE_HEADER as usize];
        h[..8].copy_from_slice(&DENSE_MAGIC);
        h[8..16].copy_from_slice(&self.records.to_le_bytes());
        h[16..24].copy_from_slice(&pages.to_le_bytes());
        self.w.seek(SeekFrom::Start(0)).map_err(io)?;
        self.w.write_all(&h).map_err(io)?;
        self.w.flush().map_err(io)?;
        Ok((self.records, pages))
    }
}

/// What [`convert`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvertStats {
    pub records: u64,
    pub pages: u64,
    pub zero_size_records: u64,
}

/// Converts an oracleGeneral trace to the dense format in one pass.
pub fn convert(input: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<ConvertStats, TraceError> {
    let mut src = OracleSource::open(input, false)?;
    let mut w = DenseWriter::create(output)?;
    while let Some(b) = src.next_batch()? {
        w.write(b)?;
    }
    let (records, pages) = w.finish(src.pages_seen())?;
    Ok(ConvertStats { records, pages, zero_size_records: src.zero_size_records() })
}

/// Opens a trace as a page source. An oracleGeneral trace is mapped on the fly, on a thread
/// of its own (pages unknown until the end), unless `two_pass`, which reads it once first
/// to know the pages.
pub fn open(path: impl AsRef<Path>, format: Format, two_pass: bool, want_next: bool) -> Result<Box<dyn PageSource>, TraceError> {
    let path = path.as_ref();
    match format {
        Format::Dense => Ok(Box::new(DenseReader::open(path)?)),
        Format::OracleGeneral if two_pass => {
            let (map, _) = OracleSource::scan(path)?;
            Ok(Box::new(OracleSource::reopen(path, map, want_next)?))
        }
        Format::OracleGeneral => Ok(Box::new(Threaded::spawn(Box::new(OracleSource::open(path, want_next)?), path, want_next))),
    }
}

/// Writes records as an oracleGeneral trace (tests and benchmarks), zstd-compressed at
/// `level` if given.
pub fn write_oracle(path: impl AsRef<Path>, records: impl IntoIterator<Item = Record>, zstd_level: Option<i32>) -> io::Result<u64> {
    let f = File::create(path)?;
    let mut w: Box<dyn Write> = match zstd_level {
        #[cfg(feature = "zstd")]
        Some(l) => Box::new(zstd::stream::write::Encoder::new(f, l)?.auto_finish()),
        #[cfg(not(feature = "zstd"))]
        Some(_) => return Err(io::Error::other("this build of pagelab-trace writes no zstd (its `zstd` feature is off)")),
        None => Box::new(io::BufWriter::with_capacity(BATCH_BYTES, f)),
    };
    let mut n = 0;
    for r in records {
        w.write_all(&r.to_bytes())?;
        n += 1;
    }
    w.flush()?;
    Ok(n)
}

/// Fills in the next-access times of a sequence of object ids (a backward pass).
pub fn with_next_access(ids: &[u64], size: u32) -> Vec<Record> {
    let mut next = vec![-1i64; ids.len()];
    let mut last: std::collections::HashMap<u64, i64> = std::collections::HashMap::new();
    for (i, &id) in ids.iter().enumerate().rev() {
        if let Some(&j) = last.get(&id) {
            next[i] = j;
        }
        last.insert(id, i as i64);
    }
    ids.iter().zip(next).enumerate().map(|(i, (&obj_id, n))| Record { time: i as u32, obj_id, obj_size: size, next_access_vtime: n }).collect()
}

#[cfg(test)]
mod tests;
