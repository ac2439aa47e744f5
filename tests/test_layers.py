"""The package's layers (docs/developing.md, "The layers"): each folder one layer, imports
only downward, no cycle, and no import of the package's own modules inside a function
except where import time needs it.  Read from the source with ``ast``, so a change that
breaks the rule fails here, not in a review."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skrank"

#: Bottom to top.  A module's layer is the first prefix that matches its dotted name;
#: everything else in the package is a face (the public modules and their helpers).
LAYERS = (
    ("core", ("skrank._core",)),
    ("engine", ("skrank._engine",)),
    ("io", ("skrank.io",)),
    ("trec", ("skrank._trec",)),
    ("declare", ("skrank._declare",)),
    ("plan", ("skrank._plan",)),
)
FACES = len(LAYERS)

#: Faces that import skrank's own modules inside functions, and why: the import time of
#: ``import skrank`` and of the command line (tests/test_import_cost.py measures both).
LAZY_IMPORTERS = {
    "skrank": "public names loaded on first use (scikit-learn, scipy.stats, matplotlib)",
    "skrank.cli": "each subcommand imports only what it runs (start-up time of `skrank`)",
}

#: Faces that are imported inside functions wherever they are used: importing them
#: imports a heavy dependency that `import skrank` must not pay for
#: (tests/test_import_cost.py).
LAZY_TARGETS = {
    "skrank._scorer": "scikit-learn",
    "skrank.model_selection": "scikit-learn",
    "skrank.rankers": "scikit-learn",
    "skrank._demo": "scikit-learn",
    "skrank._compare": "scipy.special (scipy.stats on first use)",
    "skrank._paired_tests": "scipy.special (scipy.stats on first use)",
    "skrank._uncertainty": "scipy.special, through the paired tests",
    "skrank.torch": "torch",
    "skrank.gbdt": "XGBoost, LightGBM or CatBoost, when a metric is built",
    "skrank.plot": "matplotlib (and scipy.stats)",
    "skrank.dask": "dask",
}


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module):
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    return FACES


def _imports(path):
    """(imported skrank module, line, inside a function) for each import of the file."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".")
                    base = base if is_package else base[:-1]
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target == "skrank" or target.startswith("skrank."):
                    for alias in child.names:  # `from . import io` imports a module
                        sub = f"{target}.{alias.name}"
                        found.append((sub if _exists(sub) else target, child.lineno, inner))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "skrank" or alias.name.startswith("skrank."):
                        found.append((alias.name, child.lineno, inner))
            visit(child, inner)

    visit(tree, False)
    return module, found


def _exists(module):
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists() \
        or any(path.parent.glob(path.name + ".*.so")) or path.with_suffix(".c").exists()


def _all_imports():
    return [_imports(path) for path in sorted(PACKAGE.rglob("*.py"))]


def test_layers_are_what_the_guide_draws():
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            assert any(m == prefix or m.startswith(prefix + ".") for m in modules), prefix


def test_imports_only_go_down():
    upward = []
    for module, imports in _all_imports():
        for target, line, _ in imports:
            if _layer(target) > _layer(module):
                upward.append(f"{module}:{line} imports {target} "
                              f"({LAYERS[_layer(module)][0]} -> "
                              f"{'faces' if _layer(target) == FACES else LAYERS[_layer(target)][0]})")
    assert not upward, "imports from a lower layer up:\n" + "\n".join(upward)


def test_no_import_cycle():
    graph = {}
    for module, imports in _all_imports():
        graph.setdefault(module, set()).update(t for t, _, _ in imports if t != module)
    # The package's __init__ is imported by every submodule's import: not an edge.
    for targets in graph.values():
        targets.discard("skrank")
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def strongly_connected(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                strongly_connected(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongly_connected(node)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_own_modules_are_imported_at_the_top():
    inside = [f"{module}:{line} imports {target} inside a function"
              for module, imports in _all_imports() if module not in LAZY_IMPORTERS
              for target, line, in_function in imports
              if in_function and target not in LAZY_TARGETS]
    assert not inside, ("import skrank's own modules at the top of the module (or add the "
                        "module to LAZY_IMPORTERS with the import time that needs it):\n"
                        + "\n".join(inside))


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: _module_name(p))
def test_no_file_over_800_lines(path):
    n_lines = len(path.read_text().splitlines())
    assert n_lines <= 850, f"{path.name} has {n_lines} lines: split it along its jobs"


#: The touches of scikit-learn's internals that make skrank's names ``scoring=`` strings,
#: and the one module allowed to make them (docs/developing.md, "Scorer names").
SKLEARN_REGISTRATION = "skrank._sklearn_registration"
SKLEARN_TOUCHES = ("_SCORERS", "StrOptions", "is_satisfied_by", "sklearn.metrics._scorer",
                   "meta_path")


def _code_words(path):
    """(line, text) of every name, attribute, imported module and string constant of the
    file's code (docstrings and comments are prose, not touches)."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, f"{node.module}." + " ".join(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            yield node.lineno, " ".join(a.name for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.lineno, node.value


def test_sklearn_internals_are_touched_in_one_module():
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == SKLEARN_REGISTRATION:
            continue
        outside += [f"{module}:{line} touches {touch}" for line, text in _code_words(path)
                    for touch in SKLEARN_TOUCHES if touch in text]
    assert not outside, "\n".join(outside)
    touched = {t for _, text in _code_words(PACKAGE / "_sklearn_registration.py")
               for t in SKLEARN_TOUCHES if t in text}
    assert touched == set(SKLEARN_TOUCHES)  # the list names what the module does


#: Code lines (after the docstring) above which a function says why it is long.
LONG_FUNCTION = 80


def test_long_functions_say_why():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node) or ""
            first = node.body[1] if doc and len(node.body) > 1 else node.body[0]
            n_lines = node.end_lineno - first.lineno + 1
            if n_lines > LONG_FUNCTION and "Long because" not in doc:
                long.append(f"{_module_name(path)}.{node.name} ({n_lines} lines, line "
                            f"{node.lineno})")
    assert not long, (f"split these functions, or say in their docstring why they are long "
                      f"('Long because ...'):\n" + "\n".join(long))


def test_metric_kernels_never_branch_on_the_array_namespace():
    """Host and device behind one interface (issue 24): the metric kernels read the
    ranking's methods and the engine's namespace-agnostic helpers only, so no kernel
    names NumPy, a namespace or a ranking's ``xp``."""
    tree = ast.parse((PACKAGE / "_engine" / "measures.py").read_text())
    named = sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
                   | {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)})
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    assert not {"np", "numpy", "xp", "namespace"} & (set(named) | imported), named
    strings = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert "xp" not in strings   # getattr(ranking, "xp", ...)
