"""Tests for minibert.io.hf_names: old names, buffers, tied copies, and refusing pickle checkpoints."""

import numpy as np
import pytest

from minibert.errors import CheckpointError
from minibert.io import (
    find_weights_file,
    modern_name,
    normalize_hf_state,
    read_safetensors,
    refuse_pickle_checkpoint,
    write_safetensors,
)


def test_old_layernorm_names_become_weight_and_bias():
    """`LayerNorm.gamma`/`beta` (Google's TF names, kept by early PyTorch ports) map to `weight`/`bias`;
    other names, including a `gamma` outside a LayerNorm, are left alone."""
    assert modern_name("bert.embeddings.LayerNorm.gamma") == "bert.embeddings.LayerNorm.weight"
    assert modern_name("encoder.layer.3.output.LayerNorm.beta") == "encoder.layer.3.output.LayerNorm.bias"
    assert modern_name("cls.predictions.bias") == "cls.predictions.bias"
    assert modern_name("some.scale.gamma") == "some.scale.gamma"


def test_buffers_are_skipped_with_a_reason():
    """position_ids and token_type_ids buffers are not weights: they are skipped, with or without the
    `bert.` prefix (a BertModel file has none), and each skip carries a reason a loader can print."""
    tensors = {"bert.embeddings.position_ids": np.arange(8)[None],
               "embeddings.token_type_ids": np.zeros((1, 8)),
               "bert.embeddings.LayerNorm.gamma": np.ones(4), "bert.pooler.dense.bias": np.zeros(4)}
    kept, skipped = normalize_hf_state(tensors)
    assert sorted(kept) == ["bert.embeddings.LayerNorm.weight", "bert.pooler.dense.bias"]
    assert sorted(skipped) == ["bert.embeddings.position_ids", "embeddings.token_type_ids"]
    assert all("not a learned weight" in reason for reason in skipped.values())


def test_tied_copies_are_dropped_renamed_or_refused():
    """A tied copy equal to its parameter is dropped (and reported); a copy whose parameter is missing is
    renamed to it; a copy that differs, or two names for one parameter, is an error naming them."""
    embeddings = np.arange(6.0).reshape(3, 2)
    kept, skipped = normalize_hf_state({"bert.embeddings.word_embeddings.weight": embeddings,
                                        "cls.predictions.decoder.weight": embeddings.copy()})
    assert list(kept) == ["bert.embeddings.word_embeddings.weight"]
    assert "tied copy" in skipped["cls.predictions.decoder.weight"]
    kept, _ = normalize_hf_state({"cls.predictions.decoder.bias": np.ones(3)})
    assert list(kept) == ["cls.predictions.bias"]
    with pytest.raises(CheckpointError, match="decoder.weight.*differs"):
        normalize_hf_state({"bert.embeddings.word_embeddings.weight": embeddings,
                            "cls.predictions.decoder.weight": embeddings + 1})
    with pytest.raises(CheckpointError, match="LayerNorm.weight"):
        normalize_hf_state({"x.LayerNorm.gamma": np.ones(2), "x.LayerNorm.weight": np.ones(2)})


def test_pickle_checkpoints_are_refused_with_a_way_out(tmp_path):
    """A folder with only pytorch_model.bin is refused, explaining the danger (unpickling runs code) and
    giving the conversion snippet with that folder's path; nothing in the file is read."""
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04 never opened")
    with pytest.raises(CheckpointError) as raised:
        find_weights_file(tmp_path)
    message = str(raised.value)
    assert "runs whatever code" in message and "safe_serialization=True" in message
    assert f"from_pretrained({str(tmp_path)!r})" in message
    with pytest.raises(CheckpointError, match="pickle"):
        refuse_pickle_checkpoint(tmp_path / "pytorch_model.bin")


def test_a_renamed_pickle_is_recognised_by_the_safetensors_reader(tmp_path):
    """A torch.save file renamed to model.safetensors is refused with the pickle explanation, not a
    puzzling header error."""
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"PK\x03\x04" + bytes(200))
    with pytest.raises(CheckpointError, match="pickle.*safetensors"):
        read_safetensors(path)


def test_find_weights_file(tmp_path):
    """model.safetensors is found; a sharded checkpoint, an empty folder and a missing folder each get
    their own CheckpointError naming the folder."""
    write_safetensors(tmp_path / "model.safetensors", {"w": np.ones(1)})
    assert find_weights_file(tmp_path) == tmp_path / "model.safetensors"
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    (sharded / "model.safetensors.index.json").write_text("{}")
    with pytest.raises(CheckpointError, match="split into several"):
        find_weights_file(sharded)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CheckpointError, match="has no model.safetensors"):
        find_weights_file(empty)
    with pytest.raises(CheckpointError, match="is not a folder"):
        find_weights_file(tmp_path / "absent")
