"""`python -m minibert vocab`: train a WordPiece vocabulary from text files and write a vocab.txt."""

import sys
import time

from minibert.cli.arguments import whole_number


def add_arguments(parser):
    parser.add_argument("--corpus", nargs="+", required=True, metavar="FILE",
                        help="UTF-8 text files to learn from (one or more)")
    parser.add_argument("--size", type=whole_number("the vocabulary size (tokens)"), default=8192,
                        help="number of tokens, specials included (8192)")
    parser.add_argument("--out", required=True, help="where to write the vocab.txt")
    parser.add_argument("--overwrite", action="store_true", help="replace the --out file if it exists")
    parser.add_argument("--min-frequency", type=whole_number("the minimum pair count"), default=2,
                        help="never merge a pair seen fewer times than this (2)")
    parser.add_argument("--no-lower-case", dest="do_lower_case", action="store_false",
                        help="keep case and accents (cased model); the default lowercases and strips them")


def run(args):
    from minibert.io.overwrite import check_can_write, check_folder_exists
    from minibert.tokenizer.trainer import train_wordpiece

    check_folder_exists(args.out, "--out")  # both before minutes of training, not after
    check_can_write(args.out, args.overwrite, "--out", folder=False)

    start = time.perf_counter()

    def progress(message):
        print(f"[{time.perf_counter() - start:6.1f}s] {message}", file=sys.stderr, flush=True)

    tokens = train_wordpiece(args.corpus, args.size, min_frequency=args.min_frequency, out=args.out,
                             do_lower_case=args.do_lower_case, progress=progress)
    print(f"wrote {len(tokens):,} tokens to {args.out} in {time.perf_counter() - start:.1f}s")
    if len(tokens) < args.size:
        print(f"note: {args.size:,} were asked for, but no pair of pieces is left that occurs at least "
              f"{args.min_frequency} times; more text, or a lower --min-frequency, gives more tokens")
