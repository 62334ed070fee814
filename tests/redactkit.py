"""The redaction corpora (tests/fixtures/redaction) as cases: shared by the tests
and tests/bench/bench_redaction.py (not collected: no test_ prefix)."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

CORPORA = Path(__file__).resolve().parent / "fixtures" / "redaction"
CLASSES = {
    "a": string.ascii_letters + string.digits,
    "A": string.ascii_uppercase + string.digits,
    "l": string.ascii_lowercase,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "d": string.digits,
    "b": string.ascii_letters + string.digits + "+/",
    "u": string.ascii_letters + string.digits + "_-",
}
_SECRET = re.compile(r"⟦(.*?)⟧", re.DOTALL)
_PIECE = re.compile(r"\{([aAlhHdbu]):(\d+)\}")


def _lines(name: str) -> list[tuple[int, str]]:
    text = (CORPORA / name).read_text(encoding="utf-8")
    return [(number, line.replace("\\n", "\n")) for number, line in
            enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]


def _expand(template: str, rng: random.Random) -> str:
    return _PIECE.sub(lambda m: "".join(rng.choice(CLASSES[m.group(1)])
                                        for _ in range(int(m.group(2)))), template)


def must_redact(name: str) -> list[tuple[str, str, list[str]]]:
    """(line, expected line after redaction, the secrets) for each case of ``name``."""
    cases = []
    for number, line in _lines(name):
        rng = random.Random(f"{name}:{number}")
        secrets = [_expand(m.group(1), rng) for m in _SECRET.finditer(line)]
        parts = _SECRET.split(line)
        text, expected = parts[0], parts[0]
        for secret, after in zip(secrets, parts[2::2], strict=True):
            text += secret + after
            expected += "***REDACTED***" + after
        cases.append((text, expected, secrets))
    return cases


def must_not_redact(name: str) -> list[str]:
    return [line for _, line in _lines(name)]


def rates(redact, redact_cases, clean_lines) -> dict:
    """False negatives (a secret left), over-redactions (more than the secret
    changed) and false positives (a clean line changed), with the failing lines."""
    missed = [(text, redact(text)) for text, _, secrets in redact_cases
              if any(s in redact(text) for s in secrets)]
    altered = [(text, redact(text), expected) for text, expected, secrets in redact_cases
               if redact(text) != expected and not any(s in redact(text) for s in secrets)]
    changed = [(text, redact(text)) for text in clean_lines if redact(text) != text]
    return {"secrets": len(redact_cases), "clean": len(clean_lines),
            "false_negatives": len(missed), "over_redacted": len(altered),
            "false_positives": len(changed), "missed": missed, "altered": altered,
            "changed": changed}
