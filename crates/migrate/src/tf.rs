//! Reading one Terraform module (a folder of `*.tf` files) with hcl-edit:
//! its resources, variables, locals, outputs and module calls, each with
//! the file and line it was written at. Nothing is evaluated here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body};

use crate::MigrateError;

/// A place in the Terraform files: the file (relative to the migrated
/// folder) and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One parsed file: its text (for lines and the text of an expression).
#[derive(Debug)]
pub struct SourceFile {
    /// Relative to the migrated folder, with `/`.
    pub name: String,
    pub text: String,
}

impl SourceFile {
    /// The place of a byte offset.
    pub fn place(&self, offset: usize) -> Place {
        let end = offset.min(self.text.len());
        let line = self.text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1;
        Place {
            file: self.name.clone(),
            line,
        }
    }

    /// The place of anything hcl-edit parsed (the file's first line when it
    /// carries no span).
    pub fn place_of(&self, item: &impl Span) -> Place {
        self.place(item.span().map_or(0, |s| s.start))
    }

    /// The source text of an expression, shortened for a report.
    pub fn text_of(&self, item: &impl Span) -> String {
        let Some(range) = item.span() else {
            return String::from("(expression)");
        };
        let text = self.text.get(range).unwrap_or("").trim();
        let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.chars().count() > 80 {
            let cut: String = one_line.chars().take(77).collect();
            format!("{cut}...")
        } else {
            one_line
        }
    }
}

/// A `resource "TYPE" "NAME" { ... }` block.
#[derive(Debug)]
pub struct TfResource {
    pub kind: String,
    pub name: String,
    /// Index into `Module::files`.
    pub file: usize,
    pub place: Place,
    pub body: Body,
}

/// A `variable "NAME"` block.
#[derive(Debug)]
pub struct TfVariable {
    pub name: String,
    pub place: Place,
    pub default: Option<Expression>,
    pub sensitive: bool,
}

/// A named expression: a local value, an output, an argument of a module call.
#[derive(Debug, Clone)]
pub struct Named {
    pub name: String,
    pub place: Place,
    pub file: usize,
    pub expr: Expression,
}

/// A `module "NAME" { source = ... }` block.
#[derive(Debug)]
pub struct ModuleCall {
    pub name: String,
    pub place: Place,
    /// The source as written (a local path starts with `./` or `../`).
    pub source: Option<String>,
    pub arguments: Vec<Named>,
    /// `count` or `for_each` on the call: not translated.
    pub repeated: bool,
}

/// A block kind the migration does not read (`data`, `provider`...), kept
/// for the report.
#[derive(Debug)]
pub struct Skipped {
    pub place: Place,
    pub what: String,
}

/// One Terraform module: every `*.tf` file of a folder.
#[derive(Debug, Default)]
pub struct Module {
    pub dir: PathBuf,
    pub files: Vec<SourceFile>,
    pub resources: Vec<TfResource>,
    pub variables: Vec<TfVariable>,
    pub locals: Vec<Named>,
    pub outputs: Vec<Named>,
    pub calls: Vec<ModuleCall>,
    pub skipped: Vec<Skipped>,
    /// `terraform.tfvars` and `*.auto.tfvars` of the root module: name to expression.
    pub tfvars: BTreeMap<String, Named>,
}

/// Reads every `*.tf` file of `dir` (sorted, so output is stable). `shown`
/// is the folder's name in places (relative to the migrated root).
pub fn read_module(dir: &Path, shown: &str, with_tfvars: bool) -> Result<Module, MigrateError> {
    let mut module = Module {
        dir: dir.to_owned(),
        ..Module::default()
    };
    let entries = std::fs::read_dir(dir).map_err(|error| MigrateError::Read {
        path: dir.to_owned(),
        error,
    })?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    for file_name in &names {
        let is_tf = file_name.ends_with(".tf");
        let is_tfvars = file_name == "terraform.tfvars" || file_name.ends_with(".auto.tfvars");
        if !(is_tf || with_tfvars && is_tfvars) {
            continue;
        }
        let path = dir.join(file_name);
        let text = std::fs::read_to_string(&path).map_err(|error| MigrateError::Read {
            path: path.clone(),
            error,
        })?;
        let name = if shown.is_empty() {
            file_name.clone()
        } else {
            format!("{shown}/{file_name}")
        };
        let body = hcl_edit::parser::parse_body(&text).map_err(|error| MigrateError::Parse {
            file: name.clone(),
            line: error.location().line(),
            message: error.message().to_owned(),
        })?;
        let index = module.files.len();
        module.files.push(SourceFile { name, text });
        if is_tfvars {
            for attribute in body.attributes() {
                let file = &module.files[index];
                module.tfvars.insert(
                    attribute.key.as_str().to_owned(),
                    Named {
                        name: attribute.key.as_str().to_owned(),
                        place: file.place_of(attribute),
                        file: index,
                        expr: attribute.value.clone(),
                    },
                );
            }
            continue;
        }
        read_blocks(&mut module, index, &body);
    }
    Ok(module)
}

