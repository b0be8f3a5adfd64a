//! The masking test family: generated tables of (kind × spelling × context) that must be
//! masked, and look-alikes that must come through unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_mask::{MARKER_OPEN, mask};

/// A small deterministic generator, so every run tests the same values.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| a[(self.next() as usize) % a.len()])
            .collect()
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_NUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const CRYPT: &str = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &str = "0123456789abcdef";

/// Wraps a line the way command output carries it.
fn contexts(line: &str) -> Vec<String> {
    vec![
        line.to_owned(),
        format!("{line}\n"),
        format!("first line\n{line}\nlast line"),
        format!("{line}\r\nnext"),
        format!("2026-12-01T09:00:00Z INFO loaded: {line}"),
        format!("/srv/app/.env:12:{line}"),
        format!("    {line}"),
    ]
}

/// Asserts `input` masks every piece of `secret` and is idempotent.
fn assert_masked(input: &str, secret: &str) {
    let out = mask(input);
    assert!(
        !out.contains(secret),
        "secret left in output\n input: {input:?}\noutput: {out:?}"
    );
    assert!(out.contains(MARKER_OPEN), "no marker in {out:?}");
    let again = mask(&out);
    assert_eq!(again, out, "masking is not idempotent for {input:?}");
}

fn assert_kept(input: &str) {
    let out = mask(input);
    assert_eq!(out, input, "a look-alike was masked");
}

#[test]
fn private_key_blocks_in_every_format() {
    let mut g = Gen(1);
    for label in [
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        let body = format!("{}\n{}", g.pick(B64, 64), g.pick(B64, 40));
        for (open, close) in [
            (
                format!("-----BEGIN {label}-----"),
                format!("-----END {label}-----"),
            ),
            (
                format!("---- BEGIN {label} ----"),
                format!("---- END {label} ----"),
            ),
        ] {
            let block = format!("{open}\n{body}\n{close}");
            for c in contexts(&block) {
                assert_masked(&c, &body[..64]);
                assert_masked(&c, &body[65..]);
            }
            // JSON-escaped newlines, and output cut before the END line.
            let escaped = format!(
                r#"{{"key": "{open}\n{}\n{close}"}}"#,
                body.replace('\n', "\\n")
            );
            assert_masked(&escaped, &body[..64]);
            let cut = format!("{open}\n{body}");
            assert_masked(&cut, &body[65..]);
        }
    }
    // PuTTY .ppk and age identities.
    let lines = [g.pick(B64, 64), g.pick(B64, 64), g.pick(B64, 20)];
    let ppk = format!(
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5\nAAAAIA\nPrivate-Lines: 3\n{}\n{}\n{}\nPrivate-MAC: {}",
        lines[0],
        lines[1],
        lines[2],
        g.pick(HEX, 64)
    );
    for c in contexts(&ppk) {
        for l in &lines {
            assert_masked(&c, l);
        }
    }
    let age = format!(
        "AGE-SECRET-KEY-1{}",
        g.pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
            .to_uppercase()
    );
    for c in contexts(&format!("# created: 2026-12-01\n{age}")) {
        assert_masked(&c, &age[16..]);
    }
}

