"""A pretraining run's objects, opened fresh from a `PretrainingConfig` or restored from its folder's checkpoint, and
what the loop asks of them: the batches from the run's position on, a checkpoint, the guesses and the report
that follow an evaluation, the end. The loop's own state (the position, the plan, the schedule) is the
loop's to change.

`open_run` builds everything before the first step, so a mistake costs seconds, not a lost run: the folder
(locked, io/folder_lock.py, so two runs never mix in it; a folder that holds another run or files of the
user's is refused), the data (built when missing), the tokenizer, the model, the optimizer, and, when
resuming, the checkpoint's weights, optimizer, schedule, random state and position.
"""

import contextlib
import warnings
from dataclasses import dataclass
from pathlib import Path

from minibert.data.problems import DataWarning
from minibert.errors import CheckpointError, DataError
from minibert.io.atomic import atomic_write
from minibert.io.folder_lock import LOCK_FILE, FolderLock
from minibert.io.overwrite import WouldOverwrite
from minibert.io.pretrained import VOCAB_FILE
from minibert.optim import bert_optimizer
from minibert.tokenizer import BertTokenizer
from minibert.train import pretraining_setup
from minibert.train.checkpointing import (
    CHECKPOINT_FILE,
    PretrainingPosition,
    load_checkpoint,
    remove_partial_files,
    restore,
    save_checkpoint,
)
from minibert.train.guesses import masked_examples
from minibert.train.logs import LOG_FILE, TrainingLog, draw_curves, read_log
from minibert.train.progress import format_duration
from minibert.train.report import REPORT_PAGE, blanks_snapshot, write_pretrain_report
from minibert.viz import sparkline


@dataclass
class PretrainingResult:
    out_dir: Path
    step: int
    total_steps: int
    stopped: str  # "finished", "time limit", "interrupted", "paused"
    evaluation: object  # the last `Evaluation`, or None


@dataclass
class PretrainingRun:
    config: object  # the PretrainingConfig
    out_dir: Path
    lock: FolderLock
    tokenizer: BertTokenizer
    train_batches: object  # PretrainingBatches of max_seq_length tokens
    short_batches: object  # of short_seq_length tokens, or None
    eval_batches: object  # held-out, or None for a corpus too small to hold documents out
    model: object  # BertForPreTraining
    optimizer: object
    position: PretrainingPosition  # total_steps None: a new run still to be planned from the clock (the loop plans it)
    data_fingerprint: dict
    corpus: dict | None  # what the corpus was built from (pretraining_setup.corpus_record), for the log
    log: TrainingLog
    checkpoint: object = None  # the TrainingCheckpoint resumed from
    scheduler: object = None
    last_checkpoint_step: int | None = None

    @property
    def checkpoint_path(self):
        return self.out_dir / CHECKPOINT_FILE

    def start_schedule(self, total_steps):
        """The learning-rate schedule over `total_steps`; a resumed run then takes its schedule's position
        (and every other state) from the checkpoint."""
        self.scheduler = pretraining_setup.build_scheduler(self.optimizer, self.config, total_steps)
        if self.checkpoint is not None:
            restore(self.checkpoint, self.model, self.optimizer, self.scheduler)
            remove_partial_files(self.out_dir)
            self.log.drop_after(self.position.step)

    def batches(self, short):
        """(epoch, index in epoch, batch) from the run's position on, of the short sequences or the long."""
        position = self.position
        batches = self.short_batches if short else self.train_batches
        return batch_stream(batches, position.epoch, position.batches_into_epoch)

    def step_config(self, short):
        """The settings of a step: the short steps leave the sentence-pair loss out unless `short_phase_nsp`
        (docs/learning.md, "A third round")."""
        return self.config.replace(use_nsp=False) if short and not self.config.short_phase_nsp else self.config

    def log_guesses(self):
        """What the model guesses for a few held-out blanks now, a "guesses" record for the report's page."""
        self.log.write("guesses", step=self.position.step,
                       **blanks_snapshot(self.model, self.tokenizer, self.eval_batches, self.config.eval_batches))

    def write_report(self):
        """report.html and report.json, rewritten from the whole log (minibert/train/report.py)."""
        records = read_log(self.log.path)
        write_pretrain_report(self.out_dir, records)
        return records

    def record_the_end(self, stopped):
        """A session that an error ended ("interrupted", "diverged", "failed"): its "end" record, and the
        report rewritten with it, so the page does not say "running" for a run that has stopped."""
        # The run's own error is the one the user must see: a second one here (a full disk) must not replace it.
        with contextlib.suppress(Exception):
            self.log.write("end", step=self.position.step, stopped=stopped,
                           elapsed=self.position.elapsed_seconds, total_steps=self.position.total_steps)
            self.write_report()

    def save(self):
        save_checkpoint(self.checkpoint_path, self.model, self.optimizer, self.scheduler, self.config,
                        self.position, self.data_fingerprint)
        self.last_checkpoint_step = self.position.step

    def finish(self, stopped, evaluation, show_examples, log):
        """The end of a session (its last step saved and evaluated, `evaluation` the last `Evaluation` or
        None): the curves, what to type to go on, and how the model fills masks in held-out text. Returns the
        `PretrainingResult`."""
        position = self.position
        self.log.write("end", step=position.step, stopped=stopped, elapsed=position.elapsed_seconds,
                       total_steps=position.total_steps)
        records = self.write_report()
        curves = draw_curves(records, self.out_dir)
        losses = [loss for record in records if record["kind"] == "train" for loss in record["losses"]]
        log(f"{stopped} at step {position.step} of {position.total_steps} after "
            f"{format_duration(position.elapsed_seconds)}; checkpoint {self.checkpoint_path}")
        if losses:
            log(f"loss {losses[0]:.2f} -> {losses[-1]:.2f}  {sparkline(losses, width=60)}")
        if curves:
            log("curves: " + ", ".join(str(path) for path in curves))
        log(f"report: {self.out_dir / REPORT_PAGE} (open it in a browser; rewritten at each evaluation)")
        if position.step < position.total_steps:
            log(f"continue with: --resume --out {self.out_dir}")
        if show_examples and self.eval_batches is not None:
            log("how the model fills masks in held-out text:")
            for line in masked_examples(self.model, self.tokenizer, next(self.eval_batches.epoch(0))):
                log(line)
        return PretrainingResult(self.out_dir, position.step, position.total_steps, stopped, evaluation)


