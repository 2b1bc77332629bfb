//! The server's loop: messages from the editor, documents, loads of each
//! project on a worker thread (debounced: one load per pause in typing),
//! and the requests, each answered from the latest load.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::{PublishDiagnosticsParams, Url};
use monform_config::Unsaved;

use crate::analysis::{Analysis, project_root, relative_name};
use crate::documents::Documents;
use crate::{Config, Error, features};

/// How long typing must pause before the project is validated again: one
/// validation per pause, not one per keystroke. Short: a keystroke's
/// validation re-checks one file (tens of milliseconds at 100,000
/// checks), and its diagnostics are due within 150 ms.
pub const DEBOUNCE: Duration = Duration::from_millis(30);

/// A validation to run: the project, the text of its open documents, and
/// the analysis to bring up to date with the files changed since it.
struct Job {
    root: PathBuf,
    generation: u64,
    unsaved: Unsaved,
    /// The files changed since `prior` (names from the root), or `None`:
    /// the whole project to validate (`prior` is then not sent).
    changed: Option<Vec<String>>,
    prior: Option<Arc<Analysis>>,
}

struct Done {
    root: PathBuf,
    generation: u64,
    analysis: Arc<Analysis>,
}

/// What the server knows of one project.
#[derive(Default)]
struct ProjectState {
    /// Counts the changes to its documents.
    generation: u64,
    analysis: Option<(u64, Arc<Analysis>)>,
    /// What each file was last told, to clear files no longer loaded and
    /// to tell a closed file only when its diagnostics change (a keystroke
    /// in a 1,000-file project is then a few messages, not 1,000).
    published: HashMap<Url, Vec<lsp_types::Diagnostic>>,
    /// When a load is due (a change waiting for typing to pause).
    due: Option<Instant>,
    /// The files changed since the analysis kept (or being made), by name
    /// from the root; `None`: the whole project is to be validated (no
    /// analysis yet, or a change outside the project's files).
    changed: Option<BTreeSet<String>>,
    /// A validation of it is running: its analysis went with it (brought
    /// up to date in place, not copied), and a request waits for it.
    in_flight: bool,
}

pub(crate) struct Server<'c> {
    connection: &'c Connection,
    pub(crate) documents: Documents,
    projects: HashMap<PathBuf, ProjectState>,
    jobs: Sender<Job>,
    done: Receiver<Done>,
    pub(crate) live: crate::live::Live,
}

