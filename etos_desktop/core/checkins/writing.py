"""The check-in request, the rules its reply must pass, and the workflow that starts the conversation.

The request (issue 23) is built by the context assembler (``core/context/assembler.py``) like a
chat request, so the model reads the same fenced, labelled blocks and the inspector reads the
same kind of trace: one system message — the persona and the base rules, what a check-in is
and why this one is due, then the user profile and the recent summaries, each fenced by
``text.fencing.fence`` and labelled as reference data, not instructions — and a short message
the app writes in the user's place ("it is Saturday 09:00 where the user is; write your
check-in"), marked as the app's. It goes to the background model
(``providers/background.py``), not streamed, without tools. The profile and the summaries go
only while they are on (``profile.enabled``, ``summaries.enabled``); memories never do.

The reply: cleaned, a wrapping code fence or quotes taken off, secrets replaced by
``[redacted]``, cut at a sentence end past ``MAX_CHARS``. An empty one is refused
(:class:`CheckinRejected`).

The workflow (:class:`CheckinWriter`), run by the background jobs when the rule says a check-in
is due: it chooses who speaks (the most recently used persona whose switch is on), builds and
sends the request, and writes the new conversation (marked as started by the companion), its
first message, the trace and the check-in's row in one transaction. A failure — the server down
or rate limiting after the client's retries, no provider, a refused reply — writes nothing but
the check-in's row with its code, so the day counts and the next attempt waits for the next due
time (``rule.py``). Every outcome is returned as a :class:`CheckinRun`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from types import MappingProxyType
from typing import Final, Literal

from etos_desktop.core.checkins.access import CheckinAccess
from etos_desktop.core.checkins.records import CheckinMode, Persona
from etos_desktop.core.clock import Clock
from etos_desktop.core.context.assembler import (
    AssembledContext,
    ContextBlock,
    ContextInput,
    assemble_context,
)
from etos_desktop.core.context.language import Language, conversation_language
from etos_desktop.core.context.model_limits import context_window_for
from etos_desktop.core.context.prompts import DEFAULT_PERSONA_PROMPT, persona_name, system_prompt
from etos_desktop.core.errors import EtosError, error_text
from etos_desktop.core.profile.access import ProfileAccess
from etos_desktop.core.profile.injection import profile_block
from etos_desktop.core.profile.records import Profile
from etos_desktop.core.providers.background import complete_in_background
from etos_desktop.core.providers.registry import ProviderSource
from etos_desktop.core.settings.store import SettingsStore
from etos_desktop.core.storage.database import shielded
from etos_desktop.core.summaries.access import SummaryAccess
from etos_desktop.core.summaries.injection import summaries_block
from etos_desktop.core.summaries.records import Summary
from etos_desktop.core.text.cleaning import clean_text
from etos_desktop.core.text.secrets import redact_secrets

log = logging.getLogger(__name__)

#: Sampling temperature: a greeting may vary from day to day.
TEMPERATURE: Final = 0.8
#: Reply tokens requested (a few sentences).
MAX_OUTPUT_TOKENS: Final = 400
#: The length the prompt asks for, in characters of the language.
ASKED_CHARS: Final[Mapping[Language, int]] = MappingProxyType({"en": 400, "zh": 150})
#: A longer reply is cut at a sentence end before this many characters.
MAX_CHARS: Final = 1200
#: The user's recent messages that decide the request's language.
LANGUAGE_SAMPLE: Final = 20

_RULES: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "en": (
            "This time you speak first: the user turned on check-ins, and the app asks you to "
            "start a new conversation. {why} Write one short, warm message in English, two or "
            "three sentences and at most {limit} characters, as the first message of the "
            "conversation. Greet the user; if the reference data below holds something worth "
            "asking about (a plan, a worry, something they were working on), ask about one such "
            "thing, briefly and naturally. Don't list what you know, don't mention profiles, "
            "summaries, apps or check-ins, don't invent events, and ask at most one question. If "
            "the reference data holds nothing useful, just say hello and ask how they are. "
            "Reply with the message only."
        ),
        "zh": (
            "这一次由你先开口：用户打开了“主动问候”，应用请你开启一段新的对话。{why}"
            "用中文写一条简短、温暖的消息，两三句话，不超过 {limit} 个字，作为这段对话的第一条消息。"
            "先问候用户；如果下面的参考资料里有值得问一问的事（一个计划、一件担心的事、正在做的事），"
            "就自然、简短地问其中一件。不要罗列你知道的事，不要提到画像、摘要、应用或问候功能，"
            "不要编造事情，最多问一个问题。如果参考资料里没有有用的内容，就简单打个招呼，"
            "问问对方最近怎么样。只回复这条消息本身。"
        ),
    }
)
_WHY_DAILY: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "en": "It is the time of day the user chose for a daily greeting.",
        "zh": "现在是用户设定的每日问候时间。",
    }
)
_WHY_SILENCE: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "en": "The user has not talked with you for {days} days.",
        "zh": "用户已经 {days} 天没有和你聊天了。",
    }
)
_REQUEST: Final[Mapping[Language, str]] = MappingProxyType(
    {
        "en": (
            "[Written by the app, not by the user: it is {weekday}, {date} {time} where the user "
            "is. Write your check-in message now.]"
        ),
        "zh": "【由应用写的，不是用户写的：用户那里现在是 {date}（{weekday}）{time}。请写出你的问候消息。】",
    }
)
_WEEKDAYS: Final[Mapping[Language, tuple[str, ...]]] = MappingProxyType(
    {
        "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        "zh": ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
    }
)


@dataclass(frozen=True)
class CheckinInput:
    """What one check-in request is built from.

    Attributes:
        language: The language it is written in.
        persona_name: The companion's name ("" or blank: the default of the language).
        persona_prompt: Its personality ("" for none).
        reason: ``"daily"`` or ``"silence"``.
        days_silent: Whole days since the user's last message (silence mode).
        local_now: The user's local time now (aware).
        profile: The profile to send (``None``: none, or off).
        summaries: The recent summaries to send, newest first.
        model: The background model.
        context_window: Its context window.
    """

    language: Language
    persona_name: str
    persona_prompt: str
    reason: CheckinMode
    days_silent: int
    local_now: datetime
    profile: Profile | None
    summaries: Sequence[Summary]
    model: str
    context_window: int


def request_text(lang: Language, local_now: datetime) -> str:
    """The message the app writes in the user's place."""
    return _REQUEST[lang].format(
        weekday=_WEEKDAYS[lang][local_now.weekday()],
        date=local_now.date().isoformat(),
        time=f"{local_now:%H:%M}",
    )


