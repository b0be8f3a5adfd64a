//! Masks secret material in text: the second line of defence behind the classifier's list of
//! secret paths, which can never be complete.
//!
//! [`mask`] is the one implementation. The store runs it on everything it keeps (command
//! output, tool arguments and results, messages, audit rows), so what the model reads, what the
//! UI and the CLI show and what SQLite holds are all masked copies. It is pure (no I/O), so any
//! crate may call it.
//!
//! A masked secret becomes a marker that names its kind and never its value:
//! `[secret masked by Nomos: private key]`. The marker is stable, so masking is idempotent, and
//! SOUL.md tells the model once what it means.
//!
//! What is masked (see the tests for the full tables): private key blocks (PEM, OpenSSH, PGP,
//! PuTTY, age), crypt-style password hashes and `/etc/shadow` lines, provider tokens by prefix,
//! passwords in URLs and DSNs, `Authorization`/`Cookie` headers, `.pgpass` lines, and values of
//! settings whose name says they hold a secret (`DB_PASS=`, `smtp.password = `,
//! `"api_key": "…"`, `<password>…</password>`, `requirepass …`, `--token …`, `mysql -p…`).
//! Also the shapes tools print them in: a name in a sibling field (`- name: DB_PASSWORD` /
//! `value: …`, `<add key=… value=…/>`), Redis `CONFIG GET` replies, application hashes
//! (phpass, Django, MySQL, MSSQL, Redis ACL), base64-wrapped PEM keys and registry auth, AWS
//! secret keys beside their id, blank-separated LDAP/SNMP/BIND settings, passwords in SQL and
//! Redis statements and on command lines, Proxmox tickets and token secrets, Consul/Nomad
//! secret ids and k3s join tokens.
//!
//! Decisions that keep output readable: a setting counts as secret by the *words* of its name,
//! not by a substring (`PasswordAuthentication`, `password_min_length`, `max_tokens`,
//! `token_endpoint`, `KEY_FILE`, `DB_PASSWORD_FILE` and `PWD` are not secrets; `DB_PASS`,
//! `PGPASSWORD`, `PresharedKey`, `AWS_SECRET_ACCESS_KEY` are). `key` alone is a secret only
//! with a qualifier (`api_key`, `private_key`, `PresharedKey`; not `ssh_key`, `PublicKey`).
//! Placeholders (`${DB_PASS}`, `{{ token }}`, `<your-token>`, `null`, `true`, `***`) are not
//! secrets and stay as they are.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Captures, Regex, RegexBuilder};

/// Every marker starts with this text; a value that starts with it is already masked.
pub const MARKER_OPEN: &str = "[secret masked by Nomos: ";

/// What kind of secret a marker stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PrivateKey,
    PasswordHash,
    Token,
    WebhookUrl,
    UrlPassword,
    Authorization,
    Password,
    Key,
    Salt,
    SessionCookie,
    Secret,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Self::PrivateKey => "private key",
            Self::PasswordHash => "password hash",
            Self::Token => "token",
            Self::WebhookUrl => "webhook URL",
            Self::UrlPassword => "URL password",
            Self::Authorization => "authorization header",
            Self::Password => "password",
            Self::Key => "key",
            Self::Salt => "salt",
            Self::SessionCookie => "session cookie",
            Self::Secret => "secret",
        }
    }
}

/// The marker that replaces a secret of `kind`.
pub fn marker(kind: Kind) -> String {
    format!("{MARKER_OPEN}{}]", kind.label())
}

/// How a named group of [`PATTERN`] is used. The group name's prefix says it: `mk` a marker
/// kept as it is; `k…` the name of a setting (judged by [`is_secret_name`]); the others are the
/// secret itself, of a fixed kind, or (`v…`) the value of the setting named by the `k…` group
/// of the same alternative.
#[derive(Debug, Clone, Copy)]
enum Role {
    Keep,
    Name,
    Fixed(Kind),
    Value,
    /// A base64 run that is a private key only if it decodes to a PEM private key block.
    Base64Pem,
}

fn role(name: &str) -> Role {
    match name.as_bytes().first() {
        Some(b'k') => Role::Name,
        Some(b'v') => Role::Value,
        _ => match name.get(..2).unwrap_or("") {
            "pk" => Role::Fixed(Kind::PrivateKey),
            "pb" => Role::Base64Pem,
            "ph" => Role::Fixed(Kind::PasswordHash),
            "tk" => Role::Fixed(Kind::Token),
            "wh" => Role::Fixed(Kind::WebhookUrl),
            "up" => Role::Fixed(Kind::UrlPassword),
            "ah" => Role::Fixed(Kind::Authorization),
            "pw" => Role::Fixed(Kind::Password),
            "ck" => Role::Fixed(Kind::SessionCookie),
            _ => Role::Keep,
        },
    }
}

/// A setting's name: starts with a letter or `_`, may hold `.` and `-`, and contains one of the
/// secret words somewhere (the words themselves are judged in code, not here).
macro_rules! name {
    () => {
        r"(?:[A-Za-z_][A-Za-z0-9_.\-]*?)?(?i:pass|pw|psk|secret|token|key|auth|credential|creds|salt|cookie|sess|community)[A-Za-z0-9_.\-]*"
    };
}

