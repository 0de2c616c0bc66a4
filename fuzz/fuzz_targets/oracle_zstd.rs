//! zstd-compressed oracleGeneral traces: the input as a zstd stream (the frame magic put in
//! front if it is missing), every record read and mapped; and the input as a plain trace,
//! compressed, must read exactly as the plain trace does (the same records, or an error for
//! both).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab_fuzz::{oracle_pages, oracle_records};
use pagelab_trace::ZSTD_MAGIC;

fuzz_target!(|data: &[u8]| {
    let stream = if data.starts_with(&ZSTD_MAGIC) { data.to_vec() } else { [&ZSTD_MAGIC[..], data].concat() };
    let _ = oracle_records(stream.clone());
    let _ = oracle_pages(stream);
    if !data.starts_with(&ZSTD_MAGIC) {
        let plain = oracle_records(data.to_vec());
        let packed = zstd::bulk::compress(data, 1).expect("compressing in memory");
        let unpacked = oracle_records(packed);
        match (&plain, &unpacked) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "compressed, the trace reads differently"),
            (Err(_), Err(_)) => {}
            _ => panic!("plain and compressed readers disagree: {plain:?} / {unpacked:?}"),
        }
    }
});
