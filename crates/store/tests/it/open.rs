use std::path::Path;
use std::process::Command;

use nomos_store::{NewSession, SessionQuery, Store, StoreError, latest_schema_version};

use crate::common::{noise, store};

fn siblings(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn open_creates_the_file_and_applies_every_migration() {
    let t = store();
    assert!(t.path().exists());
    assert_eq!(t.store.schema_version().unwrap(), latest_schema_version());
    assert!(latest_schema_version() >= 20261129000000);
}

#[test]
fn open_twice_and_reopen_keep_data() {
    let t = store();
    let s = t
        .store
        .create_session(NewSession {
            title: "Check updates".into(),
            goal: None,
        })
        .unwrap();
    let path = t.path();
    let again = Store::open(&path).unwrap();
    drop(t.store);
    let list = again.list_sessions(&SessionQuery::default()).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, s.id);
    drop(again);
    let third = Store::open(&path).unwrap();
    assert_eq!(third.get_session(s.id).unwrap().title, "Check updates");
}

#[test]
fn store_is_clone_send_sync() {
    fn assert_traits<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    assert_traits::<Store>();
}

#[test]
fn newer_schema_is_refused_and_the_file_is_not_changed() {
    let t = store();
    t.store
        .create_session(NewSession {
            title: "x".into(),
            goal: None,
        })
        .unwrap();
    let path = t.path();
    drop(t.store);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (99991231000000, 'future', 0)",
            [],
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let files_before = siblings(&path);
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "store.schema_too_new");
    let msg = err.to_string();
    assert!(msg.contains("newer Nomos"), "{msg}");
    assert!(msg.contains("99991231000000"), "{msg}");
    assert!(msg.contains(&latest_schema_version().to_string()), "{msg}");
    assert!(msg.contains("the file was not changed"), "{msg}");
    assert!(matches!(
        err,
        StoreError::SchemaTooNew {
            found: 99991231000000,
            ..
        }
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(siblings(&path), files_before);
}

#[test]
fn unknown_older_migration_is_refused() {
    let t = store();
    let path = t.path();
    drop(t.store);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (20000101000000, 'other_branch', 0)",
            [],
        )
        .unwrap();
    }
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "store.schema_unknown");
}

fn assert_corrupt_untouched(name: &str, bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_eq!(err.code(), "store.corrupt", "{name}: {err}");
    let msg = err.to_string();
    assert!(msg.contains("did not change it"), "{msg}");
    assert!(msg.contains(name), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was modified");
    // Opening again gives the same answer (nothing was "repaired" in between).
    assert_eq!(Store::open(&path).unwrap_err().code(), "store.corrupt");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was modified");
    // No -wal/-shm (or anything else) appeared beside it.
    assert_eq!(
        siblings(&path),
        vec![name.to_string()],
        "{name}: files left"
    );
}

/// A real Nomos database with enough rows to span many pages, closed cleanly.
fn populated_db_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("full.db");
    {
        let s = Store::open(&p).unwrap();
        for i in 0..200 {
            s.create_session(NewSession {
                title: format!("session {i} {}", "x".repeat(500)),
                goal: Some(format!("goal {i} {}", "y".repeat(300))),
            })
            .unwrap();
        }
    }
    let bytes = std::fs::read(&p).unwrap();
    // A clean close leaves the database alone, beside the (empty) owner-lock directory.
    assert_eq!(
        siblings(&p),
        vec!["full.db".to_string(), "owners".to_string()]
    );
    bytes
}

fn page_size(bytes: &[u8]) -> usize {
    match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => usize::from(n),
    }
}

fn overwrite_page(bytes: &mut [u8], page: usize, seed: u64) {
    let ps = page_size(bytes);
    let start = page * ps;
    bytes[start..start + ps].copy_from_slice(&noise(ps, seed));
}

#[test]
fn corrupt_last_pages_overwritten_is_refused_untouched() {
    let full = populated_db_bytes();
    let pages = full.len() / page_size(&full);
    for (n, seed) in [(1usize, 7u64), (2, 11), (4, 13)] {
        let mut bytes = full.clone();
        for k in 0..n {
            overwrite_page(&mut bytes, pages - 1 - k, seed + k as u64);
        }
        assert_corrupt_untouched(&format!("last{n}.db"), &bytes);
    }
    // Zeroed rather than noise.
    let mut bytes = full.clone();
    let ps = page_size(&full);
    let len = bytes.len();
    bytes[len - 2 * ps..].fill(0);
    assert_corrupt_untouched("lastzero.db", &bytes);
}

#[test]
fn corrupt_random_pages_in_the_middle_are_refused_untouched() {
    let full = populated_db_bytes();
    let pages = full.len() / page_size(&full);
    assert!(pages > 20, "{pages}");
    for (i, seed) in [3u64, 5, 17, 29].into_iter().enumerate() {
        let mut bytes = full.clone();
        // Pages 2.. hold the schema's tables and the rows (page 1 is the header + schema).
        let page = 1 + (i * (pages - 2)) / 4 + 1;
        overwrite_page(&mut bytes, page, seed);
        assert_corrupt_untouched(&format!("mid{i}.db"), &bytes);
    }
}

#[test]
fn corrupt_damaged_header_fields_are_refused_untouched() {
    let full = populated_db_bytes();
    // Page size not a power of two; reserved-space and payload fractions out of range;
    // the schema page (rest of page 1) garbled.
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Damage)> = vec![
        (
            "pagesize.db",
            Box::new(|b| b[16..18].copy_from_slice(&[0x12, 0x34])),
        ),
        (
            "fractions.db",
            Box::new(|b| b[21..24].copy_from_slice(&[1, 2, 3])),
        ),
        (
            "schema.db",
            Box::new(|b| b[100..600].copy_from_slice(&noise(500, 99))),
        ),
    ];
    for (name, damage) in cases {
        let mut bytes = full.clone();
        damage(&mut bytes);
        assert_corrupt_untouched(name, &bytes);
    }
}

