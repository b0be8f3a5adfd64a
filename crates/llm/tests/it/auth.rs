//! Credentials: one refresh and one retry on 401, never a key in Debug output.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use nomos_llm::{
    AnthropicConfig, AnthropicProvider, AuthStyle, CredentialError, LlmError, OpenAiConfig,
    OpenAiProvider, Secret, TokenSource,
};
use nomos_mock_llm::{Expect, Reply, Step};

use crate::support::*;

/// Hands out `t1`, then `t2` after an invalidate, and so on.
#[derive(Debug, Default)]
struct RotatingToken {
    generation: Mutex<u32>,
    invalidated: Mutex<Vec<String>>,
}

#[async_trait]
impl TokenSource for RotatingToken {
    async fn token(&self) -> Result<Secret, CredentialError> {
        Ok(Secret::new(format!(
            "t{}",
            *self.generation.lock().unwrap() + 1
        )))
    }

    async fn invalidate(&self, rejected: &Secret) {
        self.invalidated
            .lock()
            .unwrap()
            .push(rejected.expose().to_owned());
        *self.generation.lock().unwrap() += 1;
    }
}

fn unauthorized() -> Step {
    Step::new(Reply::HttpError {
        status: 401,
        message: Some("Invalid token".into()),
        error_type: None,
        code: None,
        retry_after: None,
    })
}

#[tokio::test]
async fn a_401_refreshes_the_token_once_and_retries_once() {
    let server = serve([
        unauthorized(),
        Step::text("welcome back").expect(Expect::HeaderContains {
            name: "authorization".into(),
            value: "Bearer t2".into(),
        }),
    ])
    .await;
    let tokens = Arc::new(RotatingToken::default());
    let p = OpenAiProvider::new(
        OpenAiConfig::new(server.base_url(), "m"),
        Some(tokens.clone()),
    )
    .unwrap();
    let r = run(&p, &request("hi")).await.0.unwrap();
    assert_eq!(r.text, "welcome back");
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    assert_eq!(*tokens.invalidated.lock().unwrap(), ["t1"]);
    let auth: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(auth, ["Bearer t1", "Bearer t2"]);
}

#[tokio::test]
async fn a_second_401_is_unauthorized_with_the_provider_message() {
    for kind in KINDS {
        let server = serve([unauthorized(), unauthorized(), Step::text("unreached")]).await;
        let tokens = Arc::new(RotatingToken::default());
        let p: Arc<dyn nomos_llm::Provider> = match kind {
            Kind::OpenAi => Arc::new(
                OpenAiProvider::new(
                    OpenAiConfig::new(server.base_url(), "m"),
                    Some(tokens.clone()),
                )
                .unwrap(),
            ),
            Kind::Anthropic => Arc::new(
                AnthropicProvider::new(
                    AnthropicConfig::new(server.root_url(), "m"),
                    Some(tokens.clone()),
                )
                .unwrap(),
            ),
        };
        let err = run(p.as_ref(), &request("hi")).await.0.unwrap_err();
        assert_eq!(
            err,
            LlmError::Unauthorized {
                status: Some(401),
                message: "Invalid token".into()
            },
            "{kind:?}"
        );
        assert!(!err.is_retryable());
        assert_eq!(server.request_count(), 2, "exactly one retry");
        assert_eq!(tokens.invalidated.lock().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_401_with_a_credential_that_cannot_change_is_not_sent_again() {
    let env = Arc::new(nomos_llm::MapEnv::from_pairs([(
        "NOMOS_TEST_KEY",
        "sk-fixed",
    )]));
    let sources: Vec<(&str, Arc<dyn TokenSource>)> = vec![
        ("static", Arc::new(nomos_llm::StaticToken::new("sk-static"))),
        (
            "env",
            Arc::new(nomos_llm::EnvToken::new("NOMOS_TEST_KEY", env.clone())),
        ),
    ];
    for (name, source) in sources {
        for kind in KINDS {
            let server = serve([unauthorized(), Step::text("unreached")]).await;
            let p: Arc<dyn nomos_llm::Provider> = match kind {
                Kind::OpenAi => Arc::new(
                    OpenAiProvider::new(
                        OpenAiConfig::new(server.base_url(), "m"),
                        Some(source.clone()),
                    )
                    .unwrap(),
                ),
                Kind::Anthropic => Arc::new(
                    AnthropicProvider::new(
                        AnthropicConfig::new(server.root_url(), "m"),
                        Some(source.clone()),
                    )
                    .unwrap(),
                ),
            };
            let err = run(p.as_ref(), &request("hi")).await.0.unwrap_err();
            assert_eq!(err.code(), "llm.unauthorized", "{name} {kind:?}: {err}");
            assert_eq!(
                server.request_count(),
                1,
                "{name} {kind:?}: re-sent for nothing"
            );
        }
    }
}

#[tokio::test]
async fn a_gateway_takes_the_oidc_token_as_bearer_even_for_anthropic() {
    let server = serve([Step::text("ok").expect(Expect::HeaderContains {
        name: "authorization".into(),
        value: "Bearer t1".into(),
    })])
    .await;
    let mut c = AnthropicConfig::new(server.root_url(), "m");
    c.auth = AuthStyle::Bearer;
    let p = AnthropicProvider::new(c, Some(Arc::new(RotatingToken::default()))).unwrap();
    run(&p, &request("hi")).await.0.unwrap();
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    assert!(server.requests()[0].header("x-api-key").is_none());
}

#[derive(Debug)]
struct SignedOut;

#[async_trait]
impl TokenSource for SignedOut {
    async fn token(&self) -> Result<Secret, CredentialError> {
        Err(CredentialError::SignInRequired(
            "refresh token revoked".into(),
        ))
    }
    async fn invalidate(&self, _: &Secret) {}
}

#[tokio::test]
async fn a_token_source_failure_is_a_credentials_error_and_sends_nothing() {
    let server = serve([Step::text("unreached")]).await;
    let p = OpenAiProvider::new(
        OpenAiConfig::new(server.base_url(), "m"),
        Some(Arc::new(SignedOut)),
    )
    .unwrap();
    let err = run(&p, &request("hi")).await.0.unwrap_err();
    assert_eq!(
        err,
        LlmError::Credentials(CredentialError::SignInRequired(
            "refresh token revoked".into()
        ))
    );
    assert_eq!(err.code(), "llm.credentials");
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn keys_never_appear_in_debug_output() {
    let server = serve([]).await;
    let key = "sk-very-secret-key-123";
    let p = OpenAiProvider::new(
        OpenAiConfig::new(server.base_url(), "m"),
        Some(Arc::new(nomos_llm::StaticToken::new(key))),
    )
    .unwrap();
    let dump = format!("{p:?}");
    assert!(!dump.contains(key), "{dump}");
    let env = nomos_llm::MapEnv::from_pairs([("OPENAI_API_KEY", key)]);
    let cfg = nomos_llm::resolve_config(&Default::default(), &env, None).unwrap();
    assert!(!format!("{cfg:?}").contains(key));
    assert!(!format!("{env:?}").contains(key));
}
