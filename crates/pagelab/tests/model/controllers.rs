//! `[[controller]]`: senpai (facebookincubator/senpai's senpai.py, TMO's memory.reclaim mode)
//! and systemd-oomd's kill on memory pressure, ticking at modeled times and acting through
//! memory.reclaim (mm/memcontrol.c: memory_reclaim()), memory.high (memory_high_write()) and
//! SIGKILL (kernel/exit.c: do_exit() → exit_mmap()), 6.1 and 6.12.

use pagelab::report::ControllerActionReport;
use pagelab::sim::controller::{ControllerSpec, OomdSpec, SenpaiMode};
use pagelab::Report;

/// /app reads a 32M file once, 8,192 pages at 400 a second (about 20 s): nothing is read
/// twice, so nothing the controller reclaims comes back and there is no memory pressure.
fn cold_cache(controllers: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
[[cgroup]]
path = "/app"
[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "32M"
distribution = "seq"
ops = 8192
rate_iops = 400
{controllers}
"#
    )
}

/// /app (memory.max 8M) reads a 16M file in a loop for `runtime`, beside a 4M heap it holds:
/// every read past the first pass charges at the limit and reclaims (a memstall of
/// try_charge_memcg()), so its memory pressure never lets up.
fn thrashing(kernel: &str, runtime: &str, controllers: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "{kernel}"
[[cgroup]]
path = "/app"
max = "8M"
[[workload]]
name = "heap"
cgroup = "/app"
kind = "anon-rw"
size = "2M"
distribution = "seq"
ops = 512
hold = true
[[workload]]
name = "loop"
cgroup = "/app"
kind = "file-read"
file_size = "16M"
distribution = "seq"
runtime = "{runtime}"
{controllers}
"#
    )
}

fn run(text: &str) -> Report {
    let s = pagelab::Scenario::parse(text, "controllers.toml", "controllers", &[]).unwrap_or_else(|e| panic!("{e}"));
    pagelab::run(&s, |_, _| {}).unwrap()
}

fn parse_err(text: &str) -> String {
    pagelab::Scenario::parse(text, "controllers.toml", "controllers", &[]).unwrap_err().to_string()
}

fn senpai(extra: &str) -> String {
    format!("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\n{extra}\n")
}

fn actions<'a>(r: &'a Report, action: &str) -> Vec<&'a ControllerActionReport> {
    r.controller_actions.iter().filter(|a| a.action == action).collect()
}

#[test]
fn senpai_reclaims_while_pressure_is_below_target() {
    let quiet = run(&cold_cache(""));
    assert!(quiet.controller_actions.is_empty());
    let r = run(&cold_cache(&senpai("interval = \"2s\"")));
    let probes = actions(&r, "memory.reclaim");
    assert_eq!(probes.len(), r.controller_actions.len(), "only probes without pressure: {:?}", r.controller_actions);
    // senpai.py's cadence: `interval` ticks of grace after the start and after each probe.
    let at: Vec<f64> = probes.iter().map(|a| a.at_s).collect();
    assert!(at.len() >= 5, "{at:?}");
    for (i, t) in at.iter().enumerate() {
        assert!((t - (3.0 + 2.0 * i as f64)).abs() < 1e-9, "probe {i} at {t} s: {at:?}");
    }
    for a in &probes {
        // No stall at all: the probe is max_probe, 1% of memory.current.
        assert!(a.note.starts_with("probe 0.0100"), "{a:?}");
        assert_eq!((a.controller.as_str(), a.cgroup.as_str(), a.result), ("senpai /app", "/app", "ok"), "{a:?}");
        assert!(a.value_bytes.unwrap() > 0 && a.reclaimed_bytes >= a.value_bytes.unwrap(), "{a:?}");
    }
    // The writer's reclaim is the cgroup's direct reclaim, and the cache it left is smaller.
    let reclaimed: u64 = probes.iter().map(|a| a.reclaimed_bytes).sum();
    assert_eq!(r.memcg["/app"]["pgsteal_direct"] * 4096, reclaimed);
    assert!(r.memcg["/app"]["memory.current"] + reclaimed / 2 < quiet.memcg["/app"]["memory.current"]);
    assert_eq!(r.memory_pressure["/app"].some.total_us, 0);
}

