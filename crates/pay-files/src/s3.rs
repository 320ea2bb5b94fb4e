//! Files in an S3-compatible bucket through `object_store` (its `aws` feature: reqwest with
//! rustls on ring, SigV4 signing). The port is blocking and the client is async: the store
//! owns a small runtime and blocks on it (callers are on the blocking pool, never on an event
//! loop). A PUT of one object is atomic in S3; a DELETE of a missing key succeeds.

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{ObjectStore, PutPayload};
use pay_domain::bookkeeping::FileStore;
use pay_domain::{Fault, PortResult};

use crate::checked;

/// Where the bucket is and how to sign for it.
#[derive(Clone)]
pub struct S3Config {
    pub bucket: String,
    /// `None`: AWS itself; else an S3-compatible server (path-style requests).
    pub endpoint: Option<String>,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Objects live under this prefix (`<prefix>/<key>`), if any.
    pub prefix: Option<String>,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"***")
            .field("prefix", &self.prefix)
            .finish()
    }
}

/// The S3-compatible file store.
pub struct S3Files {
    store: AmazonS3,
    prefix: Option<String>,
    /// Dropped with `shutdown_background` (dropping a runtime blocks, which an async context
    /// refuses).
    rt: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for S3Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Files")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Drop for S3Files {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl S3Files {
    pub fn new(c: &S3Config) -> PortResult<S3Files> {
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(&c.bucket)
            .with_region(&c.region)
            .with_access_key_id(&c.access_key_id)
            .with_secret_access_key(&c.secret_access_key);
        if let Some(endpoint) = &c.endpoint {
            b = b
                .with_endpoint(endpoint)
                .with_virtual_hosted_style_request(false)
                .with_allow_http(endpoint.starts_with("http://"));
        }
        let store = b
            .build()
            .map_err(|e| Fault::caused("file store: S3 configuration", e))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("pay-files-s3")
            .enable_all()
            .build()
            .map_err(|e| Fault::caused("file store: S3 runtime", e))?;
        Ok(S3Files {
            store,
            prefix: c.prefix.clone().filter(|p| !p.is_empty()),
            rt: Some(rt),
        })
    }

    fn path(&self, key: &str) -> PortResult<Path> {
        let key = checked(key)?;
        Ok(match &self.prefix {
            Some(p) => Path::from(format!("{p}/{key}")),
            None => Path::from(key),
        })
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> PortResult<F::Output> {
        let rt = self
            .rt
            .as_ref()
            .ok_or_else(|| Fault::new("file store: S3 runtime gone"))?;
        Ok(rt.block_on(f))
    }
}

impl FileStore for S3Files {
    fn put(&self, key: &str, bytes: &[u8]) -> PortResult<()> {
        let path = self.path(key)?;
        let payload = PutPayload::from(bytes.to_vec());
        self.block_on(self.store.put(&path, payload))?
            .map(|_| ())
            .map_err(|e| Fault::caused("file store: S3 put", e))
    }

    fn get(&self, key: &str) -> PortResult<Option<Vec<u8>>> {
        let path = self.path(key)?;
        self.block_on(async {
            match self.store.get(&path).await {
                Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?
        .map_err(|e| Fault::caused("file store: S3 get", e))
    }

    fn delete(&self, key: &str) -> PortResult<()> {
        let path = self.path(key)?;
        self.block_on(async {
            match self.store.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        })?
        .map_err(|e| Fault::caused("file store: S3 delete", e))
    }
}
