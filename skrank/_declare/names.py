"""Metric names: ``"ndcg_exp@10"`` <-> (metric, parameters): the one grammar.

Every spelling of a metric name goes through :func:`split_name` and
:func:`parse_metric_name`: ``<stem>[(<option>=<value>, ...)][<sep><k>]``.

- skrank's names: ``sep`` is ``@``, the stems come from the metric table's
  ``variants`` and ``aliases`` (``ndcg``, ``ndcg_exp``, ``map``, ``P``; case
  aside), the options in parentheses are the metric's other options
  (``map(denominator=min)@10``, ``ndcg(ties=stable)``), as
  :class:`skrank._plan.MetricCall` writes them;
- trec_eval's names (with ``trec=True``): ``sep`` is ``.`` or ``_`` (``ndcg_cut.10``,
  ``P.5``, ``P_5`` as trec_eval prints it) and the stems come from the table's
  ``trec_names`` (``recip_rank``, ``infAP``);
- the names of metrics that read an extra array (``bpref``, ``infap``,
  ``judged@10``: ``judged=``) are read where the caller can give it (``inputs``).

``k`` is checked by the metric's ``k`` :class:`~skrank._declare.params.Param` (an integer
>= 1), the one place that rule lives.

- trec_eval's own ``-m`` lists (``P.5,10``, ``rbp.p=0.8``, nicknames such as
  ``official``, printed rows such as ``P_5``) select measures of trec_eval mode
  (:data:`skrank._trec.measures.TREC_MEASURES`): :func:`select_measures` reads them as
  trec_eval's ``mark_measure`` does, :func:`is_trec_spec` says whether a name is one.
"""

import difflib
import math
import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

from .table import METRICS, SCORER_INPUTS
from .._trec.measures import NICKNAMES, TREC_MEASURES, UNSUPPORTED
from .._core.checks import InvalidParameterError

_NAME = re.compile(r"^(?P<stem>[A-Za-z][A-Za-z_-]*?)(?:\((?P<options>[^()]*)\))?"
                   r"(?:(?P<sep>[@._])(?P<k>\d+))?$")
_OPTION = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>\S(?:.*\S)?)\s*$")
_QUOTED = re.compile(r"^(?P<q>['\"])(?P<text>.*)(?P=q)$")


class NameParts(NamedTuple):
    """A metric name split by the grammar (nothing looked up yet)."""

    stem: str
    options: Optional[str]   # the text between the parentheses, or None
    sep: Optional[str]       # "@" (skrank's), "." or "_" (trec_eval's), or None
    k: Optional[str]         # the digits of the cutoff, or None

    @property
    def rest(self):
        """What follows the stem, as written."""
        return ("" if self.options is None else f"({self.options})") + (
            "" if self.k is None else f"{self.sep}{self.k}")

    @property
    def skrank_form(self):
        """Written as skrank writes names: no cutoff or an ``@`` cutoff."""
        return self.sep in (None, "@")

    @property
    def trec_form(self):
        """Written as trec_eval writes names: no options, no cutoff or a ``.``/``_`` one."""
        return self.sep != "@" and self.options is None and "-" not in self.stem


def split_name(name):
    """The :class:`NameParts` of ``name``, or None when it does not follow the grammar."""
    match = _NAME.match(name)
    return None if match is None else NameParts(match["stem"], match["options"],
                                                match["sep"], match["k"])


def _specs(inputs=()):
    """The declarations whose names a caller that can give the extra arrays ``inputs``
    takes: those that read no other input (``inputs=()``: the scorer names).  Every
    caller of ``(y_true, y_score, qid)`` can give :data:`~skrank._declare.table.SCORER_INPUTS`
    (a 2-D ``y_true`` of rows x subtopics)."""
    return [spec for spec in METRICS.values()
            if set(spec.inputs) <= set(inputs) | set(SCORER_INPUTS)]


def _stems(field="variants", inputs=()):
    """Name stem -> (spec, fixed params), from the table's ``variants`` or ``trec_names``."""
    return {stem: (spec, dict(fixed))
            for spec in _specs(inputs) for stem, fixed in getattr(spec, field).items()}


