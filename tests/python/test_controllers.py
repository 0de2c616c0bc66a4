"""Python controllers: classes with `interval` and `tick(now, cgroups)` that read cgroups and
act on them at modeled times (pagelab/controller.py's contract: one test per clause)."""

import pytest

import pagelab

# /app reads a 32M file once at 400 pages a second (about 20 s of modeled time): nothing is
# read twice, so reclaiming it costs no pressure.
COLD = """
[machine]
memory = "256M"
kernel = "{kernel}"
[[cgroup]]
path = "/app"
[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "32M"
distribution = "seq"
ops = 8192
rate_iops = 400
"""


def cold(kernel="6.1"):
    return COLD.format(kernel=kernel)


class Recorder:
    """Records what each tick saw; acts as `act(now, cgroups)` says."""

    interval = 2.0

    def __init__(self, act=None):
        self.seen = []
        self.act = act

    def tick(self, now, cgroups):
        app = cgroups["/app"]
        self.seen.append((now, sorted(cgroups), app.current, app.high, app.max, app.live_tasks, app.stat["inactive_file"], app.pressure["some"]["total"]))
        if self.act:
            self.act(now, cgroups)


def test_shape_a_class_is_instantiated_and_needs_interval_and_tick():
    class Every2s:
        interval = "2s"

        def tick(self, now, cgroups):
            pass

    r = pagelab.run(text=cold(), controllers=[Every2s])
    assert "controller_actions" not in r  # it never acted

    class NoInterval:
        def tick(self, now, cgroups):
            pass

    with pytest.raises(ValueError, match="has no `interval`"):
        pagelab.run(text=cold(), controllers=[NoInterval])
    with pytest.raises(ValueError, match="at least 1 ms"):
        pagelab.run(text=cold(), controllers=[type("Fast", (), {"interval": 0.0, "tick": lambda self, now, cg: None})])


def test_ticks_at_modeled_times_the_same_on_every_run():
    a, b = Recorder(), Recorder()
    pagelab.run(text=cold(), controllers=[a])
    pagelab.run(text=cold(), controllers=[b])
    times = [s[0] for s in a.seen]
    assert times[:3] == [2.0, 4.0, 6.0]
    assert len(times) >= 9
    assert a.seen == b.seen


def test_reads_a_snapshot_of_every_cgroup():
    rec = Recorder()
    r = pagelab.run(text=cold(), controllers=[rec])
    now, paths, current, high, mx, live, inactive_file, some_total = rec.seen[0]
    assert paths == ["/", "/app"]
    # 2 s at 400 pages a second (and readahead ahead of them), all of it in the page cache.
    assert 800 * 4096 <= current <= 32 << 20
    assert (high, mx, live) == (None, None, 1)
    assert inactive_file + 0 <= current
    # memory.current grows as the file is read; the last tick sees about what the report does.
    assert [s[2] for s in rec.seen] == sorted(s[2] for s in rec.seen)
    assert rec.seen[-1][2] <= r["memcg"]["/app"]["memory.current"]


def test_acts_through_the_kernel_paths_in_call_order():
    def act(now, cgroups):
        if now == 4.0:
            cgroups["/app"].reclaim(1 << 20)
            cgroups["/app"].set_high(64 << 20)
        if now == 6.0:
            cgroups["/app"].set_high("max")

    rec = Recorder(act)
    r = pagelab.run(text=cold(), controllers=[rec])
    acts = r["controller_actions"]
    assert [(a["at_s"], a["action"], a["value_bytes"]) for a in acts] == [
        (4.0, "memory.reclaim", 1 << 20),
        (4.0, "memory.high", 64 << 20),
        (6.0, "memory.high", None),
    ]
    assert acts[0]["controller"] == "Recorder" and acts[0]["reclaimed_bytes"] >= 1 << 20 and acts[0]["result"] == "ok"
    # The next tick sees the effect: memory.high set, then "max" again.
    by_time = {s[0]: s for s in rec.seen}
    assert by_time[6.0][3] == 64 << 20 and by_time[8.0][3] is None
    # The writer's reclaim is the cgroup's direct reclaim, as memory.reclaim's is.
    assert r["memcg"]["/app"]["pgsteal_direct"] * 4096 == acts[0]["reclaimed_bytes"]


def test_refused_values_raise_value_error_at_the_call():
    errors = []

    def act(now, cgroups):
        for call in (
            lambda: cgroups["/app"].reclaim(100),
            lambda: cgroups["/app"].reclaim(1 << 20, swappiness=10),  # 6.1
            lambda: cgroups["/"].reclaim(1 << 20),
            lambda: cgroups["/app"].set_high("lots"),
            lambda: cgroups["/app"].set_max(-1),
        ):
            try:
                call()
            except ValueError as e:
                errors.append(str(e))

    rec = Recorder(act)
    r = pagelab.run(text=cold(), controllers=[rec])
    assert "controller_actions" not in r
    assert len(errors) == 5 * len(rec.seen) and rec.seen
    assert "less than a page" in errors[0]
    assert "byte count only" in errors[1]
    assert "root cgroup" in errors[2]
    # 6.12's memory.reclaim takes swappiness=.
    done = []

    def swap_act(now, cgroups):
        if not done:
            cgroups["/app"].reclaim(1 << 20, swappiness=0)
            done.append(now)

    r = pagelab.run(text=cold("6.12"), controllers=[Recorder(swap_act)])
    assert r["controller_actions"][0]["swappiness"] == 0


def test_kill_stops_the_cgroups_tasks_and_is_reported():
    def act(now, cgroups):
        if now == 4.0:
            cgroups["/app"].kill()

    rec = Recorder(act)
    r = pagelab.run(text=cold(), controllers=[rec])
    (k,) = r["controller_actions"]
    assert (k["action"], k["killed_tasks"], k["at_s"]) == ("kill", 1, 4.0)
    (task,) = r["tasks"]
    assert task["oom_killed"] and task["ops"] < 8192 and task["elapsed_s"] < 5.0
    # The kernel's OOM killer did not act: its counters stay at zero.
    assert r["memcg"]["/app"]["memory.events.oom_kill"] == 0 and not r["oom_kills"]


def test_an_exception_ends_the_run_naming_the_controller():
    class Broken:
        interval = 1
        name = "broken-senpai"

        def tick(self, now, cgroups):
            if now >= 3:
                cgroups["/app"].reclaim(1 << 20)  # dropped with the failing tick
                raise KeyError("psi")

    with pytest.raises(RuntimeError, match=r"the controller broken-senpai: tick\(\) at 3.000 s raised KeyError: 'psi'"):
        pagelab.run(text=cold(), controllers=[Broken()])


def test_a_senpai_written_in_python_saves_memory_as_the_built_in_one():
    """katalyst-core's TMO plugin shape: every interval, if some avg60 is below 0.1%, reclaim
    1% of memory.current."""

    class Tmo:
        interval = 2.0

        def tick(self, now, cgroups):
            app = cgroups["/app"]
            if app.pressure["some"]["avg60"] < 0.1 and app.current >= 100 * 4096:
                app.reclaim(app.current // 100)

    plain = pagelab.run(text=cold())
    r = pagelab.run(text=cold(), controllers=[Tmo])
    reclaimed = sum(a["reclaimed_bytes"] for a in r["controller_actions"])
    assert reclaimed > 0
    assert r["memcg"]["/app"]["memory.current"] + reclaimed // 2 < plain["memcg"]["/app"]["memory.current"]
