"""The command line on bad input: `python -m minibert ...`.

Every mistake exits with status 2 and one readable line, `error: ...`, naming the bad value (progress lines
may come before it; no traceback); `--debug` shows the full traceback instead. Every case runs in-process
through `minibert.cli.main`; one case per command also runs as a student runs it, in a subprocess (those
run in parallel, since each pays the start-up of Python, NumPy and Numba).
"""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import assert_one_error_line

from minibert.cli import main
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

ROOT = Path(__file__).resolve().parent.parent

# name -> (arguments, a fragment the error line must contain). Paths are relative to the work folder.
CASES = {
    "vocab: missing corpus": (["vocab", "--corpus", "missing.txt", "--out", "v.txt"], "missing.txt"),
    "vocab: not UTF-8": (["vocab", "--corpus", "latin1.txt", "--out", "v.txt"], "not UTF-8"),
    "vocab: size below the alphabet": (["vocab", "--corpus", "two_docs.txt", "--out", "v.txt", "--size", "3"],
                                       "vocab_size=3"),
    "vocab: output is a folder": (["vocab", "--corpus", "two_docs.txt", "--out", "."], ". is a folder"),
    "data: no such corpus": (["data", "--corpus", "missing.txt", "--out", "d"], "'missing.txt'"),
    "data: empty corpus": (["data", "--corpus", "empty.txt", "--out", "d"], "is empty"),
    "data: one document": (["data", "--corpus", "one_doc.txt", "--out", "d"], "no document breaks"),
    "data: binary corpus": (["data", "--corpus", "binary.bin", "--out", "d"], "not UTF-8"),
    "data: max-seq-length 2": (["data", "--corpus", "two_docs.txt", "--out", "d", "--max-seq-length", "2"],
                               "max_seq_length=2"),
    "data: masked-lm-prob 2": (["data", "--corpus", "two_docs.txt", "--out", "d", "--masked-lm-prob", "2"],
                               "argument --masked-lm-prob: '2'"),
    "finetune: no model folder": (["finetune", "--task", "glue-tsv", "--model", "missing", "--out", "o",
                                   "--train", "good.tsv", "--dev", "good.tsv"], "model folder missing does not exist"),
    "finetune: malformed TSV": (["finetune", "--task", "glue-tsv", "--model", "model", "--out", "o",
                                 "--train", "bad.tsv", "--dev", "good.tsv"], "bad.tsv:2: 1 tab-separated"),
    "finetune: TSV given as SQuAD": (["finetune", "--task", "squad", "--model", "model", "--out", "o",
                                      "--train", "good.tsv", "--dev", "good.tsv"], "good.tsv:1:1: not valid"),
    "finetune: zero epochs": (["finetune", "--task", "glue-tsv", "--model", "model", "--out", "o", "--train",
                               "good.tsv", "--dev", "good.tsv", "--epochs", "0"],
                              "argument --epochs: 0 is out of range"),
    "predict: not a fine-tuned folder": (["predict", "--model", "model", "hello"], "no finetune.json"),
    "pretrain: resume without a checkpoint": (["pretrain", "--preset", "tiny", "--out", "run", "--resume"],
                                              "no checkpoint to resume in run"),
    "pretrain: batch size 0": (["pretrain", "--preset", "tiny", "--out", "run", "--batch-size", "0"],
                               "argument --batch-size: 0"),
    "pretrain: NaN learning rate": (["pretrain", "--preset", "tiny", "--out", "run", "--lr", "nan"],
                                    "argument --lr: 'nan'"),
    "pretrain: too long for the model": (["pretrain", "--preset", "tiny", "--out", "run", "--max-seq-length",
                                          "4096"], "max_position_embeddings=128"),
    "pretrain: unknown preset": (["pretrain", "--preset", "huge", "--out", "run"], "'huge'"),
    "pretrain: no such corpus": (["pretrain", "--preset", "tiny", "--out", "run", "--corpus", "missing.txt"],
                                 "'missing.txt'"),
    "fill-mask: no model folder": (["fill-mask", "--model", "missing", "the [MASK] sat"], "missing"),
    "fill-mask: no [MASK]": (["fill-mask", "--model", "model", "the cat sat"], "no [MASK] in 'the cat sat'"),
    "fill-mask: [mask] in lower case": (["fill-mask", "--model", "model", "the [mask] sat"],
                                        "the marker is matched in capitals"),
    "fill-mask: too long": (["fill-mask", "--model", "model", "a " * 200 + "[MASK]"], "203 tokens long"),
    "attention: too long": (["attention", "--model", "model", "a " * 300], "302 tokens long"),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder of bad and good inputs: corpora, TSV files, and a tiny HuggingFace model folder (with the
pretraining heads, so fill-mask can read it)."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "latin1.txt").write_bytes("caf\xe9 au lait.\n\nun deux.\n".encode("latin-1"))
    (folder / "two_docs.txt").write_text("a b c.\nd e f.\n\ng h i.\nj k l.\n")
    (folder / "one_doc.txt").write_text("one sentence.\nanother one.\n")
    (folder / "empty.txt").write_text("")
    (folder / "binary.bin").write_bytes(bytes(range(256)) * 8)
    (folder / "good.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tneg\n")
    (folder / "bad.tsv").write_text("sentence\tlabel\nno tab here\n")
    BertForPreTraining(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=20)).save_pretrained(
        folder / "model")
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *"abcdefghijklmno"]).save_pretrained(folder / "model")
    return folder


