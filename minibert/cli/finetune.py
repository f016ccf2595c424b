"""`python -m minibert finetune`: put a head on a pretrained BERT and train it on a labelled task.

    python -m minibert finetune --task sentiment --model runs/mini-synthetic --out runs/sentiment
    python -m minibert finetune --task glue-tsv --model bert-base-uncased/ --out runs/sst2 \\
        --train SST-2/train.tsv --dev SST-2/dev.tsv --lr 2e-5

`sentiment`, `qa`, `ner` and `story-pairs` are synthetic tasks, `package-topics`, `doc-pairs` and
`dependency-topics` real-text ones (written to the data folder on first use: the checkout's data/, or MINIBERT_DATA, or
~/.cache/minibert; never the current folder); `glue-tsv`, `squad` and `conll` read your files. --model is a
run folder or a from_pretrained folder (a sentence-transformers one too, such as all-MiniLM-L6-v2). The best
epoch's model (on dev) is saved in --out, for `predict --model OUT`.
"""

# More examples:
#     python -m minibert finetune --task qa --model runs/mini-synthetic --out runs/qa --random-init
#     python -m minibert finetune --task squad --model DIR --out runs/squad --train train-v1.1.json \
#         --dev dev-v1.1.json
#     python -m minibert finetune --task conll --model DIR --out runs/ner --train train.txt --dev dev.txt

from minibert.cli.arguments import real_number, seed, whole_number

TASK_NAMES = ("sentiment", "qa", "ner", "story-pairs", "package-topics", "doc-pairs", "dependency-topics",
              "glue-tsv", "squad", "conll")


def add_arguments(parser):
    parser.add_argument("--task", required=True, choices=TASK_NAMES, help="what to fine-tune on")
    parser.add_argument("--model", required=True, metavar="DIR", help="run folder or from_pretrained folder")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the fine-tuned model goes")
    parser.add_argument("--train", metavar="FILE", help="training file (default: the task's own, in the data folder)")
    parser.add_argument("--dev", metavar="FILE", help="dev file, evaluated after each epoch")
    parser.add_argument("--epochs", type=whole_number("the number of epochs"), default=None,
                        help="passes over the training set (default: 3, or more so that a small set "
                             "gets at least 500 steps)")
    parser.add_argument("--lr", type=real_number("the learning rate", 0, 1, example="5e-5"), default=None,
                        help="peak learning rate (default: 5e-5 for BERT-base and wider, 3e-4 below, "
                             "1e-3 up to H 128)")
    parser.add_argument("--batch-size", type=whole_number("the batch size (examples per step)"), default=32,
                        help="examples per step (32)")
    parser.add_argument("--warmup", type=real_number("the warmup share", 0, 1, True, True, example=0.1),
                        default=0.1, help="share of the steps warming up (0.1)")
    parser.add_argument("--max-seq-length", type=whole_number("the sequence length (tokens)", minimum=4),
                        default=None,
                        help="tokens per input (128; qa/squad 384), at most the length a run folder's model was "
                             "pretrained on")
    parser.add_argument("--doc-stride", type=whole_number("the window step (tokens)"), default=None,
                        help="qa/squad: window step in tokens (128, or half a shortened window)")
    parser.add_argument("--regression", action="store_true",
                        help="glue-tsv: the label is a number (STS-B): one output, squared-error loss")
    parser.add_argument("--layer-decay", type=real_number("the layer-wise decay", 0, 1, high_included=True,
                                                          example=0.8),
                        default=1.0, help="each encoder layer's learning rate is this times the one above's "
                                          "(1: one rate for all, as BERT)")
    parser.add_argument("--head-lr", type=real_number("the head's learning rate", 0, 1, example="1e-3"),
                        default=None, help="learning rate of the pooler and the new head (default: --lr)")
    parser.add_argument("--reinit-pooler", action="store_true",
                        help="draw the pooler afresh instead of keeping the one pretraining shaped for NSP")
    parser.add_argument("--pooling", choices=("cls", "mean"), default=None,
                        help="classification: read the pooler's [CLS] (BERT's) or the mean of the tokens "
                             "(default: the mean for a sentence-transformers folder that pools so, such as "
                             "all-MiniLM-L6-v2, else the [CLS])")
    parser.add_argument("--head-init", choices=("random", "probe"), default="random",
                        help="classification: start the new head from random numbers (BERT's) or from the "
                             "linear probe of the frozen encoder's features, then fine-tune (LP-FT)")
    parser.add_argument("--pair-encoder", choices=("cross", "bi"), default="cross",
                        help="classification of pairs: read [CLS] A [SEP] B [SEP] as one sequence (cross, "
                             "BERT's) or A and B apart, as two sentence vectors (bi, Sentence-BERT's; for "
                             "sentence-embedding models such as all-MiniLM-L6-v2)")
    parser.add_argument("--random-init", action="store_true",
                        help="start from random weights of the model's config and vocabulary, to measure "
                             "what pretraining is worth")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace what --out holds (an earlier fine-tuned model); without it, it must be new")
    parser.add_argument("--seed", type=seed(), default=0, help="seed of the head, dropout and example order")
    parser.add_argument("--threads", type=whole_number("the number of threads"), default=None,
                        help="cores for the matmuls and kernels (default: every core)")
    parser.add_argument("--plain", action="store_true",
                        help="train the core's plain layers, without the speed layer (minibert/fast): slower")


def run(args):
    from minibert.errors import ConfigError
    from minibert.finetune.finetuning_run import run_finetuning
    from minibert.finetune.loop import FineTuneConfig
    from minibert.finetune.tasks import task_kind
    kind = task_kind(args.task)
    options = {}
    if args.max_seq_length is not None:
        options["max_seq_length"] = args.max_seq_length
    if kind == "question_answering" and args.doc_stride is not None:
        options["doc_stride"] = args.doc_stride
    if args.regression:
        if kind != "classification":
            raise ConfigError(f"--regression is for classification tasks (glue-tsv), not {args.task}")
        options["regression"] = True
    if args.pair_encoder != "cross":
        if kind != "classification":
            raise ConfigError(f"--pair-encoder is for classification tasks of pairs, not {args.task}")
        options["pair_encoder"] = args.pair_encoder
    if not args.plain:
        print("speed layer on: fused layers and the threads plan (minibert/fast; --plain: off)")
    settings = FineTuneConfig(learning_rate=args.lr, batch_size=args.batch_size, epochs=args.epochs,
                              warmup_proportion=args.warmup, seed=args.seed, threads=args.threads,
                              plain=args.plain, layer_decay=args.layer_decay, head_lr=args.head_lr,
                              reinit_pooler=args.reinit_pooler, pooling=args.pooling,
                              head_init=args.head_init)
    task, _, result = run_finetuning(args.task, args.model, args.out, args.train, args.dev, settings,
                                     args.random_init, options, overwrite=args.overwrite)
    best = "  ".join(f"{name} {value:.4f}" for name, value in result.best_metrics.items())
    print(f"best dev epoch {result.best_epoch}: {best} ({task.main_metric} decides); "
          f"{result.seconds:.0f} s; model saved in {args.out}")
    if len(result.history) > 1:  # the best of several looks at dev: a choice made on it, which it then flatters
        print(f"dev chose the epoch, so its score is the best of {len(result.history)} looks and leans high; to "
              f"know what the model is worth, score a labelled file kept out of every choice, once: "
              f"python -m minibert predict --model {args.out} --file TEST")
