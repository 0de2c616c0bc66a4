use std::io::Write;
use std::path::{Path, PathBuf};

use super::*;

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("pagelab-access-test-").tempdir().unwrap()
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Every access of a trace: (page, kind).
fn accesses(path: &Path, spec: &str) -> Result<Vec<(u32, Kind)>, TraceError> {
    let spec = Spec::parse(spec).expect("a new format").expect("a valid spec");
    let mut s = AccessStream::open(path, &spec)?;
    let mut v = Vec::new();
    while let Some((p, k, _)) = s.next_accesses()? {
        v.extend(p.iter().copied().zip(k.iter().copied()));
    }
    Ok(v)
}

fn error(path: &Path, spec: &str) -> String {
    accesses(path, spec).unwrap_err().to_string()
}

use Kind::{Plain, Read as R, Touch as T, Write as W};

#[test]
fn text_lines_keep_their_pages_and_operations_and_skip_comments() {
    let dir = scratch();
    let p = write(&dir, "t.txt", b"# a comment\nT 2\nt 0\n\n  T 1  \nW 1 # trailing comment\nR 2\n7\nr 0\r\n");
    assert_eq!(accesses(&p, "text").unwrap(), vec![(2, T), (0, T), (1, T), (1, W), (2, R), (7, Plain), (0, R)]);
}

#[test]
fn text_d_lines_drop_pages_and_are_counted_apart_from_reads() {
    let dir = scratch();
    let p = write(&dir, "d.txt", b"R 3\nd 3\nD 4\nW 3\n");
    assert_eq!(accesses(&p, "text").unwrap(), vec![(3, R), (3, Kind::Drop), (4, Kind::Drop), (3, W)]);
    let (c, bound) = AccessStream::scan(&p, &Spec::parse("text").unwrap().unwrap()).unwrap();
    assert_eq!((c.reads, c.writes, c.drops, c.accesses, bound), (1, 1, 2, 4, 5));
}

#[test]
fn text_reads_gzip_and_zstd_by_their_magic_whatever_the_name() {
    let dir = scratch();
    let text = b"T 0\nT 1\nW 1\n3\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text).unwrap();
    let gz = write(&dir, "trace.gz", &gz.finish().unwrap());
    let zst = write(&dir, "trace.txt", &zstd::encode_all(&text[..], 3).unwrap());
    let want = vec![(0, T), (1, T), (1, W), (3, Plain)];
    assert_eq!(accesses(&gz, "text").unwrap(), want);
    assert_eq!(accesses(&zst, "text").unwrap(), want);
}

/// Issue 40: a gzip trace whose trailer (CRC-32 and length) is cut off, or whose CRC is
/// wrong, is an error in every text format, not a trace that ends early.
#[test]
fn a_gzip_trace_with_a_cut_or_wrong_trailer_is_refused() {
    let dir = scratch();
    for (format, text) in [("text", &b"R 0\nR 1\nW 2\n"[..]), ("msr", b"1,hm,1,Read,0,4096,1\n2,hm,1,Write,4096,4096,1\n"), ("csv:id=1", b"5\n6\n")] {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let whole = gz.finish().unwrap();
        assert!(accesses(&write(&dir, "whole.gz", &whole), format).is_ok(), "{format}");
        for cut in 1..=8 {
            let e = error(&write(&dir, "cut.gz", &whole[..whole.len() - cut]), format);
            assert!(e.contains("cut.gz") && e.contains("bad gzip data"), "{format}, {cut} bytes cut: {e}");
        }
        let mut bad_crc = whole.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 1;
        let e = error(&write(&dir, "crc.gz", &bad_crc), format);
        assert!(e.contains("bad gzip data"), "{format}, wrong CRC: {e}");
    }
}

