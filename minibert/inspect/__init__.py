"""Looking inside a trained model: reading it from its folder, then what it guesses, where it attends, the
vector it gives a sentence, and whether it reads to the right of a blank.
"""

from minibert.inspect.fill_mask import fill_mask
from minibert.inspect.model_folder import load_for_inference
from minibert.inspect.sentence_encoder import SentenceEncoder

__all__ = ["SentenceEncoder", "fill_mask", "load_for_inference"]
