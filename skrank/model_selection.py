"""Query-aware cross-validation splitters: a query is never cut across folds.

Query ids come, in this order, from routed metadata (``qid``; with
``sklearn.set_config(enable_metadata_routing=True)`` the splitters request it),
from ``groups``, or from a ``qid`` column of a pandas DataFrame ``X``.
:class:`DropQid` keeps such a column out of the features of a pipeline.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.model_selection import BaseCrossValidator, GroupShuffleSplit
from sklearn.utils import check_random_state
from numbers import Integral, Real

from sklearn.utils.validation import _num_samples

from ._engine.codes import factorize_qid
from ._scorer import qid_from_X, warn_if_qid_is_a_feature
from ._core.checks import InvalidParameterError, check_k, _describe
from ._engine.ids import as_qid_array
from ._evaluation import DEFAULT_METRICS
from ._evaluate import evaluate
from ._core.docstrings import shared_doc

__all__ = ["DropQid", "QueryKFold", "QueryShuffleSplit", "cross_val_evaluate"]


def _resolve_qid(cls, X, groups, qid):
    if qid is None:
        qid = groups
    if qid is None:
        qid = qid_from_X(X)
    if qid is None:
        import sklearn

        if not sklearn.get_config().get("enable_metadata_routing", False):
            # A qid given to GridSearchCV.fit or cross_validate(params=) reaches the
            # estimator's fit only while routing is off: the splitter never sees it.
            raise ValueError(
                f"{cls}: query ids are required, and metadata routing is off, so a qid "
                f"passed to a search's fit(X, y, qid=qid) or to cross_validate(..., "
                f"params={{'qid': qid}}) does not reach the splitter. Either enable "
                f"metadata routing, sklearn.set_config(enable_metadata_routing=True) (the "
                f"scorer then gets the ids too), pass X as a pandas DataFrame with a 'qid' "
                f"column, or pass groups=qid (it reaches the splitter, not a ranking scorer)."
            )
        raise ValueError(
            f"{cls}: query ids are required. Pass qid=... (routed: call fit(X, y, "
            f"qid=qid) or cross_validate(..., params={{'qid': qid}})), groups=qid, or X as "
            f"a pandas DataFrame with a 'qid' column."
        )
    qid = as_qid_array(qid)
    # scikit-learn's own row count: sparse matrices and arrays (whose len() is
    # ambiguous), DataFrames, lists.
    n = _num_samples(X) if X is not None else qid.shape[0]
    if qid.ndim != 1 or qid.shape[0] != n:
        raise ValueError(
            f"{cls}: qid must be 1-D with one id per row of X ({n}). Got shape {qid.shape}."
        )
    codes, qids, _ = factorize_qid(cls, qid)
    return codes, qids.shape[0]


#: The parameters of QueryKFold.split and QueryShuffleSplit.split.
_SPLIT_PARAMETERS = """
X : array-like or DataFrame of shape (n_samples, n_features)
y : ignored
groups : array-like of shape (n_samples,), default=None
    Query ids, when ``qid`` is not given.
qid : array-like of shape (n_samples,), default=None
    Query ids.
