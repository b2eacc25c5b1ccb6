"""Figures drawn beside a build's kernel (engine/claimbook/figure_worker.py)."""

import os
import re

import IPython.display
import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt
import myst_nb.ext.glue
import nbformat
import numpy as np
import pytest

from claimbook import figure_worker
from claimbook.figure_worker import (
    PENDING_KEY,
    FigureWorkerError,
    finish_figures,
    hand_over,
    move_glued_outputs,
)
from claimbook.figures import FIGURE_STYLE, SMALLEST_TEXT_KEY, FigureJob


def _figure():
    """Two panels, a constrained layout and log axes: ticks are made while it is drawn."""
    fig, (top, bottom) = plt.subplots(2, 1, layout="constrained")
    x = np.geomspace(1e-2, 1e3, 30)
    top.loglog(x, x**0.5, label=r"$\sqrt{x}$")
    top.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))
    bottom.plot(x, np.sin(x))
    bottom.set(xlabel="x", ylabel="sin x")
    return fig


def _job(folder, label="fig-t"):
    return FigureJob(
        label,
        folder / f"{label}.svg",
        folder / f"{label}.png",
        {"Title": label, "Date": None, "Creator": None},
        {"Software": None, "Title": label},
        folder / "chapter.md",
    )


@pytest.fixture
def displayed(monkeypatch):
    """What was displayed, call by call: ``(bundle, metadata)``; the pool stopped after."""
    calls = []
    record = lambda bundle, raw, metadata: calls.append((bundle, metadata))  # noqa: E731
    monkeypatch.setattr(IPython.display, "display", record)
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", record)
    yield calls
    figure_worker._PENDING.clear()
    if figure_worker._POOL is not None:
        figure_worker._POOL.shutdown()
        figure_worker._POOL = None


def test_the_worker_writes_the_bytes_the_kernel_writes(tmp_path, displayed):
    # Under the book's style and a setting read only when a figure is saved, not under
    # Matplotlib's defaults: the worker draws with the kernel's settings.
    (tmp_path / "here").mkdir()
    with matplotlib.rc_context({**FIGURE_STYLE, "savefig.facecolor": "#fafafa"}):
        _job(tmp_path / "here").draw(_figure())
        hand_over(_figure(), _job(tmp_path))
    assert finish_figures() == ["fig-t"]
    for suffix in (".png", ".svg"):
        drawn_here = (tmp_path / "here" / f"fig-t{suffix}").read_bytes()
        assert (tmp_path / f"fig-t{suffix}").read_bytes() == drawn_here
    from PIL import Image

    with Image.open(tmp_path / "fig-t.png") as image:
        assert image.text[SMALLEST_TEXT_KEY] == "10"  # the style's tick labels
    plt.close("all")


def test_the_glued_output_takes_the_place_of_the_placeholder_the_cell_showed(tmp_path, displayed):
    hand_over(_figure(), _job(tmp_path))
    [(placeholder, marked)] = displayed
    assert marked == {PENDING_KEY: "fig-t"} and "fig-t" in placeholder["text/plain"]
    assert finish_figures() == ["fig-t"]
    [_, (bundle, metadata)] = displayed
    # As myst_nb.glue(label, Image(png), display=False) writes it: the page's image.
    assert metadata["scrapbook"]["name"] == "fig-t"
    png = bundle[myst_nb.ext.glue.GLUE_PREFIX + "image/png"]

    def output(bundle, metadata):
        return nbformat.v4.new_output("display_data", data=bundle, metadata=metadata)

    notebook = nbformat.v4.new_notebook()
    drew = nbformat.v4.new_code_cell("print('a'); glue_figure(fig, 'fig-t'); print('b')")
    drew.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="a\n"),
        output(placeholder, marked),
        nbformat.v4.new_output("stream", name="stdout", text="b\n"),
    ]
    other = nbformat.v4.new_code_cell("x = 1")
    last = nbformat.v4.new_code_cell("finish_figures()")
    last.outputs = [output(bundle, metadata)]
    notebook.cells = [drew, other, last]
    move_glued_outputs(notebook, last)
    assert [o.output_type for o in drew.outputs] == ["stream", "display_data", "stream"]
    assert drew.outputs[1].data[myst_nb.ext.glue.GLUE_PREFIX + "image/png"] == png
    assert other.outputs == [] and last.outputs == []
    # A placeholder left without its figure, or a figure without a placeholder, is an error.
    drew.outputs[1] = output(placeholder, marked)
    with pytest.raises(FigureWorkerError, match="fig-t was handed over but never glued"):
        move_glued_outputs(notebook, last)
    drew.outputs.pop(1)
    last.outputs = [output(bundle, metadata)]
    with pytest.raises(FigureWorkerError, match=r"no cell that drew them: \['fig-t'\]"):
        move_glued_outputs(notebook, last)
    # A label glued twice (as a cell run twice would): each placeholder gets its own, in order.
    second = {**metadata, "order": 2}
    drew.outputs = [output(placeholder, marked), output(placeholder, marked)]
    last.outputs = [output(bundle, metadata), output(bundle, second)]
    move_glued_outputs(notebook, last)
    assert [o.metadata.get("order") for o in drew.outputs] == [None, 2]
    plt.close("all")


