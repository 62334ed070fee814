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
SQL_OUTPUTS_SINCE = """
SELECT handle, command, label, exit_code, created_at, summary FROM outputs
WHERE project = ? AND created_at >= ? AND status != 'running' ORDER BY id"""
SQL_CHUNKS_IN_RANGE = """
SELECT line_start, line_end, cont, stderr, text FROM output_chunks
WHERE output_id = ? AND line_end >= ? AND line_start <= ? ORDER BY id"""
SQL_CHUNKS_FROM = """
SELECT line_start, line_end, cont, stderr, text FROM output_chunks
WHERE output_id = ? AND line_end >= ? ORDER BY id"""
SQL_SEARCH_FTS = """
SELECT c.id, c.output_id, c.line_start, c.line_end, c.title, o.handle, bm25(output_fts, 2.0, 1.0)
FROM output_fts JOIN output_chunks c ON c.id = output_fts.rowid
JOIN outputs o ON o.id = c.output_id
WHERE output_fts MATCH ? AND c.project = ? {handle}
ORDER BY rank LIMIT ?"""
SQL_VOCAB_MATCH = """
SELECT o.id, o.vocab FROM output_vocab_fts JOIN outputs o ON o.id = output_vocab_fts.rowid
WHERE output_vocab_fts MATCH ? AND o.project = ? {handle} LIMIT 50"""
SQL_EXPIRED = "SELECT id FROM outputs WHERE project = ? AND created_at < ?"
SQL_PURGE_SIZES = """
SELECT COUNT(DISTINCT o.id), COALESCE(SUM(LENGTH(CAST(c.text AS BLOB))), 0)
FROM outputs o LEFT JOIN output_chunks c ON c.output_id = o.id WHERE o.id IN ({ids})"""
SQL_STAT_BUMP = """
INSERT INTO output_stats(project, key, value) VALUES (?, ?, ?)
ON CONFLICT(project, key) DO UPDATE SET value = value + excluded.value"""
SQL_STATS_ALL = "SELECT key, value FROM output_stats WHERE project = ?"
SQL_OUTPUT_TOTALS = """
SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM outputs WHERE project = ?"""

DIRECT_MAX_DEFAULT = 4096
RETENTION_DAYS_DEFAULT = 14
CHUNK_LINES, CHUNK_BYTES = 40, 2048          # a chunk's size when no unit holds it open
UNIT_MAX_LINES, UNIT_MAX_BYTES = 400, 32768  # a unit larger than this is cut anyway
LINE_PIECE = 1 << 20                 # longer lines are stored in pieces of this many chars
FLUSH_BYTES = 1 << 21                # chunks are written in batches of about this size
VOCAB_MAX = 100000                   # distinct tokens looked at per output
SUMMARY_MAX_BYTES = 2000
HEAD_LINES = TAIL_LINES = 5
MAX_DECISIVE = 10
TIMEOUT_EXIT, KILL_GRACE = 124, 2.0
STDOUT, STDERR = 1, 2

# Substrings at least one of which every redaction pattern needs (lowercase);
# a block without any of them cannot hold a secret and skips the regexes.
_REDACT_TRIGGERS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "bearer",
                    "akia", "asia", "eyj", "xox", "xapp-", "hooks.slack", "aiza", "://",
                    "pass", "pwd", "secret", "key", "token", "private")
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")

# Keywords that make a line a candidate for the decisive lines (lowercase).
_DECISIVE_KEYS = ("error", "exception", "fail", "fatal", "panic", "traceback", "✕", "●",
                  "file \"")
_TS_PREFIX = re.compile(r"\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d|\d\d:\d\d:\d\d)")
_SECTION_HEAD = re.compile(
    r"^(?:_{3,} (?P<pytest>\S.*?) _{3,}$|={3,} (?P<pyhead>[A-Za-z].*?) ={3,}$|=== RUN\s+(?P<go>\S+)"
    r"|---- (?P<cargo>\S+) stdout ----$|\s*● (?P<jest>.+)$)")
_COMPILER_ERROR = re.compile(
    r"^(?P<path>[^\s:()\"']+\.\w+):(?P<line>\d+)(?::\d+)?:\s*(?:fatal )?error\b"
    r"|^(?P<path2>[^\s(]+\.\w+)\((?P<line2>\d+),\d+\):\s*error\b")
_RUST_ERROR = re.compile(r"^error(?:\[E\d+\])?: ")
_RUST_ARROW = re.compile(r"^\s*--> (?P<path>[^\s:]+):(?P<line>\d+)")
_TEST_FAILED = re.compile(
    r"^(?:FAILED|ERROR) (?P<pytest>\S+::\S+)|^(?P<pytest2>\S+::\S+) (?:FAILED|ERROR)\b"
    r"|^\s*--- FAIL: (?P<go>\S+)|^test (?P<cargo>\S+) \.\.\. FAILED"
    r"|^\s*✕ (?P<jest>.+?)(?: \(\d+\s*ms\))?$|^\s*● (?P<jest2>.+ › .+)$")
