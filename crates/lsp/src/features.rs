//! The requests: each read from the load of the document's project as its
//! documents are now (`Projects::analysis`).

use lsp_server::Request;
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, PrepareRenameRequest,
    References, Rename, Request as _, WorkspaceSymbolRequest,
};
use lsp_types::{
    CompletionOptions, CompletionResponse, DocumentSymbolResponse, GotoDefinitionResponse, OneOf, ServerCapabilities,
    Url, WorkspaceSymbolResponse,
};
use serde_json::Value;

use std::sync::Arc;

use crate::analysis::Analysis;
use crate::documents::{LineIndex, format_of};
use crate::live::Live;
use crate::{Error, actions, completion, hover, navigate, rename};

/// What a request reads of the server: its projects' loads, the texts of
/// documents and the live facts. A trait the server's loop implements, so
/// the requests stay below the loop that calls `handle` (no import circle).
pub(crate) trait Projects {
    /// The load of the project holding `uri` as its documents are now.
    fn analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error>;
    /// The last load of that project, even if a change is not in it yet.
    fn recent_analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error>;
    /// The text of a document: the editor's when open, else the disk's.
    fn text(&self, uri: &Url) -> Option<String>;
    /// The loads of every project the server knows.
    fn analyses(&self) -> Vec<Arc<Analysis>>;
    fn live(&self) -> &Live;
}

/// The capabilities of the features below.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some([":", " ", "[", "{", ".", "-", "="].map(String::from).to_vec()),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Simple(true)),
        rename_provider: Some(OneOf::Right(lsp_types::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

fn params<P: serde::de::DeserializeOwned>(request: &Request) -> Result<P, Error> {
    Ok(serde_json::from_value(request.params.clone())?)
}

fn json(value: impl serde::Serialize) -> Result<Value, Error> {
    Ok(serde_json::to_value(value)?)
}

/// Answers one request (`null` when the document is in no project).
pub(crate) fn handle(server: &mut impl Projects, request: Request) -> Result<Value, Error> {
    match request.method.as_str() {
        GotoDefinition::METHOD => {
            let params: lsp_types::GotoDefinitionParams = params(&request)?;
            let at = params.text_document_position_params;
            let Some(analysis) = server.analysis(&at.text_document.uri)? else {
                return Ok(Value::Null);
            };
            let found = navigate::definition(&analysis, &at.text_document.uri, at.position);
            json(GotoDefinitionResponse::Array(found))
        }
        References::METHOD => {
            let params: lsp_types::ReferenceParams = params(&request)?;
            let at = params.text_document_position;
            let Some(analysis) = server.analysis(&at.text_document.uri)? else {
                return Ok(Value::Null);
            };
            json(navigate::references(
                &analysis,
                &at.text_document.uri,
                at.position,
                params.context.include_declaration,
            ))
        }
        DocumentSymbolRequest::METHOD => {
            let params: lsp_types::DocumentSymbolParams = params(&request)?;
            let uri = params.text_document.uri;
            let Some(analysis) = server.analysis(&uri)? else {
                return Ok(Value::Null);
            };
            let Some((file, _)) = analysis.file(&uri) else {
                return Ok(Value::Null);
            };
            json(DocumentSymbolResponse::Flat(navigate::symbols(
                &analysis,
                Some(file),
                "",
            )))
        }
        WorkspaceSymbolRequest::METHOD => {
            let params: lsp_types::WorkspaceSymbolParams = params(&request)?;
            let symbols = server
                .analyses()
                .iter()
                .flat_map(|analysis| navigate::symbols(analysis, None, &params.query))
                .collect();
            json(WorkspaceSymbolResponse::Flat(symbols))
        }
        Completion::METHOD => {
            let params: lsp_types::CompletionParams = params(&request)?;
            let at = params.text_document_position;
            let uri = at.text_document.uri;
            let Some(text) = server.text(&uri) else {
                return Ok(Value::Null);
            };
            let format = format_of(&uri);
            let offset = LineIndex::new(&text).offset(&text, at.position);
            let analysis = server.recent_analysis(&uri)?;
            let items = completion::complete(analysis.as_deref(), format, &text, offset);
            json(CompletionResponse::Array(items))
        }
        HoverRequest::METHOD => {
            let params: lsp_types::HoverParams = params(&request)?;
            let at = params.text_document_position_params;
            let uri = at.text_document.uri;
            let Some(analysis) = server.analysis(&uri)? else {
                return Ok(Value::Null);
            };
            json(hover::hover(
                &analysis,
                server.live(),
                format_of(&uri),
                &uri,
                at.position,
            ))
        }
        PrepareRenameRequest::METHOD => {
            let params: lsp_types::TextDocumentPositionParams = params(&request)?;
            let Some(analysis) = server.analysis(&params.text_document.uri)? else {
                return Ok(Value::Null);
            };
            match rename::prepare(&analysis, &params.text_document.uri, params.position) {
                Ok(response) => json(response),
                Err(_) => Ok(Value::Null),
            }
        }
        Rename::METHOD => {
            let params: lsp_types::RenameParams = params(&request)?;
            let at = params.text_document_position;
            let Some(analysis) = server.analysis(&at.text_document.uri)? else {
                return Ok(Value::Null);
            };
            rename::rename(&analysis, &at.text_document.uri, at.position, &params.new_name)
                .map_err(|e| Error::Refused(e.to_string()))
                .and_then(json)
        }
        CodeActionRequest::METHOD => {
            let params: lsp_types::CodeActionParams = params(&request)?;
            let uri = params.text_document.uri;
            let Some(analysis) = server.analysis(&uri)? else {
                return Ok(Value::Null);
            };
            let Some((_, file)) = analysis.file(&uri) else {
                return Ok(Value::Null);
            };
            json(actions::actions(
                &analysis,
                server.live(),
                &uri,
                &file.text,
                params.range,
                &params.context.diagnostics,
            ))
        }
        _ => Err(Error::UnknownMethod(request.method)),
    }
}
