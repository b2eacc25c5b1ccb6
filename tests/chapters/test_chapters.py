"""Chapter sources: diff-friendly, pinned, and consistent with the registry and the contents.

These run before any build: they read `chapters/*.md` through the book's one reader of
chapter sources (`claimbook.sources`: jupytext cells, Python syntax trees, MyST's
parser), as the build does, and fail on what would otherwise surface only as a broken page.
"""

import ast
import subprocess

import jupytext
import pytest

from claimbook import claims, figures, paths
from claimbook.claims import harness_pin
from claimbook.settings import results_pasted_as_glue
from claimbook.sources import chapter_sources, read_chapter

CHAPTERS = sorted(paths.CHAPTERS_DIR.glob("*.md"))


def notebook(source_path):
    return jupytext.read(source_path, fmt="md:myst")


@pytest.fixture(params=CHAPTERS, ids=lambda path: path.stem)
def chapter(request):
    return request.param


def test_every_chapter_source_is_in_the_contents_and_back():
    listed = [source.stem for source in chapter_sources()]
    assert sorted(path.stem for path in CHAPTERS) == sorted(listed)


def test_no_notebook_with_outputs_is_tracked():
    tracked = subprocess.run(
        ["git", "ls-files", "*.ipynb"],
        cwd=paths.REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == [], f"notebooks are build products; tracked: {tracked}"


def test_the_kernel_is_named_as_jupyter_lists_it(chapter):
    """JupyterLab, starting a notebook's kernel, writes the kernel's spec into the notebook:
    a name that differs marks the reader's notebook changed before they touch it."""
    from jupyter_client.kernelspec import KernelSpecManager

    kernelspec = notebook(chapter).metadata["kernelspec"]
    installed = KernelSpecManager().get_kernel_spec(kernelspec["name"])
    assert (kernelspec["display_name"], kernelspec["language"]) == (
        installed.display_name,
        installed.language,
    )


def test_the_parameters_cell_holds_the_current_harness_pin(chapter):
    cells = [cell for cell in notebook(chapter).cells if cell.cell_type == "code"]
    first = cells[0]
    assert "parameters" in first.metadata.get("tags", []), "first code cell must be `parameters`"
    pin = read_chapter(chapter).pin
    assert pin is not None, 'the parameters cell holds a `pin = "..."` line'
    assert pin == harness_pin(), (
        f"{chapter.name} is pinned to {pin} but the harness is {harness_pin()}: "
        "review what changed, then `make repin`"
    )


def test_claims_verified_in_code_are_registered_and_shown_on_the_page(chapter):
    source = read_chapter(chapter)
    verified = set(source.verified_claims)
    cited = {role.content.strip() for role in source.roles() if role.name == "claim"}
    cited |= {d.argument for d in source.directives() if d.name == "claim-line"}
    # A claim the prose binds a number to is shown too: its card is in the section's Evidence.
    cited |= {
        role.content.strip().split(".")[0] for role in source.roles() if role.name == "claim-value"
    }
    registered = set(claims.list_claims())
    assert verified, f"{chapter.name} verifies no claim"
    assert verified <= registered, f"unregistered: {verified - registered}"
    assert cited == verified, (
        f"verified but not shown: {verified - cited}; shown only: {cited - verified}"
    )


def test_every_numbered_figure_is_saved_as_an_artifact(chapter):
    # glue_figure saves the artifact and glues its PNG: the page shows the artifact's bytes.
    source = read_chapter(chapter)
    saved = [
        call.args[1].value
        for _cell, call in source.calls("glue_figure")
        if len(call.args) > 1 and isinstance(call.args[1], ast.Constant)
    ]
    assert sorted(figures.figure_labels(source)) == sorted(saved)


def test_setup_cells_are_hidden_not_deleted(chapter):
    code_cells = [cell for cell in notebook(chapter).cells if cell.cell_type == "code"]
    for cell in code_cells:
        if "import " in cell.source and "# [" not in cell.source:
            tags = set(cell.metadata.get("tags", []))
            assert tags & {"hide-cell", "hide-input", "remove-cell", "remove-input"}, cell.source


def test_code_cells_fit_the_page_width(chapter):
    # The book's column shows about 80 characters of code before scrolling sideways.
    too_long = [
        line
        for cell in notebook(chapter).cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if len(line) > 79
    ]
    assert not too_long, "\n".join(too_long)


def test_prose_states_results_through_claims_and_settings_through_glue(chapter):
    pasted = results_pasted_as_glue(chapter)
    assert pasted == [], (
        f"{chapter.name} pastes {pasted} with plain glue: show a result with "
        "{claim-value}`<id>.<field>`, or glue a setting with glue_setting"
    )


def test_every_bound_number_names_a_registered_field_of_a_claim_the_chapter_verifies(chapter):
    source = read_chapter(chapter)
    verified = set(source.verified_claims)
    for role in source.roles():
        if role.name != "claim-value":
            continue
        reference = role.content.strip().partition(":")[0]
        claim_id, _, field = reference.partition(".")
        assert claim_id in verified, f"{chapter.name}: {reference} is not verified in its code"
        registered = set(claims.load_claim(claim_id).expect)
        # A statistical field is also read as <field>.mean or <field>.ci.
        candidates = {field, field.rsplit(".", 1)[0]}
        assert candidates & registered, (
            f"{chapter.name}: {{claim-value}}`{role.content}` names no registered field of "
            f"{claim_id} ({', '.join(sorted(registered))})"
        )


def test_chapters_take_the_engine_only_from_its_chapter_module(chapter):
    # The science comes from trainable_harness; what a chapter needs of the engine
    # (verify_claim, glue_setting, glue_figure, PALETTE, ...) from claimbook.chapter alone, so
    # the engine modules a chapter's key covers stay few.
    engine_modules = set()
    science = False
    for _index, tree in read_chapter(chapter).code_trees():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            science |= any(name.partition(".")[0] == "trainable_harness" for name in names)
            engine_modules |= {name for name in names if name.partition(".")[0] == "claimbook"}
    assert science
    assert engine_modules == {"claimbook.chapter"}, f"{chapter.name}: {engine_modules}"
