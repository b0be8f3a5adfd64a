//! The graph view's and the ledger's queries: bounded slices, provenance, dependents,
//! staleness, the ledger across sessions and the steps × targets matrix.

use std::collections::BTreeSet;
use std::time::Duration;

use nomos_store::{
    Approval, ApprovalKind, CommandClass, ExecStatus, ExecutionResult, GraphSliceQuery,
    KnowledgeKind, LedgerFilter, LedgerOutcome, NewExecution, NewKnowledge, NewMessage, StepStatus,
    StoreError, WRITE_BACK_TITLE,
};
use serde_json::{Map, Value, json};

use crate::common::{
    T0, TestStore, finished, new_session, propose, read_only, run_to_end, step, store,
};

fn attrs(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn entity(t: &TestStore, slug: &str) {
    t.store
        .update_entity_attributes(None, slug, &attrs(json!({"seen": true})))
        .unwrap();
}

fn link(t: &TestStore, from: &str, kind: &str, to: &str) {
    t.store
        .create_relationship(None, from, kind, to, &Map::new())
        .unwrap();
}

fn slugs(slice: &nomos_store::GraphSlice) -> BTreeSet<String> {
    slice.nodes.iter().map(|n| n.entity.slug.clone()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn q() -> GraphSliceQuery {
    GraphSliceQuery::default()
}

#[test]
fn slice_pages_cover_every_entity_exactly_once_whatever_the_page_size() {
    let t = store();
    for i in 0..57 {
        entity(&t, &format!("host:h{i:02}"));
    }
    for page in [1u32, 7, 10, 56, 57, 58, 500] {
        let mut seen = Vec::new();
        let mut after = None;
        let mut pages = 0;
        loop {
            let s = t
                .store
                .graph_slice(&GraphSliceQuery {
                    after,
                    max_nodes: page,
                    ..q()
                })
                .unwrap();
            pages += 1;
            assert!(s.nodes.len() <= page as usize);
            seen.extend(s.nodes.iter().map(|n| n.entity.id));
            assert_eq!(s.more_nodes, s.next_after.is_some(), "page {page}");
            match s.next_after {
                Some(a) => after = Some(a),
                None => break,
            }
            assert!(pages < 100);
        }
        let unique: BTreeSet<i64> = seen.iter().copied().collect();
        assert_eq!((seen.len(), unique.len()), (57, 57), "page size {page}");
        assert_eq!(pages, 57usize.div_ceil(page as usize).max(1), "page {page}");
    }
}

#[test]
fn slice_caps_nodes_and_edges_and_says_there_is_more() {
    let t = store();
    // A complete graph on 12 nodes: 66 edges.
    for i in 0..12 {
        for j in (i + 1)..12 {
            link(
                &t,
                &format!("service:s{i}"),
                "depends_on",
                &format!("service:s{j}"),
            );
        }
    }
    let all = t.store.graph_slice(&q()).unwrap();
    assert_eq!((all.nodes.len(), all.edges.len()), (12, 66));
    assert!(!all.more_nodes && !all.more_edges);
    for max_edges in [1u32, 10, 65] {
        let s = t
            .store
            .graph_slice(&GraphSliceQuery { max_edges, ..q() })
            .unwrap();
        assert_eq!(s.edges.len(), max_edges as usize);
        assert!(s.more_edges);
    }
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            max_edges: 66,
            ..q()
        })
        .unwrap();
    assert!(!s.more_edges, "exactly the cap is not more");
    // Asking for more than the store's caps gets the caps, never everything unbounded.
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            max_nodes: u32::MAX,
            max_edges: u32::MAX,
            ..q()
        })
        .unwrap();
    assert_eq!(s.nodes.len(), 12);
    // Edges only join returned nodes.
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            max_nodes: 5,
            ..q()
        })
        .unwrap();
    let ids = slugs(&s);
    assert!(s.more_nodes);
    assert_eq!(s.edges.len(), 10, "K5 has 10 edges");
    for e in &s.edges {
        assert!(ids.contains(&e.from) && ids.contains(&e.to), "{e:?}");
    }
}

