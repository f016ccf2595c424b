"""How much memory a model and a pretraining step need, estimated before anything is allocated.

A batch too large for the machine should fail at once, with a message that says what to change, and not
after minutes of swapping or when the operating system kills the process halfway through an epoch. The
estimate counts the arrays a step keeps alive at its peak, the start of `backward()`: weights, gradients and
Adam's m and v; every forward intermediate (the graph keeps them); the backward's working arrays.
`tests/test_memory_bad_input.py` checks the total against the peak that `tracemalloc` measures.

Legend: B batch, S sequence length, H hidden size, A heads, I intermediate size, V vocabulary, P masked.
"""

# What the peak holds, from the shapes alone:
# - the weights, their gradients, and the optimizer's two running averages (Adam's m and v): 4 per parameter;
# - the forward pass's activations: the graph keeps each op's inputs until backward reaches it
#   (`minibert/autograd/tensor.py`), so nothing is freed before then. Per layer that is a few arrays of each
#   of three shapes, (B, S, H), (B, A, S, S) and (B, S, I); the counts below are those of a training step as
#   the commands run it (tests/test_memory_bad_input.py holds the total to within 20% of a measured peak);
# - the working arrays of the backward pass, about three of the largest activation.

import os
import warnings

import numpy as np

from minibert.errors import ConfigError

# A step that needs more than this share of the available memory gets a warning: the operating system, the
# interpreter and NumPy's short-lived temporaries need room too.
WARN_SHARE = 0.5


class OutOfMemoryError(ConfigError, MemoryError):
    """A model or a batch that the estimate says cannot fit in this machine's available memory."""


class MemoryWarning(ResourceWarning):
    """A batch that may fit, but leaves little room for anything else."""


def count_parameters(config):
    """The number of learned numbers of `BertForPreTraining(config)` (the tied decoder counted once)."""
    hidden, inner = config.hidden_size, config.intermediate_size

    def linear(fan_in, fan_out):
        return fan_in * fan_out + fan_out  # weight (out, in) and bias

    layer_norm = 2 * hidden
    embeddings = (config.vocab_size + config.max_position_embeddings + config.type_vocab_size) * hidden
    layer = 4 * linear(hidden, hidden) + linear(hidden, inner) + linear(inner, hidden) + 2 * layer_norm
    pooler = linear(hidden, hidden)
    mlm_head = linear(hidden, hidden) + layer_norm + config.vocab_size  # transform, decoder bias
    nsp_head = linear(hidden, 2)
    return embeddings + layer_norm + config.num_hidden_layers * layer + pooler + mlm_head + nsp_head


def estimate_step_memory(config, batch_size, seq_len, max_predictions, dtype=np.float32):
    """Bytes one training step of `BertForPreTraining(config)` holds at its peak: forward activations,
    backward work, weights, gradients and Adam's state. For `batch_size` sequences of `seq_len` tokens with
    `max_predictions` masked positions each. With the Numba kernels (the default) a test holds it to within
    20% of tracemalloc's peak; the NumPy reference kernels add short-lived float64 temporaries it leaves out."""
    sizes = {"batch_size": batch_size, "seq_len": seq_len, "max_predictions": max_predictions}
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ConfigError(f"{name}={value!r}: it must be a whole number >= 0")
    hidden, heads, inner = config.hidden_size, config.num_attention_heads, config.intermediate_size
    tokens = batch_size * seq_len  # B·S
    scores = batch_size * heads * seq_len * seq_len  # B·A·S·S
    predictions = batch_size * max_predictions  # B·P
    # Embeddings, (B, S, H): two lookups and the position rows summed (4 arrays), LayerNorm, and dropout with
    # p > 0, which keeps its mask and its output (the mask is bool, a quarter of a float32 array, so counting
    # it whole errs on the safe side).
    embeddings = (5 + (2 if config.hidden_dropout_prob > 0 else 0)) * tokens * hidden
    # Per layer: ten (B, S, H) arrays (q, k and v, the context, and at the end of each sublayer the projection,
    # the residual sum and its LayerNorm), two (B, A, S, S) (the attention weights before and after dropout)
    # and three (B, S, I) (the feed-forward's widening, its activation and what its backward needs).
    layer_hidden = 10 * tokens * hidden
    layer_scores = 2 * scores
    layer_inner = 3 * tokens * inner
    layer = layer_hidden + layer_scores + layer_inner
    # MLM head at the P gathered positions: the gather, dense, GELU, LayerNorm: (B, P, H); the logits
    # (B, P, V). Pooler and NSP head: a few (B, H) arrays.
    head = 4 * predictions * hidden + predictions * config.vocab_size + 4 * batch_size * hidden
    activations = embeddings + config.num_hidden_layers * layer + head
    # Backward holds a gradient, the gradient it is computing and a temporary or two (NumPy's reference
    # kernels make more than the Numba ones): about three of the largest arrays.
    backward = 3 * max(scores, tokens * inner, predictions * config.vocab_size)
    weights = 4 * count_parameters(config)  # weights, gradients, Adam's m and v
    return int(activations + backward + weights) * np.dtype(dtype).itemsize


