//! LHD, Least Hit Density (Beckmann, Chen, Cidon, NSDI '18), as cache_ext ports it
//! (policies/cache_ext_lhd.bpf.c and .bpf.h of cache-ext/cache_ext, the SOSP '25 artifact),
//! ported line by line onto the seam's [`Lists`] with its parameters:
//!
//! * each folio has a class, from the sum of its last two hit ages (16 hit-age classes,
//!   `HIT_AGE_CLASSES`; the app class is the constant `DEFAULT_APP_ID`), and an age: the
//!   requests (additions and accesses) since its last access, coarsened by a shift (initially
//!   10), at most `MAX_AGE` = 16,384;
//! * each class counts hits and evictions per age (scaled by 2^20); every 2^20 requests
//!   (`REQS_PER_RECONFIG`) the counts decay by 9/10, the age coarsening adapts (at the 5th
//!   and 25th reconfiguration) and each age's hit density is recomputed: the hits still to
//!   come over the expected lifetime from that age;
//! * until then the densities are the GDSF-like start `2^20 × (class + 1) / (age + 1)`;
//! * eviction samples the list in runs of 16 (`bpf_cache_ext_list_sample`) and hands over the
//!   folio of lowest hit density of each run; a folio at the maximum age has density 0.
//!
//! What differs from the BPF program, and why:
//! * the reconfiguration runs inline when its request count is reached (cache_ext's program
//!   signals user space through a ring buffer, which runs the `reconfigure` program soon
//!   after): the same computation at a deterministic point;
//! * only the 16 classes the program can reach are allocated (its app class is constant):
//!   6 MiB of counts a cgroup instead of 96 MiB, the same results;
//! * every folio of the cgroup is the policy's, and short lists are sampled in shorter runs
//!   (as in [`super::sampling_lfu`]).

use super::lists::{ListId, Lists};
use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

const HIT_AGE_CLASSES: usize = 16;
const APP_CLASSES: u64 = 16;
const DEFAULT_APP_ID: u64 = 1;
const INITIAL_AGE_COARSENING_SHIFT: u64 = 10;
const REQS_PER_RECONFIG: u64 = 1 << 20;
const MAX_AGE: u64 = 1 << 14;
const MAX_AGE_MASK: u64 = MAX_AGE - 1;
const HIT_SCALING_FACTOR: u64 = 1 << 20;
const HIT_DENSITY_SCALING_FACTOR: u64 = 1 << 20;
const NUM_OBJECTS_SCALING_FACTOR: u64 = 1 << 20;
const TOTAL_EVENTS_THRESH: u64 = HIT_SCALING_FACTOR / 100_000;
const AGE_COARSENING_ERROR_TOLERANCE: u64 = 100;
/// cache_ext's `sampling_options.sample_size` for LHD.
pub const SAMPLE_SIZE: usize = 16;

/// `struct folio_metadata`.
#[derive(Clone, Copy, Default)]
struct Meta {
    present: bool,
    last_access_time: u64,
    last_hit_age: u64,
    last_last_hit_age: u64,
}

/// `struct lhd_class`.
struct Class {
    hits: Vec<u64>,
    evictions: Vec<u64>,
    hit_densities: Vec<u64>,
}

/// LHD for one cgroup.
pub struct Lhd {
    lists: Lists,
    lhd_list: ListId,
    meta: Vec<Meta>,
    /// The reachable classes: class id `DEFAULT_APP_ID * HIT_AGE_CLASSES + h` for h < 16.
    classes: Vec<Class>,
    next_reconfiguration: u64,
    num_reconfigurations: u32,
    age_coarsening_shift: u64,
    ewma_num_objects: u64,
    ewma_num_objects_mass: u64,
    ewma_victim_hit_density: u64,
    timestamp: u64,
    overflows: u64,
    num_objects: u64,
}

fn ewma_decay(v: u64) -> u64 {
    v.wrapping_mul(9) / 10
}

