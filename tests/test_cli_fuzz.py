"""A hostile pass over the command line: fuzzed arguments for every command and fuzzed input files, more than
10,000 cases in all, the same on every machine. None may end in a traceback, hang, or write outside the
folders the command was given (--out, --svg, --html, --data-dir).

Three kinds of case, all from one seeded generator (a failure names its seed and arguments, to replay it):
1. parsing: random options and values for every command of `python -m minibert` and of
   `python -m minibert.exercises`, parsed in-process. A bad value must end in SystemExit(2) and one line
   `error: ...` on stderr; nothing is written.
2. running: a smaller number of those commands run in full through `minibert.cli.main`, in a folder of
   bad inputs (empty, binary, Latin-1 files, a file where a folder belongs, a broken model folder, a tiny
   good model). Each must end with status 0, or status 2 and one `error: ...` line, without hanging,
   and change nothing outside the folders it was given.
3. reading: byte mutations of good TSV, SQuAD, CoNLL, vocab.txt and config.json files through their readers,
   which must return or raise minibert's own error.
"""

import contextlib
import io
import json
import os
import random
import signal
from pathlib import Path

import pytest

from minibert.cli import build_parser, main
from minibert.errors import MinibertError
from minibert.finetune.readers import read_conll, read_squad, read_tsv
from minibert.io.pretrained import read_config
from minibert.model import BertConfig, BertForPreTraining
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

SEED = 20261201
PARSE_CASES = 10_000
RUN_CASES = 150  # every one runs, whatever the machine's speed: what is checked never depends on the clock
READ_CASES = 3_000
# A hang guard, not a timing check: these tiny inputs run in well under a second each (the whole pass takes
# about 10 s on 2 idle cores), so a command still running after this long is stuck, on any machine.
SECONDS_PER_RUN = 300

NUMBERS = ["0", "-1", "1", "2", "3", "7", "64", "-3", "1e3", "0.5", "-0.0", "nan", "inf", "-inf", "1e309",
           "4294967296", str(2**63), "9" * 5000, "0x10", "1_000", "٣", "", " ", "many", "1,5", "--"]
PATHS = ["missing.txt", "empty.txt", "latin1.txt", "garbage.bin", "notes.txt", "notes.txt/under", "good.tsv",
         "squad.json", "tags.conll", "model", "broken_model", ".", "", "out", "out/deeper", "ünïcödé dir"]
WORDS = ["a [MASK] b", "[MASK]", "", "a" * 300, "\x00\ud800", "--", "-h", "e\u0301te\u0301", "小明[MASK]书"]
OUTPUTS = ("--out", "--svg", "--html", "--data-dir")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The folder of inputs every run case starts from."""
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "empty.txt").write_text("")
    (folder / "latin1.txt").write_bytes("caf\xe9.\n\nau lait.\n".encode("latin-1"))
    (folder / "garbage.bin").write_bytes(random.Random(SEED).randbytes(3000))
    (folder / "notes.txt").write_text("a file where a folder may be expected\n")
    (folder / "good.tsv").write_text("sentence\tlabel\na b\tpos\nc d\tneg\n")
    (folder / "squad.json").write_text(json.dumps({"data": [{"paragraphs": [{"context": "a b c d.", "qas": [
        {"id": "1", "question": "a?", "answers": [{"text": "c", "answer_start": 4}]}]}]}]}))
    (folder / "tags.conll").write_text("a B-PER\nb O\n\nc B-LOC\n")
    (folder / "broken_model").mkdir()
    (folder / "broken_model" / "config.json").write_text("{not json")
    (folder / "broken_model" / "vocab.txt").write_bytes(b"\xff\xfe")
    vocabulary = [*SPECIAL_TOKENS, *"abcdefghijklmno"]
    BertForPreTraining(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(vocabulary))) \
        .save_pretrained(folder / "model")
    BertTokenizer.from_vocab_list(vocabulary).save_pretrained(folder / "model")
    (folder / "ünïcödé dir").mkdir()
    return folder


def exercises_main():
    """`python -m minibert.exercises`'s main: it parses and runs, so its outcome is a status or SystemExit."""
    from minibert.exercises.__main__ import main
    return main


