# The [lint] rule ignored-fields as a policy: a check that writes a field
# its group overrides (the service runs the group's value).
package monform.ignored_fields

groups[r.id] := r.fields if {
	some r in input.resources
	r.kind == "groups"
}

warn contains {"msg": sprintf("%s: `%s` is ignored, group %s sets it for its checks", [r.address, field, r.fields.group]), "address": r.address, "field": field} if {
	some r in input.resources
	r.kind == "checks"
	group := groups[r.fields.group]
	some field in r.ownFields
	object.get(group, field, null) != null
}
