"""Sphinx extension: the API reference, generated from the public names at build time.

The pages under ``docs/api/`` are written when the build starts (before autosummary
generates one stub page per name), from

* ``skrank.__all__``, and
* the ``__all__`` of every public module of the package: every module found by
  walking ``skrank``'s package path whose dotted name has no part starting with an
  underscore.

So a new public module, or a new name in an ``__all__``, gets its reference page
without any edit to the docs; a module moved between private files changes nothing
here (only public paths are ever written).  A public module without ``__all__`` is
left out and said so in the build log (``skrank.cli`` is the command line, whose
reference is ``skrank --help``).  A public module that cannot be imported fails the
build (a warning under ``-W``): its pages would be missing.  If it needs an
optional package, add that package to the ``docs`` extra in ``pyproject.toml``.

A public function without an ``Examples`` section is a build warning too: every
function's page shows a runnable example (pytest runs them as doctests).

``docs/api/`` is generated: it is in ``.gitignore`` and rewritten on each build
(a file is only written when its text changes, so incremental builds stay
incremental).
"""

import importlib
import inspect
import pkgutil
from pathlib import Path

PACKAGE = "skrank"
API_DIR = "api"

_TITLES = {
    PACKAGE: "Top-level functions and classes",
}


def _is_public(dotted):
    return not any(part.startswith("_") for part in dotted.split("."))


def public_modules(package=PACKAGE):
    """``[(dotted name, module or None, error or None)]``: the package, then each public
    submodule in name order."""
    root = importlib.import_module(package)
    found = [(package, root, None)]
    failed = []

    def onerror(name):  # a subpackage that failed to import while walking
        if _is_public(name):
            failed.append(name)

    names = sorted(
        info.name for info in pkgutil.walk_packages(root.__path__, package + ".", onerror=onerror)
        if _is_public(info.name)
    )
    for name in sorted(set(names) | set(failed)):
        try:
            found.append((name, importlib.import_module(name), None))
        except Exception as exc:  # noqa: BLE001 - reported as a build warning
            found.append((name, None, exc))
    return found


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def functions_without_examples(module):
    """Names of the module's public functions whose docstring has no Examples section
    (their examples run as doctests: pytest runs ``--doctest-modules`` over skrank/)."""
    from numpydoc.docscrape import NumpyDocString

    found = []
    for public in module.__all__:
        try:
            obj = getattr(module, public, None)
        except ImportError:  # reported by generate()
            continue
        if _kind(obj) == "function" and not NumpyDocString(inspect.getdoc(obj) or "")["Examples"]:
            found.append(public)
    return found


def _module_page(name, module):
    title = f"``{name}``"
    lines = [f".. _api-{name}:", "", title, "=" * len(title), ""]
    summary = _TITLES.get(name)
    if summary:
        lines += [summary + ".", ""]
    # The module docstring (its members are listed below, one page each).
    lines += [f".. automodule:: {name}", "   :no-members:", "", f".. currentmodule:: {name}", ""]
    groups = {"function": [], "class": [], "data": []}
    for public in sorted(module.__all__, key=str.lower):
        try:
            kind = _kind(getattr(module, public))
        except ImportError:  # reported by generate(); listed as a class (its usual kind)
            kind = "class"
        groups[kind].append(public)
    headings = {"function": "Functions", "class": "Classes", "data": "Data"}
    for kind in ("function", "class", "data"):
        if not groups[kind]:
            continue
        lines += [headings[kind], "-" * len(headings[kind]), "",
                  # the stub pages' templates: docs/_templates/autosummary/<kind>.rst
                  ".. autosummary::", "   :toctree: generated/", "",
                  *(f"   {n}" for n in groups[kind]), ""]
    return "\n".join(lines)


def _index_page(documented):
    lines = [
        ".. _api:", "", "API reference", "=============", "",
        "Every public name of skrank: ``skrank.__all__`` and the ``__all__`` of each public",
        "module, one page per name (generated at build time from the package itself).", "",
        ".. toctree::", "   :maxdepth: 2", "", *(f"   {name}" for name in documented), "",
    ]
    return "\n".join(lines)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app, config=None):
    try:  # imported here: the generator runs without Sphinx too (tests/test_docs_site.py)
        from sphinx.util import logging
    except ImportError:  # pragma: no cover - depends on the environment
        import logging
    logger = logging.getLogger(__name__)
    out = Path(app.srcdir) / API_DIR
    documented = []
    modules = public_modules()
    for name, module, error in modules:
        if error is not None:
            logger.warning(
                "skrank_api: the public module %s cannot be imported (%s: %s); its reference "
                "pages are missing. If it needs an optional package, add that package to the "
                "'docs' extra in pyproject.toml.", name, type(error).__name__, error)
            continue
        if not hasattr(module, "__all__"):
            logger.info("skrank_api: %s has no __all__; left out of the API reference", name)
            continue
        for public in module.__all__:
            try:
                getattr(module, public)
            except AttributeError:
                logger.warning("skrank_api: %s.__all__ names %s, which the module does not "
                               "have", name, public)
            except ImportError as exc:  # a name built on first use from an optional package
                logger.warning("skrank_api: %s.%s cannot be imported (%s); add the package it "
                               "needs to the 'docs' extra in pyproject.toml", name, public, exc)
        for public in functions_without_examples(module):
            logger.warning("skrank_api: %s.%s has no Examples section: every public function "
                           "shows a runnable example on its page", name, public)
        _write(out / f"{name}.rst", _module_page(name, module))
        documented.append(name)
    _write(out / "index.rst", _index_page(documented))
    # Pages of modules that are no longer public (or no longer exist) go away.
    keep = {f"{name}.rst" for name in documented} | {"index.rst"}
    for stale in out.glob("*.rst"):
        if stale.name not in keep:
            stale.unlink()
    generated = out / "generated"
    if generated.is_dir():
        wanted = {f"{mod}.{n}.rst" for mod, module, err in modules
                  if err is None and hasattr(module, "__all__") for n in module.__all__}
        for stale in generated.glob("*.rst"):
            if stale.name not in wanted:
                stale.unlink()


def setup(app):
    # Before Sphinx lists the source files and autosummary generates the stub pages.
    app.connect("config-inited", generate, priority=100)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def result_containers():
    """Dotted public names of the dataclasses and named tuples whose every field is documented in their
    ``Attributes`` section: results returned by skrank (``Evaluation``, ``QueryScores``,
    ...), not built by users, so their constructor parameters are their attributes and
    numpydoc's check for an undocumented parameter (PR01) does not apply.  A field
    missing from the section keeps the check on (and fails the build)."""
    import dataclasses

    from numpydoc.docscrape import NumpyDocString

    names = []
    for modname, module, error in public_modules():
        if error is not None or not hasattr(module, "__all__"):
            continue
        for public in module.__all__:
            try:
                obj = getattr(module, public, None)
            except ImportError:  # reported by generate()
                continue
            if not inspect.isclass(obj):
                continue
            if dataclasses.is_dataclass(obj):
                fields = {f.name for f in dataclasses.fields(obj) if f.init}
            elif issubclass(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
                fields = set(obj._fields)
            else:
                continue
            doc = NumpyDocString(inspect.getdoc(obj) or "")
            documented = {n.strip() for p in doc["Attributes"] for n in p.name.split(",")}
            if fields and fields <= documented:
                names.append(f"{modname}.{public}")
    return sorted(names)
