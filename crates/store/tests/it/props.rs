//! Property tests: arbitrary input never breaks a query, and I5 holds under any sequence.

use nomos_store::{KnowledgeKind, KnowledgeQuery, NewKnowledge, SessionQuery, StepStatus};
use proptest::prelude::*;

use crate::common::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever the operator types (quotes, FTS operators, unicode, control characters), search
    /// answers with rows, never with an error.
    #[test]
    fn search_input_is_data_never_syntax(text in "\\PC{0,40}|[\"*():^+-]{1,10}|(AND|OR|NOT|NEAR) [a-z]{1,5}") {
        let t = store();
        new_session(&t, "nginx audit");
        t.store.upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind: KnowledgeKind::Note,
            slug: None,
            title: "nginx".into(),
            body: "nginx 1.24 on web-01".into(),
            tags: vec![],
            about: vec![],
        }).unwrap();
        t.store.list_sessions(&SessionQuery { search: Some(text.clone()), limit: 10 }).unwrap();
        for prefix in [false, true] {
            t.store.search_knowledge(&KnowledgeQuery { text: text.clone(), kinds: vec![], limit: 5, prefix }).unwrap();
        }
        t.store.search_entities(&text, 5).unwrap();
        let r = nomos_store::redact(&text);
        prop_assert_eq!(nomos_store::redact(&r), r.clone(), "redact is idempotent");
    }

    /// I5 as a property: after any sequence of update_plan_step calls, a finished step never
    /// follows an unfinished one.
    #[test]
    fn i5_ordered_completion_holds_for_any_sequence(
        ops in proptest::collection::vec((1i64..=5, 0usize..4), 0..30)
    ) {
        let t = store();
        let sid = new_session(&t, "s");
        propose(&t, sid, &["a", "b", "c", "d: update_entity_attributes"]);
        let statuses = [StepStatus::Running, StepStatus::Done, StepStatus::Failed, StepStatus::Skipped];
        for (seq, s) in ops {
            let _ = t.store.update_plan_step(sid, seq, statuses[s], None).unwrap();
        }
        let steps = t.store.current_plan(sid).unwrap().steps;
        for (i, st) in steps.iter().enumerate() {
            if st.status.is_finished() {
                for earlier in &steps[..i] {
                    prop_assert!(earlier.status.is_finished(), "{:?}", steps);
                }
            }
        }
    }
}
