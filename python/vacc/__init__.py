"""vacc from Python: the library the ``vacc`` command uses, bound with pybind11.

    import vacc
    cfg = vacc.Config("default").derive({"gemm.block_in": 32})
    pkg = vacc.compile("model.onnx", cfg, calibration=samples)     # or an onnx.ModelProto,
    result = pkg.run(x, engine="perf")                              # or a torch.nn.Module
    result.outputs[0], result.profile.layers, result.profile.total

Every check and message is the command's: a diagnostic is raised as ``vacc.Error`` with the
text ``vacc`` prints after "error: ". The Python here only converts arguments and results.
"""

import os as _os

from ._vacc import Config, Error, Package, __version__
from . import _vacc

__all__ = ["Config", "Error", "Package", "RunResult", "Profile", "SweepResult", "TuneResult",
           "compile", "sweep", "tune", "__version__"]


def _frame(rows):
    """A pandas DataFrame of ``rows`` when pandas is importable, else the list itself."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


class Profile:
    """A run's per-layer profile, as ``vacc run --json`` prints it.

    ``rows``: one dict per step (index, layer, op, where, macs, executed_macs, cycles,
    utilization, seconds, ...); ``layers``: the same as a pandas DataFrame when pandas is
    installed; ``total``: the totals; ``table``: the command's text table.
    """

    def __init__(self, doc, table):
        self.rows = doc["layers"]
        self.total = doc["total"]
        self.table = table

    @property
    def layers(self):
        return _frame(self.rows)

    def __repr__(self):
        return self.table


class RunResult:
    """What ``Package.run`` returns: ``outputs`` (NumPy arrays, one per graph output; none for
    a timing-only run), ``profile`` (Profile), ``engine``, ``cpu``, ``seconds``."""

    def __init__(self, d):
        self.outputs = list(d["outputs"])
        self.profile = Profile(d["profile"], d["table"])
        self.engine = d["engine"]
        self.cpu = d["cpu"]
        self.cpu_kernels = d["cpu_kernels"]
        self.seconds = d["seconds"]

    def __iter__(self):  # outputs, profile = pkg.run(x)
        return iter((self.outputs, self.profile))

    def __repr__(self):
        return "<vacc.RunResult engine=%s, %d outputs, %.3f s>" % (
            self.engine, len(self.outputs), self.seconds)


def _run(self, inputs, engine="fsim", *, config=None, cpu="reference", fallback="cpu",
         timing_only=False, no_build=False, cycle_limit=None, xclbin="", device="",
         token_file="", timeout=600.0):
    """Runs the package on ``inputs`` (a NumPy array, or a list with one per model input).

    engine: "fsim", "perf", "rtl", "xrt" (a board; ``xclbin=``), or "HOST:PORT" of a
    ``vacc serve``. The other options are ``vacc run``'s. Returns a RunResult. The GIL is
    released while the model runs.
    """
    kwargs = {}
    if cycle_limit is not None:
        kwargs["cycle_limit"] = cycle_limit
    if isinstance(config, str):
        config = Config(config)
    return RunResult(self._run(inputs, engine=engine, config=config, cpu=cpu, fallback=fallback,
                               timing_only=timing_only, no_build=no_build, xclbin=xclbin,
                               device=device, token_file=token_file, timeout=timeout, **kwargs))


Package.run = _run


def _is_torch_module(model):
    try:
        import torch
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def _export_torch(module, example_inputs):
    """The ONNX bytes of a torch.nn.Module, exported in memory."""
    import io
    import torch
    if example_inputs is None:
        raise Error("a torch.nn.Module needs example_inputs (a tensor or a tuple of them) to "
                    "be exported")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    buf = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            torch.onnx.export(module, tuple(example_inputs), buf, opset_version=13,
                              input_names=["input%d" % i for i in range(len(example_inputs))],
                              do_constant_folding=True)
    finally:
        module.train(was_training)
    return buf.getvalue(), [tuple(t.shape) for t in example_inputs]


def compile(model, config="default", *, example_inputs=None, calibration=None,
            calibrate_method="", percentile=0.0, batch=None, vthreads=2, dump_ir="",
            verbose=False, tuning_logs=(), tuning_db=True, program_per_layer=False,
            bias_correction=False, align_scales=False, equalize=False, unsigned_activations=True,
            weight_scales="pow2", rounding="nearest", rounding_seconds=None, keep_float=(), max_layer_loss=None,
            **options):
    """Compiles a model into a Package, as ``vacc compile`` does.

    model: an ONNX file path, an ``onnx.ModelProto``, the bytes of one, or a
    ``torch.nn.Module`` (with ``example_inputs``; exported to ONNX in memory).
    config: a Config, or a bundled config name or path.
    calibration: sample inputs, a NumPy float32 array [M, ...] or a .npy path (default as
    the command's: seeded noise, or the bundled images for the bundled model).
    calibrate_method / percentile: ``--calibrate-method`` / ``--percentile`` ("" for the
    default, minmax).
    float=True: the float model, every step on the CPU (``--float``).
    batch, vthreads, dump_ir: ``--batch``, ``--vthreads``, ``--dump-ir``.
    tuning_logs: ``vacc tune`` logs (``--tuning-log``, repeatable); tuning_db=False:
    ``--no-tuning-db``; program_per_layer=True: ``--program-per-layer``.
    bias_correction=True, align_scales=True, equalize=True: ``--bias-correction on``,
    ``--align-scales on``, ``--equalize on``;
    unsigned_activations=False: ``--unsigned-activations off``; weight_scales:
    ``--weight-scales`` ("pow2" or "exact");
    rounding: ``--rounding`` ("nearest", "hessian" or "learned"); rounding_seconds:
    ``--rounding-seconds``; keep_float: layer names (``--keep-float``); max_layer_loss: dB
    (``--max-layer-loss``).
    """
    float_model = bool(options.pop("float", False))
    if options:
        raise TypeError("compile() got unexpected keyword arguments: %s" % ", ".join(options))
    if not isinstance(config, Config):
        config = Config(str(config))
    input_shape = []
    if isinstance(model, (str, _os.PathLike)):
        data, is_bytes, source = _os.fspath(model), False, _os.fspath(model)
    elif isinstance(model, (bytes, bytearray)):
        data, is_bytes, source = bytes(model), True, "model.onnx"
    elif hasattr(model, "SerializeToString"):  # onnx.ModelProto
        name = getattr(getattr(model, "graph", None), "name", "") or "model"
        data, is_bytes, source = model.SerializeToString(), True, name + ".onnx"
    elif _is_torch_module(model):
        data, shapes = _export_torch(model, example_inputs)
        is_bytes, source = True, type(model).__name__ + ".onnx"
        input_shape = list(shapes[0])
        if batch is None and input_shape:
            batch = input_shape[0]
    else:
        raise Error("compile: give an ONNX path, an onnx.ModelProto or a torch.nn.Module, "
                    "not %s" % type(model).__name__)
    if calibration is not None and not isinstance(calibration, (str, _os.PathLike)):
        try:
            import torch
            if isinstance(calibration, torch.Tensor):
                calibration = calibration.detach().cpu().numpy()
        except ImportError:
            pass
    elif calibration is not None:
        calibration = _os.fspath(calibration)
    return _vacc._compile(data, is_bytes, source, config, calibration, calibrate_method,
                          float(percentile), float_model, 1 if batch is None else int(batch),
                          input_shape, int(vthreads), _os.fspath(dump_ir), bool(verbose),
                          [_os.fspath(l) for l in tuning_logs], bool(tuning_db),
                          bool(program_per_layer), bool(bias_correction), bool(align_scales),
                          bool(equalize), bool(unsigned_activations), str(weight_scales),
                          str(rounding),
                          "" if rounding_seconds is None else str(rounding_seconds),
                          [str(k) for k in keep_float],
                          "" if max_layer_loss is None else str(max_layer_loss))


class SweepResult:
    """What ``vacc.sweep`` returns: ``rows`` (one dict per (point, workload), the columns of
    results.csv), ``results`` (the same as a DataFrame when pandas is installed),
    ``summary`` (the finish event of ``vacc sweep --json``), ``document`` (results.json),
    ``database`` (DIR/sweep.db, which a rerun resumes)."""

    def __init__(self, d, out_dir):
        self.document = d["results"]
        self.rows = self.document["results"]
        self.summary = d["summary"]
        self.text = d["text"]
        self.out_dir = out_dir
        self.database = self.summary.get("database")

    @property
    def results(self):
        return _frame(self.rows)

    def pareto(self, workload=None, against="area"):
        """The rows on the latency-vs-``against`` ("area" or "energy") Pareto front."""
        key = "pareto_latency_" + against
        return [r for r in self.rows if r.get(key) == 1 and
                (workload is None or r.get("workload") == workload)]

    def __repr__(self):
        return "<vacc.SweepResult %d rows in %s>" % (len(self.rows), self.out_dir)


def sweep(spec, out_dir, *, jobs=0, verify=0, synth=0, energy="", area="", retry_failed=False,
          report=True, json=False):
    """Runs an architecture sweep, as ``vacc sweep SPEC -o OUT_DIR``: ``spec`` is a spec file
    path or a dict written as the YAML would be (its relative paths are relative to the current
    directory). A rerun on the same OUT_DIR resumes. Returns a SweepResult."""
    import json as _json
    if isinstance(spec, dict):
        spec_path, spec_text = "spec", _json.dumps(spec)
    else:
        spec_path, spec_text = _os.fspath(spec), ""
    d = _vacc._sweep(spec_path, spec_text, _os.fspath(out_dir), int(jobs), int(verify),
                     int(synth), _os.fspath(energy), _os.fspath(area), bool(retry_failed),
                     bool(report), bool(json))
    return SweepResult(d, _os.fspath(out_dir))


def __getattr__(name):
    # vacc.torch imports torch only when first used.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'vacc' has no attribute %r" % name)


class TuneResult:
    """What ``vacc.tune`` returns: ``tasks`` (one dict per workload: layers, space,
    candidates, measured, heuristic_cycles, best_cycles, best_at, schedule), as a DataFrame in
    ``table`` when pandas is installed; ``summary`` (the whole of ``vacc tune --json``:
    heuristic_cycles and tuned_cycles weighted by each workload's layers, trials_per_second,
    ranked_per_second, verified_on_rtl); ``log`` (the tuning log, for ``compile``'s
    ``tuning_logs``); ``text`` (the command's table)."""

    def __init__(self, d):
        self.summary = d["summary"]
        self.tasks = self.summary["tasks"]
        self.log = self.summary["log"]
        self.text = d["text"]
        self.heading = d["heading"]

    @property
    def table(self):
        return _frame(self.tasks)

    @property
    def speedup(self):
        """The heuristic's program's cycles over the program compiled with the tuned schedules."""
        t = self.summary["tuned_cycles"]
        return self.summary["heuristic_cycles"] / t if t else 1.0

    def __repr__(self):
        return "<vacc.TuneResult %d workloads, %.3fx in %s>" % (len(self.tasks), self.speedup,
                                                                 self.log)


def tune(model, config="default", log=None, *, bench=None, trials=200, time_budget=0.0, jobs=1,
         strategy="model", seed=1, tails=False, verify=0, update_db=True, calibration=None,
         calibrate_method="", percentile=0.0, batch=1, verbose=False):
    """Searches each accelerator layer's schedule on the perf engine, as ``vacc tune`` does.

    model: an ONNX file path (or None with ``bench="resnet18-convs"``); config: a Config, or a
    bundled config name or path; log: the tuning log to write or resume (``-o``, required).
    trials, time_budget, jobs, strategy, seed, tails, verify: ``--trials``, ``--time-budget``,
    ``-j``, ``--strategy`` (random, grid, anneal, model), ``--seed``, ``--tails``, ``--verify``.
    update_db=False:
    ``--no-db-update``. calibration (.npy path), calibrate_method, percentile, batch: as
    ``compile``'s. verbose: print the heading and the progress.
    """
    if log is None:
        raise Error("vacc tune: give the tuning log to write (log=PATH)")
    if not isinstance(config, Config):
        config = Config(str(config))
    return TuneResult(_vacc._tune(
        "" if model is None else _os.fspath(model), bench or "", config, _os.fspath(log),
        int(trials), float(time_budget), int(jobs), str(strategy), int(seed), bool(tails),
        int(verify),
        bool(update_db), "" if calibration is None else _os.fspath(calibration),
        calibrate_method, float(percentile), int(batch), bool(verbose)))
