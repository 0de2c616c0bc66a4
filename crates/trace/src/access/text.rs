//! pagelab's own text format, simple enough to write with `awk`: one access a line.
//!
//! * `PAGE`: an access to the 0-based 4 KiB page index `PAGE` (a read in a replay; the
//!   workload's kind decides in a scenario);
//! * `R PAGE` / `W PAGE`: a read / a write (for anonymous memory a write dirties the page and
//!   write-faults a swapped-out or shared page);
//! * `T PAGE`: the first touch of anonymous memory, in the order of the `T` lines (the
//!   prefill);
//! * `D PAGE`: the page leaves its file (the file was deleted or truncated): the kernel
//!   models drop it from the page cache with its shadow entry, as
//!   truncate_inode_pages_range() does (a file kind only);
//! * blank lines, and everything from a `#` to the end of its line, are ignored.
//!
//! The letters may be lower case. A page index must be below 2^31 (8 TiB of 4 KiB pages).

use super::input::Lines;
use super::{Keys, Kind, Request, RequestReader, MAX_PAGE_INDEX};
use crate::TraceError;

pub struct TextReader {
    lines: Lines,
}

impl TextReader {
    pub fn new(lines: Lines) -> TextReader {
        TextReader { lines }
    }
}

impl RequestReader for TextReader {
    fn keys(&self) -> Keys {
        Keys::Pages
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            self.lines.skip_blank_lines()?;
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line = self.lines.text();
            let line = line.split('#').next().unwrap_or("");
            let mut f = line.split_whitespace();
            let Some(first) = f.next() else { continue };
            let (kind, page) = match first {
                "R" | "r" => (Kind::Read, f.next()),
                "W" | "w" => (Kind::Write, f.next()),
                "T" | "t" => (Kind::Touch, f.next()),
                "D" | "d" => (Kind::Drop, f.next()),
                _ => (Kind::Plain, Some(first)),
            };
            let result = (|| {
                let page = page.ok_or_else(|| format!("`{first}` needs a page index"))?;
                if first.len() > 1 && first.chars().all(|c| c.is_ascii_alphabetic()) {
                    return Err(format!("unknown operation `{first}` (use R, W, T or D, or a bare page index)"));
                }
                let p: u64 = page.parse().map_err(|_| {
                    if page.starts_with('-') {
                        format!("negative page index `{page}`")
                    } else if kind == Kind::Plain && page.chars().all(|c| c.is_ascii_alphabetic()) {
                        format!("unknown operation `{page}` (use R, W, T or D, or a bare page index)")
                    } else {
                        format!("`{page}` is not a page index (a whole number from 0)")
                    }
                })?;
                if p >= MAX_PAGE_INDEX {
                    return Err(format!("page index {p} is beyond pagelab's 8 TiB limit per object ({MAX_PAGE_INDEX} pages)"));
                }
                if let Some(extra) = f.next() {
                    return Err(format!("unexpected `{extra}` after the page index (one access a line)"));
                }
                Ok(p)
            })();
            return match result {
                Ok(p) => Ok(Some(Request { key: p, npages: 1, kind, time_ns: None })),
                Err(m) => Err(self.lines.error(m)),
            };
        }
    }
}
