//! Writing documents as YAML and TOML in several styles (own emitters with
//! anchors, aliases, tags, block scalars, flow and inline forms; and the
//! serde-saphyr and toml serializers), and random byte edits of the text.

use super::*;

/// A small deterministic generator for style choices.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

pub(crate) fn is_plain(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && chars.all(|c| c.is_ascii_alphanumeric() || " _./-@+".contains(c))
        && !s.ends_with(' ')
}

pub(crate) fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(crate) fn float_text(f: f64, nan: &str, inf: &str) -> String {
    if f.is_nan() {
        nan.to_owned()
    } else if f.is_infinite() {
        format!("{}{inf}", if f < 0.0 { "-" } else { "" })
    } else {
        format!("{f:?}")
    }
}

/// YAML in mixed styles: block and flow, plain, quoted and block scalars,
/// anchors, comments, document markers; when `wild`, also aliases (as
/// values and keys) and tags, which change what the document means.
pub(crate) struct YamlWriter {
    pub(crate) rng: Rng,
    pub(crate) wild: bool,
    pub(crate) out: String,
    pub(crate) anchors: usize,
}

pub(crate) fn to_yaml(value: &V, seed: u64, wild: bool) -> String {
    let mut w = YamlWriter {
        rng: Rng(seed | 1),
        wild,
        out: String::new(),
        anchors: 0,
    };
    if w.rng.one_in(10) {
        w.out.push_str("%YAML 1.2\n---\n");
    } else if w.rng.one_in(6) {
        w.out.push_str("--- # start\n");
    }
    match value {
        V::Map(entries) if !entries.is_empty() && !w.rng.one_in(12) => w.block_map(entries, 0),
        V::Seq(items) if !items.is_empty() && !w.rng.one_in(12) => w.block_seq(items, 0),
        other => {
            let text = w.flow(other);
            w.out.push_str(&text);
            w.out.push('\n');
        }
    }
    if w.rng.one_in(10) {
        w.out.push_str("...\n");
    }
    w.out
}

impl YamlWriter {
    pub(crate) fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    pub(crate) fn anchor(&mut self) -> String {
        if self.rng.one_in(12) {
            self.anchors += 1;
            format!("&a{} ", self.anchors)
        } else {
            String::new()
        }
    }

    pub(crate) fn alias(&mut self) -> Option<String> {
        (self.wild && self.anchors > 0 && self.rng.one_in(15))
            .then(|| format!("*a{}", 1 + self.rng.next() as usize % self.anchors))
    }

    pub(crate) fn key(&mut self, key: &str) -> String {
        if let Some(alias) = self.alias() {
            return format!("{alias} ");
        }
        if is_plain(key) && !self.rng.one_in(8) {
            key.to_owned()
        } else if !key.contains(['\'', '\n', '\r']) && key.chars().all(|c| !c.is_control()) && self.rng.one_in(2) {
            format!("'{key}'")
        } else {
            double_quoted(key)
        }
    }

    pub(crate) fn scalar(&mut self, value: &V, in_flow: bool) -> String {
        if let Some(alias) = self.alias() {
            return alias;
        }
        let tag = match self.rng.next() % 40 {
            0 if self.wild => "!!str ",
            1 if self.wild => "!custom ",
            _ => "",
        };
        let body = match value {
            V::Null => ["null", "~", "Null"][self.rng.next() as usize % 3].to_owned(),
            V::Bool(b) => b.to_string(),
            V::Int(i) if *i >= 0 && self.rng.one_in(8) => format!("0x{i:X}"),
            V::Int(i) => i.to_string(),
            V::Float(f) => float_text(*f, ".nan", ".inf"),
            V::Raw(s) => s.clone(),
            V::Str(s) => {
                if is_plain(s) && (!in_flow || !s.contains(['[', ']', '{', '}', ','])) && self.rng.one_in(2) {
                    s.clone()
                } else if !s.contains(['\'', '\r'])
                    && s.chars().all(|c| c == '\n' || !c.is_control())
                    && self.rng.one_in(3)
                {
                    format!("'{}'", s.replace('\n', "\n\n"))
                } else {
                    double_quoted(s)
                }
            }
            V::Seq(_) | V::Map(_) => unreachable!("collections are not scalars"),
        };
        format!("{}{tag}{body}", self.anchor())
    }

