"""One rocm-doctor JSON output in a few lines: the headline, every finding at warn or above, and where a bench or
kernel stage ran, its section times, children and library-log child. Used by the run_*.sh scripts.

    python benchmarks/summarize_output.py FILE
"""

import json
import sys


def main(path: str) -> None:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except Exception as exc:  # a command that printed no JSON: say so and go on with the next
        print("  no JSON:", exc)
        return
    print(" ", (document.get("diagnosis") or {}).get("headline"))
    for finding in document.get("findings") or []:
        if finding["status"] in ("warn", "fail", "error"):
            print(f"  {finding['id']} [{finding['status']}]: {finding['message'][:220]}")
    results = (document.get("stages") or {}).get("bench", {}).get("results") or document.get("results") or {}
    sections = results.get("sections") or {}
    if sections:
        print("  sections:", ", ".join(f"{k} {v.get('seconds')}" for k, v in sections.items()))
        print("  children:", ", ".join(str(c.get("duration_s")) for c in results.get("children") or []),
              " live samples:", (results.get("live") or {}).get("seconds"), " elapsed:", results.get("elapsed_s"))
    stage = document.get("stage") or (document.get("stages") or {}).get("kernels") or {}
    suite = stage.get("suite") or {}
    if suite:
        kids = suite.get("children") or []
        print("  kernels: stage", stage.get("seconds"), "s; suite", suite.get("seconds"), "s; import",
              [c.get("import_s") for c in kids], "after import", [c.get("after_import_s") for c in kids],
              "; counts", {k: v for k, v in (suite.get("counts") or {}).items() if v},
              "; library logs", (stage.get("library_logs") or {}).get("duration_s"))


if __name__ == "__main__":
    main(sys.argv[1])
