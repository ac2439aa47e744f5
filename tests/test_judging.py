"""skrank.pool, skrank.judging: against slow, obviously-correct implementations,
scikit-learn (Cohen's kappa, confusion matrix), scipy (Kendall's tau) and the
krippendorff package; hand-computed examples written as formulas."""

import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

import skrank
from skrank.judging import (
    agreement,
    krippendorff_alpha,
    merge_qrels,
    ranking_agreement,
    read_pool,
    tau_ap,
)

# --------------------------------------------------------------------------------------
# pooling
# --------------------------------------------------------------------------------------


def _slow_pool(runs, depth, judged, budget, order):
    """Pools the way one would by hand: rank each run's query by score (ties: doc id
    descending), take the top depth, walk the runs round-robin."""
    names = list(runs)
    ranked = {}   # (run, query) -> docs best first
    for name, run in runs.items():
        for q, docs in run.items():
            items = sorted(docs.items(), key=lambda kv: kv[0], reverse=True)
            items = sorted(items, key=lambda kv: -kv[1])   # stable: doc desc within ties
            ranked[name, q] = [d for d, _ in items][:depth]
    out = []
    for q in sorted({q for run in runs.values() for q in run}):
        ranks = {}
        for j, name in enumerate(names):
            for r, d in enumerate(ranked.get((name, q), []), 1):
                if (q, d) not in judged:
                    ranks.setdefault(d, [0] * len(names))[j] = r
        rr_seq = []
        for r in range(1, max([len(v) for (n, qq), v in ranked.items() if qq == q] + [0]) + 1):
            for j, name in enumerate(names):
                docs = ranked.get((name, q), [])
                if r <= len(docs) and docs[r - 1] in ranks and docs[r - 1] not in rr_seq:
                    rr_seq.append(docs[r - 1])
        if order == "reciprocal_rank":
            mean_rr = {d: sum(1 / x for x in ranks[d] if x) / len(names) for d in ranks}
            rr_seq = sorted(rr_seq, key=lambda d: -mean_rr[d])   # stable: ties round-robin
        if budget is not None:
            rr_seq = rr_seq[:budget]
        out += [(q, d, ranks[d]) for d in rr_seq]
    return out


doc_ids = st.sampled_from([f"d{i}" for i in range(8)])
run_dicts = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                            st.dictionaries(doc_ids, st.sampled_from([0.1, 0.5, 0.9, 2.0]),
                                            min_size=1), min_size=1)


@settings(max_examples=60, deadline=None)
@given(runs=st.lists(run_dicts, min_size=1, max_size=3), depth=st.integers(1, 6),
       budget=st.one_of(st.none(), st.integers(1, 5)),
       order=st.sampled_from(["round_robin", "reciprocal_rank"]),
       judged=st.sets(st.tuples(st.sampled_from(["q1", "q2"]), doc_ids), max_size=4))
def test_pool_is_the_hand_made_pool(runs, depth, budget, order, judged):
    runs = {f"r{i}": run for i, run in enumerate(runs)}
    qrels = {}
    for q, d in judged:
        qrels.setdefault(q, {})[d] = 1
    p = skrank.pool(runs, depth=depth, qrels=qrels or None, budget=budget, order=order)
    expected = _slow_pool(runs, depth, judged, budget, order)
    got = list(zip(p.qid.tolist(), p.docno.tolist(), p.ranks.tolist()))
    assert got == expected


def test_pool_by_hand_depth_and_budget():
    runs = {"bm25": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}},
            "dense": {"q1": {"c": 0.9, "d": 0.8, "a": 0.1}}}
    p = skrank.pool(runs, depth=2)
    # round robin: bm25@1=a, dense@1=c, bm25@2=b, dense@2=d
    assert p.docno.tolist() == ["a", "c", "b", "d"]
    assert p.ranks.tolist() == [[1, 0], [0, 1], [2, 0], [0, 2]]
    assert p.retrieved_by() == [["bm25"], ["dense"], ["bm25"], ["dense"]]
    # reciprocal rank over depth 3: a (1 + 1/3)/2, c (1/3 + 1)/2 tie -> round robin; b 1/4; d 1/4
    p = skrank.pool(runs, depth=3, order="reciprocal_rank", budget=3)
    assert p.docno.tolist() == ["a", "c", "b"]
    assert skrank.pool(runs, depth=None, qrels={"q1": {"a": 0}}).docno.tolist() == ["c", "b", "d"]


