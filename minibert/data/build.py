"""The `data` command: corpus -> vocabulary -> pretraining shards, every step streamed and seeded."""

# The steps:
# 1. Corpus: a built-in one ("pydocs", "pydocs-large", "synthetic") is built into `out_dir/corpus.txt` if absent;
#    any other name is the path of a Google-format file (one sentence per line, a blank line between documents),
#    checked by the corpora package (empty file, no document break: errors; one-sentence documents: warnings
#    with file and line).
# 2. Vocabulary: `out_dir/vocab.txt`, trained with WordPiece's trainer unless it was trained here on this
#    corpus file with this size (recorded in `vocab.source.json`) or is the user's own (no record).
# 3. Tokens: the corpus is tokenized once into a memory-mapped `TokenStore` (token_store.py).
# 4. Split: a seeded share of the documents (`eval_fraction`) is held out for evaluation. Held-out documents
#    are never trained on: not as A, not as B, not as the random document of a NotNext pair.
# 5. Instances: `dupe_factor` passes over the shuffled training documents (one over the held-out ones), each
#    pass cutting them anew, as Google's `create_training_instances`; masked now (static) or later (dynamic).
# 6. Shards: `out_dir/build/pretraining-<task>-<masking>-<S>-<digest of every option>/`, written into a
#    temporary directory that replaces the old one only when complete. A rebuild with the same inputs and
#    options does nothing; builds with other options (a masking rate, predictions per sequence) keep their
#    own folders.

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from minibert.data.corpora import CORPORA, CORPUS_FILE, build_corpus
from minibert.data.documents import iter_tokenized_documents
from minibert.data.features import BATCH_FIELDS, UNMASKED_FIELDS, field_specs, instance_rows, mask_rows
from minibert.data.instances import InstanceConfig, iter_instances
from minibert.data.location import data_folder
from minibert.data.masking import MaskingConfig
from minibert.data.problems import warn
from minibert.data.shards import ShardWriter, read_manifest, write_manifest
from minibert.data.special_tokens import SpecialTokens
from minibert.data.token_store import TokenStore, TokenStoreWriter
from minibert.errors import ConfigError, DataError, MinibertError
from minibert.io.atomic import atomic_write
from minibert.io.folder_lock import FolderLock
from minibert.tokenizer.vocab import vocab_fingerprint

MASKING_MODES = ("dynamic", "static")
VOCAB_RECORD = "vocab.source.json"  # what a vocab.txt trained here was trained on
INSTANCES_PER_WRITE = 256  # instances turned into arrays at once: bounded memory, few NumPy calls


@dataclass(frozen=True)
class PretrainingDataConfig:
    instances: InstanceConfig = field(default_factory=InstanceConfig)
    masking_config: MaskingConfig = field(default_factory=MaskingConfig)
    masking: str = "dynamic"  # "dynamic": a new mask each time a row is served (RoBERTa); "static" (Google)
    dupe_factor: int | None = None  # passes over the training documents; None: 10 static (Google), 1 dynamic
    vocab_size: int = 8192  # size of a newly trained vocab.txt (BERT's English vocabulary: 30522)
    eval_fraction: float = 0.05  # share of the documents held out for evaluation
    seed: int = 12345  # Google's default random_seed
    rows_per_shard: int = 4096  # instances per .npz shard

    def __post_init__(self):
        if self.masking not in MASKING_MODES:
            raise ConfigError(f"masking={self.masking!r}; use 'dynamic' (RoBERTa, the default) or 'static'")
        if (self.dupe_factor is not None and self.dupe_factor < 1) or self.rows_per_shard < 1:
            raise ConfigError(f"dupe_factor={self.dupe_factor} and rows_per_shard={self.rows_per_shard} "
                              "must be at least 1")
        if not 0.0 <= self.eval_fraction < 0.5:
            raise ConfigError(f"eval_fraction={self.eval_fraction} must be in [0, 0.5); e.g. 0.05")

    @property
    def training_passes(self):
        """dupe_factor, or its default: dynamic masking draws new masks anyway, static needs copies."""
        if self.dupe_factor is not None:
            return self.dupe_factor
        return 10 if self.masking == "static" else 1


class Progress:
    """Print a line at most every `every` seconds, and always the last one."""

    def __init__(self, log, every=2.0):
        self.log, self.every, self.last = log, every, time.perf_counter()

    def __call__(self, message, force=False):
        now = time.perf_counter()
        if force or now - self.last >= self.every:
            self.log(message)
            self.last = now


def resolve_corpus(corpus, out_dir, log):
    """The path of the corpus file: a named corpus already in out_dir, or built there; a file, checked."""
    built = out_dir / CORPUS_FILE
    if corpus in CORPORA and built.is_file():
        return built
    return Path(build_corpus(corpus, out_dir, progress=log))


