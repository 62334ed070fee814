#!/usr/bin/env python3
"""ctxkit: keep a coding agent's context window small and right.

One file, one SQLite database per repository. The sections below come in
dependency order; ``grep -n '^# ===' ctxkit.py`` is the table of contents.

    Constants          schema version, limits, file names
    Errors             CtxkitError and its exit codes
    Core               paths and root discovery, config, redaction, the
                       database (WAL, busy_timeout, user_version migrations),
                       JSON/human output
    Graph              tree-sitter indexer: files, nodes, edges; symbol lookup
    Context            L0-L5 rendering under an exact tiktoken budget
    Output store       run/store command output, FTS5 search, expand
    Lessons            per-symbol fail/ok memory, risk, inject block
    Snapshots & hooks  notes, compaction snapshots, agent hook handlers
    CLI                argparse parser, global options, main(argv) -> int

Public surface: the ``ctxkit`` command (``main(argv)``); everything else is
internal. Heavy imports (tree_sitter, tiktoken) happen only inside the
functions that need them, so ``query --inject`` and hooks start as fast as
Python does.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as _dt
import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

# =============================================================================
# Constants
# =============================================================================

__version__ = "0.1.0"

# History of the schema (PRAGMA user_version):
#   1  every section's first tables (graph, output store, lessons, snapshots)
SCHEMA_VERSION = 1

STATE_DIR = ".ctxkit"
DB_NAME = "ctxkit.db"
CONFIG_NAME = "config.toml"
SNAPSHOT_FILE = ".context-snapshot.md"
BUSY_TIMEOUT_MS = 15000

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_STALE = 0, 1, 2, 3

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


class Ambiguous(CtxkitError):
    """Several nodes match a name; the message lists the candidates."""


# =============================================================================
# Core: paths, root and project discovery
# =============================================================================


@dataclasses.dataclass(frozen=True)
class Env:
    """Where a command runs: the root, the database, the project and output mode."""

    root: Path
    cwd: Path
    db_path: Path
    project: str
    json: bool = False
    quiet: bool = False


def find_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding ``.git``, else ``start``."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def make_env(db: str | None = None, project: str | None = None,
             as_json: bool = False, quiet: bool = False,
             cwd: Path | None = None) -> Env:
    cwd = (cwd or Path.cwd()).resolve()
    root = find_root(cwd)
    db_text = db or os.environ.get("CTXKIT_DB")
    db_path = Path(db_text).expanduser() if db_text else root / STATE_DIR / DB_NAME
    if not db_path.is_absolute():
        db_path = cwd / db_path
    name = project or os.environ.get("CTXKIT_PROJECT") or root.name or "default"
    return Env(root=root, cwd=cwd, db_path=db_path, project=name,
               json=as_json, quiet=quiet)


def normalize_file(path: str | None, env: Env) -> str:
    """Normalize a ``--file`` argument to the one identity seed 003 defines.

    None and "" give ""; backslashes become slashes; ``./`` and ``../`` are
    folded; an absolute path becomes relative to the root (to the working
    directory when it lies outside the root). A relative path is taken from
    the root, unless it names an existing file only from a working directory
    below the root.
    """
    if not path:
        return ""
    text = path.replace("\\", "/")
    if os.path.isabs(text):
        absolute = Path(os.path.normpath(text))
        for base in (env.root, env.cwd):
            with contextlib.suppress(ValueError):
                return absolute.relative_to(base).as_posix()
        return absolute.as_posix()
    if env.cwd != env.root and env.root in env.cwd.parents:
        from_cwd = env.cwd / text
        if from_cwd.exists() and not (env.root / text).exists():
            text = from_cwd.relative_to(env.root).as_posix()
    text = os.path.normpath(text).replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return "" if text == "." else text


def utc_now() -> str:
    """UTC ISO timestamp with microseconds, sortable as text."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> _dt.datetime | None:
    """Parse the timestamps ctxkit and code memory write (with or without T/Z)."""
    if not text:
        return None
    cleaned = text.strip().replace("Z", "").replace("T", " ")
    with contextlib.suppress(ValueError):  # fromisoformat: no _strptime import (start-up)
        return _dt.datetime.fromisoformat(cleaned).replace(tzinfo=_dt.timezone.utc)
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        with contextlib.suppress(ValueError):
            return _dt.datetime.strptime(cleaned, fmt).replace(tzinfo=_dt.timezone.utc)
    return None


# =============================================================================
# Core: config
# =============================================================================


def load_config(env: Env) -> dict[str, Any]:
    """``<root>/.ctxkit/config.toml`` as a dict; {} when absent."""
    path = env.root / STATE_DIR / CONFIG_NAME
    if not path.is_file():
        return {}
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        return _parse_simple_toml(path.read_text(encoding="utf-8"))
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
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

# Seed 003's pattern, kept whole so code-memory users get the same masking.
_SEED_SECRET = r"sk-[a-zA-Z0-9]{20,}|ghp_[a-zA-Z0-9]{36}|Bearer\s+\S{10,}|AKIA[A-Z0-9]{16}"

# Each pattern replaces its whole match, except those with a group named
# "value", where only that group is replaced (the key name stays readable).
# Compiled on first use (redaction_patterns()), not at import: start-up matters.
REDACTION_SOURCES: tuple[str, ...] = (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    _SEED_SECRET,
    r"sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
    r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}",
    r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}",
    r"AIza[0-9A-Za-z_-]{35}",
    r"(?:ASIA|AKIA)[A-Z0-9]{16}",
    # user:password@host inside URLs and connection strings
    r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]+:(?P<value>[^\s@/'\"]+)@",
    # password = "..." / SECRET_KEY: ... / --password xyz style assignments
    r"(?i)(?:\b|_)(?:password|passwd|pwd|secret|secret[_-]?key|api[_-]?key|access[_-]?key"
    r"|auth[_-]?token|access[_-]?token|client[_-]?secret|private[_-]?key)\b['\"]?"
    r"(?:\s*[:=]\s*|\s+)(?P<q>['\"])?(?P<value>(?(q)[^'\"\n]{1,200}|[^\s'\",;)}\]]{1,200}))",
)

# An unquoted assignment value that is plainly code, not a secret: a name,
# attribute or call (password=self.password, token = get_token()).
_CODE_LIKE_VALUE = (
    r"^(?:[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\(?|None|null|nil|true|false|True"
    r"|False|undefined|\*+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\*\*\*REDACTED\*\*\*)$")

_compiled_redaction: list[re.Pattern[str]] = []


def redaction_patterns() -> list[re.Pattern[str]]:
    """REDACTION_SOURCES compiled, once per process."""
    if not _compiled_redaction:
        _compiled_redaction.extend(re.compile(p) for p in REDACTION_SOURCES)
    return _compiled_redaction


def redact(text: str) -> tuple[str, int]:
    """Mask secrets in ``text``; return the masked text and how many were masked."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if "value" not in match.re.groupindex:
            count += 1
            return REDACTED
        value = match.group("value")
        # Only assignments can hold code; a URL's password is always a secret.
        quoted = match.group("q") if "q" in match.re.groupindex else True
        if not value or (not quoted and re.match(_CODE_LIKE_VALUE, value)) or value == REDACTED:
            return match.group(0)
        count += 1
        start, end = match.span("value")
        base = match.start()
        whole = match.group(0)
        return whole[:start - base] + REDACTED + whole[end - base:]

    for pattern in redaction_patterns():
        text = pattern.sub(replace, text)
    return text, count


# =============================================================================
# Core: database
# =============================================================================

_SQLITE_MAGIC = b"SQLite format 3\x00"


class Database:
    """One SQLite connection with ctxkit's PRAGMAs, migrations and ``atomic()``.

    The connection is in autocommit mode; writes go through ``atomic()``,
    which takes the write lock up front (BEGIN IMMEDIATE) so concurrent
    writers wait on busy_timeout instead of failing on lock upgrade.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn
        self._depth = 0

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
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
        except BaseException:
            self._depth = 0
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self.execute("COMMIT")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()


def wrap_sqlite_error(exc: sqlite3.Error, path: Path) -> DatabaseError:
    text = str(exc)
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
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise DatabaseError(f"cannot read database {path}: {exc.strerror}") from None
    if head and head != _SQLITE_MAGIC:
        raise DatabaseError(f"{path} is not a SQLite database; move it away or pass --db")
    return bool(head)


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
            raise DatabaseError(f"cannot create database {path}: {exc.strerror}") from None
    old_umask = os.umask(0o077)  # the -wal and -shm files stay private too
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                               isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        os.umask(old_umask)
        raise wrap_sqlite_error(exc, path) from exc
    db = Database(path, conn)
    try:
        conn.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = db.one("PRAGMA user_version")[0]
        if version > SCHEMA_VERSION:
            raise DatabaseError(
                f"{path} was written by a newer ctxkit (schema {version}, this one "
                f"knows {SCHEMA_VERSION}); upgrade ctxkit — the file was not modified")
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
    with contextlib.suppress(OSError):
        mode = os.stat(path).st_mode
        if mode & 0o077:  # private, but a file the owner made read-only stays read-only
            os.chmod(path, mode & 0o700)
    return db


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


# =============================================================================
# Core: migrations
# =============================================================================
# Each step takes the schema from N-1 to N inside one transaction, after
# re-reading user_version under the write lock (another process may have
# migrated first). Each section owns its tables through its *_SCHEMA constant.


def _upgrade_to_1(db: Database) -> None:
    for script in (GRAPH_SCHEMA, OUTPUT_SCHEMA, LESSON_SCHEMA, SNAPSHOT_SCHEMA):
        for statement in split_sql(script):
            db.execute(statement)


MIGRATIONS: tuple[Callable[[Database], None], ...] = (_upgrade_to_1,)


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
        for target in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[target - 1](db)
            db.execute(f"PRAGMA user_version = {int(target)}")


# =============================================================================
# Core: output
# =============================================================================


def emit(env: Env, data: Any, human: str | Callable[[], str] | None = None) -> None:
    """Print one JSON document (``--json``) or the human text."""
    if env.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=None) + "\n")
        return
    text = human() if callable(human) else human
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"ctxkit: {message}\n")


def progress(message: str) -> None:
    """A transient progress line, only when stderr is a terminal."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()


def done_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


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
"""


@dataclasses.dataclass(frozen=True)
class Node:
    """One graph node as other sections see it."""

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

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("rowid")
        data["params"] = list(self.params)
        return data


_NODE_COLUMNS = ("id, uid, kind, name, qualname, path, line, end_line, signature, params, "
                 "return_type, is_async, exported, docstring, loc, complexity, body_hash")


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
    where, params = ["project = ?"], [project]
    if file:
        where.append("path = ?")
        params.append(file)
    clause = " AND ".join(where)
    for column in ("uid", "qualname", "name"):
        rows = db.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE {clause} AND {column} = ? "
                        f"AND kind != 'file' ORDER BY path, line", (*params, symbol))
        if rows:
            return [_node_from_row(r) for r in rows]
    return []


def graph_nodes_at(db: Database, project: str, path: str, first: int,
                   last: int | None = None) -> list[Node]:
    """The innermost non-file nodes overlapping lines ``first..last`` of ``path``."""
    last = first if last is None else last
    rows = db.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE file_id = (SELECT id FROM files "
                    f"WHERE project = ? AND path = ?) AND kind != 'file' AND line <= ? "
                    f"AND end_line >= ? ORDER BY line", (project, path, last, first))
    nodes = [_node_from_row(r) for r in rows]
    # Keep a node only when no other match lies strictly inside it.
    return [n for n in nodes if not any(
        o is not n and n.line <= o.line and o.end_line <= n.end_line
        and (o.line, o.end_line) != (n.line, n.end_line) for o in nodes)]


# --- Graph: languages and their tree-sitter queries --------------------------

GRAPH_MAX_FILE_BYTES = 1 << 20
GRAPH_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "dist",
                             "build", "target", "vendor", STATE_DIR})
GRAPH_EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift",
}
GRAPH_FULL_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust",
                                  "java"})
CLASS_KINDS = frozenset({"class", "struct", "interface", "enum", "trait"})

# Confidence of a calls edge, by how it was resolved.
CONF_EXACT = 1.0      # scope, imports, self/this/cls, the enclosing class and its bases
CONF_TYPED = 0.9      # receiver's type read from an annotation or a constructor call
CONF_UNIQUE = 0.7     # a bare name defined once in the whole index
CONF_UNIQUE_ATTR = 0.5  # x.name() on an unknown x, the name defined once in the index
DEFAULT_MIN_CONFIDENCE = 0.5

