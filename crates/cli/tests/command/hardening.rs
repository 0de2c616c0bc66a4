//! Issue 40, "Trustworthy under any input": outputs never overwrite inputs and are written
//! whole or not at all, standard output's errors are reported, flags that do not apply and
//! conflicting ones are refused, and command-line sizes are bounded.

use crate::pagelab;

use std::path::PathBuf;

fn write(name: &str, text: &str) -> PathBuf {
    crate::scratch_file("hardening-test", name, text)
}

use crate::SMALL_SCENARIO as SCENARIO;

/// A text trace of 100 page reads.
fn text_trace(name: &str) -> PathBuf {
    write(name, &(0..100).map(|i| format!("R {}\n", i % 37)).collect::<String>())
}

/// Runs pagelab; asserts it exits 1 with `needle` in its message.
fn refused(args: &[&std::ffi::OsStr], needle: &str) {
    let out = pagelab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

fn os<const N: usize>(a: [&str; N]) -> Vec<&std::ffi::OsStr> {
    a.into_iter().map(std::ffi::OsStr::new).collect()
}

/// Issue 40 item 3: `trace-convert IN IN` truncated IN to 32 bytes and exited 0; `run --trace
/// T --json T` emptied the trace. Any output that is an input (or another output), also
/// through a symlink, is refused and the input is left as it was.
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let t = text_trace("same.txt");
    let before = std::fs::read(&t).unwrap();
    let link = crate::scratch_dir("hardening-test").join("same-link.txt");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&t, &link).unwrap();
    let ts = t.to_str().unwrap();
    let ls = link.to_str().unwrap();
    refused(&os(["trace-convert", ts, ts]), "is the same file as the input");
    refused(&os(["trace-convert", ts, ls]), "is the same file as the input");
    for flag in ["--json", "--parquet"] {
        refused(&os(["run", "--trace", ts, "--trace-format", "text", "--memory", "1M", flag, ts]), "is the same file as the trace");
        refused(&os(["run", "--trace", ts, "--trace-format", "text", "--memory", "1M", flag, ls]), "is the same file as the trace");
    }
    refused(&os(["trace-stats", ts, "--trace-format", "text", "--json", ls]), "is the same file as the trace");
    assert_eq!(std::fs::read(&t).unwrap(), before, "the trace is untouched");
    let s = write("same.toml", SCENARIO);
    let ss = s.to_str().unwrap();
    refused(&os(["run", ss, "--json", ss]), "is the same file as the scenario");
    refused(&os(["sweep", ss, "--vary", "machine.memory=16M,32M", "--csv", ss]), "is the same file as the scenario");
    assert_eq!(std::fs::read_to_string(&s).unwrap(), SCENARIO);
    // Two outputs to one file (issue 40 item 10: `--json X --parquet X` wrote one over the other).
    let x = crate::scratch_dir("hardening-test").join("x.out");
    refused(&os(["run", ss, "--json", x.to_str().unwrap(), "--parquet", x.to_str().unwrap()]), "is the same file as --json");
}

/// `--json /dev/null` renamed its temporary file over /dev/null, leaving a regular file
/// that later readers of /dev/null read (cargo's rustc probe among them). An output that
/// exists and is not a regular file is written in place; a FIFO stands for the device here.
#[test]
fn an_output_that_is_a_fifo_or_a_device_is_written_in_place_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = crate::scratch_dir("hardening-test");
    let fifo = dir.join("out.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let s = write("fifo.toml", SCENARIO);
    let out = pagelab().args(["run", "-q"]).arg(&s).arg("--json").arg(&fifo).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Checked before joining: had the FIFO been replaced, its reader would wait forever.
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
    let json = reader.join().unwrap();
    assert!(json.trim_start().starts_with('{') && json.contains("\"vmstat\""), "the report went through the FIFO: {json:.80}");
}

