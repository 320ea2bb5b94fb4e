//! The refusals and the failure every context shares. Each context has its own error enum
//! (`LinkError`, `CheckoutError`, ...) made of these and of its own refusals, so that a caller
//! matches exhaustively on what that context can really return. The HTTP edge maps each of
//! these types to exactly one status and `errorCode`; nothing here knows about HTTP.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

/// One input field is wrong (type, range, length or format).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A field (form field) that the use case does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown field {field}")]
pub struct UnknownField {
    pub field: String,
}

/// An unknown resource, or one of another company (no existence leaks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} not found")]
pub struct NotFound {
    pub kind: &'static str,
}

/// Too many attempts; retry after this many seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Too many attempts; retry later")]
pub struct RateLimited {
    pub retry_after_secs: u64,
}

/// Something failed that the caller cannot fix: a port (store, sealer, processor, random
/// source) or an invariant of stored data. `what` is for the log only; the cause, when there
/// is one, is kept as the error's `source()`. An `unavailable` fault is one a retry later can
/// pass (the database's disk full, its connection lost, no pooled connection in time): the
/// edge answers it 503, not 500.
#[derive(Clone, thiserror::Error)]
#[error("{what}")]
pub struct Fault {
    what: String,
    #[source]
    cause: Option<Arc<dyn StdError + Send + Sync>>,
    unavailable: bool,
}

impl Fault {
    /// A failure with no underlying error (a broken invariant).
    pub fn new(what: impl Into<String>) -> Self {
        Fault {
            what: what.into(),
            cause: None,
            unavailable: false,
        }
    }

    /// A failure of `what`, caused by `cause`.
    pub fn caused(what: impl Into<String>, cause: impl StdError + Send + Sync + 'static) -> Self {
        Fault {
            what: what.into(),
            cause: Some(Arc::new(cause)),
            unavailable: false,
        }
    }

    /// A failure of `what` caused by `cause` that a retry later can pass: the port is out of
    /// service for a while (a full disk, a lost connection), the request itself is fine.
    pub fn unavailable(
        what: impl Into<String>,
        cause: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Fault {
            unavailable: true,
            ..Fault::caused(what, cause)
        }
    }

    /// Whether a retry later can pass (see `unavailable`).
    pub fn is_unavailable(&self) -> bool {
        self.unavailable
    }

    /// What failed, without the cause.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// `what`, then each cause in turn: `what: cause: cause of cause`.
    pub fn chain(&self) -> String {
        chain(self)
    }
}

/// An error and each of its causes, joined by `: ` (what a log line should say).
pub fn chain(e: &(dyn StdError + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        next = cause.source();
    }
    out
}

impl fmt::Debug for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Fault").field(&self.chain()).finish()
    }
}

/// Two faults are the same when they say the same thing (causes are not comparable).
impl PartialEq for Fault {
    fn eq(&self, other: &Self) -> bool {
        self.chain() == other.chain()
    }
}

impl Eq for Fault {}

/// What every port returns: the value, or a fault.
pub type PortResult<T> = Result<T, Fault>;

/// Declares a context's error enum: each variant wraps one refusal type (or `Fault`), converts
/// from it with `?`, and displays as it does. The HTTP edge maps each wrapped type once.
#[macro_export]
macro_rules! context_error {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        $vis enum $name {
            $($(#[$vmeta])* #[error(transparent)] $variant(#[from] $ty),)+
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("disk on fire")]
    struct Disk;

    #[test]
    fn a_fault_keeps_its_cause() {
        let f = Fault::caused("database (insert link)", Disk);
        assert_eq!(f.to_string(), "database (insert link)");
        assert_eq!(StdError::source(&f).unwrap().to_string(), "disk on fire");
        assert_eq!(f.chain(), "database (insert link): disk on fire");
        assert_eq!(Fault::new("x").chain(), "x");
    }
}
