//! Server-rendered pages: the hosted checkout and the gateway form's answers.

pub mod checkout;
pub mod gateway;
