"""The pretraining loss (BERT) and the next-token loss (GPT), for the course's comparison.

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

from minibert import functional as F
from minibert.errors import ShapeError

IGNORE = -100  # target id of a padded position in the causal loss (the value HF uses)


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
    # BEGIN EXERCISE mlm_loss: F.cross_entropy with weights= for MLM, plain mean for NSP
    weights = np.asarray(masked_lm_weights, dtype=output.mlm_logits.dtype)
    mlm = F.cross_entropy(output.mlm_logits, masked_lm_ids, weights=weights)
    if not use_nsp:
        return mlm, mlm, None
    nsp = F.cross_entropy(output.nsp_logits, np.asarray(next_sentence_labels))
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
    return F.cross_entropy(logits[:, :-1], targets, ignore_index=IGNORE)  # (B, S-1, V) vs (B, S-1)
    # END EXERCISE
