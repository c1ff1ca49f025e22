"""``python -m serialref`` runs the command line."""

import sys

from serialref.cli import main

sys.exit(main())
