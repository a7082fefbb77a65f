"""``python -m detachlint``: the same as the ``detachlint`` command."""

import sys

from .cli import main

sys.exit(main())
