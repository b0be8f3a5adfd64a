//! A real OpenSSH server for tests and benchmarks (feature `testing`).
//!
//! [`TestSshd::start`] generates a host key and a user key into a temporary directory,
//! starts `/usr/sbin/sshd -D -e` on a free port of 127.0.0.1 accepting only that key, and
//! writes a client config (`-F`) with a `nomos-test` alias. Sessions get an empty `HOME` in
//! the temporary directory, so the machine's own dotfiles play no part. Dropping it closes
//! the ssh master connections made through [`TestSshd::executor`] and stops the server.

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::target::{SshTransport, Target, TargetSlug, Transport};
use crate::{Executor, ExecutorConfig};

/// The alias the client config defines for the test server.
pub const TEST_HOST_ALIAS: &str = "nomos-test";

/// A running test `sshd`.
#[derive(Debug)]
pub struct TestSshd {
    dir: TempDir,
    port: u16,
    child: Option<Child>,
}

impl TestSshd {
    /// Generates keys and config and starts the server; returns once it accepts
    /// connections.
    pub fn start() -> io::Result<Self> {
        Self::start_with(&[])
    }

    /// Like [`start`](Self::start), with extra `sshd_config` lines (e.g. `AcceptEnv …`).
    pub fn start_with(extra_sshd_config: &[&str]) -> io::Result<Self> {
        // sshd refuses to start without its privilege-separation directory.
        fs::create_dir_all("/run/sshd")?;
        let dir = tempfile::Builder::new().prefix("nomos-sshd").tempdir()?;
        let root = dir.path();
        for key in ["host_key", "user_key"] {
            keygen(&root.join(key))?;
        }
        fs::copy(root.join("user_key.pub"), root.join("authorized_keys"))?;
        fs::create_dir_all(root.join("bin"))?;
        fs::create_dir_all(root.join("data"))?;
        fs::create_dir_all(root.join("home"))?;

        let port = free_port()?;
        let mut sshd_config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nAuthorizedKeysFile {auth}\n\
             PidFile {pid}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n\
             PrintMotd no\nUseDNS no\nLogLevel INFO\nSetEnv HOME={home}\n",
            host_key = root.join("host_key").display(),
            auth = root.join("authorized_keys").display(),
            pid = root.join("sshd.pid").display(),
            // Hermetic sessions: the login shell reads this empty home's dotfiles, not the
            // machine's (Debian's bash sources ~/.bashrc for every ssh command).
            home = root.join("home").display(),
        );
        for line in extra_sshd_config {
            let _ = writeln!(sshd_config, "{line}");
        }
        fs::write(root.join("sshd_config"), sshd_config)?;
        let client = format!(
            "Host {TEST_HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {key}\n\
             \x20 IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n",
            key = root.join("user_key").display(),
        );
        fs::write(root.join("ssh_config"), client)?;

        let log = fs::File::create(root.join("sshd.log"))?;
        let child = Command::new("/usr/sbin/sshd")
            .arg("-f")
            .arg(root.join("sshd_config"))
            .args(["-D", "-e"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        let mut sshd = Self {
            dir,
            port,
            child: Some(child),
        };
        sshd.wait_ready()?;
        Ok(sshd)
    }

    fn wait_ready(&mut self) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                let log = fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default();
                return Err(io::Error::other(format!("sshd exited ({status}): {log}")));
            }
            // Ready when it sends its banner.
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                stream.set_read_timeout(Some(Duration::from_secs(2)))?;
                let mut buf = [0u8; 4];
                if stream.read_exact(&mut buf).is_ok() && &buf == b"SSH-" {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(io::Error::other("sshd did not come up within 10 s"));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The listening port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding keys, configs and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The client config file to pass as `-F`.
    pub fn client_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The generated user key (private part).
    pub fn user_key(&self) -> PathBuf {
        self.dir.path().join("user_key")
    }

    /// `HOME` of ssh sessions on this server (empty; the user's real home is not used).
    pub fn session_home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// An empty directory for test scripts (a stand-in `pct`, …).
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// The server's log (stderr of `sshd -e`).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// The `nomos-test` alias as an ssh transport (resolved through [`client_config`]).
    ///
    /// [`client_config`]: Self::client_config
    pub fn transport(&self) -> SshTransport {
        SshTransport::new(TEST_HOST_ALIAS)
    }

    /// `host:<name>` over ssh to this server.
    pub fn target(&self, name: &str) -> Result<Target, crate::ExecError> {
        Target::new(
            TargetSlug::parse(&format!("host:{name}"))?,
            Transport::Ssh(self.transport()),
        )
    }

    /// Executor settings that use this server's client config and keep control sockets in
    /// its directory (so [`Drop`] can close the masters).
    pub fn executor_config(&self) -> ExecutorConfig {
        let mut cfg = ExecutorConfig::new(self.dir.path().join("data"));
        cfg.ssh_config = Some(self.client_config());
        cfg.control_persist = Duration::from_secs(60);
        cfg.connect_timeout = Duration::from_secs(5);
        cfg
    }

    /// An executor from [`executor_config`](Self::executor_config).
    pub fn executor(&self) -> Result<Executor, crate::ExecError> {
        Executor::new(self.executor_config())
    }

    /// Master sockets under this server's data directory.
    fn close_masters(&self) {
        let Ok(entries) = fs::read_dir(self.dir.path().join("data").join("ssh")) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = Command::new("ssh")
                .args(["-F", "/dev/null", "-o"])
                .arg(format!("ControlPath=\"{}\"", path.display()))
                .args(["-O", "exit", "nomos-master"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for TestSshd {
    fn drop(&mut self) {
        self.close_masters();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn keygen(path: &Path) -> io::Result<()> {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "nomos-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "ssh-keygen failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// A port nothing listens on right now (the OS picks it; sshd binds it a moment later).
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
