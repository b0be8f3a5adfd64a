//! Families from the fourth outside attack on the masker: outputs of real tools whose
//! secrets came through. Each family is the class with variations (secrets, spellings,
//! contexts); the last test keeps their look-alikes unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_mask::{MARKER_OPEN, mask};

const PASSWORDS: &[&str] = &[
    "S3cr3tPw9x",
    "hunter2hunter2",
    "p4ss;word&x",
    "Tr0ub4dor&3",
    "correct-horse-battery",
    "a1b2c3d4e5f6",
];

fn assert_masked(input: &str, secret: &str) {
    let out = mask(input);
    assert!(
        !out.contains(secret),
        "secret left in output\n input: {input:?}\noutput: {out:?}"
    );
    assert!(out.contains(MARKER_OPEN), "no marker in {out:?}");
    assert_eq!(mask(&out), out, "masking is not idempotent for {input:?}");
}

fn assert_kept(input: &str) {
    assert_eq!(mask(input), input, "a look-alike was masked");
}

/// Wraps a block the way command output carries it.
fn contexts(block: &str) -> Vec<String> {
    vec![
        block.to_owned(),
        format!("{block}\n"),
        format!("first line\n{block}\nlast line"),
        format!("{}\r\n", block.replace('\n', "\r\n")),
    ]
}

fn each(blocks: &[String], secret: &str) {
    for b in blocks {
        for c in contexts(b) {
            assert_masked(&c, secret);
        }
    }
}

#[test]
fn redis_config_get_replies() {
    for pw in PASSWORDS {
        let blocks: Vec<String> = ["requirepass", "masterauth", "tls-key-file-pass"]
            .iter()
            .flat_map(|n| {
                [
                    format!("{n}\n{pw}"),
                    format!("1) \"{n}\"\n2) \"{pw}\""),
                    format!("3) \"{n}\"\n4) \"{pw}\""),
                    format!("{n} \n{pw}"),
                ]
            })
            .collect();
        each(&blocks, pw);
    }
}

#[test]
fn secrets_named_in_a_sibling_field() {
    for pw in PASSWORDS {
        for name in [
            "DB_PASSWORD",
            "API_TOKEN",
            "SECRET_KEY",
            "adminPassword",
            "smtp.pass",
        ] {
            let blocks = [
                format!("    - name: {name}\n      value: {pw}"),
                format!("- name: {name}\n  value: \"{pw}\""),
                format!("env:\n- name: {name}\n  value: '{pw}'"),
                format!("{{\"name\":\"{name}\",\"value\":\"{pw}\"}}"),
                format!("{{\"name\": \"{name}\", \"value\": \"{pw}\"}}"),
                format!("set {{\n  name  = \"{name}\"\n  value = \"{pw}\"\n}}"),
                format!("<add key=\"{name}\" value=\"{pw}\" />"),
                format!("<property>\n  <name>{name}</name>\n  <value>{pw}</value>\n</property>"),
                format!("<entry key=\"{name}\">{pw}</entry>"),
            ];
            each(&blocks, pw);
        }
    }
}

#[test]
fn application_password_hashes() {
    let hashes = [
        "$P$BkJ2wigMjywRF351f9K9mzwFWyrXv9H",
        "$H$9I2tgq5MQgLaARyNz9TCCgT04Kf8bv8",
        "$S$DuR92LfV4PYQxqDvLqZ6Ai5lnBH2jklsadZK1NaS3ZlSqLTS1Gzq",
        "pbkdf2_sha256$600000$K68t4mVII3c7ocPBhjPx2C$k1Zt8mQ8cE2H4r3Z2hZ6Q4l1m0k9j8H7g6F5e4D3c2B=",
        "sha1$I8BSP$2bd4b25e4f3a16d3466c5fc7ac1fdb2e0d4e7f11",
        "argon2$argon2id$v=19$m=102400,t=2,p=8$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
        "*9A8CE6EF2C69F16CF8F8917FB2233FED3A62E38B",
        "$A$005$GdIQL2boZmC0kf2hJMVhVnNT6Ldev6kRO4xyz1234",
        "0x0200A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1",
    ];
    for h in hashes {
        let blocks = [
            format!("admin:{h}"),
            h.to_owned(),
            format!("| root | localhost | {h} |"),
            format!("  authentication_string: {h}"),
            format!(
                "CREATE USER `root`@`localhost` IDENTIFIED WITH 'mysql_native_password' AS '{h}'"
            ),
            format!("1\tadmin\t{h}\tadmin@example.org"),
        ];
        each(&blocks, h);
    }
    let acl = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae";
    each(
        &[
            format!("user default on #{acl} ~* &* +@all"),
            format!("1) \"user app on #{acl} ~app:* +@read\""),
        ],
        acl,
    );
}

