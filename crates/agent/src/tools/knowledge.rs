//! Knowledge tools: search and read what Nomos knows (entries, entities, relations) and write
//! back what the task found.

use nomos_store::{KnowledgeKind, KnowledgeQuery, NewKnowledge};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{Int, Text, given, object_schema};
use super::contract::{ToolArgs, ToolContext, ToolOutcome, pretty};

/// A `limit` the model may leave out: the default, or what it asked clamped to the range.
fn limit(asked: Option<Int>, default: u32, max: u32) -> u32 {
    asked.map_or(default, |Int(n)| {
        u32::try_from(n.clamp(1, i64::from(max))).unwrap_or(default)
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchKnowledge {
    query: Text,
    #[schemars(range(min = 1, max = 50))]
    limit: Option<Int>,
}

impl ToolArgs for SearchKnowledge {
    const NAME: &'static str = "search_knowledge";
    const DESCRIPTION: &'static str = "Full-text search over what Nomos already knows (investigations, runbooks, notes, entities). Use before running commands.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let store = &cx.agent.inner.store;
        let query = self.query.as_str();
        let limit = limit(self.limit, 10, 50);
        let hits = store.search_knowledge(&KnowledgeQuery {
            text: query.to_owned(),
            prefix: false,
            kinds: Vec::new(),
            limit,
        })?;
        let entities = store.search_entities(query, limit)?;
        Ok(if hits.is_empty() && entities.is_empty() {
            ToolOutcome::ok(format!("Nothing known matches \"{query}\"."))
        } else {
            ToolOutcome::ok(pretty(&json!({"knowledge": hits, "entities": entities})))
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetKnowledgeContent {
    id: Int,
}

impl ToolArgs for GetKnowledgeContent {
    const NAME: &'static str = "get_knowledge_content";
    const DESCRIPTION: &'static str = "Read one knowledge entry in full by id.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        Ok(ToolOutcome::ok(pretty(
            &cx.agent.inner.store.get_knowledge(self.id.0)?,
        )))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetEntity {
    slug: Text,
}

impl ToolArgs for GetEntity {
    const NAME: &'static str = "get_entity";
    const DESCRIPTION: &'static str = "Read an entity (host:…, lxc:…, vm:…, service:…) with its attributes, history, relations and the knowledge about it.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let slug = self.slug.as_str();
        Ok(match cx.agent.inner.store.entity_detail(slug, 20)? {
            Some(detail) => ToolOutcome::ok(pretty(&detail)),
            None => ToolOutcome::ok(format!("No entity {slug} is known yet.")),
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListEntities {
    kind: Option<String>,
    #[schemars(range(min = 1, max = 500))]
    limit: Option<Int>,
}

impl ToolArgs for ListEntities {
    const NAME: &'static str = "list_entities";
    const DESCRIPTION: &'static str =
        "List entities, optionally of one kind (host, lxc, vm, service, …).";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let entities = cx
            .agent
            .inner
            .store
            .list_entities(given(&self.kind), limit(self.limit, 100, 500))?;
        Ok(ToolOutcome::ok(pretty(&entities)))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetRelations {
    slug: Text,
}

impl ToolArgs for GetRelations {
    const NAME: &'static str = "get_relations";
    const DESCRIPTION: &'static str = "The relations of an entity (runs_on, depends_on, …).";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        Ok(ToolOutcome::ok(pretty(
            &cx.agent.inner.store.relations_of(self.slug.as_str())?,
        )))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateEntityAttributes {
    slug: Text,
    #[schemars(schema_with = "object_schema")]
    attributes: Map<String, Value>,
}

impl ToolArgs for UpdateEntityAttributes {
    const NAME: &'static str = "update_entity_attributes";
    const DESCRIPTION: &'static str = "Record facts about an entity (creates it if new): attributes as a JSON object, e.g. {\"os\": \"Debian 12\", \"disk_free_pct\": 41}.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let slug = self.slug.as_str();
        let update = cx.agent.inner.store.update_entity_attributes(
            Some(cx.session),
            slug,
            &self.attributes,
        )?;
        Ok(ToolOutcome::ok(format!(
            "Recorded on {slug}: {}",
            pretty(&update)
        )))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateRelationship {
    from: Text,
    kind: Text,
    to: Text,
    // `default`: with a custom schema, schemars learns that the field is optional from serde.
    #[serde(default)]
    #[schemars(schema_with = "object_schema")]
    attributes: Option<Map<String, Value>>,
}

impl ToolArgs for CreateRelationship {
    const NAME: &'static str = "create_relationship";
    const DESCRIPTION: &'static str =
        "Record how two entities connect, e.g. service:nginx runs_on host:web-01.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let rel = cx.agent.inner.store.create_relationship(
            Some(cx.session),
            self.from.as_str(),
            self.kind.as_str(),
            self.to.as_str(),
            &self.attributes.unwrap_or_default(),
        )?;
        Ok(ToolOutcome::ok(format!("Recorded: {}", pretty(&rel))))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpsertKnowledge {
    kind: KindArg,
    title: Text,
    body: Text,
    slug: Option<String>,
    tags: Option<Vec<String>>,
    about: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum KindArg {
    Investigation,
    Document,
    Runbook,
    Note,
}

impl From<KindArg> for KnowledgeKind {
    fn from(k: KindArg) -> Self {
        match k {
            KindArg::Investigation => KnowledgeKind::Investigation,
            KindArg::Document => KnowledgeKind::Document,
            KindArg::Runbook => KnowledgeKind::Runbook,
            KindArg::Note => KnowledgeKind::Note,
        }
    }
}

impl ToolArgs for UpsertKnowledge {
    const NAME: &'static str = "upsert_knowledge";
    const DESCRIPTION: &'static str = "Write a knowledge entry (investigation, document, runbook, note) with `about` links to the entities it concerns. Same slug updates.";

    async fn call(self, cx: &ToolContext<'_>) -> Result<ToolOutcome, ToolOutcome> {
        let entry = cx.agent.inner.store.upsert_knowledge(&NewKnowledge {
            session_id: Some(cx.session),
            kind: self.kind.into(),
            slug: self.slug,
            title: self.title.0,
            body: self.body.0,
            tags: self.tags.unwrap_or_default(),
            about: self.about.unwrap_or_default(),
        })?;
        Ok(ToolOutcome::ok(format!(
            "Knowledge entry {} saved ({}).",
            entry.id, entry.slug
        )))
    }
}
