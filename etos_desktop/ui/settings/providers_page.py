"""The Providers page: saved model providers and the read-only Environment one, with an editor.

DESIGN §4 (providers, first run) and §9 (keys only in the keyring or the 0600 file). The drafts,
keys and server calls are the ``ProvidersController``'s; this module is the widgets.
"""

from __future__ import annotations

import contextlib
import html
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence

from PySide6.QtCore import QLocale, Qt, Signal
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from etos_desktop.core.context.language import language_for_locale
from etos_desktop.core.context.model_limits import context_window_for, known_vision
from etos_desktop.core.errors import EtosError, InvalidInput
from etos_desktop.core.providers.config import ENVIRONMENT_PROVIDER_ID, ProviderConfig
from etos_desktop.core.providers.presets import CUSTOM, PRESETS, Preset, preset_for_url
from etos_desktop.core.settings.store import MAX_MODEL_CONTEXT, MIN_MODEL_CONTEXT
from etos_desktop.core.usage.prices import CURRENCIES, MAX_PRICE, ModelPrice
from etos_desktop.ui import dialogs
from etos_desktop.ui.error_text import describe
from etos_desktop.ui.labels import plain_tooltip
from etos_desktop.ui.settings.page import (
    SettingsPage,
    TextFactory,
    VerticalScrollArea,
    error_label,
    help_label,
    plain_label,
    row,
    set_state,
    stacked,
)
from etos_desktop.ui.settings.providers_controller import (
    DraftProblem,
    ProviderDraft,
    ProvidersController,
    preset_or_custom,
)
from etos_desktop.ui.usage_text import currency_name

_log = logging.getLogger(__name__)

#: Finds which of the given base URLs answer as a model server (``probe_local_servers``).
ProbeFunction = Callable[[Sequence[str]], Awaitable[list[str]]]

#: Model combos show this many characters and elide longer ids: a server listing long model
#: names must not widen the dialog.
_MODEL_COMBO_CHARS = 18


