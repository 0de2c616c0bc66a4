//! NUMA nodes (`[[machine.node]]`, `struct pglist_data`): the node table's schema, and a
//! machine of one node being exactly the machine without a node table. A node holds its zones,
//! its reclaim state and its kswapd (`pagelab::mm::mmzone::Node`); each memcg has one lruvec
//! per node (mem_cgroup_lruvec(memcg, pgdat), 6.1 and 6.12).

use pagelab::kernel::Kernel;
use pagelab::mm::memcontrol::{Memcgs, RstatMode};
use pagelab::report::{NodeReport, Report};
use pagelab::sched::CpuSet;
use pagelab::sim::scenario::NodeSpec;
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
            assert!(with.nodes.is_none(), "{policy}, {table}: one node reports no `nodes`");
        }
        // Without the CPU model (node 0's kswapd on a CPU of its own): the same.
        let own = |t: &str| run(&readers(policy, t).replace("cpus = 4\n", ""));
        let without = own("");
        assert!(without.vmstat["pgsteal_kswapd"] > 0, "{policy}: kswapd must reclaim: {:?}", without.vmstat);
        assert_eq!(outcome(&own("[[machine.node]]\nmemory = \"128M\"")), outcome(&without), "{policy}, no machine.cpus");
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
    // Two nodes: their memory adds up to machine.memory, their CPUs lie within machine.cpus.
    let e = error(&node("[[machine.node]]\nmemory = \"64M\"\ncpus = 2\n[[machine.node]]\nmemory = \"32M\"\ncpus = 2"));
    assert_eq!(e.key, "machine.node", "{e}");
    assert!(e.message.contains("adds up to 96M") && e.message.contains("128M"), "{e}");
    let e = error(&node("[[machine.node]]\nmemory = \"64M\"\ncpus = \"0-1\"\n[[machine.node]]\nmemory = \"64M\"\ncpus = \"2-4\""));
    assert_eq!(e.key, "machine.node[1].cpus", "{e}");
    assert!(e.message.contains("CPU 4 does not exist"), "{e}");
    // Two valid nodes run under either LRU, whose lists and kswapd are per node.
    let two = "[[machine.node]]\nmemory = \"64M\"\ncpus = 2\n[[machine.node]]\nmemory = \"64M\"\ncpus = 2";
    for policy in ["classic", "mglru"] {
        let s = Scenario::parse(&readers(policy, two), "numa.toml", "numa", &[]).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_eq!(s.machine.nodes.len(), 2, "{policy}");
    }
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

