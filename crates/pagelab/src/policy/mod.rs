//! The replacement policies: the kernel's two LRUs (`classic`, `lru_gen`) and the eviction
//! seam (`seam`) that hosts a researcher's policy, with the `registry` of their names.
//!
//! Each implements the hooks the memory-management core calls ([`Policy`], [`Caps`] and
//! [`Inspect`]), which live in `mm/hooks.rs` beside their callers and are re-exported here.

pub use crate::mm::hooks::{Caps, Inspect, Policy};

pub mod classic;
pub mod lru_gen;
pub mod registry;
pub mod seam;

/// Which kernel policy a machine runs (`[machine] policy`); the seam's policies run under
/// `Classic`'s driver, per cgroup (see [`registry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    Classic,
    Mglru,
}

impl PolicyKind {
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Classic => "classic",
            PolicyKind::Mglru => "mglru",
        }
    }
}
