"""vacc.compile and Package.run against `vacc compile` / `vacc run` on the same files."""

import json
import os
import threading
import time

import numpy as np
import onnx
import pytest

import vacc
from conftest import MODEL, SAMPLES, cli, cli_error, tiny_mlp


def cli_run(model, x, tmp_path, *extra):
    """`vacc run --sim --engine fsim` on `x`: the command's output array and its JSON."""
    xin, yout = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(xin, x)
    _, out, _ = cli("run", "--sim", "--engine", "fsim", model, "--input", xin, "--output", yout,
                    "--json", *extra)
    return np.load(yout), json.loads(out)


def test_compile_and_run_equal_the_command(cnn_package, samples, tmp_path):
    x = samples[3:4]
    r = cnn_package.run(x, engine="fsim")
    expected, j = cli_run(MODEL, x, tmp_path)
    assert len(r.outputs) == 1
    assert r.outputs[0].dtype == np.float32 and r.outputs[0].shape == expected.shape
    assert np.array_equal(r.outputs[0], expected)
    # The per-layer profile: the command's rows, but for wall times.
    assert len(r.profile.rows) == len(j["profile"]["layers"]) == cnn_package.steps
    for mine, theirs in zip(r.profile.rows, j["profile"]["layers"]):
        for k in ("index", "layer", "op", "where", "macs", "executed_macs", "cycles"):
            assert mine[k] == theirs[k], k
    assert r.profile.total["macs_accel"] == j["profile"]["total"]["macs_accel"]
    assert "total:" in r.profile.table
    # Unpacking: outputs, profile = pkg.run(x)
    outputs, profile = cnn_package.run(x)
    assert np.array_equal(outputs[0], expected)


def test_profile_is_a_dataframe_with_perf_cycles(cnn_package, samples, tmp_path):
    pandas = pytest.importorskip("pandas")
    x = samples[:1]
    r = cnn_package.run(x, engine="perf")
    assert isinstance(r.profile.layers, pandas.DataFrame)
    assert list(r.profile.layers["layer"]) == [row["layer"] for row in r.profile.rows]
    np.save(tmp_path / "x.npy", x)
    _, out, _ = cli("run", "--sim", "--engine", "perf", MODEL, "--input", tmp_path / "x.npy",
                    "--json")
    j = json.loads(out)
    assert r.profile.total["cycles"] == j["profile"]["total"]["cycles"] > 0
    assert r.profile.layers["cycles"].sum() == j["profile"]["total"]["cycles"]


def test_repeated_runs_give_the_same_outputs(cnn_package, samples):
    a = cnn_package.run(samples[0:1]).outputs[0]
    b = cnn_package.run(samples[1:2]).outputs[0]
    c = cnn_package.run(samples[0:1]).outputs[0]
    assert np.array_equal(a, c) and not np.array_equal(a, b)


def test_timing_only_returns_no_outputs_and_the_commands_cycles(cnn_package, samples, tmp_path):
    r = cnn_package.run(samples[:1], engine="perf", timing_only=True)
    assert r.outputs == []
    x = tmp_path / "x.npy"
    np.save(x, samples[:1])
    _, out, _ = cli("run", "--sim", "--engine", "perf", "--timing-only", MODEL, "--input", x,
                    "--json")
    assert r.profile.total["cycles"] == json.loads(out)["profile"]["total"]["cycles"]
    with pytest.raises(vacc.Error) as e:
        cnn_package.run(samples[:1], engine="fsim", timing_only=True)
    assert str(e.value) == cli_error("run", "--sim", "--engine", "fsim", "--timing-only", MODEL,
                                     "--input", x)


def test_save_and_load(cnn_package, samples, tmp_path):
    path = tmp_path / "cnn.vpkg"
    cnn_package.save(str(path))
    # `vacc compile` writes the same bytes for the same model and config.
    cli("compile", MODEL, "--config", "default", "-o", tmp_path / "cli.vpkg", "-q")
    assert path.read_bytes() == (tmp_path / "cli.vpkg").read_bytes()
    loaded = vacc.Package.load(str(path))
    assert (loaded.steps, loaded.config_name, loaded.inputs) == (
        cnn_package.steps, "default", cnn_package.inputs)
    x = samples[5:6]
    assert np.array_equal(loaded.run(x).outputs[0], cnn_package.run(x).outputs[0])
    with pytest.raises(vacc.Error, match="no such package file"):
        vacc.Package.load(str(tmp_path / "none.vpkg"))