/// One task on `cpus` of a 4-CPU machine reading `file` pages of a file, sequentially, twice
/// over, on nodes of `node_mib` MiB each whose CPUs are split evenly (nodes are set on the
/// validated scenario: the tests below were written while the schema refused two nodes, and
/// keep building them this way).
fn numa_run(policy: &str, node_mib: &[u64], cpus: &str, file: &str) -> Report {
    let total: u64 = node_mib.iter().sum();
    let text = format!(
        r#"
[machine]
memory = "{total}M"
kernel = "6.1"
policy = "{policy}"
storage = "ssd"
cpus = 4

[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "{file}"
distribution = "uniform"
cpus = "{cpus}"
ops = 100000
seed = 5
"#
    );
    let mut s = super::common::scenario(&text);
    let per = 4 / node_mib.len() as u32;
    s.machine.nodes = node_mib
        .iter()
        .enumerate()
        .map(|(i, &mib)| {
            let first = i as u32 * per;
            let last = if i + 1 == node_mib.len() { 3 } else { first + per - 1 };
            NodeSpec { memory_pages: mib * 256, cpus: Some(CpuSet::parse(&format!("{first}-{last}"), 4).unwrap()) }
        })
        .collect();
    pagelab::run(&s, |_, _| {}).unwrap()
}

fn pgalloc(r: &Report) -> u64 {
    ["pgalloc_dma", "pgalloc_dma32", "pgalloc_normal"].iter().map(|k| r.vmstat[*k]).sum()
}

/// Every page allocated is counted once as a hit or a miss on the node that gave it, and once
/// as local or other (zone_statistics()).
fn check_counts_add_up(r: &Report, nodes: &[NodeReport]) {
    let hits: u64 = nodes.iter().map(|n| n.numa_hit + n.numa_miss).sum();
    let local: u64 = nodes.iter().map(|n| n.numa_local + n.numa_other).sum();
    assert_eq!(hits, pgalloc(r), "{nodes:?}");
    assert_eq!(local, pgalloc(r), "{nodes:?}");
    let foreign: u64 = nodes.iter().map(|n| n.numa_foreign).sum();
    assert_eq!(foreign, nodes.iter().map(|n| n.numa_miss).sum::<u64>(), "each miss is a foreign allocation of its preferred node");
}

#[test]
fn allocation_prefers_the_local_node_get_page_from_freelist_6_1_6_12() {
    // A task on node 1's CPUs reading a file that fits in node 1: every page is node 1's.
    for policy in ["classic", "mglru"] {
        let r = numa_run(policy, &[128, 128], "2-3", "32M");
        let nodes = r.nodes.clone().expect("two nodes report `nodes`");
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[0].zones.clone(), nodes[1].zones.clone()), (vec!["DMA", "DMA32"], vec!["Normal"]), "node 1 has ZONE_NORMAL alone");
        assert_eq!(nodes[1].managed, 128 * 256);
        assert!(nodes[1].numa_hit >= 8000, "{policy}: {nodes:?}");
        assert_eq!(nodes[1].numa_hit, nodes[1].numa_local, "{policy}: the preferred node is the CPU's");
        assert_eq!((nodes[0].numa_hit, nodes[0].numa_miss, nodes[1].numa_foreign), (0, 0, 0), "{policy}: node 0 gave nothing: {nodes:?}");
        check_counts_add_up(&r, &nodes);
        // The same task on node 0's CPUs takes node 0's pages.
        let r = numa_run(policy, &[128, 128], "0-1", "32M");
        let nodes = r.nodes.clone().unwrap();
        assert!(nodes[0].numa_hit >= 8000 && nodes[1].numa_hit == 0, "{policy}: {nodes:?}");
        check_counts_add_up(&r, &nodes);
    }
}

#[test]
fn allocation_falls_back_through_the_zonelist_when_the_local_node_is_full_zone_statistics_6_1_6_12() {
    // Node 1 (64M) cannot hold the 96M file: past its low watermark, its allocations fall
    // back to node 0, counted numa_miss (and numa_other) on node 0, numa_foreign on node 1.
    let r = numa_run("classic", &[128, 64], "2-3", "96M");
    let nodes = r.nodes.clone().unwrap();
    assert!(nodes[1].numa_hit > 14_000, "{nodes:?}");
    assert!(nodes[0].numa_miss > 5_000, "{nodes:?}");
    assert_eq!(nodes[1].numa_foreign, nodes[0].numa_miss, "{nodes:?}");
    assert_eq!(nodes[0].numa_other, nodes[0].numa_miss, "{nodes:?}");
    assert_eq!(nodes[0].numa_hit, 0, "{nodes:?}");
    check_counts_add_up(&r, &nodes);
    // build_zonelists(): node 1 of three falls back to node 2 before node 0 (the nodes above
    // the local one first); node 2 has room for the rest.
    let r = numa_run("classic", &[64, 64, 128], "1", "96M");
    let nodes = r.nodes.clone().unwrap();
    assert!(nodes[1].numa_hit > 14_000, "{nodes:?}");
    assert!(nodes[2].numa_miss > 5_000, "{nodes:?}");
    assert_eq!((nodes[0].numa_miss, nodes[0].numa_hit), (0, 0), "node 0 comes after node 2 in node 1's zonelist: {nodes:?}");
    check_counts_add_up(&r, &nodes);
}

