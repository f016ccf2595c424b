"""Time every kernel's forward + backward at the `mini` model's shapes: Numba kernel vs NumPy reference.

Run it as

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/kernel_speed.py

These machines set OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE), which roughly halves NumPy's sgemm;
the benchmark unsets them for its own command only. Never unset them in tests or CI.

Shapes (mini: batch B=32, seq S=128, hidden H=256, heads A=4, head size D=64, FFN 1024, vocabulary 8192):
  matmul (B*S, H) @ (H, 1024), and attention's batched (B*A, S, D) @ (B*A, D, S);
  softmax on (B, A, S, S) with a (B, 1, 1, S) padding mask; GELU on (B*S, 1024) (forward and backward, and
  as training runs it: with its slope, then one multiplication; and with the bias added inside, beside the same
  as separate steps); dropout on (B, A, S, S); LayerNorm on (B*S, H),
  and fused with dropout and the residual add ("add & norm", beside the same as three kernels);
  cross-entropy on (640, 8192) (B * 20 masked positions over the vocabulary).
It also prints Numba's compile time (cold: a fresh cache directory; warm: the same directory again), the BLAS
library NumPy uses, and a sweep of square matmuls that times lesson 04's blocked loop kernel
(lessons/blocked_matmul.py) against BLAS at every size; the library itself always calls BLAS.
The machine has 2 cores shared with other work: figures are rough, so each is the best of several runs.
On a busy machine a parallel loop waits for its slowest thread, so `--threads 1` (Numba on one thread, a
per-core comparison with NumPy's single-threaded elementwise code) gives steadier figures.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "lessons")]

from blocked_matmul import blocked_matmul  # noqa: E402
from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.fast.allocator import reuse_freed_memory  # noqa: E402
from minibert.fast.kernels import add_norm, bias_gelu  # noqa: E402
from minibert.fast.kernels import seeded_dropout as dropout  # noqa: E402
from minibert.kernels import cross_entropy, gelu, layernorm, softmax  # noqa: E402

B, S, H, A, FFN, VOCAB, MASKED = 32, 128, 256, 4, 1024, 8192, 20
D = H // A


def best_ms(fn, repeats=15):
    """Best wall time of fn() in milliseconds, after one untimed call (which also compiles)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def forward_backward(forward, backward):
    """One function that runs a forward and then its backward: what a training step pays per op."""
    def step():
        backward(forward())
    return step


