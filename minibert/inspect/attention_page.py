"""The attention explorer: one HTML page that shows a model's attention over a few sentences, for BERT's
bidirectional mask and for a causal (GPT) one side by side, with the model's guesses for each [MASK].

    page = attention_page(model, tokenizer, ["the cat sat on the [MASK] ."], name="runs/mini")
    # write it with minibert.io.atomic.atomic_write; the CLI does: python -m minibert attention --html FILE

The page (minibert/viz/templates/attention.*) draws everything from the data built here: per sentence its
tokens, every layer's and head's (S, S) weights under each mask, the top guesses at each [MASK], and each
head's kind (minibert/viz/head_kinds.py). A model with no masked-LM head (a sentence-transformers encoder)
shows its attention alone. `layers=` and `heads=` choose what the page holds; a sentence past PAGE_TOKENS is
cut, and a page past PAGE_WEIGHTS is refused before any forward pass.

Legend: L layers, A heads, S sequence length.
"""

# The causal view runs the same weights with the causal mask: not a model trained left to right (lesson 13
# trains one), but the cleanest picture of what such a mask takes away: every token loses sight of what
# comes after it, and the guesses at [MASK] change with what it can no longer read.

import numpy as np

from minibert.errors import ConfigError
from minibert.inspect.attention_view import attention_of, checked_numbers
from minibert.tokenizer import MASK_TOKEN
from minibert.train.guesses import predict_masked
from minibert.viz.head_kinds import head_kind_scores, head_labels
from minibert.viz.html_page import html_page, weights_base64

VIEWS = ("bidirectional", "causal")
TOP_K = 5
# What a page holds, bounded by what a person can look at and a browser can open. A head's picture in the
# model view is 80 pixels wide and the head view gives each token a row of 20 pixels, so at PAGE_TOKENS a
# token is under a pixel in the one and the other is 2,560 pixels tall: longer sentences are cut, with a
# note. Every weight is one byte (base64: 4 characters for 3), so PAGE_WEIGHTS bounds the page near 22 MB
# (tests/test_pages_in_browser.py opens one that big); a page past the browser's longest string (about
# 512 MB) opens blank. A page of more sentences or weights is refused before any forward pass, and the
# message says what to leave out.
PAGE_TOKENS = 128
PAGE_WEIGHTS = 2 ** 24
PAGE_SENTENCES = 16  # the switcher's buttons: more is a page per group of sentences, not one page


def attention_page(model, tokenizer, sentences, name, layers=None, heads=None):
    """The explorer as one HTML string, and the notes it shows (what was cut, what is missing), to print.
    `layers` and `heads` (numbers from 0; None: all) choose what the page shows."""
    has_mlm = hasattr(model, "cls")  # BertForPreTraining; a bare BertModel has no heads
    config = model.config
    layers = checked_numbers(layers, config.num_hidden_layers, "layer")
    heads = checked_numbers(heads, config.num_attention_heads, "head")
    fitted = [fitted_ids(tokenizer, text, config.max_position_embeddings) for text in sentences]
    check_page_size([len(input_ids) for input_ids, _ in fitted], layers, heads)
    data = {
        "model": {"name": str(name), "layers": layers, "heads": heads, "has_mlm": has_mlm,
                  "note": model_note(name, config, has_mlm, layers, heads)},
        "views": list(VIEWS),
        "sentences": [sentence_data(model, tokenizer, text, input_ids, notes, has_mlm, layers, heads)
                      for text, (input_ids, notes) in zip(sentences, fitted, strict=True)],
    }
    notes = [f"sentence {number}: {note}" for number, item in enumerate(data["sentences"], start=1)
             for note in item["notes"]]
    return html_page("attention", f"attention: {name}", data), notes


