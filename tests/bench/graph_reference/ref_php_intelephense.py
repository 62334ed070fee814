#!/usr/bin/env python3
"""PHP reference for bench_graph_reference.py: every call site, resolved by intelephense.

Usage: ref_php_intelephense.py ROOT INTELEPHENSE_JS < files (one relative path a line)

The call sites come from PHP's own tokenizer (`PhpToken::tokenize`, Debian's
php-cli): a name followed by `(`, as a function call `f(`, a method call
`$x->m(` or `$x?->m(`, a static call `A::m(`, or a construction `new A(`.
A definition's own name (`function f(`) is none. ``caller`` is the innermost
named function, method or class around the site (a closure's calls are its
enclosing function's); null at file level.

Each site is resolved by intelephense, the PHP language server on npm, over
LSP (`textDocument/definition` at the callee's name), after it has indexed
ROOT: a definition inside ROOT is the target; one in its stubs of PHP's
standard library, or outside ROOT, is "resolved outside the project" ([]);
no definition at all is nobody's answer (null). A construction's targets are
the class and the `__construct` that runs (its own or a base's), as
intelephense gives both. `textDocument/documentSymbol` gives the line of each
target's name (a definition's range starts at its doc comment). Prints
{"tool", "sites"} in the harness's common format (see ref_python_jedi.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SITES = r"""<?php
$root = $argv[1];
$out = [];
foreach (array_filter(explode("\n", stream_get_contents(STDIN))) as $rel) {
    $src = file_get_contents($root . '/' . $rel);
    $tokens = PhpToken::tokenize($src);
    $sig = [];
    foreach ($tokens as $t) {
        if (!$t->isIgnorable()) { $sig[] = $t; }
    }
    $n = count($sig);
    $depth = 0; $stack = []; $pending = null;
    for ($i = 0; $i < $n; $i++) {
        $t = $sig[$i];
        $prev = $i > 0 ? $sig[$i - 1] : null;
        if ($t->is([T_CLASS, T_INTERFACE, T_TRAIT, T_ENUM, T_FUNCTION])) {
            if ($prev && $prev->is(T_DOUBLE_COLON)) { continue; }  // Foo::class
            $j = $i + 1;
            if ($j < $n && $sig[$j]->text === '&') { $j++; }
            $pending = ($j < $n && $sig[$j]->is(T_STRING)) ?
                [$sig[$j]->text, $sig[$j]->line] : null;   // a closure: no name
            continue;
        }
        if ($t->text === '{' || $t->is([T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES])) {
            $depth++;
            if ($pending) { $stack[] = [$pending[0], $pending[1], $depth]; $pending = null; }
            continue;
        }
        if ($t->text === ';') { $pending = null; continue; }  // abstract, interface
        if ($t->text === '}') {
            if ($stack && end($stack)[2] === $depth) { array_pop($stack); }
            $depth--;
            continue;
        }
        $named = $t->is([T_STRING, T_NAME_QUALIFIED, T_NAME_FULLY_QUALIFIED,
                         T_NAME_RELATIVE]);
        if (!$named || $i + 1 >= $n || $sig[$i + 1]->text !== '(') { continue; }
        if ($prev && ($prev->is([T_FUNCTION, T_CONST]) || $prev->text === '&' && $i > 1
                && $sig[$i - 2]->is(T_FUNCTION))) { continue; }
        $kind = 'call';
        if ($prev && $prev->is([T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR])) {
            $kind = 'method';
        } elseif ($prev && $prev->is(T_DOUBLE_COLON)) {
            $kind = 'static';
        } elseif ($prev && $prev->is(T_NEW)) {
            $kind = 'new';
        }
        $cut = strrpos($t->text, '\\');
        $name = $cut === false ? $t->text : substr($t->text, $cut + 1);
        $pos = $t->pos + ($cut === false ? 0 : $cut + 1);
        $line_start = strrpos(substr($src, 0, $pos), "\n");
        $col = $pos - ($line_start === false ? 0 : $line_start + 1);
        $caller = $stack ? end($stack) : null;
        $out[] = [$rel, $t->line, $col, $name, $kind, $caller ? $caller[0] : null,
                  $caller ? $caller[1] : null];
    }
}
echo json_encode($out);
"""


class Server:
    """A minimal LSP client of one intelephense process over stdio."""

    def __init__(self, script: str, root: Path, storage: str) -> None:
        self.proc = subprocess.Popen(["node", script, "--stdio"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.uri = root.resolve().as_uri()
        self.opened: set[str] = set()
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": self.uri,
            "capabilities": {"textDocument": {"documentSymbol": {
                "hierarchicalDocumentSymbolSupport": True}}},
            "initializationOptions": {"storagePath": storage, "clearCache": True}})
        self.notify("initialized", {})
        self.wait_for("indexingEnded")

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("intelephense stopped")
            if not line.strip():
                break
            key, _, value = line.decode().partition(":")
            if key.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait_for(None, self.next_id)

    def wait_for(self, method: str | None, id_: int | None = None):
        while True:
            message = self.receive()
            if "method" in message and "id" in message:  # a request of the server's
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif id_ is not None and message.get("id") == id_:
                return message.get("result")
            elif method is not None and message.get("method") == method:
                return message.get("params")

    def open(self, root: Path, rel: str) -> str:
        uri = f"{self.uri}/{rel}"
        if rel not in self.opened:
            self.opened.add(rel)
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            self.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "php", "version": 1, "text": text}})
        return uri

    def close(self) -> None:
        self.proc.kill()


def utf16_column(line: bytes, byte_col: int) -> int:
    return len(line[:byte_col].decode("utf-8", "replace").encode("utf-16-le")) // 2


def symbols_of(server: Server, root: Path, rel: str, cache: dict) -> list[dict]:
    if rel not in cache:
        cache[rel] = server.request("textDocument/documentSymbol", {
            "textDocument": {"uri": server.open(root, rel)}}) or []
    return cache[rel]


def symbol_at(symbols: list[dict], start: dict) -> dict | None:
    """The symbol whose range starts at ``start`` (a definition's location), else the
    innermost one holding it; a parameter or a variable is none."""
    here = (start["line"], start["character"])
    for symbol in symbols:
        span = symbol.get("range", {})
        if not span or symbol.get("name", "").startswith("$") or not (
                (span["start"]["line"], span["start"]["character"]) <= here
                <= (span["end"]["line"], span["end"]["character"])):
            continue
        if (span["start"]["line"], span["start"]["character"]) == here:
            return symbol
        return symbol_at(symbol.get("children", ()), start) or symbol
    return None


def name_line(symbol: dict) -> int:
    """The 1-based line of a symbol's name (its range starts at its doc comment)."""
    return symbol.get("selectionRange", symbol["range"])["start"]["line"] + 1


def main() -> None:
    root, script = Path(sys.argv[1]), sys.argv[2]
    files = sys.stdin.read()
    with tempfile.NamedTemporaryFile("w", suffix=".php", delete=False) as tool:
        tool.write(SITES)
    try:
        raw = subprocess.run(["php", tool.name, str(root)], input=files, capture_output=True,
                             text=True, check=True).stdout
    finally:
        os.unlink(tool.name)
    found = json.loads(raw)
    lines: dict[str, list[bytes]] = {}
    symbols: dict[str, list] = {}
    base = root.resolve().as_uri() + "/"
    with tempfile.TemporaryDirectory() as storage:
        server = Server(script, root, storage)
        sites = []
        for rel, line, col, name, kind, caller, caller_line in found:
            if rel not in lines:
                lines[rel] = (root / rel).read_bytes().split(b"\n")
            text = lines[rel][line - 1] if line - 1 < len(lines[rel]) else b""
            result = server.request("textDocument/definition", {
                "textDocument": {"uri": server.open(root, rel)},
                "position": {"line": line - 1, "character": utf16_column(text, col)}})
            locations = result if isinstance(result, list) else [result] if result else []
            targets: list[dict] | None = [] if locations else None
            for location in locations:
                uri = location.get("uri") or location.get("targetUri", "")
                where = location.get("range") or location.get("targetRange")
                if not uri.startswith(base) or where is None:
                    continue  # PHP's stubs, a vendor folder outside ROOT
                target_rel = uri[len(base):]
                start = where["start"]["line"]
                symbol = symbol_at(symbols_of(server, root, target_rel, symbols), where["start"])
                called = symbol.get("name") if symbol else name
                if called != name and not (kind == "new" and called == "__construct"):
                    called, symbol = name, None  # not a symbol of its own: as given
                target = {"file": target_rel, "name": called,
                          "line": name_line(symbol) if symbol else start + 1}
                if target not in targets:
                    targets.append(target)
            sites.append({"file": rel, "line": line, "name": name,
                          "caller": {"file": rel, "line": caller_line, "name": caller}
                          if caller else None, "targets": targets})
        server.close()
    print(json.dumps({"tool": "intelephense", "sites": sites}))


if __name__ == "__main__":
    main()
