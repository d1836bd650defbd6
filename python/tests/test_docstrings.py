"""Every example in the package's docstrings runs and prints what it shows (the classes,
their methods and the functions are the compiled module's, documented in Rust)."""

import doctest
import inspect

import promrate
from promrate import promql

PUBLIC = [getattr(promrate, name) for name in promrate.__all__ if name not in ("__version__",)]
PUBLIC += [getattr(promql, name) for name in promql.__all__]


def examples():
    """(name, docstring) of every public object and method, with the modules'."""
    found = [("promrate", promrate.__doc__), ("promrate.promql", promql.__doc__)]
    for obj in PUBLIC:
        if inspect.ismodule(obj):
            continue
        name = getattr(obj, "__qualname__", repr(obj))
        found.append((name, obj.__doc__))
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                doc = getattr(member, "__doc__", None)
                if not attr.startswith("__") and doc:
                    found.append((f"{name}.{attr}", doc))
    return found


def test_every_docstring_example_runs():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tested = 0
    for name, doc in examples():
        if not doc or ">>>" not in doc:
            continue
        test = parser.get_doctest(doc, {}, name, None, 0)
        runner.run(test)
        tested += 1
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} docstring examples failed (printed above)"
    assert tested >= 25, f"only {tested} docstrings with examples"


def test_every_public_class_and_function_shows_an_example():
    missing = [
        obj.__name__
        for obj in PUBLIC
        if not inspect.ismodule(obj)
        and not (isinstance(obj, type) and issubclass(obj, BaseException))
        and ">>>" not in (obj.__doc__ or "")
    ]
    assert missing == [], f"no example in the docstring of {missing}"
