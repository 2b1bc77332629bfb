//! Where the cursor is in a YAML or TOML file being typed: the keys from
//! the file's root to it, whether it is at a key or a value, and the word
//! typed so far. Read from the lines around it, not from a parse: text
//! being typed rarely parses.

/// Whether the cursor is where a key goes or a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spot {
    /// A key of the map at `path`.
    Key,
    /// The value of the field at `path` (its last key), or an item of it
    /// when it is a list.
    Value,
}

/// The cursor in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Keys from the root; `[]` stands for an item of a list.
    pub path: Vec<String>,
    pub spot: Spot,
    /// The word before the cursor on its line.
    pub prefix: String,
    /// The whole word under the cursor (for hover).
    pub word: String,
    /// The text of the resource the cursor is in (its line and those
    /// below it), to read its `checkType` or `type`.
    pub block: String,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

fn line_bounds(text: &str, offset: usize) -> (usize, usize) {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    (start, end)
}

fn words(text: &str, offset: usize) -> (String, String) {
    let (start, end) = line_bounds(text, offset);
    let before = &text[start..offset];
    let prefix_start = before.rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
    let after = &text[offset..end];
    let word_end = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
    (
        before[prefix_start..].to_owned(),
        format!("{}{}", &before[prefix_start..], &after[..word_end]),
    )
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A key written at the start of `text` (`key:` or `"key":`), and what follows it.
fn yaml_key(text: &str) -> Option<(&str, &str)> {
    let (key, rest) = text.split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    (!key.is_empty() && key.chars().all(|c| is_word(c) || c == '.') && (rest.is_empty() || rest.starts_with(' ')))
        .then_some((key, rest.trim()))
}

/// What follows a key on one line (`sep` is `:` in YAML, `=` in TOML):
/// the unclosed flow collections around the cursor add their keys, and
/// the innermost decides whether a key or a value goes there.
fn flow(rest: &str, path: &mut Vec<String>, sep: char) -> Spot {
    let clean = |key: &str| key.trim().trim_matches(['"', '\'']).to_owned();
    let mut stack: Vec<(char, Option<String>)> = Vec::new();
    let mut segment = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '{' | '[' => {
                let key = rest[segment..i].split_once(sep).map(|(k, _)| clean(k));
                // The outermost is the line's key's own value.
                stack.push((c, if stack.is_empty() { None } else { key }));
                segment = i + 1;
            }
            '}' | ']' => {
                stack.pop();
                segment = i + 1;
            }
            ',' => segment = i + 1,
            _ => {}
        }
    }
    let Some(innermost) = stack.last().map(|(open, _)| *open) else {
        return Spot::Value;
    };
    let last = stack.len() - 1;
    for (i, (open, key)) in stack.into_iter().enumerate() {
        path.extend(key);
        if open == '[' && i < last {
            path.push("[]".into());
        }
    }
    if innermost == '[' {
        return Spot::Value;
    }
    match rest[segment..].split_once(sep) {
        Some((key, _)) => {
            path.push(clean(key));
            Spot::Value
        }
        None => Spot::Key,
    }
}

/// The cursor at byte `offset` of a YAML text.
pub fn yaml(text: &str, offset: usize) -> Cursor {
    let offset = floor(text, offset);
    let (start, _) = line_bounds(text, offset);
    let before = &text[start..offset];
    let (prefix, word) = words(text, offset);
    let mut own: Vec<String> = Vec::new();
    let mut limit = indent(before);
    let mut rest = before.trim_start();
    if let Some(item) = rest.strip_prefix("- ").or_else(|| (rest == "-").then_some("")) {
        own.push("[]".into());
        rest = item.trim_start();
    }
    let spot = match yaml_key(rest) {
        Some((key, value)) => {
            own.push(key.to_owned());
            flow(value, &mut own, ':')
        }
        None => Spot::Key,
    };
    // The parents: each line above less indented than what is inside it,
    // with where its line starts and its indentation.
    let mut parents: Vec<(String, usize, usize)> = Vec::new();
    let mut line_end = start;
    for line in text[..start].lines().rev() {
        let line_start = line_end.saturating_sub(line.len() + 1);
        line_end = line_start;
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if limit == 0 {
            break;
        }
        let at = indent(line);
        if at >= limit {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ") {
            // Inside this list item: its own key's map when below it.
            let key_indent = at + 2 + (item.len() - item.trim_start().len());
            if let Some((key, "")) = yaml_key(item.trim_start())
                && key_indent < limit
            {
                parents.push((key.to_owned(), line_start, at));
            }
            parents.push(("[]".into(), line_start, at));
        } else if let Some((key, _)) = yaml_key(trimmed) {
            parents.push((key.to_owned(), line_start, at));
        }
        limit = at;
    }
    parents.reverse();
    // The resource: the second key from the root (`checks:` then `home:`),
    // or this line when it is that key.
    let (block_start, block_indent) = parents
        .get(1)
        .map_or((start, indent(&text[start..offset])), |(_, at, indent)| (*at, *indent));
    let block_end = text[start..]
        .match_indices('\n')
        .map(|(i, _)| start + i + 1)
        .find(|&next| {
            let line = text[next..].lines().next().unwrap_or_default();
            !line.trim().is_empty() && indent(line) <= block_indent
        })
        .unwrap_or(text.len());
    let mut path: Vec<String> = parents.into_iter().map(|(key, _, _)| key).collect();
    path.extend(own);
    Cursor {
        path,
        spot,
        prefix,
        word,
        block: text[block_start..block_end].to_owned(),
    }
}

