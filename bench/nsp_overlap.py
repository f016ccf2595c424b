"""How much of next-sentence prediction on pydocs is word overlap? Score the NSP pairs of the `mini` run's data
with no neural network at all: a logistic regression on a few counts of the two segments, fitted on the
training pairs and scored on the held-out ones, beside the share of the majority label.

    python3 bench/nsp_overlap.py                  # the default run's 128-token pairs (data/pydocs)
    python3 bench/nsp_overlap.py --phase short    # the pairs of its first steps, 32 tokens
    python3 bench/nsp_overlap.py --model RUN      # and does RUN's model answer as the overlap does?

Two feature sets:
- lengths: how many distinct words A and B hold (a chunk of one sentence is always NotNext, and Google's rules make
  the two sides' lengths differ between IsNext and NotNext);
- lengths + overlap: also the share of B's distinct words that appear in A, and the same share weighted by
  each word's rarity (inverse document frequency over the training pairs), since a rare word shared by both
  sides says "same document" more than "the" does.

The pairs are read as the model reads them, masked at BERT's 15% ([MASK] and the other special tokens never
count as shared words). The model's own held-out NSP accuracy (docs/learning.md) is the figure to set beside
these: a model that had learnt to compare A's words with B's would reach the overlap row. With --model, the
script sets the model's own answers on the held-out pairs beside the regression's: how often the two agree,
and how often each says NotNext as the share of B's words found in A grows.
"""

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402

from minibert.autograd import no_grad  # noqa: E402
from minibert.data.batches import PretrainingBatches  # noqa: E402
from minibert.inspect.model_folder import load_for_inference  # noqa: E402
from minibert.train.evaluate import forward_batch  # noqa: E402
from minibert.train.pretraining_config import run_preset  # noqa: E402
from minibert.train.pretraining_setup import prepare_data  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where pydocs lives (default data/pydocs)")
    parser.add_argument("--phase", choices=("long", "short"), default="long",
                        help="the pairs of the run's long sequences (default) or of its short first phase")
    parser.add_argument("--model", default=None, metavar="RUN",
                        help="a run folder of the `mini` recipe: compare its NSP answers with the regression's")
    args = parser.parse_args()
    config = run_preset("mini")
    config = config.short_phase() if args.phase == "short" else config
    shard_dir, _, _ = prepare_data(config, args.data_dir, log=lambda _: None)
    train, held_out = (read_pairs(shard_dir, split) for split in ("train", "eval"))
    rarity = inverse_document_frequency(train["sides"])
    print(f"CPU: {describe_cpu()}\nNSP pairs of {shard_dir}: {len(train['labels']):,} training, "
          f"{len(held_out['labels']):,} held-out, {config.max_seq_length} tokens")
    print(f"{'features':<20} {'training':>9} {'held-out':>9}")
    print(f"{'majority label':<20} {majority(train['labels']):9.1%} {majority(held_out['labels']):9.1%}")
    for name, with_overlap in (("lengths", False), ("lengths + overlap", True)):
        features = [pair_features(pairs["sides"], rarity, config.max_seq_length, with_overlap)
                    for pairs in (train, held_out)]
        weights = fit_logistic_regression(features[0], train["labels"])
        scores = [accuracy(x, pairs["labels"], weights) for x, pairs in zip(features, (train, held_out), strict=True)]
        print(f"{name:<20} {scores[0]:9.1%} {scores[1]:9.1%}")
    if args.model:
        compare_with_model(args.model, shard_dir, held_out["labels"], features[1], weights)


def compare_with_model(run_folder, shard_dir, labels, features, weights):
    """The model's held-out NSP answers beside the overlap regression's (`features`, `weights`: its last fit),
    by how much of B's words A holds (the features' fourth column)."""
    model, _ = load_for_inference(run_folder)
    with no_grad():
        answers = np.concatenate([forward_batch(model, batch).nsp_logits.data.argmax(-1) for batch in
                                  PretrainingBatches(shard_dir, batch_size=256, split="eval", shuffle=False).epoch(0)])
    regression = (features @ weights > 0).astype(answers.dtype)
    print(f"\nthe model of {run_folder} on the same held-out pairs: {np.mean(answers == labels):.1%} right; it "
          f"gives the regression's answer on {np.mean(answers == regression):.1%} of them, and one of the two is "
          f"right on {np.mean((answers == labels) | (regression == labels)):.1%}")
    print(f"{'share of B in A':<16} {'pairs':>5} {'NotNext':>8} {'model says':>11} {'regression says':>16}")
    shared = features[:, 3]
    for low, high in ((0.0, 0.05), (0.05, 0.15), (0.15, 0.3), (0.3, 1.0)):
        rows = (shared >= low) & ((shared < high) | (high == 1.0))
        print(f"{f'{low:.2f}-{high:.2f}':<16} {rows.sum():5d} {labels[rows].mean():8.0%} {answers[rows].mean():11.0%} "
              f"{regression[rows].mean():16.0%}")


def read_pairs(shard_dir, split):
    """{"sides": [(A's word ids, B's word ids)], "labels": (N,) 1 for NotNext} of one split, masked at 15%."""
    batches = PretrainingBatches(shard_dir, batch_size=256, split=split, shuffle=False)
    special = set(batches.special_tokens.special_ids.tolist())  # [CLS], [SEP], [MASK], [PAD], ...
    sides, labels = [], []
    for batch in batches.epoch(0):
        for ids, segments, mask in zip(batch["input_ids"], batch["segment_ids"], batch["input_mask"], strict=True):
            words = [(int(token), int(segment)) for token, segment, real in zip(ids, segments, mask, strict=True)
                     if real and int(token) not in special]
            sides.append(tuple({token for token, segment in words if segment == side} for side in (0, 1)))
        labels.append(batch["next_sentence_labels"])
    return {"sides": sides, "labels": np.concatenate(labels)}


def inverse_document_frequency(sides):
    """{word id: log(N / pairs holding it)} over the pairs `sides`."""
    counts = collections.Counter(token for side_a, side_b in sides for token in side_a | side_b)
    return {token: np.log(len(sides) / count) for token, count in counts.items()}


def pair_features(sides, rarity, max_seq_length, with_overlap):
    """(N, F) features of each pair, with a constant 1 for the bias."""
    rows = []
    for side_a, side_b in sides:
        row = [len(side_a) / max_seq_length, len(side_b) / max_seq_length, 1.0]
        if with_overlap:
            shared = side_a & side_b
            row += [len(shared) / max(1, len(side_b)),
                    rarity_weight(shared, rarity) / max(1e-9, rarity_weight(side_a | side_b, rarity))]
        rows.append(row)
    return np.array(rows)


def rarity_weight(words, rarity):
    return sum(rarity.get(token, 0.0) for token in words)


def fit_logistic_regression(features, labels, steps=3000, lr=0.5):
    """Weights of p(NotNext) = sigmoid(features @ w), by full-batch gradient descent on the mean log-loss."""
    weights = np.zeros(features.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-features @ weights))
        weights -= lr * features.T @ (p - labels) / len(labels)
    return weights


def accuracy(features, labels, weights):
    return float(np.mean((features @ weights > 0) == labels))


def majority(labels):
    return float(max(labels.mean(), 1 - labels.mean()))


if __name__ == "__main__":
    main()
