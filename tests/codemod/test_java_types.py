"""Java recipes by type: javac's attribution decides which calls, references and imports change."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.codemod.helpers import write_tree
from tests.codemod.java_project import CASES, LIBRARY, RECIPE, after, before

from patchsmith.cli import main
from patchsmith.codemod import RecipeStatus, parse_recipe, run_recipe
from patchsmith.codemod.backends import attribution
from patchsmith.codemod.fixtures import run_fixtures
from patchsmith.codemod.methods import MethodPattern, parse_method_pattern
from patchsmith.codemod.recipe import Recipe
from patchsmith.codemod.registry import find_recipe
from patchsmith.errors import PatchFailure

needs_javac = pytest.mark.skipif(
    shutil.which("javac") is None, reason="javac is not installed: these tests compile Java"
)


def recipe(text: str = RECIPE) -> Recipe:
    parsed = parse_recipe(text)
    assert isinstance(parsed, Recipe), parsed
    return parsed


def javac(root: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    sources = sorted(str(p) for p in root.rglob("*.java"))
    return subprocess.run(
        ["javac", "-proc:none", "-d", str(tmp), *sources],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*.java"))
        if ".patchsmith" not in p.parts
    }


@pytest.fixture(name="no_jdk")
def _no_jdk(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """PATH without javac or java, and the helper looked for again."""
    empty = tmp_path_factory.mktemp("empty-path")
    monkeypatch.setenv("PATH", str(empty))
    attribution.helper_classes.cache_clear()
    yield
    attribution.helper_classes.cache_clear()


@needs_javac
class TestTheProject:
    def test_before_and_after_compile_and_the_recipe_turns_one_into_the_other(
        self, tmp_path: Path
    ) -> None:
        """Overload left, conflicting import → qualified name, method reference rewritten,
        static imports followed, no import for a qualified call; both trees compile."""
        work, expected = tmp_path / "work", tmp_path / "expected"
        write_tree(work, before())
        write_tree(expected, after())
        compiled = javac(work, tmp_path / "classes-before")
        assert 0 == compiled.returncode, compiled.stderr

        report = run_recipe(recipe(), work, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        assert () == report.matched_by_syntax
        assert report.idempotent is True
        assert tree(expected) == tree(work)
        compiled = javac(work, tmp_path / "classes-after")
        assert 0 == compiled.returncode, compiled.stderr
        changed = {f.path for f in report.files}
        assert changed == {p for p, (_, new) in CASES.items() if new is not None}

    def test_what_is_left_is_reported_with_javacs_binding(self, tmp_path: Path) -> None:
        """Every same-named site not rewritten is listed with what javac bound it to."""
        write_tree(tmp_path, before())

        report = run_recipe(recipe(), tmp_path, record=False)

        left = {(m.path.rpartition("/")[2], m.text): m.reason for m in report.unchanged_matches}
        overload = "javac binds it to com.acme.ids.LegacyIdGenerator.generate(java.lang.String)"
        assert overload == left[("Overload.java", 'LegacyIdGenerator.generate("pre-")')]
        assert overload == left[("Reference.java", "LegacyIdGenerator::generate")]
        assert overload == left[("StaticImportMixed.java", 'generate("x-")')]
        other = "javac binds it to com.other.LegacyIdGenerator.generate()"
        assert other == left[("Lookalikes.java", "LegacyIdGenerator.generate()")]
        assert other == left[("Lookalikes.java", "LegacyIdGenerator::generate")]
        assert "Lookalikes.java" not in {f.path.rpartition("/")[2] for f in report.files}

    def test_a_pattern_with_argument_types_takes_that_overload(self, tmp_path: Path) -> None:
        """`generate(String)` rewrites the overload and leaves `generate()` alone."""
        write_tree(
            tmp_path, {**LIBRARY, "src/app/Overload.java": CASES["src/app/Overload.java"][0]}
        )
        text = (
            "recipe_id: r\nlanguage: java\nsummary: s\noperations:\n"
            "  - {type: method_invocation_replace,"
            " from: com.acme.ids.LegacyIdGenerator generate(String),"
            " to: com.acme.ids.LegacyIdGenerator prefixed()}\n"
        )

        report = run_recipe(recipe(text), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        out = (tmp_path / "src/app/Overload.java").read_text()
        assert 'LegacyIdGenerator.prefixed("pre-")' in out
        assert "LegacyIdGenerator.generate();" in out

    def test_an_instance_call_is_renamed_only_when_the_class_stays(self, tmp_path: Path) -> None:
        """`gen.generate()` on an instance: renamed for a same-class `to`, reported otherwise."""
        files = {
            "src/p/Gen.java": (
                "package p;\npublic class Gen {\n  public long generate() { return 1; }\n"
                "  public long nextId() { return 2; }\n}\n"
            ),
            "src/p/Use.java": (
                "package p;\nclass Use {\n  long f(Gen gen) { return gen.generate(); }\n}\n"
            ),
        }
        write_tree(tmp_path, files)
        rename = (
            "recipe_id: r\nlanguage: java\nsummary: s\noperations:\n"
            "  - {type: method_invocation_replace, from: p.Gen generate(), to: p.Gen nextId()}\n"
        )
        move = rename.replace("to: p.Gen nextId()", "to: p.Other nextId()")

        moved = run_recipe(recipe(move), tmp_path, record=False)
        renamed = run_recipe(recipe(rename), tmp_path, apply=True, record=False)

        assert RecipeStatus.NO_CHANGE == moved.status
        assert "is an expression of type p.Gen" in moved.unchanged_matches[0].reason
        assert RecipeStatus.APPLIED == renamed.status, renamed.errors
        assert "return gen.nextId();" in (tmp_path / "src/p/Use.java").read_text()


@needs_javac
class TestFallback:
    def test_a_file_javac_cannot_attribute_is_matched_by_syntax_and_says_so(
        self, tmp_path: Path
    ) -> None:
        """A missing dependency: that file only falls back, and the report names it."""
        broken = (
            "package app;\n\nimport com.acme.ids.LegacyIdGenerator;\nimport com.missing.Thing;\n\n"
            "class Broken {\n    long id(Thing t) {\n        return LegacyIdGenerator.generate();\n"
            '    }\n\n    String p() {\n        return LegacyIdGenerator.generate("p");\n    }\n}\n'
        )
        write_tree(tmp_path, {**before(), "src/app/Broken.java": broken})

        report = run_recipe(recipe(), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        [fallback] = report.matched_by_syntax
        assert "src/app/Broken.java" == fallback.path
        assert fallback.reason.startswith("javac cannot attribute it: ")
        assert "com.missing" in fallback.reason
        out = (tmp_path / "src/app/Broken.java").read_text()
        assert "return IdGenerator.nextId();" in out
        # the argument count still tells the overload apart without types
        assert 'LegacyIdGenerator.generate("p")' in out
        assert tree(tmp_path)["src/app/Overload.java"] == after()["src/app/Overload.java"]

    def test_through_the_command_line_the_fallback_is_a_field(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe run --json` carries `matched_by_syntax`; the text report shows it too."""
        write_tree(
            tmp_path / "ws",
            {
                "src/A.java": (
                    "class A { long f() { return com.acme.ids.LegacyIdGenerator.generate(); } }\n"
                )
            },
        )
        (tmp_path / "recipe.yaml").write_text(RECIPE)
        args = ["recipe", "run", str(tmp_path / "recipe.yaml"), "-C", str(tmp_path / "ws")]

        code = main([*args, "--json"])
        data = json.loads(capsys.readouterr().out)
        main(args)
        text = capsys.readouterr().out

        assert 0 == code
        assert ["src/A.java"] == [f["path"] for f in data["matched_by_syntax"]]
        assert "com.acme.ids" in data["matched_by_syntax"][0]["reason"]
        assert "syntax   src/A.java: matched by syntax, not types: javac cannot attribute" in text