_PY_BRANCHES = ("(if_statement) (elif_clause) (for_statement) (while_statement) (except_clause)"
                " (boolean_operator) (conditional_expression) (case_clause) (for_in_clause)"
                " (if_clause)")
_JS_CALLS = """
(call_expression function: (identifier) @callee) @call
(call_expression function: (member_expression object: (_) @recv
    property: (property_identifier) @callee)) @call
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
(variable_declarator name: (identifier) @var value: (await_expression (call_expression
    function: [(identifier) (member_expression)] @type))) @vartype
(assignment_expression left: (member_expression object: (this) @self
    property: (property_identifier) @var) right: (new_expression constructor: (_) @type)) @vartype
(export_specifier name: (_) @exportname)
(export_statement value: (identifier) @defaultname)
(assignment_expression left: (member_expression) @exportlhs right: (_) @exportrhs)
"""
_JS_FIELDS = """
(field_definition property: (property_identifier) @var
    value: (new_expression constructor: (_) @type)) @vartype @self
"""
_TS_FIELDS = """
(public_field_definition name: (property_identifier) @var type: (type_annotation (_) @type))
    @vartype @self
(public_field_definition name: (property_identifier) @var !type
    value: (new_expression constructor: (_) @type)) @vartype @self
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
(variable_declarator name: (identifier) @name
    value: [(arrow_function) (function_expression)] @fn) @def.function
(expression_statement (assignment_expression
    left: (member_expression object: [(identifier) (member_expression)] @owner
        property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)] @fn
    (#match? @owner "^(module\\.)?exports$"))) @def.function
"""
_TS_DEFS = """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(method_signature name: (_) @name) @def.function
(abstract_method_signature name: (_) @name) @def.function
(variable_declarator name: (identifier) @var type: (type_annotation (_) @type)) @vartype
"""

GRAPH_QUERIES: dict[str, str] = {
    "python": f"""
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(call function: (identifier) @callee) @call
(call function: (attribute object: (_) @recv attribute: (identifier) @callee)) @call
[(import_statement) (import_from_statement)] @import
(assignment left: (identifier) @var right: (call function: [(identifier) (attribute)] @type))
    @vartype
(assignment left: (attribute object: (identifier) @self (#eq? @self "self")
    attribute: (identifier) @var) right: (call function: [(identifier) (attribute)] @type))
    @vartype
(module (expression_statement (assignment left: (identifier) @allname
    right: [(list) (tuple)] @allvalue)))
[{_PY_BRANCHES}] @branch
""",
    "javascript": _JS_DEFS + _JS_CALLS + _JS_FIELDS + _JSX_CALLS,
    "typescript": _JS_DEFS + _TS_DEFS + _JS_CALLS + _TS_FIELDS,
    "tsx": _JS_DEFS + _TS_DEFS + _JS_CALLS + _TS_FIELDS + _JSX_CALLS,
    "go": """
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(method_elem name: (field_identifier) @name) @def.function
(call_expression function: (identifier) @callee) @call
(call_expression function: (selector_expression operand: (_) @recv
    field: (field_identifier) @callee)) @call
(import_spec) @import
(package_clause (package_identifier) @package)
(short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . [(composite_literal type: (_) @type)
        (unary_expression operand: (composite_literal type: (_) @type))])) @vartype
(var_spec name: (identifier) @var type: (_) @type) @vartype
(short_var_declaration left: (expression_list . (identifier) @var)
    right: (expression_list . (call_expression function: (_) @type))) @vartype
[(if_statement) (for_statement) (expression_case) (type_case) (communication_case)] @branch
(binary_expression operator: ["&&" "||"]) @branch
""",
    "rust": """
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.struct
(trait_item name: (type_identifier) @name) @def.trait
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
""",
    "java": """
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(method_invocation object: (_) @recv name: (identifier) @callee) @call
(method_invocation !object name: (identifier) @callee) @call
(object_creation_expression type: (type_identifier) @callee) @call
(import_declaration) @import
(package_declaration (_) @package)
(local_variable_declaration type: (_) @type declarator: (variable_declarator
    name: (identifier) @var)) @vartype
(field_declaration type: (_) @type declarator: (variable_declarator
    name: (identifier) @var)) @vartype
[(if_statement) (for_statement) (enhanced_for_statement) (while_statement) (do_statement)
 (catch_clause) (ternary_expression) (switch_label)] @branch
(binary_expression operator: ["&&" "||"]) @branch
""",
    "c": """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator
    declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition type: (struct_specifier !name body: (_)) declarator: (type_identifier) @name)
    @def.struct
""",
    "cpp": """
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
""",
    "csharp": """
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(namespace_declaration name: (_) @name) @scope.namespace
""",
    "ruby": """
(class name: (_) @name) @def.class
(module name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.function
""",
    "php": """
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
""",
    "kotlin": """
(class_declaration (type_identifier) @name) @def.class
(object_declaration (type_identifier) @name) @def.class
(function_declaration (simple_identifier) @name) @def.function
""",
    "swift": """
(class_declaration name: (type_identifier) @name) @def.class
(protocol_declaration name: (type_identifier) @name) @def.interface
(function_declaration name: (simple_identifier) @name) @def.function
""",
}

_LANG_CACHE: dict[str, tuple[Any, Any]] = {}


def graph_language(lang: str) -> tuple[Any, Any]:
    """(parser, query) for a language, built once per process."""
    if lang not in _LANG_CACHE:
        try:
            from tree_sitter import Query
            from tree_sitter_language_pack import get_language, get_parser
        except ImportError as exc:
            raise CtxkitError(f"tree-sitter is not installed ({exc}); "
                              f"pip install 'tree-sitter-language-pack>=0.13,<1'") from None
        _LANG_CACHE[lang] = (get_parser(lang), Query(get_language(lang), GRAPH_QUERIES[lang]))
    return _LANG_CACHE[lang]


# --- Graph: extraction (runs in the worker processes) ------------------------

from bisect import bisect_right as _bisect_right  # noqa: E402 - tiny C module, used per call site


@dataclasses.dataclass
class _Def:
    node: Any
    kind: str              # class kinds, function, method, or scope (impl, mod, namespace)
    name: str
    fn: Any                # the node holding parameters and body
    parent: int = -1
    params: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    qualname: str = ""
    branches: int = 0


class _Source:
    """One file's bytes and tree with the text helpers the extractors share."""

    def __init__(self, lang: str, src: bytes):
        self.lang, self.src = lang, src

    def text(self, node: Any) -> str:
        if node is None:
            return ""
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def graph_extract(lang: str, src: bytes) -> dict[str, Any]:
    """Definitions, calls, imports, bases and resolution context of one file."""
    parser, query = graph_language(lang)
    from tree_sitter import QueryCursor
    tree = parser.parse(src)
    s = _Source(lang, src)
    defs: list[_Def] = []
    calls, imports, vartypes, branches, extra = [], [], [], [], {}
    for _, caps in QueryCursor(query).matches(tree.root_node):
        _collect_match(s, caps, defs, calls, imports, vartypes, branches, extra)
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    _link_parents(s, defs)
    starts = [d.node.start_byte for d in defs]
    for pos in branches:
        index = _enclosing(defs, starts, pos)
        if index >= 0:
            defs[index].branches += 1
    ctx = _file_context(s, imports, extra)
    records, bases, emitted = _def_records(s, defs, ctx, set(extra.get("exports", ())))
    ctx["types"] = _scope_types(s, defs, starts, vartypes, ctx)
    call_scopes = [_enclosing(defs, starts, call[0]) for call in calls]
    ctx["called_params"] = _called_params(defs, calls, call_scopes)
    return {"errors": bool(tree.root_node.has_error), "package": ctx.pop("package", None),
            "docstring": _module_docstring(s, tree.root_node), "defs": records,
            "bases": bases, "calls": _call_records(defs, calls, call_scopes, emitted),
            "imports": ctx.pop("import_lines", []), "context": ctx}


def _def_records(s: _Source, defs: list[_Def], ctx: dict[str, Any],
                 exported_names: set[str]) -> tuple[list[tuple], list[tuple], dict[int, int]]:
    """One record per definition (scopes such as Rust impl blocks are not nodes)."""
    records, bases, emitted = [], [], {}
    for index, d in enumerate(defs):
        up = d.node.parent
        if s.lang in ("javascript", "typescript", "tsx") and up is not None and \
                up.type == "export_statement" and s.text(up).startswith("export default"):
            ctx["default"] = d.name
        trait = d.node.child_by_field_name("trait") if d.kind == "scope.impl" else None
        if trait is not None:  # impl Trait for Type: Type implements Trait
            bases.append((d.qualname, _clean_type(s.text(trait)), "implements",
                          trait.start_point[0] + 1))
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
    """{scope qualname: {variable: class name}} from parameters and assignments."""
    types: dict[str, dict[str, str]] = {}
    for d in defs:
        for param in d.params:
            if param["type"]:
                types.setdefault(d.qualname, {})[param["name"].lstrip("*&.$")] = param["type"]
        if d.kind == "method" and s.lang == "go":
            _go_receiver_type(s, d, types, ctx)
    for pos, var, type_text in vartypes:
        index = _enclosing(defs, starts, pos)
        if var.startswith("self."):  # instance attributes belong to the class
            while index >= 0 and defs[index].kind not in CLASS_KINDS:
                index = defs[index].parent
        types.setdefault(defs[index].qualname if index >= 0 else "", {})[var] = type_text
    result = {}
    for scope, variables in types.items():
        cleaned = {var: _clean_type(text) for var, text in variables.items()}
        result[scope] = {var: text for var, text in cleaned.items() if text}
    return result


def _called_params(defs: list[_Def], calls: list[tuple],
                   call_scopes: list[int]) -> dict[str, list]:
    """Parameters called by their bare name (callbacks): never a definition of the index."""
    found: dict[str, set[str]] = {}
    params = {i: {p["name"] for p in d.params} for i, d in enumerate(defs) if d.params}
    for (_, _, callee, recv, _), index in zip(calls, call_scopes):
        index = index if recv is None and params else -1
        while index >= 0:
            if callee in params.get(index, ()):
                found.setdefault(defs[index].qualname, set()).add(callee)
                break
            index = defs[index].parent
    return {scope: sorted(names) for scope, names in found.items()}


def _call_records(defs: list[_Def], calls: list[tuple], call_scopes: list[int],
                  emitted: dict[int, int]) -> list[tuple]:
    """(caller record index or -1 for the file, callee, receiver, written, line)."""
    records = []
    for (_, line, callee, recv, written), index in zip(calls, call_scopes):
        while index >= 0 and defs[index].kind.startswith("scope"):
            index = defs[index].parent
        records.append((emitted.get(index, -1), callee, recv, written, line))
    return records


def _module_docstring(s: _Source, root: Any) -> str | None:
    """A Python module's docstring, or the comment block that opens any other file."""
    first = root.named_children[0] if root.named_children else None
    if first is None:
        return None
    if s.lang == "python":
        if first.type == "expression_statement" and first.named_children:
            first = first.named_children[0]
        return _docstring_text(s.text(first)) if first.type == "string" else None
    if first.type in ("comment", "line_comment", "block_comment"):
        return _comment_text([s.text(first)])
    return None


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
                if name and not (s.lang == "python" and _is_overload_stub(s, node)):
                    defs.append(_Def(node, kind, name, caps.get("fn", [node])[0]))
                return
    if "call" in caps:
        call, callee = caps["call"][0], caps["callee"][0]
        recv = caps.get("recv", [None])[0]
        recv_text = _one_line(s.text(recv)).replace("::", ".") if recv is not None else None
        name = s.text(callee)
        if recv_text and "(" in recv_text and recv_text != "super()":  # keep chains short
            recv_text = re.sub(r"\(.*\)", "(...)", recv_text)[:80]
        if recv is None:
            written = name
        elif s.lang == "rust" and s.src[recv.end_byte:callee.start_byte].strip() == b"::":
            written = f"{_one_line(s.text(recv))}::{name}"
            if recv_text.split(".", 1)[0] in ("crate", "super", "self"):
                recv_text = _one_line(s.text(recv))  # a module path: resolved as written
        else:
            written = f"{recv_text}.{name}"
        calls.append((call.start_byte, call.start_point[0] + 1, name, recv_text, written[:200]))
    elif "import" in caps:
        imports.append(caps["import"][0])
    elif "vartype" in caps:
        var = s.text(caps["var"][0])
        if "self" in caps:  # an attribute of the instance: self.x, this.x, a class field
            var = "self." + var
        vartypes.append((caps["vartype"][0].start_byte, var, s.text(caps["type"][0])))
    elif "package" in caps:
        extra["package"] = s.text(caps["package"][0])
    elif "modname" in caps:
        extra.setdefault("mods", []).append(s.text(caps["modname"][0]))
    elif "defaultname" in caps:
        extra["default"] = s.text(caps["defaultname"][0])
        extra.setdefault("exports", []).append(extra["default"])
    elif "exportname" in caps:
        extra.setdefault("exports", []).append(s.text(caps["exportname"][0]))
    elif "exportlhs" in caps:
        _js_module_exports(s, caps["exportlhs"][0], caps["exportrhs"][0], extra)
    elif "allname" in caps and s.text(caps["allname"][0]) == "__all__":
        extra["all"] = re.findall(r"['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]",
                                  s.text(caps["allvalue"][0]))


