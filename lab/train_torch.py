"""The networks' training in PyTorch (`python -m lab.train_patches --torch`, and
`python -m lab.train --torch` for the cell network).

For the patch networks, the same network, loss, augmentation and schedule as
`lab.train_patches.fit` (Adam with cosine decay, weighted cross-entropy, random quarter
turns, mirror images and shifts of up to two pixels), several times quicker on the CPU than
the plain-numpy trainer, which makes wider networks practical to train. The results are a
`vision.patches.PatchNetwork` and a `vision.learned.Network`: reading never needs PyTorch.
Only training does, and only with `--torch`: PyTorch is not one of the project's
dependencies (on the development machine: `pip install torch==2.13.0`, the CPU build).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from vision.learned import Network
from vision.patches import Conv, PatchNetwork


def fit_torch(x: np.ndarray, extras: np.ndarray, y: np.ndarray, weight: np.ndarray, *,
              layers: Sequence[tuple[int, int]], hidden: int, classes: int,
              epochs: int = 20, batch: int = 256, seed: int = 0, lr: float = 1e-3,
              decay: float = 1e-5, threads: int | None = None, turns: bool = True,
              init: PatchNetwork | None = None, log: bool = False, jitter: float = 0.0
              ) -> PatchNetwork:
    """Fit a patch network to stored uint8 patches `x` ((n, h, w, channels), read as
    `x / 128 - 1`), the further inputs of its output layer and the labels, each example
    counting by its weight. `layers`: per stride-2 convolution, its output channels and
    kernel size. With `turns` a batch is turned by a random number of quarter turns and
    mirrored left to right at random (square patches whose content has no direction);
    without, it is mirrored at random along and across (a deck patch). With `jitter`, each
    patch is also seen in other light and colours (see `jittered`)."""
    try:
        import torch
        from torch import nn
        from torch.nn import functional
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise SystemExit("--torch needs PyTorch: pip install torch==2.13.0") from exc

    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    side_h, side_w, depth = x.shape[1], x.shape[2], x.shape[3]

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            channels, high, wide = depth, side_h, side_w
            self.convs = nn.ModuleList()
            for out_ch, k in layers:
                conv = nn.Conv2d(channels, out_ch, k, stride=2, padding=k // 2)
                nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
                nn.init.zeros_(conv.bias)
                self.convs.append(conv)
                channels, high, wide = out_ch, (high + 1) // 2, (wide + 1) // 2
            self.fc1 = nn.Linear(channels * high * wide, hidden)
            self.fc2 = nn.Linear(hidden + extras.shape[1], classes)

        def forward(self, xb: torch.Tensor, eb: torch.Tensor) -> torch.Tensor:
            h = xb
            for conv in self.convs:
                h = functional.relu(conv(h))
            h = functional.relu(self.fc1(h.flatten(1)))
            out: torch.Tensor = self.fc2(torch.cat([h, eb], 1))
            return out

    net = Net()
    if init is not None:
        _start_from(net, init, torch)
    optimiser = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=decay)
    steps = epochs * ((len(y) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, max(steps, 1))
    rng = np.random.default_rng(seed)
    labels = torch.from_numpy(y.astype(np.int64))
    more = torch.from_numpy(extras.astype(np.float32))
    weights = torch.from_numpy(weight.astype(np.float32))
    for epoch in range(epochs):
        started = time.perf_counter()
        total = 0.0
        order = rng.permutation(len(y))
        for start in range(0, len(y), batch):
            idx = np.sort(order[start:start + batch])
            xb = torch.from_numpy(x[idx]).permute(0, 3, 1, 2).float() / 128.0 - 1.0
            if turns:
                xb = torch.rot90(xb, int(rng.integers(4)), (2, 3))
            elif rng.random() < 0.5:
                xb = torch.flip(xb, (2,))
            if rng.random() < 0.5:
                xb = torch.flip(xb, (3,))
            dy, dx = (int(v) for v in rng.integers(-2, 3, 2))
            xb = torch.roll(xb, (dy, dx), (2, 3))
            if jitter > 0.0:
                xb = torch.from_numpy(jittered(xb.numpy(), jitter, rng))
            rows = torch.from_numpy(idx)
            loss = (functional.cross_entropy(net(xb, more[rows]), labels[rows],
                                             reduction="none") * weights[rows]).mean()
            total += _descend(optimiser, loss) * len(idx)
            schedule.step()
        if log:
            _report(epoch, epochs, total / max(len(y), 1), started)
    return _to_numpy(net)


def jittered(xb: np.ndarray, spread: float, rng: np.random.Generator) -> np.ndarray:
    """A batch of patches ((n, channels, h, w), as the network reads them: a colour over
    the bare board's, less 1) seen in other light and colours: each patch's colour ratios
    scaled per channel by a gain of log-spread `spread` (the same for the frame's channels
    and the calibration photo's after them, as a board of another colour or a lamp of
    another hue would scale both), the frame's by a third as much again of its own (the
    light changed since calibration), and a little noise; clipped to what the network can
    be given."""
    n, channels = xb.shape[:2]
    colours = 3
    shared = np.exp(rng.normal(0.0, spread, (n, colours)))
    gain = np.tile(shared, (1, channels // colours))
    gain[:, :colours] *= np.exp(rng.normal(0.0, spread / 3, (n, colours)))
    noise = rng.normal(0.0, 0.02, xb.shape)
    seen = (xb + 1.0) * gain[:, :, None, None].astype(np.float32) - 1.0 + noise
    result: np.ndarray = np.clip(seen, -1.0, 255.0 / 128.0 - 1.0).astype(np.float32)
    return result


def _descend(optimiser: Any, loss: Any) -> float:
    """One step of `optimiser` down `loss`'s gradient; the loss's value."""
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    return float(loss.detach())


def _report(epoch: int, epochs: int, loss: float, started: float) -> None:
    print(f"epoch {epoch + 1}/{epochs}: loss {loss:.4f} "
          f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)


def _start_from(net: Any, init: PatchNetwork, torch: Any) -> None:
    """Copy a numpy network's weights into the PyTorch network `net` of the same shape."""
    pairs = [(conv.weight, c.weight) for conv, c in zip(net.convs, init.convs, strict=True)]
    pairs += [(conv.bias, c.bias) for conv, c in zip(net.convs, init.convs, strict=True)]
    pairs += [(net.fc1.weight, init.w1.T), (net.fc1.bias, init.b1),
              (net.fc2.weight, init.w2.T), (net.fc2.bias, init.b2)]
    with torch.no_grad():
        for param, value in pairs:
            if tuple(param.shape) != value.shape:
                raise SystemExit(f"the network to start from has another shape: "
                                 f"{tuple(value.shape)} where {tuple(param.shape)} is needed")
            param.copy_(torch.from_numpy(np.ascontiguousarray(value, np.float32)))


