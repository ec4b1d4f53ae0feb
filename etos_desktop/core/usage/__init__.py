"""Token usage the servers reported, and what it cost at the user's prices; Qt-free.

The usage of a reply (``records.py``: on its message row) and of each background request
(``store.py``: the ``request_usage`` table, written through ``metering.py``), and the prices per
million tokens the user set per model (``prices.py``: cost estimates, never a made-up price).
It stands with what the layers stand on: it may import ``core.providers`` and ``core.storage``,
and no layer or what composes them is imported here.
"""
