//! Routes, one module per resource; each handler reads its input strictly, calls one use case
//! on the blocking pool and converts the result.

pub mod companies;
pub mod links;
pub mod meta;
pub mod session;
pub mod settings;
pub mod webhooks;
