//! Every policy pagelab knows, in one table: its name, a one-line description, its
//! parameters, where it runs (trace replays, the kernel model, both) and how to build it.
//! The scenario loader, the CLI (`pagelab policies`, `--policy`), trace replay and the
//! Python package all read this table.
//!
//! Adding a seam policy is one file implementing
//! [`EvictionPolicy`](crate::policy::seam::EvictionPolicy) and one line in its `SEAM` table
//! (see docs/policies.md).

use pagelab_cachesim::PolicyKind as Plain;

use crate::mm::memcontrol::MemcgId;
use crate::mm::Mm;
use crate::policy::seam::adapters::PlainPolicy;
use crate::policy::seam::cache_ext_fifo::CacheExtFifo;
use crate::policy::seam::cache_ext_mru::CacheExtMru;
use crate::policy::seam::cache_ext_s3fifo::CacheExtS3Fifo;
use crate::policy::seam::lhd::Lhd;
use crate::policy::seam::noop::Noop;
use crate::policy::seam::random::Random;
use crate::policy::seam::sampling_lfu::SamplingLfu;
use crate::policy::seam::{EvictionPolicy, Ext};
use crate::policy::PolicyKind;

/// Where a policy runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// Trace replays only (`pagelab run --trace --policy`).
    Trace,
    /// The kernel model only (`[machine] policy`, `[[cgroup]] policy`).
    Machine,
    /// Both: the same algorithm object replays traces and runs behind the eviction seam.
    Both,
}

impl Runs {
    pub fn name(self) -> &'static str {
        match self {
            Runs::Trace => "trace",
            Runs::Machine => "machine",
            Runs::Both => "both",
        }
    }
    pub fn on_machine(self) -> bool {
        self != Runs::Trace
    }
    pub fn on_trace(self) -> bool {
        self != Runs::Machine
    }
}

/// What builds a policy.
#[derive(Clone, Copy)]
pub enum Build {
    /// One of the kernel's own LRUs (a whole-machine [`Policy`](crate::policy::Policy)).
    Kernel(PolicyKind),
    /// A plain cache: trace replays run it directly, the machine behind the seam.
    Plain(Plain),
    /// A seam policy written for the kernel model; receives the machine's memory in pages.
    Seam(fn(u64) -> Box<dyn EvictionPolicy>),
}

/// One registered policy.
#[derive(Clone, Copy)]
pub struct PolicyInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Its parameters and where they are set ("" for none).
    pub params: &'static str,
    pub runs: Runs,
    pub build: Build,
}

/// The kernel's own LRUs.
const KERNEL: [PolicyInfo; 2] = [
    PolicyInfo {
        name: "classic",
        description: "the kernel's active/inactive LRU (mm/vmscan.c with MGLRU off; 5.7, 6.1, 6.12, 7.3)",
        params: "machine.swappiness",
        runs: Runs::Both,
        build: Build::Kernel(PolicyKind::Classic),
    },
    PolicyInfo {
        name: "mglru",
        description: "the kernel's multi-generational LRU (6.1, 6.12, 7.3)",
        params: "[mglru] walks, pmd_young, min_ttl_ms, refault_distance, prefetch, fg, fg_reset, refs_width",
        runs: Runs::Both,
        build: Build::Kernel(PolicyKind::Mglru),
    },
];

/// The seam policies written for the kernel model: a new one is one file and one line here.
const SEAM: [PolicyInfo; 7] = [
    PolicyInfo {
        name: "random",
        description: "evict a random folio of the cgroup (seeded)",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(Random::new(42))),
    },
    PolicyInfo {
        name: "sampling-lfu",
        description: "cache_ext's sampling LFU: hand over the least-accessed folio of each run of 20 at the list's head",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(SamplingLfu::new())),
    },
    PolicyInfo {
        name: "noop",
        description: "cache_ext's no-op policy: keeps its registry, leaves eviction to the classic LRU (its hooks' cost: Table 4)",
        params: "[time] cache_ext_hook_ns",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(Noop::new())),
    },
    PolicyInfo {
        name: "lhd",
        description: "LHD (NSDI'18) as cache_ext ports it: the lowest hit density of each run of 16 folios",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(Lhd::new())),
    },
    PolicyInfo {
        name: "cache-ext-fifo",
        description: "cache_ext's FIFO: the oldest folios first, passing over any not uptodate, off the LRU, dirty or under writeback",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(CacheExtFifo::new())),
    },
    PolicyInfo {
        name: "cache-ext-mru",
        description: "cache_ext's MRU: the most recently used folios first, passing over those not uptodate or off the LRU within 200 nodes",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|_| Box::new(CacheExtMru::new())),
    },
    PolicyInfo {
        name: "cache-ext-s3fifo",
        description: "cache_ext's S3-FIFO: small and main lists, a ghost of the cgroup's size, small's share 1/15",
        params: "",
        runs: Runs::Machine,
        build: Build::Seam(|pages| Box::new(CacheExtS3Fifo::new(pages))),
    },
];

