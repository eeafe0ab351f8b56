"""The package's layers import one way, without cycles, and its modules stay small.

Layers, lowest first: the base modules (errors, defaults, atomic), physics,
engines, references (what the engines are checked against), mcwf (the
trajectory algorithm), run, analysis, circuits (the surface-code memory with leaking data qubits), io, studies,
and the command line
(lru_mps_cli); lru_mps/__init__.py, the front door, re-exports from any of
them.  A module may import from its own layer or any layer below, never
above; function-level imports count too.

The engines are packages: one per engine family (exact, sector, mps), the
shared numerics (common), the per-trajectory policy (auto.py), what the rows of
a trajectory index need from an engine (rows.py) and the Engine protocol
(protocol.py); every engine implements the protocol and names its batched
store.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["base", "physics", "engines", "references", "mcwf", "run", "analysis", "circuits", "io", "studies", "cli"]
BASE = {"lru_mps.errors", "lru_mps.defaults", "lru_mps.atomic"}
#: a loose guard against a module that holds several things: modules are split where a responsibility ends
#: (docs/architecture.md names each room's), not where a line count runs out
MAX_LINES = 800

#: modules allowed past MAX_LINES, each with the reason and its own cap (none: numba kernels that call across
#: files declare it, lru_mps.engines.common.numba_cache, so no compiled module has to stay whole)
LONG_MODULES: dict[str, tuple[int, str]] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "lru_mps").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in (ROOT / "cli").glob("*.py"):
        name = "lru_mps_cli" if path.stem == "__init__" else f"lru_mps_cli.{path.stem}"
        out[name] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int:
    if module == "lru_mps":  # the package's front door may show anything (nothing inside imports it)
        return len(LAYERS)
    if module.startswith("lru_mps_cli"):
        return LAYERS.index("cli")
    if module in BASE:
        return 0
    return LAYERS.index(module.split(".")[1])


def _imports(module: str, path: Path) -> set[str]:
    """The lru_mps modules that ``module`` imports (anywhere in the file), resolved to module names."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names = [stem] + [f"{stem}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name != "lru_mps":
                found.add(name)
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def test_layers_import_one_way():
    upward = [f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps if _layer(d) > _layer(m)]
    assert not upward, "imports against the layer order:\n" + "\n".join(sorted(upward))


def test_no_import_cycles():
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(GRAPH[m]):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_small(module):
    lines = len(MODULES[module].read_text().splitlines())
    cap = LONG_MODULES[module][0] if module in LONG_MODULES else MAX_LINES
    assert lines <= cap, f"{module}: {lines} lines (split it by what it holds)"


def test_long_modules_are_real():
    """Every exemption names a module that exists (a stale one would hide nothing but mislead)."""
    assert set(LONG_MODULES) <= set(MODULES)


#: the engines' subpackages and the modules each must hold
ENGINE_PACKAGES = {
    "lru_mps.engines.common": {"eigen", "arraylib", "probe", "store", "numba_cache"},
    "lru_mps.engines.exact": {"engine", "state", "batch", "feedback", "sorted_basis"},
    "lru_mps.engines.sector": {"engine", "state", "chebyshev", "array_chebyshev", "batch", "kept_basis"},
    "lru_mps.engines.mps": {"engine", "state", "store", "batch", "padded", "tebd", "kernels", "svd", "environments"},
}


def test_engines_are_packages():
    """engines/ holds the Engine protocol, what a trajectory's rows need from an engine (row_states), the auto policy and one
    package per engine family (+ common), nothing else."""
    flat = {m.rpartition(".")[2] for m in MODULES if m.count(".") == 2 and m.startswith("lru_mps.engines.")}
    assert flat == {"protocol", "row_states", "auto", "common", "exact", "sector", "mps"}, flat
    for package, members in ENGINE_PACKAGES.items():
        assert MODULES[package].name == "__init__.py", package
        have = {m.rpartition(".")[2] for m in MODULES if m.rpartition(".")[0] == package}
        assert have == members, (package, have ^ members)
    assert {m for m in MODULES if m.startswith("lru_mps.references")} == {
        "lru_mps.references", "lru_mps.references.lindblad", "lru_mps.references.single_excitation",
        "lru_mps.references.injection", "lru_mps.references.sector_propagation"}


def test_every_engine_implements_the_protocol():
    """exact, sector, mps and auto are Engines and name their batched store themselves."""
    from lru_mps.engines import ENGINES, get_engine
    from lru_mps.engines.common.store import BatchStore
    from lru_mps.engines.protocol import Engine, PropagatingEngine

    for name in ENGINES:
        engine = get_engine(name)
        assert isinstance(engine, Engine), name
        assert name == "auto" or isinstance(engine, PropagatingEngine), name
        store = engine.batch_store()
        assert store is None or (issubclass(store, BatchStore) and issubclass(store.for_backend("torch"), BatchStore))


def test_the_graph_is_real():
    """The checks above see the imports (a walker that found nothing would pass them all)."""
    assert "lru_mps.physics.model" in GRAPH["lru_mps.run.settings"]
    assert "lru_mps.mcwf.loop" in GRAPH["lru_mps.run.trajectories"]
    assert _layer("lru_mps.studies.base") > _layer("lru_mps.run.simulate") > _layer("lru_mps.engines.exact.state")
    assert _layer("lru_mps.mcwf.loop") > _layer("lru_mps.references.lindblad") > _layer("lru_mps.engines.exact.state")
    assert "lru_mps.engines.exact.state" in GRAPH["lru_mps.references.lindblad"]


#: a study passes its computed points as records (a dataclass per point), not as parallel arrays to an assembler
MAX_STUDY_PARAMETERS = 8


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def test_study_functions_take_records_not_argument_lists():
    """No function of the studies takes more than MAX_STUDY_PARAMETERS parameters (self aside)."""
    long = []
    for module, path in _modules().items():
        if not module.startswith("lru_mps.studies"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(_parameters(node)) > MAX_STUDY_PARAMETERS:
                long.append(f"{module}.{node.name} ({len(_parameters(node))} parameters, line {node.lineno})")
    assert not long, long


def test_the_parameter_count_sees_every_kind_of_parameter():
    fn = ast.parse("def f(self, a, /, b, *c, d, **e): pass").body[0]
    assert _parameters(fn) == ["a", "b", "d", "c", "e"]
