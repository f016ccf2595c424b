"""What every complete model shares: its config, a one-line summary, and saving and loading.

The file formats live in `minibert/io`, below the model: io knows the config (minibert/config.py), not the
model classes, and builds whichever class it is handed. The methods here only forward to it.
"""

from minibert.config import BertConfig
from minibert.io.checkpoint import load_model, save_model
from minibert.io.pretrained import load_pretrained, save_pretrained
from minibert.model.memory import check_model_memory
from minibert.nn.module import Module


class SavableModel(Module):
    """A Module built from a `BertConfig`, which can be saved and loaded in our format and HuggingFace's."""

    def __init__(self, config):
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(f"{type(self).__name__} takes a BertConfig, got {type(config).__name__}; "
                            "build one with BertConfig(...) or BertConfig.preset('tiny')")
        # Before any weight exists: a config read from a stranger's file may claim terabytes of them.
        check_model_memory(config)
        self.config = config
        self.vocab_file = None  # set by from_pretrained when the folder has a vocab.txt, for the tokenizer

    def __repr__(self):
        millions = self.num_parameters() / 1e6
        return f"{type(self).__name__}({self.config.summary()}; {millions:.2f}M parameters, {self.dtype})"

    def save(self, path):
        """Write the config and weights to one file in minibert's format (an .npz, no pickle)."""
        save_model(self, path)

    @classmethod
    def load(cls, path):
        """A model read from a file written by `save` (weights in the dtype they were saved in)."""
        return load_model(cls, path)

    @classmethod
    def from_pretrained(cls, directory, dtype=None, strict=True, verbose=True):
        """A model read from a HuggingFace folder (config.json + model.safetensors), with NumPy alone.

        dtype: None keeps float64 files in float64 and reads float32/float16/bfloat16 ones as float32;
            integer weights (a quantized or damaged file) are refused, not cast.
        strict: refuse missing or unexpected weights (False leaves missing ones at their initial values).
        verbose: print what was skipped (buffers, tied copies) and renamed (gamma/beta).
        """
        return load_pretrained(cls, directory, dtype=dtype, strict=strict, verbose=verbose)

    def save_pretrained(self, directory):
        """Write config.json + model.safetensors that HuggingFace's `from_pretrained` reads."""
        save_pretrained(self, directory)
