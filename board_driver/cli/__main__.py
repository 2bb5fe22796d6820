"""``python -m board_driver.cli``: the same as the ``fairyboard`` command."""

import sys

from board_driver.cli import main

sys.exit(main())