def build_request(inp: CheckinInput) -> AssembledContext:
    """The messages of one check-in request and their trace (with the app's message in it).

    Raises:
        MessageTooLong: The model's window cannot hold even the instructions (never with the
            windows this app knows).
    """
    lang = inp.language
    why = (
        _WHY_DAILY[lang]
        if inp.reason == "daily"
        else _WHY_SILENCE[lang].format(days=max(inp.days_silent, 1))
    )
    rules = _RULES[lang].format(why=why, limit=ASKED_CHARS[lang])
    system = f"{system_prompt(lang, inp.persona_name, inp.persona_prompt)}\n\n{rules}"
    blocks: list[ContextBlock] = []
    profile = profile_block(inp.profile, lang)
    if profile is not None:
        blocks.append(profile)
    recent = summaries_block(inp.summaries, lang)
    if recent is not None:
        blocks.append(recent)
    current = request_text(lang, inp.local_now)
    assembled = assemble_context(
        ContextInput(
            system_prompt=system,
            history=[],
            current={"role": "user", "content": current},
            model=inp.model,
            context_window=inp.context_window,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            system_blocks=blocks,
            language=lang,
        )
    )
    trace = dataclasses.replace(
        assembled.trace,
        app_request=current,
        profile_updated_at=(
            inp.profile.updated_at.isoformat()
            if profile is not None and inp.profile is not None and inp.profile.updated_at
            else ""
        ),
        summaries_snapshot_at=inp.local_now.isoformat() if recent is not None else "",
    )
    return AssembledContext(assembled.messages, trace)


# -- the reply -------------------------------------------------------------------------------


class CheckinRejected(EtosError):
    """The model's check-in broke the output rules; nothing is shown.

    ``params["reason"]``: ``"empty"``.
    """

    code = "checkin_rejected"


_FENCE_RE: Final = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_QUOTES: Final = (('"', '"'), ("“", "”"), ("「", "」"), ("『", "』"))
_SENTENCE_END_RE: Final = re.compile(r"[.!?。！？…](?:[\"'”」』)]*)(?=\s|$)|[。！？]")


def finish_checkin(raw: str) -> str:
    """The message to show, from the model's reply.

    Raises:
        CheckinRejected: Nothing is left of it.
    """
    text = clean_text(raw or "").strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    for opening, closing in _QUOTES:
        inner = text[len(opening) : -len(closing)]
        if text.startswith(opening) and text.endswith(closing) and opening not in inner:
            text = inner.strip()
    if not text:
        raise CheckinRejected("the check-in was empty", reason="empty")
    text = redact_secrets(text)
    if len(text) > MAX_CHARS:
        ends = [m.end() for m in _SENTENCE_END_RE.finditer(text, 0, MAX_CHARS)]
        text = text[: ends[-1]] if ends else text[: MAX_CHARS - 1].rstrip() + "…"
    return text


# -- the workflow ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckinRun:
    """What one check-in did.

    Attributes:
        outcome: ``"shown"`` (a conversation was started), ``"failed"`` (nothing was shown;
            the attempt is counted) or ``"skipped"`` (nobody may speak: every switch is off).
        conversation_id: The new conversation.
        message_id: Its first message.
        companion: The companion's name as shown.
        text: The first message.
        error: The failure, for ``"failed"``.
    """

    outcome: Literal["shown", "failed", "skipped"]
    conversation_id: int | None = None
    message_id: int | None = None
    companion: str = ""
    text: str = ""
    error: BaseException | None = None


