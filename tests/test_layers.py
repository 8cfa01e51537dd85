"""The import rule (ARCHITECTURE.md, "Layers"): every import inside the package points down, none forms a cycle.

Imports are read from the source with `ast`, function-local ones included: a local import that
hides a cycle is a cycle. The folder codegen/ installs as symgrad.codegen.
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first; a module may import its own layer's modules (without a cycle) and lower layers'.
LAYERS = [
    ("symgrad", "symgrad.dtypes", "symgrad.ir", "symgrad.pytree", "symgrad.tree_util", "symgrad.guards", "symgrad.pickling"),
    ("symgrad.core",),
    ("symgrad.ops",),
    ("symgrad.codegen",),  # backends: the IR and op metadata only
    ("symgrad.numpy_api", "symgrad.scipy", "symgrad.linalg"),
    ("symgrad.tracing", "symgrad.passes", "symgrad.autodiff", "symgrad.control_flow", "symgrad.loop_arrays",
     "symgrad.batching", "symgrad.numpy"),
    ("symgrad.backends", "symgrad.code_cache", "symgrad.compiler", "symgrad.loader", "symgrad.static_args"),
    ("symgrad.transforms", "symgrad.finite_differences", "symgrad.closed_form", "symgrad.custom_derivatives"),
    ("symgrad.eager", "symgrad.autograd"),
    ("symgrad.nn", "symgrad.optim", "symgrad.aot", "symgrad.utils", "symgrad.serialization", "symgrad.distributions"),
    ("symgrad.cli", "symgrad.__main__"),
]
# What the backends may import from symgrad, besides their own modules (and the package's __version__).
BACKEND_DEPENDENCIES = ("symgrad.ir", "symgrad.dtypes", "symgrad.core", "symgrad.ops")


def _modules() -> dict:
    """module name -> (source path, is package), with codegen/ under symgrad.codegen."""
    modules = {}
    for top, prefix in (("symgrad", ["symgrad"]), ("codegen", ["symgrad", "codegen"])):
        for path in (ROOT / top).rglob("*.py"):
            parts = prefix + list(path.relative_to(ROOT / top).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


MODULES = _modules()


def _resolve(name: str):
    """The module of the package `name` denotes (a module, or the module holding the name)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set:
    path, is_package = MODULES[module]
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            # `from . import x` depends on the module x when x is one, else on the module defining x
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found.update(target for target in map(_resolve, names) if target and target != module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _layer(module: str) -> int:
    matches = [(len(prefix), rank) for rank, prefixes in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    assert matches, f"{module} is in no layer of tests/test_layers.py: place it"
    return max(matches)[1]


def _cycles() -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in GRAPH[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                components.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return components


def test_no_import_cycle_inside_the_package():
    assert _cycles() == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    upward = [target for target in GRAPH[module] if _layer(target) > _layer(module)]
    assert upward == [], f"{module} (layer {_layer(module)}) imports a higher layer: {upward}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("symgrad.codegen")))
def test_backends_depend_on_the_ir_and_op_metadata_only(module):
    outside = [target for target in GRAPH[module] if target != "symgrad" and not target.startswith("symgrad.codegen")
               and not any(target == allowed or target.startswith(allowed + ".") for allowed in BACKEND_DEPENDENCIES)]
    assert outside == []


def test_modules_are_imported_by_name_not_reached_through_the_package():
    """`import symgrad` then `symgrad.x.y` would hide a dependency from this test."""
    for module, (path, _) in MODULES.items():
        tree = ast.parse(path.read_text())
        plain = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        assert "symgrad" not in plain, module


def test_backends_are_imported_under_symgrads_own_name():
    """A top-level `codegen` import would load a second copy of the backends (or another distribution's)."""
    for module, (path, _) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            assert not any(name == "codegen" or name.startswith("codegen.") for name in names), module


def test_every_package_is_listed_for_installation():
    """pyproject.toml lists the packages (codegen/ maps to symgrad.codegen): a missing one would be absent
    from a wheel, though an editable install still finds it."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert sorted(listed) == sorted(module for module, (_, is_package) in MODULES.items() if is_package)
