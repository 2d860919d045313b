"""Every parser in rocm_doctor.parsers whose name starts with `parse` and that takes one text takes any text
without raising: random bytes, tool-output-like noise, and every cut of every real fixture. Parsers read what
machines print; a garbled line must become a value or nothing, never a traceback in the doctor."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocm_doctor.parsers as parsers_package

FIXTURES = Path(__file__).parent / "fixtures"


def one_text_parsers():
    found = []
    for info in pkgutil.iter_modules(parsers_package.__path__):
        module = importlib.import_module(f"rocm_doctor.parsers.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("parse") or function.__module__ != module.__name__:
                continue
            required = [p for p in inspect.signature(function).parameters.values()
                        if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if len(required) == 1:
                found.append(pytest.param(function, id=f"{info.name}.{name}"))
    return found


PARSERS = one_text_parsers()
TEXTS = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".txt", ".json", ".conf", ".repo",
                                                                               ".list", ".sources", ""))
noisy_text = st.one_of(
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", errors="replace")),
    st.text(alphabet=st.sampled_from(list("{}[]\":,|=*-+/()<>#; \t\n0123456789abcdefxiUrcGPUXid:.")), max_size=300),
)


def test_the_parsers_are_found():
    assert len(PARSERS) >= 40


@pytest.mark.parametrize("parser", PARSERS)
@settings(max_examples=60, deadline=None)
@given(text=noisy_text)
def test_a_parser_never_raises_on_noise(parser, text):
    parser(text)


@pytest.mark.parametrize("parser", PARSERS)
def test_a_parser_never_raises_on_a_cut_of_a_real_output(parser):
    for path in TEXTS:
        text = path.read_text(encoding="utf-8", errors="replace")[:20000]
        for cut in (len(text) // 3, len(text) // 2, 2 * len(text) // 3):
            parser(text[:cut])
            parser(text[cut:])
