"""Memory is checked against the limit that really applies, and a config against its weights before the
model is built (minibert/model/memory.py, minibert/io/checkpoint.py `check_weights_fit_config`).

A from_pretrained folder whose config.json says `vocab_size: 20000000`, run under `ulimit -v 4000000`,
ended in a NumPy `_ArrayMemoryError ... float64` traceback in `normal_init`: the check compared float32
weights with the machine's free memory, ignoring the process's limit and initialisation's float64 draws, and
the model was built before its config was compared with the weights file.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minibert.cli import main
from minibert.errors import CheckpointError
from minibert.model import BertConfig, BertForPreTraining
from minibert.model.memory import OutOfMemoryError, check_model_memory, count_parameters
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

ROOT = Path(__file__).resolve().parents[1]
MB = 10**6

# In a child process: cap the address space at what is in use now plus HEADROOM_MB, then build a model whose
# float32 weights fit in that room but whose float64 initial draws do not.
UNDER_A_LIMIT = """
import resource, sys
from minibert.model import BertConfig, BertForPreTraining
from minibert.model.memory import available_memory

headroom, vocab_size = int(sys.argv[1]) * 10**6, int(sys.argv[2])
with open("/proc/self/status") as status:
    used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (used + headroom, resource.RLIM_INFINITY))
print("available", available_memory(), "limit", used + headroom, "used", used, flush=True)
try:
    BertForPreTraining(BertConfig.preset("tiny", vocab_size=vocab_size))
except MemoryError as error:
    print(f"{type(error).__name__}: {error}")
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the address space from /proc (Linux)")
def test_the_address_space_limit_is_the_limit():
    """Under RLIMIT_AS (`ulimit -v`), what is left of it is what is available, and a model whose float64
    initial draws would not fit is refused by minibert's own check, not by NumPy's allocation failing."""
    headroom = 300
    vocab_size = 120 * MB // (4 * 64)  # about 120 MB of float32 embeddings, 240 MB of float64 draws
    child = subprocess.run([sys.executable, "-c", UNDER_A_LIMIT, str(headroom), str(vocab_size)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = child.stdout.splitlines()
    _, available, _, limit, _, used = lines[0].split()
    assert int(available) <= int(limit) - int(used) + MB, child.stdout
    assert lines[1].startswith("OutOfMemoryError: a model of"), child.stdout + child.stderr
    assert "float64 draws" in lines[1] and "ulimit -v" in lines[1]


def test_initialisation_float64_draws_are_counted():
    """The float32 weights alone fit; with the float64 draw of the largest matrix they do not."""
    config = BertConfig.preset("tiny", vocab_size=200_000)
    weights = 4 * count_parameters(config)
    draws = 8 * config.vocab_size * config.hidden_size
    assert check_model_memory(config, available=weights + draws) == weights + draws
    with pytest.raises(OutOfMemoryError, match="float64 draws"):
        check_model_memory(config, available=weights + draws // 2)


@pytest.fixture
def bloated_folder(tmp_path):
    """A from_pretrained folder whose config.json claims 20 million vocabulary rows next to weights of 20."""
    folder = tmp_path / "model"
    vocabulary = [*SPECIAL_TOKENS, *"abcdefghijklmno"]
    BertForPreTraining(BertConfig.preset("tiny", num_hidden_layers=1, vocab_size=len(vocabulary))) \
        .save_pretrained(folder)
    BertTokenizer.from_vocab_list(vocabulary).save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = 20_000_000
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_config_is_compared_with_its_weights_before_building(bloated_folder, monkeypatch, capsys):
    """The 20-million-row config is refused from the weights' shapes, and no model is built (building one
    would call the memory check, which here fails the test)."""
    def no_building(config, available=None):
        raise AssertionError(f"a model of vocab_size={config.vocab_size} was built before the check")
    monkeypatch.setattr("minibert.model.savable.check_model_memory", no_building)
    with pytest.raises(CheckpointError, match=r"vocab_size=20000000 .*should have shape \(20000000, 64\), but "
                                              r"the stored weight has \(20, 64\)"):
        BertForPreTraining.from_pretrained(bloated_folder, verbose=False)
    with pytest.raises(SystemExit) as caught:
        main(["fill-mask", "--model", str(bloated_folder), "a [MASK] b"])
    error = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and len(error) == 1 and "different models" in error[0]


def test_normal_init_draws_the_same_numbers():
    """Scaling the draws in place (one float64 array instead of two) gives the numbers `draws * std` gave."""
    from minibert.nn.layers import normal_init

    expected = (np.random.default_rng(5).standard_normal((7, 3)) * 0.02).astype(np.float32)
    np.testing.assert_array_equal(normal_init(np.random.default_rng(5), (7, 3), 0.02), expected)
