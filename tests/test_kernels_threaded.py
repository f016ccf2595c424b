"""The multi-threaded path of every kernel that training runs in parallel, against its NumPy reference.

The core's kernels run their prange loops on Numba's threads; the speed layer's `launch` (minibert/fast/
threads.py) runs its fused kernels on one thread below PARALLEL_MIN_ELEMENTS numbers and on every Numba
thread from there on. Here each kernel gets float32 arrays (training's dtype) just above that threshold,
forward and backward, fused kernels included. Each threaded result must match the NumPy reference within float32's
tolerance, and equal the same kernel run on one thread bit for bit (row kernels give each row to one
thread; column sums add fixed chunks of rows, so their order does not depend on the thread count).
"""

import numba
import numpy as np
import pytest
from helpers import assert_matches

from minibert.fast.kernels import add_norm, attention_weights, bias_gelu
from minibert.fast.kernels import seeded_dropout as dropout
from minibert.fast.threads import PARALLEL_MIN_ELEMENTS, on_one_thread
from minibert.kernels import cross_entropy, gelu, layernorm, softmax

DTYPE = np.float32
ROWS, COLS = 2 * 4 * 65, 128  # (B·A·S or B·S, H): 66,560 numbers, just above the threshold
SEED = np.uint64(0x5EED)


