//! Opening the database: header check, schema-version gate, migrations, connection pool.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior};

use crate::error::StoreError;
use crate::owners::OwnerLock;
use nomos_base::{Clock, SystemClock};

/// A read handle: every query method of the store, on one connection.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub(crate) c: &'a Connection,
}

/// A write handle inside one transaction: every write method of the store. Obtained from
/// [`Store::write`]; `now_ms` is read once from the store's clock when the transaction starts.
#[derive(Debug, Clone, Copy)]
pub struct WriteTx<'a> {
    pub(crate) c: &'a Connection,
    pub(crate) now: i64,
    /// Sessions this writer touched recently (id → time), to skip redundant touches.
    pub(crate) touched: &'a RefCell<HashMap<i64, i64>>,
    /// This process's owner id (I24), stamped on the work it creates.
    pub(crate) owner: &'a str,
}

impl<'a> WriteTx<'a> {
    /// The transaction's time.
    pub fn now_ms(&self) -> i64 {
        self.now
    }
    /// The owner id of the store this transaction runs in (I24).
    pub fn owner(&self) -> &'a str {
        self.owner
    }
    /// Read inside this transaction (sees its uncommitted writes).
    pub fn reader(&self) -> Reader<'a> {
        Reader { c: self.c }
    }
}

/// One embedded migration file.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The `YYYYMMDDHHMMSS` prefix of the file name.
    pub version: i64,
    /// The rest of the file name, without `.sql`.
    pub name: &'static str,
    /// The SQL text.
    pub sql: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// Every migration this build embeds, oldest first.
pub fn migrations() -> &'static [Migration] {
    MIGRATIONS
}

/// The newest schema version this build knows.
pub fn latest_schema_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// File name of the database inside the data directory.
pub const DB_FILE_NAME: &str = "nomos.db";

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_IDLE_READERS: usize = 4;
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// `$NOMOS_DATA_DIR` if set (and not empty), else the OS data directory + `nomos`
/// (`$XDG_DATA_HOME/nomos`, i.e. `~/.local/share/nomos` on Linux;
/// `~/Library/Application Support/nomos` on macOS; `%APPDATA%\nomos` on Windows).
/// The directory is created if missing.
pub fn default_data_dir() -> Result<PathBuf, StoreError> {
    let dir = match std::env::var_os("NOMOS_DATA_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match directories::BaseDirs::new() {
            Some(b) => b.data_dir().join("nomos"),
            None => {
                return Err(StoreError::Io {
                    path: PathBuf::from("~"),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no home directory found; set NOMOS_DATA_DIR",
                    ),
                });
            }
        },
    };
    // Private to the user, and tightened if an older build left it readable (C1).
    crate::private::secure_data_dir(&dir).map_err(|source| StoreError::Io {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// The Nomos store. Cheap to clone (an `Arc` inside); `Send + Sync`.
///
/// One writer connection behind a mutex (SQLite allows one writer at a time anyway; waiting
/// on a mutex is cheaper than on the busy handler), plus a small pool of reader connections
/// (WAL lets them read while the writer writes).
#[derive(Clone)]
pub struct Store {
    pub(crate) inner: Arc<Inner>,
    pub(crate) clock: Arc<dyn Clock>,
}

pub(crate) struct Inner {
    path: PathBuf,
    /// Shared with the background thread, which indexes queued messages on it.
    writer: Arc<Mutex<Writer>>,
    readers: Mutex<Vec<Connection>>,
    background: Background,
    /// Held for the life of the store: other processes see this owner alive (I24).
    pub(crate) owner: OwnerLock,
}

pub(crate) struct Writer {
    conn: Connection,
    touched: RefCell<HashMap<i64, i64>>,
}

/// Work kept off the commit path, on one background thread: WAL checkpoints (so a commit
/// never pays for copying the WAL into the database file and its fsync; the writer keeps
/// SQLite's automatic checkpoint only as a backstop at [`BACKSTOP_CHECKPOINT_PAGES`]), and
/// the search index of queued messages (see [`crate::search::index_queued_messages`]).
struct Background {
    shared: Arc<Activity>,
    stop: Mutex<Option<mpsc::Sender<()>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// What the writer tells the background thread.
struct Activity {
    /// Something was committed since the last checkpoint.
    dirty: AtomicBool,
    /// Messages may be queued for the search index.
    maybe_queued: AtomicBool,
    /// When the last write committed (ms since `epoch`).
    last_write_ms: AtomicU64,
    /// Tests hold the queue still to look at it.
    indexing_paused: AtomicBool,
    epoch: Instant,
}

impl Activity {
    fn wrote(&self) {
        self.dirty.store(true, Ordering::Release);
        self.maybe_queued.store(true, Ordering::Release);
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_write_ms.store(ms, Ordering::Release);
    }
    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_write_ms.load(Ordering::Acquire));
        self.epoch.elapsed().saturating_sub(last)
    }
}

const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);
const BACKSTOP_CHECKPOINT_PAGES: i64 = 20_000;
const JOURNAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;
/// Queued messages are indexed once the writer has been idle this long…
const INDEX_WHEN_IDLE: Duration = Duration::from_millis(100);
/// …and, under a steady stream of writes, a little at a time once this many are queued (a
/// search indexes the queue first: this bounds what one search may have to index).
const INDEX_BACKLOG: i64 = 10_000;
/// Messages indexed per transaction (one FTS5 segment each: larger batches index cheaper
/// per message); the writer is released between batches.
pub(crate) const INDEX_BATCH: i64 = 256;
/// The batch taken per tick while writes continue: short, so the write that waits for it
/// waits little.
const INDEX_BUSY_BATCH: i64 = 32;

