package monform.min_locations

check(locations) := {"address": "checks.c", "kind": "checks", "id": "c", "fields": {"locations": locations}}

test_one_location_is_denied_in_production if {
	count(deny) == 1 with input as {"environment": "production", "resources": [check(["eu-west-1"])]}
}

test_two_locations_pass_in_production if {
	count(deny) == 0 with input as {"environment": "production", "resources": [check(["eu-west-1", "us-east-1"])]}
}

test_one_location_is_enough_elsewhere if {
	count(deny) == 0 with input as {"environment": null, "resources": [check(["eu-west-1"])]}
}
