"""`python -m maag.server` is the same as the `maag` command."""

import sys

from maag.server.cli import main

sys.exit(main())
