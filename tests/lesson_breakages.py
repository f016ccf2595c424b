"""Breakages of the library that destroy a lesson's point; `test_lesson_breakage.py` runs each lesson under one.

The lesson-level version of `exercise_mutants.py`: each breakage patches minibert in the lesson's own process
(a class's method or a module's function, so every caller sees it), and the lesson must then fail one of
its own asserts, not crash. Run one by hand from the repository root:

    python tests/lesson_breakages.py 05b_encoder_layer "no residual in SublayerOutput"

exits with CLAIM_FAILED and the failing assert's traceback, or 0 if the lesson did not notice.
"""

import runpy
import sys
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np  # also the name the patched kernels' modules give their bodies

ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR = ROOT / "lessons"
CLAIM_FAILED = 3  # the exit status when one of the lesson's own asserts failed


@dataclass(frozen=True)
class Breakage:
    lesson: str  # the lesson's file name without .py
    name: str  # what is broken, in a few words
    apply: object  # a function of no arguments that patches minibert in this process
    fails_at: str  # a piece of the lesson's assert that must fail: the claim the breakage destroys
    # the claim is one the lesson asserts of the real checkpoint only, which a pip package brings (lesson 16;
    # without it the lesson reads a model it saved itself, and asserts less)
    needs_packaged_model: bool = False


def replace_code(function, replacement):
    """Run `replacement`'s body wherever `function` is called, even through a name imported elsewhere.

    The body runs with `function`'s module as its globals, so it may use only the names that module has."""
    function.__code__ = replacement.__code__


# lesson 01: the reverse topological walk is what makes a reused node's gradient right
def scalar_walk_breadth_first():
    from minibert.exercises import scalar
    scalar.topological_order = scalar.naive_order  # Scalar.backward, and the lesson's import, get the wrong walk


# lesson 02: the adjoint of broadcasting is a sum
def unbroadcast_by_mean():
    from minibert.autograd import unbroadcast

    def averaged(grad, shape):
        if grad.shape == shape:
            return grad
        extra = grad.ndim - len(shape)
        axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape)
                                           if n == 1 and grad.shape[extra + i] != 1)
        return (grad.mean(axis=axes, keepdims=True) if axes else grad).reshape(shape)
    replace_code(unbroadcast, averaged)


# lesson 03: gradcheck catches a wrong backward
def gradcheck_never_objects():
    from minibert import gradient_check
    gradient_check._compare = lambda *arguments: None  # every comparison passes


# lesson 04: softmax subtracts the row's maximum; LayerNorm centres, then scales
def softmax_without_the_maximum():
    from minibert.kernels.softmax import softmax_forward

    def literal_softmax(x, *arguments, **keywords):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    replace_code(softmax_forward, literal_softmax)


def layer_norm_without_centring():
    from minibert.kernels.layernorm import layer_norm_forward

    def rms_norm(x, weight, bias, eps):
        rstd = 1.0 / np.sqrt((x * x).mean(axis=-1) + eps)  # the mean never subtracted
        return x * rstd[..., None] * weight + bias, np.zeros(x.shape[:-1]), rstd
    replace_code(layer_norm_forward, rms_norm)


# lesson 05: the mask hides the keys a query may not see
def attention_ignores_its_mask():
    from minibert.nn.transformer import MultiHeadSelfAttention
    forward = MultiHeadSelfAttention.forward

    def unmasked(self, x, mask=None, *arguments, **keywords):
        return forward(self, x, None, *arguments, **keywords)
    MultiHeadSelfAttention.forward = unmasked


# lesson 05a: split_heads reshapes, then moves the head axis before the tokens
def heads_split_without_the_transpose():
    from minibert.nn.transformer import MultiHeadSelfAttention

    def split_heads(self, x):
        batch, seq_len, _ = x.shape
        return x.reshape(batch, self.num_heads, seq_len, self.head_size)
    MultiHeadSelfAttention.split_heads = split_heads


# lesson 05b: the residual keeps the input alive through a deep post-LN stack
def no_residual_in_sublayer_output():
    from minibert.nn.transformer import SublayerOutput

    def forward(self, h, residual):
        return self.LayerNorm(self.dropout(self.dense(h)))
    SublayerOutput.forward = forward


# lesson 06: a token's input vector depends on its position
def no_position_embeddings():
    from minibert.model.bert import BertEmbeddings

    def forward(self, input_ids, token_type_ids):
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)  # no position rows
        return self.dropout(self.LayerNorm(x))
    BertEmbeddings.forward = forward


