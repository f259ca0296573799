"""The runnable blocks of docs/install.md, for the tests that run them as written.

A block is a fenced ``sh`` block right after a ``<!-- install:NAME -->`` marker.
The ``settings`` block holds the only values a site changes; ``script`` puts
other values in their place and joins blocks into one shell script.
"""

import os
import re
import shlex

INSTALL_MD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "install.md")
_BLOCK = re.compile(r"<!-- install:([a-z0-9-]+) -->\n```sh\n(.*?)```", re.S)


def blocks():
    """``{name: text}`` of every marked block."""
    with open(INSTALL_MD, encoding="utf-8") as doc:
        return dict(_BLOCK.findall(doc.read()))


def settings():
    """``{variable: documented value}`` of the settings block."""
    found = {}
    for line in blocks()["settings"].splitlines():
        name, _, rest = line.partition("=")
        found[name.strip()] = shlex.split(rest, comments=True)[0]
    return found


def script(names, **values):
    """A ``set -eu`` shell script: the settings with ``values`` in their place, then the named blocks."""
    documented = settings()
    unknown = set(values) - set(documented)
    assert not unknown, "not a documented setting: {}".format(sorted(unknown))
    documented.update(values)
    lines = ["set -eu"] + ["{}={}".format(name, shlex.quote(value)) for name, value in documented.items()]
    return "\n".join(lines + [blocks()[name] for name in names])
