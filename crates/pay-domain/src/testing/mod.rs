//! In-memory adapters of every port (`memory`), fakes of the others (`fakes`), and the
//! conformance suites a store implementation must pass (`conformance`). Behind the `testing`
//! feature: contributors' tests and integrators checking their own ports (the embedding
//! example's tests run the conformance suites on its own store) use them.

pub mod conformance;
pub mod fakes;
pub mod memory;

pub use fakes::*;
pub use memory::*;
