//! Server-rendered pages: the hosted checkout, the gateway form's answers, and the OAuth
//! sign-in and consent pages.

pub mod checkout;
pub mod gateway;
pub mod oauth;
