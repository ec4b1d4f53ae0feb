"""``python -m etos_desktop``; the ``etos-desktop`` command calls the same ``main``."""

from __future__ import annotations

import sys


def main() -> int:
    """Run the app and return its exit code."""
    from etos_desktop.app import main as app_main

    return app_main()


if __name__ == "__main__":
    sys.exit(main())
