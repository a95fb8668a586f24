"""A tracing implementation of the NKI API that turns a kernel into a psum program.

The kernel runs as ordinary Python against stand-ins for ``nki``,
``nki.language``, ``nki.isa`` and ``nki.compiler`` (and their older
``neuronxcc.nki`` spellings); every engine instruction it issues is recorded
with the kernel line that issued it, loops over ``affine_range`` and
``sequential_range`` are folded back into psum loops when their iterations
agree, and the result is printed in psum's text format (docs/SPEC.md §2, §9).
Only the standard library is used.
"""