#[test]
fn password_hashes_and_shadow_lines() {
    let mut g = Gen(2);
    let hashes = vec![
        format!("$1${}${}", g.pick(CRYPT, 8), g.pick(CRYPT, 22)),
        format!("$5${}${}", g.pick(CRYPT, 16), g.pick(CRYPT, 43)),
        format!("$6${}${}", g.pick(CRYPT, 16), g.pick(CRYPT, 86)),
        format!(
            "$6$rounds=656000${}${}",
            g.pick(CRYPT, 16),
            g.pick(CRYPT, 86)
        ),
        format!("$2b$12${}", g.pick(CRYPT, 53)),
        format!("$2y$10${}", g.pick(CRYPT, 53)),
        format!("$2a$08${}", g.pick(CRYPT, 53)),
        format!("$y$j9T${}${}", g.pick(CRYPT, 22), g.pick(CRYPT, 43)),
        format!("$gy$j9T${}${}", g.pick(CRYPT, 22), g.pick(CRYPT, 43)),
        format!("$7$CU..../....{}${}", g.pick(CRYPT, 16), g.pick(CRYPT, 43)),
        format!(
            "$argon2id$v=19$m=65536,t=3,p=4${}${}",
            g.pick(B64, 22),
            g.pick(B64, 43)
        ),
        format!(
            "$argon2i$v=19$m=4096,t=3,p=1${}${}",
            g.pick(B64, 16),
            g.pick(B64, 32)
        ),
        format!("$apr1${}${}", g.pick(CRYPT, 8), g.pick(CRYPT, 22)),
        format!(
            "$pbkdf2-sha256$29000${}${}",
            g.pick(CRYPT, 22),
            g.pick(CRYPT, 43)
        ),
        format!(
            "SCRAM-SHA-256$4096:{}${}:{}",
            g.pick(B64, 24),
            g.pick(B64, 44),
            g.pick(B64, 44)
        ),
        format!("md5{}", g.pick(HEX, 32)),
        format!("{{SSHA}}{}", g.pick(B64, 32)),
    ];
    for h in &hashes {
        // The distinctive tail of the hash must not survive.
        let tail = &h[h.len() - 12..];
        for line in [
            h.clone(),
            format!("root:{h}:19700:0:99999:7:::"),
            format!("backup:!{h}:19700:0:99999:7:::"),
            format!("admin:{h}"),
            format!("password_hash = '{h}'"),
            format!("ALTER ROLE app PASSWORD '{h}';"),
        ] {
            for c in contexts(&line) {
                assert_masked(&c, tail);
            }
        }
    }
    // Traditional DES in a shadow line.
    let des = g.pick(CRYPT, 13);
    for c in contexts(&format!("olduser:{des}:19700:0:99999:7:::")) {
        assert_masked(&c, &des);
    }
}

#[test]
fn provider_tokens_by_prefix() {
    let mut g = Gen(3);
    let tokens = vec![
        format!(
            "eyJ{}.eyJ{}.{}",
            g.pick(URLSAFE, 20),
            g.pick(URLSAFE, 40),
            g.pick(URLSAFE, 43)
        ),
        format!("sk-{}", g.pick(ALNUM, 48)),
        format!("sk-proj-{}", g.pick(URLSAFE, 64)),
        format!("sk-ant-api03-{}", g.pick(URLSAFE, 80)),
        format!("sk_live_{}", g.pick(ALNUM, 24)),
        format!("rk_test_{}", g.pick(ALNUM, 24)),
        format!("ghp_{}", g.pick(ALNUM, 36)),
        format!("gho_{}", g.pick(ALNUM, 36)),
        format!("ghs_{}", g.pick(ALNUM, 36)),
        format!("github_pat_{}_{}", g.pick(ALNUM, 22), g.pick(ALNUM, 59)),
        format!("glpat-{}", g.pick(URLSAFE, 20)),
        format!("gldt-{}", g.pick(URLSAFE, 20)),
        format!(
            "xoxb-{}-{}-{}",
            g.pick("0123456789", 12),
            g.pick("0123456789", 13),
            g.pick(ALNUM, 24)
        ),
        format!("xoxp-{}-{}", g.pick("0123456789", 12), g.pick(ALNUM, 32)),
        format!("AKIA{}", g.pick(UPPER_NUM, 16)),
        format!("ASIA{}", g.pick(UPPER_NUM, 16)),
        format!("AIza{}", g.pick(URLSAFE, 35)),
        format!("ya29.{}", g.pick(URLSAFE, 60)),
        format!("hvs.{}", g.pick(URLSAFE, 90)),
        format!("npm_{}", g.pick(ALNUM, 36)),
        format!("pypi-AgEIcHlwaS5vcmc{}", g.pick(URLSAFE, 60)),
        format!("hf_{}", g.pick(ALNUM, 34)),
        format!("dop_v1_{}", g.pick(HEX, 64)),
        format!("tskey-auth-{}-{}", g.pick(ALNUM, 12), g.pick(ALNUM, 30)),
        format!("dckr_pat_{}", g.pick(URLSAFE, 27)),
        format!("whsec_{}", g.pick(ALNUM, 32)),
        format!("GOCSPX-{}", g.pick(URLSAFE, 28)),
    ];
    for t in &tokens {
        let tail = &t[t.len() - 12..];
        for line in [
            t.clone(),
            format!("token used: {t} (expires never)"),
            format!("\"{t}\""),
            format!("https://x.example/api?access={t}&x=1"),
            format!("curl -H 'X-Custom: {t}' https://x"),
            format!("value={t}"),
        ] {
            for c in contexts(&line) {
                assert_masked(&c, tail);
            }
        }
    }
    // Webhooks: the path is the secret.
    let slack = format!(
        "T{}/B{}/{}",
        g.pick(UPPER_NUM, 10),
        g.pick(UPPER_NUM, 10),
        g.pick(ALNUM, 24)
    );
    let discord = format!("{}/{}", g.pick("0123456789", 18), g.pick(URLSAFE, 68));
    for (url, secret) in [
        (
            format!("https://hooks.slack.com/services/{slack}"),
            slack.clone(),
        ),
        (
            format!("https://discord.com/api/webhooks/{discord}"),
            discord.clone(),
        ),
        (
            format!("https://discordapp.com/api/webhooks/{discord}"),
            discord.clone(),
        ),
    ] {
        for c in contexts(&format!("WEBHOOK={url}")) {
            assert_masked(&c, &secret[secret.len() - 16..]);
        }
        for c in contexts(&format!("notify: {url} done")) {
            assert_masked(&c, &secret[secret.len() - 16..]);
        }
    }
}

