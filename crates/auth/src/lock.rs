//! The cross-instance refresh lock: an advisory lock on a file in the data directory.
//!
//! The provider rotates refresh tokens and treats a second use of an old one as theft,
//! revoking the whole session. Two app instances (or the app and the CLI) sharing one
//! keyring entry must therefore never refresh at the same time: each takes this lock, reads
//! the keyring *after* acquiring it (so it spends the token the other one just stored), and
//! writes the rotated token back before releasing it.
//!
//! The lock is polled with `try_lock` rather than waited on in a blocking call, so a waiting
//! instance can give up after a timeout and never ties up a runtime thread. The kernel
//! releases it when the holder exits, even by `kill -9`. The file holds no data.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::AuthError;

/// How often a waiting instance retries.
const POLL: Duration = Duration::from_millis(20);

/// A held lock; dropping it (closing the file) releases it.
#[derive(Debug)]
pub(crate) struct RefreshLock {
    _file: File,
}

impl RefreshLock {
    /// Waits up to `timeout` for the lock at `path`.
    pub(crate) async fn acquire(path: &Path, timeout: Duration) -> Result<Self, AuthError> {
        let file = open(path)?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Fully qualified: std's inherent `File::try_lock` (Rust 1.89) shadows the trait
            // method, and the workspace still supports 1.88.
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => return Ok(Self { _file: file }),
                Err(fs4::TryLockError::WouldBlock) => {}
                Err(fs4::TryLockError::Error(e)) => {
                    return Err(AuthError::Lock {
                        message: format!("{}: {e}", path.display()),
                    });
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(AuthError::LockTimeout { after: timeout });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// The lock file for a data directory.
pub(crate) fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("auth-refresh.lock")
}

/// Opens (creating) the lock file private to the user: a missing data directory is created
/// `0700`, the file `0600` at creation, and an existing one left readable is tightened.
fn open(path: &Path) -> Result<File, AuthError> {
    let lock_err = |p: &Path, e: std::io::Error| AuthError::Lock {
        message: format!("{}: {e}", p.display()),
    };
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| lock_err(dir, e))?;
    }
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(|e| lock_err(path, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file
            .metadata()
            .map_err(|e| lock_err(path, e))?
            .permissions()
            .mode()
            & 0o7777;
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(mode & !0o077))
                .map_err(|e| lock_err(path, e))?;
        }
    }
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// C1: the lock file is created 0600 in a 0700 directory, and an existing one left
    /// readable is tightened.
    #[cfg(unix)]
    #[test]
    fn c1_the_lock_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("fresh/data");
        let path = lock_path(&data);
        drop(open(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&data), 0o700);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(open(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
    }

    #[tokio::test]
    async fn second_holder_waits_then_times_out_and_gets_it_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_path(dir.path());
        let first = RefreshLock::acquire(&path, Duration::from_secs(1))
            .await
            .unwrap();
        let err = RefreshLock::acquire(&path, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "auth.lock_timeout");
        drop(first);
        RefreshLock::acquire(&path, Duration::from_millis(100))
            .await
            .unwrap();
    }
}