#[test]
fn a_node_after_the_first_has_zone_normal_alone_and_watermarks_share_the_machines_min_free_kbytes() {
    use pagelab::mm::mmzone::{calculate_min_free_kbytes, node_zone_sizes, zone_sizes, ZoneLayout, Zones};
    let gib = 262_144;
    let nodes = node_zone_sizes(ZoneLayout::X86_64, &[gib, gib], 1000, 1.0);
    assert_eq!(nodes[0], zone_sizes(ZoneLayout::X86_64, gib, gib - 1000, 1.0), "node 0 is laid out as a machine of its size");
    assert_eq!(nodes[1], vec![("Normal", gib)]);
    // __setup_per_zone_wmarks() (6.1, 6.12): each zone's share of the machine's pages_min, by
    // its managed pages among every node's zones.
    let lowmem = 2 * gib - 1000;
    let n0 = Zones::of_node(Kernel::V6_1, &nodes[0], lowmem, None, 10, 0);
    let n1 = Zones::of_node(Kernel::V6_1, &nodes[1], lowmem, None, 10, 0);
    assert_eq!(n1.min_free_kbytes, calculate_min_free_kbytes(lowmem));
    assert_eq!(n1.z[0].wmark_min, n1.min_free_kbytes / 4 * gib / lowmem);
    let mins: u64 = n0.z.iter().chain(&n1.z).map(|z| z.wmark_min).sum();
    assert!(mins <= n1.min_free_kbytes / 4 && mins + 3 >= n1.min_free_kbytes / 4, "{mins}");
    // setup_per_zone_lowmem_reserve(): the node's own zones above; node 1's adds none to node 0's.
    assert_eq!(n0.z[0].lowmem_reserve, n0.z[1].managed / 256);
    assert_eq!(n1.z[0].lowmem_reserve, 0);
}

#[test]
fn what_is_modeled_on_one_node_only_is_refused_by_name_on_two() {
    let two = |extra: &str| {
        let mut s = super::common::scenario(&readers("classic", extra));
        let cpus = |t: &str| Some(CpuSet::parse(t, 4).unwrap());
        s.machine.nodes = vec![NodeSpec { memory_pages: 64 * 256, cpus: cpus("0-1") }, NodeSpec { memory_pages: 64 * 256, cpus: cpus("2-3") }];
        pagelab::run(&s, |_, _| {}).expect_err("refused").to_string()
    };
    let e = two("zone_watermarks = { DMA = { min = 34, low = 42, high = 50 } }");
    assert!(e.contains("machine.zone_watermarks") && e.contains("one node only") && e.contains("has 2"), "{e}");
    // The same scenario on one node runs.
    run(&readers("classic", "zone_watermarks = { DMA = { min = 34, low = 42, high = 50 } }"));
    // The eviction seam keeps its lists per memcg: refused on two nodes, by name.
    let mut s = super::common::scenario(&readers("classic", "").replace("max = \"32M\"", "max = \"32M\"\npolicy = \"random\""));
    let cpus = |t: &str| Some(CpuSet::parse(t, 4).unwrap());
    s.machine.nodes = vec![NodeSpec { memory_pages: 64 * 256, cpus: cpus("0-1") }, NodeSpec { memory_pages: 64 * 256, cpus: cpus("2-3") }];
    let e = pagelab::run(&s, |_, _| {}).expect_err("refused").to_string();
    assert!(e.contains("seam policy") && e.contains("one node only") && e.contains("has 2"), "{e}");
}

/// Two nodes of `node_mib` MiB with CPUs 0-1 and 2-3, and `body` (cgroups and workloads) on
/// them, under `policy` (nodes set on the validated scenario, as [`numa_run`]).
fn two_node_run(policy: &str, node_mib: [u64; 2], body: &str) -> Report {
    two_node_run_on("6.1", policy, node_mib, body)
}

/// [`two_node_run`] on `kernel`.
fn two_node_run_on(kernel: &str, policy: &str, node_mib: [u64; 2], body: &str) -> Report {
    let total: u64 = node_mib.iter().sum();
    let text = format!("[machine]\nmemory = \"{total}M\"\nkernel = \"{kernel}\"\npolicy = \"{policy}\"\nstorage = \"ssd\"\ncpus = 4\n{body}");
    let mut s = super::common::scenario(&text);
    let cpus = |t: &str| Some(CpuSet::parse(t, 4).unwrap());
    s.machine.nodes = vec![NodeSpec { memory_pages: node_mib[0] * 256, cpus: cpus("0-1") }, NodeSpec { memory_pages: node_mib[1] * 256, cpus: cpus("2-3") }];
    pagelab::run(&s, |_, _| {}).unwrap()
}

