"""A start for the query and key projections: heads that attend to similar tokens from the first step.

BERT draws W_Q and W_K independently (std 0.02), so at step 0 every head's score q_i . k_j is noise and each
token attends almost evenly to all S positions. Trockman & Kolter (2023, "Mimetic Initialization of
Self-Attention Layers") found the product W_Q W_K^T of trained vision Transformers close to a multiple of
the identity, and started fresh ones there: they draw the product of each head, not its two factors, as a
noisy identity

    W_Q^h (W_K^h)^T ~= alpha Z_h + beta I,     Z_h ~ N(0, 1/H) elementwise, (H, H),

so that q_i . k_j ~= beta x_i . x_j + noise: a token's score is high for inputs like its own. An input is
word + position + segment vector (after LayerNorm), so "like its own" means the same word anywhere, and,
with the sinusoidal position start (position_init.py), its neighbours. A head has d = H / heads columns,
so its product has rank d: each head keeps the d strongest directions of its own noisy identity (the
truncated SVD U_d S_d V_d^T, split as W_Q^h = U_d S_d^1/2 and W_K^h = V_d S_d^1/2).
"""

# It changes only where W_Q and W_K start: the model, its parameter count and its checkpoint are BERT's, as
# with the sinusoidal positions. Whether it suits a language model is what the run in docs/learning.md
# measures (the paper's strongest results are on images); alpha = beta = 0.7 was the one setting tried. The
# paper also starts W_V W_O near -I; the value and output projections keep BERT's start here (not tried).

import numpy as np


def mimetic_query_key(hidden_size, num_heads, rng, alpha=0.7, beta=0.7):
    """(W_Q, W_K), each (H, H) float32 in Linear's (out, in) layout: rows h*d:(h+1)*d are head h's."""
    head_size = hidden_size // num_heads
    query, key = np.zeros((2, hidden_size, hidden_size))
    for head in range(num_heads):
        noise = rng.normal(0.0, 1.0 / np.sqrt(hidden_size), (hidden_size, hidden_size))
        u, s, vt = np.linalg.svd(alpha * noise + beta * np.eye(hidden_size))
        root = np.sqrt(s[:head_size])
        rows = slice(head * head_size, (head + 1) * head_size)
        # Linear computes x @ weight.T, so weight.T is the (in, out) factor: W_Q^h = u_d root, W_K^h = v_d root
        query[rows] = (u[:, :head_size] * root).T
        key[rows] = (vt[:head_size].T * root).T
    return query.astype(np.float32), key.astype(np.float32)
