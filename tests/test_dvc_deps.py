"""Every DVC stage depends on all of the project code its command imports (review item 7).

A stage whose ``deps`` miss a module it imports (``src/climbrl/cards.py``, imported by the
engine, was missing everywhere) keeps stale results after that module changes. This test finds,
for every stage of every ``dvc.yaml`` in the repository (``foreach`` expanded), the project
files its command imports, and checks that some dep path covers each (a directory covers the
files under it).

How the imports are found: a static walk of the import graph with ``ast``, not a run of the
command (which would train, play or write reports) nor an import of its entry module (which
misses the imports made inside functions, where this project puts each stage's heavy imports).
The walk follows imports of ``climbrl`` and ``pipeline`` modules anywhere in a file, including
inside functions, so it over-approximates: a module counts as a whole. The exception is the
handful of modules through which the commands enter (``DISPATCH``): they hold one function per
stage or subcommand, each importing its own code lazily, so there the walk goes function by
function, following only the branch that the command's first argument selects (the lambda under
that key in a ``{"stage": lambda: ...}`` table, the ``set_defaults(func=...)`` of that
subcommand's parser). Otherwise a change to the report's code would "require" retraining.
"""

from __future__ import annotations

import ast
import shlex
import tomllib
from functools import cache
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"climbrl": REPO / "src", "pipeline": REPO}  # top-level project package -> folder holding it
DISPATCH = {"pipeline.__main__", "pipeline.stages", "pipeline.flows", "climbrl.cli"}
PIPELINES = sorted(p for p in REPO.rglob("dvc.yaml") if not p.relative_to(REPO).parts[0].startswith(".")
                   and ".venv" not in p.parts)
"""Every pipeline of the repository (a new one is checked without being listed here)."""


@cache
def module_file(name: str) -> Path | None:
    """The file of project module ``name`` (a package's ``__init__.py``), None if not a project module."""
    top = name.split(".")[0]
    if top not in ROOTS:
        return None
    base = ROOTS[top].joinpath(*name.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


@cache
def parse(name: str) -> ast.Module:
    return ast.parse(module_file(name).read_text(), filename=str(module_file(name)))


def top_functions(name: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in parse(name).body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def bindings(node: ast.Import | ast.ImportFrom, module: str) -> list[tuple[str, str, str | None]]:
    """(local name, module, attribute or None) for each project name an import statement binds."""
    if isinstance(node, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0], None)
                for a in node.names if module_file(a.name)]
    base = node.module or ""
    if node.level:  # relative: from the importing module's package
        pkg = module.split(".")
        if module_file(module).name != "__init__.py":
            pkg = pkg[:-1]
        base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
    if not module_file(base):
        return []
    return [(a.asname or a.name, f"{base}.{a.name}", None) if module_file(f"{base}.{a.name}")
            else (a.asname or a.name, base, a.name) for a in node.names]


def imported(node: ast.Import | ast.ImportFrom, module: str) -> list[tuple[str, str | None]]:
    """(module, attribute or None) for each project module or name an import statement loads."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names if module_file(a.name)]
    return [(m, attr) for _, m, attr in bindings(node, module)]


def with_parents(name: str) -> set[str]:
    """A module and the packages above it (importing it runs their ``__init__``)."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1) if module_file(".".join(parts[:i]))}


def dispatch_edges(module: str, body: list[ast.stmt], key: str | None) -> set[tuple]:
    """Nodes that statements of dispatch ``module`` lead to, following only the branch for ``key``."""
    aliases = {name: (m, attr) for node in ast.walk(parse(module)) if isinstance(node, ast.Import | ast.ImportFrom)
               for name, m, attr in bindings(node, module)}  # module-level and lazy imports alike
    parsers: dict[str, str] = {}  # variable -> subcommand of `sub.add_parser("name", ...)`
    for node in ast.walk(parse(module)):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "add_parser"
                and node.value.args and isinstance(node.value.args[0], ast.Constant)):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    parsers[t.id] = node.value.args[0].value
    edges: set[tuple] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Dict) and node.keys and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys) and all(
                isinstance(v, ast.Lambda) for v in node.values):
            todo += [v for k, v in zip(node.keys, node.values, strict=True) if k.value == key]
            continue
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_defaults"
                and isinstance(node.func.value, ast.Name) and parsers.get(node.func.value.id, key) != key):
            todo += [k.value for k in node.keywords if k.arg != "func"]  # another subcommand's function
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            for m, attr in imported(node, module):
                edges.add(("mod", m))
                if attr and m in DISPATCH and attr in top_functions(m):
                    edges.add(("fn", m, attr))
        elif isinstance(node, ast.Name):
            if node.id in top_functions(module):
                edges.add(("fn", module, node.id))
            elif node.id in aliases:
                m, attr = aliases[node.id]
                if attr and m in DISPATCH and attr in top_functions(m):
                    edges.add(("fn", m, attr))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            m, attr = aliases[node.value.id]
            target = f"{m}.{attr}" if attr else m
            if target in DISPATCH and node.attr in top_functions(target):
                edges.add(("fn", target, node.attr))
        todo += list(ast.iter_child_nodes(node))
    return edges


