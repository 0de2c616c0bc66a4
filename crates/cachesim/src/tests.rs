use super::*;

fn run_pages(policy: PolicyKind, cap: u64, pages: &[u32]) -> (u64, Box<dyn Cache + Send>) {
    let mut c = new_cache(policy, cap, 4);
    let next = next_access(pages);
    // Small batches, so batch boundaries are exercised too.
    let mut misses = 0;
    for (b, n) in pages.chunks(7).zip(next.chunks(7)) {
        misses += c.access_batch(b, Some(n));
    }
    c.check().unwrap();
    (misses, c)
}

/// Misses of a list-based LRU written the obvious way.
fn naive_lru(cap: usize, pages: &[u32]) -> u64 {
    let mut v: Vec<u32> = Vec::new();
    let mut misses = 0;
    for &p in pages {
        if let Some(i) = v.iter().position(|&q| q == p) {
            v.remove(i);
        } else {
            misses += 1;
            if v.len() == cap {
                v.pop();
            }
        }
        if cap > 0 {
            v.insert(0, p);
        }
    }
    misses
}

/// Belady written the obvious way: evict the resident page used farthest in the future.
fn naive_opt(cap: usize, pages: &[u32]) -> u64 {
    let mut v: Vec<u32> = Vec::new();
    let mut misses = 0;
    for (i, &p) in pages.iter().enumerate() {
        if v.contains(&p) {
            continue;
        }
        misses += 1;
        if cap == 0 {
            continue;
        }
        if v.len() == cap {
            let far = |q: u32| pages[i + 1..].iter().position(|&r| r == q).unwrap_or(usize::MAX);
            let j = (0..v.len()).max_by_key(|&j| far(v[j])).unwrap();
            v.remove(j);
        }
        v.push(p);
    }
    misses
}

fn random_pages(n: usize, pages: u32, seed: u64) -> Vec<u32> {
    let mut x = pagelab_host::xorshift::XorShift64::new(seed | 1);
    (0..n)
        .map(|_| {
            let r = x.next_f64();
            (r * r * pages as f64) as u32
        })
        .collect()
}

#[test]
fn lru_by_hand() {
    // cap 3: a b c a d b e a b c d e
    let t = [0, 1, 2, 0, 3, 1, 4, 0, 1, 2, 3, 4];
    // a m, b m, c m, a h, d m (evict b), b m (evict c), e m (evict a), a m (evict d),
    // b h, c m (evict e), d m (evict a), e m (evict b)
    let (misses, _) = run_pages(PolicyKind::Lru, 3, &t);
    assert_eq!(misses, 10);
    let mut l = Lru::new(3, 0);
    for p in t {
        l.access(p);
    }
    assert_eq!(l.order(), vec![4, 3, 2]);
}

#[test]
fn opt_by_hand() {
    // The classic textbook string, 3 frames: OPT takes 9 faults.
    let t = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1];
    assert_eq!(run_pages(PolicyKind::Opt, 3, &t).0, 9);
    assert_eq!(run_pages(PolicyKind::Lru, 3, &t).0, 12);
    assert_eq!(run_pages(PolicyKind::Fifo, 3, &t).0, 15);
}

#[test]
fn opt_keeps_one_heap_entry_per_page_when_next_times_repeat() {
    // A trace whose next-access fields all say "never" (-1) though pages come back: each hit
    // must not add a live duplicate, or the heap outgrows every compaction and each access
    // rebuilds it (a 1M-access trace took minutes).
    let mut o = Opt::new(4, 8);
    for i in 0..100_000u32 {
        o.access(i % 6, -1);
    }
    assert!(o.heap.len() <= 2 * 4 + 1024, "heap holds {} entries", o.heap.len());
}

#[test]
fn clock_by_hand() {
    // cap 2: a m, b m, a h (ref); c m: the hand clears a's bit, evicts b, c takes its slot;
    // a h (ref again); b m: the hand clears a's bit, evicts c; a h.
    let mut c = Clock::new(2, 0);
    let hits: Vec<bool> = [0, 1, 0, 2, 0, 1, 0].iter().map(|&p| c.access(p)).collect();
    assert_eq!(hits, [false, false, true, false, true, false, true]);
}