#[test]
fn senpai_backs_off_when_pressure_exceeds_target() {
    for kernel in ["6.1", "6.12"] {
        // Reclaim mode: above the target nothing is reclaimed; the back-off is reported.
        let r = run(&thrashing(kernel, "12s", &senpai("pressure = \"1ms\"")));
        assert!(r.memory_pressure["/app"].some.total_us > 1_000, "{kernel}: {:?}", r.memory_pressure["/app"]);
        let holds = actions(&r, "hold");
        assert!(holds.len() >= 8, "{kernel}: a back-off every tick: {:?}", r.controller_actions);
        assert!(actions(&r, "memory.reclaim").is_empty(), "{kernel}: {:?}", r.controller_actions);
        assert!(holds.iter().all(|a| a.note.starts_with("backoff")), "{kernel}: {holds:?}");
        // The same pressure under a target it does not reach: it probes.
        let r = run(&thrashing(kernel, "12s", &senpai("pressure = \"1000s\"")));
        assert!(!actions(&r, "memory.reclaim").is_empty() && actions(&r, "hold").is_empty(), "{kernel}: {:?}", r.controller_actions);
        // Mode high (senpai.py's): each back-off raises memory.high.
        let r = run(&thrashing(kernel, "12s", &senpai("pressure = \"1ms\"\nmode = \"high\"")));
        let highs: Vec<u64> = actions(&r, "memory.high").iter().map(|a| a.value_bytes.unwrap()).collect();
        assert!(highs.len() >= 8, "{kernel}: {:?}", r.controller_actions);
        assert!(highs.windows(2).all(|w| w[1] >= w[0]) && highs.last() > highs.first(), "{kernel}: {highs:?}");
    }
}

#[test]
fn oomd_kills_after_sustained_pressure() {
    let oomd = |limit: &str| format!("[[controller]]\nkind = \"oomd\"\ncgroup = \"/app\"\nlimit = \"{limit}\"\nduration = \"5s\"\n");
    let r = run(&thrashing("6.1", "40s", &oomd("1%")));
    let kills = actions(&r, "kill");
    assert_eq!(kills.len(), 1, "{:?}", r.controller_actions);
    let k = kills[0];
    // full avg10 needs a few 2 s periods to rise past the limit, then 5 s more.
    assert!(k.at_s >= 6.0 && k.at_s < 40.0, "{k:?}");
    assert_eq!((k.controller.as_str(), k.killed_tasks), ("oomd /app", 2), "{k:?}");
    assert!(k.freed_bytes >= 2 << 20, "the heap's exit freed it: {k:?}");
    // The loop stopped at the kill, long before its 40 s.
    let lp = r.tasks.iter().find(|t| t.name == "loop").unwrap();
    assert!(lp.oom_killed && lp.elapsed_s < k.at_s + 1.0, "{lp:?}");
    assert_eq!(r.memcg["/app"]["memory.events.oom_kill"], 0, "a userspace kill is not the kernel's OOM kill");
    // Determinism: the same actions again.
    assert_eq!(run(&thrashing("6.1", "40s", &oomd("1%"))).controller_actions, r.controller_actions);
    // Under a limit never reached, nobody is killed.
    let calm = run(&thrashing("6.1", "20s", &oomd("100%")));
    assert!(calm.controller_actions.is_empty() && !calm.tasks.iter().any(|t| t.oom_killed), "{:?}", calm.controller_actions);
}

