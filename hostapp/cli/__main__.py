"""``python -m hostapp.cli``."""

import sys

from hostapp.cli import main

sys.exit(main())
