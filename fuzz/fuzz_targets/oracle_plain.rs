//! libCacheSim oracleGeneral traces, plain: every record read, then every record mapped to
//! a dense page (with its next-access time) on the mapper thread, as `pagelab run --trace`
//! reads a trace. A bad trace is an error naming the byte offset, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab_fuzz::{oracle_pages, oracle_records};

fuzz_target!(|data: &[u8]| {
    let records = oracle_records(data.to_vec());
    let pages = oracle_pages(data.to_vec());
    // Both read the same records, or fail.
    match (&records, &pages) {
        (Ok(r), Ok(p)) => assert_eq!(r.len(), p.len()),
        (Err(_), Err(_)) => {}
        _ => panic!("the record reader and the page source disagree: {records:?} / {pages:?}"),
    }
});
