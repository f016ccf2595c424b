"""The kernel layer: arrays in, arrays out; it knows nothing of Tensor.

The contract, after llm.c's dev/cuda: each op's reference is the formula as a textbook writes it, in plain
NumPy, and the fast version (a Numba kernel) is checked against that reference by the tests.
`set_backend("numba" | "numpy")` (or MINIBERT_BACKEND) runs the whole library on the kernels or on their
references. Matrix products are NumPy's `a @ b`, by BLAS, under both: no kernel of ours beat it.

A reading list, not an import hub: import each kernel from its module (`from minibert.kernels.softmax
import softmax_forward`), so loading one layer loads only the kernels it runs.

- `dispatch.py`: what every dispatcher does first: check the arrays (the matrix product's operands too),
  then choose the backend (`set_backend`, `get_backend`, `use_backend`);
- `simd.py`: the exp and the sums the Numba loops share;
- `softmax.py`, `layernorm.py`, `gelu.py`: one encoder layer's kernels, each the reference, then the Numba
  kernel, then its dispatchers;
- `cross_entropy.py`: softmax and negative log-likelihood fused (the loss, model/losses.py);
- `scatter.py`: the embedding's backward, gradient rows added into the table (nn/embedding.py).

The fused kernels of the speed layer live in minibert/fast/kernels/, each beside its own reference.
"""
