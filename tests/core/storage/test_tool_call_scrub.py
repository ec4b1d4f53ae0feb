"""Migration v7 redacts secrets from tool-call arguments already stored with replies (issue 19)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from etos_desktop.core.chat.service import messages_to_wire
from etos_desktop.core.storage.database import Database
from etos_desktop.core.storage.tables import MessageRow
from etos_desktop.core.text.secrets import REDACTED, redact_json_text, redact_tool_transcript

API_KEY = "sk-abcdefghijklmnopqrstuvwx1234"


def transcript(arguments: str) -> str:
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "save_memory", "arguments": arguments}  # type: ignore[assignment]
    refusal = {"tool_call_id": "call_1", "content": "not saved: it looks like a secret"}
    rounds = [{"content": "", "tool_calls": [call], "results": [refusal]}]
    return json.dumps({"rounds": rounds, "final": "I won't keep that."})


def test_v7_scrubs_rows_stored_before_it(tmp_path: Path) -> None:
    path = tmp_path / "etos.db"
    db = Database(path, tmp_path / "backups")
    db.open()
    db.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "INSERT INTO conversation (id, title, created_at, updated_at) VALUES (1, 't', '2026-01-01', '2026-01-01')"
    )
    leaked = transcript(json.dumps({"content": f"my key is {API_KEY}", "kind": "fact"}))
    clean = transcript(json.dumps({"content": "The user likes green tea", "kind": "preference"}))
    for row_id, stored in ((1, leaked), (2, clean)):
        conn.execute(
            "INSERT INTO message (id, conversation_id, role, content, status, created_at,"
            " tool_calls_json) VALUES (?, 1, 'assistant', 'ok', 'complete', '2026-01-01', ?)",
            (row_id, stored),
        )
    conn.execute("PRAGMA user_version = 6")
    conn.close()

    db = Database(path, tmp_path / "backups")
    db.open()
    db.close()
    assert API_KEY.encode() not in path.read_bytes()
    assert (
        not Path(f"{path}-wal").exists() or API_KEY.encode() not in Path(f"{path}-wal").read_bytes()
    )
    conn = sqlite3.connect(path)
    rows = dict(conn.execute("SELECT id, tool_calls_json FROM message").fetchall())
    conn.close()
    assert rows[2] == clean  # nothing to redact: left byte for byte
    wire = messages_to_wire(
        MessageRow(id=1, conversation_id=1, role="assistant", content="ok", tool_calls_json=rows[1])
    )
    arguments = json.loads(wire[0]["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"content": f"my key is {REDACTED}", "kind": "fact"}
    assert [m["role"] for m in wire] == ["assistant", "tool", "assistant"]


def test_broken_json_arguments_are_redacted_as_text() -> None:
    broken = '{"content": "token: ' + API_KEY + '", "kind'
    assert API_KEY not in redact_json_text(broken)
    assert redact_json_text('{"content": "green tea"}') == '{"content": "green tea"}'


def test_transcripts_of_other_shapes_are_left_alone() -> None:
    assert redact_tool_transcript("not json " + API_KEY) == "not json " + API_KEY
    listed = json.dumps([{"id": "c", "function": {"name": "x", "arguments": API_KEY}}])
    assert API_KEY not in redact_tool_transcript(listed)
