//! The MSR Cambridge block traces (SNIA IOTTA): one CSV row per request, no header,
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, e.g.
//!
//! ```text
//! 128166372003061629,hm,1,Read,3154464768,4096,2617
//! ```
//!
//! `Timestamp` is a Windows filetime (100 ns units since 1601) and must not go backwards;
//! `Type` is `Read` or `Write`; `Offset` and `Size` are bytes, and the request covers the
//! 4 KiB pages of its bytes (a zero-size request is skipped and counted). A file holds one
//! volume: a row of another `Hostname,DiskNumber` is an error naming its line. Times are
//! kept relative to the first row's.

use super::input::Lines;
use super::{byte_range_pages, parse_bytes, Keys, Kind, Request, RequestReader, TimeOrder};
use crate::TraceError;

pub struct MsrReader {
    lines: Lines,
    volume: Option<(String, String, u64)>,
    first_time: Option<u64>,
    order: TimeOrder,
    skipped: u64,
}

impl MsrReader {
    pub fn new(lines: Lines) -> MsrReader {
        MsrReader { lines, volume: None, first_time: None, order: TimeOrder::default(), skipped: 0 }
    }
}

impl RequestReader for MsrReader {
    fn keys(&self) -> Keys {
        Keys::Mapped
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            self.lines.skip_blank_lines()?;
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let [ts, host, disk, ty, offset, size, _response] = f[..] else {
                return Err(self
                    .lines
                    .error(format!("{} fields where an MSR Cambridge row has 7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", f.len())));
            };
            let ts: u64 = ts.parse().map_err(|_| {
                self.lines.error(if ts.starts_with('-') {
                    format!("negative timestamp `{ts}`")
                } else {
                    format!("`{ts}` is not a timestamp (a Windows filetime)")
                })
            })?;
            match &self.volume {
                None => self.volume = Some((host.to_string(), disk.to_string(), self.lines.line())),
                Some((h, d, first)) if h != host || d != disk => {
                    return Err(self.lines.error(format!(
                        "volume `{host},{disk}` differs from `{h},{d}` of line {first}: an MSR trace file holds one volume (split the file by Hostname and DiskNumber)"
                    )))
                }
                Some(_) => {}
            }
            let line_no = self.lines.line();
            let path = self.lines.path().to_path_buf();
            self.order.check(&path, ts, || format!("line {line_no}"), |t| format!("{t} (filetime)"))?;
            let first = *self.first_time.get_or_insert(ts);
            let kind = match ty.to_ascii_lowercase().as_str() {
                "read" => Kind::Read,
                "write" => Kind::Write,
                _ => return Err(self.lines.error(format!("unknown operation `{ty}` (an MSR row's Type is Read or Write)"))),
            };
            let offset = parse_bytes(offset, "byte offset").map_err(|m| self.lines.error(m))?;
            let size = parse_bytes(size, "size").map_err(|m| self.lines.error(m))?;
            if size == 0 {
                self.skipped += 1;
                continue;
            }
            let (page, npages) = byte_range_pages(offset, size).map_err(|m| self.lines.error(m))?;
            return Ok(Some(Request { key: page, npages, kind, time_ns: Some((ts - first).saturating_mul(100)) }));
        }
    }
}
