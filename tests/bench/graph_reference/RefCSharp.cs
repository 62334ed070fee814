// C# reference for bench_graph_reference.py: every call site, as the C# compiler bound it.
//
// Usage: mono RefCSharp.exe ROOT < files (relative paths of the .cs files)
// Needs Debian's mono-mcs and libmono-cecil-cil-dev (the harness compiles this file
// with mcs against /usr/lib/mono-cecil). No Roslyn is packaged here, so the checker
// is the Mono C# compiler itself: the files are compiled as one library with debug
// symbols, and each call instruction of the result (call, callvirt, newobj) is a call
// site the compiler bound, found in the source by its sequence point. A target in the
// library is a definition of the project; one in another assembly (the framework) is
// outside (targets []); one whose assembly cannot be loaded is unknown (null). When
// the files do not compile, every site is unknown and the errors are reported.
//
// Conventions, as ctxkit reads C# (and as the Java reference does):
// - A call the source does not spell is no site: the calls the compiler adds
//   (foreach's GetEnumerator, using's Dispose, string concatenation, a delegate's
//   Invoke, the implicit base constructor) are dropped by requiring the called name
//   (the class's, for a construction) written inside the site's sequence point.
// - Properties, indexers, events and operators are read, not called: their accessors
//   are no sites, and a call inside one belongs to the class around it.
// - `new Foo(...)` calls the class and the constructor the compiler picked; `base(...)`
//   and `this(...)` in a constructor call that constructor (sites named base, this).
// - A lambda's or an iterator's calls belong to the method it is written in; a field
//   initializer's to the class.
// - A virtual call names, as javac does, the member found in the receiver's static
//   type: the compiler emits the original virtual declaration, so the receiver's type
//   is read off the instruction that pushed it and the override nearest to it taken.
// Prints {"tool", "sites", "errors"} in the harness's common format (see
// ref_python_jedi.py).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.RegularExpressions;
using Mono.Cecil;
using Mono.Cecil.Cil;

public static class RefCSharp
{
    const int Hidden = 0xfeefee;
    const string Profile = "/usr/lib/mono/4.6.1-api";
    static string root;
    static readonly Dictionary<string, string[]> Lines = new Dictionary<string, string[]>();
    static readonly List<string> Sites = new List<string>();

    public static int Main(string[] args)
    {
        root = Path.GetFullPath(args[0]);
        var files = Console.In.ReadToEnd().Split('\n').Select(f => f.Trim())
            .Where(f => f.Length > 0).ToList();
        foreach (var file in files)
            Lines[file] = File.ReadAllLines(Path.Combine(root, file));
        var work = Path.Combine(Path.GetTempPath(), "refcsharp-" + Process.GetCurrentProcess().Id);
        Directory.CreateDirectory(work);
        var dll = Path.Combine(work, "project.dll");
        int errors = Compile(files, dll);
        if (errors == 0)
        {
            var parameters = new ReaderParameters {
                ReadSymbols = true, SymbolReaderProvider = new Mono.Cecil.Mdb.MdbReaderProvider() };
            var module = ModuleDefinition.ReadModule(dll, parameters);
            foreach (var type in module.GetTypes())
                foreach (var method in type.Methods)
                    if (method.HasBody)
                        Scan(module, method);
        }
        Directory.Delete(work, true);
        var output = new StringBuilder();
        output.Append("{\"tool\": \"mcs (Mono C# compiler 6.8) and Mono.Cecil\", \"errors\": ")
            .Append("{\"units\": 1, \"units with errors\": ").Append(errors > 0 ? 1 : 0)
            .Append(", \"errors\": ").Append(errors).Append("}, \"sites\": [")
            .Append(string.Join(",\n", Sites)).Append("]}");
        Console.WriteLine(output.ToString());
        return 0;
    }

