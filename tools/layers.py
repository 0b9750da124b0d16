"""The layering of docs/architecture.md, checked: `make lint` runs this.

Reads every Rust file under src/ and every module of python/pushwire, builds the graph of
which file imports which, and fails on

- an import circle between files (a `mod.rs`, `lib.rs` or package `__init__.py` that only
  declares modules and re-exports is a facade: an import through it counts as an import of
  the file that defines the name; one that defines items its children import and also
  imports its children is part of a circle like any other file);
- an edge the layers forbid (the table `RUST_LAYERS` below: `model`, `form` and `validate`
  import nothing above them, `client` only those, the emulator never the client, nothing
  the glue; in Python, the client side never imports the testing side);
- a file over `MAX_LINES` lines whose opening comment does not say why it is one idea (the
  words "one idea") or that it is generated.

Why a script and not a tool: cargo-modules (the Rust tool that finds module cycles) builds
rust-analyzer, minutes on this machine for every fresh CI run, and counts module-level
cycles (a `mod.rs` and its children are one module to it); import-linter covers the Python
half only. This reads the sources as text, in well under a second, file by file as the
codemap counts them.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 600
Module = tuple[str, ...]  # a Rust module's path from the crate root

# Each top-level module of the crate, and the top-level modules it may import besides itself.
# The glue (`bindings`) is imported by nobody: it is in no other layer's set.
BOTTOM = {"model", "form", "validate", "operations", "per_process", "file_hold"}
RUST_LAYERS: dict[str, set[str]] = {
    "model": BOTTOM,
    "form": BOTTOM,
    "validate": BOTTOM,
    "operations": BOTTOM,
    "per_process": BOTTOM,
    "file_hold": BOTTOM,
    "client": BOTTOM | {"client"},
    "emulator": BOTTOM | {"emulator"},
    "bindings": BOTTOM | {"client", "emulator", "bindings"},
    # The standalone emulator binary (`pushwire::` is the crate from there).
    "bin": BOTTOM | {"emulator"},
    "": set(),  # lib.rs, the crate root: a facade
}
# Python modules of the testing side; the client side (everything else) never imports them.
PY_TESTING_SIDE = ("pushwire.testing", "pushwire.emulator", "pushwire.pytest_plugin")

ITEM = re.compile(
    r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|async\s+|const\s+|extern\s+\"C\"\s+)*"
    r"(fn|struct|enum|trait|type|const|static|union|impl|macro_rules!)\s*([A-Za-z_]\w*)?",
    re.M,
)
MOD_DECL = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
INLINE_MOD = re.compile(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{")
USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
PATH = re.compile(r"(?<![\w:])((?:crate|super|self|pushwire|[a-z_]\w*)(?:::(?:[A-Za-z_]\w*|\*))+)")
MACRO_EXPORT = re.compile(r"#\[macro_export\]\s*macro_rules!\s*(\w+)")


def strip_rust(text: str) -> str:
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif (m := re.match(r'b?r(#*)"', text[i:])) and (i == 0 or not text[i - 1].isalnum()):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and (m := re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])):
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(tree: str) -> list[str]:
    """`a::{b, c::{d, e as f}, *}` as the paths it names: a::b, a::c::d, a::c::e, a::*."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    paths: list[str] = []

    def walk(prefix: str, s: str) -> None:
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for part in filter(None, parts):
            if "{" in part:
                head, _, rest = part.partition("{")
                walk(prefix + head, rest[: rest.rfind("}")])
            else:
                full = prefix + part
                paths.append(full[:-6] if full.endswith("::self") else full)

    walk("", tree)
    return paths


@dataclass
class RustFile:
    path: Path
    module: tuple[str, ...]
    text: str
    items: set[str] = field(default_factory=set)
    children: set[str] = field(default_factory=set)
    facade: bool = True
    reexports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    globs: list[tuple[str, ...]] = field(default_factory=list)
    refs: list[tuple[tuple[str, ...], int]] = field(default_factory=list)


def rust_module(src: Path, path: Path) -> tuple[str, ...]:
    rel = path.relative_to(src).with_suffix("")
    parts = rel.parts
    if parts[0] == "bin":
        return ("bin", *parts[1:])
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def read_rust(src: Path) -> dict[tuple[str, ...], RustFile]:
    files: dict[tuple[str, ...], RustFile] = {}
    for path in sorted(src.rglob("*.rs")):
        text = strip_rust(path.read_text())
        f = RustFile(path, rust_module(src, path), text)
        f.children = set(MOD_DECL.findall(text))
        for _kind, name in ITEM.findall(text):
            f.facade = False
            if name:
                f.items.add(name)
        f.items |= set(INLINE_MOD.findall(text))
        if INLINE_MOD.search(text):
            f.facade = False
        files[f.module] = f
    return files