    pub(crate) fn flow(&mut self, value: &V) -> String {
        match value {
            V::Seq(items) => {
                let items: Vec<String> = items.iter().map(|item| self.flow(item)).collect();
                format!("{}[{}]", self.anchor(), items.join(", "))
            }
            V::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", self.key(k), self.flow(v)))
                    .collect();
                format!("{}{{{}}}", self.anchor(), entries.join(", "))
            }
            scalar => self.scalar(scalar, true),
        }
    }

    /// A block scalar for a multi-line string, if it can be written as one.
    pub(crate) fn literal(&mut self, value: &V, indent: usize) -> Option<String> {
        let V::Str(s) = value else { return None };
        let fits = s.contains('\n')
            && !s.starts_with([' ', '\t', '\n'])
            && s.chars().all(|c| c == '\n' || !c.is_control())
            && !s.contains(['\r', '\u{feff}', '\u{85}', '\u{2028}', '\u{2029}'])
            && !s.ends_with("\n\n");
        if !fits || !self.rng.one_in(2) {
            return None;
        }
        let mut out = String::from(if s.ends_with('\n') { "|" } else { "|-" });
        for line in s.trim_end_matches('\n').split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                out.push_str(line);
            }
        }
        Some(out)
    }

    pub(crate) fn block_map(&mut self, entries: &[(String, V)], indent: usize) {
        for (k, v) in entries {
            self.indent(indent);
            let key = self.key(k);
            if self.rng.one_in(30) {
                // Explicit key.
                self.out.push_str(&format!("? {key}\n"));
                self.indent(indent);
                self.out.push(':');
            } else {
                self.out.push_str(&key);
                self.out.push(':');
            }
            self.block_value(v, indent);
        }
    }

    pub(crate) fn block_seq(&mut self, items: &[V], indent: usize) {
        for item in items {
            self.indent(indent);
            self.out.push('-');
            self.block_value(item, indent);
        }
    }

    /// After `key:` or `-`: the value, and the end of the line.
    pub(crate) fn block_value(&mut self, value: &V, indent: usize) {
        match value {
            V::Map(entries) if !entries.is_empty() && !self.rng.one_in(5) => {
                let anchor = self.anchor();
                self.out.push_str(&format!(" {}\n", anchor.trim_end()));
                self.block_map(entries, indent + 2);
            }
            V::Seq(items) if !items.is_empty() && !self.rng.one_in(5) => {
                let anchor = self.anchor();
                self.out.push_str(&format!(" {}\n", anchor.trim_end()));
                self.block_seq(items, indent + 2);
            }
            V::Null if self.rng.one_in(3) => self.out.push('\n'),
            other => {
                let text = match self.literal(other, indent) {
                    Some(text) => text,
                    None => self.flow(other),
                };
                self.out.push(' ');
                self.out.push_str(&text);
                if self.rng.one_in(20) && !text.contains('\n') {
                    self.out.push_str(" # note");
                }
                self.out.push('\n');
            }
        }
    }
}

/// TOML with tables, arrays of tables and inline values.
pub(crate) struct TomlWriter {
    pub(crate) rng: Rng,
    pub(crate) wild: bool,
    pub(crate) out: String,
}

pub(crate) fn to_toml(value: &V, seed: u64, wild: bool) -> String {
    let mut w = TomlWriter {
        rng: Rng(seed | 1),
        wild,
        out: String::new(),
    };
    match value {
        V::Map(entries) => w.table(&[], entries, None),
        other => {
            let text = w.inline(other);
            w.out.push_str(&format!("value = {text}\n"));
        }
    }
    w.out
}

