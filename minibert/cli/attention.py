"""`python -m minibert attention --model DIR "sentence"`: each layer's and head's attention, drawn.

    python -m minibert attention --model runs/mini-pydocs "the cat sat on the mat"
    python -m minibert attention --model runs/tiny-synthetic "小明给小红买了一本书" --layer 1 --head 0

Prints one shaded heatmap per head (rows: the token that attends; columns: the token attended to) and
writes all of them to one SVG (--svg, default attention.svg in the model folder, or attention.2.svg, ...
when that exists: a picture is never replaced unless --overwrite is given).
"""

from pathlib import Path

from minibert.cli.arguments import whole_number


def add_arguments(parser):
    parser.add_argument("--model", required=True, metavar="DIR", help="run folder or from_pretrained folder")
    parser.add_argument("text", metavar="SENTENCE", help="the sentence to look at")
    parser.add_argument("--pair", default=None, metavar="SENTENCE", help="a second segment (B)")
    parser.add_argument("--layer", type=whole_number("a layer number", minimum=0), action="append", default=None,
                        help="only this layer, from 0 (repeat for several)")
    parser.add_argument("--head", type=whole_number("a head number", minimum=0), action="append", default=None,
                        help="only this head, from 0 (repeat for several)")
    parser.add_argument("--svg", default=None, metavar="FILE", help="where to write the SVG")
    parser.add_argument("--overwrite", action="store_true", help="replace the --svg file if it exists")


def run(args):
    from minibert.io.overwrite import check_can_write, free_name
    from minibert.train.attention_view import attention_maps, attention_svg, attention_text
    from minibert.train.loading import load_for_inference
    from minibert.viz import save_svg

    if args.svg is not None:
        check_can_write(args.svg, args.overwrite, "--svg", folder=False)
    model, tokenizer = load_for_inference(args.model)
    tokens, attentions = attention_maps(model, tokenizer, args.text, args.pair)
    print(attention_text(tokens, attentions, args.layer, args.head))
    svg_path = Path(args.svg) if args.svg is not None else free_name(Path(args.model, "attention.svg"))
    svg_path = save_svg(svg_path, attention_svg(tokens, attentions, args.layer, args.head))
    print(f"\nwrote {svg_path}")
