"""Markdown for a GitHub issue: the verdict first, a table of findings, details and raw data in collapsed
<details> sections, and never more than GitHub's 65,536-character comment limit (long outputs are shortened,
the full JSON goes beside the file).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Optional

from rocm_doctor.engine.diagnosis import verdict_word
from rocm_doctor.engine.model import Status
from rocm_doctor.facts.keys import TORCH_FAMILY
from rocm_doctor.report import diagnosis_view

GITHUB_LIMIT = 65_536
MARGIN = 500  # room for the user's own words around the paste
CAPS = (20_000, 8_000, 3_000, 1_200, 400, 0)  # per-block character caps, tried until the whole fits

LABELS = {"fail": "✗ fail", "error": "⚠ error", "warn": "! warn", "info": "ℹ info", "ok": "✓ ok", "skip": "– skip"}
PROBLEMS = ("fail", "error", "warn", "info")


def render(bundle: dict[str, Any], json_name: Optional[str] = None, limit: int = GITHUB_LIMIT) -> str:
    """The whole comment; output blocks shrink step by step until it fits within `limit` characters."""
    text = ""
    for cap in CAPS:
        text = _Renderer(bundle, json_name, cap).render()
        if len(text) <= limit - MARGIN:
            return text
    cut = "\n\n… (cut to fit GitHub's comment limit; the JSON report has everything)\n"
    return text[: limit - MARGIN - len(cut)] + cut


def verdict(bundle: dict[str, Any]) -> str:
    """The verdict's words (those of the headline) with the counts."""
    summary = bundle.get("summary", {})
    counts = ", ".join(f"{summary[s]} {s}" for s in ("fail", "error", "warn", "info", "ok", "skip") if summary.get(s))
    return f"{verdict_word((bundle.get('diagnosis') or {}).get('verdict', 'healthy'))}: {counts or 'no findings'}"


