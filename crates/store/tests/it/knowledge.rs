use nomos_store::{KnowledgeKind, KnowledgeQuery, NewKnowledge, Slug};
use serde_json::{Map, Value, json};
use std::time::Duration;

use crate::common::*;

fn attrs(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn note(
    session: Option<i64>,
    kind: KnowledgeKind,
    title: &str,
    body: &str,
    tags: &[&str],
    about: &[&str],
) -> NewKnowledge {
    NewKnowledge {
        session_id: session,
        kind,
        slug: None,
        title: title.into(),
        body: body.into(),
        tags: tags.iter().map(|s| s.to_string()).collect(),
        about: about.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn slugs_are_kind_colon_name() {
    assert_eq!(Slug::parse(" Host:web-01 ").unwrap().slug, "host:web-01");
    assert_eq!(Slug::parse("lxc:nextcloud").unwrap().name, "nextcloud");
    for bad in ["web-01", ":x", "host:", "ho st:x", "host:a b", "Hö:x"] {
        assert_eq!(
            Slug::parse(bad).unwrap_err().code(),
            "store.invalid_input",
            "{bad}"
        );
    }
}

#[test]
fn attribute_history_records_every_change_with_its_session() {
    let t = store();
    let sid = new_session(&t, "s");
    propose(&t, sid, &["inspect"]);
    let u = t
        .store
        .update_entity_attributes(
            Some(sid),
            "lxc:nextcloud",
            &attrs(json!({"version": "27.1", "transport": "pct"})),
        )
        .unwrap();
    assert!(u.created);
    assert_eq!(u.changes.len(), 2);
    t.clock.advance(Duration::from_millis(1000));
    let other = new_session(&t, "later");
    let u = t
        .store
        .update_entity_attributes(
            Some(other),
            "lxc:nextcloud",
            &attrs(json!({"version": "28.0", "transport": "pct", "php": null})),
        )
        .unwrap();
    assert!(!u.created);
    assert_eq!(
        u.changes.len(),
        1,
        "unchanged values and removing a missing key record nothing"
    );
    t.store
        .update_entity_attributes(None, "lxc:nextcloud", &attrs(json!({"transport": null})))
        .unwrap();

    let e = t.store.get_entity("lxc:nextcloud").unwrap().unwrap();
    assert_eq!(
        Value::Object(e.attributes.clone()),
        json!({"version": "28.0"})
    );
    assert_eq!(e.kind, "lxc");
    let h = t.store.attribute_history("lxc:nextcloud").unwrap();
    assert_eq!(h.len(), 4);
    let v: Vec<_> = h.iter().filter(|c| c.key == "version").collect();
    assert_eq!(v[0].old_value, None);
    assert_eq!(v[0].new_value, Some(json!("27.1")));
    assert_eq!(v[0].session_id, Some(sid));
    assert_eq!(v[0].generation, Some(1));
    assert_eq!(v[1].old_value, Some(json!("27.1")));
    assert_eq!(v[1].session_id, Some(other));
    assert_eq!(v[1].generation, None, "that session had no plan");
    let removed = h
        .iter()
        .find(|c| c.key == "transport" && c.new_value.is_none())
        .unwrap();
    assert_eq!(removed.session_id, None);
    assert_eq!(removed.old_value, Some(json!("pct")));
}

#[test]
fn relations_merge_and_entities_are_created() {
    let t = store();
    let r = t
        .store
        .create_relationship(
            None,
            "lxc:jellyfin",
            "runs_on",
            "host:hubris",
            &attrs(json!({"vmid": 105})),
        )
        .unwrap();
    assert_eq!(
        (r.from.as_str(), r.kind.as_str(), r.to.as_str()),
        ("lxc:jellyfin", "runs_on", "host:hubris")
    );
    let r2 = t
        .store
        .create_relationship(
            None,
            "lxc:jellyfin",
            "runs_on",
            "host:hubris",
            &attrs(json!({"autostart": true})),
        )
        .unwrap();
    assert_eq!(r2.id, r.id);
    assert_eq!(
        Value::Object(r2.attributes),
        json!({"vmid": 105, "autostart": true})
    );
    assert!(t.store.get_entity("host:hubris").unwrap().is_some());
    assert_eq!(t.store.relations_of("host:hubris").unwrap().len(), 1);
    let g = t.store.graph(0).unwrap();
    assert_eq!((g.nodes.len(), g.edges.len()), (2, 1));
    assert!(
        t.store
            .delete_relationship("lxc:jellyfin", "runs_on", "host:hubris")
            .unwrap()
    );
    assert!(t.store.relations_of("host:hubris").unwrap().is_empty());
}

#[test]
fn knowledge_upsert_tags_about_and_search() {
    let t = store();
    let sid = new_session(&t, "s");
    let e = t
        .store
        .upsert_knowledge(&note(
            Some(sid),
            KnowledgeKind::Investigation,
            "Fleet apt audit 2026-07-14",
            "nextcloud has 12 upgradable packages; jellyfin is current.",
            &["audit", "Apt"],
            &["lxc:nextcloud", "lxc:jellyfin"],
        ))
        .unwrap();
    assert_eq!(e.slug, "fleet-apt-audit-2026-07-14");
    assert_eq!(e.tags, ["apt", "audit"]);
    assert_eq!(e.about, ["lxc:jellyfin", "lxc:nextcloud"]);
    assert_eq!(e.revision, 1);
    // Same kind + slug updates in place.
    let e2 = t
        .store
        .upsert_knowledge(&note(
            Some(sid),
            KnowledgeKind::Investigation,
            "Fleet apt audit 2026-07-14",
            "nextcloud has 3 upgradable packages.",
            &["audit"],
            &[],
        ))
        .unwrap();
    assert_eq!(e2.id, e.id);
    assert_eq!(e2.revision, 2);
    assert_eq!(e2.about.len(), 2, "an empty about list keeps the links");
    t.store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Runbook,
            "Restart nginx",
            "systemctl restart nginx",
            &["nginx"],
            &["host:web-01"],
        ))
        .unwrap();

    let q = |text: &str, kinds: Vec<KnowledgeKind>| {
        t.store
            .search_knowledge(&KnowledgeQuery {
                text: text.into(),
                kinds,
                limit: 10,
                prefix: false,
            })
            .unwrap()
    };
    let typing = |text: &str| {
        t.store
            .search_knowledge(&KnowledgeQuery {
                text: text.into(),
                kinds: vec![],
                limit: 10,
                prefix: true,
            })
            .unwrap()
    };
    let hits = q("upgradable", vec![]);
    assert_eq!(hits.len(), 1);
    assert!(
        hits[0].snippet.contains("[upgradable]"),
        "{}",
        hits[0].snippet
    );
    assert!(
        q("12 upgradable", vec![]).is_empty(),
        "the old body is gone from the index"
    );
    assert_eq!(q("nginx", vec![]).len(), 1);
    assert!(q("nginx", vec![KnowledgeKind::Investigation]).is_empty());
    assert_eq!(
        q("audit", vec![KnowledgeKind::Investigation]).len(),
        1,
        "tags are searchable"
    );
    assert!(
        q("restart ngi", vec![KnowledgeKind::Runbook]).is_empty(),
        "whole words unless typing"
    );
    assert_eq!(typing("restart ngi")[0].title, "Restart nginx");
    assert_eq!(typing("ngi").len(), 1);
    // Stemming: another form of the word finds the entry, and the snippet marks it.
    let hits = q("upgrade", vec![]);
    assert_eq!(hits.len(), 1, "upgrade ~ upgradable");
    assert!(
        hits[0].snippet.contains("[upgradable]"),
        "{}",
        hits[0].snippet
    );
    assert_eq!(q("packages", vec![]).len(), 1);
    assert!(q("\" OR *", vec![]).is_empty());

    let about = t.store.knowledge_about("lxc:nextcloud", 10).unwrap();
    assert_eq!(about.len(), 1);
    assert_eq!(about[0].id, e.id);
    let detail = t.store.entity_detail("lxc:nextcloud", 10).unwrap().unwrap();
    assert_eq!(detail.knowledge.len(), 1);
    assert!(
        t.store
            .entities_touched_by(sid)
            .unwrap()
            .contains(&"lxc:nextcloud".to_string())
    );
}

#[test]
fn search_ranks_title_and_tags_above_body_mentions() {
    let t = store();
    let body_only = t
        .store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Note,
            "Disk layout",
            "zfs pool on sda",
            &[],
            &[],
        ))
        .unwrap();
    let titled = t
        .store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Runbook,
            "ZFS scrub",
            "monthly",
            &["zfs"],
            &[],
        ))
        .unwrap();
    let newest = t
        .store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Note,
            "Other",
            "mentions zfs once",
            &[],
            &[],
        ))
        .unwrap();
    let hits = t
        .store
        .search_knowledge(&KnowledgeQuery {
            text: "zfs".into(),
            ..Default::default()
        })
        .unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.id).collect();
    assert_eq!(
        ids,
        [titled.id, newest.id, body_only.id],
        "title/tag first, then newest"
    );
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn entity_search_covers_slug_name_and_attributes() {
    let t = store();
    t.store
        .update_entity_attributes(
            None,
            "host:web-01",
            &attrs(json!({"os": "debian 12", "role": "reverse proxy"})),
        )
        .unwrap();
    t.store
        .update_entity_attributes(None, "lxc:nextcloud", &attrs(json!({"os": "ubuntu"})))
        .unwrap();
    let hits = t.store.search_entities("debian", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].entity.slug, "host:web-01");
    assert_eq!(
        t.store.search_entities("nextcloud", 10).unwrap()[0]
            .entity
            .slug,
        "lxc:nextcloud"
    );
    assert_eq!(t.store.search_entities("web 01", 10).unwrap().len(), 1);
    // Attribute updates reach the index.
    t.store
        .update_entity_attributes(None, "lxc:nextcloud", &attrs(json!({"os": "debian 13"})))
        .unwrap();
    assert_eq!(t.store.search_entities("debian", 10).unwrap().len(), 2);
    assert!(t.store.search_entities("ubuntu", 10).unwrap().is_empty());
}

