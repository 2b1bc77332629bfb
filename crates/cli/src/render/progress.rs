//! Apply progress on stderr: a bar with the operation in flight on a
//! terminal, a plain line per finished operation otherwise.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use monform_api::Wait;
use monform_engine::{Action, Event};

#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Until when requests wait for the rate limit, and the line saying so:
    /// operations starting meanwhile do not hide it.
    waiting: Arc<Mutex<Option<(Instant, String)>>>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} {wide_msg}") {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            waiting: Arc::default(),
        }
    }

    /// A line of its own, above the bar on a terminal.
    pub fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn event(&self, event: Event) {
        match event {
            Event::Started { address, action } => {
                if let Some(bar) = &self.bar {
                    let waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
                    match waiting.as_ref().filter(|(until, _)| Instant::now() < *until) {
                        Some((_, text)) => bar.set_message(text.clone()),
                        None => bar.set_message(started(action, &address)),
                    }
                }
            }
            Event::Done { address, action } => {
                self.line(format!("{address}: {}", past(action)));
                if address.kind == monform_model::Kind::PrivateLocation
                    && matches!(action, monform_engine::Action::Create | monform_engine::Action::Replace)
                {
                    // A key the service makes with a location is shown only in
                    // the reply, which apply does not print (it is a secret).
                    self.line(format!(
                        "  {address}: its agents need a key: `monform location-keys create {address}` prints one, once"
                    ));
                }
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
            Event::Failed { address, error, .. } => {
                self.line(format!("{address}: failed: {error}"));
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
            }
            Event::Skipped { address, because, .. } => self.line(format!("{address}: skipped because {because}")),
            Event::NotKept { address, fields } => {
                self.line(format!(
                    "warning: {address}: the API did not keep {}",
                    fields.join(", ")
                ));
            }
            Event::Adopted { address } => {
                self.line(format!("{address}: adopted the object an interrupted create had made"));
            }
            Event::Moved { address, from } => {
                let from = from.map_or_else(|| "none".to_owned(), |id| format!("{}.{id}", address.kind.section()));
                self.line(format!("{address}: ownership tag moved (was {from})"));
            }
        }
    }

    /// Requests wait for the rate limit's window: said on the bar's line (a
    /// long apply otherwise looks stuck), or as a line of its own.
    pub fn waiting(&self, wait: &Wait) {
        let text = crate::connect::waiting(wait);
        *self.waiting.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now() + wait.duration, text.clone()));
        match &self.bar {
            Some(bar) => bar.set_message(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The bar's line for an operation in flight: the verb in lower case, the
/// address as the files write it (`alertChannels.oncall`, not
/// `alertchannels.oncall`: it is what a user searches their files for).
fn started(action: Action, address: &monform_model::Address) -> String {
    format!("{} {address}", format!("{action:?}").to_lowercase())
}

/// An action in the past tense, as a done change is reported.
pub fn past(action: Action) -> &'static str {
    match action {
        Action::Create => "created",
        Action::Update => "updated",
        Action::Delete => "deleted",
        Action::Replace => "replaced",
        Action::Move => "moved",
        Action::Import => "imported",
        Action::Forget => "forgotten",
        Action::Noop => "unchanged",
    }
}

#[cfg(test)]
mod tests {
    use monform_model::{Address, Kind};

    use super::*;

    #[test]
    fn the_line_in_flight_keeps_the_address_as_written() {
        let channel = Address::new(Kind::AlertChannel, "oncall");
        assert_eq!(started(Action::Create, &channel), "create alertChannels.oncall");
        let variable = Address::new(Kind::Variable, "API_TOKEN");
        assert_eq!(started(Action::Update, &variable), "update variables.API_TOKEN");
    }
}
