"""Checks that each Python resource method and the core function it calls agree.

    python tools/surface.py [ROOT]

Each method of a blocking namespace (``Drips.get``) hands its arguments to the operation's
function of ``pushwire._core`` named after it (``_core.drips_get``), whose signature the stub
``python/pushwire/_core.pyi`` declares and ``mypy.stubtest`` holds to the Rust one (pyo3's
own argument parsing). This reads both statically and checks, for every operation:

- the method calls the function of its own name (``<module>_<method>``; ``request`` for
  ``client.request``), and every operation of the stub is called by a method;
- the method's parameters are the function's, each of the same kind (positional or
  keyword-only), but the call's own options (``**options``, ``timeout``) and those an
  operation folds into one (``notifications.create``'s fields, its ``notification``);
- the call passes the function's positional parameters by position and each keyword-only
  one by keyword, none missing and none more.

The async and raw twins of each method are made from it (``awaitable(Drips.get)``), and a
twin class that leaves one out fails at import. Exits 1 with what disagrees, else 0.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
STUB = ROOT / "python" / "pushwire" / "_core.pyi"
RESOURCES = ROOT / "python" / "pushwire" / "resources"
# Parameters every method may have that are the call's options, not the operation's.
OPTIONS = {"timeout"}
# Method parameters an operation's function takes folded into one of its own: the
# function's parameter, and the method's that go into it (``*`` for all the others).
FOLDED = {
    "notifications_create": ("notification", "*"),
    "notifications_validate": ("notification", "*"),
}
# A function's keyword parameters that the folded argument's value carries, not a parameter of
# the method (``notifications.validate(broadcast)`` passes ``broadcast.send_late``).
CARRIED = {"notifications_validate": {"send_late"}}


def _params(fn: ast.FunctionDef) -> dict[str, str]:
    """A function's parameters by name, each ``positional`` or ``keyword``."""
    out = {a.arg: "positional" for a in fn.args.posonlyargs + fn.args.args}
    out.update({a.arg: "keyword" for a in fn.args.kwonlyargs})
    out.pop("self", None)
    return out


def operations() -> dict[str, dict[str, str]]:
    """The stub's operations: its functions returning a ``PreparedCall``, and the names it
    gives one of them again (``drips_list = triggers_list``: the same signature)."""
    tree = ast.parse(STUB.read_text(), str(STUB))
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef)
            and isinstance(node.returns, ast.Name)
            and node.returns.id == "PreparedCall"
        ):
            out[node.name] = _params(node)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and node.value.id in out
        ):
            out.update({t.id: out[node.value.id] for t in node.targets if isinstance(t, ast.Name)})
    return out


def _core_calls(fn: ast.FunctionDef) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "_core"
    ]


def _is_blocking(cls: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id in ("_Sync", "_RawSync") for b in cls.bases) and (
        not any(k.arg == "twin" for k in cls.keywords)
    )


def check() -> list[str]:
    ops = operations()
    problems: list[str] = []
    used: set[str] = set()
    for path in sorted(RESOURCES.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = path.stem
        tree = ast.parse(path.read_text(), str(path))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and _is_blocking(n)):
            for fn in cls.body:
                if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                    continue
                where = f"{path.relative_to(ROOT)}: {cls.name}.{fn.name}"
                calls = _core_calls(fn)
                if not calls:
                    continue  # a method made of the others (`iter` walks `list`'s pages)
                expected = module if module == fn.name else f"{module}_{fn.name}"
                for call in calls:
                    name = call.func.attr  # type: ignore[attr-defined]
                    used.add(name)
                    if name != expected:
                        problems.append(f"{where} calls _core.{name}, not _core.{expected}")
                        continue
                    if name not in ops:
                        problems.append(f"{where}: _core.pyi declares no operation {name}")
                        continue
                    problems += _agree(where, name, ops[name], _params(fn), call)
    for name in sorted(set(ops) - used):
        problems.append(f"_core.pyi's operation {name} is called by no resource method")
    return problems


def _agree(
    where: str, name: str, core: dict[str, str], method: dict[str, str], call: ast.Call
) -> list[str]:
    problems = []
    folded, into = FOLDED.get(name, (None, ()))
    method = {p: k for p, k in method.items() if p not in OPTIONS}
    carried = CARRIED.get(name, set())
    if folded is not None:
        method = {p: k for p, k in method.items() if p in core and p != folded}
        core = {p: k for p, k in core.items() if p != folded}
    for param in sorted((set(core) - carried) | set(method)):
        if param not in method:
            problems.append(f"{where} has no parameter {param}, which _core.{name} takes")
        elif param not in core:
            problems.append(f"{where}'s parameter {param} does not reach _core.{name}")
        elif core[param] != method[param]:
            problems.append(
                f"{where}'s parameter {param} is {method[param]}, _core.{name}'s {core[param]}"
            )
    if folded is not None:
        core = {**core, folded: "positional"}
    positional = [p for p, k in core.items() if k == "positional"]
    keywords = {p for p, k in core.items() if k == "keyword"}
    given = {k.arg for k in call.keywords if k.arg is not None}
    if len(call.args) != len(positional) or any(isinstance(a, ast.Starred) for a in call.args):
        problems.append(
            f"{where} passes {len(call.args)} positional arguments to _core.{name}, which "
            f"takes {len(positional)} ({', '.join(positional) or 'none'})"
        )
    for missing in sorted(keywords - given):
        problems.append(f"{where} does not pass {missing}= to _core.{name}")
    for extra in sorted(given - keywords):
        problems.append(f"{where} passes {extra}=, which _core.{name} does not take by keyword")
    return problems


def main() -> int:
    problems = check()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"surface: {len(operations())} operations, each method and its core function agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
