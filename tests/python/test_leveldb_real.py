"""examples/cache_ext/leveldb-real/strace_pages.py turns a real store's system calls into a page
stream, and examples/cache_ext/room.py replays one offline: calls strace split, writes and
deleted files as their contracts say."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


strace_pages = load("strace_pages", "examples/cache_ext/leveldb-real/strace_pages.py")
room = load("room", "examples/cache_ext/room.py")

LOG = """\
10 pread64(5</db/000007.ldb>, ""..., 4121, 4000) = 4121
11 pread64(6</db/000009.ldb>,  <unfinished ...>
10 pread64(3</usr/lib/libc.so.6>, ""..., 784, 64) = 784
12 write(8</db/000012.ldb>, ""..., 6000) = 6000
11 <... pread64 resumed>""..., 4096, 0) = 4096
12 write(8</db/000012.ldb>, ""..., 4000 <unfinished ...>
10 unlink("/db/000007.ldb" <unfinished ...>
12 <... write resumed>) = 4000
10 <... unlink resumed>) = 0
11 pread64(5</db/000012.ldb>, ""..., 100, 8000) = 100
10 pread64(5</db/000007.ldb>, ""..., 10, 0) = 10
10 +++ exited with 0 +++
"""


def test_strace_pages_joins_split_calls_numbers_pages_and_deletes_a_files_pages(tmp_path, capsys):
    log = tmp_path / "run.strace"
    log.write_text(LOG)
    strace_pages.main(str(log), "/db/")
    lines = capsys.readouterr().out.split("\n")[:-1]
    assert lines == [
        "R 0", "R 1",            # 000007: bytes 4000..8120 span pages 0 and 1
        "W 2", "W 3",            # 000012: its first 6000 bytes
        "R 4",                   # 000009's page 0, once strace's resumed line arrives
        "W 3", "W 5",            # 000012 from byte 6000 to 10000 (pages 1 and 2)
        "D 0", "D 1",            # 000007 unlinked: its pages leave the cache
        "R 3",                   # 000012's byte 8000 is in its page 1, written above
        "R 6",                   # a new 000007 gets a new page
    ]


def trace(tmp_path, text):
    f = tmp_path / "t.txt"
    f.write_text(text)
    return room.load(str(f))


def test_room_counts_reads_only_and_a_deleted_page_is_gone_without_a_miss(tmp_path):
    tr = trace(tmp_path, "R 1\nR 2\nD 1\nR 1\nW 3\nR 3\nR 2\n")
    assert room.reads(tr) == 5
    # Capacity 3: 1 and 2 miss; 1 is deleted; its read misses again; 3 is written, so its
    # read hits; 2 is still cached.
    for policy in (room.lru, room.classic, room.exact_lfu, room.opt):
        assert policy(tr, 3) == 3, policy.__name__
    assert room.sampling_lfu(tr, 3, k=1, req=1) == 3


def test_room_a_written_page_takes_room_from_the_cache(tmp_path):
    # Capacity 2: after 1 and 2 are read, two written pages push them out of an LRU.
    tr = trace(tmp_path, "R 1\nR 2\nW 3\nW 4\nR 1\nR 2\n")
    assert room.lru(tr, 2) == 4
    # Belady keeps neither written page: they are never read.
    assert room.opt(tr, 2) == 2
