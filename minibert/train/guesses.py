"""The model's guesses at masked positions: the k likeliest tokens with their probabilities, and the
held-out blanks the pretraining loop fills at each evaluation (printed, logged as a "guesses" record, and
tabled in report.html), so that one watches "the the the" turn into words.

`fill_mask` (minibert/inspect/fill_mask.py) asks the same of a text a user writes.
Legend: S sequence length, P masked positions, V vocabulary, k candidates kept.
"""

import numpy as np

from minibert.autograd import no_grad


def softmax_rows(logits):
    """Probabilities from logits along the last axis (the max is subtracted first, so exp cannot
    overflow)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exps = np.exp(shifted.astype(np.float64))
    return exps / exps.sum(axis=-1, keepdims=True)


def predict_masked(model, input_ids, token_type_ids, positions, top_k=5, attention=None):
    """The k likeliest tokens at `positions` of one sequence: (ids (P, k), probabilities (P, k)).
    attention: "bidirectional" or "causal" to read the sequence under that mask instead of the model's."""
    was_training = model.training
    model.eval()  # no dropout: the same text always gives the same guesses
    with no_grad():
        output = model(np.asarray([input_ids]), np.asarray([token_type_ids]),
                       masked_positions=np.asarray([positions]), attention=attention)
    model.train(was_training)
    probabilities = softmax_rows(output.mlm_logits.data[0])  # (P, V)
    top_ids = np.argsort(-probabilities, axis=-1, kind="stable")[:, :top_k]  # (P, k)
    return top_ids, np.take_along_axis(probabilities, top_ids, axis=-1)


def masked_examples(model, tokenizer, batch, count=3, top_k=3, max_masks=4):
    """Show how the model fills the masks of held-out sequences (`held_out_blanks`), as lines to print."""
    lines = []
    for example in held_out_blanks(model, tokenizer, batch, count, top_k, max_masks):
        lines.append("  " + example["text"])
        for blank in example["blanks"]:
            guesses = ", ".join(f"{token} {probability:.0%}" for token, probability in blank["guesses"])
            lines.append(f"    [MASK] -> {guesses}   (answer: {blank['answer']})")
    return lines


def held_out_blanks(model, tokenizer, batch, count=3, top_k=3, max_masks=4):
    """How the model fills the masks of held-out sequences: for each of `count` rows of `batch` (Google's
    format), {"text": its first segment with up to `max_masks` chosen positions shown as [MASK],
    "blanks": [{"answer": the true token, "guesses": the top_k [(token, probability)]}]}."""
    examples = []
    for row in range(len(batch["input_ids"])):
        if len(examples) == count:
            break
        segment = np.array(batch["input_ids"][row], dtype=np.int64)
        chosen = batch["masked_lm_weights"][row] > 0  # (P,): real predictions, not padding slots
        first_sep = int(np.flatnonzero(segment == tokenizer.sep_token_id)[0])
        segment = segment[: first_sep + 1]  # [CLS] A [SEP]: one segment reads more easily
        answers = {int(position): int(token) for position, token in zip(
            batch["masked_lm_positions"][row][chosen], batch["masked_lm_ids"][row][chosen], strict=True)
            if position < first_sep}
        if not answers:
            continue
        # Put every true token back (the batch shows some chosen positions as random or unchanged
        # tokens), then hide the first `max_masks` of them behind [MASK].
        for position, token in answers.items():
            segment[position] = token
        positions = sorted(answers)[:max_masks]
        segment[positions] = tokenizer.mask_token_id
        top_ids, top_probabilities = predict_masked(model, segment, np.zeros_like(segment), positions, top_k)
        blanks = [{"answer": tokenizer.ids_to_tokens[answers[position]],
                   "guesses": [(tokenizer.ids_to_tokens[int(token_id)], float(probability))
                               for token_id, probability in zip(ids, probabilities, strict=True)]}
                  for position, ids, probabilities in zip(positions, top_ids, top_probabilities, strict=True)]
        examples.append({"text": tokenizer.decode(segment[1:-1].tolist()), "blanks": blanks})
    return examples
