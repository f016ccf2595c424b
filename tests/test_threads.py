"""How training shares the cores (minibert/runtime/threads.py, blas.py): BLAS's thread count, matmuls cut
into parts that run at once, the old plan where Numba's threads would spin, and everything put back."""

import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.kernels import matmul
from minibert.runtime import threads
from minibert.runtime.blas import openblas
from minibert.runtime.threads import matmul_parts, training_threads

pytestmark = [
    pytest.mark.skipif(openblas() is None, reason="NumPy's BLAS here is not an OpenBLAS we can reach"),
    pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one core: nothing to share"),
]


@pytest.fixture
def quiet_layer(monkeypatch):
    """Numba's threads count as sleeping when idle, whatever layer earlier tests started in this process."""
    monkeypatch.setattr(threads, "_idle_threads_sleep", lambda: True)


def test_openblas_thread_count_can_be_read_and_set():
    """The count we set is the count NumPy's OpenBLAS reports back (and the old one is restored)."""
    blas = openblas()
    before = blas.threads
    try:
        blas.threads = 1
        assert blas.threads == 1
    finally:
        blas.threads = before
    assert blas.threads == before


def test_a_fresh_training_process_gets_the_quiet_layer_and_shares_the_cores():
    """In a new interpreter, where no parallel kernel has run, training_threads picks Numba's workqueue
    layer, puts OpenBLAS on one thread and the kernels on every thread, and a kernel runs on that layer."""
    script = textwrap.dedent("""
        import numba, numpy as np
        from minibert.kernels import gelu_forward
        from minibert.runtime.blas import openblas
        from minibert.runtime.threads import matmul_parts, training_threads
        with training_threads():
            gelu_forward(np.ones(1 << 17, np.float32))  # large enough to run in parallel
            print(numba.threading_layer(), openblas().threads, numba.get_num_threads(), matmul_parts())
    """)
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_THREADING_LAYER"}
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env=environment).stdout.split()
    cores = numba.config.NUMBA_NUM_THREADS
    assert shown == ["workqueue", "1", str(cores), str(cores)]


def test_where_numba_threads_spin_only_the_matmuls_are_shared(monkeypatch):
    """Numba's threads would spin: the matmuls are still cut in parts, the kernels get one thread."""
    monkeypatch.setattr(threads, "_idle_threads_sleep", lambda: False)
    blas = openblas()
    blas_before, kernels_before = blas.threads, numba.get_num_threads()
    cores = numba.config.NUMBA_NUM_THREADS
    with training_threads():
        assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, 1, cores)
    assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (blas_before, kernels_before, 1)


def test_a_training_step_gives_the_same_bits_on_one_kernel_thread_or_all(monkeypatch):
    """What makes a run reproducible whichever way the cores were shared: a step of mini-sized arrays
    (large enough for the parallel kernels) gives the same loss and gradients, bit for bit, with the kernels
    on one thread or on every thread."""
    from minibert.model import BertConfig, BertForPreTraining

    results = []
    for spins in (False, True):
        monkeypatch.setattr(threads, "_idle_threads_sleep", lambda spins=spins: not spins)
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=512), seed=0).train()
        with training_threads():
            results.append(loss_and_gradients_of_a_step(model, batch_size=16, seq_len=64, predictions=8))
    assert all(np.array_equal(one, other) for one, other in zip(*results, strict=True))


def loss_and_gradients_of_a_step(model, batch_size, seq_len, predictions):
    """[loss, then every parameter's gradient] of one pretraining step of `model` on a random batch (the same
    batch for the same sizes)."""
    from minibert.model import pretraining_loss

    vocab = model.config.vocab_size
    rng = np.random.default_rng(0)
    ids = rng.integers(5, vocab, size=(batch_size, seq_len))
    positions = rng.integers(1, seq_len, size=(batch_size, predictions))
    targets = rng.integers(5, vocab, size=(batch_size, predictions))
    labels = rng.integers(0, 2, size=batch_size)
    output = model(ids, np.zeros_like(ids), np.ones_like(ids), masked_positions=positions)
    loss, _, _ = pretraining_loss(output, targets, np.ones((batch_size, predictions)), labels)
    loss.backward()
    return [loss.data] + [parameter.grad for parameter in model.parameters()]