def _is_overload_stub(s: _Source, node: Any) -> bool:
    """``@overload`` signatures only describe the real definition that follows."""
    parent = node.parent
    return parent is not None and parent.type == "decorated_definition" and any(
        c.type == "decorator" and s.text(c).rstrip().endswith("overload")
        for c in parent.children)


def _def_name(s: _Source, node: Any, kind: str) -> str:
    text = s.text(node)
    if kind == "scope.impl":  # impl<T> Foo<T> / impl Trait for &Foo
        text = re.sub(r"<.*", "", text).lstrip("&*").replace("mut ", "").strip()
        text = text.split("::")[-1]
    if s.lang == "cpp":
        text = text.split("::")[-1]
    return text.strip()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link_parents(s: _Source, defs: list[_Def]) -> None:
    """Parents by nesting; qualnames and method kinds follow from them."""
    stack: list[int] = []
    for index, d in enumerate(defs):
        while stack and defs[stack[-1]].node.end_byte <= d.node.start_byte:
            stack.pop()
        d.parent = stack[-1] if stack else -1
        stack.append(index)
        parent = defs[d.parent] if d.parent >= 0 else None
        if s.lang == "go" and d.kind == "method":
            receiver = d.node.child_by_field_name("receiver")
            owner = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[.*?\]", "", s.text(receiver)))
            d.qualname = f"{owner[-1]}.{d.name}" if owner else d.name
            continue
        if s.lang == "cpp" and d.kind == "function" and "::" in s.text(
                d.node.child_by_field_name("declarator")).split("(")[0]:
            scope = s.text(d.node.child_by_field_name("declarator")).split("(")[0]
            d.qualname = ".".join(p.strip() for p in scope.split("::") if p.strip())
            d.kind = "method"
            continue
        d.qualname = f"{parent.qualname}.{d.name}" if parent else d.name
        if d.kind == "function" and parent is not None and (
                parent.kind in CLASS_KINDS or parent.kind == "scope.impl"):
            d.kind = "method"


def _enclosing(defs: list[_Def], starts: list[int], pos: int) -> int:
    """Index of the innermost definition containing byte ``pos``, -1 for none."""
    index = _bisect_right(starts, pos) - 1
    while index >= 0 and not (defs[index].node.start_byte <= pos < defs[index].node.end_byte):
        index = defs[index].parent
    return index


def _def_record(s: _Source, defs: list[_Def], d: _Def, emitted: dict[int, int],
                exported_names: set[str]) -> tuple:
    node = d.node
    body = _body_of(d.fn)
    sig_end = body.start_byte if body is not None else node.end_byte
    signature = _one_line(s.src[node.start_byte:sig_end].decode("utf-8", "replace"))
    if d.kind in CLASS_KINDS:
        signature = signature.split("{")[0]
    signature = signature.rstrip("{: ").rstrip()[:400]
    params = d.params
    parent = d.parent
    while parent >= 0 and defs[parent].kind.startswith("scope"):
        parent = defs[parent].parent
    head = s.src[node.start_byte:d.fn.start_byte + 200 if body is None else body.start_byte]
    is_async = bool(re.search(rb"\basync\b", head.split(b"(")[0] if s.lang != "rust"
                              else head.split(b"fn")[0]))
    line, end_line = node.start_point[0] + 1, node.end_point[0] + 1
    return (d.kind, d.name, d.qualname, line, end_line, signature,
            json.dumps(params, ensure_ascii=False), _return_type(s, d),
            is_async, _is_exported(s, defs, d, exported_names), _docstring(s, d),
            end_line - line + 1, 1 + d.branches,
            _hash_bytes(s.src[node.start_byte:node.end_byte]), emitted.get(parent, -1))


_BODY_TYPES = frozenset({"function_body", "class_body", "block", "compound_statement",
                         "body_statement", "declaration_list", "enum_class_body",
                         "protocol_body"})


def _body_of(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    return body


def _hash_bytes(data: bytes) -> str:
    import hashlib
    return hashlib.sha1(data).hexdigest()[:16]


_PARAM_SKIP = frozenset({"comment", "keyword_separator", "positional_separator", "self",
                         "line_comment", "block_comment", "attribute_item", "decorator"})
_IDENTIFIERS = frozenset({"identifier", "simple_identifier", "variable_name", "name",
                          "shorthand_property_identifier_pattern"})


def _params(s: _Source, d: _Def) -> list[dict[str, Any]]:
    holder = d.fn.child_by_field_name("parameters")
    if holder is None and s.lang in ("c", "cpp"):
        declarator = d.node.child_by_field_name("declarator")
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        holder = declarator.child_by_field_name("parameters") if declarator else None
    if holder is None:
        kids = [c for c in d.fn.named_children if c.type in (
            "function_value_parameters", "method_parameters", "parameter_list")]
        holder = kids[0] if kids else d.fn
    items = holder.named_children
    if holder is d.fn or any(c.type == "parameter" for c in items) and s.lang in ("kotlin",
                                                                                   "swift"):
        items = [c for c in items if c.type == "parameter"]
    if s.lang == "python":
        return [_py_param(s, p) for p in items if p.type not in _PARAM_SKIP]
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
            result.append({"name": _one_line(name)[:80],
                           "type": _one_line(s.text(type_node)).lstrip(":").strip() or None,
                           "default": _one_line(s.text(default))[:80] if default else None})
    return result


def _py_param(s: _Source, p: Any) -> dict[str, Any]:
    kind = p.type
    if kind == "identifier" or kind.endswith("splat_pattern"):
        return {"name": s.text(p), "type": None, "default": None}
    name = p.child_by_field_name("name") if kind != "typed_parameter" else p.named_children[0]
    type_node = p.child_by_field_name("type") if kind.startswith("typed") else None
    default = p.child_by_field_name("value") if kind.endswith("default_parameter") else None
    return {"name": s.text(name if name is not None else p),
            "type": _one_line(s.text(type_node)) or None if type_node is not None else None,
            "default": _one_line(s.text(default))[:80] if default is not None else None}


def _return_type(s: _Source, d: _Def) -> str | None:
    if d.kind in CLASS_KINDS:
        return None
    field = {"go": "result", "java": "type", "c": "type", "cpp": "type", "csharp": "returns",
             "php": "return_type"}.get(s.lang, "return_type")
    node = d.fn.child_by_field_name(field)
    if node is None and s.lang == "csharp":
        node = d.fn.child_by_field_name("type")
    text = _one_line(s.text(node)).lstrip(":").strip()
    return text.removeprefix("->").strip() or None


def _is_exported(s: _Source, defs: list[_Def], d: _Def, names: set[str]) -> bool:
    parent = defs[d.parent] if d.parent >= 0 else None
    lang, name = s.lang, d.name
    if lang == "python":
        if parent is not None and parent.kind not in CLASS_KINDS:
            return False
        if parent is not None:
            dunder = name.startswith("__") and name.endswith("__")
            return _is_exported(s, defs, parent, names) and (dunder or not name.startswith("_"))
        return name in names if names else not name.startswith("_")
    if lang in ("javascript", "typescript", "tsx"):
        if parent is not None:
            return parent.kind in CLASS_KINDS and not name.startswith("#") and \
                "private" not in s.text(d.node).split("(")[0].split()
        up = d.node.parent
        while up is not None and up.type in ("variable_declarator", "lexical_declaration",
                                             "variable_declaration"):
            up = up.parent
        return (up is not None and up.type == "export_statement") or name in names
    if lang == "go":
        return name[:1].isupper()
    if lang == "rust":
        if parent is not None and parent.kind == "trait":
            return _is_exported(s, defs, parent, names)
        if parent is not None and parent.kind == "scope.impl" and \
                parent.node.child_by_field_name("trait") is not None:
            return True
        return any(c.type == "visibility_modifier" for c in d.node.children)
    if lang in ("java", "csharp", "swift"):
        head = s.text(d.node).split("(")[0].split("{")[0]
        if lang == "java" and parent is not None and parent.kind == "interface":
            return True
        return bool(re.search(r"\b(public|open)\b", head))
    if lang in ("c", "cpp"):
        return "static" not in s.text(d.node).split("(")[0].split()
    head = s.text(d.node).split("(")[0]
    return not re.search(r"\b(private|protected|internal)\b", head)


def _docstring(s: _Source, d: _Def) -> str | None:
    if s.lang == "python":
        body = d.fn.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children:
            first = first.named_children[0]
        if first is not None and first.type == "string":
            return _docstring_text(s.text(first))
        return None
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
    if d.kind not in CLASS_KINDS:
        return []
    node, lang, found = d.node, s.lang, []

    def add(base: Any, kind: str) -> None:
        text = re.sub(r"<.*|\[.*|\(.*", "", _one_line(s.text(base))).strip().lstrip("*")
        if text and text not in ("object",):
            found.append((d.qualname, text, kind, base.start_point[0] + 1))

    if lang == "python":
        supers = node.child_by_field_name("superclasses")
        for arg in supers.named_children if supers is not None else ():
            if arg.type in ("identifier", "attribute"):
                add(arg, "extends")
    elif lang in ("javascript", "typescript", "tsx"):
        for heritage in (c for c in node.named_children if c.type == "class_heritage"):
            for clause in heritage.named_children:
                if clause.type == "extends_clause":
                    for value in clause.children_by_field_name("value"):
                        add(value, "extends")
                elif clause.type == "implements_clause":
                    for value in clause.named_children:
                        add(value, "implements")
                else:
                    add(clause, "extends")
        for clause in (c for c in node.named_children if c.type == "extends_type_clause"):
            for value in clause.named_children:
                add(value, "extends")
    elif lang == "java":
        superclass = node.child_by_field_name("superclass")
        if superclass is not None and superclass.named_children:
            add(superclass.named_children[0], "extends")
        for field, kind in (("interfaces", "implements"), (None, "extends")):
            holder = node.child_by_field_name(field) if field else next(
                (c for c in node.named_children if c.type == "extends_interfaces"), None)
            for type_list in holder.named_children if holder is not None else ():
                for value in type_list.named_children:
                    add(value, kind)
    elif lang == "go":
        body = node.child_by_field_name("type")
        for field in _descendants(body, ("field_declaration", "type_elem")):
            if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                add(field.child_by_field_name("type"), "extends")
            elif field.type == "type_elem":
                add(field, "extends")
    elif lang == "rust" and d.kind == "trait":
        bounds = node.child_by_field_name("bounds")
        for value in bounds.named_children if bounds is not None else ():
            add(value, "extends")
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


def _go_receiver_type(s: _Source, d: _Def, types: dict[str, dict[str, str]],
                      ctx: dict[str, Any]) -> None:
    """A Go receiver is the method's self: remember its name and type."""
    receiver = d.node.child_by_field_name("receiver")
    for param in receiver.named_children if receiver is not None else ():
        name, type_node = param.child_by_field_name("name"), param.child_by_field_name("type")
        if name is not None and type_node is not None:
            types.setdefault(d.qualname, {})[s.text(name)] = s.text(type_node)
            ctx.setdefault("receivers", {})[d.qualname] = s.text(name)


def _clean_type(text: str) -> str:
    """The class name inside a written type: ``*pkg.Foo`` -> ``pkg.Foo``, ``&mut Bar<T>`` -> ``Bar``."""
    text = re.sub(r"\b(mut|dyn|impl|const|final|readonly)\b", "", text or "").strip()
    if text.startswith("("):  # Go results (*User, error): the first one
        text = text[1:].split(",")[0]
    text = re.sub(r"<.*|\[.*|\(.*", "", text).replace("::", ".")
    match = re.search(r"[A-Za-z_][\w.]*", text)
    return match.group(0) if match else ""


def _file_context(s: _Source, imports: list[Any], extra: dict) -> dict[str, Any]:
    """Import bindings (local name -> [module, imported name]) and what the file exports."""
    ctx: dict[str, Any] = {"imports": {}, "stars": [], "import_lines": []}
    handler = {"python": _py_import, "javascript": _js_import, "typescript": _js_import,
               "tsx": _js_import, "go": _go_import, "rust": _rust_import,
               "java": _java_import}.get(s.lang)
    for node in imports if handler else ():
        handler(s, node, ctx)
    for key in ("package", "mods", "default"):
        if extra.get(key):
            ctx[key] = extra[key]
    if extra.get("all"):
        extra["exports"] = extra["all"]
    return ctx


def _bind(ctx: dict[str, Any], local: str, module: str, name: str | None, line: int) -> None:
    if local:
        ctx["imports"][local] = [module, name]
        ctx["import_lines"].append((module, line))


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


def _js_string(s: _Source, node: Any) -> str:
    return s.text(node).strip("'\"`") if node is not None else ""


def _js_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    line = node.start_point[0] + 1
    if node.type == "variable_declarator":  # const x = require('./m')
        value = node.child_by_field_name("value")
        args = value.child_by_field_name("arguments") if value is not None else None
        source = _js_string(s, args.named_children[0]) if args and args.named_children else ""
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
    source = _js_string(s, node.child_by_field_name("source"))
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
    if node.type == "export_statement" and s.text(node).replace(" ", "").startswith("export*"):
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


def _go_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    path = _js_string(s, node.child_by_field_name("path"))
    alias = s.text(node.child_by_field_name("name"))
    if alias == ".":
        ctx["stars"].append(path)
        ctx["import_lines"].append((path, node.start_point[0] + 1))
    elif alias != "_":
        _bind(ctx, alias or path.rsplit("/", 1)[-1], path, None, node.start_point[0] + 1)


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


def _java_import(s: _Source, node: Any, ctx: dict[str, Any]) -> None:
    name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")),
                None)
    full = s.text(name)
    if any(c.type == "asterisk" for c in node.children):
        ctx["stars"].append(full)
        ctx["import_lines"].append((full, node.start_point[0] + 1))
    elif full:
        _bind(ctx, full.rsplit(".", 1)[-1], full, None, node.start_point[0] + 1)