def _aliases(inputs=()):
    """Alias stem -> (spec, fixed params) of the variant it stands for (``P`` -> precision)."""
    return {alias: (spec, dict(spec.variants[stem]))
            for spec in _specs(inputs) for alias, stem in spec.aliases.items()}


def _trec_cut_names():
    """trec_eval measures that only exist with a cutoff (ndcg_cut.10, P.5, ...)."""
    return {name for spec in METRICS.values() for name in spec.trec_cut}


def _trec_stems(inputs=()):
    return _stems("trec_names", inputs)


def _with_cutoff(stem, spec, cutoff="<k>"):
    if spec.k == "none":
        return stem
    return f"{stem}@{cutoff}" if spec.k == "required" else f"{stem}[@{cutoff}]"


def grammar():
    """Human-readable list of valid scorer names, for error messages and docs."""
    return ", ".join(_with_cutoff(stem, spec) for stem, (spec, _) in _stems().items())


def metric_help():
    """The grammar with its aliases, for ``--help``: ``ndcg[@<k>], ...; P@<k> = precision@<k>``."""
    aliases = [f"{_with_cutoff(alias, spec)} = {_with_cutoff(stem, spec)}"
               for spec in _specs() for alias, stem in spec.aliases.items()]
    return "; ".join([grammar(), *aliases])


def judged_names(*, cutoff=10, inputs=("judged",)):
    """Names of the metrics that read one of the extra arrays ``inputs`` (``bpref``,
    ``infap``, ``judged@10``: ``judged=``)."""
    return [spec.name if spec.k == "none" else f"{spec.name}@{cutoff}"
            for spec in METRICS.values() if set(spec.inputs) & set(inputs)]


def metric_names(*, cutoffs=(1, 3, 5, 10, 20, 100)):
    """Canonical names: each stem without a cutoff (where allowed) and with common cutoffs."""
    names = []
    for stem, (spec, _) in _stems().items():   # the scorer names: no extra input
        if spec.k != "required":
            names.append(stem)
        if spec.k != "none":
            names.extend(f"{stem}@{k}" for k in cutoffs)
    return names


def _closest(word, words):
    """The word of ``words`` closest to ``word`` ignoring case (difflib), or None."""
    lowered = {w.lower(): w for w in words}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def did_you_mean(name, *, inputs=(), trec=False, also=()):
    """The valid name closest to a misspelt metric ``name``, or None: its stem corrected
    (case aside) with its options and cutoff kept, else the closest whole name among the
    names with common cutoffs (``inputs``: with the metrics reading those extra arrays,
    e.g. ``("judged",)``: bpref, infap, judged@k; ``trec``: with trec_eval's stems;
    ``also``: further valid names, e.g. scikit-learn's scorers)."""
    text = str(name)
    stems = {stem: spec for stem, (spec, _) in {**_stems(inputs=inputs),
                                                **_aliases(inputs)}.items()}
    pools = [("skrank_form", stems)]
    if trec:
        pools.append(("trec_form", {stem: None for stem in _trec_stems(inputs)}))
    parts = split_name(text)
    for form, pool in pools:
        stem = parts and getattr(parts, form) and _closest(parts.stem, pool)
        if stem:
            rest = parts.rest
            if pool[stem] is not None and pool[stem].k == "required" and "@" not in rest:
                rest += "@10"
            if stem + rest != text:
                return stem + rest
    candidates = metric_names() + judged_names(inputs=inputs) + list(also)
    if trec:
        candidates += list(_trec_stems(inputs))
    return _closest(text, [c for c in candidates if c != text])


def did_you_mean_hint(name, **kwargs):
    """``" Did you mean 'ndcg@10'?"`` for a misspelt name (see :func:`did_you_mean`), or ""."""
    close = did_you_mean(name, **kwargs)
    return f" Did you mean {close!r}?" if close else ""


#: Where the valid names are listed, for the messages about unknown names.
NAMES_LISTED = "skrank.get_scorer_names() lists them with common cutoffs"


