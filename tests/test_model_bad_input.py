"""Model forward and BertConfig on bad input: each mistake raises minibert's own error (a ShapeError or
ConfigError, never NumPy's IndexError or ValueError from deep inside a lookup), naming the bad value."""

import numpy as np
import pytest

from minibert.errors import ConfigError, MinibertError, ShapeError
from minibert.model import BertConfig, BertForPreTraining, BertModel

IDS = np.array([[2, 5, 6, 3, 0], [2, 7, 3, 0, 0]])  # (B=2, S=5)


@pytest.fixture(scope="module")
def model():
    config = BertConfig.preset("tiny", num_hidden_layers=1, max_position_embeddings=16, vocab_size=32)
    return BertForPreTraining(config).eval()


FORWARD_CASES = {
    "longer than max_position_embeddings": (dict(input_ids=np.ones((1, 17), int)),
                                            "sequence length 17 exceeds max_position_embeddings=16"),
    "id above the vocabulary": (dict(input_ids=[[2, 32, 3]]), r"input_ids\[0, 1\] = 32 is outside 0..31"),
    "negative id": (dict(input_ids=[[2, -1, 3]]), r"input_ids\[0, 1\] = -1"),
    "uint64 id beyond int64": (dict(input_ids=np.array([[2**63 + 5]], np.uint64)), "9223372036854775813"),
    "float ids": (dict(input_ids=[[2.0, 5.0]]), "must be integers, got dtype float64"),
    "text as ids": (dict(input_ids=[["the", "cat"]]), "must be integers"),
    "None as ids": (dict(input_ids=None), "must be integers"),
    "ragged rows": (dict(input_ids=[[2, 5, 3], [2, 3]]), "rows of different lengths"),
    "3-D ids": (dict(input_ids=np.ones((1, 2, 3), int)), r"\(batch, seq_len\).*\(1, 2, 3\)"),
    "empty sequence": (dict(input_ids=np.ones((2, 0), int)), r"\(2, 0\)"),
    "token_type_ids shape": (dict(input_ids=IDS, token_type_ids=np.zeros((2, 4), int)),
                             r"token_type_ids has shape \(2, 4\) but input_ids has shape \(2, 5\)"),
    "segment id 2": (dict(input_ids=IDS, token_type_ids=np.full((2, 5), 2)), "type_vocab_size=2"),
    "attention_mask shape": (dict(input_ids=IDS, attention_mask=np.ones((5, 2))), "attention_mask has shape"),
    "attention_mask of 2s": (dict(input_ids=IDS, attention_mask=np.full((2, 5), 2)), r"only 1 .* and 0"),
    "attention_mask of NaN": (dict(input_ids=IDS, attention_mask=np.full((2, 5), np.nan)), r"\[nan\]"),
    "masked position = S": (dict(input_ids=IDS, masked_positions=[[1, 5], [0, 1]]),
                            r"masked_positions\[0, 1\] = 5 is outside 0..4"),
    "negative masked position": (dict(input_ids=IDS, masked_positions=[[1, 2], [-1, 1]]),
                                 r"masked_positions\[1, 0\] = -1"),
    "masked positions for another batch": (dict(input_ids=IDS, masked_positions=[[1, 2]]),
                                           r"\(batch=2, P\), got shape \(1, 2\)"),
    "ragged masked positions": (dict(input_ids=IDS, masked_positions=[[1, 2], [1]]), "different lengths"),
    "float masked positions": (dict(input_ids=IDS, masked_positions=[[1.0, 2.0], [1.0, 2.0]]), "integers"),
    "unknown attention kind": (dict(input_ids=IDS, attention="sideways"), "'sideways'"),
}


@pytest.mark.parametrize("case", FORWARD_CASES)
def test_bad_forward_input_is_named(model, case):
    """Each bad batch raises a MinibertError (ShapeError or ConfigError) whose message names the value."""
    inputs, named = FORWARD_CASES[case]
    with pytest.raises(MinibertError, match=named):
        model(**inputs)


