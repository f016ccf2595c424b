"""Saving and loading models: minibert's own format, and HuggingFace's folder layout read with NumPy alone.

Exercises: a round trip must be exact, bit for bit; every way a real folder differs from the ideal (old
names, buffers, tied copies, another dtype) must load; every way it can be wrong must be named in the error.
"""

import json

import numpy as np
import pytest

from minibert.errors import CheckpointError
from minibert.io import read_safetensors, round_to_bf16, save_arrays, write_safetensors
from minibert.model import BertConfig, BertForPreTraining, BertModel


def small_config(**overrides):
    values = dict(vocab_size=19, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=12, max_position_embeddings=10)
    return BertConfig(**{**values, **overrides})


def trained_looking(model, seed=0):
    """Random values in every parameter, so a tensor loaded into the wrong place cannot match by chance."""
    rng = np.random.default_rng(seed)
    for parameter in model.parameters():
        parameter.data[...] = rng.standard_normal(parameter.shape)
    return model


def assert_same_weights(a, b):
    state_a, state_b = a.state_dict(), b.state_dict()
    assert list(state_a) == list(state_b)
    for name in state_a:
        assert state_a[name].dtype == state_b[name].dtype, name
        np.testing.assert_array_equal(state_a[name], state_b[name], err_msg=name)


def hf_folder(tmp_path, tensors, config=None):
    """A HuggingFace-style folder with the given tensors and a transformers-like config.json."""
    values = {**(config or small_config()).to_dict(), "architectures": ["BertForPreTraining"],
              "model_type": "bert", "transformers_version": "5.24.0", "tie_word_embeddings": True}
    (tmp_path / "config.json").write_text(json.dumps(values))
    write_safetensors(tmp_path / "model.safetensors", tensors, metadata={"format": "pt"})
    return tmp_path


# ----- minibert's format -----

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_save_load_round_trip_is_exact(tmp_path, dtype):
    """Weights (in their dtype), the config (with a non-default attention and extra keys) and the outputs."""
    config = BertConfig.from_dict({**small_config(attention="causal").to_dict(), "note": "kept"})
    model = trained_looking(BertForPreTraining(config).to(dtype))
    model.save(tmp_path / "model.npz")
    loaded = BertForPreTraining.load(tmp_path / "model.npz")
    assert loaded.config == config and loaded.config.extra == {"note": "kept"}
    assert_same_weights(model, loaded)
    ids = [[1, 2, 3, 4]]
    np.testing.assert_array_equal(model.eval()(ids).mlm_logits.data, loaded.eval()(ids).mlm_logits.data)


def test_the_file_holds_no_pickle(tmp_path):
    """NumPy itself can read the file with allow_pickle=False."""
    BertForPreTraining(small_config()).save(tmp_path / "model.npz")
    with np.load(tmp_path / "model.npz", allow_pickle=False) as archive:
        assert "bert.embeddings.word_embeddings.weight.npy" in archive.zip.namelist()


def test_encoder_loads_from_a_pretraining_checkpoint(tmp_path):
    model = trained_looking(BertForPreTraining(small_config()))
    model.save(tmp_path / "model.npz")
    encoder = BertModel.load(tmp_path / "model.npz")
    assert_same_weights(model.bert, encoder)


