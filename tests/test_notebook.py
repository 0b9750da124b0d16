"""examples/notebook.ipynb runs top to bottom in a Jupyter kernel (nbclient, with the
ipykernel of this environment) and draws its chart; it is stored without outputs."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import matplotlib.image
import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "notebook.ipynb"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def outputs(nb: nbformat.NotebookNode, containing: str) -> list[nbformat.NotebookNode]:
    """The outputs of the code cells whose source contains ``containing``."""
    found = [
        output
        for cell in nb.cells
        if cell.cell_type == "code" and containing in cell.source
        for output in cell.outputs
    ]
    assert found, f"no output from a cell with {containing!r}"
    return found


def html_of(nb: nbformat.NotebookNode, containing: str) -> str:
    [html] = [
        o.data["text/html"] for o in outputs(nb, containing) if "text/html" in o.get("data", {})
    ]
    return str(html)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    workdir = tmp_path_factory.mktemp("notebook")
    # kernel "python3" is ipykernel's own: it runs this interpreter (sys.executable).
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()  # raises CellExecutionError, with the traceback, if a cell fails
    return nb


def test_the_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code
    assert [(cell.outputs, cell.execution_count) for cell in code] == [([], None)] * len(code)


def test_the_notebook_draws_its_chart(executed: nbformat.NotebookNode) -> None:
    [png] = [
        base64.b64decode(o.data["image/png"])
        for cell in executed.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "image/png" in o.get("data", {})
    ]
    assert png.startswith(PNG_SIGNATURE) and len(png) > 20_000
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = pixels.shape[:2]
    assert width >= 600 and height >= 400
    rgb = pixels[..., :3]
    assert rgb.std() > 0.05  # not a blank image of one colour
    # Drawn: besides the white ground and the black axes and text, the four coloured series
    # (sent, views, clicks, and the click-through rate), each over a fair number of pixels.
    colours, counts = np.unique((rgb * 255).round().reshape(-1, 3), axis=0, return_counts=True)
    coloured = [tuple(c) for c, n in zip(colours, counts) if n >= 300 and c.max() - c.min() > 60]
    assert len(coloured) >= 4, coloured


def test_the_notebook_shows_its_results_as_tables_and_a_progress_bar(
    executed: nbformat.NotebookNode,
) -> None:
    assert "<caption>page 1 of 1, 1 item</caption>" in html_of(executed, "client.triggers.list()")
    bulk = html_of(executed, "add_subscribers_bulk")
    assert "ok: 1 chunk of 100 items, 100 sent" in bulk
    # Without ipywidgets, tqdm draws its text bar; the bar is closed, finished.
    stderr = "".join(
        o.text for o in outputs(executed, "add_subscribers_bulk") if o.get("name") == "stderr"
    )
    assert re.search(r"add_subscribers: 100%\|\S+\| 100/100", stderr), stderr
    assert "<td>fans</td>" in html_of(executed, "client.segments.list()")
    # One row a day of the week of broadcasts, in pandas' table.
    daily = html_of(executed, "pd.DataFrame(rows)")
    [body] = re.findall(r"<tbody>(.*?)</tbody>", daily, flags=re.DOTALL)
    assert body.count("<tr>") == 7
