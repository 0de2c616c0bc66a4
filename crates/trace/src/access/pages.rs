//! The older formats as access streams: pagelab's dense traces (page indices as written, no
//! times) and fio's iologs (each file's pages after the pages of the files named before it;
//! version 3's times, in microseconds). oracleGeneral is LCS version 1 without the header
//! ([`super::lcs::LcsReader::oracle_general`]).

use std::path::Path;

use super::{Keys, Kind, Request, RequestReader, MAX_PAGE_INDEX};
use crate::iolog::Iolog;
use crate::{err, DenseReader, PageSource, TraceError};

/// A dense trace's page indices, one plain access each.
pub struct DenseRequests {
    reader: DenseReader,
    buf: Vec<u32>,
    pos: usize,
}

impl DenseRequests {
    pub fn open(path: &Path) -> Result<DenseRequests, TraceError> {
        Ok(DenseRequests { reader: DenseReader::open(path)?, buf: Vec::new(), pos: 0 })
    }
}

impl RequestReader for DenseRequests {
    fn keys(&self) -> Keys {
        Keys::Pages
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            match self.reader.next_batch()? {
                Some(b) => self.buf.extend_from_slice(b),
                None => return Ok(None),
            }
        }
        let page = self.buf[self.pos];
        self.pos += 1;
        Ok(Some(Request { key: page as u64, npages: 1, kind: Kind::Plain, time_ns: None }))
    }
}

/// A fio iolog's reads and writes: file `i`'s page `p` is access-stream page
/// `base[i] + p`, where `base[i]` is the pages of the files before it.
pub struct IologRequests {
    log: Iolog,
    base: Vec<u64>,
    next: usize,
}

impl IologRequests {
    pub fn open(path: &Path) -> Result<IologRequests, TraceError> {
        IologRequests::new(path, crate::iolog::read_iolog(path)?)
    }

    pub fn new(path: &Path, log: Iolog) -> Result<IologRequests, TraceError> {
        let mut base = Vec::with_capacity(log.files.len());
        let mut total = 0u64;
        for (_, pages) in &log.files {
            base.push(total);
            total += pages;
        }
        if total > MAX_PAGE_INDEX {
            return Err(err(path, None, format!("its files hold {total} pages together, beyond pagelab's limit of {MAX_PAGE_INDEX}")));
        }
        Ok(IologRequests { log, base, next: 0 })
    }

    /// The files, in order, and the pages of each.
    pub fn files(&self) -> &[(String, u64)] {
        &self.log.files
    }
}

impl RequestReader for IologRequests {
    fn keys(&self) -> Keys {
        Keys::Pages
    }

    fn skipped(&self) -> u64 {
        self.log.trims + self.log.syncs + self.log.waits
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let Some(op) = self.log.ops.get(self.next) else { return Ok(None) };
        let time_ns = self.log.times_us.get(self.next).map(|t| t.saturating_mul(1000));
        self.next += 1;
        let kind = if op.write { Kind::Write } else { Kind::Read };
        Ok(Some(Request { key: self.base[op.file as usize] + op.first_page, npages: op.npages as u64, kind, time_ns }))
    }
}
