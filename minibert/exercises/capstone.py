"""The capstone's referee: a BERT whose every step body the student wrote, judged end to end.

`python -m minibert.exercises start capstone` blanks every body of one training step at once (the
exercises of `catalog.CAPSTONE`); `check capstone` runs each body's own check (which names the body that
fails) and these four parts, in order of cost:

1. `golden_outputs`: HuggingFace's BertForPreTraining ran once on a padded batch and stored its weights,
   inputs, outputs, loss and every gradient (the repository's tests/fixtures/golden/bert_f64). The
   student's BERT loads those weights and must give the same numbers in float64.
2. `whole_loss_gradcheck`: the MLM + NSP loss of a float64 BERT in training mode, dropout on, against
   central differences for every parameter (sampled entries).
3. `update_steps`: the student's `train_step` (backward, clipping, AdamW, the schedule) three times on one
   batch: the loss must fall and every weight move by at most about the learning rate.
4. `train_tiny`: the student's loop trains `tiny` on the `synthetic` corpus for TRAIN_STEPS steps and must
   reach a held-out masked-LM accuracy of MIN_HELD_OUT_MLM_ACCURACY (docs/performance.md gives the
   reference's figure and the time `check capstone` takes).
"""

import numpy as np

from minibert import gradcheck
from minibert.io import load_arrays
from minibert.model import BertForPreTraining, pretraining_loss
from minibert.optim import LRScheduler, bert_optimizer, linear_warmup_linear_decay

GOLDEN_FOLDER = "bert_f64"  # the float64 reference of tests/fixtures/golden
TRAIN_STEPS = 200
MIN_HELD_OUT_MLM_ACCURACY = 0.08


def golden_outputs(golden_dir):
    """Load the stored HF weights into the student's BertForPreTraining and compare every output, the loss
    and every parameter's gradient with HF's, within the fixture's float64 tolerances."""
    golden, meta = load_arrays(golden_dir / "golden.npz")
    model = BertForPreTraining.from_pretrained(golden_dir, verbose=False)
    inputs = (golden["input_ids"], golden["segment_ids"], golden["input_mask"])
    full = model(*inputs)
    masked = model(*inputs, masked_positions=golden["masked_lm_positions"])
    total, _, _ = pretraining_loss(masked, golden["masked_lm_ids"], golden["masked_lm_weights"],
                                   golden["next_sentence_labels"])
    model.zero_grad()
    total.backward()
    ours = {"sequence_output": full.sequence_output.data, "pooled_output": full.pooled_output.data,
            "mlm_logits": full.mlm_logits.data, "mlm_logits_masked": masked.mlm_logits.data,
            "nsp_logits": full.nsp_logits.data, "loss": total.data}
    ours.update({f"grad/{name}": parameter.grad for name, parameter in model.named_parameters()})
    for name, value in ours.items():
        group = "grads" if name.startswith("grad/") else "loss" if name == "loss" else "outputs"
        assert value is not None, f"{name}: no gradient reached this parameter"
        np.testing.assert_allclose(value, golden[name], **meta["tolerances"][group],
                                   err_msg=f"{name} differs from HuggingFace's BertForPreTraining")


def small_model(seed=0, dropout=0.2):
    """A float64 BertForPreTraining of odd sizes, with random weights (LayerNorm near 1, biases not 0)."""
    from minibert.config import BertConfig

    config = BertConfig(vocab_size=13, hidden_size=6, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=10, max_position_embeddings=6, hidden_dropout_prob=dropout,
                        attention_probs_dropout_prob=dropout)
    model = BertForPreTraining(config, seed=seed).to(np.float64)
    rng = np.random.default_rng(seed + 1)
    for name, parameter in model.named_parameters():
        noise = rng.standard_normal(parameter.shape)
        parameter.data[...] = 1 + 0.2 * noise if name.endswith("LayerNorm.weight") else 0.3 * noise
    return model


