"""The per-user and per-item computations behind :mod:`skrank.beyond`: recommendation
lists as ``(users, k)`` item codes, popularity, exposure and similarity, in blocks of
users so that memory stays O(users x k).
"""

from numbers import Integral, Real

import numpy as np

from .._core.checks import InvalidParameterError, _describe


#: Users per block where item vectors are gathered (bounds memory to a block x k x d).
_BLOCK_USERS = 8192


def _lists(func, recommended, n_items=None):
    """``(items, valid)``: the lists as an int64 matrix and the mask of real entries."""
    items = np.asarray(recommended)
    if items.ndim != 2:
        raise ValueError(f"{func}: recommended must be a 2-D array of item indices, one row per "
                         f"user (-1 pads a shorter list). Got an array of shape {items.shape} "
                         f"instead.")
    if items.size and not np.issubdtype(items.dtype, np.integer):
        if not np.issubdtype(items.dtype, np.floating) or not np.all(
                np.isfinite(items) & (items == np.round(items))):
            raise ValueError(f"{func}: recommended must hold integer item indices. Got dtype "
                             f"{items.dtype} instead.")
    items = items.astype(np.int64)
    valid = items >= 0
    if (items < -1).any():
        raise ValueError(f"{func}: recommended must hold item indices >= 0, or -1 for padding. "
                         f"Got {int(items.min())} instead.")
    if n_items is not None and items.size and int(items.max()) >= n_items:
        raise ValueError(f"{func}: recommended holds item {int(items.max())}, outside the catalog "
                         f"of n_items = {n_items} items (indices 0 .. {n_items - 1}). Pass the "
                         f"catalog's size as n_items.")
    if items.shape[1] > 1:
        ordered = np.sort(np.where(valid, items, -1 - np.arange(items.shape[1])), axis=1)
        if (ordered[:, 1:] == ordered[:, :-1]).any():
            row = int(np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))[0])
            raise ValueError(f"{func}: a user's list must not repeat an item. Got a repeated item "
                             f"in row {row} of recommended instead.")
    return items, valid


def _check_n_items(func, n_items):
    if isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, Integral) or n_items < 1:
        raise InvalidParameterError(f"{func}: n_items (the catalog's size) must be an int >= 1. "
                                    f"Got {_describe(n_items)} instead.")
    return int(n_items)


def _popularity(func, item_popularity, items, valid):
    pop = np.asarray(item_popularity, dtype=np.float64)
    if pop.ndim != 1:
        raise ValueError(f"{func}: item_popularity must be 1-D, one count per item of the "
                         f"catalog. "
                         f"Got shape {pop.shape} instead.")
    if not np.isfinite(pop).all() or (pop < 0).any():
        raise ValueError(f"{func}: item_popularity must hold finite counts >= 0. Got "
                         f"min {np.nanmin(pop) if pop.size else 0:g} or a NaN instead.")
    if valid.any() and int(items[valid].max()) >= pop.shape[0]:
        raise ValueError(f"{func}: item_popularity must cover every recommended item. Got "
                         f"{pop.shape[0]} counts for item index {int(items[valid].max())} "
                         f"instead.")
    return pop


def _mean_over_users(values, defined, func="beyond"):
    kept = values[defined]
    if not kept.size:
        raise ValueError(f"{func}: no user has a list it is defined on (a non-empty list; two "
                         f"items or more for intra-list metrics; a history for serendipity). "
                         f"Got none instead.")
    return float(kept.mean())


def _row_counts(valid):
    return valid.sum(axis=1)


def _exposure(items, valid, n_items=None):
    """How many times each recommended item is recommended (the items with a count > 0)."""
    return np.unique(items[valid], return_counts=True)[1].astype(np.float64)


