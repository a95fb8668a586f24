"""A tracing implementation of the NKI API that turns a kernel into a psum program.

The kernel runs as ordinary Python against stand-ins for ``nki`` and its
modules (and their older ``neuronxcc.nki`` spellings), built from one registry
of the API (``api``; registrations in ``language``, ``isa``, ``toplevel``);
every engine instruction it issues is recorded with the kernel line that
issued it (``lower``, ``access``), loops over ``affine_range`` and
``sequential_range`` are folded back into psum loops when their iterations
agree, and the result is printed in psum's text format (``core``; docs/SPEC.md
§2, §9). ``driver.trace`` is the in-process entry point, ``shim.install`` and
``shim.uninstall`` put the stand-in modules in place and take them away. Only
the standard library is used (numpy only when a kernel hands it an NKI dtype).
"""
