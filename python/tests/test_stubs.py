"""The type stubs (promrate/_promrate.pyi) name what the compiled module has: every class
and function, and every public method and attribute of each class, no more, no less."""

import ast
import inspect
import pathlib

import promrate
from promrate import _promrate

STUB = pathlib.Path(promrate.__file__).with_name("_promrate.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    classes, functions = {}, set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("__"):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            classes[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            functions.add(node.name)
    return classes, functions


def runtime_members(cls):
    if issubclass(cls, BaseException):
        # Exceptions carry their attributes per instance (set where they are raised).
        return None
    return {name for name in vars(cls) if not name.startswith("__")}


def test_stubs_name_every_class_function_and_member():
    classes, functions = stub_names()
    runtime_classes = {n for n, obj in vars(_promrate).items() if inspect.isclass(obj)}
    runtime_functions = {n for n, obj in vars(_promrate).items() if callable(obj) and not inspect.isclass(obj)}
    assert set(classes) == runtime_classes
    assert functions == runtime_functions
    for name, members in classes.items():
        have = runtime_members(getattr(_promrate, name))
        if have is not None:
            assert members == have, name


def test_the_package_exports_what_the_module_has():
    assert set(promrate.__all__) - {"promql", "__version__"} == {
        n for n in vars(_promrate) if not n.startswith("_") and n not in ("RangeFunctions", "Anchored", "Smoothed", "StartAware", "Semantics")
    }
    assert (STUB.parent / "py.typed").is_file()


def test_signatures_show_their_defaults():
    # help() shows these: a default that is a plain value is that value (an enum member,
    # which a signature's text cannot hold, stays `...`, as in the stubs).
    assert str(inspect.signature(promrate.Tracker)).startswith("(selectors=(), *, retention=None")
    assert "by=(), scope=Ellipsis" in str(inspect.signature(promrate.Query))
    assert str(inspect.signature(promrate.parse)) == "(page, format=None, *, strict=True, errors='yield')"
