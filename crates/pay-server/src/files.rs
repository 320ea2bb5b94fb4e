//! Where evidence files' bytes live, from `PAY_FILES_*`: a local directory (the embedded
//! default: `files/` beside the SQLite file), or an S3-compatible bucket that several
//! instances share (`PAY_FILES_S3_BUCKET` and its endpoint, region and credentials).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use pay_domain::bookkeeping::FileStore;
use pay_files::{LocalFiles, S3Config, S3Files};

/// The configured file store.
#[derive(Debug, Clone)]
pub enum FilesConfig {
    /// `PAY_FILES_DIR`, else `files/` beside the SQLite database (the working directory's
    /// `files/` with PostgreSQL, which then runs one instance, or should use a bucket).
    Local(PathBuf),
    /// `PAY_FILES_S3_*`.
    S3(S3Config),
}

impl FilesConfig {
    /// Reads `PAY_FILES_DIR` or `PAY_FILES_S3_BUCKET` (with `PAY_FILES_S3_ENDPOINT`,
    /// `PAY_FILES_S3_REGION` (default `us-east-1`), `PAY_FILES_S3_ACCESS_KEY_ID`,
    /// `PAY_FILES_S3_SECRET_ACCESS_KEY`, `PAY_FILES_S3_PREFIX`); not both.
    pub fn from_env(
        var: impl Fn(&str) -> Option<String>,
        database_url: &str,
    ) -> anyhow::Result<FilesConfig> {
        let dir = var("PAY_FILES_DIR");
        let Some(bucket) = var("PAY_FILES_S3_BUCKET") else {
            return Ok(FilesConfig::Local(
                dir.map(PathBuf::from)
                    .unwrap_or_else(|| default_dir(database_url)),
            ));
        };
        if dir.is_some() {
            bail!("set PAY_FILES_DIR or PAY_FILES_S3_BUCKET, not both");
        }
        let (Some(access_key_id), Some(secret_access_key)) = (
            var("PAY_FILES_S3_ACCESS_KEY_ID"),
            var("PAY_FILES_S3_SECRET_ACCESS_KEY"),
        ) else {
            bail!("PAY_FILES_S3_BUCKET needs PAY_FILES_S3_ACCESS_KEY_ID and PAY_FILES_S3_SECRET_ACCESS_KEY");
        };
        let endpoint = var("PAY_FILES_S3_ENDPOINT");
        if endpoint
            .as_deref()
            .is_some_and(|e| !(e.starts_with("http://") || e.starts_with("https://")))
        {
            bail!("PAY_FILES_S3_ENDPOINT must be an http:// or https:// URL");
        }
        Ok(FilesConfig::S3(S3Config {
            bucket,
            endpoint,
            region: var("PAY_FILES_S3_REGION").unwrap_or_else(|| "us-east-1".into()),
            access_key_id,
            secret_access_key,
            prefix: var("PAY_FILES_S3_PREFIX"),
        }))
    }

    /// The store it names (the local directory is created if missing).
    pub fn build(&self) -> anyhow::Result<Arc<dyn FileStore>> {
        Ok(match self {
            FilesConfig::Local(dir) => Arc::new(
                LocalFiles::open(dir)
                    .with_context(|| format!("PAY_FILES_DIR {}", dir.display()))?,
            ),
            FilesConfig::S3(c) => Arc::new(
                S3Files::new(c).map_err(|e| anyhow::anyhow!("PAY_FILES_S3_*: {}", e.chain()))?,
            ),
        })
    }
}

/// `files/` beside the SQLite file; `files/` in the working directory otherwise.
fn default_dir(database_url: &str) -> PathBuf {
    match database_url.strip_prefix("sqlite://") {
        Some(db) => Path::new(db)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .join("files"),
        None => PathBuf::from("files"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)], db: &str) -> anyhow::Result<FilesConfig> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        FilesConfig::from_env(
            |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
            db,
        )
    }

    #[test]
    fn the_embedded_default_is_beside_the_database() {
        let local = |c: FilesConfig| match c {
            FilesConfig::Local(p) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            local(read(&[], "sqlite:///var/lib/pay/pay.db").unwrap()),
            PathBuf::from("/var/lib/pay/files")
        );
        assert_eq!(
            local(read(&[], "sqlite://pay.db").unwrap()),
            PathBuf::from("./files")
        );
        assert_eq!(
            local(read(&[("PAY_FILES_DIR", "/srv/f")], "postgres://x").unwrap()),
            PathBuf::from("/srv/f")
        );
    }

    #[test]
    fn a_bucket_needs_credentials_and_excludes_a_directory() {
        let s3 = [
            ("PAY_FILES_S3_BUCKET", "ev"),
            ("PAY_FILES_S3_ENDPOINT", "http://127.0.0.1:9000"),
            ("PAY_FILES_S3_ACCESS_KEY_ID", "id"),
            ("PAY_FILES_S3_SECRET_ACCESS_KEY", "secret"),
        ];
        match read(&s3, "postgres://x").unwrap() {
            FilesConfig::S3(c) => {
                assert_eq!(c.bucket, "ev");
                assert_eq!(c.region, "us-east-1");
                assert!(!format!("{c:?}").contains("secret\""));
            }
            other => panic!("{other:?}"),
        }
        let e = read(&s3[..3], "x").unwrap_err().to_string();
        assert!(e.contains("PAY_FILES_S3_SECRET_ACCESS_KEY"), "{e}");
        let mut both = s3.to_vec();
        both.push(("PAY_FILES_DIR", "/x"));
        assert!(read(&both, "x").is_err());
        let mut ftp = s3.to_vec();
        ftp[1] = ("PAY_FILES_S3_ENDPOINT", "ftp://h");
        assert!(read(&ftp, "x").is_err());
    }
}
