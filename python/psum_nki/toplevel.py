"""``nki``, ``nki.compiler``, ``nki.typing`` and ``nki.collectives`` as
registrations (SPEC §9.1, §9.2): the decorators that wrap a kernel (traced as
the function they wrap), direct allocation, type annotations; collectives are
refused (the program is one NeuronCore's)."""

from .api import api, refuse_all, value
from .errors import Invalid, Unsupported, show
from .tiles import Buffer


class Kernel:
    """A decorated kernel: the function and the decorator's ``platform_target``."""

    def __init__(self, func, platform_target=None):
        self.func = func
        self.platform_target = platform_target
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__wrapped__ = func

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __getitem__(self, grid):
        return self


def decorator(name):
    def deco(a):
        target = a.kwargs.get("platform_target") if a.kwargs else None
        if target is not None and not isinstance(target, str):
            raise Invalid("platform_target=%s names no architecture (a name such as 'trn2')" % show(target))
        if a.func is None:
            return lambda f: Kernel(f, target)
        return Kernel(a.func, target)

    api("nki." + name, "(func=None, **kwargs)")(deco)


for _name in ("jit", "baremetal", "benchmark", "profile", "trace", "simulate"):
    decorator(_name)


@api("nki.simulate_kernel", "(kernel, *args, **kwargs)")
def simulate_kernel(a):
    """Runs ``kernel`` on the arguments (traced when they are traced tensors)."""
    return a.kernel(*a.args, **a.kwargs)


class Annotation:
    """``nt.tensor[…]``: a type annotation, with no effect on tracing."""

    def __init__(self, *args):
        self.args = args

    def __class_getitem__(cls, item):
        return cls(item)

    def __getitem__(self, item):
        return Annotation(self.args, item)

    def __call__(self, *args, **kwargs):
        return Annotation(args)


class tensor(Annotation):
    """``nki.typing.tensor[shape, dtype]``."""


class mutable_tensor(Annotation):
    """``nki.typing.mutable_tensor[shape, dtype]``."""


value("nki.typing.tensor", tensor)
value("nki.typing.mutable_tensor", mutable_tensor)
value("nki.tensor", tensor)


def _mod_alloc(mem):
    def mod_alloc(a):
        if mem == "sbuf":
            return Buffer("sbuf.mod_alloc", "sbuf")
        if a.base_addr or a.base_partition or a.num_par_tiles or a.num_free_tiles:
            raise Unsupported("direct allocation at a partition or byte offset (only banks are traced)")
        base = a.base_bank

        def bank(idx, pdim, fdim):
            shape = tuple(a.num_bank_tiles) or (1,) * len(idx)
            lin = 0
            for i, s in zip(idx, shape):
                lin = lin * s + i % s
            return base + lin

        return Buffer("%s.mod_alloc" % mem, mem, bank if mem == "psum" else None)

    return mod_alloc


def _alloc(mem):
    def alloc(a):
        func = a.func
        if mem == "sbuf":
            return Buffer("sbuf.alloc", "sbuf")

        def bank(idx, pdim, fdim):
            try:
                placed = func(idx=idx, pdim_size=pdim, fdim_size=fdim)
            except TypeError:
                placed = func(idx, pdim, fdim)
            if not isinstance(placed, (tuple, list)) or len(placed) != 3:
                raise Unsupported("an allocation callback that does not return (bank, partition, byte)")
            b, p, byte = (int(x) for x in placed)
            if p or byte:
                raise Unsupported("direct allocation at a partition or byte offset (only banks are traced)")
            return b

        return Buffer("%s.alloc" % mem, mem, bank if mem == "psum" else None)

    return alloc


def _auto(mem):
    def auto_alloc(a):
        return Buffer("nl." + mem, mem)

    return auto_alloc


MOD_ALLOC = "(*, base_bank=0, base_addr=0, base_partition=0, num_bank_tiles=(), num_par_tiles=(), num_free_tiles=())"
for _mem in ("psum", "sbuf"):
    api("nki.compiler.%s.mod_alloc" % _mem, MOD_ALLOC)(_mod_alloc(_mem))
    api("nki.compiler.%s.alloc" % _mem, "(func)")(_alloc(_mem))
    api("nki.compiler.%s.auto_alloc" % _mem, "()")(_auto(_mem))


def _identity_decorator(a):
    if a.func is None:
        return lambda f: f
    return a.func


for _name in ("skip_middle_end_transformations", "enable_stack_allocator", "force_auto_alloc"):
    api("nki.compiler." + _name, "(func=None, **kwargs)")(_identity_decorator)

refuse_all(
    "nki.collectives",
    "ReplicaGroup all_reduce all_gather all_gather_v reduce_scatter all_to_all all_to_all_v collective_permute "
    "collective_permute_implicit collective_permute_implicit_reduce collective_permute_implicit_current_processing_rank_id "
    "rank_id",
    "collective communication between NeuronCores (the program is one core's)",
)
