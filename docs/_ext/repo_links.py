"""Sphinx extension: links from a docs page to a repository file outside ``docs/``,
and no e-mail links made of metric names.

The Markdown pages are written to be read on the repository too, so they link to
files such as ``../README.md`` or ``../benchmarks/results/``.  Those files are not
pages of the site; such a link becomes a link to the file in the repository
(``repository_url`` in ``conf.py``), instead of a broken reference (a warning, a
failed build under ``-W``).  Only targets that exist in the working tree are
rewritten: a link to a missing file still fails the build.

reStructuredText turns any ``name@word`` into an e-mail link, so a default such as
``metric : str, default="ndcg@10"`` in a docstring became ``mailto:ndcg@10``.  An
"address" whose domain has no dot is text again (the site has no e-mail address;
``.ci/check_docs_site.py`` fails on any ``mailto:`` link that is left).
"""

import posixpath
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform


class NoMetricMailto(SphinxTransform):
    default_priority = 900

    def apply(self, **kwargs):
        for ref in list(self.document.findall(nodes.reference)):
            uri = ref.get("refuri", "")
            if uri.startswith("mailto:") and "." not in uri.rpartition("@")[2]:
                ref.replace_self(nodes.Text(ref.astext()))


class RepositoryLinks(SphinxPostTransform):
    # Before MyST's resolver (priority 9), which would warn about these targets.
    default_priority = 8

    def run(self, **kwargs):
        srcdir = Path(self.env.srcdir).resolve()
        root = Path(self.config.repository_root).resolve()
        base = self.config.repository_url.rstrip("/")
        branch = self.config.repository_branch
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst":
                continue
            docname = node.get("refdoc", self.env.docname)
            target = node["reftarget"]
            if node.get("refdomain") == "doc":
                if target in self.env.all_docs:
                    continue
                path = Path(target) if Path(target).is_absolute() else srcdir / target
                candidates = [path.with_name(path.name + suffix) for suffix in (".md", ".rst", "")]
                anchor = node.get("reftargetid") or ""
            else:
                relative = posixpath.normpath(posixpath.join(posixpath.dirname(docname), target))
                candidates = [srcdir / relative]
                anchor = ""
            found = next((c.resolve() for c in candidates if c.exists()), None)
            if found is None or found.is_relative_to(srcdir) or not found.is_relative_to(root):
                continue
            kind = "tree" if found.is_dir() else "blob"
            uri = f"{base}/{kind}/{branch}/{found.relative_to(root).as_posix()}"
            if anchor:
                uri += f"#{anchor}"
            link = nodes.reference("", "", refuri=uri, internal=False)
            link += node[0].deepcopy() if len(node) else nodes.literal(target, target)
            node.replace_self(link)


def setup(app):
    app.add_config_value("repository_url", "", "env")
    app.add_config_value("repository_branch", "main", "env")
    app.add_config_value("repository_root", "", "env")
    app.add_post_transform(RepositoryLinks)
    app.add_transform(NoMetricMailto)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
