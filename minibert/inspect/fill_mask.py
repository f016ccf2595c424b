"""Fill in the blanks: what the pretrained model guesses behind each [MASK], with its probabilities.

This is the masked-LM task itself (paper §3.1), asked directly: the text is tokenized as in pretraining,
the model reads it with bidirectional attention, and its MLM head gives a distribution over the whole
vocabulary at each [MASK].

    predictions = fill_mask(model, tokenizer, "the cat sat on the [MASK].")
    predictions[0]  # [("mat", 0.21), ("floor", 0.09), ...], one list per [MASK]
"""

# Chinese works the same way: BERT's tokenizer makes each Chinese character a token, so
# `小明给小红[MASK]一本书` asks for one character.

from minibert.errors import ShapeError, TokenizerError
from minibert.tokenizer import MASK_TOKEN
from minibert.train.guesses import predict_masked


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
