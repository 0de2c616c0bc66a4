//! The kernel's own allocations in non-movable pageblocks: the page cache's xarray nodes and
//! their reclaimable slabs (issue 44 item 4, held-out cluster 1).

use crate::common::{one_file_scenario, scenario};
use pagelab::mm::pageblock::{self, RADIX_TREE_NODES_PER_SLAB, RADIX_TREE_NODE_SLAB_PAGES, SLUB_MIN_PARTIAL};

#[test]
fn xa_node_slabs_follow_the_nodes() {
    // SLUB's side: a new slab when the nodes outgrow the slabs, one freed once more than
    // MIN_PARTIAL slabs' worth of objects are free.
    assert_eq!(RADIX_TREE_NODES_PER_SLAB, 14);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(0, 0), 0);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(1, 0), 1);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(14, 1), 1);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(15, 1), 2);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(0, SLUB_MIN_PARTIAL), SLUB_MIN_PARTIAL, "empty slabs kept on the partial list");
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(0, SLUB_MIN_PARTIAL + 3), SLUB_MIN_PARTIAL);
    assert_eq!(pageblock::xa_node_slabs_follow_the_nodes(140, 20), 15);

    // The page allocator's side, in a run: a 64 MiB file read once on a 128 MiB machine (no
    // reclaim) stores 16,384 pages in 256 leaf nodes (257 if the file's first page is not
    // at a node boundary), 19 slabs of 14 nodes, 38 pages taken from the non-movable blocks'
    // free pages (one free pageblock), on every kernel. Without the layout nothing is taken.
    for kernel in ["6.1", "6.12", "7.3"] {
        let text = |layout: &str| {
            one_file_scenario("128M", kernel, "classic", 16_384)
                .replace("[machine]\n", &format!("[machine]\n{layout}"))
                .replace("ops = 0", "ops = 16384\ndistribution = \"seq\"")
        };
        let with = pagelab::run(&scenario(&text("nonmovable = { DMA32 = { blocks = 2, free = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } }\n")), |_, _| {}).unwrap();
        let last = with.series.last().expect("a series").vmstat.clone();
        let slab_pages = 19 * RADIX_TREE_NODE_SLAB_PAGES;
        assert_eq!(last["xa_node_slab_pages"], slab_pages, "{kernel}");
        assert_eq!(last["nonmovable_free_dma32"], 512 - slab_pages, "{kernel}: the slabs come off the non-movable free lists");
        let without = pagelab::run(&scenario(&text("")), |_, _| {}).unwrap();
        assert!(!without.series.last().expect("a series").vmstat.contains_key("xa_node_slab_pages"), "{kernel}");
        assert_eq!(with.vmstat["pgsteal_kswapd"] + without.vmstat["pgsteal_kswapd"], 0, "{kernel}: no reclaim either way");
        assert!(without.vmstat["pgpgin"] >= 16_384 * 4, "{kernel}: the file was read");
    }
}