#[test]
fn corrupt_truncated_at_several_points_is_refused_untouched() {
    let full = populated_db_bytes();
    let ps = page_size(&full);
    for (i, len) in [full.len() - ps, full.len() * 3 / 4, 3 * ps + 17]
        .into_iter()
        .enumerate()
    {
        assert_corrupt_untouched(&format!("trunc{i}.db"), &full[..len]);
    }
}

#[test]
fn a_migration_is_preceded_by_a_backup_beside_the_file() {
    let old = nomos_store::migrations()[0].version;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nomos.db");
    drop(nomos_store::open_raw_at_version(&path, old).unwrap());
    let bak = dir
        .path()
        .join(format!("nomos.db.bak-{old}-{}", latest_schema_version()));
    let original = std::fs::read(&path).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest_schema_version());
    drop(store);
    assert!(bak.exists(), "{:?}", siblings(&path));
    // The backup is a sound database at the old version.
    let c = rusqlite::Connection::open(&bak).unwrap();
    let v: i64 = c
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(v, old);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    drop(c);
    // A second migration from the same version never overwrites the first backup.
    let first_backup = std::fs::read(&bak).unwrap();
    std::fs::write(&path, &original).unwrap();
    drop(Store::open(&path).unwrap());
    assert_eq!(std::fs::read(&bak).unwrap(), first_backup);
    let mut second = bak.as_os_str().to_owned();
    second.push(".2");
    assert!(
        std::path::PathBuf::from(second).exists(),
        "{:?}",
        siblings(&path)
    );
    // Opening an up-to-date database takes no backup.
    let before = siblings(&path);
    drop(Store::open(&path).unwrap());
    assert_eq!(siblings(&path), before);
}

#[test]
fn corrupt_random_bytes_give_a_clear_error_and_are_never_overwritten() {
    assert_corrupt_untouched("random.db", &noise(64 * 1024, 0x9e37_79b9));
}

#[test]
fn corrupt_short_garbage_file_is_never_overwritten() {
    assert_corrupt_untouched("short.db", b"hello, not a database");
}

#[test]
fn corrupt_sqlite_header_with_garbage_pages_is_never_overwritten() {
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(noise(32 * 1024 - 16, 42));
    assert_corrupt_untouched("header.db", &bytes);
}

#[test]
fn corrupt_truncated_database_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.db");
    {
        let s = Store::open(&p).unwrap();
        for i in 0..200 {
            s.create_session(NewSession {
                title: format!("session {i} {}", "x".repeat(500)),
                goal: None,
            })
            .unwrap();
        }
    }
    let full = std::fs::read(&p).unwrap();
    assert!(full.len() > 64 * 1024, "{}", full.len());
    assert_corrupt_untouched("t.db", &full[..full.len() / 2]);
}

#[test]
fn a_database_of_another_program_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos VALUES (1, 'cat');")
            .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    assert_corrupt_untouched("other.db", &bytes);
}

#[test]
fn an_empty_file_is_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), latest_schema_version());
}

#[test]
fn open_in_dir_creates_missing_directories() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c");
    let s = Store::open_in_dir(&nested).unwrap();
    assert_eq!(s.path(), nested.join("nomos.db"));
    assert!(nested.join("nomos.db").exists());
}

#[test]
fn error_codes_are_stable() {
    let e = StoreError::NotFound {
        what: "session",
        id: "7".into(),
    };
    assert_eq!(e.code(), "store.not_found");
    assert_eq!(e.to_string(), "session 7 does not exist");
    assert!(!e.is_retryable());
    assert!(StoreError::Busy.is_retryable());
}

/// Helper for `default_data_dir_honours_nomos_data_dir`: run in a child process with the
/// environment prepared by the parent (the workspace forbids `unsafe`, so no `set_var`).
#[test]
#[ignore = "run by default_data_dir_* in a child process"]
fn print_default_data_dir() {
    println!(
        "DATA_DIR={}",
        nomos_store::default_data_dir().unwrap().display()
    );
}

fn child_data_dir(envs: &[(&str, &Path)], remove: &[&str]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        "open::print_default_data_dir",
        "--nocapture",
    ]);
    for k in remove {
        cmd.env_remove(k);
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("DATA_DIR="))
        .unwrap_or_else(|| panic!("no DATA_DIR line in {stdout}"))
        .to_owned()
}

#[test]
fn default_data_dir_honours_nomos_data_dir_and_creates_it() {
    let dir = tempfile::tempdir().unwrap();
    let want = dir.path().join("custom/data");
    let got = child_data_dir(&[("NOMOS_DATA_DIR", &want)], &[]);
    assert_eq!(Path::new(&got), want);
    assert!(want.is_dir());
}

#[cfg(target_os = "linux")]
#[test]
fn default_data_dir_falls_back_to_xdg_data_home() {
    let dir = tempfile::tempdir().unwrap();
    let got = child_data_dir(&[("XDG_DATA_HOME", dir.path())], &["NOMOS_DATA_DIR"]);
    assert_eq!(Path::new(&got), dir.path().join("nomos"));
    assert!(dir.path().join("nomos").is_dir());
}

#[test]
fn several_processes_opening_a_new_file_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.db");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path).map(|s| s.schema_version().unwrap())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), latest_schema_version());
    }
    let c = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM schema_migrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as usize, nomos_store::migrations().len());
}
