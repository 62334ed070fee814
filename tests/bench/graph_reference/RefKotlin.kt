// Kotlin reference for bench_graph_reference.py: every call site, resolved by the
// Kotlin compiler's own front end.
//
// Usage: java -cp REFKOTLIN.jar:KOTLIN_COMPILER.jar:... RefKotlin ROOT CLASSPATH < files
// (relative paths of the .kt files; CLASSPATH: the jars the project compiles
// against, joined by ':', the Kotlin standard library among them.)
// Needs Debian's kotlin package (kotlinc 1.3.31): the harness compiles this file
// against /usr/share/java/kotlin-compiler.jar. The files are analysed as one module
// the way kotlinc type-checks them (TopDownAnalyzerFacadeForJVM), without writing
// classes, and every call's resolved call is read from the binding context. A call
// the compiler cannot resolve (a dependency not on the class path, an error in the
// code) is nobody's answer (targets null); one it resolves outside the files (the
// standard library, the JDK) has targets []. A call the compiler resolved only with
// errors (an unsuccessful status, an error descriptor, or a receiver of an error
// type: `impl.putEntry()` where impl's class PMap is not on the class path) and to
// nothing in the files is nobody's answer too: the compiler did not know it.
//
// Conventions, as ctxkit reads Kotlin (and as the Java reference does):
// - A site is a call written with a name: `f(...)`, `x.f(...)`, `f { ... }`, and
//   a supertype's constructor call `: Base(...)`, `this(...)` / `super(...)` in a
//   secondary constructor (an enum constant's arguments are not one). Operators, property reads and writes, indexers and
//   callable references (`::f`) are not calls.
// - `Foo(...)` calls the class Foo (Kotlin's constructors are the class's, primary
//   or secondary; ctxkit has no node for a constructor).
// - `f()` where f is a property or parameter of function type invokes a value:
//   it runs no definition the reader can point at by that name (targets []), or
//   an operator `invoke` of the project's (targets null: nobody's answer by name).
// - A call in a function, local function or an anonymous object's method belongs
//   to that function; a lambda's to the function it is written in; a property
//   initializer's, an accessor's, an init block's or a secondary constructor's to
//   the class around it (a companion object's to its class); at the top level,
//   to the file.
// - A call of an inherited member names the member the compiler picked (the
//   declaration the fake override stands for).
// Prints {"tool", "sites", "errors"} in the harness's common format (see
// ref_python_jedi.py).

import com.intellij.openapi.util.Disposer
import com.intellij.psi.PsiElement
import org.jetbrains.kotlin.cli.common.CLIConfigurationKeys
import org.jetbrains.kotlin.cli.common.messages.CompilerMessageLocation
import org.jetbrains.kotlin.cli.common.messages.CompilerMessageSeverity
import org.jetbrains.kotlin.cli.common.messages.MessageCollector
import org.jetbrains.kotlin.cli.jvm.compiler.EnvironmentConfigFiles
import org.jetbrains.kotlin.cli.jvm.compiler.KotlinCoreEnvironment
import org.jetbrains.kotlin.cli.jvm.compiler.NoScopeRecordCliBindingTrace
import org.jetbrains.kotlin.cli.jvm.compiler.TopDownAnalyzerFacadeForJVM
import org.jetbrains.kotlin.cli.jvm.config.addJavaSourceRoot
import org.jetbrains.kotlin.cli.jvm.config.addJvmClasspathRoots
import org.jetbrains.kotlin.config.CommonConfigurationKeys
import org.jetbrains.kotlin.config.CompilerConfiguration
import org.jetbrains.kotlin.config.JVMConfigurationKeys
import org.jetbrains.kotlin.cli.common.config.addKotlinSourceRoots
import org.jetbrains.kotlin.descriptors.CallableMemberDescriptor
import org.jetbrains.kotlin.descriptors.ClassConstructorDescriptor
import org.jetbrains.kotlin.descriptors.DeclarationDescriptor
import org.jetbrains.kotlin.diagnostics.Severity
import org.jetbrains.kotlin.diagnostics.rendering.DefaultErrorMessages
import org.jetbrains.kotlin.psi.KtCallExpression
import org.jetbrains.kotlin.psi.KtClassOrObject
import org.jetbrains.kotlin.psi.KtConstructorDelegationCall
import org.jetbrains.kotlin.psi.KtElement
import org.jetbrains.kotlin.psi.KtEnumEntry
import org.jetbrains.kotlin.psi.KtFile
import org.jetbrains.kotlin.psi.KtNameReferenceExpression
import org.jetbrains.kotlin.psi.KtNamedDeclaration
import org.jetbrains.kotlin.psi.KtNamedFunction
import org.jetbrains.kotlin.psi.KtObjectDeclaration
import org.jetbrains.kotlin.psi.KtPrimaryConstructor
import org.jetbrains.kotlin.psi.KtSecondaryConstructor
import org.jetbrains.kotlin.psi.KtSuperTypeCallEntry
import org.jetbrains.kotlin.psi.KtTreeVisitorVoid
import org.jetbrains.kotlin.resolve.BindingContext
import org.jetbrains.kotlin.resolve.DescriptorToSourceUtils
import org.jetbrains.kotlin.resolve.OverridingUtil
import org.jetbrains.kotlin.resolve.calls.callUtil.getResolvedCall
import org.jetbrains.kotlin.resolve.calls.model.ResolvedCall
import org.jetbrains.kotlin.resolve.calls.model.VariableAsFunctionResolvedCall
import org.jetbrains.kotlin.types.ErrorUtils
import org.jetbrains.kotlin.types.isError
import java.io.File

