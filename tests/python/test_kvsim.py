"""The Python module kvsim (python/, docs/python.md) against the command line and known figures.

Run by ctest (test python_module) with PYTHONPATH=<build>/python and KVSIM_CLI=<the kvsim
binary>; by hand:
  PYTHONPATH=build/debug/python KVSIM_CLI=build/debug/sim/cli/kvsim python3 -m pytest -q tests/python
(in an ASan build, with LD_PRELOAD of the sanitizer runtimes, as tests/CMakeLists.txt sets it).
"""

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import kvsim

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/support"))
import json_close  # noqa: E402
SMALL = ROOT / "tests/fixtures/golden/small-multiturn.yaml"
GOLDEN = ROOT / "tests/fixtures/golden/small-multiturn.summary.json"
SEED = ROOT / "scenarios/seed"
TRACE = ROOT / "scenarios/traces/mooncake_conversation_head250.jsonl"

# small-multiturn.yaml written as a dict (the same tree, key for key).
SMALL_DICT = {
    "name": "golden-small-multiturn",
    "seed": 11,
    "hardware": {"servers": [{"gpu": {"preset": "rtx4090"}}]},
    "model": {"preset": "llama-3.1-8b"},
    "engine": {"max_model_len": 8192, "num_gpu_blocks_override": 600},
    "compute": {"kind": "roofline"},
    "workload": {
        "kind": "multi_turn",
        "generation": {
            "num_conversations": 24,
            "text_files": ["pg1184.txt"],
            "prompt_input": {
                "num_turns": {"distribution": "uniform", "min": 6, "max": 10},
                "common_prefix_num_tokens": {"distribution": "constant", "value": 300},
                "prefix_num_tokens": {"distribution": "lognormal", "average": 2000, "max": 6000},
                "num_tokens": {"distribution": "uniform", "min": 100, "max": 200},
            },
            "prompt_output": {"num_tokens": {"distribution": "uniform", "min": 50, "max": 150}},
        },
        "clients": {"num_clients": 4, "max_active_conversations": 8},
    },
}


def records(table):
    """A DataFrame's rows as dicts; a list as it is."""
    return table.to_dict("records") if hasattr(table, "to_dict") else table