#[test]
fn base64_wrapped_private_keys_and_registry_auth() {
    let kinds = [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
    ];
    for k in kinds {
        let pem = format!(
            "-----BEGIN {k}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END {k}-----\n"
        );
        let b64 = b64(pem.as_bytes());
        let blocks = [
            format!("data:\n  tls.key: {b64}"),
            format!("\"tls.key\":\"{b64}\""),
            format!("    client-key-data: {b64}"),
            b64.clone(),
        ];
        each(&blocks, &b64[30..70]);
    }
    for json in [
        "{\"auths\":{\"ghcr.io\":{\"auth\":\"dTpwYXNzd29yZA==\"}}}",
        "{\n  \"auths\": {\n    \"registry.example.org\": {\"username\":\"u\",\"password\":\"p\"}\n  }\n}",
    ] {
        let b = b64(json.as_bytes());
        each(
            &[
                format!("  .dockerconfigjson: {b}"),
                format!("\".dockerconfigjson\":\"{b}\""),
            ],
            &b[12..],
        );
    }
}

/// Standard base64 (the tests need no dependency for it).
fn b64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
        for _ in chunk.len()..3 {
            out.push('=');
        }
    }
    out
}

#[test]
fn aws_secret_keys_next_to_their_id() {
    let ids = ["AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A"];
    let secrets = [
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ];
    for id in ids {
        for sk in secrets {
            let blocks = [
                format!("{id}\t{sk}"),
                format!("{id}:{sk}"),
                format!("backups:{id}:{sk}"),
                format!("Access key ID,Secret access key\n{id},{sk}"),
                format!("User name,Password,Access key ID,Secret access key\nbob,,{id},{sk}"),
                format!("{id} | {sk}"),
            ];
            each(&blocks, sk);
        }
    }
}

#[test]
fn settings_separated_by_blanks_and_quoted_passwords() {
    for pw in PASSWORDS {
        let blocks = [
            format!("bindpw {pw}"),
            format!("rootpw {pw}"),
            format!("BINDPW {pw}"),
            format!("key \"rndc-key\" {{\n\talgorithm hmac-sha256;\n\tsecret \"{pw}\";\n}};"),
            format!("username admin privilege 15 password 0 {pw}"),
            format!("enable secret 0 {pw}"),
            format!("poll mail.example.org protocol imap user \"me\" password \"{pw}\""),
            format!("rocommunity {pw} default"),
            format!("rwcommunity {pw} 10.0.0.0/8"),
            format!("com2sec readonly default {pw}"),
        ];
        each(&blocks, pw);
    }
    let wg = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=";
    each(
        &[
            format!("interface: wg0\n  public key: x\n  private key: {wg}"),
            format!("peer: x\n  preshared key: {wg}"),
        ],
        &wg[..40],
    );
    let line = "e5f1a9c36b8d7a2f40c1e9b7d3a5f6c8";
    each(
        &[
            format!(
                "-----BEGIN OpenVPN Static key V1-----\n{line}\n{line}\n-----END OpenVPN Static key V1-----"
            ),
            format!(
                "Private-key-format: v1.3\nAlgorithm: 8 (RSASHA256)\nModulus: AAAA\nPrivateExponent: {line}"
            ),
            format!("Private-key-format: v1.3\nPrime1: {line}\nPrime2: x"),
        ],
        line,
    );
}

#[test]
fn lines_of_a_secret_name_and_its_value() {
    for pw in PASSWORDS {
        for name in [
            "token",
            "api_key",
            "apikey",
            "client_secret",
            "auth_token",
            "bind_pw",
            "db_password",
            "secret_key",
            "Password",
            "PASSWORD",
        ] {
            let blocks = [
                format!("{name} {pw}"),
                format!("{name}\t{pw}"),
                format!("  {name} \"{pw}\""),
                format!("{name} \"{pw}\";"),
            ];
            each(&blocks, pw);
        }
    }
}

