"""The modules a kernel imports (SPEC §9.1): ``nki``, ``nki.language`` (a
package, with ``constants``),
``nki.isa``, ``nki.compiler`` (with ``psum`` and ``sbuf``), ``nki.typing``,
``nki.collectives`` and the older ``neuronxcc.nki…`` spellings, built from the
registry; each exports the public names only, and a name the registry does not
know is refused where the kernel uses it. Modules that are not installed
(``torch``, ``pytest``…) import as placeholders that fail only where the
kernel uses them, but for the frameworks' NKI decorators (``FRAMEWORK_JIT``),
which are ``nki.jit``; a submodule of ``nki`` the registry does not have fails
to import, naming it. :func:`install` and :func:`uninstall` undo each other."""

import importlib.abc
import importlib.machinery
import sys
import types

from . import api, isa, language, ops, toplevel  # noqa: F401 (the registrations)
from .errors import STATE, RefusedImport, Unsupported, kernel_loc

MODULES = ("nki", "nki.language", "nki.language.constants", "nki.isa", "nki.compiler", "nki.compiler.psum", "nki.compiler.sbuf", "nki.typing", "nki.collectives")
DOCS = {
    "nki": "NKI, traced by psum.",
    "nki.language": "nki.language, traced by psum.",
    "nki.language.constants": "Constants of nki.language (sizeinbytes), traced by psum.",
    "nki.isa": "nki.isa, traced by psum.",
    "nki.compiler": "Compiler controls and direct allocation, traced by psum.",
    "nki.compiler.psum": "Direct PSUM allocation.",
    "nki.compiler.sbuf": "Direct SBUF allocation.",
    "nki.typing": "Type annotations.",
    "nki.collectives": "Collective communication (refused by psum).",
}


#: Decorators of the machine-learning frameworks that compile an NKI kernel
#: (the older SDK's ``from torch_neuronx import nki_jit``): ``nki.jit`` when
#: the framework is not installed.
FRAMEWORK_JIT = {("torch_neuronx", "nki_jit"), ("torch_neuronx.xla_impl.ops", "nki_jit")}


def build_module(name, attrs):
    m = types.ModuleType(name, DOCS.get(name))

    def missing(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise Unsupported("%s.%s is not part of the NKI API psum trace knows" % (name, attr))

    m.__getattr__ = missing
    m.__dict__.update(attrs)
    m.__all__ = sorted(attrs)
    return m


def build():
    """{module name: module} for every spelling a kernel may import."""
    mods = {name: build_module(name, api.names(name)) for name in MODULES}
    for name in MODULES:
        mods[name].__path__ = []
        parent, _, child = name.rpartition(".")
        if parent:
            mods[parent].__dict__[child] = mods[name]
    out = {}
    for name, m in mods.items():
        out[name] = m
        out["neuronxcc." + name] = m
    neuronxcc = build_module("neuronxcc", {"nki": mods["nki"]})
    neuronxcc.__path__ = []
    out["neuronxcc"] = neuronxcc
    return out


class Placeholder(types.ModuleType):
    """A module that is not installed: any use of it is refused at the kernel line."""

    def __init__(self, name, loc):
        super().__init__(name)
        self.__path__ = []
        self.__psum_loc = loc

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if (self.__name__, attr) in FRAMEWORK_JIT:
            return api.REGISTRY["nki.jit"].value
        return Missing("%s.%s" % (self.__name__, attr), self.__name__, self.__psum_loc)


class Missing:
    """An attribute of a placeholder module: refused when used."""

    def __init__(self, what, module, loc):
        self._what = what
        self._module = module
        self._loc = loc

    def _refuse(self, *args, **kwargs):
        where = " (imported at %s)" % self._loc if self._loc else ""
        raise Unsupported("%s: module '%s' is not installed%s" % (self._what, self._module.split(".")[0], where))

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing("%s.%s" % (self._what, attr), self._module, self._loc)

    __call__ = _refuse
    __getitem__ = _refuse
    __iter__ = _refuse
    __bool__ = _refuse
    __index__ = _refuse
    __float__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse


class PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path``: a module nothing else finds becomes a placeholder."""

    def find_spec(self, fullname, path=None, target=None):
        f = sys._getframe(1)
        while f is not None and "importlib" in f.f_code.co_filename:
            f = f.f_back
        if f is None or STATE.display(f.f_code.co_filename) is None:
            return None
        if fullname.startswith(("nki.", "neuronxcc.nki.")):
            raise RefusedImport("%s is not part of the NKI API psum trace knows" % fullname)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return Placeholder(spec.name, kernel_loc())

    def exec_module(self, module):
        pass


class Installed:
    """What :func:`install` changed, for :func:`uninstall`."""

    def __init__(self, saved, finder):
        self.saved = saved
        self.finder = finder


def install(placeholders=True):
    """Puts the stand-in modules in ``sys.modules`` (replacing any real NKI) and,
    with ``placeholders``, makes missing modules import as placeholders."""
    ops.install()
    mods = build()
    saved = {name: sys.modules.get(name) for name in mods}
    sys.modules.update(mods)
    finder = None
    if placeholders:
        finder = PlaceholderFinder()
        sys.meta_path.append(finder)
    return Installed(saved, finder)


def uninstall(installed):
    """Restores ``sys.modules`` and ``sys.meta_path`` as :func:`install` found them."""
    for name, old in installed.saved.items():
        if old is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = old
    if installed.finder is not None and installed.finder in sys.meta_path:
        sys.meta_path.remove(installed.finder)
    for name in [n for n, m in sys.modules.items() if isinstance(m, Placeholder)]:
        del sys.modules[name]
