"""Exercise topological_order (lesson 02): `_topological_order` in minibert/autograd/tensor.py.

Every tensor reachable from the root that requires a gradient, once each, each after all of its inputs, by
a depth-first walk with an explicit stack (a recursive one would stop at Python's recursion limit).
"""

import numpy as np

from minibert import Tensor
from minibert.autograd.tensor import _topological_order


def inputs_of(node):
    function = node._function
    return [] if function is None else [t for t in function.inputs if t.requires_grad]


def test_diamond_each_node_once_after_its_inputs():
    """x -> a, b -> c = a·b + x: every node once, each after its inputs, the root last; a constant input
    (no gradient wanted) is left out."""
    x = Tensor(np.arange(3.0), requires_grad=True)
    constant = Tensor(np.ones(3))
    a, b = x * 2.0, x + constant
    root = (a * b + x).sum()
    order = _topological_order(root)
    ids = [id(node) for node in order]
    assert len(ids) == len(set(ids)), "a node reached twice must appear once"
    assert id(constant) not in ids, "only tensors that require a gradient belong in the order"
    assert {id(x), id(a), id(b), id(root)} <= set(ids) and ids[-1] == id(root)
    for position, node in enumerate(order):
        for parent in inputs_of(node):
            assert ids.index(id(parent)) < position, "a node must come after all of its inputs"


def test_a_chain_longer_than_the_recursion_limit():
    """A chain of 5,000 additions: the order is the chain itself, from the leaf to the root."""
    leaf = Tensor(np.ones(1), requires_grad=True)
    chain = [leaf]
    for _ in range(5000):
        chain.append(chain[-1] + 1.0)
    assert [id(node) for node in _topological_order(chain[-1])] == [id(node) for node in chain]
