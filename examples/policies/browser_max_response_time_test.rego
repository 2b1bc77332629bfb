package monform.browser_max_response_time

check(fields) := {"address": "checks.b", "kind": "checks", "id": "b", "fields": fields}

test_a_browser_check_on_the_default_is_denied if {
	count(deny) == 1 with input as {"resources": [check({"checkType": "BROWSER", "maxResponseTime": 20000})]}
}

test_a_browser_check_with_its_own_limit_passes if {
	count(deny) == 0 with input as {"resources": [check({"checkType": "BROWSER", "maxResponseTime": 8000})]}
}

test_other_check_types_are_left_alone if {
	count(deny) == 0 with input as {"resources": [check({"checkType": "API", "maxResponseTime": 20000})]}
}
