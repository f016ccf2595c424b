"""The activation functions BERT configs name, by their `config.json` names (`hidden_act`).

- "gelu": the exact GELU, x·Φ(x) with Φ the normal CDF via erf (Hendrycks & Gimpel 2016). The BERT paper,
  Google's first release and HuggingFace's "gelu" use it.
- "gelu_new" (also "gelu_tanh", "gelu_pytorch_tanh"): the tanh approximation
  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), which Google's modeling.py switched to later. The two differ by
  up to about 1e-3, enough to matter when loading weights trained with the other one.
- "relu": max(x, 0), the original Transformer's choice.
"""

from minibert import functional as F
from minibert.errors import ConfigError

# The GELU names and the form each means (F.gelu's `approximate`)
GELU_FORMS = {"gelu": "none", "gelu_new": "tanh", "gelu_tanh": "tanh", "gelu_pytorch_tanh": "tanh"}

ACTIVATIONS = {
    **{name: (lambda x, form=form: F.gelu(x, approximate=form)) for name, form in GELU_FORMS.items()},
    "relu": lambda x: x.relu(),
}


def activation(name):
    """The function of Tensors that `hidden_act = name` means."""
    if name not in ACTIVATIONS:
        raise ConfigError(f"hidden_act={name!r} is not supported; choose one of {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[name]
