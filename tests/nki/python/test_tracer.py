"""Unit tests of the NKI tracer (python/psum_nki) against its recorder, in
process: ``python3 -m unittest discover -s tests/nki/python`` from the
repository root. Standard library only; the numpy cases run when numpy is
installed."""

import os
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from psum_nki import api, driver, loader, shim  # noqa: E402
from psum_nki.errors import TraceError  # noqa: E402

GEOMETRY = {"codename": "trn1", "sbuf_bytes": 196608, "reserved": 16384, "banks": 8, "level": 20}

# The public names of the NKI API reference (nki, nki.language, nki.isa,
# nki.collectives, nki.typing, and the older names kernels still use).
PUBLIC = """
nki.jit nki.simulate nki.benchmark nki.profile nki.baremetal nki.simulate_kernel nki.tensor
nki.language.DType nki.language.bool_ nki.language.int8 nki.language.int16 nki.language.int32 nki.language.uint8
nki.language.uint16 nki.language.uint32 nki.language.float16 nki.language.float32 nki.language.bfloat16
nki.language.tfloat32 nki.language.float8_e4m3 nki.language.float8_e4m3fn nki.language.float8_e5m2
nki.language.float8_e5m2_x4 nki.language.float8_e4m3fn_x4 nki.language.float8_e8m0fnu nki.language.float4_e2m1fn_x4
nki.language.sbuf nki.language.psum nki.language.hbm nki.language.private_hbm nki.language.shared_hbm
nki.language.tile_size nki.language.average nki.language.prelu nki.language.bypass nki.language.MemoryRegion
nki.language.NKIObject nki.language.NkiTensor nki.language.is_hbm nki.language.is_on_chip nki.language.is_psum
nki.language.is_sbuf nki.language.add nki.language.subtract nki.language.multiply nki.language.divide
nki.language.maximum nki.language.minimum nki.language.abs_max nki.language.abs_min nki.language.abs
nki.language.square nki.language.power nki.language.equal nki.language.not_equal nki.language.less
nki.language.less_equal nki.language.greater nki.language.greater_equal nki.language.bitwise_and
nki.language.bitwise_or nki.language.bitwise_xor nki.language.invert nki.language.left_shift
nki.language.right_shift nki.language.logical_and nki.language.logical_or nki.language.logical_xor
nki.language.logical_not nki.language.exp nki.language.log nki.language.sqrt nki.language.rsqrt nki.language.tanh
nki.language.sigmoid nki.language.relu nki.language.gelu nki.language.gelu_apprx_sigmoid nki.language.gelu_apprx_tanh
nki.language.gelu_dx nki.language.gelu_apprx_sigmoid_dx nki.language.silu nki.language.silu_dx nki.language.softplus
nki.language.mish nki.language.erf nki.language.erf_dx nki.language.reciprocal nki.language.copy nki.language.sin
nki.language.cos nki.language.tan nki.language.arctan nki.language.ceil nki.language.floor nki.language.trunc
nki.language.negative nki.language.sign nki.language.fmod nki.language.mod nki.language.sum nki.language.max
nki.language.min nki.language.mean nki.language.prod nki.language.var nki.language.all nki.language.softmax
nki.language.rms_norm nki.language.where nki.language.dropout nki.language.ones nki.language.full
nki.language.zeros_like nki.language.empty_like nki.language.random_seed nki.language.expand_dims
nki.language.broadcast_to nki.language.transpose nki.language.matmul nki.language.no_reorder
nki.language.load_transpose2d nki.language.gather_flattened nki.language.ds nki.language.affine_range
nki.language.sequential_range nki.language.static_range nki.language.dynamic_range nki.language.fori_loop
nki.language.while_loop nki.language.ndarray nki.language.zeros nki.language.load nki.language.store
nki.language.program_id nki.language.num_programs nki.language.program_ndim nki.language.shared_constant
nki.language.shared_identity_matrix nki.language.device_print nki.language.rand nki.language.atomic_rmw
nki.language.arange nki.language.mgrid nki.language.all_reduce nki.language.par_dim nki.language.spmd_dim
nki.language.nc nki.language.loop_reduce nki.language.fp32
nki.isa.tensor_engine nki.isa.vector_engine nki.isa.scalar_engine nki.isa.gpsimd_engine nki.isa.unknown_engine
nki.isa.engine nki.isa.reduce_cmd nki.isa.dge_mode nki.isa.oob_mode nki.isa.matmul_perf_mode nki.isa.nc_version
nki.isa.dma_engine nki.isa.NkiInstruction nki.isa.NkiValidationError nki.isa.VirtualRegister
nki.isa.get_nc_sub_version nki.isa.get_nc_version nki.isa.dma_copy nki.isa.tensor_copy nki.isa.memset
nki.isa.tensor_copy_predicated nki.isa.nc_matmul nki.isa.nc_matmul_mx nki.isa.nc_transpose nki.isa.dma_transpose
nki.isa.tensor_tensor nki.isa.tensor_scalar nki.isa.tensor_reduce nki.isa.tensor_partition_reduce
nki.isa.tensor_scalar_cumulative nki.isa.activation nki.isa.activation_reduce nki.isa.activate2 nki.isa.iota
nki.isa.affine_select nki.isa.local_gather nki.isa.nc_n_gather nki.isa.bn_stats nki.isa.bn_aggr
nki.isa.tensor_tensor_scan nki.isa.nc_stream_shuffle nki.isa.rng nki.isa.dropout nki.isa.set_rng_seed
nki.isa.rand_set_state nki.isa.rand_get_state nki.isa.rand2 nki.isa.exponential nki.isa.reciprocal nki.isa.max8
nki.isa.sequence_bounds nki.isa.scalar_tensor_tensor nki.isa.tensor_scalar_reduce nki.isa.core_barrier
nki.isa.dma_compute nki.isa.quantize_mx nki.isa.range_select nki.isa.select_reduce nki.isa.sendrecv
nki.isa.register_alloc nki.isa.register_move nki.isa.register_load nki.isa.register_store nki.isa.nc_find_index8
nki.isa.nc_match_replace8 nki.isa.nonzero_with_count nki.isa.topk nki.isa.tensor_copy_dynamic_src
nki.isa.tensor_copy_dynamic_dst
nki.collectives.ReplicaGroup nki.collectives.all_reduce nki.collectives.all_gather nki.collectives.all_gather_v
nki.collectives.reduce_scatter nki.collectives.all_to_all nki.collectives.all_to_all_v
nki.collectives.collective_permute nki.collectives.collective_permute_implicit
nki.collectives.collective_permute_implicit_reduce
nki.collectives.collective_permute_implicit_current_processing_rank_id nki.collectives.rank_id
nki.compiler.sbuf.alloc nki.compiler.sbuf.mod_alloc nki.compiler.sbuf.auto_alloc nki.compiler.psum.alloc
nki.compiler.psum.mod_alloc nki.compiler.psum.auto_alloc nki.compiler.skip_middle_end_transformations
nki.compiler.enable_stack_allocator nki.compiler.force_auto_alloc
nki.typing.tensor nki.typing.mutable_tensor
""".split()

