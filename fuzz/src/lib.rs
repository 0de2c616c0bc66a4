//! What the oracleGeneral targets share: reading a trace held in memory to its end.

use std::path::Path;

use pagelab_trace::{OracleReader, OracleSource, PageSource, Record, Threaded, TraceError};

const NAME: &str = "fuzz.oracleGeneral";

/// Every record of the trace, or the error that stops it.
pub fn oracle_records(bytes: Vec<u8>) -> Result<Vec<Record>, TraceError> {
    let mut out = Vec::new();
    OracleReader::from_bytes(NAME, bytes)?.for_each(|r| out.push(r))?;
    Ok(out)
}

/// Every page of the trace as `pagelab run --trace` reads it (ids mapped on a thread of
/// their own, next-access times kept), or the error that stops it.
pub fn oracle_pages(bytes: Vec<u8>) -> Result<Vec<u32>, TraceError> {
    let src = OracleSource::from_reader(OracleReader::from_bytes(NAME, bytes)?, true);
    let mut s = Threaded::spawn(Box::new(src), Path::new(NAME), true);
    let mut out = Vec::new();
    loop {
        let Some(b) = s.next_batch()? else { break };
        let batch = b.to_vec();
        let seen = s.pages_seen();
        assert!(batch.iter().all(|&p| (p as u64) < seen), "a page index beyond the {seen} pages seen");
        out.extend_from_slice(&batch);
        let n = batch.len();
        let next = s.next_access().expect("next-access times were asked for");
        assert_eq!(next.len(), n, "one next-access time a page");
    }
    Ok(out)
}

/// The accesses [`access_stream`] reads of one input at most. A request may span 2^20 pages
/// (4 GiB), each mapped to a dense index, so a few hundred bytes of MSR or blkparse rows can
/// ask for tens of millions of accesses (seconds an input in the instrumented build) and the
/// fuzzer would spend its time expanding them; what is fuzzed is the parsing, which a shorter
/// input reaches as well, and a request's expansion, which its first 2^17 pages exercise
/// (two of the stream's 65,536-access batches, the request carried from one to the next).
pub const MAX_FUZZ_ACCESSES: u64 = 1 << 17;

/// The accesses of `bytes` read as a trace in `format` (a `--trace-format` value) by the
/// access-stream readers (text, LCS, CSV, blkparse, MSR), up to [`MAX_FUZZ_ACCESSES`], or the
/// error that stops them. The readers open files (to sniff gzip and zstd), so the input goes
/// to a file of this process's own in memory-backed /dev/shm first.
pub fn access_stream(bytes: &[u8], format: &str) -> Result<u64, pagelab_trace::TraceError> {
    use pagelab_trace::access::{AccessStream, Spec};
    thread_local! {
        static PATH: std::path::PathBuf = std::path::Path::new("/dev/shm").join(format!("pagelab-fuzz-{}", std::process::id()));
    }
    let spec = Spec::parse(format).expect("a known format").expect("a valid format");
    PATH.with(|path| {
        std::fs::write(path, bytes).expect("writing the input to /dev/shm");
        let mut s = AccessStream::open(path, &spec)?;
        let mut n = 0u64;
        while n < MAX_FUZZ_ACCESSES {
            let Some(b) = s.next_accesses()? else { break };
            n += b.0.len() as u64;
        }
        Ok(n)
    })
}
