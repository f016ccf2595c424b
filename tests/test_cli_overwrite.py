"""No command replaces a file or folder it did not create in this run unless --overwrite is given, and a
path it cannot write gets one clear line (minibert/io/overwrite.py, minibert/cli/).

Every case runs in-process through `minibert.cli.main` in a folder of small inputs and a tiny model.
"""

import json

import pytest

from minibert.cli import main
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

WORDS = [*"abcdefghijklmno"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Corpora, TSV files and a tiny from_pretrained folder with the pretraining heads."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "two_docs.txt").write_text("a b c.\nd e f.\n\ng h i.\nj k l.\n")
    (folder / "empty.txt").write_text("")
    (folder / "notes.txt").write_text("a file, not a folder\n")
    (folder / "good.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tneg\n")
    (folder / "one_label.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tpos\ne f\tpos\n")
    config = BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(SPECIAL_TOKENS) + len(WORDS))
    BertForPreTraining(config).save_pretrained(folder / "model")
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS]).save_pretrained(folder / "model")
    return folder


def run(arguments, capsys):
    """(exit status, the last line of stderr, stdout) of `python -m minibert ARGUMENTS`."""
    with pytest.raises(SystemExit) as caught:
        main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    return caught.value.code, lines[-1] if lines else "", captured.out


def finetune_arguments(workdir, out, train="good.tsv"):
    return ["finetune", "--task", "glue-tsv", "--model", workdir / "model", "--out", out, "--train",
            workdir / train, "--dev", workdir / "good.tsv", "--epochs", "1", "--batch-size", "2"]


def test_finetune_keeps_an_earlier_model(workdir, tmp_path, capsys):
    """`finetune --out EXISTING` replaced an earlier fine-tuned model; now it names what is there and
    changes nothing, and --overwrite replaces it (with a log of the new run only)."""
    out = tmp_path / "tuned"
    status, _, _ = run(finetune_arguments(workdir, out), capsys)
    assert status == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    status, error, _ = run(finetune_arguments(workdir, out), capsys)
    assert status == 2 and error.startswith(f"error: {out} already exists (a folder of ")
    assert "--overwrite" in error and "finetune.json" in error
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    status, _, _ = run([*finetune_arguments(workdir, out), "--overwrite"], capsys)
    assert status == 0
    kinds = [json.loads(line)["kind"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert kinds.count("eval") == 1 and not (out / ".lock").exists()  # one epoch: the new run's alone


def test_a_single_label_training_set_is_refused(workdir, tmp_path, capsys):
    """A TSV whose examples all have one label built a one-output classifier that reported "dev accuracy
    1.0000"; now one line says a classifier needs two labels, and no --out is left behind."""
    status, error, _ = run(finetune_arguments(workdir, tmp_path / "o", train="one_label.tsv"), capsys)
    assert status == 2 and "one_label.tsv: every training example has the label ['pos']" in error
    assert "at least 2 labels" in error and not (tmp_path / "o").exists()


def test_vocab_keeps_an_existing_file(workdir, tmp_path, capsys):
    """`vocab --out FILE` replaced any file; now it is refused (before training), and --overwrite
    replaces it."""
    out = tmp_path / "vocab.txt"
    out.write_text("my list\n")
    status, error, _ = run(["vocab", "--corpus", workdir / "two_docs.txt", "--out", out, "--size", "40"], capsys)
    assert status == 2 and f"{out} already exists (a file of 8 bytes" in error and "--overwrite" in error
    assert out.read_text() == "my list\n"
    status, _, _ = run(["vocab", "--corpus", workdir / "two_docs.txt", "--out", out, "--size", "40",
                        "--overwrite"], capsys)
    assert status == 0 and "[CLS]" in out.read_text()


def test_vocab_refuses_a_missing_folder_before_training(workdir, tmp_path, monkeypatch, capsys):
    """`vocab --out missing/dir/vocab.txt` failed only when it wrote the vocabulary, after all the training;
    now it stops before (training here would fail the test), and creates nothing."""
    def train_wordpiece(*args, **kwargs):
        raise AssertionError("a refused --out is refused before training")

    monkeypatch.setattr("minibert.tokenizer.trainer.train_wordpiece", train_wordpiece)
    out = tmp_path / "missing" / "dir" / "vocab.txt"
    status, error, _ = run(["vocab", "--corpus", workdir / "two_docs.txt", "--out", out], capsys)
    assert status == 2 and error == (f"error: the folder {out.parent} of --out {out} does not exist; create the "
                                     "folder first, or give --out a path in a folder that exists")
    assert list(tmp_path.iterdir()) == []


def test_attention_keeps_an_existing_picture(workdir, tmp_path, capsys):
    """`attention --svg FILE` replaced any file; now an existing --svg is refused unless --overwrite, and
    the default picture in the model folder takes the next free name instead of replacing the last one."""
    svg = tmp_path / "mine.svg"
    svg.write_text("<svg/>")
    status, error, _ = run(["attention", "--model", workdir / "model", "a b c", "--svg", svg], capsys)
    assert status == 2 and f"{svg} already exists" in error and svg.read_text() == "<svg/>"
    status, _, _ = run(["attention", "--model", workdir / "model", "a b c", "--svg", svg, "--overwrite"], capsys)
    assert status == 0 and svg.read_text() != "<svg/>"
    model = tmp_path / "model"
    model.mkdir()
    for path in (workdir / "model").iterdir():
        (model / path.name).write_bytes(path.read_bytes())
    first, second = model / "attention.svg", model / "attention.2.svg"
    assert run(["attention", "--model", model, "a b c"], capsys)[0] == 0 and first.is_file()
    drawn = first.read_text()
    status, _, out = run(["attention", "--model", model, "d e f"], capsys)
    assert status == 0 and f"wrote {second}" in out and first.read_text() == drawn


@pytest.mark.parametrize("command", [
    ["data", "--corpus", "{workdir}/two_docs.txt", "--out", "{workdir}/notes.txt/data"],
    ["pretrain", "--preset", "tiny", "--corpus", "{workdir}/two_docs.txt", "--out", "{workdir}/notes.txt/run"],
    ["finetune", "--task", "glue-tsv", "--model", "{workdir}/model", "--out", "{workdir}/notes.txt/o",
     "--train", "{workdir}/good.tsv", "--dev", "{workdir}/good.tsv"],
])
def test_an_out_folder_under_a_file_is_one_clear_line(workdir, capsys, command):
    """`--out notes.txt/run` gave a bare `[Errno 20] Not a directory`; now the line names the path and
    says that a part of it is a file."""
    status, error, _ = run([part.format(workdir=workdir) for part in command], capsys)
    assert status == 2 and "Not a directory" in error and "a part of that path is a file" in error, error
    assert "[Errno" not in error


def test_data_leaves_no_empty_folder_after_an_error(workdir, tmp_path, capsys):
    """`data --corpus empty.txt --out NEW` stopped with an error and left NEW behind, empty."""
    status, error, _ = run(["data", "--corpus", workdir / "empty.txt", "--out", tmp_path / "new"], capsys)
    assert status == 2 and "is empty" in error
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    run(["data", "--corpus", workdir / "empty.txt", "--out", tmp_path / "mine"], capsys)
    assert (tmp_path / "mine").is_dir()  # a folder the user had is never removed