"""


class QueryKFold(BaseCrossValidator):
    """K-fold cross-validation over whole queries.

    Each query's rows land in exactly one test fold; folds hold about the same
    number of rows.  Unlike :class:`sklearn.model_selection.KFold`, a query is
    never split between training and test data (which would leak its labels
    and inflate scores).

    Parameters
    ----------
    n_splits : int >= 2, default=5
        Number of folds.
    shuffle : bool, default=False
        Shuffle the queries before assigning them to folds.  Without shuffling,
        queries keep the order of their ids.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffle; only used with ``shuffle=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from skrank.model_selection import QueryKFold
    >>> qid = np.array([1, 1, 2, 2, 2, 3, 4, 4])
    >>> for train, test in QueryKFold(n_splits=2).split(np.zeros((8, 1)), qid=qid):
    ...     print(np.unique(qid[test]).tolist())
    [1, 2]
    [3, 4]
    """

    __metadata_request__split = {"qid": True, "groups": True}

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None, qid=None):
        """Number of splitting iterations.

        Parameters
        ----------
        X, y, groups, qid : object, default=None
            Ignored; accepted for scikit-learn's splitter interface.

        Returns
        -------
        n_splits : int
        """
        return self.n_splits

    @shared_doc(split_parameters=_SPLIT_PARAMETERS)
    def split(self, X, y=None, groups=None, qid=None):
        """Generate indices of train and test rows, query by query.

        Parameters
        ----------
        {split_parameters}

        Yields
        ------
        train, test : ndarray of row indices
        """
        n_splits = check_k("QueryKFold", self.n_splits, name="n_splits", required=True)
        if n_splits < 2:
            raise InvalidParameterError(
                f"QueryKFold: n_splits must be an int >= 2. Got {n_splits} instead.")
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise InvalidParameterError(
                f"QueryKFold: shuffle must be True or False. Got {self.shuffle!r} instead.")
        codes, n_queries = _resolve_qid("QueryKFold", X, groups, qid)
        if n_queries < n_splits:
            raise ValueError(
                f"QueryKFold: n_splits must not exceed the number of queries. Got "
                f"n_splits={n_splits} with {n_queries} queries."
            )
        order = np.arange(n_queries)
        if self.shuffle:
            try:
                rng = check_random_state(self.random_state)
            except ValueError:
                raise InvalidParameterError(
                    f"QueryKFold: random_state must be None, an int or a "
                    f"numpy.random.RandomState. Got {self.random_state!r} instead.") from None
            rng.shuffle(order)
        sizes = np.bincount(codes, minlength=n_queries)[order]
        # Cut the sequence of queries where the running row count crosses
        # i * n_samples / n_splits; if a huge query would leave a fold empty,
        # balance the number of queries instead.
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        fold_of_position = np.minimum(starts * n_splits // sizes.sum(), n_splits - 1)
        if np.unique(fold_of_position).size < n_splits:
            fold_of_position = np.arange(n_queries) * n_splits // n_queries
        fold_of_query = np.empty(n_queries, dtype=np.intp)
        fold_of_query[order] = fold_of_position
        fold = fold_of_query[codes]
        rows = np.arange(codes.shape[0])
        for i in range(n_splits):
            test = fold == i
            yield rows[~test], rows[test]

    def _iter_test_masks(self, X=None, y=None, groups=None):  # pragma: no cover
        raise NotImplementedError  # split() is overridden


class QueryShuffleSplit(GroupShuffleSplit):
    """Random train/test splits of whole queries.

    ``test_size`` and ``train_size`` count queries (fractions or numbers), as
    in :class:`sklearn.model_selection.GroupShuffleSplit`, which this extends
    with query ids from ``qid`` or a DataFrame's ``qid`` column.

    Parameters
    ----------
    n_splits : int, default=5
    test_size : float or int, default=0.2
    train_size : float or int, default=None
    random_state : int, RandomState instance or None, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from skrank.model_selection import QueryShuffleSplit
    >>> qid = np.repeat(np.arange(10), 3)
    >>> train, test = next(QueryShuffleSplit(n_splits=1, test_size=0.2,
    ...                                      random_state=0).split(np.zeros((30, 1)), qid=qid))
    >>> len(set(qid[test])), len(set(qid[train]) & set(qid[test]))
    (2, 0)
    """

    __metadata_request__split = {"qid": True, "groups": True}

    def __init__(self, n_splits=5, *, test_size=0.2, train_size=None, random_state=None):
        super().__init__(n_splits=n_splits, test_size=test_size, train_size=train_size,
                         random_state=random_state)

    @shared_doc(split_parameters=_SPLIT_PARAMETERS)
    def split(self, X, y=None, groups=None, qid=None):
        """Generate indices of train and test rows; see :meth:`QueryKFold.split`.

        Parameters
        ----------
        {split_parameters}

        Yields
        ------
        train, test : ndarray of int
            Row indices of the training and test queries.
        """
        _check_split_sizes("QueryShuffleSplit", self)
        codes, _ = _resolve_qid("QueryShuffleSplit", X, groups, qid)
        yield from super().split(X if X is not None else codes, y, groups=codes)

    def get_n_splits(self, X=None, y=None, groups=None, qid=None):
        return self.n_splits


def _check_split_sizes(func, splitter):
    """n_splits, test_size and train_size as scikit-learn means them, checked here so
    that a bad one is an InvalidParameterError naming it (not a bare numpy error)."""
    check_k(func, splitter.n_splits, required=True, name="n_splits")
    fractions = 0.0
    for name in ("test_size", "train_size"):
        value = getattr(splitter, name)
        if value is None:
            continue
        if isinstance(value, Integral) and not isinstance(value, (bool, np.bool_)):
            if value < 1:
                raise InvalidParameterError(f"{func}: {name} must be None, an int >= 1 (queries) "
                                            f"or a float in (0, 1). Got {value!r} instead.")
        elif isinstance(value, Real) and not isinstance(value, (bool, np.bool_)) \
                and 0 < value < 1:
            fractions += value
        else:
            raise InvalidParameterError(f"{func}: {name} must be None, an int >= 1 (queries) "
                                        f"or a float in (0, 1). Got {value!r} instead.")
    if fractions > 1:
        raise InvalidParameterError(
            f"{func}: test_size + train_size must be at most 1 as fractions. Got "
            f"{splitter.test_size!r} + {splitter.train_size!r} instead.")


class DropQid(TransformerMixin, BaseEstimator):
    """Drop the ``qid`` column of a DataFrame ``X`` before the model sees it.

    Without metadata routing, a pandas DataFrame ``X`` with a ``qid`` column is
    how skrank's scorers and splitters find the query ids; but scikit-learn's
    own estimators would take that column as one more feature (and learn from
    arbitrary id numbers).  Put ``DropQid()`` first in the pipeline: the
    scorer still reads ``qid`` from the DataFrame it passes to the pipeline,
    the model never sees it.  Input without such a column (a numpy array, a
    sparse matrix, a DataFrame without ``qid``) passes through unchanged.
    Without it, skrank's scorers and :func:`cross_val_evaluate` warn when the
    fitted model received the ``qid`` column as a feature.

    Parameters
    ----------
    column : str, default="qid"
        Name of the column to drop.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn.pipeline import make_pipeline
    >>> from skrank.model_selection import DropQid
    >>> df = pd.DataFrame({"f0": [0.1, 0.4, 0.3, 0.9], "qid": [7, 7, 8, 8]})
    >>> DropQid().fit_transform(df).columns.tolist()
    ['f0']
    >>> model = make_pipeline(DropQid(), Ridge()).fit(df, [0, 1, 0, 1])
    >>> model[-1].n_features_in_
    1
    """

    def __init__(self, column="qid"):
        self.column = column

    def fit(self, X, y=None):
        """Record the input columns; nothing is learnt.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : DropQid
        """
        if not isinstance(self.column, str):
            raise InvalidParameterError(
                f"DropQid: column must be a str. Got {self.column!r} of type "
                f"{type(self.column).__name__} instead.")
        columns = getattr(X, "columns", None)
        if columns is not None:
            self.feature_names_in_ = np.asarray([str(c) for c in columns], dtype=object)
        self.n_features_in_ = X.shape[1] if hasattr(X, "shape") and len(X.shape) > 1 else None
        return self

    def _drops(self, X):
        columns = getattr(X, "columns", None)
        return columns is not None and self.column in list(columns)

    def transform(self, X):
        """``X`` without its ``qid`` column (unchanged when it has none).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_out : array-like or DataFrame
        """
        return X.drop(columns=self.column) if self._drops(X) else X

    def get_feature_names_out(self, input_features=None):
        """Input feature names less ``qid``.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Input feature names; None takes those seen in :meth:`fit`.

        Returns
        -------
        names : ndarray of str
        """
        names = getattr(self, "feature_names_in_", None) if input_features is None \
            else np.asarray(input_features, dtype=object)
        if names is None:
            names = np.asarray([f"x{i}" for i in range(self.n_features_in_ or 0)], dtype=object)
        return names[names != self.column]


def _take_rows(X, rows):
    """Rows of X, whatever its kind: DataFrame, sparse matrix or array (no dense copy)."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]


