"""Checks that the golden-reference fixture (tests/fixtures/golden) is complete and self-consistent.

These tests need no model: they read the files with minibert.io and recompute, with plain NumPy, what can
be recomputed from the stored tensors alone (the loss from the logits, the heads from the weights, two
bias gradients from their closed forms). They fail if the fixture is regenerated wrongly, truncated, or
its parts stop matching each other. The comparison of minibert's model against it lives in the model's
tests.

Shapes: B batch, S sequence, H hidden, A heads, V vocabulary, P masked positions, L layers.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from minibert.io import load_arrays, read_safetensors

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
FOLDERS = ["bert_f64", "bert_f32", "bert_gelu_new"]
CLS, SEP, MASK, PAD = 2, 3, 4, 0


def expected_parameter_shapes(config):
    """HuggingFace's parameter names and shapes for BertForPreTraining (mission.md), built from the config.
    The tied decoder weight is absent: save_pretrained leaves it out."""
    H, V, inner = config["hidden_size"], config["vocab_size"], config["intermediate_size"]
    shapes = {"bert.embeddings.word_embeddings.weight": (V, H),
              "bert.embeddings.position_embeddings.weight": (config["max_position_embeddings"], H),
              "bert.embeddings.token_type_embeddings.weight": (config["type_vocab_size"], H)}

    def linear(prefix, out_features, in_features):  # weights are stored [out, in]
        shapes.update({f"{prefix}.weight": (out_features, in_features), f"{prefix}.bias": (out_features,)})

    def layer_norm(prefix):
        shapes.update({f"{prefix}.weight": (H,), f"{prefix}.bias": (H,)})

    layer_norm("bert.embeddings.LayerNorm")
    for i in range(config["num_hidden_layers"]):
        layer = f"bert.encoder.layer.{i}"
        for part in ("query", "key", "value"):
            linear(f"{layer}.attention.self.{part}", H, H)
        linear(f"{layer}.attention.output.dense", H, H)
        layer_norm(f"{layer}.attention.output.LayerNorm")
        linear(f"{layer}.intermediate.dense", inner, H)
        linear(f"{layer}.output.dense", H, inner)
        layer_norm(f"{layer}.output.LayerNorm")
    linear("bert.pooler.dense", H, H)
    linear("cls.predictions.transform.dense", H, H)
    layer_norm("cls.predictions.transform.LayerNorm")
    shapes["cls.predictions.bias"] = (V,)
    linear("cls.seq_relationship", 2, H)
    return shapes


@pytest.fixture(scope="module", params=FOLDERS)
def fixture(request):
    """One folder's config.json, weights, golden arrays and meta."""
    folder = GOLDEN / request.param
    config = json.loads((folder / "config.json").read_text())
    weights, metadata = read_safetensors(folder / "model.safetensors")
    arrays, meta = load_arrays(folder / "golden.npz")
    return {"name": request.param, "config": config, "weights": weights, "metadata": metadata,
            "arrays": arrays, "meta": meta, "dtype": np.dtype(meta["precision"])}


def test_weights_have_every_hf_name_and_shape(fixture):
    """model.safetensors holds exactly BERT's HF parameters (no tied decoder copy, no buffers), each with
    the shape the config implies and the folder's precision."""
    expected = expected_parameter_shapes(fixture["config"])
    weights = fixture["weights"]
    assert sorted(weights) == sorted(expected)
    for name, shape in expected.items():
        assert weights[name].shape == shape, name
        assert weights[name].dtype == fixture["dtype"], name
    assert fixture["metadata"].get("format") == "pt"


def test_config_json_matches_the_meta(fixture):
    """config.json and the golden meta describe the same model, in the stored precision."""
    for key, value in fixture["meta"]["config"].items():
        assert fixture["config"][key] == value, key
    assert fixture["config"]["dtype"] == fixture["meta"]["precision"]
    expected_act = "gelu_new" if fixture["name"] == "bert_gelu_new" else "gelu"
    assert fixture["config"]["hidden_act"] == expected_act


def test_every_parameter_has_a_gradient(fixture):
    """Each parameter has exactly one finite `grad/<name>` of its shape and dtype, and nothing else is a
    gradient; the groups in meta cover every stored array exactly once."""
    arrays, groups = fixture["arrays"], fixture["meta"]["groups"]
    grads = {name.removeprefix("grad/"): value for name, value in arrays.items() if name.startswith("grad/")}
    assert sorted(grads) == sorted(fixture["weights"])
    for name, grad in grads.items():
        assert grad.shape == fixture["weights"][name].shape and grad.dtype == fixture["dtype"], name
        assert np.all(np.isfinite(grad)), name
    grouped = [name for group in groups.values() for name in group]
    assert sorted(grouped) == sorted(arrays) and len(grouped) == len(set(grouped))
    assert sorted(groups["grads"]) == sorted(f"grad/{name}" for name in grads)


