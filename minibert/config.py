"""`BertConfig`: every size and switch of the model, with the field names of BERT's `config.json`.

Because the names are those of Google's `bert_config.json` and HuggingFace's `config.json`, a real config
file loads as it is (`BertConfig.from_dict(json.load(f))`). Keys BERT never used (`architectures`,
`model_type`, `dtype`, ...) are kept in `extra`, so saving writes them back unchanged.

Named presets: `tiny` (tests and quick lessons), `mini` (BERT-Mini, Turc et al. 2019, the laptop model),
`base` (BERT-base, Devlin et al. 2018); sizes in the comment below.
"""

# Named presets:
#     tiny  2 layers, H 64, 2 heads, FFN 256, vocabulary 512: for tests and quick lessons (~0.2M parameters)
#     mini  4 layers, H 256, 4 heads, FFN 1024, vocabulary 8192: BERT-Mini (Turc et al. 2019), the laptop model
#     base  12 layers, H 768, 12 heads, FFN 3072, vocabulary 30522: BERT-base (Devlin et al. 2018), 110M

import dataclasses
from dataclasses import dataclass, field

from minibert.errors import ConfigError, short_repr
from minibert.nn.transformer import ACTIVATIONS
from minibert.validation import is_number

ATTENTION_KINDS = ("bidirectional", "causal")


@dataclass
class BertConfig:
    vocab_size: int = 30522  # WordPiece vocabulary size (bert-base-uncased: 30522)
    hidden_size: int = 768  # H, the width of every token vector
    num_hidden_layers: int = 12  # L, encoder layers
    num_attention_heads: int = 12  # A; the head size is H / A = 64
    intermediate_size: int = 3072  # I, the feed-forward's inner width (4·H)
    hidden_act: str = "gelu"  # "gelu" (exact erf form), "gelu_new"/"gelu_tanh" (tanh approximation), "relu"
    hidden_dropout_prob: float = 0.1  # dropout on embeddings and on each sublayer's output
    attention_probs_dropout_prob: float = 0.1  # dropout on the attention weights
    max_position_embeddings: int = 512  # learned positions: the longest sequence the model can read
    type_vocab_size: int = 2  # segments: A and B
    initializer_range: float = 0.02  # std of the normal initialiser
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0  # the [PAD] id (kept for HF's config.json; padding is told by attention_mask)
    attention: str = "bidirectional"  # "bidirectional" (BERT) or "causal" (GPT): one mask apart
    extra: dict = field(default_factory=dict, repr=False, compare=False)  # config.json keys BERT never used

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ConfigError(f"{name}={value!r}: it must be a positive integer")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size={self.hidden_size} is not divisible by num_attention_heads="
                f"{self.num_attention_heads}: each head takes an equal slice of the hidden vector. Choose a "
                f"head count that divides {self.hidden_size}, e.g. "
                f"{_divisor_near(self.hidden_size, self.num_attention_heads)}")
        if not isinstance(self.hidden_act, str) or self.hidden_act not in ACTIVATIONS:  # a list is unhashable
            raise ConfigError(f"hidden_act={self.hidden_act!r} is not supported; choose one of "
                              f"{', '.join(ACTIVATIONS)}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not is_number(value) or not 0.0 <= value < 1.0:
                raise ConfigError(f"{name}={value!r}: a dropout probability must be a number in [0, 1)")
        if not is_number(self.initializer_range) or self.initializer_range < 0:
            raise ConfigError(f"initializer_range={self.initializer_range!r}: it must be a finite number "
                              ">= 0 (BERT: 0.02)")
        if not is_number(self.layer_norm_eps) or self.layer_norm_eps <= 0:
            raise ConfigError(f"layer_norm_eps={self.layer_norm_eps!r}: it must be a finite number > 0 "
                              "(BERT: 1e-12)")
        if type(self.pad_token_id) is not int or not 0 <= self.pad_token_id < self.vocab_size:
            raise ConfigError(f"pad_token_id={self.pad_token_id!r}: it must be an id below vocab_size="
                              f"{self.vocab_size}")
        if self.attention not in ATTENTION_KINDS:
            raise ConfigError(f"attention={self.attention!r}: choose 'bidirectional' (BERT) or "
                              "'causal' (GPT)")

    @property
    def head_size(self):
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def preset(cls, name, **overrides):
        """A named configuration ("tiny", "mini", "base"), with any field overridden:
        `BertConfig.preset("mini", vocab_size=len(tokenizer.vocab))`."""
        if name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls(**{**PRESETS[name], **overrides})

    @classmethod
    def from_dict(cls, values):
        """A config from a `config.json` dict (ours, Google's or HuggingFace's). Unknown keys go to `extra`.

        HuggingFace features minibert does not have are refused rather than silently ignored, since the
        weights would then compute something else.
        """
        if not isinstance(values, dict):
            raise ConfigError(f"a config must be a JSON object (a dict), got {type(values).__name__}")
        values = dict(values)
        _refuse_unsupported(values)
        _check_read_extras(values)
        # HF marks a causal (decoder) BERT with is_decoder; it is derived from `attention` when saving.
        is_decoder = values.pop("is_decoder", False)
        if not isinstance(is_decoder, bool):  # Python's truthiness would read "no" as a causal model
            raise ConfigError(f"is_decoder={short_repr(is_decoder)}: it must be true or false")
        values.setdefault("attention", "causal" if is_decoder else "bidirectional")
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        extra = {key: values.pop(key) for key in list(values) if key not in known}
        try:
            return cls(**values, extra=extra)
        except TypeError as error:  # a field of the wrong kind, e.g. a list where a number belongs
            raise ConfigError(f"invalid config: {error}") from None

    def to_dict(self):
        """The config as a JSON-able dict in `config.json` form: the fields, `is_decoder`, and `extra`."""
        values = {**self.extra, **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)}}
        del values["extra"]
        values["is_decoder"] = self.attention == "causal"
        return values

    def summary(self):
        """One line: 'L=4 H=256 A=4 I=1024 V=8192 gelu bidirectional'."""
        return (f"L={self.num_hidden_layers} H={self.hidden_size} A={self.num_attention_heads} "
                f"I={self.intermediate_size} V={self.vocab_size} {self.hidden_act} {self.attention}")