/// Secret alternatives, in priority order (leftmost-first: at one start position the earlier
/// alternative wins).
const PATTERN: &str = concat!(
    // An existing marker is kept (idempotence).
    r"(?P<mk>\[secret masked by Nomos: [A-Za-z /-]{1,40}\])",
    // Private key blocks: PEM (RSA, EC, DSA, PKCS#8, encrypted), OpenSSH, PGP, SSH2; an
    // unterminated block (cut output) is masked to the end.
    r"|(?P<pk1>-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}[\s\S]*?(?:-{4,5} ?END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|\z))",
    // PuTTY .ppk: the private lines after their header.
    r"|Private-Lines: *[0-9]+\r?\n(?P<pk2>[A-Za-z0-9+/=]+(?mR:$)(?:\r?\n[A-Za-z0-9+/=]+(?mR:$))*)",
    // OpenVPN static keys (ta.key), DNSSEC private key files, WireGuard's `wg show`.
    r"|(?P<pk6>-----BEGIN OpenVPN Static key V1-----[\s\S]*?(?:-----END OpenVPN Static key V1-----|\z))",
    r"|(?m:^)(?:PrivateExponent|Prime1|Prime2|Exponent1|Exponent2|Coefficient|GostAsn1):[ \t]*(?P<pk7>[A-Za-z0-9+/=]{16,})",
    r"|(?i:private key|preshared key):[ \t]*(?P<pk8>[A-Za-z0-9+/]{42,43}=)",
    // Base64 of a PEM block (Kubernetes secret data, kubeconfig `*-data`): judged by decoding.
    r"|(?P<pb1>LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2})",
    // age identities.
    r"|(?P<pk3>AGE-SECRET-KEY-1[0-9A-Z]{50,})",
    // crypt(3) hashes: md5, bcrypt, sha256/512, yescrypt, gost-yescrypt, scrypt, argon2, pbkdf2.
    r"|(?P<ph1>\$(?:1|2[abxy]?|5|6|7|y|gy|md5|apr1|sha1|sha256|sha512|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha(?:1|256|512))?)\$[A-Za-z0-9./+=,$\-]{16,})",
    // PostgreSQL SCRAM and md5, LDAP {SSHA} and friends.
    r"|(?P<ph2>SCRAM-SHA-(?:1|256)\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+)",
    r"|(?-u:\b)(?P<ph3>md5[0-9a-f]{32})(?-u:\b)",
    // Application hashes: phpass (WordPress, phpBB), Drupal, Django, MySQL native and
    // caching_sha2, MSSQL, Redis ACL `#<sha256>`.
    r"|(?P<ph6>\$[PHS]\$[./0-9A-Za-z]{30,})",
    r"|(?P<ph7>\$A\$[0-9]{3}\$[^\s'\x22]{20,})",
    r"|(?-u:\b)(?P<ph8>(?:pbkdf2_sha(?:1|256)|bcrypt_sha256|bcrypt|argon2|scrypt|sha1|md5|unsalted_sha1|unsalted_md5|crypt)\$[A-Za-z0-9./+=$,\-]{16,})",
    r"|(?P<ph9>\*[0-9A-F]{40})(?-u:\b)",
    r"|(?-u:\b)(?P<ph10>0x0[12]00[0-9A-Fa-f]{48,136})(?-u:\b)",
    r"|(?:^|[ \t\x22'])#(?P<ph11>[0-9a-f]{64})(?-u:\b)",
    r"|(?P<ph4>\{(?i:SSHA|SHA|SMD5|MD5|CRYPT|SSHA256|SSHA512|SHA256|SHA512|PBKDF2[A-Z0-9-]*|ARGON2)\}[A-Za-z0-9+/=.$,\-]{8,})",
    // A shadow line whose hash is traditional DES or another $-less form.
    r"|(?:(?m:^)|[\s:])[a-z_][a-z0-9_.\-]*\$?:(?P<ph5>[./0-9A-Za-z]{13,}):[0-9]*:[0-9]*:[0-9]*:[0-9]*:",
    // An AWS secret key after its key id (credentials CSV, passwd-s3fs, `aws configure`
    // listings); the id itself is masked when what precedes the secret is scanned again.
    r"|(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}[ \t]*[,:;|\t][ \t]*['\x22]?(?P<tk3>[A-Za-z0-9/+]{40})(?-u:\b)",
    // Docker registry auth as base64 JSON (`.dockerconfigjson`), compact and indented.
    r"|(?P<tk2>(?:eyJhdXRocyI6|ewogICJhdXRocyI6|ewoJImF1dGhzIjo)[A-Za-z0-9+/]{8,}={0,2})",
    // Proxmox tickets, a token's secret after its id (`pveum user token add`), Consul and
    // Nomad secret ids, k3s/rke2 join tokens.
    r"|(?P<tk4>(?:PVE|PBS)(?:VNC)?:[^:\s\x22']+@[^:\s\x22']+:[0-9A-F]{8}::[A-Za-z0-9+/=]{20,})",
    r"|(?:full-tokenid|tokenid)[\s\S]{0,400}?(?-u:\b)value\W{1,12}(?P<tk5>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
    r"|(?i:secret[ _]?id)[\x22']?[ \t]*[:=][ \t]*[\x22']?(?P<tk6>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
    r"|(?-u:\b)(?P<tk7>[A-Za-z0-9]{6,}::(?:server|node):[A-Za-z0-9]{6,})",
    // Signatures of pre-signed URLs grant access.
    r"|[?&](?i:x-amz-signature|x-goog-signature|sig|signature)=(?P<tk9>[^&\s\x22'#]{16,})",
    // Provider tokens by their documented prefixes.
    r"|(?-u:\b)(?P<tk1>",
    r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    r"|sk-(?:ant-|proj-|or-|live-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{20,}",
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
    r"|gl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|agent|oas)-[A-Za-z0-9_\-]{20,}|glsa_[A-Za-z0-9_]{20,}",
    r"|xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[A-Za-z0-9\-]{10,}",
    r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}",
    r"|AIza[0-9A-Za-z_\-]{35}|ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[0-9A-Za-z_\-]{20,}",
    r"|hv[sbr]\.[A-Za-z0-9_\-]{20,}|[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{40,}",
    r"|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{40,}|hf_[A-Za-z0-9]{30,}",
    r"|dop_v1_[a-f0-9]{64}|tskey-[a-z]+-[A-Za-z0-9\-]{16,}|dckr_pat_[A-Za-z0-9_\-]{20,}",
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    r"|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}|ATATT3[A-Za-z0-9_\-=]{50,}|lin_api_[A-Za-z0-9]{30,}",
    r"|pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_\-]{30,}|PMAK-[0-9a-f]{24}-[0-9a-f]{34}|do[or]_v1_[a-f0-9]{64}",
    r"|glc_[A-Za-z0-9+/=_\-]{30,}|CFPAT-[A-Za-z0-9_\-]{40,}|figd_[A-Za-z0-9_\-]{30,}|nfp_[A-Za-z0-9]{30,}",
    r"|rnd_[A-Za-z0-9]{30,}|ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",
    r"|key-[0-9a-f]{32}|EAA[A-Za-z0-9]{80,}|sntrys_[A-Za-z0-9+/=_\-]{40,}|dapi[0-9a-f]{32}|NRAK-[A-Z0-9]{27}",
    r"|sbp_[0-9a-f]{40}|pul-[0-9a-f]{40}|dp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{40,}",
    r")",
    // Webhook URLs: the path is the secret.
    r"|hooks\.slack\.com/(?:services|workflows|triggers)/(?P<wh1>[A-Za-z0-9/_\-]{20,})",
    r"|discord(?:app)?\.com/api/webhooks/(?P<wh2>[0-9]+/[A-Za-z0-9_\-]{20,})",
    // Credentials in a URL, any scheme (the password may hold `@` and `:`).
    r"|(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s/?#@:\x22'<>]*:(?P<up1>[^\s/?#\x22'<>]+)@",
    // Go DSN: user:pass@tcp(host)/db.
    r"|(?-u:\b)[A-Za-z0-9_.\-]+:(?P<up2>[^\s@/:\x22']+)@(?:tcp|unix)\(",
    // curl -u user:pass.
    r"|(?-u:\b)curl[^\r\n|;&]*?[ \t](?:-u|--user|--proxy-user|-U)[ \t]*['\x22]?[^\s:'\x22]*:(?P<up3>[^\s'\x22]+)",
    // Authorization headers (any scheme) and cookies: the rest of the header value.
    r#"|(?i:(?-u:\b)(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|sso-key|aws4-hmac-sha256|dpop|mac)[ \t]+)?)(?P<ah1>[^\s"'\\][^\r\n"'\\]*)"#,
    r#"|(?i:(?-u:\b)bearer[ \t]+)(?P<ah2>[A-Za-z0-9._~+/=\-]{8,})"#,
    r#"|(?i:(?-u:\b)(?:set-)?cookie[ \t]*:[ \t]*)(?P<ck1>[^\s"'][^\r\n"']*)"#,
    // .pgpass: host:port:db:user:password (a host that is not bare hex, so IPv6 is not one).
    r"|(?:(?m:^)|[\s:])[^:\s#/]*[^:\s#/0-9a-fA-F][^:\s#/]*:(?:[0-9]{2,5}|\*):[^:\s$]+:[^:\s$]+:(?P<pw1>\S+)(?mR:$)",
    // Redis `CONFIG GET` replies: the name on one line, the value on the next.
    r"|(?m:^)[0-9]+\) \x22(?i:requirepass|masterauth|tls-key-file-pass|tls-client-key-file-pass)\x22[ \t]*\r?\n[0-9]+\) \x22(?P<pw5a>[^\x22\r\n]+)\x22",
    r"|(?m:^)(?i:requirepass|masterauth|tls-key-file-pass|tls-client-key-file-pass)[ \t]*\r?\n(?P<pw5b>[^\s\x22]\S*)",
    // SQL and Redis statements that set or send a password (history files, statement
    // views, MONITOR): IDENTIFIED BY '…', PASSWORD '…', SET PASSWORD … = '…', AUTH ….
    r"|(?i:identified[ \t]+(?:with[ \t]+\S+[ \t]+)?by)[ \t]+(?:'(?P<pw11a>[^'\r\n]*)'|\x22(?P<pw11b>[^\x22\r\n]*)\x22)",
    r"|(?i:set[ \t]+password)[^=\r\n]*=[ \t]*(?:'(?P<pw13a>[^'\r\n]*)'|\x22(?P<pw13b>[^\x22\r\n]*)\x22)",
    r"|(?-u:\b)(?i:password|passwd|secret)[ \t]+(?:\x22(?P<pw7a>[^\x22\r\n]+)\x22|'(?P<pw7b>[^'\r\n]+)')",
    r"|(?-u:\b)(?:enable|username[ \t]+\S+(?:[ \t]+privilege[ \t]+[0-9]+)?)[ \t]+(?:password|secret)[ \t]+[0-9][ \t]+(?P<pw8>\S+)",
    r"|(?m:^)[ \t]*AUTH[ \t]+(?:\S+[ \t]+)?(?P<pw14a>\S+)(?:[ \t]*\r?\n|\z)",
    r"|\x22(?i:auth)\x22(?:[ \t]+\x22[^\x22]*\x22)?[ \t]+\x22(?P<pw15>[^\x22]+)\x22",
    r"|(?i:setuser)[^\r\n]*?[ \t]>(?P<pw16>\S+)",
    r"|(?-u:\b)(?:add_user|change_password)[ \t]+[^\s\[]\S*[ \t]+(?P<pw17>\S+)",
    // Settings separated by blanks in LDAP, SNMP and similar files.
    r"|(?m:^)[ \t]*(?i:bindpw|rootpw|client_secret|auth_key|authpass|auth_pass|masterpassword)[ \t]+(?P<pw6>[^\s=:\x22][^\s;]*)",
    r"|(?m:^)[ \t]*(?i:r[ow]community6?)[ \t]+(?P<pw9>\S+)",
    r"|(?m:^)[ \t]*(?i:com2sec6?)[ \t]+\S+[ \t]+\S+[ \t]+(?P<pw10>\S+)",
    // Passwords on command lines (`ps` output, shell history).
    r"|(?-u:\b)(?:mongo(?:sh|dump|restore|export|import)?|influx|docker[ \t]+login|podman[ \t]+login)(?-u:\b)[^\r\n|;&]*?[ \t]-p[ \t]*(?P<pw18a>'[^'\r\n]+'|\x22[^\x22\r\n]+\x22|[^\s'\x22]+)",
    r"|(?-u:\b)(?:ipmitool|mosquitto_(?:pub|sub|rr)|sqlcmd)(?-u:\b)[^\r\n|;&]*?[ \t]-P[ \t]*(?P<pw18b>'[^'\r\n]+'|\x22[^\x22\r\n]+\x22|[^\s'\x22]+)",
    r"|(?-u:\b)smbclient[^\r\n|;&]*?[ \t](?:-U|--user(?:=|[ \t]))[ \t]*[^\s%]*%(?P<pw19>[^\s'\x22]+)",
    r"|(?-u:\b)[xw]freerdp[^\r\n|;&]*?[ \t]/p:(?P<pw20>\S+)",
    r"|(?-u:\b)lftp[^\r\n|;&]*?[ \t]-u[ \t]*[^\s,]+,(?P<pw21>[^\s'\x22]+)",
    r"|(?-u:\b)htpasswd[ \t]+(?:-[A-Za-z]+[ \t]+)*?-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-[A-Za-z]+[ \t]+)*\S+[ \t]+\S+[ \t]+(?P<pw22>\S+)",
    r"|(?-u:\b)vault[ \t]+login[ \t]+(?:-\S+[ \t]+)*(?P<tk8>[^\s\-=][^\s=]*)(?:[ \t]|(?mR:$))",
    // A secret named in a sibling field: Kubernetes env (`- name: DB_PASSWORD` then
    // `value: …`), JSON `{"name": …, "value": …}`, Terraform/Helm `set { name value }`,
    // .NET `<add key=… value=…/>`, Hadoop `<name>…</name><value>…</value>`.
    concat!(
        r"|(?-u:\b)name[\x22']?[ \t]*[:=][ \t]*[\x22']?(?P<k9>",
        name!(),
        r#")[\x22']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?(?:-[ \t]+)?[\x22']?value[\x22']?[ \t]*[:=][ \t]*(?:\x22(?P<v9a>[^\x22\r\n]*)\x22|'(?P<v9b>[^'\r\n]*)'|(?P<v9c>[^\s\x22',}\]]+))"#
    ),
    concat!(
        r"|<add[ \t]+key=\x22(?P<k10>",
        name!(),
        r")\x22[ \t]+value=\x22(?P<v10>[^\x22\r\n]*)\x22"
    ),
    concat!(
        r"|<name>(?P<k11>",
        name!(),
        r")</name>[ \t\r\n]*<value>(?P<v11>[^<\r\n]+)</value>"
    ),
    concat!(
        r"|<entry[ \t]+(?:name|key)=\x22(?P<k12>",
        name!(),
        r")\x22>(?P<v12>[^<\r\n]+)</entry>"
    ),
    // Redis and .netrc settings separated by a space.
    r"|(?-u:\b)(?P<k1>(?i:requirepass|masterauth))[ \t]+(?:\x22(?P<v1a>[^\x22\r\n]*)\x22|(?P<v1b>[^\s=:]\S*))",
    // `password x` only at the start of a line: in prose the next word is no password.
    r"|(?m:^)[ \t]*(?P<k7>password|passwd)[ \t]+(?:\x22(?P<v7a>[^\x22\r\n]*)\x22|(?P<v7b>[^\s=:]\S*))",
    r"|(?-u:\b)login[ \t]+\S+[ \t]+(?P<k2>password)[ \t]+(?P<v2>\S+)",
    // A line that is only a secret setting's name and its value, separated by blanks
    // (`token abc`, `api_key "abc";`, `bind_pw abc`): the same reading as `password x`.
    concat!(
        r"|(?m:^)[ \t]*(?P<k13>",
        name!(),
        // The line must really end: a text cut just before a secret (re-scanned after a
        // replacement) ends in a blank, which is no line end.
        r")[ \t]+(?:\x22(?P<v13a>[^\x22\r\n]*)\x22|(?P<v13b>[^\s\x22=:]\S*?))(?:[ \t]*;?[ \t]*\r?\n|;?\z)"
    ),
    // Command-line flags with a separate value: --password x, --api-key x.
    concat!(
        r"|(?:^|[\s\x22'])(?P<k3>--?",
        name!(),
        r")[ \t]+(?:\x22(?P<v3a>[^\x22\r\n]*)\x22|'(?P<v3b>[^'\r\n]*)'|(?P<v3c>[^\s\x22'\-][^\s\x22']*))"
    ),
    // mysql -pSECRET, sshpass -p SECRET, redis-cli -a SECRET.
    r"|(?-u:\b)mysql(?:dump|admin|check|import|show|slap)?(?-u:\b)[^\r\n|;&]*?[ \t]-p(?P<pw2>'[^'\r\n]+'|\x22[^\x22\r\n]+\x22|[^\s'\x22]+)",
    r"|(?-u:\b)sshpass[ \t]+(?:-[A-Za-z]+[ \t]+)*?-p[ \t]*(?P<pw3>'[^'\r\n]+'|\x22[^\x22\r\n]+\x22|[^\s'\x22]+)",
    r"|(?-u:\b)redis-cli[^\r\n|;&]*?[ \t](?:-a|--pass)[ \t]+(?P<pw4>'[^'\r\n]+'|\x22[^\x22\r\n]+\x22|[^\s'\x22]+)",
    // PHP define('DB_PASSWORD', 'value').
    r#"|define\([ \t]*['"](?P<k4>[A-Za-z0-9_.\-]+)['"][ \t]*,[ \t]*(?:'(?P<v4a>[^'\r\n]*)'|"(?P<v4b>[^"\r\n]*)")"#,
    // XML elements: <password>value</password>.
    concat!(
        r"|<(?P<k5>",
        name!(),
        r")(?:[ \t][^>]*)?>(?P<v5>[^<\r\n]+)</"
    ),
    // key=value, key: value, "key": "value", key => 'value', key := value, ENV["key"] = value.
    concat!(
        r"|(?-u:\b)(?P<k6>",
        name!(),
        r#")(?:\\?["']\]?|\])?[ \t]*(?:=>|:=|==?|:)[ \t]*(?:(?P<v6m>\[secret masked by Nomos: [A-Za-z /-]{1,40}\])|\\"(?P<v6e>[^"\\\r\n]*)\\"|"(?P<v6a>(?:[^"\\\r\n]|\\.)*)"|'(?P<v6b>[^'\r\n]*)'|(?P<v6c>[^\s"',;&}\[{<>`][^\s"',;&}<>`]*))"#
    ),
);