#[test]
fn credentials_in_urls_of_any_scheme() {
    let passwords = [
        "S3cr3tPw",
        "p@ss:w0rd!",
        "hunter2hunter2",
        "a%40b%2Fc",
        "Zq7-mP3x.V9~wLr2",
    ];
    for scheme in [
        "postgres",
        "postgresql",
        "mysql",
        "redis",
        "rediss",
        "amqp",
        "amqps",
        "mongodb",
        "mongodb+srv",
        "https",
        "http",
        "smb",
        "ftp",
        "sftp",
        "ldap",
        "git+https",
    ] {
        for pw in passwords {
            for user in ["app", "", "admin.user", "x-access-token"] {
                let url = format!("{scheme}://{user}:{pw}@db.lan:5432/app?sslmode=require");
                for line in [
                    url.clone(),
                    format!("DATABASE_URL={url}"),
                    format!("url = \"{url}\""),
                    format!("connecting to {url} ..."),
                ] {
                    for c in contexts(&line) {
                        assert_masked(&c, pw);
                    }
                }
            }
        }
    }
    // Go MySQL DSN, curl -u.
    assert_masked("dsn: app:Sup3rS3cret@tcp(db:3306)/app", "Sup3rS3cret");
    assert_masked(
        "curl -sS -u admin:Sup3rS3cret https://nas.lan/api",
        "Sup3rS3cret",
    );
    assert_masked(
        "curl --user 'admin:Sup3rS3cret' https://nas.lan/api",
        "Sup3rS3cret",
    );
}

#[test]
fn authorization_and_cookie_headers() {
    let mut g = Gen(4);
    let basic = "YWRtaW46aHVudGVyMg==";
    let opaque = g.pick(ALNUM, 40);
    for (scheme, v) in [
        ("Basic", basic.to_owned()),
        ("Bearer", opaque.clone()),
        ("token", opaque.clone()),
        ("", opaque.clone()),
    ] {
        let sep = if scheme.is_empty() { "" } else { " " };
        for header in [
            "Authorization",
            "authorization",
            "AUTHORIZATION",
            "Proxy-Authorization",
        ] {
            for line in [
                format!("{header}: {scheme}{sep}{v}"),
                format!("curl -H '{header}: {scheme}{sep}{v}' https://x"),
                format!("curl -H \"{header}: {scheme}{sep}{v}\" https://x"),
                format!("{{\"{header}\": \"{scheme}{sep}{v}\"}}"),
                format!("> {header}: {scheme}{sep}{v}"),
            ] {
                for c in contexts(&line) {
                    assert_masked(&c, &v);
                }
            }
        }
    }
    for line in [
        format!("Cookie: sessionid={opaque}; csrftoken=abc123def456"),
        format!("< Set-Cookie: PHPSESSID={opaque}; path=/; HttpOnly"),
        format!("Bearer {opaque}"),
    ] {
        for c in contexts(&line) {
            assert_masked(&c, &opaque);
        }
    }
}