#[test]
fn malformed_text_lines_are_named_by_file_and_line() {
    let dir = scratch();
    for (text, want) in [
        ("T 0\nX 3\n", "t.txt: line 2: unknown operation `X`"),
        ("T 0\nREAD 3\n", "line 2: unknown operation `READ`"),
        ("R\n", "line 1: `R` needs a page index"),
        ("W -4\n", "line 1: negative page index `-4`"),
        ("1.5\n", "line 1: `1.5` is not a page index"),
        ("R 1 2\n", "line 1: unexpected `2`"),
        ("\n\n4294967295\n", "line 3: page index 4294967295 is beyond pagelab's 8 TiB limit"),
    ] {
        let p = write(&dir, "t.txt", text.as_bytes());
        let e = error(&p, "text");
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let p = write(&dir, "t.txt", &[b'1'; MAX_LINE_TEST]);
    assert!(error(&p, "text").contains("line 1: longer than"));
    let p = write(&dir, "t.txt", b"1\n\xff\xfe\n");
    assert!(error(&p, "text").contains("line 2: not text"));
}

const MAX_LINE_TEST: usize = input::MAX_LINE + 10;

#[test]
fn blank_line_runs_are_skipped_in_bulk_and_still_counted_in_line_numbers() {
    // 200,001 blank lines (LF, CRLF and whitespace-only, crossing the 64 KiB read buffer and
    // a zstd frame) before a bad line: the error names its true line number, for every
    // reader that skips blank lines.
    let mut blank = String::new();
    for i in 0..200_001 {
        blank.push_str(["\n", "\r\n", " \t \n"][i % 3]);
    }
    let dir = scratch();
    for (spec, bad, want) in [
        ("text", "X 3\n", "line 200002: unknown operation `X`"),
        ("msr", "1,hm,1,Trim,0,4096,1\n", "line 200002: unknown operation `Trim`"),
        ("csv:id=1,size=2", "1,x\n", "line 200002"),
    ] {
        let text = format!("{blank}{bad}");
        let plain = write(&dir, "b.txt", text.as_bytes());
        let e = error(&plain, spec);
        assert!(e.contains(want), "{spec}: {e}");
        let zst = write(&dir, "b.zst", &zstd::encode_all(text.as_bytes(), 3).unwrap());
        let e = error(&zst, spec);
        assert!(e.contains(want), "{spec} (zstd): {e}");
    }
    // A run of blanks with no newline before the end is one (blank) last line, not an error.
    let p = write(&dir, "t.txt", b"\n\n1\n  \t");
    assert_eq!(accesses(&p, "text").unwrap(), vec![(1, Plain)]);
}

#[test]
fn a_corrupt_gzip_stream_is_an_error_not_a_short_trace() {
    let dir = scratch();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&b"R 1\n".repeat(10_000)).unwrap();
    let mut bytes = gz.finish().unwrap();
    let n = bytes.len();
    bytes.truncate(n / 2);
    let p = write(&dir, "t.gz", &bytes);
    let e = error(&p, "text");
    assert!(e.contains("cannot read (bad gzip data?)"), "{e}");
}

#[test]
fn lcs_versions_carry_ids_as_dense_pages_and_the_operation() {
    let dir = scratch();
    // (time, id, size, op): get, set, delete (skipped), read, write, update.
    let recs = [(1, 500, 4096, 1), (1, 7, 4096, 3), (2, 500, 4096, 9), (2, 500, 0, 12), (3, 9, 100, 13), (3, 7, 1, 14)];
    for version in [2, 3] {
        let p = dir.path().join(format!("t{version}.lcs"));
        lcs::write_lcs(&p, version, &recs).unwrap();
        assert_eq!(accesses(&p, "lcs").unwrap(), vec![(0, R), (1, W), (0, R), (2, W), (1, W)], "v{version}");
        let mut s = AccessStream::open(&p, &Spec::Lcs).unwrap();
        while s.next_accesses().unwrap().is_some() {}
        assert_eq!((s.counts().skipped, s.counts().reads, s.counts().writes), (1, 2, 3));
    }
    let p = dir.path().join("t1.lcs");
    lcs::write_lcs(&p, 1, &recs).unwrap();
    // Version 1 has no operation: every record is a plain access, the delete too.
    assert_eq!(accesses(&p, "lcs").unwrap().len(), 6);
    assert!(accesses(&p, "lcs").unwrap().iter().all(|a| a.1 == Plain));
    // zstd-compressed.
    let z = write(&dir, "t.lcs.zst", &zstd::encode_all(&std::fs::read(&p).unwrap()[..], 3).unwrap());
    assert_eq!(accesses(&z, "lcs").unwrap().len(), 6);
}

