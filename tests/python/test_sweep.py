"""vacc.sweep against `vacc sweep` on the same spec, and its resumable database."""

import json
import os

import pytest
import yaml

import vacc
from conftest import EXE, SRC, cli, tiny_mlp


def spec(model):
    return {"name": "py-gemm", "base": "small",
            "axes": {"gemm.block_out": [8, 16]},
            "workloads": [{"model": model, "name": "mlp"}]}


def test_sweep_from_a_dict_equals_the_command_and_resumes(tmp_path):
    model = tmp_path / "mlp.onnx"
    tiny_mlp(model)
    s = spec(str(model))
    r = vacc.sweep(s, tmp_path / "py", jobs=1, report=False)
    assert len(r.rows) == 2 and all(row["status"] == "ok" for row in r.rows)
    assert r.database == str(tmp_path / "py" / "sweep.db")
    assert os.path.exists(r.database)
    # The command on the same spec, written as YAML.
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(s))
    cli("sweep", path, "-o", tmp_path / "cli", "-j", "1", "--no-report")
    with open(tmp_path / "cli" / "results.json") as f:
        theirs = json.load(f)["results"]
    key = lambda row: (row["point"], row["workload"])
    for mine, ref in zip(sorted(r.rows, key=key), sorted(theirs, key=key)):
        for k in ("point", "label", "gemm.block_out", "cycles", "lut", "dsp", "area_mm2",
                  "energy_uj", "pareto_latency_area"):
            assert mine[k] == ref[k], k
    # A wider GEMM core takes fewer cycles.
    by_block = {row["gemm.block_out"]: row["cycles"] for row in r.rows}
    assert by_block["16"] < by_block["8"]
    # A rerun resumes: nothing left to run, the same rows.
    again = vacc.sweep(s, tmp_path / "py", jobs=1, report=False)
    assert again.rows == r.rows
    assert sum(again.summary["rows"].values()) == 2
    front = r.pareto("mlp", "area")
    assert front and all(row["pareto_latency_area"] == 1 for row in front)


def test_sweep_errors_are_the_commands(tmp_path):
    bad = {"base": "small", "axes": {"gemm.nope": [1]}, "workloads": [{"bench": "resnet18-convs"}]}
    with pytest.raises(vacc.Error) as e:
        vacc.sweep(bad, tmp_path / "out")
    path = tmp_path / "spec"
    path.write_text(json.dumps(bad))
    _, _, err = cli("sweep", path, "-o", tmp_path / "out2", check=False)
    assert str(e.value) == err.replace(str(path), "spec")