/// A file reader in `cgroup` on `cpus`.
fn reader(name: &str, cgroup: &str, cpus: &str, file: &str, ops: u64, seed: u64) -> String {
    format!(
        "\n[[workload]]\nname = \"{name}\"\ncgroup = \"{cgroup}\"\nkind = \"file-read\"\nfile_size = \"{file}\"\ndistribution = \"uniform\"\ncpus = \"{cpus}\"\nops = {ops}\nseed = {seed}\n"
    )
}

#[test]
fn a_folio_goes_on_the_lruvec_of_its_frames_node_folio_lruvec_6_1_6_12() {
    // A task on node 1's CPUs reads a file that fits in node 1: its pages are node 1's frames,
    // so they sit on the lruvecs of node 1 (folio_lruvec() = mem_cgroup_lruvec(memcg,
    // folio_pgdat())), and node 0's lruvecs stay empty.
    let r = two_node_run("classic", [128, 128], &reader("r", "/", "2-3", "32M", 30_000, 5));
    let nodes = r.nodes.clone().unwrap();
    let lru: u64 = ["nr_inactive_anon", "nr_active_anon", "nr_inactive_file", "nr_active_file", "nr_unevictable"].iter().map(|k| r.vmstat[*k]).sum();
    assert!(lru >= 7000, "{lru}");
    assert_eq!((nodes[0].lru_pages, nodes[1].lru_pages), (0, lru), "{nodes:?}");
    // The same task on node 0's CPUs: node 0's lruvecs.
    let r = two_node_run("classic", [128, 128], &reader("r", "/", "0-1", "32M", 30_000, 5));
    let nodes = r.nodes.clone().unwrap();
    assert!(nodes[0].lru_pages >= 7000 && nodes[1].lru_pages == 0, "{nodes:?}");
}

#[test]
fn the_reports_lru_lock_class_counts_every_nodes_lruvec_locks() {
    // A task on node 1's CPUs in a cgroup smaller than its file: its pages are node 1's, and
    // its cgroup's reclaim isolates and puts back under node 1's lruvec locks. Every hold of
    // an lru_lock is booked to the profile's LRU moves, so the report's `lru_lock` class
    // holds exactly that CPU time when it sums every lruvec's lock on every node (it once
    // summed node 0's lruvecs only, and missed node 1's reclaim).
    let body = format!("\n[report]\nprofile = true\n[[cgroup]]\npath = \"/a\"\nmax = \"8M\"\n{}", reader("r", "/a", "2-3", "32M", 30_000, 5));
    let r = two_node_run("classic", [128, 128], &body);
    assert!(r.nodes.as_ref().unwrap()[1].pgscan_direct > 0, "{:?}", r.nodes);
    let lru = &r.sched.as_ref().expect("a machine of CPUs").locks["lru_lock"];
    let moves = r.profile.as_ref().unwrap().iter().find(|l| l.function == "lruvec_add/del_folio").expect("LRU moves");
    let moves_ns = ((moves.tasks_s + moves.kswapd_s) * 1e9).round() as u64;
    assert!(lru.acquisitions > 0 && moves_ns > 0, "{lru:?}");
    assert_eq!(lru.hold_ns, moves_ns, "{lru:?}");
}

