//! The one run entry: a scenario's policy names are resolved once, into a
//! [`MachinePolicy`], and [`pagelab::run_with`] reports its failures as a typed
//! [`RunError`] whose message is the text the CLI and Python print.

use crate::common::scenario;

use pagelab::policy::registry::MachinePolicy;
use pagelab::policy::seam::EvictionPolicy;
use pagelab::{PolicyKind, RunError, RunOptions};

/// A machine running `policy`, whose cgroups `/a` and `/b` run `a` and `b` (None: no
/// `policy` key), and a task in `/a` reading a file larger than its limit.
fn text(policy: &str, a: Option<&str>, b: Option<&str>) -> String {
    let key = |p: Option<&str>| p.map_or(String::new(), |p| format!("policy = \"{p}\"\n"));
    format!(
        r#"
[machine]
memory = "64M"
kernel = "6.1"
policy = "{policy}"
[[cgroup]]
path = "/a"
max = "100p"
{}[[cgroup]]
path = "/b"
{}[[workload]]
name = "r"
cgroup = "/a"
kind = "file-read"
file_size = "300p"
fadvise = "random"
ops = 2000
"#,
        key(a),
        key(b)
    )
}

#[test]
fn policy_names_are_resolved_once_into_the_machine_policy() {
    assert_eq!(scenario(&text("classic", None, None)).machine.policy, MachinePolicy::Classic);
    // "classic" as a cgroup's policy is the default LRU: no seam host.
    assert_eq!(scenario(&text("classic", Some("classic"), None)).machine.policy, MachinePolicy::Classic);
    assert_eq!(scenario(&text("mglru", None, None)).machine.policy, MachinePolicy::Mglru);

    let s = scenario(&text("s3fifo", Some("lru"), Some("classic")));
    let MachinePolicy::Seam(seam) = &s.machine.policy else { panic!("a seam host: {:?}", s.machine.policy) };
    assert_eq!(seam.machine.map(|p| p.name()), Some("s3fifo"));
    let cgroups: Vec<(&str, &str)> = seam.cgroups.iter().map(|(path, p)| (path.as_str(), p.name())).collect();
    assert_eq!(cgroups, [("/a", "lru")], "/b's classic adds no seam policy");
    assert_eq!((s.machine.policy.kind(), s.machine.policy.name()), (PolicyKind::Classic, "s3fifo"));

    // A cgroup's seam policy turns a classic machine into a seam host named "classic".
    let s = scenario(&text("classic", None, Some("mru")));
    let MachinePolicy::Seam(seam) = &s.machine.policy else { panic!("a seam host: {:?}", s.machine.policy) };
    assert!(seam.machine.is_none());
    assert_eq!(s.machine.policy.name(), "classic");
}

#[test]
fn the_resolved_policy_is_the_one_that_runs() {
    // Each cgroup's policy reaches the seam host: /a's LRU evicts, and the report names the
    // machine's policy.
    let s = scenario(&text("fifo", Some("lru"), None));
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!(r.policy, "fifo");
    let mut m = pagelab::sim::Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    m.run(|_| {});
    let a = m.mm.memcgs.find("/a").unwrap();
    assert!(m.policy.stats(a).is_some_and(|st| st.evicted > 0), "/a's own policy evicted");
}

#[test]
fn the_callers_policies_under_mglru_are_a_policy_error() {
    let s = scenario(&text("mglru", None, None));
    let make = |_: &str| -> Option<Box<dyn EvictionPolicy>> { None };
    let e = pagelab::run_with(&s, RunOptions { policies: Some((&make, "test")), ..Default::default() }).unwrap_err();
    assert!(matches!(e, RunError::Policy(_)), "{e:?}");
    assert_eq!(e.to_string(), "seam policies run under the classic LRU as the machine policy, not MGLRU");
}

#[test]
fn a_stopped_run_is_interrupted_not_a_partial_report() {
    let s = scenario(&text("classic", None, None));
    let token = pagelab::interrupt::StopToken::new();
    token.stop();
    let e = pagelab::interrupt::scope(Some(token), || pagelab::run(&s, |_, _| {})).unwrap_err();
    assert!(matches!(e, RunError::Interrupted), "{e:?}");
    assert_eq!(e.to_string(), "the run was interrupted");
    // Unstopped, the same scenario runs to its end.
    assert_eq!(pagelab::run(&s, |_, _| {}).unwrap().ops, 2000);
}

#[test]
fn the_host_limit_keeps_its_message() {
    // The frame table's failure, as `pagelab run` printed it before the error was typed.
    let e = RunError::HostLimit { scenario: "big".into(), message: "the frame table: 9 frames are past this host's limit of 8".into() };
    assert_eq!(e.to_string(), "scenario big: the frame table: 9 frames are past this host's limit of 8");
    let gathered: pagelab::error::Error = e.clone().into();
    assert_eq!(gathered.to_string(), e.to_string(), "pagelab::error::Error shows a run's error as it is");
}
