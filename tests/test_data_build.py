"""The `data` command (minibert/data/build.py, minibert/cli/data.py): corpus -> vocabulary -> shards."""

import os
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

from minibert.cli import main
from minibert.data.build import build_pretraining_data
from minibert.data.problems import DataWarning
from minibert.data.shards import read_manifest, read_shard
from minibert.errors import DataError, TokenizerError

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS_PER_DOCUMENT = 8


def word(topic, k):
    return f"t{topic}w{k}"


def write_corpus(directory, documents, sentences=6, topics=None, seed=0):
    """A corpus whose document d uses only the words `t<t>w<k>` of its topic t = d % topics (by default every
    document is its own topic), and a vocab.txt where each is one token: a token id tells its topic."""
    topics = topics or documents
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "corpus.txt", "w", encoding="utf-8") as file:
        for d in range(documents):
            for _ in range(sentences):
                picks = rng.integers(0, WORDS_PER_DOCUMENT, int(rng.integers(3, 12)))
                file.write(" ".join(word(d % topics, k) for k in picks) + " .\n")
            file.write("\n")
    vocab = SPECIALS + ["."] + [word(t, k) for t in range(topics) for k in range(WORDS_PER_DOCUMENT)]
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return directory / "corpus.txt"


def document_of(token_ids):
    """Document number of each text token id (see write_corpus); -1 for specials and '.'."""
    text = token_ids - len(SPECIALS) - 1
    return np.where(text >= 0, text // WORDS_PER_DOCUMENT, -1)


def split_rows(shard_dir, split):
    manifest = read_manifest(shard_dir)
    fields = {name: (np.dtype(spec["dtype"]), tuple(spec["shape"]))
              for name, spec in manifest["fields"].items()}
    shards = manifest["splits"][split]["shards"]
    rows = [read_shard(shard_dir / shard["file"], fields, shard["rows"]) for shard in shards]
    return {name: np.concatenate([r[name] for r in rows]) for name in fields}


def quiet_build(*args, **kwargs):
    return build_pretraining_data(*args, log=lambda message: None, **kwargs)


def test_held_out_documents_are_never_trained_on(tmp_path):
    """With 60 documents and eval_fraction 0.1, 6 documents are held out; no token of theirs appears in any
    training instance (not as A, not as B, not as a NotNext random document), and every token id is in the
    vocabulary."""
    corpus = write_corpus(tmp_path, 60)
    shard_dir = quiet_build(corpus, tmp_path, max_seq_length=32, eval_fraction=0.1, masking="dynamic")
    train, held_out = split_rows(shard_dir, "train"), split_rows(shard_dir, "eval")
    train_documents = set(document_of(train["input_ids"]).ravel().tolist()) - {-1}
    eval_documents = set(document_of(held_out["input_ids"]).ravel().tolist()) - {-1}
    assert len(eval_documents) == 6 and len(train_documents) == 54
    assert not train_documents & eval_documents
    vocab_size = len(SPECIALS) + 1 + 60 * WORDS_PER_DOCUMENT
    assert train["input_ids"].max() < vocab_size and held_out["input_ids"].min() >= 0
    assert (train["input_mask"].sum(axis=1) <= 32).all()


def test_static_masking_stores_googles_fields(tmp_path):
    """--masking static: the shards carry Google's seven fields, with dupe_factor passes over the training
    documents (about dupe_factor times the instances of one pass)."""
    corpus = write_corpus(tmp_path, 20)
    once = quiet_build(corpus, tmp_path, max_seq_length=32, masking="static", dupe_factor=1)
    rows_once = read_manifest(once)["splits"]["train"]["rows"]
    shard_dir = quiet_build(corpus, tmp_path, max_seq_length=32, masking="static", dupe_factor=4)
    manifest = read_manifest(shard_dir)
    assert set(manifest["fields"]) == {"input_ids", "input_mask", "segment_ids", "masked_lm_positions",
                                       "masked_lm_ids", "masked_lm_weights", "next_sentence_labels"}
    assert 3 * rows_once <= manifest["splits"]["train"]["rows"] <= 5 * rows_once
    rows = split_rows(shard_dir, "train")
    assert (rows["input_ids"] == SPECIALS.index("[MASK]")).any()


def test_same_seed_gives_the_same_shards(tmp_path):
    """Two builds with one seed write identical arrays; another seed writes other ones."""
    results = []
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        corpus = write_corpus(tmp_path / name, 20)
        shard_dir = quiet_build(corpus, tmp_path / name, max_seq_length=32, seed=seed)
        results.append(split_rows(shard_dir, "train"))
    for field in results[0]:
        np.testing.assert_array_equal(results[0][field], results[1][field])
    assert not np.array_equal(results[0]["input_ids"], results[2]["input_ids"])


def test_a_second_build_with_the_same_inputs_does_nothing(tmp_path):
    """The second call finds the shards up to date and leaves them alone; force=True rebuilds them."""
    corpus = write_corpus(tmp_path, 10)
    shard_dir = quiet_build(corpus, tmp_path, max_seq_length=32)
    stamp = os.stat(shard_dir / "train-00000.npz").st_mtime_ns
    messages = []
    build_pretraining_data(corpus, tmp_path, max_seq_length=32, log=messages.append)
    assert any("up to date" in message for message in messages)
    assert os.stat(shard_dir / "train-00000.npz").st_mtime_ns == stamp
    quiet_build(corpus, tmp_path, max_seq_length=32, force=True)
    assert os.stat(shard_dir / "train-00000.npz").st_mtime_ns != stamp


def test_builds_with_other_options_keep_their_own_shards(tmp_path):
    """`data` (20 predictions per sequence) and `pretrain --preset mini` (40) build from the same corpus: each
    keeps its folder, so going back to the first finds it up to date instead of rebuilding over the second."""
    corpus = write_corpus(tmp_path, 10)
    first = quiet_build(corpus, tmp_path, max_seq_length=32, max_predictions_per_seq=5)
    second = quiet_build(corpus, tmp_path, max_seq_length=32, max_predictions_per_seq=8)
    assert first != second
    messages = []
    again = build_pretraining_data(corpus, tmp_path, max_seq_length=32, max_predictions_per_seq=5,
                                   log=messages.append)
    assert again == first and any("up to date" in message for message in messages)
    assert read_manifest(second)["options"]["masking_config"]["max_predictions_per_seq"] == 8


def test_bad_corpora_get_clear_errors_and_warnings(tmp_path):
    """Empty corpus, no document break, missing file: DataError naming the file. A one-sentence document:
    a warning with file and line. A vocabulary without [MASK]: an error naming [MASK]."""
    cases = {"empty": "\n\n", "one_document": "a b .\nc d .\n"}
    for name, text in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "corpus.txt").write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=r"empty/corpus.txt is empty"):
        quiet_build(tmp_path / "empty" / "corpus.txt")
    with pytest.raises(DataError, match="no document breaks"):
        quiet_build(tmp_path / "one_document" / "corpus.txt")
    with pytest.raises(DataError, match="missing.txt"):
        quiet_build(tmp_path / "missing.txt")

    corpus = write_corpus(tmp_path / "single", 4)
    with open(corpus, "a", encoding="utf-8") as file:
        file.write(f"{word(0, 1)} .\n")  # a fifth document of one sentence, at line 4 * 7 + 1
    with pytest.warns(UserWarning, match=r"corpus.txt:29: a document of one sentence"):
        quiet_build(corpus, max_seq_length=32)

    corpus = write_corpus(tmp_path / "no_mask", 4)
    vocab = corpus.parent / "vocab.txt"
    vocab.write_text(vocab.read_text(encoding="utf-8").replace("[MASK]\n", ""), encoding="utf-8")
    with pytest.raises(TokenizerError, match=r"\[MASK\]"):
        quiet_build(corpus)