/// The compiled pattern and the role of each named group, by group index.
type Compiled = (Regex, Vec<(usize, Role)>);

static SECRET: LazyLock<Option<Compiled>> = LazyLock::new(|| {
    let re = RegexBuilder::new(PATTERN)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .ok()?;
    let roles = re
        .capture_names()
        .enumerate()
        .filter_map(|(i, n)| n.map(|n| (i, role(n))))
        .collect();
    Some((re, roles))
});

/// Every alternative above needs one of these (ASCII case-insensitive), except the two line
/// shapes in [`SHAPES`]. One pass for them lets ordinary text skip the big expression.
static TRIGGERS: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        // Every message, argument and output the store keeps passes here: a full DFA scans
        // a byte in a few instructions, the default NFA for this many patterns in ~40.
        .kind(Some(AhoCorasickKind::DFA))
        .build([
            "private key",
            "private-lines",
            "age-secret-key-",
            "$1$",
            "$2",
            "$5$",
            "$6$",
            "$7$",
            "$y$",
            "$gy$",
            "$md5",
            "$apr1$",
            "$sha",
            "$argon2",
            "$scrypt$",
            "$pbkdf2",
            "scram-sha-",
            "md5",
            "{ssha",
            "{sha",
            "{smd5",
            "{crypt}",
            "{pbkdf2",
            "{argon2}",
            "eyj",
            "sk-",
            "_live_",
            "_test_",
            "whsec_",
            "gh",
            "github_pat_",
            "gl",
            "xox",
            "xapp-",
            "akia",
            "asia",
            "agpa",
            "aida",
            "aroa",
            "aipa",
            "anpa",
            "anva",
            "abia",
            "acca",
            "aiza",
            "ya29.",
            "gocspx-",
            "hvs.",
            "hvb.",
            "hvr.",
            "atlasv1",
            "npm_",
            "pypi-",
            "hf_",
            "dop_v1_",
            "tskey-",
            "dckr_pat_",
            "shp",
            "hooks.slack.com",
            "/api/webhooks/",
            "@",
            "authorization",
            "bearer",
            "cookie",
            "pass",
            "pw",
            "psk",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
            "creds",
            "salt",
            "sess",
            "curl",
            "mysql",
            "redis-cli",
            "openvpn static key",
            "private-key-format",
            "ls0tls1crudjti",
            "$p$",
            "$h$",
            "$s$",
            "$a$",
            "pbkdf2_",
            "bcrypt",
            "sha1$",
            "md5$",
            "argon2$",
            "scrypt$",
            "crypt$",
            "0x0100",
            "0x0200",
            "ewogicjhdxrocyi6",
            "ewojimf1dghzijo",
            "pve:",
            "pbs:",
            "pvevnc:",
            "tokenid",
            "::server:",
            "::node:",
            "sig=",
            "signature=",
            "sg.",
            "atatt3",
            "lin_api_",
            "pscale_",
            "pmak-",
            "_v1_",
            "glc_",
            "cfpat-",
            "figd_",
            "nfp_",
            "rnd_",
            "ntn_",
            "sq0",
            "eaa",
            "sntrys_",
            "dapi",
            "nrak-",
            "sbp_",
            "pul-",
            "dp.",
            "identified",
            "setuser",
            "add_user",
            "community",
            "com2sec",
            "mongo",
            "influx",
            "login",
            "ipmitool",
            "mosquitto_",
            "sqlcmd",
            "smbclient",
            "freerdp",
            "lftp",
        ])
        .ok()
});

