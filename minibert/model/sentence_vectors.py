"""One vector per sentence, and what a classifier reads about two of them (Sentence-BERT, Reimers and
Gurevych 2019, §3).

    u = mean_of_tokens(BERT(A))             the mean of A's final token vectors, padding left out
    features = pair_features(u, v)          [u, v, |u - v|, u * v]

Each is written once, for NumPy arrays and for tensors alike: sentence embeddings
(`minibert/inspect/sentence_encoder.py`) and the ladder's frozen-feature probe read arrays; the fine-tuned heads
(`minibert/finetune/heads.py`) read tensors, so the gradient flows back through the same formula.
Legend: B batch, S sequence length, H hidden size.
"""

import numpy as np

from minibert.autograd import Tensor, concat

# sentence-transformers' floor on the count of real tokens: a row with none divides by it, not by 0.
FEWEST_TOKENS = 1e-9


def mean_of_tokens(token_vectors, attention_mask=None):
    """(B, S, H) -> (B, H): each sequence's mean token vector over its real tokens (mask 1).

    Padding must not count: a short sentence padded to the batch's length would otherwise be pulled
    towards the [PAD] vectors, and its vector would depend on its neighbours in the batch.
    """
    real = np.ones(token_vectors.shape[:2]) if attention_mask is None else np.asarray(attention_mask)
    real = real.astype(token_vectors.dtype)[:, :, None]  # (B, S, 1): 1 on real tokens
    return (token_vectors * real).sum(axis=1) / np.maximum(real.sum(axis=1), FEWEST_TOKENS)


def pair_features(u, v):
    """(B, H), (B, H) -> (B, 4H): [u, v, |u - v|, u * v].

    A linear classifier cannot compare two vectors laid side by side, but it can read their difference and
    their product (Conneau et al. 2017, InferSent; SBERT's Table 6 measures the choices).
    """
    join = concat if isinstance(u, Tensor) else np.concatenate
    return join([u, v, abs(u - v), u * v], axis=-1)
