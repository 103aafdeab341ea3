"""vacc.tune against `vacc tune` on the same model, seed and strategy, and its log used by
vacc.compile (the tuned layers' schedules and cycles are the log's best)."""

import json

import numpy as np
import pytest

import vacc
from conftest import MODEL, cli, cli_error


def test_tune_equals_the_command_and_compile_uses_its_log(tmp_path, samples):
    log = tmp_path / "py.jsonl"
    r = vacc.tune(MODEL, "small", log, trials=6, strategy="random", seed=3, update_db=False)
    assert r.log == str(log) and log.exists()
    assert r.tasks and sum(len(t["layers"]) for t in r.tasks) >= len(r.tasks)
    # The command, same model, config, strategy and seed, its own log.
    _, out, _ = cli("tune", MODEL, "--config", "small", "-o", tmp_path / "cli.jsonl",
                    "--trials", 6, "--strategy", "random", "--seed", 3, "--no-db-update",
                    "--json")
    theirs = json.loads(out)
    assert len(theirs["tasks"]) == len(r.tasks)
    for mine, ref in zip(r.tasks, theirs["tasks"]):
        for k in ("workload", "layers", "space", "candidates", "heuristic_cycles", "best_cycles",
                  "schedule"):
            assert mine[k] == ref[k], k
    assert r.summary["tuned_cycles"] == theirs["tuned_cycles"]
    assert r.summary["heuristic_cycles"] == theirs["heuristic_cycles"]
    # The heuristic's point is measured first: the best is never worse.
    for t in r.tasks:
        assert t["best_cycles"] <= t["heuristic_cycles"], t["workload"]
    assert r.speedup >= 1.0

    # The log's best schedules are what compile gives each accelerator layer (in the folding
    # and fusion forms their cycles chose); run on perf, the program takes the cycles the tuner
    # reported for it, up to where its tensors sit: the tuner measures each layer's command
    # list with buffers of its own, the package places them in its arena, and DMA bursts split
    # at 4 KiB pages (the bundled CNN's conv3: 8 184 cycles alone, 8 197 in the package, tuned
    # or not; tests/tune's TuneThenCompile compares the command lists exactly). The tuner
    # measures each layer as its own program: so does this run (program_per_layer).
    pkg = vacc.compile(MODEL, "small", tuning_logs=[log], tuning_db=False, program_per_layer=True)
    res = pkg.run(samples[:1], engine="perf")
    accel = [row for row in res.profile.rows if row.get("schedule")]
    assert accel and all(row["schedule"].startswith("tuned") for row in accel), \
        [row.get("schedule") for row in res.profile.rows]
    ran = sum(row["cycles"] for row in accel)
    assert abs(ran - r.summary["tuned_cycles"]) <= 0.002 * r.summary["tuned_cycles"], \
        (ran, r.summary["tuned_cycles"])
    # Untuned: the heuristic's schedule on every layer.
    plain = vacc.compile(MODEL, "small", tuning_db=False, program_per_layer=True).run(
        samples[:1], engine="perf")
    assert not any(row.get("schedule", "").startswith("tuned") for row in plain.profile.rows)
    assert res.profile.total["cycles"] <= plain.profile.total["cycles"]
    np.testing.assert_array_equal(res.outputs[0], plain.outputs[0])
    # By default the consecutive accelerator layers run as one program: fewer cycles still.
    merged = vacc.compile(MODEL, "small", tuning_logs=[log], tuning_db=False).run(
        samples[:1], engine="perf")
    assert merged.profile.total["cycles"] < res.profile.total["cycles"]
    np.testing.assert_array_equal(merged.outputs[0], res.outputs[0])


def test_tune_errors_are_the_commands(tmp_path):
    with pytest.raises(vacc.Error) as e:
        vacc.tune(MODEL, "small", tmp_path / "x.jsonl", strategy="exhaustive")
    assert str(e.value) == cli_error("tune", MODEL, "--config", "small", "-o",
                                     tmp_path / "y.jsonl", "--strategy", "exhaustive")
    with pytest.raises(vacc.Error) as e:
        vacc.tune(MODEL, "small", tmp_path / "x.jsonl", trials=0)
    assert str(e.value) == cli_error("tune", MODEL, "--config", "small", "-o",
                                     tmp_path / "y.jsonl", "--trials", 0)
    with pytest.raises(vacc.Error, match="give the tuning log"):
        vacc.tune(MODEL, "small")


def test_tails_are_the_commands_and_widen_the_search(tmp_path):
    kw = dict(trials=4, strategy="random", seed=2, update_db=False)
    plain = vacc.tune(MODEL, "small", tmp_path / "plain.jsonl", **kw)
    r = vacc.tune(MODEL, "small", tmp_path / "py.jsonl", tails=True, **kw)
    _, out, _ = cli("tune", MODEL, "--config", "small", "-o", tmp_path / "cli.jsonl",
                    "--trials", 4, "--strategy", "random", "--seed", 2, "--tails",
                    "--no-db-update", "--json")
    theirs = json.loads(out)
    assert theirs["tails"] and r.summary["tails"] and not plain.summary["tails"]
    for mine, ref, without in zip(r.tasks, theirs["tasks"], plain.tasks):
        for k in ("workload", "candidates", "best_cycles", "schedule"):
            assert mine[k] == ref[k], k
        # Tails add points to the searched space; the heuristic's is in both.
        assert mine["candidates"] >= without["candidates"], mine["workload"]
        assert mine["heuristic_cycles"] == without["heuristic_cycles"]
    assert sum(t["candidates"] for t in r.tasks) > sum(t["candidates"] for t in plain.tasks)
