"""The UI's translations: extract the strings, compile them, and check that both are current.

Usage (from the repository root)::

    python tools/translations.py update    # re-extract every string into the .ts files, compile
    python tools/translations.py release   # compile the .ts files into the .qm files only
    python tools/translations.py check     # exit 1 when anything below is out of date or wrong

``update`` runs ``pyside6-lupdate`` over every ``.py`` file of ``etos_desktop/`` (``tr()``,
``QCoreApplication.translate`` and ``QT_TRANSLATE_NOOP`` with literal texts) into
``resources/translations/etos_zh_CN.ts`` (every message) and ``etos_en.ts`` (only the plural
messages: Qt needs an English translation to say "1 memory" for a ``%n`` source text), keeps
translations of unchanged texts, and compiles both with ``pyside6-lrelease``. New texts arrive
*unfinished*: translate them (Qt Linguist, or by hand in the ``.ts``), then ``release``. The
``.qm`` files are committed, so an installed wheel has them. The files hold no source
locations, so a change of line numbers changes nothing.

A translated text the code no longer has stays in its ``.ts`` as *vanished* (lrelease leaves
it out): when the text comes back — or arrives with a merge, translated beforehand — ``update``
brings its translation back. ``update --prune`` drops them.

``check`` fails when a ``.ts`` misses a text of the code or keeps one the code lost (messages
are compared, not line numbers: the files hold no locations), when a ``.qm`` is not what its
``.ts`` compiles to, when a Chinese message (or an English plural) is untranslated, when a
translation loses a placeholder (``{name}``, ``%n``) or its keyboard accelerator, and when a
text is passed to ``tr()`` in a way ``lupdate`` cannot read (through a helper function, or
``other.tr()``, whose context lupdate takes from the variable's name).
"""

from __future__ import annotations

import argparse
import ast
import functools
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "etos_desktop"
FOLDER = Path("resources") / "translations"


@dataclass(frozen=True)
class Catalogue:
    """One translation file: its language and whether it holds only the plural messages."""

    language: str
    plural_only: bool

    @property
    def ts(self) -> Path:
        """The ``.ts`` source, relative to the repository root."""
        return FOLDER / f"etos_{self.language}.ts"

    @property
    def qm(self) -> Path:
        """The compiled ``.qm``, relative to the repository root."""
        return FOLDER / f"etos_{self.language}.qm"


CATALOGUES = (Catalogue("zh_CN", plural_only=False), Catalogue("en", plural_only=True))

#: ``{name}``, ``{n:.1f}`` (str.format fields; ``{{`` is a literal brace) and Qt's ``%n``, ``%1``.
_PLACEHOLDER = re.compile(r"(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}|%n|%L?\d")
#: A keyboard accelerator: "&File" (but not "&&", a literal ampersand).
_ACCELERATOR = re.compile(r"&(?!&)(?=\S)")
#: ``#:`` in this code documents attributes (Sphinx); lupdate would hand it to translators as a
#: comment on whichever text follows, so it is dropped.
_EXTRACOMMENT = re.compile(r"\n\s*<extracomment>.*?</extracomment>", re.S)


@dataclass(frozen=True)
class Message:
    """One message of a ``.ts`` file."""

    context: str
    source: str
    comment: str
    numerus: bool
    finished: bool
    forms: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str, str, bool]:
        """What identifies the message in the code (its translation aside)."""
        return (self.context, self.source, self.comment, self.numerus)


# -- the Qt tools ---------------------------------------------------------------------------------


def qt_tool(name: str) -> Path:
    """The path of ``lupdate`` or ``lrelease``, inside the PySide6 (Essentials) package.

    These are the binaries the ``pyside6-lupdate`` and ``pyside6-lrelease`` commands run.
    """
    import PySide6

    folder = Path(PySide6.__file__).resolve().parent
    for candidate in (folder / name, folder / f"{name}.exe"):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"{name} is not in {folder}: install pyside6-essentials")


def sources(root: Path) -> list[str]:
    """Every Python file of the package, relative to ``root``, in a stable order."""
    return sorted(path.relative_to(root).as_posix() for path in (root / PACKAGE).rglob("*.py"))


