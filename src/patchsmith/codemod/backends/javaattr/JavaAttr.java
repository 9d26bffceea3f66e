// patchsmith's Java attribution helper: which method each call, method reference and
// static import binds to, read from the JDK's own compiler (JavacTask parse + analyze).
//
// Usage: java -cp CLASSES JavaAttr REQUEST.json   (prints one JSON object on stdout)
//
// This is a tool patchsmith runs over a repository's sources, not the repository's own
// program: javac only parses and attributes them. Annotation processors never run
// (-proc:none: a processor is repository code), no class file is written, and no class of
// the repository is loaded into this JVM (class files on the class path are read as data).
//
// Request: {"files": [{"path": P, "text": T}], "sourcepath": [DIR], "classpath": [ENTRY],
//           "methods": [NAME], "types": [QUALIFIED], "members": [NAME]}
// Answer:  {"files": [{"path", "errors", "bindings", "sites": [...]}], "errors": [...]}
// Offsets in the answer are UTF-8 byte offsets into the text sent.

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.ImportTree;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.PackageElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.VariableElement;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

public final class JavaAttr {
    private JavaAttr() {}

    /** A source held in memory: the text patchsmith is working on, not the file on disk. */
    static final class Source extends SimpleJavaFileObject {
        final String path;
        final String text;
        int[] bytes;

        Source(String path, String text) throws Exception {
            super(new URI("memory", null, "/" + path, null), Kind.SOURCE);
            this.path = path;
            this.text = text;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }

        /** The UTF-8 byte offset of char offset `at`. */
        int byteAt(long at) {
            if (bytes == null) {
                bytes = new int[text.length() + 1];
                int count = 0;
                for (int i = 0; i < text.length(); i++) {
                    bytes[i] = count;
                    char c = text.charAt(i);
                    if (c < 0x80) count += 1;
                    else if (c < 0x800) count += 2;
                    else if (Character.isHighSurrogate(c)) count += 4;
                    else if (Character.isLowSurrogate(c)) count += 0;
                    else count += 3;
                }
                bytes[text.length()] = count;
            }
            int index = (int) Math.max(0, Math.min(at, text.length()));
            return bytes[index];
        }
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        try {
            String request = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
            run(asMap(new Json(request).value()), out);
        } catch (Throwable failure) {
            out.setLength(0);
            out.append("{\"files\":[],\"errors\":[");
            quote(out, failure.toString());
            out.append("]}");
        }
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }

