//! The held-out clusters of issue 44: the mechanisms the model already has, pinned by the
//! scenario parameter the held-out runs must differ in (docs/fidelity.md, "The held-out
//! clusters").

use crate::common;
use common::*;

use pagelab::mm::vmstat::Ev;

/// A Zipf reader limited to 16M by memory.max, alone or beside a root-cgroup reader that
/// streams `stream_pages` pages through the rest of the 64M machine. Returns the limited
/// memcg's memory.stat pgscan_kswapd and pgscan_direct and the node's pgscan_kswapd.
fn limited_memcg_scans(kernel: &str, policy: &str, stream_pages: u64) -> (u64, u64, u64) {
    let text = format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
policy = "{policy}"
[[cgroup]]
path = "/test"
max = "16M"
[[workload]]
name = "zipf"
cgroup = "/test"
kind = "file-read"
file_size = "48M"
distribution = "zipf:0.9"
fadvise = "random"
ops = 30000
seed = 11
[[workload]]
name = "stream"
cgroup = "/"
kind = "file-read"
file_size = "96M"
block_size = "128k"
distribution = "seq"
ops = {}
seed = 12
"#,
        stream_pages / 32
    );
    fn scans<P: pagelab::policy::Policy>(mut m: pagelab::sim::Machine<P>) -> (u64, u64, u64) {
        while m.step() {}
        let t = m.mm.memcgs.find("/test").unwrap();
        let e = m.mm.memcgs.hierarchical_events(t);
        (e.get(Ev::PgScanKswapd), e.get(Ev::PgScanDirect), ev(&m, Ev::PgScanKswapd))
    }
    match policy {
        "mglru" => scans(mglru(&text)),
        _ => scans(classic(&text)),
    }
}

/// Models mm/vmscan.c: shrink_node_memcgs() (6.1.x, 6.12.95) under kswapd: node reclaim
/// walks every memcg below the root, a limited one too, and counts its scans in that memcg's
/// memory.stat pgscan_kswapd (shrink_inactive_list()'s __count_memcg_events()). A limited
/// memcg alone on a roomy node is reclaimed by its limit only (pgscan_kswapd 0, as suite 10's
/// memcg-limit-zipf in kernel and model); page cache outside it that runs the node low makes
/// kswapd scan it too, and takes part of its reclaim off the limit (direct reclaim). The
/// held-out memcg-limited cluster (6.1: pgscan_kswapd 500-2,000 in the kernel, 0 in the model)
/// therefore needs such cache, e.g. a replayer reading its stream from a file. (MGLRU at
/// this scale: 6.1's kswapd leaves the small memcg alone; at suite 10's 256M it scans it.)
#[test]
fn shrink_node_memcgs_kswapd_scans_a_limited_memcg_once_cache_outside_it_fills_the_node() {
    for (kernel, policy) in [("6.1", "classic"), ("6.12", "classic")] {
        let (alone_kswapd, alone_direct, alone_node) = limited_memcg_scans(kernel, policy, 0);
        assert_eq!((alone_kswapd, alone_node), (0, 0), "{kernel} {policy}: the node never runs low alone");
        assert!(alone_direct > 0, "{kernel} {policy}: the limit reclaims");
        let (kswapd, direct, node) = limited_memcg_scans(kernel, policy, 24576);
        assert!(node > 0, "{kernel} {policy}: the stream runs the node low");
        assert!(kswapd > 0 && kswapd < node, "{kernel} {policy}: kswapd scans /test as part of the node ({kswapd} of {node})");
        assert!(direct < alone_direct, "{kernel} {policy}: kswapd takes part of the limit's reclaim ({direct} against {alone_direct})");
    }
}
