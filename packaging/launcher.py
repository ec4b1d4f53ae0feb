"""Entry script of the bundled app: PyInstaller runs this file as ``__main__``."""

import sys

from etos_desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