def _graph_parse_job(job: tuple[str, str, str, str | None]) -> tuple:
    """Read, hash and (when the content changed) parse one file; runs in a worker."""
    rel, absolute, lang, old_sha = job
    try:
        with open(absolute, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_size > GRAPH_MAX_FILE_BYTES:
                return rel, "skipped", info.st_size, info.st_mtime_ns, None, lang, None
            data = handle.read(GRAPH_MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return rel, "gone", 0, 0, None, lang, None
    except OSError as exc:
        return rel, "skipped", 0, 0, exc.strerror, lang, None
    if len(data) > GRAPH_MAX_FILE_BYTES or b"\0" in data[:8192]:
        return rel, "skipped", info.st_size, info.st_mtime_ns, None, lang, None
    sha = _hash_bytes(data)
    if sha == old_sha:
        return rel, "same", info.st_size, info.st_mtime_ns, sha, lang, None
    try:
        facts = graph_extract(lang, data)
    except Exception as exc:  # a grammar bug must not abort the whole run
        return rel, "failed", info.st_size, info.st_mtime_ns, f"{type(exc).__name__}: {exc}", \
            lang, None
    facts["lines"] = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    facts["bound"] = list(facts["context"]["imports"])
    facts["context"] = json.dumps(facts["context"], ensure_ascii=False)  # in the worker
    return rel, "parsed", info.st_size, info.st_mtime_ns, sha, lang, facts


def graph_list_files(env: Env, paths: Sequence[str] = (), excludes: Sequence[str] = (),
                     strict: bool = True) -> tuple[list[str], list[str]]:
    """(root-relative candidate files, normalized scope prefixes; [] means everything)."""
    scopes = []
    for path in paths:
        rel = normalize_file(path, env)
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
    return any(fnmatch.fnmatchcase(p, g) or fnmatch.fnmatchcase(parts[-1], g)
               or fnmatch.fnmatchcase(part, g) for g in globs for p in prefixes
               for part in parts[:-1])


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
    import fnmatch
    found: list[str] = []
    ignores: dict[str, list[str]] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        patterns = list(ignores.get(posix_parent(rel_dir), [])) if rel_dir else []
        patterns += _read_gitignore(Path(folder) / ".gitignore", rel_dir)
        ignores[rel_dir] = patterns

        def ignored(name: str) -> bool:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p)
                       for p in patterns)
        dirs[:] = sorted(d for d in dirs if d not in GRAPH_SKIP_DIRS and not ignored(d))
        found.extend(f"{rel_dir}/{f}" if rel_dir else f for f in sorted(files) if not ignored(f))
    return found


