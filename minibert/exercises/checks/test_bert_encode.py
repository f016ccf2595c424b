"""Exercise bert_encode (lesson 06a): `BertModel.encode` in minibert/model/bert.py.

The whole encoder: the attention mask built once, the embeddings, L layers, the pooler on [CLS]. The
referee is BERT written in NumPy (minibert/exercises/numpy_bert.py) on a padded batch of two segments.
"""

import numpy as np

from minibert import gradcheck
from minibert.config import BertConfig
from minibert.exercises import numpy_bert
from minibert.model import BertModel

CONFIG = BertConfig(vocab_size=13, hidden_size=6, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8, initializer_range=0.5,
                    hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
IDS = np.array([[2, 7, 5, 3, 9, 4], [2, 11, 3, 6, 0, 0]])
TYPES = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]])
MASK = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])


def model(seed=0):
    return BertModel(CONFIG, seed=seed).to(np.float64).eval()


def test_matches_bert_written_in_numpy():
    """Eval mode (dropout p = 0.3 off): sequence_output (B, S, H) and pooled_output (B, H) equal NumPy's."""
    built = model()
    output = built(IDS, TYPES, MASK)
    sequence, pooled = numpy_bert.bert(IDS, TYPES, MASK, built.state_dict(), CONFIG)
    np.testing.assert_allclose(output.sequence_output.data, sequence, rtol=1e-8, atol=1e-10,
                               err_msg="expected embeddings -> L layers (padding masked) as sequence_output")
    np.testing.assert_allclose(output.pooled_output.data, pooled, rtol=1e-8, atol=1e-10,
                               err_msg="expected the pooler on the last layer's [CLS] vector")


def test_causal_attention_when_asked():
    """attention="causal": token 1's vector no longer depends on the tokens after it; by default it does."""
    built = model()
    changed = IDS.copy()
    changed[0, 4] = 12
    for attention, depends in ((None, True), ("causal", False)):
        before = built(IDS, TYPES, MASK, attention=attention).sequence_output.data[0, 1]
        after = built(changed, TYPES, MASK, attention=attention).sequence_output.data[0, 1]
        assert (not np.allclose(before, after)) == depends, (
            f"attention={attention!r}: token 1 {'should' if depends else 'should not'} see token 4")


def test_output_positions_and_attentions():
    """output_positions: the vectors at those positions, [CLS] first for the pooler; one (B, A, S, S) array
    of probabilities per layer when output_attentions is set."""
    built = model()
    positions = np.array([[0, 2, 5], [0, 3, 1]])
    output = built.encode(IDS, TYPES, MASK, output_attentions=True, output_positions=positions)
    sequence, pooled = numpy_bert.bert(IDS, TYPES, MASK, built.state_dict(), CONFIG)
    np.testing.assert_allclose(output.sequence_output.data, sequence[np.arange(2)[:, None], positions],
                               rtol=1e-8, atol=1e-10, err_msg="expected the final vectors at output_positions")
    np.testing.assert_allclose(output.pooled_output.data, pooled, rtol=1e-8, atol=1e-10)
    assert len(output.attentions) == 2 and output.attentions[0].shape == (2, 2, 6, 6)


def test_gradcheck_every_parameter():
    """Gradients of the pooled and sequence outputs with respect to every parameter agree with finite
    differences (25 entries sampled per parameter)."""
    built = model()
    names, params = zip(*built.named_parameters(), strict=True)
    rng = np.random.default_rng(1)
    sequence_weights, pooled_weights = rng.standard_normal((2, 6, 6)), rng.standard_normal((2, 6))

    def outputs(*_):
        output = built(IDS, TYPES, MASK)
        return (output.sequence_output * sequence_weights).sum() + (output.pooled_output * pooled_weights).sum()

    assert gradcheck(outputs, *params, names=names, max_entries=25)
