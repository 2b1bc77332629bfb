//! The kinds of resource monform manages, and a value of any kind.

use serde::Serialize;
use serde_json::Value;

use crate::resources::*;

/// Declares `Kind`, `Resource` and their per-kind tables from one list, so a
/// new kind is added in exactly one place.
macro_rules! kinds {
    ($($kind:ident($ty:ty) = $section:literal, $identity:expr;)+) => {
        /// A kind of resource: one top-level section of a resource file.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Kind { $($kind,)+ }

        impl Kind {
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),+];

            /// The section name in resource files and the first part of an address.
            pub fn section(self) -> &'static str {
                match self { $(Kind::$kind => $section,)+ }
            }

            /// How monform recognises its objects of this kind in the account.
            pub fn identity(self) -> Identity {
                match self { $(Kind::$kind => $identity,)+ }
            }

            pub(crate) fn schema(self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                match self { $(Kind::$kind => generator.subschema_for::<$ty>(),)+ }
            }
        }

        /// A resource of any kind, with defaults filled in.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Resource { $($kind($ty),)+ }

        impl Resource {
            pub fn kind(&self) -> Kind {
                match self { $(Resource::$kind(_) => Kind::$kind,)+ }
            }

            /// Builds a resource from its (already schema-checked) JSON form.
            pub fn from_json(kind: Kind, value: Value) -> Result<Resource, serde_json::Error> {
                if kind == Kind::Check {
                    return crate::resources::stored::check_from_value(&value).map(Resource::Check);
                }
                Ok(match kind { $(Kind::$kind => Resource::$kind(serde_json::from_value(value)?),)+ })
            }

            /// The parse cache's form: a check's as `resources::stored`
            /// writes it (read back several times faster), any other kind's
            /// JSON form. Raw JSON as serde_json wrote it: the cache embeds
            /// it in its entry without parsing it again to check it.
            pub fn to_stored(&self) -> Box<serde_json::value::RawValue> {
                if let Resource::Check(check) = self {
                    return crate::resources::stored::check_to_raw(check);
                }
                let result = match self { $(Resource::$kind(r) => serde_json::value::to_raw_value(r),)+ };
                // Plain data: serializing cannot fail (and null reads back as nothing).
                result.unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned())
            }

            /// A resource from [`Resource::to_stored`]'s text.
            pub fn from_stored_str(kind: Kind, text: &str) -> Result<Resource, serde_json::Error> {
                let mut deserializer = serde_json::Deserializer::from_str(text);
                let resource = Resource::from_stored(kind, &mut deserializer)?;
                deserializer.end()?;
                Ok(resource)
            }

            /// As `from_stored_str`, from a deserializer in the middle of
            /// a larger text (the parse cache reads each resource of an
            /// entry in place, not as text to parse again).
            pub fn from_stored<'de, D: serde::Deserializer<'de>>(kind: Kind, deserializer: D) -> Result<Resource, D::Error> {
                use serde::Deserialize as _;
                if kind == Kind::Check {
                    return crate::resources::stored::check_from_stored(deserializer).map(Resource::Check);
                }
                Ok(match kind { $(Kind::$kind => Resource::$kind(<$ty>::deserialize(deserializer)?),)+ })
            }

            /// `to_json` as text.
            pub fn to_json_string(&self) -> String {
                let result = match self { $(Resource::$kind(r) => serde_json::to_string(r),)+ };
                // Serializing plain data structs cannot fail.
                result.unwrap_or_default()
            }

            /// The canonical JSON form: every defaulted field present, unset optional fields absent.
            /// Its serde form is this one (the policies' input serializes a resource straight into
            /// the interpreter's values through [`Resource`]'s `Serialize`).
            pub fn to_json(&self) -> Value {
                let result = match self { $(Resource::$kind(r) => serde_json::to_value(r),)+ };
                // Serializing plain data structs to a Value cannot fail.
                result.unwrap_or(Value::Null)
            }
        }

        /// The resource as [`Resource::to_json`] has it (the variant's own
        /// fields, not a tagged enum).
        impl Serialize for Resource {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self { $(Resource::$kind(r) => r.serialize(serializer),)+ }
            }
        }
    };
}

kinds! {
    Check(Check) = "checks", Identity::OwnershipTag;
    Group(Group) = "groups", Identity::OwnershipTag;
    Snippet(Snippet) = "snippets", Identity::NaturalKey("name");
    Variable(Variable) = "variables", Identity::LogicalId;
    AlertChannel(AlertChannel) = "alertChannels", Identity::NaturalKey("type and address, url, number or channel");
    MaintenanceWindow(MaintenanceWindow) = "maintenanceWindows", Identity::OwnershipTag;
    StatusPage(StatusPage) = "statusPages", Identity::NaturalKey("url");
    StatusPageService(StatusPageService) = "statusPageServices", Identity::NaturalKey("name");
    Dashboard(Dashboard) = "dashboards", Identity::OwnershipTag;
    PrivateLocation(PrivateLocation) = "privateLocations", Identity::NaturalKey("slugName");
    Slo(Slo) = "slos", Identity::LogicalId;
}

impl Kind {
    /// The kinds that live in the service (every kind but the local ones):
    /// what the fetcher lists and the executor sends.
    pub const REMOTE: &'static [Kind] = &[
        Kind::Check,
        Kind::Group,
        Kind::Snippet,
        Kind::Variable,
        Kind::AlertChannel,
        Kind::MaintenanceWindow,
        Kind::StatusPage,
        Kind::StatusPageService,
        Kind::Dashboard,
        Kind::PrivateLocation,
    ];

    /// A monform-only kind the service has no API for (`slos`): its objects
    /// live in the state alone; a plan compares them with what the state
    /// recorded as applied, and an apply only records them.
    pub fn is_local(self) -> bool {
        matches!(self, Kind::Slo)
    }

    pub fn from_section(section: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.section() == section)
    }

    /// Section names, for "did you mean" and error messages.
    pub fn sections() -> impl Iterator<Item = &'static str> {
        Kind::ALL.iter().map(|k| k.section())
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.section())
    }
}

/// The start of an ownership tag, `monform:<project>/<logical-id>`.
pub const OWNERSHIP_TAG_PREFIX: &str = "monform:";

/// The `<project>/<logical-id>` of the first ownership tag among `tags`.
pub fn ownership_in_tags<'t>(tags: impl IntoIterator<Item = &'t str>) -> Option<(&'t str, &'t str)> {
    tags.into_iter()
        .find_map(|tag| tag.strip_prefix(OWNERSHIP_TAG_PREFIX)?.split_once('/'))
}

/// How a remote object is matched to a resource in the files (design decision 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// A tag `monform:<project>/<logical-id>` written on apply.
    OwnershipTag,
    /// The logical id is the object's key (variables).
    LogicalId,
    /// A field (or fields, described here) that is unique in the account.
    NaturalKey(&'static str),
}

impl Resource {
    /// `preventDestroy: true` in the files.
    pub fn prevent_destroy(&self) -> bool {
        self.to_json()
            .get("preventDestroy")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}
