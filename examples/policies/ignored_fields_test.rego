package monform.ignored_fields

test_a_field_the_group_sets_is_found if {
	count(warn) == 1 with input as {"resources": [
		{"address": "checks.c", "kind": "checks", "id": "c", "fields": {"group": "g"}, "ownFields": ["locations"]},
		{"address": "groups.g", "kind": "groups", "id": "g", "fields": {"locations": ["eu-west-1"]}, "ownFields": []},
	]}
}

test_a_field_the_group_leaves_is_fine if {
	count(warn) == 0 with input as {"resources": [
		{"address": "checks.c", "kind": "checks", "id": "c", "fields": {"group": "g"}, "ownFields": ["locations"]},
		{"address": "groups.g", "kind": "groups", "id": "g", "fields": {}, "ownFields": []},
	]}
}
