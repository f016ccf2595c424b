"""Metrics on hand-built cases whose answers were worked out on paper (minibert/finetune/metrics.py)."""

import math

import pytest

from minibert.finetune.metrics import (
    accuracy,
    answer_words,
    classification_metrics,
    entities,
    entity_scores,
    f1_score,
    matthews_corrcoef,
    normalize_answer,
    regression_metrics,
    squad_exact_match,
    squad_f1,
    squad_metrics,
)

# ---- classification ------------------------------------------------------------------------------------


def test_accuracy_counts_equal_pairs():
    """4 of 6 predictions equal their label: accuracy 2/3."""
    assert accuracy([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]) == pytest.approx(4 / 6)


def test_binary_f1_and_matthews_by_hand():
    """TP=2, TN=2, FP=1, FN=1: precision = recall = 2/3, so F1 = 2/3;
    MCC = (2·2 - 1·1) / sqrt(3·3·3·3) = 1/3."""
    labels, predictions = [1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]
    assert f1_score(labels, predictions) == pytest.approx(2 / 3)
    assert matthews_corrcoef(labels, predictions) == pytest.approx(1 / 3)


def test_f1_of_a_class_never_predicted_right_is_zero():
    """No true positive: F1 is 0, not a division by zero."""
    assert f1_score([1, 1, 0], [0, 0, 0]) == 0.0


def test_matthews_extremes():
    """Perfect agreement 1, perfect disagreement -1, a constant prediction 0 (no information)."""
    labels = [0, 1, 1, 0, 1]
    assert matthews_corrcoef(labels, labels) == pytest.approx(1.0)
    assert matthews_corrcoef(labels, [1 - y for y in labels]) == pytest.approx(-1.0)
    assert matthews_corrcoef(labels, [1] * 5) == 0.0


def test_matthews_three_classes_by_hand():
    """labels 0 1 2 0 1 2, predictions 0 2 1 0 0 2: s=6, c=3, t=(2,2,2), p=(3,1,2);
    MCC = (3·6 - (6+2+4)) / sqrt((36 - 14)(36 - 12)) = 6 / sqrt(528)."""
    assert matthews_corrcoef([0, 1, 2, 0, 1, 2], [0, 2, 1, 0, 0, 2]) == pytest.approx(6 / math.sqrt(528))


def test_classification_metrics_uses_macro_f1_beyond_two_labels():
    """Three labels: F1 is the mean of the per-label F1s. Label 0: TP 2, predicted 3, actual 2 -> 0.8;
    label 1: no TP -> 0; label 2: TP 1, predicted 2, actual 2 -> 0.5."""
    labels, predictions = [0, 1, 2, 0, 1, 2], [0, 2, 1, 0, 0, 2]
    metrics = classification_metrics(labels, predictions, num_labels=3)
    assert metrics["f1"] == pytest.approx((0.8 + 0.0 + 0.5) / 3)
    assert metrics["accuracy"] == pytest.approx(0.5)


def test_regression_metrics_pearson_and_mse():
    """Predictions 2x+1 of the targets correlate perfectly; a constant prediction has Pearson 0."""
    targets = [0.0, 1.0, 2.0, 3.0]
    assert regression_metrics(targets, [1.0, 3.0, 5.0, 7.0])["pearson"] == pytest.approx(1.0)
    assert regression_metrics(targets, [1.0, 1.0, 1.0, 1.0]) == {"pearson": 0.0, "mse": pytest.approx(1.5)}


def test_mismatched_lengths_are_refused():
    """Labels and predictions of different lengths are an error, not a silent broadcast."""
    with pytest.raises(ValueError, match="equally"):
        accuracy([1, 0, 1], [1, 0])


