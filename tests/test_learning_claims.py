"""The course's two learning claims, asserted.

1. Bidirectional attention fills a blank that only its right context decides, and the same model with
GPT's causal mask cannot (lesson 13, bench/probe.py).

Lesson 13's quick mode, shortened: each `tiny` model trains 300 steps of 32 on sentences whose blank is
always masked (2,500 sentences from stories the probe never uses), then answers the 750 held-out blanks of
data/synthetic/probe.jsonl, with and without the words after the blank. Chance is 16%.

Seeds and margins: over seeds 0-5 this setting gave the bidirectional model 60.1-93.7% (seed 0, the one
used: 60.1%), the causal one 15.6-16.9%, and both 14.1-17.6% without the right context (`PYTHONPATH=.
python tests/test_learning_claims.py 0,1,2,3,4,5` prints them). The thresholds sit outside those ranges
with room: bidirectional at least 45% and 30 points above causal; causal and both left-only runs within 5
points of chance (4 standard deviations of a 750-item accuracy at 16%). About 8 s of CPU.

2. Pretraining helps when task data is scarce (lesson 14, docs/experiments.md). A `tiny` model pretrained
for 500 steps on the synthetic corpus, and the same model from random weights, each fine-tuned on the
first 150 sentences of the synthetic NER set (40 epochs of 5 steps; two fine-tuning seeds each), scored by
entity F1 on its 300 dev sentences. Over pretraining seeds 0-4 the pretrained encoder's mean F1 was 68.5-
78.5% (seed 0, the one used: 73.7%), random weights' 60.8%: 7.7 to 17.7 points ahead (`PYTHONPATH=. python
tests/test_learning_claims.py 0,1,2,3,4 worth`). The test asks for 4 points, half the smallest gap seen.
About 30 s of CPU.
"""

import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from minibert.data.corpora.synthetic import probe_items
from minibert.finetune import FineTuneConfig
from minibert.finetune.finetuning_run import run_finetuning
from minibert.inspect.probe import left_context_only, own_sentence, probe_accuracy, read_probe, train_on_blanks
from minibert.tokenizer import BertTokenizer
from minibert.train import pretrain, run_preset
from minibert.train.progress import ProgressLine

SYNTHETIC = Path(__file__).resolve().parent.parent / "data" / "synthetic"
STEPS, BATCH = 300, 32


def accuracy(counts):
    return sum(right for right, _ in counts.values()) / sum(total for _, total in counts.values())


def probe_results(seed, folder):
    """{attention: (accuracy on the probe, accuracy with the words after [MASK] removed)}, and chance."""
    tokenizer = BertTokenizer(SYNTHETIC / "vocab.txt")
    probe = own_sentence(read_probe(SYNTHETIC / "probe.jsonl", tokenizer)[0])
    training_file = folder / "blank_sentences.jsonl"
    training_file.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n"
                                     for item in probe_items(seed=1, per_word=100)), encoding="utf-8")
    blanks = own_sentence(read_probe(training_file, tokenizer)[0])
    results = {}
    for attention in ("bidirectional", "causal"):
        model, _ = train_on_blanks(attention, blanks, tokenizer, STEPS, BATCH, seed=seed)
        results[attention] = (accuracy(probe_accuracy(model, tokenizer, probe)),
                              accuracy(probe_accuracy(model, tokenizer, left_context_only(probe))))
    chance = float(np.mean([1 / len(choice_ids) for _, choice_ids, _, _ in probe]))
    return results, chance


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory):
    return probe_results(0, tmp_path_factory.mktemp("probe"))


def test_bidirectional_fills_right_context_blanks_and_causal_cannot(probe_run):
    """The bidirectional model gets most blanks right; the causal one stays at chance, 30+ points below."""
    (bidirectional, _), (causal, _) = (probe_run[0][kind] for kind in ("bidirectional", "causal"))
    chance = probe_run[1]
    assert bidirectional >= 0.45 and bidirectional >= causal + 0.30, (bidirectional, causal, chance)
    assert abs(causal - chance) <= 0.05, (causal, chance)


def test_without_the_right_context_both_fall_to_chance(probe_run):
    """With the words after [MASK] removed, neither model can tell the candidates apart."""
    results, chance = probe_run
    for attention, (_, left_only) in results.items():
        assert abs(left_only - chance) <= 0.05, (attention, left_only, chance)


PRETRAIN_STEPS, NER_SENTENCES, NER_EPOCHS, FINETUNE_SEEDS = 500, 150, 40, (0, 1)
WORTH_MARGIN = 0.04  # entity F1, from the seed survey in the module docstring


def pretraining_worth(seed, folder):
    """{"pretrained": [entity F1 per fine-tuning seed], "random": [...]} for one pretraining seed."""
    # The corpus is built in `folder` (seeded: the same stories as data/synthetic's), beside a copy of the
    # committed vocabulary, so the test writes nothing into the repository.
    shutil.copy(SYNTHETIC / "vocab.txt", folder / "vocab.txt")
    config = run_preset("tiny", corpus="synthetic", steps=PRETRAIN_STEPS, seed=seed)
    pretrain(config, folder / "run", data_dir=folder, progress=ProgressLine(io.StringIO(), live=False),
             log=lambda _: None, show_examples=False)
    scores = {}
    for random_init in (False, True):
        for finetune_seed in FINETUNE_SEEDS:
            _, _, result = run_finetuning("ner", folder / "run", settings=FineTuneConfig(
                epochs=NER_EPOCHS, seed=finetune_seed), random_init=random_init, train_limit=NER_SENTENCES,
                log=None, stream=io.StringIO())
            scores.setdefault("random" if random_init else "pretrained", []).append(result.best_metrics["f1"])
    return scores


@pytest.fixture(scope="module")
def worth_run(tmp_path_factory):
    return pretraining_worth(0, tmp_path_factory.mktemp("worth"))


def test_pretraining_helps_when_task_data_is_scarce(worth_run):
    """With 150 training sentences the pretrained encoder finds more entities than random weights."""
    pretrained, random = np.mean(worth_run["pretrained"]), np.mean(worth_run["random"])
    assert pretrained >= random + WORTH_MARGIN, worth_run


if __name__ == "__main__":  # the seed surveys the module docstring quotes
    import tempfile
    survey = pretraining_worth if sys.argv[2:] == ["worth"] else probe_results
    for seed in map(int, sys.argv[1].split(",")):
        print(seed, survey(seed, Path(tempfile.mkdtemp())), flush=True)