def test_pool_write_read_roundtrip_and_judged_files(tmp_path):
    runs = {"x": {"q1": ["a", "b"], "q2": ["c"]}, "y": {"q1": ["b", "z"]}}
    p = skrank.pool(runs, depth=2)
    for name in ("pool.tsv", "pool.jsonl"):
        path = tmp_path / name
        p.write(path)
        back = read_pool(path)
        assert back.qid.tolist() == p.qid.tolist() and back.docno.tolist() == p.docno.tolist()
        order = [back.runs.index(r) for r in p.runs]
        assert back.ranks[:, order].tolist() == p.ranks.tolist()
        assert back.relevance is None
    judged = p.judge(lambda q, d: int(d in ("a", "z")))
    assert judged.relevance.tolist() == [int(d in ("a", "z")) for d in p.docno.tolist()]
    for name in ("judged.tsv", "judged.jsonl"):
        judged.write(tmp_path / name)
        back = read_pool(tmp_path / name)
        assert back.relevance.tolist() == judged.relevance.tolist()
        q = back.to_qrels()
        assert q.rel.tolist() == judged.relevance.tolist()
    # a judge fills in a column; blank cells are left out with a count
    lines = (tmp_path / "pool.tsv").read_text().splitlines()
    text = "\n".join([lines[0] + "\trelevance", lines[1] + "\t2", lines[2] + "\t"]
                     + [line + "\t0" for line in lines[3:]]) + "\n"
    (tmp_path / "by_hand.tsv").write_text(text)
    with pytest.warns(UserWarning, match=r"1 of 4 pairs .* have no relevance"):
        back = read_pool(tmp_path / "by_hand.tsv")
    assert back.relevance.tolist() == [2, 0, 0]
    (tmp_path / "bad.tsv").write_text(lines[0] + "\trelevance\n" + lines[1] + "\thigh\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: relevance must be an integer grade"):
        read_pool(tmp_path / "bad.tsv")
    (tmp_path / "bad.jsonl").write_text(json.dumps({"query_id": "q1"}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: expected a JSON object"):
        read_pool(tmp_path / "bad.jsonl")


def test_pool_errors():
    with pytest.raises(skrank.InvalidParameterError, match=r"int ids in runs \['a'\] and str "
                                                           r"ids in runs \['b'\]"):
        skrank.pool({"a": {1: ["d1"]}, "b": {"1": ["d1"]}})
    with pytest.raises(skrank.InvalidParameterError, match="depth"):
        skrank.pool({"a": {"q": ["d"]}}, depth=0)
    with pytest.raises(skrank.InvalidParameterError, match="order must be one of"):
        skrank.pool({"a": {"q": ["d"]}}, order="best")
    with pytest.raises(skrank.InvalidParameterError, match="runs must be a non-empty mapping"):
        skrank.pool([{"q": ["d"]}])
    with pytest.raises(ValueError, match="judge must return an integer grade. Got 'yes'"):
        skrank.pool({"a": {"q": ["d"]}}).judge(lambda q, d: "yes")


# --------------------------------------------------------------------------------------
# merging sources
# --------------------------------------------------------------------------------------


def _slow_resolve(sources, rule, prefer):
    pairs = {}
    for s in prefer:
        for q, docs in sources[s].items():
            for d, g in docs.items():
                pairs.setdefault((q, d), []).append((s, g))
    out = {}
    for key, given in pairs.items():
        if rule == "prefer":
            out[key] = given[0][1]   # sources visited in preference order
        else:
            votes = {}
            for _, g in given:
                votes[g] = votes.get(g, 0) + 1
            top = max(votes.values())
            out[key] = next(g for _, g in given if votes[g] == top)
    return out


grades = st.dictionaries(st.sampled_from(["q1", "q2"]),
                         st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(0, 2),
                                         min_size=1), min_size=1)


@settings(max_examples=40, deadline=None)
@given(sources=st.lists(grades, min_size=1, max_size=4), rule=st.sampled_from(["prefer", "majority"]),
       flip=st.booleans())
def test_merge_rules_against_the_slow_resolution(sources, rule, flip):
    sources = {f"s{i}": s for i, s in enumerate(sources)}
    prefer = list(sources)[::-1] if flip else list(sources)
    j = merge_qrels(sources)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        q = j.to_qrels(rule=rule, prefer=prefer)
    expected = _slow_resolve(sources, rule, prefer)
    assert dict(zip(zip(q.qid.tolist(), q.docno.tolist()), q.rel.tolist())) == expected
    conflicts = sum(len({g for s in sources.values() for g in [s.get(k[0], {}).get(k[1])]
                         if g is not None}) > 1 for k in expected)
    assert j.conflicts() == conflicts
    assert len(caught) == (1 if conflicts else 0)


def test_merge_by_hand_and_errors():
    j = merge_qrels({"human": {"q1": {"a": 2, "b": 0}}, "llm": {"q1": {"a": 1, "c": 1}},
                     "llm2": {"q1": {"a": 1}}})
    assert j.to_pandas()["source"].tolist() == ["human", "human", "llm", "llm", "llm2"]
    with pytest.warns(UserWarning, match=r"1 of 3 judged pairs have conflicting grades"):
        assert j.to_qrels(rule="majority").rel.tolist() == [1, 0, 1]   # a: 1 twice, 2 once
    with pytest.warns(UserWarning, match="rule='prefer'"):
        assert j.to_qrels().rel.tolist() == [2, 0, 1]
    assert j.to_qrels("human").rel.tolist() == [2, 0]
    with pytest.raises(ValueError, match=r"source 'h' judges document 'a' of query 'q1' 2 times"):
        merge_qrels({"h": skrank.io.Qrels(qid=["q1", "q1"], docno=["a", "a"], rel=[1, 0])})
    with pytest.raises(skrank.InvalidParameterError, match="prefer must list some of"):
        j.to_qrels(prefer=["robot"])
    with pytest.raises(skrank.InvalidParameterError, match="sources must be None"):
        j.to_qrels("robot")


# --------------------------------------------------------------------------------------
# agreement
# --------------------------------------------------------------------------------------


def _random_qrels(rng, n_queries, n_docs, p, grades=3):
    return {f"q{i}": {f"d{k}": int(rng.integers(0, grades)) for k in range(n_docs)
                      if rng.random() < p} for i in range(n_queries)}


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_and_confusion_are_sklearns(weights, seed):
    rng = np.random.default_rng(seed)
    a, b = _random_qrels(rng, 6, 12, 0.8), _random_qrels(rng, 6, 12, 0.8)
    res = agreement(a, b, weights=weights)
    common = [(q, d) for q in a for d in a[q] if d in b.get(q, {})]
    la, lb = [a[q][d] for q, d in common], [b[q][d] for q, d in common]
    assert res.n_common == len(common)
    assert res.kappa == pytest.approx(cohen_kappa_score(la, lb, weights=weights), abs=1e-12)
    assert res.confusion.tolist() == confusion_matrix(la, lb, labels=res.labels).tolist()
    for q, k, n in zip(res.qid.tolist(), res.per_query_kappa, res.per_query_n):
        pairs = [(x, y) for (qq, _), x, y in zip(common, la, lb) if qq == q]
        assert n == len(pairs)
        xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # per query, sklearn with the overall labels (its weights follow label positions)
            ref = cohen_kappa_score(xs, ys, labels=res.labels, weights=weights)
        assert (np.isnan(k) and np.isnan(ref)) or k == pytest.approx(ref, abs=1e-12)


def test_agreement_threshold_negative_grades_and_errors():
    a = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1}}
    b = {"q1": {"d1": 1, "d2": 2, "d3": 0, "d4": 1}}
    res = agreement(a, b, threshold=2)
    # binary: a = [1, 0, 0], b = [0, 1, 0] (d4 is unjudged in a)
    assert res.n_common == 3 and res.n_only_b == 1
    assert res.kappa == pytest.approx(cohen_kappa_score([1, 0, 0], [0, 1, 0]))
    with pytest.raises(ValueError, match="none shared"):
        agreement({"q1": {"x": 1}}, {"q2": {"x": 1}})
    with pytest.raises(skrank.InvalidParameterError, match="weights must be one of"):
        agreement(a, b, weights="cubic")


