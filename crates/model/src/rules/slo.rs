//! The rules across an SLO's own fields (issue 50): a target with an
//! error budget, a window the service's results keep, the fields each
//! indicator and budgeting needs. Rules across resources (member checks'
//! frequencies, checks that cannot fail, selectors matching nothing) are
//! the loader's: they read the other resources.

use crate::resources::slo::{RESULTS_RETENTION_SECONDS, SloBudgeting, SloCalendar, SloIndicator, duration_seconds};
use crate::{FieldPath, Violation};

use super::Fields;

pub(crate) fn slo_rules(fields: &Fields<'_>, violations: &mut Vec<Violation>) {
    let root = FieldPath::root();
    if let Some(Some(target)) = fields.get::<f64>("target") {
        if target >= 100.0 {
            violations.push(
                Violation::new(
                    root.key("target"),
                    format!("a target of {target}% leaves no error budget: every failed run would breach it"),
                )
                .with_help("pick a target below 100, such as 99.9"),
            );
        } else if target <= 0.0 {
            violations.push(Violation::new(
                root.key("target"),
                format!("a target of {target}% is met by any service: it must be above 0"),
            ));
        } else if ((100.0 - target) * 10_000.0).round() < 1.0 {
            violations.push(Violation::new(
                root.key("target"),
                format!("a target of {target}% leaves no error budget at a precision of 0.0001%"),
            ));
        }
    }
    let window = fields.get::<String>("window");
    let calendar = fields.get::<SloCalendar>("calendar");
    match (&window, &calendar) {
        (Some(Some(_)), Some(Some(_))) => violations.push(
            Violation::new(
                root.key("calendar"),
                "an objective has a rolling `window` or a `calendar` one, not both",
            )
            .with_help("remove one of them"),
        ),
        (Some(None), Some(None)) => violations.push(
            Violation::new(
                FieldPath::root(),
                "an objective needs a `window` (7d, 28d, 30d) or `calendar: month`",
            )
            .with_help("add `window: 28d`"),
        ),
        _ => {}
    }
    if let Some(Some(window)) = &window
        && let Some(seconds) = duration_seconds(window)
        && seconds > RESULTS_RETENTION_SECONDS
    {
        violations.push(
            Violation::new(
                root.key("window"),
                format!(
                    "a window of {window} is longer than the 30 days of raw results the service keeps: the budget could not be computed"
                ),
            )
            .with_help("use a window of at most 30d, or `calendar: month`"),
        );
    }
    let indicator = fields.or("indicator", || SloIndicator::Availability);
    match (indicator, fields.get::<u32>("threshold")) {
        (Some(SloIndicator::Availability), Some(Some(_))) => violations.push(
            Violation::new(root.key("threshold"), "`threshold` is for `indicator: latency` only")
                .with_help("remove it, or set `indicator: latency`"),
        ),
        (Some(SloIndicator::Latency), Some(None)) => violations.push(
            Violation::new(
                root.key("indicator"),
                "a latency objective needs a `threshold` in milliseconds",
            )
            .with_help("add `threshold: 800`"),
        ),
        _ => {}
    }
    let budgeting = fields.or("budgeting", || SloBudgeting::Occurrences);
    let timeslice = fields.get::<String>("timeslice");
    match (budgeting, &timeslice) {
        (Some(SloBudgeting::Timeslices), Some(None)) => violations.push(
            Violation::new(
                root.key("budgeting"),
                "budgeting by time slices needs a `timeslice` length",
            )
            .with_help("add `timeslice: 1m` (at least the member checks' frequency)"),
        ),
        (Some(SloBudgeting::Occurrences), Some(Some(_))) => violations.push(
            Violation::new(root.key("timeslice"), "`timeslice` is for `budgeting: timeslices` only")
                .with_help("remove it, or set `budgeting: timeslices`"),
        ),
        _ => {}
    }
    if let Some(Some(slice)) = fields.get::<f64>("timesliceTarget")
        && !(slice > 0.0 && slice <= 100.0)
    {
        violations.push(Violation::new(
            root.key("timesliceTarget"),
            format!("{slice} is not a percentage above 0 and at most 100"),
        ));
    }
    if let (Some(Some(slice)), Some(Some(window))) = (&timeslice, &window)
        && let (Some(slice_s), Some(window_s)) = (duration_seconds(slice), duration_seconds(window))
        && slice_s > window_s
    {
        violations.push(Violation::new(
            root.key("timeslice"),
            format!("a time slice of {slice} is longer than the window of {window}"),
        ));
    }
    if let (Some(Some(checks)), Some(Some(tags))) =
        (fields.get::<Vec<String>>("checks"), fields.get::<Vec<String>>("tags"))
        && checks.is_empty()
        && tags.is_empty()
    {
        violations.push(Violation::new(
            root.key("checks"),
            "an objective needs at least one check",
        ));
    }
    if let (Some(None), Some(None)) = (fields.get::<Vec<String>>("checks"), fields.get::<Vec<String>>("tags")) {
        violations.push(
            Violation::new(
                FieldPath::root(),
                "an objective needs member checks: `checks` (addresses) or `tags`",
            )
            .with_help("add `checks: [checks.<id>]`"),
        );
    }
}