#[test]
fn passwords_in_sql_and_redis_statements() {
    for pw in PASSWORDS {
        let blocks = [
            format!("ALTER USER app WITH PASSWORD '{pw}';"),
            format!("CREATE ROLE app LOGIN ENCRYPTED PASSWORD '{pw}';"),
            format!("CREATE USER 'app'@'%' IDENTIFIED BY '{pw}';"),
            format!(
                "alter user 'root'@'localhost' identified with caching_sha2_password by '{pw}';"
            ),
            format!("GRANT ALL ON *.* TO 'a'@'%' IDENTIFIED BY \"{pw}\";"),
            format!("SET PASSWORD FOR 'app'@'%' = '{pw}';"),
            format!("AUTH {pw}"),
            format!("AUTH default {pw}"),
            format!("1701234567.123456 [0 127.0.0.1:51234] \"AUTH\" \"{pw}\""),
            format!("1701234567.123456 [0 127.0.0.1:51234] \"auth\" \"app\" \"{pw}\""),
            format!("ACL SETUSER app on >{pw} ~app:* +@read"),
            format!("rabbitmqctl add_user app {pw}"),
            format!("rabbitmqctl change_password app {pw}"),
        ];
        each(&blocks, pw);
    }
}

#[test]
fn cluster_and_proxmox_tokens() {
    let uuid = "1b6f2c44-9a0e-4d7b-8c3a-5e2f7d9b0c1a";
    each(
        &[
            format!(
                "┌──────────────┬──────────────────────────────────────┐\n│ key          │ value                                │\n╞══════════════╪══════════════════════════════════════╡\n│ full-tokenid │ root@pam!ci                          │\n├──────────────┼──────────────────────────────────────┤\n│ info         │ {{\"privsep\":\"1\"}}                      │\n├──────────────┼──────────────────────────────────────┤\n│ value        │ {uuid} │\n└──────────────┴──────────────────────────────────────┘"
            ),
            format!(
                "{{\"full-tokenid\":\"root@pam!t\",\"info\":{{\"privsep\":1}},\"value\":\"{uuid}\"}}"
            ),
            format!("{{\"tokenid\":\"root@pam!backup\",\"value\":\"{uuid}\"}}"),
            format!(
                "AccessorID:       0d1e2f3a-0000-4000-8000-000000000000\nSecretID:         {uuid}"
            ),
            format!("Secret ID    = {uuid}"),
            format!("\"SecretID\": \"{uuid}\""),
        ],
        uuid,
    );
    let sig = "Zm9vYmFyYmF6cXV4cXV1eHh5enp5eHh5enp5eHh5enp5eHh5";
    each(
        &[
            format!("\"ticket\":\"PVE:root@pam:65A1B2C3::{sig}\""),
            format!("ticket: PBS:admin@pbs:65A1B2C3::{sig}"),
            format!("PVEVNC:root@pam:65A1B2C3::{sig}"),
        ],
        sig,
    );
    let join = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    each(
        &[
            format!("K10{}::server:{join}", "ab12".repeat(16)),
            format!("K10{}::node:{join}", "cd34".repeat(16)),
            format!("token: abcdef::server:{join}"),
        ],
        join,
    );
}

#[test]
fn provider_token_prefixes() {
    let tokens = [
        "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",
        "ATATT3xFfGF06xc4sohdmM0Lm7exG3lCMqXXQ8agOMTNwncxvjK3uLq9ZwErTyUiOpAsDfGhJkLzXcVbNm",
        "lin_api_NzN2m1ElKncz8HkywhjpU05mc4J1WRcQ1uhyMDJ2",
        "pscale_pw_OXtPAtLpByQxCGClbaNFDpCWNX0D1lZEzgeiwBxf",
        "PMAK-1142a21c402364f9572b85a8-e48f687ab165c58ac58354a1b2c3d4e5f6",
        "doo_v1_e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7e7",
        "glc_aNJQ8mjAmHMPGPPA0NlGtetOd4UYETIay2BV6DfVPClogq",
        "CFPAT-rOJRBRY6HqsP795nf4Gakq5p1Vm8kV6um4yvMpy62O6",
        "figd_SQ1IEE1HSa2bB9UoK4tYnzNLeK6kjcbhgN7kwjSb",
        "nfp_bciSPOcSeVce2LWxm090I5Qe43W6T8ygpnnh",
        "rnd_cc826ZWOf0WOOsEgigYWPnsuvBqbwq7s",
        "ntn_WWdawFgFSY0l9FLw91GqK8ks0n8SoFkh8OXfFYSJYgOuwg",
        "sq0csp-ssrKrxqVqmCplppjs46LmuezqpGHoPZgPDcgaE40o1C",
        "key-9d21f6be6abf0d7c1c1e21862ab8a18a",
        "dapi0123456789abcdef0123456789abcdef",
    ];
    for t in tokens {
        each(
            &[
                t.to_owned(),
                format!("export X={t}"),
                format!("x {t} y"),
                format!("\"value\": \"{t}\""),
                format!("url=https://h/?t={t}"),
            ],
            t,
        );
    }
}

