"""How minibert uses the cores (minibert/fast/process.py, fast/threads.py, fast/kernels/matmul.py, fast/blas.py):
plain use leaves the process alone; the process plan, entered explicitly, shares the cores and puts them back;
matmuls cut into parts that run at once, the fallback where Numba's threads would spin, and the same bits
every way."""

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

from minibert.fast import process, process_plan
from minibert.fast.blas import openblas
from minibert.fast.kernels import matmul
from minibert.fast.threads import matmul_parts

pytestmark = [
    pytest.mark.skipif(openblas() is None, reason="NumPy's BLAS here is not an OpenBLAS we can reach"),
    pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one core: nothing to share"),
]


@pytest.fixture
def quiet_layer(monkeypatch):
    """Numba's threads count as sleeping when idle, whatever layer earlier tests started in this process."""
    monkeypatch.setattr(process, "_idle_threads_sleep", lambda: True)


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


# In a fresh interpreter, with OpenBLAS started on 2 threads: the process's state (every BLAS's threads as
# threadpoolctl reads them, Numba's configured threading layer and thread count, whether a new 64 MiB array
# gets an mmap of its own, as glibc does by default, and how many parts a matmul is cut in) before and after a
# forward, backward and AdamW step of arrays large enough for the parallel kernels and split matmuls, run
# plainly ("plain") or inside the process plan ("plan", which reports its state inside the block too). The
# step's loss and gradients go to the .npz file named by the second argument.
STEP = """
import ctypes, ctypes.util, json, sys
import numba, numpy as np
from threadpoolctl import threadpool_info
from minibert import BertConfig, BertForPreTraining, fast, pretraining_loss
from minibert.fast.threads import matmul_parts
from minibert.optim import AdamW

class MallInfo2(ctypes.Structure):  # glibc's struct mallinfo2; hblks counts the blocks mmapped apart
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]
mallinfo2 = ctypes.CDLL(ctypes.util.find_library("c")).mallinfo2
mallinfo2.restype = MallInfo2

def state(ask_numba=True):
    before = mallinfo2().hblks
    large = np.ones(16 << 20, np.float32)  # 64 MiB: past the largest size glibc's own threshold serves from the heap
    mapped_apart = mallinfo2().hblks - before
    del large
    return {"blas": sorted((info["internal_api"], info["num_threads"]) for info in threadpool_info()),
            # asking Numba for its threads starts its threading layer, which the plan must choose first
            "layer": numba.config.THREADING_LAYER, "kernel_threads": numba.get_num_threads() if ask_numba else None,
            "parts": matmul_parts(), "mapped_apart": mapped_apart}

def step():
    config = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=512, max_position_embeddings=64)
    model = BertForPreTraining(config, seed=0).train()
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 512, size=(16, 64))
    output = model(ids, np.zeros_like(ids), np.ones_like(ids), masked_positions=rng.integers(1, 64, size=(16, 8)))
    loss = pretraining_loss(output, rng.integers(5, 512, size=(16, 8)), np.ones((16, 8)), rng.integers(0, 2, 16))[0]
    loss.backward()
    np.savez(sys.argv[2], loss.data, *[parameter.grad for parameter in model.parameters()])
    AdamW(model.parameters(), lr=1e-3).step()

report = {"before": state(ask_numba=sys.argv[1] == "plain")}
if sys.argv[1] == "plan":
    with fast.process_plan():
        step()
        report["inside"] = state()
else:
    step()
report["after"] = state()
print(json.dumps(report))
"""


def run_step(kind, folder):
    """STEP's report and step numbers in a fresh interpreter; kind "plain" or "plan"."""
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_THREADING_LAYER"}
    environment["OPENBLAS_NUM_THREADS"] = "2"
    step_file = folder / f"{kind}.npz"
    done = subprocess.run([sys.executable, "-c", STEP, kind, str(step_file)], capture_output=True, text=True,
                          check=True, env=environment)
    report = json.loads(done.stdout)
    with np.load(step_file) as arrays:
        report["step"] = [arrays[name] for name in arrays.files]
    return report


glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallinfo2 and mallopt are glibc's")


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("steps")
    return {kind: run_step(kind, folder) for kind in ("plain", "plan")}


@glibc
def test_plain_use_leaves_the_process_alone(steps):
    """Importing minibert and a plain forward, backward and AdamW step change nothing in the process: BLAS's
    threads (threadpoolctl), Numba's configured threading layer and thread count, and malloc's settings (a
    64 MiB array is still mapped apart from the heap, glibc's default) are what they were, and no matmul is
    cut."""
    before, after = steps["plain"]["before"], steps["plain"]["after"]
    threads_before, threads_after = dict(map(tuple, before.pop("blas"))), dict(map(tuple, after.pop("blas")))
    assert after == before
    assert threads_before["openblas"] == 2
    # Numba's first parallel kernel loads its threading library (OpenMP here), at its own default: no change
    # of any library the process had; every library keeps (or starts with) its own thread count.
    assert {api: threads_after[api] for api in threads_before} == threads_before
    cores = numba.config.NUMBA_NUM_THREADS
    assert all(count == cores for api, count in threads_after.items() if api not in threads_before)
    assert before["mapped_apart"] >= 1 and before["parts"] == 1


@glibc
def test_the_process_plan_applies_inside_its_block_and_gives_the_threads_back(steps):
    """Inside `process_plan()`: every OpenBLAS on one thread, the kernels on every thread of the quiet
    workqueue layer, large matmuls in one part per thread, no array mapped apart from the heap (freed memory
    stays for the next step). After it: BLAS's threads and the matmuls as before; the layer and malloc's
    options stay (neither can be undone in a running process), as the plan's docstring says.

    Where SciPy is installed, Numba loads SciPy's OpenBLAS beside NumPy's when the step compiles its first
    kernel: inside the block it must sleep too, and after it run on the count every OpenBLAS here starts
    with (OPENBLAS_NUM_THREADS), so the libraries after the block, not their number, are compared."""
    plan, cores = steps["plan"], numba.config.NUMBA_NUM_THREADS
    inside = plan["inside"]
    openblas_threads = [threads for api, threads in inside["blas"] if api == "openblas"]
    assert openblas_threads and set(openblas_threads) == {1}
    assert (inside["layer"], inside["kernel_threads"], inside["parts"]) == ("workqueue", cores, cores)
    assert inside["mapped_apart"] == 0
    after, before = plan["after"], plan["before"]
    assert {tuple(entry) for entry in after["blas"]} == {tuple(entry) for entry in before["blas"]}
    assert (after["kernel_threads"], after["parts"]) == (cores, 1)


@glibc
def test_a_step_gives_the_same_numbers_with_the_plan_or_without(steps):
    """The plan changes where the numbers are computed, not what they are: the loss and every gradient agree
    to float32 rounding. Not bit for bit: OpenBLAS's sums depend on how a product is cut among threads (its
    own or our parts); minibert's kernels give the same bits on any number of threads (test below)."""
    for with_plan, without in zip(steps["plan"]["step"], steps["plain"]["step"], strict=True):
        np.testing.assert_allclose(with_plan, without, rtol=1e-4, atol=1e-6)


# A process inside the plan, with helper threads, forks; the child computes a product large enough to be split.
FORK = """
import os, numpy as np
from minibert.fast import process_plan
from minibert.fast.kernels import matmul
from minibert.fast.threads import matmul_parts
a, b = np.ones((2048, 512), np.float32), np.ones((512, 512), np.float32)
with process_plan():
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
    monkeypatch.setattr(process, "_idle_threads_sleep", lambda: False)
    blas = openblas()
    cores = numba.config.NUMBA_NUM_THREADS
    with process_plan(1), process_plan(cores):
        assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, 1, cores)


def test_a_training_step_gives_the_same_bits_on_one_kernel_thread_or_all(monkeypatch):
    """What makes a run reproducible whichever way Numba's threads run: a step of mini-sized arrays (large
    enough for the parallel kernels) gives the same loss and gradients, bit for bit, with the kernels on one
    thread (as where Numba's threads would spin) or on every thread, the matmuls cut the same way."""
    from minibert.model import BertConfig, BertForPreTraining

    cores = numba.config.NUMBA_NUM_THREADS
    results = []
    for spins in (False, True):
        monkeypatch.setattr(process, "_idle_threads_sleep", lambda spins=spins: not spins)
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=512), seed=0).train()
        with process_plan(1), process_plan(cores):
            assert numba.get_num_threads() == (1 if spins else cores)
            results.append(loss_and_gradients_of_a_step(model, batch_size=16, seq_len=64, predictions=8))
    assert all(np.array_equal(one, other) for one, other in zip(*results, strict=True))


