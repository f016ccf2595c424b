"""Time one whole pretraining step of the `mini` BERT: forward, loss, backward, clipping, AdamW, schedule.

The model is L4/H256/A4/FFN1024 with a vocabulary of 8192; a batch is B = 32 sequences of S = 128 tokens
with P = 20 masked positions each, padded like real batches. The step is `minibert.train.train_step` on a
model accelerated as the `pretrain` command trains it (minibert/fast), inside the process plan; `--plain`
times the core alone (no speed layer at all), as a user's own loop without it runs. When PyTorch is
importable, the same step is timed in PyTorch too, written
the way a careful PyTorch user would (MLM head on the masked positions only, tied decoder, NSP, AdamW,
clipping), and the ratio is printed.

Run it with NumPy's BLAS at full speed (these machines set OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE,
which halve NumPy's sgemm; PyTorch is unaffected, and a user's laptop has neither setting):

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/pretrain_step.py
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=. python-with-torch \\
        bench/pretrain_step.py                                  # with PyTorch side by side
    ... bench/pretrain_step.py --quick                          # 2 timed steps: checks it runs

It prints the BLAS library and kernel in use (threadpoolctl), the Numba threading layer, then for each
implementation the median seconds per step (after one warm-up step that also compiles or loads the Numba
kernels), tokens per second (B·S per step) and peak memory: the most NumPy held during one step
(tracemalloc) and the process's peak resident size (ru_maxrss; PyTorch's allocations show only there).
`--threads N` gives minibert (its matmuls and kernels) and PyTorch N cores.

    ... bench/pretrain_step.py --no-torch --plain               # the core's plain layers, no process plan
"""

import argparse
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from bench.model import describe_threads, make_batch, use_training_setup  # noqa: E402
from minibert import fast  # noqa: E402
from minibert.optim import bert_optimizer  # noqa: E402
from minibert.train import pretraining_setup  # noqa: E402
from minibert.train.pretraining_config import run_preset  # noqa: E402
from minibert.train.update import train_step  # noqa: E402


def minibert_step(config, batch, plain=False):
    """A function that runs one minibert training step on `batch`: accelerated as the command trains, or with
    the core's plain layers alone (`plain`)."""
    model = pretraining_setup.build_model(config, 8192)
    if not plain:
        fast.accelerate(model, prune_last_layer=True)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = pretraining_setup.build_scheduler(optimizer, config, total_steps=10_000)
    parameters = model.parameters()
    print(model)
    return lambda: train_step(model, parameters, optimizer, scheduler, batch, config)


def torch_step(config, batch):
    """The same step in PyTorch: HF's BertModel, an MLM head on the gathered masked positions with the
    decoder tied to the word embeddings, an NSP head, AdamW with BERT's no-decay groups, clipping."""
    import torch
    from transformers import BertConfig as HFConfig
    from transformers import BertModel

    torch.manual_seed(0)
    model_config = pretraining_setup.build_model(config, 8192).config
    hf_config = HFConfig(**{key: value for key, value in model_config.to_dict().items()
                            if key not in ("attention", "is_decoder")})
    encoder = BertModel(hf_config)
    hidden, vocab = hf_config.hidden_size, hf_config.vocab_size
    transform = torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.GELU(),
                                    torch.nn.LayerNorm(hidden, eps=hf_config.layer_norm_eps))
    decoder_bias = torch.nn.Parameter(torch.zeros(vocab))
    nsp_head = torch.nn.Linear(hidden, 2)
    modules = torch.nn.ModuleDict({"bert": encoder, "transform": transform, "nsp": nsp_head})
    named = [*modules.named_parameters(), ("decoder_bias", decoder_bias)]
    no_decay = [p for n, p in named if "LayerNorm" in n or "bias" in n or n.startswith("transform.2")]
    decay = [p for n, p in named if not any(p is q for q in no_decay)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=config.lr, eps=1e-6)
    tensors = {name: torch.from_numpy(np.asarray(values)) for name, values in batch.items()}
    input_ids, segments = tensors["input_ids"].long(), tensors["segment_ids"].long()
    attention_mask, positions = tensors["input_mask"].long(), tensors["masked_lm_positions"].long()
    labels, weights = tensors["masked_lm_ids"].long(), tensors["masked_lm_weights"].float()
    nsp_labels = tensors["next_sentence_labels"].long()
    modules.train()

    def step():
        output = encoder(input_ids=input_ids, token_type_ids=segments, attention_mask=attention_mask)
        gathered = torch.gather(output.last_hidden_state, 1,
                                positions[..., None].expand(-1, -1, hidden))  # (B, P, H)
        logits = transform(gathered) @ encoder.embeddings.word_embeddings.weight.T + decoder_bias
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), labels.reshape(-1),
                                                reduction="none")
        mlm = (nll * weights.reshape(-1)).sum() / (weights.sum() + 1e-5)
        loss = mlm + torch.nn.functional.cross_entropy(nsp_head(output.pooler_output), nsp_labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in named], 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{sum(p.numel() for _, p in named) / 1e6:.2f}M parameters")
    return step


def measure(name, step, steps, tokens):
    """Median seconds per step after a warm-up step; returns tokens/s."""
    step()
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seconds = statistics.median(times)
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{name}: median {seconds:.3f} s/step (min {min(times):.3f}, max {max(times):.3f}, {steps} steps), "
          f"{tokens / seconds:,.0f} tokens/s; peak memory {peak / 2**20:.0f} MiB in NumPy during a step, "
          f"{max_rss:.0f} MiB resident (process so far)")
    return tokens / seconds


def limit_torch_threads(threads):
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


def main():
    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps (10)")
    parser.add_argument("--quick", action="store_true", help="2 timed steps: check that the bench runs")
    parser.add_argument("--threads", type=int, default=None, help="cores for minibert and PyTorch")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch step")
    parser.add_argument("--plain", action="store_true",
                        help="minibert's core alone: no speed layer (no fused layers, no pruning, no process plan)")
    args = parser.parse_args()
    steps = 2 if args.quick else args.steps
    if not args.plain:
        use_training_setup(args.threads)
    if args.threads:
        limit_torch_threads(args.threads)
    describe_threads()

    config = run_preset("mini")
    batch_size, seq_len, masked = config.batch_size, config.max_seq_length, config.max_predictions_per_seq
    model_config = pretraining_setup.build_model(config, 8192).config
    batch = make_batch(model_config, batch_size, seq_len, masked, np.random.default_rng(0))
    tokens = batch_size * seq_len
    print(f"mini ({model_config.summary()}), B={batch_size} S={seq_len} P={masked}, "
          f"{config.optimizer} lr {config.lr:g}")
    ours = measure("minibert (core only)" if args.plain else "minibert", minibert_step(config, batch, args.plain),
                   steps, tokens)
    if args.no_torch:
        return
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not importable here: run with a Python that has torch to compare")
        return
    theirs = measure("PyTorch ", torch_step(config, batch), steps, tokens)
    print(f"minibert / PyTorch: {ours / theirs:.2f}x the tokens/s")


if __name__ == "__main__":
    main()