HEADER = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"


class Traces(unittest.TestCase):
    """Each test writes a kernel of its own and traces it in process."""

    def setUp(self):
        self.installed = shim.install()
        self.dir = tempfile.mkdtemp(prefix="psum-nki-unit-")

    def tearDown(self):
        shim.uninstall(self.installed)

    def write(self, source, name="k.py"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(source))
        return path

    def trace(self, source, tensors, literals=None, grid=(), program_id=(), fn="kernel", header=True):
        path = self.write((HEADER if header else "") + textwrap.dedent(source))
        module = loader.load(path, "k.py")
        return driver.trace(getattr(module, fn), tensors, literals or {}, GEOMETRY, grid, program_id)

    def refused(self, source, tensors, line, message):
        with self.assertRaises(TraceError) as cm:
            self.trace(source, tensors)
        self.assertEqual((cm.exception.loc, cm.exception.message), ("k.py:%d" % line, message))

    def body(self, traced):
        lines = traced.program.splitlines()
        return [l.strip().rsplit(" loc=", 1)[0] for l in lines[lines.index(next(l for l in lines if l.startswith("block"))) + 1 : -1]]


class Registry(Traces):
    def test_every_public_name_is_implemented_or_refused_with_a_reason(self):
        missing = [n for n in PUBLIC if n not in api.REGISTRY]
        self.assertEqual(missing, [])
        for q, e in api.REGISTRY.items():
            self.assertIn(e.status, ("implemented", "refused"), q)
            if e.refused:
                self.assertTrue(e.refused.strip(), q)

    def test_coverage_of_language_and_isa(self):
        for module, floor in (("nki.language", 0.95), ("nki.isa", 0.80)):
            names = [n for n in PUBLIC if n.rpartition(".")[0] == module]
            done = [n for n in names if api.REGISTRY[n].status == "implemented"]
            self.assertGreaterEqual(len(done) / len(names), floor, module)

    def test_modules_export_public_names_only(self):
        import nki.isa as nisa
        import nki.language as nl

        for internal in ("emit", "STATE", "compute", "assign", "Tile", "View", "lower", "api"):
            self.assertNotIn(internal, nl.__all__)
            self.assertNotIn(internal, nisa.__all__)
        with self.assertRaises(TraceError) as cm:
            nl.emit
        self.assertEqual(cm.exception.message, "nki.language.emit is not part of the NKI API psum trace knows")

    def test_install_and_uninstall_restore_sys_modules(self):
        shim.uninstall(self.installed)
        self.assertNotIn("nki", sys.modules)
        self.assertNotIn("neuronxcc.nki.language", sys.modules)
        self.installed = shim.install()
        self.assertIn("neuronxcc.nki.typing", sys.modules)


