//! Configuration resolution: a pure function of settings, an injected environment and an
//! Ollama probe result.

use std::time::Duration;

use nomos_llm::{
    AuthStyle, Credential, LlmSettings, MapEnv, OllamaProbe, ProviderKind, Secret, Service,
    build_provider, probe_ollama, resolve_config,
};
use nomos_mock_llm::{Script, Step};
use tokio_util::sync::CancellationToken;

use crate::support::*;

fn env(pairs: &[(&str, &str)]) -> MapEnv {
    MapEnv::from_pairs(pairs.iter().copied())
}

fn ollama() -> OllamaProbe {
    OllamaProbe {
        base_url: "http://127.0.0.1:11434/v1".into(),
        models: vec!["qwen2.5-coder:7b".into(), "llama3.2".into()],
    }
}

#[test]
fn nothing_configured_is_a_helpful_error() {
    let err = resolve_config(&LlmSettings::default(), &env(&[]), None).unwrap_err();
    assert_eq!(err.code(), "llm.config");
    assert!(err.to_string().contains("NOMOS_LLM_BASE_URL"), "{err}");
}

#[test]
fn openai_key_alone_selects_openai_with_a_default_model() {
    let c = resolve_config(
        &LlmSettings::default(),
        &env(&[("OPENAI_API_KEY", "sk-1")]),
        None,
    )
    .unwrap();
    assert_eq!(c.kind, ProviderKind::OpenAiCompatible);
    assert_eq!(c.service, Service::OpenAi);
    assert_eq!(c.base_url, "https://api.openai.com/v1");
    assert_eq!(c.model, nomos_llm::DEFAULT_OPENAI_MODEL);
    assert_eq!(
        c.credential,
        Credential::Env {
            var: "OPENAI_API_KEY".into(),
            key: Secret::new("sk-1")
        }
    );
    assert_eq!(c.auth_style, AuthStyle::Bearer);
}

#[test]
fn conventional_keys_in_precedence_order() {
    let c = resolve_config(
        &LlmSettings::default(),
        &env(&[("OPENROUTER_API_KEY", "or"), ("ANTHROPIC_API_KEY", "an")]),
        None,
    )
    .unwrap();
    assert_eq!(c.service, Service::OpenRouter);
    assert_eq!(c.base_url, "https://openrouter.ai/api/v1");
    let c = resolve_config(
        &LlmSettings::default(),
        &env(&[("ANTHROPIC_API_KEY", "an")]),
        Some(&ollama()),
    )
    .unwrap();
    assert_eq!(c.kind, ProviderKind::Anthropic);
    assert_eq!(c.auth_style, AuthStyle::XApiKey);
    assert_eq!(
        c.credential,
        Credential::Env {
            var: "ANTHROPIC_API_KEY".into(),
            key: Secret::new("an")
        }
    );
}

