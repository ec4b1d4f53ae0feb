"""A conversation that shows every kind of thing the chat draws, made through the real app.

A user message, a reply with a paragraph, a link, a quote, inline code, a code block and a table,
a reply that saved a memory (its note), a failed reply (its status line and the error banner).
Then a user profile: a refresh by the daily job (from the saved memory) and the user's edit of
it with a pinned line, so Settings → Profile shows pins and a history with a diff.
The contrast and accessibility tests render it; ``tools/screenshots.py`` photographs it.
"""

from __future__ import annotations

import json

from etos_desktop.app import EtosApp
from etos_desktop.core.profile.records import PinnedLine
from tests.helpers.chat_app import send
from tests.helpers.fake_openai_server import FakeOpenAIServer, Fault, Text, ToolCall, background

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

#: The profile the daily job writes from the saved memory.
PROFILE_REFRESHED = {
    "en": """## Identity
- Data analyst in Hangzhou; works in Python and pandas

## Communication style
- Prefers short answers (2026-01-01)

## Expertise
- pandas, SQL and CSV data cleaning

## Work style
- Uses pnpm for JavaScript projects (2026-01-01)""",
    "zh": """## 身份
- 在杭州做数据分析，主要用 Python 和 pandas

## 沟通风格
- 喜欢简短的回答（2026-01-01）

## 专业领域
- pandas、SQL 和 CSV 数据清洗

## 工作方式
- JavaScript 项目都用 pnpm（2026-01-01）""",
}
#: The user's edit of it: one line rewritten (and pinned), a section added.
PROFILE_EDITED = {
    "en": PROFILE_REFRESHED["en"].replace(
        "- Prefers short answers (2026-01-01)", "- Short answers, code first, no emoji"
    )
    + "\n\n## Goals\n- Learn Rust this year",
    "zh": PROFILE_REFRESHED["zh"].replace(
        "- 喜欢简短的回答（2026-01-01）", "- 回答要简短，先给代码，不要表情符号"
    )
    + "\n\n## 目标\n- 今年学会 Rust",
}
PINNED = {
    "en": PinnedLine("- Short answers, code first, no emoji", "communication_style"),
    "zh": PinnedLine("- 回答要简短，先给代码，不要表情符号", "communication_style"),
}


async def fill(app: EtosApp, server: FakeOpenAIServer, language: str = "en") -> None:
    """Have the showcase conversation in ``app`` (its chat content in ``language``)."""
    server.script(Text(ANSWER[language], chunks=4))
    await send(app, QUESTION[language])
    save = ToolCall("save_memory", json.dumps({"content": MEMORY[language], "kind": "preference"}))
    server.script(save, Text(NOTED[language]))
    await send(app, REMEMBER[language])
    server.script(*[Fault(500, "upstream overloaded")] * 4)
    await send(app, LAST[language])
    await fill_profile(app, server, language)


async def fill_profile(app: EtosApp, server: FakeOpenAIServer, language: str = "en") -> None:
    """A profile the daily job wrote from the saved memory, then edited and pinned by the user."""
    assert app.jobs is not None
    assert app.profile is not None
    server.script_when(background, Text(PROFILE_REFRESHED[language]))
    result = await app.jobs.refresh_profile()
    assert result.outcome == "changed", result
    await app.profile.save(PROFILE_EDITED[language], (PINNED[language],))


#: A reply with math (inline, display, a bad formula, money), a task list and a block quote
#: (tools/screenshots.py's math pictures).
MATH_QUESTION = {
    "en": "How do I solve a quadratic equation?",
    "zh": "一元二次方程怎么解？",
}
MATH_ANSWER = {
    "en": r"""For $ax^2 + bx + c = 0$ with $a \neq 0$, the roots are

$$
x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}
$$

The discriminant \(\Delta = b^2 - 4ac\) tells how many: two if $\Delta > 0$, one if $\Delta = 0$.
A sum for comparison: \[\sum_{k=1}^{n} k = \frac{n(n+1)}{2}\]
This one is broken and shows its source: $\frac{1}{2$. Prices stay text: $5 and $10.

- [x] Write it in standard form
- [x] Compute $\Delta$
- [ ] Check the roots

> A quadratic has at most two real roots; with $\Delta < 0$ they are complex.
""",
    "zh": r"""对于 $ax^2 + bx + c = 0$（$a \neq 0$），两个根是

$$
x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}
$$

判别式 \(\Delta = b^2 - 4ac\) 决定根的个数：$\Delta > 0$ 时两个，$\Delta = 0$ 时一个。
对照一个求和：\[\sum_{k=1}^{n} k = \frac{n(n+1)}{2}\]
这个公式写错了，会显示源码：$\frac{1}{2$。价格不算公式：$5 和 $10。

- [x] 化成一般式
- [x] 算出 $\Delta$
- [ ] 验算两个根

> 二次方程最多有两个实根；$\Delta < 0$ 时是一对复根。
""",
}


async def fill_math(app: EtosApp, server: FakeOpenAIServer, language: str = "en") -> None:
    """A conversation whose reply has formulas, a task list and a quote (in a new conversation)."""
    server.script(Text(MATH_ANSWER[language], chunks=6))
    await send(app, MATH_QUESTION[language])