#[test]
fn memcg_limit_reclaim_takes_from_every_nodes_lruvec_try_to_free_mem_cgroup_pages_6_1_6_12() {
    // One cgroup of 24M with a reader on each node's CPUs, on a machine with room to spare:
    // only the cgroup's limit reclaims (no kswapd), and it shrinks the cgroup's lruvec on each
    // node (shrink_zones() over the zonelist: shrink_lruvec() under the classic LRU,
    // lru_gen_shrink_lruvec() of mem_cgroup_lruvec(memcg, pgdat) under MGLRU), so both nodes'
    // pages are reclaimed and each node's pgsteal adds up to the cgroup's.
    let body = format!(
        "\n[[cgroup]]\npath = \"/a\"\nmax = \"24M\"\n{}{}",
        reader("left", "/a", "0-1", "64M", 40_000, 7),
        reader("right", "/a", "2-3", "64M", 40_000, 8)
    );
    for (kernel, policy) in [("6.1", "classic"), ("6.12", "classic"), ("6.1", "mglru"), ("6.12", "mglru")] {
        let r = two_node_run_on(kernel, policy, [256, 256], &body);
        let nodes = r.nodes.clone().unwrap();
        let at = format!("{kernel} {policy}");
        assert_eq!(r.vmstat["pgscan_kswapd"], 0, "{at}: the machine has room: {:?}", r.vmstat);
        assert!(nodes[0].pgsteal_direct > 2000 && nodes[1].pgsteal_direct > 2000, "{at}: {nodes:?}");
        assert_eq!(nodes[0].pgsteal_direct + nodes[1].pgsteal_direct, r.memcg["/a"]["pgsteal"], "{at}: {nodes:?}");
        // Each node's pages stay on its own lruvecs after the reclaim: the cgroup's 24M is split.
        assert!(nodes[0].lru_pages > 1000 && nodes[1].lru_pages > 1000, "{at}: {nodes:?}");
    }
}

#[test]
fn more_nodes_than_a_shadow_entry_can_name_are_refused() {
    // A shadow entry keeps the node of its eviction (pack_shadow()) in 3 bits: 9 nodes are
    // refused by name rather than have their shadows name the wrong node.
    let nine: String = (0..9).map(|i| format!("[[machine.node]]\nmemory = \"{}M\"\n", if i == 0 { 16 } else { 14 })).collect();
    let e = error(&readers("classic", &nine).replace("cpus = 4\n", ""));
    assert_eq!(e.key, "machine.node", "{e}");
    assert!(e.message.contains("9 nodes") && e.message.contains("at most 8"), "{e}");
}

/// Two nodes of `node_mib` MiB with CPUs 0-1 and 2-3 under MGLRU on `kernel`, `body` (cgroups
/// and workloads) run to its end on a machine the test can look into (nodes set on the
/// validated scenario, as [`numa_run`]).
fn two_node_mglru(kernel: &str, node_mib: [u64; 2], body: &str) -> pagelab::sim::Machine<pagelab::policy::lru_gen::LruGen> {
    let total: u64 = node_mib.iter().sum();
    let text = format!("[machine]\nmemory = \"{total}M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\nstorage = \"ssd\"\ncpus = 4\n{body}");
    let mut s = super::common::scenario(&text);
    let cpus = |t: &str| Some(CpuSet::parse(t, 4).unwrap());
    s.machine.nodes = vec![NodeSpec { memory_pages: node_mib[0] * 256, cpus: cpus("0-1") }, NodeSpec { memory_pages: node_mib[1] * 256, cpus: cpus("2-3") }];
    let mut m = pagelab::sim::Machine::new(&s, |mm| pagelab::policy::lru_gen::LruGen::new(mm, &s.mglru)).unwrap();
    m.run(|_| {});
    m.check().unwrap_or_else(|e| panic!("{kernel}: {e}"));
    m
}

/// The pages on every generation list of a lruvec, by type.
fn lrugen_pages(m: &pagelab::sim::Machine<pagelab::policy::lru_gen::LruGen>, memcg: u16, nid: usize) -> [i64; 2] {
    let lv = m.policy.lrugen(pagelab::policy::lru_gen::LvId::new(memcg, nid));
    [0, 1].map(|ty| lv.nr_pages.iter().map(|g| g[ty]).sum())
}

