"""Check-ins (issue 23): the companion starts a conversation now and then; Qt-free.

The rule (when one is due: ``rule.py``), the request and its workflow (``writing.py``), and the
check-in log with the conversations they start (``store.py``, ``access.py``). It reads the
profile and the recent summaries to write from, so it stands above the memory layers, as
``core.chat`` does: it may import them (``core.profile``, ``core.summaries``) and what they stand
on (``core.storage``, ``core.context``, ``core.text``, ``core.providers``, ``core.settings``);
no layer imports it.
"""
