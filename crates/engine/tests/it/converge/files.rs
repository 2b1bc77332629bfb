//! Writing a `Spec` as real files: YAML in two styles and TOML, in several
//! folders, scripts inline and as `{ file }`.

use super::*;

pub(crate) fn to_toml(value: &Value) -> toml::Value {
    match value {
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| toml::Value::Float(n.as_f64().unwrap_or(0.0)), toml::Value::Integer),
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().map(to_toml).collect()),
        Value::Object(map) => toml::Value::Table(map.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect()),
        Value::Null => toml::Value::String(String::new()),
    }
}

/// Writes scripts given as `{ file, __content }` and points `file` at them from `folder`.
pub(crate) fn place_scripts(value: &mut Value, folder: &Path, root: &Path) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(file)), Some(Value::String(content))) = (map.get("file"), map.get("__content")) {
                let path = root.join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, content).unwrap();
                let depth = folder.components().count();
                let relative = format!("{}{file}", "../".repeat(depth));
                map.remove("__content");
                map.insert("file".into(), Value::String(relative));
                return;
            }
            map.values_mut().for_each(|v| place_scripts(v, folder, root));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| place_scripts(v, folder, root)),
        _ => {}
    }
}

/// Writes the project (replacing the previous files, keeping `.monform/`).
pub(crate) fn write_project(root: &Path, spec: &Spec) {
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == ".monform" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            std::fs::remove_dir_all(entry.path()).unwrap();
        } else {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let mut project = format!("[project]\nname = \"{PROJECT}\"\n\n[state]\nbackend = \"local\"\n");
    if let Some(defaults) = &spec.defaults {
        let table = toml::to_string(&toml::Value::Table(
            [("defaults".to_owned(), to_toml(defaults))].into_iter().collect(),
        ))
        .unwrap();
        project.push('\n');
        project.push_str(&table);
    }
    std::fs::write(root.join("monform.toml"), project).unwrap();
    let mut files: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for (i, (section, _)) in SECTIONS.iter().enumerate() {
        for (slot, entry) in spec.sections[i].iter().enumerate() {
            let Some(entry) = entry else { continue };
            let folder = Path::new(FILES[entry.file]).parent().unwrap();
            let mut body = entry.body.clone();
            place_scripts(&mut body, folder, root);
            let file = files.entry(entry.file).or_default();
            let section = file
                .entry((*section).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            section[logical_id(section_name(i), slot)] = body;
        }
    }
    for (file, document) in files {
        let name = FILES[file];
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let document = Value::Object(document);
        let text = match file {
            1 => toml::to_string(&to_toml(&document)).unwrap(),
            2 => serde_json::to_string_pretty(&document).unwrap(),
            _ => serde_saphyr::to_string(&document).unwrap(),
        };
        std::fs::write(path, text).unwrap();
    }
}

pub(crate) fn section_name(i: usize) -> &'static str {
    SECTIONS[i].0
}

pub(crate) fn environment(spec: &Spec) -> HashMap<String, String> {
    spec.secrets
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("SECRET_{i}"), v.clone()))
        .collect()
}

pub(crate) fn files_of(root: &Path) -> String {
    let mut out = String::new();
    for entry in walk(root) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        out.push_str(&format!(
            "--- {}\n{text}\n",
            entry.strip_prefix(root).unwrap().display()
        ));
    }
    out
}

pub(crate) fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.file_name().is_some_and(|n| n == ".monform") {
            continue;
        }
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
