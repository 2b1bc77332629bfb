//! The reconciler's log on standard error: `text` (a line a person reads)
//! or `json` (one object a line, for log shippers: `--log-format json`).

use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Copy)]
pub struct Log {
    pub format: LogFormat,
}

impl Log {
    pub fn info(&self, message: &str, fields: Value) {
        self.line("info", message, fields);
    }

    pub fn warn(&self, message: &str, fields: Value) {
        self.line("warn", message, fields);
    }

    pub fn error(&self, message: &str, fields: Value) {
        self.line("error", message, fields);
    }

    fn line(&self, level: &str, message: &str, fields: Value) {
        match self.format {
            LogFormat::Json => {
                let mut line = json!({ "time": crate::report::now(), "level": level, "message": message });
                if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
                    line.extend(fields);
                }
                eprintln!("{line}");
            }
            LogFormat::Text => {
                let extra = match fields {
                    Value::Object(fields) if !fields.is_empty() => {
                        let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect();
                        format!(" ({})", parts.join(", "))
                    }
                    _ => String::new(),
                };
                let prefix = if level == "info" {
                    String::new()
                } else {
                    format!("{level}: ")
                };
                eprintln!("{prefix}{message}{extra}");
            }
        }
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
