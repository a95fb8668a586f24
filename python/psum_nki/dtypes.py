"""NKI dtypes (SPEC §9.2): each is a :class:`DType` with its psum keyword and
byte size. A DType is also a numpy dtype-like object: numpy reads its
``dtype`` attribute, which imports numpy (and ml_dtypes for bfloat16 and the
fp8 types) only when a kernel hands the dtype to numpy."""

from .errors import TraceError, Unsupported, show

# name: (psum keyword, bytes, numpy name or None, needs ml_dtypes)
TABLE = {
    "float32": ("f32", 4, "float32", False),
    "bfloat16": ("bf16", 2, "bfloat16", True),
    "float16": ("f16", 2, "float16", False),
    "tfloat32": ("tf32", 4, "float32", False),
    "float8_e4m3": ("fp8", 1, "float8_e4m3", True),
    "float8_e4m3fn": ("fp8", 1, "float8_e4m3fn", True),
    "float8_e5m2": ("fp8_e5m2", 1, "float8_e5m2", True),
    "float8_e8m0fnu": ("u8", 1, "float8_e8m0fnu", True),
    "float8_e4m3fn_x4": ("fp8x4", 4, None, False),
    "float8_e5m2_x4": ("fp8x4", 4, None, False),
    "float4_e2m1fn_x4": ("fp4x4", 2, None, False),
    "int8": ("i8", 1, "int8", False),
    "uint8": ("u8", 1, "uint8", False),
    "bool_": ("u8", 1, "bool", False),
    "int16": ("i16", 2, "int16", False),
    "uint16": ("u16", 2, "uint16", False),
    "int32": ("i32", 4, "int32", False),
    "uint32": ("u32", 4, "uint32", False),
}

ALIASES = {"bool": "bool_", "float": "float32", "int": "int32", "float64": "float32", "int64": "int32", "uint64": "uint32", "fp32": "float32"}


class DType:
    """An NKI dtype (``nl.float32`` …), comparable with its name, numpy's types and dtypes."""

    def __init__(self, name):
        self.name = name
        self.key, self.size, self._numpy, self._ml = TABLE[name]

    @property
    def dtype(self):
        """The numpy dtype (what ``np.zeros(…, dtype=nl.bfloat16)`` reads)."""
        if self._numpy is None:
            raise Unsupported("nl.%s has no numpy equivalent" % self.name)
        try:
            import numpy
        except ImportError:
            raise TraceError("nl.%s as a numpy dtype needs numpy" % self.name, "setup") from None
        if self._ml:
            try:
                import ml_dtypes  # noqa: F401 (registers bfloat16 and the fp8 types with numpy)
            except ImportError:
                raise TraceError(
                    "nl.%s as a numpy dtype needs the ml_dtypes package (pip install ml_dtypes)" % self.name,
                    "setup",
                ) from None
        return numpy.dtype(self._numpy)

    @property
    def itemsize(self):
        return self.size

    def __eq__(self, other):
        try:
            return lookup(other) is self
        except TraceError:
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name

    __str__ = __repr__


BY_NAME = {name: DType(name) for name in TABLE}


def name_of(dtype):
    """The NKI name of a dtype given as a DType, a string, a numpy type or dtype, or an ml_dtypes type."""
    if isinstance(dtype, DType):
        return dtype.name
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, type):
        name = dtype.__name__
    else:
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):
            raise Unsupported("dtype %s" % show(dtype))
    name = name.replace("nl.", "").replace("np.", "")
    return ALIASES.get(name, name)


def lookup(dtype):
    """The :class:`DType` of ``dtype`` (any spelling :func:`name_of` accepts)."""
    name = name_of(dtype)
    if name not in BY_NAME:
        raise Unsupported("dtype %s" % show(dtype))
    return BY_NAME[name]
