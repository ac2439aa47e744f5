"""``python -m skrank`` runs the ``skrank`` command."""

import sys

from .cli import main

sys.exit(main())