#[test]
fn controller_defaults_follow_senpai_and_systemd_oomd() {
    let text = cold_cache("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\n[[controller]]\nkind = \"oomd\"\ncgroup = \"/app\"\n");
    let s = pagelab::Scenario::parse(&text, "c.toml", "c", &[]).unwrap();
    let ControllerSpec::Senpai(sp) = &s.controllers[0] else { panic!("{:?}", s.controllers) };
    // senpai.py's argparse defaults and its one-second loop; TMO's memory.reclaim mode.
    assert_eq!((sp.mode, sp.tick_ns, sp.interval_ticks, sp.pressure_us), (SenpaiMode::Reclaim, 1_000_000_000, 6, 10_000));
    assert_eq!((sp.max_probe, sp.max_backoff, sp.coeff_probe, sp.coeff_backoff), (0.01, 1.0, 10.0, 20.0));
    assert_eq!((sp.min_size, sp.max_size, sp.swappiness), (100 << 20, 100 << 30, None));
    // systemd's oomd-manager.h and oomd.conf(5): a 1 s poll, full avg10 above 60% for 30 s.
    assert_eq!(
        s.controllers[1],
        ControllerSpec::Oomd(OomdSpec { cgroup: "/app".into(), interval_ns: 1_000_000_000, limit_pct_x100: 6000, duration_ns: 30_000_000_000 })
    );
}

#[test]
fn controller_keys_are_checked_naming_file_and_key() {
    let cases = [
        ("[[controller]]\ncgroup = \"/app\"\n", "controller[0].kind`: missing"),
        ("[[controller]]\nkind = \"tmo\"\ncgroup = \"/app\"\n", "controller[0].kind`: `tmo`"),
        ("[[controller]]\nkind = \"senpai\"\n", "controller[0].cgroup`: missing"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/db\"\n", "no [[cgroup]] has this path"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\nlimit = \"60%\"\n", "controller[0].limit`: is a key of kind = \"oomd\""),
        ("[[controller]]\nkind = \"oomd\"\ncgroup = \"/app\"\nmax_probe = 0.1\n", "controller[0].max_probe`: is a key of kind = \"senpai\""),
        ("[[controller]]\nkind = \"oomd\"\ncgroup = \"/app\"\nlimit = \"160%\"\n", "controller[0].limit`: `160%`"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\nmax_probe = 2.0\n", "controller[0].max_probe`: 2"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\nswappiness = 10\n", "kernel 6.1's memory.reclaim takes a byte count only"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\nmin_size = \"1G\"\n", "goes with mode = \"high\""),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\ntick = \"10s\"\ninterval = \"2s\"\n", "controller[0].interval`"),
        ("[[controller]]\nkind = \"senpai\"\ncgroup = \"/app\"\nprobe = 0.01\n", "controller[0].probe"),
    ];
    for (table, want) in cases {
        let e = parse_err(&cold_cache(table));
        assert!(e.starts_with("controllers.toml:") && e.contains(want), "{table}: {e}");
    }
}

#[test]
fn controller_actions_past_the_cap_are_counted_not_kept() {
    // A memory.high write every modeled millisecond for 20 s: the report keeps the first
    // MAX_CONTROL_RECORDS and counts the rest, so a run's memory does not grow with time.
    let r = run(&cold_cache(&senpai("mode = \"high\"\ntick = \"1ms\"\ninterval = \"1ms\"")));
    assert_eq!(r.controller_actions.len(), pagelab::sim::MAX_CONTROL_RECORDS);
    let ticks = (r.elapsed_s * 1000.0) as u64;
    // The first tick spends the grace; every later one writes.
    assert!(r.controller_actions_left_out + pagelab::sim::MAX_CONTROL_RECORDS as u64 + 2 >= ticks, "{} of {ticks}", r.controller_actions_left_out);
    assert!(r.controller_actions_left_out > 10_000, "{}", r.controller_actions_left_out);
    assert!(r.table().contains("more actions, not kept"));
}
