"""Issue 27's loose ends, each where it lives: a key typo's "did you mean", results.json's
execution time, the hosted graders' notation key, run_autograder's last line."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.spec.loader import load_spec_text
from grader.spec.spec_reading import SpecError

ROOT = Path(__file__).resolve().parents[1]


def _spec_error(text: str) -> str:
    with pytest.raises(SpecError) as caught:
        load_spec_text(text, "specs/typo.yaml")
    return str(caught.value)


GOOD = (ROOT / "specs" / "02_eager.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "typo, line, guess",
    [
        ("    tag: ", "    tgas: ", "tag"),
        ("    visibility: ", "    visiblity: ", "visibility"),
        ("    hint: ", "    hnit: ", "hint"),
    ],
)
def test_a_key_typo_says_did_you_mean_with_file_and_line(typo, line, guess):
    text = GOOD.replace(typo, line, 1)
    at = text.splitlines().index(next(x for x in text.splitlines() if x.startswith(line))) + 1
    message = _spec_error(text)
    assert message.startswith(f"specs/typo.yaml:{at}: ")
    assert f"did you mean {guess!r}?" in message and "expected one of:" in message


def test_an_unlike_key_gets_no_guess():
    message = _spec_error(GOOD.replace("    hint: ", "    zzzzzzzz: ", 1))
    assert "unknown key" in message and "did you mean" not in message