/// The line shapes that carry a secret without a trigger word: a `.pgpass` line and a shadow
/// line with a `$`-less hash.
static SHAPES: LazyLock<Option<regex::bytes::Regex>> = LazyLock::new(|| {
    regex::bytes::Regex::new(concat!(
        r"(?m-u)(?:^|[\s:])[^:\s#/]*[^:\s#/0-9a-fA-F][^:\s#/]*:(?:[0-9]{2,5}|\*):[^:\s$]+:[^:\s$]+:\S",
        r"|(?:^|[\s:])[a-z_][a-z0-9_.\-]*\$?:[./0-9A-Za-z]{13,}:[0-9]*:",
        // MySQL native hashes and Redis ACL hashes carry no word either.
        r"|\*[0-9A-F]{40}|#[0-9a-f]{64}",
    ))
    .ok()
});

fn may_hold_secret(s: &str) -> bool {
    let triggered = TRIGGERS.as_ref().is_none_or(|t| t.is_match(s));
    triggered || SHAPES.as_ref().is_none_or(|r| r.is_match(s.as_bytes()))
}

/// Replaces every secret in `s` with a marker naming its kind. Text without secrets is
/// returned borrowed; masking masked text changes nothing.
pub fn mask(s: &str) -> Cow<'_, str> {
    if !may_hold_secret(s) {
        return Cow::Borrowed(s);
    }
    let Some((re, roles)) = SECRET.as_ref() else {
        // The pattern is a constant and compiles (a test checks it); never pass text through
        // unmasked if it somehow did not.
        return Cow::Owned(marker(Kind::Secret));
    };
    let mut changed = false;
    let out = re.replace_all(s, |c: &Captures<'_>| {
        let Some(whole) = c.get(0) else {
            return String::new();
        };
        let text = whole.as_str();
        let at = |i: usize| i - whole.start();
        // What is kept around a secret is scanned again: one match may hold two secrets
        // (a hash inside a `.pgpass`-shaped line, a URL password as a non-secret setting).
        let out = match decide(s, c, roles) {
            Decision::Keep => text.to_owned(),
            Decision::Replace { start, end, kind } => format!(
                "{}{}{}",
                mask(&text[..at(start)]),
                marker(kind),
                mask(&text[at(end)..])
            ),
            Decision::ScanAfter(end) => {
                format!("{}{}", &text[..at(end)], mask(&text[at(end)..]))
            }
        };
        if out != text {
            changed = true;
        }
        out
    });
    if changed {
        Cow::Owned(out.into_owned())
    } else {
        Cow::Borrowed(s)
    }
}

