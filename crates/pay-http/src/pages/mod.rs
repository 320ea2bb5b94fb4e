//! Server-rendered pages: the hosted checkout, the gateway form's answers, the OAuth sign-in
//! and consent pages, the onboarding claim page, and the customer portal.

pub mod checkout;
pub mod gateway;
pub mod oauth;
pub mod onboarding;
pub mod portal;