# pytest's short form of a traceback's last line: "src/calc.py:3: ZeroDivisionError"
_PYTEST_LOCATION = re.compile(r"^(?P<path>[^\s:]+\.\w+):(?P<line>\d+): (?P<exc>[A-Za-z_][\w.]*)$")
_BANNER = re.compile(r"^[=_*#-]{3,} ?[A-Za-z ]{0,40} ?[=_*#-]{3,}$")
# The one-line verdict of a test runner: pytest, cargo, jest, go.
_TEST_RESULT = re.compile(
    r"^=* ?(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected),? )+"
    r"in [\d.]+s\b|^test result: FAILED\b|^Tests:\s+\d+ failed"
    r"|^FAIL\s+\S+\s+[\d.]+s$")
_PANIC = re.compile(r"^panic: |^thread '[^']*' panicked at|^fatal error: ")
_GENERIC_BAD = re.compile(r"(?i)\b(?:errors?|exceptions?|fail|failed|failures?|fatal|panic|"
                          r"panicked)\b")
_NEGATED = re.compile(
    r"(?i)\b(?:no|0|zero|without|none|never)\s+(?:\w+\s+)?(?:errors?|exceptions?|failures?|"
    r"failed|fatal|panics?)\b|\b(?:errors?|failures?|failed|exceptions?)\s*[:=]\s*0\b"
    r"|\b(?:error|fail)(?:s|ed)?\s*:\s*none\b")
_TRACE_START = re.compile(r"^\s*Traceback \(most recent call last\):")
_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)'
                        r"|(?<![\w./\\-])(?P<path2>[\w./\\-]{0,300}[\w-]\.[A-Za-z]\w{0,5})"
                        r":(?P<line2>\d+)")
_WORD = re.compile(r"\w+", re.UNICODE)
_IDENT_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP_WORDS = frozenset(
    "a an and are as at be by did do does for from had has have how i in is it its me my "
    "no not of on or our so than that the their them then there these this those to was "
    "we were what when where which who whom why will with you your show find line log "
    "output".split())
_SYNONYMS = (
    ("error", "errors", "exception", "exceptions", "fail", "failed", "failure", "failing",
     "traceback", "panic", "panicked", "fatal", "crash", "crashed", "raise", "raised"),
    ("warn", "warning", "warnings", "deprecated", "deprecation"),
    ("timeout", "timed", "deadline", "expired", "hang", "hung"),
    ("refused", "refuse", "denied", "reject", "rejected", "forbidden", "unauthorized"),
    ("missing", "notfound", "absent", "unknown", "undefined", "unresolved"),
    ("memory", "oom", "heap", "alloc", "allocation"),
    ("disk", "storage", "space", "quota", "full", "volume"),
    ("connect", "connection", "socket", "network", "unreachable"),
    ("slow", "latency", "duration", "elapsed", "took"),
    ("install", "installed", "installing", "download", "collected", "requirement"),
    ("test", "tests", "case", "spec", "assert", "assertion", "expected"),
    ("compile", "compiler", "build", "syntax", "mismatched", "type"),
    ("permission", "access", "eacces", "eperm"),
    ("null", "none", "nil", "nullpointerexception", "nonetype"),
    ("kill", "killed", "signal", "sigkill", "sigterm", "terminated", "abort", "aborted"),
)
_SYNONYM_OF = {word: group for group in _SYNONYMS for word in group}
_SCRUB_NAME = re.compile(r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION"
                         r"|^(?:AWS|GITHUB|GH|OPENAI|ANTHROPIC|AZURE|GOOGLE|GCP|HF|HUGGINGFACE"
                         r"|NPM|PYPI|DOCKER|SLACK|STRIPE)_", re.IGNORECASE)


class OutputStoreError(CtxkitError):
    """The output store could not keep an output (the message says what to do)."""


# --- reading lines back -------------------------------------------------------


def _stderr_offsets(spec: str) -> set[int]:
    offsets: set[int] = set()
    for part in filter(None, spec.split(",")):
        first, _, last = part.partition("-")
        offsets.update(range(int(first), int(last or first) + 1))
    return offsets


def _iter_rows_lines(rows: Iterable[sqlite3.Row]) -> Iterator[tuple[int, int, str]]:
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


