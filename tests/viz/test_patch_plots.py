"""Patch maps and the position-similarity grid: one panel per map, readable, described."""

import matplotlib.pyplot as plt
import pytest
import torch

from attnbook.viz.patch_plots import patch_maps, similarity_grid

IMAGE = torch.rand(8, 8, generator=torch.Generator().manual_seed(0))


def test_patch_maps_draw_the_image_and_one_titled_panel_per_map(book_style, shown):
    maps = {f"L0 H{h}": torch.softmax(torch.randn(16), 0) for h in range(4)}
    maps["rollout"] = torch.rand(16)
    fig = patch_maps(maps, IMAGE, ncols=5, title="a 3")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible][0] == "image"
    assert len(visible) == 6 and visible[1].get_title().startswith("L0 H0 (max ")
    shown(fig)


def test_patch_maps_say_where_each_map_peaks_in_the_alt_text(book_style):
    from attnbook.viz.style import alt_text

    peak = torch.zeros(16)
    peak[6] = 1.0
    fig = patch_maps({"head": peak}, IMAGE)
    assert "head: largest 1.00 at row 1 column 2" in alt_text(fig)
    plt.close(fig)


def test_patch_maps_can_share_a_colour_scale_between_panels(book_style):
    maps = {"a": torch.full((16,), 0.1), "b": torch.linspace(0, 0.4, 16)}
    fig = patch_maps(maps, IMAGE, vmax={"a": 0.4, "b": 0.4})
    clims = [ax.images[0].get_clim() for ax in fig.axes[1:3]]
    assert clims == [(0, 0.4), (0, 0.4)]
    plt.close(fig)
    with pytest.raises(ValueError, match="vmax names panels that are not in maps"):
        patch_maps(maps, IMAGE, vmax={"c": 1.0})


def test_patch_maps_refuse_bad_shapes():
    with pytest.raises(ValueError, match="square number of patches; got 15"):
        patch_maps({"x": torch.ones(15)}, IMAGE)
    with pytest.raises(ValueError, match=r"image must be \(H, W\)"):
        patch_maps({"x": torch.ones(16)}, IMAGE[None])
    with pytest.raises(ValueError, match="at least one map"):
        patch_maps({}, IMAGE)


def test_similarity_grid_has_one_small_map_per_position(book_style, shown):
    from attnbook.viz.style import alt_text

    s = torch.eye(16)
    fig = similarity_grid(s, title="positions")
    maps = [ax for ax in fig.axes if ax.get_images()]
    assert len(maps) == 16
    assert "4 by 4 grid" in alt_text(fig) and "mean 0.00" in alt_text(fig)
    shown(fig)


def test_similarity_grid_refuses_a_non_square_count():
    with pytest.raises(ValueError, match=r"similarity must be \(P, P\)"):
        similarity_grid(torch.ones(3, 4))
    with pytest.raises(ValueError, match="square number of patches"):
        similarity_grid(torch.eye(5))