class Signatures(Traces):
    def test_an_unknown_keyword_is_refused_listing_the_accepted_ones(self):
        self.refused(
            """
            def kernel(x):
                t = nl.zeros((128, 512), dtype=nl.float32, bufer=nl.psum)
                return t
            """,
            {"x": ("float32", [128, 512])},
            6,
            "nki.language.zeros() got an unexpected keyword argument 'bufer' "
            "(it takes: shape, dtype, buffer, name, lazy_initialization)",
        )

    def test_a_missing_argument_is_named(self):
        self.refused(
            """
            def kernel(x):
                t = nl.load(x)
                return nisa.activation(data=t)
            """,
            {"x": ("float32", [128, 512])},
            7,
            "nki.isa.activation() is missing its argument 'op'",
        )

    def test_a_known_unmodelled_keyword_is_refused_by_name(self):
        self.refused(
            """
            def kernel(x):
                t = nl.load(x)
                return t.ap([[512, 128], [1, 512]], scalar_offset=t)
            """,
            {"x": ("float32", [128, 512])},
            7,
            "the .ap() keyword 'scalar_offset' (pattern, offset and dtype are modelled)",
        )

    def test_both_calling_forms_bind(self):
        t = self.trace(
            """
            def kernel(x):
                a = nl.load(x)
                b = nisa.tensor_copy(a)
                c = nl.ndarray((128, 512), dtype=nl.float32)
                nisa.tensor_copy(c, b)
                nisa.tensor_copy(dst=c, src=b)
                return c
            """,
            {"x": ("float32", [128, 512])},
        )
        self.assertEqual(self.body(t), ["dma a <- x", "copy b <- a", "copy c <- b", "copy c <- b"])


    def test_every_form_takes_an_instruction_name(self):
        t = self.trace(
            """
            def kernel(x):
                a = nl.load(x, name="ld")
                r = nl.ndarray((128, 1), dtype=nl.float32)
                b = nisa.tensor_scalar_reduce(
                    data=a, op0=nl.multiply, operand0=2.0, reduce_op=nl.max, reduce_res=r, name="tsr"
                )
                return nl.exp(b, name="e")
            """,
            {"x": ("float32", [128, 512])},
        )
        self.assertEqual(self.body(t), ["dma a <- x", "act b <- a", "engine r <- b", "act tile <- b"])
        self.refused(
            """
            def kernel(x):
                return nl.exp(nl.load(x), nmae="e")
            """,
            {"x": ("float32", [128, 512])},
            6,
            "nki.language.exp() got an unexpected keyword argument 'nmae' (it takes: x, dtype, mask)",
        )

