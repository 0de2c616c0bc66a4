use super::*;

/// A directory of the test's own, removed when the test ends (pass or fail).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("pagelab-trace-test-").tempdir().unwrap()
}

fn tmp(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn ids(n: usize) -> Vec<u64> {
    // A few hot objects, many cold ones, large sparse ids.
    (0..n as u64).map(|i| if i % 3 == 0 { (i % 7) << 40 } else { i.wrapping_mul(0x9E37_79B9_7F4A_7C15) }).collect()
}

fn pages_of(src: &mut dyn PageSource) -> Result<Vec<u32>, TraceError> {
    let mut v = Vec::new();
    while let Some(b) = src.next_batch()? {
        v.extend_from_slice(b);
    }
    Ok(v)
}

fn dense_expected(ids: &[u64]) -> Vec<u32> {
    let mut m = std::collections::HashMap::new();
    ids.iter()
        .map(|id| {
            let n = m.len() as u32;
            *m.entry(*id).or_insert(n)
        })
        .collect()
}

#[test]
fn plain_and_zstd_read_every_record_in_order() {
    let dir = scratch();
    // More than one 1 MiB batch, and a record count that does not divide it.
    let ids = ids(100_003);
    let recs = with_next_access(&ids, 4096);
    let (plain, zst) = (tmp(&dir, "a.oracleGeneral"), tmp(&dir, "a.oracleGeneral.zst"));
    write_oracle(&plain, recs.iter().copied(), None).unwrap();
    write_oracle(&zst, recs.iter().copied(), Some(3)).unwrap();
    for p in [&plain, &zst] {
        let mut got = Vec::new();
        let n = OracleReader::open(p).unwrap().for_each(|r| got.push(r)).unwrap();
        assert_eq!(n, recs.len() as u64);
        assert_eq!(got, recs);
        let mut s = OracleSource::open(p, true).unwrap();
        let mut next = Vec::new();
        let mut pages = Vec::new();
        while let Some(b) = s.next_batch().unwrap() {
            pages.extend_from_slice(b);
            next.extend_from_slice(s.next_access().unwrap());
        }
        assert_eq!(pages, dense_expected(&ids));
        assert_eq!(next, recs.iter().map(|r| r.next_access_vtime).collect::<Vec<_>>());
    }
    assert!(OracleReader::open(&zst).unwrap().is_compressed());
    assert!(!OracleReader::open(&plain).unwrap().is_compressed());
}

#[test]
fn a_hashing_reader_replaces_only_the_next_access_field_by_the_ids_hash() {
    let dir = scratch();
    // Several chunks, plain and zstd: every record keeps its time, id and size, in order,
    // and carries mix64(id) where its next-access time was.
    let ids = ids(100_003);
    let mut recs = with_next_access(&ids, 4096);
    recs[5].obj_size = 0;
    let (plain, zst) = (tmp(&dir, "h.oracleGeneral"), tmp(&dir, "h.oracleGeneral.zst"));
    write_oracle(&plain, recs.iter().copied(), None).unwrap();
    write_oracle(&zst, recs.iter().copied(), Some(3)).unwrap();
    for p in [&plain, &zst] {
        let mut r = OracleReader::open_hashing(p).unwrap();
        let mut got = Vec::new();
        while let Some(b) = r.next_batch().unwrap() {
            got.extend(b.as_chunks::<ORACLE_RECORD>().0.iter().map(|b| (Record::parse(b), stored_hash(b))));
        }
        assert_eq!(got.len(), recs.len());
        for (i, ((r, h), want)) in got.iter().zip(&recs).enumerate() {
            assert_eq!((r.time, r.obj_id, r.obj_size), (want.time, want.obj_id, want.obj_size), "record {i}");
            assert_eq!(*h, mix64(want.obj_id), "record {i}");
        }
    }
}

#[test]
fn two_passes_and_the_dense_format_give_the_same_pages() {
    let dir = scratch();
    let ids = ids(50_000);
    let p = tmp(&dir, "b.oracleGeneral");
    write_oracle(&p, with_next_access(&ids, 4096), None).unwrap();
    let want = dense_expected(&ids);
    let mut two = open(&p, Format::OracleGeneral, true, false).unwrap();
    assert_eq!(two.pages(), Some(*want.iter().max().unwrap() as u64 + 1));
    assert_eq!(pages_of(two.as_mut()).unwrap(), want);
    let d = tmp(&dir, "b.dense");
    let st = convert(&p, &d).unwrap();
    assert_eq!(st, ConvertStats { records: ids.len() as u64, pages: two.pages().unwrap(), zero_size_records: 0 });
    let mut r = open(&d, Format::Dense, false, false).unwrap();
    assert_eq!(r.pages(), two.pages());
    assert_eq!(pages_of(r.as_mut()).unwrap(), want);
}

#[test]
fn a_threaded_source_gives_the_batches_and_then_the_error_of_its_source() {
    let dir = scratch();
    let ids = ids(100_003);
    let recs = with_next_access(&ids, 4096);
    let (plain, zst) = (tmp(&dir, "t.oracleGeneral"), tmp(&dir, "t.oracleGeneral.zst"));
    write_oracle(&plain, recs.iter().copied(), None).unwrap();
    write_oracle(&zst, recs.iter().copied(), Some(3)).unwrap();
    let want = dense_expected(&ids);
    for p in [&plain, &zst] {
        // `open` maps a one-pass oracleGeneral trace on a thread of its own.
        let mut s = open(p, Format::OracleGeneral, false, true).unwrap();
        assert_eq!(s.pages(), None);
        let (mut pages, mut next) = (Vec::new(), Vec::new());
        while let Some(b) = s.next_batch().unwrap() {
            pages.extend_from_slice(b);
            next.extend_from_slice(s.next_access().unwrap());
            assert_eq!(s.pages_seen(), *pages.iter().max().unwrap() as u64 + 1);
        }
        assert_eq!(pages, want);
        assert_eq!(next, recs.iter().map(|r| r.next_access_vtime).collect::<Vec<_>>());
        assert!(s.next_batch().unwrap().is_none(), "the end stays the end");
    }
    // A cut zstd stream: whole batches first, then the reader's error, then nothing.
    let good = std::fs::read(&zst).unwrap();
    let cut = tmp(&dir, "t-cut.zst");
    std::fs::write(&cut, &good[..good.len() * 3 / 4]).unwrap();
    let mut s = Threaded::spawn(Box::new(OracleSource::open(&cut, false).unwrap()), &cut, false);
    let mut got = Vec::new();
    let e = loop {
        match s.next_batch() {
            Ok(Some(b)) => got.extend_from_slice(b),
            Ok(None) => panic!("a cut stream must not end cleanly"),
            Err(e) => break e,
        }
    };
    assert!(e.to_string().contains("t-cut.zst") && e.to_string().contains("zstd"), "{e}");
    assert_eq!(got[..], want[..got.len()]);
    assert!(s.next_batch().unwrap().is_none());
    // Dropped early, the thread ends instead of blocking (the test would hang).
    let mut s = open(&plain, Format::OracleGeneral, false, false).unwrap();
    assert!(s.next_batch().unwrap().is_some());
    drop(s);
}

#[test]
fn a_truncated_plain_trace_is_refused_with_its_offset() {
    let dir = scratch();
    let p = tmp(&dir, "c.oracleGeneral");
    write_oracle(&p, with_next_access(&[1, 2, 3], 4096), None).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.truncate(24 * 2 + 10);
    std::fs::write(&p, &bytes).unwrap();
    let e = OracleReader::open(&p).err().expect("refused");
    assert_eq!(e.offset, Some(48));
    let text = e.to_string();
    assert!(text.contains("c.oracleGeneral") && text.contains("byte offset 48") && text.contains("truncated record"), "{text}");
    assert!(text.contains("10 of 24 bytes"), "{text}");
}

#[test]
fn a_truncated_record_inside_a_zstd_trace_is_an_error_not_a_dropped_record() {
    let dir = scratch();
    let p = tmp(&dir, "d.zst");
    let f = File::create(&p).unwrap();
    let mut w = zstd::stream::write::Encoder::new(f, 1).unwrap().auto_finish();
    for r in with_next_access(&[1, 2, 3], 4096) {
        w.write_all(&r.to_bytes()).unwrap();
    }
    w.write_all(&[7u8; 5]).unwrap();
    drop(w);
    let mut r = OracleReader::open(&p).unwrap();
    assert_eq!(r.next_batch().unwrap().unwrap().len(), 72);
    let e = r.next_batch().unwrap_err();
    assert_eq!(e.offset, Some(72));
    assert!(e.to_string().contains("d.zst: byte offset 72: truncated record"), "{e}");
    assert!(e.to_string().contains("decompressed"), "{e}");
}

#[test]
fn corrupt_and_cut_zstd_streams_are_errors() {
    let dir = scratch();
    let recs = with_next_access(&ids(20_000), 4096);
    let p = tmp(&dir, "e.zst");
    write_oracle(&p, recs, Some(3)).unwrap();
    let good = std::fs::read(&p).unwrap();
    // Cut in the middle of the frame.
    std::fs::write(&p, &good[..good.len() / 2]).unwrap();
    let e = OracleReader::open(&p).unwrap().for_each(|_| {}).unwrap_err();
    assert!(e.to_string().contains("e.zst") && e.to_string().contains("zstd"), "{e}");
    // Garbage after the magic.
    let mut bad = good.clone();
    for b in &mut bad[4..40] {
        *b = 0xff;
    }
    std::fs::write(&p, &bad).unwrap();
    let e = OracleReader::open(&p).unwrap().for_each(|_| {}).unwrap_err();
    assert!(e.to_string().contains("bad zstd data"), "{e}");
    assert!(e.offset.is_some());
}

#[test]
fn dense_files_check_their_header_and_length() {
    let dir = scratch();
    let d = tmp(&dir, "f.dense");
    let mut w = DenseWriter::create(&d).unwrap();
    w.write(&[0, 1, 2, 1, 0]).unwrap();
    w.finish(3).unwrap();
    let mut bytes = std::fs::read(&d).unwrap();
    assert_eq!(bytes.len(), 32 + 20);
    bytes.truncate(32 + 18);
    std::fs::write(&d, &bytes).unwrap();
    let e = DenseReader::open(&d).err().unwrap();
    assert_eq!(e.offset, Some(32 + 16));
    assert!(e.to_string().contains("promises 5 records, the file holds 4 and part of another"), "{e}");
    // A record count whose byte count overflows 64 bits (the `dense` fuzz target's find).
    let mut w = DenseWriter::create(&d).unwrap();
    w.write(&[0, 1, 2, 1, 0]).unwrap();
    w.finish(3).unwrap();
    let mut bytes = std::fs::read(&d).unwrap();
    bytes[8..16].copy_from_slice(&(0x4000_0000_0000_0005u64).to_le_bytes());
    std::fs::write(&d, &bytes).unwrap();
    let e = DenseReader::open(&d).err().unwrap();
    assert!(e.to_string().contains("truncated trace: the header promises 4611686018427387909 records, the file holds 5"), "{e}");
    std::fs::write(&d, b"not a trace").unwrap();
    assert!(DenseReader::open(&d).err().unwrap().to_string().contains("PLDENSE1"));
}

/// A dense header's page count sizes every simulator's tables: one that the records cannot
/// back (found by the `dense` fuzz target, 2^37 bytes asked for by a 40-byte file) is refused.
#[test]
fn a_dense_header_declaring_more_pages_than_records_is_refused() {
    let dir = scratch();
    let d = tmp(&dir, "h.dense");
    let mut w = DenseWriter::create(&d).unwrap();
    w.write(&[0, 1]).unwrap();
    w.finish(2).unwrap();
    let mut bytes = std::fs::read(&d).unwrap();
    bytes[16..24].copy_from_slice(&(1u64 << 34).to_le_bytes());
    std::fs::write(&d, &bytes).unwrap();
    let e = DenseReader::open(&d).err().unwrap();
    assert_eq!(e.offset, Some(16));
    assert!(e.to_string().contains("declares 17179869184 pages but the trace has only 2 records"), "{e}");
}

/// A small plain trace is read in one chunk the size of the trace, not in 1 MiB buffers (the
/// records come out the same).
#[test]
fn a_small_plain_trace_is_read_in_one_small_chunk() {
    assert_eq!(chunk_bytes_for(Some(48)), 72);
    assert_eq!(chunk_bytes_for(Some(CHUNK_BYTES as u64 * 3)), CHUNK_BYTES);
    assert_eq!(chunk_bytes_for(None), CHUNK_BYTES);
    let dir = scratch();
    let p = tmp(&dir, "s.oracleGeneral");
    write_oracle(&p, with_next_access(&[1, 2, 1], 4096), None).unwrap();
    let mut ids = Vec::new();
    OracleReader::open(&p).unwrap().for_each(|r| ids.push(r.obj_id)).unwrap();
    assert_eq!(ids, vec![1, 2, 1]);
}

/// Another format's file given as oracleGeneral is named for what it looks like (issue 16:
/// a dense trace was reported as a truncated record), and an empty file is an error.
#[test]
fn files_in_other_formats_are_recognised_by_their_signature() {
    let dir = scratch();
    let d = tmp(&dir, "x.dense");
    let mut w = DenseWriter::create(&d).unwrap();
    w.write(&[0, 1, 0]).unwrap();
    w.finish(2).unwrap();
    let e = OracleReader::open(&d).err().unwrap().to_string();
    assert!(e.contains("looks like a pagelab dense trace") && e.contains("--trace-format dense"), "{e}");
    for (name, bytes, needle) in [
        ("e.og", &b""[..], "the trace is empty"),
        ("g.og", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3][..], "gzip"),
        ("f.og", &b"fio version 3 iolog\n0 /f add\n"[..], "--trace-format fio-iolog"),
        ("c.og", &b"timestamp,obj_id,size\n1,2,4096\n3,4,4096\n"[..], "looks like a text file"),
    ] {
        let p = tmp(&dir, name);
        std::fs::write(&p, bytes).unwrap();
        let e = OracleReader::open(&p).err().unwrap().to_string();
        assert!(e.contains(needle), "{name}: {e}");
    }
    // A dense header with no records.
    let mut w = DenseWriter::create(&d).unwrap();
    w.write(&[]).unwrap();
    w.finish(0).unwrap();
    assert!(DenseReader::open(&d).err().unwrap().to_string().contains("the trace is empty"));
}

