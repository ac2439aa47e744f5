"""Draw the pictures of the plot pages with the pages' own example code.

For each ``docs/plot_*.md``, the ``>>>`` examples run in order in one
namespace; at each picture link ``![...](images/NAME.png)`` the figure of the
variable ``display`` as it stands there is saved as ``docs/images/NAME.png``.
``demo.png`` is the figure of ``skrank demo`` with its defaults.
Run from anywhere: ``python docs/images/make_images.py [OUT_DIR]``.
"""

import doctest
import os
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
IMAGE = re.compile(r"!\[[^\]]*\]\(images/([\w.-]+\.png)\)")
DPI = 72  # small files: 460 x 345 pixels for matplotlib's default 6.4 x 4.8 inches


def render(page, out_dir):
    """Run ``page``'s examples and save its pictures in ``out_dir``; return their paths."""
    text = page.read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    namespace = {"__name__": f"docs.{page.stem}"}
    written, start = [], 0
    for match in IMAGE.finditer(text):
        _run(parser, text[start:match.start()], namespace, page)
        start = match.end()
        path = Path(out_dir) / match.group(1)
        namespace["display"].figure_.savefig(path, dpi=DPI)
        written.append(path)
    plt.close("all")
    return written


def _run(parser, text, namespace, page):
    for example in parser.get_examples(text):
        exec(compile(example.source, str(page), "exec"), namespace)


def main(out_dir=None):
    out_dir = Path(out_dir) if out_dir else Path(__file__).resolve().parent
    for page in sorted(DOCS.glob("plot_*.md")):
        for path in render(page, out_dir):
            print(f"{page.name} -> {path} ({path.stat().st_size:,} bytes)")
    from skrank.cli import main as skrank_main

    skrank_main(["demo", "-q", "--plot", str(out_dir / "demo.png")], out=open(os.devnull, "w"))
    print(f"skrank demo -> {out_dir / 'demo.png'}")


if __name__ == "__main__":
    main(*sys.argv[1:])
