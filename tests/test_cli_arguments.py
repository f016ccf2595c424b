"""Every number on the command line is checked where argparse reads it (minibert/cli/arguments.py): a bad
one stops the command at once with one line naming the option, the value and what the number means."""

import pytest

from minibert.cli import main

# (arguments, the option named) for mistakes that once got through: a traceback, or silently wrong output.
CASES = {
    "data --seed -1 (was: ValueError traceback)": (["data", "--corpus", "x.txt", "--seed", "-1"], "--seed"),
    "finetune --seed -1 (was: ValueError traceback)": (
        ["finetune", "--task", "sentiment", "--model", "m", "--out", "o", "--seed", "-1"], "--seed"),
    "predict --top 0 (was: printed nothing, exit 0)": (["predict", "--model", "m", "--top", "0"], "--top"),
    "predict --top -1 (was: all answers but the last)": (["predict", "--model", "m", "--top", "-1"], "--top"),
    "finetune --doc-stride 0 (was: a hang)": (
        ["finetune", "--task", "squad", "--model", "m", "--out", "o", "--doc-stride", "0"], "--doc-stride"),
    "pretrain --lr inf": (["pretrain", "--lr", "inf"], "--lr"),
    "pretrain --minutes -5": (["pretrain", "--minutes", "-5"], "--minutes"),
    "pretrain --dropout 1": (["pretrain", "--dropout", "1"], "--dropout"),
    "pretrain --threads 0": (["pretrain", "--threads", "0"], "--threads"),
    "data --eval-fraction 0.5": (["data", "--corpus", "x.txt", "--eval-fraction", "0.5"], "--eval-fraction"),
    "data --dupe-factor 0": (["data", "--corpus", "x.txt", "--dupe-factor", "0"], "--dupe-factor"),
    "vocab --size 1e3": (["vocab", "--corpus", "x.txt", "--out", "v.txt", "--size", "1e3"], "--size"),
    "fill-mask --top-k 0": (["fill-mask", "--model", "m", "a [MASK]", "--top-k", "0"], "--top-k"),
    "attention --layer -1": (["attention", "--model", "m", "a b", "--layer", "-1"], "--layer"),
    "finetune --warmup nan": (["finetune", "--task", "sentiment", "--model", "m", "--out", "o", "--warmup",
                               "nan"], "--warmup"),
    "a seed of 5,000 digits": (["data", "--corpus", "x.txt", "--seed", "9" * 5000], "--seed"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_bad_number_is_one_line_naming_its_option(case, capsys, tmp_path, monkeypatch):
    """Status 2, a single stderr line `error: argument --option: ...`, before any file is read or written."""
    monkeypatch.chdir(tmp_path)
    arguments, option = CASES[case]
    with pytest.raises(SystemExit) as caught:
        main(arguments)
    error = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and len(error) == 1, error
    assert error[0].startswith(f"error: argument {option}: ") and "must be" in error[0], error
    assert not any(tmp_path.iterdir())