fn rem_ewma_decay(v: u64) -> u64 {
    v / 10
}

/// hit_age_to_class(): about log2 of how far `hit_age` is below MAX_AGE.
fn hit_age_to_class(mut hit_age: u64) -> usize {
    let mut class = 0;
    if hit_age == 0 {
        return 0;
    }
    while hit_age < MAX_AGE && class < HIT_AGE_CLASSES - 1 {
        hit_age <<= 1;
        class += 1;
    }
    class
}

impl Default for Lhd {
    fn default() -> Self {
        Lhd::new()
    }
}

impl Lhd {
    /// lhd_init(): the list and the GDSF start of every class's densities.
    pub fn new() -> Lhd {
        let mut lists = Lists::new();
        let lhd_list = lists.create();
        let classes = (0..HIT_AGE_CLASSES)
            .map(|h| {
                let i = (DEFAULT_APP_ID % APP_CLASSES) * HIT_AGE_CLASSES as u64 + h as u64;
                Class {
                    hits: vec![0; MAX_AGE as usize],
                    evictions: vec![0; MAX_AGE as usize],
                    hit_densities: (0..MAX_AGE).map(|j| HIT_DENSITY_SCALING_FACTOR * (i + 1) / (j + 1)).collect(),
                }
            })
            .collect();
        Lhd {
            lists,
            lhd_list,
            meta: Vec::new(),
            classes,
            next_reconfiguration: REQS_PER_RECONFIG,
            num_reconfigurations: 0,
            age_coarsening_shift: INITIAL_AGE_COARSENING_SHIFT,
            ewma_num_objects: 0,
            ewma_num_objects_mass: 0,
            ewma_victim_hit_density: 0,
            timestamp: 0,
            overflows: 0,
            num_objects: 0,
        }
    }

    fn get_meta(&self, id: FolioId) -> Option<Meta> {
        self.meta.get(id as usize).copied().filter(|m| m.present)
    }

    fn class_of(m: &Meta) -> usize {
        hit_age_to_class(m.last_hit_age.wrapping_add(m.last_last_hit_age))
    }

    /// get_age(): requests since the last access, coarsened, at most MAX_AGE - 1.
    fn get_age(&mut self, m: &Meta) -> u64 {
        let age = self.timestamp.wrapping_sub(m.last_access_time) >> self.age_coarsening_shift;
        if age >= MAX_AGE {
            self.overflows += 1;
            return MAX_AGE - 1;
        }
        age
    }

    /// get_hit_density(): the class's density at the folio's age; 0 at the maximum age.
    fn get_hit_density(&mut self, m: &Meta) -> u64 {
        let age = self.get_age(m);
        if age == MAX_AGE - 1 {
            return 0;
        }
        self.classes[Self::class_of(m)].hit_densities[(age & MAX_AGE_MASK) as usize]
    }

