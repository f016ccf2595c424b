"""Time the choices the code makes against the plainer way it does not take, so their reasons stay checkable.

Run it as

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/choices.py

Each row times the way minibert does a thing against the way a comment in the code says it chose not to,
at the `mini` model's shapes (B=32, S=128, H=256, A=4), best of several runs, Numba on one thread:
- `simd.vector_max` (eight running maxima) against one running maximum, over rows of 128 float32;
- dropout's draws made inside the kernel from a seed, against drawing them from a NumPy Generator first;
- the backward of `x[a:b]`: assignment into the gradient, against `np.add.at` (which any index needs);
- an AdamW step over BERT-Mini's 11M float32 parameters in cache-sized slices (`adam.SLICE_SIZE`), against whole arrays.
The figures and the machine they came from are kept in docs/performance.md.
"""

import os
import sys

import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)
from kernel_speed import A, B, H, S, best_ms  # noqa: E402  (the same shapes and timer)

from minibert.autograd import Tensor  # noqa: E402
from minibert.fast.kernels import seeded_dropout as dropout  # noqa: E402
from minibert.kernels import simd  # noqa: E402
from minibert.optim import AdamW, adam  # noqa: E402


@njit(cache=True)
def single_chain_max(values):
    m = values[0]
    for j in range(1, len(values)):
        m = max(m, values[j])
    return m


@njit(parallel=True, cache=True)
def row_maxima(rows, eight_chains):
    out = np.empty(rows.shape[0], dtype=rows.dtype)
    for i in prange(rows.shape[0]):
        out[i] = simd.vector_max(rows[i]) if eight_chains else single_chain_max(rows[i])
    return out


def row_max_case(rng):
    rows = rng.standard_normal((B * A * S, S)).astype(np.float32)  # attention's score rows
    return (f"row max, ({B * A * S}, {S}) float32", "eight chains", lambda: row_maxima(rows, True),
            "one chain", lambda: row_maxima(rows, False))


def dropout_case(rng):
    probs = rng.random((B, A, S, S)).astype(np.float32)  # attention's probabilities

    def generator_draws():
        keep = rng.random(probs.shape, dtype=np.float32) < 0.9
        return probs * keep / np.float32(0.9), keep

    return (f"dropout p=0.1, ({B}, {A}, {S}, {S}) float32", "seeded kernel",
            lambda: dropout.dropout_forward_numba(probs, dropout.draw_seed(rng), 0.9),
            "Generator draws", generator_draws)


def slice_backward_case(rng):
    # GetItem's backward for the position embeddings' rows (autograd/ops.py): a fresh gradient of the table's
    # shape, with the slice's gradient put in place
    grad = rng.standard_normal((S, H)).astype(np.float32)

    def assign():
        table_grad = np.zeros((512, H), np.float32)
        table_grad[:S] = grad

    def add_at():
        np.add.at(np.zeros((512, H), np.float32), slice(0, S), grad)

    return (f"backward of table[:{S}], table (512, {H})", "assignment", assign, "np.add.at", add_at)


def adam_case(rng):
    # BERT-Mini's weights with BERT's 30,522-token vocabulary (the optimizer does not care which)
    sizes = [(30522, H), (512, H), (30522,)] + [(H, H)] * 18 + [(4 * H, H), (H, 4 * H)] * 4 + [(H,)] * 40
    params = [Tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True) for shape in sizes]
    for param in params:
        param.grad = rng.standard_normal(param.shape).astype(np.float32)
    optimizer = AdamW(params, lr=1e-4, weight_decay=0.01)
    count = sum(param.data.size for param in params)

    def whole_arrays():
        saved, adam.SLICE_SIZE = adam.SLICE_SIZE, max(param.data.size for param in params)
        try:
            optimizer.step()
        finally:
            adam.SLICE_SIZE = saved

    return (f"AdamW step, {count / 1e6:.1f}M float32", f"slices of {adam.SLICE_SIZE}", optimizer.step,
            "whole arrays", whole_arrays)


if __name__ == "__main__":
    numba.set_num_threads(1)
    rng = np.random.default_rng(0)
    one, five, _ = os.getloadavg()
    print(f"CPU: {describe_cpu()}; Numba: {numba.get_num_threads()} thread; load average {one:.2f} (1 min), "
          f"{five:.2f} (5 min) on {os.cpu_count()} cores\n")
    print(f"{'what':<40}{'minibert':>16}{'ms':>9}{'instead':>18}{'ms':>9}")
    for case in (row_max_case, dropout_case, slice_backward_case, adam_case):
        name, ours, ours_fn, other, other_fn = case(rng)
        print(f"{name:<40}{ours:>16}{best_ms(ours_fn):9.3f}{other:>18}{best_ms(other_fn):9.3f}")
