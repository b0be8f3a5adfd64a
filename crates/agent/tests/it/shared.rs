//! The concepts every crate shares exist once (nomos-base): the store's, the providers' and
//! sign-in's clock and secret are the same types, so nothing converts between them.

use std::any::TypeId;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn one_secret_type_across_the_crates() {
    let ids = [
        TypeId::of::<nomos_llm::Secret>(),
        TypeId::of::<nomos_auth::Secret>(),
    ];
    assert!(
        ids.iter()
            .all(|id| *id == TypeId::of::<nomos_base::Secret>())
    );
    // A key loaded by auth is the provider's bearer as it is: no copy through `expose`.
    let key = nomos_auth::Secret::new("sk-shared");
    let token = nomos_llm::StaticToken::new(key);
    assert!(!format!("{token:?}").contains("sk-shared"));
}

/// The classifier's verdict is what the store records and the agent gates on: one enum, so
/// no crate keeps a copy a match arm could let drift. Only the wire edge converts.
#[test]
fn one_command_class_across_the_crates() {
    assert_eq!(
        TypeId::of::<nomos_policy::Class>(),
        TypeId::of::<nomos_store::CommandClass>()
    );
    assert_eq!(
        TypeId::of::<nomos_store::CommandClass>(),
        TypeId::of::<nomos_base::CommandClass>()
    );
    for c in nomos_base::CommandClass::ALL {
        let wire = nomos_agent::convert::class(*c);
        assert_eq!(
            serde_json::to_value(wire).unwrap(),
            serde_json::to_value(c).unwrap(),
            "the wire name of {c}"
        );
    }
}

#[test]
fn one_clock_type_across_the_crates() {
    let traits = [
        TypeId::of::<dyn nomos_store::Clock>(),
        TypeId::of::<dyn nomos_llm::Clock>(),
        TypeId::of::<dyn nomos_auth::Clock>(),
    ];
    assert!(
        traits
            .iter()
            .all(|id| *id == TypeId::of::<dyn nomos_base::Clock>())
    );
    let systems = [
        TypeId::of::<nomos_store::SystemClock>(),
        TypeId::of::<nomos_llm::SystemClock>(),
        TypeId::of::<nomos_auth::SystemClock>(),
    ];
    assert!(
        systems
            .iter()
            .all(|id| *id == TypeId::of::<nomos_base::SystemClock>())
    );
    let manuals = [
        TypeId::of::<nomos_store::ManualClock>(),
        TypeId::of::<nomos_auth::ManualClock>(),
    ];
    assert!(
        manuals
            .iter()
            .all(|id| *id == TypeId::of::<nomos_base::ManualClock>())
    );
}

#[test]
fn one_manual_clock_drives_store_time_and_token_time() {
    let manual = Arc::new(nomos_store::ManualClock::at_ms(1_700_000_000_000));
    let for_store: Arc<dyn nomos_store::Clock> = manual.clone();
    let for_auth: Arc<dyn nomos_auth::Clock> = manual.clone();
    manual.advance(Duration::from_secs(90));
    assert_eq!(for_store.now_ms(), 1_700_000_090_000);
    assert_eq!(
        for_auth.now(),
        std::time::UNIX_EPOCH + Duration::from_millis(1_700_000_090_000)
    );
}