    static int Compile(List<string> files, string dll)
    {
        var list = Path.ChangeExtension(dll, ".rsp");
        var references = new[] { "System", "System.Core", "System.Xml", "System.Xml.Linq",
                                 "System.Data", "System.Runtime.Serialization", "Microsoft.CSharp",
                                 "System.ComponentModel.DataAnnotations" };
        // the .NET 4.6.1 reference profile: the framework's later types (System.Range,
        // System.HashCode) would clash with the project's own of those names
        File.WriteAllLines(list, new[] { "-target:library", "-debug", "-unsafe", "-nowarn:1591",
                                         "-nostdlib", "-lib:" + Profile, "-r:mscorlib.dll",
                                         "-out:" + dll }
            .Concat(references.Select(r => "-r:" + r + ".dll"))
            .Concat(files.Select(f => "\"" + f + "\"")));
        var start = new ProcessStartInfo("mcs", "@" + list) {
            WorkingDirectory = root, UseShellExecute = false, RedirectStandardOutput = true,
            RedirectStandardError = true };
        using (var mcs = Process.Start(start))
        {
            var said = mcs.StandardOutput.ReadToEnd() + mcs.StandardError.ReadToEnd();
            mcs.WaitForExit();
            int count = Regex.Matches(said, @": error CS\d+").Count;
            return mcs.ExitCode != 0 ? Math.Max(count, 1) : 0;
        }
    }

    // -- sites ---------------------------------------------------------------

    static void Scan(ModuleDefinition module, MethodDefinition method)
    {
        var code = method.Body.Instructions;
        var starts = code.Where(i => i.SequencePoint != null && i.SequencePoint.StartLine != Hidden)
            .Select(i => i.SequencePoint.StartLine).Distinct().OrderBy(l => l).ToList();
        SequencePoint point = null;
        for (int i = 0; i < code.Count; i++)
        {
            var ins = code[i];
            if (ins.SequencePoint != null && ins.SequencePoint.StartLine != Hidden)
                point = ins.SequencePoint;
            var op = ins.OpCode.Code;
            if (point == null || (op != Code.Call && op != Code.Callvirt && op != Code.Newobj))
                continue;
            var called = (MethodReference) ins.Operand;
            MethodDefinition target = null;
            bool known = true;
            try { target = called.Resolve(); } catch (AssemblyResolutionException) { known = false; }
            if (target == null)
                known = false;
            if (target != null && target.IsSpecialName && !target.IsConstructor)
                continue;  // a property, indexer, event or operator: read, not called
            string file = Relative(point.Document.Url);
            if (file == null)
                continue;
            int next = starts.FirstOrDefault(l => l > point.StartLine);
            int last = Math.Min(next > 0 ? next - 1 : point.StartLine + 40, point.StartLine + 40);
            string name = called.Name == ".ctor" ? SourceName(called.DeclaringType)
                : called.Name.Substring(called.Name.LastIndexOf('.') + 1);
            if (called.Name == ".ctor" && op != Code.Newobj)
            {
                var text = Written(file, point.StartLine, last);
                if (Word(text, "base")) name = "base";
                else if (Word(text, "this")) name = "this";
                else if (!Word(text, name)) continue;  // the implicit base constructor
            }
            else if (!Word(Written(file, point.StartLine, last), name))
            {
                // mcs's symbols give a type's field initializers, and the lambdas it lifts
                // into a nested class, the file of the type's first part: where the type
                // has several (partial), the one that writes the name there.
                var others = TypeFiles(Outermost(method.DeclaringType))
                    .Where(f => f != file && Word(Written(f, point.StartLine, point.StartLine), name))
                    .ToList();
                if (others.Count != 1)
                    continue;  // a call the compiler added
                file = others[0];
            }
            string targets = "null";
            if (known)
            {
                var found = new List<string>();
                if (target.Module.Assembly.Name.Name == module.Assembly.Name.Name)
                {
                    // a generic method's instance may resolve through a second load of
                    // the library, without its symbols: its definition in this one
                    if (target.Module != module)
                        target = (MethodDefinition) module.LookupToken(target.MetadataToken);
                    if (op == Code.Callvirt && target.IsVirtual)
                        target = Override(target, Receiver(method, code, i, called));
                    // a construction (a struct's `new S(...)` into a variable is a call
                    // of its constructor on the variable, not a newobj), not base(...)
                    if (target.IsConstructor && name == SourceName(target.DeclaringType))
                        AddIfAny(found, TypePlace(target.DeclaringType));
                    var place = Place(target);
                    AddIfAny(found, place);
                    if (place == null && !target.IsConstructor)
                        found = null;  // a method of the project not found in its source
                }
                targets = found == null ? "null" : "[" + string.Join(", ", found.Distinct()) + "]";
            }
            Sites.Add("{\"file\": " + Json(file) + ", \"line\": " + point.StartLine +
                      ", \"name\": " + Json(name) + ", \"caller\": " +
                      Where(file, CallerName(method), point.StartLine) +
                      ", \"targets\": " + targets + "}");
        }
    }

