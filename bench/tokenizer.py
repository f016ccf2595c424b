"""Tokenizer benchmark: tokenization throughput (MB/s) and the time to train an 8k WordPiece vocabulary.

    python bench/tokenizer.py                                  # minibert alone
    PYTHONPATH=. python-with-tokenizers bench/tokenizer.py  # side by side with HuggingFace's tokenizers

Corpora: data/pydocs/corpus.txt (English docstrings; if absent, the standard library's docstrings are read
from its source files with `ast`, nothing imported), and data/synthetic/corpus.txt when present (half of its
lines Chinese, so the non-ASCII path is measured too). On each, a vocabulary is trained (timed), then every
tokenizer tokenizes the same lines one call per line, as a data pipeline calls it, starting from a fresh
tokenizer (an empty word cache). Targets: at least 2x HuggingFace's pure-Python tokenizer
(`BertTokenizerLegacy`), and an 8k vocabulary trained in under a minute.
"""

import argparse
import ast
import os
import sys
import sysconfig
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.tokenizer import BertTokenizer, train_wordpiece  # noqa: E402

CORPORA = {"pydocs": os.path.join(ROOT, "data", "pydocs", "corpus.txt"),
           "synthetic": os.path.join(ROOT, "data", "synthetic", "corpus.txt")}


def stdlib_docstrings(max_bytes):
    """Docstrings of the standard library's modules, classes and functions, one paragraph a line."""
    stdlib = sysconfig.get_paths()["stdlib"]
    lines, size = [], 0
    for folder, subfolders, files in os.walk(stdlib):
        subfolders[:] = sorted(name for name in subfolders if name not in ("site-packages", "test", "tests"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as file:
                    tree = ast.parse(file.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
                        line = " ".join(paragraph.split())
                        if line:
                            lines.append(line)
                            size += len(line.encode("utf-8")) + 1
                            if size >= max_bytes:
                                return lines
    return lines


def read_lines(path, max_bytes):
    """The file's non-empty lines, up to max_bytes of text."""
    lines, size = [], 0
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.rstrip("\n")
            size += len(line.encode("utf-8")) + 1
            if size > max_bytes:
                break
            if line.strip():
                lines.append(line)
    return lines


def throughput(tokenize, lines, megabytes):
    start = time.perf_counter()
    for line in lines:
        tokenize(line)
    seconds = time.perf_counter() - start
    return megabytes / seconds


def bench_corpus(name, lines, vocab_size, scratch, hf):
    megabytes = sum(len(line.encode("utf-8")) + 1 for line in lines) / 2**20
    print(f"\n== {name}: {len(lines):,} lines, {megabytes:.2f} MB, "
          f"{sum(not line.isascii() for line in lines) / len(lines):.0%} of lines non-ASCII")
    text_file = os.path.join(scratch, f"{name}.txt")
    with open(text_file, "w", encoding="utf-8") as file:
        file.writelines(line + "\n" for line in lines)
    vocab_file = os.path.join(scratch, f"{name}-vocab.txt")
    start = time.perf_counter()
    tokens = train_wordpiece([text_file], vocab_size, out=vocab_file)
    print(f"train_wordpiece({vocab_size}): {len(tokens):,} tokens in {time.perf_counter() - start:.1f} s "
          "(target < 60 s)")

    ours = BertTokenizer(vocab_file)
    ours_speed = throughput(ours.tokenize, lines, megabytes)
    print(f"minibert BertTokenizer.tokenize      {ours_speed:7.2f} MB/s")
    if hf is None:
        return
    rust_class, legacy_class = hf
    legacy = legacy_class(vocab_file)
    rust = rust_class(vocab=dict(ours.vocab))
    legacy_speed = throughput(legacy.tokenize, lines, megabytes)
    rust_speed = throughput(rust.tokenize, lines, megabytes)
    start = time.perf_counter()
    rust.backend_tokenizer.encode_batch(lines, add_special_tokens=False)
    rust_batch_speed = megabytes / (time.perf_counter() - start)
    print(f"HF BertTokenizerLegacy.tokenize      {legacy_speed:7.2f} MB/s  (pure Python)")
    print(f"HF BertTokenizer.tokenize            {rust_speed:7.2f} MB/s  (Rust, one call a line)")
    print(f"HF Rust encode_batch, all lines      {rust_batch_speed:7.2f} MB/s  (Rust threads, no loop)")
    print(f"minibert / HF Python: {ours_speed / legacy_speed:5.1f}x  (target >= 2x)")
    print(f"minibert / HF Rust:   {ours_speed / rust_speed:5.2f}x one call a line, "
          f"{ours_speed / rust_batch_speed:.2f}x against encode_batch")
    differ = sum(ours.tokenize(line) != rust.tokenize(line) for line in lines)
    print(f"lines where minibert's tokens differ from HF Rust's: {differ} of {len(lines):,}")


def main():
    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-mb", type=float, default=4.0, help="use at most this much of each corpus (4)")
    parser.add_argument("--vocab-size", type=int, default=8192)
    args = parser.parse_args()
    max_bytes = int(args.max_mb * 2**20)

    try:
        from transformers import BertTokenizer as RustTokenizer
        from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy
        warnings.filterwarnings("ignore")
        hf = (RustTokenizer, BertTokenizerLegacy)
    except ImportError:
        print("transformers is not installed: minibert's figures only, no side-by-side comparison")
        hf = None

    with tempfile.TemporaryDirectory() as scratch:
        if os.path.isfile(CORPORA["pydocs"]):
            bench_corpus("pydocs", read_lines(CORPORA["pydocs"], max_bytes), args.vocab_size, scratch, hf)
        else:
            print("note: data/pydocs/corpus.txt not found; generating stdlib docstrings instead")
            bench_corpus("stdlib docstrings", stdlib_docstrings(max_bytes), args.vocab_size, scratch, hf)
        if os.path.isfile(CORPORA["synthetic"]):
            lines = read_lines(CORPORA["synthetic"], max_bytes)
            bench_corpus("synthetic", lines, args.vocab_size, scratch, hf)


if __name__ == "__main__":
    main()
