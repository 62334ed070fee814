#!/usr/bin/env node
// TypeScript reference for bench_graph_reference.py: every call site, resolved
// by the TypeScript compiler's type checker.
//
// Usage: node ref_typescript.js TYPESCRIPT_MODULE_DIR ROOT < files (relative paths)
// Prints {"tool", "sites": [...]} in the harness's common format (see
// ref_python_jedi.py): targets are the named definitions inside ROOT that the
// call runs, [] when the checker resolved it elsewhere (lib, a dependency, a
// parameter's function type, an anonymous function), null when it found nothing.
//
// What counts as a call: f(), o.m(), new C() (the class and the constructor
// that runs, inherited or not), super(...) (the base's constructor), and a JSX
// element whose tag is a component (<Comp/>).
"use strict";
const path = require("path");
const fs = require("fs");
const ts = require(process.argv[2]);
const root = path.resolve(process.argv[3]);
const files = fs.readFileSync(0, "utf8").split(/\s+/).filter(Boolean);

const program = ts.createProgram(files.map((f) => path.join(root, f)), {
  target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler, jsx: ts.JsxEmit.Preserve,
  allowJs: true, checkJs: false, noEmit: true, skipLibCheck: true, strict: true,
  experimentalDecorators: true, esModuleInterop: true, resolveJsonModule: true,
  allowImportingTsExtensions: true, lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
});
const checker = program.getTypeChecker();

function inside(sf) {
  const rel = path.relative(root, sf.fileName);
  return rel.startsWith("..") || path.isAbsolute(rel) || rel.includes("node_modules")
    ? null : rel.split(path.sep).join("/");
}

