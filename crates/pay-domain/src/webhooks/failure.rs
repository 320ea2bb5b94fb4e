//! Why an attempt got no answer, in the few words the delivery log shows. The log is read by
//! merchants, who choose the URL: a detailed reason (the addresses a name resolved to, whether
//! a port refused or ignored the connection) would let them map the service's network through
//! it. The details go to the server log instead.

use std::fmt;

use crate::kernel::error::Fault;

/// The fixed vocabulary of `lastError` and of an attempt's `error`. An attempt that got an
/// HTTP answer has no error: its status says what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptError {
    /// The URL, or an address its name resolved to, is not a public target (SSRF guard).
    RefusedTarget,
    /// No HTTP answer could be had: the name did not resolve, the connection was refused,
    /// reset or not accepted within the connect timeout, or the answer was not HTTP.
    ConnectionFailed,
    /// The TLS handshake failed (certificate, protocol).
    TlsFailed,
    /// Connected, but no complete answer within the total timeout.
    TimedOut,
    /// The delivery's owner has no callback any more; the delivery ends `failed` at once.
    NoCallback,
    /// The service could not build the request (a signing secret did not open, say).
    Internal,
}

impl AttemptError {
    pub const ALL: [AttemptError; 6] = [
        AttemptError::RefusedTarget,
        AttemptError::ConnectionFailed,
        AttemptError::TlsFailed,
        AttemptError::TimedOut,
        AttemptError::NoCallback,
        AttemptError::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AttemptError::RefusedTarget => "refused target",
            AttemptError::ConnectionFailed => "connection failed",
            AttemptError::TlsFailed => "tls failed",
            AttemptError::TimedOut => "timed out",
            AttemptError::NoCallback => "no callback",
            AttemptError::Internal => "internal error",
        }
    }

    /// Reads a stored error: one of the words above, or the detailed text that versions
    /// before 2026-11-23 stored, mapped to its word so old rows reveal no more than new ones.
    pub fn from_stored(text: &str) -> AttemptError {
        if let Some(e) = AttemptError::ALL.into_iter().find(|e| e.as_str() == text) {
            return e;
        }
        // The old transport's messages: "refused target: <why>", "timeout: ...",
        // "connect timeout", "connect error: <cause>", "tls error: <cause>",
        // "request error: <cause>", "invalid request: ...", "invalid value for header ...",
        // "invalid header name ..."; and the dispatcher's "could not prepare the request: ...".
        let starts = |p: &str| text.starts_with(p);
        if starts("refused target") {
            AttemptError::RefusedTarget
        } else if starts("timeout") {
            AttemptError::TimedOut
        } else if starts("tls error") {
            AttemptError::TlsFailed
        } else if starts("could not prepare") || starts("invalid") {
            AttemptError::Internal
        } else {
            AttemptError::ConnectionFailed
        }
    }
}

/// Why no request could be prepared for a delivery: the word for the log and, for the server
/// log, the reason (never a secret). `transient`: the store was out of service for a while (a
/// database restarting), nothing about the delivery: the dispatcher neither sends nor records
/// it, its claim runs out and it is tried again then, without using an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPrepared {
    pub error: AttemptError,
    pub reason: String,
    pub transient: bool,
}

impl NotPrepared {
    pub fn internal(reason: impl fmt::Display) -> NotPrepared {
        NotPrepared {
            error: AttemptError::Internal,
            reason: reason.to_string(),
            transient: false,
        }
    }

    /// A store read or write failed: transient when the store is unavailable.
    pub fn store(fault: Fault) -> NotPrepared {
        NotPrepared {
            transient: fault.is_unavailable(),
            ..NotPrepared::internal(fault.chain())
        }
    }
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    /// A store out of service is transient (the dispatcher leaves the delivery to its claim's
    /// end); any other store failure is an internal error recorded as the attempt's.
    #[test]
    fn store_faults_are_transient_only_when_unavailable() {
        let down = std::io::Error::other("server closed the connection unexpectedly");
        let not = NotPrepared::store(Fault::unavailable("database (link webhook)", down));
        assert!(not.transient);
        assert_eq!(not.error, AttemptError::Internal);
        let broken = NotPrepared::store(Fault::new("database (link webhook): bad row"));
        assert!(!broken.transient);
        assert!(!NotPrepared::internal("sealed secret unreadable").transient);
    }

    use super::*;

    #[test]
    fn the_words_round_trip() {
        for e in AttemptError::ALL {
            assert_eq!(AttemptError::from_stored(e.as_str()), e);
            assert_eq!(e.to_string(), e.as_str());
        }
    }

    #[test]
    fn old_detailed_texts_map_to_their_word() {
        use AttemptError::*;
        for (old, word) in [
            (
                "refused target: localhost resolves to a forbidden address (127.0.0.1)",
                RefusedTarget,
            ),
            (
                "refused target: 10.0.0.5 is a forbidden address",
                RefusedTarget,
            ),
            ("timeout: no complete answer within 15000 ms", TimedOut),
            ("timeout", TimedOut),
            ("connect timeout", ConnectionFailed),
            (
                "connect error: Connection refused (os error 111)",
                ConnectionFailed,
            ),
            (
                "connect error: failed to lookup address information",
                ConnectionFailed,
            ),
            (
                "request error: connection closed before message completed",
                ConnectionFailed,
            ),
            (
                "tls error: invalid peer certificate: UnknownIssuer",
                TlsFailed,
            ),
            ("could not prepare the request: callback removed", Internal),
            ("invalid value for header x-bad", Internal),
            ("something else entirely", ConnectionFailed),
        ] {
            assert_eq!(AttemptError::from_stored(old), word, "{old}");
        }
    }
}