impl<'c> Server<'c> {
    pub(crate) fn new(connection: &'c Connection, config: Config) -> Server<'c> {
        let (jobs, job_receiver) = crossbeam_channel::unbounded::<Job>();
        let (done_sender, done) = crossbeam_channel::unbounded::<Done>();
        let live = crate::live::Live::new(connection.sender.clone(), &config);
        std::thread::spawn(move || worker(job_receiver, done_sender, config));
        Server {
            connection,
            documents: Documents::default(),
            projects: HashMap::new(),
            jobs,
            done,
            live,
        }
    }

    pub(crate) fn run(mut self) -> Result<(), Error> {
        loop {
            let wait = self
                .projects
                .values()
                .filter_map(|p| p.due)
                .min()
                .map(|due| due.saturating_duration_since(Instant::now()))
                .unwrap_or(Duration::from_secs(3600));
            select! {
                recv(self.connection.receiver) -> message => {
                    let Ok(message) = message else { return Ok(()) };
                    match message {
                        Message::Request(request) => {
                            if self.connection.handle_shutdown(&request)? {
                                return Ok(());
                            }
                            self.request(request)?;
                        }
                        Message::Notification(notification) => self.notification(notification)?,
                        Message::Response(_) => {}
                    }
                }
                recv(self.done) -> done => {
                    if let Ok(done) = done {
                        self.install(done.root, done.generation, done.analysis)?;
                    }
                }
                default(wait) => {}
            }
            self.start_due_loads();
        }
    }

    fn notification(&mut self, notification: Notification) -> Result<(), Error> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let params: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(notification.params)?;
                let uri = params.text_document.uri;
                self.documents
                    .open(uri.clone(), params.text_document.text, params.text_document.version);
                self.changed(&uri);
            }
            DidChangeTextDocument::METHOD => {
                let params: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(notification.params)?;
                let uri = params.text_document.uri;
                self.documents
                    .change(&uri, params.text_document.version, params.content_changes);
                self.changed(&uri);
            }
            DidCloseTextDocument::METHOD => {
                let params: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(notification.params)?;
                // The disk's text again: a file closed with errors keeps them.
                self.documents.close(&params.text_document.uri);
                self.changed(&params.text_document.uri);
            }
            DidSaveTextDocument::METHOD => {
                let params: lsp_types::DidSaveTextDocumentParams = serde_json::from_value(notification.params)?;
                // A save is when the disk is read again whole: files
                // changed outside the editor (a checkout) come in then.
                self.changed(&params.text_document.uri);
                self.validate_whole(&params.text_document.uri);
            }
            _ => {}
        }
        Ok(())
    }

    /// A document of a project changed: its load is due after the pause.
    fn changed(&mut self, uri: &Url) {
        let Some(root) = uri.to_file_path().ok().and_then(|path| project_root(&path)) else {
            return;
        };
        let name = uri.to_file_path().ok().and_then(|path| relative_name(&root, &path));
        let project = self.projects.entry(root).or_default();
        project.generation += 1;
        project.due = Some(Instant::now() + DEBOUNCE);
        match (&mut project.changed, name) {
            (Some(changed), Some(name)) if project.analysis.is_some() || project.in_flight => {
                changed.insert(name);
            }
            (changed, _) => *changed = None,
        }
    }

    /// The project of `uri` is to be validated whole at its next load.
    fn validate_whole(&mut self, uri: &Url) {
        if let Some(project) = uri
            .to_file_path()
            .ok()
            .and_then(|path| project_root(&path))
            .and_then(|root| self.projects.get_mut(&root))
        {
            project.changed = None;
        }
    }

    fn start_due_loads(&mut self) {
        let now = Instant::now();
        let due: Vec<PathBuf> = self
            .projects
            .iter()
            .filter(|(_, p)| !p.in_flight && p.due.is_some_and(|due| due <= now))
            .map(|(root, _)| root.clone())
            .collect();
        for root in due {
            self.start(&root);
        }
    }

    /// Starts validating the project at `root` on the worker: from its
    /// analysis and the files changed since, or whole.
    fn start(&mut self, root: &Path) {
        let unsaved = self.unsaved(root);
        let project = self.projects.entry(root.to_path_buf()).or_default();
        project.due = None;
        project.in_flight = true;
        let changed = project.changed.replace(BTreeSet::new());
        let prior = project.analysis.take().map(|(_, analysis)| analysis);
        let (changed, prior) = match (changed, prior) {
            (Some(changed), Some(prior)) => (Some(changed.into_iter().collect()), Some(prior)),
            // Dropped here: a whole validation does not need it, and
            // two at once at 100,000 checks would be twice the memory.
            _ => (None, None),
        };
        let job = Job {
            root: root.to_path_buf(),
            generation: project.generation,
            unsaved,
            changed,
            prior,
        };
        // The worker ends only with the server.
        let _ = self.jobs.send(job);
    }

    /// Waits for the validation of `root` running on the worker (others
    /// finishing meanwhile are installed too).
    fn wait(&mut self, root: &Path) -> Result<(), Error> {
        while self.projects.get(root).is_some_and(|p| p.in_flight) {
            let done = self.done.recv().map_err(|_| Error::Disconnected)?;
            self.install(done.root, done.generation, done.analysis)?;
        }
        Ok(())
    }

    /// The open documents' text of the project at `root`, by file name.
    fn unsaved(&self, root: &Path) -> Unsaved {
        self.documents
            .iter()
            .filter_map(|(uri, document)| {
                let path = uri.to_file_path().ok()?;
                Some((relative_name(root, &path)?, document.text.as_str().into()))
            })
            .collect()
    }

    /// Keeps a load newer than the one kept and publishes its diagnostics.
    fn install(&mut self, root: PathBuf, generation: u64, analysis: Arc<Analysis>) -> Result<(), Error> {
        let project = self.projects.entry(root.clone()).or_default();
        project.in_flight = false;
        if project.analysis.as_ref().is_some_and(|(kept, _)| *kept >= generation) {
            return Ok(());
        }
        project.analysis = Some((generation, analysis.clone()));
        let before = std::mem::take(&mut project.published);
        let mut published = HashMap::new();
        // The open documents first (the one typed in is one): the editor
        // shows them while the other files' lists follow.
        for (uri, diagnostics) in &analysis.diagnostics {
            // An open document is always told (with its version): the
            // editor learns its text was checked.
            if self.documents.get(uri).is_some() {
                self.publish(uri.clone(), diagnostics.clone())?;
            }
        }
        for (uri, diagnostics) in &analysis.diagnostics {
            if self.documents.get(uri).is_none() && before.get(uri) != Some(diagnostics) {
                self.publish(uri.clone(), diagnostics.clone())?;
            }
            published.insert(uri.clone(), diagnostics.clone());
        }
        let stale: Vec<Url> = before
            .keys()
            .filter(|uri| !published.contains_key(*uri))
            .cloned()
            .collect();
        if let Some(project) = self.projects.get_mut(&root) {
            project.published = published;
        }
        for uri in stale {
            self.publish(uri, Vec::new())?;
        }
        self.live.watch(&analysis);
        Ok(())
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>) -> Result<(), Error> {
        let version = self.documents.get(&uri).map(|d| d.version);
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.into(), params).into())
    }

    pub(crate) fn send(&self, message: Message) -> Result<(), Error> {
        self.connection.sender.send(message).map_err(|_| Error::Disconnected)
    }

    /// The load of the project holding `uri` as its documents are now:
    /// the kept one when nothing changed since, else loaded here (a
    /// request never reads positions of an older text).
    pub(crate) fn analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error> {
        let Some(root) = uri.to_file_path().ok().and_then(|path| project_root(&path)) else {
            return Ok(None);
        };
        loop {
            let project = self.projects.entry(root.clone()).or_default();
            if let Some((kept, analysis)) = &project.analysis
                && *kept == project.generation
            {
                return Ok(Some(analysis.clone()));
            }
            // The change waiting for a pause in typing is validated now.
            if !project.in_flight {
                self.start(&root);
            }
            self.wait(&root)?;
        }
    }

    /// The last load of the project holding `uri`, even if a change is not
    /// in it yet (what completion reads: ids and names, not positions).
    pub(crate) fn recent_analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error> {
        let root = uri.to_file_path().ok().and_then(|path| project_root(&path));
        // The analysis is with the worker while it is brought up to date.
        if let Some(root) = &root {
            self.wait(root)?;
        }
        if let Some((_, analysis)) = root
            .as_ref()
            .and_then(|root| self.projects.get(root))
            .and_then(|p| p.analysis.as_ref())
        {
            return Ok(Some(analysis.clone()));
        }
        self.analysis(uri)
    }

    /// The text of a document: the editor's when open, else the disk's.
    pub(crate) fn text(&self, uri: &Url) -> Option<String> {
        match self.documents.get(uri) {
            Some(document) => Some(document.text.clone()),
            None => std::fs::read_to_string(uri.to_file_path().ok()?).ok(),
        }
    }

    /// The analyses of every project the server knows, for workspace symbols.
    pub(crate) fn analyses(&self) -> Vec<Arc<Analysis>> {
        self.projects
            .values()
            .filter_map(|p| p.analysis.as_ref().map(|(_, a)| a.clone()))
            .collect()
    }

    fn request(&mut self, request: Request) -> Result<(), Error> {
        let id = request.id.clone();
        let response = match features::handle(self, request) {
            Ok(result) => Response::new_ok(id, result),
            Err(Error::Params(e)) => Response::new_err(id, lsp_server::ErrorCode::InvalidParams as i32, e.to_string()),
            Err(Error::UnknownMethod(method)) => Response::new_err(
                id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("monform lsp does not handle {method}"),
            ),
            Err(Error::Refused(message)) => Response::new_err(id, lsp_server::ErrorCode::RequestFailed as i32, message),
            Err(other) => return Err(other),
        };
        self.send(response.into())
    }
}

