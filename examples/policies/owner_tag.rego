# Every check names its owner: a tag `owner:<team>` (its own, its
# group's or from [defaults]).
package monform.owner_tag

deny contains {"msg": sprintf("%s has no owner: add a tag owner:<team>", [r.address]), "address": r.address, "field": "tags"} if {
	some r in input.resources
	r.kind == "checks"
	not owned(r)
}

owned(r) if {
	some tag in object.get(r.fields, "tags", [])
	startswith(tag, "owner:")
}
