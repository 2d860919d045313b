"""The results of the commands that diagnose, compare and describe, each in every format it has: a diagnosis
(check, triage), the support bundle (report), a diff and the run list, the checks, one check's documentation, the
data in use and a snapshot. The GPU stages' results are in bench_view, kernels_view and collectives_view."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from rocm_doctor.report.format import Finished, Output, Result


class DiagnosisResult(Result):
    """The one Diagnosis of check and triage. `again`: the options that chose what was diagnosed, which the
    human footer's commands repeat."""

    kind = "diagnosis"

    def __init__(self, report, facts=None, again: Sequence[str] = ()) -> None:
        self.report, self.facts, self.again = report, facts, tuple(again)

    def document(self) -> dict[str, Any]:
        return self.report.to_dict()

    def human(self, output: Output, verbose: bool = False) -> None:
        from rocm_doctor.report.human import render

        render(self.report, output.out, verbose=verbose, again=self.again)

    def markdown(self) -> str:
        from rocm_doctor.report import bundle, markdown

        return markdown.render(bundle.build(self.report, self.facts))


class BundleResult(Finished):
    """`rocm-doctor report`'s bundle (already redacted or not): JSON to attach, Markdown to paste. `json_name`:
    the JSON file written beside the Markdown, which the Markdown's footer names."""

    def __init__(self, data: dict[str, Any], json_name: Optional[str] = None) -> None:
        super().__init__(data)
        self.json_name = json_name

    def json_text(self) -> str:
        from rocm_doctor.report import bundle

        return bundle.to_json(self.document())

    def markdown(self) -> str:
        from rocm_doctor.report import markdown

        return markdown.render(self.document(), json_name=self.json_name)


class DiffResult(Finished):
    """`rocm-doctor diff`: the document rocm_doctor.history.rundiff built."""

    json_indent = 1

    def human(self, output: Output, verbose: bool = False) -> None:
        from rocm_doctor.report.diff_render import render_human

        render_human(self.document(), output.out)

    def markdown(self) -> str:
        from rocm_doctor.report.diff_render import render_markdown

        return render_markdown(self.document())


class RunListResult(Result):
    """`rocm-doctor diff --list`: the stored runs, oldest first."""

    kind = "history"
    json_indent = 1

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def body(self) -> dict[str, Any]:
        return {"runs": self.rows}

    def human(self, output: Output, verbose: bool = False) -> None:
        from rocm_doctor.report.diff_render import run_list_lines

        for line in run_list_lines(self.rows):
            output.write(line)

    def markdown(self) -> str:
        from rocm_doctor.report.diff_render import run_list_lines

        return "\n".join(run_list_lines(self.rows, markdown=True))


class ChecksResult(Result):
    """`rocm-doctor checks`: every check's row, and the plugins that could not be loaded."""

    kind = "checks"

    def __init__(self, rows: list[dict[str, Any]], problems: Sequence[Any] = ()) -> None:
        self.rows, self.problems = rows, list(problems)

    def body(self) -> dict[str, Any]:
        return {"checks": self.rows,
                "load_problems": [{"source": p.source, "error": p.error} for p in self.problems]}

    def human(self, output: Output, verbose: bool = False) -> None:
        from rocm_doctor.report.checks_view import listing

        output.write("\n".join(listing(self.rows, output.width())))
        for problem in self.problems:
            output.write(f"could not load {problem.source}: {problem.error}")


class ExplainResult(Result):
    """`rocm-doctor explain ID`: one check's documentation (Markdown, drawn as such on a terminal)."""

    kind = "explain"

    def __init__(self, check, doc: str) -> None:
        self.check, self.doc = check, doc

    def body(self) -> dict[str, Any]:
        c = self.check
        return {"check": {"id": c.id, "title": c.title, "area": c.area, "severity": c.severity.value,
                          "platforms": [p.value for p in c.platforms]}, "doc": self.doc}

    def human(self, output: Output, verbose: bool = False) -> None:
        c = self.check
        header = f"{c.id} — {c.title}  [severity {c.severity.value}; {', '.join(p.value for p in c.platforms)}]"
        missing = "No documentation is available for this check."
        doc = self._without_title()
        if not output.terminal:  # plain text: no need to load rich's Markdown renderer
            output.write(f"{header}\n\n{doc or missing}")
            return
        from rich.markdown import Markdown

        output.out.print(header)
        output.out.print()
        output.out.print(Markdown(doc) if doc else missing)

    def _without_title(self) -> str:
        """The doc below its "# <id>" heading: on the screen the header line above already names the check."""
        first, _, rest = (self.doc or "").partition("\n")
        return rest.lstrip("\n") if first.strip() == f"# {self.check.id}" else self.doc

    def markdown(self) -> str:
        return self.doc or ""


class DataResult(Result):
    """`rocm-doctor data show --json`: the data in use, the embedded data and every table's sources (the human
    listing is rocm_doctor/cli/data.py's)."""

    kind = "data"

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info

    def body(self) -> dict[str, Any]:
        return self.info


class SnapshotResult(Result):
    """`rocm-doctor snapshot`: the raw observations for `check --from`, in JSON only; the snapshot's own `format`
    and `version` stay beside the envelope's fields."""

    kind = "snapshot"
    json_indent = 1

    def __init__(self, observations) -> None:
        self.observations = observations

    def body(self) -> dict[str, Any]:
        from rocm_doctor.facts import snapshot

        return snapshot.to_dict(self.observations)