    static void AddIfAny(List<string> found, string place)
    {
        if (place != null) found.Add(place);
    }

    // The source lines of a statement: mcs's symbols give each sequence point its line
    // alone, so a statement runs to the line before the method's next one.
    static string Written(string file, int first, int last)
    {
        var lines = Lines[file];
        var text = new StringBuilder();
        for (int line = first; line <= last && line <= lines.Length; line++)
            text.Append(lines[line - 1]).Append('\n');
        return text.ToString();
    }

    static bool Word(string text, string word)
    {
        return word.Length > 0 && Regex.IsMatch(text, @"(?<![\w@])@?" + Regex.Escape(word) + @"(?!\w)");
    }

    // -- receivers -----------------------------------------------------------

    // The static type of a virtual call's receiver, from the instruction that pushed it
    // (walking back over the stack effects of the ones between); null when unsure.
    static TypeReference Receiver(MethodDefinition method, IList<Instruction> code, int at,
                                  MethodReference called)
    {
        int need = called.Parameters.Count;  // the receiver lies under the arguments
        for (int i = at - 1; i >= 0; i--)
        {
            var ins = code[i];
            int push = Pushes(ins), pop = Pops(ins, method);
            if (push < 0 || pop < 0)
                return null;
            if (need < push)
                return push == 1 ? TypeOf(method, ins) : null;
            need = need - push + pop;
        }
        return null;
    }

    static TypeReference TypeOf(MethodDefinition method, Instruction ins)
    {
        switch (ins.OpCode.Code)
        {
            case Code.Ldarg_0: return Argument(method, 0);
            case Code.Ldarg_1: return Argument(method, 1);
            case Code.Ldarg_2: return Argument(method, 2);
            case Code.Ldarg_3: return Argument(method, 3);
            case Code.Ldarg_S: case Code.Ldarg: case Code.Ldarga_S: case Code.Ldarga:
                return ((ParameterDefinition) ins.Operand).ParameterType;
            case Code.Ldloc_0: return method.Body.Variables[0].VariableType;
            case Code.Ldloc_1: return method.Body.Variables[1].VariableType;
            case Code.Ldloc_2: return method.Body.Variables[2].VariableType;
            case Code.Ldloc_3: return method.Body.Variables[3].VariableType;
            case Code.Ldloc_S: case Code.Ldloc: case Code.Ldloca_S: case Code.Ldloca:
                return ((VariableDefinition) ins.Operand).VariableType;
            case Code.Ldfld: case Code.Ldsfld: case Code.Ldflda: case Code.Ldsflda:
                return ((FieldReference) ins.Operand).FieldType;
            case Code.Call: case Code.Callvirt:
                return ((MethodReference) ins.Operand).ReturnType;
            case Code.Newobj: return ((MethodReference) ins.Operand).DeclaringType;
            case Code.Castclass: case Code.Isinst: case Code.Box:
                return (TypeReference) ins.Operand;
        }
        return null;
    }

    static TypeReference Argument(MethodDefinition method, int index)
    {
        if (method.HasThis)
        {
            if (index == 0) return method.DeclaringType;
            index--;
        }
        return index < method.Parameters.Count ? method.Parameters[index].ParameterType : null;
    }

