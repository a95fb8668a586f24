"""Type stubs of the ``psum`` package (docs: ``help(psum)``, docs/SPEC.md)."""

import os
from contextlib import AbstractContextManager
from typing import Any, Dict, List, Optional, Sequence, Union

__all__: List[str]

MEMORY_LIMIT_MIB: int

class Error(Exception):
    """A psum error with the command line's message and where it points."""

    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(
        self,
        message: str,
        file: Optional[str] = ...,
        line: Optional[int] = ...,
        column: Optional[int] = ...,
    ) -> None: ...

class TraceError(Error):
    """The kernel could not be traced."""

class ParseError(Error):
    """The program text does not parse."""

class ValidationError(Error):
    """The program breaks a rule of SPEC §2."""

class AllocationError(Error):
    """Allocation, unrolling or legalization failed."""

class VerifyError(Error):
    """The result does not compute what the input computes."""

class InternalError(Error):
    """A failure inside psum itself (a Rust panic)."""

class TensorSpec:
    """A tensor argument by shape and NKI dtype name."""

    shape: tuple
    dtype: str
    def __init__(self, shape: Sequence[int], dtype: str) -> None: ...

class Hazard:
    """A PSUM hazard (SPEC §9.4)."""

    @property
    def kind(self) -> str: ...
    @property
    def file(self) -> Optional[str]: ...
    @property
    def line(self) -> Optional[int]: ...
    @property
    def message(self) -> str: ...

class Timeline:
    """A bank timeline (SPEC §8), drawn inline in Jupyter."""

    @property
    def svg(self) -> str: ...
    @property
    def html(self) -> str: ...
    def _repr_svg_(self) -> str: ...
    def _repr_html_(self) -> str: ...
    def save(self, path: Union[str, os.PathLike]) -> None: ...

class Compiled:
    """A compiled program."""

    @property
    def text(self) -> str: ...
    @property
    def report(self) -> Dict[str, Any]: ...
    @property
    def summary(self) -> str: ...
    @property
    def banks(self) -> Dict[str, Optional[int]]: ...
    @property
    def spills(self) -> List[str]: ...
    @property
    def hazards(self) -> List[Hazard]: ...
    @property
    def verified(self) -> bool: ...
    def timeline(self) -> Timeline: ...

class Allocation:
    """An allocated program, before unrolling and legalization."""

    @property
    def text(self) -> str: ...
    @property
    def report(self) -> Dict[str, Any]: ...
    @property
    def banks(self) -> Dict[str, Optional[int]]: ...
    @property
    def spills(self) -> List[str]: ...
    @property
    def log(self) -> List[str]: ...
    @property
    def warnings(self) -> List[str]: ...

class Program:
    """A parsed and validated psum program."""

    @property
    def text(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def arch(self) -> str: ...
    @property
    def warnings(self) -> List[str]: ...
    def to_json(self) -> str: ...
    def compile(
        self,
        allocator: str = "briggs",
        rotate: Optional[bool] = None,
        banks: Optional[int] = None,
        verify: bool = True,
        spill_latency: Optional[int] = None,
    ) -> Compiled: ...
    def alloc(
        self,
        allocator: str = "briggs",
        banks: Optional[int] = None,
        spill_latency: Optional[int] = None,
    ) -> Allocation: ...
    def lint(self) -> List[Hazard]: ...
    def bound(self, banks: Optional[int] = None) -> Dict[str, Any]: ...
    def verify(self, result: "Program", exact: bool = False) -> bool: ...

def parse(text: str, file: str = "<string>") -> Program: ...
def load(path: Union[str, os.PathLike]) -> Program: ...
def tensor(shape: Sequence[int], dtype: Any = "float32") -> TensorSpec: ...
def trace(
    kernel: Any,
    *args: Any,
    arch: Optional[str] = None,
    grid: Optional[Sequence[int]] = None,
    timeout: float = 60,
    program_id: Optional[Sequence[int]] = None,
    memory_limit: int = 4096,
    **kwargs: Any,
) -> Program: ...
def nki() -> AbstractContextManager[None]: ...
