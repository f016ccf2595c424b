"""BERT as a whole: the config, the attention mask, the forward API, attention's properties, bad input, and
the gradient of the whole pretraining loss with respect to every parameter tensor.

Exercises: the attention-property tests are the seed article's claims made executable. In causal mode no
token may see the future; in bidirectional mode every token sees all; padding is invisible in both.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import odd_config as small_config
from helpers import padded_batch, randomize, whole_loss_gradcheck
from hypothesis import given
from hypothesis import strategies as st

from minibert.errors import ConfigError, ShapeError
from minibert.io import load_arrays
from minibert.model import (
    BertConfig,
    BertForPreTraining,
    BertModel,
    build_attention_mask,
    mask_matrix,
)

GOLDEN = Path(__file__).parent / "fixtures" / "golden"








# ----- config -----

def test_presets_have_the_named_sizes():
    """mini is BERT-Mini (4/256/4/1024), base is BERT-base (12/768/12/3072, vocabulary 30522)."""
    mini, base = BertConfig.preset("mini"), BertConfig.preset("base")
    assert (mini.num_hidden_layers, mini.hidden_size, mini.num_attention_heads, mini.intermediate_size) == \
        (4, 256, 4, 1024)
    assert (base.num_hidden_layers, base.hidden_size, base.num_attention_heads, base.intermediate_size,
            base.vocab_size) == (12, 768, 12, 3072, 30522)
    assert BertConfig.preset("tiny", vocab_size=100).vocab_size == 100
    assert BertConfig() == base  # BERT-base is the dataclass default, as in Google's and HF's configs


def counted_by_hand(h, i, v, layers, positions=512, segments=2):
    """Parameters of BertForPreTraining from its sizes: embeddings (V + positions + segments)·H + 2H (LN);
    per layer 4(H² + H) (q, k, v, output dense) + 2·H·I + I + H (FFN) + 4H (two LNs); pooler H² + H;
    MLM head H² + H + 2H + V (the decoder weight is the embeddings'); NSP 2H + 2."""
    return ((v + positions + segments) * h + 2 * h + layers * (4 * (h * h + h) + 2 * h * i + i + h + 4 * h)
            + h * h + h + h * h + h + 2 * h + v + 2 * h + 2)


def test_parameter_count():
    """num_parameters() counts every tensor once (the tied decoder once); BERT-base's count by hand is the
    paper's 110M."""
    assert counted_by_hand(768, 3072, 30522, 12) == 110_106_428
    model = BertForPreTraining(BertConfig.preset("mini"))
    assert model.num_parameters() == counted_by_hand(256, 1024, 8192, 4)
    assert f"{model.num_parameters() / 1e6:.2f}M parameters" in repr(model)


@pytest.mark.parametrize("bad, message", [
    (dict(hidden_size=10, num_attention_heads=4), "not divisible by num_attention_heads=4"),
    (dict(hidden_act="swish"), "hidden_act='swish'"),
    (dict(hidden_dropout_prob=1.0), "hidden_dropout_prob=1.0"),
    (dict(vocab_size=0), "vocab_size=0"),
    (dict(num_hidden_layers=True), "num_hidden_layers=True"),
    (dict(layer_norm_eps=0), "layer_norm_eps=0"),
    (dict(attention="sideways"), "attention='sideways'"),
    (dict(pad_token_id=23), "pad_token_id=23"),
])
def test_invalid_configs_are_refused_by_name(bad, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        small_config(**bad)
    with pytest.raises(ConfigError, match="unknown preset"):
        BertConfig.preset("huge")


def test_a_real_config_json_loads_and_round_trips():
    """HF's config.json (written by transformers) loads as is; keys BERT never used are kept and written
    back."""
    values = json.loads((GOLDEN / "bert_f64" / "config.json").read_text())
    config = BertConfig.from_dict(values)
    for key in ("vocab_size", "hidden_size", "intermediate_size", "hidden_act", "layer_norm_eps"):
        assert getattr(config, key) == values[key]
    assert config.extra["architectures"] == ["BertForPreTraining"] and config.extra["dtype"] == "float64"
    assert config.to_dict() == {**values, "attention": "bidirectional"}


def test_config_refuses_what_minibert_does_not_implement():
    with pytest.raises(ConfigError, match="relative position"):
        BertConfig.from_dict({"position_embedding_type": "relative_key"})
    with pytest.raises(ConfigError, match="hidden_size"):
        BertConfig.from_dict({"hidden_size": "big"})


def test_is_decoder_means_causal():
    assert BertConfig.from_dict({"is_decoder": True}).attention == "causal"
    assert BertConfig(attention="causal").to_dict()["is_decoder"] is True


# ----- masks -----

def test_mask_matrix_draws_the_seeds_grids():
    """The seed's 7-token sentence 我 喜欢 猫 睡 在 沙发 上: causal is lower-triangular, BERT all ones."""
    np.testing.assert_array_equal(mask_matrix(7, "causal"), np.tril(np.ones((7, 7), dtype=int)))
    np.testing.assert_array_equal(mask_matrix(7, "bidirectional"), np.ones((7, 7), dtype=int))
    padded = mask_matrix(4, "bidirectional", attention_mask=[1, 1, 1, 0])
    np.testing.assert_array_equal(padded, [[1, 1, 1, 0]] * 4)


@given(st.integers(1, 4), st.integers(1, 8), st.sampled_from(["bidirectional", "causal"]),
       st.integers(0, 999))
def test_build_attention_mask_entries(batch, seq_len, attention, seed):
    """Entry (b, i, j) is True exactly when key j is a real token and (causal) j <= i."""
    attention_mask = np.random.default_rng(seed).integers(0, 2, size=(batch, seq_len))
    mask = build_attention_mask(attention_mask, attention)
    assert mask.dtype == bool
    query_rows = 1 if attention == "bidirectional" else seq_len
    assert mask.shape == (batch, 1, query_rows, seq_len)
    full = np.broadcast_to(mask, (batch, 1, seq_len, seq_len))[:, 0]
    for b, i, j in np.ndindex(batch, seq_len, seq_len):
        assert full[b, i, j] == (attention_mask[b, j] == 1 and (attention == "bidirectional" or j <= i))


# ----- the forward API -----

def test_output_fields_and_shapes():
    """All fields of the output object, with and without masked_positions; inputs may be lists."""
    config = small_config()
    model = BertForPreTraining(config).eval()
    ids, types, mask = padded_batch()
    out = model(ids.tolist(), types.tolist(), mask.tolist(), output_attentions=True)
    assert out.sequence_output.shape == (3, 7, 12) and out.pooled_output.shape == (3, 12)
    assert out.mlm_logits.shape == (3, 7, 23) and out.nsp_logits.shape == (3, 2)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (3, 3, 7, 7)
    for probs in out.attentions:
        np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
        assert np.all(probs[np.broadcast_to(mask[:, None, None, :] == 0, probs.shape)] == 0)
    masked = model(ids, types, mask, masked_positions=[[1, 2], [0, 4], [1, 1]])
    assert masked.mlm_logits.shape == (3, 2, 23) and masked.attentions is None
    single = model(ids[0])
    assert single.sequence_output.shape == (1, 7, 12)
    as_floats = model(ids, types, mask.astype(np.float32))  # HF-style float masks work too
    np.testing.assert_array_equal(as_floats.sequence_output.data,
                                  model(ids, types, mask).sequence_output.data)


def test_masked_positions_equal_the_full_logits_gathered():
    """The head on the gathered positions gives what the head on every position gives, at those positions;
    sequence_output then holds the vectors the heads read: [CLS], then the masked positions; and the NSP
    logits do not change."""
    model = randomize(BertForPreTraining(small_config()).to(np.float64)).eval()
    ids, types, mask = padded_batch()
    positions = np.array([[0, 3, 6, 3], [1, 2, 0, 0], [1, 0, 0, 0]])
    full = model(ids, types, mask)
    gathered = model(ids, types, mask, masked_positions=positions)
    np.testing.assert_allclose(gathered.mlm_logits.data, np.take_along_axis(full.mlm_logits.data,
                               positions[..., None], axis=1), rtol=1e-12, atol=1e-12)
    read = np.concatenate([np.zeros((3, 1), dtype=int), positions], axis=1)  # (B, 1 + P)
    np.testing.assert_array_equal(gathered.sequence_output.data,
                                  np.take_along_axis(full.sequence_output.data, read[..., None], axis=1))
    np.testing.assert_array_equal(gathered.nsp_logits.data, full.nsp_logits.data)


def test_eval_is_deterministic_and_training_dropout_is_seeded():
    """Eval: the same output every call. Training: dropout changes outputs between calls, but two models
    built with the same seed draw the same masks."""
    ids, types, mask = padded_batch()
    model = BertForPreTraining(small_config(), seed=3)
    train_a = model(ids, types, mask).sequence_output.data
    train_b = model(ids, types, mask).sequence_output.data
    assert not np.allclose(train_a, train_b)
    twin = BertForPreTraining(small_config(), seed=3)
    np.testing.assert_array_equal(twin(ids, types, mask).sequence_output.data, train_a)
    model.eval()
    np.testing.assert_array_equal(model(ids, types, mask).sequence_output.data,
                                  model(ids, types, mask).sequence_output.data)
    other_seed = BertForPreTraining(small_config(), seed=4)
    assert not np.array_equal(other_seed.cls.predictions.transform.dense.weight.data,
                              model.cls.predictions.transform.dense.weight.data)


def test_state_dict_names_are_huggingfaces():
    """Our names, in order, are exactly those of transformers' BertForPreTraining.named_parameters(), which
    the golden fixture stores as `grad/<name>`, in that order."""
    arrays, meta = load_arrays(GOLDEN / "bert_f64" / "golden.npz")
    hf_names = [name[len("grad/"):] for name in arrays if name.startswith("grad/")]
    config = BertConfig.from_dict(meta["config"])
    assert list(BertForPreTraining(config).state_dict()) == hf_names
    assert "cls.predictions.decoder.weight" not in hf_names  # tied: the word embeddings
    encoder_names = [name[len("bert."):] for name in hf_names if name.startswith("bert.")]
    assert list(BertModel(config).state_dict()) == encoder_names


def test_decoder_is_tied_to_the_word_embeddings():
    """Changing the word-embedding matrix changes the MLM logits (and nothing else holds a decoder copy)."""
    model = BertForPreTraining(small_config()).eval()
    ids = [[2, 5, 7]]
    before = model(ids).mlm_logits.data.copy()
    model.bert.embeddings.word_embeddings.weight.data[11] += 1.0  # a token not in the input
    after = model(ids).mlm_logits.data
    assert np.all(after[..., 11] != before[..., 11])
    np.testing.assert_array_equal(np.delete(after, 11, axis=-1), np.delete(before, 11, axis=-1))


# ----- attention properties -----

@given(st.integers(0, 5), st.integers(0, 10_000))
def test_causal_never_sees_the_future(position, seed):
    """Causal: changing token t (and its segment) never changes any output before t."""
    model = BertForPreTraining(small_config(attention="causal"), seed=seed).eval()
    ids = np.random.default_rng(seed).integers(1, 23, size=(2, 7))
    changed = ids.copy()
    changed[:, position + 1] = (changed[:, position + 1] + 5) % 23
    a, b = model(ids).sequence_output.data, model(changed).sequence_output.data
    np.testing.assert_array_equal(a[:, : position + 1], b[:, : position + 1])
    assert not np.allclose(a[:, position + 1], b[:, position + 1])


@given(st.integers(0, 10_000))
def test_bidirectional_sees_later_tokens(seed):
    """Bidirectional: changing the last token changes the first position's output (and, with the same
    weights, the causal call does not: the comparison is one argument)."""
    model = BertForPreTraining(small_config(), seed=seed).eval()
    ids = np.random.default_rng(seed).integers(1, 23, size=(1, 7))
    changed = ids.copy()
    changed[0, -1] = (changed[0, -1] + 7) % 23
    assert not np.allclose(model(ids).sequence_output.data[0, 0], model(changed).sequence_output.data[0, 0])
    causal_a = model(ids, attention="causal").sequence_output.data[0, 0]
    np.testing.assert_array_equal(causal_a, model(changed, attention="causal").sequence_output.data[0, 0])


@given(st.sampled_from(["bidirectional", "causal"]), st.integers(0, 10_000))
def test_padding_never_changes_real_tokens(attention, seed):
    """Whatever ids and segments the padded positions hold, the real tokens' outputs, the pooled output and
    the logits at real positions are unchanged."""
    model = BertForPreTraining(small_config(attention=attention), seed=seed).eval()
    ids, types, mask = padded_batch(seed)
    rng = np.random.default_rng(seed + 1)
    ids2 = np.where(mask == 1, ids, rng.integers(0, 23, size=ids.shape))
    types2 = np.where(mask == 1, types, rng.integers(0, 2, size=ids.shape))
    a, b = model(ids, types, mask), model(ids2, types2, mask)
    real = mask.astype(bool)
    np.testing.assert_allclose(a.sequence_output.data[real], b.sequence_output.data[real], rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.pooled_output.data, b.pooled_output.data, rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.mlm_logits.data[real], b.mlm_logits.data[real], rtol=0, atol=1e-6)


# ----- bad input -----

@pytest.mark.parametrize("call, message", [
    (lambda m: m(np.ones((1, 10), dtype=int)), "sequence length 10 exceeds max_position_embeddings=9"),
    (lambda m: m([[1, 23]]), r"input_ids\[0, 1\] = 23 is outside 0..22"),
    (lambda m: m([[1, -1]]), "input_ids"),
    (lambda m: m([[1, 2]], token_type_ids=[[0, 2]]), "token_type_ids.*type_vocab_size=2"),
    (lambda m: m([[1, 2]], token_type_ids=[[0, 1, 1]]), "token_type_ids has shape"),
    (lambda m: m([[1, 2]], attention_mask=[[1, 1], [1, 0]]), "attention_mask has shape"),
    (lambda m: m([[1, 2]], attention_mask=[[1, 2]]), "only 1"),
    (lambda m: m([[1, 2]], attention_mask=[[1.0, 0.5]]), "only 1"),
    (lambda m: m([[1.5, 2.0]]), "must be integers"),
    (lambda m: m([[1, 2]], masked_positions=[[2]]), r"masked_positions\[0, 0\] = 2 is outside 0..1"),
    (lambda m: m([[1, 2]], masked_positions=[[-1]]), "masked_positions"),
    (lambda m: m([[1, 2], [3, 4]], masked_positions=[[0]]), "masked_positions must be"),
    (lambda m: m([[1, 2]], attention="sideways"), "sideways"),
])
def test_bad_input_gets_a_clear_error(call, message):
    model = BertForPreTraining(small_config())
    with pytest.raises((ShapeError, ConfigError), match=message):
        call(model)


# ----- the whole gradient -----

@pytest.mark.parametrize("attention", ["bidirectional", "causal"])
def test_whole_pretraining_loss_gradcheck(backend, attention):
    """d(MLM + NSP loss)/d(every parameter tensor) against finite differences, in float64, in training mode
    (dropout on, its random draws replayed for every evaluation), on a padded batch with a zero-weight
    masked slot, on both backends (tests/test_fast.py checks the accelerated model the same way). Large
    tensors are sampled (25 entries each); no tensor is skipped."""
    config = small_config(vocab_size=13, hidden_size=8, num_attention_heads=2, intermediate_size=6,
                          max_position_embeddings=6, attention=attention)
    model = randomize(BertForPreTraining(config, seed=0).to(np.float64)).train()
    assert len(model.parameters()) == 4 * config.num_hidden_layers * 4 + 14
    assert whole_loss_gradcheck(model)
