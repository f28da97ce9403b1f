"""Setup functions that tests/test_memory.py measures in a fresh process."""

import torch


def allocate(mib: int):
    torch.ones(16)  # warm-up: the first operation pages in library code

    def work():
        return torch.ones(mib * 2**20 // 4)  # written, so every page is resident

    return work


def fail():
    return 1 / 0