def resolve_vocabulary(corpus_path, out_dir, vocab_size, log):
    """`out_dir/vocab.txt`, trained on the corpus unless it is one trained here on that very corpus file
    with that size, or one the user put there; returns the tokenizer.

    Two corpus files in one folder share it, so a vocabulary trained here is recorded with its corpus, its
    size and its sha256 (`vocab.source.json`) and reused only for them: reusing a 25-token vocabulary of
    another file for `--vocab-size 1000` silently turned most words into [UNK]. A vocab.txt without a
    record, or changed since (its sha256 differs), is the user's own: it is used as it is, never replaced.
    """
    from minibert.tokenizer import BertTokenizer, train_wordpiece

    path, record_path = out_dir / "vocab.txt", out_dir / VOCAB_RECORD
    stat = os.stat(corpus_path)
    wanted = {"corpus": str(Path(corpus_path).resolve()), "corpus_bytes": stat.st_size,
              "corpus_mtime_ns": stat.st_mtime_ns, "vocab_size": vocab_size}
    recorded = _read_vocab_record(record_path) if path.is_file() else None
    ours = recorded is not None and recorded.get("vocab_sha256") == vocab_fingerprint(path)
    if path.is_file() and not ours:
        log(f"vocabulary: {path}, not trained here, used as it is (delete it to train one of {vocab_size} "
            f"tokens on {corpus_path})")
    elif ours and all(recorded.get(key) == value for key, value in wanted.items()):
        log(f"vocabulary: {path} (trained on {corpus_path}, {vocab_size} tokens)")
    else:
        if ours:
            log(f"{path} was trained on {recorded.get('corpus')} with {recorded.get('vocab_size')} tokens; "
                "training one for this corpus and size")
        log(f"training a WordPiece vocabulary of {vocab_size} tokens on {corpus_path}")
        started = time.perf_counter()
        record_path.unlink(missing_ok=True)  # no record while vocab.txt and the record disagree
        train_wordpiece([corpus_path], vocab_size, out=path, progress=Progress(log))
        with atomic_write(record_path) as file:
            record = {**wanted, "vocab_sha256": vocab_fingerprint(path)}
            file.write((json.dumps(record, indent=1) + "\n").encode("utf-8"))
        log(f"wrote {path} in {time.perf_counter() - started:.1f} s")
    return BertTokenizer(path)