#[test]
fn zero_capacity_misses_everything() {
    for p in PolicyKind::ALL {
        assert_eq!(run_pages(p, 0, &[1, 1, 1]).0, 3, "{p:?}");
    }
}

#[test]
fn lru_and_opt_equal_the_obvious_implementations_on_random_traces() {
    for seed in 1..6 {
        let t = random_pages(3000, 200, seed);
        for cap in [1, 2, 7, 50, 199, 250] {
            assert_eq!(run_pages(PolicyKind::Lru, cap as u64, &t).0, naive_lru(cap, &t), "lru seed {seed} cap {cap}");
            assert_eq!(run_pages(PolicyKind::Opt, cap as u64, &t).0, naive_opt(cap, &t), "opt seed {seed} cap {cap}");
        }
    }
}

#[test]
fn opt_never_misses_more_than_lru_fifo_or_clock() {
    let t = random_pages(20_000, 2000, 9);
    for cap in [10, 100, 1000] {
        let opt = run_pages(PolicyKind::Opt, cap, &t).0;
        for p in [PolicyKind::Lru, PolicyKind::Fifo, PolicyKind::Clock] {
            assert!(opt <= run_pages(p, cap, &t).0, "{p:?} cap {cap}");
        }
    }
}

/// SIEVE written the obvious way: a vector from the newest page to the oldest, the hand an
/// index into it (None: start at the oldest).
fn naive_sieve(cap: usize, pages: &[u32]) -> u64 {
    let (mut q, mut visited): (Vec<u32>, std::collections::HashSet<u32>) = (Vec::new(), Default::default());
    let (mut hand, mut misses): (Option<usize>, u64) = (None, 0);
    for &p in pages {
        if q.contains(&p) {
            visited.insert(p);
            continue;
        }
        misses += 1;
        if cap == 0 {
            continue;
        }
        if q.len() == cap {
            let mut i = hand.unwrap_or(q.len() - 1);
            while visited.remove(&q[i]) {
                i = if i == 0 { q.len() - 1 } else { i - 1 };
            }
            q.remove(i);
            // The hand moves on towards the newest page; past it, it starts over.
            hand = i.checked_sub(1);
        }
        q.insert(0, p);
        hand = hand.map(|h| h + 1);
    }
    misses
}

#[test]
fn sieve_by_hand() {
    // cap 3: a b c fill the queue [c b a] (newest first); a hit marks a. d: the hand starts
    // at the oldest (a), clears its mark, moves on to b and evicts it, and rests at c: [d c a].
    // e: c is unmarked, evicted: [e d a]. c misses and evicts d; f evicts e: a, the oldest,
    // outlives three newer pages because it was used once.
    let mut c = Sieve::new(3, 0);
    let hits: Vec<bool> = [0, 1, 2, 0, 3, 4, 2, 5].iter().map(|&p| c.access(p)).collect();
    assert_eq!(hits, [false, false, false, true, false, false, false, false]);
    assert_eq!(c.order(), vec![5, 2, 0]);
    c.check().unwrap();
}

#[test]
fn sieve_equals_the_obvious_implementation_on_random_traces() {
    for seed in 1..6 {
        let t = random_pages(3000, 200, seed);
        for cap in [1, 2, 7, 50, 199, 250] {
            assert_eq!(run_pages(PolicyKind::Sieve, cap as u64, &t).0, naive_sieve(cap, &t), "seed {seed} cap {cap}");
        }
    }
}

