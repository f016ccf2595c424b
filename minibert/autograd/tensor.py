"""The Tensor, the graph it records, and reverse-mode differentiation over that graph.

A `Tensor` wraps a NumPy array. Every differentiable op is a `Function`: its `forward` computes the output
array and saves what its `backward` will need; its `backward` turns the gradient of the loss with respect to
the output into one gradient per input (the chain rule, one op at a time). Calling `loss.backward()` visits
the recorded ops from the loss back to the leaves, in reverse topological order, and adds each gradient into
the leaves' `.grad`. This is micrograd's idea with arrays instead of scalars.
"""

# micrograd's idea: a node keeps its inputs, a local rule gives their gradients, a topological walk applies
# the rules. The basic ops themselves (+, *, @, reshape, ...) live in `ops.py`; the neural-network ops (softmax,
# GELU, LayerNorm, ...) in `minibert/functional.py`.

import contextlib

import numpy as np

from minibert.errors import MinibertError, ShapeError

# Set to False inside `no_grad()`: ops then record nothing, so inference and finite differences cost no
# graph memory.
_grad_enabled = True


class no_grad(contextlib.ContextDecorator):
    """Record no graph inside this block (or function, used as a decorator), as `torch.no_grad`."""

    def __enter__(self):
        global _grad_enabled
        self.previous = _grad_enabled
        _grad_enabled = False

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self.previous


def is_grad_enabled():
    return _grad_enabled


def as_array(value):
    """The array a Tensor holds: ndarrays keep their dtype (as `torch.from_numpy`); Python numbers and lists
    become float32, the dtype models train in."""
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    return np.asarray(value, dtype=np.float32)


