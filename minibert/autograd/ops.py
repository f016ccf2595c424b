"""The basic ops of `Tensor`, each a forward and its backward side by side.

Arithmetic, elementwise functions, matrix multiplication and reductions first; then the ops that move numbers
around without changing them (reshape, transpose, indexing, concatenation), whose backward moves the gradient
back to where each number came from. In every backward, `grad_output` is dLoss/dOutput, and the comment
restates the forward line being differentiated. Binary ops broadcast like NumPy; their backward undoes it with
`unbroadcast`.
"""

import numpy as np

from minibert.autograd.tensor import Function, Tensor, unbroadcast
from minibert.errors import ShapeError
from minibert.kernels.dispatch import check_matmul


def _broadcast_shape(a_shape, b_shape, op):
    try:
        return np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {a_shape} and {b_shape} cannot be broadcast together; "
                         "each trailing dimension must match or be 1") from None


class Add(Function):
    def forward(self, a, b):
        _broadcast_shape(a.shape, b.shape, "+")
        self.a_shape, self.b_shape = a.shape, b.shape
        return a + b

    def backward(self, grad_output):
        # BEGIN EXERCISE add_backward: both inputs get grad itself, each unbroadcast to its own shape
        # out = a + b  ->  d/da = 1, d/db = 1 (then summed over broadcast axes)
        return unbroadcast(grad_output, self.a_shape), unbroadcast(grad_output, self.b_shape)
        # END EXERCISE


class Sub(Function):
    def forward(self, a, b):
        _broadcast_shape(a.shape, b.shape, "-")
        self.a_shape, self.b_shape = a.shape, b.shape
        return a - b

    def backward(self, grad_output):
        # out = a - b
        return unbroadcast(grad_output, self.a_shape), unbroadcast(-grad_output, self.b_shape)


class Mul(Function):
    def forward(self, a, b):
        _broadcast_shape(a.shape, b.shape, "*")
        self.a, self.b = a, b
        return a * b

    def backward(self, grad_output):
        # BEGIN EXERCISE mul_backward: each input's gradient is grad times the other input, unbroadcast to its own shape
        # out = a * b  ->  d/da = b, d/db = a
        grad_a = unbroadcast(grad_output * self.b, self.a.shape) if self.needs_grad[0] else None
        grad_b = unbroadcast(grad_output * self.a, self.b.shape) if self.needs_grad[1] else None
        return grad_a, grad_b
        # END EXERCISE


class Div(Function):
    def forward(self, a, b):
        _broadcast_shape(a.shape, b.shape, "/")
        self.a, self.b = a, b
        return a / b

    def backward(self, grad_output):
        # out = a / b  ->  d/da = 1/b, d/db = -a/b^2
        grad_a = unbroadcast(grad_output / self.b, self.a.shape) if self.needs_grad[0] else None
        grad_b = unbroadcast(-grad_output * self.a / (self.b * self.b), self.b.shape) if self.needs_grad[1] else None
        return grad_a, grad_b


class Neg(Function):
    def forward(self, a):
        return -a

    def backward(self, grad_output):
        return -grad_output


class Pow(Function):
    def forward(self, a, exponent):
        self.a, self.exponent = a, exponent
        return a ** np.asarray(exponent, dtype=a.dtype)

    def backward(self, grad_output):
        # out = a^p  ->  d/da = p * a^(p-1)
        p = np.asarray(self.exponent, dtype=self.a.dtype)
        return grad_output * p * self.a ** (p - 1)


class Exp(Function):
    def forward(self, a):
        self.out = np.exp(a)
        return self.out

    def backward(self, grad_output):
        # out = e^a  ->  d/da = e^a, which the forward already computed
        return grad_output * self.out


class Log(Function):
    def forward(self, a):
        self.a = a
        return np.log(a)

    def backward(self, grad_output):
        # out = log(a)  ->  d/da = 1/a
        return grad_output / self.a


