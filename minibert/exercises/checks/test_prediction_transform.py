"""Exercise prediction_transform (lesson 06a): `PredictionTransform.forward` in minibert/model/pretraining.py.

The MLM head's layer before the tied decoder: LayerNorm(act(Dense(h))), act BERT's GELU (Google
modeling.py `get_masked_lm_output`, HF `cls.predictions.transform`). The referee is NumPy, and finite
differences.
"""

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model.pretraining import PredictionTransform

CONFIG = BertConfig(vocab_size=11, hidden_size=5, num_hidden_layers=1, num_attention_heads=1,
                    intermediate_size=8, max_position_embeddings=8, initializer_range=0.7)


def transform(seed=0):
    built = PredictionTransform(CONFIG, np.random.default_rng(seed)).to(np.float64)
    rng = np.random.default_rng(seed + 1)
    for _, parameter in built.named_parameters():  # LayerNorm and the bias away from 1 and 0, so each shows
        parameter.data[...] += 0.3 * rng.standard_normal(parameter.shape)
    return built


def test_layer_norm_of_gelu_of_dense():
    """(B, P, H) -> (B, P, H) equal to LayerNorm(gelu(h·Wᵀ + b)) with the layer's own weights."""
    layer = transform()
    h = np.random.default_rng(2).standard_normal((2, 3, 5))
    weights = layer.state_dict()
    want = numpy_bert.layer_norm(numpy_bert.gelu(numpy_bert.dense(h, weights, "dense")), weights, "LayerNorm",
                                 CONFIG.layer_norm_eps)
    np.testing.assert_allclose(layer(Tensor(h)).data, want, rtol=1e-9, atol=1e-12,
                               err_msg="expected LayerNorm(gelu(Dense(h))): dense, then GELU, then LayerNorm")


def test_gradcheck_h_and_every_parameter():
    """Gradients of h and of the dense and LayerNorm weights agree with finite differences."""
    layer = transform(seed=3)
    rng = np.random.default_rng(4)
    h = Tensor(rng.standard_normal((2, 3, 5)), requires_grad=True)
    assert gradcheck_module(layer, layer, h, names=("h",))
