"""Commands write only under --out and the data folder, never into the folder they are started from."""

import os
import subprocess
import sys
from pathlib import Path

from minibert.data import location
from minibert.data.location import DATA_ENV, data_folder
from minibert.model import BertConfig, BertModel
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

ROOT = Path(__file__).resolve().parents[1]


def test_the_data_folder_is_the_checkouts_whatever_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert data_folder() == ROOT / "data"


def test_minibert_data_names_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "store"))
    assert data_folder() == tmp_path / "store"


def test_an_installed_minibert_keeps_its_data_in_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setattr(location, "CHECKOUT", tmp_path / "site-packages")  # no pyproject.toml beside it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert data_folder() == tmp_path / "cache" / "minibert"


def test_finetune_started_elsewhere_leaves_the_current_folder_alone(tmp_path):
    """The task's files are written to the data folder (here MINIBERT_DATA, empty at first), the model to
    --out; the folder the command starts in stays empty."""
    model = tmp_path / "model"
    BertModel(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=20)).save_pretrained(model)
    BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *"abcdefghijklmno"]).save_pretrained(model)
    started_in, store, out = tmp_path / "elsewhere", tmp_path / "store", tmp_path / "out"
    started_in.mkdir()
    environment = {**os.environ, DATA_ENV: str(store),
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "minibert", "finetune", "--task", "sentiment", "--model",
                           str(model), "--out", str(out), "--epochs", "1", "--batch-size", "128",
                           "--max-seq-length", "8"], cwd=started_in, env=environment, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list(started_in.iterdir()) == []
    assert (store / "synthetic" / "sentiment_train.tsv").is_file()
    assert (out / "finetune.json").is_file()