class TestNoJdk:
    def test_without_a_jdk_every_file_is_matched_by_syntax(
        self, tmp_path: Path, no_jdk: None
    ) -> None:
        """No javac: the run goes on by syntax, and each file it read says why."""
        write_tree(tmp_path, before())

        report = run_recipe(recipe(), tmp_path, record=False)

        assert RecipeStatus.DRY_RUN == report.status, report.errors
        reasons = {f.path: f.reason for f in report.matched_by_syntax}
        assert set(reasons) == {p for p, (old, _) in CASES.items() if "generate" in old} | {
            "src/com/acme/ids/LegacyIdGenerator.java",
            "src/com/other/LegacyIdGenerator.java",
        }
        assert {"no JDK: javac is not on PATH"} == set(reasons.values())
        assert "helper" not in json.dumps(report.to_json()["matched_by_syntax"])

    def test_without_types_a_name_that_may_be_taken_is_written_qualified(
        self, tmp_path: Path, no_jdk: None
    ) -> None:
        """By syntax, another import of the simple name, a wildcard import of another
        package or a class of that name beside the file gets the qualified name."""
        beside = (
            "package app;\n\nimport com.acme.ids.LegacyIdGenerator;\n\nclass Beside {\n"
            "    long id() {\n        return LegacyIdGenerator.generate();\n    }\n}\n"
        )
        write_tree(
            tmp_path,
            {
                **before(),
                "src/app2/Beside.java": beside.replace("package app;", "package app2;"),
                "src/app2/IdGenerator.java": "package app2;\nclass IdGenerator {}\n",
            },
        )

        report = run_recipe(recipe(), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        out = tree(tmp_path)
        for case in ("src/app/Conflict.java", "src/app/WildcardConflict.java"):
            assert after()[case] == out[case]
        assert "return com.acme.ids.IdGenerator.nextId();" in out["src/app2/Beside.java"]
        assert after()["src/app/Overload.java"] == out["src/app/Overload.java"]


@needs_javac
class TestCommandLine:
    def test_recipe_run_and_test_on_the_project(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`recipe run --apply` gives the expected tree; `recipe test` passes the fixtures."""
        write_tree(tmp_path / "ws", before())
        (tmp_path / "recipe.yaml").write_text(RECIPE)

        code = main(
            [
                "recipe",
                "run",
                str(tmp_path / "recipe.yaml"),
                "-C",
                str(tmp_path / "ws"),
                "--apply",
                "--json",
            ]
        )
        data = json.loads(capsys.readouterr().out)
        tested = main(["recipe", "test", "legacy-id-generator"])
        out = capsys.readouterr().out

        assert 0 == code, data["errors"]
        assert [] == data["matched_by_syntax"]
        assert tree(tmp_path / "ws") == {p: t for p, t in after().items()}
        assert 0 == tested, out
        assert "type-aware (positive)" in out and "type-aware (compile)" in out
        assert "overloads-and-lookalikes (negative)" in out


@needs_javac
class TestHelper:
    def test_compiled_once_into_the_cache_and_reused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The helper's classes live in the user cache under a key; a second run reuses them."""
        monkeypatch.setenv("PATCHSMITH_CACHE_DIR", str(tmp_path / "cache"))
        attribution.helper_classes.cache_clear()
        try:
            first = attribution.helper_classes()
            assert not isinstance(first, str), first
            classes = first[0] / "JavaAttr.class"
            stamp = classes.stat().st_mtime_ns
            attribution.helper_classes.cache_clear()
            again = attribution.helper_classes()
        finally:
            attribution.helper_classes.cache_clear()
        assert not isinstance(again, str)
        assert first[0] == again[0]
        assert first[0].parent == tmp_path / "cache" / "javaattr"
        assert stamp == classes.stat().st_mtime_ns

    def test_offsets_are_utf8_bytes(self) -> None:
        """Offsets count UTF-8 bytes, so text before a site may hold any character."""
        text = (
            'class A { String s = "é😀"; long f() { return B.generate(); } }\n'
            "class B { static long generate() { return 1; } }\n"
        )
        answer = attribution.attribute({"A.java": text.encode()}, methods=["generate"])

        assert not isinstance(answer, str), answer
        [site] = answer["A.java"].sites
        data = text.encode()
        assert b"B.generate()" == data[site.start : site.end]
        assert b"generate" == data[site.name_start : site.name_end]
        assert site.receiver is not None and site.receiver.form == "simple"
        assert ("B", "generate", ()) == (site.declaring, site.method, site.params)

    def test_kinds_of_sites(self) -> None:
        """Imports, static imports, and how a call without a receiver got its method."""
        texts = {
            "p/Gen.java": (
                b"package p;\npublic class Gen { public static long make() { return 1; } }\n"
            ),
            "q/Use.java": (
                b"package q;\nimport p.Gen;\nimport static p.Gen.make;\n"
                b"class Use extends Base {\n  long f() { return make() + own(); }\n}\n"
                b"class Base { long own() { return 0; } }\n"
            ),
        }

        answer = attribution.attribute(texts, methods=["make", "own"])

        assert not isinstance(answer, str), answer
        sites = {(s.kind, s.unqualified): s for s in answer["q/Use.java"].sites}
        assert ("p.Gen", "make") == (
            sites["static_import", None].declaring,
            sites["static_import", None].method,
        )
        assert (("p.Gen", ()),) == sites["static_import", None].overloads
        assert "p.Gen" == sites["import", None].declaring
        assert "p.Gen" == sites["invocation", "static_import"].declaring
        assert "q.Base" == sites["invocation", "member"].declaring

    def test_a_failing_helper_is_a_reason(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A helper that cannot run answers with why, never with a partial result."""
        monkeypatch.setattr(attribution, "_JVM_OPTIONS", ("-XX:NoSuchOption",))

        answer = attribution.attribute({"A.java": b"class A {}\n"}, methods=["x"])

        assert isinstance(answer, str)
        assert answer.startswith("the attribution helper failed")


class TestMethodPattern:
    def test_the_shapes(self) -> None:
        assert MethodPattern("a.B", "m", ()) == parse_method_pattern("a.B m()")
        assert ("java.lang.String", "int[]", "*", "..") == parse_method_pattern(
            "a.B m(String, int..., *, ..)"
        ).params
        assert "a.B.C" == parse_method_pattern("a.B$C m(a.X$Y)").declaring
        assert ("a.X.Y",) == parse_method_pattern("a.B$C m(a.X$Y)").params
        for bad in ("B m()", "a.B m", "a.B m(Foo)", "a.B 1m()", "a.B m(a b)", "a.B m(int"):
            with pytest.raises(ValueError):
                parse_method_pattern(bad)

    def test_matching(self) -> None:
        pattern = parse_method_pattern("a.B m(java.lang.String, ..)")
        assert pattern.matches("a.B", "m", ["java.lang.String"])
        assert pattern.matches("a.B", "m", ["java.lang.String", "int", "long"])
        assert not pattern.matches("a.B", "m", ["int", "java.lang.String"])
        assert not pattern.matches("a.C", "m", ["java.lang.String"])
        assert not pattern.matches("a.B", "n", ["java.lang.String"])
        assert parse_method_pattern("a.B m(*)").matches("a.B", "m", ["int"])
        assert not parse_method_pattern("a.B m()").matches("a.B", "m", ["int"])
        assert parse_method_pattern("a.B m(a.B.C)").matches("a.B", "m", ["a.B$C"])

    @given(st.lists(st.sampled_from(["int", "long", "java.lang.String"]), max_size=5))
    def test_any_number_matches_every_list_and_arity_agrees(self, params: list[str]) -> None:
        assert parse_method_pattern("a.B m(..)").matches("a.B", "m", params)
        exact = parse_method_pattern(f"a.B m({', '.join(params)})")
        assert exact.matches("a.B", "m", params)
        assert exact.fits_arity(len(params)) and not exact.fits_arity(len(params) + 1)

    def test_a_recipe_takes_the_pattern_and_refuses_a_bad_one(self) -> None:
        good = RECIPE.replace("generate()\n", "generate(String, ..)\n")
        bad = RECIPE.replace("generate()\n", "generate(Strin g)\n")

        assert isinstance(parse_recipe(good), Recipe)
        failure = parse_recipe(bad)
        assert not isinstance(failure, Recipe)
        assert "INVALID_RECIPE" == failure.code.value
        assert "package.Class method(argTypes)" in failure.message


def test_free_names_ignore_qualified_parts(tmp_path: Path) -> None:
    """A fully qualified call uses no simple name: no import is added for it (no JDK needed
    for this: the syntactic path decides it the same)."""
    write_tree(tmp_path, {"src/app/Q.java": CASES["src/app/Qualified.java"][0]})

    report = run_recipe(recipe(), tmp_path, apply=True, record=False)

    assert RecipeStatus.APPLIED == report.status, report.errors
    assert CASES["src/app/Qualified.java"][1] == (tmp_path / "src/app/Q.java").read_text()


def move_recipe(source: str, target: str) -> Recipe:
    return recipe(
        "recipe_id: r\nlanguage: java\nsummary: s\noperations:\n"
        f"  - {{type: method_invocation_replace, from: {source}, to: {target}}}\n"
    )


@needs_javac
class TestMoreScopes:
    def test_static_wildcard_import_and_same_package_conflict(self, tmp_path: Path) -> None:
        """`import static X.*` gains a single static import of the new method; a class of the
        same simple name in the file's own package gets the qualified name."""
        write_tree(
            tmp_path,
            {
                **LIBRARY,
                "src/app/IdGenerator.java": "package app;\nclass IdGenerator {}\n",
                "src/app/Star.java": (
                    "package app;\n\nimport static com.acme.ids.LegacyIdGenerator.*;\n\n"
                    "class Star {\n    long id() {\n        return generate();\n    }\n}\n"
                ),
                "src/app/Same.java": (
                    "package app;\n\nimport com.acme.ids.LegacyIdGenerator;\n\n"
                    "class Same {\n    long id() {\n        return LegacyIdGenerator.generate();\n"
                    "    }\n}\n"
                ),
            },
        )

        report = run_recipe(recipe(), tmp_path, apply=True, record=False)

        assert RecipeStatus.APPLIED == report.status, report.errors
        assert () == report.matched_by_syntax
        star = (tmp_path / "src/app/Star.java").read_text()
        assert "import static com.acme.ids.LegacyIdGenerator.*;\n" in star
        assert "import static com.acme.ids.IdGenerator.nextId;\n" in star
        assert "return nextId();" in star
        same = (tmp_path / "src/app/Same.java").read_text()
        assert "return com.acme.ids.IdGenerator.nextId();" in same
        assert "import" not in same  # the old import went, none was added
        assert 0 == javac(tmp_path, tmp_path / "classes").returncode

    def test_nested_class_of_that_name_and_inherited_calls(self, tmp_path: Path) -> None:
        """A nested class named like the new one forces the qualified name; an inherited
        instance method called without a receiver is reported when `to` moves class."""
        write_tree(
            tmp_path,
            {
                "src/p/Gen.java": (
                    "package p;\npublic class Gen {\n  public static long make() { return 1; }\n"
                    "  public long generate() { return 1; }\n}\n"
                ),
                "src/q/Maker.java": (
                    "package q;\npublic class Maker {\n  public static long make2() { return 2; }\n"
                    "  public long next() { return 3; }\n}\n"
                ),
                "src/p/Sub.java": (
                    "package p;\nclass Sub extends Gen {\n  static class Maker {}\n"
                    "  long f() { return generate() + Gen.make(); }\n}\n"
                ),
            },
        )

        made = run_recipe(
            move_recipe("p.Gen make()", "q.Maker make2()"), tmp_path, apply=True, record=False
        )
        moved = run_recipe(
            move_recipe("p.Gen generate()", "q.Maker next()"), tmp_path, record=False
        )

        assert RecipeStatus.APPLIED == made.status, made.errors
        assert "generate() + q.Maker.make2();" in (tmp_path / "src/p/Sub.java").read_text()
        assert RecipeStatus.NO_CHANGE == moved.status
        assert "an inherited instance method" in moved.unchanged_matches[0].reason
        assert 0 == javac(tmp_path, tmp_path / "classes").returncode

    def test_same_class_rename_through_a_static_import(self, tmp_path: Path) -> None:
        """`to` in the same class: the static import follows the new name; the class's own
        calls are renamed without importing anything."""
        files = {
            "src/p/Gen.java": (
                "package p;\npublic class Gen {\n  public static long old() { return 1; }\n"
                "  public static long fresh() { return 2; }\n"
                "  static long twice() { return old() + old(); }\n}\n"
            ),
            "src/q/Use.java": (
                "package q;\n\nimport static p.Gen.old;\n\nclass Use {\n"
                "  long f() { return old(); }\n}\n"
            ),
        }
        write_tree(tmp_path, files)

        report = run_recipe(
            move_recipe("p.Gen old()", "p.Gen fresh()"), tmp_path, apply=True, record=False
        )

        assert RecipeStatus.APPLIED == report.status, report.errors
        assert (
            "package q;\n\nimport static p.Gen.fresh;\n\n"
            "class Use {\n  long f() { return fresh(); }\n}\n"
            == (tmp_path / "src/q/Use.java").read_text()
        )
        gen = (tmp_path / "src/p/Gen.java").read_text()
        assert "return fresh() + fresh();" in gen and "import" not in gen
        assert 0 == javac(tmp_path, tmp_path / "classes").returncode


@needs_javac
class TestHelperFailures:
    def test_without_a_cache_it_compiles_into_a_temporary_folder(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("PATCHSMITH_CACHE_DIR", "off")
        attribution.helper_classes.cache_clear()
        try:
            found = attribution.helper_classes()
        finally:
            attribution.helper_classes.cache_clear()
        assert not isinstance(found, str), found
        assert (found[0] / "JavaAttr.class").is_file()

    def test_a_helper_that_does_not_compile_is_a_reason(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        broken = tmp_path / "javaattr" / "JavaAttr.java"
        broken.parent.mkdir()
        broken.write_text("public final class JavaAttr { oops }\n")
        monkeypatch.setattr(attribution, "HELPER", broken)
        monkeypatch.setenv("PATCHSMITH_CACHE_DIR", str(tmp_path / "cache"))
        attribution.helper_classes.cache_clear()
        try:
            answer = attribution.attribute({"A.java": b"class A {}\n"}, methods=["x"])
        finally:
            attribution.helper_classes.cache_clear()
        assert isinstance(answer, str)
        assert answer.startswith("javac could not compile the attribution helper")
        assert [] == [p for p in (tmp_path / "cache" / "javaattr").iterdir()]

    def test_an_answer_patchsmith_cannot_read_is_a_reason(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        real = attribution.run_process

        def garbled(argv: list[str], **kwargs: object) -> object:
            done = real(argv, **kwargs)  # type: ignore[arg-type]
            return replace(done, stdout='{"files": [{"path": 1}]}')

        monkeypatch.setattr(attribution, "run_process", garbled)

        answer = attribution.attribute({"A.java": b"class A {}\n"}, methods=["x"])

        assert isinstance(answer, str)
        assert answer.startswith("the attribution helper answered what patchsmith cannot read")


def test_a_fixture_that_needs_types_says_it_was_matched_by_syntax(no_jdk: None) -> None:
    """Without a JDK the type-aware fixture fails (never passes by syntax), and says why."""
    entry = find_recipe("legacy-id-generator", None)
    assert not isinstance(entry, PatchFailure)

    results = {(r.case, r.kind.value): r for r in run_fixtures(entry)}

    typed = results["type-aware", "positive"]
    assert not typed.passed
    assert "matched by syntax: " in typed.detail and "no JDK: javac is not on PATH" in typed.detail
    assert results["overloads-and-lookalikes", "negative"].passed


@needs_javac
def test_a_static_import_that_also_brings_a_field_stays(tmp_path: Path) -> None:
    """`import static p.Gen.old` imports the field `old` too: it stays while the field is used."""
    write_tree(
        tmp_path,
        {
            "src/p/Gen.java": (
                "package p;\npublic class Gen {\n  public static final long old = 5;\n"
                "  public static long old() { return 1; }\n"
                "  public static long fresh() { return 2; }\n}\n"
            ),
            "src/q/Use.java": (
                "package q;\n\nimport static p.Gen.old;\n\nclass Use {\n"
                "  long f() { return old() + old; }\n}\n"
            ),
        },
    )

    report = run_recipe(
        move_recipe("p.Gen old()", "p.Gen fresh()"), tmp_path, apply=True, record=False
    )

    assert RecipeStatus.APPLIED == report.status, report.errors
    assert (
        "package q;\n\nimport static p.Gen.old;\nimport static p.Gen.fresh;\n\n"
        "class Use {\n  long f() { return fresh() + old; }\n}\n"
    ) == (tmp_path / "src/q/Use.java").read_text()
    assert 0 == javac(tmp_path, tmp_path / "classes").returncode
