//! pagelab's dense traces: the header checked, every page index read, and the trace replayed
//! through every plain cache, whose tables are sized from the header: the memory a trace
//! costs must follow its records, not what its header declares.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab_cachesim::PolicyKind;
use pagelab_trace::{DenseReader, PageSource};

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = DenseReader::from_bytes("fuzz.dense", data.to_vec()) else { return };
    let (pages, records) = (r.pages().expect("a dense trace knows its pages"), r.records());
    let mut n = 0u64;
    while let Ok(Some(b)) = r.next_batch() {
        assert!(b.iter().all(|&p| (p as u64) < pages), "a page index beyond the header's {pages} pages");
        n += b.len() as u64;
    }
    assert!(n <= records);
    let capacity = 1 + data.len() as u64 % 16;
    for policy in PolicyKind::ALL {
        let mut r = DenseReader::from_bytes("fuzz.dense", data.to_vec()).expect("opened once");
        let _ = pagelab_cachesim::run(&mut r, policy, capacity);
    }
});
