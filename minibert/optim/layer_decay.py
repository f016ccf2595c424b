"""Layer-wise learning rates for fine-tuning: the lower layers of a pretrained encoder move less.

The lower layers hold what pretraining learned about words and their neighbours, which every task needs;
the top layers and the new head must change most. Howard and Ruder (2018, ULMFiT §3.2, "discriminative
fine-tuning") give each layer its own rate; Clark et al. (2020, ELECTRA, appendix A) use a decay per layer
counted from the top:

    depth 0         the embeddings                      lr · decay^(L+1)
    depth l         encoder layer l (1..L)              lr · decay^(L+1-l)
    depth L+1       the pooler and the task's head      lr (or head_lr)

`decay=1` gives every parameter the same rate: BERT's own recipe.
"""

import re

ENCODER_LAYER = re.compile(r"bert\.encoder\.layer\.(\d+)\.")


def depth(name, num_layers):
    """How far from the input a parameter is: 0 embeddings, 1..L encoder layers, L+1 pooler and head."""
    if name.startswith("bert.embeddings."):
        return 0
    layer = ENCODER_LAYER.match(name)
    return int(layer.group(1)) + 1 if layer else num_layers + 1


def layer_decay_groups(groups, num_layers, lr, decay=1.0, head_lr=None):
    """Split each parameter group (`bert_param_groups`: its "params" and "names") by depth, and give each
    part its "lr": lr·decay^(L+1-depth), or head_lr at the top. The groups' other settings are kept."""
    if decay == 1 and head_lr is None:
        return groups  # one rate for all: BERT's recipe, its two groups as they are
    split = []
    for group in groups:
        by_depth = {}
        for name, param in zip(group["names"], group["params"], strict=True):
            part = by_depth.setdefault(depth(name, num_layers), {**group, "params": [], "names": []})
            part["params"].append(param)
            part["names"].append(name)
        for level, part in sorted(by_depth.items()):
            top = level == num_layers + 1
            part["lr"] = head_lr if top and head_lr is not None else lr * decay ** (num_layers + 1 - level)
            split.append(part)
    return split
