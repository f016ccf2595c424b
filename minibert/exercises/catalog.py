"""Which exercises belong to which lesson, and what each one asks.

The code of an exercise is not listed here: it is whatever lies between its markers in the reference source
(see `markers.py`), found by scanning the package. Its tests are `checks/test_<id>.py`.
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    number: str  # "01", "02", ...; "05a" for a lesson placed after 05
    script: str  # lessons/<script>
    title: str
    exercises: tuple = ()  # (exercise id, what to write), in the order to do them

    @property
    def ids(self):
        return tuple(exercise_id for exercise_id, _ in self.exercises)


LESSONS = (
    Lesson("01", "01_scalar_autograd.py", "autograd on scalars, and why a topological order matters", (
        ("scalar_mul_rule", "the local rule of multiplication, in Scalar.__mul__"),
        ("scalar_backward", "Scalar.backward: run every node's rule in reverse topological order"),
    )),
    Lesson("02", "02_tensors_broadcasting.py", "tensors, broadcasting and unbroadcast", (
        ("unbroadcast", "unbroadcast(grad, shape): the adjoint of broadcasting is a sum"),
        ("topological_order", "_topological_order: every node after its inputs, with a stack, not recursion"),
        ("function_apply", "Function.apply: run an op's forward and record it only if a gradient is wanted"),
        ("mul_backward", "Mul.backward: each input gets grad times the other, summed back to its shape"),
        ("add_backward", "Add.backward: each input gets grad itself, summed back to its shape"),
        ("backward_walk", "Tensor.backward's walk: each op's backward in reverse order, sums for shared tensors"),
    )),
    Lesson("03", "03_gradient_checks.py", "finite-difference gradient checks", (
        ("central_difference", "the central difference inside gradcheck"),
        ("linear_forward", "LinearOp.forward: x·Wᵀ + b with the leading axes folded into rows"),
        ("linear_backward", "LinearOp.backward: dx = dy·W, dW = dyᵀ·x, db = Σ dy"),
        ("matmul_op_forward", "MatMul.forward: a @ b, a's leading axes folded into rows for a 2-D b"),
        ("matmul_op_backward", "MatMul.backward: grad·bᵀ and aᵀ·grad, rows folded, batch axes summed back"),
    )),
    Lesson("04", "04_kernels.py", "the kernels: softmax, GELU, LayerNorm, Numba vs NumPy", (
        ("softmax_forward", "softmax_forward_numpy: mask, subtract the row max, exp, normalise"),
        ("softmax_backward", "softmax_backward_numpy: the softmax Jacobian times a vector"),
        ("softmax_op", "SoftmaxOp.forward: the kernel's softmax, the output saved for the backward"),
        ("gelu_forward", "gelu_forward_numpy: x·Φ(x), with erf or the tanh form"),
        ("gelu_backward", "gelu_backward_numpy: Φ(x) + x·φ(x), and the tanh form's derivative"),
        ("gelu_op", "GELUOp.forward: the kernel's GELU, the input and the form saved for the backward"),
        ("layer_norm_forward", "layer_norm_forward_numpy: normalise each row, then weight and bias"),
        ("layer_norm_backward", "layer_norm_backward_numpy: mean and variance depend on every input"),
        ("layer_norm_op", "LayerNormOp.forward: the kernel's LayerNorm, what its backward needs saved"),
    )),
    Lesson("05", "05_attention_masks.py", "attention and masks: GPT vs BERT is one mask", (
        ("attention_mask", "build_attention_mask: hide padding keys, and the right side if causal"),
        ("additive_mask", "additive_mask: a boolean mask as 0 (kept) or the most negative float (dropped)"),
        ("attention_forward", "MultiHeadSelfAttention.forward: softmax(q·kᵀ/√D + mask)·v, all heads at once"),
    )),
    Lesson("05a", "05a_multi_head_attention.py", "multi-head attention by hand, and why √D", (
        ("split_heads", "MultiHeadSelfAttention.split_heads: (B, S, H) -> (B, A, S, D)"),
        ("reshape_backward", "Reshape.backward: the gradient back in the input's shape"),
        ("transpose_backward", "Transpose.backward: the gradient through the inverse permutation"),
    )),
    Lesson("05b", "05b_encoder_layer.py", "the feed-forward, residual + post-LN, and a BERT's parameters", (
        ("sublayer_output", "SublayerOutput.forward: LayerNorm(residual + Dropout(Dense(h)))"),
        ("feed_forward", "FeedForward.forward: act(Dense(x)), H widened to I"),
        ("dropout_forward", "DropoutOp.forward: keep with probability 1 - p, scaled by 1/(1 - p)"),
        ("dropout_backward", "DropoutOp.backward: the gradient through the same kept entries and scale"),
        ("attention_sublayer", "AttentionSublayer.forward: attention, then LayerNorm(residual + Dense(context))"),
        ("encoder_layer", "EncoderLayer.forward: the attention sublayer, then the feed-forward sublayer"),
    )),
    Lesson("06", "06_embeddings.py", "input = token + segment + position embeddings", (
        ("embeddings_sum", "BertEmbeddings.forward: token + segment + position, then LayerNorm"),
        ("embedding_lookup", "EmbeddingOp.forward: the table's row for each id"),
        ("embedding_backward", "scatter_add_rows_numpy: each gradient row added back at its id"),
        ("embedding_op_backward", "EmbeddingOp.backward: the table's gradient, (V, H), by scatter-add"),
        ("getitem_backward", "GetItem.backward: the gradient where the index picked, summed on repeats"),
    )),
    Lesson("06a", "06a_tied_decoder_and_pooler.py", "the MLM decoder tied to the word embeddings, the pooler", (
        ("prediction_transform", "PredictionTransform.forward: LayerNorm(act(Dense(h))) before the decoder"),
        ("tied_decoder", "MaskedLMHead.forward: transform(h)·Eᵀ + b with E the word embeddings"),
        ("pooler", "Pooler.forward: tanh(Dense(h_[CLS]))"),
        ("tanh_backward", "Tanh.backward: grad times 1 - tanh², the pooler's activation"),
        ("encoder_stack", "Encoder.forward: L layers in turn, their probabilities, the positions read"),
        ("gather_positions", "gather_positions: the vectors at the masked positions, as one embedding lookup"),
        ("bert_encode", "BertModel.encode: mask, embeddings, encoder, pooler"),
        ("pretraining_heads", "BertForPreTraining.forward: MLM head at the masked positions, NSP on [CLS]"),
    )),
    Lesson("07", "07_wordpiece.py", "WordPiece: longest match first", (
        ("wordpiece_longest_match", "WordpieceTokenizer._segment: greedy longest match first, or [UNK]"),
    )),
    Lesson("08", "08_masking.py", "the masking routine: 15%, then 80/10/10", (
        ("mask_80_10_10", "the 80% [MASK] / 10% random / 10% unchanged draw for the chosen tokens"),
    )),
    Lesson("09", "09_nsp.py", "next sentence prediction pairs", (
        ("nsp_not_next", "the NotNext branch: B from another document, unused sentences put back"),
        ("nsp_random_document", "random_other_document_start: a random other document, a random start"),
        ("truncate_seq_pair", "truncate_seq_pair: trim the longer side until A and B fit together"),
    )),
    Lesson("10", "10_mlm_loss.py", "the MLM loss vs GPT's shifted loss", (
        ("mlm_loss", "pretraining_loss: weighted MLM loss on the masked slots, plus NSP"),
        ("causal_lm_loss", "causal_lm_loss: every position predicts the next token"),
        ("cross_entropy_forward", "softmax_cross_entropy_forward_numpy: logsumexp minus the target's logit"),
        ("cross_entropy_backward", "softmax_cross_entropy_backward_numpy: softmax minus one-hot, times grad"),
        ("cross_entropy_op", "CrossEntropyOp.forward: the rows' nll, weighted, over the denominator"),
        ("cross_entropy_op_backward", "CrossEntropyOp.backward: grad times each row's weight, through the kernel"),
    )),
    Lesson("11", "11_adam_schedule.py", "Adam, warmup and linear decay", (
        ("adam_moments", "update_moments: the two running averages m and v"),
        ("bias_correction", "bias_corrected_step: the Adam step with m̂ and v̂"),
        ("warmup_decay", "linear_warmup_linear_decay: BERT's learning-rate multiplier"),
        ("scheduler_apply", "LRScheduler._apply: each group's base rate times the multiplier"),
        ("scheduler_step", "LRScheduler.step: count the update, then set the next rate"),
        ("zero_grad", "Optimizer.zero_grad: every gradient set to None, or zeroed in place"),
        ("optimizer_step", "the optimizer's step: m and v from zero, t counted, every slice updated"),
        ("adamw_update", "AdamW.update: decoupled weight decay, then the bias-corrected Adam step"),
    )),
    Lesson("11a", "11a_training_dynamics.py", "training dynamics: post-LN needs warmup, pre-LN does not"),
    Lesson("12", "12_pretrain.py", "pretrain a small BERT", (
        ("global_grad_norm", "global_grad_norm: all gradients as one vector, its length"),
        ("clip_grad_norm", "clip_grad_norm: scale every gradient by max_norm/norm when above max_norm"),
        ("update_step", "checked_update: backward, clip, optimizer step, schedule step, gradients cleared"),
        ("masked_lm_correct", "masked_lm_correct: right guesses over the real masked slots"),
        ("next_sentence_correct", "next_sentence_correct: right IsNext/NotNext guesses over the pairs"),
        ("train_step", "train_step: the pretraining step, forward to the updated weights"),
    )),
    Lesson("13", "13_bidirectional_probe.py", "watch bidirectional attention work"),
    Lesson("14", "14_classifier.py", "fine-tune a classifier on [CLS]"),
    Lesson("15", "15_question_answering.py", "question answering with start/end logits"),
    Lesson("16", "16_real_checkpoint.py", "open a real BERT checkpoint and look inside"),
    Lesson("17", "17_token_tagging.py", "tag every token: named entities"),
    Lesson("18", "18_not_a_generator.py", "BERT is not a generator"),
    Lesson("19", "19_masking_mix.py", "the masking mix, run: [MASK], same or random"),
    Lesson("20", "20_mask_rate.py", "the masking rate, run: 5, 15, 30 or 50%"),
    Lesson("21", "21_sentence_task.py", "next-sentence prediction, run: NSP, none or SOP"),
    Lesson("22", "22_ladder.py", "the ladder: what pretraining is worth on real text"),
)


# The bodies one training step runs (forward, MLM + NSP loss, backward, clipping, AdamW, the schedule), in
# the order to write them; tests/test_exercise_share.py checks this list against what a step executes.
STEP = ("function_apply", "mul_backward", "add_backward", "unbroadcast", "topological_order", "backward_walk",
        "linear_forward", "linear_backward", "matmul_op_forward", "matmul_op_backward", "softmax_forward",
        "softmax_backward", "softmax_op", "gelu_forward", "gelu_backward", "gelu_op", "layer_norm_forward",
        "layer_norm_backward", "layer_norm_op", "embedding_lookup", "embedding_backward", "embedding_op_backward",
        "getitem_backward", "reshape_backward", "transpose_backward", "tanh_backward", "cross_entropy_forward",
        "cross_entropy_backward", "cross_entropy_op", "cross_entropy_op_backward", "dropout_forward",
        "dropout_backward", "embeddings_sum", "attention_mask", "additive_mask", "split_heads", "attention_forward",
        "sublayer_output", "attention_sublayer", "feed_forward", "encoder_layer", "encoder_stack", "gather_positions",
        "pooler", "bert_encode", "prediction_transform", "tied_decoder", "pretraining_heads", "mlm_loss",
        "global_grad_norm", "clip_grad_norm", "adam_moments", "bias_correction", "adamw_update", "optimizer_step",
        "zero_grad", "warmup_decay", "scheduler_apply", "scheduler_step", "update_step", "masked_lm_correct",
        "next_sentence_correct", "train_step")
TASKS = {exercise_id: task for entry in LESSONS for exercise_id, task in entry.exercises}
CAPSTONE = Lesson("capstone", "12_pretrain.py", "BERT from a blank page: every body of one training step",
                  tuple((exercise_id, TASKS[exercise_id]) for exercise_id in STEP))


def lesson(number):
    """The Lesson numbered `number` ("5", "05" or 5 all work; "5a" or "05a" for the lesson after 05), or the
    capstone ("capstone")."""
    if str(number).strip() == CAPSTONE.number:
        return CAPSTONE
    parts = re.fullmatch(r"(\d+)([a-z]?)", str(number).strip())
    key = f"{int(parts[1]):02d}{parts[2]}" if parts else str(number)
    for entry in LESSONS:
        if entry.number == key:
            return entry
    raise KeyError(f"there is no lesson {number!r}; lessons are 01..{LESSONS[-1].number}, and the capstone "
                   "(python -m minibert.exercises list)")
