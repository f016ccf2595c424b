"""Bytes that are not UTF-8, in a path or a text, through every command (minibert/surrogates.py, issue 53).

On Linux a path or an argument may hold any bytes; Python hands the byte 0xff over as the character U+DCFF
(PEP 383). The rule: a path stored in a record reads back as exactly the path given, so it reopens the same
folder; text shown to a person (the terminal, pages, SVG) shows the byte as `\\xff`, as git does; a
vocabulary token that is not text is refused in one line. The command-line cases run in-process through
`minibert.cli.main`, as tests/test_cli_bad_input.py runs its cases.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
from helpers import ROOT, assert_one_error_line, small_options, tokenizer_json

from minibert.cli import main
from minibert.cli.terminal import printable
from minibert.experiments import ladder, ladder_arms, ladder_tasks, ladder_tuning
from minibert.model import BertConfig, BertForPreTraining
from minibert.surrogates import record_json, shown
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

FF = os.fsdecode(b"\xff")  # the byte 0xff of a path or an argument, as Python hands it over: "\udcff"
SHOWN_FF = "\\xff"  # ...and as a person is shown it
WORDS = [*"abcdefghijklmno"]


def test_shown_writes_each_byte_that_is_not_utf8_as_git_does():
    """Each byte that is not UTF-8 as `\\xNN`; the UTF-8 around it (é, CJK) as it is; a surrogate no byte
    gave (U+D800) as Python's escape. What is shown is UTF-8."""
    text = os.fsdecode(b"run\xff\x80 caf\xc3\xa9 \xe5\xb0\x8f") + "\ud800"
    assert shown(text) == "run\\xff\\x80 café 小\\ud800"
    assert shown(text).encode("utf-8")


def test_echoed_text_counts_such_a_byte_as_it_is_shown():
    """The terminal's echo of a text (cli/terminal.py) writes the byte as `\\xff` itself, beside its escapes
    of control characters, so that the columns of a table (embed's) are measured on what is printed."""
    assert printable(f"a{FF}\x1bb") == "a\\xff\\x1bb"


def test_a_record_reads_back_exactly_what_was_written():
    """record_json keeps non-ASCII text readable and writes each lone surrogate as a JSON escape, so that
    json.loads gives back the same strings: a stored path is the same path."""
    data = {"out": os.fsdecode(b"runs/\xff\xfe"), "text": "小明 café", "odd": "\ud800x", FF: [FF]}
    text = record_json(data, indent=1)
    assert json.loads(text.encode("utf-8")) == data
    assert "小明 café" in text and "\\udcff" in text