#[test]
fn mglru_a_folio_goes_on_its_frames_nodes_lrugen_lru_gen_add_folio_folio_lruvec_6_1_6_12() {
    // A task on node 1's CPUs reads a file that fits in node 1: its pages are node 1's frames,
    // and lru_gen_add_folio() puts each on folio_lruvec()'s generations, the root memcg's
    // lruvec of node 1; node 0's lrugen stays empty, and the LRU sizes are node 1's.
    for kernel in ["6.1", "6.12"] {
        let m = two_node_mglru(kernel, [128, 128], &reader("r", "/", "2-3", "32M", 30_000, 5));
        let on = |nid| lrugen_pages(&m, 0, nid);
        assert!(on(1)[1] >= 7000, "{kernel}: {:?}", on(1));
        assert_eq!(on(0), [0, 0], "{kernel}: node 0's lrugen holds nothing");
        let lru = |nid: usize| m.mm.memcgs.get(0).lruvec_of(nid).lru_size.iter().sum::<u64>();
        assert_eq!((lru(0), lru(1)), (0, on(1)[1] as u64), "{kernel}: the LRU sizes are the lruvec's");
        // /sys/kernel/debug/lru_gen shows a block per node under each memcg.
        let debugfs = pagelab::policy::Inspect::debugfs(&m.policy, &m.mm).unwrap();
        assert!(debugfs.contains(" node     0\n") && debugfs.contains(" node     1\n"), "{kernel}: {debugfs}");
    }
}

#[test]
fn mglru_a_refault_is_judged_by_the_evicting_nodes_generations_lru_gen_refault_6_1_6_12() {
    use pagelab::policy::lru_gen::LvId;
    use pagelab::policy::Policy;
    // A reader in a 16M cgroup on node 1's CPUs: its pages are node 1's, the cgroup's limit
    // evicts them from its lruvec of node 1, and their shadows name node 1 (pack_shadow()'s
    // pgdat), so their refaults feed node 1's tiers; node 0's lruvec sees none of it.
    for kernel in ["6.1", "6.12"] {
        let body = format!("\n[[cgroup]]\npath = \"/a\"\nmax = \"16M\"\n{}", reader("r", "/a", "2-3", "48M", 40_000, 9));
        let mut m = two_node_mglru(kernel, [128, 128], &body);
        let a = m.mm.memcgs.preorder.iter().copied().find(|&c| m.mm.memcgs.get(c).path == "/a").unwrap();
        let (n0, n1) = (LvId::new(a, 0), LvId::new(a, 1));
        let sum = |x: &[[u64; 4]; 2]| x.iter().flatten().sum::<u64>();
        let lv1 = m.policy.lrugen(n1);
        assert!(sum(&lv1.evicted) + sum(&lv1.avg_total) > 1000, "{kernel}: node 1 evicts: {lv1:?}");
        assert!(sum(&lv1.refaulted) + sum(&lv1.avg_refaulted) > 100, "{kernel}: node 1's tiers see the refaults: {lv1:?}");
        let lv0 = m.policy.lrugen(n0);
        assert_eq!(sum(&lv0.evicted) + sum(&lv0.refaulted) + sum(&lv0.avg_total), 0, "{kernel}: {lv0:?}");

        // One folio of node 1 evicted now: its shadow holds node 1's min_seq. Its refault is
        // recent by node 1's generations whatever node 0's say...
        let pfn = (0..4).find_map(|g| m.policy.gen_pages_on(&m.mm, n1, g, 1).first().copied()).expect("a folio on node 1");
        let shadow = m.policy.workingset_eviction(&mut m.mm, pfn, a);
        assert_eq!(shadow.nid(), 1, "{kernel}");
        let refaulted = |m: &pagelab::sim::Machine<pagelab::policy::lru_gen::LruGen>, k| sum(&m.policy.lrugen(k).refaulted);
        let seq = m.policy.lrugen(n1).min_seq[1];
        assert_eq!(shadow.eviction() >> 2, seq, "{kernel}: the token is node 1's oldest file generation");
        m.policy.lrugen_mut(n0).min_seq[1] = seq + 1;
        let before = (refaulted(&m, n0), refaulted(&m, n1));
        m.policy.workingset_refault(&mut m.mm, pfn, shadow);
        assert_eq!((refaulted(&m, n0), refaulted(&m, n1)), (before.0, before.1 + 1), "{kernel}: node 1's tiers count it");
        // ... and not recent once node 1's oldest generation is another, even with node 0's
        // matching the token.
        m.policy.lrugen_mut(n0).min_seq[1] = seq;
        m.policy.lrugen_mut(n1).min_seq[1] = seq + 1;
        let before = (refaulted(&m, n0), refaulted(&m, n1));
        m.policy.workingset_refault(&mut m.mm, pfn, shadow);
        assert_eq!((refaulted(&m, n0), refaulted(&m, n1)), before, "{kernel}: judged by node 1's generations, not node 0's");
    }
}