def _unknown(name, func, trec, also=(), inputs=(), needs=()):
    """``needs``: the extra inputs that the metric ``name`` names reads and ``func``
    cannot be given (it is no suggestion then, and the message says so)."""
    hint = "" if needs else did_you_mean_hint(name, inputs=inputs, trec=trec, also=also)

    def listed(given):
        return ", ".join(judged_names(cutoff="<k>", inputs=(given,)))

    return InvalidParameterError(
        f"{func}: unknown metric name {name!r}.{hint} Valid names follow "
        f"'<metric>[@<k>]' with k an integer >= 1: {grammar()} "
        f"({NAMES_LISTED})."
        + "".join(f" With {given}=, also {listed(given)}." for given in inputs)
        + "".join(f" {listed(given)} read {given}=, which {func} is not given (evaluate and "
                  f"per_query_scores take it)." for given in needs)
        + (" trec_eval names such as 'ndcg_cut.10', 'P.5', 'recip_rank' are accepted too."
           if trec else "")
        + (" scikit-learn's scorer names (sklearn.metrics.get_scorer_names()) are accepted "
           "too." if also else "")
    )


def parse_metric_name(name, *, func="skrank", trec=False, inputs=(), cutoff_given=False,
                      also=(), trec_first=False):
    """Return ``(spec, params)`` for a metric name such as ``"ndcg_exp@10"``.

    With ``trec=True`` trec_eval measure names are also accepted; ``inputs``: the
    extra arrays the caller can give (``("judged",)``: the names of the metrics that
    declare them, bpref, infap, judged@k, are accepted too; ``()``: the scorer
    names); with
    ``cutoff_given=True`` a metric that needs a cutoff may come without one
    (the caller passes ``k`` separately).  ``also``: other names the caller
    accepts, offered as suggestions when ``name`` is unknown.  ``trec_first``: a name
    that both skrank and trec_eval read means trec_eval's measure (``rbp``: p=0.9, as
    on the command line, where names print as trec_eval's).
    """
    if not isinstance(name, str):
        raise InvalidParameterError(f"{func}: a metric name must be a string such as 'ndcg@10'. "
                        f"Got {name!r} of type {type(name).__name__} instead.")
    parts = split_name(name)
    found = None
    if parts is not None and parts.skrank_form:
        stems = {**_stems(inputs=inputs), **_aliases(inputs)}
        stem = parts.stem
        if stem not in stems:  # names are case-insensitive: NDCG@10, p@5
            stem = {s.lower(): s for s in stems}.get(stem.lower(), stem)
        found = stems.get(stem)
    if found is not None and trec and trec_first and parts.trec_form:
        theirs = _trec_stems(inputs).get(parts.stem)   # the same stem, other defaults
        found = found if theirs is None or theirs[1] == found[1] else theirs
    if found is None and trec and parts is not None and parts.trec_form:
        found = _trec_stems(inputs).get(parts.stem)
        if found is not None and parts.k is None and parts.stem in _trec_cut_names():
            raise InvalidParameterError(
                f"{func}: the trec_eval measure {name!r} needs a cutoff here, e.g. "
                f"'{name}.10' (trec_eval's default list of cutoffs is not expanded).")
    if found is None:
        raise _unknown(name, func, trec, also, inputs, _needs(parts, trec, inputs))
    spec, params = found
    for option, value in _parse_options(name, parts.options, func).items():
        if option == "k":
            raise InvalidParameterError(
                f"{func}: the cutoff in {name!r} must be written after '@', e.g. "
                f"'{parts.stem}@{value}'. Got it among the options instead.")
        if option in params:
            raise InvalidParameterError(
                f"{func}: {parts.stem!r} already sets {option}={params[option]!r}, so "
                f"{name!r} sets it twice. Use the plain metric name "
                f"({spec.name!r}) with the option.")
        params[option] = value
    if parts.k is not None:
        if spec.k == "none":
            raise InvalidParameterError(
                f"{func}: {spec.name} takes no cutoff, so {name!r} is not valid. "
                f"Use {parts.stem!r}.")
        params["k"] = _cutoff(spec, name, parts, func)
    elif spec.k == "required" and not cutoff_given:
        raise needs_cutoff(func, spec, name)
    for option, value in spec.name_defaults.items():  # e.g. err's max_grade=4 (gdeval's)
        params.setdefault(option, value)
    return spec, params