def output_lines(db: Database, output_id: int, first: int, last: int) -> list[tuple[int, int, str]]:
    """Stored lines ``first..last`` of one output as (number, stream, text)."""
    rows = db.query(SQL_CHUNKS_IN_RANGE, (output_id, first, last))
    return [item for item in _iter_rows_lines(rows) if first <= item[0] <= last]


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

    def add_block(self, first_no: int, lines: list[str], low: str) -> None:
        if self.trace_frames is not None:
            self._scan_trace(first_no, lines, 0)
        hits = self._candidate_indexes(lines, low)
        for index in hits:
            self._classify(first_no, lines, index)

    @staticmethod
    def _candidate_indexes(lines: list[str], low: str) -> list[int]:
        offsets: set[int] = set()
        for key in _DECISIVE_KEYS:
            at = low.find(key)
            while at >= 0:
                offsets.add(at)
                if len(offsets) > 20000:
                    break
                at = low.find(key, at + len(key))
        indexes, line, last = [], 0, 0
        for off in sorted(offsets):
            line += low.count("\n", last, off)
            last = off
            if not indexes or indexes[-1] != line:
                indexes.append(line)
        return indexes

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
            self._keep("test", number, line, _first_ref(line))
            return
        if _PANIC.match(line):
            self._keep("panic", number, line, _first_ref(line))
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
                self._keep("error", number, line, _first_ref(line))

    @staticmethod
    def _is_generic_error(line: str) -> bool:
        if not _GENERIC_BAD.search(line) or _BANNER.match(line.strip()):
            return False
        return bool(_GENERIC_BAD.search(_NEGATED.sub(" ", line)))

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
        for kind, quota in self.QUOTA:
            chosen.extend(self.found[kind][:quota])
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