def test_gradients_are_not_trivial(fixture):
    """Every gradient except the key biases' (zero in exact arithmetic: softmax ignores a constant added
    to a row of scores) is clearly non-zero, so a model that drops a path cannot match by accident."""
    for name, value in fixture["arrays"].items():
        if not name.startswith("grad/"):
            continue
        if name.endswith("attention.self.key.bias"):
            assert np.abs(value).max() < 1e-6, name
        else:
            assert np.abs(value).max() > 1e-3, name


def test_inputs_are_the_padded_batch_described(fixture):
    """B=3, S=11, P=4; rows 1 and 2 padded; [CLS] first; segment B marked; some masked-position weights 0
    (Google's padding: position 0, id 0); weighted positions point at real, non-special tokens."""
    a = fixture["arrays"]
    ids, mask, segments = a["input_ids"], a["input_mask"], a["segment_ids"]
    assert ids.shape == mask.shape == segments.shape == (3, 11)
    for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
        assert a[name].shape == (3, 4), name
    assert a["next_sentence_labels"].tolist() == [0, 1, 1]
    assert mask.sum(axis=1).tolist() == [11, 8, 6]
    assert np.all(ids[mask == 0] == PAD) and np.all(segments[mask == 0] == 0)
    assert np.all(ids[:, 0] == CLS) and set(np.unique(segments)) == {0, 1}
    assert np.all((ids >= 0) & (ids < fixture["config"]["vocab_size"]))
    weights = a["masked_lm_weights"]
    assert set(np.unique(weights)) == {0.0, 1.0} and (weights == 0).sum() == 3
    rows = np.arange(3)[:, None]
    chosen = weights == 1
    assert np.all(mask[rows, a["masked_lm_positions"]][chosen] == 1)
    assert np.all(~np.isin(a["masked_lm_ids"][chosen], [CLS, SEP, PAD, MASK]))
    assert np.all(a["masked_lm_positions"][~chosen] == 0) and np.all(a["masked_lm_ids"][~chosen] == 0)
    assert (ids[rows, a["masked_lm_positions"]][chosen] == MASK).sum() == chosen.sum() - 1


def test_output_shapes(fixture):
    """Outputs have the documented shapes: (B,S,H), (B,H), (B,S,V), (B,P,V), (B,2), (L,B,A,S,S), and the
    losses are scalars."""
    config, a = fixture["config"], fixture["arrays"]
    B, S, P = 3, 11, 4
    H, V, L, A = (config[key] for key in ("hidden_size", "vocab_size", "num_hidden_layers",
                                          "num_attention_heads"))
    assert a["sequence_output"].shape == (B, S, H) and a["pooled_output"].shape == (B, H)
    assert a["mlm_logits"].shape == (B, S, V) and a["mlm_logits_masked"].shape == (B, P, V)
    assert a["nsp_logits"].shape == (B, 2) and a["attentions"].shape == (L, B, A, S, S)
    assert all(a[name].shape == () for name in ("loss", "mlm_loss", "nsp_loss"))


def consistency_tolerance(fixture):
    return 1e-10 if fixture["dtype"] == np.float64 else 2e-5


def test_masked_logits_and_attentions_are_consistent(fixture):
    """mlm_logits_masked is mlm_logits gathered at masked_lm_positions, exactly; every attention row sums
    to 1 and gives padded keys exactly zero weight."""
    a = fixture["arrays"]
    rows = np.arange(3)[:, None]
    assert np.array_equal(a["mlm_logits_masked"], a["mlm_logits"][rows, a["masked_lm_positions"]])
    attentions = a["attentions"]  # (L,B,A,S,S)
    np.testing.assert_allclose(attentions.sum(-1), 1.0, rtol=0, atol=consistency_tolerance(fixture))
    padded_keys = (a["input_mask"] == 0)[None, :, None, None, :]  # (1,B,1,1,S)
    assert np.all(np.where(padded_keys, attentions, 0.0) == 0.0)


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def test_loss_is_berts_formula_of_the_stored_logits(fixture):
    """mlm_loss = sum(w * nll) / (sum(w) + 1e-5) over the masked positions, nsp_loss = mean cross-entropy,
    loss = their sum, recomputed in float64 from the stored logits."""
    a = fixture["arrays"]
    logits = a["mlm_logits_masked"].astype(np.float64)
    nll = -np.take_along_axis(log_softmax(logits), a["masked_lm_ids"][..., None], axis=-1)[..., 0]  # (B,P)
    w = a["masked_lm_weights"].astype(np.float64)
    mlm = (w * nll).sum() / (w.sum() + 1e-5)
    nsp_log_probs = log_softmax(a["nsp_logits"].astype(np.float64))
    nsp = -nsp_log_probs[np.arange(3), a["next_sentence_labels"]].mean()
    tolerance = consistency_tolerance(fixture)
    np.testing.assert_allclose(a["mlm_loss"], mlm, rtol=tolerance)
    np.testing.assert_allclose(a["nsp_loss"], nsp, rtol=tolerance)
    np.testing.assert_allclose(a["loss"], mlm + nsp, rtol=tolerance)


