"""The layering check of `make lint` (tools/layers.py): it passes on this tree, and it fails,
naming the files, on each kind of break the codemap (docs/architecture.md) forbids."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "layers.py"


def check(root: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, str(TOOL), "--root", str(root)], capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A small project: the given files, and an empty package beside them."""
    for name, text in {"python/pushwire/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_this_tree_keeps_its_layers() -> None:
    code, out = check(ROOT)
    assert code == 0, out
    assert "no circle, no forbidden edge" in out


# Each break: the files of a small project, and what the check must say of it.
BREAKS = {
    "a mod.rs defining what its children import and importing them": (
        {
            "src/lib.rs": "pub mod emulator;\n",
            "src/emulator/mod.rs": """
                mod engine;
                use engine::tick;
                pub struct State;
                pub fn run() { tick() }
            """,
            "src/emulator/engine.rs": "\nuse super::State;\npub fn tick() { let _s = State; }\n",
        },
        "import circle: src/emulator/engine.rs:2 -> src/emulator/mod.rs:3",
    ),
    "a circle through crate paths": (
        {
            "src/lib.rs": "pub mod model;\npub mod validate;\n",
            "src/model/mod.rs": "pub mod drip;\n",
            "src/model/drip.rs": "pub struct Drip;\npub fn check() { crate::validate::drip(); }\n",
            "src/validate.rs": "use crate::model::drip::Drip;\npub fn drip() { let _ = Drip; }\n",
        },
        "import circle: src/model/drip.rs:2 -> src/validate.rs:1 -> src/model/drip.rs",
    ),
    "the emulator importing the client": (
        {
            "src/lib.rs": "pub mod client;\npub mod emulator;\n",
            "src/client.rs": "pub struct Transport;\n",
            "src/emulator.rs": "use crate::client::Transport;\npub fn serve(_t: Transport) {}\n",
        },
        "src/emulator.rs:1: the `emulator` layer imports `client` (src/client.rs)",
    ),
    "anything importing the glue": (
        {
            "src/lib.rs": "pub mod client;\nmod bindings;\n",
            "src/bindings.rs": "pub fn to_py() {}\n",
            "src/client.rs": "pub fn send() { crate::bindings::to_py() }\n",
        },
        "the `client` layer imports `bindings`",
    ),
    "a Python circle": (
        {
            "src/lib.rs": "",
            "python/pushwire/__init__.py": "from pushwire._bulk import BulkResult\n",
            "python/pushwire/_html.py": "from pushwire import _bulk\n",
            "python/pushwire/_bulk.py": (
                "class BulkResult:\n    def show(self):\n        from pushwire._html import table\n"
            ),
        },
        "python/pushwire/_bulk.py:3 -> python/pushwire/_html.py:1",
    ),
    "the client side importing the testing side": (
        {
            "src/lib.rs": "",
            "python/pushwire/testing.py": "class Emulator: ...\n",
            "python/pushwire/_client.py": "from pushwire.testing import Emulator\n",
        },
        "python/pushwire/_client.py:1: the client side imports the testing side",
    ),
    "a long file not saying why it is one idea": (
        {
            "src/lib.rs": "pub mod big;\n",
            "src/big.rs": "".join(f"pub fn f{i}() {{}}\n" for i in range(650)),
        },
        "src/big.rs: 650 lines, over 600",
    ),
}


@pytest.mark.parametrize("files, said", BREAKS.values(), ids=list(BREAKS))
def test_a_break_fails_the_check_and_is_named(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    code, out = check(tree(tmp_path, files))
    assert code == 1
    assert said in out


def test_a_facade_that_only_declares_and_re_exports_is_no_circle(tmp_path: Path) -> None:
    facade = "mod engine;\nmod state;\npub use engine::tick;\npub use state::*;\n"
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "pub mod emulator;\n",
            "src/emulator/mod.rs": facade,
            "src/emulator/state.rs": "pub struct State;\n",
            "src/emulator/engine.rs": "use super::State;\npub fn tick() { let _s = State; }\n",
        },
    )
    code, out = check(root)
    assert code == 0, out


def test_init_re_exports_and_one_way_imports_are_no_circle(tmp_path: Path) -> None:
    files = BREAKS["a Python circle"][0]
    code, out = check(
        tree(tmp_path, {**files, "python/pushwire/_bulk.py": "class BulkResult: ...\n"})
    )
    assert code == 0, out


def test_a_long_file_passes_once_it_says_why_it_is_one_idea(tmp_path: Path) -> None:
    files = BREAKS["a long file not saying why it is one idea"][0]
    body = "//! One idea: every f, in order.\n" + files["src/big.rs"]
    code, out = check(tree(tmp_path, {**files, "src/big.rs": body}))
    assert code == 0, out