/// Names of settings that hold a secret, in the spellings real files use.
const SECRET_NAMES: &[&str] = &[
    "DB_PASS",
    "DB_PASSWORD",
    "MYSQL_PWD",
    "MYSQL_ROOT_PASSWORD",
    "POSTGRES_PASSWORD",
    "PGPASSWORD",
    "GITEA_TOKEN",
    "GITEA__security__SECRET_KEY",
    "smtp.password",
    "spring.datasource.password",
    "ssl.keystore.password",
    "db-password",
    "dbPassword",
    "Password",
    "password",
    "PASSWORD",
    "passwd",
    "pass",
    "passphrase",
    "SSH_PASSPHRASE",
    "api_key",
    "apiKey",
    "ApiKey",
    "API-KEY",
    "X-Api-Key",
    "x_api_key",
    "AWS_SECRET_ACCESS_KEY",
    "aws_secret_access_key",
    "SecretAccessKey",
    "aws_session_token",
    "SessionToken",
    "client_secret",
    "CLIENT_SECRET",
    "clientSecret",
    "SECRET_KEY",
    "DJANGO_SECRET_KEY",
    "SECRET_KEY_BASE",
    "secret",
    "secrets",
    "PRIVATE_KEY",
    "privateKey",
    "PrivateKey",
    "PresharedKey",
    "access_key",
    "token",
    "auth_token",
    "authToken",
    "access_token",
    "refresh_token",
    "id_token",
    "VAULT_TOKEN",
    "bot_token",
    "TELEGRAM_BOT_TOKEN",
    "AUTH",
    "basic_auth",
    "credentials",
    "CREDENTIAL",
    "AUTH_SALT",
    "SECURE_AUTH_SALT",
    "salt",
    "cookie_secret",
    "session_secret",
    "session_key",
    "sessionid",
    "PHPSESSID",
    "webhook_secret",
    "encryption_key",
    "JWT_SECRET",
    "master_key",
    "RAILS_MASTER_KEY",
    "license_key",
    "TS_AUTHKEY",
    "GF_SECURITY_ADMIN_PASSWORD",
    "MINIO_ROOT_PASSWORD",
    "RABBITMQ_DEFAULT_PASS",
    "MONGO_INITDB_ROOT_PASSWORD",
    "NEXTCLOUD_ADMIN_PASSWORD",
    "REDIS_PASSWORD",
    "rootpw",
    "bindpw",
    "bind_pw",
    "xsrftoken",
    "PVEAPIToken",
    "psk",
    "wpa_psk",
    "wpa_passphrase",
    "_authToken",
    "client-key-data",
    "auth",
];

/// How a name and a value are joined, as `(line, value as it appears)`.
fn spellings(name: &str, v: &str) -> Vec<String> {
    vec![
        format!("{name}={v}"),
        format!("{name} = {v}"),
        format!("{name}: {v}"),
        format!("{name}:{v}"),
        format!("{name}=\"{v}\""),
        format!("{name}='{v}'"),
        format!("{name} = \"{v}\""),
        format!("\"{name}\": \"{v}\""),
        format!("\"{name}\":\"{v}\""),
        format!("'{name}' => '{v}'"),
        format!("{name} := \"{v}\""),
        format!("export {name}={v}"),
        format!("export {name}=\"{v}\""),
        format!("  - {name}={v}"),
        format!("Environment=\"{name}={v}\""),
        format!("ENV {name}={v}"),
        format!("docker run -e {name}={v} app"),
        format!("<{name}>{v}</{name}>"),
        format!("os.environ[\"{name}\"] = \"{v}\""),
        format!("define('{name}', '{v}');"),
        format!("{{\\\"{name}\\\":\\\"{v}\\\"}}"),
        format!("user=root {name}={v} port=5432"),
        format!("Server=db;{name}={v};Database=app"),
        format!("--{name}={v}"),
    ]
}

#[test]
fn settings_named_as_secrets_in_any_case_and_separator() {
    let mut g = Gen(5);
    for name in SECRET_NAMES {
        let v = format!("{}{}", g.pick(ALNUM, 10), g.pick("@#%+/=!^", 1));
        for line in spellings(name, &v) {
            // A name with `-` or `.` cannot be a PHP constant or an XML element name in
            // practice, but the rule does not care.
            for c in contexts(&line) {
                assert_masked(&c, &v);
            }
        }
    }
}

#[test]
fn space_separated_and_command_line_secrets() {
    let v = "Zq7mP3xV9wLr2";
    for line in [
        format!("requirepass {v}"),
        format!("requirepass \"{v}\""),
        format!("masterauth {v}"),
        format!("REQUIREPASS {v}"),
        format!("machine nas.lan login admin password {v}"),
        format!("password {v}"),
        format!("  passwd {v}"),
        format!("db.lan:5432:app:app:{v}"),
        format!("*:*:*:postgres:{v}"),
        format!("mysql -u root -p{v} -e 'select 1'"),
        format!("mysqldump -uroot -p{v} app"),
        format!("sshpass -p {v} ssh root@host"),
        format!("redis-cli -a {v} ping"),
        format!("mysql -uroot -p'{v}' app"),
        format!("mysql -uroot -p\"{v}\" app"),
        format!("sshpass -p '{v}' ssh root@host"),
        format!("redis-cli --pass \"{v}\" ping"),
        format!("restic --password {v} snapshots"),
        format!("vault login -token {v}"),
        format!("tool --api-key {v} --verbose"),
        format!("tool --client-secret '{v}'"),
        format!("PrivateKey = {v}="),
        format!("PresharedKey = {v}="),
        format!("password   {v}"),
    ] {
        // `password x` counts only at the start of a line (in prose the next word is no
        // password), so it gets the contexts that keep it there.
        let at_line_start = line.trim_start().starts_with("pass");
        for (i, c) in contexts(&line).into_iter().enumerate() {
            if at_line_start && (i == 4 || i == 5) {
                continue;
            }
            assert_masked(&c, v);
        }
    }
}