def _to_numpy(net: Any) -> PatchNetwork:
    convs = tuple(Conv(c.weight.detach().numpy().astype(np.float32).copy(),
                       c.bias.detach().numpy().astype(np.float32).copy(), 2)
                  for c in net.convs)
    return PatchNetwork(convs,
                        net.fc1.weight.detach().numpy().T.astype(np.float32).copy(),
                        net.fc1.bias.detach().numpy().astype(np.float32).copy(),
                        net.fc2.weight.detach().numpy().T.astype(np.float32).copy(),
                        net.fc2.bias.detach().numpy().astype(np.float32).copy())


def fit_cells_torch(x: np.ndarray, y: np.ndarray, classes: int, *, hidden: int, epochs: int,
                    weight: np.ndarray, seed: int = 0, log: bool = False) -> Network:
    """The cell network's training (`lab.train.train`: one hidden layer, Adam at 3e-3
    then a fifth of it for the last quarter of the epochs, an L2 penalty of 1e-4 on the
    first layer, batches of 256, weighted cross-entropy) in PyTorch, on one thread: about
    ten times quicker than in numpy. The same inputs and seed give the same network."""
    try:
        import torch
        from torch.nn import functional
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise SystemExit("--torch needs PyTorch: pip install torch==2.13.0") from exc

    torch.set_num_threads(1)
    torch.set_flush_denormal(True)  # tiny weights would otherwise slow it tenfold
    generator = torch.Generator().manual_seed(seed)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    xs = torch.tensor((x - mean) / scale, dtype=torch.float32)
    labels = torch.tensor(y)
    weights = torch.tensor(weight, dtype=torch.float32)
    n, d = xs.shape
    w1 = torch.nn.Parameter(torch.randn(d, hidden, generator=generator) * np.sqrt(2 / d))
    b1 = torch.nn.Parameter(torch.zeros(hidden))
    w2 = torch.nn.Parameter(torch.randn(hidden, classes, generator=generator)
                            * np.sqrt(1 / hidden))
    b2 = torch.nn.Parameter(torch.zeros(classes))
    optimiser = torch.optim.Adam([{"params": [w1], "weight_decay": 1e-4},
                                  {"params": [b1, w2, b2]}], lr=3e-3)
    for epoch in range(epochs):
        if epoch == epochs * 3 // 4:
            for group in optimiser.param_groups:
                group["lr"] /= 5
        started = time.perf_counter()
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for start in range(0, n, 256):
            idx = order[start:start + 256]
            h = torch.relu(xs[idx] @ w1 + b1)
            loss = (functional.cross_entropy(h @ w2 + b2, labels[idx], reduction="none")
                    * weights[idx]).mean()
            total += _descend(optimiser, loss) * len(idx)
        if log:
            _report(epoch, epochs, total / max(n, 1), started)

    def plain(value: Any) -> np.ndarray:
        return np.asarray(value.detach().numpy(), np.float64)

    return Network(mean, scale, plain(w1), plain(b1), plain(w2), plain(b2))