# lesson 06a: the decoder is the word-embedding matrix itself, so its gradient reaches E
def untied_decoder():
    from minibert import Tensor
    from minibert import functional as F
    from minibert.model.pretraining import MaskedLMHead

    def forward(self, h, word_embeddings):
        return F.linear(self.transform(h), Tensor(word_embeddings.data.copy()), self.bias)
    MaskedLMHead.forward = forward


# lesson 07: WordPiece takes the longest piece first
def wordpiece_shortest_piece_first():
    from minibert.tokenizer.wordpiece import CONTINUATION_PREFIX, WordpieceTokenizer

    def segment(self, word):
        pieces, start = [], 0
        while start < len(word):
            for end in range(start + 1, len(word) + 1):
                piece = word[start:end] if start == 0 else CONTINUATION_PREFIX + word[start:end]
                if piece in self.vocab:
                    break
            else:
                return (self.unk_token,)
            pieces.append(piece)
            start = end
        return tuple(pieces)
    WordpieceTokenizer._segment = segment


# lesson 08: 80% of the chosen tokens become [MASK], 10% a random token, 10% stay
def every_chosen_token_masked():
    from minibert import data
    from minibert.data import masking
    create = masking.create_masked_lm_predictions

    def all_masked(input_ids, word_starts, rng, special_tokens, config, *arguments, **keywords):
        out = create(input_ids, word_starts, rng, special_tokens, config, *arguments, **keywords)
        masked_ids = out.input_ids.copy()
        masked_ids[out.positions] = special_tokens.mask_id
        return masking.MaskedSequence(masked_ids, out.positions, out.labels)
    data.create_masked_lm_predictions = masking.create_masked_lm_predictions = all_masked


# lesson 09: a NotNext B comes from another document
def not_next_from_the_same_document():
    from minibert.data import instances
    draw = instances.random_other_document_start

    def same_document(documents, document_index, rng, target_length):
        return draw([documents[document_index]] * len(documents), document_index, rng, target_length)
    instances.random_other_document_start = same_document  # what create_instances_from_document calls


# lesson 10: the MLM loss reads the chosen positions only, through its weights
def mlm_loss_over_every_position():
    from minibert.model.losses import CrossEntropyOp
    forward = CrossEntropyOp.forward

    def every_position(self, logits, targets, weights, denominator):
        return forward(self, logits, targets, np.ones(weights.shape), weights.size)  # the weights ignored
    CrossEntropyOp.forward = every_position


# lesson 11: BertAdam's early steps are oversized because it has no bias correction
def bias_correction_in_bert_adam():
    from minibert.optim import AdamW, BertAdam
    BertAdam.update = AdamW.update  # Adam's corrected step, with BertAdam's decoupled decay


# lesson 11: AdamW shrinks a weight directly, not through m/√v as an L2 term does
def adamw_decay_through_the_gradient():
    from minibert.optim import Adam, AdamW
    AdamW.update = Adam.update  # weight decay as an L2 term in the gradient, divided by √v like it


# lesson 11a: warmup is what lets post-LN train at a large learning rate
def schedule_without_warmup():
    from minibert.optim.schedule import linear_warmup_linear_decay

    def decay_only(step, total_steps, warmup_steps, variant="google"):
        if step >= total_steps:  # the ramp up forgotten: the decay line from the first step
            return 0.0
        if variant == "google":
            return 1.0 - step / total_steps
        return (total_steps - step) / (total_steps - warmup_steps)
    replace_code(linear_warmup_linear_decay, decay_only)


# lesson 12: an untrained model guesses about uniformly, so its first loss is ln V + ln 2
def initializer_ignores_its_std():
    from minibert.nn.layers import normal_init

    def unit_normal(rng, shape, std):
        return rng.standard_normal(shape).astype(np.float32)  # std never applied: N(0, 1), not N(0, 0.02²)
    replace_code(normal_init, unit_normal)


# lesson 12: the whole loop learns
def clipping_by_floor_division():
    from minibert.train import update
    clip = update.clip_grad_norm

    def floor_divided(parameters, max_norm=1.0):
        parameters = list(parameters)
        total_norm = clip(parameters, max_norm)
        if total_norm > max_norm:
            for param in parameters:
                if param.grad is not None:
                    param.grad *= max_norm // total_norm  # 0: every gradient above the threshold wiped
        return total_norm
    update.clip_grad_norm = floor_divided  # what every training step calls