def test_process_plan_changes_the_cores_for_the_block_and_puts_them_back(quiet_layer):
    """Inside the plan OpenBLAS runs on one thread, each large matmul in one part per thread, the kernels on
    every thread; a nested `process_plan(1)` (a run's `threads` choice) gives its block one thread, and each
    block's counts come back after it, also when the block raises."""
    blas = openblas()
    cores = numba.config.NUMBA_NUM_THREADS
    before = (blas.threads, numba.get_num_threads(), matmul_parts())
    with process_plan():
        assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, cores, cores)
        with pytest.raises(RuntimeError, match="inside"), process_plan(1):
            assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, 1, 1)
            raise RuntimeError("inside")
        assert (blas.threads, numba.get_num_threads(), matmul_parts()) == (1, cores, cores)
    assert (blas.threads, numba.get_num_threads(), matmul_parts()) == before


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
    with process_plan(2):
        original = matmul.run_together
        matmul.run_together = lambda tasks: (cut.append(len(tasks)), original(tasks))
        try:
            c = matmul.matmul_forward(a, b)
            grad_a, grad_b = matmul.matmul_pair(np.ones_like(c), b.swapaxes(-1, -2), a.swapaxes(-1, -2),
                                                np.ones_like(c))
        finally:
            matmul.run_together = original
    assert cut == [2, 2]  # the forward in two parts; a backward's two products, one on each thread
    tolerance = {np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(c, a @ b, rtol=tolerance, atol=tolerance * 128)
    np.testing.assert_allclose(grad_a, np.ones_like(c) @ b.swapaxes(-1, -2), rtol=tolerance, atol=tolerance * 400)
    np.testing.assert_allclose(grad_b, a.swapaxes(-1, -2) @ np.ones_like(c), rtol=tolerance, atol=tolerance * 400)


def test_a_backward_pair_computes_each_product_whole_on_its_own_thread(quiet_layer):
    """matmul_pair, as the speed layer's Linear backward calls it: one run_together call gets two tasks, each a
    whole product (not a part of one), and the results are the two products."""
    rng = np.random.default_rng(0)
    grad_rows, weight, rows = (rng.standard_normal(shape) for shape in ((600, 96), (96, 80), (600, 80)))
    calls = []
    with process_plan(2):
        original = matmul.run_together
        matmul.run_together = lambda tasks: (calls.append([task.args for task in tasks]), original(tasks))
        try:
            grad_x, grad_weight = matmul.matmul_pair(grad_rows, weight, grad_rows.T, rows)
        finally:
            matmul.run_together = original
    shapes = [[(a.shape, b.shape) for a, b in call] for call in calls]
    assert shapes == [[((600, 96), (96, 80)), ((96, 600), (600, 80))]]
    np.testing.assert_allclose(grad_x, grad_rows @ weight, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_weight, grad_rows.T @ rows, rtol=1e-12, atol=1e-12)


def test_products_in_parts_can_write_into_strided_views(quiet_layer):
    """As the fused attention uses them: a batched product cut in parts, and a backward pair, write into
    transposed views of larger arrays (the heads of a (B, S, A, D) array) and give a @ b there."""
    rng = np.random.default_rng(0)
    probs, grad = rng.standard_normal((8, 4, 128, 128)), rng.standard_normal((8, 4, 128, 64))
    values = rng.standard_normal((8, 128, 4, 64)).transpose(0, 2, 1, 3)  # (B, A, S, D), a strided view
    context = np.zeros((8, 128, 4, 64))
    grads = np.zeros((8, 128, 2, 4, 64))
    calls = []
    with process_plan(2):
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
