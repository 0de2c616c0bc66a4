"""The shape of a Python controller, for type checkers.

`pagelab.run(scenario, controllers=[MyController])` runs controllers: objects that watch the
cgroups and act on them while the workloads run. Subclassing `Controller` is not needed (it
is a `typing.Protocol`). The contract, clause by clause (tests/python/test_controllers.py
has a test named after each):

* **shape**: a class (instantiated once) or an object with `interval` (modeled seconds
  between ticks, a number or a duration string such as "1s", at least 1 ms) and
  `tick(self, now, cgroups)`; an optional `name` names it in the report;
* **ticks at modeled times**: `tick` runs every `interval` of modeled time, first at one
  interval, `now` in modeled seconds, the same calls on any host;
* **reads a snapshot**: `cgroups` maps every cgroup's path (the root "/" too) to a
  `ControlCgroup` read at `now`;
* **acts through the kernel's paths**: a cgroup's `reclaim`, `set_high`, `set_max` and `kill`
  queue an action; the queue runs when `tick` returns, in call order, as a process's write
  to memory.reclaim / memory.high / memory.max or a SIGKILL to the cgroup's tasks would; a
  value the kernel would refuse raises ValueError at the call;
* **every action is reported** in the report's `controller_actions`;
* **an exception ends the run** with a RuntimeError naming the controller and the exception
  (what the failing tick queued is dropped).

docs/controllers.md has the built-in controllers (`[[controller]] kind = "senpai"`, `"oomd"`).
"""

from __future__ import annotations

from typing import Dict, Optional, Protocol, Union


class ControlCgroup(Protocol):
    """A cgroup as a controller's tick reads it. Sizes in bytes."""

    path: str
    #: memory.current.
    current: int
    #: memory.high and memory.max; None for "max".
    high: Optional[int]
    max: Optional[int]
    swap_current: int
    #: Tasks of the cgroup's subtree not exited or killed.
    live_tasks: int
    #: memory.stat keys that need no walk over the pages: the LRU sizes (bytes), workingset
    #: and reclaim events (counts).
    stat: Dict[str, int]
    #: memory.events: low, high, max, oom, oom_kill.
    events: Dict[str, int]
    #: memory.pressure: {"some": {"avg10", "avg60", "avg300", "total"}, "full": {...}};
    #: averages in percent, totals in microseconds.
    pressure: Dict[str, Dict[str, float]]

    def reclaim(self, bytes: int, swappiness: Optional[int] = None) -> None:
        """memory.reclaim: at least 4096 bytes; `swappiness=` (0-200) on 6.12 only."""

    def set_high(self, bytes: Union[int, str, None] = None) -> None:
        """memory.high: bytes, or "max" / None."""

    def set_max(self, bytes: Union[int, str, None] = None) -> None:
        """memory.max: bytes, or "max" / None (over it, reclaim, then the cgroup's OOM killer)."""

    def kill(self) -> None:
        """SIGKILL to every live task of the cgroup's subtree (as systemd-oomd does)."""


class Controller(Protocol):
    """A controller: `interval` and `tick`."""

    #: Modeled seconds between ticks (or a duration string, "1s").
    interval: Union[float, str]

    def tick(self, now: float, cgroups: Dict[str, ControlCgroup]) -> None:
        """Reads the cgroups at modeled time `now` (seconds) and queues actions on them."""
