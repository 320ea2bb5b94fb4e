//! Webhook adapter: signs deliveries (the `WebhookSigner` port) and gives receivers the matching
//! `verify`, seals signing secrets at rest (the `SecretSealer` port), and sends attempts over an
//! HTTP client that refuses private targets at connect time (SSRF and DNS rebinding).

pub mod sealer;
pub mod signature;
pub mod ssrf;
pub mod transport;

pub use sealer::{AeadSealer, KeyError, Keyring};
pub use signature::{verify, HmacSigner, VerifyError};
pub use ssrf::{check_url, GuardedResolver};
pub use transport::{HttpTransport, TransportConfig};