def _first_ref(line: str) -> tuple[str, int] | None:
    match = _FILE_LINE.search(line[:2000])
    if not match:
        return None
    path = match.group("path") or match.group("path2")
    return path, int(match.group("line") or match.group("line2"))


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
        import bisect
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
        return index + bisect.bisect_right(sizes, budget - (stop - index))

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

    _STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
    _KEY_OPEN = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*:\s*[\[{]\s*$')
    # A record's identity: the first of these fields names the array element.
    _LABEL = re.compile(r'^\s*"(?:name|id|key|title|nodeid|package|test)"\s*:\s*"([^"\\]{1,80})"')

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
        self.label, self.command, self.source = label, command, source
        self.direct_max = direct_max
        self.started = time.monotonic()
        self.decoders = {s: codecs.getincrementaldecoder("utf-8")("backslashreplace")
                         for s in (STDOUT, STDERR)}
        self.partial = {STDOUT: "", STDERR: ""}
        self.line_no = 0
        self.open_piece: int | None = None   # stream whose last line is still open
        self.bytes = 0
        self.redactions = 0
        self.in_key = False
        self.head: list[tuple[int, str]] = []
        import collections
        self.tail: collections.deque[tuple[int, str]] = collections.deque(maxlen=TAIL_LINES)
        self.direct: list[tuple[int, str]] | None = []
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
        while len(self.partial[stream]) > LINE_PIECE:
            piece, self.partial[stream] = (self.partial[stream][:LINE_PIECE],
                                           self.partial[stream][LINE_PIECE:])
            self._add_lines(stream, [piece], open_last=True)

    def _add_lines(self, stream: int, lines: list[str], open_last: bool) -> None:
        joins = self.open_piece == stream
        if self.open_piece is not None and not joins:
            self.open_piece = None          # the other stream interrupts: the piece ends a line
        first_no = self.line_no if joins else self.line_no + 1
        self.line_no = first_no + len(lines) - 1
        block = "\n".join(lines)
        low = block.lower()
        if self.in_key or any(t in low for t in _REDACT_TRIGGERS):
            lines = self._redact_lines(lines)
            block = "\n".join(lines)
            low = block.lower()
        self._observe(first_no, stream, lines, low, joins)
        self.chunker.add(first_no, stream, lines, low, open_last, joins)
        self.open_piece = stream if open_last else None
        self._maybe_flush()

    def _redact_lines(self, lines: list[str]) -> list[str]:
        result = []
        for line in lines:
            if self.in_key or _KEY_BEGIN.search(line):
                if not self.in_key:
                    self.redactions += 1
                self.in_key = not _KEY_END.search(line)
                result.append(REDACTED)
                continue
            low = line.lower()
            if any(t in low for t in _REDACT_TRIGGERS):
                line, count = redact(line)
                self.redactions += count
            result.append(line)
        return result

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


_VOCAB_TOKEN = re.compile(r"^(?=[^\n]*[A-Za-z])[^\n]*(?:[_./:-]|[a-z][A-Z])[^\n]*$",
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
    cutoff = (_dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(days=days)).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")
    ids = [row[0] for row in db.query(SQL_EXPIRED, (env.project, cutoff))]
    return _purge_ids(db, ids)[0] if ids else 0


def _retention_days(env: Env) -> float:
    config = load_config(env)
    section = config.get("output") if isinstance(config.get("output"), dict) else {}
    value = section.get("retention_days", config.get("output_retention_days",
                                                     RETENTION_DAYS_DEFAULT))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise CtxkitError(f"output.retention_days in {CONFIG_NAME} must be a number of days, "
                          f"not {value!r}") from None


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
    """The summary of SPEC section 3, kept under SUMMARY_MAX_BYTES."""
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
        result["ref"] = f"{normalize_file(path, ingest.env)}:{line}"
    symbol = None
    if ingest.write_error is None:
        symbol = (_link_test_id(ingest.db, ingest.env, item["text"]) if item["kind"] == "test"
                  else None) or _link_refs(ingest.db, ingest.env, refs)
    if symbol:
        result["symbol"] = symbol
    return result


_TEST_ID = re.compile(r"(?P<path>[\w./-]+\.\w+)::(?P<name>[\w:.]+)")


def _link_test_id(db: Database | None, env: Env, text: str) -> str | None:
    """The graph node of a pytest id such as tests/test_x.py::TestA::test_b."""
    match = _TEST_ID.search(text)
    if db is None or not match:
        return None
    path = normalize_file(match.group("path"), env)
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
        rel = normalize_file(path, env)
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
    """Shrink texts, then head/tail, then errors until the JSON fits the budget."""
    # Decisive lines matter most: head and tail shrink first.
    for limit, keep_edges, keep_errors in ((200, 5, 10), (160, 3, 10), (120, 2, 10),
                                           (100, 1, 10), (80, 1, 8), (60, 1, 6), (40, 1, 3)):
        summary["head"] = [{"line": e["line"], "text": _clip(e["text"], limit)}
                           for e in summary["head"][:keep_edges]]
        summary["tail"] = [{"line": e["line"], "text": _clip(e["text"], limit)}
                           for e in summary["tail"][-keep_edges:]]
        kept = sorted(summary["errors"], key=lambda e: e["rank"])[:keep_errors]
        summary["errors"] = [{**e, "text": _clip(e["text"], limit)}
                             for e in sorted(kept, key=lambda e: e["line"])]
        shown = [e["line"] for part in ("head", "tail", "errors") for e in summary[part]]
        summary["elided"] = _elided(total, shown)[:12]
        summary["next"] = _next_commands(summary, total)
        if len(json.dumps(summary, ensure_ascii=False).encode()) <= SUMMARY_MAX_BYTES:
            break
    for error in summary["errors"]:
        error.pop("rank")   # the selection order; the summary shows them by line
    return summary


def render_summary(summary: dict[str, Any]) -> str:
    """The human form of a summary."""
    facts = [f"exit {summary['exit_code']}" if summary["exit_code"] is not None else "exit ?",
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


def outputs_since(db: Database, project: str, since_iso: str,
                  failing_only: bool = True) -> list[dict[str, Any]]:
    """Outputs stored since a time, with their decisive lines (for snapshots)."""
    result = []
    for row in db.query(SQL_OUTPUTS_SINCE, (project, since_iso)):
        summary = json.loads(row["summary"] or "{}")
        errors = [{"line": e["line"], "text": e["text"]} for e in summary.get("errors", [])]
        failing = (row["exit_code"] not in (0, None)) or bool(errors)
        if failing_only and not failing:
            continue
        result.append({"handle": row["handle"], "command": row["command"],
                       "label": row["label"], "exit_code": row["exit_code"],
                       "created_at": row["created_at"], "errors": errors})
    return result


# --- run: the subprocess ------------------------------------------------------


def _child_env(scrub: bool, keep: Sequence[str]) -> dict[str, str] | None:
    """None (the caller's environment unchanged) unless --scrub-env."""
    if not scrub:
        return None
    keep_set = set(keep or ())
    return {k: v for k, v in os.environ.items() if k in keep_set or not _SCRUB_NAME.search(k)}


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
        try:
            self.proc = subprocess.Popen(self.argv, stdin=stdin, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=self.env, **group)
        except OSError as exc:
            raise CtxkitError(f"cannot run {self.argv[0]!r}: {exc.strerror or exc}") from None
        previous = {}
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):   # not the main thread
                previous[signum] = signal.signal(signum, self._on_signal)
        try:
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
    ingest = OutputIngest(env, db, label=args.label or argv[0], command=shlex.join(argv),
                          source="run", direct_max=args.direct_max)
    if open_error:
        ingest._fail_writes(open_error)
    runner = CommandRunner(argv, _child_env(args.scrub_env, args.keep_env), args.timeout)
    code = runner.run(ingest)
    status = ("timeout" if runner.timed_out else "interrupted" if runner.signal_received
              else "complete")
    summary = ingest.finish(code, status)
    if db is not None:
        _bump_stats(db, env.project, bytes_returned=_returned_size(summary, ingest))
        db.close()
    return _report_run(env, summary, ingest, code)


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
            _print_direct(direct)
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


def _print_direct(direct: list[tuple[int, str]]) -> None:
    """Print a small output as it was: stdout lines to stdout, stderr lines to stderr."""
    for stream, text in direct:
        target = sys.stdout if stream == STDOUT else sys.stderr
        target.write(text + "\n")
    sys.stdout.flush()
    sys.stderr.flush()


def cmd_store(args: argparse.Namespace, env: Env) -> int:
    if args.file in (None, "-"):
        source, name = sys.stdin.buffer, "stdin"
    else:
        path = Path(args.file)
        if not path.is_file():
            raise NotFound(f"store: no file {args.file!r}")
        source, name = path.open("rb"), args.file
    db = open_db(env)
    ingest = OutputIngest(env, db, label=args.label or ("hook" if name == "stdin" else name),
                          command=args.command or "", source="store",
                          direct_max=DIRECT_MAX_DEFAULT)
    if ingest.write_error:
        raise OutputStoreError(f"cannot store output: {ingest.write_error}")
    with contextlib.closing(source) if name != "stdin" else contextlib.nullcontext():
        while True:
            block = source.read(1 << 20)
            if not block:
                break
            ingest.feed(STDOUT, block)
    summary = ingest.finish(args.exit_code)
    if not summary["stored"]:
        raise OutputStoreError(f"cannot store output: {ingest.write_error}")
    _bump_stats(db, env.project, bytes_returned=len(json.dumps(summary).encode()))
    emit(env, summary, lambda: render_summary(summary))
    return EXIT_OK


# --- search -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SearchPlan:
    """One strategy of a search: its name and the FTS5 query (or vocabulary terms)."""

    strategy: str
    fts: str


def _fts_term(word: str) -> str:
    """A word as a safe FTS5 string (double quotes doubled)."""
    return '"' + word.replace('"', '""') + '"'


def _query_words(query: str) -> list[str]:
    return [w for w in _WORD.findall(query) if w]


def _split_identifier(word: str) -> list[str]:
    parts = []
    for piece in re.split(r"[_\W]+", word):
        parts.extend(p.lower() for p in _IDENT_SPLIT.findall(piece))
    return [p for p in parts if p]


def search_plans(query: str) -> list[SearchPlan]:
    """The strategies of SPEC in order: literal, identifiers (and their proximity),
    synonyms, prefixes, trigram substrings."""
    raw_tokens = query.split()
    literal_terms = [_fts_term(t) for t in raw_tokens if _WORD.search(t)]
    plans = []
    if literal_terms:
        plans.append(SearchPlan("literal", " AND ".join(literal_terms)))
    words = [w.lower() for w in _query_words(query)]
    parts: list[str] = []
    for word in _query_words(query):
        for part in _split_identifier(word) or [word.lower()]:
            if part not in parts and part not in _STOP_WORDS:
                parts.append(part)
    if not parts:
        parts = [w for w in words if w]
    if parts:
        plans.append(SearchPlan("identifiers", " AND ".join(_fts_term(p) for p in parts)))
        if len(parts) > 1:   # adjacent words close together: "pip version", "moved value"
            plans.append(SearchPlan("near", " OR ".join(
                f"NEAR({_fts_term(a)} {_fts_term(b)}, 3)" for a, b in zip(parts, parts[1:]))))
        groups = []
        for part in parts:
            group = _SYNONYM_OF.get(part, (part,))
            groups.append("(" + " OR ".join(_fts_term(w) for w in dict.fromkeys(
                (part, *group))) + ")")
        plans.append(SearchPlan("synonyms", " OR ".join(groups)))
        prefixes = [_fts_term(p[:max(4, len(p) - 2)]) + "*" for p in parts if len(p) >= 4]
        if prefixes:
            plans.append(SearchPlan("prefixes", " OR ".join(prefixes)))
    substrings = [t for t in raw_tokens if len(t) >= 3][:6]
    if substrings:
        plans.append(SearchPlan("trigram", " ".join(substrings)))
    return plans


def _run_fts(db: Database, env: Env, fts: str, output_id: int | None,
             limit: int) -> list[tuple[int, float]]:
    handle_clause = "AND c.output_id = ?" if output_id else ""
    params: list[Any] = [fts, env.project, *([output_id] if output_id else []), limit]
    rows = db.query(SQL_SEARCH_FTS.format(handle=handle_clause), params)
    return [(row[0], row[6]) for row in rows]


def _trigram_terms(db: Database, env: Env, substrings: str, output_id: int | None) -> list[str]:
    """Vocabulary tokens that contain one of the substrings (via the trigram index)."""
    terms: list[str] = []
    handle_clause = "AND o.id = ?" if output_id else ""
    for sub in substrings.split():
        sub = sub.lower()
        if len(sub) < 3:
            continue
        params = [_fts_term(sub), env.project, *([output_id] if output_id else [])]
        for _, vocab in db.query(SQL_VOCAB_MATCH.format(handle=handle_clause), params):
            at = vocab.find(sub)
            while at >= 0 and len(terms) < 40:
                start = vocab.rfind(" ", 0, at) + 1
                end = vocab.find(" ", at)
                token = vocab[start:end if end >= 0 else len(vocab)]
                if token not in terms:
                    terms.append(token)
                at = vocab.find(sub, end) if end >= 0 else -1
    return terms


def _fuse(rankings: list[list[tuple[int, float]]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of several ranked lists of chunk ids."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, (chunk_id, _) in enumerate(ranking):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: -item[1])


def search_outputs(db: Database, env: Env, query: str, *, handle: str | None = None,
                   limit: int = 5, context: int = 2) -> dict[str, Any]:
    """Search this project's outputs; the JSON of SPEC section 3."""
    output_id = _find_output(db, env, handle)["id"] if handle else None
    tried, rankings = [], []
    found: set[int] = set()
    for plan in search_plans(query):
        if len(found) >= limit:
            break
        fts = plan.fts
        if plan.strategy == "trigram":
            terms = _trigram_terms(db, env, plan.fts, output_id)
            fts = " OR ".join(_fts_term(t) for t in terms)
            if not fts:
                tried.append({"strategy": plan.strategy, "query": plan.fts, "hits": 0})
                continue
        ranking = _run_fts(db, env, fts, output_id, max(limit * 4, 20))
        tried.append({"strategy": plan.strategy, "query": fts, "hits": len(ranking)})
        if ranking:
            rankings.append(ranking)
            found.update(chunk_id for chunk_id, _ in ranking)
    decisive = _decisive_ranking(db, env, query, output_id, found)
    if decisive:
        tried.append({"strategy": "decisive", "query": "summary lines", "hits": len(decisive)})
        rankings.append(decisive)
    hits = _build_hits(db, env, query, _fuse(rankings), limit, context)
    return {"query": query, "queries_tried": tried,
            "status": "ok" if hits else "no_hits", "hits": hits}


SQL_CHUNK_AT_LINE = """
SELECT id FROM output_chunks WHERE output_id = ? AND line_start <= ? AND line_end >= ?
ORDER BY id LIMIT 1"""
SQL_CHUNK_OUTPUTS = "SELECT DISTINCT output_id FROM output_chunks WHERE id IN ({ids})"


def _decisive_ranking(db: Database, env: Env, query: str, output_id: int | None,
                      found: set[int]) -> list[tuple[int, float]]:
    """Chunks holding a summary's decisive line that names a query word, best first.

    Decisive lines are where answers usually are; this list joins the fusion
    so they rank above lines that only repeat the query's common words.
    """
    if output_id:
        outputs = [output_id]
    elif found:
        ids = sorted(found)[:200]
        outputs = [r[0] for r in db.query(SQL_CHUNK_OUTPUTS.format(
            ids=",".join("?" * len(ids))), ids)][:10]
    else:
        return []
    stems = [_stem(w.lower()) for w in _query_words(query)
             if w.lower() not in _STOP_WORDS and len(w) > 2]
    scored = []
    for oid in outputs:
        row = db.one("SELECT summary FROM outputs WHERE id = ? AND project = ?",
                     (oid, env.project))
        for error in json.loads(row[0] or "{}").get("errors", []) if row else []:
            low = error["text"].lower()
            score = sum(1 for stem in stems if stem in low)
            if score:
                scored.append((score, oid, error["line"]))
    ranking: list[tuple[int, float]] = []
    for score, oid, line in sorted(scored, key=lambda item: -item[0]):
        chunk = db.one(SQL_CHUNK_AT_LINE, (oid, line, line))
        if chunk and all(chunk[0] != c for c, _ in ranking):
            ranking.append((chunk[0], float(score)))
    return ranking


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ed", "es", "er", "ly", "s")


def _stem(word: str) -> str:
    """A crude English stem for finding a query word inside a line ("rounding" -> "round")."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def _match_words(query: str) -> list[tuple[str, int]]:
    """(stem, weight) pairs for finding the matching lines inside a chunk: the
    query's own words weigh 2, their synonyms 1."""
    weights: dict[str, int] = {}
    for word in _query_words(query):
        for part in [word.lower(), *_split_identifier(word)]:
            if part in _STOP_WORDS or len(part) < 2:
                continue
            weights[_stem(part)] = 2
            for synonym in _SYNONYM_OF.get(part, ()):
                weights.setdefault(_stem(synonym), 1)
    return list(weights.items())


def _build_hits(db: Database, env: Env, query: str, fused: list[tuple[int, float]],
                limit: int, context: int) -> list[dict[str, Any]]:
    stems = _match_words(query)
    hits: list[dict[str, Any]] = []
    for chunk_id, score in fused:
        if len(hits) >= limit:
            break
        row = db.one("SELECT c.output_id, c.line_start, c.line_end, c.title, o.handle "
                     "FROM output_chunks c JOIN outputs o ON o.id = c.output_id "
                     "WHERE c.id = ? AND c.project = ?", (chunk_id, env.project))
        if row is None:
            continue
        hit = _hit_window(db, env, row, stems, context)
        if any(h["handle"] == hit["handle"] and h["line_start"] <= hit["line_end"]
               and hit["line_start"] <= h["line_end"] for h in hits):
            continue
        hits.append({**hit, "score": round(score, 5)})
    return [{"handle": h["handle"], "line_start": h["line_start"], "line_end": h["line_end"],
             "score": h["score"], "text": h["text"],
             **({"title": h["title"]} if h["title"] else {}),
             **({"symbols": h["symbols"]} if h["symbols"] else {})} for h in hits]


def _decisive_lines(db: Database, output_id: int) -> set[int]:
    row = db.one("SELECT summary FROM outputs WHERE id = ?", (output_id,))
    return {e["line"] for e in json.loads(row[0] or "{}").get("errors", [])} if row else set()


def _hit_window(db: Database, env: Env, row: sqlite3.Row, stems: list[tuple[str, int]],
                context: int) -> dict[str, Any]:
    """The matching lines of a chunk plus ``context`` lines on each side.

    Lines are scored by the query stems they contain, each weighed by how rare
    it is among the chunk's lines (a word on every line tells nothing); a line
    the summary found decisive scores more, since answers are usually there.
    """
    import math
    lines = output_lines(db, row["output_id"], row["line_start"], row["line_end"])
    decisive = _decisive_lines(db, row["output_id"])
    lows = [(number, text.lower()) for number, _, text in lines]
    rarity = {stem: weight * math.log((len(lows) + 1) / (0.5 + sum(stem in low for _, low in lows)))
              for stem, weight in stems}
    scored = []
    for number, low in lows:
        score = sum(value for stem, value in rarity.items() if stem in low)
        if score > 0:
            scored.append((score + (1.0 if number in decisive else 0.0), number))
    best = max(s for s, _ in scored) if scored else 0
    matched = sorted(n for s, n in scored if s >= best * 0.9) or [row["line_start"]]
    cluster = [matched[0]]   # the first best line and the best lines right after it
    for number in matched[1:]:
        if number - cluster[-1] > 2 * context + 1 or len(cluster) >= 3:
            break
        cluster.append(number)
    first = max(1, cluster[0] - context)
    last = cluster[-1] + context
    window = output_lines(db, row["output_id"], first, last)
    text = "\n".join(_clip_around(t, [s for s, _ in stems]) for _, _, t in window)
    refs = [r for r in (_first_ref(t) for _, _, t in window) if r]
    symbols = []
    for ref in refs[:10]:
        symbol = _link_refs(db, env, [ref])
        if symbol and symbol not in symbols:
            symbols.append(symbol)
    return {"handle": row["handle"], "line_start": window[0][0] if window else first,
            "line_end": window[-1][0] if window else last, "text": text,
            "title": row["title"], "symbols": symbols}


def _clip_around(text: str, stems: list[str], width: int = 400) -> str:
    """A long line cut to ``width`` characters around its first match."""
    if len(text) <= width:
        return text
    low = text.lower()
    at = min([low.find(s) for s in stems if s in low] or [0])
    start = max(0, at - width // 3)
    return ("…" if start else "") + text[start:start + width] + "…"


def cmd_search(args: argparse.Namespace, env: Env) -> int:
    if args.events:
        return cmd_search_events(args, env)
    if args.limit < 1 or args.context < 0:
        raise UsageError("search: --limit must be at least 1 and --context 0 or more")
    try:
        db = open_db(env)
        result = search_outputs(db, env, args.query, handle=args.handle, limit=args.limit,
                                context=args.context)
    except NotFound:
        raise
    except CtxkitError as exc:
        if env.json:
            emit(env, {"query": args.query, "queries_tried": [], "status": "error",
                       "error": str(exc), "hits": []})
            return EXIT_ERROR
        raise
    returned = len(json.dumps(result["hits"], ensure_ascii=False).encode())
    _bump_stats(db, env.project, searches=1, searches_with_hits=int(bool(result["hits"])),
                searches_without_hits=int(not result["hits"]), bytes_returned=returned)
    emit(env, result, lambda: _render_hits(result))
    return EXIT_OK


def _render_hits(result: dict[str, Any]) -> str:
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


# --- expand, outputs, purge, stats --------------------------------------------


def _parse_range(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*(?:[-:]\s*(\d+)?)?\s*", text)
    if not match:
        raise UsageError(f"expand: --lines wants A-B (e.g. 120-160), not {text!r}")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else (
        first if "-" not in text and ":" not in text else 1 << 62)
    if first < 1 or last < first:
        raise UsageError(f"expand: --lines {text!r} is empty; lines start at 1")
    return first, last


def cmd_expand(args: argparse.Namespace, env: Env) -> int:
    pattern = None
    if args.grep:
        try:
            pattern = re.compile(args.grep)
        except re.error as exc:
            raise UsageError(f"expand: --grep {args.grep!r} is not a valid regex: {exc}") from None
    db = open_db(env, create=False)
    output = _find_output(db, env, args.handle)
    total = output["lines"]
    first, last = _parse_range(args.lines) if args.lines else (1, max(total, 1))
    if args.head is not None:
        last = min(last, first + args.head - 1)
    if args.tail is not None:
        first = max(first, min(last, total) - args.tail + 1)
    lines = _expand_lines(db, output["id"], first, last, pattern)
    returned = sum(len(t) + 1 for _, _, t in lines)
    _bump_stats(db, env.project, expansions=1, bytes_returned=returned)
    data = {"handle": output["handle"], "total_lines": total,
            "lines": [{"line": n, "stream": "stderr" if s == STDERR else "stdout", "text": t}
                      for n, s, t in lines]}
    emit(env, data, lambda: "\n".join(f"{n:>7}  {t}" for n, _, t in lines) or
         f"(no lines; {output['handle']} has {total} lines)")
    return EXIT_OK


def _expand_lines(db: Database, output_id: int, first: int, last: int,
                  pattern: re.Pattern[str] | None) -> list[tuple[int, int, str]]:
    result = []
    rows = db.execute(SQL_CHUNKS_FROM, (output_id, first))
    for number, stream, text in _iter_rows_lines(rows):
        if number > last:
            break
        if number >= first and (pattern is None or pattern.search(text)):
            result.append((number, stream, text))
            if len(result) >= 100000:
                break
    return result


def cmd_outputs(args: argparse.Namespace, env: Env) -> int:
    db = open_db(env)
    rows = db.query(SQL_OUTPUTS_LIST, (env.project, args.limit))
    data = [{k: row[k] for k in row.keys() if k != "id"} for row in rows]
    human = "\n".join(
        f"{r['handle']:>7}  {r['created_at'][:19]}  exit {r['exit_code'] if r['exit_code'] is not None else '?':>3}"
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
    db = open_db(env)
    if args.handle:
        ids = [_find_output(db, env, args.handle)["id"]]
    elif args.older_than:
        cutoff = (_dt.datetime.now(_dt.timezone.utc) - _parse_age(args.older_than)).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ")
        ids = [row[0] for row in db.query(SQL_EXPIRED, (env.project, cutoff))]
    else:
        ids = [row[0] for row in db.query("SELECT id FROM outputs WHERE project = ?",
                                          (env.project,))]
    count, freed = _purge_ids(db, ids)
    with contextlib.suppress(DatabaseError):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the old pages leave the WAL too
    emit(env, {"purged": count, "bytes_freed": freed},
         f"purged {count} output(s), {freed:,} bytes freed (secure_delete on)")
    return EXIT_OK


def output_stats(db: Database, project: str) -> dict[str, Any]:
    counters = {row["key"]: row["value"] for row in db.query(SQL_STATS_ALL, (project,))}
    count, size = db.one(SQL_OUTPUT_TOTALS, (project,))
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
    stats = output_stats(open_db(env), env.project)
    emit(env, stats, lambda: "\n".join(f"{k:<22} {v}" for k, v in stats.items()))
    return EXIT_OK


def register_output_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARG...]")

    store = add_command(sub, common, "store", cmd_store,
                        "store output that already exists (a file or stdin)",
                        "make 2>&1 | ctxkit store - --label make --exit-code $?")
    store.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    store.add_argument("--label", help="a name for this output")
    store.add_argument("--command", help="the command that produced it")
    store.add_argument("--exit-code", type=int, help="the command's exit status")

    search = add_command(sub, common, "search", cmd_search,
                         "search stored outputs (BM25, with query expansion)",
                         "ctxkit search 'AssertionError' --handle o12 --limit 5")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--handle", metavar="H", help="only this output")
    search.add_argument("--limit", type=int, default=5, metavar="K")
    search.add_argument("--context", type=int, default=2, metavar="N",
                        help="lines of context on each side of a hit (default 2)")
    search.add_argument("--events", action="store_true",
                        help="search the session events instead of outputs")

    expand = add_command(sub, common, "expand", cmd_expand,
                         "print stored lines with their numbers",
                         "ctxkit expand o12 --lines 120-160")
    expand.add_argument("handle", metavar="HANDLE")
    expand.add_argument("--lines", metavar="A-B")
    expand.add_argument("--head", type=int, metavar="N")
    expand.add_argument("--tail", type=int, metavar="N")
    expand.add_argument("--grep", metavar="REGEX", help="only lines matching REGEX")

    outputs = add_command(sub, common, "outputs", cmd_outputs, "list the stored outputs",
                          "ctxkit outputs --limit 20")
    outputs.add_argument("--limit", type=int, default=50, metavar="N")

    purge = add_command(sub, common, "purge", cmd_purge,
                        "delete stored outputs (secure_delete on)", "ctxkit purge --older-than 7d")
    which = purge.add_mutually_exclusive_group(required=True)
    which.add_argument("--handle", metavar="H")
    which.add_argument("--older-than", metavar="AGE", help="e.g. 7d, 12h, 30m, 2w")
    which.add_argument("--all", action="store_true", help="every output of this project")


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
