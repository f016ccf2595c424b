"""How minibert shares the cores (minibert/runtime/threads.py, blas.py): the process plan on first use and
its opt-out, BLAS's thread count, matmuls cut into parts that run at once, the fallback where Numba's
threads would spin, a run's `threads` choice, and the same bits every way."""

import json
import os
import platform
import subprocess
import sys

import numba
import numpy as np
import pytest
from helpers import loss_and_gradients_of_a_step
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


@pytest.fixture(autouse=True)
def plan_applied():
    """The plan applies on first use: in this process, before a test patches how it reads Numba's layer."""
    threads.plan_is_on()


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


# In a fresh interpreter: OpenBLAS's threads before minibert computes anything, and after a pretraining step of
# arrays large enough for split matmuls and parallel kernels the thread plan, and whether a new 64 MiB array got
# an mmap of its own (glibc's default) or came from the heap (the plan's malloc options). The step's loss and
# gradients go to the .npz file named by the second argument.
FIRST_USE = """
import ctypes, ctypes.util, json, sys
import numba, numpy as np
from minibert import BertConfig, BertForPreTraining, leave_process_alone, pretraining_loss, use_fused_ops
from minibert.runtime.blas import openblas
from minibert.runtime.threads import matmul_parts
if sys.argv[1] == "function":
    leave_process_alone()
use_fused_ops()
before = openblas().threads
config = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=512, max_position_embeddings=64)
model = BertForPreTraining(config, seed=0).train()
rng = np.random.default_rng(0)
ids = rng.integers(5, 512, size=(16, 64))
output = model(ids, np.zeros_like(ids), np.ones_like(ids), masked_positions=rng.integers(1, 64, size=(16, 8)))
loss = pretraining_loss(output, rng.integers(5, 512, size=(16, 8)), np.ones((16, 8)), rng.integers(0, 2, 16))[0]
loss.backward()
np.savez(sys.argv[2], loss.data, *[parameter.grad for parameter in model.parameters()])
class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2; hblks counts the blocks mmapped apart
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]
mallinfo2 = ctypes.CDLL(ctypes.util.find_library("c")).mallinfo2
mallinfo2.restype = MallInfo2
mapped_before = mallinfo2().hblks
large = np.ones(16 << 20, np.float32)  # 64 MiB: past the largest size glibc's own threshold serves from the heap
print(json.dumps({"blas": [before, openblas().threads], "layer": numba.threading_layer(),
                  "kernel_threads": numba.get_num_threads(), "parts": matmul_parts(),
                  "mapped_apart": mallinfo2().hblks - mapped_before}))
"""


def first_use(opt_out, folder):
    """FIRST_USE's report and step, with OpenBLAS started on 2 threads; opt_out: None, "function" (the
    script calls leave_process_alone first) or "variable" (MINIBERT_PROCESS_PLAN=off)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("NUMBA_THREADING_LAYER", threads.PLAN_VARIABLE)}
    environment["OPENBLAS_NUM_THREADS"] = "2"
    if opt_out == "variable":
        environment[threads.PLAN_VARIABLE] = "off"
    step_file = folder / f"{opt_out}.npz"
    done = subprocess.run([sys.executable, "-c", FIRST_USE, str(opt_out), str(step_file)], capture_output=True,
                          text=True, check=True, env=environment)
    report = json.loads(done.stdout)
    with np.load(step_file) as arrays:
        report["step"] = [arrays[name] for name in arrays.files]
    return report


glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallinfo2 and mallopt are glibc's")


@pytest.fixture(scope="module")
def first_uses(tmp_path_factory):
    folder = tmp_path_factory.mktemp("first_use")
    return {opt_out: first_use(opt_out, folder) for opt_out in (None, "function", "variable")}


@glibc
def test_the_plan_applies_on_first_use(first_uses):
    """A user's own loop gets the plan with no call: OpenBLAS untouched until minibert computes, then on one
    thread; the kernels on every thread of the quiet workqueue layer; large matmuls in one part per thread;
    no array mapped apart from the heap, so freed memory stays for the next step."""
    planned, cores = first_uses[None], numba.config.NUMBA_NUM_THREADS
    assert planned["blas"] == [2, 1]
    assert (planned["layer"], planned["kernel_threads"], planned["parts"]) == ("workqueue", cores, cores)
    assert planned["mapped_apart"] == 0


@glibc
@pytest.mark.parametrize("opt_out", ["function", "variable"])
def test_opting_out_leaves_blas_threads_and_malloc_alone(first_uses, opt_out):
    """leave_process_alone() or MINIBERT_PROCESS_PLAN=off: OpenBLAS keeps its 2 threads, matmuls are not
    cut, and glibc maps the 64 MiB array apart from the heap, as it does by default."""
    left_alone = first_uses[opt_out]
    assert left_alone["blas"] == [2, 2] and left_alone["parts"] == 1
    assert left_alone["mapped_apart"] >= 1


@glibc
def test_a_step_gives_the_same_numbers_with_the_plan_or_without(first_uses):
    """The plan changes where the numbers are computed, not what they are: the loss and every gradient agree
    to float32 rounding. Not bit for bit: OpenBLAS's sums depend on how a product is cut among threads (its
    own or our parts); minibert's kernels give the same bits on any number of threads (test below)."""
    planned = first_uses[None]["step"]
    assert first_uses["function"]["step"][0] == first_uses["variable"]["step"][0]
    for opt_out in ("function", "variable"):
        for with_plan, without in zip(planned, first_uses[opt_out]["step"], strict=True):
            np.testing.assert_allclose(with_plan, without, rtol=1e-4, atol=1e-6)


