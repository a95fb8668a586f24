"""The registry of the NKI API (SPEC §9.2, §9.3): every public name the
tracer knows, with NKI's own signature and its lowering, or the reason it is
refused. Adding an API is one registration here-through (``language``,
``isa``, ``toplevel``); ``shim`` builds the modules a kernel imports from the
registry, and ``ops`` installs the tensor operators from it.

A call binds against the signature (both of NKI's calling forms where they
differ: the newer one that names the destination ``dst``, and the older one
that returns a fresh tile). A keyword the signature does not have is refused
listing the ones it has; a known keyword the tracer does not model is refused
by name unless it keeps its default; a missing argument is named.
"""

import inspect

from .errors import Invalid, Unsupported, show

REGISTRY = {}


class Named:
    """A default value that names an NKI or numpy constant (``np.equal``)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


class _Numpy:
    def __getattr__(self, name):
        return Named("np." + name)


class Args:
    """The bound arguments of a call: one attribute per parameter of any of
    the API's forms (None where the form has no such parameter), ``given``
    (the names the call passed) and ``form`` (``"dst"`` or ``"legacy"``)."""

    def __init__(self, values, given, form, names):
        for n in names:
            setattr(self, n, None)
        for k, v in values.items():
            setattr(self, k, v)
        self.given = given
        self.form = form


class Entry:
    """One public name: a value, a lowering with its signatures, or a refusal."""

    def __init__(self, qualname, value=None, forms=(), unmodelled=None, refused=None):
        self.qualname = qualname
        self.module, _, self.name = qualname.rpartition(".")
        self.value = value
        self.forms = forms
        self.unmodelled = unmodelled or {}
        self.refused = refused

    @property
    def status(self):
        return "refused" if self.refused else "implemented"


def signature(text, ns):
    """``inspect.Signature`` of ``(params…)`` text, defaults evaluated in ``ns``."""
    scope = dict(ns)
    scope["np"] = _Numpy()
    exec("def _f%s: pass" % text, scope)
    return inspect.signature(scope["_f"])


#: The default of the ``name`` keyword a form gets when its NKI signature ends
#: with ``**kwargs`` instead (NKI's older forms): an instruction's label.
IMPLICIT_NAME = Named("None")


def with_name(sig):
    """``sig`` taking ``name=`` (an instruction's label, without effect on the
    program), which every NKI API accepts: by name in the newer forms, through
    ``**kwargs`` in the older ones."""
    if "name" in sig.parameters or any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return sig
    extra = inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=IMPLICIT_NAME)
    return sig.replace(parameters=list(sig.parameters.values()) + [extra])


def is_tensor(x):
    return getattr(x, "is_nki_tensor", False)


def api(qualname, sig, legacy=None, unmodelled=None, ns=None):
    """Registers the lowering decorated as ``qualname`` with NKI's signature
    ``sig`` (and the older form ``legacy``); ``unmodelled`` maps keywords to
    the reason the tracer does not model them."""

    def register(lower):
        forms = [("dst" if "(dst" in sig.replace(" ", "") else "only", with_name(signature(sig, ns or {})))]
        if legacy is not None:
            forms.append(("legacy", with_name(signature(legacy, ns or {}))))
        entry = Entry(qualname, forms=forms, unmodelled=unmodelled)
        entry.value = wrapper(entry, lower)
        REGISTRY[qualname] = entry
        return lower

    return register


def value(qualname, obj):
    """Registers a constant, class or module-level object."""
    REGISTRY[qualname] = Entry(qualname, value=obj)
    return obj


def refuse(qualname, reason):
    """Registers a public name the tracer refuses where a kernel uses it."""
    entry = Entry(qualname, refused=reason)

    def refused(*args, **kwargs):
        raise Unsupported("%s is not supported by psum trace: %s" % (qualname, reason))

    refused.__name__ = entry.name
    refused.__qualname__ = qualname
    entry.value = refused
    REGISTRY[qualname] = entry


def refuse_all(module, names, reason):
    for n in names.split():
        refuse(module + "." + n, reason)


def _describe(sig):
    return ", ".join(
        p.name
        for p in sig.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is not IMPLICIT_NAME
    )


def bind(entry, args, kwargs):
    """The :class:`Args` of a call, or the refusal that names what is wrong."""
    forms = entry.forms
    order = list(forms)
    if len(forms) > 1 and "dst" not in kwargs:
        order.sort(key=lambda f: -_fit(f[1], args, kwargs))
    first_error = None
    for label, sig in order:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            if first_error is None:
                first_error = (label, sig)
            continue
        given = set(bound.arguments)
        bound.apply_defaults()
        names = set()
        for _, s in forms:
            names.update(s.parameters)
        a = Args(bound.arguments, given, label, names)
        for kw, reason in entry.unmodelled.items():
            if kw in given and not _is_default(sig, kw, bound.arguments[kw]):
                raise Unsupported(
                    "%s(%s=%s): the keyword '%s' is not modelled (%s)"
                    % (entry.qualname, kw, show(bound.arguments[kw]), kw, reason)
                )
        return a
    report = first_error[1]
    if len(forms) > 1 and "dst" not in kwargs and not (args and is_tensor(args[0])):
        report = forms[-1][1]
    raise Invalid(_bind_error(entry, report, args, kwargs))


TENSOR_PARAMS = set(
    "dst src data data0 data1 data2 stationary moving index indices on_true_tile on_true predicate src_buffer "
    "vals segment_ids reduce_res dst_idx dst_scale stationary_scale moving_scale x y".split()
)


def _fit(sig, args, kwargs):
    """How well a call fits a form: -1 if it does not bind, else the number of
    tensor parameters given a tensor less those given something else."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return -1000
    score = 0
    for name, v in bound.arguments.items():
        if name in TENSOR_PARAMS:
            score += 1 if is_tensor(v) else -1
    return score