krippendorff = pytest.importorskip("krippendorff")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1])
def test_krippendorff_alpha_is_the_krippendorff_packages(level, seed):
    rng = np.random.default_rng(seed)
    judges = {f"j{i}": _random_qrels(rng, 4, 10, 0.7, grades=4) for i in range(3)}
    units = sorted({(q, d) for j in judges.values() for q in j for d in j[q]})
    data = np.array([[j.get(q, {}).get(d, np.nan) for q, d in units] for j in judges.values()],
                    dtype=float)
    if level == "ratio":   # ratio distances need positive grades to be comparable
        judges = {k: {q: {d: g + 1 for d, g in v.items()} for q, v in j.items()}
                  for k, j in judges.items()}
        data = data + 1
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(judges, level=level) == pytest.approx(ref, abs=1e-10)


def _alpha_by_query_with_the_package(judges, level):
    """Each query's alpha by the krippendorff package, query by query (a plain loop);
    NaN where the query's pairable judgements use one grade only."""
    domain = sorted({g for j in judges.values() for docs in j.values() for g in docs.values()})
    out = {}
    for q in sorted({q for j in judges.values() for q in j}):
        docs = sorted({d for j in judges.values() for d in j.get(q, {})})
        data = np.array([[j.get(q, {}).get(d, np.nan) for d in docs] for j in judges.values()],
                        dtype=float)
        pairable = (~np.isnan(data)).sum(axis=0) >= 2
        if not pairable.any():
            continue   # no pair judged twice: the query is left out
        used = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
        if used.shape[0] < 2:
            out[q] = (np.nan, int(pairable.sum()))
            continue
        out[q] = (krippendorff.alpha(reliability_data=data[:, pairable], value_domain=domain,
                                     level_of_measurement=level), int(pairable.sum()))
    return out


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_alpha_per_query_is_the_packages_on_each_query(level, seed):
    rng = np.random.default_rng(seed)
    judges = {f"j{i}": _random_qrels(rng, 12, 6, 0.6, grades=3 if seed else 2)
              for i in range(2 + seed)}
    judges["j0"]["q_one_grade"] = {"x": 1, "y": 1}      # undefined: one grade only
    judges["j1"]["q_one_grade"] = {"x": 1, "y": 1, "z": 0}
    judges["j0"]["q_unpaired"] = {"x": 1}                # no pair judged twice: left out
    judges["j1"]["q_unpaired"] = {"y": 0}
    if level == "ratio":
        judges = {k: {q: {d: g + 1 for d, g in v.items()} for q, v in j.items()}
                  for k, j in judges.items()}
    res = krippendorff_alpha(judges, level=level, per_query=True)
    ref = _alpha_by_query_with_the_package(judges, level)
    assert res.qid.tolist() == list(ref) and "q_unpaired" not in ref
    for q, got, n in zip(res.qid, res.per_query_alpha, res.per_query_n):
        want, want_n = ref[q]
        assert n == want_n
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-10)
    assert res.n_undefined == sum(np.isnan(a) for a, _ in ref.values()) >= 1
    assert res.alpha == krippendorff_alpha(judges, level=level)
    frame = res.to_pandas()
    assert list(frame.columns) == ["alpha", "n_pairs"] and frame.index.name == "qid"
    assert "n_undefined=" in repr(res)


