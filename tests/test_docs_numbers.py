"""What README.md and DESIGN.md say about the code itself, checked against the code:
the module's size, the indexed languages, the commands."""

from __future__ import annotations

import re

from conftest import CTXKIT, ROOT

import ctxkit

DOCS = ("README.md", "DESIGN.md")

# How README names each indexed language.
SPELLED = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript",
           "tsx": "TSX", "go": "Go", "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++",
           "csharp": "C#", "ruby": "Ruby", "php": "PHP", "kotlin": "Kotlin", "swift": "Swift"}


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_stated_sizes_of_the_module_hold():
    lines = len(CTXKIT.read_text(encoding="utf-8").splitlines())
    claims = []
    for name in DOCS:
        text = " ".join(_text(name).split())
        for number in re.findall(r"([\d,]+)-line module", text):
            claims.append((name, "about", int(number.replace(",", ""))))
        for number in re.findall(r"module \((?:over|more than) ([\d,]+) lines\)", text):
            claims.append((name, "over", int(number.replace(",", ""))))
    assert claims, "README states the module's size"
    for name, kind, number in claims:
        if kind == "over":
            assert number < lines < 1.5 * number, (name, number, lines)
        else:
            assert abs(lines - number) <= 0.1 * lines, (name, number, lines)


def test_readme_lists_exactly_the_indexed_languages():
    indexed = {name for name, language in ctxkit.LANGUAGES.items() if language.query}
    assert indexed <= set(SPELLED), "name the new language in SPELLED and in README"
    text = _text("README.md")
    paragraph = text.split("\nLanguages, each with", 1)[1].split("\n\n", 1)[0]
    named = {name for name, spelled in SPELLED.items()
             if re.search(rf"(?<![\w+#]){re.escape(spelled)}(?![\w+#])", paragraph)}
    assert named == indexed


def test_readme_shows_every_command():
    parser = ctxkit.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, ctxkit.argparse._SubParsersAction))
    readme = _text("README.md")
    missing = [name for name in sub.choices if not re.search(rf"ctxkit {name}\b", readme)]
    assert not missing
