"""When each record of a GPU child arrives: where the time of a bench preset or of the kernel suite goes, record by
record (inside a section too: model build, prefill, decode, profile), on the parent's clock from the child's start.

    python benchmarks/child_timeline.py bench [quick|full|tiny] [--device cuda|cpu] [--python PATH] [--json FILE]
    python benchmarks/child_timeline.py kernels [--device cuda|cpu] [--python PATH] [--json FILE]

Runs the child directly (no GPU sampling, no library-log child), reading its stdout line by line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def payload_for(what: str, preset: str, device: str) -> tuple[str, dict, str]:
    if what == "bench":
        from rocm_doctor.engine.child import work_folder
        from rocm_doctor.gpu.bench.harness import CHILD
        from rocm_doctor.gpu.bench.plan import build

        return str(CHILD), {"device": device, "watchdog": True, "workdir": work_folder(device),
                            "sections": [s.to_payload() for s in build(preset, device=device)]}, "bench"
    from rocm_doctor.gpu.kernels.harness import CHILD, MARKER, SuiteOptions

    return str(CHILD), SuiteOptions(device=device).payload(None), MARKER


def label(record: dict, marker: str) -> str:
    kind = record.get(marker)
    name = record.get("section") or record.get("case") or ""
    extra = record.get("seconds")
    return f"{kind} {name}" + (f" ({extra} s)" if extra is not None else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["bench", "kernels"])
    parser.add_argument("preset", nargs="?", default="quick")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--json", metavar="FILE", help="every record with its arrival time")
    args = parser.parse_args(argv)
    script, payload, marker = payload_for(args.what, args.preset, args.device)
    started = time.monotonic()
    proc = subprocess.Popen([args.python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    rows, last = [], 0.0
    for line in proc.stdout:
        at = time.monotonic() - started
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or marker not in record:
            continue
        rows.append({"at_s": round(at, 3), "record": record})
        print(f"{at:8.3f}  +{at - last:6.3f}  {label(record, marker)}")
        last = at
    proc.wait()
    print(f"exit {proc.returncode} after {time.monotonic() - started:.2f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, default=str)
    return proc.returncode or 0


if __name__ == "__main__":
    raise SystemExit(main())