PLAUSIBLE = ["1", "2", "3", "8", "0.1", "0.5"]  # in run cases, most numbers pass, so the run gets further


def random_value(rng, action, run):
    if action.choices is not None and rng.random() < 0.7:
        return str(rng.choice(list(action.choices)))
    if action.type is not None and action.type is not str:
        return rng.choice(PLAUSIBLE if run and rng.random() < 0.8 else NUMBERS)
    if run and action.dest == "model":
        return rng.choice(["model", "broken_model", "missing", ".", "good.tsv"])
    return rng.choice(PATHS + WORDS + NUMBERS)


def random_arguments(rng, parser, run=False):
    """A random argument list for one sub-parser: its required options mostly, others now and then, values
    from the hostile pools, and sometimes a stray token. With run=True, options that would start real work
    (a built-in corpus, the synthetic tasks, a picture in the model folder) are pinned to the bad inputs."""
    arguments = []
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "debug"):
            continue
        wanted = 0.9 if action.required else 0.25
        if run and action.option_strings[0] in (*OUTPUTS, "--corpus", "--train", "--dev"):
            wanted = 1.0
        if rng.random() >= wanted:
            continue
        option = action.option_strings[0]
        if action.nargs == 0:
            arguments.append(option)
            continue
        value = random_value(rng, action, run)
        if run and option in ("--corpus", "--train", "--dev"):
            value = rng.choice(["missing.txt", "empty.txt", "latin1.txt", "garbage.bin", "notes.txt/under",
                                "good.tsv", "squad.json", "tags.conll"])
        if run and option in OUTPUTS:
            value = rng.choice(["out", "out/deeper", "notes.txt/under", "ünïcödé dir/out"])
        arguments += [option, value]
    for action in parser._actions:
        if not action.option_strings and action.dest != "help":
            count = 1 if action.nargs in (None, "+") else rng.randint(0, 2)
            arguments += [rng.choice(WORDS) for _ in range(count)]
    if rng.random() < 0.1 and not run:
        arguments.insert(rng.randint(0, len(arguments)), rng.choice(["--bogus", "-x", "--", "-h", "="]))
    return arguments


