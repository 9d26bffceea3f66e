"""The table of codemod backends: every operation and import language has exactly one."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from patchsmith.codemod import backend_table
from patchsmith.codemod.backend_table import backend_for, fixes_imports, import_fixer, runs
from patchsmith.codemod.backends import config, java, python
from patchsmith.codemod.recipe import (
    AstGrepRule,
    ConfigKeyRename,
    Language,
    MethodInvocationReplace,
    RecipeOperation,
    RecipePart,
    RenameSymbol,
)


def _operation_types() -> list[type[RecipePart]]:
    union = typing.get_args(RecipeOperation)[0]
    return list(typing.get_args(union))


class TestLookUp:
    @pytest.mark.parametrize(
        ("op", "backend"),
        [
            (RenameSymbol.model_validate({"from": "a.f", "to": "g"}), python.rename_symbol),
            (
                MethodInvocationReplace.model_validate(
                    {"from": "java.util.Vector addElement()", "to": "java.util.Vector add()"}
                ),
                java.replace_invocations,
            ),
            (ConfigKeyRename.model_validate({"from": "a.b", "to": "c"}), config.rename_key),
        ],
    )
    def test_each_operation_goes_to_its_backend(self, op: RecipePart, backend: object) -> None:
        """An operation is dispatched to the function its backend registered for its type."""
        assert backend is backend_for(op)

    @pytest.mark.parametrize(
        ("language", "fixer"),
        [(Language.PYTHON, python.fix_imports), (Language.JAVA, java.fix_imports)],
    )
    def test_each_import_language_has_its_fixer(self, language: Language, fixer: object) -> None:
        """Import changes go to the backend that registered for the recipe's language."""
        assert fixer is import_fixer(language)

    def test_every_operation_but_ast_grep_has_a_backend(self) -> None:
        """The registered types are exactly those a recipe may hold, but ast-grep rules
        (which the dispatcher batches itself)."""
        backend_table._load()

        assert {t for t in _operation_types() if t is not AstGrepRule} == set(
            backend_table._BACKENDS
        )

    def test_an_unknown_operation_is_a_lookup_error(self) -> None:
        """A type no backend registered is a bug, named, not a silent skip."""
        with pytest.raises(LookupError, match="AstGrepRule"):
            backend_for(AstGrepRule.model_validate({"rule": {"pattern": "x"}}))
        with pytest.raises(LookupError, match="toml imports"):
            import_fixer(Language.TOML)


class TestRegistration:
    def test_a_second_module_cannot_take_a_type(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Two backends for one operation type fail at once, naming both modules."""
        monkeypatch.setattr(backend_table, "_BACKENDS", dict(backend_table._BACKENDS))

        def impostor(*_args: object) -> None:
            return None

        impostor.__module__ = "elsewhere"
        with pytest.raises(RuntimeError, match="elsewhere"):
            runs(RenameSymbol)(impostor)

    def test_the_same_module_may_register_again(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Re-registering from the same module (a reload) replaces, never fails."""
        monkeypatch.setattr(backend_table, "_IMPORT_FIXERS", dict(backend_table._IMPORT_FIXERS))

        assert python.fix_imports is fixes_imports(Language.PYTHON)(python.fix_imports)

    def test_registration_needs_no_prior_import(self) -> None:
        """A fresh process that imports only the table still finds every backend."""
        code = (
            "from patchsmith.codemod.backend_table import backend_for, import_fixer\n"
            "from patchsmith.codemod.recipe import RenameSymbol, Language\n"
            "op = RenameSymbol.model_validate({'from': 'a.f', 'to': 'g'})\n"
            "print(backend_for(op).__module__,"
            " import_fixer(Language.JAVA).__module__)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()

        assert ["patchsmith.codemod.backends.python", "patchsmith.codemod.backends.java"] == out
