"""``python -m benchmarks.stress [--short] [--soak-seconds N] [--json PATH]``: run the stress suite."""

import sys

from benchmarks.stress.run import main

if __name__ == "__main__":
    sys.exit(main())