def posix_parent(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _read_gitignore(path: Path, rel_dir: str) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    patterns = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        line = line.rstrip("/")
        if line.startswith("/"):
            patterns.append(f"{rel_dir}/{line[1:]}" if rel_dir else line[1:])
        else:
            patterns.append(line)
    return patterns


# --- Graph: writing an index run ---------------------------------------------

SQL_FILES_ALL = "SELECT id, path, size, mtime_ns, sha1 FROM files WHERE project = ?"
SQL_FILE_INSERT = ("INSERT INTO files (project, path, language, size, mtime_ns, sha1, parse_errors, "
                   "package, context, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
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
SQL_NODE_INSERT = ("INSERT INTO nodes (id, project, file_id, uid, kind, name, qualname, path, line, "
                   "end_line, signature, params, return_type, is_async, exported, docstring, loc, "
                   "complexity, body_hash, parent_id) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_EDGE_INSERT = ("INSERT INTO edges (project, kind, src_id, dst_id, dst_name, callee, recv, line, "
                   "confidence, file_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
SQL_EDGE_UPDATE = "UPDATE edges SET dst_id = ?, confidence = ? WHERE id = ?"
SQL_MAX_NODE = "SELECT coalesce(max(id), 0) FROM nodes"


@dataclasses.dataclass
class _IndexRun:
    """What one ``index`` run has seen and what is left to resolve."""

    project: str
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    errors: int = 0
    affected: set[str] = dataclasses.field(default_factory=set)
    calls: list[tuple] = dataclasses.field(default_factory=list)
    bases: list[tuple] = dataclasses.field(default_factory=list)
    imports: list[tuple] = dataclasses.field(default_factory=list)
    changed: bool = False


def graph_index(env: Env, db: Database, paths: Sequence[str] = (), full: bool = False,
                excludes: Sequence[str] = (), strict: bool = True) -> dict[str, Any]:
    """Bring the graph up to date with the files on disk; returns SPEC's summary.

    ``paths`` limits the run (and the removal of vanished files) to those files
    and folders; with ``strict`` a path that does not exist is an error.
    """
    started = time.monotonic()
    files, scopes = graph_list_files(env, paths, excludes, strict)
    # The writes below keep the references whole themselves (_clear_file); SQLite's
    # per-row foreign key checks would double the cost of a full index.
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("PRAGMA cache_size = -65536")  # 64 MiB: index pages stay in memory
    try:
        return _index_files(env, db, files, scopes, full, started)
    finally:
        db.execute("PRAGMA foreign_keys = ON")


def _index_files(env: Env, db: Database, files: list[str], scopes: list[str], full: bool,
                 started: float) -> dict[str, Any]:
    known = {row["path"]: row for row in db.query(SQL_FILES_ALL, (env.project,))}
    run = _IndexRun(env.project)
    jobs, seen = [], set()
    for rel in files:
        job = _plan_file(env, rel, known.get(rel), full, run)
        if job == "seen":
            seen.add(rel)
        elif job is not None:
            jobs.append(job)
            seen.add(rel)
    gone = [p for p in known if _in_scope(p, scopes) and p not in seen]
    with db.atomic():
        for path in gone:
            _drop_file(db, known[path]["id"], run)
            run.removed += 1
    _parse_and_store(env, db, jobs, known, run)
    if run.changed:
        with db.atomic():
            _resolve_run(env, db, run)
    return _index_summary(db, env.project, run, time.monotonic() - started)


def _plan_file(env: Env, rel: str, old: sqlite3.Row | None, full: bool,
               run: _IndexRun) -> tuple | str | None:
    """A parse job, "seen" for an unchanged file, None when skipped or absent."""
    lang = GRAPH_EXTENSIONS.get(os.path.splitext(rel)[1].lower())
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8 cannot be stored or shown
        run.skipped += 1
        return None
    absolute = str(env.root / rel)
    try:
        info = os.stat(absolute)
    except FileNotFoundError:
        return None
    except OSError:  # symlink loop, permission denied, name too long
        run.skipped += 1
        return None
    import stat
    if not stat.S_ISREG(info.st_mode):  # a directory link or a device: not source
        return None
    if lang is None or info.st_size > GRAPH_MAX_FILE_BYTES:
        run.skipped += 1
        return None
    if old is not None and not full and old["size"] == info.st_size and \
            old["mtime_ns"] == info.st_mtime_ns:
        run.unchanged += 1
        return "seen"
    return rel, absolute, lang, None if full or old is None else old["sha1"]


def _parse_and_store(env: Env, db: Database, jobs: list[tuple], known: dict[str, sqlite3.Row],
                     run: _IndexRun) -> None:
    """Parse on both cores; write each batch of results in one transaction."""
    batch: list[tuple] = []
    total = len(jobs)
    for done, result in enumerate(_run_jobs(jobs), 1):
        batch.append(result)
        if len(batch) >= 250:
            _store_batch(db, batch, known, run)
            batch = []
        if done % 50 == 0:
            progress(f"indexing {done}/{total} files")
    if batch:
        _store_batch(db, batch, known, run)
    done_progress()


def _run_jobs(jobs: list[tuple]) -> Iterator[tuple]:
    if len(jobs) < 40 or (os.cpu_count() or 1) < 2:
        yield from map(_graph_parse_job, jobs)
        return
    import multiprocessing
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    # Biggest files first so that no worker is left with a long file at the end.
    jobs = sorted(jobs, key=lambda j: -_size_or_zero(j[1]))
    with context.Pool(processes=2) as pool:
        yield from pool.imap_unordered(_graph_parse_job, jobs, chunksize=4)


def _size_or_zero(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _store_batch(db: Database, batch: list[tuple], known: dict[str, sqlite3.Row],
                 run: _IndexRun) -> None:
    with db.atomic():
        next_id = db.one(SQL_MAX_NODE)[0] + 1
        for rel, status, size, mtime_ns, detail, lang, facts in batch:
            old = known.get(rel)
            if status == "same":
                db.execute(SQL_FILE_TOUCH, (size, mtime_ns, old["id"]))
                run.unchanged += 1
                continue
            if status != "parsed":
                if old is not None:
                    _drop_file(db, old["id"], run)
                if status == "gone":
                    run.removed += old is not None
                else:
                    run.skipped += 1
                    if status == "failed":
                        warn(f"could not parse {rel}: {detail}; skipped")
                continue
            next_id = _store_file(db, run, rel, lang, size, mtime_ns, detail, facts, old, next_id)


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
    run.affected.update(r[0] for r in db.query(SQL_FILE_NAMES, (file_id,)))
    row = db.one("SELECT context FROM files WHERE id = ?", (file_id,))
    run.affected.update(_reexported_names(row[0] if row else "{}"))
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
             sha, None)]
    ids, uids, edges = [], set(), []
    for index, d in enumerate(facts["defs"]):
        node_id = next_id + 1 + index
        ids.append(node_id)
        parent = ids[d[14]] if d[14] >= 0 else file_node
        uid = f"{rel}:{d[2]}"
        count = 1
        while uid in uids:
            count += 1
            uid = f"{rel}:{d[2]}#{count}"
        uids.add(uid)
        rows.append((node_id, project, file_id, uid, d[0], d[1], d[2], rel, d[3], d[4], d[5],
                     d[6], d[7], int(d[8]), int(d[9]), d[10], d[11], d[12], d[13], parent))
        edges.append((project, "contains", parent, node_id, d[1], None, None, d[3], 1.0, file_id))
        if d[9] and parent == file_node and lang in GRAPH_FULL_LANGUAGES:
            edges.append((project, "exports", file_node, node_id, d[1], None, None, d[3], 1.0,
                          file_id))
        run.affected.add(d[1])
    run.affected.update(facts["bound"])
    db.executemany(SQL_NODE_INSERT, rows)
    db.executemany(SQL_EDGE_INSERT, edges)
    for scope, callee, recv, written, line in facts["calls"]:
        src = ids[scope] if scope >= 0 else file_node
        run.calls.append((None, file_id, rel, src, callee, recv, written, line))
    for owner, base, kind, line in facts["bases"]:
        run.bases.append((None, file_id, rel, owner, base, kind, line))
    for spec, line in facts["imports"]:
        run.imports.append((None, file_id, rel, file_node, spec, line))
    return next_id + 1 + len(facts["defs"])


def _index_summary(db: Database, project: str, run: _IndexRun, seconds: float) -> dict[str, Any]:
    languages = {r[0]: r[1] for r in db.query(
        "SELECT language, count(*) FROM files WHERE project = ? GROUP BY language "
        "ORDER BY language", (project,))}
    return {"files": {"indexed": run.indexed, "unchanged": run.unchanged,
                      "removed": run.removed, "skipped": run.skipped, "errors": run.errors},
            "nodes": db.one("SELECT count(*) FROM nodes WHERE project = ?", (project,))[0],
            "edges": db.one("SELECT count(*) FROM edges WHERE project = ?", (project,))[0],
            "seconds": round(seconds, 3), "languages": languages}


# --- Graph: call resolution ---------------------------------------------------
# A call site is resolved the way a reader would: local scope and nested
# definitions, self/this/cls and the enclosing class with its bases, names
# bound by imports, module-level definitions, then (at lower confidence) a
# name defined exactly once in the index. A target is ("node", id),
# ("module", [paths]), ("external", None) or None when nothing is known.

SELF_NAMES = {"python": ("self", "cls"), "javascript": ("this",), "typescript": ("this",),
              "tsx": ("this",), "java": ("this",), "rust": ("self", "Self")}
SUPER_NAMES = frozenset({"super()", "super"})
# Languages where a bare name inside a class body is looked up on the class.
CLASS_SCOPE_LANGUAGES = frozenset({"java", "csharp", "kotlin", "swift", "cpp", "php"})
LANGUAGE_FAMILY = {"typescript": "javascript", "tsx": "javascript", "c": "cpp"}
# Method names of the standard containers, strings and files: `x.update()` on an
# unknown x is far more often a dict than the one `update` method of the index.
COMMON_METHOD_NAMES = frozenset(
    "update get pop append extend insert remove clear copy keys values items setdefault "
    "read write flush close readline readlines seek tell fileno isatty getvalue open "
    "join split rsplit strip lstrip rstrip format replace startswith endswith encode decode "
    "lower upper find index count add discard sort reverse send push shift unshift map "
    "filter reduce forEach slice splice then catch toString equals hashCode length size "
    "next iter match search sub group start end set has delete apply call bind".split())
PY_BUILTINS = frozenset(
    "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod "
    "compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset "
    "getattr globals hasattr hash help hex id input int isinstance issubclass iter len list "
    "locals map max memoryview min next object oct open ord pow print property range repr "
    "reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip "
    "__import__".split())
SQL_RESOLVER_NODES = ("SELECT id, kind, name, qualname, path, return_type FROM nodes "
                      "WHERE project = ?")
SQL_RESOLVER_FILES = "SELECT path, language, package FROM files WHERE project = ?"
SQL_FILE_CONTEXT = "SELECT context FROM files WHERE project = ? AND path = ?"
SQL_BASES = ("SELECT src_id, dst_id FROM edges WHERE project = ? AND kind IN "
             "('extends', 'implements') AND dst_id IS NOT NULL ORDER BY id")


class _Resolver:
    """In-memory lookup tables over the whole project's nodes."""

    def __init__(self, db: Database, env: Env):
        self.db, self.project, self.root = db, env.project, env.root
        self.nodes: dict[int, tuple[str, str, str, str]] = {}
        self.by_pq: dict[tuple[str, str], int] = {}
        self.by_name: dict[str, list[int]] = {}
        self.by_dir: dict[tuple[str, str], int] = {}
        self.returns: dict[int, str] = {}
        for row in db.query(SQL_RESOLVER_NODES, (env.project,)):
            node_id, kind, name, qualname, path, returns = tuple(row)
            if returns:
                self.returns[node_id] = returns
            self.nodes[node_id] = (kind, name, qualname, path)
            self.by_pq.setdefault((path, qualname), node_id)
            if kind != "file":
                self.by_name.setdefault(name, []).append(node_id)
                self.by_dir.setdefault((posix_parent(path), qualname), node_id)
        self.lang: dict[str, str] = {}
        self.package: dict[str, str] = {}
        for row in db.query(SQL_RESOLVER_FILES, (env.project,)):
            self.lang[row["path"]] = row["language"]
            if row["package"]:
                self.package[row["path"]] = row["package"]
        self._contexts: dict[str, dict[str, Any]] = {}
        self._py_modules: dict[str, list[str]] | None = None
        self._java: dict[str, int] | None = None
        self._go_module: str | None = None
        self.bases: dict[int, list[int]] = {}
        self.subclasses: dict[int, list[int]] = {}
        self._guesses: dict[tuple, tuple[int | None, float]] = {}
        self._chains: dict[str, list[str]] = {}
        self._calls: dict[tuple, tuple[int | None, float]] = {}
        self._modules: dict[tuple[str, str], str | None] = {}

    def load_bases(self) -> None:
        self.bases, self.subclasses = {}, {}
        for src, dst in self.db.query(SQL_BASES, (self.project,)):
            self.bases.setdefault(src, []).append(dst)
            self.subclasses.setdefault(dst, []).append(src)

    def ctx(self, path: str) -> dict[str, Any]:
        if path not in self._contexts:
            row = self.db.one(SQL_FILE_CONTEXT, (self.project, path))
            self._contexts[path] = json.loads(row[0]) if row else {}
        return self._contexts[path]

    # -- modules ------------------------------------------------------------

    def py_module(self, importer: str, spec: str) -> str | None:
        key = (posix_parent(importer) if spec.startswith(".") else "", spec)
        if key not in self._modules:
            self._modules[key] = self._py_module(importer, spec)
        return self._modules[key]

    def _py_module(self, importer: str, spec: str) -> str | None:
        if spec.startswith("."):
            level = len(spec) - len(spec.lstrip("."))
            base = posix_parent(importer)
            for _ in range(level - 1):
                base = posix_parent(base)
            rest = spec[level:].replace(".", "/")
            return self._py_file("/".join(p for p in (base, rest) if p))
        if self._py_modules is None:
            self._py_modules = {}
            for path, lang in self.lang.items():
                if lang == "python":
                    stem = re.sub(r"(/__init__)?\.pyi?$", "", path)
                    parts = stem.split("/")
                    for i in range(len(parts)):
                        self._py_modules.setdefault(".".join(parts[i:]), []).append(path)
        found = self._py_modules.get(spec)
        return min(found, key=lambda p: (p.count("/"), len(p))) if found else None

    def _py_file(self, stem: str) -> str | None:
        for candidate in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi",
                          f"{stem}/__init__.pyi"):
            if candidate in self.lang:
                return candidate
        return None

    def js_module(self, importer: str, spec: str) -> str | None:
        if not spec.startswith("."):
            return None
        base = os.path.normpath(posixpath_join(posix_parent(importer), spec)).replace("\\", "/")
        for suffix in ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts",
                       "/index.tsx", "/index.js", "/index.jsx"):
            if base + suffix in self.lang:
                return base + suffix
        return None

    def go_package(self, spec: str) -> list[str]:
        if self._go_module is None:
            self._go_module = ""
            with contextlib.suppress(OSError):
                text = (self.root / "go.mod").read_text(encoding="utf-8", errors="replace")
                match = re.search(r"^module\s+(\S+)", text, re.M)
                self._go_module = match.group(1) if match else ""
        module = self._go_module
        if not module or not (spec == module or spec.startswith(module + "/")):
            return []
        folder = spec[len(module) + 1:]
        return [p for p, lang in self.lang.items() if lang == "go" and posix_parent(p) == folder]

    def java_class(self, fqcn: str) -> int | None:
        if self._java is None:
            self._java = {}
            for node_id, (kind, _, qualname, path) in self.nodes.items():
                if kind in CLASS_KINDS and self.lang.get(path) == "java":
                    package = self.package.get(path, "")
                    self._java.setdefault(f"{package}.{qualname}".lstrip("."), node_id)
        return self._java.get(fqcn)

    def rust_path(self, importer: str, spec: str) -> tuple[str, Any] | None:
        parts = [p for p in spec.split("::") if p]
        if not parts:
            return None
        if parts[0] == "crate":
            current = self._rust_crate_root(importer)
        elif parts[0] in ("self", "super"):
            current = importer
            while parts and parts[0] in ("self", "super"):
                if parts.pop(0) == "super":
                    current = self._rust_parent_module(current)
            parts.insert(0, "self")
        elif parts[0] in self.ctx(importer).get("mods", ()):
            current, parts = importer, ["self", *parts]
        else:
            return ("external", None)
        if current is None:
            return None
        for index, part in enumerate(parts[1:], 1):
            child = self._rust_submodule(current, part)
            if child is None:
                node = self.by_pq.get((current, ".".join(parts[index:])))
                return ("node", node) if node else None
            current = child
        return ("module", [current])

    def _rust_crate_root(self, importer: str) -> str | None:
        folder = posix_parent(importer)
        while True:
            for name in ("lib.rs", "main.rs"):
                candidate = f"{folder}/{name}" if folder else name
                if candidate in self.lang:
                    return candidate
            if not folder:
                return None
            folder = posix_parent(folder)

    def _rust_module_dir(self, path: str) -> str:
        if path.rsplit("/", 1)[-1] in ("mod.rs", "lib.rs", "main.rs"):
            return posix_parent(path)
        return path[:-3]

    def _rust_submodule(self, path: str, name: str) -> str | None:
        folder = self._rust_module_dir(path)
        for candidate in (f"{folder}/{name}.rs", f"{folder}/{name}/mod.rs"):
            candidate = candidate.lstrip("/")
            if candidate in self.lang:
                return candidate
        return None

    def _rust_parent_module(self, path: str) -> str | None:
        folder = posix_parent(path)
        if path.rsplit("/", 1)[-1] in ("mod.rs", "lib.rs", "main.rs"):
            folder = posix_parent(folder)
        for candidate in (f"{folder}/mod.rs", f"{folder}/lib.rs", f"{folder}/main.rs",
                          f"{folder}.rs"):
            if candidate.lstrip("/") in self.lang:
                return candidate.lstrip("/")
        return None

    # -- names --------------------------------------------------------------

    def resolve_binding(self, path: str, binding: list[Any], depth: int = 0) -> tuple | None:
        """What an import binding of ``path`` points to."""
        module, name = binding
        lang = self.lang.get(path)
        if lang == "python":
            if name is not None:  # `from pkg import mod` works without pkg/__init__.py
                sub_spec = module + name if module.endswith(".") else f"{module}.{name}"
                sub = self.py_module(path, sub_spec)
                if sub is not None:
                    return ("module", [sub])
            mpath = self.py_module(path, module)
            if mpath is None:
                return ("external", None)
            if name is None:
                return ("module", [mpath])
            return self.lookup_in_modules([mpath], name, depth + 1)
        if lang in ("javascript", "typescript", "tsx"):
            mpath = self.js_module(path, module)
            if mpath is None:
                return ("external", None)
            if name is None:
                return ("module", [mpath])
            if name == "default":
                name = self.ctx(mpath).get("default")
                if not name:
                    return None
            return self.lookup_in_modules([mpath], name, depth + 1)
        if lang == "go":
            files = self.go_package(module)
            return ("module", files) if files else ("external", None)
        if lang == "rust":
            return self.rust_path(path, module)
        if lang == "java":
            node = self.java_class(module)
            if node is not None:
                return ("node", node)
            owner, _, member = module.rpartition(".")
            cls = self.java_class(owner)
            if cls is not None:
                found = self.method_lookup(cls, member)
                return ("node", found) if found else None
            return ("external", None)
        return None

    def lookup_in_modules(self, paths: list[str], name: str, depth: int = 0) -> tuple | None:
        """A module-level name of these files, following re-exports."""
        for path in paths:
            node = self.by_pq.get((path, name))
            if node is not None:
                return ("node", node)
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
                    if found and found[0] == "node":
                        return found
        return None

    def scope_chain(self, scope: str) -> list[str]:
        chain = self._chains.get(scope)
        if chain is None:
            parts = scope.split(".") if scope else []
            chain = self._chains[scope] = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        return chain

    def resolve_name(self, path: str, scope: str, name: str) -> tuple | None:
        lang = self.lang.get(path, "")
        for qual in self.scope_chain(scope):
            owner = self.by_pq.get((path, qual))
            if owner is None:
                continue
            if self.nodes[owner][0] in CLASS_KINDS:
                if lang in CLASS_SCOPE_LANGUAGES:
                    found = self.method_lookup(owner, name)
                    if found is not None:
                        return ("node", found)
                continue
            node = self.by_pq.get((path, f"{qual}.{name}"))
            if node is not None:
                return ("node", node)
        ctx = self.ctx(path)
        binding = ctx.get("imports", {}).get(name)
        if binding is not None:
            return self.resolve_binding(path, binding) or ("external", None)
        node = self.by_pq.get((path, name))
        if node is not None and self.nodes[node][0] != "file":
            return ("node", node)
        if lang == "go":
            node = self.by_dir.get((posix_parent(path), name))
            if node is not None:
                return ("node", node)
        if lang == "java":
            node = self.java_class(f"{self.package.get(path, '')}.{name}".lstrip("."))
            if node is not None:
                return ("node", node)
        if lang == "rust" and name in ctx.get("mods", ()):
            return self.rust_path(path, f"self::{name}")
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
        target = (self.resolve_binding(path, binding) or ("external", None)) if binding else None
        if target is not None:
            return target
        target = self.resolve_name(path, scope, parts[0])
        for part in parts[1:]:
            if target is None or target[0] == "external":
                return target
            if target[0] == "module":
                sub = None
                if self.lang.get(target[1][0]) == "python":
                    sub = self._py_file(re.sub(r"(/__init__)?\.pyi?$", "", target[1][0]) + "/" + part)
                target = ("module", [sub]) if sub else self.lookup_in_modules(target[1], part)
            else:
                kind, _, qualname, npath = self.nodes[target[1]]
                node = self.by_pq.get((npath, f"{qualname}.{part}"))
                target = ("node", node) if node is not None else None
        return target

    def method_lookup(self, cls: int, name: str, seen: set[int] | None = None) -> int | None:
        """``name`` defined in class ``cls`` or inherited from a base in the index."""
        seen = seen or set()
        seen.add(cls)
        kind, _, qualname, path = self.nodes[cls]
        wanted = f"{qualname}.{name}"
        found = self.by_pq.get((path, wanted))
        lang = self.lang.get(path)
        if found is None and lang == "go":
            found = self.by_dir.get((posix_parent(path), wanted))
        if found is None and lang == "rust":
            found = next((n for n in self.by_name.get(name, ()) if self.nodes[n][2] == wanted
                          and self.lang.get(self.nodes[n][3]) == "rust"), None)
        if found is not None:
            return found
        for base in self.bases.get(cls, ()):
            if base not in seen and self.nodes.get(base, ("",))[0] in CLASS_KINDS:
                found = self.method_lookup(base, name, seen)
                if found is not None:
                    return found
        return None

    def enclosing_class(self, path: str, scope: str) -> int | None:
        for qual in self.scope_chain(scope):
            node = self.by_pq.get((path, qual))
            if node is not None and self.nodes[node][0] in CLASS_KINDS:
                return node
        if "." in scope and self.lang.get(path) in ("go", "rust"):
            owner = scope.rsplit(".", 1)[0]
            target = self.resolve_name(path, "", owner)
            if target and target[0] == "node" and self.nodes[target[1]][0] in CLASS_KINDS:
                return target[1]
        return None

    # -- calls --------------------------------------------------------------

    def resolve_call(self, path: str, scope: str, callee: str,
                     recv: str | None) -> tuple[int | None, float]:
        """(target node id or None, confidence) of one call site."""
        key = (path, scope, callee, recv)
        found = self._calls.get(key)
        if found is None:
            found = self._calls[key] = self._resolve_call(path, scope, callee, recv)
        return found

    def _resolve_call(self, path: str, scope: str, callee: str,
                      recv: str | None) -> tuple[int | None, float]:
        lang = self.lang.get(path, "")
        if recv is None:
            return self._resolve_bare(path, scope, callee, lang)
        if "::" in recv:  # Rust crate::a::f(), super::f(), self::m::f()
            target = self.rust_path(path, f"{recv}::{callee}")
            if target and target[0] == "node":
                return target[1], CONF_EXACT
            return None, 0.0 if target is None else 1.0
        is_receiver = lang == "go" and self.ctx(path).get("receivers", {}).get(scope) == recv
        if recv in SELF_NAMES.get(lang, ()) or recv in SUPER_NAMES or is_receiver:
            return self._resolve_self(path, scope, callee, recv, lang)
        if recv[:1] in "\"'[{(0123456789" or re.match(r"[rbfuRBFU]{1,2}['\"]", recv):
            return None, 1.0  # a literal: a builtin type, never a node of the index
        typed = self._resolve_typed(path, scope, callee, recv)
        if typed is not None:
            return typed
        if recv.isidentifier() or re.fullmatch(r"[\w.]+", recv):
            target = self.resolve_dotted(path, scope, recv)
            if target is not None:
                return self._call_on(target, callee)
            if lang == "java" and recv[:1].isupper():
                return None, 1.0  # a class outside the index (System.out, Math)
        return self.guess(callee, lang, attr=True)

    def _resolve_bare(self, path: str, scope: str, callee: str,
                      lang: str) -> tuple[int | None, float]:
        called = self.ctx(path).get("called_params", {})
        if any(callee in called.get(qual, ()) for qual in self.scope_chain(scope)):
            return None, 0.0  # a callable passed in as a parameter
        target = self.resolve_name(path, scope, callee)
        if target is not None:
            return (target[1], CONF_EXACT) if target[0] == "node" else (None, 1.0)
        if lang == "python" and callee in PY_BUILTINS:
            return None, 1.0
        return self.guess(callee, lang)

    def _resolve_self(self, path: str, scope: str, callee: str, recv: str,
                      lang: str) -> tuple[int | None, float]:
        cls = self.enclosing_class(path, scope)
        if cls is None:  # `this` in a plain function
            return self.guess(callee, lang, attr=True)
        owners = self.bases.get(cls, []) if recv in SUPER_NAMES else [cls]
        for owner in owners:
            found = self.method_lookup(owner, callee)
            if found is not None:
                return found, CONF_EXACT
        if recv in SUPER_NAMES:
            return None, 0.0
        # A mixin or abstract base calling what its subclasses define: linked only
        # when exactly one subclass in the index has it.
        found = {self.method_lookup(sub, callee) for sub in self._all_subclasses(cls)} - {None}
        return (found.pop(), CONF_UNIQUE) if len(found) == 1 else (None, 0.0)

    def _all_subclasses(self, cls: int) -> list[int]:
        found, stack = [], list(self.subclasses.get(cls, ()))
        while stack and len(found) < 200:
            sub = stack.pop()
            if sub not in found and sub != cls:
                found.append(sub)
                stack.extend(self.subclasses.get(sub, ()))
        return found

    def _resolve_typed(self, path: str, scope: str, callee: str,
                       recv: str) -> tuple[int | None, float] | None:
        """Through the receiver's known type; None when its type is not known."""
        typed = self.variable_type(path, scope, recv)
        if typed is None:
            return None
        target = self.resolve_dotted(path, scope, typed)
        if target is None or target[0] != "node":
            return None, 1.0  # a type outside the index (str, a library class): no guess
        cls = target[1] if self.nodes[target[1]][0] in CLASS_KINDS else \
            self.returned_class(target[1])  # x = make_service() -> UserService
        if cls is None:
            return None  # x = some_function() with no declared return type
        found = self.method_lookup(cls, callee)
        return (found, CONF_TYPED) if found is not None else (None, 0.0)

    def _call_on(self, target: tuple, callee: str) -> tuple[int | None, float]:
        if target[0] == "external":
            return None, 1.0
        if target[0] == "module":
            found = self.lookup_in_modules(target[1], callee)
            return (found[1], CONF_EXACT) if found and found[0] == "node" else (None, 0.0)
        if self.nodes[target[1]][0] in CLASS_KINDS:
            found = self.method_lookup(target[1], callee)
            return (found, CONF_EXACT) if found is not None else (None, 0.0)
        return None, 0.0

    def returned_class(self, function: int) -> int | None:
        """The class a function's declared return type names, when it is in the index."""
        written = _clean_type(self.returns.get(function, ""))
        _, _, qualname, path = self.nodes[function]
        if written in ("Self", "self", "this") and "." in qualname:
            written = qualname.rsplit(".", 2)[-2]
        if not written:
            return None
        target = self.resolve_dotted(path, "", written)
        if target and target[0] == "node" and self.nodes[target[1]][0] in CLASS_KINDS:
            return target[1]
        return None

    def variable_type(self, path: str, scope: str, recv: str) -> str | None:
        """The declared or constructed type of ``x``, ``self.x`` or ``this.x``."""
        head, _, attr = recv.partition(".")
        if attr and head in ("self", "this") and attr.isidentifier():
            types = self.ctx(path).get("types", {})
            for qual in self.scope_chain(scope):
                found = types.get(qual, {}).get("self." + attr) or (
                    types.get(qual, {}).get(attr) if self.lang.get(path) == "java" else None)
                if found:
                    return found
            return None
        if not recv.isidentifier():
            return None
        types = self.ctx(path).get("types", {})
        for qual in [*self.scope_chain(scope), ""]:
            found = types.get(qual, {}).get(recv)
            if found:
                return found
        return None

    def guess(self, name: str, lang: str, attr: bool = False) -> tuple[int | None, float]:
        """The one node of that name in the index (same language family), else nothing."""
        key = (name, lang, attr)
        if key not in self._guesses:
            self._guesses[key] = self._guess(name, lang, attr)
        return self._guesses[key]

    def _guess(self, name: str, lang: str, attr: bool) -> tuple[int | None, float]:
        if attr and name in COMMON_METHOD_NAMES:
            return None, 0.0
        family = LANGUAGE_FAMILY.get(lang, lang)
        found = []
        for node in self.by_name.get(name, ()):
            kind, _, qualname, path = self.nodes[node]
            node_lang = self.lang.get(path, "")
            if LANGUAGE_FAMILY.get(node_lang, node_lang) != family:
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
    "SELECT e.id, e.file_id, f.path, e.src_id, e.callee, e.recv, e.dst_name, e.line "
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
    _resolve_calls(db, resolver, run, [tuple(r) for r in old_calls])
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


def _resolve_calls(db: Database, resolver: _Resolver, run: _IndexRun, old: list[tuple]) -> None:
    inserts, updates = [], []
    for edge_id, file_id, path, src, callee, recv, written, line in [*run.calls, *old]:
        if src not in resolver.nodes:  # re-indexed meanwhile by a concurrent run
            continue
        scope = resolver.nodes[src]
        scope_qual = "" if scope[0] == "file" else scope[2]
        dst, confidence = resolver.resolve_call(path, scope_qual, callee, recv)
        if dst == src and (recv is None and scope[0] in CLASS_KINDS or confidence < CONF_TYPED):
            dst, confidence = None, 0.0  # a guess that points back at the caller is wrong
        if edge_id is None:
            inserts.append((run.project, "calls", src, dst, written, callee, recv, line,
                            confidence, file_id))
        else:
            updates.append((dst, confidence, edge_id))
    db.executemany(SQL_EDGE_INSERT, inserts)
    db.executemany(SQL_EDGE_UPDATE, updates)


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
            dst = resolver.by_pq.get((resolver.nodes[target[1]][3],) * 2)
        if edge_id is None:
            inserts.append((run.project, "imports", src, dst, spec, None, None, line, 1.0,
                            file_id))
        elif dst is not None:
            updates.append((dst, 1.0, edge_id))
    db.executemany(SQL_EDGE_INSERT, inserts)
    db.executemany(SQL_EDGE_UPDATE, updates)


# --- Graph: lookups other sections call ---------------------------------------


@dataclasses.dataclass(frozen=True)
class Relation:
    """One neighbour of a node: ``node`` is None for a name outside the index."""

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


def _rank_key(node: Node) -> tuple:
    testish = bool(re.search(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_|_test\.|\.spec\.",
                             node.path))
    kind_rank = 0 if node.kind in CLASS_KINDS or node.kind == "function" else 1
    return (testish, kind_rank, node.path.count("/"), len(node.path), node.line)


def graph_resolve(db: Database, env: Env, text: str, file: str | None = None,
                  first: bool = False) -> Node:
    """The node named by TARGET: an id, a qualname, a bare name or FILE:LINE."""
    text = text.strip()
    project = env.project
    place = re.fullmatch(r"(.+?):(\d+)", text)
    if place:
        path = normalize_file(place.group(1), env)
        found = graph_nodes_at(db, project, path, int(place.group(2)))
        if found:
            return sorted(found, key=lambda n: n.line)[-1]
        row = db.one(SQL_FILE_NODE, (project, path))
        if row is not None:
            return _node_from_row(row)
        raise NotFound(f"{path} is not in the index of project {project!r}; "
                       f"run `ctxkit index` (or check the path)")
    normalized = normalize_file(file, env) if file else None
    nodes = graph_find_nodes(db, project, text, normalized)
    if not nodes:
        row = db.one(SQL_FILE_NODE, (project, normalize_file(text, env)))
        if row is not None and not normalized:
            return _node_from_row(row)
        raise NotFound(_not_found_message(db, project, text, normalized))
    nodes.sort(key=_rank_key)
    if len(nodes) > 1 and not first:
        listing = "; ".join(f"{n.id} ({n.kind}, line {n.line})" for n in nodes[:10])
        more = f" and {len(nodes) - 10} more" if len(nodes) > 10 else ""
        raise Ambiguous(f"{text!r} matches {len(nodes)} symbols: {listing}{more}; "
                        f"pass a full id, --file FILE or --first")
    return nodes[0]


def _not_found_message(db: Database, project: str, text: str, file: str | None) -> str:
    if db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (project,)) is None:
        return f"nothing is indexed for project {project!r} yet; run `ctxkit index` first"
    where = f" in {file}" if file else ""
    return (f"symbol {text!r}{where} is not in the index of project {project!r}; "
            f"list known names with `ctxkit symbols {text.rsplit('.', 1)[-1]}` or re-run "
            f"`ctxkit index`")


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


