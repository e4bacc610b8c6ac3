"""``python -m ssdlab``: see :mod:`ssdlab.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