#[test]
fn look_alikes_stay_readable() {
    for line in [
        "PasswordAuthentication no",
        "PasswordAuthentication=no",
        "ssh -o PasswordAuthentication=no -o BatchMode=yes host",
        "PermitEmptyPasswords no",
        "KbdInteractiveAuthentication no",
        "password_min_length=8",
        "PASSWORD_MIN_LENGTH = 12",
        "max_tokens: 4096",
        "token_ttl=3600",
        "token_endpoint: https://idp.example/token",
        "token_endpoint_auth_methods_supported: [\"client_secret_basic\"]",
        // A file that holds a key is a path, not the key (DESIGN: masking keeps paths readable).
        "KEY_FILE=/etc/x.pem",
        "ssl_key_file = /etc/ssl/private/key.pem",
        "DB_PASSWORD_FILE=/run/secrets/db_password",
        "ssh_key: ~/.ssh/id_ed25519.pub",
        "PublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=",
        "the token bucket refills every second",
        "a secret in prose is fine",
        "costs $6 per month, or $5 yearly",
        "PWD=/root",
        "OLDPWD=/tmp",
        "author: Jane Doe",
        "keyring: unlocked",
        "bypass: true",
        "authorized_keys: 3 entries",
        "Accepted publickey for root from 10.0.0.1 port 22 ssh2",
        "pam_unix(sshd:session): session opened for user root(uid=0) by (uid=0)",
        "pam_unix(sudo:auth): authentication failure; logname= uid=1000",
        "New session 3 of user root.",
        "DB_PASS=${DB_PASS}",
        "DB_PASS=$DB_PASS",
        "password: \"{{ vault_db_password }}\"",
        "api_key: <your-api-key>",
        "password: null",
        "token: \"\"",
        "password: ********",
        "passwd:         files systemd",
        "/etc/passwd:root:x:0:0:root:/root:/bin/bash",
        "root:x:0:0:root:/root:/bin/bash",
        "docker:x:999:alice",
        "Password expires\t\t\t\t\t: never",
        "Last password change\t\t\t\t\t: Nov 28, 2026",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
        "git@github.com:org/repo.git",
        "https://example.com:8443/path?user=a@b.example",
        "http://[::1]:8080/health",
        "fe80:0:0:0:200:f8ff:fe21:67cf",
        "d41d8cd98f00b204e9800998ecf8427e  /etc/hosts",
        "scikit-learn==1.5.0",
        "TOKEN_TYPE=Bearer",
        "auth_method: password",
        "Dec 01 09:11:53 pve sshd[2211]: Failed password for invalid user admin from 10.0.0.9",
        "FATAL:  password authentication failed for user \"app\"",
        "[secret masked by Nomos: password]",
        "DB_PASS=[secret masked by Nomos: password]",
    ] {
        assert_kept(line);
    }
}

#[test]
fn text_without_secrets_is_not_copied() {
    let plain = "systemctl status nginx; df -h --output=avail\nDec 01 eth0: link up";
    assert!(matches!(mask(plain), std::borrow::Cow::Borrowed(_)));
}

proptest::proptest! {
    #[test]
    fn masking_is_idempotent(s in "[ -~\n]{0,200}") {
        let once = mask(&s).into_owned();
        proptest::prop_assert_eq!(mask(&once), once.clone());
    }

    #[test]
    fn a_generated_setting_is_masked_wherever_it_sits(
        name in proptest::sample::select(SECRET_NAMES),
        v in "[A-Za-z0-9]{6,20}[@#%+]",
        before in "[a-z ]{0,20}",
        after in "( [a-z]{1,10})?",
    ) {
        let line = format!("{before} {name}={v}{after}");
        let out = mask(&line);
        proptest::prop_assert!(!out.contains(&v), "{} -> {}", line, out);
    }
}