#[test]
fn slice_filters_by_kinds_and_tag() {
    let t = store();
    for s in ["host:a", "host:b", "lxc:c", "vm:d", "service:e"] {
        entity(&t, s);
    }
    t.store
        .upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind: KnowledgeKind::Investigation,
            slug: None,
            title: "Audit".into(),
            body: String::new(),
            tags: vec!["Audit".into(), "disks".into()],
            about: vec!["host:b".into(), "lxc:c".into(), "service:e".into()],
        })
        .unwrap();
    let by = |kinds: &[&str], tag: Option<&str>| {
        slugs(
            &t.store
                .graph_slice(&GraphSliceQuery {
                    kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
                    tag: tag.map(str::to_owned),
                    ..q()
                })
                .unwrap(),
        )
    };
    assert_eq!(by(&["host"], None), set(&["host:a", "host:b"]));
    assert_eq!(
        by(&["HOST", " lxc "], None),
        set(&["host:a", "host:b", "lxc:c"])
    );
    assert_eq!(by(&["vm", "lxc"], None), set(&["lxc:c", "vm:d"]));
    assert_eq!(by(&["nothing"], None), set(&[]));
    assert_eq!(
        by(&[], Some("audit")),
        set(&["host:b", "lxc:c", "service:e"])
    );
    assert_eq!(
        by(&[], Some(" AUDIT ")),
        set(&["host:b", "lxc:c", "service:e"])
    );
    assert_eq!(
        by(&["host", "service"], Some("disks")),
        set(&["host:b", "service:e"])
    );
    assert_eq!(by(&[], Some("nope")), set(&[]));
}

/// a - b - c - d - e - f, edges in both directions, plus a filtered-out branch.
fn chain(t: &TestStore) {
    link(t, "service:a", "runs_on", "host:b");
    link(t, "lxc:c", "runs_on", "host:b");
    link(t, "lxc:c", "depends_on", "vm:d");
    link(t, "host:e", "hosts", "vm:d");
    link(t, "host:e", "depends_on", "host:f");
}

#[test]
fn neighbourhood_walks_both_directions_to_the_asked_depth() {
    let t = store();
    chain(&t);
    let around = |depth: u8| {
        slugs(
            &t.store
                .graph_slice(&GraphSliceQuery {
                    focus: Some("lxc:c".into()),
                    depth,
                    ..q()
                })
                .unwrap(),
        )
    };
    assert_eq!(around(1), set(&["host:b", "lxc:c", "vm:d"]));
    assert_eq!(around(0), around(1), "depth clamps to 1");
    assert_eq!(
        around(2),
        set(&["service:a", "host:b", "lxc:c", "vm:d", "host:e"])
    );
    assert_eq!(
        around(3),
        set(&["service:a", "host:b", "lxc:c", "vm:d", "host:e", "host:f"])
    );
    assert_eq!(around(9), around(3), "depth clamps to 3");
    // The focus comes first; edges join only the returned nodes.
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            focus: Some("vm:d".into()),
            depth: 1,
            ..q()
        })
        .unwrap();
    assert_eq!(s.nodes[0].entity.slug, "vm:d");
    assert_eq!(s.edges.len(), 2);
}

#[test]
fn neighbourhood_is_bounded_filtered_and_refuses_an_unknown_focus() {
    let t = store();
    for i in 0..30 {
        link(&t, &format!("service:s{i}"), "runs_on", "host:hub");
    }
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            focus: Some("host:hub".into()),
            depth: 1,
            max_nodes: 10,
            ..q()
        })
        .unwrap();
    assert_eq!(s.nodes.len(), 10);
    assert!(s.more_nodes);
    assert_eq!(s.nodes[0].entity.slug, "host:hub");
    // Kind filter: the focus stays, the others must match.
    chain(&t);
    let s = t
        .store
        .graph_slice(&GraphSliceQuery {
            focus: Some("lxc:c".into()),
            depth: 3,
            kinds: vec!["host".into()],
            ..q()
        })
        .unwrap();
    // vm:d is filtered out and not walked through, so host:e and host:f stay out too.
    assert_eq!(slugs(&s), set(&["lxc:c", "host:b"]));
    for bad in ["host:nowhere", "nokind"] {
        let err = t
            .store
            .graph_slice(&GraphSliceQuery {
                focus: Some(bad.into()),
                ..q()
            })
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NotFound { .. } | StoreError::InvalidInput { .. }
            ),
            "{bad}: {err:?}"
        );
    }
}