def test_other_files_are_refused(tmp_path):
    save_arrays(tmp_path / "other.npz", {"x": np.zeros(3)}, {"format": "something-else"})
    with pytest.raises(CheckpointError, match="not a minibert model file"):
        BertForPreTraining.load(tmp_path / "other.npz")
    BertForPreTraining(small_config()).save(tmp_path / "model.npz")
    data = (tmp_path / "model.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        BertForPreTraining.load(tmp_path / "cut.npz")


def test_a_checkpoint_for_another_config_names_the_mismatch(tmp_path):
    model = BertForPreTraining(small_config())
    state = model.state_dict()
    state["bert.pooler.dense.bias"] = np.zeros(5, dtype=np.float32)
    save_arrays(tmp_path / "bad.npz", state, {"format": "minibert-model", "version": 1,
                                              "config": model.config.to_dict()})
    with pytest.raises(CheckpointError, match=r"bert.pooler.dense.bias: checkpoint \(5,\), model \(8,\)"):
        BertForPreTraining.load(tmp_path / "bad.npz")


# ----- HuggingFace's layout -----

def test_save_pretrained_from_pretrained_round_trip(tmp_path, capsys):
    """The folder has config.json (with what transformers needs) and model.safetensors without the tied
    decoder; loading it back gives the same weights."""
    values = {**small_config().to_dict(), "architectures": ["Old"], "custom_key": [1, 2]}
    config = BertConfig.from_dict(values)
    model = trained_looking(BertForPreTraining(config))
    model.save_pretrained(tmp_path)
    values = json.loads((tmp_path / "config.json").read_text())
    assert values["model_type"] == "bert" and values["architectures"] == ["BertForPreTraining"]
    assert values["custom_key"] == [1, 2] and values["hidden_size"] == 8 and values["is_decoder"] is False
    tensors, metadata = read_safetensors(tmp_path / "model.safetensors")
    assert metadata == {"format": "pt"} and "cls.predictions.decoder.weight" not in tensors
    loaded = BertForPreTraining.from_pretrained(tmp_path)
    assert_same_weights(model, loaded)
    assert not loaded.training  # eval mode, as transformers returns it
    assert "loaded 46 tensors" in capsys.readouterr().out


def test_old_names_buffers_and_tied_copies_are_handled_and_reported(tmp_path, capsys):
    """gamma/beta are renamed, position_ids is skipped by name, and a tied decoder copy equal to the
    embeddings is accepted; the printed report says each."""
    model = trained_looking(BertForPreTraining(small_config()))
    old_names = {"LayerNorm.weight": "LayerNorm.gamma", "LayerNorm.bias": "LayerNorm.beta"}
    tensors = {}
    for name, value in model.state_dict().items():
        for new, old in old_names.items():
            name = name.replace(new, old)
        tensors[name] = value
    tensors["bert.embeddings.position_ids"] = np.arange(10, dtype=np.int64)[None]
    tensors["cls.predictions.decoder.weight"] = model.state_dict()["bert.embeddings.word_embeddings.weight"]
    loaded = BertForPreTraining.from_pretrained(hf_folder(tmp_path, tensors))
    assert_same_weights(model, loaded)
    report = capsys.readouterr().out
    assert "skipped bert.embeddings.position_ids" in report
    assert "renamed 12 old LayerNorm gamma/beta names" in report
    assert "skipped cls.predictions.decoder.weight" in report


def test_an_untied_decoder_is_refused(tmp_path):
    model = BertForPreTraining(small_config())
    tensors = dict(model.state_dict())
    tensors["cls.predictions.decoder.weight"] = tensors["bert.embeddings.word_embeddings.weight"] + 1
    with pytest.raises(CheckpointError, match="tied"):
        BertForPreTraining.from_pretrained(hf_folder(tmp_path, tensors))


def test_missing_unexpected_and_misshaped_keys_are_named(tmp_path, capsys):
    tensors = dict(BertForPreTraining(small_config()).state_dict())
    del tensors["bert.encoder.layer.1.output.dense.bias"]
    tensors["cls.extra_head.weight"] = np.zeros(3, dtype=np.float32)
    folder = hf_folder(tmp_path, tensors)
    with pytest.raises(CheckpointError) as error:
        BertForPreTraining.from_pretrained(folder)
    assert "bert.encoder.layer.1.output.dense.bias" in str(error.value)
    assert "cls.extra_head.weight" in str(error.value)
    model = BertForPreTraining.from_pretrained(folder, strict=False)
    assert not model.bert.encoder.layer[1].output.dense.bias.data.any()  # left at its initial zeros
    report = capsys.readouterr().out
    assert "missing, left at their initial values: bert.encoder.layer.1.output.dense.bias" in report
    tensors["bert.encoder.layer.1.output.dense.bias"] = np.zeros(7, dtype=np.float32)
    with pytest.raises(CheckpointError, match=r"output.dense.bias: checkpoint \(7,\), model \(8,\)"):
        BertForPreTraining.from_pretrained(hf_folder(tmp_path, tensors), strict=False)


@pytest.mark.parametrize("stored, rounded", [
    ("f32", lambda x: x),
    ("f16", lambda x: x.astype(np.float16).astype(np.float32)),
    ("bf16", round_to_bf16),
])
def test_reduced_precision_files_load_as_float32(tmp_path, stored, rounded):
    """F16 and BF16 weights are widened exactly: the model holds the stored values, in float32."""
    model = trained_looking(BertForPreTraining(small_config()))
    state = model.state_dict()
    (tmp_path / "config.json").write_text(json.dumps(model.config.to_dict()))
    write_safetensors(tmp_path / "model.safetensors", state, dtype=stored)
    loaded = BertForPreTraining.from_pretrained(tmp_path, verbose=False)
    assert loaded.dtype == np.float32
    for name, value in loaded.state_dict().items():
        np.testing.assert_array_equal(value, rounded(state[name]), err_msg=name)


def test_float64_files_stay_float64_unless_asked(tmp_path):
    model = trained_looking(BertForPreTraining(small_config()).to(np.float64))
    model.save_pretrained(tmp_path)
    assert BertForPreTraining.from_pretrained(tmp_path, verbose=False).dtype == np.float64
    as_float32 = BertForPreTraining.from_pretrained(tmp_path, dtype=np.float32, verbose=False)
    assert as_float32.dtype == np.float32


def test_encoder_alone_in_both_layouts(tmp_path):
    """BertModel reads a pretraining folder (prefix "bert.", heads set aside) and its own folder (no prefix);
    BertForPreTraining on an encoder-only folder names the missing heads in one line, and with strict=False
    loads the encoder into its "bert." part."""
    model = trained_looking(BertForPreTraining(small_config()))
    model.save_pretrained(tmp_path / "full")
    encoder = BertModel.from_pretrained(tmp_path / "full", verbose=False)
    assert_same_weights(model.bert, encoder)
    encoder.save_pretrained(tmp_path / "encoder")
    encoder_tensors, _ = read_safetensors(tmp_path / "encoder" / "model.safetensors")
    assert "embeddings.word_embeddings.weight" in encoder_tensors
    assert_same_weights(encoder, BertModel.from_pretrained(tmp_path / "encoder", verbose=False))
    with pytest.raises(CheckpointError, match=r"no MLM head \(cls\.predictions\.\*\) and no NSP head") as error:
        BertForPreTraining.from_pretrained(tmp_path / "encoder", verbose=False)
    assert "\n" not in str(error.value) and "word_embeddings" not in str(error.value)
    assert_same_weights(encoder, BertForPreTraining.from_pretrained(tmp_path / "encoder", strict=False,
                                                                    verbose=False).bert)


def test_pytorch_pickles_are_refused_with_a_way_out(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(small_config().to_dict()))
    (tmp_path / "pytorch_model.bin").write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(CheckpointError, match="pickle") as error:
        BertForPreTraining.from_pretrained(tmp_path)
    assert "safe_serialization=True" in str(error.value)


def test_bad_folders_are_named(tmp_path):
    with pytest.raises(CheckpointError, match="no model.safetensors"):
        BertForPreTraining.from_pretrained(tmp_path)
    write_safetensors(tmp_path / "model.safetensors", {"x": np.zeros(2, dtype=np.float32)})
    with pytest.raises(CheckpointError, match="config.json not found"):
        BertForPreTraining.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(CheckpointError, match="'gpt2'"):
        BertForPreTraining.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 10, "num_attention_heads": 3}))
    with pytest.raises(CheckpointError, match="not divisible"):
        BertForPreTraining.from_pretrained(tmp_path)


def test_truncated_weights_are_refused(tmp_path):
    BertForPreTraining(small_config()).save_pretrained(tmp_path)
    data = (tmp_path / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[:-100])
    with pytest.raises(CheckpointError, match="model.safetensors"):
        BertForPreTraining.from_pretrained(tmp_path)


def test_vocab_file_is_exposed_and_saved_along(tmp_path):
    """A vocab.txt beside the weights is exposed as model.vocab_file (for the tokenizer), and
    save_pretrained copies it into the new folder."""
    BertForPreTraining(small_config()).save_pretrained(tmp_path / "a")
    assert BertForPreTraining.from_pretrained(tmp_path / "a", verbose=False).vocab_file is None
    (tmp_path / "a" / "vocab.txt").write_text("[PAD]\n[UNK]\nhello\n")
    model = BertForPreTraining.from_pretrained(tmp_path / "a", verbose=False)
    assert model.vocab_file == str(tmp_path / "a" / "vocab.txt")
    model.save_pretrained(tmp_path / "b")
    assert (tmp_path / "b" / "vocab.txt").read_text() == "[PAD]\n[UNK]\nhello\n"