/// A plain cache's row, from pagelab_cachesim's own table of names and descriptions: a
/// plain cache runs on traces, and behind the seam unless it needs the future (OPT).
fn plain_row(kind: Plain) -> PolicyInfo {
    let runs = if kind.needs_future() { Runs::Trace } else { Runs::Both };
    PolicyInfo { name: kind.name(), description: kind.description(), params: kind.params(), runs, build: Build::Plain(kind) }
}

/// The registry: the kernel's LRUs, every plain cache of pagelab_cachesim, then the seam
/// policies, in the order `pagelab policies` lists them.
pub static POLICIES: std::sync::LazyLock<Vec<PolicyInfo>> =
    std::sync::LazyLock::new(|| KERNEL.into_iter().chain(Plain::ALL.map(plain_row)).chain(SEAM).collect());

/// The registered policy of this name.
pub fn find(name: &str) -> Option<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name)
}

/// The names, comma-separated (for error messages).
pub fn names(filter: impl Fn(&PolicyInfo) -> bool) -> String {
    POLICIES.iter().filter(|p| filter(p)).map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// One line per policy (`pagelab policies`).
pub fn listing() -> String {
    let w = POLICIES.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in POLICIES.iter() {
        let params = if p.params.is_empty() { String::new() } else { format!(" [{}]", p.params) };
        out.push_str(&format!("{:w$}  {:7}  {}{}\n", p.name, p.runs.name(), p.description, params));
    }
    out
}

/// Whether `name` is one of the kernel's own LRUs (`classic`, `mglru`): a trace replayed
/// against it runs the kernel model, not a plain cache.
pub fn kernel_lru(name: &str) -> Option<PolicyKind> {
    match find(name)?.build {
        Build::Kernel(k) => Some(k),
        _ => None,
    }
}

/// A seam policy resolved from the registry: its name and how to build one instance.
#[derive(Clone, Copy)]
pub struct SeamPolicy {
    info: &'static PolicyInfo,
}

impl SeamPolicy {
    /// The registered seam policy `p` (None for the kernel's LRUs and trace-only policies).
    fn of(p: &'static PolicyInfo) -> Option<SeamPolicy> {
        (p.runs.on_machine() && !matches!(p.build, Build::Kernel(_))).then_some(SeamPolicy { info: p })
    }

    pub fn name(self) -> &'static str {
        self.info.name
    }

    /// One instance, sized by the machine's memory in pages.
    pub fn build(self, machine_pages: u64) -> Box<dyn EvictionPolicy> {
        match self.info.build {
            Build::Plain(kind) => Box::new(PlainPolicy::new(kind, machine_pages)),
            Build::Seam(make) => make(machine_pages),
            Build::Kernel(_) => unreachable!("SeamPolicy::of admits seam policies only"),
        }
    }
}

impl std::fmt::Debug for SeamPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SeamPolicy({})", self.info.name)
    }
}

impl PartialEq for SeamPolicy {
    fn eq(&self, other: &SeamPolicy) -> bool {
        self.info.name == other.info.name
    }
}

impl Eq for SeamPolicy {}

/// A seam policy instance by name (None for the kernel's LRUs, trace-only policies and
/// unknown names).
pub fn seam_policy(name: &str, machine_pages: u64) -> Option<Box<dyn EvictionPolicy>> {
    find(name).and_then(SeamPolicy::of).map(|p| p.build(machine_pages))
}

/// The seam policies of a classic machine: the machine's default and per-cgroup choices,
/// each already resolved from the registry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeamSpec {
    /// `[machine] policy` when it is a seam policy: every cgroup without its own gets one.
    pub machine: Option<SeamPolicy>,
    /// `[[cgroup]] policy`: (path, policy).
    pub cgroups: Vec<(String, SeamPolicy)>,
}

/// What a machine runs, resolved once when the scenario is built (`[machine] policy` and
/// `[[cgroup]] policy`): the one place the kernel-or-seam choice is made. The run builds
/// the matching [`Policy`](crate::policy::Policy) from it without looking a name up again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachinePolicy {
    /// The kernel's active/inactive LRU in every cgroup.
    Classic,
    /// The kernel's multi-generational LRU.
    Mglru,
    /// The classic LRU hosting seam policies: each memcg gets its cgroup's policy, else the
    /// machine's, else the classic LRU.
    Seam(SeamSpec),
}

impl MachinePolicy {
    /// The kernel LRU the machine runs (a seam host runs under the classic one).
    pub fn kind(&self) -> PolicyKind {
        match self {
            MachinePolicy::Mglru => PolicyKind::Mglru,
            MachinePolicy::Classic | MachinePolicy::Seam(_) => PolicyKind::Classic,
        }
    }

