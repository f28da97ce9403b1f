"""The synthetic tasks of chapter 10: targets right by construction, bad sizes refused."""

import pytest
import torch

from attnbook.tasks.synthetic import IGNORE_INDEX, offset_copy_batch, retrieval_batch


def test_offset_copy_targets_are_the_tokens_offset_positions_back():
    tokens, targets = offset_copy_batch(4, torch.Generator().manual_seed(0), length=10, offset=3)
    assert (targets[:, :3] == IGNORE_INDEX).all()
    assert torch.equal(targets[:, 3:], tokens[:, :7])


def test_offset_must_fit_in_the_sequence():
    with pytest.raises(ValueError, match="offset must be in"):
        offset_copy_batch(2, torch.Generator(), length=8, offset=8)


def test_retrieval_target_is_the_value_stored_under_the_query_key():
    keys, values, target = retrieval_batch(
        50, torch.Generator().manual_seed(1), items=6, num_keys=9, num_values=5
    )
    assert keys.shape == values.shape == (50, 7)
    assert (values[:, -1] == 5).all()  # the query carries the blank value
    for n in range(50):
        assert len(set(keys[n, :-1].tolist())) == 6  # distinct keys
        j = keys[n, :-1].tolist().index(keys[n, -1].item())
        assert target[n] == values[n, j]