def _check_whole_queries(func, cv, codes, qids, query_sizes, train, test, tested,
                         query_tested):
    """Refuse a fold of ``cv`` that tests a row or query twice, puts a query in both its
    training and test rows, or tests part of a query."""
    n_queries = query_sizes.shape[0]
    if tested[test].any() or query_tested[codes[test]].any():
        raise ValueError(f"{func}: each query must be in at most one test fold; "
                         f"{type(cv).__name__} puts some rows in several. Use a "
                         f"partition such as QueryKFold.")
    # One count per query and side says both ways a split can cut a query.
    in_test = np.bincount(codes[test], minlength=n_queries)
    in_train = np.bincount(codes[train], minlength=n_queries)
    both = (in_test > 0) & (in_train > 0)
    if both.any():  # a row-wise splitter (KFold): the model saw the query it ranks
        first = codes[test][both[codes[test]]][0]
        raise ValueError(
            f"{func}: each query must be whole in a split, but {type(cv).__name__} puts "
            f"{int(both.sum())} queries in both the training and "
            f"the test rows of a split (query {str(qids[first])!r}: {int(in_train[first])} "
            f"rows in training, {int(in_test[first])} in test), so their test "
            f"documents are ranked by a model that saw the query, and the metric reads "
            f"cut rankings. Use a query-aware splitter: QueryKFold, QueryShuffleSplit "
            f"or GroupKFold (with the ids as groups).")
    # A test query is held out whole: none of its rows trains or is left out.
    cut = (in_test > 0) & (in_test < query_sizes)
    if cut.any():
        q = int(np.argmax(cut))
        raise ValueError(
            f"{func}: each test fold must hold whole queries. Got {type(cv).__name__} "
            f"testing {int(in_test[q])} of the {int(query_sizes[q])} rows of query "
            f"{str(qids[q])!r} (queries cut in this fold: "
            f"{int(cut.sum())}). Use a query-aware splitter such as QueryKFold, or a group "
            f"splitter such as GroupKFold.")