    /// One request (an addition or an access): the clock ticks and, every
    /// REQS_PER_RECONFIG, the model is reconfigured.
    fn request(&mut self) {
        self.timestamp = self.timestamp.wrapping_add(1);
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.next_reconfiguration = REQS_PER_RECONFIG;
            self.num_reconfigurations += 1;
            self.reconfigure();
        }
    }

    /// reconfigure(): decay, adapt the age coarsening, recompute the densities.
    fn reconfigure(&mut self) {
        for c in &mut self.classes {
            for i in 0..MAX_AGE as usize {
                c.hits[i] = ewma_decay(c.hits[i]);
                c.evictions[i] = ewma_decay(c.evictions[i]);
            }
        }
        self.adapt_age_coarsening();
        self.model_hit_density();
        self.overflows = 0;
    }

    /// adapt_age_coarsening(): at the 5th and 25th reconfiguration the shift becomes the
    /// log2 of the objects over MAX_AGE (times the error tolerance), and the counts are
    /// stretched or compressed to the new ages.
    fn adapt_age_coarsening(&mut self) {
        self.ewma_num_objects = ewma_decay(self.ewma_num_objects);
        self.ewma_num_objects_mass = ewma_decay(self.ewma_num_objects_mass);
        self.ewma_num_objects = self.ewma_num_objects.wrapping_add(self.num_objects.wrapping_mul(NUM_OBJECTS_SCALING_FACTOR));
        self.ewma_num_objects_mass += 1;
        let num_objects_coarsening = self.ewma_num_objects / self.ewma_num_objects_mass;
        let optimal_age_coarsening = num_objects_coarsening.wrapping_mul(AGE_COARSENING_ERROR_TOLERANCE) / MAX_AGE;
        if self.num_reconfigurations == 5 || self.num_reconfigurations == 25 {
            let mut log2: u64 = 1;
            while log2 < 63 && (1u64 << log2).wrapping_mul(NUM_OBJECTS_SCALING_FACTOR) < optimal_age_coarsening {
                log2 += 1;
            }
            let delta = log2 as i64 - self.age_coarsening_shift as i64;
            self.age_coarsening_shift = log2;
            self.ewma_num_objects = self.ewma_num_objects.wrapping_mul(8);
            self.ewma_num_objects_mass = self.ewma_num_objects_mass.wrapping_mul(8);
            if delta < 0 {
                self.stretch_distribution((-delta) as u32);
            } else if delta > 0 {
                self.compress_distribution(delta as u32);
            }
        }
    }

    /// stretch_distribution() as cache_ext writes it (a finer age: the counts spread out).
    fn stretch_distribution(&mut self, shift: u32) {
        let div = 1u64.checked_shl(shift).unwrap_or(0).max(1);
        let init_age = MAX_AGE.checked_shr(shift).unwrap_or(0);
        let m = MAX_AGE as usize;
        for c in &mut self.classes {
            for j in init_age..MAX_AGE - 1 {
                c.hits[m - 1] = c.hits[m - 1].wrapping_add(c.hits[j as usize]);
                c.evictions[m - 1] = c.evictions[j as usize];
            }
            for j in 2..=MAX_AGE {
                let index = ((MAX_AGE - j) & MAX_AGE_MASK) as usize;
                let from = (j.checked_shr(shift).unwrap_or(0) & MAX_AGE_MASK) as usize;
                c.hits[index] = c.hits[from] / div;
                c.evictions[index] = c.evictions[from] / div;
            }
        }
    }

    /// compress_distribution() (a coarser age: runs of 2^delta ages add up).
    fn compress_distribution(&mut self, shift: u32) {
        let end = MAX_AGE.checked_shr(shift).unwrap_or(0);
        let run = 1u64.checked_shl(shift).unwrap_or(u64::MAX);
        for c in &mut self.classes {
            for j in 0..end {
                let at = (j & MAX_AGE_MASK) as usize;
                let base = j << shift;
                c.hits[at] = c.hits[(base & MAX_AGE_MASK) as usize];
                c.evictions[at] = c.evictions[(base & MAX_AGE_MASK) as usize];
                for k in 1..run {
                    let from = ((base + k) & MAX_AGE_MASK) as usize;
                    c.hits[at] = c.hits[at].wrapping_add(c.hits[from]);
                    c.evictions[at] = c.evictions[at].wrapping_add(c.evictions[from]);
                }
            }
            for j in end..MAX_AGE - 1 {
                c.hits[j as usize] = 0;
                c.evictions[j as usize] = 0;
            }
        }
    }

    /// model_hit_density(): from the oldest age down, the hits still to come over the
    /// expected remaining lifetime; 0 where too few events were seen.
    fn model_hit_density(&mut self) {
        let m = MAX_AGE as usize;
        for c in &mut self.classes {
            let mut total_hits = c.hits[m - 1];
            let mut total_events = total_hits.wrapping_add(c.evictions[m - 1]);
            let mut lifetime_unconditioned = total_events;
            for j in 2..=MAX_AGE {
                let index = ((MAX_AGE - j) & MAX_AGE_MASK) as usize;
                total_hits = total_hits.wrapping_add(c.hits[index]);
                total_events = total_events.wrapping_add(c.evictions[index]);
                lifetime_unconditioned = lifetime_unconditioned.wrapping_add(total_events);
                c.hit_densities[index] =
                    if total_events > TOTAL_EVENTS_THRESH { total_hits.wrapping_mul(HIT_DENSITY_SCALING_FACTOR) / lifetime_unconditioned.max(1) } else { 0 };
            }
        }
    }
}

