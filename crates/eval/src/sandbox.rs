//! The throwaway sandbox live evals run the model's commands in: bubblewrap with the whole
//! file system read-only, a private `/tmp`, a scratch home that is the only writable place,
//! no network and no other namespace shared. A live model may ask for anything; whatever it
//! gets past the classifier still cannot change this workstation.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::EvalError;

/// The program and arguments that go in front of `bash -c COMMAND` (see
/// `nomos_exec::ExecutorConfig::local_wrapper`). `scratch` becomes the writable home.
pub fn wrapper(scratch: &Path) -> Result<Vec<OsString>, EvalError> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    wrapper_on(scratch, &path)
}

/// [`wrapper`], finding `bwrap` on the given `PATH`.
fn wrapper_on(scratch: &Path, path: &std::ffi::OsStr) -> Result<Vec<OsString>, EvalError> {
    let bwrap = find_bwrap(path).ok_or_else(|| EvalError::Sandbox {
        message: "bubblewrap (`bwrap`) is not installed; live evals run the model's commands \
                  only inside it (Debian/Ubuntu: apt-get install bubblewrap)"
            .into(),
    })?;
    let scratch = scratch.to_path_buf();
    let mut args: Vec<OsString> = vec![bwrap.into()];
    let mut push = |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|s| s.to_os_string()));
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    // After the /tmp tmpfs, so a scratch home under /tmp stays the real (bound) directory.
    push(&["--bind".as_ref(), scratch.as_os_str(), scratch.as_os_str()]);
    push(&["--chdir".as_ref(), scratch.as_os_str()]);
    push(&[
        "--unshare-all".as_ref(),
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--".as_ref(),
    ]);
    Ok(args)
}

fn find_bwrap(path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join("bwrap"))
        .find(|p| p.is_file())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;

    use nomos_exec::{ExecStatus, Executor, ExecutorConfig, Limits, Target};

    use super::*;

    /// (exit code, stdout, stderr); no exit code when it did not exit normally.
    async fn run(exec: &Executor, command: &str) -> (Option<i32>, String, String) {
        let out = exec
            .run(&Target::local(), command, &Limits::default())
            .await
            .unwrap();
        let code = match out.status {
            ExecStatus::Exited { code } => Some(code),
            _ => None,
        };
        (code, out.stdout.text, out.stderr.text)
    }

    /// What a live model's command can do in the sandbox: read the system, write only its
    /// scratch home, never the rest of the file system, never the network.
    #[tokio::test]
    async fn the_sandbox_reads_the_system_and_writes_only_its_scratch_home() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path().join("home");
        std::fs::create_dir_all(&scratch).unwrap();
        // Outside /tmp (the sandbox has its own /tmp, where this would simply be absent).
        let outside_dir = tempfile::Builder::new()
            .prefix("nomos-sandbox-test")
            .tempdir_in("/var/tmp")
            .unwrap();
        let outside = outside_dir.path().to_path_buf();
        std::fs::write(outside.join("keep"), "original").unwrap();
        let mut config = ExecutorConfig::new(dir.path().join("exec"));
        config.local_wrapper =
            wrapper(&scratch).expect("bubblewrap is installed by the test setup");
        config.local_home = Some(scratch.clone());
        let exec = Arc::new(Executor::new(config).unwrap());

        let (code, out, err) = run(
            &exec,
            "uname -s; cat /etc/hostname >/dev/null && echo read-ok",
        )
        .await;
        assert_eq!(code, Some(0), "{out} {err}");
        assert!(out.contains("read-ok"), "{out} {err}");

        let (code, out, err) = run(&exec, "echo kept > \"$HOME/note\" && cat \"$HOME/note\"").await;
        assert_eq!(code, Some(0), "{out} {err}");
        assert_eq!(
            std::fs::read_to_string(scratch.join("note")).unwrap(),
            "kept\n"
        );

        // Written from code, never typed: each tries to change something outside the scratch
        // home, and must fail without a trace.
        let target = outside.join("escaped");
        let attempts = [
            format!("echo x > '{}'", target.display()),
            format!("mkdir '{}'", outside.join("dir").display()),
            format!("touch '{}'", outside.join("touched").display()),
            format!("rm -rf '{}'", outside.display()),
            format!("echo changed > '{}'", outside.join("keep").display()),
        ];
        for attempt in &attempts {
            let (code, out, err) = run(&exec, attempt).await;
            assert_ne!(code, Some(0), "`{attempt}` succeeded: {out} {err}");
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("keep")).unwrap(),
            "original",
            "the file outside survived unchanged"
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            1,
            "nothing was written outside"
        );

        let (code, out, err) = run(&exec, "exec 3<>/dev/tcp/127.0.0.1/9 && echo connected").await;
        assert!(!out.contains("connected"), "{code:?} {out} {err}");
    }

    #[test]
    fn no_bubblewrap_is_a_clear_error() {
        let e = wrapper_on(Path::new("/tmp"), "/nonexistent".as_ref()).unwrap_err();
        assert_eq!(e.code(), "eval.sandbox");
        assert!(e.to_string().contains("bubblewrap"), "{e}");
    }
}
