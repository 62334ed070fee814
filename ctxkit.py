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
REDACTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
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
))

# An unquoted assignment value that is plainly code, not a secret: a name,
# attribute or call (password=self.password, token = get_token()).
_CODE_LIKE_VALUE = re.compile(
    r"^(?:[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\(?|None|null|nil|true|false|True"
    r"|False|undefined|\*+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\*\*\*REDACTED\*\*\*)$")


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
        if not value or (not quoted and _CODE_LIKE_VALUE.match(value)) or value == REDACTED:
            return match.group(0)
        count += 1
        start, end = match.span("value")
        base = match.start()
        whole = match.group(0)
        return whole[:start - base] + REDACTED + whole[end - base:]

    for pattern in REDACTION_PATTERNS:
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
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)
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
CREATE INDEX IF NOT EXISTS nodes_place ON nodes(project, path, line);
CREATE TABLE IF NOT EXISTS edges (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind TEXT NOT NULL,            -- contains, calls, imports, extends, implements
    src_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    dst_id INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
    dst_name TEXT NOT NULL,        -- the name as written; kept when unresolved
    line INTEGER,                  -- call site / import line
    confidence REAL NOT NULL DEFAULT 1.0,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src_id, kind);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst_id, kind);
CREATE INDEX IF NOT EXISTS edges_name ON edges(project, kind, dst_name);
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
    rows = db.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE project = ? AND path = ? "
                    f"AND kind != 'file' AND line <= ? AND end_line >= ? "
                    f"ORDER BY line", (project, path, last, first))
    nodes = [_node_from_row(r) for r in rows]
    # Keep a node only when no other match lies strictly inside it.
    return [n for n in nodes if not any(
        o is not n and n.line <= o.line and o.end_line <= n.end_line
        and (o.line, o.end_line) != (n.line, n.end_line) for o in nodes)]


def register_graph_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """index, symbols, callers, callees, impact."""


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

LESSON_SCHEMA = """
"""


def register_lesson_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """query, fail, ok, resolve, deactivate, stats, import-cm."""


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


class _Parser(argparse.ArgumentParser):
    """argparse whose errors become UsageError (one line, exit 2)."""

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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxkit", description=__doc__.split("\n\n")[0],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ctxkit {__version__}")
    _global_options(parser, suppress=False)
    # Sub-commands accept the global options too; SUPPRESS keeps a value given
    # before the command from being reset by the sub-parser's default.
    common = _Parser(add_help=False)
    _global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for register in COMMAND_REGISTRARS:
        register(sub, common)
    return parser


def add_command(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, name: str,
                func: Callable[[argparse.Namespace, Env], int | None], help: str,
                example: str) -> argparse.ArgumentParser:
    """Register one sub-command with the global options and an example in its help."""
    parser = sub.add_parser(name, parents=[common], help=help, description=help,
                            epilog=f"example:\n  {example}",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=func)
    return parser


def env_from_args(args: argparse.Namespace) -> Env:
    return make_env(db=args.db, project=args.project, as_json=args.json, quiet=args.quiet)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get("CTXKIT_DEBUG") == "1"
    try:
        args = build_parser().parse_args(argv)
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