/// Issue 40 item 10: a failed run left a 0-byte output (`--parquet` with a plain cache, a
/// failed sweep's CSV). Outputs are written whole at the end or not at all, and a file that
/// was there is left as it was.
#[test]
fn a_failed_run_leaves_no_output_and_keeps_an_old_one() {
    let dir = crate::scratch_dir("hardening-test").join("failed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let t = text_trace("failed.txt");
    let pq = dir.join("series.parquet");
    let args =
        [os(["run", "--trace"]), vec![t.as_os_str()], os(["--trace-format", "text", "--memory", "1M", "--policy", "lru", "--parquet"]), vec![pq.as_os_str()]];
    refused(&args.concat(), "only the kernel models");
    assert!(!pq.exists(), "no 0-byte Parquet file");
    let bad = write("failed.toml", &SCENARIO.replace("ops = 2000", "ops = \"many\""));
    let csv = dir.join("sweep.csv");
    refused(&[os(["sweep"]), vec![bad.as_os_str()], os(["--vary", "machine.memory=16M,32M", "--csv"]), vec![csv.as_os_str()]].concat(), "ops");
    assert!(!csv.exists(), "no empty CSV");
    let old = dir.join("old.json");
    std::fs::write(&old, "{\"kept\": true}\n").unwrap();
    refused(&[os(["run"]), vec![bad.as_os_str()], os(["--json"]), vec![old.as_os_str()]].concat(), "ops");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "{\"kept\": true}\n");
    // A run that succeeds replaces it; no temporary file is left beside it.
    let good = write("good.toml", SCENARIO);
    let out = pagelab().arg("run").arg(&good).arg("--json").arg(&old).arg("-q").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&old).unwrap()).unwrap();
    assert!(v["vmstat"].is_object());
    let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["old.json"], "only the output is left");
}