# lesson 13: the causal mask hides the words after a token
def causal_mask_without_the_triangle():
    from minibert.model.masks import build_attention_mask

    def padding_only(attention_mask, attention="bidirectional"):
        return np.asarray(attention_mask).astype(bool)[:, None, None, :]  # every real key, whatever `attention`
    replace_code(build_attention_mask, padding_only)


# lesson 14: the classifier reads the pooled [CLS], tanh(Dense(h_[CLS]))
def pooler_reads_the_last_token():
    from minibert.model.bert import Pooler

    def forward(self, sequence_output):
        return self.dense(sequence_output[:, -1]).tanh()  # the final [SEP] (or padding), not [CLS]
    Pooler.forward = forward


def classifier_skips_the_pooler():
    from minibert.finetune import BertForSequenceClassification

    def head_inputs(self, input_ids, token_type_ids=None, attention_mask=None):
        return self.bert(input_ids, token_type_ids, attention_mask).sequence_output[:, 0]  # h_[CLS], no tanh(Dense)
    BertForSequenceClassification.head_inputs = head_inputs


# lesson 15: windows overlap by max_seq_length - doc_stride; a span's end is not before its start
def windows_without_doc_stride():
    from minibert.finetune.squad_features import window_spans

    def end_to_end(num_tokens, max_tokens, doc_stride):
        spans, start = [], 0
        while start < num_tokens:
            spans.append((start, min(num_tokens - start, max_tokens)))
            start += max_tokens  # the stride ignored: each window starts where the last one ended
        return spans
    replace_code(window_spans, end_to_end)


def spans_ending_before_they_start():
    from minibert import finetune
    from minibert.finetune import span_decoding
    from minibert.finetune.span_decoding import Span, top_indexes

    def either_order(start_logits, end_logits, passage_start, passage_end, max_context=None, n_best_size=20,
                     max_answer_length=30):
        spans = [Span(int(start), int(end), float(start_logits[start] + end_logits[end]))
                 for start in top_indexes(start_logits, n_best_size) for end in top_indexes(end_logits, n_best_size)
                 if passage_start <= min(start, end) and max(start, end) <= passage_end  # start <= end not asked
                 and abs(end - start) < max_answer_length]
        return sorted(spans, key=lambda span: -span.score)
    finetune.best_spans = span_decoding.best_spans = either_order  # the lesson's import, and decode_answers'


# lessons 16-22

# lesson 16: HuggingFace's names put every trained weight where it belongs, so the real model works as trained
def attention_layer_norm_given_the_feed_forward_ones():
    from minibert.io import pretrained
    normalize = pretrained.normalize_hf_state

    def matched_by_ending(tensors):
        # A name mapper that looks for the ending "output.LayerNorm.weight" finds the feed-forward block's
        # LayerNorm (layer.N.output.LayerNorm) for the attention block's (layer.N.attention.output.LayerNorm).
        kept, skipped = normalize(tensors)
        for name in kept:
            if ".attention.output.LayerNorm." in name:
                kept[name] = kept[name.replace(".attention.output.", ".output.")]
        return kept, skipped
    pretrained.normalize_hf_state = matched_by_ending


# lesson 17: a word's tag sits on its first WordPiece, where its prediction is read (the paper's §5.3)
def tag_on_the_last_piece():
    from minibert.finetune.heads import IGNORE_INDEX
    from minibert.finetune.tagging import TaggingTask
    encode_words = TaggingTask.encode_words

    def last_piece(self, words, tags=None):
        feature = encode_words(self, words, tags)
        firsts = [p for p in feature["word_positions"] if p >= 0]
        last = dict(zip(firsts, [p - 1 for p in firsts[1:] + [len(feature["input_ids"]) - 1]], strict=True))
        labels = feature["label_ids"]
        for first, end in last.items():
            labels[first], labels[end] = IGNORE_INDEX, labels[first]
        feature["word_positions"] = [last.get(p, -1) for p in feature["word_positions"]]
        return feature
    TaggingTask.encode_words = last_piece


# lesson 18: GPT and BERT are one mask apart; without the causal one, GPT sees the token it must predict
def causal_mask_left_out():
    from minibert.model.masks import build_attention_mask

    def padding_only(attention_mask, attention="bidirectional"):
        return np.asarray(attention_mask).astype(bool)[:, None, None, :]  # (B, 1, 1, S), whatever `attention`
    replace_code(build_attention_mask, padding_only)


