"""What the commands echo of the user's text: control characters and bidirectional overrides shown escaped
(a text cannot clear the screen or recolour the terminal), and input longer than the model reads said to
be cut, with how long it was."""

import io
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.cli import main
from minibert.cli.terminal import BIDI_CONTROLS, printable
from minibert.finetune import FineTuneConfig
from minibert.finetune.finetuning_run import run_finetuning
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import BertTokenizer
from minibert.tokenizer.vocab import SPECIAL_TOKENS

HOSTILE = "red \x1b[31mRED\x1b[0m \x1b[2J\r\u202egnp.exe"


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    BertForPreTraining(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=20)).save_pretrained(folder)
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *"abcdefghijklmno"]).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def classifier(pretrained, tmp_path_factory):
    """A sentiment classifier fine-tuned for one epoch on 40 examples: enough to predict with."""
    out = tmp_path_factory.mktemp("classifier") / "out"
    run_finetuning("sentiment", pretrained, out, train_limit=40, dev_limit=20, log=None,
                   settings=FineTuneConfig(epochs=1, threads=1, plain=True), stream=io.StringIO())
    return out


def terminal_controls(text):
    return [char for char in text if char in "\x1b\r\x07\x9b\u202e"]


@given(st.text())
@settings(max_examples=200, deadline=None)
def test_printable_text_has_no_control_character_and_keeps_the_rest(text):
    """No control character (Unicode Cc) or bidirectional control is left; a text without any is shown as
    it is; each one becomes Python's escape for it."""
    shown = printable(text)
    assert not any(unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS for char in shown)
    if not any(unicodedata.category(char) == "Cc" or char in BIDI_CONTROLS for char in text):
        assert shown == text
    assert printable("小明 café\x1b[2J\u202e") == "小明 café\\x1b[2J\\u202e"


@pytest.mark.parametrize("command", [["embed", "--model", "{pretrained}", HOSTILE, "abc"],
                                     ["fill-mask", "--model", "{pretrained}", HOSTILE + " [MASK]"],
                                     ["predict", "--model", "{classifier}", HOSTILE]])
def test_user_text_is_echoed_escaped(command, pretrained, classifier, capsys):
    arguments = [part.format(pretrained=pretrained, classifier=classifier) for part in command]
    with pytest.raises(SystemExit) as status:
        main(arguments)
    printed = capsys.readouterr().out
    assert status.value.code == 0
    assert not terminal_controls(printed) and "red \\x1b[31mRED\\x1b[0m \\x1b[2J\\r\\u202eg" in printed, printed


def test_predict_says_what_it_cut(classifier, capsys):
    """A text longer than the model's max_seq_length: the prediction is made on its start, and a warning
    names the input, its length in tokens and the limit; a text that fits gets no warning."""
    with pytest.raises(SystemExit):
        main(["predict", "--model", str(classifier), "a b c " * 100, "a b"])
    err = capsys.readouterr().err
    assert "warning: input 1: 1 of 2 inputs has more than max_seq_length=" in err and "(the first: 302)" in err
    with pytest.raises(SystemExit):
        main(["predict", "--model", str(classifier), "a b"])
    assert "warning" not in capsys.readouterr().err
