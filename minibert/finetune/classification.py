"""The classification task: a sentence or a sentence pair in, one label out (sentiment, GLUE).

    这部电影真好看            ->  [CLS] 这 部 电 影 真 好 看 [SEP]                         -> positive
    (A man plays., A person plays.)  ->  [CLS] a man plays . [SEP] a person plays . [SEP]  -> entailment

The pooled [CLS] vector feeds `BertForSequenceClassification`. Labels are numbered in sorted order of the
training set's label names (SST-2: negative 0, positive 1, so F1 is that of `positive`). A regression
(STS-B) has one output, a number, instead of labels.

A pair can also be read as two sentences, `pair_encoder="bi"` (Sentence-BERT's bi-encoder,
`BertForPairClassification`): [CLS] A [SEP] and [CLS] B [SEP] are encoded apart, and a batch holds both,
(2, B, S).
"""

# Every task module has the same parts, which `loop.py` and `predict.py` call: `read`, `fit_labels`,
# `encode`, `batch`, `loss`, `evaluate`, `main_metric`, and a `state` to save with the model.

import numpy as np

from minibert import functional as F
from minibert.data.problems import warn
from minibert.errors import ConfigError, DataError
from minibert.finetune.batching import encoder_inputs, shortest_first
from minibert.finetune.heads import BertForPairClassification, BertForSequenceClassification
from minibert.finetune.metrics import classification_metrics, regression_metrics
from minibert.finetune.readers import check_labels, label_set, read_tsv

PAIR_ENCODERS = {"cross": "[CLS] A [SEP] B [SEP] in one sequence (BERT's)", "bi": "A and B read apart (SBERT's)"}