    static int Pushes(Instruction ins)
    {
        switch (ins.OpCode.StackBehaviourPush)
        {
            case StackBehaviour.Push0: return 0;
            case StackBehaviour.Push1_push1: return 2;
            case StackBehaviour.Varpush:
                var m = ins.Operand as MethodReference;
                return m == null ? -1 : m.ReturnType.FullName == "System.Void" ? 0 : 1;
            default: return 1;
        }
    }

    static int Pops(Instruction ins, MethodDefinition method)
    {
        switch (ins.OpCode.StackBehaviourPop)
        {
            case StackBehaviour.Pop0: return 0;
            case StackBehaviour.Pop1: case StackBehaviour.Popi: case StackBehaviour.Popref: return 1;
            case StackBehaviour.Pop1_pop1: case StackBehaviour.Popi_pop1: case StackBehaviour.Popi_popi:
            case StackBehaviour.Popi_popi8: case StackBehaviour.Popi_popr4: case StackBehaviour.Popi_popr8:
            case StackBehaviour.Popref_pop1: case StackBehaviour.Popref_popi: return 2;
            case StackBehaviour.Popi_popi_popi: case StackBehaviour.Popref_popi_popi:
            case StackBehaviour.Popref_popi_popi8: case StackBehaviour.Popref_popi_popr4:
            case StackBehaviour.Popref_popi_popr8: case StackBehaviour.Popref_popi_popref: return 3;
            case StackBehaviour.Varpop:
                var m = ins.Operand as MethodReference;
                if (m == null) return -1;
                return m.Parameters.Count + (m.HasThis && ins.OpCode.Code != Code.Newobj ? 1 : 0);
            default: return -1;  // PopAll: a leave, where the walk stops
        }
    }

    // The member a call on a receiver of static type `receiver` runs by C#'s lookup of
    // that type: the nearest override of `target` from there up to its declaring type.
    static MethodDefinition Override(MethodDefinition target, TypeReference receiver)
    {
        TypeDefinition type = null;
        try { type = receiver == null ? null : receiver.Resolve(); } catch (AssemblyResolutionException) { }
        for (int hops = 0; type != null && hops < 32; hops++)
        {
            if (type == target.DeclaringType)
                return target;
            var match = type.Methods.FirstOrDefault(m => m.Name == target.Name && m.IsVirtual &&
                !m.IsNewSlot && SameParameters(m, target));
            if (match != null)
                return match;
            try { type = type.BaseType == null ? null : type.BaseType.Resolve(); }
            catch (AssemblyResolutionException) { type = null; }
        }
        return target;
    }

    static bool SameParameters(MethodDefinition a, MethodDefinition b)
    {
        return a.Parameters.Count == b.Parameters.Count && a.Parameters.Select(p => p.ParameterType.Name)
            .SequenceEqual(b.Parameters.Select(p => p.ParameterType.Name));
    }

    // -- places --------------------------------------------------------------

    // A method's source name: a constructor is named as its class; a compiler-made
    // method (a lambda, an iterator's MoveNext) as the method it is written in; an
    // accessor or operator as the class around it.
    static string MemberName(MethodDefinition method)
    {
        // `void IVisitor.Visit(...)`, an explicit implementation, is named Visit
        return method.IsConstructor ? SourceName(method.DeclaringType)
            : method.Name.Substring(method.Name.LastIndexOf('.') + 1);
    }

    static string CallerName(MethodDefinition method)
    {
        var made = Regex.Match(method.Name, @"^<([^>]+)>");
        if (made.Success)
            return WrittenIn(method.DeclaringType, made.Groups[1].Value);
        if (method.Name.StartsWith("<") && !method.DeclaringType.Name.Contains("<"))
            // `<>m__0` of the class itself: a lambda of a field initializer
            return SourceName(Outermost(method.DeclaringType));
        var type = method.DeclaringType;
        while (type != null && type.Name.Contains("<"))
        {
            var outer = Regex.Match(type.Name, @"^<([^>]+)>");
            if (outer.Success && outer.Groups[1].Value.Length > 0)
                return WrittenIn(type.DeclaringType, outer.Groups[1].Value);
            type = type.DeclaringType;
        }
        if (method.IsConstructor || method.IsSpecialName)
            return SourceName(method.DeclaringType);
        return MemberName(method);
    }

