"""A scalar autograd engine in one screen: lesson 01 builds it before the tensor engine.

This is the whole idea of `minibert/autograd/tensor.py`, with one number per node instead of an array (how, below).

minibert's tensor engine is this file, with arrays for numbers and `unbroadcast` for shapes. The package
itself never imports this module; it exists for the lesson and its exercise.
"""

# - a `Scalar` keeps its value, its gradient, the nodes it was computed from, and a small function that
#   pushes its own gradient back to those nodes (the chain rule for one op: the *local* rule);
# - `backward()` lists the nodes in a topological order (every node after the nodes it was computed from),
#   then runs the local rules in the reverse of that order, so a node has received the gradient of *every*
#   path through it before it passes anything on;
# - gradients accumulate with `+=`: a value used twice (`x * x`) gets the sum of both uses.

import math


class Scalar:
    """One number that remembers how it was computed."""

    def __init__(self, data, parents=(), op=""):
        self.data = float(data)
        self.grad = 0.0  # d(output)/d(self), filled in by backward()
        self.parents = parents  # the Scalars this one was computed from
        self.op = op  # for printing the graph
        self.backward_rule = lambda: None  # a leaf has no inputs to pass gradient to

    def __repr__(self):
        return f"Scalar({self.data:.4g}, grad={self.grad:.4g})"

    def __add__(self, other):
        other = other if isinstance(other, Scalar) else Scalar(other)
        out = Scalar(self.data + other.data, (self, other), "+")

        def backward_rule():
            # out = self + other  ->  d out/d self = 1, d out/d other = 1
            self.grad += out.grad
            other.grad += out.grad

        out.backward_rule = backward_rule
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Scalar) else Scalar(other)
        out = Scalar(self.data * other.data, (self, other), "*")

        def backward_rule():
            # BEGIN EXERCISE scalar_mul_rule: each input's grad += the other input's value * out.grad
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
            # END EXERCISE

        out.backward_rule = backward_rule
        return out

    def __pow__(self, exponent):
        out = Scalar(self.data**exponent, (self,), f"**{exponent}")

        def backward_rule():
            # out = self^p  ->  d out/d self = p * self^(p-1)
            self.grad += exponent * self.data ** (exponent - 1) * out.grad

        out.backward_rule = backward_rule
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Scalar(t, (self,), "tanh")

        def backward_rule():
            # out = tanh(self)  ->  d out/d self = 1 - tanh^2
            self.grad += (1 - t * t) * out.grad

        out.backward_rule = backward_rule
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other if isinstance(other, Scalar) else Scalar(-other))

    def __truediv__(self, other):
        other = other if isinstance(other, Scalar) else Scalar(other)
        return self * other**-1

    __radd__ = __add__
    __rmul__ = __mul__

    def backward(self):
        """Fill in `.grad` of every Scalar this one depends on: d(self)/d(node).

        Gradients accumulate: set the leaves' `.grad` back to 0 (or make new leaves) before a second backward.
        """
        # BEGIN EXERCISE scalar_backward: self.grad = 1, then backward_rule() in reverse topological order
        self.grad = 1.0  # d self / d self
        for node in reversed(topological_order(self)):
            node.backward_rule()
        # END EXERCISE


def topological_order(root):
    """Every node `root` depends on, each listed after all the nodes it was computed from.

    Depth-first, with an explicit stack instead of recursion, so a chain of 10,000 ops does not hit
    Python's recursion limit. A node reached twice (a diamond, `y = a*b + a`) is listed once.
    """
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
        elif id(node) not in visited:
            visited.add(id(node))
            stack.append((node, True))  # come back to it once its parents are listed
            stack.extend((parent, False) for parent in node.parents)
    return order


def naive_order(root):
    """A WRONG order, for the lesson: breadth-first from the root. A node reached by a short and a long path
    is visited when the short path arrives, before the long path has delivered its share of the gradient."""
    order, frontier, seen = [], [root], set()
    while frontier:
        node = frontier.pop(0)
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        frontier.extend(node.parents)
    return order[::-1]  # reversed, so that backward's reversed() walks it root-first
