"""1000 runs of a small package on fsim leave the process's resident memory flat."""

import numpy as np

import vacc
from conftest import tiny_mlp


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def test_a_thousand_runs_do_not_grow_the_process():
    pkg = vacc.compile(tiny_mlp(inputs=1024, hidden=64, outputs=4096), "small")
    x = np.random.default_rng(0).normal(size=(1, 1024)).astype(np.float32)
    for _ in range(100):  # warm up: kernels, device, allocator pools
        y = pkg.run(x, engine="fsim").outputs[0]
    before = rss_kib()
    for _ in range(1000):
        r = pkg.run(x, engine="fsim")
        assert r.outputs[0].shape == (1, 4096)
    after = rss_kib()
    assert np.array_equal(r.outputs[0], y)
    # A run takes 4 KiB of input and returns 16 KiB of output and a profile: keeping every
    # output (as a leak would) grows the process by about 10 MiB here; leaking the input
    # copy, by 4 MiB.
    assert after - before < 1024, (before, after)