#[test]
fn search_slice_returns_the_hits_filtered_and_bounded() {
    let t = store();
    for s in ["host:web-01", "host:web-02", "lxc:web-cache", "host:db-01"] {
        entity(&t, s);
    }
    let find = |text: &str, kinds: &[&str], max: u32| {
        t.store
            .graph_slice(&GraphSliceQuery {
                search: Some(text.into()),
                kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
                max_nodes: max,
                ..q()
            })
            .unwrap()
    };
    assert_eq!(
        slugs(&find("web", &[], 0)),
        set(&["host:web-01", "host:web-02", "lxc:web-cache"])
    );
    assert_eq!(slugs(&find("web", &["lxc"], 0)), set(&["lxc:web-cache"]));
    assert_eq!(slugs(&find("db", &[], 0)), set(&["host:db-01"]));
    let s = find("web", &[], 2);
    assert_eq!(s.nodes.len(), 2);
    assert!(s.more_nodes);
    assert!(find("   ", &[], 0).nodes.is_empty());
    assert!(
        find("\"*(", &[], 0).nodes.is_empty(),
        "FTS syntax is words, not an error"
    );
}

/// A session with a plan whose step 1 runs, a finished execution and an assistant message.
fn working_session(t: &TestStore, title: &str, target: &str) -> (i64, i64, i64, i64) {
    let sid = new_session(t, title);
    t.store
        .append_message(&NewMessage::user(sid, "check it"))
        .unwrap();
    propose(t, sid, &["Look", "Write back"]);
    let st = step(t, sid, 1, StepStatus::Running);
    let ex = run_to_end(t, sid, target, "nginx -v");
    let m = t
        .store
        .append_message(&NewMessage::assistant(sid, "nginx 1.26"))
        .unwrap();
    (sid, st.id, ex.id, m.id)
}

#[test]
fn attribute_history_names_the_session_step_execution_and_message_that_set_it() {
    let t = store();
    let (s1, step1, ex1, m1) = working_session(&t, "First look", "host:web-01");
    t.store
        .update_entity_attributes(
            Some(s1),
            "service:nginx",
            &attrs(json!({"version": "1.24", "port": 80})),
        )
        .unwrap();
    t.clock.advance(Duration::from_secs(60));
    let (s2, step2, ex2, m2) = working_session(&t, "Upgrade", "host:web-01");
    t.store
        .update_entity_attributes(
            Some(s2),
            "service:nginx",
            &attrs(json!({"version": "1.26"})),
        )
        .unwrap();
    // Written with no session: no provenance to invent.
    t.store
        .update_entity_attributes(None, "service:nginx", &attrs(json!({"owner": "ops"})))
        .unwrap();

    let h = t
        .store
        .attribute_provenance("service:nginx", Some("version"), None, 0)
        .unwrap();
    assert_eq!(h.len(), 2, "{h:?}");
    let newest = &h[0];
    assert_eq!(newest.change.new_value, Some(json!("1.26")));
    assert_eq!(newest.change.old_value, Some(json!("1.24")));
    assert_eq!(
        (
            newest.change.session_id,
            newest.change.plan_step_id,
            newest.change.execution_id,
            newest.change.message_id
        ),
        (Some(s2), Some(step2), Some(ex2), Some(m2))
    );
    assert_eq!(newest.session_title.as_deref(), Some("Upgrade"));
    assert_eq!(newest.plan_step_seq, Some(1));
    assert_eq!(newest.plan_step_title.as_deref(), Some("Look"));
    assert_eq!(newest.execution_command.as_deref(), Some("nginx -v"));
    assert_eq!(newest.execution_target.as_deref(), Some("host:web-01"));
    let oldest = &h[1];
    assert_eq!(
        (
            oldest.change.session_id,
            oldest.change.plan_step_id,
            oldest.change.execution_id,
            oldest.change.message_id
        ),
        (Some(s1), Some(step1), Some(ex1), Some(m1))
    );

    let all = t
        .store
        .attribute_provenance("service:nginx", None, None, 0)
        .unwrap();
    assert_eq!(all.len(), 4);
    let owner = all.iter().find(|p| p.change.key == "owner").unwrap();
    assert_eq!(
        (
            owner.change.session_id,
            owner.change.plan_step_id,
            owner.change.execution_id,
            owner.change.message_id
        ),
        (None, None, None, None)
    );
    // Pages: newest first, each row once.
    let page1 = t
        .store
        .attribute_provenance("service:nginx", None, None, 3)
        .unwrap();
    let page2 = t
        .store
        .attribute_provenance("service:nginx", None, Some(page1[2].change.id), 3)
        .unwrap();
    let ids: Vec<i64> = page1.iter().chain(&page2).map(|p| p.change.id).collect();
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted);
    assert_eq!(ids.len(), 4);
    assert!(
        t.store
            .attribute_provenance("service:none", None, None, 0)
            .unwrap()
            .is_empty()
    );

    // Ages: the latest change of each attribute.
    let ages = t.store.attribute_ages("service:nginx").unwrap();
    let keys: Vec<&str> = ages.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["owner", "port", "version"]);
    assert!(ages[1].changed_at_ms < T0 + 60_000);
    assert!(ages[2].changed_at_ms >= T0 + 60_000);
}