def _cutoff(spec, name, parts, func):
    """The cutoff written in ``name``, checked by the metric's ``k`` declaration (the
    one place that says what a cutoff may be); its error names the name."""
    k = int(parts.k)
    try:
        return spec.param("k").validate(func, k)
    except InvalidParameterError:
        raise InvalidParameterError(
            f"{func}: the cutoff in {name!r} must be an integer >= 1 and below 2**63. Got {k} "
            f"instead. "
            f"Write e.g. '{parts.stem}@10'"
            + ("." if spec.k == "required" else ", or leave the cutoff out for none.")
        ) from None


def _needs(parts, trec, inputs):
    """The extra inputs that the metric named by ``parts`` reads and the caller
    cannot give (``()``: no such metric): a scorer asked for bpref."""
    if parts is None:
        return ()
    every = tuple(name for spec in METRICS.values() for name in spec.inputs)
    spec = None
    if parts.skrank_form:
        stems = {stem.lower(): spec for stem, (spec, _) in
                 {**_stems(inputs=every), **_aliases(every)}.items()}
        spec = stems.get(parts.stem.lower())
    if spec is None and trec and parts.trec_form:
        spec = _trec_stems(every).get(parts.stem, (None,))[0]
    return () if spec is None else tuple(i for i in spec.inputs if i not in inputs)


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
    """``"denominator=min, ties=stable"`` -> ``{"denominator": "min", "ties": "stable"}``
    (``text`` None: no parentheses, no options)."""
    options = {}
    if text is None:
        return options
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
            implied = spec.name_defaults.get(param.name)
            options.append(f"`{param.name}` (required" + (
                f"; {_show_default(implied)} in scorer names)" if implied is not None
                else ")"))
        else:
            options.append(f"`{param.name}={_show_default(param.default)}`")
    return ", ".join(options)


def _trec_cell(spec):
    trec = []
    for name, fixed in spec.trec_names.items():
        shown = f"`{name}.k`" if name in spec.trec_cut else f"`{name}`"
        if fixed:
            shown += " (" + ", ".join(f"{k}={_show_default(v)}" for k, v in fixed.items()) + ")"
        trec.append(shown)
    return ", ".join(trec) or "-"


def _values_cell(spec):
    return "unbounded" if spec.bounds is None else f"[{spec.bounds[0]:g}, {spec.bounds[1]:g}]"


_CUT = {"optional": "[@k]", "required": "@k", "none": ""}


def metrics_markdown():
    """The metric table of docs/metric_families.md, generated from the declarations
    (``tests/test_declarations.py`` fails until the page holds this text): the
    metrics with scorer names."""
    rows = ["| function | scorer names | options (default) | trec_eval | values | "
            "perfect ranking |",
            "|---|---|---|---|---|---|"]
    for spec in _specs():
        if spec.family != "relevance":   # the diversity metrics: docs/diversity.md
            continue
        names = [f"`{stem}{_CUT[spec.k]}`" for stem in spec.variants]
        names += [f"`{alias}{_CUT[spec.k]}` (alias of `{stem}`)"
                  for alias, stem in spec.aliases.items()]
        perfect = "depends on the query" if spec.perfect is None else f"{spec.perfect:g}"
        if spec.perfect_with:
            perfect += " with " + ", ".join(f"`{k}={_show_default(v)}`"
                                            for k, v in spec.perfect_with.items())
        rows.append(f"| `{spec.function_name}` | {', '.join(names)} | "
                    f"{_options_cell(spec)} | {_trec_cell(spec)} | {_values_cell(spec)} | "
                    f"{perfect} |")
    return "\n".join(rows) + "\n"


def scorer_names_markdown():
    """The table of scorer names in docs/tuning.md, generated from the declarations
    (``tests/test_safety_nets.py`` fails until the page holds this text): each metric
    with scorer names, its stems with their cutoff forms and what the stems fix."""
    rows = ["| name | metric |", "|---|---|"]
    for spec in _specs():
        names = ", ".join(f"`{stem}{_CUT[spec.k]}`" for stem in spec.variants)
        names += "".join(f" (also `{alias}{_CUT[spec.k]}`)" for alias in spec.aliases)
        notes = [f"`{stem}`: " + ", ".join(f"{option}={_show_default(value)}"
                                            for option, value in fixed.items())
                 for stem, fixed in spec.variants.items() if fixed]
        notes += [f"{option}={_show_default(value)} unless given"
                  for option, value in spec.name_defaults.items()]
        if spec.k == "none":
            notes.append("takes no cutoff")
        text = spec.summary + (f" ({'; '.join(notes)})" if notes else "")
        rows.append(f"| {names} | {text} |")
    return "\n".join(rows) + "\n"


