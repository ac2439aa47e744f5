"""Registering skrank's scorer names with scikit-learn without importing it.

``scoring="ndcg@10"`` needs skrank's names in ``sklearn.metrics._scorer`` (see
:func:`skrank._scorer.register_with_sklearn`).  Importing scikit-learn takes a
second or more (it imports scipy.stats and pandas), which ``import skrank`` must
not cost a user who only computes metrics.  So registration happens now if
scikit-learn's scorer module is already loaded, else right after it loads: an
import hook watches for that one module and removes itself once it has run.
"""

import importlib
import importlib.abc
import sys

_SCORER_MODULE = "sklearn.metrics._scorer"


def _register():
    name = __package__ + "._scorer"
    scorer = sys.modules.get(name)
    if scorer is None:
        importlib.import_module(name)  # registers as it finishes loading
    elif hasattr(scorer, "register_with_sklearn"):
        scorer.register_with_sklearn()
    # else skrank._scorer is what imports scikit-learn: it registers once it has loaded


class _RegisterAfterLoad(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of scikit-learn's scorer module so that
    skrank registers its names as soon as that module has executed."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _SCORER_MODULE:
            return None
        _remove_hook()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_and_register(module):
            exec_module(module)
            _register()

        # Wrap this spec's loader only (a per-module proxy, not the shared class).
        spec.loader = _LoaderProxy(loader, exec_and_register)
        return spec


class _LoaderProxy(importlib.abc.Loader):
    def __init__(self, loader, exec_module):
        self._loader = loader
        self._exec_module = exec_module

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._exec_module(module)

    def __getattr__(self, name):  # get_code, get_source, ... for tools that ask
        return getattr(self._loader, name)


_HOOK = _RegisterAfterLoad()


def _remove_hook():
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass


def register_when_sklearn_scorers_load():
    """Register now if scikit-learn's scorers are loaded, else when they load."""
    if _SCORER_MODULE in sys.modules:
        _register()
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
