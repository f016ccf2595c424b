"""The layers of `minibert.nn`: Module bookkeeping, and every layer's gradient and value.

Exercises: gradients are checked against finite differences in float64, on both backends; values against
formulas written out here in plain NumPy (multi-head attention as an explicit loop over heads, the one thing
the layer avoids).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert import Tensor, gradcheck
from minibert.errors import CheckpointError, ConfigError
from minibert.nn.embedding import Embedding
from minibert.nn.layers import Dropout, LayerNorm, Linear
from minibert.nn.module import Module, ModuleList, Parameter
from minibert.nn.transformer import FeedForward, MultiHeadSelfAttention, SublayerOutput, activation


def leaf(shape, seed=0):
    return Tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def float64_params(module, seed=1, scale=0.5):
    """Convert to float64 and give every parameter random values, so that zero biases and unit LayerNorm
    weights cannot hide a mistake."""
    module.to(np.float64)
    rng = np.random.default_rng(seed)
    for parameter in module.parameters():
        parameter.data[...] = rng.standard_normal(parameter.shape) * scale
    return module


def check_module(module, *inputs, call=None):
    """gradcheck of `call(*inputs)` (default: the module itself) w.r.t. the inputs that require grad and
    every parameter of the module, named in the report."""
    call = call or module
    params = dict(module.named_parameters())
    count = len(inputs)
    return gradcheck(lambda *xs: call(*xs[:count]), *inputs, *params.values(),
                     names=[f"input {i}" for i in range(count)] + list(params))


class Holder(Module):
    def __init__(self, parameter):
        super().__init__()
        self.tied = parameter


class Pair(Module):
    """A two-level tree with a shared (tied) parameter, for the bookkeeping tests."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.first = Linear(3, 4, rng)
        self.blocks = ModuleList([Linear(4, 4, rng), LayerNorm(4)])
        self.head = Holder(self.first.weight)  # the same Parameter under a second name, "head.tied"


# ----- Module bookkeeping -----

def test_named_parameters_follow_the_attribute_path_and_list_tied_weights_once():
    """Names are the attribute path ("blocks.1.weight"); a shared Parameter appears once, first name wins."""
    names = [name for name, _ in Pair().named_parameters()]
    assert names == ["first.weight", "first.bias", "blocks.0.weight", "blocks.0.bias", "blocks.1.weight",
                     "blocks.1.bias"]
    assert Pair().num_parameters() == 4 * 3 + 4 + 4 * 4 + 4 + 4 + 4


def test_reassigning_an_attribute_replaces_the_registration():
    """Setting an attribute again (or to a non-parameter) must not leave a stale entry behind."""
    module = Pair()
    module.first = Linear(3, 2, np.random.default_rng(0))
    assert dict(module.named_parameters())["first.weight"].shape == (2, 3)
    module.blocks = None
    assert [n for n, _ in module.named_parameters() if n.startswith("blocks")] == []


def test_forgetting_super_init_is_a_clear_error():
    class Broken(Module):
        def __init__(self):
            self.weight = Parameter(np.zeros(2))

    with pytest.raises(TypeError, match="super"):
        Broken()


def test_train_eval_reach_every_submodule():
    module = Pair()
    assert all(m.training for _, m in module.named_modules())
    assert module.eval() is module
    assert not any(m.training for _, m in module.named_modules())
    module.train()
    assert all(m.training for _, m in module.named_modules())


def test_zero_grad_clears_every_gradient():
    module = Pair()
    module.blocks[1](module.blocks[0](module.first(Tensor(np.ones((2, 3), np.float32))))).sum().backward()
    assert all(p.grad is not None for p in module.parameters())
    module.zero_grad()
    assert all(p.grad is None for p in module.parameters())


def test_to_converts_in_place_and_keeps_ties():
    """to(float64) converts every parameter but keeps the Parameter objects (so ties and optimizers hold)."""
    module = Pair()
    before = [id(p) for p in module.parameters()]
    module.to(np.float64)
    assert [id(p) for p in module.parameters()] == before
    assert all(p.dtype == np.float64 for p in module.parameters())
    assert module.head.tied is module.first.weight
    with pytest.raises(ConfigError, match="float32 or float64"):
        module.to(np.int32)


