"""What several test modules share: tolerances and finite differences for the kernels, the small pretraining
corpus and its run settings, the command line in a child process, one byte-mutation strategy for the
checkpoint readers, the JSON files of a model folder (tokenizer.json, the sentence-transformers layout).
Test modules import from here and never from each other; fixtures are in conftest.py.
"""

import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from minibert.data import build_pretraining_data
from minibert.data.corpora.corpus_file import write_corpus
from minibert.data.corpora.synthetic import corpus_documents
from minibert.train.logs import read_log
from minibert.train.pretraining_config import PretrainingConfig
from minibert.train.progress import ProgressLine

ROOT = Path(__file__).resolve().parent.parent


# ----- kernels: tolerances, finite differences, shapes (test_kernels.py, test_fused.py) -----

FLOATS = [np.float32, np.float64]
TOLERANCE = {np.float32: (1e-5, 1e-6), np.float64: (1e-12, 1e-13)}  # (rtol, atol per unit of magnitude)


def assert_matches(actual, expected, dtype, scale=None):
    """actual == expected up to the dtype's tolerance; atol grows with the largest magnitude (`scale`)."""
    rtol, atol = TOLERANCE[dtype]
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    assert actual.dtype == dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)


def numeric_gradient(f, x, grad_out, step=1e-6, batched=True):
    """Central finite difference of L(x) = sum(f(x) * grad_out) with respect to every entry of x (float64).

    The 2 * x.size nudged copies of x go through f in ONE call when f works row by row (`batched`): an extra
    leading axis is just more rows. That keeps the Numba kernels' parallel start-up cost to one call.
    """
    n = x.size
    nudges = np.eye(n).reshape((n,) + x.shape) * step  # (n, *x.shape)
    nudged = np.concatenate([x + nudges, x - nudges])  # (2n, *x.shape)
    outputs = f(nudged) if batched else np.stack([f(v) for v in nudged])
    # difference the outputs entry by entry before summing: the sum of two large totals would round worse
    return (((outputs[:n] - outputs[n:]) * grad_out).reshape(n, -1).sum(axis=1) / (2 * step)).reshape(x.shape)


def assert_gradient(analytic, f, x, grad_out, atol=1e-7, step=1e-6, batched=True):
    """analytic == the finite difference, up to atol plus the difference's own rounding error: each output
    carries ~eps * |f| of rounding, which the difference divides by the step (this matters for
    log-softmax, whose masked outputs are about -1e4)."""
    rounding = np.finfo(np.float64).eps * np.max(np.abs(f(x))) * np.sum(np.abs(grad_out)) / step
    numeric = numeric_gradient(f, x, grad_out, step, batched)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=atol + rounding)


# Shapes: 1 to 3 leading axes of size 1-4, and a last axis of 1-9 entries.
leading_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
last_sizes = st.integers(1, 9)
seeds = st.integers(0, 2**32 - 1)


# ----- one pretraining step's numbers (test_threads.py, test_fused.py) -----


def loss_and_gradients_of_a_step(model, batch_size, seq_len, predictions):
    """[loss, then every parameter's gradient] of one pretraining step of `model` on a random batch (the same
    batch for the same sizes)."""
    from minibert.model import pretraining_loss

    vocab = model.config.vocab_size
    rng = np.random.default_rng(0)
    ids = rng.integers(5, vocab, size=(batch_size, seq_len))
    positions = rng.integers(1, seq_len, size=(batch_size, predictions))
    targets = rng.integers(5, vocab, size=(batch_size, predictions))
    labels = rng.integers(0, 2, size=batch_size)
    output = model(ids, np.zeros_like(ids), np.ones_like(ids), masked_positions=positions)
    loss, _, _ = pretraining_loss(output, targets, np.ones((batch_size, predictions)), labels)
    loss.backward()
    return [loss.data] + [parameter.grad for parameter in model.parameters()]


# ----- a small model with odd sizes, a padded batch, random weights (test_model.py, test_fast.py, ...) -----

def odd_config(**overrides):
    """A small BertConfig of odd sizes, so that a transposed weight or a swapped axis fails loudly rather than
    broadcasting."""
    from minibert.config import BertConfig

    values = dict(vocab_size=23, hidden_size=12, num_hidden_layers=2, num_attention_heads=3,
                  intermediate_size=10, max_position_embeddings=9)
    return BertConfig(**{**values, **overrides})


