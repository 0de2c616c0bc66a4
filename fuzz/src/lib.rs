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
