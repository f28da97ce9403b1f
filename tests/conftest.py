"""Shared test settings: figures drawn off-screen, hypothesis profiles sized for a 2-core machine."""

from __future__ import annotations

import os

import matplotlib
from hypothesis import HealthCheck, settings

# Every test draws into memory (no window, no display needed), before pyplot is imported.
matplotlib.use("Agg")

# Tensors make examples slow to generate and run; no deadline, few but varied examples. The
# default profile draws the same examples on every run and machine (derandomize), so CI is never
# red by chance; the thorough profile explores new ones (HYPOTHESIS_PROFILE=thorough).
settings.register_profile(
    "default",
    deadline=None,
    max_examples=25,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough", parent=settings.get_profile("default"), max_examples=300, derandomize=False
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
