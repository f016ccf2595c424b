"""`load`, `save`, `from_pretrained` and `save_pretrained` on wrong paths, corrupt and hostile files.

Every case raises minibert's own error naming the file; none runs code from the file: a booby-trapped
pickle that would create a marker file when unpickled is offered to every reader, and the marker never
appears. (The byte-level fuzzing of the two readers is in test_safetensors.py and test_npz.py.)
"""

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

from minibert.errors import CheckpointError, MinibertError
from minibert.io import load_arrays, read_safetensors, save_arrays, write_safetensors
from minibert.model import BertConfig, BertForPreTraining, BertModel


def small_config(**overrides):
    sizes = dict(num_hidden_layers=1, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                 vocab_size=40, max_position_embeddings=16)
    return BertConfig.preset("tiny", **{**sizes, **overrides})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A folder holding a model in both formats: model.npz (ours) and hf/ (HuggingFace's)."""
    folder = tmp_path_factory.mktemp("saved")
    model = BertForPreTraining(small_config())
    model.save(folder / "model.npz")
    model.save_pretrained(folder / "hf")
    return folder


class Trap:
    """Unpickling this object calls open(marker, "w"): proof that a reader executed the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def booby_trapped_files(folder, marker):
    """Files that run code when loaded with pickle: a bare pickle, a torch-style zip holding one, and an
    .npz whose array is an object array (NumPy pickles those)."""
    payload = pickle.dumps({"bert.pooler.dense.bias": Trap(marker)})
    bare = folder / "bare.bin"
    bare.write_bytes(payload)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", payload)
    torch_like = folder / "torch.bin"
    torch_like.write_bytes(buffer.getvalue())
    object_npz = folder / "objects.npz"
    with zipfile.ZipFile(object_npz, "w") as archive:
        meta = {"format": "minibert-model", "version": 1, "config": small_config().to_dict()}
        with archive.open("__meta__.npy", "w") as member:
            np.lib.format.write_array(member, np.frombuffer(json.dumps(meta).encode(), np.uint8))
        with archive.open("bert.pooler.dense.bias.npy", "w") as member:
            np.lib.format.write_array(member, np.array([Trap(marker)], dtype=object), allow_pickle=True)
    return [bare, torch_like, object_npz]


def test_no_reader_runs_code_from_a_file(tmp_path, saved):
    """Every reader refuses every booby-trapped file with a CheckpointError, under any name (the pickle as
    pytorch_model.bin, renamed to model.safetensors, as an .npz), and the trap never fires."""
    marker = tmp_path / "EXECUTED"
    pickle.loads(pickle.dumps(Trap(marker)))  # the trap works: unpickling it creates the marker
    assert marker.exists()
    marker.unlink()
    for path in booby_trapped_files(tmp_path, marker):
        for reader in (BertForPreTraining.load, load_arrays, read_safetensors):
            with pytest.raises(CheckpointError):
                reader(path)
        for name in ("pytorch_model.bin", "model.safetensors"):
            folder = tmp_path / f"{path.stem}-{name}"
            folder.mkdir()
            (folder / "config.json").write_bytes((saved / "hf" / "config.json").read_bytes())
            (folder / name).write_bytes(path.read_bytes())
            with pytest.raises(CheckpointError):
                BertForPreTraining.from_pretrained(folder, verbose=False)
    assert not marker.exists()


def test_pickles_are_named_as_pickles(tmp_path, saved):
    """A pickle under either HF name is refused with the reason and the conversion recipe."""
    bare = booby_trapped_files(tmp_path, tmp_path / "marker")[0]
    for name in ("pytorch_model.bin", "model.safetensors"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_bytes((saved / "hf" / "config.json").read_bytes())
        (folder / name).write_bytes(bare.read_bytes())
        with pytest.raises(CheckpointError, match="(?s)never loads pickles.*safe_serialization=True"):
            BertForPreTraining.from_pretrained(folder, verbose=False)


def test_object_arrays_in_a_model_file_are_refused(tmp_path):
    """An .npz model file whose weight is an object array is refused, naming the array and saying why."""
    path = booby_trapped_files(tmp_path, tmp_path / "marker")[2]
    with pytest.raises(CheckpointError, match="'bert.pooler.dense.bias' has dtype object.*pickle"):
        BertForPreTraining.load(path)


WRONG_PATHS = {
    "load: no such file": (lambda d: BertForPreTraining.load(d / "missing.npz"), "no such file"),
    "load: a folder": (lambda d: BertForPreTraining.load(d / "hf"), "IsADirectoryError"),
    "load: a safetensors file": (lambda d: BertForPreTraining.load(d / "hf" / "model.safetensors"),
                                 "cannot read it as a checkpoint"),
    "load: a text file": (lambda d: BertForPreTraining.load(d / "hf" / "config.json"), "not a zip file"),
    "from_pretrained: no such folder": (lambda d: BertForPreTraining.from_pretrained(d / "missing"),
                                        "is not a folder"),
    "from_pretrained: our .npz file": (lambda d: BertForPreTraining.from_pretrained(d / "model.npz"),
                                       "is not a folder"),
    "from_pretrained: the weights file": (
        lambda d: BertForPreTraining.from_pretrained(d / "hf" / "model.safetensors"), "is not a folder"),
    "from_pretrained: a folder without weights": (lambda d: BertForPreTraining.from_pretrained(d),
                                                  "no model.safetensors"),
    "save: missing folder": (lambda d: BertForPreTraining(small_config()).save(d / "no" / "m.npz"),
                             "check that the folder exists"),
    "save: onto a folder": (lambda d: BertForPreTraining(small_config()).save(d / "hf"), "Is a directory"),
    "save_pretrained: onto a file": (lambda d: BertForPreTraining(small_config()).save_pretrained(
        d / "model.npz"), "cannot create the folder"),
}


@pytest.mark.parametrize("case", WRONG_PATHS)
def test_wrong_paths_are_named(saved, case):
    """Pointing a loader or saver at the wrong thing raises a CheckpointError naming the path and what was
    expected there; a failed save leaves the existing files as they were."""
    before = {path: path.read_bytes() for path in saved.rglob("*") if path.is_file()}
    call, named = WRONG_PATHS[case]
    with pytest.raises(CheckpointError, match=named) as caught:
        call(saved)
    assert str(saved) in str(caught.value)
    assert {path: path.read_bytes() for path in saved.rglob("*") if path.is_file()} == before


def _folder_with_config(tmp_path, saved, text):
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes((saved / "hf" / "model.safetensors").read_bytes())
    (folder / "config.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


@pytest.mark.parametrize("text, named", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    (b'{"hidden_size": "\xe9"}', "cannot read .*config.json"),
    ('{"hidden_size": 16, "hidden_size": 32}', "'hidden_size' twice"),
    ('{"layer_norm_eps": NaN}', "NaN"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"model_type": "gpt2"}', "'gpt2'"),
], ids=["not JSON", "a list", "not UTF-8", "duplicate key", "NaN", "deep nesting", "another model"])
def test_corrupt_config_json_is_named(tmp_path, saved, text, named):
    """A damaged, duplicated, non-UTF-8, NaN-holding, deeply nested or foreign config.json is refused with
    a CheckpointError naming config.json and the problem."""
    folder = _folder_with_config(tmp_path, saved, text)
    with pytest.raises(CheckpointError, match=named):
        BertForPreTraining.from_pretrained(folder, verbose=False)


def test_a_config_claiming_huge_sizes_is_refused_before_allocating(tmp_path, saved, monkeypatch):
    """A config.json or checkpoint meta of a few bytes claiming 10^11 vocabulary rows is refused before the
    initialiser allocates anything (a MinibertError, not NumPy's MemoryError or the OOM killer)."""
    monkeypatch.setattr("minibert.model.memory.available_memory", lambda: 8 * 10**9)
    huge = {**small_config().to_dict(), "vocab_size": 10**11}
    folder = _folder_with_config(tmp_path, saved, json.dumps(huge))
    with pytest.raises(MinibertError, match="100000000000"):
        BertForPreTraining.from_pretrained(folder, verbose=False)
    arrays, _ = load_arrays(saved / "model.npz")
    save_arrays(tmp_path / "huge.npz", arrays, {"format": "minibert-model", "version": 1, "config": huge})
    with pytest.raises(MinibertError, match="100000000000"):
        BertModel.load(tmp_path / "huge.npz")


def test_a_checkpoint_of_a_different_model_names_each_mismatch(tmp_path, saved):
    """Weights from a config with other sizes: the mismatch is named before a model of the config is built
    (the config's vocab_size against the stored embedding's shape)."""
    arrays, _ = load_arrays(saved / "model.npz")
    other = small_config(vocab_size=41).to_dict()
    save_arrays(tmp_path / "other.npz", arrays, {"format": "minibert-model", "version": 1, "config": other})
    mismatch = (r"the config says vocab_size=41 and hidden_size=16, so bert.embeddings.word_embeddings.weight "
                r"should have shape \(41, 16\), but the stored weight has \(40, 16\)")
    with pytest.raises(CheckpointError, match=mismatch):
        BertForPreTraining.load(tmp_path / "other.npz")


def test_integer_weights_are_refused_not_cast(tmp_path, saved):
    """A weight stored as int32 (a quantized or damaged file) is refused by name, in both formats, rather
    than cast to float32 without a word; the files are left as they were."""
    arrays, meta = load_arrays(saved / "model.npz")
    name = "bert.encoder.layer.0.output.dense.weight"
    save_arrays(tmp_path / "int.npz", {**arrays, name: arrays[name].astype(np.int32)}, meta)
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_bytes((saved / "hf" / "config.json").read_bytes())
    tensors, metadata = read_safetensors(saved / "hf" / "model.safetensors")
    write_safetensors(folder / "model.safetensors", {**tensors, name: tensors[name].astype(np.int32)}, metadata)
    before = {path: path.read_bytes() for path in (tmp_path / "int.npz", *folder.iterdir())}
    refusal = f"the weight {name} is stored as int32, but BERT's weights are floating-point numbers"
    with pytest.raises(CheckpointError, match=f"int.npz: {refusal}"):
        BertForPreTraining.load(tmp_path / "int.npz")
    with pytest.raises(CheckpointError, match=f"model.safetensors: {refusal}"):
        BertForPreTraining.from_pretrained(folder, verbose=False)
    assert {path: path.read_bytes() for path in before} == before