def reachable_files(entries: set[tuple], key: str | None) -> set[Path]:
    seen: set[tuple] = set()
    todo = list(entries)
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if node[0] == "fn":
            todo.append(("mod", node[1]))
            todo += dispatch_edges(node[1], [top_functions(node[1])[node[2]]], key)
            continue
        name = node[1]
        todo += [("mod", p) for p in with_parents(name)]
        if name in DISPATCH:  # module-level code only (functions are followed one by one)
            body = [s for s in parse(name).body if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
            todo += dispatch_edges(name, body, key)
        else:  # every import anywhere in the file, lazy ones included
            for n in ast.walk(parse(name)):
                if isinstance(n, ast.Import | ast.ImportFrom):
                    todo += [("mod", m) for m, _ in imported(n, name)]
    return {module_file(n[1]) for n in seen if n[0] == "mod"}


def command_entries(cmd: str) -> tuple[set[tuple], str | None]:
    """Entry nodes of a stage command, and the first argument that selects its branch."""
    tok = shlex.split(cmd)
    if tok[:2] == ["python", "-m"]:
        mod, key = tok[2], (tok[3] if len(tok) > 3 else None)
        entries = {("mod", mod)}
        if module_file(mod).name == "__init__.py":
            entries.add(("mod", f"{mod}.__main__"))
        return entries, key
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    if tok[0] in scripts:
        mod, func = scripts[tok[0]].split(":")
        return {("mod", mod), ("fn", mod, func)}, (tok[1] if len(tok) > 1 else None)
    raise AssertionError(f"test_dvc_deps does not know how to find the imports of {cmd!r}: teach it")


def stages() -> list[tuple[str, str, list[Path]]]:
    """(name, command, dep paths resolved from the repository) of every stage, foreach expanded."""
    out = []
    for path in PIPELINES:
        doc = yaml.safe_load(path.read_text())
        variables: dict = {}
        # the pipeline's params files (its vars; without any, DVC reads the params.yaml of its folder)
        for v in doc.get("vars", ["params.yaml"] if (path.parent / "params.yaml").exists() else []):
            variables.update(yaml.safe_load((path.parent / v).read_text()))
        for name, st in doc["stages"].items():
            if "foreach" in st:
                each = st["foreach"]
                if isinstance(each, str) and each.startswith("${") and each.endswith("}"):
                    each = variables[each[2:-1]]
                assert isinstance(each, list | dict), f"{name}: only a list or mapping foreach is handled"
                keys = each if isinstance(each, list) else list(each)
                values = each if isinstance(each, list) else list(each.values())
                items = [(f"{name}@{key}", {k: _sub(_sub(v, i), key, "key") for k, v in st["do"].items()})
                         for key, i in zip(keys, values, strict=True)]
            else:
                items = [(name, st)]
            for label, s in items:
                wdir = (path.parent / s.get("wdir", ".")).resolve()
                out.append((f"{path.relative_to(REPO)}:{label}", s["cmd"], [wdir / d for d in s.get("deps", [])]))
    return out


def _sub(value, item, name: str = "item"):
    """``value`` with DVC's ``${item}`` (a list item) or ``${item.field}`` (a mapping item, nested
    fields too) filled in; ``name="key"``: the ``${key}`` of a mapping's foreach."""
    if isinstance(value, str):
        if isinstance(item, dict):
            for k, v in _flat(item).items():
                value = value.replace(f"${{{name}.{k}}}", str(v))
            return value
        return value.replace(f"${{{name}}}", str(item))
    if isinstance(value, list):
        return [_sub(v, item, name) for v in value]
    if isinstance(value, dict):
        return {_sub(k, item, name): _sub(v, item, name) for k, v in value.items()}
    return value


def _flat(item: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in item.items():
        out[prefix + k] = v
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
    return out


def covered(f: Path, deps: list[Path]) -> bool:
    return any(f == d or d in f.parents for d in deps)


@pytest.mark.parametrize("stage", stages(), ids=lambda s: s[0])
def test_every_stage_depends_on_the_project_code_its_command_imports(stage) -> None:
    name, cmd, deps = stage
    entries, key = command_entries(cmd)
    files = reachable_files(entries, key)
    missing = sorted(str(f.relative_to(REPO)) for f in files if not covered(f, deps))
    assert not missing, f"{name} ({cmd}) imports project files none of its deps cover: {missing}"


def test_the_import_walk_follows_only_the_selected_branch() -> None:
    """The walk is precise where it must be (else every stage would depend on everything) and
    complete where it must be (lazy imports inside functions count)."""
    train = {str(f.relative_to(REPO)) for f in reachable_files(*command_entries("python -m pipeline train ppo"))}
    assert "src/climbrl/learn/train.py" in train  # imported inside stages.train_learner
    assert "src/climbrl/cards.py" in train  # imported by the engine, several levels down
    assert "src/climbrl/report.py" not in train  # only the report stage's function imports it
    sim = {str(f.relative_to(REPO)) for f in reachable_files(*command_entries("climbrl simulate --rules paper"))}
    assert "src/climbrl/simulate.py" in sim and "src/climbrl/tune.py" not in sim
    assert not any(f.startswith("pipeline/") for f in sim)


@pytest.mark.parametrize("cmd", ["python -m pipeline train ppo", "python -m pipeline.ablation entropy",
                                 "python -m pipeline.seeds run", "climbrl baselines --games 10"])
def test_the_static_walk_finds_every_module_that_importing_the_entry_loads(cmd) -> None:
    """A cross-check of the walker against Python itself: importing the command's entry module
    (its eager imports, without running it) loads no project file that the walk missed."""
    import os
    import subprocess
    import sys

    entries, key = command_entries(cmd)
    modules = sorted({n[1] for n in entries if n[0] == "mod"})
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print('\\n'.join(sorted(str(getattr(m, '__file__', None)) for m in list(sys.modules.values()))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=True)
    loaded = {Path(line).resolve() for line in out.stdout.split("\n") if line.endswith(".py")}
    project = {f for f in loaded if any(r in f.parents for r in (REPO / "src" / "climbrl", REPO / "pipeline"))}
    assert project, "the entry module loaded no project file: the cross-check checks nothing"
    assert project <= reachable_files(entries, key), sorted(str(f) for f in project - reachable_files(entries, key))