impl TomlWriter {
    pub(crate) fn key(&mut self, key: &str) -> String {
        if !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !self.rng.one_in(10)
        {
            key.to_owned()
        } else if !key.contains(['\'', '\n', '\r']) && key.chars().all(|c| !c.is_control()) && self.rng.one_in(3) {
            format!("'{key}'")
        } else {
            double_quoted(key)
        }
    }

    pub(crate) fn inline(&mut self, value: &V) -> String {
        match value {
            // No null in TOML: an empty string, or the (invalid) word when wild.
            V::Null => if self.wild { "null" } else { "\"\"" }.to_owned(),
            V::Bool(b) => b.to_string(),
            V::Int(i) if *i >= 0 && self.rng.one_in(8) => format!("0x{i:x}"),
            V::Int(i) if i.unsigned_abs() > 10_000 && self.rng.one_in(4) => {
                let digits = i.unsigned_abs().to_string();
                let grouped: Vec<&str> = digits
                    .as_bytes()
                    .chunks(3)
                    .map(|c| std::str::from_utf8(c).unwrap_or("0"))
                    .collect();
                format!("{}{}", if *i < 0 { "-" } else { "" }, grouped.join("_"))
            }
            V::Int(i) => i.to_string(),
            V::Float(f) => float_text(*f, "nan", "inf"),
            V::Raw(s) => s.clone(),
            V::Str(s) => {
                if s.contains('\n')
                    && !s.contains("'''")
                    && !s.contains('\r')
                    && s.chars().all(|c| c == '\n' || !c.is_control())
                    && self.rng.one_in(2)
                {
                    format!("'''\n{s}'''")
                } else if !s.contains(['\'', '\n', '\r']) && s.chars().all(|c| !c.is_control()) && self.rng.one_in(3) {
                    format!("'{s}'")
                } else {
                    double_quoted(s)
                }
            }
            V::Seq(items) => {
                let items: Vec<String> = items.iter().map(|item| self.inline(item)).collect();
                let sep = if self.rng.one_in(5) { ",\n  " } else { ", " };
                format!("[{}]", items.join(sep))
            }
            V::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{} = {}", self.key(k), self.inline(v)))
                    .collect();
                format!("{{ {} }}", entries.join(", "))
            }
        }
    }

    pub(crate) fn header(&mut self, path: &[String]) -> String {
        let keys: Vec<String> = path.iter().map(|k| self.key(k)).collect();
        keys.join(".")
    }

    /// Key/values first, then sub-tables and arrays of tables, as TOML
    /// requires. A table whose entries are all sub-tables may go without a
    /// header of its own.
    pub(crate) fn table(&mut self, path: &[String], entries: &[(String, V)], header: Option<&str>) {
        let mut lines = Vec::new();
        let mut tables = Vec::new();
        let mut arrays = Vec::new();
        for (k, v) in entries {
            match v {
                V::Map(sub) if !self.rng.one_in(4) => tables.push((k, sub)),
                V::Seq(items)
                    if !items.is_empty() && items.iter().all(|i| matches!(i, V::Map(_))) && self.rng.one_in(2) =>
                {
                    arrays.push((k, items))
                }
                V::Null if self.rng.one_in(2) => {}
                _ => {
                    let key = self.key(k);
                    let value = self.inline(v);
                    lines.push(format!("{key} = {value}\n"));
                }
            }
        }
        if let Some(header) = header
            && (!lines.is_empty() || entries.is_empty() || self.rng.one_in(3))
        {
            self.out.push_str(&format!("\n{header}\n"));
        }
        self.out.push_str(&lines.concat());
        for (k, sub) in tables {
            let path: Vec<String> = path.iter().cloned().chain([k.clone()]).collect();
            let header = format!("[{}]", self.header(&path));
            self.table(&path, sub, Some(&header));
        }
        for (k, items) in arrays {
            let path: Vec<String> = path.iter().cloned().chain([k.clone()]).collect();
            for item in items {
                let header = format!("[[{}]]", self.header(&path));
                if let V::Map(sub) = item {
                    // An array-of-tables element always has its header.
                    self.out.push_str(&format!("\n{header}\n"));
                    self.table(&path, sub, None);
                }
            }
        }
    }
}

