//! Files on local disk under one root directory: a key is a relative path of plain segments
//! (checked, so never outside the root); writes go to a temporary file in the target's
//! directory, are flushed to disk, then renamed over the target (atomic on POSIX file
//! systems: a reader sees the old bytes or the new, a crash leaves at most a stray temporary
//! file, whose dot name no key can take).

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use pay_domain::bookkeeping::FileStore;
use pay_domain::{Fault, PortResult};

use crate::checked;

/// The local-disk file store.
#[derive(Debug)]
pub struct LocalFiles {
    root: PathBuf,
    /// Makes temporary names unique within the process (the pid across processes).
    seq: AtomicU64,
}

impl LocalFiles {
    /// A store under `root`, created if missing.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<LocalFiles> {
        let root = root.into();
        fs::create_dir_all(&root)?;
        Ok(LocalFiles {
            root,
            seq: AtomicU64::new(0),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &str) -> PortResult<PathBuf> {
        Ok(self.root.join(checked(key)?))
    }
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> Fault {
    move |e| Fault::caused(what, e)
}

impl FileStore for LocalFiles {
    fn put(&self, key: &str, bytes: &[u8]) -> PortResult<()> {
        let path = self.path(key)?;
        let dir = path
            .parent()
            .ok_or_else(|| Fault::new("file store: a key without a directory"))?;
        fs::create_dir_all(dir).map_err(io("file store: create directory"))?;
        let tmp = dir.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            self.seq.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            // The rename itself survives a crash once the directory is on disk.
            fs::File::open(dir)?.sync_all()
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map_err(io("file store: write"))
    }

    fn get(&self, key: &str) -> PortResult<Option<Vec<u8>>> {
        match fs::read(self.path(key)?) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Fault::caused("file store: read", e)),
        }
    }

    fn delete(&self, key: &str) -> PortResult<()> {
        match fs::remove_file(self.path(key)?) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Fault::caused("file store: delete", e)),
        }
    }
}
