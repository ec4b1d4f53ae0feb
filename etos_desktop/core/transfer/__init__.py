"""Export and import of every memory layer in one file, composed from each layer's own part.

Stands above the layers: ``document.py`` is the JSON file (format, limits, strict reading, the
whole-file document, preview and result), ``markdown.py`` the readable export, ``service.py`` the
:class:`~etos_desktop.core.transfer.service.TransferService` the UI calls. From other apps:
``foreign.py`` reads memory lists (ChatGPT's, Claude's, Markdown or text) into the same preview,
``cards.py`` character cards (SillyTavern, Character Card V1–V3) as the persona, over
``png_text.py``'s PNG text chunks. What is about a layer's
records stays in that layer (``core/memory/transfer.py``, ``core/summaries/transfer.py``,
``core/profile/transfer.py``), and no layer imports another, or this package, for it.

May import the layer packages, ``core.storage``, ``core.text``, ``core.errors``, ``core.context``
and ``core.settings``; never Qt.
"""
