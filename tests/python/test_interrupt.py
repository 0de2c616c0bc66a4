"""Ctrl-C stops pagelab's long calls with KeyboardInterrupt, and no call panics (issue 16)."""
import os
import signal
import subprocess
import sys
import time

import pytest

import pagelab

LONG = """
[machine]
memory = "64M"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "256M"
distribution = "uniform"
ops = 500000000
"""

CHILD = r"""
import sys, pagelab
print("started", flush=True)
try:
    if sys.argv[1] == "run":
        pagelab.run(text=sys.argv[2])
    else:
        pagelab.sweep(text=sys.argv[2], vary={"machine.memory": ["48M", "64M"]})
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def default_sigint():
    # The child starts as a Python started from a terminal does. Under a shell's background
    # job (`./test.sh &`), SIGINT arrives ignored, the child's Python keeps it ignored, and
    # Ctrl-C could not reach pagelab at all.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("call", ["run", "sweep"])
def test_ctrl_c_stops_a_long_call_with_keyboard_interrupt(call):
    # The run would take many minutes; SIGINT must end it with KeyboardInterrupt, not run on.
    p = subprocess.Popen([sys.executable, "-c", CHILD, call, LONG], stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert p.stdout.readline().strip() == "started"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert out.strip() == "interrupted"


def test_compare_of_nothing_is_a_value_error():
    with pytest.raises(ValueError, match="at least one report"):
        pagelab.compare([])


def test_compare_with_the_wrong_number_of_labels_is_a_value_error(tmp_path):
    r = tmp_path / "r.json"
    r.write_text("{}")
    with pytest.raises(ValueError):
        pagelab.compare([str(r)], labels=["a", "b"])


MEDIUM = LONG.replace("ops = 500000000", "ops = 12000000")  # about 4 s: still running at the stop

THREADS = r"""
import sys, threading, time, pagelab
medium = sys.argv[2]
out = {}
def other():
    # Starts while the main thread's run is going, and goes on after that run is stopped.
    try:
        out["ops"] = pagelab.run(text=medium)["ops"]
    except BaseException as e:
        out["ops"] = repr(e)
t = threading.Thread(target=other)
t.start()
print("started", flush=True)
try:
    pagelab.run(text=sys.argv[1])
    print("main finished", flush=True)
except KeyboardInterrupt:
    print("main interrupted", flush=True)
t.join()
print("other", out["ops"], flush=True)
"""


def test_a_stop_belongs_to_one_run_and_another_threads_run_completes():
    # Issue 40: the stop flag was process-wide, and the other thread's run returned a
    # truncated report as if normal (6,447,104 of 20,000,000 ops).
    p = subprocess.Popen([sys.executable, "-c", THREADS, LONG, MEDIUM], stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert p.stdout.readline().strip() == "started"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=300)
    assert out.split("\n")[:2] == ["main interrupted", "other 12000000"], out
