"""`python -m minibert attention --model DIR "sentence" ...`: each layer's and head's attention, drawn.

    python -m minibert attention --model runs/mini-pydocs "the cat sat on the mat"
    python -m minibert attention --model runs/tiny-synthetic "小明给小红买了一本书" --layer 1 --head 0
    python -m minibert attention --model runs/mini-pydocs --html attention.html \
        "Return the [MASK] of the list." "the value is [MASK] ."

Without --html: one sentence (and --pair, its second segment), one shaded heatmap per head in the terminal
(rows: the token that attends; columns: the token attended to), and all of them in one SVG (--svg, default
attention.svg in the model folder, or attention.2.svg, ... when that exists).

With --html FILE: one self-contained page for one or more sentences, to open in a browser, with nothing
loaded from anywhere else: a head view, a model view of every layer x head, the guesses for each [MASK],
and all of it again under a causal (left-to-right) mask beside BERT's (minibert/inspect/attention_page.py).
A file is never replaced unless --overwrite is given.

What is drawn is bounded by what a person can look at (the sizes --help ends with): past it a sentence is cut
or refused, or heads are left out, and one line says which.
"""

from pathlib import Path

from minibert.cli.arguments import whole_number


def add_arguments(parser):
    from minibert.inspect.attention_page import PAGE_SENTENCES, PAGE_TOKENS, PAGE_WEIGHTS
    from minibert.inspect.attention_view import DRAWN_CELLS, DRAWN_TOKENS

    parser.epilog = (  # the sizes, from the constants that enforce them
        f"sizes: the terminal and the SVG draw a text of at most {DRAWN_TOKENS} tokens, and of the heads chosen "
        f"as many as fit in {DRAWN_CELLS:,} cells (heads x tokens^2), saying which were left out; the --html "
        f"page takes at most {PAGE_SENTENCES} sentences, cuts each to {PAGE_TOKENS} tokens and holds at most "
        f"{PAGE_WEIGHTS:,} weights (sentences x tokens^2 x layers x heads x 2 masks), refusing more: then "
        "choose layers with --layer and heads with --head, or give fewer or shorter sentences")
    parser.add_argument("--model", required=True, metavar="DIR", help="run folder or from_pretrained folder")
    parser.add_argument("text", nargs="+", metavar="SENTENCE",
                        help="the sentence to look at (with --html, one or more; [MASK] to see guesses)")
    parser.add_argument("--pair", default=None, metavar="SENTENCE", help="a second segment (B), without --html")
    parser.add_argument("--layer", type=whole_number("a layer number", minimum=0), action="append", default=None,
                        help="only this layer, from 0 (repeat for several); in the terminal, the SVG and the page")
    parser.add_argument("--head", type=whole_number("a head number", minimum=0), action="append", default=None,
                        help="only this head, from 0 (repeat for several); in the terminal, the SVG and the page")
    parser.add_argument("--svg", default=None, metavar="FILE", help="where to write the SVG")
    parser.add_argument("--html", default=None, metavar="FILE",
                        help="write the attention explorer, one HTML page, here instead")
    parser.add_argument("--overwrite", action="store_true", help="replace the --svg or --html file if it exists")


def run(args):
    from minibert.errors import ConfigError
    from minibert.io.overwrite import check_can_write, check_folder_exists

    if args.html is not None:
        if args.pair is not None or args.svg is not None:
            raise ConfigError("--html writes the page alone and takes sentences, not --pair or --svg; drop them "
                              "(or drop --html for the terminal and the SVG)")
        check_folder_exists(args.html, "--html")
        check_can_write(args.html, args.overwrite, "--html", folder=False)
        return write_page(args)
    if len(args.text) > 1:
        raise ConfigError(f"{len(args.text)} sentences given; the terminal view draws one: give one, or put "
                          "several on one page with --html FILE")
    if args.svg is not None:
        check_can_write(args.svg, args.overwrite, "--svg", folder=False)
    return draw_in_terminal(args)


def draw_in_terminal(args):
    from minibert.inspect.attention_view import attention_maps, attention_svg, attention_text
    from minibert.inspect.model_folder import load_model_or_encoder
    from minibert.io.overwrite import free_name
    from minibert.viz import save_svg

    model, tokenizer = load_model_or_encoder(args.model)
    tokens, attentions = attention_maps(model, tokenizer, args.text[0], args.pair)
    print(attention_text(tokens, attentions, args.layer, args.head))
    svg_path = Path(args.svg) if args.svg is not None else free_name(Path(args.model, "attention.svg"))
    svg_path = save_svg(svg_path, attention_svg(tokens, attentions, args.layer, args.head))
    print(f"\nwrote {svg_path}")


def write_page(args):
    from minibert.inspect.attention_page import attention_page
    from minibert.inspect.model_folder import load_model_or_encoder
    from minibert.io.atomic import atomic_write

    model, tokenizer = load_model_or_encoder(args.model)
    page, notes = attention_page(model, tokenizer, args.text, name=Path(args.model).name, layers=args.layer,
                                 heads=args.head)
    for note in notes:
        print(f"note: {note}")
    with atomic_write(args.html) as file:
        file.write(page.encode("utf-8"))
    print(f"wrote {args.html} ({len(page.encode('utf-8')) / 1024:,.0f} KiB): open it in a browser")
