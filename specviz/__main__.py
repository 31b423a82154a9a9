"""``python -m specviz`` runs the ``specviz`` command."""

import sys

from specviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
