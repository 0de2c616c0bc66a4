//! CSV (or other delimited) traces with configurable columns.
//!
//! The format is `csv:KEY=VALUE,KEY=VALUE,...`, columns numbered from 1:
//!
//! | key | meaning |
//! |---|---|
//! | `id=N` (`obj-id-col`) | the object id column: each object is one 4 KiB page, any text a key |
//! | `offset=N` | or a byte offset column: the request covers the pages of `offset .. offset + size` |
//! | `size=N` (`obj-size-col`) | the size in bytes (with `offset`: 4096 when not given; with `id`: checked only) |
//! | `op=N` (`op-col`) | the operation (read, get, r / write, set, w, update, ... / delete) |
//! | `time=N` (`time-col`) | a timestamp (whole or decimal, non-decreasing), in `time-unit`s |
//! | `time-unit=s\|ms\|us\|ns` | the timestamp's unit (default s) |
//! | `sep=comma\|tab\|space\|semicolon\|C` (`delimiter`) | the field delimiter (default comma) |
//! | `header` (`has-header=true`) | the first line is a header |
//!
//! The names in parentheses are libCacheSim's, so its `-t` strings can be pasted:
//! `csv:time-col=1,obj-id-col=2,obj-size-col=3,has-header=true`. Exactly one of `id` and
//! `offset` is required. Fields are trimmed and may be double-quoted (without delimiters
//! inside). Without `op` each row is a plain access.

use super::input::Lines;
use super::{byte_range_pages, op_kind, parse_bytes, Keys, Kind, Request, RequestReader, TimeOrder, PAGE};
use crate::TraceError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    pub id: Option<usize>,
    pub offset: Option<usize>,
    pub size: Option<usize>,
    pub op: Option<usize>,
    pub time: Option<usize>,
    /// Nanoseconds of one time unit.
    pub time_unit_ns: u64,
    pub sep: char,
    pub header: bool,
}

impl CsvSpec {
    /// Whether a column gives each row's time.
    pub fn has_time(&self) -> bool {
        self.time.is_some()
    }

    pub fn parse(text: &str) -> Result<CsvSpec, String> {
        let mut s = CsvSpec { id: None, offset: None, size: None, op: None, time: None, time_unit_ns: 1_000_000_000, sep: ',', header: false };
        let usage = "use csv:id=N or csv:offset=N, with size=N, op=N, time=N, time-unit=s|ms|us|ns, sep=comma|tab|space|semicolon, header (columns from 1)";
        if text.trim().is_empty() {
            return Err(format!("csv needs its columns: {usage}"));
        }
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (k, v) = match part.split_once('=') {
                Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim()),
                None => (part.to_ascii_lowercase(), ""),
            };
            let col = |v: &str| -> Result<Option<usize>, String> {
                match v.parse::<usize>() {
                    Ok(n) if (1..=1024).contains(&n) => Ok(Some(n - 1)),
                    _ => Err(format!("csv `{k}={v}`: a column is a number from 1 to 1024")),
                }
            };
            match k.as_str() {
                "id" | "obj-id-col" | "obj_id_col" | "object" => s.id = col(v)?,
                "offset" | "offset-col" => s.offset = col(v)?,
                "size" | "obj-size-col" | "obj_size_col" => s.size = col(v)?,
                "op" | "op-col" | "op_col" => s.op = col(v)?,
                "time" | "time-col" | "time_col" => s.time = col(v)?,
                "time-unit" | "time_unit" => {
                    s.time_unit_ns = match v {
                        "s" => 1_000_000_000,
                        "ms" => 1_000_000,
                        "us" => 1_000,
                        "ns" => 1,
                        _ => return Err(format!("csv `time-unit={v}`: use s, ms, us or ns")),
                    }
                }
                "sep" | "delimiter" => {
                    s.sep = match v {
                        "comma" | "" => ',',
                        "tab" | "\\t" => '\t',
                        "space" => ' ',
                        "semicolon" | ";" => ';',
                        _ if v.chars().count() == 1 => v.chars().next().expect("one char"),
                        _ => return Err(format!("csv `sep={v}`: use comma, tab, space, semicolon or one character")),
                    }
                }
                "header" | "has-header" | "has_header" => {
                    s.header = match v {
                        "" | "true" | "1" | "yes" => true,
                        "false" | "0" | "no" => false,
                        _ => return Err(format!("csv `{k}={v}`: use true or false")),
                    }
                }
                _ => return Err(format!("csv: unknown key `{k}`: {usage}")),
            }
        }
        match (s.id, s.offset) {
            (None, None) => Err(format!("csv: give the object id column (id=N) or the byte offset column (offset=N): {usage}")),
            (Some(_), Some(_)) => Err("csv: give id=N or offset=N, not both".into()),
            _ => Ok(s),
        }
    }
}