impl EvictionPolicy for Lhd {
    fn init(&mut self, _cgroup: &Cgroup) {}

    /// lhd_folio_added(): to the list's tail with a fresh age and the "never hit" hit ages
    /// (0 and MAX_AGE); a request.
    fn folio_added(&mut self, folio: &Folio) {
        if !self.lists.add_tail(self.lhd_list, folio.id) {
            return;
        }
        let i = folio.id as usize;
        if i >= self.meta.len() {
            self.meta.resize((i + 1).max(self.meta.len() * 2), Meta::default());
        }
        self.meta[i] = Meta { present: true, last_access_time: self.timestamp, last_hit_age: 0, last_last_hit_age: MAX_AGE };
        self.num_objects = self.num_objects.wrapping_add(1);
        self.request();
    }

    /// lhd_folio_accessed(): a hit at the folio's age in its (old) class; its hit ages
    /// shift; a request. Only for the accesses cache_ext's hook hears
    /// ([`Access::marks_accessed`]: not a buffered write).
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        if !how.marks_accessed() {
            return;
        }
        let Some(m) = self.get_meta(folio.id) else { return };
        let age = self.get_age(&m);
        let class = Self::class_of(&m);
        let d = &mut self.meta[folio.id as usize];
        d.last_last_hit_age = d.last_hit_age;
        d.last_hit_age = age;
        d.last_access_time = self.timestamp;
        let hits = &mut self.classes[class].hits[age as usize];
        *hits = hits.wrapping_add(HIT_SCALING_FACTOR);
        self.request();
    }

    /// lhd_folio_evicted(): an eviction at the folio's age in its class; the metadata goes
    /// (and, in pagelab, the list node).
    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        self.lists.del(folio.id);
        let Some(m) = self.get_meta(folio.id) else { return };
        let age = self.get_age(&m);
        let c = &mut self.classes[Self::class_of(&m)];
        c.evictions[age as usize] = c.evictions[age as usize].wrapping_add(HIT_SCALING_FACTOR);
        let hit_density = c.hit_densities[age as usize];
        self.num_objects = self.num_objects.wrapping_sub(1);
        self.ewma_victim_hit_density = ewma_decay(self.ewma_victim_hit_density).wrapping_add(rem_ewma_decay(hit_density));
        self.meta[folio.id as usize].present = false;
    }

    /// lhd_evict_folios(): `bpf_cache_ext_list_sample()` with a sample size of 16, the hit
    /// density as the score (`INT64_MAX` without metadata, or for a folio the kernel could
    /// not free now: [`Freeable::now`]).
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        let mut lists = std::mem::take(&mut self.lists);
        let list = self.lhd_list;
        lists.sample(list, SAMPLE_SIZE, nr, out, |id| match self.get_meta(id) {
            _ if !freeable.now(id) => i64::MAX,
            Some(m) => self.get_hit_density(&m).min(i64::MAX as u64) as i64,
            None => i64::MAX,
        });
        self.lists = lists;
    }

    fn state_bytes(&self) -> u64 {
        self.lists.state_bytes() + self.meta.capacity() as u64 * std::mem::size_of::<Meta>() as u64 + self.classes.len() as u64 * MAX_AGE * 24
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "listed": self.lists.len(self.lhd_list),
            "objects": self.num_objects,
            "reconfigurations": self.num_reconfigurations,
            "age_coarsening_shift": self.age_coarsening_shift,
        }))
    }
}
