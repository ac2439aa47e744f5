"""Sphinx configuration of skrank's documentation site.

Build (the README's command)::

    python -m pip install -e ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html

* The Markdown pages of ``docs/`` stay Markdown (MyST).
* The API reference is generated at build time from ``skrank.__all__`` and the
  ``__all__`` of each public module (``docs/_ext/skrank_api.py``): a new public
  name or module appears without editing the docs.
* The gallery is every ``examples/plot_*.py`` (sphinx-gallery): adding an
  example is dropping a file there.
* Intersphinx (links into scikit-learn, NumPy, SciPy, pandas, PyTorch) needs the
  network to fetch their inventories; it is enabled only when the environment
  variable ``SKRANK_DOCS_INTERSPHINX=1`` says the network is reachable, so that an
  offline build (this machine, CI) has no warning from it.  Without it, such
  references render as plain text.
"""

import os
import re
import sys
import warnings
from pathlib import Path

# One OpenMP thread for the examples' models (HistGradientBoosting), set before anything
# loads an OpenMP runtime: on a shared CI machine more threads than cores made the tuning
# example five times slower (72 s against 15 s measured here), not faster.
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(ROOT))  # the source tree's skrank, also without an install

import skrank  # noqa: E402

project = "skrank"
author = "skrank developers"
copyright = "skrank developers"
release = skrank.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "skrank_api",
    "repo_links",
    # MathJax copied into the site (_static/mathjax) instead of loaded from a CDN: the
    # formulas of the metric pages render offline, and no page fetches from the network.
    "sphinx-mathjax-offline",
]
if os.environ.get("SKRANK_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "pandas": ("https://pandas.pydata.org/docs", None),
        "torch": ("https://docs.pytorch.org/docs/stable", None),
    }

# Links from a page to a repository file outside docs/ (../README.md, ../benchmarks/...)
# point at the file in the repository (docs/_ext/repo_links.py).
repository_url = "https://github.com/skrank/skrank"
repository_branch = "main"
repository_root = str(ROOT)

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build", "images/make_images.py", "**/*.ipynb", "**.py.md5",
                    "auto_examples/*.py", "auto_examples/*.zip"]

# --- MyST: the Markdown pages --------------------------------------------------------
# Heading anchors so that links such as performance.md#scaling-out resolve.
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath"]

# --- API reference ---------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"inherited-members": False}
autodoc_typehints = "none"  # the numpydoc "Parameters" section says the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# An undocumented or unknown parameter in a public docstring is a build error (-W).
numpydoc_validation_checks = {"PR01", "PR02"}

# Left out of that check: result dataclasses whose fields are all documented under
# "Attributes" (found by skrank_api.result_containers(), not listed by hand), and two
# classes whose constructor is not skrank's to document:
# * skrank.rankers.QueryLGBMRanker takes LightGBM's LGBMRanker parameters unchanged,
#   in its constructor and fit (its docstrings say so; LightGBM documents them);
# * skrank.RankingScorer is built by get_scorer / make_ranking_scorer, which document
#   the parameters; its constructor is not a public entry point;
# * skrank.gbdt.CatBoostMetric likewise: catboost_metric builds it (a subclass named
#   after the metric) and documents the parameters.
import skrank_api  # noqa: E402

numpydoc_validation_exclude = {
    r"\.__call__$",  # a scorer's call: scikit-learn's (estimator, X, y) signature
    r"^skrank\.rankers\.QueryLGBMRanker(\.fit)?$",
    r"^skrank\.RankingScorer$",
    r"^skrank\.gbdt\.CatBoostMetric$",
    *("^" + re.escape(name) + "$" for name in skrank_api.result_containers()),
}


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out members that scikit-learn generates on skrank's classes (the
    ``set_*_request`` methods of metadata routing): scikit-learn documents them, and
    their docstrings refer to its own glossary."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)

# --- the gallery -------------------------------------------------------------------------
# Figures are drawn without a display.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("skrank",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"skrank": None},
    # A failing example fails the build.
    "only_warn_on_example_error": False,
    "abort_on_example_error": False,
    "remove_config_comments": True,
    "show_memory": False,
    "download_all_examples": False,
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
    "min_reported_time": 1,
}

# --- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skrank {release}"
html_static_path = ["_static"]
html_css_files = ["skrank.css"]
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 4,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    # Nothing fetched from the network when a page is read.
    "icon_links": [],
}
# Without a default mode the theme logs a console error on a first visit (empty storage).
html_context = {"default_mode": "light"}
html_show_sourcelink = False
html_copy_source = False
