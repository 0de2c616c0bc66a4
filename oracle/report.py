#!/usr/bin/env python3
"""oracle/report.py RESULTS_DIR: the fidelity table (RESULTS_DIR/fidelity.md, also printed)
and a plot of the error per counter (RESULTS_DIR/fidelity.png) from the `pagelab oracle
--json` outputs of oracle/run-suite.sh (files SCENARIO-KERNEL-POLICY.json)."""
import glob
import json
import os
import sys

# The goals: refaults, steals and swap traffic within 10 %, scans within 25 %.
COUNTERS = [
    ("workingset_refault_file", 10), ("workingset_refault_anon", 10),
    ("pgsteal_file", 10), ("pgsteal_anon", 10), ("pswpin", 10), ("pswpout", 10),
    ("pgscan_file", 25), ("pgscan_anon", 25),
]
SMALL = 100  # counts below this on both sides are noise: no verdict


def load(d):
    out = []
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        try:
            o = json.load(open(f))
        except (OSError, ValueError):
            continue
        if "rows" not in o:
            continue
        rows = {r["counter"]: r for r in o["rows"]}
        out.append((o["scenario"], o["kernel_version"], o["policy"], rows, o))
    return out


def cell(r, goal):
    if r is None:
        return "", None
    k, m, e = r["kernel"], r["model"], r["error_pct"]
    if k == 0 and m == 0:
        return "·", None
    if abs(k) < SMALL and abs(m) < SMALL:
        return f"({k}/{m})", None
    if e is None:
        return f"new ({m})", False
    ok = abs(e) <= goal
    return f"{e:+.0f}%{'' if ok else ' ✗'}", ok


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "oracle/results"
    runs = load(d)
    if not runs:
        sys.exit(f"{d}: no oracle results")
    names = [c.replace("workingset_", "") for c, _ in COUNTERS]
    lines = ["| scenario | kernel | policy | " + " | ".join(names) + " | goals met | kernel pgskip |",
             "|---|---|---|" + "---|" * len(COUNTERS) + "---|---|"]
    met = total = 0
    for s, k, p, rows, o in runs:
        cells, n_ok, n = [], 0, 0
        for c, goal in COUNTERS:
            text, ok = cell(rows.get(c), goal)
            cells.append(text)
            if ok is not None:
                n += 1
                n_ok += ok
        met += n_ok
        total += n
        if o.get("model_error"):
            cells = ["model failed"] + [""] * (len(COUNTERS) - 1)
        kv = o["kernel"]["vmstat"]
        skip = sum(v for key, v in kv.items() if key.startswith("pgskip_"))
        lines.append(f"| {s} | {k} | {p} | " + " | ".join(cells) + f" | {n_ok}/{n} | {skip or ''} |")
    lines.append("")
    lines.append(f"Goals met: {met} of {total} judged cells (error % = (pagelab − kernel) / kernel; "
                 f"✗ outside ±10 % (±25 % for pgscan); (k/m): both below {SMALL}, not judged; ·: both zero; "
                 "kernel pgskip: pages the kernel's pgscan counts although it skipped them, see the README's Fidelity section).")
    text = "\n".join(lines) + "\n"
    open(os.path.join(d, "fidelity.md"), "w").write(text)
    print(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    combos = sorted({(k, p) for _, k, p, _, _ in runs})
    fig, axes = plt.subplots(len(combos), 1, figsize=(11, 3.2 * len(combos)), squeeze=False, sharex=True)
    scen = sorted({s for s, *_ in runs})
    markers = "osD^v<>pPX*h"
    for ax, (k, p) in zip(axes[:, 0], combos):
        for i, (c, goal) in enumerate(COUNTERS):
            ax.fill_between([i - 0.4, i + 0.4], -goal, goal, color="tab:green", alpha=0.12, lw=0)
        for j, s in enumerate(scen):
            xs, ys = [], []
            for rs, rk, rp, rows, _ in runs:
                if (rs, rk, rp) != (s, k, p):
                    continue
                for i, (c, _) in enumerate(COUNTERS):
                    r = rows.get(c)
                    if r and r["error_pct"] is not None and max(abs(r["kernel"]), abs(r["model"])) >= SMALL:
                        xs.append(i + (j - len(scen) / 2) * 0.06)
                        ys.append(max(-100, min(100, r["error_pct"])))
            if xs:
                ax.scatter(xs, ys, label=s, marker=markers[j % len(markers)], s=28)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_ylim(-105, 105)
        ax.set_ylabel("error %")
        ax.set_title(f"kernel {k}, {p}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[-1, 0].set_xticks(range(len(COUNTERS)))
    axes[-1, 0].set_xticklabels(names, rotation=20, fontsize=8)
    axes[0, 0].legend(fontsize=7, ncol=3, loc="upper left", bbox_to_anchor=(0, 1.32))
    fig.suptitle("pagelab vs the kernel: (pagelab − kernel) / kernel per counter (green: goal band; clipped at ±100 %)", fontsize=10, y=1.0)
    fig.tight_layout()
    out = os.path.join(d, "fidelity.png")
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
