//! Asynchronous reads with a queue depth (a workload's `iodepth`, fio's with io_uring or
//! libaio): up to `iodepth` reads in flight on the device's hardware queues.

use super::common;
use pagelab::report::Report;

fn run(text: &str) -> Report {
    pagelab::run(&common::scenario(text), |_, _| {}).unwrap()
}

/// One task reading a 64 MiB file at random from an SSD of `tags` queue slots (80 µs a
/// read, 2 µs a page's transfer), with room to spare: nearly every read misses.
fn reader(iodepth: u32, tags: u32) -> String {
    format!(
        r#"
[machine]
memory = "512M"
kernel = "6.1"
policy = "classic"
storage = "ssd"

[time.storage]
read_latency_ns = 80000
write_latency_ns = 30000
page_transfer_ns = 2000
queue_depth = {tags}

[[workload]]
name = "fio"
cgroup = "/"
kind = "file-read"
file_size = "64M"
distribution = "uniform"
fadvise = "random"
ops = 2000
seed = 7
iodepth = {iodepth}
"#
    )
}

/// io_uring's buffered reads with IOCB_WAITQ (6.1, 6.12): a task with iodepth N keeps up to
/// N reads in flight and waits only for the earliest when N are; at iodepth 1 each read
/// waits for its own IO.
#[test]
fn at_iodepth_1_a_tasks_reads_serialize_and_at_iodepth_8_they_overlap_on_the_devices_queues() {
    let one = run(&reader(1, 8));
    let eight = run(&reader(8, 8));
    let misses = one.vmstat["pgpgin"] / 4;
    assert!(misses > 1500, "{misses}");
    // Serialized: every miss waits its latency and its transfer, one after another.
    let serial = misses as f64 * 82e-6;
    assert!((one.tasks[0].io_wait_s - serial).abs() < 1e-6, "{} vs {serial}", one.tasks[0].io_wait_s);
    // Overlapped: eight at once on eight tags, so the task waits about an eighth as long.
    assert_eq!(eight.vmstat["pgpgin"], one.vmstat["pgpgin"], "the same reads");
    let (w1, w8) = (one.tasks[0].io_wait_s, eight.tasks[0].io_wait_s);
    assert!(w8 < w1 / 5.0, "iodepth 8's IO wait {w8} against iodepth 1's {w1}");
    assert!(eight.elapsed_s < one.elapsed_s / 4.0, "{} vs {}", eight.elapsed_s, one.elapsed_s);
    let q = &eight.devices.as_ref().expect("a queue depth reports the devices")["storage"];
    assert_eq!(q.waited, 0, "never more than eight in flight: {q:?}");
    // Deeper than the device: the reads beyond its four tags wait for one.
    let four_tags = run(&reader(8, 4));
    assert!(four_tags.devices.as_ref().unwrap()["storage"].waited > 0);
    assert!(four_tags.tasks[0].io_wait_s > w8);
}

#[test]
fn iodepth_is_refused_out_of_range_and_for_workloads_that_read_no_file() {
    let err = |text: &str| pagelab::Scenario::parse(text, "t.toml", "t", &[]).unwrap_err().to_string();
    assert!(err(&reader(0, 8)).contains("iodepth"), "{}", err(&reader(0, 8)));
    let anon = reader(4, 8).replace("kind = \"file-read\"", "kind = \"anon-read\"").replace("fadvise = \"random\"\n", "");
    assert!(err(&anon).contains("applies to buffered file reads"), "{}", err(&anon));
}
