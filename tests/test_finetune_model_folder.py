"""`finetune --model DIR`: the folders it refuses, each with one line saying what is wrong, before anything
is written (--out is not created), and a fine-tuned head given labels it was not built for."""

import io
import json

import pytest
from helpers import write_layout

from minibert.cli import main
from minibert.finetune import FineTuneConfig
from minibert.finetune.finetuning_run import run_finetuning
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

TOKENS = [*SPECIAL_TOKENS, *"abcdefghijklmno"]
BPE = {"type": "BPE", "vocab": {token: i for i, token in enumerate(TOKENS)}, "merges": []}
UNIGRAM = {"type": "Unigram", "unk_id": 1, "vocab": [[token, -1.0] for token in TOKENS]}


@pytest.fixture
def folders(tmp_path):
    """A tiny model folder with its vocabulary, and the TSV files of a two-label task."""
    model = tmp_path / "model"
    BertModel(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(TOKENS))).save_pretrained(model)
    BertTokenizer.from_vocab_list(TOKENS).save_pretrained(model)
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "a b\tpos\nc d\tneg\n" * 4)
    return tmp_path


def finetune_error(folders, model, capsys, train="train.tsv"):
    """Run `finetune --model model` and return its one error line; --out must not have been created."""
    arguments = ["finetune", "--task", "glue-tsv", "--model", str(model), "--out", str(folders / "out"),
                 "--train", str(folders / train), "--dev", str(folders / train), "--epochs", "1", "--plain"]
    with pytest.raises(SystemExit) as caught:
        main(arguments)
    lines = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and "Traceback" not in "\n".join(lines)
    assert not (folders / "out").exists()
    return lines[-1]


def test_a_missing_model_folder_is_named(folders, capsys):
    line = finetune_error(folders, folders / "nowhere", capsys)
    assert line.startswith("error: model folder") and "nowhere does not exist" in line


def test_a_file_given_as_the_model_folder_is_named(folders, capsys):
    line = finetune_error(folders, folders / "model" / "config.json", capsys)
    assert "config.json is a file, not a model folder; give the folder that holds it" in line


def test_a_folder_without_vocabulary_is_named(folders, capsys):
    (folders / "model" / "vocab.txt").unlink()
    line = finetune_error(folders, folders / "model", capsys)
    assert "has neither vocab.txt nor tokenizer.json" in line


@pytest.mark.parametrize("tokenizer_model", [BPE, UNIGRAM], ids=["BPE", "Unigram"])
def test_a_tokenizer_json_of_another_model_type_is_named(folders, capsys, tokenizer_model):
    (folders / "model" / "vocab.txt").unlink()
    (folders / "model" / "tokenizer.json").write_text(json.dumps({"model": tokenizer_model}))
    line = finetune_error(folders, folders / "model", capsys)
    assert f"describes a {tokenizer_model['type']} tokenizer; minibert reads BERT's WordPiece only" in line


def test_a_label_the_fine_tuned_head_was_not_built_for_is_named(folders, capsys):
    """A model fine-tuned on pos/neg, fine-tuned again on a file with a third label: the head's two outputs
    mean pos and neg, so it is refused rather than read under other names."""
    run_finetuning("glue-tsv", folders / "model", folders / "tuned", folders / "train.tsv", folders / "train.tsv",
                   FineTuneConfig(epochs=1, plain=True), log=None, stream=io.StringIO())
    (folders / "three.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tneg\ne f\tmaybe\n")
    line = finetune_error(folders, folders / "tuned", capsys, train="three.tsv")
    assert "the task's labels ['maybe'] are not those the head of" in line and "['neg', 'pos']" in line


@pytest.mark.parametrize("layout, pooling, random_init, expected", [
    ({}, None, False, "mean"),  # a sentence-transformers folder that takes the mean: its pooling
    ({}, "cls", False, "cls"),  # what the user names wins
    ({"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}, None, False, "cls"),
    ({}, None, True, "cls"),  # random weights were trained to pool nothing: BERT's
    (None, None, False, "cls"),  # a plain BERT folder: BERT's
])
def test_the_pooling_defaults_to_the_one_the_folder_was_trained_with(folders, layout, pooling, random_init,
                                                                      expected):
    if layout is not None:
        write_layout(folders / "model", pooling=layout)
    _, model, _ = run_finetuning("glue-tsv", folders / "model", train=folders / "train.tsv",
                                 dev=folders / "train.tsv", settings=FineTuneConfig(epochs=1, pooling=pooling),
                                 random_init=random_init, stream=io.StringIO(), log=None)
    assert model.config.extra.get("classifier_pooling", "cls") == expected


def tree(folder):
    """Every file under `folder`, by path, with its bytes."""
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("where", ["is", "is spelled otherwise", "is inside", "holds"])
def test_an_out_that_is_the_model_folder_is_refused(small_corpus, tmp_path, capsys, where):
    """`finetune --model R --out R --overwrite` replaced the pretraining run's log and report with the
    fine-tuning ones, and its --resume then failed (`KeyError: 'losses'`). An --out that is the --model
    folder, inside it or holding it is refused in one line, even with --overwrite; every file of the run is
    left byte for byte, and the run still resumes."""
    from helpers import quiet, small_config

    from minibert.train.pretraining_loop import pretrain

    run = tmp_path / "runs" / "R"
    pretrain(small_config(small_corpus, steps=2), run, stop_after_steps=1, **quiet())
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "the cat sat\tpos\nthe dog ran\tneg\n" * 4)
    out = {"is": run, "is spelled otherwise": run / ".." / "R", "is inside": run / "tuned",
           "holds": tmp_path / "runs"}[where]
    before = tree(tmp_path / "runs")
    with pytest.raises(SystemExit) as caught:
        main(["finetune", "--task", "glue-tsv", "--model", str(run), "--out", str(out), "--train",
              str(tmp_path / "train.tsv"), "--epochs", "1", "--plain", "--overwrite"])
    verb = where.removesuffix(" spelled otherwise")
    assert caught.value.code == 2 and capsys.readouterr().err.splitlines() == [
        f"error: --out {out} {verb} the --model folder {run}: the fine-tuned model would replace or mix with the "
        "files of the model it starts from; give --out a folder apart from it"]
    assert tree(tmp_path / "runs") == before
    assert pretrain(None, run, resume=True, **quiet()).step == 2
