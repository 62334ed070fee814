#!/usr/bin/env python3
"""Accuracy of `ctxkit callers` on code nobody here wrote: requests 2.32.3 and click 8.1.7.

The expected caller sets below were checked by hand against the real sources:
every call site of the name was listed (``ast``), then each one was read and
kept only when it really calls that definition (imports followed, the type of
the receiver read from the code, ``self`` calls in mixins and subclasses
included when the method runs on the class that defines the target). Calls
through dynamic dispatch to an override are not counted for the base method.

Run:  python tests/bench/bench_graph_accuracy.py  (downloads the two sdists
once into tests/bench/.work/ with pip; nothing else touches the network).
Target: precision >= 0.9 and recall >= 0.8 over all sets (micro-averaged).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CTXKIT = HERE.parent.parent / "ctxkit.py"
PACKAGES = {"requests": "requests==2.32.3", "click": "click==8.1.7"}

R = "requests/"
C = "click/"
EXPECTED: dict[str, dict[str, set[str]]] = {
    "requests": {
        R + "utils.py:to_key_val_list": {
            R + "models.py:RequestEncodingMixin._encode_params",
            R + "models.py:RequestEncodingMixin._encode_files",
            R + "sessions.py:merge_setting"},
        R + "utils.py:get_auth_from_url": {
            R + "adapters.py:HTTPAdapter.proxy_manager_for",
            R + "adapters.py:HTTPAdapter.proxy_headers",
            R + "models.py:PreparedRequest.prepare_auth",
            R + "sessions.py:SessionRedirectMixin.rebuild_proxies"},
        R + "utils.py:requote_uri": {
            R + "models.py:PreparedRequest.prepare_url",
            R + "sessions.py:SessionRedirectMixin.resolve_redirects"},
        R + "utils.py:super_len": {
            R + "models.py:PreparedRequest.prepare_body",
            R + "models.py:PreparedRequest.prepare_content_length"},
        R + "sessions.py:merge_setting": {
            R + "sessions.py:merge_hooks", R + "sessions.py:Session.prepare_request",
            R + "sessions.py:Session.merge_environment_settings"},
        R + "sessions.py:Session.request": {
            R + f"sessions.py:Session.{verb}"
            for verb in ("get", "options", "head", "post", "put", "patch", "delete")
        } | {R + "api.py:request"},
        R + "sessions.py:Session.send": {
            R + "sessions.py:Session.request",
            R + "sessions.py:SessionRedirectMixin.resolve_redirects"},
        R + "sessions.py:SessionRedirectMixin.rebuild_auth": {
            R + "sessions.py:SessionRedirectMixin.resolve_redirects"},
        R + "models.py:PreparedRequest.prepare_url": {R + "models.py:PreparedRequest.prepare"},
        R + "models.py:PreparedRequest.prepare_body": {R + "models.py:PreparedRequest.prepare"},
        R + "api.py:request": {
            R + f"api.py:{verb}"
            for verb in ("get", "options", "head", "post", "put", "patch", "delete")},
        R + "cookies.py:extract_cookies_to_jar": {
            R + "adapters.py:HTTPAdapter.build_response",
            R + "auth.py:HTTPDigestAuth.handle_401",
            R + "sessions.py:SessionRedirectMixin.resolve_redirects",
            R + "sessions.py:Session.send"},
        R + "cookies.py:merge_cookies": {
            R + "sessions.py:SessionRedirectMixin.resolve_redirects",
            R + "sessions.py:Session.prepare_request"},
        R + "adapters.py:HTTPAdapter.cert_verify": {R + "adapters.py:HTTPAdapter.send"},
        R + "_internal_utils.py:to_native_string": {
            R + "auth.py:_basic_auth_str", R + "cookies.py:MockRequest.get_full_url",
            R + "models.py:PreparedRequest.prepare_method",
            R + "models.py:PreparedRequest.prepare_url",
            R + "models.py:PreparedRequest.prepare_headers",
            R + "sessions.py:SessionRedirectMixin.get_redirect_target",
            R + "sessions.py:SessionRedirectMixin.resolve_redirects"},
        R + "utils.py:should_bypass_proxies": {
            R + "utils.py:get_environ_proxies", R + "utils.py:resolve_proxies"},
        R + "hooks.py:dispatch_hook": {R + "sessions.py:Session.send"},
    },
    "click": {
        C + "utils.py:echo": {
            C + "_termui_impl.py:ProgressBar.render_progress", C + "core.py:BaseCommand.main",
            C + "core.py:Command.get_help_option.show_help", C + "core.py:Command.invoke",
            C + "core.py:Command.parse_args", C + "core.py:MultiCommand.parse_args",
            C + "decorators.py:help_option.callback", C + "decorators.py:version_option.callback",
            C + "exceptions.py:ClickException.show", C + "exceptions.py:UsageError.show",
            C + "shell_completion.py:BashComplete._check_version",
            C + "shell_completion.py:shell_complete", C + "termui.py:clear",
            C + "termui.py:confirm", C + "termui.py:pause", C + "termui.py:prompt",
            C + "termui.py:prompt.prompt_func", C + "termui.py:secho"},
        C + "termui.py:style": {C + "core.py:Command.invoke", C + "termui.py:secho"},
        C + "_compat.py:term_len": {
            C + "_termui_impl.py:ProgressBar.render_progress",
            C + "formatting.py:HelpFormatter.write_dl",
            C + "formatting.py:HelpFormatter.write_usage",
            C + "formatting.py:measure_table", C + "formatting.py:wrap_text"},
        C + "parser.py:split_opt": {
            C + "core.py:MultiCommand.resolve_command", C + "core.py:Option._parse_decls",
            C + "core.py:Option.get_help_record", C + "formatting.py:join_options",
            C + "parser.py:Option.__init__", C + "parser.py:normalize_opt"},
        C + "utils.py:make_str": {C + "core.py:MultiCommand.resolve_command"},
        C + "decorators.py:_param_memo": {
            C + "decorators.py:argument.decorator", C + "decorators.py:option.decorator"},
        C + "core.py:iter_params_for_processing": {C + "core.py:Command.parse_args"},
        C + "globals.py:resolve_color_default": {
            C + "termui.py:echo_via_pager", C + "termui.py:progressbar", C + "utils.py:echo"},
        C + "core.py:Command.format_help": {C + "core.py:Command.get_help"},
        C + "formatting.py:HelpFormatter.write_usage": {C + "core.py:Command.format_usage"},
        C + "core.py:Parameter.type_cast_value": {
            C + "core.py:Context.invoke", C + "core.py:Parameter.process_value"},
        C + "core.py:BaseCommand.make_context": {
            C + "core.py:BaseCommand.main", C + "core.py:MultiCommand.invoke",
            C + "shell_completion.py:_resolve_context"},
        C + "core.py:Parameter.get_default": {
            C + "core.py:Context.invoke", C + "core.py:Option.get_default",
            C + "core.py:Parameter.consume_value"},
    },
}


def fetch(name: str) -> Path:
    """The package's source folder, downloaded once with pip."""
    spec = PACKAGES[name]
    version = spec.split("==")[1]
    folder = WORK / f"{name}-{version}"
    if not folder.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", spec, "-d", str(WORK), "-q"], check=True)
        with tarfile.open(WORK / f"{name}-{version}.tar.gz") as archive:
            archive.extractall(WORK)
    return folder / "src" / name


