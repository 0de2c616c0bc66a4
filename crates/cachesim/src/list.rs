//! Lists of pages linked by index through `link[node] = [prev, next]`, with node 0 (or a
//! list's own node) as the sentinel: the shared helpers of LRU, SIEVE and ARC.

use crate::NONE;

/// Unlinks the node between `prev` and `next` of a list linked through `link[node] = [prev,
/// next]` (node 0 the sentinel).
#[inline(always)]
pub(crate) fn unlink_node(link: &mut [[u32; 2]], prev: u32, next: u32) {
    link[prev as usize][1] = next;
    link[next as usize][0] = prev;
}

/// Links node `i` in at the head (after the sentinel).
#[inline(always)]
pub(crate) fn link_head(link: &mut [[u32; 2]], i: usize) {
    let head = link[0][1];
    link[i] = [0, head];
    link[head as usize][0] = i as u32;
    link[0][1] = i as u32;
}

/// Unlinks the node at `end` of a non-empty list (0: the tail, 1: the head) and marks it
/// absent; returns it.
#[inline(always)]
pub(crate) fn unlink_end(link: &mut [[u32; 2]], end: usize) -> u32 {
    let victim = link[0][end];
    let [prev, next] = link[victim as usize];
    unlink_node(link, prev, next);
    link[victim as usize] = [NONE, NONE];
    victim
}

/// The pages of a list linked through `link[node] = [towards the head, towards the tail]`,
/// from its head to its tail: `sentinel` is the list's own node (`[tail, head]`), and page
/// `p` is node `p + first_node`. For checks and tests, not hot paths.
pub(crate) fn list_pages(link: &[[u32; 2]], sentinel: u32, first_node: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut i = link[sentinel as usize][1];
    while i != sentinel {
        v.push(i - first_node);
        i = link[i as usize][1];
    }
    v
}