/// The segments of a TOML key (`a.b."c"`).
fn toml_key(key: &str) -> Vec<String> {
    key.split('.')
        .map(|s| s.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The cursor at byte `offset` of a TOML text.
pub fn toml(text: &str, offset: usize) -> Cursor {
    let offset = floor(text, offset);
    let (start, _) = line_bounds(text, offset);
    let before = text[start..offset].trim_start();
    let (prefix, word) = words(text, offset);
    let mut path: Vec<String> = Vec::new();
    let mut table = String::new();
    for line in text[..start].lines().rev() {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_prefix("[[").and_then(|h| h.split_once("]]")) {
            path = toml_key(header.0);
            path.push("[]".into());
            table = header.0.to_owned();
            break;
        }
        if let Some(header) = trimmed.strip_prefix('[').and_then(|h| h.split_once(']')) {
            path = toml_key(header.0);
            table = header.0.to_owned();
            break;
        }
    }
    let spot = match before.split_once('=') {
        Some((key, value)) => {
            path.extend(toml_key(key));
            flow(value, &mut path, '=')
        }
        None => {
            // `request.ur|`: the dotted part is a path.
            let mut keys = toml_key(before);
            if !before.ends_with('.') {
                keys.pop();
            }
            path.extend(keys);
            Spot::Key
        }
    };
    // The resource's own table: `[section.id]` and what follows it.
    let resource: Vec<String> = toml_key(&table).into_iter().take(2).collect();
    let header = format!("[{}]", resource.join("."));
    let block = text
        .find(&header)
        .map(|at| {
            let rest = &text[at + header.len()..];
            let end = rest.find("\n[").map_or(rest.len(), |i| i + 1);
            rest[..end].to_owned()
        })
        .unwrap_or_default();
    Cursor {
        path,
        spot,
        prefix,
        word,
        block,
    }
}

fn floor(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Cursor {
        let offset = text.find('|').unwrap();
        let text = text.replace('|', "");
        if text.contains(" = ") || text.contains('[') && text.trim_start().starts_with('[') {
            toml(&text, offset)
        } else {
            yaml(&text, offset)
        }
    }

    #[test]
    fn yaml_keys_values_lists_and_flow() {
        let c = at("checks:\n  home:\n    checkType: API\n    request:\n      ur|\n");
        assert_eq!(
            (c.path, c.spot, c.prefix),
            (
                vec!["checks".into(), "home".into(), "request".into()],
                Spot::Key,
                "ur".into()
            )
        );
        let c = at("checks:\n  home:\n    checkType: |\n");
        assert_eq!(
            (c.path, c.spot),
            (vec!["checks".into(), "home".into(), "checkType".into()], Spot::Value)
        );
        let c =
            at("checks:\n  home:\n    request:\n      assertions:\n        - source: STATUS_CODE\n          comp|\n");
        assert_eq!(c.path, ["checks", "home", "request", "assertions", "[]"]);
        let c = at("checks:\n  home:\n    request:\n      assertions:\n        - sou|\n");
        assert_eq!(
            (c.path, c.spot),
            (
                vec![
                    "checks".into(),
                    "home".into(),
                    "request".into(),
                    "assertions".into(),
                    "[]".into()
                ],
                Spot::Key
            )
        );
        let c = at("checks:\n  home:\n    alertChannels: [oncall, |]\n");
        assert_eq!(
            (c.path, c.spot),
            (
                vec!["checks".into(), "home".into(), "alertChannels".into()],
                Spot::Value
            )
        );
        let c = at("checks:\n  home: { checkType: API, request: { me| } }\n");
        assert_eq!(
            (c.path, c.spot),
            (vec!["checks".into(), "home".into(), "request".into()], Spot::Key)
        );
        assert!(c.block.contains("checkType: API"));
        let c = at("che|");
        assert_eq!((c.path, c.spot), (Vec::<String>::new(), Spot::Key));
    }

    #[test]
    fn toml_tables_dotted_keys_and_values() {
        let c = at("[checks.home]\ncheckType = \"API\"\n\n[checks.home.request]\nmethod = |\n");
        assert_eq!(
            (c.path, c.spot),
            (
                vec!["checks".into(), "home".into(), "request".into(), "method".into()],
                Spot::Value
            )
        );
        assert!(c.block.contains("checkType = \"API\""));
        let c = at("[checks.home]\nrequest.ur|\n");
        assert_eq!(
            (c.path, c.spot, c.prefix),
            (
                vec!["checks".into(), "home".into(), "request".into()],
                Spot::Key,
                "ur".into()
            )
        );
        let c = at("[[checks.home.request.assertions]]\nsou|\n");
        assert_eq!(c.path, ["checks", "home", "request", "assertions", "[]"]);
    }
}