pub(crate) fn to_toml_value(value: &V) -> Option<toml::Value> {
    Some(match value {
        V::Null => return None,
        V::Bool(b) => toml::Value::Boolean(*b),
        V::Int(i) => toml::Value::Integer(*i),
        V::Float(f) => toml::Value::Float(*f),
        V::Str(s) | V::Raw(s) => toml::Value::String(s.clone()),
        V::Seq(items) => toml::Value::Array(items.iter().filter_map(to_toml_value).collect()),
        V::Map(entries) => toml::Value::Table(
            entries
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), to_toml_value(v)?)))
                .collect(),
        ),
    })
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Style {
    /// Own writer: style seed, and whether to use meaning-changing forms.
    YamlOwn(u64, bool),
    YamlSerde,
    TomlOwn(u64, bool),
    TomlSerde {
        pretty: bool,
    },
}

impl Style {
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Style::YamlOwn(..) | Style::YamlSerde => "yaml",
            Style::TomlOwn(..) | Style::TomlSerde { .. } => "toml",
        }
    }

    pub(crate) fn write(self, value: &V) -> String {
        match self {
            Style::YamlOwn(seed, wild) => to_yaml(value, seed, wild),
            Style::YamlSerde => serde_saphyr::to_string(value).unwrap_or_else(|_| to_yaml(value, 1, false)),
            Style::TomlOwn(seed, wild) => to_toml(value, seed, wild),
            Style::TomlSerde { pretty } => {
                let table = match to_toml_value(value) {
                    Some(toml::Value::Table(table)) => table,
                    Some(other) => toml::Table::from_iter([("value".to_owned(), other)]),
                    None => toml::Table::new(),
                };
                let text = if pretty {
                    toml::to_string_pretty(&table)
                } else {
                    toml::to_string(&table)
                };
                text.unwrap_or_else(|_| to_toml(value, 1, false))
            }
        }
    }
}

pub(crate) fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        4 => (any::<u64>(), prop::bool::weighted(0.3)).prop_map(|(seed, wild)| Style::YamlOwn(seed, wild)),
        1 => Just(Style::YamlSerde),
        3 => (any::<u64>(), prop::bool::weighted(0.3)).prop_map(|(seed, wild)| Style::TomlOwn(seed, wild)),
        1 => any::<bool>().prop_map(|pretty| Style::TomlSerde { pretty }),
    ]
}

/// Random edits of a text: deletions, insertions of tokens, duplicated spans.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Delete(Index, usize),
    Insert(Index, &'static str),
    Byte(Index, u8),
    Duplicate(Index, usize),
}

pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 1usize..12).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<Index>(), select(TOKENS)).prop_map(|(at, t)| Mutation::Insert(at, t)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::Byte(at, b)),
        (any::<Index>(), 1usize..40).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
    ]
}

pub(crate) fn mutate(text: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len();
        match m {
            Mutation::Delete(at, n) if len > 0 => {
                let start = at.index(len);
                bytes.drain(start..(start + n).min(len));
            }
            Mutation::Insert(at, token) => {
                let start = at.index(len + 1);
                bytes.splice(start..start, token.bytes());
            }
            Mutation::Byte(at, b) if len > 0 => bytes[at.index(len)] = *b,
            Mutation::Duplicate(at, n) if len > 0 => {
                let start = at.index(len);
                let copy = bytes[start..(start + n).min(len)].to_vec();
                bytes.splice(start..start, copy);
            }
            _ => {}
        }
    }
    bytes
}

pub(crate) fn lossy(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes).into_owned().into_bytes()
}