class Operators(Traces):
    def test_comparing_a_tile_with_a_number_is_element_wise(self):
        t = self.trace(
            """
            def kernel(x):
                a = nl.load(x)
                b = a != 0
                c = a == 1.5
                return b, c, a == a
            """,
            {"x": ("float32", [128, 8])},
        )
        self.assertEqual(self.body(t), ["dma a <- x", "act b <- a", "act c <- a"])

    def test_an_unknown_tensor_attribute_is_refused_by_name(self):
        self.refused(
            """
            def kernel(x):
                a = nl.load(x)
                assert getattr(a, "astype", None) is None
                return a.astype(nl.float16)
            """,
            {"x": ("float32", [128, 8])},
            8,
            "'astype' is not an attribute of an NKI tensor psum trace knows",
        )


class Matmul(Traces):
    def test_tile_position_is_the_start_row_and_column(self):
        t = self.trace(
            """
            def kernel(w, x):
                s = nl.load(w)
                m = nl.load(x)
                acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(acc, s, m, tile_position=(64, 0), tile_size=(64, 128))
                return acc
            """,
            {"w": ("bfloat16", [64, 128]), "x": ("bfloat16", [64, 128])},
        )
        self.assertIn("matmul acc <- s, m pos=64,0", self.body(t))

    def test_a_destination_of_several_free_axes_splits_into_one_matmul_per_rectangle(self):
        t = self.trace(
            """
            def kernel(x, w):
                s = nl.load(w)
                m = nl.ndarray((128, 2, 64), dtype=nl.float32)
                nisa.dma_copy(dst=m, src=x)
                z = nl.ndarray((128, 2, 64), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=z[:, :, 16:32], stationary=s, moving=m[:, :, 16:32])
                return z
            """,
            {"x": ("float32", [128, 2, 64]), "w": ("float32", [128, 128])},
        )
        self.assertEqual(
            self.body(t),
            [
                "dma s <- w",
                "dma m <- x",
                "matmul z[0:128, 64:128] <- s, m[0:128, 64:128]",
                "matmul z[0:128, 320:384] <- s, m[0:128, 320:384]",
            ],
        )

    def test_a_tile_position_off_the_tile_size_grid_is_refused(self):
        self.refused(
            """
            def kernel(w, x):
                s = nl.load(w)
                m = nl.load(x)
                return nisa.nc_matmul(s, m, tile_position=(32, 0), tile_size=(64, 128))
            """,
            {"w": ("bfloat16", [64, 128]), "x": ("bfloat16", [64, 128])},
            8,
            "tile_position start row 32 is not a multiple of the tile_size row 64 within the 128x128 PE array",
        )


