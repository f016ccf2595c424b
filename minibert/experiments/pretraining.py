"""Pretraining inside an experiment: the pretraining loop's own step, in memory, with no run folder.

An experiment pretrains dozens of small models and keeps none of them, so it skips what a run of
`python -m minibert pretrain` adds around the step (logs, checkpoints, the clock): it builds the data, the
model, the optimizer and the schedule with `minibert/train/pretraining_setup.py` from a `PretrainingConfig`, and calls
`train_step` (minibert/train/update.py) on the batches, as a run does. Two calls with the same config
give the same model, bit for bit.
"""

import warnings
from dataclasses import dataclass
from itertools import islice

import numpy as np

from minibert.data.problems import DataWarning
from minibert.fast import accelerate, process_plan
from minibert.optim import bert_optimizer
from minibert.tokenizer import BertTokenizer
from minibert.train import pretraining_setup
from minibert.train.evaluate import evaluate
from minibert.train.interrupt import stop_if_requested
from minibert.train.pretraining_run import batch_stream
from minibert.train.update import train_step


@dataclass
class Pretrained:
    model: object  # the BertForPreTraining, in eval mode
    tokenizer: object
    eval_batches: object  # the held-out split (PretrainingBatches, masked at 15%), or None
    steps: int


def open_data(config, data_dir):
    """(tokenizer, training batches, held-out batches) for `config` on the data in `data_dir` (built there
    first if missing): the batches masked and paired as `config` says."""
    with warnings.catch_warnings():
        # The built-in corpora's long sentences are cut to fit; the data is ours, the warning is not news.
        warnings.simplefilter("ignore", DataWarning)
        shard_dir, vocab_path, _ = pretraining_setup.prepare_data(config, data_dir, log=lambda _: None)
    return BertTokenizer(vocab_path), *pretraining_setup.open_batches(shard_dir, config)


def open_run(config, data_dir):
    """`open_data`'s (tokenizer, training batches, held-out batches), and a fresh model for `config`."""
    tokenizer, train_batches, eval_batches = open_data(config, data_dir)
    model = pretraining_setup.build_model(config, tokenizer.vocab_size)
    if not config.plain:
        accelerate(model, prune_last_layer=True)  # as the pretrain command trains (minibert/fast)
    return tokenizer, train_batches, eval_batches, model


def pretrain_in_memory(config, data_dir, transform=None, steps=None):
    """Pretrain a model as `config` says for `steps` (default config.steps) steps; returns `Pretrained`.

    transform: applied to every training batch first (`minibert.data.reverse.reverse_batch`: right to left).
    """
    tokenizer, train_batches, eval_batches, model = open_run(config, data_dir)
    steps = steps or config.steps
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    scheduler = pretraining_setup.build_scheduler(optimizer, config, steps)
    parameters = model.parameters()
    with process_plan(config.threads):
        for _, _, batch in islice(batch_stream(train_batches, 0, 0), steps):
            train_step(model, parameters, optimizer, scheduler, transform(batch) if transform else batch, config)
            stop_if_requested()  # Ctrl-C inside an experiment: stop between steps, never inside a kernel
    return Pretrained(model.eval(), tokenizer, eval_batches, steps)


def held_out_mlm_accuracy(pretrained, max_batches=None):
    """Masked-LM accuracy (%) on the held-out split, masked at BERT's 15% whatever rate the run trained at
    (minibert/train/pretraining_setup.py `open_batches`), so runs of different rates are measured alike."""
    evaluation = evaluate(pretrained.model, pretrained.eval_batches, max_batches, use_nsp=False)
    return 100 * evaluation.mlm_accuracy


def unchanged_token_accuracy(pretrained, max_batches=None):
    """Masked-LM accuracy (%) on the held-out split with every chosen token shown as itself, neither [MASK]
    nor a random token: does the output at a token the model can see keep that token? The paper leaves 10%
    of the chosen tokens unchanged "to bias the representation towards the actual observed word" (appendix
    A.1), since fine-tuning shows only real tokens; this measures that bias directly. A model that never saw
    a chosen token unchanged (100/0/0, 80/0/20, 0/0/100) was never asked to keep it."""
    evaluation = evaluate(pretrained.model, ShownAsThemselves(pretrained.eval_batches), max_batches, use_nsp=False)
    return 100 * evaluation.mlm_accuracy


class ShownAsThemselves:
    """The held-out batches with each chosen token put back in its place (evaluate reads `epoch(0)`)."""

    def __init__(self, batches):
        self.batches = batches

    def epoch(self, number):
        for batch in self.batches.epoch(number):
            input_ids = batch["input_ids"].copy()  # (B, S)
            rows, slots = np.nonzero(batch["masked_lm_weights"])  # the real predictions, not the padded slots
            input_ids[rows, batch["masked_lm_positions"][rows, slots]] = batch["masked_lm_ids"][rows, slots]
            yield {**batch, "input_ids": input_ids}


def held_out_sentence_accuracy(pretrained, max_batches=None):
    """Held-out accuracy (%) of the run's own sentence loss (NSP or SOP, as its held-out pairs were built),
    read by its own head: how much of its question the pretraining learned."""
    return 100 * evaluate(pretrained.model, pretrained.eval_batches, max_batches, use_nsp=True).nsp_accuracy
