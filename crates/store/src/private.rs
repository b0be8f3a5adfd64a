//! The data directory is private to the user: `0700` for directories, `0600` for files (the
//! database and its `-wal`/`-shm`, logs, settings, locks). Modes are set when a path is
//! created (a directory with `mkdir(0700)`, the database file with `open(O_CREAT, 0600)` before
//! SQLite opens it; SQLite gives `-wal` and `-shm` the database file's mode), so there is no
//! window in which another user can open them; what an older build left readable is tightened
//! at start-up by [`secure_data_dir`].

use std::io;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Mode of every directory Nomos creates in its data directory.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file Nomos creates in its data directory.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) with mode `0700`; an existing `dir` is tightened to
/// `0700`. Existing parents are left as they are.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)?;
        tighten(dir, DIR_MODE)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Creates `path` empty with mode `0600` if it does not exist (an existing file is tightened
/// to `0600`, never truncated).
pub fn create_private_file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    options.open(path)?;
    #[cfg(unix)]
    tighten(path, FILE_MODE)?;
    Ok(())
}

/// Removes group and other bits from `path` when it has any (never widens a mode, keeps the
/// owner's bits). `mode` documents what the caller expects the result to be at most.
#[cfg(unix)]
fn tighten(path: &Path, mode: u32) -> io::Result<()> {
    debug_assert_eq!(mode & 0o077, 0);
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let current = meta.permissions().mode() & 0o7777;
    if current & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(current & !0o077))?;
    }
    Ok(())
}

/// Start-up tightening of a data directory an older build (or a copy) left readable: the
/// directory and its subdirectories to `0700`, regular files in it and in its subdirectories
/// (one level: `logs/`, `exec/`) to `0600`. Sockets and symlinks are left alone.
pub fn secure_data_dir(dir: &Path) -> io::Result<()> {
    create_private_dir(dir)?;
    #[cfg(unix)]
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_file() {
            tighten(&entry.path(), FILE_MODE)?;
        } else if kind.is_dir() {
            let sub = entry.path();
            tighten(&sub, DIR_MODE)?;
            for inner in std::fs::read_dir(&sub)? {
                let inner = inner?;
                if inner.file_type()?.is_file() {
                    tighten(&inner.path(), FILE_MODE)?;
                }
            }
        }
    }
    Ok(())
}
