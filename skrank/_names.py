"""Metric names: ``"ndcg_exp@10"`` <-> (metric, parameters).

The grammar is ``<stem>[(<option>=<value>, ...)][@<k>]``.  Stems come
from the metric table's ``variants`` (``ndcg``, ``ndcg_exp``, ``map``, ...);
``k`` is any integer >= 1; the options in parentheses are the metric's other
options (``map(denominator=min)@10``, ``ndcg(ties=stable)``), as
:class:`skrank._plan.MetricCall` writes them.  trec_eval's measure names (``ndcg_cut.10``, ``P_5``, ``recip_rank``)
are accepted as aliases by :func:`parse_metric_name` with ``trec=True``.
"""

import difflib
import math
import re

from ._metrics import METRICS
from ._validation import InvalidParameterError

_NAME = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_]*?)(?:\((?P<options>[^()]*)\))?"
                   r"(?:@(?P<k>\d+))?$")
_OPTION = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>\S(?:.*\S)?)\s*$")
_QUOTED = re.compile(r"^(?P<q>['\"])(?P<text>.*)(?P=q)$")
_TREC_NAME = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_]*?)(?:[._](?P<k>\d+))?$")


def _stems(field="variants"):
    """Name stem -> (spec, fixed params), from the table's ``variants`` or ``trec_names``."""
    return {stem: (spec, dict(fixed))
            for spec in METRICS.values() for stem, fixed in getattr(spec, field).items()}


def _aliases():
    """Alias stem -> (spec, fixed params) of the variant it stands for (``P`` -> precision)."""
    return {alias: (spec, dict(spec.variants[stem]))
            for spec in METRICS.values() for alias, stem in spec.aliases.items()}


def _trec_cut_names():
    """trec_eval measures that only exist with a cutoff (ndcg_cut.10, P.5, ...)."""
    return {name for spec in METRICS.values() for name in spec.trec_cut}


def _trec_stems():
    return _stems("trec_names")


def grammar():
    """Human-readable list of valid names, for error messages and docs."""
    parts = []
    for stem, (spec, _) in _stems().items():
        if spec.k == "none":
            parts.append(stem)
        elif spec.k == "required":
            parts.append(f"{stem}@<k>")
        else:
            parts.append(f"{stem}[@<k>]")
    return ", ".join(parts)


def metric_help():
    """The grammar with its aliases, for ``--help``: ``ndcg[@<k>], ...; P@<k> = precision@<k>``."""
    aliases = [f"{alias}@<k> = {stem}@<k>" if spec.k == "required" else f"{alias} = {stem}"
               for spec in METRICS.values() for alias, stem in spec.aliases.items()]
    return "; ".join([grammar(), *aliases])


def judged_names(*, cutoff=10):
    """Names of the metrics that take judged= (``bpref``, ``infap``, ``judged@10``)."""
    from ._judged import JUDGED_SPECS

    return [spec.name if spec.k == "none" else f"{spec.name}@{cutoff}"
            for spec in JUDGED_SPECS.values()]


def metric_names(*, cutoffs=(1, 3, 5, 10, 20, 100)):
    """Canonical names: each stem without a cutoff (where allowed) and with common cutoffs."""
    names = []
    for stem, (spec, _) in _stems().items():
        if spec.k != "required":
            names.append(stem)
        if spec.k != "none":
            names.extend(f"{stem}@{k}" for k in cutoffs)
    return names


# A name as the grammar writes it, split into its stem and the rest (options, cutoff): a
# misspelt stem is corrected and the rest kept (ndgc(ties=stable)@37 -> ndcg(ties=stable)@37).
_STEM_AND_REST = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_-]*?)(?P<rest>(?:\([^()]*\))?"
                            r"(?:@\d+)?)$")
_TREC_STEM_AND_REST = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_]*?)(?P<rest>(?:[._]\d+)?)$")


def _closest(word, words):
    """The word of ``words`` closest to ``word`` ignoring case (difflib), or None."""
    lowered = {w.lower(): w for w in words}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def did_you_mean(name, *, judged=False, trec=False, also=()):
    """The valid name closest to a misspelt metric ``name``, or None: its stem corrected
    (case aside) with its options and cutoff kept, else the closest whole name among the
    names with common cutoffs (``judged``: with bpref, infap, judged@k; ``trec``: with
    trec_eval's stems; ``also``: further valid names, e.g. scikit-learn's scorers)."""
    text = str(name)
    stems = {stem: spec for stem, (spec, _) in {**_stems(), **_aliases()}.items()}
    if judged:
        from ._judged import JUDGED_SPECS

        stems.update((spec.name, spec) for spec in JUDGED_SPECS.values())
    pools = [(_STEM_AND_REST, stems)]
    if trec:
        pools.append((_TREC_STEM_AND_REST, {stem: None for stem in _trec_stems()}))
    for pattern, pool in pools:
        parts = pattern.match(text)
        stem = parts and _closest(parts["stem"], pool)
        if stem:
            rest = parts["rest"]
            if pool[stem] is not None and pool[stem].k == "required" and "@" not in rest:
                rest += "@10"
            if stem + rest != text:
                return stem + rest
    candidates = metric_names() + (judged_names() if judged else []) + list(also)
    if trec:
        candidates += list(_trec_stems())
    return _closest(text, [c for c in candidates if c != text])