# A process whose plan has helper threads forks; the child computes a product large enough to be split.
FORK = """
import os, numpy as np
from minibert.kernels import matmul
from minibert.runtime.threads import matmul_parts
a, b = np.ones((2048, 512), np.float32), np.ones((512, 512), np.float32)
matmul.matmul_forward(a, b)
assert matmul_parts() > 1
child = os.fork()
if child == 0:
    os._exit(0 if (matmul.matmul_forward(a, b) == 512).all() else 1)
print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_gets_helper_threads_of_its_own():
    """The helper threads do not survive a fork: without helpers of its own, the child's first split matmul
    would wait for them for ever."""
    done = subprocess.run([sys.executable, "-c", FORK], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["0"]


def test_where_numba_threads_spin_only_the_matmuls_are_shared(monkeypatch):
    """Numba's threads would spin: the matmuls are still cut in parts, the kernels get one thread."""
    monkeypatch.setattr(threads, "_idle_threads_sleep", lambda: False)
    blas = openblas()
    cores = numba.config.NUMBA_NUM_THREADS
    with training_threads(1), training_threads(cores):
        assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, 1, cores)


def test_a_training_step_gives_the_same_bits_on_one_kernel_thread_or_all(monkeypatch):
    """What makes a run reproducible whichever way Numba's threads run: a step of mini-sized arrays (large
    enough for the parallel kernels) gives the same loss and gradients, bit for bit, with the kernels on one
    thread (as where Numba's threads would spin) or on every thread, the matmuls cut the same way."""
    from minibert.model import BertConfig, BertForPreTraining

    cores = numba.config.NUMBA_NUM_THREADS
    results = []
    for spins in (False, True):
        monkeypatch.setattr(threads, "_idle_threads_sleep", lambda spins=spins: not spins)
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=512), seed=0).train()
        with training_threads(1), training_threads(cores):
            assert numba.get_num_threads() == (1 if spins else cores)
            results.append(loss_and_gradients_of_a_step(model, batch_size=16, seq_len=64, predictions=8))
    assert all(np.array_equal(one, other) for one, other in zip(*results, strict=True))


def test_training_threads_changes_the_cores_for_the_block_and_puts_them_back(quiet_layer):
    """With the plan on, OpenBLAS runs on one thread, each large matmul in one part per thread, the kernels
    on every thread. `training_threads(1)` (a run's `threads` choice) gives the block one thread, and the
    plan's counts come back after, also when the block raises."""
    assert threads.plan_is_on()
    blas = openblas()
    planned = (blas.threads, numba.get_num_threads(), matmul_parts())
    # the kernels' count is 1 where an earlier test started a layer whose threads spin (the fallback above)
    assert planned in ((1, numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS),
                       (1, 1, numba.config.NUMBA_NUM_THREADS))
    with pytest.raises(RuntimeError, match="inside"):
        with training_threads(1):
            assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, 1, 1)
            raise RuntimeError("inside")
    assert (blas.threads, numba.get_num_threads(), matmul_parts()) == planned


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
