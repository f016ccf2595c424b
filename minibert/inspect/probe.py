"""The bidirectional probe: can a model fill a blank that only the words to its right decide?

The synthetic corpus writes held-out probe items (`probe.jsonl`): a sentence, the word in its blank, and
the candidates of that word's family (measure words, verbs). The model sees the blank as [MASK] and picks
the candidate with the highest MLM logit. A bidirectional model can be exact; a causal one (GPT's mask)
only guesses, near chance (1 / candidates). Used by lesson 13 and bench/probe.py.

Legend: B batch, V vocabulary.
"""

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from minibert.autograd import no_grad
from minibert.fast import process_plan
from minibert.optim import bert_optimizer
from minibert.train.pretraining_config import run_preset
from minibert.train.pretraining_setup import build_model, build_scheduler
from minibert.train.update import train_step


def read_probe(path, tokenizer):
    """Probe items whose word and every candidate are single tokens: (text with [MASK], candidate ids,
    index of the right candidate, family). Returns (items, how many were skipped)."""
    items, skipped = [], 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        choice_ids = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(choice))
                      for choice in item["choices"]]
        if any(len(ids) != 1 for ids in choice_ids):
            skipped += 1
            continue
        text = item["text"][: item["char_start"]] + " [MASK] " + item["text"][item["char_end"]:]
        answer = item["choices"].index(item["word"])
        items.append((text, [ids[0] for ids in choice_ids], answer, item["family"]))
    return items, skipped


def own_sentence(items):
    """The items with only the sentence that holds the blank, like the article's `小明给小红 ___ 一本书`
    (probe.jsonl also gives the sentence before it)."""
    shortened = []
    for text, choice_ids, answer, family in items:
        left, right = text.split("[MASK]")
        start = max(left.rfind("。"), left.rfind(". ")) + 1  # just after the previous sentence's end
        shortened.append((left[start:].strip() + " [MASK]" + right, choice_ids, answer, family))
    return shortened


def left_context_only(items):
    """The items with every word after [MASK] taken away: what a causal model sees of them."""
    return [(text.split("[MASK]")[0] + "[MASK]", choice_ids, answer, family)
            for text, choice_ids, answer, family in items]


def blank_batches(items, tokenizer, steps, batch_size, seed=0):
    """Pretraining batches (Google's feature names) whose one masked slot per sequence is the blank."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        chunk = [items[i] for i in rng.choice(len(items), batch_size, replace=False)]
        encoded = tokenizer.batch_encode([text for text, _, _, _ in chunk])
        positions = np.argmax(encoded["input_ids"] == tokenizer.mask_token_id, axis=1)[:, None]  # (B, 1)
        answers = np.array([[choice_ids[answer]] for _, choice_ids, answer, _ in chunk])  # (B, 1)
        yield {"input_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"],
               "input_mask": encoded["attention_mask"], "masked_lm_positions": positions,
               "masked_lm_ids": answers, "masked_lm_weights": np.ones(answers.shape, np.float32),
               "next_sentence_labels": np.zeros(batch_size, np.int64)}


def train_on_blanks(attention, items, tokenizer, steps, batch_size, seed=0):
    """A `tiny` model (masked LM only, `attention` "bidirectional" or "causal") trained with the pretraining
    loop's own step on `blank_batches`; returns (the model in eval mode, the loss of every step)."""
    config = run_preset("tiny", use_nsp=False, attention=attention, steps=steps, batch_size=batch_size,
                        seed=seed)
    model = build_model(config, tokenizer.vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = build_scheduler(optimizer, config, steps)
    # The training commands' process plan (fast/process.py): without it, Numba's idle threads spin after each
    # small kernel and take the cores from BLAS's threads, which makes a tiny model's step several times slower.
    with process_plan(config.threads):
        losses = [train_step(model, model.parameters(), optimizer, scheduler, batch, config).loss
                  for batch in blank_batches(items, tokenizer, steps, batch_size, seed)]
    return model.eval(), losses


def candidate_scores(model, tokenizer, items, batch_size=64, transform=None):
    """One array per item: the log-probability the MLM head gives each candidate at [MASK].

    transform: applied to each encoded batch (`minibert.data.reverse.reverse_batch` for a model that
    reads right to left)."""
    scores = []
    model.eval()
    for start in range(0, len(items), batch_size):
        chunk = items[start:start + batch_size]
        encoded = tokenizer.batch_encode([text for text, _, _, _ in chunk])
        positions = np.argmax(encoded["input_ids"] == tokenizer.mask_token_id, axis=1)[:, None]  # (B, 1)
        batch = {"input_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"],
                 "input_mask": encoded["attention_mask"], "masked_lm_positions": positions,
                 "masked_lm_weights": np.ones(positions.shape, np.float32)}
        batch = transform(batch) if transform is not None else batch
        with no_grad():
            output = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"],
                           masked_positions=batch["masked_lm_positions"])
        logits = output.mlm_logits.data[:, 0].astype(np.float64)  # (B, V)
        top = logits.max(axis=1, keepdims=True)
        log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))  # (B, V)
        scores += [log_probs[row, choice_ids] for row, (_, choice_ids, _, _) in enumerate(chunk)]
    return scores


def probe_accuracy(model, tokenizer, items, batch_size=64, scores=None):
    """{family: (right, total)}: the model picks the candidate with the highest MLM logit at [MASK].
    scores: the items' candidate scores if already computed (`candidate_scores`, or a sum of two models')."""
    counts = defaultdict(lambda: [0, 0])
    if scores is None:
        scores = candidate_scores(model, tokenizer, items, batch_size)
    for item_scores, (_, _, answer, family) in zip(scores, items, strict=True):
        counts[family][0] += int(np.argmax(item_scores) == answer)
        counts[family][1] += 1
    return dict(counts)


def report(name, counts, chance):
    right = sum(r for r, _ in counts.values())
    total = sum(t for _, t in counts.values())
    families = ", ".join(f"{family} {r / t:.0%}" for family, (r, t) in sorted(counts.items()))
    print(f"{name}: {right / total:.1%} of {total} right-context words (chance {chance:.1%}); {families}")
    return right / total
