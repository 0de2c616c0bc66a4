"""The shape of a Python eviction policy behind pagelab's seam, for type checkers.

`pagelab.run(..., policy=MyPolicy)` accepts any object with these methods; subclassing
`Policy` is not needed (it is a `typing.Protocol`). docs/policies.md has the contract.
"""

from __future__ import annotations

from typing import Iterable, Optional, Protocol, Union


class Cgroup(Protocol):
    """A cgroup as `init` and `evict_folios` see it."""

    id: int
    path: str
    #: The effective memory.max in pages: the smallest of the cgroup's and its ancestors',
    #: at most the machine's memory.
    max: int
    #: The machine's task names by `Folio.task` (a workload's name, `name.N` for job N).
    tasks: list

    def freeable(self, folio: Union["Folio", int]) -> bool:
        """During this cgroup's `evict_folios` only (else RuntimeError): whether the kernel
        could free the folio now (its read done, on the LRU, clean, not under writeback), the
        state cache_ext's score functions test before they rank a folio."""
        ...


class Folio(Protocol):
    """A folio as the hooks see it."""

    #: Stable while the folio is resident (its page frame); a candidate is this id.
    id: int
    #: The page across residencies (the same file page has the same key when it comes back).
    key: int
    file: bool
    anon: bool
    #: The file (or anonymous region) index and the page's index in it.
    object: int
    index: int
    #: The path of the cgroup the folio is charged to.
    cgroup: str
    dirty: bool
    mapped: bool
    #: PG_referenced (reclaim found a mapping young).
    referenced: bool
    #: The folio replaced a shadow entry (a refault) ...
    refault: bool
    #: ... and the refault distance said it belongs to the workingset.
    workingset: bool
    #: The folio comes back from reclaim (a candidate the kernel kept).
    putback: bool
    #: The task that touched the folio (an index into `Cgroup.tasks`; None if unknown): in
    #: folio_accessed("read"/"write") the reader or writer, elsewhere the task that brought
    #: the page in (for a readahead page, the task whose read started the readahead).
    task: Optional[int]
    #: "read", "write", "reclaim_referenced" in folio_accessed; "evicted", "freed" in
    #: folio_removed; else None.
    how: Optional[str]


class Policy(Protocol):
    """A page-cache eviction policy, one instance per cgroup (cache_ext's hooks)."""

    def init(self, cgroup: Cgroup) -> None: ...

    # Optional, the sixth hook: `admit_folio(folio) -> bool`. Asked when a read inserts the
    # folio in the page cache; False means it is dropped once a read has copied it (no
    # shadow entry). A policy without it admits everything.

    def folio_added(self, folio: Folio) -> None: ...

    def folio_accessed(self, folio: Folio) -> None: ...

    def folio_removed(self, folio: Folio) -> None: ...

    def evict_folios(self, cgroup: Cgroup, nr: int) -> Optional[Iterable[Union[Folio, int]]]:
        """Up to `nr` candidates (folios or their ids); only the first `nr` are looked at."""
        ...
