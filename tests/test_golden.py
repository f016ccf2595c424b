"""minibert against HuggingFace's BertForPreTraining, with no torch: the golden reference (llm.c style).

`tests/fixtures/golden/make_golden.py` ran transformers once and stored, for a padded batch, the weights
(as `save_pretrained` writes them), every output, BERT's loss and every parameter's gradient. Here we load
the weights with our own `from_pretrained`, run the same batch, and compare everything.

Tolerances (from each fixture's meta, as its README explains; |ours - golden| <= atol + rtol·|golden|):
    float64  outputs and gradients rtol 1e-5, atol 1e-8; loss rtol 1e-7, atol 1e-10
    float32  outputs rtol 1e-4, atol 1e-5; gradients rtol 1e-4 (or as stated), atol 1e-5; loss rtol 1e-5
Measured (numba backend), max |ours - golden| over each group: float64 about 1e-14 for outputs, losses and
gradients, i.e. rounding; float32 about 2e-6 for outputs and 4e-7 for gradients. Run with `-s` to see the
table for every tensor.
"""

from pathlib import Path

import numpy as np
import pytest

from minibert import use_backend
from minibert.io import load_arrays
from minibert.model import BertForPreTraining, BertModel, pretraining_loss

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
FOLDERS = ["bert_f64", "bert_f32", "bert_gelu_new"]


def run_minibert(folder):
    """Load the fixture's weights with from_pretrained and compute what make_golden.py stored."""
    golden, meta = load_arrays(GOLDEN / folder / "golden.npz")
    model = BertForPreTraining.from_pretrained(GOLDEN / folder, verbose=False)
    inputs = (golden["input_ids"], golden["segment_ids"], golden["input_mask"])
    full = model(*inputs, output_attentions=True)
    masked = model(*inputs, masked_positions=golden["masked_lm_positions"])
    total, mlm, nsp = pretraining_loss(masked, golden["masked_lm_ids"], golden["masked_lm_weights"],
                                       golden["next_sentence_labels"])
    model.zero_grad()
    total.backward()
    ours = {
        "sequence_output": full.sequence_output.data, "pooled_output": full.pooled_output.data,
        "mlm_logits": full.mlm_logits.data, "mlm_logits_masked": masked.mlm_logits.data,
        "nsp_logits": full.nsp_logits.data, "attentions": np.stack(full.attentions),
        "loss": total.data, "mlm_loss": mlm.data, "nsp_loss": nsp.data,
    }
    ours.update({f"grad/{name}": parameter.grad for name, parameter in model.named_parameters()})
    return model, golden, meta, ours


def group_of(name):
    if name.startswith("grad/"):
        return "grads"
    return "loss" if name.endswith("loss") else "outputs"


CASES = [(backend, folder) for backend in ("numba", "numpy") for folder in FOLDERS]


@pytest.mark.parametrize("backend, folder", CASES)
def test_matches_huggingface(backend, folder):
    """Every output, the loss and every parameter gradient, within the fixture's stated tolerances."""
    with use_backend(backend):
        model, golden, meta, ours = run_minibert(folder)
    assert str(model.dtype) == meta["precision"]
    expected_grads = {name for name in golden if name.startswith("grad/")}
    assert expected_grads == {name for name in ours if name.startswith("grad/")}, "a gradient is missing"
    print(f"\n{folder} ({backend}): max |minibert - HF| per tensor")
    for name, value in ours.items():
        tolerance = meta["tolerances"][group_of(name)]
        difference = np.abs(value - golden[name]).max()
        print(f"  {name:66s} {difference:.1e}  (rtol {tolerance['rtol']:g}, atol {tolerance['atol']:g})")
        assert value.shape == golden[name].shape, name
        np.testing.assert_allclose(value, golden[name], rtol=tolerance["rtol"], atol=tolerance["atol"],
                                   err_msg=f"{folder}: {name}")


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_float64_agrees_to_rounding(backend):
    """In float64 the agreement is far tighter than the stated 1e-5: 1e-12 relative to each tensor's scale,
    on both backends, so a small systematic difference (a different GELU, erf, eps or mask constant) cannot
    hide under the bound."""
    with use_backend(backend):
        _, golden, _, ours = run_minibert("bert_f64")
    for name, value in ours.items():
        scale = max(np.abs(golden[name]).max(), 1.0)
        assert np.abs(value - golden[name]).max() <= 1e-12 * scale, name


def test_encoder_alone_loads_from_the_pretraining_folder():
    """BertModel.from_pretrained on the same folder: the "bert." prefix is dropped, the heads set aside, and
    the encoder's outputs are HF's."""
    golden, meta = load_arrays(GOLDEN / "bert_f64" / "golden.npz")
    encoder = BertModel.from_pretrained(GOLDEN / "bert_f64", verbose=False)
    out = encoder(golden["input_ids"], golden["segment_ids"], golden["input_mask"])
    tolerance = meta["tolerances"]["outputs"]
    np.testing.assert_allclose(out.sequence_output.data, golden["sequence_output"], **tolerance)
    np.testing.assert_allclose(out.pooled_output.data, golden["pooled_output"], **tolerance)