def test_state_dict_round_trip_copies_values_into_the_same_arrays():
    source, target = Pair(), Pair()
    for p in source.parameters():
        p.data[...] = np.random.default_rng(3).standard_normal(p.shape)
    arrays_before = [p.data for p in target.parameters()]
    target.load_state_dict({k: v.copy() for k, v in source.state_dict().items()})
    for (name, a), (_, b) in zip(source.named_parameters(), target.named_parameters(), strict=True):
        np.testing.assert_array_equal(a.data, b.data, err_msg=name)
    assert all(p.data is a for p, a in zip(target.parameters(), arrays_before, strict=True))


def test_load_state_dict_names_every_problem():
    """strict=True lists missing, unexpected and mis-shaped names; strict=False returns missing/unexpected
    but still refuses a wrong shape."""
    state = Pair().state_dict()
    del state["first.bias"]
    state["extra.weight"] = np.zeros(3)
    state["blocks.1.weight"] = np.zeros(5)
    with pytest.raises(CheckpointError) as error:
        Pair().load_state_dict(state)
    message = str(error.value)
    assert "first.bias" in message and "extra.weight" in message and "blocks.1.weight" in message
    assert "(5,)" in message
    state["blocks.1.weight"] = np.zeros(4)
    missing, unexpected = Pair().load_state_dict(state, strict=False)
    assert missing == ["first.bias"] and unexpected == ["extra.weight"]


# ----- layers -----

def test_linear_value_and_gradient(backend):
    """y = x·Wᵀ + b with W stored [out, in]."""
    layer = float64_params(Linear(5, 3, np.random.default_rng(0)))
    x = leaf((2, 4, 5))
    expected = np.einsum("bsi,oi->bso", x.data, layer.weight.data) + layer.bias.data
    np.testing.assert_allclose(layer(x).data, expected, rtol=1e-12)
    assert layer.weight.shape == (3, 5)
    assert check_module(layer, x)


def test_linear_initialisation_is_berts():
    """Weights ~ N(0, 0.02²), biases 0 (measured on a large layer, so the std estimate is tight)."""
    layer = Linear(256, 512, np.random.default_rng(0), std=0.02)
    assert layer.weight.dtype == np.float32
    assert abs(layer.weight.data.std() - 0.02) < 0.0005 and abs(layer.weight.data.mean()) < 0.0005
    assert not layer.bias.data.any()


def test_embedding_value_and_gradient(backend):
    """A lookup: row ids[i] of the table; an id used twice gets both gradients."""
    layer = float64_params(Embedding(7, 3, np.random.default_rng(0)))
    ids = np.array([[1, 4, 1], [6, 0, 1]])
    np.testing.assert_array_equal(layer(ids).data, layer.weight.data[ids])
    assert check_module(layer, ids)


def test_layer_norm_value_and_gradient(backend):
    """(x - mean) / sqrt(var + eps) · weight + bias over the last axis; initialised to weight 1, bias 0."""
    fresh = LayerNorm(6)
    assert np.all(fresh.weight.data == 1) and np.all(fresh.bias.data == 0)
    layer = float64_params(LayerNorm(6, eps=1e-5))
    x = leaf((2, 3, 6))
    mean, var = x.data.mean(-1, keepdims=True), x.data.var(-1, keepdims=True)
    expected = (x.data - mean) / np.sqrt(var + 1e-5) * layer.weight.data + layer.bias.data
    np.testing.assert_allclose(layer(x).data, expected, rtol=1e-10, atol=1e-12)
    assert check_module(layer, x)


