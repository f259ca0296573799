"""Packaging: the metadata is in setup.cfg; here only what setup.cfg cannot say on old setuptools.

The schema files (sql/) and the hook file (hooks/) are installed inside the
package, as predictor/sql and predictor/hooks, so that `db init` and
`hooks qmgr` find them in every layout, `pip install --target` included.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["predictor", "predictor.*", "replay", "replay.*"])
    + ["predictor.sql", "predictor.hooks"],
    package_dir={"predictor.sql": "sql", "predictor.hooks": "hooks"},
    package_data={"predictor.sql": ["*.sql"]},
)
