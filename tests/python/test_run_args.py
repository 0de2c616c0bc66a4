"""pagelab.run takes what `pagelab run` takes, and says clearly what it refuses (issue 40)."""

import tomllib
import warnings

import pytest

import pagelab

SMALL = """
[machine]
memory = "64M"
kernel = "6.1"
policy = "classic"
[[cgroup]]
path = "/c"
max = "8M"
[[workload]]
name = "r"
cgroup = "/c"
kind = "file-read"
file_size = "32M"
distribution = "uniform"
ops = 20000
"""

# A sequential read with readahead: the newest folios are still being read.
SEQ = SMALL.replace('distribution = "uniform"', 'distribution = "seq"').replace("ops = 20000", "ops = 4000")


def test_kernel_memory_and_a_policy_by_name_are_the_command_lines():
    # Before: policy="mglru" failed with "'str' object has no attribute 'init'".
    r = pagelab.run(text=SMALL, kernel="6.12", memory="128M", policy="mglru")
    assert (r["kernel"], r["policy"]) == ("6.12", "mglru")
    same = pagelab.run(text=SMALL, set={"machine.kernel": "6.12", "machine.memory": "128M", "machine.policy": "mglru"})
    assert r["vmstat"] == same["vmstat"]
    assert r["vmstat"] != pagelab.run(text=SMALL)["vmstat"]


def test_a_cgroup_policy_by_name():
    r = pagelab.run(text=SMALL, policies={"/c": "s3fifo"})
    assert "/c" in r["policy_state"]["state"]["seam"]


def test_an_unknown_policy_name_is_a_clear_error():
    with pytest.raises(ValueError, match="nosuch"):
        pagelab.run(text=SMALL, policy="nosuch")


def test_a_dict_is_the_scenarios_tables():
    # Before: a dict was taken for a path.
    d = tomllib.loads(SMALL)
    assert pagelab.run(d)["vmstat"] == pagelab.run(text=SMALL)["vmstat"]


def test_a_scenario_of_another_type_is_refused_clearly():
    with pytest.raises(TypeError, match="expected a path or a dict"):
        pagelab.run(42)


class Returns:
    """A policy whose evict_folios returns `answer`."""

    answer = []

    def init(self, cgroup):
        self.ids = []

    def folio_added(self, folio):
        self.ids.append(folio.id)

    def folio_accessed(self, folio):
        pass

    def folio_removed(self, folio):
        pass

    def evict_folios(self, cgroup, nr):
        return self.answer


@pytest.mark.parametrize("bad, message", [(-1, "item 0 is -1: a folio id is an int from 0 to 4294967295"), (2**40, "a folio id is an int"), ("7", "item 0 is a str")])
def test_a_candidate_that_is_not_an_id_names_the_hook_and_what_was_expected(bad, message):
    # Before: "'int' object has no attribute 'id'".
    policy = type("P", (Returns,), {"answer": [bad]})
    with pytest.raises(RuntimeError, match=r"evict_folios\(\) raised") as e:
        pagelab.run(text=SMALL, policies={"/c": policy})
    assert message in str(e.value)


def test_100k_candidates_a_call_are_looked_at_only_as_far_as_asked():
    # Before: 100,000 invalid ids a call took more than 60 s; each call now reads nr + 1.
    policy = type("P", (Returns,), {"answer": [4294967295] * 100_000})
    with pytest.warns(RuntimeWarning, match="invalid or more than asked for"):
        r = pagelab.run(text=SMALL, policies={"/c": policy})
    c = r["policy_state"]["state"]["seam"]["/c"]["counts"]
    assert c["evicted"] == 0 and c["requests"] > 0
    assert c["candidates"] <= 33 * c["requests"], c


def test_a_policy_whose_candidates_are_kept_warns_once_with_the_counts():
    class MRU(Returns):
        def evict_folios(self, cgroup, nr):
            out = self.ids[-nr:]
            del self.ids[-nr:]
            return out

    with pytest.warns(RuntimeWarning, match=r"cgroup /c: .* kept by the kernel, \d+ of them under read IO") as w:
        r = pagelab.run(text=SEQ, policies={"/c": MRU})
    assert len([x for x in w if "eviction policy" in str(x.message)]) == 1
    assert r["policy_state"]["state"]["seam"]["/c"]["counts"]["kept_locked"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pagelab.run(text=SEQ, policies={"/c": "lru"})


def test_sweep_reports_progress_to_a_callback():
    seen = []
    df = pagelab.sweep(text=SMALL, vary={"machine.memory": ["48M", "64M", "96M"]}, progress=lambda done, total: seen.append((done, total)))
    assert len(df) == 3
    assert seen[-1] == (3, 3) and all(t == 3 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_the_policy_protocol_spells_out_the_hooks_and_fields():
    import pathlib
    import typing

    assert (pathlib.Path(pagelab.__file__).parent / "py.typed").exists()
    assert set(typing.get_type_hints(pagelab.Folio)) >= {"id", "key", "anon", "file", "object", "index", "cgroup", "dirty", "mapped", "referenced", "refault", "workingset", "putback", "how"}
    assert set(typing.get_type_hints(pagelab.Cgroup)) == {"id", "path", "max", "tasks"}
    for hook in ["init", "folio_added", "folio_accessed", "folio_removed", "evict_folios"]:
        assert callable(getattr(pagelab.Policy, hook))
    # The fields the Protocol names are those the seam's Folio has.
    seen = []

    class Spy(Returns):
        def folio_added(self, folio):
            seen.append(folio)

    pagelab.run(text=SMALL.replace("ops = 20000", "ops = 10"), policies={"/c": Spy})
    for field in typing.get_type_hints(pagelab.Folio):
        getattr(seen[0], field)


def test_kernel_7_3_by_name_counts_limit_reclaim_in_vmstat():
    # Issue 44: kernel="7.3" is accepted as the command line's --kernel 7.3 is; its
    # reclaim counters are node statistics, so /proc/vmstat counts the /c limit's reclaim.
    new = pagelab.run(text=SMALL, kernel="7.3")
    old = pagelab.run(text=SMALL, kernel="6.12")
    assert (new["kernel"], old["kernel"]) == ("7.3", "6.12")
    assert old["vmstat"]["pgscan_direct"] == 0
    assert new["vmstat"]["pgscan_direct"] > 0
    with pytest.raises(ValueError, match="7.4"):
        pagelab.run(text=SMALL, kernel="7.4")