def check_page_size(lengths, layers, heads):
    """Refuse a page of more than PAGE_SENTENCES sentences, or of more than PAGE_WEIGHTS weights: sentences
    of `lengths` tokens, each with its (S, S) weights for every view, chosen layer and chosen head."""
    if len(lengths) > PAGE_SENTENCES:
        raise ConfigError(f"{len(lengths)} sentences given; a page shows at most {PAGE_SENTENCES}: give fewer, or "
                          "write them on several pages")
    weights = sum(len(VIEWS) * len(layers) * len(heads) * length ** 2 for length in lengths)
    if weights > PAGE_WEIGHTS:
        raise ConfigError(
            f"the page would hold {weights:,} attention weights ({len(lengths)} sentences of "
            f"{', '.join(map(str, lengths))} tokens x {len(layers)} layers x {len(heads)} heads x {len(VIEWS)} "
            f"masks), more than the {PAGE_WEIGHTS:,} a page holds; give fewer or shorter sentences, or choose "
            "layers with --layer and heads with --head")


def model_note(name, config, has_mlm, layers, heads):
    size = (f"{config.num_hidden_layers} layers, {config.num_attention_heads} heads, hidden size "
            f"{config.hidden_size}, {config.max_position_embeddings} positions")
    if len(layers) < config.num_hidden_layers or len(heads) < config.num_attention_heads:
        size += f"; shown: layers {', '.join(map(str, layers))} and heads {', '.join(map(str, heads))}"
    if has_mlm:
        return f"{name}: {size}."
    return (f"{name}: {size}. It has no masked-LM head (a sentence-transformers encoder keeps the encoder "
            "alone, a fine-tuned model its task's head), so the page shows its attention but no guesses for "
            "[MASK].")


def sentence_data(model, tokenizer, text, input_ids, notes, has_mlm, layers, heads):
    """One sentence's entry in the page's data: tokens, notes, [MASK] positions, and per view its weights
    (base64 bytes, layers x heads x S x S, of the chosen ones), guesses and head kinds."""
    notes = list(notes)
    segment_ids = [0] * len(input_ids)
    tokens = tokenizer.convert_ids_to_tokens(input_ids)
    masks = [position for position, token_id in enumerate(input_ids) if token_id == tokenizer.mask_token_id]
    if not masks:
        notes.append(f"no {MASK_TOKEN} in it, so the page shows its attention only; write {MASK_TOKEN} where "
                     "the model should guess a word")
    views = {}
    for view in VIEWS:
        every_head = np.stack(attention_of(model, input_ids, segment_ids, attention=view))  # (L, A, S, S)
        attentions = every_head[np.ix_(layers, heads)]  # the chosen layers and heads
        scores = head_kind_scores([(tokens, attentions)])
        views[view] = {"weights": weights_base64(attentions),
                       "guesses": guesses(model, tokenizer, input_ids, masks, view) if has_mlm and masks else None,
                       "kinds": head_labels(scores, len(tokens))}
    return {"text": text, "tokens": tokens, "notes": notes, "masks": masks, "views": views}


def fitted_ids(tokenizer, text, positions):
    """(input_ids, notes): `[CLS] text [SEP]` cut to the model's `positions` or to PAGE_TOKENS, the fewer,
    and a note saying what was cut when it had to be (the page shows it, the command prints it)."""
    input_ids = tokenizer.encode(text)["input_ids"]
    limit = min(positions, PAGE_TOKENS)
    if len(input_ids) <= limit:
        return input_ids, []
    kept, cut = input_ids[:limit - 1], input_ids[limit - 1:-1]  # [SEP] stays at the end
    why = f"the model has {positions} positions" if positions <= PAGE_TOKENS else f"the page shows {PAGE_TOKENS}"
    note = (f"it is {len(input_ids)} tokens long and {why}, so its last {len(cut)} tokens were cut: "
            f"{tokenizer.decode(cut)!r}")
    return kept + [tokenizer.sep_token_id], [note]


def guesses(model, tokenizer, input_ids, masks, view):
    """For each [MASK]: the TOP_K guesses [(token, probability)] with the sequence read under `view`."""
    top_ids, top_probabilities = predict_masked(model, input_ids, [0] * len(input_ids), masks,
                                                min(TOP_K, tokenizer.vocab_size), attention=view)
    return [[(tokenizer.ids_to_tokens[int(token_id)], round(float(probability), 4))
             for token_id, probability in zip(ids, probabilities, strict=True)]
            for ids, probabilities in zip(top_ids, top_probabilities, strict=True)]