def _per_user_novelty(func, items, valid, item_popularity, n_interactions=None):
    pop = _popularity(func, item_popularity, items, valid)
    total = pop.sum() if n_interactions is None else float(n_interactions)
    seen = pop[items[valid]]
    if (seen <= 0).any():
        raise ValueError(f"{func}: item_popularity must be > 0 for every recommended item (its "
                         f"self-information -log2(popularity / total) is infinite otherwise). "
                         f"Got popularity 0 for item {int(items[valid][seen <= 0][0])} instead.")
    info = np.zeros(items.shape)
    info[valid] = -np.log2(seen / total)
    n = _row_counts(valid)
    return np.divide(info.sum(axis=1), n, out=np.zeros(n.shape), where=n > 0), n > 0


def _per_user_popularity(func, items, valid, item_popularity):
    pop = _popularity(func, item_popularity, items, valid)
    value = np.zeros(items.shape)
    value[valid] = pop[items[valid]]
    n = _row_counts(valid)
    return np.divide(value.sum(axis=1), n, out=np.zeros(n.shape), where=n > 0), n > 0


def tail_items(item_popularity, tail=0.1):
    """The long-tail items as RecBole chooses them: with ``tail <= 1``, the
    ``max(int(tail * n), 1)`` least popular of the ``n`` items seen in training
    (popularity > 0), ties by item index; with ``tail > 1``, the items seen at most
    ``tail`` times.  Returns a boolean mask over the catalog."""
    pop = np.asarray(item_popularity, dtype=np.float64)
    seen = np.flatnonzero(pop > 0)
    mask = np.zeros(pop.shape[0], dtype=bool)
    if tail > 1:
        mask[seen[pop[seen] <= tail]] = True
        return mask
    cut = max(int(seen.size * tail), 1)
    order = seen[np.lexsort((seen, pop[seen]))]
    mask[order[:cut]] = True
    return mask


def _per_user_tail(func, items, valid, item_popularity, tail):
    if isinstance(tail, (bool, np.bool_)) or not isinstance(tail, Real) or not tail > 0:
        raise InvalidParameterError(f"{func}: tail must be a number > 0 (a share of the items "
                                    f"in (0, 1], or a count). Got {_describe(tail)} instead.")
    pop = _popularity(func, item_popularity, items, valid)
    mask = tail_items(pop, tail)
    hit = np.zeros(items.shape)
    hit[valid] = mask[items[valid]]
    n = _row_counts(valid)
    return np.divide(hit.sum(axis=1), n, out=np.zeros(n.shape), where=n > 0), n > 0


def _unit_features(func, item_features, n_needed):
    """Item feature vectors scaled to unit length (a zero vector stays 0: its similarity to
    anything is 0, as recommenders fills a missing co-occurrence)."""
    if hasattr(item_features, "tocsr"):  # scipy.sparse, e.g. items x users interactions
        features = item_features.tocsr().astype(np.float64)
        norms = np.sqrt(np.asarray(features.multiply(features).sum(axis=1)).ravel())
    else:
        features = np.asarray(item_features, dtype=np.float64)
        if features.ndim != 2:
            raise ValueError(f"{func}: item_features must be 2-D, one row of features per item. "
                             f"Got shape {features.shape} instead.")
        if not np.isfinite(features).all():
            raise ValueError(f"{func}: item_features must be finite. Got NaN or infinity "
                             f"instead.")
        norms = np.linalg.norm(features, axis=1)
    if features.shape[0] < n_needed:
        raise ValueError(f"{func}: item_features must have a row for every recommended item. Got "
                         f"{features.shape[0]} rows for item index {n_needed - 1} instead.")
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    if hasattr(features, "multiply"):
        from scipy import sparse

        return sparse.diags(scale) @ features
    return features * scale[:, None]


def _indicator(items, valid, n_items):
    from scipy import sparse

    rows = np.repeat(np.arange(items.shape[0]), valid.sum(axis=1))
    return sparse.csr_matrix((np.ones(rows.shape[0]), (rows, items[valid])),
                             shape=(items.shape[0], n_items))


def _row_sq_norms(matrix):
    if hasattr(matrix, "multiply"):
        return np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", matrix, matrix)


