//! A seam policy that defers eviction to the kernel (cache_ext's no-op policy, Table 4 of
//! the SOSP '25 paper) and what a hook call costs. Named after the clauses of
//! policy/seam/mod.rs's "Deferring to the kernel" and "What a hook costs".

use crate::common::scenario;

/// fio-like buffered random reads of a file twice the cgroup's limit, under `policy` for the
/// cgroup, with `hook_ns` per cache_ext hook call.
fn text(policy: &str, hook_ns: u64) -> String {
    format!(
        r#"[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
[time]
cache_ext_hook_ns = {hook_ns}
[report]
profile = true
[[cgroup]]
path = "/fio"
max = "8M"
policy = "{policy}"
[[workload]]
name = "fio"
cgroup = "/fio"
kind = "file-read"
file = "data"
file_size = "16M"
distribution = "random"
ops = 20000
seed = 7
"#
    )
}

fn run(text: &str) -> pagelab::Report {
    pagelab::run(&scenario(text), |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn hook_s(r: &pagelab::Report) -> f64 {
    let lines = r.profile.as_ref().expect("the profile was asked for");
    lines.iter().filter(|l| l.function == "cache_ext hooks").map(|l| l.tasks_s + l.kswapd_s).sum()
}

#[test]
fn a_deferring_policys_cgroup_keeps_the_classic_lrus_counters() {
    let classic = run(&text("classic", 0));
    let noop = run(&text("noop", 0));
    assert!(classic.vmstat["pgsteal_file"] > 1000, "the cgroup reclaims: {:?}", classic.vmstat);
    assert_eq!(noop.vmstat, classic.vmstat, "the classic LRU decides every eviction");
    assert_eq!(noop.memcg, classic.memcg);
    assert_eq!(noop.elapsed_s, classic.elapsed_s, "with cache_ext_hook_ns = 0 the hooks cost nothing");
}

#[test]
fn a_deferring_policy_hears_the_hooks_and_keeps_its_registry() {
    let r = run(&text("noop", 0));
    let seam = &r.policy_state.as_ref().expect("policy state")["state"]["seam"]["/fio"];
    let registered = seam["state"]["registered"].as_u64().unwrap_or_else(|| panic!("the registry's size: {seam}"));
    let file_pages = r.memcg["/fio"]["file"] / 4096;
    // Every resident folio that joined the LRU is registered, and every one evicted left the
    // registry: what remains is at most the cgroup's page cache (less the per-CPU batch).
    assert!(registered > 0 && registered <= file_pages && registered + 31 >= file_pages, "registered {registered}, file pages {file_pages}");
    assert_eq!(seam["counts"]["requests"], 0, "evict_folios is never called: {seam}");
}

#[test]
fn each_hook_call_costs_cache_ext_hook_ns() {
    let free = run(&text("noop", 0));
    let paid = run(&text("noop", 100));
    assert_eq!(hook_s(&free), 0.0, "no charge by default");
    let spent_ns = (hook_s(&paid) * 1e9).round() as u64;
    // One call per folio added and removed, and per read that marks a resident folio accessed.
    let evicted = free.vmstat["pgsteal_file"];
    assert!(spent_ns > 0 && spent_ns.is_multiple_of(100), "hook time {spent_ns} ns");
    assert!(spent_ns / 100 >= 2 * evicted, "calls {} for {evicted} evictions", spent_ns / 100);
    assert!(paid.elapsed_s > free.elapsed_s, "the hooks' CPU slows the task: {} vs {}", paid.elapsed_s, free.elapsed_s);
}