def available_memory():
    """Bytes this process can still allocate, or None if unknown: the least of what the machine has free
    (Linux's MemAvailable), what the process's address-space limit leaves (RLIMIT_AS, `ulimit -v`), and
    what its control group's limit leaves (a container's memory.max). Free memory alone misses the
    limits: under `ulimit -v 4000000` a machine with 16 GB free still refuses a 5 GB array."""
    known = [left for left in (_machine_available(), _address_space_left(), _cgroup_left()) if left is not None]
    return max(0, min(known)) if known else None


def _read_number(path, field=None):
    """An integer from a file (the first word of the line starting with `field`, if given), or None."""
    try:
        with open(path, encoding="ascii") as file:
            for line in file:
                if field is None:
                    return int(line.split()[0])
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _machine_available():
    kilobytes = _read_number("/proc/meminfo", "MemAvailable:")
    if kilobytes is not None:
        return kilobytes * 1024
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _address_space_left():
    """RLIMIT_AS minus the address space the process already uses (VmSize), or None without a limit."""
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY or limit < 0:
        return None
    used_kilobytes = _read_number("/proc/self/status", "VmSize:")
    return limit - (used_kilobytes or 0) * 1024


# The cgroup's (limit, usage) files: cgroup v2 (one hierarchy), then v1's memory controller.
CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))
NO_CGROUP_LIMIT = 2**60  # v1 writes "no limit" as a huge number near 2**63; v2 writes "max" (not a number)


def _cgroup_left():
    """The container's memory limit minus what it uses, or None when there is no limit."""
    for limit_file, usage_file in CGROUP_FILES:
        limit = _read_number(limit_file)
        if limit is not None and limit < NO_CGROUP_LIMIT:
            return limit - (_read_number(usage_file) or 0)
    return None


def check_step_memory(config, batch_size, seq_len, max_predictions, dtype=np.float32, available=None):
    """Compare a step's estimated memory with what the machine has; return the estimate in bytes.

    Raises `OutOfMemoryError` when the estimate exceeds the available memory, and warns (`MemoryWarning`)
    when it takes more than half of it. `available` defaults to `available_memory()`; when that is unknown,
    nothing is checked.
    """
    needed = estimate_step_memory(config, batch_size, seq_len, max_predictions, dtype)
    available = available_memory() if available is None else available
    if available is None:
        return needed
    what = (f"a training step with batch_size={batch_size}, seq_len={seq_len}, "
            f"max_predictions={max_predictions} ({config.summary()}, {np.dtype(dtype).name}) needs about "
            f"{_size(needed)}")
    if needed > available:
        raise OutOfMemoryError(
            f"{what}, but only {_size(available)} of memory is available; lower the batch size (memory grows "
            "with it) or the sequence length (attention grows with its square), or use a smaller model")
    if needed > WARN_SHARE * available:
        warnings.warn(f"{what}, {needed / available:.0%} of the {_size(available)} available; the machine "
                      "may start swapping: consider a smaller batch size", MemoryWarning, stacklevel=2)
    return needed


def largest_weight(config):
    """The number of elements of the model's largest weight matrix: the initialiser draws it in float64."""
    hidden = config.hidden_size
    return max(config.vocab_size, config.max_position_embeddings, config.intermediate_size, hidden) * hidden


def check_model_memory(config, available=None):
    """Refuse to build a model that would not fit in the memory this process may still use; return the
    bytes building it needs at its peak.

    The peak is the float32 weights plus, while the largest matrix is initialised, its float64 draws
    (`nn.layers.normal_init` draws N(0, 1) in float64, as NumPy does, before casting): 8 more bytes per
    element of the largest matrix (the word embeddings, for a real vocabulary).
    """
    # A config often comes from a file (config.json, a checkpoint's meta) that anyone may have written: one
    # line claiming `"vocab_size": 100000000000` would otherwise make the initialiser allocate until the
    # operating system kills the process.
    count = count_parameters(config)
    weights = count * np.dtype(np.float32).itemsize
    needed = weights + largest_weight(config) * np.dtype(np.float64).itemsize
    available = available_memory() if available is None else available
    if available is not None and needed > available:
        raise OutOfMemoryError(
            f"a model of {config.summary()} has {count:,} parameters, {_size(weights)} in float32 (and "
            f"{_size(needed)} while its float64 draws are cast), more than the {_size(available)} of memory "
            "this process may still use (the least of the free memory, `ulimit -v` and the container's "
            "limit); check the config's sizes (vocab_size, hidden_size, num_hidden_layers, "
            "max_position_embeddings) or use a smaller preset")
    return needed


def _size(size):
    return f"{size / 1e9:.2f} GB" if size >= 1e8 else f"{size / 1e6:.1f} MB"