def test_krippendorff_alpha_per_query_by_hand():
    # q1, nominal, 2 judges: [1, 0, 1] and [1, 0, 0] -> 1 - 5 * 2 / 18 (the overall example)
    # q2, interval, 3 judges on one pair: grades 0, 1, 2 -> m_u = 3, o_ck = 1/2 for c != k;
    # n = 3, n_c = 1 each: D_o = sum o_ck d_ck = (1 + 4 + 1) * 2 / 2 = 6,
    # D_e = sum n_c n_k d_ck = (1 + 4 + 1) * 2 = 12: alpha = 1 - (n - 1) * 6 / 12 = 0
    a = {"q1": {"x": 1, "y": 0, "z": 1}, "q2": {"w": 0}}
    b = {"q1": {"x": 1, "y": 0, "z": 0}, "q2": {"w": 1}}
    c = {"q2": {"w": 2}}
    res = krippendorff_alpha({"a": a, "b": b}, level="nominal", per_query=True)
    assert res.per_query_alpha[0] == pytest.approx(1 - 10 / 18)
    res = krippendorff_alpha({"a": a, "b": b, "c": c}, level="interval", per_query=True)
    assert res.qid.tolist() == ["q1", "q2"] and res.per_query_n.tolist() == [3, 1]
    assert res.per_query_alpha[1] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(skrank.InvalidParameterError, match="per_query must be True or False"):
        krippendorff_alpha({"a": a, "b": b}, per_query="yes")


