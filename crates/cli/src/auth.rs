//! `nomos auth login|status|logout`: sign-in to the organisation's OpenID Provider. The
//! refresh token goes to the OS keyring, never to a file; an expired session is reported as
//! "sign in again", never as empty data.

use nomos_auth::{AuthConfig, AuthStatus, Clock as _, LogoutOutcome, Session, SystemBrowser};

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct AuthArgs {
    #[command(subcommand)]
    command: AuthCommand,
    /// The OpenID Provider (issuer URL); defaults to $NOMOS_OIDC_ISSUER.
    #[arg(long, global = true, env = "NOMOS_OIDC_ISSUER")]
    issuer: Option<String>,
    /// The client id registered for Nomos; defaults to $NOMOS_OIDC_CLIENT_ID.
    #[arg(long, global = true, env = "NOMOS_OIDC_CLIENT_ID")]
    client_id: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum AuthCommand {
    /// Sign in with the system browser (Authorization Code + PKCE, loopback redirect).
    Login,
    /// Show who is signed in and until when the access token is valid.
    Status,
    /// Sign out: revoke the refresh token where the provider offers it and forget it.
    Logout,
}

fn core(e: nomos_auth::AuthError) -> CliError {
    CliError::Core(e.code(), e.to_string())
}

fn config(args: &AuthArgs) -> Result<AuthConfig, CliError> {
    let (Some(issuer), Some(client_id)) = (&args.issuer, &args.client_id) else {
        return Err(CliError::Core(
            "auth.not_configured",
            "No OpenID Provider configured: pass --issuer and --client-id, or set NOMOS_OIDC_ISSUER and NOMOS_OIDC_CLIENT_ID.".to_owned(),
        ));
    };
    let data_dir =
        nomos_store::default_data_dir().map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    Ok(AuthConfig::new(issuer.clone(), client_id.clone(), data_dir))
}

/// `now` comes from the caller's clock, so the text is testable at a fixed time.
fn describe(status: &AuthStatus, now: std::time::SystemTime) -> String {
    match status {
        AuthStatus::SignedOut => "signed out".to_owned(),
        AuthStatus::SignedIn {
            identity,
            expires_at,
        } => {
            let who = identity
                .email
                .clone()
                .or_else(|| identity.name.clone())
                .or_else(|| identity.subject.clone())
                .unwrap_or_else(|| "(unknown subject)".to_owned());
            let left = expires_at
                .duration_since(now)
                .map(|d| format!("valid for {}s", d.as_secs()))
                .unwrap_or_else(|_| "expired".to_owned());
            format!("signed in as {who}; access token {left} (refreshed automatically)")
        }
        AuthStatus::Refreshing {
            attempt,
            last_error,
            ..
        } => format!(
            "refreshing the session (attempt {attempt}){}",
            last_error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        AuthStatus::NeedsSignIn { reason } => format!("sign in again ({})", reason.code()),
    }
}

pub fn run(args: AuthArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let config = config(&args)?;
        let clock = nomos_auth::SystemClock;
        match args.command {
            AuthCommand::Login => {
                let session = nomos_auth::login(config, &SystemBrowser).await.map_err(core)?;
                println!("{}", crate::term::block(&describe(&session.status(), clock.now())));
                Ok(())
            }
            AuthCommand::Status => {
                let session = Session::open_with_keyring(config).await.map_err(core)?;
                let status = session.status();
                println!("{}", crate::term::block(&describe(&status, clock.now())));
                match status {
                    AuthStatus::NeedsSignIn { .. } => Err(CliError::Core(
                        "auth.needs_sign_in",
                        "The session has ended: run `nomos auth login`.".to_owned(),
                    )),
                    _ => Ok(()),
                }
            }
            AuthCommand::Logout => {
                let session = Session::open_with_keyring(config).await.map_err(core)?;
                match session.logout().await.map_err(core)? {
                    LogoutOutcome::Revoked => println!("signed out; the provider revoked the session"),
                    LogoutOutcome::RevocationNotOffered => {
                        println!("signed out; the provider offers no revocation, the token expires on its own")
                    }
                    LogoutOutcome::NothingToRevoke => println!("already signed out"),
                    LogoutOutcome::RevocationFailed { message } => {
                        println!(
                            "signed out locally; revocation at the provider failed: {}",
                            crate::term::block(&message)
                        )
                    }
                }
                Ok(())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use nomos_auth::{AuthStatus, Identity};

    use super::describe;

    #[test]
    fn time_left_is_measured_against_the_given_clock() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let status = |expires_at| AuthStatus::SignedIn {
            identity: Identity {
                subject: Some("sub-1".into()),
                name: None,
                email: Some("op@example.test".into()),
            },
            expires_at,
        };
        let live = describe(&status(now + Duration::from_secs(90)), now);
        assert!(
            live.contains("op@example.test") && live.contains("valid for 90s"),
            "{live}"
        );
        let gone = describe(&status(now - Duration::from_secs(1)), now);
        assert!(gone.contains("access token expired"), "{gone}");
    }
}