impl features::Projects for Server<'_> {
    fn analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error> {
        Server::analysis(self, uri)
    }

    fn recent_analysis(&mut self, uri: &Url) -> Result<Option<Arc<Analysis>>, Error> {
        Server::recent_analysis(self, uri)
    }

    fn text(&self, uri: &Url) -> Option<String> {
        Server::text(self, uri)
    }

    fn analyses(&self) -> Vec<Arc<Analysis>> {
        Server::analyses(self)
    }

    fn live(&self) -> &crate::live::Live {
        &self.live
    }
}

/// Runs the validations one after the other: a project's analysis
/// brought up to date with the files changed (`Analysis::reload`), in
/// place when the server let go of it (the live facts may still hold it
/// for a while: then the project is validated whole).
fn worker(jobs: Receiver<Job>, done: Sender<Done>, config: Config) {
    while let Ok(job) = jobs.recv() {
        let prior = job.prior.and_then(|prior| Arc::try_unwrap(prior).ok());
        let analysis = match (prior, job.changed) {
            (Some(prior), Some(changed)) => prior.reload(job.unsaved, &changed, &config),
            (prior, _) => {
                drop(prior);
                Analysis::load(&job.root, job.unsaved, &config)
            }
        };
        let sent = done.send(Done {
            root: job.root,
            generation: job.generation,
            analysis: Arc::new(analysis),
        });
        if sent.is_err() {
            return;
        }
    }
}
