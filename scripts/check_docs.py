"""Runs the documented examples and compares what they print with their listings.

A checked example is a ```-fenced block of README.md or docs/*.md whose first line is a
command (`$ ...`) and one of whose commands runs pagelab (`$ pagelab ...`, or a shell loop
around it: `$ for k in ...`). Every line of the block that begins with `$ ` is a shell command; the lines
after it, up to the next command or the end of the block, are the listing of what it prints
(a command with no listing is run, and must succeed, but its output is not compared). In a
listing, a line `...` stands for any number of lines; timing fields (`M accesses/s`, `wall`)
are masked on both sides; trailing blanks do not count.

The commands of one file run in order in one scratch directory in which the checkout's
top-level entries are linked (so `examples/...` resolves and outputs land in the scratch
directory), with `pagelab` on the PATH as the binary under test.

    python3 scripts/check_docs.py BINARY [FILE.md ...]

Exit status 0 when every listing matches; otherwise each mismatch is printed as
`FILE:LINE: $ COMMAND` and a diff, and the status is 1.
"""

import difflib
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT_S = 300
TIMING = [
    (re.compile(r"[\d.,]+ M accesses/s"), "N M accesses/s"),
    (re.compile(r"(wall[ _a-z]*[:=]?\s*)[\d.,]+"), r"\1N"),
]


def blocks(path):
    """The checked blocks of a Markdown file: (line number, [(line number, command, listing)])."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if body and body[0].startswith("$ ") and any(l.startswith("$ ") and "pagelab" in l for l in body):
                cmds = []
                for n, l in enumerate(body):
                    if l.startswith("$ "):
                        cmds.append((start + n + 1, l[2:], []))
                    else:
                        cmds[-1][2].append(l)
                out.append((start, cmds))
        i += 1
    return out


def mask(line):
    line = line.rstrip()
    for pattern, repl in TIMING:
        line = pattern.sub(repl, line)
    return line


def matches(expected, actual):
    """Whether `actual` lines match the listing `expected`, `...` lines standing for any run."""
    exp = [mask(l) for l in expected]
    act = [mask(l) for l in actual]
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(exp):
            r = j == len(act)
        elif exp[i].strip() == "...":
            r = go(i + 1, j) or (j < len(act) and go(i, j + 1))
        else:
            r = j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)
        memo[key] = r
        return r

    sys.setrecursionlimit(10000 + 4 * (len(exp) + len(act)))
    return go(0, 0)


def scratch_dir(tmp):
    for entry in ROOT.iterdir():
        if entry.name in (".git", "target", ".venv"):
            continue
        os.symlink(entry, pathlib.Path(tmp) / entry.name)


def check_file(path, binary):
    checked = blocks(path)
    if not checked:
        return 0, 0
    failures = 0
    with tempfile.TemporaryDirectory(prefix="pagelab-docs-") as tmp:
        scratch_dir(tmp)
        bindir = pathlib.Path(tmp) / ".bin"
        bindir.mkdir()
        os.symlink(binary, bindir / "pagelab")
        env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}", NO_COLOR="1")
        rel = path.relative_to(ROOT)
        for _, cmds in checked:
            for line, cmd, listing in cmds:
                try:
                    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    print(f"{rel}:{line}: $ {cmd}\n  did not finish in {TIMEOUT_S} s")
                    failures += 1
                    continue
                actual = p.stdout.splitlines()
                if p.returncode != 0:
                    print(f"{rel}:{line}: $ {cmd}\n  exited with {p.returncode}:\n{p.stderr.rstrip()}")
                    failures += 1
                elif listing and not matches(listing, actual):
                    diff = difflib.unified_diff([mask(l) for l in listing], [mask(l) for l in actual], "listing", "output", lineterm="")
                    print(f"{rel}:{line}: $ {cmd}\n  prints other than its listing:")
                    print("\n".join("    " + d for d in diff))
                    failures += 1
    return sum(len(c) for _, c in checked), failures


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    binary = str(pathlib.Path(sys.argv[1]).resolve())
    files = [pathlib.Path(f).resolve() for f in sys.argv[2:]] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    total = failed = 0
    for f in files:
        n, bad = check_file(f, binary)
        total, failed = total + n, failed + bad
    print(f"check-docs: {total} documented commands run, {failed} differ from their listings", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
