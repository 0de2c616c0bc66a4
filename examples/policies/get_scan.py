"""cache_ext's GET-SCAN policy (policies/cache_ext_get_scan.bpf.c of cache-ext/cache_ext,
SOSP '25), ported line by line onto pagelab.Lists, and run on get-scan.toml: a GET task
reading a database file at random (Zipf) and a SCAN task reading the same file in order,
in one cgroup. The application tells the policy which threads scan (cache_ext's `scan_pids`
map; here the task names); their folios go to a list of their own, which is evicted first
once it holds 5,000 folios.

    python3 examples/policies/get_scan.py

What differs from the BPF program: every page-cache folio of the cgroup is the policy's
(cache_ext watches one directory's files); anonymous folios are not listed, as cache_ext's
hooks see page cache only (pagelab's seam hands a policy its cgroup's anon too: listed,
a scan thread's heap filled the scan list with folios reclaim cannot free without swap —
shrink_folio_list() activates an anon folio add_to_swap() cannot place — and the memcg
OOMed); the score's bonus for a file's last page (LevelDB's index
block) is left out (pagelab's files have no index block there); with no scan folio at all
the general list is sampled (the BPF program returns no candidate, which here would be the
cgroup's OOM).
"""

import pathlib

import pagelab

INT64_MAX = 2**63 - 1
LIST_GENERAL, LIST_FOR_SCANS, NUM_LISTS = 0, 1, 2


class GetScan:
    """`scan_tasks`: the names of the tasks that scan (workloads, or jobs: "leveldb.0"). `scan_threshold`: the scan list is
    evicted from once it holds this many folios (cache_ext: 1,000 × the sampling rate, in a
    10 GiB cgroup)."""

    def __init__(self, scan_tasks=("scan",), scan_threshold=1000 * 5):
        self.scan_names = set(scan_tasks)
        self.scan_threshold = scan_threshold

    def init(self, cgroup):  # mixed_init
        self.lists = pagelab.Lists()
        self.sampling_list_map = [self.lists.create() for _ in range(NUM_LISTS)]
        # scan_pids: the tasks the application registered as scanners, by workload name (a
        # job of a workload with several jobs is "name.N") or by a job's own ("leveldb.0":
        # the scan thread of examples/cache_ext/get-scan-lsm.toml's store).
        self.scan_pids = {t for t, name in enumerate(cgroup.tasks) if name in self.scan_names or name.split(".")[0] in self.scan_names}
        self.folio_metadata_map = {}  # folio id -> [accesses, touched_by_scan]
        self.scan_pages = 0
        self.evicted = [0, 0]

    def is_scanning_pid(self, folio):
        return folio.task in self.scan_pids

    def folio_added(self, folio):  # mixed_folio_added
        if folio.anon:
            return  # cache_ext's hooks are page cache only
        list_type = LIST_GENERAL
        touched_by_scan = self.is_scanning_pid(folio)
        if touched_by_scan:
            list_type = LIST_FOR_SCANS
        sampling_list = self.sampling_list_map[list_type]
        if not self.lists.add_tail(sampling_list, folio):
            return  # already listed: a candidate the kernel kept comes back
        if touched_by_scan:
            self.scan_pages += 1
        self.folio_metadata_map[folio.id] = [1, touched_by_scan]

    def folio_accessed(self, folio):  # mixed_folio_accessed
        if folio.anon:
            return
        meta = self.folio_metadata_map.setdefault(folio.id, [0, False])
        meta[0] += 1

    def folio_removed(self, folio):  # mixed_folio_evicted
        self.lists.delete(folio)
        meta = self.folio_metadata_map.pop(folio.id, None)
        touched_by_scan = bool(meta and meta[1])
        if touched_by_scan:
            self.scan_pages -= 1
        if folio.how == "evicted":
            self.evicted[touched_by_scan] += 1

    def score(self, folio_id):  # bpf_lfu_score_fn
        meta = self.folio_metadata_map.get(folio_id)
        if meta is None:
            return INT64_MAX
        return meta[0]

    def evict_folios(self, cgroup, nr):  # mixed_evict_folios
        sampling_rate = 5
        num_scan_pages = self.scan_pages
        list_type = LIST_FOR_SCANS
        if num_scan_pages < self.scan_threshold:  # 1000 * sampling_rate
            list_type = LIST_GENERAL
        sampling_list = self.sampling_list_map[list_type]
        return self.lists.sample(sampling_list, sampling_rate, nr, self.score)

    def state(self):
        return {"scan_pages": self.scan_pages, "evicted_general": self.evicted[0], "evicted_scan": self.evicted[1]}


SCENARIO = pathlib.Path(__file__).with_name("get-scan.toml")


def main():
    print(f"{'policy':<14} {'GET ops/s':>10} {'GET io_wait_s':>14} {'SCAN ops/s':>11} {'refaults':>9}")
    runs = [
        ("classic", {}),
        ("mglru", {"policy": "mglru"}),
        ("sampling-lfu", {"policies": {"/db": "sampling-lfu"}}),
        ("get-scan", {"policies": {"/db": GetScan}}),
        # The paper's threshold is 0.2% of its 10 GiB cgroup; the same share of 64M:
        ("get-scan 0.2%", {"policies": {"/db": GetScan(scan_threshold=16384 * 5000 // 2621440)}}),
    ]
    for label, args in runs:
        r = pagelab.run(SCENARIO, **args)
        tasks = {t["name"]: t for t in r["tasks"]}
        print(f"{label:<14} {tasks['get']['ops_per_s']:>10.0f} {tasks['get']['io_wait_s']:>14.2f} {tasks['scan']['ops_per_s']:>11.0f} "
              f"{r['memcg']['/db']['workingset_refault_file']:>9}")


if __name__ == "__main__":
    main()
