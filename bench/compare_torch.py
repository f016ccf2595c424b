"""minibert against PyTorch on the same CPU: one pretraining step of the `mini` BERT, side by side.

Run it with torch and transformers installed, NumPy's BLAS at full speed:

    python bench/compare_torch.py --isa native
    python bench/compare_torch.py --isa avx2    # an AVX-512 CPU run as an AVX2 one without AVX-512

These machines set OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE, which halve NumPy's sgemm (PyTorch is
unaffected): `--isa native` unsets them for the benchmark's own process only (as `env -u OPENBLAS_CORETYPE
-u OPENBLAS_L2_SIZE` would). Never unset them in tests or CI. Without
torch the PyTorch columns are left out and the rest still runs. `--only compare,profile` picks sections.

Sections, all for mini (L4/H256/A4/FFN1024, vocabulary 8192), batch 32, seq 128, 20 masked positions:
- compare: seconds for forward, backward, optimizer (AdamW) and the whole step, for minibert as `pretrain`
  trains (`minibert.fast.accelerate(model, prune_last_layer=True)`), PyTorch's best practice
  (BertModel, whose last layer runs on every row; the MLM head on the masked positions only, NSP, AdamW)
  and HuggingFace's BertForPreTraining as usually run (MLM head on every position), run alternately in one
  process; the ratio minibert / PyTorch; tokens/s; the step's peak memory (resident memory added by a step,
  each system in a fresh subprocess; and for minibert the bytes NumPy held, from tracemalloc).
- profile: minibert's step op by op (forward and backward seconds per op), the share of matmul, the
  machine's sgemm rate measured here, and MFU = model matmul FLOPs per second / that sgemm rate.
- scaling: step time and peak memory for seq 64..512 (batch adjusted to 4096 tokens) and batch 8..64; the
  attention part (scores and context matmuls, softmax, its dropout) against S², the rest against S.
- startup: import plus the first step in a fresh process, with the Numba cache warm and cold.
- inference: fill-mask on one sentence with mini, once warm, in a process of its own as the command runs it.
The 2 cores are shared with other work: every figure is the best of several runs, and the load average
is printed with it. Where other jobs leave no core free, `--cpu-time` gives steadier figures: minibert and
PyTorch on one core each, timed by the CPU seconds of this process (the work of a step, not its 2-core
wall time).
"""

import argparse
import contextlib
import json
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from model import describe_isa, describe_threads, make_batch, run_as_isa, training_model, use_training_setup  # noqa: E402, E501

from minibert.fast import kernels  # noqa: E402  (the fused kernels fast/ops.py calls)
from minibert.fast.profile import profile_ops  # noqa: E402
from minibert.model import BertConfig, BertForPreTraining, pretraining_loss  # noqa: E402
from minibert.optim import AdamW  # noqa: E402

LR = 1e-4
SECTIONS = ("compare", "profile", "scaling", "startup", "inference")
# What the timings count, and on how many cores: wall-clock seconds on every core by default; with --cpu-time
# the CPU seconds of this process on one core, which other jobs on a shared machine hardly change.
CLOCK = time.perf_counter
THREADS = None  # None: every core


def load_average():
    return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg())


def torch_or_none():
    try:
        import torch
        import transformers
    except ImportError:
        return None
    torch.set_num_threads(THREADS or os.cpu_count())
    return torch, transformers


# ---------------------------------------------------------------------------------------------------------
# The three training steps, each split into forward / backward / optimizer