def _per_user_ils(func, items, valid, item_features=None, similarity=None):
    n = _row_counts(valid)
    pairs = n * (n - 1) / 2.0
    defined = n >= 2
    if (item_features is None) == (similarity is None):
        raise InvalidParameterError(f"{func}: pass exactly one of item_features (cosine "
                                    f"similarity of feature vectors) and similarity (a "
                                    f"callable). Got "
                                    f"{'both' if similarity is not None else 'none'} "
                                    f"instead.")
    if similarity is not None:
        total = _pairs_by_callable(func, items, valid, similarity)
    else:
        n_needed = int(items[valid].max()) + 1 if valid.any() else 0
        unit = _unit_features(func, item_features, n_needed)
        summed = _indicator(items, valid, unit.shape[0]) @ unit
        self_sim = np.zeros(items.shape)
        self_sim[valid] = _row_sq_norms(unit)[items[valid]]   # 1, or 0 for a zero vector
        total = (_row_sq_norms(summed) - self_sim.sum(axis=1)) / 2.0
    return np.divide(total, pairs, out=np.zeros(n.shape), where=defined), defined


def _pairs_by_callable(func, items, valid, similarity):
    k = items.shape[1]
    first, second = np.triu_indices(k, 1)
    total = np.zeros(items.shape[0])
    for start in range(0, items.shape[0], _BLOCK_USERS):
        block, ok = items[start:start + _BLOCK_USERS], valid[start:start + _BLOCK_USERS]
        both = ok[:, first] & ok[:, second]
        a, b = block[:, first][both], block[:, second][both]
        sims = np.asarray(similarity(a, b), dtype=np.float64)
        if sims.shape != a.shape or not np.isfinite(sims).all():
            raise ValueError(f"{func}: similarity(items_a, items_b) must return one finite "
                             f"similarity per pair, shape {a.shape}. Got {_describe(sims)} "
                             f"instead.")
        values = np.zeros(both.shape)
        values[both] = sims
        total[start:start + _BLOCK_USERS] = values.sum(axis=1)
    return total


def _per_user_serendipity(func, items, valid, history, item_features, relevance=None):
    from scipy import sparse

    hist = history if sparse.issparse(history) else None
    if hist is None:
        hist_items, hist_valid = _lists(func, history)
        if hist_items.shape[0] != items.shape[0]:
            raise ValueError(f"{func}: history must have one row per user, as recommended. Got "
                             f"{hist_items.shape[0]} and {items.shape[0]} rows instead.")
        n_needed = max(int(items[valid].max(initial=-1)), int(hist_items[hist_valid].max(
            initial=-1))) + 1
    else:
        if hist.shape[0] != items.shape[0]:
            raise ValueError(f"{func}: history must have one row per user, as recommended. Got "
                             f"{hist.shape[0]} and {items.shape[0]} rows instead.")
        n_needed = max(int(items[valid].max(initial=-1)) + 1, hist.shape[1])
    unit = _unit_features(func, item_features, n_needed)
    if hist is None:
        hist = _indicator(hist_items, hist_valid, unit.shape[0])
    hist = sparse.csr_matrix(hist, dtype=np.float64)
    hist.data[:] = 1.0
    sizes = np.asarray(hist.sum(axis=1)).ravel()
    centroid = hist @ unit   # sum of the history's unit vectors, per user
    defined = (sizes > 0) & valid.any(axis=1)
    rel = np.ones(items.shape) if relevance is None else np.asarray(relevance, dtype=np.float64)
    if rel.shape != items.shape or not np.isfinite(rel).all():
        raise ValueError(f"{func}: relevance must be a finite array of the shape of recommended "
                         f"{items.shape}. Got {_describe(relevance)} instead.")
    values = np.zeros(items.shape[0])
    for start in range(0, items.shape[0], _BLOCK_USERS):
        stop = start + _BLOCK_USERS
        block, ok = items[start:stop], valid[start:stop]
        users = np.repeat(np.arange(block.shape[0]), ok.sum(axis=1))
        reco = unit[block[ok]]
        hist_block = centroid[start:stop]
        if hasattr(reco, "multiply"):
            dots = np.asarray(reco.multiply(hist_block[users]).sum(axis=1)).ravel()
        else:
            hist_block = hist_block.toarray() if hasattr(hist_block, "toarray") else hist_block
            dots = np.einsum("ij,ij->i", reco, np.asarray(hist_block)[users])
        mean_sim = dots / np.maximum(sizes[start:stop][users], 1.0)
        each = np.zeros(block.shape)
        each[ok] = (1.0 - mean_sim) * rel[start:stop][ok]
        n = ok.sum(axis=1)
        values[start:stop] = np.divide(each.sum(axis=1), n, out=np.zeros(n.shape), where=n > 0)
    return values, defined


