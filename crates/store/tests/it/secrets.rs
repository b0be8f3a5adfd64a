use nomos_store::{NewAudit, NewMessage, REDACTED, redact};
use serde_json::json;

use crate::common::*;

const FAKE_KEY: &str = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789";
const FAKE_JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvcGVyYXRvciJ9.c2lnbmF0dXJlLXZhbHVl";

#[test]
fn no_column_is_named_like_a_secret() {
    let t = store();
    let c = rusqlite::Connection::open(t.path()).unwrap();
    let mut st = c
        .prepare("SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'")
        .unwrap();
    let cols: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(cols.len() > 50, "{}", cols.len());
    for (table, col) in cols {
        let lc = col.to_lowercase();
        for bad in [
            "token",
            "secret",
            "password",
            "passwd",
            "api_key",
            "apikey",
            "credential",
            "private_key",
            "bearer",
        ] {
            assert!(
                !lc.contains(bad),
                "{table}.{col} looks like it holds a secret"
            );
        }
    }
}

#[test]
fn redact_scrubs_common_credential_shapes() {
    let cases = [
        (format!("curl -H 'Authorization: Bearer {FAKE_JWT}' https://x"), FAKE_JWT),
        (format!("OPENAI_API_KEY={FAKE_KEY} nomos ask"), FAKE_KEY),
        (format!(r#"{{"api_key": "{FAKE_KEY}"}}"#), FAKE_KEY),
        ("password: hunter2secret".to_string(), "hunter2secret"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used".to_string(), "ghp_abcdefghij"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----".to_string(), "b3BlbnNzaC1rZXk"),
        ("AKIAIOSFODNN7EXAMPLE".to_string(), "AKIAIOSFODNN7EXAMPLE"),
    ];
    for (input, secret) in cases {
        let out = redact(&input);
        assert!(!out.contains(secret), "{input} → {out}");
        assert!(out.contains(REDACTED), "{out}");
    }
    // Ordinary operator text is untouched (and not copied).
    let plain = "systemctl status nginx; PasswordAuthentication no; df -h --output=avail";
    assert!(matches!(redact(plain), std::borrow::Cow::Borrowed(_)));
}

#[test]
fn secrets_never_enter_the_database_file() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    t.store
        .append_message(&NewMessage::user(sid, format!("use key {FAKE_KEY}")))
        .unwrap();
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    t.store
        .record_tool_call(
            m.id,
            "c",
            "run",
            &format!(r#"{{"command":"curl -H 'Authorization: Bearer {FAKE_JWT}' x"}}"#),
        )
        .unwrap();
    t.store
        .set_tool_result(m.id, "c", &format!("token={FAKE_KEY}"), false)
        .unwrap();
    t.store.finish_message(m.id, None).unwrap();
    t.store
        .record_audit(&NewAudit::new(
            Some(sid),
            "run",
            format!(r#"{{"api_key":"{FAKE_KEY}"}}"#),
            "ok",
        ))
        .unwrap();
    let e = t
        .store
        .create_execution(&read_only(
            sid,
            "host:a",
            &format!("curl -H 'Authorization: Bearer {FAKE_JWT}' https://api"),
        ))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store
        .finish_execution(
            e.id,
            &finished(&format!("{{\"access_token\": \"{FAKE_JWT}\"}}")),
        )
        .unwrap();
    let err = t
        .store
        .update_entity_attributes(
            Some(sid),
            "host:a",
            json!({"root_password": "x"}).as_object().unwrap(),
        )
        .unwrap_err();
    assert_eq!(err.code(), "store.invalid_input");
    assert!(err.to_string().contains("Secrets never enter the database"));
    t.store
        .update_entity_attributes(
            Some(sid),
            "host:a",
            json!({"note": format!("key {FAKE_KEY}")})
                .as_object()
                .unwrap(),
        )
        .unwrap();
    let path = t.path();
    let wal_path = t.dir.path().join("nomos.db-wal");
    drop(t.store);
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(wal) = std::fs::read(&wal_path) {
        bytes.extend(wal);
    }
    let hay = String::from_utf8_lossy(&bytes);
    assert!(
        !hay.contains(FAKE_KEY),
        "API key found in the database file"
    );
    assert!(!hay.contains(FAKE_JWT), "token found in the database file");
}

/// C2: what `cat app.conf` printed reaches the executions row masked, for every kind of secret
/// the review found leaking (URL password, tokens named by setting, MySQL password, Basic
/// credentials, `DB_PASS`), and the database file holds none of them.
#[test]
fn c2_secrets_in_command_output_never_reach_the_stored_row() {
    let secrets = [
        "S3cr3tPw-url",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffee0001",
        "MyPwd-77x",
        "YWRtaW46aHVudGVyMg==",
        "Db-Pass-42!",
        "Zq7mP3xV9wLr2ab",
    ];
    let output = format!(
        "[database]\nurl = postgres://app:{}@db.lan:5432/app\nGITEA_TOKEN={}\nMYSQL_PWD={}\n\
         curl -H 'Authorization: Basic {}' https://nas.lan\nDB_PASS=\"{}\"\nsmtp.password = {}\n",
        secrets[0], secrets[1], secrets[2], secrets[3], secrets[4], secrets[5]
    );
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["x"]);
    let e = t
        .store
        .create_execution(&read_only(sid, "host:a", "cat /srv/app/app.conf"))
        .unwrap();
    t.store.start_execution(e.id).unwrap();
    let mut result = finished(&output);
    result.stderr = format!("warning: DB_PASS={} is weak", secrets[4]).into_bytes();
    result.error = Some(format!("exit note: MYSQL_PWD={} rejected", secrets[2]));
    let row = t.store.finish_execution(e.id, &result).unwrap();
    let again = t.store.get_execution(e.id).unwrap();
    for s in secrets {
        let errors = [
            row.error.clone().unwrap_or_default(),
            again.error.clone().unwrap_or_default(),
        ];
        for text in [
            &row.stdout,
            &row.stderr,
            &again.stdout,
            &again.stderr,
            &errors[0],
            &errors[1],
        ] {
            assert!(!text.contains(s), "{s} stored in {text}");
        }
    }
    assert!(
        row.stdout
            .contains("[secret masked by Nomos: URL password]"),
        "{}",
        row.stdout
    );
    assert!(
        row.stdout.contains("[secret masked by Nomos: token]"),
        "{}",
        row.stdout
    );
    // What is not a secret stays readable.
    assert!(row.stdout.contains("[database]") && row.stdout.contains("db.lan:5432/app"));
    let path = t.path();
    let wal_path = t.dir.path().join("nomos.db-wal");
    drop(t.store);
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(wal) = std::fs::read(&wal_path) {
        bytes.extend(wal);
    }
    let hay = String::from_utf8_lossy(&bytes);
    for s in secrets {
        assert!(!hay.contains(s), "{s} found in the database file");
    }
}
