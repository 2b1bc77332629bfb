package monform.frequency_by_tag

check(tags, frequency) := {"address": "checks.c", "kind": "checks", "id": "c", "fields": {"tags": tags, "frequency": frequency}}

test_a_slow_critical_check_is_denied if {
	count(deny) == 1 with input as {"resources": [check(["critical"], 5)]}
}

test_a_fast_critical_check_passes if {
	count(deny) == 0 with input as {"resources": [check(["critical"], 1)]}
}

test_other_checks_may_run_slower if {
	count(deny) == 0 with input as {"resources": [check(["team:web"], 30)]}
}