#[test]
fn zero_size_records_are_accesses_and_counted() {
    let dir = scratch();
    let p = tmp(&dir, "g.oracleGeneral");
    let mut recs = with_next_access(&[5, 6, 5], 4096);
    recs[1].obj_size = 0;
    write_oracle(&p, recs, None).unwrap();
    let mut s = OracleSource::open(&p, false).unwrap();
    assert_eq!(pages_of(&mut s).unwrap(), vec![0, 1, 0]);
    assert_eq!(s.zero_size_records(), 1);
}

#[test]
fn the_id_map_grows_and_keeps_indices() {
    let mut m = IdMap::with_capacity(4);
    let keys: Vec<u64> = (0..10_000u64).map(|i| i * 4096).collect();
    for (i, &k) in keys.iter().enumerate() {
        assert_eq!(m.get_or_insert(k), i as u32);
    }
    for (i, &k) in keys.iter().enumerate() {
        assert_eq!(m.get(k), Some(i as u32));
    }
    assert_eq!(m.get(1), None);
    assert_eq!(m.len(), 10_000);
}

#[test]
fn format_names() {
    assert_eq!("oracleGeneral".parse::<Format>(), Ok(Format::OracleGeneral));
    assert_eq!("dense".parse::<Format>(), Ok(Format::Dense));
    assert!("csv".parse::<Format>().is_err());
}