def scopes(text: str, module: tuple[str, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """(offset, module path in force from there) as inline `mod x { ... }` blocks open and close."""
    out = [(0, module)]
    stack: list[tuple[int, tuple[str, ...]]] = []
    depth, current = 0, module
    opens = {m.end() - 1: m.group(1) for m in INLINE_MOD.finditer(text)}
    for k, ch in enumerate(text):
        if ch == "{":
            depth += 1
            if k in opens:
                stack.append((depth, current))
                current = (*current, opens[k])
                out.append((k, current))
        elif ch == "}":
            if stack and stack[-1][0] == depth:
                current = stack.pop()[1]
                out.append((k, current))
            depth -= 1
    return out


def absolute(path: str, here: tuple[str, ...], f: RustFile) -> tuple[str, ...] | None:
    parts = path.split("::")
    head = parts[0]
    if head in ("crate", "pushwire"):
        return tuple(parts[1:])
    base = list(here)
    if head == "self":
        return (*base, *parts[1:])
    if head == "super":
        while parts and parts[0] == "super":
            if not base:
                return None
            base.pop()
            parts = parts[1:]
        return (*base, *parts)
    if head in f.children or (here != f.module and head in f.items):
        return (*here, *parts)
    return None  # another crate, or a name brought in by a `use` already counted


def collect_rust_refs(files: dict[tuple[str, ...], RustFile]) -> None:
    macros: dict[str, tuple[str, ...]] = {}
    for f in files.values():
        for name in MACRO_EXPORT.findall(f.path.read_text()):
            macros[name] = f.module
    for f in files.values():
        marks = scopes(f.text, f.module)

        def here_at(
            offset: int, marks: list[tuple[int, tuple[str, ...]]] = marks
        ) -> tuple[str, ...]:
            cur = marks[0][1]
            for pos, mod in marks:
                if pos > offset:
                    break
                cur = mod
            return cur

        used = []
        for m in USE.finditer(f.text):
            line = f.text.count("\n", 0, m.start()) + 1
            here = here_at(m.start())
            for p in expand_use(m.group(2)):
                head = p.split("::")[0]
                if head in macros and "::" not in p:
                    f.refs.append((macros[head], line))
                    continue
                full = absolute(p, here, f)
                if full is None:
                    continue
                f.refs.append((full, line))
                if m.group(1) and here == f.module:
                    if full[-1] == "*":
                        f.globs.append(full[:-1])
                    else:
                        f.reexports[full[-1]] = full
            used.append((m.start(), m.end()))
        for m in PATH.finditer(f.text):
            if any(a <= m.start() < b for a, b in used):
                continue
            full = absolute(m.group(1), here_at(m.start()), f)
            if full is not None:
                f.refs.append((full, f.text.count("\n", 0, m.start()) + 1))
        for name, mod in macros.items():
            if mod != f.module and re.search(rf"(?<![\w:]){name}!", f.text):
                f.refs.append((mod, 1))


def resolve_rust(
    files: dict[tuple[str, ...], RustFile],
    path: tuple[str, ...],
    seen: frozenset[tuple[str, ...]] = frozenset(),
) -> tuple[str, ...] | None:
    """The module of the file that defines what `path` names; through facades' re-exports."""
    path = tuple(p for p in path if p != "*")
    for k in range(len(path), -1, -1):
        if path[:k] in files:
            mod, rest = path[:k], path[k:]
            break
    else:
        return None
    f = files[mod]
    if not f.facade:
        return mod
    if not rest or path in seen:
        return None  # a facade itself names nothing
    seen = seen | {path}
    if rest[0] in f.reexports:
        return resolve_rust(files, f.reexports[rest[0]] + rest[1:], seen)
    for glob in f.globs:
        target = resolve_rust(files, (*glob, *rest), seen)
        if target is not None and rest[0] in files[target].items | files[target].children:
            return target
    return None


def rust_layer(module: tuple[str, ...]) -> str:
    top = module[0] if module else ""
    return "bindings" if top == "python" else top


@dataclass
class Graph:
    edges: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, a: str, b: str, line: int) -> None:
        if a != b:
            self.edges.setdefault(a, {}).setdefault(b, line)


def rust_graph(root: Path, graph: Graph) -> list[Path]:
    src = root / "src"
    files = read_rust(src)
    collect_rust_refs(files)
    name = {m: str(f.path.relative_to(root)) for m, f in files.items()}
    for mod, f in files.items():
        for ref, line in f.refs:
            target = resolve_rust(files, ref)
            if target is None or target == mod:
                continue
            graph.add(name[mod], name[target], line)
            a, b = rust_layer(mod), rust_layer(target)
            if a != b and b not in RUST_LAYERS.get(a, set()):
                graph.problems.append(
                    f"{name[mod]}:{line}: the `{a or 'crate root'}` layer imports `{b}` "
                    f"({name[target]}); docs/architecture.md forbids it"
                )
    return [f.path for f in files.values()]


def py_graph(root: Path, graph: Graph) -> list[Path]:
    pkg = root / "python" / "pushwire"
    modules: dict[str, Path] = {}
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        modules[".".join(parts)] = path
    trees = {m: ast.parse(p.read_text()) for m, p in modules.items()}

    def names_of(module: str) -> dict[str, str]:
        """What a package `__init__` imports: name -> the module it comes from."""
        out: dict[str, str] = {}
        for node in ast.walk(trees[module]):
            if isinstance(node, ast.ImportFrom):
                base = absolute_py(module, node, modules)
                for alias in node.names:
                    out[alias.asname or alias.name] = base
        return out

    def target(module: str, base: str, name: str | None, seen: int = 0) -> str | None:
        if name and f"{base}.{name}" in modules:
            return f"{base}.{name}"
        if base not in modules:
            return None
        if modules[base].name == "__init__.py" and name and seen < 8:
            origin = names_of(base).get(name)
            if origin is not None and origin != base:
                found = target(module, origin, name, seen + 1)
                return found if found is not None else (origin if origin in modules else None)
        return base

    for module, tree in trees.items():
        for node in ast.walk(tree):
            found: list[tuple[str, str | None]] = []
            if isinstance(node, ast.Import):
                found = [(a.name, None) for a in node.names if a.name.startswith("pushwire")]
            elif isinstance(node, ast.ImportFrom):
                base = absolute_py(module, node, modules)
                if base.startswith("pushwire"):
                    found = [(base, a.name) for a in node.names]
            for base, name in found:
                t = target(module, base, name)
                if t is None or t == module:
                    continue
                a, b = str(modules[module].relative_to(root)), str(modules[t].relative_to(root))
                graph.add(a, b, node.lineno)
                if not module.startswith(PY_TESTING_SIDE) and t.startswith(PY_TESTING_SIDE):
                    graph.problems.append(
                        f"{a}:{node.lineno}: the client side imports the testing side ({b}); "
                        "docs/architecture.md forbids it"
                    )
    return list(modules.values())


def absolute_py(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    is_pkg = modules[module].name == "__init__.py"
    parts = module.split(".")
    parts = parts[: len(parts) - node.level + (1 if is_pkg else 0)]
    return ".".join(parts + ([node.module] if node.module else []))


def circles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected set of more than one file (Tarjan), as one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    nodes = set(edges) | {b for bs in edges.values() for b in bs}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(cycle_in(set(comp), edges))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def cycle_in(comp: set[str], edges: dict[str, dict[str, int]]) -> list[str]:
    start = min(comp)
    prev: dict[str, str] = {}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, {})):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w in comp and w not in prev:
                prev[w] = v
                queue.append(w)
    return sorted(comp)


