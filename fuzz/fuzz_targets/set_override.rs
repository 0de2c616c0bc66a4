//! The `--set key=value` overrides (and `--vary key=v1,v2` axes) over the example
//! scenarios: every line of the input is one override. Parsing and validation only.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelab::scenario::with_overrides;
use pagelab::sweep::{points, Axis};
use pagelab::Scenario;

const BASES: [&str; 3] =
    [include_str!("../../examples/fio-zipf.toml"), include_str!("../../examples/mglru-kairui.toml"), include_str!("../../examples/seeds/004/memcached.toml")];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let base = BASES[pick as usize % BASES.len()];
    let sets: Vec<String> = text.lines().map(str::to_string).collect();
    let parsed = Scenario::parse(base, "base.toml", "base", &sets);
    if let Err(e) = &parsed {
        let _ = e.to_string();
    }
    // `pagelab oracle` applies the overrides to the text and hands it on: it must read as
    // the scenario the overrides give.
    match (&parsed, with_overrides(base, "base.toml", &sets)) {
        (Ok(s), Ok(t)) => {
            let mut again = Scenario::parse(&t, "base.toml", "base", &[]).unwrap_or_else(|e| panic!("overridden text is refused: {e}\n{t}"));
            // The text already holds the overrides: the reread scenario has none of its own
            // to record, but the same resolved document.
            assert_eq!(again.resolved_toml, s.resolved_toml, "overridden text resolves differently:\n{t}");
            again.overrides = s.overrides.clone();
            assert_eq!(format!("{s:?}"), format!("{again:?}"), "overridden text reads differently:\n{t}");
        }
        (Ok(_), Err(e)) => panic!("the overrides apply to the scenario but not to its text: {e}"),
        _ => {}
    }
    // The same lines as `--vary` axes: each sweep point's overrides (small sweeps only; the
    // product of the axes is the user's to choose).
    let axes: Vec<Axis> = sets.iter().filter_map(|l| Axis::parse(l).ok()).collect();
    if axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()).filter(|&n| n <= 16)).is_some() {
        for p in points(&axes) {
            let _ = p.label();
            let _ = Scenario::parse(base, "base.toml", "base", &p.set_args());
        }
    }
});
