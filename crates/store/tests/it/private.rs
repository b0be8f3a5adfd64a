//! C1: the data directory and everything in it are private to the user, checked by stat on
//! real files.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nomos_store::private::{create_private_file, secure_data_dir};
use nomos_store::{NewMessage, NewSession, Store};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn chmod(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// Writes enough through the store that SQLite has its -wal and -shm files.
fn write_some(store: &Store) {
    let s = store
        .create_session(NewSession {
            title: "t".into(),
            goal: None,
        })
        .unwrap();
    store
        .append_message(&NewMessage::user(s.id, "hello".to_owned()))
        .unwrap();
}

#[test]
fn c1_a_fresh_data_dir_and_database_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("share/nomos");
    let store = Store::open_in_dir(&dir).unwrap();
    write_some(&store);
    assert_eq!(mode(&dir), 0o700, "data dir");
    assert_eq!(mode(&tmp.path().join("share")), 0o700, "created parent");
    for name in ["nomos.db", "nomos.db-wal", "nomos.db-shm"] {
        let p = dir.join(name);
        assert!(p.exists(), "{name} missing");
        assert_eq!(mode(&p), 0o600, "{name}");
    }
    // Everything else the store made there (the owner locks of I24 among them) is private too.
    let mut seen = 0;
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            seen += 1;
            if p.is_dir() {
                assert_eq!(mode(&p), 0o700, "{}", p.display());
                stack.push(p);
            } else {
                assert_eq!(mode(&p), 0o600, "{}", p.display());
            }
        }
    }
    assert!(seen > 4, "the owner lock and its directory are there too");
    drop(store);
}

#[test]
fn c1_a_database_opened_by_path_is_private_and_its_existing_parent_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    chmod(tmp.path(), 0o755);
    let db = tmp.path().join("elsewhere.db");
    let store = Store::open(&db).unwrap();
    write_some(&store);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&tmp.path().join("elsewhere.db-wal")), 0o600);
    assert_eq!(
        mode(tmp.path()),
        0o755,
        "a directory Nomos did not create keeps its mode"
    );
}

#[test]
fn c1_what_an_older_build_left_readable_is_tightened_at_start_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nomos");
    {
        let store = Store::open_in_dir(&dir).unwrap();
        write_some(&store);
    }
    // The state an older build left: everything world-readable.
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::write(dir.join("logs/nomos.2026-11-30.log"), "old log").unwrap();
    std::fs::write(dir.join("settings.json"), "{}").unwrap();
    std::fs::write(dir.join("auth-refresh.lock"), "").unwrap();
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, "not ours").unwrap();
    chmod(&outside, 0o644);
    std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
    for p in [
        "nomos.db",
        "nomos.db-wal",
        "nomos.db-shm",
        "settings.json",
        "auth-refresh.lock",
        "logs/nomos.2026-11-30.log",
    ] {
        if dir.join(p).exists() {
            chmod(&dir.join(p), 0o644);
        }
    }
    chmod(&dir.join("logs"), 0o755);
    chmod(&dir, 0o755);

    secure_data_dir(&dir).unwrap();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("logs")), 0o700);
    for p in [
        "nomos.db",
        "settings.json",
        "auth-refresh.lock",
        "logs/nomos.2026-11-30.log",
    ] {
        assert_eq!(mode(&dir.join(p)), 0o600, "{p}");
    }
    assert_eq!(
        mode(&outside),
        0o644,
        "a symlink's target outside is not touched"
    );

    // Opening the store tightens the database and its -wal/-shm on its own too.
    chmod(&dir.join("nomos.db"), 0o644);
    for side in ["nomos.db-wal", "nomos.db-shm"] {
        if dir.join(side).exists() {
            chmod(&dir.join(side), 0o664);
        }
    }
    let store = Store::open_in_dir(&dir).unwrap();
    write_some(&store);
    for name in ["nomos.db", "nomos.db-wal", "nomos.db-shm"] {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
}

#[test]
fn c1_private_files_are_created_0600_and_never_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("settings.json");
    create_private_file(&p).unwrap();
    assert_eq!(mode(&p), 0o600);
    std::fs::write(&p, "{\"kept\":true}").unwrap();
    chmod(&p, 0o640);
    create_private_file(&p).unwrap();
    assert_eq!(mode(&p), 0o600);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"kept\":true}");
}
