//! fio I/O logs, versions 2 and 3: every line parsed into page operations or a line-numbered
//! error, never a panic; every operation lies within the pages its file is given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab_trace::iolog;

fuzz_target!(|data: &[u8]| {
    let Ok(log) = iolog::parse(data, std::path::Path::new("fuzz.iolog")) else { return };
    assert!(log.version == 2 || log.version == 3);
    for op in &log.ops {
        let pages = log.files[op.file as usize].1;
        assert!(op.npages >= 1 && op.first_page + op.npages as u64 <= pages, "{op:?} beyond the file's {pages} pages");
    }
});
