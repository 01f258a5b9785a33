"""``python -m strgm.cli ARGS`` runs the ``strgm`` command line."""

import sys

from strgm.cli import main

sys.exit(main())
