"""The one module that touches scikit-learn's internals: skrank's scorer names as
``scoring=`` strings.

scikit-learn has no public scorer registry: it resolves ``scoring="..."`` in the dict
``sklearn.metrics._scorer._SCORERS`` and validates it against ``StrOptions`` sets of
names frozen when each of its classes and functions is defined.  skrank's names form an
unbounded grammar (``ndcg_exp@37``, ``map(denominator=min)@5``), so no finite set of
entries can hold them.  Four things happen here, and nowhere else in skrank:

1. **An import hook** (:class:`_RegisterAfterLoad`).  ``import skrank`` must not import
   scikit-learn (a second or more: it imports scipy.stats and pandas;
   ``tests/test_import_cost.py``).  So registration happens at ``import skrank`` if
   scikit-learn's scorer module is already loaded, else right after that module
   executes: the hook wraps the loader of that one module and removes itself at once.
2. **The scorer dict** (:class:`_ScorerRegistry`).  ``_SCORERS`` is swapped for a dict
   subclass with the same entries: a missing key that is a valid ranking name builds a
   skrank scorer, so ``sklearn.metrics.get_scorer("ndcg_exp@37")`` works for any cutoff.
   ``recall`` and ``precision`` stay scikit-learn's scorers, wrapped so that a failure on
   ranking data names the skrank spelling.
3. **One method replacement** (``StrOptions.is_satisfied_by``).  A ``StrOptions`` whose
   set holds scikit-learn's scorer names also accepts valid ranking names, whether it was
   made before or after skrank was imported.  Every other ``StrOptions`` and every other
   value gives the original answer: the original method runs first.
4. **The per-call cache** (:func:`sklearn_call_cache`).  With a dict ``scoring=``,
   scikit-learn calls each scorer with a ``functools.partial`` over one cache dict per
   estimator and X.  skrank's scorers of that dict put one entry there, keyed by the
   ``id`` of the fold's arrays (held by the entry, so the ids stay theirs while the cache
   lives), so that they check and rank the fold once for all of them.  Another
   scikit-learn (no such cache) only loses that sharing.

What this changes for everything that is not a ranking name: nothing.  scikit-learn's
names, their scorers, ``get_scorer_names()`` and its error messages for invalid names are
the same before and after the import, in either import order
(``tests/test_scorer.py::test_sklearn_names_scorers_and_messages_unchanged``, run on the
newest and the oldest supported scikit-learn in CI).  If a future scikit-learn moves
these internals, ``import skrank`` still works, one ``RuntimeWarning`` says the strings
are unavailable, and ``skrank.get_scorer(name)`` keeps working.
"""

import functools
import importlib
import importlib.abc
import sys
import warnings

_SCORER_MODULE = "sklearn.metrics._scorer"
_SKRANK_SCORERS = __package__ + "._scorer"

#: Whether skrank's names are registered in the running scikit-learn.
REGISTERED = False


# ---------------------------------------------------------------------------
# 1. Registration when scikit-learn's scorers load.


def register_when_sklearn_scorers_load():
    """Register now if scikit-learn's scorers are loaded, else when they load."""
    if _SCORER_MODULE in sys.modules:
        _register()
    elif _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)


def _register():
    scorers = sys.modules.get(_SKRANK_SCORERS)
    if scorers is None:
        # skrank's scorer module registers its scorers as it finishes loading.  A string
        # import: that module imports this one, and this one runs at ``import skrank``.
        importlib.import_module(_SKRANK_SCORERS)
    elif hasattr(scorers, "register_with_sklearn"):
        scorers.register_with_sklearn()
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


# ---------------------------------------------------------------------------
# 2 and 3. The scorer dict and the scorer-name constraint.


