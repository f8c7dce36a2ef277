"""``python -m scalinglab.cli``: the same as the ``scalinglab`` command."""

import sys

from scalinglab.cli import main

if __name__ == "__main__":
    sys.exit(main())