class _Renderer:
    def __init__(self, bundle: dict[str, Any], json_name: Optional[str], cap: int) -> None:
        self.b = bundle
        self.json_name = json_name
        self.cap = cap
        self.shortened = False

    def render(self) -> str:
        body = [self._head(), self._diagnosis(), self._findings(), self._details(), self._stages(), self._machine()]
        return "\n".join(part for part in body if part) + self._footer()

    # -- sections -------------------------------------------------------------------------------------------
    def _head(self) -> str:
        b = self.b
        tool = b.get("tool", {})
        platform = b.get("platform", {})
        target = b.get("target", {})
        lines = [
            "### rocm-doctor report",
            "",
            f"**{_esc((b.get('diagnosis') or {}).get('headline') or verdict(b))}**",
            "",
            _esc(verdict(b)),
            "",
            f"- rocm-doctor {_esc(tool.get('version', '?'))}, generated {_esc(b.get('generated_at', '?'))}"
            + ("" if b.get("source", "live") == "live" else f", replayed from `{_code(b['source'])}`"),
            f"- Platform: {_esc(' '.join(str(platform.get(k) or '') for k in ('system', 'release', 'machine')).strip() or '?')}"
            + f" ({_esc(platform.get('os') or '?')})",
        ]
        if target.get("python"):
            lines.append(f"- Target interpreter: `{_code(target['python'])}` ({_esc(target.get('reason', ''))})")
        if target.get("environment"):
            lines.append(f"- Environment judged: {_esc(target['environment'])}")
        lines.extend(f"- {_esc(v.get('name'))}: {_esc(v.get('value'))}" for v in b.get("versions") or []
                     if isinstance(v, dict))  # the versions block, as collect_env lists it
        family = (((b.get("facts") or {}).get("values") or {}).get(TORCH_FAMILY) or {}).get("packages") or {}
        if family:  # the torch family as collect_env lists it
            lines.append("- PyTorch packages: " + ", ".join(
                f"`{_code(name)}=={_code(package.get('version'))}`" for name, package in family.items()))
        redaction = b.get("redaction") or {}
        if redaction.get("applied"):
            replaced = ", ".join(f"{n} {k}" for k, n in sorted((redaction.get("replaced") or {}).items()))
            lines.append(f"- Redacted: personal and secret values replaced by placeholders ({_esc(replaced or 'none found')})")
        elif redaction:
            lines.append("- **Not redacted** (`--no-redact`): check it before posting")
        return "\n".join(lines) + "\n"

    def _diagnosis(self) -> str:
        """What is wrong, most important first: each root cause, what to do (commands in fenced blocks, so they
        paste whole), the alternatives and the findings it explains."""
        roots = diagnosis_view.build(self.b)
        if not roots:
            return ""
        parts = ["#### What is wrong", ""]
        for root in roots:
            f = root.finding
            parts.append(f"{root.number}. **{LABELS.get(f.get('status'), '')} {_esc(f.get('title', ''))}**: "
                         f"{_esc(f.get('message', ''))}")
            for item in root.confirmed:
                parts.append(f"   - confirmed by {_esc(item)}")
            if root.new_since:
                parts.append(f"   - {_esc(root.new_since[0])}")
                parts.extend(f"     - {_esc(item)}" for item in root.new_since[1:])
            if root.steps:
                parts.append("   - **Do this:**")
                parts.extend(self._step(step) for step in root.steps)
            for alt in root.alternatives:
                label = "workaround" if alt.workaround else "alternative"
                why = f" — second because {_esc(alt.why_not_first)}" if alt.why_not_first else ""
                parts.append(f"   - Or ({label}): {_esc(alt.title)}{why}")
                parts.extend(self._step(step) for step in alt.steps)
            if root.symptoms:
                parts.append("   - This also explains: " + "; ".join(
                    f"{LABELS.get(s.get('status'), '')} {_esc(s.get('title', ''))}" for s in root.symptoms))
            parts.append("")
        return "\n".join(parts)

    @staticmethod
    def _step(step) -> str:
        text = f"     - `{_code(step.id)}`: {_esc(step.summary)}" + (f" ({_esc(step.how)})" if step.how else "")
        if step.commands:
            text += "\n\n       ```\n" + "\n".join(f"       {c}" for c in step.commands) + "\n       ```\n"
        return text

    def _findings(self) -> str:
        findings = self.b.get("findings", [])
        problems = sorted((f for f in findings if f["status"] in PROBLEMS), key=lambda f: -Status(f["status"]).rank)
        rest = [f for f in findings if f["status"] not in PROBLEMS]
        parts = []
        if problems:
            parts.append(_table(problems))
        else:
            parts.append("No problems found.\n")
        if rest:
            passed = sum(1 for f in rest if f["status"] == "ok")
            parts.append(_details(f"{passed} passed, {len(rest) - passed} skipped", _table(rest)))
        return "\n".join(parts)

    def _details(self) -> str:
        problems = [f for f in self.b.get("findings", []) if f["status"] in PROBLEMS]
        if not problems:
            return ""
        parts = ["#### Details", ""]
        for f in sorted(problems, key=lambda f: -Status(f["status"]).rank):
            body = [_esc(f.get("message", "")), ""]
            for title, key in (("Evidence", "evidence"), ("How to fix", "remediation"), ("References", "docs")):
                if f.get(key):
                    body.append(f"**{title}**")
                    body.extend(f"- {_esc(item)}" for item in f[key])
                    body.append("")
            body.append(f"More: `rocm-doctor explain {_code(f['check'])}`")
            parts.append(_details(f"{LABELS[f['status']]} {_esc(f['id'])} — {_esc(f.get('title', ''))}", "\n".join(body)))
        return "\n".join(parts)

    def _stages(self) -> str:
        stages = self.b.get("stages") or {}
        if not stages:
            return ""
        parts = ["#### Stages", ""]
        for name, value in stages.items():
            short, long_texts = _split_long(value, name)
            table = _rows_table(short)
            body = [table] if table else [self._fenced(json.dumps(short, indent=1, ensure_ascii=False), "json")]
            for path, text in long_texts:  # logs and other long text: each in its own block, shortened
                body.append(f"`{_code(path)}`:")
                body.append(self._fenced(text))
            parts.append(_details(_esc(name), "\n".join(body)))
        return "\n".join(parts)

    def _machine(self) -> str:
        observations = (self.b.get("snapshot") or {}).get("observations") or {}
        if not observations:
            return ""
        parts = ["#### Machine", ""]
        env = observations.get("env") or {}
        if env:
            text = "\n".join(f"{k}={v}" for k, v in sorted(env.items()))
            parts.append(_details(f"Environment ({len(env)} variables)", self._fenced(text)))
        commands = observations.get("commands") or {}
        if commands:
            parts.append(_details(f"Commands ({len(commands)})", "\n".join(self._command(k, c) for k, c in commands.items())))
        files = observations.get("files") or {}
        if files:
            parts.append(_details(f"Files ({len(files)})", "\n".join(self._file(f) for f in files.values())))
        errors = {**observations.get("probe_errors", {}), **((self.b.get("facts") or {}).get("interpreter_errors") or {})}
        if errors:
            parts.append(_details(f"Internal errors ({len(errors)})", "\n".join(
                f"`{_code(k)}`:\n{self._fenced(v)}" for k, v in errors.items())))
        return "\n".join(parts)

    def _command(self, key: str, c: dict[str, Any]) -> str:
        argv = " ".join(c.get("argv", []))
        if c.get("error"):
            status = f"could not run: {c['error']}"
        elif c.get("timed_out"):
            status = f"timed out after {c.get('timeout_s')} s"
        else:
            status = f"exit code {c.get('returncode')}, {c.get('duration_s', 0):.2f} s"
        lines = [f"**{_esc(key)}** — `{_code(argv)}` — {_esc(status)}"]
        for stream in ("stdout", "stderr"):
            if c.get(stream):
                lines.append(f"{stream}:")
                lines.append(self._fenced(c[stream]))
        return "\n".join(lines) + "\n"

    def _file(self, f: dict[str, Any]) -> str:
        head = f"**`{_code(f.get('path', '?'))}`** — " + _esc(
            f.get("error") or ("exists" if f.get("exists") else "missing")
        )
        if f.get("entries") is not None:
            return head + "\n" + self._fenced("\n".join(f["entries"])) + "\n"
        if f.get("content"):
            return head + "\n" + self._fenced(f["content"]) + "\n"
        return head + "\n"

    def _footer(self) -> str:
        notes = []
        if self.shortened:
            notes.append("Some outputs were shortened to fit GitHub's 65,536-character comment limit.")
        if self.json_name:
            notes.append(f"The full report is in `{_code(self.json_name)}` beside this file: please attach it to the issue "
                         f"(`rocm-doctor check --from {_code(self.json_name)}` re-diagnoses it).")
        else:
            notes.append("The full report: `rocm-doctor report --format both -o report.md` also writes `report.json`; "
                         "please attach it.")
        return "\n---\n" + " ".join(notes) + "\n"

    # -- helpers --------------------------------------------------------------------------------------------
    def _fenced(self, text: str, lang: str = "") -> str:
        text = text.rstrip("\n")
        if len(text) > self.cap:
            self.shortened = True
            if self.cap == 0:
                return f"_({len(text):,} characters omitted; see the JSON report)_\n"
            head, tail = text[: self.cap * 2 // 3], text[-(self.cap // 3):]
            text = f"{head}\n… [{len(text) - len(head) - len(tail):,} characters omitted; full text in the JSON report] …\n{tail}"
        longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{fence}{lang}\n{text}\n{fence}\n"


def _table(findings: list[dict[str, Any]]) -> str:
    rows = ["| Status | Check | Finding |", "|---|---|---|"]
    for f in findings:
        finding_id = _code(f["id"]).replace("|", "\\|")
        rows.append(f"| {LABELS[f['status']]} | {_cell(f.get('title', ''))}<br>`{finding_id}` | {_cell(f.get('message', ''))} |")
    return "\n".join(rows) + "\n"


def _rows_table(value: Any) -> Optional[str]:
    """A list of flat records (kernel outcomes, benchmark rows) as a table; None for anything else."""
    if not isinstance(value, list) or not value or not all(isinstance(r, dict) for r in value):
        return None
    if any(isinstance(v, (dict, list)) for r in value for v in r.values()):
        return None
    columns = list(dict.fromkeys(k for r in value for k in r))
    rows = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    rows.extend("| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |" for r in value)
    return "\n".join(rows) + "\n"


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body.rstrip()}\n\n</details>\n"


def _split_long(value: Any, path: str, limit: int = 200) -> tuple[Any, list[tuple[str, str]]]:
    """Moves long or multi-line strings (logs) out of a stage's JSON, so they render as text blocks."""
    found: list[tuple[str, str]] = []

    def walk(item: Any, where: str) -> Any:
        if isinstance(item, str) and (len(item) > limit or "\n" in item):
            found.append((where, item))
            return f"(text below: {where})"
        if isinstance(item, dict):
            return {k: walk(v, f"{where}.{k}") for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(item)]
        return item

    return walk(value, path), found


def _esc(text: Any) -> str:
    """Text outside code: HTML-escaped so placeholders like <user> stay visible."""
    return html.escape(str(text), quote=False)


def _cell(text: Any) -> str:
    return _esc(text).replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def _code(text: Any) -> str:
    """Text inside inline code: no backticks or newlines can break out of it."""
    return str(text).replace("`", "'").replace("\n", " ")
