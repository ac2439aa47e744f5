"""Error messages, one by one, for every public function (table-driven over skrank.METRICS).

Wording: ``<function>: <what> must be <expected>. Got <actual> instead.``  Every message
must name the argument and the value received.  Each check runs through the metric's
own function and through ``skrank.per_query_scores``.
"""

import re

import numpy as np
import pytest

import skrank

try:  # works whether or not tests/ is a package
    from tests.conftest import SPECS, oracle, spec_id, takes_dcg_gain, valid_params
except ImportError:  # pragma: no cover - depends on pytest's rootdir / import mode
    from conftest import SPECS, oracle, spec_id, takes_dcg_gain, valid_params

Y = [2.0, 0.0, 1.0]
S = [0.3, 0.2, 0.1]
Q = [0, 0, 0]

K_SPECS = [s for s in SPECS if s.k != "none"]


def entry_points(spec):
    """(prefix regex, callable) for the metric's function and per_query_scores."""
    func = spec.function.__name__

    def via_function(*args, **kw):
        return spec.function(*args, **kw)

    def via_per_query(*args, **kw):
        return skrank.per_query_scores(spec.name, *args, **kw)

    # per_query_scores may name itself or the metric function
    return [(rf"^{func}: ", via_function),
            (rf"^(?:{func}|per_query_scores): ", via_per_query)]


def check_raises(spec, exc, message, *args, **kw):
    """Both entry points raise ``exc`` whose message matches ``prefix + message``."""
    for prefix, call in entry_points(spec):
        with pytest.raises(exc, match=prefix + message):
            call(*args, **kw)


def ok_params(spec, y=Y, **overrides):
    return valid_params(spec, y, **overrides)


