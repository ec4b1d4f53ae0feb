"""A marker for English UI texts kept in ``core/``, so ``lupdate`` extracts them without Qt.

``core/`` never imports Qt and never translates, yet a few of its texts are shown as they are
(the settings' descriptions). They stay English here, wrapped in :func:`QT_TRANSLATE_NOOP`
with a context: ``lupdate`` reads calls by that name in any module, and ``ui/`` translates
the same text at the edge with ``QCoreApplication.translate(context, text)``.
"""

from __future__ import annotations


def QT_TRANSLATE_NOOP(context: str, source: str) -> str:  # noqa: N802 (the name lupdate reads)
    """Mark ``source`` for translation in ``context``; returns it unchanged.

    Args:
        context: The translation context the UI translates the text in.
        source: The English text, a string literal (lupdate reads only literals).

    Returns:
        ``source``.
    """
    return source
