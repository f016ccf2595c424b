"""Exercise encoder_stack (lesson 06a): `Encoder.forward` in minibert/model/bert.py.

L layers, each on the previous one's output; the probabilities of each layer kept when asked; only the
positions asked for gathered at the end. The referee is the stack written in NumPy
(minibert/exercises/numpy_bert.py).
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model.bert import Encoder
from minibert.model.masks import build_attention_mask

CONFIG = BertConfig(vocab_size=11, hidden_size=6, num_hidden_layers=3, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8, initializer_range=0.5)
ATTENTION_MASK = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])


def encoder(seed=0):
    return Encoder(CONFIG, np.random.default_rng(seed)).to(np.float64).eval()


def numpy_stack(x, built):
    weights = {f"encoder.{name}": array for name, array in built.state_dict().items()}
    for index in range(CONFIG.num_hidden_layers):
        x = numpy_bert.encoder_layer(x, ATTENTION_MASK, weights, f"encoder.layer.{index}", CONFIG)
    return x


def test_three_layers_in_order():
    """The output of 3 layers, each on the one before, equals the NumPy stack's."""
    built = encoder()
    x = np.random.default_rng(1).standard_normal((2, 5, 6))
    out, attentions = built(Tensor(x), build_attention_mask(ATTENTION_MASK))
    np.testing.assert_allclose(out.data, numpy_stack(x, built), rtol=1e-8, atol=1e-10,
                               err_msg="expected layer 2(layer 1(layer 0(x)))")
    assert attentions is None, "without output_attentions, attentions must be None"


def test_each_layer_s_probabilities_when_asked():
    """output_attentions=True: a list of 3 arrays (B, A, S, S), layer i's own, the one its forward returns."""
    built = encoder()
    x = Tensor(np.random.default_rng(2).standard_normal((2, 5, 6)))
    mask = build_attention_mask(ATTENTION_MASK)
    _, attentions = built(x, mask, output_attentions=True)
    assert isinstance(attentions, list) and len(attentions) == 3, "expected one array per layer"
    inputs = x
    for index, layer in enumerate(built.layer):
        inputs, probs = layer(inputs, mask)
        assert isinstance(attentions[index], np.ndarray), "keep the probabilities as arrays (probs.data)"
        np.testing.assert_allclose(attentions[index], np.asarray(getattr(probs, "data", probs)), rtol=1e-12,
                                   err_msg=f"attentions[{index}] is not layer {index}'s probabilities")


def test_output_positions_gathered_after_the_last_layer():
    """output_positions (B, R): the final vectors at those positions only, (B, R, H)."""
    built = encoder()
    x = np.random.default_rng(3).standard_normal((2, 5, 6))
    positions = np.array([[0, 3], [0, 1]])
    out, _ = built(Tensor(x), build_attention_mask(ATTENTION_MASK), output_positions=positions)
    want = numpy_stack(x, built)[np.arange(2)[:, None], positions]
    assert out.shape == (2, 2, 6), f"expected (B, R, H) = (2, 2, 6), got {out.shape}"
    np.testing.assert_allclose(out.data, want, rtol=1e-8, atol=1e-10,
                               err_msg="expected the last layer's vectors at output_positions")


def test_gradcheck_x():
    """The gradient of x through all 3 layers agrees with finite differences."""
    built = encoder()
    rng = np.random.default_rng(4)
    x = Tensor(rng.standard_normal((2, 5, 6)), requires_grad=True)
    projection = rng.standard_normal((2, 5, 6))
    mask = build_attention_mask(ATTENTION_MASK)
    assert gradcheck(lambda x: built(x, mask)[0] * projection, x, names=("x",), max_entries=20)