# --------------------------------------------------------------------------------------
# arrays
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_y_score_length_mismatch(spec):
    check_raises(spec, ValueError,
                 r"y_true and y_score must have the same length\. Got 3 and 2\.",
                 Y, S[:2], qid=Q, **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_length_mismatch(spec):
    check_raises(spec, ValueError, r"y_true .*and qid must have the same length\. Got 3 .*and 2",
                 Y, S, qid=Q[:2], **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_2d_shape_mismatch(spec):
    check_raises(spec, ValueError,
                 r"y_true and y_score must have the same shape\. Got \(1, 3\) and \(1, 2\)\.",
                 [Y], [S[:2]], **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_1d_and_2d_mixed(spec):
    check_raises(spec, ValueError,
                 r"y_true and y_score must both be 1-D \(with qid\) or both 2-D\. "
                 r"Got shapes \(3,\) and \(1, 3\)\.",
                 Y, [S], qid=Q, **ok_params(spec))
    check_raises(spec, ValueError,
                 r"y_true and y_score must both be 1-D \(with qid\) or both 2-D\. "
                 r"Got shapes \(1, 1, 3\) and \(1, 1, 3\)\.",
                 [[Y]], [[S]], **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("bad, where", [(np.nan, "y_true"), (np.inf, "y_true"),
                                        (-np.inf, "y_true"), (np.nan, "y_score")],
                         ids=["nan-y_true", "inf-y_true", "-inf-y_true", "nan-y_score"])
def test_non_finite_values(spec, bad, where):
    # (infinite scores are ranked: tests/test_sharp_edges_3.py)
    y, s = list(Y), list(S)
    (y if where == "y_true" else s)[1] = bad
    params = ok_params(spec)
    shown = re.escape(repr(float(bad)))
    message = (rf"{where} must contain only finite numbers\. Got 1 non-finite value\(s\), "
               rf"the first being (?:np\.float64\()?{shown}\)?, instead\." if where == "y_true"
               else r"y_score must not contain NaN .* Got 1 NaN value\(s\), the first at "
                    r"position 1, instead\.")
    check_raises(spec, ValueError, message, y, s, qid=Q, **params)
    check_raises(spec, ValueError, message, [y], [s], **params)  # 2-D


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_non_numeric_arrays(spec):
    params = ok_params(spec)
    check_raises(spec, TypeError, r"y_score must be an array of real numbers\. "
                 r"Got array of shape \(3,\) and dtype <U\d+ instead\.",
                 Y, ["a", "b", "c"], qid=Q, **params)
    check_raises(spec, TypeError, r"y_true must be an array of real numbers\. "
                 r"Got array of shape \(3,\) and dtype object with non-numeric entries instead\.",
                 [1, None, "x"], S, qid=Q, **params)


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_empty_input(spec):
    params = valid_params(spec, [1.0])
    check_raises(spec, ValueError,
                 r"y_true must hold at least one document\. Got an empty array instead\.",
                 [], [], qid=[], **params)
    check_raises(spec, ValueError, r"y_true must hold at least one query with one document\. "
                 r"Got shape \(0, 3\) instead\.",
                 np.zeros((0, 3)), np.zeros((0, 3)), **params)


# --------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_negative_labels(spec):
    # One rule for every metric (issue 25): a negative label is a non-relevant document
    # of gain 0, as trec_eval's -1 in qrels; the value is the oracle's on clipped labels.
    y = [2.0, -1.0, 1.0]
    params = ok_params(spec, max_grade=3) if spec.labels == "graded" else ok_params(spec)
    value = spec.function(y, S, qid=Q, **params)
    assert value == pytest.approx(spec.function([2.0, 0.0, 1.0], S, qid=Q, **params),
                                  rel=1e-12, abs=1e-12)
    assert value == pytest.approx(oracle(spec, y, S, Q, **params)[0], rel=1e-12, abs=1e-12)
    if takes_dcg_gain(spec):
        assert spec.function(y, S, qid=Q, **ok_params(spec, gain="exponential")) == \
            pytest.approx(spec.function([2.0, 0.0, 1.0], S, qid=Q,
                                        **ok_params(spec, gain="exponential")))


@pytest.mark.parametrize("spec", [s for s in SPECS if s.labels == "graded"], ids=spec_id)
def test_labels_above_max_grade(spec):
    check_raises(spec, ValueError, r"y_true must lie in \[0, max_grade\] = \[0, 1\]\. "
                 r"Got labels in \[0, 2\] instead\. Pass the largest grade",
                 Y, S, qid=Q, **ok_params(spec, max_grade=1))


@pytest.mark.parametrize("spec", [s for s in SPECS if "max_grade" in s.parameters], ids=spec_id)
def test_max_grade_missing(spec):
    params = {k: v for k, v in ok_params(spec).items() if k != "max_grade"}
    with pytest.raises(TypeError, match="max_grade"):
        spec.function(Y, S, qid=Q, **params)
    with pytest.raises(TypeError, match=r"max_grade is required\. Got no value for it\."):
        skrank.per_query_scores(spec.name, Y, S, qid=Q, **params)


# --------------------------------------------------------------------------------------
# k
# --------------------------------------------------------------------------------------

BAD_K = [
    (0, ValueError, r"Got 0 instead\."),
    (-1, ValueError, r"Got -1 instead\."),
    (1.5, TypeError, r"Got 1\.5 \(type float\) instead\."),
    (2.0, TypeError, r"Got 2\.0 \(type float\) instead\."),
    (True, TypeError, r"Got True \(type bool\) instead\."),
    (np.bool_(True), TypeError, r"Got (?:np\.)?True_? \(type bool_?\) instead\."),
    ("3", TypeError, r"Got '3' \(type str\) instead\."),
]


@pytest.mark.parametrize("spec", K_SPECS, ids=spec_id)
@pytest.mark.parametrize("k, exc, got", BAD_K, ids=[repr(k[0]) for k in BAD_K])
def test_bad_k(spec, k, exc, got):
    # (the wording for required-k metrics is checked in test_required_k_message_...)
    what = r"k (?:is required and )?must be (?:None \(no cutoff\) or )?an int >= 1\. "
    check_raises(spec, exc, what + got, Y, S, qid=Q, **ok_params(spec, k=k))


@pytest.mark.parametrize("spec", [s for s in SPECS if s.k == "required"], ids=spec_id)
def test_required_k(spec):
    check_raises(spec, ValueError, r"k is required and must be an int >= 1\. Got None instead\.",
                 Y, S, qid=Q, **{**ok_params(spec), "k": None})
    params = {n: v for n, v in ok_params(spec).items() if n != "k"}
    with pytest.raises(TypeError, match="'k'"):
        spec.function(Y, S, qid=Q, **params)
    with pytest.raises(TypeError, match=r"k is required\. Got no value for it\."):
        skrank.per_query_scores(spec.name, Y, S, qid=Q, **params)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.k == "required"], ids=spec_id)
def test_required_k_message_does_not_offer_none(spec):
    """A metric that requires k must not suggest None (no cutoff) when k=0 is passed."""
    for _, call in entry_points(spec):
        with pytest.raises(ValueError) as info:
            call(Y, S, qid=Q, **ok_params(spec, k=0))
        assert "Got 0 instead" in str(info.value)
        assert "None (no cutoff)" not in str(info.value), str(info.value)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.k == "none"], ids=spec_id)