#[test]
fn s3fifo_promotes_pages_used_twice_and_remembers_one_hit_wonders() {
    // 20 pages: small is full at 2 (10% of the bytes), main holds 18, the ghost 18.
    let mut c = S3Fifo::new(20, 0);
    // Filling: small takes 0 and 1; then, small full and nothing evicted yet, 2..19 go to
    // main.
    for p in 0..20 {
        assert!(!c.access(p));
    }
    assert_eq!(c.queues(), (vec![0, 1], (2..20).collect::<Vec<_>>()));
    assert!(c.access(0) && c.access(0), "page 0 is used twice in small");
    // A miss makes room from small: 0 (used twice) moves to main, 1 (unused) leaves for
    // the ghost; 20 enters small.
    assert!(!c.access(20));
    assert_eq!(c.queues(), (vec![20], (2..20).chain([0]).collect::<Vec<_>>()));
    // A ghost hit returns 1 straight to main; main, over its size, loses its oldest unused
    // page, 2.
    assert!(!c.access(1));
    assert_eq!(c.queues(), (vec![20], (3..20).chain([0, 1]).collect::<Vec<_>>()));
    // A scan of pages used once: the first miss brings main back to its size (3 leaves),
    // then the scan flows through small and into the ghost, and main keeps the rest.
    for p in 100..118 {
        assert!(!c.access(p));
    }
    assert_eq!(c.queues(), (vec![116, 117], (4..20).chain([0, 1]).collect::<Vec<_>>()));
    assert!(c.access(0) && c.access(19), "main survived the scan");
    assert!(!c.access(3));
    c.check().unwrap();
    assert_eq!(c.resident(), 20);
}

#[test]
fn s3fifo_caches_nothing_when_its_small_queue_cannot_hold_a_page() {
    // libCacheSim admits into small only an object smaller than small: 10 pages give a small
    // queue of exactly one page, so nothing is ever cached; 11 pages cache.
    assert_eq!(run_pages(PolicyKind::S3Fifo, 10, &[1, 1, 1, 2, 2]).0, 5);
    assert_eq!(run_pages(PolicyKind::S3Fifo, 11, &[1, 1, 1, 2, 2]).0, 2);
}

/// ARC as the paper's pseudo-code reads, on vectors (most recent first) rather than linked
/// lists; p in whole pages.
fn naive_arc(c: usize, pages: &[u32]) -> u64 {
    let [mut t1, mut t2, mut b1, mut b2]: [Vec<u32>; 4] = Default::default();
    let mut p = 0usize;
    let mut misses = 0;
    fn take(v: &mut Vec<u32>, x: u32) -> bool {
        v.iter().position(|&y| y == x).map(|i| v.remove(i)).is_some()
    }
    let replace = |t1: &mut Vec<u32>, t2: &mut Vec<u32>, b1: &mut Vec<u32>, b2: &mut Vec<u32>, p: usize, in_b2: bool| {
        if !t1.is_empty() && (t1.len() > p || (t1.len() == p && in_b2)) || t2.is_empty() {
            let v = t1.pop().unwrap();
            b1.insert(0, v);
        } else {
            let v = t2.pop().unwrap();
            b2.insert(0, v);
        }
    };
    for &x in pages {
        if take(&mut t1, x) || take(&mut t2, x) {
            t2.insert(0, x);
            continue;
        }
        misses += 1;
        if c == 0 {
            continue;
        }
        if take(&mut b1, x) {
            p = (p + (b2.len() / (b1.len() + 1)).max(1)).min(c);
            replace(&mut t1, &mut t2, &mut b1, &mut b2, p, false);
            t2.insert(0, x);
        } else if take(&mut b2, x) {
            p = p.saturating_sub((b1.len() / (b2.len() + 1)).max(1));
            replace(&mut t1, &mut t2, &mut b1, &mut b2, p, true);
            t2.insert(0, x);
        } else {
            if t1.len() + b1.len() == c {
                if t1.len() < c {
                    b1.pop();
                    replace(&mut t1, &mut t2, &mut b1, &mut b2, p, false);
                } else {
                    t1.pop();
                }
            } else if t1.len() + t2.len() + b1.len() + b2.len() >= c {
                if t1.len() + t2.len() + b1.len() + b2.len() == 2 * c {
                    b2.pop();
                }
                replace(&mut t1, &mut t2, &mut b1, &mut b2, p, false);
            }
            t1.insert(0, x);
        }
    }
    misses
}

