//! Access streams: the trace formats people use, read into one stream of 4 KiB page accesses
//! that keeps each access's kind (read, write, first touch).
//!
//! | format (`--trace-format`) | what a record is | pages |
//! |---|---|---|
//! | `text` | `PAGE`, `R PAGE`, `W PAGE` or `T PAGE`, one a line | the 0-based page index as written |
//! | `lcs` | a libCacheSim LCS record (versions 1–8, 8 KiB header) | one page per object id |
//! | `csv:SPEC` | a row with configurable columns (see [`csv::CsvSpec`]) | one page per object id, or the pages of `offset`+`size` |
//! | `blkparse[:C\|:Q][:MAJ,MIN]` | a completed (default) or queued request of blkparse's default output | the 4 KiB pages its 512-byte sectors cover |
//! | `msr` | a row of an MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`) | the pages its bytes cover |
//! | `oracleGeneral` | a libCacheSim oracleGeneral record (LCS version 1 without the header) | one page per object id |
//! | `dense` | a page index of pagelab's dense format | the page index as written |
//! | `iolog` | a read or write of a fio iolog (versions 2 and 3) | its file's pages, after the pages of the files named before it |
//!
//! Text formats may be plain, gzip- or zstd-compressed (detected by their magic numbers,
//! whatever the file is called); so may LCS.
//!
//! Object ids and disk pages are *mapped*: each distinct one gets the next dense page index
//! in order of first access (a request's pages in order, so a run of new pages stays a
//! run). The text format's pages are used as written.
//!
//! Every malformed record is an error naming the file and the line (text formats) or the
//! byte offset (LCS). Unknown operations, negative sizes and timestamps that go backwards are
//! errors; requests that carry no data (blkparse flushes and discards, `delete`s, zero-size
//! requests) are skipped and counted.

pub mod blkparse;
pub mod csv;
pub mod input;
pub mod lcs;
pub mod msr;
pub mod pages;
pub mod text;

use std::path::{Path, PathBuf};

use crate::{err, IdMap, PageSource, TraceError};

/// Bytes of a page.
pub const PAGE: u64 = 4096;
/// A request may cover at most this many pages (4 GiB): a larger one is an error, so a
/// corrupt size cannot make the reader spin.
pub const MAX_REQUEST_PAGES: u64 = 1 << 20;
/// Page indices as written (the text format) stay below this: pagelab's 8 TiB per object.
pub const MAX_PAGE_INDEX: u64 = u32::MAX as u64 / 2;
/// Pages handed out per batch.
const BATCH: usize = 1 << 16;

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A read (a load).
    Read,
    /// A write (a store): dirties the page; for anonymous memory, write-faults it.
    Write,
    /// The first touch of anonymous memory (the text format's `T`): the prefill, in order.
    Touch,
    /// The format does not say: the workload's kind decides (a read in a replay).
    Plain,
    /// The page leaves the file (the text format's `D`: its file was deleted or truncated),
    /// as truncate_inode_pages_range() drops it: no access, no miss.
    Drop,
}

impl Kind {
    pub fn is_write(self) -> bool {
        matches!(self, Kind::Write | Kind::Touch)
    }
}

/// One request of a trace: `npages` pages from `key` (an object id, a disk page number or
/// a page index, as the reader's [`Keys`] says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub key: u64,
    pub npages: u64,
    pub kind: Kind,
    /// Nanoseconds (from the trace's own origin), where the format has times.
    pub time_ns: Option<u64>,
}

/// What a reader's keys are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// 0-based page indices, used as they are.
    Pages,
    /// Object ids (one page each) or disk page numbers: mapped to dense indices.
    Mapped,
}

/// A reader of one format: requests in trace order.
pub trait RequestReader: Send {
    /// The next request, or `None` at the end of the trace.
    fn next_request(&mut self) -> Result<Option<Request>, TraceError>;
    fn keys(&self) -> Keys;
    /// Records read but not replayed (no data: flushes, discards, deletes, zero sizes).
    fn skipped(&self) -> u64 {
        0
    }
}

/// A trace format pagelab reads into an access stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    Text,
    Lcs,
    Csv(csv::CsvSpec),
    Blkparse(blkparse::BlkSpec),
    Msr,
    OracleGeneral,
    Dense,
    Iolog,
}

impl Spec {
    /// Parses a `--trace-format` / `trace_format` value; `None` if it names none of the
    /// formats.
    pub fn parse(text: &str) -> Option<Result<Spec, String>> {
        let (name, args) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let no_args = |s: Spec| match args {
            Some(a) => Err(format!("trace format `{name}` takes no `:{a}`")),
            None => Ok(s),
        };
        Some(match name.to_ascii_lowercase().as_str() {
            "text" | "pagelab-text" => no_args(Spec::Text),
            "lcs" => no_args(Spec::Lcs),
            "msr" | "msr-cambridge" => no_args(Spec::Msr),
            "csv" => csv::CsvSpec::parse(args.unwrap_or("")).map(Spec::Csv),
            "blkparse" => blkparse::BlkSpec::parse(args.unwrap_or("")).map(Spec::Blkparse),
            "oraclegeneral" | "oracle" => no_args(Spec::OracleGeneral),
            "dense" => no_args(Spec::Dense),
            "iolog" | "fio-iolog" => no_args(Spec::Iolog),
            _ => return None,
        })
    }

