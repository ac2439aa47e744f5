"""Hostile values (issue 26): grades beyond int64, splits that cut a query,
options out of range. Each must be an error naming the argument, never a value."""

import warnings

import numpy as np
import pytest

import skrank
from skrank import InvalidParameterError, evaluate, ndcg_score
from skrank.io import Qrels


@pytest.mark.parametrize("make", [
    lambda: evaluate(qrels={"q": {"a": 2 ** 63, "b": 1}}, run={"q": {"a": 2., "b": 1.}}),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([2 ** 63, 1], dtype=np.uint64)),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=[2 ** 64, 1]),
    lambda: Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([-2.0 ** 64, 1.0])),
    lambda: Qrels.from_dict({"q": {"a": 2 ** 63}}),
    lambda: ndcg_score([1e308] * 3, [3, 2, 1], qid=[0] * 3),
    lambda: ndcg_score([[1e300, 0, 1]], [[3, 2, 1]]),
], ids=["evaluate-dict", "uint64", "python-int", "float", "from_dict", "1e308", "2d"])
def test_grades_beyond_int64_are_refused(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cast or overflow warning on the way
        with pytest.raises(ValueError, match=r"2\*\*63|must hold integers"):
            make()


def test_grades_inside_int64_keep_their_value():
    big = 2 ** 62
    qrels = Qrels(qid=["q", "q"], docno=["a", "b"], rel=np.array([big, 1], dtype=np.uint64))
    assert qrels.rel.tolist() == [big, 1]
    # nDCG is invariant to scaling linear grades: [2**62, 1] ranked 2nd then 1st.
    dcg = 1 + big / np.log2(3)
    ideal = big + 1 / np.log2(3)
    assert ndcg_score([big, 1], [1, 2], qid=[0, 0]) == pytest.approx(dcg / ideal)