#[test]
fn arc_equals_the_papers_pseudo_code_on_random_traces() {
    for seed in 1..6 {
        let t = random_pages(3000, 200, seed);
        for cap in [1, 2, 7, 50, 199, 250] {
            let (misses, c) = run_pages(PolicyKind::Arc, cap as u64, &t);
            assert_eq!(misses, naive_arc(cap, &t), "seed {seed} cap {cap}");
            assert!(c.resident() <= cap as u64);
        }
    }
}

#[test]
fn arc_adapts_its_target_to_ghost_hits() {
    // cap 4: a b c d fill T1; a and b again move to T2; e and f evict c, d to B1 (T1 over
    // its target 0); c again is a B1 hit: the target grows by one page and c joins T2.
    let mut a = Arc::new(4, 0);
    for x in [0, 1, 2, 3, 0, 1, 4, 5] {
        a.access(x);
    }
    let ([t1, t2, b1, b2], p) = a.lists();
    assert_eq!((t1, t2, b1, b2, p), (vec![5, 4], vec![1, 0], vec![3, 2], vec![], 0.0));
    assert!(!a.access(2));
    let ([t1, t2, b1, _], p) = a.lists();
    assert_eq!((t1, t2, b1, p), (vec![5], vec![2, 1, 0], vec![4, 3], 1.0));
    // libCacheSim's byte-granular target moves 1/4096 of a page instead.
    let mut lcs = Arc::with_step(4, 0, 1);
    for x in [0, 1, 2, 3, 0, 1, 4, 5, 2] {
        lcs.access(x);
    }
    assert_eq!(lcs.lists().1, 1.0 / 4096.0);
}

/// A trace in memory as a page source.
struct Mem(Vec<u32>, bool);