def extract(root: Path, catalogue: Catalogue, ts: Path, *, prune: bool = False) -> None:
    """Run lupdate over the package into ``ts`` (merging the translations it holds).

    Args:
        root: The repository.
        catalogue: Which catalogue ``ts`` is.
        ts: The file to update.
        prune: Drop the translations of texts the code no longer has (else kept as vanished).
    """
    command = [
        str(qt_tool("lupdate")),
        "-silent",
        "-locations",
        "none",
        "-source-language",
        "en",
        "-target-language",
        catalogue.language,
    ]
    if catalogue.plural_only:
        command.append("-pluralonly")
    if prune:
        command.append("-no-obsolete")
    command += [*sources(root), "-ts", str(ts.resolve())]
    _run(command, root)
    ts.write_text(_EXTRACOMMENT.sub("", ts.read_text(encoding="utf-8")), encoding="utf-8")


def compile_ts(ts: Path, qm: Path) -> None:
    """Run lrelease: ``ts`` into ``qm``; unfinished translations are left out (English shows)."""
    _run([str(qt_tool("lrelease")), "-silent", "-nounfinished", str(ts), "-qm", str(qm)], None)


def _run(command: Sequence[str], cwd: Path | None) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{Path(command[0]).name} failed:\n{result.stdout}{result.stderr}")


# -- reading .ts files ----------------------------------------------------------------------------


def messages(ts: Path) -> list[Message]:
    """The live messages of a ``.ts`` file, in file order (vanished ones are left out)."""
    found = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            numerus = message.get("numerus") == "yes"
            if translation is None:
                forms: tuple[str, ...] = ()
                kind = "unfinished"
            else:
                kind = translation.get("type") or ""
                if kind in ("vanished", "obsolete"):
                    continue
                if numerus:
                    forms = tuple(f.text or "" for f in translation.iter("numerusform"))
                else:
                    forms = (translation.text or "",)
            found.append(
                Message(
                    context=name,
                    source=message.findtext("source") or "",
                    comment=message.findtext("comment") or "",
                    numerus=numerus,
                    finished=kind == "" and all(forms) and bool(forms),
                    forms=forms,
                )
            )
    return found


def placeholders(text: str) -> list[str]:
    """The placeholders of a text, sorted."""
    return sorted(_PLACEHOLDER.findall(text))


def translation_problems(message: Message) -> list[str]:
    """What a finished translation gets wrong: a lost or extra placeholder, a lost accelerator."""
    problems = []
    wanted = placeholders(message.source)
    for index, form in enumerate(message.forms):
        got = placeholders(form)
        # A singular may say the number in words ("Delete the only memory?"); the last form
        # (the only one in Chinese) must show it.
        if index < len(message.forms) - 1 and "%n" in wanted and "%n" not in got:
            got = sorted([*got, "%n"])
        if got != wanted:
            problems.append(f"placeholders {got} instead of {wanted} in {form!r}")
        if _ACCELERATOR.search(message.source) and not _ACCELERATOR.search(form):
            problems.append(f"the keyboard accelerator (&) is lost in {form!r}")
    return problems


# -- what lupdate cannot read ---------------------------------------------------------------------


class Sources:
    """The package's Python files, each read once and analysed only when a check needs it.

    Most files (all of ``core/``) hold no translation call; a file is analysed only when its
    text names what a check looks for, which keeps ``check`` (run by several tests) cheap.
    """

    def __init__(self, root: Path) -> None:
        self.texts = {name: (root / name).read_text(encoding="utf-8") for name in sources(root)}

    def analyses(self, *words: str) -> dict[str, Analysis]:
        """The analysed files whose text contains one of ``words``."""
        return {
            name: analyse(text)
            for name, text in self.texts.items()
            if any(word in text for word in words)
        }


@dataclass(frozen=True)
class Analysis:
    """What the checks need of one file's syntax tree."""

    #: Functions that (themselves or nested in them) translate a variable.
    helpers: frozenset[str]
    #: ``(line, name)`` of every call of a plain name with a literal text first.
    named_calls: tuple[tuple[int, str], ...]
    #: ``(line, call, receiver)`` of every ``x.tr("…")`` whose ``x`` is not ``self``.
    other_tr: tuple[tuple[int, str, str], ...]
    #: The messages of its translation calls (see ``code_messages``).
    messages: frozenset[tuple[str, str, str, bool]]