class Unit_(val file: KtFile, val rel: String, val lineStarts: IntArray) {
    fun line(offset: Int): Int {
        var lo = 0
        var hi = lineStarts.size - 1
        while (lo < hi) {
            val mid = (lo + hi + 1) / 2
            if (lineStarts[mid] <= offset) lo = mid else hi = mid - 1
        }
        return lo + 1
    }
}

object RefKotlin {
    lateinit var root: File
    val units = HashMap<KtFile, Unit_>()
    val sites = ArrayList<String>()
    lateinit var context: BindingContext

    fun quote(s: String): String {
        val b = StringBuilder("\"")
        for (c in s) {
            when {
                c == '"' -> b.append("\\\"")
                c == '\\' -> b.append("\\\\")
                c < ' ' -> b.append(String.format("\\u%04x", c.toInt()))
                else -> b.append(c)
            }
        }
        return b.append('"').toString()
    }

    fun where(unit: Unit_, name: String, offset: Int): String =
        "{\"file\": ${quote(unit.rel)}, \"line\": ${unit.line(offset)}, \"name\": ${quote(name)}}"

    /** The definition a declaration is, as {"file", "line", "name"}; null outside the files. */
    fun definition(element: PsiElement?): String? {
        var e = element ?: return null
        if (e is KtPrimaryConstructor || e is KtSecondaryConstructor) {
            e = (e as KtElement).getStrictParentOfType() ?: return null
        }
        val unit = units[e.containingFile as? KtFile ?: return null] ?: return null
        val named = e as? KtNamedDeclaration ?: return null
        val identifier = named.nameIdentifier ?: return null
        return where(unit, named.name ?: return null, identifier.textRange.startOffset)
    }

    inline fun <reified T : PsiElement> PsiElement.getStrictParentOfType(): T? {
        var p = parent
        while (p != null && p !is T) p = p.parent
        return p as T?
    }

    /** The definitions a resolved descriptor runs inside the files ([] outside). */
    fun targets(descriptor: DeclarationDescriptor): List<String> {
        val original = descriptor.original
        val subject: DeclarationDescriptor =
            if (original is ClassConstructorDescriptor) original.constructedClass else original
        val declaration = DescriptorToSourceUtils.descriptorToDeclaration(subject)
        val found = definition(declaration)
        if (found != null) return listOf(found)
        if (inJava(declaration)) return listOf(JAVA)
        if (subject is CallableMemberDescriptor &&
            subject.kind == CallableMemberDescriptor.Kind.FAKE_OVERRIDE) {
            return OverridingUtil.getOverriddenDeclarations(subject).mapNotNull {
                definition(DescriptorToSourceUtils.descriptorToDeclaration(it))
            }.distinct()
        }
        return emptyList()
    }

    const val JAVA = "java"

    fun inJava(element: PsiElement?): Boolean {
        val path = element?.containingFile?.virtualFile?.path ?: return false
        return path.endsWith(".java") && File(path).canonicalPath.startsWith(root.path + "/")
    }

    /** The innermost function around a call, else the class around it; null: the file. */
    fun caller(unit: Unit_, element: PsiElement): String? {
        var p: PsiElement? = element.parent
        while (p != null && p !is KtFile) {
            if (p is KtNamedFunction && p.name != null) {
                return where(unit, p.name!!, p.nameIdentifier!!.textRange.startOffset)
            }
            if (p is KtClassOrObject && p.name != null &&
                !(p is KtObjectDeclaration && (p.isCompanion() || p.isObjectLiteral()))) {
                return where(unit, p.name!!, p.nameIdentifier!!.textRange.startOffset)
            }
            p = p.parent
        }
        return null
    }

    fun unsure(resolved: ResolvedCall<*>): Boolean =
        !resolved.status.isSuccess || ErrorUtils.isError(resolved.resultingDescriptor) ||
            listOfNotNull(resolved.dispatchReceiver, resolved.extensionReceiver)
                .any { it.type.isError }

    fun site(unit: Unit_, call: KtElement, name: String, offset: Int) {
        val resolved = call.getResolvedCall(context)
        val targets: String = when {
            resolved == null -> "null"
            resolved is VariableAsFunctionResolvedCall ->
                if (targets(resolved.functionCall.resultingDescriptor).isEmpty()) "[]" else "null"
            else -> targets(resolved.resultingDescriptor).let {
                if (JAVA in it || it.isEmpty() && unsure(resolved)) "null"
                else "[" + it.joinToString(", ") + "]"
            }
        }
        val from = caller(unit, call) ?: "null"
        sites.add("{\"file\": ${quote(unit.rel)}, \"line\": ${unit.line(offset)}, " +
                  "\"name\": ${quote(name)}, \"caller\": $from, \"targets\": $targets}")
    }