class ProvidersPage(SettingsPage):
    """Saved providers plus the read-only Environment one, with an editor for the selected one.

    On first run a welcome banner explains what to do and offers one-click setup of a model
    server found on this computer; it goes away once a provider exists.

    Signals:
        saved(): the page wrote the settings file itself (a one-click local provider, a
            removal, a new default); the dialog passes it on as ``settings_saved``.
        keys_loaded(): the stored keys of the saved providers were read.
        models_fetched(list): "Fetch models" ended, with the model ids (``[]`` after an error).
        connection_tested(bool, str): "Test connection" ended: success, and the result line.
        probe_finished(list): the first-run search for local servers ended, with the base URLs
            offered for one-click setup.
    """

    saved = Signal()
    keys_loaded = Signal()
    models_fetched = Signal(list)
    connection_tested = Signal(bool, str)
    probe_finished = Signal(list)

    def __init__(
        self,
        controller: ProvidersController,
        *,
        probe: ProbeFunction,
        local_candidates: Sequence[str],
        first_run: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("providersPage")
        self._controller = controller
        self._probe = probe
        self._local_candidates = tuple(local_candidates)
        self._first_run = first_run
        self._current: str | None = None
        self._loading = False
        self._busy_action = ""
        self._result: tuple[str, TextFactory] | None = None
        self._banner_status: tuple[str, TextFactory] | None = None
        self._offers: list[tuple[QPushButton, str]] = []
        self._build()
        self.retranslate()
        self._update_banner()
        self._refresh_list(select=controller.default_id)
        self.spawn(self._load_keys(), self.tr("The saved API keys were not read."))
        if first_run and not controller.has_provider():
            self.spawn(
                self._probe_local_servers(),
                self.tr("The search for a model server on this computer did not finish."),
            )

    # -- construction -------------------------------------------------------------------------

    def _build(self) -> None:
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
        self.banner_title.setWordWrap(True)
        self.banner_text = plain_label(self.banner)
        self.offers_layout = QVBoxLayout()
        self.offers_layout.setSpacing(4)
        banner_layout.addWidget(self.banner_title)
        banner_layout.addWidget(self.banner_text)
        banner_layout.addLayout(self.offers_layout)
        outer.addWidget(self.banner)
        outer.addWidget(self.status_label)

        body = QHBoxLayout()
        outer.addLayout(body, 1)

        left = QVBoxLayout()
        self.provider_list = QListWidget(self)
        self.provider_list.setMinimumWidth(150)
        self.provider_list.setMaximumWidth(210)
        # A long name (and "— default", "(not saved)") wraps instead of scrolling sideways.
        self.provider_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.provider_list.setWordWrap(True)
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
        set_state(self.empty_label, "muted")
        scroll = VerticalScrollArea(self.editor_stack)
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
        # Long translations put a field under its label instead of squeezing either.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.setContentsMargins(4, 0, 4, 0)
        self._form_labels: dict[str, QLabel] = {}

        def add_row(name: str, widget: QWidget) -> None:
            label = QLabel(editor)
            self._form_labels[name] = label
            form.addRow(label, widget)

        self.env_note = plain_label(editor)
        set_state(self.env_note, "warning")
        form.addRow(self.env_note)

        self.name_edit = QLineEdit(editor)
        self.name_error = error_label(editor)
        add_row("name", stacked(editor, self.name_edit, self.name_error))

        self.preset_combo = QComboBox(editor)
        for item in PRESETS:
            self.preset_combo.addItem(item.name, item.key)
        add_row("preset", self.preset_combo)

        self.url_edit = QLineEdit(editor)
        self.url_error = error_label(editor)
        add_row("url", stacked(editor, self.url_edit, self.url_error))

        self.key_edit = QLineEdit(editor)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_key_button = QToolButton(editor)
        self.show_key_button.setCheckable(True)
        self.show_key_button.toggled.connect(self._on_show_key_button_toggled)
        self.key_error = error_label(editor)
        self.key_warning = plain_label(editor)
        set_state(self.key_warning, "warning")
        self.key_warning.setVisible(self._controller.secrets.using_file_fallback)
        self.docs_label = QLabel(editor)
        self.docs_label.setTextFormat(Qt.TextFormat.RichText)
        self.docs_label.setOpenExternalLinks(True)
        add_row(
            "key",
            stacked(
                editor,
                row(editor, self.key_edit, self.show_key_button),
                self.key_error,
                self.key_warning,
                self.docs_label,
            ),
        )

        self.fetch_button = QPushButton(editor)
        self.fetch_button.clicked.connect(self._on_fetch_button_clicked)
        self.test_button = QPushButton(editor)
        self.test_button.clicked.connect(self._on_test_button_clicked)
        # The result line can hold the server's own words: plain text only.
        self.result_label = plain_label(editor)
        self.result_label.hide()
        form.addRow(
            "",
            stacked(
                editor,
                row(editor, self.fetch_button, self.test_button, stretch=True),
                self.result_label,
            ),
        )

        self.chat_combo = self._model_combo(editor)
        add_row("chat", self.chat_combo)
        self.background_combo = self._model_combo(editor)
        add_row("background", self.background_combo)
        self.embedding_combo = self._model_combo(editor)
        add_row("embedding", self.embedding_combo)

        self.context_spin = QSpinBox(editor)
        self.context_spin.setRange(0, MAX_MODEL_CONTEXT)
        self.context_spin.setSingleStep(1024)
        self.context_spin.setGroupSeparatorShown(True)
        self.context_error = error_label(editor)
        add_row("context", stacked(editor, self.context_spin, self.context_error))

        # Whether the chat model takes images: the built-in table's answer, or the user's.
        self.vision_combo = QComboBox(editor)
        self.vision_combo.setObjectName("visionCombo")
        for value in ("auto", "yes", "no"):
            self.vision_combo.addItem("", value)
        add_row("vision", self.vision_combo)

        # What a million tokens of the chat model cost, for the estimates under replies; both at
        # 0 is no price (no cost is shown, never a guessed one).
        self.price_input_spin = self._price_spin(editor, "priceInputSpin")
        self.price_output_spin = self._price_spin(editor, "priceOutputSpin")
        self.price_currency_combo = QComboBox(editor)
        self.price_currency_combo.setObjectName("priceCurrencyCombo")
        # Its names are translated after it is built: it grows with them.
        self.price_currency_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for currency in CURRENCIES:
            self.price_currency_combo.addItem(currency, currency)
        self.price_help = help_label(editor)
        add_row(
            "price",
            stacked(
                editor,
                row(
                    editor,
                    self.price_input_spin,
                    self.price_output_spin,
                    self.price_currency_combo,
                    stretch=True,
                ),
                self.price_help,
            ),
        )

        self.single_system_check = QCheckBox(editor)
        self.single_system_help = help_label(editor)
        form.addRow("", stacked(editor, self.single_system_check, self.single_system_help))

        self.name_edit.textEdited.connect(self._on_editor_edited)
        self.url_edit.textEdited.connect(self._on_editor_edited)
        self.key_edit.textEdited.connect(self._on_editor_edited)
        self.preset_combo.currentIndexChanged.connect(self._on_preset_combo_changed)
        self.chat_combo.currentTextChanged.connect(self._on_chat_combo_text_changed)
        self.background_combo.currentTextChanged.connect(self._on_editor_edited)
        self.embedding_combo.currentTextChanged.connect(self._on_editor_edited)
        self.single_system_check.toggled.connect(self._on_editor_edited)
        self.context_spin.valueChanged.connect(self._on_context_spin_changed)
        self.vision_combo.activated.connect(self._on_vision_combo_activated)
        self.price_input_spin.valueChanged.connect(self._on_price_edited)
        self.price_output_spin.valueChanged.connect(self._on_price_edited)
        self.price_currency_combo.activated.connect(self._on_price_edited)

    @staticmethod
    def _price_spin(parent: QWidget, name: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox(parent)
        spin.setObjectName(name)
        spin.setRange(0.0, MAX_PRICE)
        # Three decimals hold the cheapest listed prices ($0.075); more only widen the field.
        spin.setDecimals(3)
        spin.setSingleStep(0.1)
        spin.setGroupSeparatorShown(True)
        # Sized for a usual price, not for MAX_PRICE: the row then fits beside its label at
        # 800×600 instead of wrapping under it.
        spin.setMinimumWidth(spin.fontMetrics().horizontalAdvance("Out 000.000") + 36)
        return spin

    @staticmethod
    def _model_combo(parent: QWidget) -> QComboBox:
        combo = QComboBox(parent)
        combo.setEditable(True)
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(_MODEL_COMBO_CHARS)
        return combo

    def retranslate(self) -> None:
        self.provider_list.setAccessibleName(self.tr("Providers"))
        self.banner_title.setText(self.tr("Welcome — connect a model to start"))
        self.add_button.setText(self.tr("Add"))
        self.add_button.setToolTip(self.tr("Add a provider, starting from a known service"))
        language = self._ui_language()
        for item in PRESETS:
            if item.key != CUSTOM:
                self.add_actions[item.key].setText(item.display_name(language))
                index = self.preset_combo.findData(item.key)
                self.preset_combo.setItemText(index, item.display_name(language))
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
            "vision": self.tr("Images"),
            "price": self.tr("Price"),
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
        self.vision_combo.setToolTip(
            self.tr(
                "Whether the chat model accepts images. Automatic follows the app's list of "
                "known models; it applies to this model name in every provider."
            )
        )
        self.price_input_spin.setPrefix(self.tr("In "))
        self.price_output_spin.setPrefix(self.tr("Out "))
        self.price_input_spin.setAccessibleName(self.tr("Input price per million tokens"))
        self.price_output_spin.setAccessibleName(self.tr("Output price per million tokens"))
        self.price_currency_combo.setAccessibleName(self.tr("Currency"))
        for index in range(self.price_currency_combo.count()):
            code = str(self.price_currency_combo.itemData(index))
            self.price_currency_combo.setItemText(index, currency_name(code))
        self.price_help.setText(
            self.tr(
                "Per million tokens, as the service lists it, for the estimated cost under each "
                "reply. Both at 0: no price, no cost shown. It applies to this model name in "
                "every provider."
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
            ).format(path=self._controller.secrets.fallback_path)
        )
        self.env_note.setText(self._env_note_text())
        self._update_action_buttons()
        self._update_key_placeholder()
        self._update_docs_link()
        self._update_context_special_text()
        self._update_vision_combo()
        self._render_result()
        self._render_banner_status()
        self._render_status()
        for button, url in self._offers:
            button.setText(self._offer_text(url))
        self._refresh_list(select=self._current)

    # -- public API ---------------------------------------------------------------------------

    @property
    def current_id(self) -> str | None:
        """Id of the selected provider (``"env"`` for the Environment one), or ``None``."""
        return self._current

    def provider_ids(self) -> list[str]:
        """Ids in list order, the Environment provider last."""
        return [
            str(self.provider_list.item(index).data(Qt.ItemDataRole.UserRole))
            for index in range(self.provider_list.count())
        ]

    def select_provider(self, provider_id: str) -> None:
        """Select a provider in the list and show it in the editor."""
        ids = self.provider_ids()
        if provider_id in ids:
            self.provider_list.setCurrentRow(ids.index(provider_id))

    def add_provider(self, preset_key: str) -> str:
        """Add an unsaved provider made from a preset, select it and return its id."""
        chosen = preset_or_custom(preset_key)
        draft = self._controller.add_draft(chosen.key, self._preset_name(chosen))
        self._refresh_list(select=draft.id)
        (self.url_edit if chosen.key == CUSTOM else self.key_edit).setFocus()
        self.changed.emit()
        return draft.id

    def offer_buttons(self) -> list[QPushButton]:
        """The first-run "Use … at …" buttons, one per local server found."""
        return [button for button, _url in self._offers]

    def is_modified(self) -> bool:
        return self._controller.is_modified()

    def validate(self) -> bool:
        """Check every provider; select the first bad one and mark its field. True when fine."""
        self._clear_errors()
        for draft in self._controller.drafts.values():
            problem = self._controller.problem(draft)
            if problem is not None:
                self.select_provider(draft.id)
                self._show_field_error(problem.field, self._problem_text(problem))
                return False
        model = self._controller.context_problem()
        if model is not None:
            owner = self._controller.owner_of_model(model) or self._current
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
        """Store every changed key (in a worker thread).

        Returns:
            False when a key could not be stored; the page says why.
        """
        try:
            await self._controller.write_keys()
        except EtosError as exc:
            self.set_status("error", lambda e=exc: describe(e).message)
            return False
        return True

    def apply(self) -> None:
        """Write the configurations and context sizes into the store (not yet to the file).

        Call :meth:`validate` first.

        Raises:
            InvalidInput: A configuration was rejected by the store.
        """
        self._controller.apply()
        self._refresh_list(select=self._current)
        self._load_editor()  # shows the values as stored (normalised URL, trimmed names)

    def saved_to_file(self) -> None:
        """The dialog wrote the settings file: the welcome banner goes once a provider exists."""
        self._update_banner()

    # -- the list -----------------------------------------------------------------------------

    def _refresh_list(self, select: str | None) -> None:
        controller = self._controller
        default_id = controller.default_id
        self.provider_list.blockSignals(True)
        self.provider_list.clear()
        for draft in controller.drafts.values():
            self._add_list_item(
                draft.id,
                draft.name.strip() or self.tr("Unnamed provider"),
                draft.base_url,
                default=draft.id == default_id,
                new=draft.saved is None,
            )
        if controller.env_config is not None or controller.env_invalid:
            self._add_list_item(
                ENVIRONMENT_PROVIDER_ID,
                self.tr("Environment"),
                controller.env_config.base_url if controller.env_config else "",
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
        item.setToolTip(plain_tooltip(f"{text}\n{url}" if url else text))
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

    def _preset_name(self, item: Preset) -> str:
        if item.key == CUSTOM:
            return self.tr("Custom server")
        return item.display_name(self._ui_language())

    @staticmethod
    def _ui_language() -> str:
        """The UI's language, as installed (``QLocale``'s default follows the setting)."""
        return language_for_locale(QLocale().name())

    # -- the editor ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _loading_editor(self) -> Iterator[None]:
        self._loading = True
        try:
            yield
        finally:
            self._loading = False

    def _current_draft(self) -> ProviderDraft | None:
        return self._controller.draft(self._current)

    def _load_editor(self) -> None:
        self._clear_errors()
        self._result = None
        self._render_result()
        draft = self._current_draft()
        env = self._controller.env_config
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
                    models=draft.models or list(preset_or_custom(draft.preset).suggested_models),
                )
            elif is_env and env is not None:
                self._fill_editor(
                    name=self.tr("Environment"),
                    preset_key=env.preset,
                    url=env.base_url,
                    key="",
                    chat=env.chat_model,
                    background="",
                    embedding="",
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
                    embedding="",
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
        self.key_warning.setVisible(self._controller.secrets.using_file_fallback and not is_env)
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
        embedding: str,
        single: bool,
        models: list[str],
    ) -> None:
        self.name_edit.setText(name)
        index = self.preset_combo.findData(preset_or_custom(preset_key).key)
        self.preset_combo.setCurrentIndex(max(index, 0))
        self.url_edit.setText(url)
        self.key_edit.setText(key)
        self._fill_model_combos(models, chat=chat, background=background, embedding=embedding)
        self.single_system_check.setChecked(single)

    def _fill_model_combos(
        self, models: Sequence[str], *, chat: str, background: str, embedding: str
    ) -> None:
        for combo, text in (
            (self.chat_combo, chat),
            (self.background_combo, background),
            (self.embedding_combo, embedding),
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
        draft = self._current_draft()
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
        if self.sender() is self.name_edit:
            self._refresh_list(select=draft.id)
        self.changed.emit()

    def _on_preset_combo_changed(self, _index: int) -> None:
        if self._loading:
            return
        draft = self._current_draft()
        if draft is None:
            return
        old = preset_or_custom(draft.preset)
        new = preset_or_custom(str(self.preset_combo.currentData()))
        with self._loading_editor():
            url = self.url_edit.text().strip().rstrip("/")
            if not url or url == old.base_url:
                self.url_edit.setText(new.base_url)
            name = self.name_edit.text().strip()
            if not name or name == self._preset_name(old):
                self.name_edit.setText(self._controller.unique_name(self._preset_name(new)))
            if not draft.models:
                chat = self.chat_combo.currentText().strip()
                if not chat or chat in old.suggested_models:
                    chat = new.suggested_models[0] if new.suggested_models else ""
                self._fill_model_combos(
                    new.suggested_models,
                    chat=chat,
                    background=self.background_combo.currentText(),
                    embedding=self.embedding_combo.currentText(),
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
        self.context_spin.setValue(self._controller.context.get(model, 0) if model else 0)
        self.context_spin.blockSignals(False)
        self.context_spin.setEnabled(bool(model))
        self._update_context_special_text()
        self._update_vision_combo()
        self._update_price_fields()

    def _update_price_fields(self) -> None:
        model = self.chat_combo.currentText().strip()
        price = self._controller.prices.get(model) if model else None
        fields = (self.price_input_spin, self.price_output_spin, self.price_currency_combo)
        for field in fields:
            field.blockSignals(True)
        self.price_input_spin.setValue(price.input if price else 0.0)
        self.price_output_spin.setValue(price.output if price else 0.0)
        currency = price.currency if price else self.price_currency_combo.currentData()
        self.price_currency_combo.setCurrentIndex(
            max(self.price_currency_combo.findData(currency or CURRENCIES[0]), 0)
        )
        for field in fields:
            field.blockSignals(False)
            field.setEnabled(bool(model))

    def _on_price_edited(self, *_args: object) -> None:
        model = self.chat_combo.currentText().strip()
        if not model:
            return
        entered = (self.price_input_spin.value(), self.price_output_spin.value())
        if any(entered):
            self._controller.prices[model] = ModelPrice(
                *entered, currency=str(self.price_currency_combo.currentData())
            )
        else:
            self._controller.prices.pop(model, None)
        self.changed.emit()

    def _update_vision_combo(self) -> None:
        model = self.chat_combo.currentText().strip()
        if model:
            automatic = (
                self.tr("Automatic (accepts images)")
                if known_vision(model)
                else self.tr("Automatic (text only)")
            )
        else:
            automatic = self.tr("Automatic")
        self.vision_combo.setItemText(0, automatic)
        self.vision_combo.setItemText(1, self.tr("This model accepts images"))
        self.vision_combo.setItemText(2, self.tr("This model does not accept images"))
        answer = self._controller.vision.get(model) if model else None
        self.vision_combo.setCurrentIndex(0 if answer is None else 1 if answer else 2)
        self.vision_combo.setEnabled(bool(model))

    def _on_vision_combo_activated(self, index: int) -> None:
        model = self.chat_combo.currentText().strip()
        if not model:
            return
        value = self.vision_combo.itemData(index)
        if value == "auto":
            self._controller.vision.pop(model, None)
        else:
            self._controller.vision[model] = value == "yes"
        self.changed.emit()

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
            self._controller.context[model] = value
        else:
            self._controller.context.pop(model, None)
        self.context_error.hide()
        self.changed.emit()

    def _update_key_placeholder(self) -> None:
        draft = self._current_draft()
        if self._current == ENVIRONMENT_PROVIDER_ID:
            text = (
                self.tr("From OPENAI_API_KEY (not shown)")
                if self._controller.environment_has_key()
                else self.tr("None (OPENAI_API_KEY is not set)")
            )
        elif draft is not None and draft.key is None:
            text = self.tr("Reading the saved key…")
        elif draft is not None and preset_or_custom(draft.preset).local:
            text = self.tr("Usually not needed for this server")
        elif self._controller.secrets.using_file_fallback:
            text = self.tr("Stored in a private file (see below)")
        else:
            text = self.tr("Stored in the system keyring")
        self.key_edit.setPlaceholderText(text)
        self.show_key_button.setText(
            self.tr("Hide") if self.show_key_button.isChecked() else self.tr("Show")
        )

    def _update_docs_link(self) -> None:
        draft = self._current_draft()
        url = preset_or_custom(draft.preset).docs_url if draft is not None else ""
        self.docs_label.setVisible(bool(url))
        if url:
            text = self.tr("Where to get a key and which models exist")
            self.docs_label.setText(
                f'<a href="{html.escape(url, quote=True)}">{html.escape(text)}</a>'
            )

    def _env_note_text(self) -> str:
        if self._controller.env_invalid:
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

    def _problem_text(self, problem: DraftProblem) -> str:
        if problem.field == "name":
            return self.tr("Give the provider a name.")
        if problem.field == "key":
            return self.tr(
                "The key contains spaces or control characters. Paste only the key itself."
            )
        return self._url_problem_text(problem.reason)

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
        set_state(self.result_label, state)
        self.result_label.show()

    # -- fetch and test -----------------------------------------------------------------------

    def _update_action_buttons(self) -> None:
        busy = self._busy_action
        draft = self._current_draft()
        is_env = (
            self._current == ENVIRONMENT_PROVIDER_ID and self._controller.env_config is not None
        )
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
            saved_or_env and self._current != self._controller.default_id and not busy
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
        self._clear_errors()
        try:
            return self._controller.connection_config(self._current)
        except InvalidInput as exc:
            self._show_field_error("url", self._url_problem_text(str(exc.params.get("reason"))))
            return None

    def _on_fetch_button_clicked(self) -> None:
        config = self._connection_config()
        if config is None or self._busy_action:
            return
        self._start_action("fetch")
        self.spawn(self._fetch_models(config), self.tr("The models were not fetched."))

    def _on_test_button_clicked(self) -> None:
        config = self._connection_config()
        if config is None or self._busy_action:
            return
        self._start_action("test")
        self.spawn(self._test_connection(config), self.tr("The connection was not tested."))

    def _show_models(self, provider_id: str, models: list[str], *, preselect: bool) -> None:
        self._controller.remember_models(provider_id, models, preselect=preselect)
        draft = self._controller.draft(provider_id)
        if provider_id != self._current or draft is None or not models:
            return
        with self._loading_editor():
            self._fill_model_combos(
                models,
                chat=draft.chat_model,
                background=self.background_combo.currentText(),
                embedding=self.embedding_combo.currentText(),
            )
        self._update_context_spin()
        self.changed.emit()  # the chat model may have been preselected

    async def _fetch_models(self, config: ProviderConfig) -> None:
        models: list[str] = []
        try:
            models = await self._controller.list_models(config)
        except EtosError as exc:
            self._show_result(config.id, "error", lambda e=exc: describe(e).message)
        else:
            self._show_models(config.id, models, preselect=True)
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
            models = await self._controller.list_models(config, test_model=model)
        except EtosError as exc:
            ok = False
            text = lambda e=exc: describe(e).message  # noqa: E731 - kept for re-translation
        else:
            ok = True
            self._show_models(config.id, models, preselect=False)
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

    # -- keys -----------------------------------------------------------------------------------

    async def _load_keys(self) -> None:
        try:
            await self._controller.load_keys()
        finally:
            draft = self._current_draft()
            if draft is not None:
                with self._loading_editor():
                    self.key_edit.setText(draft.key or "")
                self.key_edit.setEnabled(True)
            self._update_key_placeholder()
            self.keys_loaded.emit()

    # -- remove and default -------------------------------------------------------------------

    def _on_remove_button_clicked(self) -> None:
        draft = self._current_draft()
        if draft is not None:
            self.spawn(self._confirm_then_remove(draft), self.tr("The provider was not removed."))

    async def _confirm_then_remove(self, draft: ProviderDraft) -> None:
        name = draft.name.strip() or self.tr("Unnamed provider")
        if not await dialogs.confirm(
            self,
            self.tr("Remove provider"),
            self.tr(
                "Remove the provider “{name}”? Its saved API key is deleted too. Conversations "
                "that used it switch to the default provider."
            ).format(name=name),
            self.tr("Remove"),
            destructive=True,
        ):
            return
        try:
            wrote = await self._controller.remove(draft.id)
        finally:
            self._refresh_list(select=self._current if self._current != draft.id else None)
            self.changed.emit()
        if wrote:
            self.saved.emit()

    def _on_default_button_clicked(self) -> None:
        provider_id = self._current
        if provider_id is None:
            return
        try:
            self._controller.set_default(provider_id)
        except EtosError as exc:
            self.set_status("error", lambda e=exc: describe(e).message)
            return
        self._refresh_list(select=provider_id)
        self.saved.emit()

    # -- first run ----------------------------------------------------------------------------

    def _update_banner(self) -> None:
        # "No model server was found…" is wrong once a provider is saved.
        self.banner.setVisible(self._first_run and not self._controller.has_provider())

    def _set_banner_status(self, state: str, text: TextFactory) -> None:
        self._banner_status = (state, text)
        self._render_banner_status()

    def _render_banner_status(self) -> None:
        if self._banner_status is None:
            self.banner_text.clear()
            return
        state, text = self._banner_status
        self.banner_text.setText(text())
        set_state(self.banner_text, state)

    def _offer_text(self, url: str) -> str:
        known = preset_for_url(url)
        if known is not None:
            name = known.display_name(self._ui_language())
            return self.tr("Use {name} at {url}").format(name=name, url=url)
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
        configured = {d.base_url.strip().rstrip("/") for d in self._controller.drafts.values()}
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
        self.spawn(self._use_local_server(url), self.tr("The local model server was not set up."))

    async def _use_local_server(self, url: str) -> None:
        try:
            stored = await self._controller.use_local_server(url, self.tr("Local server"))
        except EtosError as exc:
            self._set_banner_status("error", lambda e=exc: describe(e).message)
            return
        finally:
            self._finish_action()
            self._refresh_list(select=self._current)
        for button, offered in self._offers:
            if offered == url:
                button.hide()
        self._offers = [(b, u) for b, u in self._offers if u != url]
        self._refresh_list(select=stored.id)
        self._update_banner()
        name, model = stored.name, stored.chat_model
        if model:
            self.set_status(
                "ok",
                lambda: self.tr(
                    "Ready: “{name}” with the model “{model}”. Close Settings and start chatting."
                ).format(name=name, model=model),
            )
        else:
            self.set_status(
                "warning",
                lambda: self.tr(
                    "Added “{name}”, but it lists no models yet. Load a model in it, then "
                    "fetch the models here."
                ).format(name=name),
            )
        self.saved.emit()
