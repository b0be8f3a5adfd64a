//! The knowledge graph: entities with JSON attributes and a full change history, relations,
//! knowledge entries with tags and `about` links, FTS5 search, and `last_audited_at` (I19).

use rusqlite::{OptionalExtension as _, Row, params};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::{Reader, Store, WriteTx};
use crate::error::StoreError;
use crate::plan::Fact;
use crate::secrets::{is_secret_name, redact};
use crate::sessions::SessionId;
use crate::types::{fts_query, non_blank, sql_limit, text_enum};

/// Entity identifier (rowid).
pub type EntityId = i64;
/// Knowledge entry identifier (rowid).
pub type EntryId = i64;

/// Entity kinds that are execution targets (I19 `list_targets`).
pub const TARGET_KINDS: &[&str] = &["host", "lxc", "vm"];
/// Full-text search scores at most this many of the newest matching entries and returns the
/// best of them (bounded time whatever the words).
pub const SEARCH_CANDIDATES: i64 = 200;
/// Tags that mark an entry as an audit of the entities it is about (besides investigations).
pub const AUDIT_TAGS: &[&str] = &["audit", "update", "updates"];

text_enum! {
    /// Kind of knowledge entry.
    pub enum KnowledgeKind {
        /// What an investigation found (audits count for `last_audited_at`).
        Investigation => "investigation",
        /// Reference documentation.
        Document => "document",
        /// How to do something.
        Runbook => "runbook",
        /// A short note.
        Note => "note",
    }
}

/// A parsed `kind:name` slug. Kind: lowercase ASCII letters, digits, `_`, `-`; name: no
/// whitespace or control characters. At most 200 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slug {
    /// `kind:name`.
    pub slug: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
}

impl Slug {
    /// Parse and normalize (kind lowercased, surrounding space trimmed).
    pub fn parse(s: &str) -> Result<Slug, StoreError> {
        let s = s.trim();
        let bad = |why: &str| {
            StoreError::invalid(format!(
                "\"{s}\" is not an entity slug ({why}); use kind:name, e.g. host:web-01"
            ))
        };
        if s.len() > 200 {
            return Err(bad("longer than 200 bytes"));
        }
        let Some((kind, name)) = s.split_once(':') else {
            return Err(bad("no ':'"));
        };
        let kind = kind.to_ascii_lowercase();
        if kind.is_empty()
            || !kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        {
            return Err(bad(
                "the kind must be lowercase letters, digits, '_' or '-'",
            ));
        }
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("the name must be non-empty, without spaces"));
        }
        Ok(Slug {
            slug: format!("{kind}:{name}"),
            kind,
            name: name.to_owned(),
        })
    }
}

/// An entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entity {
    /// Rowid.
    pub id: EntityId,
    /// `kind:name`.
    pub slug: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Attributes.
    pub attributes: Map<String, Value>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
}

/// One attribute change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttributeChange {
    /// Rowid.
    pub id: i64,
    /// Entity slug.
    pub slug: String,
    /// Attribute name.
    pub key: String,
    /// Previous value (`None`: the attribute was new).
    pub old_value: Option<Value>,
    /// New value (`None`: removed).
    pub new_value: Option<Value>,
    /// The session that made the change.
    pub session_id: Option<SessionId>,
    /// Its plan generation.
    pub generation: Option<i64>,
    /// Time.
    pub changed_at_ms: i64,
    /// The plan step running (or last started) in that session when the fact was written.
    pub plan_step_id: Option<i64>,
    /// The session's latest finished execution at that moment: the output the fact was read
    /// from.
    pub execution_id: Option<i64>,
    /// The session's latest message at that moment (the model turn that wrote it).
    pub message_id: Option<i64>,
}

/// Result of [`Store::update_entity_attributes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntityUpdate {
    /// The entity after the update.
    pub entity: Entity,
    /// It did not exist before.
    pub created: bool,
    /// The changes recorded (unchanged values are not recorded).
    pub changes: Vec<AttributeChange>,
}

/// A relation `from -kind-> to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Relation {
    /// Rowid.
    pub id: i64,
    /// Source slug.
    pub from: String,
    /// Relation kind (`runs_on`, `depends_on`, …).
    pub kind: String,
    /// Destination slug.
    pub to: String,
    /// Attributes.
    pub attributes: Map<String, Value>,
    /// Session that created or last changed it.
    pub session_id: Option<SessionId>,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
}

/// Input of [`Store::upsert_knowledge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKnowledge {
    /// Session writing it.
    pub session_id: Option<SessionId>,
    /// Kind.
    pub kind: KnowledgeKind,
    /// Stable key within the kind; derived from the title when `None`. Upserts match on it.
    pub slug: Option<String>,
    /// Title.
    pub title: String,
    /// Body (Markdown).
    pub body: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Entity slugs it is about (created when unknown).
    pub about: Vec<String>,
}

/// A knowledge entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnowledgeEntry {
    /// Rowid.
    pub id: EntryId,
    /// Kind.
    pub kind: KnowledgeKind,
    /// Key within the kind.
    pub slug: String,
    /// Title.
    pub title: String,
    /// Body.
    pub body: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Entities it is about (slugs).
    pub about: Vec<String>,
    /// Session that last wrote it.
    pub session_id: Option<SessionId>,
    /// Revision (1 on creation, +1 per upsert).
    pub revision: i64,
    /// Creation time.
    pub created_at_ms: i64,
    /// Last change.
    pub updated_at_ms: i64,
}

/// A search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnowledgeHit {
    /// Rowid.
    pub id: EntryId,
    /// Kind.
    pub kind: KnowledgeKind,
    /// Key.
    pub slug: String,
    /// Title.
    pub title: String,
    /// Snippet of the body with `[` `]` around matches.
    pub snippet: String,
    /// Tags (space separated).
    pub tags: String,
    /// Last change.
    pub updated_at_ms: i64,
    /// Relevance (higher is better): query words in the title count 3, in tags 2, in the body
    /// 1 with saturation; ties go to the newer entry.
    pub score: f64,
}

/// An entity search hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityHit {
    /// The entity.
    pub entity: Entity,
    /// BM25 rank (lower is better).
    pub rank: f64,
}

/// Filter of [`Store::search_knowledge`].
#[derive(Debug, Clone, Default)]
pub struct KnowledgeQuery {
    /// Words to find; every word must match (English stemming: `upgrades` finds `upgraded`).
    pub text: String,
    /// The last word also matches as a prefix (search as you type in the UI).
    pub prefix: bool,
    /// Only these kinds (empty: all).
    pub kinds: Vec<KnowledgeKind>,
    /// At most this many (0: 20).
    pub limit: u32,
}

/// An entity with its neighbourhood (`get_entity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntityDetail {
    /// The entity.
    pub entity: Entity,
    /// Most recent attribute changes first.
    pub history: Vec<AttributeChange>,
    /// Relations from or to it.
    pub relations: Vec<Relation>,
    /// Knowledge about it, most recent first (without bodies).
    pub knowledge: Vec<KnowledgeEntry>,
    /// When it was last audited (I19).
    pub last_audited_at_ms: Option<i64>,
}

/// An execution target with its audit freshness (I19).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// The entity (`host:…`, `lxc:…`, `vm:…`).
    pub entity: Entity,
    /// Its `transport` attribute (`local`, `ssh`, `pct`), if set.
    pub transport: Option<String>,
    /// Latest investigation (or audit-tagged entry) about it.
    pub last_audited_at_ms: Option<i64>,
}

/// Nodes and edges for the graph view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// Entities.
    pub nodes: Vec<Entity>,
    /// Relations between them.
    pub edges: Vec<Relation>,
}

pub(crate) const ENTITY_COLS: &str =
    "id, slug, kind, name, attributes, created_at_ms, updated_at_ms";

