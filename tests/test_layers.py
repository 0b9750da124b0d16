"""The layering check of `make lint` (tools/layers.py): it passes on this tree, and it fails,
naming the files, on each kind of break the codemap (docs/architecture.md) forbids."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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


def test_a_mod_rs_that_defines_what_its_children_import_and_imports_them_is_a_circle(
    tmp_path: Path,
) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "pub mod emulator;\n",
            "src/emulator/mod.rs": """
                mod engine;
                use engine::tick;
                pub struct State;
                pub fn run() { tick() }
            """,
            "src/emulator/engine.rs": """
                use super::State;
                pub fn tick() { let _s = State; }
            """,
        },
    )
    code, out = check(root)
    assert code == 1
    assert "import circle: src/emulator/engine.rs:2 -> src/emulator/mod.rs:3" in out


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


def test_a_circle_between_two_files_through_crate_paths_is_named(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "pub mod model;\npub mod validate;\n",
            "src/model/mod.rs": "pub mod drip;\n",
            "src/model/drip.rs": "pub struct Drip;\npub fn check() { crate::validate::drip(); }\n",
            "src/validate.rs": "use crate::model::drip::Drip;\npub fn drip() { let _ = Drip; }\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert "import circle: src/model/drip.rs:2 -> src/validate.rs:1 -> src/model/drip.rs" in out


def test_the_emulator_importing_the_client_is_refused(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "pub mod client;\npub mod emulator;\n",
            "src/client.rs": "pub struct Transport;\n",
            "src/emulator.rs": "use crate::client::Transport;\npub fn serve(_t: Transport) {}\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert "src/emulator.rs:1: the `emulator` layer imports `client` (src/client.rs)" in out


def test_nothing_imports_the_glue(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "pub mod client;\nmod bindings;\n",
            "src/bindings.rs": "pub fn to_py() {}\n",
            "src/client.rs": "pub fn send() { crate::bindings::to_py() }\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert "the `client` layer imports `bindings`" in out


def test_a_python_circle_is_named_and_init_re_exports_are_not_one(tmp_path: Path) -> None:
    files = {
        "src/lib.rs": "",
        "python/pushwire/__init__.py": "from pushwire._bulk import BulkResult\n",
        "python/pushwire/_html.py": "from pushwire import _bulk\n",
        "python/pushwire/_bulk.py": "class BulkResult: ...\n",
    }
    assert check(tree(tmp_path, files))[0] == 0
    (tmp_path / "python/pushwire/_bulk.py").write_text(
        "class BulkResult:\n    def show(self):\n        from pushwire._html import table\n"
    )
    code, out = check(tmp_path)
    assert code == 1
    assert "python/pushwire/_bulk.py:3 -> python/pushwire/_html.py:1" in out


def test_the_client_side_never_imports_the_testing_side(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "",
            "python/pushwire/testing.py": "class Emulator: ...\n",
            "python/pushwire/_client.py": "from pushwire.testing import Emulator\n",
        },
    )
    code, out = check(root)
    assert code == 1
    assert "python/pushwire/_client.py:1: the client side imports the testing side" in out


def test_a_long_file_states_why_it_is_one_idea(tmp_path: Path) -> None:
    body = "".join(f"pub fn f{i}() {{}}\n" for i in range(650))
    root = tree(tmp_path, {"src/lib.rs": "pub mod big;\n", "src/big.rs": body})
    code, out = check(root)
    assert code == 1
    assert "src/big.rs: 650 lines, over 600" in out
    (tmp_path / "src/big.rs").write_text("//! One idea: every f, in order.\n" + body)
    assert check(tmp_path)[0] == 0
