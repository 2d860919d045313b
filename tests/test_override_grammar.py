"""HSA_OVERRIDE_GFX_VERSION judged by libhsakmt's own rule: `sscanf(v, "%u.%u.%u%c", ...) == 3` and the limits.

The parser (a regular expression) is compared with a reference that walks the string the way glibc's scanf does,
one directive at a time, on generated values and on the spellings found in the wild.
"""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocm_doctor.knowledge import overrides
from rocm_doctor.parsers import gfx, hsa_override

C_SPACE = " \t\n\v\f\r"


def strtoul_u32(sign: str, digits: str) -> int:
    value = int(digits)
    value = 2**64 - 1 if value > 2**64 - 1 else (2**64 - value) % 2**64 if sign == "-" else value
    return value & 0xFFFFFFFF


def reference_sscanf(s: str):
    """The number of assignments sscanf("%u.%u.%u%c") makes, and the three numbers."""
    pos, stored = 0, []
    for directive in ("%u", ".", "%u", ".", "%u", "%c"):
        if directive == "%u":
            while pos < len(s) and s[pos] in C_SPACE:
                pos += 1
            if pos >= len(s):
                return (len(stored) if stored else -1), stored  # input failure: EOF before the conversion
            sign = ""
            if s[pos] in "+-":
                sign, pos = s[pos], pos + 1
            start = pos
            while pos < len(s) and s[pos] in "0123456789":
                pos += 1
            if pos == start:
                return len(stored), stored  # matching failure
            stored.append(strtoul_u32(sign, s[start:pos]))
        elif directive == ".":
            if pos >= len(s):
                return len(stored), stored
            if s[pos] != ".":
                return len(stored), stored
            pos += 1
        else:  # %c: any one character, white space included
            if pos >= len(s):
                return len(stored), stored
            return len(stored) + 1, stored
    raise AssertionError("unreachable")


def reference_accepts(s: str):
    count, fields = reference_sscanf(s)
    if count != 3 or fields[0] > 63 or fields[1] > 255 or fields[2] > 255:
        return None
    return tuple(fields)


PIECES = ["10", "3", "0", "11", "9", "010", "+", "-", ".", " ", "\t", "\r", "\n", "\v", "\f", "x", "0x1", "１",
          "٣", "²", "4294967306", "18446744073709551626", "", "..", "gfx", "_"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=9).map("".join) | st.text(max_size=14))
@example("10.3.0\r")
@example("10.3.0 ")
@example("10.3.0\n")
@example("+10.3.0")
@example("１０.３.０")
@example(" \t10.\n3.\v0")
@example("10 .3.0")
@example("4294967306.3.0")
@example("-4294967286.3.0")
def test_parser_agrees_with_the_sscanf_reference(value):
    assert hsa_override.parse(value) == reference_accepts(value)
    fields, why = overrides.parse(value)
    assert fields == reference_accepts(value) and (why is None) == (fields is not None)


@pytest.mark.parametrize("value, expected", [
    ("10.3.0", (10, 3, 0)), ("+10.3.0", (10, 3, 0)), (" 10.3.0", (10, 3, 0)), ("10.+3.0", (10, 3, 0)),
    ("10. 3.0", (10, 3, 0)), ("010.03.00", (10, 3, 0)), ("9.0.10", (9, 0, 10)), ("-0.0.0", (0, 0, 0)),
    ("4294967306.3.0", (10, 3, 0)),  # %u keeps the low 32 bits: the runtime really reads 10.3.0
    ("10.3.0\r", None), ("10.3.0 ", None), ("10.3.0\n", None), ("'10.3.0 '", None), ("１０.３.０", None),
    ("10 .3.0", None), ("10.3", None), ("10.3.0.1", None), ("0x10.3.0", None), ("64.0.0", None), ("10.256.0", None),
    ("-1.0.0", None), ("", None), ("gfx1030", None),
])
def test_the_spellings_seen_in_the_wild(value, expected):
    assert reference_accepts(value) == expected
    assert hsa_override.parse(value) == expected


def test_a_carriage_return_is_named_in_the_message():
    fields, why = overrides.parse("10.3.0\r")
    assert fields is None
    assert "'10.3.0\\r'" in why and "carriage return" in why and "Windows line endings" in why


def test_the_gfx_of_an_override_follows_the_same_rule():
    assert gfx.from_override("+10.3.0") == "gfx1030"
    assert gfx.from_override(" 9.0.10") == "gfx90a"
    assert gfx.from_override("10.3.0\r") is None
    assert gfx.from_override("10.3.0 ") is None
    assert overrides.target_of("11.0.0\n") is None


def test_the_reference_is_what_glibc_does(tmp_path):
    """The reference itself, checked against the C library's sscanf where a C compiler is at hand."""
    import random
    import shutil
    import subprocess

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    source = tmp_path / "scan.c"
    source.write_text(
        '#include <stdio.h>\n#include <string.h>\n'
        'int main(void) { char line[4096], buf[2048]; while (fgets(line, sizeof line, stdin)) {\n'
        '  size_t n = strlen(line), j = 0; unsigned v, a = 0, b = 0, c = 0; char d;\n'
        '  for (size_t i = 0; i + 1 < n && line[i] != 10; i += 2) { sscanf(line + i, "%2x", &v); buf[j++] = (char)v; }\n'
        '  buf[j] = 0; int r = sscanf(buf, "%u.%u.%u%c", &a, &b, &c, &d);\n'
        '  if (r != 3 || a > 63 || b > 255 || c > 255) puts("-"); else printf("%u %u %u\\n", a, b, c); } }\n')
    binary = tmp_path / "scan"
    subprocess.run([cc, "-o", str(binary), str(source)], check=True, capture_output=True)
    rng = random.Random(13)
    values = ["".join(rng.choice(PIECES + ["\xa0", "\x85"]) for _ in range(rng.randint(0, 9))) for _ in range(5000)]
    out = subprocess.run([str(binary)], input="".join(v.encode().hex() + "\n" for v in values),
                         capture_output=True, text=True, check=True, env={"LC_ALL": "C.UTF-8"}).stdout.splitlines()
    assert len(out) == len(values)
    for value, line in zip(values, out):
        expected = None if line == "-" else tuple(map(int, line.split()))
        assert reference_accepts(value) == expected, repr(value)
        assert hsa_override.parse(value) == expected, repr(value)
