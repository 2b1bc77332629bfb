package monform.unrouted_checks

check(fields) := {"address": "checks.c", "kind": "checks", "id": "c", "fields": fields}

test_a_check_without_channels_is_found if {
	count(warn) == 1 with input as {"resources": [check({"name": "c"})]}
}

test_a_channel_of_the_group_routes_it if {
	count(warn) == 0 with input as {"resources": [
		check({"name": "c", "group": "g"}),
		{"address": "groups.g", "kind": "groups", "id": "g", "fields": {"alertChannels": ["oncall"]}},
	]}
}

test_a_muted_check_is_left_alone if {
	count(warn) == 0 with input as {"resources": [check({"name": "c", "muted": true})]}
}
