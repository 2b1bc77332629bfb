package monform.owner_tag

check(tags) := {"address": "checks.c", "kind": "checks", "id": "c", "fields": {"tags": tags}}

test_a_check_without_owner_is_denied if {
	count(deny) == 1 with input as {"resources": [check(["team:web"])]}
}

test_an_owner_tag_passes if {
	count(deny) == 0 with input as {"resources": [check(["owner:web"])]}
}
