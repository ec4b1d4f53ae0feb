"""A conversation that shows every kind of thing the chat draws, made through the real app.

A user message, a reply with a paragraph, a link, a quote, inline code, a code block and a table,
a reply that saved a memory (its note), a failed reply (its status line and the error banner).
The contrast and accessibility tests render it; ``tools/screenshots.py`` photographs it.
"""

from __future__ import annotations

import json

from etos_desktop.app import EtosApp
from tests.helpers.chat_app import send
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, ToolCall

QUESTION = {
    "en": "How do I read a CSV file with “pandas”? Keep it short.",
    "zh": "怎么用 pandas 读取 CSV 文件？简单说说就好。",
}
ANSWER = {
    "en": """Use `pandas.read_csv` — it guesses the types for you:

```python
import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
print(df.head())
```

> Tip: pass `dtype=` when a column of IDs should stay text.

| option | what it does |
|---|---|
| `sep` | the separator, e.g. `";"` |
| `usecols` | read only these columns |

More in the [pandas guide](https://pandas.pydata.org/docs/user_guide/io.html).
""",
    "zh": """用 `pandas.read_csv` 就行，它会自动推断每列的类型：

```python
import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
print(df.head())
```

> 提示：编号之类的列想保留为文本时，传入 `dtype=`。

| 参数 | 作用 |
|---|---|
| `sep` | 分隔符，例如 `";"` |
| `usecols` | 只读取这些列 |

详见 [pandas 指南](https://pandas.pydata.org/docs/user_guide/io.html)。
""",
}
REMEMBER = {
    "en": "Remember that I use pnpm for JavaScript projects.",
    "zh": "记住：我的 JavaScript 项目都用 pnpm。",
}
MEMORY = {
    "en": "The user uses pnpm for JavaScript projects",
    "zh": "用户的 JavaScript 项目都用 pnpm",
}
NOTED = {"en": "Noted — I'll suggest pnpm from now on.", "zh": "好的，记住了，以后都按 pnpm 来。"}
LAST = {"en": "And how do I write it back?", "zh": "那怎么写回文件？"}


async def fill(app: EtosApp, server: FakeOpenAIServer, language: str = "en") -> None:
    """Have the showcase conversation in ``app`` (its chat content in ``language``)."""
    server.script(Text(ANSWER[language], chunks=4))
    await send(app, QUESTION[language])
    save = ToolCall("save_memory", json.dumps({"content": MEMORY[language], "kind": "preference"}))
    server.script(save, Text(NOTED[language]))
    await send(app, REMEMBER[language])
    server.script(*[Fault(500, "upstream overloaded")] * 4)
    await send(app, LAST[language])