    // The source name of the member a compiler-made one was written in (`<Many>m__0`,
    // `<get_Text>m__1`, `<.ctor>m__2`, `<DelimitedBy`2>m__3`), of `type` or a type around it.
    static string WrittenIn(TypeDefinition type, string member)
    {
        member = Regex.Replace(member, @"`\d+$", "");
        while (type != null && type.Name.Contains("<"))
            type = type.DeclaringType;
        if (type == null)
            return member;
        // (an explicit implementation's dots become underscores: `<I_Visit>m__0`)
        var found = type.Methods.FirstOrDefault(m => m.Name == member) ??
            type.Methods.FirstOrDefault(m => m.Name.Replace('.', '_') == member);
        if (found == null || found.IsSpecialName || found.IsConstructor)
            return SourceName(type);  // a field's or property's initializer, a constructor
        return MemberName(found);
    }

    static TypeDefinition Outermost(TypeDefinition type)
    {
        while (type.DeclaringType != null && type.Name.Contains("<"))
            type = type.DeclaringType;
        return type;
    }

    static string SourceName(TypeReference type)
    {
        while (type.DeclaringType != null && type.Name.Contains("<"))
            type = type.DeclaringType;
        return Regex.Replace(type.Name, @"`\d+$", "");
    }

    // Where a method of the project is written: a line inside its body (its last
    // sequence point: the closing brace), or, for one without a body (abstract, an
    // interface's), the line that declares it inside its type.
    static string Place(MethodDefinition target)
    {
        string name = MemberName(target);
        var declared = Declaration(name);
        if (target.HasBody)
        {
            var last = target.Body.Instructions.Select(i => i.SequencePoint)
                .LastOrDefault(p => p != null && p.StartLine != Hidden) ?? StateMachinePoint(target);
            var file = last == null ? null : Relative(last.Document.Url);
            if (file != null && !target.IsConstructor && !DeclaredBefore(file, declared, last.StartLine))
            {
                // mcs's symbols give the classes it nests in a partial type (an async
                // method's state machine) the file of the type's first part
                var others = TypeFiles(Outermost(target.DeclaringType))
                    .Where(f => DeclaredBefore(f, declared, last.StartLine)).ToList();
                file = others.Count == 1 ? others[0] : file;
            }
            if (file != null && !(target.IsConstructor &&
                                  last.StartLine == TypeLine(target.DeclaringType, file)))
                return Where(file, name, last.StartLine);
            if (target.IsConstructor)
                return null;  // a default constructor: the class alone
        }
        foreach (var file in TypeFiles(target.DeclaringType))
        {
            int from = TypeLine(target.DeclaringType, file);
            var lines = Lines[file];
            for (int line = from; line >= 1 && line <= lines.Length; line++)
                if (declared.IsMatch(lines[line - 1]) && target.Parameters.All(
                        p => Word(Written(file, line, Math.Min(line + 20, lines.Length)), p.Name)))
                    return Where(file, name, line);
        }
        return null;
    }

    // A class declared in parts (partial) is named at the part in the first file by path.
    // An async method or an iterator keeps its code in a class the compiler nests
    // beside it (`<Name>c__async0`, `<Name>c__Iterator0`): its MoveNext's last point.
    static SequencePoint StateMachinePoint(MethodDefinition method)
    {
        var machine = method.DeclaringType.NestedTypes.FirstOrDefault(
            t => t.Name.StartsWith("<" + method.Name + ">"));
        var move = machine == null ? null : machine.Methods.FirstOrDefault(m => m.Name == "MoveNext" && m.HasBody);
        return move == null ? null : move.Body.Instructions.Select(i => i.SequencePoint)
            .LastOrDefault(p => p != null && p.StartLine != Hidden);
    }

