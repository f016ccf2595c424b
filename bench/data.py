"""Pretraining-data benchmark: instances per second and peak memory for building shards from pydocs.

    python bench/data.py                 # dynamic masking (1 pass) and static masking (dupe_factor 10)
    python bench/data.py --dupe-factor 2 # a quicker static run

The corpus is data/pydocs/corpus.txt (built first if absent) and its vocabulary data/pydocs/vocab.txt (trained
into the scratch directory if absent, not timed). Each build runs in a scratch directory, from the corpus to
the manifest: tokenizing, instance creation, masking (static only) and writing shards. Peak memory is
measured twice: Python's heap with tracemalloc (in a separate run, as tracing slows the code down) and the
process' maximum resident set size. The last figure is the dynamic-masking batch iterator: how many
sequences per second it masks and serves, which is what the training loop waits for.
"""

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.data import PretrainingBatches, build_pretraining_data  # noqa: E402
from minibert.data.corpora import build_corpus  # noqa: E402
from minibert.data.shards import read_manifest  # noqa: E402
from minibert.tokenizer import train_wordpiece  # noqa: E402

PYDOCS = os.path.join(ROOT, "data", "pydocs")


def prepare(scratch):
    """Copy pydocs' corpus and vocabulary into `scratch` (building or training what is missing)."""
    corpus = os.path.join(PYDOCS, "corpus.txt")
    if not os.path.isfile(corpus):
        corpus = str(build_corpus("pydocs", os.path.join(scratch, "pydocs-build"), progress=lambda m: None))
    shutil.copy(corpus, os.path.join(scratch, "corpus.txt"))
    vocab = os.path.join(PYDOCS, "vocab.txt")
    if os.path.isfile(vocab):
        shutil.copy(vocab, os.path.join(scratch, "vocab.txt"))
    else:
        print("training an 8192-token vocabulary (not timed) ...", flush=True)
        train_wordpiece([corpus], 8192, out=os.path.join(scratch, "vocab.txt"))
    return os.path.join(scratch, "corpus.txt")


def build(corpus, scratch, **options):
    """One build from scratch; returns (seconds, instances, shard directory)."""
    shutil.rmtree(os.path.join(scratch, "build"), ignore_errors=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydocs' one-sentence documents: expected, counted in its README
        started = time.perf_counter()
        shard_dir = build_pretraining_data(corpus, scratch, log=lambda message: None, **options)
        seconds = time.perf_counter() - started
    splits = read_manifest(shard_dir)["splits"]
    return seconds, sum(split["rows"] for split in splits.values()), shard_dir


def main():
    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dupe-factor", type=int, default=10, help="passes for static masking (Google: 10)")
    parser.add_argument("--max-seq-length", type=int, default=128)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="minibert-bench-data-") as scratch:
        corpus = prepare(scratch)
        size = os.path.getsize(corpus) / 1e6
        print(f"corpus: pydocs, {size:.2f} MB; max_seq_length {args.max_seq_length}")
        runs = [("dynamic", dict(masking="dynamic")),
                ("static", dict(masking="static", dupe_factor=args.dupe_factor))]
        shard_dirs = {}
        for name, options in runs:
            seconds, instances, shard_dirs[name] = build(corpus, scratch, max_seq_length=args.max_seq_length,
                                                         **options)
            passes = options.get("dupe_factor", 1)
            print(f"{name:8s} masking, {passes:2d} pass(es): {instances:8,} instances in {seconds:6.1f} s = "
                  f"{instances / seconds:8,.0f} instances/s ({size * passes / seconds:.2f} MB of corpus/s)")

        tracemalloc.start()
        build(corpus, scratch, max_seq_length=args.max_seq_length, masking="dynamic")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"peak Python heap (tracemalloc) of a dynamic build: {peak / 1e6:.1f} MB")
        print(f"peak resident memory of this process (all runs): "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")

        batches = PretrainingBatches(shard_dirs["dynamic"], batch_size=32)
        started, sequences = time.perf_counter(), 0
        for batch in batches.epoch(0):
            sequences += len(batch["input_ids"])
        seconds = time.perf_counter() - started
        print(f"batch iterator, dynamic masking, batch 32: {sequences / seconds:,.0f} sequences/s "
              f"({1000 * seconds / len(batches):.1f} ms per batch)")


if __name__ == "__main__":
    main()
