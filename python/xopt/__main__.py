"""``python -m xopt ...`` is the ``xopt`` command line (same flags, output and exit codes)."""

import sys

from xopt import main

if __name__ == "__main__":
    sys.exit(main())
