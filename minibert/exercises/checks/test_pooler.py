"""Exercise pooler (lesson 06a): `Pooler.forward` in minibert/model/bert.py.

pooled = tanh(Dense(h_[CLS])): the final vector of token 0 of each sequence, through a dense layer and tanh
(paper §3, Google modeling.py `pooled_output`). The referee computes it with NumPy.
"""

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.config import BertConfig
from minibert.model.bert import Pooler

CONFIG = BertConfig(vocab_size=11, hidden_size=5, num_hidden_layers=1, num_attention_heads=1,
                    intermediate_size=8, max_position_embeddings=8, initializer_range=0.7)


def pooler(seed=0):
    layer = Pooler(CONFIG, np.random.default_rng(seed)).to(np.float64)
    layer.dense.bias.data[...] = np.random.default_rng(seed + 1).standard_normal(CONFIG.hidden_size)
    return layer


def test_tanh_of_the_dense_layer_on_cls():
    """(B, S, H) -> (B, H) equal to tanh(h[:, 0]·Wᵀ + b): token 0 is [CLS]."""
    layer = pooler()
    h = np.random.default_rng(2).standard_normal((3, 4, CONFIG.hidden_size))
    got = layer(Tensor(h))
    assert got.shape == (3, CONFIG.hidden_size), f"expected (B, H) = (3, 5), got {got.shape}"
    want = np.tanh(h[:, 0] @ layer.dense.weight.data.T + layer.dense.bias.data)
    np.testing.assert_allclose(got.data, want, rtol=1e-9, atol=1e-12,
                               err_msg="expected tanh(Dense(h[:, 0])), the [CLS] vector of each sequence")


def test_gradcheck_h_weight_and_bias():
    """Gradients of h (nonzero only at token 0) and of the dense layer agree with finite differences."""
    layer = pooler()
    rng = np.random.default_rng(3)
    h = Tensor(rng.standard_normal((2, 3, CONFIG.hidden_size)), requires_grad=True)
    assert gradcheck_module(layer, layer, h, names=("h",))
