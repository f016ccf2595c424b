"""Exercise train_step (lesson 12): `train_step` in minibert/train/update.py.

The pretraining step: note the learning rate this step uses; the model on the batch with its MLM head at
the masked positions; the MLM + NSP loss (NSP only when the config says so); `checked_update` with the
config's max_grad_norm; the step's numbers. The referee takes the same step by hand on a twin model.
"""

import math

import numpy as np

from minibert.config import BertConfig
from minibert.model import BertForPreTraining, pretraining_loss
from minibert.optim import LRScheduler, bert_optimizer, clip_grad_norm
from minibert.train import run_preset, train_step

CONFIG = BertConfig(vocab_size=13, hidden_size=6, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=10, max_position_embeddings=8)
IDS = np.array([[2, 7, 5, 3, 9, 4], [2, 11, 3, 6, 8, 1]])
BATCH = {"input_ids": IDS, "segment_ids": np.array([[0, 0, 0, 1, 1, 1]] * 2), "input_mask": np.ones_like(IDS),
         "masked_lm_positions": np.array([[1, 2], [3, 4]]), "masked_lm_ids": np.array([[7, 7], [6, 8]]),
         "masked_lm_weights": np.array([[1.0, 1.0], [1.0, 0.0]]), "next_sentence_labels": np.array([0, 1])}


def setup():
    model = BertForPreTraining(CONFIG, seed=0).to(np.float64)
    optimizer = bert_optimizer(model.named_parameters(), lr=0.05, rule="adamw")
    scheduler = LRScheduler(optimizer, lambda step: 1.0 / (step + 1))
    return model, optimizer, scheduler


def by_hand(use_nsp, max_grad_norm):
    """The step done by hand: (loss, MLM loss, NSP loss, the norm before clipping, the model after)."""
    model, optimizer, scheduler = setup()
    output = model(BATCH["input_ids"], BATCH["segment_ids"], BATCH["input_mask"],
                   masked_positions=BATCH["masked_lm_positions"])
    loss, mlm, nsp = pretraining_loss(output, BATCH["masked_lm_ids"], BATCH["masked_lm_weights"],
                                      BATCH["next_sentence_labels"], use_nsp=use_nsp)
    loss.backward()
    norm = clip_grad_norm(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    return loss.item(), mlm.item(), None if nsp is None else nsp.item(), norm, model


def test_one_step_matches_the_step_by_hand():
    """With NSP and max_grad_norm 0.1: the losses, the norm, the rate used (the first, 0.05) and the weights
    after equal the step by hand; the counts cover the 3 real masked slots and 2 pairs."""
    for use_nsp in (True, False):
        config = run_preset("tiny", use_nsp=use_nsp, max_grad_norm=0.1)
        model, optimizer, scheduler = setup()
        result = train_step(model, model.parameters(), optimizer, scheduler, BATCH, config)
        loss, mlm, nsp, norm, twin = by_hand(use_nsp, 0.1)
        assert math.isclose(result.loss, loss, rel_tol=1e-12), f"use_nsp={use_nsp}: the loss is MLM + NSP or MLM"
        assert math.isclose(result.mlm_loss, mlm, rel_tol=1e-12)
        assert (result.nsp_loss is None) == (nsp is None), "nsp_loss is None exactly when NSP is off"
        assert math.isclose(result.grad_norm, norm, rel_tol=1e-9), "the norm before clipping"
        assert result.lr == 0.05, "the rate this step used, read before the schedule moves it"
        assert (result.mlm_total, result.nsp_total) == (3, 2), "count the real masked slots and the pairs"
        for parameter, twin_parameter in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(parameter.data, twin_parameter.data, rtol=1e-10, atol=1e-14,
                                       err_msg="the weights after one step (clipping at config.max_grad_norm)")
