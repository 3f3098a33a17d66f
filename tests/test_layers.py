"""The layers import only downward, and nothing above the engines imports a particular game.

Layers, bottom to top: utilities (cards, paths, threads, environment, yamlfile, outputs, provenance) -> games ->
agents -> encoders -> config -> learn -> evaluate -> app (training, cli, params, tune, play, report, track,
simulate, bench, serve) -> pipeline. Every import counts, at module level or inside a function: a lazy
import is still a dependency (the review found agents -> learn and learn <-> evaluate that way).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = [
    ("climbrl", "climbrl.cards", "climbrl.paths", "climbrl.threads", "climbrl.environment", "climbrl.stage_times",
     "climbrl.yamlfile", "climbrl.outputs", "climbrl.cluster",
     "climbrl.provenance"),
    ("climbrl.games",),
    ("climbrl.agents",),
    ("climbrl.encoders",),
    ("climbrl.config",),
    ("climbrl.learn",),
    ("climbrl.evaluate",),
    ("climbrl.training", "climbrl.cli", "climbrl.params", "climbrl.tune", "climbrl.play", "climbrl.report",
     "climbrl.track", "climbrl.simulate", "climbrl.bench", "climbrl.serve"),
    ("pipeline",),
]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT / "src") if path.is_relative_to(ROOT / "src") else path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module: str) -> int:
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > depth and (p != "climbrl" or module == p):
                best, depth = i, len(p)
    if best < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return best


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return [(n, m) for n, m in out if m == "climbrl" or m.startswith(("climbrl.", "pipeline"))]


def _sources() -> list[Path]:
    return sorted([*(ROOT / "src" / "climbrl").rglob("*.py"), *(ROOT / "pipeline").glob("*.py")])


def _graph() -> dict[str, set[str]]:
    names = {_module_name(p) for p in _sources()}
    graph: dict[str, set[str]] = {}
    for p in _sources():
        deps = set()
        for _, m in _imports(p):
            while m not in names and "." in m:
                m = m.rsplit(".", 1)[0]
            if m in names:
                deps.add(m)
        graph[_module_name(p)] = deps - {_module_name(p)}
    return graph


def test_every_import_goes_down_or_stays_in_its_layer() -> None:
    bad = []
    for p in _sources():
        mod = _module_name(p)
        for line, m in _imports(p):
            if _layer(m) > _layer(mod):
                bad.append(f"{p.relative_to(ROOT)}:{line} imports {m} (layer {_layer(m)} above {_layer(mod)})")
    assert not bad, "\n".join(bad)


def test_no_import_cycles_between_modules() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, [*stack, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    # a package's __init__ re-exporting its own modules is no cycle of behaviour
    real = [c for c in cycles
            if not any(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(c, c[1:], strict=False))]
    assert not real, "\n".join(" -> ".join(c) for c in real)


@pytest.mark.parametrize("package", ["climbrl.learn", "climbrl.agents.runner", "climbrl.agents.base",
                                     "climbrl.agents.baselines", "climbrl.evaluate"])
def test_learners_runner_and_evaluation_name_no_particular_game(package: str) -> None:
    """They reach a game through the protocol and the registry (``make_game("big2:paper")``),
    never through a game's own modules; the interpretability windows are the exception (each
    reads its game's combinations, and refuses other games)."""
    exempt = {"climbrl.evaluate.behaviour", "climbrl.evaluate.behaviour_ddz"}
    bad = []
    for p in _sources():
        mod = _module_name(p)
        if not (mod == package or mod.startswith(package + ".")) or mod in exempt:
            continue
        for line, m in _imports(p):
            if m.startswith(("climbrl.games.big2", "climbrl.games.doudizhu", "climbrl.encoders.big2",
                             "climbrl.encoders.doudizhu")):
                bad.append(f"{p.relative_to(ROOT)}:{line} imports {m}")
    assert not bad, "\n".join(bad)


def test_the_layer_test_catches_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a function-level import of a higher layer is found."""
    src = tmp_path / "x.py"
    src.write_text("def f():\n    from climbrl.learn.policy import PolicyAgent\n")
    assert _imports(src) == [(2, "climbrl.learn.policy")]
    assert _layer("climbrl.learn.policy") > _layer("climbrl.agents.registry")