# A padded batch of 3 sequences of 5 tokens, two masked slots each (a zero-weight one in rows 1 and 2).
IDS = np.array([[2, 7, 5, 3, 9], [2, 11, 3, 6, 0], [2, 4, 0, 0, 0]])
TYPES = np.array([[0, 0, 1, 1, 1], [0, 0, 1, 1, 0], [0, 1, 0, 0, 0]])
MASK = (np.array([5, 4, 2])[:, None] > np.arange(5)).astype(np.int64)
POSITIONS, TARGETS = np.array([[1, 3], [2, 0], [1, 0]]), np.array([[4, 7], [9, 0], [12, 0]])
WEIGHTS, LABELS = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.0]]), np.array([0, 1, 1])


def batch_loss(model):
    output = model(IDS, TYPES, MASK, masked_positions=POSITIONS)
    return pretraining_loss(output, TARGETS, WEIGHTS, LABELS)[0]


def whole_loss_gradcheck():
    """The whole loss in training mode (dropout 0.2, the same draws at every evaluation) against central
    differences, for every parameter (25 entries sampled from each large one)."""
    model = small_model().train()
    dropout_state = model.rng.bit_generator.state
    names, params = zip(*model.named_parameters(), strict=True)

    def loss(*_):
        model.rng.bit_generator.state = dropout_state
        return batch_loss(model)

    assert gradcheck(loss, *params, names=names, max_entries=25)


def update_steps(steps=3, lr=1e-2):
    """The student's `train_step` (forward with dropout, loss, backward, clipping, AdamW, the schedule) three
    times on one batch: the loss falls, the rate follows the schedule, the counts are the batch's, and no entry moves by
    more than about the learning rate per step (Adam's step is about lr at most)."""
    from minibert.train import run_preset, train_step

    model = small_model(dropout=0.1)
    first = batch_loss(model.eval()).item()  # judged without dropout, trained with it
    model.train()
    start = {name: parameter.data.copy() for name, parameter in model.named_parameters()}
    optimizer = bert_optimizer(model.named_parameters(), lr=lr, rule="adamw")
    scheduler = LRScheduler(optimizer, lambda step: linear_warmup_linear_decay(step, 10, 2))
    batch = {"input_ids": IDS, "segment_ids": TYPES, "input_mask": MASK, "masked_lm_positions": POSITIONS,
             "masked_lm_ids": TARGETS, "masked_lm_weights": WEIGHTS, "next_sentence_labels": LABELS}
    config = run_preset("tiny")
    results = [train_step(model, model.parameters(), optimizer, scheduler, batch, config) for _ in range(steps)]
    np.testing.assert_allclose([result.lr for result in results],
                               [lr * linear_warmup_linear_decay(step, 10, 2) for step in range(steps)],
                               err_msg="the learning rate does not follow the schedule")
    assert all((result.mlm_total, result.nsp_total) == (4, 3) for result in results), "4 real slots, 3 pairs"
    final = batch_loss(model.eval()).item()
    assert final < first, f"three updates did not lower the loss: {first} -> {final}"
    for name, parameter in model.named_parameters():
        moved = np.abs(parameter.data - start[name]).max()
        assert 0 < moved <= 1.1 * steps * lr, f"{name} moved by {moved:.3g} in {steps} steps of lr <= {lr}"


def train_tiny(out_dir, data_dir, steps=TRAIN_STEPS):
    """The student's loop trains `tiny` on `synthetic` (the core's plain layers) for `steps` steps; returns
    the held-out masked-LM accuracy measured at the end."""
    from minibert.train import pretrain, run_preset

    config = run_preset("tiny", steps=steps, eval_every=steps, checkpoint_every=steps, plain=True)
    result = pretrain(config, out_dir, data_dir=data_dir, show_examples=False, log=lambda _: None)
    assert result.step == steps, f"the run stopped at step {result.step} of {steps} ({result.stopped})"
    return result.evaluation.mlm_accuracy
