"""The notebooks the download button offers, as the site reads and as JupyterLab shows them.

Each chapter's reader notebook (``_build/html/_sources/chapters/<stem>.ipynb``, written by
:mod:`claimbook.reader_notebooks`) is checked against the built pages of its chapter (every
claim number and numbered cross-reference the pages show is in its prose, one drawn figure per
figure), then opened in JupyterLab, the interface Binder serves, in headless Chromium: its
prose shows no MyST, every figure is drawn, no output is an error and the page logs no error.
Screenshots at 1366 px go to ``_build/screenshots/jupyterlab-*.png``.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from checks.binder import image_outputs, raw_myst
from tests.site.test_site import SCREENSHOTS, SITE, browser, chapter_soup, chapter_stems  # noqa: F401 (browser: a fixture)

pytestmark = pytest.mark.site

DOWNLOADS = SITE / "_sources" / "chapters"
WIDTH, HEIGHT = 1366, 900
# A numbered cross-reference as the site writes it.
NUMBERED = re.compile(r"(?:Figure|Section|Theorem|Chapter) \d+(?:\.\d+)*|\(\d+\.\d+\)")
# The notebook in view (JupyterLab keeps other tabs' notebooks in the page, hidden).
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
SERVER_START = 180  # seconds; JupyterLab starts in about 5 s, far slower on a loaded machine


def reader(stem):
    path = DOWNLOADS / f"{stem}.ipynb"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make` before the site checks")
    return nbformat.read(path, as_version=4)


def prose(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def site_figures(stem) -> int:
    return len(chapter_soup(stem).select("article.bd-article figure img"))


@pytest.fixture(params=chapter_stems())
def stem(request):
    return request.param


def test_the_download_holds_the_sites_numbers_references_and_figures(stem):
    notebook = reader(stem)
    text = " ".join(prose(notebook).split())
    assert raw_myst(notebook) == []
    assert image_outputs(notebook) == site_figures(stem) > 0
    article = chapter_soup(stem).select_one("article.bd-article")
    numbers = [" ".join(n.get_text().split()) for n in article.select(".claim-number")]
    assert numbers and [number for number in numbers if number not in text] == []
    references = {
        link.get_text(" ", strip=True)
        for link in article.select("a.reference.internal")
        if NUMBERED.fullmatch(link.get_text(" ", strip=True))
    }
    assert references and sorted(ref for ref in references if ref not in text) == []
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", ())]
    assert not [output for output in outputs if output.output_type == "error"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _settings(folder):
    """JupyterLab's user settings for the test: every cell rendered (no windowing, which
    renders only the cells in view) and no news toast over the notebook."""
    for plugin, values in {
        "notebook-extension/tracker": {"windowingMode": "none"},
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        path = folder / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """A JupyterLab server on a free port over a copy of the reader notebooks (JupyterLab
    writes checkpoints beside what it opens), without a token; its URL."""
    root = tmp_path_factory.mktemp("jupyterlab")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    for stem in chapter_stems():
        reader(stem)  # fails naming a missing notebook
        shutil.copy(DOWNLOADS / f"{stem}.ipynb", notebooks)
    _settings(root / "settings")
    environment = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(root / "settings"),
        "JUPYTER_CONFIG_DIR": str(root / "config"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
    }
    port = _free_port()
    log = (root / "server.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={notebooks}",
            "--ServerApp.ip=127.0.0.1",
            "--allow-root",  # CI runs the site tier as root
        ],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                said = (root / "server.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"JupyterLab did not start on {url}:\n{said}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


RENDERED = r"""() => {
  const cells = [...document.querySelectorAll('${NOTEBOOK} .jp-MarkdownCell')];
  return {
    markdown: cells.length,
    rendered: cells.filter(c => c.classList.contains('jp-mod-rendered')).length,
    text: cells.map(c => c.querySelector('.jp-RenderedMarkdown')?.innerText ?? '').join('\n'),
    images: [...document.querySelectorAll('${NOTEBOOK} .jp-OutputArea-output img')].map(
      img => [img.complete, img.naturalWidth, img.getBoundingClientRect().width]),
    errors: document.querySelectorAll(
      '${NOTEBOOK} [data-mime-type="application/vnd.jupyter.error"], ' +
      '${NOTEBOOK} [data-mime-type="application/vnd.jupyter.stderr"]').length,
    outputs: [...document.querySelectorAll('${NOTEBOOK} .jp-OutputArea')].map(
      area => area.innerText).join('\n'),
    math: document.querySelectorAll('${NOTEBOOK} .jp-RenderedMarkdown mjx-container').length,
    modified: document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab.jp-mod-dirty').length,
    tab: document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current')?.className,
  };
}""".replace("${NOTEBOOK}", NOTEBOOK)


def test_jupyterlab_shows_each_reader_notebook_as_the_chapter_reads(stem, jupyterlab, browser):  # noqa: F811
    notebook = reader(stem)
    markdown_cells = sum(cell.cell_type == "markdown" for cell in notebook.cells)
    expected_figures = site_figures(stem)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    problems = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    try:
        # ?reset: a fresh workspace, not the one the last notebook opened left
        page.goto(f"{jupyterlab}/lab/tree/{stem}.ipynb?reset", wait_until="domcontentloaded")
        page.wait_for_selector(f"{NOTEBOOK} .jp-MarkdownCell", timeout=120_000)
        page.wait_for_function(
            f"""() => document.querySelectorAll('{NOTEBOOK} .jp-MarkdownCell.jp-mod-rendered')
                .length >= {markdown_cells} &&
              [...document.querySelectorAll('{NOTEBOOK} .jp-OutputArea-output img')]
                .filter(img => img.complete && img.naturalWidth > 0).length >= {expected_figures}
              && document.querySelectorAll('.jp-RenderedMarkdown mjx-container').length > 0""",
            timeout=120_000,
        )
        # The kernel started and idle, as a reader finds it: JupyterLab then writes the kernel
        # it started into the notebook's metadata, which must already say so.
        page.wait_for_function(
            "() => /Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent || '')",
            timeout=120_000,
        )
        shown = page.evaluate(RENDERED)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"jupyterlab-{stem}-top.png")
        for index in (0, expected_figures - 1):
            image = page.locator(f"{NOTEBOOK} .jp-OutputArea-output img").nth(index)
            image.scroll_into_view_if_needed()
            page.screenshot(path=SCREENSHOTS / f"jupyterlab-{stem}-figure-{index + 1}.png")
    finally:
        page.close()
    assert shown["markdown"] == shown["rendered"] == markdown_cells
    for raw in ("{claim-value}", "{numref}", "{glue:", "{eq}", "{cite:", "```{", ":::"):
        assert raw not in shown["text"], raw
    assert not re.search(r"\{[a-z][\w:+-]*\}`", shown["text"])
    assert len(shown["images"]) == expected_figures
    assert all(done and width > 0 and laid_out for done, width, laid_out in shown["images"])
    assert shown["errors"] == 0 and shown["math"] > 0
    assert "lm-TabBar-tab" in (shown["tab"] or "")  # the notebook's tab, found
    assert shown["modified"] == 0, shown["tab"]  # JupyterLab changed nothing in it
    assert "No renderer could be found" not in shown["outputs"]
    assert problems == []
