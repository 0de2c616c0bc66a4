//! fio's I/O logs (`write_iolog=`, replayed by fio with `read_iolog=`), read into the page
//! operations they stand for.
//!
//! The first line says the version: `fio version 2 iolog` or `fio version 3 iolog` (fio
//! itself no longer reads version 1). The other lines are `<file> add|open|close` or
//! `<file> read|write|trim|sync|datasync|wait <offset> <length>` (bytes); version 3 puts
//! the issue time in microseconds in front of every line. A read or a write becomes one
//! buffered operation on the 4 KiB pages its byte range covers. The rest is counted and
//! not replayed: pagelab replays the operations back to back (fio's `replay_no_stall=1`),
//! so neither the times nor `wait` apply; `trim`, `sync` and `datasync` are not modeled.
//! A line fio would reject is an error naming the file and the line.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use crate::TraceError;

const PAGE: u64 = 4096;

/// One read or write of the log, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoOp {
    /// Index into [`Iolog::files`].
    pub file: u32,
    pub write: bool,
    pub first_page: u64,
    pub npages: u32,
}

/// A whole log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Iolog {
    pub version: u32,
    /// The files in order of first mention, with the pages the log touches (at least one).
    pub files: Vec<(String, u64)>,
    pub ops: Vec<IoOp>,
    /// Version 3: the time of each operation of `ops` (microseconds since the log began, as
    /// written; they may go backwards, as fio's threads wrote them). Empty for version 2.
    pub times_us: Vec<u64>,
    /// Lines read but not replayed: `trim`, `sync`/`datasync`, `wait`.
    pub trims: u64,
    pub syncs: u64,
    pub waits: u64,
}

/// Reads a fio I/O log.
pub fn read_iolog(path: &Path) -> Result<Iolog, TraceError> {
    let f = crate::open_file(path, false)?;
    parse(std::io::BufReader::new(f), path)
}

fn line_err(path: &Path, line: usize, msg: impl std::fmt::Display) -> TraceError {
    crate::err(path, None, format!("line {line}: {msg}"))
}

/// Parses a log from `input` (`path` names it in errors).
pub fn parse(input: impl BufRead, path: &Path) -> Result<Iolog, TraceError> {
    let mut log = Iolog::default();
    let mut index: HashMap<String, u32> = HashMap::new();
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| line_err(path, n, format!("cannot read: {e}")))?;
        if n == 1 {
            log.version = match line.trim_end() {
                "fio version 2 iolog" => 2,
                "fio version 3 iolog" => 3,
                other => return Err(line_err(path, n, format!("not a fio iolog: expected `fio version 2 iolog` or `fio version 3 iolog`, found `{other}`"))),
            };
            continue;
        }
        let mut fields = line.split_whitespace();
        let mut time_us = None;
        if log.version == 3 {
            let Some(t) = fields.next() else { continue };
            time_us =
                Some(t.parse::<u64>().map_err(|_| line_err(path, n, format!("`{t}` is not a timestamp in microseconds (a version 3 line starts with one)")))?);
        }
        let Some(file) = fields.next() else { continue };
        let action = fields.next().ok_or_else(|| line_err(path, n, format!("`{file}` has no action")))?;
        let mut number = |what: &str| -> Result<u64, TraceError> {
            let v = fields.next().ok_or_else(|| line_err(path, n, format!("`{action}` needs its {what}")))?;
            v.parse::<u64>().map_err(|_| line_err(path, n, format!("`{v}` is not a byte {what}")))
        };
        match action {
            "add" | "open" | "close" => {
                file_index(&mut log, &mut index, file);
            }
            "read" | "write" => {
                let (offset, len) = (number("offset")?, number("length")?);
                if len == 0 {
                    return Err(line_err(path, n, format!("`{action}` of length 0")));
                }
                let end = offset.checked_add(len).ok_or_else(|| line_err(path, n, "offset + length overflows"))?;
                let (first, last) = (offset / PAGE, (end - 1) / PAGE);
                let npages = u32::try_from(last - first + 1).map_err(|_| line_err(path, n, format!("a {len}-byte `{action}` is too long")))?;
                let f = file_index(&mut log, &mut index, file);
                let pages = &mut log.files[f as usize].1;
                *pages = (*pages).max(last + 1);
                log.ops.push(IoOp { file: f, write: action == "write", first_page: first, npages });
                if let Some(t) = time_us {
                    log.times_us.push(t);
                }
            }
            "trim" | "sync" | "datasync" | "wait" => {
                // fio reads the numbers of these too.
                number("offset")?;
                number("length")?;
                match action {
                    "trim" => log.trims += 1,
                    "wait" => log.waits += 1,
                    _ => log.syncs += 1,
                }
            }
            other => {
                return Err(line_err(path, n, format!("unknown action `{other}` (fio replays add, open, close, read, write, trim, sync, datasync and wait)")))
            }
        }
        if let Some(extra) = fields.next() {
            return Err(line_err(path, n, format!("unexpected `{extra}` after the `{action}` line's fields")));
        }
    }
    if log.version == 0 {
        return Err(crate::err(path, None, "empty file: not a fio iolog"));
    }
    Ok(log)
}