def cli(*args):
    exe = os.environ.get("KVSIM_CLI")
    if not exe:
        pytest.skip("KVSIM_CLI (the kvsim binary) is not set")
    return subprocess.run([exe, *map(str, args)], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def small():
    return kvsim.run(SMALL)


def test_run_matches_the_committed_golden_summary(small):
    summary, requests = small
    # The stored summary was written on another machine: numbers within a relative 1e-9
    # (tests/support/json_close.py says why), everything else equal.
    assert json_close.differences(json.loads(GOLDEN.read_text()), summary) == []
    assert small.summary is summary and small.requests is requests


def test_run_summary_equals_the_cli_json(small):
    assert small.summary == json.loads(cli("run", SMALL, "--format", "json"))


def test_requests_equal_the_cli_requests_out(small, tmp_path):
    out = tmp_path / "requests.json"
    cli("run", SMALL, "--requests-out", out)
    expected = json.loads(out.read_text())
    pandas = pytest.importorskip("pandas")
    assert isinstance(small.requests, pandas.DataFrame)
    assert list(small.requests.columns) == list(expected[0].keys())
    assert small.requests.to_dict("records") == expected
    # Every counted record is a sample of the summary.
    assert int(small.requests["counted"].sum()) == small.summary["num_samples"]


def test_requests_are_a_list_of_dicts_without_pandas(monkeypatch, small):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    summary, requests = kvsim.run(SMALL)
    assert isinstance(requests, list) and isinstance(requests[0], dict)
    assert summary == small.summary
    assert requests == records(small.requests)
    rows = kvsim.compare(SMALL, variants=["only: engine.num_gpu_blocks_override=600"])
    assert isinstance(rows, list) and rows[0]["variant"] == "only"


def test_path_yaml_string_and_dict_give_the_same_summary(small, monkeypatch):
    # Relative paths in a string or dict scenario resolve against the current folder.
    monkeypatch.chdir(SMALL.parent)
    from_pathlike = kvsim.run(pathlib.Path(SMALL.name)).summary
    from_text = kvsim.run(SMALL.read_text()).summary
    from_dict = kvsim.run(SMALL_DICT).summary
    assert from_pathlike == small.summary
    assert from_text == small.summary
    assert from_dict == small.summary


def test_set_changes_what_it_names(small):
    # 1200 blocks of 16 tokens (vLLM's block size) instead of 600.
    summary, _ = kvsim.run(SMALL, set={"engine.num_gpu_blocks_override": 1200})
    assert summary["num_gpu_blocks"] == 1200
    assert summary["gpu_kv_cache_tokens"] == 1200 * 16
    assert small.summary["gpu_kv_cache_tokens"] == 600 * 16
    # One client sends one request at a time: each starts after the one before it ended.
    _, requests = kvsim.run(SMALL, set={"workload.clients.num_clients": 1})
    rows = sorted(records(requests),
                  key=lambda r: r["start_time_ms"])
    assert len(rows) > 10
    for before, after in zip(rows, rows[1:]):
        assert after["start_time_ms"] >= before["start_time_ms"] + before["latency_ms"] - 1e-6
    # With four clients some requests overlap.
    rows4 = sorted(records(small.requests), key=lambda r: r["start_time_ms"])
    assert any(b["start_time_ms"] < a["start_time_ms"] + a["latency_ms"] for a, b in zip(rows4, rows4[1:]))


def test_set_with_a_bad_path_raises_input_error_naming_it():
    with pytest.raises(kvsim.InputError) as err:
        kvsim.run(SMALL, set={"engine.max_num_seqz": 8})
    assert isinstance(err.value, ValueError)
    assert "max_num_seqz" in str(err.value)
    assert any("max_num_seqz" in d[0] + d[3] for d in err.value.diagnostics)


def test_same_seed_same_summary_other_seed_other_summary():
    a = kvsim.run(SMALL, seed=5).summary
    b = kvsim.run(SMALL, seed=5).summary
    c = kvsim.run(SMALL, seed=6).summary
    assert a == b
    assert a["seed"] == 5 and c["seed"] == 6
    assert a["ttft_ms"] != c["ttft_ms"]


def test_yaml_typo_carries_file_line_and_column(tmp_path):
    bad = tmp_path / "typo.yaml"
    text = SMALL.read_text().replace("  max_model_len: 8192", "  max_modle_len: 8192")
    bad.write_text(text)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "max_modle_len" in l)
    with pytest.raises(kvsim.InputError) as err:
        kvsim.run(bad)
    diags = err.value.diagnostics
    assert (diags[0][0], diags[0][1], diags[0][2]) == (str(bad), line, 3)
    assert "max_modle_len" in diags[0][3]
    assert str(err.value).startswith("%s:%d:3: error: " % (bad, line))
    # The CLI prints the same text and exits 2.
    exe = os.environ.get("KVSIM_CLI")
    if exe:
        proc = subprocess.run([exe, "run", str(bad)], capture_output=True, text=True)
        assert proc.returncode == 2
        assert proc.stderr.strip() == str(err.value)


def test_a_yaml_string_names_itself_in_diagnostics():
    with pytest.raises(kvsim.InputError) as err:
        kvsim.run("name: x\nengine: {max_num_seqs: -3}\n")
    assert err.value.diagnostics[0][0] == "<string>"
    with pytest.raises(kvsim.InputError):
        kvsim.run(str(SMALL.parent / "no-such-scenario.yaml"))
    with pytest.raises(TypeError):
        kvsim.run(42)
    with pytest.raises(kvsim.InputError) as err:
        kvsim.run(SMALL, seed=-1)
    assert err.value.diagnostics[0][3].startswith("seed:")


