//! Declarations (SPEC §2.1): the memory a tensor lives in, element types,
//! tensors and loop variables.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Memory a tensor lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mem {
    /// The matmul accumulator, allocated in whole 2 KiB banks.
    Psum,
    /// The state buffer (on-chip SRAM).
    Sbuf,
    /// Device DRAM.
    Dram,
}

impl Mem {
    /// The keyword used in the text format.
    pub fn keyword(self) -> &'static str {
        match self {
            Mem::Psum => "psum",
            Mem::Sbuf => "sbuf",
            Mem::Dram => "dram",
        }
    }
}

impl fmt::Display for Mem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit float, 4 bytes (the default).
    #[default]
    F32,
    /// bfloat16, 2 bytes.
    Bf16,
    /// 8-bit float (e4m3), 1 byte.
    Fp8,
    /// IEEE half, 2 bytes.
    F16,
    /// tfloat32, stored in 4 bytes.
    Tf32,
    /// 8-bit float (e5m2), 1 byte.
    #[serde(rename = "fp8_e5m2")]
    Fp8E5m2,
    /// Four 8-bit MX floats packed in one 4-byte element.
    #[serde(rename = "fp8x4")]
    Fp8x4,
    /// Four 4-bit MX floats packed in one 2-byte element.
    #[serde(rename = "fp4x4")]
    Fp4x4,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 14] = [
        DType::F32,
        DType::Bf16,
        DType::Fp8,
        DType::F16,
        DType::Tf32,
        DType::Fp8E5m2,
        DType::Fp8x4,
        DType::Fp4x4,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> u32 {
        match self {
            DType::Fp8 | DType::Fp8E5m2 | DType::I8 | DType::U8 => 1,
            DType::Bf16 | DType::F16 | DType::Fp4x4 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::Tf32 | DType::Fp8x4 | DType::I32 | DType::U32 => 4,
        }
    }
    /// The keyword used in the text format.
    pub fn keyword(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::Bf16 => "bf16",
            DType::Fp8 => "fp8",
            DType::F16 => "f16",
            DType::Tf32 => "tf32",
            DType::Fp8E5m2 => "fp8_e5m2",
            DType::Fp8x4 => "fp8x4",
            DType::Fp4x4 => "fp4x4",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
        }
    }
    /// The dtype whose [`DType::keyword`] is `s`.
    pub fn from_keyword(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.keyword() == s)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// A tensor declaration (`MEM NAME [PARTITIONS, BYTES] [DTYPE] [ATTR=VALUE ...]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    /// Unique name.
    pub name: String,
    /// Memory it lives in.
    pub mem: Mem,
    /// Number of partitions.
    pub partitions: u32,
    /// Bytes per partition (a multiple of `dtype.size()`).
    pub bytes: u32,
    /// Element type.
    pub dtype: DType,
    /// PSUM base bank, once allocated (`bank=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank: Option<u32>,
    /// SBUF byte offset (`addr=N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<u64>,
    /// Where a traced kernel allocated the tile (`loc="FILE:LINE"`, SPEC §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<String>,
    /// The variable of the innermost loop whose every iteration allocated the
    /// tile afresh in a traced kernel (`scope=VAR`, SPEC §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Tensor {
    /// A declaration with no `bank=` or `addr=` attribute.
    pub fn new(
        name: impl Into<String>,
        mem: Mem,
        partitions: u32,
        bytes: u32,
        dtype: DType,
    ) -> Self {
        Tensor {
            name: name.into(),
            mem,
            partitions,
            bytes,
            dtype,
            bank: None,
            addr: None,
            loc: None,
            scope: None,
        }
    }

    /// Elements per partition.
    pub fn elems(&self) -> u32 {
        self.bytes / self.dtype.size()
    }
}

/// A loop variable's declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Var {
    /// The name as written (`k`); names may repeat across sibling loops.
    pub name: String,
}
