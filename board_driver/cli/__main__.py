"""``python -m board_driver.cli``: the same as the ``fairyboard`` command."""

import sys

from . import main

sys.exit(main())