@functools.cache
def analyse(text: str) -> Analysis:
    """Parse one file's text and walk it for every check.

    Cached: the result is a function of the text alone, so the tests' many checks of copies of
    the package (in one process) parse each unchanged file once.
    """
    tree = ast.parse(text)
    helpers: set[str] = set()
    _find_helpers(tree, [], helpers)
    named_calls = []
    other_tr = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        literal = bool(node.args) and _is_text(node.args[0])
        if isinstance(func, ast.Name) and literal:
            named_calls.append((node.lineno, func.id))
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "tr"
            and not (isinstance(func.value, ast.Name) and func.value.id == "self")
            and literal
        ):
            other_tr.append((node.lineno, ast.unparse(func), ast.unparse(func.value)))
    messages: set[tuple[str, str, str, bool]] = set()
    _collect(tree, [], messages)
    return Analysis(frozenset(helpers), tuple(named_calls), tuple(other_tr), frozenset(messages))


def unreadable_calls(root: Path, files: Sources | None = None) -> list[str]:
    """Texts passed to translation in a way lupdate does not extract.

    A helper that wraps ``translate(context, text)`` hides literal texts passed to it; and
    ``window.tr("…")`` is extracted under the context "window", not the class of ``window``.
    """
    files = files or Sources(root)
    helpers: set[str] = set()
    for analysis in files.analyses("translate").values():
        helpers |= analysis.helpers
    problems = []
    for name, analysis in files.analyses(".tr(", *helpers).items():
        problems += [
            f"{name}:{line}: {called}() hides its text from lupdate"
            for line, called in analysis.named_calls
            if called in helpers
        ]
        problems += [
            f"{name}:{line}: {call}() is extracted under the "
            f"context {receiver!r}: use QCoreApplication.translate()"
            for line, call, receiver in analysis.other_tr
        ]
    return sorted(problems)


def _find_helpers(node: ast.AST, functions: list[str], helpers: set[str]) -> None:
    """Add to ``helpers`` every function that (itself or nested in it) translates a variable."""
    if isinstance(node, ast.FunctionDef):
        functions = [*functions, node.name]
    if functions and _translates_a_variable(node):
        helpers.update(functions)
    for child in ast.iter_child_nodes(node):
        _find_helpers(child, functions, helpers)


def code_messages(root: Path, files: Sources | None = None) -> set[tuple[str, str, str, bool]]:
    """The messages the code's translation calls hold, read with Python's own parser.

    ``self.tr(text, disambiguation, n)`` (context: the enclosing class),
    ``QCoreApplication.translate(context, text, disambiguation, n)`` and
    ``QT_TRANSLATE_NOOP(context, text)`` with literal texts. lupdate's Python parser is
    compared against this: it silently drops a ``translate()`` whose ``n`` is an expression
    such as ``len(x)``, and never takes a ``translate()`` for a plural (measured with
    PySide6 6.11), so plurals go through ``self.tr()``.
    """
    files = files or Sources(root)
    found: set[tuple[str, str, str, bool]] = set()
    for analysis in files.analyses(".tr(", "translate", "QT_TRANSLATE_NOOP").values():
        found |= analysis.messages
    return found


def _collect(node: ast.AST, classes: list[str], found: set[tuple[str, str, str, bool]]) -> None:
    if isinstance(node, ast.ClassDef):
        classes = [*classes, node.name]
    if isinstance(node, ast.Call):
        message = _message_of(node, classes[-1] if classes else "")
        if message is not None:
            found.add(message)
    for child in ast.iter_child_nodes(node):
        _collect(child, classes, found)