def long_files(root: Path, paths: Iterable[Path]) -> list[str]:
    out = []
    extra = [
        *(root / "src").rglob("*.html"),
        *(root / "src").rglob("*.js"),
        *(root / "src").rglob("*.css"),
    ]
    extra += list((root / "python" / "pushwire").rglob("*.pyi"))
    for path in [*paths, *extra]:
        lines = path.read_text().splitlines()
        if len(lines) <= MAX_LINES:
            continue
        opening = " ".join(lines[:15]).lower()
        if "one idea" not in opening and "generated" not in opening:
            out.append(
                f"{path.relative_to(root)}: {len(lines)} lines, over {MAX_LINES}, and its opening "
                "comment does not say why it is one idea"
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--graph", action="store_true", help="print every file-to-file edge")
    args = ap.parse_args()
    graph = Graph()
    paths = rust_graph(args.root, graph) + py_graph(args.root, graph)
    if args.graph:
        for a in sorted(graph.edges):
            for b, line in sorted(graph.edges[a].items()):
                print(f"{a}:{line} -> {b}")
    problems = list(graph.problems)
    for cycle in circles(graph.edges):
        steps = [f"{a}:{graph.edges[a][b]}" for a, b in zip(cycle, cycle[1:])]
        problems.append("import circle: " + " -> ".join([*steps, cycle[-1]]))
    problems += long_files(args.root, paths)
    for p in problems:
        print(p)
    n_edges = sum(len(v) for v in graph.edges.values())
    verdict = f"{len(problems)} problem(s)" if problems else "no circle, no forbidden edge"
    print(f"layers: {len(paths)} files, {n_edges} imports between them: {verdict}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