# --------------------------------------------------------------------------------------
# system rankings
# --------------------------------------------------------------------------------------


def _slow_tau_ap(ref, est):
    order = sorted(range(len(est)), key=lambda i: -est[i])   # stable
    total = 0.0
    for i in range(1, len(order)):
        correct = sum(ref[order[j]] > ref[order[i]] for j in range(i))
        total += correct / i
    return 2 * total / (len(order) - 1) - 1


def _tau_ap_of_order(ref, order):
    """tau-AP of a strict order (best first) against ``ref`` (a pair tied in ``ref``
    is not correctly ordered)."""
    total = 0.0
    for i in range(1, len(order)):
        total += sum(ref[order[j]] > ref[order[i]] for j in range(i)) / i
    return 2 * total / (len(order) - 1) - 1


def _slow_tau_ap_a(ref, est):
    """tau_AP_a by its definition: the mean of tau-AP over EVERY way to break the
    estimate's ties (each tie group in each of its orders)."""
    groups = [[i for i in range(len(est)) if est[i] == v] for v in sorted(set(est), reverse=True)]
    values = [_tau_ap_of_order(ref, [i for group in parts for i in group])
              for parts in itertools.product(*(itertools.permutations(g) for g in groups))]
    return sum(values) / len(values)


def _slow_tau_ap_b(x, y):
    """tau_AP_b as Urbano and Marrero describe it, with loops: down each ranking's tie
    groups, each system outside the top group scores the share of the systems strictly
    above its group that the other ranking places strictly above it; 2 * mean - 1 per
    direction, and the mean of the two directions."""
    def one_way(ref, est):
        shares = []
        for i in range(len(est)):
            above = [j for j in range(len(est)) if est[j] > est[i]]
            if above:
                shares.append(sum(ref[j] > ref[i] for j in above) / len(above))
        return 2 * sum(shares) / len(shares) - 1
    return (one_way(x, y) + one_way(y, x)) / 2


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=9,
                unique_by=(lambda p: p[0], lambda p: p[1])))
def test_tau_ap_without_ties_is_the_loop_in_every_variant(pairs):
    ref, est = [p[0] for p in pairs], [p[1] for p in pairs]
    plain = _tau_ap_of_order(ref, sorted(range(len(est)), key=lambda i: -est[i]))
    assert tau_ap(ref, est) == pytest.approx(plain, abs=1e-12)
    assert tau_ap(ref, est, ties="error") == pytest.approx(plain, abs=1e-12)
    # tau_AP_b without ties: both directions of tau-AP averaged (not tau-AP itself)
    assert tau_ap(ref, est, ties="b") == pytest.approx((plain + tau_ap(est, ref)) / 2, abs=1e-12)
    assert tau_ap(ref, ref) == 1.0 and tau_ap(ref, [-v for v in ref]) == pytest.approx(-1.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.permutations(list(range(n))), st.lists(st.integers(0, 2), min_size=n, max_size=n))))
def test_tau_ap_a_is_the_mean_over_every_tie_breaking(data):
    ref, est = data
    got = tau_ap(ref, est, ties="a")
    assert got == pytest.approx(_slow_tau_ap_a(ref, est), abs=1e-12)
    assert -1 <= got <= 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=9)
       .filter(lambda ps: len({p[0] for p in ps}) > 1 and len({p[1] for p in ps}) > 1))
def test_tau_ap_b_is_the_loop_symmetric_and_in_range(pairs):
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    got = tau_ap(x, y, ties="b")
    assert got == pytest.approx(_slow_tau_ap_b(x, y), abs=1e-12)
    assert got == pytest.approx(tau_ap(y, x, ties="b"), abs=1e-12)
    assert -1 - 1e-12 <= got <= 1 + 1e-12
    assert tau_ap(x, x, ties="b") == pytest.approx(1.0)
    assert tau_ap(x, [-v for v in x], ties="b") == pytest.approx(-1.0)


