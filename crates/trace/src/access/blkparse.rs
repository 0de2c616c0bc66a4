//! `blkparse`'s default text output (its `-f` not given). Every event line starts with the
//! header `%D %2c %8s %5T.%9t %5p %2a %3d`: the device `MAJ,MIN`, the CPU, the sequence
//! number, the time `SECONDS.NANOSECONDS`, the pid, the action and the RWBS string. For the
//! actions with a request, the rest is `SECTOR + BLOCKS`, then `(ERROR)` for a completion
//! (`C`) or `[COMMAND]` for the others, e.g.
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//!   8,0    1        5     0.005302373     0  C   W 223490 + 8 [0]
//! ```
//!
//! pagelab reads the requests of one action, `C` (completed, the default: what reached the
//! device) or `Q` (queued, what was asked for), on one device: `blkparse`, `blkparse:Q`,
//! `blkparse:C:8,16`. Without a device, the trace must have one (a second device is an error
//! naming its line). `BLOCKS` are 512-byte sectors; a request covers the 4 KiB pages of its
//! sectors. The RWBS string says read (`R`) or write (`W`); requests without data (flushes
//! `F`/`FN`, discards `D`, secure erases `E`, `N`) and requests without a sector (a payload in
//! parentheses) are skipped and counted. Other actions, other devices (with one chosen), the
//! `m` messages and the summary blkparse prints at its end (from the first line starting
//! with `CPU`, `Total`, `Throughput`, `Events` or `Skips`) are passed over. Times must not go
//! backwards.

use super::input::Lines;
use super::{Keys, Kind, Request, RequestReader, TimeOrder, MAX_REQUEST_PAGES, PAGE};
use crate::TraceError;

const SECTOR: u64 = 512;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlkSpec {
    /// `C` or `Q`.
    pub action: char,
    pub device: Option<(u32, u32)>,
}

impl BlkSpec {
    pub fn parse(text: &str) -> Result<BlkSpec, String> {
        let mut s = BlkSpec { action: 'C', device: None };
        for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "C" | "c" => s.action = 'C',
                "Q" | "q" => s.action = 'Q',
                _ => {
                    s.device = Some(
                        parse_device(part)
                            .ok_or_else(|| format!("blkparse:`{part}`: use C or Q (the action) and MAJ,MIN (the device), e.g. blkparse:Q:8,16"))?,
                    )
                }
            }
        }
        Ok(s)
    }
}

fn parse_device(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(',')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub struct BlkReader {
    lines: Lines,
    spec: BlkSpec,
    /// The device of the first request, and its line.
    device: Option<((u32, u32), u64)>,
    summary: bool,
    order: TimeOrder,
    skipped: u64,
}

impl BlkReader {
    pub fn new(lines: Lines, spec: BlkSpec) -> BlkReader {
        BlkReader { device: spec.device.map(|d| (d, 0)), lines, spec, summary: false, order: TimeOrder::default(), skipped: 0 }
    }
}

/// `SECONDS.NANOSECONDS` → ns.
fn parse_time(t: &str) -> Option<u64> {
    let (s, ns) = t.split_once('.')?;
    if ns.is_empty() || ns.len() > 9 || !ns.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - ns.len() as u32);
    s.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(ns.parse::<u64>().ok()? * scale)
}

impl RequestReader for BlkReader {
    fn keys(&self) -> Keys {
        Keys::Mapped
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.summary {
                self.lines.skip_blank_lines()?;
            }
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            if self.summary {
                continue;
            }
            let mut f = line.split_whitespace();
            let Some(dev) = f.next() else { continue };
            let Some(device) = parse_device(dev) else {
                if ["CPU", "Total", "Throughput", "Events", "Skips"].iter().any(|w| dev.starts_with(w)) {
                    self.summary = true;
                    continue;
                }
                return Err(self.lines.error(format!("`{dev}` is not a device (MAJ,MIN): not blkparse's default output?")));
            };
            let head: Vec<&str> = f.by_ref().take(6).collect();
            let [_cpu, _seq, time, _pid, action, rwbs] = head[..] else {
                return Err(self.lines.error("an event line has at least 7 fields: device, cpu, sequence, time, pid, action, RWBS"));
            };
            if action != self.spec.action.to_string() {
                continue;
            }
            match self.device {
                Some((d, _)) if d != device && self.spec.device.is_some() => continue,
                Some((d, first)) if d != device => {
                    return Err(self.lines.error(format!(
                        "a second device {},{} (the first, {},{}, is on line {first}): choose one with blkparse:{}:{},{}",
                        device.0, device.1, d.0, d.1, self.spec.action, device.0, device.1
                    )))
                }
                Some(_) => {}
                None => self.device = Some((device, self.lines.line())),
            }
            let t = parse_time(time).ok_or_else(|| self.lines.error(format!("`{time}` is not a time (SECONDS.NANOSECONDS)")))?;
            let line_no = self.lines.line();
            let path = self.lines.path().to_path_buf();
            self.order.check(&path, t, || format!("line {line_no}"), |t| format!("{}.{:09} s", t / 1_000_000_000, t % 1_000_000_000))?;
            let kind = if rwbs.contains('R') {
                Kind::Read
            } else if rwbs.contains('W') {
                Kind::Write
            } else if rwbs.chars().all(|c| "FDNESMAB".contains(c)) {
                self.skipped += 1;
                continue;
            } else {
                return Err(self.lines.error(format!("unknown RWBS `{rwbs}` (R read, W write; F, D, N, E carry no data)")));
            };
            let rest: Vec<&str> = f.take(3).collect();
            if rest.first().is_some_and(|r| r.starts_with('(')) {
                self.skipped += 1;
                continue;
            }
            let [sector, "+", blocks] = rest[..] else {
                return Err(self.lines.error(format!("a `{action}` request needs `SECTOR + BLOCKS` after its RWBS")));
            };
            let bad = |v: &str, what: &str| {
                if v.starts_with('-') {
                    self.lines.error(format!("negative {what} `{v}`"))
                } else {
                    self.lines.error(format!("`{v}` is not a {what}"))
                }
            };
            let sector: u64 = sector.parse().map_err(|_| bad(sector, "sector"))?;
            let blocks: u64 = blocks.parse().map_err(|_| bad(blocks, "number of sectors"))?;
            if blocks == 0 {
                self.skipped += 1;
                continue;
            }
            let start = sector.checked_mul(SECTOR).ok_or_else(|| self.lines.error(format!("sector {sector} is beyond any device")))?;
            let len = blocks.checked_mul(SECTOR).filter(|&l| l.div_ceil(PAGE) <= MAX_REQUEST_PAGES);
            let len = len.ok_or_else(|| self.lines.error(format!("a request of {blocks} sectors is larger than pagelab's 4 GiB limit")))?;
            let (first, npages) = super::byte_range_pages(start, len).map_err(|m| self.lines.error(m))?;
            return Ok(Some(Request { key: first, npages, kind, time_ns: Some(t) }));
        }
    }
}