def test_k_rejected_where_not_taken(spec):
    with pytest.raises(TypeError, match="'k'"):
        spec.function(Y, S, qid=Q, k=2, **ok_params(spec))
    with pytest.raises(TypeError, match=r"got unexpected option\(s\) 'k'\. Valid options: "):
        skrank.per_query_scores(spec.name, Y, S, qid=Q, k=2, **ok_params(spec))


# --------------------------------------------------------------------------------------
# qid
# --------------------------------------------------------------------------------------

FORMS = (r"Pass either flat 1-D arrays with qid, e\.g\. f\(y_true, y_score, qid=qid\) .*"
         r"or 2-D arrays of shape \(n_queries, n_documents\) without qid, one query per row")


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_missing_with_1d_input(spec):
    check_raises(spec, ValueError, r"qid is required with 1-D y_true and y_score: .*" + FORMS,
                 Y, S, **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_given_with_2d_input(spec):
    check_raises(spec, ValueError, r"qid must be None when y_true and y_score are 2-D "
                 r"\(each row is a query\)\. Got qid of type list\. " + FORMS,
                 [Y], [S], qid=Q, **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_not_1d(spec):
    check_raises(spec, ValueError, r"qid must be a 1-D array with one query id per row\. "
                 r"Got an array of shape \(1, 3\) instead\.", Y, S, qid=[Q], **ok_params(spec))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_qid_nan_and_unhashable(spec):
    check_raises(spec, ValueError, r"qid must not contain missing ids \(None, NaN, NaT or "
                 r"pandas\.NA\)\. Got 1 missing id\(s\), the first being nan, at row\(s\) 1\.",
                 Y, S, qid=[0.0, np.nan, 0.0], **ok_params(spec))
    qid = np.empty(3, dtype=object)
    qid[:] = [{}, {}, {}]
    check_raises(spec, TypeError, r"qid values must be hashable\. Got an unhashable id",
                 Y, S, qid=qid, **ok_params(spec))


# --------------------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------------------

CHOICES = ["ties", "no_relevant", "gain", "denominator"]


def _choice_cases():
    return [pytest.param(spec, name, bad, id=f"{spec.name}-{name}-{bad!r}")
            for spec in SPECS for name in CHOICES if name in spec.parameters
            for bad in ("bogus", None, 3)]


@pytest.mark.parametrize("spec, name, bad", _choice_cases())
def test_bad_choice(spec, name, bad):
    check_raises(spec, ValueError,
                 rf"{name} must be one of '[^.]*'\. Got {re.escape(repr(bad))} "
                 rf"\(type {type(bad).__name__}\) instead\.",
                 Y, S, qid=Q, **ok_params(spec, **{name: bad}))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_every_metric_rejects_ties_bogus(spec):
    check_raises(spec, ValueError, r"ties must be one of 'average', 'stable', 'pessimistic', "
                 r"'optimistic'\. Got 'bogus' \(type str\) instead\.",
                 Y, S, qid=Q, **ok_params(spec, ties="bogus"))


@pytest.mark.parametrize("spec", [s for s in SPECS if "average" not in s.ties], ids=spec_id)
def test_unsupported_tie_average(spec):
    supported = ", ".join(map(repr, spec.ties))
    check_raises(spec, ValueError,
                 rf"ties='average' is not supported: {spec.name} has no exact closed-form "
                 rf"average over the orderings of tied documents\. Use one of {supported}\.",
                 Y, S, qid=Q, **ok_params(spec, ties="average"))


BAD_REALS = {
    "threshold": [0, -1, np.nan, np.inf, -np.inf],
    "p": [0, 1, 1.5, -0.2, np.nan],
    "log_base": [1, 0.5, -2, np.nan, np.inf],
    "max_grade": [0, -1, np.nan, np.inf],
}
INTERVALS = {"threshold": r"\(0, inf\)", "p": r"\(0, 1\)",
             "log_base": r"\(1, inf\)", "max_grade": r"\(0, inf\)"}


def _real_cases():
    return [pytest.param(spec, name, bad, id=f"{spec.name}-{name}-{bad!r}")
            for spec in SPECS for name, bads in BAD_REALS.items() if name in spec.parameters
            for bad in bads]


@pytest.mark.parametrize("spec, name, bad", _real_cases())
def test_bad_real_option(spec, name, bad):
    check_raises(spec, ValueError,
                 rf"{name} must be a finite number in {INTERVALS[name]}\. "
                 rf"Got {re.escape(repr(float(bad)))} instead\.",
                 Y, S, qid=Q, **ok_params(spec, **{name: bad}))


@pytest.mark.parametrize("spec, name", [
    pytest.param(spec, name, id=f"{spec.name}-{name}")
    for spec in SPECS for name in BAD_REALS if name in spec.parameters])
def test_non_real_option(spec, name):
    for bad in ("1", None, True, [1]):
        check_raises(spec, TypeError, rf"{name} must be a real number\. "
                     rf"Got {re.escape(repr(bad))} \(type {type(bad).__name__}\) instead\.",
                     Y, S, qid=Q, **ok_params(spec, **{name: bad}))


@pytest.mark.parametrize("spec", [s for s in SPECS if takes_dcg_gain(s)], ids=spec_id)
def test_bad_gain_callable(spec):
    check_raises(spec, ValueError, r"the gain callable must return one gain per label "
                 r"\(shape \(3,\)\)\. Got shape \(1,\) instead\.",
                 Y, S, qid=Q, **ok_params(spec, gain=lambda r: r[:1]))

    def boom(labels):
        raise RuntimeError("boom")

    check_raises(spec, ValueError, r"the gain callable failed on the labels array: "
                 r"RuntimeError\('boom'\)", Y, S, qid=Q, **ok_params(spec, gain=boom))
    check_raises(spec, ValueError, r"the gain callable returned non-finite gains",
                 Y, S, qid=Q, **ok_params(spec, gain=lambda r: np.where(r > 1, np.inf, r)))


@pytest.mark.parametrize("spec", [s for s in SPECS if takes_dcg_gain(s)], ids=spec_id)
def test_gain_callable_negative_gains_stay_within_bounds(spec):
    """A callable may map labels to negative gains: the unbounded sums (CG, DCG) take
    them as they are; nDCG, bounded by [0, 1], rejects them."""
    y, s = [3.0, 0.0, 0.0], [0.0, 1.0, 2.0]  # best document ranked last
    params = ok_params(spec, y, gain=lambda r: r - 1)  # gains 2, -1, -1; ranked -1, -1, 2
    if spec.bounds is not None:
        check_raises(spec, ValueError, r"gain", y, s, qid=Q, **params)
        return
    expected = {"cg": -1 - 1 + 2,
                "dcg": -1 / np.log2(2) - 1 / np.log2(3) + 2 / np.log2(4)}[spec.name]
    assert spec.function(y, s, qid=Q, **params) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------
# per_query_scores specifics
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_per_query_scores_unknown_option(spec):
    valid = ", ".join(n for n in spec.parameters)
    with pytest.raises(TypeError, match=rf"got unexpected option\(s\) 'bogus', 'foo'\. "
                                        rf"Valid options: {re.escape(valid)}\."):
        skrank.per_query_scores(spec.name, Y, S, qid=Q, foo=1, bogus=2, **ok_params(spec))


# "ndcg@10" and "NDCG" are names of the one grammar (tests/test_plan.py), not unknown
@pytest.mark.parametrize("metric", ["bogus", None, 3, "ndgc@10"])
def test_per_query_scores_unknown_metric(metric):
    names = ", ".join(map(repr, skrank.METRICS))   # bpref, infap, judged last
    with pytest.raises(ValueError, match=rf"^per_query_scores: metric must be one of "
                                         rf"{re.escape(names)}\. Got {re.escape(repr(metric))} "
                                         rf"\(type {type(metric).__name__}\) instead\."):
        skrank.per_query_scores(metric, Y, S, qid=Q)


# --------------------------------------------------------------------------------------
# retrieved, no_relevant="raise"
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_bad_retrieved(spec):
    params = ok_params(spec)
    check_raises(spec, ValueError,
                 r"y_true and retrieved must have the same length\. Got 3 and 2\.",
                 Y, S, qid=Q, retrieved=[True, False], **params)
    mask_words = (r"retrieved must be None or a 1-D boolean mask of length n_samples "
                  r"\(False marks a judged document the system did not retrieve\)\. ")
    check_raises(spec, TypeError, mask_words + r"Got array of shape \(3,\) and dtype int\d+ "
                 r"instead\.", Y, S, qid=Q, retrieved=[1, 0, 1], **params)
    check_raises(spec, TypeError, mask_words + r"Got array of shape \(1, 3\) and dtype bool "
                 r"instead\.", Y, S, qid=Q, retrieved=[[True, False, True]], **params)
    check_raises(spec, ValueError, r"retrieved is only supported with 1-D input and qid\. " + FORMS,
                 [Y], [S], retrieved=[True, False, True], **params)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.takes_no_relevant], ids=spec_id)
