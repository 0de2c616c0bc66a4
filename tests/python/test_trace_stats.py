"""pagelab.trace_stats: a trace's statistics from Python, and its two plots."""

import pytest

import pagelab


def test_trace_stats_counts_a_loop_and_its_reuse_distance(tmp_path):
    # A loop over 100 pages, 3 rounds: every reuse has 99 distinct pages in between.
    p = tmp_path / "loop.txt"
    p.write_text("".join(f"R {i % 100}\n" for i in range(300)))
    s = pagelab.trace_stats(p, format="text")
    assert (s["accesses"], s["distinct_pages"], s["reads"], s["one_hit_wonders"]) == (300, 100, 300, 0)
    assert s["reuse"]["exact"] and s["reuse"]["cold"] == 100
    assert s["reuse"]["histogram"] == [{"min": 64, "max": 127, "accesses": 200.0}]
    assert "heatmap" not in s


def test_trace_stats_plots_popularity_and_heatmap(tmp_path):
    pytest.importorskip("matplotlib")
    p = tmp_path / "zipfish.txt"
    p.write_text("".join(f"{(i * i) % 97}\n" for i in range(2000)))
    s = pagelab.trace_stats(p, format="text", plot=tmp_path / "z")
    assert s["heatmap"]["time_bins"] == 200 and len(s["heatmap"]["counts"]) == 200
    for name in ("z-popularity.png", "z-heatmap.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_trace_stats_names_a_bad_record(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("R 1\nR -3\n")
    with pytest.raises(ValueError, match="bad.txt: line 2: negative page index"):
        pagelab.trace_stats(p, format="text")