    static void run(Map<String, Object> request, StringBuilder out) throws Exception {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            out.append("{\"files\":[],\"errors\":[\"this Java runtime has no compiler (a JRE, not a JDK)\"]}");
            return;
        }
        List<Source> sources = new ArrayList<>();
        Map<URI, Source> byUri = new LinkedHashMap<>();
        for (Object item : asList(request.get("files"))) {
            Map<String, Object> file = asMap(item);
            Source source = new Source((String) file.get("path"), (String) file.get("text"));
            sources.add(source);
            byUri.put(source.toUri(), source);
        }
        Set<String> methods = new LinkedHashSet<>(strings(request.get("methods")));
        List<String> types = strings(request.get("types"));
        List<String> members = strings(request.get("members"));

        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StandardJavaFileManager files =
                compiler.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8);
        files.setLocation(StandardLocation.SOURCE_PATH, asFiles(strings(request.get("sourcepath"))));
        files.setLocation(StandardLocation.CLASS_PATH, asFiles(strings(request.get("classpath"))));
        // -proc:none: no annotation processor (repository code) runs; -implicit:none: classes
        // found on the source path are read for their declarations, not attributed themselves.
        List<String> options = Arrays.asList(
                "-proc:none", "-implicit:none", "-encoding", "UTF-8", "-nowarn", "-Xlint:none",
                "-Xmaxerrs", "100000");
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, options, null, sources);
        List<CompilationUnitTree> units = new ArrayList<>();
        for (CompilationUnitTree unit : task.parse()) units.add(unit);
        task.analyze();
        Trees trees = Trees.instance(task);
        Elements elements = task.getElements();
        Types typeUtils = task.getTypes();

        Map<URI, List<String>> errors = new LinkedHashMap<>();
        List<String> global = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) continue;
            String message = d.getMessage(Locale.ROOT).split("\n", 2)[0];
            if (d.getSource() == null) {
                global.add(message);
            } else {
                errors.computeIfAbsent(d.getSource().toUri(), k -> new ArrayList<>())
                        .add(d.getLineNumber() + ":" + d.getColumnNumber() + ": " + message);
            }
        }

        out.append("{\"files\":[");
        boolean firstFile = true;
        for (CompilationUnitTree unit : units) {
            Source source = byUri.get(unit.getSourceFile().toUri());
            if (!firstFile) out.append(',');
            firstFile = false;
            out.append("{\"path\":");
            quote(out, source.path);
            out.append(",\"errors\":");
            stringArray(out, errors.getOrDefault(source.toUri(), Collections.emptyList()));
            Resolver resolver = new Resolver(trees, elements, typeUtils, unit);
            out.append(",\"bindings\":{");
            boolean firstBinding = true;
            for (String type : types) {
                if (!firstBinding) out.append(',');
                firstBinding = false;
                quote(out, type);
                out.append(':');
                quoteOrNull(out, resolver.bindType(null, simpleName(type)));
            }
            out.append("},\"sites\":[");
            Scanner scanner = new Scanner(trees, elements, typeUtils, unit, source, methods, types,
                    members, resolver, out);
            scanner.scan(unit, null);
            out.append("]}");
        }
        out.append("],\"errors\":");
        stringArray(out, global);
        out.append('}');
    }

    static String simpleName(String qualified) {
        return qualified.substring(qualified.lastIndexOf('.') + 1);
    }

    /** What a simple name means at a place in a compilation unit, by the rules of JLS 6.4. */
    static final class Resolver {
        final Trees trees;
        final Elements elements;
        final Types types;
        final CompilationUnitTree unit;
        final String pkg;

        Resolver(Trees trees, Elements elements, Types types, CompilationUnitTree unit) {
            this.trees = trees;
            this.elements = elements;
            this.types = types;
            this.unit = unit;
            this.pkg = unit.getPackageName() == null ? "" : unit.getPackageName().toString();
        }

        List<TypeElement> enclosingClasses(TreePath path) {
            List<TypeElement> found = new ArrayList<>();
            for (TreePath p = path; p != null; p = p.getParentPath()) {
                if (p.getLeaf() instanceof ClassTree) {
                    Element e = trees.getElement(p);
                    if (e instanceof TypeElement) found.add((TypeElement) e);
                }
            }
            return found;
        }

        /** The qualified name `simple` denotes as a type at `path` (the whole file: null path);
         * null when it denotes nothing, `<ambiguous>` or `<local>` when no one class. */
        String bindType(TreePath path, String simple) {
            if (path != null) {
                for (TreePath p = path; p != null; p = p.getParentPath()) {
                    Tree leaf = p.getLeaf();
                    if (leaf instanceof ClassTree) {
                        Element e = trees.getElement(p);
                        if (e instanceof TypeElement) {
                            if (e.getSimpleName().contentEquals(simple)) {
                                return ((TypeElement) e).getQualifiedName().toString();
                            }
                            for (Element member : elements.getAllMembers((TypeElement) e)) {
                                if (isType(member) && member.getSimpleName().contentEquals(simple)) {
                                    return ((TypeElement) member).getQualifiedName().toString();
                                }
                            }
                            for (Element parameter : ((TypeElement) e).getTypeParameters()) {
                                if (parameter.getSimpleName().contentEquals(simple)) return "<local>";
                            }
                        }
                    } else if (leaf instanceof com.sun.source.tree.BlockTree) {
                        for (Tree statement : ((com.sun.source.tree.BlockTree) leaf).getStatements()) {
                            if (statement instanceof ClassTree
                                    && ((ClassTree) statement).getSimpleName().contentEquals(simple)) {
                                return "<local>";
                            }
                        }
                    } else if (leaf instanceof com.sun.source.tree.MethodTree) {
                        for (Tree parameter : ((com.sun.source.tree.MethodTree) leaf).getTypeParameters()) {
                            if (((com.sun.source.tree.TypeParameterTree) parameter).getName()
                                    .contentEquals(simple)) {
                                return "<local>";
                            }
                        }
                    }
                }
            }
            for (Tree declared : unit.getTypeDecls()) {
                if (declared instanceof ClassTree && ((ClassTree) declared).getSimpleName().contentEquals(simple)) {
                    return pkg.isEmpty() ? simple : pkg + "." + simple;
                }
            }
            for (ImportTree imported : unit.getImports()) {
                String name = imported.getQualifiedIdentifier().toString();
                if (!name.endsWith("." + simple)) continue;
                TypeElement type = elements.getTypeElement(name);
                if (type != null) return type.getQualifiedName().toString();
                if (!imported.isStatic()) return name; // an import javac could not find
            }
            TypeElement same = elements.getTypeElement(pkg.isEmpty() ? simple : pkg + "." + simple);
            if (same != null) return same.getQualifiedName().toString();
            Set<String> onDemand = new LinkedHashSet<>();
            List<String> containers = new ArrayList<>();
            containers.add("java.lang");
            for (ImportTree imported : unit.getImports()) {
                String name = imported.getQualifiedIdentifier().toString();
                if (name.endsWith(".*")) containers.add(name.substring(0, name.length() - 2));
            }
            for (String container : containers) {
                TypeElement type = elements.getTypeElement(container + "." + simple);
                if (type != null) onDemand.add(type.getQualifiedName().toString());
            }
            if (onDemand.size() > 1) return "<ambiguous>";
            return onDemand.isEmpty() ? null : onDemand.iterator().next();
        }

        /** How an unqualified call of method `name` would bind at `path`: "none" (to nothing
         * declared or imported here), "to" (only to members of `owner`), or "other". */
        String bindMethod(TreePath path, String name, String owner) {
            for (TypeElement type : enclosingClasses(path)) {
                boolean any = false;
                boolean others = false;
                for (Element member : elements.getAllMembers(type)) {
                    if (member.getKind() != ElementKind.METHOD || !member.getSimpleName().contentEquals(name)) {
                        continue;
                    }
                    any = true;
                    Element from = member.getEnclosingElement();
                    if (!(from instanceof TypeElement)
                            || !((TypeElement) from).getQualifiedName().contentEquals(owner)) {
                        others = true;
                    }
                }
                if (any) return others ? "other" : "to";
            }
            for (ImportTree imported : unit.getImports()) {
                if (!imported.isStatic()) continue;
                Tree id = imported.getQualifiedIdentifier();
                if (!(id instanceof MemberSelectTree)) continue;
                MemberSelectTree select = (MemberSelectTree) id;
                String member = select.getIdentifier().toString();
                if (!member.equals(name) && !member.equals("*")) continue;
                String container = select.getExpression().toString();
                if (container.equals(owner)) continue;
                TypeElement type = elements.getTypeElement(container);
                if (type == null) return "other";
                for (Element e : elements.getAllMembers(type)) {
                    if (e.getKind() == ElementKind.METHOD && e.getSimpleName().contentEquals(name)
                            && e.getModifiers().contains(Modifier.STATIC)) {
                        return "other";
                    }
                }
            }
            return "none";
        }
    }

    static boolean isType(Element e) {
        ElementKind kind = e.getKind();
        return kind.isClass() || kind.isInterface();
    }

    /** Visits every call, method reference and static import of a method of interest. */
    static final class Scanner extends TreePathScanner<Void, Void> {
        final Trees trees;
        final Elements elements;
        final Types types;
        final CompilationUnitTree unit;
        final Source source;
        final Set<String> methods;
        final List<String> wanted;
        final List<String> members;
        final Resolver resolver;
        final StringBuilder out;
        final SourcePositions positions;
        boolean first = true;

        Scanner(Trees trees, Elements elements, Types types, CompilationUnitTree unit, Source source,
                Set<String> methods, List<String> wanted, List<String> members, Resolver resolver,
                StringBuilder out) {
            this.trees = trees;
            this.elements = elements;
            this.types = types;
            this.unit = unit;
            this.source = source;
            this.methods = methods;
            this.wanted = wanted;
            this.members = members;
            this.resolver = resolver;
            this.out = out;
            this.positions = trees.getSourcePositions();
        }

        long start(Tree tree) {
            return positions.getStartPosition(unit, tree);
        }

        long end(Tree tree) {
            return positions.getEndPosition(unit, tree);
        }

        @Override
        public Void visitImport(ImportTree node, Void unused) {
            Tree id = node.getQualifiedIdentifier();
            if (!node.isStatic()) {
                // a single-type import of a class that declares a method asked about
                TypeElement type = elements.getTypeElement(id.toString());
                boolean declares = false;
                if (type != null) {
                    for (Element e : type.getEnclosedElements()) {
                        if (e.getKind() == ElementKind.METHOD && methods.contains(e.getSimpleName().toString())) {
                            declares = true;
                        }
                    }
                }
                if (declares) {
                    begin("import", node, null);
                    out.append(",\"resolved\":true,\"declaring\":");
                    quote(out, type.getQualifiedName().toString());
                    out.append('}');
                }
                return null;
            }
            if (node.isStatic() && id instanceof MemberSelectTree) {
                MemberSelectTree select = (MemberSelectTree) id;
                String name = select.getIdentifier().toString();
                if (methods.contains(name)) {
                    TypeElement type = elements.getTypeElement(select.getExpression().toString());
                    List<ExecutableElement> overloads = new ArrayList<>();
                    boolean others = false;
                    if (type != null) {
                        for (Element e : elements.getAllMembers(type)) {
                            if (!e.getSimpleName().contentEquals(name) || !e.getModifiers().contains(Modifier.STATIC)) {
                                continue;
                            }
                            if (e.getKind() == ElementKind.METHOD) overloads.add((ExecutableElement) e);
                            else others = true;
                        }
                    }
                    begin("static_import", node, null);
                    out.append(",\"resolved\":").append(type != null);
                    out.append(",\"declaring\":");
                    quoteOrNull(out, type == null ? null : type.getQualifiedName().toString());
                    out.append(",\"method\":");
                    quote(out, name);
                    out.append(",\"overloads\":[");
                    for (int i = 0; i < overloads.size(); i++) {
                        if (i > 0) out.append(',');
                        out.append("{\"declaring\":");
                        quote(out, owner(overloads.get(i)));
                        out.append(",\"params\":");
                        stringArray(out, params(overloads.get(i)));
                        out.append('}');
                    }
                    out.append("],\"other_members\":").append(others).append('}');
                }
            }
            return null;
        }

        @Override
        public Void visitMethodInvocation(MethodInvocationTree node, Void unused) {
            ExpressionTree select = node.getMethodSelect();
            String name = null;
            ExpressionTree receiver = null;
            if (select instanceof IdentifierTree) {
                name = ((IdentifierTree) select).getName().toString();
            } else if (select instanceof MemberSelectTree) {
                name = ((MemberSelectTree) select).getIdentifier().toString();
                receiver = ((MemberSelectTree) select).getExpression();
            }
            if (name != null && methods.contains(name)) {
                TreePath selectPath = new TreePath(getCurrentPath(), select);
                Element element = trees.getElement(selectPath);
                begin("invocation", node, getCurrentPath());
                long nameEnd = end(select);
                field("name_start", source.byteAt(nameEnd - name.length()));
                field("name_end", source.byteAt(nameEnd));
                receiver(receiver == null ? null : new TreePath(selectPath, receiver));
                if (receiver == null) {
                    // written without a receiver: a member of an enclosing class, or imported
                    boolean member = false;
                    for (TypeElement type : resolver.enclosingClasses(getCurrentPath())) {
                        if (element != null && elements.getAllMembers(type).contains(element)) member = true;
                    }
                    out.append(",\"unqualified\":");
                    quote(out, member ? "member" : "static_import");
                }
                symbol(element);
                out.append('}');
            }
            return super.visitMethodInvocation(node, unused);
        }

        @Override
        public Void visitMemberReference(MemberReferenceTree node, Void unused) {
            String name = node.getName().toString();
            if (methods.contains(name)) {
                Element element = trees.getElement(getCurrentPath());
                begin("method_ref", node, getCurrentPath());
                long nameEnd = end(node);
                field("name_start", source.byteAt(nameEnd - name.length()));
                field("name_end", source.byteAt(nameEnd));
                receiver(new TreePath(getCurrentPath(), node.getQualifierExpression()));
                symbol(element);
                out.append('}');
            }
            return super.visitMemberReference(node, unused);
        }

        void begin(String kind, Tree node, TreePath path) {
            if (!first) out.append(',');
            first = false;
            out.append("{\"kind\":");
            quote(out, kind);
            field("start", source.byteAt(start(node)));
            field("end", source.byteAt(end(node)));
            field("line", unit.getLineMap().getLineNumber(start(node)));
            if (path == null) return;
            out.append(",\"bindings\":{");
            for (int i = 0; i < wanted.size(); i++) {
                if (i > 0) out.append(',');
                quote(out, wanted.get(i));
                out.append(':');
                quoteOrNull(out, resolver.bindType(path, simpleName(wanted.get(i))));
            }
            out.append("},\"members\":{");
            for (int i = 0; i < members.size(); i++) {
                if (i > 0) out.append(',');
                String[] member = members.get(i).split("#", 2);
                quote(out, members.get(i));
                out.append(':');
                quote(out, resolver.bindMethod(path, member[1], member[0]));
            }
            out.append('}');
        }

        void field(String name, long value) {
            out.append(",\"").append(name).append("\":").append(value);
        }

        void receiver(TreePath path) {
            out.append(",\"receiver\":");
            if (path == null) {
                out.append("null");
                return;
            }
            Tree tree = path.getLeaf();
            Element element = trees.getElement(path);
            String form = "expression";
            if (element instanceof TypeElement) {
                form = tree instanceof IdentifierTree ? "simple" : "qualified";
            }
            out.append("{\"form\":");
            quote(out, form);
            field("start", source.byteAt(start(tree)));
            field("end", source.byteAt(end(tree)));
            out.append('}');
        }

        void symbol(Element element) {
            boolean resolved = element instanceof ExecutableElement
                    && element.getEnclosingElement() instanceof TypeElement
                    && element.getEnclosingElement().asType().getKind() == TypeKind.DECLARED;
            List<String> params = resolved ? params((ExecutableElement) element) : null;
            if (params != null && params.contains(null)) resolved = false;
            out.append(",\"resolved\":").append(resolved);
            if (!resolved) return;
            out.append(",\"declaring\":");
            quote(out, owner(element));
            out.append(",\"method\":");
            quote(out, element.getSimpleName().toString());
            out.append(",\"params\":");
            stringArray(out, params);
            out.append(",\"static\":").append(element.getModifiers().contains(Modifier.STATIC));
        }

        String owner(Element method) {
            return ((TypeElement) method.getEnclosingElement()).getQualifiedName().toString();
        }

        /** Erased parameter types, qualified (`java.lang.String`, `int[]`); null for an error type. */
        List<String> params(ExecutableElement method) {
            List<String> found = new ArrayList<>();
            for (VariableElement parameter : method.getParameters()) {
                TypeMirror type = types.erasure(parameter.asType());
                found.add(type.getKind() == TypeKind.ERROR ? null : type.toString());
            }
            return found;
        }
    }

    static List<File> asFiles(List<String> paths) {
        List<File> found = new ArrayList<>();
        for (String path : paths) found.add(new File(path));
        return found;
    }

    // -- JSON, both ways -------------------------------------------------------------------

    static void quoteOrNull(StringBuilder out, String text) {
        if (text == null) out.append("null");
        else quote(out, text);
    }

    static void stringArray(StringBuilder out, List<String> items) {
        out.append('[');
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) out.append(',');
            quoteOrNull(out, items.get(i));
        }
        out.append(']');
    }

    static void quote(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object value) {
        return value == null ? Collections.emptyList() : (List<Object>) value;
    }

    static List<String> strings(Object value) {
        List<String> found = new ArrayList<>();
        for (Object item : asList(value)) found.add((String) item);
        return found;
    }

    /** A reader of the JSON patchsmith writes (objects, arrays, strings, numbers, literals). */
    static final class Json {
        final String text;
        int at;

        Json(String text) {
            this.text = text;
        }

        Object value() {
            skip();
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                skip();
                if (text.charAt(at) == '}') {
                    at++;
                    return map;
                }
                while (true) {
                    skip();
                    String key = string();
                    skip();
                    expect(':');
                    map.put(key, value());
                    skip();
                    if (text.charAt(at) == ',') {
                        at++;
                        continue;
                    }
                    expect('}');
                    return map;
                }
            }
            if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                skip();
                if (text.charAt(at) == ']') {
                    at++;
                    return list;
                }
                while (true) {
                    list.add(value());
                    skip();
                    if (text.charAt(at) == ',') {
                        at++;
                        continue;
                    }
                    expect(']');
                    return list;
                }
            }
            if (c == '"') return string();
            int begin = at;
            while (at < text.length() && ",}] \n\r\t".indexOf(text.charAt(at)) < 0) at++;
            String word = text.substring(begin, at);
            if (word.equals("null")) return null;
            if (word.equals("true")) return Boolean.TRUE;
            if (word.equals("false")) return Boolean.FALSE;
            return Double.valueOf(word);
        }

        String string() {
            expect('"');
            StringBuilder found = new StringBuilder();
            while (true) {
                char c = text.charAt(at++);
                if (c == '"') return found.toString();
                if (c != '\\') {
                    found.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case 'n': found.append('\n'); break;
                    case 't': found.append('\t'); break;
                    case 'r': found.append('\r'); break;
                    case 'b': found.append('\b'); break;
                    case 'f': found.append('\f'); break;
                    case 'u':
                        found.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                        break;
                    default: found.append(e);
                }
            }
        }

        void expect(char c) {
            if (text.charAt(at) != c) throw new IllegalArgumentException("expected " + c + " at " + at);
            at++;
        }

        void skip() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
        }
    }
}