/// What to do with one match.
enum Decision {
    /// Keep it as it is (an existing marker).
    Keep,
    /// Replace the span with a marker of `kind`.
    Replace {
        start: usize,
        end: usize,
        kind: Kind,
    },
    /// Not a secret up to `.0` (a setting whose name holds none, a placeholder value); scan
    /// the rest on its own.
    ScanAfter(usize),
}

fn decide(s: &str, c: &Captures<'_>, roles: &[(usize, Role)]) -> Decision {
    let mut name = None;
    for &(i, role) in roles {
        let Some(m) = c.get(i) else { continue };
        match role {
            Role::Keep => return Decision::Keep,
            Role::Name => {
                // `/etc/passwd:root:x:…` (grep output) names a file, not a setting.
                if s[..m.start()].ends_with('/') {
                    return Decision::ScanAfter(m.end());
                }
                name = Some(m);
            }
            Role::Base64Pem => {
                return if decodes_to_private_key(m.as_str()) {
                    Decision::Replace {
                        start: m.start(),
                        end: m.end(),
                        kind: Kind::PrivateKey,
                    }
                } else {
                    Decision::ScanAfter(m.end())
                };
            }
            Role::Fixed(kind) => {
                if s[m.start()..].starts_with(MARKER_OPEN) {
                    return Decision::Keep;
                }
                return Decision::Replace {
                    start: m.start(),
                    end: m.end(),
                    kind,
                };
            }
            Role::Value => {
                let Some(n) = name else {
                    return Decision::Keep;
                };
                let v = m.as_str();
                if s[m.start()..].starts_with(MARKER_OPEN) {
                    return Decision::Keep;
                }
                let prop = jvm_property(s, n.start(), n.as_str());
                let kind = secret_name_kind(prop).or_else(|| pwd_password(prop, v));
                return match kind {
                    Some(kind) if !is_placeholder(v) && !is_nss_source(n.as_str(), v) => {
                        Decision::Replace {
                            start: m.start(),
                            end: m.end(),
                            kind,
                        }
                    }
                    _ => Decision::ScanAfter(n.end()),
                };
            }
        }
    }
    Decision::Keep
}

