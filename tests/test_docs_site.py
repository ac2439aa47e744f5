"""The documentation site's own code, without building it (CI's docs job builds it).

* ``docs/_ext/skrank_api.py`` finds every public module and writes a page that lists
  every name of its ``__all__`` under public paths only;
* ``.ci/check_docs_site.py``'s link check finds a missing file, a missing anchor and
  an e-mail link made of a metric name, and passes a good page;
* every gallery example has a title and is found by the gallery's pattern.
"""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def api():
    return _load(ROOT / "docs" / "_ext" / "skrank_api.py", "skrank_api_under_test")


@pytest.fixture(scope="module")
def checker():
    return _load(ROOT / ".ci" / "check_docs_site.py", "check_docs_site_under_test")


def test_every_public_module_is_found(api):
    found = {name: (module, error) for name, module, error in api.public_modules()}
    for name in ("skrank", "skrank.io", "skrank.model_selection", "skrank.plot",
                 "skrank.datasets", "skrank.dask", "skrank.rankers"):
        assert name in found, f"{name} is not found as a public module"
        module, error = found[name]
        assert error is None, f"{name} does not import: {error!r}"
        assert hasattr(module, "__all__"), f"{name} has no __all__: it would have no page"
    assert not [n for n in found if any(p.startswith("_") for p in n.split("."))]


def test_module_pages_list_every_public_name_and_no_private_path(api):
    for name, module, error in api.public_modules():
        if error is not None or not hasattr(module, "__all__"):
            continue
        page = api._module_page(name, module)
        listed = re.findall(r"^   (\w+)$", page, flags=re.M)
        assert sorted(listed) == sorted(module.__all__), name
        assert f".. automodule:: {name}\n" in page
        assert "._" not in page, f"{name}'s page names a private path"


def test_generated_pages_follow_the_package(api, tmp_path):
    """A run of the generator writes one page per public module and an index, and
    removes the page of a module that is no longer public."""
    class App:
        srcdir = str(tmp_path)

    stale = tmp_path / "api" / "skrank.gone.rst"
    stale.parent.mkdir()
    stale.write_text("old")
    api.generate(App())
    pages = {p.name for p in (tmp_path / "api").glob("*.rst")}
    assert {"index.rst", "skrank.rst", "skrank.io.rst", "skrank.model_selection.rst"} <= pages
    assert "skrank.gone.rst" not in pages
    index = (tmp_path / "api" / "index.rst").read_text()
    assert all(f"   {p[:-4]}" in index for p in pages - {"index.rst"})


def test_every_public_function_has_examples(api):
    """The build warns (fails under -W) for a public function without an example;
    none lacks one today, and a function without one is found."""
    import types

    for name, module, error in api.public_modules():
        if error is None and hasattr(module, "__all__"):
            assert api.functions_without_examples(module) == [], name

    def documented():
        """Do a thing.

        Examples
        --------
        >>> documented()
        """

    def bare():
        """Do a thing."""

    fake = types.SimpleNamespace(__all__=["documented", "bare"], documented=documented,
                                 bare=bare)
    assert api.functions_without_examples(fake) == ["bare"]


def test_result_containers_document_their_fields(api):
    names = api.result_containers()
    assert "skrank.Evaluation" in names and "skrank.QueryScores" in names
    assert "skrank.ndcg_score" not in names


def _site(tmp_path, pages):
    for name, html in pages.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html)
    return tmp_path


def test_link_check_finds_broken_links(checker, tmp_path):
    site = _site(tmp_path, {
        "index.html": '<a href="api/page.html#ndcg">ok</a> <a href="api/page.html#nope">x</a>'
                      '<a href="missing.html">x</a> <img src="img/a.png">'
                      '<a href="mailto:nDCG@10">nDCG@10</a> <a href="https://example.org/">ext</a>'
                      '<a href="#top" id="top">top</a> <a href="api/">dir</a>',
        "api/page.html": '<h1 id="ndcg">nDCG</h1><a href="../index.html">up</a>',
        "api/index.html": "<p>api</p>",
        "img/a.png": "png",
        "_static/template.html": '<link href="{{ pathto(x) }}">',
    })
    n_pages, broken = checker.check_links(site)
    assert n_pages == 3                     # _static is the theme's, not pages
    assert len(broken) == 3, broken
    assert any("#nope" in b and "no id" in b for b in broken)
    assert any("missing.html" in b and "no such file" in b for b in broken)
    assert any("mailto:nDCG@10" in b for b in broken)


def test_link_check_passes_a_good_site(checker, tmp_path):
    site = _site(tmp_path, {"index.html": '<a href="b.html#x">b</a>',
                            "b.html": '<p id="x">b</p><a href="index.html">a</a>'})
    assert checker.check_links(site) == (2, [])


def test_gallery_examples_have_a_title():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 6
    for path in examples:
        text = path.read_text()
        match = re.match(r'"""\n(.+)\n(=+)\n', text)
        assert match, f"{path.name} does not start with a docstring title"
        assert len(match[2]) >= len(match[1]), f"{path.name}: title underline too short"


def test_browser_check_loads_every_gallery_example(checker, tmp_path):
    """The browser check loads the page of every example of the build (not a fixed list),
    one per examples/plot_*.py."""
    site = _site(tmp_path, {"auto_examples/index.html": "<p>gallery</p>",
                            "auto_examples/plot_b.html": "<p>b</p>",
                            "auto_examples/plot_a.html": "<p>a</p>",
                            "auto_examples/sg_execution_times.html": "<p>times</p>"})
    assert checker.gallery_pages(site) == [("gallery_a", "auto_examples/plot_a.html"),
                                           ("gallery_b", "auto_examples/plot_b.html")]
    # a metric's page and the table of every metric are checked for their equivalents
    assert "api/generated/skrank.map_score.html" in checker.EXPECT
    assert any(path.startswith("metric_families.html") for path in checker.EXPECT)


def test_shared_docstring_text_is_filled_in_once():
    """Parameters that several methods share are written once (skrank._core.docstrings):
    each method's docstring holds the text, indented as its own, and nothing is left of
    the field; other braces stay."""
    import inspect

    import skrank.model_selection as ms
    import skrank.plot as plot
    from skrank._core.docstrings import shared_doc

    @shared_doc(block="a : int\n    An a.\n")
    def f():
        """Title {"x", "y"}.

        Parameters
        ----------
        {block}
        """
    assert inspect.getdoc(f) == 'Title {"x", "y"}.\n\nParameters\n----------\na : int\n    An a.'
    with pytest.raises(ValueError, match=r"must hold \{other\} alone on one line. Got 0"):
        shared_doc(other="x")(f)
    pairs = [(plot.MetricAtKDisplay.from_estimator, plot.MetricDistributionDisplay.from_estimator),
             (ms.QueryKFold.split, ms.QueryShuffleSplit.split)]
    for first, second in pairs:
        params = [inspect.getdoc(m).split("Parameters\n----------\n")[1].split("\n\n")[0]
                  for m in (first, second)]
        assert params[0] == params[1] and "{" not in params[0]
        assert params[0].startswith(("estimator : ", "X : "))
