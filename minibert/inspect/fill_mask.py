"""Fill in the blanks: what the pretrained model guesses behind each [MASK], with its probabilities.

This is the masked-LM task itself (paper §3.1), asked directly: the text is tokenized as in pretraining,
the model reads it with bidirectional attention, and its MLM head gives a distribution over the whole
vocabulary at each [MASK].

    predictions = fill_mask(model, tokenizer, "the cat sat on the [MASK].")
    predictions[0]  # [("mat", 0.21), ("floor", 0.09), ...], one list per [MASK]
Legend: S sequence length, P masked positions, V vocabulary, k candidates kept.
"""

# Chinese works the same way: BERT's tokenizer makes each Chinese character a token, so
# `小明给小红[MASK]一本书` asks for one character.

import numpy as np

from minibert.autograd import no_grad
from minibert.errors import ShapeError, TokenizerError
from minibert.tokenizer import MASK_TOKEN


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


def fill_mask(model, tokenizer, text, top_k=5):
    """For each [MASK] in `text`, in order: a list of the top_k (token, probability) guesses."""
    if MASK_TOKEN not in text and MASK_TOKEN.lower() in text.lower():
        # BERT's tokenizer (and HF's) matches special tokens case-sensitively: "[mask]" is split at its
        # brackets like any other text.
        raise TokenizerError(f"no {MASK_TOKEN} in {text!r}: the marker is matched in capitals, as BERT's "
                             f"vocabulary spells it; write {MASK_TOKEN}")
    if MASK_TOKEN not in text:
        raise TokenizerError(f"no {MASK_TOKEN} in {text!r}: write {MASK_TOKEN} where the model should guess "
                             f"a word, e.g. 'the cat sat on the {MASK_TOKEN} .' or "
                             f"'小明给小红{MASK_TOKEN}一本书'")
    if not isinstance(top_k, int) or top_k < 1:
        raise ShapeError(f"top_k={top_k!r} must be a whole number >= 1")
    encoded = tokenizer.encode(text)
    input_ids = encoded["input_ids"]
    limit = model.config.max_position_embeddings
    if len(input_ids) > limit:
        raise ShapeError(f"the text is {len(input_ids)} tokens long, more than the model's "
                         f"max_position_embeddings={limit}; shorten it")
    positions = [index for index, token_id in enumerate(input_ids) if token_id == tokenizer.mask_token_id]
    top_ids, top_probabilities = predict_masked(model, input_ids, encoded["token_type_ids"], positions,
                                                min(top_k, tokenizer.vocab_size))
    return [[(tokenizer.ids_to_tokens[token_id], float(probability))
             for token_id, probability in zip(ids, probabilities, strict=True)]
            for ids, probabilities in zip(top_ids, top_probabilities, strict=True)]


def format_predictions(text, predictions, bar_width=20):
    """The guesses as text: one block per [MASK], a bar of '█' per candidate for its probability."""
    lines = [text]
    for number, candidates in enumerate(predictions, start=1):
        lines.append(f"  {MASK_TOKEN} {number} of {len(predictions)}:")
        width = max(len(token) for token, _ in candidates)
        for token, probability in candidates:
            bar = "█" * int(round(probability * bar_width))
            lines.append(f"    {token.ljust(width)}  {probability:6.1%}  {bar}")
    return "\n".join(lines)


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