/// `-Dname=value` (a JVM system property): the name is what follows the `D`.
fn jvm_property<'a>(s: &str, start: usize, name: &'a str) -> &'a str {
    match name.strip_prefix('D') {
        Some(rest) if !rest.is_empty() && s[..start].ends_with('-') => rest,
        _ => name,
    }
}

/// `PWD` is the working directory in `env` output, but `Pwd=` in a connection string
/// (`…;User ID=sa;Pwd=…;`) or `?pwd=` in a URL is a password: a value that is no path.
fn pwd_password(name: &str, v: &str) -> Option<Kind> {
    (name.eq_ignore_ascii_case("pwd") && !v.starts_with('/') && !v.starts_with('~'))
        .then_some(Kind::Password)
}

/// Does this base64 run decode to a PEM private key (or OpenVPN static key) header?
fn decodes_to_private_key(b64: &str) -> bool {
    let mut out = Vec::with_capacity(48);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in b64.bytes().take(64) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => break,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    let text = String::from_utf8_lossy(&out);
    text.contains("PRIVATE KEY") || text.contains("OpenVPN Static key")
}

/// `true` when a value is not a secret but a stand-in for one: empty, a variable reference, a
/// template, a literal of another type, or something already masked.
fn is_placeholder(v: &str) -> bool {
    let t = v.trim();
    if t.is_empty() || t.starts_with(MARKER_OPEN) {
        return true;
    }
    if t.starts_with('$') && !t.starts_with("$$") && is_variable_ref(t) {
        return true;
    }
    if (t.starts_with("{{") && t.ends_with("}}")) || (t.starts_with("%(") && t.ends_with(")s")) {
        return true;
    }
    if t.starts_with('<') && t.ends_with('>') {
        return true;
    }
    if t.chars()
        .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
    {
        return true;
    }
    const LITERALS: &[&str] = &[
        "null",
        "none",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "undefined",
        "required",
        "optional",
        "redacted",
        "[redacted]",
        "<redacted>",
        "(redacted)",
        "hidden",
        "[hidden]",
        "[filtered]",
        "[masked]",
    ];
    LITERALS.iter().any(|l| t.eq_ignore_ascii_case(l))
}

