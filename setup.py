"""Packaging: the metadata is in setup.cfg; here only what setup.cfg cannot say on old setuptools.

The schema files (sql/) and the hook file (hooks/) are installed inside the
package, as predictor/sql and predictor/hooks, so that `db init` and
`hooks qmgr` find them in every layout, `pip install --target` included; an
editable install (`pip install -e`) leaves them in the checkout, where the
commands look next.
"""

import sys

from setuptools import find_packages, setup

PACKAGES = find_packages(include=["predictor", "predictor.*", "replay", "replay.*"])

if "editable_wheel" in sys.argv:
    # An editable install runs from the checkout, where the commands find sql/ and hooks/ beside the
    # package; mapping them in would make setuptools install an import finder and warn about it.
    setup(packages=PACKAGES, package_dir={"": "."})
else:
    setup(
        packages=PACKAGES + ["predictor.sql", "predictor.hooks"],
        package_dir={"predictor.sql": "sql", "predictor.hooks": "hooks"},
        package_data={"predictor.sql": ["*.sql"]},
    )