class Indexing(Traces):
    def test_a_mask_restricts_the_instruction_to_its_region(self):
        t = self.trace(
            """
            def kernel(x):
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(512)[None, :]
                a = nl.load(x[i_p, i_f], mask=(i_p < 64) & (i_f >= 256))
                return a
            """,
            {"x": ("float32", [128, 512])},
        )
        self.assertEqual(self.body(t), ["dma a[0:64, 1024:2048] <- x[0:64, 1024:2048]"])

    def test_a_mask_that_is_not_a_rectangle_is_split_exactly(self):
        t = self.trace(
            """
            def kernel(x):
                i_p = nl.arange(4)[:, None]
                i_f = nl.arange(8)[None, :]
                a = nl.load(x[i_p, i_f], mask=(i_p * 8 + i_f < 12))
                return a
            """,
            {"x": ("float32", [4, 8])},
        )
        self.assertEqual(self.body(t), ["dma a[0:1, 0:32] <- x[0:1, 0:32]", "dma a[1:2, 0:16] <- x[1:2, 0:16]"])

    def test_a_loop_whose_masked_extent_varies_is_unrolled(self):
        t = self.trace(
            """
            def kernel(x):
                out = nl.ndarray((200, 8), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(8)[None, :]
                for j in nl.affine_range(2):
                    t = nl.load(x[j * 128 + i_p, i_f], mask=(j * 128 + i_p < 200))
                    nl.store(out[j * 128 + i_p, i_f], value=t, mask=(j * 128 + i_p < 200))
                return out
            """,
            {"x": ("float32", [200, 8])},
        )
        self.assertEqual(
            self.body(t),
            [
                "dma t <- x[0:128, 0:32]",
                "dma out[0:128, 0:32] <- t",
                "dma t_1[0:72, 0:32] <- x[128:200, 0:32]",
                "dma out[128:200, 0:32] <- t_1[0:72, 0:32]",
            ],
        )

    def test_a_false_mask_emits_nothing(self):
        t = self.trace(
            """
            def kernel(x):
                a = nl.load(x)
                b = nl.exp(a, mask=False)
                return a
            """,
            {"x": ("float32", [128, 8])},
        )
        self.assertEqual(self.body(t), ["dma a <- x"])

    def test_a_mask_that_compares_nothing_is_named_without_an_address(self):
        self.refused(
            """
            def kernel(x):
                ip = nl.arange(128)[:, None]
                return nl.exp(nl.load(x), mask=ip + 1)
            """,
            {"x": ("float32", [128, 8])},
            7,
            "mask=an index expression (a mask is an index predicate or a bool)",
        )
        self.refused(
            """
            def kernel(x):
                return nl.exp(nl.load(x), mask=len)
            """,
            {"x": ("float32", [128, 8])},
            6,
            "mask=function len (a mask is an index predicate or a bool)",
        )

    def test_a_strided_sbuf_access_is_its_bounding_rectangle(self):
        t = self.trace(
            """
            def kernel(x):
                a = nl.load(x)
                b = nl.copy(a[:, 0:512:2])
                return b
            """,
            {"x": ("float32", [128, 512])},
        )
        self.assertEqual(self.body(t), ["dma a <- x", "engine b <- a[0:128, 0:2044]"])

    def test_a_strided_psum_access_stays_exact(self):
        t = self.trace(
            """
            def kernel(x):
                p = nl.zeros((4, 8), dtype=nl.float32, buffer=nl.psum)
                i_p = nl.arange(4)[:, None]
                i_f = nl.arange(2)[None, :]
                b = nl.copy(p[i_p, i_f * 4])
                return b
            """,
            {"x": ("float32", [4, 8])},
        )
        self.assertEqual(self.body(t)[1], "engine b <- p[0:4, 0:4], p[0:4, 16:20]")

    def test_reshape_and_the_access_pattern_api(self):
        t = self.trace(
            """
            def kernel(x):
                v = nl.load(x.reshape((1, 512)))
                a = nl.load(x.reshape((4, 128)))
                w = a.ap([[128, 4], [1, 64]], offset=64)
                return nl.copy(w), v
            """,
            {"x": ("float32", [512])},
        )
        self.assertEqual(self.body(t)[2], "copy tile <- a[0:4, 256:512]")

    def test_an_access_pattern_may_read_the_storage_as_another_dtype(self):
        t = self.trace(
            """
            def kernel(x):
                t = nl.ndarray((64, 32), dtype=nl.float16)
                nisa.dma_copy(dst=t, src=x.ap(dtype=nl.float16, pattern=[[64, 64], [1, 32]], offset=32))
                return t
            """,
            {"x": ("float32", [64, 32])},
        )
        self.assertEqual(self.body(t), ["dma t <- x[0:64, 64:128]"])

    def test_an_indirect_dram_index_covers_the_dimension(self):
        t = self.trace(
            """
            def kernel(x, rows):
                r = nl.load(rows)
                i_f = nl.arange(64)[None, :]
                return nl.load(x[r, i_f])
            """,
            {"x": ("float32", [256, 64]), "rows": ("int32", [128, 1])},
        )
        self.assertEqual(self.body(t)[1], "engine tile <- x, r")


class PastTheEnd(Traces):
    KERNEL = """
        def kernel(x):
            i_p = nl.arange(128)[:, None]
            return nl.load(x[nl.ds(0, 128), :]%s)
        """

    def test_a_slice_past_the_end_is_checked_after_the_mask(self):
        t = self.trace(self.KERNEL % ", mask=(i_p < 4)", {"x": ("float32", [4, 32])})
        self.assertEqual(self.body(t), ["dma tile[0:4, 0:128] <- x"])

    def test_an_unmasked_slice_past_the_end_is_refused_where_it_is_read(self):
        self.refused(
            self.KERNEL % "", {"x": ("float32", [4, 32])}, 7, "index values [0, 127] are out of range for a dimension of size 4"
        )