def batch_stream(batches, epoch, skip):
    """Yield (epoch, index in epoch, batch) from batch `skip` of `epoch` on, epoch after epoch.

    Epoch e's batches and masks depend only on (seed, e), so skipping the used ones replays a stopped
    run's data exactly (masking a batch takes milliseconds, so the skip is quick). An epoch without a single
    batch would make this loop spin forever without yielding, so it is refused."""
    while True:
        count = 0
        for count, batch in enumerate(batches.epoch(epoch), start=1):
            if count > skip:
                yield epoch, count - 1, batch
        if count == 0:
            raise DataError(f"epoch {epoch} of the training data holds no batch; use a smaller --batch-size or "
                            "a larger corpus")
        epoch, skip = epoch + 1, 0


def open_run(config, out_dir, resume=False, overrides=None, data_dir=None, overwrite=False, log=print):
    """A `PretrainingRun` in `out_dir`, its folder locked until `run.lock.release()`; see the module docstring.

    config: a `PretrainingConfig`. To resume, config may be None: the checkpoint's settings are used, with
    `overrides` ({field: value}) applied; settings that decide the run's numbers cannot change.
    overwrite: start afresh in a folder that holds another run or files of the user's.
    """
    out_dir = Path(out_dir)
    lock = FolderLock(out_dir).acquire()
    try:
        return _open(config, out_dir, lock, resume, overrides, data_dir, overwrite, log)
    except BaseException:
        lock.release()
        raise


