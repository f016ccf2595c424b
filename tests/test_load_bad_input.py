"""Load: bench/load.py's streaming jobs at small sizes. Tokenizing a file a chunk of lines at a time gives
exactly the tokens of tokenizing it whole, and the memory both jobs use does not grow with the input (the
full-size run, 100 MB of text and 20x pydocs, is `python bench/load.py`)."""

import importlib.util
import tracemalloc
from pathlib import Path

import pytest

from minibert.data.shards import read_manifest
from minibert.tokenizer import SPECIAL_TOKENS, BertTokenizer

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "."]


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return load_bench()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A corpus of 300 short documents of 4 sentences, and a vocabulary of its words."""
    folder = tmp_path_factory.mktemp("load")
    lines = []
    for document in range(300):
        for sentence in range(4):
            words = [WORDS[(document * 7 + sentence * 3 + k) % 10] for k in range(5 + sentence)]
            lines.append(" ".join(words) + " .")
        lines.append("")
    (folder / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "vocab.txt").write_text("\n".join([*SPECIAL_TOKENS, *WORDS]) + "\n", encoding="utf-8")
    return folder


def test_repeat_file_writes_whole_lines_and_separate_copies(bench, source, tmp_path):
    """A size-limited copy ends at a line end within the limit; whole copies stay separate documents."""
    written = bench.repeat_file(source / "corpus.txt", tmp_path / "cut.txt", size_bytes=10_000)
    data = (tmp_path / "cut.txt").read_bytes()
    assert len(data) == written <= 10_000 and data.endswith(b"\n") and written > 9_900
    bench.repeat_file(source / "corpus.txt", tmp_path / "three.txt", copies=3)
    text = (tmp_path / "three.txt").read_text(encoding="utf-8")
    assert text.count("\n\n") == 3 * 300 and text.startswith(text[: len(text) // 3])


def test_streamed_tokens_are_the_whole_text_tokens(bench, source, tmp_path, monkeypatch):
    """Tokenizing in chunks of lines (here 7, so chunks end mid-document) counts exactly the tokens of
    tokenizing the whole file at once."""
    monkeypatch.setattr(bench, "LINES_PER_CHUNK", 7)
    tokenizer = BertTokenizer(source / "vocab.txt")
    path = source / "corpus.txt"
    lines, tokens = bench.tokenize_file(tokenizer, path)
    text = path.read_text(encoding="utf-8")
    assert (lines, tokens) == (text.count("\n"), len(tokenizer.tokenize(text)))


def _peak(function):
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_tokenizing_memory_does_not_grow_with_the_text(bench, source, tmp_path, monkeypatch):
    """Streaming 16x more text (in chunks of 500 lines) peaks at about the same Python memory (within 1.5x
    plus 0.5 MB), below what holding the whole text at once would take."""
    monkeypatch.setattr(bench, "LINES_PER_CHUNK", 500)
    tokenizer = BertTokenizer(source / "vocab.txt")
    results = {}
    for copies in (4, 64):
        path = tmp_path / f"text-{copies}.txt"
        bench.repeat_file(source / "corpus.txt", path, copies=copies)
        (_, tokens), peak = _peak(lambda path=path: bench.tokenize_file(tokenizer, path))
        results[copies] = (path.stat().st_size, tokens, peak)
    (_, small_tokens, small_peak), (large_bytes, large_tokens, large_peak) = results[4], results[64]
    assert large_tokens == 16 * small_tokens
    assert large_peak < 1.5 * small_peak + 500_000
    assert large_peak < large_bytes / 2


def test_building_data_memory_does_not_grow_with_the_corpus(bench, source, tmp_path):
    """Building from 6x the corpus writes 6x the instances at about the same peak (within 1.5x plus 1 MB)."""
    results = {}
    for copies in (1, 6):
        corpus = tmp_path / f"corpus-{copies}.txt"
        bench.repeat_file(source / "corpus.txt", corpus, copies=copies)
        out_dir = tmp_path / f"out-{copies}"
        instances, peak = _peak(lambda corpus=corpus, out_dir=out_dir: bench.build_data(
            corpus, source / "vocab.txt", out_dir))
        manifest = read_manifest(next((out_dir / "build").iterdir()))
        results[copies] = (instances, peak, manifest["splits"]["train"]["documents"])
    (small_rows, small_peak, small_docs), (large_rows, large_peak, large_docs) = results[1], results[6]
    assert large_docs > 5 * small_docs and large_rows > 5 * small_rows
    assert large_peak < 1.5 * small_peak + 1_000_000