impl Background {
    fn start(path: &Path, writer: Arc<Mutex<Writer>>) -> Background {
        let shared = Arc::new(Activity {
            dirty: AtomicBool::new(false),
            // Messages queued before a crash (or by another process) are indexed soon.
            maybe_queued: AtomicBool::new(true),
            last_write_ms: AtomicU64::new(0),
            indexing_paused: AtomicBool::new(false),
            epoch: Instant::now(),
        });
        let (tx, rx) = mpsc::channel::<()>();
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|c| c.busy_timeout(Duration::from_millis(100)).map(|()| c));
        let mut thread = None;
        match conn {
            Ok(conn) => {
                let activity = shared.clone();
                let spawned = std::thread::Builder::new()
                    .name("nomos-store-background".into())
                    .spawn(move || background_loop(&conn, &writer, &rx, &activity));
                match spawned {
                    Ok(h) => thread = Some(h),
                    Err(e) => {
                        tracing::warn!(error = %e, "no background thread; SQLite checkpoints on commit, searches index queued messages")
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "no background connection; SQLite checkpoints on commit, searches index queued messages")
            }
        }
        Background {
            shared,
            stop: Mutex::new(Some(tx)),
            thread: Mutex::new(thread),
        }
    }
}

fn background_loop(
    conn: &Connection,
    writer: &Mutex<Writer>,
    rx: &mpsc::Receiver<()>,
    activity: &Activity,
) {
    loop {
        let stop = matches!(
            rx.recv_timeout(CHECKPOINT_EVERY),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
        if !stop && let Err(e) = index_in_background(conn, writer, rx, activity) {
            tracing::debug!(error = %e, "background search indexing skipped");
            activity.maybe_queued.store(true, Ordering::Release);
        }
        if (activity.dirty.swap(false, Ordering::AcqRel) || stop)
            && let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
        {
            tracing::debug!(error = %e, "background WAL checkpoint skipped");
        }
        if stop {
            break;
        }
    }
}

/// Index queued messages while the writer is idle: in batches, releasing the writer between
/// them, and giving way as soon as a write commits (so an append waits for at most one
/// batch). Under a steady stream of writes the queue grows; past [`INDEX_BACKLOG`] one small
/// batch per tick is indexed anyway, and a search indexes whatever is left first.
fn index_in_background(
    conn: &Connection,
    writer: &Mutex<Writer>,
    rx: &mpsc::Receiver<()>,
    activity: &Activity,
) -> Result<(), StoreError> {
    if activity.indexing_paused.load(Ordering::Acquire)
        || !activity.maybe_queued.swap(false, Ordering::AcqRel)
    {
        return Ok(());
    }
    let queued = crate::search::queued_for_index(conn, INDEX_BACKLOG)?;
    if queued == 0 {
        return Ok(());
    }
    // Still queued after this pass unless it drains the queue.
    activity.maybe_queued.store(true, Ordering::Release);
    let busy = activity.idle_for() < INDEX_WHEN_IDLE;
    if busy && queued < INDEX_BACKLOG {
        return Ok(());
    }
    let batch = if busy { INDEX_BUSY_BATCH } else { INDEX_BATCH };
    let since = activity.last_write_ms.load(Ordering::Acquire);
    loop {
        let n = {
            let mut w = lock(writer);
            let tx = w
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = crate::search::index_queued_messages(&tx, batch)?;
            tx.commit()?;
            n
        };
        activity.dirty.store(true, Ordering::Release);
        if n < batch {
            // Drained, unless a message was queued meanwhile (its write sets the flag again
            // after this store, or this check sees it).
            activity.maybe_queued.store(false, Ordering::Release);
            if crate::search::queued_for_index(conn, 1)? > 0 {
                activity.maybe_queued.store(true, Ordering::Release);
            }
            return Ok(());
        }
        let wrote = activity.last_write_ms.load(Ordering::Acquire) != since;
        if busy || wrote || !matches!(rx.try_recv(), Err(mpsc::TryRecvError::Empty)) {
            return Ok(());
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // Stop and wait, so that when the last `Store` clone is gone the file is closed.
        drop(lock(&self.stop).take());
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .field("clock", &self.clock)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the connection leaves it usable: any open transaction was
    // rolled back when its guard dropped.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Store {
    /// Open (or create) the database at `db_file` and apply pending migrations.
    ///
    /// Refuses a file whose schema is newer than this build ([`StoreError::SchemaTooNew`]),
    /// and a file that is not a SQLite database or is damaged ([`StoreError::Corrupt`]);
    /// in both cases the file is left byte-for-byte unchanged.
    pub fn open(db_file: &Path) -> Result<Store, StoreError> {
        Self::open_with_clock(db_file, Arc::new(SystemClock))
    }

    /// [`Store::open`] on `dir/nomos.db`, creating `dir` if missing.
    pub fn open_in_dir(dir: &Path) -> Result<Store, StoreError> {
        crate::private::create_private_dir(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Self::open(&dir.join(DB_FILE_NAME))
    }

    /// [`Store::open`] with a given clock.
    pub fn open_with_clock(db_file: &Path, clock: Arc<dyn Clock>) -> Result<Store, StoreError> {
        let writer = open_and_migrate(db_file, None, clock.as_ref())?;
        let data_dir = db_file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let owner = OwnerLock::take(data_dir)?;
        writer.pragma_update(None, "wal_autocheckpoint", BACKSTOP_CHECKPOINT_PAGES)?;
        writer.pragma_update(None, "journal_size_limit", JOURNAL_SIZE_LIMIT)?;
        let writer = Arc::new(Mutex::new(Writer {
            conn: writer,
            touched: RefCell::new(HashMap::new()),
        }));
        Ok(Store {
            inner: Arc::new(Inner {
                path: db_file.to_path_buf(),
                writer: writer.clone(),
                readers: Mutex::new(Vec::new()),
                background: Background::start(db_file, writer),
                owner,
            }),
            clock,
        })
    }

    /// Replace the clock (tests control time). Clones of the returned store share it.
    pub fn with_clock(self, clock: Arc<dyn Clock>) -> Store {
        Store {
            inner: self.inner,
            clock,
        }
    }

    /// Stop (or resume) the background indexing of queued messages; searches still index
    /// the queue first. For tests that look at the queue.
    #[doc(hidden)]
    pub fn set_background_indexing(&self, on: bool) {
        let a = &self.inner.background.shared;
        a.indexing_paused.store(!on, Ordering::Release);
        a.maybe_queued.store(true, Ordering::Release);
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// This store's owner id (I24): `<pid>-<nonce>`, unique per open.
    pub fn owner_id(&self) -> &str {
        self.inner.owner.id()
    }

    /// Whether `owner` is a live process (see the `owners` module); this store's own id is.
    pub fn is_owner_alive(&self, owner: Option<&str>) -> bool {
        self.inner.owner.is_alive(owner)
    }

    /// The current time according to the store's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The schema version of the open database (the newest applied migration).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.with_reader(|c| {
            Ok(c.query_row(
                "SELECT coalesce(max(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )?)
        })
    }

    /// Run `f` with a read handle on a reader connection. It sees the last committed state;
    /// several reads inside one `read` call see one consistent snapshot.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_reader(|c| {
            c.execute_batch("BEGIN DEFERRED")?;
            let out = f(&Reader { c });
            let _ = c.execute_batch("COMMIT");
            out
        })
    }

    /// Run `f` inside one write transaction (IMMEDIATE). Everything `f` does is committed
    /// together if it returns `Ok`, and rolled back if it returns `Err`.
    ///
    /// ```no_run
    /// # use nomos_store::*;
    /// # fn f(store: &Store, sid: SessionId) -> Result<(), StoreError> {
    /// store.write(|w| {
    ///     let m = w.append_message(&NewMessage::user(sid, "check disks"))?;
    ///     w.record_audit(&NewAudit::new(Some(sid), "set_goal", "{}", "Goal set.").message(m.id))?;
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn write<T>(
        &self,
        f: impl FnOnce(&WriteTx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let owner = self.inner.owner.id();
        self.with_writer(|tx, now, touched| {
            f(&WriteTx {
                c: tx,
                now,
                touched,
                owner,
            })
        })
    }

    pub(crate) fn fix_path(&self, e: StoreError) -> StoreError {
        match e {
            StoreError::Corrupt { path, detail } if path.as_os_str().is_empty() => {
                StoreError::Corrupt {
                    path: self.inner.path.clone(),
                    detail,
                }
            }
            other => other,
        }
    }

    /// Run `f` on a reader connection (sees the last committed state).
    pub(crate) fn with_reader<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let taken = lock(&self.inner.readers).pop();
        let conn = match taken {
            Some(c) => c,
            None => open_reader(&self.inner.path).map_err(|e| self.fix_path(e))?,
        };
        let out = f(&conn).map_err(|e| self.fix_path(e));
        let mut pool = lock(&self.inner.readers);
        if pool.len() < MAX_IDLE_READERS {
            pool.push(conn);
        }
        out
    }

    /// Run `f` inside one IMMEDIATE write transaction; committed if `f` returns `Ok`,
    /// rolled back otherwise. `now_ms` is read once from the clock.
    pub(crate) fn with_writer<T>(
        &self,
        f: impl FnOnce(
            &rusqlite::Transaction<'_>,
            i64,
            &RefCell<HashMap<i64, i64>>,
        ) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut guard = lock(&self.inner.writer);
        let Writer { conn, touched } = &mut *guard;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.fix_path(e.into()))?;
        // Read once the write lock is held: `BEGIN IMMEDIATE` may wait for another process's
        // transaction, and a time read before it would stamp this one's rows earlier than
        // rows that committed first (timestamps must follow commit order across processes).
        let now = self.clock.now_ms();
        let out = f(&tx, now, touched).map_err(|e| self.fix_path(e))?;
        tx.commit().map_err(|e| self.fix_path(e.into()))?;
        self.inner.background.shared.wrote();
        Ok(out)
    }
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(())
}

fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&conn)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

fn corrupt(path: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

fn with_path(path: &Path, e: impl Into<StoreError>) -> StoreError {
    match e.into() {
        StoreError::Corrupt { detail, .. } => corrupt(path, detail),
        other => other,
    }
}

/// Check the 100-byte SQLite header without opening the file through SQLite.
/// `nomos.db` → `nomos.db-wal`.
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn check_header(path: &Path) -> Result<bool, StoreError> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let len = f
        .metadata()
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if len == 0 {
        return Ok(false);
    }
    let mut header = [0u8; 100];
    if len < 100 {
        return Err(corrupt(path, format!("file is only {len} bytes long")));
    }
    f.read_exact(&mut header).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if &header[..16] != SQLITE_HEADER {
        return Err(corrupt(path, "it does not start with the SQLite header"));
    }
    // Page size (1 = 65536) and the in-header page count, valid when "version-valid-for"
    // equals the change counter. A file shorter than that has been truncated.
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        n => u64::from(n),
    };
    let change_counter = &header[24..28];
    let valid_for = &header[92..96];
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    if change_counter == valid_for && pages > 0 && len < pages.saturating_mul(page_size) {
        return Err(corrupt(
            path,
            format!(
                "it is truncated: {len} bytes, the header says {} bytes",
                pages * page_size
            ),
        ));
    }
    Ok(true)
}