#[test]
fn ollama_is_used_when_found_and_nothing_else_is_set() {
    let c = resolve_config(&LlmSettings::default(), &env(&[]), Some(&ollama())).unwrap();
    assert_eq!(c.service, Service::Ollama);
    assert_eq!(c.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(c.model, "qwen2.5-coder:7b");
    assert_eq!(c.credential, Credential::None, "local servers need no key");
}

#[test]
fn nomos_variables_override_settings() {
    let settings = LlmSettings {
        base_url: Some("https://gateway.example/v1".into()),
        model: Some("settings-model".into()),
        ..LlmSettings::default()
    };
    let e = env(&[
        ("NOMOS_LLM_BASE_URL", "https://10.0.0.5:8000/v1"),
        ("NOMOS_LLM_MODEL", "env-model"),
        ("NOMOS_LLM_API_KEY", "nk"),
        ("OPENAI_API_KEY", "sk-ignored"),
    ]);
    let c = resolve_config(&settings, &e, None).unwrap();
    assert_eq!(c.base_url, "https://10.0.0.5:8000/v1");
    assert_eq!(c.model, "env-model");
    assert_eq!(
        c.credential,
        Credential::Env {
            var: "NOMOS_LLM_API_KEY".into(),
            key: Secret::new("nk")
        }
    );
}

#[test]
fn settings_without_an_env_key_ask_the_keyring() {
    let settings = LlmSettings {
        base_url: Some("https://gateway.example.org/v1".into()),
        model: Some("gw-model".into()),
        auth_style: Some(AuthStyle::Bearer),
        idle_timeout_secs: Some(30),
        ..LlmSettings::default()
    };
    let c = resolve_config(&settings, &env(&[("NOMOS_LLM_API_KEY", "  ")]), None).unwrap();
    assert_eq!(
        c.credential,
        Credential::Stored,
        "a blank variable counts as unset"
    );
    assert_eq!(c.keyring_account(), "llm:https://gateway.example.org:443");
    assert_eq!(c.idle_timeout, Duration::from_secs(30));
}

#[test]
fn anthropic_base_url_selects_the_anthropic_format() {
    let settings = LlmSettings {
        base_url: Some("https://api.anthropic.com".into()),
        ..LlmSettings::default()
    };
    let c = resolve_config(&settings, &env(&[("ANTHROPIC_API_KEY", "an")]), None).unwrap();
    assert_eq!(c.kind, ProviderKind::Anthropic);
    assert_eq!(c.model, nomos_llm::DEFAULT_ANTHROPIC_MODEL);
    let settings = LlmSettings {
        provider: Some(ProviderKind::Anthropic),
        base_url: Some("https://llm-gw.corp/anthropic".into()),
        model: Some("claude".into()),
        ..LlmSettings::default()
    };
    let c = resolve_config(&settings, &env(&[]), None).unwrap();
    assert_eq!(c.kind, ProviderKind::Anthropic);
    assert_eq!(c.credential, Credential::Stored);
}

#[test]
fn a_custom_server_needs_a_model_and_a_bad_provider_name_is_rejected() {
    let settings = LlmSettings {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        ..LlmSettings::default()
    };
    let err = resolve_config(&settings, &env(&[]), None).unwrap_err();
    assert!(err.to_string().contains("no model configured"), "{err}");
    let err = resolve_config(
        &LlmSettings::default(),
        &env(&[("NOMOS_LLM_PROVIDER", "gemini")]),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("gemini"), "{err}");
}

#[test]
fn settings_serialize_without_any_key_field() {
    let s = LlmSettings {
        base_url: Some("u".into()),
        model: Some("m".into()),
        ..LlmSettings::default()
    };
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(json, r#"{"base_url":"u","model":"m"}"#);
    let parsed: LlmSettings = serde_json::from_str(r#"{"provider":"openai","model":"m"}"#).unwrap();
    assert_eq!(parsed.provider, Some(ProviderKind::OpenAiCompatible));
}

#[tokio::test]
async fn built_provider_talks_to_the_configured_server_with_the_env_key() {
    let server =
        serve([
            Step::text("hello from config").expect(nomos_mock_llm::Expect::HeaderContains {
                name: "authorization".into(),
                value: "Bearer nk-9".into(),
            }),
        ])
        .await;
    let e = env(&[
        ("NOMOS_LLM_BASE_URL", &server.base_url()),
        ("NOMOS_LLM_MODEL", "m1"),
        ("NOMOS_LLM_API_KEY", "nk-9"),
    ]);
    let c = resolve_config(&LlmSettings::default(), &e, None).unwrap();
    let p = build_provider(&c, None).unwrap();
    assert_eq!(p.model(), "m1");
    assert_eq!(p.name(), "openai-compatible");
    let r = p
        .stream(
            &request("hi"),
            &mut nomos_llm::NullSink,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "hello from config");
    assert!(server.failures().is_empty(), "{:?}", server.failures());
}

#[tokio::test]
async fn probe_finds_an_openai_compatible_model_list() {
    let server = nomos_mock_llm::MockServer::start(Script {
        model: Some("llama3.2".into()),
        ..Script::default()
    })
    .await
    .unwrap();
    let probe = probe_ollama(&server.base_url(), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(probe.models, ["llama3.2"]);
    server.shutdown().await;
    // Nothing listening: no probe result, quickly.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    assert!(
        probe_ollama(
            &format!("http://127.0.0.1:{port}/v1"),
            Duration::from_millis(500)
        )
        .await
        .is_none()
    );
}

fn with_base(url: &str) -> LlmSettings {
    LlmSettings {
        base_url: Some(url.into()),
        model: Some("m".into()),
        ..LlmSettings::default()
    }
}

/// C3: a service's conventional key goes only to that service's exact host. Look-alike
/// hosts (suffix, prefix, userinfo, path, IDN homograph, other port) are custom endpoints that
/// never receive `OPENAI_API_KEY`/`ANTHROPIC_API_KEY`/`OPENROUTER_API_KEY`.
#[test]
fn c3_conventional_keys_go_only_to_the_exact_host() {
    let keys = [
        ("OPENAI_API_KEY", "sk-openai"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENROUTER_API_KEY", "sk-or"),
    ];
    let e = env(&keys);
    for host in ["api.openai.com", "api.anthropic.com", "openrouter.ai"] {
        for url in [
            format!("https://{host}.evil.tld/v1"),
            format!("https://{host}@evil.tld/v1"),
            format!("https://{host}:x@evil.tld/v1"),
            format!("https://evil.tld/{host}/v1"),
            format!("https://evil.tld/v1?h={host}"),
            format!("https://evil.tld/v1#{host}"),
            format!("https://evil-{host}/v1"),
            format!("https://x{host}/v1"),
            format!("https://{host}:8443/v1"),
            format!("https://{}/v1", host.replacen('a', "\u{0430}", 1)),
            format!("https://{host}.evil.tld./v1"),
        ] {
            match resolve_config(&with_base(&url), &e, None) {
                Ok(c) => {
                    assert_eq!(c.service, Service::Custom, "{url}");
                    assert_eq!(
                        c.credential,
                        Credential::Stored,
                        "{url} got a conventional key"
                    );
                }
                // A URL holding a user name is refused outright.
                Err(err) => assert_eq!(err.code(), "llm.config", "{url}: {err}"),
            }
        }
        // The real host, however it is spelled, is that service.
        for url in [
            format!("https://{host}/v1"),
            format!("https://{}/v1", host.to_uppercase()),
            format!("https://{host}./v1"),
            format!("https://{host}:443/v1"),
            format!("HTTPS://{host}"),
        ] {
            let c = resolve_config(&with_base(&url), &e, None).unwrap();
            assert_ne!(c.service, Service::Custom, "{url}");
            assert!(matches!(c.credential, Credential::Env { .. }), "{url}");
        }
    }
}

/// C3: no key crosses the network in clear text: plain `http://` to anything but loopback is
/// refused with a typed error whether the key comes from a conventional variable, the Nomos
/// variable or the keyring; loopback servers over HTTP keep working.
#[test]
fn c3_keys_are_refused_over_plain_http_except_to_loopback() {
    for (url, e) in [
        (
            "http://api.openai.com/v1",
            env(&[("OPENAI_API_KEY", "sk-1")]),
        ),
        (
            "http://API.OPENAI.COM./v1",
            env(&[("OPENAI_API_KEY", "sk-1")]),
        ),
        (
            "http://api.anthropic.com",
            env(&[("ANTHROPIC_API_KEY", "an")]),
        ),
        (
            "http://10.0.0.5:8000/v1",
            env(&[("NOMOS_LLM_API_KEY", "nk")]),
        ),
        ("http://gateway.lan/v1", env(&[("NOMOS_LLM_API_KEY", "nk")])),
        (
            "http://[2001:db8::1]:8000/v1",
            env(&[("NOMOS_LLM_API_KEY", "nk")]),
        ),
        ("http://128.0.0.1/v1", env(&[("NOMOS_LLM_API_KEY", "nk")])),
        (
            "http://localhost.evil.tld/v1",
            env(&[("NOMOS_LLM_API_KEY", "nk")]),
        ),
        (
            "http://127.0.0.1.nip.io/v1",
            env(&[("NOMOS_LLM_API_KEY", "nk")]),
        ),
        // No key in the environment: the keyring's key would be sent.
        ("http://gateway.lan/v1", env(&[])),
        ("ws://gateway.lan/v1", env(&[])),
    ] {
        let err = resolve_config(&with_base(url), &e, None).unwrap_err();
        assert_eq!(err.code(), "llm.insecure_endpoint", "{url}: {err}");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("plain HTTP"), "{err}");
    }
    for url in [
        "http://127.0.0.1:8080/v1",
        "http://127.1.2.3:8080/v1",
        "http://[::1]:8080/v1",
        "http://localhost:8080/v1",
        "http://LOCALHOST:8080/v1",
    ] {
        let c =
            resolve_config(&with_base(url), &env(&[("NOMOS_LLM_API_KEY", "nk")]), None).unwrap();
        assert!(matches!(c.credential, Credential::Env { .. }), "{url}");
        let c = resolve_config(&with_base(url), &env(&[]), None).unwrap();
        assert_eq!(c.credential, Credential::None, "{url}");
    }
}

/// C3: the provider itself refuses a token for a clear-text remote endpoint, whatever built
/// its configuration.
#[test]
fn c3_the_provider_refuses_a_token_over_plain_http() {
    use nomos_llm::{
        AnthropicConfig, AnthropicProvider, OpenAiConfig, OpenAiProvider, StaticToken,
    };
    use std::sync::Arc;
    let token = || -> Option<Arc<dyn nomos_llm::TokenSource>> {
        Some(Arc::new(StaticToken::new(Secret::new("sk-x"))))
    };
    let err = OpenAiProvider::new(OpenAiConfig::new("http://api.openai.com/v1", "m"), token())
        .unwrap_err();
    assert_eq!(err.code(), "llm.insecure_endpoint");
    let err =
        AnthropicProvider::new(AnthropicConfig::new("http://10.1.1.1", "m"), token()).unwrap_err();
    assert_eq!(err.code(), "llm.insecure_endpoint");
    assert!(OpenAiProvider::new(OpenAiConfig::new("http://10.1.1.1/v1", "m"), None).is_ok());
    assert!(OpenAiProvider::new(OpenAiConfig::new("http://127.0.0.1:1/v1", "m"), token()).is_ok());
}

/// C3: keyring entries are keyed by scheme, host and port, normalised the way the URL parser
/// does, so `http://` and `https://`, or two ports, never share a key.
#[test]
fn c3_keyring_accounts_name_scheme_host_and_port() {
    use nomos_llm::endpoint_account;
    assert_eq!(
        endpoint_account("https://api.openai.com/v1"),
        "llm:https://api.openai.com:443"
    );
    assert_eq!(
        endpoint_account("https://API.OpenAI.com./v1"),
        "llm:https://api.openai.com:443"
    );
    assert_eq!(
        endpoint_account("https://api.openai.com:443"),
        "llm:https://api.openai.com:443"
    );
    let distinct = [
        "https://gw.lan/v1",
        "http://gw.lan/v1",
        "https://gw.lan:8443/v1",
        "http://gw.lan:8443/v1",
        "https://gw.lan.evil.tld/v1",
        "https://[::1]:8443/v1",
        "https://\u{0430}pi.openai.com/v1",
        "https://api.openai.com/v1",
    ];
    let accounts: std::collections::HashSet<String> =
        distinct.iter().map(|u| endpoint_account(u)).collect();
    assert_eq!(accounts.len(), distinct.len(), "{accounts:?}");
    let c = resolve_config(&with_base("https://gw.lan:8443/v1"), &env(&[]), None).unwrap();
    assert_eq!(c.keyring_account(), "llm:https://gw.lan:8443");
}

#[test]
fn c3_the_host_only_account_of_earlier_builds_is_still_named_for_migration() {
    use nomos_llm::legacy_endpoint_account;
    assert_eq!(
        legacy_endpoint_account("https://api.openai.com/v1").as_deref(),
        Some("llm:api.openai.com")
    );
    assert_eq!(
        legacy_endpoint_account("http://127.0.0.1:11434/v1").as_deref(),
        Some("llm:127.0.0.1:11434")
    );
    assert_eq!(legacy_endpoint_account("not a url"), None);
}
