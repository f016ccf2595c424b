"""The attention explorer's page (minibert/inspect/attention_page.py, `attention --html`), read without a
browser: what it embeds must be the model's own attention and guesses, it must name nothing off the disk,
and bad input is refused in one line before anything is written. tests/test_pages_in_browser.py opens it."""

import base64
import json
import re

import numpy as np
import pytest

from minibert.cli import main
from minibert.inspect.attention_page import attention_page
from minibert.inspect.attention_view import attention_of
from minibert.inspect.fill_mask import fill_mask
from minibert.model import BertConfig, BertForPreTraining, BertModel
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS])


def model_of(tokenizer, preset="tiny", **changes):
    model = BertForPreTraining(BertConfig.preset(preset, vocab_size=tokenizer.vocab_size, **changes), seed=3)
    return model.eval()


def embedded(page):
    """The JSON data a page embeds, read back as the browser reads it."""
    text = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text)


def weights_of(view, layers, heads, size):
    return np.frombuffer(base64.b64decode(view["weights"]), dtype=np.uint8).reshape(layers, heads, size, size)


def test_the_page_embeds_each_views_attention_and_guesses(tokenizer):
    """The weights decode to attention_of's under each mask (to the byte's 1/255); the causal view has
    nothing above the diagonal and the bidirectional one has; the guesses are fill_mask's top 5."""
    model = model_of(tokenizer)
    text = "the cat sat on the [MASK] ."
    data = embedded(attention_page(model, tokenizer, [text], name="tiny")[0])
    item = data["sentences"][0]
    ids = tokenizer.encode(text)["input_ids"]
    assert item["tokens"] == tokenizer.convert_ids_to_tokens(ids) and item["masks"] == [6]
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    for view in ("bidirectional", "causal"):
        expected = np.stack(attention_of(model, ids, [0] * len(ids), attention=view))
        stored = weights_of(item["views"][view], layers, heads, len(ids)) / 255
        np.testing.assert_allclose(stored, expected, atol=0.5 / 255 + 1e-6, err_msg=view)
    above = np.triu_indices(len(ids), k=1)
    causal = weights_of(item["views"]["causal"], layers, heads, len(ids))
    bidirectional = weights_of(item["views"]["bidirectional"], layers, heads, len(ids))
    assert causal[..., above[0], above[1]].max() == 0 < bidirectional[..., above[0], above[1]].max()
    top = fill_mask(model, tokenizer, text, top_k=5)[0]
    assert [token for token, _ in item["views"]["bidirectional"]["guesses"][0]] == [token for token, _ in top]
    assert len(item["views"]["causal"]["guesses"][0]) == 5
    assert len(item["views"]["bidirectional"]["kinds"]) == layers


def test_a_four_layer_page_of_64_tokens_is_small_and_names_nothing_off_the_disk(tokenizer):
    """mini (4 layers, 4 heads) on a 64-token sentence with 13 masks: under 2 MB; no URL, no src or href,
    no CSS import; and a sentence holding "</script>" cannot end the data's element early."""
    model = model_of(tokenizer, "mini")
    sentence = " ".join((["the", "cat", "sat", "on", "[MASK]"] * 13)[:62])
    page, _ = attention_page(model, tokenizer, [sentence, "the </script> cat"], name="mini")
    data = embedded(page)
    assert len(data["sentences"][0]["tokens"]) == 64
    assert len(page.encode("utf-8")) < 2_000_000
    names_only = page.replace("http://www.w3.org/2000/svg", "")  # SVG's namespace: a name, never fetched
    assert not re.search(r"https?:|\bsrc=|\bhref=|url\(|@import", names_only)
    assert page.count("</script>") == 2  # the data's element and the script's: the token is escaped


def test_a_long_sentence_is_cut_to_the_positions_and_the_page_says_what_went(tokenizer):
    model = model_of(tokenizer, max_position_embeddings=16)
    sentence = "the cat sat on the mat . " * 3 + "a dog ran"
    page, notes = attention_page(model, tokenizer, [sentence], name="tiny")
    item = embedded(page)["sentences"][0]
    assert len(item["tokens"]) == 16 and item["tokens"][-1] == "[SEP]"
    cut = tokenizer.encode(sentence)["input_ids"][15:-1]
    assert len(notes) == 2 and item["notes"][0] in notes[0]  # what was cut, and that it has no [MASK]
    assert f"last {len(cut)} tokens were cut: {tokenizer.decode(cut)!r}" in notes[0]