def cases(rng):
    """(name, numba step, numpy step, BLAS step or None) for every op, float32 as in training."""
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    rows = normal(B * S, H)
    w_in = normal(H, FFN) * f32(0.05)
    grad_ffn = normal(B * S, FFN)
    q = normal(B * A, S, D)
    k_t = normal(B * A, D, S)
    grad_scores = normal(B * A, S, S)

    scores = normal(B, A, S, S)
    padding = np.zeros((B, 1, 1, S), dtype=f32)
    padding[: B // 2, ..., S * 3 // 4:] = np.finfo(f32).min  # half the batch padded in its last quarter
    grad_probs = normal(B, A, S, S)

    hidden = normal(B * S, FFN)
    ffn_bias = normal(FFN)
    ln_x, ln_w, ln_b, ln_grad = normal(B * S, H), normal(H), normal(H), normal(B * S, H)
    logits = normal(B * MASKED, VOCAB) * f32(3.0)
    targets = rng.integers(0, VOCAB, B * MASKED)
    grad_nll = np.full(B * MASKED, 1.0 / (B * MASKED), dtype=f32)

    def matmul_case(a, b, grad_c):
        def step(forward, backward):
            return lambda: (forward(a, b), backward(grad_c, a, b))
        def backward(product):  # `@`'s two gradient products (autograd/ops.py MatMul), by `product`
            return lambda grad_c, a, b: (product(grad_c, b.swapaxes(-1, -2)), product(a.swapaxes(-1, -2), grad_c))
        blas = step(np.matmul, backward(np.matmul))
        return step(blocked_matmul, backward(blocked_matmul)), blas, blas

    def softmax_step(m):
        return forward_backward(lambda: m.softmax_forward_numba(scores, padding),
                                lambda y: m.softmax_backward_numba(grad_probs, y))

    def softmax_reference():
        y = softmax.softmax_forward_numpy(scores, padding)
        softmax.softmax_backward_numpy(grad_probs, y)

    def gelu_steps(form):
        def step(forward, backward):
            return lambda: (forward(hidden, form), backward(grad_ffn, hidden, form))
        return (step(gelu.gelu_forward_numba, gelu.gelu_backward_numba),
                step(gelu.gelu_forward_numpy, gelu.gelu_backward_numpy))

    def bias_gelu_step(forward, backward):
        # the feed-forward's GELU with the first Linear's bias added in its pass, and the bias gradient's sum
        return lambda: backward(grad_ffn, forward(hidden, ffn_bias, "none")[1])

    def bias_gelu_plain_step(forward, backward):
        # the same as the core runs it: a bias add, GELU's forward and backward kernels, and NumPy's sum
        def step():
            z = hidden + ffn_bias
            forward(z, "none")
            backward(grad_ffn, z, "none").sum(axis=0)
        return step

    def dropout_step(forward, backward):
        # attention's dropout, BERT's p = 0.1, a fresh seed per call as in training
        def step():
            _, kept = forward(scores, dropout.draw_seed(rng), 0.9)
            backward(grad_probs, kept, 0.9)
        return step

    def layer_norm_step(forward, backward):
        def step():
            _, mean, rstd = forward(ln_x, ln_w, ln_b, 1e-12)
            backward(ln_grad, ln_x, ln_w, mean, rstd)
        return step

    def add_norm_step(forward, backward):
        # the end of a sublayer with BERT's p = 0.1: LayerNorm(residual + Dropout(h)), a fresh seed per call
        def step():
            seed = dropout.draw_seed(rng)
            _, s, mean, rstd = forward(ln_x, ln_grad, seed, 0.9, ln_w, ln_b, 1e-12)
            backward(ln_grad, s, ln_w, mean, rstd, seed, 0.9)
        return step

    def add_norm_plain_step(dropout_forward, dropout_backward, norm_forward, norm_backward):
        # the same as three kernels and NumPy's add, one after the other
        def step():
            dropped, kept = dropout_forward(ln_x, dropout.draw_seed(rng), 0.9)
            s = ln_grad + dropped
            _, mean, rstd = norm_forward(s, ln_w, ln_b, 1e-12)
            grad_s, _, _ = norm_backward(ln_grad, s, ln_w, mean, rstd)
            dropout_backward(grad_s, kept, 0.9)
        return step

    def cross_entropy_step(forward, backward):
        def step():
            _, logsumexp = forward(logits, targets)
            backward(grad_nll, logits, targets, logsumexp)
        return step

    return [
        (f"matmul ({B * S},{H})@({H},{FFN})", *matmul_case(rows, w_in, grad_ffn)),
        (f"matmul ({B * A},{S},{D})@({B * A},{D},{S})", *matmul_case(q, k_t, grad_scores)),
        (f"softmax ({B},{A},{S},{S}) mask ({B},1,1,{S})", softmax_step(softmax), softmax_reference, None),
        (f"gelu exact ({B * S},{FFN})", *gelu_steps("none"), None),
        (f"gelu tanh ({B * S},{FFN})", *gelu_steps("tanh"), None),
        (f"bias + gelu exact with slope ({B * S},{FFN})",
         bias_gelu_step(bias_gelu.bias_gelu_with_slope_numba, bias_gelu.bias_gelu_backward_numba),
         bias_gelu_step(bias_gelu.bias_gelu_with_slope_numpy, bias_gelu.bias_gelu_backward_numpy), None),
        ("  the same as bias add, gelu, gelu backward, sum",
         bias_gelu_plain_step(gelu.gelu_forward_numba, gelu.gelu_backward_numba),
         bias_gelu_plain_step(gelu.gelu_forward_numpy, gelu.gelu_backward_numpy), None),
        (f"dropout p=0.1 ({B},{A},{S},{S})",
         dropout_step(dropout.dropout_forward_numba, dropout.dropout_backward_numba),
         dropout_step(dropout.dropout_forward_numpy, dropout.dropout_backward_numpy), None),
        (f"layer_norm ({B * S},{H})",
         layer_norm_step(layernorm.layer_norm_forward_numba, layernorm.layer_norm_backward_numba),
         layer_norm_step(layernorm.layer_norm_forward_numpy, layernorm.layer_norm_backward_numpy), None),
        (f"add & norm, p=0.1 ({B * S},{H})",
         add_norm_step(add_norm.add_norm_forward_numba, add_norm.add_norm_backward_numba),
         add_norm_step(add_norm.add_norm_forward_numpy, add_norm.add_norm_backward_numpy), None),
        ("  the same as dropout, add, layer_norm",
         add_norm_plain_step(dropout.dropout_forward_numba, dropout.dropout_backward_numba,
                             layernorm.layer_norm_forward_numba, layernorm.layer_norm_backward_numba),
         add_norm_plain_step(dropout.dropout_forward_numpy, dropout.dropout_backward_numpy,
                             layernorm.layer_norm_forward_numpy, layernorm.layer_norm_backward_numpy), None),
        (f"cross_entropy ({B * MASKED},{VOCAB})",
         cross_entropy_step(cross_entropy.softmax_cross_entropy_forward_numba,
                            cross_entropy.softmax_cross_entropy_backward_numba),
         cross_entropy_step(cross_entropy.softmax_cross_entropy_forward_numpy,
                            cross_entropy.softmax_cross_entropy_backward_numpy), None),
    ]


def print_kernel_table():
    print("forward + backward, float32, best of 15 (ms); speedup = NumPy reference / Numba kernel")
    print(f"{'op':<44}{'numba':>9}{'numpy':>9}{'BLAS':>9}{'speedup':>9}")
    for name, numba_step, numpy_step, blas_step in cases(np.random.default_rng(0)):
        numba_ms, numpy_ms = best_ms(numba_step), best_ms(numpy_step)
        blas = f"{best_ms(blas_step):9.2f}" if blas_step else f"{'-':>9}"
        print(f"{name:<44}{numba_ms:9.2f}{numpy_ms:9.2f}{blas}{numpy_ms / numba_ms:8.1f}x")
    print("(for matmul the NumPy reference is BLAS itself, which both backends use; the numba column is "
          "lesson 04's blocked loop kernel)")


def print_matmul_crossover():
    """Square (G, n, n) @ (G, n, n) matmuls, loop kernel vs BLAS, forward only."""
    rng = np.random.default_rng(1)
    print("\nmatmul crossover, float32 (n, n) @ (n, n), batch G; microseconds, best of 15")
    print(f"{'G':>4}{'n':>6}{'M*K*N':>12}{'loop':>10}{'BLAS':>10}  faster")
    for batch in (1, 64):
        for n in (4, 8, 16, 24, 32, 48, 64, 96, 128, 256):
            a = rng.standard_normal((batch, n, n)).astype(np.float32)
            b = rng.standard_normal((batch, n, n)).astype(np.float32)
            loop_us = best_ms(lambda a=a, b=b: blocked_matmul(a, b)) * 1e3
            blas_us = best_ms(lambda a=a, b=b: a @ b) * 1e3
            faster = "loop" if loop_us < blas_us else "BLAS"
            print(f"{batch:>4}{n:>6}{n ** 3:>12}{loop_us:10.1f}{blas_us:10.1f}  {faster}")


COMPILE_SNIPPET = """
import time
import numpy as np
start = time.perf_counter()
from minibert.fast.kernels import add_norm, bias_gelu
from minibert.kernels import cross_entropy, gelu, layernorm, softmax
x = np.ones((4, 8), dtype=np.float32)
y = softmax.softmax_forward_numba(x, np.zeros((1, 8), dtype=np.float32))
softmax.softmax_backward_numba(x, y)
y = softmax.log_softmax_forward_numba(x)
softmax.log_softmax_backward_numba(x, y)
gelu.gelu_forward_numba(x)
gelu.gelu_backward_numba(x, x)
_, slope = bias_gelu.bias_gelu_with_slope_numba(x, x[0], "none")
bias_gelu.bias_gelu_backward_numba(x, slope)
_, mean, rstd = layernorm.layer_norm_forward_numba(x, x[0], x[0], 1e-12)
layernorm.layer_norm_backward_numba(x, x, x[0], mean, rstd)
_, s, mean, rstd = add_norm.add_norm_forward_numba(x, x, np.uint64(1), 0.9, x[0], x[0], 1e-12)
add_norm.add_norm_backward_numba(x, s, x[0], mean, rstd, np.uint64(1), 0.9)
_, lse = cross_entropy.softmax_cross_entropy_forward_numba(x, np.zeros(4, dtype=np.int64))
cross_entropy.softmax_cross_entropy_backward_numba(x[:, 0], x, np.zeros(4, dtype=np.int64), lse)
print(time.perf_counter() - start)
"""


def print_compile_times():
    """Import + first call of every Numba kernel (float32): cold in a fresh cache, then warm from it."""
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=ROOT)
        seconds = [float(subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, check=True,
                                        capture_output=True, text=True).stdout) for _ in range(2)]
    print(f"\nNumba compile, 14 kernels (float32), import + first calls: cold {seconds[0]:.2f} s, "
          f"warm cache {seconds[1]:.2f} s")


def print_blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        print("BLAS: threadpoolctl not installed, cannot tell which library NumPy uses")
        return
    for pool in threadpool_info():
        if pool["user_api"] == "blas":
            print(f"BLAS: {pool['internal_api']} {pool['version']}, kernel {pool.get('architecture')}, "
                  f"{pool['num_threads']} threads")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')}")


def print_load(when):
    """The machine's load: Numba's parallel loops slow down badly when other processes hold the cores."""
    one, five, _ = os.getloadavg()
    print(f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS,
                        help="threads for Numba's parallel loops (default: all cores)")
    numba.set_num_threads(parser.parse_args().threads)
    # as training does: freed arrays' memory is kept for the next call, so no figure pays the page faults of
    # fresh memory (without this, GELU with its slope took 13 ms here instead of 3)
    reuse_freed_memory()
    print(f"CPU: {describe_cpu()}; Numba: {numba.get_num_threads()} threads")
    print_blas_info()
    print_load("at start")
    print_kernel_table()
    print_matmul_crossover()
    print_compile_times()
    print_load("at end")
