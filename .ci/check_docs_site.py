"""Check the built documentation site in a real browser, and its internal links.

Usage: ``python .ci/check_docs_site.py docs/_build/html [--chromium PATH]``

1. A link check over the built HTML (no browser): every internal ``href``/``src``
   of every page points at a file of the build, and a ``#fragment`` at an id of
   the target page.
2. Headless Chromium (Debian's ``chromium``), driven through the DevTools protocol
   over a pipe (``--remote-debugging-pipe``: no port, no websocket, no Python
   package beyond the standard library), loads the site from a local HTTP server:
   the index, API pages (a metric's with its table of equivalents in other tools), a
   page of formulas, the table of every metric's equivalents, the gallery, every
   gallery example of the build (each must show a figure) and the search page.  On
   each page: no console error, no uncaught exception, no failed load (the browser's
   log); every image loaded with a non-zero size; every formula typeset by MathJax
   (served from the site: nothing is fetched from the network).  The search for
   ``ndcg_score`` must list the page of ``skrank.ndcg_score``.  Screenshots of the
   pages are written beside the site, to ``<build>/../screenshots/``.

Exits 1 with the list of problems when a check fails.
"""

import argparse
import base64
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

# Pages the browser loads: (name of the screenshot, path and query under the site), and
# every gallery example's page besides (gallery_pages: each must show a figure).
PAGES = [
    ("index", "index.html"),
    ("api_ndcg_score", "api/generated/skrank.ndcg_score.html"),
    ("api_map_score_equivalents", "api/generated/skrank.map_score.html"),
    ("api_module_skrank", "api/skrank.html"),
    ("api_class_per_query_display", "api/generated/skrank.plot.PerQueryDisplay.html"),
    ("metrics_formulas", "metrics.html"),
    ("metric_families_equivalents", "metric_families.html#every-metric-in-the-other-tools"),
    ("gallery", "auto_examples/index.html"),
    ("search_ndcg_score", "search.html?q=ndcg_score"),
]
SEARCH_EXPECT = "api/generated/skrank.ndcg_score.html"

# What a page must show (a CSS selector that must match, and the text of the match); the
# screenshot is taken with the first match at the top.  A metric's page shows its
# equivalents in other tools as a table (skrank/_declare/equivalents.py), and so does the
# table of every metric.
EXPECT = {
    "api/generated/skrank.ndcg_score.html": ("table", "ndcg_cut.10"),
    "api/generated/skrank.map_score.html": ("table", "label_ranking_average_precision_score"),
    "metric_families.html#every-metric-in-the-other-tools": ("table", "RetrievalMAP()"),
}


def gallery_pages(site):
    """``(screenshot name, path)`` of every gallery example's page of the build."""
    return [(f"gallery_{page.stem.removeprefix('plot_')}", f"auto_examples/{page.name}")
            for page in sorted((site / "auto_examples").glob("plot_*.html"))]

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--hide-scrollbars", "--window-size=1280,1000", "--remote-debugging-pipe",
]


# --------------------------------------------------------------------------------------
# 1. Link check over the built HTML
# --------------------------------------------------------------------------------------

class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key) and (key == "id" or tag == "a"):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) is not None:
                self.links.append((tag, attrs[key]))