def test_the_encoder_alone_checks_its_input_too(model):
    """BertModel (no heads) refuses the same too-long batch with the same message."""
    with pytest.raises(ShapeError, match="max_position_embeddings=16"):
        BertModel(model.config)(np.ones((1, 17), int))


def test_good_edge_cases_still_run(model):
    """What looks odd but is valid runs: a single unbatched sequence, bool and float 0/1 attention masks,
    a sequence of padding only, the longest allowed sequence."""
    assert model([2, 5, 3]).mlm_logits.shape == (1, 3, 32)
    assert model(IDS, attention_mask=IDS != 0).mlm_logits.shape == (2, 5, 32)
    assert model(IDS, attention_mask=(IDS != 0).astype(np.float32)).nsp_logits.shape == (2, 2)
    padded = model(IDS, attention_mask=[[1, 1, 1, 1, 0], [0, 0, 0, 0, 0]])
    assert np.isfinite(padded.sequence_output.data).all()
    assert model(np.ones((1, 16), int), masked_positions=[[15]]).mlm_logits.shape == (1, 1, 32)


CONFIG_CASES = {
    "heads do not divide H": (dict(hidden_size=65), "not divisible by num_attention_heads"),
    "zero vocabulary": (dict(vocab_size=0), "vocab_size=0"),
    "fractional size": (dict(num_hidden_layers=1.5), "num_hidden_layers=1.5"),
    "bool as size": (dict(num_attention_heads=True), "num_attention_heads=True"),
    "NaN eps": (dict(layer_norm_eps=float("nan")), "layer_norm_eps=nan"),
    "eps beyond float's range": (dict(layer_norm_eps=10**400), "layer_norm_eps=1000"),
    "infinite init": (dict(initializer_range=float("inf")), "initializer_range=inf"),
    "dropout 1": (dict(hidden_dropout_prob=1.0), r"\[0, 1\)"),
    "NaN dropout": (dict(attention_probs_dropout_prob=float("nan")), "attention_probs_dropout_prob=nan"),
    "unknown activation": (dict(hidden_act="swish"), "hidden_act='swish'"),
    "pad id outside vocabulary": (dict(pad_token_id=512), "pad_token_id=512"),
    "unknown attention": (dict(attention="sideways"), "'sideways'"),
}


@pytest.mark.parametrize("case", CONFIG_CASES)
def test_bad_config_values_are_named(case):
    """A config that cannot work raises ConfigError naming the field and value (NaN and inf included: they
    pass every < and > check, and NaN would make every output NaN)."""
    overrides, named = CONFIG_CASES[case]
    with pytest.raises(ConfigError, match=named):
        BertConfig.preset("tiny", **overrides)


@pytest.mark.parametrize("values, named", [
    ([1, 2], "JSON object"),
    ({"vocab_size": "big"}, "vocab_size='big'"),
    ({"position_embedding_type": "relative_key"}, "relative position embeddings"),
    ({"hidden_size": [768]}, r"hidden_size=\[768\]"),
    ({"is_decoder": "no"}, "is_decoder='no': it must be true or false"),
    ({"hidden_act": ["gelu"]}, r"hidden_act=\['gelu'\] is not supported"),
    ({"architectures": "BertModel"}, "architectures='BertModel': it must be a list of class names"),
    ({"id2label": ["neg", "pos"]}, r"id2label=\['neg', 'pos'\]: it must name each label id"),
    ({"id2label": {"0": "neg", "2": "pos"}}, "id2label=.*it must name each label id"),
    ({"id2label": {"0": 5}}, "id2label=.*it must name each label id"),
])
def test_bad_config_dicts_are_named(values, named):
    """BertConfig.from_dict (what config.json goes through) refuses non-objects, wrong kinds and features
    minibert lacks, naming them."""
    with pytest.raises(ConfigError, match=named):
        BertConfig.from_dict(values)


def test_models_refuse_things_that_are_not_configs():
    """BertForPreTraining('tiny') says to build a BertConfig; an unknown preset lists the known ones."""
    with pytest.raises(TypeError, match="BertConfig.preset"):
        BertForPreTraining("tiny")
    with pytest.raises(ConfigError, match="tiny, tiny-deep, mini, base"):
        BertConfig.preset("huge")
