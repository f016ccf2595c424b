"""What `attention` draws is bounded by what a person can look at, on a model as deep and wide in heads as
BERT-base (12 layers x 12 heads, 512 positions): the terminal and the SVG refuse a text of more than 64 tokens
and draw as many heads as fit in 144 pictures of 32 tokens, saying which were left out; the --html page cuts
a sentence to 128 tokens and refuses more than 16 sentences or 16,777,216 weights, saying what to leave out.
Each bound is checked on what is written, so the pictures stay small by construction (a 122-token SVG of
every head was 262 MB). tests/test_pages_in_browser.py opens the largest page in Chromium."""

import base64
import json
import re

import numpy as np
import pytest
from helpers import wide_model_folder

from minibert.cli import main
from minibert.inspect.attention_view import attention_of
from minibert.inspect.model_folder import load_model_or_encoder

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "."]


def sentence(tokens):
    """Words that the tokenizer reads as `tokens` tokens, [CLS] and [SEP] included."""
    return " ".join((WORDS * tokens)[:tokens - 2])


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    return wide_model_folder(tmp_path_factory.mktemp("wide") / "model", WORDS)


def run(arguments, capsys):
    with pytest.raises(SystemExit) as caught:
        main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    return caught.value.code, captured.err.strip(), captured.out


def pictures_in(svg_path):
    return re.findall(r'<svg x="\d+" y="\d+"', svg_path.read_text("utf-8"))


def test_the_terminal_draws_36_heads_of_64_tokens_and_names_the_rest(wide, tmp_path, capsys):
    """144 heads chosen (all), 64 tokens: 36 heads are drawn, layers 0 to 2, and one line says that from
    layer 3 head 0 on they were left out."""
    svg = tmp_path / "a.svg"
    status, error, out = run(["attention", "--model", wide, "--svg", svg, sentence(64)], capsys)
    assert status == 0
    assert re.findall(r"^layer (\d+), head (\d+)$", out, re.M) == (
        [(str(layer), str(head)) for layer in range(3) for head in range(12)])
    assert len(error.splitlines()) == 1  # said once, though the terminal and the SVG both left them out
    assert error.startswith("warning: drew 36 of the 144 heads chosen, up to layer 2 head 11")
    assert "from layer 3 head 0 on were left out" in error
    assert len(pictures_in(svg)) == 36 and svg.read_text("utf-8").count('class="cell"') == 36 * 64 * 64


def test_a_head_chosen_at_64_tokens_is_drawn_without_a_note(wide, tmp_path, capsys):
    svg = tmp_path / "a.svg"
    status, error, out = run(["attention", "--model", wide, "--svg", svg, "--layer", "11", "--head", "7",
                              sentence(64)], capsys)
    assert status == 0 and error == "" and "layer 11, head 7" in out
    assert len(pictures_in(svg)) == 1


def test_every_head_of_a_12_by_12_model_is_drawn_at_32_tokens(wide, tmp_path, capsys):
    svg = tmp_path / "a.svg"
    status, error, _ = run(["attention", "--model", wide, "--svg", svg, sentence(32)], capsys)
    assert status == 0 and error == "" and len(pictures_in(svg)) == 144


def test_a_text_longer_than_64_tokens_is_refused_and_nothing_is_drawn(wide, tmp_path, capsys):
    svg = tmp_path / "a.svg"
    status, error, out = run(["attention", "--model", wide, "--svg", svg, sentence(65)], capsys)
    assert status == 2 and "\n" not in error and out == ""
    assert error.startswith("error: the text is 65 tokens long; the terminal and the SVG draw at most 64")
    assert "--html" in error and not svg.exists()


def embedded(page_path):
    text = re.search(r'<script type="application/json" id="data">(.*?)</script>', page_path.read_text("utf-8"),
                     re.S).group(1)
    return json.loads(text)