# lessons 19 and 20: an arm of the masking or mask-rate experiment differs from the others in its masking only;
# the training batches rebuild the run's masking (to take the shards' whole-word setting), and leaving a field
# out of that call gives every arm the default, BERT's
def batches_masking_without(*left_out):
    def apply():
        from minibert.data import PretrainingBatches
        from minibert.data.masking import MaskingConfig
        init = PretrainingBatches.__init__

        def rebuilt_without(self, *arguments, **keywords):
            init(self, *arguments, **keywords)
            kept = {name: value for name, value in vars(self.masking).items() if name not in left_out}
            self.masking = MaskingConfig(**kept)
        PretrainingBatches.__init__ = rebuilt_without
    return apply


# lesson 21: SOP's label 1 means A and B swapped; a swap that sets the label and leaves the pair in order
# makes the label noise
def sop_label_without_the_swap():
    from minibert.data import instances
    order_pair = instances.sentence_order_pair

    def left_in_order(chunk, a_end, rng):
        pair = order_pair(chunk, a_end, rng)
        if pair is None or pair[2] == instances.IS_NEXT:
            return pair
        side_b, side_a, label = pair
        return side_a, side_b, label
    instances.sentence_order_pair = left_in_order


# lesson 22: the ladder's table reads its stored runs; the spread over the seeds is the sample standard
# deviation, and dividing by n (numpy.std's default) instead of n - 1 understates it
def sentences_not_documents():
    from minibert.experiments import bootstrap

    def each_example_alone(documents, resamples, rng):  # the documents ignored: every example drawn by itself
        return rng.poisson(1.0, size=(resamples, len(documents))).astype(np.float64)
    replace_code(bootstrap.example_weights, each_example_alone)


def spread_over_n():
    from minibert.experiments import ladder_table
    from minibert.experiments.summary import Summary, summarize

    def over_n(values):
        found = summarize(values)
        return found if found.std is None else Summary(
            found.mean, found.std * ((found.n - 1) / found.n) ** 0.5, found.low, found.high, found.n)
    ladder_table.summarize = over_n  # the table's reading only


# lesson 22: no gain over random weights is read where either arm's runs learned nothing (issue 52's protocol)
def gain_against_a_run_that_learned_nothing():
    from minibert.experiments import ladder_table
    cells_of = ladder_table.ladder_cells

    def every_gain_given(record):  # a gain over random weights whether or not either arm learned anything
        cells = cells_of(record)
        for (task, way, size, rung), cell in cells.items():
            base = cells.get((task, way, size, "random"))
            if rung != "random" and base is not None and cell.gain is None:
                cells[(task, way, size, rung)] = replace(cell, gain=cell.mean - base.mean)
        return cells
    ladder_table.ladder_cells = every_gain_given


