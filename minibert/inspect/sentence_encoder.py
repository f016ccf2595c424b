"""Sentence embeddings: one vector per text from a BERT encoder, as sentence-transformers computes them.

    encoder = SentenceEncoder.from_pretrained("all-MiniLM-L6-v2")   # a sentence-transformers folder
    vectors = encoder.encode(["A man is playing a guitar.", "Someone plays an instrument."])   # (2, 384)
    cosine_similarity(vectors)                                        # (2, 2), 1 on the diagonal

The encoder reads each text as `[CLS] text [SEP]`; pooling then turns its (S, H) token vectors into one (H,)
vector, and the folder's modules.json says how (`minibert/io/sentence_layout.py`).
Legend: B batch (texts), S sequence length, H hidden size.
"""

# Why pooling rather than [CLS]: BERT's own [CLS] vector was trained for NSP, not for similarity; models
# such as all-MiniLM-L6-v2 were fine-tuned so that the mean of the token vectors places texts of similar
# meaning close together (Reimers and Gurevych 2019, section 3).

import numpy as np

from minibert.autograd import no_grad
from minibert.errors import ShapeError
from minibert.inspect.model_folder import load_encoder
from minibert.io.sentence_layout import SentenceLayout
from minibert.model.sentence_vectors import mean_of_tokens

# torch.nn.functional.normalize's floor on the length, so an all-zero vector stays zero instead of NaN.
NORM_EPS = 1e-12


def pool(token_vectors, attention_mask, modes=("mean",)):
    """(B, S, H) token vectors -> (B, H * len(modes)) sentence vectors, over the tokens where mask is 1.

    "cls": token 0; "mean": the average of the real tokens (padding excluded); "max": each feature's largest
    value over the real tokens. Several modes are concatenated in the order given.
    """
    mask = np.asarray(attention_mask, dtype=token_vectors.dtype)[:, :, None]  # (B, S, 1)
    pooled = []
    for mode in modes:
        if mode == "cls":
            pooled.append(token_vectors[:, 0])
        elif mode == "mean":
            pooled.append(mean_of_tokens(token_vectors, attention_mask))
        elif mode == "max":
            pooled.append(np.where(mask > 0, token_vectors, -np.inf).max(axis=1))
        else:
            raise ShapeError(f"pooling mode {mode!r} is not one of 'cls', 'mean', 'max'")
    return np.concatenate(pooled, axis=-1)  # (B, H * len(modes))


def normalize(vectors):
    """Each row scaled to length 1 (Euclidean), so that dot products are cosine similarities."""
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(lengths, NORM_EPS)


def cosine_similarity(vectors):
    """(B, H) -> (B, B): the cosine of the angle between every two rows."""
    unit = normalize(np.asarray(vectors, dtype=np.float64))
    return unit @ unit.T


class SentenceEncoder:
    """A BertModel, its tokenizer and a `SentenceLayout` (pooling, normalisation, length limit)."""

    def __init__(self, model, tokenizer, layout=None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.layout = layout or SentenceLayout()

    @classmethod
    def from_pretrained(cls, directory, verbose=False):
        """Load a sentence-transformers folder; a plain BERT folder, or a pretraining run's folder, gets mean
        pooling, as sentence-transformers gives a model it wraps without a modules.json."""
        return cls(*load_encoder(directory, verbose))

    @property
    def max_length(self):
        limit = self.model.config.max_position_embeddings
        return min(self.layout.max_seq_length or limit, limit)

    def encode(self, texts, batch_size=32):
        """Texts -> a (B, H) float32 array of sentence embeddings, one row per text, in order.

        Texts longer than `max_length` tokens are cut at the end, as sentence-transformers cuts them.
        """
        if isinstance(texts, str):
            raise ShapeError("encode takes a list of texts, got one str; wrap it in a list: encode([text])")
        texts = [text.lower() for text in texts] if self.layout.lowercase else list(texts)
        if not texts:
            raise ShapeError("encode got no texts; pass at least one")
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer.batch_encode(texts[start:start + batch_size], max_length=self.max_length)
            with no_grad():
                output = self.model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"])
            rows.append(pool(output.sequence_output.data, batch["attention_mask"], self.layout.pooling))
        vectors = np.concatenate(rows)  # (B, H)
        return normalize(vectors) if self.layout.normalize else vectors


def similarity_table(texts, similarity, width=40):
    """The (B, B) similarity matrix as text: a column per text (numbered), a row per text with its start."""
    lines = ["      " + "".join(f"{f'[{column}]':>7}" for column in range(len(texts)))]
    for row, text in enumerate(texts):
        cells = "".join(f"{value:7.3f}" for value in similarity[row])
        shown = text if len(text) <= width else text[:width - 1] + "…"
        lines.append(f"{f'[{row}]':>5} {cells}   {shown}")
    return "\n".join(lines)
