// Go reference for bench_graph_reference.py: every call site, resolved by go/types.
//
// Usage: go run ref_go_types.go ROOT < files (relative paths)
// Run with GO111MODULE=off and GOPATH holding ROOT (at its import path) and its
// dependencies, so the source importer finds them. Prints {"tool", "sites"}
// in the harness's common format (see ref_python_jedi.py): targets are the
// functions and methods inside ROOT that the call runs (an interface method's
// declaration for a call through an interface), [] when go/types resolved the
// call elsewhere (the standard library, a dependency, a builtin, a func
// value), null when it found nothing. Conversions T(x) are not calls.
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

type def struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Name string `json:"name"`
}

type site struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Name    string `json:"name"`
	Caller  *def   `json:"caller"`
	Targets []def  `json:"targets"`
	unknown bool
}

var (
	root string
	fset = token.NewFileSet()
)

func rel(pos token.Pos) (string, bool) {
	p := fset.Position(pos)
	r, err := filepath.Rel(root, p.Filename)
	if err != nil || strings.HasPrefix(r, "..") || p.Filename == "" {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func funcDef(fn *types.Func) (def, bool) {
	if fn == nil {
		return def{}, false
	}
	fn = fn.Origin()
	r, ok := rel(fn.Pos())
	if !ok {
		return def{}, false
	}
	return def{File: r, Line: fset.Position(fn.Pos()).Line, Name: fn.Name()}, true
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func callee(info *types.Info, fun ast.Expr) (name string, targets []def, known bool) {
	fun = unparen(fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	var obj types.Object
	switch f := fun.(type) {
	case *ast.Ident:
		name, obj = f.Name, info.Uses[f]
	case *ast.SelectorExpr:
		name = f.Sel.Name
		if sel, ok := info.Selections[f]; ok {
			obj = sel.Obj()
		} else {
			obj = info.Uses[f.Sel]
		}
	default:
		return "", nil, false
	}
	switch o := obj.(type) {
	case nil:
		return name, nil, false
	case *types.Func:
		if d, ok := funcDef(o); ok {
			return name, []def{d}, true
		}
		return name, []def{}, true
	default:
		return name, []def{}, true // a builtin, or a func-typed variable or field
	}
}

func check(dir string, files []*ast.File, imp types.Importer, out *[]site) {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{},
		Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp, Error: func(error) {}, FakeImportC: true}
	conf.Check(dir, fset, files, info)
	collect(files, info, out)
}

// collect lists the call sites of files with what info says they run; with an empty
// info (a file the build leaves out), every site is unknown.
func collect(files []*ast.File, info *types.Info, out *[]site) {
	for _, file := range files {
		r, _ := rel(file.Pos())
		for _, decl := range file.Decls {
			var caller *def
			if fd, ok := decl.(*ast.FuncDecl); ok {
				caller = &def{File: r, Line: fset.Position(fd.Name.Pos()).Line, Name: fd.Name.Name}
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
					return true // a conversion
				}
				name, targets, known := callee(info, call.Fun)
				if name == "" {
					return true
				}
				pos := call.Fun.Pos()
				if sel, ok := unparen(call.Fun).(*ast.SelectorExpr); ok {
					pos = sel.Sel.Pos()
				}
				*out = append(*out, site{File: r, Line: fset.Position(pos).Line, Name: name,
					Caller: caller, Targets: targets, unknown: !known})
				return true
			})
		}
	}
}

func main() {
	root, _ = filepath.Abs(os.Args[1])
	var rels []string
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		if t := strings.TrimSpace(scanner.Text()); t != "" {
			rels = append(rels, t)
		}
	}
	byDir := map[string][]string{}
	for _, r := range rels {
		byDir[filepath.Dir(r)] = append(byDir[filepath.Dir(r)], r)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	build.Default.CgoEnabled = false
	imp := importer.ForCompiler(fset, "source", nil)
	// The package is the files `go build` compiles on this machine (build
	// constraints, _GOOS/_GOARCH names; cgo on): those are checked. The others
	// (pointer_purego.go beside pointer_unsafe.go) redeclare names, so no checker
	// reads them with the package: their call sites are listed as unknown.
	match := build.Default
	match.CgoEnabled = true
	var sites []site
	for _, d := range dirs {
		// One check per package name in the folder: the package with its own
		// _test.go files, and an external foo_test package apart.
		byPkg := map[string][]*ast.File{}
		var unbuilt []*ast.File
		for _, r := range byDir[d] {
			f, err := parser.ParseFile(fset, filepath.Join(root, r), nil, parser.SkipObjectResolution)
			if err != nil && f == nil {
				continue
			}
			if ok, err := match.MatchFile(filepath.Join(root, d), filepath.Base(r)); err == nil && !ok {
				unbuilt = append(unbuilt, f)
				continue
			}
			byPkg[f.Name.Name] = append(byPkg[f.Name.Name], f)
		}
		collect(unbuilt, &types.Info{Types: map[ast.Expr]types.TypeAndValue{},
			Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}},
			&sites)
		for name, files := range byPkg {
			check(filepath.Join(root, d)+"#"+name, files, imp, &sites)
		}
	}
	for i := range sites {
		if sites[i].unknown {
			sites[i].Targets = nil
		}
	}
	out, _ := json.Marshal(map[string]any{"tool": "go/types " + runtime.Version(), "sites": sites})
	os.Stdout.Write(out)
}
