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
    assert!(
        !dir.path().join(format!("{name}-wal")).exists() || {
            std::fs::metadata(dir.path().join(format!("{name}-wal")))
                .unwrap()
                .len()
                == 0
        }
    );
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
