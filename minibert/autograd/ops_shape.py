"""Ops that move numbers around without changing them: reshape, transpose, indexing, concatenation.

Their backward moves the gradient back to where each number came from.
"""

import numpy as np

from minibert.autograd.tensor import Function, Tensor
from minibert.errors import ShapeError


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
        # out = a.reshape(shape)  ->  the same numbers, so the gradient just takes a's shape again
        return grad_output.reshape(self.a_shape)


class Transpose(Function):
    def forward(self, a, axes=None):
        axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(axes)
        if sorted(ax % a.ndim for ax in axes) != list(range(a.ndim)):
            raise ShapeError(f"transpose axes {axes} are not a permutation of the {a.ndim} axes of shape {a.shape}")
        self.axes = axes
        return a.transpose(axes)

    def backward(self, grad_output):
        # out = a.transpose(axes)  ->  undo it with the inverse permutation
        return grad_output.transpose(np.argsort(self.axes))


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
