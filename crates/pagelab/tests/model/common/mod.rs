//! Helpers for driving a machine operation by operation.
#![allow(dead_code)]

use pagelab::mm::folio::{Pfn, NIL};
use pagelab::policy::classic::Classic;
use pagelab::policy::lru_gen::LruGen;
use pagelab::sim::Machine;
use pagelab::Scenario;
use pagelab_workload::{Access, Advice, Op};

pub fn scenario(text: &str) -> Scenario {
    Scenario::parse(text, "test.toml", "test", &[]).unwrap_or_else(|e| panic!("{e}"))
}

pub fn classic(text: &str) -> Machine<Classic> {
    Machine::new(&scenario(text), |mm| Classic::new(mm.memcgs.cg.len())).unwrap()
}

pub fn mglru(text: &str) -> Machine<LruGen> {
    let s = scenario(text);
    Machine::new(&s, |mm| LruGen::new(mm, &s.mglru)).unwrap()
}

/// A scenario of one file of `pages` pages read at random by one task in the root cgroup
/// (`ops = 0`: the test drives the operations).
pub fn one_file_scenario(memory: &str, kernel: &str, policy: &str, pages: u64) -> String {
    format!(
        r#"
[machine]
memory = "{memory}"
kernel = "{kernel}"
policy = "{policy}"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "{pages}p"
fadvise = "random"
ops = 0
"#
    )
}

pub fn read(object: u32, page: u64) -> Op {
    Op { object, page, npages: 1, write: false, access: Access::Buffered, advice: Advice::Random, fill: false, think_ns: 0, due: None, more: false }
}

/// A load of one page of a file mapped by the task, with the mapping's madvise advice.
pub fn mmap_read(object: u32, page: u64, advice: Advice) -> Op {
    Op { object, page, npages: 1, write: false, access: Access::Mmap, advice, fill: false, think_ns: 0, due: None, more: false }
}

pub fn touch(object: u32, page: u64, write: bool) -> Op {
    Op { object, page, npages: 1, write, access: Access::Anon, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
}

/// The frame holding page `page` of object `object` of task `t`, if resident.
pub fn pfn_of<P: pagelab::policy::Policy>(m: &Machine<P>, t: usize, object: usize, page: u64) -> Option<Pfn> {
    let (base, _) = m.object(t, object);
    m.mm.space.resident(base + page as u32).filter(|&p| p != NIL)
}

pub fn ev<P: pagelab::policy::Policy>(m: &Machine<P>, e: pagelab::mm::vmstat::Ev) -> u64 {
    m.mm.events.get(e)
}
