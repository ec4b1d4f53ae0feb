"""Long-term memory (DESIGN §5): the engine, its store and search, supersession, per-turn retrieval, the tools, consolidation.

May import ``core.storage``, ``core.clock``, ``core.errors``, ``core.providers``, ``core.context``,
``core.text``, ``core.retrieval``, ``core.time_words``, ``core.jobs`` and numpy; never another layer package
(``core.summaries``, ``core.profile``) nor ``core.transfer``, which composes the layers' exports;
never Qt, qasync or APScheduler. The entry point is ``engine.MemoryEngine``; the FTS5 statements
are in ``fts.py``; the per-embedder numbers are in ``core/retrieval/tuning.py``.
"""
