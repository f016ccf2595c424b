"""The downstream measures of the experiments: fine-tuning a pretrained encoder on a task, and the
feature-based alternative, a linear classifier on the frozen encoder's vectors (linear_probe.py).

Tasks (`load_task`): the finetune command's own (minibert/finetune/tasks.py), read from their files, and
    sentence-order   synthetic pairs: are A and B in their order, or swapped (sentence_order.py)
The experiments use sentiment and ner (synthetic), story-pairs (synthetic: same story?), package-topics
and doc-pairs (real text: which library? same document?).

Fine-tuning is the library's (minibert/finetune/loop.py, its default recipe) on a copy of the encoder's
weights, and reports the best epoch's dev score, as `python -m minibert finetune` does. Legend: N
examples, S sequence length, H hidden size.
"""

import io
from dataclasses import dataclass

import numpy as np

from minibert.autograd import no_grad
from minibert.data.corpora.sentence_order import sentence_order_examples
from minibert.data.reverse import reverse_batch, reversed_positions
from minibert.finetune import FineTuneConfig
from minibert.finetune.linear_probe import fit_linear_classifier, predict
from minibert.finetune.loop import fine_tune
from minibert.finetune.metrics import entity_scores
from minibert.finetune.readers import TextExample
from minibert.finetune.tasks import data_files, make_task
from minibert.model import BertConfig

ORDER_TASK = "sentence-order"


@dataclass
class TaskData:
    name: str
    task: object  # a ClassificationTask or TaggingTask, its labels fitted
    train: list
    dev: list


def load_task(name, tokenizer, train_size=None, dev_size=None):
    """The task `name` (a finetune task, or "sentence-order") read with `tokenizer`: the first `train_size`
    and `dev_size` examples of its files (None: all; sentence-order needs both)."""
    if name == ORDER_TASK:
        task = make_task("glue-tsv", tokenizer)
        train, dev = ([TextExample(a, b, label, f"sentence-order {split} {index}")
                       for index, (a, b, label) in enumerate(examples)]
                      for split, examples in zip(("train", "dev"), sentence_order_examples(train_size, dev_size),
                                                 strict=True))
    else:
        task = make_task(name, tokenizer)
        train_path, dev_path = data_files(name, log=lambda _: None)
        train, dev = task.read(train_path)[:train_size], task.read(dev_path)[:dev_size]
    task.fit_labels(train)
    return TaskData(name, task, train, dev)


def head_model(data, encoder, seed, random_init=False):
    """The task's head on a copy of `encoder`'s weights (a BertForPreTraining), or on a fresh encoder of
    the same config with random_init."""
    config = BertConfig.from_dict(encoder.config.to_dict())
    options = data.task.head_options()
    if options.get("labels") is not None:
        data.task.head.set_labels(config, options["labels"])
    model = data.task.head(config, options.get("num_labels"), seed)
    if not random_init:
        model.bert.load_state_dict(encoder.bert.state_dict())
    return model


def fine_tune_score(encoder, data, seed, epochs=None, random_init=False, train=None):
    """Dev score (%) of the best epoch of fine-tuning: accuracy, or entity F1 for ner. epochs: None for the
    finetune command's default (3, or more for a small set). train: a subset of the training examples."""
    model = head_model(data, encoder, seed, random_init)
    settings = FineTuneConfig(epochs=epochs, seed=seed)
    result = fine_tune(data.task, model, data.train if train is None else train, data.dev, settings,
                       stream=io.StringIO())
    return 100 * result.best_metrics[data.task.main_metric]


def encoder_outputs(encoder, task, features, backwards=False, batch_size=64):
    """Yield (batch, sequence_output (B, S, H)) of the frozen encoder over the features' batches.

    backwards: the encoder reads each sequence reversed (a right-to-left model, minibert/data/reverse.py);
    its outputs are put back in the original order, so position i is token i in both directions."""
    encoder.eval()
    for start in range(0, len(features), batch_size):
        batch = task.batch(features[start:start + batch_size])
        inputs = reverse_batch(batch) if backwards else batch
        with no_grad():
            sequence = encoder.bert(inputs["input_ids"], inputs["segment_ids"],
                                    inputs["input_mask"]).sequence_output.data  # (B, S, H)
        if backwards:  # reversing is its own inverse
            sequence = np.take_along_axis(sequence, reversed_positions(batch["input_mask"])[:, :, None], axis=1)
        yield batch, sequence


def token_vectors(encoders, task, features):
    """Yield (batch, (B, S, H * len(encoders))): each encoder's last-layer vectors side by side.
    encoders: [(BertForPreTraining, backwards)], e.g. a left-to-right and a right-to-left model (ELMo)."""
    streams = [encoder_outputs(encoder, task, features, backwards) for encoder, backwards in encoders]
    for outputs in zip(*streams, strict=True):
        yield outputs[0][0], np.concatenate([sequence for _, sequence in outputs], axis=-1)


def word_features(encoders, data, sentences):
    """(vectors (W, H * len(encoders)), tag ids (W,), each sentence's word positions): every word that fits,
    read at its first piece (the paper's feature-based NER, §5.3)."""
    features = data.task.encode(sentences)
    vectors, tags = [], []
    rows = iter(features)
    for _, sequence in token_vectors(encoders, data.task, features):
        for row in range(len(sequence)):
            feature = next(rows)
            for index, position in enumerate(feature["word_positions"]):
                if position >= 0:
                    vectors.append(sequence[row, position])
                    tags.append(data.task.labels.index(feature["tags"][index]))
    return np.array(vectors), np.array(tags), [f["word_positions"] for f in features]


def tagging_feature_f1(encoders, data):
    """Dev entity F1 (%) of a linear tagger on the frozen encoders' word vectors (words that did not fit
    are predicted O)."""
    train_x, train_y, _ = word_features(encoders, data, data.train)
    fitted = fit_linear_classifier(train_x, train_y, len(data.task.labels))
    dev_x, _, positions = word_features(encoders, data, data.dev)
    guesses, predicted = iter(predict(fitted, dev_x)), []
    for word_positions in positions:
        predicted.append([data.task.labels[next(guesses)] if p >= 0 else "O" for p in word_positions])
    return 100 * entity_scores([sentence.tags for sentence in data.dev], predicted)["f1"]