class Tanh(Function):
    def forward(self, a):
        self.out = np.tanh(a)
        return self.out

    def backward(self, grad_output):
        # BEGIN EXERCISE tanh_backward: grad times 1 - tanh², from the output the forward saved
        # out = tanh(a)  ->  d/da = 1 - tanh(a)^2
        return grad_output * (1 - self.out * self.out)
        # END EXERCISE


class Sqrt(Function):
    def forward(self, a):
        self.out = np.sqrt(a)
        return self.out

    def backward(self, grad_output):
        # out = sqrt(a)  ->  d/da = 1 / (2 sqrt(a))
        return grad_output / (2 * self.out)


class Relu(Function):
    def forward(self, a):
        self.positive = a > 0
        return np.maximum(a, 0)

    def backward(self, grad_output):
        # out = max(a, 0)  ->  d/da = 1 where a > 0, else 0
        return grad_output * self.positive


class Abs(Function):
    def forward(self, a):
        self.sign = np.sign(a)
        return np.abs(a)

    def backward(self, grad_output):
        # out = |a|  ->  d/da = sign(a): +1 where a > 0, -1 where a < 0 (0 at the kink, as PyTorch takes it)
        return grad_output * self.sign


class Sum(Function):
    def forward(self, a, axis=None, keepdims=False):
        self.a_shape, self.axis, self.keepdims = a.shape, axis, keepdims
        return np.asarray(a.sum(axis=axis, keepdims=keepdims))

    def backward(self, grad_output):
        # out = sum of a over `axis`  ->  every summed element gets the same gradient: broadcast it back
        if not self.keepdims and self.axis is not None:
            grad_output = np.expand_dims(grad_output, self.axis)
        return np.broadcast_to(grad_output, self.a_shape).copy()


class MatMul(Function):
    """`a @ b` for 2-D and batched N-D arrays, broadcasting batch dimensions like NumPy.

    The common case in a transformer is activations (..., K) times a weight (K, N): the leading dimensions
    are folded into rows, so one large matmul runs instead of a batch of small ones. The product is NumPy's
    `np.matmul`, which calls BLAS (hand-tuned code no loop of ours beat: lessons/blocked_matmul.py), after
    the one check that the operands fit (`check_matmul`, kernels/dispatch.py).
    """

    def forward(self, a, b):
        if a.ndim < 2 or b.ndim < 2:  # what the folding and broadcasting below need
            raise ShapeError(f"@ needs arrays of at least 2 dimensions, got shapes {a.shape} and {b.shape}; "
                             "reshape a vector to (1, n) or (n, 1)")
        # BEGIN EXERCISE matmul_op_forward: 2-D b: fold a's leading axes into rows; else broadcast the batch axes
        self.a, self.b = a, b
        if b.ndim == 2:
            rows, b = check_matmul(a.reshape(-1, a.shape[-1]), b, "@")  # (..., K) -> (rows, K)
            return np.matmul(rows, b).reshape(*a.shape[:-1], b.shape[-1])
        batch = _broadcast_shape(a.shape[:-2], b.shape[:-2], "@ (batch dimensions)")
        return np.matmul(*check_matmul(np.broadcast_to(a, batch + a.shape[-2:]),
                                       np.broadcast_to(b, batch + b.shape[-2:]), "@"))
        # END EXERCISE

    def backward(self, grad_output):
        # BEGIN EXERCISE matmul_op_backward: 2-D b: fold a into rows; else broadcast the batch axes, then unbroadcast
        # out = a @ b  ->  d/da = grad @ b^T, d/db = a^T @ grad, summed over the batch dimensions a or b
        # was broadcast along
        a, b = self.a, self.b
        if b.ndim == 2:
            rows = a.reshape(-1, a.shape[-1])  # (rows, K)
            grad_rows = grad_output.reshape(-1, b.shape[-1])  # (rows, N)
            return np.matmul(grad_rows, b.T).reshape(a.shape), np.matmul(rows.T, grad_rows)
        grad_a = np.matmul(grad_output, b.swapaxes(-1, -2))  # (batch, M, N) @ (..., N, K)
        grad_b = np.matmul(a.swapaxes(-1, -2), grad_output)  # (..., K, M) @ (batch, M, N)
        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)
        # END EXERCISE