def did_you_mean_hint(name, **kwargs):
    """``" Did you mean 'ndcg@10'?"`` for a misspelt name (see :func:`did_you_mean`), or ""."""
    close = did_you_mean(name, **kwargs)
    return f" Did you mean {close!r}?" if close else ""


#: Where the valid names are listed, for the messages about unknown names.
NAMES_LISTED = "skrank.get_scorer_names() lists them with common cutoffs"


def _unknown(name, func, trec, also=()):
    # (a judged metric's own name, where judged names are not read, is no suggestion)
    hint = did_you_mean_hint(name, judged=func == "evaluate", trec=trec, also=also)
    return InvalidParameterError(
        f"{func}: unknown metric name {name!r}.{hint} Valid names follow "
        f"'<metric>[@<k>]' with k an integer >= 1: {grammar()} "
        f"({NAMES_LISTED})."
        + (f" With judged=, also {', '.join(judged_names(cutoff='<k>'))}."
           if func == "evaluate" else "")
        + (" trec_eval names such as 'ndcg_cut.10', 'P.5', 'recip_rank' are accepted too."
           if trec else "")
        + (" scikit-learn's scorer names (sklearn.metrics.get_scorer_names()) are accepted "
           "too." if also else "")
    )


def parse_metric_name(name, *, func="skrank", trec=False, cutoff_given=False, also=()):
    """Return ``(spec, params)`` for a metric name such as ``"ndcg_exp@10"``.

    With ``trec=True`` trec_eval measure names are also accepted; with
    ``cutoff_given=True`` a metric that needs a cutoff may come without one
    (the caller passes ``k`` separately).  ``also``: other names the caller
    accepts, offered as suggestions when ``name`` is unknown.
    """
    if not isinstance(name, str):
        raise InvalidParameterError(f"{func}: a metric name must be a string such as 'ndcg@10'. "
                        f"Got {name!r} of type {type(name).__name__} instead.")
    match = _NAME.match(name)
    found = None
    stems = {**_stems(), **_aliases()}
    if match:
        stem = match["stem"]
        if stem not in stems:  # names are case-insensitive: NDCG@10, p@5
            stem = {s.lower(): s for s in stems}.get(stem.lower(), stem)
        if stem in stems:
            found = (*stems[stem], match["k"])
    if found is None and trec:
        tmatch = _TREC_NAME.match(name)
        if tmatch and tmatch["stem"] in _trec_stems():
            found = (*_trec_stems()[tmatch["stem"]], tmatch["k"])
            if tmatch["k"] is None and tmatch["stem"] in _trec_cut_names():
                raise InvalidParameterError(
                    f"{func}: the trec_eval measure {name!r} needs a cutoff here, e.g. "
                    f"'{name}.10' (trec_eval's default list of cutoffs is not expanded)."
                )
    if found is None:
        raise _unknown(name, func, trec, also)
    spec, params, k = found
    if match is not None and match["options"] is not None:
        for option, value in _parse_options(name, match["options"], func).items():
            if option == "k":
                raise InvalidParameterError(
                    f"{func}: the cutoff in {name!r} must be written after '@', e.g. "
                    f"'{match['stem']}@{value}'. Got it among the options instead.")
            if option in params:
                raise InvalidParameterError(
                    f"{func}: {match['stem']!r} already sets {option}={params[option]!r}, so "
                    f"{name!r} sets it twice. Use the plain metric name "
                    f"({spec.name!r}) with the option.")
            params[option] = value
    if k is not None:
        if spec.k == "none":
            raise InvalidParameterError(f"{func}: {spec.name} takes no cutoff, so {name!r} is not valid. "
                             f"Use {name.split('@')[0].split('.')[0]!r}.")
        if not 1 <= int(k) < 2 ** 63:  # beyond int64: no array could hold it
            raise InvalidParameterError(
                f"{func}: the cutoff in {name!r} must be an integer >= 1 and below 2**63. "
                f"Got {int(k)} instead. "
                f"Write e.g. '{name.split('@')[0]}@10'"
                + ("." if spec.k == "required" else ", or leave the cutoff out for none."))
        params["k"] = int(k)
    elif spec.k == "required" and not cutoff_given:
        raise needs_cutoff(func, spec, name)
    for option, value in spec.name_defaults.items():  # e.g. err's max_grade=4 (gdeval's)
        params.setdefault(option, value)
    return spec, params


