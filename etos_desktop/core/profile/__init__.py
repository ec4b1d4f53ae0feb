"""The user profile (DESIGN §7): sections, pins, the refresh rule, the refresh workflow (ProfileWriter), storage; Qt-free.

May import ``core.storage``, ``core.context``, ``core.text``, ``core.providers`` and the other
shared modules of ``core``; never another layer package (``core.memory``, ``core.summaries``) nor
``core.transfer``. It reads the memories' and summaries' rows for a refresh through
``core.storage`` (tables and ``lookups``).
"""
