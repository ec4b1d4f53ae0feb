"""Session summaries (DESIGN §6): the rule, the writing workflow (request, reply rules, SummaryWriter), storage, injection and recall; Qt-free.

May import ``core.storage``, ``core.context``, ``core.retrieval``, ``core.text``, ``core.providers``
and the other shared modules of ``core``; never another layer package (``core.memory``,
``core.profile``) nor ``core.transfer``.
"""