class _ScorerRegistry(dict):
    """scikit-learn's scorer dict, plus on-demand skrank ranking names."""

    # Set by register_with_sklearn: skrank's get_scorer and is_ranking_name.
    skrank = None

    def __missing__(self, key):
        if self.skrank is not None and self.skrank.is_ranking_name(key):
            return self.skrank.get_scorer(key)
        raise KeyError(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or (
            self.skrank is not None and self.skrank.is_ranking_name(key))


def _is_scorer_name_set(options):
    # The StrOptions holding scikit-learn's scorer names (see get_scorer_names).
    return isinstance(options, (set, frozenset)) and {
        "accuracy", "neg_mean_squared_error", "r2"} <= options


def register_with_sklearn(skrank_scorers):
    """Make skrank's ranking names valid ``scoring=`` strings in scikit-learn.

    ``skrank_scorers`` is skrank's scorer module (``get_scorer``, ``is_ranking_name``,
    ``SHADOWED_NAMES`` and ``ShadowedNameScorer``), passed in because it imports this
    module.  Idempotent; returns True on success.  On an incompatible scikit-learn it
    warns and returns False (``scoring=skrank.get_scorer(name)`` works then).
    """
    global REGISTERED
    try:
        from sklearn.metrics import _scorer as sk_scorer
        from sklearn.utils import _param_validation as pv

        if not isinstance(sk_scorer._SCORERS, dict) or not callable(sk_scorer.get_scorer):
            raise AttributeError("sklearn.metrics._scorer._SCORERS is not a dict")
        if not isinstance(sk_scorer._SCORERS, _ScorerRegistry):
            sk_scorer._SCORERS = _ScorerRegistry(sk_scorer._SCORERS)
        _ScorerRegistry.skrank = skrank_scorers
        for name in skrank_scorers.SHADOWED_NAMES:
            scorer = dict.get(sk_scorer._SCORERS, name)
            if type(scorer) is sklearn_scorer_class():  # scikit-learn's, not yet wrapped
                dict.__setitem__(sk_scorer._SCORERS, name,
                                 skrank_scorers.ShadowedNameScorer.wrap(scorer, name))

        str_options = pv.StrOptions
        original = str_options.is_satisfied_by
        if not getattr(original, "_skrank", False):
            def is_satisfied_by(self, val):
                if original(self, val):
                    return True
                return (isinstance(val, str) and _is_scorer_name_set(self.options)
                        and _ScorerRegistry.skrank.is_ranking_name(val))

            is_satisfied_by._skrank = True
            is_satisfied_by.__wrapped__ = original
            str_options.is_satisfied_by = is_satisfied_by
    except Exception as exc:  # an incompatible scikit-learn must not break the import
        REGISTERED = False
        warnings.warn(
            f"skrank could not register its scorer names with this scikit-learn ({exc!r}); "
            f"strings such as scoring='ndcg@10' will be rejected by scikit-learn. Pass "
            f"scoring=skrank.get_scorer('ndcg@10') instead.",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    REGISTERED = True
    return True


def sklearn_scorer_names():
    """scikit-learn's own scorer names (never shadowed by skrank)."""
    try:
        from sklearn.metrics._scorer import _SCORERS

        return set(dict.keys(_SCORERS) if isinstance(_SCORERS, dict) else _SCORERS.keys())
    except Exception:  # an incompatible scikit-learn: fall back to the public list
        try:
            from sklearn.metrics import get_scorer_names as sk_names

            return set(sk_names())
        except Exception:
            return set()


def sklearn_scorer_class():
    """The class of the scorers ``make_scorer`` returns (skrank's scorers subclass it)."""
    # From its module: this may run while sklearn.metrics itself is still being imported.
    from sklearn.metrics._scorer import make_scorer

    return type(make_scorer(_no_score))


def _no_score(y_true, y_pred):  # pragma: no cover - never called
    return 0.0


# ---------------------------------------------------------------------------
# 4. The per-call cache of a dict ``scoring=``.


def sklearn_call_cache(method_caller):
    """The cache scikit-learn's multi-metric scorer (a dict ``scoring=``) keeps for one
    call on one estimator and one X, or None (a single scorer, or another scikit-learn)."""
    if isinstance(method_caller, functools.partial) and method_caller.args:
        cache = method_caller.args[0]
        if isinstance(cache, dict):
            return cache
    return None