    /// The names of these formats, for messages.
    pub const NAMES: &'static str = "text, lcs, csv:COLUMNS, blkparse[:C|:Q][:MAJ,MIN], msr, oracleGeneral, dense, iolog";

    /// Whether the format's records can carry times (csv only with a `time` column, iolog
    /// only in version 3).
    pub fn has_times(&self) -> bool {
        match self {
            Spec::Text | Spec::Dense => false,
            Spec::Csv(c) => c.has_time(),
            Spec::Lcs | Spec::Blkparse(_) | Spec::Msr | Spec::OracleGeneral | Spec::Iolog => true,
        }
    }
}

/// Opens the reader of `spec` on `path`.
pub fn open_reader(path: &Path, spec: &Spec) -> Result<Box<dyn RequestReader>, TraceError> {
    Ok(match spec {
        Spec::Text => Box::new(text::TextReader::new(input::Lines::open(path)?)),
        Spec::Lcs => Box::new(lcs::LcsReader::open(path)?),
        Spec::Csv(c) => Box::new(csv::CsvReader::new(input::Lines::open(path)?, c.clone())),
        Spec::Blkparse(b) => Box::new(blkparse::BlkReader::new(input::Lines::open(path)?, b.clone())),
        Spec::Msr => Box::new(msr::MsrReader::new(input::Lines::open(path)?)),
        Spec::OracleGeneral => Box::new(lcs::LcsReader::oracle_general(path)?),
        Spec::Dense => Box::new(pages::DenseRequests::open(path)?),
        Spec::Iolog => Box::new(pages::IologRequests::open(path)?),
    })
}

/// Checks that a trace's times do not go backwards.
#[derive(Debug, Default)]
pub(crate) struct TimeOrder {
    last: Option<(u64, String)>,
}

impl TimeOrder {
    /// `at` names the record ("line 7", "byte offset 8216").
    pub(crate) fn check(&mut self, path: &Path, t: u64, at: impl FnOnce() -> String, shown: impl Fn(u64) -> String) -> Result<(), TraceError> {
        if let Some((prev, prev_at)) = &self.last {
            if t < *prev {
                let here = at();
                return Err(err(
                    path,
                    None,
                    format!(
                        "{here}: time {} is earlier than {} at {prev_at}: pagelab reads traces in time order (sort the trace by its time first)",
                        shown(t),
                        shown(*prev)
                    ),
                ));
            }
            if t == *prev {
                return Ok(());
            }
        }
        self.last = Some((t, at()));
        Ok(())
    }
}

/// One batch of an [`AccessStream`]: pages, their kinds, their times (ns).
pub type Batch<'a> = (&'a [u32], &'a [Kind], &'a [u64]);

/// What an [`AccessStream`] has read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Requests read (records with data).
    pub requests: u64,
    /// Page accesses handed out.
    pub accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub touches: u64,
    /// Pages dropped (`Kind::Drop`), counted in `accesses`.
    pub drops: u64,
    /// Accesses that carry a time.
    pub timed: u64,
    /// Records skipped (no data).
    pub skipped: u64,
}

/// A trace as page accesses: batches of page indices and their kinds, requests split into
/// 4 KiB pages, ids and disk pages mapped to dense indices.
pub struct AccessStream {
    path: PathBuf,
    reader: Box<dyn RequestReader>,
    map: Option<IdMap>,
    /// A request not yet handed out in full, and how many of its pages were.
    pending: Option<(Request, u64)>,
    pages: Vec<u32>,
    kinds: Vec<Kind>,
    times: Vec<u64>,
    /// One more than the largest page handed out.
    bound: u64,
    counts: StreamCounts,
    ended: bool,
}

impl AccessStream {
    pub fn open(path: impl AsRef<Path>, spec: &Spec) -> Result<AccessStream, TraceError> {
        let path = path.as_ref();
        Ok(AccessStream::new(path, open_reader(path, spec)?))
    }

