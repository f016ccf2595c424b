"""Looking inside a trained model: read from its folder, then what it guesses behind [MASK], where each head
looks, the vector it gives a sentence, and whether it reads the words to the right of a blank.

Training is minibert/train/ and minibert/finetune/; this package only reads a model (the probe trains a
tiny one on its blanks, to compare two masks). Start with model_folder.py, the one reader of every kind of
model folder; the comment below lists every module in reading order.
"""

# Read in this order:
# model_folder.py     which kind a --model folder is, its vocabulary, its weights, the model built from them
# fill_mask.py        what the model guesses behind each [MASK] of a text
# attention_view.py   each layer's and head's attention, in the terminal and as SVG
# attention_page.py   the attention explorer: one HTML page, bidirectional beside causal, with the guesses
# sentence_encoder.py sentence embeddings (pooling, normalisation) and their cosine similarities
# probe.py            the bidirectional probe: blanks that only the right-hand words decide

from minibert.inspect.fill_mask import fill_mask
from minibert.inspect.model_folder import load_for_inference
from minibert.inspect.sentence_encoder import SentenceEncoder

__all__ = ["SentenceEncoder", "fill_mask", "load_for_inference"]