def run_cli(arguments, cwd):
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "minibert", *arguments], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


SUBPROCESS_CASES = ["vocab: missing corpus", "data: empty corpus", "finetune: malformed TSV",
                    "predict: not a fine-tuned folder", "pretrain: resume without a checkpoint"]


@pytest.fixture(scope="module")
def subprocess_results(workdir):
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = pool.map(lambda case: run_cli(CASES[case][0], workdir), SUBPROCESS_CASES)
        return dict(zip(SUBPROCESS_CASES, runs, strict=True))


@pytest.mark.parametrize("case", CASES)
def test_a_mistake_is_one_readable_line(workdir, monkeypatch, capsys, case):
    """Exit status 2; the last line of stderr is `error: ...` naming the bad value; no traceback."""
    monkeypatch.chdir(workdir)
    with pytest.raises(SystemExit) as caught:
        main(CASES[case][0])
    assert_one_error_line(caught.value.code, capsys.readouterr().err, CASES[case][1])


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_a_mistake_in_a_real_process(subprocess_results, case):
    """The same, from `python -m minibert` in a process of its own: exit status 2, one error line."""
    result = subprocess_results[case]
    assert_one_error_line(result.returncode, result.stderr, CASES[case][1])


def test_debug_shows_the_traceback(workdir, monkeypatch):
    """The same mistake with --debug (before or after the command name) gives the full traceback, ending
    in the exception with the same message."""
    result = run_cli(["--debug", "vocab", "--corpus", "missing.txt", "--out", "v.txt"], workdir)
    assert result.returncode != 0
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("FileNotFoundError")
    monkeypatch.chdir(workdir)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        main(["vocab", "--debug", "--corpus", "missing.txt", "--out", "v.txt"])


def test_usage_mistakes_exit_2_with_the_usage(workdir, capsys):
    """An unknown command or a malformed option is argparse's business: status 2, usage, and an error line
    naming it; no command at all prints the help."""
    result = run_cli(["pretrian"], workdir)
    assert result.returncode == 2 and "invalid choice: 'pretrian'" in result.stderr
    for arguments, output in ((["vocab", "--corpus", "x.txt", "--out", "v.txt", "--size", "many"],
                               "argument --size: 'many' is not a whole number"), ([], "vocab")):
        with pytest.raises(SystemExit) as caught:
            main(arguments)
        assert caught.value.code == 2 and output in "".join(capsys.readouterr())