fn file_index(log: &mut Iolog, index: &mut HashMap<String, u32>, name: &str) -> u32 {
    *index.entry(name.to_string()).or_insert_with(|| {
        log.files.push((name.to_string(), 1));
        (log.files.len() - 1) as u32
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Iolog, TraceError> {
        parse(s.as_bytes(), Path::new("t.iolog"))
    }

    #[test]
    fn version_3_lines_become_page_operations() {
        let log = parse_str(
            "fio version 3 iolog\n0 /data/a add\n5 /data/a open\n10 /data/a read 0 4096\n20 /data/a write 6144 4096\n\
             30 /data/b read 8192 16384\n40 /data/a sync 0 0\n50 /data/b trim 0 4096\n60 /data/a close\n",
        )
        .unwrap();
        assert_eq!(log.version, 3);
        assert_eq!(log.files, vec![("/data/a".to_string(), 3), ("/data/b".to_string(), 6)]);
        assert_eq!(
            log.ops,
            vec![
                IoOp { file: 0, write: false, first_page: 0, npages: 1 },
                // Bytes 6144..10239 straddle pages 1 and 2.
                IoOp { file: 0, write: true, first_page: 1, npages: 2 },
                IoOp { file: 1, write: false, first_page: 2, npages: 4 },
            ]
        );
        assert_eq!((log.syncs, log.trims, log.waits), (1, 1, 0));
        assert_eq!(log.times_us, vec![10, 20, 30], "the times of the reads and writes");
    }

    #[test]
    fn version_2_has_no_timestamps_and_counts_waits() {
        let log = parse_str("fio version 2 iolog\nf add\nf read 4096 4096\nf wait 0 1000\n").unwrap();
        assert_eq!((log.version, log.ops.len(), log.waits), (2, 1, 1));
        assert_eq!(log.ops[0].first_page, 1);
        assert!(log.times_us.is_empty());
    }

    #[test]
    fn malformed_lines_are_named() {
        for (text, want) in [
            ("fio version 1 iolog\n", "t.iolog: line 1: not a fio iolog"),
            ("", "t.iolog: empty file"),
            ("fio version 3 iolog\nf read 0 4096\n", "line 2: `f` is not a timestamp"),
            ("fio version 2 iolog\nf raed 0 4096\n", "line 2: unknown action `raed`"),
            ("fio version 2 iolog\nf add\nf read 0\n", "line 3: `read` needs its length"),
            ("fio version 2 iolog\nf read x 4096\n", "line 2: `x` is not a byte offset"),
            ("fio version 2 iolog\nf read 0 0\n", "line 2: `read` of length 0"),
            ("fio version 2 iolog\nf read 0 4096 9\n", "line 2: unexpected `9`"),
            ("fio version 2 iolog\nf\n", "line 2: `f` has no action"),
        ] {
            let e = parse_str(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
