"""Time one forward + backward pass of the `mini` BERT (L4/H256/A4/FFN1024, vocabulary 8192) on a pretraining
batch: B = 32 sequences of S = 128 tokens, P = 20 masked positions each, padded like real batches.

Run it with NumPy's BLAS at full speed (these machines set OPENBLAS_CORETYPE=Haswell, which halves sgemm):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/model.py [--steps 10] [--preset mini]

It prints the BLAS and thread pools in use, the seconds per forward+backward (median over the steps, after
one warm-up step that also compiles or loads the Numba kernels), tokens per second, and peak memory: the
largest amount NumPy held during one step (tracemalloc) and the process's peak resident size (ru_maxrss).
For scale: PyTorch 2.13 takes 0.67-0.71 s for a whole training step (this pass plus AdamW) on this model.
"""

import argparse
import contextlib
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.model import BertConfig, BertForPreTraining, pretraining_loss  # noqa: E402


def make_batch(config, batch_size, seq_len, num_masked, rng):
    """A random batch in Google's feature names; each row padded after a random length in [S/2, S]."""
    lengths = rng.integers(seq_len // 2, seq_len + 1, size=batch_size)
    input_mask = (np.arange(seq_len) < lengths[:, None]).astype(np.int64)  # (B, S)
    input_ids = rng.integers(5, config.vocab_size, size=(batch_size, seq_len)) * input_mask
    segment_ids = (np.arange(seq_len) >= lengths[:, None] // 2).astype(np.int64) * input_mask
    positions = np.stack([np.sort(rng.choice(np.arange(1, length), num_masked, replace=False))
                          for length in lengths])  # (B, P)
    return {
        "input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids,
        "masked_lm_positions": positions,
        "masked_lm_ids": rng.integers(5, config.vocab_size, size=(batch_size, num_masked)),
        "masked_lm_weights": np.ones((batch_size, num_masked), dtype=np.float32),
        "next_sentence_labels": rng.integers(0, 2, size=batch_size),
    }


def step(model, batch):
    """One forward and backward pass; returns the loss."""
    model.zero_grad()
    output = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"],
                   masked_positions=batch["masked_lm_positions"])
    loss, _, _ = pretraining_loss(output, batch["masked_lm_ids"], batch["masked_lm_weights"],
                                  batch["next_sentence_labels"])
    loss.backward()
    return loss.item()


_TRAINING = contextlib.ExitStack()  # what use_training_setup entered, held for the rest of the process


def training_model(config, seed=0):
    """A BertForPreTraining in training mode, accelerated as `python -m minibert pretrain` trains it (the
    speed layer's fused layers and pruned last layer, minibert/fast)."""
    from minibert import fast

    return fast.accelerate(BertForPreTraining(config, seed=seed).train(), prune_last_layer=True)


def use_training_setup(threads=None):
    """For the rest of the process, run on `threads` cores (None: all) with the speed layer's process plan, as
    `python -m minibert pretrain` trains (minibert/fast/process.py)."""
    from minibert import fast

    print("process plan on (minibert/fast/process.py): BLAS on one thread, matmuls in parts, quiet threads")
    _TRAINING.enter_context(fast.process_plan(threads))


# Variables that pick the instruction set NumPy's OpenBLAS, Numba and PyTorch run on.
ISA_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES",
                 "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def isa_environment(isa):
    """os.environ with the instruction set chosen: "native" (whatever this CPU has, NumPy's sgemm at full
    speed) or "avx2" (an AVX-512 CPU made to run as an AVX2 one without AVX-512, to measure what such a
    laptop would see): OpenBLAS's Haswell kernels, Numba code for Haswell, PyTorch's AVX2 kernels in ATen,
    oneDNN and MKL. Numba needs the feature list as well as the CPU name: with NUMBA_CPU_NAME alone it
    still emits AVX-512 for a host that has it. Its cache keys on both, so the two kinds of code coexist."""
    env = {name: value for name, value in os.environ.items() if name not in ISA_VARIABLES}
    if isa == "avx2":
        import llvmlite.binding

        features = llvmlite.binding.get_host_cpu_features().flatten().split(",")
        no_avx512 = ["-" + name[1:] if name[1:].startswith("avx512") else name for name in features]
        env.update(OPENBLAS_CORETYPE="Haswell", NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=",".join(no_avx512),
                   ATEN_CPU_CAPABILITY="avx2", ONEDNN_MAX_CPU_ISA="AVX2", MKL_ENABLE_INSTRUCTIONS="AVX2")
    return env


def run_as_isa(isa):
    """Start this script again in the environment of `isa_environment(isa)` unless it runs there already
    (the variables are read when the libraries load, so they cannot change in a running process)."""
    if os.environ.get("MINIBERT_BENCH_ISA") != isa:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**isa_environment(isa), "MINIBERT_BENCH_ISA": isa})


def describe_isa():
    """One line: the CPU, and the vector instructions this process lets OpenBLAS and Numba use."""
    import llvmlite.binding
    import numba

    numba_features = numba.config.CPU_FEATURES or llvmlite.binding.get_host_cpu_features().flatten()
    print(f"CPU {describe_cpu()}; run as {os.environ.get('MINIBERT_BENCH_ISA', 'this environment sets')}: "
          f"OpenBLAS kernels {os.environ.get('OPENBLAS_CORETYPE', 'for this CPU')}, Numba code "
          f"{'with' if '+avx512f' in numba_features else 'without'} AVX-512")


def describe_threads():
    import numba

    print(f"numpy {np.__version__}, numba {numba.__version__}: numba threading layer "
          f"{numba.config.THREADING_LAYER}, {numba.get_num_threads()} threads")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')}")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        np.show_config()
        return
    for pool in threadpool_info():
        print(f"  {pool['internal_api']} {pool.get('version')} ({pool.get('architecture')}), "
              f"{pool['num_threads']} threads: {pool['filepath']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="mini")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--masked", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    use_training_setup()
    describe_threads()
    config = BertConfig.preset(args.preset)
    model = training_model(config)
    print(model)
    batch = make_batch(config, args.batch, args.seq, args.masked, np.random.default_rng(0))

    step(model, batch)  # warm-up: compiles or loads the Numba kernels
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step(model, batch)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)

    tracemalloc.start()
    step(model, batch)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    tokens = args.batch * args.seq
    print(f"forward+backward, B={args.batch} S={args.seq} P={args.masked}: median {seconds:.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f}, {args.steps} steps), "
          f"{tokens / seconds:,.0f} tokens/s")
    print(f"peak memory: {peak / 2**20:.0f} MiB allocated during one step (tracemalloc), "
          f"{max_rss:.0f} MiB peak resident (ru_maxrss)")


if __name__ == "__main__":
    main()
