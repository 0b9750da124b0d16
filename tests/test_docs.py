"""The examples of README.md and docs/, run: a page whose example breaks fails here.

How the Markdown marks its code blocks:

- ```` ```python ````: a complete example, run. The blocks of one page run in order in one
  namespace, as a reader pasting them into one session would, so a page's first example
  can start the emulator its later ones use. Each page runs in a fresh namespace; the
  emulators and clients it leaves open are closed after it.
- ```` ```python title="test_name.py" ```` (or ``conftest.py``): a pytest file. A page's
  files are written to one temporary directory and run there by pytest, in a process of
  its own (the ``pushwire_emulator`` fixture comes from the installed plugin).
- ```` ``` {.python .norun} ````: a fragment (a signature, a line of a larger program, code
  that needs the real service or another framework). It must compile; it is not run.
- Any other language (``sh``, ``text``, ...) is not Python and is left alone.

Examples talk to the emulator (``pushwire.testing.Emulator``), never to a network.
"""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import run_pytest

from pushwire import AsyncClient, Client
from pushwire.testing import Emulator, EmulatorProcess

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

# An opening fence: its indentation, its backquotes, its info string.
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})[ \t]*(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the first line of code, 1-based
    kind: str  # "run", "pytest", "norun" or "other"
    title: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def kind_of(info: str) -> tuple[str, str]:
    """The kind of a block and its title, from the fence's info string."""
    title = re.search(r'title="([^"]*)"', info)
    name = title.group(1) if title else ""
    if info.startswith("{"):
        classes = re.findall(r"\.([\w-]+)", info)
        if "python" not in classes:
            return "other", name
        return ("norun" if "norun" in classes else "run"), name
    language = info.split()[0] if info.split() else ""
    if language != "python":
        return "other", name
    if re.fullmatch(r"(test_\w+|conftest)\.py", name):
        return "pytest", name
    return "run", name


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, ticks = opening["indent"], opening["ticks"]
        closing = re.compile(rf"^[ \t]*{ticks}`*[ \t]*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        assert end < len(lines), f"{page.relative_to(ROOT)}:{i + 1}: a fence is never closed"
        body = [
            line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]
        ]
        kind, title = kind_of(opening["info"].strip())
        found.append(Block(page, i + 2, kind, title, textwrap.dedent("\n".join(body)) + "\n"))
        i = end + 1
    return found


def compiled(block: Block) -> Any:
    # Blank lines in front, so that a traceback gives the line of the Markdown file.
    source = "\n" * (block.line - 1) + block.code
    return compile(source, str(block.page.relative_to(ROOT)), "exec")


def close_all(namespace: dict[str, Any]) -> None:
    """Closes what a page left open: the emulators and clients its examples made."""
    for value in namespace.values():
        if isinstance(value, (Emulator, EmulatorProcess, Client)):
            value.close()
        elif isinstance(value, AsyncClient):
            asyncio.run(value.aclose())


ALL = {page: blocks(page) for page in PAGES}
RUN = [page for page in PAGES if any(b.kind == "run" for b in ALL[page])]
PYTEST = [page for page in PAGES if any(b.kind == "pytest" for b in ALL[page])]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", RUN, ids=page_id)
def test_the_examples_of_a_page_run(page: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    try:
        for block in ALL[page]:
            if block.kind == "run":
                exec(compiled(block), namespace)
    finally:
        close_all(namespace)


@pytest.mark.parametrize("page", PYTEST, ids=page_id)
def test_the_pytest_files_of_a_page_pass(page: Path, tmp_path: Path) -> None:
    for block in ALL[page]:
        if block.kind == "pytest":
            assert not (tmp_path / block.title).exists(), f"{block.where}: two {block.title}"
            (tmp_path / block.title).write_text(block.code, encoding="utf-8")
    run_pytest(tmp_path, timeout=300)


def test_fragments_compile() -> None:
    broken = []
    for page in PAGES:
        for block in ALL[page]:
            if block.kind == "norun":
                try:
                    compiled(block)
                except SyntaxError as e:
                    broken.append(f"{block.where}: {e.msg}")
    assert broken == []


def test_the_docs_have_examples_to_run() -> None:
    # A change to the fences' spelling must not quietly turn every example into text.
    runnable = [b for page in PAGES for b in ALL[page] if b.kind in ("run", "pytest")]
    assert len(runnable) >= 40
    for guide in ("getting-started.md", "client.md", "testing.md", "errors.md"):
        assert DOCS / guide in RUN


def test_the_readme_is_a_landing_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "\n## Install\n" in text
    assert "make demo" in text and "make test" in text


def test_the_package_index_page_is_the_readme_with_links_that_work_there() -> None:
    # PYPI.md is pyproject's readme: made from README.md (tools/index_page.py), its links
    # absolute into the repository, the clone's commands said as what they are for.
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import index_page
    finally:
        sys.path.remove(str(ROOT / "tools"))
    page = (ROOT / "PYPI.md").read_text(encoding="utf-8")
    source = index_page.source_url()
    assert page == index_page.make(README.read_text(encoding="utf-8"), source)
    assert index_page.problems(page, source) == []
    assert "## Two commands" not in page and "From a clone of [the repository]" in page
    # The check finds what a package index would break on.
    nowhere = f"{source}/blob/main/nope.md"
    broken = f"{page}\nSee [the changelog](CHANGELOG.md) and [this]({nowhere}).\n"
    assert [p.split(":")[0] for p in index_page.problems(broken, source)] == [
        "relative link CHANGELOG.md",
        source.split(":")[0],
    ]


def test_the_readme_links_into_the_docs() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#[^)]*)?\)", text)
    assert any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


# A relative path a page names, as a Markdown link or in code spans: `docs/x.md`, `../y`.
LINK = re.compile(r"\]\(((?!https?:|mailto:|#)[^)#\s]+)(?:#[^)]*)?\)")
CODE_PATH = re.compile(r"`(\.\./[^`\s]+)`")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_points_only_into_the_repository_or_to_public_addresses(page: Path) -> None:
    # A reader of the README on a package index, or of the site, has the repository and the
    # web, nothing beside them: a path out of the repository is a dead end for them.
    text = page.read_text(encoding="utf-8")
    outside = []
    for target in LINK.findall(text) + CODE_PATH.findall(text):
        resolved = (page.parent / target).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            outside.append(target)
    assert outside == [], f"{page.relative_to(ROOT)} points outside the repository: {outside}"


def test_the_admin_api_page_documents_every_route() -> None:
    # Someone driving the emulator from another language works from that page.
    with Emulator() as emu:
        operations = emu._call("operations")
    page = (DOCS / "admin-api.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,4} `(\w+)`", page, flags=re.MULTILINE))
    assert sorted(set(operations) - headings) == []
    assert sorted(headings - set(operations)) == []