def graph_impact(db: Database, project: str, node: Node, depth: int | None,
                 min_confidence: float) -> dict[str, Any]:
    """The reverse call closure of ``node`` with a risk level weighing fan-in and lessons."""
    results = [r for r in graph_walk(db, project, node, "calledBy", depth, min_confidence)
               if r["id"] != node.id]  # recursion adds no fan-in
    direct = [r["id"] for r in results if r["depth"] == 1]
    indirect = [r["id"] for r in results if r["depth"] > 1]
    fan_in = min(12.0, len(direct) + 0.5 * len(indirect))
    lesson = max([_lesson_risk(db, project, node)] + [
        _lesson_risk(db, project, n) for n in _nodes_by_uid(db, project, direct + indirect)])
    score = round(fan_in + lesson, 1)
    return {"target": node.id, "results": results, "direct": direct, "indirect": indirect,
            "fan_in": len(direct), "lesson_risk": lesson, "risk_score": score,
            "risk_level": risk_level(score)}


def _nodes_by_uid(db: Database, project: str, uids: list[str]) -> list[Node]:
    nodes = []
    for uid in uids:
        row = db.one(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND uid = ?",
                     (project, uid))
        if row is not None:
            nodes.append(_node_from_row(row))
    return nodes


# --- Graph: commands ----------------------------------------------------------