class MinibertStep:
    name = "minibert"

    def __init__(self, config, batch):
        self.model = training_model(config)  # accelerated, as the pretrain command trains (minibert/fast)
        self.optimizer = AdamW(self.model.parameters(), lr=LR)
        self.batch = batch

    def forward(self):
        b = self.batch
        output = self.model(b["input_ids"], b["segment_ids"], b["input_mask"],
                            masked_positions=b["masked_lm_positions"])
        self.loss = pretraining_loss(output, b["masked_lm_ids"], b["masked_lm_weights"],
                                     b["next_sentence_labels"])[0]

    def backward(self):
        self.loss.backward()

    def optimize(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


class TorchBestPractice:
    """BertModel, then the MLM head on the gathered masked positions only, NSP, AdamW: how one would write
    a pretraining step in PyTorch (and how Google's run_pretraining.py computes it)."""

    name = "PyTorch"

    def __init__(self, config, batch, torch, transformers):
        self.torch = torch
        torch.manual_seed(0)
        self.model = transformers.BertForPreTraining(hf_config(config, transformers)).train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=LR)
        self.batch = {k: torch.from_numpy(np.asarray(v)) for k, v in batch.items()}

    def forward(self):
        b, F = self.batch, self.torch.nn.functional
        out = self.model.bert(input_ids=b["input_ids"], attention_mask=b["input_mask"],
                              token_type_ids=b["segment_ids"])
        rows = self.torch.arange(b["input_ids"].shape[0])[:, None]
        gathered = out.last_hidden_state[rows, b["masked_lm_positions"]]  # (B, P, H)
        mlm_logits = self.model.cls.predictions(gathered)  # (B, P, V)
        nsp_logits = self.model.cls.seq_relationship(out.pooler_output)  # (B, 2)
        nll = F.cross_entropy(mlm_logits.flatten(0, 1), b["masked_lm_ids"].flatten(), reduction="none")
        weights = b["masked_lm_weights"].flatten()
        mlm = (nll * weights).sum() / (weights.sum() + 1e-5)
        self.loss = mlm + F.cross_entropy(nsp_logits, b["next_sentence_labels"])

    def backward(self):
        self.loss.backward()

    def optimize(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


class HuggingFaceStep(TorchBestPractice):
    """HF's BertForPreTraining called with labels, as usually run: the MLM head on all B*S positions."""

    name = "HF BertForPreTraining"

    def __init__(self, config, batch, torch, transformers):
        super().__init__(config, batch, torch, transformers)
        b = self.batch
        labels = torch.full_like(b["input_ids"], -100)
        rows = torch.arange(labels.shape[0])[:, None]
        labels[rows, b["masked_lm_positions"]] = b["masked_lm_ids"]
        self.labels = labels

    def forward(self):
        b = self.batch
        self.loss = self.model(input_ids=b["input_ids"], attention_mask=b["input_mask"],
                               token_type_ids=b["segment_ids"], labels=self.labels,
                               next_sentence_label=b["next_sentence_labels"]).loss


def hf_config(config, transformers):
    fields = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
              "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
              "type_vocab_size", "initializer_range", "layer_norm_eps")
    return transformers.BertConfig(**{name: getattr(config, name) for name in fields})


PHASES = ("forward", "backward", "optimize")


def timed_step(runner):
    """Seconds of each phase of one step, and of the whole step."""
    seconds = {}
    for phase in PHASES:
        start = CLOCK()
        getattr(runner, phase)()
        seconds[phase] = CLOCK() - start
    seconds["step"] = sum(seconds.values())
    return seconds


def make_runners(config, batch):
    runners = [MinibertStep(config, batch)]
    found = torch_or_none()
    if found:
        runners += [TorchBestPractice(config, batch, *found), HuggingFaceStep(config, batch, *found)]
    return runners


# ---------------------------------------------------------------------------------------------------------
# Peak memory of a step: each system alone in a fresh process

def peak_step_memory_child(system, batch_size, seq_len, masked):
    """Run in a subprocess: the peak resident memory of two warm steps, above the process holding the model
    and the batch (MiB), printed as JSON.

    One step of the `tiny` model first loads the Numba kernels (or starts PyTorch's thread pool), so that
    neither counts; then the peak-RSS counter is reset (5 into /proc/self/clear_refs) and two mini steps run.
    The figure includes the Adam state (made at the first step) and whatever the allocator keeps.
    """
    def runner_for(config):
        batch = make_batch(config, batch_size, seq_len, masked, np.random.default_rng(0))
        found = torch_or_none() if system != "minibert" else None
        return {"minibert": lambda: MinibertStep(config, batch),
                "PyTorch": lambda: TorchBestPractice(config, batch, *found),
                "HF BertForPreTraining": lambda: HuggingFaceStep(config, batch, *found)}[system]()

    timed_step(runner_for(BertConfig.preset("tiny")))
    runner = runner_for(BertConfig.preset("mini"))
    before = status_mib("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    for _ in range(2):
        timed_step(runner)
    print(json.dumps({"peak_mib": status_mib("VmHWM") - before}))


def status_mib(field):
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM its peak), in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise KeyError(field)