#[test]
fn bad_lcs_files_are_named_with_the_byte_offset() {
    let dir = scratch();
    let p = dir.path().join("t.lcs");
    lcs::write_lcs(&p, 2, &[(1, 1, 1, 1), (2, 2, 2, 1)]).unwrap();
    let good = std::fs::read(&p).unwrap();
    let at = |bytes: &[u8]| {
        let q = write(&dir, "bad.lcs", bytes);
        error(&q, "lcs")
    };
    assert!(at(&good[..good.len() - 3]).contains("byte offset 8220: truncated record: the trace ends 25 bytes into a 28-byte version 2 record"));
    assert!(at(b"hello").contains("byte offset 0: not an LCS trace"));
    assert!(at(&good[..100]).contains("byte offset 100: truncated LCS header"));
    let mut v = good.clone();
    v[8] = 9;
    assert!(at(&v).contains("byte offset 8: LCS version 9 is not one pagelab reads"));
    let mut v = good.clone();
    v[8190] = 0;
    assert!(at(&v).contains("byte offset 8184: corrupt LCS header"));
    let mut v = good.clone();
    v[8192 + 28 + 16] = 15;
    assert!(at(&v).contains("byte offset 8220: unknown operation 15"));
    let q = dir.path().join("neg.lcs");
    lcs::write_lcs(&q, 3, &[(1, 1, -5, 1)]).unwrap();
    assert!(error(&q, "lcs").contains("byte offset 8192: negative object size -5"));
    lcs::write_lcs(&q, 2, &[(5, 1, 1, 1), (4, 2, 1, 1)]).unwrap();
    let e = error(&q, "lcs");
    assert!(e.contains("byte offset 8220: time 4 s is earlier than 5 s at byte offset 8192"), "{e}");
}

#[test]
fn csv_columns_give_ids_or_byte_ranges_sizes_and_operations() {
    let dir = scratch();
    // libCacheSim's own spec spelling, a header, string keys.
    let p = write(&dir, "t.csv", b"time,key,size,op\n1,alpha,10,get\n2,beta,10,set\n2,alpha,10,GET\n3,alpha,10,delete\n4,\"beta\",10,update\n");
    let got = accesses(&p, "csv:time-col=1,obj-id-col=2,obj-size-col=3,op-col=4,has-header=true").unwrap();
    assert_eq!(got, vec![(0, R), (1, W), (0, R), (1, W)]);
    // Byte offsets: 6144 + 4096 bytes straddle pages 1 and 2; tab-separated, no op column.
    let p = write(&dir, "t.tsv", b"0\t6144\t4096\n1\t0\t100\n1\t8192\t1\n");
    assert_eq!(accesses(&p, "csv:time=1,offset=2,size=3,sep=tab").unwrap(), vec![(0, Plain), (1, Plain), (2, Plain), (1, Plain)]);
}