def test_dropout_train_and_eval():
    """Training: values are 0 or x/(1-p), about a fraction p dropped; eval: the identity."""
    layer = Dropout(0.25, np.random.default_rng(0))
    x = Tensor(np.ones((200, 200)))
    y = layer(x).data
    assert set(np.unique(y)) <= {0.0, 1 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.01
    layer.eval()
    assert layer(x) is x


def test_dropout_gradient_with_a_replayed_generator(backend):
    """The gradient flows through kept units only (scaled) when the same random draws are replayed."""
    rng = np.random.default_rng(5)
    layer = Dropout(0.3, rng)
    state = rng.bit_generator.state

    def replay(x):
        rng.bit_generator.state = state
        return layer(x)

    assert gradcheck(replay, leaf((4, 5)))


@pytest.mark.parametrize("name", ["gelu", "gelu_new", "relu"])
def test_feed_forward_value_and_gradient(backend, name):
    """act(x·W₁ᵀ + b₁) for each supported activation."""
    layer = float64_params(FeedForward(4, 7, name, np.random.default_rng(0)))
    x = leaf((2, 3, 4))
    hidden = x.data @ layer.dense.weight.data.T + layer.dense.bias.data
    expected = np.maximum(hidden, 0) if name == "relu" else activation(name)(Tensor(hidden)).data
    np.testing.assert_allclose(layer(x).data, expected, rtol=1e-12)
    assert check_module(layer, x)


def test_unknown_activation_is_refused():
    with pytest.raises(ConfigError, match="swish"):
        activation("swish")


def test_sublayer_output_is_post_ln(backend):
    """LayerNorm(residual + Dense(h)) in eval mode (dropout off), and its gradient w.r.t. both inputs."""
    layer = float64_params(SublayerOutput(5, 4, 0.1, 1e-12, np.random.default_rng(0))).eval()
    h, residual = leaf((2, 3, 5), 1), leaf((2, 3, 4), 2)
    z = residual.data + h.data @ layer.dense.weight.data.T + layer.dense.bias.data
    z = (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-12)
    expected = z * layer.LayerNorm.weight.data + layer.LayerNorm.bias.data
    np.testing.assert_allclose(layer(h, residual).data, expected, rtol=1e-10, atol=1e-12)
    assert check_module(layer, h, residual)


def attention_reference(x, layer, mask):
    """Multi-head attention with an explicit loop over heads, in plain NumPy (independent of the layer's
    reshapes): for each head, softmax(q_a·k_aᵀ/√D) over the visible keys, times v_a; heads concatenated."""
    def project(linear):
        return x @ linear.weight.data.T + linear.bias.data

    q, k, v = project(layer.query), project(layer.key), project(layer.value)
    size = layer.head_size
    heads = []
    for a in range(layer.num_heads):
        cols = slice(a * size, (a + 1) * size)
        scores = q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / np.sqrt(size)  # (B, S, S)
        scores = np.where(mask[:, 0], scores, -np.inf)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        heads.append(weights @ v[..., cols])
    return np.concatenate(heads, axis=-1)


@given(st.integers(1, 3), st.integers(1, 6), st.sampled_from([(8, 2), (6, 3), (4, 1)]), st.booleans(),
       st.integers(0, 2**16))
def test_attention_equals_a_loop_over_heads(batch, seq_len, sizes, causal, seed):
    """The batched all-heads computation equals the per-head loop, for padding and causal masks."""
    hidden, heads = sizes
    layer = MultiHeadSelfAttention(hidden, heads, 0.1, np.random.default_rng(seed))
    layer = float64_params(layer, seed).eval()
    x = np.random.default_rng(seed + 1).standard_normal((batch, seq_len, hidden))
    lengths = np.random.default_rng(seed + 2).integers(1, seq_len + 1, size=batch)
    mask = (np.arange(seq_len) < lengths[:, None])[:, None, None, :]  # (B, 1, 1, S)
    if causal:
        mask = mask & np.tri(seq_len, dtype=bool)
    context, probs = layer(Tensor(x), np.broadcast_to(mask, (batch, 1, seq_len, seq_len)))
    np.testing.assert_allclose(context.data, attention_reference(x, layer, mask), rtol=1e-10, atol=1e-12)
    assert probs.shape == (batch, heads, seq_len, seq_len)
    assert np.all(probs.data[np.broadcast_to(~mask, probs.shape)] == 0)


def test_attention_gradient(backend):
    """Gradients w.r.t. the input and q, k, v weights and biases, with a padding mask."""
    layer = float64_params(MultiHeadSelfAttention(6, 2, 0.1, np.random.default_rng(0))).eval()
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)[:, None, None, :]
    x = leaf((2, 4, 6))
    assert check_module(layer, x, call=lambda x: layer(x, mask)[0])
