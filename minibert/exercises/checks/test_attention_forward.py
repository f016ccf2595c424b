"""Exercise attention_forward (lesson 05): `MultiHeadSelfAttention.forward` in minibert/nn/transformer.py.

The referee is attention written the slow way, one head and one query at a time with NumPy, and gradcheck
of the whole layer's parameters.
"""

import itertools
import math

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.nn.transformer import MultiHeadSelfAttention


def layer(hidden=8, heads=2, seed=0, dropout_prob=0.0):
    rng = np.random.default_rng(seed)
    attention = MultiHeadSelfAttention(hidden, heads, dropout_prob=dropout_prob, rng=rng, std=0.5)
    return attention.to(np.float64)


def slow_attention(attention, x, keep, asking=None):
    """softmax(q·k/√D over visible keys)·v for each batch row, head and query, with explicit loops; the
    tokens `asking` (x itself by default) make the q, the tokens of x the k and v."""
    asking = x if asking is None else asking
    def project(linear, tokens):
        return tokens @ linear.weight.data.T + linear.bias.data
    q, k, v = project(attention.query, asking), project(attention.key, x), project(attention.value, x)
    batch, seq_len, hidden = x.shape
    size = attention.head_size
    context = np.zeros_like(asking)
    probs = np.zeros((batch, attention.num_heads, asking.shape[1], seq_len))
    for b in range(batch):
        for h in range(attention.num_heads):
            part = slice(h * size, (h + 1) * size)
            for i in range(asking.shape[1]):
                scores = np.array([q[b, i, part] @ k[b, j, part] / math.sqrt(size) for j in range(seq_len)])
                scores = np.where(keep[b, i], scores, -np.inf)
                weights = np.exp(scores - scores.max())
                weights /= weights.sum()
                probs[b, h, i] = weights
                context[b, i, part] = weights @ v[b, :, part]
    return context, probs


def test_matches_attention_written_with_loops():
    """With the last key of sequence 1 hidden, context and probabilities equal the loop version."""
    attention = layer()
    x = np.random.default_rng(1).standard_normal((2, 4, 8))
    keep = np.ones((2, 4, 4), dtype=bool)
    keep[1, :, 3] = False
    context, probs = attention(Tensor(x), mask=keep[:, None])
    want_context, want_probs = slow_attention(attention, x, keep)
    assert context.shape == (2, 4, 8) and probs.shape == (2, 2, 4, 4)
    np.testing.assert_allclose(probs.data, want_probs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(context.data, want_context, rtol=1e-9, atol=1e-12)


def test_other_tokens_can_ask():
    """Given 3 tokens that ask (Google's from_tensor) and the 4 tokens of x that answer (its to_tensor): 3
    outputs, each the loop version's, and 3 rows of weights over the 4 keys; then with a mask row per asking
    token."""
    attention = layer(seed=9)
    rng = np.random.default_rng(10)
    x, asking = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 3, 8))
    context, probs = attention(Tensor(x), asking=Tensor(asking))
    assert context.shape == (2, 3, 8) and probs.shape == (2, 2, 3, 4), (
        f"got context {context.shape} and weights {probs.shape}: the tokens `asking` make q, the tokens of x "
        "make k and v, so there is one output per asking token")
    keep = rng.random((2, 3, 4)) < 0.7
    keep[:, :, 0] = True  # every asking token sees at least one key
    for mask in (np.ones_like(keep), keep):
        context, probs = attention(Tensor(x), mask=mask[:, None], asking=Tensor(asking))
        want_context, want_probs = slow_attention(attention, x, mask, asking)
        np.testing.assert_allclose(probs.data, want_probs, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(context.data, want_context, rtol=1e-9, atol=1e-12)


def test_causal_mask_hides_the_future():
    """With a lower-triangular mask, query 0 sees only key 0 and its output is exactly v of token 0."""
    attention = layer(seed=2)
    x = np.random.default_rng(3).standard_normal((1, 3, 8))
    causal = np.tri(3, dtype=bool)[None, None]
    context, probs = attention(Tensor(x), mask=causal)
    np.testing.assert_allclose(probs.data[0, :, 0], [[1, 0, 0]] * 2, atol=1e-12)
    value_0 = x[0, 0] @ attention.value.weight.data.T + attention.value.bias.data
    np.testing.assert_allclose(context.data[0, 0], value_0, rtol=1e-9)


def test_dropout_drops_attention_weights():
    """BERT drops attention weights, not the context (Google modeling.py `attention_layer`). With dropout 0.5
    and a seeded generator, each row of the context must be the values mixed with that row's weights, each
    weight either dropped (0) or kept and scaled by 1/0.5, and some weights must be dropped. The returned
    probabilities are the weights before dropout; in eval mode nothing is dropped."""
    attention = layer(seed=7, dropout_prob=0.5)
    x = np.random.default_rng(8).standard_normal((2, 4, 8))
    context, probs = attention(Tensor(x))
    np.testing.assert_allclose(probs.data.sum(-1), 1.0, rtol=1e-12, err_msg="return the weights before dropout")
    v = x @ attention.value.weight.data.T + attention.value.bias.data  # (B, S, H)
    keeps = np.array(list(itertools.product([0.0, 2.0], repeat=4)))  # every drop pattern of 4 keys, (16, S)
    dropped_any = False
    for b, h, i in np.ndindex(2, 2, 4):
        part = slice(4 * h, 4 * h + 4)
        candidates = (probs.data[b, h, i] * keeps) @ v[b, :, part]  # (16, D): the row under each pattern
        match = np.flatnonzero(np.abs(candidates - context.data[b, i, part]).max(axis=1) < 1e-9)
        assert len(match), (f"context[{b}, {i}] of head {h} is not the values mixed with dropped attention "
                            "weights: apply dropout to the softmax output, before @ v")
        dropped_any |= not keeps[match[0]].all()
    assert dropped_any, "no attention weight was dropped: apply self.dropout to the probabilities in training"
    attention.eval()
    np.testing.assert_allclose(attention(Tensor(x))[0].data, slow_attention(attention, x, np.ones((2, 4, 4), bool))[0],
                               rtol=1e-9, atol=1e-12, err_msg="in eval mode dropout must do nothing")


def test_gradcheck_all_parameters_and_input():
    """Gradients of x and of the query, key and value weights and biases agree with finite differences."""
    attention = layer(seed=4)
    x = Tensor(np.random.default_rng(5).standard_normal((2, 3, 8)), requires_grad=True)
    assert gradcheck_module(attention, lambda x: attention(x)[0], x, names=("x",), max_entries=12)