def test_model_proto_and_bytes_compile_as_the_file(cnn_package, samples):
    proto = onnx.load(MODEL)
    x = samples[7:8]
    want = cnn_package.run(x).outputs[0]
    assert np.array_equal(vacc.compile(proto, "default").run(x).outputs[0], want)
    with open(MODEL, "rb") as f:
        assert np.array_equal(vacc.compile(f.read(), "default").run(x).outputs[0], want)


def test_calibration_array_equals_the_commands_calibration_file(samples, tmp_path):
    calib = samples[100:164]
    np.save(tmp_path / "calib.npy", calib)
    x = samples[9:10]
    pkg = vacc.compile(MODEL, "default", calibration=calib, calibrate_method="percentile",
                       percentile=99.9)
    expected, j = cli_run(MODEL, x, tmp_path, "--calibration", tmp_path / "calib.npy",
                          "--calibrate-method", "percentile", "--percentile", "99.9")
    assert np.array_equal(pkg.run(x).outputs[0], expected)
    # A different calibration changes the result (the array is used).
    other = vacc.compile(MODEL, "default", calibration=samples[:2] * 4)
    assert not np.array_equal(other.run(x).outputs[0], expected)
    assert "calibration array (2 samples)" == other.compile_stats["calibration"]


def test_quantization_options_compile_as_the_command(tmp_path):
    options = dict(bias_correction=True, align_scales=True, equalize=True,
                   unsigned_activations=False, weight_scales="exact",
                   rounding="hessian", keep_float=["/conv3/Conv"])
    vacc.compile(MODEL, "default", **options).save(str(tmp_path / "py.vpkg"))
    cli("compile", MODEL, "--config", "default", "-o", tmp_path / "cli.vpkg", "-q",
        "--bias-correction", "on", "--align-scales", "on", "--equalize", "on",
        "--unsigned-activations", "off", "--weight-scales", "exact",
        "--rounding", "hessian",
        "--keep-float", "/conv3/Conv")
    assert (tmp_path / "py.vpkg").read_bytes() == (tmp_path / "cli.vpkg").read_bytes()
    # The options are used: without them the package differs.
    vacc.compile(MODEL, "default").save(str(tmp_path / "plain.vpkg"))
    assert (tmp_path / "plain.vpkg").read_bytes() != (tmp_path / "cli.vpkg").read_bytes()
    with pytest.raises(vacc.Error, match="--rounding 'adaround': choose nearest, hessian or learned"):
        vacc.compile(MODEL, "default", rounding="adaround")


def test_learned_rounding_compiles_as_the_command(tmp_path):
    vacc.compile(MODEL, "default", rounding="learned", rounding_seconds=5).save(
        str(tmp_path / "py.vpkg"))
    cli("compile", MODEL, "--config", "default", "-o", tmp_path / "cli.vpkg", "-q",
        "--rounding", "learned", "--rounding-seconds", "5")
    assert (tmp_path / "py.vpkg").read_bytes() == (tmp_path / "cli.vpkg").read_bytes()
    vacc.compile(MODEL, "default", rounding="hessian").save(str(tmp_path / "hessian.vpkg"))
    assert (tmp_path / "hessian.vpkg").read_bytes() != (tmp_path / "cli.vpkg").read_bytes()
    with pytest.raises(vacc.Error, match="--rounding-seconds '0': give the learned rounding's time"):
        vacc.compile(MODEL, "default", rounding="learned", rounding_seconds=0)


def test_float_model_equals_the_commands_float_output(samples, tmp_path):
    x = samples[11:12]
    pkg = vacc.compile(MODEL, "default", float=True)
    assert not pkg.quantized and pkg.accelerator_steps == 0
    np.save(tmp_path / "x.npy", x)
    cli("run", "--sim", "--engine", "fsim", MODEL, "--input", tmp_path / "x.npy",
        "--float-output", tmp_path / "f.npy")
    assert np.array_equal(pkg.run(x).outputs[0], np.load(tmp_path / "f.npy"))


