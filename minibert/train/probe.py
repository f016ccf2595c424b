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


def probe_accuracy(model, tokenizer, items, batch_size=64):
    """{family: (right, total)}: the model picks the candidate with the highest MLM logit at [MASK]."""
    counts = defaultdict(lambda: [0, 0])
    model.eval()
    for start in range(0, len(items), batch_size):
        chunk = items[start:start + batch_size]
        encoded = tokenizer.batch_encode([text for text, _, _, _ in chunk])
        positions = np.argmax(encoded["input_ids"] == tokenizer.mask_token_id, axis=1)[:, None]  # (B, 1)
        with no_grad():
            output = model(encoded["input_ids"], encoded["token_type_ids"], encoded["attention_mask"],
                           masked_positions=positions)
        logits = output.mlm_logits.data[:, 0]  # (B, V)
        for row, (_, choice_ids, answer, family) in enumerate(chunk):
            counts[family][0] += int(np.argmax(logits[row, choice_ids]) == answer)
            counts[family][1] += 1
    return dict(counts)


def report(name, counts, chance):
    right = sum(r for r, _ in counts.values())
    total = sum(t for _, t in counts.values())
    families = ", ".join(f"{family} {r / t:.0%}" for family, (r, t) in sorted(counts.items()))
    print(f"{name}: {right / total:.1%} of {total} right-context words (chance {chance:.1%}); {families}")
    return right / total
