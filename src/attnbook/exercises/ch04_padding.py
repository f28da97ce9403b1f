"""Chapter 4's padding-mask exercise: an ``nn.MultiheadAttention`` padding mask for
``F.scaled_dot_product_attention``.

``convert(key_padding_mask)``: a mask (N, S), ``True`` on padding, turned into the ``attn_mask``
that ``F.scaled_dot_product_attention`` needs for queries (N, H, L, E), so that both ignore the
same keys (``True`` = may attend there, or a float mask of 0 and -inf). The library's
:func:`~attnbook.masks.mha_to_sdpa_mask` is refused.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.exercises.report import Report, call, changed_inputs, library
from attnbook.i18n import N_, tr
from attnbook.masks import mha_to_sdpa_mask

__all__ = ["check_padding_to_sdpa"]


def check_padding_to_sdpa(convert: Callable[[Tensor], Tensor]) -> Report:
    """Check ``convert(key_padding_mask)``: an ``nn.MultiheadAttention`` padding mask (N, S),
    ``True`` on padding, turned into the ``attn_mask`` that ``F.scaled_dot_product_attention``
    needs for queries (N, H, L, E) so that both ignore the same keys."""
    report = Report(
        N_("padding mask for F.scaled_dot_product_attention"), refused=library(mha_to_sdpa_mask)
    )
    padding = torch.tensor(
        [[False, False, False, True, True], [False] * 5, [False, True, True, True, True]]
    )
    Nb, Hb, Lb, Sb = 3, 2, 4, 5
    g = torch.Generator().manual_seed(7)
    q, k, v = (
        torch.randn(Nb, Hb, Lb, 8, generator=g),
        torch.randn(Nb, Hb, Sb, 8, generator=g),
        torch.randn(Nb, Hb, Sb, 8, generator=g),
    )
    right = ~padding[:, None, None, :]  # (N, 1, 1, S), True = may attend

    def case() -> str | None:
        mask = call(convert, padding)
        if not isinstance(mask, Tensor):
            return tr("return a tensor mask; got {mask_type}").format(mask_type=type(mask).__name__)
        if mask.dtype != torch.bool and not mask.is_floating_point():
            return tr(
                "return a bool mask (True = may attend); F.scaled_dot_product_attention refuses a "
                "mask of dtype {mask_dtype}"
            ).format(mask_dtype=mask.dtype)
        try:
            allowed = mask.broadcast_to(Nb, Hb, Lb, Sb) if mask.dtype == torch.bool else None
        except RuntimeError:
            if mask.dim() < 4:
                return tr(
                    "a mask of shape {mask_shape} does not broadcast to the scores (N, H, L, S) = "
                    "{Nb_Hb_Lb_Sb}: add the head and query dimensions, "
                    "key_padding_mask[:, None, None, :]"
                ).format(mask_shape=tuple(mask.shape), Nb_Hb_Lb_Sb=(Nb, Hb, Lb, Sb))
            return tr(
                "a mask of shape {mask_shape} does not broadcast to the scores (N, H, L, S) = "
                "{Nb_Hb_Lb_Sb}; the padding mask is (N, S) = {padding_shape}: keep N first and S "
                "last"
            ).format(
                mask_shape=tuple(mask.shape),
                Nb_Hb_Lb_Sb=(Nb, Hb, Lb, Sb),
                padding_shape=tuple(padding.shape),
            )
        if allowed is None:  # a float mask: added to the scores
            try:
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))
            except RuntimeError as exc:
                return tr("F.scaled_dot_product_attention refuses this mask: {exc}").format(exc=exc)
            if torch.allclose(
                out, F.scaled_dot_product_attention(q, k, v, attn_mask=right), atol=1e-5
            ):
                return None
            return tr("a float mask must be 0 where a key is allowed and -inf on padding")
        if torch.equal(allowed, right.broadcast_to(allowed.shape)):
            return None
        if torch.equal(allowed, (~right).broadcast_to(allowed.shape)):
            return tr(
                "the convention is inverted: for F.scaled_dot_product_attention True means MAY "
                "attend, for nn.MultiheadAttention True means padding; invert it with ~"
            )
        return tr(
            "some allowed keys are wrong; each sequence's padded keys (and only those) must be "
            "False"
        )

    report.run("the same keys are ignored as with nn.MultiheadAttention", case)
    report.run(
        "does not modify the padding mask",
        lambda: changed_inputs(convert, ("key_padding_mask",), padding),
    )
    return report
