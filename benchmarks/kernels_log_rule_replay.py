"""Replay a recorded `rocm-doctor kernels --json` output through this tree's `kernels` command twice: with the stage
as recorded, and with its library log replaced by what the "needed" rule records when it does not run the log
child. Prints whether the findings (id, status, message, evidence) and the diagnosis are the same each time.

    python benchmarks/kernels_log_rule_replay.py KERNELS.json...
"""
import copy
import json
import sys

from click.testing import CliRunner

from rocm_doctor.cli.main import cli
from rocm_doctor.gpu.kernels import stage as kernel_stage


def replay(stage):
    """The command's JSON output for a stage result that `confirm` returns as given (no child runs)."""
    def confirm(facts, options, early=None):
        if early is not None:
            early.stop()
        return copy.deepcopy(stage)

    kernel_stage.confirm = confirm
    result = CliRunner().invoke(cli, ["kernels", "--json", "--no-ab"], catch_exceptions=False)
    return json.loads(result.output)


def judged(document):
    return [(f["id"], f.get("status"), f.get("message"), f.get("evidence")) for f in document["findings"]], \
        document["diagnosis"]


for path in sys.argv[1:]:
    recorded = json.load(open(path, encoding="utf-8"))
    as_recorded = replay(recorded["stage"])
    stage = copy.deepcopy(recorded["stage"])
    stage["library_logs"] = {"ran": False,
                             "reason": kernel_stage.logs_not_needed("needed", stage.get("vendor"), stage["suite"])}
    without = replay(stage)
    print(f"{path}: replayed as recorded {'==' if judged(as_recorded) == judged(recorded) else '!='} recorded; "
          f"without the log {'==' if judged(without) == judged(as_recorded) else '!='} with it; "
          f"log dropped: {recorded['stage']['library_logs'].get('bytes')} bytes, "
          f"{recorded['stage']['library_logs'].get('lines_by_library')}")