function lineOf(node) {
  const sf = node.getSourceFile();
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

// The named definition a function-like or class declaration is, or null.
function named(decl) {
  if (!decl) return null;
  const k = ts.SyntaxKind;
  if (decl.kind === k.Constructor) {
    const start = decl.getChildren().find((c) => c.kind === k.ConstructorKeyword) || decl;
    return { node: start, name: "constructor" };
  }
  if ([k.FunctionDeclaration, k.MethodDeclaration, k.MethodSignature, k.ClassDeclaration,
    k.ClassExpression, k.InterfaceDeclaration, k.GetAccessor, k.SetAccessor]
    .includes(decl.kind) && decl.name) {
    return { node: decl.name, name: decl.name.getText() };
  }
  if ([k.ArrowFunction, k.FunctionExpression, k.ClassExpression].includes(decl.kind)) {
    let parent = decl.parent;
    while (parent && [k.ParenthesizedExpression, k.AsExpression, k.SatisfiesExpression]
      .includes(parent.kind)) parent = parent.parent;
    if (parent && [k.VariableDeclaration, k.PropertyDeclaration, k.PropertyAssignment]
      .includes(parent.kind) && parent.name &&
      (ts.isIdentifier(parent.name) || ts.isPrivateIdentifier(parent.name))) {
      return { node: parent.name, name: parent.name.text };
    }
    if (parent && parent.kind === k.BinaryExpression && parent.right === decl &&
      ts.isPropertyAccessExpression(parent.left)) {
      return { node: parent.left.name, name: parent.left.name.text };
    }
    if (decl.name) return { node: decl.name, name: decl.name.getText() };
  }
  if ([k.VariableDeclaration, k.PropertyDeclaration].includes(decl.kind) && decl.initializer &&
    [k.ArrowFunction, k.FunctionExpression].includes(decl.initializer.kind) &&
    (ts.isIdentifier(decl.name) || ts.isPrivateIdentifier(decl.name))) {
    return { node: decl.name, name: decl.name.text };
  }
  return null;
}

function def(decl) {
  const n = named(decl);
  if (!n) return undefined;             // resolved, but to nothing with a name
  const rel = inside(n.node.getSourceFile());
  if (!rel) return undefined;
  return { file: rel, line: lineOf(n.node), name: n.name };
}

// An overload signature stands for the implementation that carries the body.
function implementation(decl) {
  if (!decl || decl.body || !decl.symbol || !decl.symbol.declarations) return decl;
  return decl.symbol.declarations.find((d) => d.body && d.kind === decl.kind) || decl;
}

function aliased(symbol) {
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function classOf(expr) {
  const symbol = aliased(checker.getSymbolAtLocation(expr));
  if (!symbol || !symbol.declarations) return null;
  return symbol.declarations.find((d) => ts.isClassLike(d)) || null;
}

function calleeName(expr) {
  while (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr) ||
    ts.isAsExpression(expr)) expr = expr.expression;
  if (ts.isIdentifier(expr) || ts.isPrivateIdentifier(expr)) return expr.text;
  if (ts.isPropertyAccessExpression(expr)) return expr.name.text;
  if (expr.kind === ts.SyntaxKind.SuperKeyword) return "super";
  return null;
}

function resolve(node) {
  const targets = [];
  let signature;
  try { signature = checker.getResolvedSignature(node); } catch (e) { return null; }
  let decl = signature && signature.declaration;
  if (decl && decl.kind === ts.SyntaxKind.JSDocSignature) decl = undefined;
  decl = implementation(decl);
  const callee = ts.isJsxSelfClosingElement(node) || ts.isJsxOpeningElement(node)
    ? node.tagName : node.expression;
  if (ts.isNewExpression(node) || callee.kind === ts.SyntaxKind.SuperKeyword) {
    const cls = ts.isNewExpression(node) ? classOf(callee) : null;
    if (cls) { const d = def(cls); if (d) targets.push(d); }
    if (decl && decl.kind === ts.SyntaxKind.Constructor) {
      const d = def(decl); if (d) targets.push(d);
    }
    if (!cls && !decl && ts.isNewExpression(node)) return null;
    return targets;
  }
  const d = def(decl);
  if (d) return [d];
  // The signature came from a type (`const f: () => T = () => ...`, an
  // interface), or there is none: the called symbol's own declarations say.
  if (!decl) {
    const type = checker.getTypeAtLocation(callee);
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return null;
  }
  const symbol = aliased(checker.getSymbolAtLocation(
    ts.isPropertyAccessExpression(callee) ? callee.name : callee));
  if (!symbol) return decl ? [] : null;
  for (const declaration of symbol.declarations || []) {
    const found = def(declaration);
    if (found) targets.push(found);
  }
  return targets;
}

// The innermost named function or class whose body holds the call. A
// decorator runs where its declaration stands, so that one is passed over.
function enclosing(node) {
  const k = ts.SyntaxKind;
  let decorated = false;
  for (let p = node.parent; p; p = p.parent) {
    if (p.kind === k.Decorator) decorated = true;
    if ([k.FunctionDeclaration, k.MethodDeclaration, k.Constructor, k.GetAccessor,
      k.SetAccessor, k.ClassDeclaration, k.ArrowFunction, k.FunctionExpression,
      k.ClassExpression].includes(p.kind)) {
      if (decorated) { decorated = false; continue; }
      const d = def(p);
      if (d) return d;
    }
  }
  return null;
}

const sites = [];
for (const rel of files) {
  const sf = program.getSourceFile(path.join(root, rel));
  if (!sf) continue;
  const visit = (node) => {
    let callee = null;
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) callee = node.expression;
    else if ((ts.isJsxSelfClosingElement(node) || ts.isJsxOpeningElement(node)) &&
      ts.isIdentifier(node.tagName) && /^[A-Z]/.test(node.tagName.text)) callee = node.tagName;
    const name = callee && calleeName(callee);
    if (name && !(ts.isCallExpression(node) && callee.kind === ts.SyntaxKind.ImportKeyword)) {
      const site = callee.kind === ts.SyntaxKind.SuperKeyword ? callee
        : ts.isPropertyAccessExpression(callee) ? callee.name : callee;
      sites.push({ file: rel, line: lineOf(site), name, caller: enclosing(node),
        targets: resolve(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
process.stdout.write(JSON.stringify({ tool: `typescript ${ts.version}`, sites }));
