"""Type checkers see every result field's type (issue 45): mypy --strict and pyright on code
that reads the results and on a FastAPI app using them, and each catches a field misused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from client_support import mypy_strict

ROOT = Path(__file__).resolve().parent.parent
PYRIGHT = Path(sys.executable).parent / "basedpyright"

USES = """\
from __future__ import annotations

import dataclasses
import datetime
from typing import Optional

import pushwire
from pushwire import Drip, Page, Segment, TriggeredCampaign


def read(c: pushwire.Client) -> None:
    drip: Drip = c.drips.get(1)
    created: Optional[datetime.datetime] = drip.created_at_utc
    if created is not None:
        print(created.astimezone(datetime.timezone.utc).isoformat())
    page: Page[Drip] = c.drips.list()
    first: int = page[0].drip_id
    views: int = page[0].analytics.views
    names: list[str] = [s.segment_name for s in c.segments.list()]
    trigger: TriggeredCampaign = c.triggers.get(1)
    updated: Optional[datetime.datetime] = trigger.updated_at_utc
    text: str = drip.to_json(indent=2) + page.to_json()
    by_segment: dict[Segment, int] = {s: hash(s) for s in c.segments.list()}
    row: dict[str, object] = dataclasses.asdict(drip)
    renamed: Drip = dataclasses.replace(drip, campaign_name="x")
    listed: str = c.segments.list().to_json()
    answer: pushwire.APIResponse[object] = c.request("GET", "/apiv1/segments", query={"a": 1})
    raw: pushwire.APIResponse[object] = c.with_raw_response.request("POST", "/apiv1/x", form={})
    print(first, views, names, updated, text, by_segment, row, renamed, listed, answer, raw)


async def read_async(c: pushwire.AsyncClient) -> int:
    answer = await c.request("GET", "/apiv1/segments", interface="main", timeout=2)
    raw = await c.with_raw_response.request("DELETE", "/apiv1/x", idempotent=True)
    return answer.status_code + raw.status_code
"""

MISUSE = """\
import pushwire


def misuse(c: pushwire.Client) -> str:
    return c.drips.get(1).created_at_utc


def misspelt(c: pushwire.Client) -> None:
    c.request("GET", "/apiv1/segments", interface="admin")
"""


def check(tool: str, tmp_path: Path, **files: str) -> subprocess.CompletedProcess[str]:
    for name, source in files.items():
        (tmp_path / f"{name}.py").write_text(source)
    paths = [f"{name}.py" for name in files]
    if tool == "mypy":
        command = mypy_strict(*paths)
    else:
        (tmp_path / "pyrightconfig.json").write_text(
            '{"typeCheckingMode": "standard", "pythonVersion": "3.9"}'
        )
        command = [str(PYRIGHT), "--pythonpath", sys.executable, *paths]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("tool", ["mypy", "pyright"])
def test_result_fields_and_a_fastapi_app_type_check(tool: str, tmp_path: Path) -> None:
    app = (ROOT / "examples" / "fastapi_app.py").read_text()
    done = check(tool, tmp_path, uses=USES, app=app)
    assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "wrong").mkdir()
    wrong = check(tool, tmp_path / "wrong", misuse=MISUSE)
    assert wrong.returncode != 0
    assert "datetime" in wrong.stdout and "str" in wrong.stdout, wrong.stdout
    assert '"admin"' in wrong.stdout or "'admin'" in wrong.stdout, wrong.stdout
