# The [lint] rule unrouted-checks as a policy: an activated, unmuted check
# whose failures reach no alert channel (its own or its group's).
package monform.unrouted_checks

groups[r.id] := r.fields if {
	some r in input.resources
	r.kind == "groups"
}

routed(r) if count(object.get(r.fields, "alertChannels", [])) > 0

routed(r) if count(object.get(groups[r.fields.group], "alertChannels", [])) > 0

warn contains {"msg": sprintf("%s alerts nobody: no alert channel of its own or of its group", [r.address]), "address": r.address} if {
	some r in input.resources
	r.kind == "checks"
	object.get(r.fields, "activated", true)
	not object.get(r.fields, "muted", false)
	not routed(r)
}