def test_run_releases_the_gil():
    # A Python thread notes the longest time it went without running while a simulation ran in
    # C++. Holding the GIL would stop it for the whole run; released, it runs on, stopped only
    # for a switch interval at the call's start and end.
    longest = 0.0
    running = threading.Event()
    stop = threading.Event()

    def watcher():
        nonlocal longest
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
            running.set()

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    t = threading.Thread(target=watcher)
    t.start()
    try:
        running.wait()
        # A run long enough to tell from scheduling noise: more conversations in a fast build.
        for conversations in (24, 240, 2400):
            time.sleep(0.01)
            longest = 0.0
            start = time.perf_counter()
            kvsim._kvsim.run({"path": str(SMALL)}, ["workload.generation.num_conversations=%d" % conversations],
                             None, "", None, "")
            took = time.perf_counter() - start
            time.sleep(0.01)  # the watcher notes its last gap
            gap = longest
            if took >= 0.05:
                break
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old_interval)
    assert took >= 0.05
    assert gap < took / 2, "a Python thread stood still %.3f s of a %.3f s run" % (gap, took)


def test_compare_rows():
    rows = kvsim.compare(SMALL, variants=["small: engine.num_gpu_blocks_override=600",
                                          "large: engine.num_gpu_blocks_override=2400"])
    rows = records(rows)
    assert [r["variant"] for r in rows] == ["small", "large"]
    expected = json.loads(cli("compare", SMALL, "--format", "json", "--variant",
                              "small: engine.num_gpu_blocks_override=600", "--variant",
                              "large: engine.num_gpu_blocks_override=2400"))["variants"]
    assert rows == expected


def test_check_scenario_of_the_seed_deployment():
    c = kvsim.check_scenario(SEED / "4x4090-vram-only.yaml")
    assert c["name"] == "4x4090-vram-only"
    assert c["num_engines"] == 4  # one vLLM instance per GPU
    assert c["gpu_kv_cache_tokens"] > 0
    assert c["memory_breakdown"] and all(isinstance(l, str) for l in c["memory_breakdown"])
    assert isinstance(c["compute_model"], str) and c["compute_model"]
    # The CLI prints the same KV size, and the same step-time breakdown.
    out = cli("check-scenario", SEED / "4x4090-vram-only.yaml")
    assert "GPU KV cache size: %d tokens; 4 engines" % c["gpu_kv_cache_tokens"] in out
    assert len(c["step_times"]) == 2 and "decode" in c["step_times"][0] and "prefill" in c["step_times"][1]
    for line in c["step_times"]:
        assert line in out
    small = kvsim.check_scenario(SMALL, set={"engine.num_gpu_blocks_override": 1000})
    assert small["gpu_kv_cache_tokens"] == 1000 * 16


def test_cache_curve_rows_match_the_cli():
    rows = kvsim.cache_curve(TRACE, capacities=[10, "100", 1000])
    rows = records(rows)
    expected = json.loads(cli("cache-curve", TRACE, "--capacities", "10,100,1000", "--format", "json"))["points"]
    assert [r["capacity_blocks"] for r in rows] == [10, 100, 1000]
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected):
        assert set(got) == set(want)
        for key, value in want.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, abs=1e-4)  # the CLI prints 4 decimals
            else:
                assert got[key] == value
    # A larger LRU cache never hits less.
    hits = [r["token_hit_rate_percent"] for r in rows]
    assert hits == sorted(hits) and 0 <= hits[0] and hits[-1] <= 100


def test_cache_curve_tier_stack_sums_to_total():
    rows = kvsim.cache_curve(TRACE, tiers={"gpu": 100, "dram": 1000})
    rows = records(rows)
    assert [r["tier"] for r in rows] == ["gpu", "dram", "total"]
    assert rows[0]["hit_tokens"] + rows[1]["hit_tokens"] == rows[2]["hit_tokens"]
    with pytest.raises(kvsim.InputError):
        kvsim.cache_curve(TRACE, capacities=[10], tiers=["gpu=10"])


def test_catalog_entries():
    cat = kvsim.catalog()
    assert set(cat) >= {"gpus", "models", "drives", "storage", "dir"}
    assert "rtx4090" in cat["gpus"]
    assert cat["gpus"]["rtx4090"]["num_sms"] == 128  # AD102 in the RTX 4090: 128 SMs
    assert "llama-3.1-8b" in cat["models"]
    assert cat["models"]["llama-3.1-8b"]["num_layers"] == 32
    assert cat["drives"] and cat["storage"]
    same = kvsim.catalog(dir=ROOT / "scenarios/catalog")
    assert same["gpus"] == cat["gpus"]
    with pytest.raises(kvsim.InputError):
        kvsim.catalog(dir=ROOT / "no-such-catalog")