/// Open the writer connection and bring the schema to `target` (default: latest).
/// `target` exists for the fixture generator, which builds databases at older versions.
///
/// When several processes create or migrate the same file at once, SQLite reports some
/// of the contention without waiting on the busy handler (switching a new file to WAL
/// would deadlock; a statement prepared against the schema another process just changed
/// fails with SQLITE_SCHEMA). Every step here is safe to repeat, so such a failure starts
/// the open again, for at most [`BUSY_TIMEOUT`].
pub(crate) fn open_and_migrate(
    path: &Path,
    target: Option<i64>,
    clock: &dyn Clock,
) -> Result<Connection, StoreError> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match open_and_migrate_once(path, target, clock) {
            Err(e) if is_contention(&e) && start.elapsed() < BUSY_TIMEOUT => {
                tracing::debug!(error = %e, "database contended while opening; trying again");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn is_contention(e: &StoreError) -> bool {
    match e {
        StoreError::Busy => true,
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => {
            f.code == rusqlite::ErrorCode::SchemaChanged
        }
        _ => false,
    }
}

fn open_and_migrate_once(
    path: &Path,
    target: Option<i64>,
    clock: &dyn Clock,
) -> Result<Connection, StoreError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        crate::private::create_private_dir(parent).map_err(|source| StoreError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let existed = check_header(path)?;
    // An existing file is inspected through a read-only connection first: the ledger, the
    // schema gate and an integrity check all run before anything may write (no journal-mode
    // switch, no migration, no recovery), so a refused file stays byte-identical.
    let inspected = if existed {
        Some(inspect_read_only(path)?)
    } else {
        None
    };
    // The file exists with mode 0600 before SQLite opens it; SQLite gives the -wal and -shm
    // files the database file's mode, so none of them is ever readable by others (C1).
    // An existing database (and its -wal/-shm) left readable by an older build is tightened.
    for p in [
        path.to_path_buf(),
        sidecar(path, "-wal"),
        sidecar(path, "-shm"),
    ] {
        if p == path || p.exists() {
            crate::private::create_private_file(&p).map_err(|source| StoreError::Io {
                path: p.clone(),
                source,
            })?;
        }
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| with_path(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| with_path(path, e))?;

    // Read the ledger again on the writer: another process may have created or migrated
    // the file since the inspection (or the file did not exist yet).
    let (has_ledger, applied) = read_ledger(&conn, path)?;
    gate_versions(path, &applied)?;
    let known = latest_schema_version();
    let target = target.unwrap_or(known);
    let pending: Vec<&Migration> = MIGRATIONS
        .iter()
        .filter(|m| m.version <= target && !applied.contains(&m.version))
        .collect();

    if let (Some(insp), Some(last)) = (&inspected, pending.last())
        && insp.has_ledger
        && has_ledger
    {
        // About to rewrite the schema of an existing database: keep a copy of it first.
        let from = applied.last().copied().unwrap_or(0);
        backup_before_migration(path, from, last.version)?;
    }

    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .map_err(|e| with_path(path, e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| with_path(path, e))?;
    }
    configure(&conn).map_err(|e| with_path(path, e))?;

    if !has_ledger {
        // IMMEDIATE takes the write lock up front (waiting on the busy handler), so a racing
        // creator cannot leave this statement with a stale snapshot to upgrade.
        // The statement's text is stored in sqlite_master and compared by the migration
        // tests, so it stays byte-for-byte as first written.
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| with_path(path, e))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version       INTEGER PRIMARY KEY,
                name          TEXT    NOT NULL,
                applied_at_ms INTEGER NOT NULL
            ) STRICT;",
        )
        .and_then(|()| conn.execute_batch("COMMIT"))
        .map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            with_path(path, e)
        })?;
    }
    apply(&conn, &pending, clock).map_err(|e| with_path(path, e))?;
    Ok(conn)
}