/// `passwd: files systemd` in nsswitch.conf names a lookup source, not a password.
fn is_nss_source(name: &str, v: &str) -> bool {
    const SOURCES: &[&str] = &[
        "files",
        "compat",
        "systemd",
        "sss",
        "ldap",
        "nis",
        "nisplus",
        "db",
        "winbind",
        "extrausers",
        "cache",
        "hesiod",
    ];
    name.eq_ignore_ascii_case("passwd") && SOURCES.iter().any(|x| v.eq_ignore_ascii_case(x))
}

/// `$NAME`, `${NAME}`, `${NAME:-…}`, `$(…)`: a reference, not a value.
fn is_variable_ref(t: &str) -> bool {
    let rest = &t[1..];
    if let Some(inner) = rest.strip_prefix('{') {
        // Values are cut at `}`, so `${NAME}` arrives as `${NAME`.
        let inner = inner.strip_suffix('}').unwrap_or(inner);
        let name = inner.split([':', '-', '?', '=']).next().unwrap_or("");
        return !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    }
    if rest.starts_with('(') {
        return rest.ends_with(')');
    }
    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Splits a setting's name into lower-case words: on punctuation and at camelCase humps
/// (`PresharedKey` → `preshared`, `key`; `AWS_SECRET_ACCESS_KEY` → `aws`, `secret`, …).
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Words that make a name a count, a limit or a duration: `password_min_length`,
/// `max_tokens`, `token_ttl` hold numbers, not secrets.
const MEASURE_WORDS: &[&str] = &[
    "max",
    "min",
    "num",
    "count",
    "limit",
    "limits",
    "length",
    "len",
    "size",
    "ttl",
    "timeout",
    "expiry",
    "expires",
    "expiration",
    "lifetime",
    "rounds",
    "iterations",
    "retries",
    "attempts",
    "duration",
    "interval",
];

/// Last words that make a name metadata about a secret rather than the secret: its file, its
/// URL, its type, whether it is required.
const META_LAST_WORDS: &[&str] = &[
    "file",
    "files",
    "path",
    "dir",
    "directory",
    "url",
    "uri",
    "endpoint",
    "host",
    "hostname",
    "port",
    "user",
    "username",
    "login",
    "name",
    "id",
    "type",
    "mode",
    "method",
    "methods",
    "policy",
    "enabled",
    "enable",
    "disabled",
    "disable",
    "required",
    "prompt",
    "field",
    "label",
    "env",
    "var",
    "header",
    "command",
    "cmd",
    "location",
    "store",
    "backend",
    "provider",
    "algorithm",
    "algo",
    "format",
    "hint",
    "reset",
    "changed",
    "change",
    "strength",
    "complexity",
    "history",
    "authentication",
    "authenticator",
    "fingerprint",
    "comment",
    "version",
    "status",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "server",
    "supported",
    "usage",
    "used",
    "valid",
    "validation",
    "check",
    "length",
    "exchange",
    "manager",
    "helper",
    "agent",
    "source",
    "ref",
    "class",
    "plugin",
    "module",
    "handler",
    "stdin",
    "level",
    "bucket",
    "refresh",
    "rotation",
];

/// Qualifiers that make a following `key` a credential (`api_key`, `PresharedKey`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "secret",
    "private",
    "access",
    "auth",
    "client",
    "master",
    "encryption",
    "enc",
    "signing",
    "sign",
    "license",
    "licence",
    "app",
    "account",
    "shared",
    "preshared",
    "webhook",
    "hmac",
    "jwt",
    "aes",
    "crypt",
    "crypto",
    "cipher",
    "decryption",
    "session",
    "service",
    "storage",
    "deploy",
    "admin",
    "root",
    "consumer",
    "subscription",
    "unseal",
    "recovery",
    "cookie",
    "csrf",
    "xsrf",
    "bot",
    "integration",
    "personal",
    "wrapping",
    "server",
    "sas",
];