BREAKAGES = (
    Breakage("01_scalar_autograd", "the scalar walk breadth-first", scalar_walk_breadth_first,
             "abs(x.grad - numeric) < 1e-6"),
    Breakage("02_tensors_broadcasting", "unbroadcast averages", unbroadcast_by_mean,
             "np.allclose(bias.grad, (2 * y.data).sum(axis=0))"),
    Breakage("03_gradient_checks", "gradcheck never objects", gradcheck_never_objects,
             'assert caught, "gradcheck let a wrong backward through"'),
    Breakage("04_kernels", "softmax without the maximum subtracted", softmax_without_the_maximum,
             "np.isnan(literal).any()"),
    Breakage("04_kernels", "LayerNorm without centring", layer_norm_without_centring,
             "np.allclose(out.std(1), 1, atol=1e-9)"),
    Breakage("05_attention_masks", "attention ignores its mask", attention_ignores_its_mask,
             "not np.triu(probs.data[0, 0], k=1).any()"),
    Breakage("05a_multi_head_attention", "heads split without the transpose", heads_split_without_the_transpose,
             "assert difference < 1e-12"),
    Breakage("05b_encoder_layer", "no residual in SublayerOutput", no_residual_in_sublayer_output,
             "assert post[0] > 0.9"),
    Breakage("06_embeddings", "no position embeddings", no_position_embeddings,
             "np.allclose(embeddings(ids, segments).data, by_hand, atol=1e-5)"),
    Breakage("06a_tied_decoder_and_pooler", "the decoder a copy of E", untied_decoder,
             "np.abs(E.grad[unseen]).sum() > 0"),
    Breakage("07_wordpiece", "shortest piece first", wordpiece_shortest_piece_first,
             'wordpiece.tokenize_word("playing") == ("play", "##ing")'),
    Breakage("08_masking", "every chosen token masked", every_chosen_token_masked,
             "abs(share - target) < 5 * sigma + 0.002"),
    Breakage("09_nsp", "NotNext's B from A's own document", not_next_from_the_same_document,
             "assert all(follows) and all(elsewhere)"),
    Breakage("10_mlm_loss", "the MLM loss over every position", mlm_loss_over_every_position,
             "bert_rows.sum() == len(masked.positions)"),
    Breakage("11_adam_schedule", "BertAdam given bias correction", bias_correction_in_bert_adam,
             "np.isclose(bert[0] / adam[0], 0.1 / np.sqrt(0.001), rtol=1e-4)"),
    Breakage("11_adam_schedule", "AdamW's decay through the gradient", adamw_decay_through_the_gradient,
             'np.isclose(decayed_to["AdamW"], 1 - 0.01 * 0.01)'),
    Breakage("11a_training_dynamics", "the schedule without warmup", schedule_without_warmup,
             "assert post_cold > FLOOR + 1.0 and post_warm < post_cold - 0.5"),
    Breakage("12_pretrain", "the initialiser ignores its std", initializer_ignores_its_std,
             "assert untrained_largest < 5 / model_config.vocab_size"),
    Breakage("12_pretrain", "clipping by floor division", clipping_by_floor_division,
             "losses[-1] < losses[0] - 2.0"),
    Breakage("13_bidirectional_probe", "the causal mask without its triangle", causal_mask_without_the_triangle,
             'assert change["causal"] < 1e-5 < change["bidirectional"]'),
    Breakage("14_classifier", "the pooler reads the last token", pooler_reads_the_last_token,
             "np.tanh(cls_vector @ pooler.weight.data.T + pooler.bias.data)"),
    Breakage("14_classifier", "the classifier skips the pooler", classifier_skips_the_pooler,
             "assert same and"),
    Breakage("15_question_answering", "windows without doc_stride", windows_without_doc_stride,
             "after.offsets[0][0] < before.offsets[-1][1]"),
    Breakage("15_question_answering", "spans that end before they start", spans_ending_before_they_start,
             "4 <= span.start <= span.end <= 11"),
    # lessons 16-22
    Breakage("16_real_checkpoint", "the attention LayerNorm loaded from the feed-forward one",
             attention_layer_norm_given_the_feed_forward_ones, "np.abs(pairs[:2, 2:]).max() < 0.15",
             needs_packaged_model=True),
    Breakage("17_token_tagging", "the tag on each word's last piece", tag_on_the_last_piece,
             'assert labels == expected + ["-"]'),
    Breakage("18_not_a_generator", "the causal mask left out", causal_mask_left_out,
             'assert all(unchanged) if kind == "causal" else not any(unchanged)'),
    Breakage("19_masking_mix", "the batches' masking without the mix",
             batches_masking_without("mask_token_prob", "random_token_prob"),
             "np.allclose(shares, np.array(mix) / 100, atol=0.05)"),
    Breakage("20_mask_rate", "the batches' masking without the rate", batches_masking_without("masked_lm_prob"),
             "abs(chosen / maskable - rate) < 0.04"),
    Breakage("21_sentence_task", "SOP's label 1 without the swap", sop_label_without_the_swap,
             "{where for label, where in pairs if label == 1} == {meaning}"),
    Breakage("22_ladder", "the spread over n, not n - 1", spread_over_n,
             "np.isclose(cell.std, np.std(accuracies, ddof=1))"),
    Breakage("22_ladder", "the bootstrap resamples sentences, not documents", sentences_not_documents,
             "width(by_document) >= 1.5 * width(by_sentence)"),
    Breakage("22_ladder", "a gain given against a run that learned nothing", gain_against_a_run_that_learned_nothing,
             'assert all(cell.gain is None for key, cell in rerun_cells.items() if key[:2] == ("doc-pairs", probe))'),
)


def run_broken(lesson, name):
    """Apply the breakage, then run the lesson as `python lessons/<lesson>.py` runs it, in this process."""
    sys.path[:0] = [str(LESSONS_DIR), str(ROOT)]  # the lesson's `import course`, and this checkout's minibert
    (breakage,) = [b for b in BREAKAGES if (b.lesson, b.name) == (lesson, name)]
    script = LESSONS_DIR / f"{lesson}.py"
    breakage.apply()
    sys.argv = [str(script)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except AssertionError as error:
        if traceback.extract_tb(error.__traceback__)[-1].filename != str(script):
            raise  # an assert inside minibert is a crash of the library, not the lesson noticing
        traceback.print_exc()
        sys.exit(CLAIM_FAILED)


if __name__ == "__main__":
    run_broken(*sys.argv[1:])