def test_the_largest_page_three_sentences_of_128_tokens_stays_under_24_mb(wide, tmp_path, capsys):
    """Three sentences of 300 tokens are each cut to 128, with a note that names the page's limit; the page
    holds 3 x 2 x 144 x 128^2 weights, one byte each in base64, and nothing much besides."""
    page = tmp_path / "a.html"
    status, _, out = run(["attention", "--model", wide, "--html", page, *[sentence(300)] * 3], capsys)
    assert status == 0
    assert out.count("tokens long and the page shows 128, so its last 172 tokens were cut") == 3
    data = embedded(page)
    assert [len(item["tokens"]) for item in data["sentences"]] == [128] * 3
    assert all(len(base64.b64decode(view["weights"])) == 144 * 128 ** 2
               for item in data["sentences"] for view in item["views"].values())
    assert page.stat().st_size < 24 * 1024 * 1024


def test_a_page_of_more_weights_is_refused_before_anything_is_written(wide, tmp_path, capsys):
    page = tmp_path / "a.html"
    page.write_bytes(b"mine")
    status, error, out = run(["attention", "--model", wide, "--html", page, "--overwrite",
                              *[sentence(128)] * 4], capsys)
    weights = 4 * 2 * 144 * 128 ** 2
    assert status == 2 and "\n" not in error and out == ""
    assert error.startswith(f"error: the page would hold {weights:,} attention weights (4 sentences of "
                            "128, 128, 128, 128 tokens x 12 layers x 12 heads x 2 masks), more than the "
                            "16,777,216 a page holds")
    assert "--layer" in error and page.read_bytes() == b"mine"


def test_more_than_16_sentences_are_refused_for_one_page(wide, tmp_path, capsys):
    page = tmp_path / "a.html"
    status, error, out = run(["attention", "--model", wide, "--html", page, *["a dog ran"] * 17], capsys)
    assert status == 2 and out == "" and not page.exists()
    assert error == "error: 17 sentences given; a page shows at most 16: give fewer, or write them on several pages"
    status, _, _ = run(["attention", "--model", wide, "--html", page, *["a dog ran"] * 16], capsys)
    assert status == 0 and len(embedded(page)["sentences"]) == 16


def test_the_page_holds_the_layers_and_heads_chosen(wide, tmp_path, capsys):
    """--layer and --head choose what the page holds (the 4 sentences refused above fit once only two
    layers are chosen), each once though named twice: its weights are those heads' own, and its note says
    which are shown."""
    page = tmp_path / "a.html"
    text = sentence(20)
    status, _, _ = run(["attention", "--model", wide, "--html", page, "--layer", "2", "--layer", "11",
                        "--head", "0", "--head", "9", "--head", "0", text, *[sentence(128)] * 3], capsys)
    assert status == 0
    data = embedded(page)
    assert data["model"]["layers"] == [2, 11] and data["model"]["heads"] == [0, 9]
    assert "shown: layers 2, 11 and heads 0, 9" in data["model"]["note"]
    model, tokenizer = load_model_or_encoder(wide)
    ids = tokenizer.encode(text)["input_ids"]
    for view in ("bidirectional", "causal"):
        every = np.stack(attention_of(model, ids, [0] * len(ids), attention=view))
        expected = every[[2, 11]][:, [0, 9]]
        stored = np.frombuffer(base64.b64decode(data["sentences"][0]["views"][view]["weights"]), dtype=np.uint8)
        np.testing.assert_allclose(stored.reshape(expected.shape) / 255, expected, atol=0.5 / 255 + 1e-6)
        assert np.array(data["sentences"][0]["views"][view]["kinds"]).shape == (2, 2)


def test_a_layer_the_model_lacks_is_refused_for_the_page_too(wide, tmp_path, capsys):
    page = tmp_path / "a.html"
    status, error, _ = run(["attention", "--model", wide, "--html", page, "--layer", "12", "the cat"], capsys)
    assert status == 2 and "layer 12 does not exist: the model has 12 layers" in error and not page.exists()