def test_the_terminal_shows_such_bytes_escaped(tmp_path):
    """In a terminal whose encoding refuses what is not UTF-8 (Python's stdout under an en_US.UTF-8 locale),
    printing a path that holds 0xff failed; now the byte is shown as `\\xff`, on stdout and in an error line."""
    (tmp_path / f"docs{FF}.txt").write_text("a b c.\nd e f.\n\ng h i.\nj k l.\n")
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8:strict",
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for corpus, stream, expected in [(f"missing{FF}.txt", "stderr", f"error: missing{SHOWN_FF}.txt: No such file"),
                                     (f"docs{FF}.txt", "stdout", f"tokens to v{SHOWN_FF}.txt")]:
        result = subprocess.run([sys.executable, "-m", "minibert", "vocab", "--corpus", corpus, "--out",
                                 f"v{FF}.txt", "--size", "40"],
                                cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in result.stderr and expected in getattr(result, stream), result.stderr
    assert (tmp_path / f"v{FF}.txt").read_text(encoding="utf-8").startswith("[PAD]\n")


# ----- every command that takes a path or a text, given one that holds the byte 0xff -----

@dataclass
class Case:
    """A command given a path or a text holding 0xff (paths relative to the work folder), and what it must do.

    outputs: what it may write; stored: (record file, a path given that the record must hold so that it
    reopens the same file or folder); shows: ("stdout" or a file, what a person must read there);
    error: the error line's fragment when it must refuse; then: a second command, and what it must print,
    that succeeds only by reading back what the first stored."""
    arguments: list
    outputs: list = field(default_factory=list)
    stored: list = field(default_factory=list)
    shows: list = field(default_factory=list)
    error: str = None
    then: list = None


SMALL_RUN = "<the small corpus's run options>"  # stands for helpers.small_options(corpus, ...)
CORPUS = Path(f"corpus{FF}", "corpus.txt")  # a copy of the small corpus, with its vocabulary and data
LADDER = ["experiment", "ladder", "--quick", "--seeds", "1", "--rung", f"15min=model{FF}",
          "--rung", f"minilm=model{FF}", "--out", f"E{FF}"]


def finetune(out, model="model", train="good.tsv", dev="good.tsv"):
    return ["finetune", "--task", "glue-tsv", "--model", model, "--out", out, "--train", train, "--dev", dev,
            "--epochs", "1", "--batch-size", "2"]


def in_page(text):
    """`text` as the page's JSON data spells it (a backslash doubled)."""
    return text.replace("\\", "\\\\")


CASES = {
    "pretrain --out --corpus": Case(
        ["pretrain", SMALL_RUN, "--out", f"run{FF}"], outputs=[f"run{FF}", f"corpus{FF}"],
        stored=[(f"run{FF}/log.jsonl", str(CORPUS))], shows=[(f"run{FF}/report.html", in_page(f"run{SHOWN_FF}"))],
        then=(["pretrain", "--resume", "--out", f"run{FF}"], "held-out MLM accuracy")),
    "finetune --out": Case(finetune(f"ft{FF}"), outputs=[f"ft{FF}"], shows=[("stdout", f"ft{SHOWN_FF}")],
                           then=(["predict", "--model", f"ft{FF}", "a b"], "a b")),
    "finetune --train": Case(finetune("ft-train", train=f"ok{FF}.tsv"), outputs=["ft-train"],
                             stored=[("ft-train/finetune.json", f"ok{FF}.tsv")]),
    "finetune --dev": Case(finetune("ft-dev", dev=f"ok{FF}.tsv"), outputs=["ft-dev"],
                           stored=[("ft-dev/finetune.json", f"ok{FF}.tsv")]),
    "finetune --model": Case(finetune("ft-model", model=f"model{FF}"), outputs=["ft-model"],
                             stored=[("ft-model/finetune.json", f"model{FF}")]),
    "attention: text": Case(["attention", "--model", "model", "--svg", "a.svg", f"bad {FF} word"],
                            outputs=["a.svg"]),
    "attention --html and text": Case(
        ["attention", "--model", "model", "--html", f"page{FF}.html", f"bad {FF} [MASK]"],
        outputs=[f"page{FF}.html"], shows=[(f"page{FF}.html", in_page(f"bad {SHOWN_FF}")),
                                           ("stdout", f"wrote page{SHOWN_FF}.html")]),
    "attention --model": Case(["attention", "--model", f"model{FF}", "--html", "m.html", "a b [MASK]"],
                              outputs=["m.html"], shows=[("m.html", in_page(f"model{SHOWN_FF}"))]),
    "attention: a tokenizer.json token": Case(
        ["attention", "--model", "surrogate_token", "--html", "t.html", "a [MASK]"], outputs=["t.html"],
        error="tokenizer.json: token 19 '\\udc80' holds a lone surrogate"),
    "fill-mask: text": Case(["fill-mask", "--model", "model", f"a {FF} [MASK]"],
                            shows=[("stdout", f"a {SHOWN_FF} [MASK]")]),
    "fill-mask --model": Case(["fill-mask", "--model", f"model{FF}", "a [MASK]"]),
    "embed: text": Case(["embed", "--model", "model", f"a {FF}", "b c"], shows=[("stdout", f"a {SHOWN_FF}")]),
    "embed --model": Case(["embed", "--model", f"model{FF}", "a b", "b c"]),
    "predict --model and text": Case(["predict", "--model", f"tuned{FF}", f"a {FF} b"],
                                     shows=[("stdout", f"a {SHOWN_FF} b")]),
    "predict --file": Case(["predict", "--model", "tuned", "--file", f"ok{FF}.tsv"]),
    "vocab --corpus --out": Case(["vocab", "--corpus", f"docs{FF}.txt", "--out", f"v{FF}.txt", "--size", "40"],
                                 outputs=[f"v{FF}.txt"], shows=[("stdout", f"v{SHOWN_FF}.txt")]),
    "data --corpus --out": Case(["data", "--corpus", f"docs{FF}.txt", "--out", f"d{FF}", "--max-seq-length", "16"],
                                outputs=[f"d{FF}"], stored=[(f"d{FF}/versions.json", f"docs{FF}.txt")]),
    # run twice: the second run reads the first's records back, and takes them as its own (skipping every
    # run) only if each stored rung folder is the one given
    "experiment --rung --out": Case(LADDER, outputs=[f"E{FF}"], stored=[(f"E{FF}/results.json", f"model{FF}")],
                                    shows=[("stdout", f"E{SHOWN_FF}")],
                                    then=(LADDER, f"runs already in E{SHOWN_FF}")),
}


def run_command(arguments, capsys):
    with pytest.raises(SystemExit) as caught:
        main(arguments)
    captured = capsys.readouterr()
    return caught.value.code, captured.out, captured.err


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, small_corpus):
    """Inputs under plain names and under names holding 0xff: a tiny model folder with the pretraining heads,
    corpora, TSV files, the small pretraining corpus; a model fine-tuned on the TSV; a model whose
    tokenizer.json holds the token "\\udc80"."""
    folder = tmp_path_factory.mktemp("bytes")
    (folder / f"docs{FF}.txt").write_text("".join(f"{a} {b} {c} .\n{b} {c} {a} .\n\n" for a, b, c in
                                                  zip(WORDS, WORDS[1:], WORDS[2:], strict=False)))
    for name in ("good.tsv", f"ok{FF}.tsv"):
        (folder / name).write_text("sentence\tlabel\na b\tpos\nc d\tneg\ne f\tpos\n")
    shutil.copytree(small_corpus.parent, folder / CORPUS.parent)
    config = BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(SPECIAL_TOKENS) + len(WORDS))
    BertForPreTraining(config).save_pretrained(folder / "model")
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *WORDS]).save_pretrained(folder / "model")
    shutil.copytree(folder / "model", folder / f"model{FF}")
    shutil.copytree(folder / "model", folder / "surrogate_token")
    (folder / "surrogate_token" / "vocab.txt").unlink()
    tokens = [*SPECIAL_TOKENS, *WORDS[:-1], "\udc80"]  # json.dumps writes it as the escape "\udc80"
    (folder / "surrogate_token" / "tokenizer.json").write_text(json.dumps(tokenizer_json(tokens)))
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit) as caught:
        patch.chdir(folder)
        main(finetune("tuned"))
    assert caught.value.code == 0
    shutil.copytree(folder / "tuned", folder / f"tuned{FF}")
    return folder