    pub fn new(path: &Path, reader: Box<dyn RequestReader>) -> AccessStream {
        let map = (reader.keys() == Keys::Mapped).then(IdMap::default);
        AccessStream {
            path: path.to_path_buf(),
            reader,
            map,
            pending: None,
            pages: Vec::new(),
            kinds: Vec::new(),
            times: Vec::new(),
            bound: 0,
            counts: StreamCounts::default(),
            ended: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn counts(&self) -> StreamCounts {
        StreamCounts { skipped: self.reader.skipped(), ..self.counts }
    }

    /// One more than the largest page index handed out so far.
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// The next batch: page indices, their kinds and their times (ns; 0 where the trace
    /// has none), or `None` at the end.
    pub fn next_accesses(&mut self) -> Result<Option<Batch<'_>>, TraceError> {
        self.pages.clear();
        self.kinds.clear();
        self.times.clear();
        while self.pages.len() < BATCH && !self.ended {
            let (req, done) = match self.pending.take() {
                Some(p) => p,
                None => match self.reader.next_request()? {
                    Some(r) => {
                        self.counts.requests += 1;
                        (r, 0)
                    }
                    None => {
                        self.ended = true;
                        if self.counts.accesses == 0 {
                            return Err(self.no_accesses());
                        }
                        break;
                    }
                },
            };
            let n = (req.npages - done).min((BATCH - self.pages.len()) as u64);
            for i in done..done + n {
                let key = req.key + i;
                let page = match &mut self.map {
                    Some(m) => m.get_or_insert(key),
                    None => key as u32,
                };
                self.bound = self.bound.max(page as u64 + 1);
                self.pages.push(page);
                self.kinds.push(req.kind);
                self.times.push(req.time_ns.unwrap_or(0));
            }
            let c = &mut self.counts;
            c.accesses += n;
            if req.time_ns.is_some() {
                c.timed += n;
            }
            match req.kind {
                Kind::Read | Kind::Plain => c.reads += n,
                Kind::Write => c.writes += n,
                Kind::Touch => c.touches += n,
                Kind::Drop => c.drops += n,
            }
            if done + n < req.npages {
                self.pending = Some((req, done + n));
            }
        }
        if self.pages.is_empty() {
            return Ok(None);
        }
        Ok(Some((&self.pages, &self.kinds, &self.times)))
    }

    /// The error of a trace that ended without one access: empty, blank, or only records
    /// that carry no data.
    fn no_accesses(&self) -> TraceError {
        match self.reader.skipped() {
            0 => err(&self.path, None, "the trace has no accesses (it is empty or holds only blank lines and headers)"),
            n => err(&self.path, None, format!("the trace has no accesses: its {n} records carry no data (flushes, discards, deletes, zero sizes)")),
        }
    }

    /// Reads the whole trace once: its accesses and one more than its largest page (the
    /// pages an object needs to hold it).
    pub fn scan(path: &Path, spec: &Spec) -> Result<(StreamCounts, u64), TraceError> {
        let mut s = AccessStream::open(path, spec)?;
        while s.next_accesses()?.is_some() {}
        Ok((s.counts(), s.bound))
    }
}

impl PageSource for AccessStream {
    fn pages(&self) -> Option<u64> {
        None
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    /// A plain cache's pages. A dropped page (`Kind::Drop`) is an error: the plain caches
    /// have no way to take a page out.
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError> {
        if self.next_accesses()?.is_none() {
            return Ok(None);
        }
        // The counts include this batch: the first batch with a drop is refused.
        if self.counts.drops > 0 {
            let msg = "a plain cache cannot replay `D` lines (pages dropped from their file): use a kernel model (classic, mglru)";
            return Err(TraceError { path: self.path.clone(), offset: None, msg: msg.into() });
        }
        Ok(Some(&self.pages))
    }
    fn pages_seen(&self) -> u64 {
        self.bound
    }
}

/// Parses a byte count or offset field; a negative one is named as such.
pub(crate) fn parse_bytes(field: &str, what: &str) -> Result<u64, String> {
    let f = field.trim();
    if f.starts_with('-') && f.len() > 1 && f[1..].chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("negative {what} `{f}`"));
    }
    f.parse::<u64>().map_err(|_| format!("`{f}` is not a {what} (a whole number of bytes)"))
}

/// The pages bytes `offset .. offset + len` cover: (first page, pages).
pub(crate) fn byte_range_pages(offset: u64, len: u64) -> Result<(u64, u64), String> {
    let end = offset.checked_add(len).ok_or_else(|| format!("offset {offset} + size {len} overflows"))?;
    let (first, last) = (offset / PAGE, (end - 1) / PAGE);
    let n = last - first + 1;
    if n > MAX_REQUEST_PAGES {
        return Err(format!("a {len}-byte request is larger than pagelab's limit of {} GiB per request", (MAX_REQUEST_PAGES * PAGE) >> 30));
    }
    Ok((first, n))
}

/// Maps an operation name to a kind: reads (`r`, `read`, `get`, `gets`), writes (`w`,
/// `write`, `set`, `put`, `update`, `insert`, `add`, `replace`, `cas`, `append`, `prepend`,
/// `incr`, `decr`), `None` for deletes (no access), an error for anything else.
pub(crate) fn op_kind(op: &str) -> Result<Option<Kind>, String> {
    let o = op.trim().trim_matches('"').to_ascii_lowercase();
    Ok(Some(match o.as_str() {
        "r" | "read" | "get" | "gets" | "rs" | "ra" => Kind::Read,
        "w" | "write" | "set" | "put" | "update" | "insert" | "add" | "replace" | "cas" | "append" | "prepend" | "incr" | "decr" | "ws" => Kind::Write,
        "delete" | "del" | "remove" => return Ok(None),
        _ => {
            return Err(format!(
                "unknown operation `{}` (reads: r, read, get, gets; writes: w, write, set, put, update, insert, add, replace, cas, append, prepend, incr, decr; skipped: delete)",
                op.trim()
            ))
        }
    }))
}

#[cfg(test)]
mod tests;