#[test]
fn provenance_before_any_run_or_plan_is_only_the_session() {
    let t = store();
    let sid = new_session(&t, "Just notes");
    t.store
        .update_entity_attributes(Some(sid), "host:x", &attrs(json!({"os": "debian"})))
        .unwrap();
    let h = t
        .store
        .attribute_provenance("host:x", None, None, 0)
        .unwrap();
    assert_eq!(
        (
            h[0].change.session_id,
            h[0].change.plan_step_id,
            h[0].change.execution_id,
            h[0].change.message_id
        ),
        (Some(sid), None, None, None)
    );
    // A run still going is not where a fact came from; the one that finished is.
    propose(&t, sid, &["Look"]);
    let done = run_to_end(&t, sid, "host:x", "cat /etc/os-release");
    let going = t
        .store
        .create_execution(&read_only(sid, "host:x", "uptime"))
        .unwrap();
    t.store.start_execution(going.id).unwrap();
    t.store
        .update_entity_attributes(Some(sid), "host:x", &attrs(json!({"os": "ubuntu"})))
        .unwrap();
    let h = t
        .store
        .attribute_provenance("host:x", None, None, 0)
        .unwrap();
    assert_eq!(h[0].change.execution_id, Some(done.id));
}

#[test]
fn dependents_follow_incoming_and_containing_relations_to_depth_two() {
    let t = store();
    link(&t, "service:nginx", "runs_on", "host:web");
    link(&t, "host:web", "hosts", "lxc:cache");
    link(&t, "app:shop", "depends_on", "service:nginx");
    link(&t, "lxc:cache", "hosts", "service:redis");
    link(&t, "app:deep", "depends_on", "app:shop"); // depth 3: not listed
    link(&t, "host:web", "depends_on", "host:dns"); // what web needs: not a dependent
    link(&t, "host:web", "runs_on", "service:nginx"); // a cycle back: walked once
    let d = t.store.dependents("host:web", 0).unwrap();
    assert!(d.known);
    let got: Vec<(String, u8, String, String)> = d
        .dependents
        .iter()
        .map(|x| (x.slug.clone(), x.depth, x.relation.clone(), x.via.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("lxc:cache".into(), 1, "hosts".into(), "host:web".into()),
            (
                "service:nginx".into(),
                1,
                "runs_on".into(),
                "host:web".into()
            ),
            (
                "service:redis".into(),
                2,
                "hosts".into(),
                "lxc:cache".into()
            ),
            (
                "app:shop".into(),
                2,
                "depends_on".into(),
                "service:nginx".into()
            ),
        ]
    );
    assert!(!d.more);
    let d = t.store.dependents("host:web", 2).unwrap();
    assert_eq!(d.dependents.len(), 2);
    assert!(d.more);
    let d = t.store.dependents("HOST:unknown", 0).unwrap();
    assert!(!d.known && d.dependents.is_empty());
    assert_eq!(d.target, "host:unknown");
    assert!(t.store.dependents("no slug", 0).is_err());
}

