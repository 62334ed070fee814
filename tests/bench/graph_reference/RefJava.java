// Java reference for bench_graph_reference.py: every call site, resolved by javac.
//
// Usage: java RefJava.java ROOT < files (relative paths of the .java files)
// Needs a JDK (17 here): the compiler's own tree API (com.sun.source), which
// parses and attributes the files as one compilation, the way javac type-checks
// them, without writing classes. Libraries the files import but that are not on
// the class path stay unresolved: a call javac cannot resolve is nobody's answer
// (targets null); a call it resolves outside the files (the JDK) has targets [].
//
// Conventions, as ctxkit reads Java: the caller of a call in a field initializer
// or an initializer block is the class; a lambda's calls belong to the method
// around it; a method of an anonymous class is a definition of its own.
// `new Foo(...)` calls the class and the constructor javac picks (only the class
// when Foo declares none); `super(...)` and `this(...)` call that constructor.
// Method references (`Foo::bar`) are not calls. An enum constant's arguments
// are not a `new`. Prints {"tool", "sites"} in the harness's common format
// (see ref_python_jedi.py).

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.ParameterizedTypeTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TypeParameterTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class RefJava {
    // A definition's place: {"file", "line" of its name, "name"}, as JSON.
    static final Map<Element, String> DEFS = new HashMap<>();
    static final List<Object[]> SITES = new ArrayList<>();  // file, line, name, caller, targets
    static Trees trees;
    static Path root;

    public static void main(String[] args) throws Exception {
        root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<Path> paths = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.trim().endsWith(".java")) {
                paths.add(root.resolve(line.trim()));
            }
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null,
                StandardCharsets.UTF_8);
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics,
                List.of("-proc:none", "-implicit:none", "-Xlint:none", "-encoding", "UTF-8"),
                null, files.getJavaFileObjectsFromPaths(paths));
        List<CompilationUnitTree> units = new ArrayList<>();
        task.parse().forEach(units::add);
        task.analyze();  // attribution; errors (a missing library) are collected, not fatal
        trees = Trees.instance(task);
        for (CompilationUnitTree unit : units) {
            new Definitions(unit).scan(unit, null);
        }
        for (CompilationUnitTree unit : units) {
            new Calls(unit).scan(unit, null);
        }
        StringBuilder out = new StringBuilder();
        out.append("{\"tool\": \"javac ").append(System.getProperty("java.version"))
           .append(" (com.sun.source)\", \"sites\": [");
        for (int i = 0; i < SITES.size(); i++) {
            Object[] site = SITES.get(i);
            out.append(i == 0 ? "\n" : ",\n").append("{\"file\": ").append(quote((String) site[0]))
               .append(", \"line\": ").append(site[1]).append(", \"name\": ")
               .append(quote((String) site[2])).append(", \"caller\": ").append(site[3])
               .append(", \"targets\": ").append(site[4]).append("}");
        }
        System.out.println(out.append("]}"));
    }

    static String quote(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    static String where(String file, long line, String name) {
        return "{\"file\": " + quote(file) + ", \"line\": " + line + ", \"name\": " + quote(name)
               + "}";
    }

    // What the scanners of one compilation unit share: its file, text and lines.
    abstract static class UnitScanner extends TreePathScanner<Void, Void> {
        final CompilationUnitTree unit;
        final String file;
        final CharSequence text;
        final LineMap lines;
        final SourcePositions positions;

        UnitScanner(CompilationUnitTree unit) throws Exception {
            this.unit = unit;
            this.file = root.relativize(Paths.get(unit.getSourceFile().toUri())).toString()
                    .replace('\\', '/');
            this.text = unit.getSourceFile().getCharContent(true);
            this.lines = unit.getLineMap();
            this.positions = trees.getSourcePositions();
        }

        long start(Tree tree) {
            return tree == null ? -1 : positions.getStartPosition(unit, tree);
        }

        long end(Tree tree) {
            return tree == null ? -1 : positions.getEndPosition(unit, tree);
        }

        // The line of the first `name` as a whole word at or after `from`.
        long nameLine(String name, long from) {
            Matcher m = Pattern.compile("(?<![\\w$])" + Pattern.quote(name) + "(?![\\w$])")
                    .matcher(text);
            long at = m.find((int) Math.max(from, 0)) ? m.start() : from;
            return lines.getLineNumber(at);
        }

        String simpleName(Element element) {
            return element.getKind() == ElementKind.CONSTRUCTOR
                   ? element.getEnclosingElement().getSimpleName().toString()
                   : element.getSimpleName().toString();
        }
    }

    // Every class and method (constructors named as their class) of the files.
    static class Definitions extends UnitScanner {
        Definitions(CompilationUnitTree unit) throws Exception {
            super(unit);
        }

        @Override
        public Void visitClass(ClassTree tree, Void unused) {
            Element element = trees.getElement(getCurrentPath());
            String name = tree.getSimpleName().toString();
            if (element != null && !name.isEmpty()) {
                long from = Math.max(start(tree), end(tree.getModifiers()));
                DEFS.put(element, where(file, nameLine(name, from), name));
            }
            return super.visitClass(tree, unused);
        }

        @Override
        public Void visitMethod(MethodTree tree, Void unused) {
            Element element = trees.getElement(getCurrentPath());
            if (element != null && start(tree) >= 0 && end(tree) > start(tree)) {
                String name = simpleName(element);
                long from = Math.max(start(tree), end(tree.getModifiers()));
                for (TypeParameterTree parameter : tree.getTypeParameters()) {
                    from = Math.max(from, end(parameter));
                }
                from = Math.max(from, end(tree.getReturnType()));
                DEFS.put(element, where(file, nameLine(name, from), name));
            }
            return super.visitMethod(tree, unused);
        }
    }

    // Every call site, with the definition around it and what javac says it runs.
    static class Calls extends UnitScanner {
        final List<String> callers = new ArrayList<>();

        Calls(CompilationUnitTree unit) throws Exception {
            super(unit);
        }

        String caller() {
            return callers.isEmpty() ? "null" : callers.get(callers.size() - 1);
        }

        // Scans the definition at the current path with it as the caller of the calls
        // inside (an anonymous class is no definition: its methods are).
        Void asCaller(Supplier<Void> scan) {
            String found = DEFS.get(trees.getElement(getCurrentPath()));
            if (found != null) {
                callers.add(found);
            }
            scan.get();
            if (found != null) {
                callers.remove(callers.size() - 1);
            }
            return null;
        }

        @Override
        public Void visitClass(ClassTree tree, Void unused) {
            return asCaller(() -> super.visitClass(tree, unused));
        }

        @Override
        public Void visitMethod(MethodTree tree, Void unused) {
            return asCaller(() -> super.visitMethod(tree, unused));
        }

        @Override
        public Void visitMethodInvocation(MethodInvocationTree tree, Void unused) {
            Element element = trees.getElement(getCurrentPath());
            String selected = tree.getMethodSelect().toString();
            String name = selected.substring(selected.lastIndexOf('.') + 1);
            long at = end(tree.getMethodSelect()) - name.length();
            if (at < 0 || at + name.length() > text.length()
                    || !text.subSequence((int) at, (int) at + name.length()).toString()
                            .equals(name)) {
                return super.visitMethodInvocation(tree, unused);  // javac's implicit super()
            }
            long line = lines.getLineNumber(at);
            String targets = null;
            if (element instanceof ExecutableElement) {
                String found = DEFS.get(element);
                targets = found == null ? "[]" : "[" + found + "]";
            }
            SITES.add(new Object[] {file, line, name, caller(), targets});
            return super.visitMethodInvocation(tree, unused);
        }

        @Override
        public Void visitNewClass(NewClassTree tree, Void unused) {
            long at = start(tree);
            if (at < 0 || !text.subSequence((int) at, (int) Math.min(at + 3, text.length()))
                    .toString().equals("new")) {
                return super.visitNewClass(tree, unused);  // an enum constant's arguments
            }
            Tree type = tree.getIdentifier();
            if (type instanceof ParameterizedTypeTree) {
                type = ((ParameterizedTypeTree) type).getType();
            }
            String written = type.toString();
            String name = written.substring(written.lastIndexOf('.') + 1);
            long line = lines.getLineNumber(Math.max(end(type) - name.length(), at));
            Element cls = trees.getElement(new TreePath(getCurrentPath(), type));
            Element constructor = trees.getElement(getCurrentPath());
            String targets = null;
            if (cls != null && cls.getKind() != ElementKind.OTHER) {
                List<String> found = new ArrayList<>();
                if (DEFS.containsKey(cls)) {
                    found.add(DEFS.get(cls));
                    if (tree.getClassBody() == null && DEFS.containsKey(constructor)) {
                        found.add(DEFS.get(constructor));
                    }
                }
                targets = "[" + String.join(", ", found) + "]";
            }
            SITES.add(new Object[] {file, line, name, caller(), targets});
            return super.visitNewClass(tree, unused);
        }
    }
}
