"""How much room a page stream leaves a policy, offline: misses of LRU, an approximation of
the classic active/inactive LRU, cache_ext's sampling LFU and exact LFU on a `page_reads`
trace (crates/pagelab/examples/page_reads.rs: `R PAGE` lines) at a capacity in pages.

    python3 examples/cache_ext/room.py READS.txt 78000 [lru classic lfu20 lfu100 exact]

Not the kernel models (pagelab run --trace runs those, and its plain `lru`, `lfu`, `s3fifo`,
`arc`, `opt` on the same file): `classic` here is an approximation of 6.x's rules for
unmapped page cache, written for this check (docs/journal/2026-11-30-my-ycsb-zipfian.md):
a read inserts at the inactive head, marked referenced (filemap_read()'s
folio_mark_accessed()); a second access while inactive activates; reclaim takes the
inactive tail whatever its referenced bit (folio_check_references() reclaims a referenced
unmapped file folio); the active tail is deactivated while inactive x ratio < active
(inactive_is_low(), ratio 10 for the paper's 10 GiB cgroup); a refault whose distance in
evictions and activations is at most the active list's size is activated
(workingset_refault() without swap). `lfuK` is __bpf_cache_ext_list_sample() with runs of K:
32 requests a reclaim, K nodes each from the head of a FIFO list, the fewest accesses of
each run evicted, the rest put back at the tail in order; a folio starts at 1 access. A read
of the page the previous read ended in is folded (filemap_read() does not mark it again).
"""
import sys, collections, heapq

def load(path):
    """Reads as page numbers, deletions as ~page (negative), writes as (page,)."""
    out, last = [], None
    for line in open(path):
        op, page = line.split()[:2]
        p = int(page)
        if op == "D":
            out.append(~p); last = None
            continue
        if op == "W":
            out.append((p,)); last = None
            continue
        if p != last:          # a read of the page the previous read ended in: not marked again
            out.append(p)
        last = p
    return out

def reads(tr):
    return sum(1 for p in tr if type(p) is int and p >= 0)

def lru(tr, cap):
    c = collections.OrderedDict(); miss = 0
    for p in tr:
        w = type(p) is tuple
        if w: p = p[0]
        elif p < 0: c.pop(~p, None); continue
        if p in c:
            if not w: c.move_to_end(p)   # a write marks nothing
            continue
        miss += not w
        c[p] = 1
        if len(c) > cap: c.popitem(last=False)
    return miss

def classic(tr, cap, ratio=10, refault=True):
    inact = collections.OrderedDict()  # head = last (newest); tail = first
    act = collections.OrderedDict()
    ref = {}
    shadow = {}; age = 0; miss = 0
    def balance():
        while len(inact) * ratio < len(act):
            p, _ = act.popitem(last=False)
            inact[p] = 1
    def shrink():
        nonlocal age
        while len(inact) + len(act) > cap:
            if not inact: balance()
            q, _ = inact.popitem(last=False)
            ref.pop(q, None); shadow[q] = age; age += 1
        balance()
    for p in tr:
        if type(p) is tuple:               # a write: added unreferenced, no access
            p = p[0]
            if p not in inact and p not in act:
                inact[p] = 1; ref[p] = False
                shrink()
            continue
        if p < 0:
            q = ~p
            inact.pop(q, None); act.pop(q, None); ref.pop(q, None); shadow.pop(q, None)
            continue
        if p in inact:
            if ref.get(p):
                del inact[p]; act[p] = 1; ref[p] = False; age += 1
            else:
                ref[p] = True
        elif p in act:
            ref[p] = True
        else:
            miss += 1
            s = shadow.pop(p, None)
            if refault and s is not None and age - s <= len(act):
                act[p] = 1; ref[p] = False; age += 1
            else:
                inact[p] = 1; ref[p] = True   # the read marks it accessed
            shrink()
    return miss

def sampling_lfu(tr, cap, k=20, req=32):
    lst = collections.deque(); cnt = {}; miss = 0; gone = set()
    def make_room():
        if len(cnt) < cap:
            return
        sample = []
        while lst and len(sample) < req * k:
            q = lst.popleft()
            if q in gone: gone.discard(q)   # list_del() when the folio left the cache
            else: sample.append(q)
        victims = set()
        for i in range(0, len(sample) - k + 1, k):
            run = sample[i:i + k]
            victims.add(min(run, key=lambda q: cnt[q]))
        for q in sample:
            if q in victims: del cnt[q]
            else: lst.append(q)
    for p in tr:
        w = type(p) is tuple
        if w: p = p[0]
        elif p < 0:
            if cnt.pop(~p, None) is not None: gone.add(~p)
            continue
        if p in cnt:
            if not w: cnt[p] += 1
            continue
        miss += not w
        make_room()
        cnt[p] = 1; lst.append(p)
    return miss

def exact_lfu(tr, cap):
    cnt = {}; h = []; miss = 0; t = 0
    for p in tr:
        w = type(p) is tuple
        if w: p = p[0]
        elif p < 0: cnt.pop(~p, None); continue
        t += 1
        if p in cnt:
            if not w: cnt[p][0] += 1; heapq.heappush(h, (cnt[p][0], cnt[p][1], p))
            continue
        miss += not w
        while len(cnt) >= cap:
            c, tt, q = heapq.heappop(h)
            if q in cnt and cnt[q][0] == c and cnt[q][1] == tt: del cnt[q]
        cnt[p] = [1, t]; heapq.heappush(h, (1, t, p))
    return miss

def opt(tr, cap):
    nxt = [0] * len(tr); last = {}
    for i in range(len(tr) - 1, -1, -1):
        p = tr[i]
        w = type(p) is tuple
        p = p[0] if w else p
        if p < 0: last.pop(~p, None); continue   # a deleted page is never read again
        nxt[i] = last.get(p, float("inf"))
        if w: last.pop(p, None)   # a write makes the page; no read before it can hit
        else: last[p] = i
    cached = {}; h = []; miss = 0
    for i, p in enumerate(tr):
        w = type(p) is tuple
        p = p[0] if w else p
        if p < 0: cached.pop(~p, None); continue
        if w:
            # A written page joins the cache and competes with it: it leaves first when
            # its next read is the farthest.
            if p not in cached:
                cached[p] = nxt[i]; heapq.heappush(h, (-nxt[i], p))
                evict(cached, h, cap)
            continue
        if p not in cached:
            miss += 1
            evict(cached, h, cap - 1)
        cached[p] = nxt[i]; heapq.heappush(h, (-nxt[i], p))
    return miss

def evict(cached, h, keep):
    while len(cached) > keep:
        n, q = heapq.heappop(h)
        if cached.get(q) == -n: del cached[q]

if __name__ == "__main__":
    tr = load(sys.argv[1]); cap = int(sys.argv[2])
    which = sys.argv[3:] or ["lru", "classic", "lfu20", "lfu100", "exact"]
    n = reads(tr)
    for w in which:
        f = {"lru": lambda: lru(tr, cap), "classic": lambda: classic(tr, cap),
             "lfu20": lambda: sampling_lfu(tr, cap, 20), "lfu100": lambda: sampling_lfu(tr, cap, 100),
             "exact": lambda: exact_lfu(tr, cap), "opt": lambda: opt(tr, cap)}[w]
        m = f()
        print(f"{w:18s} misses {m:9,d}  miss ratio {m / n:.4f}", flush=True)