def check_links(site):
    """Broken internal links of the built site, as ``'page: target (why)'`` strings."""
    pages = {}
    for path in site.rglob("*.html"):
        if path.relative_to(site).parts[0] == "_static":
            continue  # the theme's assets (templates among them), not pages
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[path.resolve()] = parser
    broken = []
    for page, parser in sorted(pages.items()):
        for tag, link in parser.links:
            parts = urllib.parse.urlsplit(link)
            if parts.scheme == "mailto":
                # The site has no e-mail address: docutils made one of text such as
                # nDCG@10 (write ``nDCG@10`` in reStructuredText).
                broken.append(f"{page.relative_to(site.resolve())}: <{tag}> {link} "
                              f"(an e-mail link made of text)")
                continue
            if parts.scheme or parts.netloc or link.startswith(("//", "data:", "javascript:")):
                continue  # external: not checked (no network here)
            if not parts.path:
                target = page
            else:
                path = urllib.parse.unquote(parts.path)
                target = (page.parent / path).resolve() if not path.startswith("/") \
                    else (site / path.lstrip("/")).resolve()
                if parts.path.endswith("/") or target.is_dir():
                    target = target / "index.html"
            where = f"{page.relative_to(site.resolve())}: <{tag}> {link}"
            if not target.is_relative_to(site.resolve()):
                broken.append(f"{where} (outside the site)")
            elif not target.exists():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if urllib.parse.unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no id {parts.fragment!r} in the page)")
    return len(pages), broken


# --------------------------------------------------------------------------------------
# 2. The browser
# --------------------------------------------------------------------------------------