fn read_blocks(module: &mut Module, index: usize, body: &Body) {
    for block in body.blocks() {
        let place = module.files[index].place_of(block);
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        match (block.ident.as_str(), labels.as_slice()) {
            ("resource", [kind, name]) => module.resources.push(TfResource {
                kind: (*kind).to_owned(),
                name: (*name).to_owned(),
                file: index,
                place,
                body: block.body.clone(),
            }),
            ("variable", [name]) => module.variables.push(TfVariable {
                name: (*name).to_owned(),
                place,
                default: attribute(block, "default"),
                sensitive: matches!(attribute(block, "sensitive"), Some(Expression::Bool(b)) if *b.value()),
            }),
            ("locals", []) => {
                for attribute in block.body.attributes() {
                    let place = module.files[index].place_of(attribute);
                    module.locals.push(Named {
                        name: attribute.key.as_str().to_owned(),
                        place,
                        file: index,
                        expr: attribute.value.clone(),
                    });
                }
            }
            ("output", [name]) => {
                if let Some(expr) = attribute(block, "value") {
                    module.outputs.push(Named {
                        name: (*name).to_owned(),
                        place,
                        file: index,
                        expr,
                    });
                }
            }
            ("module", [name]) => {
                let source = match attribute(block, "source") {
                    Some(Expression::String(s)) => Some(s.value().clone()),
                    _ => None,
                };
                let meta = ["source", "version", "providers", "depends_on", "count", "for_each"];
                let arguments = block
                    .body
                    .attributes()
                    .filter(|a| !meta.contains(&a.key.as_str()))
                    .map(|a| Named {
                        name: a.key.as_str().to_owned(),
                        place: module.files[index].place_of(a),
                        file: index,
                        expr: a.value.clone(),
                    })
                    .collect();
                module.calls.push(ModuleCall {
                    name: (*name).to_owned(),
                    place,
                    source,
                    arguments,
                    repeated: block.body.has_attribute("count") || block.body.has_attribute("for_each"),
                });
            }
            // Settings of Terraform itself and of the provider: nothing of
            // the account, nothing to translate.
            ("terraform", _) | ("provider", _) => {}
            (ident, labels) => module.skipped.push(Skipped {
                place,
                what: format!(
                    "{ident} {}",
                    labels.iter().map(|l| format!("\"{l}\"")).collect::<Vec<_>>().join(" ")
                ),
            }),
        }
    }
}

fn attribute(block: &Block, key: &str) -> Option<Expression> {
    block.body.get_attribute(key).map(|a| a.value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_with_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("main.tf"),
            "variable \"base\" {\n  default = \"https://x\"\n}\n\nresource \"checkly_check\" \"home\" {\n  name = \"Home\"\n}\nlocals {\n  a = 1\n}\nmodule \"m\" {\n  source = \"./m\"\n  x = var.base\n}\ndata \"checkly_static_ips\" \"all\" {}\n",
        )
        .unwrap();
        let module = read_module(dir.path(), "", true).unwrap();
        assert_eq!(module.resources.len(), 1);
        assert_eq!(module.resources[0].place.to_string(), "main.tf:5");
        assert_eq!(module.variables[0].name, "base");
        assert_eq!(module.locals[0].place.line, 9);
        assert_eq!(module.calls[0].source.as_deref(), Some("./m"));
        assert_eq!(module.calls[0].arguments[0].name, "x");
        assert_eq!(module.skipped[0].what, "data \"checkly_static_ips\" \"all\"");
    }

    #[test]
    fn a_syntax_error_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.tf"), "resource \"a\" \"b\" {\n  name = \n}\n").unwrap();
        let error = read_module(dir.path(), "", false).unwrap_err().to_string();
        assert!(error.starts_with("bad.tf:"), "{error}");
    }
}