fn parse_map(s: &str) -> Map<String, Value> {
    match serde_json::from_str(s) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

pub(crate) fn entity_from_row(r: &Row<'_>) -> rusqlite::Result<Entity> {
    let attrs: String = r.get(4)?;
    Ok(Entity {
        id: r.get(0)?,
        slug: r.get(1)?,
        kind: r.get(2)?,
        name: r.get(3)?,
        attributes: parse_map(&attrs),
        created_at_ms: r.get(5)?,
        updated_at_ms: r.get(6)?,
    })
}

fn change_from_row(r: &Row<'_>) -> rusqlite::Result<AttributeChange> {
    let old: Option<String> = r.get(3)?;
    let new: Option<String> = r.get(4)?;
    Ok(AttributeChange {
        id: r.get(0)?,
        slug: r.get(1)?,
        key: r.get(2)?,
        old_value: old.and_then(|v| serde_json::from_str(&v).ok()),
        new_value: new.and_then(|v| serde_json::from_str(&v).ok()),
        session_id: r.get(5)?,
        generation: r.get(6)?,
        changed_at_ms: r.get(7)?,
        plan_step_id: r.get(8)?,
        execution_id: r.get(9)?,
        message_id: r.get(10)?,
    })
}

/// The columns [`change_from_row`] reads, from `entity_attribute_history h JOIN entities e`.
const CHANGE_COLS: &str = "h.id, e.slug, h.key, h.old_value, h.new_value, h.session_id, h.generation, \
     h.changed_at_ms, h.plan_step_id, h.execution_id, h.message_id";

const RELATION_SELECT: &str = "SELECT r.id, f.slug, r.kind, t.slug, r.attributes, r.session_id, r.created_at_ms, r.updated_at_ms
     FROM relations r JOIN entities f ON f.id = r.from_entity JOIN entities t ON t.id = r.to_entity";

pub(crate) fn relation_from_row(r: &Row<'_>) -> rusqlite::Result<Relation> {
    let attrs: String = r.get(4)?;
    Ok(Relation {
        id: r.get(0)?,
        from: r.get(1)?,
        kind: r.get(2)?,
        to: r.get(3)?,
        attributes: parse_map(&attrs),
        session_id: r.get(5)?,
        created_at_ms: r.get(6)?,
        updated_at_ms: r.get(7)?,
    })
}

const ENTRY_COLS: &str =
    "id, kind, slug, title, body, tags, session_id, revision, created_at_ms, updated_at_ms";

fn entry_from_row(r: &Row<'_>) -> rusqlite::Result<KnowledgeEntry> {
    let tags: String = r.get(5)?;
    Ok(KnowledgeEntry {
        id: r.get(0)?,
        kind: r.get(1)?,
        slug: r.get(2)?,
        title: r.get(3)?,
        body: r.get(4)?,
        tags: tags.split_whitespace().map(str::to_owned).collect(),
        about: Vec::new(),
        session_id: r.get(6)?,
        revision: r.get(7)?,
        created_at_ms: r.get(8)?,
        updated_at_ms: r.get(9)?,
    })
}

/// `"Fleet apt audit 2026-07-14"` → `"fleet-apt-audit-2026-07-14"`.
pub fn slugify(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out.truncate(crate::types::floor_char(&out, 120));
    if out.is_empty() {
        "untitled".to_owned()
    } else {
        out
    }
}

fn normalize_tag(t: &str) -> Option<String> {
    let t: String = t
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' || c == '/' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let t = t.trim_matches('-').to_owned();
    (!t.is_empty()).then_some(t)
}

/// The words of a search, prepared for scoring and snippets.
fn search_words(text: &str) -> Vec<SearchWord> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(SearchWord::new)
        .collect()
}

/// A search word prepared for highlighting and scoring: lowercase, and its stem (all but up
/// to three trailing characters, at least four) — a cheap stand-in for the index's stemming.
#[derive(Debug)]
pub(crate) struct SearchWord {
    word: String,
    stem: Option<String>,
}

impl SearchWord {
    fn new(word: &str) -> SearchWord {
        let word = word.to_lowercase();
        let n = word.chars().count();
        let stem = (n >= 5).then(|| word.chars().take((n - 3).max(4)).collect());
        SearchWord { word, stem }
    }

    /// `token` starts with the word or its stem (case-insensitive).
    fn matches(&self, token: &str) -> bool {
        starts_with_ci(token, &self.word)
            || self
                .stem
                .as_deref()
                .is_some_and(|s| starts_with_ci(token, s))
    }
}

fn starts_with_ci(token: &str, prefix: &str) -> bool {
    if token.is_ascii() && prefix.is_ascii() {
        token.len() >= prefix.len()
            && token.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
    } else {
        token.to_lowercase().starts_with(prefix)
    }
}

/// Count of tokens of `text` matching one of `words`.
fn occurrences(words: &[SearchWord], text: &str) -> f64 {
    let mut n = 0.0;
    for token in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        if words.iter().any(|w| w.matches(token)) {
            n += 1.0;
        }
    }
    n
}

/// Relevance of one entry: title 3, tags 2, body 1 with saturation (tf / (tf + 1.2)).
fn relevance(words: &[SearchWord], title: &str, tags: &str, body: &str) -> f64 {
    let body_tf = occurrences(words, body);
    3.0 * occurrences(words, title)
        + 2.0 * occurrences(words, tags)
        + 2.2 * body_tf / (body_tf + 1.2)
}

/// About `width` characters of `body` around the first word that starts with a search word,
/// with `[` `]` around that word and `…` where text was cut. Looks at the first 64 KiB only.
pub(crate) fn snippet(body: &str, words: &[SearchWord], width: usize) -> String {
    let scan = &body[..crate::types::floor_char(body, 64 * 1024)];
    let chars: Vec<char> = scan.chars().collect();
    let mut hit = None;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_alphanumeric() {
            i += 1;
            continue;
        }
        let end = chars[i..]
            .iter()
            .position(|c| !c.is_alphanumeric())
            .map_or(chars.len(), |p| i + p);
        let token: String = chars[i..end].iter().collect();
        if words.iter().any(|w| w.matches(&token)) {
            hit = Some((i, end));
            break;
        }
        i = end;
    }
    let (from, to) = hit.unwrap_or((0, 0));
    let a = from.saturating_sub(width / 4);
    let b = (to + width.saturating_sub(to - from).saturating_sub(from - a)).min(chars.len());
    let mut out = String::new();
    if a > 0 {
        out.push('…');
    }
    out.extend(&chars[a..from]);
    if hit.is_some() {
        out.push('[');
        out.extend(&chars[from..to]);
        out.push(']');
    }
    out.extend(&chars[to..b]);
    if b < chars.len() || scan.len() < body.len() {
        out.push('…');
    }
    out
}

pub(crate) const LAST_AUDITED_SQL: &str = "SELECT max(k.updated_at_ms) FROM knowledge_about a
     JOIN knowledge_entries k ON k.id = a.entry_id
     WHERE a.entity_id = ?1 AND (k.kind = 'investigation' OR EXISTS (
         SELECT 1 FROM knowledge_tags t WHERE t.entry_id = k.id AND t.tag IN ('audit','update','updates')))";

/// Slugs of the entities a session touched (`?1`: session).
pub(crate) const TOUCHED_SQL: &str = "SELECT slug FROM entities WHERE id IN (
        SELECT entity_id FROM entity_attribute_history WHERE session_id = ?1
        UNION SELECT from_entity FROM relations WHERE session_id = ?1
        UNION SELECT to_entity FROM relations WHERE session_id = ?1
        UNION SELECT a.entity_id FROM knowledge_about a JOIN knowledge_entries k ON k.id = a.entry_id
              WHERE k.session_id = ?1
        UNION SELECT id FROM entities WHERE created_by_session = ?1)
     ORDER BY slug";

