"""A site's PBS configuration folder, read into the scheduler model's values: ``qmgr.txt`` (the output of
``qmgr -c 'print server'``, optionally followed by ``print sched``), ``sched_config``, ``resource_group``
and ``pbsnodes.json`` (``pbsnodes -av -F json``), each optional."""

from .settings import Setting, Site, read_site

__all__ = ["read_site", "Site", "Setting"]