def cmd_index(args: argparse.Namespace, env: Env) -> int:
    db = open_db(env)
    try:
        summary = graph_index(env, db, args.paths, full=args.full, excludes=args.exclude)
        flagged = [r[0] for r in db.query(
            "SELECT path FROM files WHERE project = ? AND parse_errors > 0 ORDER BY path",
            (env.project,))]
    finally:
        db.close()
    emit(env, summary, lambda: _index_text(summary, flagged, env.quiet))
    return EXIT_OK


def _index_text(summary: dict[str, Any], flagged: list[str], quiet: bool) -> str:
    files = summary["files"]
    languages = ", ".join(f"{k} {v}" for k, v in summary["languages"].items()) or "none"
    text = (f"indexed {files['indexed']} files ({files['unchanged']} unchanged, "
            f"{files['removed']} removed, {files['skipped']} skipped, {files['errors']} with "
            f"syntax errors) in {summary['seconds']:.2f}s: {summary['nodes']} nodes, "
            f"{summary['edges']} edges; files by language: {languages}")
    if flagged and not quiet:
        shown = "\n".join(f"  {p}" for p in flagged[:10])
        more = f"\n  ... and {len(flagged) - 10} more" if len(flagged) > 10 else ""
        text += f"\nindexed with syntax errors (tree-sitter error recovery):\n{shown}{more}"
    return text


def cmd_symbols(args: argparse.Namespace, env: Env) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    db = open_db(env)
    try:
        where, params = ["project = ?", "kind != 'file'"], [env.project]
        if args.file:
            where.append("path = ?")
            params.append(normalize_file(args.file, env))
        if args.kind:
            where.append("kind = ?")
            params.append(args.kind)
        rows = db.query(f"SELECT uid, kind, path, line, qualname FROM nodes WHERE "
                        f"{' AND '.join(where)} ORDER BY path, line", params)
        empty = db.one("SELECT 1 FROM files WHERE project = ? LIMIT 1", (env.project,)) is None
    finally:
        db.close()
    results = [{"id": r["uid"], "kind": r["kind"], "path": r["path"], "line": r["line"]}
               for r in rows if _symbol_matches(args.pattern, r["uid"], r["qualname"])]
    results = results[:args.limit]
    none = ("nothing is indexed yet: run `ctxkit index` where the source files are" if empty
            else "no symbols match")
    emit(env, {"results": results},
         lambda: "\n".join(f"{r['id']} ({r['kind']})" for r in results) or none)
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
    db = open_db(env)
    try:
        node = graph_resolve(db, env, args.symbol, args.file, args.first)
        results = graph_walk(db, env.project, node, relation, depth, args.min_confidence)
    finally:
        db.close()
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
    db = open_db(env)
    try:
        node = graph_resolve(db, env, args.symbol, args.file, args.first)
        data = graph_impact(db, env.project, node, depth, args.min_confidence)
    finally:
        db.close()
    emit(env, data, lambda: _impact_text(data))
    return EXIT_OK


def _impact_text(data: dict[str, Any]) -> str:
    lines = [f"impact of {data['target']}: risk {data['risk_level']} (score "
             f"{data['risk_score']:.1f}: {len(data['direct'])} direct and "
             f"{len(data['indirect'])} indirect callers, lesson risk "
             f"{data['lesson_risk']:.1f})"]
    for r in data["results"]:
        lines.append(f"{'  ' * r['depth']}{r['id']}  {r['path']}:{r['line']}")
    if not data["results"]:
        lines.append("  no callers in the index")
    return "\n".join(lines)