# ---- SQuAD ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, normalised", [
    ("The Cat", "cat"),  # lowercase, article dropped
    ("  a  quick,   brown fox!  ", "quick brown fox"),  # punctuation gone, whitespace collapsed
    ("An apple.", "apple"),
    ("theatre anthem", "theatre anthem"),  # articles only as whole words
    ("state-of-the-art", "stateoftheart"),  # punctuation is deleted, not replaced by a space
    ("Super Bowl 50", "super bowl 50"),
    ("the", ""),
    ("Denver Broncos' coach", "denver broncos coach"),
])
def test_official_normalisation(text, normalised):
    """The official evaluate-v1.1.py normalisation: lowercase, drop punctuation, drop a/an/the, collapse
    whitespace."""
    assert normalize_answer(text) == normalised


def test_exact_match_after_normalisation_and_best_gold():
    """'the Denver Broncos' equals 'Denver Broncos' after normalisation; the best of the golds counts."""
    assert squad_exact_match("the Denver Broncos", ["Denver Broncos"]) == 1.0
    assert squad_exact_match("Broncos", ["Denver Broncos", "Broncos"]) == 1.0
    assert squad_exact_match("Panthers", ["Denver Broncos"]) == 0.0


def test_f1_is_word_overlap():
    """'Denver Broncos won' vs 'Denver Broncos': 2 common words, precision 2/3, recall 1, F1 0.8."""
    assert squad_f1("Denver Broncos won", ["Denver Broncos"]) == pytest.approx(0.8)
    assert squad_f1("Denver Broncos won", ["Carolina", "Denver Broncos"]) == pytest.approx(0.8)
    assert squad_f1("Carolina", ["Denver Broncos"]) == 0.0


def test_f1_counts_repeated_words_once_each():
    """Overlap is a multiset intersection: 'the the cat' normalises to 'cat'; 'cat cat' vs 'cat' has 1
    common word, precision 1/2, recall 1, F1 2/3."""
    assert squad_f1("cat cat", ["cat"]) == pytest.approx(2 / 3)


def test_chinese_characters_are_words_for_f1():
    """'光明' against '光明公司': 2 common characters, precision 1, recall 1/2, F1 2/3 (the official split
    would give 0); English answers are split on spaces as in the official script."""
    assert answer_words("光明 Company") == ["光", "明", "company"]
    assert squad_f1("光明", ["光明公司"]) == pytest.approx(2 / 3)
    assert squad_exact_match("光明", ["光明公司"]) == 0.0


def test_squad_metrics_percentages_and_missing_predictions():
    """Two questions: one exact (100), one missing (0): EM 50, F1 50."""
    metrics = squad_metrics({"q1": "Denver Broncos"}, {"q1": ["Denver Broncos"], "q2": ["Carolina"]})
    assert metrics == {"exact_match": pytest.approx(50.0), "f1": pytest.approx(50.0)}


# ---- entities ------------------------------------------------------------------------------------------


def test_entities_from_bio_tags():
    """B starts an entity, I continues the same type; O ends it."""
    assert entities(["B-PER", "I-PER", "O", "B-LOC"]) == {("PER", 0, 1), ("LOC", 3, 3)}


def test_entities_seqeval_lenient_rules():
    """seqeval's default: an I- after O starts an entity; an I- of another type starts a new one;
    B right after B starts a new one."""
    assert entities(["O", "I-PER", "I-PER"]) == {("PER", 1, 2)}
    assert entities(["B-PER", "I-LOC"]) == {("PER", 0, 0), ("LOC", 1, 1)}
    assert entities(["B-PER", "B-PER", "I-PER"]) == {("PER", 0, 0), ("PER", 1, 2)}


def test_entity_scores_seqeval_readme_example():
    """seqeval's README example: one of two entities exactly right in each direction -> P = R = F1 = 0.5."""
    gold = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    predicted = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    assert entity_scores(gold, predicted) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}


def test_entity_scores_partial_entity_is_wrong():
    """Predicting only 'Leo' of 'Leo Brown' earns nothing for it: 1 right of 2 predicted, of 2 gold."""
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    predicted = [["B-PER", "O", "O", "B-LOC"]]
    assert entity_scores(gold, predicted) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert entity_scores([["O", "O"]], [["O", "O"]])["f1"] == 0.0