def peak_step_memory(system, batch_size=32, seq_len=128, masked=20):
    command = [sys.executable, __file__, "--memory-child", system, "--batch", str(batch_size),
               "--seq", str(seq_len), "--masked", str(masked)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["peak_mib"]


def numpy_peak_mib(runner):
    """Largest amount NumPy held during one minibert step (tracemalloc), MiB."""
    tracemalloc.start()
    timed_step(runner)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


# ---------------------------------------------------------------------------------------------------------
# compare

def compare(config, args):
    batch = make_batch(config, args.batch, args.seq, args.masked, np.random.default_rng(0))
    runners = make_runners(config, batch)
    for runner in runners:  # warm-up: Numba kernels compile or load, PyTorch allocates
        timed_step(runner)
    times = {runner.name: [] for runner in runners}
    for _ in range(args.steps):  # alternate, so a burst of load hits every system alike
        for runner in runners:
            times[runner.name].append(timed_step(runner))
    tokens = args.batch * args.seq
    print(f"\n== one training step, mini, B={args.batch} S={args.seq} P={args.masked}: best of {args.steps} "
          f"(median in brackets), seconds; {load_average()}")
    print(f"{'':24s}" + "".join(f"{phase:>18s}" for phase in PHASES + ("step",)) + f"{'tokens/s':>10s}"
          f"{'peak MiB':>10s}")
    best, median = {}, {}
    for name, runs in times.items():
        best[name] = {key: min(run[key] for run in runs) for key in runs[0]}
        median[name] = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        peak = peak_step_memory(name, args.batch, args.seq, args.masked)
        print(f"{name:24s}" + "".join(f"{best[name][key]:9.3f} ({median[name][key]:5.3f})"
                                      for key in PHASES + ("step",))
              + f"{tokens / best[name]['step']:10,.0f}{peak:10.0f}")
    if "PyTorch" in best:
        ratio = {k: (best["minibert"][k] / best["PyTorch"][k], median["minibert"][k] / median["PyTorch"][k])
                 for k in PHASES + ("step",)}
        print(f"{'minibert / PyTorch':24s}" + "".join(f"{b:10.2f}x ({m:4.2f})" for b, m in ratio.values()))
        pairs = [mine["step"] / theirs["step"]
                 for mine, theirs in zip(times["minibert"], times["PyTorch"], strict=True)]
        print(f"step ratio of each alternating pair: median {statistics.median(pairs):.2f}, range "
              f"{min(pairs):.2f}-{max(pairs):.2f} over {len(pairs)} pairs")
    print(f"minibert's NumPy arrays at their peak during a step (tracemalloc): "
          f"{numpy_peak_mib(runners[0]):.0f} MiB. 'peak MiB': the most resident memory two steps add to a process "
          "holding the model and batch, each system alone in a fresh process (Adam state included)")


# ---------------------------------------------------------------------------------------------------------
# profile, sgemm rate, MFU

def matmul_gflops(product, as_operands=lambda array: array, repeats=10):
    """Best float32 rate (GFLOP/s) of product(a, b) over a square and the model's largest shapes."""
    rng = np.random.default_rng(0)
    best = 0.0
    for m, k, n in ((2048, 2048, 2048), (4096, 256, 1024), (4096, 1024, 256)):
        a = as_operands(rng.standard_normal((m, k), dtype=np.float32))
        b = as_operands(rng.standard_normal((k, n), dtype=np.float32))
        product(a, b)
        for _ in range(repeats):
            start = CLOCK()
            product(a, b)
            best = max(best, 2 * m * k * n / (CLOCK() - start) / 1e9)
    return best


def numpy_sgemm_gflops():
    """This CPU's limit for NumPy: (OpenBLAS on its own threads, one per core; the speed layer's matmul, one
    part per thread as in training). The bench runs inside the process plan, which keeps OpenBLAS on one
    thread, so that count is raised for the first measurement and restored after."""
    import numba

    from minibert.fast.blas import openblas
    from minibert.fast.kernels.matmul import matmul_forward

    blas = openblas()
    before = blas.threads if blas is not None else None
    if blas is not None:
        blas.threads = THREADS or numba.config.NUMBA_NUM_THREADS
    try:
        own_threads = matmul_gflops(operator.matmul)
    finally:
        if blas is not None:
            blas.threads = before
    return own_threads, matmul_gflops(matmul_forward)


def model_matmul_flops(config, batch_size, seq_len, masked, pruned=True):
    """Matmul FLOPs of one training step (forward, and backward = twice the forward). `pruned`: as minibert
    trains (`accelerate(model, prune_last_layer=True)`), the last layer computes its query, attention, output
    projection and feed-forward for the 1 + masked rows the heads read only, its keys and values for all
    seq_len."""
    hidden, inner = config.hidden_size, config.intermediate_size

    def layer(rows):  # rows: the positions per sequence whose output the layer computes
        return (2 * batch_size * seq_len * hidden * hidden * 2  # key, value
                + 2 * batch_size * rows * hidden * hidden * 2  # query, output projection
                + 2 * batch_size * rows * hidden * inner * 2  # feed-forward in and out
                + 2 * batch_size * rows * seq_len * hidden * 2)  # scores q·kᵀ and context p·v
    last = layer(1 + masked if pruned else seq_len)
    heads = (2 * batch_size * hidden * hidden  # pooler
             + 2 * batch_size * masked * hidden * (hidden + config.vocab_size)  # MLM transform, decoder
             + 2 * batch_size * hidden * 2)  # NSP
    return 3 * ((config.num_hidden_layers - 1) * layer(seq_len) + last + heads)


ATTENTION_PRODUCTS = "SelfAttention (its 6 matmuls)"
ATTENTION_WEIGHTS = "attention weights kernel"
ATTENTION_ROWS = (ATTENTION_PRODUCTS, ATTENTION_WEIGHTS, "MatMul (attention)", "Dropout (attention)", "Softmax")


def attention_label(function, arrays):
    """The op's name, with the attention core's batched (B, A, S, ·) ops told apart from the rest (when the
    plain ops run); the fused SelfAttention op's row holds its products once `split_attention_row` has moved
    its kernel's seconds out."""
    four_d = arrays and getattr(arrays[0], "ndim", 0) == 4
    attention_op = four_d and function.name in ("MatMul", "Dropout")
    if function.name == "SelfAttention":
        return ATTENTION_PRODUCTS
    return f"{function.name} (attention)" if attention_op else function.name


@contextlib.contextmanager
def split_attention_row(times):
    """Inside profile_ops: time the attention-weights kernel (softmax and dropout, called inside the fused
    SelfAttention op) and move its seconds from the SelfAttention row to a row of its own, so that the row
    left holds the op's matmuls (and a few views), which the matmul share counts."""
    seconds = {"forward": 0.0, "backward": 0.0}
    originals = {phase: getattr(kernels, f"attention_weights_{phase}") for phase in seconds}

    def timed(phase):
        def kernel(*args):
            start = CLOCK()
            result = originals[phase](*args)
            seconds[phase] += CLOCK() - start
            return result
        return kernel

    for phase in seconds:
        setattr(kernels, f"attention_weights_{phase}", timed(phase))
    try:
        yield
    finally:
        for phase, original in originals.items():
            setattr(kernels, f"attention_weights_{phase}", original)
    for phase, kernel_seconds in seconds.items():
        if (ATTENTION_PRODUCTS, phase) in times.seconds:
            times.seconds[(ATTENTION_PRODUCTS, phase)] -= kernel_seconds
            times.seconds[(ATTENTION_WEIGHTS, phase)] += kernel_seconds
            times.calls[(ATTENTION_WEIGHTS, phase)] = times.calls[(ATTENTION_PRODUCTS, phase)]


def profiled_step(runner, repeats=3):
    """The op table of the fastest of `repeats` profiled steps, and that step's seconds."""
    best = None
    for _ in range(repeats):
        with profile_ops(attention_label, CLOCK) as times, split_attention_row(times):
            seconds = timed_step(runner)["step"]
        if best is None or seconds < best[1]:
            best = (times, seconds)
    return best


def profile(config, args):
    found = torch_or_none()
    batch = make_batch(config, args.batch, args.seq, args.masked, np.random.default_rng(0))
    runner = MinibertStep(config, batch)
    timed_step(runner)
    times, step_seconds = profiled_step(runner)
    print(f"\n== minibert's step by op (the fastest of 3 profiled steps: {step_seconds:.3f} s); "
          f"{load_average()}")
    print(times.table())
    # Linear (x·Wᵀ + b, the core's or the speed layer's SharedLinear) is a matmul plus an in-place bias add:
    # counted as matmul, as are the fused attention's products.
    matmul = sum(times.total(name) for name in times.ops() if name.startswith(("MatMul", "Linear", "SharedLinear"))
                 or name == ATTENTION_PRODUCTS)
    flops = model_matmul_flops(config, args.batch, args.seq, args.masked)
    own_threads, in_parts = numpy_sgemm_gflops()
    rate = max(own_threads, in_parts)
    print(f"matmul {matmul:.3f} s = {matmul / step_seconds:.0%} of the step; everything else "
          f"{step_seconds - matmul:.3f} s (ops {times.total() - matmul:.3f} s, the rest Python and AdamW)")
    unpruned = model_matmul_flops(config, args.batch, args.seq, args.masked, pruned=False)
    print(f"model matmul FLOPs per step {flops / 1e9:.1f} GFLOP ({unpruned / 1e9:.1f} with the last layer on "
          f"every row, as PyTorch's step runs it): in the matmul ops {flops / matmul / 1e9:.0f} GFLOP/s")
    torch_rate = f", PyTorch {matmul_gflops(operator.matmul, found[0].from_numpy):.0f}" if found else ""
    print(f"sgemm rate here (best of a 2048 square and the model's shapes): NumPy {rate:.0f} GFLOP/s "
          f"(OpenBLAS on its own threads {own_threads:.0f}, in parts on minibert's {in_parts:.0f}){torch_rate}")
    fastest_step = min(timed_step(runner)["step"] for _ in range(args.steps))
    print(f"MFU = {flops / fastest_step / 1e9:.0f} GFLOP/s over the whole step (best of {args.steps}: "
          f"{fastest_step:.3f} s) / {rate:.0f} = {flops / fastest_step / 1e9 / rate:.0%}; "
          f"the matmuls alone would take {flops / rate / 1e9:.3f} s at that rate")


# ---------------------------------------------------------------------------------------------------------
# scaling

def scaling(config, args):
    print(f"\n== scaling, mini, P = S * 20/128 masked positions; step = forward + backward + AdamW, "
          f"the fastest of 3 profiled steps; {load_average()}")
    print(f"{'B':>4s} {'S':>4s} {'step s':>8s} {'tokens/s':>9s} {'NumPy peak MiB':>15s} {'attention s':>12s} "
          f"{'per B·S² ns':>12s} {'rest s':>8s} {'per B·S us':>11s}")
    shapes = [(4096 // s, s) for s in (64, 128, 256, 512)] + [(b, 128) for b in (8, 16, 32, 64)]
    for batch_size, seq_len in shapes:
        masked = max(1, seq_len * 20 // 128)
        batch = make_batch(config, batch_size, seq_len, masked, np.random.default_rng(0))
        runner = MinibertStep(config, batch)
        timed_step(runner)
        times, seconds = profiled_step(runner)
        attention = sum(times.total(name) for name in times.ops() if name in ATTENTION_ROWS)
        rest = seconds - attention
        per_pair = attention / (batch_size * seq_len**2) * 1e9
        per_token = rest / (batch_size * seq_len) * 1e6
        print(f"{batch_size:4d} {seq_len:4d} {seconds:8.3f} {batch_size * seq_len / seconds:9,.0f} "
              f"{numpy_peak_mib(runner):15.0f} {attention:12.3f} {per_pair:12.2f} {rest:8.3f} {per_token:11.2f}")


# ---------------------------------------------------------------------------------------------------------
# start-up and inference

STARTUP_CHILD = """
import sys, time
start = time.perf_counter()
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
import numpy as np
from compare_torch import MinibertStep, timed_step
from model import make_batch, use_training_setup
from minibert.model import BertConfig
imported = time.perf_counter()
use_training_setup()
config = BertConfig.preset("mini")
runner = MinibertStep(config, make_batch(config, 32, 128, 20, np.random.default_rng(0)))
timed_step(runner)
first = time.perf_counter() - imported
second = timed_step(runner)["step"]
print(imported - start, first, second)
"""


def startup(config, args):
    print(f"\n== start-up: import + build mini + first step, in a fresh process; {load_average()}")
    code = STARTUP_CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"))
    with tempfile.TemporaryDirectory() as cache:
        for label, env in (("cold (empty NUMBA_CACHE_DIR)", {"NUMBA_CACHE_DIR": cache}),
                           ("warm (the same cache again)", {"NUMBA_CACHE_DIR": cache})):
            result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    env={**os.environ, **env})
            imported, first, second = map(float, result.stdout.split())
            print(f"{label:30s} import {imported:5.2f} s, build + first step {first:6.2f} s, total "
                  f"{imported + first:6.2f} s (the second step took {second:5.2f} s: start-up cost "
                  f"{imported + first - second:6.2f} s)")


def inference(config, args):
    """fill-mask timed as the `fill-mask` command runs it: in a process of its own, since this one holds the
    cores as training shares them (use_training_setup), which is not how inference runs."""
    subprocess.run([sys.executable, __file__, "--inference-child"], check=True)


def inference_child():
    config = BertConfig.preset("mini")
    try:
        from minibert.inspect.fill_mask import fill_mask
    except ImportError:
        print("\n== inference: minibert.inspect.fill_mask is not available; skipped")
        return
    from minibert.tokenizer import BertTokenizer

    sentence = "the quick brown fox jumps over the [MASK] dog ."
    words = sorted(set(sentence.replace("[MASK]", "").split()))
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    filler = [f"[unused{i}]" for i in range(config.vocab_size - len(specials) - len(words))]
    tokenizer = BertTokenizer.from_vocab_list(specials + words + filler)
    model = BertForPreTraining(config, seed=0).eval()
    fill_mask(model, tokenizer, sentence)  # warm
    best = min(_seconds(lambda: fill_mask(model, tokenizer, sentence)) for _ in range(5))
    tokens = len(tokenizer.encode(sentence)["input_ids"])
    print(f"\n== inference: fill-mask on one sentence ({tokens} tokens), mini with random weights, warm: "
          f"best of 5 {best * 1e3:.1f} ms; {load_average()}")


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--masked", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--isa", choices=("native", "avx2"),
                        help="native: every vector instruction this CPU has (NumPy's sgemm at full speed); avx2: "
                        "an AVX-512 CPU run as an AVX2 one (bench/model.py isa_environment); unset: as the "
                        "environment says")
    parser.add_argument("--cpu-time", action="store_true",
                        help="compare and profile on one core (minibert and PyTorch), counting this process's CPU "
                        "seconds instead of wall time: figures other jobs on the machine hardly change")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--inference-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.isa:
        run_as_isa(args.isa)
    if args.inference_child:
        inference_child()
        return
    global CLOCK, THREADS
    if args.cpu_time:
        CLOCK, THREADS = time.process_time, 1
    use_training_setup(THREADS)
    if args.memory_child:
        peak_step_memory_child(args.memory_child, args.batch, args.seq, args.masked)
        return

    describe_isa()
    describe_threads()
    found = torch_or_none()
    print("timings: " + ("CPU seconds of this process, on one core" if args.cpu_time else "wall-clock seconds"))
    print(f"torch {found[0].__version__} ({found[0].get_num_threads()} threads), transformers "
          f"{found[1].__version__}" if found else "torch/transformers not installed: minibert alone")
    if os.environ.get("OPENBLAS_CORETYPE") and not args.isa:
        print("WARNING: OPENBLAS_CORETYPE is set, NumPy's sgemm runs at about half speed; run with "
              "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE")
    config = BertConfig.preset("mini")
    for section in args.only.split(","):
        {"compare": compare, "profile": profile, "scaling": scaling, "startup": startup,
         "inference": inference}[section](config, args)


if __name__ == "__main__":
    main()