def test_the_worker_draws_the_figure_as_it_was_handed_over(tmp_path, displayed):
    fig = _figure()
    hand_over(fig, _job(tmp_path))
    fig.axes[1].set_xlabel("changed after")  # later changes do not reach the files
    finish_figures()
    assert b"changed after" not in (tmp_path / "fig-t.svg").read_bytes()
    (tmp_path / "now").mkdir()
    _job(tmp_path / "now").draw(fig)
    assert (tmp_path / "now" / "fig-t.svg").read_bytes() != (tmp_path / "fig-t.svg").read_bytes()
    plt.close(fig)


class _OnlyInThisProcess:
    """Unpickles in the process that made it, and fails in any other (such as the worker)."""

    def __init__(self):
        self.pid = os.getpid()

    def __setstate__(self, state):
        if state["pid"] != os.getpid():
            raise RuntimeError("unpickled in another process")
        self.__dict__.update(state)


class _Nowhere:
    """Unpickles nowhere."""

    def __init__(self):
        self.state = "some"  # an object with no state is unpickled without __setstate__

    def __setstate__(self, state):
        raise RuntimeError("never unpickled")


def test_a_figure_the_worker_cannot_unpickle_is_drawn_in_the_kernel(tmp_path, displayed):
    # As a figure whose formatter is a function defined in the notebook: the worker fails.
    fig = _figure()
    fig.only_here = _OnlyInThisProcess()
    assert hand_over(fig, _job(tmp_path))
    fig.axes[1].set_xlabel("changed after")  # drawn from the pickle even so
    assert finish_figures() == ["fig-t"]
    assert b"changed after" not in (tmp_path / "fig-t.svg").read_bytes()
    (tmp_path / "here").mkdir()
    again = _figure()
    _job(tmp_path / "here").draw(again)
    for suffix in (".png", ".svg"):
        drawn_here = (tmp_path / "here" / f"fig-t{suffix}").read_bytes()
        assert (tmp_path / f"fig-t{suffix}").read_bytes() == drawn_here
    plt.close("all")


def test_a_figure_that_cannot_be_pickled_is_not_handed_over(tmp_path, displayed):
    from matplotlib.ticker import FuncFormatter

    fig = _figure()
    fig.axes[0].xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    assert not hand_over(fig, _job(tmp_path))  # the caller draws it
    assert displayed == [] and figure_worker._PENDING == []
    plt.close(fig)


def test_a_figure_not_drawn_fails_the_finish_and_names_it(tmp_path, displayed):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    fig = _figure()
    hand_over(fig, _job(blocked, "fig-bad"))  # no folder to write in, here or there
    nowhere = _figure()
    nowhere.nowhere = _Nowhere()
    hand_over(nowhere, _job(tmp_path, "fig-unpickled"))
    hand_over(fig, _job(tmp_path, "fig-good"))
    with pytest.raises(FigureWorkerError) as raised:
        finish_figures()
    message = str(raised.value)
    assert re.search(r"fig-bad: \w+Error: .*; drawn in the kernel: \w+Error", message)
    assert "fig-unpickled: RuntimeError: never unpickled; drawn in the kernel: " in message
    assert "fig-good" not in message
    # The others are still waited for and glued.
    assert (tmp_path / "fig-good.svg").is_file()
    glued = [metadata["scrapbook"]["name"] for _, metadata in displayed if "scrapbook" in metadata]
    assert glued == ["fig-good"]
    assert finish_figures() == [] and figure_worker._POOL is None  # nothing left behind
    plt.close("all")


def test_a_build_sets_the_variable_and_nothing_else_does(monkeypatch):
    monkeypatch.delenv(figure_worker.WORKER_VARIABLE, raising=False)
    assert not figure_worker.in_use()
    monkeypatch.setenv(figure_worker.WORKER_VARIABLE, "1")
    assert figure_worker.in_use()