    /// The name a report gives the machine's policy.
    pub fn name(&self) -> &'static str {
        match self {
            MachinePolicy::Seam(seam) => seam.machine.map_or("classic", SeamPolicy::name),
            other => other.kind().name(),
        }
    }

    /// The seam policies, when the machine hosts any.
    pub fn seam(&self) -> Option<&SeamSpec> {
        match self {
            MachinePolicy::Seam(seam) => Some(seam),
            _ => None,
        }
    }

    /// The seam host of this machine (the classic LRU where no seam policy applies):
    /// `extra` adds a caller's own policies, which come first, and the name the report gives
    /// them.
    pub fn seam_host(&self, mm: &Mm, extra: Option<(Factory, &'static str)>) -> Ext {
        let none = SeamSpec::default();
        let seam = self.seam().unwrap_or(&none);
        match extra {
            Some((make, name)) => build_ext(mm, seam, Some(make), name),
            None => build_ext(mm, seam, None, self.name()),
        }
    }

    /// Resolves `[machine] policy` (None: the classic LRU). Errors name the registered
    /// choices.
    pub fn resolve(name: Option<&str>) -> Result<MachinePolicy, String> {
        let Some(name) = name else { return Ok(MachinePolicy::Classic) };
        match find(name) {
            Some(PolicyInfo { build: Build::Kernel(PolicyKind::Classic), .. }) => Ok(MachinePolicy::Classic),
            Some(PolicyInfo { build: Build::Kernel(PolicyKind::Mglru), .. }) => Ok(MachinePolicy::Mglru),
            Some(p) => match SeamPolicy::of(p) {
                Some(seam) => Ok(MachinePolicy::Seam(SeamSpec { machine: Some(seam), cgroups: Vec::new() })),
                None => Err(format!("`{}` runs on traces only; the machine can run: {}", p.name, names(|p| p.runs.on_machine()))),
            },
            None => Err(format!("unknown policy `{name}`; the machine can run: {} (`pagelab policies` lists them)", names(|p| p.runs.on_machine()))),
        }
    }

    /// Adds `[[cgroup]] policy` of the cgroup at `path`: a seam policy (or "classic", the
    /// default LRU), under a classic machine.
    pub fn add_cgroup(&mut self, path: &str, name: &str) -> Result<(), String> {
        let seam = |p: &PolicyInfo| p.runs.on_machine() && !matches!(p.build, Build::Kernel(_));
        let mglru = *self == MachinePolicy::Mglru;
        match find(name) {
            Some(PolicyInfo { build: Build::Kernel(PolicyKind::Classic), .. }) if !mglru => Ok(()),
            Some(p) => match SeamPolicy::of(p) {
                Some(_) if mglru => {
                    Err("a per-cgroup policy needs the classic LRU as the machine policy (pagelab does not combine seam policies with MGLRU)".into())
                }
                Some(policy) => {
                    if *self == MachinePolicy::Classic {
                        *self = MachinePolicy::Seam(SeamSpec::default());
                    }
                    if let MachinePolicy::Seam(spec) = self {
                        spec.cgroups.push((path.to_string(), policy));
                    }
                    Ok(())
                }
                None => Err(format!("`{}` cannot be one cgroup's policy; choose one of: {}", p.name, names(seam))),
            },
            None => Err(format!("unknown policy `{name}`; choose one of: {} (`pagelab policies` lists them)", names(seam))),
        }
    }
}

/// A factory of seam policies for the cgroup at a path (Python's policies).
pub type Factory<'a> = &'a dyn Fn(&str) -> Option<Box<dyn EvictionPolicy>>;

/// The seam host for a machine: each memcg gets `extra`'s policy (a caller's own), else its
/// cgroup's, else the machine's seam policy, else the classic LRU.
fn build_ext(mm: &Mm, seam: &SeamSpec, extra: Option<Factory>, name: &'static str) -> Ext {
    let pages = mm.nodes[0].zones.managed();
    let policies = (0..mm.memcgs.cg.len())
        .map(|i| {
            let path = &mm.memcgs.get(i as MemcgId).path;
            if let Some(make) = extra {
                if let Some(p) = make(path) {
                    return Some(p);
                }
            }
            if let Some((_, p)) = seam.cgroups.iter().find(|(p, _)| p == path) {
                return Some(p.build(pages));
            }
            seam.machine.map(|p| p.build(pages))
        })
        .collect();
    Ext::new(mm, name, policies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plain_cache_is_listed_once_under_its_cachesim_name() {
        for kind in Plain::ALL {
            let rows: Vec<&PolicyInfo> = POLICIES.iter().filter(|p| matches!(p.build, Build::Plain(k) if k == kind)).collect();
            assert_eq!(rows.len(), 1, "{}", kind.name());
            assert_eq!(find(kind.name()).map(|p| p.name), Some(kind.name()));
            assert_eq!(rows[0].runs.on_machine(), !kind.needs_future(), "{}", kind.name());
        }
        let mut names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), POLICIES.len(), "a name is registered twice");
    }
}