/// Issue 40 item 9: `pagelab run S > /dev/full` panicked (exit 101). Now: a message and exit 1.
#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let s = write("full.toml", SCENARIO);
    for args in [vec!["run", s.to_str().unwrap()], vec!["run", s.to_str().unwrap(), "--json", "-"], vec!["policies"]] {
        let out = pagelab().args(&args).stdout(std::fs::File::create("/dev/full").unwrap()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write to standard output: No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Issue 40 item 10: a closed pipe ends the command quietly (the in-process command line, as
/// the Python wheel runs it, sees EPIPE rather than SIGPIPE).
#[test]
fn a_closed_pipe_ends_quietly() {
    let s = write("pipe.toml", SCENARIO);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("\"$0\" run \"$1\" --json - | head -c 1 >/dev/null")
        .arg(env!("CARGO_BIN_EXE_pagelab"))
        .arg(&s)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
}

/// Issue 40 item 10: flags that do not apply were ignored, and a shorthand and a `--set` of
/// the same key resolved silently.
#[test]
fn flags_that_do_not_apply_or_conflict_are_refused() {
    let s = write("flags.toml", SCENARIO);
    let ss = s.to_str().unwrap();
    let t = text_trace("flags.txt");
    let ts = t.to_str().unwrap();
    refused(&os(["run", ss, "--trace-format", "text"]), "--trace-format text: it applies to --trace, not to a scenario");
    refused(&os(["curve", ss, "--vary", "machine.memory=16M,32M", "--trace-format", "text"]), "--vary runs a scenario, which has no trace format");
    refused(&os(["curve", ts, "--trace-format", "text", "--memory", "64K,128K", "--threads", "2"]), "--threads 2: it sets how many of a scenario's runs");
    refused(
        &os(["run", "--trace", ts, "--trace-format", "text", "--memory", "1M", "--policy", "lru", "--kernel", "6.12"]),
        "`lru` is a plain cache, which models no kernel",
    );
    refused(&os(["curve", ts, "--trace-format", "text", "--memory", "64K,128K", "--policy", "lru", "--kernel", "6.12"]), "`lru` is a plain cache");
    refused(
        &os(["run", ss, "--policy", "mglru", "--set", "machine.policy=\"classic\""]),
        "--policy mglru and --set machine.policy=\"classic\" both set machine.policy",
    );
    refused(&os(["run", ss, "--memory", "16M", "--set", "machine.memory=\"32M\""]), "both set machine.memory");
    refused(&os(["curve", ss, "--vary", "machine.memory=16M,32M", "--kernel", "6.12", "--set", "machine.kernel=\"6.1\""]), "both set machine.kernel");
}

/// Issue 40 item 10: `sweep --csv -` wrote a file named `-`; it is standard output, as
/// elsewhere (and the table is left out so the CSV stays parseable).
#[test]
fn sweep_csv_dash_is_standard_output() {
    let s = write("csvdash.toml", SCENARIO);
    let dir = crate::scratch_dir("hardening-test").join("csvdash");
    std::fs::create_dir_all(&dir).unwrap();
    let out = pagelab().current_dir(&dir).arg("sweep").arg(&s).args(["--vary", "machine.memory=16M,32M", "--csv", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("machine.memory,elapsed_s,ops,"), "{text}");
    assert!(lines[1].starts_with("16M,") && lines[2].starts_with("32M,"), "{text}");
    assert!(!dir.join("-").exists(), "no file named -");
}

/// Issue 40 item 8: `--memory 1%..20%:4294967296` allocated 32 GiB and aborted, a 10^6-point
/// sweep grew to 3.6 GB, `sweep --threads 100000` panicked. Each is refused with its limit.
#[test]
fn command_line_sizes_are_bounded() {
    let t = crate::scratch_dir("hardening-test").join("sizes.og");
    let records = (0..1000u64).map(|i| pagelab_trace::Record { time: i as u32, obj_id: i, obj_size: 4096, next_access_vtime: -1 });
    pagelab_trace::write_oracle(&t, records, None).unwrap();
    refused(&os(["curve", t.to_str().unwrap(), "--memory", "1%..20%:4294967296"]), "4294967296 points are more than a curve's limit of 10000");
    let s = write("sizes.toml", SCENARIO);
    let ss = s.to_str().unwrap();
    let thousand = format!("machine.swappiness={}", (0..1000).map(|i| (i % 200).to_string()).collect::<Vec<_>>().join(","));
    refused(&os(["sweep", ss, "--vary", &thousand, "--vary", &thousand]), "1000 x 1000 points are more than a sweep's limit of 10000");
    refused(&os(["sweep", ss, "--vary", "machine.memory=16M", "--threads", "100000"]), "--threads 100000: at most 1024");
}

/// Issue 40 item 11: `pagelab seeds` worked only from the repository root, and `curve
/// SCENARIO --memory ...` (no --vary) talked about trace formats.
#[test]
fn seeds_run_from_anywhere_and_a_scenario_curve_asks_for_vary() {
    let dir = crate::scratch_dir("hardening-test");
    let out = pagelab().current_dir(&dir).args(["seeds", "--only", "nosuch"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("examples/seeds/experiments.toml: no experiment `nosuch`"), "the bundled manifest is found: {err}");
    let custom = dir.join("myseeds");
    std::fs::create_dir_all(&custom).unwrap();
    std::fs::write(custom.join("experiments.toml"), "[[experiment]]\nid = 1\n").unwrap();
    let out = pagelab().current_dir(&dir).env("PAGELAB_SEEDS", &custom).args(["seeds"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("myseeds/experiments.toml"), "PAGELAB_SEEDS is read: {err}");
    let s = write("curve.toml", SCENARIO);
    refused(&os(["curve", s.to_str().unwrap(), "--memory", "1M,2M"]), "this is a scenario, not a trace: a scenario's curve takes --vary KEY=SIZES");
}

/// A path with terminal escapes, quoted in an error message, is printed with its control
/// characters escaped: the message cannot recolor or clear the user's terminal.
#[test]
fn control_characters_in_an_error_message_are_escaped() {
    let out = pagelab().args(["run", "no-such-\u{1b}[2J-file.toml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("no-such-\\u{1b}[2J-file.toml"), "{err:?}");
}

/// Issue 40: a run that touches more page frames than the host can hold ended in Rust's
/// allocation-failure abort (exit 134, "memory allocation of N bytes failed"). Under a 200 MB
/// `ulimit -v`, writing 24G of a 64G machine's memory (6 Mi frames, 20 bytes each in the
/// frame table) must end with an error naming the scenario and the cause.
#[test]
#[cfg(target_os = "linux")]
fn more_frames_than_the_host_holds_is_an_error_not_an_abort() {
    let s = write(
        "host-too-small.toml",
        "[machine]\nmemory = \"64G\"\n[[workload]]\nname = \"big\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"24G\"\ndistribution = \"sequential\"\nops = 6000000\n",
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 200000 && exec \"$0\" run -q \"$1\"")
        .arg(env!("CARGO_BIN_EXE_pagelab"))
        .arg(&s)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("scenario host-too-small: the run touches more page frames than this host can hold: the frame table"), "{err}");
}