# Urbano's ircor R package (tests/testthat/helper_data.R and test_tauAP.R): its data and
# its values, to 4 decimals: tauAP(x, y), tauAP_a(x, y.ties), tauAP_b(x, y),
# tauAP_b(x.ties, y.ties)
IRCOR = [
    ([0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
     [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
     [0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1],
     [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1], (.8519, .7454, .8333, .7321)),
    ([0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
     [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
     [0.3, 0.6, 0.2, 0.9, 0.6, 0.2, 0.7, 0.8, 0.7, 0.4],
     [0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6], (.2504, .2692, .2880, .2970)),
    ([0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
     [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
     [0.2, 0.6, 0.9, 0.1, 0.5, 0.6, 0.8, 0.4, 1, 0.4],
     [0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2], (-.6971, -.5558, -.6680, -.7047)),
]


@pytest.mark.parametrize("x, y, x_ties, y_ties, expected", IRCOR)
def test_tau_ap_variants_are_ircors(x, y, x_ties, y_ties, expected):
    got = (tau_ap(x, y), tau_ap(x, y_ties, ties="a"), tau_ap(x, y, ties="b"),
           tau_ap(x_ties, y_ties, ties="b"))
    assert got == pytest.approx(expected, abs=5e-5)
    assert tau_ap(y_ties, x_ties, ties="b") == pytest.approx(expected[3], abs=5e-5)


def test_tau_ap_ties_by_hand_and_errors():
    # the estimate ties all three: every order alike, the mean of tau-AP over the 6 orders
    # is 0 (2/(n-1) * sum_{k=1}^{2} (k/2)/k - 1 = 2/2 * 1 - 1)
    assert tau_ap([3, 2, 1], [5, 5, 5]) == pytest.approx(0.0, abs=1e-12)
    # ties at the bottom of [4, 3, 2, 1]: orders (C, D) -> 1, (D, C) -> tau_ap of a
    # bottom swap = 2 * (1 + 1 + 2/3) / 3 - 1; tau_AP_a is their mean
    assert tau_ap([4, 3, 2, 1], [4, 3, 1, 1]) == pytest.approx(
        (1 + 2 * (1 + 1 + 2 / 3) / 3 - 1) / 2)
    with pytest.raises(ValueError, match="with ties='a' .* reference must not tie"):
        tau_ap([1, 1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="with ties='error', reference and estimate must not "
                                         "tie. Got ties in estimate"):
        tau_ap([1, 2, 3], [1, 1, 3], ties="error")
    with pytest.raises(ValueError, match="tau_AP_b is undefined when one ranking ties every "
                                         "system. Got estimate"):
        tau_ap([1, 2, 3], [2, 2, 2], ties="b")
    with pytest.raises(skrank.InvalidParameterError, match="ties must be one of"):
        tau_ap([1, 2], [1, 2], ties="first")


def test_ranking_agreement_uses_the_tie_aware_tau_ap():
    # one query, relevant document "a" under the first qrels, "b" under the second;
    # p@1 of each system: 1 if it ranks the relevant document first
    runs = {"s1": {"q": {"a": 3, "b": 2, "c": 1}}, "s2": {"q": {"b": 3, "a": 2, "c": 1}},
            "s3": {"q": {"c": 3, "a": 2, "b": 1}}, "s4": {"q": {"a": 3, "c": 2, "b": 1}}}
    first, second = {"q": {"a": 1}}, {"q": {"b": 1}}
    res = ranking_agreement(runs, first, second, metric="p@1")
    a, b = list(res.mean_a.values()), list(res.mean_b.values())
    assert a == [1, 0, 0, 1] and b == [0, 1, 0, 0]
    assert res.tau_ap_ties == "b" and res.tau_ap == pytest.approx(_slow_tau_ap_b(a, b))
    assert "tau_ap_b=" in repr(res)
    # reference without ties: tau_AP_a, the mean over the orders of the estimate's ties
    graded = {"q": {"a": 3, "b": 2, "c": 1}}
    res = ranking_agreement(runs, graded, second, metric="ndcg@3")
    a, b = list(res.mean_a.values()), list(res.mean_b.values())
    assert len(set(a)) == 4 and len(set(b)) < 4
    assert res.tau_ap_ties == "a" and res.tau_ap == pytest.approx(_slow_tau_ap_a(a, b))
    forced = ranking_agreement(runs, graded, second, metric="ndcg@3", tau_ap_ties="b")
    assert forced.tau_ap == pytest.approx(_slow_tau_ap_b(a, b))
    with pytest.raises(ValueError, match="reference must not tie"):
        ranking_agreement(runs, first, second, metric="p@1", tau_ap_ties="a")
    with pytest.raises(skrank.InvalidParameterError, match="tau_ap_ties must be one of"):
        ranking_agreement(runs, first, second, metric="p@1", tau_ap_ties="c")
    # every system ties under the second qrels: tau_AP_b undefined, NaN as Kendall's tau
    nobody = {"q": {"z": 1}}
    res = ranking_agreement(runs, first, nobody, metric="p@1")
    assert np.isnan(res.tau_ap) and np.isnan(res.kendall_tau)


def test_tau_ap_by_hand():
    # top pair swapped: shares 0/1, 2/2, 3/3 -> 2 * (2/3) - 1; bottom pair: 1, 1, 2/3
    assert tau_ap([4, 3, 2, 1], [3, 4, 2, 1]) == pytest.approx(2 * (2 / 3) - 1)
    assert tau_ap([4, 3, 2, 1], [4, 3, 1, 2]) == pytest.approx(2 * ((1 + 1 + 2 / 3) / 3) - 1)
    assert tau_ap([1, 2, 3], [1, 2, 3]) == 1.0 and tau_ap([1, 2, 3], [3, 2, 1]) == -1.0


def test_ranking_agreement_with_scipy_and_brute_force():
    from scipy import stats

    rng = np.random.default_rng(3)
    human = _random_qrels(rng, 8, 15, 0.9)
    llm = {q: {d: (g if rng.random() < 0.7 else int(rng.integers(0, 3))) for d, g in docs.items()}
           for q, docs in human.items()}
    runs = {f"sys{i}": {q: {f"d{k}": float(rng.random()) for k in range(15)} for q in human}
            for i in range(5)}
    res = ranking_agreement(runs, human, llm, metric="ndcg@5")
    a = [skrank.evaluate(qrels=human, run=r, metrics=["ndcg@5"]).mean["ndcg@5"] for r in runs.values()]
    b = [skrank.evaluate(qrels=llm, run=r, metrics=["ndcg@5"]).mean["ndcg@5"] for r in runs.values()]
    assert list(res.mean_a.values()) == a and list(res.mean_b.values()) == b
    assert res.kendall_tau == pytest.approx(stats.kendalltau(a, b)[0])
    assert res.tau_ap == pytest.approx(_slow_tau_ap(a, b))
    names = list(runs)
    swapped = {frozenset((names[i], names[j])) for i, j in itertools.combinations(range(5), 2)
               if (a[i] - a[j]) * (b[i] - b[j]) < 0}
    assert {frozenset(p) for p in res.swapped} == swapped
    for first, second in res.swapped:
        assert res.mean_a[first] > res.mean_a[second]
    assert list(res.to_pandas().columns) == ["mean_a", "mean_b", "rank_a", "rank_b"]


def test_pool_rejects_nan_scores_and_duplicates():
    from skrank.io import Run

    with pytest.raises(ValueError, match="run 'a' must have a score for every document. Got NaN "
                                         "for query 'q', document 'x'"):
        skrank.pool({"a": Run(qid=["q", "q"], docno=["x", "y"], score=[np.nan, 1.0])})
    with pytest.raises(ValueError, match="run 'a' retrieves document 'x' twice for query 'q'"):
        skrank.pool({"a": Run(qid=["q", "q"], docno=["x", "x"], score=[2.0, 1.0])})


def test_krippendorff_alpha_by_hand_and_errors():
    # nominal, 3 pairs by 2 judges: [1, 0, 1] and [1, 0, 0]; coincidences o00 = o11 = 2,
    # o01 = o10 = 1, n = 6: alpha = 1 - (n - 1) * (o01 + o10) / (n0 * n1 * 2) = 1 - 5 * 2 / 18
    a, b = {"q": {"x": 1, "y": 0, "z": 1}}, {"q": {"x": 1, "y": 0, "z": 0}}
    assert krippendorff_alpha({"a": a, "b": b}, level="nominal") == pytest.approx(1 - 10 / 18)
    with pytest.raises(ValueError, match="at least 2 different grades"):
        krippendorff_alpha({"a": {"q": {"x": 1}}, "b": {"q": {"x": 1}}})
    with pytest.raises(skrank.InvalidParameterError, match="at least 2 judges"):
        krippendorff_alpha({"a": a})
    with pytest.raises(skrank.InvalidParameterError, match="level must be one of"):
        krippendorff_alpha({"a": a, "b": b}, level="binary")