#[test]
fn i19_targets_show_when_they_were_last_audited() {
    let t = store();
    t.store
        .update_entity_attributes(None, "lxc:nextcloud", &attrs(json!({"transport": "pct"})))
        .unwrap();
    t.store
        .update_entity_attributes(None, "host:hubris", &attrs(json!({"transport": "ssh"})))
        .unwrap();
    t.store
        .update_entity_attributes(None, "service:nginx", &attrs(json!({})))
        .unwrap();
    t.clock.advance(Duration::from_millis(1000));
    // A runbook about a target is not an audit.
    t.store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Runbook,
            "Restart",
            "x",
            &[],
            &["host:hubris"],
        ))
        .unwrap();
    t.clock.advance(Duration::from_millis(1000));
    let audit_at = t.store.now_ms();
    t.store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Investigation,
            "apt audit",
            "ok",
            &[],
            &["lxc:nextcloud"],
        ))
        .unwrap();
    t.clock.advance(Duration::from_millis(5000));
    // A note tagged "audit" counts too.
    let tagged_at = t.store.now_ms();
    t.store
        .upsert_knowledge(&note(
            None,
            KnowledgeKind::Note,
            "hubris checked",
            "fine",
            &["audit"],
            &["host:hubris"],
        ))
        .unwrap();

    let targets = t.store.list_targets().unwrap();
    let slugs: Vec<_> = targets.iter().map(|t| t.entity.slug.as_str()).collect();
    assert_eq!(
        slugs,
        ["host:hubris", "lxc:nextcloud"],
        "only host/lxc/vm entities are targets"
    );
    assert_eq!(targets[0].transport.as_deref(), Some("ssh"));
    assert_eq!(targets[0].last_audited_at_ms, Some(tagged_at));
    assert_eq!(targets[1].last_audited_at_ms, Some(audit_at));
    assert_eq!(
        t.store.last_audited_at("lxc:nextcloud").unwrap(),
        Some(audit_at)
    );
    assert_eq!(t.store.last_audited_at("vm:unknown").unwrap(), None);
}
