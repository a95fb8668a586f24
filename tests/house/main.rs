//! The shape of the library itself (DESIGN.md): its modules import one
//! another without a circle.

mod imports;
