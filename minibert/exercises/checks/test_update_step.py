"""Exercise update_step (lesson 12): `checked_update` in minibert/train/update.py.

After any loss: refuse a loss that is not a finite number; backward; clip to max_grad_norm; refuse a
gradient norm that is not finite; the optimizer's step; the schedule's step; clear the gradients. Returns
(the loss value, the norm before clipping). The referee takes the same update by hand on a twin model.
"""

import math

import numpy as np
import pytest

from minibert.config import BertConfig
from minibert.model import BertForPreTraining, pretraining_loss
from minibert.optim import LRScheduler, bert_optimizer, clip_grad_norm
from minibert.train.update import TrainingDiverged, checked_update

CONFIG = BertConfig(vocab_size=13, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8)
IDS = np.array([[2, 7, 5, 3, 9, 4], [2, 11, 3, 6, 8, 1]])


def setup():
    model = BertForPreTraining(CONFIG, seed=0).to(np.float64)
    optimizer = bert_optimizer(model.named_parameters(), lr=0.05, rule="adamw")
    scheduler = LRScheduler(optimizer, lambda step: 1.0 / (step + 1))
    return model, optimizer, scheduler


def loss_of(model):
    output = model(IDS, np.zeros_like(IDS), np.ones_like(IDS), masked_positions=np.array([[1, 2], [3, 4]]))
    return pretraining_loss(output, np.array([[4, 7], [9, 1]]), np.ones((2, 2)), np.array([0, 1]))[0]


def test_two_updates_match_the_update_by_hand():
    """Two updates with max_grad_norm 0.1 (so clipping acts): the weights, the returned loss and norm, and
    the learning rate equal those of backward, clip, step, schedule step done by hand."""
    model, optimizer, scheduler = setup()
    twin, twin_optimizer, twin_scheduler = setup()
    for _ in range(2):
        value, norm = checked_update(loss_of(model), model, model.parameters(), optimizer, scheduler, 0.1)
        loss = loss_of(twin)
        loss.backward()
        want_norm = clip_grad_norm(twin.parameters(), 0.1)
        twin_optimizer.step()
        twin_scheduler.step()
        twin_optimizer.zero_grad()
        assert math.isclose(value, loss.item(), rel_tol=1e-12), "return the loss value"
        assert math.isclose(norm, want_norm, rel_tol=1e-9), "return the gradient norm before clipping"
        assert optimizer.param_groups[0]["lr"] == twin_optimizer.param_groups[0]["lr"], "step the schedule once"
    for (name, parameter), twin_parameter in zip(model.named_parameters(), twin.parameters(), strict=True):
        np.testing.assert_allclose(parameter.data, twin_parameter.data, rtol=1e-10, atol=1e-14, err_msg=name)


def test_gradients_are_cleared_after_the_update():
    """After the update no parameter keeps a gradient (the next backward would add to it)."""
    model, optimizer, scheduler = setup()
    checked_update(loss_of(model), model, model.parameters(), optimizer, scheduler, 1.0)
    assert all(parameter.grad is None for parameter in model.parameters()), "call optimizer.zero_grad()"


def test_a_nan_loss_changes_no_weight():
    """A loss of NaN raises TrainingDiverged before anything changes."""
    model, optimizer, scheduler = setup()
    before = [parameter.data.copy() for parameter in model.parameters()]
    with pytest.raises(TrainingDiverged):
        checked_update(loss_of(model) * float("nan"), model, model.parameters(), optimizer, scheduler, 1.0)
    for parameter, data in zip(model.parameters(), before, strict=True):
        np.testing.assert_array_equal(parameter.data, data)
