"""`python -m minibert data`: build a corpus, its vocabulary and its pretraining shards.

    python -m minibert data --corpus pydocs                      # data/pydocs/{corpus.txt,vocab.txt,build/}
    python -m minibert data --corpus pydocs-large                # 3 times the text; pip installs 5 libraries
    python -m minibert data --corpus synthetic --masking static --dupe-factor 5
    python -m minibert data --corpus notes.txt --out runs/notes  # your own file, in Google's format

Building again with the same inputs and options does nothing; `--force` rebuilds the shards.
"""

import sys
import time

from minibert.cli.arguments import real_number, seed, whole_number


def add_arguments(parser):
    parser.add_argument("--corpus", required=True, metavar="pydocs|pydocs-large|synthetic|PATH",
                        help="a built-in corpus, or a text file: one sentence per line, a blank line between "
                             "documents")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="where corpus.txt, vocab.txt and build/ go (<data folder>/<corpus>, or the file's "
                             "folder)")
    parser.add_argument("--masking", choices=("dynamic", "static"), default="dynamic",
                        help="dynamic: a new mask each time a sequence is served (RoBERTa, default); "
                             "static: masks stored in the shards (Google)")
    parser.add_argument("--dupe-factor", type=whole_number("the dupe factor (passes)"), default=None, metavar="N",
                        help="passes over the training documents (default 10 with static masking, 1 dynamic)")
    parser.add_argument("--max-seq-length", type=whole_number("the sequence length (tokens)"), default=128,
                        help="tokens per instance (128)")
    parser.add_argument("--max-predictions-per-seq",
                        type=whole_number("the masked positions per sequence"), default=20,
                        help="most masked positions per instance (20)")
    parser.add_argument("--masked-lm-prob", type=real_number("the masked share", 0, 1, example=0.15),
                        default=0.15,
                        help="share of tokens to predict (0.15)")
    parser.add_argument("--short-seq-prob",
                        type=real_number("the short-sequence chance", 0, 1, True, True, example=0.1), default=0.1,
                        help="chance of a shorter target length for a document (0.1)")
    parser.add_argument("--sentence-task", choices=("nsp", "sop", "none"), default="nsp",
                        help="nsp: next sentence (BERT); sop: sentence order (ALBERT); none: packed full "
                             "sentences (RoBERTa)")
    parser.add_argument("--no-whole-word-mask", dest="whole_word_mask", action="store_false",
                        help="mask single WordPiece tokens instead of whole words")
    parser.add_argument("--vocab-size", type=whole_number("the vocabulary size (tokens)"), default=8192,
                        help="size of the vocabulary trained when DIR has no vocab.txt (8192)")
    parser.add_argument("--eval-fraction",
                        type=real_number("the held-out share", 0, 0.5, low_included=True, example=0.05),
                        default=0.05,
                        help="share of the documents held out for evaluation (0.05)")
    parser.add_argument("--seed", type=seed(), default=12345, help="random seed (12345)")
    parser.add_argument("--force", action="store_true", help="rebuild the shards even if they are up to date")


def run(args):
    from minibert.data.build import build_pretraining_data

    start = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - start:6.1f}s] {message}", file=sys.stderr, flush=True)

    shard_dir = build_pretraining_data(
        args.corpus, args.out, max_seq_length=args.max_seq_length,
        max_predictions_per_seq=args.max_predictions_per_seq, masked_lm_prob=args.masked_lm_prob,
        short_seq_prob=args.short_seq_prob, sentence_task=args.sentence_task,
        whole_word_mask=args.whole_word_mask, masking=args.masking, dupe_factor=args.dupe_factor,
        vocab_size=args.vocab_size, eval_fraction=args.eval_fraction, seed=args.seed, force=args.force,
        log=log)
    print(shard_dir)
