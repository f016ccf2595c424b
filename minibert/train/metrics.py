"""How often the model is right: masked-LM accuracy and next-sentence accuracy, counted, not averaged.

Both return (correct, total) counts rather than a ratio, so that batches of different sizes (and the
padding slots of `masked_lm_weights`) add up exactly: accuracy over a whole evaluation is
sum(correct) / sum(total), not a mean of per-batch ratios. What to expect (google-research/bert #90, #649):
BERT-base ends pretraining near 70% masked-LM accuracy and 98% NSP accuracy.

Legend: B batch, P masked positions per sequence, V vocabulary.
"""

# A model that only learned word frequencies scores about the share of the most common token ("the", ",",
# ".": 5-15% on English text), and NSP starts at 50%, a coin toss.

import numpy as np


def masked_lm_correct(mlm_logits, masked_lm_ids, masked_lm_weights):
    """(correct, total) over the real masked positions: weight 1 counts, weight 0 (padding) does not.

    mlm_logits (B, P, V) array; masked_lm_ids (B, P) the original tokens; masked_lm_weights (B, P).
    """
    # BEGIN EXERCISE masked_lm_correct: argmax guesses equal to the original ids, counted where the weight is not 0
    guesses = np.argmax(mlm_logits, axis=-1)  # (B, P)
    counted = np.asarray(masked_lm_weights) > 0  # (B, P)
    correct = np.count_nonzero((guesses == np.asarray(masked_lm_ids)) & counted)
    return int(correct), int(np.count_nonzero(counted))
    # END EXERCISE


def next_sentence_correct(nsp_logits, next_sentence_labels):
    """(correct, total) of the IsNext (0) / NotNext (1) guesses; nsp_logits (B, 2)."""
    # BEGIN EXERCISE next_sentence_correct: argmax guesses equal to the labels, counted, over every pair
    guesses = np.argmax(nsp_logits, axis=-1)  # (B,)
    labels = np.asarray(next_sentence_labels).reshape(-1)
    return int(np.count_nonzero(guesses == labels)), int(labels.size)
    # END EXERCISE


def ratio(correct, total):
    """correct / total, or NaN when nothing was counted (a batch with no masked token)."""
    return correct / total if total else float("nan")