def cross_val_evaluate(estimator, X, y, *, qid=None, cv=None, metrics=None, fit_params=None,
                       ties=None, no_relevant="zero"):
    """Per-query test values of a ranker, each query scored by the model that did
    not see it in training.

    Fits a clone of ``estimator`` on each training fold of ``cv``, scores the
    held-out rows with ``predict`` and evaluates every held-out query once.
    Two rankers cross-validated on the same folds give paired per-query values
    for :func:`skrank.compare`.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``predict``
        Cloned for each fold.  When its ``fit`` takes ``qid`` (as
        ``xgboost.XGBRanker`` and :class:`skrank.rankers.QueryLGBMRanker`
        do), it receives the training rows' query ids, each query's rows
        together.
    X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Relevance labels.
    qid : array-like of shape (n_samples,), default=None
        Query ids; None takes the ``qid`` column of a DataFrame ``X``.
    cv : int, splitter or None, default=None
        A query-aware splitter such as :class:`QueryKFold` (or a scikit-learn
        group splitter such as ``GroupKFold``, given ``groups=qid``); an int k
        means ``QueryKFold(k)``, None means ``QueryKFold(5)``.  Each query
        must be in at most one test fold.
    metrics : list of str or dict, default=None
        As in :func:`skrank.evaluate`; None uses its default metrics.
    fit_params : dict, default=None
        Further arguments of ``fit``; arrays of length n_samples are cut to
        the training rows.
    ties, no_relevant
        As in :func:`skrank.evaluate`.

    Returns
    -------
    result : Evaluation
        Per-query values of the held-out queries (queries in no test fold are
        left out), their ids and the means.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from skrank.model_selection import QueryKFold, cross_val_evaluate
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(20), 10)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + rng.normal(scale=0.5, size=200) > 0.5).astype(float)
    >>> res = cross_val_evaluate(Ridge(), X, y, qid=qid, cv=QueryKFold(4), metrics=["ndcg@5"])
    >>> res.qid.shape, res.per_query["ndcg@5"].shape
    ((20,), (20,))
    """
    import inspect
    from numbers import Integral as _Integral

    import scipy.sparse as sp
    from sklearn.base import clone

    func = "cross_val_evaluate"
    if qid is None:
        qid = qid_from_X(X)
    if qid is None:
        raise ValueError(f"{func}: query ids are required. Pass qid=... or X as a pandas "
                         f"DataFrame with a 'qid' column.")
    qid = np.asarray(qid)
    y = np.asarray(y)
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if qid.ndim != 1 or qid.shape[0] != n or y.shape[0] != n:
        raise ValueError(f"{func}: X, y and qid must have the same number of rows. Got "
                         f"{n}, {y.shape[0]} and {qid.shape[0]}.")
    if sp.issparse(X) and X.format not in ("csr", "csc"):
        X = X.tocsr()  # COO and friends cannot select rows
    if cv is None or (isinstance(cv, _Integral) and not isinstance(cv, bool) and cv >= 2):
        cv = QueryKFold(5 if cv is None else int(cv))
    if isinstance(cv, (str, _Integral)) or not hasattr(cv, "split"):
        raise InvalidParameterError(f"{func}: cv must be None, an int >= 2 or a splitter such "
                                    f"as QueryKFold(5). Got {_describe(cv)} instead.")
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise InvalidParameterError(f"{func}: estimator must have fit and predict methods "
                                    f"(a regressor or ranker). Got {_describe(estimator)} instead.")
    if fit_params is not None and not isinstance(fit_params, dict):
        raise InvalidParameterError(f"{func}: fit_params must be None or a dict of further "
                                    f"arguments of fit. Got {_describe(fit_params)} instead.")
    codes, qids, _ = factorize_qid(func, qid)
    try:
        takes_qid = "qid" in inspect.signature(estimator.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        takes_qid = False
    fit_params = dict(fit_params or {})

    y_pred = np.full(n, np.nan)
    tested = np.zeros(n, dtype=bool)
    n_queries = int(codes.max()) + 1 if n else 0
    query_sizes = np.bincount(codes, minlength=n_queries)
    query_tested = np.zeros(n_queries, dtype=bool)
    try:  # query-aware splitters take qid; scikit-learn's group splitters take groups
        split_takes_qid = "qid" in inspect.signature(cv.split).parameters
    except (TypeError, ValueError):  # pragma: no cover
        split_takes_qid = False
    folds = cv.split(X, y, qid=qid) if split_takes_qid else cv.split(X, y, groups=qid)
    for train, test in folds:
        _check_whole_queries(func, cv, codes, qids, query_sizes, train, test,
                             tested, query_tested)
        query_tested[codes[test]] = True
        # Rankers want each query's rows together, in order of the ids.
        train = train[np.argsort(codes[train], kind="stable")]
        params = {name: (_take_rows(value, train) if getattr(value, "shape", (None,))[0] == n
                         else value)
                  for name, value in fit_params.items()}
        if takes_qid:
            params["qid"] = qid[train]
        model = clone(estimator).fit(_take_rows(X, train), y[train], **params)
        if not tested.any():  # every fold's model is built alike: look at the first
            warn_if_qid_is_a_feature(func, model, X, qid)
        predicted = np.asarray(model.predict(_take_rows(X, test)), dtype=np.float64)
        if predicted.shape not in ((test.shape[0],), (test.shape[0], 1)):
            raise ValueError(
                f"{func}: {type(model).__name__}.predict must return one score per row. Got "
                f"shape {predicted.shape} for {test.shape[0]} rows instead (a classifier's "
                f"decision_function or a multi-output model gives one column per class or "
                f"target).")
        y_pred[test] = predicted.reshape(-1)
        tested[test] = True
    if not tested.any():
        raise ValueError(f"{func}: the splitter {cv!r} produced no test rows.")
    return evaluate(y[tested], y_pred[tested], qid=qid[tested],
                    metrics=DEFAULT_METRICS if metrics is None else metrics,
                    ties=ties, no_relevant=no_relevant)