def test_too_few_predictions_for_long_sequences_warns(tmp_path):
    """max_predictions_per_seq 20 with 512-token sequences (15% asks 77): a warning, and the build goes on."""
    corpus = write_corpus(tmp_path, 6)
    with pytest.warns(DataWarning, match="77 predictions"):
        quiet_build(corpus, max_seq_length=512)


def test_command_line_builds_and_reports_errors(tmp_path, capsys):
    """`python -m minibert data --corpus FILE --out DIR` prints the shard directory and exits 0; a missing
    corpus prints one `error:` line and exits 2."""
    corpus = write_corpus(tmp_path, 8)
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "--corpus", str(corpus), "--out", str(tmp_path), "--max-seq-length", "32",
              "--masking", "static", "--dupe-factor", "2", "--sentence-task", "sop"])
    assert exit_info.value.code == 0
    shard_dir = capsys.readouterr().out.strip()
    assert Path(shard_dir).name.startswith("pretraining-sop-static-32-")
    assert read_manifest(shard_dir)["options"]["dupe_factor"] == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "--corpus", str(tmp_path / "nothing.txt")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("error: corpus")


def peak_memory_of_build(directory, documents):
    corpus = write_corpus(directory, documents, sentences=12, topics=50)
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shard_dir = quiet_build(corpus, directory, max_seq_length=64, rows_per_shard=256, eval_fraction=0.01)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, os.path.getsize(corpus), read_manifest(shard_dir)["splits"]["train"]["rows"]


def test_streaming_keeps_memory_bounded(tmp_path, monkeypatch):
    """A corpus 20x larger (~50 KB -> ~1 MB, one vocabulary) builds with about the same peak of Python
    memory (traced by tracemalloc): the peak grows by less than 1.5x, and by less than a quarter of the
    corpus' growth (holding the tokens as Python lists would take many times the corpus), because documents
    are read one at a time, tokens live in memory-mapped files and shards are written as they fill.
    The corpus check of the corpora package (tested there; it hashes the file in fixed 1 MB blocks) is
    skipped, so the peak is that of tokenizing, creating instances and writing shards."""
    monkeypatch.setattr("minibert.data.build.build_corpus", lambda corpus, out_dir, progress: corpus)
    small_peak, small_bytes, small_rows = peak_memory_of_build(tmp_path / "small", 100)
    large_peak, large_bytes, large_rows = peak_memory_of_build(tmp_path / "large", 2000)
    assert large_bytes > 19 * small_bytes and large_rows > 19 * small_rows
    assert large_peak < 1.5 * small_peak
    assert large_peak - small_peak < (large_bytes - small_bytes) / 4