# ---------------------------------------------------------------------------
# The kernels of the beyond-accuracy declarations (skrank._declare.table): each reads the
# lists ``(items, valid)`` and its inputs and options; a per-user one gives
# ``(values, defined)``, a collection-level one a float.


def _nonempty_exposure(func, items, valid):
    counts = _exposure(items, valid)
    if counts.size == 0:
        raise ValueError(f"{func}: recommended must hold at least one item. Got only padding "
                         f"instead.")
    return counts


def catalog_coverage_kernel(func, items, valid, *, n_items):
    """Distinct recommended items over ``n_items``."""
    n_items = _check_n_items(func, n_items)
    _check_catalog(func, items, n_items)
    return np.unique(items[valid]).shape[0] / n_items


def distributional_coverage_kernel(func, items, valid, *, convention="recommenders"):
    """Entropy of the items' share of the recommendations (base 2, or RecBole's)."""
    counts = _nonempty_exposure(func, items, valid)
    p = counts / counts.sum()
    if convention == "recommenders":
        return float(-(p * np.log2(p)).sum())
    return float(-(p * np.log(p)).sum() / counts.size)


def gini_kernel(func, items, valid, *, n_items):
    """Gini index of the exposure of the ``n_items`` items (never recommended: 0)."""
    n_items = _check_n_items(func, n_items)
    _check_catalog(func, items, n_items)
    counts = np.sort(_nonempty_exposure(func, items, valid))
    index = np.arange(n_items - counts.size + 1, n_items + 1, dtype=np.float64)
    return float(np.sum((2 * index - n_items - 1) * counts) / counts.sum() / n_items)


def user_coverage_kernel(func, items, valid, *, n_users=None):
    """Users with at least one recommended item over ``n_users`` (default: the rows)."""
    n = items.shape[0] if n_users is None else n_users
    if (isinstance(n, (bool, np.bool_)) or not isinstance(n, Integral)
            or n < max(items.shape[0], 1)):
        raise InvalidParameterError(f"{func}: n_users must be an int >= the rows of recommended "
                                    f"({items.shape[0]}). Got {_describe(n_users)} instead.")
    return float(valid.any(axis=1).sum() / n)


def novelty_kernel(func, items, valid, *, item_popularity, n_interactions=None):
    return _per_user_novelty(func, items, valid, item_popularity, n_interactions)


def popularity_kernel(func, items, valid, *, item_popularity):
    return _per_user_popularity(func, items, valid, item_popularity)


def tail_kernel(func, items, valid, *, item_popularity, tail=0.1):
    return _per_user_tail(func, items, valid, item_popularity, tail)


def ils_kernel(func, items, valid, *, item_features=None, similarity=None):
    return _per_user_ils(func, items, valid, item_features, similarity)


def ild_kernel(func, items, valid, *, item_features=None, similarity=None):
    values, defined = _per_user_ils(func, items, valid, item_features, similarity)
    return 1.0 - values, defined


def serendipity_kernel(func, items, valid, *, history, item_features, relevance=None):
    return _per_user_serendipity(func, items, valid, history, item_features, relevance)


def _check_catalog(func, items, n_items):
    if items.size and int(items.max()) >= n_items:
        raise ValueError(f"{func}: recommended holds item {int(items.max())}, outside the catalog "
                         f"of n_items = {n_items} items (indices 0 .. {n_items - 1}). Pass the "
                         f"catalog's size as n_items.")


def cut_lists(func, recommended, k=None):
    """``(items, valid)`` of the lists, each cut to its first ``k`` positions."""
    items, valid = _lists(func, recommended)
    if k is not None:
        items, valid = items[:, :k], valid[:, :k]
    return items, valid


