//! Statistics of check results: aggregations and the report's aggregate.

use serde_json::{Value, json};

pub fn round(value: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (value * factor).round() / factor
}

/// `values` reduced by `aggregation` (avg, max, median, min, pNN, stddev,
/// sum); None when empty.
pub fn aggregate(values: &[f64], aggregation: &str) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let percentile = |p: f64| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = ((p / 100.0) * n).ceil().max(1.0) as usize;
        sorted[rank.min(sorted.len()) - 1]
    };
    Some(match aggregation {
        "max" => values.iter().copied().fold(f64::MIN, f64::max),
        "min" => values.iter().copied().fold(f64::MAX, f64::min),
        "sum" => values.iter().sum(),
        "median" | "p50" => percentile(50.0),
        "p90" => percentile(90.0),
        "p95" => percentile(95.0),
        "p99" => percentile(99.0),
        "stddev" => (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt(),
        _ => mean,
    })
}

/// What the report reads of a FINAL, not cancelled result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// `hasFailures` or `hasErrors`.
    pub failed: bool,
    pub response_ms: Option<f64>,
}

impl Sample {
    pub fn of(result: &Value) -> Sample {
        Sample {
            failed: result["hasFailures"] == true || result["hasErrors"] == true,
            response_ms: result["responseTime"].as_f64(),
        }
    }
}

/// `{successRatio, avg, p95, p99}` of results' samples (zeros when there
/// are none).
pub fn report_aggregate(samples: &[Sample]) -> Value {
    if samples.is_empty() {
        return json!({ "successRatio": 0, "avg": 0, "p95": 0, "p99": 0 });
    }
    let passed = samples.iter().filter(|s| !s.failed).count();
    let times: Vec<f64> = samples.iter().filter_map(|s| s.response_ms).collect();
    let stat = |aggregation: &str| aggregate(&times, aggregation).map_or(0.0, |v| round(v, 2));
    json!({
        "successRatio": round(passed as f64 / samples.len() as f64, 4),
        "avg": stat("avg"),
        "p95": stat("p95"),
        "p99": stat("p99"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(aggregate(&values, "avg"), Some(5.5));
        assert_eq!(aggregate(&values, "median"), Some(5.0));
        assert_eq!(aggregate(&values, "p90"), Some(9.0));
        assert_eq!(aggregate(&values, "p99"), Some(10.0));
        assert_eq!(aggregate(&values, "sum"), Some(55.0));
        assert_eq!(aggregate(&values, "min"), Some(1.0));
        assert_eq!(aggregate(&[], "max"), None);
        assert_eq!(aggregate(&[2.0, 4.0], "stddev"), Some(1.0));
    }

    #[test]
    fn aggregate_is_zero_without_results() {
        assert_eq!(
            report_aggregate(&[]),
            json!({ "successRatio": 0, "avg": 0, "p95": 0, "p99": 0 })
        );
        let results = [
            Sample::of(&json!({ "hasFailures": false, "responseTime": 100.0 })),
            Sample::of(&json!({ "hasFailures": true, "responseTime": 300.0 })),
        ];
        assert_eq!(report_aggregate(&results)["successRatio"], json!(0.5));
        assert_eq!(report_aggregate(&results)["avg"], json!(200.0));
    }
}
