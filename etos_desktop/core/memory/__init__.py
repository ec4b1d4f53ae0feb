"""Long-term memory (DESIGN §5): store, write policy, segmentation, embeddings, search, gating.

May import ``core.storage``, ``core.clock``, ``core.errors``, ``core.providers`` and numpy; never
Qt, qasync or APScheduler. The entry point is ``engine.MemoryEngine``; the FTS5 statements are in
``fts.py`` and the per-embedder numbers in ``tuning.py``.
"""
