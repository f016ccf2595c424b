"""Live parity with HuggingFace transformers (optional: skipped unless torch and transformers are installed).

The golden test (test_golden.py) needs no torch; this one regenerates the comparison on the spot, in both
directions: a folder written by transformers' `save_pretrained` loads here, and a folder written by our
`save_pretrained` loads in transformers. Run it with the reference environment:

    PYTHONPATH=. "$MINIBERT_REFERENCE_PYTHON" -m pytest tests/test_hf_parity.py

Tolerances, |ours - HF| <= atol + rtol·|HF|: float64 rtol 1e-9, atol 1e-12 for outputs, attentions and
every parameter gradient (both sides are exact to rounding); float32 rtol 1e-4, atol 1e-5 (float32
rounding moves these values by about 1e-6).
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from minibert.model import BertForPreTraining, pretraining_loss  # noqa: E402

TOLERANCE = {torch.float64: dict(rtol=1e-9, atol=1e-12), torch.float32: dict(rtol=1e-4, atol=1e-5)}


def hf_model(dtype, **overrides):
    """A small HF BertForPreTraining, every parameter random (LayerNorm near 1, biases near 0, not equal)."""
    values = dict(vocab_size=37, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
                  intermediate_size=29, max_position_embeddings=16, attn_implementation="eager")
    model = transformers.BertForPreTraining(transformers.BertConfig(**{**values, **overrides})).to(dtype)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
            if "LayerNorm.weight" in name:
                value = 1 + 0.2 * noise
            elif name.endswith("bias"):
                value = 0.2 * noise
            elif "embeddings" in name:
                value = 0.5 * noise
            else:
                value = noise / math.sqrt(parameter.shape[1])
            parameter.copy_(value.to(dtype))
    return model.eval()


def batch():
    rng = np.random.default_rng(0)
    attention_mask = np.array([[1] * 9, [1] * 6 + [0] * 3])
    return {
        "input_ids": rng.integers(1, 37, size=(2, 9)) * attention_mask,
        "token_type_ids": np.array([[0] * 5 + [1] * 4, [0] * 3 + [1] * 3 + [0] * 3]),
        "attention_mask": attention_mask,
        "masked_positions": np.array([[1, 4, 7], [2, 5, 0]]),
        "masked_lm_ids": rng.integers(1, 37, size=(2, 3)),
        "masked_lm_weights": np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]),
        "next_sentence_labels": np.array([1, 0]),
    }


def hf_run(model, inputs):
    """HF's forward on the batch, then BERT's loss (Google's weighted MLM + NSP) and its backward."""
    tensors = {key: torch.from_numpy(np.asarray(value)) for key, value in inputs.items()}
    model.zero_grad()
    out = model(input_ids=tensors["input_ids"], token_type_ids=tensors["token_type_ids"],
                attention_mask=tensors["attention_mask"], output_attentions=True)
    rows = torch.arange(2)[:, None]
    log_probs = torch.log_softmax(out.prediction_logits[rows, tensors["masked_positions"]], dim=-1)
    nll = -log_probs.gather(-1, tensors["masked_lm_ids"][..., None])[..., 0]
    weights = tensors["masked_lm_weights"].to(log_probs.dtype)
    loss = (weights * nll).sum() / (weights.sum() + 1e-5)
    nsp = torch.nn.functional.cross_entropy(out.seq_relationship_logits, tensors["next_sentence_labels"])
    loss = loss + nsp
    loss.backward()
    return out, loss, {name: p.grad.numpy() for name, p in model.named_parameters()}


def ours_run(model, inputs):
    args = (inputs["input_ids"], inputs["token_type_ids"], inputs["attention_mask"])
    full = model(*args, output_attentions=True)
    masked = model(*args, masked_positions=inputs["masked_positions"])
    loss, _, _ = pretraining_loss(masked, inputs["masked_lm_ids"], inputs["masked_lm_weights"],
                                  inputs["next_sentence_labels"])
    model.zero_grad()
    loss.backward()
    return full, loss, {name: p.grad for name, p in model.named_parameters()}


def assert_parity(hf, ours, dtype):
    (hf_out, hf_loss, hf_grads), (our_out, our_loss, our_grads) = hf, ours
    tolerance = TOLERANCE[dtype]
    pairs = {"mlm_logits": (our_out.mlm_logits.data, hf_out.prediction_logits),
             "nsp_logits": (our_out.nsp_logits.data, hf_out.seq_relationship_logits),
             "loss": (our_loss.data, hf_loss)}
    layers = zip(our_out.attentions, hf_out.attentions, strict=True)
    pairs.update({f"attentions[{i}]": (a, b) for i, (a, b) in enumerate(layers)})
    pairs.update({f"grad/{name}": (our_grads[name], grad) for name, grad in hf_grads.items()})
    assert set(our_grads) == set(hf_grads)
    for name, (mine, theirs) in pairs.items():
        theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else theirs
        np.testing.assert_allclose(mine, theirs, err_msg=name, **tolerance)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_new"])
def test_a_folder_written_by_transformers_loads_here(tmp_path, dtype, hidden_act):
    """transformers' save_pretrained(safe_serialization=True) -> our from_pretrained: same outputs,
    attentions, loss and parameter gradients."""
    model = hf_model(dtype, hidden_act=hidden_act)
    model.save_pretrained(tmp_path, safe_serialization=True)
    ours = BertForPreTraining.from_pretrained(tmp_path, verbose=False)
    assert ours.dtype == (np.float64 if dtype == torch.float64 else np.float32)
    assert_parity(hf_run(model, batch()), ours_run(ours, batch()), dtype)


@pytest.mark.parametrize("attention", ["bidirectional", "causal"])
def test_a_folder_written_here_loads_in_transformers(tmp_path, attention):
    """Our save_pretrained -> transformers' from_pretrained (a causal model becomes is_decoder=True there):
    the same outputs and gradients, so a model trained here continues in PyTorch."""
    source = hf_model(torch.float64)
    source.save_pretrained(tmp_path / "hf", safe_serialization=True)
    ours = BertForPreTraining.from_pretrained(tmp_path / "hf", verbose=False)
    ours.config.attention = attention
    ours.save_pretrained(tmp_path / "ours")
    theirs = transformers.BertForPreTraining.from_pretrained(tmp_path / "ours", attn_implementation="eager",
                                                             dtype=torch.float64).eval()
    assert theirs.config.is_decoder == (attention == "causal")
    assert_parity(hf_run(theirs, batch()), ours_run(ours, batch()), torch.float64)
