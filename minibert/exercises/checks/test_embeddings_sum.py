"""Exercise embeddings_sum (lesson 06): `BertEmbeddings.forward` in minibert/model/bert.py.

BERT's input vector for token t at position i in segment s is LayerNorm(E_word[t] + E_segment[s] +
E_position[i]) (paper, Figure 2). The referee computes that with plain NumPy.
"""

import numpy as np

from minibert import gradcheck_module
from minibert.model import BertConfig
from minibert.model.bert import BertEmbeddings


def embeddings(seed=0, dropout_prob=0.0):
    config = BertConfig.preset("tiny", vocab_size=20, hidden_size=8, max_position_embeddings=16,
                               hidden_dropout_prob=dropout_prob)
    module = BertEmbeddings(config, np.random.default_rng(seed)).to(np.float64)
    module.LayerNorm.weight.data[:] = 1.0 + 0.1 * np.arange(8)
    return module


def numpy_embeddings(module, input_ids, token_type_ids):
    word = module.word_embeddings.weight.data[input_ids]
    segment = module.token_type_embeddings.weight.data[token_type_ids]
    x = word + segment + module.position_embeddings.weight.data[np.arange(input_ids.shape[1])]
    x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + module.LayerNorm.eps)
    return x_hat * module.LayerNorm.weight.data + module.LayerNorm.bias.data


def test_matches_the_sum_of_three_lookups_then_layernorm():
    """Two sequences of 5 tokens, the second with a segment B: the output equals the NumPy formula."""
    module = embeddings()
    input_ids = np.array([[2, 5, 7, 3, 9], [2, 4, 3, 11, 3]])
    token_type_ids = np.array([[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]])
    out = module(input_ids, token_type_ids)
    assert out.shape == (2, 5, 8)
    np.testing.assert_allclose(out.data, numpy_embeddings(module, input_ids, token_type_ids), rtol=1e-9,
                               atol=1e-12)


def test_same_token_differs_by_position_and_segment():
    """Token 6 at positions 0 and 1 gets two different vectors; so does token 6 in segment A and in B."""
    module = embeddings(1)
    by_position = module(np.array([[6, 6]]), np.array([[0, 0]])).data[0]
    assert not np.allclose(by_position[0], by_position[1])
    by_segment = module(np.array([[6], [6]]), np.array([[0], [1]])).data
    assert not np.allclose(by_segment[0, 0], by_segment[1, 0])


def test_dropout_after_layernorm():
    """BERT drops the normalised sum (Google modeling.py `layer_norm_and_dropout`): with dropout 0.5 and a
    seeded generator, each output value is either 0 or the value without dropout times 1/0.5, and some are 0."""
    module = embeddings(4, dropout_prob=0.5)
    input_ids, token_type_ids = np.array([[2, 5, 7, 3], [2, 4, 3, 11]]), np.array([[0, 0, 1, 1], [0, 1, 1, 1]])
    out = module(input_ids, token_type_ids).data
    want = numpy_embeddings(module, input_ids, token_type_ids)
    dropped, kept = out == 0.0, np.isclose(out, 2.0 * want, rtol=1e-9, atol=1e-12)
    assert np.all(dropped | kept), ("some outputs are neither 0 nor 2x the LayerNorm output: apply dropout "
                                    "once, to the output of LayerNorm")
    assert dropped.any() and kept.any(), "nothing was dropped: apply self.dropout after LayerNorm in training"


def test_eval_mode_drops_nothing():
    """Built with dropout 0.5 but in eval mode, the output is the NumPy formula exactly: dropout acts only in
    training. (The other eval-mode tests build the module with p = 0, where no dropout could show.)"""
    module = embeddings(5, dropout_prob=0.5).eval()
    input_ids, token_type_ids = np.array([[2, 5, 7, 3], [2, 4, 3, 11]]), np.array([[0, 0, 1, 1], [0, 1, 1, 1]])
    np.testing.assert_allclose(module(input_ids, token_type_ids).data,
                               numpy_embeddings(module, input_ids, token_type_ids), rtol=1e-9, atol=1e-12,
                               err_msg="in eval mode dropout must do nothing: use self.dropout, which knows the mode")


def test_gradcheck_the_three_tables():
    """Gradients reach the word, position and segment tables (and only the rows used get one)."""
    module = embeddings(2)
    input_ids, token_type_ids = np.array([[1, 4, 4]]), np.array([[0, 1, 1]])
    assert gradcheck_module(module, lambda: module(input_ids, token_type_ids), max_entries=16)
    projection = np.random.default_rng(3).standard_normal((1, 3, 8))
    module.zero_grad()
    (module(input_ids, token_type_ids) * projection).sum().backward()
    assert not module.word_embeddings.weight.grad[[0, 2, 3]].any()
    assert not module.position_embeddings.weight.grad[3:].any()