def needs_cutoff(func, spec, name):
    """The error for a name without the cutoff its metric requires."""
    return InvalidParameterError(f"{func}: {spec.name} needs a cutoff: write e.g. '{name}@10' "
                                 f"(or give the option k=10).")


def _option_value(text):
    """An option's value as written: quoted text is a string, else an int, a float, or a word."""
    quoted = _QUOTED.match(text)
    if quoted:
        return quoted["text"]
    for convert in (int, float):
        try:
            value = convert(text)
        except ValueError:
            continue
        # 'nan' and 'inf' are words here (no_relevant=nan), not float('nan') or inf
        return value if convert is int or math.isfinite(value) else text
    return text


def _parse_options(name, text, func):
    """``"denominator=min, ties=stable"`` -> ``{"denominator": "min", "ties": "stable"}``."""
    options = {}
    for part in text.split(","):
        found = _OPTION.match(part)
        if found is None:
            raise InvalidParameterError(
                f"{func}: the options in {name!r} must be name=value pairs separated by "
                f"commas, e.g. 'map(denominator=min)@10'. Got {part.strip()!r} instead.")
        if found["name"] in options:
            raise InvalidParameterError(
                f"{func}: option {found['name']} is given twice in {name!r}.")
        options[found["name"]] = _option_value(found["value"])
    return options


def _show_default(value):
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _options_cell(spec):
    options = []
    for param in spec.params:
        if param.required:
            implied = getattr(spec, "name_defaults", {}).get(param.name)
            options.append(f"`{param.name}` (required" + (
                f"; {_show_default(implied)} in scorer names)" if implied is not None
                else ")"))
        else:
            options.append(f"`{param.name}={_show_default(param.default)}`")
    return ", ".join(options)


def _trec_cell(spec):
    trec = []
    for name, fixed in spec.trec_names.items():
        shown = f"`{name}.k`" if name in getattr(spec, "trec_cut", ()) else f"`{name}`"
        if fixed:
            shown += " (" + ", ".join(f"{k}={_show_default(v)}" for k, v in fixed.items()) + ")"
        trec.append(shown)
    return ", ".join(trec) or "-"


def _values_cell(spec):
    return "unbounded" if spec.bounds is None else f"[{spec.bounds[0]:g}, {spec.bounds[1]:g}]"


_CUT = {"optional": "[@k]", "required": "@k", "none": ""}


def metrics_markdown():
    """The metric table of docs/metric_families.md, generated from the declarations
    (``tests/test_declarations.py`` fails until the page holds this text)."""
    rows = ["| function | scorer names | options (default) | trec_eval | values | "
            "perfect ranking |",
            "|---|---|---|---|---|---|"]
    for spec in METRICS.values():
        names = [f"`{stem}{_CUT[spec.k]}`" for stem in spec.variants]
        names += [f"`{alias}{_CUT[spec.k]}` (alias of `{stem}`)"
                  for alias, stem in spec.aliases.items()]
        perfect = "depends on the query" if spec.perfect is None else f"{spec.perfect:g}"
        if spec.perfect_with:
            perfect += " with " + ", ".join(f"`{k}={_show_default(v)}`"
                                            for k, v in spec.perfect_with.items())
        rows.append(f"| `{spec.function.__name__}` | {', '.join(names)} | "
                    f"{_options_cell(spec)} | {_trec_cell(spec)} | {_values_cell(spec)} | "
                    f"{perfect} |")
    return "\n".join(rows) + "\n"


def judged_metrics_markdown():
    """The table of the metrics that take ``judged=`` in docs/metric_families.md,
    generated from their declarations (names for ``evaluate`` and ``per_query_scores``;
    they are no scorer names)."""
    from ._judged import JUDGED_SPECS

    rows = ["| function | names (evaluate, per_query_scores) | options (default) | trec_eval | "
            "values |",
            "|---|---|---|---|---|"]
    for spec in JUDGED_SPECS.values():
        rows.append(f"| `{spec.function.__name__}` | `{spec.name}{_CUT[spec.k]}` | "
                    f"{_options_cell(spec)} | {_trec_cell(spec)} | {_values_cell(spec)} |")
    return "\n".join(rows) + "\n"
