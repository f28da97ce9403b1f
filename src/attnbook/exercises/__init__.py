"""Checkers for the book's coding exercises.

Each checker takes the reader's function, runs it on cases whose answers the library knows, and
returns a :class:`Report` that says, in words, what is right and what is wrong. Checkers never
raise on a wrong answer (a learner's code that crashes is reported too); they return the report,
whose ``passed`` attribute is True only when every case is right. A slip is named only when it
explains the answer (across the cases where one case alone could mislead), and an answer that
calls the library's own function, or autograd where a derivation is asked, is refused
(:class:`~attnbook.exercises.report.Refused`). ``tests/exercises/catalogue/`` holds the wrong
answers every checker is tested against.
"""

from attnbook.exercises.ch01_detective import check_new_suspect, check_two_way_lookup
from attnbook.exercises.ch01_lookup import check_sharpen, check_soft_lookup
from attnbook.exercises.ch02_attention import check_attention
from attnbook.exercises.ch02_numbers import (
    check_bert_cost,
    check_largest_temperature,
    check_variance,
)
from attnbook.exercises.ch03_many_heads import check_fixed_head_size, check_param_count
from attnbook.exercises.ch04_building_mha import (
    check_article_mask,
    check_kdim_shapes,
    check_merge_heads,
    check_split_heads,
)
from attnbook.exercises.ch04_padding import check_padding_to_sdpa
from attnbook.exercises.ch05_transformer import (
    check_decoder_count,
    check_pre_ln_block,
    check_sinusoidal_encoding,
)
from attnbook.exercises.ch05b_complete import check_kv_rows, check_transformer_schedule
from attnbook.exercises.ch06_training import check_pointer_loss
from attnbook.exercises.ch07_seeing_heads import (
    check_binding,
    check_gender_baseline,
    check_head_hits,
)
from attnbook.exercises.ch08_what_heads_do import check_head_entropy, check_replace_head
from attnbook.exercises.ch09_cost import (
    check_causal_tiles,
    check_checkpoint_segments,
    check_how_long,
)
from attnbook.exercises.ch09_online_softmax import check_block_attention, check_online_softmax_merge
from attnbook.exercises.ch10_approximations import (
    check_linear_attention,
    check_linear_limit,
    check_state_bytes,
    check_window_layers,
)
from attnbook.exercises.ch11_training import check_attention_backward, check_backward_memory
from attnbook.exercises.ch12_translation import check_number_to_chinese
from attnbook.exercises.ch13_reading import check_last_place, check_supporting_share
from attnbook.exercises.ch14_summarising import check_central_sentence
from attnbook.exercises.ch15_vision import check_patchify, check_rollout
from attnbook.exercises.ch16_pretrained import (
    check_bert_param_count,
    check_mean_pool,
    check_predicted_tokens,
)
from attnbook.exercises.ch17_real_heads import check_candidate_hits, check_previous_weight
from attnbook.exercises.ch18_tuning import check_diversity, check_soft_loss
from attnbook.exercises.ch19_troubleshooting import check_uniformity, check_verdicts
from attnbook.exercises.ch19b_unstable import check_largest_dot, check_rotate
from attnbook.exercises.ch20_outlook import check_cache_bytes, check_linear_step
from attnbook.exercises.report import Report

__all__ = [
    "Report",
    "check_sharpen",
    "check_soft_lookup",
    "check_new_suspect",
    "check_two_way_lookup",
    "check_attention",
    "check_padding_to_sdpa",
    "check_variance",
    "check_bert_cost",
    "check_largest_temperature",
    "check_param_count",
    "check_fixed_head_size",
    "check_split_heads",
    "check_merge_heads",
    "check_article_mask",
    "check_kdim_shapes",
    "check_sinusoidal_encoding",
    "check_pre_ln_block",
    "check_decoder_count",
    "check_transformer_schedule",
    "check_kv_rows",
    "check_pointer_loss",
    "check_head_hits",
    "check_binding",
    "check_gender_baseline",
    "check_head_entropy",
    "check_replace_head",
    "check_online_softmax_merge",
    "check_block_attention",
    "check_causal_tiles",
    "check_how_long",
    "check_checkpoint_segments",
    "check_linear_attention",
    "check_state_bytes",
    "check_window_layers",
    "check_linear_limit",
    "check_attention_backward",
    "check_backward_memory",
    "check_number_to_chinese",
    "check_last_place",
    "check_supporting_share",
    "check_central_sentence",
    "check_patchify",
    "check_rollout",
    "check_bert_param_count",
    "check_mean_pool",
    "check_predicted_tokens",
    "check_previous_weight",
    "check_candidate_hits",
    "check_soft_loss",
    "check_diversity",
    "check_uniformity",
    "check_verdicts",
    "check_largest_dot",
    "check_rotate",
    "check_cache_bytes",
    "check_linear_step",
]
