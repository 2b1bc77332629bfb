//! The backend's tables, one list of statements per schema version.

/// The schema, one list of statements per version. Never edit a released
/// version: add one.
pub(super) const MIGRATIONS: &[&[&str]] = &[VERSION_1, VERSION_2, VERSION_3];

pub(super) const VERSION_1: &[&str] = &[
    "CREATE TABLE monform_state (
        project    text PRIMARY KEY,
        serial     bigint NOT NULL,
        body       jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL
    )",
    "CREATE TABLE monform_state_history (
        project    text NOT NULL,
        serial     bigint NOT NULL,
        body       jsonb,
        applied_at timestamptz NOT NULL DEFAULT now(),
        applied_by text NOT NULL,
        command    text NOT NULL,
        changes    text NOT NULL DEFAULT '',
        PRIMARY KEY (project, serial)
    )",
    "CREATE TABLE monform_locks (
        project     text PRIMARY KEY,
        pid         bigint NOT NULL,
        host        text NOT NULL,
        started_at  text NOT NULL,
        command     text NOT NULL,
        session_pid integer NOT NULL,
        locked_at   timestamptz NOT NULL DEFAULT now()
    )",
];

/// One row per entry, so a write touches only what changed. Each project's
/// entries move out of its body into rows; history rows keep their bodies
/// as they were (whole states), newer ones hold what their write changed.
const VERSION_2: &[&str] = &[
    "CREATE TABLE monform_state_resources (
        project text NOT NULL,
        address text NOT NULL,
        entry   jsonb NOT NULL,
        serial  bigint NOT NULL,
        PRIMARY KEY (project, address)
    )",
    "INSERT INTO monform_state_resources (project, address, entry, serial)
     SELECT s.project, r.key, r.value, s.serial
     FROM monform_state s, jsonb_each(coalesce(s.body->'resources', '{}'::jsonb)) AS r",
    "UPDATE monform_state SET body = body - 'resources'",
];

/// The calls agents made through `monform mcp` (issue 51): what, by which
/// client, on which plan hash, and how each ended.
const VERSION_3: &[&str] = &["CREATE TABLE monform_calls (
        project   text NOT NULL,
        at        timestamptz NOT NULL DEFAULT now(),
        by_user   text NOT NULL,
        client    text NOT NULL,
        tool      text NOT NULL,
        plan_hash text,
        outcome   text NOT NULL
    )"];