def test_head_bias_gradients_have_their_closed_forms(fixture):
    """d loss / d cls.predictions.bias = sum over masked slots of w * (softmax - onehot) / (sum(w) + 1e-5);
    d loss / d cls.seq_relationship.bias = mean over rows of (softmax - onehot). Both follow from the
    stored logits alone, so they tie the gradients to the outputs."""
    a = fixture["arrays"]
    V = fixture["config"]["vocab_size"]
    w = a["masked_lm_weights"].astype(np.float64)
    mlm_probs = np.exp(log_softmax(a["mlm_logits_masked"].astype(np.float64)))  # (B,P,V)
    mlm_residual = mlm_probs - np.eye(V)[a["masked_lm_ids"]]
    expected_mlm_bias = (w[..., None] * mlm_residual).sum(axis=(0, 1)) / (w.sum() + 1e-5)
    nsp_probs = np.exp(log_softmax(a["nsp_logits"].astype(np.float64)))  # (B,2)
    expected_nsp_bias = (nsp_probs - np.eye(2)[a["next_sentence_labels"]]).mean(axis=0)
    tol = consistency_tolerance(fixture)
    np.testing.assert_allclose(a["grad/cls.predictions.bias"], expected_mlm_bias, rtol=tol, atol=tol)
    np.testing.assert_allclose(a["grad/cls.seq_relationship.bias"], expected_nsp_bias, rtol=tol, atol=tol)


def gelu(x, kind):
    if kind == "gelu":  # the exact form: x * Phi(x)
        return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def test_heads_recomputed_from_the_weights(fixture):
    """The stored weights produce the stored outputs: pooled = tanh(dense(sequence_output[:, 0])), NSP =
    Linear(pooled), MLM logits = LayerNorm(act(dense(h))) @ word_embeddings.T + bias. This ties
    model.safetensors to golden.npz (a mismatched pair fails here)."""
    a, p = fixture["arrays"], {name: w.astype(np.float64) for name, w in fixture["weights"].items()}
    sequence = a["sequence_output"].astype(np.float64)  # (B,S,H)
    pooled = np.tanh(sequence[:, 0] @ p["bert.pooler.dense.weight"].T + p["bert.pooler.dense.bias"])
    nsp = pooled @ p["cls.seq_relationship.weight"].T + p["cls.seq_relationship.bias"]
    hidden = gelu(sequence @ p["cls.predictions.transform.dense.weight"].T
                  + p["cls.predictions.transform.dense.bias"], fixture["config"]["hidden_act"])
    mean, variance = hidden.mean(-1, keepdims=True), hidden.var(-1, keepdims=True)
    normalized = (hidden - mean) / np.sqrt(variance + fixture["config"]["layer_norm_eps"])
    hidden = (normalized * p["cls.predictions.transform.LayerNorm.weight"]
              + p["cls.predictions.transform.LayerNorm.bias"])
    logits = hidden @ p["bert.embeddings.word_embeddings.weight"].T + p["cls.predictions.bias"]  # (B,S,V)
    tolerance = 1e-9 if fixture["dtype"] == np.float64 else 1e-4
    for name, recomputed in (("pooled_output", pooled), ("nsp_logits", nsp), ("mlm_logits", logits)):
        np.testing.assert_allclose(a[name], recomputed, rtol=tolerance, atol=tolerance, err_msg=name)


def test_float32_weights_are_the_float64_weights_rounded():
    """bert_f32 is bert_f64 rounded to float32, so the two precisions test the same model."""
    f64, _ = read_safetensors(GOLDEN / "bert_f64" / "model.safetensors")
    f32, _ = read_safetensors(GOLDEN / "bert_f32" / "model.safetensors")
    assert sorted(f64) == sorted(f32)
    assert all(np.array_equal(f32[name], f64[name].astype(np.float32)) for name in f64)


def test_tolerances_are_stated_in_meta_and_readme(fixture):
    """Each golden.npz states rtol and atol for outputs, loss and grads, and the README's table gives the
    same numbers (the meta is what tests read; the README is what people read)."""
    readme = (GOLDEN / "README.md").read_text()
    tolerances = fixture["meta"]["tolerances"]
    assert sorted(tolerances) == ["grads", "loss", "outputs"]
    for group, bounds in tolerances.items():
        assert 0 < bounds["rtol"] <= 1e-4 and 0 < bounds["atol"] <= 1e-5, group
        rtol, atol = (f"{bounds[key]:.0e}".replace("e-0", "e-") for key in ("rtol", "atol"))  # "1e-5"
        assert f"| {group} |" in readme and f"| {rtol} | {atol} |" in readme, group


def test_fixture_is_small():
    """The committed fixture stays well under 1 MB, so the repository stays light."""
    total = sum(path.stat().st_size for path in GOLDEN.rglob("*") if path.is_file())
    assert total < 800_000