def family_markdown(family):
    """The table of the declarations of one family (``"diversity"``: docs/diversity.md;
    ``"beyond"``: docs/recommender.md), generated from them: names for ``evaluate`` (and
    scorer names, for the diversity metrics), options, values, aggregation."""
    rows = ["| function | names | options (default) | inputs | values | aggregation |",
            "|---|---|---|---|---|---|"]
    for spec in METRICS.values():
        if spec.family != family:
            continue
        names = [f"`{stem}{_CUT[spec.k]}`" for stem in [*spec.variants, *spec.aliases]]
        inputs = [f"`{name}`" if name != "subtopics" else "label matrix `y_true`"
                  for name in spec.inputs if name != "recommendations"]
        inputs += [f"`{name}` (optional)" for name in spec.optional_inputs
                   if name not in spec.inputs]
        aggregation = ("one value of the collection" if spec.aggregate == "collection"
                       else "mean over queries" if family != "beyond"
                       else "mean over the users where defined")
        rows.append(f"| `{spec.module}.{spec.function_name}` | {', '.join(names)} | "
                    f"{_options_cell(spec)} | {', '.join(inputs) or '-'} | "
                    f"{_values_cell(spec)} | {aggregation} |")
    return "\n".join(rows) + "\n"


def judged_metrics_markdown():
    """The table of the metrics that take ``judged=`` in docs/metric_families.md,
    generated from their declarations (names for ``evaluate`` and ``per_query_scores``;
    they are no scorer names)."""
    rows = ["| function | names (evaluate, per_query_scores) | options (default) | trec_eval | "
            "values |",
            "|---|---|---|---|---|"]
    for spec in METRICS.values():
        if "judged" in spec.inputs:
            rows.append(f"| `{spec.function_name}` | `{spec.name}{_CUT[spec.k]}` | "
                        f"{_options_cell(spec)} | {_trec_cell(spec)} | {_values_cell(spec)} |")
    return "\n".join(rows) + "\n"


# ---------------------------------------------------------------------------
# trec_eval's -m lists: measure.params, nicknames, printed rows.

_TREC_FUNC = "evaluate"
_TREC_LONG = re.compile(r"^\s*[+-]?\d+")
_TREC_DOUBLE = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def atol(text):
    """C's ``atol``: the leading integer of ``text``, or 0."""
    match = _TREC_LONG.match(text)
    return int(match.group()) if match else 0


def atof(text):
    """C's ``atof`` for the decimal forms trec_eval's parameters use, or 0."""
    match = _TREC_DOUBLE.match(text)
    return float(match.group()) if match else 0.0


@dataclass(frozen=True)
class Selected:
    """A measure to compute, with its parameters and its printed row names."""

    measure: object
    params: tuple
    names: tuple


_TREC_ROW_NAME = re.compile(r"^(?P<name>.+)_(?P<cut>\d+(?:\.\d+)?)$")


def trec_row_alias(spec):
    """``("P", "5")`` for a printed row name such as ``P_5`` of a cut measure, else None."""
    match = _TREC_ROW_NAME.match(spec)
    if match and match["name"] in TREC_MEASURES and \
            TREC_MEASURES[match["name"]].kind in ("cut_long", "cut_double"):
        return match["name"], match["cut"]
    return None


def is_trec_spec(spec):
    """Whether ``-m spec`` names a trec_eval measure or nickname (``P.5,10``), or a row
    trec_eval prints (``P_5``)."""
    base = spec.split(".", 1)[0]
    return (base in TREC_MEASURES or base in NICKNAMES or base in UNSUPPORTED
            or trec_row_alias(spec) is not None)


