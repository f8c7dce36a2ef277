import sys

from scalinglab.cli import main

sys.exit(main())
