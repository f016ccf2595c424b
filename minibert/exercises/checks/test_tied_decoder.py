"""Exercise tied_decoder (lesson 06a): `MaskedLMHead.forward` in minibert/model/pretraining.py.

logits = transform(h)·Eᵀ + b, where E is the word-embedding matrix itself (tied). The referee computes the
logits with NumPy, and checks that the gradient of the loss reaches E through the decoder.
"""

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.config import BertConfig
from minibert.model.pretraining import MaskedLMHead
from minibert.nn.module import Parameter

CONFIG = BertConfig(vocab_size=11, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=8, max_position_embeddings=8)


def head_and_embeddings(seed=0):
    rng = np.random.default_rng(seed)
    head = MaskedLMHead(CONFIG, rng).to(np.float64)
    head.bias.data[...] = rng.standard_normal(CONFIG.vocab_size)  # not 0, so a missing bias shows
    return head, Parameter(rng.standard_normal((CONFIG.vocab_size, CONFIG.hidden_size)))


def test_logits_are_the_transform_times_the_embeddings_plus_the_bias():
    """(B, P, V) logits equal transform(h) @ Eᵀ + b computed with NumPy."""
    head, embeddings = head_and_embeddings()
    h = np.random.default_rng(1).standard_normal((2, 3, CONFIG.hidden_size))
    logits = head(Tensor(h), embeddings)
    transformed = head.transform(Tensor(h)).data
    want = transformed @ embeddings.data.T + head.bias.data
    assert logits.shape == (2, 3, CONFIG.vocab_size)
    np.testing.assert_allclose(logits.data, want, rtol=1e-9, atol=1e-12,
                               err_msg="expected transform(h) @ Eᵀ + bias")


def test_the_gradient_reaches_the_word_embeddings():
    """Tied: the decoder's use of E sends a gradient into E itself (every row: every word gets a score)."""
    head, embeddings = head_and_embeddings()
    logits = head(Tensor(np.random.default_rng(2).standard_normal((1, 2, CONFIG.hidden_size))), embeddings)
    (logits * np.random.default_rng(3).standard_normal(logits.shape)).sum().backward()
    assert embeddings.grad is not None and np.all(np.abs(embeddings.grad).sum(axis=1) > 0), (
        "the word embeddings got no gradient from the decoder: use the matrix itself, not a copy")


def test_gradcheck_embeddings_bias_and_transform():
    """Gradients of h, E, the bias and the transform's parameters agree with finite differences."""
    head, embeddings = head_and_embeddings()
    h = Tensor(np.random.default_rng(4).standard_normal((1, 2, CONFIG.hidden_size)), requires_grad=True)
    assert gradcheck_module(head, head, h, embeddings, names=("h", "word_embeddings"))