PRESETS = {
    "tiny": dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=256, max_position_embeddings=128),
    # `tiny` twice as deep: the third size of `python -m minibert experiment size` (the paper's Table 6)
    "tiny-deep": dict(vocab_size=512, hidden_size=64, num_hidden_layers=4, num_attention_heads=2,
                      intermediate_size=256, max_position_embeddings=128),
    "mini": dict(vocab_size=8192, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                 intermediate_size=1024, max_position_embeddings=512),
    "base": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512),
}

# (key, the value minibert supports, what the other values would need)
_UNSUPPORTED = (
    ("position_embedding_type", "absolute", "relative position embeddings"),
    ("add_cross_attention", False, "cross-attention to an encoder (an encoder-decoder model)"),
)


def _refuse_unsupported(values):
    for key, supported, feature in _UNSUPPORTED:
        if values.get(key, supported) not in (supported, None):
            raise ConfigError(f"{key}={values[key]!r} asks for {feature}, which minibert does not implement; "
                              f"only {key}={supported!r} models can be loaded")


def _check_read_extras(values):
    """The two `extra` keys minibert reads (fine-tuning's heads) must have HuggingFace's types: a list of
    class names, and label names by id ("0", "1", ...). Anything else would fail deep inside fine-tuning."""
    architectures = values.get("architectures")
    if architectures is not None and (not isinstance(architectures, list)
                                      or not all(isinstance(name, str) for name in architectures)):
        raise ConfigError(f"architectures={short_repr(architectures)}: it must be a list of class names "
                          '(e.g. ["BertForPreTraining"]) or null')
    id2label = values.get("id2label")
    by_id = (isinstance(id2label, dict) and sorted(id2label) == sorted(str(i) for i in range(len(id2label)))
             and all(isinstance(label, str) for label in id2label.values()))
    if id2label is not None and not by_id:
        raise ConfigError(f"id2label={short_repr(id2label)}: it must name each label id \"0\", \"1\", ... "
                          'with a string (e.g. {"0": "neg", "1": "pos"}) or be null')


def _divisor_near(hidden_size, heads):
    return min((d for d in range(1, hidden_size + 1) if hidden_size % d == 0), key=lambda d: abs(d - heads))
