"""The text toolkit every layer shares: keyword segmentation, secrets, fencing, cleaning, write checks.

Pure functions of their input and Python's Unicode tables, the same on every machine. May import
the standard library, pure-Python packages (``snowballstemmer``) and ``core.errors``; never a layer
package (``core.memory``, ``core.summaries``, ``core.profile``), never Qt.
"""
