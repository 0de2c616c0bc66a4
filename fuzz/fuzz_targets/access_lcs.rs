//! The `lcs` access-stream reader: any input is its accesses or an error naming the file and
//! the line or offset, never a panic, a hang or memory beyond what the input holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = pagelab_fuzz::access_stream(data, "lcs");
});
