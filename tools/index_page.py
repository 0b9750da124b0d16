"""The package index page (PYPI.md, pyproject's `readme`), made from README.md.

    python tools/index_page.py           # writes PYPI.md
    python tools/index_page.py --check   # fails if PYPI.md is not what README.md makes (make lint)

README.md is the repository's page: its links are relative (they work on the forge and in a
clone) and it says how to work in a clone (`make demo`, `make test`). On the package index
neither holds: a relative link is broken there, and a reader who ran `pip install pushwire`
has no Makefile. So the index page is README.md with every relative link made absolute
(into the repository named `Source` in pyproject's `[project.urls]`) and the clone's section
("## Two commands") said as what it is, the way to work on pushwire itself. The check also
fails on any link of PYPI.md that is still relative, or that points into the repository at a
file it does not have.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGE = ROOT / "PYPI.md"

# A Markdown link's target: `](target)`, the target up to a space or the closing parenthesis.
LINK = re.compile(r"\]\(([^)\s]+)\)")
CLONE_SECTION = re.compile(r"^## Two commands\n.*?(?=^## )", re.M | re.S)


def source_url() -> str:
    """`Source` of pyproject's `[project.urls]` (read as text: tomllib is 3.11's, the
    project's tools run on 3.9)."""
    text = (ROOT / "pyproject.toml").read_text()
    urls = text.split("[project.urls]", 1)[1].split("\n[", 1)[0]
    found = re.search(r'^Source\s*=\s*"([^"]+)"', urls, re.M)
    if found is None:
        raise SystemExit("pyproject.toml names no Source in [project.urls]")
    return found.group(1).rstrip("/")


def make(readme: str, source: str) -> str:
    """The index page of `readme`, its links into the repository at `source`."""
    base = f"{source}/blob/main/"

    def absolute(m: re.Match[str]) -> str:
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m.group(0)
        return f"]({base}{target})"

    clone = (
        "## Working on pushwire\n\n"
        f"From a clone of [the repository]({source}), `make demo` runs the quick start "
        "against the embedded emulator and `make test` runs every test; both install what "
        f"they need ([development]({base}docs/development.md)).\n\n"
    )
    page = CLONE_SECTION.sub(lambda _: clone, readme, count=1)
    header = "<!-- Made from README.md by tools/index_page.py: edit README.md, then run it. -->\n"
    return header + LINK.sub(absolute, page)


def problems(page: str, source: str) -> list[str]:
    """Links of `page` a package index reader could not follow."""
    found = []
    base = f"{source}/blob/main/"
    for target in LINK.findall(page):
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
            found.append(f"relative link {target}")
        elif target.startswith(base):
            path = target[len(base) :].split("#", 1)[0]
            if not (ROOT / path).exists():
                found.append(f"{target}: the repository has no {path}")
    return found


def main(argv: list[str]) -> int:
    source = source_url()
    want = make(README.read_text(encoding="utf-8"), source)
    if argv[1:] == ["--check"]:
        have = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        errors = problems(have, source)
        if have != want:
            errors.append("PYPI.md is not what README.md makes: run python tools/index_page.py")
        for e in errors:
            print(f"PYPI.md: {e}", file=sys.stderr)
        return 1 if errors else 0
    PAGE.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
