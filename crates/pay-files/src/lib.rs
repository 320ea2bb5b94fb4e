//! File-store adapters (`pay_domain::bookkeeping::FileStore`): the bytes of private evidence
//! files on local disk (the embedded default, beside the SQLite file) or in S3-compatible
//! object storage (several instances share one bucket). Both refuse keys that could leave
//! their root and run the same conformance suite.

mod local;
mod s3;

pub use local::LocalFiles;
pub use s3::{S3Config, S3Files};

use pay_domain::bookkeeping::file_key_is_safe;
use pay_domain::{Fault, PortResult};

/// `key`, if the port allows it.
fn checked(key: &str) -> PortResult<&str> {
    if file_key_is_safe(key) {
        Ok(key)
    } else {
        Err(Fault::new("file store: refused an unsafe key"))
    }
}
