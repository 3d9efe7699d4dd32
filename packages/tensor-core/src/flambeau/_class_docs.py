"""Docstrings of the classes the C++ core defines (``Tensor``, ``dtype``, ``device``,
``memory_format``, ``Generator``).

pybind11 gives these classes no docstring, and the API reference and ``help()`` show
the class docstring first, so the core's Python face assigns one at import. Written
here, in Python, so that the text is edited without a rebuild of ``_C``.
"""

from __future__ import annotations

from flambeau import _C

TENSOR = """A multi-dimensional array of elements of one dtype on one device.

Every tensor flambeau creates is an instance of this class (PyTorch's ``torch.Tensor``).
Tensors are usually made by factory functions (:func:`flambeau.tensor`,
:func:`flambeau.zeros`, :func:`flambeau.arange`, :func:`flambeau.from_numpy` ...) rather
than by calling the class. ``Tensor(data)`` and ``Tensor(*sizes)`` remain as PyTorch's
legacy constructors: a float32 tensor copied from ``data``, or one of the given shape
whose values are not initialized.

Its attributes say what it holds: ``shape`` (a :class:`flambeau.Size`, also ``size()``),
``dtype``, ``device``, ``stride()`` and ``layout``. For autograd, ``requires_grad``,
``grad`` (the accumulated gradient of a leaf after ``backward()``), ``grad_fn`` (the node
that produced a non-leaf) and ``is_leaf``.

Most operators are also methods: ``x.add(y)`` is ``flambeau.add(x, y)``. A method whose
name ends with an underscore (``add_``, ``zero_``) modifies the tensor in place and
returns it. Views (``view``, ``transpose``, slicing) share the storage of their base
tensor, so writing to one changes the other; ``clone()`` copies.

>>> x = flambeau.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([[2., 4.],
        [6., 8.]])
"""

DTYPE = """The type of a tensor's elements, such as ``flambeau.float32`` or ``flambeau.int64``.

The dtypes are predefined objects of this class (PyTorch's ``torch.dtype``) and cannot
be created by calling it; ``tensor.dtype`` gives a tensor's. Each one answers
``is_floating_point``, ``is_complex``, ``is_signed`` and ``itemsize`` (bytes per
element); :func:`flambeau.finfo` and :func:`flambeau.iinfo` give the limits of its
values. Besides the canonical names each dtype has PyTorch's aliases
(``flambeau.float`` is ``flambeau.float32``, ``flambeau.long`` is ``flambeau.int64``).

>>> flambeau.float32.itemsize, flambeau.float32.is_floating_point
(4, True)
"""

DEVICE = """Where a tensor's memory lives: a device type and an optional index.

``device(type, index=None)`` accepts a type (``"cpu"``, or the type of an installed
backend plugin) with an optional index, or one string ``"type:index"``
(``device("cpu:0")``). Its attributes ``type`` (a str) and ``index`` (an int, or None
for "the current device of that type") read it back. Wherever flambeau takes a device
argument, a string naming one is accepted too. This is PyTorch's
``torch.device``; flambeau computes on the CPU itself and on other devices only through
backend plugins.

>>> flambeau.device("cpu")
device(type='cpu')
>>> flambeau.zeros(2).device.type
'cpu'
"""

MEMORY_FORMAT = """How the dimensions of a tensor are laid out in memory (PyTorch's
``torch.memory_format``).

The values are predefined: ``flambeau.contiguous_format`` (row-major, the default),
``flambeau.channels_last`` (NCHW shapes stored as NHWC), ``flambeau.channels_last_3d``
(NCDHW stored as NDHWC) and ``flambeau.preserve_format`` (keep the input's layout). They
are taken by ``memory_format=`` arguments, as in ``x.contiguous(memory_format=...)``,
``x.is_contiguous(memory_format=...)`` and ``flambeau.empty_like``.

>>> x = flambeau.zeros(1, 3, 2, 2).contiguous(memory_format=flambeau.channels_last)
>>> x.stride(), x.is_contiguous(memory_format=flambeau.channels_last)
((12, 1, 6, 3), True)
>>> type(flambeau.channels_last) is flambeau.memory_format
True
"""

GENERATOR = """A pseudo-random number generator: the state that random operators draw from.

``Generator(device="cpu")`` makes one with its own state, independent of the default
generator that ``flambeau.manual_seed`` seeds (``flambeau.default_generator``). Pass it
as ``generator=`` to a random operator (``flambeau.rand``, ``randn``, ``randint``,
``randperm``, ``multinomial``, ``Tensor.normal_`` ...) to make its draws reproducible
without touching the global state. ``manual_seed(seed)`` sets the seed and returns the
generator, ``seed()`` picks a fresh nondeterministic one, ``initial_seed()`` returns the
last seed, and ``get_state()`` / ``set_state(state)`` save and restore the whole state
as a uint8 tensor. This is PyTorch's ``torch.Generator``.

>>> g = flambeau.Generator().manual_seed(0)
>>> a = flambeau.rand(3, generator=g)
>>> b = flambeau.rand(3, generator=g.manual_seed(0))
>>> bool((a == b).all())
True
"""


def install() -> None:
    for cls, doc in (
        (_C.Tensor, TENSOR),
        (_C.dtype, DTYPE),
        (_C.device, DEVICE),
        (_C.memory_format, MEMORY_FORMAT),
        (_C.Generator, GENERATOR),
    ):
        if not cls.__doc__:  # a docstring the C++ gives one day wins
            cls.__doc__ = doc
