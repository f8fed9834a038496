"""``python -m benchmarks [--quick] [--only stdio|http] [--json PATH]``: run the suite, print the table."""

import sys

from benchmarks.runner import main

if __name__ == "__main__":
    sys.exit(main())
