//! The service's report and analytics vocabulary (spec 2.16, 2.19): the
//! quick ranges under both endpoints' names, and which check types have
//! analytics of their own. One list for the client, the emulator and the
//! CLI.

use crate::resources::CheckType;

/// A window of figures, as `quickRange` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuickRange {
    Last24Hours,
    Last7Days,
    Last30Days,
    ThisWeek,
    ThisMonth,
    LastWeek,
    LastMonth,
}

impl QuickRange {
    pub const ALL: [QuickRange; 7] = [
        QuickRange::Last24Hours,
        QuickRange::Last7Days,
        QuickRange::Last30Days,
        QuickRange::ThisWeek,
        QuickRange::ThisMonth,
        QuickRange::LastWeek,
        QuickRange::LastMonth,
    ];

    /// The analytics endpoints' name (`last24Hours`...).
    pub const fn analytics_name(self) -> &'static str {
        match self {
            QuickRange::Last24Hours => "last24Hours",
            other => other.shared_name(),
        }
    }

    /// The reporting endpoint's own name (`last24Hrs`...).
    pub const fn report_name(self) -> &'static str {
        match self {
            QuickRange::Last24Hours => "last24Hrs",
            other => other.shared_name(),
        }
    }

    const fn shared_name(self) -> &'static str {
        match self {
            QuickRange::Last24Hours => "last24Hours",
            QuickRange::Last7Days => "last7Days",
            QuickRange::Last30Days => "last30Days",
            QuickRange::ThisWeek => "thisWeek",
            QuickRange::ThisMonth => "thisMonth",
            QuickRange::LastWeek => "lastWeek",
            QuickRange::LastMonth => "lastMonth",
        }
    }

    /// The range's length in minutes (calendar ranges at their longest).
    pub const fn minutes(self) -> u32 {
        match self {
            QuickRange::Last24Hours => 24 * 60,
            QuickRange::Last7Days | QuickRange::ThisWeek | QuickRange::LastWeek => 7 * 24 * 60,
            QuickRange::Last30Days | QuickRange::ThisMonth | QuickRange::LastMonth => 31 * 24 * 60,
        }
    }
}

const fn names(report: bool) -> [&'static str; 7] {
    let mut out = [""; 7];
    let mut i = 0;
    while i < out.len() {
        out[i] = if report {
            QuickRange::ALL[i].report_name()
        } else {
            QuickRange::ALL[i].analytics_name()
        };
        i += 1;
    }
    out
}

/// Every quick range under the reporting endpoint's names.
pub const REPORT_RANGES: &[&str] = &names(true);
/// Every quick range under the analytics endpoints' names.
pub const ANALYTICS_RANGES: &[&str] = &names(false);

/// The analytics endpoint of a check type (`/v1/analytics/{this}/{id}`),
/// for the types that have one: API and BROWSER checks.
pub fn analytics_endpoint(check_type: CheckType) -> Option<&'static str> {
    match check_type {
        CheckType::Api => Some("api-checks"),
        CheckType::Browser => Some("browser-checks"),
        CheckType::Agentic
        | CheckType::Heartbeat
        | CheckType::Icmp
        | CheckType::MultiStep
        | CheckType::Tcp
        | CheckType::Playwright
        | CheckType::Url
        | CheckType::Dns => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_endpoints_name_only_the_last_24_hours_differently() {
        assert_eq!(REPORT_RANGES[0], "last24Hrs");
        assert_eq!(ANALYTICS_RANGES[0], "last24Hours");
        assert_eq!(REPORT_RANGES[1..], ANALYTICS_RANGES[1..]);
        assert_eq!(REPORT_RANGES.len(), 7);
        assert_eq!(analytics_endpoint(CheckType::Browser), Some("browser-checks"));
        assert_eq!(analytics_endpoint(CheckType::Tcp), None);
    }
}