def _message_of(call: ast.Call, class_name: str) -> tuple[str, str, str, bool] | None:
    func, args = call.func, call.args
    texts = [a.value if _is_text(a) else None for a in args]
    plural = any(k.arg == "n" for k in call.keywords)
    is_tr = isinstance(func, ast.Attribute) and func.attr == "tr" and _is_self(func.value)
    if is_tr and texts and texts[0] is not None:
        comment = texts[1] if len(texts) > 1 and texts[1] else ""
        return (class_name, texts[0], comment, plural or len(args) >= 3)
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    marked = name in ("translate", "QT_TRANSLATE_NOOP") and len(texts) >= 2
    if marked and texts[0] is not None and texts[1] is not None:
        comment = texts[2] if len(texts) > 2 and texts[2] else ""
        return (texts[0], texts[1], comment, plural or len(args) >= 4)
    return None


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _translates_a_variable(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "translate" and len(node.args) >= 2 and not _is_text(node.args[1])


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


# -- the commands ---------------------------------------------------------------------------------


def update(root: Path, *, prune: bool = False) -> None:
    """Re-extract every catalogue from the code, then compile them (``prune``: see ``extract``)."""
    (root / FOLDER).mkdir(parents=True, exist_ok=True)
    for catalogue in CATALOGUES:
        extract(root, catalogue, root / catalogue.ts, prune=prune)
    release(root)
    for line in summary(root):
        print(line)


def release(root: Path) -> None:
    """Compile every catalogue's ``.ts`` into its ``.qm``."""
    for catalogue in CATALOGUES:
        compile_ts(root / catalogue.ts, root / catalogue.qm)


def summary(root: Path) -> list[str]:
    """One line per catalogue: how many of its messages are translated."""
    lines = []
    for catalogue in CATALOGUES:
        found = messages(root / catalogue.ts)
        done = sum(m.finished for m in found)
        what = "plural messages" if catalogue.plural_only else "messages"
        lines.append(f"{catalogue.ts.as_posix()}: {done} of {len(found)} {what} translated")
    return lines


def check(root: Path) -> list[str]:
    """Everything that is out of date or wrong; empty when the translations are current."""
    files = Sources(root)
    problems = unreadable_calls(root, files)
    with tempfile.TemporaryDirectory(prefix="etos-translations-") as scratch:
        for catalogue in CATALOGUES:
            committed = root / catalogue.ts
            if not committed.is_file():
                problems.append(f"{catalogue.ts.as_posix()} is missing")
                continue
            fresh = Path(scratch) / committed.name
            shutil.copyfile(committed, fresh)
            extract(root, catalogue, fresh)
            problems += _stale(catalogue, messages(committed), messages(fresh))
            if not catalogue.plural_only:
                problems += _missed_by_lupdate(code_messages(root, files), messages(fresh))
            compiled = Path(scratch) / catalogue.qm.name
            compile_ts(committed, compiled)
            qm = root / catalogue.qm
            if not qm.is_file() or qm.read_bytes() != compiled.read_bytes():
                problems.append(
                    f"{catalogue.qm.as_posix()} is not what {committed.name} compiles to"
                )
            problems += _untranslated(catalogue, messages(committed))
    return problems


def _stale(catalogue: Catalogue, committed: list[Message], fresh: list[Message]) -> list[str]:
    have = {m.key for m in committed}
    want = {m.key for m in fresh}
    name = catalogue.ts.as_posix()
    problems = [f"{name} lacks {_describe(k)}" for k in sorted(want - have)]
    problems += [
        f"{name} keeps {_describe(k)}, which the code no longer has" for k in sorted(have - want)
    ]
    return problems


def _missed_by_lupdate(
    wanted: set[tuple[str, str, str, bool]], extracted: list[Message]
) -> list[str]:
    got = {m.key for m in extracted}
    got_texts = {m.key[:3] for m in extracted}
    problems = []
    for key in sorted(wanted - got):
        if key[:3] in got_texts:
            problems.append(
                f"lupdate took {_describe(key)} as not a plural: use self.tr(text, '', n)"
            )
        else:
            problems.append(f"lupdate did not extract {_describe(key)}: simplify the call")
    return problems


def _untranslated(catalogue: Catalogue, found: Iterable[Message]) -> list[str]:
    name = catalogue.ts.as_posix()
    problems = []
    for message in found:
        if not message.finished:
            problems.append(f"{name}: untranslated {_describe(message.key)}")
            continue
        problems += [
            f"{name}: {_describe(message.key)}: {p}" for p in translation_problems(message)
        ]
    return problems


def _describe(key: tuple[str, str, str, bool]) -> str:
    context, source, comment, _numerus = key
    return f"{context}: {source!r}" + (f" ({comment})" if comment else "")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("update", "release", "check"))
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    parser.add_argument(
        "--prune",
        action="store_true",
        help="update: drop translations of texts the code no longer has",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "update":
        update(root, prune=args.prune)
    elif args.command == "release":
        release(root)
    else:
        problems = check(root)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(
                f"translations: {len(problems)} problem(s); after changing UI texts run "
                "`python tools/translations.py update`, translate what is unfinished, then "
                "`python tools/translations.py release`",
                file=sys.stderr,
            )
            return 1
        for line in summary(root):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
