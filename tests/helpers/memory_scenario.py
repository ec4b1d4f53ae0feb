"""The "remember I use pnpm" scenario of issue 5, shared by the core and UI memory tests."""

from __future__ import annotations

import json

from tests.helpers.fake_openai_server import ToolCall

PNPM = "The user uses pnpm to install JavaScript packages"
#: The model's answer to "remember I use pnpm": a save_memory tool call.
SAVE_PNPM = ToolCall("save_memory", json.dumps({"content": PNPM, "kind": "preference"}))
INSTALL_QUESTION = "How do I install this project's dependencies?"
