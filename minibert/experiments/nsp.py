"""`nsp`: does a sentence-pair loss help sentence-pair tasks? The paper's Table 5, RoBERTa and ALBERT.

Three arms, the same masked LM, data, steps and seed, differing in the second loss:
    nsp    BERT's next-sentence prediction: is B the sentence after A, or from another document?
    none   no sentence loss (the paper's "No NSP"; RoBERTa drops it)
    sop    ALBERT's sentence-order prediction: are A and B in their order, or swapped?

Measured by fine-tuning on sentence-pair tasks no pretraining saw: `story-pairs` (is B near A in its
synthetic story, or from another one? what NSP practises, asked of sentences up to 3 apart),
`sentence-order` (A and B in their order, or swapped? what SOP practises), and in full mode `doc-pairs`,
the first question asked of real text (docstrings of pip's libraries), after the same arm pretrained on
`pydocs`. The paper found removing NSP cost QNLI 3.5 points; RoBERTa found it cost nothing when the inputs
were full sentences; ALBERT found NSP learns topic rather than coherence, and SOP does better.
Quick mode also reads each sentence loss's own held-out accuracy: what its head learned of its question.
"""

from minibert.experiments.downstream import ORDER_TASK, fine_tune_score, load_task
from minibert.experiments.pretraining import held_out_sentence_accuracy, pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import LONG_MODES, base_settings, by_mode, data_dir, eval_batches, measures, run_config

ARMS = {"nsp": "NSP (BERT)", "none": "none (RoBERTa)", "sop": "SOP (ALBERT)"}
CHANGES = {"nsp": {"use_nsp": True, "sentence_task": "nsp"}, "none": {"use_nsp": False},
           "sop": {"use_nsp": True, "sentence_task": "sop"}}
PAIR_TASKS = {"story": "story-pairs, fine-tuned (%)", "order": "sentence-order, fine-tuned (%)"}
METRICS = {"quick": {"own": "its sentence loss, held out (%)", **PAIR_TASKS},
           "full": {**PAIR_TASKS, "doc": "doc-pairs (real text), fine-tuned (%)"}}
ORDER_SIZES = {"quick": (400, 200), "full": (1200, 400), "mini": (1200, 400)}  # as story-pairs' files


def settings(mode):
    train, dev = ORDER_SIZES[mode]
    return base_settings(mode, METRICS, order_train_size=train, order_dev_size=dev, real_text=mode in LONG_MODES)


def arm_config(arm, seed, settings):
    """The PretrainingConfig of one run of `arm`: its sentence loss is the only change."""
    return run_config(settings, seed, **CHANGES[arm])


def run(arm, seed, settings, shared):
    pretrained = pretrain_in_memory(arm_config(arm, seed, settings), data_dir(settings))
    story = load_task("story-pairs", pretrained.tokenizer, settings["train_size"], settings["dev_size"])
    order = load_task(ORDER_TASK, pretrained.tokenizer, settings["order_train_size"], settings["order_dev_size"])
    scores = {"story": fine_tune_score(pretrained.model, story, seed, settings["epochs"]),
              "order": fine_tune_score(pretrained.model, order, seed, settings["epochs"])}
    if "own" in measures(settings, METRICS) and CHANGES[arm]["use_nsp"]:  # `none` has no sentence head
        scores["own"] = held_out_sentence_accuracy(pretrained, eval_batches(settings))
    if settings["real_text"]:  # the same arm pretrained on real text, for the real-text task
        real_settings = {**settings, "pretrain": {**settings["pretrain"], "corpus": "pydocs", "vocab_size": 8192}}
        on_pydocs = pretrain_in_memory(arm_config(arm, seed, real_settings), data_dir(real_settings))
        doc = load_task("doc-pairs", on_pydocs.tokenizer)
        scores["doc"] = fine_tune_score(on_pydocs.model, doc, seed, settings["epochs"])
    return scores


EXPERIMENT = Experiment(
    name="nsp",
    metrics=by_mode(METRICS), arms=lambda mode: ARMS, settings=settings, run=run, config=arm_config,
    unmeasured=lambda mode: {arm: {"own"} for arm, change in CHANGES.items() if not change["use_nsp"]},
    note=("NSP practises story-pairs' question (with B right after A), SOP sentence-order's; the question is "
          "what transfers after fine-tuning, and whether it is outside the noise."))