#[test]
fn stale_entities_are_those_neither_changed_nor_audited_since_the_cutoff() {
    let t = store();
    entity(&t, "host:old");
    entity(&t, "host:audited");
    entity(&t, "host:changed");
    t.clock.advance(Duration::from_secs(10 * 86_400));
    let cutoff = T0 + 5 * 86_400_000;
    entity(&t, "host:new");
    t.store
        .update_entity_attributes(None, "host:changed", &attrs(json!({"kernel": "6.1"})))
        .unwrap();
    t.store
        .upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind: KnowledgeKind::Investigation,
            slug: None,
            title: "Audit of one host".into(),
            body: String::new(),
            tags: vec![],
            about: vec!["host:audited".into()],
        })
        .unwrap();
    // A note is not an audit.
    t.store
        .upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind: KnowledgeKind::Note,
            slug: None,
            title: "Remember old".into(),
            body: String::new(),
            tags: vec![],
            about: vec!["host:old".into()],
        })
        .unwrap();
    let stale: Vec<String> = t
        .store
        .stale_entities(cutoff, 0)
        .unwrap()
        .into_iter()
        .map(|s| s.slug)
        .collect();
    assert_eq!(stale, ["host:old"]);
    assert!(
        t.store.stale_entities(T0, 0).unwrap().is_empty(),
        "nothing is older than T0"
    );
    assert_eq!(
        t.store.stale_entities(i64::MAX, 2).unwrap().len(),
        2,
        "bounded"
    );
}

fn exec(
    t: &TestStore,
    sid: i64,
    target: &str,
    class: CommandClass,
    result: ExecutionResult,
) -> i64 {
    let new = NewExecution {
        class,
        approval: Some(Approval {
            kind: ApprovalKind::OperatorButton,
            by: Some("desktop".into()),
            window_id: None,
        }),
        ..read_only(sid, target, "cmd")
    };
    let e = t.store.create_execution(&new).unwrap();
    t.store.start_execution(e.id).unwrap();
    t.clock.advance(Duration::from_millis(100));
    t.store.finish_execution(e.id, &result).unwrap().id
}

fn failed(code: i32) -> ExecutionResult {
    ExecutionResult {
        exit_code: Some(code),
        ..finished("")
    }
}

