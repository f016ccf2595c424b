"""Exercise attention_sublayer (lesson 05b): `AttentionSublayer.forward` in minibert/model/bert.py.

LayerNorm(residual + Dense(attention(x))), HF's `BertAttention`: the residual is each asking token's own input
(x itself, or `asking` when other tokens ask), and the attention weights come back too. The referee is the
sublayer written in NumPy from its weights, head by head, and finite differences.
"""

import math

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model.bert import AttentionSublayer
from minibert.model.masks import build_attention_mask

CONFIG = BertConfig(vocab_size=11, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8, initializer_range=0.5)
ATTENTION_MASK = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])  # the second sequence ends in padding


def sublayer(seed=0):
    built = AttentionSublayer(CONFIG, np.random.default_rng(seed)).to(np.float64).eval()
    rng = np.random.default_rng(seed + 1)
    for _, parameter in built.named_parameters():  # LayerNorm and biases away from 1 and 0, so each shows
        parameter.data[...] += 0.2 * rng.standard_normal(parameter.shape)
    return built


def numpy_sublayer(x, attention_mask, weights, asking):
    """(LayerNorm(asking + Dense(context)), probabilities (B, A, R, S)), one head at a time."""
    heads, size = CONFIG.num_attention_heads, CONFIG.hidden_size // CONFIG.num_attention_heads
    q = numpy_bert.dense(asking, weights, "self.query")
    k, v = numpy_bert.dense(x, weights, "self.key"), numpy_bert.dense(x, weights, "self.value")
    context = np.zeros_like(asking)
    probs = np.zeros((x.shape[0], heads, asking.shape[1], x.shape[1]))
    for head in range(heads):
        part = slice(head * size, (head + 1) * size)
        scores = q[..., part] @ k[..., part].transpose(0, 2, 1) / math.sqrt(size)  # (B, R, S)
        scores = np.where(attention_mask[:, None, :] == 1, scores, -np.inf)
        weights_ = np.exp(scores - scores.max(-1, keepdims=True))
        probs[:, head] = weights_ / weights_.sum(-1, keepdims=True)
        context[..., part] = probs[:, head] @ v[..., part]
    out = numpy_bert.layer_norm(asking + numpy_bert.dense(context, weights, "output.dense"), weights,
                                "output.LayerNorm", CONFIG.layer_norm_eps)
    return out, probs


def test_matches_the_sublayer_written_in_numpy():
    """x (2, 4, 6) with one padding key: the output (B, S, H) and the weights (B, A, S, S) equal NumPy's."""
    layer = sublayer()
    x = np.random.default_rng(2).standard_normal((2, 4, 6))
    out, probs = layer(Tensor(x), build_attention_mask(ATTENTION_MASK))
    want_out, want_probs = numpy_sublayer(x, ATTENTION_MASK, layer.state_dict(), x)
    np.testing.assert_allclose(probs.data, want_probs, rtol=1e-9, atol=1e-12,
                               err_msg="expected the attention weights, padding keys at 0")
    np.testing.assert_allclose(out.data, want_out, rtol=1e-9, atol=1e-12,
                               err_msg="expected LayerNorm(x + Dense(attention(x)))")


def test_other_tokens_ask():
    """With `asking` (other tokens than x, as many), they make q and are the residual: each output
    is LayerNorm(asking + Dense(context))."""
    layer = sublayer(seed=3)
    rng = np.random.default_rng(4)
    x, asking = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    out, _ = layer(Tensor(x), build_attention_mask(ATTENTION_MASK), asking=Tensor(asking))
    want_out, _ = numpy_sublayer(x, ATTENTION_MASK, layer.state_dict(), asking)
    np.testing.assert_allclose(out.data, want_out, rtol=1e-9, atol=1e-12,
                               err_msg="the asking tokens make q and are each their own residual")


def test_gradcheck_x_and_every_parameter():
    """Gradients of x and of every weight agree with finite differences."""
    layer = sublayer(seed=5)
    rng = np.random.default_rng(6)
    x = Tensor(rng.standard_normal((2, 4, 6)), requires_grad=True)
    mask = build_attention_mask(ATTENTION_MASK)
    assert gradcheck_module(layer, lambda x: layer(x, mask)[0], x, names=("x",), max_entries=12)