@pytest.fixture(autouse=True)
def several_threads():
    """The threaded path needs more than one Numba thread to be a threaded path."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba has one thread on this machine: there is no threaded path to compare")
    threads = numba.get_num_threads()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    yield
    numba.set_num_threads(threads)


def arrays(count, shape=(ROWS, COLS), seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    assert int(np.prod(shape)) >= PARALLEL_MIN_ELEMENTS
    return [(rng.standard_normal(shape) * scale).astype(DTYPE) for _ in range(count)]


def check_threaded(module, kernel, args, scale=None):
    """`module`'s Numba kernel `kernel` on all threads matches its NumPy reference (within float32's
    tolerance, atol per unit of `scale`) and its own one-thread run (bit for bit); returns the threaded
    outputs."""
    numba_kernel, numpy_kernel = getattr(module, f"{kernel}_numba"), getattr(module, f"{kernel}_numpy")
    threaded = numba_kernel(*args)
    outputs = threaded if isinstance(threaded, tuple) else (threaded,)
    wanted = numpy_kernel(*args)
    wanted = wanted if isinstance(wanted, tuple) else (wanted,)
    single = on_one_thread(numba_kernel, *args)
    single = single if isinstance(single, tuple) else (single,)
    for index, (actual, reference, alone) in enumerate(zip(outputs, wanted, single, strict=True)):
        if reference.dtype == bool:  # dropout's mask of kept elements
            np.testing.assert_array_equal(actual, reference)
        else:
            assert_matches(actual, reference, DTYPE, scale)
        np.testing.assert_array_equal(actual, alone, err_msg=f"output {index}: threaded != one thread")
    return threaded


@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward(log):
    """(Log-)softmax over 128 keys with half of batch 1's keys masked, and its backward."""
    x, grad_y = arrays(2, seed=1, scale=3.0)
    mask = np.zeros((2, 1, 1, COLS), DTYPE)
    mask[1, ..., COLS // 2:] = np.finfo(DTYPE).min
    x = x.reshape(2, 4, 65, COLS)
    mask = softmax.prepare_mask(mask, x, "test")
    name = "log_softmax" if log else "softmax"
    y = check_threaded(softmax, f"{name}_forward", (x, mask), scale=float(np.max(np.abs(x))) + 1.0)
    check_threaded(softmax, f"{name}_backward", (grad_y.reshape(x.shape), y),
                   scale=COLS * float(np.max(np.abs(grad_y))))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_and_bias_gelu_forward_and_backward(approximate):
    """GELU, bias + GELU (the speed layer's fused op for the feed-forward), and their backwards (atol per
    unit of the largest |x|, as test_kernels.py's GELU tests)."""
    x, grad_y = arrays(2, seed=2, scale=3.0)
    bias = np.random.default_rng(3).standard_normal(COLS).astype(DTYPE)
    scale = float(np.max(np.abs(x)) + np.max(np.abs(bias)))
    check_threaded(gelu, "gelu_forward", (x, approximate), scale)
    check_threaded(gelu, "gelu_backward", (grad_y, x, approximate), scale * float(np.max(np.abs(grad_y))))
    _, slope = check_threaded(bias_gelu, "bias_gelu_with_slope", (x, bias, approximate), scale)
    check_threaded(bias_gelu, "bias_gelu_backward", (grad_y, slope), scale=ROWS * float(np.max(np.abs(grad_y * slope))))


def test_layer_norm_forward_and_backward():
    """LayerNorm over 128 features: (y, mean, rstd), then (grad_x, grad_weight, grad_bias)."""
    x, grad_y = arrays(2, seed=4)
    weight, bias = np.random.default_rng(5).standard_normal((2, COLS)).astype(DTYPE)
    _, mean, rstd = check_threaded(layernorm, "layer_norm_forward", (x, weight, bias, 1e-5), scale=10.0)
    check_threaded(layernorm, "layer_norm_backward", (grad_y, x, weight, mean, rstd),
                   scale=ROWS * float(np.max(np.abs(grad_y)) * np.max(np.abs(weight))))


@pytest.mark.parametrize("keep", [1.0, 0.9])
def test_add_norm_forward_and_backward(keep):
    """Dropout, residual add and LayerNorm as one kernel (every sublayer's end), with and without dropout."""
    h, residual, grad_y = arrays(3, seed=6)
    weight, bias = np.random.default_rng(7).standard_normal((2, COLS)).astype(DTYPE)
    _, s, mean, rstd = check_threaded(add_norm, "add_norm_forward", (h, residual, SEED, keep, weight, bias, 1e-5),
                                      scale=10.0)
    check_threaded(add_norm, "add_norm_backward", (grad_y, s, weight, mean, rstd, SEED, keep),
                   scale=ROWS * float(np.max(np.abs(grad_y)) * np.max(np.abs(weight))) / keep)


@pytest.mark.parametrize("keep", [1.0, 0.9])
def test_attention_weights_forward_and_backward(keep):
    """The scaled, masked softmax and its dropout as one kernel (attention's), and its backward."""
    scores, grad_dropped = (a.reshape(2, 4, 65, COLS) for a in arrays(2, seed=8, scale=3.0))
    mask = np.zeros((2, 1, 1, COLS), DTYPE)
    mask[0, ..., 100:] = np.finfo(DTYPE).min
    probs, _ = check_threaded(attention_weights, "attention_weights_forward", (scores, mask, 0.125, SEED, keep),
                              scale=1.0 / keep)
    check_threaded(attention_weights, "attention_weights_backward", (grad_dropped, probs, 0.125, SEED, keep),
                   scale=COLS * float(np.max(np.abs(grad_dropped))) / keep)


def test_dropout_forward_and_backward():
    """Dropout's mask from the seed, and its backward: the same bits on every thread count and backend."""
    x, grad_y = arrays(2, seed=9)
    _, kept = check_threaded(dropout, "dropout_forward", (x, SEED, 0.9))
    check_threaded(dropout, "dropout_backward", (grad_y, kept, 0.9))


def test_cross_entropy_forward_and_backward():
    """Softmax cross-entropy over 128 classes for 520 rows: (nll, logsumexp), then grad_logits."""
    logits = arrays(1, seed=10, scale=5.0)[0]
    rng = np.random.default_rng(11)
    targets, grad_nll = rng.integers(0, COLS, ROWS), rng.random(ROWS).astype(DTYPE)
    _, logsumexp = check_threaded(cross_entropy, "softmax_cross_entropy_forward", (logits, targets), scale=20.0)
    check_threaded(cross_entropy, "softmax_cross_entropy_backward", (grad_nll, logits, targets, logsumexp))
