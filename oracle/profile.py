#!/usr/bin/env python3
"""Prints the CPU profiles a profiled oracle run recorded in the guest.

    PAGELAB_ORACLE_PROFILE=1 pagelab oracle SCENARIO --kernel K --policy P --json RUN.json
    oracle/profile.py RUN.json [N]

The guest samples the kernel stack that each timer tick interrupts (a tracefs histogram on
irq_vectors:local_timer_entry, keyed on the stack), once for kswapd0 and once for the tasks.
Per profile: its ticks, then the N (default 15) heaviest places by their innermost three
frames, the interrupt's own frames left out, with their share of the ticks.
"""
import collections
import json
import re
import sys

IRQ_FRAMES = {"sysvec_apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt", "__sysvec_apic_timer_interrupt", "handle_softirqs", "__irq_exit_rcu"}


def places(part):
    """The profile's ticks by their innermost three frames outside the interrupt."""
    counts = collections.Counter()
    for stack, hits in re.findall(r"\{ (?:common_)?stacktrace:\n(.*?)\} hitcount:\s+(\d+)", part, re.S):
        frames = [line.strip().split("+")[0] for line in stack.strip().split("\n")]
        frames = [f for f in frames if f not in IRQ_FRAMES]
        counts[" < ".join(frames[:3]) or "[user space]"] += int(hits)
    return counts


def main():
    run = json.load(open(sys.argv[1]))
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    text = run["kernel"].get("alloc_hists", {}).get("profile")
    if not text:
        sys.exit(f"{sys.argv[1]}: no profile (run with PAGELAB_ORACLE_PROFILE=1)")
    for part in text.split("# trigger info:")[1:]:
        who = re.search(r" if (.*?) \[", part.split("\n")[0])
        counts = places(part)
        # A run saved in the repository keeps only its heaviest stacks; its Totals count all.
        hits = re.search(r"Hits: (\d+)", part)
        total = int(hits.group(1)) if hits else sum(counts.values())
        print(f"== {who.group(1) if who else '?'}: {total} ticks")
        for place, n in counts.most_common(top):
            print(f"{n:7d} {100 * n / total:5.1f} %  {place}")


if __name__ == "__main__":
    main()