def _read_vocab_record(path):
    """The record of what vocab.txt was trained on, or None if absent or damaged."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def fingerprint(corpus_path, vocab_path):
    """What the shards are built from: the corpus' size and time (hashing GBs is slow), the vocab's sha256."""
    stat = os.stat(corpus_path)
    return {"corpus": str(corpus_path), "corpus_bytes": stat.st_size, "corpus_mtime_ns": stat.st_mtime_ns,
            "vocab_sha256": vocab_fingerprint(vocab_path)}


def split_documents(count, eval_fraction, rng):
    """(train, eval) document indices: a seeded, random `eval_fraction` of `count` documents held out."""
    order = rng.permutation(count)
    held_out = max(2, int(round(count * eval_fraction))) if eval_fraction > 0 else 0
    if count - held_out < 2:  # each split needs two documents, for NotNext's random other document
        if held_out:
            warn(f"the corpus has {count} documents, too few to hold some out for evaluation; "
                 "training on all of them")
        held_out = 0
    return np.sort(order[held_out:]), np.sort(order[:held_out])


def write_split(writer, documents, passes, rng, special_tokens, config, progress):
    """Create the instances of `passes` passes over `documents` and stream them into `writer`."""
    pending, written, started = [], 0, time.perf_counter()

    def write_pending():
        rows = instance_rows(pending, config.instances.max_seq_length, special_tokens.pad_id)
        if config.masking == "static":
            rows = mask_rows(rows, rng, special_tokens, config.masking_config)
        writer.write(rows)
        pending.clear()

    for number in range(passes):
        # Google shuffles the documents once; a new order for each pass mixes the passes' instances better.
        order = rng.permutation(len(documents))
        for instance in iter_instances(documents, order, rng, special_tokens, config.instances):
            pending.append(instance)
            if len(pending) == INSTANCES_PER_WRITE:
                written += len(pending)
                write_pending()
                progress(f"{writer.split}: pass {number + 1}/{passes}, {written:,} instances "
                         f"({written / (time.perf_counter() - started):,.0f}/s)")
    if pending:
        write_pending()
    return writer.close()


def build_pretraining_data(corpus, out_dir=None, *, max_seq_length=128, max_predictions_per_seq=20,
                           masked_lm_prob=0.15, short_seq_prob=0.1, sentence_task="nsp",
                           whole_word_mask=True, masking="dynamic", dupe_factor=None, vocab_size=8192,
                           eval_fraction=0.05, seed=12345, rows_per_shard=4096, force=False, log=print):
    """Build (or find up to date) the pretraining shards of `corpus`; returns their directory.

    corpus: a name of CORPORA ("pydocs", ...) or the path of a corpus file. out_dir: where corpus.txt,
    vocab.txt and build/ go; default `<data folder>/<name>` for a named corpus (data/location.py), the corpus
    file's folder otherwise. The shard directory is what `PretrainingBatches` reads.
    """
    config = PretrainingDataConfig(
        instances=InstanceConfig(max_seq_length, short_seq_prob, sentence_task),
        masking_config=MaskingConfig(masked_lm_prob, max_predictions_per_seq, whole_word=whole_word_mask),
        masking=masking, dupe_factor=dupe_factor, vocab_size=vocab_size, eval_fraction=eval_fraction,
        seed=seed, rows_per_shard=rows_per_shard)
    corpus = os.fspath(corpus)
    if corpus not in CORPORA and not Path(corpus).is_file():
        raise DataError(f"corpus {corpus!r} is neither {' nor '.join(CORPORA)} nor an existing file; "
                        "give a text file with one sentence per line and a blank line between documents")
    if out_dir is None:
        out_dir = data_folder() / corpus if corpus in CORPORA else Path(corpus).parent
    out_dir = Path(out_dir)
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        # Another process building into the same folder would remove this one's shards as it replaced them
        # with its own: the second waits, then finds the data up to date.
        with FolderLock(out_dir, "data build", wait=True, notify=log):
            return _build(corpus, out_dir, config, force, log)
    except BaseException:
        if created and not any(path.is_file() for path in out_dir.rglob("*")):
            shutil.rmtree(out_dir, ignore_errors=True)  # a folder this call made and filled with nothing
        raise


def _build(corpus, out_dir, config, force, log):
    """Steps 1-6 listed at the top of this module into `out_dir`, which exists."""
    max_seq_length = config.instances.max_seq_length
    max_predictions_per_seq = config.masking_config.max_predictions_per_seq
    corpus_path = resolve_corpus(corpus, out_dir, log)
    tokenizer = resolve_vocabulary(corpus_path, out_dir, config.vocab_size, log)
    special_tokens = SpecialTokens.from_tokenizer(tokenizer)
    config.masking_config.check_sequence_length(max_seq_length)

    options = asdict(config)
    shard_dir = out_dir / "build" / shard_folder_name(options)
    sources = fingerprint(corpus_path, out_dir / "vocab.txt")
    if not force and is_up_to_date(shard_dir, options, sources):
        log(f"pretraining data in {shard_dir} is up to date")
        return shard_dir

    shard_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=shard_dir.parent, prefix=".building-") as work:
        work = Path(work)
        store = tokenize_corpus(corpus_path, tokenizer, work / "tokens", max_seq_length - 3, log)
        rng = np.random.default_rng(config.seed)
        train, held_out = split_documents(len(store), config.eval_fraction, rng)
        fields = field_specs(max_seq_length, max_predictions_per_seq)
        stored = UNMASKED_FIELDS if config.masking == "dynamic" else BATCH_FIELDS
        fields = {name: fields[name] for name in stored}
        shards = work / "shards"
        shards.mkdir()
        progress = Progress(log)
        splits = {}
        for split, documents, passes in (("train", train, config.training_passes), ("eval", held_out, 1)):
            if len(documents):
                writer = ShardWriter(shards, split, fields, config.rows_per_shard)
                splits[split] = write_split(writer, store.subset(documents), passes, rng, special_tokens,
                                            config, progress)
                splits[split]["documents"] = len(documents)
                log(f"{split}: {splits[split]['rows']:,} instances from {len(documents):,} documents "
                    f"in {len(splits[split]['shards'])} shard(s)")
        write_manifest(shards, {
            "options": options, "sources": sources, "special_tokens": special_tokens.to_dict(),
            "fields": {name: {"dtype": np.dtype(dtype).name, "shape": list(shape)}
                       for name, (dtype, shape) in fields.items()},
            "splits": splits})
        if shard_dir.exists():
            shutil.rmtree(shard_dir)
        os.replace(shards, shard_dir)
    log(f"pretraining data: {shard_dir}")
    return shard_dir


def shard_folder_name(options):
    """`pretraining-nsp-dynamic-128-3f9c0a1e`: the options a reader looks for, then a digest of all of them.

    The digest keeps apart builds that differ only in an option the name leaves out. Without it the `data`
    command (20 predictions per sequence) and `pretrain --preset mini` (40) shared one folder, and each
    rebuilt the other's shards on every run.
    """
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    return (f"pretraining-{options['instances']['sentence_task']}-{options['masking']}-"
            f"{options['instances']['max_seq_length']}-{digest}")


def is_up_to_date(shard_dir, options, sources):
    try:
        manifest = read_manifest(shard_dir)
    except MinibertError:
        return False
    return manifest.get("options") == options and manifest.get("sources") == sources


def tokenize_corpus(corpus_path, tokenizer, directory, max_sentence_tokens, log):
    """Stream the corpus through the tokenizer into a `TokenStore` in `directory`."""
    progress, started = Progress(log), time.perf_counter()
    with TokenStoreWriter(directory) as writer:
        for _, sentences in iter_tokenized_documents(corpus_path, tokenizer, max_sentence_tokens):
            writer.add_document(sentences)
            progress(f"tokenizing {corpus_path}: {writer.documents:,} documents, {writer.tokens:,} tokens")
    seconds = time.perf_counter() - started
    log(f"tokenized {writer.documents:,} documents, {writer.sentences:,} sentences, {writer.tokens:,} tokens "
        f"in {seconds:.1f} s ({writer.tokens / max(seconds, 1e-9):,.0f} tokens/s)")
    return TokenStore(directory)