def top_k_lists(func, scores, k, exclude=None):
    """Each row's ``k`` best columns of a score matrix (best first; equal scores in
    column order), without those ``exclude`` marks; ``-1`` pads a row with fewer
    candidates."""
    scores = np.array(scores.toarray() if hasattr(scores, "toarray") else scores,
                      dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"{func}: scores must be 2-D (users x items). Got shape {scores.shape} "
                         f"instead.")
    if exclude is not None:
        mask = exclude.toarray() if hasattr(exclude, "toarray") else np.asarray(exclude)
        if mask.shape != scores.shape:
            raise ValueError(f"{func}: exclude must have the shape of scores {scores.shape}. Got "
                             f"{mask.shape} instead.")
        scores[mask.astype(bool)] = -np.inf
    k_eff = min(k, scores.shape[1])
    if k_eff == 0:
        return np.full((scores.shape[0], k), -1, dtype=np.int64)
    part = np.argpartition(-scores, k_eff - 1, axis=1)[:, :k_eff]
    part = np.sort(part, axis=1)   # ties in column order, whatever argpartition did
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    top = np.take_along_axis(part, order, axis=1)
    top = np.where(np.isneginf(np.take_along_axis(scores, top, axis=1)), -1, top)
    if k_eff < k:
        top = np.hstack([top, np.full((top.shape[0], k - k_eff), -1)])
    return top


def beyond_columns(func, calls, prepared):
    """The executor of the beyond-accuracy declarations: ``(users, [values, ...],
    [undefined, ...])`` for the calls of one evaluation.

    The lists are ``prepared.inputs["recommended"]`` when given, else the top ``k``
    (each call's cutoff, required) of the score matrix ``y_score`` (users x items)
    without ``prepared.inputs["exclude"]``.  A per-user metric's values are
    undefined where it is (a list of fewer than two items for the intra-list
    metrics, no history for serendipity, an empty list otherwise); a
    collection-level metric's value is a float, its users' values NaN."""
    _, y_score, qid, _, _ = prepared.arrays
    inputs = prepared.inputs
    given = inputs.get("recommended")
    if qid is not None:
        raise ValueError(f"{func}: beyond-accuracy metrics ({', '.join(str(c) for c in calls)}) "
                         f"read each user's top-k items from a 2-D score matrix (users x items). "
                         f"Got query ids (the 1-D form) instead: pass y_score of shape (n_users, "
                         f"n_items), or use skrank.beyond's functions on lists (the 1-D "
                         f"form, and qrels with a run, have no catalog of item indices).")
    lists = {}
    values, undefined, users = [], [], None
    for call in calls:
        options = call.options
        k = options.get("k")
        if given is None:
            if k is None:
                raise InvalidParameterError(
                    f"{func}: {call.spec.name} needs a cutoff to take each user's top-k items "
                    f"from the scores: write e.g. '{call.spec.name}@10'.")
            if k not in lists:
                lists[k] = _lists(func, top_k_lists(func, y_score, k, inputs.get("exclude")))
            items, valid = lists[k]
        else:
            items, valid = cut_lists(func, given, k)
        users = np.arange(items.shape[0])
        kwargs = {name: inputs[name] for name in (*call.spec.inputs, *call.spec.optional_inputs)
                  if name != "recommendations" and inputs.get(name) is not None}
        missing = [name for name in call.spec.inputs
                   if name != "recommendations" and inputs.get(name) is None]
        if missing:
            raise InvalidParameterError(
                f"{func}: {call.spec.name} needs {' and '.join(missing)}. Got none instead: pass "
                f"{', '.join(f'{m}=...' for m in missing)} (never guessed from the test data).")
        kwargs.update({name: value for name, value in options.items() if name != "k"})
        result = call.spec.kernel(func, items, valid, **kwargs)
        if call.spec.aggregate == "collection":
            values.append(result)
            undefined.append(None)
        else:
            values.append(result[0])
            undefined.append(~result[1])
    return users, values, undefined
