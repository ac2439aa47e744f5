"""Loading the real learning-to-rank sets of ``../shared/data/ltr`` for the tests.

The data live beside the repository (``<repo>/../shared/data/ltr``, see its
README.md) and are not shipped with skrank; every loader skips the calling test
with a clear reason when they are absent.

* ``lambdarank(split)``: LightGBM's lambdarank example, graded 0-4, sparse
  SVMlight with 300 feature indices (densified here), qid = 1..n_queries,
  rows of one query contiguous and sorted by qid.
* ``mq2008_vali()``: LETOR 4.0 MQ2008 fold 1 ``vali.txt``, graded 0-2, 46 dense
  features, CRLF line endings and trailing ``#docid = ...`` comments, large
  qids (15928-19997), sorted.
"""

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

LTR_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ltr"

__all__ = ["LTR_DIR", "ltr_path", "lambdarank", "mq2008_vali"]


def ltr_path(*parts):
    """Path of a file under ``../shared/data/ltr``; skips the test when it is absent."""
    path = LTR_DIR.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"learning-to-rank data not found: {path} (the tests read the LTR sets "
                    f"from ../shared/data/ltr beside the repository; see its README.md)")
    return path


@lru_cache(maxsize=None)
def _load(relative):
    from sklearn.datasets import load_svmlight_file

    X, y, qid = load_svmlight_file(str(LTR_DIR / relative), query_id=True)
    X = np.ascontiguousarray(X.toarray())
    # read-only copies: the cache hands the same arrays to every test
    for a in (X, y, qid):
        a.setflags(write=False)
    return X, y, qid


def _copies(relative):
    X, y, qid = _load(relative)
    return X.copy(), y.copy(), qid.copy()


def lambdarank(split="train"):
    """``(X, y, qid)`` of LightGBM's lambdarank example (``split`` "train" or "test")."""
    relative = f"lightgbm_lambdarank/rank.{split}.svmlight"
    ltr_path(*relative.split("/"))
    return _copies(relative)


def mq2008_vali():
    """``(X, y, qid)`` of MQ2008 fold 1 ``vali.txt`` (the original file, CRLF + comments)."""
    relative = "letor_mq2008_fold1/vali.txt"
    ltr_path(*relative.split("/"))
    return _copies(relative)
