"""The package's layers: every import, at the top of a module or inside a function, points to
the module's own layer or a lower one, and no two modules import each other through any chain.

Lowest first: the shared vocabulary (errors, input reading, resource limits, domains, parameters,
``where``); the simulator core; statistics and machines; the models; experiments (specs, runs,
fingerprints); the SAN solver; the report; the command line and its progress lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simcore"

LAYERS = [
    {"errors", "inputs", "resources", "vocabulary", "__init__"},
    {"core"},
    {"stats", "topology"},
    {"models"},
    {"experiments"},
    {"san", "calibration"},
    {"report"},
    {"progress", "cli"},
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The simcore modules ``path`` imports, anywhere in it (relative imports resolved)."""
    found, tree = set(), ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("simcore")}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            if module.startswith("simcore"):        # `from pkg import module` reads the module, a name the package
                found |= {f"{module}.{a.name}" if is_module(f"{module}.{a.name}") else module for a in node.names}
    return found


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules and m != name} for name, path in modules.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return next(i for i, names in enumerate(LAYERS) if top in names)


def test_every_top_level_name_has_a_layer():
    tops = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert tops <= set().union(*LAYERS), sorted(tops - set().union(*LAYERS))


def test_no_import_points_to_a_higher_layer():
    upward = sorted(f"{a} -> {b}" for a, targets in graph().items() for b in targets if layer(b) > layer(a))
    assert not upward, upward


def test_no_modules_import_each_other_through_any_chain():
    """Tarjan's strongly connected components of the module graph: every one a single module."""
    edges, index, low, stack, on, cycles = graph(), {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_checks_see_an_upward_import_and_a_circle(tmp_path, monkeypatch):
    """The reader of imports resolves ``from .x import y`` and ``from pkg import module``."""
    pkg = tmp_path / "simcore" / "stats"
    pkg.mkdir(parents=True)
    (tmp_path / "simcore" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from simcore.report import figures, NAME\n")
    (tmp_path / "simcore" / "report").mkdir()
    (tmp_path / "simcore" / "report" / "figures.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert imports(pkg / "a.py") == {"simcore.report", "simcore.report.figures"}
    assert imports(pkg / "__init__.py") == {"simcore.stats.a"}
    assert layer("simcore.report.figures") > layer("simcore.stats.a")