/// Execution id, session, target, class, outcome variant.
type Run = (i64, i64, &'static str, CommandClass, usize);

#[test]
fn ledger_filters_and_pages_across_sessions_newest_first() {
    let t = store();
    let a = new_session(&t, "A");
    let b = new_session(&t, "B");
    propose(&t, a, &["Look"]);
    propose(&t, b, &["Look"]);
    let mut all: Vec<Run> = Vec::new();
    for i in 0..24 {
        let sid = if i % 2 == 0 { a } else { b };
        let target = ["host:web", "host:db", "lxc:cache"][i % 3];
        let class = [
            CommandClass::ReadOnly,
            CommandClass::ConfigMutation,
            CommandClass::Destructive,
        ][i % 3];
        let result = match i % 4 {
            0 => finished("ok"),
            1 => failed(2),
            2 => ExecutionResult {
                status: ExecStatus::TimedOut,
                exit_code: None,
                error: Some("timed out".into()),
                ..finished("")
            },
            _ => ExecutionResult {
                status: ExecStatus::Cancelled,
                exit_code: None,
                error: Some("stopped".into()),
                ..finished("")
            },
        };
        all.push((
            exec(&t, sid, target, class, result),
            sid,
            target,
            class,
            i % 4,
        ));
        t.clock.advance(Duration::from_secs(1));
    }
    let ids = |f: &LedgerFilter| -> Vec<i64> {
        t.store
            .execution_ledger(f)
            .unwrap()
            .rows
            .iter()
            .map(|r| r.id)
            .collect()
    };
    let expect = |pred: &dyn Fn(&Run) -> bool| -> Vec<i64> {
        all.iter().rev().filter(|x| pred(x)).map(|x| x.0).collect()
    };
    assert_eq!(ids(&LedgerFilter::default()), expect(&|_| true));
    assert_eq!(
        ids(&LedgerFilter {
            target: Some("host:db".into()),
            ..Default::default()
        }),
        expect(&|x| x.2 == "host:db")
    );
    assert_eq!(
        ids(&LedgerFilter {
            session: Some(b),
            ..Default::default()
        }),
        expect(&|x| x.1 == b)
    );
    assert_eq!(
        ids(&LedgerFilter {
            classes: vec![CommandClass::Destructive, CommandClass::ReadOnly],
            ..Default::default()
        }),
        expect(&|x| x.3 != CommandClass::ConfigMutation)
    );
    assert_eq!(
        ids(&LedgerFilter {
            outcomes: vec![LedgerOutcome::Succeeded],
            ..Default::default()
        }),
        expect(&|x| x.4 == 0)
    );
    assert_eq!(
        ids(&LedgerFilter {
            outcomes: vec![LedgerOutcome::Failed],
            ..Default::default()
        }),
        expect(&|x| x.4 == 1 || x.4 == 2),
        "a non-zero exit and a timeout both failed"
    );
    assert_eq!(
        ids(&LedgerFilter {
            outcomes: vec![LedgerOutcome::Cancelled],
            ..Default::default()
        }),
        expect(&|x| x.4 == 3)
    );
    // Time: executions i = 5..10 were created in [T0 + 5 × 1.1 s, T0 + 10 × 1.1 s).
    let created: Vec<i64> = all
        .iter()
        .map(|x| t.store.get_execution(x.0).unwrap().created_at_ms)
        .collect();
    let (since, until) = (created[5], created[10]);
    assert_eq!(
        ids(&LedgerFilter {
            since_ms: Some(since),
            until_ms: Some(until),
            ..Default::default()
        }),
        all[5..10].iter().rev().map(|x| x.0).collect::<Vec<_>>()
    );
    // All filters at once.
    assert_eq!(
        ids(&LedgerFilter {
            target: Some("host:web".into()),
            session: Some(a),
            classes: vec![CommandClass::ReadOnly],
            outcomes: vec![LedgerOutcome::Succeeded],
            since_ms: Some(created[1]),
            ..Default::default()
        }),
        expect(&|x| x.2 == "host:web"
            && x.1 == a
            && x.3 == CommandClass::ReadOnly
            && x.4 == 0
            && x.0 != all[0].0)
    );
    // Pages of every size cover the filtered rows once, in order.
    for size in [1u32, 5, 7, 24, 25] {
        let f = LedgerFilter {
            target: Some("host:web".into()),
            limit: size,
            ..Default::default()
        };
        let mut got = Vec::new();
        let mut cursor = None;
        loop {
            let page = t
                .store
                .execution_ledger(&LedgerFilter {
                    before: cursor,
                    ..f.clone()
                })
                .unwrap();
            assert!(page.rows.len() <= size as usize);
            got.extend(page.rows.iter().map(|r| r.id));
            match page.next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(got, expect(&|x| x.2 == "host:web"), "page size {size}");
    }
    // Who approved, and the link fields.
    let row = &t
        .store
        .execution_ledger(&LedgerFilter {
            limit: 1,
            ..Default::default()
        })
        .unwrap()
        .rows[0];
    assert_eq!(row.approved_by.as_deref(), Some("desktop"));
    assert_eq!(row.approval, Some(ApprovalKind::OperatorButton));
    assert!(row.approved_at_ms.is_some());
    assert_eq!(row.duration_ms, Some(100));
    assert_eq!(row.session_title, "B");
    // Executions targeting one entity: the same rows as the target filter.
    let targeting: Vec<i64> = t
        .store
        .executions_targeting("lxc:cache", 0)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(targeting, expect(&|x| x.2 == "lxc:cache"));
}

#[test]
fn matrix_puts_each_run_in_its_step_and_target_cell() {
    let t = store();
    let sid = new_session(&t, "Fleet update");
    propose(&t, sid, &["Check", "Upgrade"]);
    let outside = exec(&t, sid, "host:a", CommandClass::ReadOnly, finished("")); // before any step
    step(&t, sid, 1, StepStatus::Running);
    let with_step = |seq: i64, target: &str, class: CommandClass, r: ExecutionResult| {
        let new = NewExecution {
            step_seq: Some(seq),
            class,
            approval: Some(Approval {
                kind: ApprovalKind::OperatorButton,
                by: None,
                window_id: None,
            }),
            ..read_only(sid, target, "cmd")
        };
        let e = t.store.create_execution(&new).unwrap();
        t.store.start_execution(e.id).unwrap();
        t.store.finish_execution(e.id, &r).unwrap().id
    };
    with_step(1, "host:a", CommandClass::ReadOnly, finished(""));
    with_step(1, "host:b", CommandClass::ReadOnly, failed(1));
    step(&t, sid, 1, StepStatus::Done);
    step(&t, sid, 2, StepStatus::Running);
    with_step(2, "host:a", CommandClass::ConfigMutation, failed(1));
    let last = with_step(2, "host:a", CommandClass::ReadOnly, finished(""));
    let m = t.store.execution_matrix(sid).unwrap();
    assert_eq!(m.targets, ["host:a", "host:b"]);
    let titles: Vec<&str> = m.steps.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Check",
            "Upgrade",
            WRITE_BACK_TITLE,
            "Outside any plan step"
        ]
    );
    let cell = |step: Option<i64>, target: &str| {
        m.cells
            .iter()
            .find(|c| c.plan_step_id == step && c.target == target)
            .cloned()
    };
    let s1 = m.steps[0].id;
    let s2 = m.steps[1].id;
    let c = cell(s1, "host:a").unwrap();
    assert_eq!((c.runs, c.succeeded, c.failed), (1, 1, 0));
    let c = cell(s1, "host:b").unwrap();
    assert_eq!(
        (c.runs, c.failed, c.last_outcome),
        (1, 1, LedgerOutcome::Failed)
    );
    let c = cell(s2, "host:a").unwrap();
    assert_eq!((c.runs, c.succeeded, c.failed), (2, 1, 1));
    assert_eq!(
        c.class,
        CommandClass::ConfigMutation,
        "the most mutating class"
    );
    assert_eq!(
        (c.last_execution_id, c.last_outcome),
        (last, LedgerOutcome::Succeeded)
    );
    assert!(cell(s2, "host:b").is_none());
    assert_eq!(cell(None, "host:a").unwrap().last_execution_id, outside);
    assert!(!m.truncated);
    assert!(t.store.execution_matrix(9999).is_err());
}

