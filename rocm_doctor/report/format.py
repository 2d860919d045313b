"""The one way a command's result reaches the user: a Result says what it is (its JSON body under the common
envelope, its human view, its Markdown), and the formats are interchangeable classes that each render any Result.
The command picks a format, the app object (rocm_doctor/cli/app.py) owns where it is written."""

from __future__ import annotations

import json
from typing import Any, Protocol

from rocm_doctor.report.envelope import envelope


class Output(Protocol):
    """Where a format writes: a rich console for the human view, plain text (JSON, Markdown, listings), whether
    standard output is a terminal and its width for plain columns (None: a pipe, one line per row)."""

    @property
    def out(self) -> Any: ...

    @property
    def terminal(self) -> bool: ...

    def width(self) -> Any: ...

    def write(self, text: str = "", nl: bool = True) -> None: ...


class NoView(Exception):
    """The result has no view in this format (a benchmark as Markdown); the message is one line for the user."""


class Result:
    """What a command produced. `kind` names it in the envelope; `body()` is what JSON carries under it."""

    kind = ""
    json_indent = 2

    def body(self) -> dict[str, Any]:
        raise NotImplementedError

    def document(self) -> dict[str, Any]:
        """The envelope and the body, made once (a file and standard output carry the same document)."""
        doc = getattr(self, "_doc", None)
        if doc is None:
            doc = self._doc = envelope(self.kind, **self.body())
        return doc

    def json_text(self) -> str:
        return json.dumps(self.document(), indent=self.json_indent, default=str)

    def human(self, output: Output, verbose: bool = False) -> None:
        raise NotImplementedError

    def markdown(self) -> str:
        raise NoView(f"there is no Markdown view of {self.kind or 'this result'}")


class Finished(Result):
    """A result whose JSON document, envelope included, was built by what produced it (a comparison, a plan)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._doc = document
        self.kind = str(document.get("kind", self.kind))


class Lines(Finished):
    """A result whose human view is plain lines (a fix plan, an apply, an undo: their wording lives beside the
    steps it describes)."""

    def __init__(self, document: dict[str, Any], lines: list[str]) -> None:
        super().__init__(document)
        self.lines = lines

    def human(self, output: Output, verbose: bool = False) -> None:
        """In a terminal each line is wrapped as report/wrapping.py's `fold` says (commands whole); in a pipe one
        line per item."""
        width = output.width() if output.terminal else None
        if width:
            from rocm_doctor.report.wrapping import fold
        for line in self.lines:
            for part in fold(line, width) if width else (line,):
                output.write(part)


class Format:
    """Renders any Result to an Output."""

    name = ""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose

    def emit(self, result: Result, output: Output) -> None:
        raise NotImplementedError


class Human(Format):
    name = "human"

    def emit(self, result: Result, output: Output) -> None:
        result.human(output, self.verbose)


class Text(Format):
    """A format that is one text, written to standard output or to a file."""

    @staticmethod
    def text(result: Result) -> str:
        raise NotImplementedError

    def emit(self, result: Result, output: Output) -> None:
        output.write(self.text(result))


class Json(Text):
    """The common envelope (report/envelope.py; schema in data/report.schema.json)."""

    name = "json"

    @staticmethod
    def text(result: Result) -> str:
        return result.json_text()


class Markdown(Text):
    """Markdown to paste into a ticket."""

    name = "markdown"

    @staticmethod
    def text(result: Result) -> str:
        return result.markdown()


FORMATS = {f.name: f for f in (Human, Json, Markdown)}
