//! From configuration to a command: an `~/.ssh/config` import and an inventory file resolve
//! to targets that run on the test sshd.

use std::os::unix::fs::PermissionsExt;

use nomos_exec::ssh_config::load_ssh_config;
use nomos_exec::testing::TestSshd;
use nomos_exec::{Executor, Inventory, Limits, Transport};

use crate::support::assert_exit;

#[tokio::test]
async fn imported_alias_and_inventory_entries_run_on_their_hosts() {
    let sshd = TestSshd::start().unwrap();
    // A home whose ~/.ssh/config includes the fixture's client config.
    let home = sshd.dir().join("operator");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let config = home.join(".ssh/config");
    std::fs::write(
        &config,
        format!(
            "Host *\n  ServerAliveInterval 30\n\nInclude {}\n",
            sshd.client_config().display()
        ),
    )
    .unwrap();
    let pct = sshd.bin_dir().join("pct");
    std::fs::write(
        &pct,
        "#!/bin/sh\n[ \"$1 $2 $3\" = 'exec 150 --' ] || exit 2\nshift 3\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&pct, std::fs::Permissions::from_mode(0o755)).unwrap();

    let import = load_ssh_config(&config, &home).unwrap();
    let mut inventory = Inventory::with_local();
    assert_eq!(inventory.add_missing(import.targets()), 1, "{import:?}");
    let inventory_file = r#"
[[target]]
slug = "lxc:app"
transport = "pct"
vmid = 150
proxmox = "host:nomos-test"
"#;
    assert_eq!(
        inventory
            .merge_file(inventory_file, "inventory.toml")
            .unwrap(),
        1
    );
    assert_eq!(inventory.len(), 3);

    let mut cfg = sshd.executor_config();
    cfg.ssh_config = Some(config);
    cfg.pct_path = pct.to_str().unwrap().to_owned();
    let exec = Executor::new(cfg).unwrap();

    let host = inventory.resolve("host:nomos-test").unwrap();
    assert!(
        matches!(&host.transport, Transport::Ssh(s) if s.host == "nomos-test" && s.port.is_none())
    );
    let out = exec
        .run(host, "echo via-alias", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "via-alias\n");

    let ct = inventory.resolve("lxc:app").unwrap();
    let out = exec
        .run(ct, "echo in-container", &Limits::default())
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "in-container\n");

    let local = inventory.resolve("host:local").unwrap();
    let out = exec
        .run(local, "echo here", &Limits::default())
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "here\n");

    assert_eq!(
        inventory.resolve("host:elsewhere").unwrap_err().code(),
        "exec.unknown_target"
    );
    exec.close_all_masters().await;
}