def test_no_relevant_raise(spec):
    y = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    s = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    qid = ["a", "a", "b", "b", "c", "c"]
    check_raises(spec, ValueError,
                 r"2 queries have no relevant document, so the metric is undefined for them "
                 r"\(qid 'b', 'c'\)\. Choose what they count as with no_relevant='zero'",
                 y, s, qid=qid, **ok_params(spec, y, no_relevant="raise"))
    # nothing raised when every query is defined
    spec.function(y[:2], s[:2], qid=qid[:2], **ok_params(spec, y, no_relevant="raise"))


@pytest.mark.parametrize("name, fix", [("ndcg@0", "leave the cutoff out"),
                                       ("precision@0", "'precision@10'.")])
def test_zero_cutoff_in_a_name_says_what_it_got_and_the_fix(name, fix):
    with pytest.raises(skrank.InvalidParameterError, match="Got 0 instead") as info:
        skrank.evaluate([1, 0], [0.9, 0.1], qid=[1, 1], metrics=[name])
    assert fix in str(info.value)
    if name.startswith("precision"):
        assert "leave the cutoff out" not in str(info.value)


def test_object_ids_mixing_str_and_other_types_warn_once_at_the_call():
    """qid with str ids beside ints: 1 and '1' stay two queries (numpy's equality), and a
    warning says so, pointing at the caller's line; one type of id, or frames of qrels and
    run (compared as strings), give none."""
    import warnings

    y, s = [1, 0, 1, 1], [0.5, 0.2, 0.3, 0.1]
    mixed = np.array([1, 1, "1", "b"], dtype=object)
    with pytest.warns(UserWarning, match=r"ndcg_score: qid mixes str ids with ids of type int: "
                      r"an id such as 1 and the str '1' are different queries.*qid\.astype\(str\)"
                      ) as caught:
        value = skrank.ndcg_score(y, s, qid=mixed)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert value == skrank.ndcg_score(y, s, qid=[0, 0, 1, 2])  # three queries
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ids in (np.array([1, 1, 2, 3], dtype=object), np.array(["1", "1", "2", "b"], dtype=object)):
            skrank.ndcg_score(y, s, qid=ids)