def register_graph_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
    parser = add_command(sub, common, "symbols", cmd_symbols,
                         "list indexed symbols (L0: id and kind)",
                         "ctxkit symbols 'Auth*' --kind class")
    parser.add_argument("pattern", nargs="?", metavar="PATTERN",
                        help="substring of the id, or a glob on the qualname")
    parser.add_argument("--file", metavar="F", help="only symbols of this file")
    parser.add_argument("--kind", metavar="K", choices=sorted(CLASS_KINDS | {"function",
                                                                             "method"}),
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


def register_context_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """context."""


# =============================================================================
# Output store
# =============================================================================

OUTPUT_SCHEMA = """
"""


def register_output_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """run, store, search, expand, outputs, purge."""


# =============================================================================
# Lessons
# =============================================================================
# Per-symbol fail/ok memory, compatible with code memory (seed 003): a symbol
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
RISK_LEVELS = ((15.0, "critical"), (10.0, "high"), (5.0, "medium"))
INJECT_MIN_RISK = 10.0
INJECT_LIMIT = 10000
INJECT_FOOTER = "Apply these lessons. Do not repeat these mistakes."
_INJECT_LINE_MAX = 300  # a lesson line's length once the whole block must shrink
# A graph id PATH:QUALNAME whose PATH has a slash or a file extension.
_SYMBOL_ID = (r"^(?P<path>(?:[A-Za-z]:)?[^:]*[/\\][^:]*|[^:/\\\s]+\.[A-Za-z0-9]{1,8})"
              r":(?P<name>[^:\s].*)$")

SQL_SYMBOL_COLUMNS = "id, project, name, file"
SQL_FIND_SYMBOL = "SELECT id FROM lesson_symbols WHERE project = ? AND file = ? AND name = ?"
SQL_INSERT_SYMBOL = "INSERT OR IGNORE INTO lesson_symbols (project, name, file) VALUES (?, ?, ?)"
SQL_SYMBOLS_OF_PROJECT = f"SELECT {SQL_SYMBOL_COLUMNS} FROM lesson_symbols WHERE project = ?"
SQL_INSERT_LESSON = """
INSERT INTO lessons (project, symbol_id, type, lesson, detail, session_id, status,
                     created_at, code_hash, origin)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
SQL_LESSON_COLUMNS = ("id, symbol_id, type, lesson, detail, session_id, status, created_at, "
                      "code_hash")
SQL_LESSONS_OF_SYMBOL = (f"SELECT {SQL_LESSON_COLUMNS} FROM lessons "
                         f"WHERE project = ? AND symbol_id = ? ORDER BY created_at, id")
SQL_LATEST_TIME = "SELECT MAX(created_at) FROM lessons WHERE project = ? AND symbol_id = ?"
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
    """Seed 003's counters and risk from lessons given in recording order.

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


def _lesson_json(row: sqlite3.Row | dict[str, Any], stale: bool) -> dict[str, Any]:
    return {"id": row["id"], "type": row["type"], "lesson": row["lesson"],
            "detail": row["detail"], "status": row["status"], "session_id": row["session_id"],
            "created_at": row["created_at"], "stale": stale}


def _inject_order(lessons: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fails first, then successes; the most recently recorded first in each."""
    ordered = sorted(lessons, key=lambda item: (item["created_at"], item["id"]), reverse=True)
    return sorted(ordered, key=lambda item: item["type"] != "fail")


def _current_hash(db: Database, project: str, name: str, file: str) -> str | None:
    """The body_hash of the one graph node this symbol names, else None."""
    nodes = graph_find_nodes(db, project, name, file or None)
    return nodes[0].body_hash if len(nodes) == 1 else None


def _symbol_obj(db: Database, project: str, row: sqlite3.Row, include_all: bool,
                node_hash: str | None | bool = False) -> dict[str, Any]:
    """A SYMBOL_OBJ (SPEC section 4) for one lesson_symbols row, risk computed now.

    ``node_hash`` is the current body_hash when the caller knows it; False
    means look it up in the graph (only when some lesson kept a code_hash).
    """
    rows = db.query(SQL_LESSONS_OF_SYMBOL, (project, row["id"]))
    counters = symbol_counters(rows)
    if node_hash is False:
        node_hash = (_current_hash(db, project, row["name"], row["file"])
                     if any(r["code_hash"] for r in rows) else None)
    shown = [_lesson_json(r, bool(r["code_hash"] and node_hash and r["code_hash"] != node_hash))
             for r in rows if include_all or r["status"] == "active"]
    return {"project": project, "name": row["name"], "file": row["file"], **counters,
            "lessons": _inject_order(shown)}


def _match_names(rows: list[sqlite3.Row], name: str, substring: bool = False) -> list[sqlite3.Row]:
    """Exact name, else a qualified name ending in it, else (stats) a substring."""
    exact = [r for r in rows if r["name"] == name]
    if exact:
        return exact
    tails = [r for r in rows if any(r["name"].endswith(sep + name) for sep in (".", "::", "#"))]
    if tails or not substring:
        return tails
    return [r for r in rows if name.lower() in r["name"].lower()]


def _by_risk(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(objs, key=lambda o: (-o["risk_score"], o["file"], o["name"]))


def lesson_symbols(db: Database, project: str, name: str | None = None,
                   file: str | None = None, include_all: bool = False,
                   substring: bool = False) -> list[dict[str, Any]]:
    """SYMBOL_OBJs by risk, highest first.

    ``name`` None lists every symbol; a name matches exactly, else as the tail
    of a qualified name (``validate`` finds ``AuthService.validate``).
    ``file`` None means every file; "" means lessons recorded without a file.
    Symbols with no active lesson are left out unless ``include_all``.
    """
    sql, params = SQL_SYMBOLS_OF_PROJECT, [project]
    if file is not None:
        sql += " AND file = ?"
        params.append(file)
    rows = db.query(sql + " AND name = ?", (*params, name)) if name is not None else []
    if not rows:  # no name, or no exact match: read them all (the index serves exact names)
        rows = db.query(sql, params)
        if name is not None:
            rows = _match_names(rows, name, substring)
    objs = [_symbol_obj(db, project, row, include_all) for row in rows]
    return _by_risk([o for o in objs if include_all or o["lessons"]])


def lessons_for_node(db: Database, project: str, node: Node) -> dict[str, Any] | None:
    """The active lessons of a graph node as one SYMBOL_OBJ, None when there are none.

    Lessons recorded under the node's qualname, bare name or id, for its file
    or without a file, are merged into one view named after the node.
    """
    rows = db.query(SQL_SYMBOLS_OF_PROJECT + " AND file IN (?, '') AND name IN (?, ?, ?)",
                    (project, node.path, node.qualname, node.name, node.id))
    objs = [_symbol_obj(db, project, r, False, node.body_hash) for r in rows]
    objs = [o for o in objs if o["lessons"]]
    if not objs:
        return None
    if len(objs) == 1:
        return objs[0]
    lessons = [lesson for obj in objs for lesson in obj["lessons"]]
    counters = symbol_counters(sorted(lessons, key=lambda l: (l["created_at"], l["id"])))
    return {"project": project, "name": node.qualname, "file": node.path, **counters,
            "lessons": _inject_order(lessons)}


def symbol_label(obj: dict[str, Any]) -> str:
    """``file:name`` when the symbol has a file, else the name."""
    return f"{obj['file']}:{obj['name']}" if obj["file"] else obj["name"]


def _inject_header(obj: dict[str, Any], label: str | None = None) -> str:
    return (f"[PAST EXPERIENCE — {label or symbol_label(obj)} "
            f"(risk: {obj['risk_score']:.1f}, {obj['level']})]")


def _one_line(text: str, limit: int | None = None) -> str:
    """The text on one line (line breaks folded, other spacing kept), cut at ``limit``."""
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if limit and len(line) > limit:
        line = line[:limit - 1] + "…"
    return line


def inject_text(symbol_objs: Iterable[dict[str, Any]], limit: int = INJECT_LIMIT) -> str:
    """The inject blocks of the symbols at risk >= 10, shorter than ``limit`` characters.

    Each block lists the symbol's active lessons, fails first and the most
    recent first. When everything does not fit, long lessons are shortened,
    the oldest lessons dropped, and a last line says how many were left out.
    """
    blocks = [(obj, [_one_line(l["lesson"]) for l in _inject_order(
        l for l in obj["lessons"] if l["status"] == "active")])
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
        header = _inject_header(obj, _one_line(symbol_label(obj), 200))
        base = len(header) + len(INJECT_FOOTER) + 2 + (2 if parts else 0)
        chosen: list[str] = []
        for line in lines:
            line = _one_line(line, _INJECT_LINE_MAX)
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


# --- recording ---------------------------------------------------------------


def split_symbol(db: Database | None, env: Env, symbol: str,
                 file: str | None) -> tuple[str, str | None]:
    """(name, normalized file or None) from SYMBOL and ``--file``.

    SYMBOL may be a graph id ``path:Qual.name``: it is split when the graph
    knows that id or when the part before the colon looks like a path.
    """
    symbol = symbol.strip()
    given = normalize_file(file, env) if file else None
    path = name = None
    if db is not None and ":" in symbol:
        nodes = graph_find_nodes(db, env.project, symbol)
        if nodes and nodes[0].id == symbol:
            path, name = nodes[0].path, nodes[0].qualname
    match = re.match(_SYMBOL_ID, symbol) if path is None else None
    if match:
        path, name = normalize_file(match["path"], env), match["name"]
    if path is None:
        return symbol, given
    if given is not None and given != path:
        raise UsageError(f"SYMBOL {symbol!r} names file {path} but --file says {given}; "
                         f"give only one of them")
    return name, path


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
    session = redact(session)[0] if session else None
    db = open_db(env)
    try:
        name, path = split_symbol(db, env, symbol, file)
        path = path or ""
        code_hash = _current_hash(db, env.project, name, path)
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
        return {"id": lesson_id, "symbol": _symbol_obj(db, env.project, row, False),
                "redactions": masked + masked_detail}
    finally:
        db.close()


def _ensure_symbol(db: Database, project: str, name: str, file: str) -> int:
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
    db = _open_existing(env)
    if db is None:
        raise NotFound(f"no lesson #{lesson_id} in project {env.project}: there is no "
                       f"database yet at {env.db_path}")
    try:
        with db.atomic():
            row = db.one(SQL_LESSON_BY_ID, (env.project, lesson_id))
            if row is None:
                raise NotFound(f"no lesson #{lesson_id} in project {env.project}; "
                               f"`ctxkit query --all` lists the lesson ids")
            db.execute(SQL_SET_STATUS, (status, env.project, lesson_id))
            _store_counters(db, env.project, row["symbol_id"])
        symbol = db.one(SQL_SYMBOL_BY_ID, (env.project, row["symbol_id"]))
        return {"id": lesson_id, "status": status, "previous": row["status"],
                "symbol": _symbol_obj(db, env.project, symbol, True)}
    finally:
        db.close()


def _open_existing(env: Env) -> Database | None:
    """The database for reading, None when it does not exist yet (nothing recorded)."""
    if not env.db_path.exists():
        return None
    return open_db(env, create=False)


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


_CM_UNKNOWN_TIME = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _cm_time(text: Any) -> str:
    """ctxkit's time format; a missing time becomes the epoch (oldest, and stable
    from one import to the next)."""
    when = parse_time(text) if isinstance(text, str) else None
    return (when or _CM_UNKNOWN_TIME).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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
    db = open_db(env)
    try:
        with db.atomic():
            _cm_store(db, env.project, symbols, excluded, experiences, columns, report)
    finally:
        db.close()
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
    last = max(lessons, key=lambda l: (l["created_at"], l["id"]), default=None)
    last_symbol = next((o for o in objs if last and last in o["lessons"]), None)
    return {"project": project, "query": name, "symbols": len(objs), **totals,
            "stale": sum(1 for l in lessons if l["stale"]), "levels": levels,
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
    states = ", ".join(f"{stats[k]} {k}" for k in (*LESSON_STATUSES, "stale"))
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
            "stale: code changed since" if lesson["stale"] else "") if m)
        kind = "fail" if lesson["type"] == "fail" else "ok"
        lines.append(f"  #{lesson['id']:<5} {kind:<4} {_one_line(lesson['lesson'])}{marks}")
        if lesson["detail"]:
            lines.append(f"         {_one_line(lesson['detail'])}")
    if not obj["lessons"]:
        lines.append("  (no active lessons; --all shows resolved and inactive ones)")
    return "\n".join(lines)


def _query_text(objs: list[dict[str, Any]]) -> str:
    return "\n\n".join(_symbol_text(obj) for obj in objs)


# --- commands ------------------------------------------------------------------


def cmd_query(args: argparse.Namespace, env: Env) -> int:
    if args.top is not None and args.top < 1:
        raise UsageError("--top must be at least 1")
    db = _open_existing(env)
    objs: list[dict[str, Any]] = []
    if db is not None:
        try:
            name, file = (split_symbol(db, env, args.symbol, args.file) if args.symbol
                          else (None, normalize_file(args.file, env) if args.file else None))
            objs = lesson_symbols(db, env.project, name, file, include_all=args.all)
        finally:
            db.close()
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
        warn(f"{masked} secret{'s' if masked != 1 else ''} masked before saving")
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
    db = _open_existing(env)
    if db is None:
        stats = {"project": env.project, "query": args.symbol, "symbols": 0, "lessons": 0,
                 **{t: 0 for t in LESSON_TYPES}, **{s: 0 for s in LESSON_STATUSES},
                 "stale": 0, "levels": {k: 0 for k in ("low", "medium", "high", "critical")},
                 "last_lesson_at": None, "last_lesson": None, "riskiest": []}
    else:
        try:
            name, file = split_symbol(db, env, args.symbol, None) if args.symbol else (None, None)
            stats = lesson_stats(db, env.project, name, file)
        finally:
            db.close()
    emit(env, stats, lambda: _stats_text(stats))
    return EXIT_OK


def cmd_import_cm(args: argparse.Namespace, env: Env) -> int:
    source = Path(args.path).expanduser()
    if not source.is_absolute():
        source = env.cwd / source
    report = import_code_memory(env, source, args.from_project)
    emit(env, report, f"imported {report['imported']} lessons on {report['symbols']} symbols "
                      f"from {source} (code memory {report['version']}) into project "
                      f"{env.project}; {report['duplicates']} already there, "
                      f"{report['orphans']} without a symbol, {report['invalid']} unusable, "
                      f"{report['redactions']} secrets masked")
    return EXIT_OK


def _symbol_arguments(parser: argparse.ArgumentParser, optional: bool = False) -> None:
    parser.add_argument("symbol", nargs="?" if optional else None, metavar="SYMBOL",
                        help="name as you call it (AuthService.validate), or a graph id "
                             "(src/auth/service.py:AuthService.validate)")
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
        _symbol_arguments(parser)
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

SNAPSHOT_SCHEMA = """
"""


def register_snapshot_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """note, snapshot, hook, install-hooks, uninstall-hooks, risk."""


# =============================================================================
# CLI
# =============================================================================

COMMAND_REGISTRARS = (register_graph_commands, register_context_commands,
                      register_output_commands, register_lesson_commands,
                      register_snapshot_commands)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, given the terminal width so it never imports shutil.

    argparse builds a formatter for every add_argument() call and, without a
    width, asks shutil for it; importing shutil (with bz2 and lzma) costs more
    than the rest of ``query --inject``.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         width if width is not None else terminal_columns() - 2)


def terminal_columns() -> int:
    with contextlib.suppress(ValueError):
        if int(os.environ.get("COLUMNS", "0")) > 0:
            return int(os.environ["COLUMNS"])
    with contextlib.suppress(OSError, AttributeError, ValueError):
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    return 80


class _Parser(argparse.ArgumentParser):
    """argparse whose errors become UsageError (one line, exit 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


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
                       help="print less")


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
_VALUE_OPTIONS = ("--db", "-p", "--project")


def command_in(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (global options may come first), else None."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUE_OPTIONS:
            skip = True
        elif token in ("-h", "--help", "--version", "--"):
            return None
        elif not token.startswith("-"):
            return token
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (``command`` given) one with only that sub-command built."""
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
    if command is not None and command not in sub.choices:
        return build_parser()  # unknown command or alias: the full parser explains
    return parser


def add_command(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str,
                func: Callable[[argparse.Namespace, Env], int | None], help: str,
                example: str) -> argparse.ArgumentParser:
    """Register one sub-command with the global options and an example in its help."""
    if getattr(sub, "only_command", None) not in (None, name):
        return _SKIPPED  # type: ignore[return-value]
    parser = sub.add_parser(name, parents=[common], help=help, description=help,
                            epilog=f"example:\n  {example}",
                            formatter_class=_HelpFormatter)
    parser.set_defaults(func=func)
    return parser


def env_from_args(args: argparse.Namespace) -> Env:
    return make_env(db=args.db, project=args.project, as_json=args.json, quiet=args.quiet)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("CTXKIT_DEBUG") == "1"
    try:
        args = build_parser(command_in(argv)).parse_args(argv)
        if not getattr(args, "func", None):
            build_parser().print_help(sys.stderr)
            return EXIT_USAGE
        status = args.func(args, env_from_args(args))
        return EXIT_OK if status is None else int(status)
    except CtxkitError as exc:
        if debug:
            import traceback
            traceback.print_exc()
        sys.stderr.write(f"ctxkit: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("ctxkit: interrupted\n")
        return 130
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_OK
    except Exception as exc:  # a bug: still one line unless debugging
        if debug:
            raise
        sys.stderr.write(f"ctxkit: error: internal error: {type(exc).__name__}: {exc} "
                         f"(rerun with CTXKIT_DEBUG=1 for the traceback)\n")
        return EXIT_ERROR


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
