//! `pagelab size`: the smallest memory.max meeting targets, by bisection over runs.

use crate::{pagelab, scratch_file};

/// A file of `pages` pages read in a loop, four times, by a task in /app: below `pages` of
/// memory.max the LRU evicts each page before its next read and every read of the later
/// loops refaults; from `pages` on, nothing refaults.
fn looping(pages: u64) -> String {
    format!(
        r#"[machine]
memory = "256M"
[[cgroup]]
path = "/app"
[[workload]]
name = "loop"
cgroup = "/app"
kind = "file-read"
file_size = "{pages}p"
distribution = "seq"
ops = {}
"#,
        pages * 4
    )
}

fn size_json(scenario: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let out = pagelab().arg("size").arg(scenario).args(["--cgroup", "/app", "--json", "-"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn size_finds_where_a_looping_file_stops_refaulting() {
    for pages in [2048u64, 3000] {
        let p = scratch_file("size", &format!("loop-{pages}.toml"), &looping(pages));
        let bytes = pages * 4096;
        let tolerance = 64 * 1024;
        // From 4M: in a smaller cgroup the shadow-node shrinker drops the shadow entries, so the
        // re-reads are no longer *seen* as refaults (pgpgin still counts them).
        let v = size_json(&p, &["--target", "workingset_refault_file<=100", "--lo", "4M", "--hi", "64M", "--tolerance", "64K"]);
        let s = &v["size"];
        let answer = s["answer"].as_u64().unwrap();
        // The jump is at the file's size: the answer is there, within the tolerance.
        assert!(answer >= bytes && answer <= bytes + tolerance, "{pages} pages: answer {answer}, file {bytes}");
        let below = s["below"].as_u64().unwrap();
        assert!(below < bytes && answer - below <= tolerance, "{s}");
        // Every point below the file's size refaults, every point from it on does not.
        for pt in s["points"].as_array().unwrap() {
            let (m, refaults) = (pt["memory"].as_u64().unwrap(), pt["workingset_refault_file"].as_f64().unwrap());
            assert_eq!(pt["pass"].as_bool().unwrap(), m >= answer, "{pt}");
            assert!((m < bytes) == (refaults > 100.0), "{pt}");
        }
        assert_eq!(v["provenance"]["size"]["cgroup"], "/app");
        assert_eq!(s["key"], "cgroup./app.max");
        assert!(s["targets"][0]["margin"].as_f64().unwrap() >= 0.0, "{s}");
    }
}

#[test]
fn size_defaults_its_range_from_the_footprint_and_takes_max_bounds() {
    let p = scratch_file("size", "loop-default.toml", &looping(2048));
    // Default range 1M to 1.25 x 8M = 10M, tolerance 1% of it.
    let v = size_json(&p, &["--target", "throughput>=0.9*max"]);
    let s = &v["size"];
    let (answer, tol) = (s["answer"].as_u64().unwrap(), s["tolerance"].as_u64().unwrap());
    assert_eq!((s["lo"].as_u64().unwrap(), s["hi"].as_u64().unwrap()), (1 << 20, 10 << 20), "{s}");
    assert!(answer >= 8 << 20 && answer <= (8 << 20) + tol, "{answer} (tolerance {tol})");
    let text = pagelab().arg("size").arg(&p).args(["--cgroup", "/app", "--target", "throughput>=0.9*max"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("smallest cgroup./app.max meeting every target: 8.0") && text.contains("margin at") && text.contains("the largest size that fails"),
        "{text}"
    );
}

#[test]
fn size_refuses_bad_targets_and_ranges_clearly() {
    let p = scratch_file("size", "loop-bad.toml", &looping(256));
    let cases: [(&[&str], &str); 7] = [
        (&["--cgroup", "/app", "--target", "psi.some.avg60<1%"], "unknown metric `psi.some.avg60`"),
        (&["--cgroup", "/app", "--target", "refaults"], "--target `refaults`: no comparison"),
        (&["--cgroup", "/app", "--target", "pgscan_file<5%"], "`%` applies to a ratio"),
        (&["--cgroup", "/app", "--target", "ops>=0.9*maximum"], "not a number"),
        (&["--cgroup", "/nope", "--target", "ops>0"], "--cgroup /nope: not a [[cgroup]]"),
        (&["--cgroup", "/app", "--target", "ops>0", "--lo", "16M", "--hi", "4M"], "the range searched is empty"),
        (&["--cgroup", "/app", "--target", "workingset_refault_file<0"], "not met even at --hi"),
    ];
    for (args, want) in cases {
        let out = pagelab().arg("size").arg(&p).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn size_tries_the_same_sizes_whatever_the_threads() {
    // Determinism: the sizes of a round do not follow the cores, so the answer and every
    // point run are the same on any machine.
    let p = scratch_file("size", "loop-threads.toml", &looping(2500));
    let args = |t: &'static str| ["--target", "workingset_refault_file<=100", "--lo", "4M", "--hi", "64M", "--tolerance", "256K", "--threads", t];
    let points = |v: &serde_json::Value| v["size"]["points"].as_array().unwrap().iter().map(|p| p["memory"].as_u64().unwrap()).collect::<Vec<_>>();
    let (one, three) = (size_json(&p, &args("1")), size_json(&p, &args("3")));
    assert_eq!(one["size"]["answer"], three["size"]["answer"]);
    assert_eq!(points(&one), points(&three));
}
