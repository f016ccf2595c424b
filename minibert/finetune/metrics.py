"""The numbers a paper reports for each task: classification, SQuAD answers, entity tagging.

Classification follows GLUE's choices (accuracy, F1, Matthews, Pearson and MSE); SQuAD follows the official
`evaluate-v1.1.py` (exact match and word F1 after normalising, in percent), counting a CJK character as a
word; entities follow seqeval's default mode, the same as CoNLL's `conlleval` (micro precision, recall, F1
over whole entities). The comment below says what each number means.
"""

# Classification (GLUE's choices):
#     accuracy      share of examples labelled right (SST-2, MNLI, ...)
#     f1            F1 of the positive class, label 1 (MRPC, QQP); the mean F1 over labels (macro) when
#                   there are more than two
#     matthews      Matthews correlation, from -1 to 1, 0 for guessing (CoLA): unlike accuracy it is not
#                   fooled by a model that always says the majority label
#     pearson, mse  for a regression head (STS-B)
#
# SQuAD v1.1 (the official `evaluate-v1.1.py`): both answers are normalised (lowercase, ASCII punctuation
# dropped, the articles a/an/the dropped, whitespace collapsed); exact match is 1 when they are then equal,
# F1 is the overlap of their words; each question takes the best score over its gold answers; the totals
# are percentages. One addition: a CJK character counts as a word of its own, as Chinese evaluations
# (CMRC 2018, MLQA) count it, because Chinese has no spaces and the official split would make F1 equal
# exact match. Text with no CJK characters scores exactly as in the official script.
#
# Entities (seqeval's default mode, the same as CoNLL's `conlleval`): BIO tags become entities (type,
# first token, last token); an entity counts only when its type and both ends are right. Precision =
# right / predicted, recall = right / gold, F1 their harmonic mean, counted over the whole set (micro).

import re
import string
from collections import Counter

import numpy as np

# ---- classification ------------------------------------------------------------------------------------


def accuracy(labels, predictions):
    """The share of predictions equal to the label."""
    labels, predictions = _paired(labels, predictions)
    return float(np.mean(labels == predictions))


def f1_score(labels, predictions, positive=1):
    """F1 = 2·precision·recall / (precision + recall) of the class `positive`; 0 when it is never right."""
    labels, predictions = _paired(labels, predictions)
    true_positives = np.sum((predictions == positive) & (labels == positive))
    predicted, actual = np.sum(predictions == positive), np.sum(labels == positive)
    return _harmonic_f1(true_positives, predicted, actual)


def matthews_corrcoef(labels, predictions):
    """Matthews correlation over any number of classes (Gorodkin 2004, as scikit-learn computes it):

        (c·s - Σ_k p_k·t_k) / sqrt((s² - Σ_k p_k²)(s² - Σ_k t_k²))

    with s examples, c of them right, t_k of class k and p_k predicted as k. Two classes give the familiar
    (TP·TN - FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)). 0 when either side holds one class only.
    """
    labels, predictions = _paired(labels, predictions)
    classes = np.union1d(labels, predictions)
    true_counts = np.array([np.sum(labels == k) for k in classes], dtype=np.float64)
    predicted_counts = np.array([np.sum(predictions == k) for k in classes], dtype=np.float64)
    total, correct = float(len(labels)), float(np.sum(labels == predictions))
    numerator = correct * total - predicted_counts @ true_counts
    denominator = np.sqrt((total**2 - predicted_counts @ predicted_counts)
                          * (total**2 - true_counts @ true_counts))
    return float(numerator / denominator) if denominator > 0 else 0.0


def classification_metrics(labels, predictions, num_labels):
    """{"accuracy", "f1", "matthews"}: binary F1 of label 1 for two labels, macro F1 for more."""
    if num_labels == 2:
        f1 = f1_score(labels, predictions)
    else:
        f1 = float(np.mean([f1_score(labels, predictions, positive=k) for k in range(num_labels)]))
    return {"accuracy": accuracy(labels, predictions), "f1": f1,
            "matthews": matthews_corrcoef(labels, predictions)}


