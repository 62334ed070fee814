"""Every `ctxkit ...` command line in README.md and skills/**/SKILL.md code blocks
must parse with the real CLI parser, so the docs cannot drift from the CLI."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

import ctxkit

ROOT = Path(__file__).resolve().parent.parent
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")"}
REDIRECTS = {"<", ">", ">>", "<<", "<<<", ">&", "&>", "<&", ">|"}
PLACEHOLDER = re.compile(r"<([A-Za-z][\w.-]*)>")        # <command>, <file>: not a redirect
FENCE = re.compile(r"^\s*(```|~~~)")


def doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "skills").glob("**/SKILL.md"))]
    return [f for f in files if f.is_file()]


def code_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each fenced code block."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            if current is None:
                current, start = [], number + 1
            else:
                blocks.append((start, current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def tokens_of(text: str) -> list[str] | None:
    lexer = shlex.shlex(PLACEHOLDER.sub(r"\1", text), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:                       # an open quote: the command goes on
        return None


def logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Lines joined across backslash continuations and open quotes."""
    result, buffer, first = [], "", 0
    for offset, line in enumerate(lines):
        line = re.sub(r"^\s*\$ ", "", line) if not buffer else line
        if not buffer:
            first = offset
        buffer = f"{buffer}\n{line}" if buffer else line
        if buffer.endswith("\\"):
            buffer = buffer[:-1]
            continue
        if tokens_of(buffer) is None:
            continue
        result.append((first, buffer))
        buffer = ""
    if buffer:
        result.append((first, buffer))
    return result


def ctxkit_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line number, argv after `ctxkit`) of each ctxkit command in the code blocks."""
    found = []
    for start, lines in code_blocks(text):
        for offset, line in logical_lines(lines):
            tokens = tokens_of(line) or []
            segment: list[str] = []
            skip = False
            for token in tokens + [";"]:
                if skip:
                    skip = False
                elif token in REDIRECTS or re.fullmatch(r"\d*[<>]+&?\d*", token):
                    skip = not token.endswith(("&1", "&2"))
                elif token in SEPARATORS:
                    while segment and re.fullmatch(r"[A-Za-z_]\w*=.*", segment[0]):
                        segment.pop(0)
                    if segment and segment[0] == "ctxkit":
                        found.append((start + offset, segment[1:]))
                    segment = []
                else:
                    segment.append(token)
    return found


def parse_problem(argv: list[str]) -> str | None:
    try:
        ctxkit.build_parser().parse_args(argv)
    except ctxkit.CtxkitError as exc:
        return str(exc)
    except SystemExit as exc:                # --help or --version in the docs
        return None if exc.code == 0 else f"exit {exc.code}"
    return None


def test_every_documented_command_parses():
    problems, seen = [], 0
    for path in doc_files():
        for line, argv in ctxkit_commands(path.read_text(encoding="utf-8")):
            seen += 1
            problem = parse_problem(argv)
            if problem:
                problems.append(f"{path.relative_to(ROOT)}:{line}: ctxkit {shlex.join(argv)}: "
                                f"{problem}")
    assert seen > 0
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", doc_files()[1:], ids=lambda path: path.parent.name)
def test_every_skill_has_a_name_and_a_description(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\nname: ") and "\ndescription: " in text.split("---")[1]


@pytest.mark.parametrize("skill, section, commands, at_least", [
    ("graph-context", "Context",
     {"index", "symbols", "callers", "callees", "impact", "context"}, 12),
    ("lessons", "Lessons",
     {"query", "fail", "ok", "resolve", "deactivate", "stats", "import-cm"}, 20),
])
def test_skill_and_readme_section_show_their_own_commands(skill, section, commands, at_least):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    texts = [(ROOT / "skills" / skill / "SKILL.md").read_text(encoding="utf-8"),
             readme.split(f"## {section}", 1)[1].split("\n## ", 1)[0]]
    found = [argv for text in texts for _, argv in ctxkit_commands(text)]
    assert len(found) >= at_least
    assert {ctxkit.scan_argv(argv).command for argv in found} <= commands, found


def test_snapshot_skill_commands_are_all_seen():
    text = (ROOT / "skills" / "snapshots" / "SKILL.md").read_text(encoding="utf-8")
    commands = {argv[0] + (" " + argv[1] if argv[0] == "snapshot" else "")
                for _, argv in ctxkit_commands(text)}
    assert {"note", "search", "snapshot save", "snapshot check", "snapshot restore",
            "snapshot list", "snapshot show", "risk", "install-hooks",
            "uninstall-hooks"} <= commands


@pytest.mark.parametrize("markdown, expected", [
    ("```sh\nctxkit snapshot frobnicate\n```\n", "invalid choice"),
    ("```\n$ ctxkit note\n```\n", "required"),
    ("```\nmake 2>&1 | ctxkit risk --line x f.py\n```\n", "invalid int"),
    ('```\nctxkit snapshot save -m "multi\nline" --bogus\n```\n', "unrecognized"),
])
def test_the_checker_catches_drift(markdown, expected):
    commands = ctxkit_commands(markdown)
    assert len(commands) == 1
    assert expected in (parse_problem(commands[0][1]) or "")


def test_the_checker_reads_shell_lines():
    text = ("```sh\n"
            "CTXKIT_DB=/tmp/x.db ctxkit snapshot check && ctxkit snapshot restore | head\n"
            "ctxkit run -- <command>   # a placeholder\n"
            "ctxkit hook pre-tool-use < payload.json\n"
            "ctxkit snapshot save -m 'two\n"
            "lines'\n"
            "echo not ctxkit\n"
            "```\n")
    assert [argv for _, argv in ctxkit_commands(text)] == [
        ["snapshot", "check"], ["snapshot", "restore"], ["run", "--", "command"],
        ["hook", "pre-tool-use"], ["snapshot", "save", "-m", "two\nlines"]]
