"""Session summaries (DESIGN §6): the rule, the detached generation's text, storage, injection and recall; Qt-free."""