/// The graph IPC's store side on the benchmark's graph: 5,000 nodes and 15,000 edges.
/// `cargo test -p nomos-store --release --test it -- --ignored --nocapture graph::bench_`
#[test]
#[ignore = "benchmark: run by hand"]
fn bench_graph_slice_5000_nodes_15000_edges() {
    let t = store();
    let kinds = ["host", "lxc", "vm", "service", "disk"];
    t.store
        .write(|w| {
            for i in 0..15_000u32 {
                let a = i % 5_000;
                // Three distinct out-edges per node: a+1, a+1668, a+3335.
                let b = (a + 1 + (i / 5_000) * 1_667) % 5_000;
                w.create_relationship(
                    None,
                    &format!("{}:n{a}", kinds[(a % 5) as usize]),
                    "depends_on",
                    &format!("{}:n{b}", kinds[(b % 5) as usize]),
                    &Map::new(),
                )?;
            }
            Ok(())
        })
        .unwrap();
    let q = GraphSliceQuery {
        max_nodes: 5_000,
        max_edges: 20_000,
        ..GraphSliceQuery::default()
    };
    let mut times = Vec::new();
    for _ in 0..10 {
        let start = std::time::Instant::now();
        let s = t.store.graph_slice(&q).unwrap();
        times.push(start.elapsed());
        assert_eq!((s.nodes.len(), s.edges.len()), (5_000, 15_000));
    }
    times.sort();
    println!(
        "graph_slice 5000 nodes / 15000 edges: median {:?}, max {:?}",
        times[times.len() / 2],
        times[times.len() - 1]
    );
}