class Grids(Traces):
    KERNEL = """
        def kernel(x):
            out = nl.ndarray((4, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            i = nl.program_id(0)
            n = nl.num_programs(0)
            t = nl.load(x[i, :])
            nl.store(out[n - 1 - i, :], value=t)
            return out
        """

    def test_program_id_and_num_programs_follow_the_grid(self):
        t = self.trace(self.KERNEL, {"x": ("float32", [4, 512])}, grid=(4,), program_id=(1,))
        self.assertEqual(self.body(t), ["dma t <- x[1:2, 0:2048]", "dma out[2:3, 0:2048] <- t"])
        self.assertEqual(t.warnings, [])

    def test_without_a_grid_the_program_id_is_zero_with_a_warning(self):
        t = self.trace(self.KERNEL, {"x": ("float32", [4, 512])})
        self.assertEqual(t.warnings[0][0], "k.py:7")


class Files(Traces):
    def test_module_level_code_and_missing_modules_do_not_stop_the_kernel(self):
        t = self.trace(
            """
            import torch_is_not_installed as torch
            from neuronxcc.nki.typing import tensor
            print("at import")
            kernel_output = 1 / 0

            def kernel(x: tensor[128, 512]):
                return nl.load(x)
            """,
            {"x": ("float32", [128, 512])},
        )
        self.assertEqual(self.body(t), ["dma tile <- x"])

    def test_a_missing_module_fails_where_the_kernel_uses_it(self):
        self.refused(
            """
            import torch_is_not_installed as torch

            def kernel(x):
                t = nl.load(x)
                return torch.relu(t)
            """,
            {"x": ("float32", [128, 512])},
            9,
            "torch_is_not_installed.relu: module 'torch_is_not_installed' is not installed (imported at k.py:5)",
        )

    def test_language_constants_and_schedule_hints(self):
        t = self.trace(
            """
            from neuronxcc.nki.language.constants import sizeinbytes

            def kernel(x):
                n = 64 // sizeinbytes(x.dtype)
                for i in nl.affine_range(2, precise_schedule=True):
                    t = nl.load(x[i * 64:(i + 1) * 64, 0:n])
                return t
            """,
            {"x": ("bfloat16", [128, 64])},
        )
        self.assertEqual(self.body(t), ["loop i 0..2 affine {", "dma t <- x[i*64:i*64+64, 0:64]", "}"])

    def test_package_relative_imports_load(self):
        pkg = os.path.join(self.dir, "pkg")
        os.makedirs(pkg)
        open(os.path.join(pkg, "__init__.py"), "w").close()
        with open(os.path.join(pkg, "helpers.py"), "w") as f:
            f.write("ROWS = 128\n")
        path = os.path.join(pkg, "kern.py")
        with open(path, "w") as f:
            f.write(HEADER + "from .helpers import ROWS\n\ndef kernel(x):\n    return nl.load(x[0:ROWS, :])\n")
        module = loader.load(path, "pkg/kern.py")
        t = driver.trace(module.kernel, {"x": ("float32", [256, 8])}, {}, GEOMETRY)
        self.assertIn("dma tile <- x[0:128, 0:32]", t.program)


@unittest.skipUnless(__import__("importlib").util.find_spec("numpy"), "numpy is not installed")
class Numpy(Traces):
    def test_nki_dtypes_are_numpy_dtypes(self):
        import numpy as np

        import nki.language as nl

        self.assertEqual(np.zeros(2, dtype=nl.float32).dtype, np.float32)
        self.assertTrue(nl.float32 == np.float32)
        if __import__("importlib").util.find_spec("ml_dtypes"):
            self.assertEqual(str(np.zeros(2, dtype=nl.bfloat16).dtype), "bfloat16")

    def test_bfloat16_without_ml_dtypes_is_a_clear_error(self):
        import numpy as np

        import nki.language as nl

        saved = sys.modules.get("ml_dtypes")
        sys.modules["ml_dtypes"] = None
        try:
            with self.assertRaises(TraceError) as cm:
                np.zeros(2, dtype=nl.bfloat16)
        finally:
            if saved is None:
                del sys.modules["ml_dtypes"]
            else:
                sys.modules["ml_dtypes"] = saved
        self.assertEqual(
            cm.exception.message, "nl.bfloat16 as a numpy dtype needs the ml_dtypes package (pip install ml_dtypes)"
        )


if __name__ == "__main__":
    unittest.main()
