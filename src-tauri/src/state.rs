use std::path::PathBuf;

use nomos_protocol::IpcError;
use nomos_store::Store;

use crate::convert;

/// What every command can reach. The store may have failed to open (a newer schema, a
/// corrupt file): the window still opens and each command reports that error, so the
/// operator sees why instead of a window that never appears.
#[derive(Debug)]
pub struct AppState {
    pub data_dir: PathBuf,
    pub store: Result<Store, IpcError>,
}

impl AppState {
    /// Opens the store in `$NOMOS_DATA_DIR` or the OS data directory.
    pub fn open_default() -> Self {
        match nomos_store::default_data_dir() {
            Ok(dir) => Self::open_in(dir),
            Err(err) => Self {
                data_dir: std::env::temp_dir(),
                store: Err(convert::store_error(&err)),
            },
        }
    }

    pub fn open_in(data_dir: PathBuf) -> Self {
        let store = Store::open_in_dir(&data_dir).map_err(|err| convert::store_error(&err));
        Self { data_dir, store }
    }

    pub fn store(&self) -> Result<&Store, IpcError> {
        self.store.as_ref().map_err(Clone::clone)
    }
}
