"""Exercise encoder_layer (lesson 05b): `EncoderLayer.forward` in minibert/model/bert.py.

One post-LN layer: x = LN(x + Drop(Attn(x))), then x = LN(x + Drop(FFN(x))). The referee is the same layer
written in NumPy (minibert/exercises/numpy_bert.py), with dropout switched on (p = 0.3) so that dropout left
running at evaluation time shows; gradients are checked by finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model.bert import EncoderLayer
from minibert.model.masks import build_attention_mask

CONFIG = BertConfig(vocab_size=11, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8, initializer_range=0.5,
                    hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
ATTENTION_MASK = np.array([[1, 1, 1, 1], [1, 1, 0, 0]])  # the second sequence has two padding tokens


def layer(seed=0):
    built = EncoderLayer(CONFIG, np.random.default_rng(seed)).to(np.float64)
    rng = np.random.default_rng(seed + 1)
    for _, parameter in built.named_parameters():  # LayerNorm and biases away from 1 and 0, so each shows
        parameter.data[...] += 0.2 * rng.standard_normal(parameter.shape)
    return built


def test_matches_the_layer_written_in_numpy():
    """Eval mode, padding masked: the output (B, S, H) equals the NumPy layer's; the probabilities are
    (B, A, S, S) rows that sum to 1 and give padding keys 0."""
    built = layer().eval()
    x = np.random.default_rng(2).standard_normal((2, 4, 6))
    out, probs = built(Tensor(x), build_attention_mask(ATTENTION_MASK))
    weights = {f"layer.{name}": array for name, array in built.state_dict().items()}
    want = numpy_bert.encoder_layer(x, ATTENTION_MASK, weights, "layer", CONFIG)
    assert out.shape == (2, 4, 6), f"expected (B, S, H) = (2, 4, 6), got {out.shape}"
    np.testing.assert_allclose(out.data, want, rtol=1e-8, atol=1e-10,
                               err_msg="expected LN(x + Attn(x)) then LN(x + FFN(x)), with the mask")
    probs = np.asarray(getattr(probs, "data", probs))
    assert probs.shape == (2, 2, 4, 4), f"expected the attention probabilities (B, A, S, S), got {probs.shape}"
    np.testing.assert_allclose(probs[1, :, :, 2:], 0, atol=1e-12, err_msg="padding keys must get weight 0")


def test_training_mode_drops_and_differs_from_eval():
    """With p = 0.3 in training mode, two calls differ (dropout draws) and differ from eval mode."""
    built = layer()
    x = Tensor(np.random.default_rng(3).standard_normal((2, 4, 6)))
    mask = build_attention_mask(ATTENTION_MASK)
    first, second = built.train()(x, mask)[0].data, built(x, mask)[0].data
    evaluated = built.eval()(x, mask)[0].data
    assert not np.allclose(first, second) and not np.allclose(first, evaluated), "dropout never acts in training"


def test_gradcheck_x_and_every_parameter():
    """Gradients of x and of every parameter of the layer agree with finite differences."""
    built = layer().eval()
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((2, 4, 6)), requires_grad=True)
    mask = build_attention_mask(ATTENTION_MASK)
    assert gradcheck_module(built, lambda x: built(x, mask)[0], x, names=("x",), max_entries=12)
