"""vacc.torch: a torch.nn.Module compiled for a vacc accelerator, called like the module.

    fast = vacc.torch.compile(model, (x,), config="default", calibration=samples)
    y = fast(x)          # torch tensors in, torch tensors out; runs on fsim by default

Debian's torch is 1.13 (no torch.compile): the module is exported to ONNX in memory with
torch.onnx.export and compiled by vacc.compile.
"""

import torch as _torch

import vacc as _vacc


class CompiledModule:
    """A compiled module: calling it runs the package (``engine``, as Package.run) on torch
    tensors and returns torch tensors (one, or a tuple when the model has several outputs).
    ``package`` is the vacc.Package; ``last_result`` the last run's RunResult."""

    def __init__(self, package, engine="fsim", **run_options):
        self.package = package
        self.engine = engine
        self.run_options = run_options
        self.last_result = None

    def __call__(self, *inputs):
        arrays = [t.detach().cpu().numpy() if isinstance(t, _torch.Tensor) else t for t in inputs]
        self.last_result = self.package.run(arrays, engine=self.engine, **self.run_options)
        outs = [_torch.from_numpy(o) for o in self.last_result.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)


def compile(module, example_inputs, config="default", *, engine="fsim", run_options=None,
            **compile_options):
    """Compiles ``module`` (exported with ``example_inputs``) with vacc.compile(config=...,
    **compile_options) and returns a CompiledModule running on ``engine``."""
    if isinstance(example_inputs, _torch.Tensor):
        example_inputs = (example_inputs,)
    package = _vacc.compile(module, config, example_inputs=tuple(example_inputs),
                            **compile_options)
    return CompiledModule(package, engine, **(run_options or {}))