    // A declaration of a member: words (modifiers, the result type) before the name at
    // the start of its line.
    static Regex Declaration(string name)
    {
        return new Regex(@"^\s*(\[[^\]]*\]\s*)*(?!(return|new|await|throw|else|yield)\b)" +
                         @"([\w<>\[\],.?]+\s+)+" + Regex.Escape(name) + @"\s*(<[^>]*>)?\s*\(");
    }

    static bool DeclaredBefore(string file, Regex declared, int line)
    {
        var lines = Lines[file];
        for (int at = Math.Min(line, lines.Length); at >= 1 && at > line - 400; at--)
            if (declared.IsMatch(lines[at - 1]))
                return true;
        return false;
    }

    static string TypePlace(TypeDefinition type)
    {
        foreach (var file in TypeFiles(type).OrderBy(f => f, StringComparer.Ordinal))
            return Where(file, SourceName(type), TypeLine(type, file));
        return null;
    }

    // The files that declare a type: where its methods' code is, else any that names
    // it in a declaration.
    static IEnumerable<string> TypeFiles(TypeDefinition type)
    {
        var files = type.Methods.Where(m => m.HasBody).SelectMany(m => m.Body.Instructions)
            .Select(i => i.SequencePoint).Where(p => p != null && p.StartLine != Hidden)
            .Select(p => Relative(p.Document.Url)).Where(f => f != null).Distinct().ToList();
        // (with every file declaring it: mcs's symbols may give one part's code the
        // file of another part)
        if (files.Count == 0 || files.Any(f => TypeLine(type, f) > 0 &&
                                          Lines[f][TypeLine(type, f) - 1].Contains("partial")))
            files.AddRange(Lines.Keys.Where(f => !files.Contains(f) && TypeLine(type, f) > 0)
                           .OrderBy(f => f, StringComparer.Ordinal));
        return files.Where(f => TypeLine(type, f) > 0);
    }

    static readonly Dictionary<string, int> TypeLines = new Dictionary<string, int>();

    static int TypeLine(TypeDefinition type, string file)
    {
        string key = type.FullName + "\n" + file;
        int found;
        if (TypeLines.TryGetValue(key, out found))
            return found;
        // Result, Result<T> and Result<T, U> are three types: the declaration with as many
        // type parameters of its own (`2 in the name; a class nested in a generic one has
        // its outer's too)
        var own = Regex.Match(type.Name, @"`(\d+)$");
        var generic = own.Success ? @"\s*<[^<>]*" + string.Concat(Enumerable.Repeat(@",[^<>]*",
            int.Parse(own.Groups[1].Value) - 1)) + ">" : @"(?!\s*<)";
        var pattern = new Regex(@"\b(class|struct|interface|enum)\s+" + Regex.Escape(SourceName(type)) +
                                @"\b" + generic);
        var lines = Lines[file];
        found = 0;
        for (int line = 1; line <= lines.Length && found == 0; line++)
            if (pattern.IsMatch(lines[line - 1]))
                found = line;
        return TypeLines[key] = found;
    }

    static string Relative(string url)
    {
        var full = Path.GetFullPath(Path.IsPathRooted(url) ? url : Path.Combine(root, url));
        if (!full.StartsWith(root + Path.DirectorySeparatorChar))
            return null;
        var relative = full.Substring(root.Length + 1);
        return Lines.ContainsKey(relative) ? relative : null;
    }

    static string Where(string file, string name, int line)
    {
        return "{\"file\": " + Json(file) + ", \"name\": " + Json(name) + ", \"line\": " + line + "}";
    }

    static string Json(string text)
    {
        var out_ = new StringBuilder("\"");
        foreach (var c in text)
        {
            if (c == '"' || c == '\\') out_.Append('\\').Append(c);
            else if (c < ' ') out_.AppendFormat("\\u{0:x4}", (int) c);
            else out_.Append(c);
        }
        return out_.Append('"').ToString();
    }
}
