"""The Settings dialog: model providers, the companion's persona and general settings.

DESIGN §4 (providers, persona, first run) and §9 (keys only in the keyring or the 0600 file).

The pages edit copies: nothing reaches the ``SettingsStore`` or the ``SecretStore`` until Save,
except three explicit one-step actions of the Providers page (remove a provider after a
confirmation, make one the default, and the first-run "Use the local server" button), which save
at once. Network work runs as tasks on the qasync loop, kept referenced until they end; keyring
calls run in a worker thread because an unlock prompt or a slow D-Bus can block. The local-server
probe and the provider factory (inside the registry) are injected, so this module never imports
``openai``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, Qt, Signal
from PySide6.QtGui import QAction, QFont, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.context.language import Language, language_for_locale
from etos_desktop.core.context.model_limits import context_window_for
from etos_desktop.core.context.prompts import DEFAULT_PERSONA_NAME, DEFAULT_PERSONA_PROMPT
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.providers.base import ChatRequest
from etos_desktop.core.providers.config import (
    ENVIRONMENT_PROVIDER_ID,
    ProviderConfig,
    environment_provider,
    new_provider_id,
    normalise_base_url,
)
from etos_desktop.core.providers.presets import CUSTOM, PRESETS, Preset, preset, preset_for_url
from etos_desktop.core.providers.registry import ProviderRegistry
from etos_desktop.core.providers.secrets import SecretStore
from etos_desktop.core.settings.schema import SETTINGS, SettingSpec, spec_for, validate
from etos_desktop.core.settings.store import MAX_MODEL_CONTEXT, MIN_MODEL_CONTEXT, SettingsStore
from etos_desktop.resources import resource_path
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.task_set import TaskSet

if TYPE_CHECKING:
    from etos_desktop.core.memory.access import MemoryAccess
    from etos_desktop.ui.memory_page import MemoryPage

_log = logging.getLogger(__name__)

#: Finds which of the given base URLs answer as a model server (``probe_local_servers``).
ProbeFunction = Callable[[Sequence[str]], Awaitable[list[str]]]
#: Produces a translated text when called, so a shown message can be re-translated.
TextFactory = Callable[[], str]

#: The settings sections the General page is built from.
GENERAL_SECTIONS: tuple[str, ...] = ("ui", "chat")
#: Names of the pages, in the order of the page list.
PAGE_NAMES: tuple[str, ...] = ("providers", "persona", "general")
#: The page shown after them when the dialog is given the memory access.
MEMORY_PAGE_NAME = "memory"

AVATAR_SIZE = 64
_STATE_COLORS = {"ok": "#2e7d32", "error": "#c62828", "warning": "#a15c00"}
#: The content of the one-token request "Test connection" sends.
_TEST_PROMPT = "Hi"
_SECTION_TITLES = {"ui": "Interface", "chat": "Chat"}
#: Display names of choice values. Language names are written in their own language, as
#: language pickers do, so they are not translated.
_CHOICE_NAMES: Mapping[object, str] = {
    "auto": "Automatic",
    "system": "Same as the system",
    "light": "Light",
    "dark": "Dark",
    "ask": "Ask every time",
    "notify": "Save and notify",
    "never": "Never",
}
_NATIVE_CHOICE_NAMES: Mapping[object, str] = {"en": "English", "zh": "中文"}


# -- small helpers ----------------------------------------------------------------------------


def _schema_tr(text: str) -> str:
    # The schema's descriptions are English source text for the UI to translate (schema.py).
    return QCoreApplication.translate("SettingsSchema", text)


def _set_state(label: QLabel, state: str) -> None:
    """Colour a status line: "ok" green, "error" red, "warning" amber, "" neutral.

    The state is also kept as the ``state`` property, for style sheets and tests.
    """
    label.setProperty("state", state)
    color = _STATE_COLORS.get(state)
    label.setStyleSheet(f"color: {color};" if color else "")


def _error_label(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    _set_state(label, "error")
    label.hide()
    return label


def _help_label(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


def _stacked(parent: QWidget, *widgets: QWidget) -> QWidget:
    """A column of widgets used as one form field (a field with its error line under it)."""
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def _row(parent: QWidget, *widgets: QWidget, stretch: bool = False) -> QWidget:
    box = QWidget(parent)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    if stretch:
        layout.addStretch(1)
    return box


def _preset_or_custom(key: str) -> Preset:
    try:
        return preset(key)
    except KeyError:  # a preset of a newer version: treat as custom (presets.preset says so)
        return preset(CUSTOM)


def _key_is_malformed(key: str) -> bool:
    # The rule of SecretStore.set, checked before anything is written so a bad key never leaves
    # some keys saved and others not.
    return any(ch.isspace() or not ch.isprintable() for ch in key.strip())


def ui_language(setting: str) -> Language:
    """The prompt language matching the UI language setting ("auto" follows the locale)."""
    if setting == "zh":
        return "zh"
    if setting == "en":
        return "en"
    return language_for_locale(QLocale().name())


# -- Providers page ---------------------------------------------------------------------------


@dataclass
class _Draft:
    """The editable copy of one saved or new provider configuration."""

    id: str
    name: str
    preset: str
    base_url: str
    chat_model: str = ""
    background_model: str = ""
    embedding_model: str = ""
    single_system_message: bool = False
    #: The key as typed; ``None`` while the stored key is still being read.
    key: str | None = None
    #: The configuration as stored, ``None`` for a provider not saved yet.
    saved: ProviderConfig | None = None
    saved_key: str | None = None
    models: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, cfg: ProviderConfig) -> _Draft:
        return cls(
            id=cfg.id,
            name=cfg.name,
            preset=cfg.preset,
            base_url=cfg.base_url,
            chat_model=cfg.chat_model,
            background_model=cfg.background_model,
            embedding_model=cfg.embedding_model,
            single_system_message=cfg.single_system_message,
            saved=cfg,
        )

    def to_config(self, base_url: str) -> ProviderConfig:
        return ProviderConfig(
            id=self.id,
            name=self.name.strip(),
            preset=self.preset,
            base_url=base_url,
            chat_model=self.chat_model.strip(),
            background_model=self.background_model.strip(),
            embedding_model=self.embedding_model.strip(),
            single_system_message=self.single_system_message,
        )

    def fields_modified(self) -> bool:
        saved = self.saved
        if saved is None:
            return True
        return (
            self.name.strip(),
            self.preset,
            self.base_url.strip(),
            self.chat_model.strip(),
            self.background_model.strip(),
            self.embedding_model.strip(),
            self.single_system_message,
        ) != (
            saved.name,
            saved.preset,
            saved.base_url,
            saved.chat_model,
            saved.background_model,
            saved.embedding_model,
            saved.single_system_message,
        )

    def key_modified(self) -> bool:
        return self.key is not None and self.key.strip() != (self.saved_key or "")


class ProvidersPage(QWidget):
    """Saved providers plus the read-only Environment one, with an editor for the selected one.

    Signals:
        saved(): the page wrote the settings file itself (a one-click local provider, a
            removal, a new default); the dialog passes it on as ``settings_saved``.
        changed(): an edit that Save would write.
        keys_loaded(): the stored keys of the saved providers were read.
        models_fetched(list): "Fetch models" ended, with the model ids (``[]`` after an error).
        connection_tested(bool, str): "Test connection" ended: success, and the result line.
        probe_finished(list): the first-run search for local servers ended, with the base URLs
            offered for one-click setup.
    """

    saved = Signal()
    changed = Signal()
    keys_loaded = Signal()
    models_fetched = Signal(list)
    connection_tested = Signal(bool, str)
    probe_finished = Signal(list)

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        registry: ProviderRegistry,
        *,
        probe: ProbeFunction,
        local_candidates: Sequence[str],
        env: Mapping[str, str],
        first_run: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._secrets = secrets
        self._registry = registry
        self._probe = probe
        self._local_candidates = tuple(local_candidates)
        self._tasks = TaskSet()
        self._drafts: dict[str, _Draft] = {
            cfg.id: _Draft.from_config(cfg) for cfg in settings.providers()
        }
        self._env_config: ProviderConfig | None = None
        self._env_invalid = False
        try:
            self._env_config = environment_provider(env)
        except InvalidInput:
            self._env_invalid = True
        self._context = settings.model_context_overrides()
        self._saved_context = dict(self._context)
        self._current: str | None = None
        self._loading = False
        self._busy_action = ""
        self._result: tuple[str, TextFactory] | None = None
        self._banner_status: tuple[str, TextFactory] | None = None
        self._offers: list[tuple[QPushButton, str]] = []
        self.confirm_box: QMessageBox | None = None
        self._build(first_run)
        self.retranslate()
        self._refresh_list(select=settings.default_provider_id)
        self._keys_task = self._tasks.spawn(self._load_keys())
        if first_run:
            self._tasks.spawn(self._probe_local_servers())

    # -- construction -------------------------------------------------------------------------

    def _build(self, first_run: bool) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)

        self.banner = QFrame(self)
        self.banner.setObjectName("welcomeBanner")
        self.banner.setStyleSheet(
            "#welcomeBanner { background: palette(alternate-base); "
            "border: 1px solid palette(mid); border-radius: 6px; }"
        )
        banner_layout = QVBoxLayout(self.banner)
        self.banner_title = QLabel(self.banner)
        title_font = QFont(self.banner_title.font())
        title_font.setBold(True)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        self.banner_title.setFont(title_font)
        self.banner_text = QLabel(self.banner)
        self.banner_text.setWordWrap(True)
        self.offers_layout = QVBoxLayout()
        self.offers_layout.setSpacing(4)
        banner_layout.addWidget(self.banner_title)
        banner_layout.addWidget(self.banner_text)
        banner_layout.addLayout(self.offers_layout)
        self.banner.setVisible(first_run)
        outer.addWidget(self.banner)

        self.page_error = _error_label(self)
        outer.addWidget(self.page_error)

        body = QHBoxLayout()
        outer.addLayout(body, 1)

        left = QVBoxLayout()
        self.provider_list = QListWidget(self)
        self.provider_list.setMinimumWidth(170)
        self.provider_list.setMaximumWidth(210)
        self.provider_list.setStyleSheet("QListWidget::item { padding: 2px; }")
        self.provider_list.currentItemChanged.connect(self._on_provider_list_current_changed)
        left.addWidget(self.provider_list, 1)
        self.add_button = QPushButton(self)
        self.add_menu = QMenu(self.add_button)
        self.add_actions: dict[str, QAction] = {}
        for item in PRESETS:
            action = self.add_menu.addAction(item.name)
            action.triggered.connect(lambda _checked=False, key=item.key: self.add_provider(key))
            self.add_actions[item.key] = action
        self.add_button.setMenu(self.add_menu)
        self.remove_button = QPushButton(self)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.default_button = QPushButton(self)
        self.default_button.clicked.connect(self._on_default_button_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left.addLayout(buttons)
        left.addWidget(self.default_button)
        body.addLayout(left)

        self.editor_stack = QStackedWidget(self)
        self.empty_label = QLabel(self.editor_stack)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet("color: palette(placeholder-text);")
        scroll = QScrollArea(self.editor_stack)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.editor = QWidget(scroll)
        # Read-only fields (the Environment provider) must not look editable.
        self.editor.setStyleSheet('QLineEdit[readOnly="true"] { background: palette(window); }')
        scroll.setWidget(self.editor)
        self.editor_stack.addWidget(scroll)
        self.editor_stack.addWidget(self.empty_label)
        body.addWidget(self.editor_stack, 1)
        self._build_editor()

    def _build_editor(self) -> None:
        editor = self.editor
        form = QFormLayout(editor)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setContentsMargins(4, 0, 4, 0)
        self._form_labels: dict[str, QLabel] = {}

        def add_row(name: str, widget: QWidget) -> None:
            label = QLabel(editor)
            self._form_labels[name] = label
            form.addRow(label, widget)

        self.env_note = QLabel(editor)
        self.env_note.setWordWrap(True)
        _set_state(self.env_note, "warning")
        form.addRow(self.env_note)

        self.name_edit = QLineEdit(editor)
        self.name_error = _error_label(editor)
        add_row("name", _stacked(editor, self.name_edit, self.name_error))

        self.preset_combo = QComboBox(editor)
        for item in PRESETS:
            self.preset_combo.addItem(item.name, item.key)
        add_row("preset", self.preset_combo)

        self.url_edit = QLineEdit(editor)
        self.url_error = _error_label(editor)
        add_row("url", _stacked(editor, self.url_edit, self.url_error))

        self.key_edit = QLineEdit(editor)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_key_button = QToolButton(editor)
        self.show_key_button.setCheckable(True)
        self.show_key_button.toggled.connect(self._on_show_key_button_toggled)
        self.key_error = _error_label(editor)
        self.key_warning = QLabel(editor)
        self.key_warning.setWordWrap(True)
        self.key_warning.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        _set_state(self.key_warning, "warning")
        self.key_warning.setVisible(self._secrets.using_file_fallback)
        self.docs_label = QLabel(editor)
        self.docs_label.setOpenExternalLinks(True)
        add_row(
            "key",
            _stacked(
                editor,
                _row(editor, self.key_edit, self.show_key_button),
                self.key_error,
                self.key_warning,
                self.docs_label,
            ),
        )

        self.fetch_button = QPushButton(editor)
        self.fetch_button.clicked.connect(self._on_fetch_button_clicked)
        self.test_button = QPushButton(editor)
        self.test_button.clicked.connect(self._on_test_button_clicked)
        self.result_label = QLabel(editor)
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        form.addRow(
            "",
            _stacked(
                editor,
                _row(editor, self.fetch_button, self.test_button, stretch=True),
                self.result_label,
            ),
        )

        self.chat_combo = QComboBox(editor)
        self.chat_combo.setEditable(True)
        self.chat_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        add_row("chat", self.chat_combo)

        self.background_combo = QComboBox(editor)
        self.background_combo.setEditable(True)
        self.background_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        add_row("background", self.background_combo)

        self.embedding_combo = QComboBox(editor)
        self.embedding_combo.setEditable(True)
        self.embedding_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        add_row("embedding", self.embedding_combo)

        self.context_spin = QSpinBox(editor)
        self.context_spin.setRange(0, MAX_MODEL_CONTEXT)
        self.context_spin.setSingleStep(1024)
        self.context_spin.setGroupSeparatorShown(True)
        self.context_error = _error_label(editor)
        add_row("context", _stacked(editor, self.context_spin, self.context_error))

        self.single_system_check = QCheckBox(editor)
        self.single_system_help = _help_label(editor)
        form.addRow("", _stacked(editor, self.single_system_check, self.single_system_help))

        self.name_edit.textEdited.connect(self._on_editor_edited)
        self.url_edit.textEdited.connect(self._on_editor_edited)
        self.key_edit.textEdited.connect(self._on_editor_edited)
        self.preset_combo.currentIndexChanged.connect(self._on_preset_combo_changed)
        self.chat_combo.currentTextChanged.connect(self._on_chat_combo_text_changed)
        self.background_combo.currentTextChanged.connect(self._on_editor_edited)
        self.embedding_combo.currentTextChanged.connect(self._on_editor_edited)
        self.single_system_check.toggled.connect(self._on_editor_edited)
        self.context_spin.valueChanged.connect(self._on_context_spin_changed)

    def retranslate(self) -> None:
        self.banner_title.setText(self.tr("Welcome — connect a model to start"))
        self.add_button.setText(self.tr("Add"))
        self.add_button.setToolTip(self.tr("Add a provider, starting from a known service"))
        self.add_actions[CUSTOM].setText(self.tr("Custom server…"))
        self.preset_combo.setItemText(
            self.preset_combo.findData(CUSTOM), self.tr("Custom (OpenAI-compatible)")
        )
        self.remove_button.setText(self.tr("Remove"))
        self.default_button.setText(self.tr("Set as default"))
        self.empty_label.setText(
            self.tr("No provider yet. Click “Add” and choose a service to connect a model.")
        )
        labels = {
            "name": self.tr("Name"),
            "preset": self.tr("Service"),
            "url": self.tr("Base URL"),
            "key": self.tr("API key"),
            "chat": self.tr("Chat model"),
            "background": self.tr("Background model"),
            "embedding": self.tr("Embedding model"),
            "context": self.tr("Context window"),
        }
        for name, text in labels.items():
            self._form_labels[name].setText(text)
        self.url_edit.setPlaceholderText("https://api.example.com/v1")
        self.chat_combo.lineEdit().setPlaceholderText(self.tr("Choose or type a model"))
        self.chat_combo.setToolTip(self.tr("The model that writes the replies in conversations."))
        self.background_combo.lineEdit().setPlaceholderText(self.tr("Same as chat model"))
        self.background_combo.setToolTip(
            self.tr(
                "The model for background work: conversation summaries, the user profile and "
                "memory consolidation. Empty uses the chat model."
            )
        )
        self.embedding_combo.lineEdit().setPlaceholderText(self.tr("None — use the built-in model"))
        self.embedding_combo.setToolTip(
            self.tr(
                "An embeddings model on this server (for example text-embedding-3-small, or "
                "bge-m3 on Ollama) used to match memories by meaning when this is the default "
                "provider and Settings → Memory → Matching is Automatic. Empty uses the built-in "
                "multilingual model."
            )
        )
        self.context_spin.setSuffix(self.tr(" tokens"))
        self.context_spin.setToolTip(
            self.tr(
                "The context window of the chat model. Leave it at the built-in size unless the "
                "server runs the model with a different window; it applies to this model name "
                "in every provider."
            )
        )
        self.single_system_check.setText(self.tr("Single system message only"))
        self.single_system_help.setText(
            self.tr(
                "For servers whose chat template accepts one system message: memories are then "
                "sent at the top of your message."
            )
        )
        self.fetch_button.setToolTip(self.tr("Load the list of models from the server"))
        self.test_button.setToolTip(
            self.tr("List the models and, if a chat model is set, ask it for a one-token reply")
        )
        self.key_warning.setText(
            self.tr(
                "No system keyring is available, so API keys are saved in the file {path}, "
                "readable only by your user account."
            ).format(path=self._secrets.fallback_path)
        )
        self.env_note.setText(self._env_note_text())
        self._update_action_buttons()
        self._update_key_placeholder()
        self._update_docs_link()
        self._update_context_special_text()
        self._render_result()
        self._render_banner_status()
        for button, url in self._offers:
            button.setText(self._offer_text(url))
        self._refresh_list(select=self._current)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # -- public API ---------------------------------------------------------------------------

    @property
    def current_id(self) -> str | None:
        """Id of the selected provider (``"env"`` for the Environment one), or ``None``."""
        return self._current

    def provider_ids(self) -> list[str]:
        """Ids in list order, the Environment provider last."""
        return [
            str(self.provider_list.item(row).data(Qt.ItemDataRole.UserRole))
            for row in range(self.provider_list.count())
        ]

    def select_provider(self, provider_id: str) -> None:
        """Select a provider in the list and show it in the editor."""
        for row in range(self.provider_list.count()):
            if self.provider_list.item(row).data(Qt.ItemDataRole.UserRole) == provider_id:
                self.provider_list.setCurrentRow(row)
                return

    def add_provider(self, preset_key: str) -> str:
        """Add an unsaved provider made from a preset, select it and return its id."""
        chosen = _preset_or_custom(preset_key)
        draft = _Draft(
            id=new_provider_id(),
            name=self._unique_name(self._preset_name(chosen)),
            preset=chosen.key,
            base_url=chosen.base_url,
            chat_model=chosen.suggested_models[0] if chosen.suggested_models else "",
            key="",
        )
        self._drafts[draft.id] = draft
        self._refresh_list(select=draft.id)
        (self.url_edit if chosen.key == CUSTOM else self.key_edit).setFocus()
        self.changed.emit()
        return draft.id

    def offer_buttons(self) -> list[QPushButton]:
        """The first-run "Use … at …" buttons, one per local server found."""
        return [button for button, _url in self._offers]

    def is_modified(self) -> bool:
        """Whether Save would change anything this page holds."""
        return (
            any(d.fields_modified() or d.key_modified() for d in self._drafts.values())
            or self._context != self._saved_context
        )

    def validate(self) -> bool:
        """Check every provider; select the first bad one and mark its field. True when fine."""
        self._clear_errors()
        for draft in self._drafts.values():
            problem = self._draft_problem(draft)
            if problem is not None:
                where, text = problem
                self.select_provider(draft.id)
                self._show_field_error(where, text)
                return False
        for model, tokens in self._context.items():
            if tokens < MIN_MODEL_CONTEXT and self._saved_context.get(model) != tokens:
                owner = next(
                    (d.id for d in self._drafts.values() if d.chat_model.strip() == model),
                    self._current,
                )
                if owner is not None:
                    self.select_provider(owner)
                self._show_field_error(
                    "context",
                    self.tr(
                        "“{model}”: enter at least {minimum} tokens, or 0 for the built-in size."
                    ).format(model=model, minimum=QLocale().toString(MIN_MODEL_CONTEXT)),
                )
                return False
        return True

    async def write_keys(self) -> bool:
        """Store every changed key in the SecretStore (in a worker thread).

        Returns:
            False when a key could not be stored; the page shows why.
        """
        await self._keys_task
        changes = [
            (draft.id, (draft.key or "").strip())
            for draft in self._drafts.values()
            if draft.key_modified()
        ]
        if not changes:
            return True
        try:
            await asyncio.to_thread(self._write_keys_blocking, changes)
        except EtosError as exc:
            self._show_page_error(describe(exc).message)
            return False
        for provider_id, key in changes:
            draft = self._drafts.get(provider_id)
            if draft is not None:
                draft.saved_key = key
        return True

    def apply(self) -> None:
        """Write the configurations and context sizes into the store (not yet to the file).

        Call :meth:`validate` first.

        Raises:
            InvalidInput: A configuration was rejected by the store.
        """
        for draft in list(self._drafts.values()):
            if not draft.fields_modified():
                continue
            stored = self._settings.upsert_provider(
                draft.to_config(normalise_base_url(draft.base_url))
            )
            updated = _Draft.from_config(stored)
            updated.key, updated.saved_key, updated.models = (
                draft.key,
                draft.saved_key,
                draft.models,
            )
            self._drafts[draft.id] = updated
        for model in set(self._context) | set(self._saved_context):
            if self._context.get(model) != self._saved_context.get(model):
                self._settings.set_model_context(model, self._context.get(model))
        self._saved_context = dict(self._context)
        self._refresh_list(select=self._current)
        self._load_editor()  # shows the values as stored (normalised URL, trimmed names)

    def cancel_tasks(self) -> None:
        """Cancel network work still running (the dialog is closing)."""
        self._tasks.cancel_all()

    async def wait_idle(self) -> None:
        """Wait until every task this page started has ended (used by tests and the dialog)."""
        await self._tasks.wait_idle()

    # -- the list -----------------------------------------------------------------------------

    def _refresh_list(self, select: str | None) -> None:
        default_id = self._settings.default_provider_id
        self.provider_list.blockSignals(True)
        self.provider_list.clear()
        for draft in self._drafts.values():
            self._add_list_item(
                draft.id,
                draft.name.strip() or self.tr("Unnamed provider"),
                draft.base_url,
                default=draft.id == default_id,
                new=draft.saved is None,
            )
        if self._env_config is not None or self._env_invalid:
            self._add_list_item(
                ENVIRONMENT_PROVIDER_ID,
                self.tr("Environment"),
                self._env_config.base_url if self._env_config else "",
                default=default_id == ENVIRONMENT_PROVIDER_ID,
                new=False,
            )
        self.provider_list.blockSignals(False)
        ids = self.provider_ids()
        target = select if select in ids else (ids[0] if ids else None)
        if target is None:
            self._current = None
            self._load_editor()
        elif target == self._current:
            self.provider_list.blockSignals(True)
            self.provider_list.setCurrentRow(ids.index(target))
            self.provider_list.blockSignals(False)
        else:
            self.provider_list.setCurrentRow(ids.index(target))
        self._update_action_buttons()

    def _add_list_item(
        self, provider_id: str, name: str, url: str, *, default: bool, new: bool
    ) -> None:
        text = name
        if provider_id == ENVIRONMENT_PROVIDER_ID:
            text = self.tr("{name} (read-only)").format(name=name)
        if default:
            text = self.tr("{name} — default").format(name=text)
        if new:
            text = self.tr("{name} (not saved)").format(name=text)
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, provider_id)
        item.setToolTip(url)
        font = item.font()
        font.setBold(default)
        font.setItalic(new)
        item.setFont(font)
        self.provider_list.addItem(item)

    def _on_provider_list_current_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        self._current = str(current.data(Qt.ItemDataRole.UserRole)) if current is not None else None
        self._load_editor()
        self._update_action_buttons()

    def _unique_name(self, base: str) -> str:
        taken = {d.name.strip() for d in self._drafts.values()}
        if base not in taken:
            return base
        number = 2
        while f"{base} {number}" in taken:
            number += 1
        return f"{base} {number}"

    def _preset_name(self, item: Preset) -> str:
        return self.tr("Custom server") if item.key == CUSTOM else item.name

    # -- the editor ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _loading_editor(self) -> Iterator[None]:
        self._loading = True
        try:
            yield
        finally:
            self._loading = False

    def _load_editor(self) -> None:
        self._clear_errors()
        self._result = None
        self._render_result()
        draft = self._drafts.get(self._current or "")
        is_env = self._current == ENVIRONMENT_PROVIDER_ID
        with self._loading_editor():
            self.show_key_button.setChecked(False)
            if draft is not None:
                self._fill_editor(
                    name=draft.name,
                    preset_key=draft.preset,
                    url=draft.base_url,
                    key=draft.key or "",
                    chat=draft.chat_model,
                    background=draft.background_model,
                    embedding=draft.embedding_model,
                    single=draft.single_system_message,
                    models=draft.models or list(_preset_or_custom(draft.preset).suggested_models),
                )
            elif is_env and self._env_config is not None:
                cfg = self._env_config
                self._fill_editor(
                    name=self.tr("Environment"),
                    preset_key=cfg.preset,
                    url=cfg.base_url,
                    key="",
                    chat=cfg.chat_model,
                    background="",
                    single=False,
                    models=[],
                )
            else:
                self._fill_editor(
                    name="",
                    preset_key=CUSTOM,
                    url="",
                    key="",
                    chat="",
                    background="",
                    single=False,
                    models=[],
                )
        editable = draft is not None
        self.editor.setEnabled(draft is not None or is_env)
        self.editor_stack.setCurrentIndex(0 if draft is not None or is_env else 1)
        for line in (self.name_edit, self.url_edit, self.key_edit):
            line.setCursorPosition(0)
            if line.isReadOnly() == editable:
                line.setReadOnly(not editable)
                # The style sheet selects on readOnly; a changed property needs a re-polish.
                line.style().unpolish(line)
                line.style().polish(line)
        self.key_edit.setEnabled(editable and draft is not None and draft.key is not None)
        self.show_key_button.setEnabled(editable)
        for widget in (
            self.preset_combo,
            self.chat_combo,
            self.background_combo,
            self.embedding_combo,
        ):
            widget.setEnabled(editable)
        self.single_system_check.setEnabled(editable)
        self.env_note.setVisible(is_env)
        self.env_note.setText(self._env_note_text())
        self.key_warning.setVisible(self._secrets.using_file_fallback and not is_env)
        self._update_key_placeholder()
        self._update_docs_link()
        self._update_context_spin()

    def _fill_editor(
        self,
        *,
        name: str,
        preset_key: str,
        url: str,
        key: str,
        chat: str,
        background: str,
        single: bool,
        models: list[str],
        embedding: str = "",
    ) -> None:
        self.name_edit.setText(name)
        index = self.preset_combo.findData(_preset_or_custom(preset_key).key)
        self.preset_combo.setCurrentIndex(max(index, 0))
        self.url_edit.setText(url)
        self.key_edit.setText(key)
        self._fill_model_combos(models, chat=chat, background=background, embedding=embedding)
        self.single_system_check.setChecked(single)

    def _fill_model_combos(
        self, models: Sequence[str], *, chat: str, background: str, embedding: str | None = None
    ) -> None:
        embedding_text = self.embedding_combo.currentText() if embedding is None else embedding
        for combo, text in (
            (self.chat_combo, chat),
            (self.background_combo, background),
            (self.embedding_combo, embedding_text),
        ):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(list(models))
            combo.setCurrentIndex(-1)
            combo.setEditText(text)
            combo.blockSignals(False)

    def _on_editor_edited(self, *_args: object) -> None:
        if self._loading:
            return
        draft = self._drafts.get(self._current or "")
        if draft is None:
            return
        draft.name = self.name_edit.text()
        draft.base_url = self.url_edit.text()
        if self.key_edit.isEnabled():
            draft.key = self.key_edit.text()
        draft.chat_model = self.chat_combo.currentText()
        draft.background_model = self.background_combo.currentText()
        draft.embedding_model = self.embedding_combo.currentText()
        draft.single_system_message = self.single_system_check.isChecked()
        item = self.provider_list.currentItem()
        if item is not None and self.sender() is self.name_edit:
            self._refresh_list(select=draft.id)
        self.changed.emit()

    def _on_preset_combo_changed(self, _index: int) -> None:
        if self._loading:
            return
        draft = self._drafts.get(self._current or "")
        if draft is None:
            return
        old = _preset_or_custom(draft.preset)
        new = _preset_or_custom(str(self.preset_combo.currentData()))
        with self._loading_editor():
            url = self.url_edit.text().strip().rstrip("/")
            if not url or url == old.base_url:
                self.url_edit.setText(new.base_url)
            name = self.name_edit.text().strip()
            if not name or name == self._preset_name(old):
                self.name_edit.setText(self._unique_name(self._preset_name(new)))
            if not draft.models:
                chat = self.chat_combo.currentText().strip()
                if not chat or chat in old.suggested_models:
                    chat = new.suggested_models[0] if new.suggested_models else ""
                self._fill_model_combos(
                    new.suggested_models, chat=chat, background=self.background_combo.currentText()
                )
        draft.preset = new.key
        self._on_editor_edited()
        self._refresh_list(select=draft.id)
        self._update_key_placeholder()
        self._update_docs_link()
        self._update_context_spin()

    def _on_chat_combo_text_changed(self, _text: str) -> None:
        self._update_context_spin()
        self._on_editor_edited()

    def _on_show_key_button_toggled(self, shown: bool) -> None:
        self.key_edit.setEchoMode(
            QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        )
        self.show_key_button.setText(self.tr("Hide") if shown else self.tr("Show"))

    def _update_context_spin(self) -> None:
        model = self.chat_combo.currentText().strip()
        self.context_spin.blockSignals(True)
        self.context_spin.setValue(self._context.get(model, 0) if model else 0)
        self.context_spin.blockSignals(False)
        self.context_spin.setEnabled(bool(model))
        self._update_context_special_text()

    def _update_context_special_text(self) -> None:
        model = self.chat_combo.currentText().strip()
        if model:
            size = QLocale().toString(context_window_for(model))
            text = self.tr("Built-in size ({size} tokens)").format(size=size)
        else:
            text = self.tr("Choose a chat model first")
        self.context_spin.setSpecialValueText(text)

    def _on_context_spin_changed(self, value: int) -> None:
        model = self.chat_combo.currentText().strip()
        if not model:
            return
        if value:
            self._context[model] = value
        else:
            self._context.pop(model, None)
        self.context_error.hide()
        self.changed.emit()

    def _update_key_placeholder(self) -> None:
        draft = self._drafts.get(self._current or "")
        if self._current == ENVIRONMENT_PROVIDER_ID:
            text = (
                self.tr("From OPENAI_API_KEY (not shown)")
                if self._env_config is not None
                and self._registry.key_for(self._env_config) is not None
                else self.tr("None (OPENAI_API_KEY is not set)")
            )
        elif draft is not None and draft.key is None:
            text = self.tr("Reading the saved key…")
        elif draft is not None and _preset_or_custom(draft.preset).local:
            text = self.tr("Usually not needed for this server")
        elif self._secrets.using_file_fallback:
            text = self.tr("Stored in a private file (see below)")
        else:
            text = self.tr("Stored in the system keyring")
        self.key_edit.setPlaceholderText(text)
        self.show_key_button.setText(
            self.tr("Hide") if self.show_key_button.isChecked() else self.tr("Show")
        )

    def _update_docs_link(self) -> None:
        draft = self._drafts.get(self._current or "")
        url = _preset_or_custom(draft.preset).docs_url if draft is not None else ""
        self.docs_label.setVisible(bool(url))
        if url:
            self.docs_label.setText(
                '<a href="{url}">{text}</a>'.format(
                    url=url, text=self.tr("Where to get a key and which models exist")
                )
            )

    def _env_note_text(self) -> str:
        if self._env_invalid:
            return self.tr(
                "OPENAI_BASE_URL is set but is not a usable URL. Fix the environment variable "
                "and restart the app."
            )
        return self.tr(
            "This provider comes from the environment variables OPENAI_API_KEY and "
            "OPENAI_BASE_URL. It is read-only here and never saved."
        )

    # -- errors and results -------------------------------------------------------------------

    def _clear_errors(self) -> None:
        for label in (self.name_error, self.url_error, self.key_error, self.context_error):
            label.hide()
        self.page_error.hide()

    def _show_field_error(self, where: str, text: str) -> None:
        label, widget = {
            "name": (self.name_error, self.name_edit),
            "url": (self.url_error, self.url_edit),
            "key": (self.key_error, self.key_edit),
            "context": (self.context_error, self.context_spin),
        }[where]
        label.setText(text)
        label.show()
        widget.setFocus()

    def _show_page_error(self, text: str) -> None:
        self.page_error.setText(text)
        self.page_error.show()

    def _draft_problem(self, draft: _Draft) -> tuple[str, str] | None:
        if not draft.name.strip():
            return "name", self.tr("Give the provider a name.")
        try:
            normalise_base_url(draft.base_url)
        except InvalidInput as exc:
            return "url", self._url_problem_text(str(exc.params.get("reason", "")))
        if draft.key is not None and _key_is_malformed(draft.key):
            return "key", self.tr(
                "The key contains spaces or control characters. Paste only the key itself."
            )
        return None

    def _url_problem_text(self, reason: str) -> str:
        if reason == "empty":
            return self.tr("Enter the server's base URL, for example https://api.example.com/v1.")
        if reason == "scheme":
            return self.tr("The URL must start with http:// or https://.")
        if reason == "whitespace":
            return self.tr("The URL must not contain spaces.")
        if reason == "credentials":
            return self.tr(
                "Remove the user name and password from the URL; put the key in the API key field."
            )
        return self.tr("This is not a usable URL: it names no server.")

    def _show_result(self, provider_id: str, state: str, text: TextFactory) -> None:
        if provider_id == self._current:
            self._result = (state, text)
            self._render_result()

    def _render_result(self) -> None:
        if self._result is None:
            self.result_label.hide()
            self.result_label.clear()
            return
        state, text = self._result
        self.result_label.setText(text())
        _set_state(self.result_label, state)
        self.result_label.show()

    # -- network actions ----------------------------------------------------------------------

    def _update_action_buttons(self) -> None:
        busy = self._busy_action
        draft = self._drafts.get(self._current or "")
        is_env = self._current == ENVIRONMENT_PROVIDER_ID and self._env_config is not None
        can_connect = (draft is not None or is_env) and not busy
        self.fetch_button.setEnabled(can_connect)
        self.test_button.setEnabled(can_connect)
        self.fetch_button.setText(
            self.tr("Fetching…") if busy == "fetch" else self.tr("Fetch models")
        )
        self.test_button.setText(
            self.tr("Testing…") if busy == "test" else self.tr("Test connection")
        )
        self.remove_button.setEnabled(draft is not None and not busy)
        saved_or_env = (draft is not None and draft.saved is not None) or is_env
        self.default_button.setEnabled(
            saved_or_env and self._current != self._settings.default_provider_id and not busy
        )
        self.default_button.setToolTip(
            self.tr("Save the provider first")
            if draft is not None and draft.saved is None
            else self.tr("New conversations use the default provider")
        )
        for button, _url in self._offers:
            button.setEnabled(not busy)

    def _start_action(self, kind: str) -> None:
        self._busy_action = kind
        self._update_action_buttons()
        if kind in ("fetch", "test"):
            self._result = None
            self._render_result()

    def _finish_action(self) -> None:
        self._busy_action = ""
        self._update_action_buttons()

    def _connection_config(self) -> ProviderConfig | None:
        """The selected provider as a configuration to connect with; marks a bad URL."""
        if self._current == ENVIRONMENT_PROVIDER_ID:
            return self._env_config
        draft = self._drafts.get(self._current or "")
        if draft is None:
            return None
        self._clear_errors()
        try:
            base_url = normalise_base_url(draft.base_url)
        except InvalidInput as exc:
            self._show_field_error("url", self._url_problem_text(str(exc.params.get("reason"))))
            return None
        return draft.to_config(base_url)

    async def _request_key(self, config: ProviderConfig) -> str:
        if config.id == ENVIRONMENT_PROVIDER_ID:
            return self._registry.key_for(config) or ""
        await self._keys_task
        draft = self._drafts.get(config.id)
        return (draft.key or "").strip() if draft is not None else ""

    def _on_fetch_button_clicked(self) -> None:
        config = self._connection_config()
        if config is None or self._busy_action:
            return
        self._start_action("fetch")
        self._tasks.spawn(self._fetch_models(config))

    def _on_test_button_clicked(self) -> None:
        config = self._connection_config()
        if config is None or self._busy_action:
            return
        self._start_action("test")
        self._tasks.spawn(self._test_connection(config))

    async def _list_models(self, config: ProviderConfig, *, test_model: str = "") -> list[str]:
        # An explicit key (possibly "") gives an uncached provider this page owns and closes.
        provider = self._registry.provider_for(config, key=await self._request_key(config))
        try:
            models = await provider.list_models()
            if test_model:
                await provider.complete(
                    ChatRequest(
                        model=test_model,
                        messages=[{"role": "user", "content": _TEST_PROMPT}],
                        max_tokens=1,
                    )
                )
            return models
        finally:
            await provider.aclose()

    def _remember_models(self, provider_id: str, models: list[str]) -> None:
        draft = self._drafts.get(provider_id)
        if draft is not None:
            draft.models = list(models)
        if provider_id == self._current and models:
            with self._loading_editor():
                self._fill_model_combos(
                    models,
                    chat=self.chat_combo.currentText(),
                    background=self.background_combo.currentText(),
                )

    async def _fetch_models(self, config: ProviderConfig) -> None:
        models: list[str] = []
        try:
            models = await self._list_models(config)
        except EtosError as exc:
            self._show_result(config.id, "error", lambda e=exc: describe(e).message)
        else:
            self._remember_models(config.id, models)
            self._show_result(config.id, "ok" if models else "warning", self._models_text(models))
        finally:
            self._finish_action()
        self.models_fetched.emit(models)

    def _models_text(self, models: Sequence[str]) -> TextFactory:
        if not models:
            return lambda: self.tr(
                "The server lists no models. Type the model's name into Chat model."
            )
        count = QLocale().toString(len(models))
        return lambda: self.tr("Models found: {count}. Pick one from the lists below.").format(
            count=count
        )

    async def _test_connection(self, config: ProviderConfig) -> None:
        model = config.chat_model
        text: TextFactory
        try:
            models = await self._list_models(config, test_model=model)
        except EtosError as exc:
            ok = False
            text = lambda e=exc: describe(e).message  # noqa: E731 - kept for re-translation
        else:
            ok = True
            self._remember_models(config.id, models)
            count = QLocale().toString(len(models))
            # Worded without plurals: an English %n(s) form needs a .qm to read well.
            if model:
                text = lambda: self.tr(  # noqa: E731
                    "Connected. Models available: {count}; “{model}” answered."
                ).format(count=count, model=model)
            else:
                text = lambda: self.tr(  # noqa: E731
                    "Connected. Models available: {count}. Choose a chat model to test a reply."
                ).format(count=count)
        finally:
            self._finish_action()
        self._show_result(config.id, "ok" if ok else "error", text)
        self.connection_tested.emit(ok, text())

    # -- keys ---------------------------------------------------------------------------------

    def _read_keys_blocking(self, ids: list[str]) -> dict[str, str]:
        """Runs in a worker thread: the keyring may block."""
        return {provider_id: self._secrets.get(provider_id) or "" for provider_id in ids}

    def _write_keys_blocking(self, changes: list[tuple[str, str]]) -> None:
        """Runs in a worker thread; an empty key deletes the stored one."""
        for provider_id, key in changes:
            self._secrets.set(provider_id, key)

    async def _load_keys(self) -> None:
        ids = [d.id for d in self._drafts.values() if d.key is None]
        keys: dict[str, str] = {}
        if ids:
            try:
                keys = await asyncio.to_thread(self._read_keys_blocking, ids)
            except EtosError as exc:
                self._show_page_error(describe(exc).message)
        for provider_id in ids:
            draft = self._drafts.get(provider_id)
            if draft is not None and draft.key is None:
                draft.key = keys.get(provider_id, "")
                draft.saved_key = draft.key
        if self._current in ids:
            draft = self._drafts[self._current]
            with self._loading_editor():
                self.key_edit.setText(draft.key or "")
            self.key_edit.setEnabled(True)
            self._update_key_placeholder()
        self.keys_loaded.emit()

    # -- remove and default -------------------------------------------------------------------

    def _on_remove_button_clicked(self) -> None:
        draft = self._drafts.get(self._current or "")
        if draft is None:
            return
        name = draft.name.strip() or self.tr("Unnamed provider")
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Remove provider"),
            self.tr(
                "Remove the provider “{name}”? Its saved API key is deleted too. Conversations "
                "that used it switch to the default provider."
            ).format(name=name),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.button(QMessageBox.StandardButton.Yes).setText(self.tr("Remove"))
        box.button(QMessageBox.StandardButton.Cancel).setText(self.tr("Cancel"))
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Yes).clicked.connect(
            lambda: self._tasks.spawn(self._remove(draft.id))
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirm_box = box
        box.open()

    async def _remove(self, provider_id: str) -> None:
        draft = self._drafts.pop(provider_id, None)
        self._refresh_list(select=self._current if self._current != provider_id else None)
        if draft is None or draft.saved is None:
            self.changed.emit()
            return
        self._settings.remove_provider(provider_id)
        try:
            self._settings.save()
            await asyncio.to_thread(self._secrets.delete, provider_id)
        except EtosError as exc:
            self._show_page_error(describe(exc).message)
        self._refresh_list(select=self._current)
        self.saved.emit()

    def _on_default_button_clicked(self) -> None:
        provider_id = self._current
        if provider_id is None:
            return
        try:
            self._settings.default_provider_id = provider_id
            self._settings.save()
        except EtosError as exc:
            self._show_page_error(describe(exc).message)
            return
        self._refresh_list(select=provider_id)
        self.saved.emit()

    # -- first run ----------------------------------------------------------------------------

    def _set_banner_status(self, state: str, text: TextFactory) -> None:
        self._banner_status = (state, text)
        self._render_banner_status()

    def _render_banner_status(self) -> None:
        if self._banner_status is None:
            self.banner_text.clear()
            return
        state, text = self._banner_status
        self.banner_text.setText(text())
        _set_state(self.banner_text, state)

    def _offer_text(self, url: str) -> str:
        known = preset_for_url(url)
        if known is not None:
            return self.tr("Use {name} at {url}").format(name=known.name, url=url)
        return self.tr("Use the model server at {url}").format(url=url)

    async def _probe_local_servers(self) -> None:
        self._set_banner_status(
            "", lambda: self.tr("Looking for a model server running on this computer…")
        )
        try:
            found = list(await self._probe(self._local_candidates))
        except Exception:
            # Detection is only a shortcut: any failure means "nothing found".
            _log.warning("probing local model servers failed", exc_info=True)
            found = []
        configured = {d.base_url.strip().rstrip("/") for d in self._drafts.values()}
        offers = [url for url in found if url.strip().rstrip("/") not in configured]
        for url in offers:
            button = QPushButton(self._offer_text(url), self.banner)
            button.clicked.connect(lambda _checked=False, u=url: self._on_offer_clicked(u))
            self.offers_layout.addWidget(button)
            self._offers.append((button, url))
        if offers:
            self._set_banner_status(
                "",
                lambda: self.tr(
                    "A model server is running on this computer. Use it with one click, or add "
                    "another provider below."
                ),
            )
        else:
            self._set_banner_status(
                "",
                lambda: self.tr(
                    "No model server was found on this computer. Add a provider: choose a "
                    "service under “Add”, paste its API key, then fetch its models."
                ),
            )
        self._update_action_buttons()
        self.probe_finished.emit(offers)

    def _on_offer_clicked(self, url: str) -> None:
        if self._busy_action:
            return
        self._start_action("local")
        self._tasks.spawn(self._use_local_server(url))

    async def _use_local_server(self, url: str) -> None:
        known = preset_for_url(url)
        try:
            config = ProviderConfig(
                id=new_provider_id(),
                name=self._unique_name(known.name if known else self.tr("Local server")),
                preset=known.key if known else CUSTOM,
                base_url=normalise_base_url(url),
            )
            provider = self._registry.provider_for(config, key="")
            try:
                models = await provider.list_models()
            finally:
                await provider.aclose()
        except EtosError as exc:
            self._finish_action()
            self._set_banner_status("error", lambda e=exc: describe(e).message)
            return
        config = replace(config, chat_model=models[0] if models else "")
        stored = self._settings.upsert_provider(config)
        self._settings.default_provider_id = stored.id
        draft = _Draft.from_config(stored)
        draft.key = draft.saved_key = ""
        draft.models = list(models)
        self._drafts[stored.id] = draft
        for button, offered in self._offers:
            if offered == url:
                button.hide()
        self._offers = [(b, u) for b, u in self._offers if u != url]
        self._finish_action()
        self._refresh_list(select=stored.id)
        try:
            self._settings.save()
        except EtosError as exc:
            self._set_banner_status("error", lambda e=exc: describe(e).message)
            return
        name, model = stored.name, stored.chat_model
        if model:
            self._set_banner_status(
                "ok",
                lambda: self.tr(
                    "Ready: “{name}” with the model “{model}”. Close Settings and start chatting."
                ).format(name=name, model=model),
            )
        else:
            self._set_banner_status(
                "warning",
                lambda: self.tr(
                    "Added “{name}”, but it lists no models yet. Load a model in it, then "
                    "fetch the models here."
                ).format(name=name),
            )
        self.saved.emit()


# -- Persona page -----------------------------------------------------------------------------


class PersonaPage(QWidget):
    """The companion's name, avatar and personality; empty fields mean "use the default".

    Signals:
        changed(): an edit that Save would write.
    """

    changed = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        *,
        language: Callable[[], Language],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._language = language
        self._avatar = settings.get_str("persona.avatar")
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.name_label = QLabel(self)
        self.name_edit = QLineEdit(self)
        self.name_edit.setMaxLength(int(spec_for("persona.name").maximum or 64))
        self.name_edit.setText(settings.get_str("persona.name"))
        form.addRow(self.name_label, self.name_edit)

        self.avatar_label = QLabel(self)
        self.avatar_preview = QLabel(self)
        self.avatar_preview.setFixedSize(AVATAR_SIZE, AVATAR_SIZE)
        self.avatar_preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.choose_avatar_button = QPushButton(self)
        self.choose_avatar_button.clicked.connect(self._on_choose_avatar_button_clicked)
        self.reset_avatar_button = QPushButton(self)
        self.reset_avatar_button.clicked.connect(self.reset_avatar)
        self.avatar_path_label = _help_label(self)
        self.avatar_path_label.setWordWrap(False)
        self.avatar_path_label.setSizePolicy(
            QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        )
        self.avatar_error = _error_label(self)
        avatar_buttons = QWidget(self)
        buttons_layout = QVBoxLayout(avatar_buttons)
        buttons_layout.setContentsMargins(0, 0, 0, 0)
        buttons_layout.addWidget(self.choose_avatar_button)
        buttons_layout.addWidget(self.reset_avatar_button)
        avatar_row = QWidget(self)
        avatar_layout = QHBoxLayout(avatar_row)
        avatar_layout.setContentsMargins(0, 0, 0, 0)
        avatar_layout.addWidget(self.avatar_preview)
        avatar_layout.addWidget(avatar_buttons)
        avatar_layout.addWidget(self.avatar_path_label, 1)
        form.addRow(self.avatar_label, _stacked(self, avatar_row, self.avatar_error))

        self.prompt_label = QLabel(self)
        self.prompt_edit = QPlainTextEdit(self)
        self.prompt_edit.setPlainText(settings.get_str("persona.prompt"))
        self.prompt_error = _error_label(self)
        self.reset_prompt_button = QPushButton(self)
        self.reset_prompt_button.clicked.connect(self.reset_prompt)
        self.hint_label = _help_label(self)
        form.addRow(self.prompt_label, _stacked(self, self.prompt_edit, self.prompt_error))
        form.addRow("", _row(self, self.hint_label, self.reset_prompt_button))
        self.hint_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

        self.name_edit.textChanged.connect(lambda _text: self.changed.emit())
        self.prompt_edit.textChanged.connect(self.changed.emit)
        self._render_avatar()
        self.retranslate()

    def retranslate(self) -> None:
        self.name_label.setText(self.tr("Name"))
        self.avatar_label.setText(self.tr("Avatar"))
        self.prompt_label.setText(self.tr("Personality"))
        self.choose_avatar_button.setText(self.tr("Choose image…"))
        self.reset_avatar_button.setText(self.tr("Use built-in"))
        self.reset_prompt_button.setText(self.tr("Reset to default"))
        self.hint_label.setText(self.tr("Empty fields use the default shown in grey."))
        self.prompt_edit.setToolTip(_schema_tr(spec_for("persona.prompt").description))
        self.name_edit.setToolTip(_schema_tr(spec_for("persona.name").description))
        self._render_avatar()
        self.refresh_defaults()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # -- public API ---------------------------------------------------------------------------

    @property
    def avatar_path(self) -> str:
        """The chosen image file, or ``""`` for the built-in avatar."""
        return self._avatar

    def refresh_defaults(self) -> None:
        """Show the defaults of the current UI language as placeholder text."""
        lang = self._language()
        self.name_edit.setPlaceholderText(DEFAULT_PERSONA_NAME[lang])
        self.prompt_edit.setPlaceholderText(DEFAULT_PERSONA_PROMPT[lang])

    def reset_prompt(self) -> None:
        """Fill the personality with the warm default of the current UI language."""
        self.prompt_edit.setPlainText(DEFAULT_PERSONA_PROMPT[self._language()])

    def set_avatar_path(self, path: str) -> bool:
        """Use the image at ``path`` as avatar; False (and a note) if it cannot be shown."""
        pixmap = QPixmap(path)
        if pixmap.isNull():
            self.avatar_error.setText(self.tr("This file is not an image the app can show."))
            self.avatar_error.show()
            return False
        self._avatar = path
        self.avatar_error.hide()
        self._render_avatar()
        self.changed.emit()
        return True

    def reset_avatar(self) -> None:
        """Go back to the built-in avatar."""
        self._avatar = ""
        self.avatar_error.hide()
        self._render_avatar()
        self.changed.emit()

    def is_modified(self) -> bool:
        """Whether Save would change anything this page holds."""
        return (
            self.name_edit.text().strip(),
            self.prompt_edit.toPlainText().strip(),
            self._avatar,
        ) != (
            self._settings.get_str("persona.name"),
            self._settings.get_str("persona.prompt"),
            self._settings.get_str("persona.avatar"),
        )

    def validate(self) -> bool:
        """Check the fields against the schema; mark the first problem. True when fine."""
        self.prompt_error.hide()
        try:
            validate(spec_for("persona.prompt"), self.prompt_edit.toPlainText().strip())
        except InvalidInput as exc:
            self.prompt_error.setText(
                self.tr("The personality is too long: at most {maximum} characters.").format(
                    maximum=QLocale().toString(int(exc.params.get("maximum") or 0))
                )
            )
            self.prompt_error.show()
            return False
        return True

    def apply(self) -> None:
        """Write the fields into the store (not yet to the file)."""
        self._settings.set("persona.name", self.name_edit.text().strip())
        self._settings.set("persona.prompt", self.prompt_edit.toPlainText().strip())
        self._settings.set("persona.avatar", self._avatar)

    # -- avatar -------------------------------------------------------------------------------

    def _on_choose_avatar_button_clicked(self) -> None:
        # open(), not exec(): no nested event loop while the qasync loop runs.
        dialog = QFileDialog(self, self.tr("Choose an avatar image"))
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilter(self.tr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp *.svg)"))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.set_avatar_path)
        dialog.open()

    def _render_avatar(self) -> None:
        pixmap = QPixmap(self._avatar) if self._avatar else QPixmap()
        if pixmap.isNull():
            with contextlib.suppress(FileNotFoundError):
                pixmap = QPixmap(str(resource_path("icons", "avatar-default.svg")))
        if pixmap.isNull():
            self.avatar_preview.clear()
        else:
            ratio = self.devicePixelRatioF()
            scaled = pixmap.scaled(
                round(AVATAR_SIZE * ratio),
                round(AVATAR_SIZE * ratio),
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
            scaled.setDevicePixelRatio(ratio)
            self.avatar_preview.setPixmap(scaled)
        if self._avatar:
            self.avatar_path_label.setText(self._avatar)
            self.avatar_path_label.setToolTip(self._avatar)
        else:
            self.avatar_path_label.setText(self.tr("Built-in avatar"))
            self.avatar_path_label.setToolTip("")
        self.reset_avatar_button.setEnabled(bool(self._avatar))


# -- General page -----------------------------------------------------------------------------


def _label_for(spec: SettingSpec) -> str:
    """A short English label made from the key: ``chat.max_output_tokens`` → "Max output tokens"."""
    name = spec.key.split(".", 1)[1]
    unit = ""
    if name.endswith("_ms"):
        name, unit = name[:-3], " (ms)"
    words = name.replace("_", " ")
    return words[:1].upper() + words[1:] + unit


class GeneralPage(QWidget):
    """Editors for the ``ui.*`` and ``chat.*`` settings, generated from the schema.

    Each setting gets a combo box (choices), a spin box (numbers, with the schema's range), a
    check box (bool) or a line edit (text), with its description as tooltip and help line.

    Signals:
        changed(): an edit that Save would write.
        value_changed(str): the key of the setting whose editor changed.
    """

    changed = Signal()
    value_changed = Signal(str)

    def __init__(
        self,
        settings: SettingsStore,
        *,
        sections: Sequence[str] = GENERAL_SECTIONS,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self.specs: list[SettingSpec] = [s for s in SETTINGS if s.section in sections]
        self.editors: dict[str, QWidget] = {}
        self.help_labels: dict[str, QLabel] = {}
        self._labels: dict[str, QLabel] = {}
        self._groups: dict[str, QGroupBox] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        content = QWidget(scroll)
        column = QVBoxLayout(content)
        scroll.setWidget(content)
        outer.addWidget(scroll)
        for section in sections:
            group = QGroupBox(content)
            self._groups[section] = group
            form = QFormLayout(group)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            for spec in (s for s in self.specs if s.section == section):
                editor = self._make_editor(spec, group)
                help_label = _help_label(group)
                self.editors[spec.key] = editor
                self.help_labels[spec.key] = help_label
                if isinstance(editor, QCheckBox):
                    form.addRow(_stacked(group, editor, help_label))
                else:
                    label = QLabel(group)
                    self._labels[spec.key] = label
                    form.addRow(label, _stacked(group, editor, help_label))
            column.addWidget(group)
        column.addStretch(1)
        self.retranslate()

    def _make_editor(self, spec: SettingSpec, parent: QWidget) -> QWidget:
        value = self._settings.get(spec.key)
        key = spec.key
        editor: QWidget
        if spec.choices is not None:
            combo = QComboBox(parent)
            for choice in spec.choices:
                combo.addItem(str(choice), choice)
            combo.setCurrentIndex(max(combo.findData(value), 0))
            combo.currentIndexChanged.connect(lambda _i: self._on_editor_changed(key))
            editor = combo
        elif spec.type is bool:
            check = QCheckBox(parent)
            check.setChecked(bool(value))
            check.toggled.connect(lambda _on: self._on_editor_changed(key))
            editor = check
        elif spec.type is int:
            spin = QSpinBox(parent)
            spin.setRange(
                int(spec.minimum if spec.minimum is not None else -(2**31)),
                int(spec.maximum if spec.maximum is not None else 2**31 - 1),
            )
            spin.setValue(self._settings.get_int(key))
            spin.setGroupSeparatorShown(True)
            spin.valueChanged.connect(lambda _v: self._on_editor_changed(key))
            editor = spin
        elif spec.type is float:
            double = QDoubleSpinBox(parent)
            double.setDecimals(2)
            double.setSingleStep(0.1)
            double.setRange(
                spec.minimum if spec.minimum is not None else -1e9,
                spec.maximum if spec.maximum is not None else 1e9,
            )
            double.setValue(self._settings.get_float(key))
            double.valueChanged.connect(lambda _v: self._on_editor_changed(key))
            editor = double
        else:
            line = QLineEdit(parent)
            line.setText(str(value))
            if spec.maximum is not None:
                line.setMaxLength(int(spec.maximum))
            line.textChanged.connect(lambda _t: self._on_editor_changed(key))
            editor = line
        editor.setObjectName(f"setting:{spec.key}")
        return editor

    def retranslate(self) -> None:
        for section, group in self._groups.items():
            group.setTitle(_schema_tr(_SECTION_TITLES.get(section, section.capitalize())))
        for spec in self.specs:
            editor = self.editors[spec.key]
            label = _schema_tr(_label_for(spec))
            description = _schema_tr(spec.description)
            editor.setToolTip(description)
            self.help_labels[spec.key].setText(description)
            if isinstance(editor, QCheckBox):
                editor.setText(label)
            else:
                self._labels[spec.key].setText(label)
                self._labels[spec.key].setToolTip(description)
            if isinstance(editor, QComboBox) and spec.choices is not None:
                for index, choice in enumerate(spec.choices):
                    native = _NATIVE_CHOICE_NAMES.get(choice)
                    text = native or _schema_tr(_CHOICE_NAMES.get(choice, str(choice)))
                    editor.setItemText(index, text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def value(self, key: str) -> object:
        """The value the editor of ``key`` holds now."""
        editor = self.editors[key]
        if isinstance(editor, QComboBox):
            return editor.currentData()
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QSpinBox | QDoubleSpinBox):
            return editor.value()
        assert isinstance(editor, QLineEdit)
        return editor.text()

    def is_modified(self) -> bool:
        """Whether Save would change anything this page holds."""
        return any(self.value(s.key) != self._settings.get(s.key) for s in self.specs)

    def validate(self) -> bool:
        """Check every value against its spec; mark the first problem. True when fine."""
        ok = True
        for spec in self.specs:
            try:
                validate(spec, self.value(spec.key))
            except InvalidInput:
                _set_state(self.help_labels[spec.key], "error")
                ok = False
            else:
                _set_state(self.help_labels[spec.key], "")
                self.help_labels[spec.key].setStyleSheet("color: palette(placeholder-text);")
        return ok

    def apply(self) -> None:
        """Write the values into the store (not yet to the file)."""
        for spec in self.specs:
            self._settings.set(spec.key, self.value(spec.key))

    def _on_editor_changed(self, key: str) -> None:
        self.value_changed.emit(key)
        self.changed.emit()


# -- the dialog -------------------------------------------------------------------------------


class SettingsDialog(QDialog):
    """The Settings window: Providers, Persona and General pages with Save and Close.

    Save validates every page (marking bad fields inline, keeping what was typed), stores
    changed keys in the ``SecretStore`` and everything else in the ``SettingsStore``, then
    writes its file. On first run the dialog opens on the Providers page with a welcome banner
    and looks once for a model server on this computer, offering one-click setup.

    Open it with ``show()`` or ``open()``; closing with unsaved edits asks first. The dialog
    must be created while the qasync loop runs (it starts tasks in its constructor). Given the
    app's ``memory`` access, a Memory page (``memory_page.MemoryPage``) follows the others.

    Signals:
        settings_saved(): something was written to the settings file (the main window refreshes
            its provider list and re-reads the settings).
    """

    settings_saved = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        registry: ProviderRegistry,
        *,
        probe: ProbeFunction,
        local_candidates: Sequence[str],
        env: Mapping[str, str],
        first_run: bool = False,
        memory: MemoryAccess | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self._settings = settings
        self._tasks = TaskSet()
        self._saving = False
        self._status: tuple[str, TextFactory] | None = None
        self.discard_box: QMessageBox | None = None

        self.page_list = QListWidget(self)
        self.page_list.setFixedWidth(140)
        self.page_list.setStyleSheet("QListWidget::item { padding: 6px 4px; }")
        self.stack = QStackedWidget(self)
        self.providers_page = ProvidersPage(
            settings,
            secrets,
            registry,
            probe=probe,
            local_candidates=local_candidates,
            env=env,
            first_run=first_run,
            parent=self.stack,
        )
        self.general_page = GeneralPage(settings, parent=self.stack)
        self.persona_page = PersonaPage(settings, language=self._chosen_language, parent=self.stack)
        self._pages: dict[str, QWidget] = {
            "providers": self.providers_page,
            "persona": self.persona_page,
            "general": self.general_page,
        }
        self.memory_page: MemoryPage | None = None
        if memory is not None:
            from etos_desktop.ui.memory_page import MemoryPage

            self.memory_page = MemoryPage(memory, settings, parent=self.stack)
            self.memory_page.changed.connect(self._on_page_changed)
            self._pages[MEMORY_PAGE_NAME] = self.memory_page
        self._page_names = tuple(self._pages)
        for name in self._page_names:
            self.page_list.addItem(QListWidgetItem())
            self.stack.addWidget(self._pages[name])
        self.page_list.currentRowChanged.connect(self.stack.setCurrentIndex)

        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        self.save_button = QPushButton(self)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.close_button = QPushButton(self)
        self.close_button.clicked.connect(self.reject)

        body = QHBoxLayout()
        body.addWidget(self.page_list)
        body.addWidget(self.stack, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status_label, 1)
        bottom.addWidget(self.save_button)
        bottom.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addLayout(bottom)

        self.providers_page.saved.connect(self._on_page_saved)
        for page in (self.providers_page, self.persona_page, self.general_page):
            page.changed.connect(self._on_page_changed)
        self.general_page.value_changed.connect(self._on_general_page_value_changed)

        self.retranslate()
        self.resize(820, 560)
        self.setMinimumSize(720, 480)
        self.show_page("providers")

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Settings"))
        titles = {
            "providers": self.tr("Providers"),
            "persona": self.tr("Persona"),
            "general": self.tr("General"),
            MEMORY_PAGE_NAME: self.tr("Memory"),
        }
        for row, name in enumerate(self._page_names):
            self.page_list.item(row).setText(titles[name])
        self.save_button.setText(self.tr("Saving…") if self._saving else self.tr("Save"))
        self.close_button.setText(self.tr("Close"))
        self._render_status()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # -- public API ---------------------------------------------------------------------------

    def show_page(self, name: str) -> None:
        """Show the page ``name``: "providers", "persona", "general" or (given memory) "memory".

        Raises:
            ValueError: No page has that name.
        """
        if name not in self._page_names:
            raise ValueError(f"no settings page {name!r}")
        self.page_list.setCurrentRow(self._page_names.index(name))

    def current_page_name(self) -> str:
        """The name of the page shown."""
        return self._page_names[self.stack.currentIndex()]

    def is_modified(self) -> bool:
        """Whether any page holds edits that are not saved."""
        return (
            self.providers_page.is_modified()
            or self.persona_page.is_modified()
            or self.general_page.is_modified()
            or (self.memory_page is not None and self.memory_page.is_modified())
        )

    async def save(self) -> bool:
        """Validate and save every page; emits ``settings_saved`` on success.

        Returns:
            True when everything was saved. Otherwise the problem is shown (inline at the
            field, or in the status line) and nothing typed is lost.
        """
        if self._saving:
            return False
        self._saving = True
        self.save_button.setEnabled(False)
        self.save_button.setText(self.tr("Saving…"))
        try:
            for name in PAGE_NAMES:
                page = self._pages[name]
                assert isinstance(page, ProvidersPage | PersonaPage | GeneralPage)
                if not page.validate():
                    self.show_page(name)
                    self._set_status(
                        "error", lambda: self.tr("Correct the marked field, then save again.")
                    )
                    return False
            if not await self.providers_page.write_keys():
                self.show_page("providers")
                self._set_status("error", lambda: self.tr("The API key could not be saved."))
                return False
            self.providers_page.apply()
            self.persona_page.apply()
            self.general_page.apply()
            if self.memory_page is not None:
                self.memory_page.apply()
            self._settings.save()
        except EtosError as exc:
            self._set_status("error", lambda e=exc: describe(e).message)
            return False
        finally:
            self._saving = False
            self.save_button.setEnabled(True)
            self.save_button.setText(self.tr("Save"))
        self._set_status("ok", lambda: self.tr("Saved."))
        self.settings_saved.emit()
        return True

    async def wait_idle(self) -> None:
        """Wait until the dialog's and its pages' tasks have ended (tests, shutdown)."""
        await self._tasks.wait_idle()
        await self.providers_page.wait_idle()
        if self.memory_page is not None:
            await self.memory_page.wait_idle()

    # -- closing ------------------------------------------------------------------------------

    def reject(self) -> None:
        if self._saving:
            return
        if not self.is_modified():
            super().reject()
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Unsaved changes"),
            self.tr("Some settings were changed but not saved. Save them before closing?"),
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.button(QMessageBox.StandardButton.Save).setText(self.tr("Save"))
        box.button(QMessageBox.StandardButton.Discard).setText(self.tr("Discard"))
        box.button(QMessageBox.StandardButton.Cancel).setText(self.tr("Cancel"))
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.button(QMessageBox.StandardButton.Save).clicked.connect(
            lambda: self._tasks.spawn(self._save_and_close())
        )
        box.button(QMessageBox.StandardButton.Discard).clicked.connect(self._discard_and_close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.discard_box = box
        box.open()

    def _discard_and_close(self) -> None:
        # A bound ``super().reject`` does not work as a PySide slot; call the base explicitly.
        QDialog.reject(self)

    def done(self, result: int) -> None:
        self.providers_page.cancel_tasks()
        if self.memory_page is not None:
            # Deleted memories are held for Undo only while the panel is open (DESIGN §3).
            self.memory_page.close_panel()
        super().done(result)

    async def _save_and_close(self) -> None:
        if await self.save():
            self.accept()

    # -- slots --------------------------------------------------------------------------------

    def _on_save_button_clicked(self) -> None:
        self._tasks.spawn(self.save())

    def _on_page_saved(self) -> None:
        self.settings_saved.emit()

    def _on_page_changed(self) -> None:
        if self.is_modified():
            self._set_status("", lambda: self.tr("Unsaved changes"))
        elif self._status is not None and self._status[0] == "":
            self._status = None
            self._render_status()

    def _on_general_page_value_changed(self, key: str) -> None:
        if key == "ui.language":
            self.persona_page.refresh_defaults()

    def _chosen_language(self) -> Language:
        # The language picked on the General page, even before it is saved.
        return ui_language(str(self.general_page.value("ui.language")))

    def _set_status(self, state: str, text: TextFactory) -> None:
        self._status = (state, text)
        self._render_status()

    def _render_status(self) -> None:
        if self._status is None:
            self.status_label.clear()
            _set_state(self.status_label, "")
            return
        state, text = self._status
        self.status_label.setText(text())
        _set_state(self.status_label, state)