#[test]
fn names_and_command_lines_the_word_rules_missed() {
    for pw in PASSWORDS {
        let blocks = [
            format!("SSHPASS={pw}"),
            format!("AUTHPASS={pw}"),
            format!("ROOTPASS='{pw}'"),
            format!("ADMINPW={pw}"),
            format!("Server=db;Database=app;User Id=sa;Pwd={pw};"),
            format!("GET /x?user=a&pwd={pw} HTTP/1.1"),
            format!("java -Dpass={pw} -jar app.jar"),
            format!("java -Dadmin.pass={pw} -jar app.jar"),
            format!("x --api_key {pw}"),
            format!("x --client_secret {pw}"),
            format!("x --pass {pw}"),
            format!("x --bindpw {pw}"),
            format!("x --credentials {pw}"),
            format!("x --encryption_key {pw}"),
            format!("x --PrivateKey {pw}"),
            format!("x -Dpwd={pw}"),
            format!("community: {pw}"),
            format!("root 1 mongo -u admin -p {pw} admin"),
            format!("root 1 mongosh --quiet -p {pw}"),
            format!("root 1 docker login -u bot -p {pw} registry.example.org"),
            format!("root 1 ipmitool -I lanplus -H h -U admin -P {pw} chassis status"),
            format!("root 1 mosquitto_pub -u u -P {pw} -t x -m y"),
            format!("root 1 sqlcmd -S db -U sa -P {pw}"),
            format!("root 1 smbclient //h/s -U bob%{pw}"),
            format!("root 1 xfreerdp /u:admin /p:{pw} /v:h"),
            format!("root 1 lftp -u bob,{pw} ftp.example.org"),
            format!("root 1 htpasswd -b /etc/nginx/.htpasswd bob {pw}"),
            format!("root 1 vault login {pw}"),
        ];
        each(&blocks, pw);
    }
    let sid = "s%3AabcDEF123ghiJKL456.mnoPQR789stuVWX";
    each(
        &[
            format!("laravel_session={sid}"),
            format!("_gitlab_session={sid}"),
        ],
        sid,
    );
    let sig = "4f1c2b3a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708";
    each(
        &[
            format!("https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature={sig}"),
            format!("https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig={sig}"),
        ],
        sig,
    );
}

#[test]
fn look_alikes_stay_unchanged() {
    for s in [
        "PWD=/root",
        "OLDPWD=/home/admin",
        "cd ~ && PWD=~/src make",
        "auth required pam_unix.so nullok",
        "auth include common-auth",
        "auth    [success=1 default=ignore]  pam_unix.so nullok",
        "BYPASS=1",
        "compass=north",
        "session opened for user root by (uid=0)",
        "Dec 01 sshd[1]: pam_unix(sshd:session): session closed for user root",
        "SESSION_DRIVER=redis",
        "- name: LOG_LEVEL\n  value: debug",
        "{\"name\":\"replicas\",\"value\":\"3\"}",
        "- name: DB_PASSWORD_FILE\n  value: /run/secrets/db",
        "<add key=\"LogLevel\" value=\"Information\" />",
        "<name>fs.defaultFS</name>\n<value>hdfs://nn:8020</value>",
        "data:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=",
        "requirepass\n",
        "1) \"maxmemory\"\n2) \"0\"",
        "1) \"requirepass\"\n2) \"\"",
        "IDENTIFIED BY PASSWORD",
        "the secret 3 days ago",
        "the token expired",
        "token_ttl 3600",
        "password_min_length 12",
        "api_key_file /etc/app/key",
        "x --key-file /etc/app/key --token-ttl 3600 --auth-method basic",
        "setxkbmap --keyboard us",
        "sha256sum: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae  file",
        "commit 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
        "select * from t where id = 1",
        "rocommunity",
        "https://example.org/search?q=rust&sig=abc",
        "see https://example.org/page?signature=short",
        "ls -la --pass-through",
        "msg.length = 3",
    ] {
        assert_kept(s);
    }
}