def regression_metrics(targets, predictions):
    """{"pearson", "mse"} for a regression head (STS-B reports Pearson's correlation)."""
    targets, predictions = _paired(targets, predictions)
    targets, predictions = targets.astype(np.float64), predictions.astype(np.float64)
    spread = targets.std() * predictions.std()
    covariance = np.mean((targets - targets.mean()) * (predictions - predictions.mean()))
    return {"pearson": float(covariance / spread) if spread > 0 else 0.0,
            "mse": float(np.mean((targets - predictions) ** 2))}


def _paired(labels, predictions):
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.shape != predictions.shape or labels.ndim != 1 or len(labels) == 0:
        raise ValueError(f"labels {labels.shape} and predictions {predictions.shape} must be two equally "
                         "long, non-empty lists")
    return labels, predictions


def _harmonic_f1(correct, predicted, actual):
    if correct == 0:
        return 0.0
    precision, recall = correct / predicted, correct / actual
    return float(2 * precision * recall / (precision + recall))


# ---- SQuAD ---------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)  # the official script drops ASCII punctuation only
_CJK_CHARACTER = re.compile(  # BERT's CJK ranges (minibert/tokenizer/basic.py)
    r"([\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002ceaf\U0002f800-\U0002fa1f])")


def normalize_answer(text):
    """The official normalisation: lowercase, drop punctuation, drop a/an/the, collapse whitespace."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_words(text):
    """The words F1 counts: the normalised answer split on spaces, each CJK character a word of its own."""
    return _CJK_CHARACTER.sub(r" \1 ", normalize_answer(text)).split()


def squad_exact_match(prediction, gold_answers):
    """1.0 if the normalised prediction equals some normalised gold answer, else 0.0."""
    return max(float(normalize_answer(prediction) == normalize_answer(gold)) for gold in gold_answers)


def squad_f1(prediction, gold_answers):
    """The best word-overlap F1 of the prediction against any gold answer."""
    predicted = answer_words(prediction)
    scores = []
    for gold in gold_answers:
        gold_words = answer_words(gold)
        common = sum((Counter(predicted) & Counter(gold_words)).values())
        scores.append(_harmonic_f1(common, len(predicted), len(gold_words)))
    return max(scores)


def squad_metrics(predictions, gold_answers):
    """{"exact_match", "f1"} in percent. predictions: {id: text}; gold_answers: {id: [texts]}.

    A question with no prediction scores 0, as in the official script.
    """
    if not gold_answers:
        raise ValueError("squad_metrics got no questions to score")
    exact = f1 = 0.0
    for question_id, golds in gold_answers.items():
        if question_id in predictions:
            exact += squad_exact_match(predictions[question_id], golds)
            f1 += squad_f1(predictions[question_id], golds)
    return {"exact_match": 100.0 * exact / len(gold_answers), "f1": 100.0 * f1 / len(gold_answers)}


# ---- entities ------------------------------------------------------------------------------------------


def entities(tags):
    """The entities of one BIO-tagged sentence, as a set of (type, first token, last token).

    seqeval's default rules: B-X starts an entity; I-X continues the entity before it only when that
    entity is of type X, and otherwise starts one (as conlleval reads IOB1 files); O ends it.
    """
    found, current = set(), None  # current: [type, first, last]
    for position, tag in enumerate(tags):
        prefix, _, kind = tag.partition("-")
        continues = prefix == "I" and current is not None and current[0] == kind
        if continues:
            current[2] = position
            continue
        if current is not None:
            found.add(tuple(current))
            current = None
        if prefix in ("B", "I"):
            current = [kind, position, position]
    if current is not None:
        found.add(tuple(current))
    return found


def entity_scores(gold_sentences, predicted_sentences):
    """{"precision", "recall", "f1"} over all entities of all sentences (micro average), as fractions."""
    if len(gold_sentences) != len(predicted_sentences):
        raise ValueError(f"{len(gold_sentences)} gold sentences but {len(predicted_sentences)} predicted")
    correct = predicted = actual = 0
    for gold_tags, predicted_tags in zip(gold_sentences, predicted_sentences, strict=True):
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(f"a sentence has {len(gold_tags)} gold tags but {len(predicted_tags)} predicted")
        gold, guessed = entities(gold_tags), entities(predicted_tags)
        correct += len(gold & guessed)
        predicted += len(guessed)
        actual += len(gold)
    precision = correct / predicted if predicted else 0.0
    recall = correct / actual if actual else 0.0
    return {"precision": precision, "recall": recall, "f1": _harmonic_f1(correct, predicted, actual)}
