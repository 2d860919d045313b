"""A harness for testing checks, built-in and third-party alike, the way `rocm-doctor check` runs them.

- `run_case(case)`: facts in, findings out; an AssertionError with a readable diff when they differ.
- `assert_fix_passes(case)`: the steps the check attaches to its problems, applied to the case's machine, make
  the check pass.
- `Case`, `Case.from_dict`, `load_cases(path)`: cases as Python objects, dicts or JSON files.
- `step_sites(check)`: where a check attaches steps, so a test can require a fix case for each.

See docs/testing.md.
"""

from rocm_doctor.testing.cases import Case, CaseError, load_cases
from rocm_doctor.testing.fixes import apply_steps, assert_fix_passes
from rocm_doctor.testing.run import facts_for, run_case
from rocm_doctor.testing.sites import step_sites

__all__ = ["Case", "CaseError", "apply_steps", "assert_fix_passes", "facts_for", "load_cases", "run_case",
           "step_sites"]