def _is_default(sig, name, v):
    p = sig.parameters[name]
    d = p.default
    if v is d:
        return True
    if isinstance(d, (bool, int, float, str, tuple, type(None))) and isinstance(v, (bool, int, float, str, tuple, type(None))):
        return type(v) is type(d) and v == d
    return False


def _bind_error(entry, sig, args, kwargs):
    accepted = set()
    for _, s in entry.forms:
        accepted.update(p.name for p in s.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    for k in kwargs:
        if k not in accepted:
            return "%s() got an unexpected keyword argument '%s' (it takes: %s)" % (
                entry.qualname,
                k,
                _describe(entry.forms[0][1]) + "".join(
                    "; or %s" % _describe(s) for _, s in entry.forms[1:]
                ),
            )
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in params):
        return "%s() takes at most %d positional arguments (%d given)" % (entry.qualname, len(positional), len(args))
    named = set(kwargs) | {p.name for p in positional[: len(args)]}
    for p in params:
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in named:
            return "%s() is missing its argument '%s'" % (entry.qualname, p.name)
    dup = [k for k in kwargs if k in {p.name for p in positional[: len(args)]}]
    if dup:
        return "%s() got several values for the argument '%s'" % (entry.qualname, dup[0])
    return "%s() cannot take these arguments (it takes: %s)" % (entry.qualname, _describe(sig))


def wrapper(entry, lower):
    """The function a kernel calls: binds, then lowers."""

    def call(*args, **kwargs):
        return lower(bind(entry, args, kwargs))

    call.__name__ = entry.name
    call.__qualname__ = entry.qualname
    call.__signature__ = entry.forms[0][1]
    call.__doc__ = lower.__doc__
    return call


def names(module):
    """{name: value} of the public names registered under ``module``."""
    return {e.name: e.value for e in REGISTRY.values() if e.module == module}


def listing():
    """``MODULE.NAME<TAB>implemented`` or ``…<TAB>refused<TAB>REASON`` lines, sorted."""
    out = []
    for q in sorted(REGISTRY):
        e = REGISTRY[q]
        out.append("%s\t%s" % (q, e.status) + ("\t" + e.refused if e.refused else ""))
    return out