class ClassificationTask:
    kind = "classification"

    def __init__(self, tokenizer, max_seq_length=128, labels=None, regression=False, pair_encoder="cross"):
        if pair_encoder not in PAIR_ENCODERS:
            raise ConfigError(f"pair_encoder={pair_encoder!r}: choose "
                              + " or ".join(f"{name!r} ({what})" for name, what in PAIR_ENCODERS.items()))
        if pair_encoder == "bi" and regression:
            raise ConfigError("a regression reads its pair in one sequence (pair_encoder 'cross'): the bi-encoder "
                              "head here classifies; leave out --regression or --pair-encoder bi")
        self.tokenizer, self.max_seq_length = tokenizer, max_seq_length
        self.labels, self.regression, self.pair_encoder = labels, regression, pair_encoder

    @property
    def head(self):
        return BertForPairClassification if self.pair_encoder == "bi" else BertForSequenceClassification

    @property
    def main_metric(self):
        return "pearson" if self.regression else "accuracy"

    def state(self):
        """What `predict` needs to rebuild this task around a saved model."""
        return {"max_seq_length": self.max_seq_length, "labels": self.labels, "regression": self.regression,
                "pair_encoder": self.pair_encoder}

    def head_options(self):
        """How the head is built: one output for a regression, else one per label, with their names."""
        return {"num_labels": 1} if self.regression else {"labels": self.labels}

    def read(self, path, labelled=True):
        return read_tsv(path, labelled, self.regression)

    def fit_labels(self, train_examples):
        """Take the label set from the training examples (once, before encoding anything)."""
        if not self.regression:
            self.labels = label_set(train_examples)
            if len(self.labels) < 2:
                where = train_examples[0].source.rsplit(":", 1)[0] if train_examples else "the training data"
                raise DataError(f"{where}: every training example has the label {self.labels}; a classifier "
                                "needs examples of at least 2 labels to learn to tell them apart (with one, it "
                                "always answers it and scores a meaningless accuracy of 1.0)")

    def encode(self, examples, training=False):
        """One feature per example: token ids, segment ids and (when labelled) the label's id. A bi-encoder's
        feature holds its two sequences, [CLS] A [SEP] and [CLS] B [SEP], under "pair_ids"."""
        if not self.regression and examples[0].label is not None:
            check_labels(examples, self.labels)
        tokenizer, features, cut = self.tokenizer, [], []
        for example in examples:
            ids_a, ids_b = (None if text is None else tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
                            for text in (example.text_a, example.text_b))
            label = example.label
            if label is not None and not self.regression:
                label = self.labels.index(label)
            if self.pair_encoder == "bi":
                feature, length = self._apart(example, ids_a, ids_b)
            else:
                feature, length = self._together(ids_a, ids_b)
            if length > self.max_seq_length:
                cut.append((example.source, length))
            features.append({**feature, "label": label})
        if cut:  # BERT cuts the longer text of a pair from its end (`truncate_longest_first`); apart, each text
            verb = "has" if len(cut) == 1 else "have"
            warn(f"{cut[0][0]}: {len(cut)} of {len(examples)} inputs {verb} more than max_seq_length="
                 f"{self.max_seq_length} tokens (the first: {cut[0][1]}); their ends were cut and not read")
        return features

    def _together(self, ids_a, ids_b):
        """[CLS] A [SEP] (B [SEP]) as one sequence, and its length before any cut."""
        encoded = self.tokenizer.build_inputs(ids_a, ids_b, max_length=self.max_seq_length)
        length = len(ids_a) + len(ids_b or ()) + (2 if ids_b is None else 3)  # with [CLS] and [SEP]s
        return {"input_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"]}, length

    def _apart(self, example, ids_a, ids_b):
        """[CLS] A [SEP] and [CLS] B [SEP], each its own sequence, and the longer one's length before any cut."""
        if ids_b is None:
            raise DataError(f"{example.source}: has one text, but a bi-encoder (--pair-encoder bi) reads a pair in "
                            "every row; give a file of pairs (to fine-tune on single texts, leave out "
                            "--pair-encoder bi)")
        sequences = [self.tokenizer.build_inputs(ids, max_length=self.max_seq_length)["input_ids"]
                     for ids in (ids_a, ids_b)]
        return {"pair_ids": sequences}, max(len(ids_a), len(ids_b)) + 2

    def batch(self, features):
        """The encoder's arrays, (B, S) each; a bi-encoder's are (2, B, S), the A texts then the B texts."""
        if self.pair_encoder == "bi":
            sequences = [f["pair_ids"][0] for f in features] + [f["pair_ids"][1] for f in features]
            both = encoder_inputs(sequences, [[0] * len(ids) for ids in sequences], self.tokenizer.pad_token_id)
            batch = {name: array.reshape(2, len(features), -1) for name, array in both.items()}
        else:
            batch = encoder_inputs([f["input_ids"] for f in features], [f["segment_ids"] for f in features],
                                   self.tokenizer.pad_token_id)
        if features[0]["label"] is not None:
            batch["label_ids"] = np.array([f["label"] for f in features],
                                          dtype=np.float32 if self.regression else np.int64)
        return batch

    def loss(self, model, batch):
        logits = model(batch["input_ids"], batch["segment_ids"], batch["input_mask"])  # (B, C)
        return model.loss(logits, batch["label_ids"])

    def scores(self, model, features, batch_size=64):
        """The model's outputs for every feature: (N,) numbers for a regression, else (N, C) probabilities."""
        outputs = [None] * len(features)
        for indexes, logits in shortest_first(model, features, self.batch, self.length, batch_size):
            scores = logits.data[:, 0] if self.regression else F.softmax(logits).data
            for row, index in enumerate(indexes):
                outputs[index] = scores[row]
        return np.array(outputs)

    @staticmethod
    def length(feature):
        """The tokens a feature holds: its sequence's, or both of a bi-encoder's."""
        return sum(map(len, feature["pair_ids"])) if "pair_ids" in feature else len(feature["input_ids"])

    def chance(self, examples):
        """(score, what scores it) for a model that learned nothing: always the most common label."""
        if self.regression:
            return 0.0, "no correlation"
        labels = [example.label for example in examples]
        common = max(sorted(set(labels)), key=labels.count)
        return labels.count(common) / len(labels), f"always answering {common!r}"

    def evaluate(self, model, examples, features, batch_size=64):
        scores = self.scores(model, features, batch_size)
        targets = [f["label"] for f in features]
        if self.regression:
            return regression_metrics(targets, scores)
        return classification_metrics(targets, scores.argmax(axis=-1), len(self.labels))