/// What the read-only inspection of an existing file found.
struct Inspection {
    has_ledger: bool,
}

/// Read the table list and the migration ledger; refuse a database of another program.
fn read_ledger(conn: &Connection, path: &Path) -> Result<(bool, Vec<i64>), StoreError> {
    let tables: Vec<String> = (|| -> Result<Vec<String>, rusqlite::Error> {
        let mut st = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    })()
    .map_err(|e| with_path(path, e))?;
    let has_ledger = tables.iter().any(|t| t == "schema_migrations");
    if !has_ledger && !tables.is_empty() {
        return Err(corrupt(
            path,
            format!(
                "it is a SQLite database of another program (tables: {})",
                preview(&tables)
            ),
        ));
    }
    let applied: Vec<i64> = if has_ledger {
        (|| -> Result<Vec<i64>, rusqlite::Error> {
            let mut st = conn.prepare("SELECT version FROM schema_migrations ORDER BY version")?;
            let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
            rows.collect()
        })()
        .map_err(|e| with_path(path, e))?
    } else {
        Vec::new()
    };
    Ok((has_ledger, applied))
}

/// Refuse a schema newer than this build, or a migration this build does not know.
fn gate_versions(path: &Path, applied: &[i64]) -> Result<(), StoreError> {
    let known = latest_schema_version();
    if let Some(&found) = applied.last()
        && found > known
    {
        return Err(StoreError::SchemaTooNew {
            found,
            known,
            path: path.to_path_buf(),
        });
    }
    for v in applied {
        if !MIGRATIONS.iter().any(|m| m.version == *v) {
            return Err(StoreError::SchemaUnknown {
                version: *v,
                path: path.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// The `file:` URI of `path` for a connection that cannot write it. A WAL-mode file with no
/// `-wal`/`-shm` beside it (no other connection has it open) is read with `immutable=1`, which
/// keeps SQLite from creating those files; otherwise `mode=ro` reads through the existing WAL
/// and takes the usual locks, so a concurrent writer is seen consistently.
fn read_only_uri(path: &Path) -> String {
    let sibling = |suffix: &str| {
        let mut s = path.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s).exists()
    };
    let mut header = [0u8; 20];
    let wal_mode = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| header[18] == 2 && header[19] == 2);
    let immutable = wal_mode && !sibling("-wal") && !sibling("-shm");
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() && !b.is_ascii_control() => uri.push(char::from(b)),
            // SQLite decodes %HH to the raw byte, so a UTF-8 path survives intact.
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str(if immutable {
        "?mode=ro&immutable=1"
    } else {
        "?mode=ro"
    });
    uri
}

/// Inspect an existing file without writing it: ledger, schema gate and `quick_check`.
fn inspect_read_only(path: &Path) -> Result<Inspection, StoreError> {
    // The URI is built from UTF-8 text; a non-UTF-8 path falls back to a plain read-only
    // open.
    let conn = if path.to_str().is_some() {
        Connection::open_with_flags(
            read_only_uri(path),
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    } else {
        Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    }
    .map_err(|e| with_path(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| with_path(path, e))?;
    let (has_ledger, applied) = read_ledger(&conn, path)?;
    gate_versions(path, &applied)?;
    let problems: Vec<String> = (|| -> Result<Vec<String>, rusqlite::Error> {
        let mut st = conn.prepare("PRAGMA quick_check(3)")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    })()
    .map_err(|e| with_path(path, e))?;
    if problems.len() != 1 || problems[0] != "ok" {
        return Err(corrupt(
            path,
            format!("integrity check failed: {}", problems.join("; ")),
        ));
    }
    Ok(Inspection { has_ledger })
}

/// The backup taken before migrating `path` from schema `from` to `to`: a consistent copy
/// beside the file (`nomos.db.bak-<from>-<to>`, then `.2`, `.3`… if that name is taken, so
/// an earlier backup is never overwritten).
fn backup_before_migration(path: &Path, from: i64, to: i64) -> Result<PathBuf, StoreError> {
    let base = {
        let mut s = path.as_os_str().to_owned();
        s.push(format!(".bak-{from}-{to}"));
        PathBuf::from(s)
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| with_path(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| with_path(path, e))?;
    for n in 1..=100u32 {
        let dest = if n == 1 {
            base.clone()
        } else {
            let mut s = base.as_os_str().to_owned();
            s.push(format!(".{n}"));
            PathBuf::from(s)
        };
        if dest.exists() {
            continue;
        }
        let Some(dest_str) = dest.to_str() else {
            return Err(StoreError::Io {
                path: dest,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the backup path is not valid UTF-8",
                ),
            });
        };
        match conn.execute("VACUUM INTO ?1", [dest_str]) {
            Ok(_) => {
                tracing::info!(from, to, backup = %dest.display(), "database backed up before migration");
                return Ok(dest);
            }
            // Another process took this name between the check and the copy.
            Err(_) if dest.exists() => {}
            Err(e) => {
                return Err(StoreError::Io {
                    path: dest,
                    source: std::io::Error::other(format!(
                        "could not back up the database before migrating it: {e}"
                    )),
                });
            }
        }
    }
    Err(StoreError::Io {
        path: base,
        source: std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "too many earlier backups beside the database",
        ),
    })
}

fn apply(conn: &Connection, pending: &[&Migration], clock: &dyn Clock) -> Result<(), StoreError> {
    for m in pending {
        tracing::info!(version = m.version, name = m.name, "applying migration");
        // Foreign keys cannot be toggled inside a transaction; migrations that rebuild tables
        // need them off, and a foreign_key_check afterwards proves nothing was orphaned.
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        let res = (|| -> Result<(), StoreError> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let body = (|| -> Result<(), StoreError> {
                // Another process may have applied it while this one waited for the lock.
                let done: bool = conn.query_row(
                    "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = ?1)",
                    [m.version],
                    |r| r.get(0),
                )?;
                if done {
                    return Ok(());
                }
                conn.execute_batch(m.sql)?;
                let orphan: Option<String> = conn
                    .query_row(
                        "SELECT \"table\" FROM pragma_foreign_key_check LIMIT 1",
                        [],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(t) = orphan {
                    return Err(StoreError::Conflict {
                        message: format!(
                            "Migration {} would leave rows of {t} without their parent; \
                             the database was not changed",
                            m.version
                        ),
                    });
                }
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?1, ?2, ?3)",
                    rusqlite::params![m.version, m.name, clock.now_ms()],
                )?;
                Ok(())
            })();
            match body {
                Ok(()) => conn.execute_batch("COMMIT").map_err(StoreError::from),
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(e)
                }
            }
        })();
        conn.pragma_update(None, "foreign_keys", "ON")?;
        res?;
    }
    Ok(())
}

fn preview(tables: &[String]) -> String {
    let mut s: Vec<&str> = tables.iter().take(5).map(String::as_str).collect();
    if tables.len() > 5 {
        s.push("…");
    }
    s.join(", ")
}

/// Build a database at an older schema version (fixture generator and migration tests).
/// Returns a raw connection so the caller can insert rows in that version's shape.
#[doc(hidden)]
pub fn open_raw_at_version(path: &Path, version: i64) -> Result<Connection, StoreError> {
    open_and_migrate(path, Some(version), &SystemClock)
}
