//! Process owners (I24): several processes may use one data directory at once.
//!
//! Each open [`Store`](crate::Store) is an owner. It creates `owners/<pid>-<nonce>.lock` next
//! to the database and holds an exclusive advisory lock (flock) on it for as long as it lives;
//! the kernel releases the lock when the process exits, even by `kill -9`. Turns, messages and
//! executions it creates carry its owner id. Another process decides whether that work is
//! orphaned by trying to take the lock: taken means the owner is gone. A pid alone would not
//! do (pids are reused), hence the nonce and the lock.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::StoreError;

/// Directory of the owner lock files, inside the data directory.
pub const OWNERS_DIR: &str = "owners";

/// This process's lock on its owner file. Dropping it releases the lock and removes the file.
#[derive(Debug)]
pub(crate) struct OwnerLock {
    id: String,
    dir: PathBuf,
    file: Option<File>,
}

impl OwnerLock {
    /// Create and lock a fresh owner file in `data_dir/owners/`.
    pub(crate) fn take(data_dir: &Path) -> Result<OwnerLock, StoreError> {
        let dir = data_dir.join(OWNERS_DIR);
        // Private like the rest of the data directory (C1).
        crate::private::create_private_dir(&dir).map_err(|source| StoreError::Io {
            path: dir.clone(),
            source,
        })?;
        let id = format!("{}-{:016x}", std::process::id(), nonce());
        let path = lock_path(&dir, &id);
        let mut options = OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {}
            Err(fs4::TryLockError::WouldBlock) => {
                return Err(StoreError::Conflict {
                    message: format!("The owner lock {} is already held.", path.display()),
                });
            }
            Err(fs4::TryLockError::Error(source)) => return Err(StoreError::Io { path, source }),
        }
        Ok(OwnerLock {
            id,
            dir,
            file: Some(file),
        })
    }

    /// This owner's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Whether `owner` is a live process (this one included). `None` (work written before
    /// owners existed) and ids that are not owner ids are never live.
    pub(crate) fn is_alive(&self, owner: Option<&str>) -> bool {
        match owner {
            Some(o) if o == self.id => true,
            Some(o) if valid_id(o) => holder_alive(&self.dir, o),
            _ => false,
        }
    }

    /// Remove the lock files of owners that are gone (their lock can be taken).
    pub(crate) fn sweep_dead(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
                continue;
            };
            if id != self.id && valid_id(id) {
                let _ = holder_alive(&self.dir, id);
            }
        }
    }
}

impl Drop for OwnerLock {
    fn drop(&mut self) {
        // Remove while still holding the lock, so no one sees a free lock on a live owner.
        let _ = std::fs::remove_file(lock_path(&self.dir, &self.id));
        drop(self.file.take());
    }
}

fn lock_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.lock"))
}

/// `<pid>-<16 hex digits>`: nothing else ever names a file in the owners directory.
fn valid_id(id: &str) -> bool {
    let Some((pid, nonce)) = id.split_once('-') else {
        return false;
    };
    !pid.is_empty()
        && pid.len() <= 10
        && pid.bytes().all(|b| b.is_ascii_digit())
        && !nonce.is_empty()
        && nonce.len() <= 16
        && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Try the owner's lock: held → alive. Free or missing → gone (a free file is removed).
fn holder_alive(dir: &Path, id: &str) -> bool {
    let path = lock_path(dir, id);
    let file = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        // Cannot tell: treat as alive, so live work is never taken.
        Err(_) => return true,
    };
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => {
            let _ = std::fs::remove_file(&path);
            false
        }
        Err(fs4::TryLockError::WouldBlock) => true,
        Err(fs4::TryLockError::Error(_)) => true,
    }
}

/// A per-open nonce: time, address and a counter, so two stores opened in one process (or
/// a reused pid) never share an id.
pub(crate) fn nonce() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let local = 0u8;
    let addr = &local as *const u8 as u64;
    let mut x = nanos ^ addr.rotate_left(32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
