//! Status pages (spec 2.11) and the services shown on them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::*;

string_enum! { DefaultTheme { Light = "LIGHT", Dark = "DARK", Auto = "AUTO" } }

/// A public (or private) status page. Its identity in the account is its `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusPage {
    #[schemars(length(min = 1))]
    pub name: String,
    /// Subdomain of the page: lower-case letters, digits and dashes.
    #[schemars(regex(pattern = crate::address::SUBDOMAIN_PATTERN), extend("x-natural-key" = true))]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme_colors: Option<ThemeColors>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_dark: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favicon: Option<String>,
    #[serde(default = "default_theme")]
    pub default_theme: DefaultTheme,
    #[serde(default)]
    pub cards: Vec<Card>,
    #[serde(default)]
    pub white_label: bool,
    #[serde(default)]
    pub is_private: bool,
    /// monform only: refuse to delete this page.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}

fn default_theme() -> DefaultTheme {
    DefaultTheme::Auto
}

/// A card groups services on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Card {
    #[schemars(length(min = 1))]
    pub name: String,
    /// Logical ids of the status page services on this card, in order.
    #[serde(default)]
    #[schemars(extend("x-ref" = "statusPageServices", "x-wire" = "services", "x-wire-shape" = "id-objects"))]
    pub services: Vec<LogicalRef>,
}

/// Colours of the light and the dark theme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThemeColors {
    pub light: Palette,
    pub dark: Palette,
}

/// Declares the palette struct from its twelve colour keys (spec 2.11).
macro_rules! palette {
    ($($field:ident),+ $(,)?) => {
        /// The twelve colours of one theme, each `#RGB` or `#RRGGBB` (upper-case hex).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct Palette {
            $(
                #[schemars(regex(pattern = r"^#([0-9A-F]{3}|[0-9A-F]{6})$"))]
                pub $field: String,
            )+
        }
    };
}

palette!(
    body_background_color,
    header_background_color,
    header_font_color,
    title_font_color,
    body_font_color,
    body_font_color_muted,
    navigation_font_color,
    link_font_color,
    card_background_color,
    border_color,
    primary_button_background_color,
    primary_button_font_color,
);

/// A service shown on status pages. Its identity in the account is its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusPageService {
    #[schemars(length(min = 1), extend("x-natural-key" = true))]
    pub name: String,
    /// monform only: refuse to delete this service.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("x-meta" = true))]
    pub prevent_destroy: bool,
    /// monform only: ignored fields and the drift policy (issue 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-meta" = true))]
    pub lifecycle: Option<Lifecycle>,
}