    @JvmStatic
    fun main(args: Array<String>) {
        root = File(args[0]).canonicalFile
        val classpath = args.getOrElse(1) { "" }.split(':').filter { it.isNotEmpty() }.map(::File)
        val files = generateSequence(::readLine).map { it.trim() }.filter { it.isNotEmpty() }.toList()
        val disposable = Disposer.newDisposable()
        val config = CompilerConfiguration()
        val messages = ArrayList<String>()
        config.put(CLIConfigurationKeys.MESSAGE_COLLECTOR_KEY, object : MessageCollector {
            override fun clear() {}
            override fun hasErrors() = false
            override fun report(severity: CompilerMessageSeverity, message: String,
                                location: CompilerMessageLocation?) {
                if (severity.isError) messages.add(message)
            }
        })
        config.put(CommonConfigurationKeys.MODULE_NAME, "reference")
        config.put(JVMConfigurationKeys.JDK_HOME, File(System.getProperty("java.home")))
        // The modules of Java SE (java.compiler, java.sql, ...): by default only some are read.
        config.put(JVMConfigurationKeys.ADDITIONAL_JAVA_MODULES, listOf("java.se"))
        config.addJvmClasspathRoots(classpath)
        config.addKotlinSourceRoots(files.map { File(root, it).path })
        // The project's Java files are compiled with it; a call into them is no
        // Kotlin definition, and so nobody's answer here (targets null).
        root.walkTopDown().filter { it.isFile && it.name.endsWith(".java") }
            .forEach { config.addJavaSourceRoot(it) }
        val env = KotlinCoreEnvironment.createForProduction(
            disposable, config, EnvironmentConfigFiles.JVM_CONFIG_FILES)
        val sources = env.getSourceFiles()
        for (file in sources) {
            val path = File(file.virtualFile.path).canonicalFile
            val rel = path.relativeTo(root).path
            val text = file.text
            val starts = ArrayList<Int>()
            starts.add(0)
            for (i in text.indices) if (text[i] == '\n') starts.add(i + 1)
            units[file] = Unit_(file, rel, starts.toIntArray())
        }
        val result = TopDownAnalyzerFacadeForJVM.analyzeFilesWithJavaIntegration(
            env.project, sources, NoScopeRecordCliBindingTrace(), env.configuration,
            env::createPackagePartProvider)
        context = result.bindingContext
        var errors = 0
        val withErrors = HashSet<String>()
        for (d in context.diagnostics) {
            if (d.severity == Severity.ERROR) {
                errors++
                val unit = units[d.psiFile as? KtFile]
                if (unit != null) withErrors.add(unit.rel)
                if (errors <= 20) System.err.println(
                    "${unit?.rel}: ${DefaultErrorMessages.render(d).lineSequence().first()}")
            }
        }
        for (unit in units.values.sortedBy { it.rel }) {
            unit.file.accept(object : KtTreeVisitorVoid() {
                override fun visitCallExpression(expression: KtCallExpression) {
                    val callee = expression.calleeExpression
                    if (callee is KtNameReferenceExpression) {
                        site(unit, expression, callee.getReferencedName(),
                             callee.textRange.startOffset)
                    }
                    super.visitCallExpression(expression)
                }

                override fun visitSuperTypeCallEntry(call: KtSuperTypeCallEntry) {
                    if (call.getStrictParentOfType<KtEnumEntry>() != null) return  // no `new`
                    val name = call.typeReference?.text?.substringBefore('<')?.substringAfterLast('.')
                    if (name != null) site(unit, call, name.trim(), call.textRange.startOffset)
                    super.visitSuperTypeCallEntry(call)
                }

                override fun visitSecondaryConstructor(constructor: KtSecondaryConstructor) {
                    val delegation: KtConstructorDelegationCall? = constructor.getDelegationCall()
                    if (delegation != null && !delegation.isImplicit) {
                        val word = if (delegation.isCallToThis) "this" else "super"
                        site(unit, delegation, word, delegation.textRange.startOffset)
                    }
                    super.visitSecondaryConstructor(constructor)
                }
            })
        }
        val out = StringBuilder()
        out.append("{\"tool\": ${quote("kotlinc " + org.jetbrains.kotlin.config.KotlinCompilerVersion.VERSION)}, ")
        out.append("\"errors\": {\"errors\": $errors, \"units with errors\": ${withErrors.size}, ")
        out.append("\"units\": ${units.size}}, \"sites\": [\n")
        out.append(sites.joinToString(",\n"))
        out.append("\n]}\n")
        print(out)
        for (m in messages.take(5)) System.err.println(m)
        Disposer.dispose(disposable)
    }
}