pub struct CsvReader {
    lines: Lines,
    spec: CsvSpec,
    order: TimeOrder,
    skipped: u64,
    fields: Vec<(usize, usize)>,
}

impl CsvReader {
    pub fn new(lines: Lines, spec: CsvSpec) -> CsvReader {
        CsvReader { lines, spec, order: TimeOrder::default(), skipped: 0, fields: Vec::new() }
    }
}

/// Parses a non-negative decimal time into nanoseconds.
pub(crate) fn parse_time(v: &str, unit_ns: u64) -> Result<u64, String> {
    if v.starts_with('-') {
        return Err(format!("negative time `{v}`"));
    }
    if let Ok(n) = v.parse::<u64>() {
        return n.checked_mul(unit_ns).ok_or_else(|| format!("time `{v}` is too large"));
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x * (unit_ns as f64) < 1.8e19 => Ok((x * unit_ns as f64).round() as u64),
        _ => Err(format!("`{v}` is not a time")),
    }
}

impl RequestReader for CsvReader {
    fn keys(&self) -> Keys {
        Keys::Mapped
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            // A header is the first line, blank or not.
            if !self.spec.header || self.lines.line() >= 1 {
                self.lines.skip_blank_lines()?;
            }
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if self.spec.header && self.lines.line() == 1 {
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            // Field boundaries, then the fields the spec names.
            self.fields.clear();
            let mut start = 0;
            for (i, c) in line.char_indices() {
                if c == self.spec.sep {
                    self.fields.push((start, i));
                    start = i + c.len_utf8();
                }
            }
            self.fields.push((start, line.len()));
            let s = &self.spec;
            let field = |col: usize, what: &str| -> Result<&str, String> {
                let &(a, b) = self.fields.get(col).ok_or_else(|| format!("no column {} (the {what}): the line has {} fields", col + 1, self.fields.len()))?;
                Ok(line[a..b].trim().trim_matches('"').trim())
            };
            let parsed = (|| -> Result<(Option<Request>, Option<u64>), String> {
                let time = match s.time {
                    Some(c) => Some(parse_time(field(c, "time")?, s.time_unit_ns)?),
                    None => None,
                };
                let kind = match s.op {
                    Some(c) => op_kind(field(c, "operation")?)?,
                    None => Some(Kind::Plain),
                };
                let size = match s.size {
                    Some(c) => Some(parse_bytes(field(c, "size")?, "size")?),
                    None => None,
                };
                let Some(kind) = kind else { return Ok((None, time)) };
                let (key, npages) = match (s.id, s.offset) {
                    (Some(c), _) => {
                        let v = field(c, "object id")?;
                        if v.is_empty() {
                            return Err("empty object id".into());
                        }
                        (v.parse::<u64>().unwrap_or_else(|_| text_key(v)), 1)
                    }
                    (None, Some(c)) => {
                        let offset = parse_bytes(field(c, "offset")?, "byte offset")?;
                        let len = size.unwrap_or(PAGE);
                        if len == 0 {
                            return Ok((None, time));
                        }
                        byte_range_pages(offset, len)?
                    }
                    (None, None) => unreachable!("CsvSpec::parse requires one"),
                };
                Ok((Some(Request { key, npages, kind, time_ns: time }), time))
            })();
            let (req, time) = parsed.map_err(|m| self.lines.error(m))?;
            if let Some(t) = time {
                let line_no = self.lines.line();
                let path = self.lines.path().to_path_buf();
                self.order.check(&path, t, || format!("line {line_no}"), |t| format!("{t} ns"))?;
            }
            match req {
                Some(r) => return Ok(Some(r)),
                None => self.skipped += 1,
            }
        }
    }
}

/// A key for an id that is not a number (a string key): its 64-bit FNV-1a hash, the same
/// on every machine and build.
fn text_key(v: &str) -> u64 {
    v.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3))
}
