"""The page stream of an `strace -f -y -e trace=pread64,write,unlink` log, as `R PAGE` lines
(the format of crates/pagelab/examples/page_reads.rs), `W PAGE` and `D PAGE` lines, with a
count of calls by thread on stderr.

    python3 strace_pages.py STRACE.log [DIR] > reads.txt

Every pread64 of a file gives the 4 KiB pages its returned bytes span, in order. Pages are
numbered densely in the order of their first read or write, a file's pages apart from every
other file's. A write to a file gives the pages it spans from where the file's writes ended
(LevelDB's PosixWritableFile appends to a file it created) as `W PAGE` lines. An unlink of a file gives a `D PAGE` line for each of its pages read so far
(examples/cache_ext/room.py drops them from the cache), and a later file of that name gets new
pages. A call strace split ("<unfinished ...>", then "<... pread64 resumed>") is joined by its
thread id before it is read. With DIR, only the files whose path starts with DIR count. A line that is none of
these is counted as skipped.
"""
import re, sys, collections

CALL = re.compile(r'^(\d+)\s+pread64\((\d+)<([^>]*)>,\s*.*?, (\d+), (\d+)\)\s+=\s+(-?\d+)')
WRITE = re.compile(r'^(\d+)\s+write\((\d+)<([^>]*)>, .*?, (\d+)\)\s+=\s+(-?\d+)')
UNLINK = re.compile(r'^(\d+)\s+unlink\("([^"]*)"\)\s+=\s+0')
# A call strace split across threads: its first part, then the rest on the same thread.
UNFINISHED = re.compile(r'^(\d+)\s+(.*)<unfinished \.\.\.>$')
RESUMED = re.compile(r'^(\d+)\s+<\.\.\. \w+ resumed>(.*)$')


def main(path, under=''):
    files = {}      # path -> {page index: page id}
    pending = {}    # thread id -> the first part of a call strace split
    end = collections.Counter()   # path -> bytes written: LevelDB appends to new files
    by_thread = collections.Counter()
    counts = collections.Counter()
    next_id = 0
    out = sys.stdout

    def emit(tid, name, off, n, op="R"):
        nonlocal next_id
        if n <= 0 or not name.startswith(under):
            return
        by_thread[tid, op] += 1
        pages = files.setdefault(name, {})
        for p in range(off // 4096, (off + n - 1) // 4096 + 1):
            if p not in pages:
                pages[p] = next_id
                next_id += 1
            out.write(f"{op} {pages[p]}\n")

    def written(tid, name, n):
        if n > 0:
            emit(tid, name, end[name], n, "W")
            end[name] += n

    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        m = UNFINISHED.match(line)
        if m:
            pending[m.group(1)] = m.group(2).rstrip()
            continue
        m = RESUMED.match(line)
        if m and m.group(1) in pending:
            line = f"{m.group(1)} {pending.pop(m.group(1))}{m.group(2)}"
        m = CALL.match(line)
        if m:
            tid, _, name, _, off, ret = m.groups()
            emit(tid, name, int(off), int(ret))
            continue
        m = WRITE.match(line)
        if m:
            written(m.group(1), m.group(3), int(m.group(5)))
            continue
        m = UNLINK.match(line)
        if m:
            end.pop(m.group(2), None)
            for page in files.pop(m.group(2), {}).values():
                out.write(f"D {page}\n")
            counts['files deleted'] += 1
            continue
        counts['lines skipped'] += 1
    print(f"calls by thread and kind: {dict(by_thread.most_common())}", file=sys.stderr)
    print(f"distinct pages {next_id}, {dict(counts)}", file=sys.stderr)


if __name__ == '__main__':
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
