"""``python -m trinom.cli``: the ``trinom`` command."""

import sys

from .main import main

sys.exit(main())
