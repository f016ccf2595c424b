# %% [markdown]
# # Lesson 16 — open a real BERT checkpoint and look inside
#
#     python lessons/16_real_checkpoint.py DIR      # DIR: config.json + model.safetensors + vocab.txt
#     python lessons/16_real_checkpoint.py          # no DIR: a small model saved here, the same steps
#
# Everything in lessons 05-15 is the architecture of Google's BERT, with HuggingFace's parameter names, so
# the weights Google trained load into it with NumPy alone (`minibert/io/pretrained.py`). To get a real
# one, on a machine with a network, fetch three files of https://huggingface.co/google-bert/bert-base-uncased
# (or `google-bert/bert-base-chinese`, for the seed's Chinese) into one folder, by hand or with the small
# `huggingface_hub` package (no PyTorch needed):
#
#     python -c "from huggingface_hub import snapshot_download as get; get('google-bert/bert-base-uncased', \
#         local_dir='bert-base', allow_patterns=['config.json', 'model.safetensors', 'vocab.txt'])"
#     python lessons/16_real_checkpoint.py bert-base
#
# With PyTorch and transformers, `BertForPreTraining.from_pretrained("bert-base-uncased")
# .save_pretrained("bert-base", safe_serialization=True)` writes the first two; transformers 5 saves its
# tokenizer as tokenizer.json, so take vocab.txt from the Hub as above.
#
# Without a folder, the lesson saves a small model itself with `save_pretrained` (lesson 12's pretrained
# one when its run folder is in lessons/output/, else a fresh one) and opens that, so it runs anywhere.

# %%
import json
import struct
import sys
from dataclasses import replace
from pathlib import Path

import course
import numpy as np

from minibert.model import BertConfig, BertForPreTraining
from minibert.model.memory import count_parameters
from minibert.tokenizer import BertTokenizer
from minibert.train import fill_mask, load_for_inference
from minibert.train.attention_view import attention_maps, attention_svg
from minibert.viz import heatmap
from minibert.viz.text_width import pad_right

folders = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
if folders:
    directory = Path(folders[0])
    print(f"opening {directory}")
else:
    directory = course.OUTPUT / "16_checkpoint"
    pretrained_run = course.OUTPUT / "12_pretrain_run"
    if (pretrained_run / "checkpoint.npz").is_file():
        model, _ = load_for_inference(pretrained_run)
        model.vocab_file = str(pretrained_run / "vocab.txt")  # save_pretrained copies it next to the weights
        print(f"no folder given: saving lesson 12's model ({pretrained_run.name}) with save_pretrained")
    else:
        vocab_file = course.ROOT / "data" / "synthetic" / "vocab.txt"
        model = BertForPreTraining(BertConfig.preset("tiny", vocab_size=BertTokenizer(vocab_file).vocab_size))
        model.vocab_file = str(vocab_file)
        print("no folder given and no lesson 12 run in lessons/output/: saving a fresh, untrained tiny model")
    model.save_pretrained(directory)
for path in sorted(directory.iterdir()):
    print(f"  {path.name:<24} {path.stat().st_size:>14,} bytes")

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
print(f"header: {header_length:,} bytes of JSON, {len(header) - ('__metadata__' in header)} tensors, e.g.")
for name in sorted(name for name in header if name != "__metadata__")[:5]:
    print(f"  {name:<52} {header[name]['dtype']}  {header[name]['shape']}")

# %% [markdown]
# ## Load it
#
# `from_pretrained` reads config.json, maps the names (old checkpoints say LayerNorm `gamma`/`beta`; the
# tied decoder weight is usually left out of the file, since it *is* the word-embedding matrix) and says
# what it skipped or renamed. `strict=False` accepts a checkpoint without one of the heads (a
# `BertForMaskedLM` file has no NSP head) and names what it left at its initial values.

# %%
model = BertForPreTraining.from_pretrained(directory, strict=False)
tokenizer = BertTokenizer.from_pretrained(directory)
config = model.config
print(model)
for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings", "type_vocab_size", "hidden_act", "layer_norm_eps"):
    print(f"  {key:<26} {getattr(config, key)}")

# %% [markdown]
# ## Where the parameters are
#
# Grouped by the part of the model they belong to. The MLM decoder has no matrix of its own: it reuses
# the word embeddings (tied, lesson 10), so only its bias is counted.

# %%
PARTS = (("word embeddings", "bert.embeddings.word_embeddings"),
         ("position + segment embeddings, LayerNorm", "bert.embeddings"),
         ("encoder layers", "bert.encoder"), ("pooler", "bert.pooler"),
         ("MLM head (transform, bias)", "cls.predictions"), ("NSP head", "cls.seq_relationship"))
counts = dict.fromkeys([label for label, _ in PARTS], 0)
for name, parameter in model.named_parameters():
    label = next(label for label, prefix in PARTS if name.startswith(prefix))
    counts[label] += parameter.data.size
total = model.num_parameters()
for label, count in counts.items():
    print(f"  {label:<42} {count:>12,}  {count / total:6.1%}")
print(f"  {'total':<42} {total:>12,}   (count_parameters(config): {count_parameters(config):,})")
print(f"one encoder layer: {counts['encoder layers'] // config.num_hidden_layers:,} parameters")

# %% [markdown]
# The seed's figures, 110M for BERT-base and 340M for BERT-large, from the same count with their configs.
# In a small model the vocabulary dominates; in BERT-base the 12 layers do, though its word-embedding
# matrix alone (30,522 × 768) is still a fifth of the model.

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

# %% [markdown]
# ## Fill in the blank

# %%
if folders:
    texts = ["The capital of France is [MASK].", "The man went to the [MASK] to buy a gallon of milk.",
             "小明给小红[MASK]了一本书。"]
else:
    texts = ["小东和小雪是好[MASK]友。", "On Monday, Ethan and Chloe [MASK] to the lake."]
for text in texts:
    guesses = ", ".join(f"{token} {probability:.1%}" for token, probability in fill_mask(model, tokenizer, text)[0])
    print(f"  {pad_right(text, 52)} {guesses}")

# %% [markdown]
# ## Attention
#
# Every layer and head of this model on one sentence, saved as one SVG page (a row per layer). Below,
# the first and the last layer's head 0 in the terminal. Clark et al. (2019, "What Does BERT Look At?")
# found heads in BERT-base that look at the next token, at [SEP], or from a pronoun to what it refers to.

# %%
sentence = "the cat sat on the mat because it was tired ." if folders else "小东和小雪是好朋友。"
tokens, attentions = attention_maps(model, tokenizer, sentence)
for layer in (0, len(attentions) - 1):
    print(heatmap(attentions[layer][0], tokens, tokens, title=f"layer {layer}, head 0", value_range=(0, 1)))
course.save("16_attention.svg", attention_svg(tokens, attentions))
if {"it", "cat"} <= set(tokens):  # BERT's vocabulary has both words whole
    it, cat = tokens.index("it"), tokens.index("cat")
    layer, head = np.unravel_index(np.argmax([[a[h, it, cat] for h in range(len(a))] for a in attentions]),
                                   (len(attentions), attentions[0].shape[0]))
    print(f"the head where 'it' looks most at 'cat': layer {layer}, head {head} "
          f"({attentions[layer][head, it, cat]:.0%} of its attention)")
