package monform.conflicts

test_overwriting_a_change_made_in_the_service_is_denied if {
	count(deny) == 1 with input as {"plan": {"changes": [{"address": "checks.c", "action": "update", "fields": [
		{"path": "maxResponseTime", "before": 9000, "after": 7000, "drift": false, "conflict": {"applied": 5000, "service": 9000, "files": 7000}},
		{"path": "name", "before": "A", "after": "B", "drift": false},
	]}]}}
}

test_a_file_edit_alone_passes if {
	count(deny) == 0 with input as {"plan": {"changes": [{"address": "checks.c", "action": "update", "fields": [
		{"path": "maxResponseTime", "before": 5000, "after": 7000, "drift": false},
	]}]}}
}
