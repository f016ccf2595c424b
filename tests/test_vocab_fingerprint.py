"""A vocabulary belongs to the corpus and size it was trained for, and a run's checkpoint to its vocabulary
(minibert/data/build.py `resolve_vocabulary`, minibert/train/checkpointing.py `check_vocabulary`).

Two corpus files in one folder shared its vocab.txt: `pretrain --corpus small.txt --vocab-size 1000`
silently reused a 25-token vocabulary of another file and trained on mostly [UNK]. And a reordered vocab.txt
of the right size loaded without a word and filled every [MASK] with wrong tokens.
"""

import pytest
from helpers import quiet, small_config

from minibert.cli import main
from minibert.data.build import build_pretraining_data
from minibert.errors import CheckpointError
from minibert.finetune.saved_model import load_finetuned
from minibert.inspect.model_folder import load_for_inference
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer
from minibert.train.pretraining_loop import pretrain

OTHER = "ab ba ab.\nba ab ba.\n\nab ab ba.\nba ba ab.\n"
SMALL = ("the quick brown fox jumps over the lazy dog.\nsphinx of black quartz judge my vow.\n\n"
         "pack my box with five dozen liquor jugs.\nhow vexingly quick daft zebras jump.\n") * 3


def build(corpus, folder, vocab_size, messages):
    return build_pretraining_data(corpus, folder, max_seq_length=64, max_predictions_per_seq=10,
                                  vocab_size=vocab_size, eval_fraction=0.0, log=messages.append)


def test_a_folders_vocabulary_is_reused_only_for_its_corpus_and_size(tmp_path):
    """other.txt's 12-token vocabulary is not reused for small.txt at 60 tokens; small.txt's is reused for
    small.txt at 60, and a new size trains anew."""
    (tmp_path / "other.txt").write_text(OTHER)
    (tmp_path / "small.txt").write_text(SMALL)
    messages = []
    build(tmp_path / "other.txt", tmp_path, 12, messages)
    assert len(BertTokenizer(tmp_path / "vocab.txt").vocab) == 12
    build(tmp_path / "small.txt", tmp_path, 60, messages)
    vocabulary = BertTokenizer(tmp_path / "vocab.txt").vocab
    assert len(vocabulary) == 60 and "q" in vocabulary  # q is a letter of small.txt only
    messages.clear()
    build(tmp_path / "small.txt", tmp_path, 60, messages)
    assert not any("training a WordPiece" in message for message in messages)
    build(tmp_path / "small.txt", tmp_path, 50, messages)
    assert len(BertTokenizer(tmp_path / "vocab.txt").vocab) == 50


def test_a_vocabulary_the_user_put_there_is_used_as_it_is(tmp_path):
    """A vocab.txt with no record of being trained here, or edited since, is the user's: used, not
    replaced."""
    (tmp_path / "small.txt").write_text(SMALL)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(SMALL) - {" ", "\n"})]
    (tmp_path / "vocab.txt").write_text("\n".join(tokens) + "\n")
    messages = []
    build(tmp_path / "small.txt", tmp_path, 60, messages)
    assert (tmp_path / "vocab.txt").read_text().split() == tokens
    assert any("not trained here, used as it is" in message for message in messages)
    (tmp_path / "vocab.txt").unlink()
    build(tmp_path / "small.txt", tmp_path, 60, messages)  # trained here, recorded
    edited = (tmp_path / "vocab.txt").read_text() + "zebra\n"
    (tmp_path / "vocab.txt").write_text(edited)
    build(tmp_path / "small.txt", tmp_path, 50, messages)  # changed since: the user's, even at a new size
    assert (tmp_path / "vocab.txt").read_text() == edited


@pytest.fixture(scope="module")
def run_folder(small_corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fingerprint") / "run"
    pretrain(small_config(small_corpus, steps=1), folder, **quiet())
    return folder


def test_a_reordered_vocabulary_is_refused(run_folder, tmp_path, capsys):
    """Two lines of the run's vocab.txt swapped: same size, so nothing else notices; the checkpoint's
    sha256 does, in the library and as one line from fill-mask."""
    lines = (run_folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    load_for_inference(run_folder)  # the run's own vocabulary loads
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "checkpoint.npz").write_bytes((run_folder / "checkpoint.npz").read_bytes())
    lines[10], lines[11] = lines[11], lines[10]
    (copy / "vocab.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CheckpointError, match=r"vocab.txt is not the vocabulary .*checkpoint.npz was trained with"):
        load_for_inference(copy)
    with pytest.raises(SystemExit) as caught:
        main(["fill-mask", "--model", str(copy), "a [MASK] ."])
    error = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and len(error) == 1 and "sha256 differs" in error[0]


def test_a_fine_tuned_models_reordered_vocabulary_is_refused(tmp_path, capsys):
    """The same for a folder written by `finetune --out`: finetune.json records the vocabulary's sha256 and
    `predict` checks it."""

    words = [*"abcdefgh"]
    BertForPreTraining(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(SPECIAL_TOKENS) + len(words))) \
        .save_pretrained(tmp_path / "model")
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *words]).save_pretrained(tmp_path / "model")
    (tmp_path / "train.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tneg\n")
    with pytest.raises(SystemExit) as caught:
        main(["finetune", "--task", "glue-tsv", "--model", str(tmp_path / "model"), "--out", str(tmp_path / "tuned"),
              "--train", str(tmp_path / "train.tsv"), "--dev", str(tmp_path / "train.tsv"), "--epochs", "1"])
    assert caught.value.code == 0
    load_finetuned(tmp_path / "tuned")
    vocab = tmp_path / "tuned" / "vocab.txt"
    lines = vocab.read_text(encoding="utf-8").splitlines()
    lines[5], lines[6] = lines[6], lines[5]
    vocab.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(["predict", "--model", str(tmp_path / "tuned"), "a b"])
    error = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and len(error) == 1
    assert "not the vocabulary this model was fine-tuned with" in error[0]
