//! NUMA nodes (`[[machine.node]]`, `struct pglist_data`): the node table's schema, and a
//! machine of one node being exactly the machine without a node table. A node holds its zones,
//! its reclaim state and its kswapd (`pagelab::mm::mmzone::Node`); each memcg has one lruvec
//! per node (mem_cgroup_lruvec(memcg, pgdat), 6.1 and 6.12).

use pagelab::kernel::Kernel;
use pagelab::mm::memcontrol::{Memcgs, RstatMode};
use pagelab::report::Report;
use pagelab::Scenario;

fn run(text: &str) -> Report {
    pagelab::run(&super::common::scenario(text), |_, _| {}).unwrap()
}

/// Two tasks reading a file at random in a cgroup of a quarter of it, and one reading a file
/// larger than the machine, on 4 CPUs: kswapd, direct and memcg reclaim all run. `nodes` goes
/// at the end of `[machine]`.
fn readers(policy: &str, nodes: &str) -> String {
    format!(
        r#"
[machine]
memory = "128M"
kernel = "6.1"
policy = "{policy}"
storage = "ssd"
cpus = 4
{nodes}

[[cgroup]]
path = "/a"
max = "32M"

[[workload]]
name = "r"
cgroup = "/a"
jobs = 2
kind = "file-read"
file_size = "128M"
distribution = "uniform"
ops = 20000
seed = 3

[[workload]]
name = "g"
cgroup = "/"
kind = "file-read"
file_size = "256M"
distribution = "uniform"
ops = 60000
seed = 4
"#
    )
}

/// What the run decided and how long it took: every /proc/vmstat and memory.stat counter,
/// the elapsed time and each task's times.
fn outcome(r: &Report) -> String {
    format!("{:?}\n{:?}\n{}\n{:?}", r.vmstat, r.memcg, r.elapsed_s, r.tasks)
}

fn error(text: &str) -> pagelab::sim::scenario::ScenarioError {
    Scenario::parse(text, "numa.toml", "numa", &[]).expect_err("the node table must be refused")
}

#[test]
fn a_one_node_table_is_the_machine_without_a_node_table() {
    for policy in ["classic", "mglru"] {
        let without = run(&readers(policy, ""));
        assert!(without.vmstat["pgscan_kswapd"] + without.vmstat["pgscan_direct"] > 0, "{policy}: the run must reclaim: {:?}", without.vmstat);
        for table in
            ["[[machine.node]]\nmemory = \"128M\"", "[[machine.node]]\nmemory = \"128M\"\ncpus = \"0-3\"", "[[machine.node]]\nmemory = \"128M\"\ncpus = 4"]
        {
            let with = run(&readers(policy, table));
            assert_eq!(outcome(&with), outcome(&without), "{policy}, {table}");
        }
    }
}

#[test]
fn a_node_table_is_validated_key_by_key() {
    let node = |table: &str| readers("classic", table);
    // The nodes' memory adds up to machine.memory.
    let e = error(&node("[[machine.node]]\nmemory = \"64M\""));
    assert_eq!(e.key, "machine.node", "{e}");
    assert!(e.message.contains("adds up to 64M") && e.message.contains("128M"), "{e}");
    let e = error(&node("[[machine.node]]\ncpus = 4"));
    assert_eq!(e.key, "machine.node[0].memory", "{e}");
    assert!(e.message.contains("missing"), "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"lots\""));
    assert_eq!(e.key, "machine.node[0].memory", "{e}");
    // Unknown keys are refused by name, at their line.
    let e = error(&node("[[machine.node]]\nmemory = \"128M\"\ndistance = 10"));
    assert!(e.to_string().contains("distance"), "{e}");
    assert!(e.line.is_some(), "{e}");
    // CPUs: of the machine, each on one node, every one on a node.
    let e = error(&node("[[machine.node]]\nmemory = \"128M\"\ncpus = \"0-4\""));
    assert_eq!(e.key, "machine.node[0].cpus", "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"128M\"\ncpus = 5"));
    assert_eq!(e.key, "machine.node[0].cpus", "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"128M\"\ncpus = \"0-2\""));
    assert_eq!(e.key, "machine.node", "{e}");
    assert!(e.message.contains("CPU 3"), "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"64M\"\ncpus = \"0-2\"\n[[machine.node]]\nmemory = \"64M\"\ncpus = \"2-3\""));
    assert_eq!(e.key, "machine.node[1].cpus", "{e}");
    assert!(e.message.contains("CPU 2 is node 0's"), "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"64M\"\ncpus = 2\n[[machine.node]]\nmemory = \"64M\""));
    assert_eq!(e.key, "machine.node[1].cpus", "{e}");
    assert!(e.message.contains("missing"), "{e}");
    let e = error(&readers("classic", "[[machine.node]]\nmemory = \"128M\"\ncpus = 4").replace("cpus = 4\n[[", "[["));
    assert_eq!(e.key, "machine.node[0].cpus", "{e}");
    assert!(e.message.contains("needs machine.cpus"), "{e}");
    // Two valid nodes: refused by name while only one node is modeled, never run as one.
    let e = error(&node("[[machine.node]]\nmemory = \"64M\"\ncpus = 2\n[[machine.node]]\nmemory = \"64M\"\ncpus = 2"));
    assert_eq!(e.key, "machine.node", "{e}");
    assert!(e.message.contains("2 nodes"), "{e}");
}

#[test]
fn a_count_of_cpus_takes_the_cpus_after_the_nodes_before() {
    // With the second node's count running past the machine's CPUs, the error names it: the
    // first node's 3 CPUs leave 1.
    let e = error(&readers("classic", "[[machine.node]]\nmemory = \"64M\"\ncpus = 3\n[[machine.node]]\nmemory = \"64M\"\ncpus = 2"));
    assert_eq!(e.key, "machine.node[1].cpus", "{e}");
    assert!(e.message.contains("from CPU 3"), "{e}");
}

#[test]
fn mem_cgroup_lruvec_gives_each_memcg_one_lruvec_per_node() {
    // 6.1/6.12 mem_cgroup_alloc() allocates a lruvec per node; mem_cgroup_lruvec(memcg,
    // pgdat) picks the node's.
    let mut memcgs = Memcgs::new(Kernel::V6_1, &[], RstatMode::Kernel).unwrap();
    memcgs.set_nodes(3);
    let root = memcgs.get_mut(0);
    root.lruvec_of_mut(2).lru_size[1] = 7;
    root.lruvec_of_mut(0).lru_size[1] = 5;
    let root = memcgs.get(0);
    assert_eq!([0, 1, 2].map(|n| root.lruvec_of(n).lru_size[1]), [5, 0, 7]);
    assert_eq!(root.lruvec.lru_size[1], 5, "node 0's lruvec is the memcg's inline one");
}