#[test]
fn csv_specs_and_rows_are_checked() {
    for (spec, want) in [
        ("csv", "csv needs its columns"),
        ("csv:size=2", "give the object id column"),
        ("csv:id=1,offset=2", "not both"),
        ("csv:id=0", "a column is a number from 1"),
        ("csv:id=1,colour=2", "unknown key `colour`"),
        ("csv:id=1,time-unit=h", "use s, ms, us or ns"),
    ] {
        let e = Spec::parse(spec).unwrap().unwrap_err();
        assert!(e.contains(want), "{spec}: {e}");
    }
    let dir = scratch();
    for (text, want) in [
        ("1,a,10,get\n2,b,10,evict\n", "t.csv: line 2: unknown operation `evict`"),
        ("1,a,-10,get\n", "line 1: negative size `-10`"),
        ("5,a,10,get\n4,b,10,get\n", "line 2: time 4000000000 ns is earlier than 5000000000 ns at line 1"),
        ("1,a,10\n", "line 1: no column 4 (the operation): the line has 3 fields"),
        ("x,a,10,get\n", "line 1: `x` is not a time"),
        ("-1,a,10,get\n", "line 1: negative time `-1`"),
    ] {
        let p = write(&dir, "t.csv", text.as_bytes());
        let e = error(&p, "csv:time=1,id=2,size=3,op=4");
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let p = write(&dir, "t.csv", b"1,1,18446744073709551615\n");
    assert!(error(&p, "csv:time=1,offset=2,size=3").contains("line 1: offset 1 + size 18446744073709551615 overflows"));
    let p = write(&dir, "t.csv", b"1,0,8589934592\n");
    assert!(error(&p, "csv:time=1,offset=2,size=3").contains("larger than pagelab's limit of 4 GiB"));
}

/// Lines in blkparse's default output format (the layout of its man page's example), for
/// device 8,0, with a plug, a merge, a message and the summary blkparse ends with.
const BLKPARSE: &str = "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001829   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000003177   697  P   N [kjournald]
  8,0    3        4     0.000013013   697  I   W 223490 + 8 [kjournald]
  8,0    3        5     0.000020000   697  Q   R 1000 + 24 [cat]
  8,0    3        6     0.000021000   697  M   R 1024 + 8 [cat]
  8,0    3        7     0.000030000   697  D   W 223490 + 8 [kjournald]
  8,0    3        0     0.000031000     0  m   N cfq697 insert_request
  8,0    1        8     0.005302373     0  C   W 223490 + 8 [0]
  8,0    1        9     0.006000000     0  Q  FWS 0 + 0 [jbd2/sda1-8]
  8,0    1       10     0.006100000     0  C  FN 0 + 0 [0]
  8,0    1       11     0.007000000     0  C   R 1000 + 24 [0]
  8,0    1       12     0.007100000     0  C  DS 4096 + 2048 [0]
CPU0 (8,0):
 Reads Queued:           1,       12KiB  Writes Queued:           1,        4KiB
Total (8,0):
 Reads Queued:           1,       12KiB  Writes Queued:           1,        4KiB

Throughput (R/W): 1KiB/s / 1KiB/s
Events (8,0): 13 entries
Skips: 0 forward (0 -   0.0%)
";

#[test]
fn blkparse_completions_or_queued_requests_become_pages_with_read_and_write() {
    let dir = scratch();
    let p = write(&dir, "t.blkparse", BLKPARSE.as_bytes());
    // Sector 223490 + 8 = bytes 114426880.. (+4096): pages 27936 (2 KiB) and 27937. Sectors
    // 1000 + 24 = bytes 512000..524288: pages 125 (from byte 512000) to 127.
    let c = accesses(&p, "blkparse").unwrap();
    assert_eq!(c, vec![(0, W), (1, W), (2, R), (3, R), (4, R)], "completions: the write, then the read; flush and discard skipped");
    let q = accesses(&p, "blkparse:Q").unwrap();
    assert_eq!(q, vec![(0, W), (1, W), (2, R), (3, R), (4, R)]);
    let spec = Spec::parse("blkparse").unwrap().unwrap();
    let mut s = AccessStream::open(&p, &spec).unwrap();
    while s.next_accesses().unwrap().is_some() {}
    assert_eq!((s.counts().requests, s.counts().skipped), (2, 2));
    // The pages as the device has them: a text trace of those pages maps the same way.
    let t = write(&dir, "pages.txt", b"27936\n27937\n125\n126\n127\n");
    let lits: Vec<u32> = accesses(&t, "text").unwrap().iter().map(|a| a.0).collect();
    assert_eq!(lits, vec![27936, 27937, 125, 126, 127]);
}

#[test]
fn blkparse_needs_one_device_and_well_formed_requests() {
    let dir = scratch();
    let two = BLKPARSE.replace("  8,0    1       11", "  8,16   1       11");
    let p = write(&dir, "t.blkparse", two.as_bytes());
    let e = error(&p, "blkparse");
    assert!(e.contains("line 12: a second device 8,16 (the first, 8,0, is on line 9): choose one with blkparse:C:8,16"), "{e}");
    assert_eq!(accesses(&p, "blkparse:C:8,16").unwrap(), vec![(0, R), (1, R), (2, R)]);
    for (line, want) in [
        ("  8,0 1 1 0.1 0 C W 5 - 8 [0]\n", "line 1: a `C` request needs `SECTOR + BLOCKS`"),
        ("  8,0 1 1 0.1 0 C W -5 + 8 [0]\n", "line 1: negative sector `-5`"),
        ("  8,0 1 1 0.1 0 C W 5 + x [0]\n", "line 1: `x` is not a number of sectors"),
        ("  8,0 1 1 0.1 0 C Z 5 + 8 [0]\n", "line 1: unknown RWBS `Z`"),
        ("  8,0 1 1 0.2 0 C W 5 + 8 [0]\n  8,0 1 2 0.1 0 C W 5 + 8 [0]\n", "line 2: time 0.100000000 s is earlier than 0.200000000 s at line 1"),
        ("hello world\n", "line 1: `hello` is not a device"),
        ("  8,0 1 1 0.1\n", "line 1: an event line has at least 7 fields"),
    ] {
        let p = write(&dir, "t.blkparse", line.as_bytes());
        let e = error(&p, "blkparse");
        assert!(e.contains(want), "{line:?}: {e}");
    }
    assert!(Spec::parse("blkparse:X").unwrap().is_err());
}

/// Rows in the MSR Cambridge layout (Timestamp,Hostname,DiskNumber,Type,Offset,Size,
/// ResponseTime), as the SNIA files have them: no header, filetime stamps.
const MSR: &str = "128166372003061629,hm,1,Read,3154464768,4096,2617
128166372016382155,hm,1,Write,3154464768,16384,1011
128166372026382245,hm,1,Read,3154477056,8192,1570
128166372036382245,hm,1,Write,0,0,100
";

#[test]
fn msr_rows_become_pages_with_their_type() {
    let dir = scratch();
    let p = write(&dir, "hm_1.csv", MSR.as_bytes());
    // 3154464768 = page 770133 exactly: the read is page 770133, the write pages
    // 770133..770136, the second read bytes 3154477056.. = pages 770136, 770137.
    assert_eq!(accesses(&p, "msr").unwrap(), vec![(0, R), (0, W), (1, W), (2, W), (3, W), (3, R), (4, R)]);
    let spec = Spec::Msr;
    let mut s = AccessStream::open(&p, &spec).unwrap();
    let mut times = Vec::new();
    while let Some((_, _, t)) = s.next_accesses().unwrap() {
        times.extend_from_slice(t);
    }
    assert_eq!(times[0], 0);
    assert_eq!(times[1], (128166372016382155 - 128166372003061629) * 100);
    assert_eq!(s.counts().skipped, 1);
}

#[test]
fn bad_msr_rows_are_named() {
    let dir = scratch();
    for (text, want) in [
        ("1,hm,1,Read,0,4096\n", "line 1: 6 fields where an MSR Cambridge row has 7"),
        ("1,hm,1,Trim,0,4096,1\n", "line 1: unknown operation `Trim`"),
        ("1,hm,1,Read,0,-4096,1\n", "line 1: negative size `-4096`"),
        ("2,hm,1,Read,0,4096,1\n1,hm,1,Read,0,4096,1\n", "line 2: time 1 (filetime) is earlier than 2 (filetime) at line 1"),
        ("1,hm,1,Read,0,4096,1\n2,hm,2,Read,0,4096,1\n", "line 2: volume `hm,2` differs from `hm,1` of line 1"),
        ("x,hm,1,Read,0,4096,1\n", "line 1: `x` is not a timestamp"),
    ] {
        let p = write(&dir, "m.csv", text.as_bytes());
        let e = error(&p, "msr");
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn an_empty_or_blank_trace_is_an_error_and_missing_files_are_named() {
    let dir = scratch();
    // Issue 40: these used to replay 0 accesses and exit 0.
    for (format, text) in [("text", ""), ("text", "\n \n\t\n"), ("csv:id=1", ""), ("csv:id=1", "\n\n"), ("blkparse", ""), ("msr", "\r\n\r\n")] {
        let p = write(&dir, "e.trace", text.as_bytes());
        let e = error(&p, format);
        assert!(e.contains("e.trace: the trace has no accesses"), "{format} {text:?}: {e}");
    }
    // Only records without data: also no accesses, and the message says why.
    let p = write(&dir, "deletes.csv", b"1,delete\n2,delete\n");
    let e = error(&p, "csv:id=1,op=2");
    assert!(e.contains("the trace has no accesses: its 2 records carry no data"), "{e}");
    let e = error(&dir.path().join("nope.txt"), "text");
    assert!(e.contains("nope.txt: cannot open"), "{e}");
    assert!(Spec::parse("nosuch").is_none());
}

#[test]
fn long_requests_span_batches_in_order() {
    let dir = scratch();
    // 100,000 pages in one request, more than one batch.
    let p = write(&dir, "big.csv", b"0,409600000\n");
    let got = accesses(&p, "csv:offset=1,size=2").unwrap();
    assert_eq!(got.len(), 100_000);
    assert!(got.iter().enumerate().all(|(i, a)| a.0 == i as u32));
}

#[test]
fn oracle_general_dense_and_iolog_read_as_access_streams() {
    let dir = scratch();
    // oracleGeneral: ids mapped in order of first access, times in seconds kept.
    let og = dir.path().join("t.og");
    let recs = [(5u32, 70u64), (6, 80), (6, 70), (9, 90)].map(|(t, id)| crate::Record { time: t, obj_id: id, obj_size: 4096, next_access_vtime: -1 });
    crate::write_oracle(&og, recs, None).unwrap();
    assert_eq!(accesses(&og, "oracleGeneral").unwrap(), vec![(0, Plain), (1, Plain), (0, Plain), (2, Plain)]);
    let mut s = AccessStream::open(&og, &Spec::OracleGeneral).unwrap();
    let (_, _, times) = s.next_accesses().unwrap().unwrap();
    assert_eq!(times, &[5_000_000_000, 6_000_000_000, 6_000_000_000, 9_000_000_000]);
    assert_eq!(s.counts().timed, 4);
    // A backward time is an error naming the record's offset.
    let back = dir.path().join("back.og");
    crate::write_oracle(&back, [(5u32, 1u64), (4, 2)].map(|(t, id)| crate::Record { time: t, obj_id: id, obj_size: 1, next_access_vtime: -1 }), None).unwrap();
    assert!(error(&back, "oracleGeneral").contains("byte offset 24: time 4 s is earlier than 5 s"));
    // dense: the pages as written.
    let dense = dir.path().join("t.dense");
    crate::convert(&og, &dense).unwrap();
    assert_eq!(accesses(&dense, "dense").unwrap(), vec![(0, Plain), (1, Plain), (0, Plain), (2, Plain)]);
    // iolog: file b's pages after file a's 3 (its page 2 is its last); reads and writes
    // kept; v3 times in µs.
    let log = write(&dir, "t.iolog", b"fio version 3 iolog\n0 a add\n1 b add\n10 a read 0 4096\n20 b write 4096 8192\n30 a read 8192 4096\n");
    assert_eq!(accesses(&log, "iolog").unwrap(), vec![(0, R), (4, W), (5, W), (2, R)]);
    let mut s = AccessStream::open(&log, &Spec::Iolog).unwrap();
    let (_, _, times) = s.next_accesses().unwrap().unwrap();
    assert_eq!(times, &[10_000, 20_000, 20_000, 30_000]);
    assert!(Spec::Iolog.has_times() && !Spec::Text.has_times() && !Spec::Dense.has_times());
    assert!(!Spec::parse("csv:id=1").unwrap().unwrap().has_times() && Spec::parse("csv:id=1,time=2").unwrap().unwrap().has_times());
}

/// Issue 40: a FIFO nobody writes to used to block in open(2) forever, and a device such as
/// /dev/zero given as an oracleGeneral or dense trace (size 0, never ending) replayed
/// forever. Now the FIFO opens without waiting and reads as empty; the device is refused.
#[test]
fn a_fifo_without_a_writer_and_a_device_do_not_hang() {
    let dir = scratch();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path in a fresh scratch directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = error(&fifo, "text");
    assert!(e.contains("the trace has no accesses"), "{e}");
    let Err(e) = crate::OracleReader::open(&fifo) else { panic!("a FIFO is refused") };
    let e = e.to_string();
    assert!(e.contains("is a pipe (FIFO): this trace format is read from a regular file"), "{e}");
    for format in ["oracleGeneral", "dense"] {
        let e = error(Path::new("/dev/zero"), format);
        assert!(e.contains("/dev/zero: is a device"), "{format}: {e}");
    }
    let e = error(dir.path(), "text");
    assert!(e.contains("is a directory"), "{e}");
}

/// Issue 40: records of zero bytes only (a zero-filled file, or 2 KiB of zstd holding 4 MiB
/// of zeros) replayed as zero-size records for as long as they lasted; a whole chunk of them
/// is now refused with its offset. A short run of zero records is still a trace.
#[test]
fn an_oracle_general_trace_of_zero_records_is_refused() {
    let zeros = zstd::encode_all(&vec![0u8; 4 << 20][..], 19).unwrap();
    let mut r = crate::OracleReader::from_bytes("zeros.og.zst", zeros).unwrap();
    let e = r.next_batch().expect_err("refused").to_string();
    assert!(e.contains("zeros.og.zst: byte offset 0:") && e.contains("records of zero bytes from here"), "{e}");
    let dir = scratch();
    let p = write(&dir, "zero.og", &vec![0u8; 24 * 100_000]);
    let e = crate::OracleReader::open(&p).unwrap().for_each(|_| {}).expect_err("refused").to_string();
    assert!(e.contains("not an oracleGeneral trace"), "{e}");
    let few = write(&dir, "few.og", &[0u8; 24 * 3]);
    assert_eq!(crate::OracleReader::open(&few).unwrap().for_each(|_| {}).unwrap(), 3);
}
