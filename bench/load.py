"""Load benchmark: tokenize a 100 MB text and build pretraining data from 20x pydocs, in bounded memory.

    python bench/load.py                          # 100 MB of text; a corpus of 20 copies of pydocs
    python bench/load.py --text-mb 10 --copies 2  # a quicker run

Both jobs stream: the text is tokenized a chunk of lines at a time, and the data builder reads one document
at a time, keeps tokens in memory-mapped files and writes shards as they fill. Each job runs twice, at a
tenth of the size and at full size, each time in a fresh process, so that each peak is that job's own.
Bounded memory means the two peaks are about equal: the size of the input does not show in them. A first
process that only imports minibert and loads the vocabulary gives the floor (Python, NumPy, Numba) that
every job starts from.

Peak memory is measured two ways. The peak resident set size (getrusage's ru_maxrss) counts every page in
RAM, including the pages of memory-mapped files, which the kernel reads in as they are touched and can drop
again at any time (they are a cache of the file, not memory the process holds). On Linux a thread also
samples /proc/self/status every 20 ms for the anonymous part alone (RssAnon: the heap, NumPy's arrays):
that is the memory the job needs, and the figure that must not grow.

The text and the corpus are copies of data/pydocs/corpus.txt (its vocab.txt is used, so no vocabulary is
trained); copies of one corpus give the tokenizer's word cache an easy time, as real text repeats its
common words too.
"""

import argparse
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from minibert.data import build_pretraining_data  # noqa: E402
from minibert.data.shards import read_manifest  # noqa: E402
from minibert.tokenizer import BertTokenizer  # noqa: E402

PYDOCS = os.path.join(ROOT, "data", "pydocs")
LINES_PER_CHUNK = 10_000  # lines tokenized per call: few calls, and memory that does not grow with the file


def repeat_file(source, target, size_bytes=None, copies=None):
    """Write `source` again and again into `target`: `copies` whole copies, or `size_bytes` bytes (the last
    copy cut at a line end), with a blank line between copies so that documents stay apart. Returns the
    bytes written."""
    with open(source, "rb") as file:
        block = file.read().rstrip(b"\n") + b"\n\n"
    written = 0
    with open(target, "wb") as out:
        for _ in range(copies) if copies is not None else itertools.count():
            if size_bytes is not None and written + len(block) > size_bytes:
                last = block[: block.rfind(b"\n", 0, size_bytes - written) + 1]
                out.write(last)
                return written + len(last)
            out.write(block)
            written += len(block)
    return written


def tokenize_file(tokenizer, path):
    """Stream a UTF-8 text file through the tokenizer; return (lines, tokens) counted."""
    lines = tokens = 0
    with open(path, encoding="utf-8") as file:
        while chunk := list(itertools.islice(file, LINES_PER_CHUNK)):
            lines += len(chunk)
            tokens += len(tokenizer.tokenize("".join(chunk)))
    return lines, tokens


