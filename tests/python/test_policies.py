"""Python eviction policies inside the kernel model (the cache_ext-shaped seam)."""

import pytest

import pagelab

# A looping scan 1.25x larger than its cgroup: 2500 pages read in order, four times over,
# in a 2000-page cgroup, without readahead.
LOOP = """
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
[[cgroup]]
path = "/scan"
max = "2000p"
[[workload]]
name = "loop"
cgroup = "/scan"
kind = "file-read"
file_size = "2500p"
block_size = "4k"
distribution = "loop"
fadvise = "random"
ops = 10000
"""


class MRU:
    """Evict the most recently used page: the right policy for a loop larger than memory."""

    def init(self, cgroup):
        self.stack = {}  # folio id -> None, in recency order (dicts keep insertion order)

    def folio_added(self, folio):
        self.stack[folio.id] = None

    def folio_accessed(self, folio):
        if folio.id in self.stack:
            del self.stack[folio.id]
            self.stack[folio.id] = None

    def folio_removed(self, folio):
        self.stack.pop(folio.id, None)

    def evict_folios(self, cgroup, nr):
        out = []
        while self.stack and len(out) < nr:
            out.append(self.stack.popitem()[0])  # the most recent
        return out


def refaults(report, cgroup="/scan"):
    return report["memcg"][cgroup]["workingset_refault_file"]


def test_a_python_mru_refaults_less_than_classic_on_a_loop_larger_than_its_cgroup():
    classic = pagelab.run(text=LOOP)
    mru = pagelab.run(text=LOOP, policies={"/scan": MRU})
    assert mru["policy"] == "python"
    assert refaults(classic) >= 7000  # every read after the first pass refaults
    assert refaults(mru) < refaults(classic) / 2
    # The machine's own counters are there as for any run.
    assert mru["memcg"]["/scan"]["pgsteal"] > 0


def test_the_registrys_mru_and_the_python_mru_agree():
    rust = pagelab.run(text=LOOP.replace('path = "/scan"', 'path = "/scan"\npolicy = "mru"'))
    py = pagelab.run(text=LOOP, policies={"/scan": MRU})
    assert refaults(rust) == refaults(py)


def test_a_policy_for_every_cgroup_and_folio_fields():
    seen = []

    class Probe(MRU):
        def folio_added(self, folio):
            seen.append(folio)
            super().folio_added(folio)

    pagelab.run(text=LOOP.replace("ops = 10000", "ops = 6000"), policy=Probe)
    f = seen[0]
    assert f.file and not f.anon and f.cgroup == "/scan" and f.index == 0
    assert isinstance(f.id, int) and not f.dirty and not f.mapped
    assert any(s.refault for s in seen), "refaults are flagged"


def test_an_exception_in_a_hook_is_a_clear_error():
    class Broken(MRU):
        def evict_folios(self, cgroup, nr):
            raise ValueError("no idea")

    with pytest.raises(RuntimeError) as e:
        pagelab.run(text=LOOP, policies={"/scan": Broken})
    msg = str(e.value)
    assert "/scan" in msg and "Broken.evict_folios" in msg and "ValueError: no idea" in msg


def test_unknown_cgroups_and_missing_methods_are_named():
    with pytest.raises(ValueError, match="/nope"):
        pagelab.run(text=LOOP, policies={"/nope": MRU})

    class NoInit:
        pass

    with pytest.raises(RuntimeError, match="init"):
        pagelab.run(text=LOOP, policies={"/scan": NoInit})


def test_the_registry_lists_every_policy():
    names = {p["name"]: p["runs"] for p in pagelab.policies()}
    assert names["classic"] == "both" and names["opt"] == "trace"
    for n in ["lru", "fifo", "clock", "sieve", "s3fifo", "arc", "mru", "lfu"]:
        assert names[n] == "both"


def test_a_python_policys_state_goes_into_the_reports_policy_state():
    class CountingMRU(MRU):
        def state(self):
            return {"resident": len(self.stack)}

    class BadState(MRU):
        def state(self):
            raise RuntimeError("no state today")

    r = pagelab.run(text=LOOP, policies={"/scan": CountingMRU})
    seam = r["policy_state"]["state"]["seam"]["/scan"]
    assert seam["state"]["resident"] * 4096 == r["memcg"]["/scan"]["file"]
    assert r["series"][-1]["policy_state"]["seam"]["/scan"]["state"]["resident"] > 0

    bad = pagelab.run(text=LOOP, policies={"/scan": BadState})
    assert "no state today" in bad["policy_state"]["state"]["seam"]["/scan"]["state"]["error"]
    assert refaults(bad) == refaults(r), "state() is read-only: the counters do not depend on it"


def test_a_policy_that_defers_eviction_keeps_the_classic_lrus_counters_and_hears_the_hooks():
    class Registry:
        """cache_ext's no-op policy in Python: a registry, no choices."""

        defers_eviction = True

        def init(self, cgroup):
            self.held, self.added, self.removed = set(), 0, 0

        def folio_added(self, folio):
            self.held.add(folio.id)
            self.added += 1

        def folio_accessed(self, folio):
            pass

        def folio_removed(self, folio):
            self.held.discard(folio.id)
            self.removed += 1

        def evict_folios(self, cgroup, nr):
            raise AssertionError("a deferring policy is never asked for candidates")

        def state(self):
            return {"held": len(self.held), "added": self.added, "removed": self.removed}

    classic = pagelab.run(text=LOOP)
    deferring = pagelab.run(text=LOOP, policies={"/scan": Registry})
    assert deferring["vmstat"] == classic["vmstat"]
    seam = deferring["policy_state"]["state"]["seam"]["/scan"]
    assert seam["counts"]["requests"] == 0
    own = seam["state"]
    assert own["removed"] >= classic["vmstat"]["pgsteal_file"] > 0
    assert own["held"] * 4096 <= deferring["memcg"]["/scan"]["file"]
