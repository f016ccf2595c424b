"""Where each token looks: every layer's and head's attention weights, drawn in the terminal and as SVG.

Row i of a head's (S, S) matrix is token i's softmax over all positions: how much of each token's value
vector it mixes into its own (paper §3; Vaswani et al. 2017 §3.2). BERT's rows spread over the whole
sentence, left and right; a causal (GPT) model's rows stop at the diagonal. Clark et al. (2019, "What Does
BERT Look At?") found heads that attend to the previous or next token, to [SEP], or from a word to its
object: look for them here.

Legend: L layers, A heads, S sequence length.
"""

# The terminal picture shades each cell on a fixed scale from 0 (' ') to 1 ('█'), so it reads without
# colour and two heads compare directly; the SVG puts every head of every layer on one page, a layer per row.

# What a person can look at bounds what is drawn. A cell is at least two terminal columns wide, so a heatmap
# of more than DRAWN_TOKENS tokens no longer fits a terminal line; and every cell is one shaded block in the
# terminal and one <rect> with its tooltip in the SVG, so DRAWN_CELLS (every head of BERT-base's 12 x 12 at 32
# tokens, 36 heads at 64) keeps both to a few thousand lines and some megabytes. The explorer page
# (attention_page.py) draws longer sentences and every head with canvas instead.

import re
import warnings

import numpy as np

from minibert.autograd import no_grad
from minibert.errors import ShapeError
from minibert.viz import heatmap, heatmap_svg

GAP = 16  # pixels between the pictures of the SVG grid
DRAWN_TOKENS = 64  # the longest sequence drawn as heatmaps
DRAWN_CELLS = 144 * 32 * 32  # heads x tokens x tokens drawn at most; the heads past it are left out


def attention_maps(model, tokenizer, text, text_b=None):
    """(tokens, attentions): the WordPiece tokens of `[CLS] text [SEP]( text_b [SEP])` and one (A, S, S)
    array of attention probabilities per layer."""
    encoded = tokenizer.encode(text, text_b)
    limit = model.config.max_position_embeddings
    if len(encoded["input_ids"]) > limit:
        raise ShapeError(f"the text is {len(encoded['input_ids'])} tokens long, more than the model's "
                         f"max_position_embeddings={limit}; shorten it")
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    return tokens, attention_of(model, encoded["input_ids"], encoded["token_type_ids"])


def attention_of(model, input_ids, token_type_ids, attention=None):
    """L x (A, S, S) attention probabilities of one sequence, under the model's own mask or under
    `attention` ("bidirectional" or "causal") instead."""
    model.eval()
    encoder = getattr(model, "bert", model)  # a model with heads, or the encoder alone (BertModel)
    with no_grad():
        output = encoder(np.asarray([input_ids]), np.asarray([token_type_ids]), output_attentions=True,
                         attention=attention)
    return [layer[0] for layer in output.attentions]  # L x (A, S, S)


def select(attentions, layers=None, heads=None):
    """[(layer, head, (S, S) matrix)] for the chosen layers and heads (None: all), numbered from 0."""
    chosen = []
    for layer in checked_numbers(layers, len(attentions), "layer"):
        for head in checked_numbers(heads, attentions[layer].shape[0], "head"):
            chosen.append((layer, head, attentions[layer][head]))
    return chosen


def heads_to_draw(tokens, attentions, layers=None, heads=None):
    """`select`'s heads, the first of them that fit in DRAWN_CELLS, with a warning that says which were left
    out when some were. A sequence longer than DRAWN_TOKENS is refused."""
    if len(tokens) > DRAWN_TOKENS:
        raise ShapeError(f"the text is {len(tokens)} tokens long; the terminal and the SVG draw at most "
                         f"{DRAWN_TOKENS} (a longer heatmap is wider than a terminal): shorten it, or see it in "
                         "the explorer page with --html FILE")
    chosen = select(attentions, layers, heads)
    fitting = max(1, DRAWN_CELLS // len(tokens) ** 2)
    if len(chosen) > fitting:  # stacklevel 1: one place warns for both pictures, so Python says it once
        (last_layer, last_head, _), (next_layer, next_head, _) = chosen[fitting - 1], chosen[fitting]
        warnings.warn(f"drew {fitting} of the {len(chosen)} heads chosen, up to layer {last_layer} head "
                      f"{last_head}: at {len(tokens)} tokens the terminal and the SVG hold {fitting}; from layer "
                      f"{next_layer} head {next_head} on were left out, choose them with --layer and --head",
                      stacklevel=1)
    return chosen[:fitting]


def attention_text(tokens, attentions, layers=None, heads=None):
    """The chosen heads as terminal heatmaps (rows: the attending token; columns: the token attended to),
    as many as `heads_to_draw` keeps."""
    pictures = [heatmap(matrix, tokens, tokens, title=f"layer {layer}, head {head}", value_range=(0.0, 1.0))
                for layer, head, matrix in heads_to_draw(tokens, attentions, layers, heads)]
    return "\n\n".join(pictures)


def attention_svg(tokens, attentions, layers=None, heads=None):
    """One SVG page with the chosen heads, as many as `heads_to_draw` keeps: a row of pictures per layer, a
    column per head."""
    rows = {}
    for layer, head, matrix in heads_to_draw(tokens, attentions, layers, heads):
        picture = heatmap_svg(matrix, tokens, tokens, title=f"layer {layer}, head {head}", value_range=(0, 1))
        rows.setdefault(layer, []).append(picture)
    return tile_svgs(list(rows.values()))


def tile_svgs(grid):
    """Place standalone SVG documents on one page: `grid` is a list of rows, each a list of SVG strings.

    Each picture becomes a nested <svg> element moved to its place with x and y (SVG allows <svg> inside
    <svg>, each with its own coordinates), so the pictures need no change inside.
    """
    placed, y, page_width = [], 0, 0
    for row in grid:
        x, row_height = 0, 0
        for svg in row:
            width, height = _size(svg)
            body = svg[svg.index("<svg"):]  # drop the XML declaration: only the page has one
            placed.append(body.replace("<svg ", f'<svg x="{x}" y="{y}" ', 1))
            x += width + GAP
            row_height = max(row_height, height)
        page_width = max(page_width, x - GAP)
        y += row_height + GAP
    height = max(0, y - GAP)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{page_width}" height="{height}" '
            f'viewBox="0 0 {page_width} {height}">\n'
            '<rect width="100%" height="100%" fill="white"/>\n' + "".join(placed) + "</svg>\n")


def _size(svg):
    match = re.search(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', svg)
    return int(float(match.group(1))), int(float(match.group(2)))


def checked_numbers(chosen, count, what):
    """The layers or heads `chosen` (None: all `count` of them), each checked to exist, each once."""
    if chosen is None:
        return list(range(count))
    for index in chosen:
        if not 0 <= index < count:
            raise ShapeError(f"{what} {index} does not exist: the model has {count} {what}s, numbered 0 to "
                             f"{count - 1}")
    return list(dict.fromkeys(chosen))  # in the order given; a number repeated would draw its heads twice
