"""Kinds of attention heads, measured rather than picked by eye (Clark et al. 2019, "What Does BERT Look At?").

For one input, each measure is an average over the attending tokens (the rows of a head's (S, S) map): the
attention that row i gives to i-1, to i+1, to the [SEP] or [CLS] positions, and the entropy of row i. Over
several inputs, the per-input averages are averaged. Every score is a number per head, so the heads most of
a kind are simply the largest scores.

Legend: L layers, A heads, S sequence length.
"""

# Clark et al. found that many of BERT-base's 144 heads follow a simple pattern (their sections 3 and 4):
# - **previous / next token**: each token puts most of its attention on its left or right neighbour, a
#   positional habit that no word's meaning asks for;
# - **[SEP]** and **[CLS]**: tokens pile their attention on a special token, which the authors read as a
#   "no-op": a place to put attention when the head's pattern does not apply to this token;
# - **broad**: attention spread over the whole input, measured by its entropy (their section 3.3): these heads
#   in the first layers make a bag-of-words summary of the sentence.

import numpy as np

from minibert.errors import ShapeError

KINDS = ("previous token", "next token", "[SEP]", "[CLS]", "broad")
PATTERN_SHARE = 0.5  # a head is named after a pattern that holds at least half of its attention...
BROAD_SHARE = 0.8  # ...or "broad" when its rows' entropy is at least 80% of a uniform row's (ln S)


def previous_token_attention(attention):
    """(A, S, S) -> (A,): the average attention from token i to token i-1, over i = 1 .. S-1."""
    return np.diagonal(attention, offset=-1, axis1=1, axis2=2).mean(axis=1)


def next_token_attention(attention):
    """(A, S, S) -> (A,): the average attention from token i to token i+1, over i = 0 .. S-2."""
    return np.diagonal(attention, offset=1, axis1=1, axis2=2).mean(axis=1)


def attention_to(attention, positions):
    """(A, S, S) -> (A,): the average total attention that a token gives to the given positions."""
    return attention[:, :, list(positions)].sum(axis=2).mean(axis=1)


def attention_entropy(attention):
    """(A, S, S) -> (A,): the average entropy of a row, in nats: 0 for one-hot rows, ln S for uniform ones."""
    # 0 * ln 0 counts as 0 (the limit); the floor keeps log from warning on exact zeros.
    return -(attention * np.log(np.maximum(attention, 1e-30))).sum(axis=2).mean(axis=1)


def head_kind_scores(examples):
    """{kind: (L, A) scores} from examples, each (tokens, attentions): `attentions` a list of L (A, S, S)
    maps over `tokens` (what `attention_maps` returns), with the S tokens holding [CLS] and [SEP]."""
    per_example = []
    for tokens, attentions in examples:
        maps = np.asarray(attentions, dtype=np.float64)  # (L, A, S, S)
        if maps.ndim != 4 or maps.shape[2:] != (len(tokens), len(tokens)) or len(tokens) < 2:
            raise ShapeError(f"attention maps of shape {maps.shape} do not fit {len(tokens)} tokens; give "
                             "L maps of shape (A, S, S) for S >= 2 tokens")
        seps = [position for position, token in enumerate(tokens) if token == "[SEP]"]
        clss = [position for position, token in enumerate(tokens) if token == "[CLS]"]
        if not seps or not clss:
            raise ShapeError("the tokens hold no [SEP] or no [CLS]; encode the text with the tokenizer, which "
                             "adds both")
        per_example.append({
            "previous token": [previous_token_attention(layer) for layer in maps],
            "next token": [next_token_attention(layer) for layer in maps],
            "[SEP]": [attention_to(layer, seps) for layer in maps],
            "[CLS]": [attention_to(layer, clss) for layer in maps],
            "broad": [attention_entropy(layer) for layer in maps],
        })
    if not per_example:
        raise ShapeError("head_kind_scores got no examples; give at least one (tokens, attentions)")
    return {kind: np.mean([scores[kind] for scores in per_example], axis=0) for kind in KINDS}


def strongest_heads(scores, top=3):
    """The `top` heads with the largest scores in an (L, A) array: [(layer, head, score)], largest first."""
    scores = np.asarray(scores)
    order = np.argsort(-scores, axis=None, kind="stable")[:top]
    return [(int(layer), int(head), float(scores[layer, head]))
            for layer, head in zip(*np.unravel_index(order, scores.shape), strict=True)]


def head_labels(scores, seq_len):
    """(L, A) nested lists of names, one per head, for a picture: the kind whose pattern holds the most of
    the head's attention if it holds at least PATTERN_SHARE, else "broad" if the head's entropy is at least
    BROAD_SHARE of ln(seq_len), else "" (no simple pattern)."""
    patterns = [kind for kind in KINDS if kind != "broad"]
    shares = np.stack([scores[kind] for kind in patterns])  # (kinds, L, A)
    broad = np.asarray(scores["broad"]) >= BROAD_SHARE * np.log(seq_len)
    strongest = shares.argmax(axis=0)
    return [[patterns[strongest[layer, head]] if shares[strongest[layer, head], layer, head] >= PATTERN_SHARE
             else "broad" if broad[layer, head] else ""
             for head in range(shares.shape[2])] for layer in range(shares.shape[1])]


def head_kinds_table(scores, top=3):
    """A few lines of text: for each kind, its `top` heads as `L<layer>H<head> <score>`."""
    lines = []
    for kind in KINDS:
        unit = "nats" if kind == "broad" else "of the attention"
        heads = "  ".join(f"L{layer}H{head} {score:.2f}" for layer, head, score in strongest_heads(scores[kind], top))
        lines.append(f"  {kind:<15} {heads}   ({unit})")
    return "\n".join(lines)
