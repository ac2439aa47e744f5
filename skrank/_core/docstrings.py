"""Docstring text that several functions share, written once.

A docstring names a shared block by a field alone on its line (``{split_parameters}``);
:func:`shared_doc` puts the block there, indented as the field is.  Only the fields
given are replaced, so other braces of the docstring (``{"box", "violin"}``) stay as
they are.
"""

import textwrap


def shared_doc(**blocks):
    """Decorator: replace each ``{name}`` line of the function's docstring by the text
    ``blocks[name]`` (dedented, then indented as the field)."""
    def fill(obj):
        doc = obj.__doc__
        for name, text in blocks.items():
            field = "{" + name + "}"
            lines = doc.splitlines()
            at = [i for i, line in enumerate(lines) if line.strip() == field]
            if len(at) != 1:
                raise ValueError(f"shared_doc: the docstring of {obj.__qualname__} must hold "
                                 f"{field} alone on one line. Got {len(at)} such lines.")
            indent = lines[at[0]][:len(lines[at[0]]) - len(lines[at[0]].lstrip())]
            block = textwrap.indent(textwrap.dedent(text).strip("\n"), indent)
            doc = "\n".join([*lines[:at[0]], block, *lines[at[0] + 1:]])
        obj.__doc__ = doc
        return obj
    return fill
