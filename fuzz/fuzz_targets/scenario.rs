//! The scenario loader: any text → a validated [`Scenario`] or a located error, never a
//! panic. Only parsing and validation run (no simulation), so the target does not depend on
//! how the model sizes its per-page state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab::scenario::with_overrides;
use pagelab::Scenario;

fuzz_target!(|data: &[u8]| {
    // `Scenario::load` reads the file as UTF-8 and refuses anything else.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = Scenario::parse(text, "fuzz.toml", "fuzz", &[]);
    if let Err(e) = &parsed {
        let _ = e.to_string();
    }
    // What `pagelab oracle` hands its in-guest runner: re-serialized, it reads as the same
    // scenario.
    if let (Ok(s), Ok(again)) = (&parsed, with_overrides(text, "fuzz.toml", &[])) {
        let t = Scenario::parse(&again, "fuzz.toml", "fuzz", &[]).unwrap_or_else(|e| panic!("re-serialized text is refused: {e}\n{again}"));
        assert_eq!(format!("{s:?}"), format!("{t:?}"), "re-serialized text reads differently:\n{again}");
    }
});