def test_no_mask_and_no_mlm_head_still_show_attention(tokenizer):
    """A sentence without [MASK] and an encoder without heads (sentence-transformers') get the weights and
    no guesses, and the page says why."""
    encoder = BertModel(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size)).eval()
    data = embedded(attention_page(encoder, tokenizer, ["the cat sat", "the [MASK] sat"], name="enc")[0])
    assert data["model"]["has_mlm"] is False and "no masked-LM head" in data["model"]["note"]
    for item in data["sentences"]:
        for view in item["views"].values():
            assert view["guesses"] is None and len(base64.b64decode(view["weights"])) > 0
    assert any("no [MASK]" in note for note in data["sentences"][0]["notes"])


@pytest.fixture(scope="module")
def model_dir(tokenizer, tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "tiny"
    model = model_of(tokenizer)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def run(arguments, capsys):
    with pytest.raises(SystemExit) as caught:
        main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    return caught.value.code, captured.err.strip(), captured.out


def test_the_command_writes_one_page_for_several_sentences(model_dir, tmp_path, capsys):
    page = tmp_path / "explorer.html"
    status, _, out = run(["attention", "--model", model_dir, "--html", page, "the [MASK] sat", "a dog ran"], capsys)
    assert status == 0 and f"wrote {page}" in out and "sentence 2: no [MASK]" in out
    assert [item["text"] for item in embedded(page.read_text("utf-8"))["sentences"]] == ["the [MASK] sat", "a dog ran"]


@pytest.mark.parametrize("case", ["missing folder", "a folder", "a file in the way", "several without --html"])
def test_bad_html_paths_are_refused_in_one_line_and_nothing_changes(case, model_dir, tmp_path, capsys):
    (tmp_path / "old.html").write_text("mine")
    arguments, expected = {
        "missing folder": (["--html", tmp_path / "nowhere" / "a.html", "the cat"], "does not exist"),
        "a folder": (["--html", tmp_path, "the cat"], "is a folder"),
        "a file in the way": (["--html", tmp_path / "old.html", "the cat"], "already exists"),
        "several without --html": (["the cat", "a dog"], "2 sentences given"),
    }[case]
    status, error, _ = run(["attention", "--model", model_dir, *arguments], capsys)
    assert status == 2 and error.startswith("error: ") and expected in error and "\n" not in error
    assert sorted(path.name for path in tmp_path.iterdir()) == ["old.html"]
    assert (tmp_path / "old.html").read_text() == "mine"


def test_overwrite_replaces_an_existing_page(model_dir, tmp_path, capsys):
    page = tmp_path / "old.html"
    page.write_text("mine")
    status, _, _ = run(["attention", "--model", model_dir, "--html", page, "--overwrite", "the cat"], capsys)
    assert status == 0 and embedded(page.read_text("utf-8"))["sentences"][0]["text"] == "the cat"


def test_a_fine_tuned_folder_shows_its_encoder(tokenizer, tmp_path, capsys):
    """A fine-tuned model's folder (its encoder under `bert.`, a classifier where the pretraining heads were)
    is drawn from its encoder's weights, without guesses, instead of being refused with a Python hint
    ("pass strict=False"); the folder is left byte for byte as it was."""
    from minibert.finetune.heads import BertForSequenceClassification

    model = BertForSequenceClassification(BertConfig.preset("tiny", vocab_size=tokenizer.vocab_size),
                                          num_labels=2, seed=5).eval()
    folder = tmp_path / "fine-tuned"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    page, svg = tmp_path / "explorer.html", tmp_path / "attention.svg"
    status, error, _ = run(["attention", "--model", folder, "--html", page, "the [MASK] sat"], capsys)
    assert status == 0 and error == ""
    data = embedded(page.read_text("utf-8"))
    assert data["model"]["has_mlm"] is False
    item = data["sentences"][0]
    ids = tokenizer.encode("the [MASK] sat")["input_ids"]
    expected = np.stack(attention_of(model, ids, [0] * len(ids), attention="bidirectional"))
    stored = weights_of(item["views"]["bidirectional"], *expected.shape[:2], len(ids)) / 255
    np.testing.assert_allclose(stored, expected, atol=0.5 / 255 + 1e-6)
    assert item["views"]["bidirectional"]["guesses"] is None
    status, error, _ = run(["attention", "--model", folder, "--svg", svg, "the cat sat"], capsys)
    assert status == 0 and error == "" and svg.stat().st_size > 0
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
