"""What a figure's legends cover, measured from the window extents of its drawn artists.

A legend's box (:meth:`matplotlib.legend.Legend.get_window_extent`, display pixels) overlaps

- another legend's box;
- a text: a title, an axis label, a tick label drawn (the ticks inside the view), an
  annotation or a figure's text, not the legend's own entries;
- data: a line's path (:meth:`matplotlib.path.Path.intersects_bbox`, so a segment crossing
  the box counts even with no vertex inside; markers count by their vertices), a
  collection's paths (shaded intervals, scatter) or a patch (a bar), within the axes it is
  drawn in (the part of the legend box inside the axes' box: the data is clipped there).

Boxes that only touch (within :data:`TOUCH_PX`) do not overlap.
"""

from __future__ import annotations

from matplotlib.collections import Collection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.spines import Spine
from matplotlib.text import Text
from matplotlib.transforms import Bbox

TOUCH_PX = 1.0

__all__ = ["TOUCH_PX", "legend_overlaps", "legends"]


def legends(fig) -> list:
    """The visible legends of ``fig``: the figure's, then each axes'."""
    found = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    return [legend for legend in found if legend is not None and legend.get_visible()]


def _shrunk(box: Bbox) -> Bbox:
    return Bbox.from_extents(
        box.x0 + TOUCH_PX, box.y0 + TOUCH_PX, box.x1 - TOUCH_PX, box.y1 - TOUCH_PX
    )


def _drawn_texts(fig, renderer) -> list[tuple[str, Bbox]]:
    """``(what, box)`` of every visible, non-empty text no legend holds."""
    skipped = {id(text) for legend in legends(fig) for text in legend.findobj(Text)}
    for ax in fig.axes:
        for axis in ax._axis_map.values():  # the axes' x and y axis
            # A tick outside the view keeps a label that is not drawn: only the ticks
            # _update_ticks returns are drawn.
            drawn = {id(tick) for tick in axis._update_ticks()}
            skipped.update(
                id(label)
                for tick in (*axis.majorTicks, *axis.minorTicks)
                if id(tick) not in drawn
                for label in (tick.label1, tick.label2)
            )
    return [
        (repr(text.get_text()), text.get_window_extent(renderer))
        for text in fig.findobj(Text)
        if id(text) not in skipped and text.get_visible() and text.get_text().strip()
    ]


def _data_artists(ax) -> list:
    """The lines, collections and patches ``ax`` draws (not its frame or a legend's)."""
    kinds = (Line2D, Collection, Patch)
    return [
        artist
        for artist in ax.get_children()
        if isinstance(artist, kinds)
        and not isinstance(artist, Spine)
        and artist.get_visible()
        and artist is not ax.patch
    ]


def _any_inside(points, box: Bbox) -> bool:
    x, y = points.T
    return bool(((x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)).any())


def _covers(artist, box: Bbox) -> bool:
    """True when ``artist`` (drawn in display pixels) enters ``box``."""
    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        if artist.get_linestyle() not in ("None", "none", "", " ") and len(path.vertices) > 1:
            if path.intersects_bbox(box, filled=False):
                return True
        if artist.get_marker() not in (None, "None", "none", "", " "):
            return _any_inside(path.vertices, box)
        return False
    if isinstance(artist, Collection):
        transform = artist.get_transform()
        offsets = artist.get_offsets()
        if len(artist.get_paths()) and len(offsets) > 1:  # scatter: markers at the offsets
            shown = artist.get_offset_transform().transform(offsets)
            return _any_inside(shown, box)
        return any(
            transform.transform_path(path).intersects_bbox(box, filled=True)
            for path in artist.get_paths()
        )
    return artist.get_window_extent().overlaps(box)


def legend_overlaps(fig) -> list[str]:
    """One line per thing a legend of ``fig`` (drawn already) overlaps; empty when none."""
    renderer = fig.canvas.get_renderer()
    found = []
    shown = legends(fig)
    boxes = [_shrunk(legend.get_window_extent(renderer)) for legend in shown]
    texts = _drawn_texts(fig, renderer)
    for index, (legend, box) in enumerate(zip(shown, boxes, strict=True)):
        name = f"legend {index + 1} ({', '.join(t.get_text() for t in legend.texts)[:60]})"
        found += [
            f"{name} overlaps legend {other + 1}"
            for other in range(index + 1, len(boxes))
            if box.overlaps(boxes[other])
        ]
        found += [f"{name} overlaps text {what}" for what, text in texts if box.overlaps(text)]
        for ax in fig.axes:
            inside = Bbox.intersection(box, ax.bbox)
            if inside is None or inside.width <= 0 or inside.height <= 0:
                continue
            found += [
                f"{name} overlaps data {artist.get_label()!r} of an axes"
                for artist in _data_artists(ax)
                if _covers(artist, inside)
            ]
    return found