class Chromium:
    """Headless Chromium driven by the DevTools protocol over its debugging pipe
    (the browser reads NUL-terminated JSON commands on fd 3, answers on fd 4)."""

    def __init__(self, executable, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="skrank-docs-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def pipes():  # in the child, before exec: the browser's fds 3 and 4
            a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=pipes, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:  # noqa: BLE001 - the process is ended below anyway
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                    raise RuntimeError(f"Chromium closed its pipe:\n{err}")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=True):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def drain(self, seconds):
        """Collect the events of the next ``seconds`` (late console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def open_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.send("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False})

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                 "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")


def _problems_in(events):
    """Console errors, uncaught exceptions and failed loads among the events."""
    found = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", "")))
                            for arg in params.get("args", []))
            found.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            found.append(f"uncaught exception: {text}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            entry = params["entry"]
            # The browser asks every site for /favicon.ico; this one has none.
            if entry.get("url", "").endswith("/favicon.ico"):
                continue
            found.append(f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}")
    return found


IMAGES_JS = """
(async () => {
  const images = [...document.images];
  for (const img of images) { img.loading = 'eager'; }
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done);
                            img.addEventListener('error', done); })));
  return {count: images.length,
          bad: images.filter(img => !(img.complete && img.naturalWidth > 0
                                      && img.naturalHeight > 0))
                     .map(img => img.currentSrc || img.src)};
})()
"""

# Formulas (Sphinx's .math elements) are typeset by MathJax, served by the site itself.
MATH_JS = """
(async () => {
  const math = [...document.querySelectorAll('span.math, div.math')];
  if (!math.length) { return {count: 0, unrendered: 0, mathjax: null}; }
  for (let i = 0; i < 300 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++) {
    await new Promise(done => setTimeout(done, 100));
  }
  if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    return {count: math.length, unrendered: math.length, mathjax: false};
  }
  await MathJax.startup.promise;
  return {count: math.length, mathjax: true,
          unrendered: math.filter(e => !e.querySelector('mjx-container')).length};
})()
"""

# The gallery's figures: the images sphinx-gallery scraped (class sphx-glr-single-img or
# sphx-glr-multi-img).
FIGURES_JS = "document.querySelectorAll('img.sphx-glr-single-img, img.sphx-glr-multi-img').length"

# The first element matching a selector whose text holds a string, scrolled to the top
# of the window (for the screenshot); whether there was one.
EXPECT_JS = """
(() => {
  const hit = [...document.querySelectorAll(%s)].find(e => e.textContent.includes(%s));
  if (hit) { hit.scrollIntoView({block: 'start'}); window.scrollBy(0, -80); }
  return Boolean(hit);
})()
"""

SEARCH_JS = """
(async () => {
  // Sphinx's search writes "Search finished, ..." into .search-summary when done.
  for (let i = 0; i < 300; i++) {
    const summary = document.querySelector('#search-results .search-summary');
    if (summary && summary.textContent.includes('finished')) { break; }
    await new Promise(done => setTimeout(done, 100));
  }
  return [...document.querySelectorAll('#search-results ul.search a')]
      .map(a => a.getAttribute('href'));
})()
"""


def check_pages(site, executable, screenshots):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    screenshots.mkdir(parents=True, exist_ok=True)
    problems = []
    browser = Chromium(executable)
    try:
        browser.open_page()
        gallery = gallery_pages(site)
        if not gallery:
            problems.append("auto_examples/: no gallery example page (plot_*.html) was built")
        for name, path in [*PAGES, *gallery]:
            browser.events.clear()
            browser.send("Page.navigate", {"url": base + path})
            browser.wait_for("Page.loadEventFired", timeout=60)
            images = browser.evaluate(IMAGES_JS)
            notes = [f"{images['count']} images"]
            for src in images["bad"]:
                problems.append(f"{path}: image did not load or has no size: {src}")
            if path.startswith("auto_examples/plot_"):
                figures = browser.evaluate(FIGURES_JS)
                notes.append(f"{figures} figures")
                if not figures:
                    problems.append(f"{path}: the example shows no figure")
                else:  # the screenshot shows the first figure
                    browser.evaluate("document.querySelector('img.sphx-glr-single-img, "
                                     "img.sphx-glr-multi-img').scrollIntoView({block: 'start'});"
                                     " window.scrollBy(0, -90)")
            math = browser.evaluate(MATH_JS)
            if math["count"]:
                notes.append(f"{math['count']} formulas")
                if not math["mathjax"]:
                    problems.append(f"{path}: MathJax did not load ({math['count']} formulas)")
                elif math["unrendered"]:
                    problems.append(f"{path}: {math['unrendered']} of {math['count']} formulas "
                                    f"not typeset")
            if path.startswith("search.html"):
                hits = browser.evaluate(SEARCH_JS)
                notes.append(f"{len(hits)} search results")
                if not any(SEARCH_EXPECT in (href or "") for href in hits):
                    problems.append(f"{path}: the search does not list {SEARCH_EXPECT} "
                                    f"(results: {hits[:10]})")
            browser.drain(0.5)
            problems += [f"{path}: {p}" for p in _problems_in(browser.events)]
            expect = EXPECT.get(path)
            if expect is not None:
                selector, text = expect
                found = browser.evaluate(EXPECT_JS % (json.dumps(selector), json.dumps(text)))
                if not found:
                    problems.append(f"{path}: no {selector} showing {text!r}")
                else:
                    notes.append(f"shows {text!r} in a {selector}")
            elif math["count"]:  # the screenshot shows typeset formulas
                browser.evaluate("document.querySelector('div.math, span.math')"
                                 ".scrollIntoView({block: 'start'})")
            shot = browser.send("Page.captureScreenshot", {"format": "png"})
            (screenshots / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
            print(f"  {path}: loaded, {', '.join(notes)}, screenshot {name}.png")
    finally:
        browser.close()
        server.shutdown()
    return problems


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built HTML folder (docs/_build/html)")
    parser.add_argument("--chromium", default=shutil.which("chromium"),
                        help="the browser executable (default: chromium on PATH)")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="folder for the screenshots (default: <site>/../screenshots)")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if not (site / "index.html").exists():
        parser.error(f"{site} has no index.html: build the site first")
    if not args.chromium:
        parser.error("no chromium on PATH (apt-get install chromium) and no --chromium given")
    screenshots = (args.screenshots or site.parent / "screenshots").resolve()

    started = time.monotonic()
    n_pages, broken = check_links(site)
    print(f"link check: {n_pages} pages, {len(broken)} broken internal links")
    for line in broken:
        print("  BROKEN", line)
    print(f"browser check ({args.chromium}):")
    problems = check_pages(site, args.chromium, screenshots)
    for line in problems:
        print("  PROBLEM", line)
    print(f"screenshots in {screenshots}; {time.monotonic() - started:.1f} s")
    if broken or problems:
        print(f"docs site check FAILED: {len(broken)} broken links, {len(problems)} problems")
        return 1
    print("docs site check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