def call(function, arguments):
    """(exit status, stdout, stderr) of function(arguments), which ends in SystemExit or returns a status."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = function(arguments)
        except SystemExit as stop:
            status = stop.code
    return status or 0, out.getvalue(), err.getvalue()


def assert_clean_ending(status, stderr, case):
    assert status in (0, 2, 130), f"{case}: status {status}\n{stderr}"
    assert "Traceback" not in stderr, f"{case}:\n{stderr}"
    if status == 2:
        lines = stderr.strip().splitlines()
        assert lines and lines[-1].startswith("error: "), f"{case}:\n{stderr}"


def snapshot(folder):
    """Every path under `folder`: a file with its size and modification time, a folder as present (its
    time changes whenever an entry inside it comes or goes, as the output folder does)."""
    found = {}
    for root, directories, files in os.walk(folder):
        for name in directories:
            found[Path(root, name)] = None
        for name in files:
            stat = Path(root, name).stat()
            found[Path(root, name)] = (stat.st_size, stat.st_mtime_ns)
    return found


class Hung(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds, case):
    def stop(signum, frame):
        raise Hung(f"{case}: still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the bad corpora warn before they are refused
def test_fuzzed_command_lines_end_cleanly_and_write_only_where_told(inputs, monkeypatch):
    """PARSE_CASES parsed, then RUN_CASES run: every one ends in status 0 or 2 with one `error:` line, none
    hangs (SECONDS_PER_RUN each), and nothing changes outside --out/--svg/--html/--data-dir."""
    rng = random.Random(SEED)
    parser = build_parser()
    parsers = dict(parser._subparsers._group_actions[0].choices)
    monkeypatch.chdir(inputs)
    before = snapshot(inputs)
    exercises = exercises_main()
    for number in range(PARSE_CASES):
        if number % 10 == 9:  # the exercises command line, with the same hostility
            arguments = [rng.choice(["list", "start", "check", "reset", "nope"]), rng.choice(WORDS + NUMBERS),
                         *rng.choice([[], ["--dir", "notes.txt/under"], ["--dir"]])]
            if arguments[0] != "list":
                arguments[1] = rng.choice(["00", "13", "99", "-1", "1e3", "", "x"])  # no lesson with exercises
            status, _, stderr = call(exercises, arguments)
            assert_clean_ending(status, stderr, f"exercises case {number}: {arguments}")
            continue
        name = rng.choice(list(parsers))
        arguments = [name, *random_arguments(rng, parsers[name])]
        status, _, stderr = call(lambda argv: parser.parse_args(argv) and 0, arguments)
        assert_clean_ending(status, stderr, f"parse case {number} (seed {SEED}): {arguments}")
    assert snapshot(inputs) == before, "parsing wrote files"

    for number in range(RUN_CASES):
        name = rng.choice(list(parsers))
        arguments = [name, *random_arguments(rng, parsers[name], run=True)]
        case = f"run case {number} (seed {SEED}): {arguments}"
        allowed = [(inputs / arguments[i + 1]).resolve() for i, part in enumerate(arguments[:-1])
                   if part in OUTPUTS]
        before = snapshot(inputs)
        with time_limit(SECONDS_PER_RUN, case):
            status, _, stderr = call(main, arguments)
        assert_clean_ending(status, stderr, case)
        after = snapshot(inputs)
        changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
        outside = [path for path in changed
                   if not any(path.resolve() == out or out in path.resolve().parents for out in allowed)]
        assert not outside, f"{case} wrote outside its output folders: {sorted(map(str, outside))}"


GOOD_FILES = {
    "tsv": ("sentence\tlabel\nthe cat sat\tpos\na dog ran\tneg\n", read_tsv),
    "squad": (json.dumps({"data": [{"paragraphs": [{"context": "Tom met Mary.", "qas": [
        {"id": "1", "question": "who?", "answers": [{"text": "Mary", "answer_start": 8}]}]}]}]}), read_squad),
    "conll": ("-DOCSTART- O\n\nLeo B-PER\nruns O\n\nParis B-LOC\n", read_conll),
    "vocab": ("\n".join([*SPECIAL_TOKENS, "the", "##s", "cat"]) + "\n", BertTokenizer),
    "config": (json.dumps(BertConfig.preset("tiny").to_dict()), read_config),
}


HOSTILE_BYTES = [b"\x00", b"\xff", b"\t", b"\n", b"\r\n", "\u2028".encode(), b'"', b"{", b"]", b"-1", b"1e999",
                 "é".encode(), "\ud800".encode("utf-8", "surrogatepass")]


def mutate(rng, data):
    """A few random byte edits: flips, insertions of hostile bytes, deletions, a cut."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind, where = rng.random(), rng.randint(0, max(len(data) - 1, 0))
        if kind < 0.3 and data:
            data[where] ^= 1 << rng.randint(0, 7)
        elif kind < 0.6:
            data[where:where] = rng.choice(HOSTILE_BYTES)
        elif kind < 0.85 and data:
            del data[where:where + rng.randint(1, 8)]
        else:
            data = data[:where]
    return bytes(data)


def test_fuzzed_files_are_read_or_refused(tmp_path):
    """READ_CASES mutated files through the TSV,
    SQuAD, CoNLL, vocab.txt and config.json readers: each is read or refused with minibert's own error
    (which names the file), never another exception."""
    rng = random.Random(SEED + 1)
    outcomes = {"read": 0, "refused": 0}
    for number in range(READ_CASES):
        kind = rng.choice(list(GOOD_FILES))
        text, reader = GOOD_FILES[kind]
        path = tmp_path / f"case-{number}.{kind}"
        path.write_bytes(mutate(rng, text.encode("utf-8")))
        try:
            reader(path)
            outcomes["read"] += 1
        except MinibertError:
            outcomes["refused"] += 1
        except Exception as error:  # noqa: BLE001 (the point: any other exception is the bug)
            raise AssertionError(f"read case {number} (seed {SEED + 1}), {kind} file {path.read_bytes()!r}: "
                                 f"{type(error).__name__}: {error}") from error
        path.unlink()
    # the mutations reach both outcomes: a pass that only ever refused (or only read) would test little
    assert outcomes["read"] > 0 and outcomes["refused"] > 0, outcomes