def _open(config, out_dir, lock, resume, overrides, data_dir, overwrite, log):
    checkpoint = _checkpoint_to_resume(out_dir, lock, resume, overwrite)
    if checkpoint is not None:
        asked = config.to_dict() if config is not None else (overrides or {})
        config = pretraining_setup.config_for_resume(checkpoint.run_config, asked)
        before = checkpoint.run_config.get("threads")
        if config.threads != before:  # pretraining_setup.SESSION_SETTINGS says why
            log(f"threads: {config.threads or 'every core'} now, {before or 'every core'} before; the matmuls cut "
                "in parts for the threads round their last bits by the count, so from here the numbers match the "
                "run's only to float32 rounding, not bit for bit")
    shard_dir, vocab_path, fingerprint = pretraining_setup.prepare_data(config, data_dir, log)
    tokenizer = BertTokenizer(vocab_path)
    train_batches, eval_batches = pretraining_setup.open_batches(shard_dir, config)
    short_batches = None  # the training batches of the short-sequence steps, if the run has them
    if config.short_phase() is not None:
        with warnings.catch_warnings():
            # Cutting long sentences is the point of the short sequences, not a problem with the data.
            warnings.simplefilter("ignore", DataWarning)
            short_dir, _, short_fingerprint = pretraining_setup.prepare_data(config.short_phase(), data_dir, log)
        short_batches, _ = pretraining_setup.open_batches(short_dir, config.short_phase())
        fingerprint["short_rows"] = short_fingerprint["rows"]
    model = pretraining_setup.build_model(config, tokenizer.vocab_size)
    optimizer = bert_optimizer(model.named_parameters(), **config.optimizer_settings())
    run = PretrainingRun(config, out_dir, lock, tokenizer, train_batches, short_batches, eval_batches, model,
                         optimizer, PretrainingPosition(total_steps=config.steps), fingerprint,
                         pretraining_setup.corpus_record(shard_dir), TrainingLog(out_dir / LOG_FILE), checkpoint)
    if checkpoint is None:
        # An attempt killed before its first checkpoint left the log of steps now lost, and perhaps half a
        # checkpoint: this run starts from nothing, so they go.
        remove_partial_files(out_dir)
        run.log.path.unlink(missing_ok=True)
        run.checkpoint_path.unlink(missing_ok=True)  # only there with overwrite=True
        _copy_vocabulary(vocab_path, out_dir)
    else:
        pretraining_setup.check_same_run(checkpoint, model, fingerprint, run.checkpoint_path)
        run.position, run.last_checkpoint_step = checkpoint.position, checkpoint.position.step
        if not (out_dir / VOCAB_FILE).is_file():  # deleted: the data's is the same (same sha256)
            _copy_vocabulary(vocab_path, out_dir)
            log(f"restored {out_dir / VOCAB_FILE} from {vocab_path}")
    return run


def _copy_vocabulary(vocab_path, out_dir):
    """The data's vocab.txt into the run folder, where fill-mask and attention read it."""
    with atomic_write(out_dir / VOCAB_FILE) as file:
        file.write(Path(vocab_path).read_bytes())


def _checkpoint_to_resume(out_dir, lock, resume, overwrite):
    path = out_dir / CHECKPOINT_FILE
    if resume and not path.is_file():
        raise CheckpointError(f"no checkpoint to resume in {out_dir} ({CHECKPOINT_FILE} is missing); start the "
                              "run without --resume")
    records = read_log(out_dir / LOG_FILE)
    if resume and records and not _begins_as_pretraining_logs_do(records):
        raise CheckpointError(f"{out_dir / LOG_FILE} is not a pretraining log (another command wrote it), so "
                              f"{out_dir} holds more than a pretraining run; to continue {path} with a new log, "
                              "move that file out of the folder first")
    if not resume and path.is_file() and not overwrite:
        raise CheckpointError(f"{out_dir} already holds a run; continue it with --resume, or start a new one in "
                              "another folder (--out DIR), or over this one with --overwrite")
    if not resume and not overwrite and not lock.took_over and not _begins_as_pretraining_logs_do(records):
        _check_holds_nothing(out_dir)  # else it holds a run of ours that died before its first checkpoint
    if not resume:
        return None
    checkpoint = load_checkpoint(path)
    if checkpoint.weights_only:
        raise CheckpointError(f"{path} holds the weights only (Adam's running averages were left out to keep "
                              "it small), so its run cannot continue; fine-tune, probe or fill masks with it, or "
                              "resume from the run's own checkpoint")
    return checkpoint


def _begins_as_pretraining_logs_do(records):
    """Whether a log's records begin with a pretraining run's "start" record (it holds the run's settings): a
    log written by `pretrain`, not by the user or by another command (fine-tuning's starts without them)."""
    return bool(records) and records[0].get("kind") == "start" and "config" in records[0]


def _check_holds_nothing(out_dir):
    """A new run writes only into a folder that is empty (but for the lock it took) or that a run of ours
    wrote: the report, the curves and the rest of what it writes would replace the user's files of those
    names."""
    theirs = sorted(entry.name for entry in out_dir.iterdir() if not entry.name.startswith(LOCK_FILE))
    if theirs:
        shown = ", ".join(theirs[:4]) + (", ..." if len(theirs) > 4 else "")
        raise WouldOverwrite(f"{out_dir} holds files that no pretraining run wrote ({shown}); give --out a new or "
                             "empty folder, or pass --overwrite to start a run there (its log.jsonl, vocab.txt, "
                             "report and curves replace files of the same names)")
