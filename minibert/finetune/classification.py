"""The classification task: a sentence or a sentence pair in, one label out (sentiment, GLUE).

    这部电影真好看            ->  [CLS] 这 部 电 影 真 好 看 [SEP]                         -> positive
    (A man plays., A person plays.)  ->  [CLS] a man plays . [SEP] a person plays . [SEP]  -> entailment

The pooled [CLS] vector feeds `BertForSequenceClassification`. Labels are numbered in sorted order of the
training set's label names (SST-2: negative 0, positive 1, so F1 is that of `positive`). A regression
(STS-B) has one output, a number, instead of labels.
"""

# Every task module has the same parts, which `loop.py` and `predict.py` call: `read`, `fit_labels`,
# `encode`, `batch`, `loss`, `evaluate`, `main_metric`, and a `state` to save with the model.

import numpy as np

from minibert import functional as F
from minibert.data.problems import warn
from minibert.errors import DataError
from minibert.finetune.batching import encoder_inputs, run_encoder_batches
from minibert.finetune.heads import BertForSequenceClassification
from minibert.finetune.metrics import classification_metrics, regression_metrics
from minibert.finetune.readers import check_labels, label_set, read_tsv


class ClassificationTask:
    kind = "classification"
    head = BertForSequenceClassification

    def __init__(self, tokenizer, max_seq_length=128, labels=None, regression=False):
        self.tokenizer, self.max_seq_length = tokenizer, max_seq_length
        self.labels, self.regression = labels, regression

    @property
    def main_metric(self):
        return "pearson" if self.regression else "accuracy"

    def state(self):
        """What `predict` needs to rebuild this task around a saved model."""
        return {"max_seq_length": self.max_seq_length, "labels": self.labels, "regression": self.regression}

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
        """One feature per example: token ids, segment ids and (when labelled) the label's id."""
        if not self.regression and examples[0].label is not None:
            check_labels(examples, self.labels)
        tokenizer, features, cut = self.tokenizer, [], []
        for example in examples:
            ids_a, ids_b = (None if text is None else tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
                            for text in (example.text_a, example.text_b))
            length = len(ids_a) + len(ids_b or ()) + (2 if ids_b is None else 3)  # with [CLS] and [SEP]s
            if length > self.max_seq_length:
                cut.append((example.source, length))
            encoded = tokenizer.build_inputs(ids_a, ids_b, max_length=self.max_seq_length)
            label = example.label
            if label is not None and not self.regression:
                label = self.labels.index(label)
            features.append({"input_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"],
                             "label": label})
        if cut:  # BERT cuts the longer text of the pair from its end (`truncate_longest_first`)
            verb = "has" if len(cut) == 1 else "have"
            warn(f"{cut[0][0]}: {len(cut)} of {len(examples)} inputs {verb} more than max_seq_length="
                 f"{self.max_seq_length} tokens (the first: {cut[0][1]}); their ends were cut and not read")
        return features

    def batch(self, features):
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
        # Shortest first, so that each batch is padded to lengths close to its own: a dev set that mixes
        # 5- and 100-token sentences then pads far less. The outputs go back to the given order.
        order = np.argsort([len(f["input_ids"]) for f in features], kind="stable")
        batches = (self.batch([features[i] for i in order[start:start + batch_size]])
                   for start in range(0, len(features), batch_size))
        outputs = np.concatenate([F.softmax(logits).data if not self.regression else logits.data[:, 0]
                                  for _, logits in run_encoder_batches(model, batches)])
        in_given_order = np.empty_like(outputs)
        in_given_order[order] = outputs
        return in_given_order

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