# ---------------------------------------------------------------------------------------------------------
# Ops that move numbers without changing them

class Reshape(Function):
    def forward(self, a, shape):
        try:
            out = a.reshape(shape)
        except ValueError:
            raise ShapeError(f"cannot reshape a tensor of shape {a.shape} ({a.size} elements) "
                             f"into shape {tuple(shape)}") from None
        self.a_shape = a.shape
        return out

    def backward(self, grad_output):
        # BEGIN EXERCISE reshape_backward: the same numbers in the same order, back in a's shape
        # out = a.reshape(shape)  ->  the same numbers, so the gradient just takes a's shape again
        return grad_output.reshape(self.a_shape)
        # END EXERCISE


class Transpose(Function):
    def forward(self, a, axes=None):
        axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(axes)
        if sorted(ax % a.ndim for ax in axes) != list(range(a.ndim)):
            raise ShapeError(f"transpose axes {axes} are not a permutation of the {a.ndim} axes of shape {a.shape}")
        self.axes = axes
        return a.transpose(axes)

    def backward(self, grad_output):
        # BEGIN EXERCISE transpose_backward: undo the permutation with its inverse
        # out = a.transpose(axes)  ->  undo it with the inverse permutation
        return grad_output.transpose(np.argsort(self.axes))
        # END EXERCISE


class GetItem(Function):
    """`x[index]`: basic slices, integers, and integer-array (gather) indexing."""

    def forward(self, a, index):
        self.a_shape, self.a_dtype = a.shape, a.dtype
        self.index = index.data if isinstance(index, Tensor) else index
        try:
            return np.asarray(a[self.index])
        except IndexError as error:
            raise ShapeError(f"index out of range for a tensor of shape {a.shape}: {error}") from None

    def backward(self, grad_output):
        # BEGIN EXERCISE getitem_backward: zeros of a's shape, grad put where the index picked, summed on repeats
        # out = a[index]  ->  each picked element receives its gradient. An integer array may pick an element
        # twice, which must then get the sum: np.add.at does that. Slices and integers pick each element at
        # most once, so plain assignment does the same, much faster: np.add.at goes element by element
        # (bench/choices.py times both on the position embeddings' slice).
        grad = np.zeros(self.a_shape, dtype=self.a_dtype)
        if _picks_each_element_once(self.index):
            grad[self.index] = grad_output
        else:
            np.add.at(grad, self.index, grad_output)
        return grad
        # END EXERCISE


def _picks_each_element_once(index):
    """Whether `index` is basic indexing: integers, slices, None and ..., alone or in a tuple."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(part, (int, np.integer, slice)) or part is None or part is Ellipsis for part in parts)


class Concat(Function):
    def forward(self, *arrays, axis=0):
        shapes = [a.shape for a in arrays]
        try:
            out = np.concatenate(arrays, axis=axis)
        except ValueError:
            raise ShapeError(f"concat along axis {axis}: shapes {shapes} differ in another dimension") from None
        self.splits = np.cumsum([a.shape[axis] for a in arrays])[:-1]
        self.axis = axis
        return out

    def backward(self, grad_output):
        # out = concatenate(arrays)  ->  cut the gradient back into the pieces
        return tuple(np.split(grad_output, self.splits, axis=self.axis))


def concat(tensors, axis=0):
    """Join tensors along an existing axis (`np.concatenate`)."""
    return Concat.apply(*tensors, axis=axis)


def stack(tensors, axis=0):
    """Join tensors along a new axis (`np.stack`): each gets a length-1 axis there, then they are concatenated."""
    tensors = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    shapes = {t.shape for t in tensors}
    if len(shapes) != 1:
        raise ShapeError(f"stack needs tensors of one shape, got {sorted(shapes)}")
    new_shape = list(tensors[0].shape)
    axis = axis % (len(new_shape) + 1)
    new_shape.insert(axis, 1)
    return concat([t.reshape(new_shape) for t in tensors], axis=axis)