def build_data(corpus, vocab, out_dir):
    """Build dynamic-masking shards of `corpus` with `vocab` in `out_dir`; return the instances written."""
    os.makedirs(out_dir, exist_ok=True)
    shutil.copy(vocab, os.path.join(out_dir, "vocab.txt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydocs' one-sentence documents: expected, counted in its README
        shard_dir = build_pretraining_data(corpus, out_dir, log=lambda message: None)
    return sum(split["rows"] for split in read_manifest(shard_dir)["splits"].values())


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux counts in kB


class AnonymousMemoryPeak:
    """The largest RssAnon (bytes) seen while the block runs, sampled every 20 ms; None off Linux."""

    def __enter__(self):
        self.peak, self.done = self.sample(), threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.done.set()
        self.thread.join()

    def watch(self):
        while not self.done.wait(0.02):
            current = self.sample()
            if current is not None:
                self.peak = max(self.peak, current)

    @staticmethod
    def sample():
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return None


def run_job(job, path, vocab, scratch):
    """One job in this process; prints one JSON line of its figures."""
    started = time.perf_counter()
    figures = {"job": job, "input_bytes": os.path.getsize(path) if path else 0}
    with AnonymousMemoryPeak() as anonymous:
        if job == "baseline":
            BertTokenizer(vocab).tokenize("warm up the tokenizer")
        elif job == "tokenize":
            figures["lines"], figures["tokens"] = tokenize_file(BertTokenizer(vocab), path)
        else:
            figures["instances"] = build_data(path, vocab, os.path.join(scratch, "out"))
    figures.update(seconds=time.perf_counter() - started, peak_rss=peak_rss_bytes(),
                   peak_anonymous=anonymous.peak)
    print(json.dumps(figures))


def in_fresh_process(job, path, vocab, scratch):
    command = [sys.executable, os.path.abspath(__file__), "--job", job, "--path", path or "",
               "--vocab", vocab, "--scratch", scratch]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(figures, floor):
    megabytes = figures["input_bytes"] / 1e6
    seconds = figures["seconds"]
    rate = f"{megabytes / seconds:5.2f} MB/s"
    if figures["job"] == "tokenize":
        rate += f", {figures['tokens'] / seconds:9,.0f} tokens/s"
    else:
        rate += f", {figures['instances'] / seconds:7,.0f} instances/s ({figures['instances']:,})"
    print(f"{figures['job']:8s} {megabytes:6.1f} MB in {seconds:5.1f} s: {rate}; peak RSS "
          f"{figures['peak_rss'] / 1e6:4.0f} MB, anonymous {_megabytes(figures['peak_anonymous'])} "
          f"({_megabytes(figures['peak_anonymous'], floor['peak_anonymous'])} over the floor)")


def _megabytes(value, floor=None):
    """'123 MB', or '+12 MB' above `floor`; '?' where /proc gave no figure."""
    if value is None:
        return "?"
    return f"{value / 1e6:4.0f} MB" if floor is None else f"{(value - floor) / 1e6:+4.0f} MB"


def main():
    from cpu import describe_cpu  # bench/cpu.py, beside this script (tests load this file without it)

    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-mb", type=float, default=100, help="size of the text to tokenize (100)")
    parser.add_argument("--copies", type=int, default=20, help="copies of pydocs in the corpus (20)")
    parser.add_argument("--job", choices=("baseline", "tokenize", "data"), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--vocab", default=os.path.join(PYDOCS, "vocab.txt"), help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        run_job(args.job, args.path, args.vocab, args.scratch)
        return
    source = os.path.join(PYDOCS, "corpus.txt")
    if not (os.path.isfile(source) and os.path.isfile(args.vocab)):
        sys.exit("bench/load.py needs data/pydocs/corpus.txt and vocab.txt: run "
                 "`python -m minibert data --corpus pydocs` first")
    with tempfile.TemporaryDirectory(prefix="minibert-bench-load-") as scratch:
        floor = in_fresh_process("baseline", None, args.vocab, scratch)
        print(f"floor (Python, NumPy, Numba, the vocabulary): peak RSS {floor['peak_rss'] / 1e6:.0f} MB, "
              f"anonymous {_megabytes(floor['peak_anonymous'])}")
        for megabytes in (args.text_mb / 10, args.text_mb):
            text = os.path.join(scratch, f"text-{megabytes:g}.txt")
            repeat_file(source, text, size_bytes=int(megabytes * 1e6))
            report(in_fresh_process("tokenize", text, args.vocab, scratch), floor)
            os.remove(text)
        for copies in sorted({max(1, args.copies // 10), args.copies}):
            corpus = os.path.join(scratch, f"corpus-{copies}.txt")
            repeat_file(source, corpus, copies=copies)
            job_dir = os.path.join(scratch, f"job-{copies}")
            os.makedirs(job_dir)
            report(in_fresh_process("data", corpus, args.vocab, job_dir), floor)
            shutil.rmtree(job_dir)
            os.remove(corpus)


if __name__ == "__main__":
    main()
