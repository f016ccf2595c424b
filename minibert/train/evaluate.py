"""Held-out evaluation: masked-LM and NSP accuracy and loss on documents the model never trained on.

The data builder holds out a share of the documents (`eval_fraction`, 5%) and writes them as the "eval"
split; no training instance uses them, not even as the random sentence of a NotNext pair. Training loss
alone cannot tell learning from memorising; the held-out figures can.

Every evaluation reads the same batches with the same masks (epoch 0 of the eval split, unshuffled), so
two evaluations of a run differ only because the model changed. The model runs in eval mode (no dropout)
without recording a graph, and is put back in training mode afterwards.
"""

from dataclasses import dataclass
from itertools import islice

from minibert.autograd import no_grad
from minibert.model import pretraining_loss
from minibert.train.metrics import masked_lm_correct, next_sentence_correct, ratio


@dataclass
class Evaluation:
    mlm_loss: float  # cross-entropy per masked token, averaged over tokens (not over batches)
    mlm_accuracy: float  # share of masked tokens guessed exactly
    nsp_loss: float | None  # None when the run has no NSP
    nsp_accuracy: float | None
    sequences: int  # how many held-out sequences were read
    predictions: int  # how many masked tokens they held

    def to_dict(self):
        return dict(self.__dict__)

    def summary(self):
        text = f"held-out MLM accuracy {self.mlm_accuracy:.1%} (loss {self.mlm_loss:.3f})"
        if self.nsp_accuracy is not None:
            text += f", NSP accuracy {self.nsp_accuracy:.1%} (loss {self.nsp_loss:.3f})"
        return text + f" on {self.sequences:,} sequences"


def forward_batch(model, batch):
    """The model on a batch in Google's format, its MLM head on the masked positions only."""
    return model(batch["input_ids"], batch["segment_ids"], batch["input_mask"],
                 masked_positions=batch["masked_lm_positions"])


def evaluate(model, eval_batches, max_batches=None, use_nsp=True):
    """An `Evaluation` of `model` on the first `max_batches` batches of `eval_batches` (a
    `PretrainingBatches` over the "eval" split; None: all of them)."""
    was_training = model.training
    model.eval()
    mlm_nll = nsp_nll = 0.0
    mlm_right = mlm_total = nsp_right = nsp_total = 0
    try:
        with no_grad():
            for batch in islice(eval_batches.epoch(0), max_batches):
                output = forward_batch(model, batch)
                _, mlm, nsp = pretraining_loss(output, batch["masked_lm_ids"], batch["masked_lm_weights"],
                                               batch["next_sentence_labels"], use_nsp=use_nsp)
                right, total = masked_lm_correct(output.mlm_logits.data, batch["masked_lm_ids"],
                                                 batch["masked_lm_weights"])
                # The batch loss is sum(w·nll)/(sum(w) + 1e-5): times sum(w) it is the batch's total (the
                # 1e-5 aside), so the evaluation's loss weighs every masked token alike whatever its batch.
                mlm_nll += mlm.item() * total
                mlm_right, mlm_total = mlm_right + right, mlm_total + total
                if use_nsp:
                    right, total = next_sentence_correct(output.nsp_logits.data,
                                                         batch["next_sentence_labels"])
                    nsp_nll += nsp.item() * total
                    nsp_right, nsp_total = nsp_right + right, nsp_total + total
                else:
                    nsp_total += len(batch["next_sentence_labels"])
    finally:
        model.train(was_training)
    return Evaluation(
        mlm_loss=ratio(mlm_nll, mlm_total), mlm_accuracy=ratio(mlm_right, mlm_total),
        nsp_loss=ratio(nsp_nll, nsp_total) if use_nsp else None,
        nsp_accuracy=ratio(nsp_right, nsp_total) if use_nsp else None,
        sequences=nsp_total, predictions=mlm_total)
