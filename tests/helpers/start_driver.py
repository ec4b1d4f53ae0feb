"""Run the app's real start-up in this process, offscreen, and answer the message boxes it shows.

``python -m tests.helpers.start_driver ANSWER...`` calls ``etos_desktop.app.main()`` as a launch
from the desktop menu would (stdin is no terminal). Each visible ``QMessageBox`` is recorded
(title, text, button texts) and answered by clicking the button whose text is the next ANSWER.
When the answers are used up and the main window shows, or when ``main`` returns, the record is
printed as one JSON line (the last line of stdout) and the process ends.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

#: Never hang the test that runs this.
_DEADLINE_MS = 40_000


def _finish(record: dict[str, Any], code: int) -> None:
    record["exit_code"] = code
    print(json.dumps(record), flush=True)
    os._exit(code)


def main() -> None:
    """Start the app and answer its boxes with ``sys.argv[1:]``."""
    answers = list(sys.argv[1:])
    record: dict[str, Any] = {"boxes": [], "window_shown": False}
    qt_app = QApplication(sys.argv[:1])
    # The boxes themselves, not their ids: a closed box is freed and its id reused by the next.
    seen: list[QMessageBox] = []

    def poll() -> None:
        from etos_desktop.ui.main_window import MainWindow

        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QMessageBox) and widget.isVisible() and widget not in seen:
                seen.append(widget)
                buttons = {b.text().replace("&", ""): b for b in widget.buttons()}
                record["boxes"].append(
                    {
                        "title": widget.windowTitle(),
                        "text": widget.text(),
                        "informative": widget.informativeText(),
                        "buttons": sorted(buttons),
                    }
                )
                if not answers:
                    _finish(record, 2)
                buttons[answers.pop(0)].click()
                return
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        if not answers and any(w.isVisible() for w in windows):
            record["window_shown"] = True
            _finish(record, 0)

    timer = QTimer(qt_app)
    timer.timeout.connect(poll)
    timer.start(50)
    QTimer.singleShot(_DEADLINE_MS, lambda: _finish({**record, "timed_out": True}, 3))
    from etos_desktop.app import main as app_main

    try:
        code = app_main([])
    except SystemExit as exc:
        code = int(exc.code or 0)
    _finish(record, code)


if __name__ == "__main__":
    main()
