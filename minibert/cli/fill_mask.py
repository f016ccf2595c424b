"""`python -m minibert fill-mask --model DIR "text with [MASK]"`: the model's guesses for each [MASK].

    python -m minibert fill-mask --model runs/mini-pydocs "Return a [MASK] of the list."
    python -m minibert fill-mask --model runs/tiny-synthetic "小明给小红[MASK]了一本书。" --top-k 3

DIR is a run folder (from `pretrain --out`) or a from_pretrained folder (config.json, model.safetensors,
vocab.txt). Several texts can be given; each may hold several [MASK]s.
"""

from minibert.cli.arguments import whole_number
from minibert.cli.terminal import printable


def add_arguments(parser):
    parser.add_argument("--model", required=True, metavar="DIR", help="run folder or from_pretrained folder")
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="text with one or more [MASK]")
    parser.add_argument("--top-k", type=whole_number("the number of candidates"), default=5,
                        help="candidates shown per [MASK] (5)")


def run(args):
    from minibert.inspect.fill_mask import fill_mask, format_predictions
    from minibert.inspect.model_folder import load_for_inference

    model, tokenizer = load_for_inference(args.model)
    for text in args.texts:
        print(format_predictions(printable(text), fill_mask(model, tokenizer, text, top_k=args.top_k)))