def _parse_trec_params(measure, text):
    name, kind = measure.name, measure.kind
    parts = text.split(",")
    if kind == "cut_long":
        cutoffs = sorted(atol(p) for p in parts)
        if cutoffs[0] <= 0:
            raise ValueError(f"{_TREC_FUNC}: the cutoffs of {name} must be positive integers. "
                             f"Got {name}.{text} instead; write e.g. {name}.5,10.")
        if len(set(cutoffs)) != len(cutoffs):
            raise ValueError(f"{_TREC_FUNC}: the cutoffs of {name} must be distinct. "
                             f"Got {name}.{text} instead.")
        return tuple(cutoffs), None
    if kind == "cut_double":
        cutoffs = sorted(atof(p) for p in parts)
        if len(set(cutoffs)) != len(cutoffs):
            raise ValueError(f"{_TREC_FUNC}: the cutoffs of {name} must be distinct. "
                             f"Got {name}.{text} instead.")
        return tuple(cutoffs), None
    if kind == "p_double":
        return tuple(atof(p) for p in parts), text
    if kind == "p_pair":
        pairs = []
        for part in parts:
            key, sep, value = part.partition("=")
            if not sep or not key or "=" in value:
                raise ValueError(
                    f"{_TREC_FUNC}: the parameters of {name} must be name=value pairs, e.g. "
                    f"{name}.p=0.8 or {name}.1=1,2=3. Got {name}.{text} instead.")
            pairs.append((key, atof(value)))
        return tuple(pairs), text
    return (), None


def _trec_row_names(measure, params, printable):
    if measure.kind == "cut_long":
        return tuple(f"{measure.name}_{k}" for k in params)
    if measure.kind == "cut_double":
        return tuple(f"{measure.name}_{v:3.2f}" for v in params)
    if printable is not None:
        return (f"{measure.name}_{printable}",)
    return (measure.name,)


def unknown_measure_error(spec):
    base = spec.split(".", 1)[0]
    if base in UNSUPPORTED:
        return ValueError(f"{_TREC_FUNC}: the trec_eval measure {base!r} (preference or judgement "
                          f"group measures) is not computed by skrank. Supported: "
                          f"{', '.join(TREC_MEASURES)}.")

    candidates = list(TREC_MEASURES) + list(NICKNAMES)
    close = _closest(base, candidates)
    # no trec_eval measure near: perhaps a skrank name without its '@' (mrrr, presicion)
    hint = (f" Did you mean {close + spec[len(base):]!r}?" if close
            else did_you_mean_hint(spec, inputs=("judged",)))
    return ValueError(f"{_TREC_FUNC}: unknown trec_eval measure {spec!r}.{hint} Valid: "
                      f"{', '.join(candidates)} (optionally name.params, e.g. P.5,10), or a skrank "
                      f"metric name such as ndcg@10.")


def select_measures(specs):
    """The measures ``-m spec ...`` select, in trec_eval's order (``official`` when none)."""
    specs = list(specs) or ["official"]
    marked, given, rows = set(), {}, {}
    for spec in specs:
        alias = trec_row_alias(spec)
        if alias is not None:  # P_5: the row trec_eval prints, as a cutoff of P
            marked.add(alias[0])
            rows.setdefault(alias[0], []).append(alias[1])
            continue
        base, dot, text = spec.partition(".")
        if dot and not text:
            raise ValueError(f"{_TREC_FUNC}: measure {spec!r} has an empty parameter list. "
                             f"Write e.g. '{base}.10', or '{base}' for its default cutoffs.")
        if base in NICKNAMES:
            marked.update(NICKNAMES[base])
            continue
        if base not in TREC_MEASURES:
            raise unknown_measure_error(spec)
        marked.add(base)
        if dot:
            given.setdefault(base, text)  # trec_eval uses the first parameters given
    selected = []
    for name, measure in TREC_MEASURES.items():
        if name not in marked:
            continue
        if name in given:
            params, printable = _parse_trec_params(measure, given[name])
        elif name in rows:
            params, printable = _parse_trec_params(measure, ",".join(dict.fromkeys(rows[name])))
        else:
            params, printable = measure.defaults, None
        selected.append(Selected(measure, params, _trec_row_names(measure, params, printable)))
    return selected