class Tensor:
    """An array that remembers how it was computed, so gradients can flow back through it."""

    __array_priority__ = 1000  # so `ndarray * Tensor` calls Tensor.__rmul__ instead of NumPy's broadcasting

    def __init__(self, data, requires_grad=False):
        self.data = as_array(data)
        self.grad = None
        self.requires_grad = bool(requires_grad)
        if self.requires_grad and not np.issubdtype(self.data.dtype, np.floating):
            raise TypeError(f"only floating-point tensors can require gradients, got dtype {self.data.dtype}; "
                            "integer arrays are for token ids")
        self._function = None  # the Function that produced this tensor; None for a leaf

    # ----- what a tensor is -----
    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return self.data.size

    @property
    def is_leaf(self):
        return self._function is None

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, precision=4, threshold=20)}, dtype={self.dtype}{grad})"

    def numpy(self):
        return self.data

    def __array__(self, dtype=None, copy=None):
        """`np.asarray(tensor)` gives the values (no graph), so outside code can treat outputs as arrays."""
        if copy:
            return self.data.astype(dtype or self.dtype, copy=True)
        return self.data if dtype is None else self.data.astype(dtype, copy=False)

    def item(self):
        return self.data.item()

    def detach(self):
        """The same values, cut from the graph: no gradient flows through the result."""
        return Tensor(self.data)

    def zero_grad(self):
        self.grad = None

    # ----- ops, with NumPy's names; each is a Function in ops.py -----
    def __add__(self, other):
        return ops.Add.apply(self, other)

    def __radd__(self, other):
        return ops.Add.apply(other, self)

    def __sub__(self, other):
        return ops.Sub.apply(self, other)

    def __rsub__(self, other):
        return ops.Sub.apply(other, self)

    def __mul__(self, other):
        return ops.Mul.apply(self, other)

    def __rmul__(self, other):
        return ops.Mul.apply(other, self)

    def __truediv__(self, other):
        return ops.Div.apply(self, other)

    def __rtruediv__(self, other):
        return ops.Div.apply(other, self)

    def __neg__(self):
        return ops.Neg.apply(self)

    def __pow__(self, exponent):
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"** takes a Python number as exponent, got {type(exponent).__name__}; "
                            "for a tensor exponent write (x.log() * y).exp()")
        return ops.Pow.apply(self, exponent=exponent)

    def __matmul__(self, other):
        return ops.MatMul.apply(self, other)

    def __rmatmul__(self, other):
        return ops.MatMul.apply(other, self)

    def sum(self, axis=None, keepdims=False):
        return ops.Sum.apply(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        axes = range(self.ndim) if axis is None else np.atleast_1d(axis)
        count = int(np.prod([self.shape[a] for a in axes]))
        return self.sum(axis=axis, keepdims=keepdims) * (1.0 / count)

    def exp(self):
        return ops.Exp.apply(self)

    def log(self):
        return ops.Log.apply(self)

    def tanh(self):
        return ops.Tanh.apply(self)

    def sqrt(self):
        return ops.Sqrt.apply(self)

    def relu(self):
        return ops.Relu.apply(self)

    def __abs__(self):
        return ops.Abs.apply(self)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.Reshape.apply(self, shape=shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return ops.Transpose.apply(self, axes=axes or None)

    permute = transpose

    @property
    def T(self):
        return self.transpose()

    def __getitem__(self, index):
        return ops.GetItem.apply(self, index=index)

    # ----- reverse mode -----
    def backward(self, grad=None, retain_graph=False):
        """Add d(self)/d(leaf) into every leaf's `.grad` that requires gradients.

        `grad` seeds the walk; for a scalar it defaults to 1.0. Gradients accumulate across calls, as in
        PyTorch: clear them with `zero_grad`. Afterwards the graph and the arrays it saved are released
        (unless `retain_graph=True`), so memory does not grow from step to step.
        """
        if not self.requires_grad:
            raise MinibertError("backward() on a tensor that does not require grad: no input of the "
                                "computation had requires_grad=True (or it ran under no_grad())")
        if grad is None:
            if self.data.size != 1:
                raise ShapeError(f"backward() without a gradient needs a scalar, but this tensor has shape "
                                 f"{self.shape}; reduce it first (e.g. .sum() or .mean()) or pass "
                                 f"backward(grad) with an array of shape {self.shape}")
            grad = np.ones_like(self.data)
        grad = np.asarray(grad, dtype=self.dtype)
        if grad.shape != self.shape:
            raise ShapeError(f"backward() got a gradient of shape {grad.shape} for a tensor of shape {self.shape}")

        # BEGIN EXERCISE backward_walk: in reverse topological order, each node's backward; sum a tensor's grads
        order = _topological_order(self)
        grads = {id(self): grad}  # gradient of the loss w.r.t. each node reached so far
        for node in reversed(order):
            grad_output = grads.pop(id(node), None)
            if grad_output is None:  # no path from the loss reaches this node through a differentiable input
                continue
            if node._function is None:  # a leaf: accumulate into .grad (a tensor used twice gets the sum)
                node.grad = grad_output.copy() if node.grad is None else node.grad + grad_output
                continue
            function = node._function
            if function.inputs is None:
                raise MinibertError(f"backward() through a graph that was already released (op {function.name}). "
                                    "A graph is freed after backward() to save memory; call "
                                    "backward(retain_graph=True) the first time if you need to go back twice, or "
                                    "recompute the forward pass")
            input_grads = function.backward(grad_output)
            if not isinstance(input_grads, tuple):
                input_grads = (input_grads,)
            for tensor, input_grad in zip(function.inputs, input_grads, strict=True):
                if input_grad is None or not tensor.requires_grad:
                    continue
                if input_grad.shape != tensor.shape:
                    raise ShapeError(f"{function.name}.backward returned a gradient of shape {input_grad.shape} "
                                     f"for an input of shape {tensor.shape}")
                key = id(tensor)
                grads[key] = input_grad if key not in grads else grads[key] + input_grad
            if not retain_graph:
                function.release()
        # END EXERCISE


def _topological_order(root):
    """Nodes reachable from `root`, each after all of its inputs (iterative DFS: no recursion limit, so a
    chain of 10,000 ops works)."""
    # BEGIN EXERCISE topological_order: depth-first with a stack; a node goes out after all of its inputs
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        function = node._function
        if function is not None and function.inputs is not None:
            for parent in function.inputs:
                if parent.requires_grad and id(parent) not in visited:
                    stack.append((parent, False))
    return order
    # END EXERCISE


class Function:
    """One differentiable op. Subclasses write `forward(*arrays, **options) -> array`, saving on `self` what
    the backward needs, and `backward(grad_output) -> gradient per input` right beside it. A forward may
    return (array, *side arrays): `apply` then returns (Tensor, *side arrays), the side arrays outside the
    graph (the attention weights of the speed layer's fused attention, `minibert/fast/ops.py`, to look at).

    `self.needs_grad[i]` tells backward whether input i wants a gradient, so it can skip work (and return
    None) for inputs such as token ids or masks.
    """

    @classmethod
    def apply(cls, *inputs, **options):
        # BEGIN EXERCISE function_apply: forward on arrays; the output records op and inputs only if a grad is wanted
        tensors = tuple(_as_input(x, inputs) for x in inputs)
        function = cls()
        function.needs_grad = tuple(t.requires_grad for t in tensors)
        arrays = tuple(t.data for t in tensors)
        output = function.forward(*arrays, **options)
        side = ()
        if isinstance(output, tuple):  # (output, side arrays): the side arrays come back as they are
            output, *side = output
        requires_grad = _grad_enabled and any(function.needs_grad)
        result = Tensor(output, requires_grad=requires_grad and np.issubdtype(output.dtype, np.floating))
        if result.requires_grad:
            function.inputs = tensors
            result._function = function
        return (result, *side) if side else result
        # END EXERCISE

    @property
    def name(self):
        return type(self).__name__

    def release(self):
        """Drop the inputs and every array the forward saved: the graph behind this op is freed."""
        self.__dict__.clear()
        self.inputs = None


def _as_input(value, all_inputs):
    """Op inputs become Tensors. A Python number takes the dtype of the floating tensor it meets, so
    `x * 2.0` stays float32 for float32 x (NumPy would keep a float64 0-d array's precision)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        dtype = next((t.dtype for t in all_inputs if isinstance(t, Tensor) and t.dtype.kind == "f"), np.float32)
        return Tensor(np.asarray(value, dtype=dtype))
    return Tensor(value)


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`: the adjoint of broadcasting is summation.

    The one place where broadcasting is undone. If x of shape (4,) was broadcast against (3, 4), each x[j]
    was used 3 times, so its gradient is the sum of those 3 uses.
    """
    # BEGIN EXERCISE unbroadcast: sum over the extra leading axes and over axes where shape has a 1
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra < 0:
        raise ShapeError(f"cannot unbroadcast a gradient of shape {grad.shape} to the larger shape {shape}")
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1)
    summed = grad.sum(axis=axes, keepdims=True) if axes else grad
    return summed.reshape(shape)
    # END EXERCISE


# The op module imports Tensor and Function from here, so they are bound only now that both exist; methods
# below look the ops up at call time.
from minibert.autograd import ops  # noqa: E402
