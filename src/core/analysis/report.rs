//! `icegate report`: one self-contained HTML page for access reviews. Per catalog, a matrix of
//! subjects × objects whose cells hold each right's effective state (allow, deny, owner) and
//! its `via`; against an older policy, what each subject gains and loses. The states are the
//! evaluator's, asked as `diff` asks them; the page (report.html) only draws them.

use super::access::{Answer, Holder, Right, State, SubjectRef};
use super::diff::Targets;
use super::reach::{Asking, Facts, Universe, role_names};
use super::restricted::reaches_data;
use crate::core::policy::Snapshot;
use crate::core::policy::model::ObjectType;
use serde_json::{Value, json};

const PAGE: &str = include_str!("report.html");
const DATA_MARK: &str = "/*REPORT_DATA*/null";

/// A policy to report on, and how the page names it.
#[derive(Clone, Copy, Debug)]
pub struct Labelled<'a> {
    pub snapshot: &'a Snapshot,
    pub label: &'a str,
}

/// The page for `new`, showing changes from `old` when given.
pub fn render(new: Labelled<'_>, old: Option<Labelled<'_>>) -> String {
    let data = data(new, old).to_string();
    // Inside a <script> element only `</script` or `<!--` could end the JSON early; escaping
    // every `<`, `>` and `&` keeps any name the policy holds inert.
    let data = data.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026");
    PAGE.replacen(DATA_MARK, &data, 1)
}

fn state_json(answer: &Answer, right: Right) -> Value {
    let state = match (answer.state, right) {
        (State::Allow, Right::Owner) => "owner",
        (s, _) => s.as_str(),
    };
    json!([state, answer.via.as_ref().map(|v| v.text())])
}

/// What the page draws, as the JSON it embeds: `subjects`, `objects`, per catalog `sections`,
/// and `cells` as `[subject, object, [[right, [state, via], [state before, via]?], ...]]`
/// for every right whose state is not `none` (before or after).
pub fn data(new: Labelled<'_>, old: Option<Labelled<'_>>) -> Value {
    let snaps: Vec<&Snapshot> = std::iter::once(new.snapshot).chain(old.map(|o| o.snapshot)).collect();
    let universe = Universe::new(&snaps, Asking::Grantable);
    let facts_new = Facts::new(new.snapshot);
    let facts_old = old.map(|o| Facts::new(o.snapshot));
    let mut subjects = facts_new.subjects.clone();
    if let Some(f) = &facts_old {
        subjects.extend(f.subjects.iter().cloned());
    }
    let mut targets_new = Targets::new(new.snapshot, &universe);
    let mut targets_old = old.map(|o| Targets::new(o.snapshot, &universe));
    let mut cells = Vec::new();
    let mut subject_rows = Vec::with_capacity(subjects.len());
    for (s_idx, subject) in subjects.iter().enumerate() {
        subject_rows.push(subject_json(new.snapshot, subject));
        let h_new = Holder::new(new.snapshot, subject);
        let mut asked = Vec::new();
        universe.reached_by_roles(&facts_new, &role_names(new.snapshot, &h_new), &mut asked);
        universe.reached_by_owned(&facts_new.owned(subject, &h_new), &mut asked);
        let h_old = old.map(|o| Holder::new(o.snapshot, subject));
        if let (Some(o), Some(f), Some(h)) = (old, &facts_old, &h_old) {
            universe.reached_by_roles(f, &role_names(o.snapshot, h), &mut asked);
            universe.reached_by_owned(&f.owned(subject, h), &mut asked);
        }
        asked.sort_unstable_by_key(|(right, object)| (*object, *right));
        asked.dedup();
        let mut row: Vec<(u32, Vec<Value>)> = Vec::new();
        for (right, object) in asked {
            let now = targets_new.answer(&h_new, right, object);
            let before = match (&mut targets_old, &h_old) {
                (Some(t), Some(h)) => Some(t.answer(h, right, object)),
                _ => None,
            };
            if now.state == State::None && before.as_ref().is_none_or(|b| b.state == State::None) {
                continue;
            }
            let mut now_json = state_json(&now, right);
            // read-restricted access says so beside what gives it (docs/design.md §8)
            if now.state == State::Allow
                && reaches_data(right)
                && let Some(r) = targets_new.restricted(&h_new, object)
                && let Some(via) = now_json.get_mut(1)
            {
                let text = via.as_str().map_or_else(|| r.text(), |v| format!("{v}; {}", r.text()));
                *via = Value::from(text);
            }
            let mut entry = vec![Value::from(right.as_str()), now_json];
            if let Some(b) = &before {
                entry.push(state_json(b, right));
            }
            match row.last_mut() {
                Some((o, entries)) if *o == object => entries.push(Value::from(entry)),
                _ => row.push((object, vec![Value::from(entry)])),
            }
        }
        cells.extend(row.into_iter().map(|(object, entries)| json!([s_idx, object, entries])));
    }
    let objects: Vec<Value> = universe.objects.iter().map(|o| json!(o.key)).collect();
    json!({
        "title": new.label,
        "hash": new.snapshot.hash(),
        "against": old.map(|o| json!({"title": o.label, "hash": o.snapshot.hash()})),
        "metalake": new.snapshot.metalake(),
        "default_catalog": new.snapshot.catalog_for_prefix(None),
        "subjects": subject_rows,
        "objects": objects,
        "sections": sections(&universe),
        "cells": cells,
    })
}

fn subject_json(snap: &Snapshot, subject: &SubjectRef) -> Value {
    let (kind, name) = subject.json_key();
    let user = match subject {
        SubjectRef::User(u) => snap.user_id(u).map(|id| snap.user(id)),
        SubjectRef::Group(_) => None,
    };
    let defined = match subject {
        SubjectRef::User(_) => user.is_some(),
        SubjectRef::Group(g) => snap.group_id(g).is_some(),
    };
    json!({
        "id": subject.label(),
        "kind": kind,
        "name": name,
        "defined": defined,
        "disabled": user.is_some_and(|u| !u.enabled),
    })
}

/// The metalake, then one section per catalog: its objects in tree order, by full name.
fn sections(universe: &Universe) -> Vec<Value> {
    let mut by_catalog: std::collections::BTreeMap<&str, Vec<(usize, &str)>> = Default::default();
    let mut metalake = Vec::new();
    for (i, o) in universe.objects.iter().enumerate() {
        if o.key.kind == ObjectType::Metalake {
            metalake.push(i);
        } else {
            let catalog = o.key.full_name.split('.').next().unwrap_or_default();
            by_catalog.entry(catalog).or_default().push((i, &o.key.full_name));
        }
    }
    let mut out = vec![json!({"kind": "metalake", "name": "(metalake)", "objects": metalake})];
    for (catalog, mut objects) in by_catalog {
        objects.sort_by(|a, b| a.1.cmp(b.1));
        let objects: Vec<usize> = objects.into_iter().map(|(i, _)| i).collect();
        out.push(json!({"kind": "catalog", "name": catalog, "objects": objects}));
    }
    out
}
