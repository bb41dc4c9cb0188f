"""``python -m grader``: the same as the ``graphgrade`` command (see :mod:`grader.commands.cli`)."""

import sys

from grader.commands.cli import main

sys.exit(main())
