//! Server-rendered pages: the hosted checkout, the gateway form's answers, the OAuth sign-in
//! and consent pages, the onboarding claim page, the customer portal, and the merchant
//! dashboard; `layout` is the base layout and style sheet of the askama templates
//! (`templates/`).

pub mod checkout;
pub mod dashboard;
pub mod gateway;
pub mod layout;
pub mod oauth;
pub mod onboarding;
pub mod portal;