def test_compile_errors_are_the_commands(tmp_path):
    missing = str(tmp_path / "missing.onnx")
    with pytest.raises(vacc.Error) as e:
        vacc.compile(missing)
    assert str(e.value) == cli_error("compile", missing)
    with pytest.raises(vacc.Error) as e:
        vacc.compile(MODEL, calibrate_method="median")
    assert str(e.value) == cli_error("compile", MODEL, "--calibrate-method", "median")
    with pytest.raises(vacc.Error) as e:
        vacc.compile(MODEL, percentile=99.0)
    assert str(e.value) == cli_error("compile", MODEL, "--percentile", "99")
    with pytest.raises(vacc.Error) as e:
        vacc.compile(MODEL, vthreads=3)
    assert str(e.value) == cli_error("compile", MODEL, "--vthreads", "3")
    with pytest.raises(vacc.Error) as e:
        vacc.compile(MODEL, calibration=np.zeros((4, 3, 5, 5), np.float32))
    np.save(tmp_path / "bad_calib.npy", np.zeros((4, 3, 5, 5), np.float32))
    expected = cli_error("compile", MODEL, "--calibration", tmp_path / "bad_calib.npy")
    assert str(e.value) == expected.replace(str(tmp_path / "bad_calib.npy"), "calibration array")


@pytest.mark.parametrize("bad", [np.zeros((1, 1, 28, 27), np.float32),
                                 np.zeros((2, 1, 28, 28), np.float32),
                                 np.zeros((1, 1, 28, 28), np.int32),
                                 np.zeros((1, 28, 28, 1), np.int64)])
def test_wrong_input_shape_or_dtype_is_refused_with_the_commands_message(cnn_package, bad,
                                                                         tmp_path):
    path = tmp_path / "model.vpkg"
    cnn_package.save(str(path))
    pkg = vacc.Package.load(str(path))
    with pytest.raises(vacc.Error) as e:
        pkg.run(bad)
    np.save(tmp_path / "bad.npy", bad)
    expected = cli_error("run", "--sim", "--engine", "fsim", path, "--input", tmp_path / "bad.npy")
    assert str(e.value) == expected.replace(str(tmp_path / "bad.npy"), "inputs[0]")


def test_run_errors_are_the_commands(cnn_package, samples, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, samples[:1])
    with pytest.raises(vacc.Error) as e:
        cnn_package.run(samples[:1], engine="gpu")
    assert str(e.value) == cli_error("run", "--sim", "--engine", "gpu", MODEL, "--input", x)
    with pytest.raises(vacc.Error) as e:
        cnn_package.run(samples[:1], cpu="fast")
    assert str(e.value) == cli_error("run", "--sim", "--engine", "fsim", "--cpu", "fast", MODEL,
                                     "--input", x)
    with pytest.raises(vacc.Error) as e:
        cnn_package.run(samples[:1], config="small")
    assert "small" in str(e.value)


def test_the_gil_is_released_while_the_simulator_runs(cnn_package, samples):
    x = samples[:1]
    t0 = time.perf_counter()
    cnn_package.run(x, engine="rtl")  # the cycle-accurate simulator: tens of milliseconds
    one = time.perf_counter() - t0
    assert one > 0.02, "a run too short to tell"
    ticks = 0
    done = threading.Event()

    def runs():
        for _ in range(3):
            cnn_package.run(x, engine="rtl")
        done.set()

    thread = threading.Thread(target=runs)
    thread.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    thread.join()
    # Held for the whole of each run, the GIL would let this loop tick only between runs.
    assert ticks >= max(10, int(0.25 * 3 * one / 0.001)), (ticks, one)


def test_tiny_model_runs_on_every_simulator_engine(tiny_model, tmp_path):
    x = np.random.default_rng(1).normal(size=(1, 64)).astype(np.float32)
    pkg = vacc.compile(tiny_model, "small")
    assert pkg.accelerator_steps > 0
    fsim = pkg.run(x, engine="fsim").outputs[0]
    perf = pkg.run(x, engine="perf").outputs[0]
    assert np.array_equal(fsim, perf)
    expected, _ = cli_run(tiny_model, x, tmp_path, "--config", "small")
    assert np.array_equal(fsim, expected)


def test_remote_engine_runs_on_a_vacc_serve(cnn_package, samples):
    import subprocess
    from conftest import EXE
    server = subprocess.Popen([EXE, "serve", "--engine", "fsim", "--config", "default",
                               "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on "), line + server.stderr.read()
        address = line.split()[-1]
        x = samples[13:14]
        r = cnn_package.run(x, engine=address)
        assert r.engine == "fsim at " + address
        assert np.array_equal(r.outputs[0], cnn_package.run(x, engine="fsim").outputs[0])
        assert len(r.profile.rows) == cnn_package.steps
    finally:
        server.terminate()
        server.wait(timeout=30)
