"""The cross-entropy op, then the pretraining loss (BERT) and the next-token loss (GPT) made of it.

`cross_entropy` is the one loss op: softmax and negative log-likelihood fused in one kernel
(kernels/cross_entropy.py), so the softmax of a large vocabulary is never stored. The fine-tuning heads use
it too.

BERT (Google run_pretraining.py, `get_masked_lm_output` and `get_next_sentence_output`):
    MLM = sum(w · nll) / (sum(w) + 1e-5) over the P masked slots of each sequence (w 0 on padding slots)
    NSP = mean cross-entropy of IsNext (0) / NotNext (1).
    total = MLM + NSP, or MLM alone when NSP is switched off (RoBERTa, Liu et al. 2019).
GPT: every position predicts the next token: cross_entropy(logits[:, :-1], input_ids[:, 1:]).

Legend: B batch, S sequence length, V vocabulary, P masked positions per sequence.
"""

# MLM: w is 1 for a real masked token and 0 for a padding slot (sequences have fewer than P masked tokens);
# the 1e-5 keeps a batch with no masked token at all from dividing by zero.
# NSP switched off: RoBERTa (Liu et al. 2019) found that dropping it does not hurt.

import numpy as np

from minibert.autograd.tensor import Function, Tensor
from minibert.errors import ShapeError
from minibert.kernels.cross_entropy import softmax_cross_entropy_backward, softmax_cross_entropy_forward

IGNORE = -100  # target id of a padded position in the causal loss (the value HF uses)


class CrossEntropyOp(Function):
    def forward(self, logits, targets, weights, denominator):
        # BEGIN EXERCISE cross_entropy_op: the rows' nll from the kernel, weighted by weights/denominator, summed
        rows = logits.reshape(-1, logits.shape[-1])  # (N, C)
        self.logits_shape = logits.shape
        self.rows, self.targets = rows, targets.reshape(-1)
        nll, self.logsumexp = softmax_cross_entropy_forward(rows, self.targets)  # (N,)
        self.weights = (weights.reshape(-1) / denominator).astype(logits.dtype)  # (N,)
        return np.asarray((self.weights * nll).sum(), dtype=logits.dtype)
        # END EXERCISE

    def backward(self, grad_output):
        # BEGIN EXERCISE cross_entropy_op_backward: grad·w_i per row into the kernel, back in the logits' shape
        # loss = sum_i w_i * nll_i (w already divided by the denominator)
        #   ->  d/dlogits_i = w_i * (softmax_i - onehot_i)
        grad_rows = softmax_cross_entropy_backward(grad_output * self.weights, self.rows, self.targets,
                                                   self.logsumexp)
        return grad_rows.reshape(self.logits_shape), None, None
        # END EXERCISE


def cross_entropy(logits, targets, weights=None, ignore_index=None):
    """Softmax cross-entropy from logits (..., C) and integer targets (...).

    - no weights: the mean over positions (positions whose target is `ignore_index` are left out);
    - weights (...): sum(w·nll) / (sum(w) + 1e-5), BERT's masked-LM form, where padding slots carry w = 0.
    """
    targets = targets.data if isinstance(targets, Tensor) else np.asarray(targets)
    if not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"cross_entropy targets must be integer class ids, got dtype {targets.dtype}")
    if targets.shape != logits.shape[:-1]:
        raise ShapeError(f"cross_entropy: targets of shape {targets.shape} do not match logits of shape "
                         f"{logits.shape} (targets must be logits.shape[:-1] = {logits.shape[:-1]})")
    valid = np.ones(targets.shape, dtype=bool) if ignore_index is None else targets != ignore_index
    num_classes = logits.shape[-1]
    bad = valid & ((targets < 0) | (targets >= num_classes))
    if bad.any():
        or_ignored = ", or ignore_index" if ignore_index is not None else ""
        raise ShapeError(f"cross_entropy target {targets[bad].ravel()[0]} is outside the {num_classes} classes "
                         f"(valid ids are 0..{num_classes - 1}{or_ignored})")
    safe_targets = np.where(valid, targets, 0)
    if weights is None:
        weights, denominator = valid, max(int(valid.sum()), 1)
    else:
        weights = weights.data if isinstance(weights, Tensor) else np.asarray(weights)
        if weights.shape != targets.shape:
            raise ShapeError(f"cross_entropy weights of shape {weights.shape} must match targets {targets.shape}")
        weights = weights * valid
        # BERT's masked-LM loss (run_pretraining.py): the 1e-5 keeps a batch with no masked token finite.
        denominator = weights.sum() + 1e-5
    return CrossEntropyOp.apply(logits, safe_targets, weights, denominator=denominator)


def pretraining_loss(output, masked_lm_ids, masked_lm_weights, next_sentence_labels, use_nsp=True):
    """Returns (total, mlm, nsp) as scalar Tensors; nsp is None when use_nsp=False.

    output: a `PreTrainingOutput` computed with `masked_positions`, so that `mlm_logits` is (B, P, V).
    masked_lm_ids (B, P): the original token at each masked position; masked_lm_weights (B, P): 1 or 0.
    next_sentence_labels (B,): 0 = IsNext, 1 = NotNext.
    """
    masked_lm_ids = np.asarray(masked_lm_ids)
    if output.mlm_logits.shape[:-1] != masked_lm_ids.shape:
        raise ShapeError(f"mlm_logits {output.mlm_logits.shape} do not fit masked_lm_ids "
                         f"{masked_lm_ids.shape}: run the model with "
                         "masked_positions=batch['masked_lm_positions'] so the logits are (B, P, V), one row "
                         "per masked slot")
    # BEGIN EXERCISE mlm_loss: cross_entropy with weights= for MLM, plain mean for NSP
    weights = np.asarray(masked_lm_weights, dtype=output.mlm_logits.dtype)
    mlm = cross_entropy(output.mlm_logits, masked_lm_ids, weights=weights)
    if not use_nsp:
        return mlm, mlm, None
    nsp = cross_entropy(output.nsp_logits, np.asarray(next_sentence_labels))
    return mlm + nsp, mlm, nsp
    # END EXERCISE


def causal_lm_loss(logits, input_ids, attention_mask=None):
    """GPT's loss: position t predicts token t+1, at every position; the mean over real (unpadded) targets.

    logits (B, S, V), input_ids (B, S), attention_mask (B, S) with 1 for real tokens, 0 for padding.
    """
    input_ids = np.asarray(input_ids)
    if logits.shape[:-1] != input_ids.shape:
        raise ShapeError(f"logits {logits.shape} do not fit input_ids {input_ids.shape}: causal_lm_loss "
                         "needs the (B, S, V) logits of every position (call the model without "
                         "masked_positions)")
    # BEGIN EXERCISE causal_lm_loss: logits at 0..S-2 predict ids at 1..S-1; padding targets become IGNORE
    targets = input_ids[:, 1:]  # (B, S-1): the token after each position
    if attention_mask is not None:
        targets = np.where(np.asarray(attention_mask)[:, 1:] == 1, targets, IGNORE)  # no loss on padding
    return cross_entropy(logits[:, :-1], targets, ignore_index=IGNORE)  # (B, S-1, V) vs (B, S-1)
    # END EXERCISE
