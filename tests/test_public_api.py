"""The public namespace and the docs follow the metric table."""

from pathlib import Path

import skrank
from skrank import METRICS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_metric_function_is_public_and_every_score_function_is_in_the_table():
    from skrank._judged import JUDGED_METRICS  # the metrics that take judged=

    functions = ({spec.function.__name__ for spec in METRICS.values()}
                 | {function.__name__ for function in JUDGED_METRICS.values()})
    exported = {name for name in skrank.__all__ if name.endswith("_score")}
    assert functions == exported
    for name in skrank.__all__:
        assert hasattr(skrank, name), name
    for spec in METRICS.values():
        assert getattr(skrank, spec.function.__name__) is spec.function


def test_scorer_names_come_from_the_table():
    stems = {stem for spec in METRICS.values() for stem in spec.variants}
    names = skrank.get_scorer_names()
    for stem in stems:
        assert any(n == stem or n.startswith(stem + "@") for n in names), stem


def test_user_guide_lists_every_metric_and_scorer_stem():
    text = "\n".join(p.read_text() for p in DOCS.glob("*.md"))
    for spec in METRICS.values():
        assert spec.function.__name__ in text, spec.function.__name__
        for stem in spec.variants:
            assert stem in text, stem


def test_public_functions_have_runnable_examples():
    for spec in METRICS.values():
        doc = spec.function.__doc__
        assert "Examples" in doc and ">>>" in doc, spec.name
        assert "Parameters" in doc and "Returns" in doc, spec.name
