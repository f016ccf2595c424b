"""Exercise pretraining_heads (lesson 06a): `BertForPreTraining.forward` in minibert/model/pretraining.py.

The encoder reads [CLS] and the masked positions only; the MLM head runs on the masked positions' vectors,
the NSP head (a Linear(H, 2)) on the pooled [CLS]. The referee is BERT written in NumPy
(minibert/exercises/numpy_bert.py) with the two heads added by hand.
"""

import numpy as np

from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model import BertForPreTraining

CONFIG = BertConfig(vocab_size=13, hidden_size=6, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8, initializer_range=0.5)
IDS = np.array([[2, 7, 5, 3, 9, 4], [2, 11, 3, 6, 0, 0]])
TYPES = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]])
MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
POSITIONS = np.array([[1, 4], [3, 2]])


def model_and_numpy(seed=0):
    built = BertForPreTraining(CONFIG, seed=seed).to(np.float64).eval()
    rng = np.random.default_rng(seed + 1)
    for _, parameter in built.named_parameters():  # biases away from 0, so a skipped one shows
        parameter.data[...] += 0.1 * rng.standard_normal(parameter.shape)
    weights = built.state_dict()
    sequence, pooled = numpy_bert.bert(IDS, TYPES, MASK, weights, CONFIG, prefix="bert.")
    h = sequence[np.arange(2)[:, None], POSITIONS]  # (B, P, H)
    widened = numpy_bert.gelu(numpy_bert.dense(h, weights, "cls.predictions.transform.dense"))
    transformed = numpy_bert.layer_norm(widened, weights, "cls.predictions.transform.LayerNorm", CONFIG.layer_norm_eps)
    mlm = transformed @ weights["bert.embeddings.word_embeddings.weight"].T + weights["cls.predictions.bias"]
    nsp = numpy_bert.dense(pooled, weights, "cls.seq_relationship")
    return built, mlm, nsp


def test_mlm_logits_at_the_masked_positions():
    """mlm_logits (B, P, V): the MLM head on the final vectors at masked_positions, equal to NumPy's."""
    built, mlm, _ = model_and_numpy()
    output = built(IDS, TYPES, MASK, masked_positions=POSITIONS)
    assert output.mlm_logits.shape == (2, 2, 13), f"expected (B, P, V) = (2, 2, 13), got {output.mlm_logits.shape}"
    np.testing.assert_allclose(output.mlm_logits.data, mlm, rtol=1e-8, atol=1e-10,
                               err_msg="expected the MLM head on the vectors at masked_positions")


def test_nsp_logits_on_the_pooled_cls():
    """nsp_logits (B, 2): Linear(H, 2) on the pooled [CLS] vector, with and without masked_positions."""
    built, _, nsp = model_and_numpy()
    for positions in (POSITIONS, None):
        output = built(IDS, TYPES, MASK, masked_positions=positions)
        np.testing.assert_allclose(output.nsp_logits.data, nsp, rtol=1e-8, atol=1e-10,
                                   err_msg="expected seq_relationship(pooled [CLS])")


def test_every_position_without_masked_positions():
    """Without masked_positions the MLM head runs at every position, (B, S, V)."""
    built, mlm, _ = model_and_numpy()
    output = built(IDS, TYPES, MASK)
    assert output.mlm_logits.shape == (2, 6, 13)
    np.testing.assert_allclose(output.mlm_logits.data[np.arange(2)[:, None], POSITIONS], mlm, rtol=1e-8,
                               atol=1e-10)
