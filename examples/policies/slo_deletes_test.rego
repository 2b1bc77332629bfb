package monform.slo_deletes

test_deleting_an_slo_check_is_denied if {
	count(deny) == 1 with input as {"plan": {"changes": [{"address": "checks.c", "action": "delete", "tags": ["slo"]}]}}
}

test_deleting_other_checks_passes if {
	count(deny) == 0 with input as {"plan": {"changes": [{"address": "checks.c", "action": "delete", "tags": ["team:web"]}]}}
}

test_updating_an_slo_check_passes if {
	count(deny) == 0 with input as {"plan": {"changes": [{"address": "checks.c", "action": "update", "tags": ["slo"]}]}}
}

test_validate_has_no_plan_and_nothing_to_deny if {
	count(deny) == 0 with input as {"resources": []}
}