/// Whole-word secret words and the kind of secret each names (plurals too).
fn word_kind(w: &str, prev: Option<&str>) -> Option<Kind> {
    singular_word_kind(w, prev).or_else(|| {
        w.strip_suffix('s')
            .filter(|s| s.len() >= 3)
            .and_then(|s| singular_word_kind(s, prev))
    })
}

fn singular_word_kind(w: &str, prev: Option<&str>) -> Option<Kind> {
    let kind = match w {
        "password" | "passwd" | "passphrase" | "pass" | "pwd" | "pw" | "requirepass"
        | "masterauth" | "masterpass" | "userpass" | "dbpass" | "rootpw" | "bindpw" | "psk" => {
            Kind::Password
        }
        "secret" | "credential" | "cred" | "auth" => Kind::Secret,
        "token" => Kind::Token,
        "salt" => Kind::Salt,
        "cookie" | "sessid" | "phpsessid" | "jsessionid" | "sessionid" => Kind::SessionCookie,
        "community" | "rocommunity" | "rwcommunity" => Kind::Password,
        // `laravel_session`, `_gitlab_session`, `connect.sid`: named cookies.
        "session" | "sid" if prev.is_some() => Kind::SessionCookie,
        "apikey" | "privatekey" | "secretkey" | "accesskey" | "authkey" | "presharedkey"
        | "masterkey" | "signingkey" | "encryptionkey" | "licensekey" | "clientkey" => Kind::Key,
        "key" => {
            return prev
                .filter(|p| KEY_QUALIFIERS.contains(p))
                .map(|_| Kind::Key);
        }
        _ => {
            // Glued names: PGPASSWORD, authtoken, clientsecret.
            const GLUED: &[(&str, Kind)] = &[
                ("password", Kind::Password),
                ("passwd", Kind::Password),
                ("passphrase", Kind::Password),
                ("secret", Kind::Secret),
                ("token", Kind::Token),
                ("apikey", Kind::Key),
                ("privatekey", Kind::Key),
                ("secretkey", Kind::Key),
                ("accesskey", Kind::Key),
                ("credential", Kind::Secret),
            ];
            // SSHPASS, AUTHPASS, adminpw: `pass` and `pw` glued to a word, except words
            // that only end that way.
            const NOT_PASS: &[&str] = &[
                "bypass",
                "compass",
                "surpass",
                "trespass",
                "overpass",
                "underpass",
                "multipass",
                "onepass",
                "twopass",
                "singlepass",
                "firstpass",
                "secondpass",
                "encompass",
                "passpass",
            ];
            if w.len() > 4 && w.ends_with("pass") && !NOT_PASS.contains(&w) {
                return Some(Kind::Password);
            }
            if w.len() > 3 && w.ends_with("pw") {
                return Some(Kind::Password);
            }
            return GLUED
                .iter()
                .find(|(g, _)| w.len() > g.len() && w.ends_with(g))
                .map(|&(_, k)| k);
        }
    };
    Some(kind)
}

/// The kind of secret a setting's name says it holds, or `None` when it holds none.
pub fn secret_name_kind(name: &str) -> Option<Kind> {
    let ws = words(name);
    let last = ws.last()?;
    let joined: String = ws.concat();
    if joined == "pwd" || joined == "oldpwd" {
        // The working directory in `env` output.
        return None;
    }
    if joined == "secretid" {
        // Consul's and Nomad's token secret.
        return Some(Kind::Token);
    }
    if ws.iter().any(|w| MEASURE_WORDS.contains(&w.as_str()))
        || META_LAST_WORDS.contains(&last.as_str())
    {
        return None;
    }
    let mut found = None;
    for (i, w) in ws.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|p| ws.get(p)).map(String::as_str);
        if let Some(k) = word_kind(w, prev) {
            found = Some(k);
        }
    }
    found
}

/// `true` when a setting's name says it holds a secret (`password`, `api_key`, `DB_PASS`,
/// `PresharedKey`, …).
pub fn is_secret_name(name: &str) -> bool {
    secret_name_kind(name).is_some()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_pattern_compiles_and_every_group_has_a_role() {
        let (re, roles) = SECRET.as_ref().unwrap();
        assert_eq!(roles.len(), re.capture_names().flatten().count());
        assert!(SHAPES.is_some() && TRIGGERS.is_some());
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(words("PresharedKey"), ["preshared", "key"]);
        assert_eq!(
            words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words("smtp.password"), ["smtp", "password"]);
        assert_eq!(words("x-api-key"), ["x", "api", "key"]);
    }
}
