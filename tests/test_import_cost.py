"""`import skrank` and the CLI import only what the call needs (fresh processes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sklearn", "sklearn.model_selection", "scipy.stats", "pandas", "matplotlib")
# `skrank evaluate` builds only its own parser: compare's (scipy.special) is not imported.
CLI_HEAVY = ("skrank._compare", "skrank._demo", "scipy.special")


def _run(code, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_skrank_and_a_metric_call_load_no_heavy_module():
    loaded = _run(
        "import json, sys, numpy as np, skrank\n"
        "skrank.ndcg_score([1, 0, 1], [0.3, 0.2, 0.1], qid=[1, 1, 2], k=2)\n"
        "skrank.evaluate([1, 0, 1], [0.3, 0.2, 0.1], qid=[1, 1, 2], metrics=['map', 'ndcg@2'])\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert loaded == []


def test_cli_does_not_import_scikit_learn():
    qrels = ROOT.parent / "shared" / "data" / "trec_eval" / "qrels.test"
    code = ("import json, sys, contextlib, io\nfrom skrank.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(sys.argv[1:])\n    except SystemExit:\n        pass\n"
            f"print(json.dumps([m for m in {HEAVY + CLI_HEAVY!r} if m in sys.modules]))")
    assert _run(code, "--help") == []
    assert _run(code, "evaluate", "--help") == []
    if qrels.exists():
        run = qrels.parent / "results.test"
        assert _run(code, "evaluate", str(qrels), str(run), "-m", "map", "-m", "ndcg_cut.10") == []


def test_scoring_strings_work_whichever_is_imported_first():
    for first, second in (("import skrank", "import sklearn.model_selection"),
                          ("import sklearn.model_selection", "import skrank"),
                          ("import skrank", "from skrank import get_scorer; get_scorer('map')")):
        got = _run(f"import json\n{first}\n{second}\nfrom sklearn.metrics import get_scorer\n"
                   "from sklearn.model_selection import cross_val_score\n"
                   "print(json.dumps([repr(get_scorer('ndcg_exp@37')), repr(get_scorer('ndcg@10'))]))")
        assert got == ["get_scorer('ndcg_exp@37')", "get_scorer('ndcg@10')"], (first, second)


def test_lazy_names_are_the_public_objects():
    import skrank
    from skrank import _compare
    from skrank import _scorer
    from skrank import plot

    assert skrank.compare is _compare.compare and skrank.Comparison is _compare.Comparison
    assert skrank.get_scorer is _scorer.get_scorer and skrank.RankingScorer is _scorer.RankingScorer
    assert skrank.plot is plot
    assert set(skrank.__all__) <= set(dir(skrank))


def test_import_skrank_does_not_load_scipy_special():
    # scipy.special costs 0.2 s; only the tie-expectation kernels need it, at call time.
    code = "import json, sys, skrank\nprint(json.dumps('scipy.special' in sys.modules))"
    assert _run(code) is False
