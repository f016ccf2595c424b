"""`direction`: which way should a language model read? The paper's Table 5 and §5.1.

Three arms, the same model, data, steps and seed (masked LM only, no NSP):
    bidirectional   BERT: every token sees both sides
    causal          left to right (GPT's mask): a token sees only what stands before it
    elmo            a left-to-right and a right-to-left model, trained apart, their outputs combined
                    (ELMo, Peters et al. 2018); the right-to-left one is a causal model on reversed text
                    (minibert/data/reverse.py)

Measured on the right-context probe (minibert/inspect/probe.py: a blank only the words after it decide;
ELMo adds the two models' log-probabilities) and downstream, on NER with frozen features (a linear tagger
on each word's last-layer vector; for ELMo both models' vectors side by side, as ELMo is used). Frozen
features rather than fine-tuning, because a causal model's [CLS], which fine-tuning reads, sees nothing but
itself.
"""

from minibert.data.reverse import reverse_batch
from minibert.experiments.downstream import load_task, tagging_feature_f1
from minibert.experiments.pretraining import pretrain_in_memory
from minibert.experiments.runner import Experiment
from minibert.experiments.setup import LONG_MODES, base_settings, data_dir, run_config
from minibert.inspect.probe import candidate_scores, probe_accuracy, read_probe

ARMS = {"bidirectional": "bidirectional (BERT)", "causal": "left-to-right (GPT)",
        "elmo": "left-to-right + right-to-left (ELMo)"}
METRICS = {"probe": "right-context probe (%)", "ner": "NER, feature-based F1 (%)"}
# which trained models each arm reads: (attention, reads reversed text)
MODELS = {"bidirectional": [("bidirectional", False)], "causal": [("causal", False)],
          "elmo": [("causal", False), ("causal", True)]}


def settings(mode):
    # the probe needs longer than the other measures: bench/probe.py's bidirectional tiny model got 78% of
    # the blanks at 2,000 steps and all at 4,000 (the causal one stays at chance)
    return base_settings(mode, pretrain={"steps": 1500}) if mode in LONG_MODES else base_settings(mode)


def model(kind, seed, settings, shared):
    """The model of `kind` (attention, reversed) for this seed, pretrained once and shared by the arms."""
    if kind not in shared:
        attention, backwards = kind
        config = run_config(settings, seed, attention=attention)
        shared[kind] = pretrain_in_memory(config, data_dir(settings),
                                          transform=reverse_batch if backwards else None)
    return shared[kind]


def run(arm, seed, settings, shared):
    trained = [(model(kind, seed, settings, shared), kind[1]) for kind in MODELS[arm]]
    tokenizer = trained[0][0].tokenizer
    items, _ = read_probe(data_dir(settings) / "probe.jsonl", tokenizer)
    scores = None
    for pretrained, backwards in trained:
        these = candidate_scores(pretrained.model, tokenizer, items,
                                 transform=reverse_batch if backwards else None)
        scores = these if scores is None else [a + b for a, b in zip(scores, these, strict=True)]
    counts = probe_accuracy(None, tokenizer, items, scores=scores)
    probe = 100 * sum(right for right, _ in counts.values()) / sum(total for _, total in counts.values())
    data = load_task("ner", tokenizer, settings["train_size"], settings["dev_size"])
    return {"probe": probe, "ner": tagging_feature_f1([(pretrained.model, backwards)
                                                       for pretrained, backwards in trained], data)}


EXPERIMENT = Experiment(
    name="direction", metrics=lambda mode: METRICS, arms=lambda mode: ARMS, settings=settings, run=run,
    note=("chance on the probe is about 15% (1 in 6 or 7 candidates): a left-to-right model cannot "
          "see the word that decides the blank; ELMo's right-to-left half can."))