def prepare(name: str) -> Path:
    """A fresh root holding only the package, with its own .git so it is the root."""
    root = WORK / "accuracy" / name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    shutil.copytree(fetch(name), root / name)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def ctxkit(root: Path, *args: str) -> dict:
    proc = subprocess.run([sys.executable, str(CTXKIT), *args, "--json"], cwd=root,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"ctxkit {' '.join(args)} failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def main() -> int:
    tp = fp = fn = 0
    for name, cases in EXPECTED.items():
        root = prepare(name)
        summary = ctxkit(root, "index")
        print(f"{name}: {summary['files']['indexed']} files, {summary['nodes']} nodes, "
              f"{summary['edges']} edges")
        for symbol, expected in cases.items():
            found = {r["id"] for r in ctxkit(root, "callers", symbol)["results"]}
            hits, extra, missed = found & expected, found - expected, expected - found
            tp, fp, fn = tp + len(hits), fp + len(extra), fn + len(missed)
            mark = "ok " if not extra and not missed else "   "
            print(f"  {mark}{symbol}: {len(hits)}/{len(expected)}"
                  + (f"  false: {sorted(extra)}" if extra else "")
                  + (f"  missed: {sorted(missed)}" if missed else ""))
    sets = sum(len(c) for c in EXPECTED.values())
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"\n{sets} caller sets, {tp + fn} expected edges: precision {precision:.3f}, "
          f"recall {recall:.3f} (targets 0.9 / 0.8)")
    return 0 if precision >= 0.9 and recall >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