def padded_batch(seed=0, batch=3, seq_len=7, vocab_size=23):
    """Random ids, two segments, and rows of lengths seq_len, seq_len-2, 2 (padding after)."""
    rng = np.random.default_rng(seed)
    lengths = np.array([seq_len, seq_len - 2, 2][:batch])
    attention_mask = (np.arange(seq_len) < lengths[:, None]).astype(np.int64)
    input_ids = rng.integers(1, vocab_size, size=(batch, seq_len)) * attention_mask
    token_type_ids = (np.arange(seq_len) >= lengths[:, None] // 2).astype(np.int64) * attention_mask
    return input_ids, token_type_ids, attention_mask


def randomize(model, seed=1):
    """Random values everywhere (LayerNorm weights near 1, biases not 0), so no term hides behind an initial
    0 or 1."""
    rng = np.random.default_rng(seed)
    for name, parameter in model.named_parameters():
        noise = rng.standard_normal(parameter.shape)
        parameter.data[...] = 1 + 0.2 * noise if name.endswith("LayerNorm.weight") else 0.3 * noise
    return model


def whole_loss_gradcheck(model):
    """gradcheck of MLM + NSP loss with respect to every parameter of a float64 BertForPreTraining of
    vocabulary 13 and 6 positions (odd_config(vocab_size=13, ..., max_position_embeddings=6)), in training
    mode: a padded batch with a zero-weight masked slot; the dropout draws replayed for every evaluation;
    large tensors sampled (25 entries each), none skipped."""
    from minibert import gradcheck
    from minibert.model import pretraining_loss

    ids, types, mask = padded_batch(seed=5, batch=3, seq_len=5, vocab_size=13)
    positions = np.array([[1, 3], [2, 0], [1, 0]])
    labels, weights = np.array([[4, 7], [9, 0], [12, 0]]), np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    dropout_state = model.rng.bit_generator.state
    names, params = zip(*model.named_parameters(), strict=True)

    def loss(*_):
        model.rng.bit_generator.state = dropout_state  # the same dropout draws at every evaluation
        output = model(ids, types, mask, masked_positions=positions)
        return pretraining_loss(output, labels, weights, np.array([0, 1, 1]))[0]

    return gradcheck(loss, *params, names=names, max_entries=25)


# ----- the small pretraining corpus and its runs (test_train.py and the run tests) -----

# threads=1: Numba's threads only slow arrays this small down.
SMALL_RUN = dict(model="tiny", vocab_size=1000, max_seq_length=32, max_predictions_per_seq=5, batch_size=8,
                 minutes=None, threads=1, log_every=1, eval_every=4, eval_batches=2, checkpoint_every=3)


def make_small_corpus(folder):
    """A 120-document corpus from the synthetic grammar, with its vocabulary and 32-token shards."""
    documents = corpus_documents(seed=7, num_documents=120)
    corpus = write_corpus(folder, "test", documents, progress=lambda _: None)
    build_pretraining_data(corpus, folder, max_seq_length=32, max_predictions_per_seq=5, vocab_size=1000,
                           log=lambda _: None)
    return corpus


def small_config(corpus, **changes):
    return PretrainingConfig(corpus=str(corpus), **{**SMALL_RUN, **changes})


def quiet():
    return {"progress": ProgressLine(io.StringIO(), live=False), "log": lambda _: None,
            "show_examples": False}


def step_losses(run_dir):
    """Every step's loss, in order, from a run's log."""
    return [loss for record in read_log(run_dir / "log.jsonl") if record["kind"] == "train"
            for loss in record["losses"]]


# ----- the command line in a child process -----

# The small corpus's shapes, as command-line options and as PretrainingConfig fields.
SMALL = {"max_seq_length": 32, "max_predictions_per_seq": 5, "batch_size": 8, "vocab_size": 1000,
         "eval_batches": 1}


def small_options(corpus, **changes):
    settings = {**SMALL, **changes}
    options = ["--preset", "tiny", "--corpus", str(corpus), "--data-dir", str(corpus.parent)]
    for name, value in settings.items():
        options += ["--" + name.replace("_", "-"), str(value)]
    return options


def minibert(*arguments, **popen):
    """Start `python -m minibert ...` in the repository; returns the Popen."""
    return subprocess.Popen([sys.executable, "-m", "minibert", *map(str, arguments)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def finished(process, timeout=300):
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, stdout, stderr


def assert_one_error_line(returncode, stderr, fragment):
    """A command refused its input as it should: status 2, no traceback, the last line `error: ...` holding
    `fragment`."""
    lines = stderr.strip().splitlines()
    assert returncode == 2, stderr
    assert "Traceback" not in stderr
    assert lines[-1].startswith("error: ") and fragment in lines[-1], stderr


CHILD = """
import os, runpy, signal, sys
import numpy as np
import minibert.train.checkpointing as checkpointing
import minibert.train.pretraining_loop as loop

# The child sends itself SIGNAL (SIGINT or SIGKILL) after training step SIGNAL_AFTER_STEP (the step's count
# in the run), or halfway through this process's SIGNAL_IN_SAVE-th checkpoint write (its 20th array written,
# the rest not): the signal lands exactly there, whatever the machine's speed.
signal_name = os.environ.get("SIGNAL", "")
after_step, in_save_number = int(os.environ.get("SIGNAL_AFTER_STEP", 0)), int(os.environ.get("SIGNAL_IN_SAVE", 0))
real_save, real_write_array = checkpointing.save_arrays, np.lib.format.write_array
real_show = loop.show_progress
saves, in_save = [0], [None]

def send_the_signal():
    print("MARK signalled", flush=True)
    os.kill(os.getpid(), getattr(signal, signal_name))

def save_arrays(path, arrays, meta):  # count the arrays of this checkpoint as they are written
    saves[0], in_save[0] = saves[0] + 1, 0
    try:
        return real_save(path, arrays, meta)
    finally:
        in_save[0] = None

def write_array(file, array, **options):
    real_write_array(file, array, **options)
    if in_save[0] is not None:
        in_save[0] += 1
        if in_save[0] == 20 and saves[0] == in_save_number:
            send_the_signal()

def show_progress(progress, run, *args):  # called once a step has been taken and counted
    real_show(progress, run, *args)
    if run.position.step == after_step:
        send_the_signal()

checkpointing.save_arrays, np.lib.format.write_array = save_arrays, write_array
loop.show_progress = show_progress
sys.argv = ["minibert", *sys.argv[1:]]
runpy.run_module("minibert", run_name="__main__", alter_sys=True)
"""


class Child:
    """`python -m minibert pretrain ...` running. It sends itself `signal_name` ("SIGINT" or "SIGKILL") once
    step `after_step` is done, or halfway through its `in_save`-th checkpoint write, and prints the mark
    "signalled" just before."""

    def __init__(self, arguments, signal_name="", after_step=0, in_save=0):
        paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "SIGNAL": signal_name,
                       "SIGNAL_AFTER_STEP": str(after_step), "SIGNAL_IN_SAVE": str(in_save)}
        self.process = subprocess.Popen([sys.executable, "-c", CHILD, *arguments], env=environment,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.marks = []

    def finish(self, timeout=300):
        """Wait for the exit; return (status, stderr) and keep the marks. A child still running after
        `timeout` is killed."""
        try:
            stdout, stderr = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        self.marks = [line[5:].strip() for line in stdout.splitlines() if line.startswith("MARK ")]
        return self.process.returncode, stderr


# ----- hostile checkpoint files (test_safetensors.py, test_npz.py) -----

@st.composite
def byte_mutations(draw, contents, focus=None):
    """One of the valid files `contents` with 1-4 runs of bytes flipped, overwritten, inserted, deleted or
    cut off. `focus(content)`, if given, is the end of the region (the header) that gets 3/4 of the hits."""
    content = bytearray(draw(st.sampled_from(contents)))
    for _ in range(draw(st.integers(1, 4))):
        if not content:
            break
        in_focus = focus is not None and (draw(st.booleans()) or draw(st.booleans()))
        limit = max(1, min(focus(content), len(content))) if in_focus else len(content)
        position = draw(st.integers(0, limit - 1))
        kind = draw(st.sampled_from(["flip", "overwrite", "insert", "delete", "truncate"]))
        if kind == "flip":
            content[position] ^= 1 << draw(st.integers(0, 7))
        elif kind == "overwrite":
            content[position: position + 8] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "insert":
            content[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del content[position: position + draw(st.integers(1, 8))]
        else:
            del content[position:]
    return bytes(content)


# ----- the JSON files of a model folder (test_tokenizer_json.py, test_sentence_encoder.py, test_model_folder_json.py)

def tokenizer_json(tokens, special=5):
    """A WordPiece tokenizer.json as HuggingFace's tokenizers writes it for BERT, over `tokens` (id = position),
    the first `special` of them BERT's special tokens."""
    return {
        "version": "1.0",
        "added_tokens": [{"id": index, "content": token, "special": True, "normalized": False}
                         for index, token in enumerate(tokens[:special])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {token: index for index, token in enumerate(tokens)}},
    }


def write_tokenizer_json(folder, tokens, changes=()):
    """Write tokenizer_json(tokens) with `changes` ((part, key, value); key None replaces the part) into folder."""
    folder.mkdir(parents=True, exist_ok=True)
    data = copy.deepcopy(tokenizer_json(tokens))
    for part, key, value in changes:
        if key is None:
            data[part] = value
        else:
            data[part][key] = value
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


# all-MiniLM-L6-v2's modules.json: the encoder, mean pooling, then normalisation to length 1.
MINILM_MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


def write_layout(folder, modules=MINILM_MODULES, pooling=None, settings=None):
    """A sentence-transformers layout in folder: modules.json, 1_Pooling/config.json (mean pooling, with
    `pooling`'s changes) and, if given, sentence_bert_config.json."""
    pooling = {"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True, **(pooling or {})}
    (folder / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (folder / "modules.json").write_text(json.dumps(modules))
    if settings is not None:
        (folder / "sentence_bert_config.json").write_text(json.dumps(settings))
    return folder


# ----- the attention views at the largest sizes they accept (test_attention_sizes.py, test_pages_in_browser.py)

def wide_model_folder(folder, words):
    """A from_pretrained folder of a model as deep and wide in heads as BERT-base (12 layers x 12 heads, 512
    positions) but of hidden size 24, with random weights: BERT-base's pictures at a small model's cost."""
    from minibert.model import BertConfig, BertForPreTraining
    from minibert.tokenizer import BertTokenizer
    from minibert.tokenizer.vocab import SPECIAL_TOKENS

    tokenizer = BertTokenizer.from_vocab_list([*SPECIAL_TOKENS, *words])
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=24, num_hidden_layers=12,
                        num_attention_heads=12, intermediate_size=48, max_position_embeddings=512)
    BertForPreTraining(config, seed=5).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