def test_training_threads_shares_the_cores_and_puts_everything_back(quiet_layer):
    """Inside: OpenBLAS on one thread, each large matmul in one part per thread, the kernels on every thread
    (minibert asked Numba for its workqueue layer, whose idle threads sleep). After: the counts as before,
    also when the block raises, and a nested block changes nothing."""
    blas = openblas()
    blas_before, kernels_before = blas.threads, numba.get_num_threads()
    cores = numba.config.NUMBA_NUM_THREADS
    with pytest.raises(RuntimeError, match="inside"):
        with training_threads():
            assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, cores, cores)
            with training_threads(1):
                assert matmul_parts() == cores
            assert matmul_parts() == cores
            raise RuntimeError("inside")
    assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (blas_before, kernels_before, 1)


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["rows", "columns", "batch"]), size=st.integers(1, 300),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_matmul_in_parts_equals_one_product(quiet_layer, kind, size, dtype, seed):
    """Cut in parts (rows of a, columns of b, or the batch, whichever the shapes call for) the product is
    a @ b, odd sizes included; shapes are chosen so that it is large enough to be cut."""
    rng = np.random.default_rng(seed)
    shapes = {"rows": ((size + 240, 128), (128, 150)), "columns": ((120, 256), (256, size + 160)),
              "batch": ((size % 7 + 3, 128, 96), (size % 7 + 3, 96, 128))}[kind]
    a, b = (rng.standard_normal(shape).astype(dtype) for shape in shapes)
    assert a.size * b.shape[-1] >= matmul.SPLIT_MIN_WORK
    cut = []
    with training_threads(2):
        original = matmul.run_together
        matmul.run_together = lambda tasks: (cut.append(len(tasks)), original(tasks))
        try:
            c = matmul.matmul_forward(a, b)
            grad_a, grad_b = matmul.matmul_backward(np.ones_like(c), a, b)
        finally:
            matmul.run_together = original
    assert cut == [2, 2]  # the forward in two parts; the backward's two products, one on each thread
    tolerance = {np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(c, a @ b, rtol=tolerance, atol=tolerance * 128)
    np.testing.assert_allclose(grad_a, np.ones_like(c) @ b.swapaxes(-1, -2), rtol=tolerance, atol=tolerance * 400)
    np.testing.assert_allclose(grad_b, a.swapaxes(-1, -2) @ np.ones_like(c), rtol=tolerance, atol=tolerance * 400)


def test_a_backward_pair_computes_each_product_whole_on_its_own_thread(quiet_layer):
    """matmul_pair, as Linear's backward calls it: one run_together call gets two tasks, each a whole product
    (not a part of one), and the results are the two products."""
    rng = np.random.default_rng(0)
    grad_rows, weight, rows = (rng.standard_normal(shape) for shape in ((600, 96), (96, 80), (600, 80)))
    calls = []
    with training_threads(2):
        original = matmul.run_together
        matmul.run_together = lambda tasks: (calls.append([task.args for task in tasks]), original(tasks))
        try:
            grad_x, grad_weight = matmul.matmul_pair(grad_rows, weight, grad_rows.T, rows)
        finally:
            matmul.run_together = original
    shapes = [[(a.shape, b.shape) for a, b in call] for call in calls]
    assert shapes == [[((600, 96), (96, 80)), ((96, 600), (600, 80))]]
    np.testing.assert_allclose(grad_x, grad_rows @ weight, rtol=1e-12)
    np.testing.assert_allclose(grad_weight, grad_rows.T @ rows, rtol=1e-12)


def test_products_in_parts_can_write_into_strided_views(quiet_layer):
    """As the fused attention uses them: a batched product cut in parts, and a backward pair, write into
    transposed views of larger arrays (the heads of a (B, S, A, D) array) and give a @ b there."""
    rng = np.random.default_rng(0)
    probs, grad = rng.standard_normal((8, 4, 128, 128)), rng.standard_normal((8, 4, 128, 64))
    values = rng.standard_normal((8, 128, 4, 64)).transpose(0, 2, 1, 3)  # (B, A, S, D), a strided view
    context = np.zeros((8, 128, 4, 64))
    grads = np.zeros((8, 128, 2, 4, 64))
    calls = []
    with training_threads(2):
        original = matmul.run_together
        matmul.run_together = lambda tasks: (calls.append(len(tasks)), original(tasks))
        try:
            matmul.matmul_forward(probs, values, out=context.transpose(0, 2, 1, 3))
            first, second = grads.transpose(2, 0, 3, 1, 4)
            matmul.matmul_pair(probs, grad, probs.swapaxes(-1, -2), grad, out1=first, out2=second)
        finally:
            matmul.run_together = original
    assert calls == [2, 2]
    np.testing.assert_allclose(context.transpose(0, 2, 1, 3), probs @ values, rtol=1e-12)
    np.testing.assert_allclose(grads[:, :, 0].transpose(0, 2, 1, 3), probs @ grad, rtol=1e-12)
    np.testing.assert_allclose(grads[:, :, 1].transpose(0, 2, 1, 3), probs.swapaxes(-1, -2) @ grad, rtol=1e-12)
