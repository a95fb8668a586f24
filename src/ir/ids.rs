//! The ids of the module's arenas ([`TensorId`], [`VarId`], [`InstId`],
//! [`LoopId`]) and the `entity!` macro that defines them.

use std::fmt;

/// Defines a `u32` index newtype with `index()`/`new()` helpers.
macro_rules! entity {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for indexing the owning vector.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// Builds the id for position `i` of the owning vector.
            #[inline]
            pub fn new(i: usize) -> Self {
                Self(u32::try_from(i).expect("entity index overflows u32"))
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use entity;

entity!(
    /// A tensor declaration: index into [`Module::tensors`](super::Module::tensors).
    TensorId
);
entity!(
    /// A loop variable: index into [`Module::vars`](super::Module::vars).
    VarId
);
entity!(
    /// An instruction: index into [`Module::insts`](super::Module::insts).
    InstId
);
entity!(
    /// A counted loop: index into [`Module::loops`](super::Module::loops).
    LoopId
);

impl fmt::Display for TensorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

impl fmt::Display for InstId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loop{}", self.0)
    }
}

impl fmt::Display for VarId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}
