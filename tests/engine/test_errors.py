"""claimbook.errors: one module holds every error the engine raises, each a ValueError."""

import ast
import inspect

from claimbook import errors, paths

CLASSES = [
    value
    for name, value in vars(errors).items()
    if inspect.isclass(value) and value.__module__ == errors.__name__
]


def test_every_error_is_a_book_error_and_a_value_error_and_is_exported():
    assert len(CLASSES) > 20
    for cls in CLASSES:
        assert issubclass(cls, errors.BookError) and issubclass(cls, ValueError), cls
        assert cls.__name__ in errors.__all__, cls
        assert cls.__name__.endswith("Error"), cls
        assert (cls.__doc__ or "").strip(), f"{cls.__name__} says nothing of when it is raised"
    assert sorted(errors.__all__) == sorted(cls.__name__ for cls in CLASSES)


def _exception_classes(path):
    """The classes a module defines that derive from a name ending in Error or Exception."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            if any(base.endswith(("Error", "Exception")) for base in bases):
                where = path.relative_to(paths.REPO_ROOT)
                found.append(f"{where}: {node.name}({', '.join(bases)})")
    return found


def test_no_other_module_of_the_engine_defines_an_error():
    engine = paths.REPO_ROOT / "engine" / "claimbook"
    elsewhere = [
        found
        for path in sorted(engine.rglob("*.py"))
        if path.name != "errors.py" or path.parent != engine
        for found in _exception_classes(path)
    ]
    assert elsewhere == []