def choose_persona(personas: Sequence[Persona], off: frozenset[str]) -> Persona | None:
    """Who speaks: the most recently used persona whose switch is on.

    Args:
        personas: Every persona, the most recently used first (``CheckinAccess.personas``).
        off: The keys whose switch is off.
    """
    return next((p for p in personas if p.key not in off), None)


class CheckinWriter:
    """Writes check-ins with the background model.

    Runs on the event loop; storage through :class:`CheckinAccess` (DB thread). It decides
    nothing about *when*: the jobs call :meth:`write` when the rule says one is due.

    Args:
        checkins: The check-in log.
        providers: Resolves the default provider and its background model.
        settings: ``persona.*``, ``memory.enabled``, ``profile.enabled``, ``summaries.*``,
            ``checkins.personas_off`` and the per-model context sizes.
        clock: The time of the check-in.
        ui_language: The ``ui.language`` setting now (the language when no message tells).
        zone: The user's local time zone now.
        profile: The profile to write from (``None``: none).
        summaries: The summaries to write from (``None``: none).
    """

    def __init__(
        self,
        checkins: CheckinAccess,
        providers: ProviderSource,
        settings: SettingsStore,
        clock: Clock,
        ui_language: Callable[[], str],
        zone: Callable[[], tzinfo],
        *,
        profile: ProfileAccess | None = None,
        summaries: SummaryAccess | None = None,
    ) -> None:
        self._checkins = checkins
        self._providers = providers
        self._settings = settings
        self._clock = clock
        self._ui_language = ui_language
        self._zone = zone
        self._profile = profile
        self._summaries = summaries

    async def write(self, reason: CheckinMode, personas_off: frozenset[str]) -> CheckinRun:
        """Write one check-in now and start its conversation.

        Args:
            reason: What made it due (``"daily"`` or ``"silence"``).
            personas_off: The personas whose switch is off.

        Returns:
            What happened; a failure is recorded and returned (``"failed"``), not raised.
        """
        persona = choose_persona(await self._checkins.personas(), personas_off)
        if persona is None:
            log.info("check-in: every persona's switch is off; nothing sent")
            return CheckinRun("skipped")
        now = self._clock.now()
        try:
            return await self._write(reason, persona, now)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, EtosError):
                log.info(
                    "check-in failed: %s; nothing shown, tried again at the next due time", exc.code
                )
            else:
                log.error("check-in failed", exc_info=exc)
            await shielded(
                self._checkins.record_failure(
                    now=now, reason=reason, persona=persona.key, error=error_text(exc)
                )
            )
            return CheckinRun("failed", error=exc)

    async def _write(self, reason: CheckinMode, persona: Persona, now: datetime) -> CheckinRun:
        resolved = await self._providers.resolve(None, None)
        model = resolved.config.model_for_background(resolved.model)
        texts = await self._checkins.recent_user_texts(LANGUAGE_SAMPLE)
        lang = conversation_language(texts, self._ui_language())
        state = await self._checkins.state()
        days = (now - state.last_user_message_at).days if state.last_user_message_at else 0
        name = persona_name(lang, persona.name, self._settings.get_str("persona.name"))
        built = build_request(
            CheckinInput(
                language=lang,
                persona_name=name,
                # As the chat service chooses it: the conversation's own, Settings', the default.
                persona_prompt=persona.prompt
                or self._settings.get_str("persona.prompt")
                or DEFAULT_PERSONA_PROMPT[lang],
                reason=reason,
                days_silent=days,
                local_now=now.astimezone(self._zone()),
                profile=await self._current_profile(),
                summaries=await self._recent_summaries(),
                model=model,
                context_window=context_window_for(model, self._settings.model_context_overrides()),
            )
        )
        completion = await complete_in_background(
            self._providers,
            built.messages,
            temperature=TEMPERATURE,
            max_tokens=MAX_OUTPUT_TOKENS,
        )
        text = finish_checkin(completion.text)
        conversation_id, message_id = await shielded(
            self._checkins.write_shown(
                now=now,
                reason=reason,
                persona=persona,
                text=text,
                model=model,
                trace_json=built.trace.to_json(),
            )
        )
        log.info("check-in shown: conversation #%s (%s)", conversation_id, reason)
        return CheckinRun("shown", conversation_id, message_id, name, text)

    def _memory_on(self, key: str) -> bool:
        return self._settings.get_bool("memory.enabled") and self._settings.get_bool(key)

    async def _current_profile(self) -> Profile | None:
        if self._profile is None or not self._memory_on("profile.enabled"):
            return None
        profile = await self._profile.current()
        return None if profile.empty else profile

    async def _recent_summaries(self) -> list[Summary]:
        count = self._settings.get_int("summaries.inject_count")
        if self._summaries is None or count <= 0 or not self._memory_on("summaries.enabled"):
            return []
        return await self._summaries.for_injection(None, count)
