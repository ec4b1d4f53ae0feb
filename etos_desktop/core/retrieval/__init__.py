"""The retrieval toolkit the layers share: vectors, per-embedder tuning, recall gating, the memory block's label.

Finding stored text for a message is the same craft for memories (``core.memory.search`` and
``core.memory.retrieval``, the memory layer's own per-turn retrieval) and for session summaries
(``core.summaries.recall``): ``vectors`` chunks texts and stores and compares their embeddings,
``tuning`` holds the floors and weights measured for each embedder, ``gating`` tells a question
about the shared past from the rest, ``block`` labels the block both fill. The embedders
themselves are model providers (``core.providers.embedding``, ``core.providers.embedders``).

May import the standard library, numpy, ``core.providers``, ``core.context``, ``core.text``; never
a layer package (``core.memory``, ``core.summaries``, ``core.profile``), never Qt.
"""