#[test]
fn mglru_a_one_node_table_is_the_machine_without_a_node_table_on_6_12() {
    // 6.12's memcg LRU is per node (pgdat->memcg_lru): one node is the machine without a node
    // table (6.1 is checked with the classic LRU above).
    let on_6_12 = |t: &str| readers("mglru", t).replace("kernel = \"6.1\"", "kernel = \"6.12\"");
    let without = run(&on_6_12(""));
    assert!(without.vmstat["pgscan_kswapd"] + without.vmstat["pgscan_direct"] > 0, "{:?}", without.vmstat);
    let with = run(&on_6_12("[[machine.node]]\nmemory = \"128M\"\ncpus = 4"));
    assert_eq!(outcome(&with), outcome(&without));
    assert_eq!(with.policy_state, without.policy_state, "the generations and the debugfs view too");
}

#[test]
fn a_nodes_kswapd_reclaims_its_own_node() {
    // mm/vmscan.c: kswapd() (6.1/6.12) is one kthread per pgdat, bound to its node's CPUs;
    // wake_all_kswapds() wakes each node's of the zonelist, and balance_pgdat() reclaims the
    // node's own lruvecs only. A hog on node 0's CPUs fills node 0 with anonymous memory
    // (no swap: nothing of it can be reclaimed) and spills a little onto node 1; a reader on
    // node 1's CPUs fills node 1 with its file. Node 1's kswapd steals the reader's pages;
    // node 0's, whose node holds the hog's memory alone, steals nothing. A kswapd of node 0
    // alone could only have reclaimed node 0.
    let text = r#"
[machine]
memory = "128M"
kernel = "6.1"
policy = "classic"
storage = "ssd"
cpus = 4

[[workload]]
name = "hog"
cgroup = "/"
kind = "anon-write"
size = "72M"
distribution = "uniform"
cpus = "0-1"
ops = 2000
hold = true
seed = 1

[[workload]]
name = "reader"
cgroup = "/"
kind = "file-read"
file_size = "96M"
distribution = "uniform"
cpus = "2-3"
ops = 40000
seed = 2

[[machine.node]]
memory = "64M"
cpus = "0-1"

[[machine.node]]
memory = "64M"
cpus = "2-3"
"#;
    let s = super::common::scenario(text);
    let mut m = pagelab::sim::Machine::new(&s, |mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len()).with_nodes(mm.nodes.len())).unwrap();
    m.run(|_| {});
    let r = Report::collect(&s, &m);
    let nodes = r.nodes.clone().unwrap();
    assert!(nodes[1].pgsteal_kswapd > 1000, "node 1's kswapd reclaims node 1: {nodes:?}");
    assert_eq!(nodes[0].pgsteal_kswapd, 0, "node 0 holds nothing its kswapd can reclaim: {nodes:?}");
    assert_eq!(nodes.iter().map(|n| n.pgsteal_kswapd).sum::<u64>(), r.vmstat["pgsteal_kswapd"], "{nodes:?}");
    assert_eq!(nodes[0].pgscan_kswapd, 0, "{nodes:?}");
    assert!(nodes[1].kswapd_cpu_s > 0.0, "node 1's kswapd ran: {nodes:?}");
    assert!((r.kswapd_cpu_s - (nodes[0].kswapd_cpu_s + nodes[1].kswapd_cpu_s)).abs() < 1e-9, "the report's kswapd CPU sums the nodes'");
    // Each kswapd ran on its own node's CPUs.
    let sched = m.mm.sched.as_ref().expect("a machine of CPUs");
    assert!(sched.kswapd[0].last.is_none_or(|c| c < 2), "{:?}", sched.kswapd[0].last);
    assert!(matches!(sched.kswapd[1].last, Some(2 | 3)), "{:?}", sched.kswapd[1].last);
}
