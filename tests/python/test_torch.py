"""vacc.torch.compile and vacc.compile of a torch.nn.Module, against PyTorch's own output."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import vacc
import vacc.torch


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = torch.nn.functional.max_pool2d(x, 2)
        return self.fc(torch.flatten(x, 1))


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return SmallNet().eval()


def images(n, seed):
    return torch.from_numpy(np.random.default_rng(seed).normal(size=(n, 3, 16, 16))
                            .astype(np.float32))


def test_float_round_trip_matches_pytorch(net):
    x = images(1, 1)
    fast = vacc.torch.compile(net, (x,), config="default", float=True)
    y = fast(x)
    assert isinstance(y, torch.Tensor) and y.shape == (1, 10)
    with torch.no_grad():
        want = net(x)
    assert torch.allclose(y, want, rtol=1e-4, atol=1e-4), (y - want).abs().max()
    # Another input through the same compiled module.
    x2 = images(1, 2)
    with torch.no_grad():
        assert torch.allclose(fast(x2), net(x2), rtol=1e-4, atol=1e-4)


def test_int8_round_trip_on_the_accelerator_is_close_to_pytorch(net):
    calib = images(64, 3)
    fast = vacc.torch.compile(net, images(1, 0), config="default", calibration=calib)
    assert fast.package.accelerator_steps > 0 and fast.package.quantized
    worst = 0.0
    for seed in range(10, 16):
        x = images(1, seed)
        with torch.no_grad():
            want = net(x)
        got = fast(x)
        cos = torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0)
        assert cos > 0.99, cos
        worst = max(worst, float((got - want).abs().max() / want.abs().max()))
    assert worst < 0.1, worst
    # The accelerator ran: the last run's profile has cycles on it.
    fast.engine = "perf"
    fast(images(1, 20))
    assert fast.last_result.profile.total["cycles"] > 0


def test_vacc_compile_takes_a_module_and_needs_example_inputs(net):
    with pytest.raises(vacc.Error, match="example_inputs"):
        vacc.compile(net)
    x = images(1, 4)
    pkg = vacc.compile(net, "default", example_inputs=(x,), float=True)
    assert pkg.inputs[0]["shape"] == (1, 3, 16, 16)
    with torch.no_grad():
        assert np.allclose(pkg.run(x.numpy()).outputs[0], net(x).numpy(), rtol=1e-4, atol=1e-4)
