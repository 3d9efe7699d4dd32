"""TorchScript's classes that do not derive from ``nn.Module``, and its warnings and errors.

With the JIT disabled nothing creates a ``ScriptFunction`` or a
``RecursiveScriptClass`` (``script`` returns the function or class itself); the
classes exist so that ``isinstance`` checks and ``except`` clauses port.
"""

from __future__ import annotations

import sys
import typing
import warnings


class Error(Exception):
    """The exception TorchScript code raises (``torch.jit.Error``).

    flambeau runs no TorchScript, so nothing raises it; ``except`` clauses still port.

    >>> try:
    ...     raise flambeau.jit.Error("shape mismatch")
    ... except flambeau.jit.Error as e:
    ...     print(e)
    shape mismatch
    """


Error.__module__ = "flambeau.jit"


class ScriptFunction:
    """A compiled function. ``script`` returns the Python function instead, so none exists.

    As in PyTorch, it has no constructor.

    >>> def f(x):
    ...     return x + 1
    >>> isinstance(flambeau.jit.script(f), flambeau.jit.ScriptFunction)
    False
    """

    def __new__(cls, *args, **kwargs):
        raise TypeError("ScriptFunction: No constructor defined!")


ScriptFunction.__module__ = "flambeau.jit"


class RecursiveScriptClass:
    """A scripted class's instance. ``script`` returns the class itself, so none exists.

    >>> class Counter:
    ...     def __init__(self):
    ...         self.n = 0
    >>> isinstance(flambeau.jit.script(Counter)(), flambeau.jit.RecursiveScriptClass)
    False
    """


class ScriptWarning(Warning):
    """A warning of the TorchScript compiler.

    >>> issubclass(flambeau.jit.ScriptWarning, Warning)
    True
    """


class TracerWarning(Warning):
    """A warning of the tracer (a Python value baked into a trace). flambeau does not
    trace, so it never warns; filters that name the class still work.

    >>> import warnings
    >>> warnings.filterwarnings("ignore", category=flambeau.jit.TracerWarning)
    """

    @staticmethod
    def ignore_lib_warnings():
        """Ignores TracerWarnings raised inside flambeau's own modules (but flambeau.jit's),
        as ``torch.jit.TracerWarning.ignore_lib_warnings`` does for torch's.

        >>> flambeau.jit.TracerWarning.ignore_lib_warnings()
        """
        warnings.filterwarnings("ignore", category=TracerWarning, module="flambeau.(?!jit)")


class TracingCheckError(Exception):
    """Raised by ``trace``'s check when a trace does not reproduce its function.

    flambeau's ``trace`` returns the function itself, which cannot disagree with
    itself, so it never raises this; the message is built as PyTorch builds it.

    >>> print(flambeau.jit.TracingCheckError(None, None, "outputs differ"))
    Tracing failed sanity checks!
    outputs differ
    """

    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n"
            self.message += _indent(graph_diff_error) + "\n"
        if tensor_compare_error is not None:
            self.message += (
                "ERROR: Tensor-valued Constant nodes differed in value across invocations. "
                "This often indicates that the tracer has encountered untraceable code.\n"
            )
            self.message += _indent(tensor_compare_error) + "\n"
        super().__init__(self.message)


def _indent(text: str) -> str:
    return "".join("\t" + line for line in text.splitlines(keepends=True))


def _source_namespace(frame) -> dict:
    """The names TorchScript source may use: ``torch`` (flambeau, since the source was
    written for PyTorch), the typing names the language has built in, then what the
    calling code sees, which takes precedence."""
    import flambeau

    namespace = {"torch": flambeau, "Tensor": flambeau.Tensor}
    for name in ("Any", "Dict", "List", "Optional", "Tuple", "Union"):
        namespace[name] = getattr(typing, name)
    namespace.update(frame.f_globals)
    namespace.update(frame.f_locals)
    return namespace


class CompilationUnit:
    """Functions defined from TorchScript source text, run as Python.

    TorchScript is a subset of Python, so each definition is executed as Python with
    ``torch`` bound to flambeau and the caller's names in scope; the functions are its
    attributes (``find_function`` returns None for a missing one).

    >>> cu = flambeau.jit.CompilationUnit('''
    ... def add_one(x):
    ...     return x + 1
    ... ''')
    >>> cu.add_one(flambeau.zeros(2))
    tensor([1., 1.])
    """

    def __init__(self, lang: str = "", _frames_up: int = 0):
        self._functions: dict[str, typing.Callable] = {}
        if lang:
            self.define(lang, _frames_up=_frames_up + 1)

    def define(self, src: str, rcb=None, _frames_up: int = 0) -> None:
        """Defines the functions of the source text ``src``.

        ``rcb`` (a resolution callback: name -> value) is unused: names resolve in the
        calling frame's scope, where PyTorch's default callback looks.

        >>> cu = flambeau.jit.CompilationUnit()
        >>> cu.define("def neg(x):\\n    return -x\\n")
        >>> cu.neg(flambeau.ones(1))
        tensor([-1.])
        """
        del rcb
        filename = "<flambeau.jit.CompilationUnit>"
        namespace = _source_namespace(sys._getframe(_frames_up + 1))
        namespace.update(self._functions)  # earlier definitions may be called
        exec(compile(src, filename, "exec"), namespace)  # noqa: S102 - the user's own source
        for name, value in namespace.items():
            code = getattr(value, "__code__", None)
            if code is not None and code.co_filename == filename:
                self._functions[name] = value

    def find_function(self, name: str):
        """The function ``name``, or None.

        >>> flambeau.jit.CompilationUnit().find_function("missing") is None
        True
        """
        return self._functions.get(name)

    def get_functions(self) -> list:
        """The functions defined so far.

        >>> cu = flambeau.jit.CompilationUnit("def one():\\n    return 1\\n")
        >>> [f.__name__ for f in cu.get_functions()]
        ['one']
        """
        return list(self._functions.values())

    def __getattr__(self, name: str):
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"'CompilationUnit' has no attribute '{name}'")


CompilationUnit.__module__ = "flambeau.jit"