impl Reader<'_> {
    /// An entity by slug.
    pub fn entity(&self, slug: &str) -> Result<Option<Entity>, StoreError> {
        let slug = Slug::parse(slug)?;
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {ENTITY_COLS} FROM entities WHERE slug = ?1"
            ))?
            .query_row([&slug.slug], entity_from_row)
            .optional()?)
    }

    /// An entity with its history, relations and knowledge (`get_entity`).
    pub fn entity_detail(
        &self,
        slug: &str,
        history_limit: u32,
    ) -> Result<Option<EntityDetail>, StoreError> {
        let Some(entity) = self.entity(slug)? else {
            return Ok(None);
        };
        let history = self
            .c
            .prepare_cached(&format!(
                "SELECT {CHANGE_COLS}
                 FROM entity_attribute_history h JOIN entities e ON e.id = h.entity_id
                 WHERE h.entity_id = ?1 ORDER BY h.id DESC LIMIT ?2"
            ))?
            .query_map(
                params![entity.id, sql_limit(history_limit)],
                change_from_row,
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let relations = self
            .c
            .prepare_cached(&format!(
                "{RELATION_SELECT} WHERE r.from_entity = ?1 OR r.to_entity = ?1 ORDER BY r.id"
            ))?
            .query_map([entity.id], relation_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let knowledge = self.knowledge_about(&entity.slug, 50)?;
        let last_audited_at_ms = self
            .c
            .prepare_cached(LAST_AUDITED_SQL)?
            .query_row([entity.id], |r| r.get(0))?;
        Ok(Some(EntityDetail {
            entity,
            history,
            relations,
            knowledge,
            last_audited_at_ms,
        }))
    }

    /// Entities, optionally of one kind, by slug (`limit` 0: all).
    pub fn list_entities(&self, kind: Option<&str>, limit: u32) -> Result<Vec<Entity>, StoreError> {
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {ENTITY_COLS} FROM entities WHERE ?1 IS NULL OR kind = ?1 ORDER BY slug LIMIT ?2"
            ))?
            .query_map(params![kind, sql_limit(limit)], entity_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Attribute history of an entity, oldest first.
    pub fn attribute_history(&self, slug: &str) -> Result<Vec<AttributeChange>, StoreError> {
        let slug = Slug::parse(slug)?;
        Ok(self
            .c
            .prepare_cached(&format!(
                "SELECT {CHANGE_COLS}
                 FROM entity_attribute_history h JOIN entities e ON e.id = h.entity_id
                 WHERE e.slug = ?1 ORDER BY h.id"
            ))?
            .query_map([&slug.slug], change_from_row)?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Relations from or to an entity.
    pub fn relations_of(&self, slug: &str) -> Result<Vec<Relation>, StoreError> {
        Ok(match self.entity(slug)? {
            None => Vec::new(),
            Some(e) => self
                .c
                .prepare_cached(&format!(
                    "{RELATION_SELECT} WHERE r.from_entity = ?1 OR r.to_entity = ?1 ORDER BY r.id"
                ))?
                .query_map([e.id], relation_from_row)?
                .collect::<Result<Vec<_>, _>>()?,
        })
    }

    fn about_of(&self, entry: EntryId) -> Result<Vec<String>, StoreError> {
        Ok(self
            .c
            .prepare_cached(
                "SELECT e.slug FROM knowledge_about a JOIN entities e ON e.id = a.entity_id
                 WHERE a.entry_id = ?1 ORDER BY e.slug",
            )?
            .query_map([entry], |r| r.get(0))?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// A knowledge entry with its `about` links.
    pub fn knowledge_entry(&self, id: EntryId) -> Result<KnowledgeEntry, StoreError> {
        let mut e = self
            .c
            .prepare_cached(&format!(
                "SELECT {ENTRY_COLS} FROM knowledge_entries WHERE id = ?1"
            ))?
            .query_row([id], entry_from_row)
            .optional()?
            .ok_or_else(|| StoreError::not_found("knowledge entry", id))?;
        e.about = self.about_of(id)?;
        Ok(e)
    }

    /// A knowledge entry by kind and slug.
    pub fn knowledge_by_slug(
        &self,
        kind: KnowledgeKind,
        slug: &str,
    ) -> Result<Option<KnowledgeEntry>, StoreError> {
        let id: Option<EntryId> = self
            .c
            .prepare_cached("SELECT id FROM knowledge_entries WHERE kind = ?1 AND slug = ?2")?
            .query_row(params![kind, slug], |r| r.get(0))
            .optional()?;
        id.map(|id| self.knowledge_entry(id)).transpose()
    }

    /// Knowledge about an entity, most recent first; bodies left empty.
    pub fn knowledge_about(
        &self,
        slug: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeEntry>, StoreError> {
        let slug = Slug::parse(slug)?;
        let mut rows = self
            .c
            .prepare_cached(
                "SELECT k.id, k.kind, k.slug, k.title, '', k.tags, k.session_id, k.revision, k.created_at_ms, k.updated_at_ms
                 FROM entities e JOIN knowledge_about a ON a.entity_id = e.id JOIN knowledge_entries k ON k.id = a.entry_id
                 WHERE e.slug = ?1 ORDER BY k.updated_at_ms DESC, k.id DESC LIMIT ?2",
            )?
            .query_map(params![&slug.slug, sql_limit(limit)], entry_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        for e in &mut rows {
            e.about = self.about_of(e.id)?;
        }
        Ok(rows)
    }

    /// Full-text search over knowledge entries (title, body, tags), best first.
    pub fn search_knowledge(&self, q: &KnowledgeQuery) -> Result<Vec<KnowledgeHit>, StoreError> {
        let Some(fts) = fts_query(&q.text, q.prefix) else {
            return Ok(Vec::new());
        };
        let limit = if q.limit == 0 { 20 } else { i64::from(q.limit) };
        let kinds: Option<String> = (!q.kinds.is_empty()).then(|| {
            q.kinds
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(",")
        });
        // FTS5's BM25 reads the whole match list of every query word to weigh it (a common
        // word costs milliseconds however few rows match). Instead take the newest
        // SEARCH_CANDIDATES matches (the index walks them newest-first and stops) and score
        // those here: bounded work whatever the words.
        let words = search_words(&q.text);
        let rows = self
            .c
            .prepare_cached(
                "SELECT k.id, k.kind, k.slug, k.title, substr(k.body, 1, 16384), k.tags, k.updated_at_ms
                 FROM knowledge_fts CROSS JOIN knowledge_entries k ON k.id = knowledge_fts.rowid
                 WHERE knowledge_fts MATCH ?1
                   AND (?2 IS NULL OR instr(',' || ?2 || ',', ',' || k.kind || ',') > 0)
                 ORDER BY knowledge_fts.rowid DESC LIMIT ?3",
            )?
            .query_map(params![fts, kinds, SEARCH_CANDIDATES], |r| {
                Ok((
                    r.get::<_, EntryId>(0)?,
                    r.get::<_, KnowledgeKind>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, i64>(6)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut scored: Vec<(f64, usize)> = rows
            .iter()
            .enumerate()
            .map(|(i, (_, _, _, title, body, tags, _))| (relevance(&words, title, tags, body), i))
            .collect();
        // Stable: equal scores keep the newest-first order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let limit = usize::try_from(limit).unwrap_or(20);
        Ok(scored
            .into_iter()
            .take(limit)
            .map(|(score, i)| {
                let (id, kind, slug, title, body, tags, updated_at_ms) = &rows[i];
                KnowledgeHit {
                    id: *id,
                    kind: *kind,
                    slug: slug.clone(),
                    title: title.clone(),
                    snippet: snippet(body, &words, 160),
                    tags: tags.clone(),
                    updated_at_ms: *updated_at_ms,
                    score,
                }
            })
            .collect())
    }

    /// Full-text search over entities (slug, name, kind, attributes), best first.
    pub fn search_entities(&self, text: &str, limit: u32) -> Result<Vec<EntityHit>, StoreError> {
        let Some(fts) = fts_query(text, true) else {
            return Ok(Vec::new());
        };
        let limit = if limit == 0 { 20 } else { i64::from(limit) };
        Ok(self
            .c
            .prepare_cached(
                "SELECT e.id, e.slug, e.kind, e.name, e.attributes, e.created_at_ms, e.updated_at_ms, f.rank
                 FROM (SELECT rowid, rank FROM entities_fts WHERE entities_fts MATCH ?1 ORDER BY rank LIMIT ?2) f
                 JOIN entities e ON e.id = f.rowid ORDER BY f.rank",
            )?
            .query_map(params![fts, limit], |r| Ok(EntityHit { entity: entity_from_row(r)?, rank: r.get(7)? }))?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// I19: execution targets (`host:`, `lxc:`, `vm:`) with their transport and when each was
    /// last audited (latest investigation, or entry tagged audit/update, about it).
    pub fn list_targets(&self) -> Result<Vec<Target>, StoreError> {
        let mut st = self.c.prepare_cached(&format!(
            "SELECT {ENTITY_COLS}, ({}) FROM entities WHERE kind IN ('host','lxc','vm') ORDER BY slug",
            LAST_AUDITED_SQL.replace("?1", "entities.id")
        ))?;
        let rows = st
            .query_map([], |r| {
                let entity = entity_from_row(r)?;
                let last: Option<i64> = r.get(7)?;
                Ok((entity, last))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows
            .into_iter()
            .map(|(entity, last_audited_at_ms)| Target {
                transport: entity
                    .attributes
                    .get("transport")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                entity,
                last_audited_at_ms,
            })
            .collect())
    }

    /// I19 for one entity.
    pub fn last_audited_at(&self, slug: &str) -> Result<Option<i64>, StoreError> {
        Ok(match self.entity(slug)? {
            None => None,
            Some(e) => self
                .c
                .prepare_cached(LAST_AUDITED_SQL)?
                .query_row([e.id], |r| r.get(0))?,
        })
    }

    /// Slugs of the entities a session changed, linked or wrote about (graph highlighting).
    pub fn entities_touched_by(&self, session: SessionId) -> Result<Vec<String>, StoreError> {
        Ok(self
            .c
            .prepare_cached(TOUCHED_SQL)?
            .query_map([session], |r| r.get(0))?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// The whole graph (at most `limit` nodes, 0: all) for the graph view.
    pub fn graph(&self, limit: u32) -> Result<Graph, StoreError> {
        let nodes = self.list_entities(None, limit)?;
        let edges = self
            .c
            .prepare_cached(&format!("{RELATION_SELECT} ORDER BY r.id"))?
            .query_map([], relation_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let known: std::collections::HashSet<&str> =
            nodes.iter().map(|n| n.slug.as_str()).collect();
        let edges = edges
            .into_iter()
            .filter(|e| known.contains(e.from.as_str()) && known.contains(e.to.as_str()))
            .collect();
        Ok(Graph { nodes, edges })
    }
}

fn check_secret_keys(attrs: &Map<String, Value>) -> Result<(), StoreError> {
    if let Some(k) = attrs.keys().find(|k| is_secret_name(k)) {
        return Err(StoreError::invalid(format!(
            "Attribute \"{k}\" looks like a secret. Secrets never enter the database: record where \
             the secret is kept (e.g. \"credentials_in\": \"keyring\"), not its value."
        )));
    }
    Ok(())
}

fn scrub(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(redact(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(scrub).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), scrub(v))).collect()),
        other => other.clone(),
    }
}

impl WriteTx<'_> {
    fn session_generation(&self, session: Option<SessionId>) -> Result<Option<i64>, StoreError> {
        match session {
            None => Ok(None),
            Some(s) => {
                self.reader().session(s)?;
                let (g, _) = self.reader().current_generation(s)?;
                Ok((g > 0).then_some(g))
            }
        }
    }

    /// The entity for `slug`, created (empty) if unknown. Returns `(id, created)`.
    pub(crate) fn ensure_entity(
        &self,
        slug: &Slug,
        session: Option<SessionId>,
    ) -> Result<(EntityId, bool), StoreError> {
        if let Some(id) = self
            .c
            .prepare_cached("SELECT id FROM entities WHERE slug = ?1")?
            .query_row([&slug.slug], |r| r.get(0))
            .optional()?
        {
            return Ok((id, false));
        }
        self.c
            .prepare_cached(
                "INSERT INTO entities (slug, kind, name, created_at_ms, updated_at_ms, created_by_session)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            )?
            .execute(params![slug.slug, slug.kind, slug.name, self.now, session])?;
        Ok((self.c.last_insert_rowid(), true))
    }

    /// `update_entity_attributes`: merge `attributes` into the entity (created if unknown);
    /// a `null` value removes the attribute. Every change is recorded with the session and its
    /// plan generation; the call counts as a fact write-back for I6. Attribute names that
    /// denote a secret are refused, and secret-looking values are scrubbed.
    pub fn update_entity_attributes(
        &self,
        session: Option<SessionId>,
        slug: &str,
        attributes: &Map<String, Value>,
    ) -> Result<EntityUpdate, StoreError> {
        let slug = Slug::parse(slug)?;
        check_secret_keys(attributes)?;
        let generation = self.session_generation(session)?;
        let (id, created) = self.ensure_entity(&slug, session)?;
        let current: String =
            self.c
                .query_row("SELECT attributes FROM entities WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
        let mut attrs = parse_map(&current);
        let prov = self.provenance(session, generation)?;
        let mut history = self.c.prepare_cached(
            "INSERT INTO entity_attribute_history (entity_id, key, old_value, new_value, session_id, generation, changed_at_ms,
                                                   plan_step_id, execution_id, message_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut change_ids = Vec::new();
        for (k, v) in attributes {
            let k = k.trim();
            if k.is_empty() {
                return Err(StoreError::invalid("An attribute name must not be empty"));
            }
            let v = scrub(v);
            let old = attrs.get(k).cloned();
            let new = (!v.is_null()).then_some(v);
            if old == new {
                continue;
            }
            history.execute(params![
                id,
                k,
                old.as_ref().map(Value::to_string),
                new.as_ref().map(Value::to_string),
                session,
                generation,
                self.now,
                prov.plan_step_id,
                prov.execution_id,
                prov.message_id
            ])?;
            change_ids.push(self.c.last_insert_rowid());
            match new {
                Some(v) => attrs.insert(k.to_owned(), v),
                None => attrs.remove(k),
            };
        }
        if !change_ids.is_empty() {
            self.c.execute(
                "UPDATE entities SET attributes = ?2, updated_at_ms = ?3 WHERE id = ?1",
                params![id, Value::Object(attrs).to_string(), self.now],
            )?;
        }
        if let Some(s) = session {
            self.count_fact(s, generation.or(Some(0)), Fact::Write)?;
            self.touch(s)?;
        }
        let entity = self
            .c
            .prepare_cached(&format!("SELECT {ENTITY_COLS} FROM entities WHERE id = ?1"))?
            .query_row([id], entity_from_row)?;
        let mut changes = Vec::with_capacity(change_ids.len());
        for cid in change_ids {
            changes.push(self.c.query_row(
                &format!("SELECT {CHANGE_COLS}
                 FROM entity_attribute_history h JOIN entities e ON e.id = h.entity_id WHERE h.id = ?1"),
                [cid],
                change_from_row,
            )?);
        }
        Ok(EntityUpdate {
            entity,
            created,
            changes,
        })
    }

    /// `create_relationship`: `from -kind-> to` (entities created if unknown; an existing
    /// relation gets its attributes merged). Counts as a fact write-back for I6.
    pub fn create_relationship(
        &self,
        session: Option<SessionId>,
        from: &str,
        kind: &str,
        to: &str,
        attributes: &Map<String, Value>,
    ) -> Result<Relation, StoreError> {
        let from = Slug::parse(from)?;
        let to = Slug::parse(to)?;
        let kind = non_blank("A relation kind", kind)?
            .to_ascii_lowercase()
            .replace(char::is_whitespace, "_");
        check_secret_keys(attributes)?;
        let generation = self.session_generation(session)?;
        let (fid, _) = self.ensure_entity(&from, session)?;
        let (tid, _) = self.ensure_entity(&to, session)?;
        let existing: Option<(i64, String)> = self
            .c
            .query_row(
                "SELECT id, attributes FROM relations WHERE from_entity = ?1 AND kind = ?2 AND to_entity = ?3",
                params![fid, kind, tid],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let id = match existing {
            Some((id, attrs)) => {
                let mut merged = parse_map(&attrs);
                for (k, v) in attributes {
                    if v.is_null() {
                        merged.remove(k);
                    } else {
                        merged.insert(k.clone(), scrub(v));
                    }
                }
                self.c.execute(
                    "UPDATE relations SET attributes = ?2, session_id = coalesce(?3, session_id), updated_at_ms = ?4 WHERE id = ?1",
                    params![id, Value::Object(merged).to_string(), session, self.now],
                )?;
                id
            }
            None => {
                let attrs: Map<String, Value> = attributes
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), scrub(v)))
                    .collect();
                self.c.execute(
                    "INSERT INTO relations (from_entity, kind, to_entity, attributes, session_id, created_at_ms, updated_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                    params![fid, kind, tid, Value::Object(attrs).to_string(), session, self.now],
                )?;
                self.c.last_insert_rowid()
            }
        };
        if let Some(s) = session {
            self.count_fact(s, generation.or(Some(0)), Fact::Write)?;
            self.touch(s)?;
        }
        Ok(self
            .c
            .prepare_cached(&format!("{RELATION_SELECT} WHERE r.id = ?1"))?
            .query_row([id], relation_from_row)?)
    }

    /// Remove a relation. Returns whether it existed.
    pub fn delete_relationship(
        &self,
        from: &str,
        kind: &str,
        to: &str,
    ) -> Result<bool, StoreError> {
        let from = Slug::parse(from)?;
        let to = Slug::parse(to)?;
        let n = self.c.execute(
            "DELETE FROM relations WHERE kind = ?2
               AND from_entity = (SELECT id FROM entities WHERE slug = ?1)
               AND to_entity = (SELECT id FROM entities WHERE slug = ?3)",
            params![from.slug, kind.trim().to_ascii_lowercase(), to.slug],
        )?;
        Ok(n > 0)
    }

    /// `upsert_knowledge`: create or update (same kind + slug) an entry, with tags and `about`
    /// links (entities created if unknown; links replaced by the given list when non-empty).
    /// Counts as a knowledge upsert, which is prose and not a fact write-back (I6).
    pub fn upsert_knowledge(&self, new: &NewKnowledge) -> Result<KnowledgeEntry, StoreError> {
        let title = non_blank("A knowledge title", &new.title)?;
        let slug = match new.slug.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => s.to_owned(),
            None => slugify(title),
        };
        let about: Vec<Slug> = new
            .about
            .iter()
            .map(|s| Slug::parse(s))
            .collect::<Result<_, _>>()?;
        let mut tags: Vec<String> = new.tags.iter().filter_map(|t| normalize_tag(t)).collect();
        tags.sort();
        tags.dedup();
        let tags_text = tags.join(" ");
        let generation = self.session_generation(new.session_id)?;
        let body = redact(&new.body);
        let existing: Option<EntryId> = self
            .c
            .prepare_cached("SELECT id FROM knowledge_entries WHERE kind = ?1 AND slug = ?2")?
            .query_row(params![new.kind, slug], |r| r.get(0))
            .optional()?;
        let id = match existing {
            Some(id) => {
                self.c.execute(
                    "UPDATE knowledge_entries SET title = ?2, body = ?3, tags = ?4, session_id = coalesce(?5, session_id),
                            revision = revision + 1, updated_at_ms = ?6 WHERE id = ?1",
                    params![id, title, body.as_ref(), tags_text, new.session_id, self.now],
                )?;
                self.c
                    .execute("DELETE FROM knowledge_tags WHERE entry_id = ?1", [id])?;
                if !about.is_empty() {
                    self.c
                        .execute("DELETE FROM knowledge_about WHERE entry_id = ?1", [id])?;
                }
                id
            }
            None => {
                self.c
                    .prepare_cached(
                        "INSERT INTO knowledge_entries (kind, slug, title, body, tags, session_id, created_at_ms, updated_at_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                    )?
                    .execute(params![new.kind, slug, title, body.as_ref(), tags_text, new.session_id, self.now])?;
                self.c.last_insert_rowid()
            }
        };
        {
            let mut ins = self.c.prepare_cached(
                "INSERT OR IGNORE INTO knowledge_tags (entry_id, tag) VALUES (?1, ?2)",
            )?;
            for t in &tags {
                ins.execute(params![id, t])?;
            }
        }
        for a in &about {
            let (eid, _) = self.ensure_entity(a, new.session_id)?;
            self.c
                .prepare_cached(
                    "INSERT OR IGNORE INTO knowledge_about (entry_id, entity_id) VALUES (?1, ?2)",
                )?
                .execute(params![id, eid])?;
        }
        if let Some(s) = new.session_id {
            self.count_fact(s, generation.or(Some(0)), Fact::KnowledgeUpsert)?;
            self.touch(s)?;
        }
        self.reader().knowledge_entry(id)
    }

    /// Delete a knowledge entry. Returns whether it existed.
    pub fn delete_knowledge(&self, id: EntryId) -> Result<bool, StoreError> {
        Ok(self
            .c
            .execute("DELETE FROM knowledge_entries WHERE id = ?1", [id])?
            > 0)
    }
}

impl Store {
    /// See [`WriteTx::update_entity_attributes`].
    pub fn update_entity_attributes(
        &self,
        session: Option<SessionId>,
        slug: &str,
        attributes: &Map<String, Value>,
    ) -> Result<EntityUpdate, StoreError> {
        self.write(|w| w.update_entity_attributes(session, slug, attributes))
    }
    /// See [`WriteTx::create_relationship`].
    pub fn create_relationship(
        &self,
        session: Option<SessionId>,
        from: &str,
        kind: &str,
        to: &str,
        attributes: &Map<String, Value>,
    ) -> Result<Relation, StoreError> {
        self.write(|w| w.create_relationship(session, from, kind, to, attributes))
    }
    /// See [`WriteTx::delete_relationship`].
    pub fn delete_relationship(
        &self,
        from: &str,
        kind: &str,
        to: &str,
    ) -> Result<bool, StoreError> {
        self.write(|w| w.delete_relationship(from, kind, to))
    }
    /// See [`WriteTx::upsert_knowledge`].
    pub fn upsert_knowledge(&self, new: &NewKnowledge) -> Result<KnowledgeEntry, StoreError> {
        self.write(|w| w.upsert_knowledge(new))
    }
    /// See [`WriteTx::delete_knowledge`].
    pub fn delete_knowledge(&self, id: EntryId) -> Result<bool, StoreError> {
        self.write(|w| w.delete_knowledge(id))
    }
    /// See [`Reader::entity`].
    pub fn get_entity(&self, slug: &str) -> Result<Option<Entity>, StoreError> {
        self.read(|r| r.entity(slug))
    }
    /// See [`Reader::entity_detail`].
    pub fn entity_detail(
        &self,
        slug: &str,
        history_limit: u32,
    ) -> Result<Option<EntityDetail>, StoreError> {
        self.read(|r| r.entity_detail(slug, history_limit))
    }
    /// See [`Reader::list_entities`].
    pub fn list_entities(&self, kind: Option<&str>, limit: u32) -> Result<Vec<Entity>, StoreError> {
        self.read(|r| r.list_entities(kind, limit))
    }
    /// See [`Reader::attribute_history`].
    pub fn attribute_history(&self, slug: &str) -> Result<Vec<AttributeChange>, StoreError> {
        self.read(|r| r.attribute_history(slug))
    }
    /// See [`Reader::relations_of`].
    pub fn relations_of(&self, slug: &str) -> Result<Vec<Relation>, StoreError> {
        self.read(|r| r.relations_of(slug))
    }
    /// See [`Reader::knowledge_entry`].
    pub fn get_knowledge(&self, id: EntryId) -> Result<KnowledgeEntry, StoreError> {
        self.read(|r| r.knowledge_entry(id))
    }
    /// See [`Reader::knowledge_by_slug`].
    pub fn knowledge_by_slug(
        &self,
        kind: KnowledgeKind,
        slug: &str,
    ) -> Result<Option<KnowledgeEntry>, StoreError> {
        self.read(|r| r.knowledge_by_slug(kind, slug))
    }
    /// See [`Reader::knowledge_about`].
    pub fn knowledge_about(
        &self,
        slug: &str,
        limit: u32,
    ) -> Result<Vec<KnowledgeEntry>, StoreError> {
        self.read(|r| r.knowledge_about(slug, limit))
    }
    /// See [`Reader::search_knowledge`].
    pub fn search_knowledge(&self, q: &KnowledgeQuery) -> Result<Vec<KnowledgeHit>, StoreError> {
        self.read(|r| r.search_knowledge(q))
    }
    /// See [`Reader::search_entities`].
    pub fn search_entities(&self, text: &str, limit: u32) -> Result<Vec<EntityHit>, StoreError> {
        self.read(|r| r.search_entities(text, limit))
    }
    /// See [`Reader::list_targets`].
    pub fn list_targets(&self) -> Result<Vec<Target>, StoreError> {
        self.read(|r| r.list_targets())
    }
    /// See [`Reader::last_audited_at`].
    pub fn last_audited_at(&self, slug: &str) -> Result<Option<i64>, StoreError> {
        self.read(|r| r.last_audited_at(slug))
    }
    /// See [`Reader::entities_touched_by`].
    pub fn entities_touched_by(&self, session: SessionId) -> Result<Vec<String>, StoreError> {
        self.read(|r| r.entities_touched_by(session))
    }
    /// See [`Reader::graph`].
    pub fn graph(&self, limit: u32) -> Result<Graph, StoreError> {
        self.read(|r| r.graph(limit))
    }
}

// ---- Graph view: bounded slices, provenance, dependents, staleness -------------------------

/// A graph slice returns at most this many nodes, whatever is asked.
pub const MAX_SLICE_NODES: u32 = 10_000;
/// A graph slice returns at most this many edges, whatever is asked.
pub const MAX_SLICE_EDGES: u32 = 50_000;
/// Relation kinds that point from a container to what it holds (`host:a hosts lxc:b`): their
/// destination depends on their source. Every other kind points from the dependent to what it
/// depends on (`service:nginx runs_on host:web-01`, `app depends_on db`).
pub const CONTAINS_KINDS: &[&str] = &["hosts", "contains", "runs", "serves"];

/// What [`Reader::graph_slice`] selects. Nodes are chosen by `focus` (its neighbourhood), else
/// by `search` (entity full-text hits), else every entity in id order from `after`; `kinds`
/// and `tag` then filter them (the focus itself always stays).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphSliceQuery {
    /// Only entities of these kinds (empty: all).
    pub kinds: Vec<String>,
    /// Only entities a knowledge entry with this tag is about.
    pub tag: Option<String>,
    /// The neighbourhood of this entity (slug).
    pub focus: Option<String>,
    /// Depth of the neighbourhood, 1–3 (clamped).
    pub depth: u8,
    /// Entities matching these words (prefix on the last word).
    pub search: Option<String>,
    /// Page: entities with an id above this (the slice's `next_after`).
    pub after: Option<EntityId>,
    /// At most this many nodes (0 or above [`MAX_SLICE_NODES`]: that cap).
    pub max_nodes: u32,
    /// At most this many edges (0 or above [`MAX_SLICE_EDGES`]: that cap).
    pub max_edges: u32,
}

/// A node of a slice: the entity and when it was last audited (I19).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// The entity.
    pub entity: Entity,
    /// Latest investigation or audit-tagged entry about it.
    pub last_audited_at_ms: Option<i64>,
}

/// A bounded piece of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphSlice {
    /// Nodes, by id (a focus slice: by distance from the focus, then id).
    pub nodes: Vec<GraphNode>,
    /// Relations whose two ends are both among `nodes`, by id.
    pub edges: Vec<Relation>,
    /// More nodes matched than were returned.
    pub more_nodes: bool,
    /// More edges joined the returned nodes than were returned.
    pub more_edges: bool,
    /// Ask again with `after` = this for the next page (id-ordered slices only).
    pub next_after: Option<EntityId>,
}

/// One attribute change with where it came from: the session, plan step, execution and
/// message that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttributeProvenance {
    /// The change (its ids: session, plan step, execution, message).
    pub change: AttributeChange,
    /// The session's title.
    pub session_title: Option<String>,
    /// The plan step's number in its generation.
    pub plan_step_seq: Option<i64>,
    /// The plan step's title.
    pub plan_step_title: Option<String>,
    /// The execution's command (display copy).
    pub execution_command: Option<String>,
    /// The execution's target.
    pub execution_target: Option<String>,
}

/// When an attribute last changed (staleness).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttributeAge {
    /// Attribute name.
    pub key: String,
    /// Its latest change.
    pub changed_at_ms: i64,
}

/// An entity that depends on a target, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependent {
    /// The dependent entity's slug.
    pub slug: String,
    /// Its kind.
    pub kind: String,
    /// The relation kind that makes it depend (`runs_on`, `depends_on`, `hosts`, …).
    pub relation: String,
    /// The entity it depends on through that relation (the target, or a depth-1 dependent).
    pub via: String,
    /// 1: depends on the target directly; 2: through a depth-1 dependent.
    pub depth: u8,
}

/// Dependents of a target, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependents {
    /// The target's slug.
    pub target: String,
    /// Whether the target is a known entity.
    pub known: bool,
    /// Dependents, depth 1 first, then by slug.
    pub dependents: Vec<Dependent>,
    /// More dependents than returned.
    pub more: bool,
}

/// An entity not verified since a cutoff: neither an attribute change nor an audit since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaleEntity {
    /// Slug.
    pub slug: String,
    /// Kind.
    pub kind: String,
    /// Its last change.
    pub updated_at_ms: i64,
    /// Its last audit.
    pub last_audited_at_ms: Option<i64>,
}

fn clamp_cap(asked: u32, cap: u32) -> u32 {
    if asked == 0 || asked > cap {
        cap
    } else {
        asked
    }
}

pub(crate) fn json_array<T: Serialize>(v: &[T]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".to_owned())
}

/// The filter shared by every slice mode: kinds (a JSON array, NULL for all) and tag.
const SLICE_FILTER: &str = "(?2 IS NULL OR e.kind IN (SELECT value FROM json_each(?2)))
     AND (?3 IS NULL OR e.id IN (SELECT a.entity_id FROM knowledge_tags t
                                 JOIN knowledge_about a ON a.entry_id = t.entry_id WHERE t.tag = ?3))";

/// Id-ordered page of entities (`?1`: after, `?4`: limit).
pub(crate) fn slice_page_sql(with_kinds: bool) -> String {
    // With kinds, search each kind's run of the (kind, id) index; without, the rowid range.
    let kind = if with_kinds {
        "e.kind IN (SELECT value FROM json_each(?2))"
    } else {
        "?2 IS NULL"
    };
    format!(
        "SELECT e.{} FROM entities e
         WHERE e.id > ?1 AND {kind}
           AND (?3 IS NULL OR e.id IN (SELECT a.entity_id FROM knowledge_tags t
                                       JOIN knowledge_about a ON a.entry_id = t.entry_id WHERE t.tag = ?3))
         ORDER BY e.id LIMIT ?4",
        ENTITY_COLS.replace(", ", ", e.")
    )
}

/// Entities matching a search (`?1`: FTS query, `?4`: limit).
pub(crate) const SLICE_SEARCH_SQL: &str = "SELECT e.id, e.slug, e.kind, e.name, e.attributes, e.created_at_ms, e.updated_at_ms
     FROM (SELECT rowid, rank FROM entities_fts WHERE entities_fts MATCH ?1 ORDER BY rank LIMIT 2000) f
     JOIN entities e ON e.id = f.rowid WHERE ";

/// Neighbours of one entity, both directions (`?1`: entity id).
pub(crate) const NEIGHBOURS_SQL: &str = "SELECT to_entity FROM relations WHERE from_entity = ?1
     UNION SELECT from_entity FROM relations WHERE to_entity = ?1";

/// Relations among a set of entities (`?1`: JSON array of ids, `?2`: limit).
pub(crate) const SLICE_EDGES_SQL: &str = "SELECT r.id, f.slug, r.kind, t.slug, r.attributes, r.session_id, r.created_at_ms, r.updated_at_ms
     FROM relations r JOIN entities f ON f.id = r.from_entity JOIN entities t ON t.id = r.to_entity
     WHERE r.from_entity IN (SELECT value FROM json_each(?1))
       AND r.to_entity IN (SELECT value FROM json_each(?1))
     ORDER BY r.id LIMIT ?2";

/// An entity's attribute history with provenance, newest first (`?1`: entity id, `?2`: key
/// or NULL, `?3`: before history id or NULL, `?4`: limit).
pub(crate) fn provenance_sql(with_key: bool) -> String {
    let key = if with_key { "h.key = ?2" } else { "?2 IS NULL" };
    format!(
        "SELECT {CHANGE_COLS}, s.title, p.seq, p.title, x.command, x.target
         FROM entity_attribute_history h JOIN entities e ON e.id = h.entity_id
         LEFT JOIN sessions s ON s.id = h.session_id
         LEFT JOIN plan_steps p ON p.id = h.plan_step_id
         LEFT JOIN executions x ON x.id = h.execution_id
         WHERE h.entity_id = ?1 AND {key} AND (?3 IS NULL OR h.id < ?3)
         ORDER BY h.id DESC LIMIT ?4"
    )
}

/// Latest change of each attribute of an entity (`?1`: entity id).
pub(crate) const ATTRIBUTE_AGES_SQL: &str =
    "SELECT key, max(changed_at_ms) FROM entity_attribute_history
     WHERE entity_id = ?1 GROUP BY key ORDER BY key";

/// Incoming dependency edges of an entity (`?1`: entity id, `?2`: JSON array of
/// [`CONTAINS_KINDS`], `?3`: limit).
pub(crate) const DEPENDENTS_SQL: &str =
    "SELECT d.slug, d.kind, r.kind FROM relations r JOIN entities d ON d.id = r.from_entity
     WHERE r.to_entity = ?1 AND r.kind NOT IN (SELECT value FROM json_each(?2))
     UNION
     SELECT d.slug, d.kind, r.kind FROM relations r JOIN entities d ON d.id = r.to_entity
     WHERE r.from_entity = ?1 AND r.kind IN (SELECT value FROM json_each(?2))
     ORDER BY 1 LIMIT ?3";

/// Entities not changed since `?1` and not audited since either, oldest first (`?2`: limit).
pub(crate) fn stale_sql() -> String {
    format!(
        "SELECT slug, kind, updated_at_ms, last_audit FROM (
             SELECT e.slug, e.kind, e.updated_at_ms, ({}) AS last_audit
             FROM entities e WHERE e.updated_at_ms < ?1 ORDER BY e.updated_at_ms, e.id)
         WHERE last_audit IS NULL OR last_audit < ?1 LIMIT ?2",
        LAST_AUDITED_SQL.replace("?1", "e.id")
    )
}

/// Where a fact written now comes from (store-side inference, see the migration).
#[derive(Debug, Clone, Copy, Default)]
struct Provenance {
    plan_step_id: Option<i64>,
    execution_id: Option<i64>,
    message_id: Option<i64>,
}

impl WriteTx<'_> {
    /// The running (else last started) plan step of the session's generation, its latest
    /// finished execution and its latest message: what a fact written now was learned from.
    fn provenance(
        &self,
        session: Option<SessionId>,
        generation: Option<i64>,
    ) -> Result<Provenance, StoreError> {
        let Some(s) = session else {
            return Ok(Provenance::default());
        };
        let plan_step_id = match generation {
            None => None,
            Some(g) => self
                .c
                .prepare_cached(
                    "SELECT id FROM plan_steps WHERE session_id = ?1 AND generation = ?2
                       AND started_at_ms IS NOT NULL
                     ORDER BY status = 'running' DESC, started_at_ms DESC, seq DESC LIMIT 1",
                )?
                .query_row(params![s, g], |r| r.get(0))
                .optional()?,
        };
        let execution_id = self
            .c
            .prepare_cached(
                "SELECT id FROM executions WHERE session_id = ?1 AND finished_at_ms IS NOT NULL
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([s], |r| r.get(0))
            .optional()?;
        // Message ids are session_id << 32 | n: the session's messages are one rowid range.
        let lo = s.checked_shl(32).unwrap_or(i64::MAX);
        let message_id = self
            .c
            .prepare_cached("SELECT max(id) FROM messages WHERE id BETWEEN ?1 AND ?2")?
            .query_row(params![lo, lo.saturating_add(0xffff_ffff)], |r| r.get(0))?;
        Ok(Provenance {
            plan_step_id,
            execution_id,
            message_id,
        })
    }
}

impl Reader<'_> {
    /// A bounded piece of the graph for the graph view (see [`GraphSliceQuery`]).
    pub fn graph_slice(&self, q: &GraphSliceQuery) -> Result<GraphSlice, StoreError> {
        let max_nodes = clamp_cap(q.max_nodes, MAX_SLICE_NODES);
        let max_edges = clamp_cap(q.max_edges, MAX_SLICE_EDGES);
        let kinds: Vec<String> = q
            .kinds
            .iter()
            .map(|k| k.trim().to_ascii_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        let kinds_json = (!kinds.is_empty()).then(|| json_array(&kinds));
        let tag = q.tag.as_deref().and_then(normalize_tag);
        let take = i64::from(max_nodes) + 1;
        let mut next_after = None;
        let (nodes, more_nodes) = if let Some(focus) = q.focus.as_deref() {
            self.neighbourhood(
                focus,
                q.depth,
                kinds_json.as_deref(),
                tag.as_deref(),
                max_nodes,
            )?
        } else if let Some(text) = q.search.as_deref() {
            let Some(fts) = fts_query(text, true) else {
                return Ok(GraphSlice {
                    nodes: Vec::new(),
                    edges: Vec::new(),
                    more_nodes: false,
                    more_edges: false,
                    next_after: None,
                });
            };
            let mut rows = self
                .c
                .prepare_cached(&format!(
                    "{SLICE_SEARCH_SQL}{SLICE_FILTER} ORDER BY f.rank LIMIT ?4"
                ))?
                .query_map(params![fts, kinds_json, tag, take], entity_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            let more = rows.len() > max_nodes as usize;
            rows.truncate(max_nodes as usize);
            (rows, more)
        } else {
            let mut rows = self
                .c
                .prepare_cached(&slice_page_sql(kinds_json.is_some()))?
                .query_map(
                    params![q.after.unwrap_or(0), kinds_json, tag, take],
                    entity_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            let more = rows.len() > max_nodes as usize;
            rows.truncate(max_nodes as usize);
            if more {
                next_after = rows.last().map(|e| e.id);
            }
            (rows, more)
        };
        let (out, edges, more_edges) = self.with_edges(nodes, max_edges)?;
        Ok(GraphSlice {
            nodes: out,
            edges,
            more_nodes,
            more_edges,
            next_after,
        })
    }

    /// `nodes` with when each was last audited, and the relations among them (at most
    /// `max_edges`, and whether more were left out): the drawable graph of a node list.
    pub(crate) fn with_edges(
        &self,
        nodes: Vec<Entity>,
        max_edges: u32,
    ) -> Result<(Vec<GraphNode>, Vec<Relation>, bool), StoreError> {
        let ids: Vec<EntityId> = nodes.iter().map(|e| e.id).collect();
        let mut edges = self
            .c
            .prepare_cached(SLICE_EDGES_SQL)?
            .query_map(
                params![json_array(&ids), i64::from(max_edges) + 1],
                relation_from_row,
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let more_edges = edges.len() > max_edges as usize;
        edges.truncate(max_edges as usize);
        let mut audited = self.c.prepare_cached(LAST_AUDITED_SQL)?;
        let mut out = Vec::with_capacity(nodes.len());
        for entity in nodes {
            let last_audited_at_ms = audited.query_row([entity.id], |r| r.get(0))?;
            out.push(GraphNode {
                entity,
                last_audited_at_ms,
            });
        }
        Ok((out, edges, more_edges))
    }

    /// Breadth-first neighbourhood of `focus` (depth 1–3), at most `max` nodes; the filter
    /// applies to every node but the focus (a filtered-out node is not walked through).
    fn neighbourhood(
        &self,
        focus: &str,
        depth: u8,
        kinds_json: Option<&str>,
        tag: Option<&str>,
        max: u32,
    ) -> Result<(Vec<Entity>, bool), StoreError> {
        let Some(root) = self.entity(focus)? else {
            return Err(StoreError::not_found("entity", focus.trim()));
        };
        let depth = depth.clamp(1, 3);
        let max = max as usize;
        let mut seen = std::collections::HashSet::from([root.id]);
        let mut order = vec![root];
        let mut frontier = vec![order[0].id];
        let mut more = false;
        let mut neighbours = self.c.prepare_cached(NEIGHBOURS_SQL)?;
        let mut load = self.c.prepare_cached(&format!(
            "SELECT e.{} FROM entities e WHERE e.id = ?1 AND {SLICE_FILTER}",
            ENTITY_COLS.replace(", ", ", e.")
        ))?;
        'walk: for _ in 0..depth {
            let mut next = Vec::new();
            for id in frontier {
                let ids = neighbours
                    .query_map([id], |r| r.get::<_, EntityId>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                for n in ids {
                    if !seen.insert(n) {
                        continue;
                    }
                    let Some(e) = load
                        .query_row(params![n, kinds_json, tag], entity_from_row)
                        .optional()?
                    else {
                        continue;
                    };
                    if order.len() == max {
                        more = true;
                        break 'walk;
                    }
                    next.push(e.id);
                    order.push(e);
                }
            }
            frontier = next;
        }
        Ok((order, more))
    }

    /// An entity's attribute changes with provenance, newest first: all keys or one, `limit`
    /// rows (0: 50) before the history id `before`.
    pub fn attribute_provenance(
        &self,
        slug: &str,
        key: Option<&str>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AttributeProvenance>, StoreError> {
        let Some(e) = self.entity(slug)? else {
            return Ok(Vec::new());
        };
        let limit = if limit == 0 {
            50
        } else {
            i64::from(limit.min(1000))
        };
        let key = key.map(str::trim).filter(|k| !k.is_empty());
        Ok(self
            .c
            .prepare_cached(&provenance_sql(key.is_some()))?
            .query_map(params![e.id, key, before, limit], |r| {
                Ok(AttributeProvenance {
                    change: change_from_row(r)?,
                    session_title: r.get(11)?,
                    plan_step_seq: r.get(12)?,
                    plan_step_title: r.get(13)?,
                    execution_command: r.get(14)?,
                    execution_target: r.get(15)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// When each attribute of an entity last changed, by key.
    pub fn attribute_ages(&self, slug: &str) -> Result<Vec<AttributeAge>, StoreError> {
        let Some(e) = self.entity(slug)? else {
            return Ok(Vec::new());
        };
        Ok(self
            .c
            .prepare_cached(ATTRIBUTE_AGES_SQL)?
            .query_map([e.id], |r| {
                Ok(AttributeAge {
                    key: r.get(0)?,
                    changed_at_ms: r.get(1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// What depends on a target, to depth 2: entities with a relation pointing to it (`runs_on`,
    /// `depends_on`, …) or that it contains ([`CONTAINS_KINDS`]), then theirs. At most `limit`
    /// (0: 100).
    pub fn dependents(&self, slug: &str, limit: u32) -> Result<Dependents, StoreError> {
        let parsed = Slug::parse(slug)?;
        let limit = if limit == 0 { 100 } else { limit.min(1000) } as usize;
        let Some(root) = self.entity(&parsed.slug)? else {
            return Ok(Dependents {
                target: parsed.slug,
                known: false,
                dependents: Vec::new(),
                more: false,
            });
        };
        let contains = json_array(CONTAINS_KINDS);
        let mut st = self.c.prepare_cached(DEPENDENTS_SQL)?;
        let mut id_of = self
            .c
            .prepare_cached("SELECT id FROM entities WHERE slug = ?1")?;
        let cap = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let mut seen = std::collections::HashSet::from([root.slug.clone()]);
        let mut out: Vec<Dependent> = Vec::new();
        let mut more = false;
        let mut level = vec![(root.id, root.slug.clone())];
        for depth in 1..=2u8 {
            let mut next = Vec::new();
            for (id, via) in &level {
                let rows = st
                    .query_map(params![id, contains, cap], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                        ))
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                for (dslug, kind, relation) in rows {
                    if !seen.insert(dslug.clone()) {
                        continue;
                    }
                    if out.len() == limit {
                        more = true;
                        break;
                    }
                    if depth < 2 {
                        let did: EntityId = id_of.query_row([&dslug], |r| r.get(0))?;
                        next.push((did, dslug.clone()));
                    }
                    out.push(Dependent {
                        slug: dslug,
                        kind,
                        relation,
                        via: via.clone(),
                        depth,
                    });
                }
            }
            level = next;
        }
        Ok(Dependents {
            target: root.slug,
            known: true,
            dependents: out,
            more,
        })
    }

    /// Entities neither changed nor audited since `cutoff_ms`, oldest first, at most `limit`
    /// (0: 100).
    pub fn stale_entities(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> Result<Vec<StaleEntity>, StoreError> {
        let limit = if limit == 0 {
            100
        } else {
            i64::from(limit.min(10_000))
        };
        Ok(self
            .c
            .prepare_cached(&stale_sql())?
            .query_map(params![cutoff_ms, limit], |r| {
                Ok(StaleEntity {
                    slug: r.get(0)?,
                    kind: r.get(1)?,
                    updated_at_ms: r.get(2)?,
                    last_audited_at_ms: r.get(3)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?)
    }
}

impl Store {
    /// See [`Reader::graph_slice`].
    pub fn graph_slice(&self, q: &GraphSliceQuery) -> Result<GraphSlice, StoreError> {
        self.read(|r| r.graph_slice(q))
    }
    /// See [`Reader::attribute_provenance`].
    pub fn attribute_provenance(
        &self,
        slug: &str,
        key: Option<&str>,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AttributeProvenance>, StoreError> {
        self.read(|r| r.attribute_provenance(slug, key, before, limit))
    }
    /// See [`Reader::attribute_ages`].
    pub fn attribute_ages(&self, slug: &str) -> Result<Vec<AttributeAge>, StoreError> {
        self.read(|r| r.attribute_ages(slug))
    }
    /// See [`Reader::dependents`].
    pub fn dependents(&self, slug: &str, limit: u32) -> Result<Dependents, StoreError> {
        self.read(|r| r.dependents(slug, limit))
    }
    /// See [`Reader::stale_entities`].
    pub fn stale_entities(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> Result<Vec<StaleEntity>, StoreError> {
        self.read(|r| r.stale_entities(cutoff_ms, limit))
    }
}

#[cfg(test)]
pub(crate) mod plan_tests {
    //! `EXPLAIN QUERY PLAN` of every graph-view query on a real database file: each reads its
    //! tables through an index (no full scan of a table, no sort of a whole table).
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The plan of `sql` (with `n` NULL parameters) as its detail lines.
    pub(crate) fn plan(store: &Store, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<String> {
        store
            .read(|r| {
                let mut st = r.c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                let rows = st
                    .query_map(params, |row| row.get::<_, String>(3))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .unwrap()
    }

    /// Fails unless the plan searches `table` through an index (or its rowid) and nothing
    /// scans a table in full: a SCAN is allowed only over a virtual table (a bound JSON array,
    /// an FTS index) or one of `derived` (subquery results already bounded by a LIMIT).
    pub(crate) fn assert_indexed(what: &str, table: &str, lines: &[String], derived: &[&str]) {
        let all = lines.join("\n");
        for l in lines {
            let words: Vec<&str> = l.split_whitespace().collect();
            if let ["SCAN", name, ..] = words.as_slice() {
                let ok = l.contains("VIRTUAL TABLE")
                    || l.contains("USING INDEX")
                    || l.contains("USING COVERING INDEX")
                    || derived.contains(name);
                assert!(ok, "{what}: full scan `{l}` in\n{all}");
            }
        }
        let searched = lines.iter().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            matches!(w.as_slice(), ["SEARCH" | "SCAN", t, ..] if *t == table)
                && (l.contains("INDEX") || l.contains("PRIMARY KEY"))
        });
        assert!(
            searched,
            "{what}: `{table}` is not read through an index in\n{all}"
        );
    }

    /// Fails when the plan sorts rows (a temporary B-tree for ORDER BY).
    pub(crate) fn assert_no_sort(what: &str, lines: &[String]) {
        assert!(
            !lines.iter().any(|l| l.contains("TEMP B-TREE FOR ORDER BY")),
            "{what}: sorts in\n{}",
            lines.join("\n")
        );
    }

    pub(crate) fn disk_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_dir(dir.path()).unwrap();
        (dir, store)
    }

    type P<'a> = Vec<&'a dyn rusqlite::ToSql>;
    /// What, the table that must be searched, SQL, parameters, derived scans allowed, ordered.
    type Case<'a> = (&'a str, &'a str, String, P<'a>, &'a [&'a str], bool);

    #[test]
    fn every_graph_query_reads_through_an_index() {
        let (_d, s) = disk_store();
        let none: Option<String> = None;
        let null: Option<i64> = None;
        let kinds = Some(r#"["host","lxc"]"#.to_owned());
        let tag = Some("audit".to_owned());
        let ids = r#"[1,2,3]"#.to_owned();
        let contains = json_array(CONTAINS_KINDS);
        let key = Some("version".to_owned());
        let search_sql = format!("{SLICE_SEARCH_SQL}{SLICE_FILTER} ORDER BY f.rank LIMIT ?4");
        let load_sql = format!("SELECT e.id FROM entities e WHERE e.id = ?1 AND {SLICE_FILTER}");
        let cases: Vec<Case<'_>> = vec![
            (
                "page, all kinds",
                "e",
                slice_page_sql(false),
                vec![&0i64, &none, &none, &10i64],
                &[],
                true,
            ),
            (
                "page, by kind and tag",
                "e",
                slice_page_sql(true),
                vec![&0i64, &kinds, &tag, &10i64],
                &[],
                false,
            ),
            (
                "search hits",
                "e",
                search_sql,
                vec![&"web*", &kinds, &tag, &10i64],
                &["f"],
                false,
            ),
            (
                "neighbours",
                "relations",
                NEIGHBOURS_SQL.to_owned(),
                vec![&1i64],
                &[],
                false,
            ),
            (
                "neighbour filter",
                "e",
                load_sql,
                vec![&1i64, &kinds, &tag],
                &[],
                false,
            ),
            (
                "slice edges",
                "r",
                SLICE_EDGES_SQL.to_owned(),
                vec![&ids, &10i64],
                &[],
                false,
            ),
            (
                "provenance, all keys",
                "h",
                provenance_sql(false),
                vec![&1i64, &none, &null, &10i64],
                &[],
                true,
            ),
            (
                "provenance, one key",
                "h",
                provenance_sql(true),
                vec![&1i64, &key, &null, &10i64],
                &[],
                false,
            ),
            (
                "attribute ages",
                "entity_attribute_history",
                ATTRIBUTE_AGES_SQL.to_owned(),
                vec![&1i64],
                &[],
                true,
            ),
            (
                "dependents",
                "r",
                DEPENDENTS_SQL.to_owned(),
                vec![&1i64, &contains, &10i64],
                &[],
                false,
            ),
            ("stale", "e", stale_sql(), vec![&1i64, &10i64], &[], true),
            (
                "last audited",
                "a",
                LAST_AUDITED_SQL.to_owned(),
                vec![&1i64],
                &[],
                true,
            ),
            (
                "touched by a session",
                "relations",
                TOUCHED_SQL.to_owned(),
                vec![&1i64],
                &[],
                false,
            ),
        ];
        for (what, table, sql, params, derived, ordered) in cases {
            let lines = plan(&s, &sql, &params);
            assert_indexed(what, table, &lines, derived);
            if ordered {
                assert_no_sort(what, &lines);
            }
        }
    }
}