#[test]
fn chunk_boundaries_lose_no_record_and_cut_records_are_errors() {
    let dir = scratch();
    // Exactly two of the reading thread's chunks (the end is seen in an empty third one),
    // then one chunk and a partial record just past its end.
    let per_chunk = CHUNK_BYTES / ORACLE_RECORD;
    let recs = with_next_access(&ids(2 * per_chunk), 4096);
    let p = tmp(&dir, "two-chunks.zst");
    write_oracle(&p, recs.iter().copied(), Some(1)).unwrap();
    let mut got = Vec::new();
    assert_eq!(OracleReader::open(&p).unwrap().for_each(|r| got.push(r)).unwrap(), recs.len() as u64);
    assert_eq!(got, recs);

    let p = tmp(&dir, "chunk-and-a-bit.zst");
    let f = File::create(&p).unwrap();
    let mut w = zstd::stream::write::Encoder::new(f, 1).unwrap().auto_finish();
    for r in &recs[..per_chunk] {
        w.write_all(&r.to_bytes()).unwrap();
    }
    w.write_all(&[9u8; 10]).unwrap();
    drop(w);
    let mut r = OracleReader::open(&p).unwrap();
    assert_eq!(r.next_batch().unwrap().unwrap().len(), CHUNK_BYTES);
    let e = r.next_batch().unwrap_err();
    assert_eq!(e.offset, Some(CHUNK_BYTES as u64));
    assert!(e.to_string().contains("ends 10 bytes into record"), "{e}");
    assert_eq!(r.records_read(), per_chunk as u64);
}