def measured_by_a_stub(arm, seed, settings, shared):
    """The ladder's runs without the training (minutes each): what is tested is how their records are kept.
    The metrics are the protocol's own (validation chose, test reports), every other test example right."""
    rows = [("a", "yes"), ("b", "no")]
    _, task, _, size = ladder_arms.parse_arm(arm)
    tested = len(ladder_tasks.read_rows(shared["out_dir"] / "tasks" / task / "test.tsv"))
    return {**ladder_tuning.outcome(0.5, rows, [index % 2 == 0 for index in range(tested)],
                                    chosen={"learning_rate": 1e-4}), "per_class": int(size)}


def strings_in(value):
    """Every string of a record, and each word of the command lines it keeps (a shell line names a path)."""
    if isinstance(value, dict):
        return [text for key, item in value.items()
                for text in [key, *strings_in(item), *(shlex.split(item) if key == "command" else [])]]
    if isinstance(value, list):
        return [text for item in value for text in strings_in(item)]
    return [value] if isinstance(value, str) else []


def records_in(path):
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else [json.loads(text)]


def assert_whole(path):
    """Every file under `path` is whole: UTF-8 text that parses as what its name says; no temporary file."""
    for file in [path] if path.is_file() else [file for file in path.rglob("*") if file.is_file()]:
        assert not file.name.endswith(".tmp"), f"{file} was left half-written"
        if file.suffix in (".json", ".jsonl"):
            records_in(file)
        elif file.suffix == ".svg":
            ElementTree.fromstring(file.read_bytes())
        elif file.suffix in (".html", ".txt", ".tsv"):
            file.read_text(encoding="utf-8")


def snapshot(folder):
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("case", CASES)
def test_bytes_that_are_not_utf8_are_kept_shown_or_refused(workdir, monkeypatch, capsys, case):
    """Status 0, or 2 and one error line, never a traceback; nothing written but the command's outputs, each
    whole; a path stored in a record is exactly the path given (it reopens the same file or folder); what a
    person reads shows the byte as `\\xff`; a command that reads the records back succeeds."""
    arguments, outputs, stored, shows, error, then = vars(CASES[case]).values()
    arguments = [part for argument in arguments for part in (
        small_options(CORPUS, steps=2, eval_every=2) if argument == SMALL_RUN else [argument])]
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(ladder, "EXPERIMENT", replace(ladder.EXPERIMENT, run=measured_by_a_stub))
    before = snapshot(workdir)
    status, out, err = run_command(arguments, capsys)
    assert "Traceback" not in err
    if error is not None:
        assert_one_error_line(status, err, error)
        assert not any(Path(output).exists() for output in outputs)
        assert snapshot(workdir) == before
        return
    assert status == 0, err
    changed = {path for path, data in snapshot(workdir).items() if before.get(path) != data}
    assert all(any(path.is_relative_to(workdir / output) for output in outputs) for path in changed), changed
    for output in outputs:
        assert_whole(Path(output))
    for record_file, given in stored:  # as given, or made absolute: a string that opens the same file
        kept = [text for record in records_in(Path(record_file)) for text in strings_in(record)
                if FF in text and os.path.exists(text) and os.path.samefile(text, given)]
        assert kept, f"{record_file} does not hold {given!r}"
    for where, fragment in shows:
        assert fragment in (out if where == "stdout" else Path(where).read_text(encoding="utf-8")), where
    if then is not None:
        status, out, err = run_command(then[0], capsys)
        assert status == 0 and then[1] in out + err, err


def test_an_exercise_workspace_may_be_named_with_such_a_byte(tmp_path, monkeypatch, capsys):
    """`python -m minibert.exercises start 01 --dir 'ws\\xff'` stopped at README.md with a UnicodeEncodeError,
    leaving the workspace half-written; now the README (and the terminal) show the folder as `ws\\xff`."""
    from minibert.exercises.__main__ import main as exercises_main

    monkeypatch.chdir(tmp_path)
    assert exercises_main(["start", "01", "--dir", f"ws{FF}"]) == 0
    readme = (tmp_path / f"ws{FF}" / "README.md").read_text(encoding="utf-8")
    assert f"--dir ws{SHOWN_FF}" in readme and f"--dir ws{SHOWN_FF}" in capsys.readouterr().out