impl PageSource for Mem {
    fn pages(&self) -> Option<u64> {
        None
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, TraceError> {
        if self.1 {
            return Ok(None);
        }
        self.1 = true;
        Ok(Some(&self.0))
    }
    fn pages_seen(&self) -> u64 {
        self.0.iter().map(|&p| p as u64 + 1).max().unwrap_or(0)
    }
}

#[test]
fn a_multi_threaded_sweep_equals_the_single_threaded_one() {
    let t = random_pages(50_000, 5000, 3);
    let points: Vec<(PolicyKind, u64)> = PolicyKind::ALL.iter().flat_map(|&p| [50u64, 500, 2000].map(move |c| (p, c))).collect();
    let open = || -> Result<Box<dyn PageSource>, TraceError> { Ok(Box::new(Mem(t.clone(), false))) };
    let one = sweep(&open, &points, 1).unwrap();
    let many = sweep(&open, &points, 4).unwrap();
    assert_eq!(one, many);
    for (s, &(p, c)) in one.iter().zip(&points) {
        assert_eq!((s.policy, s.capacity, s.ops), (p.name(), c, 50_000));
        assert_eq!(s.misses, run_pages(p, c, &t).0);
    }
}

/// Object ids that stress the table: multiples of a constant (as trace generators make
/// them, which one-multiply hashing clusters) and ids that differ only in high bits.
fn awkward_keys(t: &[u32], shape: u32) -> Vec<u64> {
    t.iter()
        .map(|&p| match shape {
            0 => (p as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            1 => (p as u64) << 40,
            _ => p as u64,
        })
        .collect()
}

/// Every (random trace, id shape, capacity) case the keyed caches are checked on: the trace
/// as dense pages and as object ids, and a label. The capacities include small caches and
/// one large enough to make a table grow from its first size.
fn keyed_cases(mut check: impl FnMut(&[u32], &[u64], u64, &str)) {
    for seed in 1..4 {
        let t = random_pages(20_000, 3000, seed);
        for shape in 0..3 {
            let keys = awkward_keys(&t, shape);
            for cap in [1, 3, 64, 1000, 2999, 5000] {
                check(&t, &keys, cap, &format!("seed {seed} shape {shape} cap {cap}"));
            }
        }
    }
}

#[test]
fn keyed_lru_equals_the_dense_lru_access_for_access() {
    keyed_cases(|t, keys, cap, case| {
        let mut dense = Lru::new(cap, 0);
        let mut keyed = keyed::KeyedLru::new(cap);
        for (i, (&p, &k)) in t.iter().zip(keys).enumerate() {
            assert_eq!(keyed.access(k), dense.access(p), "{case} access {i}");
        }
        keyed.check().unwrap();
        let want: Vec<u64> = dense.order().iter().map(|&p| keys[t.iter().position(|&q| q == p).unwrap()]).collect();
        assert_eq!(keyed.order(), want, "{case}: recency order");
        assert_eq!((keyed.evictions(), keyed.resident()), (dense.evictions(), dense.resident()), "{case}");
    });
}

#[test]
fn keyed_lru_grows_past_its_first_table_and_keeps_the_order() {
    // Capacity above the first table's 2^20 objects: the table doubles while it fills.
    let n = (1u64 << 20) + 5000;
    let mut c = keyed::KeyedLru::new(n + 10);
    for k in 0..n {
        assert!(!c.access(k * 7919));
    }
    c.check().unwrap();
    assert!(c.access(0) && c.access((n - 1) * 7919));
    let order = c.order();
    assert_eq!(order.len() as u64, n);
    assert_eq!(&order[..3], &[(n - 1) * 7919, 0, (n - 2) * 7919]);
    assert_eq!(c.evictions(), 0);
}

#[test]
fn keyed_runs_of_a_file_match_the_id_mapped_runs() {
    let t = random_pages(30_000, 4000, 11);
    let keys = awkward_keys(&t, 0);
    let dir = tempfile::Builder::new().prefix("pagelab-keyed-test-").tempdir().unwrap();
    let path = dir.path().join("t.oracleGeneral");
    let mut recs = pagelab_trace::with_next_access(&keys, 4096);
    recs[7].obj_size = 0;
    pagelab_trace::write_oracle(&path, recs, None).unwrap();
    for cap in [0, 10, 500, 3999] {
        for policy in [PolicyKind::Lru, PolicyKind::Fifo, PolicyKind::Clock] {
            let (st, zero) = keyed::run(&path, policy, cap).unwrap().unwrap();
            let mut src = pagelab_trace::OracleSource::open(&path, false).unwrap();
            let want = run(&mut src, policy, cap).unwrap();
            assert_eq!((st.ops, st.misses, st.hits, st.evictions), (want.ops, want.misses, want.hits, want.evictions), "{policy:?} cap {cap}");
            assert_eq!((zero, st.pages, st.policy), (1, None, policy.name()));
        }
        assert_eq!(run_pages(PolicyKind::Lru, cap, &t).0, naive_lru(cap as usize, &t));
        assert!(keyed::run(&path, PolicyKind::Opt, cap).is_none());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keyed_fifo_and_clock_equal_the_dense_ones_access_for_access() {
    keyed_cases(|t, keys, cap, case| {
        let (mut fifo, mut clock) = (Fifo::new(cap, 0), Clock::new(cap, 0));
        let (mut kfifo, mut kclock) = (keyed::KeyedRing::fifo(cap), keyed::KeyedRing::clock(cap));
        for (i, (&p, &k)) in t.iter().zip(keys).enumerate() {
            assert_eq!(kfifo.access(k), fifo.access(p), "fifo {case} access {i}");
            assert_eq!(kclock.access(k), clock.access(p), "clock {case} access {i}");
        }
        kfifo.check().unwrap();
        kclock.check().unwrap();
        assert_eq!(kfifo.resident(), fifo.resident(), "fifo {case}");
        assert_eq!(kclock.resident(), clock.resident(), "clock {case}");
        assert_eq!(keyed::KeyedCache::evictions(&kclock), clock.evictions(), "clock {case}");
    });
}

#[test]
fn keyed_clock_gives_a_referenced_object_a_second_chance() {
    // The dense CLOCK's hand-computed case, by object id: cap 2, a b a c a b a.
    let mut c = keyed::KeyedRing::clock(2);
    let hits: Vec<bool> = [10, 20, 10, 30, 10, 20, 10].iter().map(|&k| c.access(k)).collect();
    assert_eq!(hits, [false, false, true, false, true, false, true]);
    c.check().unwrap();
    assert_eq!(c.order(), vec![(10, true), (20, false)]);
}
